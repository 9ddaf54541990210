//! The eviction: sorting, isolating and reclaiming folios of the oldest
//! generation (mm/vmscan.c, v6.1, v6.12 and v6.14).
//!
//! Models `sort_folio`, `isolate_folio`, `scan_folios`, `isolate_folios`,
//! `evict_folios` (with `shrink_folio_list` and the putback), the v6.14
//! retry pass for folios that finished writeback (6.2+), and
//! `lru_gen_rotate_reclaimable` (`folio_rotate_reclaimable` under MGLRU).

use super::*;
use crate::stats::item::*;

impl Sim {
    /// `sort_folio()`: true if folio `f` (at the tail of min_seq's list) was
    /// moved instead of being isolated: promoted (its generation field
    /// differs) → its generation's head; protected by tier (> `tier_idx`,
    /// v6.14's lazily promoted workingset, or v6.12's and (with
    /// `fix_underprotected`) v6.1.69+'s saturated refs) → min_seq + 1; under
    /// writeback or dirty file → min_seq + 1 with PG_reclaim (not v6.12 with
    /// `mglru_common_reactivation`: 6.12.114+'s `sort_folio()` has no such
    /// clause, so `shrink_folio_list()` meets them). v6.12 counts
    /// `protected[tier − 1]` as v6.1 but no `workingset_activate` (6.12's is
    /// counted by `lru_gen_refault()`). v6.12 and v6.14 count a dirty file
    /// folio's pages in `sc.nr_file_taken` and, unless under writeback, in
    /// `sc.nr_unqueued_dirty` (read in 6.12.107 and in 1bc542c6a0d1, which
    /// 6.13+ carry; v6.1 counts nothing: 6.1.176 has no such clause).
    ///
    /// `v` is the version in force and `min_gen` min_seq's generation of the
    /// folio's type, both read once per `scan_folios`.
    #[inline(always)]
    fn sort_folio(
        &mut self,
        v: MglruVersion,
        m: MemcgId,
        f: FolioId,
        min_gen: usize,
        tier_idx: usize,
        sc: &mut ScanControl,
    ) -> bool {
        let fo = self.folios[f];
        let ty = fo.is_file() as usize;
        let gen = folio_lru_gen(&fo).expect("on an MGLRU list");
        let refs = folio_lru_refs(v, &fo);
        let ws = fo.test(flags::WORKINGSET);
        let tier = lru_tier_from_refs(v, refs, ws);
        if gen != min_gen {
            self.lru_gen_move(m, f, gen, false);
            if self.xp.is_some() {
                let why = "promoted since it was aged (its generation is no longer min_seq's): \
                           moved to its generation's head";
                self.xp_sort_folio(f, sc, why);
            }
            return true;
        }
        let lazily_promoted =
            v == MglruVersion::V6_14 && refs + ws as u64 == LRU_REFS_MASK as u64 + 2;
        // 6.1.69+ (`fix_underprotected`) and 6.12: saturated refs are
        // protected whatever tier_idx says.
        let saturated = (v == MglruVersion::V6_12
            || (v == MglruVersion::V6_1 && self.lru_gen.fix_underprotected))
            && refs == 1 << LRU_REFS_WIDTH;
        if tier > tier_idx || lazily_promoted || saturated {
            let g = self.folio_inc_gen(m, f, false);
            match v {
                MglruVersion::V6_14 => {
                    self.lru_gen_move(m, f, g, false);
                    if !lazily_promoted {
                        self.lrugen_mut(m).protected[ty][tier] += 1;
                    }
                }
                MglruVersion::V6_1 => {
                    self.lru_gen_move(m, f, g, true);
                    self.lrugen_mut(m).protected[ty][tier - 1] += 1;
                    // Pages of a large page-cache folio (anon kept at 1).
                    let nr = if ty == FILE {
                        self.folios[f].nr_pages()
                    } else {
                        1
                    };
                    self.vm_workingset_activate(m, ty == FILE, nr);
                }
                MglruVersion::V6_12 => {
                    self.lru_gen_move(m, f, g, true);
                    self.lrugen_mut(m).protected[ty][tier - 1] += 1;
                }
            }
            self.lru_gen.stats.tier_protected += 1;
            if self.xp.is_some() {
                self.xp_sort_protected(f, sc, lazily_promoted, tier, tier_idx);
            }
            return true;
        }
        if v == MglruVersion::V6_12 && self.lru_gen.common_reactivation {
            return false;
        }
        let dirty = fo.test(flags::DIRTY);
        let writeback = fo.test(flags::WRITEBACK);
        if ty == FILE && dirty && v != MglruVersion::V6_1 {
            // 6.12 and 6.14 (1bc542c6a0d1 "mm/vmscan: wake up flushers
            // conditionally to avoid cgroup OOM", October 2024; read in
            // 6.12.107, and in 6.14 and 6.19 sort_folio()): `delta`, pages,
            // for the flusher wake-up of `try_to_shrink_lruvec()`. 6.1
            // counts nothing here.
            let delta = fo.nr_pages();
            sc.nr_file_taken += delta;
            if !writeback {
                sc.nr_unqueued_dirty += delta;
            }
        }
        if writeback || (ty == FILE && dirty) {
            let g = self.folio_inc_gen(m, f, true);
            self.lru_gen_move(m, f, g, false);
            if self.xp.is_some() {
                let why = if writeback {
                    "under writeback: PG_reclaim set, min_seq + 1"
                } else {
                    "dirty file folio: left to the flusher, PG_reclaim set, min_seq + 1"
                };
                self.xp_sort_folio(f, sc, why);
            }
            return true;
        }
        false
    }

