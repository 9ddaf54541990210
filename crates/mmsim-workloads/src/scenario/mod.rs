//! Scenarios: a machine and the workloads that run on it, read from TOML.
//!
//! ```toml
//! seed = 1
//! description = "a zipf file workload in 1G"
//! schedule = "fair"     # optional: round-robin (default) | fair (see Schedule)
//!
//! [machine]             # mmsim_core::MachineConfig
//! memory = "1G"
//! swappiness = 115
//! policy = { name = "cost" }
//! swap = { device = "ssd", size = "1G" }
//!
//! [[workload]]
//! name = "db"           # optional; names the task, the file and the report line
//! kind = "zipf"         # uniform | zipf | sequential | loop | hot-cold | touch | trace
//! target = "file"       # anon | file | mmap | mmap-private | mmap-exec
//! pages = "1200M"       # a page count, or a size ("1200M", "4G", "100p")
//! theta = 0.9
//! accesses = 2_000_000
//! write_ratio = 0.1     # optional, default 0 (touch: 1)
//! advice = "random"     # optional: normal | random | sequential (fadvise/madvise)
//! phase = 1             # optional, default 0
//! start = "500ms"       # optional: not before this simulated time, default 0
//! cgroup = "/db"        # optional: the memory cgroup it runs in, default "/"
//!
//! [[cgroup]]            # memory cgroups, changes and cycles: see crate::cgroups
//! path = "/db"
//! max = "1G"
//!
//! [[workload]]          # a model of a program: fio | kv | pgbench | dd | eater
//! kind = "fio"
//! rw = "randread"
//! bs = "4k"
//! numjobs = 8
//! size = "64m"
//! ios = 10_000
//! ```
//!
//! Every field and its range is documented on [`WorkloadSpec`] and [`WorkloadKind`]; the
//! model kinds (`fio`, `kv`, `pgbench`, `dd`, `eater`, `kbuild`) in their modules under
//! [`crate::models`]; the memory cgroups (`[[cgroup]]`, `[[cgroup_change]]`,
//! `[[cgroup_cycle]]`) in [`crate::cgroups`].
//! Unknown fields, fields that do not apply to a workload's `kind`, and out-of-range
//! values are errors that name the file, the line (for parse errors) and the field path,
//! e.g. `s.toml: workload[2].theta: 7 is out of range [0, 5]`.

/// `Some(expr)` with `$m` bound to the spec of a model kind (each arm monomorphic, no
/// `dyn`), `None` for the access-pattern kinds: the one list of model variants through
/// which [`WorkloadKind`]'s methods and the validation reach a [`Model`].
macro_rules! with_model {
    ($kind:expr, $m:ident => $e:expr) => {
        match $kind {
            WorkloadKind::Fio($m) => Some($e),
            WorkloadKind::Kv($m) => Some($e),
            WorkloadKind::Pgbench($m) => Some($e),
            WorkloadKind::Dd($m) => Some($e),
            WorkloadKind::Eater($m) => Some($e),
            WorkloadKind::Kbuild($m) => Some($e),
            WorkloadKind::Tabs($m) => Some($e),
            _ => None,
        }
    };
}

mod load;
pub mod overrides;
mod raw;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use mmsim_core::{Advice, MachineConfig, VmaThpAdvice};
use mmsim_trace::Format;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::cgroups::{CgroupChange, CgroupCycle, CgroupSpec};
use crate::models::dd::DdSpec;
use crate::models::eater::EaterSpec;
use crate::models::fio::FioSpec;
use crate::models::kbuild::KbuildSpec;
use crate::models::kv::KvSpec;
use crate::models::pgbench::PgbenchSpec;
use crate::models::tabs::TabsSpec;
use crate::models::{self, Model};
use raw::{KindName, RawWorkload, ScenarioToml};

/// Largest region (file or VMA) a workload may use: 2^31 pages (8 TiB), the simulator's
/// limit for one file or mapping.
pub const MAX_PAGES: u64 = 1 << 31;
/// The default largest file of a `keys = "offset"` trace replay: 2^24 pages (64 GiB),
/// whose page-cache slots cost at most 64 MiB of host memory.
pub const OFFSET_DEFAULT_PAGES: u64 = 1 << 24;
/// The most pages all files of a `keys = "offset"` trace replay may span together:
/// 2^28 (1 TiB of file, at most 1 GiB of host memory for their slots); a trace whose
/// files' last referenced pages add up to more is an error before the run.
pub const OFFSET_MAX_TOTAL_PAGES: u64 = 1 << 28;
/// Largest number of events one workload may generate: 2^40.
pub const MAX_EVENTS: u64 = 1 << 40;
/// Largest zipf exponent accepted.
pub const MAX_THETA: f64 = 5.0;

