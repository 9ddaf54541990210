//! Compaction per zone on the two-zone node (`crate::compaction::zones`,
//! mm/compaction.c v6.12): direct compaction walks the zonelist and stops
//! at the zone whose run succeeded, deferral per zone, scanners inside
//! their zone, kcompactd lowest zone first, and the node's weighted
//! fragmentation score.

use super::compaction::thp_64k;
use super::thp::thp_machine_with;
use super::{fault_anon, take_all_free};
use crate::compaction::{CompactResult, MigrateMode};
use crate::event::Event;
use crate::huge_memory::{ThpDefrag, VmaThpAdvice};
use crate::mem::pagetable::PTE_FOLIO_MASK;
use crate::page_alloc::{MigrateType, NORMAL_START_PFN};
use crate::sim::Sim;

/// An 8192-page machine whose lowest 1024 frames (two pageblocks) are
/// ZONE_DMA; compaction on, kcompactd and proactive compaction off. DMA:
/// min/low 22/27, `lowmem_reserve` 7168 / 256 = 28; DMA32: min/low 158/197.
pub(super) fn machine() -> Sim {
    thp_machine_with(8192, None, thp_64k(ThpDefrag::Always), |c| {
        c.dma_zone_pages = 1024;
        c.compaction.enabled = true;
        c.compaction.kcompactd = false;
        c.compaction.proactiveness = 0;
    })
}

/// Both zones fragmented for order 4: DMA32's frames are all taken
/// (memory the kernel holds) but every other one of its first 600, so it
/// has 300 free order-0 pages and nothing to migrate; a MADV_NOHUGEPAGE
/// VMA faults 960 pages into DMA (DMA32 is empty), DMA's other 64 frames
/// are taken, and every page but the last two of each 16 is discarded, so
/// DMA has 840 free pages in blocks of order 1 to 3 and 120 movable folios,
/// 64 in each pageblock (more than one batch of `COMPACT_CLUSTER_MAX`).
/// Returns the VMA and the frames taken.
pub(super) fn fragment_both(s: &mut Sim) -> (u32, Vec<u64>) {
    s.phys.drain_pages();
    let mut held = Vec::new();
    while let Some(p) = s.phys.zone.alloc_pages(0, MigrateType::Movable) {
        held.push(p);
    }
    s.node.free -= held.len() as u64;
    let t = s.add_task("frag");
    let vma = s.mmap_anon(t, 960).unwrap();
    s.madvise_thp(vma, VmaThpAdvice::Nohugepage).unwrap();
    for i in 0..960 {
        fault_anon(s, vma, i);
    }
    let d = &mut s.phys.dma.as_mut().unwrap().zone;
    let mut dma_held = Vec::new();
    while let Some(p) = d.alloc_pages(0, MigrateType::Movable) {
        dma_held.push(p);
    }
    s.node.free -= dma_held.len() as u64;
    for i in (0..960).step_by(16) {
        s.step(&Event::Discard {
            vma,
            index: i,
            pages: 14,
        });
    }
    s.phys.drain_pages();
    for &p in held.iter().take(600).step_by(2) {
        s.phys.zone.free_pages_block(p, 0);
    }
    s.node.free += 300;
    let mut kept: Vec<u64> = held.iter().take(600).skip(1).step_by(2).copied().collect();
    kept.extend(&held[600..]);
    kept.extend(dma_held);
    (vma, kept)
}

/// Gives the frames [`fragment_both`] took back (free + used = managed again).
pub(super) fn release(s: &mut Sim, held: &[u64]) {
    for &p in held {
        s.phys.free_block(p, 0);
    }
    s.node.free += held.len() as u64;
}

/// The head PFN of every folio `vma` maps.
fn folio_pfns(s: &Sim, vma: u32) -> Vec<u64> {
    (0..960)
        .filter_map(|i| {
            let pte = s.vmas[vma as usize].pte(i);
            (pte != 0).then(|| u64::from(s.folios.head_pfn(pte & PTE_FOLIO_MASK)))
        })
        .collect()
}

fn dma_buddyinfo(s: &Sim) -> Vec<u64> {
    s.phys.dma.as_ref().unwrap().zone.buddyinfo().to_vec()
}

/// `(compact_considered, compact_defer_shift, compact_order_failed)` of
/// DMA32 and of DMA.
fn deferral(s: &Sim) -> [(u32, u32, u32); 2] {
    let (c, d) = (&s.compact, &s.compact.dma_state);
    [
        (c.considered, c.defer_shift, c.order_failed),
        (d.considered, d.defer_shift, d.order_failed),
    ]
}

