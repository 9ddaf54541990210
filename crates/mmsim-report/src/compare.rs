//! A comparison of configurations as data: each configuration's runs with their metric
//! values and statistics, the compared axes, the metrics every run has, and the
//! scenario's published results beside the simulated changes ([`CompareReport`]).
//!
//! The configurations are the cartesian product of the compared axes' values
//! ([`combination`], named by [`config_name`]). What the axes set and how the
//! configurations are run is the caller's business (the `mmsim compare` command parses
//! flags into axes, writes each value into the scenario and runs it); this module
//! turns the results into the report, which serializes to the JSON
//! `mmsim compare --json` prints and reads back to the same value.

use std::collections::{BTreeMap, BTreeSet};

use mmsim_workloads::published::Published;
use mmsim_workloads::ScenarioResult;
use serde::{Deserialize, Serialize};

use crate::metrics::{
    memcg_metric_name, split_memcg_name, values, workload_metric_name, MEMCG_METRICS, METRICS,
    WORKLOAD_END, WORKLOAD_PREFIX,
};
use crate::published::{self, PublishedRow};
use crate::stats::Stats;

/// Configuration `index` of the cartesian product of axes with `sizes` values each,
/// as the index of its value on every axis: the first axis varies slowest, the last
/// fastest (mixed radix), so configuration 0 (the baseline) takes every axis's first
/// value. `index` must be below the product of `sizes`.
pub fn combination(sizes: &[usize], index: usize) -> Vec<usize> {
    let mut rem = index;
    let mut pick = vec![0; sizes.len()];
    for (k, &n) in sizes.iter().enumerate().rev() {
        pick[k] = rem % n;
        rem /= n;
    }
    pick
}

/// A configuration's name: its `key=value` pairs joined by commas
/// (`policy=cost,swappiness=60`), as [`ConfigReport::name`] and the published
/// results' `baseline` and `compared` write it.
pub fn config_name<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    pairs
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The metrics of a comparison, in table order: the [`METRICS`], then the
/// [`MEMCG_METRICS`] of each group (besides `/`) that every run of every configuration
/// has, groups in path order; then, in scenarios of several workloads, the end time of
/// each workload every run has, in the first run's workload order; DAMON's; and the
/// [`crate::metrics::THP_METRICS`] when some run has multi-size THP on; the
/// [`crate::metrics::TLB_METRICS`] when every run has the TLB model on.
pub fn metric_infos(configs: &[ConfigReport]) -> Vec<MetricInfo> {
    let mut out: Vec<MetricInfo> = METRICS
        .iter()
        .map(|m| MetricInfo {
            name: m.name.into(),
            about: m.about.into(),
        })
        .collect();
    let mut common: Option<BTreeSet<String>> = None;
    for run in configs.iter().flat_map(|c| &c.runs) {
        let groups: BTreeSet<String> = run
            .metrics
            .keys()
            .filter_map(|n| split_memcg_name(n).map(|(p, _)| p.to_string()))
            .collect();
        common = Some(match common {
            None => groups,
            Some(c) => c.intersection(&groups).cloned().collect(),
        });
    }
    for path in common.unwrap_or_default() {
        for m in MEMCG_METRICS {
            out.push(MetricInfo {
                name: memcg_metric_name(&path, m),
                about: format!("{path}: {}", m.about),
            });
        }
    }
    // Per-workload end times, in the first run's workload order, for workloads every
    // run has (scenarios with more than one workload).
    let runs: Vec<&RunReport> = configs.iter().flat_map(|c| &c.runs).collect();
    if let Some(first) = runs.first() {
        let mut names: Vec<&String> = first
            .metrics
            .keys()
            .filter(|n| n.starts_with(WORKLOAD_PREFIX))
            .collect();
        names.retain(|n| runs.iter().all(|r| r.metrics.contains_key(*n)));
        let order = |n: &str| {
            first
                .result
                .get("workloads")
                .and_then(|w| w.as_array())
                .and_then(|ws| {
                    ws.iter().position(|w| {
                        w.get("name")
                            .and_then(|x| x.as_str())
                            .is_some_and(|x| workload_metric_name(x) == n)
                    })
                })
                .unwrap_or(usize::MAX)
        };
        names.sort_by_key(|n| order(n));
        for n in names {
            let w = &n[WORKLOAD_PREFIX.len()..n.len() - WORKLOAD_END.len() - 1];
            out.push(MetricInfo {
                name: n.clone(),
                about: format!(
                    "workload {w}: simulated time by which its last event had run, seconds \
                     (its elapsed time if it started at 0)"
                ),
            });
        }
    }
    // DAMON's metrics (machine-wide, then scheme by scheme), where every
    // run has them.
    if let Some(first) = runs.first() {
        let actions: Vec<String> = first
            .result
            .pointer("/damon/contexts")
            .and_then(|c| c.as_array())
            .into_iter()
            .flatten()
            .flat_map(|c| {
                let ctx = c
                    .get("name")
                    .and_then(|n| n.as_str())
                    .unwrap_or("")
                    .to_string();
                c.get("schemes")
                    .and_then(|s| s.as_array())
                    .into_iter()
                    .flatten()
                    .map(move |s| {
                        let a = s.get("action").and_then(|a| a.as_str()).unwrap_or("");
                        format!("{ctx} scheme ({a})")
                    })
            })
            .collect();
        let mut damon: Vec<MetricInfo> = crate::metrics::DAMON_METRICS
            .iter()
            .map(|(n, a)| MetricInfo {
                name: n.to_string(),
                about: a.to_string(),
            })
            .collect();
        for (i, what) in actions.iter().enumerate() {
            for (stat, about) in crate::metrics::DAMOS_STATS {
                damon.push(MetricInfo {
                    name: format!("{}scheme{i}:{stat}", crate::metrics::DAMON_PREFIX),
                    about: format!("{what} {i}: {about}"),
                });
            }
        }
        damon.retain(|m| runs.iter().all(|r| r.metrics.contains_key(&m.name)));
        out.extend(damon);
    }
    // Multi-size THP's, when some run has large folios on (`mthp` in its result).
    let thp_on = runs.iter().any(|r| {
        r.result
            .get("mthp")
            .and_then(|m| m.as_array())
            .is_some_and(|m| !m.is_empty())
    });
    if thp_on {
        out.extend(crate::metrics::THP_METRICS.iter().map(|m| MetricInfo {
            name: m.name.into(),
            about: m.about.into(),
        }));
    }
    // The data TLB's, when every run has the TLB model on (`tlb` in its result).
    if !runs.is_empty() && runs.iter().all(|r| r.result.get("tlb").is_some()) {
        out.extend(crate::metrics::TLB_METRICS.iter().map(|m| MetricInfo {
            name: m.name.into(),
            about: m.about.into(),
        }));
    }
    out
}

