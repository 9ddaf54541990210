//! Rule tests of readahead (mm/readahead.c, mm/filemap.c, v6.6): the
//! on-demand window, `FADV_*` advice, context readahead, mmap read-around
//! and fault-around, `mmap_miss`, in-flight waits.

use super::*;
use crate::mem::pagetable::PTE_PRESENT;

fn read(s: &mut Sim, file: u32, index: u32, pages: u16) {
    s.step(&Event::FileRead { file, index, pages });
}

fn fault(s: &mut Sim, vma: u32, index: u32) {
    s.step(&Event::Access {
        vma,
        index,
        write: false,
    });
}

/// The resident pages of `file` in `[0, upto)`.
fn resident(s: &Sim, file: u32, upto: u32) -> Vec<u32> {
    (0..upto)
        .filter(|&i| slot_folio(s.files[file as usize].slot(i)).is_some())
        .collect()
}

fn marked(s: &Sim, file: u32, upto: u32) -> Vec<u32> {
    resident(s, file, upto)
        .into_iter()
        .filter(|&i| s.folios[file_folio(s, file, i)].test(flags::READAHEAD))
        .collect()
}

#[test]
fn sequential_reads_ramp_the_readahead_window() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 1000).unwrap();
    // Offset 0: initial window get_init_ra_size(1, 32) = 4, async 3, mark on page 1.
    read(&mut s, file, 0, 1);
    assert_eq!(resident(&s, file, 1000), (0..4).collect::<Vec<_>>());
    assert_eq!(marked(&s, file, 1000), vec![1]);
    // Each marker pushes the window on: 4..12 (8), 12..28 (16), 28..60 (32).
    for i in 1..=12 {
        read(&mut s, file, i, 1);
    }
    assert_eq!(resident(&s, file, 1000), (0..60).collect::<Vec<_>>());
    assert_eq!(marked(&s, file, 1000), vec![28]);
    let ra = s.files[file as usize].ra;
    assert_eq!((ra.start, ra.size, ra.async_size), (28, 32, 32));
    assert_eq!(s.acc.file_pages_read, 60);
    assert_eq!((s.acc.accesses, s.acc.misses, s.acc.hits), (13, 1, 12));
}

#[test]
fn fadv_random_reads_exactly_the_request() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 1000).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    read(&mut s, file, 0, 1);
    read(&mut s, file, 1, 1);
    read(&mut s, file, 100, 8);
    let mut want = vec![0, 1];
    want.extend(100..108);
    assert_eq!(resident(&s, file, 1000), want);
    assert!(marked(&s, file, 1000).is_empty());
    // One lookup miss per read that found nothing; the 8-page read is one IO.
    assert_eq!((s.acc.accesses, s.acc.misses), (10, 3));
}

#[test]
fn small_random_read_without_history_reads_one_page() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 1000).unwrap();
    read(&mut s, file, 500, 1);
    read(&mut s, file, 100, 1);
    assert_eq!(resident(&s, file, 1000), vec![100, 500]);
}

#[test]
fn context_readahead_follows_cached_history() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 1000).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    read(&mut s, file, 95, 5);
    read(&mut s, file, 900, 1);
    s.fadvise(file, Advice::Normal).unwrap();
    // Five cached pages before 100 (> req 1): window min(5 + 1, 32) = 6, async 1.
    read(&mut s, file, 100, 1);
    assert_eq!(resident(&s, file, 900), (95..106).collect::<Vec<_>>());
    assert_eq!(marked(&s, file, 1000), vec![105]);
}

#[test]
fn fadv_sequential_doubles_the_window_limit() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 4000).unwrap();
    s.fadvise(file, Advice::Sequential).unwrap();
    assert_eq!(s.files[file as usize].ra.ra_pages, 64);
    // Windows 4, 8, 16, 32, 64: the last starts at 60.
    for i in 0..=28 {
        read(&mut s, file, i, 1);
    }
    let ra = s.files[file as usize].ra;
    assert_eq!((ra.start, ra.size), (60, 64));
    assert_eq!(resident(&s, file, 4000), (0..124).collect::<Vec<_>>());
}

