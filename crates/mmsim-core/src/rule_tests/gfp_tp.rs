//! The allocation's own gfp mask and `highest_zoneidx` in the tracepoints
//! (`crate::gfp`, v6.12): `vma_thp_gfp_mask` per `defrag` setting and
//! advice, printed by `mm_compaction_try_to_compact_pages`; the
//! `classzone_idx` of `mm_compaction_wakeup_kcompactd` from the waker's
//! `highest_zoneidx`; khugepaged's events under its own task.

use super::dma_compact::{fragment_both, machine, release};
use super::thp::thp_machine_with;
use super::*;
use crate::gfp::ShowGfp;
use crate::huge_memory::{ThpConfig, ThpDefrag, ThpEnabled, VmaThpAdvice};
use crate::khugepaged::KhugepagedConfig;
use crate::tracepoint::{TpTask, TracepointConfig, Tracer};

fn trace_on(s: &mut Sim, events: &[&str]) {
    s.tp = Tracer::new(&TracepointConfig {
        events: events.iter().map(|e| e.to_string()).collect(),
        max_events: 100_000,
        ..Default::default()
    });
}

/// The kept events as `name: fields`, those named `keep` only.
fn lines(s: &mut Sim, keep: &[&str]) -> Vec<String> {
    let tp = s.tp.take().unwrap();
    tp.records
        .iter()
        .map(|r| format!("{}: {}", r.event.name(), r.event))
        .filter(|l| keep.iter().any(|k| l.contains(k)))
        .collect()
}

#[test]
fn vma_thp_gfp_mask_prints_as_the_6_12_kernel_prints_it() {
    let show = |defrag, madv| {
        let cfg = ThpConfig {
            defrag,
            ..Default::default()
        };
        let g = cfg.gfp_for(madv);
        // The flags the slow path reads are the mask's bits.
        assert_eq!(g.direct, g.mask & crate::gfp::__GFP_DIRECT_RECLAIM != 0);
        assert_eq!(g.kswapd, g.mask & crate::gfp::__GFP_KSWAPD_RECLAIM != 0);
        assert_eq!(g.noretry, g.mask & crate::gfp::__GFP_NORETRY != 0);
        [ShowGfp(g.mask).to_string()]
    };
    use ThpDefrag::*;
    let got: Vec<[String; 2]> = [Always, Defer, DeferMadvise, Madvise, Never]
        .into_iter()
        .map(|d| [show(d, false)[0].clone(), show(d, true)[0].clone()])
        .collect();
    let want = [
        ["GFP_TRANSHUGE|__GFP_NORETRY", "GFP_TRANSHUGE"],
        [
            "GFP_TRANSHUGE_LIGHT|GFP_NOWAIT",
            "GFP_TRANSHUGE_LIGHT|GFP_NOWAIT",
        ],
        ["GFP_TRANSHUGE_LIGHT|GFP_NOWAIT", "GFP_TRANSHUGE"],
        ["GFP_TRANSHUGE_LIGHT", "GFP_TRANSHUGE"],
        ["GFP_TRANSHUGE_LIGHT", "GFP_TRANSHUGE_LIGHT"],
    ];
    assert_eq!(got, want.map(|p| p.map(String::from)));
}

#[test]
fn a_madv_hugepage_fault_compacts_with_gfp_transhuge() {
    // defrag = always in a MADV_HUGEPAGE VMA: GFP_TRANSHUGE, no
    // __GFP_NORETRY (under defrag = always outside it the same call prints
    // GFP_TRANSHUGE|__GFP_NORETRY: compaction_tp.rs).
    let mut s = machine();
    let (_vma, held) = fragment_both(&mut s);
    trace_on(&mut s, &["compaction:*"]);
    let gfp = s.thp.gfp[1];
    let page = s.alloc_slowpath_compact(4, gfp);
    let got = lines(&mut s, &["try_to_compact_pages", "wakeup_kcompactd"]);
    assert_eq!(
        got,
        [
            "compaction:mm_compaction_try_to_compact_pages: order=4 gfp_mask=GFP_TRANSHUGE \
             priority=2",
        ]
    );
    // The page, in ZONE_DMA (no sync-light call followed).
    assert_eq!(page, Some(96));
    if let Some(p) = page {
        s.phys.free_block(p, 4);
        s.node.free += 16;
    }
    release(&mut s, &held);
}

#[test]
fn wakeup_kcompactd_prints_the_wakers_highest_zoneidx() {
    let mut s = machine();
    s.compact.cfg.kcompactd = true;
    let (_vma, held) = fragment_both(&mut s);
    trace_on(&mut s, &["compaction:*"]);
    // kswapd has not run: its classzone is kswapd()'s initial ZONE_NORMAL.
    assert_eq!(s.kswapd_classzone(), 2);
    s.wakeup_kcompactd(4);
    // An allocation's own wakeup (GFP_HIGHUSER_MOVABLE: ZONE_MOVABLE).
    s.wakeup_kcompactd_zone(4, 3);
    // kcompactd_wake: the lowest of the two, capped at the node's top zone.
    let now = s.clock;
    s.kcompactd_timer(now);
    let got = lines(&mut s, &["wakeup_kcompactd", "kcompactd_wake"]);
    assert_eq!(
        got,
        [
            "compaction:mm_compaction_wakeup_kcompactd: nid=0 order=4 classzone_idx=Normal  ",
            "compaction:mm_compaction_wakeup_kcompactd: nid=0 order=4 classzone_idx=Movable ",
            "compaction:mm_compaction_kcompactd_wake: nid=0 order=4 classzone_idx=DMA32   ",
        ]
    );
    // kcompactd_do_work reset kcompactd_highest_zoneidx to nr_zones - 1.
    assert_eq!(s.compact.kcompactd_highest_zoneidx, None);
    release(&mut s, &held);
}

