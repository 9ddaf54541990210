//! Memory compaction (`crate::compaction`, mm/compaction.c v6.12): a zone
//! fragmented by order-0 folios, direct compaction on a 64K mTHP fault,
//! suitability, deferral and kcompactd.

use super::fault_anon;
use super::thp::thp_machine_with;
use crate::event::Event;
use crate::huge_memory::{ThpConfig, ThpDefrag, ThpSizeConfig, ThpSizeEnabled, VmaThpAdvice};
use crate::page_alloc::MigrateType;
use crate::sim::Sim;

/// 64K folios `always`, the top-level `defrag` as given.
pub(super) fn thp_64k(defrag: ThpDefrag) -> ThpConfig {
    ThpConfig {
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        defrag,
        ..Default::default()
    }
}

/// [`machine`] with direct compaction only (kcompactd off) under defrag
/// `always` (__GFP_NORETRY: async runs only), and `tweak` applied to its
/// compaction settings (capture, skip hints).
fn compaction_machine(tweak: impl FnOnce(&mut crate::compaction::CompactionConfig)) -> Sim {
    thp_machine_with(8192, None, thp_64k(ThpDefrag::Always), |c| {
        c.compaction.enabled = true;
        c.compaction.kcompactd = false;
        c.compaction.proactiveness = 0;
        tweak(&mut c.compaction);
    })
}

/// An 8192-page machine (16 pageblocks) with compaction on or off.
fn machine(compaction: bool, kcompactd: bool, defrag: ThpDefrag) -> Sim {
    thp_machine_with(8192, None, thp_64k(defrag), |c| {
        c.compaction.enabled = compaction;
        c.compaction.kcompactd = kcompactd;
        c.compaction.proactiveness = 0;
    })
}

/// Fragments the zone: a MADV_NOHUGEPAGE VMA faults `pages` order-0 pages
/// (PFNs from the zone start, in order), the rest of the zone is taken
/// (frames of no folio: memory the kernel holds), then every page but the
/// last of each 16 is discarded and the per-CPU list drained, so that no
/// free block reaches order 4. Returns the VMA and the frames taken.
fn fragment(s: &mut Sim, pages: u32) -> (u32, Vec<u64>) {
    let t = s.add_task("frag");
    let vma = s.mmap_anon(t, u64::from(pages)).unwrap();
    s.madvise_thp(vma, VmaThpAdvice::Nohugepage).unwrap();
    for i in 0..pages {
        fault_anon(s, vma, i);
    }
    s.phys.drain_pages();
    let mut held = Vec::new();
    while let Some(p) = s.phys.zone.alloc_pages(0, MigrateType::Movable) {
        held.push(p);
    }
    s.node.free -= held.len() as u64;
    for i in (0..pages).step_by(16) {
        s.step(&Event::Discard {
            vma,
            index: i,
            pages: 15,
        });
    }
    s.phys.drain_pages();
    (vma, held)
}

/// A new task's 64K fault at page 0 of a 16-page VMA that one direct
/// compaction run makes succeed (one stall, one success): the folio is
/// order 4. Returns the VMA.
fn order_4_fault_compacted(s: &mut Sim) -> u32 {
    let t = s.add_task("thp");
    let vma = s.mmap_anon(t, 16).unwrap();
    let f = fault_anon(s, vma, 0);
    assert_eq!(s.folios[f].order(), 4);
    let v = &s.vm;
    assert_eq!(
        (v.compact_stall, v.compact_success, v.compact_fail),
        (1, 1, 0)
    );
    vma
}

/// The PFN (zone-relative) of page `index` of `vma`.
fn pfn_of(s: &Sim, vma: u32, index: u32) -> u64 {
    let f = s.vmas[vma as usize].pte(index) & crate::mem::pagetable::PTE_FOLIO_MASK;
    u64::from(s.folios.head_pfn(f)) - s.phys.zone.start_pfn
}

/// Gives the frames [`fragment`] took back, so that the machine's
/// invariants (free + used = managed) hold again.
fn release(s: &mut Sim, held: &[u64]) {
    for &p in held {
        s.phys.zone.free_pages_block(p, 0);
    }
    s.node.free += held.len() as u64;
}

/// Walks the zone frame by frame: every frame is in exactly one free block,
/// one folio's frames (as `mem_map` says), or on the per-CPU list or `held`
/// by the test; the free blocks add up to the zone's free pages and the
/// folios to their pages.
fn check_zone_covered(s: &Sim, held: usize) {
    let zone = &s.phys.zone;
    let (start, end) = s.phys.pfn_range();
    let (mut free, mut framed, mut other, mut pfn) = (0, 0, 0, start);
    while pfn < end {
        if let Some(o) = zone.buddy_order_at(pfn) {
            free += 1u64 << o;
            pfn += 1 << o;
            continue;
        }
        let f = zone.frame_folio(pfn);
        if f == crate::mem::folio::NIL {
            other += 1;
            pfn += 1;
            continue;
        }
        assert_eq!(
            u64::from(s.folios.head_pfn(f)),
            pfn,
            "pfn {pfn:#x} is a folio's head"
        );
        let n = s.folio_nr_pages(f);
        for k in 1..n {
            assert_eq!(zone.frame_folio(pfn + k), f);
        }
        framed += n;
        pfn += n;
    }
    assert_eq!(free, zone.free_pages());
    assert_eq!(framed, s.framed_pages());
    assert_eq!(other, s.phys.pcp.count() + held as u64);
}

