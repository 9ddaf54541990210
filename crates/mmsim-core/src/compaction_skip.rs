//! Pageblock skip hints of memory compaction (mm/compaction.c, Linux
//! v6.12: `PB_migrate_skip`, `isolation_suitable`, `test_and_set_skip`,
//! `update_pageblock_skip`, `compaction_restarting`,
//! `__reset_isolation_suitable`), `[machine.compaction] skip_hints`; where
//! the scanners consult and set them is in `crate::compaction`. Also
//! mm/vmscan.c's `compaction_ready` (`[machine.compaction]
//! compaction_ready`), which the slow path's direct reclaim consults, and
//! mm/vmstat.c's fragmentation index and `extfrag_for_order`, which
//! `compaction_suitable` and the proactive score read.

use crate::compaction::{Compaction, COMPACT_MAX_DEFER_SHIFT};
use crate::page_alloc::{NR_PAGE_ORDERS, PAGEBLOCK_ORDER};
use crate::sim::Sim;

impl Sim {
    /// `compaction_ready` of mm/vmscan.c (v6.12): the allocation could
    /// already succeed, or compaction is suitable and the free pages are
    /// above the high watermark + `compact_gap(order)`.
    pub(crate) fn compaction_ready(&self, order: usize) -> bool {
        if self.phys.zone.watermark_ok(order, self.node.wmark_min) {
            return true;
        }
        self.compaction_suitable(order)
            && self.phys.free_pages() > self.node.wmark_high + (2u64 << order)
    }
}

impl Compaction {
    /// `compaction_restarting`: the deferral reached its limit for `order`.
    pub(crate) fn compaction_restarting(&self, order: u32) -> bool {
        order >= self.order_failed
            && self.defer_shift == COMPACT_MAX_DEFER_SHIFT
            && self.considered >= 1 << self.defer_shift
    }

    /// `get_pageblock_skip` of the pageblock holding `pfn`.
    fn skip_bit(&self, pfn: u64) -> bool {
        let b = (pfn >> PAGEBLOCK_ORDER) as usize;
        self.skip
            .get(b / 64)
            .is_some_and(|w| w >> (b % 64) & 1 == 1)
    }

    /// `set_pageblock_skip` of the pageblock holding `pfn` (`skip_hints` only).
    pub(crate) fn set_skip(&mut self, pfn: u64) {
        if !self.cfg.skip_hints {
            return;
        }
        let b = (pfn >> PAGEBLOCK_ORDER) as usize;
        if self.skip.len() <= b / 64 {
            self.skip.resize(b / 64 + 1, 0);
        }
        self.skip[b / 64] |= 1 << (b % 64);
    }

    /// `isolation_suitable`: whether a run that heeds the marks may scan the
    /// pageblock of `pfn`.
    pub(crate) fn isolation_suitable(&self, ignore_skip_hint: bool, pfn: u64) -> bool {
        ignore_skip_hint || !self.skip_bit(pfn)
    }

    /// `__reset_isolation_suitable` (simplified: every mark cleared), when
    /// `compact_blockskip_flush` is set.
    ///
    /// Known departure: kswapd's call (`reset_isolation_suitable(pgdat)`)
    /// is gated by the flag, but `compact_zone`'s call when
    /// `compaction_restarting` is not; there the kernel clears a block's
    /// mark only where `__reset_isolation_pfn` samples an LRU page (the
    /// migrate side) or a free page (the free side), and keeps persistent
    /// marks. Both calls are gated here: the unconditional reset with this
    /// clear-everything simplification made `compact-mthp-defer` fall back
    /// 34 % where the kernel does 88 % (VALIDATION.md), so the per-block
    /// sampling has to come first.
    pub(crate) fn reset_isolation_suitable(&mut self) {
        if std::mem::take(&mut self.blockskip_flush) {
            self.skip.iter_mut().for_each(|w| *w = 0);
            // compact_init_free_pfn: where the free scanner restarts (the
            // cached position, which this reset leaves).
            self.init_free_pfn = self.cached_free_pfn;
        }
    }
}

/// `fill_contig_page_info` over the zone's free counts: (free pages, free
/// blocks, free blocks of `order` that the larger blocks hold).
fn contig_page_info(nr_free: &[u64; NR_PAGE_ORDERS], order: usize) -> (u64, u64, u64) {
    let (mut pages, mut blocks, mut suitable) = (0, 0, 0);
    for (o, &n) in nr_free.iter().enumerate() {
        blocks += n;
        pages += n << o;
        if o >= order {
            suitable += n << (o - order);
        }
    }
    (pages, blocks, suitable)
}

/// `__fragmentation_index` (mm/vmstat.c, v6.12): -1000 when a block of
/// `order` is free, else 0 (failure from lack of memory) to 1000 (failure
/// from fragmentation).
pub(crate) fn fragmentation_index(nr_free: &[u64; NR_PAGE_ORDERS], order: usize) -> i64 {
    let (pages, blocks, suitable) = contig_page_info(nr_free, order);
    if blocks == 0 {
        return 0;
    }
    if suitable > 0 {
        return -1000;
    }
    let requested = 1u64 << order;
    1000 - ((1000 + pages * 1000 / requested) / blocks) as i64
}

/// `extfrag_for_order` (mm/vmstat.c): the percentage of free pages not in
/// blocks of at least `order`.
pub(crate) fn extfrag_for_order(nr_free: &[u64; NR_PAGE_ORDERS], order: usize) -> u64 {
    let (pages, _, suitable) = contig_page_info(nr_free, order);
    if pages == 0 {
        return 0;
    }
    (pages - (suitable << order)) * 100 / pages
}
