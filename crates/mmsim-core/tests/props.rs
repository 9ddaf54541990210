//! Property tests: invariants hold after any event sequence, and the same
//! sequence gives the same result bit for bit.

use mmsim_core::{
    DeviceConfig, DeviceKind, Event, MachineConfig, MglruVersion, PolicyConfig, PolicyName, Sim,
    Size,
};
use proptest::prelude::*;

/// Cases per property: `default`, or `PROPTEST_CASES` when set (CI's debug run sets
/// a few hundred; the long mode, `PROPTEST_CASES=10000`, is RELIABILITY.md's).
/// An explicit `cases` in a `ProptestConfig` would otherwise ignore the variable.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn build(
    (policy, version): (PolicyName, MglruVersion),
    swap: bool,
    memcg_max: Option<u64>,
    cpus: u32,
) -> (Sim, [u32; 3], u32) {
    let cfg = MachineConfig {
        memory: Size::from_pages(4096),
        cpus,
        memcg_max: memcg_max.map(Size::from_pages),
        policy: PolicyConfig {
            name: policy,
            mglru_version: version,
            ..Default::default()
        },
        swap: if swap {
            DeviceConfig {
                size: Some(Size::from_pages(2048)),
                ..DeviceConfig::of(DeviceKind::Ssd)
            }
        } else {
            DeviceConfig::of(DeviceKind::None)
        },
        ..Default::default()
    };
    let mut sim = Sim::new(cfg).unwrap();
    let t = sim.add_task("t");
    let anon = sim.mmap_anon(t, 3000).unwrap();
    let file = sim.add_file("f", 6000).unwrap();
    let map = sim.mmap_file(t, file, 0, 2000, false).unwrap();
    let exec = sim.mmap_file(t, file, 2000, 500, true).unwrap();
    (sim, [anon, map, exec], file)
}

fn event(code: (u8, u32, bool), vmas: [u32; 3], file: u32, swap: bool) -> Event {
    let (kind, idx, w) = code;
    match kind % 6 {
        0 if swap => Event::Access {
            vma: vmas[0],
            index: idx % 3000,
            write: w,
        },
        1 => Event::Access {
            vma: vmas[1],
            index: idx % 2000,
            write: w,
        },
        2 => Event::Access {
            vma: vmas[2],
            index: idx % 500,
            write: false,
        },
        3 => Event::FileWrite {
            file,
            index: idx % 6000,
            pages: 1,
        },
        4 => Event::Think { ns: idx as u64 },
        _ => Event::FileRead {
            file,
            index: idx % 6000,
            pages: 1,
        },
    }
}

fn policies() -> impl Strategy<Value = (PolicyName, MglruVersion)> {
    let v = MglruVersion::V6_14;
    prop_oneof![
        Just((PolicyName::Cost, v)),
        Just((PolicyName::ScannedRotated, v)),
        Just((PolicyName::Lru, v)),
        Just((PolicyName::Mglru, MglruVersion::V6_14)),
        Just((PolicyName::Mglru, MglruVersion::V6_1)),
        Just((PolicyName::Mglru, MglruVersion::V6_12)),
    ]
}

/// The run-twice frame of every property here: `run` builds and runs a
/// machine and returns what it must reproduce; it runs twice and the two
/// outcomes must be equal (the same inputs give the same bits).
fn run_twice<T: PartialEq + std::fmt::Debug>(
    run: impl Fn() -> Result<T, TestCaseError>,
) -> Result<(), TestCaseError> {
    let a = run()?;
    let b = run()?;
    prop_assert_eq!(a, b);
    Ok(())
}

