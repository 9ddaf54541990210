//! Reclaim/compaction (mm/vmscan.c, v6.12.107 `in_reclaim_compaction`,
//! `should_continue_reclaim`; v4.9's order under the `scanned-rotated`
//! policy): classic `shrink_node` shrinks the node again for a high-order
//! reclaim while the pass reclaimed something, no zone is ready or
//! `compaction_suitable`, and more than `compact_gap` inactive pages are
//! left (`crate::reclaim::should_continue_reclaim`).

use super::thp::thp_machine_with;
use super::*;
use crate::config::{MachineConfig, MglruVersion};
use crate::page_alloc::MigrateType;

/// A 32768-page machine (watermarks min 362, low 452, high 542), no
/// swap, compaction on or off (kcompactd off), `policy`: every free frame
/// is taken and every other one given back (free pages are single frames
/// between held ones, so nothing a reclaim frees can merge), then `file`
/// clean file pages are read at random (one inactive folio each, in the
/// freed frames), then free frames are taken until `free` are left.
/// `compaction_suitable(9)` needs free > low + `compact_gap(9)` = 1,476
/// (the fragmentation index of single frames is 998, above 500).
fn machine(policy: PolicyName, compaction: bool, file: u32, free: u64) -> Sim {
    machine_with(file, free, Setup::default(), |c| {
        c.policy.name = policy;
        c.compaction.enabled = compaction;
    })
}

/// What [`machine_with`] adds to [`machine`]'s setup.
#[derive(Default, Clone, Copy)]
struct Setup {
    /// Swap pages (zram), if any.
    swap: Option<u64>,
    /// Anonymous pages written after the file reads (inactive anon).
    anon: u32,
    /// Give back one whole aligned order-9 block of the held frames too
    /// (it stays free: order-0 allocations take the single frames first).
    block: bool,
}

/// [`machine`] with compaction on, `setup`, and `tweak` on the config.
fn machine_with(file: u32, free: u64, setup: Setup, tweak: impl FnOnce(&mut MachineConfig)) -> Sim {
    let mut s = thp_machine_with(32768, setup.swap, Default::default(), |c| {
        c.compaction.enabled = true;
        tweak(c);
        c.compaction.kcompactd = false;
        c.compaction.proactiveness = 0;
    });
    s.phys.drain_pages();
    let mut held = Vec::new();
    while let Some(p) = s.phys.zone.alloc_pages(0, MigrateType::Movable) {
        held.push(p);
    }
    s.node.free -= held.len() as u64;
    let mut sorted = held.clone();
    sorted.sort_unstable();
    let block = setup
        .block
        .then(|| {
            sorted
                .windows(512)
                .find_map(|w| (w[0] % 512 == 0 && w[511] == w[0] + 511).then_some(w[0]))
        })
        .flatten();
    for (i, &p) in held.iter().enumerate() {
        let in_block = block.is_some_and(|b| (b..b + 512).contains(&p));
        if i % 2 == 0 || in_block {
            s.phys.zone.free_pages_block(p, 0);
            s.node.free += 1;
        }
    }
    let t = s.add_task("t");
    read_random(&mut s, t, u64::from(file), file);
    if setup.anon > 0 {
        let vma = s.mmap_anon(t, u64::from(setup.anon)).unwrap();
        touch(&mut s, vma, setup.anon);
    }
    s.phys.drain_pages();
    while s.node.free > free {
        s.phys.zone.alloc_pages(0, MigrateType::Movable).unwrap();
        s.node.free -= 1;
    }
    assert_eq!(
        (s.node.wmark_min, s.node.wmark_low, s.node.free),
        (362, 452, free)
    );
    if let Some(b) = block {
        assert_eq!(s.phys.zone.buddy_order_at(b), Some(9), "block at {b}");
    }
    s
}

