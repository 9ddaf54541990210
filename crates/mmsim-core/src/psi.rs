//! Pressure stall information for memory (kernel/sched/psi.c).
//!
//! Two simulated CPUs carry the tasks that can stall on memory: CPU 0 runs the
//! workload, CPU 1 runs kswapd. A workload task is in a memstall while it does
//! direct or memcg-limit reclaim and while it waits for the read of a
//! PG_workingset page (the "thrashing" wait); kswapd is in a memstall for the
//! whole of `balance_pgdat()`. With the post-5.16 definition of FULL
//! (`nr_memstall > 0 && nr_running == nr_memstall_running`), a lone task in a
//! memstall makes its CPU both SOME and FULL.
//!
//! Per aggregation period (`PSI_FREQ`, 2 s) the per-CPU times are combined as
//! the kernel does in `collect_percpu_times()`: each CPU's stall time weighted
//! by its non-idle time, `Σ tSOME[cpu]·tNONIDLE[cpu] / Σ tNONIDLE[cpu]`. CPU 0
//! is non-idle for the whole run (running, in reclaim or in IO wait); CPU 1
//! only while kswapd works. The running averages use the kernel's fixed-point
//! `calc_load()` with EXP_10s = 1677, EXP_60s = 1981, EXP_300s = 2034
//! (FIXED_1 = 2048), updated once per period.

use serde::{Deserialize, Serialize};

/// Aggregation period: `PSI_FREQ` = 2 s.
pub(crate) const PSI_PERIOD_NS: u64 = 2_000_000_000;
const FIXED_1: u64 = 1 << 11;
const EXP_10S: u64 = 1677;
const EXP_60S: u64 = 1981;
const EXP_300S: u64 = 2034;

/// Which simulated CPU a stall interval belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PsiCpu {
    /// The workload's CPU.
    Workload,
    /// kswapd's CPU.
    Kswapd,
}

/// Accumulates stall intervals into periods.
#[derive(Clone, Debug, Default)]
pub(crate) struct Psi {
    /// Per period: [workload stall ns, kswapd busy ns].
    periods: Vec<[u64; 2]>,
    /// Time accounting starts; stalls before it are ignored.
    start: u64,
}

/// One line of /proc/pressure/memory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PsiLine {
    /// Average share of time stalled over the last ~10 s, percent.
    pub avg10: f64,
    /// Over ~60 s, percent.
    pub avg60: f64,
    /// Over ~300 s, percent.
    pub avg300: f64,
    /// Total stall time, µs.
    pub total: u64,
}

/// /proc/pressure/memory at the end of the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PsiReport {
    /// `some` line.
    pub some: PsiLine,
    /// `full` line.
    pub full: PsiLine,
}

impl Psi {
    /// Accounting that starts at time `start` (periods are counted from there).
    pub(crate) fn starting_at(start: u64) -> Psi {
        Psi {
            periods: Vec::new(),
            start,
        }
    }

    /// Records that `cpu` was in a memstall during [start, end).
    pub(crate) fn stall(&mut self, cpu: PsiCpu, start: u64, end: u64) {
        let mut start = start.max(self.start) - self.start;
        let end = end.max(self.start) - self.start;
        let c = cpu as usize;
        while start < end {
            let p = (start / PSI_PERIOD_NS) as usize;
            let pend = (p as u64 + 1) * PSI_PERIOD_NS;
            let chunk = end.min(pend) - start;
            if p >= self.periods.len() {
                self.periods.resize(p + 1, [0, 0]);
            }
            self.periods[p][c] += chunk;
            start += chunk;
        }
    }

    /// Computes the report for a run that ended at `end` ns.
    pub(crate) fn report(&self, end: u64) -> PsiReport {
        let mut last = PsiReport::default();
        self.walk(end, |r| last = r);
        last
    }

    /// The `/proc/pressure/memory` (or `memory.pressure`) lines after every
    /// aggregation period, as `psi_avgs_work` updates them every 2 s: a time
    /// series of (end of period in s, report).
    #[cfg_attr(not(test), allow(dead_code))] // only the PSI tests read the series
    pub(crate) fn series(&self, end: u64) -> Vec<(f64, PsiReport)> {
        let mut out = Vec::new();
        let mut p = 0u64;
        self.walk(end, |r| {
            p += 1;
            out.push(((p * PSI_PERIOD_NS) as f64 / 1e9, r));
        });
        if let Some(last) = out.last_mut() {
            last.0 = end.saturating_sub(self.start) as f64 / 1e9;
        }
        out
    }