#[test]
fn an_order_4_fault_fails_without_compaction_and_succeeds_with_it() {
    for compaction in [false, true] {
        let mut s = machine(compaction, false, ThpDefrag::Always);
        let (frag, held) = fragment(&mut s, 4096);
        // Pages 15, 31, ... keep their frames; 256 free blocks of each order 0..3.
        assert_eq!(s.phys.zone.buddyinfo()[..5], [256, 256, 256, 256, 0]);
        assert_eq!((pfn_of(&s, frag, 15), pfn_of(&s, frag, 4095)), (15, 4095));
        let t = s.add_task("thp");
        let vma = s.mmap_anon(t, 16).unwrap();
        let f = fault_anon(&mut s, vma, 0);
        let st = s.thp.stats[4];
        let v = &s.vm;
        if !compaction {
            assert_eq!(s.folios[f].order(), 0);
            assert_eq!((st.anon_fault_alloc, st.anon_fault_fallback), (0, 1));
            assert_eq!(
                (
                    v.compact_stall,
                    v.compact_migrate_scanned,
                    v.pgmigrate_success
                ),
                (0, 0, 0)
            );
            continue;
        }
        assert_eq!(s.folios[f].order(), 4);
        assert_eq!((st.anon_fault_alloc, st.anon_fault_fallback), (1, 0));
        // defrag=always outside MADV_HUGEPAGE: __GFP_NORETRY, one async run.
        assert_eq!(
            (v.compact_stall, v.compact_success, v.compact_fail),
            (1, 1, 0)
        );
        // The migrate scanner covered pageblock 0 (its 32 folios, one per
        // order-4 chunk, and the free blocks between them), then found an
        // order-4 block at the pageblock boundary.
        assert_eq!(v.compact_migrate_scanned, 512);
        assert_eq!(v.pgmigrate_success, 32);
        assert_eq!(v.pgmigrate_fail, 0);
        // 32 folios + 38 free pages (15 in pageblock 7, 15 in 6, 8 in 5).
        assert_eq!(v.compact_isolated, 70);
        assert_eq!(v.compact_free_scanned, 198);
        // The folios of pageblock 0 moved to the free blocks the free
        // scanner met first, from the top: each chunk's 15 free pages in
        // order, pageblock 7 then 6 then 5; the others stayed.
        let moved: Vec<u64> = (0..34).map(|k| pfn_of(&s, frag, 16 * k + 15)).collect();
        let mut want: Vec<u64> = (3584..3599).chain(3072..3087).chain([2560, 2561]).collect();
        want.extend([527, 543]);
        assert_eq!(moved, want);
        // The 64K folio took the first free order-4 block: pageblock 0's start.
        assert_eq!(pfn_of(&s, vma, 0), 0);
        s.check_page_alloc().unwrap();
        check_zone_covered(&s, held.len());
    }
}

#[test]
fn after_compaction_the_free_lists_and_folios_cover_the_zone() {
    let mut s = machine(true, false, ThpDefrag::Always);
    let (_, held) = fragment(&mut s, 4096);
    let t = s.add_task("thp");
    let vma = s.mmap_anon(t, 64).unwrap();
    for i in (0..64).step_by(16) {
        fault_anon(&mut s, vma, i);
    }
    assert_eq!(s.thp.stats[4].anon_fault_alloc, 4);
    check_zone_covered(&s, held.len());
    release(&mut s, &held);
    s.check_invariants().unwrap();
    check_zone_covered(&s, 0);
}

#[test]
fn unmovable_pages_in_every_pageblock_make_compaction_fail_and_defer() {
    let mut s = machine(true, false, ThpDefrag::Madvise);
    // Every frame taken as an UNMOVABLE kernel allocation, then 15 of each
    // 16 given back: each order-4 chunk keeps one page that cannot move.
    let mut held = Vec::new();
    while let Some(p) = s.phys.zone.alloc_pages(0, MigrateType::Unmovable) {
        held.push(p);
    }
    s.node.free -= held.len() as u64;
    for &p in &held {
        if p % 16 != 15 {
            s.phys.zone.free_pages_block(p, 0);
            s.node.free += 1;
        }
    }
    let t = s.add_task("thp");
    let vma = s.mmap_anon(t, 32).unwrap();
    s.madvise_thp(vma, VmaThpAdvice::Hugepage).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 0);
    let v = &s.vm;
    // MADV_HUGEPAGE with defrag=madvise: no __GFP_NORETRY. The async run
    // skips the UNMOVABLE pageblocks and ends when the scanners meet
    // (no deferral for async); after reclaim the sync-light run scans every
    // page, isolates none, and defers.
    assert_eq!(
        (v.compact_stall, v.compact_fail, v.compact_success),
        (2, 2, 0)
    );
    assert_eq!(v.compact_isolated, 0);
    assert_eq!(v.compact_migrate_scanned, 7680);
    assert_eq!((s.compact.defer_shift, s.compact.order_failed), (1, 0));
    // The next fault: the first attempt is deferred (considered 1 < 2),
    // still a stall and a failure; the second runs and defers again.
    fault_anon(&mut s, vma, 16);
    let v = &s.vm;
    assert_eq!((v.compact_stall, v.compact_fail), (4, 4));
    // That run isolated the first fault's folio in pageblock 0; the free
    // scanner found no movable pageblock to migrate it to and met it.
    assert_eq!(
        (v.compact_migrate_scanned, v.pgmigrate_fail),
        (7680 + 512, 1)
    );
    assert_eq!((s.compact.defer_shift, s.compact.considered), (2, 0));
}

