//! Watermark boosting (`machine.policy.watermark_boost_factor`,
//! `crate::page_alloc_boost`; mm/page_alloc.c and mm/vmscan.c v6.12):
//! `boost_watermark()` at a fallback steal below `pageblock_order`, the
//! wakeup of kswapd that ZONE_BOOSTED_WATERMARK makes, and kswapd's boosted
//! reclaim (no swap, no writes, the boost cleared, kcompactd woken at
//! `pageblock_order`).

use super::boost_setup::{boost_and_run_kswapd, boost_machine, file_pages, random_file};
use super::*;
use crate::page_alloc::{MigrateType, Zone, NORMAL_START_PFN, PAGEBLOCK_NR_PAGES};
use crate::page_alloc_boost::ZoneBoost;

/// A zone of `pages` pages with the given factor and high watermark, every
/// frame allocated movable and then, in each pageblock, its first four pages
/// freed as one order-2 block: the only free memory is below
/// `pageblock_order`, each block too little to claim its pageblock.
fn fragmented_zone(pages: u64, factor: u32, high: u64) -> Zone {
    let mut z = Zone::new("Normal", NORMAL_START_PFN, pages);
    z.boost = ZoneBoost {
        factor,
        wmark: [0, 0, high],
        ..Default::default()
    };
    while z.alloc_pages(0, MigrateType::Movable).is_some() {}
    for b in 0..pages / PAGEBLOCK_NR_PAGES {
        z.free_pages_block(NORMAL_START_PFN + b * PAGEBLOCK_NR_PAGES, 2);
    }
    z
}

/// The boost after each of `n` unmovable order-0 allocations.
fn boosts(z: &mut Zone, n: usize) -> Vec<u64> {
    (0..n)
        .map(|_| {
            z.alloc_pages(0, MigrateType::Unmovable).unwrap();
            z.boost.boost
        })
        .collect()
}

#[test]
fn each_steal_boosts_by_a_pageblock_up_to_max_boost() {
    // 65536 pages, high 768, factor 15000: max_boost = 768 × 1.5 = 1152.
    // Each unmovable page falls back to a movable pageblock's order-2 block
    // (the largest-first search takes a fresh one each time), which it may
    // not claim (4 free pages + 0 unmovable < 256): every allocation is a
    // steal and boosts by 512.
    let mut z = fragmented_zone(1 << 16, 15_000, 768);
    assert_eq!(boosts(&mut z, 4), [512, 1024, 1152, 1152]);
    assert!(z.boost.pending);
    // max_boost below a pageblock (high 100: 150) is raised to one.
    let mut z = fragmented_zone(1 << 16, 15_000, 100);
    assert_eq!(boosts(&mut z, 2), [512, 512]);
    // Factor 0: off.
    let mut z = fragmented_zone(1 << 16, 0, 768);
    assert_eq!(boosts(&mut z, 2), [0, 0]);
    assert!(!z.boost.pending);
    // The small-zone guard: fewer than four pageblocks' pages
    // (`pageblock_nr_pages * 4 > managed`): 2047 pages never boost, 2048 do.
    let mut z = fragmented_zone(2047, 15_000, 768);
    assert_eq!(boosts(&mut z, 2), [0, 0]);
    let mut z = fragmented_zone(2048, 15_000, 768);
    assert_eq!(boosts(&mut z, 2), [512, 1024]);
    // No high watermark yet (max_boost 0): no boost.
    let mut z = fragmented_zone(1 << 16, 15_000, 0);
    assert_eq!(boosts(&mut z, 2), [0, 0]);
}

#[test]
fn a_steal_of_a_pageblock_or_more_does_not_boost() {
    // An untouched zone: the first unmovable page takes an order-10 movable
    // block whole (`current_order >= pageblock_order` returns before the boost).
    let mut z = Zone::new("Normal", NORMAL_START_PFN, 1 << 16);
    z.boost = ZoneBoost {
        factor: 15_000,
        wmark: [0, 0, 768],
        ..Default::default()
    };
    assert_eq!(boosts(&mut z, 1), [0]);
    assert_eq!(
        z.pagetypeinfo().pageblocks[MigrateType::Unmovable as usize],
        2
    );
}

