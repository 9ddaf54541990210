//! Reproducing the published experiments ("seeds"): `mmsim reproduce [SEED|all]`.
//!
//! The registry is the embedded scenarios: a scenario belongs to seed NNN when its
//! `[[published]]` entries' sources start with `seed NNN`
//! ([`Published::seed`](mmsim_workloads::published::Published::seed)); adding a seed
//! is adding such a scenario to `mmsim_workloads::EMBEDDED_SCENARIOS` (and, when its
//! full run takes more than a few seconds, a scaled-down version to
//! `mmsim_workloads::QUICK_SCENARIOS` for `--quick`).
//!
//! For each selected seed, [`plan`] lists its experiments: each scenario with the
//! configurations its entries compare (the axes of
//! [`published::axes`](crate::published::axes), every combination, the first axis
//! varying slowest, as `mmsim compare NAME` without axis flags). [`run`] runs every
//! configuration through a runner the caller gives (the CLI's shows progress; the
//! plain one is [`run_plain`]), builds each experiment's
//! [`CompareReport`], and judges every published change
//! ([`ReproducedRow`]): the direction agrees when the simulated change has the
//! published sign, changes within ±1 % counting as none; a change from a zero baseline
//! (`new` in the compare table) is an increase. A seed is *reproduced* when every
//! direction agrees, *disagrees* when one does not, and *undetermined* otherwise (a
//! metric undefined in a run). Magnitudes are shown as the ratio |simulated| /
//! |published|: the scenarios scale the experiments down and model their programs, so
//! magnitudes are a reference, not a target.

use std::collections::BTreeMap;

use mmsim_workloads::published::{agrees, Published};
use mmsim_workloads::{
    embedded_scenario, quick_scenario, Scenario, ScenarioResult, WorkloadError, EMBEDDED_SCENARIOS,
    SCHEMA_VERSION,
};
use serde::{Deserialize, Serialize};

use crate::compare::{combination, config_name, AxisReport, CompareReport, ConfigReport, Setting};
use crate::published::axes;

/// The published experiments mmsim knows by number, with their sources: (seed, title).
/// A seed is reproducible once an embedded scenario carries its `[[published]]` entries.
pub const SEEDS: &[(&str, &str)] = &[
    (
        "000",
        "Yu Zhao, \"mm: multi-gen LRU\" (v9, 2022): MGLRU with fio, memcached and a Chrome OS client",
    ),
    (
        "001",
        "Johannes Weiner, \"mm: balance LRU lists based on relative thrashing\" (2016, v5.8): the cost model with pgbench",
    ),
    (
        "002",
        "SeongJae Park, \"Extend DAMOS for Proactive LRU-lists Sorting\" (2022): DAMON_LRU_SORT",
    ),
    (
        "003",
        "Ryan Roberts, \"variable-order, large folios for anonymous memory\" (RFC v2, 2023): multi-size THP",
    ),
    (
        "004",
        "Michal Hocko, \"memcg, vmscan: integrate soft reclaim tighter with zone shrinking code\" (2013): the v1 soft-limit rework",
    ),
];

/// Why a reproduction cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The selection names no seed with experiments.
    #[error("{0}")]
    UnknownSeed(String),
    /// An embedded scenario or a published entry is wrong (a bug in the registry).
    #[error(transparent)]
    Scenario(#[from] WorkloadError),
    /// A published entry's setting cannot be applied to its scenario.
    #[error("{scenario}: configuration `{config}`: {message}")]
    Setting {
        /// The scenario.
        scenario: String,
        /// The configuration's name.
        config: String,
        /// What is wrong.
        message: String,
    },
}

/// One configuration of an experiment, ready to run.
#[derive(Clone, Debug)]
pub struct PlannedConfig {
    /// Its name (`policy=cost`), as the published entries write it.
    pub name: String,
    /// Its settings, one per axis.
    pub settings: Vec<Setting>,
    /// The scenario with the settings applied.
    pub scenario: Scenario,
}