/// A machine and its workloads: what `mmsim run` runs.
///
/// Read it with [`Scenario::from_toml_str`] or [`Scenario::from_file`], which give the
/// precise error positions; its `Deserialize` impl (for embedding in other formats) checks
/// the same rules with less precise positions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ScenarioToml")]
pub struct Scenario {
    /// Name for reports: the file stem of the scenario file, or the name given to
    /// [`Scenario::from_toml_str`]. Not a TOML field.
    #[serde(skip)]
    pub name: String,
    /// What errors call the scenario: the path of its file, or the given name. Not a TOML
    /// field.
    #[serde(skip)]
    pub source: String,
    /// Directory against which relative trace paths are resolved (the scenario file's
    /// directory); `None` means the current directory. Not a TOML field.
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
    /// Seed of every random stream of the workloads (default 1). The same scenario and
    /// seed give bit-identical results.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Free text shown in reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The simulated machine (default: `MachineConfig::default()`, 4G, no swap, `cost`).
    #[serde(default)]
    pub machine: MachineConfig,
    /// Events to run before measuring (default 0): the counters reported are
    /// those of the events after the first `warmup_events`, as a benchmark
    /// reads /proc/vmstat before and after its measured run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_events: Option<u64>,
    /// How the workloads of a phase share the machine (`schedule`, default
    /// `"round-robin"`): see [`Schedule`].
    #[serde(default, skip_serializing_if = "Schedule::is_round_robin")]
    pub schedule: Schedule,
    /// The workloads, `[[workload]]` tables.
    #[serde(rename = "workload", default)]
    pub workloads: Vec<WorkloadSpec>,
    /// The memory cgroups besides the top group `/` (which a `[[cgroup]]` table may
    /// configure too), `[[cgroup]]` tables, parents first (see [`crate::cgroups`]).
    #[serde(rename = "cgroup", default, skip_serializing_if = "Vec::is_empty")]
    pub cgroups: Vec<CgroupSpec>,
    /// Knob writes at given simulated times, `[[cgroup_change]]` tables.
    #[serde(
        rename = "cgroup_change",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub cgroup_changes: Vec<CgroupChange>,
    /// Knobs cycling between values, `[[cgroup_cycle]]` tables.
    #[serde(
        rename = "cgroup_cycle",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub cgroup_cycles: Vec<CgroupCycle>,
    /// Workloads moved between groups at given simulated times, `[[cgroup_move]]`
    /// tables.
    #[serde(rename = "cgroup_move", default, skip_serializing_if = "Vec::is_empty")]
    pub cgroup_moves: Vec<crate::cgroups::CgroupMove>,
    /// Results a source published for this benchmark, `[[published]]` tables (see
    /// [`crate::published`]): `mmsim compare` prints them beside the simulated ones.
    #[serde(rename = "published", default, skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<crate::published::Published>,
    /// Writes to /sys/kernel/debug/lru_gen at given simulated times (`mglru`
    /// policy), `[[lru_gen_write]]` tables.
    #[serde(
        rename = "lru_gen_write",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub lru_gen_writes: Vec<LruGenWrite>,
    /// Writes to DAMON modules' parameter files at given simulated times,
    /// `[[damon_module_write]]` tables.
    #[serde(
        rename = "damon_module_write",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub damon_module_writes: Vec<DamonModuleWrite>,
    /// A SHARDS-sampled run (`[sample]`, `mmsim run --sample`; see
    /// [`crate::sample`]): absent, the default, runs every page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<crate::sample::SampleSpec>,
}

/// A write to an lru_gen file at a time: `at = "10s"`, `write = "+ 1 0 0"`,
/// and `path`: /sys/kernel/debug/lru_gen (default; commands separated by
/// `,`, `;` or newlines: `+ memcg_id node_id seq [swappiness [force_scan]]`
/// ages, `- memcg_id node_id seq [swappiness [nr_to_reclaim]]` evicts;
/// `memcg_id` may be a cgroup path such as `/a`),
/// /sys/kernel/mm/lru_gen/enabled (`y`, `n`, or bits 0..=7) or
/// /sys/kernel/mm/lru_gen/min_ttl_ms (ms).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LruGenWrite {
    /// When, simulated time from the start (`0s`, `1500ms`, `1min`).
    #[serde(deserialize_with = "de_write_time", serialize_with = "ser_write_time")]
    pub at: u64,
    /// What is written.
    pub write: String,
    /// The file (default /sys/kernel/debug/lru_gen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl LruGenWrite {
    /// The file written.
    pub fn path(&self) -> &str {
        self.path
            .as_deref()
            .unwrap_or(mmsim_core::reclaim::lru_gen::LRU_GEN_DEBUG)
    }
}

/// A write to a DAMON module's parameter file at a time
/// (`/sys/module/damon_{reclaim,lru_sort}/parameters/<param>`): `at = "5s"`,
/// `module = "reclaim"` or `"lru_sort"`, `param = "enabled"`, `value = "Y"`
/// (a string as written to the file, an integer, or a boolean). As in the
/// kernel (v6.12), `enabled` starts or stops the module's kdamond with every
/// parameter applied, and other parameters take effect on a running kdamond
/// only after a later `commit_inputs = Y` (see
/// `mmsim_core::damon::module_params`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DamonModuleWrite {
    /// When, simulated time from the start (`0s`, `1500ms`, `1min`).
    #[serde(deserialize_with = "de_write_time", serialize_with = "ser_write_time")]
    pub at: u64,
    /// `reclaim` or `lru_sort`.
    pub module: String,
    /// The parameter file's name.
    pub param: String,
    /// What is written.
    #[serde(deserialize_with = "de_param_value")]
    pub value: String,
}

fn de_param_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum V {
        S(String),
        U(u64),
        B(bool),
    }
    Ok(match V::deserialize(d)? {
        V::S(s) => s,
        V::U(u) => u.to_string(),
        V::B(b) => if b { "Y" } else { "N" }.to_string(),
    })
}

fn de_write_time<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    crate::models::de_opt_time(d).map(|t| t.unwrap_or(0))
}

fn ser_write_time<S: serde::Serializer>(ns: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&if *ns == 0 {
        "0s".to_string()
    } else {
        crate::models::format_time(*ns)
    })
}

fn default_seed() -> u64 {
    1
}

