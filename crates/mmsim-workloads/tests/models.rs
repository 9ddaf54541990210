//! The program models (`kv`, `pgbench`, `dd`, `eater`; `fio` in `models_fio.rs`) and
//! start times: exact event sequences of tiny configurations, the programs' rules,
//! determinism, every error path, and the embedded scenarios that use them.

use std::collections::BTreeMap;

use mmsim_core::{Advice, Event, Sim};
use mmsim_workloads::gen::{workload_seed, Generator, Sink};
use mmsim_workloads::models::dd::DdSpec;
use mmsim_workloads::models::eater::{EaterPattern, EaterSpec};
use mmsim_workloads::models::fio::{FioDistribution, FioRw, FioSpec};
use mmsim_workloads::models::kv::{KeyPattern, KvRatio, KvSpec};
use mmsim_workloads::models::pgbench::{PgbenchSpec, KEYS_PER_LEAF, TUPLES_PER_BLOCK};
use mmsim_workloads::{
    embedded_scenario, Scenario, ScenarioResult, Target, WorkloadKind, WorkloadSpec,
};

mod common;

use common::{access, all, events_of, fio, machine, read, run, run_recorded, write};

// ---- kv -------------------------------------------------------------------------------

fn kv(k: KvSpec) -> WorkloadSpec {
    WorkloadSpec::model(WorkloadKind::Kv(k))
}

#[test]
fn kv_set_phase_writes_every_key_once_packed_in_pages() {
    // 10 keys of 1000 bytes: 4 items per page, 3 pages; then 5 GETs.
    let spec = kv(KvSpec::new(10, 1000, 5));
    let ev = all(&spec);
    assert_eq!(ev.len(), 15);
    assert_eq!(spec.kind.events(), Some(15));
    let set: Vec<Event> = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
        .iter()
        .map(|&p| access(0, p, true))
        .collect();
    assert_eq!(ev[..10], set[..]);
    for e in &ev[10..] {
        assert!(
            matches!(*e, Event::Access { vma: 0, index, write: false } if index < 3),
            "{e:?}"
        );
    }
}

#[test]
fn kv_large_values_touch_consecutive_pages() {
    // 3 keys of 6000 bytes: 2 pages each.
    let spec = kv(KvSpec::new(3, 6000, 4));
    let ev = all(&spec);
    assert_eq!(ev.len(), (3 + 4) * 2);
    let set: Vec<Event> = (0..6).map(|p| access(0, p, true)).collect();
    assert_eq!(ev[..6], set[..]);
    for pair in ev[6..].chunks(2) {
        let (Event::Access { index: a, .. }, Event::Access { index: b, .. }) = (pair[0], pair[1])
        else {
            panic!()
        };
        assert_eq!(a % 2, 0);
        assert_eq!(b, a + 1);
    }
}

#[test]
fn kv_ratio_and_sequential_pattern() {
    // memtier --ratio 1:2 --key-pattern S:S: SET, GET, GET, SET, GET, GET, …; sets and
    // gets keep their own cursors. 4 keys of 4096 bytes, 5 GETs: 3 SETs mixed in.
    let spec = kv(KvSpec {
        key_pattern: KeyPattern::Sequential,
        ratio: KvRatio { sets: 1, gets: 2 },
        ..KvSpec::new(4, 4096, 5)
    });
    assert_eq!(spec.kind.events(), Some(4 + 5 + 3));
    let want: Vec<Event> = [
        (0, true),
        (1, true),
        (2, true),
        (3, true),
        // get phase
        (0, true),
        (0, false),
        (1, false),
        (1, true),
        (2, false),
        (3, false),
        (2, true),
        (0, false),
    ]
    .iter()
    .map(|&(p, w)| access(0, p, w))
    .collect();
    assert_eq!(all(&spec), want);
}

fn key_counts(spec: KvSpec) -> Vec<u64> {
    let keys = spec.keys as usize;
    let mut c = vec![0u64; keys];
    for e in all(&kv(spec)).into_iter().skip(keys) {
        let Event::Access { index, .. } = e else {
            panic!()
        };
        c[index as usize] += 1; // 4096-byte values: page = key
    }
    c
}

