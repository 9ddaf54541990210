//! Rule tests of private file mappings (`crate::cow`): `do_cow_fault` on a
//! store to a page not present, `wp_page_copy` on a store to a page-cache
//! page mapped read-only, order-0 copies under multi-size THP, the copies'
//! anon accounting, swap-out and zap, and the RSS counters and `nr_mapped`.

use super::*;
use crate::huge_memory::{ThpConfig, ThpSizeConfig, ThpSizeEnabled};
use crate::mem::pagetable::{PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT};
use crate::MmCounters;

/// A task with a `pages`-page file mapped private (`private`) or shared,
/// under MADV_RANDOM (no read-around: a fault reads its page alone).
fn mapped(s: &mut Sim, pages: u64, private: bool) -> (u32, u32, u32) {
    let t = s.add_task("t");
    let file = s.add_file("f", pages).unwrap();
    let vma = if private {
        s.mmap_file_private(t, file, 0, pages).unwrap()
    } else {
        s.mmap_file(t, file, 0, pages, false).unwrap()
    };
    s.madvise(vma, Advice::Random).unwrap();
    (t, file, vma)
}

fn access(s: &mut Sim, vma: u32, index: u32, write: bool) {
    s.step(&Event::Access { vma, index, write });
}

fn pte_folio(s: &Sim, vma: u32, index: u32) -> FolioId {
    let p = s.vmas[vma as usize].pte(index);
    assert!(p & PTE_PRESENT != 0, "page {index} not present");
    p & PTE_FOLIO_MASK
}

fn rss(s: &Sim, t: u32) -> (u64, u64, u64) {
    let MmCounters { file, anon, swap } = s.mm_counters(t).unwrap();
    (file, anon, swap)
}

/// memory.stat `anon` and `file` of the root group, in pages.
fn stat(s: &Sim) -> (u64, u64) {
    let r = s.memcg_report(0);
    (r.anon, r.file)
}

#[test]
fn a_store_to_a_page_not_present_copies_it_from_the_page_cache() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let (t, file, vma) = mapped(&mut s, 16, true);
    access(&mut s, vma, 3, true);
    // One fault, major: the file page was read into the page cache first.
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (1, 1));
    assert_eq!(s.memcgs[0].stat.pgfault, 1);
    let cached = file_folio(&s, file, 3);
    let copy = pte_folio(&s, vma, 3);
    assert_ne!(copy, cached);
    // The copy: order 0, anonymous, mapped young and dirty, on the anon list.
    assert_eq!(s.folios[copy].order(), 0);
    assert!(s.folios[copy].test(flags::SWAPBACKED));
    assert_eq!((s.folios[copy].space, s.folios[copy].index), (vma, 3));
    assert_eq!(s.folios[copy].mapcount, 1);
    assert_ne!(s.vmas[vma as usize].pte(3) & PTE_DIRTY, 0);
    assert_eq!(list_of(&s, copy), LruList::InactiveAnon);
    // The page-cache folio stays cached, clean and unmapped.
    assert_eq!(s.folios[cached].mapcount, 0);
    assert!(!s.folios[cached].test(flags::DIRTY));
    assert_eq!(list_of(&s, cached), LruList::InactiveFile);
    // RSS: one anonymous page, no file page; nothing of the file mapped.
    assert_eq!(rss(&s, t), (0, 1, 0));
    assert_eq!(s.nr_file_mapped(), 0);
    assert_eq!(stat(&s), (1, 1));
    assert_eq!(s.node.managed - s.node.free, 2);
    assert_eq!(s.nr_dirty, 0);
    // A second store is a hit.
    access(&mut s, vma, 3, true);
    assert_eq!(s.vm.pgfault, 1);
    s.check_invariants().unwrap();
}