#[test]
fn direct_compaction_that_fails_in_dma32_succeeds_in_dma_and_defers_dma32_only() {
    let mut s = machine();
    let (vma, held) = fragment_both(&mut s);
    assert_eq!(dma_buddyinfo(&s)[..5], [0, 60, 60, 60, 0]);
    assert_eq!(s.phys.zone.buddyinfo()[..2], [300, 0]);
    assert!(folio_pfns(&s, vma).iter().all(|&p| p < 960));
    // DMA32 first: suitable (300 free > low 197 + gap 32; index 935), its
    // migrate scanner finds nothing in 13 pageblocks and meets the free
    // scanner: PARTIAL_SKIPPED, deferred (a sync run). Then DMA: 36 folios
    // of pageblock 0 move before its scanners meet too (COMPLETE: DMA
    // starts at pfn 0, the run is whole), leaving free blocks of order 8
    // (pfns 0..256) and 5 (480..512); the result is the maximum over the
    // zones. The allocation takes 480 (the smallest block, split).
    let (page, r) = s.alloc_pages_direct_compact(4, MigrateMode::SyncLight);
    assert_eq!((page, r), (Some(480), CompactResult::PartialSkipped));
    let v = &s.vm;
    assert_eq!(
        (v.compact_stall, v.compact_success, v.compact_fail),
        (1, 1, 0)
    );
    assert_eq!(
        (v.pgmigrate_success, v.compact_migrate_scanned),
        (36, 6656 + 512)
    );
    assert_eq!(dma_buddyinfo(&s)[4..9], [1, 0, 0, 0, 1]);
    // Both runs deferred; DMA's reset by the allocation it served
    // (compaction_defer_reset(.., true): order_failed = order + 1).
    assert_eq!(deferral(&s), [(0, 1, 0), (0, 0, 5)]);
    // Scanners inside their zones: every folio is still in DMA, DMA32's
    // free pages are untouched, each zone's cached positions are its own.
    let mut pfns = folio_pfns(&s, vma);
    pfns.sort_unstable();
    assert_eq!((pfns.len(), pfns[0], pfns[119]), (120, 270, 959));
    assert_eq!(s.phys.zone.buddyinfo()[..2], [300, 0]);
    let z = NORMAL_START_PFN;
    assert_eq!(
        (s.compact.cached_migrate_pfn, s.compact.cached_free_pfn),
        ([z; 2], z + 6656)
    );
    let d = &s.compact.dma_state;
    assert_eq!((d.cached_migrate_pfn, d.cached_free_pfn), ([0; 2], 512));

    // Again: DMA32 is deferred (considered 1 of 2: COMPACT_DEFERRED), DMA's
    // order-4 min watermark with its reserve is met at once: SUCCESS, no
    // scanning, and the page is the order-4 half left at 496.
    let (page, r) = s.alloc_pages_direct_compact(4, MigrateMode::SyncLight);
    assert_eq!((page, r), (Some(496), CompactResult::Success));
    assert_eq!((s.vm.compact_stall, s.vm.compact_success), (2, 2));
    assert_eq!(s.vm.compact_migrate_scanned, 6656 + 512);
    assert_eq!(deferral(&s), [(1, 1, 0), (0, 0, 5)]);
    for p in [480, 496] {
        s.phys.free_block(p, 4);
    }
    s.node.free += 32;
    release(&mut s, &held);
    s.check_invariants().unwrap();
}

#[test]
fn kcompactd_compacts_each_zone_and_defers_each_on_its_own() {
    let mut s = machine();
    let (vma, held) = fragment_both(&mut s);
    s.compact.kcompactd_max_order = 4;
    s.kcompactd_do_work();
    // Both zones run: DMA as in the direct case, and DMA32; both runs end
    // with the scanners met and defer their own zone. No stall: kcompactd
    // is not the allocator. (v6.12 visits DMA first; each run reads and
    // changes only its own zone, so the order shows in no outcome. The
    // zone check without DMA's reserve: the test
    // kcompactd_s_zone_check_is_without_dma_s_reserve_but_its_run_is_with_it.)
    let v = &s.vm;
    assert_eq!((v.compact_daemon_wake, v.compact_stall), (1, 0));
    assert_eq!(v.compact_daemon_migrate_scanned, 512 + 6656);
    assert_eq!(v.pgmigrate_success, 36);
    assert_eq!(dma_buddyinfo(&s)[4..9], [0, 1, 0, 0, 1]);
    assert!(folio_pfns(&s, vma).iter().all(|&p| p < 1024));
    assert_eq!(deferral(&s), [(0, 1, 0), (0, 1, 0)]);
    assert_eq!(s.compact.kcompactd_max_order, 0);
    release(&mut s, &held);
    s.check_invariants().unwrap();
}

