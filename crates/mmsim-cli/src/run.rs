//! `mmsim run`: build the scenario from a file, an embedded name or a trace, apply the
//! command-line overrides, run it, print the report.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use mmsim_core::{CostVariant, DeviceKind, MachineConfig, PolicyName, Size};
use mmsim_workloads::scenario::overrides::{self, Base, Overrides};
use mmsim_workloads::{
    embedded_scenario, run_scenario_cancellable, RunOptions, Scenario, ScenarioResult, Target,
    TraceFormat, TraceKeys, WorkloadError, DEFAULT_EXPLANATION, EMBEDDED_SCENARIOS,
};

pub use mmsim_workloads::scenario::overrides::Plan;

use crate::progress::{self, Progress};
use crate::Outcome;

/// The flags that choose and adjust the scenario, shared by `mmsim run` and `mmsim
/// compare`. Every machine flag overrides the scenario's value.
#[derive(Args, Debug, Default, Clone)]
pub struct ScenarioArgs {
    /// Scenario file (TOML), or the name of an embedded scenario (see `mmsim scenarios`).
    /// Default: the embedded default scenario (or, with --trace, just the trace).
    #[arg(value_name = "SCENARIO")]
    pub scenario: Option<PathBuf>,

    /// Replay this trace instead of the scenario's workloads (gzip/xz/zstd transparent;
    /// `-` reads standard input).
    #[arg(long, value_name = "PATH")]
    pub trace: Option<PathBuf>,
    /// Trace format: auto (detected from the content; the choice and why are reported)
    /// or a name from `mmsim trace formats` (text, lirs, arc, oracle-general, native,
    /// vscsi, msr, memsim, ucsd, lackey, filemap, …).
    #[arg(long, value_name = "FORMAT", requires = "trace")]
    pub format: Option<TraceFormat>,
    /// Where the trace's pages live: `file` (page cache, fd reads), `anon` (anonymous
    /// memory; adds swap if there is none), `mmap`, `mmap-exec`.
    #[arg(long = "as", value_name = "TARGET", requires = "trace")]
    pub target: Option<Target>,
    /// Replay at most N references of the trace.
    #[arg(long, value_name = "N", requires = "trace")]
    pub limit: Option<u64>,
    /// How the trace's keys become pages: `dense` (numbered by first appearance, the
    /// default for every format) or `offset` (page offsets in their files: a filemap
    /// trace's (dev, ino) and a block trace's device become files of their own, so
    /// readahead and fault-around see the real layout; advice defaults to normal).
    #[arg(long, value_name = "MODE", requires = "trace")]
    pub keys: Option<TraceKeys>,
    /// Replay each multi-page request of the trace (a filemap range event, a block
    /// request) as one read or write of its pages, as the program issued it, so that
    /// readahead sees the request's size; needs `--keys offset` on a file target
    /// (scenario field `trace_requests`).
    #[arg(long, requires = "trace")]
    pub trace_requests: bool,

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
    /// CPUs the workload's tasks keep busy, 1..=4096 (`machine.cpus`): more than one
    /// models the lruvec lock they contend on.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub cpus: Option<i64>,
    /// Seed of the workloads' random streams.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// How the workloads of a phase share the machine (the scenario's `schedule`):
    /// `round-robin` (turns by event count, the default) or `fair` (side by side in
    /// simulated time under a CFS-like scheduler; each workload's CPU and sleep time
    /// are reported).
    #[arg(long, value_name = "SCHEDULE")]
    pub schedule: Option<mmsim_workloads::Schedule>,
    /// Multi-gen LRU version of the mglru policy: v6.1, v6.12 or v6.14 (default).
    #[arg(long, value_name = "VERSION")]
    pub mglru_version: Option<mmsim_core::MglruVersion>,
    /// /sys/kernel/mm/lru_gen/min_ttl_ms for the mglru policy (0 = off).
    #[arg(long, value_name = "MS", allow_hyphen_values = true)]
    pub min_ttl_ms: Option<i64>,
    /// /sys/kernel/mm/lru_gen/enabled for the mglru policy: bits 0 core, 1 mm walk,
    /// 2 non-leaf young, as a number (7, 0x7) or y/n.
    #[arg(long, value_name = "BITS")]
    pub lru_gen_enabled: Option<String>,
    /// Host memory mmsim may use: a size, or `max` for no limit. Default: what this
    /// process can have (MemAvailable, its cgroup's limit, RLIMIT_AS). A scenario
    /// estimated not to fit is refused before it runs, and a run whose heap crosses
    /// the limit is stopped with an error.
    #[arg(long, value_name = "SIZE|max")]
    pub host_memory: Option<crate::host::HostMemory>,
    /// Run DAMON's kdamonds as damo describes them: the JSON `damo args damon
    /// --format json` prints (human-formatted values such as "5 ms" and
    /// "1,073,741,824" accepted), replacing the scenario's `[machine.damon]`
    /// kdamonds. A target's pid is the index of the scenario's task (0, 1, …, in
    /// the order its workloads create them); a null pid of a vaddr context
    /// monitors every task.
    #[arg(long, value_name = "CONFIG.json")]
    pub damon: Option<PathBuf>,
    /// Run a SHARDS sample: keep the pages whose spatial hash falls below RATE (0 <
    /// RATE ≤ 1; 0.01 keeps 1 %), on a machine whose memory, memory.max, swap and
    /// watermarks are scaled by RATE; counters are reported ×1/RATE, as estimates.
    /// File-backed pages are sampled by blocks of a quarter of the readahead window
    /// (see --sample-block).
    #[arg(long, value_name = "RATE", allow_hyphen_values = true)]
    pub sample: Option<f64>,
    /// Pages sampled together in a sampled run (a power of two, 1..=1024; default:
    /// read_ahead_kb/16, a quarter of the readahead window, for file-backed workloads,
    /// 1 for anonymous ones).
    #[arg(long, value_name = "PAGES")]
    pub sample_block: Option<u32>,
}

