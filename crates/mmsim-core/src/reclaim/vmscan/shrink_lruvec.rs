//! `shrink_lruvec()` of mm/vmscan.c and the LRU list walks below it:
//! `shrink_list`, `isolate_lru_folios`, `move_folios_to_lru`,
//! `shrink_active_list` and `shrink_inactive_list` (which hands the
//! isolated folios to [`super::shrink_folio_list`]).

use crate::config::CostVariant;
use crate::mem::folio::{flags, FolioId, LruList};
use crate::reclaim::{Reclaimer, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::sim::{Balance, ClassicRules, Policy, Sim};
use crate::stats::item::*;
use crate::tracepoint::TpEvent;

impl Sim {
    /// `shrink_lruvec()`: scan the lists in SWAP_CLUSTER_MAX chunks towards
    /// the targets, with the proportional adjustment once the goal is met.
    pub(crate) fn shrink_lruvec(&mut self, sc: &mut ScanControl, rules: ClassicRules) {
        if let Policy::Mglru(_) = self.policy {
            return self.lru_gen_shrink_lruvec(sc);
        }
        let mut nr = self.get_scan_count(sc, rules);
        let targets = nr;
        let proportional = sc.who == Reclaimer::Direct && sc.priority == DEF_PRIORITY;
        let nr_to_reclaim = sc.nr_to_reclaim;
        let mut reclaimed = 0u64;
        while nr[0] > 0 || nr[3] > 0 || nr[2] > 0 {
            for (i, lru) in LruList::EVICTABLE.into_iter().enumerate() {
                if nr[i] > 0 {
                    let chunk = nr[i].min(SWAP_CLUSTER_MAX);
                    nr[i] -= chunk;
                    reclaimed += self.shrink_list(lru, chunk, sc, rules);
                }
            }
            if reclaimed < nr_to_reclaim || proportional {
                continue;
            }
            let nr_file = nr[2] + nr[3];
            let nr_anon = nr[0] + nr[1];
            if nr_file == 0 || nr_anon == 0 {
                break;
            }
            let (smaller, other) = if nr_file > nr_anon { (0, 2) } else { (2, 0) };
            let remaining = nr[smaller] + nr[smaller + 1];
            let pct = remaining * 100 / (targets[smaller] + targets[smaller + 1] + 1);
            nr[smaller] = 0;
            nr[smaller + 1] = 0;
            for l in [other, other + 1] {
                let done = targets[l] - nr[l];
                let x = targets[l] * (100 - pct) / 100;
                nr[l] = x - x.min(done);
            }
        }
        sc.nr_reclaimed += reclaimed;
        if self.can_age_anon() && self.inactive_is_low(sc.memcg, false) {
            self.shrink_active_list(SWAP_CLUSTER_MAX, false, sc, rules);
        }
    }

    /// `shrink_list()`: active lists are deactivated (if allowed), inactive lists reclaimed.
    fn shrink_list(
        &mut self,
        lru: LruList,
        n: u64,
        sc: &mut ScanControl,
        rules: ClassicRules,
    ) -> u64 {
        let file = lru.is_file();
        if lru.is_active() {
            let allowed = if rules.deactivate_on_refaults {
                sc.may_deactivate[file as usize]
            } else {
                // v4.9 inactive_list_is_low(): anon needs swap
                (file || self.swap.is_some()) && self.inactive_is_low(sc.memcg, file)
            };
            if allowed {
                self.shrink_active_list(n, file, sc, rules);
            } else {
                sc.skipped_deactivate = true;
            }
            return 0;
        }
        self.shrink_inactive_list(n, file, sc, rules)
    }

    /// `isolate_lru_folios()`: takes up to `n` folios from the tail of `lru`
    /// into `self.scratch`. One zone, so nothing is skipped: scanned = taken.
    ///
    /// A lookahead walks the (dense) links a few folios ahead of the tail and
    /// prefetches those folios, so their cache misses overlap.
    fn isolate_lru_folios(&mut self, m: crate::memcg::MemcgId, n: u64, lru: LruList) -> u64 {
        const AHEAD: usize = 8;
        self.scratch.clear();
        let list = &mut self.memcgs[m as usize].lruvec.lists[lru as usize];
        let mut ahead = list.tail;
        for _ in 0..AHEAD.min(n as usize) {
            ahead = self.folios.prefetch_and_step_towards_head(ahead);
        }
        // Counted in base pages (`nr_taken += nr_pages`, v6.x).
        let mut taken = 0;
        while taken < n {
            let Some(f) = list.pop_tail(&mut self.folios) else {
                break;
            };
            ahead = self.folios.prefetch_and_step_towards_head(ahead);
            let fo = &mut self.folios[f];
            fo.clear(flags::LRU);
            taken += fo.nr_pages();
            self.scratch.push(f);
        }
        taken
    }

    /// Prefetches what reclaiming folio `f` will touch: the PTE that
    /// `folio_referenced` reads for an anonymous folio, the page-cache slot
    /// that receives a file folio's shadow.
    #[inline]
    pub(crate) fn prefetch_reclaim(&self, f: FolioId) {
        let fo = &self.folios[f];
        // The slot's address without a bounds check on the slot array (a
        // prefetch never faults; see `Sim::prefetch_slot`).
        let p = if fo.is_file() {
            self.files
                .get(fo.space as usize)
                .map(|file| file.slots.as_ptr().wrapping_add(fo.index as usize))
        } else if fo.mapcount > 0 {
            self.vmas
                .get(fo.space as usize)
                .map(|v| v.ptes.as_ptr().wrapping_add(fo.index as usize))
        } else {
            None
        };
        if let Some(p) = p {
            crate::sim::prefetch(p as *const u8);
        }
    }

    /// `move_folios_to_lru()`: puts folios back at the head of the list their
    /// flags select; active ones age the workingset clock (5.9+) or count as
    /// rotated (v4.9). Returns how many went to an active list.
    fn move_folios_to_lru(&mut self, folios: &[FolioId], rules: ClassicRules) -> u64 {
        let mut nr_active = 0;
        for &f in folios {
            let fo_memcg = self.folios.memcg(f);
            let fo = &mut self.folios[f];
            fo.set(flags::LRU);
            let lru = LruList::of_flags(fo.flags);
            let m = fo_memcg;
            self.memcgs[m as usize].lruvec.lists[lru as usize].push_head(
                &mut self.folios,
                f,
                lru as u8,
            );
            if lru.is_active() {
                let nr = self.folios[f].nr_pages();
                nr_active += nr;
                if rules.putback_active_ages {
                    self.workingset_age_nonresident(m, nr);
                }
                self.note_rotated(m, lru.is_file(), nr);
            }
        }
        nr_active
    }

    /// `shrink_active_list()`: deactivate from the tail of an active list.
    /// Referenced VM_EXEC file folios stay active; everything else moves to
    /// the inactive list (with PG_workingset, 4.20+). PG_referenced is not consulted.
    pub(crate) fn shrink_active_list(
        &mut self,
        n: u64,
        file: bool,
        sc: &mut ScanControl,
        rules: ClassicRules,
    ) {
        let taken = self.isolate_lru_folios(sc.memcg, n, LruList::active(file));
        if self.tp.is_some() {
            self.trace_isolate(sc, n, taken, LruList::active(file));
        }
        self.lru_lock_reclaim(sc, sc.memcg, taken);
        sc.nr_scanned += taken;
        sc.charge_lru(taken * self.cost.scan_ns);
        if sc.who != Reclaimer::Memcg {
            self.count_vm_events(PGREFILL, taken);
        }
        self.count_memcg_events(sc.memcg, PGREFILL, taken);
        self.note_scanned(sc.memcg, file, taken);
        let batch = std::mem::take(&mut self.scratch);
        let (mut nr_rotated, mut nr_deactivate, mut nr_exec_kept) = (0, 0, 0);
        for (i, &f) in batch.iter().enumerate() {
            if let Some(&g) = batch.get(i + 4) {
                self.prefetch_reclaim(g);
            }
            let referenced = self.folio_referenced(f, sc);
            let nr = self.folios[f].nr_pages();
            if referenced.vmas > 0 {
                nr_rotated += nr;
                if referenced.exec && file {
                    nr_exec_kept += nr;
                    if self.xp.is_some() {
                        self.xp_shrink_active(f, sc, true);
                    }
                    continue;
                }
            }
            let fo = &mut self.folios[f];
            fo.clear(flags::ACTIVE);
            if rules.pg_workingset {
                fo.set(flags::WORKINGSET);
            }
            nr_deactivate += nr;
            if self.xp.is_some() {
                self.xp_shrink_active(f, sc, false);
            }
        }
        self.lru_lock_reclaim(sc, sc.memcg, batch.len() as u64);
        self.move_folios_to_lru(&batch, rules);
        self.scratch = batch;
        self.count_events(sc.memcg, PGDEACTIVATE, nr_deactivate);
        if self.tp.is_some() {
            let e = TpEvent::LruShrinkActive {
                nr_taken: taken,
                nr_active: taken - nr_deactivate,
                nr_deactivated: nr_deactivate,
                nr_referenced: nr_rotated,
                priority: sc.priority as i32,
                file,
            };
            self.trace_vmscan(sc.now(), Some(sc.memcg), e);
        }
        match rules.balance {
            // v4.9 counts every referenced folio as rotated, even if deactivated.
            Balance::ScannedRotated => {
                // move_folios_to_lru() already counted the ones kept active.
                self.note_rotated(sc.memcg, file, nr_rotated - nr_exec_kept);
            }
            Balance::Cost(CostVariant::V6_2) => self.lru_note_cost(sc.memcg, file, 0, nr_exec_kept),
            Balance::Cost(CostVariant::V5_8) => {}
        }
    }

    /// `shrink_inactive_list()`: isolate, `shrink_folio_list()`, put back,
    /// count, and note the cost. Returns pages reclaimed.
    pub(crate) fn shrink_inactive_list(
        &mut self,
        n: u64,
        file: bool,
        sc: &mut ScanControl,
        rules: ClassicRules,
    ) -> u64 {
        // Writeback completes by interrupt while reclaim runs: folios whose IO
        // ended by now are rotated to the tail before this batch is isolated.
        self.complete_writeback(sc.now());
        let taken = self.isolate_lru_folios(sc.memcg, n, LruList::inactive(file));
        if self.tp.is_some() {
            self.trace_isolate(sc, n, taken, LruList::inactive(file));
        }
        if taken == 0 {
            return 0;
        }
        self.lru_lock_reclaim(sc, sc.memcg, taken);
        sc.charge_lru(taken * self.cost.scan_ns);
        self.count_reclaim_events(sc.memcg, sc.who, crate::stats::PGSCAN, taken);
        if file {
            self.count_vm_events(PGSCAN_FILE, taken);
            sc.nr_file_taken += taken;
        } else {
            self.count_vm_events(PGSCAN_ANON, taken);
        }
        self.note_scanned(sc.memcg, file, taken);
        let mut batch = std::mem::take(&mut self.scratch);
        let (reclaimed, stat) = self.shrink_folio_list(&mut batch, sc, rules);
        if self.tp.is_some() {
            let dirty = stat.nr_unqueued_dirty;
            self.trace_shrink_inactive(sc, sc.memcg, taken, reclaimed, dirty, &batch, file);
        }
        self.lru_lock_reclaim(sc, sc.memcg, batch.len() as u64);
        self.move_folios_to_lru(&batch, rules);
        self.scratch = batch;
        self.count_reclaim_events(sc.memcg, sc.who, crate::stats::PGSTEAL, reclaimed);
        if file {
            self.count_vm_events(PGSTEAL_FILE, reclaimed);
        } else {
            self.count_vm_events(PGSTEAL_ANON, reclaimed);
        }
        self.lru_note_cost(sc.memcg, file, stat.nr_pageout, taken - reclaimed);
        sc.nr_unqueued_dirty += stat.nr_unqueued_dirty;
        if stat.nr_unqueued_dirty == taken {
            self.wakeup_flusher(sc.now());
            if self.cfg.policy.v1_reclaim_throttle && !self.writeback_throttling_sane(sc) {
                self.reclaim_throttle_writeback_v1(sc);
            }
        }
        reclaimed
    }
}
