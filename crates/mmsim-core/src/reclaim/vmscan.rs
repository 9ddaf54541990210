//! The classic reclaim algorithm (mm/vmscan.c): entry points, `shrink_node`,
//! `get_scan_count`, `shrink_lruvec`, `shrink_active_list`,
//! `shrink_inactive_list`, `shrink_folio_list`.
//!
//! Each function names the kernel function it models; the rules follow v6.x
//! (`cost`) or v4.9 (`scanned-rotated`) as selected by
//! [`crate::sim::ClassicRules`]. Integer arithmetic is kept exactly as the
//! kernel writes it (truncating divisions, `+ 1` guards), because floating
//! point changes the balance at small counts.

use crate::config::{CostVariant, SoftLimitReclaim};
use crate::mem::filemap::SLOT_FOLIO;
use crate::mem::folio::{flags, FolioId, LruList};
use crate::reclaim::{Reclaimer, ScanBalance, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::sim::{Balance, ClassicRules, Policy, Sim};
use crate::stats::item::*;
use crate::tracepoint::TpEvent;

/// Outcome of `folio_check_references()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FolioReferences {
    /// PAGEREF_ACTIVATE
    Activate,
    /// PAGEREF_KEEP
    Keep,
    /// PAGEREF_RECLAIM
    Reclaim,
    /// PAGEREF_RECLAIM_CLEAN
    ReclaimClean,
}

/// Per-call statistics of `shrink_folio_list()` (`struct reclaim_stat`),
/// in base pages as v6.12's are.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ReclaimStat {
    pub(crate) nr_unqueued_dirty: u64,
    /// Pages `pageout()` returned PAGE_SUCCESS for (`+= nr_pages`).
    nr_pageout: u64,
}

impl Sim {
    pub(crate) fn rules(&self) -> ClassicRules {
        match self.policy {
            Policy::Classic(r) => r,
            // MGLRU reuses shrink_folio_list() with the current kernel's rules.
            Policy::Mglru(_) => ClassicRules::current(CostVariant::V6_2),
            Policy::Lru => unreachable!("classic reclaim under the lru policy"),
        }
    }

    /// `try_to_free_mem_cgroup_pages()`: reclaim from the subtree of group
    /// `target` at its `memory.max`, target max(nr, SWAP_CLUSTER_MAX); a
    /// memstall of the allocating task.
    pub(crate) fn try_to_free_mem_cgroup_pages(
        &mut self,
        target: crate::memcg::MemcgId,
        nr: u64,
    ) -> u64 {
        let sc = self.memcg_reclaim(target, nr);
        self.direct_profile.add(&sc.prof);
        self.workload_stall(sc.elapsed(), true);
        sc.nr_reclaimed
    }

    /// The reclaim of `try_to_free_mem_cgroup_pages()` without charging
    /// its time to the workload (for knob writes, run by another task).
    pub(crate) fn memcg_reclaim(&mut self, target: crate::memcg::MemcgId, nr: u64) -> ScanControl {
        let mut sc = ScanControl::new(Reclaimer::Memcg, nr.max(SWAP_CLUSTER_MAX), self.clock)
            .on_cpus(self.smp.par);
        sc.target = target;
        if self.tp.is_some() {
            self.trace_vmscan(self.clock, Some(target), TpEvent::MemcgReclaimBegin);
        }
        self.do_try_to_free_pages(&mut sc);
        if self.tp.is_some() {
            let e = TpEvent::MemcgReclaimEnd {
                nr_reclaimed: sc.nr_reclaimed,
            };
            self.trace_vmscan(sc.now(), Some(target), e);
        }
        sc
    }

    /// `do_try_to_free_pages()`: priority 12 → 0 until the target is met
    /// or a zone is `compaction_ready` (`crate::reclaim::direct`), then
    /// `snapshot_refaults()`. If nothing was reclaimed: one retry with
    /// `force_deactivate` if active lists were skipped, then one retry that
    /// reclaims below `memory.low` if a protected group was spared.
    pub(crate) fn do_try_to_free_pages(&mut self, sc: &mut ScanControl) {
        loop {
            loop {
                sc.nr_scanned = 0;
                self.shrink_zones(sc);
                let done = sc.nr_reclaimed >= sc.nr_to_reclaim || sc.compaction_ready;
                if done || sc.priority == 0 {
                    break;
                }
                sc.priority -= 1;
            }
            self.snapshot_refaults(sc.target);
            // Aborted to try compaction: no retry (the kernel returns 1).
            if sc.nr_reclaimed > 0 || sc.compaction_ready {
                return;
            }
            if sc.skipped_deactivate && !sc.force_deactivate {
                sc.priority = DEF_PRIORITY;
                sc.force_deactivate = true;
                sc.skipped_deactivate = false;
                continue;
            }
            // Untapped cgroup reserves? Don't OOM, retry below memory.low.
            if sc.memcg_low_skipped {
                sc.priority = DEF_PRIORITY;
                sc.force_deactivate = false;
                sc.memcg_low_reclaim = true;
                sc.memcg_low_skipped = false;
                continue;
            }
            return;
        }
    }

