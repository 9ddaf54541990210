//! The compared counters: how each is read from a kernel run and from mmsim's result.

use std::collections::BTreeMap;

use mmsim_workloads::ScenarioResult;
use serde::{Deserialize, Serialize};

/// What one kernel run measured, as raw name → value maps.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelRun {
    /// The experiment group's `memory.stat` (counters: after − before; on v1 the
    /// group is new, so these are its totals). Gauges (sizes) are the end values.
    pub memcg: BTreeMap<String, u64>,
    /// Per-memcg vm events and node-stat deltas from the `memcg:*` tracepoints
    /// (bpftrace; empty when not traced), named as in /proc/vmstat.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub memcg_events: BTreeMap<String, i64>,
    /// /proc/vmstat deltas over the run (machine-wide; only the swap counters are used,
    /// which only the experiment's own swap device can move).
    pub vmstat: BTreeMap<String, u64>,
    /// The probe's report: wall time, getrusage deltas of the run.
    pub probe: BTreeMap<String, f64>,
    /// DAMON cases: the stats read at the end of the run (guest): scheme N's
    /// `damos<N>_nr_tried`, `_sz_tried`, `_nr_applied`, `_sz_applied`, `_qt_exceeds`,
    /// `_nr_tried_regions` and `_tried_regions_bytes` (sysfs `schemes/<N>/stats/` and
    /// `tried_regions/`), DAMON_LRU_SORT's stats parameters as `lru_sort_<name>`, and
    /// DAMON_RECLAIM's as `reclaim_<name>`; and `memcg_anon_hold` / `memcg_swap_hold`:
    /// the group's anon bytes and `memory.swap.current` while the probe holds its memory
    /// after the last event, `memfree_kb_hold` the guest's MemFree then.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub damon: BTreeMap<String, u64>,
    /// mTHP cases (guest): `hugepages-<size>kB/stats/<stat>` as `<size>/<stat>` (e.g.
    /// `64kB/anon_fault_alloc`), deltas from right before the probe's first event to
    /// right after its last (gauges such as `nr_anon`: the value then), and `rss_kb` /
    /// `anon_huge_kb`: the workload mapping's `Rss` and `AnonHugePages` in smaps then.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub thp: BTreeMap<String, u64>,
    /// `memory.pressure` totals of the run's cgroup2 group, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_some_us: Option<u64>,
    /// Same, `full`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_full_us: Option<u64>,
    /// Cases with several groups (`groups` in the suite): each group's `memory.stat`
    /// counters at the end of the run, by group path.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, BTreeMap<String, u64>>,
    /// Cases with a `split_at` workload: the counters at the runner's last sample at or
    /// before that workload's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_split: Option<SplitSample>,
    /// Each workload's end, seconds after the workloads started, by workload name
    /// (several-process cases; `end_ratio`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ends_s: BTreeMap<String, f64>,
}

/// The counters of a kernel run at the split workload's end (see [`KernelRun::at_split`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SplitSample {
    /// The sample's time, seconds after the workloads started.
    pub t_s: f64,
    /// Each group's `memory.stat` counters then (the groups the runner sampled).
    #[serde(default)]
    pub groups: BTreeMap<String, BTreeMap<String, u64>>,
    /// /proc/vmstat deltas from the run's start to then.
    #[serde(default)]
    pub vmstat: BTreeMap<String, u64>,
}