/// A direct reclaimer's scan control at `order` and `priority`.
fn direct_sc(order: u32, priority: u32) -> ScanControl {
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    sc.order = order;
    sc.priority = priority;
    sc
}

#[test]
fn direct_reclaim_for_a_thp_shrinks_the_node_again_until_compaction_is_suitable() {
    // 15,000 inactive file pages: each pass at DEF_PRIORITY scans
    // 15,000 >> 12 = 3 (14,121 >> 12 still 3 at the end) and frees the 3.
    // From 600 free pages, order 9 with compaction shrinks the node again
    // until free > 1,476 (`compaction_suitable`): 293 passes, 879 pages,
    // then `do_try_to_free_pages` stops (879 >= 32). Without compaction
    // (CONFIG_COMPACTION off), and at order 0, one pass per priority: 3 +
    // 7 + 14 + 29 = 53 pages down to priority 9.
    let mut got = Vec::new();
    for (compaction, order) in [(true, 9), (false, 9), (true, 0)] {
        let mut s = machine(PolicyName::Cost, compaction, 15_000, 600);
        let progress = s.try_to_free_pages_order(order, crate::gfp::GFP_HIGHUSER_MOVABLE);
        got.push((progress, s.vm.pgscan_direct, s.node.free));
    }
    assert_eq!(got, [(879, 879, 1479), (53, 53, 653), (53, 53, 653)]);
}

#[test]
fn should_continue_reclaim_needs_a_page_reclaimed_in_the_pass() {
    // Zone unsuitable (600 free), 15,000 inactive pages: a pass that
    // reclaimed one page continues, one that reclaimed none stops.
    let s = machine(PolicyName::Cost, true, 15_000, 600);
    let sc = direct_sc(9, 12);
    assert_eq!(
        (
            s.should_continue_reclaim(1, &sc),
            s.should_continue_reclaim(0, &sc)
        ),
        (true, false)
    );
}

#[test]
fn should_continue_reclaim_stops_once_a_zone_is_compaction_suitable() {
    // compaction_suitable(9): free > low 452 + 1,024. At 1,476 free the
    // node is shrunk again, at 1,477 it is not.
    let got: Vec<bool> = [1476, 1477]
        .into_iter()
        .map(|free| {
            let s = machine(PolicyName::Cost, true, 14_000, free);
            s.should_continue_reclaim(1, &direct_sc(9, 12))
        })
        .collect();
    assert_eq!(got, [true, false]);
}

#[test]
fn should_continue_reclaim_stops_at_compact_gap_inactive_pages() {
    // compact_gap(9) = 1,024: 1,025 inactive file pages continue, 1,024
    // stop (no swap: inactive anon is not counted).
    let got: Vec<bool> = [1025, 1024]
        .into_iter()
        .map(|file| {
            let s = machine(PolicyName::Cost, true, file, 600);
            s.should_continue_reclaim(1, &direct_sc(9, 12))
        })
        .collect();
    assert_eq!(got, [true, false]);
}

#[test]
fn in_reclaim_compaction_needs_an_order_and_a_costly_one_or_a_low_priority() {
    // 370 free single frames: unsuitable for order 3 (min 362 + 16) and 4
    // (low 452 + 32). Order 0 never; order 3 (not costly) only below
    // DEF_PRIORITY - 2 = 10; order 4 at any priority; nothing without
    // compaction.
    let s = machine(PolicyName::Cost, true, 15_000, 370);
    let got: Vec<bool> = [(0, 0), (3, 10), (3, 9), (4, 12)]
        .into_iter()
        .map(|(order, prio)| s.should_continue_reclaim(1, &direct_sc(order, prio)))
        .collect();
    assert_eq!(got, [false, false, true, true]);
    let off = machine(PolicyName::Cost, false, 15_000, 370);
    assert!(!off.should_continue_reclaim(1, &direct_sc(4, 12)));
}

