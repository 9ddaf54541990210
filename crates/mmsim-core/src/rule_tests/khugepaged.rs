//! Rule tests of collapse (`crate::khugepaged`): MADV_COLLAPSE and
//! khugepaged's `max_ptes_none` and `max_ptes_swap`, the huge allocation's
//! failure (`thp_collapse_alloc_failed`), the memcg charge of the new folio,
//! swap-in before a collapse, and khugepaged's scan cursor.

use super::thp::thp_machine;
use super::*;
use crate::huge_memory::{ThpConfig, ThpEnabled, VmaThpAdvice, PMD_ORDER};
use crate::khugepaged::{CollapseError, KhugepagedConfig};
use crate::mem::pagetable::{PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG};

/// `enabled = madvise` (PMD size inherits it), khugepaged as given.
fn thp_madvise(khugepaged: KhugepagedConfig) -> ThpConfig {
    ThpConfig {
        enabled: ThpEnabled::Madvise,
        khugepaged,
        ..Default::default()
    }
}

fn khugepaged_on() -> KhugepagedConfig {
    KhugepagedConfig {
        run: true,
        ..Default::default()
    }
}

/// Writes the pages of `vma` listed by `which`.
fn write_pages(s: &mut Sim, vma: u32, which: impl Iterator<Item = u32>) {
    for index in which {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
    }
}

/// The order-9 folio mapping every PTE of `[start, start + 512)`, if any.
fn huge_at(s: &Sim, vma: u32, start: u32) -> Option<FolioId> {
    let v = &s.vmas[vma as usize];
    let p = v.pte(start);
    if p & PTE_PRESENT == 0 {
        return None;
    }
    let f = p & PTE_FOLIO_MASK;
    let ok = s.folios[f].order() == PMD_ORDER
        && (start..start + 512)
            .all(|i| v.pte(i) & (PTE_PRESENT | PTE_FOLIO_MASK) == PTE_PRESENT | f);
    ok.then_some(f)
}

fn used(s: &Sim) -> u64 {
    s.node.managed - s.node.free
}

#[test]
fn madvise_collapse_copies_511_pages_and_a_none_into_one_pmd_folio() {
    // THP `never`: MADV_COLLAPSE ignores the sysfs settings.
    let mut s = thp_machine(1 << 14, None, ThpConfig::default());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1024).unwrap();
    write_pages(&mut s, vma, (0..512).filter(|&i| i != 7));
    assert_eq!((used(&s), s.folios.live()), (511, 511));
    assert_eq!(s.madvise_collapse(vma, 0, 1024), Err(CollapseError::Einval));
    // The second PMD range has no page table: SCAN_PMD_NONE ends the call
    // (EINVAL) after the first range was collapsed.
    let f = huge_at(&s, vma, 0).expect("collapsed");
    assert_eq!(s.folios[f].index, 0);
    assert_eq!((used(&s), s.folios.live()), (512, 1));
    assert_eq!(s.vm.thp_collapse_alloc, 1);
    assert_eq!(s.vm.thp_collapse_alloc_failed, 0);
    assert_eq!(s.memcgs[0].stat.thp_collapse_alloc, 1);
    // 511 old pages freed, one PMD folio on the LRU.
    assert_eq!(s.vm.pgfree, 511);
    // The range is now PMD-mapped: collapsing it again is a success with nothing to do.
    assert_eq!(s.madvise_collapse(vma, 0, 512), Ok(()));
    assert_eq!(s.vm.thp_collapse_alloc, 1);
    let r = s.khugepaged_report().unwrap();
    assert_eq!(
        (
            r.madvise_collapse_calls,
            r.madvise_collapse_failed,
            r.madvise_collapse_thps
        ),
        (2, 1, 1)
    );
    // A later access is a hit; the page that was none reads zeros from the new folio.
    let faults = s.vm.pgfault;
    write_pages(&mut s, vma, [7].into_iter());
    assert_eq!(s.vm.pgfault, faults);
    assert_eq!(s.anon_large_pages(), 512);
    s.check_invariants().unwrap();
}