/// Where a workload's accesses go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// A private anonymous mapping (`MAP_ANONYMOUS`): loads and stores.
    Anon,
    /// A file read and written through a file descriptor: buffered `pread`/`pwrite` of
    /// one page, no readahead.
    File,
    /// A shared mapping of a file (`MAP_SHARED`): loads and stores.
    Mmap,
    /// A private mapping of a file (`MAP_PRIVATE`, as will-it-scale's page_fault2
    /// maps its file): loads map the page cache, and the first store to a page
    /// copies it into an anonymous page (`do_cow_fault`, `wp_page_copy`;
    /// `Sim::mmap_file_private`).
    MmapPrivate,
    /// A file mapped executable (`PROT_EXEC`, program text): loads only.
    MmapExec,
}

impl Target {
    /// Whether the target is backed by a file (everything but `anon`).
    pub fn is_file(self) -> bool {
        self != Target::Anon
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mmsim_core::setting_names! { Target, "target",
    Anon => "anon",
    File => "file",
    Mmap => "mmap",
    MmapPrivate => "mmap-private",
    MmapExec => "mmap-exec",
}

/// The format of a trace workload: detected from the content, or given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TraceFormat {
    /// Detect from the first 64 KiB of content ([`mmsim_trace::sniff_format`]).
    #[default]
    Auto,
    /// This format.
    Fixed(Format),
}

impl TraceFormat {
    /// `auto` or the format's name.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Auto => "auto",
            TraceFormat::Fixed(f) => f.name(),
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<TraceFormat, String> {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(TraceFormat::Auto);
        }
        s.parse::<Format>().map(TraceFormat::Fixed).map_err(|_| {
            format!(
                "unknown trace format {s:?}; expected one of: auto, {}",
                Format::NAMES.join(", ")
            )
        })
    }
}

