//! The `compaction:` tracepoints (`crate::tracepoint::compaction`, v6.12
//! include/trace/events/compaction.h): a scripted direct compaction on the
//! two-zone node and a kcompactd wake, each checked line by line.

use super::dma_compact::{fragment_both, machine, release};
use crate::compaction::{CompactResult, MigrateMode};
use crate::sim::Sim;
use crate::tracepoint::{TpEvent, TracepointConfig, Tracer};

/// Turns on the `compaction:*` tracepoints.
fn trace_on(s: &mut Sim) {
    s.tp = Tracer::new(&TracepointConfig {
        events: vec!["compaction:*".into()],
        max_events: 100_000,
        ..Default::default()
    });
}

/// The events kept, as `name: fields`, without `mm_compaction_finished`'s
/// per-pageblock `continue` / `no_suitable_page` verdicts (counted instead).
fn lines(s: &mut Sim) -> (Vec<String>, usize) {
    let tp = s.tp.take().unwrap();
    let mut walking = 0;
    let mut out = Vec::new();
    for r in &tp.records {
        let l = format!("{}: {}", r.event.name(), r.event);
        if l.starts_with("compaction:mm_compaction_finished")
            && (l.ends_with("ret=continue") || l.ends_with("ret=no_suitable_page"))
        {
            walking += 1;
            continue;
        }
        assert!(matches!(r.event, TpEvent::Compaction(_)), "{l}");
        out.push(l);
    }
    (out, walking)
}

#[test]
fn a_direct_compaction_emits_the_kernels_events_in_order() {
    let mut s = machine();
    let (_vma, held) = fragment_both(&mut s);
    trace_on(&mut s);
    // dma_compact.rs's first direct call: DMA32 ends PARTIAL_SKIPPED and is
    // deferred, DMA ends COMPLETE (36 folios moved) and is deferred, the page
    // comes from DMA's free lists and resets DMA's deferral.
    let (page, r) = s.alloc_pages_direct_compact(4, MigrateMode::SyncLight);
    assert_eq!((page, r), (Some(480), CompactResult::PartialSkipped));
    let (got, walking) = lines(&mut s);
    let expect = [
        "compaction:mm_compaction_try_to_compact_pages: order=4 \
         gfp_mask=GFP_TRANSHUGE|__GFP_NORETRY priority=1",
        // DMA32: suitable (compaction_suitable ran: the order-4 watermark failed).
        "compaction:mm_compaction_suitable: node=0 zone=DMA32    order=4 ret=continue",
        "compaction:mm_compaction_begin: zone_start=0x100000 migrate_pfn=0x100000 \
         free_pfn=0x101a00 zone_end=0x101c00, mode=sync",
        "compaction:mm_compaction_finished: node=0 zone=DMA32    order=4 ret=partial_skipped",
        "compaction:mm_compaction_end: zone_start=0x100000 migrate_pfn=0x101a00 \
         free_pfn=0x101a00 zone_end=0x101c00, mode=sync status=partial_skipped",
        "compaction:mm_compaction_defer_compaction: node=0 zone=DMA32    order=4 \
         order_failed=0 consider=0 limit=2",
        // DMA: two migrate_pages batches (32 pages, then 4 of 28 before the free
        // scanner ran dry), COMPLETE, deferred, then reset by the page it gave.
        "compaction:mm_compaction_suitable: node=0 zone=DMA      order=4 ret=continue",
        "compaction:mm_compaction_begin: zone_start=0x0 migrate_pfn=0x0 free_pfn=0x200 \
         zone_end=0x400, mode=sync",
        "compaction:mm_compaction_migratepages: nr_migrated=32 nr_failed=0",
        "compaction:mm_compaction_migratepages: nr_migrated=4 nr_failed=28",
        "compaction:mm_compaction_finished: node=0 zone=DMA      order=4 ret=complete",
        "compaction:mm_compaction_end: zone_start=0x0 migrate_pfn=0x200 free_pfn=0x228 \
         zone_end=0x400, mode=sync status=complete",
        "compaction:mm_compaction_defer_compaction: node=0 zone=DMA      order=4 \
         order_failed=0 consider=0 limit=2",
        "compaction:mm_compaction_defer_reset: node=0 zone=DMA      order=4 \
         order_failed=5 consider=0 limit=1",
    ];
    // 15 verdicts of `continue` / `no_suitable_page` in DMA's run (one per
    // compact_zone iteration), none in DMA32's (one isolate_migratepages
    // call walks all its blocks).
    assert_eq!((walking, got.len()), (15, expect.len()), "{got:#?}");
    assert_eq!(got, expect);
    // Again: DMA32 deferred (considered 1 of 2), DMA's watermark met at once
    // (no compaction_suitable, no run): its deferral reset twice, by
    // try_to_compact_pages and by the allocation.
    trace_on(&mut s);
    let (page, _) = s.alloc_pages_direct_compact(4, MigrateMode::Async);
    assert_eq!(page, Some(496));
    let (got, _) = lines(&mut s);
    assert_eq!(
        got,
        [
            "compaction:mm_compaction_try_to_compact_pages: order=4 \
             gfp_mask=GFP_TRANSHUGE|__GFP_NORETRY priority=2",
            "compaction:mm_compaction_deferred: node=0 zone=DMA32    order=4 \
             order_failed=0 consider=1 limit=2",
            "compaction:mm_compaction_defer_reset: node=0 zone=DMA      order=4 \
             order_failed=5 consider=0 limit=1",
            "compaction:mm_compaction_defer_reset: node=0 zone=DMA      order=4 \
             order_failed=5 consider=0 limit=1",
        ]
    );
    for p in [480, 496] {
        s.phys.free_block(p, 4);
    }
    s.node.free += 32;
    release(&mut s, &held);
}

