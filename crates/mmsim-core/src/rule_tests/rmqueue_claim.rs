//! `machine.policy.rmqueue_fallback` (`crate::page_alloc`'s `rmqueue_claim.rs`):
//! v6.12.0's `__rmqueue_fallback()`, which boosts the watermarks at every
//! steal below pageblock order, against v6.15's (6.12.29+ stable, Debian's
//! 6.12.107) `__rmqueue_claim()` / `__rmqueue_steal()`, which boosts only at
//! a claim attempt, steals the smallest block, and keeps `rmqueue_bulk()`'s
//! mode across a batch.

use super::*;
use crate::page_alloc::{
    MigrateType, RmqueueFallback, RmqueueMode, Zone, NORMAL_START_PFN, PAGEBLOCK_NR_PAGES,
};

const BASE: u64 = NORMAL_START_PFN;

/// Four pageblocks, every frame allocated movable, the fallback `f`, and a
/// boost factor of 15000 over a high mark of `high` (max boost
/// `max(512, high * 1.5)`).
fn full_zone(f: RmqueueFallback, high: u64) -> Zone {
    let mut z = Zone::new("Normal", NORMAL_START_PFN, 4 * PAGEBLOCK_NR_PAGES);
    z.fallback = f;
    while z.alloc_pages(0, MigrateType::Movable).is_some() {}
    z.boost.factor = 15_000;
    z.boost.wmark = [high / 2, high * 3 / 4, high];
    z
}

/// Makes pageblock 0 UNMOVABLE (an unmovable allocation claims the whole
/// free pageblock: no boost) and allocates all of it, then frees the
/// order-`order` block at `BASE + at` to its unmovable lists.
fn unmovable_block_with_free(z: &mut Zone, at: u64, order: usize) {
    z.free_pages_block(BASE, 9);
    for _ in 0..PAGEBLOCK_NR_PAGES {
        z.alloc_pages(0, MigrateType::Unmovable).unwrap();
    }
    assert_eq!(z.boost.boost, 0);
    assert_eq!(z.pageblock_type(BASE), MigrateType::Unmovable);
    z.free_pages_block(BASE + at, order);
}

#[test]
fn a_movable_single_page_steal_boosts_under_6_12_only() {
    // Pageblock 0 UNMOVABLE with one free order-2 block (PFNs 4..8), no
    // movable page free. A movable order-0 request falls back to it: order 2
    // is below pageblock_order / 2, so the block may not be claimed.
    // v6.12.0: `find_smallest`, then `steal_suitable_fallback()` boosts by a
    // pageblock before taking the page. v6.15: `__rmqueue_claim()` stops at
    // order 2 (`!can_steal`) and `__rmqueue_steal()` takes the page without
    // a boost. The same page either way; the block stays UNMOVABLE.
    for (f, boost) in [(RmqueueFallback::V6_12, 512), (RmqueueFallback::V6_15, 0)] {
        let mut z = full_zone(f, 100);
        unmovable_block_with_free(&mut z, 4, 2);
        assert_eq!(
            z.alloc_pages(0, MigrateType::Movable),
            Some(BASE + 4),
            "{f:?}"
        );
        assert_eq!(z.boost.boost, boost, "{f:?}");
        assert_eq!(z.boost.pending, boost > 0, "{f:?}");
        assert_eq!(z.pageblock_type(BASE), MigrateType::Unmovable);
        assert_eq!(z.free_pages(), 3);
    }
}

#[test]
fn an_unmovable_fallback_tries_each_order_then_steals_the_smallest_block_under_6_15() {
    // All four MOVABLE pageblocks allocated movable; free: an order-6 block
    // at PFN 0 (pageblock 0) and an order-3 block at PFN 512 (pageblock 1).
    // Neither pageblock can be claimed (64 and 8 free, no unmovable page).
    // v6.12.0: the largest fallback block (order 6) is stolen from, one
    // boost. v6.15: a claim attempt at order 6 and at order 3, a boost at
    // each (max boost 1500 here), then `__rmqueue_steal()` takes the
    // smallest block, the order-3 one.
    for (f, pfn, boost) in [
        (RmqueueFallback::V6_12, BASE, 512),
        (RmqueueFallback::V6_15, BASE + 512, 1024),
    ] {
        let mut z = full_zone(f, 1000);
        z.free_pages_block(BASE, 6);
        z.free_pages_block(BASE + 512, 3);
        assert_eq!(z.alloc_pages(0, MigrateType::Unmovable), Some(pfn), "{f:?}");
        assert_eq!(z.boost.boost, boost, "{f:?}");
        assert_eq!(
            z.pagetypeinfo().pageblocks[MigrateType::Unmovable as usize],
            0
        );
    }
}

