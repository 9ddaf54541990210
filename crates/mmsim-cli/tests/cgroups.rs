//! Memory cgroups on the command line: the per-group tables of `mmsim run`, the `memcg`
//! object of `--json`, the per-group metrics of `mmsim compare`, and scenario errors.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn mmsim() -> Command {
    Command::cargo_bin("mmsim").unwrap()
}

fn stdout(args: &[&str]) -> String {
    let out = mmsim().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&stdout(args)).unwrap()
}

/// `mmsim run ... --json` without `host_heap_peak_bytes` (the process's heap, which
/// only `run` reports), to compare with the runs inside a `compare` report.
fn run_result(args: &[&str]) -> Value {
    let mut v = json(args);
    v.as_object_mut().unwrap().remove("host_heap_peak_bytes");
    v
}

/// Two groups: `/limited` with memory.max 4M (its anonymous memory is reclaimed to swap),
/// `/free` without a limit (file reads).
const TWO: &str = r#"
description = "two groups"
[machine]
memory = "256M"
swap = { device = "zram", size = "256M" }

[[cgroup]]
path = "/limited"
max = "4M"

[[cgroup]]
path = "/free"

[[workload]]
name = "anon"
kind = "uniform"
target = "anon"
pages = "16M"
accesses = 30000
cgroup = "/limited"

[[workload]]
name = "file"
kind = "uniform"
target = "file"
pages = "16M"
accesses = 30000
cgroup = "/free"
"#;

