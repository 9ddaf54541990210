//! `mmsim reproduce`: every seed's published changes judged, in text, JSON and CSV;
//! the exit status when a direction disagrees; the errors.

mod common;

use common::{bad_input, json, json_with_status, mmsim};
use serde_json::Value;

/// A scenario file for seed 000 whose published direction is wrong on purpose: the
/// number of accesses does not depend on the policy.
const WRONG: &str = r#"
[machine]
memory = "16M"
[[workload]]
name = "reader"
kind = "zipf"
target = "file"
pages = "24M"
theta = 0.9
accesses = 20000
[[published]]
metric = "accesses"
baseline = "policy=cost"
compared = "policy=lru"
change_pct = 50.0
source = "seed 000 made up for a test: 50 % more accesses"
"#;

/// The seeds a report reproduced, in its order.
fn seeds(report: &Value) -> Vec<&str> {
    report["seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["seed"].as_str().unwrap())
        .collect()
}

fn rows(report: &Value) -> Vec<Value> {
    report["seeds"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["experiments"].as_array().unwrap().clone())
        .flat_map(|e| e["rows"].as_array().unwrap().clone())
        .collect()
}

/// Seed 002's runtime: the simulated plrus speed-up (−0.2 %) is inside the ±1 %
/// no-change band, so its direction disagrees with the post's −3.74 %. Known and
/// documented (VALIDATION.md: the scenario's memory-pressure cycle slows the
/// workload far less than the post's did, mprs/orig 1.008); when the model
/// improves, this test says so.
///
/// (Seed 003's kernel build was the other one, +0.1 % memory against the post's
/// +2.1 %, while the model's compilers kept their heaps from one compile to the next;
/// with `cc_exit` each compile frees its heap as a real cc1 does, and it agrees.)
const KNOWN_DISAGREEMENTS: &[(&str, &str)] = &[("plrus-parsec-like", "runtime_s")];

#[test]
fn all_quick_judges_every_seed_and_every_direction_agrees_but_the_known_one() {
    // Exit status 4: a direction disagrees (the known one).
    let r = json_with_status(&["reproduce", "all", "--quick", "--json"], 4);
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["quick"], true);
    assert_eq!(seeds(&r), ["000", "001", "002", "003", "004"]);
    let rows = rows(&r);
    // 31 rows: 26 judged, and seed 003's five will-it-scale rows marked not modelled.
    assert_eq!(rows.len(), 31);
    let scenario_of = |row: &serde_json::Value| {
        r["seeds"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["experiments"].as_array().unwrap())
            .find(|e| e["rows"].as_array().unwrap().contains(row))
            .map(|e| e["scenario"].as_str().unwrap().to_string())
            .unwrap()
    };
    for row in rows.iter().filter(|r| r.get("not_modelled").is_none()) {
        let known = KNOWN_DISAGREEMENTS
            .contains(&(scenario_of(row).as_str(), row["metric"].as_str().unwrap()));
        assert_eq!(row["agrees"], !known, "{row}");
    }
    for row in rows.iter().filter(|r| r.get("not_modelled").is_some()) {
        assert!(row["agrees"].is_null(), "{row}");
        assert!(scenario_of(row).starts_with("mthp-"), "{row}");
    }
    assert_eq!(r["summary"]["rows"], 26);
    assert_eq!(r["summary"]["not_modelled"], 5);
    assert_eq!(r["summary"]["agree"], 25);
    assert_eq!(r["summary"]["disagree"], 1);
    // Seed 001 runs its quick version; the others run as they are.
    let default = &r["seeds"][1]["experiments"][0];
    assert_eq!(default["scenario"], "default");
    assert_eq!(default["quick"], true);
    assert!(default["scenario_toml"]
        .as_str()
        .unwrap()
        .contains("memory = \"1792M\""));
    assert_eq!(r["seeds"][0]["experiments"][0]["quick"], false);
    // A change from zero is an increase, with no ratio; others have one.
    let pgscan = rows.iter().find(|x| x["metric"] == "pgscan_anon").unwrap();
    assert_eq!(pgscan["baseline_value"], 0.0);
    assert!(pgscan["simulated_pct"].is_null() && pgscan["magnitude_ratio"].is_null());
    let t = rows
        .iter()
        .find(|x| x["metric"] == "runtime_s" && scenario_of(x) == "softlimit-kbuild")
        .unwrap();
    let ratio = t["simulated_pct"].as_f64().unwrap().abs() / 69.6;
    assert_eq!(t["magnitude_ratio"].as_f64(), Some(ratio));
}