#[test]
fn a_store_after_a_load_copies_the_mapped_page_cache_folio() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let (t, file, vma) = mapped(&mut s, 16, true);
    access(&mut s, vma, 3, false);
    let cached = file_folio(&s, file, 3);
    // do_read_fault: the page-cache folio mapped read-only.
    assert_eq!(pte_folio(&s, vma, 3), cached);
    assert_eq!(s.vmas[vma as usize].pte(3) & PTE_DIRTY, 0);
    assert_eq!(s.folios[cached].mapcount, 1);
    assert_eq!(rss(&s, t), (1, 0, 0));
    assert_eq!(s.nr_file_mapped(), 1);
    assert_eq!(stat(&s), (0, 1));
    // The store: do_wp_page -> wp_page_copy.
    access(&mut s, vma, 3, true);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (2, 1));
    let copy = pte_folio(&s, vma, 3);
    assert_ne!(copy, cached);
    assert!(s.folios[copy].test(flags::SWAPBACKED));
    assert_eq!(s.folios[copy].order(), 0);
    assert_ne!(s.vmas[vma as usize].pte(3) & PTE_DIRTY, 0);
    // The old folio lost this mapping, and is not dirtied.
    assert_eq!(s.folios[cached].mapcount, 0);
    assert!(!s.folios[cached].test(flags::DIRTY));
    assert_eq!(rss(&s, t), (0, 1, 0));
    assert_eq!(s.nr_file_mapped(), 0);
    assert_eq!(stat(&s), (1, 1));
    s.check_invariants().unwrap();
}

#[test]
fn a_shared_mapping_dirties_the_page_cache_instead() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let (t, file, vma) = mapped(&mut s, 16, false);
    access(&mut s, vma, 3, false);
    access(&mut s, vma, 3, true);
    access(&mut s, vma, 5, true);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (3, 2));
    let cached = file_folio(&s, file, 3);
    assert_eq!(pte_folio(&s, vma, 3), cached);
    assert!(s.folios[cached].test(flags::DIRTY));
    assert_eq!(rss(&s, t), (2, 0, 0));
    assert_eq!(s.nr_file_mapped(), 2);
    assert_eq!(stat(&s), (0, 2));
    assert_eq!(s.nr_dirty, 2);
}

#[test]
fn a_cached_page_copies_on_a_minor_fault_and_other_mappings_keep_it() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let (_, file, vma) = mapped(&mut s, 16, true);
    // A second task maps the file shared and reads page 3 first.
    let t2 = s.add_task("t2");
    let shared = s.mmap_file(t2, file, 0, 16, false).unwrap();
    s.madvise(shared, Advice::Random).unwrap();
    access(&mut s, shared, 3, false);
    assert_eq!(s.vm.pgmajfault, 1);
    access(&mut s, vma, 3, true);
    // Cached: the copy costs a minor fault only.
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (2, 1));
    let cached = file_folio(&s, file, 3);
    assert_ne!(pte_folio(&s, vma, 3), cached);
    assert_eq!(pte_folio(&s, shared, 3), cached);
    assert_eq!(s.folios[cached].mapcount, 1);
    assert_eq!(s.nr_file_mapped(), 1);
    assert_eq!(rss(&s, t2), (1, 0, 0));
    assert_eq!(stat(&s), (1, 1));
    s.check_invariants().unwrap();
}

#[test]
fn the_copy_is_order_0_with_64k_anonymous_folios() {
    let thp = ThpConfig {
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    };
    let mut s = super::thp::thp_machine(8192, None, thp);
    let (t, _, vma) = mapped(&mut s, 64, true);
    // do_cow_fault, then wp_page_copy: both folio_prealloc, order 0.
    access(&mut s, vma, 16, true);
    access(&mut s, vma, 40, false);
    access(&mut s, vma, 40, true);
    assert_eq!(s.folios[pte_folio(&s, vma, 16)].order(), 0);
    assert_eq!(s.folios[pte_folio(&s, vma, 40)].order(), 0);
    assert_eq!(s.vmas[vma as usize].pte(17), 0);
    assert_eq!(rss(&s, t), (0, 2, 0));
    assert_eq!(s.thp.stats[4].anon_fault_alloc, 0);
    // The same store to anonymous memory allocates 64 KiB.
    let a = s.mmap_anon(t, 64).unwrap();
    access(&mut s, a, 16, true);
    assert_eq!(s.folios[pte_folio(&s, a, 16)].order(), 4);
}

