//! Scenarios: a machine and the workloads that run on it, read from TOML.
//!
//! ```toml
//! seed = 1
//! description = "a zipf file workload in 1G"
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
//! target = "file"       # anon | file | mmap | mmap-exec
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

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use mmsim_core::{Advice, ConfigError, MachineConfig, Size};
use mmsim_trace::Format;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::cgroups::{CgroupChange, CgroupCycle, CgroupSpec};
use crate::error::WorkloadError;
use crate::models::dd::DdSpec;
use crate::models::eater::{EaterPattern, EaterSpec};
use crate::models::fio::{FioDistribution, FioRw, FioSpec};
use crate::models::kbuild::KbuildSpec;
use crate::models::kv::{KeyPattern, KvRatio, KvSpec};
use crate::models::pgbench::PgbenchSpec;
use crate::models::tabs::TabsSpec;
use crate::models::{self, Bad};
use crate::tomlpos;

/// Largest region (file or VMA) a workload may use: 2^31 pages (8 TiB), the simulator's
/// limit for one file or mapping.
pub const MAX_PAGES: u64 = 1 << 31;
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
    /// A file mapped executable (`PROT_EXEC`, program text): loads only.
    MmapExec,
}

impl Target {
    /// The name used in scenarios and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Target::Anon => "anon",
            Target::File => "file",
            Target::Mmap => "mmap",
            Target::MmapExec => "mmap-exec",
        }
    }

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

