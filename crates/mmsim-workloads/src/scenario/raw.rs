//! The TOML shape of a workload: one flat `[[workload]]` table, checked against its
//! kind ([`KindName`]'s required and optional fields), and converted to and from a
//! [`WorkloadSpec`]; the TOML shape of a whole scenario ([`ScenarioToml`]).

use std::fmt;
use std::path::PathBuf;

use mmsim_core::{Advice, MachineConfig, Size};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{
    default_seed, LruGenWrite, Scenario, Target, TraceFaults, TraceFormat, TraceKeys, WorkloadKind,
    WorkloadSpec, ZipfSampler,
};
use crate::cgroups::{CgroupChange, CgroupCycle, CgroupSpec};
use crate::models::dd::DdSpec;
use crate::models::eater::{EaterPattern, EaterSpec};
use crate::models::fio::{FioDistribution, FioRw, FioSpec};
use crate::models::kbuild::KbuildSpec;
use crate::models::kv::{KeyPattern, KvRatio, KvSpec};
use crate::models::pgbench::{PgbenchScript, PgbenchSpec};
use crate::models::tabs::TabsSpec;
use crate::models::{self, Model};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum KindName {
    Uniform,
    Zipf,
    Sequential,
    Loop,
    HotCold,
    Touch,
    Trace,
    Fio,
    Kv,
    Pgbench,
    Dd,
    Eater,
    Kbuild,
    Tabs,
}

