//! Buffered reads (mm/filemap.c `filemap_read()`, v6.12; the read path of
//! `read()` and `pread()` on a file descriptor). First written against
//! v6.6 and checked against v6.12's source: the batch, the synchronous
//! readahead and the new folio, the asynchronous readahead at a marked
//! folio and `pos_same_folio` are modelled as v6.12 has them; v6.12's
//! `filemap_create_folio` allocates at the mapping's minimum folio order
//! (order 0 in v6.6), always 0 here.
//!
//! A read looks its pages up in batches of consecutive cached folios
//! (`filemap_get_read_batch`); a miss starts synchronous readahead
//! (`crate::readahead`) and waits for it, and a page readahead did not bring
//! is read alone (`filemap_create_folio`): it allocates, runs
//! `workingset_refault()` on the slot's shadow and reads the page. A batch
//! ending at a `PG_readahead` folio starts asynchronous readahead. Every page
//! read is marked accessed, except the page where the previous read on the
//! file ended (`pos_same_folio`, v5.16+). The one-page cached read is kept
//! apart ([`Sim::filemap_read`]'s fast path) because it is the hot path of
//! file traces. Split out of `crate::fault`, which owns the fault paths.

use crate::event::FileId;
use crate::fault::FOLIO_BATCH;
use crate::mem::filemap::slot_folio;
use crate::mem::folio::{flags, GEN_REFS_RA_LOCKED, NIL};
use crate::readahead::{FileRaState, RaOwner};
use crate::sim::{Policy, Sim};

/// `pos_same_folio()` (mm/filemap.c, v6.x) of a read starting in folio
/// `fo` after a read that ended before page `prev_index`: whether that
/// read's last page lies in `fo` (for an order-0 folio, whether it is
/// `fo`'s page).
#[inline]
fn pos_same_folio(prev_index: u32, fo: &crate::mem::folio::Folio) -> bool {
    prev_index != FileRaState::NO_PREV
        && prev_index.wrapping_sub(1).wrapping_sub(fo.index) < (1u32 << fo.order())
}

impl Sim {
    /// A buffered read of `pages` pages from page `index` (`filemap_read()`
    /// of v6.12).
    ///
    /// Batches of consecutive cached pages are looked up
    /// (`filemap_get_read_batch`: at most [`FOLIO_BATCH`] folios, ending
    /// after a `PG_readahead` one); an empty batch starts synchronous
    /// readahead and waits for it, and if that brought nothing the page is
    /// read alone (`filemap_create_folio`). A batch ending in a marked folio
    /// starts asynchronous readahead. Every page read is marked accessed,
    /// except that a read starting in the page where the previous read ended
    /// does not mark that page again (`pos_same_folio`).
    #[inline(always)]
    pub(crate) fn filemap_read(&mut self, file: FileId, index: u32, pages: u16) {
        self.filemap_read_ra(RaOwner::Fd(file), file, index, pages);
    }

    /// [`Sim::filemap_read`] in the `read()` state of `owner`: the file's
    /// (`RaOwner::Fd`, `Event::FileRead`) or an open file's
    /// (`RaOwner::Open`, `Event::FdRead`, `crate::open`).
    #[inline(always)]
    pub(crate) fn filemap_read_ra(&mut self, owner: RaOwner, file: FileId, index: u32, pages: u16) {
        if pages <= 1 && self.filemap_read_hit(owner, file, index) {
            return;
        }
        self.filemap_read_slow(owner, file, index, pages);
    }

