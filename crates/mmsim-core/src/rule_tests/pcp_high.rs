//! The auto-tuned `high` of the per-CPU lists under `machine.policy.pcp_lists
//! = "6.12"` (`crate::page_alloc`'s `pcp_high.rs`; v6.12 `nr_pcp_high`,
//! `nr_pcp_free`, `nr_pcp_alloc`, `decay_pcp_high`), on a 16384-page zone
//! with one CPU: `batch` 3, `high_min` 12 (low mark 12, at least
//! `batch << 2`), `high_max` 16384 / 8 = 2048. The zone's high mark is 0
//! unless set, so it is never below it.

use crate::page_alloc::{MigrateType, PcpLists, PhysMem};
use crate::timer::TimerKind;

const M: MigrateType = MigrateType::Movable;

/// The 16384-page zone with the lists of `orders`.
fn zone(orders: PcpLists) -> PhysMem {
    let mut p = PhysMem::new(1 << 14, 12, 1, false);
    p.pcp.orders = orders;
    assert_eq!(
        (p.pcp.batch, p.pcp.high, p.pcp.high_min, p.pcp.high_max),
        (3, 12, 12, 2048)
    );
    p
}

/// `n` order-0 pages taken from the buddy lists (not through the lists).
fn pages(p: &mut PhysMem, n: usize) -> Vec<u64> {
    (0..n).map(|_| p.zone.alloc_pages(0, M).unwrap()).collect()
}

/// The "6.12" zone with `n` order-0 pages taken from the buddy lists (to
/// free later), after four allocations through the lists: refills of 3, 6
/// and 12 pages raised `high` to 21 and left 5 pages on the lists.
fn after_four_allocations(n: usize) -> (PhysMem, Vec<u64>) {
    let mut p = zone(PcpLists::V6_12);
    let v = pages(&mut p, n);
    for _ in 0..4 {
        p.alloc_order0().unwrap();
    }
    assert_eq!((p.pcp.high, p.pcp.count()), (21, 5));
    (p, v)
}

#[test]
fn frees_raise_high_to_free_count_plus_batch_and_free_a_clamped_free_count() {
    // Each free counts in `free_count` (up to batch << 5 = 96). A free that
    // brings `count` to `high` raises `high` to `free_count + batch` and
    // frees `nr_pcp_free` = clamp(free_count, batch, high - batch) with the
    // old `high`: at free 12, high 12 → 15, 9 freed (3 left); at free 24
    // (count 15), 15 → 27, 12 freed; at free 48, 27 → 51, 24 freed; at free
    // 96, 51 → 99, 48 freed. Fixed `high` (the order-0 lists): `batch` (3)
    // at each free that reaches 12, so 9 stay after the 12th and every third.
    let mut p = zone(PcpLists::V6_12);
    let v = pages(&mut p, 96);
    let zone0 = p.zone.free_pages();
    let mut seen = Vec::new();
    for (i, &pfn) in v.iter().enumerate() {
        p.free_frames(pfn as u32, 0);
        if [12, 23, 24, 48, 96].contains(&(i + 1)) {
            seen.push((i + 1, p.pcp.high, p.pcp.count()));
        }
    }
    assert_eq!(
        seen,
        [
            (12, 15, 3),
            (23, 15, 14),
            (24, 27, 3),
            (48, 51, 3),
            (96, 99, 3)
        ]
    );
    assert_eq!(p.zone.free_pages(), zone0 + 93);
    p.pcp.check().unwrap();

    let mut old = zone(PcpLists::Order0);
    let v = pages(&mut old, 12);
    for pfn in v {
        old.free_frames(pfn as u32, 0);
    }
    assert_eq!((old.pcp.high, old.pcp.count()), (12, 9));
}

