//! Reclaim/compaction: classic `shrink_node`'s extra passes over the node
//! for a high-order allocation (mm/vmscan.c, v6.12.107:
//! `in_reclaim_compaction`, `should_continue_reclaim`; mm/compaction.c
//! `compaction_suitable`, include/linux/compaction.h `compact_gap`).
//!
//! After each pass, v6.12 `shrink_node` asks `should_continue_reclaim` and,
//! if it holds, shrinks the node again at the same priority (`goto
//! again`). It holds only in reclaim/compaction mode
//! (`in_reclaim_compaction`: CONFIG_COMPACTION — here
//! `compaction.enabled` — and `sc->order` > 0, and either a costly order
//! (> `PAGE_ALLOC_COSTLY_ORDER`) or a priority below `DEF_PRIORITY - 2`),
//! and then only while all of these hold:
//!
//! 1. the pass reclaimed something;
//! 2. no zone up to `sc->reclaim_idx` could already take the allocation
//!    (`zone_watermark_ok` at `sc->order` and the min watermark, with the
//!    zone's `lowmem_reserve`) or is `compaction_suitable` for `sc->order`
//!    (order-0 free pages above the low watermark for a costly order, the
//!    min one otherwise, plus `compact_gap`, and for a costly order a
//!    fragmentation index above `vm.extfrag_threshold`);
//! 3. more than `compact_gap(sc->order)` (`2 << order`) inactive pages are
//!    left on the node: inactive file, plus inactive anon if
//!    `can_reclaim_anon_pages(NULL, …)` — a free swap slot anywhere
//!    (`get_nr_swap_pages() > 0`; mmsim has no demotion).
//!
//! Who reaches it: direct reclaim (`try_to_free_pages`' `sc.order` is the
//! allocation's) and kswapd (`balance_pgdat`'s `sc.order`: non-zero only
//! with `compaction.kswapd_high_order`); memcg reclaim runs at order 0 and
//! never continues. MGLRU: v6.12 and v6.14 root reclaim leaves
//! `shrink_node` for `lru_gen_shrink_node` before the loop (`if
//! (lru_gen_enabled() && root_reclaim(sc)) { …; return; }`), so it never
//! asks (its own stop is `should_abort_scan`); v6.1 MGLRU root reclaim
//! goes through the classic `shrink_node` (its `shrink_lruvec` hands each
//! lruvec to `lru_gen_shrink_lruvec`), so it continues as classic reclaim
//! does, the inactive counts being MGLRU's compatibility view
//! (`lru_gen_is_active`: all but the two youngest generations).
//!
//! Kernel history (read: v4.x-era sources and the 2019 patches through the
//! code search, Debian's 6.1.192 `mm/vmscan.c` and `mm/compaction.c`):
//! 2019's "mm, reclaim: make should_continue_reclaim perform dryrun
//! detection" and "mm, reclaim: cleanup should_continue_reclaim()" (v5.4:
//! posted in August 2019 after v5.3-rc3, with Mike Kravetz's hugetlb
//! series, so after v5.3's merge window; not checked against a v5.4 tree)
//! gave the rule its present form; v6.1 has the same rule, its
//! `compaction_suitable` returning `COMPACT_SUCCESS` for the "allocation
//! can already succeed" test that v6.12 writes out before calling it.
//! Before v5.4 (v4.9, the `scanned-rotated` policy's era,
//! [`crate::sim::ClassicRules::reclaim_compaction_gap_first`]): a pass
//! that reclaimed nothing stops (for an allocation without
//! `__GFP_RETRY_MAYFAIL`/`__GFP_REPEAT`, as every mmsim allocation is);
//! then reclaim continues while the whole reclaim (`sc->nr_reclaimed`,
//! every pass and priority so far) is below `compact_gap` and more than
//! `compact_gap` inactive pages are left, without looking at the zones;
//! otherwise it stops if a zone is ready or suitable as in (2) and
//! **continues** if none is, however few inactive pages are left.
//!
//! Departures: `gfp_compaction_allowed` (`__GFP_IO`) holds for every
//! allocation mmsim models, so it is not tested; the zone tests are
//! mmsim's v6.12 ones for both eras (v4.9's `compaction_suitable` was not
//! compared line by line). The order-0 free pages of the zone tests
//! (`compaction_suitable` through `zone_view`, `Node::free`; the upper
//! zone's `upper_free()`) count the pages on the per-CPU lists as free,
//! mmsim's convention for the zone checks; the kernel's `NR_FREE_PAGES`
//! does not, and nothing drains the per-CPU lists before
//! `should_continue_reclaim`, so a zone here can look `compaction_suitable`
//! (and stop the loop) up to the per-CPU lists' worth of pages earlier.

