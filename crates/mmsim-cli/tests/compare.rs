//! `mmsim compare`: its table, JSON and CSV against separate `mmsim run --json` runs,
//! `--repeat` statistics, every bad-input path, and Ctrl-C (SIGINT) on `run` and
//! `compare`.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

fn mmsim() -> Command {
    Command::cargo_bin("mmsim").unwrap()
}

fn ok(args: &[&str]) -> Output {
    let out = mmsim().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    // No progress bar or notes on stderr when it is not a terminal.
    assert!(out.stderr.is_empty(), "{args:?}: {stderr}");
    out
}

fn stdout(args: &[&str]) -> String {
    String::from_utf8(ok(args).stdout).unwrap()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_slice(&ok(args).stdout).unwrap()
}

/// `mmsim run ... --json` without `host_heap_peak_bytes` (the process's heap, which
/// only `run` reports), to compare with the runs inside a `compare` report.
fn run_result(args: &[&str]) -> Value {
    let mut v = json(args);
    v.as_object_mut().unwrap().remove("host_heap_peak_bytes");
    v
}

/// `base` followed by `extra`.
fn cat<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = base.to_vec();
    v.extend_from_slice(extra);
    v
}

/// Runs, expects exit status 2 and a one-line error containing every `needles`, no panic.
fn bad_input(args: &[&str], needles: &[&str]) {
    let out = mmsim().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}: printed a result");
    for n in needles {
        assert!(stderr.contains(n), "{args:?}: expected {n:?} in: {stderr}");
    }
}

