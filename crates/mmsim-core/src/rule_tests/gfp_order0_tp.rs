//! Each allocation's own mask in the reclaim tracepoints (issue #13, v6.12):
//! order-0 allocations that are not anonymous pages (page tables,
//! readahead, page-cache misses) print theirs in
//! `mm_vmscan_direct_reclaim_begin`, a page table wakes kswapd with
//! ZONE_NORMAL (`gfp_zone(GFP_PGTABLE_USER)`), and memcg reclaim prints
//! `crate::gfp::memcg_reclaim_mask` of the charge's mask (a THP charge's
//! `vma_thp_gfp_mask`, a readahead charge's `readahead_gfp_mask`).

use super::thp::thp_machine_with;
use super::*;
use crate::huge_memory::{ThpConfig, ThpDefrag, ThpEnabled};
use crate::tracepoint::{TracepointConfig, Tracer};

fn trace_on(s: &mut Sim, event: &str) {
    s.tp = Tracer::new(&TracepointConfig {
        events: vec![event.to_string()],
        max_events: 100_000,
        ..Default::default()
    });
}

/// The kept events' fields.
fn fields(s: &mut Sim) -> Vec<String> {
    let tp = s.tp.take().unwrap();
    tp.records.iter().map(|r| r.event.to_string()).collect()
}

/// 1,000 anonymous pages written (reclaimable: swap is on), then the
/// node's free pages taken down to its min watermark, so that the next
/// order-0 allocation wakes kswapd and enters direct reclaim once.
fn at_min_watermark(page_tables: bool) -> (Sim, u32) {
    let mut s = machine(PolicyName::Cost, 4096, Some(8192));
    if page_tables {
        s.cfg.kmem_accounting = true;
        s.kmem = Some(Default::default());
        s.cfg.pagetable_frames = true;
    }
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1000).unwrap();
    touch(&mut s, vma, 1000);
    s.phys.drain_pages();
    while s.node.free > s.node.wmark_min {
        let mt = crate::page_alloc::MigrateType::Movable;
        s.phys.zone.alloc_pages(0, mt).unwrap();
        s.node.free -= 1;
    }
    assert!(!s.kswapd.running);
    (s, t)
}

#[test]
fn a_page_table_reclaims_with_its_mask_and_wakes_kswapd_for_zone_normal() {
    let (mut s, t) = at_min_watermark(true);
    trace_on(&mut s, "vmscan:mm_vmscan_direct_reclaim_begin");
    // A fresh VMA's first store: its page tables come first (pte_alloc
    // before do_anonymous_page's folio), the first of them reclaims.
    let vma = s.mmap_anon(t, 1 << 20).unwrap();
    touch(&mut s, vma, 1);
    assert_eq!(
        fields(&mut s),
        ["order=0 gfp_flags=GFP_KERNEL_ACCOUNT|__GFP_COMP|__GFP_ZERO"]
    );
    // Its wakeup started kswapd's run with ZONE_NORMAL (the reclaim left
    // the anonymous folio's allocation above the low watermark).
    assert_eq!(
        (s.kswapd_classzone(), s.compact.kswapd_highest_zoneidx),
        (2, None)
    );
}

#[test]
fn an_anonymous_fault_reclaims_with_its_mask_and_wakes_kswapd_for_zone_movable() {
    let (mut s, t) = at_min_watermark(false);
    trace_on(&mut s, "vmscan:mm_vmscan_direct_reclaim_begin");
    let vma = s.mmap_anon(t, 16).unwrap();
    touch(&mut s, vma, 1);
    assert_eq!(
        fields(&mut s),
        ["order=0 gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO"]
    );
    assert_eq!(s.kswapd_classzone(), 3);
}

