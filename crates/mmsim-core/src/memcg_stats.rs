//! The memory cgroup statistics that classic reclaim reads, and when they
//! are flushed (the rstat flushing of mm/memcontrol.c, v6.12).
//!
//! A memcg lruvec's `lruvec_page_state()` does not read the live per-CPU
//! counters: it reads `pn->lruvec_stats->state[]`, the hierarchical totals
//! as of the last rstat flush of that group. Reclaim's heuristics read it:
//!
//! * `prepare_scan_control()`: WORKINGSET_ACTIVATE_{ANON,FILE} against
//!   `target_lruvec->refaults[]` and `inactive_is_low()` for
//!   `may_deactivate`, NR_INACTIVE_FILE for `cache_trim_mode`;
//! * `snapshot_refaults()`: WORKINGSET_ACTIVATE_* at the end of a cycle;
//! * `inactive_is_low()` in `shrink_lruvec()` and kswapd's
//!   `age_active_anon()`;
//! * `lru_note_cost()`: the lruvec size that decays the costs;
//! * `workingset_test_recent()`: the eviction lruvec's list sizes, the
//!   "workingset size" a refault distance is compared with.
//!
//! Up to 6.11 reclaim flushed before reading (`mem_cgroup_flush_stats()`
//! in `shrink_node()`, in `prepare_scan_control()` from 6.8), and the flush
//! ran whenever more than `MEMCG_CHARGE_BATCH` × CPUs updates were pending,
//! so the values were current to within a batch: mmsim reads the live lists
//! ([`MemcgStatsFlush::Sync`], the default; bit-identical to before).
//!
//! That is exact inside `shrink_node()`, but not for what reclaim reads
//! before it: v1 soft-limit reclaim, which `shrink_zones()` and
//! `balance_pgdat()` call before `shrink_node()` (6.1's mm/vmscan.c), reads
//! `inactive_is_low()` in each of its `mem_cgroup_shrink_node()` calls on the
//! totals of the previous pass's flush. [`MemcgStatsFlush::Reclaim`] (opt-in)
//! models 6.1 as it is: reads see the last flush, `shrink_node()` flushes the
//! whole tree (`mem_cgroup_flush_stats()`, after the soft-limit pass),
//! `flush_memcg_stats_dwork()` every `FLUSH_TIME`, and the refault test
//! flushes when the last flush is over 2 × `FLUSH_TIME` old
//! (`mem_cgroup_flush_stats_delayed()`, which 6.1's `__mem_cgroup_flush_stats()`
//! times from any flush). Checked against Debian's 6.1.192 mm/memcontrol.c
//! and mm/vmscan.c.
//!
//! 6.12 ("memcg: use ratelimited stats flush in the reclaim", Shakeel Butt,
//! 2024) calls `mem_cgroup_flush_stats_ratelimited()` in
//! `prepare_scan_control()`, and `workingset_test_recent()` already did
//! (6.8). It flushes only if the periodic flusher is a full cycle late
//! (`jiffies_64 > flush_last_time + 2 * FLUSH_TIME`); the periodic flusher
//! `flush_memcg_stats_dwork()` flushes the whole tree every `FLUSH_TIME` =
//! 2 s (`__mem_cgroup_flush_stats(root_mem_cgroup, true)`, setting
//! `flush_last_time`). So every read above sees the tree as of the last
//! 2 s tick ([`MemcgStatsFlush::Ratelimited`]). Checked against the
//! kernel's mm/memcontrol.c (`mem_cgroup_flush_stats_ratelimited`,
//! `flush_memcg_stats_dwork`, `do_flush_stats` writing `flush_last_time`
//! only for the root) and mm/vmscan.c (`prepare_scan_control`) of 6.12+.
//!
//! Modelled: the periodic flush on the timer list (`TimerKind::MemcgStatsFlush`,
//! at k × 2 s of the simulated clock, `machine.policy.memcg_stats_flush_ms`; the groups are created at time 0,
//! so their flushed totals start at zero), the ratelimited flush of the
//! reclaim root's or eviction group's subtree when the periodic one is more
//! than 4 s old, and a flush copying each group's hierarchical totals
//! ([`crate::memcg::SubtreeLruvec`]). Not modelled: the flush threshold
//! of `mem_cgroup_flush_stats()` (a flush 4 s late always has pending
//! updates), and the node-level vmstat reads (`file_is_tiny` reads
//! `node_page_state`, exact per CPU batch: live here).