impl KindName {
    pub(super) fn is_model(self) -> bool {
        matches!(
            self,
            KindName::Fio
                | KindName::Kv
                | KindName::Pgbench
                | KindName::Dd
                | KindName::Eater
                | KindName::Kbuild
                | KindName::Tabs
        )
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            KindName::Uniform => "uniform",
            KindName::Zipf => "zipf",
            KindName::Sequential => "sequential",
            KindName::Loop => "loop",
            KindName::HotCold => "hot-cold",
            KindName::Touch => "touch",
            KindName::Trace => "trace",
            KindName::Fio => FioSpec::KIND,
            KindName::Kv => KvSpec::KIND,
            KindName::Pgbench => PgbenchSpec::KIND,
            KindName::Dd => DdSpec::KIND,
            KindName::Eater => EaterSpec::KIND,
            KindName::Kbuild => KbuildSpec::KIND,
            KindName::Tabs => TabsSpec::KIND,
        }
    }

    /// (required, optional) fields of the kind besides the common ones.
    fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            KindName::Uniform => (&["pages", "accesses"], &[]),
            KindName::Zipf => (&["pages", "theta", "accesses"], &["scatter", "sampler"]),
            KindName::Sequential => (&["pages"], &["passes"]),
            KindName::Loop => (&["pages"], &["iterations"]),
            KindName::HotCold => (
                &["pages", "hot_fraction", "hot_probability", "accesses"],
                &[],
            ),
            KindName::Touch => (
                &["pages"],
                &[
                    "stride",
                    "collapse",
                    "passes",
                    "unmap",
                    "remap",
                    "fork_writes",
                    "touched",
                    "skip_every",
                    "skip_offset",
                    "advise_after",
                    "snapshots",
                ],
            ),
            KindName::Trace => (
                &["path"],
                &[
                    "format",
                    "limit",
                    "pages",
                    "trace_keys",
                    "trace_requests",
                    "trace_faults",
                    "trace_fault_mappings",
                    "trace_read_calls",
                ],
            ),
            KindName::Fio => models::fields_of::<FioSpec>(),
            KindName::Kv => models::fields_of::<KvSpec>(),
            KindName::Pgbench => models::fields_of::<PgbenchSpec>(),
            KindName::Dd => models::fields_of::<DdSpec>(),
            KindName::Eater => models::fields_of::<EaterSpec>(),
            KindName::Tabs => models::fields_of::<TabsSpec>(),
            KindName::Kbuild => models::fields_of::<KbuildSpec>(),
        }
    }

    /// The common fields the kind takes.
    fn common(self) -> &'static str {
        match self {
            KindName::Eater | KindName::Tabs => {
                "name, phase, weight, advice, start, cgroup, exit, write_ratio"
            }
            k if k.is_model() => "name, phase, weight, advice, start, cgroup, exit",
            _ => {
                "name, target, write_ratio, phase, weight, advice, thp_advice, opens, open_offsets, start, \
                 cgroup, exit"
            }
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWorkload {
    kind: KindName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target: Option<Target>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    write_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    phase: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    weight: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    advice: Option<Advice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thp_advice: Option<mmsim_core::VmaThpAdvice>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_time",
        serialize_with = "ser_opt_time",
        skip_serializing_if = "Option::is_none"
    )]
    start: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cgroup: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    exit: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    opens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    open_offsets: Option<super::OpenOffsets>,
    #[serde(
        default,
        deserialize_with = "de_opt_pages",
        skip_serializing_if = "Option::is_none"
    )]
    pages: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    accesses: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    theta: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scatter: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sampler: Option<ZipfSampler>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    passes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    iterations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hot_fraction: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hot_probability: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    format: Option<TraceFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limit: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace_keys: Option<TraceKeys>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace_requests: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace_faults: Option<TraceFaults>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace_fault_mappings: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace_read_calls: Option<bool>,
    // fio
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rw: Option<FioRw>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    bs: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    numjobs: Option<u32>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nrfiles: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shared_file: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ios: Option<u64>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    io_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rwmixread: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    random_distribution: Option<FioDistribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    norandommap: Option<bool>,
    // kv
    #[serde(default, skip_serializing_if = "Option::is_none")]
    keys: Option<u64>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    value_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gets: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key_pattern: Option<KeyPattern>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key_stddev: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key_median: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ratio: Option<KvRatio>,
    // pgbench
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scale: Option<u32>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    shared_buffers: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    transactions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    wal_pages: Option<u32>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    max_wal_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    script: Option<PgbenchScript>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    clients: Option<u32>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    backend_memory: Option<u64>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    binary_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    full_page_writes: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fsync: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tps: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bgwriter_delay: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bgwriter_lru_maxpages: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bgwriter_lru_multiplier: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shutdown_checkpoint: Option<bool>,
    // dd
    #[serde(default, skip_serializing_if = "Option::is_none")]
    count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read: Option<bool>,
    // eater
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pattern: Option<EaterPattern>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    collapse: Option<bool>,
    // tabs
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tabs: Option<u64>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    tab_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    switches: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    touches: Option<u64>,
    // touch
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stride: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unmap: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    remap: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fork_writes: Option<u64>,
    #[serde(
        default,
        deserialize_with = "de_opt_pages",
        skip_serializing_if = "Option::is_none"
    )]
    touched: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skip_every: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skip_offset: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    advise_after: Option<mmsim_core::VmaThpAdvice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    snapshots: Option<Vec<f64>>,
    // kbuild
    #[serde(default, skip_serializing_if = "Option::is_none")]
    jobs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    units: Option<u64>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    source_size: Option<u64>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    headers: Option<u64>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    header_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    includes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    header_theta: Option<f64>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    cc_mem: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cc_passes: Option<u32>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_bytes",
        serialize_with = "ser_opt_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    object_size: Option<u64>,
    #[serde(
        default,
        deserialize_with = "models::de_opt_time",
        serialize_with = "ser_opt_time",
        skip_serializing_if = "Option::is_none"
    )]
    cpu: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cc_exit: Option<bool>,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// A byte count as fio writes it (`4k`, `1408m`) or plain bytes.
fn ser_opt_bytes<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(b) if *b >= 1024 && b % 1024 == 0 => s.serialize_str(&models::format_bytes(*b)),
        Some(b) => s.serialize_u64(*b),
        None => s.serialize_none(),
    }
}

/// A time as a string with a unit (`500ms`).
fn ser_opt_time<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(ns) => s.serialize_str(&models::format_time(*ns)),
        None => s.serialize_none(),
    }
}

