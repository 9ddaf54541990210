//! Memory cgroups of a scenario: the groups (`[[cgroup]]`), knob writes at given
//! times (`[[cgroup_change]]`), knobs that cycle between values (`[[cgroup_cycle]]`),
//! the workloads' `cgroup` field, and workloads moved between groups
//! (`[[cgroup_move]]`).
//!
//! ```toml
//! [machine]
//! memory = "256M"
//!
//! [[cgroup]]
//! path = "/build"       # "/a" or "/a/b"; a parent is declared before its children
//! version = "v1"        # optional: "v1" or "v2"; inherited by the children
//! soft_limit = 0        # v1 memory.soft_limit_in_bytes
//! swappiness = 100      # v1 memory.swappiness
//!
//! [[cgroup]]
//! path = "/db"
//! max = "200M"          # memory.max (v1: memory.limit_in_bytes); "max" = no limit
//!
//! [[cgroup]]
//! path = "/db/main"
//! version = "v2"
//! low = "64M"           # memory.low (v2)
//!
//! [[cgroup_change]]     # at 2 s of simulated time, /db's memory.max becomes 150M
//! at = "2s"
//! path = "/db"
//! max = "150M"
//!
//! [[cgroup_cycle]]      # seed 002's pressure: 75 % of the peak for 1 s, 200 % for 10 s
//! path = "/build"
//! knob = "max"
//! values = ["75%", "200%"]
//! durations = ["1s", "10s"]
//! of = "40M"            # the reference of the percentages: a size, or "peak"
//! until = "60s"
//! final = "max"         # optional: written at `until`
//!
//! [[workload]]
//! kind = "eater"
//! size = "32M"
//! cgroup = "/db/main"   # the workload's tasks run there (default "/")
//! ```
//!
//! ## Groups: `[[cgroup]]`
//!
//! | field | meaning | range | default |
//! |---|---|---|---|
//! | `path` | `/name` or `/parent/name`; names of letters, digits, `.`, `_`, `-`, not `.` or `..` | ≤ 64 characters a name, ≤ 65,534 groups besides `/` (the kernel's 65,535 memcg ids) | required |
//! | `version` | `"v1"` or `"v2"`: which knobs the group has | | its parent's; none: every knob |
//! | `max` | `memory.max` (v1 `memory.limit_in_bytes`): hard limit | size, `0`, `"max"`, or a percentage | `"max"` |
//! | `high` | `memory.high` (v2): throttle limit | as `max` | `"max"` |
//! | `low` | `memory.low` (v2): best-effort protection | as `max` | `0` |
//! | `min` | `memory.min` (v2): hard protection | as `max` | `0` |
//! | `swap_high` | `memory.swap.high` (v2): above it the group's tasks are throttled as over `high`, nothing is reclaimed | as `max` | `"max"` |
//! | `swap_max` | `memory.swap.max` (v2): most swap the group's pages may hold; at it, anon pages are not swapped out and reclaim scans only file | as `max` | `"max"` |
//! | `soft_limit` | v1 `memory.soft_limit_in_bytes` | as `max` | `"max"` |
//! | `swappiness` | v1 `memory.swappiness` | integer 0..=200 | `vm.swappiness` |
//! | `of` | what a percentage value is a percentage of (see below) | a size or `"peak"` | none |
//!
//! Parents are declared before their children (as `mkdir` without `-p`): a group whose
//! parent is not declared earlier is an error, so a misspelt path never creates a group
//! silently. The top group `/` always exists; a `[[cgroup]]` with `path = "/"` may give
//! it `max` (the same limit as `machine.memcg_max`, of which only one may be set) and
//! `soft_limit`; the kernel's root cgroup has no `memory.high`, `memory.low`,
//! `memory.min`, `memory.swap.max` or `memory.swap.high`, and its `memory.swappiness` is `vm.swappiness` (`machine.swappiness`),
//! so those are errors there. Groups are created in the order declared, which is the
//! order reclaim walks siblings in.
//!
//! Sizes are as elsewhere in scenarios (`"512M"`, `"1000p"` for pages), rounded down to
//! whole pages as the kernel does; `0` (or `"0"`, `"0M"`) is zero; `"max"` is no limit.
//! A bare number other than 0 is an error (the cgroup files take bytes, the scenario's
//! `pages` fields take pages: write the unit), and so is a size of less than one page.
//!
//! Versions: cgroup v1 and v2 are separate hierarchies in the kernel, so a child cannot
//! have another version than its parent. A v2 group has no `soft_limit` and no
//! `swappiness`; a v1 group has no `high`, `low`, `min`, `swap_max` or `swap_high` (v1's
//! `memory.memsw.limit_in_bytes` is not modelled). A group without a version
//! (nor an ancestor with one) takes every knob — the simulator implements both on one
//! tree. Changes and cycles obey the version of their group.
//!
//! Protection: a group's `low` (or `min`) may not be larger than its parent's while the
//! parent sets one (non-zero, and not the top group): the kernel would cap it at the
//! parent's anyway. The rule is checked at every simulated time a change or cycle writes
//! `low` or `min`, after all writes of that time.
//!
//! ## Writes at a time: `[[cgroup_change]]`
//!
//! | field | meaning | range | default |
//! |---|---|---|---|
//! | `at` | simulated time of the write | `"0s"`..=`"1000000s"` | required |
//! | `path` | a declared group (or `/`) | | required |
//! | `max`, `high`, `low`, `min`, `swap_max`, `swap_high`, `soft_limit`, `swappiness` | the values written, one or more | as in `[[cgroup]]` | |
//! | `of` | the reference of percentages | a size or `"peak"` | none |
//!
//! The knobs of one change are written in the order max, high, low, min, swap_max,
//! swap_high, soft_limit, swappiness. Two changes may not write the same knob of the same group at the same
//! time.
//!
//! ## Cycles: `[[cgroup_cycle]]`
//!
//! | field | meaning | range | default |
//! |---|---|---|---|
//! | `path` | a declared group (or `/`) | | required |
//! | `knob` | `max`, `high`, `low`, `min`, `swap_max`, `swap_high`, `soft_limit`, `swappiness`, or `reclaim` (v2 `memory.reclaim`: each value is an amount to reclaim proactively, as a userspace agent writes it periodically) | | required |
//! | `values` | the values written in turn | 1..=64 values, as in `[[cgroup]]` | required |
//! | `durations` | how long each value holds | as many as `values`, each `(0s, 1000000s]` | required |
//! | `start` | time of the first write | `"0s"`..=`"1000000s"` | `"0s"` |
//! | `until` | no write of `values` at or after it | `(start, 1000000s]` | required |
//! | `final` | a value written at `until` | as in `[[cgroup]]` | none: the last value stays |
//! | `of` | the reference of percentages | a size or `"peak"` | none |
//!
//! The cycle writes `values[0]` at `start`, `values[1]` at `start + durations[0]`, and so
//! on, wrapping around, while the time is before `until` (at most 10^6 writes in all the
//! scenario's changes and cycles). Two cycles of the same knob of the same group may not
//! overlap in time (`[start, until)`, or `[start, until]` with a `final`), and a change of
//! that knob may not fall inside a cycle's time.
//!
//! ## Moving workloads: `[[cgroup_move]]`
//!
//! | field | meaning | range | default |
//! |---|---|---|---|
//! | `at` | simulated time of the move | `"0s"`..=`"1000000s"` | required |
//! | `workload` | a workload's name (its `name`, or `KIND-INDEX` without one) | | required |
//! | `to` | a declared group (or `/`) | | required |
//!
//! Every task of the workload is written to the group's `cgroup.procs`: its later
//! charges (and those of reads through files it opened) go to the new group; pages
//! already charged stay where they are, as in the kernel (cgroup v2 never moves
//! charges; v1 only with `memory.move_charge_at_immigrate`, off by default). A workload
//! is moved at most once at a given time.
//!
//! Writes are made when the simulated clock reaches their time, before the first event
//! at or after it ([`mmsim_core::Sim::schedule_memcg_knob`]); writes due at the same time
//! are made in the order: changes in file order, then cycles in file order, then moves
//! in file order. Lowering
//! `max` below the group's usage reclaims (and OOM-kills, if reclaim fails) right away,
//! as writing `memory.max` does.
//!
//! ## Percentages: `of`
//!
//! A size knob's value may be a percentage, `"75%"` (0 %..=10000 %), of the table's
//! `of`:
//!
//! * a size (`of = "1100M"`): a reference measured beforehand. This is what seed 002's
//!   benchmark did: its script (damon-tests `0009_memcg_pressure.sh`) keeps a table of
//!   each workload's RSS measured in earlier runs and writes 75 % and 200 % of it.
//!   To measure it here, run the scenario without the cycle (`mmsim run --json`) and read
//!   `memcg["/path"].current` at the end: with no reclaim in that group (`pgsteal` 0)
//!   and no workload that frees memory (none of mmsim's do), the end value is the peak.
//! * `"peak"`: that measurement, made for you. Before the run, the scenario is run once
//!   as a calibration: the same workloads, seed and groups, but no knob set, changed or
//!   cycled, no `machine.memcg_max`, and the machine's memory raised to the 2T maximum, so
//!   nothing is ever reclaimed; the group's `memory.current` at its end is its peak
//!   (give or take the charge batch of 64 pages a CPU keeps in stock). It costs one more
//!   run of the scenario, with all of its footprint resident in the simulator's memory.
//!   A calibration run that reclaims or kills in the group, or charges nothing to it, is
//!   an error.
//!
//! A percentage resolves to ⌊reference × percentage / 100⌋ pages. `of` without a
//! percentage among the table's values is an error.
//!
//! ## Workloads: `cgroup`
//!
//! Every `[[workload]]` takes `cgroup = "/path"` (default `/`), a declared group. The
//! workload's tasks are attached to it (their anonymous memory and page faults are
//! charged there), and the files it reads and writes through a descriptor are opened by
//! its tasks (their page cache is charged there); see [`crate::models`] for which tasks
//! and files each model has.

