//! Pageblock skip hints of memory compaction (mm/compaction.c, Linux
//! v6.12: `PB_migrate_skip`, `isolation_suitable`, `test_and_set_skip`,
//! `update_pageblock_skip`, `compaction_restarting`,
//! `reset_isolation_suitable`, `__reset_isolation_suitable`,
//! `__reset_isolation_pfn`, `pageblock_skip_persistent`),
//! `[machine.compaction] skip_hints`; where
//! the scanners consult and set them is in `crate::compaction`. Also
//! mm/vmscan.c's `compaction_ready` (`[machine.compaction]
//! compaction_ready`), which the slow path's direct reclaim consults, and
//! mm/vmstat.c's fragmentation index and `extfrag_for_order`, which
//! `compaction_suitable` and the proactive score read.

use crate::compaction::{Compaction, COMPACT_MAX_DEFER_SHIFT};
use crate::mem::folio::{flags, NIL};
use crate::page_alloc::{
    MigrateType, NR_PAGE_ORDERS, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER, PAGE_ALLOC_COSTLY_ORDER,
};
use crate::sim::Sim;

impl Sim {
    /// `compaction_ready` of mm/vmscan.c (v6.12): the allocation could
    /// already succeed, or compaction is suitable and the free pages are
    /// above the high watermark + `compact_gap(order)`. Two zones: every
    /// zone ready (`crate::mmzone`).
    pub(crate) fn compaction_ready(&self, order: usize) -> bool {
        if self.phys.dma.is_some() {
            return self.compaction_ready_zoned(order);
        }
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

    /// `clear_pageblock_skip` of the pageblock holding `pfn`.
    fn clear_skip(&mut self, pfn: u64) {
        let b = (pfn >> PAGEBLOCK_ORDER) as usize;
        if let Some(w) = self.skip.get_mut(b / 64) {
            *w &= !(1 << (b % 64));
        }
    }
}

impl Sim {
    /// `reset_isolation_suitable` (kswapd going to sleep) and
    /// `compact_zone`'s call when `compaction_restarting`: both end in
    /// v6.12's `__reset_isolation_suitable`, which does nothing unless
    /// `compact_blockskip_flush` is set and clears it. The gate is in
    /// `__reset_isolation_suitable` itself (since v5.1's "be selective
    /// about what pageblocks to clear skip hints"), so the restart's reset
    /// is gated as kswapd's is; VALIDATION.md's earlier reading (an
    /// ungated restart) was wrong.
    ///
    /// With `skip_hints` the walk is [`Sim::reset_isolation_walk`]. Without
    /// them there are no marks, and the reset only records the cached free
    /// position as `compact_init_free_pfn` (the earlier model, kept so that
    /// runs without the hints keep their bits).
    pub(crate) fn reset_isolation_suitable_zone(&mut self) {
        if !std::mem::take(&mut self.compact.blockskip_flush) {
            return;
        }
        if !self.compact.cfg.skip_hints {
            self.compact.init_free_pfn = self.compact.cached_free_pfn;
            return;
        }
        self.reset_isolation_walk();
    }

    /// The walk of `__reset_isolation_suitable` (v6.12): a migrate-side
    /// cursor goes up from the zone start by pageblocks and a free-side one
    /// down from the zone's last page, in step, until they meet, each block
    /// going through [`Sim::reset_isolation_pfn`]. The migrate side looks
    /// for an LRU page until it found its first block, then for an LRU or
    /// a free page; the free side looks for a free page in a movable block
    /// until it found its first block, then for either. A block neither
    /// side clears keeps its mark. The lowest block the migrate side
    /// cleared becomes `compact_init_migrate_pfn` and both cached migrate
    /// positions; the highest the free side cleared (the cursor, the
    /// block's last page) `compact_init_free_pfn` and the cached free
    /// position. If no migrate block lies below the free block, both
    /// cached positions are left where the cursors met, so that the next
    /// run's scanners meet at once ("leave no distance").
    ///
    /// The previous model cleared every mark and left the cached positions.
    pub(crate) fn reset_isolation_walk(&mut self) {
        self.ensure_mem_map();
        self.phys.zone.materialize_all_pristine();
        let (start, end) = self.phys.pfn_range();
        let mut migrate_pfn = start;
        let mut free_pfn = end - 1;
        let (mut reset_migrate, mut reset_free) = (free_pfn, migrate_pfn);
        let (mut source_set, mut free_set) = (false, false);
        while migrate_pfn < free_pfn {
            if self.reset_isolation_pfn(migrate_pfn, true, source_set)
                && migrate_pfn < reset_migrate
            {
                source_set = true;
                reset_migrate = migrate_pfn;
                let c = &mut self.compact;
                c.init_migrate_pfn = migrate_pfn;
                c.cached_migrate_pfn = [migrate_pfn; 2];
            }
            if self.reset_isolation_pfn(free_pfn, free_set, true) && free_pfn > reset_free {
                free_set = true;
                reset_free = free_pfn;
                let c = &mut self.compact;
                c.init_free_pfn = free_pfn;
                c.cached_free_pfn = free_pfn;
            }
            migrate_pfn += PAGEBLOCK_NR_PAGES;
            let Some(next) = free_pfn.checked_sub(PAGEBLOCK_NR_PAGES) else {
                break;
            };
            free_pfn = next;
        }
        if reset_migrate >= reset_free {
            let c = &mut self.compact;
            c.cached_migrate_pfn = [migrate_pfn; 2];
            c.cached_free_pfn = free_pfn;
        }
    }

    /// `__reset_isolation_pfn` (v6.12): whether the pageblock of `pfn` is a
    /// migration source (`check_source`: it has an LRU page) or target
    /// (`check_target`: a free page), clearing its mark if so. A block
    /// that a folio of at least a pageblock covers keeps its mark
    /// (`pageblock_skip_persistent`); with both checks an unmarked block
    /// counts without a look; the free side's first block must be movable.
    /// The look samples the block's first page and every eighth after it
    /// (`1 << PAGE_ALLOC_COSTLY_ORDER`): a free block counts only where a
    /// sampled page is its first page (`PageBuddy`), a folio wherever a
    /// sampled page lies in it (`PageLRU` reads the head).
    fn reset_isolation_pfn(&mut self, pfn: u64, check_source: bool, check_target: bool) -> bool {
        let (start, end) = self.phys.pfn_range();
        let zone = &self.phys.zone;
        let f = zone.frame_folio(pfn);
        if f != NIL && usize::from(self.folios[f].order()) >= PAGEBLOCK_ORDER {
            return false;
        }
        if check_source && check_target && !self.compact.skip_bit(pfn) {
            return true;
        }
        if !check_source && check_target && zone.pageblock_type(pfn) != MigrateType::Movable {
            return false;
        }
        let first = (pfn & !(PAGEBLOCK_NR_PAGES - 1)).max(start);
        let last = ((pfn | (PAGEBLOCK_NR_PAGES - 1)).min(end - 1)).max(first);
        let mut p = first;
        while p <= last {
            let f = zone.frame_folio(p);
            let lru = check_source && f != NIL && self.folios[f].test(flags::LRU);
            if lru || check_target && zone.buddy_order_at(p).is_some() {
                self.compact.clear_skip(p);
                return true;
            }
            p += 1 << PAGE_ALLOC_COSTLY_ORDER;
        }
        false
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