#[test]
fn deferral_backs_off_up_to_64_attempts_and_resets_on_success() {
    let mut c = crate::compaction::Compaction::new(&Default::default());
    // Nothing failed yet: order 4 >= compact_order_failed 0, limit 1 << 0.
    assert!(!c.compaction_deferred(4));
    c.defer_compaction(4);
    // compact_order_failed starts at 0 (a zeroed zone) and only a success
    // raises it, so every order is deferred.
    assert_eq!((c.defer_shift, c.order_failed, c.considered), (1, 0, 0));
    // Shift 1: one attempt skipped, the second runs.
    assert_eq!(
        (c.compaction_deferred(4), c.compaction_deferred(4)),
        (true, false)
    );
    for _ in 0..10 {
        c.defer_compaction(4);
    }
    assert_eq!(c.defer_shift, crate::compaction::COMPACT_MAX_DEFER_SHIFT);
    let skipped = (0..64).take_while(|_| c.compaction_deferred(4)).count();
    assert_eq!(skipped, 63);
    // A compaction success without the allocation moves compact_order_failed
    // only; an allocation success resets the back-off.
    c.defer_compaction(4);
    c.compaction_defer_reset(4, false);
    assert_eq!((c.defer_shift, c.order_failed), (6, 5));
    // Orders below compact_order_failed are not deferred; 5 is.
    assert!(!c.compaction_deferred(4));
    assert!(c.compaction_deferred(5));
    c.compaction_defer_reset(4, true);
    assert_eq!((c.defer_shift, c.considered, c.order_failed), (0, 0, 5));
    assert!(!c.compaction_deferred(5));
}

#[test]
fn compaction_suitable_needs_the_watermark_gap_and_a_fragmentation_index() {
    use crate::compaction::fragmentation_index;
    let mut s = machine(true, false, ThpDefrag::Always);
    let (_, _) = fragment(&mut s, 4096);
    // 3840 free pages in 1024 blocks below order 4:
    // 1000 - (1000 + 3840 * 1000 / 16) / 1024 = 765.
    assert_eq!(fragmentation_index(&s.phys.zone.buddyinfo(), 4), 765);
    assert!(s.compaction_suitable(4));
    s.compact.cfg.extfrag_threshold = 765;
    assert!(
        !s.compaction_suitable(4),
        "index at the threshold: low memory, not fragmentation"
    );
    s.compact.cfg.extfrag_threshold = 500;
    // Take free pages (smallest blocks first) down to low + compact_gap(4):
    // the order-0 watermark check is strict.
    let gap = s.node.wmark_low + (2 << 4);
    while s.phys.zone.free_pages() > gap {
        s.phys.zone.alloc_pages(0, MigrateType::Movable).unwrap();
        s.node.free -= 1;
    }
    assert!(!s.compaction_suitable(4));
    // Order 3 is not costly: min watermark + 16, and no index.
    assert!(s.compaction_suitable(3));
    // The fault finds compaction skipped: no stall, the 64K size falls back.
    let t = s.add_task("thp");
    let vma = s.mmap_anon(t, 16).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 0);
    assert_eq!((s.vm.compact_stall, s.vm.compact_migrate_scanned), (0, 0));
    assert_eq!(s.thp.stats[4].anon_fault_fallback, 1);
}

#[test]
fn kswapd_going_to_sleep_wakes_kcompactd_for_the_order() {
    for nap in [false, true] {
        kswapd_sleep_wakes_kcompactd(nap);
    }
}

