//! Rule tests of `fork()` and copy-on-write of anonymous memory
//! (`crate::fork`, v6.12; the RFC v2 of seed 003 for large folios): what
//! fork shares, which store copies and which reuses, swap slots shared by
//! two tasks, reclaim and exit with two mappings per folio.

use super::*;
use crate::huge_memory::{ThpConfig, ThpKernel, ThpSizeConfig, ThpSizeEnabled};
use crate::mem::pagetable::{PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG};
use crate::MmCounters;
use std::collections::HashMap;

fn access(s: &mut Sim, vma: u32, index: u32, write: bool) {
    s.step(&Event::Access { vma, index, write });
}

fn pte(s: &Sim, vma: u32, index: u32) -> u32 {
    s.vmas[vma as usize].pte(index)
}

fn pte_folio(s: &Sim, vma: u32, index: u32) -> FolioId {
    let p = pte(s, vma, index);
    assert!(p & PTE_PRESENT != 0, "page {index} not present");
    p & PTE_FOLIO_MASK
}

fn rss(s: &Sim, t: u32) -> (u64, u64) {
    let MmCounters { anon, swap, .. } = s.mm_counters(t).unwrap();
    (anon, swap)
}

/// memory.stat `anon` of the root group, in pages.
fn anon(s: &Sim) -> u64 {
    s.memcg_report(0).anon
}

/// Every live task's PTEs against the folios and slots: an anonymous
/// folio's mapcount is the PTEs mapping it, a slot with more than one swap
/// PTE has that count, and the sim's own invariants hold.
fn check(s: &Sim) {
    let mut maps: HashMap<FolioId, u32> = HashMap::new();
    let mut slots: HashMap<u32, u32> = HashMap::new();
    for t in s.tasks.iter().filter(|t| !t.dead) {
        for &v in &t.vmas {
            for &p in &s.vmas[v as usize].ptes {
                if p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK != s.zero_folio {
                    *maps.entry(p & PTE_FOLIO_MASK).or_default() += 1;
                } else if p != 0 && p & PTE_PRESENT == 0 {
                    *slots.entry(p - 1).or_default() += 1;
                }
            }
        }
    }
    for (&f, &n) in &maps {
        if !s.folios[f].is_file() {
            assert_eq!(u32::from(s.folios[f].mapcount), n.min(255), "folio {f}");
        }
    }
    for (&slot, &n) in &slots {
        if n > 1 {
            assert_eq!(s.fork_swap_refs(slot), n, "slot {slot}");
        }
    }
    s.check_invariants().unwrap();
}

/// A task whose `pages`-page anonymous VMA was written page by page, and
/// its forked child: (parent task, parent VMA, child task, child VMA).
fn forked(s: &mut Sim, pages: u32) -> (u32, u32, u32, u32) {
    let t = s.add_task("p");
    let vma = s.mmap_anon(t, u64::from(pages)).unwrap();
    for i in 0..pages {
        access(s, vma, i, true);
    }
    let c = s.fork_task(t).unwrap();
    let cvma = s.task_vmas(c).unwrap()[0];
    (t, vma, c, cvma)
}

/// Swaps out folio `f` (alone in its batch) as reclaim's `shrink_folio_list` does,
/// ignoring references; returns the pages reclaimed.
fn swap_out(s: &mut Sim, f: FolioId) -> u64 {
    super::filefolio::reclaim_one(s, f).0
}

#[test]
fn fork_shares_every_page_write_protected_and_charges_nothing() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let (t, vma, c, cvma) = forked(&mut s, 8);
    assert_eq!((s.vm.pgfault, anon(&s)), (8, 8));
    for i in 0..8 {
        let f = pte_folio(&s, vma, i);
        assert_eq!(pte_folio(&s, cvma, i), f);
        assert_eq!(s.folios[f].mapcount, 2);
        // Both write-protected (clean); the child's old, the parent's young.
        assert_eq!(pte(&s, vma, i) & (PTE_DIRTY | PTE_YOUNG), PTE_YOUNG);
        assert_eq!(pte(&s, cvma, i) & (PTE_DIRTY | PTE_YOUNG), 0);
    }
    assert_eq!(s.task_memcg(c), s.task_memcg(t));
    assert_eq!((rss(&s, t), rss(&s, c)), ((8, 0), (8, 0)));
    assert_eq!(s.fork_stats().forks, 1);
    check(&s);
}

#[test]
fn a_child_store_copies_one_page_and_the_parent_then_reuses_its_own() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let (t, vma, c, cvma) = forked(&mut s, 8);
    let old = pte_folio(&s, vma, 3);
    access(&mut s, cvma, 3, true);
    // One fault, one order-0 copy charged to the group, mapped young and dirty.
    assert_eq!(s.vm.pgfault, 9);
    let copy = pte_folio(&s, cvma, 3);
    assert_ne!(copy, old);
    assert_eq!(s.folios[copy].order(), 0);
    assert_eq!(s.folios[copy].mapcount, 1);
    assert_eq!((s.folios[copy].space, s.folios[copy].index), (cvma, 3));
    assert_eq!(
        pte(&s, cvma, 3) & (PTE_DIRTY | PTE_YOUNG),
        PTE_DIRTY | PTE_YOUNG
    );
    assert_eq!(s.folios[old].mapcount, 1);
    assert_eq!(anon(&s), 9);
    let st = s.fork_stats();
    assert_eq!(
        (st.cow_copies, st.cow_copied_pages, st.cow_reuses),
        (1, 1, 0)
    );
    // The parent's store: a fault that reuses the folio (mapcount 1).
    access(&mut s, vma, 3, true);
    assert_eq!(s.vm.pgfault, 10);
    assert_eq!(pte_folio(&s, vma, 3), old);
    assert_eq!(pte(&s, vma, 3) & PTE_DIRTY, PTE_DIRTY);
    let st = s.fork_stats();
    assert_eq!((st.cow_copies, st.cow_reuses), (1, 1));
    // The next store hits.
    access(&mut s, vma, 3, true);
    assert_eq!(s.vm.pgfault, 10);
    assert_eq!(anon(&s), 9);
    assert_eq!((rss(&s, t), rss(&s, c)), ((8, 0), (8, 0)));
    check(&s);
}

