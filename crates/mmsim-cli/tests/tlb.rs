//! The data TLB from the command line (`--set tlb.…`, `crate::tlb` of
//! mmsim-core): the result's `tlb` object only when the model is on, 16× fewer
//! walks for 64 KiB folios with the contiguous bit, the compare rows, and the
//! errors of its geometry.

mod common;

use common::{bad_input, json};

#[test]
fn run_reports_the_tlb_only_when_on_and_contpte_cuts_walks_16x() {
    let off = json(&["run", "mthp-page-fault1", "--json", "-q"]);
    assert!(
        !off.to_string().contains("\"tlb"),
        "no TLB report, and no [machine.tlb] echoed, when the model is off"
    );
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "mthp-page-fault1",
            "--json",
            "-q",
            "--set",
            "tlb.enabled=true",
        ];
        args.extend(extra);
        json(&args)
    };
    let pte = run(&["--set", "thp.hugepages-64kB.enabled=always"]);
    assert_eq!(pte["tlb"]["dtlb_loads"], 32768);
    assert_eq!(pte["tlb"]["dtlb_load_misses"], 32768);
    let cont = run(&[
        "--set",
        "thp.hugepages-64kB.enabled=always",
        "--set",
        "tlb.contpte=true",
    ]);
    assert_eq!(cont["tlb"]["dtlb_load_misses"], 2048);
    assert_eq!(cont["tlb"]["walks_64k"], 2048);
    assert!(cont["runtime_s"].as_f64() < pte["runtime_s"].as_f64());
    // The same faults either way: the saving is the walks'.
    assert_eq!(cont["vmstat"]["pgfault"], pte["vmstat"]["pgfault"]);
}

#[test]
fn compare_adds_the_tlb_rows_when_every_run_has_the_model() {
    let on = json(&[
        "compare",
        "mthp-page-fault1",
        "--json",
        "--set",
        "tlb.enabled=true",
        "--set",
        "tlb.contpte=false,true",
    ]);
    let names: Vec<&str> = on["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"dtlb_load_misses"), "{names:?}");
    let off = json(&[
        "compare",
        "mthp-page-fault1",
        "--json",
        "--set",
        "swappiness=60,100",
    ]);
    assert!(!off["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["name"] == "dtlb_load_misses"));
}

#[test]
fn bad_tlb_geometry_names_the_field() {
    bad_input(
        &["run", "--set", "tlb.l1_ways=0", "-q"],
        &["machine.tlb.l1_ways", "[1, 64]"],
    );
    bad_input(
        &["run", "--set", "tlb.stlb_entries=2000", "-q"],
        &["machine.tlb.stlb_entries", "power-of-two number of sets"],
    );
    bad_input(
        &["run", "--set", "cost.tlb_miss_ns=2000000000", "-q"],
        &["machine.cost.tlb_miss_ns", "[0, 1000000000]"],
    );
}