/// A small scenario (file reads and an anonymous loop that swaps, with readahead, to an
/// ssd) in `dir`, with `extra` lines in its `[machine]` table.
fn small_scenario(dir: &Path, extra: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("small.toml");
    std::fs::write(
        &path,
        format!(
            "seed = 4\nwarmup_events = 5000\n[machine]\nmemory = \"64M\"\nswappiness = 100\n{extra}\n\
             [machine.swap]\ndevice = \"ssd\"\nsize = \"64M\"\n\
             [[workload]]\nkind = \"zipf\"\ntarget = \"file\"\nadvice = \"random\"\npages = \"64M\"\ntheta = 0.9\naccesses = 40000\n\
             [[workload]]\nkind = \"loop\"\ntarget = \"anon\"\npages = \"48M\"\niterations = 3\n\
             write_ratio = 0.3\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

/// The CPU fields of a reclaim profile (`kswapd_profile`, `direct_profile`).
const PROFILE_NS: [&str; 7] = [
    "lru_ns",
    "rmap_ns",
    "pt_walk_ns",
    "free_ns",
    "pageout_ns",
    "compress_ns",
    "lock_ns",
];

/// Every metric of the comparison, computed independently from a `run --json` result.
fn metric(run: &Value, name: &str) -> Option<f64> {
    let u = |v: &Value| v.as_u64().unwrap_or_else(|| panic!("{name}: {v}"));
    let f = |v: &Value| v.as_f64().unwrap_or_else(|| panic!("{name}: {v}"));
    let vm = &run["vmstat"];
    let pct = |num: &str, den: &str| {
        let (n, d) = (u(&vm[num]), u(&vm[den]));
        (d > 0).then(|| n as f64 * 100.0 / d as f64)
    };
    Some(match name {
        "accesses" | "misses" => u(&run[name]) as f64,
        "miss_ratio" | "kswapd_cpu_s" | "reclaim_stall_s" | "io_wait_s" | "runtime_s"
        | "throughput" | "lru_lock_wait_s" | "lru_lock_busy_pct" => f(&run[name]),
        "direct_reclaim_cpu_s" => {
            let p = &run["direct_profile"];
            PROFILE_NS.iter().map(|k| u(&p[k])).sum::<u64>() as f64 / 1e9
        }
        "direct_rmap_walks" => u(&run["direct_profile"]["rmap_walks"]) as f64,
        "minor_faults" => (u(&vm["pgfault"]) - u(&vm["pgmajfault"])) as f64,
        "kswapd_efficiency_pct" => return pct("pgsteal_kswapd", "pgscan_kswapd"),
        "direct_efficiency_pct" => return pct("pgsteal_direct", "pgscan_direct"),
        "psi_some_total_us" => u(&run["psi"]["some"]["total"]) as f64,
        "psi_full_total_us" => u(&run["psi"]["full"]["total"]) as f64,
        "psi_some_avg10" => f(&run["psi"]["some"]["avg10"]),
        "psi_full_avg10" => f(&run["psi"]["full"]["avg10"]),
        "kswapd_rmap_pct" | "kswapd_pt_walk_pct" => {
            let p = &run["kswapd_profile"];
            let total: u64 = PROFILE_NS.iter().map(|k| u(&p[k])).sum();
            let part = if name == "kswapd_rmap_pct" {
                u(&p["rmap_ns"])
            } else {
                u(&p["pt_walk_ns"])
            };
            return (total > 0).then(|| part as f64 * 100.0 / total as f64);
        }
        n if n.starts_with("workload:") && n.ends_with(":end_s") => {
            let w = &n["workload:".len()..n.len() - ":end_s".len()];
            let ws = run["workloads"].as_array().unwrap();
            let ns = ws
                .iter()
                .find(|x| x["name"] == w)
                .unwrap_or_else(|| panic!("no workload {w}"))["end_ns"]
                .as_u64()?;
            ns as f64 / 1e9
        }
        "kswapd_rmap_walks" => u(&run["kswapd_profile"]["rmap_walks"]) as f64,
        "kswapd_ptes_walked" => u(&run["kswapd_profile"]["ptes_walked"]) as f64,
        counter => {
            let v = &vm[counter];
            assert!(
                v.is_u64(),
                "the table has a row `{counter}` this test does not know"
            );
            u(v) as f64
        }
    })
}

/// The rows of a single-run table: metric → cells (value as printed, change as printed).
type Table = Vec<(String, Vec<(String, Option<String>)>)>;

/// Parses the table of `mmsim compare` (the lines after the column headers).
fn parse_table(text: &str, columns: usize) -> Table {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("accesses") || l.starts_with("Min    accesses"))
        .expect("table");
    let mut rows = Vec::new();
    // The table ends at the first empty line (the published results may follow).
    for l in lines[start..].iter().take_while(|l| !l.is_empty()) {
        let (label, rest) = if l.starts_with(|c: char| c.is_ascii_uppercase()) {
            let mut it = l.splitn(3, char::is_whitespace);
            let stat = it.next().unwrap();
            let rest = it.last().unwrap().trim_start();
            let (name, rest) = rest.split_once(' ').unwrap();
            (format!("{stat} {name}"), rest)
        } else {
            let (name, rest) = l.split_once(' ').unwrap();
            (name.to_string(), rest)
        };
        let mut cells = Vec::new();
        let mut rest = rest.trim();
        while !rest.is_empty() {
            let (value, tail) = rest.split_once(' ').unwrap_or((rest, ""));
            let tail = tail.trim_start();
            let (change, tail) = match tail.strip_prefix('(') {
                Some(t) => {
                    let (c, t) = t.split_once(')').unwrap();
                    (Some(c.trim().to_string()), t.trim_start())
                }
                None => (None, tail),
            };
            cells.push((value.to_string(), change));
            rest = tail;
        }
        assert_eq!(cells.len(), columns, "row `{l}`");
        rows.push((label.to_string(), cells));
    }
    rows
}

/// `v` printed with as many decimals as `shown` has.
fn as_shown(v: Option<f64>, shown: &str) -> String {
    match v {
        None => "-".into(),
        Some(v) => {
            let d = shown.split_once('.').map_or(0, |(_, f)| f.len());
            format!("{v:.d$}")
        }
    }
}

/// The change as the table prints it.
fn change_shown(base: Option<f64>, v: Option<f64>) -> Option<String> {
    let (b, v) = (base?, v?);
    Some(if b == 0.0 {
        if v == 0.0 {
            "0.00%".into()
        } else {
            "new".into()
        }
    } else {
        let p = (v - b) / b.abs() * 100.0;
        if p.abs() < 0.005 {
            "0.00%".into()
        } else if p.abs() >= 99_999.995 {
            format!("{p:.1e}%")
        } else {
            format!("{p:.2}%")
        }
    })
}

/// Checks a single-run table against the `run --json` results of its columns.
fn check_table(text: &str, runs: &[Value]) {
    let table = parse_table(text, runs.len());
    assert!(table.len() >= 30, "{text}");
    for name in [
        "minor_faults",
        "pgmajfault",
        "pswpin",
        "pswpout",
        "pgscan_kswapd",
        "pgscan_direct",
        "pgsteal_kswapd",
        "pgsteal_direct",
        "kswapd_efficiency_pct",
        "direct_efficiency_pct",
        "workingset_refault_anon",
        "workingset_refault_file",
        "workingset_activate_anon",
        "workingset_activate_file",
        "allocstall_normal",
        "psi_some_total_us",
        "psi_full_total_us",
        "psi_some_avg10",
        "kswapd_cpu_s",
        "runtime_s",
        "throughput",
    ] {
        assert!(table.iter().any(|(n, _)| n == name), "no row {name}");
    }
    for (name, cells) in &table {
        let base = metric(&runs[0], name);
        for (i, ((value, change), run)) in cells.iter().zip(runs).enumerate() {
            let v = metric(run, name);
            assert_eq!(value, &as_shown(v, value), "{name}, column {i}");
            if i == 0 {
                assert_eq!(change, &None, "{name}: the baseline has no change");
            } else {
                assert_eq!(change, &change_shown(base, v), "{name}, column {i}");
            }
        }
    }
}

#[test]
fn default_scenario_table_equals_separate_runs() {
    let text = stdout(&["compare", "--policy", "scanned-rotated,cost"]);
    assert!(
        text.contains("baseline    policy=scanned-rotated"),
        "{text}"
    );
    let header = text
        .lines()
        .find(|l| l.trim_start().starts_with("policy=scanned-rotated"))
        .unwrap();
    assert!(header.trim_end().ends_with("policy=cost"), "{header}");
    let runs = [
        json(&["run", "--json", "--policy", "scanned-rotated"]),
        json(&["run", "--json", "--policy", "cost"]),
    ];
    check_table(&text, &runs);
    // The README's numbers.
    assert_eq!(metric(&runs[1], "pswpout"), Some(49228.0));
    assert!(text.contains(" 49228 (      new)"), "{text}");
}

#[test]
fn set_axes_json_and_csv_equal_separate_runs_of_edited_scenarios() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_scenario(dir.path(), "");
    let args = [
        "compare",
        p.as_str(),
        "--set",
        "page_cluster=0,3",
        "--policy",
        "scanned-rotated,cost",
    ];
    let report = json(&cat(&args, &["--json"]));
    let csv = stdout(&cat(&args, &["--csv"]));
    let text = stdout(&args);

    // The configurations: the product of the axes, the first given varying slowest.
    let names: Vec<&str> = report["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "page_cluster=0,policy=scanned-rotated",
            "page_cluster=0,policy=cost",
            "page_cluster=3,policy=scanned-rotated",
            "page_cluster=3,policy=cost",
        ]
    );
    assert_eq!(report["scenario"], "small");
    assert_eq!(report["repeat"], 1);
    assert_eq!(report["partial"], false);
    assert_eq!(report["axes"][0]["key"], "page_cluster");
    assert_eq!(report["axes"][1]["values"][1], "cost");
    assert_eq!(
        report["configs"][3]["settings"],
        serde_json::json!([
            {"key": "page_cluster", "value": "3"},
            {"key": "policy.name", "value": "cost"},
        ])
    );

    // Each configuration equals `mmsim run` of the scenario file with the setting
    // written into it (same file name, so the same scenario name).
    let mut runs = Vec::new();
    for (i, (pc, policy)) in [
        ("0", "scanned-rotated"),
        ("0", "cost"),
        ("3", "scanned-rotated"),
        ("3", "cost"),
    ]
    .into_iter()
    .enumerate()
    {
        let edited = small_scenario(
            &dir.path().join(format!("c{i}")),
            &format!("page_cluster = {pc}"),
        );
        let run = run_result(&["run", &edited, "--json", "--policy", policy]);
        let c = &report["configs"][i];
        assert_eq!(c["runs"][0]["result"], run, "configuration {i}");
        assert_eq!(c["runs"][0]["seed"], 4);
        assert_eq!(c["runs"][0]["partial"], false);
        for (name, v) in c["runs"][0]["metrics"].as_object().unwrap() {
            assert_eq!(v.as_f64(), metric(&run, name), "{name}, configuration {i}");
            let s = &c["stats"][name];
            if v.is_null() {
                assert!(s.is_null(), "{name}");
            } else {
                assert_eq!(s["mean"], *v, "{name}");
                assert_eq!((&s["min"], &s["max"]), (v, v), "{name}");
                assert_eq!(s["n"], 1);
                assert!(s["stddev"].is_null());
            }
        }
        runs.push(run);
    }
    // The setting took effect: swap readahead turns major faults into minor ones.
    assert!(metric(&runs[1], "pgmajfault") > metric(&runs[3], "pgmajfault"));
    assert!(metric(&runs[1], "minor_faults") < metric(&runs[3], "minor_faults"));
    check_table(&text, &runs);

    // The CSV: the same values at full precision.
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("metric,config,value,runs,min,max,stddev,change_pct")
    );
    let mut n = 0;
    for line in lines {
        // Configuration names contain commas: quoted.
        let (metric_name, rest) = line.split_once(",\"").unwrap();
        let (config, rest) = rest.split_once("\",").unwrap();
        let f: Vec<&str> = rest.split(',').collect();
        let i = names.iter().position(|n| *n == config).unwrap();
        let v = metric(&runs[i], metric_name);
        let parse = |s: &str| (!s.is_empty()).then(|| s.parse::<f64>().unwrap());
        assert_eq!(parse(f[0]), v, "{line}");
        assert_eq!(f[1], if v.is_some() { "1" } else { "0" }, "{line}");
        assert_eq!((parse(f[2]), parse(f[3])), (v, v), "{line}");
        assert_eq!(f[4], "", "{line}");
        let base = metric(&runs[0], metric_name);
        let change = match (base, v) {
            (Some(b), Some(v)) if b != 0.0 => Some((v - b) / b.abs() * 100.0),
            (Some(_), Some(v)) => (v == 0.0).then_some(0.0),
            _ => None,
        };
        assert_eq!(parse(f[5]), change, "{line}");
        n += 1;
    }
    assert_eq!(n, 4 * parse_table(&text, 4).len());
}

