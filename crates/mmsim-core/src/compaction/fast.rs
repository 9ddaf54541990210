//! The free-list searches of memory compaction's scanners (mm/compaction.c,
//! Linux v6.12: `freelist_scan_limit`, `fast_isolate_freepages` with
//! `next_search_order`, `move_freelist_head`, `fast_isolate_around`;
//! `fast_find_migrateblock` with `move_freelist_tail`,
//! `update_fast_start_pfn`, `reinit_migrate_pfn`), `[machine.compaction]
//! fast_search = true`. Page capture (`capture = true`: `capture_control`,
//! `compaction_capture` in mm/page_alloc.c's `__free_one_page`) is wired
//! into `crate::compaction` and `crate::page_alloc::Zone` (`capture_order`,
//! `captured`); its rules are in the module overview of `crate::compaction`.
//!
//! * **`fast_isolate_freepages`** (a target order above 0): before the
//!   linear free scan, search the MOVABLE free lists from the tail (the
//!   blocks freed longest ago), order `search_order` (at first the target
//!   order - 1) down, round-robin, for a block at or above `low_pfn` (the top
//!   quarter of the range between the scanners), remembering the highest one
//!   in the top half (`min_pfn`); at most `freelist_scan_limit / 2` blocks
//!   per order (halved when a candidate is seen, and for the next order when an
//!   order used it up;
//!   `pageblock_nr_pages / 2` when the free scanner is at its start,
//!   `compact_init_free_pfn`). The list is rotated so that the next search
//!   starts with the blocks not yet looked at. The search loop's step
//!   (`next_search_order`) runs after a find too, unless enough pages are
//!   isolated: a block taken from the top half at the round robin's last
//!   order wraps it, and `search_order` steps down for the next call. The
//!   block found is isolated
//!   (`__isolate_free_page`, the min watermark + the block's pages) and the
//!   search ends; when none is found at the scan start the free scanner
//!   jumps to the highest pageblock seen above `min_pfn`, or for direct
//!   compaction to `min_pfn`. `compact_cached_free_pfn` moves up to below
//!   the highest block seen. Any page isolated skips the linear scan. Then
//!   `fast_isolate_around` scans the found block linearly for more (not in
//!   async direct compaction) and marks it when scanned to the end.
//! * **`fast_find_migrateblock`** (target orders above
//!   `PAGE_ALLOC_COSTLY_ORDER`, runs that heed the skip hints, the migrate
//!   scanner at a pageblock start): the MOVABLE lists of orders target - 1
//!   down to `PAGE_ALLOC_COSTLY_ORDER` are searched from the head, at most
//!   `freelist_scan_limit` blocks, for one below `high_pfn` (the first half
//!   of the scan space at the zone start, else the first eighth) whose
//!   pageblock is not marked skip; the migrate scanner starts at its
//!   pageblock, and the list is rotated past it. When the search fails,
//!   the linear scan resumes at the lowest block an earlier search found
//!   (`reinit_migrate_pfn`).
//!
//! Simplified (marked): `cc->finish_pageblock` (the rescan of a pageblock
//! whose migrated pages were taken before it was cleared) is not modelled;
//! `compact_init_free_pfn` is 0 until the first reset of the skip marks,
//! which sets it to the last page of the highest block it found a free page
//! in (`__reset_isolation_pfn`, `crate::compaction_skip`; without
//! `skip_hints` to the cached free position).

use super::{pageblock_start, CompactControl, FastStart, MigrateMode, COMPACT_CLUSTER_MAX};
use crate::page_alloc::{MigrateType, PAGEBLOCK_NR_PAGES, PAGE_ALLOC_COSTLY_ORDER};
use crate::sim::Sim;
use crate::stats::item::COMPACTISOLATED;

/// `freelist_scan_limit`: `COMPACT_CLUSTER_MAX >> fast_search_fail`, + 1.
fn freelist_scan_limit(cc: &CompactControl) -> u64 {
    (COMPACT_CLUSTER_MAX >> cc.fast_search_fail.min(63)) + 1
}

/// `next_search_order`: the next order of the round-robin search below
/// `target`, or None when it wrapped (then `search_order` steps down).
fn next_search_order(cc: &mut CompactControl, order: usize, target: usize) -> Option<usize> {
    let next = if order == 0 { target - 1 } else { order - 1 };
    if next == cc.search_order {
        cc.search_order = if cc.search_order == 0 {
            target - 1
        } else {
            cc.search_order - 1
        };
        return None;
    }
    Some(next)
}