fn scenario(dir: &Path, text: &str) -> String {
    let path = dir.join("cg.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// The rows of the table whose header line starts with `header`, split on spaces.
fn table(text: &str, header: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_start().starts_with(header))
        .unwrap_or_else(|| panic!("no table {header}:\n{text}"));
    lines[start..]
        .iter()
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn run_prints_a_table_per_group_equal_to_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = scenario(dir.path(), TWO);
    let text = stdout(&["run", &path]);
    let v = json(&["run", &path, "--json"]);
    let m = &v["memcg"];
    assert_eq!(
        m.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["/", "/free", "/limited"]
    );
    assert_eq!(m["/limited"]["max"], 1024);
    assert_eq!(m["/limited"]["pgsteal"], 21_811);
    assert_eq!(m["/free"]["pgsteal"], 0);
    assert_eq!(m["/free"]["current"], 4096);

    assert!(
        text.contains("memory cgroups (pages; a group counts its descendants too)"),
        "{text}"
    );
    assert!(
        text.contains("\ncgroups         /limited, /free (cgroup v2)\n"),
        "{text}"
    );
    let anon = text.lines().find(|l| l.starts_with("  anon ")).unwrap();
    assert!(anon.ends_with("  in /limited"), "{anon}");
    let done = format!(
        " events  done at {:.3} s  in",
        v["workloads"][0]["end_ns"].as_u64().unwrap() as f64 / 1e9
    );
    assert!(anon.contains(&done), "{anon}");
    let n = |g: &str, key: &str| m[g][key].as_u64().unwrap().to_string();
    let state = table(&text, "cgroup ");
    assert_eq!(
        state[0],
        [
            "cgroup",
            "current",
            "anon",
            "file",
            "swap",
            "max",
            "high",
            "low",
            "min",
            "swap.max",
            "soft_limit"
        ]
    );
    let events = table(&text, "memory.events");
    assert_eq!(
        events[0],
        [
            "memory.events",
            "max",
            "high",
            "low",
            "oom",
            "oom_kill",
            "swap_high",
            "swap_max",
            "swap_fail",
            "throttled_s"
        ]
    );
    let stat = table(&text, "memory.stat");
    assert_eq!(
        stat[0],
        [
            "memory.stat",
            "pgscan",
            "pgsteal",
            "refault_anon",
            "refault_file",
            "pgfault",
            "pgmajfault"
        ]
    );
    for (i, g) in ["/", "/free", "/limited"].into_iter().enumerate() {
        let max = if g == "/limited" {
            "1024".to_string()
        } else {
            "max".to_string()
        };
        assert_eq!(
            state[i + 1],
            [
                g.to_string(),
                n(g, "current"),
                n(g, "anon"),
                n(g, "file"),
                n(g, "swap_current"),
                max,
                "max".into(),
                "0".into(),
                "0".into(),
                "max".into(),
                "max".into()
            ],
            "{text}"
        );
        assert_eq!(
            events[i + 1],
            [
                g.to_string(),
                n(g, "events_max"),
                "0".into(),
                "0".into(),
                n(g, "oom"),
                n(g, "oom_kill"),
                n(g, "swap_high"),
                n(g, "swap_max"),
                n(g, "swap_fail"),
                "0.000".into()
            ],
            "{text}"
        );
        assert_eq!(
            stat[i + 1],
            [
                g.to_string(),
                n(g, "pgscan"),
                n(g, "pgsteal"),
                n(g, "workingset_refault_anon"),
                n(g, "workingset_refault_file"),
                n(g, "pgfault"),
                n(g, "pgmajfault")
            ],
            "{text}"
        );
    }
    // Without groups besides `/`, no tables.
    let plain = scenario(
        dir.path(),
        "[machine]\nmemory = \"64M\"\n[[workload]]\nkind = \"touch\"\ntarget = \"anon\"\npages = 100\n",
    );
    let text = stdout(&["run", &plain]);
    assert!(!text.contains("memory cgroups"), "{text}");
    let v = json(&["run", &plain, "--json"]);
    assert_eq!(
        v["memcg"]["/"]["current"], 128,
        "100 pages in charge batches of 64"
    );
}

#[test]
fn compare_has_per_group_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let path = scenario(dir.path(), TWO);
    let report = json(&["compare", &path, "--set", "swappiness=60,200", "--json"]);
    let names: Vec<&str> = report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    let memcg: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| n.starts_with("memcg:"))
        .collect();
    assert_eq!(memcg.len(), 2 * 15, "{memcg:?}");
    assert_eq!(memcg[0], "memcg:/free:current");
    assert!(memcg.contains(&"memcg:/limited:pgmajfault"));
    assert!(!memcg.iter().any(|n| n.starts_with("memcg:/:")));
    let about = &report["metrics"][names
        .iter()
        .position(|n| *n == "memcg:/limited:pgsteal")
        .unwrap()]["about"];
    assert!(about
        .as_str()
        .unwrap()
        .starts_with("/limited: memory.stat pgsteal"));

    for (i, swappiness) in ["60", "200"].into_iter().enumerate() {
        let run = run_result(&["run", &path, "--json", "--swappiness", swappiness]);
        let c = &report["configs"][i];
        assert_eq!(c["runs"][0]["result"], run);
        let metrics = &c["runs"][0]["metrics"];
        for g in ["/free", "/limited"] {
            for key in [
                "current",
                "pgfault",
                "pgmajfault",
                "pgscan",
                "pgsteal",
                "workingset_refault_anon",
                "workingset_refault_file",
                "events_max",
                "oom",
                "oom_kill",
            ] {
                let name = match key {
                    "oom" | "oom_kill" => format!("memcg:{g}:events_{key}"),
                    k => format!("memcg:{g}:{k}"),
                };
                assert_eq!(
                    metrics[&name].as_f64(),
                    run["memcg"][g][key].as_f64(),
                    "{name}"
                );
                assert_eq!(c["stats"][&name]["mean"], metrics[&name], "{name}");
            }
        }
    }
    // The table and the CSV have the rows.
    let text = stdout(&["compare", &path, "--set", "swappiness=60,200", "-q"]);
    for name in &memcg {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{name} "))),
            "no row {name}:\n{text}"
        );
    }
    let row = text
        .lines()
        .find(|l| l.starts_with("memcg:/limited:high_throttle_s "))
        .unwrap();
    assert!(row.contains("0.0000"), "{row}");
    let csv = stdout(&["compare", &path, "--set", "swappiness=60,200", "--csv"]);
    assert!(
        csv.contains("\nmemcg:/limited:pgmajfault,swappiness=200,"),
        "{csv}"
    );

    // No groups besides `/`: no per-group metrics.
    let plain = dir.path().join("plain.toml");
    std::fs::write(
        &plain,
        "[machine]\nmemory = \"64M\"\n[[workload]]\nkind = \"touch\"\ntarget = \"anon\"\npages = 100\n",
    )
    .unwrap();
    let report = json(&[
        "compare",
        plain.to_str().unwrap(),
        "--set",
        "swappiness=60,100",
        "--json",
    ]);
    assert!(!report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["name"].as_str().unwrap().starts_with("memcg:")));
    assert!(!report["configs"][0]["stats"]
        .as_object()
        .unwrap()
        .keys()
        .any(|k| k.starts_with("memcg:")));
}

