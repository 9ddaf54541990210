//! Memory compaction from the command line (`[machine.compaction]`,
//! `--set compaction.…`): the example's fallbacks fall with compaction on,
//! its counters appear only when it ran, and bad knobs name the key and range.

mod common;

use common::{bad_input, json};

fn example() -> String {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/mthp-fragmentation.toml")
        .display()
        .to_string()
}

#[test]
fn compaction_lowers_the_64k_fallbacks_of_the_fragmentation_example() {
    let ex = example();
    let off = json(&["run", &ex, "--json", "-q"]);
    let on = json(&[
        "run",
        &ex,
        "--json",
        "-q",
        "--set",
        "compaction.enabled=true",
    ]);
    let size = |v: &serde_json::Value, k: &str| -> u64 {
        let sizes = v["mthp"].as_array().unwrap();
        let s = sizes.iter().find(|s| s["size"] == "64kB").unwrap();
        s[k].as_u64().unwrap()
    };
    let rate = |v: &serde_json::Value| {
        let fb = size(v, "anon_fault_fallback") as f64;
        fb / (fb + size(v, "anon_fault_alloc") as f64)
    };
    assert!(
        rate(&on) < rate(&off) / 2.0,
        "{} vs {}",
        rate(&on),
        rate(&off)
    );
    let vm_off = &off["vmstat"];
    let vm_on = &on["vmstat"];
    for (k, n) in [
        ("compact_stall", 1446),
        ("compact_migrate_scanned", 15_642_048),
        ("pgmigrate_success", 19_819),
    ] {
        assert!(vm_off.get(k).is_none(), "{k} shown without compaction");
        assert_eq!(vm_on[k], n, "{k}");
    }
}

#[test]
fn bad_compaction_settings_name_the_key_and_range() {
    bad_input(
        &["run", "--set", "compaction.proactiveness=101", "-q"],
        &[
            "machine.compaction.proactiveness",
            "101 is out of range (allowed: 0..=100",
        ],
    );
    bad_input(
        &["run", "--set", "compaction.extfrag_threshold=1001", "-q"],
        &["machine.compaction.extfrag_threshold", "(allowed: 0..=1000"],
    );
    bad_input(
        &["run", "--set", "compaction.proactive=1", "--print-scenario"],
        &["unknown field `proactive`", "`proactiveness`"],
    );
}

#[test]
fn page_table_frames_need_kernel_memory_accounting() {
    bad_input(
        &["run", "--set", "pagetable_frames=true", "-q"],
        &[
            "machine.pagetable_frames",
            "set machine.kmem_accounting = true too",
        ],
    );
}
