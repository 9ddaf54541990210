//! Rule tests of `Event::Discard` (`madvise(MADV_DONTNEED)`, `crate::madvise`)
//! and the deferred split queue (`crate::huge_memory`): zapped order-0 pages
//! are freed, a large folio unmapped in part is queued once
//! (`split_deferred`, `thp_deferred_split_page`), the shrinker splits it at
//! a low enough priority and frees the unmapped pages, a whole folio zapped
//! is freed at once, and a huge zero PMD zapped in part is split.

use super::*;
use crate::huge_memory::{ThpConfig, ThpEnabled, ThpSizeConfig, ThpSizeEnabled};
use crate::mem::pagetable::{PTE_FOLIO_MASK, PTE_PRESENT};

fn thp_machine(memory_pages: u64, thp: ThpConfig, zero_page: bool) -> Sim {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(memory_pages),
        zero_page,
        thp,
        ..Default::default()
    };
    cfg.policy.name = PolicyName::Cost;
    Sim::new(cfg).unwrap()
}

fn thp_64k() -> ThpConfig {
    ThpConfig {
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    }
}

/// Pages taken from the zone (the zero page takes none).
fn used(s: &Sim) -> u64 {
    s.node.managed - s.node.free
}

fn discard(s: &mut Sim, vma: u32, index: u32, pages: u32) {
    s.step(&Event::Discard { vma, index, pages });
}

fn queued(s: &Sim) -> u64 {
    s.thp.split_queues.iter().map(|q| q.len).sum()
}

#[test]
fn discarded_order_0_pages_are_freed_and_fault_afresh() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 16).unwrap();
    touch(&mut s, vma, 8);
    let free = s.node.free;
    discard(&mut s, vma, 2, 3);
    assert_eq!(s.node.free, free + 3);
    assert_eq!(used(&s), 5);
    assert_eq!(s.folios.live(), 5);
    for i in 2..5 {
        assert_eq!(s.vmas[vma as usize].pte(i), 0);
    }
    assert_eq!(s.vm.pgfault, 8);
    fault_anon(&mut s, vma, 3);
    assert_eq!(s.vm.pgfault, 9);
    // Past the end: cut at it; starting past it: out of range.
    discard(&mut s, vma, 6, 100);
    assert_eq!(used(&s), 4);
    discard(&mut s, vma, 16, 1);
    assert_eq!(s.acc.out_of_range, 1);
    s.check_invariants().unwrap();
}

#[test]
fn a_partly_discarded_64k_folio_is_queued_for_a_deferred_split_once() {
    let mut s = thp_machine(8192, thp_64k(), false);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 4);
    discard(&mut s, vma, 4, 4);
    // Still whole and charged: only its PTEs went.
    assert_eq!(used(&s), 16);
    assert_eq!(s.folios[f].mapcount, 12);
    assert!(s.folios[f].test(flags::PARTIALLY_MAPPED));
    assert_eq!(s.thp.stats[4].split_deferred, 1);
    assert_eq!(queued(&s), 1);
    // A 64K folio is not PMD-mappable: no thp_deferred_split_page.
    assert_eq!(s.vm.thp_deferred_split_page, 0);
    discard(&mut s, vma, 8, 2);
    assert_eq!(s.thp.stats[4].split_deferred, 1);
    assert_eq!(queued(&s), 1);
    assert_eq!(s.folios[f].mapcount, 10);
    let r = s.finish();
    let m = r.mthp.iter().find(|m| m.size == "64kB").unwrap();
    assert_eq!(
        (m.stats.split_deferred, m.stats.nr_anon_partially_mapped),
        (1, 1)
    );
}

