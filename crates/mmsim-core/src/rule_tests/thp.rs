//! Rule tests of multi-size THP (`crate::huge_memory`): the order a fault
//! allocates for given settings, VMA bounds and neighbouring PTEs; the
//! fallback on buddy and on memcg charge failure; the rmap walk over a large
//! folio's PTEs; and swap-out whole (v6.12) or split (v6.8).

use super::*;
use crate::huge_memory::{
    ThpConfig, ThpEnabled, ThpKernel, ThpSizeConfig, ThpSizeEnabled, VmaThpAdvice,
};
use crate::mem::pagetable::{PTE_PRESENT, PTE_YOUNG};

fn size(e: ThpSizeEnabled) -> ThpSizeConfig {
    ThpSizeConfig { enabled: e }
}

/// A machine of `memory_pages` (zram swap of `swap_pages` if given) with `thp`,
/// under the `cost` policy. Shared by the THP, khugepaged and zero-page rule tests.
pub(super) fn thp_machine(memory_pages: u64, swap_pages: Option<u64>, thp: ThpConfig) -> Sim {
    thp_machine_with(memory_pages, swap_pages, thp, |_| {})
}

/// [`thp_machine`], with `tweak` applied to the configuration last.
pub(super) fn thp_machine_with(
    memory_pages: u64,
    swap_pages: Option<u64>,
    thp: ThpConfig,
    tweak: impl FnOnce(&mut MachineConfig),
) -> Sim {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(memory_pages),
        thp,
        ..Default::default()
    };
    cfg.policy.name = PolicyName::Cost;
    if let Some(s) = swap_pages {
        cfg.swap = DeviceConfig {
            size: Some(Size::from_pages(s)),
            ..DeviceConfig::of(DeviceKind::Zram)
        };
    }
    tweak(&mut cfg);
    Sim::new(cfg).unwrap()
}

/// 64K (and 16K if `with_16k`) set to `always`.
fn thp_64k(with_16k: bool) -> ThpConfig {
    let mut t = ThpConfig {
        hugepages_64kb: size(ThpSizeEnabled::Always),
        ..Default::default()
    };
    if with_16k {
        t.hugepages_16kb = size(ThpSizeEnabled::Always);
    }
    t
}

/// The order of the folio a write fault at `index` of a fresh `len`-page VMA maps.
fn order_at(thp: ThpConfig, len: u64, index: u32) -> u8 {
    let mut s = thp_machine(8192, None, thp);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, len).unwrap();
    let f = fault_anon(&mut s, vma, index);
    s.check_invariants().unwrap();
    s.folios[f].order()
}

#[test]
fn the_order_follows_the_per_size_and_top_level_settings() {
    let with = |f: &dyn Fn(&mut ThpConfig)| {
        let mut t = ThpConfig::default();
        f(&mut t);
        order_at(t, 1024, 100)
    };
    // Defaults: every size off (PMD size inherits the top level, `never`).
    assert_eq!(with(&|_| {}), 0);
    assert_eq!(
        with(&|t| t.hugepages_64kb = size(ThpSizeEnabled::Always)),
        4
    );
    // `madvise` sizes need MADV_HUGEPAGE.
    assert_eq!(
        with(&|t| t.hugepages_64kb = size(ThpSizeEnabled::Madvise)),
        0
    );
    assert_eq!(
        with(&|t| {
            t.hugepages_64kb = size(ThpSizeEnabled::Madvise);
            t.vma_advice = VmaThpAdvice::Hugepage;
        }),
        4
    );
    // `inherit` follows the top level: always, or madvise with MADV_HUGEPAGE.
    let inherit32 = |t: &mut ThpConfig| t.hugepages_32kb = size(ThpSizeEnabled::Inherit);
    assert_eq!(with(&|t| inherit32(t)), 0);
    assert_eq!(
        with(&|t| {
            inherit32(t);
            t.enabled = ThpEnabled::Madvise;
        }),
        0
    );
    // ... and so does PMD size, whose default is `inherit`: it comes first.
    assert_eq!(
        with(&|t| {
            inherit32(t);
            t.enabled = ThpEnabled::Madvise;
            t.vma_advice = VmaThpAdvice::Hugepage;
        }),
        9
    );
    assert_eq!(
        with(&|t| {
            inherit32(t);
            t.hugepages_2048kb = size(ThpSizeEnabled::Never);
            t.enabled = ThpEnabled::Madvise;
            t.vma_advice = VmaThpAdvice::Hugepage;
        }),
        3
    );
    // Top level `always` with the default per-size settings: PMD size
    // (inherit) — the 1024-page VMA holds the PMD around page 100.
    assert_eq!(with(&|t| t.enabled = ThpEnabled::Always), 9);
    // MADV_NOHUGEPAGE: nothing, whatever the settings.
    assert_eq!(
        with(&|t| {
            t.enabled = ThpEnabled::Always;
            t.hugepages_64kb = size(ThpSizeEnabled::Always);
            t.vma_advice = VmaThpAdvice::Nohugepage;
        }),
        0
    );
    // Highest enabled order first.
    assert_eq!(order_at(thp_64k(true), 1024, 100), 4);
}

