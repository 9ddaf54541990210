//! Rule tests of the reverse map (mm/rmap.c, v6.12) and the idle-page bits
//! (mm/page_idle.c): PG_young keeps an access the idle tracker consumed
//! visible to reclaim once, VM_LOCKED stops the walk, and the walk ends
//! once `folio_mapcount()` PTEs were found.

use super::*;
use crate::mem::pagetable::{PTE_PRESENT, PTE_YOUNG};

/// A cost-policy machine with swap and one task, and the anonymous folio
/// of page 0 of a fresh 4-page VMA, on the inactive anon list.
fn one_inactive_anon_folio() -> (Sim, u32, FolioId) {
    let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 10));
    let task = s.add_task("t");
    let vma = s.mmap_anon(task, 4).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(list_of(&s, f), LruList::InactiveAnon);
    (s, vma, f)
}

fn current_rules(s: &Sim) -> ClassicRules {
    let crate::sim::Policy::Classic(rules) = s.policy else {
        unreachable!()
    };
    rules
}

#[test]
fn an_access_the_idle_tracker_cleared_still_counts_once_for_reclaim() {
    let (mut s, vma, f) = one_inactive_anon_folio();
    assert!(s.vmas[vma as usize].pte(0) & PTE_YOUNG != 0);
    // page_idle_bitmap_write(): the young PTE is cleared, the access moves
    // to PG_young; then the folio is marked idle.
    s.folio_mkold_for_idle(f);
    assert_eq!(s.vmas[vma as usize].pte(0) & PTE_YOUNG, 0);
    assert!(s.folios[f].test(flags::YOUNG));
    assert!(s.folios[f].test(flags::IDLE));
    // Reclaim's folio_referenced() still sees the access, once: PG_young is
    // consumed. It was no new access, so PG_idle stays.
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    let first = s.folio_referenced(f, &mut sc);
    assert_eq!((first.vmas, first.exec, first.locked), (1, false, false));
    assert!(!s.folios[f].test(flags::YOUNG));
    assert!(s.folios[f].test(flags::IDLE));
    let second = s.folio_referenced(f, &mut sc);
    assert_eq!(second.vmas, 0);
    assert_eq!(sc.prof.rmap_walks, 2);
    // A new access: the young PTE clears PG_idle when reclaim finds it.
    s.step(&Event::Access {
        vma,
        index: 0,
        write: false,
    });
    assert!(
        s.folios[f].test(flags::IDLE),
        "the hardware sets only the PTE bit"
    );
    assert_eq!(s.folio_referenced(f, &mut sc).vmas, 1);
    assert!(!s.folios[f].test(flags::IDLE));
}

#[test]
fn pg_young_protects_the_folio_from_one_inactive_scan() {
    // Without PG_young an unreferenced anon folio goes at the first scan;
    // with it, folio_check_references() keeps it (PG_referenced), and the
    // next scan, finding neither, reclaims it.
    let (mut s, _vma, f) = one_inactive_anon_folio();
    let rules = current_rules(&s);
    s.folio_mkold_for_idle(f);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    s.shrink_inactive_list(1, false, &mut sc, rules);
    assert_eq!(s.vm.pgsteal_kswapd, 0);
    assert_eq!(list_of(&s, f), LruList::InactiveAnon);
    assert!(s.folios[f].test(flags::REFERENCED));
    s.shrink_inactive_list(1, false, &mut sc, rules);
    assert_eq!(s.vm.pgsteal_kswapd, 1);
}

#[test]
fn idle_tracking_reads_a_folio_as_idle_until_it_is_accessed() {
    let (mut s, vma, f) = one_inactive_anon_folio();
    s.folio_mkold_for_idle(f);
    assert!(s.folio_test_idle(f));
    s.step(&Event::Access {
        vma,
        index: 0,
        write: false,
    });
    // page_idle_bitmap_read() clears the young PTE first: no longer idle,
    // and the access waits in PG_young for reclaim.
    assert!(!s.folio_test_idle(f));
    assert_eq!(s.vmas[vma as usize].pte(0) & PTE_YOUNG, 0);
    assert!(s.folios[f].test(flags::YOUNG));
}

