//! The timer list of background work (kernel/time/timer.c `struct
//! timer_list`, kernel/workqueue.c `struct delayed_work`; Linux v6.14).
//!
//! Every background actor of the machine owns one timer, named by a
//! [`TimerKind`]: writeback completion per device, the flusher's periodic
//! `wb_workfn`, kswapd's next `balance_pgdat()` priority iteration, the
//! scenario's scheduled lru_gen and memcg knob writes, and the stats
//! sampler. A timer is pending with an expiry time (ns on the workload
//! clock) or idle. [`Sim::step`](crate::Sim::step) compares the workload
//! clock with [`TimerList::next_expiry`] — the one comparison the per-access
//! path pays — and on expiry `Sim::run_timers` visits the kinds in
//! declaration order, firing each whose timer is due at that moment.
//!
//! That visit order, not the expiry order, decides which of several due
//! actors runs first. It is the order the simulator has always used (a
//! writeback completion before the flusher before kswapd before the
//! scenario's writes), so results stay as they were; an actor armed during
//! the visit by one visited later (kswapd woken by a knob write, say) fires
//! on the next event's check. The kernel's order within one tick is a
//! bucket's list order, which a simulator cannot reproduce anyway.
//!
//! The pending timers sit in a binary min-heap keyed by (expiry, sequence
//! number): equal expiries leave the heap in the order they were armed, so
//! [`TimerList::pop_expired`] fires ties in insertion order, and the heap
//! holds no pointers or hashes, so it is deterministic. Modifying or
//! deleting a pending timer does not search the heap: the timer's slot
//! keeps the sequence number of its live entry and a stale entry is
//! dropped when it reaches the top (as `del_timer()` unlinks without
//! firing). The heap's buffer is reused, so a warmed-up list allocates
//! nothing per fire.
//!
//! A new actor (kdamond's sampling interval, khugepaged's scan sleep) adds a
//! variant at the place in [`TimerKind::ALL`] where it should be visited,
//! and a match arm in `Sim::run_timers`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::psi::PsiReport;
use crate::sim::{Sim, DIRTY_WRITEBACK_NS};
use crate::stats::Vmstat;

/// The background actors that own a timer, in the order a timer pass
/// visits them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum TimerKind {
    /// The next writeback completion on the swap device (`end_bio` of the
    /// oldest in-flight write): the front of its completion queue.
    WritebackSwap,
    /// The next writeback completion on the filesystem's device.
    WritebackFs,
    /// The earliest queued `bw_dwork` of a wb (`wb_update_bandwidth_workfn`,
    /// `BANDWIDTH_INTERVAL` after its writeback ended; armed only with
    /// `policy.dirty_throttle`), after the completions it follows.
    WbBandwidth,
    /// The flusher's periodic wakeup (`wb_workfn` requeued every
    /// `dirty_writeback_centisecs`).
    Flusher,
    /// kswapd's next `balance_pgdat()` priority iteration, on kswapd's clock.
    Kswapd,
    /// The next scheduled lru_gen write (debugfs or /sys/kernel/mm/lru_gen).
    LruGenWrite,
    /// The next scheduled memory cgroup knob write.
    MemcgKnob,
    /// The periodic memcg statistics flush (`flush_memcg_stats_dwork`,
    /// every 2 s; armed only with `memcg_stats_flush = "ratelimited"`).
    MemcgStatsFlush,
    /// A reader of the groups' `memory.stat` (`Sim::memory_stat_read`;
    /// armed only with `memcg_stats_read_ms` under `ratelimited`).
    MemcgStatsRead,
    /// The stats sampler (`machine.stats_interval_ms`).
    StatsSample,
    /// The next step of a kdamond's loop (`crate::damon`): after the
    /// sampler, so that a sample never sees DAMON's work of the same moment.
    Kdamond,
    /// khugepaged's next wake-up (`crate::khugepaged`; armed only with
    /// `[machine.thp.khugepaged] run = true`).
    Khugepaged,
    /// kcompactd's next run (`crate::compaction`): a wakeup, or its
    /// proactive check every 500 ms; armed only with `[machine.compaction]`.
    Kcompactd,
    /// The vmstat worker's `decay_pcp_high` (`vmstat_update` →
    /// `refresh_cpu_vm_stats`, every second; armed only with
    /// `policy.pcp_lists = "6.12"`, `page_alloc/pcp_high.rs`).
    VmstatUpdate,
}

