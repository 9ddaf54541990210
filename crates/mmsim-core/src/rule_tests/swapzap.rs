//! Rule tests of the zap of a swap PTE whose slot a swap-cache folio holds
//! (`Sim::free_swap_and_cache` → `Sim::try_to_reclaim_swap_zapped`,
//! v6.12 `free_swap_and_cache_nr` → `__try_to_reclaim_swap(TTRS_UNMAPPED |
//! TTRS_FULL)`): the folio leaves the swap cache when it is unmapped or swap
//! is over half full, and no swap PTE of any task holds another of its
//! slots; else the zapped slot stays with the folio and goes when it leaves
//! the cache. Order 0 and large, with and without fork.

use super::swapcache::swap_out_keeping_cache;
use super::thp::thp_machine_with;
use super::*;
use crate::huge_memory::{ThpConfig, ThpKernel, ThpSizeConfig, ThpSizeEnabled};
use crate::mem::pagetable::{PTE_FOLIO_MASK, PTE_PRESENT};

fn access(s: &mut Sim, vma: u32, index: u32, write: bool) {
    s.step(&Event::Access { vma, index, write });
}

fn discard(s: &mut Sim, vma: u32, index: u32, pages: u32) {
    s.step(&Event::Discard { vma, index, pages });
}

fn maps(s: &Sim, vma: u32, i: u32, f: FolioId) -> bool {
    let pte = s.vmas[vma as usize].pte(i);
    pte & PTE_PRESENT != 0 && pte & PTE_FOLIO_MASK == f
}

fn used(s: &Sim) -> u64 {
    s.swap.as_ref().unwrap().used
}

/// Whether a swap PTE holds the slot of page `page` of swap-cache folio
/// `f` (its `swap_map` count is above the cache's `SWAP_HAS_CACHE`).
fn held(s: &Sim, f: FolioId, page: u32) -> bool {
    s.swap_slot_held(f, page)
}

/// Reclaims swap-cache folio `f` of the SSD machine in two passes of
/// `shrink_folio_list`: the first writes it (`pageout`: kept under
/// writeback, put back on its list), the write completes, and the second
/// removes it from the swap cache (`__remove_mapping` → `put_swap_folio`,
/// which frees each slot no swap PTE holds). Returns the pages the second
/// pass reclaimed.
fn reclaim_after_its_write(s: &mut Sim, f: FolioId) -> u64 {
    let lru = s.folios.lru(f);
    assert_eq!(super::filefolio::reclaim_one(s, f).0, 0);
    assert!(s.folios[f].test(flags::WRITEBACK));
    s.memcgs[0].lruvec.lists[lru as usize].push_head(&mut s.folios, f, lru);
    s.folios[f].set(flags::LRU);
    s.complete_writeback(u64::MAX);
    assert!(!s.folios[f].test(flags::WRITEBACK));
    super::filefolio::reclaim_one(s, f).0
}

/// A 8192-page machine with a `swap_pages`-slot SSD swap (no zram bypass)
/// and 64K mTHP under `kernel`: one task's 64-page VMA whose page 0 was
/// written (an order-4 folio over pages 0..16), added to the swap cache
/// and unmapped as `shrink_folio_list` does, then put back on its list:
/// its 16 PTEs hold slots 0..16, the folio waits in the swap cache.
/// Returns (sim, task, VMA, folio).
fn cached_64k(kernel: ThpKernel, swap_pages: u64) -> (Sim, u32, u32, FolioId) {
    let thp = ThpConfig {
        kernel,
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    };
    let mut s = thp_machine_with(8192, Some(swap_pages), thp, |c| {
        c.swap.device = DeviceKind::Ssd;
    });
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = swap_out_keeping_cache(&mut s, vma, 4);
    for i in 0..16 {
        assert_eq!(s.vmas[vma as usize].pte(i), i + 1, "pte {i}");
    }
    (s, t, vma, f)
}

