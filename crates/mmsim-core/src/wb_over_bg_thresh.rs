//! Background writeback per wb, with each wb's share of the background
//! threshold (`policy.dirty_throttle`, opt-in; off, nothing here runs):
//! v6.12 mm/page-writeback.c `wb_over_bg_thresh`, `domain_over_bg_thresh`,
//! `wb_bg_dirty_limits`, `__wb_calc_thresh`, `domain_dirty_avail`
//! (read in Debian's 6.12.107); fs/fs-writeback.c `wb_writeback`,
//! `wb_check_background_flush`, `writeback_chunk_size`,
//! `wb_start_background_writeback` (v6.12).
//!
//! The kernel's flusher is per `bdi_writeback`: each wb writes its own
//! inodes (the root's, and under cgroup writeback each group's,
//! `crate::cgwb`), and its background writeback (`wb_writeback()` with
//! `for_background`) goes on while `wb_over_bg_thresh(wb)` holds. That test
//! looks at the global domain and, for a group's wb, at the group's memcg
//! domain (`domain_over_bg_thresh()` of each, writeback not counted,
//! `domain_dirty_avail(dtc, false)`): the wb is over when
//!
//! * the domain's dirty pages exceed its `bg_thresh`, or
//! * the wb's own dirty pages (`WB_RECLAIMABLE`: dirty, not under
//!   writeback) exceed `wb_bg_thresh`, its `__wb_calc_thresh()` share of the
//!   domain's `bg_thresh` (`wb_bg_dirty_limits()`: the wb's fraction of the
//!   domain's recent writeout completions, `crate::page_writeback_domain`).
//!
//! So a wb whose dirty pages are more than its share — one that has
//! completed few writes lately, or none (its share is then 0) — keeps
//! writing while the domain is under `bg_thresh`, and the periodic
//! flusher's `wb_check_background_flush()` starts it there; and a group's
//! wb writes while the global domain is over its `bg_thresh`, whatever its
//! own domain says.
//!
//! With `policy.dirty_throttle` (where the shares exist) mmsim's
//! background writeback is per wb too:
//!
//! * a writer that dirties a clean folio (`balance_dirty_pages()`) starts
//!   the background writeback of its own wb (`wb_get_create_current()`:
//!   the root's, or its group's under cgroup writeback) when the global
//!   `NR_FILE_DIRTY` exceeds `bg_thresh` or either domain is out of its
//!   freerun range ([`Sim::wb_start_background_writeback`]; the kernel's
//!   two `wb_start_background_writeback()` calls); the repeated pauses at
//!   the dirty limit do the same;
//! * the periodic flusher runs `wb_check_background_flush()` for every wb
//!   with dirty pages, the root's first;
//! * a run writes the wb's own dirty folios, oldest dirtied first, a chunk
//!   a pass (`writeback_chunk_size()`: `round_down(min(avg_write_bandwidth
//!   / 2, global dirty_limit / DIRTY_SCOPE) + MIN_WRITEBACK_PAGES,
//!   MIN_WRITEBACK_PAGES)`, with the wb's estimate and the global domain's
//!   `dirty_limit`), and tests `wb_over_bg_thresh()` before each pass. It
//!   ends after a pass that wrote less than a chunk or met a folio under
//!   writeback (queued again at the tail, as `crate::cgwb`'s pass).
//!
//! Without the opt-in, mmsim keeps its older model: the global domain's
//! background writeback writes the oldest dirty folios of every group
//! while `NR_FILE_DIRTY` exceeds `bg_thresh`, checked per folio
//! (`Sim::balance_dirty_pages`), and a group's writes its own while its
//! memcg domain is over (`crate::cgwb`).
//!
//! Simplified (as `crate::cgwb`): a pass counts the chunk over the wb's
//! folios, not per inode; the shares and counts are exact (the kernel's
//! `wb_stat()` may lag by `wb_stat_error()`, which is why it sums the
//! per-CPU counts when `wb_bg_thresh` is small); the background run is
//! synchronous (the kernel's flusher is a worker: `writeback_in_progress()`
//! keeps a writer from queueing another while one runs, and completions
//! may arrive during its passes, raising the wb's share mid-run); no
//! strictlimit (`BDI_CAP_STRICTLIMIT`: FUSE), no laptop mode.