impl TimerKind {
    /// Every kind, in visit order.
    pub(crate) const ALL: [TimerKind; 14] = [
        TimerKind::WritebackSwap,
        TimerKind::WritebackFs,
        TimerKind::WbBandwidth,
        TimerKind::Flusher,
        TimerKind::Kswapd,
        TimerKind::LruGenWrite,
        TimerKind::MemcgKnob,
        TimerKind::MemcgStatsFlush,
        TimerKind::MemcgStatsRead,
        TimerKind::StatsSample,
        TimerKind::Kdamond,
        TimerKind::Khugepaged,
        TimerKind::Kcompactd,
        TimerKind::VmstatUpdate,
    ];
    /// Number of kinds.
    pub(crate) const COUNT: usize = Self::ALL.len();

    /// The writeback completion timer of device `q` (0 swap, 1 filesystem).
    pub(crate) fn writeback(q: usize) -> TimerKind {
        if q == 0 {
            TimerKind::WritebackSwap
        } else {
            TimerKind::WritebackFs
        }
    }
}

/// One pending timer's heap entry: (expiry, sequence number, kind).
type Entry = Reverse<(u64, u64, TimerKind)>;

/// The machine's timers (`struct timer_base`, one per machine).
#[derive(Clone, Debug, Default)]
pub(crate) struct TimerList {
    /// Pending entries, earliest (expiry, seq) on top; may hold stale ones.
    heap: BinaryHeap<Entry>,
    /// Per kind: (expiry, seq) of its live entry while pending.
    pending: [Option<(u64, u64)>; TimerKind::COUNT],
    /// Last sequence number handed out.
    seq: u64,
    /// Earliest pending expiry, `u64::MAX` when none.
    next: u64,
}

impl TimerList {
    /// An empty list.
    pub(crate) fn new() -> TimerList {
        TimerList {
            heap: BinaryHeap::with_capacity(2 * TimerKind::COUNT),
            next: u64::MAX,
            ..Default::default()
        }
    }

    /// Earliest expiry of a pending timer (`u64::MAX` when none): the value
    /// the hot path compares the clock with.
    #[inline(always)]
    pub(crate) fn next_expiry(&self) -> u64 {
        self.next
    }

    /// `timer_pending()`: the timer's expiry if it is pending.
    #[inline]
    pub(crate) fn expires(&self, kind: TimerKind) -> Option<u64> {
        self.pending[kind as usize].map(|(t, _)| t)
    }

    /// Whether the timer is pending and due at `now`.
    #[inline]
    pub(crate) fn due(&self, kind: TimerKind, now: u64) -> bool {
        self.expires(kind).is_some_and(|t| t <= now)
    }

    /// `mod_timer()`: (re)arms the timer for `expires`, pending or not.
    /// Returns whether it was pending. Re-arming a pending timer for its
    /// current expiry keeps its place among equal expiries.
    pub(crate) fn mod_timer(&mut self, kind: TimerKind, expires: u64) -> bool {
        let was = self.pending[kind as usize];
        if was.is_some_and(|(t, _)| t == expires) {
            return true;
        }
        self.seq += 1;
        self.pending[kind as usize] = Some((expires, self.seq));
        self.heap.push(Reverse((expires, self.seq, kind)));
        self.next = self.next.min(expires);
        if was.is_some() {
            self.settle();
        }
        was.is_some()
    }

    /// `add_timer()`: arms an idle timer (a pending one is re-armed, as
    /// `mod_timer()` would).
    pub(crate) fn add_timer(&mut self, kind: TimerKind, expires: u64) {
        self.mod_timer(kind, expires);
    }