/// Flags of `mmsim run`.
#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// The scenario and the machine overrides.
    #[command(flatten)]
    pub scenario: ScenarioArgs,

    /// Reclaim policy: lru (textbook LRU), scanned-rotated (≈3.11–5.7), cost (5.8+;
    /// alias classic), mglru (multi-gen LRU, 6.1+).
    #[arg(long, value_name = "POLICY")]
    pub policy: Option<PolicyName>,
    /// Cost weighting of the cost policy: v5.8 or v6.2.
    #[arg(long, value_name = "VARIANT")]
    pub cost_variant: Option<CostVariant>,
    /// Set a `[machine]` key of the scenario as a scenario file would, after the other
    /// flags: dotted for its sub-tables (`page_cluster=0`, `swap.device=zram`,
    /// `stats_interval_ms=100`). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", allow_hyphen_values = true)]
    pub set: Vec<String>,

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
    /// Exit with status 3 when the result has warnings (an OOM-killed workload, an
    /// empty or wholly skipped trace, a flag the policy ignores), after printing it.
    #[arg(long)]
    pub strict: bool,
    /// Also write an HTML report to this file: the metrics, charts over simulated time
    /// (LRU lists, refaults, scans and steals, swap, PSI, memcg usage and limits,
    /// reclaim CPU) and the scenario; one self-contained page. Turns the stats sampler
    /// on (results do not change).
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<std::path::PathBuf>,
    /// Write what DAMON monitored as damo's record file (`damo record`'s
    /// json_compressed format: `damo report heatmap|wss|access --input OUT` read it).
    /// Needs DAMON: `--damon CONFIG.json` or a scenario with `[machine.damon]`.
    #[arg(long, value_name = "OUT")]
    pub damon_record: Option<PathBuf>,
    /// Record counters over time every INTERVAL of simulated time (`100ms`, `1s`, or
    /// ms as a number; sets `machine.stats_interval_ms`): /proc/vmstat, PSI, each
    /// group's memory.current/memory.stat/memory.events/memory.pressure, the LRU
    /// sizes, with the scenario's events (knob writes, moves, phase starts, OOM kills)
    /// marked. Prints a `vmstat 1`-like table after the report (at most 40 rows; results
    /// do not change).
    #[arg(long, value_name = "INTERVAL", value_parser = parse_interval_ms)]
    pub series: Option<u64>,
    /// Write the counters over time to FILE: `.csv` (tidy, one row per interval) or
    /// `.json`. Needs `--series` or a scenario with `machine.stats_interval_ms`.
    #[arg(long, value_name = "FILE.csv|FILE.json")]
    pub series_out: Option<PathBuf>,
    /// Emit the kernel's tracepoints the run would fire: comma-separated
    /// `SYSTEM:EVENT` patterns (`vmscan:*,filemap:*,compaction:*`, `vmscan:mm_vmscan_lru_shrink_inactive`),
    /// written to --tracepoints-out as `perf script` prints them, with simulated
    /// timestamps and the kernel's field names (results do not change).
    #[arg(long, value_name = "PATTERNS", requires = "tracepoints_out")]
    pub tracepoints: Option<String>,
    /// The file the tracepoint lines go to.
    #[arg(long, value_name = "FILE", requires = "tracepoints")]
    pub tracepoints_out: Option<PathBuf>,
    /// Keep only some events: comma-separated `group=PATH` (a group's reclaim and
    /// page cache), `file=NAME`, `pages=FIRST-LAST` (page indices of filemap events),
    /// `from=TIME`, `to=TIME` (`1.5s`, `200ms`), `max=N` (most lines kept; default
    /// 1000000).
    #[arg(long, value_name = "KEY=VALUE,...", requires = "tracepoints")]
    pub tracepoints_filter: Option<String>,
}

