//! Dirty page writeback (mm/page-writeback.c, fs/fs-writeback.c) and
//! writeback completion (`folio_end_writeback()`).
//!
//! The flusher writes dirty file folios in the order they were dirtied:
//! periodically (every `dirty_writeback_centisecs` = 5 s) those dirty for
//! longer than `dirty_expire_centisecs` = 30 s; all of them when reclaim
//! finds only unqueued dirty folios (`wakeup_flusher_threads(WB_REASON_VMSCAN)`);
//! and, as background writeback, enough to bring dirty pages under
//! `dirty_background_ratio` = 10 % of dirtyable memory (free pages less
//! `totalreserve_pages`, plus file pages: `global_dirtyable_memory()`), as
//! per-4096 ratios (409/4096: `domain_dirty_limits()`), started by a writer
//! (`balance_dirty_pages`) or by the periodic flusher's own check
//! (`wb_check_background_flush`). Before a page-cache folio is written its
//! PTEs are cleaned and write-protected (`folio_clear_dirty_for_io` →
//! `folio_mkclean`, v6.12), so a later store faults and dirties it again.
//! Under cgroup v2 a group's own dirty domain starts its background
//! writeback too (`crate::cgwb`). The writer's pause (`balance_dirty_pages`
//! sleeping) is `crate::page_writeback_throttle` (opt-in: the global and memcg domains).
//!
//! On completion a folio with PG_reclaim is rotated to the tail of the
//! inactive list (`folio_rotate_reclaimable` → `lru_move_tail`, which also
//! clears PG_active and counts PGROTATED in pages, `folio_nr_pages()`;
//! verified in v6.x mm/swap.c through v6.18), so reclaim frees it next.

use crate::mem::folio::{flags, FolioId, LruList, NIL};
use crate::mem::pagetable::TaskId;
use crate::sim::Sim;
use crate::stats::item::*;

/// `dirty_background_ratio` (percent).
pub(crate) const DIRTY_BACKGROUND_RATIO: u64 = 10;

impl Sim {
    /// Completes writeback IOs that finished by `now`, the swap device's
    /// first.
    pub(crate) fn complete_writeback(&mut self, now: u64) {
        for q in 0..2 {
            self.complete_writeback_on(q, now);
        }
    }

    /// Completes device `q`'s writeback IOs that finished by `now`, in
    /// submission order, and re-arms its timer for the next one.
    pub(crate) fn complete_writeback_on(&mut self, q: usize, now: u64) {
        self.complete_writeback_keeping(q, now, 0);
    }

    /// [`Sim::complete_writeback`] for the writes queued before `marks`
    /// (the values of [`Sim::writeback_marks`] taken earlier): the later
    /// ones are still in the submitter's block plug (`blk_start_plug()`,
    /// block/blk-core.c), not yet dispatched to the device, and complete
    /// only at a later call.
    pub(crate) fn complete_writeback_before(&mut self, now: u64, marks: [u64; 2]) {
        for (q, &mark) in marks.iter().enumerate() {
            let plugged = (self.writeback_queued[q] - mark) as usize;
            self.complete_writeback_keeping(q, now, plugged);
        }
    }

    /// Device `q`'s writes that finished by `now`, but for the last
    /// `plugged` queued (still in a block plug), completed in submission
    /// order; the device's timer re-armed.
    fn complete_writeback_keeping(&mut self, q: usize, now: u64, plugged: usize) {
        while self.writeback[q].len() > plugged {
            let (done, f) = self.writeback[q][0];
            if done > now {
                break;
            }
            self.writeback[q].pop_front();
            // A write the `lru` reference policy cut short left its event
            // behind with the folio id struck out (`writeback_cut_short`).
            if f == NIL {
                continue;
            }
            debug_assert!(
                self.folios.is_live(f) && self.folios[f].test(flags::WRITEBACK),
                "a writeback completion for folio {f}, which is not under writeback"
            );
            self.folio_end_writeback(f, done);
        }
        self.arm_writeback_timer(q);
    }