#[test]
fn refills_double_with_alloc_factor_and_raise_high_by_their_batch() {
    // `nr_pcp_alloc` at order 0: `batch << alloc_factor` pages, `high`
    // raised by that batch (the zone is above its high mark), and
    // `alloc_factor` up by one while the batch fits in `high - count -
    // batch`. Refills at allocations 1, 4, 10, 22, 46: 3, 6, 12, 24, 48
    // pages, `high` 15, 21, 33, 57, 105. A free halves `alloc_factor`.
    // Order-0 lists: every refill is `batch` (3) pages and `high` stays 12.
    let mut p = zone(PcpLists::V6_12);
    let mut seen = Vec::new();
    for i in 1..=46 {
        p.alloc_order0().unwrap();
        if [1, 4, 10, 22, 46].contains(&i) {
            seen.push((p.pcp.high, p.pcp.alloc_factor, p.pcp.count()));
        }
    }
    assert_eq!(
        seen,
        [
            (15, 1, 2),
            (21, 2, 5),
            (33, 3, 11),
            (57, 4, 23),
            (105, 5, 47)
        ]
    );
    assert_eq!(p.zone.free_pages(), 16384 - 93);
    let v = pages(&mut p, 1);
    p.free_frames(v[0] as u32, 0);
    assert_eq!(
        (p.pcp.high, p.pcp.alloc_factor, p.pcp.count()),
        (105, 2, 48)
    );

    let mut old = zone(PcpLists::Order0);
    for _ in 0..4 {
        old.alloc_order0().unwrap();
    }
    assert_eq!(
        (old.pcp.high, old.pcp.count(), old.zone.free_pages()),
        (12, 2, 16384 - 6)
    );
}

#[test]
fn below_the_high_mark_frees_lower_high_and_a_drain_above_it_clears_the_flag() {
    // Four allocations raise `high` to 21 (count 5). With the zone's high
    // mark set to its free pages, the fifth allocation fails
    // `zone_watermark_fast` (free must exceed the mark): ZONE_BELOW_HIGH.
    // Each free then lowers `high` by max(free_count, batch) — 18, 15, 12,
    // then `high_min` — and drains only at max(count, high_min) = 12: the
    // eighth free (count 12) returns clamp(8, 3, 9) = 8 pages, which lift
    // the zone above its mark, so the flag clears.
    let (mut p, v) = after_four_allocations(8);
    let mark = p.zone.free_pages();
    assert_eq!(mark, 16384 - 8 - 9);
    p.zone.boost.wmark[2] = mark;
    p.alloc_order0().unwrap();
    assert!(p.pcp.below_high);
    let mut seen = Vec::new();
    for pfn in v {
        p.free_frames(pfn as u32, 0);
        seen.push((p.pcp.high, p.pcp.count(), p.pcp.below_high));
    }
    let mut want: Vec<_> = [18, 15, 12, 12, 12, 12, 12]
        .iter()
        .zip(5..)
        .map(|(&h, c)| (h, c, true))
        .collect();
    want.push((12, 4, false));
    assert_eq!(seen, want);
    assert_eq!(p.zone.free_pages(), mark + 8);
}

#[test]
fn while_kswapd_reclaims_frees_lower_high_and_drain_at_four_batches() {
    // ZONE_RECLAIM_ACTIVE: each free lowers `high` by max(free_count,
    // batch) and the lists drain at min(batch << 2, high) = 12, though
    // `high` was 21: at count 12 (the seventh free, free_count 7)
    // clamp(7, 3, 9) = 7 pages go. Not reclaiming, 7 frees leave `high` at
    // 21 and all 12 pages parked.
    for (active, want_high, want_count) in [(true, 12, 5), (false, 21, 12)] {
        let (mut p, v) = after_four_allocations(7);
        p.pcp.reclaim_active = active;
        let mut highs = Vec::new();
        for pfn in v {
            p.free_frames(pfn as u32, 0);
            highs.push(p.pcp.high);
        }
        if active {
            assert_eq!(highs, [18, 15, 12, 12, 12, 12, 12]);
        }
        assert_eq!((p.pcp.high, p.pcp.count()), (want_high, want_count));
    }
}

