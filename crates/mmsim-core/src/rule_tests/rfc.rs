//! Rule tests of seed 003's RFC v2 variant (`thp.kernel = "rfc-v2"`,
//! `crate::huge_memory_rfc`): the order a write fault allocates (the arch
//! order, VMA bounds, neighbouring PTEs, every order down to 2 tried), the
//! buddy fallback chain, the charge failure, the write fault on the zero
//! page, reclaim splitting as 6.8, and the settings the variant refuses.

use super::*;
use crate::huge_memory::{Thp, VmaThpAdvice};
use crate::huge_memory::{ThpConfig, ThpEnabled, ThpKernel, ThpSizeConfig, ThpSizeEnabled};
use crate::mem::pagetable::{PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG};

/// `thp.kernel = "rfc-v2"` with `arch_order`.
fn rfc(arch_order: u8) -> ThpConfig {
    ThpConfig {
        kernel: ThpKernel::RfcV2,
        arch_order,
        ..Default::default()
    }
}

fn machine(thp: ThpConfig) -> Sim {
    super::thp::thp_machine(8192, None, thp)
}

/// Pages taken from the zone (the zero page takes none).
fn used(s: &Sim) -> u64 {
    s.node.managed - s.node.free
}

fn pte_folio(s: &Sim, vma: u32, index: u32) -> FolioId {
    let p = s.vmas[vma as usize].pte(index);
    assert!(p & PTE_PRESENT != 0, "page {index} not present");
    p & PTE_FOLIO_MASK
}

/// (order, first page) of the folio a write fault at `index` of a fresh
/// `len`-page VMA maps.
fn fault_in(thp: ThpConfig, len: u64, index: u32) -> (u8, u32) {
    let mut s = machine(thp);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, len).unwrap();
    let f = fault_anon(&mut s, vma, index);
    s.check_invariants().unwrap();
    (s.folios[f].order(), s.folios[f].index)
}

#[test]
fn the_rfc_maps_its_arch_order_in_every_anonymous_vma() {
    // Default arch order 4: a 64 KiB folio, naturally aligned.
    assert_eq!(fault_in(rfc(4), 1024, 100), (4, 96));
    assert_eq!(fault_in(rfc(3), 1024, 100), (3, 96));
    assert_eq!(fault_in(rfc(2), 1024, 100), (2, 100));
    // arch order 0: the RFC path off, order 0.
    assert_eq!(fault_in(rfc(0), 1024, 100), (0, 100));
    // No MADV_NOHUGEPAGE check in the RFC v2 (v3 added one).
    let nohuge = ThpConfig {
        vma_advice: VmaThpAdvice::Nohugepage,
        ..rfc(4)
    };
    assert_eq!(fault_in(nohuge, 1024, 100), (4, 96));
    // PMD-size THP is untouched and comes first: top-level `always`.
    let pmd = ThpConfig {
        enabled: ThpEnabled::Always,
        ..rfc(4)
    };
    assert_eq!(fault_in(pmd.clone(), 1024, 100), (9, 0));
    // ... and where the PMD does not fit, the RFC's order.
    assert_eq!(fault_in(pmd, 500, 100), (4, 96));
    // The same fault under 6.12 defaults: order 0.
    assert_eq!(fault_in(ThpConfig::default(), 1024, 100), (0, 100));
}

#[test]
fn every_order_down_to_2_is_tried_against_the_vma_bounds() {
    // 24 pages: page 20's 64K block (16..32) sticks out, its 32K block
    // (16..24) fits. (6.12 with 64K and 16K enabled takes 16K here.)
    assert_eq!(fault_in(rfc(4), 24, 20), (3, 16));
    // 22 pages: 16..24 sticks out too, 20..24 as well: 16K does not fit
    // either (20..24 > 22), so order 0.
    assert_eq!(fault_in(rfc(4), 22, 20), (0, 20));
    // 22 pages, page 17: the 16K block 16..20 fits.
    assert_eq!(fault_in(rfc(4), 22, 17), (2, 16));
    // Never order 1: a 3-page VMA takes order 0.
    assert_eq!(fault_in(rfc(4), 3, 0), (0, 0));
}

