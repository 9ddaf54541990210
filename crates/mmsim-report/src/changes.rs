//! "What changed": the largest changes of a comparison, grouped by the mechanism
//! that produced them, with a one-line reading of each group.
//!
//! A comparison table of forty metrics answers "what are the numbers"; a reader wants
//! first "what moved, and in which part of the kernel". For each configuration after
//! the baseline, [`what_changed`] takes every metric's mean (the table's `Amean` with
//! repeats), keeps the changes that matter — at least [`MIN_CHANGE_PCT`] of the
//! baseline, and, with repeats, larger than the two configurations' standard
//! deviations together, so that run-to-run noise is not read as an effect — and
//! sorts them into mechanisms by the metric's name ([`Mechanism::of`]): reclaim
//! (scanning, stealing, kswapd and direct reclaim), refaults and the workingset,
//! swap, faults and misses, pressure (PSI and stalls), memory use, cgroup limits and
//! events, per-group counters, time, and DAMON. Each group shows its
//! [`TOP_PER_MECHANISM`] largest changes; groups come in the order of their largest
//! change (a metric that was zero in the baseline counts as the largest). The
//! reading says which way the mechanism moved, judged by its headline total when it
//! moved (the sum of `pgscan_kswapd` and `pgscan_direct` for reclaim, of both
//! types' refaults for the workingset, of `pswpin` and `pswpout` for swap, …, shown
//! in brackets), else by its largest change. Nothing here is a judgement of better or worse.
//!
//! Everything is computed from the numbers of the report, so it is deterministic
//! (ties are broken by the metric's name) and the same in text and JSON.

use serde::{Deserialize, Serialize};

use crate::compare::{CompareReport, ConfigReport};
use crate::metrics::{DAMON_PREFIX, MEMCG_PREFIX, WORKLOAD_PREFIX};

/// Changes smaller than this, in percent of the baseline, are left out.
pub const MIN_CHANGE_PCT: f64 = 1.0;

/// The changes shown per mechanism.
pub const TOP_PER_MECHANISM: usize = 3;

/// The part of the kernel (or of the run) a metric belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mechanism {
    /// LRU scanning and reclaim: `pgscan*`, `pgsteal*`, kswapd and direct reclaim,
    /// the LRU lock.
    Reclaim,
    /// Refaults and the workingset: `workingset_*`.
    Workingset,
    /// Swap: `pswpin`, `pswpout`, `swap_current`.
    Swap,
    /// Page faults and misses.
    Faults,
    /// Pressure: PSI, reclaim stalls, `memory.high` throttling.
    Pressure,
    /// Memory in use: `mem_used_pages`, `current`, `anon_thp_pages`.
    Memory,
    /// Cgroup limits and the OOM killer: `memory.events`, `oom_kill`.
    Limits,
    /// Per-group counters (`memcg:<path>:<metric>`).
    Groups,
    /// Time: runtime, throughput, IO wait, workloads' end times.
    Time,
    /// DAMON and DAMOS (`damon:*`).
    Damon,
    /// Anything else.
    Other,
}

