//! Rule tests of PMD-mapped page-cache folios and MADV_HUGEPAGE's
//! PMD-order read-around (`crate::filemap_pmd`, v6.18). The `host_*`
//! tests replay `tools/wfprobe.c` cases whose faults, FilePmdMapped and
//! folios the 6.18 host gave (VALIDATION.md).

use super::filefolio::{folios, lf_config, reclaim_one};
use super::*;
use crate::huge_memory::VmaThpAdvice;
use crate::mem::pagetable::PTE_PRESENT;

/// A machine with large folios and PMD mappings (`machine.fs.pmd_mappings`).
fn pmd_machine() -> Sim {
    let mut cfg = lf_config(1 << 16);
    cfg.fs.pmd_mappings = true;
    Sim::new(cfg).unwrap()
}

/// A large-folio machine with a 2048-page file whose pages 0..1024 were
/// written in one 4 MiB write (two order-9 folios), mapped whole at `pgoff`.
fn written(pgoff: u32) -> (Sim, u32, u32) {
    let mut s = pmd_machine();
    let task = s.add_task("t");
    let file = s.add_file("f", 2048).unwrap();
    s.open(file, task).unwrap();
    s.step(&Event::FileWrite {
        file,
        index: 0,
        pages: 1024,
    });
    assert_eq!(folios(&s, file, 2048), vec![(0, 9), (512, 9)]);
    let vma = s
        .mmap_file(task, file, pgoff, 2048 - u64::from(pgoff), false)
        .unwrap();
    (s, file, vma)
}

/// A PMD-mapping machine with an uncached file of `pages` pages mapped
/// whole and given MADV_HUGEPAGE: (sim, file, vma).
fn hugepage_mapped(pages: u32) -> (Sim, u32, u32) {
    let mut s = pmd_machine();
    let task = s.add_task("t");
    let file = s.add_file("f", pages.into()).unwrap();
    let vma = s.mmap_file(task, file, 0, pages.into(), false).unwrap();
    s.madvise_file_hugepage(vma, VmaThpAdvice::Hugepage)
        .unwrap();
    (s, file, vma)
}

fn fault(s: &mut Sim, vma: u32, index: u32) {
    s.step(&Event::Access {
        vma,
        index,
        write: false,
    });
}

fn present(s: &Sim, vma: u32) -> Vec<u32> {
    (0..s.vmas[vma as usize].len)
        .filter(|&i| s.vmas[vma as usize].pte(i) & PTE_PRESENT != 0)
        .collect()
}

#[test]
fn a_pmd_size_folio_is_mapped_by_one_fault() {
    let (mut s, _, vma) = written(0);
    fault(&mut s, vma, 5);
    // filemap_map_pmd: all of 0..512 by one PMD, one minor fault.
    assert_eq!(present(&s, vma), (0..512).collect::<Vec<_>>());
    assert_eq!(
        (s.vm.thp_file_mapped, s.vm.pgfault, s.vm.pgmajfault),
        (1, 1, 0)
    );
    fault(&mut s, vma, 300);
    assert_eq!(s.vm.pgfault, 1);
    fault(&mut s, vma, 700);
    assert_eq!(present(&s, vma).len(), 1024);
    assert_eq!((s.vm.thp_file_mapped, s.vm.pgfault), (2, 2));
    s.check_invariants().unwrap();
}

#[test]
fn a_misaligned_file_offset_maps_ptes() {
    // VMA page 511 is file page 512, the start of an order-9 folio, but
    // the VMA's file offset (1) is not PMD-aligned: fault-around only.
    let (mut s, _, vma) = written(1);
    fault(&mut s, vma, 511);
    assert_eq!(present(&s, vma), (496..512).collect::<Vec<_>>());
    assert_eq!((s.vm.thp_file_mapped, s.vm.pgfault), (0, 1));
}