/// One experiment of a seed: a scenario and the configurations its published entries
/// compare.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// The seed (`"004"`).
    pub seed: String,
    /// The embedded scenario's name.
    pub scenario: String,
    /// Whether the scaled-down (`--quick`) version runs.
    pub quick: bool,
    /// This seed's entries of the scenario.
    pub published: Vec<Published>,
    /// The compared axes.
    pub axes: Vec<AxisReport>,
    /// The configurations, baseline first.
    pub configs: Vec<PlannedConfig>,
}

/// The seeds that have experiments among `scenarios`, in order, each with its
/// scenarios' names.
fn seeds_of(scenarios: &[Scenario]) -> Vec<(String, Vec<String>)> {
    let mut seeds: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in scenarios {
        for p in &s.published {
            if let Some(seed) = p.seed() {
                let list = seeds.entry(seed.to_string()).or_default();
                if !list.contains(&s.name) {
                    list.push(s.name.clone());
                }
            }
        }
    }
    seeds.into_iter().collect()
}

/// The embedded scenarios, parsed.
fn embedded() -> Result<Vec<Scenario>, WorkloadError> {
    EMBEDDED_SCENARIOS
        .iter()
        .filter_map(|(name, _)| embedded_scenario(name))
        .collect()
}

/// The seeds that have embedded experiments, in order, each with its scenarios' names.
pub fn registry() -> Vec<(String, Vec<String>)> {
    seeds_of(&embedded().unwrap_or_default())
}

/// The title of a seed (see [`SEEDS`]).
pub fn title(seed: &str) -> &'static str {
    SEEDS
        .iter()
        .find(|(s, _)| *s == seed)
        .map_or("", |(_, t)| t)
}

/// The seeds `selection` names: `all`, or one seed as `004` or `4`.
pub fn select(selection: &str) -> Result<Vec<String>, PlanError> {
    select_from(selection, &registry(), "embedded")
}

/// The seeds of `known` that `selection` names; `place` says where they were looked for
/// (`embedded`, `given`).
fn select_from(
    selection: &str,
    known: &[(String, Vec<String>)],
    place: &str,
) -> Result<Vec<String>, PlanError> {
    let names: Vec<&str> = known.iter().map(|(s, _)| s.as_str()).collect();
    if selection == "all" {
        return Ok(names.iter().map(|s| s.to_string()).collect());
    }
    let sel = selection.trim();
    let want = sel
        .strip_prefix("seed")
        .unwrap_or(sel)
        .trim_start_matches([' ', '-', '_']);
    let padded = match want.parse::<u16>() {
        Ok(n) if want.bytes().all(|b| b.is_ascii_digit()) && n < 1000 => format!("{n:03}"),
        _ => String::new(),
    };
    if names.contains(&padded.as_str()) {
        return Ok(vec![padded]);
    }
    let missing: Vec<String> = SEEDS
        .iter()
        .filter(|(s, _)| !names.contains(s))
        .map(|(s, _)| s.to_string())
        .collect();
    let why = if SEEDS.iter().any(|(s, _)| *s == padded) {
        format!("seed {padded} has no {place} experiment yet")
    } else {
        format!("unknown seed `{selection}`")
    };
    Err(PlanError::UnknownSeed(format!(
        "{why}; seeds with experiments: {}{}, or `all`",
        names.join(", "),
        if missing.is_empty() {
            String::new()
        } else {
            format!(" (not yet: {})", missing.join(", "))
        }
    )))
}

/// The experiments of the seeds `selection` names (see [`select`]) among the embedded
/// scenarios, with the quick (scaled-down) scenarios where `quick` asks for them and
/// one exists.
pub fn plan(selection: &str, quick: bool) -> Result<Vec<Experiment>, PlanError> {
    plan_in(selection, embedded()?, quick, "embedded")
}

/// The experiments of the seeds `selection` names among `scenarios` (scenario files
/// being written for a new seed; no quick versions): `mmsim reproduce --scenario FILE`.
pub fn plan_scenarios(
    selection: &str,
    scenarios: Vec<Scenario>,
) -> Result<Vec<Experiment>, PlanError> {
    if let Some(s) = scenarios
        .iter()
        .find(|s| s.published.iter().all(|p| p.seed().is_none()))
    {
        return Err(PlanError::UnknownSeed(format!(
            "{}: no [[published]] entry names its seed: a source must start with `seed NNN`",
            s.source
        )));
    }
    plan_in(selection, scenarios, false, "given")
}

