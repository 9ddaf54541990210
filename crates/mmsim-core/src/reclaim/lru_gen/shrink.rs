//! The driving loops of MGLRU reclaim (mm/vmscan.c, v6.1 and v6.14; v6.12
//! drives reclaim as v6.14 and tests for aging as v6.1).
//!
//! Models `get_swappiness` (`lru_gen_swappiness`), `should_run_aging`,
//! `get_nr_to_scan`, `should_abort_scan` (v6.1's and v6.12's),
//! `try_to_shrink_lruvec`,
//! `lru_gen_shrink_lruvec`, `set_initial_priority` and
//! `lru_gen_shrink_node`.

use super::*;

impl Sim {
    /// `get_swappiness()`: 0 when anon cannot be swapped (no `may_swap`, or
    /// fewer than 64 swap slots the group may use, `memory.swap.max`
    /// included: `mem_cgroup_get_nr_swap_pages`), else the group's or the
    /// system's. v6.1's `get_swappiness()` does not test `may_swap`: its
    /// `lru_gen_shrink_lruvec()` does ([`Sim::lru_gen_shrink_swappiness`]).
    pub(super) fn lru_gen_swappiness(&self, m: MemcgId, sc: &ScanControl) -> u32 {
        let v6_1 = self.lru_gen_version() == MglruVersion::V6_1;
        if (!sc.may_swap && !v6_1) || self.mem_cgroup_get_nr_swap_pages(m) < MIN_LRU_BATCH {
            return 0;
        }
        sc.proactive_swappiness.unwrap_or(
            self.memcgs[m as usize]
                .swappiness
                .unwrap_or(self.cfg.swappiness),
        )
    }

    /// The swappiness reclaim's eviction loop runs with: v6.1
    /// `lru_gen_shrink_lruvec()` without `may_swap` (kswapd's boosted
    /// reclaim) uses 1 (file first, anon only when no file is left in the
    /// oldest generation) for global reclaim if `get_swappiness()` is not 0,
    /// and 0 for cgroup reclaim; later versions fold `may_swap` into
    /// `get_swappiness()` (0).
    pub(crate) fn lru_gen_shrink_swappiness(&self, m: MemcgId, sc: &ScanControl) -> u32 {
        let sw = self.lru_gen_swappiness(m, sc);
        if sc.may_swap || self.lru_gen_version() != MglruVersion::V6_1 {
            return sw;
        }
        u32::from(sc.who != Reclaimer::Memcg && sw > 0)
    }

    /// `should_run_aging()`: (must/should age, pages evictable).
    /// v6.14: age when only MIN_NR_GENS + 1 generations remain (must, and
    /// nothing to scan, with MIN_NR_GENS). v6.1 and v6.12: must age with 2; with 3,
    /// age if the youngest holds over half the pages or max_seq − 2 under a
    /// quarter; never with 4.
    pub(crate) fn should_run_aging(&self, m: MemcgId, swappiness: u32) -> (bool, u64) {
        let lg = self.lrugen(m);
        let min = lg.evictable_min_seq(swappiness);
        if min + MIN_NR_GENS > lg.max_seq {
            return (true, 0);
        }
        let total = lg.evictable_pages(swappiness);
        match self.lru_gen_version() {
            MglruVersion::V6_14 => (min + MIN_NR_GENS == lg.max_seq, total),
            MglruVersion::V6_1 | MglruVersion::V6_12 => {
                if min + MIN_NR_GENS < lg.max_seq {
                    return (false, total);
                }
                let types: &[usize] = if swappiness == 0 {
                    &[FILE]
                } else {
                    &[ANON, FILE]
                };
                let (mut young, mut old) = (0, 0);
                for &ty in types {
                    young += lg.pages(lru_gen_from_seq(lg.max_seq), ty);
                    old += lg.pages(lru_gen_from_seq(lg.max_seq - MIN_NR_GENS), ty);
                }
                (
                    young * MIN_NR_GENS > total || old * (MIN_NR_GENS + 2) < total,
                    total,
                )
            }
        }
    }