#[test]
fn the_aligned_block_must_lie_inside_the_vma() {
    // 24 pages: the 64K block of page 20 (16..32) sticks out; its 16K block (20..24) fits.
    assert_eq!(order_at(thp_64k(true), 24, 20), 2);
    assert_eq!(order_at(thp_64k(true), 24, 3), 4);
    // Only 64K enabled: page 20 falls back to order 0.
    assert_eq!(order_at(thp_64k(false), 24, 20), 0);
    // A PMD-size folio needs 512 pages of VMA around the fault.
    let top = ThpConfig {
        enabled: ThpEnabled::Always,
        ..Default::default()
    };
    assert_eq!(order_at(top.clone(), 511, 0), 0);
    assert_eq!(order_at(top, 512, 300), 9);
}

#[test]
fn a_block_with_a_present_pte_drops_that_order() {
    let mut s = thp_machine(8192, None, ThpConfig::default());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    // Page 17 faulted while THP was off: an order-0 folio.
    let small = fault_anon(&mut s, vma, 17);
    assert_eq!(s.folios[small].order(), 0);
    s.thp = crate::huge_memory::Thp::new(&thp_64k(true), false, false);
    // Page 20: the 64K block 16..32 holds page 17, the 16K block 20..24 is empty.
    let f = fault_anon(&mut s, vma, 20);
    assert_eq!(s.folios[f].order(), 2);
    assert_eq!(s.folios[f].index, 20);
    for i in 20..24 {
        assert_eq!(s.vmas[vma as usize].pte(i) & 0x1fff_ffff, f);
    }
    // Pages 0..16: a 64K folio, all young (`vm_page_prot`), all dirty.
    let g = fault_anon(&mut s, vma, 5);
    assert_eq!((s.folios[g].order(), s.folios[g].index), (4, 0));
    let young: Vec<u32> = (0..16)
        .filter(|&i| s.vmas[vma as usize].pte(i) & PTE_YOUNG != 0)
        .collect();
    assert_eq!(young, (0..16).collect::<Vec<u32>>());
    assert_eq!(s.thp.stats[4].anon_fault_alloc, 1);
    assert_eq!(s.thp.stats[2].anon_fault_alloc, 1);
    assert_eq!(s.vm.pgfault, 3);
    s.check_invariants().unwrap();
}

#[test]
fn a_buddy_failure_falls_back_to_the_next_order_then_to_a_page() {
    let mut s = thp_machine(8192, None, thp_64k(true));
    // Fragment the zone: take every free page, give back every other one, so
    // no block above order 0 is left.
    let mut held = Vec::new();
    while let Some(p) = s
        .phys
        .zone
        .alloc_pages(0, crate::page_alloc::MigrateType::Movable)
    {
        held.push(p);
    }
    for p in held.iter().step_by(2) {
        s.phys.zone.free_pages_block(*p, 0);
    }
    s.node.free -= held.len().div_ceil(2) as u64;
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 0);
    let st = s.thp.stats;
    assert_eq!(
        (st[4].anon_fault_fallback, st[2].anon_fault_fallback),
        (1, 1)
    );
    assert_eq!(
        st[4].anon_fault_fallback_charge + st[2].anon_fault_fallback_charge,
        0
    );
    assert_eq!(st[4].anon_fault_alloc + st[2].anon_fault_alloc, 0);
}

#[test]
fn a_charge_failure_falls_back_to_the_next_order() {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(8192),
        memcg_max: Some(Size::from_pages(12)),
        thp: thp_64k(true),
        ..Default::default()
    };
    cfg.policy.name = PolicyName::Cost;
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let free = s.node.free;
    // 16 pages do not fit under memory.max = 12; defrag `madvise` in a VMA
    // without advice may not reclaim, so the charge fails at once and the
    // 16K folio (4 pages) is charged instead.
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 2);
    let st = s.thp.stats;
    assert_eq!(
        (st[4].anon_fault_fallback_charge, st[4].anon_fault_fallback),
        (1, 1)
    );
    assert_eq!(st[2].anon_fault_alloc, 1);
    // The 64K block went back to the buddy allocator.
    assert_eq!(s.node.free, free - 4);
    assert_eq!(s.memcgs[0].usage, 4);
    assert_eq!(s.vm.oom_kill, 0);
    s.check_invariants().unwrap();
}

