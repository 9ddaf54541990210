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
//! ([`crate::memcg::SubtreeLruvec`]). Not modelled: the node-level vmstat
//! reads (`file_is_tiny` reads `node_page_state`, exact per CPU batch: live
//! here).
//!
//! **The update threshold** (v6.12 and v6.18 mm/memcontrol.c, per memcg
//! since 6.8's "make stats flushing threshold per-memcg"):
//! `mem_cgroup_flush_stats(memcg)` — called by `mem_cgroup_flush_stats_ratelimited()`
//! and by a read of `memory.stat` (`memory_stat_format()`, v1's
//! `memcg1_stat_format()`) — goes through `__mem_cgroup_flush_stats(memcg,
//! false)`, which flushes only when `memcg_vmstats_needs_flush()`: more than
//! `MEMCG_CHARGE_BATCH` (64) × `num_online_cpus()` updates pending in
//! `memcg->vmstats->stats_updates`. `flush_memcg_stats_dwork()` passes
//! `force = true` and ignores it. `memcg_rstat_updated()` adds `abs(val)` of
//! every statistics update (a list's page count, an event's count) to a
//! per-CPU counter of the group and of each ancestor, moving it to the
//! group's atomic count once it reaches `MEMCG_CHARGE_BATCH`; a flush
//! zeroes the counts of the groups it flushes (`mem_cgroup_css_rstat_flush`),
//! not their ancestors'. (6.12 counts every ancestor; 6.18 stops at the first
//! one already over the threshold, whose ancestors are over it too: the same
//! decisions for the flushes modelled here.) mmsim counts a group's pending
//! updates as a lower bound, from the subtree's totals at its last flush:
//! the change of each list size and of WORKINGSET_ACTIVATE_*, plus the
//! `memory.stat` events counted since ([`Sim::memcg_rstat_pending`]); the
//! kernel also counts NR_FILE_PAGES, mapped, dirty, writeback and slab
//! updates, and both halves of a list move. The updates are counted on one
//! CPU, whose batches of 64 reach the atomic count; the threshold's
//! `num_online_cpus()` is `machine.policy.memcg_stats_cpus`, or `machine.cpus`
//! when that is 0 (the default). The knob is the threshold's alone: a replay of
//! a kernel run captured on a 2-CPU host (`mmsim validate`) keeps the
//! scenario's `cpus` for the clock and lock contention and the host's CPUs here.
//!
//! **A reader of `memory.stat`** (`machine.policy.memcg_stats_read_ms`,
//! opt-in; capture-app reads its group's every 200 ms): every that many ms
//! each group under the root is flushed if past the threshold
//! (`TimerKind::MemcgStatsRead`). A group's flush does not set
//! `flush_last_time` (only the root's does). A reader slower than the
//! periodic flusher still adds flushes: a read between two periodic flushes
//! finds the updates since the last one and flushes its group past the
//! threshold (rule test
//! `a_reader_slower_than_the_periodic_flusher_still_flushes_between_its_ticks`).
//!
//! The reader and `memcg_stats_cpus` are modelled for the 6.12+ flush only:
//! the `sync` and `reclaim` models read neither, and setting them there is a
//! configuration error naming the field and the mode ([`validate_policy`]).
//! Departure: 5.15–6.11 kernels have both too (6.1 `memory_stat_format()`
//! starts with `mem_cgroup_flush_stats()`, which flushes only past a global
//! threshold of `num_online_cpus()` batches; per group from 6.8), which the
//! `reclaim` model leaves out.
//!
//! **What the results say** ([`MemcgFlushReport`], `mmsim_memcg_flush` in the
//! results, under `ratelimited` and `reclaim`): the flushes each caller did and
//! the ones the threshold skipped. The kernel counts none of them (no vmstat or
//! `memory.stat` item; 6.18, not 6.12, has a `memcg:memcg_flush_stats`
//! tracepoint in `__mem_cgroup_flush_stats()` with the pending count, `force`
//! and `needs_flush`), so they are mmsim's own counts under an mmsim name.

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, PolicyConfig};
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
    /// The `memory.stat` reader's period, ns (`machine.policy.memcg_stats_read_ms`;
    /// 0: no reader).
    pub read_time: u64,
    /// `memory.stat` reads that flushed (past the threshold) and that did not.
    pub read_flushes: u64,
    /// See `read_flushes`.
    pub read_skips: u64,
    /// Flushes `mem_cgroup_flush_stats()` skipped under the threshold, any caller.
    pub threshold_skips: u64,
    /// The threshold's `num_online_cpus()` (`machine.policy.memcg_stats_cpus`,
    /// else `machine.cpus`).
    pub cpus: u64,
    /// Each group's subtree `memory.stat` event total at its last flush
    /// (the event half of [`Sim::memcg_rstat_pending`]).
    pub flushed_events: Vec<u64>,
}

