//! Readahead folios locked until their read completes (v6.12
//! mm/readahead.c `read_pages` → `aops->readahead`; the folio is unlocked
//! by the read's completion, `folio_end_read` from the filesystem's bio
//! end, e.g. `mpage_read_end_io`; `filemap_add_folio` → `__filemap_add_folio`
//! adds it with PG_locked set by `__folio_set_locked`).
//!
//! Every readahead folio (order 0 from `page_cache_ra_unbounded`, large
//! from `page_cache_ra_order`, the one-page window alike) is locked from
//! its insertion: mmsim sets [`GEN_REFS_RA_LOCKED`] on it. Under
//! `machine.fs.ra_lock_until_read` each submitted read (`read_pages`: one
//! contiguous run of a file's pages) is remembered with its completion time
//! in [`RaReads`], a queue ordered by completion; the bit of its folios is
//! cleared once the clock has passed it. Nothing runs at the completion
//! itself: whoever next looks at a locked folio ([`Sim::ra_locked`],
//! [`Sim::ra_read_pending`]) first retires the reads that are done (a
//! comparison with the queue's head, then the retired runs' slots), so a
//! folio's bit is only trusted after that. The bit is tested on the folio
//! already in hand: no lookup, no hashing, on any path.
//!
//! What meets a locked folio:
//!
//! * reclaim (`shrink_folio_list`, the classic lists and MGLRU's
//!   `evict_folios` alike): `folio_trylock()` fails, `goto keep` — back on
//!   its list, not counted in `nr_scanned` (isolation counted it in
//!   `pgscan_*`);
//! * a task that finds it in the page cache (`filemap_get_pages` →
//!   `filemap_update_page` / `folio_put_wait_locked` for `read()`,
//!   `filemap_fault` → `lock_folio_maybe_drop_mmap` for a fault) waits until
//!   the read completes ([`Sim::ra_read_pending`]; before, only the reader's
//!   own latest asynchronous window was waited for, `Sim::inflight_until`);
//! * fault-around (`filemap_map_pages` → `next_uptodate_folio`:
//!   `folio_trylock()` fails) leaves it for a real fault.
//!
//! Off (the default), the lock is mmsim's earlier approximation: the
//! order-0 loop's folios are locked until its batch ends (the list in
//! `Sim::ra_locked_batch`, whose bits [`Sim::ra_batch_end`] clears), and
//! large folios and one-page windows are not locked at all; every default
//! result keeps its bits.
//!
//! Departures: the page a miss reads alone (`filemap_read_folio`, with
//! `GFP_USER_FOLIO`) is not locked (its reader waits for it at once); a
//! locked folio can still be migrated by compaction (the bit moves with
//! `gen_refs` to the new folio, which is the page's slot's, so the read's
//! completion unlocks it), where v6.12 `migrate_folio_unmap` fails
//! `folio_trylock()` (async and direct compaction skip it, kcompactd's
//! `MIGRATE_SYNC_LIGHT` waits); swap readahead's folios are not locked.

use std::collections::VecDeque;

use crate::mem::filemap::slot_folio;
use crate::mem::folio::{FolioId, GEN_REFS_RA_LOCKED};
use crate::sim::Sim;
use crate::FileId;

/// One submitted readahead read: pages `[start, start + nr)` of `file`,
/// complete (and unlocked) at `done` ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RaRead {
    /// Completion time (ns).
    pub done: u64,
    /// The file read.
    pub file: FileId,
    /// First page of the run.
    pub start: u32,
    /// Pages in the run.
    pub nr: u32,
}

/// The readahead reads in flight, ordered by completion time (the head
/// completes first). Empty unless `machine.fs.ra_lock_until_read`.
#[derive(Clone, Debug, Default)]
pub(crate) struct RaReads {
    q: VecDeque<RaRead>,
}

impl RaReads {
    /// Reads in flight (tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.q.len()
    }

    /// Remembers `r`, kept in completion order (a read submitted later
    /// usually completes later: inserted from the back).
    fn push(&mut self, r: RaRead) {
        let mut at = self.q.len();
        while at > 0 && self.q[at - 1].done > r.done {
            at -= 1;
        }
        self.q.insert(at, r);
    }
}

