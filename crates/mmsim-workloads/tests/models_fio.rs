//! The `fio` model: exact event sequences of tiny job files (random and sequential
//! reads, several jobs and files, the random map, rwmixread, zipf) and its
//! `fadvise_hint` (moved out of `models.rs`, which holds the other models).

mod common;

use common::{all, fio, machine, read, run, write};
use mmsim_core::{Advice, Event};
use mmsim_workloads::models::fio::{FioDistribution, FioRw, FioSpec};
use mmsim_workloads::Scenario;

#[test]
fn fio_randread_two_jobs_bs_8k() {
    // 2 jobs, each its own 64 KiB file = 8 blocks of 8 KiB; 16 reads per job (two
    // passes of the random map).
    let spec = fio(FioSpec {
        bs: 8192,
        numjobs: 2,
        ios: Some(16),
        ..FioSpec::new(FioRw::RandRead, 64 << 10)
    });
    assert_eq!(spec.kind.events(), Some(32));
    assert_eq!(spec.effective_advice(), Advice::Random, "fadvise_hint=1");
    let ev = all(&spec);
    assert_eq!(ev.len(), 32);
    // The jobs alternate, one IO each: job 0 on file 0, job 1 on file 1; every IO is
    // one 8 KiB (2-page) read at a block-aligned offset inside the 16-page file.
    let mut per_job: [Vec<u32>; 2] = Default::default();
    for (i, e) in ev.iter().enumerate() {
        let Event::FileRead { file, index, pages } = *e else {
            panic!("{e:?}")
        };
        assert_eq!(file as usize, i % 2, "event {i}");
        assert_eq!(pages, 2);
        assert_eq!(index % 2, 0);
        assert!(index < 16);
        per_job[i % 2].push(index / 2);
    }
    // fio's random map: each block exactly once per pass.
    for blocks in &per_job {
        for pass in blocks.chunks(8) {
            let mut p = pass.to_vec();
            p.sort_unstable();
            assert_eq!(p, (0..8).collect::<Vec<_>>());
        }
    }
    // The passes are shuffled differently, and the two jobs draw different orders
    // (seed 1's block orders, as the run draws them).
    assert_eq!(
        per_job[0],
        [2, 3, 5, 1, 6, 7, 4, 0, 6, 4, 0, 5, 3, 1, 2, 7],
        "job 0"
    );
    assert_eq!(
        per_job[1],
        [0, 3, 7, 1, 6, 4, 5, 2, 3, 0, 6, 2, 4, 7, 5, 1],
        "job 1"
    );
    // Pinned: the first events of seed 1 (a change here changes every fio result).
    assert_eq!(
        &ev[..6],
        &[
            read(0, PIN_FIO[0], 2),
            read(1, PIN_FIO[1], 2),
            read(0, PIN_FIO[2], 2),
            read(1, PIN_FIO[3], 2),
            read(0, PIN_FIO[4], 2),
            read(1, PIN_FIO[5], 2),
        ]
    );
}

/// The first six page offsets of `fio_randread_two_jobs_bs_8k` with seed 1.
const PIN_FIO: [u32; 6] = [4, 0, 6, 6, 10, 14];

#[test]
fn fio_sequential_read_wraps_and_interleaves_jobs() {
    // 2 jobs, 32 KiB files (4 blocks of 8 KiB), io_size 48 KiB: 6 reads each, wrapping.
    let spec = fio(FioSpec {
        bs: 8192,
        numjobs: 2,
        io_size: Some(48 << 10),
        ..FioSpec::new(FioRw::Read, 32 << 10)
    });
    assert_eq!(spec.effective_advice(), Advice::Sequential);
    let mut want = Vec::new();
    for b in [0, 2, 4, 6, 0, 2] {
        want.push(read(0, b, 2));
        want.push(read(1, b, 2));
    }
    assert_eq!(all(&spec), want);
}

