//! `mmsim run`: build the scenario from a file, an embedded name or a trace, apply the
//! command-line overrides, run it, print the report.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use mmsim_core::{CostVariant, DeviceConfig, DeviceKind, MachineConfig, PolicyName, Size};
use mmsim_workloads::{
    default_scenario, embedded_scenario, run_scenario, RunOptions, Scenario, Target, TraceFormat,
    WorkloadError, WorkloadKind, WorkloadSpec, DEFAULT_EXPLANATION, EMBEDDED_SCENARIOS,
};

use crate::report;
use crate::UsageError;

/// Memory of the machine of a trace run without a scenario: large, so that only
/// `--memcg-max` limits.
const TRACE_MEMORY: Size = Size(16 << 30);
/// Swap size when `--swap` is given without `--swap-size` (and the scenario has none).
const DEFAULT_SWAP: Size = Size(4 << 30);

/// Flags of `mmsim run`. Every machine flag overrides the scenario's value.
#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// Scenario file (TOML), or the name of an embedded scenario (see `mmsim scenarios`).
    /// Default: the embedded default scenario (or, with --trace, just the trace).
    #[arg(value_name = "SCENARIO")]
    pub scenario: Option<PathBuf>,

    /// Replay this trace instead of the scenario's workloads (gzip/xz/zstd transparent).
    #[arg(long, value_name = "PATH")]
    pub trace: Option<PathBuf>,
    /// Trace format: auto (detected from the content), text, lirs, arc, oracle-general.
    #[arg(long, value_name = "FORMAT", requires = "trace")]
    pub format: Option<TraceFormat>,
    /// Where the trace's pages live: `file` (page cache, fd reads), `anon` (anonymous
    /// memory; adds swap if there is none), `mmap`, `mmap-exec`.
    #[arg(long = "as", value_name = "TARGET", requires = "trace")]
    pub target: Option<Target>,
    /// Replay at most N references of the trace.
    #[arg(long, value_name = "N", requires = "trace")]
    pub limit: Option<u64>,

    /// Reclaim policy: lru (textbook LRU), scanned-rotated (≈3.11–5.7), cost (5.8+;
    /// alias classic).
    #[arg(long, value_name = "POLICY")]
    pub policy: Option<PolicyName>,
    /// Cost weighting of the cost policy: v5.8 or v6.2.
    #[arg(long, value_name = "VARIANT")]
    pub cost_variant: Option<CostVariant>,
    /// Machine memory (K/M/G/T suffix or pages with `p`: 4G, 262144p).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub memory: Option<Size>,
    /// memory.max of the workload cgroup (e.g. 1000p or 512M).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub memcg_max: Option<Size>,
    /// Swap device: none, zram, ssd, hdd.
    #[arg(long, value_name = "DEVICE")]
    pub swap: Option<DeviceKind>,
    /// Swap size (default 4G when --swap is given and the scenario has no size).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub swap_size: Option<Size>,
    /// vm.swappiness, 0..=200.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub swappiness: Option<i64>,
    /// Seed of the workloads' random streams.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Print the result as JSON (RunResult fields at the top level, trace stats under
    /// "trace").
    #[arg(long)]
    pub json: bool,
    /// No explanation, notes or progress; only the result.
    #[arg(long, short)]
    pub quiet: bool,
    /// Show all vmstat counters, zeros included.
    #[arg(long)]
    pub all_counters: bool,
    /// Print the effective scenario (after overrides) as TOML and exit without running.
    #[arg(long)]
    pub print_scenario: bool,
}

