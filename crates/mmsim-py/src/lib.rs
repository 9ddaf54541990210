//! `mmsim._mmsim`: the native module of the `mmsim` Python package (`python/`), a thin
//! PyO3 layer over the library crates. It holds no simulation or report logic of its
//! own: scenarios are built by `mmsim_workloads::scenario::overrides` (as the CLI's
//! `mmsim run` flags build them), comparisons by `mmsim_report::configs` and
//! `mmsim_report::compare` (as `mmsim compare`), trace summaries by
//! `mmsim_report::trace_info` (as `mmsim trace info`), and results are serialized by
//! `mmsim_report::export::json` — so a Python run's JSON is the CLI's `--json` output,
//! byte for byte (but the CLI's host-dependent `host_heap_peak_bytes`).
//!
//! Values arrive as strings (the Python layer formats them) and are parsed with the
//! same `FromStr` implementations the CLI's flags use. Every run releases the GIL
//! (`Python::allow_threads`); while it runs, the GIL is taken back about every 100 ms
//! to deliver signals, so Ctrl-C stops a run (`KeyboardInterrupt`) through the same
//! cancel flag the CLI's Ctrl-C handler raises. Errors are typed Python exceptions
//! carrying mmsim's messages: `ScenarioError` (a scenario, a setting, a machine
//! value), `TraceError` (a trace that cannot be opened or read), both subclasses of
//! `MmsimError`.