impl Sim {
    /// `fast_isolate_freepages` (v6.12), see the module overview.
    pub(super) fn fast_isolate_freepages(&mut self, cc: &mut CompactControl) {
        let Some(target) = cc.order.filter(|&o| o > 0 && cc.fast) else {
            return;
        };
        let (start, _) = self.phys.pfn_range();
        let mut limit = (freelist_scan_limit(cc) >> 1).max(1);
        let scan_start = cc.free_pfn >= self.compact.init_free_pfn;
        if scan_start {
            limit = PAGEBLOCK_NR_PAGES >> 1;
        }
        let distance = cc.free_pfn.saturating_sub(cc.migrate_pfn);
        let min_pfn = pageblock_start(cc.free_pfn - (distance >> 1));
        let low_pfn = pageblock_start(cc.free_pfn - (distance >> 2)).max(min_pfn);
        cc.search_order = cc.search_order.min(target - 1);
        let (mut nr_scanned, mut highest) = (0u64, 0u64);
        let mut page: Option<u64> = None;
        let mut order = Some(cc.search_order);
        while let (None, Some(o)) = (page, order) {
            if self.phys.zone.buddyinfo()[o] == 0 {
                order = next_search_order(cc, o, target);
                continue;
            }
            let zone = &self.phys.zone;
            let (mut order_scanned, mut high_pfn) = (0u64, 0u64);
            let mut freepage = None;
            let mut cur = zone.free_list_end(o, MigrateType::Movable, true);
            while let Some(pfn) = cur {
                order_scanned += 1;
                nr_scanned += 1;
                freepage = Some(pfn);
                if pfn >= highest {
                    highest = pageblock_start(pfn).max(start);
                }
                if pfn >= low_pfn {
                    cc.fast_search_fail = 0;
                    cc.search_order = o;
                    page = Some(pfn);
                    break;
                }
                if pfn >= min_pfn && pfn > high_pfn {
                    high_pfn = pfn;
                    limit >>= 1;
                }
                if order_scanned >= limit {
                    break;
                }
                cur = zone.free_list_step(pfn, true);
            }
            if cur.is_none() {
                // The whole list was walked: move_freelist_head leaves it.
                freepage = None;
            }
            if page.is_none() && high_pfn > 0 {
                page = Some(high_pfn);
                freepage = page;
            }
            if let Some(f) = freepage {
                self.phys.zone.rotate_free_list(o, MigrateType::Movable, f);
            }
            let mut failed = false;
            if let Some(pfn) = page {
                let n = 1u64 << o;
                if self.phys.zone.watermark_ok(0, self.compact_wmark_min() + n) {
                    self.phys.zone.isolate_free_block(pfn, o);
                    nr_scanned += n - 1;
                    cc.nr_freepages += n;
                    cc.freepages[o].push_back(pfn);
                    self.count_vm_events(COMPACTISOLATED, n);
                } else {
                    page = None;
                    failed = true;
                }
            }
            if cc.nr_freepages >= cc.nr_migratepages {
                break;
            }
            if failed {
                // Isolation failed: abort the search (the kernel's
                // `order = search_order + 1` makes the next step wrap).
                next_search_order(cc, cc.search_order + 1, target);
                break;
            }
            if order_scanned >= limit {
                limit = (limit >> 1).max(1);
            }
            // The `for` loop's step runs after a find too (the loop then
            // ends on `page`): a block taken from the top half at the last
            // order of the round robin (`search_order` unchanged) wraps it,
            // so `search_order` steps down for the next call.
            order = next_search_order(cc, o, target);
        }
        if page.is_none() {
            cc.fast_search_fail += 1;
            if scan_start {
                // v6.12 tests `highest >= min_pfn` with `highest = 0` as
                // its "none": with nothing found and `min_pfn` 0 (a scan
                // start in the first two pageblocks of a zone at the bottom
                // of memory: ZONE_DMA, which starts at pfn 0 here and at 1
                // in x86-64's kernel) the kernel takes the zone's first
                // block (`pfn_to_page(0)`; `fast_isolate_around` clamps to
                // `zone_start_pfn`) and sets `cc->free_pfn` to 0, for any
                // run, with no suitability check. Followed; a find is
                // never 0 in the kernel (`max(.., zone_start_pfn)` ≥ 1), so
                // a find in ZONE_DMA's block 0 (0 here) is the same case.
                // (`high_pfn`'s 0 only matters when `min_pfn` is 0 below
                // a `low_pfn` above it, which pageblock-aligned scanners
                // never give.)
                if highest >= min_pfn {
                    page = Some(highest);
                    cc.free_pfn = highest;
                } else if cc.direct {
                    // v6.8+ ("avoid fast_isolate_around() to set
                    // pageblock_skip on reserved pages"): only a suitable
                    // target block is scanned around.
                    cc.free_pfn = min_pfn;
                    page = self
                        .suitable_migration_target(cc, min_pfn)
                        .then_some(min_pfn);
                }
            }
        }
        // `if (highest && highest >= compact_cached_free_pfn)`: the
        // kernel's block-0 find (1 there) would move the cached position
        // only from 1 or below, and underflow; here 0 is left alone.
        if highest > 0 && highest >= self.compact.cached_free_pfn {
            self.compact.cached_free_pfn = highest - PAGEBLOCK_NR_PAGES;
        }
        cc.total_free_scanned += nr_scanned;
        if let Some(pfn) = page {
            self.fast_isolate_around(cc, pfn);
        }
    }