    /// The writes queued so far on each device, for
    /// [`Sim::complete_writeback_before`].
    pub(crate) fn writeback_marks(&self) -> [u64; 2] {
        self.writeback_queued
    }

    /// Queues a writeback completion on device `q` (0 swap, 1 filesystem);
    /// the device's timer follows its oldest write.
    ///
    /// The event names the folio by id alone, with no sequence number:
    /// as the kernel's `folio_end_writeback` finds the folio its bio
    /// holds a reference to, a folio under writeback is never freed
    /// (truncation, exit, the OOM reaper, `MADV_DONTNEED` and reclaim skip
    /// or wait for it; `free_folio` asserts it), so an event's id still
    /// names its folio when it completes. The one exception, the `lru`
    /// reference policy evicting a folio whose write is in flight, strikes
    /// the id out of the event first ([`Sim::writeback_cut_short`]).
    pub(crate) fn queue_writeback(&mut self, q: usize, done: u64, f: FolioId) {
        self.writeback_queued[q] += 1;
        self.writeback[q].push_back((done, f));
        if self.writeback[q].len() == 1 {
            self.timers
                .add_timer(crate::timer::TimerKind::writeback(q), done);
        }
    }

    /// `folio_end_writeback()` of the write that completed at `done` ns.
    fn folio_end_writeback(&mut self, f: FolioId, done: u64) {
        let fo_lru = self.folios.lru(f);
        let fo_memcg = self.folios.memcg(f);
        let fo = &mut self.folios[f];
        debug_assert!(fo.test(flags::WRITEBACK));
        fo.clear(flags::WRITEBACK);
        let (nr, m, file) = (fo.nr_pages(), fo_memcg, fo.is_file());
        self.writeback_sub(m, nr);
        if file {
            self.bdp_account_written(m, nr, done);
        }
        let fo = &mut self.folios[f];
        if !fo.test_and_clear(flags::RECLAIM) {
            return;
        }
        if fo.test(flags::DIRTY) || fo.test(flags::UNEVICTABLE) || !fo.test(flags::LRU) {
            return;
        }
        if crate::reclaim::lru_gen::is_lru_gen_tag(fo_lru) {
            self.lru_gen_rotate_reclaimable(f);
            if self.xp.is_some() {
                self.xp_end_writeback(f);
            }
            return;
        }
        let from = LruList::from_index(fo_lru);
        let m = fo_memcg as usize;
        self.memcgs[m].lruvec.lists[from as usize].unlink(&mut self.folios, f);
        let fo = &mut self.folios[f];
        fo.clear(flags::ACTIVE);
        let to = LruList::of_flags(fo.flags);
        self.memcgs[m].lruvec.lists[to as usize].push_tail(&mut self.folios, f, to as u8);
        // In pages: `__count_vm_events(PGROTATED, folio_nr_pages(folio))`.
        let nr = self.folios[f].nr_pages();
        self.count_vm_events(PGROTATED, nr);
        if self.xp.is_some() {
            self.xp_end_writeback(f);
        }
    }

    /// `folio_mark_dirty()` (v6.12 mm/page-writeback.c) from a dirty PTE or
    /// a store through a shared mapping: a folio with a mapping (page cache
    /// or swap cache) loses PG_reclaim first, dirty already or not, so that
    /// reclaim's mark neither rotates it when an earlier write ends nor, as
    /// PG_readahead (the same bit), starts readahead at the next read. The
    /// buffered write path does not come here: ext4's `block_write_end` →
    /// `mark_buffer_dirty` and iomap's `filemap_dirty_folio` dirty the
    /// folio without clearing the mark ([`Sim::folio_mark_dirty`]). True
    /// if it dirtied a clean file folio.
    pub(crate) fn folio_mark_dirty_mapped(&mut self, f: FolioId) -> bool {
        let fo = &mut self.folios[f];
        if fo.is_file() || fo.test(flags::SWAPCACHE) {
            fo.clear(flags::RECLAIM);
        }
        self.folio_mark_dirty(f)
    }