#[test]
fn kv_gaussian_and_zipf_follow_memtier() {
    let n = 200_000u64;
    // G: around the middle key with stddev (keys - 1) / 6 by default.
    let c = key_counts(KvSpec {
        key_pattern: KeyPattern::Gaussian,
        ..KvSpec::new(1201, 4096, n)
    });
    let mean = c
        .iter()
        .enumerate()
        .map(|(k, &x)| (k + 1) as f64 * x as f64)
        .sum::<f64>()
        / n as f64;
    let var = c
        .iter()
        .enumerate()
        .map(|(k, &x)| ((k + 1) as f64 - mean).powi(2) * x as f64)
        .sum::<f64>()
        / n as f64;
    assert!((mean - 601.5).abs() < 2.0, "{mean}");
    // 200, less the tails beyond 3σ that memtier redraws: 0.9866 × 200 ≈ 197.3.
    assert!((var.sqrt() - 197.3).abs() < 2.5, "{}", var.sqrt());
    // A given median and deviation.
    let c = key_counts(KvSpec {
        key_pattern: KeyPattern::Gaussian,
        key_median: Some(100.0),
        key_stddev: Some(10.0),
        ..KvSpec::new(1201, 4096, n)
    });
    let within: u64 = c[89..110].iter().sum();
    assert!(within as f64 > 0.68 * n as f64, "{within}");
    // Z: key 1 hottest, count(1)/count(2) ≈ 2^θ, keys not scattered.
    let c = key_counts(KvSpec {
        key_pattern: KeyPattern::Zipf,
        theta: Some(1.0),
        ..KvSpec::new(1000, 4096, n)
    });
    assert_eq!((0..1000).max_by_key(|&k| c[k]), Some(0));
    let ratio = c[0] as f64 / c[1] as f64;
    assert!((1.85..2.15).contains(&ratio), "{ratio}");
    // R: uniform.
    let c = key_counts(KvSpec::new(100, 4096, n));
    assert!(c.iter().all(|&x| (1700..2300).contains(&x)), "{c:?}");
}

// ---- pgbench --------------------------------------------------------------------------

fn pgbench(p: PgbenchSpec) -> WorkloadSpec {
    WorkloadSpec::model(WorkloadKind::Pgbench(p))
}

#[test]
fn pgbench_sizing_per_scale() {
    let l = PgbenchSpec::new(1, 1000).layout();
    assert_eq!(l.accounts, 1640, "100,000 accounts at 61 per 8 KiB block");
    assert_eq!(l.index, 276, "metapage + 274 leaves + root (2208 kB)");
    assert_eq!((l.tellers, l.branches), (1, 1));
    assert_eq!(l.history, 7, "1000 rows at 157 per block");
    assert_eq!(l.depth, 2);
    let l = PgbenchSpec::new(383, 1).layout();
    let gib = (l.accounts + l.index) as f64 * 8192.0 / (1u64 << 30) as f64;
    assert!((5.55..5.65).contains(&gib), "{gib}");
    assert_eq!(
        l.depth, 4,
        "104,932 leaves, 369 and 2 internal pages, the root"
    );
    assert_eq!(pgbench(PgbenchSpec::new(1, 10)).kind.events(), None);
}

/// Setup order of a pgbench workload alone: VMA 0 (shared buffers), files accounts 0,
/// accounts_pkey 1, tellers 2, branches 3, history 4, wal 5.
#[test]
fn pgbench_first_transaction_is_the_tpcb_script() {
    let spec = pgbench(PgbenchSpec::new(1, 1));
    let ev = all(&spec);
    // Root of the index (1 metapage + 274 leaves, then the root), 8 KiB = 2 pages.
    let root = 275 * 2;
    let miss = |file, block: u32, out: &mut Vec<Event>, buf: &mut u32| {
        out.push(read(file, block * 2, 2));
        out.push(access(0, *buf * 2, true));
        out.push(access(0, *buf * 2 + 1, true));
        *buf += 1;
    };
    // Recover aid's blocks from the events: the leaf is the second read, the heap block
    // the third.
    let Event::FileRead { index: leaf_p, .. } = ev[3] else {
        panic!("{:?}", ev[3])
    };
    let Event::FileRead { index: heap_p, .. } = ev[6] else {
        panic!("{:?}", ev[6])
    };
    let (leaf, heap) = (leaf_p / 2, heap_p / 2);
    assert!((1..275).contains(&leaf));
    // Consistent: some aid lies in both the leaf's and the heap block's range.
    let (leaf_keys, heap_keys) = (
        (leaf as u64 - 1) * KEYS_PER_LEAF..leaf as u64 * KEYS_PER_LEAF,
        heap as u64 * TUPLES_PER_BLOCK..(heap as u64 + 1) * TUPLES_PER_BLOCK,
    );
    assert!(leaf_keys.start < heap_keys.end && heap_keys.start < leaf_keys.end);
    let mut want = Vec::new();
    let mut buf = 0;
    // UPDATE pgbench_accounts: root, leaf (reads), heap block (write) — all misses.
    miss(1, root / 2, &mut want, &mut buf);
    miss(1, leaf, &mut want, &mut buf);
    miss(0, heap, &mut want, &mut buf);
    // SELECT abalance: the same three blocks, now hits in buffers 0, 1, 2 (loads).
    for b in 0..3 {
        want.push(access(0, b * 2, false));
        want.push(access(0, b * 2 + 1, false));
    }
    // UPDATE pgbench_tellers and pgbench_branches: one block each (scale 1).
    miss(2, 0, &mut want, &mut buf);
    miss(3, 0, &mut want, &mut buf);
    // INSERT INTO pgbench_history: a new block, no read.
    want.push(access(0, buf * 2, true));
    want.push(access(0, buf * 2 + 1, true));
    // END: the commit's WAL.
    want.push(write(5, 0, 2));
    assert_eq!(ev, want);
}

