//! The node's second zone (`machine.dma_zone_pages`, `crate::mmzone`):
//! per-zone watermarks (`__setup_per_zone_wmarks`), DMA's `lowmem_reserve`
//! (`setup_per_zone_lowmem_reserve`) and the zonelist walk of
//! `get_page_from_freelist` (Linux v6.12).

use super::fault_anon;
use super::thp::thp_machine_with;
use crate::page_alloc::NORMAL_START_PFN;
use crate::sim::Sim;

/// A 32,768-page (128 MiB) machine with swap and `dma_zone_pages` = `dma`.
fn dma_machine(dma: u64) -> Sim {
    thp_machine_with(32768, Some(8192), Default::default(), |c| {
        c.dma_zone_pages = dma;
    })
}

#[test]
fn watermarks_are_split_by_managed_pages_and_dma_reserves_a_256th_of_the_upper_zone() {
    let s = dma_machine(3970);
    let d = s.phys.dma.as_ref().unwrap();
    // min_free_kbytes = int_sqrt(128 MiB in kB × 16) = 1448: pages_min 362.
    // DMA: 362 × 3970 / 32768 = 43; gap max(43 / 4, 3970 × 10 / 10000) = 10.
    assert_eq!((d.wmark.min, d.wmark.low, d.wmark.high), (43, 53, 63));
    // DMA32: 362 × 28798 / 32768 = 318; gap max(79, 28) = 79.
    let u = d.upper_wmark;
    assert_eq!((u.min, u.low, u.high), (318, 397, 476));
    // lowmem_reserve[ZONE_MOVABLE] of DMA: 28798 / 256.
    assert_eq!(d.lowmem_reserve, 112);
    assert_eq!(
        (s.node.wmark_min, s.node.wmark_low, s.node.wmark_high),
        (361, 450, 539)
    );
    assert_eq!(
        (d.zone.name, d.zone.start_pfn, d.zone.spanned_pages),
        ("DMA", 0, 3970)
    );
    let z = &s.phys.zone;
    assert_eq!(
        (z.name, z.start_pfn, z.spanned_pages),
        ("DMA32", NORMAL_START_PFN, 28798)
    );
    assert_eq!((s.node.free, s.phys.free_pages()), (32768, 32768));
    // One zone (the default): the node's own watermarks, as before.
    let s = dma_machine(0);
    assert!(s.phys.dma.is_none());
    assert_eq!(
        (s.node.wmark_min, s.node.wmark_low, s.node.wmark_high),
        (362, 452, 542)
    );
    assert_eq!(s.node.fast_low, s.node.wmark_low);
}

/// Faults anonymous pages from index `*i` on until `done`.
fn fault_until(s: &mut Sim, vma: u32, i: &mut u32, done: impl Fn(&Sim) -> bool) {
    while !done(s) {
        fault_anon(s, vma, *i);
        *i += 1;
    }
}

