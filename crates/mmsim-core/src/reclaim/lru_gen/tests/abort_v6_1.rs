//! Rule tests of v6.1's `should_abort_scan` and the `lru_gen_shrink_lruvec`
//! loop around it (Debian's 6.1.192 mm/vmscan.c, the same function as
//! v6.1.0's): aging twice, the goal after swapping, the low (kswapd: high)
//! watermarks at priority 10 or below with MIN_LRU_BATCH added, and which
//! reclaimer's `memcgs_need_aging` the loop clears.

use super::*;
use crate::page_alloc::MigrateType;

/// A 65536-page v6.1 machine without swap and `file` clean file pages read
/// at random (each in the oldest generation), then free frames taken until
/// `free` are left (`None`: left as they are).
fn file_machine(file: u32, free: Option<u64>) -> Sim {
    let mut s = Sim::new(cfg(V1, 1 << 16, None)).unwrap();
    let t = s.add_task("t");
    let f = s.add_file("f", u64::from(file)).unwrap();
    s.open(f, t).unwrap();
    s.fadvise(f, Advice::Random).unwrap();
    for index in 0..file {
        read(&mut s, f, index);
    }
    if let Some(free) = free {
        hold_until(&mut s, free);
    }
    s
}

/// Takes free frames (after draining the per-CPU lists) out of
/// `Node::free` until `free` are left, as memory the kernel holds.
fn hold_until(s: &mut Sim, free: u64) {
    s.phys.drain_pages();
    while s.node.free > free {
        s.phys.zone.alloc_pages(0, MigrateType::Movable).unwrap();
        s.node.free -= 1;
    }
}

/// A 32,768-page v6.1 machine without swap whose node has a 3,970-page
/// ZONE_DMA (watermarks min/low/high 43/53/63; DMA32's 318/397/476, as in
/// rule_tests/dma_zone.rs), with `dma` free pages left in DMA and `upper`
/// in DMA32 (the rest taken by hand).
fn dma_machine(dma: u64, upper: u64) -> Sim {
    let mut c = cfg(V1, 32768, None);
    c.dma_zone_pages = 3970;
    let mut s = Sim::new(c).unwrap();
    s.phys.drain_pages();
    let d = &mut s.phys.dma.as_mut().unwrap().zone;
    let n = d.free_pages() - dma;
    for _ in 0..n {
        d.alloc_pages(0, MigrateType::Movable).unwrap();
    }
    s.node.free -= n;
    let n = s.phys.zone.free_pages() - upper;
    for _ in 0..n {
        s.phys.zone.alloc_pages(0, MigrateType::Movable).unwrap();
    }
    s.node.free -= n;
    assert_eq!(s.upper_free(), upper);
    s
}

/// A scan control of `who` at `priority`, goal `goal`, `reclaimed` so far.
fn sc_of(who: Reclaimer, priority: u32, goal: u64, reclaimed: u64, swapping: bool) -> ScanControl {
    let mut sc = ScanControl::new(who, goal, 0);
    sc.priority = priority;
    sc.nr_reclaimed = reclaimed;
    sc.mglru_need_swapping = swapping;
    sc
}

#[test]
fn v6_1_should_abort_scan_decides_by_reclaimer_priority_and_watermarks() {
    use Reclaimer::{Direct, Kswapd, Memcg};
    let s = file_machine(100, None);
    let (low, high) = (s.node.wmark_low, s.node.wmark_high);
    assert!(s.node.free >= high);
    let max = s.lru_gen_folio(0).max_seq;
    // (who, priority, goal, reclaimed so far, need_swapping, seq) →
    // (abort, nr_reclaimed after).
    let cases = [
        // Direct at DEF_PRIORITY: aged once goes on, twice stops.
        ((Direct, 12, 32, 100, false, max - 1), (false, 100)),
        ((Direct, 12, 32, 100, false, max - 2), (true, 100)),
        // The goal after a batch of anon: stop; just below it, or no anon: go on.
        ((Direct, 12, 32, 32, true, max), (true, 32)),
        ((Direct, 12, 32, 31, true, max), (false, 31)),
        ((Direct, 11, 32, 32, false, max), (false, 32)),
        // At priority 10 the free pages (above the low mark) end it, +64.
        ((Direct, 10, 32, 0, false, max), (true, 64)),
        // Cgroup reclaim: only aging twice or the goal after swapping.
        ((Memcg, 0, 32, 1000, false, max), (false, 1000)),
        ((Memcg, 0, 32, 1000, false, max - 2), (true, 1000)),
        ((Memcg, 0, 32, 32, true, max), (true, 32)),
        // kswapd: not before its goal (aging twice is not its test), then
        // at priority 10 or below once free pages reach the high mark, +64.
        ((Kswapd, 10, 100, 99, true, max - 2), (false, 99)),
        ((Kswapd, 11, 100, 100, false, max), (false, 100)),
        ((Kswapd, 10, 100, 100, false, max), (true, 164)),
    ];
    for ((who, prio, goal, done, swapping, seq), want) in cases {
        let mut sc = sc_of(who, prio, goal, done, swapping);
        let got = s.should_abort_scan_v6_1(0, seq, &mut sc);
        assert_eq!(
            (got, sc.nr_reclaimed),
            want,
            "{who:?} {prio} {done} {swapping} {seq}"
        );
    }
    // Free pages at the high mark: both stop (`wmark > free` goes on);
    // between the low and the high mark, or at the low mark: direct reclaim
    // stops, kswapd does not; below the low mark neither does.
    let marks = [
        (high, true, true),
        (high - 1, true, false),
        (low, true, false),
        (low - 1, false, false),
    ];
    for (free, direct, kswapd) in marks {
        let s = file_machine(100, Some(free));
        let mut sc = sc_of(Direct, 10, 32, 0, false);
        let d = s.should_abort_scan_v6_1(0, max, &mut sc);
        let mut sc = sc_of(Kswapd, 10, 100, 100, false);
        let k = s.should_abort_scan_v6_1(0, max, &mut sc);
        assert_eq!((d, k), (direct, kswapd), "free {free}");
    }
}

