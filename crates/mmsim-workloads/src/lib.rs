//! # mmsim-workloads: what runs on the simulated machine
//!
//! A [`Scenario`] (TOML, see [`scenario`]) is a machine
//! ([`mmsim_core::MachineConfig`]) and a list of [`WorkloadSpec`]s: synthetic access
//! patterns (uniform, zipf, sequential, loop, hot/cold, touch) and trace replays, each
//! with its own task and region (an anonymous VMA, a file read through a descriptor, or
//! a shared or executable file mapping). [`run_scenario`] builds the machine, runs the
//! workloads phase by phase, interleaving the workloads of a phase round-robin one event
//! at a time, and returns a [`ScenarioResult`].
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
//! arguments, and [`DEFAULT_EXPLANATION`] says what it shows.
//!
//! Determinism: the same scenario and seed give bit-identical results. Each workload
//! draws from its own seeded PCG stream ([`gen::workload_seed`]); traces are read in
//! order; the interleaving is a fixed round-robin.
//!
//! Performance: events are generated into reused buffers and handed to
//! [`mmsim_core::Sim::run`] in batches of [`run::BATCH`]; no allocation or dynamic
//! dispatch per event. Traces are streamed, never loaded whole.

#![warn(missing_docs)]

pub mod bench;
pub mod error;
pub mod gen;
pub mod run;
pub mod scenario;
mod tomlpos;

pub use error::WorkloadError;
pub use gen::{Generator, Permutation, Sink, TraceReport};
pub use run::{run_scenario, RunOptions, ScenarioResult, WorkloadReport};
pub use scenario::{Scenario, Target, TraceFormat, WorkloadKind, WorkloadSpec};

/// The scenarios shipped with the crate: (name, TOML text).
pub const EMBEDDED_SCENARIOS: &[(&str, &str)] = &[
    ("default", include_str!("../scenarios/default.toml")),
    (
        "postgres-like",
        include_str!("../scenarios/postgres-like.toml"),
    ),
    ("zipf-file", include_str!("../scenarios/zipf-file.toml")),
];

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
Default scenario: a postgres-like machine, scaled down from the benchmark of the patch
series that introduced cost-based LRU balancing (v5.8, \"mm: balance LRU lists based on
relative thrashing\"). 1G of memory. Phase 0 writes 300M of anonymous memory once and
leaves it idle (idle processes). Phase 1 reads a database file of 1.2x memory through
the page cache, zipf(0.8)-skewed, from a hard disk, interleaved with accesses to hot
shared buffers (100M of anonymous memory, 30% writes). Swap is on an SSD and swappiness
is 115: swapping is cheaper than re-reading file pages from the disk.

Under the cost model (policy `cost`), reclaim weighs the IO cost of refaults on each
list, so it is willing to swap out the idle anonymous memory to make room for the
database. Read: pswpout (pages swapped out) and pswpin (swapped back: small if they were
really idle); workingset_refault_file and workingset_activate_file (database pages
evicted and read again, the cost of reclaiming the wrong pages); pgscan_anon/_file and
pgsteal_anon/_file (where reclaim looked and what it took); pgpgin and io wait_s (disk reads);
the PSI some/full totals (time stalled on memory). Compare with
`mmsim run --policy scanned-rotated`, the pre-5.8 balancing: in the 2016 benchmark the
older kernel scanned almost only the page cache (6.6k anon pages scanned against 202k,
222k file refaults against 101k).";