    /// `mmsim explain`'s story of a folio `sort_folio` protected (out of
    /// line: only with `--explain`).
    #[cold]
    #[inline(never)]
    fn xp_sort_protected(
        &mut self,
        f: FolioId,
        sc: &ScanControl,
        lazily_promoted: bool,
        tier: usize,
        tier_idx: usize,
    ) {
        let why = if lazily_promoted {
            "lazily promoted: refs saturated with PG_workingset (6.14)".to_string()
        } else if tier > tier_idx {
            format!("protected by its tier {tier} > tier_idx {tier_idx} (PID controller)")
        } else {
            "protected: refs saturated (6.1.69+, fix underprotected page cache)".to_string()
        };
        self.xp_sort_folio(f, sc, &why);
    }

    /// `isolate_folio()`: takes folio `f` off its list for
    /// `shrink_folio_list`: clears PG_lru and PG_reclaim; without
    /// PG_referenced the refs bits are cleared (v6.1 and v6.12: also
    /// PG_workingset, and PG_referenced always, for the classic
    /// `folio_check_references()`).
    ///
    /// `lru_gen_del_folio(reclaiming)` inlined for the case `scan_folios`
    /// has: folio `f` is on, and its generation field names, generation
    /// `gen` of type `ty` (`sort_folio` moved it otherwise).
    #[inline(always)]
    fn isolate_folio(&mut self, v: MglruVersion, m: MemcgId, f: FolioId, gen: usize, ty: usize) {
        let nr = self.folios[f].nr_pages() as i64;
        let lg = &mut self.memcgs[m as usize].lruvec.lrugen;
        lg.lists[gen][ty].unlink(&mut self.folios, f);
        lg.nr_pages[gen][ty] -= nr;
        let fo = &mut self.folios[f];
        set_folio_gen(fo, None);
        fo.clear(flags::LRU);
        if !fo.test(flags::REFERENCED) {
            set_folio_refs(fo, 0);
            if v != MglruVersion::V6_14 {
                fo.clear(flags::WORKINGSET);
            }
        }
        fo.clear(flags::RECLAIM);
        if v != MglruVersion::V6_14 {
            fo.clear(flags::REFERENCED);
        }
    }