use serde::{Deserialize, Serialize};

use crate::memcg::{MemcgId, SubtreeLruvec};
use crate::sim::Sim;
use crate::timer::TimerKind;

/// When the memory cgroup statistics that the classic LRU's reclaim reads
/// (`lruvec_page_state()` of a memcg lruvec: list sizes and
/// WORKINGSET_ACTIVATE_*) are brought up to date (mm/memcontrol.c rstat
/// flushing; see `crate::memcg_stats`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MemcgStatsFlush {
    /// Up to 6.11: `shrink_node()` (6.1) or `prepare_scan_control()` (6.8)
    /// calls `mem_cgroup_flush_stats()`, which flushes once more than
    /// `MEMCG_CHARGE_BATCH` updates per CPU are pending: reclaim reads
    /// statistics current to within a batch, modelled as exact.
    #[default]
    Sync,
    /// 6.12+ ("memcg: use ratelimited stats flush in the reclaim"):
    /// `prepare_scan_control()` and `workingset_test_recent()` call
    /// `mem_cgroup_flush_stats_ratelimited()`, which flushes only when the
    /// periodic flusher (`flush_memcg_stats_dwork`, every `FLUSH_TIME` =
    /// 2 s) is a full cycle late: decisions use statistics up to 2 s old.
    Ratelimited,
    /// 5.15–6.11 exactly: reads see the last flush, which every
    /// `shrink_node()` takes; v1 soft-limit reclaim, run before it, reads the
    /// previous pass's (opt-in; see `crate::memcg_stats`).
    Reclaim,
}

crate::setting_names! { MemcgStatsFlush, "memcg_stats_flush",
    Sync => "sync",
    Ratelimited => "ratelimited",
    Reclaim => "reclaim",
}

/// The flushed memcg statistics (`memcg->vmstats`, `pn->lruvec_stats` as
/// rstat last left them) and when the tree was last flushed.
#[derive(Clone, Debug, Default)]
pub(crate) struct MemcgStats {
    /// Reads see the last flush: `machine.policy.memcg_stats_flush` is
    /// `ratelimited` or `reclaim`.
    pub ratelimited: bool,
    /// `memcg_stats_flush = "reclaim"` (5.15–6.11): `shrink_node()` flushes
    /// the whole tree, and the refault test's delayed flush is of the whole
    /// tree and sets `flush_next_time` as every flush does.
    pub on_reclaim: bool,
    /// Flushes by `shrink_node()` under `reclaim`.
    pub reclaim_flushes: u64,
    /// `FLUSH_TIME`, ns (`machine.policy.memcg_stats_flush_ms`; 2 s in the kernel).
    pub flush_time: u64,
    /// `flush_last_time`: the last flush of the whole tree, ns.
    pub flush_last_time: u64,
    /// Each group's hierarchical totals at its last flush, by [`MemcgId`]
    /// (groups never flushed read zeros, as a new group's counters).
    pub flushed: Vec<SubtreeLruvec>,
    /// Periodic flushes of the whole tree (`flush_memcg_stats_dwork`).
    pub periodic_flushes: u64,
    /// Flushes by reclaim because the periodic one was a cycle late.
    pub ratelimited_flushes: u64,
}

impl MemcgStats {
    /// The state for a machine whose option is `mode`, flushed every
    /// `flush_ms` ms.
    pub(crate) fn new(mode: MemcgStatsFlush, flush_ms: u64) -> Self {
        MemcgStats {
            ratelimited: mode != MemcgStatsFlush::Sync,
            on_reclaim: mode == MemcgStatsFlush::Reclaim,
            flush_time: flush_ms.saturating_mul(1_000_000),
            ..Default::default()
        }
    }
}

