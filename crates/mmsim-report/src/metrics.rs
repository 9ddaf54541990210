//! The metrics a comparison takes from each run: their names, meanings, table formats
//! and values.
//!
//! Metric names are the kernel's `/proc/vmstat` names where one exists (`pswpout`,
//! `pgscan_kswapd`, `workingset_refault_file`, …); derived metrics follow mmtests'
//! compare-kernels vmstat section (minor faults, kswapd and direct reclaim efficiency).
//!
//! Scenarios with memory cgroups besides the top group `/` add per-group metrics,
//! `memcg:<path>:<name>` (`memcg:/a:pgmajfault`, [`MEMCG_METRICS`]), for the groups that
//! every configuration has; the top group's counters are the machine's (above).
//! Scenarios of several workloads add each workload's end time,
//! `workload:<name>:end_s`. Runs whose machine runs DAMON add its metrics
//! (`damon:kdamond_cpu_s`, `damon:kdamond_cpu_pct`, and each scheme's
//! `stats/` as `damon:scheme<i>:<stat>`, schemes numbered over every context
//! in order).

use std::collections::BTreeMap;

use mmsim_core::memcg::MemcgReport;
use mmsim_workloads::ScenarioResult;

/// How a metric's values are printed in the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A count: no decimals (means and deviations: 2).
    Count,
    /// A value printed with this many decimals.
    Decimals(usize),
}

/// One row of the comparison.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    /// Its name: the vmstat counter's, or a descriptive one for derived values.
    pub name: &'static str,
    /// What it is, with its unit.
    pub about: &'static str,
    /// How the table prints it.
    pub format: Format,
    /// Its value in a run; `None` when undefined (an efficiency with nothing scanned).
    pub value: fn(&ScenarioResult) -> Option<f64>,
}

/// `num / den` in percent, `None` if `den` is 0.
fn percent(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 * 100.0 / den as f64)
}

macro_rules! vmstat {
    ($name:ident, $about:literal) => {
        Metric {
            name: stringify!($name),
            about: $about,
            format: Format::Count,
            value: |r| Some(r.result.vmstat.$name as f64),
        }
    };
}

/// A data TLB count of `mmsim_core::TlbReport`, named as its field.
macro_rules! tlb {
    ($name:ident, $about:literal) => {
        Metric {
            name: stringify!($name),
            about: $about,
            format: Format::Count,
            value: |r| r.result.tlb.map(|t| t.$name as f64),
        }
    };
}