mod plan;

use std::collections::BTreeMap;
use std::fmt;

use mmsim_core::config::MAX_MEMORY_PAGES;
use mmsim_core::memcg::{MemcgId, MemcgKnob, MAX_MEMCGS, ROOT};
use mmsim_core::{Sim, Size, PAGE_SIZE};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::WorkloadError;
use crate::models::{parse_time, MAX_START_NS};
use crate::scenario::Scenario;

/// Most knob writes all changes and cycles of a scenario may make.
pub const MAX_KNOB_WRITES: u64 = 1_000_000;
/// Largest percentage a value may be.
pub const MAX_PERCENT: f64 = 10_000.0;
/// Most values (and durations) of one cycle.
pub const MAX_CYCLE_VALUES: usize = 64;
/// Longest name of one group (one path component).
pub const MAX_NAME_LEN: usize = 64;

/// The knobs in the order a change writes them.
const KNOBS: [MemcgKnob; 8] = [
    MemcgKnob::Max,
    MemcgKnob::High,
    MemcgKnob::Low,
    MemcgKnob::Min,
    MemcgKnob::SwapMax,
    MemcgKnob::SwapHigh,
    MemcgKnob::SoftLimit,
    MemcgKnob::Swappiness,
];

/// The scenario field name of a knob (`max`, `soft_limit`, …): its cgroup file without
/// `memory.` (and `_in_bytes`), as `MemcgKnob`'s serde name.
pub fn knob_name(k: MemcgKnob) -> &'static str {
    match k.file() {
        "memory.soft_limit_in_bytes" => "soft_limit",
        "memory.swap.max" => "swap_max",
        "memory.swap.high" => "swap_high",
        f => f.strip_prefix("memory.").unwrap_or(f),
    }
}