#[test]
fn the_pmd_path_counts_thp_fault_fallback_and_then_tries_mthp() {
    let thp = ThpConfig {
        enabled: ThpEnabled::Always,
        hugepages_64kb: size(ThpSizeEnabled::Always),
        ..Default::default()
    };
    let mut cfg = MachineConfig {
        memory: Size::from_pages(8192),
        memcg_max: Some(Size::from_pages(100)),
        thp,
        ..Default::default()
    };
    cfg.policy.name = PolicyName::Cost;
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1024).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 4);
    assert_eq!(
        (s.vm.thp_fault_fallback, s.vm.thp_fault_fallback_charge),
        (1, 1)
    );
    assert_eq!(s.vm.thp_fault_alloc, 0);
    assert_eq!(s.thp.stats[9].anon_fault_fallback_charge, 1);
}

#[test]
fn the_rmap_walk_clears_every_young_pte_and_counts_the_vma_once() {
    let mut s = thp_machine(8192, None, thp_64k(false));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = fault_anon(&mut s, vma, 3);
    fault_anon(&mut s, vma, 7);
    fault_anon(&mut s, vma, 12);
    let young = |s: &Sim| {
        (0..16)
            .filter(|&i| s.vmas[vma as usize].pte(i) & PTE_YOUNG != 0)
            .count()
    };
    assert_eq!(young(&s), 16, "set_ptes of one young PTE");
    assert_eq!(s.vm.pgfault, 1, "one fault mapped the 16 pages");
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    let r = s.folio_referenced(f, &mut sc);
    assert_eq!((r.vmas, r.locked), (1, false));
    assert_eq!(young(&s), 0);
    assert_eq!(s.folio_referenced(f, &mut sc).vmas, 0);
}

/// Faults one 64K folio at pages 0..16 and reclaims it through
/// `shrink_folio_list` (references ignored); returns the sim, the VMA, and
/// the pages reclaimed.
fn reclaim_64k(kernel: ThpKernel, swap_pages: u64, pre_used_slots: u32) -> (Sim, u32, u64) {
    let thp = ThpConfig {
        kernel,
        ..thp_64k(false)
    };
    let mut s = thp_machine(8192, Some(swap_pages), thp);
    for _ in 0..pre_used_slots {
        s.swap.as_mut().unwrap().alloc(0).unwrap();
    }
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    // Every page written: v6.12's split maps zero-filled ones to the zero page (split_zeropage.rs).
    touch(&mut s, vma, 16);
    let reclaimed = reclaim_whole(&mut s, f);
    (s, vma, reclaimed)
}

/// Reclaims 64K folio `f` through `shrink_folio_list` (references
/// ignored); returns the pages reclaimed.
fn reclaim_whole(s: &mut Sim, f: FolioId) -> u64 {
    assert_eq!(s.folios[f].order(), 4);
    isolate(s, f);
    let (reclaimed, scanned, kept, _) = shrink_isolated(s, f);
    assert_eq!(scanned, 16);
    assert_eq!(kept, 0, "every page was reclaimed");
    reclaimed
}

#[test]
fn v6_12_swaps_a_64k_folio_out_whole_into_contiguous_slots() {
    let (s, vma, reclaimed) = reclaim_64k(ThpKernel::V6_12, 1024, 0);
    assert_eq!(reclaimed, 16);
    let st = s.thp.stats[4];
    assert_eq!((st.swpout, st.swpout_fallback, st.split), (1, 0, 0));
    assert_eq!(s.vm.pswpout, 16);
    // PTE i holds the swap entry of slot i (slot + 1, not present).
    for i in 0..16 {
        let pte = s.vmas[vma as usize].pte(i);
        assert_eq!((pte & PTE_PRESENT, pte), (0, i + 1));
    }
    assert_eq!(s.swap.as_ref().unwrap().used, 16);
    // `workingset_eviction` ages the clock by `folio_nr_pages`: the 64K
    // folio's shadow is 16 evictions' worth, as sixteen pages would be.
    assert_eq!(s.memcgs[0].lruvec.nonresident_age, 16);
}