/// The metrics, in table order.
pub const METRICS: &[Metric] = &[
    Metric {
        name: "accesses",
        about: "accesses measured",
        format: Format::Count,
        value: |r| Some(r.result.access.accesses as f64),
    },
    Metric {
        name: "misses",
        about: "accesses that found the page not resident",
        format: Format::Count,
        value: |r| Some(r.result.access.misses as f64),
    },
    Metric {
        name: "miss_ratio",
        about: "misses / accesses",
        format: Format::Decimals(6),
        value: |r| Some(r.result.miss_ratio),
    },
    Metric {
        name: "minor_faults",
        about: "pgfault - pgmajfault (mmtests: Minor Faults)",
        format: Format::Count,
        value: |r| {
            let v = &r.result.vmstat;
            Some(v.pgfault.saturating_sub(v.pgmajfault) as f64)
        },
    },
    vmstat!(pgmajfault, "major faults (IO needed)"),
    vmstat!(pswpin, "pages swapped in"),
    vmstat!(pswpout, "pages swapped out"),
    vmstat!(pgscan_anon, "anon pages scanned (all reclaim)"),
    vmstat!(pgscan_file, "file pages scanned (all reclaim)"),
    vmstat!(pgsteal_anon, "anon pages reclaimed (all reclaim)"),
    vmstat!(pgsteal_file, "file pages reclaimed (all reclaim)"),
    vmstat!(pgscan_kswapd, "pages scanned by kswapd"),
    vmstat!(pgscan_direct, "pages scanned by direct reclaim"),
    vmstat!(pgsteal_kswapd, "pages reclaimed by kswapd"),
    vmstat!(pgsteal_direct, "pages reclaimed by direct reclaim"),
    Metric {
        name: "kswapd_efficiency_pct",
        about: "pgsteal_kswapd / pgscan_kswapd, % (mmtests: Kswapd efficiency)",
        format: Format::Decimals(2),
        value: |r| {
            percent(
                r.result.vmstat.pgsteal_kswapd,
                r.result.vmstat.pgscan_kswapd,
            )
        },
    },
    Metric {
        name: "direct_efficiency_pct",
        about: "pgsteal_direct / pgscan_direct, % (mmtests: Direct efficiency)",
        format: Format::Decimals(2),
        value: |r| {
            percent(
                r.result.vmstat.pgsteal_direct,
                r.result.vmstat.pgscan_direct,
            )
        },
    },
    vmstat!(nr_vmscan_write, "pages written by reclaim"),
    vmstat!(allocstall_normal, "direct reclaim entries"),
    vmstat!(workingset_refault_anon, "anon refaults that found a shadow"),
    vmstat!(workingset_refault_file, "file refaults that found a shadow"),
    vmstat!(workingset_activate_anon, "anon refaults activated"),
    vmstat!(workingset_activate_file, "file refaults activated"),
    vmstat!(
        workingset_restore_anon,
        "activated anon refaults of workingset pages"
    ),
    vmstat!(
        workingset_restore_file,
        "activated file refaults of workingset pages"
    ),
    vmstat!(oom_kill, "OOM kills"),
    Metric {
        name: "psi_some_total_us",
        about: "/proc/pressure/memory some total=, µs",
        format: Format::Count,
        value: |r| Some(r.result.psi.some.total as f64),
    },
    Metric {
        name: "psi_full_total_us",
        about: "/proc/pressure/memory full total=, µs",
        format: Format::Count,
        value: |r| Some(r.result.psi.full.total as f64),
    },
    Metric {
        name: "psi_some_avg10",
        about: "/proc/pressure/memory some avg10= at the end, %",
        format: Format::Decimals(2),
        value: |r| Some(r.result.psi.some.avg10),
    },
    Metric {
        name: "psi_full_avg10",
        about: "/proc/pressure/memory full avg10= at the end, %",
        format: Format::Decimals(2),
        value: |r| Some(r.result.psi.full.avg10),
    },
    Metric {
        name: "kswapd_cpu_s",
        about: "kswapd CPU time, simulated seconds",
        format: Format::Decimals(4),
        value: |r| Some(r.result.kswapd_cpu_s),
    },
    Metric {
        name: "kswapd_rmap_pct",
        about: "share of kswapd CPU in reverse-map walks (page_vma_mapped_walk), %",
        format: Format::Decimals(2),
        value: |r| {
            let p = &r.result.kswapd_profile;
            percent(p.rmap_ns, p.total_ns())
        },
    },
    Metric {
        name: "kswapd_pt_walk_pct",
        about: "share of kswapd CPU in MGLRU page-table walks and look-around, %",
        format: Format::Decimals(2),
        value: |r| {
            let p = &r.result.kswapd_profile;
            percent(p.pt_walk_ns, p.total_ns())
        },
    },
    Metric {
        name: "kswapd_rmap_walks",
        about: "page_vma_mapped_walk calls by kswapd",
        format: Format::Count,
        value: |r| Some(r.result.kswapd_profile.rmap_walks as f64),
    },
    Metric {
        name: "kswapd_ptes_walked",
        about: "PTEs examined by kswapd's page-table walks and look-around",
        format: Format::Count,
        value: |r| Some(r.result.kswapd_profile.ptes_walked as f64),
    },
    Metric {
        name: "direct_reclaim_cpu_s",
        about: "CPU of reclaim in the workload's tasks (direct and memcg limit), summed over its CPUs, seconds",
        format: Format::Decimals(4),
        value: |r| Some(r.result.direct_profile.total_ns() as f64 / 1e9),
    },
    Metric {
        name: "direct_rmap_walks",
        about: "page_vma_mapped_walk calls by reclaim in the workload's tasks",
        format: Format::Count,
        value: |r| Some(r.result.direct_profile.rmap_walks as f64),
    },
    Metric {
        name: "lru_lock_wait_s",
        about: "spin on contended lru_locks by the workload's tasks, summed over its CPUs, seconds (machine.cpus > 1)",
        format: Format::Decimals(4),
        value: |r| Some(r.result.lru_lock_wait_s),
    },
    Metric {
        name: "lru_lock_busy_pct",
        about: "the busiest lru_lock's held time over the run time, % (machine.cpus > 1)",
        format: Format::Decimals(2),
        value: |r| Some(r.result.lru_lock_busy_pct),
    },
    Metric {
        name: "reclaim_stall_s",
        about: "time the workload spent in direct or memcg reclaim (summed over its CPUs), seconds",
        format: Format::Decimals(4),
        value: |r| Some(r.result.reclaim_stall_s),
    },
    Metric {
        name: "io_wait_s",
        about: "time the workload waited for IO (summed over its CPUs), seconds",
        format: Format::Decimals(4),
        value: |r| Some(r.result.io_wait_s),
    },
    Metric {
        name: "runtime_s",
        about: "simulated wall time of the measured part, seconds",
        format: Format::Decimals(4),
        value: |r| Some(r.result.runtime_s),
    },
    Metric {
        name: "throughput",
        about: "accesses per simulated second",
        format: Format::Decimals(1),
        value: |r| Some(r.result.throughput),
    },
];