#[test]
fn v6_1_should_abort_scan_checks_each_zone_against_its_own_mark() {
    // On the two-zone node every zone must have free pages at or above its
    // own low (kswapd: high) watermark, DMA's without `lowmem_reserve`
    // (6.1 reads `zone_page_state(zone, NR_FREE_PAGES)` against
    // `low_wmark_pages`/`high_wmark_pages` only). Priority 10, kswapd past
    // its goal; (DMA free, DMA32 free) → (direct aborts, kswapd aborts).
    let s = dma_machine(3970, 28798);
    let d = s.phys.dma.as_ref().unwrap();
    assert_eq!((d.wmark.low, d.wmark.high), (53, 63));
    assert_eq!((d.upper_wmark.low, d.upper_wmark.high), (397, 476));
    assert_eq!((s.node.wmark_low, s.node.wmark_high), (450, 539));
    let cases = [
        // Both zones at their high marks; both at their low marks.
        ((63, 476), (true, true)),
        ((53, 397), (true, false)),
        // DMA between its marks, DMA32 far above: direct only.
        ((62, 28798), (true, false)),
        // DMA below its low (high) mark while DMA32 is far above: neither
        // (the node's sum, 28,850, is far above the node's marks 450/539).
        ((52, 28798), (false, false)),
        ((3970, 475), (true, false)),
        // The converse: DMA32 below its low mark, DMA full.
        ((3970, 396), (false, false)),
    ];
    for ((dma, upper), want) in cases {
        let s = dma_machine(dma, upper);
        let max = s.lru_gen_folio(0).max_seq;
        let mut sc = sc_of(Reclaimer::Direct, 10, 32, 0, false);
        let d = s.should_abort_scan_v6_1(0, max, &mut sc);
        assert_eq!(sc.nr_reclaimed, if d { 64 } else { 0 });
        let mut sc = sc_of(Reclaimer::Kswapd, 10, 100, 100, false);
        let k = s.should_abort_scan_v6_1(0, max, &mut sc);
        assert_eq!((d, k), want, "DMA {dma} DMA32 {upper}");
    }
}

#[test]
fn v6_1_direct_reclaim_scans_past_its_goal_until_the_low_mark_is_met() {
    // 20,000 clean file pages in the oldest generation, no aging needed:
    // at priority 7 the lruvec's scan target is 20,000 >> 7 = 156. With
    // free pages below the low mark `should_abort_scan` never stops the
    // loop (the goal of 32 counts only after swapping), so it evicts three
    // batches of 64 (192 >= 156). With free pages above the low mark it
    // stops after the first batch and adds MIN_LRU_BATCH: 64 reclaimed,
    // `nr_reclaimed` 128.
    let mut got = Vec::new();
    for below_low in [true, false] {
        let mut s = file_machine(20_000, None);
        if below_low {
            let free = s.node.wmark_low - 200;
            hold_until(&mut s, free);
        }
        let mut sc = sc_of(Reclaimer::Direct, 7, 32, 0, false);
        s.lru_gen_shrink_lruvec(&mut sc);
        got.push((s.vm.pgsteal_direct, sc.nr_reclaimed));
        assert!(!sc.mglru_need_swapping, "file batches only");
        if !below_low {
            // (The frames taken below have no owner the invariants know.)
            s.check_invariants().unwrap();
        }
    }
    assert_eq!(got, [(192, 192), (64, 128)]);
}

#[test]
fn v6_1_only_kswapd_clears_its_memcgs_need_aging() {
    // The loop ended by `should_abort_scan` with 128 counted (64 + the
    // abort's 64) and no aging needed: kswapd's scan control's
    // `memcgs_need_aging` is cleared (its next `lru_gen_age_node` skips
    // the aging once). A direct reclaimer clears its own scan control's
    // flag, which nothing reads: kswapd's stays set.
    let mut got = Vec::new();
    for who in [Reclaimer::Direct, Reclaimer::Kswapd] {
        let mut s = file_machine(20_000, None);
        s.lru_gen.memcgs_need_aging = true;
        let mut sc = sc_of(who, 7, 32, 0, false);
        s.lru_gen_shrink_lruvec(&mut sc);
        got.push((sc.nr_reclaimed, s.lru_gen.memcgs_need_aging));
    }
    assert_eq!(got, [(128, true), (128, false)]);
}