    /// Tells `explain` that folio `f`'s write completed and rotated it.
    #[cold]
    fn xp_end_writeback(&mut self, f: FolioId) {
        let text = if crate::reclaim::lru_gen::folio_lru_gen(&self.folios[f]).is_some() {
            "its write completed with PG_reclaim set: folio_rotate_reclaimable → \
             lru_gen_rotate_reclaimable: to the oldest generation's tail (reclaim frees it next)"
        } else {
            "its write completed with PG_reclaim set: folio_rotate_reclaimable → lru_move_tail: \
             to the inactive tail, PG_active cleared, pgrotated counted (reclaim frees it next)"
        };
        self.xp_actor(
            f,
            "writeback completion",
            "folio_end_writeback",
            text.to_string(),
        );
    }

    /// The `lru` reference policy frees folio `f` without waiting for its
    /// write: clears PG_writeback and strikes `f` out of its completion
    /// event, which then completes nothing (the id may be reused before
    /// the event's time). Searched from the oldest write: the policy evicts
    /// the coldest folios, which the flusher wrote first. Cold: the only
    /// path that frees a folio under writeback.
    #[cold]
    #[inline(never)]
    pub(crate) fn writeback_cut_short(&mut self, f: FolioId) {
        let fo_memcg = self.folios.memcg(f);
        let fo = &mut self.folios[f];
        debug_assert!(fo.test(flags::WRITEBACK));
        fo.clear(flags::WRITEBACK);
        let (nr, m) = (fo.nr_pages(), fo_memcg);
        self.writeback_sub(m, nr);
        if self.folios[f].is_file() {
            self.bdp_writeback_cut_short(m, nr);
        }
        for q in &mut self.writeback {
            if let Some(e) = q.iter_mut().find(|e| e.1 == f) {
                e.1 = NIL;
                return;
            }
        }
        debug_assert!(false, "folio {f} under writeback has no completion event");
    }

    /// Dirty file folio `f` leaves the flusher's queue
    /// ([`crate::mem::queue`]): reclaim's `pageout` writes it
    /// (`folio_clear_dirty_for_io`, then `__folio_start_writeback` clears
    /// PAGECACHE_TAG_DIRTY; v6.12 mm/page-writeback.c), the task's own
    /// `sync_file_range`/`fsync` writes it (`crate::filemap_sync`), or the
    /// `lru` reference policy writes it as it evicts it. No path frees a
    /// dirty file folio (`free_folio` asserts it), so these are all. Its
    /// entry is skipped when met, so a folio that reuses the id, or this
    /// one dirtied again, is written at its own time and not at the old
    /// entry's.
    #[inline(never)]
    pub(crate) fn dirty_fifo_unqueue(&mut self, f: FolioId) {
        self.dirty_fifo.unqueue(f);
    }

    /// Starts writeback of one dirty file folio at `now`: PG_dirty cleared
    /// by [`Sim::folio_clear_dirty_for_io`], then PG_writeback set
    /// (`__folio_start_writeback`).
    pub(crate) fn write_folio(&mut self, f: FolioId, now: u64) {
        self.write_folio_by(f, now, None);
    }

    /// [`Sim::write_folio`] run by task `by` (its own `fsync` or
    /// `sync_file_range`, `crate::filemap_sync`; `None`: a kworker), which
    /// decides whose TLB flushes `folio_mkclean` counts local.
    pub(crate) fn write_folio_by(&mut self, f: FolioId, now: u64, by: Option<TaskId>) {
        if !self.folios.is_live(f) {
            return;
        }
        let fo = &self.folios[f];
        if !fo.is_file() || !fo.test(flags::DIRTY) || fo.test(flags::WRITEBACK) {
            return;
        }
        self.folio_clear_dirty_for_io(f, by);
        let fo_memcg = self.folios.memcg(f);
        let fo = &mut self.folios[f];
        fo.set(flags::WRITEBACK);
        // A large folio is written whole.
        let (nr, m) = (fo.nr_pages(), fo_memcg);
        self.file_dirty_sub(m, nr);
        self.writeback_add(m, nr);
        self.count_vm_events(PGPGOUT, 4 * nr);
        if self.cfg.policy.dirty_throttle {
            self.bdp_do_writepages(m, nr, now);
        }
        // The flusher is its own thread: a full request queue delays its
        // submissions (reflected in `done`), not the workload.
        let done = self.fs.write(now, nr).done;
        self.queue_writeback(1, done, f);
    }