use crate::mem::folio::LruList;
use crate::page_alloc::PAGE_ALLOC_COSTLY_ORDER;
use crate::reclaim::{ScanControl, DEF_PRIORITY};
use crate::sim::Sim;

impl Sim {
    /// `shrink_node()` (mm/vmscan.c, v6.12): MGLRU root reclaim (v6.12,
    /// v6.14) is `lru_gen_shrink_node()`'s; otherwise a pass
    /// ([`Sim::shrink_node_pass`]: v6.1 MGLRU root reclaim and MGLRU cgroup
    /// reclaim through `shrink_lruvec`'s MGLRU branch), repeated at the
    /// same priority while `should_continue_reclaim` holds (`goto again`).
    pub(crate) fn shrink_node(&mut self, sc: &mut ScanControl) {
        if self.lru_gen_root_reclaim(sc) {
            return self.lru_gen_shrink_node(sc);
        }
        while self.shrink_node_pass(sc) {}
    }

    /// `in_reclaim_compaction()` (mm/vmscan.c, v6.12): compaction is built
    /// in (`compaction.enabled`), `sc.order` > 0, and the order is costly
    /// or the priority has dropped below `DEF_PRIORITY - 2`.
    pub(crate) fn in_reclaim_compaction(&self, sc: &ScanControl) -> bool {
        self.compact.cfg.enabled
            && sc.order > 0
            && (sc.order > PAGE_ALLOC_COSTLY_ORDER || sc.priority < DEF_PRIORITY - 2)
    }

    /// `should_continue_reclaim()` (mm/vmscan.c, v6.12; v4.9 under
    /// [`crate::sim::ClassicRules::reclaim_compaction_gap_first`]): whether
    /// classic `shrink_node` shrinks the node again after a pass that
    /// reclaimed `nr_reclaimed` pages (the module overview).
    pub(crate) fn should_continue_reclaim(&self, nr_reclaimed: u64, sc: &ScanControl) -> bool {
        if !self.in_reclaim_compaction(sc) || nr_reclaimed == 0 {
            return false;
        }
        let order = sc.order as usize;
        let gap = 2u64 << order;
        if self.rules().reclaim_compaction_gap_first {
            if sc.nr_reclaimed < gap && self.inactive_lru_pages() > gap {
                return true;
            }
            return !self.reclaim_compaction_zones_done(order);
        }
        if self.reclaim_compaction_zones_done(order) {
            return false;
        }
        self.inactive_lru_pages() > gap
    }

    /// `should_continue_reclaim`'s zone loop: some zone could take the
    /// allocation at its min watermark (`zone_watermark_ok(zone, order,
    /// min_wmark_pages(zone), reclaim_idx, 0)`) or is `compaction_suitable`
    /// for `order`; with ZONE_DMA (`machine.dma_zone_pages`) each zone with
    /// its own watermarks and DMA with its `lowmem_reserve`, the tests of
    /// [`Sim::zone_compaction_ready`] (`crate::reclaim::direct`).
    fn reclaim_compaction_zones_done(&self, order: usize) -> bool {
        let Some(d) = self.phys.dma.as_ref() else {
            return self.phys.zone.watermark_ok(order, self.node.wmark_min)
                || self.compaction_suitable(order);
        };
        self.debug_assert_upper_zone_in("should_continue_reclaim");
        [true, false].into_iter().any(|dma| {
            let (zone, free, wm, reserve) = if dma {
                (&d.zone, d.zone.free_pages(), d.wmark, d.lowmem_reserve)
            } else {
                (&self.phys.zone, self.upper_free(), d.upper_wmark, 0)
            };
            zone.watermark_ok(order, wm.min + reserve)
                || self.zone_compaction_suitable(zone, free, wm, reserve, order)
        })
    }

    /// The node's inactive pages as `should_continue_reclaim` counts them:
    /// `NR_INACTIVE_FILE`, plus `NR_INACTIVE_ANON` when a swap slot is free
    /// (`can_reclaim_anon_pages(NULL, …)`: `get_nr_swap_pages() > 0`).
    fn inactive_lru_pages(&self) -> u64 {
        let lv = self.subtree_lruvec(crate::memcg::ROOT);
        let mut n = lv.size(LruList::InactiveFile);
        if self.mem_cgroup_get_nr_swap_pages(crate::memcg::ROOT) > 0 {
            n += lv.size(LruList::InactiveAnon);
        }
        n
    }
}