#[test]
fn pgbench_transaction_mix_without_eviction() {
    // Scale 1 fits in 128M of buffers: after the first touch, only hits.
    let tx = 2000u64;
    let ev = all(&pgbench(PgbenchSpec::new(1, tx)));
    let mut by_file: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    let mut accesses = 0;
    for e in &ev {
        match *e {
            Event::FileRead { file, .. } => by_file.entry(file).or_default().0 += 1,
            Event::FileWrite { file, pages, .. } => {
                assert_eq!(pages, 2);
                by_file.entry(file).or_default().1 += 1
            }
            Event::Access { .. } => accesses += 1,
            Event::Think { .. }
            | Event::Discard { .. }
            | Event::Collapse { .. }
            | Event::ThpAdvice { .. }
            | Event::Remap { .. }
            | Event::Fork { .. }
            | Event::FileSync { .. }
            | Event::FdRead { .. }
            | Event::FdClose { .. } => panic!(),
        }
    }
    // Per transaction: 2 index descents of 2 levels, the account twice, a teller, a
    // branch, a history block: 9 block accesses of 2 pages each.
    assert_eq!(accesses, tx * 9 * 2);
    assert_eq!(by_file[&5], (0, tx), "one WAL write per commit");
    assert!(!by_file.contains_key(&4), "history grows without reads");
    assert_eq!(by_file[&2], (1, 0), "one teller block, read once");
    assert_eq!(by_file[&3], (1, 0), "one branch block, read once");
    // The account heap blocks 2,000 transactions' random `aid`s first touch
    // (seed 1's draw).
    assert_eq!(by_file[&0].0, 1163, "account blocks read on first use");
    assert_eq!(by_file[&0].1, 0, "no evictions, so no write-back");
}

#[test]
fn pgbench_clock_sweep_evicts_and_writes_back_dirty_buffers() {
    // 16 buffers (the minimum) for scale 1: constant eviction.
    let spec = pgbench(PgbenchSpec {
        shared_buffers: 128 << 10,
        ..PgbenchSpec::new(1, 3000)
    });
    let ev = all(&spec);
    let mut writes_back = 0;
    for (i, e) in ev.iter().enumerate() {
        match *e {
            Event::Access { vma, index, .. } => {
                assert_eq!(vma, 0);
                assert!(index < 32, "16 buffers of 2 pages");
            }
            Event::FileWrite { file, .. } if file != 5 => {
                // A dirty victim is written back right before the block replacing it
                // is read (or, for a new history block, before its stores).
                writes_back += 1;
                assert!(
                    matches!(ev[i + 1], Event::FileRead { .. } | Event::Access { .. }),
                    "{:?}",
                    ev[i + 1]
                );
            }
            _ => {}
        }
    }
    // Seed 1's count: about one dirty victim a transaction.
    assert_eq!(writes_back, 3002);
    assert_eq!(ev.len(), 65928);
    // Deterministic, and another seed draws other accounts: the first three
    // events are the same, the fourth, the first transaction's read of the
    // `aid`'s index leaf (file 1, `accounts_pkey`), another block; and the run
    // has another length.
    assert_eq!(ev, events_of(&spec, workload_seed(1, 0)).0);
    let other = events_of(&spec, workload_seed(2, 0)).0;
    assert_eq!(other.len(), 65923);
    assert_eq!(ev[..3], other[..3]);
    assert_eq!((ev[3], other[3]), (read(1, 436, 2), read(1, 170, 2)));
}

// ---- dd and eater ---------------------------------------------------------------------

#[test]
fn dd_streams_multi_page_blocks() {
    let dd = |d: DdSpec| WorkloadSpec::model(WorkloadKind::Dd(d));
    assert_eq!(
        all(&dd(DdSpec::new(1 << 20, 3))),
        vec![write(0, 0, 256), write(0, 256, 256), write(0, 512, 256)]
    );
    assert_eq!(
        all(&dd(DdSpec {
            read: true,
            ..DdSpec::new(8192, 2)
        })),
        vec![read(0, 0, 2), read(0, 2, 2)]
    );
    // dd bs=1024: four writes per page.
    assert_eq!(
        all(&dd(DdSpec::new(1024, 6))),
        [0, 0, 0, 0, 1, 1].map(|p| write(0, p, 1))
    );
    let spec = dd(DdSpec::new(1024, 6));
    assert_eq!(spec.kind.pages(), 2);
    assert_eq!(spec.effective_advice(), Advice::Normal);
}

fn eater(e: EaterSpec) -> WorkloadSpec {
    WorkloadSpec::model(WorkloadKind::Eater(e))
}