/// Takes every free frame of the zone as `mt` pages (the kernel's, no
/// folio; unmovable ones claim each pageblock for their type), then gives
/// back the first half of each pageblock as an order-8 block: half the
/// machine free, none of it in a block of `pageblock_order`.
pub(super) fn fragment(s: &mut Sim, mt: MigrateType) {
    s.phys.drain_pages();
    let mut taken = 0;
    while s.phys.zone.alloc_pages(0, mt).is_some() {
        taken += 1;
    }
    s.node.free -= taken;
    for b in 0..s.node.managed / PAGEBLOCK_NR_PAGES {
        s.phys
            .zone
            .free_pages_block(NORMAL_START_PFN + b * PAGEBLOCK_NR_PAGES, 8);
        s.node.free += PAGEBLOCK_NR_PAGES / 2;
    }
}

#[test]
fn a_boosting_steal_wakes_kswapd_on_a_balanced_node() {
    for factor in [15_000, 0] {
        let mut s = boost_machine(factor);
        fragment(&mut s, MigrateType::Movable);
        assert_eq!(s.node.free, 32_768);
        let t = s.add_task("t");
        let vma = s.mmap_anon(t, 64).unwrap();
        // The fault's first page-table page finds no unmovable page and
        // steals an order-8 movable block (claiming its pageblock, 256 free
        // of 512): one boost of a pageblock, ZONE_BOOSTED_WATERMARK, and
        // rmqueue wakes kswapd although 32,768 free pages are far above
        // the boosted high mark (1,280).
        fault_anon(&mut s, vma, 0);
        let on = factor > 0;
        let boost = if on { 512 } else { 0 };
        assert_eq!(s.phys.zone.boost.boost, boost, "{factor}");
        assert_eq!(
            [s.node.wmark_min, s.node.wmark_low, s.node.wmark_high],
            [512 + boost, 640 + boost, 768 + boost]
        );
        assert_eq!(s.node.fast_low, 640 + boost);
        assert_eq!(s.kswapd.running, on, "{factor}");
        assert_eq!(s.vm.pageoutrun, u64::from(on), "{factor}");
    }
}

#[test]
fn boosted_reclaim_neither_swaps_nor_writes_then_clears_the_boost_and_wakes_kcompactd() {
    // 4096 anonymous pages and no page cache, 60,000 pages free: the
    // boost wakes kswapd on a balanced node. Boosted reclaim may not swap
    // (`may_swap` off: no anon scanned), so its first pass reclaims
    // nothing and ends the run (`nr_boost_reclaim && !nr_reclaimed`): no
    // scan, no swap-out, a fruitless run; the boost the run started with
    // is taken off and kcompactd asked for pageblock_order.
    let mut s = boost_machine(15_000);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 4096).unwrap();
    touch(&mut s, vma, 4096);
    assert!(!s.kswapd.running);
    s.phys.zone.boost_watermark();
    s.rmqueue_boosted(true);
    assert!(s.kswapd.running);
    assert_eq!(s.kswapd.nr_boost_reclaim, 512);
    assert_eq!(s.compact.kcompactd_max_order, 0);
    s.kswapd_step();
    assert!(!s.kswapd.running);
    assert_eq!(s.vm.pageoutrun, 1);
    assert_eq!(s.vm.pgscan_kswapd, 0);
    assert_eq!(s.vm.pswpout, 0);
    assert_eq!(s.kswapd.failures, 1);
    assert_eq!(s.phys.zone.boost.boost, 0);
    assert_eq!(s.node.wmark_high, 768);
    assert_eq!(s.compact.kcompactd_max_order, 9);
}

