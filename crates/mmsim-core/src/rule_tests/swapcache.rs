//! Rule tests of `do_swap_page` on a large folio found in the swap cache
//! without fork (`crate::fault_swapcache`): one fault maps the whole folio
//! under 6.12 (v6.11+), one page per fault under 6.8; a fault whose
//! neighbour PTEs are not all the folio's entries maps its own page; the
//! slots go per `should_try_to_free_swap` and `folio_swapped`.

use super::thp::thp_machine_with;
use super::*;
use crate::huge_memory::{ThpConfig, ThpKernel, ThpSizeConfig, ThpSizeEnabled};
use crate::mem::pagetable::{PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG};

/// Faults a folio of `order` at page 0 of `vma`, takes it off its list,
/// adds it to the swap cache and unmaps it as `shrink_folio_list` does
/// (`add_to_swap` → `try_to_unmap`), then puts it back at the head of its
/// list: its PTEs hold swap entries and the folio waits in the swap cache.
pub(super) fn swap_out_keeping_cache(s: &mut Sim, vma: u32, order: u8) -> FolioId {
    let f = fault_anon(s, vma, 0);
    assert_eq!(s.folios[f].order(), order);
    unmap_into_swap_cache(s, f);
    f
}

/// Large folio `f`, on its LRU list, added to the swap cache whole and
/// unmapped (`try_to_unmap`), then put back at the head of its list.
pub(super) fn unmap_into_swap_cache(s: &mut Sim, f: FolioId) {
    let lru = LruList::from_index(s.folios.lru(f));
    s.memcgs[0].lruvec.lists[lru as usize].unlink(&mut s.folios, f);
    let mut tails = Vec::new();
    assert!(s.add_to_swap_large(f, &mut tails));
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    assert!(s.try_to_unmap(f, &mut sc));
    s.memcgs[0].lruvec.lists[lru as usize].push_head(&mut s.folios, f, lru as u8);
}

/// A folio of `order` (4: 64K, 9: 2M) faulted at page 0 of a 1024-page VMA
/// on a 8192-page machine with a 2048-slot SSD swap under `kernel`, then
/// added to the swap cache and unmapped as `shrink_folio_list` does
/// (`add_to_swap` → `try_to_unmap`), and put back on its list: every PTE
/// holds its page's swap entry and the folio waits in the swap cache.
/// Returns the sim, the VMA, the folio and its first slot.
pub(super) fn cached_folio(kernel: ThpKernel, order: u8) -> (Sim, u32, FolioId, u32) {
    let mut thp = ThpConfig {
        kernel,
        ..Default::default()
    };
    let always = ThpSizeConfig {
        enabled: ThpSizeEnabled::Always,
    };
    match order {
        4 => thp.hugepages_64kb = always,
        9 => thp.hugepages_2048kb = always,
        _ => unreachable!(),
    }
    let mut s = thp_machine_with(8192, Some(2048), thp, |c| {
        c.swap.device = DeviceKind::Ssd;
    });
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1024).unwrap();
    let f = swap_out_keeping_cache(&mut s, vma, order);
    let first = s.folios[f].swap - 1;
    for i in 0..1u32 << order {
        assert_eq!(s.vmas[vma as usize].pte(i), first + i + 1, "pte {i}");
    }
    assert_eq!(s.folios[f].mapcount, 0);
    (s, vma, f, first)
}

fn access(s: &mut Sim, vma: u32, index: u32, write: bool) {
    s.step(&Event::Access { vma, index, write });
}

/// Whether PTE `i` of `vma` maps folio `f`.
fn maps(s: &Sim, vma: u32, i: u32, f: FolioId) -> bool {
    let pte = s.vmas[vma as usize].pte(i);
    pte & PTE_PRESENT != 0 && pte & PTE_FOLIO_MASK == f
}

#[test]
fn v6_12_maps_a_cached_64k_folio_whole_with_one_read_fault() {
    let (mut s, vma, f, _) = cached_folio(ThpKernel::V6_12, 4);
    let (faults, majors) = (s.vm.pgfault, s.vm.pgmajfault);
    access(&mut s, vma, 9, false);
    assert_eq!((s.vm.pgfault - faults, s.vm.pgmajfault - majors), (1, 0));
    for i in 0..16 {
        let pte = s.vmas[vma as usize].pte(i);
        assert!(maps(&s, vma, i, f), "pte {i}");
        // set_ptes() of one young PTE; a read maps it clean.
        assert_eq!(
            (pte & PTE_YOUNG != 0, pte & PTE_DIRTY),
            (true, 0),
            "pte {i}"
        );
    }
    assert_eq!(s.vmas[vma as usize].pte(16), 0);
    assert_eq!(s.folios[f].mapcount, 16);
    // A read on an SSD with swap far from full keeps the slots.
    assert!(s.folios[f].test(flags::SWAPCACHE));
    assert_eq!(s.swap.as_ref().unwrap().used, 16);
    assert_eq!((s.vm.pswpin, s.thp.stats[4].swpin), (0, 0));
    // The other 15 pages are mapped: touching them faults no more.
    for i in 0..16 {
        access(&mut s, vma, i, false);
    }
    assert_eq!(s.vm.pgfault - faults, 1);
    s.check_invariants().unwrap();
}

