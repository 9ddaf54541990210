//! `mmsim`: run memory-management scenarios and traces on the simulated machine.
//!
//! ```text
//! mmsim                                   # the default scenario, explained
//! mmsim run [SCENARIO.toml | NAME] [flags] # a scenario file or an embedded scenario
//! mmsim run --trace T --policy lru --memcg-max 1000p [--as file|anon] [--format F]
//! mmsim compare [SCENARIO | --trace T] --policy a,b [--cost-variant v5.8,v6.2] [--report F]
//!               [--set KEY=V1,V2]... [--repeat N] [--json | --csv]
//! mmsim explain [SCENARIO] --page FILE:INDEX|TASK:0xVADDR | --top N [--json]
//! mmsim reproduce [SEED|all] [--quick] [--json | --csv] [--report FILE.html]
//! mmsim bench [--accesses N] [--pages N] [--memory-fraction F] [--policy lru,cost]
//! mmsim validate [SUITE] [--case NAME]... [--from-results] [--check] [--json]
//! mmsim sweep GRID.toml --out DIR [--ray ADDRESS]   # through the Python package
//! ```
//!
//! ## Modules
//!
//! - `run.rs` turns flags into a scenario (shared by `run` and `compare`) and runs it;
//!   `compare.rs` parses the compared axes (`--policy`, `--cost-variant`, `--set`), runs
//!   the configurations and hands their results to `mmsim_report::compare`.
//! - `output.rs` standard output with named write errors and the `schema_version` wrapper
//!   of JSON; `heap.rs` the counting global allocator; `host.rs` `--host-memory` and the
//!   heap guard checked once per batch; `progress.rs` the progress bar and Ctrl-C.
//! - `parallel.rs` independent runs side by side on threads (`--jobs` of `compare` and
//!   `reproduce`: results by run index, so output and bits do not depend on N).
//! - `damo.rs` damo's files (`--damon` reads its kdamonds JSON, `--damon-record` writes its
//!   record); `reproduce.rs` the flags and progress of `mmsim reproduce` (planning and
//!   judging are `mmsim_report::reproduce`'s); `trace.rs` `trace
//!   info|head|convert|formats`; `sweep.rs` hands a grid to the Python package.
//! - `validate/`: `suite.rs` reads `validation/suite.toml`; `kernel.rs` runs the kernel
//!   side (the probe in a memory cgroup under the runner's own, a swap file, a bpftrace
//!   capture of the `memcg:*` tracepoints, PSI; every change undone by guards, also on
//!   error or Ctrl-C; guest cases through `tools/validate/guest-run.sh`); `counters.rs`
//!   each compared counter on both sides; `replayed.rs` the `--set` flags of what the
//!   mmsim side changed in the recorded scenario; `mod.rs` the result JSON, the comparison,
//!   `--from-results`/`--check`/`--rebaseline` and `--kernel-run` (a real application
//!   recorded by `scripts/capture-app`).
//!
//! Exit status: 0 on success, 2 for bad input or usage (a scenario, trace or flag that
//! is wrong; the message names the file and line or the field), 3 for `run --strict`
//! when the printed result has warnings (an OOM-killed workload, an empty or wholly
//! skipped trace, a flag the policy ignores), 4 for `reproduce` when a simulated direction
//! disagrees with a published one, 130 when Ctrl-C stopped a run (its partial
//! result is printed), 1 for other failures.

mod bench;
mod compare;
mod damo;
mod explain;
mod heap;
mod host;
mod output;
mod parallel;
mod progress;
mod reproduce;
mod run;
mod sweep;
mod trace;
mod validate;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// A deterministic simulator of Linux memory management.
#[derive(Parser, Debug)]
#[command(
    name = "mmsim",
    version,
    about = "A deterministic simulator of Linux memory management",
    long_about = "A deterministic simulator of Linux memory management: page reclaim, \
                  workingset refault detection, swap, memory cgroups and PSI.\n\n\
                  Without a command, runs the default scenario (`mmsim run`) and explains it."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scenario (default: the embedded default scenario) or a trace.
    Run(run::RunArgs),
    /// Run one scenario under several configurations and compare the counters.
    #[command(after_help = "\
The configurations are every combination of the compared values, the first axis on the \
command line varying slowest; the first configuration is the baseline, and every other \
cell shows its change against it.

Examples:
  mmsim compare --policy scanned-rotated,cost
  mmsim compare zipf-file --set memory=384M,512M --repeat 3
  mmsim compare --policy cost --cost-variant v5.8,v6.2 --set swappiness=60,115 --csv")]
    Compare(compare::CompareArgs),
    /// Tell a page's life, event by event, in the kernel's terms: how it came in,
    /// who saw and cleared its accessed bits, which rule activated or deactivated
    /// it, who evicted it (priority, group, scan balance), its shadow, and each
    /// refault's distance and decision.
    #[command(after_help = "\
Pages are `FILE:INDEX` (a file of the scenario by name, a page index) or `TASK:0xVADDR` \
(a task by name, an address in its simulated layout: VMAs top-down from 0x7f0000000000 in \
mapping order). `--top N` runs the scenario twice: the first run finds the N most \
refaulted pages, the second (identical: the simulator is deterministic) records their \
stories. Only the chosen pages' events are kept.