/// [`kswapd_going_to_sleep_wakes_kcompactd_for_the_order`] with
/// `compaction.kswapd_nap` as given: kcompactd is woken the same way both
/// ways (the nap's `kswapd_try_to_sleep` for the run's `alloc_order`).
fn kswapd_sleep_wakes_kcompactd(nap: bool) {
    let mut s = thp_machine_with(8192, None, thp_64k(ThpDefrag::Defer), |c| {
        c.compaction.enabled = true;
        c.compaction.kcompactd = true;
        c.compaction.proactiveness = 0;
        c.compaction.kswapd_nap = nap;
    });
    // 17 chunks of 15 free pages: 255, under kswapd's high watermark (271)
    // and above the low one (226).
    let (_, held) = fragment(&mut s, 272);
    assert_eq!(s.node.free, 255);
    let t = s.add_task("thp");
    let vma = s.mmap_anon(t, 32).unwrap();
    // defrag=defer: no direct reclaim or compaction; kswapd is woken for order 4.
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 0);
    assert!(s.kswapd.running);
    if nap {
        // kswapd() read kswapd_order for the run (v6.12) and cleared it.
        assert_eq!((s.compact.kswapd_order, s.kswapd.alloc_order), (0, 4));
    } else {
        assert_eq!(s.compact.kswapd_order, 4);
    }
    assert_eq!(s.vm.compact_daemon_wake, 0);
    // Someone frees 20 pages 16 apart at the top of the zone (no order-4
    // block): kswapd's next
    // step finds the node balanced and goes to sleep, waking kcompactd,
    // which runs in the same timer pass (it comes after kswapd).
    for &p in held.iter().rev().step_by(16).take(20) {
        s.phys.zone.free_pages_block(p, 0);
    }
    s.node.free += 20;
    s.step(&Event::Access {
        vma,
        index: 0,
        write: false,
    });
    assert!(!s.kswapd.running);
    assert_eq!(s.compact.kswapd_order, 0);
    let v = &s.vm;
    assert_eq!(v.compact_daemon_wake, 1);
    assert_eq!(s.compact.kcompactd_max_order, 0);
    // Sync-light: pageblock 0's 17 folios and the fault's page isolated
    // (no skipping on failure), moved to the 18 highest freed pages
    // (7887 ..= 8159, 480 pages from the last pageblock's start).
    assert_eq!(
        (
            v.compact_daemon_migrate_scanned,
            v.compact_daemon_free_scanned
        ),
        (512, 480)
    );
    assert_eq!((v.pgmigrate_success, v.compact_isolated), (18, 36));
    assert_eq!(v.compact_stall, 0, "kcompactd is not a stall");
    // Pages 0 .. 272 merged: an order-8 and an order-4 block.
    assert_eq!(s.phys.zone.buddyinfo(), [2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0]);
    // kcompactd made an order-4 block: the next fault gets its 64K folio.
    assert!(s.phys.zone.watermark_ok(4, s.node.wmark_min));
    let g = fault_anon(&mut s, vma, 16);
    assert_eq!(s.folios[g].order(), 4);
    s.check_page_alloc().unwrap();
}

#[test]
fn proactive_compaction_runs_every_500_ms_while_the_score_is_high() {
    let mut s = thp_machine_with(8192, None, thp_64k(ThpDefrag::Never), |c| {
        c.compaction.enabled = true;
    });
    let (_, _) = fragment(&mut s, 4096);
    // No free block of order 9: the zone's score is 100, the node's
    // 100 * 8192 / 8193 = 99, over the start mark 100 - 20 + 10.
    assert_eq!(s.fragmentation_score(), 99);
    s.step(&Event::Think { ns: 400_000_000 });
    assert_eq!(s.vm.compact_daemon_migrate_scanned, 0);
    s.step(&Event::Think { ns: 200_000_000 });
    assert_eq!(s.vm.compact_daemon_migrate_scanned, 0);
    // The check is due at 500 ms: it runs before the next event.
    s.step(&Event::Think { ns: 1 });
    let v = &s.vm;
    // A whole-zone sync-light run (cc->order = -1) until the scanners meet:
    // 172 folios moved, their old frames all on the per-CPU list (v6.12
    // free_unref_page; its high not reached), since compact_zone
    // drains only for cc->order > 0 (crate::compaction::drain). Nothing
    // merged, so the score stays 99. (With the old frames freed to the
    // buddy lists at once, the run ended at the low mark, 80, after two
    // pageblocks: 1024 scanned, 64 moved, score 72.)
    assert_eq!(
        (
            v.compact_daemon_migrate_scanned,
            v.compact_daemon_free_scanned
        ),
        (3072, 1237)
    );
    assert_eq!(v.pgmigrate_success, 172);
    assert_eq!(v.compact_daemon_wake, 0, "proactive runs are not wakes");
    assert_eq!((s.fragmentation_score(), s.phys.pcp.count()), (99, 172));
    // The run did not lower the score: kcompactd backs off, and the
    // check 500 ms later runs nothing.
    s.step(&Event::Think { ns: 500_000_000 });
    s.step(&Event::Think { ns: 1 });
    assert_eq!(s.vm.compact_daemon_migrate_scanned, 3072);
    s.check_page_alloc().unwrap();
}