#[test]
fn loads_by_both_tasks_after_fork_copy_nothing() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let (_, vma, _, cvma) = forked(&mut s, 8);
    for i in 0..8 {
        access(&mut s, vma, i, false);
        access(&mut s, cvma, i, false);
    }
    assert_eq!(s.vm.pgfault, 8);
    assert_eq!(anon(&s), 8);
    assert_eq!(s.fork_stats().cow_copies, 0);
    check(&s);
}

#[test]
fn a_child_exit_frees_its_copies_and_returns_the_rest_to_exclusive() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let (t, vma, c, cvma) = forked(&mut s, 8);
    access(&mut s, cvma, 0, true);
    access(&mut s, cvma, 1, true);
    assert_eq!(anon(&s), 10);
    s.exit_task(c).unwrap();
    assert_eq!(anon(&s), 8);
    for i in 0..8 {
        assert_eq!(s.folios[pte_folio(&s, vma, i)].mapcount, 1);
    }
    // Every store of the parent faults once and reuses: no copy.
    for i in 0..8 {
        access(&mut s, vma, i, true);
    }
    let st = s.fork_stats();
    assert_eq!((st.cow_copies, st.cow_reuses), (2, 8));
    assert_eq!(s.vm.pgfault, 8 + 2 + 8);
    assert_eq!(anon(&s), 8);
    assert_eq!(rss(&s, t), (8, 0));
    check(&s);
}

#[test]
fn reclaim_unmaps_a_shared_page_from_both_tasks_into_one_slot() {
    let mut s = machine(PolicyName::Cost, 4096, Some(1024));
    let (t, vma, c, cvma) = forked(&mut s, 4);
    let f = pte_folio(&s, vma, 0);
    assert_eq!(swap_out(&mut s, f), 1);
    // Both PTEs are the same swap entry; the slot counts two.
    let p = pte(&s, vma, 0);
    assert!(p != 0 && p & PTE_PRESENT == 0);
    assert_eq!(pte(&s, cvma, 0), p);
    assert_eq!(s.fork_swap_refs(p - 1), 2);
    assert_eq!(s.memcgs[0].swap_usage, 1);
    assert_eq!((rss(&s, t), rss(&s, c)), ((3, 1), (3, 1)));
    check(&s);
    // The parent's load maps the swap-cache folio read-only; the slot stays
    // (the child's entry), even on zram.
    access(&mut s, vma, 0, false);
    let back = pte_folio(&s, vma, 0);
    assert_eq!(pte(&s, vma, 0) & PTE_DIRTY, 0);
    assert_eq!(s.folios[back].mapcount, 1);
    assert!(s.folios[back].test(flags::SWAPCACHE));
    assert_eq!(s.memcgs[0].swap_usage, 1);
    check(&s);
    // The child's store finds it in the swap cache, maps it and copies at
    // once: one fault, a minor one.
    let (faults, major) = (s.vm.pgfault, s.vm.pgmajfault);
    access(&mut s, cvma, 0, true);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (faults + 1, major));
    let copy = pte_folio(&s, cvma, 0);
    assert_ne!(copy, back);
    assert_eq!(s.folios[back].mapcount, 1);
    assert_eq!(s.fork_stats().cow_copies, 1);
    // No swap PTE is left: the parent's store frees the slot and reuses.
    access(&mut s, vma, 0, true);
    assert_eq!(pte_folio(&s, vma, 0), back);
    assert!(!s.folios[back].test(flags::SWAPCACHE));
    assert_eq!(s.memcgs[0].swap_usage, 0);
    assert_eq!(s.fork_stats().cow_copies, 1);
    check(&s);
}

#[test]
fn a_swap_entry_duplicated_by_fork_is_freed_only_after_both_drop_it() {
    let mut s = machine(PolicyName::Cost, 4096, Some(1024));
    let t = s.add_task("p");
    let vma = s.mmap_anon(t, 4).unwrap();
    for i in 0..4 {
        access(&mut s, vma, i, true);
    }
    let f = pte_folio(&s, vma, 2);
    assert_eq!(swap_out(&mut s, f), 1);
    let entry = pte(&s, vma, 2);
    assert_eq!(s.memcgs[0].swap_usage, 1);
    let c = s.fork_task(t).unwrap();
    let cvma = s.task_vmas(c).unwrap()[0];
    // swap_duplicate(): one slot, two swap PTEs, no new charge.
    assert_eq!(pte(&s, cvma, 2), entry);
    assert_eq!(s.fork_swap_refs(entry - 1), 2);
    assert_eq!(s.memcgs[0].swap_usage, 1);
    assert_eq!(rss(&s, c), (3, 1));
    check(&s);
    s.exit_task(t).unwrap();
    assert_eq!(s.memcgs[0].swap_usage, 1);
    assert_eq!(anon(&s), 3);
    check(&s);
    // The child's store: its slot is its own now, read back and reused.
    access(&mut s, cvma, 2, true);
    assert_eq!(s.fork_stats().cow_copies, 0);
    assert_eq!(s.memcgs[0].swap_usage, 0);
    assert_eq!(anon(&s), 4);
    s.exit_task(c).unwrap();
    assert_eq!((anon(&s), s.memcgs[0].swap_usage), (0, 0));
    check(&s);
}