/// Multi-size THP's metrics (`[machine.thp]`): in every run's values, and in a
/// comparison's table when some run has large folios on (after the others, so that
/// older reports keep their rows).
pub const THP_METRICS: &[Metric] = &[
    Metric {
        name: "mem_used_pages",
        about: "pages charged to the root group at the end (memory.current / 4 KiB: resident \
                anon and page cache; seed 003's mem-used)",
        format: Format::Count,
        value: |r| Some(r.result.memcg_usage_pages as f64),
    },
    Metric {
        name: "anon_thp_pages",
        about: "base pages in large anonymous folios at the end (memory.stat anon_thp / 4 KiB)",
        format: Format::Count,
        value: |r| Some(r.result.anon_thp_pages as f64),
    },
];

/// The data TLB's (`[machine.tlb]`, `mmsim_core::TlbReport`), present in a
/// run's metrics and a comparison only when the TLB model is on.
pub const TLB_METRICS: &[Metric] = &[
    tlb!(
        dtlb_loads,
        "loads looked up in the data TLB (perf dTLB-loads)"
    ),
    tlb!(
        dtlb_load_misses,
        "loads that walked the page table (perf dTLB-load-misses as Intel maps it: \
                STLB misses)"
    ),
    tlb!(stlb_hits, "L1 dTLB misses that hit the STLB"),
    Metric {
        name: "tlb_miss_s",
        about: "time of STLB hits and page walks, seconds (part of runtime_s)",
        format: Format::Decimals(4),
        value: |r| r.result.tlb.map(|t| t.tlb_miss_s),
    },
    tlb!(
        nr_tlb_local_flush_all,
        "full TLB flushes on the flushing CPU (CONFIG_DEBUG_TLBFLUSH vmstat)"
    ),
    tlb!(
        nr_tlb_local_flush_one,
        "pages flushed one by one on the flushing CPU (CONFIG_DEBUG_TLBFLUSH vmstat)"
    ),
    tlb!(
        nr_tlb_remote_flush,
        "TLB flushes sent to other CPUs (CONFIG_DEBUG_TLBFLUSH vmstat)"
    ),
];

/// A metric of one memory cgroup: `memcg:<path>:<name>` in the comparison.
#[derive(Clone, Copy, Debug)]
pub struct MemcgMetric {
    /// Its name after the group's path: the `memory.stat` or `memory.events` name
    /// (`events_` before those of `memory.events`).
    pub name: &'static str,
    /// What it is, with its unit.
    pub about: &'static str,
    /// How the table prints it.
    pub format: Format,
    /// Its value in a group's report (hierarchical: the group and its descendants).
    pub value: fn(&MemcgReport) -> f64,
}

/// A per-group count: `name`, its meaning and the field of the group's
/// `MemcgReport` it reads (`events.pgfault`).
macro_rules! memcg_count {
    ($name:literal, $about:literal, $($field:ident).+) => {
        MemcgMetric {
            name: $name,
            about: $about,
            format: Format::Count,
            value: |m| m.$($field).+ as f64,
        }
    };
}