#[test]
fn eater_touches_then_retouches() {
    let ev = all(&eater(EaterSpec::new(4 * 4096)));
    let want: Vec<Event> = [0, 1, 2, 3, 0, 1, 2, 3]
        .iter()
        .map(|&p| access(0, p, true))
        .collect();
    assert_eq!(ev, want);
    // Paced at 2 pages per ms: a 1 ms nap between chunks of 2 pages.
    let spec = eater(EaterSpec {
        rate: Some(2.0),
        passes: 0,
        ..EaterSpec::new(5 * 4096)
    });
    let nap = Event::Think { ns: 1_000_000 };
    assert_eq!(
        all(&spec),
        vec![
            access(0, 0, true),
            access(0, 1, true),
            nap,
            access(0, 2, true),
            access(0, 3, true),
            nap,
            access(0, 4, true),
        ]
    );
    assert_eq!(spec.kind.events(), Some(7));
    // Below a page per ms: one page, then a 2 ms nap.
    let spec = eater(EaterSpec {
        rate: Some(0.5),
        passes: 0,
        ..EaterSpec::new(2 * 4096)
    });
    assert_eq!(
        all(&spec),
        vec![
            access(0, 0, true),
            Event::Think { ns: 2_000_000 },
            access(0, 1, true)
        ]
    );
    // Random passes: every page once per pass, in new orders; write_ratio 0: loads.
    let mut spec = eater(EaterSpec {
        passes: 3,
        pattern: EaterPattern::Random,
        ..EaterSpec::new(64 * 4096)
    });
    spec.write_ratio = Some(0.0);
    let ev = all(&spec);
    assert_eq!(ev.len(), 64 * 4);
    let passes: Vec<Vec<u32>> = ev[64..]
        .chunks(64)
        .map(|c| {
            c.iter()
                .map(|e| match *e {
                    Event::Access {
                        index,
                        write: false,
                        ..
                    } => index,
                    other => panic!("{other:?}"),
                })
                .collect()
        })
        .collect();
    for p in &passes {
        let mut s = p.clone();
        s.sort_unstable();
        assert_eq!(s, (0..64).collect::<Vec<_>>());
    }
    // Seed 1's orders, each pass a new shuffle (none the identity).
    assert_eq!(passes, EATER_RANDOM_PASSES);
}

/// The three shuffled passes of `eater_touches_then_retouches` (64 pages, seed 1).
const EATER_RANDOM_PASSES: [[u32; 64]; 3] = [
    [
        50, 46, 2, 10, 1, 16, 52, 56, 59, 37, 48, 26, 63, 25, 27, 21, 36, 11, 45, 38, 32, 5, 6, 8,
        47, 51, 31, 33, 24, 49, 41, 60, 40, 53, 30, 17, 44, 55, 15, 7, 28, 54, 23, 39, 43, 62, 61,
        14, 0, 29, 58, 35, 4, 22, 3, 18, 20, 9, 57, 12, 13, 42, 19, 34,
    ],
    [
        41, 61, 55, 48, 27, 32, 47, 15, 44, 45, 33, 60, 18, 37, 57, 10, 53, 11, 8, 35, 40, 58, 38,
        9, 42, 6, 5, 51, 50, 54, 63, 19, 46, 4, 12, 23, 25, 39, 49, 0, 34, 26, 31, 20, 21, 43, 59,
        13, 30, 16, 7, 62, 22, 3, 24, 56, 29, 28, 2, 52, 1, 17, 14, 36,
    ],
    [
        56, 3, 9, 59, 17, 45, 25, 39, 53, 38, 40, 54, 28, 32, 51, 61, 42, 57, 55, 8, 41, 0, 13, 31,
        48, 52, 58, 36, 1, 37, 14, 18, 24, 33, 47, 49, 27, 11, 30, 5, 63, 34, 44, 22, 60, 23, 19,
        6, 35, 62, 2, 46, 15, 4, 43, 21, 16, 20, 26, 29, 12, 7, 10, 50,
    ],
];

/// `collapse = true`: one MADV_COLLAPSE of the whole mapping right after the first
/// touch, then the re-touch passes; run, a 4 MiB eater's two 2 MiB ranges collapse
/// (thp_collapse_alloc 2, one successful call), and the field is printed only when set.
#[test]
fn eater_collapses_its_mapping_after_the_first_touch() {
    let spec = eater(EaterSpec {
        collapse: true,
        ..EaterSpec::new(4 * 4096)
    });
    let mut want: Vec<Event> = (0..4).map(|p| access(0, p, true)).collect();
    want.push(Event::Collapse {
        vma: 0,
        index: 0,
        pages: 4,
    });
    want.extend((0..4).map(|p| access(0, p, true)));
    assert_eq!(all(&spec), want);
    assert_eq!(spec.kind.events(), Some(9));

    let text = "seed = 1\n[machine]\nmemory = \"64M\"\n[[workload]]\nkind = \"eater\"\n\
                size = \"4M\"\ncollapse = true\n";
    let s = Scenario::from_toml_str(text, "eater.toml").unwrap();
    assert!(s.to_toml_string().contains("collapse = true"));
    let plain = Scenario::from_toml_str(&text.replace("collapse = true\n", ""), "e.toml").unwrap();
    assert!(!plain.to_toml_string().contains("collapse"));
    let r = mmsim_workloads::run_scenario(&s, &mut Default::default()).unwrap();
    assert_eq!(r.result.vmstat.thp_collapse_alloc, 2);
    let k = r
        .result
        .khugepaged
        .as_ref()
        .expect("MADV_COLLAPSE is reported");
    assert_eq!(
        (k.madvise_collapse_calls, k.madvise_collapse_failed),
        (1, 0)
    );
    assert_eq!(k.madvise_collapse_thps, 2);
    let r = mmsim_workloads::run_scenario(&plain, &mut Default::default()).unwrap();
    assert_eq!(r.result.vmstat.thp_collapse_alloc, 0);
    assert!(r.result.khugepaged.is_none());
}