/// A page count: a non-negative integer (pages) or a size string (`"512M"`, `"100p"`).
fn de_opt_pages<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a number of pages or a size such as \"512M\" or \"100p\"")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::custom(format!("{v} pages is negative")))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<u64, E> {
            let size: Size = v.parse().map_err(E::custom)?;
            if size.pages() == 0 {
                return Err(E::custom(format!("size `{v}` is less than one 4 KiB page")));
            }
            Ok(size.pages())
        }
    }
    d.deserialize_any(V).map(Some)
}

/// A workload table that does not fit its kind: the field concerned (None: the table) and
/// what is wrong.
pub(super) struct KindError {
    pub(super) field: Option<&'static str>,
    pub(super) message: String,
}

impl TryFrom<RawWorkload> for WorkloadSpec {
    type Error = String;

    fn try_from(r: RawWorkload) -> Result<WorkloadSpec, String> {
        convert(r).map_err(|e| e.message)
    }
}

pub(super) fn convert(r: RawWorkload) -> Result<WorkloadSpec, KindError> {
    let kind = r.kind;
    let present: [(&'static str, bool); 86] = [
        ("pages", r.pages.is_some()),
        ("accesses", r.accesses.is_some()),
        ("theta", r.theta.is_some()),
        ("scatter", r.scatter.is_some()),
        ("sampler", r.sampler.is_some()),
        ("passes", r.passes.is_some()),
        ("iterations", r.iterations.is_some()),
        ("hot_fraction", r.hot_fraction.is_some()),
        ("hot_probability", r.hot_probability.is_some()),
        ("path", r.path.is_some()),
        ("format", r.format.is_some()),
        ("limit", r.limit.is_some()),
        ("trace_keys", r.trace_keys.is_some()),
        ("trace_requests", r.trace_requests.is_some()),
        ("trace_faults", r.trace_faults.is_some()),
        ("trace_fault_mappings", r.trace_fault_mappings.is_some()),
        ("trace_read_calls", r.trace_read_calls.is_some()),
        ("rw", r.rw.is_some()),
        ("bs", r.bs.is_some()),
        ("numjobs", r.numjobs.is_some()),
        ("size", r.size.is_some()),
        ("nrfiles", r.nrfiles.is_some()),
        ("shared_file", r.shared_file.is_some()),
        ("ios", r.ios.is_some()),
        ("io_size", r.io_size.is_some()),
        ("rwmixread", r.rwmixread.is_some()),
        ("random_distribution", r.random_distribution.is_some()),
        ("norandommap", r.norandommap.is_some()),
        ("keys", r.keys.is_some()),
        ("value_size", r.value_size.is_some()),
        ("gets", r.gets.is_some()),
        ("key_pattern", r.key_pattern.is_some()),
        ("key_stddev", r.key_stddev.is_some()),
        ("key_median", r.key_median.is_some()),
        ("ratio", r.ratio.is_some()),
        ("scale", r.scale.is_some()),
        ("shared_buffers", r.shared_buffers.is_some()),
        ("transactions", r.transactions.is_some()),
        ("wal_pages", r.wal_pages.is_some()),
        ("max_wal_size", r.max_wal_size.is_some()),
        ("script", r.script.is_some()),
        ("clients", r.clients.is_some()),
        ("backend_memory", r.backend_memory.is_some()),
        ("binary_size", r.binary_size.is_some()),
        ("full_page_writes", r.full_page_writes.is_some()),
        ("fsync", r.fsync.is_some()),
        ("tps", r.tps.is_some()),
        ("bgwriter_delay", r.bgwriter_delay.is_some()),
        ("bgwriter_lru_maxpages", r.bgwriter_lru_maxpages.is_some()),
        (
            "bgwriter_lru_multiplier",
            r.bgwriter_lru_multiplier.is_some(),
        ),
        ("shutdown_checkpoint", r.shutdown_checkpoint.is_some()),
        ("count", r.count.is_some()),
        ("read", r.read.is_some()),
        ("pattern", r.pattern.is_some()),
        ("rate", r.rate.is_some()),
        ("collapse", r.collapse.is_some()),
        ("tabs", r.tabs.is_some()),
        ("tab_size", r.tab_size.is_some()),
        ("switches", r.switches.is_some()),
        ("touches", r.touches.is_some()),
        ("stride", r.stride.is_some()),
        ("unmap", r.unmap.is_some()),
        ("remap", r.remap.is_some()),
        ("fork_writes", r.fork_writes.is_some()),
        ("touched", r.touched.is_some()),
        ("skip_every", r.skip_every.is_some()),
        ("skip_offset", r.skip_offset.is_some()),
        ("advise_after", r.advise_after.is_some()),
        ("snapshots", r.snapshots.is_some()),
        ("jobs", r.jobs.is_some()),
        ("units", r.units.is_some()),
        ("source_size", r.source_size.is_some()),
        ("headers", r.headers.is_some()),
        ("header_size", r.header_size.is_some()),
        ("includes", r.includes.is_some()),
        ("header_theta", r.header_theta.is_some()),
        ("cc_mem", r.cc_mem.is_some()),
        ("cc_passes", r.cc_passes.is_some()),
        ("object_size", r.object_size.is_some()),
        ("cpu", r.cpu.is_some()),
        ("cc_exit", r.cc_exit.is_some()),
        // Common fields that only some kinds take.
        ("target", r.target.is_some()),
        ("write_ratio", r.write_ratio.is_some()),
        ("thp_advice", r.thp_advice.is_some()),
        ("opens", r.opens.is_some()),
        ("open_offsets", r.open_offsets.is_some()),
    ];
    let (required, optional) = kind.fields();
    let model = kind.is_model();
    for (field, is) in present {
        let common_ok = match field {
            "target" | "thp_advice" | "opens" | "open_offsets" => !model,
            "write_ratio" => !model || matches!(kind, KindName::Eater | KindName::Tabs),
            _ => false,
        };
        if is && !common_ok && !required.contains(&field) && !optional.contains(&field) {
            let all: Vec<&str> = required.iter().chain(optional).copied().collect();
            let hint = match field {
                "target" | "thp_advice" | "opens" | "open_offsets" => {
                    " (a model knows which files and mappings it uses)"
                }
                "write_ratio" => match kind {
                    KindName::Fio => " (use rw)",
                    KindName::Kv => " (use ratio)",
                    KindName::Dd => " (use read)",
                    _ => "",
                },
                _ => "",
            };
            return Err(KindError {
                field: Some(field),
                message: format!(
                    "field `{field}` does not apply to kind `{}`{hint} (its fields: {}; \
                     common: {})",
                    kind.name(),
                    all.join(", "),
                    kind.common()
                ),
            });
        }
    }
    if !model && r.target.is_none() {
        return Err(KindError {
            field: None,
            message: format!(
                "kind `{}` needs the field `target` (anon, file, mmap, mmap-private or mmap-exec)",
                kind.name()
            ),
        });
    }
    for field in required {
        if !present.iter().any(|(f, is)| f == field && *is) {
            return Err(KindError {
                field: None,
                message: format!(
                    "kind `{}` needs the field `{field}` (its fields: {})",
                    kind.name(),
                    required.join(", ")
                ),
            });
        }
    }
    // The checks above make every default below unused.
    let pages = r.pages.unwrap_or(0);
    let accesses = r.accesses.unwrap_or(0);
    let kind = match kind {
        KindName::Uniform => WorkloadKind::Uniform { pages, accesses },
        KindName::Zipf => WorkloadKind::Zipf {
            pages,
            theta: r.theta.unwrap_or(0.0),
            accesses,
            scatter: r.scatter.unwrap_or(true),
            sampler: r.sampler.unwrap_or_default(),
        },
        KindName::Sequential => WorkloadKind::Sequential {
            pages,
            passes: r.passes.unwrap_or(1),
        },
        KindName::Loop => WorkloadKind::Loop {
            pages,
            iterations: r.iterations.unwrap_or(1),
        },
        KindName::HotCold => WorkloadKind::HotCold {
            pages,
            hot_fraction: r.hot_fraction.unwrap_or(0.0),
            hot_probability: r.hot_probability.unwrap_or(0.0),
            accesses,
        },
        KindName::Touch => WorkloadKind::Touch {
            pages,
            stride: r.stride.unwrap_or(1),
            collapse: r.collapse.unwrap_or(false),
            passes: r.passes.unwrap_or(1),
            unmap: r.unmap.unwrap_or(false),
            remap: r.remap.unwrap_or(false),
            fork_writes: r.fork_writes,
            touched: r.touched,
            skip_every: r.skip_every,
            skip_offset: r.skip_offset.unwrap_or(0),
            advise_after: r.advise_after,
            snapshots: r.snapshots.unwrap_or_default(),
        },
        KindName::Trace => WorkloadKind::Trace {
            path: r.path.unwrap_or_default(),
            format: r.format.unwrap_or_default(),
            limit: r.limit,
            pages: r.pages,
            keys: r.trace_keys.unwrap_or_default(),
            requests: r.trace_requests.unwrap_or(false),
            faults: r.trace_faults.unwrap_or_default(),
            fault_mappings: r.trace_fault_mappings.unwrap_or(1),
            read_calls: r.trace_read_calls.unwrap_or(false),
        },
        KindName::Fio => WorkloadKind::Fio(FioSpec {
            rw: r.rw.unwrap_or(FioRw::Read),
            bs: r.bs.unwrap_or(models::PAGE),
            numjobs: r.numjobs.unwrap_or(1),
            size: r.size.unwrap_or(0),
            nrfiles: r.nrfiles.unwrap_or(1),
            shared_file: r.shared_file.unwrap_or(false),
            ios: r.ios,
            io_size: r.io_size,
            rwmixread: r.rwmixread,
            random_distribution: r.random_distribution.unwrap_or_default(),
            norandommap: r.norandommap.unwrap_or(false),
        }),
        KindName::Kv => WorkloadKind::Kv(KvSpec {
            keys: r.keys.unwrap_or(0),
            value_size: r.value_size.unwrap_or(32),
            gets: r.gets.unwrap_or(0),
            key_pattern: r.key_pattern.unwrap_or_default(),
            key_stddev: r.key_stddev,
            key_median: r.key_median,
            theta: r.theta,
            ratio: r.ratio.unwrap_or_default(),
        }),
        KindName::Pgbench => {
            let defaults = PgbenchSpec::new(1, 1);
            WorkloadKind::Pgbench(PgbenchSpec {
                scale: r.scale.unwrap_or(0),
                shared_buffers: r.shared_buffers.unwrap_or(defaults.shared_buffers),
                transactions: r.transactions.unwrap_or(0),
                wal_pages: r.wal_pages.unwrap_or(defaults.wal_pages),
                max_wal_size: r.max_wal_size.unwrap_or(defaults.max_wal_size),
                script: r.script.unwrap_or_default(),
                clients: r.clients.unwrap_or(0),
                backend_memory: r.backend_memory.unwrap_or(defaults.backend_memory),
                binary_size: r.binary_size.unwrap_or(0),
                full_page_writes: r.full_page_writes.unwrap_or(false),
                fsync: r.fsync.unwrap_or(false),
                tps: r.tps.unwrap_or(0),
                bgwriter_delay: r.bgwriter_delay.unwrap_or(defaults.bgwriter_delay),
                bgwriter_lru_maxpages: r
                    .bgwriter_lru_maxpages
                    .unwrap_or(defaults.bgwriter_lru_maxpages),
                bgwriter_lru_multiplier: r
                    .bgwriter_lru_multiplier
                    .unwrap_or(defaults.bgwriter_lru_multiplier),
                shutdown_checkpoint: r.shutdown_checkpoint.unwrap_or(false),
            })
        }
        KindName::Dd => WorkloadKind::Dd(DdSpec {
            bs: r.bs.unwrap_or(models::dd::DD_DEFAULT_BS),
            count: r.count.unwrap_or(0),
            read: r.read.unwrap_or(false),
        }),
        KindName::Eater => WorkloadKind::Eater(EaterSpec {
            size: r.size.unwrap_or(0),
            passes: r.passes.unwrap_or(1),
            pattern: r.pattern.unwrap_or_default(),
            rate: r.rate,
            collapse: r.collapse.unwrap_or(false),
        }),
        KindName::Tabs => WorkloadKind::Tabs(TabsSpec {
            tabs: r.tabs.unwrap_or(0),
            tab_size: r.tab_size.unwrap_or(0),
            switches: r.switches.unwrap_or(0),
            touches: r.touches,
        }),
        KindName::Kbuild => {
            let d = KbuildSpec::new(0);
            WorkloadKind::Kbuild(KbuildSpec {
                jobs: r.jobs.unwrap_or(d.jobs),
                units: r.units.unwrap_or(0),
                source_size: r.source_size.unwrap_or(d.source_size),
                headers: r.headers.unwrap_or(d.headers),
                header_size: r.header_size.unwrap_or(d.header_size),
                includes: r.includes.unwrap_or(d.includes),
                header_theta: r.header_theta.unwrap_or(d.header_theta),
                cc_mem: r.cc_mem.unwrap_or(d.cc_mem),
                cc_passes: r.cc_passes.unwrap_or(d.cc_passes),
                object_size: r.object_size.unwrap_or(d.object_size),
                cpu: r.cpu.unwrap_or(d.cpu),
                cc_exit: r.cc_exit.unwrap_or(d.cc_exit),
            })
        }
    };
    let target = r.target.or(kind.model_target()).unwrap_or(Target::Anon);
    Ok(WorkloadSpec {
        name: r.name,
        target,
        write_ratio: r.write_ratio,
        phase: r.phase,
        weight: r.weight.unwrap_or(1),
        advice: r.advice,
        thp_advice: r.thp_advice,
        start: r.start.unwrap_or(0),
        cgroup: r.cgroup,
        exit: r.exit,
        opens: r.opens,
        open_offsets: r.open_offsets,
        kind,
    })
}

/// The TOML shape of a scenario; workloads are checked against their kind afterwards,
/// when their index is known.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScenarioToml {
    #[serde(default = "default_seed")]
    pub(super) seed: u64,
    #[serde(default)]
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) machine: MachineConfig,
    #[serde(default)]
    pub(super) warmup_events: Option<u64>,
    #[serde(default)]
    pub(super) schedule: super::Schedule,
    #[serde(rename = "workload", default)]
    pub(super) workloads: Vec<RawWorkload>,
    #[serde(rename = "cgroup", default)]
    pub(super) cgroups: Vec<CgroupSpec>,
    #[serde(rename = "cgroup_change", default)]
    pub(super) cgroup_changes: Vec<CgroupChange>,
    #[serde(rename = "cgroup_cycle", default)]
    pub(super) cgroup_cycles: Vec<CgroupCycle>,
    #[serde(rename = "cgroup_move", default)]
    pub(super) cgroup_moves: Vec<crate::cgroups::CgroupMove>,
    #[serde(rename = "published", default)]
    pub(super) published: Vec<crate::published::Published>,
    #[serde(rename = "lru_gen_write", default)]
    pub(super) lru_gen_writes: Vec<LruGenWrite>,
    #[serde(rename = "damon_module_write", default)]
    pub(super) damon_module_writes: Vec<super::DamonModuleWrite>,
    #[serde(default)]
    pub(super) sample: Option<crate::sample::SampleSpec>,
}

