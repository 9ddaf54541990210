//! Rule tests of the TLB flushes and page-table state around page-cache
//! PMD mappings (`crate::filemap_pmd`, `crate::tlb`): a zap's flush
//! (v6.12 mm/mmu_gather.c `tlb_flush_mmu` → arch/x86/mm/tlb.c
//! `flush_tlb_mm_range`, at the stride `tlb_get_unmap_shift` gives: page
//! stride once any PTE was cleared, PMD stride if only whole PMDs were;
//! more than `tlb_single_page_flush_ceiling` (33) entries is a full
//! flush), and the PMD bits after `munmap`+`mmap` (`Event::Remap`) and
//! exit.

use super::*;
use crate::huge_memory::VmaThpAdvice;
use crate::mem::pagetable::PTE_PRESENT;

/// A large-folio machine with PMD mappings and the TLB on, a task, and an
/// uncached file of `pages` pages mapped shared whole with MADV_HUGEPAGE:
/// (sim, task, file, vma).
fn mapped(pages: u32) -> (Sim, u32, u32, u32) {
    let mut cfg = super::filefolio::lf_config(1 << 16);
    cfg.fs.pmd_mappings = true;
    cfg.tlb = crate::tlb::TlbConfig {
        enabled: true,
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("t");
    let file = s.add_file("f", pages.into()).unwrap();
    let vma = s.mmap_file(t, file, 0, pages.into(), false).unwrap();
    s.madvise_file_hugepage(vma, VmaThpAdvice::Hugepage)
        .unwrap();
    (s, t, file, vma)
}

fn access(s: &mut Sim, vma: u32, index: u32) {
    s.step(&Event::Access {
        vma,
        index,
        write: false,
    });
}

fn present(s: &Sim, vma: u32) -> usize {
    let v = &s.vmas[vma as usize];
    (0..v.len).filter(|&i| v.pte(i) & PTE_PRESENT != 0).count()
}

fn pmds(s: &Sim, vma: u32) -> usize {
    let v = &s.vmas[vma as usize];
    (0..v.len / 512).filter(|&p| v.file_pmd(p)).count()
}

/// (local full flushes, local one-entry flushes).
fn flushes(s: &Sim) -> (u64, u64) {
    let r = s.tlb.as_ref().expect("TLB on").stats;
    (r.nr_tlb_local_flush_all, r.nr_tlb_local_flush_one)
}

/// `n` PMDs of the VMA read in turn, each mapped by a PMD.
fn read_pmds(s: &mut Sim, vma: u32, n: u32) {
    for p in 0..n {
        access(s, vma, p * 512 + 5);
    }
    assert_eq!(pmds(s, vma), n as usize);
    assert_eq!(present(s, vma), n as usize * 512);
}

/// `n` whole PMDs zapped by one MADV_DONTNEED: the flush at PMD stride
/// is `n` entries: 33 one-entry flushes at the ceiling, a full flush above
/// it.
fn zap_whole_pmds(n: u32) -> (u64, u64) {
    let (mut s, _, _, vma) = mapped(n * 512 + 1024);
    read_pmds(&mut s, vma, n);
    let before = flushes(&s);
    s.step(&Event::Discard {
        vma,
        index: 0,
        pages: n * 512,
    });
    assert_eq!((present(&s, vma), pmds(&s, vma)), (0, 0));
    assert_eq!(s.vm.thp_split_pmd, 0);
    s.check_invariants().unwrap();
    let after = flushes(&s);
    (after.0 - before.0, after.1 - before.1)
}

#[test]
fn a_zap_of_33_whole_pmds_flushes_33_entries_and_of_34_all() {
    assert_eq!(zap_whole_pmds(33), (0, 33));
    assert_eq!(zap_whole_pmds(34), (1, 0));
}

/// A zap of a whole PMD and of a PTE together: a file of 528 pages, its
/// first 512 in a PMD-size folio mapped by a PMD, page 515 past it (a
/// smaller folio: the file ends there) mapped by a PTE. Any PTE cleared
/// makes the stride a page (`tlb_get_unmap_shift`), so the flush covers
/// pages 0..516 at page stride, over the ceiling: one full flush (not one
/// PMD entry and one page).
#[test]
fn a_zap_of_a_whole_pmd_and_ptes_flushes_at_page_stride() {
    let (mut s, _, _, vma) = mapped(528);
    read_pmds(&mut s, vma, 1);
    access(&mut s, vma, 515);
    assert_eq!((pmds(&s, vma), present(&s, vma)), (1, 513));
    let before = flushes(&s);
    s.step(&Event::Discard {
        vma,
        index: 0,
        pages: 528,
    });
    assert_eq!((present(&s, vma), pmds(&s, vma)), (0, 0));
    assert_eq!(s.vm.thp_split_pmd, 0);
    let after = flushes(&s);
    assert_eq!((after.0 - before.0, after.1 - before.1), (1, 0));
    s.check_invariants().unwrap();
}

/// The same PMD and PTE zapped apart: one PMD entry, then one page (each
/// a `nr_tlb_local_flush_one`, under the ceiling).
#[test]
fn the_pmd_and_the_pte_zapped_apart_flush_one_entry_each() {
    let (mut s, _, _, vma) = mapped(528);
    read_pmds(&mut s, vma, 1);
    access(&mut s, vma, 515);
    let before = flushes(&s);
    s.step(&Event::Discard {
        vma,
        index: 0,
        pages: 512,
    });
    let mid = flushes(&s);
    assert_eq!((mid.0 - before.0, mid.1 - before.1), (0, 1));
    s.step(&Event::Discard {
        vma,
        index: 512,
        pages: 16,
    });
    let after = flushes(&s);
    assert_eq!((after.0 - mid.0, after.1 - mid.1), (0, 1));
    assert_eq!(present(&s, vma), 0);
    s.check_invariants().unwrap();
}

/// `Event::Remap` (munmap + mmap of the VMA) zaps the PMD whole and the new
/// VMA has no PMD bits: the next read maps the folio by a PMD again.
#[test]
fn a_remap_clears_the_pmds_and_the_next_read_maps_one_again() {
    let (mut s, _, file, vma) = mapped(2048);
    read_pmds(&mut s, vma, 1);
    let f = file_folio(&s, file, 0);
    s.step(&Event::Remap { vma });
    assert!(s.vmas[vma as usize].file_pmds.is_empty());
    assert_eq!((present(&s, vma), s.folios[f].mapcount), (0, 0));
    assert_eq!((s.vm.thp_split_pmd, s.vm.thp_file_mapped), (0, 1));
    s.check_invariants().unwrap();
    access(&mut s, vma, 5);
    assert_eq!((pmds(&s, vma), present(&s, vma)), (1, 512));
    assert_eq!(s.vm.thp_file_mapped, 2);
    s.check_invariants().unwrap();
}

/// Exit zaps the task's PMDs whole and drops the PMD bits with its page
/// tables; the folio stays cached, unmapped.
#[test]
fn exit_clears_the_pmds() {
    let (mut s, t, file, vma) = mapped(2048);
    read_pmds(&mut s, vma, 1);
    let f = file_folio(&s, file, 0);
    s.exit_task(t).unwrap();
    assert!(s.vmas[vma as usize].file_pmds.is_empty());
    assert_eq!(s.folios[f].mapcount, 0);
    assert_eq!(file_folio(&s, file, 0), f);
    assert_eq!(s.vm.thp_split_pmd, 0);
    s.check_invariants().unwrap();
}