#[test]
fn a_parent_exit_leaves_the_child_its_swap_slot() {
    let mut s = machine(PolicyName::Cost, 4096, Some(1024));
    let (t, vma, c, cvma) = forked(&mut s, 2);
    let f = pte_folio(&s, vma, 1);
    swap_out(&mut s, f);
    // The parent reads its page back (the slot is still the child's too),
    // then exits: the unmapped folio stays in the swap cache.
    access(&mut s, vma, 1, false);
    s.exit_task(t).unwrap();
    assert_eq!(s.memcgs[0].swap_usage, 1);
    check(&s);
    // The child's load is a swap-cache hit; its last reference.
    let major = s.vm.pgmajfault;
    access(&mut s, cvma, 1, false);
    assert_eq!(s.vm.pgmajfault, major);
    assert_eq!(rss(&s, c), (2, 0));
    check(&s);
}

/// 64K mTHP under `kernel`: (sim, parent VMA, child, child VMA) after the
/// parent wrote page 0 (one order-4 folio over pages 0-15) and forked.
fn forked_64k(kernel: ThpKernel) -> (Sim, u32, u32, u32) {
    let thp = ThpConfig {
        kernel,
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    };
    let thp = if kernel == ThpKernel::RfcV2 {
        ThpConfig {
            kernel,
            arch_order: 4,
            ..Default::default()
        }
    } else {
        thp
    };
    let mut s = super::thp::thp_machine(8192, None, thp);
    let t = s.add_task("p");
    let vma = s.mmap_anon(t, 32).unwrap();
    access(&mut s, vma, 0, true);
    assert_eq!(s.folios[pte_folio(&s, vma, 0)].order(), 4);
    let c = s.fork_task(t).unwrap();
    let cvma = s.task_vmas(c).unwrap()[0];
    (s, vma, c, cvma)
}

#[test]
fn v6_12_copies_a_page_of_a_shared_large_folio_at_order_0_even_when_exclusive_again() {
    let (mut s, vma, c, cvma) = forked_64k(ThpKernel::V6_12);
    let big = pte_folio(&s, vma, 0);
    assert_eq!(s.folios[big].mapcount, 32);
    access(&mut s, cvma, 5, true);
    let copy = pte_folio(&s, cvma, 5);
    assert_eq!(s.folios[copy].order(), 0);
    assert_eq!(s.folios[big].mapcount, 31);
    assert_eq!(anon(&s), 17);
    // The parent's store to the same page copies too (a large folio is never
    // reused in v6.12); page 5 of the folio is now mapped by nobody.
    access(&mut s, vma, 5, true);
    assert_ne!(pte_folio(&s, vma, 5), big);
    assert_eq!(s.folios[big].mapcount, 30);
    assert!(s.folios[big].test(flags::PARTIALLY_MAPPED));
    check(&s);
    // After the child exits the parent maps it alone, yet it still copies.
    s.exit_task(c).unwrap();
    assert_eq!(s.folios[big].mapcount, 15);
    access(&mut s, vma, 6, true);
    assert_eq!(s.folios[pte_folio(&s, vma, 6)].order(), 0);
    let st = s.fork_stats();
    assert_eq!(
        (st.cow_copies, st.cow_copied_pages, st.cow_reuses),
        (3, 3, 0)
    );
    assert_eq!(s.folios[big].mapcount, 14);
    check(&s);
}

#[test]
fn the_rfc_copies_a_shared_large_folio_at_its_order_and_reuses_the_rest_whole() {
    let (mut s, vma, _, cvma) = forked_64k(ThpKernel::RfcV2);
    let big = pte_folio(&s, vma, 0);
    access(&mut s, cvma, 5, true);
    // The child's copy takes the source's order over the whole block.
    let copy = pte_folio(&s, cvma, 5);
    assert_eq!(s.folios[copy].order(), 4);
    assert_eq!((s.folios[copy].space, s.folios[copy].index), (cvma, 0));
    for i in 0..16 {
        assert_eq!(pte_folio(&s, cvma, i), copy);
        assert_eq!(
            pte(&s, cvma, i) & (PTE_DIRTY | PTE_YOUNG),
            PTE_DIRTY | PTE_YOUNG
        );
    }
    assert_eq!(s.folios[big].mapcount, 16);
    assert_eq!(anon(&s), 32);
    let st = s.fork_stats();
    assert_eq!((st.cow_copies, st.cow_copied_pages), (1, 16));
    // The parent maps all of the old folio: one fault reuses the whole range.
    let faults = s.vm.pgfault;
    access(&mut s, vma, 5, true);
    access(&mut s, vma, 9, true);
    assert_eq!(s.vm.pgfault, faults + 1);
    assert_eq!(pte_folio(&s, vma, 9), big);
    assert_eq!(s.fork_stats().cow_reuses, 1);
    check(&s);
}