#[test]
fn v6_12_a_write_fault_maps_the_exclusive_folio_dirty_and_frees_its_slots() {
    let (mut s, vma, f, _) = cached_folio(ThpKernel::V6_12, 4);
    let faults = s.vm.pgfault;
    access(&mut s, vma, 3, true);
    assert_eq!(s.vm.pgfault - faults, 1);
    for i in 0..16 {
        assert!(maps(&s, vma, i, f), "pte {i}");
        assert_ne!(s.vmas[vma as usize].pte(i) & PTE_DIRTY, 0, "pte {i}");
    }
    // folio_ref_count == 1 + nr: the slots go, the folio is dirty again.
    assert!(!s.folios[f].test(flags::SWAPCACHE));
    assert!(s.folios[f].test(flags::DIRTY));
    assert_eq!(s.swap.as_ref().unwrap().used, 0);
    // Stores to the other pages need no write-protect fault.
    for i in 0..16 {
        access(&mut s, vma, i, true);
    }
    assert_eq!(s.vm.pgfault - faults, 1);
    s.check_invariants().unwrap();
}

#[test]
fn v6_8_maps_one_page_of_a_cached_pmd_folio_per_fault() {
    let (mut s, vma, f, first) = cached_folio(ThpKernel::V6_8, 9);
    let faults = s.vm.pgfault;
    access(&mut s, vma, 9, false);
    assert_eq!((s.vm.pgfault - faults, s.vm.pgmajfault), (1, 0));
    assert!(maps(&s, vma, 9, f));
    assert_eq!(s.vmas[vma as usize].pte(8), first + 8 + 1);
    assert_eq!(s.vmas[vma as usize].pte(10), first + 10 + 1);
    assert_eq!(s.folios[f].mapcount, 1);
    // A store maps its page dirty (the entry is exclusive) but keeps the
    // slots: `folio_ref_count == 2` never holds for a large folio in the
    // swap cache before v6.11.
    access(&mut s, vma, 10, true);
    assert_eq!(s.vm.pgfault - faults, 2);
    assert_ne!(s.vmas[vma as usize].pte(10) & PTE_DIRTY, 0);
    assert!(s.folios[f].test(flags::SWAPCACHE));
    assert_eq!(s.swap.as_ref().unwrap().used, 512);
    for i in 0..512 {
        access(&mut s, vma, i, false);
    }
    // One fault per page: 512 in all.
    assert_eq!(s.vm.pgfault - faults, 512);
    assert!((0..512).all(|i| maps(&s, vma, i, f)));
    assert_eq!(s.swap.as_ref().unwrap().used, 512);
    s.check_invariants().unwrap();
}

#[test]
fn v6_12_maps_the_same_pmd_folio_with_one_fault() {
    let (mut s, vma, f, _) = cached_folio(ThpKernel::V6_12, 9);
    let faults = s.vm.pgfault;
    for i in 0..512 {
        access(&mut s, vma, i, false);
    }
    assert_eq!(s.vm.pgfault - faults, 1);
    assert!((0..512).all(|i| maps(&s, vma, i, f)));
    s.check_invariants().unwrap();
}

/// 6.12, the 64K folio cached; page 0's swap PTE zapped by MADV_DONTNEED.
fn cached_64k_page_0_zapped() -> (Sim, u32, FolioId, u32) {
    let (mut s, vma, f, first) = cached_folio(ThpKernel::V6_12, 4);
    s.step(&Event::Discard {
        vma,
        index: 0,
        pages: 1,
    });
    // Slots 1..16 are still referenced: the folio stays in the swap cache
    // with all 16 slots (`swap_is_has_cache` fails).
    assert_eq!(s.vmas[vma as usize].pte(0), 0);
    assert!(s.folios[f].test(flags::SWAPCACHE));
    assert_eq!(s.swap.as_ref().unwrap().used, 16);
    (s, vma, f, first)
}