    /// `scan_folios()`: from the tail of type `ty`'s oldest generation,
    /// sorts or isolates folios into `self.scratch` until 64 are isolated
    /// or 4096 scanned. Counts PGSCAN_* (isolated) and PGREFILL (sorted).
    /// Returns the number scanned, or 0 if nothing could be isolated.
    pub(super) fn scan_folios(
        &mut self,
        m: MemcgId,
        ty: usize,
        tier_idx: usize,
        sc: &mut ScanControl,
    ) -> u64 {
        if self.lrugen(m).nr_gens(ty) == MIN_NR_GENS {
            return 0;
        }
        with_version!(self.lru_gen_version(), X => self.scan_folios_v::<X>(m, ty, tier_idx, sc))
    }

    /// [`Sim::scan_folios`] for version `X` ([`super::version`]): `sort_folio`
    /// and `isolate_folio` inlined with their version clauses resolved.
    #[inline(always)]
    fn scan_folios_v<X: Ver>(
        &mut self,
        m: MemcgId,
        ty: usize,
        tier_idx: usize,
        sc: &mut ScanControl,
    ) -> u64 {
        let v = X::V;
        let gen = lru_gen_from_seq(self.lrugen(m).min_seq[ty]);
        let (mut scanned, mut isolated, mut sorted) = (0u64, 0u64, 0u64);
        // The kernel's `isolated` counts pages (`delta = folio_nr_pages()`);
        // v6.12's and v6.14's `nr.file_taken` needs them, as
        // `nr_unqueued_dirty` is in pages.
        let mut isolated_pages = 0u64;
        let mut remaining = MAX_LRU_BATCH;
        let mut ahead = self.lrugen(m).lists[gen][ty].tail;
        for _ in 0..8 {
            ahead = self.folios.prefetch_and_step_towards_head(ahead);
        }
        loop {
            let f = self.lrugen(m).lists[gen][ty].tail;
            if f == NIL {
                break;
            }
            ahead = self.folios.prefetch_and_step_towards_head(ahead);
            scanned += 1;
            // Sorting moves no min_seq: `gen` stays the oldest generation.
            if self.sort_folio(v, m, f, gen, tier_idx, sc) {
                sorted += 1;
            } else {
                self.isolate_folio(v, m, f, gen, ty);
                self.scratch.push(f);
                isolated += 1;
                isolated_pages += self.folios[f].nr_pages();
            }
            remaining -= 1;
            if remaining == 0 || isolated >= MIN_LRU_BATCH {
                break;
            }
        }
        sc.charge_lru(scanned * self.cost.scan_ns);
        if sc.who != Reclaimer::Memcg {
            self.count_vm_events(PGREFILL, sorted);
        }
        self.count_memcg_events(m, PGREFILL, sorted);
        self.count_reclaim_events(m, sc.who, crate::stats::PGSCAN, isolated);
        if ty == FILE {
            if v != MglruVersion::V6_1 {
                // 6.12 and 6.14: `sc->nr.file_taken += isolated`, in pages
                // (dirty ones are counted by `shrink_folio_list()`, in pages
                // too). 6.1 has no such count.
                sc.nr_file_taken += isolated_pages;
            }
            self.count_vm_events(PGSCAN_FILE, isolated);
        } else {
            self.count_vm_events(PGSCAN_ANON, isolated);
        }
        if self.tp.is_some() {
            self.trace_scan_folios(sc, m, scanned, isolated, ty == FILE);
        }
        if isolated > 0 || remaining == 0 {
            scanned
        } else {
            0
        }
    }

