//! The scenario's published results (`[[published]]`, see
//! [`mmsim_workloads::published`]) judged against the simulated changes of a
//! comparison.
//!
//! Each entry becomes one row per pair of compared configurations that have its
//! baseline and compared settings and agree on every other compared setting; the row
//! says whether the simulated change has the published direction. Entry metric names
//! can be checked before anything runs ([`check_metrics`]), so a misspelt metric does
//! not cost a comparison. The rows as a table: [`crate::export::text::published_table`].

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use mmsim_workloads::published::{agrees, settings, Published};
use mmsim_workloads::Scenario;

use crate::compare::ConfigReport;
use crate::metrics::{workload_metric_name, MEMCG_METRICS, MEMCG_PREFIX, METRICS};
use crate::stats::change_pct;

/// A published change beside the simulated one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublishedRow {
    /// The metric.
    pub metric: String,
    /// The baseline configuration's name in this comparison.
    pub baseline: String,
    /// The compared configuration's name in this comparison.
    pub compared: String,
    /// The change the source published, percent.
    pub published_pct: f64,
    /// The simulated change of the means, percent (None: undefined, e.g. a zero baseline).
    pub simulated_pct: Option<f64>,
    /// Whether the simulated change has the published direction (changes within ±1 %
    /// count as none); None when the simulated change is undefined.
    pub agrees: Option<bool>,
    /// Where the published number comes from.
    pub source: String,
    /// Why mmsim does not model the change (the entry's `not_modelled`): then
    /// `agrees` is None and the row is not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_modelled: Option<String>,
}

/// Checks that every entry names a metric a comparison of `s` has: Err is
/// (`published[i].metric`, message).
pub fn check_metrics(s: &Scenario) -> Result<(), (String, String)> {
    let groups: BTreeSet<&str> = s
        .cgroups
        .iter()
        .map(|c| c.path.as_str())
        .filter(|&p| p != "/")
        .collect();
    for (i, p) in s.published.iter().enumerate() {
        let name = p.metric.as_str();
        let workload = s.workloads.len() > 1
            && s.workloads
                .iter()
                .enumerate()
                .any(|(k, w)| workload_metric_name(&w.display_name(k)) == name);
        let nr_schemes = s.machine.damon.as_ref().map(|d| {
            d.kdamonds
                .iter()
                .flat_map(|k| &k.contexts)
                .map(|c| c.schemes.len())
                .sum::<usize>()
                + d.lru_sort.as_ref().filter(|p| p.enabled).map_or(0, |_| 2)
                + d.reclaim.as_ref().filter(|p| p.enabled).map_or(0, |_| 1)
        });
        let known = workload
            || METRICS.iter().any(|m| m.name == name)
            || crate::metrics::THP_METRICS.iter().any(|m| m.name == name)
            || crate::metrics::TLB_METRICS.iter().any(|m| m.name == name)
            || nr_schemes.is_some_and(|n| crate::metrics::is_damon_metric(name, n))
            || name
                .strip_prefix(MEMCG_PREFIX)
                .and_then(|r| r.rsplit_once(':'))
                .is_some_and(|(path, m)| {
                    groups.contains(path) && MEMCG_METRICS.iter().any(|x| x.name == m)
                });
        if !known {
            let per_group: Vec<&str> = MEMCG_METRICS.iter().map(|m| m.name).collect();
            return Err((
                format!("published[{i}].metric"),
                format!(
                    "unknown metric `{name}`; metrics are those `mmsim compare` lists (e.g. \
                     runtime_s, pgmajfault), workload:<name>:end_s in scenarios of several \
                     workloads, damon:kdamond_cpu_pct and damon:scheme<i>:<stat> with DAMON, \
                     and memcg:<group>:<{}> for the groups {}",
                    per_group.join("|"),
                    if groups.is_empty() {
                        "declared with [[cgroup]] (this scenario has none)".to_string()
                    } else {
                        groups.into_iter().collect::<Vec<_>>().join(", ")
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// The axes the entries compare, for `mmsim compare NAME` without axis flags: each key
/// with the values its entries use, in order of first appearance.
pub fn axes(entries: &[Published]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for e in entries {
        for name in [&e.baseline, &e.compared] {
            for (k, v) in settings(name).unwrap_or_default() {
                match out.iter_mut().find(|(key, _)| key == k) {
                    Some((_, vals)) if !vals.iter().any(|x| x == v) => vals.push(v.to_string()),
                    Some(_) => {}
                    None => out.push((k.to_string(), vec![v.to_string()])),
                }
            }
        }
    }
    out
}

/// The rows of `entries` over the compared configurations, and a note for each entry
/// that no pair of configurations shows.
pub fn rows(entries: &[Published], configs: &[ConfigReport]) -> (Vec<PublishedRow>, Vec<String>) {
    let pairs: Vec<Vec<(&str, &str)>> = configs
        .iter()
        .map(|c| settings(&c.name).unwrap_or_default())
        .collect();
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let (Ok(base), Ok(comp)) = (settings(&e.baseline), settings(&e.compared)) else {
            continue;
        };
        let keys = e.keys();
        let has = |c: &[(&str, &str)], want: &[(&str, &str)]| want.iter().all(|p| c.contains(p));
        let others = |c: &[(&str, &str)]| -> Vec<(String, String)> {
            c.iter()
                .filter(|(k, _)| !keys.contains(k))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let before = rows.len();
        for (bi, b) in pairs.iter().enumerate().filter(|(_, p)| has(p, &base)) {
            for (ci, c) in pairs.iter().enumerate().filter(|(_, p)| has(p, &comp)) {
                if others(b) != others(c) {
                    continue;
                }
                let mean = |j: usize| configs[j].stat(&e.metric).map(|s| s.mean);
                let simulated = match (mean(bi), mean(ci)) {
                    (Some(x), Some(y)) => change_pct(x, y),
                    _ => None,
                };
                rows.push(PublishedRow {
                    metric: e.metric.clone(),
                    baseline: configs[bi].name.clone(),
                    compared: configs[ci].name.clone(),
                    published_pct: e.change_pct,
                    simulated_pct: simulated,
                    agrees: simulated
                        .filter(|_| e.not_modelled.is_none())
                        .map(|s| agrees(e.change_pct, s)),
                    source: e.source.clone(),
                    not_modelled: e.not_modelled.clone(),
                });
            }
        }
        if rows.len() == before && !configs.is_empty() {
            notes.push(format!(
                "published[{i}] ({}: {} against {}) needs both configurations; compare \
                 without axis flags to run the ones the scenario publishes",
                e.metric, e.compared, e.baseline
            ));
        }
    }
    (rows, notes)
}
