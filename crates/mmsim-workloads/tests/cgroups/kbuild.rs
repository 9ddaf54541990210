//! Memory cgroups in scenarios: the kbuild model.

use super::*;

// ---- kbuild --------------------------------------------------------------------------------

#[test]
fn kbuild_events_are_known_before_running() {
    let spec = KbuildSpec {
        jobs: 3,
        headers: 256 << 10,
        cc_mem: 64 << 10,
        includes: 7,
        ..KbuildSpec::new(25)
    };
    let w = mmsim_workloads::WorkloadSpec::model(WorkloadKind::Kbuild(spec.clone()));
    let count = |seed| {
        let mut sim = Sim::new(mmsim_core::MachineConfig::default()).unwrap();
        let mut g = Generator::build(&mut sim, &w, "kb", seed, "test", None).unwrap();
        let mut out = Vec::new();
        while g.fill(&mut out, 100).unwrap() > 0 {}
        out
    };
    let a = count(1);
    assert_eq!(a.len() as u64, spec.events());
    assert_eq!(a, count(1), "deterministic");
    let b = count(2);
    assert_eq!(b.len(), a.len(), "the tree does not depend on the seed");
    assert_ne!(a, b, "the header picks do");
    // Per compile: a source read, 7 header reads, 3 passes over its memory, an object
    // write and a think.
    let reads = a
        .iter()
        .filter(|e| matches!(e, Event::FileRead { .. }))
        .count();
    let writes = a
        .iter()
        .filter(|e| matches!(e, Event::FileWrite { .. }))
        .count();
    let thinks = a
        .iter()
        .filter(|e| matches!(e, Event::Think { ns: 1_000_000 }))
        .count();
    assert_eq!((reads, writes, thinks), (25 * 8, 25, 25));
    let mem: u64 = (0..25).map(|u| u64::from(spec.unit(u).mem)).sum();
    let accesses = a
        .iter()
        .filter(|e| matches!(e, Event::Access { .. }))
        .count() as u64;
    assert_eq!(accesses, mem * 3);
    // Sizes are within [½, 1½] of the means.
    for u in 0..25 {
        let x = spec.unit(u);
        assert!((3..=9).contains(&x.source), "{x:?}");
        assert!((5..=15).contains(&x.object), "{x:?}");
        assert!((8..=24).contains(&x.mem), "{x:?}");
    }
}

#[test]
fn kbuild_fields_are_checked() {
    let base = "[[workload]]\nkind = \"kbuild\"\nunits = 10\n";
    parse(base);
    for (extra, field, needle) in [
        ("jobs = 0", "jobs", "out of range [1, 256]"),
        ("jobs = 257", "jobs", "out of range [1, 256]"),
        ("source_size = 100", "source_size", "out of range [4k, 16m]"),
        (
            "object_size = \"17m\"",
            "object_size",
            "out of range [4k, 16m]",
        ),
        ("header_size = \"1k\"", "header_size", "out of range"),
        ("headers = \"4k\"", "headers", "header_size"),
        ("headers = \"8g\"", "headers", "100000 × header_size"),
        ("includes = 100001", "includes", "out of range"),
        ("header_theta = 6.0", "header_theta", "out of range [0, 5]"),
        ("cc_mem = \"5g\"", "cc_mem", "out of range [4k, 4g]"),
        ("cc_passes = 0", "cc_passes", "out of range [1, 1000]"),
        ("cpu = \"2h\"", "cpu", "out of range [0s, 1h]"),
        ("cpu = 5", "cpu", "no unit"),
        ("size = \"1m\"", "size", "does not apply to kind `kbuild`"),
    ] {
        let (msg, f) = err(&format!("{base}{extra}\n"));
        assert_eq!(f, format!("workload[0].{field}"), "{msg}");
        assert!(msg.contains(needle), "{extra}: {msg}");
    }
    let (msg, f) = err(&base.replace("units = 10", "units = 0"));
    assert_eq!(f, "workload[0].units", "{msg}");
    let (msg, f) = err(&base.replace("units = 10\n", ""));
    assert_eq!(f, "workload[0]", "{msg}");
    assert!(msg.contains("needs the field `units`"), "{msg}");
}

/// `cc_exit = true`: every compile ends by zapping the heap pages it used, so each
/// compile faults its heap afresh — exactly one fault per heap page per compile on a
/// machine without memory pressure — where a reused heap faults only the pages no
/// earlier compile of the same job touched. The field is printed only when set.
#[test]
fn kbuild_cc_exit_frees_each_compiles_heap() {
    let text = |exit: bool| {
        format!(
            "seed = 5\n[machine]\nmemory = \"512M\"\n[[workload]]\nkind = \"kbuild\"\n\
             units = 12\njobs = 2\nheaders = \"256k\"\ncc_mem = \"128k\"\nincludes = 4\n\
             cpu = \"0s\"\n{}",
            if exit { "cc_exit = true\n" } else { "" }
        )
    };
    let spec = KbuildSpec {
        jobs: 2,
        headers: 256 << 10,
        cc_mem: 128 << 10,
        includes: 4,
        cpu: 0,
        ..KbuildSpec::new(12)
    };
    let heap: u64 = (0..12).map(|u| u64::from(spec.unit(u).mem)).sum();
    let exits = parse(&text(true));
    let reused = parse(&text(false));
    assert!(exits.to_toml_string().contains("cc_exit = true"));
    assert!(!reused.to_toml_string().contains("cc_exit"));
    let (a, b) = (run(&exits), run(&reused));
    let anon_faults = |r: &ScenarioResult| r.result.vmstat.pgfault - r.result.vmstat.pgmajfault;
    assert_eq!(a.result.vmstat.pgmajfault, 0);
    // File reads fault nothing (read(2), not mappings): every fault is a heap page's.
    assert_eq!(anon_faults(&a), heap, "one fault per heap page per compile");
    assert!(anon_faults(&b) < heap, "{} vs {heap}", anon_faults(&b));
    // Every compile, the last ones too, has freed its heap by the end; a reused heap
    // stays charged.
    assert_eq!(a.result.memcg["/"].anon, 0);
    assert!(b.result.memcg["/"].anon > 0);
    // One more event per compile.
    assert_eq!(a.events, b.events + 12);
}