use crate::mem::folio::flags;
use crate::memcg::MemcgId;
use crate::sim::Sim;

/// `writeback_chunk_size()` (v6.12 fs/fs-writeback.c) of background
/// writeback (`WB_SYNC_NONE`, `nr_pages` unbounded): `round_down(min(
/// avg_write_bandwidth / 2, dirty_limit / DIRTY_SCOPE) +
/// MIN_WRITEBACK_PAGES, MIN_WRITEBACK_PAGES)`, in pages.
pub(crate) fn writeback_chunk_size(avg_write_bandwidth: u64, dirty_limit: u64) -> u64 {
    use crate::cgwb::MIN_WRITEBACK_PAGES;
    let pages = (avg_write_bandwidth / 2).min(dirty_limit / 8);
    (pages + MIN_WRITEBACK_PAGES) / MIN_WRITEBACK_PAGES * MIN_WRITEBACK_PAGES
}

impl Sim {
    /// `wb_over_bg_thresh()` (v6.12 mm/page-writeback.c) of wb `w` (index
    /// as [`Sim::wb_index`]): `domain_over_bg_thresh()` of the global domain,
    /// then, for a group's wb, of its memcg domain; each over when its dirty
    /// pages (writeback not counted) exceed its `bg_thresh` or the wb's
    /// `WB_RECLAIMABLE` exceeds its share of that `bg_thresh`
    /// (`wb_bg_dirty_limits()`).
    pub(crate) fn wb_over_bg_thresh(&mut self, w: usize) -> bool {
        let (_, bg_thresh) = crate::cgwb::domain_dirty_limits(self.global_dirtyable_memory());
        if self.nr_dirty > bg_thresh {
            return true;
        }
        let (wb_dirty, wb_bg_thresh) = self.wb_bg_dirty_limits(w, bg_thresh, false);
        if wb_dirty > wb_bg_thresh {
            return true;
        }
        if w == 0 {
            return false;
        }
        let [_, md] = self.memcg_dirty_domain(w as MemcgId, false);
        if md.dirty > md.bg_thresh {
            return true;
        }
        let (wb_dirty, wb_bg_thresh) = self.wb_bg_dirty_limits(w, md.bg_thresh, true);
        wb_dirty > wb_bg_thresh
    }

    /// A writer's `balance_dirty_pages()` (v6.12) for its wb `w`, with the
    /// throttle: `wb_start_background_writeback()` when the global
    /// `NR_FILE_DIRTY` exceeds the global `bg_thresh`, or when the global
    /// domain or, for a group's wb, its memcg domain is out of its freerun
    /// range (dirty and writeback above `(thresh + bg_thresh) / 2`: "Start
    /// writeback even when in laptop mode"); the flusher then runs
    /// [`Sim::wb_check_background_flush_wb`].
    pub(crate) fn wb_start_background_writeback(&mut self, w: usize) {
        let (thresh, bg_thresh) = crate::cgwb::domain_dirty_limits(self.global_dirtyable_memory());
        if self.nr_dirty > bg_thresh && self.bdp.first_over_bg_thresh == 0 {
            self.bdp.first_over_bg_thresh = self.nr_dirty - bg_thresh;
        }
        let mut start = self.nr_dirty > bg_thresh
            || self.nr_dirty + self.nr_writeback > (thresh + bg_thresh) / 2;
        if !start && w != 0 {
            let [_, md] = self.memcg_dirty_domain(w as MemcgId, true);
            start = md.dirty > md.freerun_ceiling();
        }
        if start {
            self.wb_check_background_flush_wb(w, self.clock);
        }
    }

