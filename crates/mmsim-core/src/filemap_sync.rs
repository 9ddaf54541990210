//! Writeback a task starts itself: `sync_file_range(2)` and `fsync(2)` /
//! `fdatasync(2)` ([`Event::FileSync`](crate::Event::FileSync)), as v6.12
//! runs them (fs/sync.c, mm/filemap.c, mm/page-writeback.c).
//!
//! Databases do not leave their writes to the flusher: PostgreSQL calls
//! `sync_file_range(SYNC_FILE_RANGE_WRITE)` on the ranges it wrote
//! (`pg_flush_data`: `checkpoint_flush_after`, `bgwriter_flush_after`,
//! `backend_flush_after`, `wal_writer_flush_after`) and `fdatasync()` on
//! the WAL at every commit. Without them mmsim keeps every written page
//! dirty until the flusher's 30 s expiry or reclaim's wake-up, while the
//! kernel cleans it within milliseconds; reclaim then treats the pages
//! differently (a dirty file folio at the inactive tail is activated with
//! PG_reclaim and left to the flusher, a clean one is freed).
//!
//! * `sync_file_range(fd, offset, nbytes, SYNC_FILE_RANGE_WRITE)` →
//!   `__filemap_fdatawrite_range(mapping, start, end, WB_SYNC_NONE)` →
//!   `do_writepages()`: every dirty folio of the range is written
//!   (`folio_prepare_writeback()`: one already under writeback is skipped
//!   under `WB_SYNC_NONE`), and the call returns without waiting.
//! * `fsync()`/`fdatasync()` → `vfs_fsync_range()` → the file system's
//!   `fsync` (`ext4_sync_file()`) → `file_write_and_wait_range(file, 0,
//!   LLONG_MAX)`: `__filemap_fdatawrite_range(..., WB_SYNC_ALL)`, then
//!   `__filemap_fdatawait_range()`: the task sleeps until every folio of
//!   the range is out of writeback. Under `WB_SYNC_ALL` a folio that is
//!   under writeback and dirty again is waited for and written a second
//!   time; mmsim keeps one write in flight per folio, so fsync waits for
//!   the first write and leaves the folio dirty (the next sync or the
//!   flusher writes it).
//!
//! Each write goes through the same path as the flusher's
//! (`Sim::write_folio`: one request per folio on the file system's
//! device, `pgpgout` counted, completion by `folio_end_writeback()`),
//! cleaning the folio's shared mappings first (`folio_mkclean`) from the
//! caller's context: the TLB flushes of the task's own mappings are local,
//! those of other tasks' mappings remote (`crate::tlb`). The
//! call itself costs one system call (`fd_access_ns`); the wait is IO wait
//! (`io_wait_s`), not a memory stall.
//!
//! Not modelled: the journal commit of `ext4_sync_file()` (jbd2 writes its
//! own blocks, outside the page cache), `fdatasync()`'s skipping of the
//! inode when only timestamps changed, `SYNC_FILE_RANGE_WAIT_BEFORE` /
//! `WAIT_AFTER`, and the block layer's request-queue throttling of a
//! task that submits many writes (the writes' completion times follow the
//! device's queue, the task is not delayed by them).

use crate::event::{Event, FileId};
use crate::mem::filemap::slot_folio;
use crate::mem::folio::flags;
use crate::sim::Sim;

impl Sim {
    /// [`Event::FileSync`]: writes the dirty folios
    /// of pages `index ..` (`pages` of them, or to the end of the file when
    /// 0) and, with `wait`, sleeps until the range's writeback completes.
    #[cold]
    #[inline(never)]
    pub(crate) fn file_sync(&mut self, ev: &Event) {
        let Event::FileSync {
            file,
            index,
            pages,
            wait,
        } = *ev
        else {
            return;
        };
        self.set_fd_memcg(file);
        self.advance(self.cost.fd_access_ns);
        let Some(f) = self.files.get(file as usize) else {
            // No such file: the call reaches nothing, counted as FileRead's
            // and FileWrite's are.
            self.acc.out_of_range += 1;
            return;
        };
        let size = f.pages;
        let end = if pages == 0 {
            size
        } else {
            index.saturating_add(u32::from(pages)).min(size)
        };
        let now = self.clock;
        // The caller: the task that holds the file open (`File::task`).
        let by = self.files[file as usize].task;
        // Only the file's dirty range can hold a dirty folio (`File::dirty_lo`):
        // the same folios written in the same order as a walk of every page.
        let fl = &self.files[file as usize];
        let (lo, hi) = (fl.dirty_lo, fl.dirty_hi);
        let covers = index <= lo && end >= hi;
        let walk_end = end.min(hi).min(fl.slots.len() as u32);
        // The dirty folios the walk leaves (under writeback): the range left.
        let (mut left_lo, mut left_hi) = (u32::MAX, 0);
        let mut i = index.max(lo);
        while i < walk_end {
            let slot = self.files[file as usize].slot(i);
            let Some(f) = slot_folio(slot) else {
                i += 1;
                continue;
            };
            let fo = self.folios[f];
            // The folio's first page may lie before `index` (a large
            // folio): it is written whole, and the walk goes on after it.
            i = fo.index + fo.nr_pages() as u32;
            if fo.test(flags::DIRTY) {
                if !fo.test(flags::WRITEBACK) {
                    // The dirty tag goes with the write: the flusher's entry too.
                    self.dirty_fifo_unqueue(f);
                    self.write_folio_by(f, now, by);
                } else {
                    left_lo = left_lo.min(fo.index);
                    left_hi = left_hi.max(i);
                }
            }
        }
        if covers {
            let fl = &mut self.files[file as usize];
            (fl.dirty_lo, fl.dirty_hi) = (left_lo, left_hi);
        }
        if wait {
            let done = self.range_writeback_done(file, index, end);
            if done > 0 {
                self.io_wait(done, false);
            }
        }
    }

    /// `__filemap_fdatawait_range()`'s wait: the latest completion time of
    /// the file-system writes in flight for folios of pages `start..end` of
    /// `file`; 0 when there is none. The walk is over the device's whole
    /// queue of writes in flight (the kernel's walks the range's
    /// `PAGECACHE_TAG_WRITEBACK` entries): cold, once per waited sync.
    fn range_writeback_done(&self, file: FileId, start: u32, end: u32) -> u64 {
        let mut latest = 0;
        for &(done, f) in &self.writeback[1] {
            if f == crate::mem::folio::NIL {
                continue;
            }
            let fo = &self.folios[f];
            let first = fo.index;
            let last = first + fo.nr_pages() as u32;
            if fo.space == file && fo.is_file() && first < end && last > start {
                latest = latest.max(done);
            }
        }
        latest
    }

    /// Invariant (`Sim::check_invariants`): every dirty file folio lies in
    /// its file's dirty range (`File::dirty_lo`), which the sync walks.
    pub(crate) fn check_dirty_ranges(&self) -> Result<(), String> {
        let mut err = None;
        self.folios.for_each_live(|fo| {
            if fo.is_file() && fo.test(flags::DIRTY) && err.is_none() {
                let fl = &self.files[fo.space as usize];
                let end = fo.index + fo.nr_pages() as u32;
                if fo.index < fl.dirty_lo || end > fl.dirty_hi {
                    err = Some(format!(
                        "dirty folio at pages {}..{end} of file {} outside its dirty range {}..{}",
                        fo.index, fo.space, fl.dirty_lo, fl.dirty_hi
                    ));
                }
            }
        });
        err.map_or(Ok(()), Err)?;
        self.check_memcg_dirty_counts()
    }
}
