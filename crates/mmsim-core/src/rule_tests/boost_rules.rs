//! Watermark boosting, continued (`crate::page_alloc_boost`): the claim
//! rule of a boosting steal (`steal_suitable_fallback`'s alike pages and
//! zone edge, v6.12), MGLRU's boosted kswapd (v6.12/v6.14
//! `lru_gen_shrink_node` reclaims nothing without `may_writepage`; v6.1
//! `lru_gen_shrink_lruvec` runs file-first with swappiness 1), the classic
//! boosted kswapd's dirty pages, and the unboosted high mark.

use super::boost_setup::{boost_and_run_kswapd, boost_machine, boost_machine_with, file_pages};
use super::*;
use crate::config::MglruVersion;
use crate::page_alloc::{MigrateType, Zone, NORMAL_START_PFN, PAGEBLOCK_NR_PAGES};

/// A zone of `pages` pages, every frame allocated movable.
fn full_zone(pages: u64) -> Zone {
    let mut z = Zone::new("Normal", NORMAL_START_PFN, pages);
    while z.alloc_pages(0, MigrateType::Movable).is_some() {}
    z
}

fn unmovable_blocks(z: &Zone) -> u64 {
    z.pagetypeinfo().pageblocks[MigrateType::Unmovable as usize]
}

#[test]
fn an_unmovable_fallback_claims_a_movable_block_counting_its_earlier_steals() {
    // Four movable pageblocks, all allocated. Pageblock 0 gets 64 free
    // pages (PFNs 0..64), which 64 unmovable page-table-like allocations
    // take one by one: each a steal that may not claim (free + non-movable
    // = 64 < 256). Then 192 movable pages of the block are freed (PFNs
    // 64..256): free 192, movable 256, unmovable 64. The next unmovable
    // allocation's alike pages are pageblock_nr_pages − (free + movable) =
    // 64, and 192 + 64 ≥ 256: it claims the pageblock.
    let mut z = full_zone(4 * PAGEBLOCK_NR_PAGES);
    let base = NORMAL_START_PFN;
    z.free_pages_block(base, 6);
    for _ in 0..64 {
        let pfn = z.alloc_pages(0, MigrateType::Unmovable).unwrap();
        assert!(pfn < base + 64);
    }
    assert_eq!(unmovable_blocks(&z), 0);
    z.free_pages_block(base + 64, 6);
    z.free_pages_block(base + 128, 7);
    assert_eq!(z.free_pages(), 192);
    z.alloc_pages(0, MigrateType::Unmovable).unwrap();
    assert_eq!(unmovable_blocks(&z), 1);
    // One movable page fewer freed (191 + 64 < 256): a steal, no claim.
    let mut z = full_zone(4 * PAGEBLOCK_NR_PAGES);
    z.free_pages_block(base, 6);
    for _ in 0..64 {
        z.alloc_pages(0, MigrateType::Unmovable).unwrap();
    }
    z.free_pages_block(base + 128, 7);
    for pfn in base + 65..base + 128 {
        z.free_pages_block(pfn, 0);
    }
    assert_eq!(z.free_pages(), 191);
    z.alloc_pages(0, MigrateType::Unmovable).unwrap();
    assert_eq!(unmovable_blocks(&z), 0);
}

#[test]
fn a_pageblock_cut_by_the_zone_end_is_never_claimed() {
    // 4.5 pageblocks: the last one has 256 pages in the zone, all freed as
    // one order-8 block. An unmovable allocation steals from it (256 free
    // ≥ 256 would claim a whole block), but `prep_move_freepages_block`
    // refuses a range the zone does not span: no claim. The same 256 free
    // pages in a whole pageblock are claimed.
    let pages = 4 * PAGEBLOCK_NR_PAGES + PAGEBLOCK_NR_PAGES / 2;
    let mut z = full_zone(pages);
    z.free_pages_block(NORMAL_START_PFN + 4 * PAGEBLOCK_NR_PAGES, 8);
    z.alloc_pages(0, MigrateType::Unmovable).unwrap();
    assert_eq!(unmovable_blocks(&z), 0);
    let mut z = full_zone(pages);
    z.free_pages_block(NORMAL_START_PFN, 8);
    z.alloc_pages(0, MigrateType::Unmovable).unwrap();
    assert_eq!(unmovable_blocks(&z), 1);
}

/// [`boost_machine_with`] under MGLRU `v`, factor 15000.
fn mglru_boost_machine(v: MglruVersion) -> Sim {
    boost_machine_with(PolicyConfig {
        name: PolicyName::Mglru,
        mglru_version: v,
        watermark_boost_factor: 15_000,
        ..Default::default()
    })
}

