//! Rule tests of large page-cache folios from `write()`
//! (`machine.fs.large_folios`, `crate::filemap_write`): the orders v6.18's
//! `generic_perform_write` and `__filemap_get_folio` choose, their
//! fallbacks, and the folios whole in dirty accounting, the LRU and the
//! shadows.
//!
//! The layouts of `the_host_layouts_*` are what `tools/wfprobe.c` printed
//! on the 6.18 host (ext4) for the same writes (VALIDATION.md, "Large
//! folios from write() on the 6.18 host").

use super::filefolio::{cached_0_80, folios, lf_machine, reclaim_one, shrink_alone};
use super::*;
use crate::filemap_write::write_begin_order;

fn write(s: &mut Sim, file: u32, index: u32, pages: u16) {
    s.step(&Event::FileWrite { file, index, pages });
}

/// `wfprobe`'s `w<idx>x<n>c<chunk>`: pages `idx..idx + n` in writes of
/// `chunk` pages.
fn write_chunked(s: &mut Sim, file: u32, idx: u32, n: u32, chunk: u32) {
    let mut p = idx;
    while p < idx + n {
        let k = chunk.min(idx + n - p);
        write(s, file, p, k as u16);
        p += k;
    }
}

/// `wfprobe`'s output `a..b/oK ...` as (first page, order) per folio.
fn layout(runs: &str) -> Vec<(u32, u8)> {
    let mut out = Vec::new();
    for run in runs.split_whitespace() {
        let (range, order) = run.split_once("/o").unwrap();
        let (a, b) = range.split_once("..").unwrap();
        let (a, b, o): (u32, u32, u8) = (
            a.parse().unwrap(),
            b.parse().unwrap(),
            order.parse().unwrap(),
        );
        let mut i = a;
        while i < b {
            out.push((i, o));
            i += 1 << o;
        }
        assert_eq!(i, b, "{run}");
    }
    out
}

#[test]
fn the_first_order_comes_from_the_length_and_the_alignment() {
    // fgf_set_order(bytes): ilog2 of the length, capped at 9; __ffs(index)
    // where the index is not aligned to it; order 1 is not skipped.
    assert_eq!(write_begin_order(0, 1), 0);
    assert_eq!(write_begin_order(0, 2), 1);
    assert_eq!(write_begin_order(0, 3), 1);
    assert_eq!(write_begin_order(0, 16), 4);
    assert_eq!(write_begin_order(0, 17), 4);
    assert_eq!(write_begin_order(0, 512), 9);
    assert_eq!(write_begin_order(0, 60_000), 9);
    assert_eq!(write_begin_order(3, 16), 0);
    assert_eq!(write_begin_order(4, 15), 2);
    assert_eq!(write_begin_order(8, 11), 3);
    assert_eq!(write_begin_order(2, 510), 1);
    assert_eq!(write_begin_order(512, 89), 6);
}