#[test]
fn the_node_fragmentation_score_weights_each_zone_by_its_pages() {
    let mut s = machine();
    assert_eq!(s.fragmentation_score(), 0);
    // One DMA page taken: 1023 free, 512 of them in an order-9 block:
    // DMA's score (1023 - 512) × 100 / 1023 = 49, weighted × 1024 / 8193
    // = 6; DMA32's is 0 (all free in order-10 blocks).
    let d = &mut s.phys.dma.as_mut().unwrap().zone;
    let p = d.alloc_pages(0, MigrateType::Movable).unwrap();
    assert_eq!(d.buddyinfo()[9], 1);
    assert_eq!(s.fragmentation_score(), 6);
    s.phys.free_block(p, 0);
    assert_eq!(s.fragmentation_score(), 0);
}

/// DMA32 fragmented with folios to move and targets far above them, DMA
/// with nothing to move: every
/// DMA frame taken but every other one of its first 600 (300 free order-0
/// pages: compaction is suitable there for order 4, 300 > low 27 +
/// reserve 28 + gap 32); a MADV_NOHUGEPAGE VMA faults 960 pages into
/// DMA32, its other frames are taken but 14 of each 16 of its pageblock
/// 10, and every page but the last two of each 16 is discarded. Returns
/// the VMA and the frames taken.
fn fragment_upper(s: &mut Sim) -> (u32, Vec<u64>) {
    let d = &mut s.phys.dma.as_mut().unwrap().zone;
    let mut held = Vec::new();
    while let Some(p) = d.alloc_pages(0, MigrateType::Movable) {
        held.push(p);
    }
    s.node.free -= held.len() as u64;
    for &p in held.iter().take(600).step_by(2) {
        s.phys.free_block(p, 0);
    }
    s.node.free += 300;
    let mut kept: Vec<u64> = held.iter().take(600).skip(1).step_by(2).copied().collect();
    kept.extend(&held[600..]);
    let t = s.add_task("frag");
    let vma = s.mmap_anon(t, 960).unwrap();
    s.madvise_thp(vma, VmaThpAdvice::Nohugepage).unwrap();
    for i in 0..960 {
        fault_anon(s, vma, i);
    }
    s.phys.drain_pages();
    let mut upper_held = 0;
    while let Some(p) = s.phys.zone.alloc_pages(0, MigrateType::Movable) {
        kept.push(p);
        upper_held += 1;
    }
    s.node.free -= upper_held;
    // Targets for the free scanner: 14 of each 16 frames of DMA32's
    // pageblock 10 given back (free blocks of order 1 to 3).
    let z = NORMAL_START_PFN;
    kept.retain(|&p| {
        let give = (z + 5120..z + 5632).contains(&p) && (p - z) % 16 < 14;
        if give {
            s.phys.free_block(p, 0);
            s.node.free += 1;
        }
        !give
    });
    for i in (0..960).step_by(16) {
        s.step(&Event::Discard {
            vma,
            index: i,
            pages: 14,
        });
    }
    s.phys.drain_pages();
    (vma, kept)
}

#[test]
fn direct_compaction_stops_at_dma32_s_success_and_leaves_dma_alone() {
    let mut s = machine();
    let (vma, mut held) = fragment_upper(&mut s);
    let z = NORMAL_START_PFN;
    assert_eq!(s.phys.zone.buddyinfo()[..5], [0, 92, 92, 92, 0]);
    assert_eq!(dma_buddyinfo(&s)[..2], [300, 0]);
    // The last two frames of pageblock 10's first 16 given back: an
    // order-4 block at z + 5120, so DMA32 meets the order's min watermark
    // (compaction_suit_allocation_order: COMPACT_SUCCESS, as when a free
    // forms the block after the allocator's attempt).
    for p in [z + 5134, z + 5135] {
        held.retain(|&h| h != p);
        s.phys.free_block(p, 0);
    }
    s.node.free += 2;
    assert_eq!(s.phys.zone.buddyinfo()[4], 1);
    // DMA, suitable (300 free > 87) and fragmented, would be compacted if
    // the walk reached it.
    assert!(s.on_zone(true, |s| s.compaction_suitable(4)));
    let dma_before = dma_buddyinfo(&s);
    let (page, r) = s.alloc_pages_direct_compact(4, MigrateMode::SyncLight);
    assert_eq!((page, r), (Some(z + 5120), CompactResult::Success));
    let v = &s.vm;
    assert_eq!(
        (v.compact_stall, v.compact_success, v.compact_fail),
        (1, 1, 0)
    );
    // try_to_compact_pages broke out of the zonelist walk at DMA32's
    // success: nothing scanned anywhere, and DMA's deferral (whose
    // compaction_deferred would have counted compact_considered), its
    // scanners' cached positions and its free blocks are as they were.
    assert_eq!((v.compact_migrate_scanned, v.compact_free_scanned), (0, 0));
    assert_eq!(deferral(&s), [(0, 0, 5), (0, 0, 0)]);
    let d = &s.compact.dma_state;
    assert_eq!((d.cached_migrate_pfn, d.cached_free_pfn), ([0; 2], 0));
    assert_eq!(dma_buddyinfo(&s), dma_before);
    assert_eq!(folio_pfns(&s, vma).len(), 120);
    s.phys.free_block(z + 5120, 4);
    s.node.free += 16;
    release(&mut s, &held);
    s.check_invariants().unwrap();
}