/// The period capture-app measured between its reads of the group's `memory.stat`, ms
/// (`memory_stat_read_mean_ms` of its probe report: each read takes time, and the loop
/// sleeps 0.2 s after it), the mean over the runs that have it; None when none does.
pub fn measured_stats_read_ms_of(runs: &[KernelRun]) -> Option<f64> {
    let v: Vec<f64> = (runs.iter())
        .filter_map(|k| k.probe.get("memory_stat_read_mean_ms").copied())
        .filter(|ms| *ms > 0.0)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// How often capture-app meant to read the group's `memory.stat`, ms (its nominal
/// `memory_stat_read_ms`), the shortest over the runs; 0 when no run says (runs
/// recorded before capture-app wrote it, and probe runs).
pub fn stats_read_ms_of(runs: &[KernelRun]) -> u32 {
    let ms = runs
        .iter()
        .filter_map(|k| k.probe.get("memory_stat_read_ms"));
    ms.map(|&v| v.round().clamp(0.0, f64::from(u32::MAX)) as u32)
        .min()
        .unwrap_or(0)
}

/// The online CPUs of the machine the kernel runs ran on (`online_cpus` of the probe
/// report, which capture-app and the host runner write; the fewest over the runs); 0
/// when no run says (runs recorded before, and guest runs).
pub fn online_cpus_of(runs: &[KernelRun]) -> u32 {
    let n = runs.iter().filter_map(|k| k.probe.get("online_cpus"));
    n.map(|&v| v.round().clamp(0.0, 4096.0) as u32)
        .min()
        .unwrap_or(0)
}

/// Mean, min, max and spread (the largest relative distance from the mean) of
/// the kernel runs' values of one counter.
pub fn stats(v: &[f64]) -> (f64, f64, f64, f64) {
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<f64>() / n;
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let spread = if mean.abs() > 0.0 {
        v.iter()
            .map(|x| ((x - mean) / mean).abs())
            .fold(0.0, f64::max)
    } else {
        0.0
    };
    (mean, min, max, spread)
}

/// A compared counter.
pub struct Counter {
    /// Name in tables, the suite and the JSON.
    pub name: &'static str,
    /// What it is (for VALIDATION.md and `--help`).
    pub what: &'static str,
    /// Whether it depends on timing (never enforced: the simulator's clock is a model).
    pub timing: bool,
    kernel: fn(&KernelRun) -> Option<f64>,
    sim: fn(&ScenarioResult, &str) -> Option<f64>,
}

impl Counter {
    /// The kernel run's value, if that run measured it.
    pub fn kernel(&self, r: &KernelRun) -> Option<f64> {
        (self.kernel)(r)
    }
    /// mmsim's value for the workload group `group`.
    pub fn sim(&self, r: &ScenarioResult, group: &str) -> Option<f64> {
        (self.sim)(r, group)
    }
}

fn memcg(r: &KernelRun, k: &str) -> Option<f64> {
    r.memcg.get(k).map(|&v| v as f64)
}

/// A per-memcg event: the cgroup2 `memory.stat` when it has it (guest), else the
/// tracepoint capture (host v1).
fn memcg_event(r: &KernelRun, v2: &str, events: &[&str]) -> Option<f64> {
    if let Some(v) = memcg(r, v2) {
        return Some(v);
    }
    if r.memcg_events.is_empty() {
        return None;
    }
    Some(
        events
            .iter()
            .map(|e| r.memcg_events.get(*e).copied().unwrap_or(0) as f64)
            .sum(),
    )
}

fn group<'a>(r: &'a ScenarioResult, g: &str) -> Option<&'a mmsim_core::MemcgReport> {
    r.result.memcg.get(g)
}

fn damon_kernel(r: &KernelRun, k: &str) -> Option<f64> {
    r.damon.get(k).map(|&v| v as f64)
}

/// Scheme 0 of the first sysfs kdamond's context in mmsim's DAMON report.
fn damos0(r: &ScenarioResult) -> Option<&mmsim_core::damon::DamosSchemeReport> {
    r.result
        .damon
        .as_ref()?
        .contexts
        .iter()
        .find(|c| c.name.starts_with("kdamond"))?
        .schemes
        .first()
}

fn thp_kernel(r: &KernelRun, k: &str) -> Option<f64> {
    r.thp.get(k).map(|&v| v as f64)
}

/// mmsim's `hugepages-<size>kB/stats/` of `size` (0 when no size was on: the run has
/// no per-size report then, and nothing was allocated at any size).
fn mthp_sim(r: &ScenarioResult, size: &str) -> mmsim_core::MthpStats {
    r.result
        .mthp
        .iter()
        .find(|m| m.size == size)
        .map(|m| m.stats)
        .unwrap_or_default()
}

/// A DAMON module's stats parameter (DAMON_LRU_SORT's or DAMON_RECLAIM's) in mmsim's
/// DAMON report.
fn module_sim(r: &ScenarioResult, k: &str) -> Option<f64> {
    r.result
        .damon
        .as_ref()?
        .module_stats
        .get(k)
        .map(|&v| v as f64)
}