#[test]
fn a_failed_claim_goes_on_to_claim_a_smaller_block_under_6_15() {
    // Pageblock 1 has an order-6 free block (64 free: not claimable);
    // pageblock 2 has every other order-5 block free (PFNs 1024..1056,
    // 1088..1120, ...: 256 free, none merging), half the pageblock. An
    // unmovable request: v6.12.0 steals from the largest block (order 6)
    // without claiming, one boost. v6.15: the order-6 attempt fails (a
    // boost), the order-5 attempt claims pageblock 2 (a boost) and
    // `__rmqueue_smallest()` takes the first of its blocks moved to the
    // UNMOVABLE lists.
    for (f, pfn, boost, claimed) in [
        (RmqueueFallback::V6_12, BASE + 512, 512, 0),
        (RmqueueFallback::V6_15, BASE + 1024, 1024, 1),
    ] {
        let mut z = full_zone(f, 1000);
        z.free_pages_block(BASE + 512, 6);
        for k in 0..8 {
            z.free_pages_block(BASE + 1024 + 64 * k, 5);
        }
        assert_eq!(z.alloc_pages(0, MigrateType::Unmovable), Some(pfn), "{f:?}");
        assert_eq!(z.boost.boost, boost, "{f:?}");
        let unmovable = z.pagetypeinfo().pageblocks[MigrateType::Unmovable as usize];
        assert_eq!(unmovable, claimed, "{f:?}");
        assert_eq!(
            z.pageblock_type(BASE + 1024) == MigrateType::Unmovable,
            claimed == 1
        );
    }
}

#[test]
fn a_bulk_refill_after_a_steal_skips_the_claim_attempts_under_6_15() {
    // Pageblock 0 UNMOVABLE, its free pages an order-4 block at PFN 16 and
    // an order-1 block at PFN 4. Movable order-0 requests: order 4 may be
    // claimed (≥ pageblock_order / 2) but the block has no movable page
    // (16 free < 256): a failed attempt, a boost. Order 1 ends the claim
    // search; the steal takes PFN 4. In one `rmqueue_bulk()` (one mode) the
    // second page goes straight to `__rmqueue_steal()`: PFN 5, no second
    // boost. Two separate allocations (each in normal mode) attempt the
    // claim twice: two boosts. v6.12.0 steals from the order-4 block (the
    // largest, claimable): one boost per page.
    let setup = |f| {
        let mut z = full_zone(f, 1000);
        unmovable_block_with_free(&mut z, 16, 4);
        z.free_pages_block(BASE + 4, 1);
        z
    };
    let mut z = setup(RmqueueFallback::V6_15);
    let mut mode = RmqueueMode::Normal;
    let a = z.alloc_pages_mode(0, MigrateType::Movable, &mut mode);
    let b = z.alloc_pages_mode(0, MigrateType::Movable, &mut mode);
    assert_eq!((a, b), (Some(BASE + 4), Some(BASE + 5)));
    assert_eq!(mode, RmqueueMode::Steal);
    assert_eq!(z.boost.boost, 512);

    let mut z = setup(RmqueueFallback::V6_15);
    let a = z.alloc_pages(0, MigrateType::Movable);
    let b = z.alloc_pages(0, MigrateType::Movable);
    assert_eq!((a, b), (Some(BASE + 4), Some(BASE + 5)));
    assert_eq!(z.boost.boost, 1024);

    let mut z = setup(RmqueueFallback::V6_12);
    let mut mode = RmqueueMode::Normal;
    let a = z.alloc_pages_mode(0, MigrateType::Movable, &mut mode);
    let b = z.alloc_pages_mode(0, MigrateType::Movable, &mut mode);
    assert_eq!((a, b), (Some(BASE + 16), Some(BASE + 17)));
    assert_eq!(z.boost.boost, 1024);
    assert_eq!(mode, RmqueueMode::Normal);
}

