//! Where a migrated folio's old frames go, and when compaction drains them
//! (Linux v6.12). The drain's condition as modelled is v5.1+ (Mel Gorman's
//! "mm, compaction: remove last_migrated_pfn from compact_control" made
//! `last_migrated_pfn` a local of `compact_zone`, set when an isolation
//! succeeds; v6.12 sets it to the start of the pageblock the isolation
//! ended in). Before v5.1 it was `cc->last_migrated_pfn`, the first pfn
//! `isolate_migratepages_block` isolated, so a scanner past that pfn's
//! order-aligned block drained even within the pageblock; that older
//! variant is not modelled (no option: every kernel the model's options
//! select is newer).
//!
//! - **The free** ([`Sim::migrate_free_old_frames`]): v6.12
//!   `migrate_folio_move` → `migrate_folio_done` → `folio_put` →
//!   `free_unref_page`: an order-0 source goes to the head of the per-CPU
//!   list of its pageblock's type (`crate::page_alloc::pcp`), not to the
//!   buddy lists; only when the lists' shared count reaches `high` does
//!   `free_pcppages_bulk` return a batch. Larger sources go to the per-CPU
//!   lists of their order under `policy.pcp_lists = "6.12"` (v6.12's
//!   `pcp_allowed_order`: orders 1–3; THP-order sources are never isolated
//!   for a smaller target), to the buddy lists at once under the default
//!   `"order-0"`. ZONE_DMA has no per-CPU lists here: its sources go
//!   to its buddy lists.
//! - **The drain** ([`Sim::compact_check_drain`]): v6.12 `compact_zone`'s
//!   `check_drain` (mm/compaction.c). Each isolation sets `last_migrated_pfn`
//!   to the start of the pageblock it ended in (`pageblock_start_pfn(
//!   cc->migrate_pfn - 1)`, at least the zone's start). After the migration
//!   (and after an isolation that found nothing), when `cc->order > 0`, a
//!   migration is pending and `last_migrated_pfn` lies below the start of
//!   the `cc->order`-aligned block the migrate scanner is now in,
//!   `lru_add_drain_cpu_zone` drains this CPU's per-CPU lists of the zone
//!   (`drain_local_pages` → `drain_pages_zone` → `free_pcppages_bulk` →
//!   `__free_one_page`), and no drain follows until the next migration.
//!   The freed frames merge there, and with page capture on
//!   (`compaction.capture`) `__free_one_page`'s `compaction_capture` takes
//!   the first block of the target order they form (`crate::page_alloc`);
//!   the run then stops at the next capture test (after the next
//!   migration) or when it ends, and `compact_zone_order` turns any run
//!   with a captured page into `COMPACT_SUCCESS` (`crate::compaction::zones`).
//!   `compaction_capture`'s other tests hold by construction here: no
//!   pageblock is CMA or ISOLATE, and every direct compaction is for a
//!   movable allocation (`cc->migratetype` MOVABLE: THP, mTHP, khugepaged,
//!   large page-cache folios), so its "lower order into a movable
//!   pageblock" test never refuses. Proactive runs (`cc->order` = -1) never
//!   drain; kcompactd's runs drain the same list (the guest this models has
//!   one CPU, and mmsim one set of per-CPU lists).
//! - **No drain after a failed THP migration** ([`Sim::compact_failed_drain`]):
//!   v6.12 clears `last_migrated_pfn` when a migration fails for
//!   `cc->order` = `COMPACTION_HPAGE_ORDER` inside a pageblock it is not
//!   already finishing (the pageblock cannot become free).
//!
//! Departures: `lru_add_drain_cpu` (the per-CPU LRU batches) is nothing here
//! (mmsim adds folios to the LRU at once); the whole-list drain is the
//! model's one set of lists; `compact_zone` still drains the lists when a
//! run starts (`crate::compaction`'s overview: the model's fixed `high`).
//! At a run's end v6.12's `release_free_list` hands the free scanner's
//! unused blocks back with `__free_pages` → `free_unref_page`, so the
//! orders `pcp_allowed_order` allows (0..=`PAGE_ALLOC_COSTLY_ORDER` and
//! `HPAGE_PMD_ORDER`) land on the per-CPU lists, as they do here under
//! `policy.pcp_lists = "6.12"` ([`Sim::compact_release_page`]); under the
//! default `"order-0"` mmsim frees every order to the buddy lists, where
//! they merge at once.

use super::{pageblock_start, CompactControl, Sim, COMPACTION_HPAGE_ORDER};
use crate::page_alloc::PAGEBLOCK_NR_PAGES;