impl Sim {
    /// Arms the periodic flusher (`stats_flush_dwork` queued at boot) when
    /// statistics are ratelimited.
    pub(crate) fn arm_memcg_stats_flush(&mut self) {
        if self.memcg_stats.ratelimited {
            self.timers
                .add_timer(TimerKind::MemcgStatsFlush, self.memcg_stats.flush_time);
        }
    }

    /// `flush_memcg_stats_dwork()`: flushes the whole tree, records
    /// `flush_last_time` and requeues itself `FLUSH_TIME` later.
    pub(crate) fn flush_memcg_stats_dwork(&mut self, now: u64) {
        self.do_flush_stats(crate::memcg::ROOT);
        self.memcg_stats.flush_last_time = now;
        self.memcg_stats.periodic_flushes += 1;
        let period = self.memcg_stats.flush_time;
        let next = now - now % period + period;
        self.timers.mod_timer(TimerKind::MemcgStatsFlush, next);
    }

    /// `mem_cgroup_flush_stats_ratelimited()`: flushes `memcg`'s subtree
    /// only if the periodic flusher is one full cycle late
    /// (`now > flush_last_time + 2 * FLUSH_TIME`). A no-op under `sync`.
    pub(crate) fn mem_cgroup_flush_stats_ratelimited(&mut self, memcg: MemcgId, now: u64) {
        let s = &self.memcg_stats;
        if s.on_reclaim {
            // 6.1 `mem_cgroup_flush_stats_delayed()`: the whole tree, when
            // `flush_next_time` (2 × FLUSH_TIME after any flush) has passed.
            if now > s.flush_last_time + 2 * s.flush_time {
                self.mem_cgroup_flush_stats(now);
                self.memcg_stats.ratelimited_flushes += 1;
            }
            return;
        }
        if s.ratelimited && now > s.flush_last_time + 2 * s.flush_time {
            self.do_flush_stats(memcg);
            // `__mem_cgroup_flush_stats()` (v6.12) records the time of any
            // flush of the root, not only the periodic worker's.
            // A reclaimer's clock may run ahead of the periodic worker's;
            // `jiffies_64` never goes back.
            if memcg == crate::memcg::ROOT {
                let last = &mut self.memcg_stats.flush_last_time;
                *last = (*last).max(now);
            }
            self.memcg_stats.ratelimited_flushes += 1;
        }
    }

    /// 6.1 `mem_cgroup_flush_stats()` → `__mem_cgroup_flush_stats()` under
    /// `memcg_stats_flush = "reclaim"`: the whole tree, setting
    /// `flush_next_time` (here `flush_last_time`). Called by `shrink_node()`.
    pub(crate) fn mem_cgroup_flush_stats(&mut self, now: u64) {
        self.do_flush_stats(crate::memcg::ROOT);
        self.memcg_stats.flush_last_time = now;
        self.memcg_stats.reclaim_flushes += 1;
    }

    /// `do_flush_stats()` → `cgroup_rstat_flush()`: every group of
    /// `memcg`'s subtree gets its current hierarchical totals.
    fn do_flush_stats(&mut self, memcg: MemcgId) {
        let n = self.memcgs.len();
        self.memcg_stats.flushed.resize(n, SubtreeLruvec::default());
        let mut cur = Some(memcg);
        while let Some(m) = cur {
            self.memcg_stats.flushed[m as usize] = self.subtree_lruvec(m);
            self.kmem_flush_stats(m);
            cur = self.mem_cgroup_iter(memcg, m);
        }
    }

    /// `lruvec_page_state()` of group `m`'s lruvec, as reclaim reads it:
    /// the live hierarchical totals under `sync`, the last flushed ones
    /// under `ratelimited`. Inlined, with [`Sim::subtree_lruvec`]'s read of
    /// a group without children (one per refault).
    #[inline(always)]
    pub(crate) fn lruvec_page_state(&self, m: MemcgId) -> SubtreeLruvec {
        if self.memcg_stats.ratelimited {
            self.memcg_stats
                .flushed
                .get(m as usize)
                .copied()
                .unwrap_or_default()
        } else {
            self.subtree_lruvec(m)
        }
    }
}
