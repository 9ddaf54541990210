//! Rule tests of the zero page (`machine.zero_page`, `crate::fault`): a read
//! fault on anonymous memory maps the shared zero page (no folio, no charge,
//! no LRU entry; `pgfault` counted), a later write copies it into a new
//! order-0 folio (`wp_page_copy`, also under multi-size THP), and the huge
//! zero page of a PMD read fault (`do_huge_pmd_anonymous_page`) is split by
//! a write (`thp_split_pmd`).

use super::*;
use crate::huge_memory::{ThpConfig, ThpEnabled, ThpSizeConfig, ThpSizeEnabled};
use crate::mem::folio::NIL;
use crate::mem::pagetable::{PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT};

/// [`thp_machine`](super::thp::thp_machine) with the zero page on.
fn zero_machine(memory_pages: u64, swap_pages: Option<u64>, thp: ThpConfig) -> Sim {
    super::thp::thp_machine_with(memory_pages, swap_pages, thp, |c| c.zero_page = true)
}

/// Pages taken from the zone (the zero page takes none).
fn used(s: &Sim) -> u64 {
    s.node.managed - s.node.free
}

fn read(s: &mut Sim, vma: u32, index: u32) {
    s.step(&Event::Access {
        vma,
        index,
        write: false,
    });
}

fn pte_folio(s: &Sim, vma: u32, index: u32) -> FolioId {
    let p = s.vmas[vma as usize].pte(index);
    assert!(p & PTE_PRESENT != 0, "page {index} not present");
    p & PTE_FOLIO_MASK
}

#[test]
fn a_read_fault_maps_the_zero_page_without_a_folio_or_a_charge() {
    let mut s = zero_machine(4096, None, ThpConfig::default());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let free = s.node.free;
    read(&mut s, vma, 3);
    read(&mut s, vma, 9);
    // Two faults; the second read of page 3 is a hit.
    read(&mut s, vma, 3);
    assert_eq!(s.vm.pgfault, 2);
    assert_eq!(s.memcgs[0].stat.pgfault, 2);
    assert_ne!(s.zero_folio, NIL);
    assert_eq!(pte_folio(&s, vma, 3), s.zero_folio);
    assert_eq!(pte_folio(&s, vma, 9), s.zero_folio);
    // Mapped clean (write-protected), so a store faults.
    assert_eq!(s.vmas[vma as usize].pte(3) & PTE_DIRTY, 0);
    // Nothing allocated, charged or put on a list.
    assert_eq!(s.node.free, free);
    assert_eq!(used(&s), 0);
    assert_eq!(s.folios.live(), 1);
    assert_eq!(s.folios.lru(s.zero_folio), crate::mem::folio::NO_LIST);
    // Its frame is below the zone: no free page, not in `mem_map`.
    let zero_pfn = s.folios.head_pfn(s.zero_folio);
    assert_eq!(zero_pfn, crate::page_alloc::ZERO_PAGE_PFN);
    assert!(!s.phys.in_zone(zero_pfn));
    assert_eq!((s.phys.free_pages(), s.framed_pages()), (s.node.free, 0));
    s.ensure_mem_map();
    s.check_invariants().unwrap();
}

#[test]
fn without_the_setting_a_read_fault_allocates_as_before() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    read(&mut s, vma, 3);
    assert_eq!(s.zero_folio, NIL);
    assert_eq!(used(&s), 1);
    assert_eq!(s.folios.live(), 1);
}

#[test]
fn a_write_after_a_read_allocates_an_order_0_folio() {
    let mut s = zero_machine(4096, None, ThpConfig::default());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let free = s.node.free;
    read(&mut s, vma, 3);
    read(&mut s, vma, 4);
    let f = fault_anon(&mut s, vma, 3);
    // The read fault, then the write-protect fault of the copy.
    assert_eq!(s.vm.pgfault, 3);
    assert_ne!(f, s.zero_folio);
    assert_eq!(s.folios[f].order(), 0);
    assert_eq!(s.folios[f].mapcount, 1);
    assert!(s.folios[f].test(flags::LRU) && s.folios[f].test(flags::SWAPBACKED));
    assert_eq!(s.vmas[vma as usize].pte(3) & PTE_DIRTY, PTE_DIRTY);
    assert_eq!(s.node.free, free - 1);
    assert_eq!(used(&s), 1);
    // The neighbour still maps the zero page.
    assert_eq!(pte_folio(&s, vma, 4), s.zero_folio);
    // A second write is a hit.
    fault_anon(&mut s, vma, 3);
    assert_eq!(s.vm.pgfault, 3);
    s.check_invariants().unwrap();
}