/// Table rows of the common shapes, so that each reads as what it compares:
/// - `memcg F`: `memory.stat` key `F` on the kernel, the group's `events.F` in mmsim;
/// - `memcg_event F`: the same, read from the memcg tracepoints when the kernel's
///   `memory.stat` lacks it (v1);
/// - `damos0 F`: DAMOS scheme 0's `stats/F` (kernel key `damos0_F`), named `damos_F`;
/// - `module NAME, WHAT, M, P`: DAMON module `M`'s stats parameter `P` (kernel key `M_P`);
/// - `mthp64 NAME, WHAT, S`: `hugepages-64kB/stats/S` on both sides.
macro_rules! counter {
    (memcg $field:ident, $what:expr) => {
        Counter {
            name: stringify!($field),
            what: $what,
            timing: false,
            kernel: |r| memcg(r, stringify!($field)),
            sim: |r, g| group(r, g).map(|m| m.events.$field as f64),
        }
    };
    (memcg_event $field:ident, $what:expr) => {
        Counter {
            name: stringify!($field),
            what: $what,
            timing: false,
            kernel: |r| memcg_event(r, stringify!($field), &[stringify!($field)]),
            sim: |r, g| group(r, g).map(|m| m.events.$field as f64),
        }
    };
    (damos0 $stat:ident, $what:expr) => {
        Counter {
            name: concat!("damos_", stringify!($stat)),
            what: $what,
            timing: false,
            kernel: |r| damon_kernel(r, concat!("damos0_", stringify!($stat))),
            sim: |r, _| damos0(r).map(|s| s.stat.$stat as f64),
        }
    };
    (module $name:literal, $what:expr, $module:literal, $param:literal) => {
        Counter {
            name: $name,
            what: $what,
            timing: false,
            kernel: |r| damon_kernel(r, concat!($module, "_", $param)),
            sim: |r, _| module_sim(r, $param),
        }
    };
    (compact $field:ident, $what:expr) => {
        Counter {
            name: stringify!($field),
            what: $what,
            timing: false,
            kernel: |r| r.vmstat.get(stringify!($field)).map(|&v| v as f64),
            sim: |r, _| Some(r.result.vmstat.$field as f64),
        }
    };
    (mthp64 $name:literal, $what:expr, $stat:ident) => {
        Counter {
            name: $name,
            what: $what,
            timing: false,
            kernel: |r| thp_kernel(r, concat!("64kB/", stringify!($stat))),
            sim: |r, _| Some(mthp_sim(r, "64kB").$stat as f64),
        }
    };
}