    /// `del_timer()`: disarms the timer. Returns whether it was pending.
    pub(crate) fn del_timer(&mut self, kind: TimerKind) -> bool {
        let was = self.pending[kind as usize].take().is_some();
        if was {
            self.settle();
        }
        was
    }

    /// `queue_delayed_work()`: arms the timer `delay` ns after `now` unless it
    /// is pending already. Returns whether it was armed.
    #[cfg_attr(not(test), allow(dead_code))] // only the timer tests use it so far
    pub(crate) fn queue_delayed_work(&mut self, kind: TimerKind, now: u64, delay: u64) -> bool {
        if self.pending[kind as usize].is_some() {
            return false;
        }
        self.mod_timer(kind, now.saturating_add(delay));
        true
    }

    /// `mod_delayed_work()`: (re)arms the timer `delay` ns after `now`.
    #[cfg_attr(not(test), allow(dead_code))] // only the timer tests use it so far
    pub(crate) fn mod_delayed_work(&mut self, kind: TimerKind, now: u64, delay: u64) -> bool {
        self.mod_timer(kind, now.saturating_add(delay))
    }

    /// Sets the timer to `expires` if `Some`, else disarms it: the common
    /// "next event of my queue" re-arm.
    #[inline]
    pub(crate) fn set(&mut self, kind: TimerKind, expires: Option<u64>) {
        match expires {
            Some(t) => {
                self.mod_timer(kind, t);
            }
            None => {
                self.del_timer(kind);
            }
        }
    }

    /// Takes the earliest timer due at `now` off the list (ties in the
    /// order they were armed) and returns its kind and expiry: the
    /// `expire_timers()` loop for users that fire in expiry order.
    #[cfg_attr(not(test), allow(dead_code))] // only the timer tests use it so far
    pub(crate) fn pop_expired(&mut self, now: u64) -> Option<(TimerKind, u64)> {
        self.settle();
        let &Reverse((t, _, kind)) = self.heap.peek()?;
        if t > now {
            return None;
        }
        self.heap.pop();
        self.pending[kind as usize] = None;
        self.settle();
        Some((kind, t))
    }

    /// Drops stale entries off the top and recomputes the earliest expiry.
    fn settle(&mut self) {
        while let Some(&Reverse((t, seq, kind))) = self.heap.peek() {
            if self.pending[kind as usize] == Some((t, seq)) {
                self.next = t;
                return;
            }
            self.heap.pop();
        }
        self.next = u64::MAX;
    }
}

/// One sample of the stats sampler: the machine's counters at a multiple of
/// `machine.stats_interval_ms`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StatsSample {
    /// The sample's time on the workload clock, ns (the sampler's expiry:
    /// exactly k × the interval, though taken at the first event at or after it).
    pub t_ns: u64,
    /// /proc/vmstat: the event counters so far (zeroed by
    /// `Sim::begin_measurement`), and the gauges `nr_free_pages`, the LRU list
    /// sizes (`nr_inactive_anon` … `nr_unevictable`, summed over the groups),
    /// `nr_dirty` and `nr_writeback`. `nr_swapcached` (a walk of every
    /// list) is not sampled: 0.
    pub vmstat: Vmstat,
    /// /proc/pressure/memory so far (totals and averages).
    pub psi: PsiReport,
    /// `memory.current` of every group, in pages, in the order of
    /// `RunResult::stats_memcg_paths`.
    pub memcg_usage_pages: Vec<u64>,
    /// `memory.max` of every group, in pages (None: `max`), in the same order.
    #[serde(default)]
    pub memcg_max_pages: Vec<Option<u64>>,
    /// kswapd's CPU so far, ns (`RunResult::kswapd_cpu_s`).
    #[serde(default)]
    pub kswapd_cpu_ns: u64,
    /// Reclaim CPU in the workload's tasks so far (direct and memcg-limit
    /// reclaim, `RunResult::direct_profile`), ns.
    #[serde(default)]
    pub direct_reclaim_cpu_ns: u64,
    /// The multi-gen LRU's pages per generation, youngest (`max_seq`) first,
    /// `[anon, file]`, summed over the groups (`nr_pages[gen][type]` of each
    /// `lru_gen_folio`, read as /sys/kernel/debug/lru_gen lists them); empty
    /// unless the policy is `mglru`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lru_gen_pages: Vec<[u64; 2]>,
    /// Every group's `memory.current`, `memory.stat`, `memory.events` and
    /// `memory.pressure` as cgroup v2 shows them (hierarchical), in the order
    /// of `RunResult::stats_memcg_paths`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memcg: Vec<crate::memcg::MemcgReport>,
}