impl Serialize for TraceFormat {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for TraceFormat {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TraceFormat, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// How a trace replay turns keys into pages: `keys` of a `trace` workload, `--keys` of
/// `mmsim run`. The default is [`TraceKeys::Dense`] for every format, so results of
/// existing scenarios do not change.
///
/// | format | what a key is | `dense` (default) | `offset` |
/// |---|---|---|---|
/// | `filemap` | `file << 40 \| page` by `(dev, ino)` | one region, pages by first appearance | one file (or mapping) per `(dev, ino)`, the page at its offset |
/// | block traces (`vscsi`, `msr`, `lcs-csv`, `arc`) | the 4 KiB page of the device | one region by first appearance | the device as one file, pages at their offsets |
/// | `lackey`, `memsim`, `ucsd`, `text`, `lirs`, key arrays | an address's page or an id | by first appearance | the key as a page offset |
/// | `oracle-general`, `native` | an object id or a key | by first appearance | the key as a page offset (rarely meaningful) |
///
/// Under `offset` a key's bits 40 and up select the file ([`mmsim_trace::filemap::key`]),
/// the low 40 bits the page in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum TraceKeys {
    /// Keys numbered 0, 1, 2, … in order of first appearance
    /// ([`mmsim_trace::Densifier`]): one region as large as the distinct keys; the
    /// layout is lost, so readahead and fault-around see a new order.
    #[default]
    Dense,
    /// Keys kept as page offsets in their files: each trace file (`(dev, ino)` of a
    /// `filemap` trace, the device of a block trace) becomes a file or mapping of its
    /// own, sized to its last referenced page; readahead, read-around and fault-around
    /// see the real layout. The replay's advice defaults to `normal`.
    Offset,
}

impl fmt::Display for TraceKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mmsim_core::setting_names! { TraceKeys, "trace keys",
    Dense => "dense",
    Offset => "offset",
}

impl Serialize for TraceKeys {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for TraceKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TraceKeys, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The most mappings per traced file `trace_fault_mappings` may ask for.
pub const MAX_TRACE_FAULT_MAPPINGS: u32 = 64;

/// How a `filemap` trace's page faults and fault-around (`mm_filemap_fault`,
/// `mm_filemap_map_pages`, [`mmsim_trace::Record::fault`]) are replayed:
/// `trace_faults` of a `trace` workload with `trace_keys = "offset"` on
/// `target = "file"`. The default, [`TraceFaults::Read`], keeps existing results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum TraceFaults {
    /// As reads of their pages (`filemap_read`), like the trace's other events.
    #[default]
    Read,
    /// As loads through a shared mapping of the whole file (one per traced file, made
    /// by the replay's task next to its open file): the page is faulted in (or found)
    /// and mapped, its PTE's accessed bit set, so reclaim's `folio_referenced` sees the
    /// reference as the kernel's `folio_check_references` (mm/vmscan.c, v6.18) does
    /// for a mapped page: kept on the inactive list with PG_referenced on the first
    /// scan that finds it young, activated on the second.
    Mapped,
    /// As [`TraceFaults::Mapped`], with the mappings executable (`VM_EXEC`): a
    /// referenced file folio of an executable mapping is activated on its first young
    /// scan (`folio_check_references`). The trace does not say which mappings were
    /// executable: this takes every faulted file to be one (the binaries and
    /// libraries a program maps).
    MappedExec,
}

impl fmt::Display for TraceFaults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mmsim_core::setting_names! { TraceFaults, "trace faults",
    Read => "read",
    Mapped => "mapped",
    MappedExec => "mapped-exec",
}

impl Serialize for TraceFaults {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for TraceFaults {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TraceFaults, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// How the workloads of a phase share the machine (`schedule`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Schedule {
    /// `"round-robin"`, the default and the schedule of every recorded result: the
    /// workloads take turns by event count, `weight` events each per turn
    /// ([`crate::run::EventStream`]).
    #[default]
    RoundRobin,
    /// `"fair"`: they run side by side in simulated time under a CFS-like scheduler
    /// (the least weighted CPU time runs next, `weight` is the load weight, a task
    /// sleeping on IO lets the others run; `machine.cpus` CPUs run up to that many at
    /// once): see the `fair` module. Each workload's `cpu_ns` and `sleep_ns` are
    /// reported.
    Fair,
}

impl Schedule {
    fn is_round_robin(&self) -> bool {
        *self == Schedule::RoundRobin
    }
}

mmsim_core::setting_names! { Schedule, "schedule",
    RoundRobin => "round-robin",
    Fair => "fair",
}

impl Serialize for Schedule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Schedule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Schedule, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// How a `zipf` workload draws its ranks (`sampler`). Both draw exactly
/// `P(k) ∝ k^−θ`; they consume the random stream differently, so the same seed gives
/// different (equally valid) access sequences.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum ZipfSampler {
    /// `rand_distr::Zipf` (Hörmann–Derflinger rejection-inversion): the default, and the
    /// sampler of every recorded result. Calls `powf`/`ln`/`exp` on every draw.
    #[default]
    RejectionInversion,
    /// [`crate::zipf::ZipfAlias`]: an alias table over rank buckets with a squeezed
    /// rejection inside the bucket; integer work on most draws, several times faster.
    Alias,
}

impl fmt::Display for ZipfSampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mmsim_core::setting_names! { ZipfSampler, "zipf sampler",
    RejectionInversion => "rejection-inversion",
    Alias => "alias",
}

impl Serialize for ZipfSampler {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for ZipfSampler {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ZipfSampler, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// One workload: a task with one region (file or VMA) and the accesses it makes, or a
/// model of a program with its tasks, files and mappings (see [`crate::models`]).
///
/// In TOML, a `[[workload]]` table with `kind` and the fields of that kind (see
/// [`WorkloadKind`]) plus the common fields below. A field that does not apply to the
/// kind is an error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawWorkload", into = "RawWorkload")]
pub struct WorkloadSpec {
    /// Name of the task, file and report line (default `<kind>-<index>`, e.g. `zipf-1`).
    /// Names must be unique within a scenario.
    pub name: Option<String>,
    /// Where the accesses go. Required in TOML for the access-pattern kinds; the model
    /// kinds take no `target` (their value here is what they mostly use: `file` for
    /// `fio`, `dd` and `pgbench`, `anon` for `kv` and `eater`).
    pub target: Target,
    /// Fraction of accesses that are writes, [0, 1] (default 0; `touch` and `eater`: 1
    /// except on `mmap-exec`). Must be 0 for `mmap-exec`. For `file`, a write is a
    /// buffered `pwrite` of the whole page (no read); for mappings, a store. Of the model
    /// kinds only `eater` takes it (for its re-touch passes).
    pub write_ratio: Option<f64>,
    /// Phases run one after the other in increasing order; workloads of the same phase
    /// are interleaved in turns (default 0).
    pub phase: u32,
    /// Events this workload issues per turn when interleaved with others, 1..=1000
    /// (default 1): weights 4, 5 and 1 mix three workloads 40 %, 50 % and 10 %. Under
    /// `schedule = "fair"` its CFS load weight instead, in nice-0 tasks: CPU time is
    /// shared in proportion to it.
    pub weight: u32,
    /// How the workload declares its access pattern to the kernel, which
    /// steers readahead (`posix_fadvise` for `file`, `madvise` for mappings):
    /// `normal`, `random` or `sequential`. Default `normal`, except `random`
    /// for trace replays (a trace already records what was read, readahead
    /// included) and `fio`'s `fadvise_hint` for `fio` (`random` for random `rw`,
    /// `sequential` otherwise). No effect on `anon`.
    pub advice: Option<Advice>,
    /// `thp_advice`: `madvise(MADV_HUGEPAGE)` (`"hugepage"`) or
    /// `madvise(MADV_NOHUGEPAGE)` (`"nohugepage"`) of the workload's mapping
    /// right after its `mmap` (`hugepage_madvise`, mm/khugepaged.c, v6.12),
    /// for the access-pattern kinds on `anon`, `mmap` or `mmap-exec` (not
    /// `file`: a descriptor has no VMA). On `anon` it replaces
    /// `[machine.thp] vma_advice` for this mapping (the `madvise` sysfs
    /// settings then allow or refuse its large folios; MADV_HUGEPAGE also
    /// registers the task with khugepaged); on a file mapping VM_HUGEPAGE
    /// makes a fault that misses read around in PMD-size folios
    /// (`Sim::madvise_file_hugepage`). Default: none.
    pub thp_advice: Option<mmsim_core::VmaThpAdvice>,
    /// Simulated time before which the workload issues nothing, ns (TOML: `start =
    /// "2s"`, a time string, 0..=10^6 s; default 0).
    ///
    /// Within its phase, the workloads take turns in rounds: in each round every
    /// running workload issues `weight` events. A workload whose `start` lies after the
    /// simulated clock ([`mmsim_core::Sim::now`]) when a round begins sits that round
    /// out; it joins the first round that begins at or after its `start`, so its first
    /// event runs no earlier than `start` and at most one round (the others' events of
    /// that round) after it. When every unfinished workload of the phase is waiting, the
    /// clock is advanced to the earliest `start` by an idle `Event::Think` (seen by
    /// [`RunOptions::on_batch`](crate::RunOptions) but counted as no workload's event).
    /// `start` is absolute simulated time, not relative to the phase: a workload whose
    /// phase begins after its `start` begins with its phase.
    pub start: u64,
    /// The memory cgroup the workload runs in (TOML: `cgroup = "/a"`; default `None`,
    /// the top group `/`): a group declared by a `[[cgroup]]` table. Its tasks are
    /// attached there, and the files it reads and writes through a descriptor are opened
    /// by its tasks, so its anonymous memory, page faults and page cache are charged to
    /// that group (see [`crate::cgroups`]).
    pub cgroup: Option<String>,
    /// Whether the workload's tasks exit when it ends (TOML: `exit = true`; default
    /// false, the tasks stay with their memory until the run ends):
    /// [`mmsim_core::Sim::exit_task`] frees their anonymous memory, swap slots and page
    /// tables; the page cache they brought in stays, charged to their group. The exit
    /// runs after the batch holding the workload's last event.
    pub exit: bool,
    /// `opens = N`: for a `file` target of an access-pattern kind (not a trace
    /// replay), the task opens the file N times, 1..=[`MAX_OPENS`], each `open()`
    /// a `struct file` with its own readahead state (`file->f_ra`, set by
    /// `file_ra_state_init()` in `do_dentry_open()`, fs/open.c, v6.12; see
    /// [`mmsim_core::Sim::open_file`]), and `advice` is given to each
    /// (`posix_fadvise` per descriptor). The reads then take turns round-robin
    /// over the descriptors (`Event::FdRead`): read k goes through descriptor
    /// `k mod N`, as N readers of one file sharing the stream, so each window
    /// sees every N-th read. Writes stay buffered `pwrite`s of the file (no
    /// readahead). Absent: the one-state-per-file read model
    /// ([`mmsim_core::Sim::open`], `Event::FileRead`) of every existing result.
    pub opens: Option<u64>,
    /// `open_offsets`, with `opens = N`: where each reader starts, so the N
    /// descriptors stream from different places of the file, as N processes
    /// reading one log or database file each with its own `open()`. Absent: the
    /// round-robin of one stream above. With it, read k still goes through
    /// descriptor `j = k mod N`, at page `offset[j] + index / N` (wrapped at the
    /// file's end), where `index` is the pattern's page: the pattern's pages are
    /// shrunk N times and shifted to each reader's start, so a `sequential`
    /// pattern gives N sequential streams of one page per read each.
    /// `"spread"`: `offset[j] = j * pages / N` (the file cut in N equal parts,
    /// one per reader); a list: N page offsets, each below `pages`.
    pub open_offsets: Option<OpenOffsets>,
    /// What the accesses are.
    pub kind: WorkloadKind,
}

/// A workload's `open_offsets` as written: `"spread"` (checked when the
/// scenario is loaded) or one page offset per open.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OpenOffsets {
    /// A named layout; only `"spread"` exists.
    Named(String),
    /// One start page per open, in opening order.
    Pages(Vec<u64>),
}

impl OpenOffsets {
    /// The start page of each of `n` readers of a `pages`-page file; `None`
    /// for an unknown name or a list that is not `n` offsets below `pages`.
    pub fn starts(&self, n: u64, pages: u64) -> Option<Vec<u32>> {
        match self {
            OpenOffsets::Named(s) if s == "spread" => {
                Some((0..n).map(|j| (j * pages / n.max(1)) as u32).collect())
            }
            OpenOffsets::Named(_) => None,
            OpenOffsets::Pages(v) => (v.len() as u64 == n && v.iter().all(|&o| o < pages))
                .then(|| v.iter().map(|&o| o as u32).collect()),
        }
    }
}

/// The most `opens` a workload may declare: 1024, the default `RLIMIT_NOFILE`
/// soft limit on one task's descriptors (`INR_OPEN_CUR`, include/uapi/linux/fs.h).
pub const MAX_OPENS: u64 = 1024;

/// The `Think` events of a touch's `snapshots` (seconds after its last touch,
/// increasing): each gap cut into waits of at most [`SNAPSHOT_STEP_NS`], then a
/// zero-length `Think`, the mark where `mmsim-probe` and `mmsim validate` read the huge
/// pages. The simulator runs a timer at the first event at or after its expiry, so the
/// cut keeps khugepaged's wake-ups within 100 ms of their time, as the kernel's sleep
/// would not delay them.
pub fn snapshot_waits(snapshots: &[f64]) -> impl Iterator<Item = u64> + '_ {
    let mut at_ns = 0u64;
    snapshots.iter().flat_map(move |s| {
        let ns = (s * 1e9).round() as u64;
        let gap = ns.saturating_sub(at_ns);
        at_ns = ns;
        let full = gap / SNAPSHOT_STEP_NS;
        let rest = gap % SNAPSHOT_STEP_NS;
        std::iter::repeat_n(SNAPSHOT_STEP_NS, full as usize)
            .chain((rest > 0).then_some(rest))
            .chain(std::iter::once(0))
    })
}

/// The longest `Think` of a touch's snapshot waits: 100 ms.
pub const SNAPSHOT_STEP_NS: u64 = 100_000_000;

/// The access pattern of a workload, or the program it models. Page counts accept a
/// number or a size string (`"512M"`, `"100p"`); every region is 1..=2^31 pages.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkloadKind {
    /// `uniform`: `accesses` pages drawn uniformly from `0..pages`.
    Uniform {
        /// Region size in pages.
        pages: u64,
        /// Number of accesses, 1..=2^40.
        accesses: u64,
    },
    /// `zipf`: page ranks drawn from a zipf distribution with exponent `theta` (0 is
    /// uniform, 0.9 typical, up to 5); rank r is page r unless `scatter` (default true)
    /// maps ranks through a fixed seeded permutation so hot pages are spread over the
    /// region.
    Zipf {
        /// Region size in pages.
        pages: u64,
        /// Exponent, [0, 5].
        theta: f64,
        /// Number of accesses, 1..=2^40.
        accesses: u64,
        /// Scatter ranks over the region (default true).
        scatter: bool,
        /// The rank sampler (`sampler`, default `rejection-inversion`).
        sampler: ZipfSampler,
    },
    /// `sequential`: pages 0, 1, …, pages−1, `passes` times (default 1).
    Sequential {
        /// Region size in pages.
        pages: u64,
        /// Number of passes (≥ 1; pages × passes ≤ 2^40).
        passes: u64,
    },
    /// `loop`: like `sequential`, `iterations` times (default 1): the access pattern that
    /// defeats LRU when the loop is larger than memory.
    Loop {
        /// Region size in pages.
        pages: u64,
        /// Number of iterations (≥ 1; pages × iterations ≤ 2^40).
        iterations: u64,
    },
    /// `hot-cold`: with probability `hot_probability` a uniform page of the first
    /// `hot_fraction` of the region, else a uniform page of the rest.
    HotCold {
        /// Region size in pages.
        pages: u64,
        /// Fraction of the region that is hot, (0, 1].
        hot_fraction: f64,
        /// Probability that an access goes to the hot part, [0, 1].
        hot_probability: f64,
        /// Number of accesses, 1..=2^40.
        accesses: u64,
    },
    /// `touch`: every page once, in order (by default as writes): populates a region,
    /// e.g. memory of idle processes.
    Touch {
        /// Region size in pages.
        pages: u64,
        /// Pages from one touch to the next, 1..=pages (default 1: every
        /// page; 16 touches one byte per 64 KiB, the sparse pattern of seed
        /// 003 that large folios turn into 16 times the memory).
        stride: u64,
        /// After the last touch, one `madvise(MADV_COLLAPSE)` over the whole
        /// region (`Event::Collapse`; `target = "anon"` only; default false):
        /// the collapse sequence of `validation/khugepaged/collapse.c`, which
        /// `mmsim-probe` runs on a real kernel.
        collapse: bool,
        /// Times the touches are made, 1..=2^40 (default 1); pages / stride ×
        /// passes at most 2^40. Without `unmap` a later pass finds the
        /// pages mapped (no faults).
        passes: u64,
        /// After each pass, `munmap` of what the pass mapped
        /// (`Event::Discard`; not for `target = "file"`, nor with `collapse`;
        /// default false), so that the next pass faults afresh: the
        /// `mmap`/touch/`munmap` loop of will-it-scale's page_fault* and
        /// malloc1. The discarded range is the region's start up to the end of
        /// the PMD range (2 MiB) of the pass's last touch: `zap_pmd_range`
        /// (mm/memory.c, v6.12) skips PMD entries without a page table, so a
        /// range no touch populated costs the kernel nothing and is left out.
        /// One `Event::Discard` per pass (the VMA itself stays, as after
        /// `MADV_DONTNEED`; its page tables are not freed).
        unmap: bool,
        /// `remap`: after each pass, `munmap` of the whole region and `mmap` of
        /// a new one in its place (`Event::Remap`: the populated part zapped,
        /// the page tables freed; not with `unmap`, `collapse` or `skip_every`,
        /// nor for `target = "file"`; default false). With `touched = 0` a pass
        /// touches nothing: the `mmap`/`munmap` loop of will-it-scale's mmap1.
        remap: bool,
        /// `touched`: only the first this many pages of the region are
        /// touched (`None`: all of them); the rest stays mapped and never
        /// touched (no page table under it), as the `last-pmd-untouched` case
        /// of `validation/khugepaged/collapse.c`. 1..=pages (0 with `remap`:
        /// nothing touched).
        touched: Option<u64>,
        /// `skip_every`: the page at offset `skip_offset` of every
        /// `skip_every` pages is never touched (`None`: none skipped), as the
        /// `511-of-512` case (512, 7). 2..=pages, with `stride` 1.
        skip_every: Option<u64>,
        /// `skip_offset`: see `skip_every` (default 0), below it.
        skip_offset: u64,
        /// `fork_writes`: after each pass the task forks (`Event::Fork`): the
        /// child shares the region copy-on-write, stores to its first
        /// `fork_writes` pages (0..=pages) and exits while the task waits
        /// (`target = "anon"` only; not with `unmap`, `remap`, `collapse` or
        /// `skip_every`; default: no fork).
        fork_writes: Option<u64>,
        /// `advise_after`: after the last touch (and the collapse), one
        /// `madvise(MADV_HUGEPAGE | MADV_NOHUGEPAGE)` of the whole region
        /// (`Event::ThpAdvice`; `target = "anon"` only), as
        /// `validation/khugepaged/khugepaged.c` does after writing under
        /// MADV_NOHUGEPAGE.
        advise_after: Option<VmaThpAdvice>,
        /// `snapshots`: seconds after the last touch (and the collapse and the
        /// advice), increasing, in (0, 3600], at most 64: the workload waits
        /// until each ([`snapshot_waits`]: `Event::Think`s of at most 100 ms,
        /// which `mmsim-probe` sleeps, then a zero-length one) and `mmsim
        /// validate` reads the huge pages there (`anon_huge_pages@sN`).
        snapshots: Vec<f64>,
    },
    /// `trace`: replays a trace file (streamed, never loaded whole); by default its keys
    /// are numbered in order of first appearance ([`mmsim_trace::Densifier`]) and become
    /// page indices of the region; with `keys = "offset"` they stay page offsets in their
    /// files ([`TraceKeys`]).
    Trace {
        /// The trace file (relative paths are relative to the scenario file).
        path: PathBuf,
        /// Its format (default `auto`: detected from the content).
        format: TraceFormat,
        /// Replay at most this many references (default: all).
        limit: Option<u64>,
        /// Region size in pages (default 2^31, the maximum); more distinct keys than this
        /// is an error. Only touched pages cost memory. Under `keys = "offset"`: the
        /// largest file size in pages (default [`OFFSET_DEFAULT_PAGES`], 2^24 = 64 GiB);
        /// references at or beyond it are skipped and counted.
        pages: Option<u64>,
        /// How keys become pages (default `dense`).
        keys: TraceKeys,
        /// `trace_requests`: replay each multi-page request of the trace (a filemap
        /// range event, a block request) as one read or write of its pages, as the
        /// program issued it (so readahead sees the request's size, as
        /// `page_cache_sync_ra` does), instead of one single-page read per page.
        /// Needs `trace_keys = "offset"` and `target = "file"`. Default false.
        requests: bool,
        /// `trace_faults`: how the trace's page faults and fault-around are replayed
        /// ([`TraceFaults`]; default `read`). Other than `read` needs
        /// `trace_keys = "offset"` and `target = "file"`.
        faults: TraceFaults,
        /// `trace_fault_mappings`: under `trace_faults` other than `read`, how many
        /// mappings of each traced file the replay makes (one per process that maps it
        /// in the traced program; default 1, at most [`MAX_TRACE_FAULT_MAPPINGS`]). A
        /// trace records no process: the n-th fault record of a page goes to mapping
        /// `n mod trace_fault_mappings`, since the kernel reports a fault only for a
        /// page the faulting process had not mapped.
        fault_mappings: u32,
        /// `trace_read_calls`: replay a buffered read of a `filemap` trace once, however
        /// many `filemap_get_pages` calls (and `mm_filemap_get_pages` events) the kernel
        /// made for it: an event continuing the read of the one before it is skipped
        /// (`mmsim_trace::ReadOptions::read_calls`). Default false: every event is a
        /// read of its range.
        read_calls: bool,
    },
    /// `fio`: fio's buffered file IO by `numjobs` jobs ([`crate::models::fio`]).
    Fio(FioSpec),
    /// `kv`: memcached filled and read by memtier_benchmark ([`crate::models::kv`]).
    Kv(KvSpec),
    /// `pgbench`: PostgreSQL running pgbench's TPC-B-like transactions
    /// ([`crate::models::pgbench`]).
    Pgbench(PgbenchSpec),
    /// `dd`: a streaming buffered writer or reader ([`crate::models::dd`]).
    Dd(DdSpec),
    /// `eater`: a memory eater ([`crate::models::eater`]).
    Eater(EaterSpec),
    /// `kbuild`: a parallel kernel build, `make -jN` ([`crate::models::kbuild`]).
    Kbuild(KbuildSpec),
    /// `tabs`: a browser's tabs on a small client ([`crate::models::tabs`]).
    Tabs(TabsSpec),
}