/// kswapd woken for order 4 by a `defrag = defer` 64K fault on a node with
/// plenty of free pages but no free order-4 block: 256 chunks of 15 free
/// pages, each beside one order-0 anon page (swap on, so kswapd can
/// reclaim them). Returns the machine after the fault and 1 s more, and
/// what kswapd did right after the fault (running, its order).
fn high_order_wake(high_order: bool, nap: bool) -> (Sim, bool, u32) {
    let mut s = thp_machine_with(8192, Some(4096), thp_64k(ThpDefrag::Defer), |c| {
        c.compaction.enabled = true;
        c.compaction.proactiveness = 0;
        c.compaction.kswapd_high_order = high_order;
        c.compaction.kswapd_nap = nap;
    });
    let (_, held) = fragment(&mut s, 4096);
    assert_eq!(s.node.free, 3840);
    assert!(s.node.free > s.node.wmark_high);
    assert!(!s.phys.zone.watermark_ok(4, s.node.wmark_high));
    let t = s.add_task("thp");
    let vma = s.mmap_anon(t, 32).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(
        s.folios[f].order(),
        0,
        "no order-4 block, no direct compaction"
    );
    let woke = (s.kswapd.running, s.compact.kswapd_reclaim_order);
    for _ in 0..10 {
        s.step(&Event::Think { ns: 100_000_000 });
    }
    release(&mut s, &held);
    s.check_invariants().unwrap();
    (s, woke.0, woke.1)
}

#[test]
fn kswapd_reclaims_compact_gap_for_a_high_order_wakeup_with_kswapd_high_order() {
    // Without kswapd's nap (`kswapd_nap = false`): the runs after a
    // fruitless one stay at order 4 until compact_gap(4) is reclaimed,
    // which is what this test follows; with the nap kswapd gives the order
    // up after one run (kswapd_gives_a_high_order_up_after_a_fruitless_run).
    // Off (as before): balanced at order 0, kswapd stays asleep and
    // kcompactd is woken at once.
    let (s, running, order) = high_order_wake(false, false);
    assert_eq!((running, order), (false, 0));
    assert_eq!((s.vm.pageoutrun, s.vm.pgsteal_kswapd), (0, 0));
    assert_eq!(s.vm.compact_daemon_wake, 1);
    // On: pgdat_balanced(order 4) fails (no order-4 block), kswapd runs for
    // order 4, reclaims at least compact_gap(4) = 32 pages, then sleeps and
    // wakes kcompactd for the order.
    let (s, running, order) = high_order_wake(true, false);
    assert_eq!((running, order), (true, 4));
    // 7 runs (the first ones mostly deactivate the young pages), 32 pages
    // reclaimed in all: the last run reached compact_gap(4), dropped to
    // order 0, found the node balanced and slept, waking kcompactd, which
    // made the order-4 block.
    assert_eq!(
        (
            s.vm.pageoutrun,
            s.vm.pgsteal_kswapd,
            s.vm.pgscan_kswapd,
            s.vm.compact_daemon_wake
        ),
        (7, 32, 289, 1)
    );
    assert!(s.phys.zone.watermark_ok(4, s.node.wmark_high));
    assert!(s.vm.pgsteal_kswapd >= 32);
    assert_eq!(s.vm.compact_daemon_wake, 1);
    assert!(!s.kswapd.running);
    assert_eq!(s.compact.kswapd_reclaim_order, 0);
}

#[test]
fn kswapd_gives_a_high_order_up_after_a_fruitless_run() {
    // With kswapd's nap (the default; v6.12 kswapd()): the run for order
    // 4 reclaims nothing (it only deactivates the young pages) and
    // balance_pgdat returns order 4, not below alloc_order, so the loop's
    // top reads kswapd_order again: 0, cleared when this run read it.
    // Balanced at order 0, kswapd naps and then sleeps; kcompactd, woken
    // for order 0, is not woken at all.
    let (s, running, order) = high_order_wake(true, true);
    assert_eq!((running, order), (true, 4));
    assert_eq!(s.kswapd.alloc_order, 4);
    assert_eq!(
        (
            s.vm.pageoutrun,
            s.vm.pgsteal_kswapd,
            s.vm.pgscan_kswapd,
            s.vm.compact_daemon_wake
        ),
        (1, 0, 44, 0)
    );
    assert_eq!(s.vm.kswapd_high_wmark_hit_quickly, 0);
    assert_eq!(s.kswapd.failures, 1);
    assert!(!s.kswapd.running);
    assert_eq!(s.kswapd.nap_until, 0);
    assert_eq!(s.compact.kswapd_order, 0);
}

/// Every frame taken as a movable kernel page (no folio: it cannot move),
/// then 15 of each 16 given back: movable pageblocks whose every order-4
/// chunk keeps one frame async compaction gives up at. Returns the machine
/// (compaction on, `skip_hints` as given, defrag `always`: __GFP_NORETRY,
/// async runs only) and the frames held.
fn pinned_chunks(skip_hints: bool) -> (Sim, Vec<u64>) {
    let mut s = compaction_machine(|c| c.skip_hints = skip_hints);
    let mut held = Vec::new();
    while let Some(p) = s.phys.zone.alloc_pages(0, MigrateType::Movable) {
        held.push(p);
    }
    s.node.free -= held.len() as u64;
    held.retain(|&p| {
        let keep = p % 16 == 15;
        if !keep {
            s.phys.zone.free_pages_block(p, 0);
            s.node.free += 1;
        }
        keep
    });
    (s, held)
}

