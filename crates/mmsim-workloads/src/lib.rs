//! # mmsim-workloads: what runs on the simulated machine
//!
//! A [`Scenario`] (TOML, see [`scenario`]) is a machine
//! ([`mmsim_core::MachineConfig`]) and a list of [`WorkloadSpec`]s of three sorts:
//!
//! * synthetic access patterns (uniform, zipf, sequential, loop, hot/cold, touch), each
//!   with its own task and region (an anonymous VMA, a file read through a descriptor,
//!   or a shared or executable file mapping);
//! * trace replays onto such a region;
//! * models of real programs ([`models`]): `fio` (buffered file IO by many jobs), `kv`
//!   (memcached filled and read by memtier_benchmark), `pgbench` (PostgreSQL's shared
//!   buffers and TPC-B-like transactions), `dd` (a streaming writer or reader) and
//!   `eater` (a memory eater), each creating the tasks, files and mappings of the
//!   program and issuing its system calls and memory accesses by the program's rules.
//!
//! [`run_scenario`] builds the machine, runs the workloads phase by phase, interleaving
//! the workloads of a phase round-robin (`weight` events each per round), each from its
//! `start` time on, and returns a [`ScenarioResult`]. The interleaving itself is an
//! [`EventStream`], which other consumers use to get exactly the events `run_scenario`
//! feeds the simulator (`mmsim-probe` executes them on the real kernel or dumps them).
//!
//! ```no_run
//! use mmsim_workloads::{default_scenario, run_scenario, RunOptions};
//! let result = run_scenario(&default_scenario(), &mut RunOptions::default())?;
//! println!("{} misses, {} swapped out", result.result.access.misses, result.result.vmstat.pswpout);
//! # Ok::<(), mmsim_workloads::WorkloadError>(())
//! ```
//!
//! Scenarios shipped with the crate are embedded ([`embedded_scenario`],
//! [`EMBEDDED_SCENARIOS`]); [`default_scenario`] is the one `mmsim` runs without
//! arguments, and [`DEFAULT_EXPLANATION`] says what it shows. Besides it: the default's
//! longer run (`postgres-like`), a zipf reader (`zipf-file`), and the seeds' benchmarks
//! with the program models: `fio-randread` and `memcached` (seed 000, scaled down),
//! `pgbench` (seed 001 at its size) and `dd-vs-eater` (seed 004, scaled down).
//!
//! ## Modules
//!
//! - `scenario/`: `mod.rs` the types (`Scenario`, `WorkloadSpec`, `WorkloadKind`,
//!   `Schedule`); `raw.rs` the TOML shape of a workload, checked against its kind;
//!   `load.rs` loading and validation; `overrides.rs` the run settings a front end applies
//!   on top (flags, Python keywords, sweep points) and `[machine]` keys written as `--set`
//!   writes them.
//! - `gen.rs` the synthetic generators; `zipf.rs` the alias-over-buckets zipf sampler of
//!   `sampler = "alias"` (rejection-inversion from rand_distr is the default) and, in a
//!   sampled run, its table over the kept pages.
//! - `models/`: the program models (fio, kv, pgbench, dd, eater, kbuild, tabs); each spec
//!   implements the `Model` trait (kind name, fields, target, size, events, validation),
//!   reached by `match`, never `dyn`; `models/mod.rs` says how to add a kind.
//! - `trace_gen.rs` trace replay: keys renumbered by first appearance, or under
//!   `trace_keys = "offset"` kept as page offsets in one file per trace file, laid out by
//!   a bounded first pass.
//! - `run.rs` phases, start times and the round-robin `EventStream`; `fair.rs` the CFS-like
//!   `schedule = "fair"`.
//! - `cgroups/`: a scenario's memory cgroups (`mod.rs` the tables and knob values,
//!   `plan.rs` their checks, expansion into timed knob writes, and setup); lru_gen file
//!   writes (`[[lru_gen_write]]`).
//! - `sample.rs` SHARDS-sampled runs (`[sample]`, `--sample`): the per-page spatial-hash
//!   filter of each generator's events, the machine scaled by the rate, the counters scaled
//!   back.
//! - `published.rs` the published results a scenario reproduces; `footprint.rs` the host
//!   memory a scenario will need at most; `host.rs` what the process may use.
//!
//! Determinism: the same scenario and seed give bit-identical results. Each workload
//! draws from its own seeded PCG stream ([`gen::workload_seed`]; fio's jobs from streams
//! seeded from it); traces are read in order; the interleaving is a fixed round-robin,
//! and start times are compared with the simulated clock only.
//!
//! Performance: events are generated into reused buffers and handed to
//! [`mmsim_core::Sim::run`] in batches of [`run::BATCH`]; no allocation or dynamic
//! dispatch per event. Traces are streamed, never loaded whole.

#![warn(missing_docs)]

pub mod bench;
pub mod cgroups;
pub mod error;
mod fair;
pub mod footprint;
pub mod gen;
pub mod host;
pub mod models;
pub mod published;
pub mod run;
pub mod sample;
pub mod scenario;
mod tomlpos;
mod trace_gen;
pub mod warnings;
pub mod zipf;

pub use error::WorkloadError;
pub use gen::{Generator, Permutation, Sink, TraceReport};
pub use run::{
    run_scenario, run_scenario_cancellable, Batch, EventStream, RunOptions, ScenarioResult,
    WorkloadReport, SCHEMA_VERSION,
};
pub use scenario::{
    DamonModuleWrite, LruGenWrite, Scenario, Schedule, Target, TraceFaults, TraceFormat, TraceKeys,
    WorkloadKind, WorkloadSpec, ZipfSampler,
};

