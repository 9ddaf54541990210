//! Rule tests of writeback a task starts itself (`Event::FileSync`,
//! `crate::filemap_sync`): `sync_file_range(SYNC_FILE_RANGE_WRITE)` writes
//! the range's dirty folios and returns, `fsync()` writes the whole file
//! and waits, and a folio already under writeback is not written twice.

use crate::config::{MachineConfig, Size};
use crate::event::Event;
use crate::mem::filemap::slot_folio;
use crate::mem::folio::flags;
use crate::sim::Sim;

/// A task with a 16-page file whose pages 0..8 it has written (dirty).
fn eight_dirty_pages() -> (Sim, u32) {
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(4096),
        ..Default::default()
    })
    .unwrap();
    let t = s.add_task("t");
    let file = s.add_file("f", 16).unwrap();
    s.open(file, t).unwrap();
    s.step(&Event::FileWrite {
        file,
        index: 0,
        pages: 8,
    });
    assert_eq!(s.nr_dirty, 8);
    (s, file)
}

fn state(s: &Sim, file: u32, i: u32) -> (bool, bool) {
    let f = slot_folio(s.files[file as usize].slot(i)).unwrap();
    let fo = &s.folios[f];
    (fo.test(flags::DIRTY), fo.test(flags::WRITEBACK))
}

fn sync(s: &mut Sim, file: u32, index: u32, pages: u16, wait: bool) {
    s.step(&Event::FileSync {
        file,
        index,
        pages,
        wait,
    });
}

#[test]
fn sync_file_range_writes_the_dirty_pages_of_its_range_and_returns() {
    let (mut s, file) = eight_dirty_pages();
    let before = s.clock;
    let out = s.vm.pgpgout;
    sync(&mut s, file, 2, 4, false);
    // Pages 2..6 under writeback (clean), the others still dirty.
    for i in 0..8 {
        let expected = if (2..6).contains(&i) {
            (false, true)
        } else {
            (true, false)
        };
        assert_eq!(state(&s, file, i), expected, "page {i}");
    }
    assert_eq!((s.nr_dirty, s.nr_writeback), (4, 4));
    assert_eq!(s.vm.pgpgout - out, 4 * 4, "pgpgout is in KiB");
    // The call costs one system call; the task does not wait.
    assert_eq!(s.clock - before, s.cost.fd_access_ns);
    assert_eq!(s.io_wait_ns, 0);
    // Called again while the writes are in flight (WB_SYNC_NONE): nothing
    // is written twice.
    sync(&mut s, file, 0, 8, false);
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 8));
    assert_eq!(s.vm.pgpgout - out, 8 * 4);
}

#[test]
fn fsync_writes_the_whole_file_and_waits_for_it() {
    let (mut s, file) = eight_dirty_pages();
    let (before, waited) = (s.clock, s.io_wait_ns);
    sync(&mut s, file, 0, 0, true);
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 8));
    // The task slept until the last of the 8 writes completed: all of the
    // time after the system call is IO wait.
    let last = s.writeback[1].iter().map(|&(done, _)| done).max().unwrap();
    assert_eq!(s.clock, last);
    assert_eq!(waited, 0);
    assert_eq!(s.io_wait_ns, last - before - s.cost.fd_access_ns);
    // The next event completes them.
    s.step(&Event::Think { ns: 0 });
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 0));
    for i in 0..8 {
        assert_eq!(state(&s, file, i), (false, false), "page {i}");
    }
    // fsync of a clean file writes nothing and does not wait.
    let (clock, waited) = (s.clock, s.io_wait_ns);
    sync(&mut s, file, 0, 0, true);
    assert_eq!(s.clock - clock, s.cost.fd_access_ns);
    assert_eq!(s.io_wait_ns, waited);
}

#[test]
fn fsync_waits_for_writes_the_flusher_started() {
    let (mut s, file) = eight_dirty_pages();
    s.wakeup_flusher(s.clock);
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 8));
    let out = s.vm.pgpgout;
    let last = s.writeback[1].iter().map(|&(done, _)| done).max().unwrap();
    sync(&mut s, file, 0, 0, true);
    assert_eq!(s.vm.pgpgout, out, "nothing written again");
    assert_eq!(s.clock, last);
}

#[test]
fn a_range_past_the_end_of_the_file_stops_at_its_end() {
    let (mut s, file) = eight_dirty_pages();
    sync(&mut s, file, 6, u16::MAX, false);
    assert_eq!((s.nr_dirty, s.nr_writeback), (6, 2));
    // An unknown file is a system call that writes nothing.
    sync(&mut s, 99, 0, 0, true);
    assert_eq!((s.nr_dirty, s.nr_writeback), (6, 2));
}

/// A sync takes the folio's entry out of the flusher's queue, as the
/// kernel's write clears the page-cache dirty tag: a page dirtied again
/// after its fsync waits its own 30 s (`dirty_expire_centisecs`), not
/// those of its first write.
#[test]
fn a_page_dirtied_again_after_its_sync_expires_from_its_new_write() {
    const SEC: u64 = 1_000_000_000;
    let (mut s, file) = eight_dirty_pages();
    sync(&mut s, file, 0, 0, true);
    s.step(&Event::Think { ns: 20 * SEC });
    s.step(&Event::FileWrite {
        file,
        index: 0,
        pages: 1,
    });
    assert_eq!(s.nr_dirty, 1);
    // 31 s after the first writes, 11 s after the second.
    let now = 31 * SEC;
    s.flusher_periodic(now);
    assert_eq!((s.nr_dirty, s.nr_writeback), (1, 0));
    s.flusher_periodic(now + 20 * SEC);
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 1));
}

/// The sync walks only the file's dirty range (`File::dirty_lo`): written
/// pages widen it, a sync covering it leaves only the dirty folios it could
/// not write (under writeback), and a sync of part of it keeps it whole.
#[test]
fn the_dirty_range_follows_the_writes_and_the_syncs_that_cover_it() {
    let (mut s, file) = eight_dirty_pages();
    let range = |s: &Sim| {
        let fl = &s.files[file as usize];
        (fl.dirty_lo, fl.dirty_hi)
    };
    assert_eq!(range(&s), (0, 8));
    // Part of it: the range stays.
    sync(&mut s, file, 2, 4, false);
    assert_eq!(range(&s), (0, 8));
    // Page 3 dirtied again while under writeback (pages 2..6 are), 12 for the first time.
    s.step(&Event::FileWrite {
        file,
        index: 3,
        pages: 1,
    });
    s.step(&Event::FileWrite {
        file,
        index: 12,
        pages: 1,
    });
    assert_eq!(range(&s), (0, 13));
    // The whole file: 0..2, 6..8 and 12 written; page 3 (dirty, under
    // writeback) is all that is left.
    sync(&mut s, file, 0, 0, false);
    assert_eq!(state(&s, file, 3), (true, true));
    assert_eq!(state(&s, file, 12), (false, true));
    assert_eq!(range(&s), (3, 4));
    assert_eq!(s.check_invariants(), Ok(()));
}