#[test]
fn repeat_gives_the_statistics_of_the_seeded_runs() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_scenario(dir.path(), "");
    let base = [
        "compare",
        p.as_str(),
        "--policy",
        "scanned-rotated,cost",
        "--repeat",
        "3",
        "--seed",
        "7",
    ];
    let report = json(&cat(&base, &["--json"]));
    let csv = stdout(&cat(&base, &["--csv"]));
    let text = stdout(&base);
    assert!(
        text.contains("runs        3 per configuration, seeds 7..=9"),
        "{text}"
    );
    // The table ends at the first empty line ("What changed" follows).
    let table = text
        .lines()
        .skip_while(|l| !l.starts_with("Min "))
        .take_while(|l| !l.is_empty())
        .count();
    assert!(table >= 4, "{text}");
    assert_eq!(table % 4, 0, "Min, Amean, Stddev, Max rows:\n{text}");

    for (i, policy) in ["scanned-rotated", "cost"].into_iter().enumerate() {
        let runs: Vec<Value> = (7..=9)
            .map(|seed| {
                run_result(&[
                    "run",
                    &p,
                    "--json",
                    "--policy",
                    policy,
                    "--seed",
                    &seed.to_string(),
                ])
            })
            .collect();
        let c = &report["configs"][i];
        for (k, run) in runs.iter().enumerate() {
            assert_eq!(c["runs"][k]["seed"], 7 + k as u64);
            assert_eq!(c["runs"][k]["result"], *run);
        }
        for (name, s) in c["stats"].as_object().unwrap() {
            let v: Vec<f64> = runs.iter().filter_map(|r| metric(r, name)).collect();
            if v.is_empty() {
                assert!(s.is_null(), "{name}");
                continue;
            }
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
            assert!(close(s["mean"].as_f64().unwrap(), mean), "{name}: {s}");
            assert!(close(s["stddev"].as_f64().unwrap(), var.sqrt()), "{name}");
            let min = v.iter().copied().fold(f64::INFINITY, f64::min);
            let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(s["min"].as_f64(), Some(min), "{name}");
            assert_eq!(s["max"].as_f64(), Some(max), "{name}");
            // The same numbers in the CSV and, as printed, on the Amean row.
            let row = format!("{name},policy={policy},");
            let line = csv.lines().find(|l| l.starts_with(&row)).unwrap();
            let f: Vec<&str> = line[row.len()..].split(',').collect();
            assert_eq!(f[0].parse::<f64>().ok(), s["mean"].as_f64(), "{line}");
            assert_eq!(f[1], "3", "{line}");
            assert_eq!(f[4].parse::<f64>().ok(), s["stddev"].as_f64(), "{line}");
            let amean = text
                .lines()
                .find(|l| l.split_whitespace().take(2).eq(["Amean", name.as_str()]))
                .unwrap();
            let shown = amean
                .split_whitespace()
                .filter(|t| !t.starts_with('(') && !t.ends_with(')'))
                .nth(2 + i)
                .unwrap();
            assert_eq!(shown, as_shown(Some(mean), shown), "{amean}");
        }
    }
    // The change is of the means.
    let mean = |c: usize, m: &str| report["configs"][c]["stats"][m]["mean"].as_f64().unwrap();
    let line = csv
        .lines()
        .find(|l| l.starts_with("misses,policy=cost,"))
        .unwrap();
    let change: f64 = line.rsplit(',').next().unwrap().parse().unwrap();
    let expected = (mean(1, "misses") - mean(0, "misses")) / mean(0, "misses") * 100.0;
    assert_eq!(change, expected);
}