#[test]
fn oversize_read_uses_the_device_io_size() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 4000).unwrap();
    // A 256-page read at offset 0: max_pages = min(256, io_pages 320) = 256,
    // initial window 256 with its own marker merged (size 256, async 128):
    // 0..256 marked at 128. Reaching 128 pushes on by min(128, io_pages)
    // (the request's remainder): 256..384 marked at 256.
    read(&mut s, file, 0, 256);
    let ra = s.files[file as usize].ra;
    assert_eq!((ra.start, ra.size, ra.async_size), (256, 128, 128));
    assert_eq!(resident(&s, file, 4000), (0..384).collect::<Vec<_>>());
    assert_eq!(marked(&s, file, 4000), vec![256]);
}

#[test]
fn readahead_stops_at_end_of_file() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 10).unwrap();
    read(&mut s, file, 0, 1);
    read(&mut s, file, 1, 1);
    assert_eq!(resident(&s, file, 10), (0..10).collect::<Vec<_>>());
    assert_eq!(s.acc.file_pages_read, 10);
    // The second window (4..12, async 8) is cut to 4..10; its mark index
    // nr - lookahead wraps below zero, so nothing is marked.
    assert!(marked(&s, file, 10).is_empty());
    // A read past the end is cut at the end, the rest counted out of range.
    read(&mut s, file, 8, 5);
    assert_eq!(s.acc.out_of_range, 3);
}

#[test]
fn readahead_pages_go_through_refault_detection() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 100).unwrap();
    let shadow = s.shadow_layout.pack(Shadow {
        eviction: 0,
        memcg_id: 1,
        workingset: true,
    });
    *s.files[file as usize].slot_mut(2) = shadow;
    read(&mut s, file, 0, 1);
    assert_eq!(resident(&s, file, 100), vec![0, 1, 2, 3]);
    assert_eq!(s.vm.workingset_refault_file, 1);
    assert_eq!(s.vm.workingset_activate_file, 1);
    assert_eq!(list_of(&s, file_folio(&s, file, 2)), LruList::ActiveFile);
}

#[test]
fn mmap_read_around_then_fault_around() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    // A fault that holds the lock over its read (no VM_FAULT_RETRY: before
    // 5.1, or without FAULT_FLAG_ALLOW_RETRY); the retried fault is
    // `a_retried_fault_maps_what_it_read_and_read_around_goes_on`.
    s.cfg.fault_retry = false;
    let task = s.add_task("t");
    let file = s.add_file("f", 1000).unwrap();
    let vma = s.mmap_file(task, file, 0, 1000, false).unwrap();
    // Major fault at 100: read-around 84..116 (ra_pages centred), async
    // quarter marked at 84 + 32 - 8 = 108; only the faulting page is mapped.
    fault(&mut s, vma, 100);
    assert_eq!(resident(&s, file, 1000), (84..116).collect::<Vec<_>>());
    assert_eq!(marked(&s, file, 1000), vec![108]);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (1, 1));
    let mapped = |s: &Sim| -> Vec<u32> {
        (0..1000)
            .filter(|&i| s.vmas[vma as usize].pte(i) & crate::mem::pagetable::PTE_PRESENT != 0)
            .collect()
    };
    assert_eq!(mapped(&s), vec![100]);
    // Minor fault at 101: fault-around maps the cached 96..112 except the
    // marked 108, and the fault is done without filemap_fault.
    fault(&mut s, vma, 101);
    let want: Vec<u32> = (96..112).filter(|&i| i != 108).collect();
    assert_eq!(mapped(&s), want);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (2, 1));
    // Fault at 108: cached and marked: async readahead of the next window,
    // 116..148, marked at 116.
    fault(&mut s, vma, 108);
    assert_eq!(resident(&s, file, 1000), (84..148).collect::<Vec<_>>());
    assert_eq!(marked(&s, file, 1000), vec![116]);
    assert_eq!(s.vm.pgmajfault, 1);
}

#[test]
fn madv_random_mapping_faults_one_page_at_a_time() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let task = s.add_task("t");
    let file = s.add_file("f", 1000).unwrap();
    let vma = s.mmap_file(task, file, 0, 1000, false).unwrap();
    s.madvise(vma, Advice::Random).unwrap();
    fault(&mut s, vma, 100);
    fault(&mut s, vma, 101);
    assert_eq!(resident(&s, file, 1000), vec![100, 101]);
    assert_eq!(s.vm.pgmajfault, 2);
}