/// A knob's value as a scenario writes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KnobValue {
    /// `"max"`: no limit.
    Max,
    /// A size (`"512M"`, `"1000p"`, `"0"`), in whole pages.
    Pages(u64),
    /// A percentage of the table's `of` (`"75%"`).
    Percent(f64),
    /// A bare integer: `swappiness`, or 0 for a size knob.
    Number(u64),
}

impl fmt::Display for KnobValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            KnobValue::Max => f.write_str("max"),
            KnobValue::Pages(0) => f.write_str("0p"),
            KnobValue::Pages(p) => write!(f, "{}", Size(p.saturating_mul(PAGE_SIZE))),
            KnobValue::Percent(x) => write!(f, "{x}%"),
            KnobValue::Number(n) => write!(f, "{n}"),
        }
    }
}

/// Parses a size knob's string: `max`, a percentage, or a size (zero allowed).
fn parse_value(s: &str) -> Result<KnobValue, String> {
    let t = s.trim();
    if t == "max" {
        return Ok(KnobValue::Max);
    }
    if let Some(num) = t.strip_suffix('%') {
        let x: f64 = num
            .trim()
            .parse()
            .map_err(|_| format!("`{t}` is not a percentage; write e.g. \"75%\""))?;
        if !x.is_finite() || x < 0.0 {
            return Err(format!("`{t}`: a percentage is at least 0 %"));
        }
        return Ok(KnobValue::Percent(x));
    }
    if t.starts_with('-') {
        return Err(format!("`{t}` is below 0; a limit is at least 0"));
    }
    // Zero in any unit the size parser knows ("0", "0M", "0p").
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic()).trim();
    let suffix = &t[digits.len()..].trim();
    if !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && digits.bytes().all(|b| b == b'0')
        && matches!(
            suffix.to_ascii_lowercase().as_str(),
            "" | "p" | "k" | "m" | "g" | "t" | "b"
        )
    {
        return Ok(KnobValue::Pages(0));
    }
    let size: Size = t
        .parse()
        .map_err(|e: String| format!("{e}, or \"max\", or a percentage such as \"75%\""))?;
    if size.pages() == 0 {
        return Err(format!(
            "`{t}` is less than one 4 KiB page (a number without a unit is bytes); write \
             \"{t}p\" for pages, or 0"
        ));
    }
    Ok(KnobValue::Pages(size.pages()))
}