#[test]
fn skip_hints_make_the_next_compaction_pass_over_scanned_pageblocks() {
    // Without the hints each 64K fault runs two async compactions (before
    // and after direct reclaim), and each scans pageblocks 0..14 (the free
    // scanner starts in 15): 7680 pages, nothing isolated, the fault falls back.
    let (mut s, _) = pinned_chunks(false);
    let t = s.add_task("thp");
    let vma = s.mmap_anon(t, 32).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 0);
    assert_eq!((s.vm.compact_stall, s.vm.compact_fail), (2, 2));
    assert_eq!(s.vm.compact_migrate_scanned, 2 * 7680);
    // With them the first run marks every pageblock it scanned to the end
    // without isolating (update_pageblock_skip) and, its scanners having
    // met, sets compact_blockskip_flush; the second run passes over every
    // marked block (isolation_suitable) and scans nothing.
    let (mut s, _) = pinned_chunks(true);
    let t = s.add_task("thp");
    let vma = s.mmap_anon(t, 32).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 0);
    assert_eq!((s.vm.compact_stall, s.vm.compact_fail), (2, 2));
    assert_eq!(s.vm.compact_migrate_scanned, 7680);
    assert!(s.compact.blockskip_flush);
    // Pageblocks 0..14 of the zone (the bits are by absolute PFN).
    let first = (s.phys.zone.start_pfn >> 9) as usize;
    let marked: Vec<usize> = (0..s.compact.skip.len() * 64)
        .filter(|&b| s.compact.skip[b / 64] >> (b % 64) & 1 == 1)
        .collect();
    assert_eq!(marked, (first..first + 15).collect::<Vec<_>>());
    // The next fault finds the zone still marked: two stalls, no scanning.
    fault_anon(&mut s, vma, 16);
    assert_eq!(
        (s.vm.compact_stall, s.vm.compact_migrate_scanned),
        (4, 7680)
    );
    // kswapd going to sleep resets the marks (reset_isolation_suitable →
    // __reset_isolation_suitable, v6.12): the zone has no LRU page, so the
    // migrate side (blocks 0..7) clears nothing and keeps its marks; the
    // free side (15..8) finds a free block at each block's first page and
    // clears 14..8. No migration source lies below the free block, so both
    // cached positions are left where the walk's cursors met (block 8's
    // first page and block 7's last).
    s.kswapd_sleep_compact();
    assert!(!s.compact.blockskip_flush);
    let z = s.phys.zone.start_pfn;
    let marked: Vec<usize> = (0..s.compact.skip.len() * 64)
        .filter(|&b| s.compact.skip[b / 64] >> (b % 64) & 1 == 1)
        .collect();
    assert_eq!(marked, (first..first + 8).collect::<Vec<_>>());
    assert_eq!(s.compact.cached_migrate_pfn, [z + 4096; 2]);
    assert_eq!(s.compact.cached_free_pfn, z + 4095);
    assert_eq!(
        (s.compact.init_migrate_pfn, s.compact.init_free_pfn),
        (0, z + 8191)
    );
    // The next fault: the first run's scanners meet at once (nothing
    // scanned; it resets the cached positions and sets the flag again),
    // the second passes over blocks 0..7 and scans 8..14.
    s.step(&Event::Think { ns: 1 });
    let vma2 = s.mmap_anon(t, 32).unwrap();
    fault_anon(&mut s, vma2, 0);
    assert_eq!(
        (s.vm.compact_stall, s.vm.compact_migrate_scanned),
        (6, 7680 + 7 * 512)
    );
    assert!(s.compact.blockskip_flush);
}

/// The marks set on every pageblock of a 16-block zone but blocks 7 and
/// 12, `compact_blockskip_flush` set: blocks 0..7 hold order-0 anonymous
/// pages (block 0 and 2 only at offset 5, free elsewhere), blocks 8..15
/// frames of no folio, with one free frame at offset 3 of block 14 and at
/// offset 8 of block 13.
fn sampled_zone() -> Sim {
    let mut s = compaction_machine(|c| c.skip_hints = true);
    let t = s.add_task("lru");
    let vma = s.mmap_anon(t, 4096).unwrap();
    s.madvise_thp(vma, VmaThpAdvice::Nohugepage).unwrap();
    for i in 0..4096 {
        fault_anon(&mut s, vma, i);
    }
    assert_eq!((pfn_of(&s, vma, 0), pfn_of(&s, vma, 4095)), (0, 4095));
    s.phys.drain_pages();
    let mut held = Vec::new();
    while let Some(p) = s.phys.zone.alloc_pages(0, MigrateType::Movable) {
        held.push(p);
    }
    s.node.free -= held.len() as u64;
    for base in [0, 1024] {
        for (index, pages) in [(base, 5), (base + 6, 506)] {
            s.step(&Event::Discard { vma, index, pages });
        }
    }
    s.phys.drain_pages();
    let z = s.phys.zone.start_pfn;
    for p in [z + 14 * 512 + 3, z + 13 * 512 + 8] {
        assert!(held.contains(&p));
        s.phys.zone.free_pages_block(p, 0);
        s.node.free += 1;
    }
    for b in (0..16).filter(|&b| b != 7 && b != 12) {
        s.compact.set_skip(z + b * 512);
    }
    s.compact.blockskip_flush = true;
    s
}

