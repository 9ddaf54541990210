//! Reports of mmsim results: the metrics a comparison takes from each run, their
//! statistics over repeated runs, comparisons of configurations, the judgement of a
//! scenario's published results against the simulated changes, and exporters to text
//! tables, CSV and JSON.
//!
//! This is the library behind `mmsim run` and `mmsim compare`'s output; it reads
//! [`ScenarioResult`](mmsim_workloads::ScenarioResult)s and does no I/O of its own
//! (exporters write to a writer the caller passes in).
//!
//! | module | what |
//! |---|---|
//! | [`metrics`] | the compared metrics (vmstat names, derived ones, per memory cgroup, per workload) and their values in a result |
//! | [`stats`] | Min, Amean, Stddev, Max over runs; the change against a baseline |
//! | [`compare`] | [`CompareReport`](compare::CompareReport): configurations, their runs and statistics; serializes to `mmsim compare --json` |
//! | [`configs`] | the compared axes and their configurations applied to a scenario (`mmsim compare`, Python's `mmsim.compare`) |
//! | [`published`] | a scenario's published results paired with the compared configurations, with the direction judged |
//! | [`trace_info`] | a trace read once: footprint, reuse distances, the plain-LRU miss-ratio curve (`mmsim trace info`, Python's `mmsim.trace.info`) |
//! | [`html`] | the self-contained HTML report with inline SVG charts over simulated time (`--report`) |
//! | [`reproduce`] | the published experiments ("seeds") run and judged: `mmsim reproduce` |
//! | [`settings`] | a configuration's `key=value` settings written into a scenario's machine |
//! | [`export`] | text tables ([`export::text`], [`export::run_text`]), CSV ([`export::csv`]), JSON ([`export::json`]) |
//!
//! # Computing the compare table from results
//!
//! Run the scenario once per configuration (and per seed when repeating), build one
//! [`ConfigReport`](compare::ConfigReport) per configuration from its results, collect
//! them in a [`CompareReport`](compare::CompareReport), finish it, and export it:
//!
//! ```
//! use mmsim_core::PolicyName;
//! use mmsim_report::compare::{AxisReport, CompareReport, ConfigReport, Setting};
//! use mmsim_report::export;
//! use mmsim_workloads::{run_scenario, RunOptions, Scenario};
//!
//! let toml = r#"
//! [machine]
//! memory = "16M"
//! [[workload]]
//! kind = "zipf"
//! target = "file"
//! pages = "24M"
//! theta = 0.9
//! accesses = 5000
//! "#;
//! let base = Scenario::from_toml_str(toml, "example.toml")?;
//! let policies = ["cost", "mglru"];
//! let axis = AxisReport {
//!     key: "policy".into(),
//!     flag: "--policy".into(),
//!     values: policies.iter().map(|p| p.to_string()).collect(),
//! };
//! let mut report = CompareReport::new(&base.name, base.seed, 1, 0, vec![axis]);
//! for policy in policies {
//!     let mut s = base.clone();
//!     s.machine.policy.name = policy.parse::<PolicyName>()?;
//!     let result = run_scenario(&s, &mut RunOptions::default())?;
//!     let setting = Setting { key: "policy.name".into(), value: policy.into() };
//!     report.configs.push(ConfigReport::new(format!("policy={policy}"), vec![setting], &[result]));
//! }
//! // Keep the metrics every run has; pair the scenario's published results, if any.
//! let notes = report.finish(&base.published);
//!
//! let mut table = Vec::new();
//! export::text::write_compare(&mut table, &report, &notes)?;
//! let table = String::from_utf8(table)?;
//! assert!(table.lines().any(|l| l.starts_with("pgmajfault ")));
//! let csv = export::csv::compare_csv(&report);
//! assert!(csv.starts_with("metric,config,value,runs,min,max,stddev,change_pct\n"));
//! let json = export::json::to_string(&report)?;
//! assert_eq!(export::json::read_compare(&json)?, report);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod changes;
pub mod compare;
pub mod configs;
pub mod export;
pub mod html;
pub mod metrics;
pub mod published;
pub mod reproduce;
pub mod settings;
pub mod stats;
pub mod trace_info;
