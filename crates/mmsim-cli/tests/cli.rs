//! Command-line tests: the default run, JSON output, determinism, a golden trace run,
//! and every bad-input path (non-zero exit, a message naming the file and position or the
//! field, never a panic). The `[machine]` and `[machine.policy]` settings given with
//! `--set` are tested in `machine_settings.rs`.

mod common;

use common::{bad_input, json, mmsim, simulated, trace};

use predicates::prelude::*;

#[test]
fn no_arguments_runs_and_explains_the_default_scenario() {
    mmsim()
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Default scenario: the pgbench experiment",
        ))
        .stdout(predicate::str::contains("scenario        default"))
        .stdout(predicate::str::contains("/proc/vmstat"))
        .stdout(predicate::str::contains("pswpout"))
        .stdout(predicate::str::contains("workingset_refault_file"))
        .stdout(predicate::str::contains("/proc/pressure/memory"))
        .stdout(predicate::str::contains(
            "measured        after 12000000 warmup events",
        ))
        // 288,256 idle pages touched + 24 M accesses, minus the 12 M warmup
        .stdout(predicate::str::contains("accesses          12288256"));
}

#[test]
fn json_has_the_result_fields_at_top_level() {
    let v = json(&["run", "--json"]);
    for key in [
        "accesses",
        "hits",
        "misses",
        "runtime_s",
        "miss_ratio",
        "policy",
    ] {
        assert!(v[key].is_number() || v[key].is_string(), "{key}: {v}");
    }
    assert!(v["vmstat"].is_object());
    assert!(v["vmstat"]["pswpout"].is_number());
    assert!(v["psi"]["some"]["total"].is_number());
    assert!(v["trace"].is_array());
    assert_eq!(
        v["accesses"].as_u64().unwrap(),
        v["hits"].as_u64().unwrap() + v["misses"].as_u64().unwrap()
    );
    assert_eq!(v["scenario"], "default");
    // A complete run: every event simulated (288,256 idle pages touched + 24 M accesses).
    assert_eq!(v["partial"], false);
    assert_eq!(v["events"], 24_288_256);
}

#[test]
fn default_scenario_is_deterministic() {
    // The simulation's bits; the process's own peak heap is the host's.
    let a = simulated(json(&["run", "--json"]));
    let b = simulated(json(&["run", "--json"]));
    assert_eq!(a, b);
    let c = simulated(json(&["run", "--json", "--seed", "2"]));
    assert_eq!(a["vmstat"], b["vmstat"]);
    // The seed reaches the workloads: each seed's own, exact counts.
    let counts = |v: &serde_json::Value| {
        [
            &v["misses"],
            &v["vmstat"]["pswpout"],
            &v["vmstat"]["pswpin"],
            &v["vmstat"]["workingset_refault_file"],
        ]
        .map(|x| x.as_u64().unwrap())
    };
    assert_eq!(counts(&a), [2_247_165, 49_228, 20_928, 970_621]);
    assert_eq!(counts(&c), [2_248_587, 48_587, 20_694, 971_890]);
}

