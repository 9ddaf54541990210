//! Command-line tests of `[machine]` and `[machine.policy]` settings given with `--set`:
//! each is written to the scenario or changes the run as documented, and a value out of
//! range (or one no part of the run reads) is refused, naming the field (moved out of
//! `cli.rs`, which holds the default run and the other bad-input paths).

mod common;

use common::{bad_input, mmsim, run_json, validation_case};

use predicates::prelude::*;

/// `mmsim run CASE --set SET` for each `(SET, needles)`: refused (exit status 2) with a
/// message holding every needle.
fn refused_sets(case: &str, rows: &[(&str, &[&str])]) {
    for (set, needles) in rows {
        bad_input(&["run", case, "--set", set], needles);
    }
}

/// `mmsim run CASE EXTRA...`'s text report (standard output).
fn run_text(case: &str, extra: &[&str]) -> String {
    let out = mmsim().arg("run").arg(case).args(extra).output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// `policy.memcg_stats_flush`: `sync` is the default (the same run as no setting);
/// `ratelimited` (6.12+) ages the active lists less, and the run report says so; bad
/// values name the field.
#[test]
fn memcg_stats_flush_is_a_scenario_setting() {
    let case = validation_case("guest-file-zipf-b");
    let group = |extra: &[&str]| {
        let v = run_json(&case, extra);
        let g = &v["memcg"]["/val"];
        (
            g["pgrefill"].as_u64().unwrap(),
            g["pgactivate"].as_u64().unwrap(),
            g["workingset_refault_file"].as_u64().unwrap(),
        )
    };
    let default = group(&[]);
    assert_eq!(group(&["--set", "policy.memcg_stats_flush=sync"]), default);
    let rl = group(&["--set", "policy.memcg_stats_flush=ratelimited"]);
    assert!(rl.0 < default.0 * 9 / 10, "pgrefill {rl:?} vs {default:?}");
    assert!(
        rl.1 < default.1 * 9 / 10,
        "pgactivate {rl:?} vs {default:?}"
    );
    let text = run_text(
        &case,
        &[
            "--set",
            "policy.memcg_stats_flush=ratelimited",
            "--set",
            "policy.memcg_stats_flush_ms=500",
        ],
    );
    assert!(
        text.contains("ratelimited: reclaim reads the flush of every 500 ms (6.12+)"),
        "{text}"
    );
    refused_sets(
        &case,
        &[
            (
                "policy.memcg_stats_flush=bogus",
                &[
                    "machine.policy.memcg_stats_flush",
                    "bogus",
                    "sync",
                    "ratelimited",
                ],
            ),
            (
                "policy.memcg_stats_flush_ms=0",
                &[
                    "machine.policy.memcg_stats_flush_ms",
                    "0 is out of range [1, 3600000]",
                ],
            ),
            (
                "policy.memcg_stats_read_ms=3600001",
                &[
                    "machine.policy.memcg_stats_read_ms",
                    "3600001 is out of range [0, 3600000]",
                ],
            ),
        ],
    );
}

/// The `ratelimited` flush's reader and threshold CPUs: the run report counts the
/// flushes and skips (mmsim's own counters, `mmsim_memcg_flush` in the JSON); a
/// reader or threshold CPUs under `sync` (which nothing reads there) and CPUs out of
/// `machine.cpus`' range are bad input naming the field (and the mode).
#[test]
fn memcg_stats_reader_and_cpus_are_ratelimited_settings() {
    let case = validation_case("guest-file-zipf-b");
    let rl = [
        "--set",
        "policy.memcg_stats_flush=ratelimited",
        "--set",
        "policy.memcg_stats_read_ms=50",
    ];
    let flushes = |extra: &[&str]| {
        let v = run_json(&case, &[&rl[..], extra].concat());
        let f = &v["mmsim_memcg_flush"];
        (
            f["read"].as_u64().unwrap(),
            f["read_skipped"].as_u64().unwrap(),
        )
    };
    let (one_read, one_skipped) = flushes(&[]);
    let (many_read, many_skipped) = flushes(&["--set", "policy.memcg_stats_cpus=64"]);
    assert_eq!(
        (one_read, one_skipped, many_read, many_skipped),
        (138, 3, 56, 85)
    );
    // The same reads; a 64-CPU threshold (4096 updates) skips more of them.
    assert_eq!(one_read + one_skipped, many_read + many_skipped);
    assert!(
        many_skipped > one_skipped,
        "{many_skipped} vs {one_skipped}"
    );
    let text = run_text(&case, &rl);
    assert!(
        text.contains(&format!(
            "memory.stat reads {one_read} ({one_skipped} skipped)"
        )),
        "{text}"
    );
    let sync = run_json(&case, &[]);
    assert!(sync.get("mmsim_memcg_flush").is_none());
    refused_sets(
        &case,
        &[
            (
                "policy.memcg_stats_read_ms=200",
                &[
                    "machine.policy.memcg_stats_read_ms",
                    "200 is set, but mmsim's memcg_stats_flush = \"sync\" models no memory.stat reader",
                ],
            ),
            (
                "policy.memcg_stats_cpus=2",
                &[
                    "machine.policy.memcg_stats_cpus",
                    "2 is set, but mmsim's memcg_stats_flush = \"sync\" models no update threshold",
                ],
            ),
        ],
    );
    bad_input(
        &[
            "run",
            &case,
            "--set",
            "policy.memcg_stats_flush=ratelimited",
            "--set",
            "policy.memcg_stats_cpus=4097",
        ],
        &[
            "machine.policy.memcg_stats_cpus",
            "4097 is out of range [0, 4096]",
        ],
    );
}

/// `machine.policy.watermark_boost_factor`: above the sysctl's `INT_MAX`, or set with a
/// second zone (or the textbook `lru` policy), names the field.
#[test]
fn watermark_boost_factor_out_of_range_names_the_field() {
    bad_input(
        &[
            "run",
            "--set",
            "policy.watermark_boost_factor=2147483648",
            "-q",
        ],
        &[
            "machine.policy.watermark_boost_factor",
            "2147483648 is out of range [0, 2147483647]",
        ],
    );
    bad_input(
        &[
            "run",
            "--set",
            "policy.watermark_boost_factor=15000",
            "--set",
            "dma_zone_pages=3970",
            "-q",
        ],
        &[
            "machine.policy.watermark_boost_factor",
            "modelled for one zone (machine.dma_zone_pages = 0)",
        ],
    );
}

/// `machine.policy.rmqueue_fallback`: `--set` writes 6.15 as a TOML number, read as the
/// string; an unknown kernel names the field and the allowed values.
#[test]
fn rmqueue_fallback_reads_a_number_and_names_the_field() {
    mmsim()
        .args(["run", "zipf-file", "--set", "policy.rmqueue_fallback=6.15"])
        .args(["--print-scenario"])
        .assert()
        .success()
        .stdout(predicate::str::contains("rmqueue_fallback = \"6.15\""));
    bad_input(
        &["run", "--set", "policy.rmqueue_fallback=6.13", "-q"],
        &[
            "machine.policy.rmqueue_fallback",
            "unknown rmqueue_fallback `6.13`; allowed: 6.12, 6.15",
        ],
    );
    // A TOML boolean: the allowed values, not serde's untagged-enum message.
    bad_input(
        &["run", "--set", "policy.rmqueue_fallback=true", "-q"],
        &[
            "machine.policy.rmqueue_fallback",
            "unknown rmqueue_fallback `true`; allowed: 6.12, 6.15",
        ],
    );
}

/// `machine.policy.watermark_boost_factor` with the textbook `lru` policy (whose single
/// list has no pageblock fallbacks to boost for): refused, naming the field (row 175).
#[test]
fn watermark_boost_factor_with_the_lru_policy_names_the_field() {
    bad_input(
        &[
            "run",
            "--set",
            "policy.name=lru",
            "--set",
            "policy.watermark_boost_factor=15000",
            "-q",
        ],
        &[
            "machine.policy.watermark_boost_factor",
            "the kernel's LRU lists (policy cost, scanned-rotated or mglru)",
        ],
    );
}

/// `machine.dma_zone_pages` (the node's ZONE_DMA, opt-in): larger than 16 MiB (4096
/// pages) or than the machine, or with the textbook `lru` policy, names the field.
#[test]
fn dma_zone_pages_out_of_range_names_the_field() {
    bad_input(
        &["run", "--set", "dma_zone_pages=4097", "-q"],
        &["machine.dma_zone_pages", "4097 is out of range [0, 4096]"],
    );
    bad_input(
        &[
            "run",
            "--set",
            "memory=16M",
            "--set",
            "dma_zone_pages=4096",
            "-q",
        ],
        &["machine.dma_zone_pages", "4096 is out of range [0, 4095]"],
    );
    bad_input(
        &[
            "run",
            "--set",
            "policy.name=lru",
            "--set",
            "dma_zone_pages=3970",
            "-q",
        ],
        &["machine.dma_zone_pages", "needs the kernel's LRU lists"],
    );
}

/// `machine.swap_zero_pages`: `write` (the default) counts no zero-filled pages and
/// leaves `swpout_zero`/`swpin_zero` out of the JSON; `zeromap` (the validation case
/// anon-zero-swap) swaps the pages only loaded out without IO, on the node and in the
/// group; an unknown mode and `zram-same` without zram name the field.
#[test]
fn swap_zero_pages_is_a_machine_setting() {
    let case = validation_case("anon-zero-swap");
    let run = |extra: &[&str]| run_json(&case, extra);
    let off = run(&["--set", "machine.swap_zero_pages=write"]);
    assert!(off["vmstat"].get("swpout_zero").is_none());
    assert!(off["memcg"]["/val"].get("swpout_zero").is_none());
    let on = run(&[]);
    let (v, g) = (&on["vmstat"], &on["memcg"]["/val"]);
    let zero_out = v["swpout_zero"].as_u64().unwrap();
    assert!(zero_out > 10_000, "{v}");
    assert_eq!(g["swpout_zero"], v["swpout_zero"]);
    assert_eq!(g["swpin_zero"], v["swpin_zero"]);
    // The same swap-outs, fewer of them written.
    let written = |r: &serde_json::Value| r["vmstat"]["pswpout"].as_u64().unwrap();
    assert!(written(&on) < written(&off));
    bad_input(
        &["run", "--set", "swap_zero_pages=bogus", "--print-scenario"],
        &["machine.swap_zero_pages", "write"],
    );
    bad_input(
        &["run", "--set", "swap_zero_pages=zram-same", "-q"],
        &["machine.swap_zero_pages", "zram"],
    );
}

/// `machine.kmem_accounting`: off by default (no `kmem` object in the JSON, the
/// same run as `false`); on, the group's kernel memory is in its JSON and the text
/// report's "kernel memory" table, and the group holds fewer page-cache pages; a
/// value that is not a boolean names the field.
#[test]
fn kmem_accounting_is_a_machine_setting() {
    let case = validation_case("file-uniform");
    let group = |extra: &[&str]| run_json(&case, extra)["memcg"]["/val"].clone();
    let off = group(&[]);
    assert!(off.get("kmem").is_none());
    assert_eq!(group(&["--set", "machine.kmem_accounting=false"]), off);
    let on = group(&["--set", "machine.kmem_accounting=true"]);
    let k = &on["kmem"];
    // A 256 MiB file's xarray: 1024 leaves, 16 level-1 nodes and a root.
    assert_eq!(k["xa_nodes"], 1041);
    assert_eq!(k["slab_reclaimable"], 1041 * 592);
    assert_eq!(k["kernel_stack"], 16384);
    assert_eq!(k["kmem_usage_in_bytes"], k["kernel"]); // a v1 machine
    assert!(on["file"].as_u64().unwrap() < off["file"].as_u64().unwrap());
    let text = run_text(&case, &["--set", "machine.kmem_accounting=true"]);
    assert!(text.contains("kernel memory (KiB)"), "{text}");
    assert!(text.contains("slab_reclaimable"), "{text}");
    refused_sets(
        &case,
        &[("machine.kmem_accounting=3", &["kmem_accounting"])],
    );
}

/// `machine.policy.bdp_ratelimit` (the ratelimit of `balance_dirty_pages()`'s calls): a
/// boolean, written to the scenario when set; anything else refused, naming the field
/// (row 179).
#[test]
fn bdp_ratelimit_is_a_boolean_and_names_the_field() {
    policy_bool_is_written_and_refuses_a_string("bdp_ratelimit");
}

/// `mmsim run --set policy.FIELD=true` writes `FIELD = true` into the scenario, and
/// `FIELD=maybe` is refused, naming the field.
fn policy_bool_is_written_and_refuses_a_string(field: &str) {
    mmsim()
        .args(["run", "zipf-file", "--set", &format!("policy.{field}=true")])
        .args(["--print-scenario"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("{field} = true")));
    let (set, name) = (
        format!("policy.{field}=maybe"),
        format!("machine.policy.{field}"),
    );
    bad_input(
        &["run", "--set", set.as_str(), "-q"],
        &[
            name.as_str(),
            "invalid type: string \"maybe\", expected a boolean",
        ],
    );
}

/// `policy.v1_reclaim_throttle` (cgroup v1 limit reclaim's sleep after it wakes the
/// flusher) is written when set and refuses a non-boolean, naming the field.
#[test]
fn v1_reclaim_throttle_is_a_boolean_and_names_the_field() {
    policy_bool_is_written_and_refuses_a_string("v1_reclaim_throttle");
}