#[test]
fn mglru_6_12_and_6_14_boosted_kswapd_reclaims_nothing() {
    // 4096 clean file pages, two boosts of 512 on a balanced node, kswapd
    // run to sleep after each. v6.12 and v6.14: `lru_gen_shrink_node`
    // returns at once without `may_writepage` (off in boosted passes at
    // DEF_PRIORITY - 2 and above): nothing reclaimed, each fruitless pass
    // ends its run (a kswapd failure each), the boost goes and kcompactd is
    // asked for pageblock_order. Without that test v6.14 reclaims 384 pages
    // in the first run, v6.12 (which ages first) 384 in the second. v6.1
    // reclaims through `shrink_lruvec` → `lru_gen_shrink_lruvec`, which has
    // no such test: the first run reclaims the boost's 512 pages, the
    // second (now aging) none.
    for v in [MglruVersion::V6_12, MglruVersion::V6_14, MglruVersion::V6_1] {
        let mut s = mglru_boost_machine(v);
        file_pages(&mut s, 4096, false);
        let mut got = Vec::new();
        for _ in 0..2 {
            boost_and_run_kswapd(&mut s);
            got.push((s.vm.pgsteal_kswapd, s.kswapd.failures));
            assert_eq!(s.phys.zone.boost.boost, 0, "{v:?}");
            assert_eq!(s.compact.kcompactd_max_order, 9, "{v:?}");
        }
        let want = if v == MglruVersion::V6_1 {
            [(512, 0), (512, 1)]
        } else {
            [(0, 1), (0, 2)]
        };
        assert_eq!(got, want, "{v:?}");
    }
}

#[test]
fn mglru_6_1_reclaim_without_may_swap_runs_at_swappiness_1_for_global_reclaim() {
    // With swap (60 by default, 65536 zram slots): v6.1's
    // `lru_gen_shrink_lruvec` without `may_swap` (kswapd's boosted reclaim)
    // uses swappiness 1 for global reclaim (file first, anon only when no
    // file is left in the oldest generation) and 0 for cgroup reclaim;
    // v6.12 and v6.14 fold `may_swap` into `get_swappiness`: 0. With
    // `may_swap` every version uses the system's 60.
    for v in [MglruVersion::V6_1, MglruVersion::V6_12, MglruVersion::V6_14] {
        let s = mglru_boost_machine(v);
        let v1 = v == MglruVersion::V6_1;
        for (who, may_swap, want) in [
            (Reclaimer::Kswapd, false, u32::from(v1)),
            (Reclaimer::Direct, false, u32::from(v1)),
            (Reclaimer::Memcg, false, 0),
            (Reclaimer::Kswapd, true, 60),
            (Reclaimer::Memcg, true, 60),
        ] {
            let mut sc = ScanControl::new(who, 32, 0);
            sc.may_swap = may_swap;
            let got = s.lru_gen_shrink_swappiness(crate::memcg::ROOT, &sc);
            assert_eq!(got, want, "{v:?} {who:?} {may_swap}");
        }
    }
}

#[test]
fn high_wmark_unboosted_is_the_stored_mark_while_a_boost_is_pending() {
    // A steal's boost is in the zone (pending) before `rmqueue` puts it in
    // the node's marks: the unboosted high mark is 768 either side of it.
    let mut s = boost_machine(15_000);
    s.phys.zone.boost_watermark();
    assert!(s.phys.zone.boost.pending);
    assert_eq!(s.high_wmark_unboosted(), 768);
    s.rmqueue_boosted(false);
    assert_eq!(s.node.wmark_high, 1280);
    assert_eq!(s.high_wmark_unboosted(), 768);
}

#[test]
fn classic_boosted_kswapd_does_not_write_dirty_file_pages() {
    // 4096 dirty file pages, each already marked PG_reclaim, on a
    // PGDAT_DIRTY node: kswapd's `shrink_folio_list` would write them
    // (`pageout`). Boosted by 512 on a balanced node, kswapd reclaims with
    // `may_writepage` off (DEF_PRIORITY): nothing written by reclaim
    // (`nr_vmscan_write`; the flusher kswapd wakes cleans them), nothing
    // freed, the fruitless pass ends the run.
    let mut s = boost_machine(15_000);
    let file = file_pages(&mut s, 4096, true);
    for index in 0..4096 {
        let f = file_folio(&s, file, index);
        s.folios[f].set(flags::RECLAIM);
    }
    s.node.dirty = true;
    assert_eq!(s.nr_dirty, 4096);
    boost_and_run_kswapd(&mut s);
    assert_eq!(s.vm.nr_vmscan_write, 0);
    assert_eq!(s.vm.pgsteal_kswapd, 0);
    assert_eq!(s.kswapd.failures, 1);
    assert_eq!(s.phys.zone.boost.boost, 0);
}

#[test]
fn a_boost_factor_with_the_lru_policy_is_refused() {
    // The textbook `lru` policy has one list and no kswapd reclaim to
    // boost: `MachineConfig::validate` refuses a factor with it, naming the
    // field. Factor 0 with `lru`, and the factor with `cost`, are accepted.
    let cfg = |name, factor| MachineConfig {
        policy: PolicyConfig {
            name,
            watermark_boost_factor: factor,
            ..Default::default()
        },
        ..Default::default()
    };
    let e = cfg(PolicyName::Lru, 15_000).validate().unwrap_err();
    assert_eq!(e.field, "machine.policy.watermark_boost_factor");
    assert_eq!(
        e.message,
        "watermark boosting is modelled for one zone (machine.dma_zone_pages = 0) and the \
         kernel's LRU lists (policy cost, scanned-rotated or mglru)"
    );
    assert!(Sim::new(cfg(PolicyName::Lru, 15_000)).is_err());
    assert!(cfg(PolicyName::Lru, 0).validate().is_ok());
    assert!(cfg(PolicyName::Cost, 15_000).validate().is_ok());
}