#[test]
fn mmap_miss_beyond_lotsamiss_stops_read_around() {
    // Fault-around off, and misses add up only when the fault is not
    // retried (a retry finds its page cached: `do_async_mmap_readahead`
    // takes one off again).
    let (mut s, vma) = hundred_misses(|s| {
        s.cfg.fault_around_bytes = 4096;
        s.cfg.fault_retry = false;
    });
    assert_eq!(s.vma_ra(vma).mmap_miss, 100);
    // The 101st miss makes mmap_miss 101 > MMAP_LOTSAMISS: just the page.
    fault(&mut s, vma, 100 * 64 + 16);
    assert_eq!(s.acc.file_pages_read, 100 * 32 + 1);
}

/// 100 read faults 64 pages apart on an uncached 8000-page file mapping
/// of a machine `configure`d first, each a miss whose read-around reads
/// 32 pages (the first clamped at offset 0 to 0..32): (sim, vma).
fn hundred_misses(configure: impl FnOnce(&mut Sim)) -> (Sim, u32) {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    configure(&mut s);
    let task = s.add_task("t");
    let file = s.add_file("f", 8000).unwrap();
    let vma = s.mmap_file(task, file, 0, 8000, false).unwrap();
    for k in 0..100 {
        fault(&mut s, vma, k * 64 + 16);
    }
    assert_eq!(s.acc.file_pages_read, 100 * 32);
    (s, vma)
}

fn present_ptes(s: &Sim, vma: u32) -> usize {
    let v = &s.vmas[vma as usize];
    (0..v.len).filter(|&i| v.pte(i) & PTE_PRESENT != 0).count()
}

#[test]
fn a_retried_fault_maps_what_it_read_and_read_around_goes_on() {
    // Without the retry each miss maps its page alone and counts: the
    // 101st is past MMAP_LOTSAMISS and reads its page alone.
    let (mut s, vma) = hundred_misses(|s| s.cfg.fault_retry = false);
    assert_eq!(s.vma_ra(vma).mmap_miss, 100);
    assert_eq!(present_ptes(&s, vma), 100);
    fault(&mut s, vma, 100 * 64 + 16);
    assert_eq!(s.acc.file_pages_read, 100 * 32 + 1);
    // With it (filemap_fault → VM_FAULT_RETRY), the second attempt's
    // fault-around maps the 16-page block k*64+16..k*64+32 of the window
    // k*64..k*64+32 but its PG_readahead page k*64+24: 15 hits, more than
    // the miss, so mmap_miss stays 0 and the 101st miss reads its window.
    let (mut s, vma) = hundred_misses(|s| s.cfg.fault_retry = true);
    assert_eq!(s.vma_ra(vma).mmap_miss, 0);
    assert_eq!(present_ptes(&s, vma), 100 * 15);
    fault(&mut s, vma, 100 * 64 + 16);
    assert_eq!(s.acc.file_pages_read, 101 * 32);
    // A fault is counted once, retried or not.
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (101, 101));
}

#[test]
fn async_readahead_in_flight_is_waited_for() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 1000).unwrap();
    read(&mut s, file, 0, 1);
    read(&mut s, file, 1, 1); // marker: async 4..12 submitted, not waited for
    let ra = s.files[file as usize].ra;
    assert_eq!((ra.inflight_start, ra.inflight_end), (4, 12));
    assert!(s.clock < ra.inflight_done);
    read(&mut s, file, 4, 1); // must wait for the in-flight window
    assert!(s.clock >= ra.inflight_done);
}