/// `--jobs` changes how many runs go at once, never what they give or the order in
/// which the output shows them.
#[test]
fn jobs_change_nothing_in_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_scenario(dir.path(), "");
    let base = [
        "compare",
        p.as_str(),
        "--policy",
        "lru,scanned-rotated,cost",
        "--repeat",
        "2",
    ];
    let serial_json = stdout(&cat(&base, &["--json", "--jobs", "1"]));
    let serial_text = stdout(&cat(&base, &["--jobs", "1"]));
    for jobs in ["2", "5"] {
        assert_eq!(
            stdout(&cat(&base, &["--json", "--jobs", jobs])),
            serial_json,
            "--jobs {jobs}"
        );
        assert_eq!(stdout(&cat(&base, &["-j", jobs])), serial_text, "-j {jobs}");
    }
    let v: Value = serde_json::from_str(&serial_json).unwrap();
    let names: Vec<&str> = v["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["policy=lru", "policy=scanned-rotated", "policy=cost"]
    );
}

#[test]
fn long_configuration_names_get_a_legend() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_scenario(dir.path(), "");
    let text = stdout(&[
        "compare",
        &p,
        "--policy",
        "scanned-rotated,cost",
        "--set",
        "watermark_scale_factor=10,200",
        "--quiet",
    ]);
    // Values only, with the keys named once.
    assert!(
        text.contains("columns are policy,watermark_scale_factor"),
        "{text}"
    );
    assert!(text.contains("scanned-rotated,200"), "{text}");
    let text = stdout(&[
        "compare",
        &p,
        "--policy",
        "scanned-rotated,cost",
        "--set",
        "fs.device=ssd,hdd",
        "--set",
        "swap.device=zram,ssd",
        "--set",
        "machine.memory=64M,80M",
    ]);
    assert!(
        text.contains(
            "\n  c1   policy=scanned-rotated,fs.device=ssd,swap.device=zram,memory=64M\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("\n  c16  policy=cost,fs.device=hdd,swap.device=ssd,memory=80M\n"),
        "{text}"
    );
}