#[test]
fn v6_12_a_fault_beside_a_zapped_entry_maps_its_own_page_only() {
    let (mut s, vma, f, first) = cached_64k_page_0_zapped();
    let faults = s.vm.pgfault;
    access(&mut s, vma, 5, false);
    assert_eq!((s.vm.pgfault - faults, s.vm.pgmajfault), (1, 0));
    assert!(maps(&s, vma, 5, f));
    assert_eq!(s.vmas[vma as usize].pte(4), first + 4 + 1);
    assert_eq!(s.vmas[vma as usize].pte(6), first + 6 + 1);
    assert_eq!(s.folios[f].mapcount, 1);
    // A store to page 6: the first mapped page's reference makes the
    // count 2 + nr, so the slots stay (and `folio_swapped` would keep them).
    access(&mut s, vma, 6, true);
    assert_eq!(s.vm.pgfault - faults, 2);
    assert!(maps(&s, vma, 6, f));
    assert_ne!(s.vmas[vma as usize].pte(6) & PTE_DIRTY, 0);
    assert_eq!(s.vmas[vma as usize].pte(7), first + 7 + 1);
    assert!(s.folios[f].test(flags::SWAPCACHE));
    assert_eq!(s.swap.as_ref().unwrap().used, 16);
    s.check_invariants().unwrap();
}

#[test]
fn a_first_store_beside_a_zapped_entry_keeps_the_slots_other_ptes_hold() {
    // The only reference (count 1 + nr) but `folio_swapped`: 14 swap PTEs
    // still hold slots, so `folio_free_swap` fails.
    let (mut s, vma, f, _) = cached_64k_page_0_zapped();
    access(&mut s, vma, 5, true);
    assert!(maps(&s, vma, 5, f));
    assert!(s.folios[f].test(flags::SWAPCACHE));
    assert_eq!(s.swap.as_ref().unwrap().used, 16);
    s.check_invariants().unwrap();
}

#[test]
fn reclaim_of_a_partly_zapped_cached_folio_frees_the_zapped_slot_only() {
    let (mut s, vma, f, first) = cached_64k_page_0_zapped();
    access(&mut s, vma, 5, false);
    // Written already: reclaim unmaps page 5 and frees the folio at once.
    s.folios[f].clear(flags::DIRTY);
    let (reclaimed, _) = super::filefolio::reclaim_one(&mut s, f);
    assert_eq!(reclaimed, 16);
    // put_swap_folio(): slot 0 had only the cache's reference and goes;
    // slots 1..16 keep their PTEs' references (a shadow each).
    let swap = s.swap.as_ref().unwrap();
    assert_eq!(swap.used, 15);
    for i in 1..16 {
        assert_eq!(s.vmas[vma as usize].pte(i), first + i + 1, "pte {i}");
        assert!(swap.slots[(first + i) as usize] & crate::mem::filemap::SLOT_FOLIO == 0);
    }
    s.check_invariants().unwrap();
}

#[test]
fn v6_8_zapping_the_only_mapped_page_keeps_the_cached_folio_for_its_swap_ptes() {
    let (mut s, vma, f, first) = cached_folio(ThpKernel::V6_8, 9);
    access(&mut s, vma, 9, false);
    s.step(&Event::Discard {
        vma,
        index: 9,
        pages: 1,
    });
    // No page mapped, but 511 swap PTEs hold its slots: not freed.
    assert_eq!(s.folios[f].mapcount, 0);
    assert!(s.folios[f].test(flags::SWAPCACHE));
    assert_eq!(s.vmas[vma as usize].pte(10), first + 10 + 1);
    assert_eq!(s.swap.as_ref().unwrap().used, 512);
    // Page 10 is still found in the swap cache: a minor fault.
    access(&mut s, vma, 10, false);
    assert_eq!(s.vm.pgmajfault, 0);
    assert!(maps(&s, vma, 10, f));
    s.check_invariants().unwrap();
}

#[test]
fn the_slot_check_catches_a_swap_cache_slot_its_folio_no_longer_holds() {
    // The invariant the orphan marks used to back: a swap-cache folio that
    // lost its SWAPCACHE state (or its slot range) without put_swap_folio /
    // folio_free_swap leaves slots that name it, charged and leaked.
    let (mut s, _, f, first) = cached_folio(ThpKernel::V6_12, 4);
    s.check_swap_slots_held().unwrap();
    s.folios[f].swap += 1;
    let err = s.check_swap_slots_held().unwrap_err();
    assert!(
        err.contains(&format!("swap slot {first} names folio {f}")),
        "{err}"
    );
    s.folios[f].swap -= 1;
    s.folios[f].flags &= !flags::SWAPCACHE;
    assert!(s.check_swap_slots_held().is_err());
}