/// A forked child's file mapping holds the parent's `struct file`
/// (`dup_mmap()` → `get_file()`), so the two share one `f_ra` (v6.12).
/// The parent's major fault at 100 reads around it, 84..116 with the mark
/// at 108 (`ra` start 84, size 32, async 8), and the parent forks. Then
/// parent and child fault the marked pages in turn: the parent's at 108 is
/// the expected mark (84 + 32 − 8): async readahead of 116..148 (start
/// 116, size 32, async 32), marked at 116; the child's at 116 finds that
/// same state's expected mark (116 + 32 − 32) and reads 148..180, marked
/// at 148; the parent's at 148 reads 180..212, the child's at 180
/// 212..244. With a copy at the fork (mmsim's before), the child's state
/// was still the read-around's, its fault at 116 no expected mark, and the
/// two diverged: windows (116, 32, 16), (132, 32, 8), (164, 32, 8) after
/// the last three faults, marks left at 156 and 188. A slot is freed
/// when its last VMA goes and reused by the next mapping.
#[test]
fn a_forked_child_shares_its_parents_file_readahead_state() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    s.cfg.fault_retry = false;
    let task = s.add_task("t");
    let file = s.add_file("f", 1000).unwrap();
    let vma = s.mmap_file(task, file, 0, 1000, false).unwrap();
    fault(&mut s, vma, 100);
    assert_eq!(resident(&s, file, 1000), (84..116).collect::<Vec<_>>());
    let child = s.fork_task(task).unwrap();
    let cvma = s.tasks[child as usize].vmas[0];
    let window = |s: &Sim, v: u32| {
        let ra = s.vma_ra(v);
        (ra.start, ra.size, ra.async_size)
    };
    let mut ends = Vec::new();
    for (v, i) in [(vma, 108), (cvma, 116), (vma, 148), (cvma, 180)] {
        fault(&mut s, v, i);
        ends.push((window(&s, v), marked(&s, file, 1000)));
    }
    assert_eq!(
        ends,
        vec![
            ((116, 32, 32), vec![116]),
            ((148, 32, 32), vec![148]),
            ((180, 32, 32), vec![180]),
            ((212, 32, 32), vec![212]),
        ]
    );
    assert_eq!(resident(&s, file, 1000), (84..244).collect::<Vec<_>>());
    assert_eq!(window(&s, vma), window(&s, cvma));
    assert_eq!(s.vmas[cvma as usize].ra_slot, s.vmas[vma as usize].ra_slot);
    s.check_invariants().unwrap();
    // The child's exit puts its hold; the parent's then frees the slot.
    let slot = s.vmas[vma as usize].ra_slot;
    s.exit_task(child).unwrap();
    assert_eq!(
        s.vmas[cvma as usize].ra_slot,
        crate::readahead::RaSlots::NONE
    );
    s.check_invariants().unwrap();
    s.exit_task(task).unwrap();
    s.check_invariants().unwrap();
    let other = s.add_task("u");
    let v2 = s.mmap_file(other, file, 0, 1000, false).unwrap();
    assert_eq!(
        s.vmas[v2 as usize].ra_slot, slot,
        "the freed slot is reused"
    );
    assert_eq!(window(&s, v2), (0, 0, 0));
}