#[test]
fn v6_8_splits_a_pte_mapped_folio_before_swap_out() {
    let (s, _, reclaimed) = reclaim_64k(ThpKernel::V6_8, 1024, 0);
    assert_eq!(reclaimed, 16);
    let st = s.thp.stats[4];
    // "Split folios without a PMD map right away": no fallback counted.
    assert_eq!((st.swpout, st.swpout_fallback, st.split), (0, 0, 1));
    assert_eq!(s.vm.pswpout, 16);
}

#[test]
fn v6_12_splits_when_no_contiguous_slots_are_left() {
    // 31 slots, one in use: the aligned 16 slots 16..32 do not fit.
    let (s, vma, reclaimed) = reclaim_64k(ThpKernel::V6_12, 31, 1);
    assert_eq!(reclaimed, 16);
    let st = s.thp.stats[4];
    assert_eq!((st.swpout, st.swpout_fallback, st.split), (0, 1, 1));
    assert_eq!(s.vm.pswpout, 16);
    for i in 0..16 {
        assert_eq!(s.vmas[vma as usize].pte(i) & PTE_PRESENT, 0);
    }
    assert_eq!(s.swap.as_ref().unwrap().used, 17);
}

/// v6.12 `shrink_folio_list` counts `nr_pageout` in pages (`+= nr_pages`,
/// as it has since v5.8 made reclaim's writes an IO cost), and
/// `shrink_inactive_list` hands it to `lru_note_cost` as the IO: a 64K
/// folio swapped out whole costs the anon list 16 pages of IO, not one.
#[test]
fn a_64k_folio_swapped_out_whole_is_sixteen_pages_of_io_cost() {
    let mut s = thp_machine(8192, Some(1024), thp_64k(false));
    // 4096 active file pages: the list size keeps the cost below the decay
    // (file_cost + anon_cost > lrusize / 4 halves both).
    fill_lists(&mut s, [0, 0, 0, 4096]);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(
        (s.folios[f].order(), list_of(&s, f)),
        (4, LruList::InactiveAnon)
    );
    // Unreferenced: the rmap walk finds no young PTE.
    for i in 0..16 {
        *s.vmas[vma as usize].pte_mut(i) &= !PTE_YOUNG;
    }
    let rules = s.rules();
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, s.clock);
    assert_eq!(s.shrink_inactive_list(32, false, &mut sc, rules), 16);
    assert_eq!((s.thp.stats[4].swpout, s.vm.pswpout), (1, 16));
    // v6.2+ cost: nr_io × SWAP_CLUSTER_MAX + nr_rotated = 16 × 32 + 0.
    assert_eq!(s.memcgs[0].lruvec.anon_cost, 512);
    assert_eq!(s.memcgs[0].lruvec.file_cost, 0);
}

#[test]
fn a_whole_swapped_folio_faulted_back_from_the_swap_cache_maps_every_pte() {
    // SSD swap keeps the folio in the swap cache under writeback; reclaim
    // with zram frees it at once, so fault it back while it is cached: use
    // the swap cache of a folio that was only added to swap.
    let thp = thp_64k(false);
    let mut s = thp_machine(8192, Some(1024), thp);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    super::swapcache::unmap_into_swap_cache(&mut s, f);
    assert_eq!(s.folios[f].mapcount, 0);
    // A read of page 9: a minor fault maps all 16 PTEs again; on zram the
    // slots are freed (should_try_to_free_swap).
    s.step(&Event::Access {
        vma,
        index: 9,
        write: false,
    });
    for i in 0..16 {
        let pte = s.vmas[vma as usize].pte(i);
        assert_eq!(
            pte & (PTE_PRESENT | 0x1fff_ffff),
            PTE_PRESENT | f,
            "pte {i}"
        );
    }
    assert_eq!(s.folios[f].mapcount, 16);
    assert!(!s.folios[f].test(flags::SWAPCACHE));
    assert_eq!(s.swap.as_ref().unwrap().used, 0);
    assert_eq!(s.vm.pgmajfault, 0);
    s.check_invariants().unwrap();
}