impl Serialize for KnobValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            KnobValue::Number(n) => s.serialize_u64(*n),
            v => s.serialize_str(&v.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for KnobValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KnobValue, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = KnobValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a size such as \"512M\" or \"1000p\", 0, \"max\", or \"75%\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<KnobValue, E> {
                Ok(KnobValue::Number(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<KnobValue, E> {
                u64::try_from(v)
                    .map(KnobValue::Number)
                    .map_err(|_| E::custom(format!("{v} is below 0; a limit is at least 0")))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<KnobValue, E> {
                Err(E::custom(format!(
                    "{v}: write a size with a unit (\"512M\", \"1000p\"), \"max\", or a \
                     percentage (\"75%\")"
                )))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<KnobValue, E> {
                parse_value(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// What percentages are percentages of (`of`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference {
    /// `"peak"`: the group's peak `memory.current` in a calibration run (see the
    /// module documentation).
    Peak,
    /// A size measured beforehand, in pages (at least one).
    Pages(u64),
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Reference::Peak => f.write_str("peak"),
            Reference::Pages(p) => write!(f, "{}", Size(p.saturating_mul(PAGE_SIZE))),
        }
    }
}

impl Serialize for Reference {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Reference {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Reference, D::Error> {
        let s = String::deserialize(d)?;
        if s.trim() == "peak" {
            return Ok(Reference::Peak);
        }
        let size: Size = s.parse().map_err(|e: String| {
            serde::de::Error::custom(format!("{e}; `of` is a size or \"peak\""))
        })?;
        if size.pages() == 0 {
            return Err(serde::de::Error::custom(format!(
                "`{s}` is less than one 4 KiB page"
            )));
        }
        Ok(Reference::Pages(size.pages()))
    }
}

/// A cgroup hierarchy's version: which knobs its groups have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CgroupVersion {
    /// cgroup v1: `max` (`memory.limit_in_bytes`), `soft_limit`, `swappiness`.
    V1,
    /// cgroup v2: `max`, `high`, `low`, `min`, `swap_max`, `swap_high`, `reclaim` (cycles).
    V2,
}

impl CgroupVersion {
    /// `v1` or `v2`.
    pub fn name(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "v1",
            CgroupVersion::V2 => "v2",
        }
    }

    /// Whether groups of this version have `knob`.
    pub fn has(self, knob: MemcgKnob) -> bool {
        match self {
            CgroupVersion::V1 => matches!(
                knob,
                MemcgKnob::Max | MemcgKnob::SoftLimit | MemcgKnob::Swappiness
            ),
            CgroupVersion::V2 => matches!(
                knob,
                MemcgKnob::Max
                    | MemcgKnob::High
                    | MemcgKnob::Low
                    | MemcgKnob::Min
                    | MemcgKnob::SwapMax
                    | MemcgKnob::SwapHigh
                    | MemcgKnob::Reclaim
            ),
        }
    }
}

/// A time as scenarios write it (`0s`, `1500ms`, `1min`).
fn format_time(ns: u64) -> String {
    if ns == 0 {
        "0s".into()
    } else {
        crate::models::format_time(ns)
    }
}

fn ser_time<S: Serializer>(ns: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_time(*ns))
}

fn de_time<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    crate::models::de_opt_time(d).map(|t| t.unwrap_or(0))
}

fn ser_times<S: Serializer>(v: &[u64], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|ns| format_time(*ns)))
}