    /// `folio_clear_dirty_for_io()` (v6.12 mm/page-writeback.c) of dirty
    /// page-cache folio `f`, before its write by task `by` (`None`: a
    /// kworker): `folio_mkclean()` cleans and write-protects the PTEs or
    /// PMDs that map it ([`Sim::folio_mkclean`]); if it
    /// cleaned any, `folio_mark_dirty()` moves their dirty bit into the
    /// folio (already dirty here, as every writer checks PG_dirty first, so
    /// only its side effect shows: PG_reclaim cleared,
    /// [`Sim::folio_mark_dirty_mapped`]); then PG_dirty is cleared. The
    /// caller accounts the pages (`NR_FILE_DIRTY`). Since the PTEs are clean
    /// and read-only, a store after the write faults (`do_wp_page` →
    /// `wp_page_shared` → `fault_dirty_shared_page`: dirtied again, and the
    /// writer balances), and reclaim's unmap, the MGLRU walk or a zap no
    /// longer find a stale dirty bit to dirty the written folio with.
    /// Before, mmsim left the PTEs dirty and writable (VALIDATION.md, "no
    /// `folio_mkclean()` at writeback"). An unmapped folio (every buffered
    /// write's) takes one test.
    pub(crate) fn folio_clear_dirty_for_io(&mut self, f: FolioId, by: Option<TaskId>) {
        if self.folios[f].mapcount > 0 && self.folio_mkclean(f, by) > 0 {
            self.folio_mark_dirty_mapped(f);
        }
        self.folios[f].clear(flags::DIRTY);
    }

    /// The flusher writes the folio of an entry it took off its queue.
    ///
    /// A folio dirtied again while its earlier write is in flight is
    /// skipped: the flusher writes under `WB_SYNC_NONE`, and v6.12
    /// `folio_prepare_writeback()` passes over a folio under writeback
    /// instead of waiting for it. The folio keeps its dirty tag, so
    /// `requeue_inode()` puts its inode back on `b_dirty`
    /// (`redirty_tail_locked()`, dirtied now at the latest) and a later pass
    /// writes it: the folio is queued again at `now`. Without this its entry
    /// would be gone and nothing but reclaim or a sync would ever write it.
    /// Returns false for such a folio.
    fn flusher_write(&mut self, f: FolioId, now: u64) -> bool {
        if self.folios.is_live(f) {
            let fo = &self.folios[f];
            if fo.is_file() && fo.test(flags::DIRTY) && fo.test(flags::WRITEBACK) {
                self.dirty_fifo.push_back(now, f);
                return false;
            }
        }
        self.write_folio(f, now);
        true
    }

    /// Periodic flusher (`wb_do_writeback()`, v6.12 fs/fs-writeback.c,
    /// every `dirty_writeback_interval`): `wb_check_old_data_flush()` writes
    /// folios dirty for longer than dirty_expire, then
    /// `wb_check_background_flush()` runs the background writeback of the
    /// global domain ([`Sim::wb_check_background_flush`]) and of each
    /// group's ([`Sim::memcg_background_flush`]); with
    /// `policy.dirty_throttle`, of each wb ([`Sim::wb_check_background_flush_all`]).
    /// An entry queued again by
    /// [`Sim::flusher_write`] is not yet expired, so the pass ends before it.
    pub(crate) fn flusher_periodic(&mut self, now: u64) {
        while let Some((t, f)) = self.dirty_fifo.front() {
            if t + crate::sim::DIRTY_EXPIRE_NS > now {
                break;
            }
            self.dirty_fifo.pop_front();
            let _ = self.flusher_write(f, now);
        }
        if self.cfg.policy.dirty_throttle {
            self.wb_check_background_flush_all(now);
            return;
        }
        self.wb_check_background_flush(now);
        self.memcg_background_flush();
    }