#[test]
fn madvise_collapse_is_refused_under_madv_nohugepage_and_in_a_range_of_no_pmd() {
    let mut s = thp_machine(1 << 14, None, ThpConfig::default());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1024).unwrap();
    write_pages(&mut s, vma, 0..512);
    s.madvise_thp(vma, VmaThpAdvice::Nohugepage).unwrap();
    assert_eq!(s.madvise_collapse(vma, 0, 512), Err(CollapseError::Einval));
    assert_eq!(s.vm.thp_collapse_alloc, 0);
    s.madvise_thp(vma, VmaThpAdvice::None).unwrap();
    // A range holding no whole PMD range does nothing and succeeds.
    assert_eq!(s.madvise_collapse(vma, 1, 600), Ok(()));
    assert_eq!(s.vm.thp_collapse_alloc, 0);
    assert_eq!(s.madvise_collapse(vma, 0, 512), Ok(()));
    assert!(huge_at(&s, vma, 0).is_some());
    s.check_invariants().unwrap();
}

/// A task with 511 of the 512 pages of its MADV_HUGEPAGE VMA written while
/// the VMA had no advice (order-0 faults), khugepaged running with `max_ptes_none`.
fn khugepaged_511(max_ptes_none: u32) -> (Sim, u32) {
    let k = KhugepagedConfig {
        max_ptes_none,
        ..khugepaged_on()
    };
    let mut s = thp_machine(1 << 14, None, thp_madvise(k));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    write_pages(&mut s, vma, 1..512);
    assert_eq!(s.folios.live(), 511);
    // MADV_HUGEPAGE registers the mm; khugepaged wakes at once.
    s.madvise_thp(vma, VmaThpAdvice::Hugepage).unwrap();
    let before = s.clock;
    s.step(&Event::Think { ns: 1 });
    // khugepaged's work is not the workload's time.
    assert_eq!(s.clock, before + 1);
    (s, vma)
}

#[test]
fn khugepaged_collapses_one_none_pte_with_max_ptes_none_511_but_not_0() {
    let (s, vma) = khugepaged_511(511);
    let f = huge_at(&s, vma, 0).expect("collapsed");
    assert_eq!(s.folios.live(), 1);
    assert_eq!(s.folios.memcg(f), 0);
    let r = s.khugepaged_report().unwrap();
    assert_eq!((r.pages_collapsed, r.wakeups), (1, 1));
    assert_eq!(s.vm.thp_collapse_alloc, 1);
    assert_eq!(s.vm.thp_scan_exceed_none_pte, 0);
    s.check_invariants().unwrap();

    let (s, vma) = khugepaged_511(0);
    assert!(huge_at(&s, vma, 0).is_none());
    assert_eq!(s.folios.live(), 511);
    assert_eq!(s.khugepaged_report().unwrap().pages_collapsed, 0);
    assert_eq!(s.vm.thp_scan_exceed_none_pte, 1);
    assert_eq!(s.vm.thp_collapse_alloc, 0);
    s.check_invariants().unwrap();
}

#[test]
fn khugepaged_needs_a_young_page_and_madvise_collapse_does_not() {
    let (mut s, vma) = {
        let mut s = thp_machine(1 << 14, None, thp_madvise(khugepaged_on()));
        let t = s.add_task("t");
        let vma = s.mmap_anon(t, 512).unwrap();
        write_pages(&mut s, vma, 0..512);
        (s, vma)
    };
    // Reclaim's rmap walk would clear the young bits; here by hand.
    for p in s.vmas[vma as usize].ptes.iter_mut() {
        *p &= !crate::mem::pagetable::PTE_YOUNG;
    }
    s.madvise_thp(vma, VmaThpAdvice::Hugepage).unwrap();
    s.step(&Event::Think { ns: 1 });
    assert!(huge_at(&s, vma, 0).is_none(), "SCAN_LACK_REFERENCED_PAGE");
    assert_eq!(s.madvise_collapse(vma, 0, 512), Ok(()));
    assert!(huge_at(&s, vma, 0).is_some());
}

#[test]
fn a_failed_huge_allocation_counts_thp_collapse_alloc_failed() {
    // 4096 pages, no swap: 511 pages of the range plus 3300 others leave
    // fewer than 512 free, and nothing can be reclaimed.
    let mut s = thp_machine(4096, None, ThpConfig::default());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    let other = s.mmap_anon(t, 3300).unwrap();
    write_pages(&mut s, vma, 1..512);
    write_pages(&mut s, other, 0..3300);
    assert!(s.node.free < 512);
    let live = s.folios.live();
    assert_eq!(s.madvise_collapse(vma, 0, 512), Err(CollapseError::Enomem));
    assert_eq!(s.vm.thp_collapse_alloc_failed, 1);
    assert_eq!(s.vm.thp_collapse_alloc, 0);
    assert_eq!(s.folios.live(), live, "the range is left as it was");
    assert!(huge_at(&s, vma, 0).is_none());
    s.check_invariants().unwrap();
}