fn bad(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// Loads the scenario named on the command line: a file, else an embedded name.
fn load(arg: &Path) -> Result<Scenario> {
    if !arg.exists() {
        if let Some(name) = arg.to_str() {
            if let Some(s) = embedded_scenario(name) {
                return Ok(s?);
            }
        }
        if arg.extension().is_none() && arg.components().count() == 1 {
            let names: Vec<&str> = EMBEDDED_SCENARIOS.iter().map(|(n, _)| *n).collect();
            return Err(bad(format!(
                "{}: no such scenario file, and not an embedded scenario ({})",
                arg.display(),
                names.join(", ")
            )));
        }
    }
    Ok(Scenario::parse_file(arg)?)
}

/// The scenario to run and notes about what the flags changed.
pub struct Plan {
    pub scenario: Scenario,
    pub is_default: bool,
    pub notes: Vec<String>,
}

/// Builds the scenario from the arguments: load, apply overrides, validate.
pub fn plan(args: &RunArgs) -> Result<Plan> {
    let mut notes = Vec::new();
    let (mut scenario, is_default) = match (&args.scenario, &args.trace) {
        (Some(path), _) => (load(path)?, false),
        (None, Some(_)) => {
            let machine = MachineConfig {
                memory: TRACE_MEMORY,
                ..MachineConfig::default()
            };
            (Scenario::new("trace", machine, Vec::new()), false)
        }
        (None, None) => (default_scenario(), true),
    };
    let from_scenario = args.scenario.is_some();

    if let Some(trace) = &args.trace {
        let target = args.target.unwrap_or(Target::File);
        let mut w = WorkloadSpec::trace(trace, args.format.unwrap_or_default(), target);
        if let WorkloadKind::Trace { limit, .. } = &mut w.kind {
            *limit = args.limit;
        }
        w.name = Some(
            trace
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "trace".into()),
        );
        if from_scenario {
            notes.push(format!(
                "--trace replaces the {} workload(s) of the scenario",
                scenario.workloads.len()
            ));
        }
        scenario.workloads = vec![w];
        // The trace path is as given on the command line, not relative to a scenario.
        scenario.base_dir = None;
    }

    let m = &mut scenario.machine;
    if let Some(p) = args.policy {
        m.policy.name = p;
    }
    if let Some(v) = args.cost_variant {
        m.policy.cost_variant = v;
    }
    if let Some(mem) = args.memory {
        m.memory = mem;
    }
    if let Some(max) = args.memcg_max {
        m.memcg_max = Some(max);
    }
    if let Some(s) = args.swappiness {
        m.swappiness = u32::try_from(s).unwrap_or(u32::MAX);
        if !(0..=200).contains(&s) {
            return Err(bad(format!(
                "--swappiness {s}: machine.swappiness: {s} is out of range [0, 200]"
            )));
        }
    }
    if let Some(kind) = args.swap {
        if kind == DeviceKind::None {
            if args.swap_size.is_some() {
                return Err(bad("--swap-size with --swap none: give a swap device"));
            }
            m.swap = DeviceConfig::of(DeviceKind::None);
        } else {
            let size = args.swap_size.or(m.swap.size).unwrap_or(DEFAULT_SWAP);
            m.swap = DeviceConfig {
                size: Some(size),
                ..DeviceConfig::of(kind)
            };
        }
    } else if let Some(size) = args.swap_size {
        if m.swap.device == DeviceKind::None {
            return Err(bad(
                "--swap-size: the machine has no swap device; add --swap zram|ssd|hdd",
            ));
        }
        m.swap.size = Some(size);
    }
    let anon_trace = args.trace.is_some() && args.target == Some(Target::Anon);
    if anon_trace && args.swap.is_none() && m.swap.device == DeviceKind::None {
        let size = m.memory;
        m.swap = DeviceConfig {
            size: Some(size),
            ..DeviceConfig::of(DeviceKind::Zram)
        };
        notes.push(format!(
            "added zram swap of {size} for --as anon (anonymous pages are evicted to swap); \
             --swap none to run without"
        ));
    }
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    if scenario.source.is_empty() {
        scenario.source = "command line".into();
    }
    scenario.validate().map_err(|e| flag_context(e, args))?;
    Ok(Plan {
        scenario,
        is_default,
        notes,
    })
}