// The `#[pyfunction]` expansion of pyo3 0.22 converts each `PyResult` into itself.
#![allow(clippy::useless_conversion)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mmsim_core::{CostVariant, DeviceKind, MglruVersion, PolicyName, Size};
use mmsim_report::compare::{CompareReport, ConfigReport};
use mmsim_report::configs::{self, Axis, AxisFlags};
use mmsim_report::export::json;
use mmsim_report::metrics;
use mmsim_report::trace_info::{self as info, TraceInfoError};
use mmsim_workloads::host::{self, HostLimit, HostMemory};
use mmsim_workloads::scenario::overrides::{self, Base, Overrides};
use mmsim_workloads::{
    run_scenario_cancellable, RunOptions, Scenario, ScenarioResult, Schedule, Target, TraceFormat,
    TraceKeys, WorkloadError, EMBEDDED_SCENARIOS,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;

create_exception!(
    _mmsim,
    MmsimError,
    PyException,
    "Base class of mmsim's errors; the message is mmsim's own."
);
create_exception!(
    _mmsim,
    ScenarioError,
    MmsimError,
    "A scenario, a setting or a machine value is wrong; the message names the file, line \
     or field."
);
create_exception!(
    _mmsim,
    TraceError,
    MmsimError,
    "A trace cannot be opened or read; the message names the file and the record."
);

/// A library error as the Python exception of its kind, with mmsim's message (the
/// whole chain, as the CLI prints it).
fn py_err(e: WorkloadError) -> PyErr {
    match e {
        WorkloadError::Trace { .. } => TraceError::new_err(e.to_string()),
        _ => ScenarioError::new_err(e.to_string()),
    }
}

/// A Python error where the library wants its error type converted.
struct Failed(PyErr);

impl From<WorkloadError> for Failed {
    fn from(e: WorkloadError) -> Self {
        Failed(py_err(e))
    }
}

fn trace_err(e: TraceInfoError) -> PyErr {
    match e {
        TraceInfoError::Usage(m) => ScenarioError::new_err(m),
        TraceInfoError::Trace(e) => TraceError::new_err(e.to_string()),
        TraceInfoError::Cancelled => PyKeyboardInterrupt::new_err("interrupted"),
    }
}

fn parse<T: std::str::FromStr>(key: &str, raw: &str) -> PyResult<T>
where
    T::Err: std::fmt::Display,
{
    raw.parse::<T>()
        .map_err(|e| ScenarioError::new_err(format!("{key}={raw}: {e}")))
}

/// The keyword arguments that are `mmsim run` flags (underscores for dashes; `target`
/// is `--as`), parsed as the flags are.
const FLAGS: &[&str] = &[
    "trace",
    "format",
    "target",
    "limit",
    "keys",
    "memory",
    "memcg_max",
    "swap",
    "swap_size",
    "swappiness",
    "cpus",
    "seed",
    "mglru_version",
    "min_ttl_ms",
    "lru_gen_enabled",
    "policy",
    "cost_variant",
    "schedule",
    "sample",
    "sample_block",
    "host_memory",
];

/// The overrides from `(flag, value)` pairs (flags of [`FLAGS`]).
fn overrides(options: &[(String, String)]) -> PyResult<Overrides> {
    let mut o = Overrides::default();
    for (k, v) in options {
        let v = v.as_str();
        match k.as_str() {
            "trace" => o.trace = Some(PathBuf::from(v)),
            "format" => o.format = Some(parse::<TraceFormat>(k, v)?),
            "target" => o.target = Some(parse::<Target>(k, v)?),
            "limit" => o.limit = Some(parse::<u64>(k, v)?),
            "keys" => o.keys = Some(parse::<TraceKeys>(k, v)?),
            "memory" => o.memory = Some(parse::<Size>(k, v)?),
            "memcg_max" => o.memcg_max = Some(parse::<Size>(k, v)?),
            "swap" => o.swap = Some(parse::<DeviceKind>(k, v)?),
            "swap_size" => o.swap_size = Some(parse::<Size>(k, v)?),
            "swappiness" => o.swappiness = Some(parse::<i64>(k, v)?),
            "cpus" => o.cpus = Some(parse::<i64>(k, v)?),
            "seed" => o.seed = Some(parse::<u64>(k, v)?),
            "mglru_version" => o.mglru_version = Some(parse::<MglruVersion>(k, v)?),
            "min_ttl_ms" => o.min_ttl_ms = Some(parse::<i64>(k, v)?),
            "lru_gen_enabled" => o.lru_gen_enabled = Some(v.to_string()),
            "policy" => o.policy = Some(parse::<PolicyName>(k, v)?),
            "cost_variant" => o.cost_variant = Some(parse::<CostVariant>(k, v)?),
            "schedule" => o.schedule = Some(parse::<Schedule>(k, v)?),
            "sample" => o.sample = Some(parse::<f64>(k, v)?),
            "sample_block" => o.sample_block = Some(parse::<u32>(k, v)?),
            // Not a scenario setting: read by `host_check`.
            "host_memory" => {}
            _ => {
                return Err(ScenarioError::new_err(format!(
                    "{k}: not a run setting ({})",
                    FLAGS.join(", ")
                )))
            }
        }
    }
    Ok(o)
}

/// The base scenario: `kind` is `default`, `named` (a file or an embedded name),
/// `toml` (TOML text) or `json` (a scenario as JSON, from a Python dict).
fn base(kind: &str, text: Option<&str>) -> PyResult<Base> {
    let text = || text.ok_or_else(|| ScenarioError::new_err(format!("{kind}: no scenario")));
    Ok(match kind {
        "default" => Base::Default,
        "named" => Base::Named(PathBuf::from(text()?)),
        "toml" => Base::Given(Box::new(
            Scenario::parse_toml_str(text()?, "<toml>").map_err(py_err)?,
        )),
        "json" => {
            let value: serde_json::Value = serde_json::from_str(text()?)
                .map_err(|e| ScenarioError::new_err(format!("<dict>: {e}")))?;
            let toml_value = toml::Value::try_from(value).map_err(|e| {
                ScenarioError::new_err(format!(
                    "<dict>: not representable as TOML (None values are not): {e}"
                ))
            })?;
            let text = toml::to_string(&toml_value)
                .map_err(|e| ScenarioError::new_err(format!("<dict>: {e}")))?;
            Base::Given(Box::new(
                Scenario::parse_toml_str(&text, "<dict>").map_err(py_err)?,
            ))
        }
        _ => {
            return Err(ScenarioError::new_err(format!(
                "unknown scenario kind {kind}"
            )))
        }
    })
}

/// Refuses a scenario whose host memory estimate does not fit in what this process
/// may use (`mmsim_workloads::host`: `host_memory` from the options, else detected
/// now), as `mmsim run` does before a run; `host_memory="max"` turns the check off.
fn host_check(s: &Scenario, options: &[(String, String)]) -> PyResult<()> {
    let flag = options
        .iter()
        .rev()
        .find(|(k, _)| k == "host_memory")
        .map(|(k, v)| parse::<HostMemory>(k, v))
        .transpose()?;
    let limit = match flag {
        Some(HostMemory::Unlimited) => return Ok(()),
        Some(HostMemory::Limit(size)) => HostLimit {
            bytes: size.bytes(),
            source: format!("host_memory={}", host::gib(size.bytes())),
        },
        None => match host::detect() {
            Some(l) => l,
            None => return Ok(()),
        },
    };
    match host::refusal(s, &limit) {
        None => Ok(()),
        Some(msg) => Err(ScenarioError::new_err(format!(
            "{msg}; host_memory=\"max\" runs it anyway"
        ))),
    }
}

/// The scenario of a run: the base, the flag overrides, then the `[machine]` keys
/// (`sets`, as `mmsim run --set` writes them), validated.
fn build(
    kind: &str,
    text: Option<&str>,
    options: &[(String, String)],
    sets: &[(String, String)],
) -> PyResult<(Scenario, Vec<String>)> {
    let plan = overrides::plan(base(kind, text)?, &overrides(options)?).map_err(py_err)?;
    let mut s = plan.scenario;
    for (key, raw) in sets {
        overrides::apply_set(&mut s.machine, &format!("{key}={raw}")).map_err(py_err)?;
    }
    s.validate().map_err(py_err)?;
    Ok((s, plan.notes))
}

/// Runs `s` with the GIL released; Ctrl-C (a pending signal) cancels it and raises
/// `KeyboardInterrupt`.
fn run_released(py: Python<'_>, s: &Scenario) -> PyResult<ScenarioResult> {
    let cancel = AtomicBool::new(false);
    let signal: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
    let result = py.allow_threads(|| {
        let mut last = Instant::now();
        let mut tick = |_done: u64| {
            if last.elapsed() >= Duration::from_millis(100) {
                last = Instant::now();
                Python::with_gil(|py| {
                    if let Err(e) = py.check_signals() {
                        cancel.store(true, Ordering::Relaxed);
                        *signal.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    }
                });
            }
        };
        let mut opts = RunOptions {
            progress: Some(&mut tick),
            on_batch: None,
        };
        run_scenario_cancellable(s, &mut opts, Some(&cancel))
    });
    if let Some(e) = signal.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    result.map_err(py_err)
}

/// The compared metrics of a result (`mmsim_report::metrics::values`).
fn metric_values(r: &ScenarioResult) -> Vec<(String, Option<f64>)> {
    metrics::values(r).into_iter().collect()
}

/// Runs a scenario: returns (the result as `mmsim run --json` prints it, the compared
/// metrics, the notes about what the overrides did). `trace_label`, when given, is
/// reported as the trace's path (a trace shipped to another machine and opened there
/// under another path keeps the name the user gave).
#[pyfunction]
#[pyo3(signature = (kind, scenario, options, sets, trace_label=None))]
#[allow(clippy::type_complexity)]
fn run(
    py: Python<'_>,
    kind: &str,
    scenario: Option<&str>,
    options: Vec<(String, String)>,
    sets: Vec<(String, String)>,
    trace_label: Option<String>,
) -> PyResult<(String, Vec<(String, Option<f64>)>, Vec<String>)> {
    let (s, notes) = build(kind, scenario, &options, &sets)?;
    host_check(&s, &options)?;
    let mut result = run_released(py, &s)?;
    if let Some(label) = trace_label {
        for t in &mut result.trace {
            t.path = label.clone();
        }
    }
    let text = json::to_string(&result).map_err(|e| MmsimError::new_err(e.to_string()))?;
    Ok((text, metric_values(&result), notes))
}

/// The effective scenario of a run as TOML (what `mmsim run --print-scenario` prints).
#[pyfunction]
#[pyo3(signature = (kind, scenario, options, sets))]
fn scenario_toml(
    kind: &str,
    scenario: Option<&str>,
    options: Vec<(String, String)>,
    sets: Vec<(String, String)>,
) -> PyResult<String> {
    Ok(build(kind, scenario, &options, &sets)?.0.to_toml_string())
}

/// The host memory a run of the scenario needs at most, bytes
/// (`mmsim_workloads::footprint::estimate_host_memory`, what the CLI checks before a
/// run): the memory resource a sweep asks a cluster for.
#[pyfunction]
#[pyo3(signature = (kind, scenario, options, sets))]
fn host_memory_estimate(
    kind: &str,
    scenario: Option<&str>,
    options: Vec<(String, String)>,
    sets: Vec<(String, String)>,
) -> PyResult<u64> {
    let (s, _) = build(kind, scenario, &options, &sets)?;
    Ok(mmsim_workloads::footprint::estimate_host_memory(&s).bytes)
}

/// Compares configurations as `mmsim compare --json` does: `policy`, `cost_variant`
/// and `set` are the axis lists in the flags' syntax, in that order; each
/// configuration runs `repeat` times with seeds seed, seed+1, …. Returns the report's
/// JSON (`mmsim compare --json`) and its table as CSV (`mmsim compare --csv`).
#[pyfunction]
#[pyo3(signature = (kind, scenario, options, policy, cost_variant, set, repeat))]
#[allow(clippy::too_many_arguments)]
fn compare(
    py: Python<'_>,
    kind: &str,
    scenario: Option<&str>,
    options: Vec<(String, String)>,
    policy: Option<String>,
    cost_variant: Option<String>,
    set: Vec<String>,
    repeat: u32,
) -> PyResult<(String, String)> {
    if !(1..=1000).contains(&repeat) {
        return Err(ScenarioError::new_err(format!(
            "repeat={repeat}: out of range [1, 1000]"
        )));
    }
    let o = overrides(&options)?;
    let plan = overrides::plan(base(kind, scenario)?, &o).map_err(py_err)?;
    let base = plan.scenario;
    mmsim_report::published::check_metrics(&base).map_err(|(field, message)| {
        py_err(WorkloadError::Invalid {
            file: base.source.clone(),
            field,
            message,
        })
    })?;
    // Without axes, compare what the scenario's published results compare (as
    // `mmsim compare` does).
    let (policy, cost_variant, set) =
        if policy.is_none() && cost_variant.is_none() && set.is_empty() {
            configs::published_flags(&base.published)
        } else {
            (policy, cost_variant, set)
        };
    let axes = configs::axes(&AxisFlags {
        policy: policy.as_deref(),
        cost_variant: cost_variant.as_deref(),
        set: &set,
        order: None,
    })
    .map_err(py_err)?;
    let fixed = [
        ("memory", o.memory.is_some(), "memory"),
        ("memcg_max", o.memcg_max.is_some(), "memcg_max"),
        ("swap", o.swap.is_some(), "swap"),
        ("swap_size", o.swap_size.is_some(), "swap.size"),
        ("swappiness", o.swappiness.is_some(), "swappiness"),
        ("policy", o.policy.is_some(), "policy.name"),
        (
            "cost_variant",
            o.cost_variant.is_some(),
            "policy.cost_variant",
        ),
    ];
    configs::check_fixed(&axes, &fixed).map_err(py_err)?;
    let configs = configs::configs(
        &base,
        &axes,
        |_, e| Failed(py_err(e)),
        |s| host_check(s, &options).map_err(Failed),
    )
    .map_err(|f| f.0)?;
    let seed = base.seed;
    if seed.checked_add(u64::from(repeat) - 1).is_none() {
        return Err(ScenarioError::new_err(format!(
            "seed {seed} with repeat {repeat}: the seeds seed, seed+1, … overflow"
        )));
    }
    let mut report = CompareReport::new(
        base.name.clone(),
        seed,
        repeat,
        base.warmup_events.unwrap_or(0),
        axes.iter().map(Axis::report).collect(),
    );
    for c in &configs {
        let mut results = Vec::with_capacity(repeat as usize);
        for r in 0..repeat {
            let mut s = c.scenario.clone();
            s.seed = seed + u64::from(r);
            results.push(run_released(py, &s)?);
        }
        report.configs.push(ConfigReport::new(
            c.name.clone(),
            c.settings.clone(),
            &results,
        ));
    }
    report.finish(&base.published);
    let text = json::to_string(&report).map_err(|e| MmsimError::new_err(e.to_string()))?;
    Ok((text, mmsim_report::export::csv::compare_csv(&report)))
}

/// `mmsim trace info --json`'s report (without `schema_version`): footprint, reuse
/// distances and the plain-LRU miss-ratio curve, read once with the GIL released.
#[pyfunction]
#[pyo3(signature = (path, format="auto", sizes=None, limit=None, csv_columns=None, sample=None, sample_size=None))]
#[allow(clippy::too_many_arguments)]
fn trace_info(
    py: Python<'_>,
    path: PathBuf,
    format: &str,
    sizes: Option<Vec<u64>>,
    limit: Option<u64>,
    csv_columns: Option<&str>,
    sample: Option<f64>,
    sample_size: Option<u64>,
) -> PyResult<String> {
    let format: TraceFormat = parse("format", format)?;
    let csv = csv_columns
        .map(|c| parse::<mmsim_trace::CsvSpec>("csv_columns", c))
        .transpose()?;
    info::check_request(limit, sizes.as_deref()).map_err(trace_err)?;
    let sampling = info::Sampling::from_options(sample, sample_size).map_err(trace_err)?;
    let name = path.display().to_string();
    let report = py.allow_threads(|| {
        let reader = info::open(&path, format, csv)?;
        info::trace_info_with(reader, &name, limit, sizes, sampling, None)
    });
    let report = report.map_err(trace_err)?;
    serde_json::to_string(&report).map_err(|e| MmsimError::new_err(e.to_string()))
}

/// The embedded scenarios: (name, description).
#[pyfunction]
fn embedded_scenarios() -> PyResult<Vec<(String, String)>> {
    EMBEDDED_SCENARIOS
        .iter()
        .map(|(name, _)| {
            let s = mmsim_workloads::embedded_scenario(name)
                .ok_or_else(|| ScenarioError::new_err(format!("{name}: not embedded")))?
                .map_err(py_err)?;
            Ok((name.to_string(), s.description.unwrap_or_default()))
        })
        .collect()
}

/// The compared metrics: (name, what it is).
#[pyfunction]
fn metric_infos() -> Vec<(String, String)> {
    metrics::METRICS
        .iter()
        .map(|m| (m.name.to_string(), m.about.to_string()))
        .collect()
}

/// The run flags the keyword arguments take as such.
#[pyfunction]
fn run_flags() -> Vec<&'static str> {
    FLAGS.to_vec()
}

/// The native module.
#[pymodule]
fn _mmsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("MmsimError", py.get_type_bound::<MmsimError>())?;
    m.add("ScenarioError", py.get_type_bound::<ScenarioError>())?;
    m.add("TraceError", py.get_type_bound::<TraceError>())?;
    m.add("SCHEMA_VERSION", mmsim_workloads::SCHEMA_VERSION)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_toml, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(host_memory_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(embedded_scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(metric_infos, m)?)?;
    m.add_function(wrap_pyfunction!(run_flags, m)?)?;
    Ok(())
}