/// What a [`SeriesMarker`] marks: a scenario event on the time series.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeriesMarkerKind {
    /// A write to a group's control file (`memory.max`, `memory.high`, …,
    /// `memory.reclaim`), scheduled or at setup.
    KnobWrite,
    /// A task written to a group's `cgroup.procs` (a `[[cgroup_move]]`).
    Move,
    /// A phase of the scenario starts (its first event).
    PhaseStart,
    /// The OOM killer (`oom_kill_process`) killed a task.
    OomKill,
    /// A task exited (`do_exit`, a workload with `exit = true` ended).
    TaskExit,
    /// The warmup ended: the counters were zeroed (`warmup_events`).
    MeasurementStart,
}

/// A scenario event on the stats sampler's time line (`--series`): recorded
/// only while the sampler is on; reads and changes no simulated state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesMarker {
    /// When it happened, ns on the workload clock.
    pub t_ns: u64,
    /// What happened.
    pub kind: SeriesMarkerKind,
    /// The group concerned (its path), if any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// In the kernel's terms: `memory.max=1000p`, `task 3`, `phase 1`, …
    pub detail: String,
}

impl Sim {
    /// `run_timers()`: fires the timers due at the workload clock, visiting
    /// the kinds in [`TimerKind::ALL`] order (see the module overview).
    #[cold]
    pub(crate) fn run_timers(&mut self) {
        let now = self.clock;
        for kind in TimerKind::ALL {
            if self.timers.due(kind, now) {
                self.fire_timer(kind, now);
            }
        }
    }

    /// The timer's function: runs the actor's work due by `now` and re-arms
    /// its timer for the actor's next work.
    fn fire_timer(&mut self, kind: TimerKind, now: u64) {
        match kind {
            TimerKind::WritebackSwap => self.complete_writeback_on(0, now),
            TimerKind::WritebackFs => self.complete_writeback_on(1, now),
            TimerKind::WbBandwidth => self.wb_bandwidth_dwork(now),
            TimerKind::Flusher => {
                self.flusher_periodic(now);
                let next = now - now % DIRTY_WRITEBACK_NS + DIRTY_WRITEBACK_NS;
                self.timers.mod_timer(TimerKind::Flusher, next);
            }
            TimerKind::Kswapd => {
                if self.kswapd.nap_until != 0 && self.kswapd.nap_until <= now {
                    self.kswapd_nap_end();
                }
                while self.kswapd.running && self.kswapd.clock <= now {
                    self.kswapd_step();
                }
                self.arm_kswapd_timer();
            }
            TimerKind::LruGenWrite => {
                self.run_lru_gen_writes(now);
                let next = self.next_lru_gen_write();
                self.timers.set(TimerKind::LruGenWrite, next);
            }
            TimerKind::MemcgKnob => {
                while self.knob_events.last().is_some_and(|e| e.at <= now) {
                    let e = self.knob_events.pop().expect("checked");
                    // Validated when scheduled: the group exists.
                    let _ = self.set_memcg_knob(e.memcg, e.knob, e.pages);
                }
                self.arm_knob_timer();
            }
            TimerKind::MemcgStatsFlush => self.flush_memcg_stats_dwork(now),
            TimerKind::MemcgStatsRead => self.memory_stat_read(now),
            TimerKind::StatsSample => {
                while let Some(t) = self.timers.expires(kind).filter(|&t| t <= now) {
                    self.sample_stats(t);
                    self.decimate_stats_samples();
                    let next = t - t % self.stats_interval_ns + self.stats_interval_ns;
                    self.timers.mod_timer(kind, next);
                }
            }
            TimerKind::Kdamond => self.kdamond_timer(now),
            TimerKind::Khugepaged => self.khugepaged_timer(now),
            TimerKind::Kcompactd => self.kcompactd_timer(now),
            TimerKind::VmstatUpdate => self.vmstat_update(now),
        }
    }

