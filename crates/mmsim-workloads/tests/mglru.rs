//! The multi-gen LRU on seed 000's server workloads, scaled down: the
//! direction of the published differences between the classic LRU (`cost`)
//! and MGLRU, as far as the model reproduces them (see README, MGLRU).

use mmsim_core::{MglruVersion, PolicyName, RunResult};
use mmsim_workloads::{run_scenario, RunOptions, Scenario};

fn run(toml: &str, policy: PolicyName, v: MglruVersion) -> RunResult {
    let mut s = Scenario::from_toml_str(toml, "test").unwrap();
    s.machine.policy.name = policy;
    s.machine.policy.mglru_version = v;
    run_scenario(&s, &mut RunOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .result
}

/// memcached-like: set every key, then uniform random gets, 1.25x memory,
/// swap on zram (seed 000's ramdisk swap).
const MEMCACHED: &str = r#"
seed = 1
[machine]
memory = "32M"
[machine.swap]
device = "zram"
size = "64M"
[[workload]]
name = "memcached"
kind = "kv"
keys = 19_200
value_size = 2000
gets = 400_000
key_pattern = "R"
ratio = "0:1"
"#;

/// fio-like: 8 jobs of buffered random 4k reads over files 2.5x memory.
const FIO: &str = r#"
seed = 1
[machine]
memory = "32M"
[machine.fs]
device = "custom"
read_latency_us = 1.0
write_latency_us = 1.0
bandwidth_mbps = 10000.0
[[workload]]
name = "fio"
kind = "fio"
rw = "randread"
bs = "4k"
numjobs = 8
size = "10m"
ios = 40_000
norandommap = true
"#;

#[test]
fn memcached_kswapd_spends_less_in_rmap_walks_under_mglru() {
    let cost = run(MEMCACHED, PolicyName::Cost, MglruVersion::V6_14);
    for v in [MglruVersion::V6_14, MglruVersion::V6_1] {
        let mg = run(MEMCACHED, PolicyName::Mglru, v);
        let share =
            |r: &RunResult| r.kswapd_profile.rmap_ns as f64 / r.kswapd_profile.total_ns() as f64;
        println!(
            "{v:?}: rmap share {:.3} -> {:.3}, walks {} -> {}, throughput {:.0} -> {:.0}, kswapd {:.3} -> {:.3}",
            share(&cost),
            share(&mg),
            cost.kswapd_profile.rmap_walks,
            mg.kswapd_profile.rmap_walks,
            cost.throughput,
            mg.throughput,
            cost.kswapd_cpu_s,
            mg.kswapd_cpu_s
        );
        println!(
            "miss {:.4} -> {:.4}, stall {:.4} -> {:.4}, io {:.3} -> {:.3}, direct {} -> {}, psi {} -> {}",
            cost.miss_ratio, mg.miss_ratio, cost.reclaim_stall_s, mg.reclaim_stall_s,
            cost.io_wait_s, mg.io_wait_s, cost.vmstat.pgsteal_direct, mg.vmstat.pgsteal_direct,
            cost.psi.some.total, mg.psi.some.total
        );
        // Seed 000: page_vma_mapped_walk 38 % → 15 % of kswapd.
        assert!(share(&mg) < share(&cost) * 0.75, "{v:?}");
        assert!(mg.kswapd_profile.rmap_walks < cost.kswapd_profile.rmap_walks);
        let walked = match v {
            MglruVersion::V6_14 => 1_752_276,
            _ => 1_865_428,
        };
        assert_eq!(mg.kswapd_profile.ptes_walked, walked, "{v:?}");
        assert_eq!(cost.kswapd_profile.ptes_walked, 0);
        // Seed 000's +101–105 % ops/s is not asserted: with one workload CPU
        // and uniform gets the model shows no robust throughput difference
        // (misses are the same within 1 %), see README "MGLRU".
        assert!((mg.miss_ratio - cost.miss_ratio).abs() < 0.01, "{v:?}");
    }
}

#[test]
fn fio_buffered_reads_activate_nothing_under_mglru() {
    let cost = run(FIO, PolicyName::Cost, MglruVersion::V6_14);
    let mg = run(FIO, PolicyName::Mglru, MglruVersion::V6_14);
    println!(
        "pgactivate {} -> {}, kswapd {:.4} -> {:.4}, throughput {:.0} -> {:.0}",
        cost.vmstat.pgactivate,
        mg.vmstat.pgactivate,
        cost.kswapd_cpu_s,
        mg.kswapd_cpu_s,
        cost.throughput,
        mg.throughput
    );
    // Tiers replace activation in the buffered read path.
    assert!(cost.vmstat.pgactivate > 10_000);
    assert_eq!(mg.vmstat.pgactivate, 0);
    assert!(mg.kswapd_cpu_s < cost.kswapd_cpu_s);
    // The same pages are cached either way (uniform random reads).
    assert!((mg.miss_ratio - cost.miss_ratio).abs() < 0.01);
}

#[test]
fn mglru_runs_repeat_bit_for_bit() {
    for v in [MglruVersion::V6_14, MglruVersion::V6_1] {
        let a = run(MEMCACHED, PolicyName::Mglru, v);
        let b = run(MEMCACHED, PolicyName::Mglru, v);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
    }
}

#[test]
fn debugfs_writes_run_at_their_times_and_log_results() {
    let toml = format!(
        r#"{MEMCACHED}
[machine.policy]
name = "mglru"

[[lru_gen_write]]
at = "10ms"
write = "+ 1 0 0 200 1; - / 0 0"

[[lru_gen_write]]
at = "20ms"
write = "- 1 0 9999"
"#
    );
    let s = Scenario::from_toml_str(&toml, "test").unwrap();
    let r = run_scenario(&s, &mut RunOptions::default()).unwrap().result;
    let lg = r.lru_gen.unwrap();
    let w: Vec<(&str, &str)> = lg
        .writes
        .iter()
        .map(|w| (w.command.as_str(), w.result.as_str()))
        .collect();
    assert_eq!(w.len(), 3, "{w:?}");
    assert_eq!(w[0], ("+ 1 0 0 200 1", "ok"));
    assert!(w[1].1.starts_with("ok, "), "{w:?}");
    assert!(w[2].1.contains("EINVAL"), "{w:?}");
    assert!(lg.writes[0].t >= 0.010 && lg.writes[2].t >= 0.020);
}

#[test]
fn debugfs_writes_are_checked_when_the_scenario_loads() {
    for (policy, write, field, needle) in [
        (
            "mglru",
            "* 1 0 0",
            "lru_gen_write[0].write",
            "unknown command",
        ),
        ("mglru", "+ 1 1 0", "lru_gen_write[0].write", "only node 0"),
        ("mglru", "+ 1 0 0 300", "lru_gen_write[0].write", "[0, 201]"),
        ("mglru", "+ 1 0", "lru_gen_write[0].write", "expected"),
        ("cost", "+ 1 0 0", "lru_gen_write[0]", "mglru policy only"),
    ] {
        let toml = format!(
            "{MEMCACHED}\n[machine.policy]\nname = \"{policy}\"\n[[lru_gen_write]]\nat = \"1s\"\nwrite = \"{write}\"\n"
        );
        let e = Scenario::from_toml_str(&toml, "test")
            .unwrap_err()
            .to_string();
        assert!(e.contains(field) && e.contains(needle), "{write}: {e}");
    }
}

/// The many-tabs client, scaled: 10 tabs of 4M in 16M, zram.
const TABS: &str = r#"
seed = 1
[machine]
memory = "16M"
[machine.swap]
device = "zram"
size = "64M"
[[workload]]
name = "chrome"
kind = "tabs"
tabs = 10
tab_size = "4M"
switches = 300
"#;

#[test]
fn many_tabs_kswapd_profile_shifts_away_from_rmap_walks() {
    let cost = run(TABS, PolicyName::Cost, MglruVersion::V6_14);
    for v in [MglruVersion::V6_14, MglruVersion::V6_1] {
        let mg = run(TABS, PolicyName::Mglru, v);
        let share =
            |r: &RunResult| r.kswapd_profile.rmap_ns as f64 / r.kswapd_profile.total_ns() as f64;
        println!(
            "{v:?}: rmap share {:.4} -> {:.4}, walks {} -> {}, miss {:.4} -> {:.4}",
            share(&cost),
            share(&mg),
            cost.kswapd_profile.rmap_walks,
            mg.kswapd_profile.rmap_walks,
            cost.miss_ratio,
            mg.miss_ratio
        );
        assert!(share(&mg) < share(&cost), "{v:?}");
        assert!(mg.kswapd_profile.rmap_walks < cost.kswapd_profile.rmap_walks);
    }
}

#[test]
fn tabs_load_every_heap_then_visit() {
    use mmsim_core::Event;
    let toml = r#"
[machine]
memory = "64M"
[[workload]]
kind = "tabs"
tabs = 2
tab_size = "8k"
switches = 3
touches = 2
write_ratio = 0
"#;
    let s = Scenario::from_toml_str(toml, "t").unwrap();
    assert_eq!(s.expected_events(), Some(2 * 2 + 3 * 2));
    let mut events = Vec::new();
    let mut record = |b: &[Event]| events.extend_from_slice(b);
    run_scenario(
        &s,
        &mut RunOptions {
            on_batch: Some(&mut record),
            ..RunOptions::default()
        },
    )
    .unwrap();
    let acc: Vec<(u32, u32, bool)> = events
        .iter()
        .filter_map(|e| match *e {
            Event::Access { vma, index, write } => Some((vma, index, write)),
            _ => None,
        })
        .collect();
    assert_eq!(acc.len(), 10);
    // Page loads: tab 0 then tab 1, every page stored in order.
    assert_eq!(
        acc[..4],
        [(0, 0, true), (0, 1, true), (1, 0, true), (1, 1, true)]
    );
    // Visits: reads (write_ratio 0) within a tab's heap, two per visit.
    for pair in acc[4..].chunks(2) {
        assert_eq!(pair[0].0, pair[1].0, "a visit stays in one tab");
        assert!(pair.iter().all(|&(v, i, w)| v < 2 && i < 2 && !w));
    }
    let bad = Scenario::from_toml_str(
        "[[workload]]\nkind = \"tabs\"\ntabs = 0\ntab_size = \"4M\"\nswitches = 1\n",
        "t",
    )
    .unwrap_err()
    .to_string();
    assert!(
        bad.contains("workload[0].tabs") && bad.contains("[1, 4096]"),
        "{bad}"
    );
}

#[test]
fn enabled_and_min_ttl_writes_switch_lists_and_settings_at_their_times() {
    // Core off at 50 ms (folios drained to the classic lists, cost rules),
    // back on at 100 ms (filled into generations), min_ttl set at 120 ms.
    let toml = format!(
        r#"{MEMCACHED}
[machine.policy]
name = "mglru"
mglru_version = "v6.1"

[[lru_gen_write]]
at = "50ms"
path = "/sys/kernel/mm/lru_gen/enabled"
write = "0x6"

[[lru_gen_write]]
at = "100ms"
path = "/sys/kernel/mm/lru_gen/enabled"
write = "y"

[[lru_gen_write]]
at = "120ms"
path = "/sys/kernel/mm/lru_gen/min_ttl_ms"
write = "0"
"#
    );
    let s = Scenario::from_toml_str(&toml, "test").unwrap();
    let r = run_scenario(&s, &mut RunOptions::default()).unwrap().result;
    let lg = r.lru_gen.unwrap();
    assert_eq!(lg.version, "v6.1");
    assert_eq!(lg.enabled, 7);
    let w: Vec<&str> = lg.writes.iter().map(|w| w.result.as_str()).collect();
    assert_eq!(w.len(), 3, "{w:?}");
    // Each move carried every resident folio (the machine is full by 50 ms).
    let moved = |s: &str| -> u64 { s.split_whitespace().nth(1).unwrap().parse().unwrap() };
    assert_eq!((moved(w[0]), moved(w[1])), (7939, 7941), "{w:?}");
    assert_eq!(w[2], "ok");
    // Pages were evicted under both policies' rules and the run completed.
    assert_eq!(r.vmstat.pswpout, 71_712);
}

#[test]
fn lru_gen_file_writes_are_checked() {
    for (path, write, field, needle) in [
        (
            "/sys/kernel/mm/lru_gen/enabled",
            "9",
            "lru_gen_write[0].write",
            "[0, 0x7]",
        ),
        (
            "/sys/kernel/mm/lru_gen/min_ttl_ms",
            "-1",
            "lru_gen_write[0].write",
            "4294967295",
        ),
        (
            "/sys/kernel/mm/lru_gen/x",
            "1",
            "lru_gen_write[0].path",
            "unknown file",
        ),
    ] {
        let toml = format!(
            "{MEMCACHED}\n[machine.policy]\nname = \"mglru\"\n[[lru_gen_write]]\nat = \"1s\"\npath = \"{path}\"\nwrite = \"{write}\"\n"
        );
        let e = Scenario::from_toml_str(&toml, "test")
            .unwrap_err()
            .to_string();
        assert!(e.contains(field) && e.contains(needle), "{path}: {e}");
    }
}