Examples:
  mmsim explain --top 1
  mmsim explain zipf-file --page data:42 --policy mglru
  mmsim explain many-tabs --top 3 --json")]
    Explain(explain::ExplainArgs),
    /// Run the published experiments ("seeds") and judge the simulated changes against
    /// the published ones.
    #[command(after_help = "\
Per seed: the published changes beside the simulated ones (metric, baseline, compared \
configuration, published change, simulated change, whether the direction agrees, the \
ratio of the magnitudes, the source), a verdict line, and a summary over the seeds. \
Exit status 4 when a direction disagrees.

Examples:
  mmsim reproduce all --quick
  mmsim reproduce 001
  mmsim reproduce 004 --csv")]
    Reproduce(reproduce::ReproduceArgs),
    /// Measure simulated accesses per second and memory per page.
    Bench(bench::BenchArgs),
    /// List the embedded scenarios.
    Scenarios,
    /// Inspect a trace (footprint, reuse, LRU miss-ratio curve), print its first
    /// records, or convert it to the native format.
    Trace(trace::TraceArgs),
    /// Run validation cases on a real kernel and in mmsim and compare the counters
    /// (`--from-results`: against recorded kernel results, no kernel needed).
    Validate(validate::ValidateArgs),
    /// Run every point of a grid (memory sizes, policies, seeds, traces, ...) on local
    /// cores or a Ray cluster, appending each result to a Parquet dataset; a killed sweep
    /// started again redoes no finished point. Runs the `mmsim` Python package.
    Sweep(sweep::SweepArgs),
}

/// How a command ended, when it did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It did everything it was asked.
    Complete,
    /// Ctrl-C stopped a run; what was simulated so far was printed, marked PARTIAL.
    Interrupted,
    /// `--strict`: the result was printed, with warnings that make it untrustworthy.
    Warned,
    /// A command run in another process (`sweep`) ended with this exit status, having
    /// printed its own messages.
    Status(u8),
    /// `reproduce`: everything was printed, and a simulated direction disagrees with a
    /// published one.
    Disagrees,
}

/// An error in the user's input that is not already a typed library error (a flag
/// combination, a value); exits with status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Exit status for bad input or usage.
const EXIT_BAD_INPUT: u8 = 2;
/// Exit status for other failures.
const EXIT_FAILURE: u8 = 1;
/// Exit status of `run --strict` when the printed result has warnings.
const EXIT_WARNINGS: u8 = 3;

fn is_bad_input(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.is::<UsageError>()
            || e.downcast_ref::<mmsim_workloads::WorkloadError>()
                .is_some_and(|w| w.is_bad_input())
            || e.is::<mmsim_core::ConfigError>()
            || e.is::<mmsim_trace::TraceError>()
    })
}

/// The whole chain on one line, skipping causes whose text an outer message already
/// contains (library errors include their source's text).
fn chain_message(err: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if text.is_empty() || msg.contains(&text) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
}

/// Every allocation counted, for the `sim memory` line and the host memory guard.
#[global_allocator]
static GLOBAL: heap::CountingAlloc = heap::CountingAlloc;

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if matches!(
        cli.command,
        None | Some(
            Command::Run(_)
                | Command::Compare(_)
                | Command::Explain(_)
                | Command::Reproduce(_)
                | Command::Trace(_)
        )
    ) {
        progress::install_sigint_handler();
    }
    let result = match cli.command {
        None => run::run(run::RunArgs::default(), true),
        Some(Command::Run(args)) => run::run(args, false),
        Some(Command::Compare(args)) => {
            compare::compare(args, matches.subcommand_matches("compare"))
        }
        Some(Command::Explain(args)) => explain::explain(args),
        Some(Command::Reproduce(args)) => reproduce::reproduce(args),
        Some(Command::Bench(args)) => bench::bench(args).map(|()| Outcome::Complete),
        Some(Command::Scenarios) => run::list_scenarios(),
        Some(Command::Trace(args)) => trace::trace(args),
        Some(Command::Validate(args)) => validate::validate(args),
        Some(Command::Sweep(args)) => sweep::sweep(args),
    };
    match result {
        Ok(Outcome::Complete) => ExitCode::SUCCESS,
        Ok(Outcome::Interrupted) => ExitCode::from(progress::EXIT_INTERRUPTED),
        Ok(Outcome::Warned) => ExitCode::from(EXIT_WARNINGS),
        Ok(Outcome::Status(code)) => ExitCode::from(code),
        Ok(Outcome::Disagrees) => ExitCode::from(reproduce::EXIT_DISAGREES),
        Err(err) => {
            // A closed stdout (e.g. `mmsim | head`) is not worth a message.
            if err
                .chain()
                .filter_map(|e| e.downcast_ref::<std::io::Error>())
                .any(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::from(EXIT_FAILURE);
            }
            eprintln!("error: {}", chain_message(&err));
            if err.chain().any(|e| e.is::<progress::Interrupted>()) {
                return ExitCode::from(progress::EXIT_INTERRUPTED);
            }
            ExitCode::from(if is_bad_input(&err) {
                EXIT_BAD_INPUT
            } else {
                EXIT_FAILURE
            })
        }
    }
}