    /// Arms kswapd's timer for its clock while it runs, for the end of its
    /// nap while it naps (`compaction.kswapd_nap`), else disarms it.
    pub(crate) fn arm_kswapd_timer(&mut self) {
        let k = &self.kswapd;
        let next = if k.running {
            Some(k.clock)
        } else {
            (k.nap_until != 0).then_some(k.nap_until)
        };
        self.timers.set(TimerKind::Kswapd, next);
    }

    /// Schedules `set_memcg_knob(memcg, knob, pages)` for when the workload
    /// clock reaches `at` ns (before the first event at or after it). Writes
    /// at the same time happen in the order they were scheduled.
    pub fn schedule_memcg_knob(
        &mut self,
        at: u64,
        memcg: crate::memcg::MemcgId,
        knob: crate::memcg::MemcgKnob,
        pages: u64,
    ) -> Result<(), crate::sim::SimError> {
        if memcg as usize >= self.memcgs.len() {
            return Err(crate::sim::SimError::Setup(format!("no cgroup {memcg}")));
        }
        let e = crate::memcg::KnobEvent {
            at,
            memcg,
            knob,
            pages,
        };
        // Sorted latest first; among equal times, the earliest scheduled last.
        let i = self.knob_events.partition_point(|x| x.at > at);
        self.knob_events.insert(i, e);
        self.arm_knob_timer();
        Ok(())
    }

    /// Arms the knob timer for the next scheduled memcg knob write.
    pub(crate) fn arm_knob_timer(&mut self) {
        let next = self.knob_events.last().map(|e| e.at);
        self.timers.set(TimerKind::MemcgKnob, next);
    }

    /// Arms device `q`'s writeback timer for its oldest in-flight write.
    pub(crate) fn arm_writeback_timer(&mut self, q: usize) {
        let next = self.writeback[q].front().map(|&(t, _)| t);
        self.timers.set(TimerKind::writeback(q), next);
    }

    /// Arms the stats sampler for its first sample, if it is on.
    pub(crate) fn arm_stats_sampler(&mut self) {
        let interval = self.cfg.stats_interval_ms.saturating_mul(1_000_000);
        self.stats_interval_ns = interval;
        if interval > 0 {
            self.timers.mod_timer(TimerKind::StatsSample, interval);
        }
    }

    /// With `machine.stats_max_samples` = N > 0: once N samples are held,
    /// keeps every other one (those at multiples of twice the interval) and
    /// doubles the interval, so a run of any length ends with at most N
    /// samples at a fixed spacing (a power of two times the configured
    /// interval). Not a kernel mechanism: a bound on the report's memory.
    fn decimate_stats_samples(&mut self) {
        let max = self.cfg.stats_max_samples as usize;
        if max == 0 || self.stats_samples.len() < max {
            return;
        }
        let wide = self.stats_interval_ns.saturating_mul(2);
        self.stats_samples.retain(|x| x.t_ns % wide == 0);
        self.stats_interval_ns = wide;
    }

    /// Takes one [`StatsSample`] for time `t`. Reads state only.
    fn sample_stats(&mut self, t: u64) {
        let mut vmstat = self.vm.clone();
        self.fill_cheap_gauges(&mut vmstat);
        let sample = StatsSample {
            t_ns: t,
            vmstat,
            psi: self.psi.report(self.clock),
            memcg_usage_pages: self.memcgs.iter().map(|m| m.usage).collect(),
            memcg_max_pages: self
                .memcgs
                .iter()
                .map(|m| (m.max != u64::MAX).then_some(m.max))
                .collect(),
            kswapd_cpu_ns: self.kswapd.cpu_ns,
            direct_reclaim_cpu_ns: self.direct_profile.total_ns(),
            lru_gen_pages: self.lru_gen_pages(),
            memcg: (0..self.memcgs.len())
                .map(|m| self.memcg_report(m as crate::memcg::MemcgId))
                .collect(),
        };
        self.stats_samples.push(sample);
    }