impl Mechanism {
    /// The mechanism metric `name` belongs to.
    pub fn of(name: &str) -> Mechanism {
        use Mechanism::*;
        if name.starts_with(MEMCG_PREFIX) {
            return Groups;
        }
        if name.starts_with(WORKLOAD_PREFIX) {
            return Time;
        }
        if name.starts_with(DAMON_PREFIX) {
            return Damon;
        }
        let starts = |p: &[&str]| p.iter().any(|p| name.starts_with(p));
        if name.contains("workingset") || name.contains("refault") {
            Workingset
        } else if starts(&["pswp", "swap", "zswap"]) {
            // Not `contains("swap")`: kswapd's counters are reclaim's.
            Swap
        } else if starts(&["psi_", "reclaim_stall", "high_throttle"]) {
            Pressure
        } else if starts(&[
            "pgscan",
            "pgsteal",
            "pgrefill",
            "pgactivate",
            "pgdeactivate",
            "pgrotated",
            "kswapd",
            "direct",
            "allocstall",
            "nr_vmscan",
            "lru_lock",
        ]) {
            Reclaim
        } else if starts(&["miss", "minor_faults", "pgfault", "pgmajfault"]) {
            Faults
        } else if starts(&["mem_used", "current", "anon_thp"]) {
            Memory
        } else if starts(&["events_", "oom"]) {
            Limits
        } else if starts(&["runtime", "throughput", "io_wait"]) {
            Time
        } else {
            Other
        }
    }

    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Reclaim => "reclaim",
            Mechanism::Workingset => "refaults",
            Mechanism::Swap => "swap",
            Mechanism::Faults => "faults",
            Mechanism::Pressure => "pressure",
            Mechanism::Memory => "memory",
            Mechanism::Limits => "limits",
            Mechanism::Groups => "groups",
            Mechanism::Time => "time",
            Mechanism::Damon => "damon",
            Mechanism::Other => "other",
        }
    }

    /// The metrics whose sum says which way the mechanism moved: reclaim is read by
    /// the pages scanned, not by kswapd's CPU time; the workingset by the refaults
    /// of both types together, not by the activations (which MGLRU counts
    /// differently) nor by one type that appeared from zero.
    fn headline(self) -> &'static [&'static str] {
        match self {
            Mechanism::Reclaim => &["pgscan_kswapd", "pgscan_direct"],
            Mechanism::Workingset => &["workingset_refault_anon", "workingset_refault_file"],
            Mechanism::Swap => &["pswpin", "pswpout"],
            Mechanism::Faults => &["misses"],
            Mechanism::Pressure => &["psi_some_total_us"],
            Mechanism::Memory => &["mem_used_pages"],
            Mechanism::Time => &["runtime_s"],
            _ => &[],
        }
    }

    /// What a rise (`up`) or a fall of its headline (or largest change) means.
    fn reading(self, up: bool) -> &'static str {
        match (self, up) {
            (Mechanism::Reclaim, true) => "reclaim scanned or freed more",
            (Mechanism::Reclaim, false) => "reclaim scanned or freed less",
            (Mechanism::Workingset, true) => "more evicted pages were needed again",
            (Mechanism::Workingset, false) => "fewer evicted pages were needed again",
            (Mechanism::Swap, true) => "more anonymous memory went through swap",
            (Mechanism::Swap, false) => "less anonymous memory went through swap",
            (Mechanism::Faults, true) => "more accesses missed or faulted",
            (Mechanism::Faults, false) => "fewer accesses missed or faulted",
            (Mechanism::Pressure, true) => "tasks stalled longer on memory",
            (Mechanism::Pressure, false) => "tasks stalled less on memory",
            (Mechanism::Memory, true) => "more memory in use",
            (Mechanism::Memory, false) => "less memory in use",
            (Mechanism::Limits, true) => "limits were hit more often",
            (Mechanism::Limits, false) => "limits were hit less often",
            (Mechanism::Groups, true) => "a group's counter rose",
            (Mechanism::Groups, false) => "a group's counter fell",
            (Mechanism::Time, true) => "the run took longer",
            (Mechanism::Time, false) => "the run took less time",
            (Mechanism::Damon, true) => "DAMON did more",
            (Mechanism::Damon, false) => "DAMON did less",
            (Mechanism::Other, true) => "rose",
            (Mechanism::Other, false) => "fell",
        }
    }
}

/// One metric's change against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The metric's name, as in the table.
    pub metric: String,
    /// The baseline's value (mean over its runs).
    pub base: f64,
    /// This configuration's value (mean over its runs).
    pub value: f64,
    /// The change in percent of the baseline; `None` when the baseline was 0.
    pub relative_pct: Option<f64>,
}

impl Change {
    /// The size by which changes are ordered: a change from 0 first.
    fn magnitude(&self) -> f64 {
        self.relative_pct.map_or(f64::INFINITY, f64::abs)
    }

    /// `pgscan +35.2%`, or `pgscan 0 → 1200` from a zero baseline.
    pub(crate) fn label(&self) -> String {
        match self.relative_pct {
            Some(p) if p.abs() >= 1000.0 && self.base != 0.0 => {
                format!(
                    "{} ×{}",
                    self.metric,
                    short((self.value / self.base).round())
                )
            }
            Some(p) => format!("{} {p:+.1}%", self.metric),
            None => format!("{} 0 → {}", self.metric, short(self.value)),
        }
    }
}

