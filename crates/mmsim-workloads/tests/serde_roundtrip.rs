//! `ScenarioResult` (and the core `RunResult` it flattens) round-trips through serde:
//! serialize → deserialize → serialize gives the same JSON, so a saved `--json` result
//! can be read back by reports and bindings.

use mmsim_core::PolicyName;
use mmsim_workloads::{run_scenario, RunOptions, Scenario, ScenarioResult};

/// A small run that reclaims under a memory cgroup limit and swaps to zram, so the
/// result carries vmstat, PSI, per-group and reclaim-profile content, not only zeros.
const PRESSURE: &str = r#"
description = "round-trip test: anon and file under a group limit"

[machine]
memory = "64M"
swap = { device = "zram", size = "64M" }

[[cgroup]]
path = "/limited"
max = "8M"

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
cgroup = "/limited"
"#;

/// The [`PRESSURE`] scenario's result under `policy`.
fn pressure_result(policy: PolicyName) -> ScenarioResult {
    let mut scenario =
        Scenario::from_toml_str(PRESSURE, "roundtrip.toml").unwrap_or_else(|e| panic!("{e}"));
    scenario.machine.policy.name = policy;
    run_scenario(&scenario, &mut RunOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn assert_round_trips(policy: PolicyName) {
    let result = pressure_result(policy);
    assert_eq!(result.result.access.accesses, 40_000);
    let first = serde_json::to_string_pretty(&result).unwrap();
    let back: ScenarioResult =
        serde_json::from_str(&first).unwrap_or_else(|e| panic!("{e}\n{first}"));
    let second = serde_json::to_string_pretty(&back).unwrap();
    assert_eq!(first, second, "{policy:?}: JSON changed on the round trip");
}

#[test]
fn classic_result_round_trips() {
    assert_round_trips(PolicyName::Cost);
}

#[test]
fn mglru_result_round_trips() {
    assert_round_trips(PolicyName::Mglru);
}

/// The core `RunResult` alone, with its memory cgroups: each group's limits (`low`,
/// `high`) and its `memory.events` counters (`events_low`, `events_high`) are distinct
/// keys, and every field comes back.
#[test]
fn run_result_with_memcg_groups_round_trips() {
    let result = pressure_result(PolicyName::Cost).result;
    assert!(
        result.memcg.contains_key("/limited"),
        "{:?}",
        result.memcg.keys()
    );
    let limited = &result.memcg["/limited"];
    assert_eq!(limited.max, Some(2048));
    assert_eq!(
        (limited.pgsteal, limited.events_max),
        (20_341, 402),
        "{limited:?}"
    );
    let json = serde_json::to_value(&result).unwrap();
    let group = json["memcg"]["/limited"].as_object().unwrap();
    for key in [
        "low",
        "high",
        "events_low",
        "events_high",
        "events_max",
        "max",
    ] {
        assert!(group.contains_key(key), "{key} missing: {group:?}");
    }
    assert_eq!(group["high"], serde_json::Value::Null);
    assert_eq!(group["events_high"], 0);
    let text = serde_json::to_string(&result).unwrap();
    let back: mmsim_core::RunResult =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.memcg, result.memcg);
    assert_eq!(serde_json::to_string(&back).unwrap(), text);
}