    /// `wb_check_background_flush()` of the root wb (v6.12
    /// fs/fs-writeback.c): when `wb_over_bg_thresh()` finds the global
    /// domain's dirty pages (`NR_FILE_DIRTY`, writeback not counted) above
    /// its `bg_thresh`, `wb_writeback()` with `for_background` writes until
    /// they are not, whether or not anyone is writing. Before, only a
    /// writer's `balance_dirty_pages()` started the global background
    /// writeback, so dirty pages left over the threshold with no further
    /// writes (a threshold lowered by allocations, dirtying that does not
    /// balance) waited for their expiry. The writing is
    /// [`Sim::global_background_writeback`]'s, as a writer's. This is the
    /// path without `policy.dirty_throttle`; with it, each wb's, with the
    /// per-wb part of `wb_over_bg_thresh()` (`Sim::wb_check_background_flush_all`,
    /// `crate::wb_over_bg_thresh`).
    pub(crate) fn wb_check_background_flush(&mut self, now: u64) {
        if self.nr_dirty == 0 {
            return;
        }
        let (_, bg_thresh) = crate::cgwb::domain_dirty_limits(self.global_dirtyable_memory());
        self.global_background_writeback(bg_thresh, now);
    }

    /// `wakeup_flusher_threads(WB_REASON_VMSCAN)`: writes all dirty file
    /// folios. One pass over the entries queued when it starts: those it
    /// queues again ([`Sim::flusher_write`]) wait for a later pass.
    pub(crate) fn wakeup_flusher(&mut self, now: u64) {
        for _ in 0..self.dirty_fifo.held() {
            let Some((_, f)) = self.dirty_fifo.pop_front() else {
                break;
            };
            let _ = self.flusher_write(f, now);
        }
    }

    /// Background writeback when dirty pages exceed dirty_background_ratio
    /// of dirtyable memory (`balance_dirty_pages` → `wb_start_background_writeback`),
    /// the global domain: called by writers only, through
    /// [`Sim::balance_dirty_pages_ratelimited`] (the periodic flusher's own
    /// check is [`Sim::wb_check_background_flush`]).
    ///
    /// The threshold is `gdtc->bg_thresh` of v6.12 `domain_dirty_limits()`
    /// ([`crate::cgwb::domain_dirty_limits`]: `dirty_background_ratio` per
    /// 4096, 409 for 10 %, times `global_dirtyable_memory()`, divided by
    /// 4096; halved `thresh` if not below it). Not modelled: the limits a
    /// real-time or deadline task gets lifted by a quarter
    /// (`rt_or_dl_task()`), as mmsim's tasks have no scheduling class.
    pub(crate) fn balance_dirty_pages(&mut self) {
        let (_, thresh) = crate::cgwb::domain_dirty_limits(self.global_dirtyable_memory());
        if self.nr_dirty <= thresh {
            return;
        }
        self.global_background_writeback(thresh, self.clock);
    }

