//! Rule tests of what a fault does with a swap slot (mm/memory.c v6.12):
//! `do_wp_page` keeps the slot of a PageAnonExclusive page and only
//! `wp_can_reuse_anon_folio` (a page fork shared) frees it, copying a folio
//! under writeback; `should_try_to_free_swap` frees the slot of a VM_LOCKED
//! VMA's page at swap-in; a zram entry fork shared is read through
//! `swapin_readahead`, not the skip-swapcache path; `try_to_unmap` of a
//! PMD-mapped THP splits its PMD once per VMA (`thp_split_pmd`).

use super::swapin_mkwrite::{access, folio_at, pte};
use super::*;
use crate::huge_memory::ThpKernel;
use crate::mem::pagetable::{PTE_DIRTY, PTE_PRESENT};

fn used(s: &Sim) -> u64 {
    s.swap.as_ref().unwrap().used
}

/// A 4096-page machine under `kernel` with a 1024-page swap device of
/// `kind`, and a task whose `pages`-page anonymous VMA was written page by
/// page: (sim, task, VMA).
fn machine(kernel: ThpKernel, kind: DeviceKind, pages: u32) -> (Sim, u32, u32) {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(4096),
        policy: PolicyConfig {
            name: PolicyName::Cost,
            cost_variant: CostVariant::V6_2,
            ..Default::default()
        },
        swap: DeviceConfig {
            size: Some(Size::from_pages(1024)),
            ..DeviceConfig::of(kind)
        },
        ..Default::default()
    };
    cfg.thp.kernel = kernel;
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("p");
    let vma = s.mmap_anon(t, u64::from(pages)).unwrap();
    for i in 0..pages {
        access(&mut s, vma, i, true);
    }
    (s, t, vma)
}

/// Runs folio `f` alone through `shrink_folio_list` (references ignored)
/// and puts it back on its list if it was kept (`move_folios_to_lru`);
/// returns the pages reclaimed.
fn reclaim(s: &mut Sim, f: FolioId) -> u64 {
    isolate(s, f);
    let (reclaimed, _, kept, _) = shrink_isolated(s, f);
    if kept > 0 {
        let fo = &mut s.folios[f];
        fo.set(flags::LRU);
        let lru = LruList::of_flags(fo.flags);
        s.memcgs[0].lruvec.lists[lru as usize].push_head(&mut s.folios, f, lru as u8);
    }
    reclaimed
}

/// Reclaims folio `f`, lets its write complete, and reclaims the clean
/// swap-cache folio if it is still there: its PTEs are swap entries, no
/// folio is left.
fn swap_out_and_drop(s: &mut Sim, f: FolioId) {
    let first = reclaim(s, f);
    s.complete_writeback(u64::MAX);
    if first == 0 {
        assert_eq!(reclaim(s, f), 1);
    }
    assert_eq!(s.folios[f].swap, 0, "the folio left the swap cache");
}

/// Rule 1, an exclusive page: under 6.8 (a read swap-in maps it read-only)
/// the store after a read swap-in from the SSD is a `do_wp_page` fault that
/// reuses the page (`PageAnonExclusive`) and keeps its swap-cache slot; at
/// the next reclaim the folio, dirty through its PTE, is written again to
/// that same slot. Exact: one slot in use throughout, pswpin 1, pswpout 2,
/// three faults (the first store, the read, the second store), no copy.
#[test]
fn do_wp_page_keeps_the_slot_of_an_exclusive_page() {
    let (mut s, _, vma) = machine(ThpKernel::V6_8, DeviceKind::Ssd, 2);
    let f = folio_at(&s, vma, 0);
    swap_out_and_drop(&mut s, f);
    let entry = pte(&s, vma, 0);
    assert!(entry != 0 && entry & PTE_PRESENT == 0);
    assert_eq!((used(&s), s.vm.pswpout, s.vm.pswpin), (1, 1, 0));
    let faults = s.vm.pgfault;
    access(&mut s, vma, 0, false);
    let g = folio_at(&s, vma, 0);
    assert_eq!(s.folios[g].swap, entry);
    assert_eq!((used(&s), s.vm.pswpin), (1, 1));
    access(&mut s, vma, 0, true);
    assert_eq!(s.vm.pgfault - faults, 2, "the read and the write fault");
    assert_eq!(folio_at(&s, vma, 0), g, "reused, not copied");
    assert_eq!(pte(&s, vma, 0) & PTE_DIRTY, PTE_DIRTY);
    // The slot stays: the folio is still in the swap cache.
    assert!(s.folios[g].test(flags::SWAPCACHE));
    assert_eq!((s.folios[g].swap, used(&s)), (entry, 1));
    assert_eq!(s.fork_stats(), Default::default());
    // Written again to the same slot at reclaim.
    assert_eq!(reclaim(&mut s, g), 0);
    assert_eq!((s.vm.pswpout, used(&s)), (2, 1));
    assert_eq!(pte(&s, vma, 0), entry);
    s.check_invariants().unwrap();
}