/// `mmsim compare SCENARIO FLAGS...` refused (exit status 2), naming the flag and the
/// field: the flags and the needles of its message.
const REFUSED: &[(&[&str], &[&str])] = &[
    // Lists.
    (
        &["--policy", "cost,fifo"],
        &[
            "--policy cost,fifo",
            "unknown policy `fifo`",
            "scanned-rotated",
        ],
    ),
    (&["--policy", ""], &["--policy", "empty list"]),
    (&["--policy", "cost,,lru"], &["--policy", "empty value"]),
    (
        &["--cost-variant", "v5.8,"],
        &["--cost-variant", "empty value"],
    ),
    (
        &["--cost-variant", "v5.9"],
        &[
            "unknown cost variant `v5.9`",
            "allowed: v5.8 (alias 5.8), v6.2 (alias 6.2)",
        ],
    ),
    (&["--policy", "cost,classic"], &["`cost` is listed twice"]),
    (
        &["--set", "swappiness="],
        &["--set swappiness=", "empty list"],
    ),
    (&["--set", "swappiness"], &["--set swappiness", "KEY=V1,V2"]),
    (&["--set", "=1,2"], &["is not a [machine] key"]),
    // --set: unknown key, bad value, out of range: the field is named.
    (
        &["--set", "swapiness=60,100"],
        &[
            "--set swapiness=60",
            "machine.swapiness",
            "unknown field",
            "`swappiness`",
        ],
    ),
    (
        &["--set", "swap.devise=zram"],
        &["machine.swap.devise", "unknown field", "`device`"],
    ),
    (
        &["--set", "swappiness=60,abc"],
        &["--set swappiness=abc", "machine.swappiness", "invalid type"],
    ),
    (
        &["--set", "memory=64M,6Q"],
        &["--set memory=6Q", "machine.memory", "unknown size suffix"],
    ),
    (
        &["--set", "swap.device=zram,floppy"],
        &["machine.swap.device", "floppy", "`none`, `zram`"],
    ),
    (
        &["--set", "cpus=36,0"],
        &["--set cpus=0", "small.toml", "machine.cpus", "[1, 4096]"],
    ),
    (
        &["--set", "cost.lru_lock_ns=50,2000000000"],
        &["machine.cost.lru_lock_ns", "[0, 1000000000]"],
    ),
    (
        &["--set", "swappiness=60,300"],
        &[
            "--set swappiness=300",
            "small.toml",
            "machine.swappiness",
            "[0, 200]",
        ],
    ),
    (
        &["--set", "page_cluster=0,9"],
        &["--set page_cluster=9", "machine.page_cluster", "[0, 5]"],
    ),
    (
        &["--set", "memory=1M"],
        &["--set memory=1M", "machine.memory", "[16M, 2T]"],
    ),
    (
        &["--set", "swap.queue_depth=0"],
        &["machine.swap.queue_depth", "[1, 65536]"],
    ),
    (
        &["--set", "fs.device=fs"],
        &["machine.fs.device", "`fs` is only for swap"],
    ),
    (
        &["--set", "fs.device=none"],
        &["machine.fs.device", "the filesystem needs a device"],
    ),
    (
        &[
            "--set",
            "swap.device=fs",
            "--set",
            "swap.bandwidth_mbps=100",
        ],
        &["machine.swap.device", "filesystem device's timing"],
    ),
    (
        &["--set", "swappiness.x=1"],
        &["machine.swappiness.x", "`swappiness` is a value"],
    ),
    // Duplicate axes, conflicting flags.
    (
        &["--set", "swappiness=1,2", "--set", "machine.swappiness=3"],
        &["duplicate axis", "machine.swappiness"],
    ),
    (
        &["--policy", "cost", "--set", "policy.name=lru"],
        &["--policy", "--set policy.name", "duplicate axis"],
    ),
    (
        &["--set", "swap=x", "--set", "swap.size=1G"],
        &["duplicate axis", "machine.swap"],
    ),
    (
        &["--swappiness", "60", "--set", "swappiness=1,2"],
        &["--swappiness conflicts with --set swappiness"],
    ),
    (
        &["--swap", "ssd", "--set", "swap.device=zram,ssd"],
        &["--swap conflicts with --set swap.device"],
    ),
    (
        &["--memory", "128M", "--set", "memory=64M,80M"],
        &["--memory conflicts"],
    ),
    (
        &["--policy", "cost", "--json", "--csv"],
        &["'--json' cannot be used with '--csv'"],
    ),
    // Repeat, seeds, nothing to compare.
    (
        &["--policy", "cost", "--repeat", "0"],
        &["--repeat 0", "[1, 1000]"],
    ),
    (
        &["--policy", "cost", "--repeat", "-1"],
        &["--repeat -1", "[1, 1000]"],
    ),
    (
        &[
            "--policy",
            "cost",
            "--repeat",
            "2",
            "--seed",
            "18446744073709551615",
        ],
        &["--seed", "--repeat 2", "overflow"],
    ),
    // The scenario flags are run's, with run's errors.
    (&[], &["nothing to compare", "--policy"]),
    (
        &["--policy", "cost", "--memory", "1M"],
        &["--memory 1M", "machine.memory"],
    ),
];