/// A zram machine with 64K mTHP (v6.12) whose task stored to all 16 pages
/// of a 16-page VMA (one order-4 folio, `dup_mmap` then mapping it in both
/// tasks: mapcount 32) and forked: (sim, parent, VMA, child, the folio).
fn stored_and_forked_64k_zram() -> (Sim, u32, u32, u32, FolioId) {
    let thp = ThpConfig {
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    };
    let mut s = super::thp::thp_machine(8192, Some(1024), thp);
    let t = s.add_task("p");
    let vma = s.mmap_anon(t, 16).unwrap();
    for i in 0..16 {
        access(&mut s, vma, i, true);
    }
    let c = s.fork_task(t).unwrap();
    let big = pte_folio(&s, vma, 0);
    assert_eq!((s.folios[big].order(), s.folios[big].mapcount), (4, 32));
    (s, t, vma, c, big)
}

/// [`stored_and_forked_64k_zram`] whose shared folio reclaim then swapped out whole: (sim,
/// parent, VMA, child, child VMA).
fn shared_64k_swapped_whole() -> (Sim, u32, u32, u32, u32) {
    let (mut s, t, vma, c, big) = stored_and_forked_64k_zram();
    let cvma = s.task_vmas(c).unwrap()[0];
    // v6.12 shrink_folio_list: not partially mapped, so add_to_swap takes
    // 16 slots for the whole folio; try_to_unmap's rmap walk turns every
    // PTE of both tasks into its page's entry (`swap_duplicate` per PTE).
    assert_eq!(swap_out(&mut s, big), 16);
    let st = s.thp.stats[4];
    assert_eq!((st.swpout, st.swpout_fallback, st.split), (1, 0, 0));
    (s, t, vma, c, cvma)
}

#[test]
fn a_shared_large_folio_is_swapped_out_whole_from_both_tasks() {
    let (mut s, t, vma, c, cvma) = shared_64k_swapped_whole();
    assert_eq!((s.vm.pswpout, s.vm.thp_split_page), (16, 0));
    for i in 0..16 {
        // Slots 0..16 in order, the same entry in both tasks, counted twice
        // (neither entry exclusive: fork cleared PageAnonExclusive).
        assert_eq!(pte(&s, vma, i), i + 1, "page {i}");
        assert_eq!(pte(&s, cvma, i), i + 1, "page {i}");
        assert_eq!(s.fork_swap_refs(i), 2);
    }
    assert_eq!((anon(&s), s.memcgs[0].swap_usage), (0, 16));
    assert_eq!((rss(&s, t), rss(&s, c)), ((0, 16), (0, 16)));
    check(&s);
    // The parent's load: `__swap_count(entry)` is 2, so no large swap-in;
    // the swap cache's order-0 path reads page 5 and maps it read-only.
    let (faults, major) = (s.vm.pgfault, s.vm.pgmajfault);
    access(&mut s, vma, 5, false);
    let p5 = pte_folio(&s, vma, 5);
    assert_eq!(s.folios[p5].order(), 0);
    assert_eq!((s.vm.pswpin, s.thp.stats[4].swpin), (1, 0));
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (faults + 1, major + 1));
    assert_eq!(pte(&s, vma, 5) & PTE_DIRTY, 0);
    assert_eq!((s.fork_swap_refs(5), pte(&s, cvma, 5)), (1, 6));
    assert!(s.folios[p5].test(flags::SWAPCACHE));
    // The child's load of the same page is a swap-cache hit: its last
    // reference maps the same folio, still read-only (the parent maps it).
    access(&mut s, cvma, 5, false);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (faults + 2, major + 1));
    assert_eq!(pte_folio(&s, cvma, 5), p5);
    assert_eq!(pte(&s, cvma, 5) & PTE_DIRTY, 0);
    assert_eq!((s.fork_swap_refs(5), s.folios[p5].mapcount), (0, 2));
    assert_eq!((rss(&s, t), rss(&s, c)), ((1, 15), (1, 15)));
    check(&s);
    // The child's exit drops one count of each slot it still held and
    // unmaps page 5; the parent keeps all 16 slots (15 entries, and the
    // swap cache's page 5 it maps).
    s.exit_task(c).unwrap();
    for i in (0..16).filter(|&i| i != 5) {
        assert_eq!(s.fork_swap_refs(i), 1, "slot {i}");
        assert_eq!(pte(&s, vma, i), i + 1);
    }
    assert_eq!(s.folios[p5].mapcount, 1);
    assert_eq!((anon(&s), s.memcgs[0].swap_usage), (1, 16));
    check(&s);
    s.exit_task(t).unwrap();
    assert_eq!((anon(&s), s.memcgs[0].swap_usage), (0, 0));
    check(&s);
}