/// The pageblocks marked skip, zone-relative.
fn marked_blocks(s: &Sim) -> Vec<u64> {
    let first = s.phys.zone.start_pfn >> 9;
    (0..16)
        .filter(|&b| {
            let a = (first + b) as usize;
            s.compact.skip[a / 64] >> (a % 64) & 1 == 1
        })
        .collect()
}

#[test]
fn reset_clears_a_mark_only_where_a_sampled_page_is_on_the_lru_or_free() {
    // Without compact_blockskip_flush nothing is reset, at kswapd's sleep
    // or at compaction_restarting (the gate is in __reset_isolation_suitable).
    let mut s = sampled_zone();
    let z = s.phys.zone.start_pfn;
    s.compact.blockskip_flush = false;
    s.reset_isolation_suitable();
    assert_eq!(
        marked_blocks(&s),
        [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 13, 14, 15]
    );
    // With it (v6.12 __reset_isolation_suitable / __reset_isolation_pfn,
    // sampling the first page of a block and every eighth after it):
    // block 0 keeps its mark (its one LRU page, at offset 5, is not
    // sampled, and before the first source is found the migrate side looks
    // for LRU pages only); block 1 is the first source; block 2 is cleared
    // for the free page at its offset 0; 3..6 for their LRU pages; 7 counts
    // unlooked. The free side: 15 (no free page) and 14 (its free page, at
    // offset 3, is not sampled) keep their marks; 13 (a free page at offset
    // 8) is the first target; 12 counts unlooked; 11..8 hold neither.
    let mut s = sampled_zone();
    s.reset_isolation_suitable();
    assert!(!s.compact.blockskip_flush);
    assert_eq!(marked_blocks(&s), [0, 8, 9, 10, 11, 14, 15]);
    // The scanners restart at the first blocks found: the migrate scanner
    // at block 1, the free scanner at block 13's last page (the cursor).
    assert_eq!(s.compact.cached_migrate_pfn, [z + 512; 2]);
    assert_eq!(s.compact.init_migrate_pfn, z + 512);
    assert_eq!(s.compact.cached_free_pfn, z + 14 * 512 - 1);
    assert_eq!(s.compact.init_free_pfn, z + 14 * 512 - 1);
}