/// One setting of a configuration: a `[machine]` key and its value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// The key as `--set` takes it (`swappiness`, `swap.device`, `policy.name`).
    pub key: String,
    /// The value as given.
    pub value: String,
}

/// One run of a configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// The seed it ran with.
    pub seed: u64,
    /// Whether Ctrl-C stopped it: its counters cover only `events` events.
    pub partial: bool,
    /// Events simulated (warmup included).
    pub events: u64,
    /// Every metric's value, by name (`null`: undefined).
    pub metrics: BTreeMap<String, Option<f64>>,
    /// The whole result, as `mmsim run --json` prints it.
    pub result: serde_json::Value,
}

/// One configuration: its settings and its runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigReport {
    /// Its name, `key=value` pairs joined by commas (`policy=cost,swappiness=60`).
    pub name: String,
    /// Its settings, one per compared axis, in axis order.
    pub settings: Vec<Setting>,
    /// Whether one of its runs was stopped by Ctrl-C.
    pub partial: bool,
    /// Its runs, seeds in increasing order.
    pub runs: Vec<RunReport>,
    /// Each metric's statistics over the runs, by name (`null`: undefined in every run).
    pub stats: BTreeMap<String, Option<Stats>>,
}

/// A compared axis: a setting and the values it takes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AxisReport {
    /// The key (`policy`, `cost_variant`, or a `--set` key).
    pub key: String,
    /// The flag that gave it (`--policy`, `--set swappiness`).
    pub flag: String,
    /// Its values, in order.
    pub values: Vec<String>,
}

/// A metric's name and meaning, for readers of the JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetricInfo {
    /// The name used in `metrics` and `stats`.
    pub name: String,
    /// What it is, with its unit.
    pub about: String,
}

