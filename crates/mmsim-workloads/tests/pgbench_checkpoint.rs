//! The pgbench model's shutdown checkpoint (`shutdown_checkpoint`, models/pgbench/
//! checkpoint.rs) run through the simulator: its `fsync`s write back the dirty
//! page-cache folios reclaim marked PG_reclaim, whose write completion rotates them
//! (`folio_end_writeback` → `folio_rotate_reclaimable`, v6.12 mm/filemap.c and
//! mm/swap.c: `pgrotated`); and the field's TOML round trip.

use mmsim_workloads::{run_scenario, RunOptions, Scenario, ScenarioResult};

/// VALIDATION.md's `dirty15` / `pgbench15` model of the `pgbench-tpcb-fsync` capture:
/// scale 30, 32 MiB of shared buffers, 7,840 TPC-B transactions at 784 per second
/// (the background writer's clock), 4 clients, 28 MiB of binary, full-page writes,
/// `fsync`, in a 192 MiB v1 group on a 4 GiB machine.
const DIRTY15: &str = r#"
seed = 1
[machine]
memory = "4G"
cgroup_version = "v1"
[[cgroup]]
path = "/val"
max = "192M"
[[workload]]
name = "postgres"
kind = "pgbench"
scale = 30
shared_buffers = "32M"
transactions = 7840
cgroup = "/val"
clients = 4
binary_size = "28M"
full_page_writes = true
fsync = true
tps = 784
"#;

fn run(text: &str) -> ScenarioResult {
    let s = Scenario::from_toml_str(text, "dirty15.toml").unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&s, &mut RunOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// (pgrotated, nr_vmscan_immediate_reclaim, pgscan_file, pgsteal_file,
/// workingset_refault_file, pgpgout in KiB, file pages read).
fn counters(r: &ScenarioResult) -> [u64; 7] {
    let v = &r.result.vmstat;
    [
        v.pgrotated,
        v.nr_vmscan_immediate_reclaim,
        v.pgscan_file,
        v.pgsteal_file,
        v.workingset_refault_file,
        v.pgpgout,
        r.result.access.file_pages_read,
    ]
}

/// Without the shutdown checkpoint the dirty folios reclaim met (2,764 immediates)
/// stay dirty at the end: 2 pages rotated. With it, its `fsync` of each relation
/// writes them back (7,714 more pages out) and each rotates when its write ends:
/// pgrotated 2,672 (the kernel's capture: 2,607). The transactions' reads and
/// refaults are those of the run without it; the checkpoint's own writes of blocks
/// no longer cached add a little reclaim (138 pages scanned, 112 reclaimed, 26 more
/// dirty folios met).
#[test]
fn the_shutdown_checkpoints_fsync_rotates_the_folios_reclaim_marked() {
    let base = run(DIRTY15);
    let ckpt = run(&format!("{DIRTY15}shutdown_checkpoint = true\n"));
    assert_eq!(
        counters(&base),
        [2, 2764, 40198, 30266, 2014, 149_896, 36828]
    );
    assert_eq!(
        counters(&ckpt),
        [2672, 2790, 40336, 30378, 2014, 180_752, 36828]
    );
}

/// The field survives the scenario's TOML round trip, and is written only when set.
#[test]
fn shutdown_checkpoint_round_trips_and_stays_out_when_unset() {
    let on = Scenario::from_toml_str(&format!("{DIRTY15}shutdown_checkpoint = true\n"), "t")
        .unwrap()
        .to_toml_string();
    assert!(on.contains("shutdown_checkpoint = true"), "{on}");
    assert_eq!(
        Scenario::from_toml_str(&on, "t").unwrap().to_toml_string(),
        on
    );
    let off = Scenario::from_toml_str(&format!("{DIRTY15}shutdown_checkpoint = false\n"), "t")
        .unwrap()
        .to_toml_string();
    assert!(!off.contains("shutdown_checkpoint"), "{off}");
}