/// A group of `max` pages holding a task with a 512-page anonymous VMA whose
/// pages 0..500 are written. Returns the group and the VMA.
fn limited_writer(s: &mut Sim, max: u64) -> (crate::memcg::MemcgId, u32) {
    let g = s.add_memcg(0, "g").unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    s.set_memcg_knob(g, crate::memcg::MemcgKnob::Max, max)
        .unwrap();
    let vma = s.mmap_anon(t, 512).unwrap();
    write_pages(s, vma, 0..500);
    (g, vma)
}

#[test]
fn the_huge_folio_is_charged_to_the_tasks_group_before_the_old_pages_go() {
    let run = |max: u64| {
        let mut s = thp_machine(1 << 14, None, ThpConfig::default());
        let (g, vma) = limited_writer(&mut s, max);
        let r = s.madvise_collapse(vma, 0, 512);
        s.check_invariants().unwrap();
        (s, g, vma, r)
    };
    // 500 charged + 512 new > 900, and nothing reclaimable (no swap): EBUSY.
    let (s, g, vma, r) = run(900);
    assert_eq!(r, Err(CollapseError::Ebusy));
    assert!(huge_at(&s, vma, 0).is_none());
    assert_eq!(s.vm.thp_collapse_alloc, 1, "counted at the allocation");
    assert_eq!(s.memcgs[g as usize].stat.thp_collapse_alloc, 0);
    assert_eq!(s.folios.live(), 500);
    // With room for both: the group holds the PMD folio only.
    let (s, g, vma, r) = run(1100);
    assert_eq!(r, Ok(()));
    let f = huge_at(&s, vma, 0).unwrap();
    assert_eq!(s.folios.memcg(f), g);
    assert_eq!(s.memcgs[g as usize].stat.thp_collapse_alloc, 1);
    assert_eq!(s.memcgs[0].stat.thp_collapse_alloc, 0);
    assert!(s.memcgs[g as usize].usage >= 512 && s.memcgs[g as usize].usage < 512 + 64);
}

/// 512 pages written in group `g` with swap, then `reclaim` pages swapped out.
fn swapped_range(thp: ThpConfig, reclaim: u64) -> (Sim, u32, u32) {
    let mut s = thp_machine(1 << 14, Some(4096), thp);
    let g = s.add_memcg(0, "g").unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    let vma = s.mmap_anon(t, 512).unwrap();
    write_pages(&mut s, vma, 0..512);
    s.memory_reclaim(g, reclaim, Some(200)).unwrap();
    let swapped = (0..512)
        .filter(|&i| {
            let p = s.vmas[vma as usize].pte(i);
            p != 0 && p & PTE_PRESENT == 0
        })
        .count() as u32;
    (s, vma, swapped)
}

#[test]
fn swap_entries_over_max_ptes_swap_stop_khugepaged_and_madvise_collapse_swaps_them_in() {
    let (mut s, vma, swapped) = swapped_range(thp_madvise(khugepaged_on()), 100);
    assert!(swapped > 64, "{swapped}");
    s.madvise_thp(vma, VmaThpAdvice::Hugepage).unwrap();
    s.step(&Event::Think { ns: 1 });
    assert!(huge_at(&s, vma, 0).is_none());
    assert_eq!(s.vm.thp_scan_exceed_swap_pte, 1);
    assert_eq!(s.vm.thp_collapse_alloc, 0);
    // MADV_COLLAPSE has no limit: each swap entry is read back by a
    // do_swap_page() read fault (a major fault, not a pgfault), then copied.
    let (faults, majors, pswpin) = (s.vm.pgfault, s.vm.pgmajfault, s.vm.pswpin);
    assert_eq!(s.madvise_collapse(vma, 0, 512), Ok(()));
    assert!(huge_at(&s, vma, 0).is_some());
    assert_eq!(s.vm.pgfault, faults);
    assert_eq!(s.vm.pgmajfault - majors, u64::from(swapped));
    assert_eq!(s.vm.pswpin - pswpin, u64::from(swapped));
    assert_eq!(
        s.swap.as_ref().unwrap().used,
        0,
        "slots freed with the old pages"
    );
    s.check_invariants().unwrap();
}