/// The cached 64K folio (6.12) with page 0's swap PTE zapped (slots 1..16
/// still referenced: it stays), pages 1..15 faulted back by loads one by
/// one (page 0's PTE is none, so `swap_pte_batch` fails and each fault
/// maps its own page; their slots keep only the cache's reference), then
/// page 15's swap PTE, the last, zapped.
fn mapped_but_the_last_swap_pte_zapped(swap_pages: u64) -> (Sim, u32, FolioId) {
    let (mut s, _, vma, f) = cached_64k(ThpKernel::V6_12, swap_pages);
    discard(&mut s, vma, 0, 1);
    assert!(s.folios[f].test(flags::SWAPCACHE));
    assert!(!held(&s, f, 0));
    for i in 1..15 {
        access(&mut s, vma, i, false);
    }
    assert_eq!(s.folios[f].mapcount, 14);
    assert!(s.folios[f].test(flags::SWAPCACHE));
    assert_eq!(used(&s), 16);
    discard(&mut s, vma, 15, 1);
    (s, vma, f)
}

#[test]
fn a_mapped_large_folio_keeps_its_slots_when_swap_is_not_half_full() {
    // 16 of 2048 slots: TTRS_UNMAPPED fails (14 pages mapped), TTRS_FULL too.
    let (mut s, vma, f) = mapped_but_the_last_swap_pte_zapped(2048);
    assert!(s.folios[f].test(flags::SWAPCACHE));
    assert_eq!(used(&s), 16);
    // Every slot has only the cache's reference left; pages 1..15 are
    // mapped, pages 0 and 15 mapped nowhere.
    assert!((0..16).all(|i| !held(&s, f, i)));
    assert!((1..15).all(|i| maps(&s, vma, i, f)));
    s.check_invariants().unwrap();
    // Reclaim: `try_to_unmap` gives pages 1..15 swap PTEs again, so
    // `put_swap_folio` leaves their 14 slots a shadow each and frees slots
    // 0 and 15, which no swap PTE holds.
    assert_eq!(reclaim_after_its_write(&mut s, f), 16);
    assert_eq!((used(&s), s.memcgs[0].swap_usage), (14, 14));
    assert!((1..15).all(|i| s.vmas[vma as usize].pte(i) == i + 1));
    s.check_invariants().unwrap();
}

#[test]
fn a_mapped_large_folio_leaves_the_swap_cache_when_swap_is_over_half_full() {
    // 16 of 24 slots used: `vm_swap_full`. Every slot is at SWAP_HAS_CACHE
    // after the zap, so `delete_from_swap_cache` frees all 16; the folio
    // stays mapped, dirty (it must be written again).
    let (s, vma, f) = mapped_but_the_last_swap_pte_zapped(24);
    assert!(!s.folios[f].test(flags::SWAPCACHE));
    assert!(s.folios[f].test(flags::DIRTY));
    assert_eq!(s.folios[f].swap, 0);
    assert_eq!((used(&s), s.memcgs[0].swap_usage), (0, 0));
    assert_eq!(s.folios[f].mapcount, 14);
    assert!((1..15).all(|i| maps(&s, vma, i, f)));
    assert_eq!(
        (s.vmas[vma as usize].pte(0), s.vmas[vma as usize].pte(15)),
        (0, 0)
    );
    s.check_invariants().unwrap();
}

#[test]
fn an_unmapped_folio_stays_while_swap_ptes_hold_its_other_slots() {
    // 6.12, nothing mapped (TTRS_UNMAPPED holds, whether swap is full or
    // not): zapping page 0 leaves 15 swap PTEs holding slots
    // (`swap_is_has_cache` fails), so the folio stays; the last zap frees
    // it with every slot.
    let (mut s, _, vma, f) = cached_64k(ThpKernel::V6_12, 24);
    discard(&mut s, vma, 0, 1);
    assert!(s.folios[f].test(flags::SWAPCACHE));
    assert_eq!(used(&s), 16);
    assert!(!held(&s, f, 0) && (1..16).all(|i| held(&s, f, i)));
    s.check_invariants().unwrap();
    let anon = s.memcg_report(0).anon;
    discard(&mut s, vma, 1, 15);
    assert_eq!((used(&s), s.memcgs[0].swap_usage), (0, 0));
    assert_eq!(s.memcg_report(0).anon, anon - 16);
    s.check_invariants().unwrap();
}