#[test]
fn lru_trace_run_matches_the_published_hit_ratio() {
    let cs = trace("lirs/cs.trace.gz");
    let v = json(&[
        "run",
        "--trace",
        &cs,
        "--policy",
        "lru",
        "--memcg-max",
        "100p",
        "--as",
        "file",
        "--json",
    ]);
    let (hits, accesses) = (v["hits"].as_u64().unwrap(), v["accesses"].as_u64().unwrap());
    assert_eq!(accesses, 6781);
    // README: LRU hit ratio 1.83 % at 100..500 entries.
    assert_eq!(
        format!("{:.2}", hits as f64 * 100.0 / accesses as f64),
        "1.83"
    );
    assert_eq!(hits, 124);
    assert_eq!(v["trace"][0]["references"], 6781);
    assert_eq!(v["trace"][0]["distinct"], 1409);
    assert_eq!(v["trace"][0]["format"], "lirs");
    assert_eq!(v["memcg_max_pages"], 100);

    // The same as anonymous memory (swap is added automatically).
    let v = json(&[
        "run",
        "--trace",
        &cs,
        "--policy",
        "lru",
        "--memcg-max",
        "100p",
        "--as",
        "anon",
        "--json",
    ]);
    assert_eq!(v["hits"], 124);

    // The table shows the trace statistics.
    mmsim()
        .args([
            "run",
            "--trace",
            &cs,
            "--policy",
            "lru",
            "--memcg-max",
            "100p",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("hits              124"))
        .stdout(predicate::str::contains("references        6781"))
        .stdout(predicate::str::contains("skipped           2 markers"));
}

#[test]
fn trace_limit_and_explicit_format() {
    let oltp = trace("arc/OLTP.lis.zst");
    let v = json(&[
        "run",
        "--trace",
        &oltp,
        "--format",
        "arc",
        "--limit",
        "5000",
        "--policy",
        "lru",
        "--memcg-max",
        "1000p",
        "--json",
    ]);
    assert_eq!(v["accesses"], 5000);
    assert_eq!(v["trace"][0]["limited"], true);
}

#[test]
fn scenario_file_and_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.toml");
    std::fs::write(
        &path,
        "seed = 4\n[machine]\nmemory = \"64M\"\n[[workload]]\nkind = \"zipf\"\ntarget = \"file\"\n\
         pages = \"128M\"\ntheta = 0.9\naccesses = 20000\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let v = json(&["run", p, "--json"]);
    assert_eq!(v["scenario"], "small");
    assert_eq!(v["seed"], 4);
    assert_eq!(v["accesses"], 20000);
    let v = json(&[
        "run",
        p,
        "--json",
        "--policy",
        "scanned-rotated",
        "--memory",
        "32M",
        "--swap",
        "zram",
        "--swappiness",
        "100",
        "--memcg-max",
        "1000p",
        "--seed",
        "9",
    ]);
    assert_eq!(v["policy"], "scanned-rotated");
    assert_eq!(v["machine"]["memory"], "32M");
    assert_eq!(v["machine"]["swap"]["device"], "zram");
    assert_eq!(v["machine"]["swap"]["size"], "4G");
    assert_eq!(v["machine"]["swappiness"], 100);
    assert_eq!(v["memcg_max_pages"], 1000);
    assert_eq!(v["seed"], 9);
    // Embedded scenarios by name; --print-scenario shows the effective TOML.
    mmsim()
        .args(["run", "zipf-file", "--print-scenario", "--memory", "256M"])
        .assert()
        .success()
        .stdout(predicate::str::contains("memory = \"256M\""))
        .stdout(predicate::str::contains("[[workload]]"));
    mmsim()
        .arg("scenarios")
        .assert()
        .success()
        .stdout(predicate::str::contains("postgres-like"));
}

#[test]
fn bench_runs() {
    mmsim()
        .args(["bench", "--accesses", "20000", "--pages", "5000"])
        .assert()
        .success()
        .stdout(predicate::str::contains("lru"))
        .stdout(predicate::str::contains("cost"))
        .stdout(predicate::str::contains("accesses/s"));
    mmsim()
        .args([
            "bench",
            "--accesses",
            "20000",
            "--pages",
            "5000",
            "--target",
            "anon",
            "--policy",
            "lru",
        ])
        .assert()
        .success();
}

/// Long benchmarks stream their events in chunks instead of holding them (a billion
/// took 15.6 GB): the chunked replay is the same stream, so the same miss ratio.
#[test]
fn bench_streams_long_runs_in_chunks_with_the_same_result() {
    let miss_ratio = |extra: &[&str]| {
        let mut args = vec![
            "bench",
            "--accesses",
            "30000",
            "--pages",
            "5000",
            "--policy",
            "cost",
        ];
        args.extend_from_slice(extra);
        let out = mmsim().args(&args).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let row = text
            .lines()
            .find(|l| l.starts_with("cost "))
            .unwrap()
            .to_string();
        (
            text.contains("streamed in chunks of 7000 events"),
            row.split_whitespace().nth(4).unwrap().to_string(),
        )
    };
    let (streamed, whole) = miss_ratio(&[]);
    assert!(!streamed);
    let (streamed, chunked) = miss_ratio(&["--chunk-events", "7000"]);
    assert!(streamed);
    assert_eq!(whole, chunked);
    // The alias sampler draws another stream of the same distribution: another miss
    // ratio, the same one chunked or whole.
    let (_, alias) = miss_ratio(&["--zipf-sampler", "alias"]);
    assert_eq!((alias.as_str(), whole.as_str()), ("0.454533", "0.460067"));
    let (_, alias_chunked) = miss_ratio(&["--zipf-sampler", "alias", "--chunk-events", "7000"]);
    assert_eq!(alias, alias_chunked);
    bad_input(
        &["bench", "--zipf-sampler", "vose"],
        &["unknown zipf sampler `vose`; allowed: rejection-inversion, alias"],
    );
    bad_input(
        &["bench", "--accesses", "0"],
        &["--accesses 0: out of range [1, 2^40]"],
    );
}

// ---- bad input -------------------------------------------------------------------------

#[test]
fn truncated_oracle_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.bin");
    std::fs::write(&path, [7u8; 30]).unwrap();
    let p = path.to_str().unwrap();
    bad_input(
        &["run", "--trace", p, "--format", "oracle-general"],
        &["short.bin", "record 2", "truncated"],
    );
}