#[test]
fn khugepaged_swaps_in_up_to_max_ptes_swap_entries() {
    let k = KhugepagedConfig {
        max_ptes_swap: 511,
        ..khugepaged_on()
    };
    let (mut s, vma, swapped) = swapped_range(thp_madvise(k), 32);
    assert!(swapped > 0 && swapped < 256, "{swapped}");
    s.madvise_thp(vma, VmaThpAdvice::Hugepage).unwrap();
    s.step(&Event::Think { ns: 1 });
    assert!(huge_at(&s, vma, 0).is_some());
    assert_eq!(s.vm.pswpin, u64::from(swapped));
    s.check_invariants().unwrap();
}

#[test]
fn the_scan_cursor_advances_pages_to_scan_per_wake_up() {
    let k = KhugepagedConfig {
        pages_to_scan: 1025,
        max_ptes_none: 0,
        ..khugepaged_on()
    };
    let mut s = thp_machine(1 << 14, None, thp_madvise(k));
    let t = s.add_task("t");
    // Four PMD ranges, one page written in each: none collapses (max_ptes_none = 0).
    let vma = s.mmap_anon(t, 2048).unwrap();
    write_pages(&mut s, vma, [0, 512, 1024, 1536].into_iter());
    s.madvise_thp(vma, VmaThpAdvice::Hugepage).unwrap();
    let cursor = |s: &Sim| {
        let k = &s.thp.khuge;
        (k.scan_slot, k.scan_vma, k.scan_index, k.report.full_scans)
    };
    s.step(&Event::Think { ns: 1 });
    // One for the mm, 512 per range: 1 + 512 + 512 = 1025.
    assert_eq!(cursor(&s), (Some(0), 0, 1024, 0));
    assert_eq!(s.vm.thp_scan_exceed_none_pte, 2);
    // The next wake-up: scan_sleep_millisecs after the scan ended (its
    // 1024 PTEs walked); timers fire before the first event at or after
    // their time.
    let wake = |s: &mut Sim| {
        let at = s
            .timers
            .expires(crate::timer::TimerKind::Khugepaged)
            .unwrap();
        s.step(&Event::Think { ns: at - s.clock });
        s.step(&Event::Think { ns: 1 });
        at
    };
    let t1 = s.clock;
    let t2 = wake(&mut s);
    assert_eq!(t2 - t1, 10_000_000_000 + 1024 * s.cost.pte_walk_ns - 1);
    assert_eq!(cursor(&s), (Some(0), 0, 2048, 0));
    assert_eq!(s.vm.thp_scan_exceed_none_pte, 4);
    // The third finds the VMA done (progress 1): the mm's turn ends, the
    // list wraps (`full_scans`), and with progress left the same wake-up
    // passes through the head once more (`pass_through_head < 2`) and
    // scans the first two ranges again: 1 + 1 + 512 + 512.
    wake(&mut s);
    assert_eq!(cursor(&s), (Some(0), 0, 1024, 1));
    assert_eq!(s.khugepaged_report().unwrap().wakeups, 3);
    assert_eq!(s.vm.thp_scan_exceed_none_pte, 6);
    s.check_invariants().unwrap();
}

#[test]
fn khugepaged_is_off_by_default_and_leaves_no_trace() {
    let mut s = thp_machine(1 << 14, None, thp_madvise(KhugepagedConfig::default()));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    write_pages(&mut s, vma, 1..512);
    s.madvise_thp(vma, VmaThpAdvice::Hugepage).unwrap();
    s.step(&Event::Think {
        ns: 100_000_000_000,
    });
    assert!(huge_at(&s, vma, 0).is_none());
    assert!(s.khugepaged_report().is_none());
}