#[test]
fn the_shrinker_splits_at_a_low_priority_and_frees_the_unmapped_pages() {
    let mut s = thp_machine(8192, thp_64k(), false);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    fault_anon(&mut s, vma, 0);
    // Every page written: v6.12's split maps zero-filled ones to the zero page (split_zeropage.rs).
    touch(&mut s, vma, 16);
    discard(&mut s, vma, 4, 6);
    let free = s.node.free;
    // One queued folio: (1 >> 12) * 2 = 0 to scan at the default priority.
    assert_eq!(s.shrink_slab_deferred_split(0, 12), 0);
    assert_eq!(queued(&s), 1);
    // At priority 0: (1 >> 0) * 2 = 2 ≥ 1 queued, so it is scanned.
    assert_eq!(s.shrink_slab_deferred_split(0, 0), 1);
    assert_eq!(queued(&s), 0);
    assert_eq!(s.thp.stats[4].split, 1);
    assert_eq!(s.vm.thp_split_page, 0);
    // The six unmapped pages went back; ten order-0 folios stay mapped.
    assert_eq!(s.node.free, free + 6);
    assert_eq!(used(&s), 10);
    assert_eq!(s.folios.live(), 10);
    for i in (0..4).chain(10..16) {
        let p = s.vmas[vma as usize].pte(i);
        assert!(p & PTE_PRESENT != 0);
        let g = p & PTE_FOLIO_MASK;
        assert_eq!((s.folios[g].order(), s.folios[g].mapcount), (0, 1));
        assert!(s.folios[g].test(flags::LRU));
    }
    s.check_invariants().unwrap();
    let r = s.finish();
    let m = r.mthp.iter().find(|m| m.size == "64kB").unwrap();
    assert_eq!(m.stats.nr_anon_partially_mapped, 0);
}

#[test]
fn a_whole_discarded_folio_is_freed_without_a_split() {
    let mut s = thp_machine(8192, thp_64k(), false);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    fault_anon(&mut s, vma, 0);
    fault_anon(&mut s, vma, 16);
    let free = s.node.free;
    discard(&mut s, vma, 0, 16);
    assert_eq!(s.node.free, free + 16);
    assert_eq!(used(&s), 16);
    assert_eq!(s.thp.stats[4].split_deferred, 0);
    assert_eq!(queued(&s), 0);
    // A range over two folios: the first whole, the second in part.
    discard(&mut s, vma, 16, 8);
    assert_eq!(s.thp.stats[4].split_deferred, 1);
    assert_eq!(used(&s), 16);
    s.check_invariants().unwrap();
}

#[test]
fn a_partly_discarded_pmd_thp_splits_its_pmd_and_counts_thp_deferred_split_page() {
    let thp = ThpConfig {
        enabled: ThpEnabled::Always,
        ..Default::default()
    };
    let mut s = thp_machine(8192, thp, false);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1024).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    let g = fault_anon(&mut s, vma, 512);
    assert_eq!((s.folios[f].order(), s.vm.thp_fault_alloc), (9, 2));
    // Every page written: v6.12's split maps zero-filled ones to the zero page (split_zeropage.rs).
    touch(&mut s, vma, 512);
    discard(&mut s, vma, 0, 256);
    assert_eq!(s.vm.thp_split_pmd, 1);
    assert_eq!(s.vm.thp_deferred_split_page, 1);
    assert_eq!(s.thp.stats[9].split_deferred, 1);
    // Again in part: the PMD is gone already.
    discard(&mut s, vma, 256, 1);
    assert_eq!(s.vm.thp_split_pmd, 1);
    assert_eq!(s.vm.thp_deferred_split_page, 1);
    // The whole second PMD: zap_huge_pmd frees it.
    discard(&mut s, vma, 512, 512);
    assert_eq!(s.vm.thp_split_pmd, 1);
    assert!(!s.folios.is_live(g) || s.folios[g].order() != 9);
    assert_eq!(used(&s), 512);
    // The shrinker at priority 0 splits the first and frees 257 pages.
    assert_eq!(s.shrink_slab_deferred_split(0, 0), 1);
    assert_eq!(s.vm.thp_split_page, 1);
    assert_eq!(used(&s), 255);
    s.check_invariants().unwrap();
}

