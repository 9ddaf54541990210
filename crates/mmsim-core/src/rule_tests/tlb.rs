//! Rule tests of the data TLB (`crate::tlb`): what one entry covers for
//! each mapping (order-0 PTEs, a PTE-mapped 64 KiB folio with and without
//! the contiguous bit, a PMD mapping), LRU eviction on a set conflict, and
//! the flushes of MADV_DONTNEED, a collapse and reclaim.

use super::thp::thp_machine_with;
use super::*;
use crate::huge_memory::{ThpConfig, ThpEnabled, ThpSizeConfig, ThpSizeEnabled};
use crate::tlb::{TlbConfig, TlbReport};

fn tlb_on() -> TlbConfig {
    TlbConfig {
        enabled: true,
        ..Default::default()
    }
}

/// A machine of 64 Ki pages with `thp` and the TLB `tlb`.
fn tlb_machine(thp: ThpConfig, tlb: TlbConfig) -> Sim {
    thp_machine_with(1 << 16, None, thp, |c| c.tlb = tlb)
}

fn stats(s: &Sim) -> TlbReport {
    s.tlb.as_ref().expect("TLB on").stats
}

fn read(s: &mut Sim, vma: u32, index: u32) {
    s.step(&Event::Access {
        vma,
        index,
        write: false,
    });
}

fn thp_64k() -> ThpConfig {
    ThpConfig {
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    }
}

/// Writes pages `0..16` of a fresh 16-page VMA (one 64 KiB folio, mapped by
/// 16 PTEs at the first fault) page by page.
fn touch_64k_folio(contpte: bool) -> TlbReport {
    let mut s = tlb_machine(
        thp_64k(),
        TlbConfig {
            contpte,
            ..tlb_on()
        },
    );
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 16).unwrap();
    touch(&mut s, vma, 16);
    let f = s.vmas[vma as usize].pte(0) & crate::mem::pagetable::PTE_FOLIO_MASK;
    assert_eq!(s.folios[f].order(), 4);
    s.check_invariants().unwrap();
    stats(&s)
}

#[test]
fn a_64k_folio_is_16_entries_without_contpte_and_one_with() {
    // One fault and its retried access, then 15 more: 16 loads.
    let r = touch_64k_folio(false);
    assert_eq!((r.dtlb_loads, r.dtlb_load_misses, r.walks_4k), (16, 16, 16));
    let r = touch_64k_folio(true);
    // `contpte_set_ptes` mapped the folio with the contiguous bit: the
    // first walk fills a 64 KiB entry that serves the other 15 pages.
    assert_eq!((r.dtlb_loads, r.dtlb_load_misses, r.walks_64k), (16, 1, 1));
    assert_eq!(r.walks_4k, 0);
}

#[test]
fn contpte_needs_all_16_ptes_of_one_folio_with_the_same_permissions() {
    // Order-0 folios: no contiguous bit even with the option.
    let mut s = tlb_machine(
        ThpConfig::default(),
        TlbConfig {
            contpte: true,
            ..tlb_on()
        },
    );
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 16).unwrap();
    touch(&mut s, vma, 16);
    assert_eq!(stats(&s).walks_64k, 0);
    assert_eq!(stats(&s).dtlb_load_misses, 16);
    // A 64 KiB folio with one of its PTEs zapped is no longer foldable.
    let mut s = tlb_machine(
        thp_64k(),
        TlbConfig {
            contpte: true,
            ..tlb_on()
        },
    );
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 16).unwrap();
    touch(&mut s, vma, 16);
    s.step(&Event::Discard {
        vma,
        index: 15,
        pages: 1,
    });
    // The zap flushed the 64 KiB entry (INVLPG of page 15 drops the entry
    // covering it); pages 0..15 now walk 4 KiB each.
    let before = stats(&s);
    for i in 0..15 {
        read(&mut s, vma, i);
    }
    let r = stats(&s);
    assert_eq!(r.walks_4k - before.walks_4k, 15);
    assert_eq!(r.walks_64k, before.walks_64k);
}