    /// The common case of [`Sim::filemap_read`] on its own: one page, cached,
    /// uptodate and not a readahead marker. Returns false (having changed
    /// nothing) for anything else.
    #[inline(always)]
    fn filemap_read_hit(&mut self, owner: RaOwner, file: FileId, index: u32) -> bool {
        let Some(fo) = self.files.get_mut(file as usize) else {
            return false;
        };
        let Some(f) = fo.slots.get(index as usize).and_then(|&s| slot_folio(s)) else {
            return false;
        };
        let ra = match owner {
            RaOwner::Open(fd) => self.ra_slots.get_mut(self.fds[fd as usize].ra_slot),
            _ => &mut fo.ra,
        };
        let in_flight =
            index >= ra.inflight_start && index < ra.inflight_end && self.clock < ra.inflight_done;
        // A locked readahead folio (`crate::readahead::read_lock`) is
        // waited for on the slow path.
        let folio = &self.folios[f];
        if in_flight || folio.test(flags::READAHEAD) || folio.gen_refs & GEN_REFS_RA_LOCKED != 0 {
            return false;
        }
        // `pos_same_folio`: for an order-0 folio, its own page.
        let same = ra.prev_index != FileRaState::NO_PREV
            && (index + 1 == ra.prev_index
                || (self.folios[f].order() > 0 && pos_same_folio(ra.prev_index, &self.folios[f])));
        ra.prev_index = index + 1;
        self.acc.accesses += 1;
        self.acc.hits += 1;
        self.advance(self.cost.fd_access_ns);
        if self.policy == Policy::Lru || !same {
            self.folio_mark_accessed(f);
        }
        true
    }

    #[inline(never)]
    fn filemap_read_slow(&mut self, owner: RaOwner, file: FileId, index: u32, pages: u16) {
        let end = match owner {
            RaOwner::Open(fd) => {
                self.set_open_memcg(fd);
                self.fd_end(file, index, pages)
            }
            _ => self.fd_range(file, index, pages),
        };
        let Some(end) = end else {
            return;
        };
        let mut last_pos = self.read_ra_mut(owner, file).prev_index;
        let mut pos = index;
        while pos < end {
            let mut n = self.read_batch_at(owner, file, pos, end);
            let mut missed = 0;
            if n == 0 {
                missed = 1;
                self.acc.misses += 1;
                let mut done = self.page_cache_sync_ra(owner, file, pos, end - pos);
                n = self.read_batch_at(owner, file, pos, end);
                if n == 0 {
                    let slot = self.files[file as usize].slot(pos);
                    if self.page_cache_miss(file, pos, slot, false).is_none() {
                        // No folio could be had (the group's limit, an OOM
                        // kill): the access happened and missed.
                        self.acc.accesses += 1;
                        break;
                    }
                    done = 0;
                    n = 1;
                }
                self.wait_readahead(done);
            }
            let lastp = pos + n - 1;
            let mut pending = self.inflight_until(owner, lastp);
            if self.cfg.fs.ra_lock_until_read {
                pending = pending.max(self.ra_batch_pending(file, pos, n));
            }
            let lastf = slot_folio(self.files[file as usize].slot(lastp)).unwrap_or(NIL);
            if lastf != NIL && self.folios[lastf].test(flags::READAHEAD) {
                // filemap_readahead(): from the marked folio's first page.
                let fi = self.folios[lastf].index;
                self.page_cache_async_ra(owner, file, lastf, fi, end - fi);
            }
            if self.clock < pending {
                self.io_wait(pending, false);
            }
            if !self.cfg.fs.large_folios {
                for i in 0..n {
                    let page = pos + i;
                    let same = i == 0 && last_pos != FileRaState::NO_PREV && page + 1 == last_pos;
                    let Some(f) = slot_folio(self.files[file as usize].slot(page)) else {
                        continue;
                    };
                    self.advance(self.cost.fd_access_ns);
                    if self.policy == Policy::Lru || !same {
                        self.folio_mark_accessed(f);
                    }
                }
                self.acc.accesses += n as u64;
                self.acc.hits += (n - missed) as u64;
                pos += n;
                last_pos = pos;
                continue;
            }
            let mut prev = NIL;
            for i in 0..n {
                let page = pos + i;
                let Some(f) = slot_folio(self.files[file as usize].slot(page)) else {
                    continue;
                };
                self.advance(self.cost.fd_access_ns);
                // Once per folio: the pages of a large folio after its first
                // read here are the same folio.
                if f == prev {
                    continue;
                }
                prev = f;
                let same = i == 0 && pos_same_folio(last_pos, &self.folios[f]);
                if self.policy == Policy::Lru || !same {
                    self.folio_mark_accessed(f);
                }
            }
            self.acc.accesses += n as u64;
            self.acc.hits += (n - missed) as u64;
            pos += n;
            last_pos = pos;
        }
        self.read_ra_mut(owner, file).prev_index = last_pos;
    }