#[test]
fn a_present_pte_in_the_block_drops_to_the_next_order() {
    let mut s = machine(ThpConfig::default());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    // Page 17 faulted while the RFC was off: an order-0 folio.
    let small = fault_anon(&mut s, vma, 17);
    assert_eq!(s.folios[small].order(), 0);
    s.thp = Thp::new(&rfc(4), false, false);
    // Page 20: 16..32 and 16..24 hold page 17; 20..24 is empty: 16K.
    let f = fault_anon(&mut s, vma, 20);
    assert_eq!((s.folios[f].order(), s.folios[f].index), (2, 20));
    // Page 30: 16..32 holds 17 and 20..24; 24..32 is empty: 32K.
    let g = fault_anon(&mut s, vma, 30);
    assert_eq!((s.folios[g].order(), s.folios[g].index), (3, 24));
    // Page 5: the whole 64K block 0..16 is empty.
    let h = fault_anon(&mut s, vma, 5);
    assert_eq!((s.folios[h].order(), s.folios[h].index), (4, 0));
    for i in 0..16 {
        let p = s.vmas[vma as usize].pte(i);
        assert_eq!(p & PTE_FOLIO_MASK, h);
        assert_ne!(p & PTE_DIRTY, 0);
        assert_ne!(p & PTE_YOUNG, 0, "set_ptes of one young PTE");
    }
    // Page 16: every order's block holds a mapped page: order 0.
    let k = fault_anon(&mut s, vma, 16);
    assert_eq!(s.folios[k].order(), 0);
    let st = s.thp.stats;
    assert_eq!(
        (
            st[4].anon_fault_alloc,
            st[3].anon_fault_alloc,
            st[2].anon_fault_alloc
        ),
        (1, 1, 1)
    );
    assert_eq!(st[2].anon_fault_fallback + st[3].anon_fault_fallback, 0);
    assert_eq!(s.vm.pgfault, 5);
    assert_eq!(used(&s), 1 + 4 + 8 + 16 + 1);
    s.check_invariants().unwrap();
}

/// Takes every free page, then gives back the pages whose pfn modulo 8 is
/// below `keep` (`keep` = 4: aligned 16 KiB blocks, nothing larger; 1:
/// single pages). The pages kept are in no folio, so the sim's invariants
/// no longer hold after this.
fn fragment(s: &mut Sim, keep: u64) {
    let mut held = Vec::new();
    while let Some(p) = s
        .phys
        .zone
        .alloc_pages(0, crate::page_alloc::MigrateType::Movable)
    {
        held.push(p);
    }
    let mut freed = 0;
    for &p in &held {
        if p % 8 < keep {
            s.phys.zone.free_pages_block(p, 0);
            freed += 1;
        }
    }
    s.node.free -= held.len() as u64 - freed;
}

#[test]
fn a_buddy_failure_tries_each_lower_order_then_a_page() {
    // Only 16K blocks free: 64K and 32K fail, 16K is allocated.
    let mut s = machine(rfc(4));
    fragment(&mut s, 4);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = fault_anon(&mut s, vma, 5);
    assert_eq!((s.folios[f].order(), s.folios[f].index), (2, 4));
    let st = s.thp.stats;
    assert_eq!(
        (
            st[4].anon_fault_fallback,
            st[3].anon_fault_fallback,
            st[2].anon_fault_fallback
        ),
        (1, 1, 0)
    );
    assert_eq!(st[2].anon_fault_alloc, 1);
    assert_eq!(st[4].anon_fault_fallback_charge, 0);

    // Only single pages free: 64K, 32K and 16K fail, then order 0.
    let mut s = machine(rfc(4));
    fragment(&mut s, 1);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = fault_anon(&mut s, vma, 5);
    assert_eq!(s.folios[f].order(), 0);
    let st = s.thp.stats;
    assert_eq!(
        (
            st[4].anon_fault_fallback,
            st[3].anon_fault_fallback,
            st[2].anon_fault_fallback
        ),
        (1, 1, 1)
    );
    assert_eq!(
        st[4].anon_fault_alloc + st[3].anon_fault_alloc + st[2].anon_fault_alloc,
        0
    );
}

