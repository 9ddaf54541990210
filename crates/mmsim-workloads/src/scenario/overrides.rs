//! The scenario a front end runs: a named, given or default scenario (or just a trace),
//! with the machine and seed overrides a user gives on top — the `mmsim run` flags,
//! Python's keyword arguments, a sweep point. The one place they are applied, so the
//! CLI and the Python package build the same scenario from the same settings, bit for
//! bit.
//!
//! [`plan`] loads the base ([`Base`]) and applies the [`Overrides`] in a fixed order
//! (trace, memory, memcg limit, CPUs, swappiness, swap, the zram swap an anonymous
//! trace gets, seed, schedule, MGLRU knobs, policy and cost variant); [`set_machine`] writes one
//! `[machine]` key as a scenario file would (what `mmsim compare --set` and sweep keys
//! use), with [`toml_value`] reading a typed-in value as TOML does. Nothing is validated
//! here: the caller may change more and then calls [`Scenario::validate`].

use std::path::{Path, PathBuf};

use mmsim_core::{
    CostVariant, DeviceConfig, DeviceKind, MachineConfig, MglruVersion, PolicyName, Size,
};

use super::{Scenario, Schedule, Target, TraceFormat, TraceKeys, WorkloadKind, WorkloadSpec};
use crate::{default_scenario, embedded_scenario, WorkloadError, EMBEDDED_SCENARIOS};

/// Memory of the machine of a trace run without a scenario: large, so that only
/// the memory cgroup limit limits.
pub const TRACE_MEMORY: Size = Size(16 << 30);
/// Swap size when a swap device is given without a size (and the scenario has none).
pub const DEFAULT_SWAP: Size = Size(4 << 30);

/// The scenario the overrides apply to.
#[derive(Clone, Debug, Default)]
pub enum Base {
    /// The embedded default scenario, or with a trace override just the trace on a
    /// [`TRACE_MEMORY`] machine.
    #[default]
    Default,
    /// A scenario file, or else the name of an embedded scenario ([`load_named`]).
    Named(PathBuf),
    /// A scenario already read (from TOML text, a dictionary, …).
    Given(Box<Scenario>),
}

/// Settings that override the base scenario's, each absent when not given. Values keep
/// the type a user typed (signed counts), so a negative number is reported as out of
/// range rather than wrapped.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// Replay this trace instead of the scenario's workloads.
    pub trace: Option<PathBuf>,
    /// The trace's format (default: detected).
    pub format: Option<TraceFormat>,
    /// Where the trace's pages live (default: file).
    pub target: Option<Target>,
    /// Replay at most this many references.
    pub limit: Option<u64>,
    /// How the trace's keys become pages (default `dense`).
    pub keys: Option<TraceKeys>,
    /// `trace_requests`: a multi-page request replayed as one read or write.
    pub requests: bool,
    /// `machine.memory`.
    pub memory: Option<Size>,
    /// `machine.memcg_max`.
    pub memcg_max: Option<Size>,
    /// The swap device (`none` removes swap).
    pub swap: Option<DeviceKind>,
    /// The swap size.
    pub swap_size: Option<Size>,
    /// `machine.swappiness`, 0..=200.
    pub swappiness: Option<i64>,
    /// `machine.cpus`, 1..=4096.
    pub cpus: Option<i64>,
    /// The workloads' seed.
    pub seed: Option<u64>,
    /// `machine.policy.mglru_version`.
    pub mglru_version: Option<MglruVersion>,
    /// `machine.policy.min_ttl_ms`.
    pub min_ttl_ms: Option<i64>,
    /// `machine.policy.lru_gen_enabled` as written to /sys/kernel/mm/lru_gen/enabled.
    pub lru_gen_enabled: Option<String>,
    /// `machine.policy.name`.
    pub policy: Option<PolicyName>,
    /// `machine.policy.cost_variant`.
    pub cost_variant: Option<CostVariant>,
    /// A sampled run's rate (`[sample] rate`, `--sample`; see `crate::sample`).
    pub sample: Option<f64>,
    /// A sampled run's block in pages (`[sample] block_pages`, `--sample-block`).
    pub sample_block: Option<u32>,
    /// How the workloads of a phase share the machine (`schedule`, `--schedule`).
    pub schedule: Option<Schedule>,
}

/// The scenario to run and notes about what the overrides changed.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The scenario with the overrides applied (not yet validated).
    pub scenario: Scenario,
    /// Whether it is the embedded default scenario (no scenario or trace was named).
    pub is_default: bool,
    /// What the overrides did besides the obvious (shown with the result).
    pub notes: Vec<String>,
}