/// The per-group metrics, in table order.
pub const MEMCG_METRICS: &[MemcgMetric] = &[
    memcg_count!("current", "memory.current at the end, pages", current),
    memcg_count!(
        "swap_current",
        "memory.swap.current at the end, pages",
        swap_current
    ),
    memcg_count!("pgfault", "memory.stat pgfault", events.pgfault),
    memcg_count!("pgmajfault", "memory.stat pgmajfault", events.pgmajfault),
    memcg_count!(
        "pgscan",
        "memory.stat pgscan (kswapd + direct and limit reclaim)",
        pgscan
    ),
    memcg_count!(
        "pgsteal",
        "memory.stat pgsteal (kswapd + direct and limit reclaim)",
        pgsteal
    ),
    memcg_count!(
        "workingset_refault_anon",
        "memory.stat workingset_refault_anon",
        events.workingset_refault_anon
    ),
    memcg_count!(
        "workingset_refault_file",
        "memory.stat workingset_refault_file",
        events.workingset_refault_file
    ),
    memcg_count!(
        "events_max",
        "memory.events max: charges that hit memory.max",
        events_max
    ),
    memcg_count!(
        "events_high",
        "memory.events high: reclaims for being over memory.high",
        events.high
    ),
    memcg_count!(
        "events_low",
        "memory.events low: reclaims below memory.low",
        events.low
    ),
    memcg_count!("events_oom", "memory.events oom", events.oom),
    memcg_count!("events_oom_kill", "memory.events oom_kill", events.oom_kill),
    memcg_count!(
        "events_swap_max",
        "memory.swap.events max: swap-outs refused at memory.swap.max",
        events.swap_max
    ),
    MemcgMetric {
        name: "high_throttle_s",
        about: "time the group's tasks were throttled over memory.high, seconds",
        format: Format::Decimals(4),
        value: |m| m.events.high_throttle_ns as f64 / 1e9,
    },
];

/// The prefix of the per-group metrics.
pub const MEMCG_PREFIX: &str = "memcg:";

/// The name of per-group metric `m` of the group at `path`: `memcg:/a:pgmajfault`.
pub fn memcg_metric_name(path: &str, m: &MemcgMetric) -> String {
    format!("{MEMCG_PREFIX}{path}:{}", m.name)
}

/// The group path and the per-group metric of a metric name, if it is one.
pub(crate) fn split_memcg_name(name: &str) -> Option<(&str, &'static MemcgMetric)> {
    let rest = name.strip_prefix(MEMCG_PREFIX)?;
    let (path, metric) = rest.rsplit_once(':')?;
    MEMCG_METRICS
        .iter()
        .find(|m| m.name == metric)
        .map(|m| (path, m))
}

/// The prefix of the per-workload metrics.
pub const WORKLOAD_PREFIX: &str = "workload:";

/// The per-workload metric: when the workload's last event had run, seconds.
pub const WORKLOAD_END: &str = "end_s";

/// The name of workload `name`'s end-time metric: `workload:stream:end_s`.
pub fn workload_metric_name(name: &str) -> String {
    format!("{WORKLOAD_PREFIX}{name}:{WORKLOAD_END}")
}

/// The prefix of DAMON's metrics.
pub const DAMON_PREFIX: &str = "damon:";

/// DAMON's machine-wide metrics: name and meaning.
pub const DAMON_METRICS: &[(&str, &str)] = &[
    (
        "damon:kdamond_cpu_s",
        "CPU time of every kdamond, simulated seconds",
    ),
    (
        "damon:kdamond_cpu_pct",
        "kdamond CPU time over the measured run time, % of one CPU",
    ),
];

/// Each DAMOS scheme's stats, as `damon:scheme<i>:<stat>`: name and meaning.
pub const DAMOS_STATS: &[(&str, &str)] = &[
    ("nr_tried", "regions the action was tried on"),
    ("sz_tried", "bytes of the regions tried"),
    ("nr_applied", "regions the action did something to"),
    ("sz_applied", "bytes the action applied to"),
    (
        "sz_ops_filter_passed",
        "bytes that passed the ops-layer filters",
    ),
    ("qt_exceeds", "quota windows that ended exhausted"),
];

/// DAMON's metrics of a run, in table order (none without DAMON): name,
/// meaning, value.
pub fn damon_values(r: &ScenarioResult) -> Vec<(String, String, Option<f64>)> {
    damon_values_of(&r.result)
}

/// [`damon_values`] of a [`mmsim_core::RunResult`].
pub fn damon_values_of(r: &mmsim_core::RunResult) -> Vec<(String, String, Option<f64>)> {
    let r = ScenarioLike { result: r };
    let Some(d) = &r.result.damon else {
        return Vec::new();
    };
    let mut out = vec![
        (
            DAMON_METRICS[0].0.to_string(),
            DAMON_METRICS[0].1.to_string(),
            Some(d.kdamond_cpu_s),
        ),
        (
            DAMON_METRICS[1].0.to_string(),
            DAMON_METRICS[1].1.to_string(),
            (r.result.runtime_s > 0.0).then(|| d.kdamond_cpu_s * 100.0 / r.result.runtime_s),
        ),
    ];
    let schemes = d
        .contexts
        .iter()
        .flat_map(|c| c.schemes.iter().map(move |s| (c, s)));
    for (i, (c, s)) in schemes.enumerate() {
        let st = &s.stat;
        let vals = [
            st.nr_tried,
            st.sz_tried,
            st.nr_applied,
            st.sz_applied,
            st.sz_ops_filter_passed,
            st.qt_exceeds,
        ];
        for ((stat, about), v) in DAMOS_STATS.iter().zip(vals) {
            out.push((
                format!("{DAMON_PREFIX}scheme{i}:{stat}"),
                format!("{} scheme {i} ({}): {about}", c.name, s.action),
                Some(v as f64),
            ));
        }
    }
    out
}