/// A run's result checked (every access counted once, as a hit or a
/// miss) and as JSON, for [`run_twice`] to compare.
fn checked_json(r: &mmsim_core::RunResult) -> Result<String, TestCaseError> {
    prop_assert_eq!(r.access.hits + r.access.misses, r.access.accesses);
    Ok(serde_json::to_string(r).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_and_runs_repeat(
        policy in policies(),
        swap in any::<bool>(),
        limit in prop_oneof![Just(None), (200u64..3000).prop_map(Some)],
        cpus in prop_oneof![Just(1u32), Just(4), Just(36)],
        codes in prop::collection::vec((any::<u8>(), 0u32..8000, any::<bool>()), 1..6000),
    ) {
        run_twice(|| {
            let (mut sim, vmas, file) = build(policy, swap, limit, cpus);
            for chunk in codes.chunks(500) {
                let ev: Vec<Event> = chunk.iter().map(|&c| event(c, vmas, file, swap)).collect();
                sim.run(&ev);
                sim.check_invariants().map_err(TestCaseError::fail)?;
            }
            let r = sim.finish();
            prop_assert!(r.memcg_usage_pages <= limit.unwrap_or(u64::MAX));
            checked_json(&r)
        })?;
    }
}

/// Knob writes a cgroup property case may make: (group 1..=3, knob, pages).
fn knob(code: (u8, u8, u16)) -> (u8, mmsim_core::memcg::MemcgKnob, u64) {
    use mmsim_core::memcg::MemcgKnob as K;
    let (g, k, v) = code;
    let knob = [K::Max, K::High, K::Low, K::Min, K::SwapMax, K::SoftLimit][k as usize % 6];
    let pages = if v >= 3000 { u64::MAX } else { v as u64 };
    (1 + g % 3, knob, pages)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(32), ..ProptestConfig::default() })]

    /// A tree `/a`, `/a/b`, `/c` with one task in `/a/b` and one in `/c`,
    /// under random knob writes (memory.max/high/low/min/swap.max, soft
    /// limits) between event chunks, in both cgroup versions, with and without
    /// kernel memory accounting: usage and swap charges stay hierarchical and
    /// under their limits, and runs repeat.
    #[test]
    fn cgroup_invariants_hold_and_runs_repeat(
        v1 in any::<bool>(),
        codes in prop::collection::vec((any::<u8>(), 0u32..8000, any::<bool>()), 1..4000),
        knobs in prop::collection::vec((any::<u8>(), any::<u8>(), 0u16..3400), 0..8),
        kmem in any::<bool>(),
    ) {
        run_twice(|| {
            let mut cfg = MachineConfig {
                memory: Size::from_pages(4096),
                swap: DeviceConfig {
                    size: Some(Size::from_pages(2048)),
                    ..DeviceConfig::of(DeviceKind::Ssd)
                },
                ..Default::default()
            };
            if v1 {
                cfg.cgroup_version = mmsim_core::config::CgroupVersion::V1;
            }
            // Kernel memory charged beside the pages (xarray nodes, page
            // tables, the tasks' baselines) keeps the same invariants.
            cfg.kmem_accounting = kmem;
            let mut sim = Sim::new(cfg).unwrap();
            let a = sim.add_memcg(0, "a").unwrap();
            let b = sim.add_memcg(a, "b").unwrap();
            let c = sim.add_memcg(0, "c").unwrap();
            let groups = [0, a, b, c];
            let t1 = sim.add_task("t1");
            let t2 = sim.add_task("t2");
            sim.attach_task(t1, b).unwrap();
            sim.attach_task(t2, c).unwrap();
            let anon1 = sim.mmap_anon(t1, 3000).unwrap();
            let anon2 = sim.mmap_anon(t2, 3000).unwrap();
            let file = sim.add_file("f", 6000).unwrap();
            let map = sim.mmap_file(t1, file, 0, 2000, false).unwrap();
            let exec = sim.mmap_file(t2, file, 2000, 500, true).unwrap();
            let mut knobs = knobs.iter().copied().map(knob);
            for (i, chunk) in codes.chunks(500).enumerate() {
                let vmas = if i % 2 == 0 { [anon1, map, exec] } else { [anon2, map, exec] };
                let ev: Vec<Event> = chunk.iter().map(|&c| event(c, vmas, file, true)).collect();
                sim.run(&ev);
                sim.check_invariants().map_err(TestCaseError::fail)?;
                if let Some((g, k, pages)) = knobs.next() {
                    sim.set_memcg_knob(groups[g as usize], k, pages).unwrap();
                    sim.check_invariants().map_err(TestCaseError::fail)?;
                }
            }
            checked_json(&sim.finish())
        })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(32), ..ProptestConfig::default() })]

    /// MGLRU with two groups (the memcg walk of global reclaim and cgroup
    /// reclaim at a group's limit) and debugfs aging/eviction between
    /// chunks: invariants hold and runs repeat.
    #[test]
    fn mglru_with_groups_and_debugfs_commands(
        version in prop_oneof![Just(MglruVersion::V6_1), Just(MglruVersion::V6_12), Just(MglruVersion::V6_14)],
        swap in any::<bool>(),
        limit in prop_oneof![Just(None), (300u64..2000).prop_map(Some)],
        cmds in prop::collection::vec((any::<bool>(), 0u64..12, prop_oneof![Just(None), (0u32..=201).prop_map(Some)]), 0..12),
        codes in prop::collection::vec((any::<u8>(), 0u32..8000, any::<bool>()), 1..4000),
    ) {
        run_twice(|| {
            let (mut sim, vmas, file) = build((PolicyName::Mglru, version), swap, None, 1);
            let g = sim.add_memcg(0, "g").unwrap();
            if let Some(l) = limit {
                sim.set_memcg_max(g, l).unwrap();
            }
            let t = sim.add_task("u");
            sim.attach_task(t, g).unwrap();
            let other = sim.mmap_anon(t, 2500).unwrap();
            let mut log = Vec::new();
            for (i, chunk) in codes.chunks(400).enumerate() {
                let ev: Vec<Event> = chunk
                    .iter()
                    .map(|&c| {
                        if c.0 % 7 == 6 {
                            Event::Access { vma: other, index: c.1 % 2500, write: c.2 }
                        } else {
                            event(c, vmas, file, swap)
                        }
                    })
                    .collect();
                sim.run(&ev);
                sim.check_invariants().map_err(TestCaseError::fail)?;
                if let Some(&(age, seq, sw)) = cmds.get(i) {
                    if seq == 11 {
                        // Toggle the core bit (lru_gen/enabled): drain or fill.
                        let on = matches!(sim.policy(), mmsim_core::Policy::Mglru(_));
                        log.push(format!("{}", sim.lru_gen_set_enabled(if on { 6 } else { 7 })));
                        sim.check_invariants().map_err(TestCaseError::fail)?;
                        continue;
                    }
                    let m = if seq % 2 == 0 { 0 } else { g };
                    let r = if age {
                        sim.lru_gen_run_aging(m, seq, sw, seq % 3 != 0).map(|()| 0)
                    } else {
                        sim.lru_gen_run_eviction(m, seq, sw, Some(64))
                    };
                    log.push(format!("{r:?}"));
                    sim.check_invariants().map_err(TestCaseError::fail)?;
                }
            }
            Ok((checked_json(&sim.finish())?, log))
        })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(12), ..ProptestConfig::default() })]

    /// THP (PMD size and 64K) under 6.8 or 6.12 with the zero page, swap
    /// on zram (large swap-in), forks and partial unmaps, and a task in a
    /// v2 group with cgroup writeback writing files: the page-table
    /// invariants (`pte_invariants.rs`: zero-page PTEs, anonymous
    /// mapcounts) and each wb's `WB_RECLAIMABLE` hold after every chunk,
    /// and runs repeat.
    #[test]
    fn thp_fork_zero_page_and_cgroup_writeback_invariants(
        v6_12 in any::<bool>(),
        codes in prop::collection::vec((any::<u8>(), 0u32..8000, any::<bool>()), 1..3000),
    ) {
        use mmsim_core::{ThpConfig, ThpEnabled, ThpKernel, ThpSizeConfig, ThpSizeEnabled};
        run_twice(|| {
            let mut thp = ThpConfig {
                kernel: if v6_12 { ThpKernel::V6_12 } else { ThpKernel::V6_8 },
                enabled: ThpEnabled::Always,
                ..Default::default()
            };
            thp.hugepages_64kb = ThpSizeConfig { enabled: ThpSizeEnabled::Always };
            let cfg = MachineConfig {
                memory: Size::from_pages(4096),
                swap: DeviceConfig {
                    size: Some(Size::from_pages(2048)),
                    ..DeviceConfig::of(DeviceKind::Zram)
                },
                thp,
                zero_page: true,
                cgroup_writeback: true,
                ..Default::default()
            };
            let mut sim = Sim::new(cfg).unwrap();
            let g = sim.add_memcg(0, "g").unwrap();
            let t = sim.add_task("t");
            sim.attach_task(t, g).unwrap();
            let anon = sim.mmap_anon(t, 3000).unwrap();
            let file = sim.add_file("f", 6000).unwrap();
            let map = sim.mmap_file(t, file, 0, 2000, false).unwrap();
            let exec = sim.mmap_file(t, file, 2000, 500, true).unwrap();
            for chunk in codes.chunks(300) {
                let ev: Vec<Event> = chunk
                    .iter()
                    .map(|&(k, idx, w)| match k % 16 {
                        14 => Event::Fork { vma: anon, pages: idx % 64 },
                        15 => Event::Discard { vma: anon, index: idx % 3000, pages: 1 + idx % 40 },
                        _ => event((k, idx, w), [anon, map, exec], file, true),
                    })
                    .collect();
                sim.run(&ev);
                sim.check_invariants().map_err(TestCaseError::fail)?;
            }
            checked_json(&sim.finish())
        })?;
    }
}
