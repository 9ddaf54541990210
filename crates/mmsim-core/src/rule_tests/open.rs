//! Rule tests of open files (`crate::open`, fs/open.c and mm/fadvise.c of
//! v6.12): each `open()` has its own `file->f_ra`, advice is per open
//! file, and a mapping reads around in the `f_ra` of the open it was made
//! from.

use super::*;

fn fd_read(s: &mut Sim, fd: u32, index: u32) {
    s.step(&Event::FdRead {
        fd,
        index,
        pages: 1,
    });
}

fn resident(s: &Sim, file: u32, range: std::ops::Range<u32>) -> Vec<u32> {
    range
        .filter(|&i| slot_folio(s.files[file as usize].slot(i)).is_some())
        .collect()
}

fn window(s: &Sim, fd: u32) -> (u32, u32, u32) {
    let ra = s.fd_ra(fd).unwrap();
    (ra.start, ra.size, ra.async_size)
}

/// Two readers of one file, one from page 0 and one from page 500, their
/// reads interleaved page by page (13 each).
fn two_streams(s: &mut Sim, read: impl Fn(&mut Sim, u32, u32)) {
    for i in 0..13 {
        read(s, 0, i);
        read(s, 1, 500 + i);
    }
}

/// A 1000-page file opened twice by one task: (sim, file, fd a, fd b).
fn two_opens() -> (Sim, u32, u32, u32) {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let task = s.add_task("t");
    let file = s.add_file("f", 1000).unwrap();
    let a = s.open_file(file, task).unwrap();
    let b = s.open_file(file, task).unwrap();
    (s, file, a, b)
}

#[test]
fn two_opens_of_one_file_keep_separate_windows() {
    let (mut s, file, a, b) = two_opens();
    assert_eq!((a, b), (0, 1));
    two_streams(&mut s, fd_read);
    // fd a ramps as a lone stream: 0..4, 4..12, 12..28, 28..60.
    assert_eq!(resident(&s, file, 0..500), (0..60).collect::<Vec<_>>());
    assert_eq!(window(&s, a), (28, 32, 32));
    // fd b: 500 alone (a small read with no history), 501 follows it
    // (501..505, marker 502), then 505..513 (marker 505), 513..529.
    assert_eq!(
        resident(&s, file, 500..1000),
        (500..529).collect::<Vec<_>>()
    );
    assert_eq!(window(&s, b), (513, 16, 16));
    assert_eq!(s.acc.file_pages_read, 60 + 29);
    // Misses at 0, 500 and 501 (500's read brought 500 alone).
    assert_eq!((s.acc.accesses, s.acc.misses), (26, 3));
    s.check_invariants().unwrap();
}

/// The same two streams through `Event::FileRead` share the file's one
/// state (the model before `crate::open`, kept for workloads without
/// descriptors): each read jumps away from the other's, and the shared
/// window is read at the other stream's markers (`page_cache_next_miss`
/// sizing), 95 pages instead of 89.
#[test]
fn two_streams_in_the_files_one_state_interleave() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 1000).unwrap();
    two_streams(&mut s, |s, k, i| {
        let _ = k;
        s.step(&Event::FileRead {
            file,
            index: i,
            pages: 1,
        })
    });
    assert_eq!(s.acc.file_pages_read, 95);
}

#[test]
fn fadv_random_on_one_open_leaves_the_other_alone() {
    let (mut s, file, a, b) = two_opens();
    s.fadvise_fd(a, Advice::Random).unwrap();
    for i in 500..503 {
        fd_read(&mut s, a, i);
    }
    // FMODE_RANDOM: the requests only, no window, no marker.
    assert_eq!(resident(&s, file, 0..1000), vec![500, 501, 502]);
    // fd b reads ahead as a fresh open: 0..4 at offset 0.
    fd_read(&mut s, b, 0);
    assert_eq!(resident(&s, file, 0..500), vec![0, 1, 2, 3]);
    assert_eq!(window(&s, b), (0, 4, 3));
    assert_eq!(s.acc.file_pages_read, 3 + 4);
    // FADV_RANDOM keeps ra_pages; FADV_SEQUENTIAL doubles it on that open
    // only; FADV_NORMAL restores it.
    assert_eq!(s.fd_ra(a).unwrap().ra_pages, 32);
    s.fadvise_fd(a, Advice::Sequential).unwrap();
    assert_eq!(
        (s.fd_ra(a).unwrap().ra_pages, s.fd_ra(b).unwrap().ra_pages),
        (64, 32)
    );
    s.fadvise_fd(a, Advice::Normal).unwrap();
    assert_eq!(s.fd_ra(a).unwrap().ra_pages, 32);
    assert_eq!(s.fd_ra(a).unwrap().advice, Advice::Normal);
}

#[test]
fn mmap_read_around_counts_mmap_miss_in_the_mappings_open() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    // Fault-around off and no retried fault: each miss adds one (as
    // `mmap_miss_beyond_lotsamiss_stops_read_around`).
    s.cfg.fault_around_bytes = 4096;
    s.cfg.fault_retry = false;
    let task = s.add_task("t");
    let file = s.add_file("f", 8000).unwrap();
    let a = s.open_file(file, task).unwrap();
    let b = s.open_file(file, task).unwrap();
    let v1 = s.mmap_fd(task, a, 0, 8000, false, false).unwrap();
    let v2 = s.mmap_fd(task, a, 0, 8000, false, false).unwrap();
    let own = s.mmap_file(task, file, 0, 8000, false).unwrap();
    for (vma, index) in [(v1, 1000), (v2, 3000), (v1, 5000)] {
        s.step(&Event::Access {
            vma,
            index,
            write: false,
        });
    }
    // Three misses, each a 32-page read-around centred on the fault, all
    // in fd a's f_ra (both mappings' vm_file).
    assert_eq!(s.acc.file_pages_read, 3 * 32);
    assert_eq!(s.fd_ra(a).unwrap().mmap_miss, 3);
    assert_eq!(window(&s, a), (5000 - 16, 32, 8));
    assert_eq!(s.fd_ra(b).unwrap().mmap_miss, 0);
    assert_eq!(s.vma_ra(own).mmap_miss, 0);
    // The descriptor and its two VMAs hold its slot.
    assert_eq!(s.ra_slots.refs(s.fds[a as usize].ra_slot), 3);
    s.check_invariants().unwrap();
}