/// A zram machine (64K mTHP, 6.12, `swap_pages` slots) whose task wrote
/// page 0 (an order-4 folio), had the folio added to the swap cache and
/// unmapped (left there, as a swap-out under writeback would), then
/// forked: each of slots 0..16 has two swap PTEs. Returns (sim, parent VMA,
/// child VMA, folio).
fn forked_cached_64k(swap_pages: u64) -> (Sim, u32, u32, FolioId) {
    let thp = ThpConfig {
        kernel: ThpKernel::V6_12,
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    };
    let mut s = super::thp::thp_machine(8192, Some(swap_pages), thp);
    let t = s.add_task("p");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = swap_out_keeping_cache(&mut s, vma, 4);
    let c = s.fork_task(t).unwrap();
    let cvma = s.task_vmas(c).unwrap()[0];
    for i in 0..16 {
        assert_eq!(s.vmas[vma as usize].pte(i), i + 1, "pte {i}");
        assert_eq!(s.vmas[cvma as usize].pte(i), i + 1, "pte {i}");
        assert_eq!(s.fork_swap_refs(i), 2);
    }
    (s, vma, cvma, f)
}

#[test]
fn under_fork_a_slot_zapped_by_both_tasks_is_freed_when_its_folio_is_reclaimed() {
    let (mut s, vma, cvma, f) = forked_cached_64k(1024);
    discard(&mut s, cvma, 0, 1);
    assert_eq!((s.fork_swap_refs(0), held(&s, f, 0)), (1, true));
    // The parent's zap drops slot 0's last swap PTE: the folio is unmapped
    // but slots 1..16 have two swap PTEs each, so it stays in the swap
    // cache, slot 0 at SWAP_HAS_CACHE only.
    discard(&mut s, vma, 0, 1);
    assert_eq!(s.fork_swap_refs(0), 0);
    assert!(s.folios[f].test(flags::SWAPCACHE));
    assert!(!held(&s, f, 0));
    assert_eq!(used(&s), 16);
    s.check_invariants().unwrap();
    // Reclaim removes the folio (`put_swap_folio`): slot 0 is freed, the
    // others keep their swap PTEs (a shadow each).
    assert_eq!(super::filefolio::reclaim_one(&mut s, f).0, 16);
    assert_eq!((used(&s), s.memcgs[0].swap_usage), (15, 15));
    s.check_invariants().unwrap();
    let c = s.vmas[cvma as usize].task;
    let t = s.vmas[vma as usize].task;
    s.exit_task(c).unwrap();
    s.exit_task(t).unwrap();
    assert_eq!((used(&s), s.memcgs[0].swap_usage), (0, 0));
    s.check_invariants().unwrap();
}

#[test]
fn under_fork_zapping_the_last_swap_ptes_of_a_folio_another_task_maps() {
    // The parent maps the whole folio (one load: its 16 entries are alike);
    // the child's 16 swap PTEs are then the last references, and its
    // MADV_DONTNEED drops them. 16 of 1024 slots: the mapped folio stays in
    // the swap cache, its slots at SWAP_HAS_CACHE, each page mapped by the
    // parent (which gets its slot back at the next swap-out).
    let (mut s, vma, cvma, f) = forked_cached_64k(1024);
    access(&mut s, vma, 3, false);
    assert_eq!(s.folios[f].mapcount, 16);
    assert!((0..16).all(|i| s.fork_swap_refs(i) == 1));
    discard(&mut s, cvma, 0, 16);
    assert!(s.folios[f].test(flags::SWAPCACHE));
    assert_eq!(used(&s), 16);
    assert!((0..16).all(|i| s.fork_swap_refs(i) == 0 && !held(&s, f, i) && maps(&s, vma, i, f)));
    s.check_invariants().unwrap();
    // Over half full (16 of 24): the last zap takes the folio out of the
    // swap cache (TTRS_FULL), freeing all 16 slots; the parent keeps it.
    let (mut s, vma, cvma, f) = forked_cached_64k(24);
    access(&mut s, vma, 3, false);
    assert!(s.folios[f].test(flags::SWAPCACHE));
    discard(&mut s, cvma, 0, 16);
    assert!(!s.folios[f].test(flags::SWAPCACHE));
    assert!(s.folios[f].test(flags::DIRTY));
    assert_eq!((used(&s), s.memcgs[0].swap_usage), (0, 0));
    assert!((0..16).all(|i| maps(&s, vma, i, f)));
    s.check_invariants().unwrap();
}