    /// Records a scenario event on the time series (a [`SeriesMarker`] at
    /// the workload clock), if the stats sampler is on; a no-op otherwise.
    /// Called by the knob writes, the OOM killer and the scenario runner
    /// (phase starts), never on the per-access path.
    #[cold]
    pub fn series_mark(
        &mut self,
        kind: SeriesMarkerKind,
        group: Option<crate::memcg::MemcgId>,
        detail: String,
    ) {
        self.series_mark_at(self.clock, kind, group, detail);
    }

    /// [`Sim::series_mark`] at time `t_ns` (at most the clock: an event the
    /// caller saw begin earlier, such as a phase's first batch). Markers are
    /// reported in time order.
    #[cold]
    pub fn series_mark_at(
        &mut self,
        t_ns: u64,
        kind: SeriesMarkerKind,
        group: Option<crate::memcg::MemcgId>,
        detail: String,
    ) {
        if self.stats_interval_ns == 0 {
            return;
        }
        let group = group
            .and_then(|g| self.memcgs.get(g as usize))
            .map(|g| g.path.clone())
            .unwrap_or_default();
        let i = self.series_markers.partition_point(|x| x.t_ns <= t_ns);
        self.series_markers.insert(
            i,
            SeriesMarker {
                t_ns,
                kind,
                group,
                detail,
            },
        );
    }
}