/// `FLUSH_TIME` in ms: the default of `machine.policy.memcg_stats_flush_ms`.
pub(crate) fn default_flush_ms() -> u64 {
    2000
}

/// Whether `v` is 0 (`memcg_stats_read_ms` unset: left out of results).
pub(crate) fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Whether `v` is 0 (`memcg_stats_cpus` unset: left out of results).
pub(crate) fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// `MEMCG_CHARGE_BATCH` (include/linux/memcontrol.h; 64 since v6.1).
pub(crate) const MEMCG_CHARGE_BATCH: u64 = 64;

impl MemcgStats {
    /// The state for a machine whose option is `mode`, flushed every
    /// `flush_ms` ms.
    pub(crate) fn new(mode: MemcgStatsFlush, flush_ms: u64) -> Self {
        MemcgStats {
            ratelimited: mode != MemcgStatsFlush::Sync,
            on_reclaim: mode == MemcgStatsFlush::Reclaim,
            flush_time: flush_ms.saturating_mul(1_000_000),
            cpus: 1,
            ..Default::default()
        }
    }

    /// With policy `p`'s reader of `memory.stat` (`memcg_stats_read_ms`, 0:
    /// none) and the threshold's CPUs (`memcg_stats_cpus`, 0: the machine's
    /// `cpus`).
    pub(crate) fn with_reader(mut self, p: &PolicyConfig, cpus: u32) -> Self {
        self.read_time = p.memcg_stats_read_ms.saturating_mul(1_000_000);
        let threshold_cpus = match p.memcg_stats_cpus {
            0 => cpus,
            n => n,
        };
        self.cpus = u64::from(threshold_cpus.max(1));
        self
    }

    /// Zeroes the flush counts (measurement start).
    pub(crate) fn reset_counts(&mut self) {
        self.periodic_flushes = 0;
        self.reclaim_flushes = 0;
        self.ratelimited_flushes = 0;
        self.read_flushes = 0;
        self.read_skips = 0;
        self.threshold_skips = 0;
    }

    /// The flush counts for the results (None under `sync`, which models no
    /// flush).
    pub(crate) fn report(&self) -> Option<MemcgFlushReport> {
        self.ratelimited.then(|| MemcgFlushReport {
            periodic: self.periodic_flushes,
            reclaim: self.reclaim_flushes,
            ratelimited: self.ratelimited_flushes,
            ratelimited_skipped: self.threshold_skips - self.read_skips,
            read: self.read_flushes,
            read_skipped: self.read_skips,
        })
    }
}

/// How often the memcg statistics were flushed, by caller, and how often the
/// update threshold (`memcg_vmstats_needs_flush()`) skipped a flush: mmsim's
/// own counts (`mmsim_memcg_flush` in the results; the kernel exposes none,
/// see `crate::memcg_stats`), from the measurement's start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemcgFlushReport {
    /// Forced flushes of the whole tree by `flush_memcg_stats_dwork()`.
    pub periodic: u64,
    /// `reclaim` (5.15–6.11): `shrink_node()`'s flushes of the whole tree.
    pub reclaim: u64,
    /// Flushes by `mem_cgroup_flush_stats_ratelimited()` (reclaim, the refault
    /// test, the shadow-node shrinker) once the periodic one was a cycle late;
    /// under `reclaim`, 6.1's delayed flush of the refault test.
    pub ratelimited: u64,
    /// `mem_cgroup_flush_stats_ratelimited()` calls past the time rule that
    /// the update threshold skipped (`ratelimited` only).
    pub ratelimited_skipped: u64,
    /// `memory.stat` reads (`memcg_stats_read_ms`) that flushed their group.
    pub read: u64,
    /// `memory.stat` reads under the update threshold: no flush.
    pub read_skipped: u64,
}