impl Sim {
    /// The old frames of a migrated folio (`folio_put` of the source after
    /// `migrate_folio_move`, v6.12): order 0 to the per-CPU lists, else to
    /// the buddy lists (the module overview).
    #[inline]
    pub(super) fn migrate_free_old_frames(&mut self, pfn: u64, order: usize) {
        if self.tp.is_some() {
            self.trace_page_free(pfn, order);
        }
        if !self.compact.in_dma {
            self.phys.free_unref_page(pfn, order);
        } else {
            self.phys.free_block(pfn, order);
        }
    }

    /// `release_free_list` (v6.12) of one of the free scanner's unused
    /// blocks: `__free_pages`, to the per-CPU lists under `pcp_lists =
    /// "6.12"` where `pcp_allowed_order` allows (order 0 included); to the
    /// buddy lists otherwise (the module overview's departure).
    pub(super) fn compact_release_page(&mut self, pfn: u64, order: usize) {
        if self.tp.is_some() {
            self.trace_page_free(pfn, order);
        }
        let pcp = self.phys.pcp.orders == crate::page_alloc::PcpLists::V6_12;
        if pcp && !self.compact.in_dma && crate::page_alloc::pcp_allowed_order(order) {
            self.phys.free_unref_page(pfn, order);
        } else {
            self.phys.free_block(pfn, order);
        }
    }

    /// `compact_zone`'s `check_drain` (v6.12): drains the per-CPU lists
    /// (`lru_add_drain_cpu_zone`) once the migrate scanner has left the
    /// `cc->order`-aligned block of the last migration (the module
    /// overview). `last_migrated` is `last_migrated_pfn`, `None` for 0.
    pub(super) fn compact_check_drain(&mut self, cc: &CompactControl, last: &mut Option<u64>) {
        let (Some(order), Some(l)) = (cc.order.filter(|&o| o > 0), *last) else {
            return;
        };
        let current_block_start = cc.migrate_pfn & !((1u64 << order) - 1);
        if l < current_block_start {
            if !self.compact.in_dma {
                self.phys.drain_pages();
            }
            *last = None;
        }
    }
}

/// `last_migrated_pfn` after a successful isolation (v6.12 `compact_zone`,
/// `ISOLATE_SUCCESS`): the start of the pageblock the isolation ended in,
/// `max(zone_start_pfn, pageblock_start_pfn(cc->migrate_pfn - 1))` (the
/// module overview; v5.1's was the scan's start pfn).
#[inline]
pub(super) fn last_migrated_pfn(cc: &CompactControl, zone_start: u64) -> u64 {
    pageblock_start(cc.migrate_pfn - 1).max(zone_start)
}

/// The migration failure's reset of `last_migrated_pfn` (v6.12
/// `compact_zone`, mm/compaction.c; since v6.2, "mm, compaction: finish
/// pageblocks on complete migration failure", with v6.12's conditions): after a failed migration
/// (here only -ENOMEM with the scanners met) with the migrate scanner
/// inside a pageblock, skip hints honoured, a mode below `MIGRATE_SYNC`
/// (every mode here) and `cc->finish_pageblock` not yet set, the kernel
/// rescans the rest of the pageblock, and for `cc->order` =
/// `COMPACTION_HPAGE_ORDER` it clears `last_migrated_pfn` ("draining does
/// not help THP": the pageblock cannot become free): no drain until the
/// next migration. `finish_pageblock` is the kernel's flag as
/// `compact_zone` sets it at the iteration's start. Departure: mmsim does
/// not rescan (the module overview of `crate::compaction::fast`); before
/// v6.2 the kernel instead skipped the rest of the `cc->order` block and
/// cleared it for every order, for direct async runs.
#[inline]
fn failed_migration_stops_drain(cc: &CompactControl, finish_pageblock: bool) -> bool {
    !cc.migrate_pfn.is_multiple_of(PAGEBLOCK_NR_PAGES)
        && !cc.ignore_skip_hint
        && !finish_pageblock
        && cc.order == Some(COMPACTION_HPAGE_ORDER)
}

impl Sim {
    /// `compact_zone` after a failed migration (v6.12): clears
    /// `last_migrated_pfn` where [`failed_migration_stops_drain`] holds.
    #[inline]
    pub(super) fn compact_failed_drain(
        &self,
        cc: &CompactControl,
        finish_pageblock: bool,
        last: &mut Option<u64>,
    ) {
        if failed_migration_stops_drain(cc, finish_pageblock) {
            *last = None;
        }
    }
}

#[cfg(test)]
mod tests {
    //! Rule tests of the drain's condition on a scripted zone: every frame
    //! held but the fifteen of an order-4 chunk, whose last frame is then
    //! freed to the per-CPU lists as a migrated source's would be.
    use super::super::{CompactControl, MigrateMode};
    use crate::config::{MachineConfig, Size};
    use crate::page_alloc::{MigrateType, PAGEBLOCK_NR_PAGES};
    use crate::rule_tests::take_all_free;
    use crate::sim::Sim;

