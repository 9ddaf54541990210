//! Readahead folios locked until their read completes
//! (`crate::readahead::read_lock`, `machine.fs.ra_lock_until_read`; v6.12
//! `filemap_add_folio` adds them locked, `folio_end_read` at the read's
//! completion unlocks them): reclaim's `folio_trylock()` fails and keeps
//! them (`goto keep`, not counted in `nr_scanned`), a task that finds one
//! in the page cache waits for the read, and large folios of
//! `page_cache_ra_order` are locked too. Without the option the lock ends
//! with the order-0 batch (mmsim's earlier rule, every default result
//! unchanged).

use super::filefolio::lf_config;
use super::*;

/// A 8192-page machine (`cost`, `ra_lock_until_read` = `lock`) whose one
/// task reads pages 0 and 1 of a 64-page file: page 0's synchronous window
/// 0..4 (waited for), then the marker at page 1 starts the asynchronous
/// window 4..12, submitted and not waited for. Returns the machine, the
/// file and that read's completion time.
fn async_window_in_flight(lock: bool) -> (Sim, u32, u64) {
    let mut s = machine(PolicyName::Cost, 8192, None);
    s.cfg.fs.ra_lock_until_read = lock;
    let task = s.add_task("reader");
    let file = s.add_file("f", 64).unwrap();
    s.open(file, task).unwrap();
    read_pages_0_and_1(&mut s, file);
    let ra = s.files[file as usize].ra;
    assert_eq!((ra.inflight_start, ra.inflight_end), (4, 12));
    assert!(s.clock < ra.inflight_done);
    (s, file, ra.inflight_done)
}

/// One-page reads of pages 0 and 1 of `file`: page 0's synchronous window,
/// then the marker at page 1 starts the asynchronous one.
fn read_pages_0_and_1(s: &mut Sim, file: u32) {
    for index in [0, 1] {
        s.step(&Event::FileRead {
            file,
            index,
            pages: 1,
        });
    }
}

#[test]
fn reclaim_keeps_a_readahead_folio_until_its_read_completes() {
    let (mut s, file, done) = async_window_in_flight(true);
    // The synchronous read of 0..4 completed (its reader waited) and was
    // retired when the asynchronous one was submitted: one read in flight.
    assert_eq!(s.ra_reads.len(), 1);
    // Page 4, read in flight: `folio_trylock()` fails, kept, not scanned.
    let f4 = file_folio(&s, file, 4);
    isolate(&mut s, f4);
    let (reclaimed, scanned, left, _) = shrink_isolated(&mut s, f4);
    assert_eq!((reclaimed, scanned, left), (0, 0, 1));
    assert_eq!(s.ra_read_pending(f4), done);
    // Page 0, read complete: reclaimed.
    let f0 = file_folio(&s, file, 0);
    isolate(&mut s, f0);
    let (reclaimed, scanned, left, _) = shrink_isolated(&mut s, f0);
    assert_eq!((reclaimed, scanned, left), (1, 1, 0));
    // At the read's completion time the window's folios are unlocked and
    // the read retired: page 5 is reclaimed.
    s.clock = done;
    let f5 = file_folio(&s, file, 5);
    isolate(&mut s, f5);
    let (reclaimed, scanned, left, _) = shrink_isolated(&mut s, f5);
    assert_eq!((reclaimed, scanned, left), (1, 1, 0));
    assert_eq!(s.ra_reads.len(), 0);
    assert_eq!(s.ra_read_pending(f4), 0);
    assert!(!s.ra_locked(f4));
}

#[test]
fn without_the_option_the_lock_ends_with_the_batch() {
    // The default: the window's folios are unlocked once its batch is
    // submitted, so reclaim takes page 4 before it was read.
    let (mut s, file, _) = async_window_in_flight(false);
    assert_eq!(s.ra_reads.len(), 0);
    let f4 = file_folio(&s, file, 4);
    isolate(&mut s, f4);
    let (reclaimed, scanned, left, _) = shrink_isolated(&mut s, f4);
    assert_eq!((reclaimed, scanned, left), (1, 1, 0));
}

/// Another open file of the same file reads page 5 while the first one's
/// asynchronous window 4..12 is in flight: its own `f_ra` has no window in
/// flight, but the folio is locked, so it waits until the read completes
/// (`filemap_update_page`); without the option it reads the page at once.
#[test]
fn another_reader_waits_for_a_read_in_flight() {
    for lock in [true, false] {
        let mut s = machine(PolicyName::Cost, 8192, None);
        s.cfg.fs.ra_lock_until_read = lock;
        let task = s.add_task("t");
        let file = s.add_file("f", 64).unwrap();
        let a = s.open_file(file, task).unwrap();
        let b = s.open_file(file, task).unwrap();
        for (fd, index) in [(a, 0), (a, 1)] {
            s.step(&Event::FdRead {
                fd,
                index,
                pages: 1,
            });
        }
        let done = s.fd_ra(a).unwrap().inflight_done;
        let (t0, wait0) = (s.clock, s.io_wait_ns);
        assert!(t0 < done);
        s.step(&Event::FdRead {
            fd: b,
            index: 5,
            pages: 1,
        });
        let waited = s.io_wait_ns - wait0;
        if lock {
            assert_eq!(waited, done - t0, "lock");
        } else {
            assert_eq!(waited, 0, "no lock");
        }
        assert_eq!(s.acc.hits, 2, "{lock}");
    }
}

/// With large folios (v6.18 `page_cache_ra_order`), the asynchronous
/// window's large folios are locked until read: reclaim keeps the order-2
/// folio at page 4 until the read completes.
#[test]
fn a_large_readahead_folio_is_locked_until_read() {
    let mut cfg = lf_config(1 << 16);
    cfg.fs.ra_lock_until_read = true;
    let mut s = Sim::new(cfg).unwrap();
    let task = s.add_task("t");
    let file = s.add_file("f", 1024).unwrap();
    s.open(file, task).unwrap();
    read_pages_0_and_1(&mut s, file);
    let ra = s.files[file as usize].ra;
    let done = ra.inflight_done;
    assert!(s.clock < done);
    let f = file_folio(&s, file, ra.inflight_start);
    assert_eq!(
        (ra.inflight_start, ra.inflight_end, s.folios[f].order()),
        (4, 20, 2)
    );
    isolate(&mut s, f);
    let (reclaimed, scanned, left, _) = shrink_isolated(&mut s, f);
    assert_eq!((reclaimed, scanned, left), (0, 0, 1));
    s.clock = done;
    let (reclaimed, scanned, left, _) = shrink_isolated(&mut s, f);
    assert_eq!((reclaimed, scanned, left), (4, 4, 0));
}

/// Fault-around (`filemap_map_pages` → `next_uptodate_folio`:
/// `folio_trylock()` fails) does not map a folio whose read is in flight.
#[test]
fn fault_around_skips_a_locked_folio() {
    let (mut s, file, done) = async_window_in_flight(true);
    let vma = s.mmap_file(0, file, 0, 64, false).unwrap();
    // A fault on page 2 (cached, read complete) maps the fault-around
    // window 0..16 but the pages whose read is in flight.
    s.step(&Event::Access {
        vma,
        index: 2,
        write: false,
    });
    let mapped: Vec<u32> = (0..16)
        .filter(|&i| s.vmas[vma as usize].pte(i) != 0)
        .collect();
    assert_eq!(mapped, [0, 1, 2, 3]);
    assert!(s.clock < done);
}