#[test]
fn the_setting_reaches_the_zone_and_names_its_values() {
    use crate::config::{MachineConfig, PolicyConfig, Size};
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 14),
        policy: PolicyConfig {
            rmqueue_fallback: RmqueueFallback::V6_15,
            ..Default::default()
        },
        ..Default::default()
    };
    let s = crate::sim::Sim::new(cfg).unwrap();
    assert_eq!(s.phys.zone.fallback, RmqueueFallback::V6_15);
    assert_eq!(
        "6.15".parse::<RmqueueFallback>(),
        Ok(RmqueueFallback::V6_15)
    );
    assert_eq!(
        "6.13".parse::<RmqueueFallback>(),
        Err("unknown rmqueue_fallback `6.13`; allowed: 6.12, 6.15".to_string())
    );
}

#[test]
fn direct_reclaim_retries_while_it_makes_progress_up_to_a_boosted_min() {
    // 6.15's claim attempts can boost by several pageblocks in one
    // allocation, lifting WMARK_MIN far above the free pages. v6.12
    // `__alloc_pages_slowpath()` retries direct reclaim as long as it makes
    // progress (`no_progress_loops` reset); 16 reclaims of 32 pages each
    // fall short here. A 65536-page machine full of clean page cache, the
    // zone boosted to its cap (768 * 1.5 = 1152: min 1664): the order-0
    // allocation reclaims until free passes 1664, with no OOM kill.
    let mut s = super::boost_setup::boost_machine_with(PolicyConfig {
        name: PolicyName::Cost,
        cost_variant: CostVariant::V6_2,
        watermark_boost_factor: 15_000,
        ..Default::default()
    });
    let t = s.add_task("t");
    read_random(&mut s, t, 1 << 17, 70_000);
    settle_and_boost_to_the_cap(&mut s);
    let (free, stalls) = (s.node.free, s.vm.allocstall_normal);
    assert!(free + 16 * 32 < s.node.wmark_min, "free {free}");
    assert!(s.alloc_page(crate::gfp::GFP_USER_FOLIO));
    assert_eq!(s.vm.oom_kill, 0);
    assert!(s.node.free >= s.node.wmark_min);
    // 21 direct reclaims, each with progress: more than MAX_RECLAIM_RETRIES.
    assert_eq!(s.vm.allocstall_normal - stalls, 21);
}

#[test]
fn direct_reclaim_stops_when_free_plus_reclaimable_cannot_pass_min() {
    // v6.12.107 `should_reclaim_retry()`: even with progress, direct reclaim
    // stops when no zone's free plus `zone_reclaimable_pages()` (file LRU;
    // anon only with free swap slots) passes its min mark. No swap, the
    // machine full of anon pages and 400 clean cache pages, the zone boosted
    // to min 1664: after one reclaim (32 cache pages freed) free + the
    // remaining cache stays below 1664, so the allocation OOM-kills at once
    // (without the check: one reclaim per 32 cache pages until none is left).
    let mut cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        policy: PolicyConfig {
            name: PolicyName::Cost,
            cost_variant: CostVariant::V6_2,
            watermark_boost_factor: 15_000,
            ..Default::default()
        },
        swap: DeviceConfig::of(DeviceKind::None),
        ..Default::default()
    };
    cfg.compaction.enabled = true;
    cfg.compaction.proactiveness = 0;
    let mut s = Sim::new(cfg).unwrap();
    assert!(s.swap.is_none());
    let t = s.add_task("t");
    read_random(&mut s, t, 400, 400);
    let vma = s.mmap_anon(t, 1 << 16).unwrap();
    let mut index = 0;
    while s.node.free > 1000 {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
        index += 1;
    }
    settle_and_boost_to_the_cap(&mut s);
    let cache = s.zone_reclaimable_pages(s.node.free);
    let (free, stalls) = (s.node.free, s.vm.allocstall_normal);
    assert!(free + cache < s.node.wmark_min, "free {free} cache {cache}");
    assert!(cache > 3 * 32, "cache {cache}");
    assert!(s.alloc_page(crate::gfp::GFP_USER_FOLIO));
    assert_eq!(s.vm.oom_kill, 1);
    assert_eq!(s.vm.allocstall_normal - stalls, 1);
}

/// kswapd's run ends, then the zone is boosted three pageblocks, to its
/// cap (768 * 1.5 = 1152 pages over min 512), and the boost is taken
/// without waking kswapd.
fn settle_and_boost_to_the_cap(s: &mut Sim) {
    while s.kswapd.running {
        s.kswapd_step();
    }
    for _ in 0..3 {
        s.phys.zone.boost_watermark();
    }
    s.rmqueue_boosted(false);
    assert_eq!(s.node.wmark_min, 512 + 1152);
}