/// The cases of validation/khugepaged/collapse.c with 32 PMD ranges (64 MiB),
/// and what the 6.18 host returned for each (VALIDATION.md, "MADV_COLLAPSE
/// against the 6.18 host"): errno, thp_collapse_alloc, AnonHugePages and Rss
/// (kB) after the call. `limit`: the group's memory.max in pages.
fn host_case(
    stride: u32,
    skip: Option<u32>,
    untouched_pmds: u32,
    nohuge: bool,
    limit: Option<u64>,
) -> (Result<(), CollapseError>, u64, u64, u64) {
    let mut s = thp_machine(1 << 18, None, thp_madvise(KhugepagedConfig::default()));
    let g = s.add_memcg(0, "g").unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    if let Some(max) = limit {
        s.set_memcg_knob(g, crate::memcg::MemcgKnob::Max, max)
            .unwrap();
    }
    let pages = 32 * 512;
    let vma = s.mmap_anon(t, pages).unwrap();
    if nohuge {
        s.madvise_thp(vma, VmaThpAdvice::Nohugepage).unwrap();
    }
    let touched = (32 - untouched_pmds) * 512;
    write_pages(
        &mut s,
        vma,
        (0..touched)
            .step_by(stride as usize)
            .filter(|i| Some(i % 512) != skip),
    );
    let r = s.madvise_collapse(vma, 0, pages as u32);
    s.check_invariants().unwrap();
    let rss_kb = 4 * s.memcgs[g as usize].lruvec.evictable();
    (r, s.vm.thp_collapse_alloc, 4 * s.anon_large_pages(), rss_kb)
}

#[test]
fn madvise_collapse_matches_the_6_18_host() {
    use CollapseError::*;
    // dense: every page written.
    assert_eq!(
        host_case(1, None, 0, false, None),
        (Ok(()), 32, 65536, 65536)
    );
    // MADV_NOHUGEPAGE: EINVAL, nothing allocated.
    assert_eq!(
        host_case(1, None, 0, true, None),
        (Err(Einval), 0, 0, 65536)
    );
    // 511 of 512: no max_ptes_none for MADV_COLLAPSE.
    assert_eq!(
        host_case(1, Some(7), 0, false, None),
        (Ok(()), 32, 65536, 65536)
    );
    // One page in 64: RSS 1024 kB -> 65536 kB.
    assert_eq!(
        host_case(64, None, 0, false, None),
        (Ok(()), 32, 65536, 65536)
    );
    // The last range untouched: SCAN_PMD_NONE ends the call with EINVAL after 31.
    assert_eq!(
        host_case(1, None, 1, false, None),
        (Err(Einval), 31, 63488, 63488)
    );
    // memory.max 65 MiB: the first huge charge fails, EBUSY, counted at the allocation.
    assert_eq!(
        host_case(1, None, 0, false, Some(65 * 256)),
        (Err(Ebusy), 1, 0, 65536)
    );
    // 70 MiB: each range's old pages are freed after its new folio is charged.
    assert_eq!(
        host_case(1, None, 0, false, Some(70 * 256)),
        (Ok(()), 32, 65536, 65536)
    );
}

#[test]
fn khugepaged_collapses_eight_ranges_per_wake_up_as_the_6_18_host() {
    // validation/khugepaged/khugepaged.c: 32 PMD ranges written under
    // MADV_NOHUGEPAGE, then MADV_HUGEPAGE. The host (pages_to_scan 4096,
    // scan_sleep_millisecs 10000) collapsed 8 at once, 16 by 10.7 s, 24 by
    // 24.3 s, 32 by 34.8 s, full_scans still 0: each collapse ends the mm's
    // turn, so a wake-up makes 1 + 512 progress per range, 8 ranges.
    let mut s = thp_machine(1 << 16, None, thp_madvise(khugepaged_on()));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 32 * 512).unwrap();
    s.madvise_thp(vma, VmaThpAdvice::Nohugepage).unwrap();
    write_pages(&mut s, vma, 0..32 * 512);
    s.madvise_thp(vma, VmaThpAdvice::Hugepage).unwrap();
    let collapsed = |s: &Sim| {
        let r = s.khugepaged_report().unwrap();
        (r.pages_collapsed, r.full_scans, s.anon_large_pages() / 512)
    };
    // seen[i]: after the 100 ms step that started at i × 100 ms.
    let mut seen = Vec::new();
    for _ in 0..450 {
        s.step(&Event::Think { ns: 100_000_000 });
        seen.push(collapsed(&s).0);
    }
    // Wake-ups at 0, 10.1, 20.2 and 30.3 s: each sleep starts after the
    // scan (1.3 ms: 8 copies, 4096 PTEs walked), and a timer fires at the
    // first event at or after its time, here the next 100 ms step.
    let first = |n: u64| seen.iter().position(|&c| c == n);
    assert_eq!(seen[0], 8);
    assert_eq!(
        (first(16), first(24), first(32)),
        (Some(101), Some(202), Some(303))
    );
    // The wake-up after the last range finds the VMA done: a full scan.
    assert_eq!(collapsed(&s), (32, 1, 32));
    assert_eq!(s.khugepaged_report().unwrap().wakeups, 5);
    s.check_invariants().unwrap();
}