fn plan_in(
    selection: &str,
    scenarios: Vec<Scenario>,
    quick: bool,
    place: &str,
) -> Result<Vec<Experiment>, PlanError> {
    let known = seeds_of(&scenarios);
    let mut out = Vec::new();
    for seed in select_from(selection, &known, place)? {
        let names = known
            .iter()
            .find(|(s, _)| *s == seed)
            .map(|(_, n)| n.clone())
            .unwrap_or_default();
        for name in names {
            let full = scenarios
                .iter()
                .find(|s| s.name == name)
                .expect("listed")
                .clone();
            let published: Vec<Published> = full
                .published
                .iter()
                .filter(|p| p.seed() == Some(seed.as_str()))
                .cloned()
                .collect();
            let small = if quick { quick_scenario(&name) } else { None };
            let is_quick = small.is_some();
            let base = match small {
                Some(s) => s?,
                None => full,
            };
            out.push(experiment(&seed, &name, is_quick, base, published)?);
        }
    }
    Ok(out)
}

/// The experiment of `base` under the configurations `published` compares.
fn experiment(
    seed: &str,
    name: &str,
    quick: bool,
    base: Scenario,
    published: Vec<Published>,
) -> Result<Experiment, PlanError> {
    crate::published::check_metrics(&base).map_err(|(field, message)| WorkloadError::Invalid {
        file: base.source.clone(),
        field,
        message,
    })?;
    let axes: Vec<AxisReport> = axes(&published)
        .into_iter()
        .map(|(key, values)| AxisReport {
            flag: match key.as_str() {
                "policy" => "--policy".to_string(),
                "cost_variant" => "--cost-variant".to_string(),
                k => format!("--set {k}"),
            },
            key,
            values,
        })
        .collect();
    let sizes: Vec<usize> = axes.iter().map(|a| a.values.len()).collect();
    let total: usize = sizes.iter().product();
    let mut configs = Vec::with_capacity(total);
    for i in 0..total {
        let pick = combination(&sizes, i);
        let pairs: Vec<(&str, &str)> = axes
            .iter()
            .zip(&pick)
            .map(|(a, &j)| (a.key.as_str(), a.values[j].as_str()))
            .collect();
        let cname = config_name(pairs.iter().copied());
        let mut s = base.clone();
        let mut set = Vec::with_capacity(pairs.len());
        for (k, v) in &pairs {
            crate::settings::apply(&mut s.machine, k, v).map_err(|message| PlanError::Setting {
                scenario: name.to_string(),
                config: cname.clone(),
                message,
            })?;
            set.push(Setting {
                key: crate::settings::machine_path(k).to_string(),
                value: v.to_string(),
            });
        }
        s.validate()?;
        configs.push(PlannedConfig {
            name: cname,
            settings: set,
            scenario: s,
        });
    }
    Ok(Experiment {
        seed: seed.to_string(),
        scenario: name.to_string(),
        quick,
        published,
        axes,
        configs,
    })
}

/// Events all runs of the plan will simulate, if every scenario says.
pub fn expected_events(plan: &[Experiment]) -> Option<u64> {
    plan.iter()
        .flat_map(|e| &e.configs)
        .try_fold(0u64, |n, c| n.checked_add(c.scenario.expected_events()?))
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A published change beside the simulated one, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReproducedRow {
    /// The metric (a `mmsim compare` metric name).
    pub metric: String,
    /// The baseline configuration.
    pub baseline: String,
    /// The compared configuration.
    pub compared: String,
    /// The change the source published, percent.
    pub published_pct: f64,
    /// The metric's mean under the baseline (None: undefined).
    pub baseline_value: Option<f64>,
    /// Its mean under the compared configuration.
    pub compared_value: Option<f64>,
    /// The simulated change, percent (None: undefined, e.g. from a zero baseline).
    pub simulated_pct: Option<f64>,
    /// Whether the simulated change has the published direction (None: a value is
    /// undefined).
    pub agrees: Option<bool>,
    /// |simulated| / |published| (None when either change is undefined or zero, or
    /// the change is not modelled).
    pub magnitude_ratio: Option<f64>,
    /// Where the published number comes from.
    pub source: String,
    /// Why mmsim does not model the change (the entry's `not_modelled`): the row is
    /// shown but not judged (`agrees` None) and counts in no verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_modelled: Option<String>,
}

impl ReproducedRow {
    /// Whether the row is judged (its change is one mmsim models).
    pub fn judged(&self) -> bool {
        self.not_modelled.is_none()
    }
}

/// What a seed's rows say together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every direction agrees.
    Reproduced,
    /// At least one direction disagrees.
    Disagrees,
    /// None disagrees, but some could not be judged (or there are no rows).
    Undetermined,
}