    /// `fast_isolate_around`: a linear scan of the found block's pageblock
    /// (stride 1) when more pages are needed, except in async direct
    /// compaction; marks the block when scanned to the end.
    fn fast_isolate_around(&mut self, cc: &mut CompactControl, pfn: u64) {
        if cc.nr_freepages >= cc.nr_migratepages || (cc.direct && cc.mode == MigrateMode::Async) {
            return;
        }
        let (start, end) = self.phys.pfn_range();
        let mut from = pageblock_start(pfn).max(start);
        let to = (pageblock_start(pfn) + PAGEBLOCK_NR_PAGES).min(end);
        self.isolate_freepages_block(cc, &mut from, to, 1);
        if from == to {
            self.compact.set_skip(pfn);
        }
    }

    /// `fast_find_migrateblock` (v6.12): where the migrate scanner starts,
    /// see the module overview.
    pub(super) fn fast_find_migrateblock(&mut self, cc: &mut CompactControl) -> u64 {
        let mut pfn = cc.migrate_pfn;
        let (start, _) = self.phys.pfn_range();
        let Some(target) = cc.order else {
            return pfn;
        };
        // Without skip hints nothing marks the blocks it found, and the
        // kernel relies on them "to avoid repeats on the fast search": a
        // block that isolates nothing would be found again and again (the
        // scanners never meet). So the search needs `skip_hints`.
        if !cc.fast
            || cc.ignore_skip_hint
            || !self.compact.cfg.skip_hints
            || (pfn != start && pfn != pageblock_start(pfn))
            || target <= PAGE_ALLOC_COSTLY_ORDER as usize
        {
            return pfn;
        }
        let limit = freelist_scan_limit(cc);
        let mut distance = cc.free_pfn.saturating_sub(cc.migrate_pfn) >> 1;
        if cc.migrate_pfn != start {
            distance >>= 2;
        }
        let high_pfn = pageblock_start(cc.migrate_pfn + distance);
        let mut nr_scanned = 0u64;
        let mut found = false;
        let mut order = target;
        while order > PAGE_ALLOC_COSTLY_ORDER as usize && !found && nr_scanned < limit {
            order -= 1;
            if self.phys.zone.buddyinfo()[order] == 0 {
                continue;
            }
            let mut cur = self
                .phys
                .zone
                .free_list_end(order, MigrateType::Movable, false);
            while let Some(free_pfn) = cur {
                let next = self.phys.zone.free_list_step(free_pfn, false);
                nr_scanned += 1;
                if nr_scanned > limit {
                    // move_freelist_tail(freepage): the list resumes after it.
                    self.rotate_past(order, free_pfn, next);
                    break;
                }
                if free_pfn < high_pfn {
                    if !self.compact.isolation_suitable(false, free_pfn) {
                        cur = next;
                        continue;
                    }
                    self.rotate_past(order, free_pfn, next);
                    // update_fast_start_pfn
                    cc.fast_start_pfn = match cc.fast_start_pfn {
                        FastStart::Unset => FastStart::At(free_pfn),
                        FastStart::At(p) => FastStart::At(p.min(free_pfn)),
                        FastStart::Used => FastStart::Used,
                    };
                    pfn = pageblock_start(free_pfn).max(start);
                    cc.fast_search_fail = 0;
                    found = true;
                    break;
                }
                cur = next;
            }
        }
        cc.total_migrate_scanned += nr_scanned;
        if !found {
            cc.fast_search_fail += 1;
            // reinit_migrate_pfn
            if let FastStart::At(p) = cc.fast_start_pfn {
                cc.migrate_pfn = p;
                cc.fast_start_pfn = FastStart::Used;
            }
            pfn = cc.migrate_pfn;
        }
        pfn
    }