#[test]
fn nohugepage_or_a_pte_table_in_the_range_keeps_ptes() {
    let (mut s, _, vma) = written(0);
    s.madvise_file_hugepage(vma, VmaThpAdvice::Nohugepage)
        .unwrap();
    fault(&mut s, vma, 5);
    assert_eq!(present(&s, vma), (0..16).collect::<Vec<_>>());
    // Advice gone, but the PMD has a PTE table now (not pmd_none).
    s.madvise_file_hugepage(vma, VmaThpAdvice::None).unwrap();
    fault(&mut s, vma, 100);
    assert_eq!(present(&s, vma).len(), 32);
    assert_eq!(s.vm.thp_file_mapped, 0);
    // The next PMD is untouched: mapped whole.
    fault(&mut s, vma, 600);
    assert_eq!(present(&s, vma).len(), 32 + 512);
    assert_eq!(s.vm.thp_file_mapped, 1);
}

#[test]
fn madv_hugepage_reads_around_in_pmd_size_folios() {
    let (mut s, file, vma) = hugepage_mapped(4096);
    // do_sync_mmap_readahead with VM_HUGEPAGE: 512..1536 (700 rounded
    // down to 512, two PMDs), the second asynchronous and marked; order 9.
    fault(&mut s, vma, 700);
    assert_eq!(folios(&s, file, 4096), vec![(512, 9), (1024, 9)]);
    let marked = slot_folio(s.files[file as usize].slot(1024)).unwrap();
    assert!(s.folios[marked].test(flags::READAHEAD));
    assert_eq!(s.acc.file_pages_read, 1024);
    // finish_fault maps the first by a PMD.
    assert_eq!(present(&s, vma), (512..1024).collect::<Vec<_>>());
    assert_eq!((s.vm.thp_file_mapped, s.vm.pgmajfault), (1, 1));
    s.check_invariants().unwrap();
}

/// 101 misses in separate 2 MiB chunks of a MADV_HUGEPAGE mapping, each
/// chunk's PMD-size folio mapped whole by its fault: (sim, file, vma).
fn hugepage_misses(version: crate::HugepageReadaround, advice: Advice) -> (Sim, u32, u32) {
    let (mut s, file, vma) = hugepage_mapped(101 * 3 * 512);
    s.cfg.hugepage_readaround = version;
    s.madvise(vma, advice).unwrap();
    for k in 0..100 {
        fault(&mut s, vma, k * 3 * 512 + 7);
    }
    (s, file, vma)
}

#[test]
fn v6_19_counts_hugepage_misses_against_mmap_miss() {
    use crate::HugepageReadaround::{V6_18, V6_19};
    let last = 100 * 3 * 512 + 7;
    // v6.18: mmap_miss is not consulted; the 101st miss still reads its
    // 512-page window (MADV_RANDOM: one PMD, no async half).
    let (mut s, file, vma) = hugepage_misses(V6_18, Advice::Random);
    assert_eq!(s.vma_ra(vma).mmap_miss, 0);
    fault(&mut s, vma, last);
    assert_eq!(s.acc.file_pages_read, 101 * 512);
    assert_eq!(folios(&s, file, 101 * 1536).len(), 101);
    // v6.19: every PMD-mapped miss counts (a PMD mapping is not a
    // fault-around hit), so after 100 the 101st reads its page alone.
    let (mut s, file, vma) = hugepage_misses(V6_19, Advice::Random);
    assert_eq!(s.vma_ra(vma).mmap_miss, 100);
    assert_eq!(s.acc.file_pages_read, 100 * 512);
    fault(&mut s, vma, last);
    assert_eq!(s.acc.file_pages_read, 100 * 512 + 1);
    // 101, less the retried fault's fault-around hit on the page it read.
    assert_eq!(s.vma_ra(vma).mmap_miss, 100);
    assert_eq!(folios(&s, file, 101 * 1536).last(), Some(&(last, 0)));
    assert_eq!(s.vm.pgmajfault, 101);
    // MADV_SEQUENTIAL skips the count: the window is read every time.
    let (mut s, _, vma) = hugepage_misses(V6_19, Advice::Sequential);
    assert_eq!(s.vma_ra(vma).mmap_miss, 0);
    fault(&mut s, vma, last);
    assert_eq!(s.acc.file_pages_read, 101 * 1024);
    s.check_invariants().unwrap();
}