    /// The global domain's background writeback at `now` (v6.12
    /// fs/fs-writeback.c `wb_writeback()` with `for_background`, which stops
    /// once `wb_over_bg_thresh()` is false): the oldest dirty folios written
    /// while the dirty pages exceed `thresh` (`bg_thresh`).
    /// Started by a writer ([`Sim::balance_dirty_pages`]) or by the periodic
    /// flusher ([`Sim::wb_check_background_flush`]).
    fn global_background_writeback(&mut self, thresh: u64, now: u64) {
        // The oldest entry's folio under writeback ends the pass, queued
        // again. Simplification: v6.12's `writeback_get_folio()` passes over
        // it (`folio_prepare_writeback()` under `WB_SYNC_NONE`) and writes
        // the inode's next dirty folios in the same pass; `wb_writeback()`
        // sleeps on the inode (`inode_sleep_on_writeback()`) only after a
        // pass that made no progress. Stopping here keeps a writer that
        // keeps dirtying folios under writeback from making each dirtying
        // walk the queue (quadratic). The next pass goes on: at the next
        // dirtying of a clean folio, or under `policy.bdp_ratelimit` at the
        // writer's next ratelimited check (the periodic flusher's, sooner).
        while self.nr_dirty > thresh {
            let Some((_, f)) = self.dirty_fifo.pop_front() else {
                break;
            };
            if !self.flusher_write(f, now) {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{MachineConfig, PolicyConfig, PolicyName, Size};
    use crate::event::Event;
    use crate::mem::filemap::slot_folio;
    use crate::mem::folio::{flags, NIL};
    use crate::sim::Sim;

    /// A 16 MiB machine under `policy` with one task and a 16-page file it
    /// has open.
    fn machine_with_a_file(policy: PolicyName) -> (Sim, crate::event::FileId) {
        let mut s = Sim::new(MachineConfig {
            memory: Size::from_pages(4096),
            policy: PolicyConfig {
                name: policy,
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        let t = s.add_task("t");
        let file = s.add_file("f", 16).unwrap();
        s.open(file, t).unwrap();
        (s, file)
    }

    /// The `lru` reference policy frees a folio whose write is in flight:
    /// its completion event is struck out, so when the id is reused by a
    /// folio that starts its own write, the old event's completion leaves
    /// the new folio under writeback and only its own event ends it.
    #[test]
    fn a_write_cut_short_completes_nothing_when_its_folio_id_is_reused() {
        let (mut s, file) = machine_with_a_file(PolicyName::Lru);
        let folio_at = |s: &Sim, i: u32| slot_folio(s.files[file as usize].slot(i));
        s.step(&Event::FileWrite {
            file,
            index: 0,
            pages: 1,
        });
        let f0 = folio_at(&s, 0).unwrap();
        s.wakeup_flusher(s.clock);
        assert!(s.folios[f0].test(flags::WRITEBACK));
        let done0 = s.writeback[1][0].0;
        assert_eq!(s.writeback[1][0].1, f0);
        // The policy evicts it (the only folio) without waiting.
        assert!(s.lru_evict_one());
        assert_eq!(folio_at(&s, 0), None);
        assert_eq!(s.nr_writeback, 0);
        assert_eq!(s.writeback[1].len(), 1);
        assert_eq!(s.writeback[1][0], (done0, NIL));
        // Page 1's folio reuses the id and starts its own write.
        s.step(&Event::FileWrite {
            file,
            index: 1,
            pages: 1,
        });
        let f1 = folio_at(&s, 1).unwrap();
        assert_eq!(f1, f0);
        s.wakeup_flusher(s.clock);
        assert_eq!(s.writeback[1].len(), 2);
        let done1 = s.writeback[1][1].0;
        assert!(done1 > done0, "{done1} > {done0}");
        s.complete_writeback(done0);
        assert!(s.folios[f1].test(flags::WRITEBACK));
        assert_eq!((s.nr_writeback, s.writeback[1].len()), (1, 1));
        s.complete_writeback(done1);
        assert!(!s.folios[f1].test(flags::WRITEBACK));
        assert_eq!((s.nr_writeback, s.writeback[1].len()), (0, 0));
    }

    /// A dirty file folio freed by the `lru` policy (written at once, not
    /// by the flusher) leaves the flusher's queue: when a folio that reuses
    /// its id is dirtied later, the old entry does not write it when the
    /// old one's dirty time expires; it is written when its own does.
    #[test]
    fn a_freed_dirty_folios_entry_does_not_write_the_folio_reusing_its_id_early() {
        use crate::sim::DIRTY_EXPIRE_NS;
        let (mut s, file) = machine_with_a_file(PolicyName::Lru);
        let folio_at = |s: &Sim, i: u32| slot_folio(s.files[file as usize].slot(i));
        let write = |s: &mut Sim, index: u32| {
            s.step(&Event::FileWrite {
                file,
                index,
                pages: 1,
            })
        };
        write(&mut s, 0);
        let (t0, f0) = (s.clock, folio_at(&s, 0).unwrap());
        assert!(s.lru_evict_one());
        assert_eq!((folio_at(&s, 0), s.nr_dirty), (None, 0));
        s.clock += DIRTY_EXPIRE_NS / 2;
        write(&mut s, 1);
        let (t1, f1) = (s.clock, folio_at(&s, 1).unwrap());
        assert_eq!(f1, f0);
        assert_eq!(s.nr_dirty, 1);
        // The old entry's time has expired, the new one's not.
        s.flusher_periodic(t0 + DIRTY_EXPIRE_NS);
        assert!(s.folios[f1].test(flags::DIRTY));
        assert_eq!((s.nr_dirty, s.nr_writeback), (1, 0));
        s.flusher_periodic(t1 + DIRTY_EXPIRE_NS);
        assert!(s.folios[f1].test(flags::WRITEBACK));
        assert_eq!((s.nr_dirty, s.nr_writeback), (0, 1));
    }

    /// A folio dirtied again while its write is in flight is passed over
    /// by the flusher (`folio_prepare_writeback` under `WB_SYNC_NONE`) and
    /// stays queued: once the first write completes, the next pass writes
    /// it. Before, the pass dropped its entry and the folio stayed dirty.
    #[test]
    fn a_folio_dirtied_again_under_writeback_is_written_by_a_later_pass() {
        let (mut s, file) = machine_with_a_file(PolicyName::default());
        let write = |s: &mut Sim| {
            s.step(&Event::FileWrite {
                file,
                index: 0,
                pages: 1,
            })
        };
        write(&mut s);
        let f = slot_folio(s.files[file as usize].slot(0)).unwrap();
        s.wakeup_flusher(s.clock);
        let done = s.writeback[1][0].0;
        write(&mut s);
        let fo = s.folios[f];
        assert!(fo.test(flags::DIRTY) && fo.test(flags::WRITEBACK));
        s.wakeup_flusher(s.clock);
        assert_eq!(s.writeback[1].len(), 1, "no second write in flight");
        assert_eq!(s.dirty_fifo.front().map(|e| e.1), Some(f), "still queued");
        s.complete_writeback(done);
        assert_eq!((s.nr_dirty, s.nr_writeback), (1, 0));
        s.wakeup_flusher(s.clock.max(done));
        assert!(!s.folios[f].test(flags::DIRTY) && s.folios[f].test(flags::WRITEBACK));
        assert_eq!((s.nr_dirty, s.nr_writeback), (0, 1));
        assert_eq!(s.dirty_fifo.front(), None);
    }

    /// The periodic flusher meets an expired entry whose folio was dirtied
    /// again under writeback: it queues it again at the pass's time and
    /// ends the pass there (the new entry is not yet expired), and a pass
    /// a full expiry interval later, after the first write completed,
    /// writes it.
    #[test]
    fn the_periodic_flusher_requeues_a_folio_under_writeback_for_a_later_pass() {
        use crate::sim::DIRTY_EXPIRE_NS;
        let (mut s, file) = machine_with_a_file(PolicyName::default());
        let write = |s: &mut Sim| {
            s.step(&Event::FileWrite {
                file,
                index: 0,
                pages: 1,
            })
        };
        write(&mut s);
        let f = slot_folio(s.files[file as usize].slot(0)).unwrap();
        s.wakeup_flusher(s.clock);
        let done = s.writeback[1][0].0;
        write(&mut s);
        let pass = s.clock + DIRTY_EXPIRE_NS;
        s.flusher_periodic(pass);
        assert_eq!(s.writeback[1].len(), 1, "no second write in flight");
        assert_eq!(
            s.dirty_fifo.front(),
            Some((pass, f)),
            "queued again at the pass"
        );
        assert_eq!(s.dirty_fifo.held(), 1);
        s.complete_writeback(done);
        s.flusher_periodic(pass + DIRTY_EXPIRE_NS - 1);
        assert!(s.folios[f].test(flags::DIRTY), "not expired yet");
        s.flusher_periodic(pass + DIRTY_EXPIRE_NS);
        assert!(!s.folios[f].test(flags::DIRTY) && s.folios[f].test(flags::WRITEBACK));
        assert_eq!((s.nr_dirty, s.nr_writeback, s.dirty_fifo.held()), (0, 1, 0));
    }

    /// Background writeback ends its pass at an oldest folio still under
    /// writeback (mmsim's simplification of `wb_writeback`, see
    /// `Sim::balance_dirty_pages`), queued again behind the others: the write that takes the dirty count over
    /// the background threshold writes nothing, the next writes the folios
    /// that are now oldest, and the requeued folio stays dirty and queued.
    #[test]
    fn background_writeback_stops_at_a_folio_under_writeback() {
        use crate::mem::folio::LruList;
        use crate::writeback::DIRTY_BACKGROUND_RATIO;
        // A write takes 10 s: page 0's stays in flight throughout.
        let mut s = crate::rule_tests::dirty_balance::slow_write_machine();
        let t = s.add_task("t");
        let file = s.add_file("f", 2048).unwrap();
        s.open(file, t).unwrap();
        let folio_at = |s: &Sim, i: u32| slot_folio(s.files[file as usize].slot(i)).unwrap();
        let write = |s: &mut Sim, index: u32| {
            s.step(&Event::FileWrite {
                file,
                index,
                pages: 1,
            })
        };
        write(&mut s, 0);
        let f0 = folio_at(&s, 0);
        s.wakeup_flusher(s.clock);
        write(&mut s, 0);
        // `domain_dirty_limits()`'s bg_thresh: 409/4096 of the free pages
        // (no per-CPU ones) over the high watermark, plus file pages, plus 1.
        let thresh = |s: &Sim| {
            let lv = s.subtree_lruvec(crate::memcg::ROOT);
            let free = s.phys.zone.free_pages().saturating_sub(s.node.wmark_high);
            let dirtyable =
                free + lv.size(LruList::ActiveFile) + lv.size(LruList::InactiveFile) + 1;
            DIRTY_BACKGROUND_RATIO * 4096 / 100 * dirtyable / 4096
        };
        let mut index = 1;
        while s.nr_dirty <= thresh(&s) {
            assert_eq!(s.nr_writeback, 1, "nothing written below the threshold");
            write(&mut s, index);
            index += 1;
        }
        // The crossing write's pass met f0 first, under writeback, and stopped.
        assert_eq!(s.nr_dirty, thresh(&s) + 1);
        assert_eq!(s.nr_writeback, 1);
        assert_eq!(s.dirty_fifo.front().map(|e| e.1), Some(folio_at(&s, 1)));
        assert_eq!(s.dirty_fifo.held() as u64, s.nr_dirty);
        // The next write's pass writes the now oldest folios, pages 1 and
        // 2, down to the threshold.
        write(&mut s, index);
        for i in [1, 2] {
            let fi = folio_at(&s, i);
            assert!(s.folios[fi].test(flags::WRITEBACK) && !s.folios[fi].test(flags::DIRTY));
        }
        assert_eq!((s.nr_writeback, s.nr_dirty), (3, thresh(&s)));
        let fo = s.folios[f0];
        assert!(fo.test(flags::DIRTY) && fo.test(flags::WRITEBACK));
        assert_eq!(s.dirty_fifo.held() as u64, s.nr_dirty);
    }
}