#[test]
fn under_fork_an_order_0_folio_mapped_by_one_task_leaves_the_cache_on_a_full_swap() {
    // Order 0 on zram: the parent wrote page 0, forked, and the page was
    // swapped out from both (slot 0, two swap PTEs). The parent's load reads
    // it into the swap cache and maps it read-only (a shared entry takes no
    // zram bypass; slot 0 keeps the child's count); the child's zap then
    // drops the slot's last swap PTE.
    for (swap_pages, leaves) in [(1024, false), (1, true)] {
        let mut s = super::thp::thp_machine(8192, Some(swap_pages), ThpConfig::default());
        let t = s.add_task("p");
        let vma = s.mmap_anon(t, 4).unwrap();
        let f = fault_anon(&mut s, vma, 0);
        let c = s.fork_task(t).unwrap();
        let cvma = s.task_vmas(c).unwrap()[0];
        assert_eq!(super::filefolio::reclaim_one(&mut s, f).0, 1);
        let slot = s.vmas[vma as usize].pte(0) - 1;
        assert_eq!(slot, s.vmas[cvma as usize].pte(0) - 1);
        assert_eq!(s.fork_swap_refs(slot), 2);
        access(&mut s, vma, 0, false);
        let g = s.vmas[vma as usize].pte(0) & PTE_FOLIO_MASK;
        assert!(s.folios[g].test(flags::SWAPCACHE));
        assert_eq!(s.fork_swap_refs(slot), 1);
        discard(&mut s, cvma, 0, 1);
        // Mapped: TTRS_UNMAPPED fails; a full swap (1 of 1 slot) frees it.
        assert_eq!(s.folios[g].test(flags::SWAPCACHE), !leaves, "{swap_pages}");
        assert_eq!(used(&s), u64::from(!leaves), "{swap_pages}");
        assert!(maps(&s, vma, 0, g));
        s.check_invariants().unwrap();
    }
}

/// The OOM reaper zaps a victim's PTEs as MADV_DONTNEED does (v6.12
/// `__oom_reap_task_mm` → `unmap_page_range` → `zap_pte_range`): each swap
/// entry is put once, and a large swap-cache folio's slots go with it. The
/// unmapped cached 64K folio: its 16 swap PTEs free it and its slots.
#[test]
fn the_oom_reaper_puts_each_slot_of_an_unmapped_large_swap_cache_folio_once() {
    let (mut s, _, _, _) = cached_64k(ThpKernel::V6_12, 2048);
    assert_eq!(used(&s), 16);
    assert!(s.out_of_memory(None));
    assert_eq!((used(&s), s.memcgs[0].swap_usage), (0, 0));
    s.check_invariants().unwrap();
}

/// The same with the folio partly mapped again (page 0's swap PTE zapped,
/// pages 1..5 loaded back): its present PTEs and its remaining swap PTEs
/// free every slot once (the reaper's own loop freed them all at the first
/// present PTE, then again at each swap PTE).
#[test]
fn the_oom_reaper_puts_each_slot_of_a_partly_mapped_large_swap_cache_folio_once() {
    let (mut s, _, vma, f) = cached_64k(ThpKernel::V6_12, 2048);
    discard(&mut s, vma, 0, 1);
    for i in 1..5 {
        access(&mut s, vma, i, false);
    }
    assert_eq!(s.folios[f].mapcount, 4);
    assert!(s.out_of_memory(None));
    assert_eq!((used(&s), s.memcgs[0].swap_usage), (0, 0));
    s.check_invariants().unwrap();
}