/// A page fork shared, read back by the parent from the swap cache after
/// the child exited (the parent's PTE is the folio's only reference besides
/// the swap cache), under every kernel: the parent's store is
/// `wp_can_reuse_anon_folio`, whose `folio_free_swap` frees the slot once
/// its write completed, so the folio is reused (`cow_reuses` 1, no copy,
/// no slot in use); while its write is in flight (PG_writeback)
/// `folio_free_swap` fails, the swap cache keeps its reference and the
/// store copies (`cow_copies` 1, the slot and the old folio stay).
#[test]
fn wp_can_reuse_anon_folio_frees_the_slot_or_copies_a_folio_under_writeback() {
    for kernel in [ThpKernel::V6_12, ThpKernel::V6_8] {
        for written in [true, false] {
            let (mut s, t, vma) = machine(kernel, DeviceKind::Ssd, 2);
            let c = s.fork_task(t).unwrap();
            let f = folio_at(&s, vma, 0);
            assert_eq!(reclaim(&mut s, f), 0);
            assert_eq!((s.vm.pswpout, used(&s)), (1, 1));
            assert!(s.folios[f].test(flags::WRITEBACK));
            if written {
                s.complete_writeback(u64::MAX);
            }
            let entry = pte(&s, vma, 0);
            assert_eq!(s.fork_swap_refs(entry - 1), 2);
            // The parent's read: a swap-cache hit, read-only, not exclusive.
            let (faults, majors) = (s.vm.pgfault, s.vm.pgmajfault);
            access(&mut s, vma, 0, false);
            assert_eq!(folio_at(&s, vma, 0), f);
            assert_eq!((s.vm.pgfault - faults, s.vm.pgmajfault - majors), (1, 0));
            s.exit_task(c).unwrap();
            assert_eq!(s.fork_swap_refs(entry - 1), 0);
            assert_eq!(s.folios[f].test(flags::WRITEBACK), !written, "{kernel:?}");
            access(&mut s, vma, 0, true);
            assert_eq!(s.vm.pgfault - faults, 2);
            let st = s.fork_stats();
            let now = folio_at(&s, vma, 0);
            if written {
                assert_eq!((st.cow_copies, st.cow_reuses), (0, 1), "{kernel:?}");
                assert_eq!(now, f);
                assert!(!s.folios[f].test(flags::SWAPCACHE));
                assert_eq!(used(&s), 0);
            } else {
                assert_eq!((st.cow_copies, st.cow_reuses), (1, 0), "{kernel:?}");
                assert_ne!(now, f);
                assert_eq!(s.folios[f].mapcount, 0);
                assert!(s.folios[f].test(flags::SWAPCACHE));
                assert_eq!(used(&s), 1);
            }
            assert_eq!((s.vm.pswpout, s.vm.pswpin), (1, 0));
            s.check_invariants().unwrap();
        }
    }
}

/// Rule 2: `should_try_to_free_swap` frees the slot of a page read back
/// into a VM_LOCKED VMA (v6.12 `vma->vm_flags & VM_LOCKED`), where an
/// unlocked VMA's read fault from the SSD keeps it (swap far from full).
/// Exact: pswpin 1 and one major fault either way; slots in use 0 locked,
/// 1 unlocked; the locked folio is out of the swap cache and dirty.
#[test]
fn should_try_to_free_swap_frees_the_slot_in_a_locked_vma() {
    for locked in [false, true] {
        let (mut s, _, vma) = machine(ThpKernel::V6_12, DeviceKind::Ssd, 2);
        let f = folio_at(&s, vma, 0);
        swap_out_and_drop(&mut s, f);
        s.vmas[vma as usize].locked = locked;
        let majors = s.vm.pgmajfault;
        access(&mut s, vma, 0, false);
        let g = folio_at(&s, vma, 0);
        assert_eq!((s.vm.pswpin, s.vm.pgmajfault - majors), (1, 1));
        assert_eq!(used(&s), u64::from(!locked), "locked={locked}");
        assert_eq!(s.folios[g].test(flags::SWAPCACHE), !locked);
        assert_eq!(s.folios[g].test(flags::DIRTY), locked);
        s.check_invariants().unwrap();
    }
}