/// A 4096-page machine with zram swap and `thp` (the zero page as `zero_page`)
/// under `policy`: a task writes and reads a `pages`-page anonymous VMA (about
/// twice the memory) with a stride of 7, which leaves holes for smaller orders,
/// then at random, every third access a write. The invariants hold every 4,000
/// steps and at the end, nothing is OOM-killed and reclaim swapped; `label`
/// names the run in failures.
pub(super) fn mixed_anon_run(
    policy: PolicyName,
    thp: ThpConfig,
    zero_page: bool,
    pages: u32,
    label: &str,
) -> Sim {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(4096),
        thp,
        swap: DeviceConfig {
            size: Some(Size::from_pages(16384)),
            ..DeviceConfig::of(DeviceKind::Zram)
        },
        zero_page,
        ..Default::default()
    };
    cfg.policy.name = policy;
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, u64::from(pages)).unwrap();
    let mut x = 12345u64;
    for step in 0..40_000u32 {
        let index = if step < 16_000 {
            (step * 7) % pages
        } else {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % u64::from(pages)) as u32
        };
        s.step(&Event::Access {
            vma,
            index,
            write: step % 3 == 0,
        });
        if step % 4000 == 0 {
            s.check_invariants()
                .unwrap_or_else(|e| panic!("{policy:?} {label} step {step}: {e}"));
        }
    }
    s.check_invariants()
        .unwrap_or_else(|e| panic!("{policy:?} {label}: {e}"));
    assert_eq!(s.vm.oom_kill, 0, "{policy:?} {label}");
    assert!(s.vm.pswpout > 0, "{policy:?} {label}: reclaim swapped");
    s
}

#[test]
fn large_folios_keep_the_invariants_under_reclaim_with_both_lru_designs() {
    for policy in [PolicyName::Cost, PolicyName::Mglru] {
        for kernel in [ThpKernel::V6_8, ThpKernel::V6_12, ThpKernel::V6_13] {
            let thp = ThpConfig {
                kernel,
                hugepages_16kb: size(ThpSizeEnabled::Always),
                ..thp_64k(false)
            };
            let s = mixed_anon_run(policy, thp, false, 8000, &format!("{kernel:?}"));
            let st = s.thp.stats;
            // (64K and 16K faults, 64K and 16K swap-outs, 64K swap-ins, pswpout): 6.8
            // swaps nothing out whole; 6.13 runs as 6.12.
            let got = (
                st[4].anon_fault_alloc,
                st[2].anon_fault_alloc,
                st[4].swpout,
                st[2].swpout,
                st[4].swpin,
                s.vm.pswpout,
            );
            let want = match (policy, kernel) {
                (PolicyName::Cost, ThpKernel::V6_8) => (288, 234, 0, 0, 0, 25_406),
                (PolicyName::Cost, _) => (346, 193, 725, 1042, 451, 35_043),
                (_, ThpKernel::V6_8) => (439, 96, 0, 0, 0, 26_180),
                _ => (464, 68, 987, 92, 820, 39_356),
            };
            assert_eq!(got, want, "{policy:?} {kernel:?}: {st:?}");
        }
    }
}

#[test]
fn an_oom_kill_frees_large_folios_once() {
    let mut s = thp_machine(4096, None, thp_64k(true));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 8192).unwrap();
    touch(&mut s, vma, 8192);
    assert_eq!(s.vm.oom_kill, 1);
    assert_eq!(s.thp.stats[4].anon_fault_alloc, 246);
    // Near the low watermark the 64K blocks fall short and order 0 takes over.
    assert_eq!(s.thp.stats[4].anon_fault_fallback, 3);
    s.check_invariants().unwrap();
    assert_eq!(s.folios.live(), 0);
    assert_eq!(s.node.free, s.node.managed);
}

/// A read of page 5 after the 64K folio of pages 0..16 was swapped out whole
/// to zram: 6.12 and 6.13 (`alloc_swap_folio`) read the whole folio back.
fn swapin_after_whole_swapout(kernel: ThpKernel, discard_first: bool) -> Sim {
    let (mut s, vma, _) = reclaim_64k(kernel, 1024, 0);
    if discard_first {
        s.step(&Event::Discard {
            vma,
            index: 0,
            pages: 1,
        });
    }
    s.step(&Event::Access {
        vma,
        index: 5,
        write: false,
    });
    s.check_invariants().unwrap();
    s
}

#[test]
fn v6_12_swaps_a_whole_folio_back_in_on_zram_as_6_13_does() {
    // alloc_swap_folio is in mainline v6.12 (242d12c98174), not only 6.13.
    let s = swapin_after_whole_swapout(ThpKernel::V6_12, false);
    let f = s.vmas[0].pte(5) & crate::mem::pagetable::PTE_FOLIO_MASK;
    assert_eq!((s.folios[f].order(), s.folios[f].index), (4, 0));
    assert_eq!((s.vm.pgmajfault, s.vm.pswpin), (1, 16));
    assert_ne!(s.vmas[0].pte(6) & PTE_PRESENT, 0);
    assert_eq!(s.thp.stats[4].swpin, 1);
    assert_eq!(s.swap.as_ref().unwrap().used, 0);
}

