//! The refill of the per-CPU movable list in an order-0 folio allocation
//! (`rmqueue()` → `rmqueue_pcplist()` → `rmqueue_bulk()`, mm/page_alloc.c
//! v6.12), with the boosted-watermark test at the end of `rmqueue()`
//! (`crate::page_alloc_boost`), out of line of the per-fault path.

use super::{MigrateType, PhysMem};
use crate::sim::Sim;

impl PhysMem {
    /// `rmqueue` for one order-0 movable page (`rmqueue_pcplist`): the
    /// per-CPU movable list's head, refilled from the buddy lists when
    /// empty. Tests only; the fault path takes [`PhysMem::alloc_order0_pcp`]
    /// and [`Sim::alloc_order0_refill`].
    #[cfg(test)]
    pub(crate) fn alloc_order0(&mut self) -> Option<u64> {
        if let Some(p) = self.alloc_order0_pcp() {
            return Some(p);
        }
        self.rmqueue_bulk(MigrateType::Movable);
        self.pcp_take(MigrateType::Movable)
    }
}

impl Sim {
    /// The per-CPU movable list was empty: `rmqueue_bulk` refills it from
    /// the buddy lists and its head is taken ([`PhysMem::rmqueue_pcplist`]),
    /// then `rmqueue`'s tail
    /// ([`Sim::rmqueue_boosted`]): a refill that boosted the watermarks (a
    /// steal below pageblock order under `rmqueue_fallback = "6.12"`, a
    /// claim attempt under "6.15", even one that failed) wakes kswapd (every order-0 folio allocation has
    /// ALLOC_KSWAPD). Only the refill can steal: the per-CPU list and
    /// DMA's page (a boost needs one zone) never boost, and every other
    /// allocation from the buddy lists (`Sim::rmqueue_large`, the refill of
    /// the unmovable list for page-table pages in `crate::kmem`) ends with
    /// its own `rmqueue_boosted`, so no
    /// boost is pending when an order-0 folio allocation starts, and
    /// testing it here only is the same as v6.12's test at the end of every
    /// `rmqueue` (mm/page_alloc.c), without a load per fault.
    #[cold]
    #[inline(never)]
    pub(super) fn alloc_order0_refill(&mut self) -> u64 {
        let pfn = self.phys.rmqueue_pcplist_refill(MigrateType::Movable);
        self.rmqueue_boosted(true);
        pfn
    }
}