#[test]
fn compaction_restarting_resets_the_marks_as_kswapd_does() {
    // The first fault's runs mark pageblocks 0..14 and set the flag.
    let (mut s, _) = pinned_chunks(true);
    let t = s.add_task("thp");
    let vma = s.mmap_anon(t, 32).unwrap();
    fault_anon(&mut s, vma, 0);
    assert_eq!(s.vm.compact_migrate_scanned, 7680);
    assert!(s.compact.blockskip_flush);
    // The deferral at its limit: the next attempt is not deferred and
    // restarts (compaction_restarting), so compact_zone resets the marks
    // (__reset_isolation_suitable, v6.12) before scanning: blocks 0..7
    // (no LRU page) keep theirs, and the cached positions are left where
    // the walk's cursors met. The run's scanners meet at once and it scans
    // nothing; the met scanners set the flag again, so the fault's second
    // run resets once more, to the same effect.
    s.compact.order_failed = 4;
    s.compact.defer_shift = 6;
    s.compact.considered = 63;
    fault_anon(&mut s, vma, 16);
    assert_eq!(
        (
            s.vm.compact_stall,
            s.vm.compact_fail,
            s.vm.compact_migrate_scanned
        ),
        (4, 4, 7680)
    );
    assert!(s.compact.blockskip_flush);
    assert_eq!(marked_blocks(&s), [0, 1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn compaction_ready_skips_the_direct_reclaim_of_a_costly_allocation() {
    let (mut s, _) = pinned_chunks(false);
    s.compact.cfg.compaction_ready = true;
    // 7680 free pages, far above high + compact_gap(4), and no order-4
    // block: compaction is suitable and ready; order 3 is free already.
    assert!(s.compaction_suitable(4));
    assert!(s.compaction_ready(4));
    assert!(s.compaction_ready(3));
    // The fault: async compaction, the reclaim step skipped (the stall
    // still counted, nothing scanned), async compaction again.
    let t = s.add_task("thp");
    let vma = s.mmap_anon(t, 32).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 0);
    assert_eq!((s.vm.compact_stall, s.vm.allocstall_normal), (2, 1));
    assert_eq!(s.vm.pgscan_direct, 0);
    // Down to the high watermark + compact_gap(4): not ready (the check
    // is strict), so the reclaim would run.
    let mark = s.node.wmark_high + (2 << 4);
    while s.phys.free_pages() > mark {
        s.phys.zone.alloc_pages(0, MigrateType::Movable).unwrap();
        s.node.free -= 1;
    }
    assert!(!s.compaction_ready(4));
}

#[test]
fn capture_hands_the_block_a_migration_frees_to_the_fault() {
    // As an_order_4_fault_fails_without_compaction_and_succeeds_with_it,
    // with page capture (v6.12 compaction_capture).
    let mut s = compaction_machine(|c| c.capture = true);
    let (frag, held) = fragment(&mut s, 4096);
    let vma = order_4_fault_compacted(&mut s);
    let v = &s.vm;
    // Async compaction isolates pageblock 0's first chunk's folio (page
    // 15) and stops at the chunk's end (skip_on_failure); the free scanner
    // takes the order-3 block at 3584 (pageblocks 15..8 held: 16 pages
    // each at stride 32, then 8). Migrating page 15 frees frame 15 to the
    // per-CPU list (v6.12 free_unref_page); the migrate scanner has left
    // the order-4 block (16 > pageblock 0's start), so compact_zone drains
    // the list (lru_add_drain_cpu_zone), frame 15 merges with the free
    // 0..14 (orders 3, 2, 1, 0) into an order-4 block, and
    // compaction_capture takes it. The capture is tested after the next
    // migration: the second chunk's folio (page 31) moves too, to 3585,
    // and the run ends there (without capture it goes on to the
    // pageblock's end: 512 pages scanned, 32 folios moved; with the old
    // frames freed to the buddy lists at once, the capture came at the
    // first migration: 16 scanned, 1 moved).
    assert_eq!(
        (
            v.compact_migrate_scanned,
            v.compact_free_scanned,
            v.pgmigrate_success
        ),
        (32, 136, 2)
    );
    assert_eq!(
        (
            pfn_of(&s, vma, 0),
            pfn_of(&s, frag, 15),
            pfn_of(&s, frag, 31)
        ),
        (0, 3584, 3585)
    );
    // Frame 31 waits on the per-CPU list: no drain after the capture.
    assert_eq!(
        s.phys.pcp.list(MigrateType::Movable),
        [s.phys.zone.start_pfn + 31]
    );
    assert!(s.phys.zone.captured.is_none());
    // The rest of pageblock 0 is as fragmented as before.
    assert_eq!(pfn_of(&s, frag, 47), 47);
    assert_eq!(
        s.phys.zone.buddy_order_at(s.phys.zone.start_pfn + 32),
        Some(3)
    );
    s.check_page_alloc().unwrap();
    check_zone_covered(&s, held.len());
    release(&mut s, &held);
    s.check_invariants().unwrap();
}

#[test]
fn a_run_is_whole_zone_only_from_compact_init_migrate_pfn() {
    use crate::compaction::{CompactResult, MigrateMode};
    // v6.12 compact_zone(): a run is whole_zone when its migrate scanner
    // starts at or below compact_init_migrate_pfn, which is 0 until the
    // first reset of the skip marks. The zone starts above pfn 0, so the
    // first run, which scans pageblocks 0..14 and meets the free scanner,
    // ends COMPACT_PARTIAL_SKIPPED, not COMPACT_COMPLETE.
    let (mut s, _) = pinned_chunks(true);
    assert!(s.phys.zone.start_pfn > 0);
    assert_eq!(s.compact.init_migrate_pfn, 0);
    assert_eq!(
        s.alloc_pages_direct_compact(4, MigrateMode::Async),
        (None, CompactResult::PartialSkipped)
    );
    assert_eq!(s.vm.compact_migrate_scanned, 7680);
    assert!(s.compact.blockskip_flush);
    // Once a reset has set it to the zone start (the migrate side found an
    // LRU page in pageblock 0), a run from the zone start covers the whole
    // zone: its scanners meet at once (every block is marked) and it ends
    // COMPACT_COMPLETE.
    s.compact.init_migrate_pfn = s.phys.zone.start_pfn;
    assert_eq!(
        s.alloc_pages_direct_compact(4, MigrateMode::Async),
        (None, CompactResult::Complete)
    );
    assert_eq!(s.vm.compact_migrate_scanned, 7680);
}

#[test]
fn a_success_from_the_free_lists_clears_compact_blockskip_flush() {
    // As an_order_4_fault_fails_without_compaction_and_succeeds_with_it
    // (capture off), with skip hints, pageblock 3 marked and
    // compact_blockskip_flush set, as an earlier run whose scanners met
    // leaves them. The run never reaches block 3: it ends at block 0's end
    // with an order-4 block on the free lists, and the fault takes it
    // (no captured page).
    let mut s = compaction_machine(|c| c.skip_hints = true);
    let (_, held) = fragment(&mut s, 4096);
    let z = s.phys.zone.start_pfn;
    s.compact.set_skip(z + 3 * 512);
    s.compact.blockskip_flush = true;
    order_4_fault_compacted(&mut s);
    let v = &s.vm;
    assert_eq!((v.compact_migrate_scanned, v.pgmigrate_success), (512, 32));
    // The run marked block 0 (test_and_set_skip) and the blocks the free
    // scanner scanned to their end, 15 down to 6 (update_pageblock_skip).
    let marked = [0, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
    assert_eq!(marked_blocks(&s), marked);
    // v6.12 __alloc_pages_direct_compact clears the flag on any success,
    // not only a captured page's, so kswapd's next sleep resets nothing
    // (__reset_isolation_suitable is gated by it): every mark stays.
    assert!(!s.compact.blockskip_flush);
    s.kswapd_sleep_compact();
    assert_eq!(marked_blocks(&s), marked);
    release(&mut s, &held);
    s.check_invariants().unwrap();
}
