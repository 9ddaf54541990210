//! `vmscan:mm_vmscan_wakeup_kswapd` (`crate::tracepoint::vmscan`, v6.12
//! mm/vmscan.c `wakeup_kswapd()`): emitted by the waker, with its order and
//! gfp mask, only when the wakeup gets past `waitqueue_active` (kswapd
//! asleep), the hopeless-node test and the balanced-and-unboosted test; then
//! kswapd's own `mm_vmscan_kswapd_wake`.

use super::boost::fragment;
use super::boost_setup::boost_machine;
use super::*;
use crate::page_alloc::MigrateType;
use crate::tracepoint::{TracepointConfig, Tracer};

/// Traces kswapd's wakeups and its wake (shared with `slub_gfp_tp`).
pub(super) fn trace_on(s: &mut Sim) {
    s.tp = Tracer::new(&TracepointConfig {
        events: vec![
            "vmscan:mm_vmscan_wakeup_kswapd".into(),
            "vmscan:mm_vmscan_kswapd_wake".into(),
        ],
        max_events: 1000,
        ..Default::default()
    });
}

/// The kept events as `task name: fields`, the tracer left on.
pub(super) fn lines(s: &mut Sim) -> Vec<String> {
    let tp = s.tp.as_mut().unwrap();
    std::mem::take(&mut tp.records)
        .iter()
        .map(|r| format!("{:?} {}: {}", r.task, r.event.name(), r.event))
        .collect()
}

#[test]
fn a_boosting_steal_wakes_kswapd_with_no_mask_and_a_running_kswapd_is_not_woken() {
    // boost.rs's `a_boosting_steal_wakes_kswapd_on_a_balanced_node`, traced:
    // the fault's first page-table page steals a movable order-8 block and
    // boosts; rmqueue's `wakeup_kswapd(zone, 0, 0, zone_idx(zone))` wakes
    // the balanced node (boosted), printed `gfp_flags=none` by the faulting
    // task, then kswapd's run. Without a boost the node is balanced and
    // unboosted: no event at all.
    for factor in [15_000, 0] {
        let mut s = boost_machine(factor);
        fragment(&mut s, MigrateType::Movable);
        trace_on(&mut s);
        let t = s.add_task("t");
        let vma = s.mmap_anon(t, 64).unwrap();
        fault_anon(&mut s, vma, 0);
        let want: &[&str] = if factor > 0 {
            &[
                "Task(0) vmscan:mm_vmscan_wakeup_kswapd: nid=0 order=0 gfp_flags=none",
                "Kswapd vmscan:mm_vmscan_kswapd_wake: nid=0 order=0",
            ]
        } else {
            &[]
        };
        assert_eq!(lines(&mut s), want, "{factor}");
        assert_eq!(s.kswapd.running, factor > 0);
        // A second wakeup while kswapd runs (not on its waitqueue): nothing.
        s.wakeup_kswapd(crate::gfp::GFP_KERNEL);
        assert_eq!(lines(&mut s), Vec::<String>::new(), "{factor}");
    }
}

#[test]
fn an_anonymous_fault_under_the_low_mark_wakes_kswapd_with_its_mask() {
    // No boost: a task writes page by page until an anonymous fault finds
    // the free pages at the low mark; `wake_all_kswapds` passes the fault's
    // order-0 folio mask (v6.12 `vma_alloc_zeroed_movable_folio`), the
    // faulting task's, once; kswapd then runs until balanced.
    let mut s = boost_machine(0);
    trace_on(&mut s);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1 << 16).unwrap();
    let mut index = 0;
    while !s.kswapd.running {
        fault_anon(&mut s, vma, index);
        index += 1;
    }
    assert_eq!(
        lines(&mut s),
        [
            "Task(0) vmscan:mm_vmscan_wakeup_kswapd: nid=0 order=0 \
             gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO",
            "Kswapd vmscan:mm_vmscan_kswapd_wake: nid=0 order=0",
        ]
    );
    assert_eq!(s.vm.pageoutrun, 1);
}
