//! `__alloc_pages_direct_reclaim()` (mm/page_alloc.c, v6.12) in the slow
//! path of a large folio (`crate::compaction`): a direct reclaim that made
//! no progress goes straight out (`if (unlikely(!(*did_some_progress)))
//! goto out;`): no second look at the free lists and no `drain_all_pages`;
//! one that made progress looks, drains the per-CPU list and looks again.
//! And `sc->order` (v6.12 `try_to_free_pages`, `balance_pgdat`) read by
//! MGLRU's `should_abort_scan`, through the real direct and kswapd paths.

use super::compaction::thp_64k;
use super::thp::thp_machine_with;
use super::*;
use crate::huge_memory::{ThpDefrag, VmaThpAdvice};
use crate::page_alloc::MigrateType;
use crate::reclaim::SWAP_CLUSTER_MAX;

/// An 8192-page machine, 64K mTHP under `defrag = madvise` (a
/// MADV_HUGEPAGE fault may reclaim directly, without `__GFP_NORETRY`), no
/// swap, compaction on or off (kcompactd off). The zone is cut up so that
/// no free block reaches order 4: a MADV_NOHUGEPAGE VMA faults 16 pages,
/// the rest of the zone is taken and every other frame given back (order-0
/// blocks between held frames: free pages far above the high mark), then
/// `file` clean file pages are read and the 16 anonymous pages discarded
/// onto the per-CPU list. Only a drain of that list makes an order-4 block.
/// With compaction, it is deferred for order 4 (`compact_defer_shift` 6):
/// neither of the slow path's compactions runs.
fn cut_up(compaction: bool, file: u32) -> Sim {
    let mut s = thp_machine_with(8192, None, thp_64k(ThpDefrag::Madvise), |c| {
        c.compaction.enabled = compaction;
        c.compaction.kcompactd = false;
        c.compaction.proactiveness = 0;
    });
    let t = s.add_task("frag");
    let vma = s.mmap_anon(t, 16).unwrap();
    s.madvise_thp(vma, VmaThpAdvice::Nohugepage).unwrap();
    for i in 0..16 {
        fault_anon(&mut s, vma, i);
    }
    s.phys.drain_pages();
    let mut held = Vec::new();
    while let Some(p) = s.phys.zone.alloc_pages(0, MigrateType::Movable) {
        held.push(p);
    }
    s.node.free -= held.len() as u64;
    for &p in held.iter().step_by(2) {
        s.phys.zone.free_pages_block(p, 0);
        s.node.free += 1;
    }
    if file > 0 {
        read_random(&mut s, t, u64::from(file), file);
    }
    s.step(&Event::Discard {
        vma,
        index: 0,
        pages: 16,
    });
    assert!(s.node.free > s.node.wmark_high + 2048);
    assert!(s.phys.pcp.count() >= 16);
    if compaction {
        s.compact.defer_shift = 6;
        s.compact.considered = 0;
        s.compact.order_failed = 0;
    }
    s
}

/// A 64K fault in a MADV_HUGEPAGE VMA: the folio's order, the direct
/// reclaim stalls and pages reclaimed, and pages left on the per-CPU list.
fn thp_fault(s: &mut Sim) -> (u8, u64, u64, u64) {
    let t = s.add_task("thp");
    let vma = s.mmap_anon(t, 16).unwrap();
    s.madvise_thp(vma, VmaThpAdvice::Hugepage).unwrap();
    let f = fault_anon(s, vma, 0);
    (
        s.folios[f].order(),
        s.vm.allocstall_normal,
        s.vm.pgsteal_direct,
        s.phys.pcp.count(),
    )
}

#[test]
fn a_direct_reclaim_without_progress_neither_retries_nor_drains() {
    // No file pages and no swap: the reclaim finds nothing (progress 0)
    // and the slow path goes on to its (deferred) compaction and fails;
    // the fault falls back to order 0, taking a page of the per-CPU list,
    // which keeps the other 15 discarded pages (and its refills). Before
    // v6.12 was followed here, the drain after the failed look made the
    // order-4 block of the discarded pages and the fault got it.
    let mut s = cut_up(true, 0);
    let pcp = s.phys.pcp.count();
    let (order, stalls, stolen, left) = thp_fault(&mut s);
    assert_eq!((order, stalls, stolen), (0, 1, 0));
    assert_eq!(left, pcp - 1);
}

