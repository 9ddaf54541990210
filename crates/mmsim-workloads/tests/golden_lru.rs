//! Golden tests: plain LRU on real traces must reproduce published results exactly.
//!
//! The reference numbers are those of `data/traces/README.md`, "Reference results
//! for plain LRU" (cold start, compulsory misses counted, unit-size entries). Each run is
//! a scenario with policy `lru`, `memcg_max` = the cache size in pages, a machine large
//! enough that only the memcg limit evicts, and one trace workload reading a file.

use std::path::PathBuf;

use mmsim_core::{MachineConfig, PolicyName, Size};
use mmsim_trace::Format;
use mmsim_workloads::{
    run_scenario, RunOptions, Scenario, ScenarioResult, Target, TraceFormat, WorkloadSpec,
};

fn trace(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/traces")
        .join(rel)
}

fn run_lru(rel: &str, format: TraceFormat, entries: u64) -> ScenarioResult {
    let mut machine = MachineConfig {
        memory: Size(4 << 30),
        memcg_max: Some(Size::from_pages(entries)),
        ..MachineConfig::default()
    };
    machine.policy.name = PolicyName::Lru;
    let s = Scenario::new(
        "golden",
        machine,
        vec![WorkloadSpec::trace(trace(rel), format, Target::File)],
    );
    let r = run_scenario(&s, &mut RunOptions::default())
        .unwrap_or_else(|e| panic!("{rel} at {entries}: {e}"));
    let a = &r.result.access;
    assert_eq!(a.hits + a.misses, a.accesses, "{rel} at {entries}");
    assert_eq!(a.out_of_range, 0);
    assert_eq!(a.dropped_killed, 0);
    // Only the memcg limit evicts: the cache is exactly `entries` pages once full.
    assert!(r.result.memcg_usage_pages <= entries);
    r
}

fn hit_pct(r: &ScenarioResult) -> String {
    let a = &r.result.access;
    format!("{:.2}", a.hits as f64 * 100.0 / a.accesses as f64)
}

fn miss_ratio(r: &ScenarioResult) -> String {
    let a = &r.result.access;
    format!("{:.6}", a.misses as f64 / a.accesses as f64)
}

/// Runs every size and compares all of them before failing, so one failure shows the
/// whole row.
fn check_row(rel: &str, format: TraceFormat, refs: u64, distinct: u32, row: &[(u64, &str)]) {
    let mut bad = Vec::new();
    for &(entries, want) in row {
        let r = run_lru(rel, format, entries);
        assert_eq!(r.result.access.accesses, refs, "{rel}: references");
        assert_eq!(r.trace[0].distinct, distinct, "{rel}: distinct keys");
        let got = hit_pct(&r);
        eprintln!("{rel} LRU {entries}: hit% expected {want}, got {got}");
        if got != want {
            bad.push(format!("{entries}: expected {want}, got {got}"));
        }
    }
    assert!(bad.is_empty(), "{rel}: {}", bad.join("; "));
}

#[test]
fn arc_oltp() {
    let fmt = TraceFormat::Fixed(Format::Arc);
    let r = run_lru("arc/OLTP.lis.zst", fmt, 1000);
    assert_eq!(r.result.access.accesses, 914_145);
    assert_eq!(r.trace[0].distinct, 186_880);
    assert_eq!(r.result.access.hits, 300_122, "hits at 1,000 entries");
    check_row(
        "arc/OLTP.lis.zst",
        fmt,
        914_145,
        186_880,
        &[
            (1000, "32.83"),
            (2000, "42.47"),
            (5000, "53.65"),
            (10000, "60.70"),
            (15000, "64.63"),
        ],
    );
}

#[test]
fn libcachesim_cloudphysics_txt() {
    let rel = "libcachesim/cloudPhysicsIO.txt";
    let mut bad = Vec::new();
    for (entries, want) in [
        (1, "0.976421"),
        (2, "0.970607"),
        (3, "0.965681"),
        (4, "0.959024"),
        (5, "0.956934"),
        (20, "0.927015"),
    ] {
        let r = run_lru(rel, TraceFormat::Fixed(Format::Text), entries);
        assert_eq!(r.result.access.accesses, 113_872);
        assert_eq!(r.trace[0].distinct, 48_974);
        let got = miss_ratio(&r);
        eprintln!("{rel} LRU {entries}: miss ratio expected {want}, got {got}");
        if got != want {
            bad.push(format!("{entries}: expected {want}, got {got}"));
        }
    }
    assert!(bad.is_empty(), "{rel}: {}", bad.join("; "));
}

