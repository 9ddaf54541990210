//! Rule tests of `folio_mkclean()` on a PMD-mapped page-cache folio and
//! of the store that follows (v6.12 mm/rmap.c `page_vma_mkclean_one`,
//! mm/memory.c `wp_huge_pmd`, mm/huge_memory.c `__split_huge_pmd_locked`),
//! and of who counts the cleaning flushes: a task's own `fsync` flushes
//! its own mappings locally, a kworker (the flusher) remotely
//! (arch/x86/mm/tlb.c `flush_tlb_mm_range`). The TLB model is on
//! (`[machine.tlb]`), so the flushes are counted.

use super::filefolio::lf_config;
use super::*;
use crate::mem::pagetable::{PTE_DIRTY, PTE_PRESENT};
use crate::tlb::{TlbConfig, TlbReport};

/// A large-folio machine of 64 Ki pages with the TLB on, and PMD mappings
/// (`fs.pmd_mappings`) when `pmd`.
fn machine(pmd: bool) -> Sim {
    let mut cfg = lf_config(1 << 16);
    cfg.fs.pmd_mappings = pmd;
    cfg.tlb = TlbConfig {
        enabled: true,
        ..Default::default()
    };
    Sim::new(cfg).unwrap()
}

/// [`flushes`] counted since `before`.
fn flushes_since(s: &Sim, before: (u64, u64, u64, u64)) -> (u64, u64, u64, u64) {
    let after = flushes(s);
    (
        after.0 - before.0,
        after.1 - before.1,
        after.2 - before.2,
        after.3 - before.3,
    )
}

fn stats(s: &Sim) -> TlbReport {
    s.tlb.as_ref().expect("TLB on").stats
}

/// The four flush counters: (local all, local one, remote sent, received).
fn flushes(s: &Sim) -> (u64, u64, u64, u64) {
    let r = stats(s);
    (
        r.nr_tlb_local_flush_all,
        r.nr_tlb_local_flush_one,
        r.nr_tlb_remote_flush,
        r.nr_tlb_remote_flush_received,
    )
}

fn store(s: &mut Sim, vma: u32, index: u32) {
    s.step(&Event::Access {
        vma,
        index,
        write: true,
    });
}

fn fsync(s: &mut Sim, file: u32) {
    s.step(&Event::FileSync {
        file,
        index: 0,
        pages: 0,
        wait: false,
    });
}

/// The PTEs of pages `base..base + 512` of `vma` as (present, dirty) counts.
fn pmd_ptes(s: &Sim, vma: u32, base: u32) -> (usize, usize) {
    let v = &s.vmas[vma as usize];
    let ptes: Vec<u32> = (base..base + 512).map(|i| v.pte(i)).collect();
    (
        ptes.iter().filter(|&&p| p & PTE_PRESENT != 0).count(),
        ptes.iter().filter(|&&p| p & PTE_DIRTY != 0).count(),
    )
}

/// A PMD-mapping machine with a 1024-page file whose pages 0..512 were
/// written in one 2 MiB write (one order-9 folio) and written back, held
/// open by task `t` and mapped shared whole by it, not yet faulted.
/// Returns (sim, file, vma).
fn written_back_and_mapped() -> (Sim, u32, u32) {
    let mut s = machine(true);
    let t = s.add_task("t");
    let file = s.add_file("f", 1024).unwrap();
    s.open(file, t).unwrap();
    s.step(&Event::FileWrite {
        file,
        index: 0,
        pages: 512,
    });
    s.wakeup_flusher(s.clock);
    s.complete_writeback(u64::MAX);
    let f = file_folio(&s, file, 0);
    assert_eq!(s.folios[f].order(), 9);
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 0));
    let vma = s.mmap_file(t, file, 0, 1024, false).unwrap();
    (s, file, vma)
}

/// [`written_back_and_mapped`], then a store to page 5 maps the folio by
/// one PMD, writable and dirty (`finish_fault` → `do_set_pmd`).
fn pmd_stored() -> (Sim, u32, u32) {
    let (mut s, file, vma) = written_back_and_mapped();
    store(&mut s, vma, 5);
    assert_eq!((s.vm.thp_file_mapped, s.vm.pgfault), (1, 1));
    assert_eq!(pmd_ptes(&s, vma, 0), (512, 512));
    assert_eq!(s.nr_dirty, 512);
    (s, file, vma)
}