#[test]
fn a_direct_reclaim_with_progress_drains_and_takes_the_block() {
    // 64 clean file pages: the reclaim frees 44 of them (its passes scan
    // `size >> priority` until the goal of SWAP_CLUSTER_MAX is passed),
    // order-0 frames between held ones (no block); the look at the
    // min mark fails, the drain merges the discarded pages into an order-4
    // block and the second look takes it. With compaction off this fails
    // without the change (the slow path without compaction follows
    // `__alloc_pages_direct_reclaim` too: it drained nothing before); the
    // compaction-on half passes without it too (the old path already
    // drained after reclaim): it is a guard that the drain stays.
    for compaction in [true, false] {
        let mut s = cut_up(compaction, 64);
        let (order, stalls, stolen, left) = thp_fault(&mut s);
        assert_eq!((order, stalls, stolen, left), (4, 1, 44, 0), "{compaction}");
    }
}

#[test]
fn without_compaction_the_min_mark_is_tried_before_reclaim() {
    // `__alloc_pages_slowpath`: after waking kswapd, `get_page_from_freelist`
    // at the min mark comes before direct reclaim. A free order-4 block
    // with free pages between the min and low marks: the fault takes it
    // with no reclaim stall (mmsim reclaimed first before).
    let mut s = thp_machine_with(8192, None, thp_64k(ThpDefrag::Madvise), |c| {
        c.compaction.enabled = false;
    });
    s.phys.drain_pages();
    let target = s.node.wmark_min + 20;
    while s.node.free > target {
        s.phys.zone.alloc_pages(0, MigrateType::Movable).unwrap();
        s.node.free -= 1;
    }
    assert!(s.node.free - 15 <= s.node.wmark_low);
    let (order, stalls, stolen, _) = thp_fault(&mut s);
    assert_eq!((order, stalls, stolen), (4, 0, 0));
}

#[test]
fn a_reclaim_aborted_for_compaction_counts_as_progress() {
    // With `compaction_ready` the costly order's reclaim skips the node
    // (compaction could run: free pages far above high + compact_gap(4),
    // fragmentation index above 500) and reclaims nothing, but v6.12
    // `do_try_to_free_pages` returns 1 ("Aborted reclaim to try
    // compaction? don't OOM, then"): the slow path looks, drains and takes
    // the block of the discarded pages.
    let mut s = cut_up(true, 0);
    s.compact.cfg.compaction_ready = true;
    assert!(s.compaction_ready(4));
    let (order, stalls, stolen, left) = thp_fault(&mut s);
    assert_eq!((order, stalls, stolen, left), (4, 1, 0, 0));
}

#[test]
fn mglru_root_reclaim_aims_for_compact_gap_of_its_order() {
    // v6.12 `should_abort_scan`: root reclaim stops at
    // `max(nr_to_reclaim, compact_gap(sc->order))`: 32 at order 0 to 4,
    // 1,024 at order 9; memcg reclaim never stops here.
    let s = thp_machine_with(32768, None, Default::default(), |c| {
        c.policy.name = PolicyName::Mglru;
        c.policy.mglru_version = crate::config::MglruVersion::V6_12;
    });
    let stops = |who, order, reclaimed| {
        let mut sc = ScanControl::new(who, SWAP_CLUSTER_MAX, 0);
        sc.order = order;
        sc.nr_reclaimed = reclaimed;
        s.should_abort_scan(&sc)
    };
    let direct = Reclaimer::Direct;
    assert_eq!([stops(direct, 0, 31), stops(direct, 0, 32)], [false, true]);
    assert_eq!([stops(direct, 4, 31), stops(direct, 4, 32)], [false, true]);
    assert_eq!(
        [stops(direct, 9, 1023), stops(direct, 9, 1024)],
        [false, true]
    );
    assert!(!stops(Reclaimer::Memcg, 0, 1 << 20));
}