    /// [`Sim::read_batch`] (v6.12 `filemap_get_read_batch`, mm/filemap.c)
    /// with its two outcomes that need no walk found inline (`pos < end`):
    /// no folio at `pos` (an empty batch: both of its loops stop at that
    /// slot, as the kernel's loop stops at an empty index or a shadow entry),
    /// or a folio at `pos` for a one-page request (a batch of that page: the
    /// order-0 loop's limit is 1, and the large-folio loop's folio end is
    /// past `pos` and clamped to the limit). The same batch in every case
    /// (rule test `the_inline_read_batch_is_the_walked_batch`); a speed
    /// step, not a mechanism: every page-cache miss of a one-page read
    /// takes both outcomes (before and after `page_cache_sync_ra`), so the
    /// call, its frame and the in-flight window's setup are paid only by
    /// longer reads.
    #[inline(always)]
    pub(crate) fn read_batch_at(&self, owner: RaOwner, file: FileId, pos: u32, end: u32) -> u32 {
        debug_assert!(pos < end);
        if slot_folio(self.files[file as usize].slot(pos)).is_none() {
            return 0;
        }
        if end - pos == 1 {
            return 1;
        }
        self.read_batch_ra(owner, file, pos, end)
    }

    /// `filemap_get_read_batch()`: how many consecutive pages from `pos`
    /// (before `end`) are cached, in at most [`FOLIO_BATCH`] folios,
    /// stopping after a folio marked `PG_readahead` or still being read
    /// (all of its pages before `end`).
    #[cfg(test)]
    pub(crate) fn read_batch(&self, file: FileId, pos: u32, end: u32) -> u32 {
        self.read_batch_ra(RaOwner::Fd(file), file, pos, end)
    }

    /// [`Sim::read_batch`] with the in-flight window of `owner`'s state.
    pub(crate) fn read_batch_ra(&self, owner: RaOwner, file: FileId, pos: u32, end: u32) -> u32 {
        let fo = &self.files[file as usize];
        let ra = match owner {
            RaOwner::Open(fd) => self.ra_slots.get(self.fds[fd as usize].ra_slot),
            _ => &fo.ra,
        };
        if !self.cfg.fs.large_folios {
            // Order-0 page cache: one folio per page. The in-flight window
            // is read once: empty once its read has completed.
            let inflight = if self.clock < ra.inflight_done {
                ra.inflight_start..ra.inflight_end
            } else {
                0..0
            };
            let limit = (end - pos).min(FOLIO_BATCH);
            let mut n = 0;
            while n < limit {
                let Some(&slot) = fo.slots.get((pos + n) as usize) else {
                    break;
                };
                let Some(f) = slot_folio(slot) else { break };
                n += 1;
                if self.folios[f].test(flags::READAHEAD) || inflight.contains(&(pos + n - 1)) {
                    break;
                }
            }
            return n;
        }
        let ra = *ra;
        let limit = end - pos;
        let (mut n, mut nr_folios, mut prev) = (0, 0, NIL);
        while n < limit {
            let Some(&slot) = fo.slots.get((pos + n) as usize) else {
                break;
            };
            let Some(f) = slot_folio(slot) else { break };
            if f != prev {
                // A new folio: the batch holds at most FOLIO_BATCH.
                if nr_folios == FOLIO_BATCH {
                    break;
                }
                nr_folios += 1;
                prev = f;
            }
            n += 1;
            let in_flight = (ra.inflight_start..ra.inflight_end).contains(&(pos + n - 1))
                && self.clock < ra.inflight_done;
            if in_flight || self.folios[f].test(flags::READAHEAD) {
                // The batch ends with this folio, all of it.
                let fo_end = self.folios[f].index + (1u32 << self.folios[f].order());
                n = (fo_end - pos).min(limit);
                break;
            }
        }
        n
    }
}