/// The checks of the `machine.policy.memcg_stats_*` numbers (from
/// `MachineConfig::validate`): the periods' ranges, the threshold's CPUs
/// (`machine.cpus`' range), and the reader and the CPUs only under
/// `ratelimited`, the only mode that reads them.
pub(crate) fn validate_policy(p: &PolicyConfig) -> Result<(), ConfigError> {
    for (name, v, lo, hi) in [
        ("memcg_stats_flush_ms", p.memcg_stats_flush_ms, 1, 3_600_000),
        ("memcg_stats_read_ms", p.memcg_stats_read_ms, 0, 3_600_000),
        ("memcg_stats_cpus", u64::from(p.memcg_stats_cpus), 0, 4096),
    ] {
        if !(lo..=hi).contains(&v) {
            let msg = format!("{v} is out of range [{lo}, {hi}]");
            return Err(ConfigError::new(format!("machine.policy.{name}"), msg));
        }
    }
    if p.memcg_stats_flush == MemcgStatsFlush::Ratelimited {
        return Ok(());
    }
    for (name, v, what) in [
        (
            "memcg_stats_read_ms",
            p.memcg_stats_read_ms,
            "memory.stat reader",
        ),
        (
            "memcg_stats_cpus",
            u64::from(p.memcg_stats_cpus),
            "update threshold",
        ),
    ] {
        if v != 0 {
            let msg = format!(
                "{v} is set, but mmsim's memcg_stats_flush = \"{}\" models no {what} (only \
                 the 6.12+ flush does: set memcg_stats_flush = \"ratelimited\", or leave it out)",
                p.memcg_stats_flush.name()
            );
            return Err(ConfigError::new(format!("machine.policy.{name}"), msg));
        }
    }
    Ok(())
}

/// The `memory.stat` event total of one group's own counters: the items
/// `memcg_vm_event_stat[]` lists, each counted through `memcg_rstat_updated()`.
fn rstat_events(stat: &crate::stats::MemcgStat) -> u64 {
    use crate::stats::{Kind, MemcgFile, VmItem};
    VmItem::ALL
        .iter()
        .filter(|i| i.kind() == Kind::Event && i.memcg().is_some_and(|l| l.file == MemcgFile::Stat))
        .filter_map(|&i| stat.get(i))
        .sum()
}

impl Sim {
    /// Arms the periodic flusher (`stats_flush_dwork` queued at boot) when
    /// statistics are ratelimited.
    pub(crate) fn arm_memcg_stats_flush(&mut self) {
        if self.memcg_stats.ratelimited {
            self.timers
                .add_timer(TimerKind::MemcgStatsFlush, self.memcg_stats.flush_time);
            if self.memcg_stats.read_time > 0 && !self.memcg_stats.on_reclaim {
                self.timers
                    .add_timer(TimerKind::MemcgStatsRead, self.memcg_stats.read_time);
            }
        }
    }

    /// A reader of `memory.stat` (capture-app's, every
    /// `machine.policy.memcg_stats_read_ms`): `memory_stat_show()` →
    /// `memory_stat_format()` (v1: `memcg1_stat_format()`) →
    /// `mem_cgroup_flush_stats(memcg)` of each group under the root (v6.12,
    /// v6.18), which flushes only past the update threshold and leaves
    /// `flush_last_time` alone. Requeues itself one period later.
    pub(crate) fn memory_stat_read(&mut self, now: u64) {
        let top = self.memcgs[crate::memcg::ROOT as usize].children.len();
        for i in 0..top {
            let g = self.memcgs[crate::memcg::ROOT as usize].children[i];
            if self.flush_stats_if_needed(g, false, now) {
                self.memcg_stats.read_flushes += 1;
            } else {
                self.memcg_stats.read_skips += 1;
            }
        }
        let period = self.memcg_stats.read_time;
        let next = now - now % period + period;
        self.timers.mod_timer(TimerKind::MemcgStatsRead, next);
    }