/// A number as the reading prints it: integers without decimals.
fn short(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// One mechanism's changes, the largest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MechanismChanges {
    /// The mechanism's name ([`Mechanism::name`]).
    pub mechanism: String,
    /// A one-line reading: which way it moved, and its largest changes.
    pub reading: String,
    /// Its [`TOP_PER_MECHANISM`] largest changes.
    pub changes: Vec<Change>,
}

/// What changed in one configuration against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WhatChanged {
    /// The configuration's name.
    pub config: String,
    /// The baseline's name.
    pub against: String,
    /// The mechanisms that moved, the largest change first.
    pub mechanisms: Vec<MechanismChanges>,
}

/// The changes of every configuration after the first against the first (see the
/// module overview). Empty with fewer than two configurations.
pub fn what_changed(r: &CompareReport) -> Vec<WhatChanged> {
    let Some(base) = r.configs.first() else {
        return Vec::new();
    };
    r.configs
        .iter()
        .skip(1)
        .map(|c| {
            let mut changes: Vec<(Mechanism, Change)> = Vec::new();
            for m in &r.metrics {
                let name = m.name.as_str();
                if name == "accesses" {
                    continue;
                }
                let (Some(b), Some(v)) = (base.stat(name), c.stat(name)) else {
                    continue;
                };
                let noise = b.stddev.unwrap_or(0.0) + v.stddev.unwrap_or(0.0);
                let diff = v.mean - b.mean;
                if diff == 0.0 || diff.abs() <= noise {
                    continue;
                }
                let relative_pct = (b.mean != 0.0).then(|| diff * 100.0 / b.mean.abs());
                if relative_pct.is_some_and(|p| p.abs() < MIN_CHANGE_PCT) {
                    continue;
                }
                changes.push((
                    Mechanism::of(name),
                    Change {
                        metric: name.to_string(),
                        base: b.mean,
                        value: v.mean,
                        relative_pct,
                    },
                ));
            }
            let totals = |m: Mechanism| -> Option<(String, f64, f64)> {
                let mean = |cfg: &ConfigReport, n: &str| cfg.stat(n).map(|s| s.mean);
                let present: Vec<&str> = m
                    .headline()
                    .iter()
                    .copied()
                    .filter(|n| mean(base, n).is_some() && mean(c, n).is_some())
                    .collect();
                (!present.is_empty()).then(|| {
                    let sum = |cfg| present.iter().filter_map(|n| mean(cfg, n)).sum::<f64>();
                    (present.join(" + "), sum(base), sum(c))
                })
            };
            WhatChanged {
                config: c.name.clone(),
                against: base.name.clone(),
                mechanisms: group(changes, totals),
            }
        })
        .collect()
}

/// Groups `changes` by mechanism, each group's largest first and cut to
/// [`TOP_PER_MECHANISM`], the groups in the order of their largest change. Each
/// group's reading follows its headline total (`totals`: baseline and compared
/// sums of [`Mechanism::headline`]) when that moved, else its largest change.
fn group(
    mut changes: Vec<(Mechanism, Change)>,
    totals: impl Fn(Mechanism) -> Option<(String, f64, f64)>,
) -> Vec<MechanismChanges> {
    changes.sort_by(|(ma, a), (mb, b)| {
        ma.cmp(mb)
            .then(b.magnitude().total_cmp(&a.magnitude()))
            .then(a.metric.cmp(&b.metric))
    });
    let mut groups: Vec<(Mechanism, Vec<Change>)> = Vec::new();
    for (m, c) in changes {
        match groups.last_mut() {
            Some((last, v)) if *last == m => v.push(c),
            _ => groups.push((m, vec![c])),
        }
    }
    groups.sort_by(|(ma, a), (mb, b)| {
        b[0].magnitude()
            .total_cmp(&a[0].magnitude())
            .then(ma.cmp(mb))
    });
    groups
        .into_iter()
        .map(|(m, mut v)| {
            v.truncate(TOP_PER_MECHANISM);
            let labels: Vec<String> = v.iter().map(Change::label).collect();
            let headline = totals(m)
                .filter(|(_, b, c)| b != c)
                .map(|(metric, b, c)| Change {
                    metric,
                    base: b,
                    value: c,
                    relative_pct: (b != 0.0).then(|| (c - b) * 100.0 / b.abs()),
                });
            let reading = match &headline {
                // A headline of one metric already among those shown needs no brackets.
                Some(h) if v.iter().any(|c| c.metric == h.metric) => {
                    format!("{}: {}", m.reading(h.value > h.base), labels.join(", "))
                }
                Some(h) => format!(
                    "{} ({}): {}",
                    m.reading(h.value > h.base),
                    h.label(),
                    labels.join(", ")
                ),
                None => format!(
                    "{}: {}",
                    m.reading(v[0].value > v[0].base),
                    labels.join(", ")
                ),
            };
            MechanismChanges {
                mechanism: m.name().to_string(),
                reading,
                changes: v,
            }
        })
        .collect()
}

