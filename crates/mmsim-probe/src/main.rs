//! `mmsim-probe`: executes an mmsim scenario's exact event stream on the real machine,
//! dumps it, or checks a dump against the simulator. See the crate documentation
//! (`mmsim_probe`) for how events map to system calls and what cannot be reproduced.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use clap::Parser;
use mmsim_core::Size;
use mmsim_probe::exec::{DEFAULT_MAX_DISK, DEFAULT_MAX_MEMORY};
use mmsim_probe::{dump, Plan, ProbeError, RunConfig, ThinkMode};
use mmsim_workloads::{embedded_scenario, Scenario, EMBEDDED_SCENARIOS};

/// Run an mmsim scenario's exact event stream on the real kernel (buffered preads and
/// pwrites, loads and stores to anonymous and file mappings), single-threaded in this
/// process, and print what it did as JSON: wall time, events per kind and per workload,
/// page faults and I/O from getrusage, and this process's pid.
///
/// Supported: workloads of kind uniform, zipf, sequential, loop, hot-cold, touch, and
/// trace (with `pages`), on any target (anon, file, mmap, mmap-exec), with advice,
/// write_ratio, phases, weights and warmup_events. Rejected with an error naming the
/// field: program models (fio, kv, pgbench, dd, eater) and `start` times.
///
/// Typical use for kernel ground truth: `--dump` the stream (anywhere), `--prepare` the
/// files outside the memory cgroup, then run with `--reuse` inside it.
#[derive(Parser, Debug)]
#[command(name = "mmsim-probe", version)]
struct Cli {
    /// Scenario file (TOML), or the name of an embedded scenario. With --check-dump:
    /// default, the scenario recorded in the dump.
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,

    /// Override the scenario's seed.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,

    /// Directory for the workloads' real files (required if any workload's target is
    /// file, mmap or mmap-exec). Nothing outside it is created or removed.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,

    /// Run on region files that already exist in --dir (each must be a regular file of
    /// exactly its region's size; missing ones are created). They are never removed.
    #[arg(long)]
    reuse: bool,

    /// Keep the files this run created (default: removed at the end, also after an
    /// error).
    #[arg(long)]
    keep: bool,

    /// Create the files in --dir and stop (they are kept): prepare them outside the
    /// memory cgroup, then run with --reuse inside it.
    #[arg(long, conflicts_with_all = ["dump", "check_dump"])]
    prepare: bool,

    /// Do not fsync + POSIX_FADV_DONTNEED the files before the run (default: they are
    /// dropped from the page cache, which starts cold as in the simulator).
    #[arg(long)]
    no_evict: bool,

    /// Largest total size of the mapped regions (anon, mmap, mmap-exec): K/M/G/T suffix
    /// or pages with `p`.
    #[arg(long, value_name = "SIZE", default_value_t = Size(DEFAULT_MAX_MEMORY))]
    max_memory: Size,

    /// Largest total size of the region files.
    #[arg(long, value_name = "SIZE", default_value_t = Size(DEFAULT_MAX_DISK))]
    max_disk: Size,

    /// How Think events are executed: busy (spin) or sleep (nanosleep).
    #[arg(long, value_enum, default_value_t = ThinkMode::Busy)]
    think: ThinkMode,

    /// Write the scenario's event stream into directory PATH (events.mmev, one native
    /// trace per workload, dump.json) and exit, touching no memory and creating no region
    /// file.
    #[arg(long, value_name = "PATH", conflicts_with = "check_dump")]
    dump: Option<PathBuf>,

    /// Check the dump in PATH against the stream `mmsim run` feeds the simulator (runs
    /// the simulation); exit 1 if they differ.
    #[arg(long, value_name = "PATH")]
    check_dump: Option<PathBuf>,

    /// After the last event, create FILE and wait until it is removed before unmapping
    /// anything and reporting (a DAMON monitor of the process is read meanwhile).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["dump", "check_dump", "prepare"])]
    hold: Option<PathBuf>,

    /// Before the first event (files open, regions mapped), create FILE and wait until
    /// it is removed (machine-wide counters are read meanwhile; FILE may be a FIFO,
    /// then the write waits for its reader).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["dump", "check_dump", "prepare"])]
    ready: Option<PathBuf>,

    /// The first load of an untouched page of an anonymous region stores a zero byte:
    /// the kernel allocates a zero-filled page, as the simulator does for a first load,
    /// instead of mapping the shared zero page (for `swpout_zero`/`swpin_zero`).
    #[arg(long)]
    anon_read_alloc: bool,

