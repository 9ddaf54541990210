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

fn assert_round_trips(policy: PolicyName) {
    let mut scenario =
        Scenario::from_toml_str(PRESSURE, "roundtrip.toml").unwrap_or_else(|e| panic!("{e}"));
    scenario.machine.policy.name = policy;
    let result =
        run_scenario(&scenario, &mut RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(result.result.access.accesses > 0);
    let first = serde_json::to_string_pretty(&result).unwrap();
    let back: ScenarioResult =
        serde_json::from_str(&first).unwrap_or_else(|e| panic!("{e}\n{first}"));
    let second = serde_json::to_string_pretty(&back).unwrap();
    assert_eq!(first, second, "{policy:?}: JSON changed on the round trip");
}

#[test]
#[ignore = "blocked: mmsim-core MemcgReport serializes `low`/`high` twice (its limits and its flattened memory.events counters), so the JSON has duplicate keys that serde rejects on the way back"]
fn classic_result_round_trips() {
    assert_round_trips(PolicyName::Cost);
}

#[test]
#[ignore = "blocked: mmsim-core MemcgReport serializes `low`/`high` twice (its limits and its flattened memory.events counters), so the JSON has duplicate keys that serde rejects on the way back"]
fn mglru_result_round_trips() {
    assert_round_trips(PolicyName::Mglru);
}