    /// `get_nr_to_scan()`: how much to scan in group `m`; −1 after aging
    /// (v6.14: stop and rotate the group), 0 to stop.
    /// v6.14 and v6.12: no aging needed or DEF_PRIORITY → total >> priority; else age.
    /// v6.1: [`Sim::get_nr_to_scan_v6_1`].
    pub(crate) fn get_nr_to_scan(
        &mut self,
        m: MemcgId,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> i64 {
        match self.lru_gen_version() {
            MglruVersion::V6_14 | MglruVersion::V6_12 => {
                if self.memcg_below_min(sc.target, m) {
                    return -1;
                }
                let (age, n) = self.should_run_aging(m, swappiness);
                if !age || sc.priority == DEF_PRIORITY {
                    return (n >> sc.priority) as i64;
                }
                let max_seq = self.lrugen(m).max_seq;
                if self.try_to_inc_max_seq(m, max_seq, swappiness, false, sc) {
                    -1
                } else {
                    0
                }
            }
            MglruVersion::V6_1 => self.get_nr_to_scan_v6_1(m, sc, swappiness).0,
        }
    }

    /// v6.1 `get_nr_to_scan(lruvec, sc, can_swap, &need_aging)` (6.1.192
    /// mm/vmscan.c): (pages to scan, `need_aging` — what
    /// `should_run_aging` said before any aging here). At DEF_PRIORITY skip
    /// aging; kswapd leaves aging to `lru_gen_age_node`; others age and
    /// then scan. (Its `mem_cgroup_below_min`/`below_low` return is
    /// `shrink_node_memcgs`' skip here, before the lruvec is shrunk.)
    pub(crate) fn get_nr_to_scan_v6_1(
        &mut self,
        m: MemcgId,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> (i64, bool) {
        let (age, n) = self.should_run_aging(m, swappiness);
        let max_seq = self.lrugen(m).max_seq;
        let nr = (n >> sc.priority) as i64;
        if !age {
            return (nr, age);
        }
        if sc.priority != DEF_PRIORITY {
            if sc.who == Reclaimer::Kswapd {
                return (0, age);
            }
            if self.try_to_inc_max_seq(m, max_seq, swappiness, false, sc) {
                return (nr, age);
            }
        }
        let lg = self.lrugen(m);
        if lg.evictable_min_seq(swappiness) + MIN_NR_GENS <= lg.max_seq {
            (nr, age)
        } else {
            (0, age)
        }
    }

    /// `should_abort_scan()` (v6.12, v6.14): root reclaim stops once the
    /// goal is met, `max(sc->nr_to_reclaim, compact_gap(sc->order))`
    /// ([`ScanControl::order`]: 1,024 pages for a 2 MiB THP's direct
    /// reclaim, 32 for an order-4 mTHP's, 2 at order 0), kswapd at order 0
    /// (`if (!current_is_kswapd() || sc->order) return false`: not while
    /// `kswapd_shrink_node` reclaims for a higher order) also once free
    /// pages clear the high watermark +
    /// `MIN_LRU_BATCH` (64), strictly (`__zone_watermark_ok`: `free <= mark`
    /// fails): with one zone the node's; on the two-zone node every zone's
    /// (`zone_watermark_ok(zone, 0, high + MIN_LRU_BATCH, reclaim_idx, 0)`
    /// with DMA's `lowmem_reserve`, `Sim::zones_watermark_ok_order0`).
    /// Checked against v6.12 mm/vmscan.c (the goal is in
    /// `should_abort_scan`; `set_initial_priority` reads no order).
    /// v6.1's is [`Sim::should_abort_scan_v6_1`].
    pub(crate) fn should_abort_scan(&self, sc: &ScanControl) -> bool {
        if sc.who == Reclaimer::Memcg {
            return false;
        }
        let compact_gap = 2u64 << sc.order;
        if sc.nr_reclaimed >= sc.nr_to_reclaim.max(compact_gap) {
            return true;
        }
        if sc.who != Reclaimer::Kswapd || sc.order != 0 {
            return false;
        }
        if self.phys.dma.is_some() {
            return self.zones_watermark_ok_order0(MIN_LRU_BATCH);
        }
        self.node.free > self.node.wmark_high + MIN_LRU_BATCH
    }

    /// v6.1 `should_abort_scan(lruvec, seq, sc, need_swapping)` (read in
    /// Debian's 6.1.192 mm/vmscan.c; the same function as v6.1.0's, from
    /// "mm: multi-gen LRU: optimize multiple memcgs", MGLRU v15 09/14;
    /// v6.3 replaced it with `get_nr_to_reclaim`), asked after each batch
    /// of [`Sim::try_to_shrink_lruvec`] with `seq` = the group's `max_seq`
    /// when its shrink began. It reads no `sc->order`.
    ///
    /// * Not kswapd (direct and cgroup reclaim): stop once this shrink aged
    ///   the group twice (`max_seq - seq > 1`), or once the whole reclaim's
    ///   `nr_reclaimed` reached `nr_to_reclaim` after a batch of anonymous
    ///   folios (`need_swapping`, [`ScanControl::mglru_need_swapping`]);
    ///   cgroup reclaim never stops otherwise.
    /// * kswapd: go on while this `balance_pgdat` iteration has reclaimed
    ///   less than `nr_to_reclaim` (`nr_reclaimed - last_reclaimed`;
    ///   `lru_gen_age_node` sets `last_reclaimed` at each iteration's start,
    ///   and kswapd's scan control here starts each iteration at 0).
    /// * Then, only at priority `DEF_PRIORITY - 2` (10) or below: stop once
    ///   every zone up to `reclaim_idx` has free pages at or above its low
    ///   (kswapd: high) watermark, adding `MIN_LRU_BATCH` (64) to
    ///   `sc.nr_reclaimed` ("a minimum amount of work was done").
    ///
    /// Departures: `fatal_signal_pending` (a reclaimer being killed) never
    /// holds here (no task is signalled inside a reclaim); the zones' free
    /// pages count the per-CPU lists (`Node::free`, mmsim's convention for
    /// the zone checks; the kernel's `NR_FREE_PAGES` does not); the kernel
    /// loops over zones `0..=sc->reclaim_idx`, skipping zones with no
    /// managed pages, while mmsim checks every zone of the node (its scan
    /// control has no `reclaim_idx`). They agree as long as no allocation
    /// is restricted to ZONE_DMA (none is modelled: every reclaim's
    /// `reclaim_idx` is the upper zone) and every zone has managed pages
    /// (mmsim's zones always do).
    pub(crate) fn should_abort_scan_v6_1(
        &self,
        m: MemcgId,
        seq: u64,
        sc: &mut ScanControl,
    ) -> bool {
        let kswapd = sc.who == Reclaimer::Kswapd;
        if !kswapd {
            if self.lrugen(m).max_seq - seq > 1 {
                return true;
            }
            if sc.nr_reclaimed >= sc.nr_to_reclaim && sc.mglru_need_swapping {
                return true;
            }
            if sc.who == Reclaimer::Memcg {
                return false;
            }
        } else if sc.nr_reclaimed < sc.nr_to_reclaim {
            return false;
        }
        if sc.priority > DEF_PRIORITY - 2 {
            return false;
        }
        let ok = match self.phys.dma.as_ref() {
            None => {
                let mark = if kswapd {
                    self.node.wmark_high
                } else {
                    self.node.wmark_low
                };
                self.node.free >= mark
            }
            Some(d) => {
                let (wd, wu) = if kswapd {
                    (d.wmark.high, d.upper_wmark.high)
                } else {
                    (d.wmark.low, d.upper_wmark.low)
                };
                d.zone.free_pages() >= wd && self.upper_free() >= wu
            }
        };
        if !ok {
            return false;
        }
        sc.nr_reclaimed += MIN_LRU_BATCH;
        true
    }

    /// `try_to_shrink_lruvec()` (v6.14) / v6.1 `lru_gen_shrink_lruvec()`'s
    /// loop: evict until the scan target is met, aging when needed.
    /// Returns true if the group aged (v6.14: rotate it in the memcg LRU).
    ///
    /// v6.1 (6.1.192 `lru_gen_shrink_lruvec`): the swappiness is worked out
    /// again before each batch; the loop stops at
    /// [`Sim::should_abort_scan_v6_1`]; after a loop that ended by
    /// `break` (not by nothing to scan or nothing evicted, its `goto
    /// done`) with `MIN_LRU_BATCH` or more reclaimed in it (the abort's 64
    /// included) and no aging needed at the last `get_nr_to_scan`, kswapd's
    /// `memcgs_need_aging` is cleared (a direct or cgroup reclaimer clears
    /// its own scan control's flag, which nothing reads).
    pub(super) fn try_to_shrink_lruvec(&mut self, m: MemcgId, sc: &mut ScanControl) -> bool {
        let v = self.lru_gen_version();
        if v == MglruVersion::V6_1 {
            self.lru_gen_shrink_lruvec_v6_1(m, sc);
            return false;
        }
        let swappiness = self.lru_gen_shrink_swappiness(m, sc);
        let mut scanned = 0u64;
        let mut n;
        loop {
            n = self.get_nr_to_scan(m, sc, swappiness);
            if n <= 0 {
                break;
            }
            let d = self.evict_folios(m, sc, swappiness);
            if d == 0 {
                break;
            }
            scanned += d;
            if scanned >= n as u64 {
                break;
            }
            if self.should_abort_scan(sc) {
                break;
            }
        }
        // 6.12 and 6.14 (1bc542c6a0d1, read in 6.12.107): "if too many
        // file cache in the coldest generation can't be evicted due to being
        // dirty, wake up the flusher" — every file page this `shrink_node`
        // pass took (sorted dirty and isolated, in pages) was dirty and not
        // queued. 6.1's MGLRU never wakes it from reclaim (6.1.176).
        if sc.nr_file_taken > 0 && sc.nr_unqueued_dirty == sc.nr_file_taken {
            self.wakeup_flusher(sc.now());
        }
        n < 0
    }

    /// v6.1 `lru_gen_shrink_lruvec()`'s loop (6.1.192 mm/vmscan.c; the
    /// overview of [`Sim::try_to_shrink_lruvec`]).
    fn lru_gen_shrink_lruvec_v6_1(&mut self, m: MemcgId, sc: &mut ScanControl) {
        let start = sc.nr_reclaimed;
        let seq = self.lrugen(m).max_seq;
        sc.mglru_need_swapping = false;
        let mut scanned = 0u64;
        let need_aging = loop {
            let swappiness = self.lru_gen_shrink_swappiness(m, sc);
            let (n, need_aging) = self.get_nr_to_scan_v6_1(m, sc, swappiness);
            if n <= 0 {
                return;
            }
            let d = self.evict_folios(m, sc, swappiness);
            if d == 0 {
                return;
            }
            scanned += d;
            if scanned >= n as u64 || self.should_abort_scan_v6_1(m, seq, sc) {
                break need_aging;
            }
        };
        if sc.who == Reclaimer::Kswapd && sc.nr_reclaimed - start >= MIN_LRU_BATCH && !need_aging {
            self.lru_gen.memcgs_need_aging = false;
        }
    }

    /// `lru_gen_shrink_lruvec()`: reclaim from one group's lruvec (cgroup
    /// reclaim in v6.14; every reclaim in v6.1, called from the classic
    /// `shrink_node_memcgs`). A reclaimer other than kswapd starts without
    /// a page-table walker (v6.1 `set_mm_walk(pgdat)`; v6.12 and v6.14
    /// `set_mm_walk(NULL, sc->proactive)`: proactive reclaim's is not
    /// modelled) and drops the one its aging allocated at the end
    /// (`clear_mm_walk()`): [`ScanControl::mm_walk`].
    pub(crate) fn lru_gen_shrink_lruvec(&mut self, sc: &mut ScanControl) {
        let m = sc.memcg;
        sc.mm_walk = None;
        self.try_to_shrink_lruvec(m, sc);
        sc.mm_walk = None;
    }

    /// `set_initial_priority()` (v6.14): for a large goal, start at the
    /// priority where (reclaimable >> priority) ≈ nr_to_reclaim, in [6, 12].
    pub(super) fn set_initial_priority(&self, sc: &mut ScanControl) {
        if sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
            return;
        }
        let lv = self.subtree_lruvec(crate::memcg::ROOT);
        let mut reclaimable = lv.size(LruList::InactiveFile);
        if self.swap.as_ref().is_some_and(|s| s.nr_free() > 0) {
            reclaimable += lv.size(LruList::InactiveAnon);
        }
        let fls = |x: u64| (64 - x.leading_zeros()) as i64;
        let p = fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1);
        sc.priority = p.clamp(DEF_PRIORITY as i64 / 2, DEF_PRIORITY as i64) as u32;
    }