#[test]
fn a_pmd_mapping_is_one_entry_for_512_pages() {
    let thp = ThpConfig {
        enabled: ThpEnabled::Always,
        ..Default::default()
    };
    let mut s = tlb_machine(thp, tlb_on());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    touch(&mut s, vma, 512);
    assert_eq!(s.anon_huge_pages(), 512);
    let r = stats(&s);
    assert_eq!(
        (r.dtlb_loads, r.dtlb_load_misses, r.walks_2m, r.walks_4k),
        (512, 1, 1, 0)
    );
    // The same pages mapped by 512 order-0 PTEs: 512 walks.
    let mut s = tlb_machine(ThpConfig::default(), tlb_on());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    touch(&mut s, vma, 512);
    assert_eq!(stats(&s).walks_4k, 512);
}

#[test]
fn madv_dontneed_flushes_what_it_zapped() {
    let mut s = tlb_machine(ThpConfig::default(), tlb_on());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 128).unwrap();
    touch(&mut s, vma, 128);
    read(&mut s, vma, 0);
    assert_eq!(stats(&s).dtlb_load_misses, 128); // page 0's second load hit
    s.step(&Event::Discard {
        vma,
        index: 0,
        pages: 1,
    });
    // One page: flush_tlb_mm_range flushes it alone (nr_tlb_local_flush_one).
    assert_eq!(
        (
            stats(&s).nr_tlb_local_flush_one,
            stats(&s).nr_tlb_local_flush_all
        ),
        (1, 0)
    );
    read(&mut s, vma, 0); // a new fault, and a walk
    read(&mut s, vma, 1); // untouched by the flush: a hit (L1 or STLB)
    assert_eq!(stats(&s).dtlb_load_misses, 129);
    // 34 pages (> tlb_single_page_flush_ceiling, 33): one full flush of
    // the address space; page 100, outside the range, walks again too.
    s.step(&Event::Discard {
        vma,
        index: 10,
        pages: 34,
    });
    assert_eq!(stats(&s).nr_tlb_local_flush_all, 1);
    read(&mut s, vma, 100);
    assert_eq!(stats(&s).dtlb_load_misses, 130);
    // A range with nothing present flushes nothing.
    s.step(&Event::Discard {
        vma,
        index: 10,
        pages: 34,
    });
    assert_eq!(stats(&s).nr_tlb_local_flush_all, 1);
    s.check_invariants().unwrap();
}

#[test]
fn a_set_conflict_evicts_the_least_recently_used_way() {
    // One set of two ways in the L1 and in the STLB.
    let tlb = TlbConfig {
        l1_entries: 2,
        l1_ways: 2,
        stlb_entries: 2,
        stlb_ways: 2,
        ..tlb_on()
    };
    let mut s = tlb_machine(ThpConfig::default(), tlb);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 8).unwrap();
    fault_anon(&mut s, vma, 0);
    fault_anon(&mut s, vma, 1);
    read(&mut s, vma, 0); // L1 hit: 0 is the most recent, 1 the LRU way
    fault_anon(&mut s, vma, 2); // evicts 1 from the L1, 0 from the STLB
    let r = stats(&s);
    assert_eq!((r.dtlb_load_misses, r.stlb_hits), (3, 0));
    read(&mut s, vma, 1); // L1 miss, STLB hit
    assert_eq!(stats(&s).stlb_hits, 1);
    assert_eq!(stats(&s).dtlb_load_misses, 3);
    read(&mut s, vma, 0); // evicted from the L1 by 1 now, and from the STLB: a walk
    assert_eq!(stats(&s).dtlb_load_misses, 4);
}

#[test]
fn madv_collapse_flushes_the_pmd_range_and_maps_one_entry() {
    let mut s = tlb_machine(ThpConfig::default(), tlb_on());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 512).unwrap();
    touch(&mut s, vma, 512);
    assert_eq!(stats(&s).walks_4k, 512);
    s.step(&Event::Collapse {
        vma,
        index: 0,
        pages: 512,
    });
    assert_eq!(s.anon_huge_pages(), 512);
    // pmdp_collapse_flush: 512 pages, above the ceiling: one full flush,
    // local (MADV_COLLAPSE runs in the task).
    let r = stats(&s);
    assert_eq!((r.nr_tlb_local_flush_all, r.nr_tlb_remote_flush), (1, 0));
    for i in 0..512 {
        read(&mut s, vma, i);
    }
    assert_eq!(stats(&s).walks_2m, 1);
    s.check_invariants().unwrap();
}