#[test]
fn fio_nrfiles_round_robin_and_shared_files() {
    // One job, two files of 16 KiB (2 blocks of 8 KiB): the job turns over its files.
    let spec = fio(FioSpec {
        bs: 8192,
        nrfiles: 2,
        ..FioSpec::new(FioRw::Write, 32 << 10)
    });
    assert_eq!(
        all(&spec),
        vec![
            write(0, 0, 2),
            write(1, 0, 2),
            write(0, 2, 2),
            write(1, 2, 2)
        ]
    );
    // Three jobs sharing one file: every IO on file 0, each job covering it per pass.
    let spec = fio(FioSpec {
        numjobs: 3,
        shared_file: true,
        ..FioSpec::new(FioRw::RandWrite, 16 << 10)
    });
    let ev = all(&spec);
    assert_eq!(ev.len(), 12);
    for job in 0..3 {
        let mut pages: Vec<u32> = ev
            .iter()
            .skip(job)
            .step_by(3)
            .map(|e| match *e {
                Event::FileWrite {
                    file: 0,
                    index,
                    pages: 1,
                } => index,
                other => panic!("{other:?}"),
            })
            .collect();
        pages.sort_unstable();
        assert_eq!(pages, [0, 1, 2, 3]);
    }
}

#[test]
fn fio_random_map_and_norandommap() {
    let base = FioSpec {
        ios: Some(3000),
        ..FioSpec::new(FioRw::RandRead, 1000 * 4096)
    };
    let counts = |spec: FioSpec| {
        let mut c = vec![0u32; 1000];
        for e in all(&fio(spec)) {
            let Event::FileRead { index, .. } = e else {
                panic!()
            };
            c[index as usize] += 1;
        }
        c
    };
    assert!(counts(base.clone()).iter().all(|&n| n == 3), "3 passes");
    let free = counts(FioSpec {
        norandommap: true,
        ..base
    });
    assert_eq!(free.iter().sum::<u32>(), 3000);
    assert!(free.contains(&0), "independent draws leave blocks out");
    assert!(free.iter().any(|&n| n > 3));
}

#[test]
fn fio_rwmixread_and_zipf() {
    let mix = |pct: Option<u32>| {
        let spec = fio(FioSpec {
            ios: Some(100_000),
            rwmixread: pct,
            ..FioSpec::new(FioRw::RandRw, 64 << 20)
        });
        let ev = all(&spec);
        ev.iter()
            .filter(|e| matches!(e, Event::FileRead { .. }))
            .count() as f64
            / ev.len() as f64
    };
    let r70 = mix(Some(70));
    assert!((0.69..0.71).contains(&r70), "{r70}");
    let r50 = mix(None);
    assert!((0.49..0.51).contains(&r50), "{r50}");
    assert_eq!(mix(Some(100)), 1.0);
    assert_eq!(mix(Some(0)), 0.0);

    let spec = fio(FioSpec {
        ios: Some(100_000),
        random_distribution: FioDistribution::Zipf(1.2),
        ..FioSpec::new(FioRw::RandRead, 10_000 * 4096)
    });
    let mut c = vec![0u64; 10_000];
    for e in all(&spec) {
        let Event::FileRead { index, .. } = e else {
            panic!()
        };
        c[index as usize] += 1;
    }
    c.sort_unstable_by(|a, b| b.cmp(a));
    let top: u64 = c[..100].iter().sum();
    assert!(top > 60_000, "top 1% of blocks got {top} of 100000");
}

#[test]
fn fio_fadvise_hint_steers_readahead() {
    let scenario = |rw, advice| {
        let mut w = fio(FioSpec {
            ios: Some(4096),
            ..FioSpec::new(rw, 16 << 20)
        });
        w.advice = advice;
        Scenario::new("fio", machine(), vec![w])
    };
    // FADV_RANDOM: each miss reads exactly its page (pgpgin counts KiB).
    let r = run(&scenario(FioRw::RandRead, None));
    assert_eq!(r.result.vmstat.pgpgin, 4 * r.result.access.misses);
    // FADV_SEQUENTIAL on a sequential reader: readahead brings pages before they are
    // read, so few reads miss.
    let r = run(&scenario(FioRw::Read, None));
    assert!(
        r.result.access.misses * 20 < 4096,
        "{}",
        r.result.access.misses
    );
    // An explicit advice overrides fio's hint.
    let r = run(&scenario(FioRw::Read, Some(Advice::Random)));
    assert_eq!(r.result.access.misses, 4096);
}