/// `--tracepoints` and `--tracepoints-filter` as the machine's tracepoint settings.
fn tracepoint_config(
    events: &str,
    filter: Option<&str>,
) -> Result<mmsim_core::tracepoint::TracepointConfig> {
    let mut c = mmsim_core::tracepoint::TracepointConfig {
        events: events
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        max_events: 1_000_000,
        ..Default::default()
    };
    let time = |k: &str, v: &str| -> Result<u64> {
        let (num, scale) = if let Some(n) = v.strip_suffix("ms") {
            (n, 1e6)
        } else if let Some(n) = v.strip_suffix('s') {
            (n, 1e9)
        } else {
            (v, 1e9)
        };
        match num.trim().parse::<f64>() {
            Ok(x) if x >= 0.0 && x.is_finite() => Ok((x * scale).round() as u64),
            _ => Err(bad(format!(
                "--tracepoints-filter {k}={v}: not a time (give seconds: 1.5s, or ms: 200ms)"
            ))),
        }
    };
    for kv in filter
        .unwrap_or("")
        .split(',')
        .filter(|s| !s.trim().is_empty())
    {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(bad(format!(
                "--tracepoints-filter `{kv}`: expected KEY=VALUE (group, file, pages, from, to, max)"
            )));
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "group" => c.group = Some(v.to_string()),
            "file" => c.file = Some(v.to_string()),
            "pages" => {
                let range = v
                    .split_once('-')
                    .and_then(|(a, b)| Some([a.trim().parse().ok()?, b.trim().parse().ok()?]));
                let Some(r) = range.or_else(|| v.parse().ok().map(|p| [p, p])) else {
                    return Err(bad(format!(
                        "--tracepoints-filter pages={v}: expected FIRST-LAST (page indices)"
                    )));
                };
                c.pages = Some(r);
            }
            "from" => c.from_ns = time(k, v)?,
            "to" => c.to_ns = Some(time(k, v)?),
            "max" => {
                c.max_events = v.parse().map_err(|_| {
                    bad(format!(
                        "--tracepoints-filter max={v}: not a number of events"
                    ))
                })?
            }
            _ => {
                return Err(bad(format!(
                    "--tracepoints-filter: unknown key `{k}` (group, file, pages, from, to, max)"
                )))
            }
        }
    }
    c.validate()
        .map_err(|e| bad(format!("--tracepoints: {}", e.message)))?;
    Ok(c)
}

/// Most rows of the `--series` table in the run report (the file has them all).
const SERIES_ROWS: usize = 40;

/// `--series INTERVAL`: `250ms`, `2s`, or a number of ms; at least 1 ms.
fn parse_interval_ms(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1000)
    } else {
        (t, 1)
    };
    let v: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not an interval: give ms (250, 250ms) or s (2s)"))?;
    let ms = v
        .checked_mul(scale)
        .ok_or_else(|| format!("`{s}` is too long"))?;
    if ms == 0 {
        return Err("the interval must be at least 1 ms".into());
    }
    Ok(ms)
}

/// Which file `--series-out` writes, from its extension.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SeriesFormat {
    Csv,
    Json,
}

fn series_format(path: &std::path::Path) -> Result<SeriesFormat> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("csv") => Ok(SeriesFormat::Csv),
        Some(e) if e.eq_ignore_ascii_case("json") => Ok(SeriesFormat::Json),
        _ => Err(bad(format!(
            "--series-out {}: the file name must end in .csv or .json",
            path.display()
        ))),
    }
}

/// A usage error (exit status 2) with `msg`.
fn bad(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(crate::UsageError(msg.into()))
}