#[test]
fn a_copy_is_swapped_out_and_faults_back_in_from_its_swap_entry() {
    let mut s = machine(PolicyName::Cost, 4096, Some(1024));
    let (t, file, vma) = mapped(&mut s, 16, true);
    access(&mut s, vma, 3, true);
    let copy = pte_folio(&s, vma, 3);
    // Reclaim of the copy: added to swap, unmapped, written (zram: at once).
    let (reclaimed, _) = super::filefolio::reclaim_one(&mut s, copy);
    assert_eq!(reclaimed, 1);
    assert_eq!(s.vm.pswpout, 1);
    let pte = s.vmas[vma as usize].pte(3);
    assert!(pte != 0 && pte & PTE_PRESENT == 0, "a swap entry");
    assert_eq!(rss(&s, t), (0, 0, 1));
    assert_eq!(stat(&s), (0, 1));
    // A load faults it back from swap (do_swap_page), not from the file.
    access(&mut s, vma, 3, false);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault, s.vm.pswpin), (2, 2, 1));
    let back = pte_folio(&s, vma, 3);
    assert!(s.folios[back].test(flags::SWAPBACKED));
    assert_ne!(Some(back), slot_folio(s.files[file as usize].slot(3)));
    assert_eq!(rss(&s, t), (0, 1, 0));
    assert_eq!(stat(&s), (1, 1));
    s.check_invariants().unwrap();
}

#[test]
fn munmap_frees_the_copies_and_leaves_the_page_cache() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let (t, file, vma) = mapped(&mut s, 16, true);
    access(&mut s, vma, 1, false);
    access(&mut s, vma, 2, true);
    access(&mut s, vma, 3, false);
    access(&mut s, vma, 3, true);
    assert_eq!(rss(&s, t), (1, 2, 0));
    assert_eq!(s.nr_file_mapped(), 1);
    assert_eq!(stat(&s), (2, 3));
    s.step(&Event::Discard {
        vma,
        index: 0,
        pages: 16,
    });
    assert_eq!(rss(&s, t), (0, 0, 0));
    assert_eq!(s.nr_file_mapped(), 0);
    // The copies are freed; the three file pages stay cached, clean.
    assert_eq!(stat(&s), (0, 3));
    assert_eq!(s.node.managed - s.node.free, 3);
    assert_eq!(s.nr_dirty, 0);
    assert_eq!(s.folios[file_folio(&s, file, 1)].mapcount, 0);
    // The next store copies again, from the cache: a minor fault.
    let majfault = s.vm.pgmajfault;
    access(&mut s, vma, 2, true);
    assert_eq!(s.vm.pgmajfault, majfault);
    assert_eq!(rss(&s, t), (0, 1, 0));
    s.check_invariants().unwrap();
}

#[test]
fn exit_frees_the_copies() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let (t, _, vma) = mapped(&mut s, 16, true);
    for i in 0..4 {
        access(&mut s, vma, i, true);
    }
    assert_eq!(stat(&s), (4, 4));
    s.exit_task(t).unwrap();
    assert_eq!(stat(&s), (0, 4));
    s.check_invariants().unwrap();
}

#[test]
fn read_faults_map_the_page_cache_with_fault_around() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let t = s.add_task("t");
    let file = s.add_file("f", 64).unwrap();
    let vma = s.mmap_file_private(t, file, 0, 64).unwrap();
    // Read-around brings the file in; fault-around maps what is cached.
    access(&mut s, vma, 0, false);
    access(&mut s, vma, 1, false);
    let (file_rss, anon_rss, _) = rss(&s, t);
    assert_eq!(anon_rss, 0);
    assert!(file_rss > 2, "fault-around mapped {file_rss}");
    assert_eq!(s.nr_file_mapped(), file_rss);
    // A store to a page fault-around mapped read-only copies it.
    access(&mut s, vma, 1, true);
    assert_eq!(rss(&s, t), (file_rss - 1, 1, 0));
}