    /// The periodic flusher's `wb_check_background_flush()` (v6.12
    /// fs/fs-writeback.c) of every wb with dirty pages, the root's first
    /// (with the throttle; `Sim::flusher_periodic`).
    pub(crate) fn wb_check_background_flush_all(&mut self, now: u64) {
        for w in 0..self.nr_wbs() {
            if self.wb_reclaimable(w) > 0 && (w == 0 || self.has_memcg_domain(w as MemcgId)) {
                self.wb_check_background_flush_wb(w, now);
            }
        }
    }

    /// `wb_check_background_flush()` → `wb_writeback()` with
    /// `for_background` (v6.12) of wb `w` at `now`: while
    /// [`Sim::wb_over_bg_thresh`], a pass writes a chunk of the wb's own
    /// dirty folios, oldest dirtied first; the run ends after a pass that
    /// wrote less than a chunk or met a folio under writeback.
    #[cold]
    #[inline(never)]
    pub(crate) fn wb_check_background_flush_wb(&mut self, w: usize, now: u64) {
        while self.wb_over_bg_thresh(w) {
            let (bw, dirty_limit) = self.wb_chunk_inputs(w);
            let chunk = writeback_chunk_size(bw, dirty_limit);
            if !self.wb_writeback_pass(w, chunk, now) {
                return;
            }
        }
    }

    /// One pass of wb `w`'s background writeback at `now`: its oldest
    /// dirty file folios (those of the groups whose wb it is,
    /// [`Sim::wb_index`]) until `chunk` pages are written (a large folio
    /// whole), the walk of the flusher's queue resumed where the wb's last
    /// one stopped (`Memcg::wb_cursor` of group `w`; the root's for the
    /// root wb). A folio dirtied again under writeback is queued again at
    /// the tail and ends the pass (as `Sim::balance_dirty_pages`). True if
    /// the pass wrote a chunk and another may follow. Without the throttle
    /// only a group with its own domain calls it (`crate::cgwb`), whose
    /// wb's folios are its own; with it, an entry written at the queue's
    /// front is taken off it (by whichever wb's walk starts there and
    /// writes it), so the queue does not fill with written entries left
    /// behind; an entry written further in is unqueued (its entry
    /// skipped when met, `Sim::dirty_fifo_unqueue`).
    pub(crate) fn wb_writeback_pass(&mut self, w: usize, chunk: u64, now: u64) -> bool {
        let throttle = self.cfg.policy.dirty_throttle;
        if throttle {
            // Drops the written entries left at the front.
            let _ = self.dirty_fifo.front();
        }
        let mut seq = self.memcgs[w].wb_cursor.max(self.dirty_fifo.front_seq());
        let mut wrote = 0;
        let more = loop {
            if wrote >= chunk {
                break true;
            }
            let Some(entry) = self.dirty_fifo.entry_at(seq) else {
                break false;
            };
            let at_front = throttle && seq == self.dirty_fifo.front_seq();
            seq += 1;
            let Some((_, f)) = entry else {
                continue;
            };
            if !self.folios.is_live(f) {
                continue;
            }
            let fo_memcg = self.folios.memcg(f);
            let fo = &self.folios[f];
            if self.wb_index(fo_memcg) != w || !fo.is_file() || !fo.test(flags::DIRTY) {
                continue;
            }
            let under_writeback = fo.test(flags::WRITEBACK);
            if at_front {
                self.dirty_fifo.pop_front();
                let _ = self.dirty_fifo.front();
                seq = seq.max(self.dirty_fifo.front_seq());
            } else {
                self.dirty_fifo_unqueue(f);
            }
            if under_writeback {
                self.dirty_fifo.push_back(now, f);
                break false;
            }
            wrote += self.folios[f].nr_pages();
            self.write_folio(f, now);
        };
        self.memcgs[w].wb_cursor = seq;
        more
    }
}