/// The library's overrides from the flags (policy and cost variant are `run`'s own
/// flags, applied by the caller).
fn overrides(args: &ScenarioArgs) -> Overrides {
    Overrides {
        trace: args.trace.clone(),
        format: args.format,
        target: args.target,
        limit: args.limit,
        keys: args.keys,
        requests: args.trace_requests,
        memory: args.memory,
        memcg_max: args.memcg_max,
        swap: args.swap,
        swap_size: args.swap_size,
        swappiness: args.swappiness,
        cpus: args.cpus,
        seed: args.seed,
        mglru_version: args.mglru_version,
        min_ttl_ms: args.min_ttl_ms,
        lru_gen_enabled: args.lru_gen_enabled.clone(),
        policy: None,
        cost_variant: None,
        sample: args.sample,
        sample_block: args.sample_block,
        schedule: args.schedule,
    }
}

/// Builds the scenario from the arguments ([`overrides::plan`]): load it, apply the
/// machine flags. Not yet validated: the caller may change more (a policy, a compared
/// setting) and then calls [`validate`].
pub fn plan(args: &ScenarioArgs) -> Result<Plan> {
    let base = match &args.scenario {
        Some(path) => Base::Named(path.clone()),
        None => Base::Default,
    };
    let mut plan = overrides::plan(base, &overrides(args))?;
    if let Some(path) = &args.damon {
        let kdamonds = crate::damo::read_kdamonds(path).map_err(|e| bad(format!("{e:#}")))?;
        let d = plan
            .scenario
            .machine
            .damon
            .get_or_insert_with(Default::default);
        d.kdamonds = kdamonds;
    }
    Ok(plan)
}

/// Validates a scenario built by [`plan`]; an error about a field a flag set names the
/// flag.
pub fn validate(s: &Scenario, args: &ScenarioArgs) -> Result<()> {
    s.validate().map_err(|e| flag_context(e, args))
}

