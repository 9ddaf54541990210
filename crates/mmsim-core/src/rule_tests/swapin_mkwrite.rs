//! Rule tests of the PTE a swap-in installs (`do_swap_page`, mm/memory.c
//! v6.12, `crate::fault_swapcache::swapin_pte_mkwrite`): since v6.11 a read
//! fault on an exclusive entry maps the page writable and clean, so the
//! next store is no fault (`thp.kernel` 6.12/6.13); under 6.8 it is a
//! `do_wp_page` fault. An entry fork shared stays read-only. And the young
//! bits of a large anonymous fault and of the zero page (`vm_page_prot`
//! carries the accessed bit on x86).

use super::*;
use crate::huge_memory::{ThpConfig, ThpKernel, ThpSizeConfig, ThpSizeEnabled};
use crate::mem::pagetable::{PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG};

pub(super) fn access(s: &mut Sim, vma: u32, index: u32, write: bool) {
    s.step(&Event::Access { vma, index, write });
}

pub(super) fn pte(s: &Sim, vma: u32, index: u32) -> u32 {
    s.vmas[vma as usize].pte(index)
}

/// The folio present PTE `index` of `vma` maps.
pub(super) fn folio_at(s: &Sim, vma: u32, index: u32) -> FolioId {
    let p = pte(s, vma, index);
    assert!(p & PTE_PRESENT != 0, "page {index} not present");
    p & PTE_FOLIO_MASK
}

/// (young, dirty) of PTE `index` of `vma`.
fn bits(s: &Sim, vma: u32, index: u32) -> (bool, bool) {
    let p = pte(s, vma, index);
    (p & PTE_YOUNG != 0, p & PTE_DIRTY != 0)
}

/// A 65,536-page machine under `kernel` with a 4096-page swap device of
/// `kind` and a task whose 256-page VMA was written page by page in a group
/// limited to 64 pages, then left for a second (writeback done): page 0
/// was swapped out long ago. As `rule_tests::swap`'s region.
fn region(kernel: ThpKernel, kind: DeviceKind) -> (Sim, u32) {
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        memcg_max: Some(Size::from_pages(64)),
        swap: DeviceConfig {
            size: Some(Size::from_pages(4096)),
            ..DeviceConfig::of(kind)
        },
        thp: ThpConfig {
            kernel,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 256).unwrap();
    for i in 0..256 {
        access(&mut s, vma, i, true);
    }
    s.step(&Event::Think { ns: 1_000_000_000 });
    let p = pte(&s, vma, 0);
    assert!(p != 0 && p & PTE_PRESENT == 0, "page 0 is swapped out");
    (s, vma)
}

/// A read swap-in of an exclusive order-0 entry, then a store to it: under
/// 6.12 the store is a hit (the PTE was made writable, `pte_mkwrite`), and
/// on the SSD the folio keeps its swap-cache slot; under 6.8 it is a
/// write-protect fault. The swap-in itself is one major fault either way,
/// and maps the page young and clean.
#[test]
fn a_read_swap_in_maps_an_exclusive_page_writable_from_v6_11() {
    for kernel in [ThpKernel::V6_12, ThpKernel::V6_13, ThpKernel::V6_8] {
        for kind in [DeviceKind::Ssd, DeviceKind::Zram] {
            let (mut s, vma) = region(kernel, kind);
            let (faults, majors) = (s.vm.pgfault, s.vm.pgmajfault);
            access(&mut s, vma, 0, false);
            assert_eq!(
                (s.vm.pgfault - faults, s.vm.pgmajfault - majors),
                (1, 1),
                "{kernel:?} {kind:?}"
            );
            let f = folio_at(&s, vma, 0);
            assert_eq!(bits(&s, vma, 0), (true, false), "{kernel:?} {kind:?}");
            // The SSD keeps the slot on a read (swap far from full), zram
            // frees it (`crate::fault`).
            let cached = kind == DeviceKind::Ssd;
            assert_eq!(s.folios[f].test(flags::SWAPCACHE), cached);
            let (used, hits) = (s.swap.as_ref().unwrap().used, s.acc.hits);
            access(&mut s, vma, 0, true);
            let v6_11 = kernel != ThpKernel::V6_8;
            assert_eq!(
                s.vm.pgfault - faults,
                if v6_11 { 1 } else { 2 },
                "{kernel:?} {kind:?}"
            );
            assert_eq!(s.acc.hits - hits, 1, "a present PTE: a hit either way");
            assert_eq!(folio_at(&s, vma, 0), f);
            assert_eq!(bits(&s, vma, 0), (true, true), "{kernel:?} {kind:?}");
            if v6_11 {
                // No do_wp_page: the folio stays in the swap cache with its
                // slot (dirty through its PTE), as the kernel's does.
                assert_eq!(s.folios[f].test(flags::SWAPCACHE), cached);
                assert_eq!(s.swap.as_ref().unwrap().used, used);
            }
            // Further stores are hits.
            access(&mut s, vma, 0, true);
            assert_eq!(s.vm.pgfault - faults, if v6_11 { 1 } else { 2 });
            s.check_invariants().unwrap();
        }
    }
}