#[test]
fn collapse_keeps_every_lru_design_consistent_and_is_refused_under_the_textbook_lru() {
    for policy in [
        PolicyName::Cost,
        PolicyName::ScannedRotated,
        PolicyName::Mglru,
    ] {
        let mut cfg = MachineConfig {
            memory: Size::from_pages(1 << 14),
            swap: DeviceConfig {
                size: Some(Size::from_pages(4096)),
                ..DeviceConfig::of(DeviceKind::Zram)
            },
            ..Default::default()
        };
        cfg.policy.name = policy;
        let mut s = Sim::new(cfg).unwrap();
        let g = s.add_memcg(0, "g").unwrap();
        let t = s.add_task("t");
        s.attach_task(t, g).unwrap();
        let vma = s.mmap_anon(t, 1024).unwrap();
        write_pages(&mut s, vma, 0..1024);
        s.memory_reclaim(g, 64, Some(200)).unwrap();
        assert_eq!(s.madvise_collapse(vma, 0, 1024), Ok(()), "{policy:?}");
        assert!(huge_at(&s, vma, 0).is_some() && huge_at(&s, vma, 512).is_some());
        s.check_invariants().unwrap();
        // The PMD folios reclaimed and faulted back still hold together.
        s.memory_reclaim(g, 600, Some(200)).unwrap();
        write_pages(&mut s, vma, 0..1024);
        s.check_invariants().unwrap();
    }
    let mut s = machine(PolicyName::Lru, 1 << 14, None);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    write_pages(&mut s, vma, 0..512);
    assert_eq!(s.madvise_collapse(vma, 0, 512), Err(CollapseError::Einval));
    assert_eq!(s.folios.live(), 512);
}

#[test]
fn mixed_events_with_khugepaged_keep_the_invariants() {
    // Accesses, discards, MADV_COLLAPSE and time under memory pressure, with
    // khugepaged scanning every 10 ms, 16K and 64K mTHP, zram swap and a
    // group limit, under each kernel LRU design (a deterministic LCG).
    for policy in [
        PolicyName::Cost,
        PolicyName::ScannedRotated,
        PolicyName::Mglru,
    ] {
        let mut thp = thp_madvise(KhugepagedConfig {
            run: true,
            scan_sleep_millisecs: 10,
            pages_to_scan: 2048,
            max_ptes_swap: 200,
            ..Default::default()
        });
        thp.vma_advice = VmaThpAdvice::Hugepage;
        thp.hugepages_16kb.enabled = crate::huge_memory::ThpSizeEnabled::Always;
        thp.hugepages_64kb.enabled = crate::huge_memory::ThpSizeEnabled::Always;
        thp.hugepages_2048kb.enabled = crate::huge_memory::ThpSizeEnabled::Madvise;
        let mut cfg = MachineConfig {
            memory: Size::from_pages(1 << 13),
            thp,
            swap: DeviceConfig {
                size: Some(Size::from_pages(1 << 13)),
                ..DeviceConfig::of(DeviceKind::Zram)
            },
            ..Default::default()
        };
        cfg.policy.name = policy;
        let mut s = Sim::new(cfg).unwrap();
        let g = s.add_memcg(0, "g").unwrap();
        s.set_memcg_knob(g, crate::memcg::MemcgKnob::Max, 3000)
            .unwrap();
        let (t1, t2) = (s.add_task("a"), s.add_task("b"));
        s.attach_task(t1, g).unwrap();
        let vmas = [
            s.mmap_anon(t1, 2048).unwrap(),
            s.mmap_anon(t1, 1500).unwrap(),
            s.mmap_anon(t2, 2048).unwrap(),
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % n
        };
        for _ in 0..60_000 {
            let vma = vmas[next(3) as usize];
            let len = s.vmas[vma as usize].len;
            let index = next(u64::from(len)) as u32;
            let ev = match next(100) {
                0 => Event::Discard {
                    vma,
                    index,
                    pages: 1 + next(700) as u32,
                },
                1 => Event::Collapse {
                    vma,
                    index: index & !511,
                    pages: 1024,
                },
                2..=4 => Event::Think { ns: 2_000_000 },
                k => Event::Access {
                    vma,
                    index,
                    write: k % 3 != 0,
                },
            };
            s.step(&ev);
        }
        s.check_invariants().unwrap();
        let r = s.khugepaged_report().unwrap();
        assert!(r.wakeups > 10, "{policy:?} {r:?}");
        assert!(r.madvise_collapse_calls > 100, "{policy:?} {r:?}");
        assert!(
            r.madvise_collapse_thps + r.pages_collapsed > 0,
            "{policy:?} {r:?}"
        );
    }
}