    /// `snapshot_refaults()`: remember the reclaim root's (hierarchical)
    /// WORKINGSET_ACTIVATE_* at the end of a reclaim cycle.
    pub(crate) fn snapshot_refaults(&mut self, target: crate::memcg::MemcgId) {
        let activate = self.lruvec_page_state(target).workingset_activate;
        self.memcgs[target as usize].lruvec.refaults = activate;
    }

    /// One pass of `shrink_node()` from its `again:` label, with
    /// `prepare_scan_control()` and `shrink_node_memcgs()`: at `sc.priority`
    /// over the lruvec of every group in the reclaim root's subtree, in
    /// `mem_cgroup_iter` pre-order; returns `should_continue_reclaim` (the
    /// loop and MGLRU's `lru_gen_shrink_node` are [`Sim::shrink_node`]).
    /// Every walk is a full one (direct reclaim's shared partial walk through
    /// a reclaim cookie is not modelled); no soft limits under MGLRU (v6.1,
    /// cgroup reclaim). Departure: under `soft_limit_reclaim = "seed-004"`
    /// one `should_continue_reclaim` loop wraps the soft-only walk and its
    /// all-groups fallback (3.12-rc1: one loop per `__shrink_zone` call).
    pub(crate) fn shrink_node_pass(&mut self, sc: &mut ScanControl) -> bool {
        let mglru = matches!(self.policy, Policy::Mglru(_));
        let rules = self.rules();
        let global = sc.who != Reclaimer::Memcg;
        let soft = if mglru {
            SoftLimitReclaim::Off
        } else {
            self.cfg.soft_limit_reclaim
        };
        let on_reclaim = self.memcg_stats.on_reclaim && !mglru;
        if on_reclaim && soft == SoftLimitReclaim::Tree && global && !sc.soft_done {
            // `memcg_stats_flush = "reclaim"`: in the kernel's order,
            // `shrink_zones()` / `balance_pgdat()` run soft-limit reclaim
            // before `shrink_node()`, so before the flush below: it reads
            // the statistics of the previous pass.
            let (reclaimed, scanned) = self.memcg1_soft_limit_reclaim(sc);
            sc.nr_reclaimed += reclaimed;
            if sc.who == Reclaimer::Direct {
                sc.nr_scanned += scanned;
            }
        }
        if on_reclaim {
            // 5.15–6.11 `prepare_scan_control()`: `mem_cgroup_flush_stats()`.
            self.mem_cgroup_flush_stats(sc.start + sc.elapsed());
        } else if !mglru {
            // 6.12+: `mem_cgroup_flush_stats_ratelimited(sc->target_mem_cgroup)`.
            self.mem_cgroup_flush_stats_ratelimited(sc.target, sc.start + sc.elapsed());
        }
        self.prepare_scan_control(sc, rules);
        let before = sc.nr_reclaimed;
        sc.nr_file_taken = 0;
        sc.nr_unqueued_dirty = 0;
        match soft {
            SoftLimitReclaim::Tree if global && !on_reclaim && !sc.soft_done => {
                let (reclaimed, scanned) = self.memcg1_soft_limit_reclaim(sc);
                sc.nr_reclaimed += reclaimed;
                if sc.who == Reclaimer::Direct {
                    sc.nr_scanned += scanned;
                }
                self.shrink_node_memcgs(sc, rules, false);
            }
            SoftLimitReclaim::Seed004 if global => {
                let scanned = sc.nr_scanned;
                self.shrink_node_memcgs(sc, rules, true);
                if sc.nr_scanned == scanned {
                    self.shrink_node_memcgs(sc, rules, false);
                }
            }
            _ => self.shrink_node_memcgs(sc, rules, false),
        }
        if sc.nr_reclaimed > before {
            self.kswapd.failures = 0;
        }
        // PGDAT_DIRTY ("Allow kswapd to start writing pages during reclaim"):
        // every isolated file folio was dirty and not queued
        // ([`Sim::kswapd_sets_pgdat_dirty`]).
        if sc.who == Reclaimer::Kswapd && self.kswapd_sets_pgdat_dirty(sc) {
            self.node.dirty = true;
        }
        self.should_continue_reclaim(sc.nr_reclaimed - before, sc)
    }