/// The "what changed" section of the text report; empty when nothing changed or
/// there is one configuration.
pub fn what_changed_text(all: &[WhatChanged]) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    for w in all {
        let _ = writeln!(t, "\nWhat changed, {} against {}:", w.config, w.against);
        if w.mechanisms.is_empty() {
            let _ = writeln!(
                t,
                "  nothing by {MIN_CHANGE_PCT}% or more (beyond the runs' spread)"
            );
        }
        for m in &w.mechanisms {
            let _ = writeln!(t, "  {:<11}{}", m.mechanism, m.reading);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{ConfigReport, MetricInfo};
    use crate::stats::Stats;
    use std::collections::BTreeMap;

    fn config(name: &str, values: &[(&str, f64, Option<f64>)]) -> ConfigReport {
        let stats: BTreeMap<String, Option<Stats>> = values
            .iter()
            .map(|&(n, mean, stddev)| {
                (
                    n.to_string(),
                    Some(Stats {
                        n: 1,
                        min: mean,
                        mean,
                        stddev,
                        max: mean,
                    }),
                )
            })
            .collect();
        ConfigReport {
            name: name.to_string(),
            settings: Vec::new(),
            partial: false,
            runs: Vec::new(),
            stats,
        }
    }

    fn report(configs: Vec<ConfigReport>) -> CompareReport {
        let mut r = CompareReport::new("t", 1, 1, 0, Vec::new());
        r.metrics = configs[0]
            .stats
            .keys()
            .map(|n| MetricInfo {
                name: n.clone(),
                about: String::new(),
            })
            .collect();
        r.configs = configs;
        r
    }

    #[test]
    fn metrics_fall_into_their_mechanisms() {
        for (name, m) in [
            ("pgscan_kswapd", Mechanism::Reclaim),
            ("kswapd_efficiency_pct", Mechanism::Reclaim),
            ("allocstall_normal", Mechanism::Reclaim),
            ("workingset_refault_file", Mechanism::Workingset),
            ("pswpout", Mechanism::Swap),
            ("swap_current", Mechanism::Swap),
            ("pgscan_kswapd", Mechanism::Reclaim),
            ("events_swap_max", Mechanism::Limits),
            ("miss_ratio", Mechanism::Faults),
            ("pgmajfault", Mechanism::Faults),
            ("psi_some_total_us", Mechanism::Pressure),
            ("reclaim_stall_s", Mechanism::Pressure),
            ("mem_used_pages", Mechanism::Memory),
            ("events_oom_kill", Mechanism::Limits),
            ("oom_kill", Mechanism::Limits),
            ("memcg:/a:pgmajfault", Mechanism::Groups),
            ("workload:db:end_s", Mechanism::Time),
            ("runtime_s", Mechanism::Time),
            ("damon:kdamond_cpu_s", Mechanism::Damon),
        ] {
            assert_eq!(Mechanism::of(name), m, "{name}");
        }
    }

    #[test]
    fn changes_are_grouped_ordered_and_cut() {
        let base = config(
            "policy=cost",
            &[
                ("accesses", 100.0, None),
                ("pgscan_kswapd", 1000.0, None),
                ("pgsteal_kswapd", 800.0, None),
                ("allocstall_normal", 10.0, None),
                ("pgrefill", 50.0, None),
                ("workingset_refault_file", 400.0, None),
                ("pswpout", 0.0, None),
                ("runtime_s", 10.0, None),
                ("psi_some_total_us", 500.0, None),
            ],
        );
        let other = config(
            "policy=mglru",
            &[
                ("accesses", 100.0, None),
                ("pgscan_kswapd", 1500.0, None),          // +50 %
                ("pgsteal_kswapd", 880.0, None),          // +10 %
                ("allocstall_normal", 12.0, None),        // +20 %
                ("pgrefill", 51.0, None),                 // +2 %: the 4th, cut
                ("workingset_refault_file", 100.0, None), // −75 %
                ("pswpout", 30.0, None),                  // from 0: first
                ("runtime_s", 10.05, None),               // +0.5 %: too small
                ("psi_some_total_us", 500.0, None),       // unchanged
            ],
        );
        let w = what_changed(&report(vec![base, other]));
        assert_eq!(w.len(), 1);
        assert_eq!(
            (w[0].config.as_str(), w[0].against.as_str()),
            ("policy=mglru", "policy=cost")
        );
        let names: Vec<&str> = w[0]
            .mechanisms
            .iter()
            .map(|m| m.mechanism.as_str())
            .collect();
        assert_eq!(names, ["swap", "refaults", "reclaim"]);
        assert_eq!(
            w[0].mechanisms[0].reading,
            "more anonymous memory went through swap: pswpout 0 → 30"
        );
        assert_eq!(
            w[0].mechanisms[1].reading,
            "fewer evicted pages were needed again: workingset_refault_file -75.0%"
        );
        assert_eq!(
            w[0].mechanisms[2].reading,
            "reclaim scanned or freed more: pgscan_kswapd +50.0%, allocstall_normal +20.0%, \
             pgsteal_kswapd +10.0%"
        );
        let text = what_changed_text(&w);
        assert!(
            text.contains("What changed, policy=mglru against policy=cost:"),
            "{text}"
        );
        assert!(
            text.contains("  reclaim    reclaim scanned or freed more"),
            "{text}"
        );
    }

    #[test]
    fn the_headline_total_decides_the_reading() {
        let base = config(
            "a",
            &[
                ("workingset_activate_file", 100.0, None),
                ("workingset_refault_anon", 0.0, None),
                ("workingset_refault_file", 1000.0, None),
                ("kswapd_cpu_s", 2.0, None),
                ("pgscan_kswapd", 1000.0, None),
                ("pgscan_direct", 0.0, None),
                ("psi_some_total_us", 10.0, None),
            ],
        );
        let other = config(
            "b",
            &[
                ("workingset_activate_file", 0.0, None),  // −100 %
                ("workingset_refault_anon", 50.0, None),  // from 0
                ("workingset_refault_file", 850.0, None), // −15 %: 1000 → 900 in all
                ("kswapd_cpu_s", 1.0, None),              // −50 %
                ("pgscan_kswapd", 1100.0, None),          // +10 %
                ("pgscan_direct", 0.0, None),
                ("psi_some_total_us", 200000.0, None), // ×20000
            ],
        );
        let w = what_changed(&report(vec![base, other]));
        let readings: Vec<&str> = w[0].mechanisms.iter().map(|m| m.reading.as_str()).collect();
        assert_eq!(
            readings,
            [
                "fewer evicted pages were needed again (workingset_refault_anon + \
                 workingset_refault_file -10.0%): workingset_refault_anon 0 → 50, \
                 workingset_activate_file -100.0%, workingset_refault_file -15.0%",
                "tasks stalled longer on memory: psi_some_total_us ×20000",
                "reclaim scanned or freed more (pgscan_kswapd + pgscan_direct +10.0%): \
                 kswapd_cpu_s -50.0%, pgscan_kswapd +10.0%",
            ]
        );
    }

    #[test]
    fn changes_within_the_runs_spread_are_noise() {
        let base = config("a", &[("pgscan_kswapd", 1000.0, Some(60.0))]);
        let within = config("b", &[("pgscan_kswapd", 1100.0, Some(50.0))]);
        let beyond = config("c", &[("pgscan_kswapd", 1200.0, Some(50.0))]);
        let w = what_changed(&report(vec![base, within, beyond]));
        assert!(w[0].mechanisms.is_empty());
        assert_eq!(w[1].mechanisms[0].changes[0].relative_pct, Some(20.0));
        assert!(what_changed_text(&w[..1]).contains("nothing by 1% or more"));
    }

    #[test]
    fn one_configuration_has_nothing_to_compare() {
        let r = report(vec![config("a", &[("pgscan_kswapd", 1.0, None)])]);
        assert!(what_changed(&r).is_empty());
        assert_eq!(what_changed_text(&[]), "");
    }
}