#[test]
fn scenario_errors_name_the_file_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    for (from, to, needles) in [
        (
            "max = \"4M\"",
            "max = \"4Q\"",
            &["cg.toml", "line 9", "cgroup[0].max", "suffix"][..],
        ),
        (
            "max = \"4M\"",
            "max = \"4M\"\nversion = \"v2\"\nswappiness = 10",
            &["cg.toml", "cgroup[0].swappiness", "not a cgroup v2 knob"],
        ),
        (
            "cgroup = \"/free\"",
            "cgroup = \"/fre\"",
            &["cg.toml", "workload[1].cgroup", "no group `/fre`"],
        ),
        (
            "[[cgroup]]\npath = \"/free\"",
            "[[cgroup]]\npath = \"/limited/free/x\"",
            &["cgroup[1].path", "parent `/limited/free`"],
        ),
    ] {
        let path = scenario(dir.path(), &TWO.replace(from, to));
        let out = mmsim().args(["run", &path]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{to}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        for n in needles {
            assert!(stderr.contains(n), "{to}: {n:?} not in {stderr}");
        }
    }
}

#[test]
fn seed_004_scenarios_are_listed() {
    let text = stdout(&["scenarios"]);
    for name in [
        "softlimit-kbuild ",
        "softlimit-stream-vs-eater ",
        "softlimit-kbuild-vs-eater ",
    ] {
        assert!(text.lines().any(|l| l.starts_with(name)), "{text}");
    }
    // Names and descriptions in two columns.
    let col = |l: &str| {
        l.find("  ")
            .map(|i| i + l[i..].len() - l[i..].trim_start().len())
    };
    let cols: Vec<_> = text
        .lines()
        .take_while(|l| !l.is_empty())
        .map(col)
        .collect();
    assert!(cols.windows(2).all(|w| w[0] == w[1]), "{text}");
}

/// The `cgroups` line names the groups whose knobs are of the other version and the
/// soft-limit design whenever a group has a soft limit (a v1 group with a soft limit
/// on a v2 machine was shown as plain "(cgroup v2)").
#[test]
fn the_cgroups_line_names_v1_groups_on_a_v2_machine() {
    let dir = tempfile::tempdir().unwrap();
    let mut toml = String::from_utf8(
        mmsim()
            .args(["run", "zipf-file", "--print-scenario"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    toml.push_str(
        "\n[[cgroup]]\npath = \"/v1\"\nversion = \"v1\"\nsoft_limit = 0\n\n\
         [[cgroup]]\npath = \"/v1/child\"\n\n\
         [[cgroup]]\npath = \"/v2\"\nversion = \"v2\"\nmax = \"256M\"\n",
    );
    let path = dir.path().join("mixed.toml");
    std::fs::write(&path, toml).unwrap();
    let out = mmsim()
        .args(["run", path.to_str().unwrap(), "-q"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "cgroups         /v1, /v1/child, /v2 (cgroup v2; v1 knobs: /v1, /v1/child; \
             soft limits reclaimed by the tree design)"
        ),
        "{text}"
    );
}