    /// Runs the aggregation period by period, handing the report after each.
    fn walk(&self, end: u64, mut f: impl FnMut(PsiReport)) {
        let end = end.saturating_sub(self.start);
        let nper = end.div_ceil(PSI_PERIOD_NS).max(self.periods.len() as u64) as usize;
        let mut total = 0u64;
        let mut avgs = [0u64; 3];
        let to_pct = |v: u64| ((v * 100 / FIXED_1) as f64) / 100.0;
        if nper == 0 {
            f(PsiReport::default());
        }
        for p in 0..nper {
            let [w, k] = self.periods.get(p).copied().unwrap_or([0, 0]);
            let pstart = p as u64 * PSI_PERIOD_NS;
            let len = end.saturating_sub(pstart).min(PSI_PERIOD_NS).max(w);
            let nonidle = len + k;
            let stall = if nonidle == 0 {
                0
            } else {
                ((w as u128 * len as u128 + k as u128 * k as u128) / nonidle as u128) as u64
            };
            total += stall;
            // calc_avgs(): sample as a fixed-point percentage of the period.
            let pct = (stall.min(len) * 100).checked_div(len).unwrap_or(0) * FIXED_1;
            for (a, e) in avgs.iter_mut().zip([EXP_10S, EXP_60S, EXP_300S]) {
                *a = calc_load(*a, e, pct);
            }
            let line = PsiLine {
                avg10: to_pct(avgs[0]),
                avg60: to_pct(avgs[1]),
                avg300: to_pct(avgs[2]),
                total: total / 1000,
            };
            // Every stalled CPU is FULL as well as SOME in this two-CPU model
            // (see the module doc).
            f(PsiReport {
                some: line.clone(),
                full: line,
            });
        }
    }
}

/// `calc_load()` (include/linux/sched/loadavg.h): fixed-point exponential decay.
fn calc_load(load: u64, exp: u64, active: u64) -> u64 {
    let mut newload = load * exp + active * (FIXED_1 - exp);
    if active >= load {
        newload += FIXED_1 - 1;
    }
    newload / FIXED_1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_stall_alone_counts_fully() {
        let mut p = Psi::default();
        p.stall(PsiCpu::Workload, 1_000_000_000, 1_500_000_000);
        let r = p.report(2_000_000_000);
        assert_eq!(r.some.total, 500_000);
        // one period of 25 % stall: avg10 = 25 % × (1 − 1677/2048) ≈ 4.5 %
        assert!((r.some.avg10 - 4.53).abs() < 0.1, "{}", r.some.avg10);
    }

    #[test]
    fn kswapd_stall_is_weighted_by_its_nonidle_time() {
        let mut p = Psi::default();
        // kswapd busy 1 s of a 2 s period, workload never stalled:
        // (0·2 + 1·1) / (2 + 1) = 1/3 s
        p.stall(PsiCpu::Kswapd, 0, 1_000_000_000);
        let r = p.report(2_000_000_000);
        assert_eq!(r.some.total, 333_333);
    }

    #[test]
    fn series_has_one_report_per_period_ending_with_the_final_one() {
        let mut p = Psi::default();
        p.stall(PsiCpu::Workload, 0, 1_000_000_000);
        p.stall(PsiCpu::Workload, 4_000_000_000, 5_000_000_000);
        let s = p.series(5_000_000_000);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].0, 2.0);
        assert_eq!(s[2].0, 5.0);
        assert_eq!(s[0].1.some.total, 1_000_000);
        assert_eq!(s[1].1.some.total, 1_000_000);
        assert!(
            s[1].1.some.avg10 < s[0].1.some.avg10,
            "decays in a quiet period"
        );
        assert_eq!(s[2].1, p.report(5_000_000_000));
    }

    #[test]
    fn intervals_split_across_periods() {
        let mut p = Psi::default();
        p.stall(PsiCpu::Workload, 1_000_000_000, 5_000_000_000);
        assert_eq!(
            p.periods,
            vec![[1_000_000_000, 0], [2_000_000_000, 0], [1_000_000_000, 0]]
        );
        assert_eq!(p.report(6_000_000_000).some.total, 4_000_000);
    }
}