#[test]
fn the_host_layouts_of_chunked_and_unaligned_writes() {
    // (wfprobe ops, the host's folios). `b1000+65536` (64 KiB at byte
    // 1000) is pages 0..17 here.
    type Op = (u32, u32, u32);
    let cases: [(&str, &[Op], &str); 13] = [
        ("w0x256c16", &[(0, 256, 16)], "0..256/o4"),
        ("w0x1024c256", &[(0, 1024, 256)], "0..1024/o8"),
        ("w0x1024", &[(0, 1024, 1024)], "0..1024/o9"),
        ("w0x2048c512", &[(0, 2048, 512)], "0..2048/o9"),
        ("w0x64c2", &[(0, 64, 2)], "0..64/o1"),
        (
            "w3x64c16",
            &[(3, 64, 16)],
            "3..4/o0 4..8/o2 8..16/o3 16..18/o1 18..20/o0 20..24/o2 24..32/o3 \
             32..34/o1 34..36/o0 36..40/o2 40..48/o3 48..50/o1 50..52/o0 52..56/o2 \
             56..64/o3 64..66/o1 66..67/o0",
        ),
        (
            "w1x600",
            &[(1, 600, 600)],
            "1..2/o0 2..4/o1 4..8/o2 8..16/o3 16..32/o4 32..64/o5 64..128/o6 \
             128..256/o7 256..512/o8 512..576/o6 576..592/o4 592..600/o3 600..601/o0",
        ),
        ("b1000+65536", &[(0, 17, 17)], "0..16/o4 16..17/o0"),
        (
            "w0x8 w4x16",
            &[(0, 8, 8), (4, 16, 16)],
            "0..16/o3 16..20/o2",
        ),
        (
            "w0x4 w8x4 w0x16",
            &[(0, 4, 4), (8, 4, 4), (0, 16, 16)],
            "0..16/o2",
        ),
        ("w4x4 w0x16", &[(4, 4, 4), (0, 16, 16)], "0..8/o2 8..16/o3"),
        (
            "w5x1 w0x64",
            &[(5, 1, 1), (0, 64, 64)],
            "0..4/o2 4..6/o0 6..8/o1 8..16/o3 16..32/o4 32..64/o5",
        ),
        (
            "w0x96c3",
            &[(0, 96, 3)],
            "0..2/o1 2..4/o0 4..8/o1 8..10/o0 10..14/o1 14..16/o0 16..20/o1 20..22/o0 \
             22..26/o1 26..28/o0 28..32/o1 32..34/o0 34..38/o1 38..40/o0 40..44/o1 \
             44..46/o0 46..50/o1 50..52/o0 52..56/o1 56..58/o0 58..62/o1 62..64/o0 \
             64..68/o1 68..70/o0 70..74/o1 74..76/o0 76..80/o1 80..82/o0 82..86/o1 \
             86..88/o0 88..92/o1 92..94/o0 94..96/o1",
        ),
    ];
    for (name, ops, host) in cases {
        let mut s = lf_machine(1 << 16);
        let file = s.add_file("f", 4096).unwrap();
        for &(idx, n, chunk) in ops {
            write_chunked(&mut s, file, idx, n, chunk);
        }
        assert_eq!(folios(&s, file, 4096), layout(host), "{name}");
        s.check_invariants()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn a_written_large_folio_is_one_dirty_lru_entry_counted_in_pages() {
    let mut s = lf_machine(1 << 16);
    let file = s.add_file("f", 4096).unwrap();
    write(&mut s, file, 0, 16);
    assert_eq!(folios(&s, file, 4096), vec![(0, 4)]);
    let f = slot_folio(s.files[file as usize].slot(5)).unwrap();
    assert!(s.folios[f].test(flags::DIRTY));
    assert!(!s.folios[f].test(flags::REFERENCED));
    assert_eq!(s.nr_dirty, 16);
    assert_eq!(s.dirty_fifo.held(), 1);
    let list = &s.memcgs[0].lruvec.lists[LruList::InactiveFile as usize];
    assert_eq!((list.len, list.pages), (1, 16));
    assert_eq!(s.vm.pgalloc_normal, 16);
    // Sixteen pages written, all misses; no read.
    assert_eq!((s.acc.accesses, s.acc.misses, s.acc.hits), (16, 16, 0));
    assert_eq!(s.acc.file_pages_read, 0);
    // A rewrite of two of its pages hits the folio.
    write(&mut s, file, 6, 2);
    assert_eq!((s.acc.accesses, s.acc.hits), (18, 2));
    assert_eq!(s.nr_dirty, 16);
    s.check_invariants().unwrap();
}

#[test]
fn a_write_over_a_large_folio_shadow_makes_a_large_folio_and_no_refault() {
    // 32..48 was an order-4 readahead folio, evicted: one shadow over it.
    let (mut s, file, f) = cached_0_80();
    reclaim_one(&mut s, f);
    let refaults = s.vm.workingset_refault_file;
    // A shadow is no conflict (`-EEXIST` needs a folio); __GFP_WRITE runs
    // no refault detection.
    write(&mut s, file, 32, 16);
    let g = slot_folio(s.files[file as usize].slot(40)).unwrap();
    assert_eq!((s.folios[g].index, s.folios[g].order()), (32, 4));
    assert_eq!(s.vm.workingset_refault_file, refaults);
    assert!(!s.folios[g].test(flags::WORKINGSET));
    assert_eq!(s.nr_dirty, 16);
    s.check_invariants().unwrap();
}

#[test]
fn a_failed_large_allocation_falls_to_the_next_order() {
    // Anonymous memory (no swap: nothing to reclaim) leaves 460 free pages,
    // one order-8 block among them (buddyinfo): the order-9 try of a
    // 512-page write fails (`__GFP_NORETRY`: one reclaim pass, then the
    // min watermark), order 8 takes the block. (`write_begin` alone: the
    // write's dirtying would throttle this small machine.)
    let mut s = lf_machine(4096);
    let task = s.add_task("t");
    let file = s.add_file("f", 4096).unwrap();
    s.open(file, task).unwrap();
    let fill = s.node.free - (s.node.wmark_low + 300);
    let vma = s.mmap_anon(task, fill).unwrap();
    for index in 0..fill as u32 {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
    }
    assert_eq!(
        (s.node.free, s.node.wmark_min, s.node.wmark_low),
        (460, 128, 160)
    );
    assert_eq!(s.phys.zone.buddyinfo()[8..], [1, 0, 0]);
    let f = s.write_begin_folio(file, 0, 512).unwrap();
    assert_eq!((s.folios[f].index, s.folios[f].order()), (0, 8));
    assert_eq!(s.node.free, 460 - 256);
    assert_eq!(s.vm.oom_kill, 0);
    s.check_invariants().unwrap();
}

#[test]
fn a_failed_large_charge_falls_to_the_next_order() {
    // A group of 600 pages holding 200 anonymous ones (no swap: nothing to
    // reclaim). The order-9 charge fails after its reclaim retries, without
    // an OOM kill (above PAGE_ALLOC_COSTLY_ORDER); order 8 fits (456).
    // (`write_begin` alone: see the allocation test.)
    let mut cfg = MachineConfig {
        memory: Size::from_pages(1 << 15),
        memcg_max: Some(Size::from_pages(600)),
        ..Default::default()
    };
    cfg.fs.large_folios = true;
    let mut s = Sim::new(cfg).unwrap();
    let task = s.add_task("t");
    let file = s.add_file("f", 4096).unwrap();
    s.open(file, task).unwrap();
    let vma = s.mmap_anon(task, 200).unwrap();
    for index in 0..200 {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
    }
    s.cur_memcg = crate::memcg::ROOT;
    let f = s.write_begin_folio(file, 0, 512).unwrap();
    assert_eq!((s.folios[f].index, s.folios[f].order()), (0, 8));
    assert_eq!(s.memcgs[0].usage, 456);
    assert_eq!(s.vm.oom_kill, 0);
    s.check_invariants().unwrap();
}

#[test]
fn writes_stay_order_0_without_large_folios() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 4096).unwrap();
    write(&mut s, file, 0, 64);
    assert_eq!(
        folios(&s, file, 4096),
        (0..64).map(|i| (i, 0)).collect::<Vec<_>>()
    );
}