#[test]
fn a_shared_folio_swapped_out_whole_is_read_back_whole_once_the_child_exited() {
    let (mut s, t, vma, c, _) = shared_64k_swapped_whole();
    s.exit_task(c).unwrap();
    // One count left per slot, none exclusive, all alike (`can_swapin_thp`):
    // the parent's store reads the 16 pages back as one folio.
    for i in 0..16 {
        assert_eq!(s.fork_swap_refs(i), 1);
    }
    assert_eq!(s.memcgs[0].swap_usage, 16);
    access(&mut s, vma, 5, true);
    let f = pte_folio(&s, vma, 5);
    assert_eq!((s.folios[f].order(), s.folios[f].index), (4, 0));
    assert_eq!((s.vm.pswpin, s.thp.stats[4].swpin), (16, 1));
    assert_eq!((anon(&s), s.memcgs[0].swap_usage), (16, 0));
    assert_eq!(rss(&s, t), (16, 0));
    assert!(!s.folio_anon_shared(f));
    assert_eq!(pte(&s, vma, 5) & PTE_DIRTY, PTE_DIRTY);
    assert_eq!(s.fork_stats().cow_copies, 0);
    check(&s);
}

/// The review's case: the child's exit leaves every page of the parent's
/// 64K folio mapped once, so no page's mapcount fell to -1 and v6.12
/// `__folio_remove_rmap` queues no deferred split; reclaim then swaps the
/// folio out whole (not partially mapped), one count per entry.
#[test]
fn a_large_folio_whose_child_exited_is_not_queued_and_swaps_out_whole() {
    let (mut s, t, vma, c, big) = stored_and_forked_64k_zram();
    s.exit_task(c).unwrap();
    assert_eq!(s.folios[big].mapcount, 16);
    assert_eq!(s.thp.stats[4].split_deferred, 0);
    assert_eq!(swap_out(&mut s, big), 16);
    let st = s.thp.stats[4];
    assert_eq!((st.swpout, st.split, st.split_deferred), (1, 0, 0));
    assert_eq!((s.vm.pswpout, s.vm.thp_split_page), (16, 0));
    for i in 0..16 {
        // One swap PTE per slot: its count is the plain one (no fork
        // tracking, `__swap_count` 1).
        assert_eq!(pte(&s, vma, i), i + 1, "page {i}");
        assert_eq!(s.fork_swap_refs(i), 0, "slot {i}");
        assert!(!s.swap_count_above_one(i), "slot {i}");
    }
    assert_eq!((anon(&s), s.memcgs[0].swap_usage), (0, 16));
    assert_eq!(rss(&s, t), (0, 16));
    check(&s);
}

#[test]
fn an_oom_kill_of_one_task_leaves_the_other_its_shared_pages() {
    let mut s = machine(PolicyName::Cost, 4096, Some(1024));
    let (t, vma, c, cvma) = forked(&mut s, 4);
    let f = pte_folio(&s, vma, 3);
    swap_out(&mut s, f);
    access(&mut s, cvma, 0, true);
    let more = s.mmap_anon(c, 4).unwrap();
    for i in 0..4 {
        access(&mut s, more, i, true);
    }
    assert!(s.out_of_memory(None));
    // The child has the larger RSS: it is the victim.
    assert!(s.tasks[c as usize].dead && !s.tasks[t as usize].dead);
    assert_eq!(anon(&s), 3);
    assert_eq!(s.memcgs[0].swap_usage, 1);
    for i in 0..3 {
        assert_eq!(s.folios[pte_folio(&s, vma, i)].mapcount, 1);
    }
    let _ = cvma;
    check(&s);
}

#[test]
fn fork_refuses_unknown_and_dead_tasks() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let e = s.fork_task(3).unwrap_err().to_string();
    assert!(e.contains("no task 3"), "{e}");
    let t = s.add_task("p");
    s.exit_task(t).unwrap();
    let e = s.fork_task(t).unwrap_err().to_string();
    assert!(e.contains("exited or was killed"), "{e}");
}

#[test]
fn a_fork_event_runs_the_child_s_stores_and_exit_in_the_task_s_time() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let t = s.add_task("p");
    let vma = s.mmap_anon(t, 8).unwrap();
    for i in 0..8 {
        access(&mut s, vma, i, true);
    }
    let before = s.clock;
    s.step(&Event::Fork { vma, pages: 3 });
    // Three copy faults by the child, whose copies went with it.
    assert_eq!(s.vm.pgfault, 11);
    let st = s.fork_stats();
    assert_eq!((st.forks, st.cow_copies), (1, 3));
    assert_eq!(anon(&s), 8);
    assert!(s.clock > before);
    assert!(s.tasks[1].exited);
    // The parent's pages are its own again: each store reuses.
    for i in 0..8 {
        access(&mut s, vma, i, true);
    }
    assert_eq!((s.vm.pgfault, s.fork_stats().cow_reuses), (19, 8));
    // Past the VMA's end the child writes what there is; a bad VMA is out of range.
    s.step(&Event::Fork { vma, pages: 100 });
    assert_eq!(s.fork_stats().cow_copies, 11);
    s.step(&Event::Fork { vma: 9, pages: 1 });
    assert_eq!(s.fork_stats().forks, 2);
    check(&s);
}

/// A 64 MiB machine whose group is limited to `limit` pages, with 4 MiB of
/// swap on `device`.
fn pressure_machine(device: DeviceKind, limit: u64) -> Sim {
    Sim::new(MachineConfig {
        memory: Size::from_pages(1 << 14),
        memcg_max: Some(Size::from_pages(limit)),
        swap: DeviceConfig {
            size: Some(Size::from_pages(1024)),
            ..DeviceConfig::of(device)
        },
        ..Default::default()
    })
    .unwrap()
}

