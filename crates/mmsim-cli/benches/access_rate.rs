//! Criterion benchmark of the simulator's access rate: 1 M zipf(0.9) accesses (scattered)
//! over 100 k file pages, memory.max = 10 % of them, for the `lru` and `cost` policies.
//! Each iteration builds a fresh machine and replays the pre-generated events.
//! `zipf_generate` times the event generator alone with each zipf rank sampler.
//!
//! `cargo bench -p mmsim-cli --bench access_rate`
// criterion_group! generates an undocumented `fn benches`.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use mmsim_core::PolicyName;
use mmsim_workloads::bench::AccessBench;
use mmsim_workloads::{Target, ZipfSampler};

fn access_rate(c: &mut Criterion) {
    let b = AccessBench {
        pages: 100_000,
        accesses: 1_000_000,
        theta: 0.9,
        memory_fraction: 0.10,
        target: Target::File,
        seed: 1,
        sampler: ZipfSampler::default(),
    };
    let events = b.events().expect("bench events");
    let mut group = c.benchmark_group("access_rate");
    group.sample_size(10);
    group.throughput(Throughput::Elements(events.len() as u64));
    for policy in [PolicyName::Lru, PolicyName::Cost] {
        group.bench_function(policy.name(), |bench| {
            bench.iter(|| {
                let mut sim = b.sim(policy).expect("bench machine");
                sim.run(black_box(&events));
                black_box(sim.access_stats().misses)
            })
        });
    }
    group.finish();
}

/// Generating 1 M zipf(0.9) events over 1 M pages (scattered) with each rank sampler.
fn zipf_generate(c: &mut Criterion) {
    let mut group = c.benchmark_group("zipf_generate");
    group.sample_size(10);
    group.throughput(Throughput::Elements(1_000_000));
    for sampler in [ZipfSampler::RejectionInversion, ZipfSampler::Alias] {
        let b = AccessBench {
            pages: 1_000_000,
            accesses: 1_000_000,
            theta: 0.9,
            memory_fraction: 0.10,
            target: Target::File,
            seed: 1,
            sampler,
        };
        group.bench_function(sampler.name(), |bench| {
            bench.iter(|| black_box(b.events().expect("bench events").len()))
        });
    }
    group.finish();
}

criterion_group!(benches, access_rate, zipf_generate);
criterion_main!(benches);
