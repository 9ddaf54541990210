//! Rule tests of `Event::Remap` (`crate::mmap`): `munmap` and `mmap` of a
//! whole VMA in its place — nothing faulted, the populated part zapped, the
//! page tables gone, the task's VMA count the same.

use super::*;
use crate::mem::pagetable::PTE_PRESENT;

fn remap(s: &mut Sim, vma: u32) {
    s.step(&Event::Remap { vma });
}

#[test]
fn a_remap_of_an_untouched_vma_costs_two_system_calls_and_faults_nothing() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 32768).unwrap();
    let (free, clock) = (s.node.free, s.clock);
    for _ in 0..10 {
        remap(&mut s, vma);
    }
    assert_eq!(s.clock - clock, 10 * 2 * s.cost.fd_access_ns);
    assert_eq!((s.vm.pgfault, s.vm.pgalloc_normal, s.vm.pgfree), (0, 0, 0));
    assert_eq!(s.node.free, free);
    assert_eq!(s.map_count(t), Some(1));
    assert_eq!(s.acc.accesses, 0);
    assert!(s.vmas[vma as usize].ptes.is_empty());
}

#[test]
fn a_remap_frees_what_the_vma_mapped_and_the_next_access_faults() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    touch(&mut s, vma, 8);
    assert_eq!(s.memcg_report(0).anon, 8);
    remap(&mut s, vma);
    assert_eq!(s.memcg_report(0).anon, 0);
    assert_eq!(s.vm.pgfree, 8);
    assert!(s.vmas[vma as usize].ptes.is_empty());
    assert_eq!(s.mm_counters(t).unwrap(), crate::MmCounters::default());
    fault_anon(&mut s, vma, 3);
    assert_eq!(s.vm.pgfault, 9);
    assert_ne!(s.vmas[vma as usize].pte(3) & PTE_PRESENT, 0);
    s.check_invariants().unwrap();
}

#[test]
fn a_remap_of_a_private_file_mapping_frees_the_copies_and_keeps_the_cache() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let t = s.add_task("t");
    let file = s.add_file("f", 16).unwrap();
    let vma = s.mmap_file_private(t, file, 0, 16).unwrap();
    s.madvise(vma, Advice::Random).unwrap();
    for i in 0..4 {
        fault_anon(&mut s, vma, i);
    }
    let r = s.memcg_report(0);
    assert_eq!((r.anon, r.file), (4, 4));
    remap(&mut s, vma);
    let r = s.memcg_report(0);
    assert_eq!((r.anon, r.file), (0, 4));
    // The advice stays with the mapping; the cached pages copy on a minor fault.
    assert_eq!(s.vmas[vma as usize].ra_advice, Advice::Random);
    fault_anon(&mut s, vma, 2);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (5, 4));
    s.check_invariants().unwrap();
}

#[test]
fn a_remap_of_an_unknown_vma_counts_out_of_range() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    remap(&mut s, 7);
    assert_eq!(s.acc.out_of_range, 1);
}
