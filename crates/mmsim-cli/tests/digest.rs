//! The results digest: determinism as a contract.
//!
//! Every embedded scenario (under its own policy, under MGLRU v6.14 and v6.1,
//! and under the older balancing models), every scenario that carries published
//! results (`mmsim compare NAME`), the golden traces under each policy and the
//! validation re-comparison (`mmsim validate --from-results`) are run, and their
//! JSON is checked leaf by leaf against the files committed in `tests/digests/`.
//!
//! A digest file is the run's JSON flattened to one `path<TAB>value` line per
//! leaf (values as JSON text, so floats keep serde's shortest round-trip form).
//! The check is exact: a committed leaf that is missing or has another value
//! fails. Leaves the binary prints that the digest does not hold are allowed (a
//! new report field is not a behaviour change) and are only counted. Three leaves
//! are left out of every digest because they measure the simulator's host memory,
//! not the simulated machine: `sim_heap_bytes`, `host_heap_peak_bytes`,
//! `sim_bytes_per_resident_folio` and `sim_bytes_per_tracked_page`.
//!
//! After a change that is meant to change results, regenerate with
//! `scripts/results-digest --update` and say in the commit message why each
//! changed digest changed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Leaves that measure the host, not the simulation.
const HOST_LEAVES: &[&str] = &[
    "sim_heap_bytes",
    "host_heap_peak_bytes",
    "sim_bytes_per_resident_folio",
    "sim_bytes_per_tracked_page",
];

/// The repository's root: the runs name traces and suites relative to it.
fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn digest_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/digests")
        .join(format!("{name}.tsv"))
}

/// Appends one `path<TAB>value` line per leaf of `v`, in document order.
fn flatten(v: &Value, path: &str, out: &mut String) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if HOST_LEAVES.contains(&k.as_str()) {
                    continue;
                }
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                flatten(child, &p, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, child) in items.iter().enumerate() {
                flatten(child, &format!("{path}[{i}]"), out);
            }
        }
        leaf => {
            writeln!(out, "{path}\t{leaf}").unwrap();
        }
    }
}

/// Runs `mmsim args` from the repository root and returns its JSON flattened.
fn run_flat(args: &[&str]) -> String {
    let out = assert_cmd::Command::cargo_bin("mmsim")
        .unwrap()
        .current_dir(repo_root())
        // Every digest run also checks the kept gauges against the walks they replace.
        .env("MMSIM_CHECK_GAUGES", "1")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mmsim {}: exit {:?}: {}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("mmsim {}: not JSON: {e}", args.join(" ")));
    let mut flat = String::new();
    flatten(&v, "", &mut flat);
    flat
}

/// The committed leaves that `now` lacks or holds with another value.
fn differences(committed: &str, now: &str) -> (Vec<String>, usize) {
    let now_map: std::collections::BTreeMap<&str, &str> =
        now.lines().filter_map(|l| l.split_once('\t')).collect();
    let mut diffs = Vec::new();
    let mut held = 0;
    for line in committed.lines() {
        let Some((path, value)) = line.split_once('\t') else {
            continue;
        };
        held += 1;
        match now_map.get(path) {
            None => diffs.push(format!("{path}: missing (was {value})")),
            Some(v) if *v != value => diffs.push(format!("{path}: {value} -> {v}")),
            Some(_) => {}
        }
    }
    (diffs, now_map.len().saturating_sub(held))
}

fn check(name: &str, args: &[&str]) {
    let now = run_flat(args);
    let path = digest_path(name);
    if std::env::var_os("MMSIM_DIGEST_UPDATE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; make it with scripts/results-digest --update",
            Path::new(&path).display()
        )
    });
    let (diffs, new_leaves) = differences(&committed, &now);
    if new_leaves > 0 {
        eprintln!("{name}: {new_leaves} leaves not in the digest (new report fields)");
    }
    assert!(
        diffs.is_empty(),
        "{name} (mmsim {}): {} of the digest's leaves changed; first ones:\n  {}",
        args.join(" "),
        diffs.len(),
        diffs
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}

/// One test per digest, so the harness runs them on all cores.
macro_rules! digests {
    ($($name:ident: [$($arg:expr),* $(,)?];)*) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name), &[$($arg),*]);
            }
        )*
    };
}