#[test]
fn bad_input_names_the_flag_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_scenario(dir.path(), "");
    let c = |rest: &[&'static str]| cat(&["compare", p.as_str()], rest);
    for (rest, needles) in REFUSED {
        bad_input(&c(rest), needles);
    }
    for n in ["0", "-1", "257"] {
        bad_input(
            &c(&["--policy", "cost", "--jobs", n]),
            &[format!("--jobs {n}").as_str(), "[1, 256]"],
        );
    }
    bad_input(
        &["compare", "no-such-scenario", "--policy", "cost"],
        &["no-such-scenario", "embedded"],
    );
    bad_input(
        &["compare", "--format", "text", "--policy", "cost"],
        &["--trace"],
    );
}

/// Sends SIGINT to a child after `after`, waits (at most a minute) for it to exit.
#[cfg(unix)]
fn interrupted(args: &[&str], after: std::time::Duration) -> Output {
    use std::time::{Duration, Instant};
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("mmsim"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child's pid; it has not been waited for, so the pid is
    // still that child's.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let start = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: as above; the waiting thread has not reaped it (no exit yet).
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!(
                "{args:?} did not stop within {:?} of SIGINT",
                start.elapsed()
            );
        }
    }
}

/// A scenario that would run for minutes: 2^30 zipf accesses.
#[cfg(unix)]
fn long_scenario(dir: &Path) -> PathBuf {
    let path = dir.join("long.toml");
    std::fs::write(
        &path,
        "warmup_events = 1000\n[machine]\nmemory = \"64M\"\n\
         [[workload]]\nkind = \"zipf\"\ntarget = \"file\"\npages = \"256M\"\ntheta = 0.9\naccesses = 1073741824\n",
    )
    .unwrap();
    path
}