#[test]
fn below_the_upper_zones_low_watermark_pages_come_from_dma_until_its_low_plus_reserve() {
    let mut s = dma_machine(3970);
    let t = s.add_task("anon");
    let vma = s.mmap_anon(t, 32768).unwrap();
    let dma_free = |s: &Sim| s.phys.dma.as_ref().unwrap().zone.free_pages();
    let mut i = 0;
    // DMA32 down to its low watermark (397) + 1: every page was DMA32's.
    fault_until(&mut s, vma, &mut i, |s| s.upper_free() == 398);
    assert_eq!((dma_free(&s), s.vm.pageoutrun), (3970, 0));
    let f = fault_anon(&mut s, vma, i);
    assert!(u64::from(s.folios.head_pfn(f)) >= NORMAL_START_PFN);
    assert_eq!((s.upper_free(), dma_free(&s)), (397, 3970));
    // At its low watermark DMA32 fails zone_watermark_fast; DMA (3970 free
    // > low 53 + reserve 112) gives the page (its smallest block: the
    // order-1 block at PFN 3968 that ends the zone, split), and kswapd
    // sleeps on.
    let f = fault_anon(&mut s, vma, i + 1);
    assert_eq!(s.folios.head_pfn(f), 3968);
    assert_eq!(
        (s.upper_free(), dma_free(&s), s.vm.pageoutrun),
        (397, 3969, 0)
    );
    i += 2;
    // DMA gives pages down to low + reserve = 165, still without kswapd.
    fault_until(&mut s, vma, &mut i, |s| dma_free(s) == 165);
    assert_eq!(
        (s.upper_free(), s.vm.pageoutrun, i),
        (397, 0, 28798 - 397 + 3970 - 165)
    );
    // Neither zone is balanced (DMA 165 <= high 63 + reserve 112, DMA32 397
    // <= 476) though the node's 562 free pages are above the zones' summed
    // high watermark, 539: pgdat_balanced (any zone) is false.
    assert!(!s.pgdat_balanced_zoned(0));
    assert!(s.node.free > s.node.wmark_high);
    // Both zones fail the low watermark: the slow path wakes kswapd and
    // takes the page at the min watermark from DMA32 (397 > 318).
    fault_anon(&mut s, vma, i);
    assert_eq!(
        (s.upper_free(), dma_free(&s), s.vm.pageoutrun),
        (396, 165, 1)
    );
    s.check_invariants().unwrap();
}

#[test]
fn the_node_is_balanced_when_dma_is_while_the_upper_zone_is_below_its_high_watermark() {
    let mut s = dma_machine(3970);
    let t = s.add_task("anon");
    let vma = s.mmap_anon(t, 32768).unwrap();
    // Memory the kernel takes from DMA (frames of no folio).
    let take_dma = |s: &mut Sim, n: u64| {
        let d = s.phys.dma.as_mut().unwrap();
        for _ in 0..n {
            d.zone
                .alloc_pages(0, crate::page_alloc::MigrateType::Movable)
                .unwrap();
        }
        s.node.free -= n;
    };
    let mut i = 0;
    fault_until(&mut s, vma, &mut i, |s| s.upper_free() == 400);
    // DMA32 below its high watermark (476), DMA (3970 > 63 + 112) balanced.
    assert!(s.pgdat_balanced_zoned(0));
    // DMA at high + reserve + 1: still balanced; at high + reserve: not.
    take_dma(&mut s, 3970 - 176);
    assert!(s.pgdat_balanced_zoned(0));
    take_dma(&mut s, 1);
    assert!(!s.pgdat_balanced_zoned(0));
}

#[test]
fn kswapd_reclaims_the_sum_over_zones_of_max_high_and_swap_cluster_max() {
    // 3970-page DMA: 63 + 476 (the zones' high watermarks).
    assert_eq!(dma_machine(3970).kswapd_nr_to_reclaim(), 539);
    // A 512-page DMA's high watermark is 7 (min 362 × 512 / 32768 = 5, gap
    // 1): SWAP_CLUSTER_MAX (32) counts for it; DMA32's high is 356 + 2 × 89.
    let s = dma_machine(512);
    assert_eq!(s.phys.dma.as_ref().unwrap().wmark.high, 7);
    assert_eq!(s.kswapd_nr_to_reclaim(), 32 + 534);
    // One zone: max(high, 32) of the node.
    assert_eq!(dma_machine(0).kswapd_nr_to_reclaim(), 542);
}

