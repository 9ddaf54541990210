//! Rule tests of `folio_mkclean()` at writeback (v6.12
//! `folio_clear_dirty_for_io()`, mm/page-writeback.c and mm/rmap.c): the
//! PTEs of a shared file mapping are cleaned and write-protected when the
//! folio's write starts, so the next store faults (`wp_page_shared()` →
//! `fault_dirty_shared_page()`), and a zap or an unmap finds no stale dirty
//! bit. And the periodic flusher's global background check
//! (`wb_check_background_flush()`, fs/fs-writeback.c).

use super::dirty_balance::slow_write_machine;
use super::*;
use crate::mem::pagetable::{PTE_DIRTY, PTE_PRESENT};

/// [`slow_write_machine`] with a task that has a `pages`-page file open
/// and mapped shared whole: (sim, file, vma).
fn mapped(pages: u32) -> (Sim, u32, crate::mem::pagetable::VmaId) {
    let mut s = slow_write_machine();
    let t = s.add_task("t");
    let file = s.add_file("f", u64::from(pages)).unwrap();
    s.open(file, t).unwrap();
    let vma = s.mmap_file(t, file, 0, u64::from(pages), false).unwrap();
    (s, file, vma)
}

fn store(s: &mut Sim, vma: u32, index: u32) {
    s.step(&Event::Access {
        vma,
        index,
        write: true,
    });
}

/// (a) A store, its folio's write, a second store: the write cleans and
/// write-protects the PTE (young kept), so the second store faults
/// (`pgfault` +1, no `pgmajfault`), dirties the folio again and makes the
/// PTE dirty. Before, the PTE stayed dirty and the second store was a hit:
/// the folio stayed clean.
#[test]
fn a_store_after_writeback_faults_and_dirties_the_folio_again() {
    let (mut s, file, vma) = mapped(64);
    store(&mut s, vma, 0);
    let f = file_folio(&s, file, 0);
    let pte = s.vmas[vma as usize].pte(0);
    assert_eq!(pte & (PTE_PRESENT | PTE_DIRTY), PTE_PRESENT | PTE_DIRTY);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault, s.nr_dirty), (1, 1, 1));
    s.wakeup_flusher(s.clock);
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 1));
    assert_eq!(
        s.vmas[vma as usize].pte(0),
        pte & !PTE_DIRTY,
        "cleaned, young kept"
    );
    s.complete_writeback(u64::MAX);
    let (hits, faults) = (s.acc.hits, s.vm.pgfault);
    store(&mut s, vma, 0);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (faults + 1, 1));
    assert_eq!(
        s.acc.hits,
        hits + 1,
        "a write-protect fault on a present page"
    );
    assert!(s.folios[f].test(flags::DIRTY));
    assert_eq!((s.nr_dirty, s.nr_writeback), (1, 0));
    assert_ne!(s.vmas[vma as usize].pte(0) & PTE_DIRTY, 0);
    // A third store is a hit again: the PTE is writable.
    store(&mut s, vma, 0);
    assert_eq!(s.vm.pgfault, faults + 1);
}

/// (a) The fault of a store after writeback is a writer's: it balances
/// (`balance_dirty_pages_ratelimited()` from `fault_dirty_shared_page()`).
/// With the dirty pages at the global background threshold, the store
/// dirtying the written folio takes them over it, and its balance writes
/// the oldest dirty page. Before, the store was a hit and nothing was
/// dirtied or written.
#[test]
fn a_store_after_writeback_balances() {
    let (mut s, file, vma) = mapped(1024);
    store(&mut s, vma, 0);
    s.wakeup_flusher(s.clock);
    s.complete_writeback(u64::MAX);
    let bg_thresh = |s: &Sim| crate::cgwb::domain_dirty_limits(s.global_dirtyable_memory()).1;
    let mut index = 1;
    while s.nr_dirty < bg_thresh(&s) {
        s.step(&Event::FileWrite {
            file,
            index,
            pages: 1,
        });
        index += 1;
    }
    assert_eq!((s.nr_dirty, s.nr_writeback), (389, 0));
    assert_eq!(bg_thresh(&s), 389);
    store(&mut s, vma, 0);
    // Page 0 dirty (390 > 389): the oldest, page 1, written.
    assert!(s.folios[file_folio(&s, file, 0)].test(flags::DIRTY));
    assert!(s.folios[file_folio(&s, file, 1)].test(flags::WRITEBACK));
    assert_eq!((s.nr_dirty, s.nr_writeback), (389, 1));
}

/// (b) A store, its folio's write, no store, a zap (`MADV_DONTNEED`): the
/// PTE is clean, so `zap_present_folio_ptes()` does not dirty the folio
/// again. Before, the stale dirty bit dirtied it, to be written twice.
#[test]
fn a_zap_after_writeback_does_not_dirty_the_folio_again() {
    let (mut s, file, vma) = mapped(64);
    store(&mut s, vma, 0);
    s.wakeup_flusher(s.clock);
    s.complete_writeback(u64::MAX);
    let f = file_folio(&s, file, 0);
    s.step(&Event::Discard {
        vma,
        index: 0,
        pages: 1,
    });
    assert_eq!(s.vmas[vma as usize].pte(0), 0);
    assert_eq!(
        (s.folios[f].mapcount, s.nr_dirty, s.nr_writeback),
        (0, 0, 0)
    );
    assert!(!s.folios[f].test(flags::DIRTY));
}