#[test]
fn a_charge_failure_goes_to_order_0_not_to_the_next_order() {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(8192),
        memcg_max: Some(Size::from_pages(12)),
        thp: rfc(4),
        ..Default::default()
    };
    cfg.policy.name = PolicyName::Cost;
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let free = s.node.free;
    // 16 pages do not fit under memory.max = 12 and the empty group has
    // nothing to reclaim: the RFC's fault would return VM_FAULT_OOM and be
    // retried; mmsim maps an order-0 page (6.12 would charge 16K here).
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 0);
    let st = s.thp.stats;
    assert_eq!(
        (st[4].anon_fault_fallback, st[4].anon_fault_fallback_charge),
        (1, 1)
    );
    assert_eq!(st[3].anon_fault_fallback + st[2].anon_fault_fallback, 0);
    assert_eq!(st[3].anon_fault_alloc + st[2].anon_fault_alloc, 0);
    // The 64K block went back to the buddy allocator; one page is charged.
    assert_eq!(s.node.free, free - 1);
    assert_eq!(s.memcgs[0].usage, 1);
    assert_eq!(s.vm.oom_kill, 0);
    s.check_invariants().unwrap();
}

fn zero_machine(thp: ThpConfig) -> Sim {
    super::thp::thp_machine_with(8192, None, thp, |c| c.zero_page = true)
}

fn access(s: &mut Sim, vma: u32, index: u32, write: bool) {
    s.step(&Event::Access { vma, index, write });
}

#[test]
fn a_write_to_the_zero_page_maps_a_large_folio_over_its_range() {
    let mut s = zero_machine(rfc(4));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    // Reads map the order-0 zero page (no large zero page in the RFC).
    for i in 0..16 {
        access(&mut s, vma, i, false);
    }
    assert_eq!(pte_folio(&s, vma, 7), s.zero_folio);
    assert_eq!(used(&s), 0);
    // The store to page 5: one 64K folio replaces the 16 zero-page PTEs.
    access(&mut s, vma, 5, true);
    let f = pte_folio(&s, vma, 5);
    assert_eq!((s.folios[f].order(), s.folios[f].index), (4, 0));
    for i in 0..16 {
        let p = s.vmas[vma as usize].pte(i);
        assert_eq!(p & PTE_FOLIO_MASK, f);
        assert_ne!(p & PTE_DIRTY, 0);
        assert_ne!(p & PTE_YOUNG, 0);
    }
    assert_eq!(s.thp.stats[4].anon_fault_alloc, 1);
    assert_eq!(s.vm.pgfault, 17);
    assert_eq!(used(&s), 16);
    // Stores to the rest of the block are hits now.
    access(&mut s, vma, 9, true);
    assert_eq!(s.vm.pgfault, 17);
    s.check_invariants().unwrap();
}

#[test]
fn the_zero_page_write_keeps_to_none_and_zero_ptes() {
    let mut s = zero_machine(ThpConfig::default());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    // Page 3 holds an order-0 folio (written while the RFC was off).
    access(&mut s, vma, 3, true);
    s.thp = Thp::new(&rfc(4), true, false);
    // Page 5 reads the zero page; pages 4, 6, 7 are none.
    access(&mut s, vma, 5, false);
    assert_eq!(pte_folio(&s, vma, 5), s.zero_folio);
    access(&mut s, vma, 5, true);
    // 0..16 and 0..8 hold page 3: the 16K block 4..8 (zero and none PTEs).
    let f = pte_folio(&s, vma, 5);
    assert_eq!((s.folios[f].order(), s.folios[f].index), (2, 4));
    for i in 4..8 {
        assert_eq!(pte_folio(&s, vma, i), f);
    }
    // A read fault after that still maps the zero page.
    access(&mut s, vma, 40, false);
    assert_eq!(pte_folio(&s, vma, 40), s.zero_folio);
    s.check_invariants().unwrap();
}