#[test]
fn v4_9_continues_below_compact_gap_before_looking_at_the_zones() {
    // v4.9 (`scanned-rotated`): with fewer than compact_gap(9) = 1,024
    // pages reclaimed so far and more inactive pages than that, reclaim
    // continues even though the zone is compaction_suitable (1,477 free),
    // where v6.12 stops; once the reclaim's total reaches 1,024 it stops
    // there. With 1,024 inactive pages and an unsuitable zone (600 free)
    // v4.9 continues (`return true`), v6.12 stops.
    let mut got = Vec::new();
    for policy in [PolicyName::ScannedRotated, PolicyName::Cost] {
        let s = machine(policy, true, 14_000, 1477);
        let mut sc = direct_sc(9, 12);
        sc.nr_reclaimed = 1023;
        let below = s.should_continue_reclaim(1, &sc);
        sc.nr_reclaimed = 1024;
        let at_gap = s.should_continue_reclaim(1, &sc);
        let s = machine(policy, true, 1024, 600);
        let few = s.should_continue_reclaim(1, &direct_sc(9, 12));
        got.push((below, at_gap, few));
    }
    assert_eq!(got, [(true, false, true), (false, false, false)]);
}

#[test]
fn mglru_v6_1_direct_reclaim_shrinks_the_node_again_but_v6_14_does_not() {
    // The first test's machine under MGLRU: v6.1 root reclaim goes through
    // the classic `shrink_node`, so its order-9 reclaim repeats the pass
    // while the zone is not `compaction_suitable`; v6.14 hands root
    // reclaim to `lru_gen_shrink_node`, which never asks. v6.1: each pass
    // at DEF_PRIORITY frees 64 pages; with compaction 14 passes (896
    // pages) until free 1,496 > 1,476, without it one pass (64 >= 32
    // ends the reclaim), as v6.14's single `lru_gen_shrink_node` call.
    let mut got = Vec::new();
    for (v, compaction) in [
        (MglruVersion::V6_1, true),
        (MglruVersion::V6_1, false),
        (MglruVersion::V6_14, true),
    ] {
        let mut s = machine_with(15_000, 600, Setup::default(), |c| {
            c.policy.name = PolicyName::Mglru;
            c.policy.mglru_version = v;
            c.compaction.enabled = compaction;
        });
        let progress = s.try_to_free_pages_order(9, crate::gfp::GFP_HIGHUSER_MOVABLE);
        got.push((progress, s.vm.pgscan_direct, s.node.free));
    }
    assert_eq!(got, [(896, 896, 1496), (64, 64, 664), (64, 64, 664)]);
}

#[test]
fn should_continue_reclaim_stops_when_a_zone_can_take_the_allocation_at_min() {
    // 1,000 free pages, below compaction_suitable(9)'s 1,477: as single
    // frames the node is shrunk again; with one of them a free order-9
    // block, `zone_watermark_ok(9, min)` holds (1,000 - 511 > 362 and a
    // block of the order) and the loop stops.
    let got: Vec<bool> = [false, true]
        .into_iter()
        .map(|block| {
            let setup = Setup {
                block,
                ..Setup::default()
            };
            let s = machine_with(14_000, 1000, setup, |_| {});
            s.should_continue_reclaim(1, &direct_sc(9, 12))
        })
        .collect();
    assert_eq!(got, [true, false]);
}

#[test]
fn inactive_anon_counts_toward_compact_gap_only_with_swap() {
    // 525 inactive file + 500 inactive anon = 1,025 > compact_gap(9):
    // with a free swap slot the node is shrunk again; without swap only
    // the 525 file pages count and the loop stops.
    let got: Vec<bool> = [Some(4096), None]
        .into_iter()
        .map(|swap| {
            let setup = Setup {
                swap,
                anon: 500,
                ..Setup::default()
            };
            let s = machine_with(525, 600, setup, |_| {});
            let lv = s.subtree_lruvec(crate::memcg::ROOT);
            assert_eq!(
                (
                    lv.size(LruList::InactiveFile),
                    lv.size(LruList::InactiveAnon)
                ),
                (525, 500)
            );
            s.should_continue_reclaim(1, &direct_sc(9, 12))
        })
        .collect();
    assert_eq!(got, [true, false]);
}