/// `invalid_mkclean_vma()`: only VM_SHARED mappings are cleaned. A private
/// mapping's PTE of a page-cache folio (mapped read-only by a read fault)
/// is left as it is, and a page-cache folio mapped both ways has only its
/// shared PTE cleaned. mmsim reaches no dirty private PTE of a page-cache
/// folio (a private store makes an anonymous copy), so the test marks the
/// private PTE dirty by hand: only the VMA filter then leaves it alone.
#[test]
fn only_shared_mappings_are_cleaned() {
    let mut s = slow_write_machine();
    let t = s.add_task("t");
    let file = s.add_file("f", 64).unwrap();
    s.open(file, t).unwrap();
    let shared = s.mmap_file(t, file, 0, 64, false).unwrap();
    let private = s.mmap_file_private(t, file, 0, 64).unwrap();
    s.step(&Event::Access {
        vma: private,
        index: 0,
        write: false,
    });
    store(&mut s, shared, 0);
    let f = file_folio(&s, file, 0);
    assert_eq!(s.folios[f].mapcount, 2);
    assert_eq!(s.vmas[private as usize].pte(0) & PTE_DIRTY, 0);
    *s.vmas[private as usize].pte_mut(0) |= PTE_DIRTY;
    let private_pte = s.vmas[private as usize].pte(0);
    s.wakeup_flusher(s.clock);
    assert_eq!(s.vmas[private as usize].pte(0), private_pte);
    assert_eq!(s.vmas[shared as usize].pte(0) & PTE_DIRTY, 0);
    assert!(s.folios[f].test(flags::WRITEBACK));
    assert_eq!(s.folio_mkclean(f, None), 0, "nothing left to clean");
}

/// (c) A memsim-style trace through a shared mapping: one store to each of
/// pages 0..4000, then reads of 20,000 other pages on a 32 MiB machine
/// (8192 pages: the reads evict the stored pages). Each stored page is
/// written exactly once (to the flusher, reclaim's `pageout` or at the
/// end still dirty): pages written + pages still dirty = 4000 stores.
/// Before, unmap by reclaim re-dirtied written folios from their stale
/// PTEs (the CLI run of this trace wrote 7,209 pages, 735 still dirty).
#[test]
fn a_shared_mmap_trace_writes_each_stored_page_once() {
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(8192),
        ..Default::default()
    })
    .unwrap();
    let t = s.add_task("t");
    let file = s.add_file("f", 24_000).unwrap();
    s.open(file, t).unwrap();
    let vma = s.mmap_file(t, file, 0, 24_000, false).unwrap();
    for index in 0..4000 {
        store(&mut s, vma, index);
    }
    for index in 4000..24_000 {
        s.step(&Event::Access {
            vma,
            index,
            write: false,
        });
    }
    let written = s.vm.pgpgout / 4;
    assert_eq!(written + s.nr_dirty, 4000);
    assert!(written > 0);
}

/// The periodic flusher's `wb_check_background_flush()` (v6.12
/// `wb_do_writeback()`, after the expiry pass): dirty pages over the global
/// background threshold with no further writes are written down to it at
/// the next tick. Here 389 buffered writes leave the dirty pages at the
/// threshold; anonymous faults (which never balance) then take 1000 free
/// pages, lowering it from 389 to 290; no write follows, and no page is old enough to
/// expire. Before, the tick wrote nothing and the pages waited for their
/// 30 s expiry.
#[test]
fn the_periodic_flusher_writes_the_global_domain_down_to_its_background_threshold() {
    let mut s = slow_write_machine();
    let t = s.add_task("t");
    let file = s.add_file("f", 1024).unwrap();
    s.open(file, t).unwrap();
    for index in 0..389 {
        s.step(&Event::FileWrite {
            file,
            index,
            pages: 1,
        });
    }
    let bg_thresh = |s: &Sim| crate::cgwb::domain_dirty_limits(s.global_dirtyable_memory()).1;
    assert_eq!((s.nr_dirty, s.nr_writeback, bg_thresh(&s)), (389, 0, 389));
    let anon = s.mmap_anon(t, 1000).unwrap();
    for index in 0..1000 {
        store(&mut s, anon, index);
    }
    // 3707 - 1000 free pages: dirtyable 2707 - 192 + 389 + 1 = 2905,
    // bg_thresh 409 * 2905 / 4096 = 290.
    assert_eq!(s.global_dirtyable_memory(), 2905);
    assert_eq!((s.nr_dirty, s.nr_writeback, bg_thresh(&s)), (389, 0, 290));
    assert!(s.clock < crate::sim::DIRTY_EXPIRE_NS, "nothing expired");
    s.flusher_periodic(s.clock);
    assert_eq!((s.nr_dirty, s.nr_writeback, bg_thresh(&s)), (290, 99, 290));
    // The oldest written: pages 0..99.
    assert!(s.folios[file_folio(&s, file, 98)].test(flags::WRITEBACK));
    assert!(s.folios[file_folio(&s, file, 99)].test(flags::DIRTY));
}