#[test]
fn v6_13_swaps_a_whole_folio_back_in_on_zram() {
    let s = swapin_after_whole_swapout(ThpKernel::V6_13, false);
    let f = s.vmas[0].pte(5) & crate::mem::pagetable::PTE_FOLIO_MASK;
    assert_eq!((s.folios[f].order(), s.folios[f].index), (4, 0));
    assert_eq!((s.vm.pgmajfault, s.vm.pswpin, s.vm.pgpgin), (1, 16, 64));
    for i in 0..16 {
        let pte = s.vmas[0].pte(i);
        assert_eq!(
            pte & (PTE_PRESENT | 0x1fff_ffff),
            PTE_PRESENT | f,
            "pte {i}"
        );
        // set_ptes of one mk_pte(page, vm_page_prot): all young.
        assert_ne!(pte & PTE_YOUNG, 0, "pte {i}");
    }
    assert_eq!(s.folios[f].mapcount, 16);
    assert_eq!(s.thp.stats[4].swpin, 1);
    assert_eq!(s.thp.stats[4].anon_fault_alloc, 1, "the first fault only");
    // The swap cache is skipped: every slot is free again.
    assert!(!s.folios[f].test(flags::SWAPCACHE));
    assert_eq!(s.swap.as_ref().unwrap().used, 0);
}

#[test]
fn v6_13_swaps_in_a_smaller_block_when_a_pte_of_the_folio_is_gone() {
    // Page 0 discarded: the 64K block is no longer all swap entries, so
    // `can_swapin_thp` drops 64K; 16K is not enabled: order 0.
    let s = swapin_after_whole_swapout(ThpKernel::V6_13, true);
    let f = s.vmas[0].pte(5) & crate::mem::pagetable::PTE_FOLIO_MASK;
    assert_eq!(s.folios[f].order(), 0);
    assert_eq!(s.vm.pswpin, 1);
    // No allocation was tried: no fallback counted.
    assert_eq!(s.thp.stats[4].swpin_fallback, 0);
}

/// 6.13 on zram with the 6.12 zeromap: the 64K folio of pages 0..16,
/// loaded (zero-filled) or stored to, swapped out whole, then page 5 read.
fn zeromap_large_swapin(store: bool) -> Sim {
    large_swapin_zero_tracked(store, crate::config::SwapZeroPages::Zeromap)
}

/// As [`zeromap_large_swapin`], zero-filled pages tracked as `mode` says.
fn large_swapin_zero_tracked(store: bool, mode: crate::config::SwapZeroPages) -> Sim {
    let thp = ThpConfig {
        kernel: ThpKernel::V6_13,
        ..thp_64k(false)
    };
    let mut s = thp_machine_with(8192, Some(1024), thp, |c| {
        c.swap_zero_pages = mode;
    });
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    s.step(&Event::Access {
        vma,
        index: 0,
        write: store,
    });
    let f = s.vmas[vma as usize].pte(0) & crate::mem::pagetable::PTE_FOLIO_MASK;
    assert_eq!(reclaim_whole(&mut s, f), 16);
    s.step(&Event::Access {
        vma,
        index: 5,
        write: false,
    });
    s.check_invariants().unwrap();
    s
}

#[test]
fn v6_13_fills_a_zero_filled_large_swap_in_without_io() {
    // Swapped out as zero-filled (swpout_zero, nothing written), read back
    // whole: swap_read_folio_zeromap fills it (swpin_zero per page), with
    // no device read, pswpin, pgpgin or mTHP swpin; the fault is still major.
    let s = zeromap_large_swapin(false);
    assert_eq!((s.vm.swpout_zero, s.vm.pswpout), (16, 0));
    let f = s.vmas[0].pte(5) & crate::mem::pagetable::PTE_FOLIO_MASK;
    assert_eq!(s.folios[f].order(), 4);
    assert_eq!((s.vm.swpin_zero, s.vm.pswpin, s.vm.pgpgin), (16, 0, 0));
    assert_eq!(s.vm.pgmajfault, 1);
    assert_eq!(s.thp.stats[4].swpin, 0);
    assert_eq!(s.swap.as_ref().unwrap().dev.pages_read, 0);
    assert!(!s.folios[f].test(flags::NONZERO));
    // Stored to: read from the device, and the folio keeps its data (a
    // later swap-out writes it).
    let s = zeromap_large_swapin(true);
    let f = s.vmas[0].pte(5) & crate::mem::pagetable::PTE_FOLIO_MASK;
    assert_eq!((s.vm.swpin_zero, s.vm.pswpin, s.vm.pgpgin), (0, 16, 64));
    assert_eq!(s.thp.stats[4].swpin, 1);
    assert!(s.folios[f].test(flags::NONZERO));
}