    /// The pending statistics updates of group `m`'s subtree since `m` was
    /// last flushed (`memcg->vmstats->stats_updates` before the per-CPU
    /// batching), as a lower bound (see `crate::memcg_stats`): the change of
    /// each list size and of WORKINGSET_ACTIVATE_*, plus the `memory.stat`
    /// events counted since.
    pub(crate) fn memcg_rstat_pending(&self, m: MemcgId) -> u64 {
        let s = &self.memcg_stats;
        let then = s.flushed.get(m as usize).copied().unwrap_or_default();
        let now = self.subtree_lruvec(m);
        let lists: u64 = (now.sizes.iter().zip(then.sizes))
            .map(|(&a, b)| a.abs_diff(b))
            .sum();
        let activate: u64 = (0..2)
            .map(|i| now.workingset_activate[i].abs_diff(then.workingset_activate[i]))
            .sum();
        let events = self.subtree_rstat_events(m);
        let then_events = s.flushed_events.get(m as usize).copied().unwrap_or(0);
        lists + activate + events.saturating_sub(then_events)
    }

    /// The `memory.stat` event total of group `m`'s subtree.
    fn subtree_rstat_events(&self, m: MemcgId) -> u64 {
        let mut total = 0;
        let mut cur = Some(m);
        while let Some(g) = cur {
            total += rstat_events(&self.memcgs[g as usize].stat);
            cur = self.mem_cgroup_iter(m, g);
        }
        total
    }

    /// `memcg_vmstats_needs_flush()` (v6.12, v6.18): more than
    /// `MEMCG_CHARGE_BATCH × num_online_cpus()` updates have reached group
    /// `m`'s atomic count, which one CPU's per-CPU counter feeds in whole
    /// batches of `MEMCG_CHARGE_BATCH` (`memcg_rstat_updated()`).
    pub(crate) fn memcg_vmstats_needs_flush(&self, m: MemcgId) -> bool {
        let pending = self.memcg_rstat_pending(m);
        let atomic = pending - pending % MEMCG_CHARGE_BATCH;
        atomic > MEMCG_CHARGE_BATCH * self.memcg_stats.cpus
    }

    /// `__mem_cgroup_flush_stats(memcg, force)` (v6.12, v6.18): unless
    /// `force`, nothing under the update threshold; a flush of the root
    /// records `flush_last_time` (never backwards: a reclaimer's clock may
    /// run ahead of the timers'). Returns whether it flushed.
    pub(crate) fn flush_stats_if_needed(&mut self, m: MemcgId, force: bool, now: u64) -> bool {
        if !force && !self.memcg_vmstats_needs_flush(m) {
            self.memcg_stats.threshold_skips += 1;
            return false;
        }
        self.do_flush_stats(m);
        if m == crate::memcg::ROOT {
            let last = &mut self.memcg_stats.flush_last_time;
            *last = (*last).max(now);
        }
        true
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
        // `mem_cgroup_flush_stats(memcg)`: past the update threshold only;
        // `__mem_cgroup_flush_stats()` records the time of any flush of the
        // root, not only the periodic worker's.
        if s.ratelimited
            && now > s.flush_last_time + 2 * s.flush_time
            && self.flush_stats_if_needed(memcg, false, now)
        {
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
        self.memcg_stats.flushed_events.resize(n, 0);
        let mut cur = Some(memcg);
        while let Some(m) = cur {
            self.memcg_stats.flushed[m as usize] = self.subtree_lruvec(m);
            // `mem_cgroup_css_rstat_flush()`: the group's `stats_updates` zeroed.
            self.memcg_stats.flushed_events[m as usize] = self.subtree_rstat_events(m);
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
