//! `schedule = "fair"` from the command line: the workloads' `cpu_ns` and `sleep_ns`
//! appear in the JSON only under it, a workload that exits does so at its simulated
//! end, and an unknown schedule names the field and the values allowed.

mod common;

use common::{bad_input, json};

const SCENARIO: &str = "seed = 3\n[machine]\nmemory = \"32M\"\n\
    [machine.swap]\ndevice = \"ssd\"\nsize = \"64M\"\n\
    [[workload]]\nname = \"short\"\nkind = \"zipf\"\ntarget = \"file\"\npages = \"24M\"\n\
    theta = 0.7\naccesses = 20000\nexit = true\n\
    [[workload]]\nname = \"long\"\nkind = \"zipf\"\ntarget = \"anon\"\npages = \"24M\"\n\
    theta = 0.7\naccesses = 60000\n";

/// SCENARIO written twice in a fresh directory: as it is (`rr.toml`, round robin) and
/// with `schedule = "fair"` (`fair.toml`).
fn scenario_files() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let rr = dir.path().join("rr.toml");
    let fair = dir.path().join("fair.toml");
    std::fs::write(&rr, SCENARIO).unwrap();
    std::fs::write(&fair, format!("schedule = \"fair\"\n{SCENARIO}")).unwrap();
    (dir, rr, fair)
}

#[test]
fn the_fair_schedule_reports_each_workloads_cpu_and_sleep() {
    let (dir, rr, fair) = scenario_files();
    let rr = json(&["run", rr.to_str().unwrap(), "--json"]);
    let fair = json(&["run", fair.to_str().unwrap(), "--json"]);
    for w in rr["workloads"].as_array().unwrap() {
        assert!(
            w.get("cpu_ns").is_none() && w.get("sleep_ns").is_none(),
            "{w}"
        );
    }
    let ws = fair["workloads"].as_array().unwrap();
    let (short, long) = (&ws[0], &ws[1]);
    assert_eq!(short["events"], 20000);
    assert_eq!(long["events"], 60000);
    // The file reader sleeps on its reads.
    assert_eq!(short["sleep_ns"], 692_565_132, "{short}");
    assert_eq!(short["cpu_ns"], 26_846_000, "{short}");
    assert_eq!(short["end_ns"], 725_324_044, "{short}");
    // The anonymous one, three times as long, ran while the reader slept: it ends first,
    // never asleep.
    assert_eq!(long["cpu_ns"], 8_769_350, "{long}");
    assert_eq!(long["end_ns"], 8_849_350, "{long}");
    assert_eq!(long["sleep_ns"], 0, "{long}");
    assert!(long.get("exit_ns").is_none(), "{long}");
    // The reader exits at its end, exactly.
    assert_eq!(short["exit_ns"], 725_324_044, "{short}");
    assert_eq!(fair["accesses"], rr["accesses"]);
    // --print-scenario keeps the field.
    let out = common::mmsim()
        .args(["run", "--print-scenario"])
        .arg(dir.path().join("fair.toml"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("schedule = \"fair\""));
}

#[test]
fn an_unknown_schedule_names_the_field() {
    let bad = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bad_input/schedule.toml");
    bad_input(&["run", bad], &["schedule", "allowed: round-robin, fair"]);
}

/// `--schedule fair` on a round-robin scenario gives the same result, bit for bit, as
/// the scenario with `schedule = "fair"`; `--schedule round-robin` turns a fair
/// scenario back; `--print-scenario` shows the flag's choice; a bad value is refused
/// with the values allowed.
#[test]
fn the_schedule_flag_sets_the_scenarios_schedule() {
    let (_dir, rr, fair) = scenario_files();
    let (rr, fair) = (rr.to_str().unwrap(), fair.to_str().unwrap());
    let by_flag = json(&["run", rr, "--schedule", "fair", "--json"]);
    let by_file = json(&["run", fair, "--json"]);
    assert_eq!(by_flag["workloads"], by_file["workloads"]);
    assert_eq!(by_flag["vmstat"], by_file["vmstat"]);
    assert_eq!(by_flag["workloads"][0]["cpu_ns"], 26_846_000);
    let back = json(&["run", fair, "--schedule", "round-robin", "--json"]);
    let plain = json(&["run", rr, "--json"]);
    assert_eq!(back["workloads"], plain["workloads"]);
    assert_eq!(back["vmstat"], plain["vmstat"]);
    let out = common::mmsim()
        .args(["run", rr, "--schedule", "fair", "--print-scenario"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("schedule = \"fair\""));
    bad_input(
        &["run", rr, "--schedule", "cfs"],
        &[
            "--schedule",
            "unknown schedule `cfs`; allowed: round-robin, fair",
        ],
    );
}