/// Writeback start of a PMD-mapped folio (the flusher, a kworker):
/// `page_vma_mkclean_one` cleans and write-protects the PMD once, with one
/// `pmdp_invalidate` flush — on x86 a full flush (512 pages over the
/// ceiling), sent to the mapping task's CPU: one remote flush, received
/// once. Before, mmsim cleaned 512 PTEs with 512 remote flushes.
#[test]
fn writeback_cleans_a_pmd_once_with_one_flush() {
    let (mut s, file, vma) = pmd_stored();
    let before = flushes(&s);
    s.wakeup_flusher(s.clock);
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 512));
    assert_eq!(pmd_ptes(&s, vma, 0), (512, 0), "mapped, clean");
    assert_eq!(flushes_since(&s, before), (0, 0, 1, 1));
    let f = file_folio(&s, file, 0);
    assert_eq!(s.folio_mkclean(f, None), 0, "nothing left to clean");
    assert_eq!(s.vm.thp_split_pmd, 0);
}

/// The next store through the write-protected PMD: `wp_huge_pmd` (no
/// `huge_fault` outside DAX) splits it, and a file PMD's split zaps it
/// (`thp_split_pmd` +1, one local full flush from the faulting task); the
/// fault falls back to the PTE level on a none PMD, and `finish_fault`
/// maps the folio by a PMD again, writable and dirty (`thp_file_mapped`
/// +1): one fault, the whole folio dirty again, and a store elsewhere in
/// it is a hit. The split carries the PMD's young bit into PG_referenced.
/// Before, the store dirtied only its own PTE, with no split.
#[test]
fn a_store_to_the_cleaned_pmd_splits_it_and_maps_it_dirty_again() {
    let (mut s, file, vma) = pmd_stored();
    s.wakeup_flusher(s.clock);
    s.complete_writeback(u64::MAX);
    let f = file_folio(&s, file, 0);
    s.folios[f].clear(flags::REFERENCED);
    let before = flushes(&s);
    let (faults, majfaults) = (s.vm.pgfault, s.vm.pgmajfault);
    store(&mut s, vma, 7);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (faults + 1, majfaults));
    assert_eq!((s.vm.thp_split_pmd, s.vm.thp_file_mapped), (1, 2));
    assert_eq!(pmd_ptes(&s, vma, 0), (512, 512));
    assert!(s.folios[f].test(flags::DIRTY));
    assert!(s.folios[f].test(flags::REFERENCED), "the PMD was young");
    assert_eq!(s.nr_dirty, 512);
    let after = flushes(&s);
    assert_eq!(
        (after.0 - before.0, after.2 - before.2),
        (1, 0),
        "the split's pmdp_huge_clear_flush, local"
    );
    store(&mut s, vma, 300);
    assert_eq!(s.vm.pgfault, faults + 1, "writable again: a hit");
    s.check_invariants().unwrap();
}

/// A task's own `fsync` cleans from its own context: the flush of its own
/// mapping is local (`nr_tlb_local_flush_one`: one page), that of another
/// task's shared mapping of the same file remote. Before, both counted
/// remote (the flusher's convention).
#[test]
fn a_tasks_own_fsync_flushes_its_own_mapping_locally() {
    let mut s = machine(false);
    let t = s.add_task("t");
    let u = s.add_task("u");
    let file = s.add_file("f", 64).unwrap();
    s.open(file, t).unwrap();
    let mine = s.mmap_file(t, file, 0, 64, false).unwrap();
    let theirs = s.mmap_file(u, file, 0, 64, false).unwrap();
    store(&mut s, mine, 0);
    store(&mut s, theirs, 0);
    let before = flushes(&s);
    fsync(&mut s, file);
    assert_eq!(s.nr_dirty, 0);
    assert_eq!(s.vmas[mine as usize].pte(0) & PTE_DIRTY, 0);
    assert_eq!(s.vmas[theirs as usize].pte(0) & PTE_DIRTY, 0);
    assert_eq!(flushes_since(&s, before), (0, 1, 1, 1));
    // The flusher (a kworker) cleaning the same PTE is remote.
    s.complete_writeback(u64::MAX);
    store(&mut s, mine, 0);
    let before = flushes(&s);
    s.wakeup_flusher(s.clock);
    let after = flushes(&s);
    assert_eq!((after.1 - before.1, after.2 - before.2), (0, 1));
}