// ---- start times ----------------------------------------------------------------------

fn uniform(pages: u64, accesses: u64) -> WorkloadSpec {
    WorkloadSpec::new(Target::Anon, WorkloadKind::Uniform { pages, accesses })
}

#[test]
fn a_lone_workload_waits_for_its_start() {
    let mut w = uniform(100, 50);
    w.start = 1_000_000;
    let s = Scenario::new("start", machine(), vec![w]);
    let (r, ev) = run_recorded(&s);
    assert_eq!(ev[0], Event::Think { ns: 1_000_000 }, "idle until 1 ms");
    assert_eq!(ev.len(), 51);
    assert_eq!(
        r.workloads[0].events, 50,
        "the idle wait is no workload's event"
    );
    assert_eq!(r.result.access.accesses, 50);
    assert!(r.result.runtime_s >= 1e-3);
}

#[test]
fn a_late_workload_issues_nothing_before_the_clock_reaches_its_start() {
    // "early": file reads from 0 on; "late": anon accesses from 1 ms on.
    let early = WorkloadSpec {
        name: Some("early".into()),
        ..WorkloadSpec::new(
            Target::File,
            WorkloadKind::Uniform {
                pages: 20_000,
                accesses: 20_000,
            },
        )
    };
    let late = WorkloadSpec {
        name: Some("late".into()),
        start: 1_000_000,
        ..uniform(1000, 5000)
    };
    let s = Scenario::new("start", machine(), vec![early, late]);
    let (r, ev) = run_recorded(&s);
    assert_eq!(r.workloads[1].events, 5000);
    assert!(ev.iter().all(|e| !matches!(e, Event::Think { .. })));
    // Replay the recorded stream on an identical machine and watch the clock.
    let mut sim = Sim::new(machine()).unwrap();
    for (i, w) in s.workloads.iter().enumerate() {
        Generator::build(&mut sim, w, &w.display_name(i), 1, "replay", None).unwrap();
    }
    let mut clock_before = Vec::with_capacity(ev.len());
    for e in &ev {
        clock_before.push(sim.now());
        sim.step(e);
    }
    let is_late = |e: &Event| matches!(e, Event::Access { .. });
    let first = ev.iter().position(is_late).unwrap();
    for (i, e) in ev.iter().enumerate() {
        if is_late(e) {
            assert!(
                clock_before[i] >= 1_000_000,
                "event {i} at {}",
                clock_before[i]
            );
        }
    }
    // It joined the first round that began at or after 1 ms: that round's first event
    // (early's, just before) began at ≥ 1 ms, the round before at < 1 ms.
    assert!(first >= 2);
    assert!(clock_before[first - 1] >= 1_000_000);
    assert!(clock_before[first - 2] < 1_000_000);
    // From then on, strict alternation while both run.
    assert!(ev[first..first + 20]
        .iter()
        .enumerate()
        .all(|(k, e)| is_late(e) == (k % 2 == 0)));
    // Deterministic.
    assert_eq!(run_recorded(&s).1, ev);
}

#[test]
fn start_is_absolute_time_across_phases() {
    // Phase 1's workload has a start the clock passed during phase 0: no wait.
    let a = uniform(100, 10_000);
    let b = WorkloadSpec {
        phase: 1,
        start: 1_000,
        ..uniform(100, 10)
    };
    let (_, ev) = run_recorded(&Scenario::new("phases", machine(), vec![a, b]));
    assert_eq!(ev.len(), 10_010);
    assert!(ev.iter().all(|e| !matches!(e, Event::Think { .. })));
}

// ---- whole runs, determinism, expected events ------------------------------------------

fn all_models() -> Vec<WorkloadSpec> {
    let named = |name: &str, mut w: WorkloadSpec| {
        w.name = Some(name.into());
        w
    };
    vec![
        named(
            "fio",
            fio(FioSpec {
                numjobs: 3,
                ios: Some(2000),
                rwmixread: Some(80),
                ..FioSpec::new(FioRw::RandRw, 8 << 20)
            }),
        ),
        named(
            "kv",
            kv(KvSpec {
                key_pattern: KeyPattern::Zipf,
                theta: Some(0.9),
                ratio: KvRatio { sets: 1, gets: 9 },
                ..KvSpec::new(20_000, 2000, 30_000)
            }),
        ),
        named(
            "pg",
            pgbench(PgbenchSpec {
                shared_buffers: 8 << 20,
                ..PgbenchSpec::new(2, 3000)
            }),
        ),
        named(
            "dd",
            WorkloadSpec::model(WorkloadKind::Dd(DdSpec::new(65536, 2000))),
        ),
        named(
            "eater",
            WorkloadSpec {
                start: 2_000_000,
                ..eater(EaterSpec {
                    rate: Some(50.0),
                    ..EaterSpec::new(16 << 20)
                })
            },
        ),
    ]
}