    /// `isolate_folios()`: picks the type ([`Sim::get_type_to_scan`]) and
    /// scans it; if nothing was scanned, the other evictable type.
    pub(super) fn isolate_folios(
        &mut self,
        m: MemcgId,
        swappiness: u32,
        sc: &mut ScanControl,
    ) -> (usize, u64) {
        let (mut ty, mut tier) = match swappiness {
            0 => (FILE, None),
            SWAPPINESS_ANON_ONLY => (ANON, None),
            _ => self.get_type_to_scan(m, swappiness),
        };
        let attempts = if swappiness == 0 || swappiness == SWAPPINESS_ANON_ONLY {
            1
        } else {
            2
        };
        for _ in 0..attempts {
            let tier_idx = tier.unwrap_or_else(|| self.get_tier_idx(m, ty));
            let scanned = self.scan_folios(m, ty, tier_idx, sc);
            if scanned > 0 {
                return (ty, scanned);
            }
            ty = 1 - ty;
            tier = None;
        }
        (ty, 0)
    }

    /// `evict_folios()`: isolate a batch, drop empty oldest generations,
    /// reclaim the batch through `shrink_folio_list` (with the MGLRU
    /// reference rule; v6.14: clean, unmapped, inactive survivors are
    /// retried once, 359a5e1416ca of 6.2) and put survivors back — never
    /// into the oldest generation (v6.14: those whose insertion seq would be
    /// min_seq get PG_active; v6.1: every rejected folio not waiting for
    /// writeback, keeping its refs and PG_workingset, with PG_referenced
    /// restored when PG_workingset is set; with `mglru_retry_written_back`,
    /// 6.1.192's retry and putback instead, [`Sim::retry_written_back_v6_1`]).
    /// With `mglru_writeback_in_reclaim`, writes due by the reclaimer's
    /// clock complete before the isolation and after `shrink_folio_list`
    /// (with `mglru_writeback_plugged`, after it only those queued before
    /// it: the batch's own writes are in `lru_gen_shrink_lruvec()`'s block
    /// plug).
    /// Returns the number scanned (0 = no progress: the caller ages).
    pub(crate) fn evict_folios(
        &mut self,
        m: MemcgId,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> u64 {
        let v = self.lru_gen_version();
        if self.lru_gen.writeback_in_reclaim {
            // Writes that ended by now have rotated their folios to the
            // tail of the oldest generation before this batch is isolated.
            self.complete_writeback(sc.now());
        }
        self.scratch.clear();
        let (ty, mut scanned) = self.isolate_folios(m, swappiness, sc);
        self.lru_lock_reclaim(sc, m, scanned);
        scanned += self.try_to_inc_min_seq(m, swappiness) as u64;
        let lg = self.lrugen(m);
        if lg.evictable_min_seq(swappiness) + MIN_NR_GENS > lg.max_seq {
            scanned = 0;
        }
        if self.scratch.is_empty() {
            return scanned;
        }
        // v6.1 `evict_folios()`: `if (need_swapping && type == LRU_GEN_ANON)
        // *need_swapping = true;` once a batch was isolated (6.1.0 and
        // 6.1.192 alike; later versions dropped it).
        sc.mglru_need_swapping |= ty == ANON;
        let mut batch = std::mem::take(&mut self.scratch);
        let rules = self.rules();
        let marks = self.writeback_marks();
        let (mut reclaimed, stat) = self.shrink_folio_list(&mut batch, sc, rules);
        if v != MglruVersion::V6_1 {
            // 6.12 and 6.14: `sc->nr.unqueued_dirty += stat.nr_unqueued_dirty`.
            sc.nr_unqueued_dirty += stat.nr_unqueued_dirty;
        }
        if self.lru_gen.writeback_in_reclaim {
            // Writes that ended while the batch was isolated: PG_reclaim
            // cleared, no rotation (the folio was off the LRU). With the
            // plug, not the batch's own writes.
            if self.lru_gen.writeback_plugged {
                self.complete_writeback_before(sc.now(), marks);
            } else {
                self.complete_writeback(sc.now());
            }
        }
        // 6.12 has 6.1.192's retry and putback always.
        let stable = v == MglruVersion::V6_12
            || (v == MglruVersion::V6_1 && self.lru_gen.retry_written_back);
        if v == MglruVersion::V6_14 {
            reclaimed += self.retry_written_back(&mut batch, sc, rules);
        } else if stable {
            reclaimed += self.retry_written_back_v6_1(&mut batch, sc, rules);
        }
        if self.tp.is_some() {
            let dirty = stat.nr_unqueued_dirty;
            self.trace_shrink_inactive(sc, m, scanned, reclaimed, dirty, &batch, ty == FILE);
        }
        self.lru_lock_reclaim(sc, m, batch.len() as u64);
        for &f in &batch {
            let fo = &mut self.folios[f];
            match v {
                MglruVersion::V6_14 => {
                    if !fo.test(flags::ACTIVE) {
                        let fty = fo.is_file() as usize;
                        if self.lru_gen_folio_seq(m, f, false) == self.lrugen(m).min_seq[fty] {
                            let fo = &mut self.folios[f];
                            fo.set(flags::ACTIVE);
                            fo.clear(flags::REFERENCED);
                            set_folio_refs(fo, 0);
                        }
                    }
                }
                // Flags already set by `retry_written_back_v6_1`.
                MglruVersion::V6_1 | MglruVersion::V6_12 if stable => {}
                MglruVersion::V6_1 | MglruVersion::V6_12 => {
                    if fo.test(flags::WORKINGSET) {
                        fo.set(flags::REFERENCED);
                    }
                    let waiting =
                        fo.test(flags::RECLAIM) && fo.test(flags::DIRTY | flags::WRITEBACK);
                    if waiting {
                        fo.clear(flags::ACTIVE);
                    } else {
                        fo.set(flags::ACTIVE);
                    }
                }
            }
            self.lru_gen_add_folio(f, false);
        }
        batch.clear();
        self.scratch = batch;
        self.count_reclaim_events(m, sc.who, crate::stats::PGSTEAL, reclaimed);
        if ty == FILE {
            self.count_vm_events(PGSTEAL_FILE, reclaimed);
        } else {
            self.count_vm_events(PGSTEAL_ANON, reclaimed);
        }
        sc.nr_reclaimed += reclaimed;
        scanned
    }

    /// "Retry folios that may have missed folio_rotate_reclaimable()" (6.2+,
    /// 359a5e1416ca): the clean, unmapped, inactive survivors of a batch get
    /// one more `shrink_folio_list` pass, and go back into `batch` with the
    /// other survivors. Returns the pages it reclaimed.
    pub(super) fn retry_written_back(
        &mut self,
        batch: &mut Vec<FolioId>,
        sc: &mut ScanControl,
        rules: crate::sim::ClassicRules,
    ) -> u64 {
        let clean_unmapped = |s: &mut Sim, f: FolioId| {
            let fo = &s.folios[f];
            !fo.test(flags::ACTIVE | flags::DIRTY | flags::WRITEBACK)
                && fo.mapcount == 0
                && !fo.test(flags::UNEVICTABLE)
        };
        self.retry_selected(batch, sc, rules, clean_unmapped, true, |_, _| {})
    }

    /// v6.1's `evict_folios()` after `shrink_folio_list()` with "mm:
    /// multi-gen LRU: retry folios written back while isolated"
    /// (359a5e1416ca; `machine.policy.mglru_retry_written_back`, read in
    /// Debian's 6.1.192 mm/vmscan.c): each survivor of `batch` is
    /// [`Sim::putback_v6_1`]'s to sort; those to retry get one more
    /// `shrink_folio_list` pass (`skip_retry`: what survives it is
    /// rejected), and go back into `batch` with the others. Unlike 6.2+,
    /// the retried folios stay counted in `sc.nr_scanned`. Returns the pages
    /// the retry reclaimed.
    pub(super) fn retry_written_back_v6_1(
        &mut self,
        batch: &mut Vec<FolioId>,
        sc: &mut ScanControl,
        rules: crate::sim::ClassicRules,
    ) -> u64 {
        let sort = |s: &mut Sim, f: FolioId| s.putback_v6_1(f, false);
        let reject = |s: &mut Sim, f: FolioId| {
            s.putback_v6_1(f, true);
        };
        self.retry_selected(batch, sc, rules, sort, false, reject)
    }

    /// The retry both versions share: the folios of `batch` that `select`
    /// picks (in order; the others stay in order) get one more
    /// `shrink_folio_list` pass, then `after` each, and go back at the end of
    /// `batch`. With `uncount`, the retried folios are taken out of
    /// `sc.nr_scanned` first (6.2+). Returns the pages the retry reclaimed.
    fn retry_selected(
        &mut self,
        batch: &mut Vec<FolioId>,
        sc: &mut ScanControl,
        rules: crate::sim::ClassicRules,
        select: impl Fn(&mut Sim, FolioId) -> bool,
        uncount: bool,
        after: impl Fn(&mut Sim, FolioId),
    ) -> u64 {
        let mut retry = std::mem::take(&mut self.lru_gen.retry);
        retry.clear();
        let mut keep = 0;
        for i in 0..batch.len() {
            let f = batch[i];
            if select(self, f) {
                retry.push(f);
            } else {
                batch[keep] = f;
                keep += 1;
            }
        }
        batch.truncate(keep);
        let mut reclaimed = 0;
        if !retry.is_empty() {
            if uncount {
                sc.nr_scanned = sc.nr_scanned.saturating_sub(retry.len() as u64);
            }
            reclaimed = self.shrink_folio_list(&mut retry, sc, rules).0;
            for &f in &retry {
                after(self, f);
            }
            batch.extend_from_slice(&retry);
        }
        self.lru_gen.retry = retry;
        reclaimed
    }

    /// One survivor of v6.1's `evict_folios()` (6.1.192): an unevictable
    /// folio is left as it is; one waiting for its write (PG_reclaim, dirty
    /// or under writeback) gets PG_referenced back if it has PG_workingset;
    /// one rejected (`skip_retry`, active, referenced, mapped, dirty or
    /// under writeback) loses its refs, PG_referenced and PG_workingset and
    /// gets PG_active (`set_mask_bits(…, LRU_REFS_MASK | LRU_REFS_FLAGS,
    /// BIT(PG_active))`: never the oldest generation). True for the rest:
    /// clean and unmapped, whose write may have ended while it was
    /// isolated, to be retried.
    fn putback_v6_1(&mut self, f: FolioId, skip_retry: bool) -> bool {
        let fo = &mut self.folios[f];
        if fo.test(flags::UNEVICTABLE) {
            return false;
        }
        if fo.test(flags::RECLAIM) && fo.test(flags::DIRTY | flags::WRITEBACK) {
            if fo.test(flags::WORKINGSET) {
                fo.set(flags::REFERENCED);
            }
            return false;
        }
        if skip_retry
            || fo.test(flags::ACTIVE | flags::REFERENCED | flags::DIRTY | flags::WRITEBACK)
            || fo.mapcount > 0
        {
            set_folio_refs(fo, 0);
            fo.clear(flags::REFERENCED | flags::WORKINGSET);
            fo.set(flags::ACTIVE);
            return false;
        }
        true
    }

    /// `folio_rotate_reclaimable()` under MGLRU (writeback completion of a
    /// PG_reclaim folio): re-added at the tail of the oldest generation
    /// (`lru_move_tail` → `lru_gen_add_folio(reclaiming)`).
    pub(crate) fn lru_gen_rotate_reclaimable(&mut self, f: FolioId) {
        self.lru_gen_del_folio(f, false);
        self.folios[f].clear(flags::ACTIVE);
        self.lru_gen_add_folio(f, true);
        // In pages, as `lru_move_tail` counts (`folio_nr_pages()`).
        let nr = self.folios[f].nr_pages();
        self.count_vm_events(PGROTATED, nr);
    }
}