    /// `move_freelist_tail`: the blocks up to `free_pfn` go to the tail, so
    /// the list's head is `next` (nothing moves when `free_pfn` is last).
    fn rotate_past(&mut self, order: usize, _free_pfn: u64, next: Option<u64>) {
        if let Some(n) = next {
            self.phys
                .zone
                .rotate_free_list(order, MigrateType::Movable, n);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Rule tests of the free-list searches on a scripted zone: every frame
    //! is taken (kernel pages), then chosen frames are given back.
    use super::super::{CompactControl, FastStart, MigrateMode};
    use crate::config::{MachineConfig, Size};
    use crate::page_alloc::{MigrateType, PAGEBLOCK_NR_PAGES};
    use crate::rule_tests::take_all_free;
    use crate::sim::Sim;

    /// An 8192-page machine (16 pageblocks), compaction with `fast_search`,
    /// every frame held but the two order-10 blocks of pageblocks 12..15
    /// (free pages far above the min watermark) and `free` (zone-relative
    /// PFNs, freed in that order). Returns the machine and the zone start.
    fn zone_with(free: &[(u64, usize)]) -> (Sim, u64) {
        let mut cfg = MachineConfig {
            memory: Size::from_pages(8192),
            ..Default::default()
        };
        cfg.compaction.enabled = true;
        cfg.compaction.fast_search = true;
        cfg.compaction.skip_hints = true;
        let mut s = Sim::new(cfg).unwrap();
        take_all_free(&mut s);
        let start = s.phys.zone.start_pfn;
        for p in 12 * PAGEBLOCK_NR_PAGES..16 * PAGEBLOCK_NR_PAGES {
            s.phys.zone.free_pages_block(start + p, 0);
        }
        for &(p, order) in free {
            for k in 0..1 << order {
                s.phys.zone.free_pages_block(start + p + k, 0);
            }
        }
        (s, start)
    }

    /// A 16384-page two-zone node: ZONE_DMA of 4096 pages (8 pageblocks)
    /// from pfn 0 here, compaction with `fast_search` and skip hints.
    fn two_zone_node() -> Sim {
        let mut cfg = MachineConfig {
            memory: Size::from_pages(16_384),
            dma_zone_pages: 4096,
            ..Default::default()
        };
        cfg.compaction.enabled = true;
        cfg.compaction.fast_search = true;
        cfg.compaction.skip_hints = true;
        Sim::new(cfg).unwrap()
    }

    /// A direct async run for order 4 with `nr` pages to migrate, the
    /// scanners at `migrate` and `free` (zone-relative).
    fn cc_at(s: &Sim, start: u64, migrate: u64, free: u64, nr: u64) -> CompactControl {
        let mut cc = CompactControl::new(Some(4), MigrateMode::Async, true, false);
        cc.fast = s.compact.cfg.fast_search;
        cc.migrate_pfn = start + migrate;
        cc.free_pfn = start + free;
        cc.nr_migratepages = nr;
        cc
    }

    #[test]
    fn fast_isolate_freepages_takes_a_block_from_the_top_quarter_then_the_top_half() {
        // Single free pages in pageblocks 2 (a), 9 (b) and 6 (c), freed in
        // that order: each goes to the list's head, so the order-0 MOVABLE
        // list is c, b, a (and the two order-10 blocks elsewhere).
        let (a, b, c) = (1029, 4615, 3075);
        let (mut s, z) = zone_with(&[(a, 0), (b, 0), (c, 0)]);
        let abs = |v: &[u64]| v.iter().map(|p| p + z).collect::<Vec<_>>();
        assert_eq!(
            s.phys.zone.free_list(0, MigrateType::Movable),
            abs(&[c, b, a])
        );
        // Scanners at 0 and pageblock 11 (5632): the top quarter starts at
        // pageblock 8 (4096), the top half at pageblock 5 (2560).
        let mut cc = cc_at(&s, z, 0, 5632, 1);
        s.fast_isolate_freepages(&mut cc);
        // Orders 3..1 are empty; order 0 from the tail: a (below the half),
        // b (in the quarter): taken, after two blocks looked at.
        assert_eq!(cc.freepages[0].iter().copied().collect::<Vec<_>>(), [z + b]);
        assert_eq!((cc.nr_freepages, cc.total_free_scanned), (1, 2));
        assert_eq!((cc.search_order, cc.fast_search_fail), (0, 0));
        // move_freelist_head: c (not looked at) went behind b's place, so
        // the next search from the tail sees it first.
        assert_eq!(s.phys.zone.free_list(0, MigrateType::Movable), abs(&[a, c]));
        // The free scanner stays; the cached position moved below b's block.
        assert_eq!(cc.free_pfn, z + 5632);
        assert_eq!(s.compact.cached_free_pfn, z + 8 * PAGEBLOCK_NR_PAGES);
        assert_eq!(s.vm.compact_isolated, 1);

        // A second run: nothing in the quarter; c (in the half) is the
        // candidate, a is looked at too, and c is taken.
        let mut cc = cc_at(&s, z, 0, 5632, 1);
        cc.nr_migratepages = 2;
        s.fast_isolate_freepages(&mut cc);
        assert_eq!(cc.freepages[0].iter().copied().collect::<Vec<_>>(), [z + c]);
        assert_eq!((cc.nr_freepages, cc.total_free_scanned), (1, 2));
        assert_eq!(s.phys.zone.free_list(0, MigrateType::Movable), abs(&[a]));
        // Taken from the top half at order 0, the last order of the round
        // robin from 3: `search_order` is left, and the `for` loop's step
        // (`next_search_order`) wraps to it and steps it down. (With the
        // migrate list filled, `nr_freepages >= nr_migratepages` breaks
        // before the step and it stays 3.)
        assert_eq!(cc.search_order, 2);

        // A third: only a (pageblock 2) is left, below the half. At the
        // scan start a direct run's free scanner jumps to the half's
        // pageblock and, async, isolates nothing more there.
        let mut cc = cc_at(&s, z, 0, 5632, 1);
        s.fast_isolate_freepages(&mut cc);
        assert_eq!((cc.nr_freepages, cc.total_free_scanned), (0, 1));
        assert_eq!(cc.fast_search_fail, 1);
        assert_eq!(cc.free_pfn, z + 5 * PAGEBLOCK_NR_PAGES);
        // The search wrapped from order 0 to 3 (its start): the next one
        // starts an order lower (next_search_order).
        assert_eq!(cc.search_order, 2);
    }

    #[test]
    fn a_scan_start_at_the_bottom_of_zone_dma_with_nothing_found_takes_its_first_block() {
        // The two-zone node: ZONE_DMA is pfns 0..4096 (8 pageblocks).
        // Every DMA frame held but pageblocks 4..7 (order-10 and order-9
        // blocks, far above DMA's min mark) and an order-4 block at pfn 16.
        let mut s = two_zone_node();
        let cc = s.on_zone(true, |s| {
            assert_eq!(s.phys.pfn_range(), (0, 4096));
            let mut held = 0;
            while s.phys.zone.alloc_pages(0, MigrateType::Movable).is_some() {
                held += 1;
            }
            s.node.free -= held;
            for p in (4 * PAGEBLOCK_NR_PAGES..8 * PAGEBLOCK_NR_PAGES).chain(16..32) {
                s.phys.zone.free_pages_block(p, 0);
                s.node.free += 1;
            }
            assert_eq!(s.phys.zone.buddy_order_at(16), Some(4));
            // kcompactd's order-4 run (not direct), scanners at 0 and
            // pageblock 1: a scan start (`compact_init_free_pfn` unset),
            // min_pfn = low_pfn = 0. Orders 3..0 have nothing: `highest`
            // stays 0 ≥ min_pfn, so the first block is taken around and
            // the order-4 block at 16 isolated; the free scanner goes to 0.
            let mut cc = CompactControl::new(Some(4), MigrateMode::SyncLight, false, false);
            cc.fast = true;
            cc.migrate_pfn = 0;
            cc.free_pfn = PAGEBLOCK_NR_PAGES;
            cc.nr_migratepages = 1;
            s.fast_isolate_freepages(&mut cc);
            cc
        });
        assert_eq!(cc.fast_search_fail, 1);
        assert_eq!(cc.free_pfn, 0);
        assert_eq!(cc.nr_freepages, 16);
        assert_eq!(cc.freepages[4].iter().copied().collect::<Vec<_>>(), [16]);
        assert_eq!(s.compact.dma_state.cached_free_pfn, 0);
    }

    #[test]
    fn fast_find_migrateblock_starts_the_migrate_scanner_at_a_block_with_free_pages() {
        // Order-3 free blocks in pageblocks 5 (p) then 1 (q): the order-3
        // MOVABLE list is q, p.
        let (p, q) = (2568, 520);
        let (mut s, z) = zone_with(&[(p, 3), (q, 3)]);
        assert_eq!(
            s.phys.zone.free_list(3, MigrateType::Movable),
            [z + q, z + p]
        );
        // Scanners at the zone start and pageblock 11: the first half ends
        // at pageblock 5 (2816 rounded down to 2560); q is below it.
        let mut cc = cc_at(&s, z, 0, 5632, 0);
        let pfn = s.fast_find_migrateblock(&mut cc);
        assert_eq!(pfn, z + PAGEBLOCK_NR_PAGES);
        assert_eq!(
            (cc.fast_start_pfn, cc.fast_search_fail),
            (FastStart::At(z + q), 0)
        );
        assert_eq!(cc.total_migrate_scanned, 1);
        // move_freelist_tail: q went to the tail.
        assert_eq!(
            s.phys.zone.free_list(3, MigrateType::Movable),
            [z + p, z + q]
        );
        // Marked pageblocks are passed over: with q's marked, p is not
        // below the bound, so the search fails and the scanner stays.
        s.compact.set_skip(z + q);
        let mut cc = cc_at(&s, z, 0, 5632, 0);
        let pfn = s.fast_find_migrateblock(&mut cc);
        assert_eq!((pfn, cc.fast_search_fail), (z, 1));
        assert_eq!(cc.total_migrate_scanned, 2);
        // Not for orders up to PAGE_ALLOC_COSTLY_ORDER, nor mid-pageblock.
        let mut cc = cc_at(&s, z, 0, 5632, 0);
        cc.order = Some(3);
        assert_eq!(s.fast_find_migrateblock(&mut cc), z);
        assert_eq!(cc.total_migrate_scanned, 0);
    }

    #[test]
    fn a_block_at_pfn_0_of_zone_dma_is_a_real_fast_start() {
        // ZONE_DMA of 4096 pages (8 pageblocks) starts at pfn 0 here. Every
        // DMA frame held but two order-4 blocks, at pfn 1040 (pageblock 2)
        // then at pfn 0: the order-4 MOVABLE list is 0, 1040.
        let mut s = two_zone_node();
        let got = s.on_zone(true, |s| {
            let z = &mut s.phys.zone;
            assert_eq!((z.start_pfn, z.spanned_pages), (0, 4096));
            let mut held = 0;
            while z.alloc_pages(0, MigrateType::Movable).is_some() {
                held += 1;
            }
            for b in [1040, 0] {
                for p in b..b + 16 {
                    z.free_pages_block(p, 0);
                }
            }
            s.node.free -= held - 32;
            assert_eq!(s.phys.zone.free_list(4, MigrateType::Movable), [0, 1040]);
            // An order-5 run, scanners at 0 and pageblock 7: the first half
            // ends at 1536. The first search finds the block at pfn 0
            // (update_fast_start_pfn: 0), the second the one at 1040
            // (the lowest stays 0).
            let mut cc = CompactControl::new(Some(5), MigrateMode::SyncLight, true, false);
            cc.fast = true;
            cc.free_pfn = 3584;
            let first = s.fast_find_migrateblock(&mut cc);
            let second = s.fast_find_migrateblock(&mut cc);
            // Both pageblocks marked, the migrate scanner at pageblock 4:
            // the search fails and reinit_migrate_pfn restarts the linear
            // scan at the lowest block found, pfn 0 (with 0 taken for
            // "unset" it went to 1040 after the second search, or stayed).
            s.compact.set_skip(0);
            s.compact.set_skip(1040);
            cc.migrate_pfn = 2048;
            let third = s.fast_find_migrateblock(&mut cc);
            // Used: a later failure leaves the scanner where it is.
            cc.migrate_pfn = 2560;
            let fourth = s.fast_find_migrateblock(&mut cc);
            (
                first,
                second,
                third,
                cc.migrate_pfn,
                fourth,
                cc.fast_search_fail,
            )
        });
        assert_eq!(got, (0, 1024, 0, 2560, 2560, 2));
    }
}
