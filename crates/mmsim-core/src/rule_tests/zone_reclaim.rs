//! Direct reclaim's `compaction_ready` passes and MGLRU's `should_abort_scan`
//! per zone (mm/vmscan.c, Linux v6.12: `shrink_zones`,
//! `do_try_to_free_pages`, `should_abort_scan`), with one zone and with
//! ZONE_DMA (`machine.dma_zone_pages`).

use super::thp::thp_machine_with;
use super::touch;
use crate::event::Event;
use crate::mem::folio::flags;
use crate::mem::pagetable::{PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG};
use crate::page_alloc::MigrateType;
use crate::readahead::Advice;
use crate::reclaim::{Reclaimer, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::sim::Sim;

/// Takes every free frame of the upper zone (after draining the per-CPU
/// list) out of `Node::free`, as memory the kernel holds; returns them.
fn hold_upper(s: &mut Sim) -> Vec<u64> {
    s.phys.drain_pages();
    let mut held = Vec::new();
    while let Some(p) = s.phys.zone.alloc_pages(0, MigrateType::Movable) {
        held.push(p);
    }
    s.node.free -= held.len() as u64;
    held
}

/// Shrinks the node by hand, one `shrink_node` pass per priority from
/// `DEF_PRIORITY` down, until `stop` holds after a pass (or the goal of
/// `SWAP_CLUSTER_MAX` is met); returns the passes and the pages reclaimed.
fn passes_until(s: &mut Sim, stop: impl Fn(&Sim) -> bool) -> (u32, u64) {
    let mut sc = ScanControl::new(Reclaimer::Direct, SWAP_CLUSTER_MAX, s.clock).on_cpus(s.smp.par);
    assert_eq!(sc.priority, DEF_PRIORITY);
    let mut passes = 0;
    loop {
        s.shrink_node(&mut sc);
        passes += 1;
        if stop(s) || sc.nr_reclaimed >= SWAP_CLUSTER_MAX || sc.priority == 0 {
            return (passes, sc.nr_reclaimed);
        }
        sc.priority -= 1;
    }
}

/// One zone of 8,192 pages with `compaction_ready`: 4,096 clean
/// page-cache pages read one by one (FADV_RANDOM), then every free frame
/// held and every even one given back (isolated order-0 pages: no order-4
/// block, a fragmentation index far above `extfrag_threshold`) up to the
/// high watermark + `compact_gap(4)`, where the zone is not
/// `compaction_ready` for order 4 (the check is strict) and any page
/// reclaimed makes it so.
fn one_zone_at_the_ready_mark() -> Sim {
    let mut s = thp_machine_with(8192, None, Default::default(), |c| {
        c.compaction.enabled = true;
        c.compaction.kcompactd = false;
        c.compaction.proactiveness = 0;
        c.compaction.compaction_ready = true;
    });
    let file = s.add_file("f", 4096).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    for index in 0..4096 {
        s.step(&Event::FileRead {
            file,
            index,
            pages: 1,
        });
    }
    let held = hold_upper(&mut s);
    let mark = s.node.wmark_high + (2 << 4);
    for p in held.into_iter().filter(|p| p % 2 == 0).take(mark as usize) {
        s.phys.free_block(p, 0);
        s.node.free += 1;
    }
    assert_eq!(s.phys.free_pages(), mark);
    assert_eq!(s.phys.zone.buddyinfo()[0], mark);
    assert!(s.compaction_suitable(4));
    assert!(!s.compaction_ready(4));
    s
}

#[test]
fn one_zone_made_compaction_ready_by_a_pass_gets_no_lower_priority() {
    // v6.12 shrink_zones checks compaction_ready before each pass of
    // do_try_to_free_pages' priority loop: the first pass (DEF_PRIORITY)
    // reclaims fewer than SWAP_CLUSTER_MAX pages, which lifts the zone over
    // high + compact_gap; the second pass finds it ready, skips the node
    // and breaks the loop. (Before, one zone was checked only before the
    // reclaim, and the loop went down the priorities to 32 pages.)
    let mut s = one_zone_at_the_ready_mark();
    s.try_to_free_pages_order(4, crate::gfp::GFP_HIGHUSER_MOVABLE);
    let mut by_hand = one_zone_at_the_ready_mark();
    let (passes, reclaimed) = passes_until(&mut by_hand, |s| s.compaction_ready(4));
    assert_eq!((passes, reclaimed), (1, 1));
    assert_eq!(s.vm.allocstall_normal, 1);
    assert_eq!(s.vm.pgscan_direct, by_hand.vm.pgscan_direct);
    assert_eq!(s.vm.pgsteal_direct, by_hand.vm.pgsteal_direct);
    assert!(s.compaction_ready(4));
    // Order 3 is not costly: no check, the loop goes on to the goal.
    let mut s = one_zone_at_the_ready_mark();
    s.try_to_free_pages_order(3, crate::gfp::GFP_HIGHUSER_MOVABLE);
    assert_eq!((s.vm.pgscan_direct, s.vm.pgsteal_direct), (58, 58));
}

/// A 32,768-page machine with swap, a 3,970-page DMA and
/// `compaction_ready`: `anon` anonymous pages (in DMA32), then every free
/// DMA32 frame held. DMA (all free) is `compaction_ready` for order 4,
/// DMA32 (nothing free) is not.
fn dma_ready_upper_not(anon: u32) -> Sim {
    let mut s = thp_machine_with(32768, Some(8192), Default::default(), |c| {
        c.dma_zone_pages = 3970;
        c.compaction.enabled = true;
        c.compaction.kcompactd = false;
        c.compaction.proactiveness = 0;
        c.compaction.compaction_ready = true;
    });
    let t = s.add_task("anon");
    let vma = s.mmap_anon(t, u64::from(anon)).unwrap();
    touch(&mut s, vma, anon);
    hold_upper(&mut s);
    assert_eq!(s.upper_free(), 0);
    assert!(!s.zone_compaction_ready(4, false));
    assert!(s.zone_compaction_ready(4, true));
    s
}

#[test]
fn dma_compaction_ready_and_dma32_not_shrinks_the_node_once() {
    // v6.12 shrink_zones, zonelist DMA32 then DMA: DMA32 is not ready, so
    // the node is shrunk at DEF_PRIORITY; DMA is ready and sets
    // sc->compaction_ready; do_try_to_free_pages breaks after that pass
    // though fewer than SWAP_CLUSTER_MAX pages were reclaimed: no second
    // priority pass, no retry. 24,576 anonymous pages, so that the pass
    // scans something (get_scan_count: 24,576 >> 12 = 6, times anon's
    // fraction 60/201 = 1 page; 8,192 pages would scan none, and one pass
    // could not be told from none).
    let mut s = dma_ready_upper_not(24576);
    let stalls = s.vm.allocstall_normal;
    s.try_to_free_pages_order(4, crate::gfp::GFP_HIGHUSER_MOVABLE);
    let mut by_hand = dma_ready_upper_not(24576);
    // The page scanned is the inactive anon list's tail, the task's page 0
    // (its VMA is the machine's first), young from its fault.
    let pte0 = |s: &Sim| s.vmas[0].pte(0);
    let p0 = pte0(&by_hand) & PTE_FOLIO_MASK;
    assert!(pte0(&by_hand) & PTE_YOUNG != 0);
    assert!(!by_hand.folios[p0].test(flags::REFERENCED));
    let (passes, reclaimed) = passes_until(&mut by_hand, |_| true);
    // v6.12 folio_check_references: one young PTE and no PG_referenced is
    // FOLIOREF_KEEP (the young bit cleared, PG_referenced set, neither
    // activated nor swapped out): none reclaimed in the pass.
    assert_eq!(
        (by_hand.vm.pgscan_direct, by_hand.vm.pgsteal_direct),
        (1, 0)
    );
    assert_eq!(pte0(&by_hand) & (PTE_YOUNG | PTE_PRESENT), PTE_PRESENT);
    assert!(by_hand.folios[p0].test(flags::REFERENCED));
    assert_eq!((by_hand.vm.pswpout, by_hand.vm.pgactivate), (0, 0));
    assert_eq!((passes, reclaimed), (1, 0));
    assert_eq!(s.vm.allocstall_normal, stalls + 1);
    assert_eq!((s.vm.pgscan_direct, s.vm.pgsteal_direct), (1, 0));
    // Order 3: no compaction_ready check, the priorities go on.
    let mut s = dma_ready_upper_not(8192);
    s.try_to_free_pages_order(3, crate::gfp::GFP_HIGHUSER_MOVABLE);
    assert_eq!((s.vm.pgscan_direct, s.vm.pgsteal_direct), (8249, 57));
}

/// A 32,768-page machine with swap and a 3,970-page DMA, all free, with
/// `dma` free pages left in DMA and `upper` in DMA32 (the rest held).
fn zones_with_free(dma: u64, upper: u64) -> Sim {
    let mut s = thp_machine_with(32768, Some(8192), Default::default(), |c| {
        c.dma_zone_pages = 3970;
    });
    let d = &mut s.phys.dma.as_mut().unwrap().zone;
    let n = d.free_pages() - dma;
    for _ in 0..n {
        d.alloc_pages(0, MigrateType::Movable).unwrap();
    }
    s.node.free -= n;
    s.phys.drain_pages();
    let n = s.phys.zone.free_pages() - upper;
    for _ in 0..n {
        s.phys.zone.alloc_pages(0, MigrateType::Movable).unwrap();
    }
    s.node.free -= n;
    assert_eq!(s.upper_free(), upper);
    s
}

#[test]
fn mglru_kswapd_aborts_only_when_every_zone_clears_high_plus_a_batch() {
    // v6.12 should_abort_scan (kswapd, order 0): every zone must pass
    // zone_watermark_ok(zone, 0, high + MIN_LRU_BATCH, reclaim_idx, 0),
    // free pages above the mark: DMA 63 + 64 + lowmem_reserve 112 = 239,
    // DMA32 476 + 64 = 540 (the watermarks of dma_zone.rs' first test).
    let abort = |dma: u64, upper: u64| {
        let s = zones_with_free(dma, upper);
        let sc = ScanControl::new(Reclaimer::Kswapd, 1 << 20, s.clock);
        s.should_abort_scan(&sc)
    };
    assert!(abort(3970, 28798));
    assert!(abort(240, 541));
    // DMA at its mark: no abort, though the node's sums (the check before)
    // are far above the node's high watermark 539 + 64.
    assert!(!abort(239, 28798));
    assert!(!abort(3970, 540));
    // Direct reclaim never aborts on watermarks; kswapd on its goal.
    let s = zones_with_free(3970, 28798);
    let sc = ScanControl::new(Reclaimer::Direct, 1 << 20, s.clock);
    assert!(!s.should_abort_scan(&sc));
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, s.clock);
    sc.nr_reclaimed = 32;
    assert!(s.should_abort_scan(&sc));
    assert!(!abort(0, 0));
}

#[test]
fn mglru_kswapd_abort_on_one_zone_is_strict_and_order_0_only() {
    // v6.12 should_abort_scan: `__zone_watermark_ok` fails at free ==
    // high + MIN_LRU_BATCH (it needs more), and kswapd reclaiming for a
    // higher order (`sc->order`, which `kswapd_step` takes from
    // `kswapd_reclaim_order`) never aborts on watermarks.
    let mut s = thp_machine_with(32768, Some(8192), Default::default(), |_| {});
    let mark = s.node.wmark_high + crate::reclaim::lru_gen::MIN_LRU_BATCH;
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 1 << 20, s.clock);
    s.node.free = mark;
    assert!(!s.should_abort_scan(&sc));
    s.node.free = mark + 1;
    assert!(s.should_abort_scan(&sc));
    sc.order = 4;
    assert!(!s.should_abort_scan(&sc));
}
