//! Results do not depend on folio ids (issue #18, Stage B blocker 5).
//!
//! Stage B makes a folio's id its head PFN, so ids will be handed out in
//! the page allocator's order, not the arena's (0, 1, 2, … and the last
//! freed first). Each run below, chosen to cover what the results digest
//! covers (the classic LRU, MGLRU, the `lru` policy with file writes,
//! anonymous memory and swap, large folios with compaction and collapse,
//! DAMON, memory cgroups, fork, writeback and sync, the TLB model), is
//! made twice: as is, and with `MMSIM_PERMUTE_FOLIO_IDS` set, under which
//! ids are handed out in a permuted order and freed ids are reused at
//! random (`Sim::permute_folio_ids`, mmsim-core's `id_order.rs`). Every
//! leaf of the JSON must be equal, save the host-memory leaves. Both runs
//! also check the kept gauges (`MMSIM_CHECK_GAUGES`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

/// Leaves that measure the host, not the simulation (as the digest's).
const HOST_LEAVES: &[&str] = &[
    "sim_heap_bytes",
    "host_heap_peak_bytes",
    "sim_bytes_per_resident_folio",
    "sim_bytes_per_tracked_page",
];

/// `v`'s leaves into `out`, path to value; the host leaves into `host`.
fn flatten(
    v: &Value,
    path: &str,
    out: &mut BTreeMap<String, String>,
    host: &mut BTreeMap<String, String>,
) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let p = format!("{path}.{k}");
                if HOST_LEAVES.contains(&k.as_str()) {
                    host.insert(p, child.to_string());
                } else {
                    flatten(child, &p, out, host);
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                flatten(child, &format!("{path}[{i}]"), out, host);
            }
        }
        leaf => {
            out.insert(path.to_string(), leaf.to_string());
        }
    }
}

/// A run's leaves, path to value.
type Flat = BTreeMap<String, String>;

/// `mmsim args` from the repository root, with the ids permuted by
/// `seed` or not, flattened: the simulation's leaves and the host's.
fn run(args: &[&str], seed: Option<&str>) -> (Flat, Flat) {
    let mut cmd = assert_cmd::Command::cargo_bin("mmsim").unwrap();
    cmd.current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .env("MMSIM_CHECK_GAUGES", "1")
        .env_remove("MMSIM_PERMUTE_FOLIO_IDS")
        .args(args);
    if let Some(s) = seed {
        cmd.env("MMSIM_PERMUTE_FOLIO_IDS", s);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "mmsim {} (ids permuted: {seed:?}): {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (mut flat, mut host) = (BTreeMap::new(), BTreeMap::new());
    flatten(&v, "", &mut flat, &mut host);
    (flat, host)
}

fn same_with_permuted_ids(args: &[&str]) {
    let (plain, plain_host) = run(args, None);
    for seed in ["1", "2"] {
        let (permuted, permuted_host) = run(args, Some(seed));
        // The mode took effect: the arena holds a slot for every page up
        // front, so the simulator's heap is larger. A bound, not a value:
        // `sim_heap_bytes` counts capacities, which the toolchain's growth
        // policy decides (a host leaf, as the digest's).
        if args[0] == "run" {
            let heap = |h: &Flat| -> u64 { h[".sim_heap_bytes"].parse().unwrap() };
            assert!(
                heap(&permuted_host) > heap(&plain_host),
                "ids not permuted? heap {} permuted, {} plain",
                heap(&permuted_host),
                heap(&plain_host)
            );
        }
        let diffs: Vec<String> = plain
            .iter()
            .filter(|(k, v)| permuted.get(*k) != Some(*v))
            .map(|(k, v)| format!("{k}: {v} -> {:?}", permuted.get(k)))
            .collect();
        assert!(
            diffs.is_empty() && plain.len() == permuted.len(),
            "mmsim {} with ids permuted (seed {seed}): {} of {} leaves differ; first:\n  {}",
            args.join(" "),
            diffs.len(),
            plain.len(),
            diffs
                .iter()
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n  ")
        );
    }
}

macro_rules! id_order {
    ($($name:ident: [$($arg:expr),* $(,)?];)*) => {
        $(
            #[test]
            fn $name() {
                same_with_permuted_ids(&[$($arg),*]);
            }
        )*
    };
}

id_order! {
    classic_default: ["run", "default", "--json", "-q"];
    classic_softlimit_groups: ["run", "softlimit-kbuild-vs-eater", "--json", "-q"];
    mglru_dd_vs_eater: ["run", "dd-vs-eater", "--policy", "mglru", "--json", "-q"];
    mglru_v6_1_many_tabs: ["run", "many-tabs", "--policy", "mglru", "--mglru-version", "v6.1", "--json", "-q"];
    lru_pgbench_writes: ["run", "pgbench", "--policy", "lru", "--json", "-q"];
    anon_swap_trace: ["run", "--trace", "data/traces/lirs/multi2.trace.gz", "--as", "anon", "--policy", "cost", "--memcg-max", "1000p", "--json", "-q"];
    large_folios_compaction_collapse: ["validate", "--from-results", "--json", "-q", "--case", "compact-mthp-always", "--case", "mthp-sparse-always", "--case", "collapse-dense", "--case", "file-seq-readahead-lf"];
    damon: ["validate", "--from-results", "--json", "-q", "--case", "damon-vaddr-pageout", "--case", "damon-lru-sort", "--case", "damon-reclaim"];
    fork_sync_groups: ["validate", "--from-results", "--json", "-q", "--case", "anon-fork-cow-swap", "--case", "mmap-private-cow-swap", "--case", "pgbench-tpcb-fsync", "--case", "grep-include-group"];
    mglru_guest: ["validate", "--from-results", "--json", "-q", "--case", "guest612-anon-zipf-mglru", "--case", "guest-file-zipf-mglru"];
    tlb_large_folios: ["run", "mthp-page-fault1", "--json", "-q", "--set", "tlb.enabled=true", "--set", "thp.hugepages-64kB.enabled=always", "--set", "tlb.contpte=true"];
}