    /// `shrink_node_memcgs()`: the lruvec of every group of the reclaim
    /// root's subtree in `mem_cgroup_iter` pre-order, skipping groups below
    /// their effective `memory.min` and (until the retry pass) `memory.low`;
    /// with `soft_only`, also groups not eligible for seed-004 soft reclaim.
    fn shrink_node_memcgs(&mut self, sc: &mut ScanControl, rules: ClassicRules, soft_only: bool) {
        let mut memcg = Some(sc.target);
        while let Some(m) = memcg {
            memcg = self.mem_cgroup_iter(sc.target, m);
            if soft_only && !self.soft_reclaim_eligible(m) {
                continue;
            }
            self.memcg_calculate_protection(sc.target, m);
            if self.memcg_below_min(sc.target, m) {
                continue;
            }
            if self.memcg_below_low(sc.target, m) {
                if !sc.memcg_low_reclaim {
                    sc.memcg_low_skipped = true;
                    continue;
                }
                self.count_memcg_events(m, MEMCG_LOW, 1);
            }
            sc.memcg = m;
            self.shrink_lruvec(sc, rules);
            if self.kmem.is_some() {
                self.shrink_slab_shadow(m, sc.priority, sc.start + sc.elapsed());
            }
            if !self.thp.split_queues.is_empty() {
                self.shrink_slab_deferred_split(m, sc.priority);
            }
        }
    }

    /// `prepare_scan_control()` (5.5+): snapshot costs, decide `may_deactivate`,
    /// `cache_trim_mode` and `file_is_tiny` at the reclaim root. The first two
    /// read the root's `lruvec_page_state()`: under 6.12's ratelimited flush
    /// the statistics of the last 2 s flush (`crate::memcg_stats`);
    /// `file_is_tiny` reads the node's (live) counters.
    pub(crate) fn prepare_scan_control(&self, sc: &mut ScanControl, rules: ClassicRules) {
        let own = &self.memcgs[sc.target as usize].lruvec;
        sc.anon_cost = own.anon_cost;
        sc.file_cost = own.file_cost;
        let refaults = own.refaults;
        let lv = self.subtree_lruvec(sc.target);
        if !rules.deactivate_on_refaults {
            return;
        }
        let stat = if self.memcg_stats.ratelimited {
            self.lruvec_page_state(sc.target)
        } else {
            lv
        };
        if sc.force_deactivate {
            sc.may_deactivate = [true, true];
        } else {
            for file in [false, true] {
                let t = file as usize;
                let (inactive, active) = stat.type_sizes(file);
                sc.may_deactivate[t] =
                    stat.workingset_activate[t] != refaults[t] || inactive_is_low(inactive, active);
            }
        }
        sc.cache_trim_mode =
            (stat.size(LruList::InactiveFile) >> sc.priority) > 0 && !sc.may_deactivate[1];
        sc.file_is_tiny = false;
        if sc.who != Reclaimer::Memcg {
            let file = lv.size(LruList::ActiveFile) + lv.size(LruList::InactiveFile);
            sc.file_is_tiny = file + self.node.free <= self.node.wmark_high
                && !sc.may_deactivate[0]
                && (lv.size(LruList::InactiveAnon) >> sc.priority) > 0;
        }
    }

    /// `inactive_is_low()` of group `m`'s own lruvec: inactive ×
    /// int_sqrt(10 × GiB of the pair) < active.
    pub(crate) fn inactive_is_low(&self, m: crate::memcg::MemcgId, file: bool) -> bool {
        let (inactive, active) = if self.memcg_stats.ratelimited {
            self.lruvec_page_state(m).type_sizes(file)
        } else {
            self.memcgs[m as usize].lruvec.type_sizes(file)
        };
        inactive_is_low(inactive, active)
    }

    /// `can_reclaim_anon_pages()`: swap slots left for group `m`
    /// (`mem_cgroup_get_nr_swap_pages`).
    fn can_reclaim_anon(&self, m: crate::memcg::MemcgId) -> bool {
        self.mem_cgroup_get_nr_swap_pages(m) > 0
    }

    /// `can_age_anon_pages()`: a swap device exists.
    pub(crate) fn can_age_anon(&self) -> bool {
        self.swap.is_some()
    }