#[test]
fn malformed_text_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.txt");
    std::fs::write(&path, "1\n2\n3x\n4\n").unwrap();
    let p = path.to_str().unwrap();
    bad_input(
        &["run", "--trace", p, "--format", "text"],
        &["keys.txt", "line 3"],
    );
    bad_input(
        &["run", "--trace", p, "--format", "text", "--json"],
        &["keys.txt", "line 3"],
    );
}

#[test]
fn unknown_format() {
    bad_input(
        &["run", "--trace", "x", "--format", "xyz"],
        &["--format", "unknown trace format \"xyz\""],
    );
}

#[test]
fn bad_sizes() {
    bad_input(&["run", "--memcg-max", "0"], &["--memcg-max", "zero size"]);
    bad_input(
        &["run", "--memcg-max", "-5M"],
        &["--memcg-max", "negative size"],
    );
    bad_input(&["run", "--memory", "12Q"], &["--memory", "suffix"]);
    bad_input(&["run", "--memory", "1M"], &["--memory", "machine.memory"]);
    bad_input(&["run", "--memcg-max", "100"], &["machine.memcg_max"]);
}

#[test]
fn bad_swappiness() {
    bad_input(
        &["run", "--swappiness", "300"],
        &["machine.swappiness", "300"],
    );
    bad_input(&["run", "--swappiness", "-1"], &["swappiness"]);
}

#[test]
fn bad_cpus() {
    for n in ["0", "4097", "-1", "-3"] {
        bad_input(
            &["run", "--cpus", n],
            &[
                &format!("--cpus {n}"),
                &format!("machine.cpus: {n} is out of range"),
                "[1, 4096]",
            ],
        );
    }
}

#[test]
fn size_flags_explain_max_petabytes_and_units() {
    bad_input(
        &["run", "--memcg-max", "max"],
        &[
            "--memcg-max",
            "`max` is not a size",
            "leave the setting out",
        ],
    );
    bad_input(
        &["run", "--memory", "2P"],
        &["--memory", "petabyte", "lowercase p"],
    );
    bad_input(
        &["run", "--memory", "99999T"],
        &["--memory", "larger than the largest size, 1024T"],
    );
    let text = mmsim()
        .args(["run", "zipf-file", "--memory", "512MiB", "--print-scenario"])
        .output()
        .unwrap();
    assert!(text.status.success());
    assert!(String::from_utf8_lossy(&text.stdout).contains("memory = \"512M\""));
}