/// Names the flag that set a field, for validation errors of overridden values.
fn flag_context(e: WorkloadError, args: &ScenarioArgs) -> anyhow::Error {
    let flag = match e.field() {
        Some("machine.memory") => args.memory.map(|v| format!("--memory {v}")),
        Some("machine.memcg_max") => args.memcg_max.map(|v| format!("--memcg-max {v}")),
        Some(f) if f.starts_with("machine.swap.") => args
            .swap
            .map(|_| "--swap".to_string())
            .or(args.swap_size.map(|v| format!("--swap-size {v}"))),
        Some("machine.swappiness") => args.swappiness.map(|v| format!("--swappiness {v}")),
        Some("machine.cpus") => args.cpus.map(|v| format!("--cpus {v}")),
        Some("machine.policy.min_ttl_ms") => args.min_ttl_ms.map(|v| format!("--min-ttl-ms {v}")),
        Some("machine.policy.lru_gen_enabled") => args
            .lru_gen_enabled
            .as_ref()
            .map(|v| format!("--lru-gen-enabled {v}")),
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

/// Runs `s` with the progress display and the Ctrl-C flag; the result may be partial.
pub fn run_with_progress(s: &Scenario, progress: &mut Progress) -> Result<ScenarioResult> {
    let result = run_with_tick(s, &mut |done| progress.tick(done))?;
    progress.run_done(result.events);
    Ok(result)
}

/// Runs `s` with the Ctrl-C flag, calling `tick` with the events done after every
/// batch; stops the run with an error once the process heap crosses the host limit
/// (which also stops every other run of the process: the limit is the process's).
pub fn run_with_tick(s: &Scenario, tick: &mut dyn FnMut(u64)) -> Result<ScenarioResult> {
    let mut over = None;
    let mut guarded = |done: u64| {
        tick(done);
        if over.is_none() {
            over = crate::host::over_limit().map(|m| (done, m));
            if over.is_some() {
                progress::CANCEL.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    };
    let mut opts = RunOptions {
        progress: Some(&mut guarded),
        on_batch: None,
    };
    let result = run_scenario_cancellable(s, &mut opts, Some(&progress::CANCEL));
    if let Some((done, message)) = over {
        anyhow::bail!(
            "running scenario `{}`: stopped after {done} events: {message}",
            s.name
        );
    }
    result.with_context(|| format!("running scenario `{}`", s.name))
}

/// Whether to show progress: not with `--quiet`, only on a terminal.
pub fn show_progress(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// `mmsim run` (and `mmsim` without arguments, `bare`).
/// Writes the machine flags `run` and `explain` share into `m`: `--policy`,
/// `--cost-variant`, then each `--set KEY=VALUE` in order.
pub fn apply_machine_flags(
    m: &mut MachineConfig,
    policy: Option<PolicyName>,
    cost_variant: Option<CostVariant>,
    set: &[String],
) -> Result<()> {
    if let Some(p) = policy {
        m.policy.name = p;
    }
    if let Some(v) = cost_variant {
        m.policy.cost_variant = v;
    }
    for raw in set {
        overrides::apply_set(m, raw)?;
    }
    Ok(())
}

pub fn run(args: RunArgs, bare: bool) -> Result<Outcome> {
    let mut plan = plan(&args.scenario)?;
    apply_machine_flags(
        &mut plan.scenario.machine,
        args.policy,
        args.cost_variant,
        &args.set,
    )?;
    if let Some(out) = &args.damon_record {
        match plan.scenario.machine.damon.as_mut() {
            Some(d) => d.record = true,
            None => {
                return Err(bad(format!(
                    "--damon-record {}: the machine runs no DAMON; give --damon CONFIG.json \
                     or a scenario with [machine.damon]",
                    out.display()
                )))
            }
        }
    }
    if let Some(ms) = args.series {
        plan.scenario.machine.stats_interval_ms = ms;
    }
    let series_out = match &args.series_out {
        Some(path) => {
            if plan.scenario.machine.stats_interval_ms == 0 {
                return Err(bad(format!(
                    "--series-out {}: no counters over time are recorded; give --series \
                     INTERVAL (or set machine.stats_interval_ms)",
                    path.display()
                )));
            }
            let format = series_format(path)?;
            mmsim_report::html::check_path(path)
                .map_err(|e| bad(e.replacen("--report", "--series-out", 1)))?;
            Some((path.clone(), format))
        }
        None => None,
    };
    if let Some(events) = &args.tracepoints {
        let c = tracepoint_config(events, args.tracepoints_filter.as_deref())?;
        if let Some(path) = &args.tracepoints_out {
            mmsim_report::html::check_path(path)
                .map_err(|e| bad(e.replacen("--report", "--tracepoints-out", 1)))?;
        }
        plan.scenario.machine.tracepoints = Some(c);
    }
    validate(&plan.scenario, &args.scenario)?;
    crate::host::check(&plan.scenario, args.scenario.host_memory)?;
    let ignored = ignored_flags(plan.scenario.machine.policy.name, &args);
    let report_toml = plan.scenario.to_toml_string();
    // The report's DAMON heatmap needs the aggregation snapshots; kept in the
    // result only if the scenario itself asked for them.
    let scenario_records = plan
        .scenario
        .machine
        .damon
        .as_ref()
        .is_some_and(|d| d.record);
    if let Some(path) = &args.report {
        if !args.print_scenario {
            mmsim_report::html::check_path(path).map_err(bad)?;
            mmsim_report::html::enable_sampling(&mut plan.scenario.machine);
            if let Some(d) = plan.scenario.machine.damon.as_mut() {
                d.record = true;
            }
        }
    }
    let s = &plan.scenario;
    let mut out = crate::output::stdout();
    if args.print_scenario {
        out.write_all(s.to_toml_string().as_bytes())?;
        return Ok(Outcome::Complete);
    }
    let mut progress = Progress::new(show_progress(args.quiet), s.expected_events());
    let result = run_with_progress(s, &mut progress);
    progress.clear();
    let mut result = result?;
    if let Some(out) = &args.damon_record {
        if let Some(d) = result.result.damon.as_mut() {
            crate::damo::write_record(out, d)?;
        }
    }
    // One run per process: the process's peak is this run's (compare leaves it out).
    result.host_heap_peak_bytes = Some(crate::heap::peak() as u64);
    result.warnings.splice(0..0, ignored);
    for w in &result.warnings {
        eprintln!("warning: {w}");
    }
    let outcome = if result.partial {
        eprintln!("{}", interrupted_message(s, &result));
        Outcome::Interrupted
    } else if args.strict && !result.warnings.is_empty() {
        eprintln!(
            "error: --strict: the result has {} warning(s) (above)",
            result.warnings.len()
        );
        Outcome::Warned
    } else {
        Outcome::Complete
    };

    if let Some(path) = &args.report {
        let page = mmsim_report::html::run_page(&result, &report_toml);
        mmsim_report::html::write(path, &page).map_err(bad)?;
    }
    if args.damon_record.is_some() || (args.report.is_some() && !scenario_records) {
        // The snapshots are in the record file or the page, not in the report.
        if let Some(d) = result.result.damon.as_mut() {
            d.record.clear();
        }
    }
    if let Some(path) = &args.tracepoints_out {
        let r = &mut result.result;
        let mut text = String::new();
        for e in &r.tracepoints {
            text.push_str(&e.perf_script_line(&r.task_names));
            text.push('\n');
        }
        std::fs::write(path, text)
            .with_context(|| format!("--tracepoints-out: writing {}", path.display()))?;
        if r.tracepoints_dropped > 0 {
            eprintln!(
                "note: --tracepoints-out {}: {} events kept, {} more dropped (raise \
                 --tracepoints-filter max=N or narrow the filter)",
                path.display(),
                r.tracepoints.len(),
                r.tracepoints_dropped
            );
        }
        // The events are in the file, not in the report.
        r.tracepoints.clear();
        r.task_names.clear();
    }
    if let Some((path, format)) = &series_out {
        let table = mmsim_report::export::series::SeriesTable::of(&result.result);
        let text = match format {
            SeriesFormat::Csv => table.to_csv(),
            SeriesFormat::Json => table.to_json(),
        };
        std::fs::write(path, text)
            .with_context(|| format!("--series-out: writing {}", path.display()))?;
    }
    if args.json {
        mmsim_report::export::json::write_result(&mut out, &result)?;
        return Ok(outcome);
    }
    let mut text = String::new();
    if plan.is_default && !args.quiet && !result.partial {
        text.push_str(DEFAULT_EXPLANATION);
        text.push_str("\n\n");
        if bare {
            text.push_str(
                "(`mmsim run --help` for options, `mmsim scenarios` for more scenarios)\n\n",
            );
        }
    }
    let notes: &[String] = if args.quiet { &[] } else { &plan.notes };
    text.push_str(&mmsim_report::export::run_text::run_report(
        s,
        &result,
        notes,
        args.all_counters,
    ));
    if args.series.is_some() {
        let table = mmsim_report::export::series::SeriesTable::of(&result.result);
        let every = if table.interval_ms >= 1000.0 {
            format!("{} s", table.interval_ms / 1000.0)
        } else {
            format!("{} ms", table.interval_ms)
        };
        text.push_str(&format!(
            "\nCounters over time (every {every} of simulated time):\n"
        ));
        text.push_str(&table.to_text(SERIES_ROWS));
    }
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(outcome)
}

/// Flags given on the command line that the run's policy does not read: a run that
/// ignores a setting says so.
fn ignored_flags(policy: PolicyName, args: &RunArgs) -> Vec<String> {
    let s = &args.scenario;
    let mut flags = Vec::new();
    if policy != PolicyName::Cost {
        if let Some(v) = args.cost_variant {
            flags.push(format!("--cost-variant {v}"));
        }
    }
    if policy != PolicyName::Mglru {
        if let Some(v) = s.mglru_version {
            flags.push(format!("--mglru-version {}", v.name()));
        }
        if let Some(v) = s.min_ttl_ms {
            flags.push(format!("--min-ttl-ms {v}"));
        }
        if let Some(v) = &s.lru_gen_enabled {
            flags.push(format!("--lru-gen-enabled {v}"));
        }
    }
    flags
        .into_iter()
        .map(|f| {
            format!(
                "{f} is ignored: the {} policy does not read it",
                policy.name()
            )
        })
        .collect()
}

/// What stderr says when Ctrl-C stopped a run.
pub fn interrupted_message(s: &Scenario, r: &ScenarioResult) -> String {
    let of = match s.expected_events() {
        Some(total) => format!(" of {total}"),
        None => String::new(),
    };
    format!(
        "interrupted: stopped after {}{of} events; printing the PARTIAL result",
        r.events
    )
}

/// `mmsim scenarios`.
pub fn list_scenarios() -> Result<Outcome> {
    let mut text = String::new();
    let width = EMBEDDED_SCENARIOS
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(0);
    for (name, _) in EMBEDDED_SCENARIOS {
        let s = embedded_scenario(name).expect("embedded")?;
        text.push_str(&format!(
            "{name:<width$}  {}\n",
            s.description.as_deref().unwrap_or("")
        ));
    }
    text.push_str(
        "\nrun one with `mmsim run NAME`; print its TOML with `mmsim run NAME --print-scenario`\n",
    );
    crate::output::stdout().write_all(text.as_bytes())?;
    Ok(Outcome::Complete)
}