#[test]
fn a_partly_discarded_huge_zero_pmd_is_split() {
    let thp = ThpConfig {
        enabled: ThpEnabled::Always,
        ..Default::default()
    };
    let mut s = thp_machine(8192, thp, true);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1024).unwrap();
    s.step(&Event::Access {
        vma,
        index: 0,
        write: false,
    });
    s.step(&Event::Access {
        vma,
        index: 512,
        write: false,
    });
    assert_eq!(s.vm.thp_zero_page_alloc, 1);
    discard(&mut s, vma, 0, 10);
    assert_eq!(s.vm.thp_split_pmd, 1);
    assert_eq!(s.vmas[vma as usize].pte(9), 0);
    assert_eq!(s.vmas[vma as usize].pte(10) & PTE_FOLIO_MASK, s.zero_folio);
    // A read of a zapped page maps the small zero page (the PMD is not none).
    s.step(&Event::Access {
        vma,
        index: 5,
        write: false,
    });
    assert_eq!(s.vm.pgfault, 3);
    assert_eq!(s.vm.thp_zero_page_alloc, 1);
    // The whole second huge zero PMD: zapped, not split.
    discard(&mut s, vma, 512, 512);
    assert_eq!(s.vm.thp_split_pmd, 1);
    assert_eq!(used(&s), 0);
    s.check_invariants().unwrap();
}

#[test]
fn discards_keep_the_invariants_under_reclaim_with_both_lru_designs() {
    for policy in [PolicyName::Cost, PolicyName::Mglru] {
        let mut cfg = MachineConfig {
            memory: Size::from_pages(4096),
            thp: thp_64k(),
            ..Default::default()
        };
        cfg.policy.name = policy;
        cfg.swap = DeviceConfig {
            size: Some(Size::from_pages(8192)),
            ..DeviceConfig::of(DeviceKind::Zram)
        };
        let mut s = Sim::new(cfg).unwrap();
        let t = s.add_task("t");
        let vma = s.mmap_anon(t, 16384).unwrap();
        for round in 0..3u32 {
            for i in 0..16384 {
                fault_anon(&mut s, vma, i);
                if i % 64 == 63 {
                    // Half of every other 64K block.
                    discard(&mut s, vma, i - 63 + round * 2, 8);
                }
            }
            s.check_invariants().unwrap();
        }
        let st = s.thp.stats[4];
        assert!(st.split_deferred > 100, "{policy:?}: {st:?}");
        // The shrinker split some during reclaim (6.12 splits no other way
        // but for want of swap slots).
        assert!(st.split > st.swpout_fallback, "{policy:?}: {st:?}");
        assert!(s.vm.pswpout > 0);
        s.check_invariants().unwrap();
    }
}

/// `folio_unqueue_deferred_split` (v6.12): a folio freed while queued
/// leaves the queue at once, so it takes no place in a scan, and a folio
/// that reuses its id and is queued later is met at its own place, behind
/// the folios queued before it. (Before the queue's exact removal, the
/// freed folio's entry stayed, met the new folio first and split it ahead
/// of an older one.)
#[test]
fn a_folio_freed_while_queued_leaves_the_queue_and_its_ids_next_folio_waits_its_turn() {
    let mut s = thp_machine(8192, thp_64k(), false);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let a = fault_anon(&mut s, vma, 0);
    let c = fault_anon(&mut s, vma, 16);
    discard(&mut s, vma, 4, 4);
    discard(&mut s, vma, 20, 4);
    assert_eq!(queued(&s), 2);
    // A's other pages zapped: it is freed, off the queue.
    discard(&mut s, vma, 0, 16);
    assert!(!s.folios.is_live(a));
    assert_eq!(queued(&s), 1);
    // B takes A's id and is queued behind C.
    let b = fault_anon(&mut s, vma, 0);
    assert_eq!((b, s.folios[b].order()), (a, 4));
    discard(&mut s, vma, 4, 4);
    assert_eq!(queued(&s), 2);
    // One folio scanned: C, the older.
    assert_eq!(s.deferred_split_scan(0, 1), (1, false));
    assert_eq!(s.folios[c].order(), 0);
    assert_eq!(s.folios[b].order(), 4);
    assert!(s.folios[b].test(flags::PARTIALLY_MAPPED));
    assert_eq!(queued(&s), 1);
    assert_eq!(s.thp.stats[4].split, 1);
    // Then B; then the queue is empty and the shrinker stops.
    assert_eq!(s.deferred_split_scan(0, 1), (1, false));
    assert_eq!((s.folios[b].order(), queued(&s)), (0, 0));
    assert_eq!(s.deferred_split_scan(0, 1), (0, true));
    s.check_invariants().unwrap();
}