/// What `mmsim compare --json` prints; it deserializes back to the same value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    /// The layout of this JSON ([`mmsim_workloads::SCHEMA_VERSION`]).
    #[serde(default)]
    pub schema_version: u32,
    /// The scenario's name.
    pub scenario: String,
    /// The seed of the first run of every configuration; repeat `i` uses `seed + i`.
    pub seed: u64,
    /// Runs per configuration.
    pub repeat: u32,
    /// Events run before the counters were zeroed, as the scenario says.
    pub warmup_events: u64,
    /// Whether Ctrl-C stopped the comparison: the last configuration's last run is
    /// partial and later ones are missing.
    pub partial: bool,
    /// The compared axes; the configurations are their cartesian product, the first
    /// axis varying slowest.
    pub axes: Vec<AxisReport>,
    /// The metrics, in table order.
    pub metrics: Vec<MetricInfo>,
    /// The configurations run, the baseline first.
    pub configs: Vec<ConfigReport>,
    /// The scenario's published results beside the simulated changes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<PublishedRow>,
    /// What changed in each configuration against the baseline, by mechanism
    /// ([`crate::changes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub what_changed: Vec<crate::changes::WhatChanged>,
}

impl ConfigReport {
    /// Builds the report of a configuration from its results.
    pub fn new(name: String, settings: Vec<Setting>, results: &[ScenarioResult]) -> Self {
        let runs: Vec<RunReport> = results
            .iter()
            .map(|r| RunReport {
                seed: r.seed,
                partial: r.partial,
                events: r.events,
                metrics: values(r),
                // A ScenarioResult always serializes (string keys, finite numbers or
                // null).
                result: serde_json::to_value(r).unwrap_or(serde_json::Value::Null),
            })
            .collect();
        let names: BTreeSet<&String> = runs.iter().flat_map(|r| r.metrics.keys()).collect();
        let stats = names
            .into_iter()
            .map(|name| {
                let v: Vec<Option<f64>> = runs
                    .iter()
                    .map(|r| r.metrics.get(name).copied().flatten())
                    .collect();
                (name.clone(), Stats::of(&v))
            })
            .collect();
        ConfigReport {
            name,
            settings,
            partial: runs.iter().any(|r| r.partial),
            runs,
            stats,
        }
    }

    /// The statistics of metric `name`.
    pub fn stat(&self, name: &str) -> Option<&Stats> {
        self.stats.get(name).and_then(Option::as_ref)
    }

    /// Keeps only the metrics named in `keep` (in the runs and the statistics).
    pub fn retain_metrics(&mut self, keep: &BTreeSet<&str>) {
        for r in &mut self.runs {
            r.metrics.retain(|n, _| keep.contains(n.as_str()));
        }
        self.stats.retain(|n, _| keep.contains(n.as_str()));
    }
}

impl CompareReport {
    /// An empty comparison of scenario `scenario` over `axes`: no configuration yet.
    /// Push each configuration's [`ConfigReport`] onto `configs` (the baseline first),
    /// set `partial` if the comparison was stopped, then call [`CompareReport::finish`].
    pub fn new(
        scenario: impl Into<String>,
        seed: u64,
        repeat: u32,
        warmup_events: u64,
        axes: Vec<AxisReport>,
    ) -> Self {
        CompareReport {
            schema_version: mmsim_workloads::SCHEMA_VERSION,
            scenario: scenario.into(),
            seed,
            repeat,
            warmup_events,
            partial: false,
            axes,
            metrics: Vec::new(),
            configs: Vec::new(),
            published: Vec::new(),
            what_changed: Vec::new(),
        }
    }

    /// Completes the report once every configuration has run: the metrics become those
    /// every run has ([`metric_infos`]; per-group and per-workload metrics of the
    /// others are dropped from the runs and statistics), and `published` the rows of
    /// the scenario's published results over the configurations
    /// ([`published::rows`]), and `what_changed` each configuration's largest changes
    /// by mechanism ([`crate::changes::what_changed`]). Returns a note for each published entry that no pair
    /// of configurations shows.
    pub fn finish(&mut self, published: &[Published]) -> Vec<String> {
        self.metrics = metric_infos(&self.configs);
        let keep: BTreeSet<&str> = self.metrics.iter().map(|m| m.name.as_str()).collect();
        for c in &mut self.configs {
            c.retain_metrics(&keep);
        }
        let (rows, notes) = published::rows(published, &self.configs);
        self.published = rows;
        self.what_changed = crate::changes::what_changed(self);
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_vary_the_last_axis_fastest() {
        let all: Vec<Vec<usize>> = (0..6).map(|i| combination(&[2, 3], i)).collect();
        assert_eq!(
            all,
            [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]].map(Vec::from)
        );
        assert_eq!(combination(&[], 0), Vec::<usize>::new());
        assert_eq!(
            config_name([("policy", "cost"), ("swappiness", "60")]),
            "policy=cost,swappiness=60"
        );
    }
}