#[test]
fn v6_13_zram_fills_a_same_filled_large_swap_in_without_a_device_read() {
    // zram's same-filled pages (`zram-same`): the zero-filled 64K folio went
    // to zram as a pattern (pswpout 16, no swpout_zero). Read back whole,
    // the bio is submitted (pswpin 16, pgpgin 64, the mTHP swpin) but zram
    // fills each page from its pattern (v6.13 zram_bio_read →
    // zram_read_page): no device page is read, as for an order-0 page.
    use crate::config::SwapZeroPages;
    let s = large_swapin_zero_tracked(false, SwapZeroPages::ZramSame);
    assert_eq!((s.vm.swpout_zero, s.vm.pswpout), (0, 16));
    let f = s.vmas[0].pte(5) & crate::mem::pagetable::PTE_FOLIO_MASK;
    assert_eq!(s.folios[f].order(), 4);
    assert_eq!((s.vm.swpin_zero, s.vm.pswpin, s.vm.pgpgin), (0, 16, 64));
    assert_eq!(s.thp.stats[4].swpin, 1);
    assert_eq!(s.swap.as_ref().unwrap().dev.pages_read, 0);
    assert!(!s.folios[f].test(flags::NONZERO));
    // Stored to: the same counts, and the 16 pages are read (decompressed).
    let s = large_swapin_zero_tracked(true, SwapZeroPages::ZramSame);
    let f = s.vmas[0].pte(5) & crate::mem::pagetable::PTE_FOLIO_MASK;
    assert_eq!((s.vm.swpin_zero, s.vm.pswpin, s.vm.pgpgin), (0, 16, 64));
    assert_eq!(s.thp.stats[4].swpin, 1);
    assert_eq!(s.swap.as_ref().unwrap().dev.pages_read, 16);
    assert!(s.folios[f].test(flags::NONZERO));
}

/// A 64K block that mixes same-filled and ordinary zram pages (`zram-same`):
/// v6.12 zram reads the large folio's bio page by page (`zram_bio_read` →
/// `zram_read_page`), filling a `ZRAM_SAME` page from its pattern and
/// decompressing only the others. The stored-to 64K folio is swapped out
/// (16 pages written), then 4 of its slots are marked same-filled, as
/// zram's per-page `page_same_filled` would have marked pages holding a
/// pattern. The whole-folio swap-in counts the bio as before (`pswpin` 16,
/// `pgpgin` 64, the mTHP `swpin`, no `swpin_zero`: that is the zeromap's
/// count of all-zero folios, `swap_read_folio_zeromap`), but the device
/// reads 12 pages, and the fault waits for 12 pages' transfer, not 16.
#[test]
fn v6_13_zram_reads_only_the_pages_of_a_large_swap_in_that_are_not_same_filled() {
    use crate::config::{DeviceKind, SwapZeroPages};
    use crate::mem::pagetable::PTE_FOLIO_MASK;
    // (device pages read, the swap-in fault's time) with `same` slots marked.
    let run = |same: u32| {
        let thp = ThpConfig {
            kernel: ThpKernel::V6_13,
            ..thp_64k(false)
        };
        let mut s = thp_machine_with(8192, Some(1024), thp, |c| {
            c.swap_zero_pages = SwapZeroPages::ZramSame;
        });
        assert_eq!(s.cfg.swap.device, DeviceKind::Zram);
        let t = s.add_task("t");
        let vma = s.mmap_anon(t, 64).unwrap();
        let write = |s: &mut Sim, index| {
            s.step(&Event::Access {
                vma,
                index,
                write: true,
            })
        };
        write(&mut s, 0);
        let f = s.vmas[vma as usize].pte(0) & PTE_FOLIO_MASK;
        assert_eq!(reclaim_whole(&mut s, f), 16);
        assert_eq!(s.vm.pswpout, 16);
        let first = s.vmas[vma as usize].pte(0) - 1;
        s.swap.as_mut().unwrap().zeromap_set(first + 2, same);
        let (read0, t0) = (s.swap.as_ref().unwrap().dev.pages_read, s.clock);
        s.step(&Event::Access {
            vma,
            index: 5,
            write: false,
        });
        let f = s.vmas[vma as usize].pte(5) & PTE_FOLIO_MASK;
        assert_eq!(s.folios[f].order(), 4);
        assert!(s.folios[f].test(flags::NONZERO));
        assert_eq!((s.vm.swpin_zero, s.vm.pswpin, s.vm.pgpgin), (0, 16, 64));
        assert_eq!(s.thp.stats[4].swpin, 1);
        s.check_invariants().unwrap();
        (
            s.swap.as_ref().unwrap().dev.pages_read - read0,
            s.clock - t0,
        )
    };
    let (read_none, ns_none) = run(0);
    let (read_mixed, ns_mixed) = run(4);
    assert_eq!((read_none, read_mixed), (16, 12));
    // The fault's time from the default cost model and zram's timing (read
    // 3 µs, write 6 µs, 2000 MB/s: 2,048 ns a page). The swap-out's 16-page
    // write keeps zram busy from t0 + 1,150 (the reclaimer's clock starts
    // at t0 and charges one rmap walk, 150, and `pageout`, 1,000) to
    // t0 + 1,150 + 16 × 2,048 = t0 + 33,918. The fault's read, issued at
    // t0 + 2,050 (access 50 + major fault 2,000), queues behind it and
    // ends `pages × 2,048 + 3,000` later: 16 pages → 69,686, 12 → 61,494.
    assert_eq!(ns_none, 33_918 + 16 * 2_048 + 3_000);
    assert_eq!(ns_mixed, 33_918 + 12 * 2_048 + 3_000);
}