    /// Write the JSON result to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,

    /// No progress lines on standard error; only the JSON result (and errors).
    #[arg(long, short)]
    quiet: bool,
}

/// Loads a scenario: a file, else an embedded name.
fn load(arg: &Path) -> Result<Scenario> {
    if !arg.exists() {
        if let Some(s) = arg.to_str().and_then(embedded_scenario) {
            return Ok(s?);
        }
        if arg.extension().is_none() && arg.components().count() == 1 {
            let names: Vec<&str> = EMBEDDED_SCENARIOS.iter().map(|(n, _)| *n).collect();
            return Err(anyhow!(
                "{}: no such scenario file, and not an embedded scenario ({})",
                arg.display(),
                names.join(", ")
            ));
        }
    }
    Ok(Scenario::from_file(arg)?)
}

fn emit(cli: &Cli, json: &str) -> Result<()> {
    match &cli.out {
        Some(p) => std::fs::write(p, format!("{json}\n"))
            .with_context(|| format!("writing {}", p.display())),
        None => {
            let mut o = std::io::stdout().lock();
            writeln!(o, "{json}").context("writing standard output")
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(&cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mmsim-probe: error: {e:#}");
            let usage = e.downcast_ref::<ProbeError>().is_some_and(|p| {
                matches!(
                    p,
                    ProbeError::Usage(_)
                        | ProbeError::Unsupported { .. }
                        | ProbeError::Limit { .. }
                )
            });
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

fn real_main(cli: &Cli) -> Result<ExitCode> {
    let quiet = cli.quiet;
    let mut log = |m: &str| {
        if !quiet {
            eprintln!("mmsim-probe: {m}");
        }
    };

    if let Some(dir) = &cli.check_dump {
        // The scenario given, else (to override its seed) the one recorded in the dump.
        let mut s = match (&cli.scenario, cli.seed) {
            (Some(p), _) => Some(load(p)?),
            (None, Some(_)) => Some(dump::dumped_scenario(dir)?),
            (None, None) => None,
        };
        if let (Some(s), Some(seed)) = (s.as_mut(), cli.seed) {
            s.seed = seed;
        }
        log(&format!(
            "checking {} against the simulator's stream",
            dir.display()
        ));
        let report = dump::verify_dump(dir, s.as_ref())?;
        emit(cli, &serde_json::to_string_pretty(&report)?)?;
        if report.equal && report.traces_equal {
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!(
            "mmsim-probe: the dump differs from the simulator's stream: {}",
            report.first_difference.as_deref().unwrap_or("?")
        );
        return Ok(ExitCode::from(1));
    }

    let Some(arg) = &cli.scenario else {
        return Err(
            ProbeError::Usage("give a SCENARIO (a TOML file or an embedded name)".into()).into(),
        );
    };
    let mut s = load(arg)?;
    if let Some(seed) = cli.seed {
        s.seed = seed;
    }
    let plan = Plan::new(&s)?;

    if let Some(dir) = &cli.dump {
        log(&format!(
            "dumping the event stream of {} to {}",
            s.name,
            dir.display()
        ));
        let info = dump::dump(&plan, dir)?;
        log(&format!(
            "{} events; {}",
            info.events,
            dir.join(dump::SIDECAR).display()
        ));
        emit(cli, &serde_json::to_string_pretty(&info)?)?;
        return Ok(ExitCode::SUCCESS);
    }

    let cfg = RunConfig {
        dir: cli.dir.clone(),
        reuse: cli.reuse,
        keep: cli.keep,
        prepare_only: cli.prepare,
        evict: !cli.no_evict,
        max_memory: cli.max_memory.0,
        max_disk: cli.max_disk.0,
        think: cli.think,
        hold: cli.hold.clone(),
        ready: cli.ready.clone(),
        anon_read_alloc: cli.anon_read_alloc,
    };
    let report = mmsim_probe::run(&plan, &cfg, &mut log)?;
    if !cli.prepare {
        log(&format!(
            "{} events in {:.3} s: minflt {}, majflt {}",
            report.events, report.run.wall_s, report.run.minflt, report.run.majflt
        ));
    }
    emit(cli, &serde_json::to_string_pretty(&report)?)?;
    Ok(ExitCode::SUCCESS)
}