impl WorkloadKind {
    /// A `touch` of `pages` pages with every other field at its default:
    /// each page once, in order, no collapse, no unmap, no advice, no
    /// snapshots (what a scenario file's `kind = "touch"` with only
    /// `pages` gives).
    pub fn touch(pages: u64) -> Self {
        WorkloadKind::Touch {
            pages,
            stride: 1,
            collapse: false,
            passes: 1,
            unmap: false,
            remap: false,
            touched: None,
            skip_every: None,
            skip_offset: 0,
            fork_writes: None,
            advise_after: None,
            snapshots: Vec::new(),
        }
    }

    /// The `kind` name: `uniform`, `zipf`, `sequential`, `loop`, `hot-cold`, `touch`,
    /// `trace`, `fio`, `kv`, `pgbench`, `dd`, `eater`.
    pub fn name(&self) -> &'static str {
        self.kind_name().name()
    }

    fn kind_name(&self) -> KindName {
        match self {
            WorkloadKind::Uniform { .. } => KindName::Uniform,
            WorkloadKind::Zipf { .. } => KindName::Zipf,
            WorkloadKind::Sequential { .. } => KindName::Sequential,
            WorkloadKind::Loop { .. } => KindName::Loop,
            WorkloadKind::HotCold { .. } => KindName::HotCold,
            WorkloadKind::Touch { .. } => KindName::Touch,
            WorkloadKind::Trace { .. } => KindName::Trace,
            WorkloadKind::Fio(_) => KindName::Fio,
            WorkloadKind::Kv(_) => KindName::Kv,
            WorkloadKind::Pgbench(_) => KindName::Pgbench,
            WorkloadKind::Dd(_) => KindName::Dd,
            WorkloadKind::Eater(_) => KindName::Eater,
            WorkloadKind::Kbuild(_) => KindName::Kbuild,
            WorkloadKind::Tabs(_) => KindName::Tabs,
        }
    }

    /// Whether this is a model of a program (`fio`, `kv`, `pgbench`, `dd`, `eater`,
    /// `kbuild`) rather than an access pattern on one region.
    pub fn is_model(&self) -> bool {
        self.kind_name().is_model()
    }

    /// The target a model kind stands for in [`WorkloadSpec::target`] (`None` for the
    /// access-pattern kinds, whose target is given).
    pub fn model_target(&self) -> Option<Target> {
        with_model!(self, m => models::target_of(m))
    }

    /// Size of the region in pages (a trace without `pages`: 2^31; an offset replay: the
    /// most its files may span, [`OFFSET_MAX_TOTAL_PAGES`]); for a model, of all its
    /// files and mappings together.
    pub fn pages(&self) -> u64 {
        if let Some(pages) = with_model!(self, m => Model::pages(m)) {
            return pages;
        }
        match self {
            WorkloadKind::Uniform { pages, .. }
            | WorkloadKind::Zipf { pages, .. }
            | WorkloadKind::Sequential { pages, .. }
            | WorkloadKind::Loop { pages, .. }
            | WorkloadKind::HotCold { pages, .. }
            | WorkloadKind::Touch { pages, .. } => *pages,
            WorkloadKind::Trace {
                keys: TraceKeys::Offset,
                ..
            } => OFFSET_MAX_TOTAL_PAGES,
            WorkloadKind::Trace { pages, .. } => pages.unwrap_or(MAX_PAGES),
            _ => unreachable!("the model kinds are handled above"),
        }
    }

    /// Number of events the workload generates, if known before running (a trace
    /// without `limit` is not, nor `pgbench`, whose reads and write-backs depend on its
    /// buffer hits).
    pub fn events(&self) -> Option<u64> {
        if let Some(events) = with_model!(self, m => Model::events(m)) {
            return events;
        }
        match *self {
            WorkloadKind::Uniform { accesses, .. }
            | WorkloadKind::Zipf { accesses, .. }
            | WorkloadKind::HotCold { accesses, .. } => Some(accesses),
            WorkloadKind::Sequential { pages, passes: n }
            | WorkloadKind::Loop {
                pages,
                iterations: n,
            } => Some(pages.saturating_mul(n)),
            WorkloadKind::Touch {
                pages,
                stride,
                collapse,
                passes,
                unmap,
                remap,
                touched,
                skip_every,
                skip_offset,
                advise_after,
                fork_writes,
                ref snapshots,
            } => {
                let touched = touched.unwrap_or(pages).min(pages);
                // `skip_every` needs stride 1 (and no `unmap`): every page below
                // `touched` but one per `skip_every`.
                let skipped = skip_every
                    .filter(|&e| e > 0)
                    .map_or(0, |e| touched / e + u64::from(touched % e > skip_offset));
                Some(
                    (touched.div_ceil(stride.max(1)) - skipped
                        + u64::from(unmap || remap || fork_writes.is_some()))
                    .saturating_mul(passes)
                        + u64::from(collapse)
                        + u64::from(advise_after.is_some())
                        + snapshot_waits(snapshots).count() as u64,
                )
            }
            WorkloadKind::Trace { limit, .. } => limit,
            _ => unreachable!("the model kinds are handled above"),
        }
    }
}