/// The store through the writable clean PTE leaves the folio in the swap
/// cache, clean, with its slot; reclaim's `try_to_unmap` moves the dirty
/// bit to the folio, which is written again to the same slot
/// (`pageout`), where a folio only read is dropped without a write.
#[test]
fn a_stored_to_swap_cache_folio_is_written_again_to_its_slot() {
    for store in [false, true] {
        let (mut s, vma) = region(ThpKernel::V6_12, DeviceKind::Ssd);
        let entry = pte(&s, vma, 0);
        access(&mut s, vma, 0, false);
        let f = folio_at(&s, vma, 0);
        assert_eq!(s.folios[f].swap, entry);
        if store {
            access(&mut s, vma, 0, true);
            assert!(!s.folios[f].test(flags::DIRTY), "dirty in its PTE only");
        }
        let pswpout = s.vm.pswpout;
        super::filefolio::reclaim_one(&mut s, f);
        assert_eq!(s.vm.pswpout - pswpout, u64::from(store), "store={store}");
        assert_eq!(pte(&s, vma, 0), entry, "store={store}: the same slot");
    }
}

/// After fork a swap entry is not exclusive: the child's read maps it
/// read-only and its store faults and copies (`do_wp_page` →
/// `wp_page_copy`) under every version. The parent's entry, once the
/// child's copy and reclaim left it the slot's only reference and the
/// folio out of the swap cache, is read from zram into a fresh folio
/// (exclusive): under 6.12 writable, so its store is no fault.
#[test]
fn an_entry_shared_by_fork_is_read_only_until_it_is_the_last_reference() {
    for kernel in [ThpKernel::V6_12, ThpKernel::V6_8] {
        let mut cfg = MachineConfig {
            memory: Size::from_pages(4096),
            swap: DeviceConfig {
                size: Some(Size::from_pages(1024)),
                ..DeviceConfig::of(DeviceKind::Zram)
            },
            ..Default::default()
        };
        cfg.thp.kernel = kernel;
        let mut s = Sim::new(cfg).unwrap();
        let t = s.add_task("p");
        let vma = s.mmap_anon(t, 2).unwrap();
        access(&mut s, vma, 0, true);
        access(&mut s, vma, 1, true);
        let c = s.fork_task(t).unwrap();
        let cvma = s.task_vmas(c).unwrap()[0];
        let f = folio_at(&s, vma, 1);
        assert_eq!(super::filefolio::reclaim_one(&mut s, f).0, 1);
        let entry = pte(&s, vma, 1);
        assert_eq!((pte(&s, cvma, 1), s.fork_swap_refs(entry - 1)), (entry, 2));
        // The child's load: read-only, not exclusive.
        let faults = s.vm.pgfault;
        access(&mut s, cvma, 1, false);
        let g = folio_at(&s, cvma, 1);
        assert_eq!(bits(&s, cvma, 1), (true, false));
        assert!(s.folio_anon_shared(g) && !s.folios[g].maywrite());
        // Its store faults and copies.
        access(&mut s, cvma, 1, true);
        assert_eq!(s.vm.pgfault - faults, 2, "{kernel:?}");
        assert_eq!(s.fork_stats().cow_copies, 1);
        assert_ne!(folio_at(&s, cvma, 1), g);
        // Reclaim drops the unmapped swap-cache folio; the parent's entry
        // is the slot's last reference.
        assert_eq!(super::filefolio::reclaim_one(&mut s, g).0, 1);
        assert_eq!(pte(&s, vma, 1), entry);
        access(&mut s, vma, 1, false);
        assert_eq!(s.vm.pgfault - faults, 3);
        assert_eq!(bits(&s, vma, 1), (true, false));
        access(&mut s, vma, 1, true);
        let v6_11 = kernel != ThpKernel::V6_8;
        assert_eq!(
            s.vm.pgfault - faults,
            if v6_11 { 3 } else { 4 },
            "{kernel:?}"
        );
        assert_eq!(bits(&s, vma, 1), (true, true));
        assert_eq!(s.fork_stats().cow_copies, 1);
        s.check_invariants().unwrap();
    }
}