impl FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Target, String> {
        match s {
            "anon" => Ok(Target::Anon),
            "file" => Ok(Target::File),
            "mmap" => Ok(Target::Mmap),
            "mmap-exec" => Ok(Target::MmapExec),
            _ => Err(format!(
                "unknown target `{s}`; allowed: anon, file, mmap, mmap-exec"
            )),
        }
    }
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
    /// (default 1): weights 4, 5 and 1 mix three workloads 40 %, 50 % and 10 %.
    pub weight: u32,
    /// How the workload declares its access pattern to the kernel, which
    /// steers readahead (`posix_fadvise` for `file`, `madvise` for mappings):
    /// `normal`, `random` or `sequential`. Default `normal`, except `random`
    /// for trace replays (a trace already records what was read, readahead
    /// included) and `fio`'s `fadvise_hint` for `fio` (`random` for random `rw`,
    /// `sequential` otherwise). No effect on `anon`.
    pub advice: Option<Advice>,
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
    /// What the accesses are.
    pub kind: WorkloadKind,
}

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
    },
    /// `trace`: replays a trace file (streamed, never loaded whole); its keys are
    /// numbered in order of first appearance ([`mmsim_trace::Densifier`]) and become page
    /// indices of the region.
    Trace {
        /// The trace file (relative paths are relative to the scenario file).
        path: PathBuf,
        /// Its format (default `auto`: detected from the content).
        format: TraceFormat,
        /// Replay at most this many references (default: all).
        limit: Option<u64>,
        /// Region size in pages (default 2^31, the maximum); more distinct keys than this
        /// is an error. Only touched pages cost memory.
        pages: Option<u64>,
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
        match self {
            WorkloadKind::Fio(_) | WorkloadKind::Pgbench(_) | WorkloadKind::Dd(_) => {
                Some(Target::File)
            }
            WorkloadKind::Kv(_)
            | WorkloadKind::Eater(_)
            | WorkloadKind::Kbuild(_)
            | WorkloadKind::Tabs(_) => Some(Target::Anon),
            _ => None,
        }
    }

    /// Size of the region in pages (a trace without `pages`: 2^31); for a model, of all
    /// its files and mappings together.
    pub fn pages(&self) -> u64 {
        match self {
            WorkloadKind::Uniform { pages, .. }
            | WorkloadKind::Zipf { pages, .. }
            | WorkloadKind::Sequential { pages, .. }
            | WorkloadKind::Loop { pages, .. }
            | WorkloadKind::HotCold { pages, .. }
            | WorkloadKind::Touch { pages } => *pages,
            WorkloadKind::Trace { pages, .. } => pages.unwrap_or(MAX_PAGES),
            WorkloadKind::Fio(f) => f.pages(),
            WorkloadKind::Kv(k) => k.pages(),
            WorkloadKind::Pgbench(p) => p.pages(),
            WorkloadKind::Dd(d) => d.pages(),
            WorkloadKind::Eater(e) => e.pages(),
            WorkloadKind::Kbuild(k) => k.pages(),
            WorkloadKind::Tabs(t) => t.pages(),
        }
    }

    /// Number of events the workload generates, if known before running (a trace
    /// without `limit` is not, nor `pgbench`, whose reads and write-backs depend on its
    /// buffer hits).
    pub fn events(&self) -> Option<u64> {
        match self {
            WorkloadKind::Fio(f) => return Some(f.events()),
            WorkloadKind::Kv(k) => return Some(k.events()),
            WorkloadKind::Pgbench(_) => return None,
            WorkloadKind::Dd(d) => return Some(d.events()),
            WorkloadKind::Eater(e) => return Some(e.events()),
            WorkloadKind::Kbuild(k) => return Some(k.events()),
            WorkloadKind::Tabs(t) => return Some(t.events()),
            _ => {}
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
            WorkloadKind::Touch { pages } => Some(pages),
            WorkloadKind::Trace { limit, .. } => limit,
            WorkloadKind::Fio(_)
            | WorkloadKind::Kv(_)
            | WorkloadKind::Pgbench(_)
            | WorkloadKind::Dd(_)
            | WorkloadKind::Eater(_)
            | WorkloadKind::Kbuild(_)
            | WorkloadKind::Tabs(_) => None,
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
            start: 0,
            cgroup: None,
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

    /// The advice in effect: the given one, or `random` for trace replays, fio's
    /// `fadvise_hint` default for `fio`, and `normal` otherwise.
    pub fn effective_advice(&self) -> Advice {
        match (self.advice, &self.kind) {
            (Some(a), _) => a,
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

// ---------------------------------------------------------------------------------------
// The TOML shape of a workload: one flat table, checked against its kind.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum KindName {
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
    fn is_model(self) -> bool {
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

    fn name(self) -> &'static str {
        match self {
            KindName::Uniform => "uniform",
            KindName::Zipf => "zipf",
            KindName::Sequential => "sequential",
            KindName::Loop => "loop",
            KindName::HotCold => "hot-cold",
            KindName::Touch => "touch",
            KindName::Trace => "trace",
            KindName::Fio => "fio",
            KindName::Kv => "kv",
            KindName::Pgbench => "pgbench",
            KindName::Dd => "dd",
            KindName::Eater => "eater",
            KindName::Kbuild => "kbuild",
            KindName::Tabs => "tabs",
        }
    }

    /// (required, optional) fields of the kind besides the common ones.
    fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            KindName::Uniform => (&["pages", "accesses"], &[]),
            KindName::Zipf => (&["pages", "theta", "accesses"], &["scatter"]),
            KindName::Sequential => (&["pages"], &["passes"]),
            KindName::Loop => (&["pages"], &["iterations"]),
            KindName::HotCold => (
                &["pages", "hot_fraction", "hot_probability", "accesses"],
                &[],
            ),
            KindName::Touch => (&["pages"], &[]),
            KindName::Trace => (&["path"], &["format", "limit", "pages"]),
            KindName::Fio => (
                &["rw", "size"],
                &[
                    "bs",
                    "numjobs",
                    "nrfiles",
                    "shared_file",
                    "ios",
                    "io_size",
                    "rwmixread",
                    "random_distribution",
                    "norandommap",
                ],
            ),
            KindName::Kv => (
                &["keys", "gets"],
                &[
                    "value_size",
                    "key_pattern",
                    "key_stddev",
                    "key_median",
                    "theta",
                    "ratio",
                ],
            ),
            KindName::Pgbench => (
                &["scale", "transactions"],
                &["shared_buffers", "wal_pages", "max_wal_size"],
            ),
            KindName::Dd => (&["count"], &["bs", "read"]),
            KindName::Eater => (&["size"], &["passes", "pattern", "rate"]),
            KindName::Tabs => (&["tabs", "tab_size", "switches"], &["touches"]),
            KindName::Kbuild => (
                &["units"],
                &[
                    "jobs",
                    "source_size",
                    "headers",
                    "header_size",
                    "includes",
                    "header_theta",
                    "cc_mem",
                    "cc_passes",
                    "object_size",
                    "cpu",
                ],
            ),
        }
    }

    /// The common fields the kind takes.
    fn common(self) -> &'static str {
        match self {
            KindName::Eater | KindName::Tabs => {
                "name, phase, weight, advice, start, cgroup, write_ratio"
            }
            k if k.is_model() => "name, phase, weight, advice, start, cgroup",
            _ => "name, target, write_ratio, phase, weight, advice, start, cgroup",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
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
    #[serde(
        default,
        deserialize_with = "models::de_opt_time",
        serialize_with = "ser_opt_time",
        skip_serializing_if = "Option::is_none"
    )]
    start: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cgroup: Option<String>,
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
struct KindError {
    field: Option<&'static str>,
    message: String,
}

impl TryFrom<RawWorkload> for WorkloadSpec {
    type Error = String;

    fn try_from(r: RawWorkload) -> Result<WorkloadSpec, String> {
        convert(r).map_err(|e| e.message)
    }
}

fn convert(r: RawWorkload) -> Result<WorkloadSpec, KindError> {
    let kind = r.kind;
    let present: [(&'static str, bool); 55] = [
        ("pages", r.pages.is_some()),
        ("accesses", r.accesses.is_some()),
        ("theta", r.theta.is_some()),
        ("scatter", r.scatter.is_some()),
        ("passes", r.passes.is_some()),
        ("iterations", r.iterations.is_some()),
        ("hot_fraction", r.hot_fraction.is_some()),
        ("hot_probability", r.hot_probability.is_some()),
        ("path", r.path.is_some()),
        ("format", r.format.is_some()),
        ("limit", r.limit.is_some()),
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
        ("count", r.count.is_some()),
        ("read", r.read.is_some()),
        ("pattern", r.pattern.is_some()),
        ("rate", r.rate.is_some()),
        ("tabs", r.tabs.is_some()),
        ("tab_size", r.tab_size.is_some()),
        ("switches", r.switches.is_some()),
        ("touches", r.touches.is_some()),
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
        // Common fields that only some kinds take.
        ("target", r.target.is_some()),
        ("write_ratio", r.write_ratio.is_some()),
    ];
    let (required, optional) = kind.fields();
    let model = kind.is_model();
    for (field, is) in present {
        let common_ok = match field {
            "target" => !model,
            "write_ratio" => !model || matches!(kind, KindName::Eater | KindName::Tabs),
            _ => false,
        };
        if is && !common_ok && !required.contains(&field) && !optional.contains(&field) {
            let all: Vec<&str> = required.iter().chain(optional).copied().collect();
            let hint = match field {
                "target" => " (a model knows which files and mappings it uses)",
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
                "kind `{}` needs the field `target` (anon, file, mmap or mmap-exec)",
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
        KindName::Touch => WorkloadKind::Touch { pages },
        KindName::Trace => WorkloadKind::Trace {
            path: r.path.unwrap_or_default(),
            format: r.format.unwrap_or_default(),
            limit: r.limit,
            pages: r.pages,
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
        start: r.start.unwrap_or(0),
        cgroup: r.cgroup,
        kind,
    })
}

/// The TOML shape of a scenario; workloads are checked against their kind afterwards,
/// when their index is known.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioToml {
    #[serde(default = "default_seed")]
    seed: u64,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    machine: MachineConfig,
    #[serde(default)]
    warmup_events: Option<u64>,
    #[serde(rename = "workload", default)]
    workloads: Vec<RawWorkload>,
    #[serde(rename = "cgroup", default)]
    cgroups: Vec<CgroupSpec>,
    #[serde(rename = "cgroup_change", default)]
    cgroup_changes: Vec<CgroupChange>,
    #[serde(rename = "cgroup_cycle", default)]
    cgroup_cycles: Vec<CgroupCycle>,
    #[serde(rename = "cgroup_move", default)]
    cgroup_moves: Vec<crate::cgroups::CgroupMove>,
    #[serde(rename = "published", default)]
    published: Vec<crate::published::Published>,
    #[serde(rename = "lru_gen_write", default)]
    lru_gen_writes: Vec<LruGenWrite>,
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
            start: (w.start != 0).then_some(w.start),
            cgroup: w.cgroup,
            pages: None,
            accesses: None,
            theta: None,
            scatter: None,
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
            count: None,
            read: None,
            pattern: None,
            rate: None,
            tabs: None,
            tab_size: None,
            switches: None,
            touches: None,
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
            } => {
                r.pages = Some(pages);
                r.theta = Some(theta);
                r.accesses = Some(accesses);
                r.scatter = Some(scatter);
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
            WorkloadKind::Touch { pages } => r.pages = Some(pages),
            WorkloadKind::Trace {
                path,
                format,
                limit,
                pages,
            } => {
                r.path = Some(path);
                r.format = Some(format);
                r.limit = limit;
                r.pages = pages;
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
            }
        }
        r
    }
}

// ---------------------------------------------------------------------------------------
// Loading and validation.

/// The scenario name for a file name: its stem (`postgres-like.toml` → `postgres-like`).
fn stem(name: &str) -> String {
    Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| name.to_string())
}