#[cfg(unix)]
#[test]
fn sigint_prints_the_partial_result_and_exits_130() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let long = long_scenario(dir.path());
    let p = long.to_str().unwrap();

    let out = interrupted(&["run", p, "--json"], Duration::from_millis(1500));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["partial"], true);
    let events = v["events"].as_u64().unwrap();
    assert!(events > 1000 && events < 1 << 30, "{events}");
    assert_eq!(v["accesses"].as_u64().unwrap(), events - 1000);
    assert_eq!(v["warmup_events"], 1000);

    let out = interrupted(&["run", p], Duration::from_millis(1500));
    assert_eq!(out.status.code(), Some(130));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("PARTIAL         interrupted by Ctrl-C after "),
        "{text}"
    );
    assert!(text.contains("/proc/vmstat"), "{text}");

    let out = interrupted(
        &["compare", p, "--policy", "scanned-rotated,cost", "--json"],
        Duration::from_millis(1500),
    );
    assert_eq!(out.status.code(), Some(130));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["partial"], true);
    let configs = v["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 1, "the second configuration never ran");
    assert_eq!(configs[0]["partial"], true);
    assert_eq!(configs[0]["runs"][0]["partial"], true);
    assert_eq!(configs[0]["runs"][0]["result"]["partial"], true);

    let out = interrupted(
        &["compare", p, "--policy", "scanned-rotated,cost"],
        Duration::from_millis(1500),
    );
    assert_eq!(out.status.code(), Some(130));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("PARTIAL     interrupted by Ctrl-C: policy=scanned-rotated* counts only"),
        "{text}"
    );
    assert!(text.contains("policy=scanned-rotated*\n"), "{text}");
}

