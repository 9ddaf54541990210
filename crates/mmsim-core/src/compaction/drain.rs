//! Where a migrated folio's old frames go, and when compaction drains them
//! (Linux v6.12; the drain has been in `compact_zone` since v4.1, so every
//! modelled kernel has it: no option).
//!
//! - **The free** ([`Sim::migrate_free_old_frames`]): v6.12
//!   `migrate_folio_move` → `migrate_folio_done` → `folio_put` →
//!   `free_unref_page`: an order-0 source goes to the head of the per-CPU
//!   list of its pageblock's type (`crate::page_alloc::pcp`), not to the
//!   buddy lists; only when the lists' shared count reaches `high` does
//!   `free_pcppages_bulk` return a batch. Larger sources go to the buddy
//!   lists at once (mmsim has no per-CPU lists of orders 1–3, which v6.12's
//!   `pcp_allowed_order` would use; THP-order sources are never isolated for
//!   a smaller target). ZONE_DMA has no per-CPU lists here: its sources go
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
//!
//! Departures: `lru_add_drain_cpu` (the per-CPU LRU batches) is nothing here
//! (mmsim adds folios to the LRU at once); the whole-list drain is the
//! model's one set of lists; `compact_zone` still drains the lists when a
//! run starts (`crate::compaction`'s overview: the model's fixed `high`).

use super::{CompactControl, Sim};

impl Sim {
    /// The old frames of a migrated folio (`folio_put` of the source after
    /// `migrate_folio_move`, v6.12): order 0 to the per-CPU lists, else to
    /// the buddy lists (the module overview).
    #[inline]
    pub(super) fn migrate_free_old_frames(&mut self, pfn: u64, order: usize) {
        if order == 0 && !self.compact.in_dma {
            self.phys.free_order0(pfn);
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

#[cfg(test)]
mod tests {
    //! Rule tests of the drain's condition on a scripted zone: every frame
    //! held but the fifteen of an order-4 chunk, whose last frame is then
    //! freed to the per-CPU lists as a migrated source's would be.
    use super::super::{CompactControl, MigrateMode};
    use crate::config::{MachineConfig, Size};
    use crate::page_alloc::{MigrateType, PAGEBLOCK_NR_PAGES};
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
        s.phys.drain_pages();
        let start = s.phys.zone.start_pfn;
        let mut held = 0;
        while s.phys.zone.alloc_pages(0, MigrateType::Movable).is_some() {
            held += 1;
        }
        s.node.free -= held;
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