/// `Sim::read_batch_at` (the one-page and empty batches found inline) gives
/// `filemap_get_read_batch`'s batch (`Sim::read_batch`) for every start and
/// end over a file with uncached pages, evicted pages (shadow entries), a
/// readahead marker and an asynchronous window still in flight, order-0
/// and (`fs.large_folios`) large folios, whose tail pages lie under the
/// marker and in the window.
#[test]
fn the_inline_read_batch_is_the_walked_batch() {
    for large in [false, true] {
        let mut s = if large {
            super::filefolio::lf_machine(1 << 16)
        } else {
            machine(PolicyName::Cost, 1 << 16, None)
        };
        let file = s.add_file("f", 400).unwrap();
        // The initial window 0..4 marked at 1, then the marker read: an
        // asynchronous window 4..20 (large: four order-2 folios) or 4..12
        // in flight, marked at 4, the rest of the file uncached.
        read(&mut s, file, 0, 1);
        assert_eq!(marked(&s, file, 400), vec![1], "large {large}");
        read(&mut s, file, 1, 1);
        // Pages 0 and 2 evicted: shadow entries in their slots.
        for i in [0, 2] {
            let f = file_folio(&s, file, i);
            super::filefolio::reclaim_one(&mut s, f);
        }
        let shadows: Vec<u32> = (0..400)
            .filter(|&i| {
                let slot = s.files[file as usize].slot(i);
                slot_folio(slot).is_none() && s.shadow_layout.unpack(slot).is_some()
            })
            .collect();
        assert_eq!(shadows, vec![0, 2], "large {large}");
        let ra = s.files[file as usize].ra;
        assert!(
            s.clock < ra.inflight_done,
            "large {large}: no window in flight"
        );
        let (folios, marks, window) = if large {
            (
                vec![(1, 0), (3, 0), (4, 2), (8, 2), (12, 2), (16, 2)],
                vec![4, 5, 6, 7],
                (4, 20),
            )
        } else {
            (
                [1, 3].into_iter().chain(4..12).map(|i| (i, 0)).collect(),
                vec![4],
                (4, 12),
            )
        };
        assert_eq!(super::filefolio::folios(&s, file, 400), folios);
        assert_eq!(marked(&s, file, 400), marks, "large {large}");
        assert_eq!((ra.inflight_start, ra.inflight_end), window);
        // Outcomes: empty (a hole or a shadow at pos), a one-page request
        // on a cached page, a longer request whose walk stops after one
        // page, a batch of more than one page.
        let (mut empty, mut shadow, mut one, mut stop1, mut longer) = (0, 0, 0, 0, 0);
        for pos in 0..400u32 {
            for end in pos + 1..=(pos + 40).min(400) {
                let walked = s.read_batch(file, pos, end);
                assert_eq!(
                    s.read_batch_at(crate::readahead::RaOwner::Fd(file), file, pos, end),
                    walked,
                    "large {large} {pos}..{end}"
                );
                match walked {
                    0 if shadows.contains(&pos) => shadow += 1,
                    0 => empty += 1,
                    1 if end == pos + 1 => one += 1,
                    1 => stop1 += 1,
                    _ => longer += 1,
                }
            }
        }
        // 15,220 (pos, end) pairs: 40 ends from each pos below 360, 40..1
        // from 360..400. Cached pages c (order-0: 1, 3, 4..12, c = 10;
        // large: 1, 3, 4..20, c = 18): 40c pairs, c one-page; the other
        // 39c: more than one page from 3 (its batch goes on into the
        // window) and, large, from each page but the last of an order-2
        // folio (the batch ends with the in-flight folio, all of it); one
        // page from 1 (2 is evicted) and from every other cached page (the
        // order-0 window's pages, the last page of each order-2 folio).
        // The two shadows: 80 pairs; every other pair is a hole at pos.
        let c = if large { 18 } else { 10 };
        let more = if large { 1 + 12 } else { 1 };
        assert_eq!(
            (empty, shadow, one, stop1, longer),
            (15_220 - 40 * c - 80, 80, c, 39 * (c - more), 39 * more),
            "large {large}"
        );
    }
}

/// `do_page_cache_ra`'s one-page window (without its loop) reads as the
/// loop does: on two copies of one machine, each case through the
/// one-page step and through the loop leaves the same folios, marks,
/// counters and clock and returns the same completion time: a cached page
/// (nothing read), an uncached one with lookahead 0 and 1 (marked), one
/// whose slot holds a shadow (its refault), and the file's last page.
#[test]
fn a_one_page_window_reads_as_the_loop() {
    let setup = || {
        let mut s = machine(PolicyName::Cost, 1 << 16, None);
        let file = s.add_file("f", 400).unwrap();
        read(&mut s, file, 0, 1);
        let f = file_folio(&s, file, 2);
        super::filefolio::reclaim_one(&mut s, f);
        (s, file)
    };
    let (mut one, file) = setup();
    let (mut looped, _) = setup();
    let slot = one.files[file as usize].slot(2);
    assert!(slot_folio(slot).is_none() && one.shadow_layout.unpack(slot).is_some());
    let mut read_pages = Vec::new();
    for (index, lookahead) in [(0, 0), (1, 1), (10, 0), (11, 1), (2, 0), (399, 1)] {
        let a = one.do_page_cache_ra(file, index, 1, lookahead);
        let b = looped.ra_loop(file, index, 1, lookahead);
        assert_eq!(a, b, "{index} {lookahead}");
        assert_eq!(one.clock, looped.clock, "{index} {lookahead}");
        assert_eq!(
            (resident(&one, file, 400), marked(&one, file, 400)),
            (resident(&looped, file, 400), marked(&looped, file, 400)),
            "{index} {lookahead}"
        );
        assert_eq!(one.acc.file_pages_read, looped.acc.file_pages_read);
        read_pages.push(one.acc.file_pages_read);
    }
    // Two cached pages read nothing; four pages read one each.
    assert_eq!(read_pages, vec![4, 4, 5, 6, 7, 8]);
    assert_eq!(marked(&one, file, 400), vec![1, 11, 399]);
    assert_eq!(one.do_page_cache_ra(file, 400, 1, 0), 0);
}