impl Verdict {
    /// The verdict of a set of judgements.
    pub fn of(agrees: impl IntoIterator<Item = Option<bool>>) -> Verdict {
        let mut any = false;
        let mut unknown = false;
        for a in agrees {
            any = true;
            match a {
                Some(false) => return Verdict::Disagrees,
                None => unknown = true,
                Some(true) => {}
            }
        }
        if any && !unknown {
            Verdict::Reproduced
        } else {
            Verdict::Undetermined
        }
    }

    /// As the tables write it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Disagrees => "DISAGREES",
            Verdict::Undetermined => "undetermined",
        }
    }
}

/// One experiment's runs and judged rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExperimentReport {
    /// The embedded scenario.
    pub scenario: String,
    /// Whether its quick version ran.
    pub quick: bool,
    /// The scenario that ran (before the compared settings), as TOML.
    pub scenario_toml: String,
    /// The published changes, judged.
    pub rows: Vec<ReproducedRow>,
    /// The comparison of its configurations, as `mmsim compare --json` prints it.
    pub compare: CompareReport,
}

/// One seed's experiments and verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedReport {
    /// The seed (`"004"`).
    pub seed: String,
    /// Its title (author, series, year).
    pub title: String,
    /// Every direction agrees, one disagrees, or undetermined.
    pub verdict: Verdict,
    /// Its experiments.
    pub experiments: Vec<ExperimentReport>,
}

/// The counts over every seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Seeds run.
    pub seeds: usize,
    /// Published changes judged.
    pub rows: usize,
    /// Directions that agree.
    pub agree: usize,
    /// Directions that disagree.
    pub disagree: usize,
    /// Rows that could not be judged.
    pub undetermined: usize,
    /// Published changes mmsim does not model (shown, not judged, not in `rows`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_modelled: usize,
    /// The verdict over every row.
    pub verdict: Verdict,
}

/// What `mmsim reproduce --json` prints; it deserializes back to the same value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReproduceReport {
    /// The layout of this JSON ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// Whether the quick versions were asked for.
    pub quick: bool,
    /// Whether Ctrl-C stopped it: the last experiment is partial, later ones missing.
    pub partial: bool,
    /// Every seed run.
    pub seeds: Vec<SeedReport>,
    /// Counts over every seed.
    pub summary: Summary,
}

impl ReproduceReport {
    /// Whether a direction disagrees (the CLI's exit status is then non-zero).
    pub fn disagrees(&self) -> bool {
        self.summary.disagree > 0
    }

    /// Every experiment, with its seed.
    pub fn experiments(&self) -> impl Iterator<Item = (&SeedReport, &ExperimentReport)> {
        self.seeds
            .iter()
            .flat_map(|s| s.experiments.iter().map(move |e| (s, e)))
    }
}

/// The rows of an experiment from its finished comparison.
pub fn judge(published: &[Published], report: &CompareReport) -> Vec<ReproducedRow> {
    let (rows, _) = crate::published::rows(published, &report.configs);
    judge_rows(&rows, report)
}