#[test]
fn costly_direct_reclaim_skips_the_node_only_when_every_zone_is_compaction_ready() {
    let mut s = dma_machine(3970);
    // All free: an order-4 allocation could succeed in both zones.
    assert!(s.compaction_ready(4));
    // DMA with 150 free pages: 150 - 15 <= min 43 + reserve 112 and not
    // suitable (150 <= low 53 + 112 + compact_gap 32): DMA is not ready, so
    // the node is shrunk though DMA32 is all free (for one pass only:
    // DMA32 being ready stops do_try_to_free_pages after it, the test
    // below).
    let d = s.phys.dma.as_mut().unwrap();
    for _ in 0..3970 - 150 {
        d.zone
            .alloc_pages(0, crate::page_alloc::MigrateType::Movable)
            .unwrap();
    }
    s.node.free -= 3970 - 150;
    assert!(!s.compaction_ready(4));
}

#[test]
fn the_dirty_limits_count_both_zones_free_pages_and_reserves() {
    // v6.12 global_dirtyable_memory(): NR_FREE_PAGES of both zones less
    // totalreserve_pages = DMA's (high 63 + lowmem_reserve 112) + DMA32's
    // high 476 = 651, plus the file pages (none yet), plus 1.
    let s = dma_machine(3970);
    assert_eq!(s.totalreserve_pages(), 651);
    assert_eq!(s.global_dirtyable_memory(), 32768 - 651 + 1);
}

/// A 32,768-page machine with a 3,970-page DMA and `compaction_ready` on,
/// 8,192 anonymous pages faulted (all in the upper zone, which stays
/// `compaction_ready` for order 4), then DMA's free pages taken down to 150
/// (not ready, the test above).
fn mixed_compaction_ready() -> Sim {
    let mut s = thp_machine_with(32768, Some(8192), Default::default(), |c| {
        c.dma_zone_pages = 3970;
        c.compaction.enabled = true;
        c.compaction.compaction_ready = true;
    });
    let t = s.add_task("anon");
    let vma = s.mmap_anon(t, 8192).unwrap();
    for i in 0..8192 {
        fault_anon(&mut s, vma, i);
    }
    let d = s.phys.dma.as_mut().unwrap();
    let take = d.zone.free_pages() - 150;
    for _ in 0..take {
        d.zone
            .alloc_pages(0, crate::page_alloc::MigrateType::Movable)
            .unwrap();
    }
    s.node.free -= take;
    assert!(s.zone_compaction_ready(4, false));
    assert!(!s.zone_compaction_ready(4, true));
    s
}

#[test]
fn costly_direct_reclaim_with_one_zone_compaction_ready_stops_after_one_pass() {
    use crate::reclaim::{Reclaimer, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
    // v6.12 shrink_zones: DMA32 (the upper zone) is compaction_ready, so
    // it is skipped and sets sc->compaction_ready; DMA is not, so the node
    // is shrunk once at DEF_PRIORITY; do_try_to_free_pages then breaks
    // though fewer than SWAP_CLUSTER_MAX pages were reclaimed, and does
    // not retry.
    let mut s = mixed_compaction_ready();
    let stalls = s.vm.allocstall_normal;
    s.try_to_free_pages_order(4, crate::gfp::GFP_HIGHUSER_MOVABLE);
    // The same machine, one shrink_node pass at DEF_PRIORITY by hand.
    let mut one = mixed_compaction_ready();
    let mut sc =
        ScanControl::new(Reclaimer::Direct, SWAP_CLUSTER_MAX, one.clock).on_cpus(one.smp.par);
    assert_eq!(sc.priority, DEF_PRIORITY);
    one.shrink_node(&mut sc);
    assert!(sc.nr_reclaimed < SWAP_CLUSTER_MAX);
    assert_eq!(s.vm.allocstall_normal, stalls + 1);
    assert_eq!(s.vm.pgscan_direct, one.vm.pgscan_direct);
    assert_eq!(s.vm.pgsteal_direct, one.vm.pgsteal_direct);
    // Order 3 is not costly: the whole priority loop (more scanned).
    let mut s = mixed_compaction_ready();
    s.try_to_free_pages_order(3, crate::gfp::GFP_HIGHUSER_MOVABLE);
    assert!(s.vm.pgscan_direct > one.vm.pgscan_direct);
}
