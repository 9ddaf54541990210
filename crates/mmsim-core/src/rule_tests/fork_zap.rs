//! Rule tests of partial zaps of a PMD-mapped THP shared by fork
//! (`crate::madvise`, `crate::tlb`, v6.12): whether a zap splits a PMD is
//! decided by the zapping VMA's own mapping, not by what another task of
//! the fork family did to the folio.

use super::thp::thp_machine;
use super::*;
use crate::huge_memory::{ThpConfig, ThpEnabled};
use crate::mem::pagetable::{PTE_FOLIO_MASK, PTE_PRESENT};

fn discard(s: &mut Sim, vma: u32, index: u32, pages: u32) {
    s.step(&Event::Discard { vma, index, pages });
}

fn counts(s: &Sim) -> (u64, u64) {
    (s.vm.thp_split_pmd, s.vm.thp_deferred_split_page)
}

/// A parent with one PMD-mapped order-9 folio in a 512-page VMA, forked:
/// (sim, parent's VMA, child's VMA, folio).
fn forked_pmd() -> (Sim, u32, u32, FolioId) {
    let thp = ThpConfig {
        enabled: ThpEnabled::Always,
        ..Default::default()
    };
    let mut s = thp_machine(8192, None, thp);
    let p = s.add_task("parent");
    let a = s.mmap_anon(p, 512).unwrap();
    s.step(&Event::Access {
        vma: a,
        index: 0,
        write: true,
    });
    let f = s.vmas[a as usize].pte(0) & PTE_FOLIO_MASK;
    assert_eq!(s.folios[f].order(), 9);
    let c = s.fork_task(p).unwrap();
    let ca = s.tasks[c as usize].vmas[0];
    assert!((0..512).all(|i| s.vmas[ca as usize].pte(i) & PTE_FOLIO_MASK == f));
    (s, a, ca, f)
}

/// v6.12: the parent's first partial zap splits its PMD
/// (`__split_huge_pmd`, `thp_split_pmd`) but queues nothing (the child maps
/// every page: no mapcount falls to -1, `__folio_remove_rmap`); its second
/// partial zap meets PTEs, no PMD: no split. The child's PMD is still
/// intact, so its own partial zap splits it (a second `thp_split_pmd`), and
/// queues nothing either (the parent maps pages 100..104). Before the
/// split was decided from the VMA's own PTEs, the parent's second zap
/// counted a split too (the folio's PARTIALLY_MAPPED flag stays clear).
#[test]
fn each_vma_of_a_fork_family_splits_its_own_pmd_once() {
    let (mut s, a, ca, f) = forked_pmd();
    assert_eq!(counts(&s), (0, 0));
    discard(&mut s, a, 0, 4);
    assert_eq!(counts(&s), (1, 0));
    discard(&mut s, a, 10, 4);
    assert_eq!(counts(&s), (1, 0));
    discard(&mut s, ca, 100, 4);
    assert_eq!(counts(&s), (2, 0));
    assert_eq!(s.thp.stats[9].split_deferred, 0);
    assert!(!s.folios[f].test(flags::PARTIALLY_MAPPED));
    // The parent's zapped pages are still the child's, and back.
    assert_eq!(s.vmas[ca as usize].pte(0) & PTE_FOLIO_MASK, f);
    assert_eq!(s.vmas[a as usize].pte(100) & PTE_FOLIO_MASK, f);
    assert_eq!(s.vmas[a as usize].pte(10) & PTE_PRESENT, 0);
    s.check_invariants().unwrap();
}

/// A partial zap over pages already zapped in this VMA splits nothing:
/// its PMD went at the first zap (the zap clears fewer PTEs than its
/// range covers).
#[test]
fn a_zap_over_an_older_hole_splits_no_pmd() {
    let (mut s, a, _, _) = forked_pmd();
    discard(&mut s, a, 0, 4);
    discard(&mut s, a, 0, 8);
    assert_eq!(counts(&s), (1, 0));
    s.check_invariants().unwrap();
}