#[test]
fn under_mthp_a_read_maps_the_zero_page_and_its_copy_is_order_0() {
    let thp = ThpConfig {
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        hugepages_16kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    };
    let mut s = zero_machine(8192, None, thp);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 256).unwrap();
    read(&mut s, vma, 96);
    assert_eq!(pte_folio(&s, vma, 96), s.zero_folio);
    assert_eq!(s.thp.stats[4].anon_fault_alloc, 0);
    // The copy is order 0 (wp_page_copy never allocates a large folio).
    let f = fault_anon(&mut s, vma, 96);
    assert_eq!(s.folios[f].order(), 0);
    // A write to a none PTE of the same 64K block: the zero PTE at 96 drops
    // 64K (`pte_range_none`), the 16K block 100..103 is all none.
    let g = fault_anon(&mut s, vma, 101);
    assert_eq!(s.folios[g].order(), 2);
    assert_eq!(s.folios[g].index, 100);
    assert_eq!(
        (
            s.thp.stats[4].anon_fault_alloc,
            s.thp.stats[2].anon_fault_alloc
        ),
        (0, 1)
    );
    // A write elsewhere still gets 64K.
    let h = fault_anon(&mut s, vma, 130);
    assert_eq!(s.folios[h].order(), 4);
    assert_eq!(used(&s), 1 + 4 + 16);
    s.check_invariants().unwrap();
}

#[test]
fn a_pmd_read_fault_maps_the_huge_zero_page_and_a_write_splits_it() {
    let thp = ThpConfig {
        enabled: ThpEnabled::Always,
        ..Default::default()
    };
    let mut s = zero_machine(8192, None, thp);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1024).unwrap();
    let free = s.node.free;
    read(&mut s, vma, 5);
    assert_eq!(s.vm.thp_zero_page_alloc, 1);
    assert_eq!(s.vm.pgfault, 1);
    // The whole PMD is mapped: reading the rest of it faults no more.
    for i in 0..512 {
        read(&mut s, vma, i);
        assert_eq!(pte_folio(&s, vma, i), s.zero_folio);
    }
    assert_eq!(s.vm.pgfault, 1);
    assert_eq!((s.vm.thp_fault_alloc, s.vm.thp_fault_fallback), (0, 0));
    assert_eq!(s.node.free, free);
    // A write splits the huge zero PMD and copies one page.
    let f = fault_anon(&mut s, vma, 7);
    assert_eq!(s.folios[f].order(), 0);
    assert_eq!(s.vm.thp_split_pmd, 1);
    assert_eq!(s.vm.pgfault, 2);
    assert_eq!(pte_folio(&s, vma, 8), s.zero_folio);
    // A second write in the split range splits nothing more.
    fault_anon(&mut s, vma, 9);
    assert_eq!(s.vm.thp_split_pmd, 1);
    // The next PMD's read fault reuses the huge zero page.
    read(&mut s, vma, 600);
    assert_eq!(s.vm.thp_zero_page_alloc, 1);
    assert_eq!(pte_folio(&s, vma, 1023), s.zero_folio);
    // A write fault on an untouched PMD still allocates a THP.
    s.check_invariants().unwrap();
}

#[test]
fn use_zero_page_off_maps_the_small_zero_page_on_a_pmd_read_fault() {
    let thp = ThpConfig {
        enabled: ThpEnabled::Always,
        use_zero_page: false,
        ..Default::default()
    };
    let mut s = zero_machine(8192, None, thp);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1024).unwrap();
    read(&mut s, vma, 5);
    read(&mut s, vma, 6);
    assert_eq!(s.vm.thp_zero_page_alloc, 0);
    assert_eq!(s.vm.pgfault, 2);
    assert_eq!(s.vmas[vma as usize].pte(7), 0);
    // A write fault on a none PTE of that PMD: the PMD path needs all 512
    // PTEs none, so no THP.
    let f = fault_anon(&mut s, vma, 200);
    assert_eq!(s.folios[f].order(), 0);
    assert_eq!(s.vm.thp_fault_alloc, 0);
}

#[test]
fn zero_pages_survive_reclaim_untouched() {
    let mut s = zero_machine(4096, Some(16384), ThpConfig::default());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 16384).unwrap();
    for i in 0..16384 {
        if i % 2 == 0 {
            read(&mut s, vma, i);
        } else {
            fault_anon(&mut s, vma, i);
        }
    }
    s.check_invariants().unwrap();
    // Reclaim swapped out written pages only; every read page is still the zero page.
    assert!(s.vm.pswpout > 0);
    for i in (0..16384).step_by(2) {
        assert_eq!(pte_folio(&s, vma, i), s.zero_folio);
    }
}

#[test]
fn an_oom_kill_unmaps_zero_pages_and_frees_the_rest() {
    let mut s = zero_machine(4096, None, ThpConfig::default());
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 16384).unwrap();
    for i in 0..16384 {
        if i % 2 == 0 {
            read(&mut s, vma, i);
        } else {
            fault_anon(&mut s, vma, i);
        }
    }
    assert_eq!(s.vm.oom_kill, 1);
    s.check_invariants().unwrap();
    // Only the zero page is left.
    assert_eq!(s.folios.live(), 1);
    assert_eq!(s.node.free, s.node.managed);
}