    /// `get_scan_count()`: how many pages to scan on each evictable list.
    // The decision cascades repeat SCAN_FILE on purpose: each branch is one of the kernel's.
    #[allow(clippy::if_same_then_else)]
    pub(crate) fn get_scan_count(&mut self, sc: &mut ScanControl, rules: ClassicRules) -> [u64; 4] {
        // memory.min/low: scan a protected group in proportion to its
        // unprotected share (apply_proportional_protection).
        let (emin, elow) = self.memcg_protection(sc.target, sc.memcg);
        let protection = if emin > 0 || elow > 0 {
            let p = if !sc.memcg_low_reclaim && elow > emin {
                sc.memcg_low_skipped = true;
                elow
            } else {
                emin
            };
            Some((p, self.memcgs[sc.memcg as usize].usage.max(p)))
        } else {
            None
        };
        // mem_cgroup_swappiness(): a v1 group's own, else vm.swappiness.
        let swappiness = sc.proactive_swappiness.unwrap_or(
            self.memcgs[sc.memcg as usize]
                .swappiness
                .unwrap_or(self.cfg.swappiness),
        ) as u64;
        let lv = &self.memcgs[sc.memcg as usize].lruvec;
        let cgroup = sc.who == Reclaimer::Memcg;
        let sizes = lv.evictable_sizes();
        let (balance, fraction, denominator) = match rules.balance {
            Balance::Cost(_) => {
                let b = if !sc.may_swap || !self.can_reclaim_anon(sc.memcg) {
                    ScanBalance::File
                } else if cgroup && swappiness == 0 {
                    ScanBalance::File
                } else if sc.priority == 0 && swappiness != 0 {
                    ScanBalance::Equal
                } else if sc.file_is_tiny {
                    ScanBalance::Anon
                } else if sc.cache_trim_mode {
                    ScanBalance::File
                } else {
                    ScanBalance::Fract
                };
                let (ap, fp) = cost_fractions(swappiness, sc.anon_cost, sc.file_cost);
                (b, [ap, fp], ap + fp)
            }
            Balance::ScannedRotated => {
                let file_pages = sizes[2] + sizes[3];
                let b = if !sc.may_swap || !self.can_reclaim_anon(sc.memcg) {
                    ScanBalance::File
                } else if cgroup && swappiness == 0 {
                    ScanBalance::File
                } else if sc.priority == 0 && swappiness != 0 {
                    ScanBalance::Equal
                } else if !cgroup && file_pages + self.node.free <= self.node.wmark_high {
                    ScanBalance::Anon
                } else if !self.inactive_is_low(sc.memcg, true) && (sizes[2] >> sc.priority) > 0 {
                    ScanBalance::File
                } else {
                    ScanBalance::Fract
                };
                let lv = &mut self.memcgs[sc.memcg as usize].lruvec;
                let (ap, fp) = scanned_rotated_fractions(
                    swappiness,
                    sizes,
                    &mut lv.recent_scanned,
                    &mut lv.recent_rotated,
                    b == ScanBalance::Fract,
                );
                (b, [ap, fp], ap + fp + 1)
            }
        };
        // v4.9 force_scan: memcg reclaim scans at least SWAP_CLUSTER_MAX when the shift rounds to 0.
        let force_scan = rules.balance == Balance::ScannedRotated && cgroup;
        let mut nr = [0u64; 4];
        for pass in 0..2 {
            let mut some = false;
            for (i, &size) in sizes.iter().enumerate() {
                let file = i >= 2;
                let mut scan = match protection {
                    Some((p, cgroup_size)) => {
                        let s =
                            size - (size as u128 * p as u128 / (cgroup_size as u128 + 1)) as u64;
                        s.max(SWAP_CLUSTER_MAX)
                    }
                    None => size,
                };
                scan >>= sc.priority;
                if scan == 0 && pass == 1 && force_scan {
                    scan = size.min(SWAP_CLUSTER_MAX);
                }
                scan = match balance {
                    ScanBalance::Equal => scan,
                    ScanBalance::Fract => scan * fraction[file as usize] / denominator.max(1),
                    ScanBalance::File if !file => 0,
                    ScanBalance::Anon if file => 0,
                    _ => scan,
                };
                some |= scan > 0;
                nr[i] = scan;
            }
            if some || !force_scan {
                break;
            }
        }
        if self.xp.is_some() {
            self.xp_scan_count(sc, balance, fraction, denominator, nr);
        }
        nr
    }

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
        let p = if fo.is_file() {
            self.files
                .get(fo.space as usize)
                .and_then(|file| file.slots.get(fo.index as usize))
        } else if fo.mapcount > 0 {
            self.vmas
                .get(fo.space as usize)
                .and_then(|v| v.ptes.get(fo.index as usize))
        } else {
            None
        };
        if let Some(p) = p {
            crate::sim::prefetch(p as *const u32 as *const u8);
        }
    }

    /// `move_folios_to_lru()`: puts folios back at the head of the list their
    /// flags select; active ones age the workingset clock (5.9+) or count as
    /// rotated (v4.9). Returns how many went to an active list.
    fn move_folios_to_lru(&mut self, folios: &[FolioId], rules: ClassicRules) -> u64 {
        let mut nr_active = 0;
        for &f in folios {
            let fo = &mut self.folios[f];
            fo.set(flags::LRU);
            let lru = LruList::of_flags(fo.flags);
            let m = fo.memcg;
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
        }
        reclaimed
    }

    /// `folio_check_references()` (v6.x, or v4.9 where young swap-backed folios activate at once).
    fn folio_check_references(
        &mut self,
        f: FolioId,
        sc: &mut ScanControl,
        rules: ClassicRules,
    ) -> FolioReferences {
        if let Policy::Mglru(_) = self.policy {
            return self.lru_gen_check_references(f, sc);
        }
        let referenced = self.folio_referenced(f, sc);
        let (refs, exec) = (referenced.vmas, referenced.exec);
        let fo = &mut self.folios[f];
        let file = fo.is_file();
        // v6.12: found in a VM_LOCKED VMA (PG_referenced was tested and
        // cleared first). The kernel mlocks it and it moves to the
        // unevictable list on putback; nothing is mlocked in a scenario yet.
        if referenced.locked {
            fo.clear(flags::REFERENCED);
            return FolioReferences::Activate;
        }
        if refs > 0 && rules.young_anon_activates && !file {
            return FolioReferences::Activate;
        }
        let was_ref = fo.test_and_clear(flags::REFERENCED);
        if refs > 0 {
            fo.set(flags::REFERENCED);
            if was_ref || refs > 1 {
                return FolioReferences::Activate;
            }
            if exec && (file || rules.young_anon_activates) {
                return FolioReferences::Activate;
            }
            return FolioReferences::Keep;
        }
        if was_ref && file {
            return FolioReferences::ReclaimClean;
        }
        FolioReferences::Reclaim
    }

    /// `shrink_folio_list()`: decides each isolated folio's fate (spec §3.11).
    /// Freed folios are removed from `batch`; survivors stay in it, with
    /// PG_active set on those to activate. Returns (reclaimed, stats).
    pub(crate) fn shrink_folio_list(
        &mut self,
        batch: &mut Vec<FolioId>,
        sc: &mut ScanControl,
        rules: ClassicRules,
    ) -> (u64, ReclaimStat) {
        let mut stat = ReclaimStat::default();
        let mut reclaimed = 0;
        let mut keep = 0;
        let mut i = 0;
        self.tlb_batch_from(sc.who == Reclaimer::Kswapd);
        // A split appends the tails to `batch`, which this loop reaches too.
        while i < batch.len() {
            let f = batch[i];
            i += 1;
            if let Some(&g) = batch.get(i + 3) {
                self.prefetch_reclaim(g);
            }
            // Account the number of base pages.
            let mut nr = self.folios[f].nr_pages();
            sc.nr_scanned += nr;
            let len = batch.len();
            let fate = self.reclaim_one(f, sc, rules, &mut stat, batch);
            if batch.len() > len {
                // Split: the tails are scanned on their own.
                sc.nr_scanned -= nr - 1;
                nr = 1;
            }
            match fate {
                Fate::Freed => reclaimed += nr,
                Fate::Activate => {
                    let fo = self.folios[f];
                    if fo.test(flags::SWAPCACHE) && self.mem_cgroup_swap_full(fo.memcg) {
                        self.folio_free_swap(f);
                    }
                    self.folios[f].set(flags::ACTIVE);
                    self.count_events(sc.memcg, PGACTIVATE, nr);
                    batch[keep] = f;
                    keep += 1;
                }
                Fate::Keep => {
                    batch[keep] = f;
                    keep += 1;
                }
                Fate::FreedAtPutback => {}
            }
        }
        batch.truncate(keep);
        self.try_to_unmap_flush(sc.who == Reclaimer::Kswapd);
        self.tlb_batch_from(false);
        (reclaimed, stat)
    }

    #[inline(always)]
    fn reclaim_one(
        &mut self,
        f: FolioId,
        sc: &mut ScanControl,
        rules: ClassicRules,
        stat: &mut ReclaimStat,
        list: &mut Vec<FolioId>,
    ) -> Fate {
        // A loop rather than a recursive retry, so that `inline(always)`
        // holds (LLVM does not inline a recursive function).
        let file = loop {
            let fo = self.folios[f];
            let file = fo.is_file();
            if file && fo.test(flags::DIRTY) && !fo.test(flags::WRITEBACK) {
                // In pages (`+= nr_pages`), as `nr_taken` is.
                stat.nr_unqueued_dirty += fo.nr_pages();
            }
            if !fo.test(flags::WRITEBACK) {
                break file;
            }
            // Case 3: cgroup v1 limit reclaim (writeback_throttling_sane() is
            // false) waits for a folio it already marked, then retries it.
            if sc.who == Reclaimer::Memcg
                && self.cfg.cgroup_version == crate::config::CgroupVersion::V1
                && fo.test(flags::RECLAIM)
            {
                if let Some(done) = self.writeback_done_time(f) {
                    let now = sc.now();
                    sc.io_wait_ns += done.saturating_sub(now);
                    self.complete_writeback(done.max(now));
                    if !self.folios[f].test(flags::WRITEBACK) {
                        continue;
                    }
                }
            }
            // Cases 1 and 2: mark it for rotation when its writeback ends.
            self.folios[f].set(flags::RECLAIM);
            if self.xp.is_some() {
                self.xp_kept(
                    f,
                    sc,
                    rules.dirty_activates,
                    "under writeback: PG_reclaim set, so folio_end_writeback rotates it to \
                     the inactive tail when the write completes",
                );
            }
            return if rules.dirty_activates {
                Fate::Activate
            } else {
                Fate::Keep
            };
        };
        let refs = if sc.ignore_references {
            FolioReferences::Reclaim
        } else {
            let before = self.folios[f].flags;
            let r = self.folio_check_references(f, sc, rules);
            if self.xp.is_some() {
                self.xp_check_references(f, sc, before, r);
            }
            r
        };
        match refs {
            FolioReferences::Activate => return Fate::Activate,
            FolioReferences::Keep => return Fate::Keep,
            _ => {}
        }
        // A large folio gets its slots whole or is split first (`crate::huge_memory`).
        if !file
            && !self.folios[f].test(flags::SWAPCACHE)
            && (self.folios[f].order == 0 || !self.add_to_swap_large(f, list))
        {
            // add_to_swap()
            let Some(slot) = self.folio_alloc_swap(f) else {
                if self.xp.is_some() {
                    self.xp_kept(
                        f,
                        sc,
                        true,
                        "add_to_swap found no swap slot (swap full, or the group's \
                         memory.swap.max reached)",
                    );
                }
                return Fate::Activate;
            };
            self.swap.as_mut().unwrap().slots[slot as usize] = SLOT_FOLIO | f;
            let fo = &mut self.folios[f];
            fo.swap = slot + 1;
            fo.set(flags::SWAPCACHE | flags::DIRTY);
            self.nr_swapcache_folios += 1;
        }
        // A mapped order-0 anonymous folio takes `try_to_unmap`'s own path
        // for it, inlined here (one per anonymous folio reclaimed).
        let fo = self.folios[f];
        // Nothing maps it (a split's zapped tail; a swap-cache folio zapped
        // whole): no swap PTE may hold its slots (`swap_writepage`, below).
        let unmapped_anon = !file && fo.mapcount == 0;
        let unmapped = if !file && fo.order == 0 && fo.mapcount > 0 {
            self.try_to_unmap_anon(f, sc)
        } else {
            self.try_to_unmap(f, sc)
        };
        // A large page-cache folio whose walk only split PMDs queued no
        // batched flush (each split flushed its PMD: `crate::filemap_pmd`).
        if fo.mapcount > 0 && unmapped && !(fo.is_file() && fo.order > 0 && !sc.unmapped_ptes) {
            self.tlb_batch_add(&fo);
        }
        if !unmapped {
            // Still mapped (a VM_LOCKED VMA): activate_locked.
            if self.xp.is_some() {
                self.xp_kept(f, sc, true, "try_to_unmap left it mapped (a VM_LOCKED VMA)");
            }
            return Fate::Activate;
        }
        let fo = self.folios[f];
        if fo.test(flags::DIRTY) {
            if file && !(sc.who == Reclaimer::Kswapd && fo.test(flags::RECLAIM) && self.node.dirty)
            {
                // The flusher writes it; rotate it out of the way meanwhile
                // (in pages: `node_stat_mod_folio(.., nr_pages)`, v6.12, v6.18).
                self.count_vm_events(NR_VMSCAN_IMMEDIATE, fo.nr_pages());
                self.folios[f].set(flags::RECLAIM);
                if self.xp.is_some() {
                    self.xp_kept(
                        f,
                        sc,
                        rules.dirty_activates,
                        if sc.who == Reclaimer::Kswapd {
                            "dirty file folio left to the flusher (kswapd writes one only if it \
                             already has PG_reclaim and the node is marked dirty): PG_reclaim \
                             set, nr_vmscan_immediate_reclaim counted"
                        } else {
                            "dirty file folio left to the flusher (only kswapd may write file \
                             folios): PG_reclaim set, nr_vmscan_immediate_reclaim counted"
                        },
                    );
                }
                return if rules.dirty_activates {
                    Fate::Activate
                } else {
                    Fate::Keep
                };
            }
            // One test for both reasons to keep a dirty folio unwritten
            // (FOLIOREF_RECLAIM_CLEAN, then `!sc->may_writepage`), their
            // explanations out of line.
            if refs == FolioReferences::ReclaimClean || !sc.may_writepage {
                if self.xp.is_some() {
                    self.xp_kept_unwritten(f, sc, refs);
                }
                return Fate::Keep;
            }
            // pageout(): PAGE_SUCCESS counts the folio's pages (`nr_pageout +=
            // nr_pages`, in pages since v5.8's "mm: vmscan: reclaim writepage
            // is IO cost" introduced it; 1 for a folio split above, as the
            // kernel's reset `nr_pages` is), the IO `lru_note_cost` charges.
            stat.nr_pageout += fo.nr_pages();
            if unmapped_anon && self.swap_writepage_free_swap(f, sc) {
                return Fate::FreedAtPutback;
            }
            if !self.pageout(f, sc) {
                if self.xp.is_some() {
                    self.xp_kept(
                        f,
                        sc,
                        false,
                        if self.folios[f].is_file() {
                            "dirty: pageout started its write; under writeback with PG_reclaim, \
                             rotated to the inactive tail when the write completes"
                        } else {
                            "dirty in the swap cache: pageout started its swap write; under \
                             writeback with PG_reclaim, rotated to the inactive tail when the \
                             write completes"
                        },
                    );
                }
                return Fate::Keep;
            }
        }
        if self.xp.is_some() {
            let (key, swap) = (self.xp_key_of(f), self.folios[f].swap);
            self.remove_mapping(f);
            let shadow = self.xp_slot_shadow(key, swap);
            self.xp_evicted(key, sc, shadow);
        } else {
            self.remove_mapping(f);
        }
        sc.charge_free(self.cost.free_ns);
        Fate::Freed
    }

    /// [`Sim::xp_kept`] of a dirty folio that reclaim keeps without
    /// writing it: referenced (FOLIOREF_RECLAIM_CLEAN) or in kswapd's
    /// boosted reclaim (`!sc->may_writepage`), tested in that order as
    /// v6.12 `shrink_folio_list` does.
    #[cold]
    #[inline(never)]
    fn xp_kept_unwritten(&mut self, f: FolioId, sc: &ScanControl, refs: FolioReferences) {
        let why = if refs == FolioReferences::ReclaimClean {
            "dirty, and PG_referenced (FOLIOREF_RECLAIM_CLEAN): reclaimed only if clean"
        } else {
            "dirty, and kswapd's boosted reclaim may not write (may_writepage)"
        };
        self.xp_kept(f, sc, false, why);
    }

    /// `pageout()`: starts writeback of a dirty folio to swap or the
    /// filesystem, sleeping first if the device's request queue is full.
    /// Returns true if the write completed synchronously (zram, whose
    /// compression is the reclaimer's own CPU time) or was not needed (a
    /// zero-filled anonymous folio under `machine.swap_zero_pages`:
    /// [`Sim::swap_writepage_zero`]), so the folio can be freed now; else it stays under writeback with PG_reclaim and is
    /// rotated to the inactive tail on completion.
    fn pageout(&mut self, f: FolioId, sc: &mut ScanControl) -> bool {
        sc.charge_pageout(self.cost.pageout_ns);
        let now = sc.now();
        if self.tp.is_some() {
            let e = TpEvent::WriteFolio {
                pfn: u64::from(self.folios.head_pfn(f)),
                file: self.folios[f].is_file(),
            };
            self.trace_vmscan(now, Some(sc.memcg), e);
        }
        // kswapd's clock runs ahead of the workload's: its write joins the
        // device's backlog at the workload's present (BlockDev::write_placed).
        let place = if sc.who == Reclaimer::Kswapd {
            now.min(self.clock)
        } else {
            now
        };
        if self.tracks_zero_pages() && !self.folios[f].is_file() {
            // swap_writepage(): a zero-filled folio needs no write.
            if let Some(freed) = self.swap_writepage_zero(f) {
                return freed;
            }
        }
        let fo = &mut self.folios[f];
        fo.clear(flags::DIRTY);
        let file = fo.is_file();
        let (order, nr, m) = (fo.order, fo.nr_pages(), fo.memcg);
        self.count_vm_events(NR_VMSCAN_WRITE, nr);
        self.count_vm_events(PGPGOUT, 4 * nr);
        let (io, sync, q) = if file {
            self.file_dirty_sub(m, nr);
            self.dirty_fifo_unqueue(f);
            (self.fs.write_placed(now, place, nr), false, 1)
        } else {
            self.count_vm_events(PSWPOUT, nr);
            if order > 0 {
                self.count_swpout_large(order);
            }
            (
                self.swap_dev(|d| d.write_placed(now, place, nr)),
                self.cfg.swap.device == crate::config::DeviceKind::Zram,
                0,
            )
        };
        if sync {
            sc.charge_compress(io.done - now);
            return true;
        }
        sc.io_wait_ns += io.wait;
        let done = io.done;
        let fo = &mut self.folios[f];
        fo.set(flags::WRITEBACK | flags::RECLAIM);
        self.writeback_add(m, nr);
        if file && self.cfg.policy.dirty_throttle {
            self.bdp_writeback_start(m, nr);
        }
        self.queue_writeback(q, done, f);
        false
    }

    /// When folio `f`'s writeback completes, if it is under writeback (a
    /// folio has at most one event: see [`Sim::queue_writeback`]). Cold:
    /// cgroup v1 limit reclaim alone waits for a write.
    #[cold]
    #[inline(never)]
    fn writeback_done_time(&self, f: FolioId) -> Option<u64> {
        self.writeback
            .iter()
            .flat_map(|q| q.iter())
            .find(|&&(_, g)| g == f)
            .map(|&(t, _)| t)
    }

    /// `__remove_mapping()` + free: leaves the shadow in the slot, uncharges, frees.
    /// Inlined into `shrink_folio_list`'s two calls: one per reclaimed folio.
    #[inline(always)]
    pub(crate) fn remove_mapping(&mut self, f: FolioId) {
        if self.tp.is_some() {
            self.trace_filemap_folio(f, false);
        }
        let shadow = self.workingset_eviction(f);
        let fo = self.folios[f];
        if fo.is_file() {
            // `page_cache_delete`: the shadow over the folio's whole range
            // (one multi-index entry in the kernel; here in each slot).
            let new = shadow.unwrap_or(0);
            if fo.order == 0 {
                if self.kmem.is_some() {
                    self.kmem_slot_changed(fo.space, fo.index, SLOT_FOLIO | f, new);
                }
                *self.files[fo.space as usize].slot_mut(fo.index) = new;
            } else {
                for index in fo.index..fo.index + fo.nr_pages() as u32 {
                    if self.kmem.is_some() {
                        self.kmem_slot_changed(fo.space, index, SLOT_FOLIO | f, new);
                    }
                    *self.files[fo.space as usize].slot_mut(index) = new;
                }
            }
        } else if fo.test(flags::SWAPCACHE) {
            // Each slot a swap PTE holds keeps the shadow; the others are freed.
            self.put_swap_folio(f, shadow);
        }
        self.free_folio_inline(f);
    }

    /// Returns a folio's page to the node and uncharges it (`mem_cgroup_uncharge`
    /// + `free_unref_folios`, as at the end of `shrink_folio_list`).
    ///
    /// The folio's slot is read once (flags, group, order, head PFN) and
    /// the order-0 frame goes straight to the per-CPU list.
    pub(crate) fn free_folio(&mut self, f: FolioId) {
        self.free_folio_inline(f);
    }

    /// [`Sim::free_folio`] inlined into reclaim's per-folio paths
    /// (`remove_mapping`, the `lru` policy's eviction), which free a folio
    /// for every one they reclaim.
    #[inline(always)]
    pub(crate) fn free_folio_inline(&mut self, f: FolioId) {
        let fo = self.folios[f];
        // Not under writeback (its completion event would outlive it), not a
        // dirty file folio (`pageout`, the `lru` policy write it first).
        debug_assert!(
            !(fo.test(flags::WRITEBACK) || (fo.test(flags::DIRTY) && fo.is_file())),
            "freeing folio {f} under writeback or dirty"
        );
        if fo.test(flags::DEFERRED_QUEUED) {
            self.deferred_split_unqueue(f);
        }
        // NR_SWAPCACHE: a folio freed from the swap cache leaves it.
        self.nr_swapcache_folios -= fo.test(flags::SWAPCACHE) as u64;
        let (m, order) = (fo.memcg, fo.order as usize);
        let nr = fo.nr_pages();
        if self.fork.is_some() {
            self.fork_forget_folio(f);
        }
        self.phys.free_frames(self.folios.head_pfn(f), order);
        self.folios.free(f);
        self.page_counter_uncharge(m, nr);
        self.memcg1_check_events(m, nr);
        self.node.free += nr;
        self.count_vm_events(PGFREE, nr);
    }
}