#[test]
fn a_dirty_large_folio_counts_its_pages_as_unqueued_dirty() {
    // shrink_folio_list(): `stat->nr_unqueued_dirty += nr_pages`, compared
    // with `nr_taken` (pages) to wake the flusher; counted per folio, a
    // reclaim of dirty large folios never woke it.
    let (mut s, file, f) = cached_0_80();
    write(&mut s, file, 40, 1);
    let (reclaimed, _, stat) = shrink_alone(&mut s, f);
    assert_eq!((reclaimed, stat.nr_unqueued_dirty), (0, 16));
}

#[test]
fn a_group_at_its_limit_takes_large_dirty_folios_without_oom() {
    // 8192 pages written in 1 MiB writes into a v1 group of 1024 pages:
    // limit reclaim finds only dirty folios, wakes the flusher and waits
    // for the writeback; every charge of 256 pages then succeeds (the
    // host's `w0x32768c256` in 32 MiB keeps order-8 folios only).
    let mut cfg = MachineConfig {
        memory: Size::from_pages(1 << 15),
        memcg_max: Some(Size::from_pages(1024)),
        cgroup_version: CgroupVersion::V1,
        ..Default::default()
    };
    cfg.fs.large_folios = true;
    let mut s = Sim::new(cfg).unwrap();
    let task = s.add_task("t");
    let file = s.add_file("f", 8192).unwrap();
    s.open(file, task).unwrap();
    write_chunked(&mut s, file, 0, 8192, 256);
    assert_eq!(s.vm.oom_kill, 0);
    assert_eq!(s.acc.accesses, 8192);
    let cached = folios(&s, file, 8192);
    assert!(cached.iter().all(|&(_, o)| o == 8), "{cached:?}");
    assert_eq!(cached.len(), 4);
    s.check_invariants().unwrap();
}