#[test]
fn boosted_reclaim_goes_past_balance_for_the_boost_then_stops() {
    // 4096 clean file pages, 60,000 free: balanced, boosted by 512. kswapd
    // reclaims file pages for nr_boost_reclaim (512) although the node is
    // balanced, then finds it balanced with no boost left and stops.
    let mut s = boost_machine(15_000);
    file_pages(&mut s, 4096, false);
    boost_and_run_kswapd(&mut s);
    assert_eq!(s.vm.pgsteal_kswapd, 512);
    assert_eq!(s.vm.pswpout, 0);
    assert_eq!(s.vm.nr_vmscan_write, 0);
    assert_eq!(s.kswapd.failures, 0);
    assert_eq!(s.phys.zone.boost.boost, 0);
    assert_eq!(s.compact.kcompactd_max_order, 9);
}

#[test]
fn without_may_writepage_kswapd_keeps_a_dirty_file_folio_it_would_write() {
    // Eight dirty file folios with PG_reclaim on a PGDAT_DIRTY node, handed
    // to kswapd's `shrink_folio_list`: it writes them (`pageout`), unless
    // `may_writepage` is off (boosted reclaim), which keeps them.
    for may_writepage in [true, false] {
        let mut s = boost_machine(0);
        let file = random_file(&mut s, 16);
        let mut batch = Vec::new();
        for index in 0..8 {
            s.step(&Event::FileWrite {
                file,
                index,
                pages: 1,
            });
            let f = file_folio(&s, file, index);
            s.folios[f].set(flags::RECLAIM);
            let lru = LruList::from_index(s.folios.lru(f));
            s.memcgs[0].lruvec.lists[lru as usize].unlink(&mut s.folios, f);
            s.folios[f].clear(flags::LRU);
            batch.push(f);
        }
        s.node.dirty = true;
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, s.clock);
        sc.ignore_references = true;
        sc.may_writepage = may_writepage;
        let rules = s.rules();
        s.shrink_folio_list(&mut batch, &mut sc, rules);
        let want = if may_writepage { (8, 0, 8) } else { (0, 8, 0) };
        assert_eq!((s.vm.nr_vmscan_write, s.nr_dirty, s.nr_writeback), want);
    }
}

#[test]
fn a_steal_by_the_per_cpu_refill_of_an_anonymous_fault_wakes_kswapd() {
    // No page-table frames: the fault's one buddy allocation is the per-CPU
    // list's refill (`rmqueue_bulk`, movable pages). Every frame was taken
    // unmovable (each pageblock claimed unmovable), then the first half of
    // each pageblock given back as an order-8 block: the refill finds no
    // movable page and steals from an unmovable block, below
    // pageblock_order: one boost of a pageblock, and the fault's `rmqueue`
    // wakes kswapd (`Sim::alloc_order0_refill`), 32,768 free pages above
    // the boosted high mark (1,280) notwithstanding.
    for factor in [15_000, 0] {
        let mut cfg = MachineConfig {
            memory: Size::from_pages(1 << 16),
            policy: PolicyConfig {
                name: PolicyName::Cost,
                cost_variant: CostVariant::V6_2,
                watermark_boost_factor: factor,
                ..Default::default()
            },
            ..Default::default()
        };
        cfg.compaction.enabled = true;
        cfg.compaction.proactiveness = 0;
        let mut s = Sim::new(cfg).unwrap();
        fragment(&mut s, MigrateType::Unmovable);
        // The set-up's own steals boosted nothing that counts here.
        s.phys.zone.boost.boost = 0;
        s.phys.zone.boost.pending = false;
        assert_eq!(s.node.free, 32_768);
        let t = s.add_task("t");
        let vma = s.mmap_anon(t, 64).unwrap();
        fault_anon(&mut s, vma, 0);
        let on = factor > 0;
        assert_eq!(s.phys.zone.boost.boost, if on { 512 } else { 0 });
        assert_eq!(s.node.wmark_high, 768 + if on { 512 } else { 0 });
        assert_eq!(s.kswapd.running, on, "{factor}");
        assert!(!s.phys.zone.boost.pending);
    }
}