#[test]
fn text_has_a_table_and_a_verdict_per_seed_and_a_summary() {
    let out = mmsim()
        .args(["reproduce", "000", "--quick"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let t = String::from_utf8(out.stdout).unwrap();
    assert!(t.starts_with("seed 000  Yu Zhao"), "{t}");
    for needle in [
        "scenario fio-randread",
        "scenario memcached",
        "scenario many-tabs",
        "metric      baseline     compared      published  simulated  direction  ratio  source",
        "verdict: seed 000 reproduced: 3 of 3 published directions agree",
        "summary: 1 seed (quick), 3 published changes: 3 agree, 0 disagree, 0 undetermined: reproduced",
    ] {
        assert!(t.contains(needle), "{needle:?} in:\n{t}");
    }
    // --quick announces nothing.
    assert!(out.stderr.is_empty());
}

#[test]
fn csv_has_one_line_per_published_change() {
    let out = mmsim().args(["reproduce", "4", "--csv"]).output().unwrap();
    assert!(out.status.success());
    let t = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(
        lines[0],
        "seed,scenario,quick,metric,baseline,compared,published_pct,baseline_value,\
         compared_value,simulated_pct,agrees,magnitude_ratio,source"
    );
    assert_eq!(lines.len(), 1 + 7);
    assert!(lines[1].starts_with(
        "004,softlimit-kbuild,false,runtime_s,soft_limit_reclaim=tree,soft_limit_reclaim=seed-004,-69.6,"
    ));
    assert!(lines[1..].iter().all(|l| l.contains(",true,")));
    // A full run announces how long it will take.
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(
        e.starts_with("reproducing seed 004: 3 experiments, 6 runs at full scale, about "),
        "{e}"
    );
}

/// Seed 001 at full scale: the default scenario's README table.
#[test]
fn seed_001_full_matches_the_readme_table() {
    let r = json(&["reproduce", "001", "--json", "-q"]);
    let rows = rows(&r);
    let value = |m: &str| {
        let row = rows.iter().find(|x| x["metric"] == m).unwrap();
        (
            row["baseline_value"].as_f64().unwrap(),
            row["compared_value"].as_f64().unwrap(),
        )
    };
    assert_eq!(value("pgscan_anon"), (0.0, 765_575.0));
    assert_eq!(value("pswpout"), (0.0, 49_228.0));
    assert_eq!(value("pswpin"), (0.0, 20_928.0));
    assert_eq!(value("workingset_refault_file"), (1_131_593.0, 970_621.0));
    let (b, c) = value("throughput");
    assert_eq!((b.round(), c.round()), (1316.0, 1526.0));
    assert_eq!(r["seeds"][0]["verdict"], "reproduced");
    assert_eq!(r["quick"], false);
}

#[test]
fn a_disagreeing_direction_exits_with_status_4_after_printing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("wrong.toml");
    std::fs::write(&p, WRONG).unwrap();
    let out = mmsim()
        .args(["reproduce", "--scenario", p.to_str().unwrap(), "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let t = String::from_utf8(out.stdout).unwrap();
    assert!(t.contains("DISAGREES"), "{t}");
    assert!(
        t.contains("verdict: seed 000 DISAGREES: 0 of 1 published directions agree, 1 disagree"),
        "{t}"
    );
    assert!(
        t.contains("summary: 1 seed, 1 published changes: 0 agree, 1 disagree"),
        "{t}"
    );
    // JSON says the same, with the same status.
    let out = mmsim()
        .args(["reproduce", "--scenario", p.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["summary"]["verdict"], "disagrees");
    assert_eq!(r["seeds"][0]["experiments"][0]["rows"][0]["agrees"], false);
}

/// The runs go side by side on the cores; the reproduction is the same for any
/// `--jobs`, bit for bit.
#[test]
fn jobs_change_nothing() {
    let run = |jobs: &str| {
        let out = mmsim()
            .args(["reproduce", "001", "--quick", "--json", "--jobs", jobs])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "--jobs {jobs}");
        out.stdout
    };
    let serial = run("1");
    // The reproduction of seed 001 alone.
    let r: Value = serde_json::from_slice(&serial).unwrap();
    assert_eq!(seeds(&r), ["001"]);
    assert_eq!(run("3"), serial);
}

#[test]
fn errors() {
    bad_input(
        &["reproduce", "007"],
        &["unknown seed `007`", "000, 001, 002, 003, 004", "all"],
    );
    bad_input(&["reproduce", "x"], &["unknown seed `x`"]);
    bad_input(
        &["reproduce", "001", "--jobs", "0"],
        &["--jobs 0: out of range [1, 256]"],
    );
    bad_input(&["reproduce", "-1"], &["unexpected argument"]);
    bad_input(
        &["reproduce", "--json", "--csv"],
        &["'--json' cannot be used with '--csv'"],
    );
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.toml");
    std::fs::write(&p, WRONG.replace("seed 000 made", "made")).unwrap();
    let ps = p.to_str().unwrap();
    bad_input(
        &["reproduce", "--scenario", ps],
        &[
            "s.toml",
            "no [[published]] entry names its seed",
            "seed NNN",
        ],
    );
    std::fs::write(&p, WRONG.replace("\"accesses\"", "\"missez\"")).unwrap();
    bad_input(
        &["reproduce", "--scenario", ps],
        &["s.toml", "published[0].metric", "unknown metric `missez`"],
    );
    std::fs::write(&p, WRONG.replace("policy=lru", "policy=fifo")).unwrap();
    bad_input(&["reproduce", "--scenario", ps], &["policy=fifo", "fifo"]);
    bad_input(
        &["reproduce", "--scenario", ps, "--quick"],
        &["--quick and --scenario"],
    );
    bad_input(
        &["reproduce", "--scenario", "/no/such/file.toml"],
        &["/no/such/file.toml"],
    );
    std::fs::write(&p, WRONG).unwrap();
    bad_input(
        &["reproduce", "004", "--scenario", ps],
        &[
            "seed 004 has no given experiment yet",
            "seeds with experiments: 000",
        ],
    );
}

/// Ctrl-C stops a reproduction at the next batch: what ran is printed, marked
/// partial, with exit status 130.
#[cfg(unix)]
#[test]
fn ctrl_c_prints_the_partial_reproduction() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("long.toml");
    // 2^30 accesses: minutes of simulation.
    std::fs::write(
        &p,
        WRONG.replace("accesses = 20000", "accesses = 1073741824"),
    )
    .unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("mmsim"))
        .args(["reproduce", "--scenario", p.to_str().unwrap(), "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child's pid, not yet waited for.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(130));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["partial"], true);
    let e = &r["seeds"][0]["experiments"][0];
    assert_eq!(e["compare"]["partial"], true);
    assert_eq!(e["compare"]["configs"].as_array().unwrap().len(), 1);
    assert_eq!(r["summary"]["verdict"], "undetermined");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("interrupted: seed 000 long policy=cost stopped after"),
        "{err}"
    );
}