#[test]
fn readahead_reclaims_with_readahead_gfp_mask_a_write_miss_with_the_mappings() {
    // A read, under FADV_RANDOM too (v6.12 `page_cache_sync_ra` →
    // `force_page_cache_ra`: readahead's mask and nofs scope), then a
    // write miss (`__filemap_get_folio(…, mapping_gfp_mask)`).
    let ra = "order=0 gfp_flags=GFP_NOFS|__GFP_HIGHMEM|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|\
              __GFP_HARDWALL|__GFP_MOVABLE";
    let write = "order=0 gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_COMP";
    for (random, write_it, want) in [(false, false, ra), (true, false, ra), (false, true, write)] {
        let (mut s, t) = at_min_watermark(false);
        let file = s.add_file("f", 64).unwrap();
        s.open(file, t).unwrap();
        if random {
            s.fadvise(file, Advice::Random).unwrap();
        }
        trace_on(&mut s, "vmscan:mm_vmscan_direct_reclaim_begin");
        let (index, pages) = (0, 1);
        s.step(&if write_it {
            Event::FileWrite { file, index, pages }
        } else {
            Event::FileRead { file, index, pages }
        });
        assert_eq!(
            fields(&mut s),
            [want],
            "random = {random}, write = {write_it}"
        );
    }
}

#[test]
fn memcg_reclaim_prints_the_charges_mask() {
    // A THP fault (defrag = always: GFP_TRANSHUGE|__GFP_NORETRY) in a group
    // of 100 pages: its 512-page charge reclaims with that mask, without
    // __GFP_KSWAPD_RECLAIM (not in GFP_RECLAIM_MASK nor in the part of
    // GFP_HIGHUSER_MOVABLE outside it), then fails and falls back.
    let thp = ThpConfig {
        enabled: ThpEnabled::Always,
        defrag: ThpDefrag::Always,
        ..Default::default()
    };
    let mut s = thp_machine_with(8192, Some(8192), thp, |_| {});
    let m = s.add_memcg(crate::memcg::ROOT, "g").unwrap();
    let t = s.add_task("t");
    s.attach_task(t, m).unwrap();
    s.set_memcg_max(m, 100).unwrap();
    let vma = s.mmap_anon(t, 1024).unwrap();
    trace_on(&mut s, "vmscan:mm_vmscan_memcg_reclaim_begin");
    touch(&mut s, vma, 1);
    let got = fields(&mut s);
    let want = "order=0 gfp_flags=__GFP_HIGHMEM|__GFP_IO|__GFP_FS|__GFP_NOWARN|__GFP_NORETRY|\
                __GFP_NOMEMALLOC|__GFP_HARDWALL|__GFP_MOVABLE|__GFP_DIRECT_RECLAIM";
    assert!(!got.is_empty());
    assert!(got.iter().all(|l| l == want), "{got:?}");
    // Readahead's charge in a group at its limit: readahead_gfp_mask in
    // its nofs scope; a write miss's: the mapping's GFP_HIGHUSER_MOVABLE.
    for (write_it, want) in [
        (
            false,
            "order=0 gfp_flags=GFP_NOFS|__GFP_HIGHMEM|__GFP_NOWARN|__GFP_NORETRY|__GFP_HARDWALL|\
             __GFP_MOVABLE",
        ),
        (true, "order=0 gfp_flags=GFP_HIGHUSER_MOVABLE"),
    ] {
        let mut s = machine(PolicyName::Cost, 8192, None);
        let m = s.add_memcg(crate::memcg::ROOT, "g").unwrap();
        let t = s.add_task("t");
        s.attach_task(t, m).unwrap();
        s.set_memcg_max(m, 64).unwrap();
        let file = s.add_file("f", 400).unwrap();
        s.open(file, t).unwrap();
        trace_on(&mut s, "vmscan:mm_vmscan_memcg_reclaim_begin");
        for index in 0..400 {
            let pages = 1;
            s.step(&if write_it {
                Event::FileWrite { file, index, pages }
            } else {
                Event::FileRead { file, index, pages }
            });
        }
        let got = fields(&mut s);
        assert!(!got.is_empty(), "write = {write_it}");
        assert!(got.iter().all(|l| l == want), "write = {write_it}: {got:?}");
    }
}