/// DMA32 held whole; 64 pages faulted into DMA (pfns 0..63), DMA's other
/// frames taken but `free` even ones from pfn 600 up (order-0 pages of
/// pageblock 1). Returns the VMA.
fn dma_only(free: u64) -> (Sim, u32) {
    let mut s = machine();
    take_all_free(&mut s);
    let t = s.add_task("dma");
    let vma = s.mmap_anon(t, 64).unwrap();
    s.madvise_thp(vma, VmaThpAdvice::Nohugepage).unwrap();
    for i in 0..64 {
        fault_anon(&mut s, vma, i);
    }
    let d = &mut s.phys.dma.as_mut().unwrap().zone;
    let mut held = Vec::new();
    while let Some(p) = d.alloc_pages(0, MigrateType::Movable) {
        held.push(p);
    }
    s.node.free -= held.len() as u64;
    for p in (600..).step_by(2).take(free as usize) {
        s.phys.free_block(p, 0);
    }
    s.node.free += free;
    let mut pfns = folio_pfns(&s, vma);
    pfns.sort_unstable();
    assert_eq!(pfns, (0..64).collect::<Vec<_>>());
    assert_eq!(dma_buddyinfo(&s)[0], free);
    (s, vma)
}

#[test]
fn kcompactd_s_zone_check_is_without_dma_s_reserve_but_its_run_is_with_it() {
    // DMA with 70 free pages, all order 0: without its reserve compaction
    // is suitable (70 > low 27 + compact_gap 32), so kcompactd_do_work's
    // zone loop (highest_zoneidx = DMA) goes on to compact_zone; that
    // checks again with the kcompactd request's highest zone, adding DMA's
    // lowmem_reserve 28 (70 <= 87): COMPACT_SKIPPED, nothing scanned or
    // deferred. DMA32 (nothing free) is not suitable. Both zones'
    // compaction_deferred counted the attempt. kcompactd_node_suitable
    // (with the reserve) would not have woken it.
    let (mut s, _) = dma_only(70);
    s.compact.kcompactd_max_order = 4;
    assert!(!s.kcompactd_node_suitable());
    s.kcompactd_do_work();
    let v = &s.vm;
    assert_eq!(
        (
            v.compact_daemon_wake,
            v.compact_daemon_migrate_scanned,
            v.pgmigrate_success
        ),
        (1, 0, 0)
    );
    assert_eq!(deferral(&s), [(1, 0, 0), (1, 0, 0)]);
    // With 88 free (> 87) the run goes ahead and moves the 64 folios.
    let (mut s, vma) = dma_only(88);
    s.compact.kcompactd_max_order = 4;
    assert!(s.kcompactd_node_suitable());
    s.kcompactd_do_work();
    // DMA's run (sync-light) moves the 64 folios to pageblock 1's free
    // pages and scans its migrate side to the free scanner (512 pages);
    // the scanners meet (COMPLETE: DMA's runs from pfn 0 are whole),
    // which defers DMA though pfns 0..63 are now an order-6 block.
    let v = &s.vm;
    assert_eq!(
        (
            v.compact_daemon_migrate_scanned,
            v.compact_daemon_free_scanned,
            v.pgmigrate_success
        ),
        (512, 215, 64)
    );
    assert_eq!(deferral(&s), [(1, 0, 0), (0, 1, 0)]);
    assert_eq!(dma_buddyinfo(&s)[..8], [24, 0, 0, 0, 0, 0, 1, 0]);
    let pfns = folio_pfns(&s, vma);
    assert_eq!(pfns.len(), 64);
    assert!(pfns.iter().all(|&p| (600..776).contains(&p) && p % 2 == 0));
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(
    expected = "ZONE_DMA is swapped in (on_zone): compaction_ready reads the upper zone"
)]
fn an_upper_zone_reader_inside_a_dma_compaction_call_panics_in_debug_builds() {
    let mut s = machine();
    s.on_zone(true, |s| s.zone_compaction_ready(4, false));
}