/// A task stores to a 4000-page anonymous VMA page by page until an
/// anonymous fault (GFP_HIGHUSER_MOVABLE) wakes kswapd.
fn fill_until_kswapd_runs(s: &mut Sim) {
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 4000).unwrap();
    let mut index = 0;
    while !s.kswapd.running {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
        index += 1;
    }
}

#[test]
fn kswapds_classzone_is_its_wakers_highest_zoneidx() {
    let mut s = thp_machine_with(4096, Some(8192), ThpConfig::default(), |_| {});
    // kswapd() starts with highest_zoneidx = ZONE_NORMAL.
    assert_eq!(s.kswapd_classzone(), 2);
    fill_until_kswapd_runs(&mut s);
    // An anonymous fault (GFP_HIGHUSER_MOVABLE) woke it: ZONE_MOVABLE,
    // read by the run it started (kswapd_highest_zoneidx back to MAX_NR_ZONES).
    assert_eq!(
        (s.kswapd_classzone(), s.compact.kswapd_highest_zoneidx),
        (3, None)
    );
    // rmqueue's boost wakeup while it runs: recorded for the next run only.
    s.wakeup_kswapd_zone(0, 2, 0);
    assert_eq!(
        (s.kswapd_classzone(), s.compact.kswapd_highest_zoneidx),
        (3, Some(2))
    );
    // A later user allocation raises it to ZONE_MOVABLE (the maximum).
    s.wakeup_kswapd_at(0);
    assert_eq!(s.compact.kswapd_highest_zoneidx, Some(3));
}

#[test]
fn khugepaged_reclaims_and_compacts_as_khugepaged() {
    // khugepaged_global_direct_reclaim_counts_on_the_node_as_khugepaged's
    // machine with compaction: its GFP_TRANSHUGE allocation's compactions
    // and direct reclaim are khugepaged's (pid 82, CPU 1).
    let thp = ThpConfig {
        enabled: ThpEnabled::Madvise,
        khugepaged: KhugepagedConfig {
            run: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut s = thp_machine_with(4096, Some(8192), thp, |c| {
        c.compaction.enabled = true;
        c.compaction.kcompactd = false;
        c.compaction.proactiveness = 0;
    });
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    let other = s.mmap_anon(t, 3300).unwrap();
    for (v, n) in [(vma, 512), (other, 3300)] {
        for index in 0..n {
            s.step(&Event::Access {
                vma: v,
                index,
                write: true,
            });
        }
    }
    trace_on(
        &mut s,
        &["compaction:*", "vmscan:mm_vmscan_direct_reclaim_begin"],
    );
    s.madvise_thp(vma, VmaThpAdvice::Hugepage).unwrap();
    s.step(&Event::Think { ns: 1 });
    let tp = s.tp.as_ref().unwrap();
    assert!(!tp.records.is_empty());
    assert!(tp.records.iter().all(|r| r.task == TpTask::Khugepaged));
    let l = tp.records[0].perf_script_line(&["t".into()]);
    assert!(l.starts_with("      khugepaged      82 [001] "), "{l}");
    let got = lines(&mut s, &["try_to_compact_pages", "direct_reclaim_begin"]);
    // The async compaction prints khugepaged's GFP_TRANSHUGE (defrag = 1),
    // and so does the direct reclaim it enters after (v6.12
    // `try_to_free_pages` traces the allocation's order and mask).
    assert_eq!(
        got,
        [
            "compaction:mm_compaction_try_to_compact_pages: order=9 gfp_mask=GFP_TRANSHUGE \
             priority=2",
            "vmscan:mm_vmscan_direct_reclaim_begin: order=9 gfp_flags=GFP_TRANSHUGE",
        ]
    );
}

#[test]
fn direct_reclaim_begin_prints_the_allocations_order_and_mask() {
    // defrag = always outside MADV_HUGEPAGE: GFP_TRANSHUGE|__GFP_NORETRY
    // (vma_thp_gfp_mask); no compaction configured, so a PMD-size
    // allocation below the low watermark goes straight to direct reclaim.
    let thp = ThpConfig {
        defrag: ThpDefrag::Always,
        ..Default::default()
    };
    let mut s = thp_machine_with(4096, Some(8192), thp, |_| {});
    fill_until_kswapd_runs(&mut s);
    trace_on(&mut s, &["vmscan:mm_vmscan_direct_reclaim_begin"]);
    let gfp = s.thp.gfp[0];
    let _ = s.rmqueue_large(9, gfp);
    // An order-0 anonymous page (`crate::gfp::GFP_ANON_FOLIO`).
    s.try_to_free_pages_order(0, crate::gfp::GFP_ANON_FOLIO);
    let got = lines(&mut s, &["direct_reclaim_begin"]);
    assert_eq!(
        got,
        [
            "vmscan:mm_vmscan_direct_reclaim_begin: order=9 \
             gfp_flags=GFP_TRANSHUGE|__GFP_NORETRY",
            "vmscan:mm_vmscan_direct_reclaim_begin: order=0 \
             gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO",
        ]
    );
}