impl Scenario {
    /// A scenario with `machine` and `workloads`, seed 1, named `name`.
    pub fn new(name: &str, machine: MachineConfig, workloads: Vec<WorkloadSpec>) -> Scenario {
        Scenario {
            name: name.to_string(),
            source: name.to_string(),
            base_dir: None,
            seed: default_seed(),
            description: None,
            warmup_events: None,
            machine,
            workloads,
            cgroups: Vec::new(),
            cgroup_changes: Vec::new(),
            cgroup_cycles: Vec::new(),
            cgroup_moves: Vec::new(),
            published: Vec::new(),
            lru_gen_writes: Vec::new(),
        }
    }

    fn from_parts(t: ScenarioToml) -> Result<Scenario, (usize, KindError)> {
        let workloads = t
            .workloads
            .into_iter()
            .enumerate()
            .map(|(i, w)| convert(w).map_err(|e| (i, e)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Scenario {
            name: String::new(),
            source: String::new(),
            base_dir: None,
            seed: t.seed,
            description: t.description,
            machine: t.machine,
            warmup_events: t.warmup_events,
            workloads,
            cgroups: t.cgroups,
            cgroup_changes: t.cgroup_changes,
            cgroup_cycles: t.cgroup_cycles,
            cgroup_moves: t.cgroup_moves,
            published: t.published,
            lru_gen_writes: t.lru_gen_writes,
        })
    }

    /// Parses a scenario from TOML text without validating the values (see
    /// [`validate`](Scenario::validate)); `name` (e.g. the file name) is used in errors
    /// and, without its extension, as the scenario name.
    ///
    /// Errors give the line, column and field path, e.g.
    /// `s.toml: line 3, column 10: machine.memory: zero size `0M`; sizes must be positive`.
    pub fn parse_toml_str(text: &str, name: &str) -> Result<Scenario, WorkloadError> {
        let t: ScenarioToml = toml::from_str(text).map_err(|e| {
            let pos = e.span().map(|span| tomlpos::locate(text, span.start));
            let mut field = pos.as_ref().and_then(|p| p.field.clone());
            let mut message = e.message().trim_end().to_string();
            // `[machine.fs]` before any `[machine]` makes the machine table there, so
            // the machine's own missing `memory` is reported at the sub-table's header.
            if message == "missing field `memory`"
                && field.as_deref().is_some_and(|f| f.starts_with("machine."))
            {
                message = format!(
                    "missing field `memory` (the machine's memory size, e.g. `memory = \"4G\"` \
                     under `[machine]`; this `[{}]` table makes the `[machine]` table without it)",
                    field.as_deref().unwrap_or_default()
                );
                field = Some("machine".into());
            }
            // serde names the Rust type a table deserialises into; say what to write.
            for (ty, table) in [
                (
                    "struct DeviceConfig",
                    "a device table, e.g. `{ device = \"zram\", size = \"1G\" }` \
                     or a `[machine.swap]` section with `device` and `size`",
                ),
                (
                    "struct PolicyConfig",
                    "a policy table, e.g. `{ name = \"mglru\" }` or a `[machine.policy]` section",
                ),
                ("struct MachineConfig", "a `[machine]` table"),
            ] {
                if message.contains(ty) {
                    message =
                        message.replace(&format!("expected {ty}"), &format!("expected {table}"));
                }
            }
            WorkloadError::Parse {
                file: name.to_string(),
                line: pos.as_ref().map(|p| p.line),
                column: pos.as_ref().map(|p| p.column),
                field,
                message,
            }
        })?;
        let mut s = Scenario::from_parts(t).map_err(|(i, e)| {
            let table = format!("workload[{i}]");
            let pos = e
                .field
                .and_then(|f| tomlpos::find(text, &table, Some(f)))
                .or_else(|| tomlpos::find(text, &table, None));
            WorkloadError::Parse {
                file: name.to_string(),
                line: pos.as_ref().map(|p| p.line),
                column: pos.as_ref().map(|p| p.column),
                field: Some(match e.field {
                    Some(f) => format!("{table}.{f}"),
                    None => table,
                }),
                message: e.message,
            }
        })?;
        s.name = stem(name);
        s.source = name.to_string();
        Ok(s)
    }

    /// Parses and [validates](Scenario::validate) a scenario from TOML text.
    pub fn from_toml_str(text: &str, name: &str) -> Result<Scenario, WorkloadError> {
        let s = Scenario::parse_toml_str(text, name)?;
        s.validate()?;
        Ok(s)
    }

    /// Reads, parses and validates the scenario file at `path`; relative trace paths in
    /// it are relative to its directory.
    pub fn from_file(path: &Path) -> Result<Scenario, WorkloadError> {
        let mut s = Scenario::parse_file(path)?;
        s.validate()?;
        s.base_dir = path.parent().map(Path::to_path_buf);
        Ok(s)
    }

    /// Like [`from_file`](Scenario::from_file) without validating.
    pub fn parse_file(path: &Path) -> Result<Scenario, WorkloadError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| WorkloadError::Io {
            file: name.clone(),
            source,
        })?;
        let mut s = Scenario::parse_toml_str(&text, &name)?;
        s.base_dir = path.parent().map(Path::to_path_buf);
        Ok(s)
    }

    /// The scenario as TOML text (what [`from_toml_str`](Scenario::from_toml_str) reads).
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot render scenario: {e}\n"))
    }

    /// Where a trace path of this scenario points: as given if absolute, else relative to
    /// [`base_dir`](Scenario::base_dir).
    pub fn resolve_path(&self, path: &Path) -> PathBuf {
        match &self.base_dir {
            Some(dir) if path.is_relative() && !dir.as_os_str().is_empty() => dir.join(path),
            _ => path.to_path_buf(),
        }
    }

    /// Total events of all workloads, if known before running (not when a trace has no
    /// `limit`, nor with a `pgbench` workload, whose reads and write-backs depend on its
    /// buffer hits). Idle waits for a `start` are not events.
    pub fn expected_events(&self) -> Option<u64> {
        self.workloads
            .iter()
            .try_fold(0u64, |acc, w| Some(acc.saturating_add(w.kind.events()?)))
    }

    /// Checks the machine (as [`MachineConfig::validate`], fields prefixed `machine.`),
    /// every workload's values against their ranges, and the cgroups, their changes and
    /// cycles ([`crate::cgroups::validate`]); the error names the field, e.g.
    /// `workload[2].theta: 7 is out of range [0, 5]` or `cgroup[1].max: …`.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        let invalid = |field: String, message: String| WorkloadError::Invalid {
            file: self.source.clone(),
            field,
            message,
        };
        self.machine
            .validate()
            .map_err(|e| invalid(machine_field(&e), e.message))?;
        if let (Some(w), Some(total)) = (self.warmup_events, self.expected_events()) {
            if w >= total {
                return Err(invalid(
                    "warmup_events".into(),
                    format!("{w} leaves nothing to measure: the workloads issue {total} events"),
                ));
            }
        }
        for (i, w) in self.lru_gen_writes.iter().enumerate() {
            if self.machine.policy.name != mmsim_core::PolicyName::Mglru {
                return Err(invalid(
                    format!("lru_gen_write[{i}]"),
                    "the lru_gen files are written under the mglru policy only; set \
                     [machine.policy] name = \"mglru\""
                        .into(),
                ));
            }
            mmsim_core::reclaim::lru_gen::parse_lru_gen_file_write(w.path(), &w.write).map_err(
                |e| {
                    let f = if e.starts_with("unknown file") {
                        "path"
                    } else {
                        "write"
                    };
                    invalid(format!("lru_gen_write[{i}].{f}"), e)
                },
            )?;
        }
        if self.workloads.is_empty() {
            return Err(invalid(
                "workload".into(),
                "the scenario has no workloads; add at least one [[workload]] table".into(),
            ));
        }
        // A map, not a scan: scenarios with tens of thousands of workloads load in
        // linear time.
        let mut names: std::collections::HashMap<String, usize> =
            std::collections::HashMap::with_capacity(self.workloads.len());
        for (i, w) in self.workloads.iter().enumerate() {
            let field = |f: &str| format!("workload[{i}].{f}");
            let name = w.display_name(i);
            if let Some(n) = &w.name {
                if n.trim().is_empty() || n.len() > 128 || n.chars().any(char::is_control) {
                    return Err(invalid(
                        field("name"),
                        format!("{n:?} is not a usable name (1 to 128 printable characters)"),
                    ));
                }
            }
            if let Some(j) = names.get(&name) {
                return Err(invalid(
                    field("name"),
                    format!("`{name}` is already the name of workload[{j}]; names must be unique"),
                ));
            }
            names.insert(name, i);
            if !(1..=1000).contains(&w.weight) {
                return Err(invalid(
                    field("weight"),
                    format!("{} is out of range [1, 1000]", w.weight),
                ));
            }
            if w.start > models::MAX_START_NS {
                return Err(invalid(
                    field("start"),
                    format!(
                        "{} is out of range [0s, 1000000s]",
                        models::format_time(w.start)
                    ),
                ));
            }
            if let Some(t) = w.kind.model_target() {
                if w.target != t {
                    return Err(invalid(
                        field("target"),
                        format!(
                            "kind `{}` takes no target (it is `{t}` by construction), not `{}`",
                            w.kind.name(),
                            w.target
                        ),
                    ));
                }
                if w.write_ratio.is_some()
                    && !matches!(w.kind, WorkloadKind::Eater(_) | WorkloadKind::Tabs(_))
                {
                    return Err(invalid(
                        field("write_ratio"),
                        format!("does not apply to kind `{}`", w.kind.name()),
                    ));
                }
            }
            let bad = |b: Bad| invalid(field(b.field), b.message);
            if let Some(r) = w.write_ratio {
                if !(0.0..=1.0).contains(&r) {
                    return Err(invalid(
                        field("write_ratio"),
                        format!("{r} is out of range [0, 1]"),
                    ));
                }
                if w.target == Target::MmapExec && r > 0.0 {
                    return Err(invalid(
                        field("write_ratio"),
                        format!("{r}: an mmap-exec mapping (program text) is read-only; use 0"),
                    ));
                }
            }
            let check_pages = |pages: u64| {
                if (1..=MAX_PAGES).contains(&pages) {
                    Ok(())
                } else {
                    Err(invalid(
                        field("pages"),
                        format!("{pages} is out of range [1, {MAX_PAGES}] pages"),
                    ))
                }
            };
            let check_count = |name: &str, n: u64| {
                if (1..=MAX_EVENTS).contains(&n) {
                    Ok(())
                } else {
                    Err(invalid(
                        field(name),
                        format!("{n} is out of range [1, 2^40]"),
                    ))
                }
            };
            let check_fraction = |name: &str, v: f64, zero_ok: bool| {
                let ok = v.is_finite() && v <= 1.0 && (v > 0.0 || (zero_ok && v == 0.0));
                if ok {
                    Ok(())
                } else if zero_ok {
                    Err(invalid(field(name), format!("{v} is out of range [0, 1]")))
                } else {
                    Err(invalid(field(name), format!("{v} is out of range (0, 1]")))
                }
            };
            match &w.kind {
                WorkloadKind::Uniform { pages, accesses } => {
                    check_pages(*pages)?;
                    check_count("accesses", *accesses)?;
                }
                WorkloadKind::Zipf {
                    pages,
                    theta,
                    accesses,
                    ..
                } => {
                    check_pages(*pages)?;
                    if !(theta.is_finite() && (0.0..=MAX_THETA).contains(theta)) {
                        return Err(invalid(
                            field("theta"),
                            format!("{theta} is out of range [0, {MAX_THETA}]"),
                        ));
                    }
                    check_count("accesses", *accesses)?;
                }
                WorkloadKind::Sequential { pages, passes: n }
                | WorkloadKind::Loop {
                    pages,
                    iterations: n,
                } => {
                    check_pages(*pages)?;
                    let what = if matches!(w.kind, WorkloadKind::Loop { .. }) {
                        "iterations"
                    } else {
                        "passes"
                    };
                    check_count(what, *n)?;
                    if pages.saturating_mul(*n) > MAX_EVENTS {
                        return Err(invalid(
                            field(what),
                            format!(
                                "pages × {what} = {} events is more than the 2^40 limit",
                                pages.saturating_mul(*n)
                            ),
                        ));
                    }
                }
                WorkloadKind::HotCold {
                    pages,
                    hot_fraction,
                    hot_probability,
                    accesses,
                } => {
                    check_pages(*pages)?;
                    check_fraction("hot_fraction", *hot_fraction, false)?;
                    check_fraction("hot_probability", *hot_probability, true)?;
                    check_count("accesses", *accesses)?;
                }
                WorkloadKind::Touch { pages } => check_pages(*pages)?,
                WorkloadKind::Trace {
                    path, limit, pages, ..
                } => {
                    if path.as_os_str().is_empty() {
                        return Err(invalid(field("path"), "is empty".into()));
                    }
                    if let Some(l) = limit {
                        check_count("limit", *l)?;
                    }
                    if let Some(p) = pages {
                        check_pages(*p)?;
                    }
                }
                WorkloadKind::Fio(f) => f.validate().map_err(bad)?,
                WorkloadKind::Kv(k) => k.validate().map_err(bad)?,
                WorkloadKind::Pgbench(p) => p.validate().map_err(bad)?,
                WorkloadKind::Dd(d) => d.validate().map_err(bad)?,
                WorkloadKind::Eater(e) => e.validate().map_err(bad)?,
                WorkloadKind::Kbuild(k) => k.validate().map_err(bad)?,
                WorkloadKind::Tabs(t) => t.validate().map_err(bad)?,
            }
        }
        for (i, p) in self.published.iter().enumerate() {
            p.validate()
                .map_err(|(f, m)| invalid(format!("published[{i}].{f}"), m))?;
        }
        crate::cgroups::validate(self)
    }
}

/// The scenario path of a machine configuration field (the core already
/// names fields by their `machine.` path; anything else is prefixed).
fn machine_field(e: &ConfigError) -> String {
    if e.field.starts_with("machine.") {
        e.field.clone()
    } else {
        format!("machine.{}", e.field)
    }
}