impl TryFrom<ScenarioToml> for Scenario {
    type Error = String;

    fn try_from(t: ScenarioToml) -> Result<Scenario, String> {
        Scenario::from_parts(t).map_err(|(i, e)| format!("workload[{i}]: {}", e.message))
    }
}

impl From<WorkloadSpec> for RawWorkload {
    fn from(w: WorkloadSpec) -> RawWorkload {
        let model = w.kind.is_model();
        let mut r = RawWorkload {
            kind: w.kind.kind_name(),
            name: w.name,
            target: (!model).then_some(w.target),
            write_ratio: w.write_ratio,
            phase: w.phase,
            weight: (w.weight != 1).then_some(w.weight),
            advice: w.advice,
            thp_advice: w.thp_advice,
            start: (w.start != 0).then_some(w.start),
            cgroup: w.cgroup,
            exit: w.exit,
            opens: w.opens,
            open_offsets: w.open_offsets,
            pages: None,
            accesses: None,
            theta: None,
            scatter: None,
            sampler: None,
            passes: None,
            iterations: None,
            hot_fraction: None,
            hot_probability: None,
            path: None,
            format: None,
            limit: None,
            rw: None,
            bs: None,
            numjobs: None,
            size: None,
            nrfiles: None,
            shared_file: None,
            ios: None,
            io_size: None,
            rwmixread: None,
            random_distribution: None,
            norandommap: None,
            trace_keys: None,
            trace_requests: None,
            trace_faults: None,
            trace_fault_mappings: None,
            trace_read_calls: None,
            keys: None,
            value_size: None,
            gets: None,
            key_pattern: None,
            key_stddev: None,
            key_median: None,
            ratio: None,
            scale: None,
            shared_buffers: None,
            transactions: None,
            wal_pages: None,
            max_wal_size: None,
            script: None,
            clients: None,
            backend_memory: None,
            binary_size: None,
            full_page_writes: None,
            fsync: None,
            tps: None,
            bgwriter_delay: None,
            bgwriter_lru_maxpages: None,
            bgwriter_lru_multiplier: None,
            shutdown_checkpoint: None,
            count: None,
            read: None,
            pattern: None,
            rate: None,
            collapse: None,
            tabs: None,
            tab_size: None,
            switches: None,
            touches: None,
            stride: None,
            unmap: None,
            remap: None,
            fork_writes: None,
            touched: None,
            skip_every: None,
            skip_offset: None,
            advise_after: None,
            snapshots: None,
            jobs: None,
            units: None,
            source_size: None,
            headers: None,
            header_size: None,
            includes: None,
            header_theta: None,
            cc_mem: None,
            cc_passes: None,
            object_size: None,
            cpu: None,
            cc_exit: None,
        };
        match w.kind {
            WorkloadKind::Uniform { pages, accesses } => {
                r.pages = Some(pages);
                r.accesses = Some(accesses);
            }
            WorkloadKind::Zipf {
                pages,
                theta,
                accesses,
                scatter,
                sampler,
            } => {
                r.pages = Some(pages);
                r.theta = Some(theta);
                r.accesses = Some(accesses);
                r.scatter = Some(scatter);
                r.sampler = (sampler != ZipfSampler::default()).then_some(sampler);
            }
            WorkloadKind::Sequential { pages, passes } => {
                r.pages = Some(pages);
                r.passes = Some(passes);
            }
            WorkloadKind::Loop { pages, iterations } => {
                r.pages = Some(pages);
                r.iterations = Some(iterations);
            }
            WorkloadKind::HotCold {
                pages,
                hot_fraction,
                hot_probability,
                accesses,
            } => {
                r.pages = Some(pages);
                r.hot_fraction = Some(hot_fraction);
                r.hot_probability = Some(hot_probability);
                r.accesses = Some(accesses);
            }
            WorkloadKind::Touch {
                pages,
                stride,
                collapse,
                passes,
                unmap,
                remap,
                fork_writes,
                touched,
                skip_every,
                skip_offset,
                advise_after,
                snapshots,
            } => {
                r.pages = Some(pages);
                r.stride = (stride != 1).then_some(stride);
                r.collapse = collapse.then_some(true);
                r.passes = (passes != 1).then_some(passes);
                r.unmap = unmap.then_some(true);
                r.remap = remap.then_some(true);
                r.fork_writes = fork_writes;
                // Written only when set, so scenarios printed before they existed stay.
                r.touched = touched;
                r.skip_every = skip_every;
                r.skip_offset = (skip_offset != 0).then_some(skip_offset);
                r.advise_after = advise_after;
                r.snapshots = (!snapshots.is_empty()).then_some(snapshots);
            }
            WorkloadKind::Trace {
                path,
                format,
                limit,
                pages,
                keys,
                requests,
                faults,
                fault_mappings,
                read_calls,
            } => {
                r.path = Some(path);
                r.format = Some(format);
                r.limit = limit;
                r.pages = pages;
                r.trace_keys = (keys != TraceKeys::Dense).then_some(keys);
                r.trace_requests = requests.then_some(true);
                r.trace_faults = (faults != TraceFaults::Read).then_some(faults);
                r.trace_fault_mappings = (fault_mappings != 1).then_some(fault_mappings);
                r.trace_read_calls = read_calls.then_some(true);
            }
            WorkloadKind::Fio(f) => {
                r.rw = Some(f.rw);
                r.bs = Some(f.bs);
                r.numjobs = Some(f.numjobs);
                r.size = Some(f.size);
                r.nrfiles = Some(f.nrfiles);
                r.shared_file = Some(f.shared_file);
                r.ios = f.ios;
                r.io_size = f.io_size;
                r.rwmixread = f.rwmixread;
                r.random_distribution = Some(f.random_distribution);
                r.norandommap = Some(f.norandommap);
            }
            WorkloadKind::Kv(k) => {
                r.keys = Some(k.keys);
                r.value_size = Some(k.value_size);
                r.gets = Some(k.gets);
                r.key_pattern = Some(k.key_pattern);
                r.key_stddev = k.key_stddev;
                r.key_median = k.key_median;
                r.theta = k.theta;
                r.ratio = Some(k.ratio);
            }
            WorkloadKind::Pgbench(p) => {
                r.scale = Some(p.scale);
                r.shared_buffers = Some(p.shared_buffers);
                r.transactions = Some(p.transactions);
                r.wal_pages = Some(p.wal_pages);
                r.max_wal_size = Some(p.max_wal_size);
                r.script = (p.script != PgbenchScript::TpcbLike).then_some(p.script);
                r.clients = (p.clients != 0).then_some(p.clients);
                r.backend_memory = (p.clients != 0).then_some(p.backend_memory);
                r.binary_size = (p.binary_size != 0).then_some(p.binary_size);
                r.full_page_writes = p.full_page_writes.then_some(true);
                r.fsync = p.fsync.then_some(true);
                // The background writer's settings only with it on (`tps`), and only
                // where they differ from PostgreSQL's defaults.
                let d = PgbenchSpec::new(1, 1);
                let bg = p.tps != 0;
                r.tps = bg.then_some(p.tps);
                r.bgwriter_delay =
                    (bg && p.bgwriter_delay != d.bgwriter_delay).then_some(p.bgwriter_delay);
                r.bgwriter_lru_maxpages = (bg
                    && p.bgwriter_lru_maxpages != d.bgwriter_lru_maxpages)
                    .then_some(p.bgwriter_lru_maxpages);
                r.bgwriter_lru_multiplier = (bg
                    && p.bgwriter_lru_multiplier != d.bgwriter_lru_multiplier)
                    .then_some(p.bgwriter_lru_multiplier);
                r.shutdown_checkpoint = p.shutdown_checkpoint.then_some(true);
            }
            WorkloadKind::Dd(d) => {
                r.bs = Some(d.bs);
                r.count = Some(d.count);
                r.read = Some(d.read);
            }
            WorkloadKind::Eater(e) => {
                r.size = Some(e.size);
                r.passes = Some(e.passes);
                r.pattern = Some(e.pattern);
                r.rate = e.rate;
                // Written only when set, so scenarios printed before it existed stay.
                r.collapse = e.collapse.then_some(true);
            }
            WorkloadKind::Tabs(t) => {
                r.tabs = Some(t.tabs);
                r.tab_size = Some(t.tab_size);
                r.switches = Some(t.switches);
                r.touches = t.touches;
            }
            WorkloadKind::Kbuild(k) => {
                r.jobs = Some(k.jobs);
                r.units = Some(k.units);
                r.source_size = Some(k.source_size);
                r.headers = Some(k.headers);
                r.header_size = Some(k.header_size);
                r.includes = Some(k.includes);
                r.header_theta = Some(k.header_theta);
                r.cc_mem = Some(k.cc_mem);
                r.cc_passes = Some(k.cc_passes);
                r.object_size = Some(k.object_size);
                r.cpu = Some(k.cpu);
                // Written only when set, so scenarios printed before it existed stay.
                r.cc_exit = k.cc_exit.then_some(true);
            }
        }
        r
    }
}