/// 500 pages written in a group of `max` pages with swap, then a collapse
/// of the range: by khugepaged (`khugepaged = true`) or MADV_COLLAPSE.
/// Returns the node's and the group's (pgscan_direct, pgscan_khugepaged,
/// pgsteal_direct, pgsteal_khugepaged) and the group's memory.stat pgscan.
fn collapse_under_limit(khugepaged: bool, max: u64) -> ([u64; 4], [u64; 4], u64) {
    let k = KhugepagedConfig {
        run: khugepaged,
        ..Default::default()
    };
    let mut s = thp_machine(1 << 14, Some(4096), thp_madvise(k));
    let (g, vma) = limited_writer(&mut s, max);
    if khugepaged {
        s.madvise_thp(vma, VmaThpAdvice::Hugepage).unwrap();
        s.step(&Event::Think { ns: 1 });
        assert_eq!(s.khugepaged_report().unwrap().wakeups, 1);
    } else {
        // The huge folio's charge (500 + 512 > 900) reclaims the group:
        // it swaps out the range's 500 pages, so v6.12
        // `__collapse_huge_page_isolate` finds swap PTEs (the scan saw
        // none, so no swap-in ran): SCAN_PTE_NON_PRESENT, which
        // `madvise_collapse_errno` maps to -EINVAL.
        assert_eq!(s.madvise_collapse(vma, 0, 512), Err(CollapseError::Einval));
    }
    s.check_invariants().unwrap();
    let v = &s.vm;
    let m = &s.memcgs[g as usize].stat;
    (
        [
            v.pgscan_direct,
            v.pgscan_khugepaged,
            v.pgsteal_direct,
            v.pgsteal_khugepaged,
        ],
        [
            m.pgscan_direct,
            m.pgscan_khugepaged,
            m.pgsteal_direct,
            m.pgsteal_khugepaged,
        ],
        s.memcg_report(g).pgscan,
    )
}

#[test]
fn khugepaged_reclaim_counts_pgscan_khugepaged_and_madvise_collapse_counts_direct() {
    // reclaimer_offset() (mm/vmscan.c, v6.3+): the limit reclaim of
    // khugepaged's huge charge is khugepaged's (2), that of the task
    // calling MADV_COLLAPSE direct (1). cgroup reclaim counts in the group
    // only, and memory.stat pgscan sums all three.
    let (node_k, grp_k, pgscan_k) = collapse_under_limit(true, 900);
    let (node_d, grp_d, pgscan_d) = collapse_under_limit(false, 900);
    assert_eq!(node_k, [0; 4], "cgroup reclaim is not counted on the node");
    assert_eq!(node_d, [0; 4]);
    assert!(grp_k[1] > 0 && grp_k[3] > 0, "{grp_k:?}");
    assert_eq!((grp_k[0], grp_k[2]), (0, 0), "nothing counted as direct");
    assert_eq!(
        (grp_d[1], grp_d[3]),
        (0, 0),
        "nothing counted as khugepaged"
    );
    // The same reclaim, under the other reclaimer's names.
    assert_eq!((grp_d[0], grp_d[2]), (grp_k[1], grp_k[3]));
    assert_eq!((pgscan_k, pgscan_d), (grp_k[1], grp_d[0]));
    // 500 pages, 900 allowed, 512 to charge: every page of the range is
    // scanned twice and swapped out (no page elsewhere to reclaim).
    assert_eq!(grp_k, [0, 1000, 0, 500]);
}