fn de_times<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    let v: Vec<String> = Vec::deserialize(d)?;
    v.iter()
        .map(|t| parse_time(t).map_err(serde::de::Error::custom))
        .collect()
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// A group: `[[cgroup]]`. See the [module documentation](self) for the fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CgroupSpec {
    /// `/name` or `/parent/name` (or `/`, the top group).
    pub path: String,
    /// Which knobs the group (and its children) have; default: its parent's, or all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<CgroupVersion>,
    /// The reference of percentage values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<Reference>,
    /// `memory.max` (v1 `memory.limit_in_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<KnobValue>,
    /// `memory.high` (v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<KnobValue>,
    /// `memory.low` (v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<KnobValue>,
    /// `memory.min` (v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<KnobValue>,
    /// `memory.swap.max` (v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_max: Option<KnobValue>,
    /// `memory.swap.high` (v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_high: Option<KnobValue>,
    /// v1 `memory.soft_limit_in_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soft_limit: Option<KnobValue>,
    /// v1 `memory.swappiness`, 0..=200.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swappiness: Option<KnobValue>,
}

impl CgroupSpec {
    /// A group at `path` with no knob set.
    pub fn new(path: &str) -> CgroupSpec {
        CgroupSpec {
            path: path.to_string(),
            version: None,
            of: None,
            max: None,
            high: None,
            low: None,
            min: None,
            swap_max: None,
            swap_high: None,
            soft_limit: None,
            swappiness: None,
        }
    }

    /// The knobs set, in writing order.
    pub fn knobs(&self) -> Vec<(MemcgKnob, KnobValue)> {
        knob_list([
            self.max,
            self.high,
            self.low,
            self.min,
            self.swap_max,
            self.swap_high,
            self.soft_limit,
            self.swappiness,
        ])
    }
}