#[test]
fn decay_pcp_high_takes_an_eighth_a_run_and_frees_what_is_above_it() {
    // After 22 allocations: `high` 57, count 23. Each `decay_pcp_high`
    // sets `high` to max(count - 96, high - high / 8, high_min): 50, 44,
    // 39, 35, 31, 28, 25, then 22 < count: one page freed; 20 and 18 and
    // 16 and 14 free two each, 13 and 12 one; at `high_min` with nothing
    // above it, nothing to do.
    let mut p = zone(PcpLists::V6_12);
    for _ in 0..22 {
        p.alloc_order0().unwrap();
    }
    assert_eq!((p.pcp.high, p.pcp.count()), (57, 23));
    let zone0 = p.zone.free_pages();
    let mut seen = Vec::new();
    while p.decay_pcp_high() {
        seen.push((p.pcp.high, p.pcp.count()));
    }
    let highs = [50, 44, 39, 35, 31, 28, 25, 22, 20, 18, 16, 14, 13, 12];
    let want: Vec<_> = highs.iter().map(|&h| (h, (h as u64).min(23))).collect();
    assert_eq!(seen, want);
    assert_eq!(
        (p.pcp.high, p.pcp.count(), p.zone.free_pages()),
        (12, 12, zone0 + 11)
    );
    p.pcp.check().unwrap();
}

#[test]
fn the_vmstat_worker_decays_high_every_second_only_under_6_12() {
    // The "6.12" machine arms `vmstat_update` at 1 s; its run decays
    // `high` (raised here by hand to twice `high_min` 640: 1280 - 160) and requeues it for
    // 2 s. The default lists arm nothing.
    use super::thp::thp_machine_with;
    const SEC: u64 = 1_000_000_000;
    for lists in [PcpLists::V6_12, PcpLists::Order0] {
        let mut s = thp_machine_with(65536, None, Default::default(), |c| {
            c.policy.pcp_lists = lists
        });
        let armed = s.timers.expires(TimerKind::VmstatUpdate);
        if lists == PcpLists::Order0 {
            assert_eq!(armed, None);
            continue;
        }
        assert_eq!(armed, Some(SEC));
        let min = s.phys.pcp.high_min;
        assert_eq!(min, 640);
        s.phys.pcp.high = 2 * min;
        s.vmstat_update(SEC);
        assert_eq!(s.phys.pcp.high, 1280 - 160);
        assert_eq!(s.timers.expires(TimerKind::VmstatUpdate), Some(2 * SEC));
    }
}

#[test]
fn a_kswapd_run_sets_zone_reclaim_active_from_its_start_to_its_end() {
    // `balance_pgdat` sets ZONE_RECLAIM_ACTIVE at `restart:` and clears it
    // at `out:`: set from the wakeup (anonymous faults down to the low
    // mark) while kswapd runs, clear once it reclaimed to the high mark and
    // went to sleep. On this 8192-page machine the faults' refills had
    // raised `high` to `high_max` (8192 / 8 = 1024) by the wakeup; the
    // run's frees, each lowering it by max(free_count, batch), take it down
    // to `high_min` (226, the low mark).
    use super::kswapd_nap::{kswapd_woken, think};
    let (mut s, _) = kswapd_woken(false, |c| c.policy.pcp_lists = PcpLists::V6_12);
    assert!(s.kswapd.running);
    assert!(s.phys.pcp.reclaim_active);
    let at_wake = s.phys.pcp.high;
    think(&mut s, 20_000_000);
    assert!(!s.kswapd.running);
    assert!(!s.phys.pcp.reclaim_active);
    assert_eq!(
        (at_wake, s.phys.pcp.high, s.phys.pcp.high_min),
        (1024, 226, 226)
    );
}
