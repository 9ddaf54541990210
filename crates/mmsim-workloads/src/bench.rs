//! The access-rate benchmark setup shared by `mmsim bench` and the criterion bench:
//! a scattered zipf event list (generated ahead, or in chunks for long runs) over one region, replayed on a machine
//! whose memory is large and whose memcg limit holds a fraction of the region.

use mmsim_core::{
    Advice, DeviceConfig, DeviceKind, Event, MachineConfig, PolicyName, Sim, SimError, Size,
};

use crate::error::WorkloadError;
use crate::gen::{generate_all, workload_seed, Generator, Sink};
use crate::scenario::{Target, WorkloadKind, WorkloadSpec, ZipfSampler};

/// Parameters of one benchmark.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessBench {
    /// Region size in pages.
    pub pages: u64,
    /// Number of accesses.
    pub accesses: u64,
    /// Zipf exponent.
    pub theta: f64,
    /// `memory.max` as a fraction of the region, (0, 1].
    pub memory_fraction: f64,
    /// `file` (fd reads) or `anon` (loads; swap is added).
    pub target: Target,
    /// Seed of the access stream.
    pub seed: u64,
    /// The zipf rank sampler (the recorded benchmarks used the default).
    pub sampler: ZipfSampler,
}

impl AccessBench {
    /// The events: zipf(`theta`) over `pages`, ranks scattered, all reads, aimed at the
    /// region [`sim`](AccessBench::sim) creates.
    pub fn events(&self) -> Result<Vec<Event>, WorkloadError> {
        generate_all(&mut self.generator()?)
    }

    /// The generator of [`events`](AccessBench::events), for streaming them in chunks
    /// (a billion events would take 16 GB as one list).
    pub fn generator(&self) -> Result<Generator, WorkloadError> {
        let spec = WorkloadSpec::new(
            self.target,
            WorkloadKind::Zipf {
                pages: self.pages,
                theta: self.theta,
                accesses: self.accesses,
                scatter: true,
                sampler: self.sampler,
            },
        );
        let mut sim =
            Sim::new(self.machine(PolicyName::Lru)).map_err(|source| WorkloadError::Setup {
                what: "bench".into(),
                source,
            })?;
        let sink = Sink::setup(&mut sim, "bench", self.target, self.pages, Advice::Random)
            .map_err(|source| WorkloadError::Setup {
                what: "bench".into(),
                source,
            })?;
        Generator::new(&spec, workload_seed(self.seed, 0), sink, "bench", None)
    }

    /// `memory.max` in pages: `memory_fraction` × `pages`, at least 1.
    pub fn memcg_pages(&self) -> u64 {
        ((self.pages as f64 * self.memory_fraction) as u64).max(1)
    }

    /// The machine: memory 1.25 × the region plus 64M (so only the memcg limit reclaims),
    /// `memory.max` = [`memcg_pages`](AccessBench::memcg_pages), zram swap as large as the
    /// region for `anon`.
    pub fn machine(&self, policy: PolicyName) -> MachineConfig {
        let mut m = MachineConfig {
            memory: Size::from_pages(self.pages + self.pages / 4 + 16384),
            memcg_max: Some(Size::from_pages(self.memcg_pages())),
            ..MachineConfig::default()
        };
        m.policy.name = policy;
        if self.target == Target::Anon {
            m.swap = DeviceConfig {
                size: Some(Size::from_pages(self.pages.max(1))),
                ..DeviceConfig::of(DeviceKind::Zram)
            };
        }
        m
    }

    /// A fresh machine for `policy` with the benchmark's task and region set up, ready
    /// for [`events`](AccessBench::events).
    pub fn sim(&self, policy: PolicyName) -> Result<Sim, SimError> {
        let mut sim = Sim::new(self.machine(policy))?;
        // The same setup as in `events()`, so the ids match (the first task and region).
        Sink::setup(&mut sim, "bench", self.target, self.pages, Advice::Random)?;
        Ok(sim)
    }
}