#[test]
fn a_write_to_the_huge_zero_page_splits_it_then_maps_the_rfc_order() {
    let thp = ThpConfig {
        enabled: ThpEnabled::Always,
        ..rfc(4)
    };
    let mut s = zero_machine(thp);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1024).unwrap();
    access(&mut s, vma, 100, false);
    assert_eq!(s.vm.thp_zero_page_alloc, 1);
    assert_eq!(pte_folio(&s, vma, 300), s.zero_folio);
    access(&mut s, vma, 100, true);
    assert_eq!(s.vm.thp_split_pmd, 1);
    let f = pte_folio(&s, vma, 100);
    assert_eq!((s.folios[f].order(), s.folios[f].index), (4, 96));
    // The rest of the split PMD still maps the zero page.
    assert_eq!(pte_folio(&s, vma, 95), s.zero_folio);
    assert_eq!(pte_folio(&s, vma, 112), s.zero_folio);
    assert_eq!(used(&s), 16);
    s.check_invariants().unwrap();
}

#[test]
fn under_6_12_the_zero_page_write_stays_order_0() {
    // The contrast: 6.12 with 64K `always` copies one page (`wp_page_copy`).
    let thp = ThpConfig {
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    };
    let mut s = zero_machine(thp);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    access(&mut s, vma, 5, false);
    access(&mut s, vma, 5, true);
    assert_eq!(s.folios[pte_folio(&s, vma, 5)].order(), 0);
}

#[test]
fn reclaim_splits_an_rfc_folio_before_swap_out_as_v6_8_does() {
    let mut s = super::thp::thp_machine(8192, Some(1024), rfc(4));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 4);
    let (reclaimed, _) = super::filefolio::reclaim_one(&mut s, f);
    assert_eq!(reclaimed, 16);
    let st = s.thp.stats[4];
    assert_eq!((st.swpout, st.swpout_fallback, st.split), (0, 0, 1));
    assert_eq!(s.vm.pswpout, 16);
    for i in 0..16 {
        assert_eq!(s.vmas[vma as usize].pte(i) & PTE_PRESENT, 0);
    }
}

#[test]
fn the_rfc_settings_are_checked() {
    let err = |thp: ThpConfig| {
        let mut cfg = MachineConfig {
            thp,
            ..Default::default()
        };
        cfg.policy.name = PolicyName::Cost;
        Sim::new(cfg)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    for bad in [1, 5, 9] {
        let e = err(rfc(bad));
        assert!(e.contains("machine.thp.arch_order"), "{e}");
        assert!(e.contains(&format!("{bad} is out of range")), "{e}");
    }
    let e = err(ThpConfig {
        arch_order: 3,
        ..Default::default()
    });
    assert!(
        e.contains("machine.thp.arch_order") && e.contains("rfc-v2"),
        "{e}"
    );
    let e = err(ThpConfig {
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..rfc(4)
    });
    assert!(
        e.contains("machine.thp.hugepages-64kB.enabled") && e.contains("no per-size"),
        "{e}"
    );
    let e = err(ThpConfig {
        hugepages_2048kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Never,
        },
        ..rfc(4)
    });
    assert!(e.contains("machine.thp.hugepages-2048kB.enabled"), "{e}");
    for good in [0, 2, 3, 4] {
        assert_eq!(err(rfc(good)), "");
    }
}

#[test]
fn rfc_folios_keep_the_invariants_under_reclaim_with_both_lru_designs() {
    for policy in [PolicyName::Cost, PolicyName::Mglru] {
        for zero_page in [false, true] {
            // The VMA's last 6 pages take a 16K folio and two pages; zero-page
            // reads leave more holes.
            let label = format!("zero_page {zero_page}");
            let s = super::thp::mixed_anon_run(policy, rfc(4), zero_page, 8006, &label);
            let st = s.thp.stats;
            // (64K and 16K faults, 64K splits, pswpout)
            let want = match (policy, zero_page) {
                (PolicyName::Cost, false) => (500, 1, 417, 27_611),
                (PolicyName::Cost, true) => (166, 288, 89, 18_700),
                (_, false) => (500, 1, 376, 27_592),
                (_, true) => (166, 288, 57, 18_530),
            };
            let got = (
                st[4].anon_fault_alloc,
                st[2].anon_fault_alloc,
                st[4].split,
                s.vm.pswpout,
            );
            assert_eq!(got, want, "{policy:?} {zero_page}: {st:?}");
            // Split before swap-out, as 6.8: nothing goes out whole.
            assert_eq!(st[4].swpout + st[3].swpout + st[2].swpout, 0);
        }
    }
}
