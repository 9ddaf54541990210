//! kswapd's nap (`compaction.kswapd_nap`: mm/vmscan.c v6.12 `kswapd()`,
//! `kswapd_try_to_sleep`, `prepare_kswapd_sleep`): the HZ/10 nap, what ends
//! it (its timer or a wakeup) and the counters it keeps, the order the next
//! run reads from `kswapd_order`, and a hopeless node's flags.

use super::compaction::thp_64k;
use super::fault_anon;
use super::thp::thp_machine_with;
use crate::config::MachineConfig;
use crate::event::Event;
use crate::huge_memory::{ThpDefrag, VmaThpAdvice};
use crate::page_alloc::MigrateType;
use crate::sim::Sim;

/// An 8192-page machine with swap, compaction and skip hints on and
/// `kswapd_nap` as given (`tweak` applied to the configuration last):
/// anonymous order-0 pages faulted until kswapd woke. Returns the machine
/// and its VMA.
pub(super) fn kswapd_woken(nap: bool, tweak: impl FnOnce(&mut MachineConfig)) -> (Sim, u32) {
    let mut s = thp_machine_with(8192, Some(4096), thp_64k(ThpDefrag::Never), |c| {
        c.compaction.enabled = true;
        c.compaction.kcompactd = false;
        c.compaction.proactiveness = 0;
        c.compaction.skip_hints = true;
        c.compaction.kswapd_nap = nap;
        tweak(c);
    });
    let t = s.add_task("anon");
    let vma = s.mmap_anon(t, 8192).unwrap();
    s.madvise_thp(vma, VmaThpAdvice::Nohugepage).unwrap();
    let mut i = 0;
    while s.vm.pageoutrun == 0 {
        fault_anon(&mut s, vma, i);
        i += 1;
    }
    (s, vma)
}

/// [`kswapd_woken`], then 20 ms for kswapd to reclaim to the high
/// watermark and go to sleep: kswapd's first run.
fn after_kswapd_run(nap: bool) -> (Sim, u32) {
    let (mut s, vma) = kswapd_woken(nap, |_| {});
    think(&mut s, 20_000_000);
    assert!(!s.kswapd.running);
    assert!(s.node.free > s.node.wmark_high);
    // With the nap, one run ended at priority 0 short of the high
    // watermark: kswapd_try_to_sleep found the node unbalanced, counted
    // kswapd_high_wmark_hit_quickly and ran again.
    assert_eq!(s.vm.kswapd_high_wmark_hit_quickly, u64::from(nap));
    (s, vma)
}

#[test]
fn kswapd_naps_then_runs_again_and_resets_the_hints_when_the_node_is_unbalanced() {
    for nap in [false, true] {
        let (mut s, _) = after_kswapd_run(nap);
        // Memory the kernel takes (frames of no folio) brings the free
        // pages between the low and the high watermark: no allocation
        // reaches the low watermark, so nobody wakes kswapd. A direct
        // compaction whose scanners met has asked for a reset.
        let take = s.node.free - s.node.wmark_high + 10;
        for _ in 0..take {
            s.phys.zone.alloc_pages(0, MigrateType::Movable).unwrap();
        }
        s.node.free -= take;
        assert!(s.node.free > s.node.wmark_low);
        s.compact.blockskip_flush = true;
        let runs = s.vm.pageoutrun;
        s.step(&Event::Think { ns: 150_000_000 });
        s.step(&Event::Think { ns: 1 });
        if nap {
            // kswapd_try_to_sleep (v6.12): after the HZ/10 nap the node is
            // not balanced: kswapd_high_wmark_hit_quickly, another
            // balance_pgdat run without a wakeup, and when it goes to sleep
            // balanced the reset the compaction asked for.
            assert_eq!(s.vm.kswapd_high_wmark_hit_quickly, 2);
            assert_eq!(s.vm.pageoutrun, runs + 1);
            assert!(s.node.free > s.node.wmark_high);
            assert!(!s.compact.blockskip_flush);
        } else {
            // Before: kswapd sleeps until an allocation wakes it; the
            // marks stay until then.
            assert_eq!(s.vm.kswapd_high_wmark_hit_quickly, 0);
            assert_eq!(s.vm.pageoutrun, runs);
            assert!(s.compact.blockskip_flush);
        }
    }
}

#[test]
fn kswapd_wakes_during_its_nap_and_after_it_sleeps_for_good() {
    // A balanced node after the nap: kswapd sleeps until woken, and a
    // wakeup then counts neither (a wakeup within the nap:
    // kswapd_woken_in_its_nap_counts_low_wmark_hit_quickly_and_runs_at_once).
    for nap in [false, true] {
        let (mut s, vma) = after_kswapd_run(nap);
        let (runs, quick) = (s.vm.pageoutrun, s.vm.kswapd_low_wmark_hit_quickly);
        s.step(&Event::Think { ns: 150_000_000 });
        s.step(&Event::Think { ns: 1 });
        assert_eq!(s.vm.pageoutrun, runs, "balanced after the nap: asleep");
        assert_eq!(s.vm.kswapd_high_wmark_hit_quickly, u64::from(nap));
        let mut i = 4096;
        while s.vm.pageoutrun == runs {
            fault_anon(&mut s, vma, i);
            i += 1;
        }
        assert_eq!(s.vm.kswapd_low_wmark_hit_quickly, quick);
    }
}