    /// An 8192-page machine with compaction (and `capture` as given), every
    /// frame held but pageblock 3's first chunk less its last frame (zone
    /// pfns 1536..1551, free: orders 3, 2, 1, 0); frame 1551 then freed as
    /// a migrated source (to the per-CPU lists). Returns the machine and
    /// the zone start.
    fn one_source_freed(capture: bool) -> (Sim, u64) {
        let mut cfg = MachineConfig {
            memory: Size::from_pages(8192),
            ..Default::default()
        };
        cfg.compaction.enabled = true;
        cfg.compaction.capture = capture;
        let mut s = Sim::new(cfg).unwrap();
        take_all_free(&mut s);
        let start = s.phys.zone.start_pfn;
        let chunk = start + 3 * PAGEBLOCK_NR_PAGES;
        for p in chunk..chunk + 15 {
            s.phys.zone.free_pages_block(p, 0);
        }
        if capture {
            s.phys.zone.capture_order = 4;
        }
        s.migrate_free_old_frames(chunk + 15, 0);
        (s, start)
    }

    /// `check_drain` with the migrate scanner at zone-relative `migrate`,
    /// the last isolation in pageblock 3 (`last_migrated_pfn`), for
    /// `order`; returns whether it drained (the pending migration cleared)
    /// and the pages left on the per-CPU lists.
    fn check(s: &mut Sim, start: u64, order: Option<usize>, migrate: u64) -> (bool, u64) {
        let mut cc = CompactControl::new(order, MigrateMode::Async, true, false);
        cc.migrate_pfn = start + migrate;
        let mut last = Some(start + 3 * PAGEBLOCK_NR_PAGES);
        s.compact_check_drain(&cc, &mut last);
        (last.is_none(), s.phys.pcp.count())
    }

    #[test]
    fn a_migrated_source_waits_on_the_per_cpu_list_until_the_scanner_leaves_its_block() {
        let (mut s, start) = one_source_freed(false);
        let chunk = start + 3 * PAGEBLOCK_NR_PAGES;
        // The source is on the movable list, not merged: no order-4 block.
        assert_eq!(s.phys.pcp.list(MigrateType::Movable), [chunk + 15]);
        assert_eq!(s.phys.zone.buddy_order_at(chunk), Some(3));
        // The migrate scanner still in the pageblock's first order-4 block
        // (1536 + 5: block start 1536, not above last_migrated_pfn 1536):
        // no drain. A proactive run (order -1) never drains.
        assert_eq!(check(&mut s, start, Some(4), 1541), (false, 1));
        assert_eq!(check(&mut s, start, None, 1600), (false, 1));
        // At 1552 it has left that block (block start 1552 > 1536): the
        // lists are drained and the chunk merges into an order-4 block
        // (with its free buddies up: order 4 and up, all held, so order 4).
        assert_eq!(check(&mut s, start, Some(4), 1552), (true, 0));
        assert_eq!(s.phys.zone.buddy_order_at(chunk), Some(4));
        assert!(s.phys.zone.captured.is_none());
        // For order 9 the scanner at 1552 is still in the order-aligned
        // block of the migration (block start 1536): no drain.
        let (mut s, start) = one_source_freed(false);
        assert_eq!(check(&mut s, start, Some(9), 1552), (false, 1));
        assert_eq!(check(&mut s, start, Some(9), 2048), (true, 0));
    }

    #[test]
    fn last_migrated_pfn_is_the_pageblock_start_so_a_scanner_past_its_first_chunk_drains() {
        // The isolation took folios from chunk 2 of pageblock 3 (zone pfns
        // 1552..1559) and stopped at 1560 (COMPACT_CLUSTER_MAX), inside
        // that order-4 block. last_migrated_pfn is the pageblock's start,
        // 1536 (not 1559, nor the order-aligned 1552), which is below the
        // block start 1552: check_drain drains at once.
        let (mut s, start) = one_source_freed(false);
        let mut cc = CompactControl::new(Some(4), MigrateMode::Async, true, false);
        cc.migrate_pfn = start + 1560;
        let l = super::last_migrated_pfn(&cc, start);
        assert_eq!(l, start + 1536);
        let mut last = Some(l);
        s.compact_check_drain(&cc, &mut last);
        assert_eq!((last, s.phys.pcp.count()), (None, 0));
        // In the zone's first pageblock it is the zone's start.
        cc.migrate_pfn = start + 20;
        assert_eq!(super::last_migrated_pfn(&cc, start), start);
    }

