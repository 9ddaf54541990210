//! `kmem:mm_page_alloc_extfrag` (`crate::tracepoint::kmem`, v6.12
//! include/trace/events/kmem.h): where the buddy allocator emits it under
//! v6.12.0's `__rmqueue_fallback()` and v6.15's `__rmqueue_claim()` /
//! `__rmqueue_steal()`, with the fields the kernel's `TP_fast_assign` takes.

use super::*;
use crate::config::PolicyName;
use crate::page_alloc::{MigrateType, RmqueueFallback, Zone, NORMAL_START_PFN, PAGEBLOCK_NR_PAGES};
use crate::tracepoint::{TracepointConfig, Tracer};

const BASE: u64 = NORMAL_START_PFN;

/// Four free MOVABLE pageblocks with the extfrag log on.
fn zone(f: RmqueueFallback) -> Zone {
    let mut z = Zone::new("Normal", NORMAL_START_PFN, 4 * PAGEBLOCK_NR_PAGES);
    z.fallback = f;
    z.extfrag = Some(Vec::new());
    z
}

/// The logged events as the kernel prints them, the log emptied.
fn take(z: &mut Zone) -> Vec<String> {
    let v = std::mem::take(z.extfrag.as_mut().unwrap());
    v.iter().map(|e| e.to_string()).collect()
}

#[test]
fn an_unmovable_page_from_a_free_zone_claims_a_whole_order_10_block() {
    // No unmovable or reclaimable page free: the fallback searches from the
    // largest order down and finds the movable order-10 block at the head
    // of its list (the zone's first, BASE), >= pageblock_order: taken whole,
    // both pageblocks UNMOVABLE, no fragmentation. The same in both variants.
    for f in [RmqueueFallback::V6_12, RmqueueFallback::V6_15] {
        let mut z = zone(f);
        assert_eq!(
            z.alloc_pages(0, MigrateType::Unmovable),
            Some(BASE),
            "{f:?}"
        );
        assert_eq!(
            take(&mut z),
            [
                "page=0xffffea0004000000 pfn=0x100000 alloc_order=0 fallback_order=10 \
              pageblock_order=9 alloc_migratetype=0 fallback_migratetype=1 fragmenting=0 \
              change_ownership=1"
            ],
            "{f:?}"
        );
        // From its own lists now: no event.
        assert_eq!(z.alloc_pages(0, MigrateType::Unmovable), Some(BASE + 1));
        assert_eq!(take(&mut z), Vec::<String>::new());
    }
}

/// Every frame allocated movable, then pageblock 0 made UNMOVABLE and full,
/// then the order-2 block at BASE + 4 freed to its unmovable lists.
fn full_with_unmovable_hole(f: RmqueueFallback) -> Zone {
    let mut z = zone(f);
    while z.alloc_pages(0, MigrateType::Movable).is_some() {}
    z.free_pages_block(BASE, 9);
    for _ in 0..PAGEBLOCK_NR_PAGES {
        z.alloc_pages(0, MigrateType::Unmovable).unwrap();
    }
    assert_eq!(z.pageblock_type(BASE), MigrateType::Unmovable);
    z.free_pages_block(BASE + 4, 2);
    take(&mut z);
    z
}

/// Under both variants: `setup` makes the zone, an order-0 `mt` request gets
/// `pfn` and logs exactly `line`.
fn one_steal(setup: fn(RmqueueFallback) -> Zone, mt: MigrateType, pfn: u64, line: &str) {
    for f in [RmqueueFallback::V6_12, RmqueueFallback::V6_15] {
        let mut z = setup(f);
        assert_eq!(z.alloc_pages(0, mt), Some(pfn), "{f:?}");
        assert_eq!(take(&mut z), [line], "{f:?}");
    }
}

#[test]
fn a_movable_steal_of_a_small_unmovable_block_is_fragmenting_without_ownership() {
    // v6.12.0: `find_smallest` then `steal_suitable_fallback()` takes the
    // page, the block stays UNMOVABLE; v6.15: `__rmqueue_claim()` stops at
    // order 2 (`!can_steal`), `__rmqueue_steal()` takes it and emits.
    one_steal(
        full_with_unmovable_hole,
        MigrateType::Movable,
        BASE + 4,
        "page=0xffffea0004000100 pfn=0x100004 alloc_order=0 fallback_order=2 \
         pageblock_order=9 alloc_migratetype=1 fallback_migratetype=0 fragmenting=1 \
         change_ownership=0",
    );
}

/// Every frame allocated movable, then one order-2 block freed in the full
/// MOVABLE pageblock 1, at `BASE + 512 + 8`.
fn full_with_movable_hole(f: RmqueueFallback) -> Zone {
    let mut z = zone(f);
    while z.alloc_pages(0, MigrateType::Movable).is_some() {}
    z.free_pages_block(BASE + PAGEBLOCK_NR_PAGES + 8, 2);
    take(&mut z);
    z
}

#[test]
fn a_failed_claim_attempt_emits_nothing_under_6_15() {
    // An unmovable order-0 request with only movable free pages left: the
    // order-2 block (free 4 + alike 0 < 256: not claimed, the block stays
    // MOVABLE). v6.12.0 steals from it and emits once; v6.15's
    // `try_to_steal_block()` fails (no event), then `__rmqueue_steal()`
    // takes the page and emits once: the same line.
    one_steal(
        full_with_movable_hole,
        MigrateType::Unmovable,
        BASE + PAGEBLOCK_NR_PAGES + 8,
        "page=0xffffea0004008200 pfn=0x100208 alloc_order=0 fallback_order=2 \
         pageblock_order=9 alloc_migratetype=0 fallback_migratetype=1 fragmenting=1 \
         change_ownership=0",
    );
}

#[test]
fn the_sim_emits_the_events_at_the_allocations_end_by_the_faulting_task() {
    // Page tables in unmovable frames (`machine.pagetable_frames`): the
    // first write's page tables find no unmovable page free and the first
    // one claims a movable order-10 block; the rest come from it.
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    s.cfg.kmem_accounting = true;
    s.kmem = Some(Default::default());
    s.cfg.pagetable_frames = true;
    s.tp = Tracer::new(&TracepointConfig {
        events: vec!["kmem:mm_page_alloc_extfrag".into()],
        max_events: 100,
        ..Default::default()
    });
    s.setup_trace_extfrag();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1 << 20).unwrap();
    touch(&mut s, vma, 2560);
    let tp = s.tp.take().unwrap();
    let got: Vec<String> = tp
        .records
        .iter()
        .map(|r| format!("{} {:?} {}: {}", r.t_ns, r.task, r.event.name(), r.event))
        .collect();
    // One event, by the task, at the first fault (time 0): the order-10
    // block at the zone's start taken whole; the other six tables come
    // from the unmovable lists it left.
    assert_eq!(
        got,
        [
            "0 Task(0) kmem:mm_page_alloc_extfrag: page=0xffffea0004000000 pfn=0x100000 \
          alloc_order=0 fallback_order=10 pageblock_order=9 alloc_migratetype=0 \
          fallback_migratetype=1 fragmenting=0 change_ownership=1"
        ]
    );
    assert_eq!(s.kmem_pagetable_frames(), 7);
}
