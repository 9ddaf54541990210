//! Rule tests of what becomes of a PMD mapping of a page-cache folio
//! (`crate::filemap_pmd`) when it goes: a zap that covers it whole
//! (v6.12 mm/huge_memory.c `zap_huge_pmd`, its flush at PMD stride,
//! arch/x86/mm/tlb.c `flush_tlb_mm_range`) or in part (`zap_pmd_range` →
//! `__split_huge_pmd`), a store through it in a private mapping
//! (mm/memory.c `wp_huge_pmd` → split, then `do_cow_fault`), reclaim's
//! unmap (`try_to_unmap` with `TTU_SPLIT_HUGE_PMD`), and the folio's count
//! when other VMAs map it by PTEs. The TLB model is on, so flushes count.

use super::filefolio::{lf_config, reclaim_one};
use super::*;
use crate::huge_memory::VmaThpAdvice;
use crate::mem::pagetable::{PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT};
use crate::tlb::TlbConfig;

/// A large-folio machine with PMD mappings and the TLB on, a task, and an
/// uncached file of 2048 pages: (sim, task, file).
fn machine() -> (Sim, u32, u32) {
    let mut cfg = lf_config(1 << 16);
    cfg.fs.pmd_mappings = true;
    cfg.tlb = TlbConfig {
        enabled: true,
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("t");
    let file = s.add_file("f", 2048).unwrap();
    (s, t, file)
}

/// [`machine`] with the file mapped shared whole with MADV_HUGEPAGE and
/// a read of page 5: the read-around brings 0..1024 in two order-9 folios
/// (no reference on them), and the first is mapped by a PMD.
/// Returns (sim, task, file, vma, the PMD-mapped folio).
fn pmd_read(private: bool) -> (Sim, u32, u32, u32, FolioId) {
    let (mut s, t, file) = machine();
    let vma = if private {
        s.mmap_file_private(t, file, 0, 2048).unwrap()
    } else {
        s.mmap_file(t, file, 0, 2048, false).unwrap()
    };
    s.madvise_file_hugepage(vma, VmaThpAdvice::Hugepage)
        .unwrap();
    access(&mut s, vma, 5, false);
    let f = file_folio(&s, file, 0);
    assert_eq!(s.folios[f].order(), 9);
    assert_eq!(present(&s, vma), (0..512).collect::<Vec<_>>());
    assert!(s.vmas[vma as usize].file_pmd(0));
    assert_eq!((s.vm.thp_file_mapped, s.vm.pgfault), (1, 1));
    assert_eq!(s.folios[f].mapcount, 255, "512 PTEs: saturated");
    let fo = &s.folios[f];
    assert!(!fo.test(flags::REFERENCED) && !fo.test(flags::ACTIVE));
    (s, t, file, vma, f)
}

/// [`pmd_read`] (shared) and a second mapping `b` of the whole file with
/// MADV_NOHUGEPAGE, read at page 5: fault-around maps the PMD-mapped
/// folio's pages 0..16 in `b` by PTEs. Returns (sim, `a`: the PMD's VMA,
/// `b`, the folio).
fn pmd_and_ptes() -> (Sim, u32, u32, FolioId) {
    let (mut s, t, file, a, f) = pmd_read(false);
    let b = s.mmap_file(t, file, 0, 2048, false).unwrap();
    s.madvise_file_hugepage(b, VmaThpAdvice::Nohugepage)
        .unwrap();
    access(&mut s, b, 5, false);
    assert_eq!(present(&s, b), (0..16).collect::<Vec<_>>());
    (s, a, b, f)
}

fn access(s: &mut Sim, vma: u32, index: u32, write: bool) {
    s.step(&Event::Access { vma, index, write });
}

fn discard(s: &mut Sim, vma: u32, index: u32, pages: u32) {
    s.step(&Event::Discard { vma, index, pages });
}

fn present(s: &Sim, vma: u32) -> Vec<u32> {
    let v = &s.vmas[vma as usize];
    (0..v.len)
        .filter(|&i| v.pte(i) & PTE_PRESENT != 0)
        .collect()
}

/// Without PMD mappings: an order-9 folio (a 2 MiB write) mapped by all
/// 512 PTEs of VMA `b` (fault-around, 32 faults) and by 16 of VMA `c`, so
/// its count saturated at 255. Returns the machine, the folio, `b`, `c`.
fn saturated_large_folio() -> (Sim, FolioId, u32, u32) {
    let mut s = Sim::new(lf_config(1 << 16)).unwrap();
    let t = s.add_task("t");
    let file = s.add_file("f", 1024).unwrap();
    s.open(file, t).unwrap();
    s.step(&Event::FileWrite {
        file,
        index: 0,
        pages: 512,
    });
    let f = file_folio(&s, file, 0);
    assert_eq!(s.folios[f].order(), 9);
    let b = s.mmap_file(t, file, 0, 1024, false).unwrap();
    let c = s.mmap_file(t, file, 0, 1024, false).unwrap();
    for i in (0..512).step_by(16) {
        access(&mut s, b, i, false);
    }
    access(&mut s, c, 5, false);
    (s, f, b, c)
}

/// (local full flushes, local one-entry flushes).
fn flushes(s: &Sim) -> (u64, u64) {
    let r = s.tlb.as_ref().expect("TLB on").stats;
    (r.nr_tlb_local_flush_all, r.nr_tlb_local_flush_one)
}

/// MADV_DONTNEED of the whole PMD: `zap_huge_pmd` clears one entry — one
/// `folio_remove_rmap_pmd`, one `folio_mark_accessed` for its young bit
/// (v6.16+; PG_referenced set, not activated), and the zap's flush at PMD
/// stride: one entry (`nr_tlb_local_flush_one`). Before, mmsim zapped 512
/// PTEs: 512 `folio_mark_accessed` calls (the second activated the folio,
/// `pgactivate` 512) and a full flush for 512 pages over the ceiling.
#[test]
fn a_zap_of_the_whole_pmd_clears_one_entry_and_flushes_one() {
    let (mut s, t, _, vma, f) = pmd_read(false);
    let before = flushes(&s);
    discard(&mut s, vma, 0, 512);
    assert!(present(&s, vma).is_empty());
    let fo = &s.folios[f];
    assert_eq!(fo.mapcount, 0);
    assert!(fo.test(flags::REFERENCED) && !fo.test(flags::ACTIVE));
    assert_eq!((s.vm.pgactivate, s.vm.thp_split_pmd), (0, 0));
    let after = flushes(&s);
    assert_eq!((after.0 - before.0, after.1 - before.1), (0, 1));
    assert!(!s.vmas[vma as usize].file_pmd(0));
    assert_eq!(s.mm_counters(t).unwrap().file, 0);
    // pmd_none again: the next read maps the folio by a PMD again.
    access(&mut s, vma, 100, false);
    assert_eq!(present(&s, vma).len(), 512);
    assert_eq!(s.vm.thp_file_mapped, 2);
    s.check_invariants().unwrap();
}

/// MADV_DONTNEED of pages 10..20 of the PMD: `zap_pmd_range` splits it
/// (`__split_huge_pmd`, which zaps a file PMD whole: `thp_split_pmd`, one
/// `pmdp_huge_clear_flush`, a full flush on x86, PG_referenced from its
/// young bit), so all 512 pages are unmapped, not only the ten. Before,
/// mmsim cleared the ten PTEs and left 502 mapped, with no split.
#[test]
fn a_zap_of_part_of_the_pmd_splits_it_and_unmaps_all_512() {
    let (mut s, t, _, vma, f) = pmd_read(false);
    let before = flushes(&s);
    discard(&mut s, vma, 10, 10);
    assert!(present(&s, vma).is_empty());
    assert_eq!(s.vm.thp_split_pmd, 1);
    let fo = &s.folios[f];
    assert_eq!(fo.mapcount, 0);
    assert!(fo.test(flags::REFERENCED) && !fo.test(flags::ACTIVE));
    let after = flushes(&s);
    assert_eq!((after.0 - before.0, after.1 - before.1), (1, 0));
    assert_eq!(s.mm_counters(t).unwrap().file, 0);
    s.check_invariants().unwrap();
}

/// The folio PMD-mapped in VMA `a` and mapped by 16 PTEs (fault-around) in
/// a VM_NOHUGEPAGE VMA `b`: zapping `a`'s PMD leaves the count at `b`'s 16
/// (counted again from the page tables; it had saturated at 255), and
/// zapping those takes it to 0. Before, the zap took 512 off the
/// saturated count: 0 while `b` still mapped 16 pages, so reclaim would
/// have taken the folio for unmapped (`try_to_unmap` returns at once).
#[test]
fn the_count_after_a_pmd_zap_is_what_other_vmas_still_map() {
    let (mut s, a, b, f) = pmd_and_ptes();
    assert_eq!(s.folios[f].mapcount, 255);
    discard(&mut s, a, 0, 512);
    assert_eq!(s.folios[f].mapcount, 16);
    discard(&mut s, b, 0, 8);
    assert_eq!(s.folios[f].mapcount, 8);
    discard(&mut s, b, 8, 8);
    assert_eq!(s.folios[f].mapcount, 0);
    s.check_invariants().unwrap();
}

/// A store to page 5 of a private file mapping read-faulted by a PMD:
/// `wp_huge_pmd` splits the PMD (the VMA is not anonymous:
/// `__split_huge_pmd`, `thp_split_pmd`, one full flush), and the fault
/// falls back to the PTE level on a none PMD, `do_cow_fault`: an order-0
/// anonymous copy of page 5 mapped dirty by one PTE, the folio's other 511
/// pages unmapped. One fault. A later read maps by fault-around (16 PTEs;
/// the PMD has a table now). Before, mmsim copied page 5 in place and
/// left the other 511 PTEs mapped, without a split.
#[test]
fn a_store_through_a_private_pmd_splits_it_and_copies_one_page() {
    let (mut s, t, _, vma, f) = pmd_read(true);
    let before = flushes(&s);
    access(&mut s, vma, 5, true);
    assert_eq!((s.vm.thp_split_pmd, s.vm.pgfault), (1, 2));
    assert_eq!(present(&s, vma), vec![5]);
    let pte = s.vmas[vma as usize].pte(5);
    let copy = pte & PTE_FOLIO_MASK;
    assert!(pte & PTE_DIRTY != 0 && copy != f);
    assert!(!s.folios[copy].is_file() && s.folios[copy].order() == 0);
    assert!(!s.vmas[vma as usize].file_pmd(0));
    assert_eq!(s.folios[f].mapcount, 0);
    assert!(
        !s.folios[f].test(flags::DIRTY),
        "the page cache stays clean"
    );
    let c = s.mm_counters(t).unwrap();
    assert_eq!((c.file, c.anon), (0, 1));
    let after = flushes(&s);
    assert_eq!((after.0 - before.0, after.1 - before.1), (1, 0));
    access(&mut s, vma, 100, false);
    let mut want: Vec<u32> = vec![5];
    want.extend(96..112);
    assert_eq!(present(&s, vma), want);
    assert_eq!((s.vm.thp_file_mapped, s.vm.pgfault), (1, 3));
    assert_eq!(s.folios[f].mapcount, 16);
    s.check_invariants().unwrap();
}

/// Reclaim of a PMD-mapped folio: `try_to_unmap` with `TTU_SPLIT_HUGE_PMD`
/// splits the PMD first (`split_huge_pmd_locked` → `__split_huge_pmd_locked`,
/// v6.12: `thp_split_pmd`; for a file VMA the split zaps it, flushing it
/// at once — a full flush on x86 — and carrying its young bit into
/// PG_referenced), and the restarted walk finds no PTE: no batched flush
/// is queued, so the split's is the only one. The folio is reclaimed
/// whole. Before, no split was counted, PG_referenced was not set, and
/// `shrink_folio_list` queued a batched flush of every CPU as well.
#[test]
fn reclaim_splits_the_pmd_it_unmaps() {
    // The unmap alone (the folio stays, unmapped): PG_referenced from the
    // young PMD, no PTE cleared.
    let (mut s, _, _, vma, f) = pmd_read(false);
    let before = flushes(&s);
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, s.clock);
    assert!(s.try_to_unmap(f, &mut sc));
    let fo = &s.folios[f];
    assert!(fo.test(flags::REFERENCED) && !fo.test(flags::ACTIVE));
    assert_eq!(fo.mapcount, 0);
    assert!(!sc.unmapped_ptes);
    assert_eq!(s.vm.thp_split_pmd, 1);
    let after = flushes(&s);
    assert_eq!((after.0 - before.0, after.1 - before.1), (1, 0));
    assert!(present(&s, vma).is_empty());
    s.check_invariants().unwrap();
    // shrink_folio_list: the split's flush only, no batched one.
    let (mut s, _, _, vma, f) = pmd_read(false);
    let before = flushes(&s);
    assert_eq!(reclaim_one(&mut s, f), (512, 512));
    assert!(present(&s, vma).is_empty());
    assert_eq!(s.vm.thp_split_pmd, 1);
    assert!(!s.vmas[vma as usize].file_pmd(0));
    let after = flushes(&s);
    assert_eq!((after.0 - before.0, after.1 - before.1), (1, 0));
    let r = s.tlb.as_ref().unwrap().stats;
    assert_eq!(
        (r.nr_tlb_remote_flush, r.nr_tlb_remote_flush_received),
        (0, 0)
    );
    s.check_invariants().unwrap();
}