impl WorkloadSpec {
    /// A workload of `kind` on `target` with the defaults: no name, default write
    /// ratio, phase 0, start 0.
    pub fn new(target: Target, kind: WorkloadKind) -> WorkloadSpec {
        WorkloadSpec {
            name: None,
            target,
            write_ratio: None,
            phase: 0,
            weight: 1,
            advice: None,
            thp_advice: None,
            start: 0,
            cgroup: None,
            exit: false,
            opens: None,
            open_offsets: None,
            kind,
        }
    }

    /// The path of the cgroup the workload runs in: its `cgroup`, or `/`.
    pub fn cgroup_path(&self) -> &str {
        self.cgroup.as_deref().unwrap_or("/")
    }

    /// A workload of a model kind (`fio`, `kv`, …) with the defaults; its target is the
    /// kind's ([`WorkloadKind::model_target`]; `anon` for access-pattern kinds, which
    /// should use [`WorkloadSpec::new`]).
    pub fn model(kind: WorkloadKind) -> WorkloadSpec {
        WorkloadSpec::new(kind.model_target().unwrap_or(Target::Anon), kind)
    }

    /// What reports call the target: the target's name, `anon+file` for `pgbench`
    /// (shared buffers and relation files) and `kbuild` (compilers' heaps, sources,
    /// headers and objects).
    pub fn target_name(&self) -> &'static str {
        match self.kind {
            WorkloadKind::Pgbench(_) | WorkloadKind::Kbuild(_) => "anon+file",
            _ => self.target.name(),
        }
    }

    /// The advice in effect: the given one, or `random` for trace replays (`normal`
    /// under `keys = "offset"`, whose layout is the real one), fio's
    /// `fadvise_hint` default for `fio`, and `normal` otherwise.
    pub fn effective_advice(&self) -> Advice {
        match (self.advice, &self.kind) {
            (Some(a), _) => a,
            (
                None,
                WorkloadKind::Trace {
                    keys: TraceKeys::Offset,
                    ..
                },
            ) => Advice::Normal,
            (None, WorkloadKind::Trace { .. }) => Advice::Random,
            (None, WorkloadKind::Fio(f)) => f.default_advice(),
            (None, _) => Advice::Normal,
        }
    }

    /// A trace replay of the file at `path` on `target`.
    pub fn trace(path: impl Into<PathBuf>, format: TraceFormat, target: Target) -> WorkloadSpec {
        WorkloadSpec::new(
            target,
            WorkloadKind::Trace {
                path: path.into(),
                format,
                limit: None,
                pages: None,
                keys: TraceKeys::Dense,
                requests: false,
                faults: TraceFaults::Read,
                fault_mappings: 1,
                read_calls: false,
            },
        )
    }

    /// The write ratio in effect: the given one, or 0 (for `touch` and `eater`: 1,
    /// except on `mmap-exec`).
    pub fn effective_write_ratio(&self) -> f64 {
        match self.write_ratio {
            Some(r) => r,
            None if matches!(self.kind, WorkloadKind::Tabs(_)) => 0.3,
            None if matches!(
                self.kind,
                WorkloadKind::Touch { .. } | WorkloadKind::Eater(_)
            ) && self.target != Target::MmapExec =>
            {
                1.0
            }
            None => 0.0,
        }
    }

    /// The name in effect for workload number `index`: the given name or
    /// `<kind>-<index>`.
    pub fn display_name(&self, index: usize) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("{}-{index}", self.kind.name()),
        }
    }
}