/// What `shrink_folio_list()` did with one folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Freed,
    Activate,
    Keep,
    /// Dirty again and put back, where its last reference went: freed by
    /// `move_folios_to_lru`, not counted as reclaimed ([`Sim::swap_writepage_free_swap`]).
    FreedAtPutback,
}

/// `inactive_is_low()` on raw sizes: the target inactive:active ratio is
/// int_sqrt(10 × size in GiB), 1 below 1 GiB.
pub(crate) fn inactive_is_low(inactive: u64, active: u64) -> bool {
    let gb = (inactive + active) >> (30 - 12);
    let ratio = if gb > 0 {
        crate::sim::int_sqrt(10 * gb)
    } else {
        1
    };
    inactive * ratio < active
}

/// SCAN_FRACT of v5.8+ `get_scan_count()`: (ap, fp) with the one-third floor
/// ("mm: vmscan: limit the range of LRU type balancing").
pub(crate) fn cost_fractions(swappiness: u64, anon_cost: u64, file_cost: u64) -> (u64, u64) {
    let total_cost = anon_cost + file_cost;
    let anon = total_cost + anon_cost;
    let file = total_cost + file_cost;
    let total = anon + file;
    let ap = swappiness * (total + 1) / (anon + 1);
    let fp = (200 - swappiness) * (total + 1) / (file + 1);
    (ap, fp)
}

/// SCAN_FRACT of v4.9 `get_scan_count()`: (ap, fp) from recent_scanned /
/// recent_rotated, halving each type's history when it exceeds a quarter
/// of that type's pages (only when SCAN_FRACT is reached, as in the kernel).
pub(crate) fn scanned_rotated_fractions(
    swappiness: u64,
    sizes: [u64; 4],
    scanned: &mut [u64; 2],
    rotated: &mut [u64; 2],
    fract: bool,
) -> (u64, u64) {
    if !fract {
        return (0, 0);
    }
    let anon = sizes[0] + sizes[1];
    let file = sizes[2] + sizes[3];
    if scanned[0] > anon / 4 {
        scanned[0] /= 2;
        rotated[0] /= 2;
    }
    if scanned[1] > file / 4 {
        scanned[1] /= 2;
        rotated[1] /= 2;
    }
    let ap = swappiness * (scanned[0] + 1) / (rotated[0] + 1);
    let fp = (200 - swappiness) * (scanned[1] + 1) / (rotated[1] + 1);
    (ap, fp)
}