/// kswapd's reclaim of a folio PMD-mapped in VMA `a` and mapped by 16
/// PTEs in VMA `b`: the split flushes `a`'s PMD from kswapd's CPU (a
/// remote flush), and `b`'s cleared PTEs queue the batched flush (every
/// CPU, a file folio), flushed at the end of `shrink_folio_list`.
#[test]
fn kswapd_splits_remotely_and_batches_the_ptes_of_other_vmas() {
    let (mut s, a, b, f) = pmd_and_ptes();
    let r0 = s.tlb.as_ref().unwrap().stats;
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, s.clock);
    assert!(s.try_to_unmap(f, &mut sc));
    assert!(sc.unmapped_ptes);
    assert!(present(&s, a).is_empty() && present(&s, b).is_empty());
    let r = s.tlb.as_ref().unwrap().stats;
    assert_eq!(
        (
            r.nr_tlb_local_flush_all - r0.nr_tlb_local_flush_all,
            r.nr_tlb_remote_flush - r0.nr_tlb_remote_flush,
        ),
        (0, 1)
    );
    assert_eq!(s.folios[f].mapcount, 0);
    s.check_invariants().unwrap();
}

/// The folio PMD-mapped in VMA `a` and by 16 PTEs in a VM_LOCKED VMA `c`
/// mapped after it: `try_to_unmap` splits `a`'s PMD, then stops at `c`.
/// The count is what `c` still maps: 16 (counted again). PG_referenced is
/// set from the split PMD's young bit.
#[test]
fn reclaim_stopped_by_vm_locked_after_a_split_keeps_the_right_count() {
    let (mut s, a, c, f) = pmd_and_ptes();
    s.vmas[c as usize].locked = true;
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, s.clock);
    assert!(!s.try_to_unmap(f, &mut sc));
    assert!(present(&s, a).is_empty());
    assert_eq!(present(&s, c), (0..16).collect::<Vec<_>>());
    assert_eq!(s.vm.thp_split_pmd, 1);
    assert_eq!(s.folios[f].mapcount, 16);
    assert!(s.folios[f].test(flags::REFERENCED));
    s.check_invariants().unwrap();
}