    #[test]
    fn a_failed_thp_migration_inside_a_pageblock_ends_the_pending_drain() {
        // v6.12: -ENOMEM with the migrate scanner at 1560 (inside pageblock
        // 3), not finishing a pageblock, skip hints honoured: for order 9
        // (COMPACTION_HPAGE_ORDER) last_migrated_pfn is cleared, so the
        // scanner leaving the block drains nothing.
        let (s, start) = one_source_freed(false);
        let at = |order, migrate: u64, finish, proactive| {
            let mut cc = CompactControl::new(order, MigrateMode::Async, true, proactive);
            cc.migrate_pfn = start + migrate;
            let mut last = Some(start + 1536);
            s.compact_failed_drain(&cc, finish, &mut last);
            last.is_none()
        };
        assert!(at(Some(9), 1560, false, false));
        // Not for a smaller order, at a pageblock boundary, when the
        // pageblock is being finished, or ignoring skip hints.
        assert!(!at(Some(4), 1560, false, false));
        assert!(!at(Some(9), 2048, false, false));
        assert!(!at(Some(9), 1560, true, false));
        assert!(!at(Some(9), 1560, false, true));
    }

    #[test]
    fn an_isolation_that_finds_nothing_still_drains_the_last_migration_s_sources() {
        // v6.12 compact_zone: ISOLATE_NONE keeps last_migrated_pfn and goes
        // to check_drain ("there might still be unflushed migrations from
        // previous cc->order aligned block"). Zone layout: every frame held
        // but the zone's first 32 (32 order-0 anonymous folios) and
        // every other frame of pageblocks 8..15 (free, order 0: 2048
        // pages, none merging, so order 9 is suitable and unmet).
        use crate::event::Event;
        let mut cfg = MachineConfig {
            memory: Size::from_pages(8192),
            ..Default::default()
        };
        cfg.compaction.enabled = true;
        cfg.compaction.kcompactd = false;
        cfg.compaction.proactiveness = 0;
        let mut s = Sim::new(cfg).unwrap();
        let t = s.add_task("t");
        let vma = s.mmap_anon(t, 32).unwrap();
        for index in 0..32 {
            s.step(&Event::Access {
                vma,
                index,
                write: true,
            });
        }
        take_all_free(&mut s);
        let start = s.phys.zone.start_pfn;
        let chunk = start;
        let pfn_of = |s: &Sim, i: u32| {
            let f = s.vmas[vma as usize].pte(i) & crate::mem::pagetable::PTE_FOLIO_MASK;
            u64::from(s.folios.head_pfn(f))
        };
        for i in 0..32 {
            assert_eq!(pfn_of(&s, i), chunk + u64::from(i));
        }
        let (_, end) = s.phys.pfn_range();
        let frees: Vec<u64> = (start + 8 * PAGEBLOCK_NR_PAGES..end).step_by(2).collect();
        for &p in &frees {
            s.phys.zone.free_pages_block(p, 0);
        }
        s.node.free += frees.len() as u64;
        // Async direct compaction for order 9. Pageblock 0: 32 folios
        // isolated (COMPACT_CLUSTER_MAX), the scanner stops at 32 and they
        // migrate; their frames wait on the per-CPU list (the scanner is
        // still in the migration's order-9 block). The next isolation
        // fails at 32 and skips to 512 (ISOLATE_NONE): check_drain drains,
        // and the 32 frames merge into an order-5 block at the zone start.
        let mut cc = CompactControl::new(Some(9), MigrateMode::Async, true, false);
        s.compact_zone(&mut cc);
        assert_eq!(s.vm.pgmigrate_success, 32);
        for i in 0..32 {
            assert!(pfn_of(&s, i) >= start + 8 * PAGEBLOCK_NR_PAGES, "page {i}");
        }
        assert_eq!(s.phys.pcp.count(), 0);
        assert_eq!(s.phys.zone.buddy_order_at(chunk), Some(5));
        s.check_page_alloc().unwrap();
    }

    #[test]
    fn the_drain_hands_the_merged_block_to_capture() {
        let (mut s, start) = one_source_freed(true);
        let chunk = start + 3 * PAGEBLOCK_NR_PAGES;
        // The free to the per-CPU list captures nothing.
        assert!(s.phys.zone.captured.is_none());
        assert_eq!(check(&mut s, start, Some(4), 1552), (true, 0));
        // __free_one_page of frame 1551 at order 0..3 merges with its free
        // buddies, and at order 4 compaction_capture takes the block: it is
        // on no free list.
        assert_eq!(s.phys.zone.captured, Some(chunk));
        assert_eq!(s.phys.zone.buddy_order_at(chunk), None);
        assert_eq!(s.phys.zone.free_pages(), 0);
    }
}
