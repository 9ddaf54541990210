//! Memory cgroups in scenarios: running, knob writes at their times, percentages of
//! peaks, and the workloads' tasks and files charged to their group.

use super::*;

// ---- running -----------------------------------------------------------------------------

pub(super) const TWO: &str = r#"
[machine]
memory = "256M"
swap = { device = "zram", size = "256M" }

[[cgroup]]
path = "/limited"
max = "4M"

[[cgroup]]
path = "/free"

[[workload]]
name = "anon"
kind = "uniform"
target = "anon"
pages = "16M"
accesses = 40000
cgroup = "/limited"

[[workload]]
name = "file"
kind = "uniform"
target = "file"
pages = "16M"
accesses = 40000
cgroup = "/free"
"#;

#[test]
fn the_group_with_a_limit_is_reclaimed_and_the_other_is_not() {
    let r = run(&parse(TWO));
    let m = &r.result.memcg;
    assert_eq!(
        m.keys().map(String::as_str).collect::<Vec<_>>(),
        ["/", "/free", "/limited"]
    );
    let lim = &m["/limited"];
    assert_eq!(lim.max, Some(1024));
    assert!(lim.current <= 1024, "{lim:?}");
    assert!(lim.pgsteal > 0 && lim.events_max > 0, "{lim:?}");
    assert!(lim.anon > 0 && lim.file == 0, "{lim:?}");
    assert!(lim.events.workingset_refault_anon > 0, "{lim:?}");
    assert!(lim.events.pgmajfault > 0, "{lim:?}");
    let free = &m["/free"];
    assert_eq!(free.max, None);
    assert_eq!((free.pgscan, free.pgsteal, free.events_max), (0, 0, 0));
    assert!(free.file > 3000 && free.anon == 0, "{free:?}");
    // Hierarchical: the top group holds both.
    assert_eq!(m["/"].current, lim.current + free.current);
    assert_eq!(m["/"].pgsteal, lim.pgsteal);
    // The JSON has the same object.
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["memcg"]["/limited"]["max"], 1024);
    assert_eq!(j["memcg"]["/limited"]["pgsteal"], lim.pgsteal);
    assert_eq!(j["memcg"]["/free"]["current"], free.current);
    // Deterministic.
    assert_eq!(run(&parse(TWO)).result, r.result);
}

