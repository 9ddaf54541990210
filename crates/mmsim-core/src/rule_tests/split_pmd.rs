//! Rule tests of `thp_split_pmd` at `split_huge_page` (mm/huge_memory.c,
//! v6.12): `unmap_folio` passes `TTU_SPLIT_HUGE_PMD` and
//! `try_to_migrate_one` splits the folio's PMD in each VMA that still maps
//! it by one (`__split_huge_pmd_locked` counts `THP_SPLIT_PMD`), for
//! reclaim's swap-out fallback and the deferred split shrinker alike; a PMD
//! a partial MADV_DONTNEED split before is counted there only.

use super::split_zeropage::thp_written;
use crate::huge_memory::ThpKernel;

/// Who splits the THP: reclaim for want of 512 contiguous slots (a 64-page
/// device: `thp_swpout_fallback`), or the deferred split shrinker
/// (`max_ptes_none` 409 and 509 zero-filled pages: underused, or queued
/// partially mapped after the zap).
#[derive(Clone, Copy, Debug)]
enum By {
    SwapFallback,
    Shrinker,
}

/// (`thp_split_pmd` counted by the split, `thp_split_page`) for a PMD THP
/// with pages 0, 100 and 300 written, after a fork and a zap of page 1
/// as asked.
fn split_counts(by: By, fork: bool, zap: bool) -> (u64, u64) {
    let (swap, max_ptes_none) = match by {
        By::SwapFallback => (Some(64), 511),
        By::Shrinker => (None, 409),
    };
    let (mut s, vma, f) = thp_written(ThpKernel::V6_12, max_ptes_none, swap, &[0, 100, 300]);
    if fork {
        let t = s.vmas[vma as usize].task;
        s.fork_task(t).unwrap();
    }
    if zap {
        s.madvise_dontneed(vma, 1, 1);
        assert_eq!(s.vm.thp_split_pmd, 1, "the zap's split");
    }
    let before = s.vm.thp_split_pmd;
    match by {
        By::SwapFallback => {
            super::filefolio::reclaim_one(&mut s, f);
        }
        By::Shrinker => {
            assert_eq!(s.deferred_split_scan(0, 1).0, 1, "fork={fork} zap={zap}");
        }
    }
    s.check_invariants().unwrap();
    (s.vm.thp_split_pmd - before, s.vm.thp_split_page)
}

#[test]
fn split_huge_page_splits_each_pmd_mapping_the_thp_once() {
    for by in [By::SwapFallback, By::Shrinker] {
        // One PMD: one count; the child's PMD too after fork (the rmap
        // walk reaches both VMAs); none for a PMD the zap split already.
        for (fork, zap, want) in [(false, false, 1), (true, false, 2), (false, true, 0)] {
            assert_eq!(
                split_counts(by, fork, zap),
                (want, 1),
                "{by:?} fork={fork} zap={zap}"
            );
        }
    }
}

#[test]
fn the_swap_out_fallback_counts_its_pmd_split_once_not_again_at_unmap() {
    // The split counts the PMD; its order-0 pages are then unmapped by
    // try_to_unmap with no PMD left to split.
    let (mut s, _vma, f) = thp_written(ThpKernel::V6_12, 511, Some(64), &[0, 100, 300]);
    super::filefolio::reclaim_one(&mut s, f);
    assert_eq!(
        (
            s.vm.thp_swpout_fallback,
            s.vm.thp_split_page,
            s.vm.thp_split_pmd
        ),
        (1, 1, 1)
    );
    assert_eq!(s.vm.pswpout, 3);
}