    /// Whether `shrink_node()` hands reclaim `sc` to
    /// [`Sim::lru_gen_shrink_node`]: `lru_gen_enabled() && root_reclaim(sc)`
    /// (global reclaim, not a memcg limit's) in the v6.12 and v6.14 models;
    /// v6.1 reclaims every lruvec through `shrink_lruvec()`.
    pub(crate) fn lru_gen_root_reclaim(&self, sc: &ScanControl) -> bool {
        matches!(
            self.policy,
            crate::sim::Policy::Mglru(MglruVersion::V6_14 | MglruVersion::V6_12)
        ) && sc.who != Reclaimer::Memcg
    }

    /// `lru_gen_shrink_node()` (v6.12 and v6.14 root reclaim: kswapd and
    /// direct): `set_initial_priority`, then `shrink_many` over the memcg LRU.
    pub(crate) fn lru_gen_shrink_node(&mut self, sc: &mut ScanControl) {
        // `shrink_node()` clears `sc->nr` before calling it (6.12:
        // `memset(&sc->nr, 0, sizeof(sc->nr))`), so one pass's clean file
        // folios do not hide the next pass's dirty ones from the flusher
        // wake-up of `try_to_shrink_lruvec()`.
        sc.nr_file_taken = 0;
        sc.nr_unqueued_dirty = 0;
        // v6.12 and v6.14 `lru_gen_shrink_node()` returns at once when
        // reclaim may not write or unmap (clean unmapped folios are taken
        // first anyway): kswapd's boosted reclaim (`may_writepage` off at
        // DEF_PRIORITY - 2 and above) reclaims nothing here. mmsim's
        // reclaim always unmaps, so only `may_writepage` can be off.
        if !sc.may_writepage {
            return;
        }
        self.set_initial_priority(sc);
        let before = sc.nr_reclaimed;
        // `set_mm_walk(pgdat, sc->proactive)` … `clear_mm_walk()`: a direct
        // reclaimer's walker, once its aging allocated it, serves every
        // group `shrink_many` visits after.
        sc.mm_walk = None;
        self.shrink_many(sc);
        sc.mm_walk = None;
        if sc.nr_reclaimed > before {
            self.kswapd.failures = 0;
        }
    }
}