fn knob_list(v: [Option<KnobValue>; 8]) -> Vec<(MemcgKnob, KnobValue)> {
    KNOBS
        .iter()
        .zip(v)
        .filter_map(|(&k, v)| v.map(|v| (k, v)))
        .collect()
}

/// Knob writes at a simulated time: `[[cgroup_change]]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CgroupChange {
    /// When, simulated ns (TOML: a time string, `"2s"`).
    #[serde(deserialize_with = "de_time", serialize_with = "ser_time")]
    pub at: u64,
    /// The group.
    pub path: String,
    /// The reference of percentage values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<Reference>,
    /// `memory.max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<KnobValue>,
    /// `memory.high`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<KnobValue>,
    /// `memory.low`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<KnobValue>,
    /// `memory.min`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<KnobValue>,
    /// `memory.swap.max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_max: Option<KnobValue>,
    /// `memory.swap.high`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_high: Option<KnobValue>,
    /// v1 `memory.soft_limit_in_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soft_limit: Option<KnobValue>,
    /// v1 `memory.swappiness`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swappiness: Option<KnobValue>,
}

impl CgroupChange {
    /// A change of nothing at `at` ns on `path` (set a knob before using it).
    pub fn new(at: u64, path: &str) -> CgroupChange {
        CgroupChange {
            at,
            path: path.to_string(),
            of: None,
            max: None,
            high: None,
            low: None,
            min: None,
            swap_max: None,
            swap_high: None,
            soft_limit: None,
            swappiness: None,
        }
    }

    /// The knobs written, in writing order.
    pub fn knobs(&self) -> Vec<(MemcgKnob, KnobValue)> {
        knob_list([
            self.max,
            self.high,
            self.low,
            self.min,
            self.swap_max,
            self.swap_high,
            self.soft_limit,
            self.swappiness,
        ])
    }
}

/// A workload moved to another group at a simulated time: `[[cgroup_move]]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CgroupMove {
    /// When, simulated ns (TOML: a time string, `"2s"`).
    #[serde(deserialize_with = "de_time", serialize_with = "ser_time")]
    pub at: u64,
    /// The workload, by name (its `name`, or `KIND-INDEX` without one).
    pub workload: String,
    /// The group its tasks move to.
    pub to: String,
}

/// A knob cycling between values: `[[cgroup_cycle]]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CgroupCycle {
    /// The group.
    pub path: String,
    /// The knob.
    pub knob: MemcgKnob,
    /// The values written in turn.
    pub values: Vec<KnobValue>,
    /// How long each value holds, ns (TOML: time strings).
    #[serde(deserialize_with = "de_times", serialize_with = "ser_times")]
    pub durations: Vec<u64>,
    /// Time of the first write, ns (default 0).
    #[serde(
        default,
        deserialize_with = "de_time",
        serialize_with = "ser_time",
        skip_serializing_if = "is_zero"
    )]
    pub start: u64,
    /// No value of `values` is written at or after this time, ns.
    #[serde(deserialize_with = "de_time", serialize_with = "ser_time")]
    pub until: u64,
    /// A value written at `until`.
    #[serde(default, rename = "final", skip_serializing_if = "Option::is_none")]
    pub final_value: Option<KnobValue>,
    /// The reference of percentage values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<Reference>,
}

