//! A comparison built from results with memory cgroups and several workloads: its JSON
//! reads back to the same report and writes again to the same text, and the exporters
//! show the per-group and per-workload metrics every run has.

use mmsim_core::PolicyName;
use mmsim_report::compare::{AxisReport, CompareReport, ConfigReport, Setting};
use mmsim_report::export;
use mmsim_workloads::{run_scenario, RunOptions, Scenario};

const SCENARIO: &str = r#"
description = "compare report test: two groups, one under a limit"
seed = 3

[machine]
memory = "64M"
swap = { device = "zram", size = "64M" }

[[cgroup]]
path = "/limited"
max = "8M"

[[cgroup]]
path = "/free"

[[workload]]
name = "anon"
kind = "uniform"
target = "anon"
pages = "16M"
accesses = 20000
cgroup = "/limited"

[[workload]]
name = "file"
kind = "zipf"
theta = 0.9
target = "file"
pages = "16M"
accesses = 20000
cgroup = "/free"
"#;

/// Policies cost and mglru, two seeds each.
fn report() -> (CompareReport, Vec<String>) {
    let base = Scenario::from_toml_str(SCENARIO, "compare.toml").unwrap_or_else(|e| panic!("{e}"));
    let policies = [PolicyName::Cost, PolicyName::Mglru];
    let axis = AxisReport {
        key: "policy".into(),
        flag: "--policy".into(),
        values: policies.iter().map(|p| p.name().to_string()).collect(),
    };
    let mut report = CompareReport::new(&base.name, base.seed, 2, 0, vec![axis]);
    for p in policies {
        let results: Vec<_> = (0..2)
            .map(|i| {
                let mut s = base.clone();
                s.machine.policy.name = p;
                s.seed = base.seed + i;
                run_scenario(&s, &mut RunOptions::default()).unwrap_or_else(|e| panic!("{e}"))
            })
            .collect();
        let setting = Setting {
            key: "policy.name".into(),
            value: p.name().into(),
        };
        report.configs.push(ConfigReport::new(
            format!("policy={}", p.name()),
            vec![setting],
            &results,
        ));
    }
    let notes = report.finish(&base.published);
    (report, notes)
}

#[test]
fn compare_report_round_trips_through_json() {
    let (report, notes) = report();
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(report.configs.len(), 2);
    assert_eq!(report.configs[1].runs[1].seed, 4);
    let names: Vec<&str> = report.metrics.iter().map(|m| m.name.as_str()).collect();
    for name in [
        "memcg:/limited:events_max",
        "memcg:/limited:events_low",
        "memcg:/free:pgmajfault",
        "workload:anon:end_s",
    ] {
        assert!(names.contains(&name), "{name} missing: {names:?}");
    }
    let limited = report.configs[0].stat("memcg:/limited:events_max").unwrap();
    assert_eq!(limited.n, 2);
    assert_eq!((limited.min, limited.max), (180.0, 183.0), "{limited:?}");

    let mut out = Vec::new();
    export::json::write_compare(&mut out, &report).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with("}\n"));
    let back = export::json::read_compare(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, report);
    assert_eq!(export::json::to_string(&back).unwrap(), text);

    // Each run's embedded result reads back as a ScenarioResult.
    let run = &report.configs[0].runs[0];
    let result: mmsim_workloads::ScenarioResult =
        serde_json::from_value(run.result.clone()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(result.seed, run.seed);
    assert!(result.result.memcg.contains_key("/limited"));
}

#[test]
fn exporters_show_every_metric_and_configuration() {
    let (report, notes) = report();
    let table = export::text::compare_table(&report, &notes);
    assert!(
        table.contains("runs        2 per configuration, seeds 3..=4"),
        "{table}"
    );
    for m in &report.metrics {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(&format!("Amean  {} ", m.name))),
            "{}\n{table}",
            m.name
        );
    }
    let csv = export::csv::compare_csv(&report);
    assert_eq!(csv.lines().count(), 1 + report.metrics.len() * 2);
    let mut out = Vec::new();
    export::csv::write_compare(&mut out, &report).unwrap();
    assert_eq!(out, csv.as_bytes());
}