fn usage(msg: impl Into<String>) -> WorkloadError {
    WorkloadError::Usage(msg.into())
}

/// Loads a scenario named by a user: a file, else an embedded scenario's name.
pub fn load_named(arg: &Path) -> Result<Scenario, WorkloadError> {
    if !arg.exists() {
        if let Some(name) = arg.to_str() {
            if let Some(s) = embedded_scenario(name) {
                return s;
            }
        }
        if arg.extension().is_none() && arg.components().count() == 1 {
            let names: Vec<&str> = EMBEDDED_SCENARIOS.iter().map(|(n, _)| *n).collect();
            return Err(usage(format!(
                "{}: no such scenario file, and not an embedded scenario ({})",
                arg.display(),
                names.join(", ")
            )));
        }
    }
    Scenario::parse_file(arg)
}

/// Builds the scenario: loads the base, applies the overrides. Errors name the setting
/// as the CLI flag that gives it (`--swappiness 300: machine.swappiness: …`).
pub fn plan(base: Base, o: &Overrides) -> Result<Plan, WorkloadError> {
    let mut notes = Vec::new();
    let from_scenario = !matches!(base, Base::Default);
    let (mut scenario, is_default) = match (base, &o.trace) {
        (Base::Named(path), _) => (load_named(&path)?, false),
        (Base::Given(s), _) => (*s, false),
        (Base::Default, Some(_)) => {
            let machine = MachineConfig {
                memory: TRACE_MEMORY,
                ..MachineConfig::default()
            };
            (Scenario::new("trace", machine, Vec::new()), false)
        }
        (Base::Default, None) => (default_scenario(), true),
    };

    if let Some(trace) = &o.trace {
        let target = o.target.unwrap_or(Target::File);
        let mut w = WorkloadSpec::trace(trace, o.format.unwrap_or_default(), target);
        if let WorkloadKind::Trace {
            limit,
            keys,
            requests,
            ..
        } = &mut w.kind
        {
            *limit = o.limit;
            *keys = o.keys.unwrap_or_default();
            *requests = o.requests;
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
    if let Some(mem) = o.memory {
        m.memory = mem;
    }
    if let Some(max) = o.memcg_max {
        m.memcg_max = Some(max);
    }
    if let Some(c) = o.cpus {
        // Checked here, with the value as typed: a negative count would reach the
        // scenario's validation as a wrapped u32.
        if !(1..=4096).contains(&c) {
            return Err(usage(format!(
                "--cpus {c}: machine.cpus: {c} is out of range [1, 4096]"
            )));
        }
        m.cpus = c as u32;
    }
    if let Some(s) = o.swappiness {
        m.swappiness = u32::try_from(s).unwrap_or(u32::MAX);
        if !(0..=200).contains(&s) {
            return Err(usage(format!(
                "--swappiness {s}: machine.swappiness: {s} is out of range [0, 200]"
            )));
        }
    }
    if let Some(kind) = o.swap {
        if kind == DeviceKind::None {
            if o.swap_size.is_some() {
                return Err(usage("--swap-size with --swap none: give a swap device"));
            }
            m.swap = DeviceConfig::of(DeviceKind::None);
        } else {
            let size = o.swap_size.or(m.swap.size).unwrap_or(DEFAULT_SWAP);
            m.swap = DeviceConfig {
                size: Some(size),
                ..DeviceConfig::of(kind)
            };
        }
    } else if let Some(size) = o.swap_size {
        if m.swap.device == DeviceKind::None {
            return Err(usage(
                "--swap-size: the machine has no swap device; add --swap zram|ssd|hdd",
            ));
        }
        m.swap.size = Some(size);
    }
    let anon_trace = o.trace.is_some() && o.target == Some(Target::Anon);
    if anon_trace && o.swap.is_none() && m.swap.device == DeviceKind::None {
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
    if let Some(seed) = o.seed {
        scenario.seed = seed;
    }
    if let Some(schedule) = o.schedule {
        scenario.schedule = schedule;
    }
    let m = &mut scenario.machine;
    if let Some(v) = o.mglru_version {
        m.policy.mglru_version = v;
    }
    if let Some(ms) = o.min_ttl_ms {
        m.policy.min_ttl_ms = u64::try_from(ms).map_err(|_| {
            usage(format!(
                "--min-ttl-ms {ms}: machine.policy.min_ttl_ms: {ms} is out of range [0, 4294967295]"
            ))
        })?;
    }
    if let Some(raw) = &o.lru_gen_enabled {
        m.policy.lru_gen_enabled = parse_lru_gen_enabled(raw).ok_or_else(|| {
            usage(format!(
                "--lru-gen-enabled {raw}: machine.policy.lru_gen_enabled: expected y, n or a \
                 number in [0, 0x7] (bits: 0 core, 1 mm walk, 2 non-leaf young)"
            ))
        })?;
    }
    if let Some(p) = o.policy {
        m.policy.name = p;
    }
    if let Some(v) = o.cost_variant {
        m.policy.cost_variant = v;
    }
    if let Some(rate) = o.sample {
        let spec = crate::sample::SampleSpec {
            rate,
            block_pages: o
                .sample_block
                .or(scenario.sample.and_then(|x| x.block_pages)),
        };
        spec.validate().map_err(|(f, m)| {
            let flag = match o.sample_block {
                Some(b) if f == "sample.block_pages" => format!("--sample-block {b}"),
                _ => format!("--sample {rate}"),
            };
            usage(format!("{flag}: {f}: {m}"))
        })?;
        scenario.sample = Some(spec);
    } else if let Some(b) = o.sample_block {
        let Some(spec) = &mut scenario.sample else {
            return Err(usage(
                "--sample-block: the run is not sampled; give --sample RATE",
            ));
        };
        spec.block_pages = Some(b);
        spec.validate()
            .map_err(|(f, m)| usage(format!("--sample-block {b}: {f}: {m}")))?;
    }
    if scenario.source.is_empty() {
        scenario.source = "command line".into();
    }
    Ok(Plan {
        scenario,
        is_default,
        notes,
    })
}

/// `/sys/kernel/mm/lru_gen/enabled` as written: `y`/`Y` (all), `n`/`N` (none), or a
/// number (decimal or 0x hex); the range is checked by validation.
pub fn parse_lru_gen_enabled(raw: &str) -> Option<u32> {
    match raw.trim() {
        "y" | "Y" => Some(7),
        "n" | "N" => Some(0),
        t => match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => t.parse().ok(),
        },
    }
}

/// A typed-in value as TOML reads it: an integer, float or boolean, a quoted string, or
/// else the text as a string (`6G`, `zram`).
pub fn toml_value(raw: &str) -> toml::Value {
    match format!("v = {raw}").parse::<toml::Table>() {
        Ok(mut t) => match t.remove("v") {
            Some(
                v @ (toml::Value::Integer(_)
                | toml::Value::Float(_)
                | toml::Value::Boolean(_)
                | toml::Value::String(_)),
            ) => v,
            _ => toml::Value::String(raw.to_string()),
        },
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

/// The `[machine]` key of a `--set` (`what` names the flag for errors): a `machine.`
/// prefix dropped, each dotted part letters, digits, `_` or `-`.
pub fn machine_key<'a>(what: &str, key: &'a str) -> Result<&'a str, WorkloadError> {
    let key = key.trim();
    let key = key.strip_prefix("machine.").unwrap_or(key);
    let well_formed = key.split('.').all(|p| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    });
    if !well_formed {
        return Err(usage(format!(
            "{what}: `{key}` is not a [machine] key; keys are like swappiness, memory, \
             page_cluster, swap.device"
        )));
    }
    Ok(key)
}

/// Applies `mmsim run --set KEY=VALUE` to `machine`: the value read as TOML reads it
/// ([`toml_value`]) and written at the key ([`set_machine`]); errors name the flag and
/// the field.
pub fn apply_set(machine: &mut MachineConfig, raw: &str) -> Result<(), WorkloadError> {
    let what = format!("--set {raw}");
    let Some((key, value)) = raw.split_once('=') else {
        return Err(usage(format!(
            "{what}: expected KEY=VALUE with a [machine] key, e.g. page_cluster=0"
        )));
    };
    let key = machine_key(&what, key)?;
    let value = value.trim();
    *machine = set_machine(machine, key, &toml_value(value))
        .map_err(|e| usage(format!("--set {key}={value}: machine.{key}: {e}")))?;
    Ok(())
}

/// `machine` with `[machine] path = value` (`path` dotted for sub-tables:
/// `swap.device`), read back as the scenario reader reads it; the error is the reader's
/// message (an unknown key lists the allowed ones).
pub fn set_machine(
    m: &MachineConfig,
    path: &str,
    value: &toml::Value,
) -> Result<MachineConfig, String> {
    let mut root = toml::Table::try_from(m).map_err(|e| e.to_string())?;
    let parts: Vec<&str> = path.split('.').collect();
    let (last, tables) = parts.split_last().ok_or("empty key")?;
    let mut t = &mut root;
    for (i, p) in tables.iter().enumerate() {
        let entry = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        t = match entry {
            toml::Value::Table(t) => t,
            _ => {
                return Err(format!(
                    "`{}` is a value, not a table",
                    parts[..=i].join(".")
                ))
            }
        };
    }
    t.insert(last.to_string(), value.clone());
    toml::Value::Table(root)
        .try_into::<MachineConfig>()
        .map_err(|e| e.message().trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_values_are_typed_as_toml_reads_them() {
        assert_eq!(toml_value("60"), toml::Value::Integer(60));
        assert_eq!(toml_value("0.5"), toml::Value::Float(0.5));
        assert_eq!(toml_value("true"), toml::Value::Boolean(true));
        assert_eq!(toml_value("6G"), toml::Value::String("6G".into()));
        assert_eq!(toml_value("\"60\""), toml::Value::String("60".into()));
        assert_eq!(toml_value("zram"), toml::Value::String("zram".into()));
    }

    #[test]
    fn set_machine_round_trips_every_embedded_machine() {
        for (name, _) in EMBEDDED_SCENARIOS {
            let s = embedded_scenario(name).unwrap().unwrap();
            let m = &s.machine;
            let same = set_machine(m, "swappiness", &toml::Value::Integer(m.swappiness.into()));
            assert_eq!(same.as_ref(), Ok(m), "{name}");
        }
        let m = MachineConfig::default();
        let z = set_machine(&m, "swap.device", &toml_value("zram")).unwrap();
        assert_eq!(z.swap.device, DeviceKind::Zram);
        let e = set_machine(&m, "swapiness", &toml_value("1")).unwrap_err();
        assert!(e.contains("unknown field `swapiness`"), "{e}");
        let e = set_machine(&m, "swappiness.x", &toml_value("1")).unwrap_err();
        assert!(e.contains("`swappiness` is a value"), "{e}");
    }

    #[test]
    fn apply_set_writes_a_machine_key_or_names_the_flag() {
        let mut m = MachineConfig::default();
        apply_set(&mut m, "page_cluster=0").unwrap();
        apply_set(&mut m, "machine.swap.device = zram").unwrap();
        assert_eq!(m.page_cluster, 0);
        assert_eq!(m.swap.device, DeviceKind::Zram);
        let e = apply_set(&mut m, "page_cluster").unwrap_err().to_string();
        assert_eq!(
            e,
            "--set page_cluster: expected KEY=VALUE with a [machine] key, e.g. page_cluster=0"
        );
        let e = apply_set(&mut m, "swapiness=1").unwrap_err().to_string();
        assert!(
            e.starts_with("--set swapiness=1: machine.swapiness: unknown field `swapiness`"),
            "{e}"
        );
        let e = apply_set(&mut m, "a..b=1").unwrap_err().to_string();
        assert!(e.contains("`a..b` is not a [machine] key"), "{e}");
    }

    #[test]
    fn overrides_apply_in_order_and_check_ranges() {
        let o = Overrides {
            trace: Some("t.lis".into()),
            target: Some(Target::Anon),
            memory: Some(Size(64 << 20)),
            seed: Some(9),
            policy: Some(PolicyName::Mglru),
            schedule: Some(Schedule::Fair),
            ..Overrides::default()
        };
        let p = plan(Base::Default, &o).unwrap();
        assert!(!p.is_default);
        let m = &p.scenario.machine;
        assert_eq!(m.memory, Size(64 << 20));
        // An anonymous trace without swap gets zram of the machine's memory.
        assert_eq!(m.swap.device, DeviceKind::Zram);
        assert_eq!(m.swap.size, Some(Size(64 << 20)));
        assert_eq!(m.policy.name, PolicyName::Mglru);
        assert_eq!(p.scenario.seed, 9);
        assert_eq!(p.scenario.schedule, Schedule::Fair);
        assert_eq!(p.scenario.workloads[0].name.as_deref(), Some("t.lis"));
        assert_eq!(p.notes.len(), 1, "{:?}", p.notes);

        let bad = Overrides {
            swappiness: Some(201),
            ..Overrides::default()
        };
        let e = plan(Base::Default, &bad).unwrap_err().to_string();
        assert_eq!(
            e,
            "--swappiness 201: machine.swappiness: 201 is out of range [0, 200]"
        );
        let e = plan(Base::Named("no-such-name".into()), &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("no-such-name: no such scenario file"), "{e}");
        assert!(
            plan(Base::Default, &Overrides::default())
                .unwrap()
                .is_default
        );
    }
}