#[test]
fn model_runs_are_deterministic_and_count_their_events() {
    let mut s = Scenario::new("models", machine(), all_models());
    s.validate().unwrap();
    assert_eq!(
        s.expected_events(),
        None,
        "pgbench's count is not known ahead"
    );
    let (r, ev) = run_recorded(&s);
    let (r2, ev2) = run_recorded(&s);
    assert_eq!(ev, ev2);
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        serde_json::to_string(&r2).unwrap()
    );
    for (w, rep) in s.workloads.iter().zip(&r.workloads) {
        if let Some(n) = w.kind.events() {
            assert_eq!(rep.events, n, "{}", rep.name);
        }
        assert_eq!(rep.kind, w.kind.name());
    }
    assert_eq!(r.workloads[2].target, "anon+file");
    // Events per workload, seed 1 (pgbench, third, counts its run's events).
    let per_workload =
        |r: &ScenarioResult| r.workloads.iter().map(|w| w.events).collect::<Vec<_>>();
    assert_eq!(per_workload(&r), [6000, 53334, 74368, 2000, 8273]);
    s.seed = 2;
    // Another seed, other events: fio's first IO already differs, and pgbench's
    // run takes another count.
    let (r2, ev2) = run_recorded(&s);
    assert_eq!(per_workload(&r2), [6000, 53334, 74473, 2000, 8273]);
    assert_eq!(ev2.len(), 144080);
    assert_eq!(ev.len(), 143975);
    assert_eq!(
        (&ev[0], &ev2[0]),
        (
            &Event::FileWrite {
                file: 0,
                index: 1176,
                pages: 1
            },
            &Event::FileRead {
                file: 0,
                index: 98,
                pages: 1
            }
        )
    );
    // Without pgbench the total is known and matches.
    s.workloads.remove(2);
    let want = s.expected_events().unwrap();
    let r = run(&s);
    assert_eq!(r.workloads.iter().map(|w| w.events).sum::<u64>(), want);
}