/// kswapd's HZ/10 nap.
const NAP_NS: u64 = 100_000_000;

/// Two events, so that the timers due at the end of the first have fired
/// (timers fire when an event starts).
pub(super) fn think(s: &mut Sim, ns: u64) {
    s.step(&Event::Think { ns });
    s.step(&Event::Think { ns: 1 });
}

#[test]
fn kswapd_woken_in_its_nap_counts_low_wmark_hit_quickly_and_runs_at_once() {
    for nap in [false, true] {
        let (mut s, vma) = after_kswapd_run(nap);
        // kswapd went to sleep (or to its nap) at 10.41 ms.
        let slept = s.kswapd.slept_at;
        assert_eq!(slept, 10_409_856);
        assert_eq!(s.kswapd.nap_until, if nap { slept + NAP_NS } else { 0 });
        let runs = s.vm.pageoutrun;
        assert_eq!(s.vm.kswapd_low_wmark_hit_quickly, 0);
        // Allocations bring the free pages to the low watermark within the
        // nap: wakeup_kswapd wakes it.
        let mut i = 4096;
        while s.vm.pageoutrun == runs {
            fault_anon(&mut s, vma, i);
            i += 1;
        }
        let woke = s.clock;
        assert_eq!(woke, 28_207_551);
        assert!(woke < slept + NAP_NS);
        // kswapd_try_to_sleep: woken with time remaining, it counts
        // kswapd_low_wmark_hit_quickly (not high) and runs at once, at the
        // wakeup, not at the nap's end; the nap is over.
        assert_eq!(s.vm.kswapd_low_wmark_hit_quickly, 1);
        assert_eq!(s.vm.kswapd_high_wmark_hit_quickly, u64::from(nap));
        assert!(s.kswapd.running);
        assert_eq!(s.kswapd.run_start, woke);
        assert_eq!(s.kswapd.nap_until, 0);
        // The run ends balanced at 28.75 ms and kswapd naps again (with
        // the option); after that nap the node is still balanced: asleep
        // until woken, no counter moved.
        think(&mut s, 1_000_000);
        assert!(!s.kswapd.running);
        assert_eq!(s.kswapd.slept_at, 28_753_237);
        assert_eq!(
            s.kswapd.nap_until,
            if nap { 28_753_237 + NAP_NS } else { 0 }
        );
        think(&mut s, 150_000_000);
        assert_eq!(s.kswapd.nap_until, 0);
        assert_eq!(s.vm.pageoutrun, runs + 1);
        assert_eq!(s.vm.kswapd_low_wmark_hit_quickly, 1);
        assert_eq!(s.vm.kswapd_high_wmark_hit_quickly, u64::from(nap));
    }
}

#[test]
fn kswapd_reads_kswapd_order_for_the_run_after_an_unbalanced_end() {
    let (mut s, _) = kswapd_woken(true, |c| c.compaction.kswapd_high_order = true);
    assert_eq!(s.vm.pageoutrun, 1);
    assert_eq!(s.kswapd.alloc_order, 0);
    // An order-4 allocation while kswapd runs: wakeup_kswapd raises
    // kswapd_order only.
    assert_eq!(s.compact.kswapd_order, 0);
    s.wakeup_kswapd_at(4);
    assert_eq!(s.compact.kswapd_order, 4);
    assert_eq!(s.vm.pageoutrun, 1);
    assert_eq!(s.compact.kswapd_reclaim_order, 0);
    // The order-0 run ends at priority 0 short of the high watermark:
    // kswapd_high_wmark_hit_quickly, and kswapd() reads kswapd_order for
    // the next balance_pgdat (v6.12), which reclaims for order 4.
    while s.vm.kswapd_high_wmark_hit_quickly == 0 {
        s.step(&Event::Think { ns: 10_000 });
    }
    assert_eq!(s.vm.pageoutrun, 2);
    assert_eq!(s.kswapd.alloc_order, 4);
    assert_eq!(s.compact.kswapd_reclaim_order, 4);
    assert_eq!(s.compact.kswapd_order, 0);
    // compact_gap(4) = 32 pages reclaimed: the rest of the run is for
    // order 0 and it ends balanced there, below its order: it naps at
    // order 0 (kcompactd is woken for order 4).
    think(&mut s, 3_000_000);
    assert!(!s.kswapd.running);
    assert!(s.kswapd.reclaimed >= 32);
    assert_eq!(s.kswapd.nap_until, s.kswapd.slept_at + NAP_NS);
    assert_eq!(s.kswapd.nap_order, 0);
    assert_eq!(s.kswapd.alloc_order, 4);
    assert_eq!(s.vm.kswapd_high_wmark_hit_quickly, 1);
}