#[test]
fn with_zone_dma_a_zone_that_can_take_the_allocation_stops_the_loop() {
    // An 8192-page node whose lowest 1024 frames are ZONE_DMA (min 22,
    // `lowmem_reserve` 28; DMA32 min 158, low 197): 2,000 inactive file
    // pages in DMA32, then DMA32's other frames taken but 600 single ones
    // (below its compaction_suitable(9) mark, low 197 + 1,024). With DMA
    // untouched (free order-9 blocks, 1,024 - 511 > 22 + 28) DMA could
    // take the allocation and the loop stops; with DMA's frames all taken
    // no zone is ready or suitable and the node is shrunk again.
    let mut got = Vec::new();
    for dma_free in [true, false] {
        let mut s = thp_machine_with(8192, None, Default::default(), |c| {
            c.dma_zone_pages = 1024;
            c.compaction.enabled = true;
            c.compaction.kcompactd = false;
            c.compaction.proactiveness = 0;
        });
        let t = s.add_task("t");
        read_random(&mut s, t, 2000, 2000);
        s.phys.drain_pages();
        let mut held = Vec::new();
        while let Some(p) = s.phys.zone.alloc_pages(0, MigrateType::Movable) {
            held.push(p);
        }
        s.node.free -= held.len() as u64;
        for &p in held.iter().step_by(2).take(600) {
            s.phys.zone.free_pages_block(p, 0);
            s.node.free += 1;
        }
        if !dma_free {
            let d = &mut s.phys.dma.as_mut().unwrap().zone;
            let mut n = 0;
            while d.alloc_pages(0, MigrateType::Movable).is_some() {
                n += 1;
            }
            s.node.free -= n;
        }
        let dma = s.phys.dma.as_ref().unwrap().zone.free_pages();
        let cont = s.should_continue_reclaim(1, &direct_sc(9, 12));
        got.push((s.upper_free(), dma, cont));
    }
    assert_eq!(got, [(600, 1024, false), (600, 0, true)]);
}

#[test]
fn kswapd_at_order_4_shrinks_the_node_again_until_compaction_is_suitable() {
    // kswapd's `balance_pgdat` with `sc.order` = 4 (`kswapd_reclaim_order`,
    // as `compaction.kswapd_high_order` sets it): order 4 is costly, so
    // kswapd's `shrink_node` is in reclaim/compaction mode at DEF_PRIORITY
    // and repeats its pass (3 of the 15,000 inactive file pages each)
    // while the zone is not `compaction_suitable(4)` (free > low 452 +
    // compact_gap(4) 32): from 400 free, 29 passes, 87 pages, 487 free, in
    // one `balance_pgdat` iteration; having reclaimed compact_gap(4), the
    // rest of the run is at order 0 (`kswapd_shrink_node`). At order 0,
    // and at order 4 without compaction, one pass: 3 pages (the order
    // stays 4 then, 3 < 32).
    let mut got = Vec::new();
    for (compaction, order) in [(true, 4), (true, 0), (false, 4)] {
        let mut s = machine(PolicyName::Cost, compaction, 15_000, 400);
        s.compact.kswapd_reclaim_order = order;
        // A run as `wakeup_kswapd` starts it: at DEF_PRIORITY.
        s.kswapd.running = true;
        s.kswapd.priority = crate::reclaim::DEF_PRIORITY;
        s.kswapd_step();
        got.push((
            s.vm.pgsteal_kswapd,
            s.node.free,
            s.compact.kswapd_reclaim_order,
        ));
    }
    assert_eq!(got, [(87, 487, 0), (3, 403, 0), (3, 403, 4)]);
}