/// The scenarios shipped with the crate: (name, TOML text).
pub const EMBEDDED_SCENARIOS: &[(&str, &str)] = &[
    ("default", include_str!("../scenarios/default.toml")),
    (
        "postgres-like",
        include_str!("../scenarios/postgres-like.toml"),
    ),
    ("zipf-file", include_str!("../scenarios/zipf-file.toml")),
    (
        "fio-randread",
        include_str!("../scenarios/fio-randread.toml"),
    ),
    ("memcached", include_str!("../scenarios/memcached.toml")),
    ("pgbench", include_str!("../scenarios/pgbench.toml")),
    ("dd-vs-eater", include_str!("../scenarios/dd-vs-eater.toml")),
    ("many-tabs", include_str!("../scenarios/many-tabs.toml")),
    (
        "softlimit-kbuild",
        include_str!("../scenarios/softlimit-kbuild.toml"),
    ),
    (
        "softlimit-stream-vs-eater",
        include_str!("../scenarios/softlimit-stream-vs-eater.toml"),
    ),
    (
        "softlimit-kbuild-vs-eater",
        include_str!("../scenarios/softlimit-kbuild-vs-eater.toml"),
    ),
    (
        "plrus-parsec-like",
        include_str!("../scenarios/plrus-parsec-like.toml"),
    ),
    (
        "damon-reclaim-parsec-like",
        include_str!("../scenarios/damon-reclaim-parsec-like.toml"),
    ),
    (
        "mthp-page-fault1",
        include_str!("../scenarios/mthp-page-fault1.toml"),
    ),
    (
        "mthp-sparse-touch",
        include_str!("../scenarios/mthp-sparse-touch.toml"),
    ),
    ("mthp-kbuild", include_str!("../scenarios/mthp-kbuild.toml")),
    (
        "mthp-malloc1",
        include_str!("../scenarios/mthp-malloc1.toml"),
    ),
    (
        "mthp-page-fault2",
        include_str!("../scenarios/mthp-page-fault2.toml"),
    ),
    (
        "mthp-page-fault3",
        include_str!("../scenarios/mthp-page-fault3.toml"),
    ),
    ("mthp-read1", include_str!("../scenarios/mthp-read1.toml")),
    ("mthp-read2", include_str!("../scenarios/mthp-read2.toml")),
    ("mthp-mmap1", include_str!("../scenarios/mthp-mmap1.toml")),
];

/// Scaled-down versions of embedded scenarios that carry published results, for
/// `mmsim reproduce --quick`: (the embedded scenario's name, TOML text). A quick version
/// keeps the workloads' names and the memory cgroups (so the published metrics exist)
/// and carries no `[[published]]` entries of its own: the full scenario's are compared.
/// Scenarios without one already run in seconds and are run as they are.
pub const QUICK_SCENARIOS: &[(&str, &str)] =
    &[("default", include_str!("../scenarios/quick/default.toml"))];

/// The quick version of embedded scenario `name` (see [`QUICK_SCENARIOS`]), parsed and
/// validated, named `NAME` like the full one (its source is `quick/NAME.toml`).
pub fn quick_scenario(name: &str) -> Option<Result<Scenario, WorkloadError>> {
    QUICK_SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| {
            Scenario::from_toml_str(text, &format!("quick/{n}.toml")).map(|mut s| {
                s.name = n.to_string();
                s
            })
        })
}

/// The embedded scenario `name` (see [`EMBEDDED_SCENARIOS`]), parsed and validated.
pub fn embedded_scenario(name: &str) -> Option<Result<Scenario, WorkloadError>> {
    EMBEDDED_SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| Scenario::from_toml_str(text, &format!("{n}.toml")))
}

/// The scenario `mmsim` runs without arguments: `scenarios/default.toml`, a scaled-down
/// postgres-like setup after the benchmark of the patch series that introduced the
/// cost-based anon/file balancing (see [`DEFAULT_EXPLANATION`]).
pub fn default_scenario() -> Scenario {
    match embedded_scenario("default") {
        Some(Ok(s)) => s,
        // The embedded file is checked by the tests; this cannot happen in a release.
        Some(Err(e)) => panic!("embedded default scenario is invalid: {e}"),
        None => unreachable!("the default scenario is embedded"),
    }
}

/// What the default scenario shows and which counters to read; `mmsim` prints it before
/// the results of a run without arguments.
pub const DEFAULT_EXPLANATION: &str = "\
Default scenario: the pgbench experiment of the 2016 series that introduced cost-based
LRU balancing (merged in v5.8, \"mm: balance LRU lists based on relative thrashing\"),
at its original size: 7G of memory, 1.1G of anonymous memory of idle processes, 1G of
hot shared buffers, a 5.6G database read uniformly through the page cache from a hard
disk, the WAL appended sequentially, swap on an SSD, swappiness 115 (swap is cheaper
than the disk). Counters are taken after a warmup of the same length as the run.

The old balancing (`--policy scanned-rotated`, kernels 3.11-5.7) keeps reclaiming the
page cache because its inactive list is long: the idle anonymous memory is never
swapped and the database thrashes. The cost model (`--policy cost`, 5.8+) charges
refaults of pages that were workingset as IO cost, so it swaps the idle memory out and
the database cache grows. The 2016 kernel measured: anon scanned 6,579 -> 201,845, swap
out 3,149 -> 86,932, file refaults 222,486 -> 101,041 (-54 %), +30 % transactions/s.
Read here: pgscan_anon and pswpout (anon reclaim), workingset_refault_file (database
pages read again), workingset_restore_file (refaults of workingset pages, the cost
signal), throughput and io wait_s, and PSI (time stalled on memory). Run both
policies, or `mmsim run --json` to get them as JSON.";