/// The part of a result [`damon_values`] reads.
struct ScenarioLike<'a> {
    result: &'a mmsim_core::RunResult,
}

/// Whether `name` is a DAMON metric of a machine with `nr_schemes` schemes.
pub fn is_damon_metric(name: &str, nr_schemes: usize) -> bool {
    if DAMON_METRICS.iter().any(|(n, _)| *n == name) {
        return true;
    }
    name.strip_prefix(DAMON_PREFIX)
        .and_then(|r| r.strip_prefix("scheme"))
        .and_then(|r| r.split_once(':'))
        .is_some_and(|(i, stat)| {
            i.parse::<usize>().is_ok_and(|i| i < nr_schemes)
                && DAMOS_STATS.iter().any(|(s, _)| *s == stat)
        })
}

/// How the table prints metric `name` (a metric of [`METRICS`] or a per-group one).
pub fn format_of(name: &str) -> Format {
    if name.starts_with(WORKLOAD_PREFIX) {
        return Format::Decimals(4);
    }
    if name == "damon:kdamond_cpu_s" || name == "damon:kdamond_cpu_pct" {
        return Format::Decimals(4);
    }
    METRICS
        .iter()
        .chain(THP_METRICS)
        .chain(TLB_METRICS)
        .find(|m| m.name == name)
        .map(|m| m.format)
        .or_else(|| split_memcg_name(name).map(|(_, m)| m.format))
        .unwrap_or(Format::Count)
}

/// Every metric's value in `r`, by name: the [`METRICS`], and the [`MEMCG_METRICS`] of
/// every group besides `/`; a value that is not finite counts as undefined (JSON has no
/// NaN, and the report must read back as written).
pub fn values(r: &ScenarioResult) -> BTreeMap<String, Option<f64>> {
    let mut out: BTreeMap<String, Option<f64>> = METRICS
        .iter()
        .chain(THP_METRICS)
        .map(|m| (m.name.to_string(), (m.value)(r).filter(|v| v.is_finite())))
        .collect();
    for (path, g) in r.result.memcg.iter().filter(|(p, _)| p.as_str() != "/") {
        for m in MEMCG_METRICS {
            let v = Some((m.value)(g)).filter(|v| v.is_finite());
            out.insert(memcg_metric_name(path, m), v);
        }
    }
    if r.workloads.len() > 1 {
        for w in &r.workloads {
            let v = w.end_ns.map(|ns| ns as f64 / 1e9);
            out.insert(workload_metric_name(&w.name), v);
        }
    }
    for (name, _, v) in damon_values(r) {
        out.insert(name, v.filter(|v| v.is_finite()));
    }
    if r.result.tlb.is_some() {
        for m in TLB_METRICS {
            out.insert(m.name.to_string(), (m.value)(r).filter(|v| v.is_finite()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_are_unique() {
        let mut names: Vec<_> = METRICS.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), METRICS.len());
        let mut names: Vec<_> = MEMCG_METRICS.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), MEMCG_METRICS.len());
    }

    #[test]
    fn per_group_metric_names_split_back() {
        let m = &MEMCG_METRICS[3];
        let name = memcg_metric_name("/a/b", m);
        assert_eq!(name, "memcg:/a/b:pgmajfault");
        let (path, back) = split_memcg_name(&name).unwrap();
        assert_eq!((path, back.name), ("/a/b", "pgmajfault"));
        assert!(split_memcg_name("memcg:/a:nope").is_none());
        assert!(split_memcg_name("pgmajfault").is_none());
        assert_eq!(format_of("memcg:/x:high_throttle_s"), Format::Decimals(4));
        assert_eq!(format_of("miss_ratio"), Format::Decimals(6));
        assert_eq!(format_of("memcg:/x:current"), Format::Count);
    }
}