/// v6.12/6.13 `do_swap_page` reading a 64K folio back whole from zram
/// (`alloc_swap_folio`, the swap cache skipped) at a load or a store of
/// page 5: every one of the 16 PTEs maps it young (`set_ptes` of one
/// `mk_pte(page, vma->vm_page_prot)`: the accessed bit is in the
/// protection on x86 and arm64), all dirty only at a store (`pte_mkdirty`
/// of the exclusive fresh folio, so no `do_wp_page` follows); the folio is
/// not marked accessed (no `folio_mark_accessed`: PG_referenced clear),
/// not in the swap cache, and `folio_add_lru` puts it at the head of the
/// inactive anon list (classic LRU; `workingset_refault` found its shadow
/// too old to activate it).
#[test]
fn a_large_swap_in_maps_every_pte_young_and_leaves_the_folio_unreferenced_on_the_inactive_list() {
    for write in [false, true] {
        let (mut s, vma, _) = reclaim_64k(ThpKernel::V6_13, 1024, 0);
        let faults = s.vm.pgfault;
        s.step(&Event::Access {
            vma,
            index: 5,
            write,
        });
        let f = s.vmas[vma as usize].pte(5) & crate::mem::pagetable::PTE_FOLIO_MASK;
        assert_eq!((s.folios[f].order(), s.folios[f].index), (4, 0));
        assert_eq!(
            s.vm.pgfault - faults,
            1,
            "one fault, no do_wp_page after it"
        );
        for i in 0..16 {
            let pte = s.vmas[vma as usize].pte(i);
            assert_eq!(pte & crate::mem::pagetable::PTE_FOLIO_MASK, f);
            let dirty = crate::mem::pagetable::PTE_DIRTY;
            assert_eq!(
                pte & (PTE_PRESENT | PTE_YOUNG | dirty),
                PTE_PRESENT | PTE_YOUNG | if write { dirty } else { 0 },
                "pte {i}, write {write}"
            );
        }
        let fo = s.folios[f];
        assert_eq!(
            (
                fo.test(flags::REFERENCED),
                fo.test(flags::ACTIVE),
                fo.test(flags::SWAPCACHE),
                fo.test(flags::SWAPBACKED),
                fo.test(flags::LRU)
            ),
            (false, false, false, true, true),
            "write {write}"
        );
        assert_eq!(LruList::from_index(s.folios.lru(f)), LruList::InactiveAnon);
        assert_eq!(
            s.memcgs[0].lruvec.lists[LruList::InactiveAnon as usize].head,
            f
        );
        // The next access to another page hits.
        let hits = s.acc.hits;
        s.step(&Event::Access {
            vma,
            index: 9,
            write,
        });
        assert_eq!((s.acc.hits - hits, s.vm.pgfault - faults), (1, 1));
        s.check_invariants().unwrap();
    }
}