impl Sim {
    /// The multi-gen LRU's pages per generation for a [`StatsSample`],
    /// youngest first (`max_seq - seq`), summed over the groups.
    fn lru_gen_pages(&self) -> Vec<[u64; 2]> {
        use crate::reclaim::lru_gen::{lru_gen_from_seq, MAX_NR_GENS};
        if self.cfg.policy.name != crate::config::PolicyName::Mglru {
            return Vec::new();
        }
        let mut out = vec![[0u64; 2]; MAX_NR_GENS as usize];
        for m in &self.memcgs {
            let g = &m.lruvec.lrugen;
            for (ty, &min) in g.min_seq.iter().enumerate() {
                for seq in min..=g.max_seq {
                    let age = (g.max_seq - seq) as usize;
                    if let Some(slot) = out.get_mut(age) {
                        slot[ty] += g.nr_pages[lru_gen_from_seq(seq)][ty].max(0) as u64;
                    }
                }
            }
        }
        while out.len() > 1 && out.last() == Some(&[0, 0]) {
            out.pop();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_visits_the_kinds_in_declaration_order() {
        assert!(TimerKind::ALL.windows(2).all(|w| w[0] < w[1]));
        assert!(TimerKind::ALL
            .iter()
            .enumerate()
            .all(|(i, &k)| k as usize == i));
    }

    #[test]
    fn equal_expiries_fire_in_insertion_order() {
        let mut l = TimerList::new();
        l.add_timer(TimerKind::MemcgKnob, 100);
        l.add_timer(TimerKind::Kswapd, 100);
        l.add_timer(TimerKind::Flusher, 50);
        l.add_timer(TimerKind::WritebackFs, 100);
        assert_eq!(l.next_expiry(), 50);
        assert_eq!(l.pop_expired(49), None);
        assert_eq!(l.pop_expired(100), Some((TimerKind::Flusher, 50)));
        assert_eq!(l.pop_expired(100), Some((TimerKind::MemcgKnob, 100)));
        assert_eq!(l.pop_expired(100), Some((TimerKind::Kswapd, 100)));
        assert_eq!(l.pop_expired(100), Some((TimerKind::WritebackFs, 100)));
        assert_eq!(l.pop_expired(u64::MAX), None);
        assert_eq!(l.next_expiry(), u64::MAX);
    }

    #[test]
    fn del_and_mod_of_a_pending_timer() {
        let mut l = TimerList::new();
        l.add_timer(TimerKind::Kswapd, 10);
        l.add_timer(TimerKind::Flusher, 20);
        assert!(l.del_timer(TimerKind::Kswapd));
        assert!(!l.del_timer(TimerKind::Kswapd));
        assert_eq!(l.expires(TimerKind::Kswapd), None);
        assert_eq!(l.next_expiry(), 20);
        // Moved later: the stale entry at 10 never fires.
        assert!(l.mod_timer(TimerKind::Flusher, 30));
        assert_eq!(l.next_expiry(), 30);
        assert_eq!(l.pop_expired(25), None);
        // Moved earlier, then re-armed for the same time: keeps its place.
        l.add_timer(TimerKind::LruGenWrite, 5);
        l.mod_timer(TimerKind::Flusher, 5);
        l.mod_timer(TimerKind::LruGenWrite, 5);
        assert_eq!(l.pop_expired(5), Some((TimerKind::LruGenWrite, 5)));
        assert_eq!(l.pop_expired(5), Some((TimerKind::Flusher, 5)));
        assert_eq!(l.pop_expired(u64::MAX), None);
        // queue_delayed_work leaves a pending timer alone; mod_delayed_work moves it.
        assert!(l.queue_delayed_work(TimerKind::StatsSample, 100, 7));
        assert!(!l.queue_delayed_work(TimerKind::StatsSample, 200, 7));
        assert_eq!(l.expires(TimerKind::StatsSample), Some(107));
        assert!(l.mod_delayed_work(TimerKind::StatsSample, 200, 7));
        assert_eq!(l.expires(TimerKind::StatsSample), Some(207));
    }

    #[test]
    fn a_warmed_up_list_does_not_grow() {
        let mut l = TimerList::new();
        for t in 0..10_000u64 {
            l.mod_timer(TimerKind::Kswapd, t);
            l.set(TimerKind::WritebackFs, (t % 3 != 0).then_some(t + 5));
            while l.pop_expired(t).is_some() {}
        }
        assert!(l.heap.len() <= 2 * TimerKind::COUNT);
    }
    use crate::config::{MachineConfig, Size};
    use crate::event::Event;
    use crate::readahead::Advice;

    fn small_machine(stats_interval_ms: u64) -> Sim {
        Sim::new(MachineConfig {
            memory: Size::from_pages(4096),
            stats_interval_ms,
            ..Default::default()
        })
        .unwrap()
    }

    /// Reads and writes a file larger than memory, with think times, so
    /// that kswapd, the flusher and writeback completions all run.
    fn pressure(s: &mut Sim) {
        let t = s.add_task("t");
        let file = s.add_file("f", 12_000).unwrap();
        s.open(file, t).unwrap();
        s.fadvise(file, Advice::Random).unwrap();
        for i in 0..40_000u32 {
            let index = i.wrapping_mul(2_654_435_761) % 12_000;
            let ev = match i % 7 {
                0 => Event::FileWrite {
                    file,
                    index,
                    pages: 1,
                },
                3 => Event::Think { ns: 1_234_567 },
                _ => Event::FileRead {
                    file,
                    index,
                    pages: 1,
                },
            };
            s.step(&ev);
        }
    }

    #[test]
    fn the_sampler_fires_at_exact_multiples_of_its_interval() {
        let mut s = small_machine(10);
        let mut t = 0;
        // Odd steps, and one jump over three intervals at once.
        for ns in [3_333_333, 3_333_333, 3_333_333, 3_333_333, 35_000_000, 1, 7] {
            s.step(&Event::Think { ns });
            t += ns;
        }
        s.step(&Event::Think { ns: 0 });
        assert_eq!(s.now(), t);
        let r = s.finish();
        let times: Vec<u64> = r.stats_samples.iter().map(|x| x.t_ns).collect();
        let want: Vec<u64> = (1..=t / 10_000_000).map(|k| k * 10_000_000).collect();
        assert_eq!(times, want);
        assert_eq!(r.stats_memcg_paths, vec!["/".to_string()]);
        assert!(r
            .stats_samples
            .iter()
            .all(|x| x.memcg_usage_pages.len() == 1));
    }

    #[test]
    fn a_bounded_sampler_thins_to_a_doubled_interval() {
        let mut s = Sim::new(MachineConfig {
            memory: Size::from_pages(4096),
            stats_interval_ms: 10,
            stats_max_samples: 4,
            ..Default::default()
        })
        .unwrap();
        for _ in 0..20 {
            s.step(&Event::Think { ns: 10_000_000 });
        }
        s.step(&Event::Think { ns: 0 });
        let r = s.finish();
        let times: Vec<u64> = r.stats_samples.iter().map(|x| x.t_ns / 1_000_000).collect();
        // 10..40 -> [20, 40] at 20 ms; 60, 80 -> [40, 80] at 40 ms; 120, 160 ->
        // [80, 160] at 80 ms; the next (240) is after the end (200).
        assert_eq!(times, [80, 160]);
        assert_eq!(s.stats_interval_ns, 80_000_000);
        let bad = MachineConfig {
            stats_max_samples: 1,
            ..Default::default()
        };
        assert_eq!(
            bad.validate().unwrap_err().field,
            "machine.stats_max_samples"
        );
    }

    #[test]
    fn the_sampler_changes_no_result() {
        let mut off = small_machine(0);
        let mut on = small_machine(1);
        pressure(&mut off);
        pressure(&mut on);
        let off = off.finish();
        let mut on = on.finish();
        assert!(off.stats_samples.is_empty() && off.stats_memcg_paths.is_empty());
        assert!(off.vmstat.pgscan_kswapd > 0 && off.vmstat.pgpgout > 0);
        let last = on.stats_samples.last().expect("sampled").clone();
        assert_eq!(last.t_ns, on.stats_samples.len() as u64 * 1_000_000);
        assert!(last.vmstat.nr_free_pages > 0 && last.vmstat.pgscan_kswapd > 0);
        // The CPU counters are the run's, sampled: non-decreasing, ending at most at
        // the run's totals.
        assert!(on
            .stats_samples
            .windows(2)
            .all(|w| w[0].kswapd_cpu_ns <= w[1].kswapd_cpu_ns));
        assert!(last.kswapd_cpu_ns > 0 && last.kswapd_cpu_ns as f64 <= on.kswapd_cpu_s * 1e9);
        assert_eq!(last.memcg_max_pages, vec![None]);
        assert!(last.lru_gen_pages.is_empty());
        on.stats_samples.clear();
        on.stats_memcg_paths.clear();
        assert_eq!(off, on);
    }

    #[test]
    fn writeback_timers_follow_the_oldest_write() {
        let mut s = small_machine(0);
        let fs = TimerKind::WritebackFs;
        assert_eq!(s.timers.expires(fs), None);
        assert_eq!(s.timers.next_expiry(), DIRTY_WRITEBACK_NS);
        // Struck-out events (no folio): the timers alone are under test.
        let nil = crate::mem::folio::NIL;
        s.queue_writeback(1, 500, nil);
        s.queue_writeback(1, 300, nil);
        s.queue_writeback(1, 800, nil);
        // The queue completes in submission order: the timer is the front's,
        // and the write done at 300 waits behind the one done at 500.
        assert_eq!(s.timers.expires(fs), Some(500));
        assert_eq!(s.timers.next_expiry(), 500);
        s.complete_writeback(400);
        assert_eq!(s.timers.expires(fs), Some(500));
        s.complete_writeback(500);
        assert_eq!(s.timers.expires(fs), Some(800));
        assert_eq!(s.writeback[1].len(), 1);
        s.complete_writeback(1000);
        assert_eq!(s.timers.expires(fs), None);
        assert_eq!(s.timers.next_expiry(), DIRTY_WRITEBACK_NS);
    }
}
