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
    /// `memory.pressure` totals of the run's cgroup2 group, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_some_us: Option<u64>,
    /// Same, `full`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_full_us: Option<u64>,
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

/// Every counter `mmsim validate` knows, in table order.
pub const COUNTERS: &[Counter] = &[
    Counter {
        name: "file_pages_read",
        what: "page-cache misses: pages the workload read from the file system \
               (kernel: the probe's getrusage ru_inblock / 8, which counts its swap-ins \
               too, minus pswpin; mmsim: file_pages_read)",
        timing: false,
        kernel: |r| {
            let swapin = r.vmstat.get("pswpin").copied().unwrap_or(0) as f64;
            r.probe.get("inblock").map(|b| (b / 8.0 - swapin).max(0.0))
        },
        sim: |r, _| Some(r.result.access.file_pages_read as f64),
    },
    Counter {
        name: "pgmajfault",
        what: "major faults of the group (memory.stat pgmajfault)",
        timing: false,
        kernel: |r| memcg(r, "pgmajfault"),
        sim: |r, g| group(r, g).map(|m| m.events.pgmajfault as f64),
    },
    Counter {
        name: "workingset_refault_file",
        what: "file refaults that found a shadow (memory.stat)",
        timing: false,
        kernel: |r| memcg(r, "workingset_refault_file"),
        sim: |r, g| group(r, g).map(|m| m.events.workingset_refault_file as f64),
    },
    Counter {
        name: "workingset_refault_anon",
        what: "anon refaults that found a shadow (memory.stat)",
        timing: false,
        kernel: |r| memcg(r, "workingset_refault_anon"),
        sim: |r, g| group(r, g).map(|m| m.events.workingset_refault_anon as f64),
    },
    Counter {
        name: "workingset_activate_file",
        what: "file refaults activated (cgroup2 memory.stat, or the memcg tracepoints)",
        timing: false,
        kernel: |r| memcg_event(r, "workingset_activate_file", &["workingset_activate_file"]),
        sim: |r, g| group(r, g).map(|m| m.events.workingset_activate_file as f64),
    },
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
    Counter {
        name: "pgactivate",
        what: "activations in the group (cgroup2 memory.stat, or the memcg tracepoints)",
        timing: false,
        kernel: |r| memcg_event(r, "pgactivate", &["pgactivate"]),
        sim: |r, g| group(r, g).map(|m| m.events.pgactivate as f64),
    },
    Counter {
        name: "pgrefill",
        what: "active pages scanned (cgroup2 memory.stat, or the memcg tracepoints)",
        timing: false,
        kernel: |r| memcg_event(r, "pgrefill", &["pgrefill"]),
        sim: |r, g| group(r, g).map(|m| m.events.pgrefill as f64),
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