#[test]
fn kcompactd_is_woken_runs_each_zone_and_sleeps() {
    let mut s = machine();
    let (_vma, held) = fragment_both(&mut s);
    s.compact.cfg.kcompactd = true;
    trace_on(&mut s);
    // kswapd's wakeup_kcompactd, then kcompactd's timer: kcompactd_do_work
    // (DMA first), then back to sleep.
    s.wakeup_kcompactd(4);
    let now = s.clock;
    s.kcompactd_timer(now);
    let tp = s.tp.as_ref().unwrap();
    let names = ["frag".to_string()];
    let first = tp.records[0].perf_script_line(&names);
    let last = tp.records.last().unwrap().perf_script_line(&names);
    assert!(
        first.starts_with("            frag    1000 [000] "),
        "{first}"
    );
    assert!(
        last.starts_with("      kcompactd0      81 [001] "),
        "{last}"
    );
    let (got, walking) = lines(&mut s);
    let suitable = |z: &str| {
        format!("compaction:mm_compaction_suitable: node=0 zone={z:<8} order=4 ret=continue")
    };
    let defer = |z: &str| {
        format!(
            "compaction:mm_compaction_defer_compaction: node=0 zone={z:<8} order=4 \
             order_failed=0 consider=0 limit=2"
        )
    };
    let expect = [
        "compaction:mm_compaction_wakeup_kcompactd: nid=0 order=4 classzone_idx=Normal  ".into(),
        "compaction:mm_compaction_kcompactd_wake: nid=0 order=4 classzone_idx=DMA32   ".into(),
        // DMA first: kcompactd_do_work's own suitability check, then compact_zone's.
        suitable("DMA"),
        suitable("DMA"),
        "compaction:mm_compaction_begin: zone_start=0x0 migrate_pfn=0x0 free_pfn=0x200 \
         zone_end=0x400, mode=sync"
            .into(),
        "compaction:mm_compaction_migratepages: nr_migrated=32 nr_failed=0".into(),
        "compaction:mm_compaction_migratepages: nr_migrated=4 nr_failed=28".into(),
        "compaction:mm_compaction_finished: node=0 zone=DMA      order=4 ret=complete".into(),
        "compaction:mm_compaction_end: zone_start=0x0 migrate_pfn=0x200 free_pfn=0x228 \
         zone_end=0x400, mode=sync status=complete"
            .into(),
        defer("DMA"),
        suitable("DMA32"),
        suitable("DMA32"),
        "compaction:mm_compaction_begin: zone_start=0x100000 migrate_pfn=0x100000 \
         free_pfn=0x101a00 zone_end=0x101c00, mode=sync"
            .into(),
        "compaction:mm_compaction_finished: node=0 zone=DMA32    order=4 ret=partial_skipped"
            .into(),
        "compaction:mm_compaction_end: zone_start=0x100000 migrate_pfn=0x101a00 \
         free_pfn=0x101a00 zone_end=0x101c00, mode=sync status=partial_skipped"
            .into(),
        defer("DMA32"),
        "compaction:mm_compaction_kcompactd_sleep: nid=0".to_string(),
    ];
    assert_eq!(walking, 15);
    assert_eq!(got, expect);
    release(&mut s, &held);
}