#[test]
fn without_pmd_mappings_a_pmd_size_folio_is_mapped_by_ptes() {
    let mut s = Sim::new(lf_config(1 << 16)).unwrap();
    let task = s.add_task("t");
    let file = s.add_file("f", 2048).unwrap();
    s.step(&Event::FileWrite {
        file,
        index: 0,
        pages: 1024,
    });
    let vma = s.mmap_file(task, file, 0, 2048, false).unwrap();
    fault(&mut s, vma, 5);
    assert_eq!(s.vm.thp_file_mapped, 0);
    assert_eq!(present(&s, vma), (0..16).collect::<Vec<_>>());
}

#[test]
fn pmd_mappings_are_a_filesystem_setting_that_needs_large_folios() {
    let mut cfg = lf_config(1 << 16);
    cfg.fs.large_folios = false;
    cfg.fs.pmd_mappings = true;
    let e = Sim::new(cfg).err().expect("refused");
    assert!(format!("{e}").contains("machine.fs.pmd_mappings"), "{e}");
    let mut cfg = lf_config(1 << 16);
    cfg.swap = DeviceConfig {
        size: Some(Size::from_pages(1024)),
        pmd_mappings: true,
        ..DeviceConfig::of(DeviceKind::Zram)
    };
    let e = Sim::new(cfg).err().expect("refused");
    assert!(format!("{e}").contains("machine.swap.pmd_mappings"), "{e}");
}

#[test]
fn a_pmd_mapped_folio_is_unmapped_and_reclaimed_whole() {
    let (mut s, file, vma) = hugepage_mapped(4096);
    fault(&mut s, vma, 700);
    let f = slot_folio(s.files[file as usize].slot(512)).unwrap();
    assert_eq!(reclaim_one(&mut s, f), (512, 512));
    assert!(present(&s, vma).is_empty());
    assert_eq!(s.cached_ranges(file), "1024..1536 ");
    s.check_invariants().unwrap();
}

#[test]
fn host_a_4mib_write_is_mapped_by_two_faults_and_64kib_writes_by_64() {
    // wfprobe `w0x1024 M t0x1024`: minflt 2, FilePmdMapped 4096 kB.
    let (mut s, _, vma) = written(0);
    for i in 0..1024 {
        fault(&mut s, vma, i);
    }
    assert_eq!(
        (s.vm.pgfault, s.vm.pgmajfault, s.vm.thp_file_mapped),
        (2, 0, 2)
    );
    // `w0x1024c16 M t0x1024`: order-4 folios, fault-around maps 16 pages
    // per fault: minflt 64, FilePmdMapped 0.
    let mut s = pmd_machine();
    let task = s.add_task("t");
    let file = s.add_file("f", 1024).unwrap();
    for i in (0..1024).step_by(16) {
        s.step(&Event::FileWrite {
            file,
            index: i,
            pages: 16,
        });
    }
    let vma = s.mmap_file(task, file, 0, 1024, false).unwrap();
    for i in 0..1024 {
        fault(&mut s, vma, i);
    }
    assert_eq!((s.vm.pgfault, s.vm.thp_file_mapped), (64, 0));
}

#[test]
fn host_madv_hugepage_faults_read_and_map_pmds() {
    // wfprobe `w0x1024 d M H t0x1024` (the 4 MiB file uncached): the
    // fault at 0 reads 0..1024 in two order-9 folios (major), the first is
    // mapped; page 512's folio is marked, so its fault is a minor one that
    // maps it (the async readahead finds the end of the file): majflt 1,
    // minflt 1, FilePmdMapped 4096 kB, folios 0..1024/o9.
    let (mut s, file, vma) = hugepage_mapped(1024);
    for i in 0..1024 {
        fault(&mut s, vma, i);
    }
    assert_eq!(
        (s.vm.pgfault, s.vm.pgmajfault, s.vm.thp_file_mapped),
        (2, 1, 2)
    );
    assert_eq!(folios(&s, file, 1024), vec![(0, 9), (512, 9)]);
    assert_eq!(s.acc.file_pages_read, 1024);
}