/// Forks under memory pressure (swap-in readahead, shared entries swapped in
/// by one task, reclaim of pages both map): the mapcounts and slot counts stay
/// exact, and the last exit frees every page and slot.
#[test]
fn forks_under_pressure_keep_every_count_and_free_everything_at_exit() {
    for device in [DeviceKind::Ssd, DeviceKind::Zram] {
        let mut s = pressure_machine(device, 48);
        let t = s.add_task("p");
        let vma = s.mmap_anon(t, 64).unwrap();
        for _ in 0..2 {
            for i in 0..64 {
                access(&mut s, vma, i, true);
            }
            s.step(&Event::Fork { vma, pages: 16 });
            check(&s);
        }
        assert_eq!(s.fork_stats().cow_copies, 32, "{device:?}");
        // Slots: the parent's swap entries and the swap cache's, nothing else.
        let swap_ptes = s.vmas[vma as usize]
            .ptes
            .iter()
            .filter(|&&p| p != 0 && p & PTE_PRESENT == 0)
            .count() as u64;
        assert!(s.memcgs[0].swap_usage >= swap_ptes, "{device:?}");
        assert!(
            s.memcgs[0].swap_usage <= swap_ptes + s.nr_swapcache_folios,
            "{device:?}"
        );
        s.step(&Event::Think { ns: 1_000_000_000 });
        s.exit_task(t).unwrap();
        check(&s);
        // What stays is the swap cache's: folios whose last swap PTE went
        // while they were under writeback (`free_swap_and_cache` cannot free
        // them then; `swap_map` is left at SWAP_HAS_CACHE), one slot each,
        // mapped by nothing; reclaim frees folio and slot together.
        let cached = s.nr_swapcache_folios;
        assert_eq!(s.memcgs[0].swap_usage, cached, "{device:?}");
        assert_eq!(anon(&s), cached, "{device:?}");
        let left: Vec<FolioId> = (0..s.folios.id_end())
            .filter(|&f| s.folios.is_live(f) && s.folios[f].test(flags::SWAPCACHE))
            .collect();
        for f in left {
            assert_eq!(s.folios[f].mapcount, 0, "{device:?}");
            let (reclaimed, _) = super::filefolio::reclaim_one(&mut s, f);
            assert_eq!(reclaimed, 1, "{device:?}");
        }
        assert_eq!(
            (s.memcgs[0].swap_usage, s.nr_swapcache_folios),
            (0, 0),
            "{device:?}"
        );
        assert_eq!(anon(&s), 0, "{device:?}");
    }
}

/// A zram machine with 64K mTHP under `kernel` whose task wrote page 0 (an
/// order-4 folio over pages 0..16 of a 64-page VMA) and had it swapped out
/// whole: `in_cache` keeps the folio in the swap cache, unmapped (as a
/// swap-out under writeback would), else reclaim freed it (zram). Returns
/// (sim, task, VMA, folio).
fn swapped_64k(kernel: ThpKernel, in_cache: bool) -> (Sim, u32, u32, FolioId) {
    let thp = ThpConfig {
        kernel,
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    };
    let mut s = super::thp::thp_machine(8192, Some(1024), thp);
    let t = s.add_task("p");
    let vma = s.mmap_anon(t, 64).unwrap();
    access(&mut s, vma, 0, true);
    let f = pte_folio(&s, vma, 0);
    assert_eq!(s.folios[f].order(), 4);
    if in_cache {
        super::swapcache::unmap_into_swap_cache(&mut s, f);
    } else {
        assert_eq!(swap_out(&mut s, f), 16);
        assert_eq!(s.thp.stats[4].swpout, 1);
    }
    for i in 0..16 {
        assert_eq!(pte(&s, vma, i), i + 1, "page {i}: the entry of slot {i}");
    }
    (s, t, vma, f)
}