/// Without PMD mappings: an order-9 folio mapped by all 512 PTEs of VMA
/// `b` and by 16 of a VM_LOCKED VMA `c` (its count saturated at 255):
/// `try_to_unmap` clears `b`'s 512 and stops at `c`; the count is counted
/// again: 16. Before, 512 (cut to 255) came off the saturated 255: 0 with
/// `c` still mapping 16 pages.
#[test]
fn a_saturated_large_count_stopped_by_vm_locked_is_counted_again() {
    let (mut s, f, b, c) = saturated_large_folio();
    assert_eq!(s.folios[f].mapcount, 255);
    s.vmas[c as usize].locked = true;
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, s.clock);
    assert!(!s.try_to_unmap(f, &mut sc));
    assert!(present(&s, b).is_empty());
    assert_eq!(present(&s, c), (0..16).collect::<Vec<_>>());
    assert_eq!(s.folios[f].mapcount, 16);
    s.check_invariants().unwrap();
}

/// Without PMD mappings: an order-9 folio (a 2 MiB write) mapped by all
/// 512 PTEs of VMA `b` (fault-around, 32 faults) and by 16 of VMA `c`: its
/// count saturated at 255, so the zap of `b`'s 512 PTEs counts it again
/// from the page tables: `c`'s 16. Before, each zapped PTE took one off the
/// saturated count: 0 while `c` still mapped 16 pages.
#[test]
fn a_zap_of_a_saturated_count_counts_it_again() {
    let (mut s, f, b, c) = saturated_large_folio();
    assert_eq!(present(&s, b).len(), 512);
    assert_eq!(present(&s, c), (0..16).collect::<Vec<_>>());
    assert_eq!(s.folios[f].mapcount, 255);
    discard(&mut s, b, 0, 512);
    assert_eq!(s.folios[f].mapcount, 16);
    discard(&mut s, c, 0, 16);
    assert_eq!(s.folios[f].mapcount, 0);
    s.check_invariants().unwrap();
}
