//! What a replay of recorded kernel runs takes from the machine they ran on, for the
//! 6.12+ memcg statistics flush (`mmsim_core`'s `memcg_stats`): how often something
//! read the group's `memory.stat` (each read flushes it past the update threshold), and
//! how many CPUs that threshold counted (`MEMCG_CHARGE_BATCH × num_online_cpus()`,
//! v6.12 and v6.18 `memcg_vmstats_needs_flush`).

use super::counters;
use super::CaseResult;

/// How often the case's kernel runs read the group's `memory.stat`, ms of their wall
/// clock (0: never): the period capture-app measured, else the suite's
/// `stats_read_ms`, else capture-app's nominal period.
pub fn stats_read_period(r: &CaseResult) -> f64 {
    let runs = &r.kernel.runs;
    match (
        counters::measured_stats_read_ms_of(runs),
        r.case.stats_read_ms,
    ) {
        (Some(ms), _) => ms,
        (None, 0) => f64::from(counters::stats_read_ms_of(runs)),
        (None, ms) => f64::from(ms),
    }
}

/// The update threshold's CPUs for the replay (`machine.policy.memcg_stats_cpus`):
/// what the runs say (`online_cpus`), else the suite's `kernel_cpus` (for runs
/// recorded before capture recorded it), else 0 (the scenario's `cpus`: nothing
/// recorded says otherwise, as for the guest runs recorded before guest-run.sh
/// recorded `online_cpus`, whose qemu has one vCPU unless a DAMON case asks for
/// more). The replay's `cpus` (its clock, its lock contention)
/// stays the scenario's.
pub fn kernel_cpus(r: &CaseResult) -> u32 {
    threshold_cpus(counters::online_cpus_of(&r.kernel.runs), r.case.kernel_cpus)
}

/// [`kernel_cpus`] from the runs' recorded count (0: none) and the suite's.
fn threshold_cpus(recorded: u32, suite: u32) -> u32 {
    match recorded {
        0 => suite,
        n => n,
    }
}

/// A replay's period for a kernel run of `kernel_wall_s` seconds that mmsim simulates
/// in `runtime_s`: `FLUSH_TIME` (2 s, `period_ms` 0) or a `memory.stat` reader's
/// `period_ms`, in units of the workload's progress, 1 ms to an hour. A reader slower
/// than the flusher is not capped at 2 s: it still flushes its group past the update
/// threshold between the flusher's ticks, so it is replayed at its own period.
pub fn replay_flush_ms(period_ms: f64, runtime_s: f64, kernel_wall_s: f64) -> u64 {
    let ms = if period_ms > 0.0 { period_ms } else { 2000.0 };
    ((ms * runtime_s / kernel_wall_s).round() as u64).clamp(1, 3_600_000)
}

/// Whether kernel `release`'s kswapd sets PGDAT_DIRTY only with a dirty page counted
/// (`machine.policy.pgdat_dirty_guard`): mainline from 6.13 ("mm: fix shrink
/// nr.unqueued_dirty counter issue"); 6.12 stable has the bare equality (6.12.118's
/// `shrink_node()`), and so do 6.1 and the kernels before.
pub fn pgdat_dirty_guard_of(release: &str) -> bool {
    super::release_version(release) >= (6, 13, 0)
}

#[cfg(test)]
mod tests {
    use super::{pgdat_dirty_guard_of, threshold_cpus};

    /// The guard is 6.13's: the 6.1 and 6.12 guests test the bare equality, the
    /// 6.18 host the guarded one.
    #[test]
    fn the_pgdat_dirty_guard_follows_the_release() {
        for (release, guard) in [
            ("6.1.0-50-cloud-amd64", false),
            ("6.12.107+deb13-cloud-amd64", false),
            ("6.12.118", false),
            ("6.13", true),
            ("6.18.44-fc-v669", true),
            ("7.0", true),
        ] {
            assert_eq!(pgdat_dirty_guard_of(release), guard, "{release}");
        }
    }

    /// A run that recorded its CPUs wins over the suite's fallback.
    #[test]
    fn the_recorded_cpu_count_comes_before_the_suites() {
        assert_eq!(threshold_cpus(4, 2), 4);
        assert_eq!(threshold_cpus(0, 2), 2);
        assert_eq!(threshold_cpus(0, 0), 0);
    }
}