#[test]
fn a_large_swap_cache_folio_shared_by_fork_is_mapped_read_only_and_copied_on_a_store() {
    let (mut s, t, vma, big) = swapped_64k(ThpKernel::V6_12, true);
    let c = s.fork_task(t).unwrap();
    let cvma = s.task_vmas(c).unwrap()[0];
    for slot in 0..16 {
        assert_eq!(s.fork_swap_refs(slot), 2);
    }
    // The parent's load: a minor fault maps the whole folio (its 16
    // entries are alike), read-only and not exclusive; each slot loses
    // one count and stays (the child's entries), even on zram.
    let (faults, major) = (s.vm.pgfault, s.vm.pgmajfault);
    access(&mut s, vma, 9, false);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (faults + 1, major));
    for i in 0..16 {
        assert_eq!(pte_folio(&s, vma, i), big);
        assert_eq!(pte(&s, vma, i) & PTE_DIRTY, 0, "page {i}");
        assert_eq!(s.fork_swap_refs(i), 1);
    }
    assert_eq!(s.folios[big].mapcount, 16);
    assert!(s.folios[big].test(flags::SWAPCACHE));
    assert!(s.folio_anon_shared(big));
    assert_eq!(s.memcgs[0].swap_usage, 16);
    assert_eq!((rss(&s, t), rss(&s, c)), ((16, 0), (0, 16)));
    check(&s);
    // The child's store: its last references to the slots map the folio
    // (another task maps it: still not exclusive), and the store copies its
    // page at order 0 in the same fault.
    access(&mut s, cvma, 3, true);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (faults + 2, major));
    let copy = pte_folio(&s, cvma, 3);
    assert_ne!(copy, big);
    assert_eq!(s.folios[copy].order(), 0);
    assert_eq!(pte(&s, cvma, 3) & PTE_DIRTY, PTE_DIRTY);
    for i in (0..16).filter(|&i| i != 3) {
        assert_eq!(pte_folio(&s, cvma, i), big);
        assert_eq!(pte(&s, cvma, i) & PTE_DIRTY, 0, "page {i}");
    }
    assert_eq!(s.folios[big].mapcount, 31);
    assert_eq!(s.fork_stats().cow_copies, 1);
    // No swap PTE is left; the slots stay with the swap-cache folio.
    for i in 0..16 {
        assert_eq!(s.fork_swap_refs(i), 0);
    }
    assert!(s.folios[big].test(flags::SWAPCACHE));
    assert_eq!(s.memcgs[0].swap_usage, 16);
    check(&s);
    // The parent's store copies too (v6.12 never reuses a large folio).
    access(&mut s, vma, 9, true);
    assert_ne!(pte_folio(&s, vma, 9), big);
    assert_eq!((s.fork_stats().cow_copies, s.folios[big].mapcount), (2, 30));
    check(&s);
    // Both exit: the folio and its slots go with the last mapping.
    s.exit_task(c).unwrap();
    s.exit_task(t).unwrap();
    assert_eq!((anon(&s), s.memcgs[0].swap_usage), (0, 0));
    check(&s);
}

#[test]
fn a_large_swap_cache_folio_maps_only_the_faulting_page_where_its_entries_differ() {
    let (mut s, t, vma, big) = swapped_64k(ThpKernel::V6_12, true);
    let c = s.fork_task(t).unwrap();
    let cvma = s.task_vmas(c).unwrap()[0];
    // The child drops page 0: slot 0 keeps the parent's count.
    s.step(&Event::Discard {
        vma: cvma,
        index: 0,
        pages: 1,
    });
    assert_eq!(s.fork_swap_refs(0), 1);
    // The child's load of page 5: its block is no longer all swap entries
    // (`swap_pte_batch` fails), so page 5 alone is mapped, read-only.
    access(&mut s, cvma, 5, false);
    assert_eq!(pte_folio(&s, cvma, 5), big);
    assert_eq!(pte(&s, cvma, 5) & PTE_DIRTY, 0);
    for i in (1..16).filter(|&i| i != 5) {
        assert_eq!(pte(&s, cvma, i), i + 1, "page {i} keeps its entry");
        assert_eq!(s.fork_swap_refs(i), 2);
    }
    assert_eq!((s.fork_swap_refs(5), s.folios[big].mapcount), (1, 1));
    assert_eq!(rss(&s, c), (1, 14));
    check(&s);
    // The parent's 16 entries are alike: all mapped, each slot one count less.
    access(&mut s, vma, 0, false);
    assert_eq!(s.folios[big].mapcount, 17);
    assert_eq!((s.fork_swap_refs(0), s.fork_swap_refs(5)), (0, 0));
    assert_eq!(s.fork_swap_refs(7), 1);
    assert!(s.folios[big].test(flags::SWAPCACHE));
    assert_eq!(s.memcgs[0].swap_usage, 16);
    check(&s);
    s.exit_task(t).unwrap();
    s.exit_task(c).unwrap();
    assert_eq!((anon(&s), s.memcgs[0].swap_usage), (0, 0));
    check(&s);
}

#[test]
fn v6_13_reads_a_large_folio_back_only_for_an_entry_of_one_count() {
    // Both tasks hold the 16 entries (count 2): the swap cache's order-0 path.
    let (mut s, t, vma, _) = swapped_64k(ThpKernel::V6_13, false);
    let c = s.fork_task(t).unwrap();
    access(&mut s, vma, 5, false);
    let f = pte_folio(&s, vma, 5);
    assert_eq!(s.folios[f].order(), 0);
    assert_eq!((s.vm.pswpin, s.thp.stats[4].swpin), (1, 0));
    assert_eq!(s.fork_swap_refs(5), 1);
    check(&s);
    s.exit_task(c).unwrap();
    assert_eq!(s.memcgs[0].swap_usage, 16);
    // The child exited before touching them: count 1, not exclusive, all
    // alike; one fault reads the whole folio and frees every slot.
    let (mut s, t, vma, _) = swapped_64k(ThpKernel::V6_13, false);
    let c = s.fork_task(t).unwrap();
    s.exit_task(c).unwrap();
    for slot in 0..16 {
        assert_eq!(s.fork_swap_refs(slot), 1);
    }
    access(&mut s, vma, 5, true);
    let f = pte_folio(&s, vma, 5);
    assert_eq!((s.folios[f].order(), s.folios[f].index), (4, 0));
    assert_eq!((s.vm.pswpin, s.thp.stats[4].swpin), (16, 1));
    assert_eq!(s.memcgs[0].swap_usage, 0);
    assert!(!s.folio_anon_shared(f));
    assert_eq!(pte(&s, vma, 5) & PTE_DIRTY, PTE_DIRTY);
    for slot in 0..16 {
        assert_eq!(s.fork_swap_refs(slot), 0);
    }
    check(&s);
}