/// Rule 3: on zram an entry fork shared (`__swap_count` 2) is read through
/// `swapin_readahead`: the parent's fault on page 2 (no earlier fault next
/// to it: a window of one) reads it alone; its fault on page 3, next to
/// the last, has a window of two and reads page 4 ahead (`swap_ra` 1), so
/// pswpin is 3 after the two major faults; the child's fault on page 4 is
/// then a swap-cache hit (`swap_ra_hit` 1, no major fault). The entries
/// stay counted once per other task. A task that never forked takes the
/// skip-swapcache path: the same faults read one page each, none ahead.
#[test]
fn a_zram_entry_shared_by_fork_is_read_through_swapin_readahead() {
    for fork in [true, false] {
        let (mut s, t, vma) = machine(ThpKernel::V6_12, DeviceKind::Zram, 8);
        let child = fork.then(|| s.fork_task(t).unwrap());
        for i in 2..5 {
            let f = folio_at(&s, vma, i);
            swap_out_and_drop(&mut s, f);
        }
        assert_eq!((used(&s), s.vm.pswpout), (3, 3));
        let entries: Vec<u32> = (2..5).map(|i| pte(&s, vma, i)).collect();
        for &e in &entries {
            assert_eq!(s.fork_swap_refs(e - 1), if fork { 2 } else { 0 });
        }
        let before = s.vm.clone();
        access(&mut s, vma, 2, false);
        assert_eq!((s.vm.pswpin - before.pswpin, s.vm.swap_ra), (1, 0));
        access(&mut s, vma, 3, false);
        let d = |s: &Sim| {
            (
                s.vm.pgmajfault - before.pgmajfault,
                s.vm.pswpin - before.pswpin,
                s.vm.swap_ra - before.swap_ra,
                s.vm.swap_ra_hit - before.swap_ra_hit,
            )
        };
        if fork {
            assert_eq!(d(&s), (2, 3, 1, 0));
            // Page 4 is in the swap cache, unmapped, both entries counted.
            assert_eq!(s.fork_swap_refs(entries[2] - 1), 2);
            let c = child.unwrap();
            let cvma = s.task_vmas(c).unwrap()[0];
            access(&mut s, cvma, 4, false);
            assert_eq!(d(&s), (2, 3, 1, 1));
            // The slots the parent read stay for the child's entries.
            assert_eq!(used(&s), 3);
        } else {
            assert_eq!(d(&s), (2, 2, 0, 0));
            // zram frees each slot at its swap-in.
            assert_eq!(used(&s), 1);
        }
        s.check_invariants().unwrap();
    }
}

/// Rule 4: reclaim of a PMD-size THP (v6.12 `shrink_folio_list` →
/// `try_to_unmap(TTU_SPLIT_HUGE_PMD)`) splits its PMD once in each VMA
/// that maps it by a PMD: `thp_split_pmd` 1 for a task that never forked,
/// 2 once it forked (the parent's and the child's PMD), not 512 (per PTE)
/// nor per reclaim call; the folio is swapped out whole (`thp_swpout` 1,
/// no `thp_split_page`). A THP whose PMD a partial MADV_DONTNEED split
/// before (counted there) is PTE-mapped at reclaim: no second count.
#[test]
fn try_to_unmap_splits_a_thps_pmd_once_per_vma() {
    for (fork, zap) in [(false, false), (true, false), (false, true)] {
        let (mut s, vma, f) =
            super::split_zeropage::thp_written(ThpKernel::V6_12, 511, Some(1024), &[0, 1]);
        let t = s.vmas[vma as usize].task;
        if fork {
            s.fork_task(t).unwrap();
        }
        if zap {
            s.madvise_dontneed(vma, 1, 1);
            assert_eq!(s.vm.thp_split_pmd, 1, "the zap's split");
        }
        let before = s.vm.thp_split_pmd;
        reclaim(&mut s, f);
        let want = if zap { 0 } else { 1 + u64::from(fork) };
        assert_eq!(s.vm.thp_split_pmd - before, want, "fork={fork} zap={zap}");
        if !zap {
            assert_eq!((s.vm.thp_swpout, s.vm.thp_split_page), (1, 0));
            assert_eq!(s.vm.pswpout, 512);
        }
        s.check_invariants().unwrap();
    }
}