/// The SSD variant, where the last reference finds the folio still in the
/// swap cache: a read swap-in marked it writable and a store dirtied it
/// through that PTE; reclaim unmapped it (`try_to_unmap`: no PTE left to be
/// writable) and started its write, so it stays in the swap cache; the
/// task forked while it was swapped out (the entry is no longer exclusive,
/// `copy_nonpresent_pte`) and the child exited. The parent's read fault
/// maps it read-only (not exclusive, `folio_ref_count` > 1 with the swap
/// cache's reference) under 6.12 too, so its store is a write-protect
/// fault that reuses the folio (no copy).
#[test]
fn the_last_reference_of_a_forked_entry_found_in_the_swap_cache_maps_read_only() {
    let (mut s, vma) = region(ThpKernel::V6_12, DeviceKind::Ssd);
    access(&mut s, vma, 0, false);
    access(&mut s, vma, 0, true);
    let f = folio_at(&s, vma, 0);
    assert!(s.folios[f].maywrite());
    assert_eq!(
        super::filefolio::reclaim_one(&mut s, f).0,
        0,
        "under writeback"
    );
    assert_eq!(pte(&s, vma, 0), s.folios[f].swap);
    assert!(s.folios[f].test(flags::SWAPCACHE) && !s.folios[f].maywrite());
    // Put back on its list, as `shrink_inactive_list` does.
    s.folio_add_lru(f);
    let t = s.vmas[vma as usize].task;
    let c = s.fork_task(t).unwrap();
    s.exit_task(c).unwrap();
    let faults = s.vm.pgfault;
    access(&mut s, vma, 0, false);
    assert_eq!(folio_at(&s, vma, 0), f);
    assert!(s.folios[f].test(flags::SWAPCACHE) && !s.folios[f].maywrite());
    assert_eq!(bits(&s, vma, 0), (true, false));
    access(&mut s, vma, 0, true);
    assert_eq!(s.vm.pgfault - faults, 2, "the store faults");
    assert_eq!((folio_at(&s, vma, 0), s.fork_stats().cow_copies), (f, 0));
    assert_eq!(bits(&s, vma, 0), (true, true));
    s.check_invariants().unwrap();
}

/// Fork write-protects a page a read swap-in had mapped writable: the
/// parent's store after the fork faults (and reuses or copies), under 6.12 too.
#[test]
fn fork_write_protects_a_page_mapped_writable_by_a_read_swap_in() {
    let (mut s, vma) = region(ThpKernel::V6_12, DeviceKind::Zram);
    access(&mut s, vma, 0, false);
    let f = folio_at(&s, vma, 0);
    assert!(s.folios[f].maywrite());
    let t = s.vmas[vma as usize].task;
    s.fork_task(t).unwrap();
    assert!(!s.folios[f].maywrite());
    let faults = s.vm.pgfault;
    access(&mut s, vma, 0, true);
    assert_eq!(s.vm.pgfault - faults, 1);
    assert_eq!(s.fork_stats().cow_copies, 1);
    s.check_invariants().unwrap();
}

/// 64K `always` under `kernel`, on 8192 pages with a 2048-page swap of `kind`.
fn thp_64k(kernel: ThpKernel, kind: DeviceKind) -> Sim {
    let thp = ThpConfig {
        kernel,
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    };
    super::thp::thp_machine_with(8192, Some(2048), thp, |c| c.swap.device = kind)
}