#[test]
fn mglru_direct_reclaim_for_a_thp_reclaims_compact_gap() {
    // 16384 clean file pages on a 32768-page MGLRU (v6.12) machine, no
    // swap; one `shrink_node` pass of direct reclaim at priority 4 (below
    // DEF_PRIORITY: `set_initial_priority` leaves it, and the scan budget
    // is 16384 >> 4 = 1,024 pages). For order 0 `should_abort_scan`
    // stops it after the first eviction batch past 32 pages (64); for
    // order 9 it goes on to compact_gap(9) = 1,024 pages.
    let mut got = Vec::new();
    for order in [0, 9] {
        let mut s = mglru_file_machine();
        let mut sc = ScanControl::new(Reclaimer::Direct, SWAP_CLUSTER_MAX, s.clock);
        sc.priority = 4;
        sc.order = order;
        s.shrink_node(&mut sc);
        got.push(sc.nr_reclaimed);
    }
    assert_eq!(got, [64, 1024]);
}

/// A 32768-page MGLRU (v6.12) machine, no swap.
fn mglru_machine() -> Sim {
    thp_machine_with(32768, None, Default::default(), |c| {
        c.policy.name = PolicyName::Mglru;
        c.policy.mglru_version = crate::config::MglruVersion::V6_12;
    })
}

/// A 32768-page MGLRU (v6.12) machine, no swap, with 16384 clean file
/// pages read at random.
fn mglru_file_machine() -> Sim {
    let mut s = mglru_machine();
    let t = s.add_task("t");
    read_random(&mut s, t, 16384, 16384);
    s
}

#[test]
fn mglru_try_to_free_pages_for_a_thp_reclaims_compact_gap() {
    // The real path: `try_to_free_pages_order` sets `sc.order` (v6.12
    // `try_to_free_pages`'s `.order = order`). 24 groups of 1,024 clean
    // file pages on a 32768-page MGLRU (v6.12) machine, no swap. The first
    // pass (DEF_PRIORITY: `set_initial_priority` leaves it for
    // nr_to_reclaim 32 < MIN_LRU_BATCH) evicts one batch of 64 per group,
    // and `shrink_many` asks `should_abort_scan` after each group: order 0
    // stops after the first group (64 >= 32), order 9 after 16 groups
    // (compact_gap(9) = 1,024); `do_try_to_free_pages` then stops
    // (reclaimed >= nr_to_reclaim).
    let mut got = Vec::new();
    for order in [0, 9] {
        let mut s = mglru_machine();
        for g in 0..24 {
            let m = s.add_memcg(0, &format!("g{g}")).unwrap();
            let t = s.add_task("t");
            s.attach_task(t, m).unwrap();
            read_random(&mut s, t, 1024, 1024);
        }
        let progress = s.try_to_free_pages_order(order, crate::gfp::GFP_HIGHUSER_MOVABLE);
        got.push((progress, s.vm.pgsteal_direct));
    }
    assert_eq!(got, [(64, 64), (1024, 1024)]);
}

#[test]
fn mglru_kswapd_for_order_4_does_not_stop_at_the_high_mark() {
    // `kswapd_step` sets `sc.order` from `kswapd_reclaim_order` (v6.12
    // `balance_pgdat`'s `.order = order`). 16384 clean file pages on a
    // 32768-page MGLRU (v6.12) machine, free pages taken down to exactly
    // the high mark (not balanced at any order). At order 0
    // `should_abort_scan` stops once free > high + MIN_LRU_BATCH (two
    // batches: 128); at order 4 it never aborts on watermarks ("exclude
    // compaction-induced reclaim") and kswapd reclaims 256 in its first
    // step at DEF_PRIORITY.
    let mut got = Vec::new();
    for order in [0, 4] {
        let mut s = mglru_file_machine();
        let mut held = Vec::new();
        while s.node.free > s.node.wmark_high {
            held.push(s.phys.zone.alloc_pages(0, MigrateType::Movable).unwrap());
            s.node.free -= 1;
        }
        s.compact.kswapd_reclaim_order = order;
        // A run as `wakeup_kswapd` starts it: at DEF_PRIORITY.
        s.kswapd.running = true;
        s.kswapd.priority = crate::reclaim::DEF_PRIORITY;
        s.kswapd_step();
        got.push((s.vm.pgsteal_kswapd, s.node.free - s.node.wmark_high));
    }
    assert_eq!(got, [(128, 128), (256, 256)]);
}