/// "What changed": in JSON each change is the configurations' means from `stats`,
/// grouped by mechanism, each group's largest first and the groups by their largest;
/// the text prints the same readings under the table.
#[test]
fn what_changed_is_computed_from_the_table_and_grouped_by_mechanism() {
    let dir = tempfile::tempdir().unwrap();
    let p = small_scenario(dir.path(), "");
    let args = ["compare", &p, "--set", "swappiness=0,200", "-q"];
    let j = json(&cat(&args, &["--json"]));
    let configs = j["configs"].as_array().unwrap();
    let w = j["what_changed"].as_array().unwrap();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0]["against"], configs[0]["name"]);
    assert_eq!(w[0]["config"], configs[1]["name"]);
    let mechanisms = w[0]["mechanisms"].as_array().unwrap();
    assert!(
        mechanisms.iter().any(|m| m["mechanism"] == "swap"),
        "swappiness 0 → 200 moves swap: {mechanisms:?}"
    );
    let magnitude = |c: &Value| c["relative_pct"].as_f64().map_or(f64::INFINITY, f64::abs);
    let mut previous = f64::INFINITY;
    for m in mechanisms {
        let changes = m["changes"].as_array().unwrap();
        assert!((1..=3).contains(&changes.len()));
        assert!(
            magnitude(&changes[0]) <= previous,
            "groups by their largest: {m}"
        );
        previous = magnitude(&changes[0]);
        for c in changes {
            let name = c["metric"].as_str().unwrap();
            let mean = |i: usize| configs[i]["stats"][name]["mean"].as_f64().unwrap();
            assert_eq!(c["base"].as_f64().unwrap(), mean(0), "{name}");
            assert_eq!(c["value"].as_f64().unwrap(), mean(1), "{name}");
            if let Some(pct) = c["relative_pct"].as_f64() {
                assert!(pct.abs() >= 1.0, "{name}: {pct}");
            }
        }
        let reading = m["reading"].as_str().unwrap();
        assert!(
            reading.contains(changes[0]["metric"].as_str().unwrap()),
            "{reading}"
        );
    }
    let text = stdout(&args);
    assert!(
        text.contains(&format!(
            "What changed, {} against {}:",
            configs[1]["name"].as_str().unwrap(),
            configs[0]["name"].as_str().unwrap()
        )),
        "{text}"
    );
    for m in mechanisms {
        assert!(text.contains(m["reading"].as_str().unwrap()), "{text}");
    }
}