/// A large folio read back whole from zram (`alloc_swap_folio`, v6.12) by
/// a read fault is a fresh, exclusive folio: its 16 PTEs are writable, so
/// stores to any of them are hits.
#[test]
fn a_large_folio_read_back_whole_by_a_read_fault_is_mapped_writable() {
    let mut s = thp_64k(ThpKernel::V6_12, DeviceKind::Zram);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    access(&mut s, vma, 0, true);
    let f = folio_at(&s, vma, 0);
    assert_eq!(super::filefolio::reclaim_one(&mut s, f).0, 16);
    let faults = s.vm.pgfault;
    access(&mut s, vma, 5, false);
    let g = folio_at(&s, vma, 5);
    assert_eq!((s.folios[g].order(), s.vm.pgfault - faults), (4, 1));
    for i in 0..16 {
        assert_eq!(folio_at(&s, vma, i), g);
        assert_eq!(bits(&s, vma, i), (true, false), "page {i}");
    }
    for i in 0..16 {
        access(&mut s, vma, i, true);
        assert_eq!(bits(&s, vma, i), (true, true), "page {i}");
    }
    assert_eq!(s.vm.pgfault - faults, 1);
    s.check_invariants().unwrap();
}

/// A PMD-size folio found in the swap cache and mapped whole by a read
/// fault (v6.11+): exclusive entries, so writable; under 6.8 each page is
/// its own fault and each store to a read-faulted page a write-protect fault.
#[test]
fn a_large_swap_cache_folio_mapped_by_a_read_fault_is_writable_from_v6_11() {
    for kernel in [ThpKernel::V6_12, ThpKernel::V6_8] {
        let (mut s, vma, _, _) = super::swapcache::cached_folio(kernel, 9);
        let faults = s.vm.pgfault;
        access(&mut s, vma, 2, false);
        access(&mut s, vma, 2, true);
        access(&mut s, vma, 7, true);
        // 6.12: one read fault mapped all 512, the stores are hits; 6.8:
        // page 2's read fault and store fault, page 7's write fault.
        let expect = if kernel == ThpKernel::V6_8 { 3 } else { 1 };
        assert_eq!(s.vm.pgfault - faults, expect, "{kernel:?}");
        assert_eq!(bits(&s, vma, 2), (true, true));
        assert_eq!(bits(&s, vma, 7), (true, true));
        s.check_invariants().unwrap();
    }
}

/// v6.12 `do_anonymous_page` with a 64K folio: one `mk_pte(page,
/// vm_page_prot)` `set_ptes` over 16 PTEs, all young (x86's
/// `vm_page_prot` has `_PAGE_ACCESSED`), not only the faulting one. (Dirty
/// only where the store was: the 6.12 content bits, `crate::split_zeropage`.)
#[test]
fn a_large_anonymous_fault_maps_every_pte_young() {
    let mut s = thp_64k(ThpKernel::V6_12, DeviceKind::Zram);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    access(&mut s, vma, 37, true);
    let f = folio_at(&s, vma, 37);
    assert_eq!(s.folios[f].order(), 4);
    for i in 32..48 {
        assert_eq!(folio_at(&s, vma, i), f);
        assert_eq!(bits(&s, vma, i), (true, i == 37), "page {i}");
    }
}

/// The huge zero PMD of a read fault (`set_huge_zero_folio`: `vm_page_prot`,
/// young) is young over all 512 pages, and the zero-page PTE
/// `try_to_map_unused_to_zeropage` writes (`pte_mkspecial(pfn_pte(my_zero_pfn,
/// vm_page_prot))`) is young whatever the PTE it replaces was.
#[test]
fn zero_page_ptes_are_made_young() {
    let thp = ThpConfig {
        hugepages_2048kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    };
    let mut s = super::thp::thp_machine_with(8192, None, thp, |c| c.zero_page = true);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    access(&mut s, vma, 100, false);
    for i in 0..512 {
        assert_eq!(folio_at(&s, vma, i), s.zero_folio, "page {i}");
        assert_eq!(bits(&s, vma, i), (true, false), "page {i}");
    }
    // A PMD THP with three pages stored to, its young bits cleared by the
    // rmap walk, split by the underused shrinker: 509 zero-page PTEs, young.
    let (mut s, vma, f) =
        super::split_zeropage::thp_written(ThpKernel::V6_12, 409, None, &[0, 1, 2]);
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    s.folio_referenced(f, &mut sc);
    assert!((0..512).all(|i| !bits(&s, vma, i).0));
    assert_eq!(s.deferred_split_scan(0, 1), (1, false));
    for i in 3..512 {
        assert_eq!(folio_at(&s, vma, i), s.zero_folio, "page {i}");
        assert_eq!(bits(&s, vma, i), (true, false), "page {i}");
    }
}