#[test]
fn a_cycle_writes_its_values_at_their_times() {
    let text = format!(
        "{TWO}
[[cgroup_cycle]]
path = \"/free\"
knob = \"max\"
values = [\"1000p\", \"2000p\"]
durations = [\"10ms\", \"5ms\"]
start = \"2ms\"
until = \"40ms\"
final = \"max\"

[[cgroup_change]]
at = \"20ms\"
path = \"/limited\"
max = \"3000p\"
"
    );
    let s = parse(&text);
    let mut sim = Sim::new(s.machine.clone()).unwrap();
    cgroups::setup(&mut sim, &s).unwrap();
    let free = sim.memcg_by_path("/free").unwrap() as usize;
    let lim = sim.memcg_by_path("/limited").unwrap() as usize;
    assert_eq!(sim.memcgs()[lim].max, 1024, "set up front");
    for ms in 0..50u64 {
        // A zero think lets due writes happen at the current time.
        sim.step(&Event::Think { ns: 0 });
        assert_eq!(sim.now(), ms * 1_000_000);
        let want = match ms {
            0..=1 => u64::MAX,
            2..=11 | 17..=26 | 32..=39 => 1000,
            12..=16 | 27..=31 => 2000,
            _ => u64::MAX,
        };
        assert_eq!(sim.memcgs()[free].max, want, "at {ms} ms");
        let want = if ms < 20 { 1024 } else { 3000 };
        assert_eq!(sim.memcgs()[lim].max, want, "at {ms} ms");
        sim.step(&Event::Think { ns: 1_000_000 });
    }
    // In a run, the last write stays.
    let r = run(&s);
    assert_eq!(r.result.memcg["/limited"].max, Some(3000));
}

#[test]
fn percentages_of_a_peak_take_a_calibration_run() {
    let text = r#"
[machine]
memory = "64M"
swap = { device = "zram", size = "64M" }

[[cgroup]]
path = "/work"

[[cgroup]]
path = "/idle"

[[cgroup_cycle]]
path = "/work"
knob = "max"
values = ["75%", "200%"]
durations = ["1s", "10s"]
until = "30s"
of = "peak"

[[workload]]
kind = "eater"
size = "8M"
cgroup = "/work"
"#;
    let s = parse(text);
    assert!(cgroups::needs_calibration(&s));
    let cal = cgroups::calibration_scenario(&s);
    assert!(cal.cgroup_cycles.is_empty());
    assert_eq!(
        cal.cgroups,
        [CgroupSpec::new("/work"), CgroupSpec::new("/idle")]
    );
    let peaks = cgroups::peaks(&s).unwrap();
    assert_eq!(peaks["/work"], 2048);
    let w = cgroups::schedule(&s).unwrap();
    let v: Vec<(u64, u64)> = w.iter().map(|w| (w.at.unwrap(), w.value)).collect();
    assert_eq!(
        v,
        [
            (0, 1536),
            (1_000_000_000, 4096),
            (11_000_000_000, 1536),
            (12_000_000_000, 4096),
            (22_000_000_000, 1536),
            (23_000_000_000, 4096)
        ]
    );
    // The run is squeezed to 75 % of its peak from the start.
    let r = run(&s);
    let work = &r.result.memcg["/work"];
    assert!(work.pgsteal > 0 && work.events_max > 0, "{work:?}");
    // A group without memory has no peak.
    let idle = text.replace("path = \"/work\"\nknob", "path = \"/idle\"\nknob");
    let e = run_scenario(&parse(&idle), &mut RunOptions::default()).unwrap_err();
    assert_eq!(e.field(), Some("cgroup_cycle[0].of"), "{e}");
    assert!(e.to_string().contains("no memory"), "{e}");
}

/// One small workload of every kind, each in `/w`: all its memory is charged there.
#[test]
fn every_kind_charges_its_group() {
    let kinds = [
        ("kind = \"uniform\"\ntarget = \"file\"\npages = \"2M\"\naccesses = 2000", (512, 512, 0)),
        ("kind = \"uniform\"\ntarget = \"mmap\"\npages = \"2M\"\naccesses = 2000", (512, 512, 0)),
        ("kind = \"touch\"\ntarget = \"anon\"\npages = \"2M\"", (512, 0, 512)),
        ("kind = \"fio\"\nrw = \"randread\"\nsize = \"1m\"\nnumjobs = 2", (512, 512, 0)),
        ("kind = \"fio\"\nrw = \"randread\"\nsize = \"1m\"\nnumjobs = 2\nshared_file = true", (256, 256, 0)),
        ("kind = \"kv\"\nkeys = 1000\ngets = 1000", (64, 0, 8)),
        ("kind = \"pgbench\"\nscale = 1\ntransactions = 100\nshared_buffers = \"1m\"", (896, 580, 256)),
        ("kind = \"dd\"\ncount = 1000", (128, 125, 0)),
        ("kind = \"dd\"\ncount = 1000\nread = true", (128, 125, 0)),
        ("kind = \"eater\"\nsize = \"1m\"", (256, 0, 256)),
        ("kind = \"kbuild\"\nunits = 20\njobs = 2\nheaders = \"1m\"\ncc_mem = \"256k\"\nincludes = 20", (768, 521, 187)),
    ];
    // (kind, (memory.current, file, anon) of /w in pages)
    for (body, (current, file, anon)) in kinds {
        let text = format!(
            "[machine]\nmemory = \"256M\"\n[[cgroup]]\npath = \"/w\"\n\
             [[workload]]\n{body}\ncgroup = \"/w\"\n"
        );
        let r = run(&parse(&text));
        let w = &r.result.memcg["/w"];
        let top = &r.result.memcg["/"];
        assert_eq!(
            (w.current, w.file, w.anon),
            (current, file, anon),
            "{body}: {w:?}"
        );
        assert_eq!(
            w.current, top.current,
            "{body}: everything is charged to /w"
        );
        assert_eq!(w.events.pgfault, top.events.pgfault, "{body}");
    }
}