#[test]
fn khugepaged_global_direct_reclaim_counts_on_the_node_as_khugepaged() {
    // No group limit: khugepaged's GFP_TRANSHUGE allocation finds no free
    // order-9 block and reclaims directly (defrag = 1): allocstall and the
    // node's and root group's pgscan_khugepaged, never pgscan_direct.
    let mut s = thp_machine(4096, Some(8192), thp_madvise(khugepaged_on()));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    let other = s.mmap_anon(t, 3300).unwrap();
    write_pages(&mut s, vma, 0..512);
    write_pages(&mut s, other, 0..3300);
    let before = (
        s.vm.pgscan_direct,
        s.vm.pgsteal_direct,
        s.vm.allocstall_normal,
    );
    s.madvise_thp(vma, VmaThpAdvice::Hugepage).unwrap();
    s.step(&Event::Think { ns: 1 });
    assert_eq!(s.khugepaged_report().unwrap().wakeups, 1);
    assert_eq!(
        (s.vm.pgscan_direct, s.vm.pgsteal_direct),
        (before.0, before.1)
    );
    assert!(s.vm.pgscan_khugepaged > 0 && s.vm.pgsteal_khugepaged > 0);
    assert_eq!(s.memcgs[0].stat.pgscan_khugepaged, s.vm.pgscan_khugepaged);
    assert!(!s.thp.khuge.current, "only while khugepaged's timer runs");
    // One reclaim (its pages scattered: no order-9 block freed, no
    // compaction, so thp_collapse_alloc_failed and nothing collapsed).
    assert_eq!(
        (
            s.vm.allocstall_normal - before.2,
            s.vm.pgscan_khugepaged,
            s.vm.pgsteal_khugepaged,
            s.vm.thp_collapse_alloc_failed,
            s.khugepaged_report().unwrap().pages_collapsed
        ),
        (1, 3865, 53, 1, 0)
    );
    s.check_invariants().unwrap();
}

#[test]
fn thp_advice_events_are_madvise_thp_and_khugepaged_wakes_at_the_next_event() {
    // The events of a touch's `advise_after` (validation case
    // khugepaged-timing): MADV_NOHUGEPAGE refuses MADV_COLLAPSE (EINVAL,
    // errno 22 kept), MADV_HUGEPAGE registers the task and khugepaged's
    // first wake-up runs at the next event, a zero-length Think: all four
    // ranges (fewer than the eight of one wake-up).
    let mut s = thp_machine(1 << 16, None, thp_madvise(khugepaged_on()));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 4 * 512).unwrap();
    s.step(&Event::ThpAdvice {
        vma,
        advice: VmaThpAdvice::Nohugepage,
    });
    write_pages(&mut s, vma, 0..4 * 512);
    s.step(&Event::Collapse {
        vma,
        index: 0,
        pages: 4 * 512,
    });
    let r = s.khugepaged_report().unwrap();
    assert_eq!(
        (r.madvise_collapse_failed, r.madvise_collapse_errno),
        (1, 22)
    );
    assert_eq!(s.anon_huge_pages(), 0);
    s.step(&Event::ThpAdvice {
        vma,
        advice: VmaThpAdvice::Hugepage,
    });
    assert_eq!(s.anon_huge_pages(), 0);
    s.step(&Event::Think { ns: 0 });
    assert_eq!(s.anon_huge_pages(), 4 * 512);
    assert_eq!(s.khugepaged_report().unwrap().pages_collapsed, 4);
    // A successful call clears the errno.
    s.step(&Event::Collapse {
        vma,
        index: 0,
        pages: 4 * 512,
    });
    assert_eq!(s.khugepaged_report().unwrap().madvise_collapse_errno, 0);
    s.check_invariants().unwrap();
}

/// v6.12 `collapse_huge_page` maps the new folio with one
/// `mk_huge_pmd(hpage, vm_page_prot)` (mm/khugepaged.c 1237): the PMD is
/// young, so all 512 pages are, not only the first.
#[test]
fn a_collapsed_pmd_is_young_over_all_512_pages() {
    let mut s = thp_machine(1 << 14, None, ThpConfig::default());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    write_pages(&mut s, vma, 0..512);
    assert_eq!(s.madvise_collapse(vma, 0, 512), Ok(()));
    assert!(huge_at(&s, vma, 0).is_some());
    let v = &s.vmas[vma as usize];
    let old: Vec<u32> = (0..512).filter(|&i| v.pte(i) & PTE_YOUNG == 0).collect();
    assert_eq!(old, Vec::<u32>::new());
}