/// Scales every size the scenario's groups write (`KnobValue::Pages` of the size
/// knobs, `of = "<size>"`; not `swappiness`, percentages or `"max"`) by `rate`, for a
/// sampled run (`crate::sample`): at least one page when it was not 0.
pub fn scale_limits(s: &mut crate::Scenario, rate: f64) {
    let page = |p: u64| {
        if p == 0 {
            0
        } else {
            ((p as f64 * rate) as u64).max(1)
        }
    };
    let value = |v: &mut Option<KnobValue>| {
        if let Some(KnobValue::Pages(p)) = v {
            *p = page(*p);
        }
    };
    let of = |r: &mut Option<Reference>| {
        if let Some(Reference::Pages(p)) = r {
            *p = page(*p);
        }
    };
    let limits = |vs: [&mut Option<KnobValue>; 7]| vs.into_iter().for_each(value);
    for c in &mut s.cgroups {
        of(&mut c.of);
        limits([
            &mut c.max,
            &mut c.high,
            &mut c.low,
            &mut c.min,
            &mut c.swap_max,
            &mut c.swap_high,
            &mut c.soft_limit,
        ]);
    }
    for c in &mut s.cgroup_changes {
        of(&mut c.of);
        limits([
            &mut c.max,
            &mut c.high,
            &mut c.low,
            &mut c.min,
            &mut c.swap_max,
            &mut c.swap_high,
            &mut c.soft_limit,
        ]);
    }
    for c in &mut s.cgroup_cycles {
        of(&mut c.of);
        if c.knob != MemcgKnob::Swappiness {
            for v in &mut c.values {
                if let KnobValue::Pages(p) = v {
                    *p = page(*p);
                }
            }
            let mut f = c.final_value;
            value(&mut f);
            c.final_value = f;
        }
    }
}

pub use plan::{
    calibration_scenario, needs_calibration, peaks, schedule, schedule_moves, setup, validate,
    KnobWrite,
};

#[cfg(test)]
mod tests {
    use super::plan::components;
    use super::*;

    #[test]
    fn values_parse() {
        assert_eq!(parse_value("max"), Ok(KnobValue::Max));
        assert_eq!(parse_value("512M"), Ok(KnobValue::Pages(131072)));
        assert_eq!(parse_value("100p"), Ok(KnobValue::Pages(100)));
        assert_eq!(parse_value("0"), Ok(KnobValue::Pages(0)));
        assert_eq!(parse_value("0M"), Ok(KnobValue::Pages(0)));
        assert_eq!(parse_value("75%"), Ok(KnobValue::Percent(75.0)));
        assert_eq!(parse_value("12.5 %"), Ok(KnobValue::Percent(12.5)));
        assert_eq!(parse_value("6000"), Ok(KnobValue::Pages(1)));
        for bad in ["-1M", "x", "12Q", "100", "%", "-5%", "nan%", "0x"] {
            assert!(parse_value(bad).is_err(), "{bad}");
        }
        assert!(parse_value("100").unwrap_err().contains("100p"));
        for v in [
            KnobValue::Max,
            KnobValue::Pages(0),
            KnobValue::Pages(3),
            KnobValue::Pages(131072),
            KnobValue::Percent(75.0),
            KnobValue::Percent(12.25),
        ] {
            assert_eq!(parse_value(&v.to_string()), Ok(v), "{v}");
        }
    }

    #[test]
    fn knob_names_are_the_serde_names() {
        for k in KNOBS {
            let serde = toml::Value::try_from(k).unwrap();
            assert_eq!(serde.as_str(), Some(knob_name(k)));
        }
    }

    #[test]
    fn versions_have_their_knobs() {
        assert!(CgroupVersion::V1.has(MemcgKnob::SoftLimit));
        assert!(!CgroupVersion::V1.has(MemcgKnob::Low));
        assert!(CgroupVersion::V2.has(MemcgKnob::Min));
        assert!(!CgroupVersion::V2.has(MemcgKnob::Swappiness));
        for k in KNOBS {
            assert!(CgroupVersion::V1.has(k) || CgroupVersion::V2.has(k));
        }
    }

    #[test]
    fn paths() {
        assert_eq!(components("/"), Ok(vec![]));
        assert_eq!(components("/a/b-1.x_y"), Ok(vec!["a", "b-1.x_y"]));
        for bad in ["", "a", "/a/", "//a", "/a//b", "/.", "/a/..", "/a b", "/ä"] {
            assert!(components(bad).is_err(), "{bad}");
        }
        assert!(components(&format!("/{}", "x".repeat(65))).is_err());
    }
}