#[test]
fn model_scenarios_round_trip_through_toml() {
    let mut s = Scenario::new("models", machine(), all_models());
    if let WorkloadKind::Fio(f) = &mut s.workloads[0].kind {
        f.random_distribution = FioDistribution::Random;
        f.io_size = Some(3 << 20);
        f.ios = None;
    }
    s.workloads[1].advice = Some(Advice::Normal);
    let text = s.to_toml_string();
    let back =
        Scenario::from_toml_str(&text, "models.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.workloads, s.workloads, "{text}");
    assert!(text.contains("start = \"2ms\""), "{text}");
    assert!(text.contains("size = \"16m\""), "{text}");
    assert!(!text.contains("target"), "models take no target:\n{text}");
}

#[test]
fn embedded_model_scenarios_run() {
    for name in ["fio-randread", "memcached", "pgbench", "dd-vs-eater"] {
        let s = embedded_scenario(name).unwrap().unwrap();
        let t = std::time::Instant::now();
        let r = run(&s);
        eprintln!("{name}: {:.2} s", t.elapsed().as_secs_f64());
        let accesses = match name {
            "fio-randread" => 4_320_000,
            "memcached" => 5_153_600,
            "pgbench" => 42_953_741,
            _ => 1_417_216,
        };
        assert_eq!(r.result.access.accesses, accesses, "{name}");
        if let Some(n) = s.expected_events() {
            assert_eq!(
                r.workloads.iter().map(|w| w.events).sum::<u64>(),
                n,
                "{name}"
            );
        }
        match name {
            "fio-randread" => {
                assert_eq!(r.workloads[0].pages, 72 * 5120);
                assert_eq!(r.result.vmstat.workingset_refault_file, 2_443_173);
            }
            "memcached" => assert_eq!(r.result.vmstat.pswpin, 774_455, "swaps in"),
            "pgbench" => assert_eq!(r.result.vmstat.pswpout, 288_256, "the cost model swaps"),
            "dd-vs-eater" => {
                assert_eq!(r.result.runtime_s, 6.53276245);
                assert_eq!(r.workloads[1].events, s.workloads[1].kind.events().unwrap());
            }
            _ => unreachable!(),
        }
    }
}

#[test]
fn documented_examples_parse() {
    // The TOML examples of the scenario format and of each model's README section.
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut found = 0;
    for file in [
        "scenario/mod.rs",
        "models/fio.rs",
        "models/kv.rs",
        "models/pgbench.rs",
        "models/dd.rs",
        "models/eater.rs",
        "models/kbuild.rs",
        "cgroups/mod.rs",
    ] {
        let text = std::fs::read_to_string(format!("{src}/{file}")).unwrap();
        let mut block: Option<String> = None;
        for line in text.lines() {
            let Some(doc) = line.strip_prefix("//!") else {
                continue;
            };
            let doc = doc.strip_prefix(' ').unwrap_or(doc);
            match (&mut block, doc) {
                (None, "```toml") => block = Some(String::new()),
                (Some(b), "```") => {
                    let s = Scenario::from_toml_str(b, file)
                        .unwrap_or_else(|e| panic!("{file}: {e}\n{b}"));
                    assert!(!s.workloads.is_empty());
                    found += 1;
                    block = None;
                }
                (Some(b), l) => {
                    b.push_str(l);
                    b.push('\n');
                }
                _ => {}
            }
        }
    }
    assert_eq!(found, 8);
}

// ---- errors -----------------------------------------------------------------------------

/// (field, message) of the error `text` gives.
fn err(text: &str) -> (String, String) {
    match Scenario::from_toml_str(text, "m.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => (e.field().unwrap_or("").to_string(), e.to_string()),
    }
}

const FIO: &str = "[[workload]]\nkind = \"fio\"\nrw = \"randread\"\nsize = \"1m\"\n";
const KV: &str = "[[workload]]\nkind = \"kv\"\nkeys = 100\ngets = 10\n";
const PG: &str = "[[workload]]\nkind = \"pgbench\"\nscale = 1\ntransactions = 10\n";
const DD: &str = "[[workload]]\nkind = \"dd\"\ncount = 10\n";
const EATER: &str = "[[workload]]\nkind = \"eater\"\nsize = \"1m\"\n";

#[test]
fn model_bases_are_valid() {
    for base in [FIO, KV, PG, DD, EATER] {
        let s = Scenario::from_toml_str(base, "m.toml").unwrap_or_else(|e| panic!("{e}"));
        assert!(s.workloads[0].kind.is_model());
    }
    let s = Scenario::from_toml_str(DD, "m.toml").unwrap();
    assert_eq!(s.workloads[0].kind, WorkloadKind::Dd(DdSpec::new(512, 10)));
    let s = Scenario::from_toml_str(KV, "m.toml").unwrap();
    let WorkloadKind::Kv(k) = &s.workloads[0].kind else {
        panic!()
    };
    assert_eq!((k.value_size, k.ratio), (32, KvRatio { sets: 0, gets: 1 }));
    let s = Scenario::from_toml_str(PG, "m.toml").unwrap();
    let WorkloadKind::Pgbench(p) = &s.workloads[0].kind else {
        panic!()
    };
    assert_eq!((p.shared_buffers, p.wal_pages), (128 << 20, 2));
}

#[test]
fn every_model_error_names_the_file_the_field_and_the_range() {
    // (base, extra line, field, text in the message)
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str, &str)] = &[
        (FIO, "bs = 0", "workload[0].bs", "multiples of 4 KiB"),
        (FIO, "bs = \"0k\"", "workload[0].bs", "zero size"),
        (FIO, "bs = 6144", "workload[0].bs", "4k..=64m"),
        (FIO, "bs = \"128m\"", "workload[0].bs", "4k..=64m"),
        (FIO, "bs = -4096", "workload[0].bs", "negative"),
        (FIO, "numjobs = 0", "workload[0].numjobs", "[1, 4096]"),
        (FIO, "numjobs = 4097", "workload[0].numjobs", "[1, 4096]"),
        (FIO, "nrfiles = 0", "workload[0].nrfiles", "[1, 1024]"),
        (FIO, "nrfiles = 1024\nnumjobs = 65", "workload[0].nrfiles", "65536"),
        (FIO, "bs = \"2m\"", "workload[0].size", "at least bs × nrfiles"),
        (FIO, "ios = 0", "workload[0].ios", "[1, 2^40]"),
        (FIO, "ios = 5\nio_size = \"1m\"", "workload[0].io_size", "not both"),
        (FIO, "io_size = 100", "workload[0].io_size", "less than one block"),
        (FIO, "rwmixread = 70", "workload[0].rwmixread", "\"randrw\" only"),
        (FIO, "random_distribution = \"zipf:0\"", "workload[0].random_distribution", "(0, 5]"),
        (FIO, "random_distribution = \"pareto:0.5\"", "workload[0].random_distribution", "allowed: random, zipf"),
        (FIO, "target = \"file\"", "workload[0].target", "does not apply to kind `fio`"),
        (FIO, "write_ratio = 0.5", "workload[0].write_ratio", "use rw"),
        (FIO, "passes = 2", "workload[0].passes", "does not apply to kind `fio`"),
        (KV, "value_size = 0", "workload[0].value_size", "[1, 1048576]"),
        (KV, "value_size = \"2m\"", "workload[0].value_size", "[1, 1048576]"),
        (KV, "key_pattern = \"X\"", "workload[0].key_pattern", "allowed: R"),
        (KV, "key_stddev = 5.0", "workload[0].key_stddev", "key_pattern = \"G\" only"),
        (KV, "key_pattern = \"G\"\nkey_stddev = 0.0", "workload[0].key_stddev", "greater than 0"),
        (KV, "key_pattern = \"G\"\nkey_median = 100.0", "workload[0].key_median", "(1, 100)"),
        (KV, "key_pattern = \"Z\"\ntheta = 5.0", "workload[0].theta", "(0, 5)"),
        (KV, "ratio = \"1:0\"", "workload[0].ratio", "GETS ≥ 1"),
        (KV, "ratio = \"1-10\"", "workload[0].ratio", "SETS:GETS"),
        (KV, "ratio = \"1:1001\"", "workload[0].ratio", "1..=1000"),
        (KV, "write_ratio = 0.5", "workload[0].write_ratio", "use ratio"),
        (PG, "shared_buffers = \"64k\"", "workload[0].shared_buffers", "16 (128k)"),
        (PG, "wal_pages = 0", "workload[0].wal_pages", "[1, 64]"),
        (PG, "max_wal_size = \"4k\"", "workload[0].max_wal_size", "[1m, 1t]"),
        (PG, "target = \"anon\"", "workload[0].target", "does not apply to kind `pgbench`"),
        (DD, "bs = 3000", "workload[0].bs", "512, 1024, 2048"),
        (DD, "bs = 0", "workload[0].bs", "512, 1024, 2048"),
        (DD, "read = 1", "workload[0].read", "invalid type"),
        (EATER, "rate = 0.0", "workload[0].rate", "(0, 1e9]"),
        (EATER, "rate = -1.0", "workload[0].rate", "(0, 1e9]"),
        (EATER, "passes = 1099511627776", "workload[0].passes", "2^40"),
        (EATER, "pattern = \"zigzag\"", "workload[0].pattern", "sequential, random"),
        (EATER, "start = \"-1s\"", "workload[0].start", "negative"),
        (EATER, "start = \"soon\"", "workload[0].start", "not a time"),
        (EATER, "start = \"2 parsecs\"", "workload[0].start", "unknown unit"),
        (EATER, "start = 5", "workload[0].start", "no unit"),
        (EATER, "start = \"1m\"", "workload[0].start", "ambiguous"),
        (EATER, "start = \"2000000s\"", "workload[0].start", "[0s, 1000000s]"),
    ];
    for (base, extra, field, text) in cases {
        let (f, msg) = err(&format!("{base}{extra}\n"));
        assert_eq!(&f, field, "{extra}: {msg}");
        assert!(msg.starts_with("m.toml: "), "{msg}");
        assert!(msg.contains(text), "{extra}: {msg}");
    }
    // (base, replaced text, replacement, field, text in the message)
    #[rustfmt::skip]
    let replaced: &[(&str, &str, &str, &str, &str)] = &[
        (FIO, "randread", "randrd", "workload[0].rw", "allowed: read, write, randread"),
        (FIO, "\"1m\"", "\"16t\"", "workload[0].size", "2^31-page (8 TiB) limit"),
        (KV, "keys = 100", "keys = 0", "workload[0].keys", "[1, 2^31]"),
        (KV, "gets = 10", "gets = 2000000000000", "workload[0].gets", "[0, 2^40]"),
        (PG, "scale = 1", "scale = 0", "workload[0].scale", "[1, 19999]"),
        (PG, "scale = 1", "scale = 20000", "workload[0].scale", "[1, 19999]"),
        (PG, "transactions = 10", "transactions = 0", "workload[0].transactions", "[1, 10000000000]"),
        (DD, "count = 10", "count = 0", "workload[0].count", "[1, 2^40]"),
        (EATER, "\"1m\"", "\"1k\"", "workload[0].size", "[4k, 8t]"),
    ];
    for (base, from, to, field, text) in replaced {
        let (f, msg) = err(&base.replace(from, to));
        assert_eq!(&f, field, "{to}: {msg}");
        assert!(msg.contains(text), "{to}: {msg}");
    }
    // Parse errors also give the line.
    let (_, msg) = err(&format!("{EATER}start = \"-1s\"\n"));
    assert!(msg.contains("line 4"), "{msg}");
    // A kv whose items do not fit in 2^31 pages.
    let (f, msg) = err(&KV.replace("keys = 100", "keys = 2147483648\nvalue_size = 8192"));
    assert_eq!(f, "workload[0].keys", "{msg}");
    // The access-pattern kinds still need a target.
    let (f, msg) = err("[[workload]]\nkind = \"touch\"\npages = 10\n");
    assert_eq!(f, "workload[0]", "{msg}");
    assert!(msg.contains("needs the field `target`"), "{msg}");
    // Programmatic specs are checked too: a model with another target, a model through
    // the single-region constructor.
    let mut w = fio(FioSpec::new(FioRw::Read, 1 << 20));
    w.target = Target::Mmap;
    let e = Scenario::new("x", machine(), vec![w.clone()])
        .validate()
        .unwrap_err();
    assert_eq!(e.field(), Some("workload[0].target"), "{e}");
    let e = Generator::new(&w, 1, Sink::File(0), "test", None).unwrap_err();
    assert!(e.to_string().contains("Generator::build"), "{e}");
}