#[test]
fn a_hopeless_kswapd_naps_and_sleeps_keeping_pgdat_dirty() {
    // No swap: kswapd's run cannot reclaim the anonymous pages, and it is
    // its 16th fruitless run.
    let mut s = thp_machine_with(8192, None, thp_64k(ThpDefrag::Never), |c| {
        c.compaction.enabled = true;
        c.compaction.kcompactd = false;
        c.compaction.proactiveness = 0;
        c.compaction.kswapd_nap = true;
    });
    let t = s.add_task("anon");
    let vma = s.mmap_anon(t, 8192).unwrap();
    s.madvise_thp(vma, VmaThpAdvice::Nohugepage).unwrap();
    s.kswapd.failures = crate::fault::MAX_RECLAIM_RETRIES - 1;
    s.node.dirty = true;
    let mut i = 0;
    while s.vm.pageoutrun == 0 {
        fault_anon(&mut s, vma, i);
        i += 1;
    }
    think(&mut s, 20_000_000);
    // prepare_kswapd_sleep (v6.12): a hopeless node may sleep, unbalanced,
    // and returns before clear_pgdat_congested: PGDAT_DIRTY stays.
    assert!(!s.kswapd.running);
    assert_eq!(s.kswapd.failures, crate::fault::MAX_RECLAIM_RETRIES);
    assert!(s.node.free <= s.node.wmark_high);
    assert!(s.node.dirty);
    assert_eq!(s.kswapd.nap_until, s.kswapd.slept_at + NAP_NS);
    assert_eq!(s.vm.kswapd_high_wmark_hit_quickly, 0);
    // After the nap, still hopeless: asleep for good, the flag kept.
    think(&mut s, NAP_NS);
    assert_eq!(s.kswapd.nap_until, 0);
    assert_eq!(s.vm.pageoutrun, 1);
    assert_eq!(s.vm.kswapd_high_wmark_hit_quickly, 0);
    assert!(s.node.dirty);
}

#[test]
fn wakeup_kswapd_judges_the_node_at_the_wakers_order_not_kswapd_order() {
    // v6.12 wakeup_kswapd: pgdat_balanced(pgdat, order, …) at this
    // allocation's order; kswapd_order (a higher order an earlier wakeup
    // left for kswapd to read) is raised first but not judged.
    let (mut s, vma) = kswapd_woken(true, |c| c.compaction.kswapd_high_order = true);
    // kswapd's run, its nap, then asleep.
    think(&mut s, 20_000_000);
    think(&mut s, 150_000_000);
    assert!(!s.kswapd.running);
    assert_eq!(s.kswapd.nap_until, 0);
    // The last 64 pages faulted are dropped (MADV_DONTNEED) and the per-CPU
    // lists drained into the buddy lists: 336 free pages, no order-9 block.
    let top = s.vm.pgfault as u32;
    s.madvise_dontneed(vma, top - 64, 64);
    s.phys.drain_pages();
    let high = s.node.wmark_high;
    assert_eq!(
        (s.node.free, s.phys.zone.free_pages(), high),
        (336, 336, 271)
    );
    assert_eq!(s.phys.zone.buddyinfo()[9..], [0, 0]);
    assert!(s.phys.zone.watermark_ok(4, high));
    assert!(!s.phys.zone.watermark_ok(9, high));
    let runs = s.vm.pageoutrun;
    // A hopeless kswapd: an order-9 wakeup only raises kswapd_order.
    s.kswapd.failures = crate::fault::MAX_RECLAIM_RETRIES;
    s.wakeup_kswapd_at(9);
    assert_eq!(s.compact.kswapd_order, 9);
    assert_eq!(s.vm.pageoutrun, runs);
    // Reclaim made progress since (shrink_node clears kswapd_failures).
    s.kswapd.failures = 0;
    // An order-4 wakeup: the node is balanced at order 4, so kswapd stays
    // asleep, though not at the order-9 kswapd_order.
    s.wakeup_kswapd_at(4);
    assert!(!s.kswapd.running);
    assert_eq!(s.vm.pageoutrun, runs);
    assert_eq!(s.compact.kswapd_order, 9);
    // An order-9 wakeup finds it unbalanced: kswapd runs for order 9.
    s.wakeup_kswapd_at(9);
    assert!(s.kswapd.running);
    assert_eq!(s.vm.pageoutrun, runs + 1);
    assert_eq!((s.kswapd.alloc_order, s.compact.kswapd_order), (9, 0));
    assert_eq!(s.compact.kswapd_reclaim_order, 9);
}