digests! {
    // Every embedded scenario as shipped.
    run_default: ["run", "default", "--json", "-q"];
    run_postgres_like: ["run", "postgres-like", "--json", "-q"];
    run_zipf_file: ["run", "zipf-file", "--json", "-q"];
    run_fio_randread: ["run", "fio-randread", "--json", "-q"];
    run_memcached: ["run", "memcached", "--json", "-q"];
    run_pgbench: ["run", "pgbench", "--json", "-q"];
    run_dd_vs_eater: ["run", "dd-vs-eater", "--json", "-q"];
    run_many_tabs: ["run", "many-tabs", "--json", "-q"];
    run_softlimit_kbuild: ["run", "softlimit-kbuild", "--json", "-q"];
    run_softlimit_stream_vs_eater: ["run", "softlimit-stream-vs-eater", "--json", "-q"];
    run_softlimit_kbuild_vs_eater: ["run", "softlimit-kbuild-vs-eater", "--json", "-q"];
    // The multi-gen LRU, both modelled versions.
    mglru_default: ["run", "default", "--policy", "mglru", "--json", "-q"];
    mglru_pgbench: ["run", "pgbench", "--policy", "mglru", "--json", "-q"];
    mglru_zipf_file: ["run", "zipf-file", "--policy", "mglru", "--json", "-q"];
    mglru_dd_vs_eater: ["run", "dd-vs-eater", "--policy", "mglru", "--json", "-q"];
    mglru_softlimit_kbuild: ["run", "softlimit-kbuild", "--policy", "mglru", "--json", "-q"];
    mglru_v6_1_zipf_file: ["run", "zipf-file", "--policy", "mglru", "--mglru-version", "v6.1", "--json", "-q"];
    mglru_v6_1_many_tabs: ["run", "many-tabs", "--policy", "mglru", "--mglru-version", "v6.1", "--json", "-q"];
    mglru_min_ttl_memcached: ["run", "memcached", "--policy", "mglru", "--min-ttl-ms", "1000", "--json", "-q"];
    // The classic LRU's balancing models.
    scanned_rotated_default: ["run", "default", "--policy", "scanned-rotated", "--json", "-q"];
    cost_v5_8_zipf_file: ["run", "zipf-file", "--policy", "cost", "--cost-variant", "v5.8", "--json", "-q"];
    // Scenarios with published results: every configuration they name.
    compare_fio_randread: ["compare", "fio-randread", "--json"];
    compare_memcached: ["compare", "memcached", "--json"];
    compare_many_tabs: ["compare", "many-tabs", "--json"];
    compare_softlimit_kbuild: ["compare", "softlimit-kbuild", "--json"];
    compare_softlimit_stream_vs_eater: ["compare", "softlimit-stream-vs-eater", "--json"];
    compare_softlimit_kbuild_vs_eater: ["compare", "softlimit-kbuild-vs-eater", "--json"];
    // The golden traces under each policy.
    trace_lru_oltp: ["run", "--trace", "data/traces/arc/OLTP.lis.zst", "--policy", "lru", "--memcg-max", "1000p", "--json", "-q"];
    trace_cost_oltp: ["run", "--trace", "data/traces/arc/OLTP.lis.zst", "--policy", "cost", "--memcg-max", "5000p", "--json", "-q"];
    trace_mglru_sprite: ["run", "--trace", "data/traces/lirs/sprite.trace.gz", "--policy", "mglru", "--memcg-max", "400p", "--json", "-q"];
    trace_cost_anon_multi2: ["run", "--trace", "data/traces/lirs/multi2.trace.gz", "--as", "anon", "--policy", "cost", "--memcg-max", "1000p", "--json", "-q"];
    trace_mglru_anon_gcc: ["run", "--trace", "data/traces/memsim-spec/gcc.trace.gz", "--as", "anon", "--policy", "mglru", "--memcg-max", "256p", "--json", "-q"];
    trace_info_oltp: ["trace", "info", "data/traces/arc/OLTP.lis.zst", "--sizes", "1000,5000,15000", "--json"];
    // The recorded kernel results, re-compared.
    validate_from_results: ["validate", "--from-results", "--json", "-q"];
}