#[test]
fn swapped_copies_come_back_one_page_at_a_time_under_6_13() {
    // 16 copies swapped out in order hold 16 aligned contiguous slots; 6.13's
    // large swap-in (`alloc_swap_folio`) is for anonymous VMAs only: a private
    // file mapping is not `vma_is_anonymous`, so page 5 comes back alone.
    let thp = ThpConfig {
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        kernel: crate::huge_memory::ThpKernel::V6_13,
        ..Default::default()
    };
    let mut s = super::thp::thp_machine(8192, Some(1024), thp);
    let (_, _, vma) = mapped(&mut s, 64, true);
    for i in 0..16 {
        access(&mut s, vma, i, true);
    }
    for i in 0..16 {
        let f = pte_folio(&s, vma, i);
        super::filefolio::reclaim_one(&mut s, f);
    }
    assert_eq!(s.vm.pswpout, 16);
    access(&mut s, vma, 5, false);
    assert_eq!(s.folios[pte_folio(&s, vma, 5)].order(), 0);
    assert_eq!(s.vm.pswpin, 1);
    assert_eq!(s.vmas[vma as usize].pte(6) & PTE_PRESENT, 0);
    s.check_invariants().unwrap();
}

#[test]
fn an_oom_kill_frees_the_copies_and_their_swap_slots() {
    let mut s = machine(PolicyName::Cost, 4096, Some(1024));
    let (t, _, vma) = mapped(&mut s, 16, true);
    for i in 0..4 {
        access(&mut s, vma, i, true);
    }
    let copy = pte_folio(&s, vma, 3);
    let (reclaimed, _) = super::filefolio::reclaim_one(&mut s, copy);
    assert_eq!(reclaimed, 1);
    assert_eq!(rss(&s, t), (0, 3, 1));
    assert_eq!(s.swap.as_ref().unwrap().used, 1);
    // An anonymous page gives the task its OOM badness.
    let heap = s.mmap_anon(t, 4).unwrap();
    access(&mut s, heap, 0, true);
    assert_eq!(stat(&s), (4, 4));
    assert!(s.out_of_memory(None));
    // The three mapped copies and the heap page are freed, and the swapped
    // copy's slot with them; the page cache stays.
    assert_eq!(stat(&s), (0, 4));
    assert_eq!(s.swap.as_ref().unwrap().used, 0);
    s.check_invariants().unwrap();
}

/// A store whose copy's charge reclaims the very page-cache page it copies:
/// `wp_page_copy`'s `pte_same` fails, the copy is freed and the store
/// faults again (`Sim::retry_fault`'s loop, shared with fork's copies), now
/// on a PTE that is none: `do_cow_fault` reads the page back, a major
/// fault, and maps its copy.
#[test]
fn a_store_whose_copy_reclaimed_the_page_cache_page_faults_again() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let m = s.add_memcg(crate::memcg::ROOT, "g").unwrap();
    let (t, file, vma) = mapped(&mut s, 16, true);
    s.attach_task(t, m).unwrap();
    s.set_memcg_max(m, 16).unwrap();
    for i in 0..16 {
        access(&mut s, vma, i, false);
    }
    // Nothing referenced since: reclaim takes the oldest pages first.
    for pte in &mut s.vmas[vma as usize].ptes {
        *pte &= !crate::mem::pagetable::PTE_YOUNG;
    }
    let old = file_folio(&s, file, 0);
    assert_eq!(pte_folio(&s, vma, 0), old);
    let (faults, majors, accesses) = (s.vm.pgfault, s.vm.pgmajfault, s.acc.accesses);
    access(&mut s, vma, 0, true);
    // Two faults (the write-protect fault, then its retry: a major fault
    // reading the page back), one access, the copy mapped.
    assert_eq!(
        (s.vm.pgfault, s.vm.pgmajfault, s.acc.accesses),
        (faults + 2, majors + 1, accesses + 1)
    );
    let copy = pte_folio(&s, vma, 0);
    assert!(s.folios[copy].test(flags::SWAPBACKED));
    assert_ne!(Some(copy), slot_folio(s.files[file as usize].slot(0)));
    assert!(s.fault_retry_idle());
    s.check_invariants().unwrap();
}
