//! Rule tests of v6.12's zero-filled pages at a THP split
//! (`try_to_map_unused_to_zeropage`, `crate::split_zeropage`) and the
//! deferred split shrinker's underused path (`thp_underused`,
//! `thp_underused_split_page`, `shrink_underused`; `crate::deferred_split`):
//! a PMD THP with 3 pages written maps 509 zero-page PTEs at its split
//! (by reclaim or by the shrinker) and frees 509 pages; `max_ptes_none`
//! decides which whole THPs the shrinker splits; 6.8 keeps every page; a
//! THP shared by fork gets the zero page in the parent and the child.

use super::thp::thp_machine;
use super::*;
use crate::huge_memory::{ThpConfig, ThpEnabled, ThpKernel};
use crate::khugepaged::KhugepagedConfig;
use crate::mem::pagetable::{PTE_FOLIO_MASK, PTE_PRESENT};

/// PMD-size THP for every VMA under `kernel`, khugepaged's `max_ptes_none`
/// set (khugepaged itself not running).
fn pmd_thp(kernel: ThpKernel, max_ptes_none: u32) -> ThpConfig {
    ThpConfig {
        kernel,
        enabled: ThpEnabled::Always,
        khugepaged: KhugepagedConfig {
            max_ptes_none,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn write(s: &mut Sim, vma: u32, index: u32) {
    s.step(&Event::Access {
        vma,
        index,
        write: true,
    });
}

fn read(s: &mut Sim, vma: u32, index: u32) {
    s.step(&Event::Access {
        vma,
        index,
        write: false,
    });
}

/// A task whose 512-page VMA is one PMD THP with `written` pages stored to
/// (the first by the fault); returns the machine, the VMA and the folio.
pub(super) fn thp_written(
    kernel: ThpKernel,
    max_ptes_none: u32,
    swap: Option<u64>,
    written: &[u32],
) -> (Sim, u32, FolioId) {
    let mut s = thp_machine(8192, swap, pmd_thp(kernel, max_ptes_none));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    write(&mut s, vma, written[0]);
    let f = s.vmas[vma as usize].pte(written[0]) & PTE_FOLIO_MASK;
    assert_eq!(s.folios[f].order(), 9);
    for &i in &written[1..] {
        write(&mut s, vma, i);
    }
    (s, vma, f)
}

/// Pages of `vma`'s first 512 whose PTE maps the zero page.
fn zero_ptes(s: &Sim, vma: u32) -> u32 {
    (0..512)
        .filter(|&i| {
            let p = s.vmas[vma as usize].pte(i);
            p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == s.zero_folio
        })
        .count() as u32
}

fn used(s: &Sim) -> u64 {
    s.node.managed - s.node.free
}

fn queued(s: &Sim) -> u64 {
    s.thp.split_queues.iter().map(|q| q.len).sum()
}

/// Pages `0, 100, 300` written.
const THREE: [u32; 3] = [0, 100, 300];

/// The first `n` pages written (62 → 450 zero-filled, 112 → 400).
fn first(n: u32) -> Vec<u32> {
    (0..n).collect()
}

#[test]
fn stores_to_a_thps_other_pages_are_hits_and_the_thp_is_queued_whole_at_its_fault() {
    let (s, vma, f) = thp_written(ThpKernel::V6_12, 511, None, &THREE);
    // One fault; the two later stores went through writable PTEs.
    assert_eq!(s.vm.pgfault, 1);
    assert_eq!((s.acc.accesses, s.acc.hits, s.acc.misses), (3, 2, 1));
    // deferred_split_folio(folio, false): queued, not partially mapped, uncounted.
    assert_eq!(queued(&s), 1);
    assert!(s.folios[f].test(flags::DEFERRED_QUEUED));
    assert!(!s.folios[f].test(flags::PARTIALLY_MAPPED));
    assert_eq!(s.vm.thp_deferred_split_page, 0);
    let written = (0..512)
        .filter(|&i| !s.page_zero_filled(f, i))
        .collect::<Vec<_>>();
    assert_eq!(written, THREE);
    let _ = vma;
    s.check_invariants().unwrap();
}

#[test]
fn the_shrinker_splits_an_underused_thp_into_509_zero_page_ptes_and_frees_509_pages() {
    // max_ptes_none 409: more than 409 zero-filled pages is underused.
    let (mut s, vma, f) = thp_written(ThpKernel::V6_12, 409, None, &THREE);
    assert_eq!(used(&s), 512);
    assert_eq!(s.deferred_split_scan(0, 1), (1, false));
    assert_eq!(s.vm.thp_underused_split_page, 1);
    assert_eq!(s.vm.thp_split_page, 1);
    assert_eq!(queued(&s), 0);
    assert_eq!(zero_ptes(&s, vma), 509);
    assert_eq!(used(&s), 3);
    assert_eq!(s.folios.live(), 3 + 1, "three pages and the zero page");
    for i in THREE {
        let p = s.vmas[vma as usize].pte(i);
        let g = p & PTE_FOLIO_MASK;
        assert!(p & PTE_PRESENT != 0 && g != s.zero_folio);
        assert_eq!((s.folios[g].order(), s.folios[g].mapcount), (0, 1));
    }
    assert_eq!(s.folios[f].order(), 0);
    let rss = s.mm_counters(0).unwrap();
    assert_eq!(rss.anon, 3);
    // A read of a zero-page PTE hits; a store copies it into a new page.
    read(&mut s, vma, 7);
    assert_eq!(s.vm.pgfault, 1);
    write(&mut s, vma, 7);
    assert_eq!(s.vm.pgfault, 2);
    assert_eq!((used(&s), zero_ptes(&s, vma)), (4, 508));
    s.check_invariants().unwrap();
}

#[test]
fn reclaim_splitting_a_thp_for_want_of_slots_frees_its_509_zero_filled_pages() {
    // 64 swap pages: no 512 contiguous slots, so the THP is split
    // (thp_swpout_fallback) and its pages go through reclaim at order 0.
    let (mut s, vma, f) = thp_written(ThpKernel::V6_12, 511, Some(64), &THREE);
    let (reclaimed, _) = super::filefolio::reclaim_one(&mut s, f);
    assert_eq!((s.vm.thp_swpout_fallback, s.vm.thp_split_page), (1, 1));
    assert_eq!(s.vm.thp_underused_split_page, 0);
    // The three written pages are swapped out; the 509 others are mapped
    // to the zero page and freed without IO (at putback, not reclaimed).
    assert_eq!(reclaimed, 3);
    assert_eq!(s.vm.pswpout, 3);
    assert_eq!(zero_ptes(&s, vma), 509);
    assert_eq!(used(&s), 0);
    assert_eq!(s.swap.as_ref().unwrap().used, 3);
    assert_eq!(queued(&s), 0);
    s.check_invariants().unwrap();
}

#[test]
fn max_ptes_none_409_splits_a_thp_with_450_zero_pages_but_not_one_with_400() {
    let (mut s, vma, f) = thp_written(ThpKernel::V6_12, 409, None, &first(62));
    assert!(s.thp_underused(f));
    assert_eq!(s.deferred_split_scan(0, 1), (1, false));
    assert_eq!(s.vm.thp_underused_split_page, 1);
    assert_eq!((zero_ptes(&s, vma), used(&s)), (450, 62));

    let (mut s, vma, f) = thp_written(ThpKernel::V6_12, 409, None, &first(112));
    assert!(!s.thp_underused(f));
    // Not underused: it leaves the queue whole ("consider it used").
    assert_eq!(s.deferred_split_scan(0, 1), (0, true));
    assert_eq!(s.vm.thp_underused_split_page, 0);
    assert_eq!((s.folios[f].order(), queued(&s)), (9, 0));
    assert!(!s.folios[f].test(flags::DEFERRED_QUEUED));
    assert_eq!((zero_ptes(&s, vma), used(&s)), (0, 512));
    s.check_invariants().unwrap();
}

#[test]
fn max_ptes_none_511_never_finds_a_thp_underused() {
    // thp_underused() returns false at once at HPAGE_PMD_NR - 1.
    let (mut s, _, f) = thp_written(ThpKernel::V6_12, 511, None, &THREE);
    assert!(!s.thp_underused(f));
    assert_eq!(s.deferred_split_scan(0, 1), (0, true));
    assert_eq!(
        (s.folios[f].order(), used(&s), s.vm.thp_underused_split_page),
        (9, 512, 0)
    );
    // 510: 509 zero-filled pages are more than 510? No; 511 would be.
    let (s, _, f) = thp_written(ThpKernel::V6_12, 510, None, &THREE);
    assert!(!s.thp_underused(f));
    let (s, _, f) = thp_written(ThpKernel::V6_12, 510, None, &[0]);
    assert!(s.thp_underused(f));
    // All 512 zero-filled (a read fault allocates without machine.zero_page):
    // more than 511, yet the early return says not underused.
    let mut s = thp_machine(8192, None, pmd_thp(ThpKernel::V6_12, 511));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    read(&mut s, vma, 0);
    let f = s.vmas[vma as usize].pte(0) & PTE_FOLIO_MASK;
    assert_eq!(s.folios[f].order(), 9);
    assert!(!s.thp_underused(f));
}

#[test]
fn shrink_underused_off_queues_nothing_at_the_fault() {
    let mut thp = pmd_thp(ThpKernel::V6_12, 409);
    thp.shrink_underused = false;
    let mut s = thp_machine(8192, None, thp);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    write(&mut s, vma, 0);
    assert_eq!(queued(&s), 0);
    assert_eq!(s.shrink_slab_deferred_split(0, 0), 0);
    assert_eq!(used(&s), 512);
}

#[test]
fn v6_8_queues_no_whole_thp_and_keeps_every_page_of_a_split() {
    let (mut s, vma, f) = thp_written(ThpKernel::V6_8, 409, Some(64), &first(62));
    assert_eq!(queued(&s), 0);
    assert_eq!(s.shrink_slab_deferred_split(0, 0), 0);
    assert_eq!((s.folios[f].order(), used(&s)), (9, 512));
    // A split by reclaim keeps all 512 pages mapped, each swapped out.
    isolate(&mut s, f);
    let mut tails = Vec::new();
    assert!(!s.add_to_swap_large(f, &mut tails));
    assert_eq!((s.vm.thp_split_page, tails.len()), (1, 511));
    assert_eq!(zero_ptes(&s, vma), 0);
    assert!(tails.iter().all(|&t| s.folios[t].mapcount == 1));
}

#[test]
fn after_a_fork_a_fresh_thps_later_stores_are_hits_and_a_shared_thps_are_faults() {
    // A THP of the parent, pages 0 and 100 stored before the fork.
    let (mut s, shared, f) = thp_written(ThpKernel::V6_12, 511, None, &[0, 100]);
    let t = s.vmas[shared as usize].task;
    s.fork_task(t).unwrap();
    // copy_page_range write-protects every PTE of the shared THP; the data
    // of the two stored pages moves from their dirty PTEs to their bits,
    // the 510 others stay zero-filled.
    let head = s.folios.head_pfn(f);
    let data = (0..512)
        .filter(|&i| s.thp.content.test(head + i))
        .collect::<Vec<_>>();
    assert_eq!(data, [0, 100]);
    // A store to a page not yet stored to is a write-protect fault that
    // copies it (order 0): the shared page stays zero-filled.
    let base = s.vm.pgfault;
    write(&mut s, shared, 300);
    assert_eq!(s.vm.pgfault, base + 1);
    assert_ne!(s.vmas[shared as usize].pte(300) & PTE_FOLIO_MASK, f);
    assert_eq!(s.fork_stats().cow_copies, 1);
    assert!(s.page_zero_filled(f, 300));
    assert!(!s.thp.content.test(head + 300));
    // A THP faulted after the fork: one fault, then two hits.
    let vma = s.mmap_anon(t, 512).unwrap();
    let base = s.vm.pgfault;
    let hits = s.acc.hits;
    for i in THREE {
        write(&mut s, vma, i);
    }
    let g = s.vmas[vma as usize].pte(0) & PTE_FOLIO_MASK;
    assert_eq!(s.folios[g].order(), 9);
    assert_eq!((s.vm.pgfault - base, s.acc.hits - hits), (1, 2));
    s.check_invariants().unwrap();
}

/// [`thp_written`] with pages [`THREE`] stored, then forked: (machine,
/// parent VMA, child VMA, THP).
fn thp_forked(max_ptes_none: u32, swap: Option<u64>) -> (Sim, u32, u32, FolioId) {
    let (mut s, vma, f) = thp_written(ThpKernel::V6_12, max_ptes_none, swap, &THREE);
    let t = s.vmas[vma as usize].task;
    let c = s.fork_task(t).unwrap();
    let cvma = s.task_vmas(c).unwrap()[0];
    assert_eq!(s.folios[f].mapcount, 255, "512 PTEs, saturated");
    (s, vma, cvma, f)
}

#[test]
fn the_shrinker_maps_a_forked_thps_zero_filled_pages_to_the_zero_page_in_both_tasks() {
    // v6.12 remove_migration_ptes walks every VMA of the anon_vma, and
    // try_to_map_unused_to_zeropage tests the page, not its mapcount.
    let (mut s, vma, cvma, f) = thp_forked(409, None);
    assert!(s.thp_underused(f));
    assert_eq!(s.deferred_split_scan(0, 1), (1, false));
    assert_eq!(s.vm.thp_underused_split_page, 1);
    assert_eq!((zero_ptes(&s, vma), zero_ptes(&s, cvma)), (509, 509));
    // The 509 pages are freed; the three written ones stay, each mapped
    // by both tasks.
    assert_eq!(used(&s), 3);
    for i in THREE {
        let p = s.vmas[vma as usize].pte(i);
        let g = p & PTE_FOLIO_MASK;
        assert!(p & PTE_PRESENT != 0 && g != s.zero_folio);
        assert_eq!(s.vmas[cvma as usize].pte(i) & PTE_FOLIO_MASK, g);
        assert_eq!((s.folios[g].order(), s.folios[g].mapcount), (0, 2));
    }
    let (pt, ct) = (s.vmas[vma as usize].task, s.vmas[cvma as usize].task);
    assert_eq!(s.mm_counters(pt).unwrap().anon, 3);
    assert_eq!(s.mm_counters(ct).unwrap().anon, 3);
    s.check_invariants().unwrap();
}

#[test]
fn reclaim_swaps_out_a_forked_thp_whole_zero_filled_pages_included() {
    // v6.12 shrink_folio_list splits only a partially mapped large folio
    // before add_to_swap; one shared by fork gets 512 slots whole, so no
    // split maps its 509 zero-filled pages to the zero page: all 512 are
    // written and every PTE of both tasks becomes its page's entry.
    let (mut s, vma, cvma, f) = thp_forked(511, Some(1024));
    assert_eq!(super::filefolio::reclaim_one(&mut s, f).0, 512);
    assert_eq!((s.vm.thp_split_page, s.vm.thp_swpout), (0, 1));
    assert_eq!(s.vm.pswpout, 512);
    assert_eq!((zero_ptes(&s, vma), zero_ptes(&s, cvma)), (0, 0));
    assert_eq!(used(&s), 0);
    for i in 0..512 {
        let p = s.vmas[vma as usize].pte(i);
        assert_eq!(p, i + 1, "page {i}: the entry of slot {i}");
        assert_eq!(s.vmas[cvma as usize].pte(i), p);
        assert_eq!(s.fork_swap_refs(i), 2);
    }
    assert_eq!(s.swap.as_ref().unwrap().used, 512);
    s.check_invariants().unwrap();
}

#[test]
fn a_forked_thp_whose_parent_vma_is_mlocked_keeps_every_page_in_both_tasks() {
    // folio_test_mlocked(folio): the parent's VM_LOCKED mlocked the folio,
    // so the child's mapping (VM_LOCKED is not inherited) keeps it too.
    let (mut s, vma, cvma, f) = thp_forked(409, None);
    s.vmas[vma as usize].locked = true;
    assert_eq!(s.deferred_split_scan(0, 1), (1, false));
    assert_eq!(s.folios[f].order(), 0);
    assert_eq!((zero_ptes(&s, vma), zero_ptes(&s, cvma)), (0, 0));
    assert_eq!(used(&s), 512);
    for i in [1, 200, 511] {
        let g = s.vmas[vma as usize].pte(i) & PTE_FOLIO_MASK;
        assert_eq!(s.vmas[cvma as usize].pte(i) & PTE_FOLIO_MASK, g);
        assert_eq!(s.folios[g].mapcount, 2);
    }
}

#[test]
fn under_swap_zero_pages_a_read_faulted_thps_first_store_is_a_write_protect_fault() {
    use crate::config::SwapZeroPages;
    let mut s =
        super::thp::thp_machine_with(8192, Some(4096), pmd_thp(ThpKernel::V6_12, 511), |c| {
            c.swap_zero_pages = SwapZeroPages::Zeromap
        });
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    read(&mut s, vma, 0);
    let f = s.vmas[vma as usize].pte(0) & PTE_FOLIO_MASK;
    assert_eq!(s.folios[f].order(), 9);
    assert_eq!(s.vm.pgfault, 1);
    // mmsim allocated the THP at the read and write-protected its PTEs:
    // each first store is a fault (do_wp_page), the second store a hit.
    write(&mut s, vma, 0);
    write(&mut s, vma, 100);
    assert_eq!(s.vm.pgfault, 3);
    let hits = s.acc.hits;
    write(&mut s, vma, 100);
    assert_eq!((s.vm.pgfault, s.acc.hits - hits), (3, 1));
    assert!(s.folios[f].test(flags::NONZERO));
    s.check_invariants().unwrap();
}

/// `migrate_folio_move` of THP `f` (taken off its LRU list) to a free
/// PMD block, as `migrate_pages` does it; returns the destination.
fn migrate_thp(s: &mut Sim, f: FolioId) -> FolioId {
    isolate(s, f);
    let target = s
        .phys
        .zone
        .alloc_pages(9, crate::page_alloc::MigrateType::Movable)
        .unwrap();
    let old = u64::from(s.folios.head_pfn(f));
    s.phys.set_frames_folio(old, 9, crate::mem::folio::NIL);
    let dst = s.migrate_folio_move(f, target);
    s.phys.free_block(old, 9);
    dst
}

#[test]
fn a_migrated_thps_destination_is_queued_again_as_its_source_was() {
    // Queued whole at its fault: the destination is queued whole.
    let (mut s, _, f) = thp_written(ThpKernel::V6_12, 511, None, &THREE);
    let d = migrate_thp(&mut s, f);
    assert_ne!(d, f);
    assert_eq!(queued(&s), 1);
    assert!(s.folios[d].test(flags::DEFERRED_QUEUED));
    assert!(!s.folios[d].test(flags::PARTIALLY_MAPPED));
    assert!(!s.folios[f].test(flags::DEFERRED_QUEUED));
    assert_eq!(s.vm.thp_deferred_split_page, 0);
    // The content bits moved with it (`folio_copy`).
    let written = (0..512)
        .filter(|&i| !s.page_zero_filled(d, i))
        .collect::<Vec<_>>();
    assert_eq!(written, THREE);
    // Partially mapped: the destination is too, and counted again.
    let (mut s, _, f) = thp_written(ThpKernel::V6_12, 511, None, &THREE);
    s.deferred_split_folio(f);
    assert_eq!(s.vm.thp_deferred_split_page, 1);
    let d = migrate_thp(&mut s, f);
    assert_eq!(queued(&s), 1);
    assert!(s.folios[d].test(flags::DEFERRED_QUEUED));
    assert!(s.folios[d].test(flags::PARTIALLY_MAPPED));
    assert_eq!(s.vm.thp_deferred_split_page, 2);
}

/// `Sim::check_invariants` on zero-page PTEs (`crate::pte_invariants`): a
/// zero-page PTE is read-only (clean) and the zero page has no mapcount;
/// an anonymous folio's mapcount is its present PTEs.
#[test]
fn the_invariants_catch_a_dirty_zero_page_pte_a_mapped_zero_page_and_a_wrong_mapcount() {
    let (mut s, vma, _) = thp_written(ThpKernel::V6_12, 409, None, &THREE);
    assert_eq!(s.deferred_split_scan(0, 1), (1, false));
    s.check_invariants().unwrap();
    let v = vma as usize;
    let p = s.vmas[v].pte(1);
    assert_eq!(p & PTE_FOLIO_MASK, s.zero_folio);
    *s.vmas[v].pte_mut(1) = p | crate::mem::pagetable::PTE_DIRTY;
    assert_eq!(
        s.check_invariants().unwrap_err(),
        format!("VMA {vma} page 1: a dirty PTE maps the zero page")
    );
    *s.vmas[v].pte_mut(1) = p;
    // Each field of the zero page broken in turn, then restored.
    let z = s.zero_folio;
    type Break = fn(&mut crate::mem::folio::FolioArena, FolioId, bool);
    let broken: [(Break, &str); 4] = [
        (
            |a, f, b| a[f].mapcount = u8::from(b),
            "mapcount 1, list 255, swap 0, order 0",
        ),
        (
            |a, f, b| a.set_lru(f, if b { 0 } else { crate::mem::folio::NO_LIST }),
            "mapcount 0, list 0, swap 0, order 0",
        ),
        (
            |a, f, b| a[f].swap = if b { 7 } else { 0 },
            "mapcount 0, list 255, swap 7, order 0",
        ),
        (
            // The order is folded into the head PFN's word, which the
            // zero page's odd frame cannot hold at order 1: the frame goes
            // while the order is broken and comes back with order 0.
            |a, f, b| {
                if b {
                    a.set_head_pfn(f, crate::mem::folio::NO_PFN);
                    a[f].set_order(1);
                } else {
                    a[f].set_order(0);
                    a.set_head_pfn(f, crate::page_alloc::ZERO_PAGE_PFN);
                }
            },
            "mapcount 0, list 255, swap 0, order 1",
        ),
    ];
    for (set, fields) in broken {
        set(&mut s.folios, z, true);
        assert_eq!(
            s.check_invariants().unwrap_err(),
            format!("zero page {z}: {fields}")
        );
        set(&mut s.folios, z, false);
    }
    let g = s.vmas[v].pte(100) & PTE_FOLIO_MASK;
    s.folios[g].mapcount = 2;
    assert_eq!(
        s.check_invariants().unwrap_err(),
        format!("anonymous folio {g} (order 0): mapcount 2 but 1 PTEs map it")
    );
    s.folios[g].mapcount = 1;
    s.check_invariants().unwrap();
    // A file VMA mapping the zero page (`do_read_fault` maps the page
    // cache's folio, never the zero page).
    let t = s.vmas[v].task;
    let file = s.add_file("f", 4).unwrap();
    let fv = s.mmap_file(t, file, 0, 4, false).unwrap();
    *s.vmas[fv as usize].pte_mut(2) = p;
    assert_eq!(
        s.check_invariants().unwrap_err(),
        format!("file VMA {fv} page 2 maps the zero page")
    );
    *s.vmas[fv as usize].pte_mut(2) = 0;
    s.check_invariants().unwrap();
}