impl Sim {
    /// `__folio_set_locked()` of a folio readahead just added to the page
    /// cache. Under `ra_lock_until_read` every readahead folio; otherwise
    /// only the order-0 loop's (`batch`), which are listed for
    /// [`Sim::ra_batch_end`].
    #[inline]
    pub(crate) fn ra_lock_folio(&mut self, f: FolioId, batch: bool) {
        if self.cfg.fs.ra_lock_until_read {
            self.folios[f].gen_refs |= GEN_REFS_RA_LOCKED;
        } else if batch {
            self.folios[f].gen_refs |= GEN_REFS_RA_LOCKED;
            self.ra_locked_batch.push(f);
        }
    }

    /// The end of the order-0 loop's batch: without `ra_lock_until_read`
    /// its folios are unlocked here (mmsim's approximation).
    /// The list keeps its capacity: taking it would free and regrow it on
    /// every readahead batch (an allocation on the miss path).
    #[inline]
    pub(crate) fn ra_batch_end(&mut self) {
        for i in 0..self.ra_locked_batch.len() {
            let f = self.ra_locked_batch[i];
            self.folios[f].gen_refs &= !GEN_REFS_RA_LOCKED;
        }
        self.ra_locked_batch.clear();
    }

    /// `read_pages()` submitted pages `[start, start + nr)` of `file`,
    /// read by `done`: under `ra_lock_until_read` their folios stay locked
    /// until then.
    #[inline]
    pub(crate) fn ra_read_submitted(&mut self, file: FileId, start: u32, nr: u32, done: u64) {
        if self.cfg.fs.ra_lock_until_read && nr != 0 {
            self.ra_read_queue(file, start, nr, done);
        }
    }

    /// [`Sim::ra_read_submitted`]'s queueing, out of line: the default
    /// (option off) miss path keeps only the test.
    #[cold]
    #[inline(never)]
    fn ra_read_queue(&mut self, file: FileId, start: u32, nr: u32, done: u64) {
        self.ra_unlock_completed();
        self.ra_reads.push(RaRead {
            done,
            file,
            start,
            nr,
        });
    }

    /// `folio_end_read()` of every read whose completion time the clock
    /// has reached: the run's folios (what its slots hold now; a migrated
    /// folio's new id) lose the lock.
    pub(crate) fn ra_unlock_completed(&mut self) {
        while let Some(&r) = self.ra_reads.q.front() {
            if r.done > self.clock {
                break;
            }
            self.ra_reads.q.pop_front();
            let Some(fo) = self.files.get(r.file as usize) else {
                continue;
            };
            for i in r.start..r.start + r.nr {
                if let Some(g) = fo.slots.get(i as usize).and_then(|&s| slot_folio(s)) {
                    self.folios[g].gen_refs &= !GEN_REFS_RA_LOCKED;
                }
            }
        }
    }

    /// `folio_trylock()` fails: `f` is a readahead folio whose read has
    /// not completed (or, without `ra_lock_until_read`, of the batch in
    /// progress). v6.12 `shrink_folio_list` then takes `goto keep` (back to
    /// its LRU list, before `sc->nr_scanned` counts it; its isolation was
    /// counted in `pgscan_*`).
    #[inline]
    pub(crate) fn ra_locked(&mut self, f: FolioId) -> bool {
        if self.folios[f].gen_refs & GEN_REFS_RA_LOCKED == 0 {
            return false;
        }
        self.ra_unlock_completed();
        self.folios[f].gen_refs & GEN_REFS_RA_LOCKED != 0
    }

    /// When the read that holds folio `f` locked completes, if it is still
    /// in flight (0 otherwise): a task that found `f` in the page cache
    /// waits until then (`folio_wait_locked`, v6.12 `filemap_update_page`,
    /// `lock_folio_maybe_drop_mmap`). Only under `ra_lock_until_read`.
    #[inline]
    pub(crate) fn ra_read_pending(&mut self, f: FolioId) -> u64 {
        if !self.ra_locked(f) {
            return 0;
        }
        let (file, index) = (self.folios[f].space, self.folios[f].index);
        self.ra_reads
            .q
            .iter()
            .filter(|r| r.file == file && (r.start..r.start + r.nr).contains(&index))
            .map(|r| r.done)
            .max()
            .unwrap_or(0)
    }
}

impl Sim {
    /// [`Sim::ra_read_pending`] of the folios of pages `[pos, pos + n)` of
    /// `file` (a `read()`'s batch, `filemap_get_pages`): the latest.
    pub(crate) fn ra_batch_pending(&mut self, file: FileId, pos: u32, n: u32) -> u64 {
        let mut pending = 0;
        for p in pos..pos + n {
            if let Some(f) = slot_folio(self.files[file as usize].slot(p)) {
                pending = pending.max(self.ra_read_pending(f));
            }
        }
        pending
    }
}