/// Every counter `mmsim validate` knows, in table order.
pub const COUNTERS: &[Counter] = &[
    Counter {
        name: "file_pages_read",
        what: "page-cache misses: pages the workload read from the file system \
               (kernel: the probe's getrusage ru_inblock / 8, which counts its swap-ins \
               too, minus pswpin; a real application: the pages its \
               mm_filemap_add_to_page_cache tracepoints inserted for its reads (capture-app's \
               pages_inserted; those its buffered writes added are apart); mmsim: \
               file_pages_read)",
        timing: false,
        kernel: |r| {
            let swapin = r.vmstat.get("pswpin").copied().unwrap_or(0) as f64;
            match r.probe.get("inblock") {
                Some(b) => Some((b / 8.0 - swapin).max(0.0)),
                // A real-application case: the pages its tracepoints saw inserted.
                None => r.probe.get("pages_inserted").copied(),
            }
        },
        sim: |r, _| Some(r.result.access.file_pages_read as f64),
    },
    counter!(
        memcg pgmajfault,
        "major faults of the group (memory.stat pgmajfault)"
    ),
    counter!(
        memcg workingset_refault_file,
        "file refaults that found a shadow (memory.stat)"
    ),
    counter!(
        memcg workingset_refault_anon,
        "anon refaults that found a shadow (memory.stat)"
    ),
    counter!(
        memcg_event workingset_activate_file,
        "file refaults activated (cgroup2 memory.stat, or the memcg tracepoints)"
    ),
    Counter {
        name: "pswpin",
        what: "pages swapped in (/proc/vmstat delta: only the run's own swap device exists)",
        timing: false,
        kernel: |r| r.vmstat.get("pswpin").map(|&v| v as f64),
        sim: |r, _| Some(r.result.vmstat.pswpin as f64),
    },
    Counter {
        name: "pswpout",
        what: "pages swapped out (/proc/vmstat delta)",
        timing: false,
        kernel: |r| r.vmstat.get("pswpout").map(|&v| v as f64),
        sim: |r, _| Some(r.result.vmstat.pswpout as f64),
    },
    Counter {
        name: "swpout_zero",
        what: "zero-filled pages swapped out without IO (6.12+ zeromap; /proc/vmstat delta, \
               0 when absent; mmsim under machine.swap_zero_pages = \"zeromap\")",
        timing: false,
        kernel: |r| Some(r.vmstat.get("swpout_zero").copied().unwrap_or(0) as f64),
        sim: |r, _| Some(r.result.vmstat.swpout_zero as f64),
    },
    Counter {
        name: "swpin_zero",
        what: "swap-ins of zero-filled slots, without IO (6.12+ zeromap; /proc/vmstat delta, \
               0 when absent)",
        timing: false,
        kernel: |r| Some(r.vmstat.get("swpin_zero").copied().unwrap_or(0) as f64),
        sim: |r, _| Some(r.result.vmstat.swpin_zero as f64),
    },
    Counter {
        name: "pgscan",
        what: "inactive pages scanned by reclaim of the group (cgroup2 memory.stat, or the \
               memcg tracepoints on v1)",
        timing: false,
        kernel: |r| {
            memcg_event(
                r,
                "pgscan",
                &[
                    "pgscan_kswapd",
                    "pgscan_direct",
                    "pgscan_khugepaged",
                    "pgscan_proactive",
                ],
            )
        },
        sim: |r, g| group(r, g).map(|m| m.pgscan as f64),
    },
    Counter {
        name: "pgsteal",
        what: "pages reclaimed from the group (cgroup2 memory.stat, or the memcg tracepoints)",
        timing: false,
        kernel: |r| {
            memcg_event(
                r,
                "pgsteal",
                &[
                    "pgsteal_kswapd",
                    "pgsteal_direct",
                    "pgsteal_khugepaged",
                    "pgsteal_proactive",
                ],
            )
        },
        sim: |r, g| group(r, g).map(|m| m.pgsteal as f64),
    },
    counter!(
        memcg_event pgactivate,
        "activations in the group (cgroup2 memory.stat, or the memcg tracepoints)"
    ),
    counter!(
        memcg_event pgrefill,
        "active pages scanned (cgroup2 memory.stat, or the memcg tracepoints)"
    ),
    Counter {
        name: "kmem_end_kib",
        what: "kernel memory charged to the group at the end, KiB: v1 \
               memory.kmem.usage_in_bytes after the probe exited (what outlives it: the \
               page-cache xarray nodes); mmsim under machine.kmem_accounting: its xarray \
               nodes' slab (slab_reclaimable), in whole pages",
        timing: false,
        kernel: |r| {
            r.memcg
                .get("kmem_usage_in_bytes")
                .map(|&b| b as f64 / 1024.0)
        },
        sim: |r, g| {
            group(r, g)
                .and_then(|m| m.kmem.as_ref())
                .map(|k| (k.slab_reclaimable.div_ceil(4096) * 4) as f64)
        },
    },
    Counter {
        name: "file_pages_end",
        what: "page-cache pages charged to the group at the end (v1 memory.stat cache, \
               cgroup2 file; below the limit by what else the kernel charges to the group: \
               kernel memory, the probe's own pages)",
        timing: false,
        kernel: |r| {
            r.memcg
                .get("cache")
                .or_else(|| r.memcg.get("file"))
                .map(|&b| b as f64 / 4096.0)
        },
        sim: |r, g| group(r, g).map(|m| m.file as f64),
    },
    counter!(
        memcg pgdeactivate,
        "pages deactivated in the group (cgroup2 memory.stat)"
    ),
    counter!(
        damos0 nr_tried,
        "DAMOS scheme 0: regions its action was tried on (sysfs stats/nr_tried; \
         sampled, and proportional to the aggregations the run lasted)"
    ),
    counter!(
        damos0 sz_tried,
        "DAMOS scheme 0: bytes of those regions (stats/sz_tried)"
    ),
    counter!(
        damos0 nr_applied,
        "DAMOS scheme 0: regions the action did something to (stats/nr_applied)"
    ),
    counter!(
        damos0 sz_applied,
        "DAMOS scheme 0: bytes the action applied to (stats/sz_applied; pageout: \
         bytes paged out)"
    ),
    counter!(
        damos0 qt_exceeds,
        "DAMOS scheme 0: quota windows that ended exhausted (stats/qt_exceeds)"
    ),
    Counter {
        name: "damos_tried_regions",
        what: "DAMOS scheme 0: regions its last apply pass tried, at the end of the run \
               (sysfs tried_regions/ after update_schemes_tried_regions)",
        timing: false,
        kernel: |r| damon_kernel(r, "damos0_nr_tried_regions"),
        sim: |r, _| damos0(r).map(|s| s.nr_tried_regions as f64),
    },
    Counter {
        name: "damos_tried_bytes",
        what: "DAMOS scheme 0: bytes of the regions its last apply pass tried, at the end \
               of the run (tried_regions/total_bytes): for a stat scheme on nr_accesses 0, \
               the bytes DAMON finds cold",
        timing: false,
        kernel: |r| damon_kernel(r, "damos0_tried_regions_bytes"),
        sim: |r, _| damos0(r).map(|s| s.tried_regions_bytes as f64),
    },
    Counter {
        name: "damon_aggregations",
        what: "DAMON aggregation intervals completed by the workload's last event (kernel: \
               damon:damon_aggregated records before the hold; a check that both sides \
               monitored for the same time)",
        timing: true,
        kernel: |r| damon_kernel(r, "damon_aggregations_end"),
        sim: |r, _| {
            r.result
                .damon
                .as_ref()?
                .contexts
                .iter()
                .find(|c| c.name.starts_with("kdamond"))
                .map(|c| c.nr_aggregations as f64)
        },
    },
    Counter {
        name: "damos_end_nr_tried",
        what: "DAMOS scheme 0: regions matching its access pattern, summed over the \
               aggregations up to the workload's last event (kernel: from the \
               damon_aggregated records; mmsim: nr_tried)",
        timing: false,
        kernel: |r| damon_kernel(r, "damos0_end_nr_tried"),
        sim: |r, _| damos0(r).map(|s| s.stat.nr_tried as f64),
    },
    Counter {
        name: "damos_end_sz_tried",
        what: "DAMOS scheme 0: their bytes (kernel: damon_aggregated records; mmsim: sz_tried)",
        timing: false,
        kernel: |r| damon_kernel(r, "damos0_end_sz_tried"),
        sim: |r, _| damos0(r).map(|s| s.stat.sz_tried as f64),
    },
    Counter {
        name: "damos_tried_per_aggr",
        what: "DAMOS scheme 0: regions matching its pattern per aggregation, up to the \
               workload's last event (damos_end_nr_tried / damon_aggregations): free of \
               how many aggregations kdamond managed",
        timing: false,
        kernel: |r| {
            let n = damon_kernel(r, "damon_aggregations_end")?;
            Some(damon_kernel(r, "damos0_end_nr_tried")? / n.max(1.0))
        },
        sim: |r, _| {
            let c = r
                .result
                .damon
                .as_ref()?
                .contexts
                .iter()
                .find(|c| c.name.starts_with("kdamond"))?;
            let s = c.schemes.first()?;
            Some(s.stat.nr_tried as f64 / (c.nr_aggregations as f64).max(1.0))
        },
    },
    Counter {
        name: "damos_cold_bytes",
        what: "DAMOS scheme 0: bytes of the regions matching its pattern in the last \
               aggregation before the workload's last event (kernel: damon_aggregated; \
               mmsim: the last apply pass's tried regions), holes between mappings included",
        timing: false,
        kernel: |r| damon_kernel(r, "damos0_end_tried_bytes"),
        sim: |r, _| damos0(r).map(|s| s.tried_regions_bytes as f64),
    },
    Counter {
        name: "damos_cold_mapped_bytes",
        what: "the same, only the part inside the workload's mappings (kernel: \
               /proc/PID/maps entries of a workload region's size; mmsim: the task's VMAs): \
               for a stat scheme on nr_accesses 0, the workload's memory DAMON finds cold",
        timing: false,
        kernel: |r| damon_kernel(r, "damos0_end_tried_mapped_bytes"),
        sim: |r, _| damos0(r).map(|s| s.tried_regions_mapped_bytes as f64),
    },
    counter!(
        module "lru_sort_tried_hot",
        "DAMON_LRU_SORT: hot regions tried (nr_lru_sort_tried_hot_regions)",
        "lru_sort",
        "nr_lru_sort_tried_hot_regions"
    ),
    counter!(
        module "lru_sort_hot_bytes",
        "DAMON_LRU_SORT: bytes of the hot regions sorted (bytes_lru_sorted_hot_regions)",
        "lru_sort",
        "bytes_lru_sorted_hot_regions"
    ),
    counter!(
        module "lru_sort_tried_cold",
        "DAMON_LRU_SORT: cold regions tried (nr_lru_sort_tried_cold_regions)",
        "lru_sort",
        "nr_lru_sort_tried_cold_regions"
    ),
    counter!(
        module "lru_sort_cold_bytes",
        "DAMON_LRU_SORT: bytes of the cold regions sorted (bytes_lru_sorted_cold_regions)",
        "lru_sort",
        "bytes_lru_sorted_cold_regions"
    ),
    counter!(
        module "reclaim_tried_regions",
        "DAMON_RECLAIM: regions tried (nr_reclaim_tried_regions)",
        "reclaim",
        "nr_reclaim_tried_regions"
    ),
    counter!(
        module "reclaim_tried_bytes",
        "DAMON_RECLAIM: bytes of the regions tried (bytes_reclaim_tried_regions)",
        "reclaim",
        "bytes_reclaim_tried_regions"
    ),
    counter!(
        module "reclaimed_regions",
        "DAMON_RECLAIM: regions paged out (nr_reclaimed_regions)",
        "reclaim",
        "nr_reclaimed_regions"
    ),
    counter!(
        module "reclaimed_bytes",
        "DAMON_RECLAIM: bytes reclaim_pages() reported reclaimed (bytes_reclaimed_regions; \
         folios still under writeback are not counted)",
        "reclaim",
        "bytes_reclaimed_regions"
    ),
    counter!(
        module "reclaim_quota_exceeds",
        "DAMON_RECLAIM: times the quota was exceeded (nr_quota_exceeds)",
        "reclaim",
        "nr_quota_exceeds"
    ),
    Counter {
        name: "anon_pages_hold",
        what: "anon pages charged to the group after the workload's last event \
               (kernel: memory.stat anon while the probe holds its memory, DAMON cases; mmsim: the group's anon at the end), swap-cached pages included",
        timing: false,
        kernel: |r| damon_kernel(r, "memcg_anon_hold").map(|b| b / 4096.0),
        sim: |r, g| group(r, g).map(|m| m.anon as f64),
    },
    Counter {
        name: "swap_pages_hold",
        what: "swap slots charged to the group after the workload's last event \
               (kernel: memory.swap.current while the probe holds its memory, DAMON cases; mmsim: the group's swap at the end)",
        timing: false,
        kernel: |r| damon_kernel(r, "memcg_swap_hold").map(|b| b / 4096.0),
        sim: |r, g| group(r, g).map(|m| m.swap_current as f64),
    },
    Counter {
        name: "pgfault",
        what: "page faults of the workload (kernel: the probe's getrusage ru_minflt + \
               ru_majflt over its event loop; mmsim: the group's memory.stat pgfault); \
               with large folios one fault maps the whole folio",
        timing: false,
        kernel: |r| Some(r.probe.get("minflt")? + r.probe.get("majflt").copied().unwrap_or(0.0)),
        sim: |r, g| group(r, g).map(|m| m.events.pgfault as f64),
    },
    Counter {
        name: "rss_pages",
        what: "resident pages of the workload at its end (kernel, mTHP cases: Rss of the \
               workload's mapping in /proc/PID/smaps while the probe holds it, / 4 KiB; \
               mmsim: the group's memory.stat anon)",
        timing: false,
        kernel: |r| thp_kernel(r, "rss_kb").map(|v| v / 4.0),
        sim: |r, g| group(r, g).map(|m| m.anon as f64),
    },
    counter!(
        mthp64 "mthp64_anon_fault_alloc",
        "hugepages-64kB/stats/anon_fault_alloc: faults that allocated a 64 KiB folio",
        anon_fault_alloc
    ),
    counter!(
        mthp64 "mthp64_anon_fault_fallback",
        "hugepages-64kB/stats/anon_fault_fallback: faults that tried 64 KiB and fell \
         back to a smaller size",
        anon_fault_fallback
    ),
    counter!(
        mthp64 "mthp64_fallback_charge",
        "hugepages-64kB/stats/anon_fault_fallback_charge: of those, the memcg charge failed",
        anon_fault_fallback_charge
    ),
    Counter {
        name: "mthp64_fallback_rate",
        what: "anon_fault_fallback / (anon_fault_alloc + anon_fault_fallback) of \
               hugepages-64kB/stats: the share of 64 KiB faults that fell back to a smaller \
               size (compaction cases, issue 13 item 4)",
        timing: false,
        kernel: |r| {
            let a = thp_kernel(r, "64kB/anon_fault_alloc")?;
            let f = thp_kernel(r, "64kB/anon_fault_fallback")?;
            (a + f > 0.0).then(|| f / (a + f))
        },
        sim: |r, _| {
            let m = mthp_sim(r, "64kB");
            let n = m.anon_fault_alloc + m.anon_fault_fallback;
            Some(if n > 0 {
                m.anon_fault_fallback as f64 / n as f64
            } else {
                0.0
            })
        },
    },
    Counter {
        name: "mthp64_nr_anon",
        what: "hugepages-64kB/stats/nr_anon: 64 KiB anonymous folios at the workload's end \
               (kernel: read while the probe holds its mapping)",
        timing: false,
        kernel: |r| thp_kernel(r, "64kB/nr_anon"),
        sim: |r, _| Some(mthp_sim(r, "64kB").nr_anon as f64),
    },
    Counter {
        name: "thp_other_anon_fault_alloc",
        what: "anon_fault_alloc of every size but 64 KiB, summed (16 KiB … 2 MiB; 0 when \
               only 64 KiB is on)",
        timing: false,
        kernel: |r| {
            if r.thp.is_empty() {
                return None;
            }
            Some(
                r.thp
                    .iter()
                    .filter(|(k, _)| k.ends_with("/anon_fault_alloc") && !k.starts_with("64kB/"))
                    .map(|(_, &v)| v as f64)
                    .sum(),
            )
        },
        sim: |r, _| {
            Some(
                r.result
                    .mthp
                    .iter()
                    .filter(|m| m.size != "64kB")
                    .map(|m| m.stats.anon_fault_alloc as f64)
                    .sum(),
            )
        },
    },
    counter!(
        compact compact_stall,
        "direct compactions started (/proc/vmstat delta over the run, compaction cases: \
         the whole guest; the kernel's include those of slab and other non-THP \
         high-order allocations)"
    ),
    counter!(
        compact compact_success,
        "direct compactions after which the allocation succeeded (/proc/vmstat delta)"
    ),
    counter!(
        compact compact_fail,
        "direct compactions after which the allocation still failed (/proc/vmstat delta)"
    ),
    counter!(
        compact compact_migrate_scanned,
        "pages the migrate scanner looked at, direct and kcompactd (/proc/vmstat delta)"
    ),
    counter!(
        compact compact_free_scanned,
        "pages the free scanner looked at, direct and kcompactd (/proc/vmstat delta)"
    ),
    counter!(
        compact compact_daemon_wake,
        "kcompactd wake-ups (/proc/vmstat delta: woken by kswapd or an allocation, \
         and its proactive runs)"
    ),
    counter!(
        compact pgmigrate_success,
        "pages migrated, compaction's and any other (/proc/vmstat delta)"
    ),
    Counter {
        name: "allocstall",
        what: "direct reclaims entered from the allocator (kernel: /proc/vmstat \
               allocstall_* of every zone summed, compaction cases: a 512 MiB guest's \
               memory is ZONE_DMA32; mmsim, one zone: allocstall_normal)",
        timing: false,
        kernel: |r| {
            let v: Vec<u64> = r
                .vmstat
                .iter()
                .filter(|(k, _)| k.starts_with("allocstall_"))
                .map(|(_, &v)| v)
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<u64>() as f64)
        },
        sim: |r, _| Some(r.result.vmstat.allocstall_normal as f64),
    },
    Counter {
        name: "thp_collapse_alloc",
        what: "PMD-size folios allocated to collapse a range (MADV_COLLAPSE, khugepaged; \
               kernel: /proc/vmstat delta, 0 when absent — the host's khugepaged must have \
               nothing else to collapse)",
        timing: false,
        kernel: |r| Some(r.vmstat.get("thp_collapse_alloc").copied().unwrap_or(0) as f64),
        sim: |r, _| Some(r.result.vmstat.thp_collapse_alloc as f64),
    },
    Counter {
        name: "collapse_failed",
        what: "madvise(MADV_COLLAPSE) calls that returned an error (kernel: the probe's count)",
        timing: false,
        kernel: |r| r.probe.get("collapse_failed").copied(),
        sim: |r, _| {
            Some(
                r.result
                    .khugepaged
                    .as_ref()
                    .map_or(0, |k| k.madvise_collapse_failed) as f64,
            )
        },
    },
    Counter {
        name: "collapse_errno",
        what: "the errno number the last madvise(MADV_COLLAPSE) returned: 0, EINVAL 22, \
               EBUSY 16, ENOMEM 12, EAGAIN 11 (kernel: the probe's; enforced, any \
               difference is over the allowance)",
        timing: false,
        kernel: |r| r.probe.get("collapse_errno").copied(),
        sim: |r, _| {
            Some(
                r.result
                    .khugepaged
                    .as_ref()
                    .map_or(0, |k| k.madvise_collapse_errno) as f64,
            )
        },
    },
    Counter {
        name: "anon_huge_pages",
        what: "PMD-mapped anonymous pages after the last event (kernel: the probe's \
               AnonHugePages of /proc/self/smaps_rollup then, / 4 KiB; mmsim: anon_thp_pages)",
        timing: false,
        kernel: |r| r.probe.get("anon_huge_kb").map(|v| v / 4.0),
        sim: |r, _| Some(r.result.anon_thp_pages as f64),
    },
    Counter {
        name: "end_ratio",
        what: "the first workload's end ÷ the last one's (kernel: the runner's end times \
               of its processes; mmsim: each workload's exit_ns, else end_ns; timing: \
               shown, never enforced)",
        timing: true,
        kernel: |r| {
            let lo = r.ends_s.values().copied().fold(f64::INFINITY, f64::min);
            let hi = r.ends_s.values().copied().fold(0.0, f64::max);
            (hi > 0.0).then(|| lo / hi)
        },
        sim: |r, _| {
            let ends: Vec<f64> = r
                .workloads
                .iter()
                .filter_map(|w| w.exit_ns.or(w.end_ns))
                .map(|n| n as f64)
                .collect();
            let lo = ends.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = ends.iter().copied().fold(0.0, f64::max);
            (hi > 0.0).then(|| lo / hi)
        },
    },
    Counter {
        name: "psi_some_ms",
        what: "memory.pressure some total, ms (timing: shown, never enforced)",
        timing: true,
        kernel: |r| r.psi_some_us.map(|v| v as f64 / 1000.0),
        sim: |r, g| group(r, g).map(|m| m.psi.some.total as f64 / 1000.0),
    },
    Counter {
        name: "wall_s",
        what: "the workload's run time, s (kernel: the probe's wall clock; mmsim: simulated \
               runtime; timing: shown, never enforced)",
        timing: true,
        kernel: |r| r.probe.get("wall_s").copied(),
        sim: |r, _| Some(r.result.runtime_s),
    },
];