/// Names the flag that set a field, for validation errors of overridden values.
fn flag_context(e: WorkloadError, args: &RunArgs) -> anyhow::Error {
    let flag = match e.field() {
        Some("machine.memory") => args.memory.map(|v| format!("--memory {v}")),
        Some("machine.memcg_max") => args.memcg_max.map(|v| format!("--memcg-max {v}")),
        Some(f) if f.starts_with("machine.swap.") => args
            .swap
            .map(|_| "--swap".to_string())
            .or(args.swap_size.map(|v| format!("--swap-size {v}"))),
        Some("machine.swappiness") => args.swappiness.map(|v| format!("--swappiness {v}")),
        Some(f) if f.starts_with("workload[0].") && args.trace.is_some() => {
            Some("--trace".to_string())
        }
        _ => None,
    };
    match flag {
        Some(flag) => anyhow::Error::new(e).context(flag),
        None => anyhow::Error::new(e),
    }
}

/// Progress on stderr, at most every half second, when stderr is a terminal.
struct Progress {
    start: Instant,
    last: Instant,
    total: Option<u64>,
    shown: bool,
}

impl Progress {
    fn tick(&mut self, done: u64) {
        let now = Instant::now();
        if now.duration_since(self.last) < Duration::from_millis(500)
            || now.duration_since(self.start) < Duration::from_secs(1)
        {
            return;
        }
        self.last = now;
        self.shown = true;
        let mut err = std::io::stderr().lock();
        let _ = match self.total {
            Some(t) if t > 0 => write!(
                err,
                "\r{done} / {t} events ({:.0}%)  ",
                done as f64 * 100.0 / t as f64
            ),
            _ => write!(err, "\r{done} events  "),
        };
        let _ = err.flush();
    }

    fn clear(&self) {
        if self.shown {
            let _ = write!(std::io::stderr(), "\r{:60}\r", "");
        }
    }
}

/// `mmsim run` (and `mmsim` without arguments, `bare`).
pub fn run(args: RunArgs, bare: bool) -> Result<()> {
    let plan = plan(&args)?;
    let s = &plan.scenario;
    let mut out = std::io::stdout().lock();
    if args.print_scenario {
        out.write_all(s.to_toml_string().as_bytes())?;
        return Ok(());
    }
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let mut progress = Progress {
        start: Instant::now(),
        last: Instant::now(),
        total: s.expected_events(),
        shown: false,
    };
    let mut tick = |done: u64| progress.tick(done);
    let mut opts = RunOptions::default();
    if show_progress {
        opts.progress = Some(&mut tick);
    }
    let result = run_scenario(s, &mut opts);
    progress.clear();
    let result = result.with_context(|| format!("running scenario `{}`", s.name))?;

    if args.json {
        let text = serde_json::to_string_pretty(&result)?;
        out.write_all(text.as_bytes())?;
        out.write_all(b"\n")?;
        return Ok(());
    }
    let mut text = String::new();
    if plan.is_default && !args.quiet {
        text.push_str(DEFAULT_EXPLANATION);
        text.push_str("\n\n");
        if bare {
            text.push_str(
                "(`mmsim run --help` for options, `mmsim scenarios` for more scenarios)\n\n",
            );
        }
    }
    let notes: &[String] = if args.quiet { &[] } else { &plan.notes };
    text.push_str(&report::table(s, &result, notes, args.all_counters));
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `mmsim scenarios`.
pub fn list_scenarios() -> Result<()> {
    let mut text = String::new();
    for (name, _) in EMBEDDED_SCENARIOS {
        let s = embedded_scenario(name).expect("embedded")?;
        text.push_str(&format!(
            "{name:<15} {}\n",
            s.description.as_deref().unwrap_or("")
        ));
    }
    text.push_str(
        "\nrun one with `mmsim run NAME`; print its TOML with `mmsim run NAME --print-scenario`\n",
    );
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}