#[test]
fn v6_13_reads_no_large_folio_over_entries_with_different_exclusive_bits() {
    // Pages 0..16: swapped out whole before the fork (slots 0..16, entries
    // not exclusive once forked); the child drops its copies (count 1).
    let (mut s, t, vma, _) = swapped_64k(ThpKernel::V6_13, false);
    let c = s.fork_task(t).unwrap();
    let cvma = s.task_vmas(c).unwrap()[0];
    s.step(&Event::Discard {
        vma: cvma,
        index: 0,
        pages: 16,
    });
    // Pages 16..32: a new folio of the parent, exclusive, swapped out
    // whole after the fork (slots 16..32: exclusive entries).
    access(&mut s, vma, 16, true);
    let g = pte_folio(&s, vma, 16);
    assert_eq!((s.folios[g].order(), s.folios[g].index), (4, 16));
    assert_eq!(swap_out(&mut s, g), 16);
    for i in 16..32 {
        assert_eq!(pte(&s, vma, i), i + 1);
        assert_eq!(s.fork_swap_refs(i), 0);
    }
    // 128K allowed now: its block 0..32 is 32 consecutive entries of
    // aligned slots, but `swap_pte_batch` stops at the exclusive bit.
    s.thp.orders_plain |= 1 << 5;
    access(&mut s, vma, 20, false);
    let f = pte_folio(&s, vma, 20);
    assert_eq!((s.folios[f].order(), s.folios[f].index), (4, 16));
    assert_eq!((s.thp.stats[5].swpin, s.thp.stats[4].swpin), (0, 1));
    assert_eq!(pte(&s, vma, 0), 1, "pages 0..16 stay swapped out");
    assert_eq!(s.memcgs[0].swap_usage, 16);
    // The forked block alone is alike: read whole, its slots' last counts go.
    access(&mut s, vma, 5, false);
    let f = pte_folio(&s, vma, 5);
    assert_eq!((s.folios[f].order(), s.folios[f].index), (4, 0));
    assert_eq!(s.thp.stats[4].swpin, 2);
    assert_eq!(s.memcgs[0].swap_usage, 0);
    check(&s);
}

#[test]
fn fork_flushes_the_parent_s_tlb_once_whatever_it_copied() {
    let tlb = crate::tlb::TlbConfig {
        enabled: true,
        ..Default::default()
    };
    let mut s = super::thp::thp_machine_with(4096, None, ThpConfig::default(), |c| c.tlb = tlb);
    let t = s.add_task("p");
    let vma = s.mmap_anon(t, 8).unwrap();
    let other = s.mmap_anon(t, 100).unwrap();
    for i in 0..8 {
        access(&mut s, vma, i, true);
    }
    access(&mut s, other, 50, true);
    // Every page again: all hits in the L1 dTLB.
    for i in 0..8 {
        access(&mut s, vma, i, false);
    }
    let before = s.tlb.as_ref().unwrap().stats;
    s.fork_task(t).unwrap();
    // `dup_mmap`'s one `flush_tlb_mm`: a full flush, not 8 + 100 pages.
    let after = s.tlb.as_ref().unwrap().stats;
    assert_eq!(
        (after.nr_tlb_local_flush_all, after.nr_tlb_local_flush_one),
        (
            before.nr_tlb_local_flush_all + 1,
            before.nr_tlb_local_flush_one
        )
    );
    // The parent's next loads walk the page table again.
    access(&mut s, vma, 2, false);
    access(&mut s, other, 50, false);
    let walked = s.tlb.as_ref().unwrap().stats;
    assert_eq!(walked.dtlb_load_misses, after.dtlb_load_misses + 2);
    check(&s);
}

/// A store whose copy's charge reclaims the very page it copies: the copy
/// is dropped (`pte_same` fails), and the store faults again — through
/// `Sim::retry_fault`'s loop, not a recursion — reading the page back from
/// swap and copying it then.
#[test]
fn a_store_whose_copy_reclaimed_its_page_faults_again() {
    for device in [DeviceKind::Ssd, DeviceKind::Zram] {
        let mut s = pressure_machine(device, 32);
        let (_, vma, _, cvma) = forked(&mut s, 32);
        // Nothing referenced since: reclaim takes the oldest pages first.
        for i in 0..32 {
            s.vmas[vma as usize].ptes[i] &= !PTE_YOUNG;
        }
        let (faults, accesses) = (s.vm.pgfault, s.acc.accesses);
        access(&mut s, cvma, 0, true);
        // Two faults (the write-protect fault and its retry, a major swap
        // fault), one access, one copy.
        assert_eq!(
            (s.vm.pgfault, s.vm.pgmajfault, s.acc.accesses),
            (faults + 2, 1, accesses + 1),
            "{device:?}"
        );
        assert_eq!(s.fork_stats().cow_copies, 1, "{device:?}");
        let copy = pte_folio(&s, cvma, 0);
        assert_eq!(pte(&s, cvma, 0) & PTE_DIRTY, PTE_DIRTY, "{device:?}");
        // The parent keeps the swap entry, now its own.
        assert_eq!(pte(&s, vma, 0), 1, "{device:?}");
        assert_eq!(s.fork_swap_refs(0), 1, "{device:?}");
        assert_ne!(Some(copy), slot_folio(s.swap.as_ref().unwrap().slots[0]));
        assert!(s.fault_retry_idle(), "{device:?}");
        check(&s);
    }
}