#[test]
fn fadv_random_forces_a_seq_read_mappings_sync_readahead() {
    // VM_SEQ_READ: page_cache_sync_ra(ra_pages) at a miss at page 0. The
    // mapping's file has FMODE_RANDOM: force_page_cache_ra of 32 pages, no
    // PG_readahead marker. Without it, ondemand_readahead's initial window
    // of 32 (get_init_ra_size(32, 32)), merged with the next and capped at
    // 32 with async 16: the marker is page 16.
    for random in [false, true] {
        let mut s = machine(PolicyName::Cost, 1 << 16, None);
        let task = s.add_task("t");
        let file = s.add_file("f", 8000).unwrap();
        let a = s.open_file(file, task).unwrap();
        if random {
            s.fadvise_fd(a, Advice::Random).unwrap();
        }
        let vma = s.mmap_fd(task, a, 0, 8000, false, false).unwrap();
        s.madvise(vma, Advice::Sequential).unwrap();
        s.step(&Event::Access {
            vma,
            index: 0,
            write: false,
        });
        let marked: Vec<u32> = resident(&s, file, 0..8000)
            .into_iter()
            .filter(|&i| s.folios[file_folio(&s, file, i)].test(flags::READAHEAD))
            .collect();
        let expect = if random { vec![] } else { vec![16] };
        assert_eq!(marked, expect, "random {random}");
        assert_eq!(resident(&s, file, 0..8000), (0..32).collect::<Vec<_>>());
    }
}

#[test]
fn a_read_through_an_unknown_open_is_out_of_range() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let task = s.add_task("t");
    let file = s.add_file("f", 100).unwrap();
    assert!(s.open_file(file + 1, task).is_err());
    assert!(s.open_file(file, task + 1).is_err());
    s.step(&Event::FdRead {
        fd: 7,
        index: 0,
        pages: 3,
    });
    assert_eq!((s.acc.out_of_range, s.acc.accesses), (3, 0));
    assert!(s.fadvise_fd(7, Advice::Random).is_err());
    assert!(s.mmap_fd(task, 7, 0, 1, false, false).is_err());
}

/// `Sim::ra_ref`, the stored `f_ra` read in place by `page_cache_sync_ra`'s
/// forced test and `inflight_until` on every page-cache miss, is the state
/// of each kind of owner: a file's, an open's (with `FADV_RANDOM`, the
/// forced test's `FMODE_RANDOM`), and a mapping's slot, the `f_ra` of the
/// open it was made from, whose advice is that open's (`Normal` here),
/// not the VMA's `MADV_RANDOM` (`vma_ra`'s advice); the other fields are
/// `vma_ra`'s, an asynchronous window in flight included.
#[test]
fn the_stored_readahead_state_read_in_place_is_each_owners() {
    use crate::readahead::{FileRaState, RaOwner};
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let task = s.add_task("t");
    let file = s.add_file("f", 1000).unwrap();
    let a = s.open_file(file, task).unwrap();
    let b = s.open_file(file, task).unwrap();
    s.fadvise_fd(a, Advice::Random).unwrap();
    let vma = s.mmap_fd(task, b, 0, 1000, false, false).unwrap();
    s.madvise(vma, Advice::Random).unwrap();
    // a's forced read first (its synchronous wait would outlast b's window),
    // then b's initial window 0..4 marked at 1, and the marker: 4..12 in flight.
    fd_read(&mut s, a, 600);
    fd_read(&mut s, b, 0);
    fd_read(&mut s, b, 1);
    assert_eq!(window(&s, b), (4, 8, 8));
    let inflight = s.fd_ra(b).unwrap();
    assert_eq!((inflight.inflight_start, inflight.inflight_end), (4, 12));
    assert!(s.clock < inflight.inflight_done);
    assert_eq!(s.ra_ref(RaOwner::Open(a)), s.fd_ra(a).unwrap());
    assert_eq!(s.ra_ref(RaOwner::Open(a)).advice, Advice::Random);
    assert_eq!(s.ra_ref(RaOwner::Open(b)), s.fd_ra(b).unwrap());
    let (stored, own) = (*s.ra_ref(RaOwner::Vma(vma)), s.vma_ra(vma));
    assert_eq!(
        (stored.advice, own.advice),
        (Advice::Normal, Advice::Random)
    );
    assert_eq!(
        FileRaState {
            advice: stored.advice,
            ..own
        },
        stored
    );
    assert_eq!(stored, *s.fd_ra(b).unwrap());
    assert_eq!(s.ra_ref(RaOwner::Fd(file)), &s.files[file as usize].ra);
    for owner in [RaOwner::Open(a), RaOwner::Open(b), RaOwner::Vma(vma)] {
        for page in [3, 4, 11, 12] {
            let r = s.ra_ref(owner);
            let expect = if (r.inflight_start..r.inflight_end).contains(&page)
                && s.clock < r.inflight_done
            {
                r.inflight_done
            } else {
                0
            };
            assert_eq!(s.inflight_until(owner, page), expect, "{owner:?} {page}");
        }
    }
}