#[test]
fn lirs_sprite() {
    check_row(
        "lirs/sprite.trace.gz",
        TraceFormat::Fixed(Format::Lirs),
        133_996,
        7_075,
        &[
            (100, "21.58"),
            (200, "39.88"),
            (400, "70.77"),
            (600, "83.19"),
            (800, "88.55"),
            (1000, "90.64"),
        ],
    );
}

#[test]
fn lirs_multi2() {
    check_row(
        "lirs/multi2.trace.gz",
        TraceFormat::Fixed(Format::Lirs),
        26_311,
        5_684,
        &[
            (100, "6.73"),
            (200, "17.71"),
            (500, "35.98"),
            (1000, "47.80"),
            (1500, "48.31"),
        ],
    );
}

#[test]
fn lirs_loop() {
    check_row(
        "lirs/loop.trace.gz",
        TraceFormat::Fixed(Format::Lirs),
        505_500,
        1_011,
        &[(256, "0.00"), (512, "0.00"), (768, "0.00"), (1024, "99.80")],
    );
}

#[test]
fn lirs_cs() {
    check_row(
        "lirs/cs.trace.gz",
        TraceFormat::Fixed(Format::Lirs),
        6_781,
        1_409,
        &[
            (100, "1.83"),
            (200, "1.83"),
            (300, "1.83"),
            (400, "1.83"),
            (500, "1.83"),
        ],
    );
}

/// The same numbers with the format detected from the content.
#[test]
fn detected_format_gives_the_same_result() {
    let r = run_lru("lirs/cs.trace.gz", TraceFormat::Auto, 100);
    assert_eq!(r.trace[0].format, "lirs");
    assert!(r.trace[0].format_detected);
    assert_eq!(hit_pct(&r), "1.83");
}

/// `--as anon`: the trace's pages are anonymous memory, evicted to swap. Plain LRU must
/// give the same hits as for a file.
#[test]
fn anon_target_matches_file_target() {
    let mut machine = MachineConfig {
        memory: Size(4 << 30),
        memcg_max: Some(Size::from_pages(200)),
        swap: mmsim_core::DeviceConfig {
            size: Some(Size(1 << 30)),
            ..mmsim_core::DeviceConfig::of(mmsim_core::DeviceKind::Zram)
        },
        ..MachineConfig::default()
    };
    machine.policy.name = PolicyName::Lru;
    let s = Scenario::new(
        "golden-anon",
        machine,
        vec![WorkloadSpec::trace(
            trace("lirs/sprite.trace.gz"),
            TraceFormat::Fixed(Format::Lirs),
            Target::Anon,
        )],
    );
    let r = run_scenario(&s, &mut RunOptions::default()).unwrap();
    assert_eq!(hit_pct(&r), "39.88");
}

/// The one-pass miss-ratio curve (Mattson stack distances) gives at every size exactly
/// the hits of a full `lru` simulation at that size.
#[test]
fn one_pass_miss_ratio_curve_equals_lru_runs() {
    use mmsim_trace::{Densifier, StackDistance, TraceReader};
    for rel in ["lirs/sprite.trace.gz", "lirs/multi2.trace.gz"] {
        let mut reader = TraceReader::open(&trace(rel), Format::Lirs).unwrap();
        let mut dense = Densifier::new(1 << 24);
        let mut sd = StackDistance::default();
        let mut batch = Vec::new();
        while reader.read_batch(&mut batch, 4096).unwrap() > 0 {
            for r in &batch {
                sd.reference(dense.id(r.key).unwrap());
            }
        }
        for entries in [100u64, 200, 500, 1000, 1500, 3000] {
            let r = run_lru(rel, TraceFormat::Fixed(Format::Lirs), entries);
            assert_eq!(sd.references(), r.result.access.accesses, "{rel}");
            assert_eq!(
                sd.lru_hits(entries),
                r.result.access.hits,
                "{rel} at {entries} entries"
            );
        }
    }
}