/// The counter named `name`.
pub fn counter(name: &str) -> Option<&'static Counter> {
    COUNTERS.iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::{measured_stats_read_ms_of, online_cpus_of, stats_read_ms_of, KernelRun};
    use crate::validate::replay_flush_ms;

    /// The replay's periods are the kernel's scaled to the workload's progress. A
    /// reader slower than the periodic flusher is scaled as it is, not capped at the
    /// flusher's 2 s: its reads still flush its group between the flusher's ticks
    /// (rule test
    /// `a_reader_slower_than_the_periodic_flusher_still_flushes_between_its_ticks`).
    #[test]
    fn a_stats_reader_shortens_the_replays_flush_interval() {
        // grep-include: 1.65 s simulated, 5.68 s on the kernel.
        assert_eq!(replay_flush_ms(0.0, 1.65, 5.68), 581);
        assert_eq!(replay_flush_ms(200.0, 1.65, 5.68), 58);
        assert_eq!(replay_flush_ms(5000.0, 1.65, 5.68), 1452);
        assert_eq!(replay_flush_ms(1.0, 0.001, 100.0), 1);
        // A measured period keeps its fraction: 203.4 ms × 1.65 / 5.68 = 59.09.
        assert_eq!(replay_flush_ms(203.4, 1.65, 5.68), 59);
    }

    /// capture-app's measured read period comes before its nominal one; the host's
    /// CPUs are the fewest any run reports, 0 when none does.
    #[test]
    fn the_kernel_runs_say_their_measured_read_period_and_cpus() {
        let run = |probe: &[(&str, f64)]| {
            let mut k = KernelRun::default();
            for (key, v) in probe {
                k.probe.insert(key.to_string(), *v);
            }
            k
        };
        let old = run(&[("memory_stat_read_ms", 200.0)]);
        let new = |mean: f64| {
            run(&[
                ("memory_stat_read_ms", 200.0),
                ("memory_stat_read_mean_ms", mean),
                ("online_cpus", 2.0),
            ])
        };
        assert_eq!(measured_stats_read_ms_of(std::slice::from_ref(&old)), None);
        assert_eq!(
            measured_stats_read_ms_of(&[old.clone(), new(203.0), new(205.0)]),
            Some(204.0)
        );
        assert_eq!(online_cpus_of(std::slice::from_ref(&old)), 0);
        assert_eq!(online_cpus_of(&[new(203.0), old]), 2);
    }

    /// capture-app writes its `memory.stat` read period into the probe report; runs
    /// recorded before it (and probe runs) say nothing: 0, no reader.
    #[test]
    fn the_kernel_runs_say_how_often_they_read_memory_stat() {
        let run = |ms: Option<f64>| {
            let mut k = KernelRun::default();
            k.probe.insert("wall_s".into(), 10.0);
            if let Some(ms) = ms {
                k.probe.insert("memory_stat_read_ms".into(), ms);
            }
            k
        };
        assert_eq!(stats_read_ms_of(&[]), 0);
        assert_eq!(stats_read_ms_of(&[run(None)]), 0);
        assert_eq!(stats_read_ms_of(&[run(Some(200.0))]), 200);
        assert_eq!(
            stats_read_ms_of(&[run(None), run(Some(250.4)), run(Some(200.0))]),
            200
        );
    }
}