/// A task's own `fsync` of its PMD-mapped folio: the one PMD flush is
/// local, a full flush (`nr_tlb_local_flush_all`), nothing remote.
#[test]
fn a_tasks_own_fsync_flushes_its_pmd_locally_once() {
    let (mut s, file, vma) = pmd_stored();
    let before = flushes(&s);
    fsync(&mut s, file);
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 512));
    assert_eq!(pmd_ptes(&s, vma, 0), (512, 0));
    assert_eq!(flushes_since(&s, before), (1, 0, 0, 0));
}

/// An order-9 folio mapped page by page (a VM_NOHUGEPAGE VMA: `do_set_pmd`
/// refuses it, `finish_fault` maps one PTE per write fault) is PTE-mapped
/// even when all 512 PTEs are present: writeback cleans it PTE by PTE (one
/// page flush each, sent by the flusher) and the next store is a PTE-level
/// `do_wp_page` (`wp_page_shared`) — no split, one PTE dirty. Before the
/// `PMD_MAPPED` flag, mmsim took the 512 PTEs for a PMD: one flush, and a
/// split at the store.
#[test]
fn a_folio_mapped_page_by_page_is_not_a_pmd() {
    let (mut s, _, vma) = written_back_and_mapped();
    s.madvise_file_hugepage(vma, crate::huge_memory::VmaThpAdvice::Nohugepage)
        .unwrap();
    for i in 0..512 {
        store(&mut s, vma, i);
    }
    assert_eq!((s.vm.thp_file_mapped, s.vm.pgfault), (0, 512));
    assert_eq!(pmd_ptes(&s, vma, 0), (512, 512));
    let before = flushes(&s);
    s.wakeup_flusher(s.clock);
    assert_eq!(pmd_ptes(&s, vma, 0), (512, 0), "mapped, clean");
    let after = flushes(&s);
    assert_eq!(
        (after.0 - before.0, after.2 - before.2, after.3 - before.3),
        (0, 512, 512)
    );
    s.complete_writeback(u64::MAX);
    store(&mut s, vma, 7);
    assert_eq!((s.vm.pgfault, s.vm.thp_split_pmd), (513, 0));
    assert_eq!(pmd_ptes(&s, vma, 0), (512, 1));
    s.check_invariants().unwrap();
}

/// The folio PMD-mapped in VMA `a` (a read fault) and mapped page by page
/// in a VM_NOHUGEPAGE VMA `b` (512 stores) at once: which one is a PMD is
/// the page table's answer (`page_vma_mapped_walk` reads `pmd_trans_huge`
/// of each VMA), not the folio's. Writeback cleans `b`'s 512 PTEs one by
/// one (`a`'s clean, read-only PMD needs nothing); the next
/// store in `b` is a PTE-level `wp_page_shared` — no split, one PTE dirty,
/// `a`'s PMD untouched. Before, mmsim's per-folio `PMD_MAPPED` flag (a
/// stand-in for `folio_entire_mapcount`) made `b`'s 512 PTEs a PMD too:
/// one flush for them, and a split of `b` at the store.
#[test]
fn a_pmd_in_one_vma_does_not_make_another_vmas_ptes_a_pmd() {
    let (mut s, file, a) = written_back_and_mapped();
    s.step(&Event::Access {
        vma: a,
        index: 5,
        write: false,
    });
    assert_eq!(s.vm.thp_file_mapped, 1);
    let b = s.mmap_file(0, file, 0, 1024, false).unwrap();
    s.madvise_file_hugepage(b, crate::huge_memory::VmaThpAdvice::Nohugepage)
        .unwrap();
    for i in 0..512 {
        store(&mut s, b, i);
    }
    assert_eq!((s.vm.thp_file_mapped, s.vm.pgfault), (1, 513));
    assert_eq!(pmd_ptes(&s, a, 0), (512, 0));
    assert_eq!(pmd_ptes(&s, b, 0), (512, 512));
    let before = flushes(&s);
    s.wakeup_flusher(s.clock);
    assert_eq!(pmd_ptes(&s, b, 0), (512, 0), "mapped, clean");
    // b's PTEs: 512 remote page flushes; a's PMD, mapped clean and
    // read-only by the read fault, needs no cleaning (no flush).
    assert_eq!(flushes_since(&s, before), (0, 0, 512, 512));
    s.complete_writeback(u64::MAX);
    store(&mut s, b, 7);
    assert_eq!((s.vm.pgfault, s.vm.thp_split_pmd), (514, 0));
    assert_eq!(pmd_ptes(&s, b, 0), (512, 1));
    assert_eq!(pmd_ptes(&s, a, 0), (512, 0));
    s.check_invariants().unwrap();
}