/// A comparison's published rows ([`CompareReport::published`]) judged with the
/// means of `report`'s configurations.
pub fn judge_rows(
    rows: &[crate::published::PublishedRow],
    report: &CompareReport,
) -> Vec<ReproducedRow> {
    let mean = |config: &str, metric: &str| {
        report
            .configs
            .iter()
            .find(|c| c.name == config)
            .and_then(|c| c.stat(metric))
            .map(|s| s.mean)
    };
    rows.iter()
        .cloned()
        .map(|r| {
            let b = mean(&r.baseline, &r.metric);
            let c = mean(&r.compared, &r.metric);
            // A change from zero is an increase (`new` in the compare table).
            let direction = match (r.simulated_pct, b, c) {
                (Some(p), _, _) => Some(p),
                (None, Some(0.0), Some(c)) => Some(if c > 0.0 {
                    f64::INFINITY
                } else if c < 0.0 {
                    f64::NEG_INFINITY
                } else {
                    0.0
                }),
                _ => None,
            };
            let magnitude_ratio = r
                .simulated_pct
                .filter(|_| r.published_pct != 0.0 && r.not_modelled.is_none())
                .map(|s| s.abs() / r.published_pct.abs());
            ReproducedRow {
                agrees: direction
                    .filter(|_| r.not_modelled.is_none())
                    .map(|d| agrees(r.published_pct, d)),
                magnitude_ratio,
                baseline_value: b,
                compared_value: c,
                metric: r.metric,
                baseline: r.baseline,
                compared: r.compared,
                published_pct: r.published_pct,
                simulated_pct: r.simulated_pct,
                source: r.source,
                not_modelled: r.not_modelled,
            }
        })
        .collect()
}

/// Runs every configuration of `plan` with `runner` (called with the experiment, the
/// configuration, its index among all runs and their number) and judges the published
/// changes. A partial result (Ctrl-C) ends the reproduction there: the report is marked
/// partial and holds what ran.
pub fn run<E>(
    plan: &[Experiment],
    quick: bool,
    mut runner: impl FnMut(&Experiment, &PlannedConfig, usize, usize) -> Result<ScenarioResult, E>,
) -> Result<ReproduceReport, E> {
    let total: usize = plan.iter().map(|e| e.configs.len()).sum();
    let mut done = 0;
    let mut partial = false;
    let mut seeds: Vec<SeedReport> = Vec::new();
    for e in plan {
        if partial {
            break;
        }
        let base = &e.configs[0].scenario;
        let mut report = CompareReport::new(
            e.scenario.clone(),
            base.seed,
            1,
            base.warmup_events.unwrap_or(0),
            e.axes.clone(),
        );
        for c in &e.configs {
            let result = runner(e, c, done, total)?;
            done += 1;
            partial = result.partial;
            report.configs.push(ConfigReport::new(
                c.name.clone(),
                c.settings.clone(),
                &[result],
            ));
            if partial {
                break;
            }
        }
        report.partial = partial;
        report.finish(&e.published);
        let rows = judge(&e.published, &report);
        let exp = ExperimentReport {
            scenario: e.scenario.clone(),
            quick: e.quick,
            scenario_toml: scenario_toml(e),
            rows,
            compare: report,
        };
        match seeds.last_mut().filter(|s| s.seed == e.seed) {
            Some(s) => s.experiments.push(exp),
            None => seeds.push(SeedReport {
                seed: e.seed.clone(),
                title: title(&e.seed).to_string(),
                verdict: Verdict::Undetermined,
                experiments: vec![exp],
            }),
        }
    }
    for s in &mut seeds {
        s.verdict = Verdict::of(
            s.experiments
                .iter()
                .flat_map(|e| e.rows.iter().filter(|r| r.judged()).map(|r| r.agrees)),
        );
    }
    let all = || {
        seeds
            .iter()
            .flat_map(|s| &s.experiments)
            .flat_map(|e| &e.rows)
    };
    let rows: Vec<Option<bool>> = all().filter(|r| r.judged()).map(|r| r.agrees).collect();
    let not_modelled = all().filter(|r| !r.judged()).count();
    let summary = Summary {
        seeds: seeds.len(),
        rows: rows.len(),
        agree: rows.iter().filter(|a| **a == Some(true)).count(),
        disagree: rows.iter().filter(|a| **a == Some(false)).count(),
        undetermined: rows.iter().filter(|a| a.is_none()).count(),
        not_modelled,
        verdict: Verdict::of(rows.iter().copied()),
    };
    Ok(ReproduceReport {
        schema_version: SCHEMA_VERSION,
        quick,
        partial,
        seeds,
        summary,
    })
}

