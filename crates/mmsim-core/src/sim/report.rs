//! What a run reports: the measured window ([`Sim::begin_measurement`]), the
//! counters so far, and the end-of-run [`RunResult`] ([`Sim::finish`]) with the
//! gauges /proc/vmstat shows (as mm/vmstat.c's `vmstat_start` fills them) and the
//! simulator's own memory use.

use super::Sim;
use crate::mem::folio::LruList;
use crate::psi::Psi;
use crate::result::{AccessStats, RunResult};
use crate::stats::Vmstat;

impl Sim {
    /// Starts the measured part of a run: zeroes every event counter (the
    /// vmstat counters, access counts, PSI, stall and IO-wait times, kswapd
    /// CPU) so that [`Sim::finish`] reports only what happens from here on,
    /// like counters read before and after a benchmark's measured run after
    /// a warmup. The machine's state (memory contents, LRU order, costs,
    /// the workingset clock) is untouched.
    pub fn begin_measurement(&mut self) {
        self.vm = Vmstat::default();
        self.acc = AccessStats::default();
        self.psi = Psi::starting_at(self.clock);
        self.reclaim_stall_ns = 0;
        self.io_wait_ns = 0;
        self.dirty_throttle_begin_measurement();
        self.kswapd.cpu_ns = 0;
        self.kswapd.profile = Default::default();
        self.direct_profile = Default::default();
        self.smp.reset_stats();
        self.lru_gen.stats = Default::default();
        self.reset_memcg_stats();
        self.damon_begin_measurement();
        if let Some(t) = self.tlb.as_mut() {
            t.reset_stats();
        }
        self.series_mark(
            crate::timer::SeriesMarkerKind::MeasurementStart,
            None,
            "warmup ended: counters zeroed".into(),
        );
        self.measure_start = self.clock;
    }

    /// Current workload time, ns.
    pub fn now(&self) -> u64 {
        self.clock
    }

    /// Counters so far.
    pub fn vmstat(&self) -> &Vmstat {
        &self.vm
    }

    /// Access counters so far.
    pub fn access_stats(&self) -> &AccessStats {
        &self.acc
    }

    /// Ends the run: settles background work and reports.
    pub fn finish(&mut self) -> RunResult {
        // kswapd may still be mid-run; let it finish its current run so its CPU is accounted.
        while self.kswapd.running {
            self.kswapd_step();
        }
        self.arm_kswapd_timer();
        // Per-CPU drains no later event emitted (`tracepoint::kmem_page`).
        self.trace_pcpu_drain_flush(self.clock);
        self.fill_gauges();
        let end = (self.clock - self.measure_start).max(1);
        let psi = self.psi.report(self.clock.max(self.kswapd.clock));
        let heap = self.heap_bytes();
        let live = self.folios.live().max(1) as f64;
        let (slot_bytes, tracked) = self.slot_bytes();
        RunResult {
            policy: self.cfg.policy.name.name().to_string(),
            miss_ratio: if self.acc.accesses == 0 {
                0.0
            } else {
                self.acc.misses as f64 / self.acc.accesses as f64
            },
            access: self.acc.clone(),
            vmstat: self.vm.clone(),
            psi,
            runtime_s: (self.clock - self.measure_start) as f64 / 1e9,
            throughput: self.acc.accesses as f64 / (end as f64 / 1e9),
            kswapd_cpu_s: self.kswapd.cpu_ns as f64 / 1e9,
            reclaim_stall_s: self.reclaim_stall_ns as f64 / 1e9,
            io_wait_s: self.io_wait_ns as f64 / 1e9,
            dirty_throttle: self.dirty_throttle_report(),
            memcg_usage_pages: self.memcgs[0].usage,
            memcg_max_pages: (self.memcgs[0].max != u64::MAX).then_some(self.memcgs[0].max),
            memcg_max_events: self.memcgs.iter().map(|m| m.max_events).sum(),
            memcg: (0..self.memcgs.len())
                .map(|m| {
                    let m = m as crate::memcg::MemcgId;
                    (self.memcgs[m as usize].path.clone(), self.memcg_report(m))
                })
                .collect(),
            watermarks: [
                self.node.wmark_min,
                self.node.wmark_low,
                self.node.wmark_high,
            ],
            buddyinfo: self.phys.zone.buddyinfo(),
            pagetypeinfo: self.phys.zone.pagetypeinfo(),
            pcp_pages: self.phys.pcp.count(),
            swap_used_pages: self.swap.as_ref().map_or(0, |s| s.used),
            sim_bytes_per_resident_folio: self.folios.heap_bytes() as f64 / live,
            sim_bytes_per_tracked_page: slot_bytes as f64 / tracked.max(1) as f64,
            sim_heap_bytes: heap as u64,
            kswapd_profile: self.kswapd.profile,
            direct_profile: self.direct_profile,
            cpus: self.smp.cpus as u32,
            lru_lock_wait_s: (self.direct_profile.lock_ns + self.smp.task_lock_wait_ns) as f64
                / 1e9,
            // A saturated lock's backlog may run past the end: at most 100 %.
            lru_lock_busy_pct: (self.busiest_lru_lock_ns() as f64 * 100.0 / end as f64).min(100.0),
            lru_gen: self.lru_gen_report(),
            stats_memcg_paths: if self.stats_samples.is_empty() {
                Vec::new()
            } else {
                self.memcgs.iter().map(|m| m.path.clone()).collect()
            },
            stats_samples: self.stats_samples.clone(),
            series_markers: self.series_markers.clone(),
            tracepoints: self
                .tp
                .as_mut()
                .map(|t| {
                    // kswapd's clock runs ahead of the workload's: in time order, as
                    // `perf script` sorts a recording.
                    let mut r = std::mem::take(&mut t.records);
                    r.sort_by_key(|e| e.t_ns);
                    r
                })
                .unwrap_or_default(),
            tracepoints_dropped: self.tp.as_ref().map_or(0, |t| t.dropped),
            task_names: if self.tp.is_some() {
                self.tasks.iter().map(|t| t.name.clone()).collect()
            } else {
                Vec::new()
            },
            damon: self.damon_report(),
            explain: self.explain_report(),
            mthp: self.thp_report(),
            anon_thp_pages: self.anon_large_pages(),
            khugepaged: self.khugepaged_report(),
            tlb: self.tlb.as_ref().map(|t| t.report()),
            unapplied_writes: (self.knob_events.len() + self.lru_gen.pending.len()) as u64,
            first_unapplied_s: self
                .knob_events
                .last()
                .map(|e| e.at)
                .into_iter()
                .chain(self.lru_gen.pending.last().map(|w| w.0))
                .min()
                .map(|at| at as f64 / 1e9),
            shadow_quantised: self.shadow_layout.quantised(),
            mmsim_memcg_flush: self.memcg_stats.report(),
        }
    }

