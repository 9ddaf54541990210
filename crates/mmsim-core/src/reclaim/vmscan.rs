//! The classic reclaim algorithm (mm/vmscan.c): `scan_control`'s setup and
//! the entry points (`try_to_free_mem_cgroup_pages`, `do_try_to_free_pages`,
//! `shrink_node`'s pass with `prepare_scan_control` and
//! `shrink_node_memcgs`), `inactive_is_low`.
//!
//! Each function names the kernel function it models; the rules follow v6.x
//! (`cost`) or v4.9 (`scanned-rotated`) as selected by
//! [`crate::sim::ClassicRules`]. Integer arithmetic is kept exactly as the
//! kernel writes it (truncating divisions, `+ 1` guards), because floating
//! point changes the balance at small counts.
//!
//! The rest of mm/vmscan.c is split as the kernel file is laid out, one
//! submodule per part named after its main function: [`get_scan_count`]
//! (scan balance), [`shrink_lruvec`] (the LRU list walks,
//! `shrink_active_list` / `shrink_inactive_list`) and [`shrink_folio_list`]
//! (the per-folio reclaim decision, `pageout`, `__remove_mapping`), and
//! [`reclaim_throttle`] (cgroup v1 limit reclaim's wait after it wakes the
//! flusher, `policy.v1_reclaim_throttle`).

mod get_scan_count;
pub(crate) mod reclaim_throttle;
mod shrink_folio_list;
mod shrink_lruvec;

#[cfg(test)]
pub(crate) use get_scan_count::{cost_fractions, scanned_rotated_fractions};
pub(crate) use shrink_folio_list::FolioReferences;
#[cfg(test)]
pub(crate) use shrink_folio_list::ReclaimStat;

use crate::config::{CostVariant, SoftLimitReclaim};
use crate::mem::folio::LruList;
use crate::reclaim::{Reclaimer, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::sim::{ClassicRules, Policy, Sim};
use crate::stats::item::*;
use crate::tracepoint::TpEvent;

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
    /// memstall of the allocating task. `gfp` is the charge's mask.
    pub(crate) fn try_to_free_mem_cgroup_pages(
        &mut self,
        target: crate::memcg::MemcgId,
        nr: u64,
        gfp: crate::gfp::Gfp,
    ) -> u64 {
        let sc = self.memcg_reclaim_gfp(target, nr, gfp);
        self.direct_profile.add(&sc.prof);
        self.workload_stall(sc.elapsed(), true);
        sc.nr_reclaimed
    }

    /// The reclaim of `try_to_free_mem_cgroup_pages()` without charging
    /// its time to the workload (for knob writes, run by another task,
    /// with `GFP_KERNEL`).
    pub(crate) fn memcg_reclaim(&mut self, target: crate::memcg::MemcgId, nr: u64) -> ScanControl {
        self.memcg_reclaim_gfp(target, nr, crate::gfp::GFP_KERNEL)
    }

    /// [`Sim::memcg_reclaim`] for a charge with mask `gfp`: v6.12 traces
    /// `mm_vmscan_memcg_reclaim_begin(0, sc.gfp_mask)`, order 0 whatever
    /// the charge's size, with `sc.gfp_mask` =
    /// [`crate::gfp::memcg_reclaim_mask`]`(gfp)` (checked in mm/vmscan.c).
    fn memcg_reclaim_gfp(
        &mut self,
        target: crate::memcg::MemcgId,
        nr: u64,
        gfp: crate::gfp::Gfp,
    ) -> ScanControl {
        let mut sc = ScanControl::new(Reclaimer::Memcg, nr.max(SWAP_CLUSTER_MAX), self.clock)
            .on_cpus(self.smp.par);
        sc.target = target;
        sc.gfp_mask = crate::gfp::memcg_reclaim_mask(gfp);
        if self.tp.is_some() {
            let e = TpEvent::MemcgReclaimBegin {
                gfp_flags: sc.gfp_mask,
            };
            self.trace_vmscan(self.clock, Some(target), e);
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