/// The experiment's scenario as TOML: its baseline configuration's, with the published
/// entries it reproduces.
fn scenario_toml(e: &Experiment) -> String {
    let mut s = e.configs[0].scenario.clone();
    s.published = e.published.clone();
    s.to_toml_string()
}

/// [`run`] with [`mmsim_workloads::run_scenario`] and no progress.
pub fn run_plain(plan: &[Experiment], quick: bool) -> Result<ReproduceReport, WorkloadError> {
    run(plan, quick, |_, c, _, _| {
        mmsim_workloads::run_scenario(&c.scenario, &mut Default::default())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_is_the_embedded_scenarios_by_seed() {
        let r = registry();
        let seeds: Vec<&str> = r.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(seeds, ["000", "001", "002", "003", "004"]);
        assert_eq!(r[0].1, ["fio-randread", "memcached", "many-tabs"]);
        assert_eq!(r[1].1, ["default"]);
        assert_eq!(r[2].1, ["plrus-parsec-like"]);
        assert_eq!(
            r[3].1,
            [
                "mthp-page-fault1",
                "mthp-sparse-touch",
                "mthp-kbuild",
                "mthp-malloc1",
                "mthp-page-fault2",
                "mthp-page-fault3",
                "mthp-read1",
                "mthp-read2",
                "mthp-mmap1"
            ]
        );
        assert_eq!(
            r[4].1,
            [
                "softlimit-kbuild",
                "softlimit-stream-vs-eater",
                "softlimit-kbuild-vs-eater"
            ]
        );
        assert_eq!(select("4").unwrap(), ["004"]);
        assert_eq!(select("seed-001").unwrap(), ["001"]);
        assert_eq!(
            select("1000").unwrap_err().to_string(),
            "unknown seed `1000`; seeds with experiments: 000, 001, 002, 003, 004, or `all`"
        );
    }

    #[test]
    fn quick_versions_keep_what_the_published_entries_name() {
        for (name, _) in mmsim_workloads::QUICK_SCENARIOS {
            let full = embedded_scenario(name).expect("embedded").unwrap();
            let quick = quick_scenario(name).unwrap().unwrap();
            // The one quick scenario and its five published changes.
            assert_eq!((*name, full.published.len()), ("default", 5));
            assert!(quick.published.is_empty(), "{name}");
            assert_eq!(quick.name, *name);
            let names = |s: &Scenario| -> Vec<String> {
                s.workloads
                    .iter()
                    .enumerate()
                    .map(|(i, w)| w.display_name(i))
                    .collect()
            };
            assert_eq!(names(&quick), names(&full), "{name}");
            let groups = |s: &Scenario| -> Vec<String> {
                s.cgroups.iter().map(|c| c.path.clone()).collect()
            };
            assert_eq!(groups(&quick), groups(&full), "{name}");
            assert!(quick.expected_events() < full.expected_events(), "{name}");
        }
        let p = plan("001", true).unwrap();
        assert!(p[0].quick);
        let names: Vec<&str> = p[0].configs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["policy=scanned-rotated", "policy=cost"]);
        assert_eq!(
            p[0].configs[0].scenario.machine.policy.name,
            mmsim_core::PolicyName::ScannedRotated
        );
        assert_eq!(p[0].published.len(), 5);
    }

    #[test]
    fn verdicts() {
        use Verdict::*;
        assert_eq!(Verdict::of([Some(true), Some(true)]), Reproduced);
        assert_eq!(Verdict::of([Some(true), None, Some(false)]), Disagrees);
        assert_eq!(Verdict::of([Some(true), None]), Undetermined);
        assert_eq!(Verdict::of([]), Undetermined);
    }

    /// Runs a tiny two-configuration experiment and checks the judged rows exactly.
    #[test]
    fn rows_are_judged_from_the_means() {
        let toml = r#"
[machine]
memory = "16M"
[[workload]]
kind = "zipf"
target = "file"
pages = "24M"
theta = 0.9
accesses = 60000
[[published]]
metric = "accesses"
baseline = "policy=cost"
compared = "policy=mglru"
change_pct = 0.5
source = "seed 000 test: no change"
[[published]]
metric = "misses"
baseline = "policy=cost"
compared = "policy=mglru"
change_pct = 10.0
source = "seed 000 test: some change"
"#;
        let s = Scenario::from_toml_str(toml, "t.toml").unwrap();
        let p = plan_scenarios("all", vec![s]).unwrap();
        let r = run_plain(&p, false).unwrap();
        let rows = &r.seeds[0].experiments[0].rows;
        assert_eq!(rows.len(), 2);
        // Equal accesses: 0 % simulated, +0.5 % published: both "no change".
        assert_eq!(rows[0].simulated_pct, Some(0.0));
        assert_eq!(rows[0].agrees, Some(true));
        assert_eq!(rows[0].magnitude_ratio, Some(0.0));
        let (b, c) = (
            rows[1].baseline_value.unwrap(),
            rows[1].compared_value.unwrap(),
        );
        assert_eq!((b, c), (8594.0, 9070.0));
        let pct = (c - b) / b * 100.0;
        assert_eq!(rows[1].simulated_pct, Some(pct));
        assert_eq!(rows[1].agrees, Some(agrees(10.0, pct)));
        assert_eq!(r.summary.rows, 2);
        let json = crate::export::json::to_string(&r).unwrap();
        let back: ReproduceReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        assert!(!json.contains("not_modelled"), "only when used");
    }

    #[test]
    fn a_not_modelled_row_is_shown_but_not_judged() {
        // A published rise mmsim does not model: shown with its simulated change (none
        // here: 64K anon folios do not touch a file read) and its reason, counted in no
        // verdict; without the mark it would disagree.
        let toml = r#"
[machine]
memory = "64M"
[[workload]]
kind = "sequential"
target = "file"
pages = 64
passes = 3
[[published]]
metric = "throughput"
baseline = "thp.hugepages-64kB.enabled=never"
compared = "thp.hugepages-64kB.enabled=always"
change_pct = 230.4
source = "seed 003 test: a file-side gain"
not_modelled = "not the anonymous folios"
"#;
        let s = Scenario::from_toml_str(toml, "t.toml").unwrap();
        let r = run_plain(&plan_scenarios("all", vec![s.clone()]).unwrap(), false).unwrap();
        let row = &r.seeds[0].experiments[0].rows[0];
        assert_eq!(row.simulated_pct, Some(0.0));
        assert_eq!(row.agrees, None);
        assert_eq!(row.magnitude_ratio, None);
        assert_eq!(
            row.not_modelled.as_deref(),
            Some("not the anonymous folios")
        );
        assert_eq!(r.seeds[0].verdict, Verdict::Undetermined);
        assert_eq!(
            (r.summary.rows, r.summary.not_modelled, r.summary.disagree),
            (0, 1, 0)
        );
        assert!(!r.disagrees());
        let text = crate::export::reproduce::reproduce_table(&r);
        assert!(text.contains("not modelled  "), "{text}");
        assert!(
            text.contains("not modelled: throughput: not the anonymous folios"),
            "{text}"
        );
        assert!(
            text.contains("0 of 0 published directions agree; 1 not modelled"),
            "{text}"
        );
        // `mmsim compare`'s table too.
        let compare =
            crate::export::text::published_table(&r.seeds[0].experiments[0].compare.published);
        assert!(compare.contains("+0.0%  not modelled"), "{compare}");
        assert!(
            compare.contains("not modelled: throughput: not the anonymous folios"),
            "{compare}"
        );
        let json = crate::export::json::to_string(&r).unwrap();
        let back: ReproduceReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        // The same entry without the mark disagrees.
        let mut judged = s;
        judged.published[0].not_modelled = None;
        let r = run_plain(&plan_scenarios("all", vec![judged]).unwrap(), false).unwrap();
        assert_eq!(r.seeds[0].verdict, Verdict::Disagrees);
    }
}