    /// The gauges of /proc/vmstat that need no walk: free pages, the LRU
    /// list sizes summed over the groups, dirty and writeback pages.
    pub(crate) fn fill_cheap_gauges(&self, vm: &mut Vmstat) {
        let lv = self.subtree_lruvec(crate::memcg::ROOT);
        vm.nr_free_pages = self.node.free;
        vm.nr_inactive_anon = lv.size(LruList::InactiveAnon);
        vm.nr_active_anon = lv.size(LruList::ActiveAnon);
        vm.nr_inactive_file = lv.size(LruList::InactiveFile);
        vm.nr_active_file = lv.size(LruList::ActiveFile);
        vm.nr_unevictable = lv.size(LruList::Unevictable);
        vm.nr_dirty = self.nr_dirty;
        vm.nr_writeback = self.nr_writeback;
    }

    /// The end-of-run gauges: the cheap ones and `nr_swapcached`, which is
    /// kept as folios enter and leave the swap cache (it was a walk of every
    /// listed folio, 48 s at 1 TiB, before an interrupted run could report).
    fn fill_gauges(&mut self) {
        let mut vm = std::mem::take(&mut self.vm);
        self.fill_cheap_gauges(&mut vm);
        self.vm = vm;
        self.vm.nr_swapcached = self.nr_swapcache_folios;
        debug_assert_eq!(self.nr_swapcache_folios, self.swapcached_walk());
    }

    /// (bytes, entries) of the per-page slot arrays: PTEs, page-cache slots, swap slots.
    fn slot_bytes(&self) -> (usize, usize) {
        let mut bytes = 0;
        let mut n = 0;
        for v in &self.vmas {
            bytes += v.ptes.capacity() * 4;
            n += v.ptes.len();
        }
        for f in &self.files {
            bytes += f.slots.capacity() * 4;
            n += f.slots.len();
        }
        if let Some(s) = &self.swap {
            bytes += s.heap_bytes();
            n += s.slots.len();
        }
        (bytes, n)
    }

    /// Simulator heap bytes: folio arena, zone and `mem_map`, page tables,
    /// page cache, swap slots.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.folios.heap_bytes()
            + self.phys.heap_bytes()
            + self
                .vmas
                .iter()
                .map(|v| v.ptes.capacity() * 4)
                .sum::<usize>()
            + self
                .files
                .iter()
                .map(|f| f.slots.capacity() * 4)
                .sum::<usize>()
            + self.swap.as_ref().map_or(0, |s| s.heap_bytes())
    }
}
