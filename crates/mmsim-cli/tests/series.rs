//! `mmsim run --series INTERVAL [--series-out FILE.csv|FILE.json]`: counters over
//! simulated time with the scenario's events marked, the same results as without it,
//! and its errors.

mod common;

use common::{bad_input, json, mmsim};
use serde_json::Value;

/// Two groups: `/a` starts at 8M (a setup knob write), its anonymous hog outgrows it
/// without swap (an OOM kill); phase 1 reads a file; `/b` is raised at 5 ms and the
/// reader moves there at 10 ms.
const SCENARIO: &str = r#"
description = "series markers"
[machine]
memory = "64M"

[[cgroup]]
path = "/a"
max = "8M"

[[cgroup]]
path = "/b"

[[cgroup_change]]
at = "5ms"
path = "/b"
max = "16M"

[[cgroup_move]]
at = "10ms"
workload = "reader"
to = "/b"

[[workload]]
name = "hog"
kind = "uniform"
target = "anon"
pages = "12M"
accesses = 20000
cgroup = "/a"

[[workload]]
name = "reader"
kind = "uniform"
target = "file"
pages = "24M"
accesses = 20000
cgroup = "/a"
phase = 1
"#;

fn scenario(dir: &std::path::Path) -> String {
    let p = dir.join("markers.toml");
    std::fs::write(&p, SCENARIO).unwrap();
    p.display().to_string()
}

#[test]
fn the_json_file_has_one_row_per_interval_and_every_marker() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario(dir.path());
    let out = dir.path().join("s.json");
    let o = out.display().to_string();
    let with = json(&["run", &sc, "--series", "2ms", "--series-out", &o, "--json"]);
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(s["interval_ms"], 2.0);
    let cols: Vec<&str> = s["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let data = s["data"].as_array().unwrap();
    assert_eq!(data.len(), with["stats_samples"].as_array().unwrap().len());
    // Row k is at (k + 1) × 2 ms.
    for (k, row) in data.iter().enumerate() {
        let t = row[0].as_f64().unwrap();
        assert!((t - (k + 1) as f64 * 0.002).abs() < 1e-12, "row {k}: {t}");
        assert_eq!(row.as_array().unwrap().len(), cols.len());
    }
    for c in [
        "vmstat.pgscan_kswapd",
        "vmstat.workingset_refault_file",
        "psi.some.avg10",
        "/a:memory.current",
        "/b:memory.max",
        "/b:memory.stat.inactive_file",
        "/a:memory.events.oom_kill",
        "/b:memory.pressure.full.total",
    ] {
        assert!(cols.contains(&c), "no column {c}");
    }
    let col = |name: &str| cols.iter().position(|&c| c == name).unwrap();
    // /b's limit: max until the write at 5 ms (row 2, the interval (4, 6] ms), then 4096p.
    let bmax = col("/b:memory.max");
    assert!(data[1][bmax].is_null());
    assert_eq!(data[2][bmax], 4096);
    // The kill is counted in /a's memory.events from its row on.
    let kills = col("/a:memory.events.oom_kill");
    let m = s["markers"].as_array().unwrap();
    let kinds: Vec<(&str, &str, &str)> = m
        .iter()
        .map(|m| {
            (
                m["kind"].as_str().unwrap(),
                m["group"].as_str().unwrap_or(""),
                m["detail"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("knob_write", "/a", "memory.max=2048p"),
            ("phase_start", "", "phase 0"),
            ("oom_kill", "/a", "task 0"),
            ("phase_start", "", "phase 1"),
            ("knob_write", "/b", "memory.max=4096p"),
            ("move", "/b", "task 1"),
        ]
    );
    let kill_row = m[2]["row"].as_u64().unwrap() as usize;
    assert_eq!(data[kill_row][kills], 1);
    assert!(kill_row == 0 || data[kill_row - 1][kills] == 0);
    // The knob write and the move happen when the clock reaches them.
    assert_eq!(m[4]["row"], 2);
    // At the first event at or after 5 ms and 10 ms.
    assert_eq!(m[4]["t_s"], 0.005069694);
    assert_eq!(m[5]["t_s"], 0.010080738);
    // Without --series: the same result, without the samples and markers.
    let mut without = json(&["run", &sc, "--json"]);
    let mut with = with;
    for v in [&mut without, &mut with] {
        let o = v.as_object_mut().unwrap();
        for k in [
            "stats_samples",
            "stats_memcg_paths",
            "series_markers",
            "host_heap_peak_bytes",
            "machine",
        ] {
            o.remove(k);
        }
    }
    assert_eq!(with, without);
}

#[test]
fn the_csv_file_is_tidy_and_the_text_table_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario(dir.path());
    let out = dir.path().join("s.csv");
    let o = out.display().to_string();
    let run = mmsim()
        .args(["run", &sc, "--series", "2ms", "--series-out", &o, "-q"])
        .output()
        .unwrap();
    assert!(run.status.success());
    let text = String::from_utf8(run.stdout).unwrap();
    let csv = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(header[0], "t_s");
    assert_eq!(*header.last().unwrap(), "markers");
    assert!(lines[1..]
        .iter()
        .all(|l| l.split(',').count() == header.len()));
    assert!(lines[1].ends_with(",knob_write /a memory.max=2048p; phase_start phase 0"));
    // The text table: at most 40 rows, the samples thinned evenly.
    let table = &text[text.find("Counters over time (every 2 ms").expect("table")..];
    let rows: Vec<&str> = table
        .lines()
        .skip(2)
        .take_while(|l| !l.starts_with('('))
        .collect();
    let n = lines.len() - 1;
    let step = n.div_ceil(40);
    assert_eq!(rows.len(), n.div_ceil(step));
    assert!(rows[0].contains("knob_write /a memory.max=2048p; phase_start phase 0"));
    assert!(table.contains(&format!("of {n} samples shown")));
    // A TOML scenario's own `machine.stats_interval_ms` is enough for --series-out.
    let csv2 = dir.path().join("t.csv");
    mmsim()
        .args([
            "run",
            &sc,
            "--set",
            "stats_interval_ms=2",
            "--series-out",
            &csv2.display().to_string(),
            "-q",
        ])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&csv2).unwrap(), csv);
}

#[test]
fn errors() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario(dir.path());
    let out = dir.path().join("s.txt").display().to_string();
    bad_input(
        &["run", &sc, "--series", "1ms", "--series-out", &out],
        &["--series-out", "s.txt", ".csv or .json"],
    );
    let csv = dir.path().join("s.csv").display().to_string();
    bad_input(
        &["run", &sc, "--series-out", &csv],
        &["--series-out", "--series INTERVAL"],
    );
    bad_input(
        &["run", &sc, "--series", "0"],
        &["--series", "at least 1 ms"],
    );
    bad_input(
        &["run", &sc, "--series", "fast"],
        &["--series", "`fast` is not an interval"],
    );
    let missing = dir.path().join("no/such/dir/s.csv").display().to_string();
    bad_input(
        &["run", &sc, "--series", "1ms", "--series-out", &missing],
        &["--series-out", "no/such/dir", "does not exist"],
    );
}