#[test]
fn a_vm_locked_vma_stops_the_walk_and_keeps_the_folio() {
    let (mut s, vma, f) = one_inactive_anon_folio();
    let rules = current_rules(&s);
    s.vmas[vma as usize].locked = true;
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    let found = s.folio_referenced(f, &mut sc);
    assert!(found.locked);
    assert_eq!(found.vmas, 0, "not counted as a reference");
    assert!(
        s.vmas[vma as usize].pte(0) & PTE_YOUNG != 0,
        "young bit left"
    );
    // folio_check_references() activates it (the kernel mlocks it).
    s.shrink_inactive_list(1, false, &mut sc, rules);
    assert_eq!(s.vm.pgsteal_kswapd, 0);
    assert_eq!(list_of(&s, f), LruList::ActiveAnon);
    // try_to_unmap() stops at the VMA too: the PTE stays.
    assert!(!s.try_to_unmap(f, &mut sc));
    assert!(s.vmas[vma as usize].pte(0) & PTE_PRESENT != 0);
    assert_eq!(s.folios[f].mapcount, 1);
}

#[test]
fn the_walk_ends_once_mapcount_ptes_were_found() {
    // Two VMAs cover page 0 of the file; only the first maps it. The walk
    // stops after the first (pra->mapcount, rwc.done = folio_not_mapped).
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let task = s.add_task("t");
    let file = s.add_file("f", 8).unwrap();
    let first = s.mmap_file(task, file, 0, 8, false).unwrap();
    let _second = s.mmap_file(task, file, 0, 8, false).unwrap();
    s.step(&Event::Access {
        vma: first,
        index: 0,
        write: true,
    });
    let f = file_folio(&s, file, 0);
    assert_eq!(s.folios[f].mapcount, 1);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    assert_eq!(s.folio_referenced(f, &mut sc).vmas, 1);
    assert_eq!(sc.prof.rmap_walks, 1);
    assert!(s.try_to_unmap(f, &mut sc));
    assert_eq!(sc.prof.rmap_walks, 2);
    assert_eq!(s.vmas[first as usize].pte(0), 0);
    assert_eq!(s.folios[f].mapcount, 0);
    assert!(
        s.folios[f].test(flags::DIRTY),
        "dirty PTE dirties the folio"
    );
    // Unmapped: no walk at all.
    assert_eq!(s.folio_referenced(f, &mut sc).vmas, 0);
    assert_eq!(sc.prof.rmap_walks, 2);
}

/// Page 0 of a file (an order-0 folio) mapped by 300 VMAs, the last
/// VM_LOCKED: the folio's count saturated at 255. `try_to_unmap` clears
/// the 299 PTEs before the locked VMA stops it; the count is then counted
/// again from the page tables: 1, the locked VMA's. Before, the 299
/// cleared PTEs were taken off the saturated 255: 0 while still mapped
/// (the next reclaim would take it for unmapped and free it mapped).
#[test]
fn a_walk_stopped_by_vm_locked_counts_a_saturated_count_again() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let task = s.add_task("t");
    let file = s.add_file("f", 8).unwrap();
    let vmas: Vec<u32> = (0..300)
        .map(|_| s.mmap_file(task, file, 0, 8, false).unwrap())
        .collect();
    for &vma in &vmas {
        s.step(&Event::Access {
            vma,
            index: 0,
            write: false,
        });
    }
    let f = file_folio(&s, file, 0);
    assert_eq!(s.folios[f].mapcount, 255);
    let last = *vmas.last().unwrap();
    s.vmas[last as usize].locked = true;
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    assert!(!s.try_to_unmap(f, &mut sc));
    assert_eq!(sc.prof.rmap_walks, 300);
    for &vma in &vmas[..299] {
        assert_eq!(s.vmas[vma as usize].pte(0), 0);
    }
    assert!(s.vmas[last as usize].pte(0) & PTE_PRESENT != 0);
    assert_eq!(s.folios[f].mapcount, 1);
    s.check_invariants().unwrap();
}
