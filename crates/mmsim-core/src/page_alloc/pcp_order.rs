//! The per-CPU lists of orders above 0 (`machine.policy.pcp_lists =
//! "6.12"`; mm/page_alloc.c v6.12 `pcp_allowed_order`, `order_to_pindex`,
//! `rmqueue_pcplist`): see `page_alloc/pcp.rs`'s overview for the rules
//! and their history, `page_alloc/pcp_high.rs` for `nr_pcp_alloc`,
//! `free_unref_page_commit`, `nr_pcp_high` and `nr_pcp_free`.

use super::{MigrateType, PhysMem, MIGRATE_TYPES, PAGE_ALLOC_COSTLY_ORDER};
use serde::{Deserialize, Serialize};

/// `HPAGE_PMD_ORDER` on x86-64 with 4 KiB pages: the THP order of the
/// per-CPU lists (v6.12 `pcp_allowed_order`).
pub(crate) const PCP_THP_ORDER: usize = 9;
/// `NR_LOWORDER_PCP_LISTS`: one list per type for each order
/// `0..=PAGE_ALLOC_COSTLY_ORDER`.
pub(crate) const NR_LOWORDER_PCP_LISTS: usize =
    MIGRATE_TYPES * (PAGE_ALLOC_COSTLY_ORDER as usize + 1);
/// `NR_PCP_LISTS` of v6.12 without CMA: `NR_PCP_THP` = 2 THP lists after
/// the low orders' (non-movable, then movable).
pub(crate) const NR_PCP_LISTS: usize = NR_LOWORDER_PCP_LISTS + 2;

/// Which orders have per-CPU lists (`machine.policy.pcp_lists`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum PcpLists {
    /// Order 0 only (every kernel before v5.14; mmsim's older model):
    /// larger blocks are allocated from and freed to the buddy lists.
    #[default]
    #[serde(rename = "order-0")]
    Order0,
    /// v6.12: orders 0..=3 per type and the PMD order (two lists).
    #[serde(rename = "6.12")]
    V6_12,
}

crate::setting_names! { PcpLists, "pcp_lists",
    Order0 => "order-0",
    V6_12 => "6.12",
}

impl<'de> Deserialize<'de> for PcpLists {
    /// A string or a number (`--set policy.pcp_lists=6.12` writes a TOML
    /// number); anything else is refused with the allowed values.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        super::rmqueue_claim::deserialize_named(d, "pcp_lists \"order-0\" or \"6.12\"")
    }
}

/// `pcp_allowed_order` (v6.12): orders 0..=`PAGE_ALLOC_COSTLY_ORDER` and
/// `HPAGE_PMD_ORDER`.
#[inline]
pub(crate) fn pcp_allowed_order(order: usize) -> bool {
    order <= PAGE_ALLOC_COSTLY_ORDER as usize || order == PCP_THP_ORDER
}

/// `order_to_pindex` (v6.12): `MIGRATE_PCPTYPES * order + mt` up to
/// `PAGE_ALLOC_COSTLY_ORDER`; the THP order's movable list after the
/// non-movable one.
#[inline]
pub(crate) fn order_to_pindex(mt: MigrateType, order: usize) -> usize {
    if order > PAGE_ALLOC_COSTLY_ORDER as usize {
        debug_assert_eq!(order, PCP_THP_ORDER);
        return NR_LOWORDER_PCP_LISTS + usize::from(mt == MigrateType::Movable);
    }
    MIGRATE_TYPES * order + mt as usize
}

/// `pindex_to_order` (v6.12).
#[inline]
pub(crate) fn pindex_to_order(pindex: usize) -> usize {
    if pindex >= NR_LOWORDER_PCP_LISTS {
        PCP_THP_ORDER
    } else {
        pindex / MIGRATE_TYPES
    }
}

/// Whether list `pindex` takes movable blocks.
pub(crate) fn pindex_is_movable(pindex: usize) -> bool {
    if pindex >= NR_LOWORDER_PCP_LISTS {
        pindex == NR_LOWORDER_PCP_LISTS + 1
    } else {
        pindex % MIGRATE_TYPES == MigrateType::Movable as usize
    }
}

impl PhysMem {
    /// `rmqueue` (v6.12) of a block of `order` of `mt` from ZONE_NORMAL.
    /// With per-CPU lists of that order ([`PcpLists::V6_12`] and
    /// [`pcp_allowed_order`]): only if the buddy lists hold a free block of
    /// at least `order` (`__zone_watermark_ok`'s free-area test, which
    /// `get_page_from_freelist` applies first), the head of the list
    /// (`rmqueue_pcplist`), refilled when empty; when the refill finds
    /// nothing, `rmqueue_buddy`. Otherwise the buddy lists (`__rmqueue`).
    /// The caller has checked the free pages against its watermark.
    pub(crate) fn rmqueue_order(&mut self, order: usize, mt: MigrateType) -> Option<u64> {
        if self.pcp.orders == PcpLists::Order0 {
            return self.zone.alloc_pages(order, mt);
        }
        if order == 0 || !pcp_allowed_order(order) {
            self.zone_below_high_test(order);
            return self.zone.alloc_pages(order, mt);
        }
        // `get_page_from_freelist`'s ZONE_BELOW_HIGH test comes before the
        // allocation's own watermark test (`page_alloc/pcp_high.rs`).
        self.pcp_alloc_v6_12(order);
        if !self.zone.has_free_order(order) {
            return None;
        }
        if !self.pcp.typed && mt != MigrateType::Movable {
            self.pcp_type_lists();
        }
        let pindex = order_to_pindex(mt, order);
        if self.pcp.lists[pindex].is_empty() {
            let n = self.pcp.nr_pcp_alloc(order);
            self.rmqueue_bulk_order(order, n, mt);
        }
        let Some(pfn) = self.pcp.lists[pindex].pop() else {
            return self.zone.alloc_pages(order, mt);
        };
        self.pcp.count -= 1 << order;
        if self.pcp.typed {
            self.set_block_alloc_type(pfn, order, mt);
        }
        Some(pfn)
    }

    /// `free_unref_page` (v6.12, `free_the_page`) of a block of ZONE_NORMAL:
    /// to the per-CPU lists when its order has one ([`pcp_allowed_order`]
    /// under [`PcpLists::V6_12`], `free_unref_page_commit` in
    /// `page_alloc/pcp_high.rs`; order 0 always), else to the buddy lists.
    #[inline]
    pub(crate) fn free_unref_page(&mut self, pfn: u64, order: usize) {
        if order == 0 {
            self.free_order0(pfn);
        } else if self.pcp.orders == PcpLists::V6_12 && pcp_allowed_order(order) {
            self.free_unref_page_commit(pfn, order);
        } else {
            self.zone.free_pages_block(pfn, order);
        }
    }
}

impl super::PerCpuPages {
    /// The list of `order` and `mt`, head first (rule tests).
    #[cfg(test)]
    pub(crate) fn list_of(&self, mt: MigrateType, order: usize) -> Vec<u64> {
        let p = order_to_pindex(mt, order);
        self.lists[p].iter().rev().copied().collect()
    }
}