#[test]
fn reclaim_unmaps_in_batches_and_flushes_once_per_list() {
    // 64 Ki pages of memory, a 96 Ki-page anonymous touch with zram swap:
    // reclaim unmaps what it swaps out.
    let mut s = thp_machine_with(1 << 14, Some(1 << 16), ThpConfig::default(), |c| {
        c.tlb = tlb_on()
    });
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 3 << 13).unwrap();
    touch(&mut s, vma, 3 << 13);
    let r = stats(&s);
    assert!(s.vm.pswpout > 0);
    // Every flush is a batch's full flush: local from direct reclaim,
    // remote (sent and received) from kswapd.
    assert_eq!(r.nr_tlb_local_flush_one, 0);
    assert!(r.nr_tlb_local_flush_all + r.nr_tlb_remote_flush > 0);
    // Far fewer flushes than pages swapped out.
    assert!(r.nr_tlb_local_flush_all + r.nr_tlb_remote_flush < s.vm.pswpout / 8);
    s.check_invariants().unwrap();
}

#[test]
fn off_by_default_and_no_report() {
    let mut s = machine(PolicyName::Cost, 8192, None);
    assert!(s.tlb.is_none());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 16).unwrap();
    touch(&mut s, vma, 16);
    assert!(s.finish().tlb.is_none());
}

#[test]
fn pte_coalescing_joins_four_contiguous_page_frames_of_any_folios() {
    // Four order-0 folios the buddy allocator gave page frames in a row,
    // 16 KiB-aligned: after the faults, one 16 KiB entry serves all four.
    let mut s = tlb_machine(
        ThpConfig::default(),
        TlbConfig {
            pte_coalescing: true,
            ..tlb_on()
        },
    );
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 4).unwrap();
    touch(&mut s, vma, 4);
    let pfn = |s: &Sim, i: u32| {
        let f = s.vmas[vma as usize].pte(i) & crate::mem::pagetable::PTE_FOLIO_MASK;
        s.folios.head_pfn(f)
    };
    let p0 = pfn(&s, 0);
    assert_eq!(p0 % 4, 0);
    assert!((1..4).all(|i| pfn(&s, i) == p0 + i));
    // The last fault's walk found the four PTEs coalescible.
    assert_eq!((stats(&s).walks_4k, stats(&s).walks_16k), (3, 1));
    for i in 0..4 {
        read(&mut s, vma, i);
    }
    assert_eq!(stats(&s).dtlb_load_misses, 4);
}

/// A PMD THP shared by fork whose middle the parent zapped (pages
/// 10..14): the parent's PMD is split (v6.12 `__split_huge_pmd`), so its
/// walks find 4 KiB PTEs; the child's PMD is intact, one 2 MiB entry. The
/// folio's PARTIALLY_MAPPED flag is clear (the child maps every page), so
/// the walk size is read from each VMA's own PTEs: with the flag, the
/// parent's walks were taken as 2 MiB.
#[test]
fn a_fork_familys_split_pmd_walks_4k_and_the_intact_one_2m() {
    let thp = ThpConfig {
        enabled: ThpEnabled::Always,
        ..Default::default()
    };
    let mut s = tlb_machine(thp, tlb_on());
    let p = s.add_task("parent");
    let a = s.mmap_anon(p, 512).unwrap();
    touch(&mut s, a, 1);
    let c = s.fork_task(p).unwrap();
    let ca = s.tasks[c as usize].vmas[0];
    s.step(&Event::Discard {
        vma: a,
        index: 10,
        pages: 4,
    });
    assert_eq!(s.vm.thp_split_pmd, 1);
    let r0 = stats(&s);
    for i in [0, 256, 511] {
        read(&mut s, a, i);
    }
    let r1 = stats(&s);
    assert_eq!(
        (r1.walks_4k - r0.walks_4k, r1.walks_2m - r0.walks_2m),
        (3, 0)
    );
    for i in [0, 256, 511] {
        read(&mut s, ca, i);
    }
    let r2 = stats(&s);
    assert_eq!(
        (r2.walks_4k - r1.walks_4k, r2.walks_2m - r1.walks_2m),
        (0, 1)
    );
    s.check_invariants().unwrap();
}