#[test]
fn cpus_flag_sets_the_machine_cpus() {
    let out = mmsim()
        .args(["run", "memcached", "--cpus", "1", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("lru_lock"), "{text}");
    let out = mmsim().args(["run", "--cpus", "8", "-q"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("cpus            8 ("), "{text}");
}

#[test]
fn bad_scenario_files() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let tiny = write(
        "tiny.toml",
        "[machine]\nmemory = \"1M\"\n[[workload]]\nkind = \"touch\"\ntarget = \"anon\"\npages = 1\n",
    );
    bad_input(
        &["run", &tiny],
        &["tiny.toml", "machine.memory", "[16M, 2T]"],
    );
    let unknown = write(
        "unknown.toml",
        "[machine]\nmemory = \"1G\"\n[[workload]]\nkind = \"touch\"\ntarget = \"anon\"\npages = 1\nsize = 3\n",
    );
    bad_input(
        &["run", &unknown],
        &[
            "unknown.toml",
            "line 7",
            "workload[0].size",
            "field `size` does not apply to kind `touch`",
        ],
    );
    let kind = write(
        "kind.toml",
        "[[workload]]\nkind = \"zipfian\"\ntarget = \"anon\"\npages = 1\n",
    );
    bad_input(
        &["run", &kind],
        &["kind.toml", "line 2", "workload[0].kind", "zipfian"],
    );
    let theta = write(
        "theta.toml",
        "[[workload]]\nkind = \"zipf\"\ntarget = \"anon\"\npages = 10\ntheta = 9\naccesses = 1\n",
    );
    bad_input(&["run", &theta], &["theta.toml", "workload[0].theta"]);
    let syntax = write("syntax.toml", "[machine\n");
    bad_input(&["run", &syntax], &["syntax.toml", "line 1"]);
    bad_input(
        &["run", "/nonexistent/dir/s.toml"],
        &["/nonexistent/dir/s.toml"],
    );
    bad_input(
        &["run", "no-such-scenario"],
        &["no-such-scenario", "embedded"],
    );
}

/// `opens = N` (BAD_INPUT.md row 197) is for a `file` target of an access-pattern
/// kind: on `anon` or a trace replay it is an error naming the field and its use, and
/// on a model kind the field does not apply; never silently ignored.
#[test]
fn opens_off_a_file_or_on_a_model_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let first_line = |name: &str, workload: &str| {
        let p = dir.path().join(name);
        std::fs::write(
            &p,
            format!("seed = 1\n\n[[workload]]\n{workload}opens = 2\n"),
        )
        .unwrap();
        let out = mmsim()
            .args(["run", p.to_str().unwrap(), "-q"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let dir = format!("{}/", dir.path().display());
        stderr.lines().next().unwrap().replace(&dir, "")
    };
    let needs = "workload[0].opens: opens are descriptors read with read(): they need \
                 target = \"file\" and an access-pattern kind (not a trace replay)";
    assert_eq!(
        first_line(
            "anon.toml",
            "kind = \"uniform\"\ntarget = \"anon\"\npages = 100\naccesses = 100\n"
        ),
        format!("error: anon.toml: {needs}")
    );
    assert_eq!(
        first_line(
            "replay.toml",
            "kind = \"trace\"\ntarget = \"file\"\npath = \"x.txt\"\nformat = \"text\"\n"
        ),
        format!("error: replay.toml: {needs}")
    );
    assert_eq!(
        first_line("model.toml", "kind = \"eater\"\nsize = \"16M\"\n"),
        "error: model.toml: line 6, column 1: workload[0].opens: field `opens` does not \
         apply to kind `eater` (a model knows which files and mappings it uses) (its \
         fields: size, passes, pattern, rate, collapse; common: name, phase, weight, \
         advice, start, cgroup, exit, write_ratio)"
    );
}

#[test]
fn missing_trace_file() {
    bad_input(
        &["run", "--trace", "/nonexistent/trace.gz"],
        &["/nonexistent/trace.gz", "No such file"],
    );
}

#[test]
fn usage_errors() {
    bad_input(&["run", "--format", "text"], &["--trace"]);
    bad_input(
        &["run", "--swap", "none", "--swap-size", "1G"],
        &["--swap-size"],
    );
    bad_input(&["run", "--policy", "fifo"], &["unknown policy `fifo`"]);
    bad_input(
        &["bench", "--memory-fraction", "1.5"],
        &["--memory-fraction"],
    );
    bad_input(&["frobnicate"], &["frobnicate"]);
}

/// A full disk behind standard output is an error that says so, never a panic.
#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_named_not_a_panic() {
    for args in [
        &["run", "zipf-file", "-q"][..],
        &["run", "zipf-file", "-q", "--json"],
        &["scenarios"],
        &["trace", "formats"],
        &["validate", "--list-counters"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("mmsim"))
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("error: writing to standard output: No space left on device"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// Runs that cannot answer their question say so: on stderr, in the report, in JSON,
/// and with `--strict` as exit status 3.
#[test]
fn no_confident_wrong_answers() {
    let dir = tempfile::tempdir().unwrap();
    let keys: String = (0..3000).map(|k| format!("{}\n", k % 1500)).collect();
    let trace = dir.path().join("keys.txt");
    std::fs::write(&trace, keys).unwrap();
    let trace = trace.to_str().unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let empty = empty.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = mmsim().args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    // The only workload is OOM-killed: anonymous pages, no swap, 100 pages.
    let oom = [
        "run",
        "--trace",
        trace,
        "--as",
        "anon",
        "--swap",
        "none",
        "--memcg-max",
        "100p",
    ];
    let (code, stdout, stderr) = run(&oom);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("warning: OOM kill:") && stderr.contains("not simulated"),
        "{stderr}"
    );
    assert!(stdout.contains("WARNING         OOM kill:"), "{stdout}");
    let (code, _, stderr) = run(&[&oom[..], &["--strict", "-q"]].concat());
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("--strict: the result has 1 warning(s)"),
        "{stderr}"
    );
    // An empty trace, and a trace whose every record is skipped.
    let v = json(&["run", "--trace", empty, "--json", "-q"]);
    assert_eq!(
        v["warnings"][0],
        format!("trace {empty}: empty: not one record was read, so nothing was simulated")
    );
    let v = json(&[
        "run", "--trace", trace, "--format", "filemap", "--json", "-q",
    ]);
    let w = v["warnings"][0].as_str().unwrap();
    assert!(
        w.contains("all 3000 records were skipped (3000 other events)"),
        "{w}"
    );
    assert!(w.contains("filemap format?"), "{w}");
    // Flags the policy does not read.
    let v = json(&[
        "run",
        "--trace",
        trace,
        "--policy",
        "lru",
        "--cost-variant",
        "v5.8",
        "--mglru-version",
        "v6.1",
        "--json",
        "-q",
    ]);
    assert_eq!(
        v["warnings"][0],
        "--cost-variant v5.8 is ignored: the lru policy does not read it"
    );
    assert_eq!(
        v["warnings"][1],
        "--mglru-version v6.1 is ignored: the lru policy does not read it"
    );
    // A write scheduled after the workloads end is never applied: said, not dropped.
    let scenario = dir.path().join("late.toml");
    let mut toml = String::from_utf8(
        mmsim()
            .args(["run", "zipf-file", "--print-scenario"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    toml.push_str(
        "\n[[cgroup]]\npath = \"/a\"\nmax = \"256M\"\n\n\
         [[cgroup_change]]\nat = \"3600s\"\npath = \"/a\"\nmax = \"128M\"\n",
    );
    std::fs::write(&scenario, toml).unwrap();
    let v = json(&["run", scenario.to_str().unwrap(), "--json", "-q"]);
    assert_eq!(v["unapplied_writes"], 1);
    let w = v["warnings"][0].as_str().unwrap();
    assert!(w.starts_with("1 scheduled write(s)"), "{w}");
    assert!(
        w.contains("the first due at 3600.000 s") && w.contains("never applied"),
        "{w}"
    );
    // A whole result has none, and --strict passes it.
    let (code, _, stderr) = run(&[
        "run",
        "--trace",
        trace,
        "--policy",
        "lru",
        "--memcg-max",
        "2000p",
        "--strict",
        "-q",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// `[machine.fs]` without a `[machine]` table: the missing `memory` is the machine's,
/// not the file system table's.
#[test]
fn a_subtable_without_the_machine_table_names_the_machine() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fs.toml");
    std::fs::write(
        &path,
        "[machine.fs]\ndevice = \"hdd\"\n\n[[workload]]\nkind = \"uniform\"\ntarget = \"file\"\n\
         pages = 1000\naccesses = 1000\n",
    )
    .unwrap();
    bad_input(
        &["run", path.to_str().unwrap()],
        &[
            "fs.toml: line 1, column 2: machine: missing field `memory`",
            "under `[machine]`",
            "this `[machine.fs]` table",
        ],
    );
}

/// A scenario estimated not to fit in the host memory mmsim may use is refused before
/// it runs, naming the workload that makes it big; a run whose heap crosses the limit
/// anyway (a trace's keys are not known before reading it) is stopped with an error.
#[test]
fn host_memory_is_estimated_and_guarded() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.toml");
    std::fs::write(
        &huge,
        "[machine]\nmemory = \"2T\"\n\n[[workload]]\nname = \"big\"\nkind = \"touch\"\n\
         target = \"anon\"\npages = 400000000\n",
    )
    .unwrap();
    let huge = huge.to_str().unwrap();
    for cmd in [&["run"][..], &["compare", "--policy", "lru,cost"]] {
        bad_input(
            &[cmd, &[huge, "--host-memory", "5G"]].concat(),
            &[
                "would need about 23.5 GiB",
                "more than the 5.0 GiB (--host-memory 5.0 GiB)",
                "workload[0] (`big`) can touch 400000000 pages (1.5 TiB of simulated memory)",
                "`--host-memory max` runs it anyway",
            ],
        );
    }
    bad_input(
        &["run", "--host-memory", "0"],
        &["--host-memory", "must be positive"],
    );
    bad_input(&["run", "--host-memory", "lots"], &["--host-memory"]);

    let keys = dir.path().join("keys.txt");
    let text: String = (0..400_000).map(|k| format!("{k}\n")).collect();
    std::fs::write(&keys, text).unwrap();
    let out = mmsim()
        .args([
            "run",
            "-q",
            "--trace",
            keys.to_str().unwrap(),
            "--host-memory",
            "20M",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("stopped after"), "{stderr}");
    assert!(
        stderr.contains("over the 20.0 MiB (--host-memory 20.0 MiB)"),
        "{stderr}"
    );
}

/// Every JSON result says which layout it has, and the process's heap peak.
#[test]
fn run_json_has_a_schema_version_and_the_heap_peak() {
    let v = json(&["run", "zipf-file", "-q", "--json"]);
    assert_eq!(v["schema_version"], 1);
    // The host allocator's peak: it cannot be exact.
    assert!(v["host_heap_peak_bytes"].as_u64().unwrap() > 1 << 20);
    let c = json(&[
        "compare",
        "zipf-file",
        "-q",
        "--json",
        "--set",
        "swappiness=60,100",
    ]);
    assert_eq!(c["schema_version"], 1);
    assert_eq!(c["configs"][0]["runs"][0]["result"]["schema_version"], 1);
}

/// The default scenario ends with `/proc/buddyinfo` in the report and JSON: eleven
/// orders whose pages, with the per-CPU list's, are the free pages.
#[test]
fn buddyinfo_of_the_default_scenario_adds_up_to_the_free_pages() {
    let out = mmsim().args(["run", "-q"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .skip_while(|l| !l.starts_with("/proc/buddyinfo"))
        .nth(1)
        .unwrap();
    let numbers: Vec<u64> = line
        .trim()
        .strip_prefix("Node 0, zone   Normal")
        .unwrap()
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(numbers.len(), 11, "{line}");
    let v = json(&["run", "-q", "--json"]);
    let buddy: Vec<u64> = v["buddyinfo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(buddy, numbers);
    let pages: u64 = buddy.iter().enumerate().map(|(k, n)| n << k).sum();
    assert_eq!(
        pages + v["pcp_pages"].as_u64().unwrap(),
        v["vmstat"]["nr_free_pages"].as_u64().unwrap()
    );
    assert_eq!(v["pagetypeinfo"]["types"][1], "Movable");
}
