//! `mmsim validate`: run validation cases on a real kernel (this machine's, or a Debian
//! kernel under qemu) and in mmsim with the same event stream, and compare the
//! counters side by side.
//!
//! A case (`validation/suite.toml`) names a scenario whose workloads all run in one
//! `[[cgroup]]` group. The kernel side runs `mmsim-probe` (the scenario's exact event
//! stream) in a memory cgroup with that group's limit ([`kernel`]); the mmsim side runs
//! the same scenario with the settings the kernel release implies, printed as `--set`
//! flags under the case ([`replayed`]). Kernel results are saved as JSON (`validation/results/<case>.json`,
//! with the scenario text that ran); `--from-results` re-renders and re-simulates from
//! them without a kernel, and `--check` fails when an enforced counter's error exceeds
//! what the case allows: the kernel's run-to-run spread or 2 % (5 % for MGLRU),
//! whichever is larger, or the error accepted (and explained) when it was recorded.

pub mod counters;
pub mod groups;
pub mod kernel;
pub mod replay;
pub mod replayed;
pub mod snapshots;
pub mod suite;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{Context, Result};
use clap::Args;
use mmsim_core::PolicyName;
use mmsim_workloads::{run_scenario, RunOptions, Scenario, ScenarioResult};
use serde::{Deserialize, Serialize};

use crate::{Outcome, UsageError};
use counters::{KernelRun, COUNTERS};
pub use replay::replay_flush_ms;
use suite::{Case, CasePolicy, KernelSite, Suite};

/// Flags of `mmsim validate`.
#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// The suite file.
    #[arg(value_name = "SUITE", default_value = "validation/suite.toml")]
    pub suite: PathBuf,
    /// Only these cases (repeatable; default all).
    #[arg(long = "case", value_name = "NAME")]
    pub cases: Vec<String>,
    /// Do not run the kernel: compare mmsim with the recorded kernel results.
    #[arg(long)]
    pub from_results: bool,
    /// Directory of the recorded results (default: `results` beside the suite).
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Kernel runs per case (default: the case's `runs`).
    #[arg(long, value_name = "N")]
    pub runs: Option<u32>,
    /// The mmsim-probe binary (default: beside this binary).
    #[arg(long, value_name = "PATH")]
    pub probe: Option<PathBuf>,
    /// Where region files and the swap file go on the host.
    #[arg(long, value_name = "DIR", default_value = "/var/tmp/mmsim-validate")]
    pub dir: PathBuf,
    /// `echo 3 > /proc/sys/vm/drop_caches` before each host run (machine-wide; the
    /// probe's own files are always dropped from the cache).
    #[arg(long)]
    pub drop_caches: bool,
    /// Capture per-memcg pgscan/pgsteal/pgactivate/pgrefill on a v1 host with bpftrace.
    #[arg(long, value_name = "BPFTRACE", num_args = 0..=1, default_missing_value = "bpftrace")]
    pub bpftrace: Option<PathBuf>,
    /// Longest one kernel run on the host may take, seconds; a longer one is stopped
    /// and the case fails (guest runs are bounded by the script's own TIMEOUT).
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub timeout: u64,
    /// The guest runner script.
    #[arg(
        long,
        value_name = "PATH",
        default_value = "tools/validate/guest-run.sh"
    )]
    pub guest_script: PathBuf,
    /// Exit with status 1 when an enforced counter's error exceeds its allowance.
    #[arg(long)]
    pub check: bool,
    /// With --from-results: set each result's accepted errors to mmsim's current ones
    /// where they exceed the tolerance (after a simulator change that was explained in
    /// VALIDATION.md), and rewrite the result files.
    #[arg(long, requires = "from_results")]
    pub rebaseline: bool,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress messages.
    #[arg(long, short)]
    pub quiet: bool,
    /// List the counters a case can compare, and what each measures, then exit.
    #[arg(long)]
    pub list_counters: bool,
    /// Record a real-application case (one with `app`, chosen with one --case) from
    /// these kernel runs (`kernel-run.json` of `scripts/capture-app`, repeatable: one per
    /// run) instead of running the probe.
    #[arg(
        long,
        value_name = "FILE",
        requires = "cases",
        conflicts_with = "from_results"
    )]
    pub kernel_run: Vec<PathBuf>,
}

/// The kernel side of a case as recorded.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelSide {
    /// host or guest.
    pub site: KernelSite,
    /// `uname -r` of the kernel that ran.
    pub release: String,
    /// When (UTC, ISO 8601).
    pub date: String,
    /// `lru_gen` enabled (guest).
    #[serde(default)]
    pub lru_gen: bool,
    /// One entry per run.
    pub runs: Vec<KernelRun>,
}

/// `validation/results/<case>.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseResult {
    /// `mmsim-validate`.
    pub format: String,
    /// 1.
    pub version: u32,
    /// The case as it was run.
    pub case: Case,
    /// The scenario text that ran (what mmsim re-simulates).
    pub scenario_toml: String,
    /// The kernel's runs.
    pub kernel: KernelSide,
    /// Enforced counters whose error exceeded the tolerance when recorded, with that
    /// error: explained in VALIDATION.md, and the CI test fails if it grows.
    #[serde(default)]
    pub accepted: BTreeMap<String, f64>,
    /// The event stream the kernel ran: its length and digest. Re-compared on every
    /// `--from-results`, so a generator change cannot silently pair old kernel numbers
    /// with a different access sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamDigest>,
    /// The directory relative trace paths of the scenario are resolved against: the
    /// scenario file's (a real-application case replays a trace in `data/`). Not
    /// recorded; set from the suite when the result is loaded or recorded.
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
}

impl CaseResult {
    /// The recorded scenario, its trace paths relative to [`CaseResult::base_dir`].
    pub fn scenario(&self) -> Result<Scenario> {
        let mut s =
            Scenario::parse_toml_str(&self.scenario_toml, &format!("{}.toml", self.case.name))?;
        // Set where the result was loaded or recorded; else (a result handed in
        // whole) the case file's directory under the suite's.
        s.base_dir = self.base_dir.clone().or_else(|| {
            SUITE_DIR
                .get()
                .zip(self.case.scenario.parent())
                .map(|(dir, case_dir)| dir.join(case_dir))
        });
        Ok(s)
    }
}

/// Length and FNV-1a digest of a scenario's event stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamDigest {
    /// Events.
    pub events: u64,
    /// FNV-1a (64 bit) over every event's kind and fields, little-endian.
    pub fnv1a64: String,
}

/// The digest of the event stream `run_scenario` feeds the simulator for `s` (built on
/// a scratch machine, as the probe builds it).
pub fn stream_digest(s: &Scenario) -> Result<StreamDigest> {
    use mmsim_core::Event;
    let mut sim = mmsim_core::Sim::new(s.machine.clone())?;
    mmsim_workloads::cgroups::setup(&mut sim, s)?;
    let mut stream = mmsim_workloads::EventStream::build(s, &mut sim)?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    let mut events = 0u64;
    while let Some(batch) = stream.next_batch(0)? {
        for e in batch.events() {
            events += 1;
            match *e {
                Event::Access { vma, index, write } => {
                    eat(&[0, u8::from(write)]);
                    eat(&vma.to_le_bytes());
                    eat(&index.to_le_bytes());
                }
                Event::FileRead { file, index, pages } => {
                    eat(&[1]);
                    eat(&file.to_le_bytes());
                    eat(&index.to_le_bytes());
                    eat(&pages.to_le_bytes());
                }
                Event::FdRead { fd, index, pages } => {
                    eat(&[10]);
                    eat(&fd.to_le_bytes());
                    eat(&index.to_le_bytes());
                    eat(&pages.to_le_bytes());
                }
                Event::FileWrite { file, index, pages } => {
                    eat(&[2]);
                    eat(&file.to_le_bytes());
                    eat(&index.to_le_bytes());
                    eat(&pages.to_le_bytes());
                }
                Event::Think { ns } => {
                    eat(&[3]);
                    eat(&ns.to_le_bytes());
                }
                Event::Discard { vma, index, pages } => {
                    eat(&[4]);
                    eat(&vma.to_le_bytes());
                    eat(&index.to_le_bytes());
                    eat(&pages.to_le_bytes());
                }
                Event::Collapse { vma, index, pages } => {
                    eat(&[5]);
                    eat(&vma.to_le_bytes());
                    eat(&index.to_le_bytes());
                    eat(&pages.to_le_bytes());
                }
                Event::ThpAdvice { vma, advice } => {
                    eat(&[6, advice as u8]);
                    eat(&vma.to_le_bytes());
                }
                Event::Remap { vma } => {
                    eat(&[7]);
                    eat(&vma.to_le_bytes());
                }
                Event::Fork { vma, pages } => {
                    eat(&[8]);
                    eat(&vma.to_le_bytes());
                    eat(&pages.to_le_bytes());
                }
                Event::FileSync {
                    file,
                    index,
                    pages,
                    wait,
                } => {
                    eat(&[9, u8::from(wait)]);
                    eat(&file.to_le_bytes());
                    eat(&index.to_le_bytes());
                    eat(&pages.to_le_bytes());
                }
            }
        }
    }
    Ok(StreamDigest {
        events,
        fnv1a64: format!("{h:016x}"),
    })
}

const FORMAT: &str = "mmsim-validate";

/// One row of a comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Counter name.
    pub counter: String,
    /// Whether its error is enforced.
    pub enforced: bool,
    /// Mean of the kernel runs.
    pub kernel_mean: f64,
    /// Smallest and largest run.
    pub kernel_min: f64,
    /// Largest run.
    pub kernel_max: f64,
    /// Largest relative deviation of a run from the mean.
    pub kernel_spread: f64,
    /// mmsim's value (None: not simulated, e.g. a pending policy).
    pub mmsim: Option<f64>,
    /// (mmsim − mean) / mean.
    pub error: Option<f64>,
    /// The error allowed (enforced counters).
    pub allowed: Option<f64>,
    /// ok, over, pending, or info.
    pub status: String,
}

/// The comparison of one case.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Case name.
    pub case: String,
    /// host or guest.
    pub site: KernelSite,
    /// Policy.
    pub policy: CasePolicy,
    /// Kernel release.
    pub release: String,
    /// Date of the kernel runs.
    pub date: String,
    /// Number of kernel runs.
    pub runs: usize,
    /// Why mmsim did not run (a policy it does not have).
    pub pending: Option<String>,
    /// `mmsim run --set` flags (KEY=VALUE) of what mmsim ran besides the
    /// recorded scenario (`replayed::set_flags`).
    pub replayed_with: Vec<String>,
    /// The rows.
    pub rows: Vec<Row>,
}

impl Comparison {
    /// Enforced rows over their allowance.
    pub fn failures(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| r.status == "over").collect()
    }
}

/// Kernel `release`'s version, patch level and sublevel as numbers
/// (`6.12.107+deb13-cloud-amd64` → (6, 12, 107)); a part that is missing or not a
/// number is 0.
fn release_version(release: &str) -> (u32, u32, u32) {
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    (next(), next(), next())
}

/// The modelled multi-gen LRU closest to kernel `release` (`6.1.0-50-cloud-amd64`):
/// `v6.1` before 6.12, `v6.12` for 6.12 and 6.13 (the "mm/mglru: rework
/// workingset protection" series, which the `v6.14` model follows, is 6.14's), else
/// `v6.14`. 6.1 counts an anon refault in `workingset_refault_anon` only when its
/// eviction generation is still `min_seq` (half of them in `guest-anon-zipf-mglru`);
/// 6.12 counts every one, as v6.14 does.
pub fn mglru_version_of(release: &str) -> mmsim_core::config::MglruVersion {
    let (major, minor, _) = release_version(release);
    if (major, minor) < (6, 12) {
        mmsim_core::config::MglruVersion::V6_1
    } else if (major, minor) < (6, 14) {
        mmsim_core::config::MglruVersion::V6_12
    } else {
        mmsim_core::config::MglruVersion::V6_14
    }
}

/// What counts `WORKINGSET_ACTIVATE_*` on a multi-gen LRU refault in kernel
/// `release`: every recent refault in 6.12 and 6.13 (before "mm/mglru: rework
/// workingset protection", 6.14), only faults from 6.14 (and the v6.1 model,
/// used before 6.12, ignores it).
pub fn mglru_refault_activate_of(release: &str) -> mmsim_core::MglruRefaultActivate {
    let (major, minor, _) = release_version(release);
    if (major, minor) < (6, 14) {
        mmsim_core::MglruRefaultActivate::Recent
    } else {
        mmsim_core::MglruRefaultActivate::Fault
    }
}

/// The memcg statistics flush of reclaim in kernel `release`: `ratelimited`
/// from 6.12 ("memcg: use ratelimited stats flush in the reclaim": reclaim
/// reads statistics up to 2 s old), `sync` before.
pub fn memcg_stats_flush_of(release: &str) -> mmsim_core::MemcgStatsFlush {
    let (major, minor, _) = release_version(release);
    if (major, minor) < (6, 12) {
        mmsim_core::MemcgStatsFlush::Sync
    } else {
        mmsim_core::MemcgStatsFlush::Ratelimited
    }
}

/// Whether kernel `release` has "mm/mglru: fix underprotected page cache" in its 6.1
/// form (the v6.1 model's `mglru_fix_underprotected`): 6.1 stable from 6.1.69, which
/// Debian's bookworm kernels carry from ABI 6.1.0-17 (6.1.69-1) on; Debian names its
/// 6.1 releases `6.1.0-<abi>-<flavour>`, whose stable version `uname -r` does not show.
pub fn mglru_fix_underprotected_of(release: &str) -> bool {
    let nums: Vec<u32> = release
        .split(|c: char| !c.is_ascii_digit())
        .take(4)
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    match nums.as_slice() {
        [6, 1, 0, abi, ..] if release.starts_with("6.1.0-") => *abi >= 17,
        [6, 1, patch, ..] => *patch >= 69,
        _ => false,
    }
}

/// Whether kernel `release` has "mm/mglru: reset page lru tier bits when
/// activating" (the v6.12 model's `mglru_reset_tier_bits`): mainline from 6.13,
/// 6.12 stable from 6.12.114 (Debian's changelog lists it under 6.12.114; its
/// 6.12.107 source lacks it, its 6.12.117 source has it).
pub fn mglru_reset_tier_bits_of(release: &str) -> bool {
    match release_version(release) {
        (6, 12, sub) => sub >= 114,
        (major, minor, _) => (major, minor) == (6, 13),
    }
}

/// Whether 6.12 kernel `release` has "mm/mglru: use the common routine for
/// dirty/writeback reactivation" (the v6.12 model's `mglru_common_reactivation`):
/// 6.12 stable from 6.12.114, with the tier-bits reset; not 6.13, whose
/// `sort_folio()` keeps the clause.
pub fn mglru_common_reactivation_of(release: &str) -> bool {
    matches!(release_version(release), (6, 12, sub) if sub >= 114)
}

/// The suite's directory, once `mmsim validate` has read the suite: a recorded
/// scenario's relative paths (a trace's) resolve against its case file's directory.
static SUITE_DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// The recorded scenario with the case's policy and the settings its kernel release
/// implies, validated; `Err(reason)` when mmsim does not have the policy.
pub fn sim_scenario(r: &CaseResult) -> Result<std::result::Result<Scenario, String>> {
    let mut s = r.scenario()?;
    match PolicyName::from_str(r.case.policy.mmsim_name()) {
        Ok(p) => {
            s.machine.policy.name = p;
            if p == PolicyName::Mglru {
                s.machine.policy.mglru_version = mglru_version_of(&r.kernel.release);
                s.machine.policy.mglru_refault_activate =
                    mglru_refault_activate_of(&r.kernel.release);
                s.machine.policy.mglru_fix_underprotected =
                    mglru_fix_underprotected_of(&r.kernel.release);
                // The kernel completes writes by interrupt while reclaim
                // runs; 6.1 has the retry of folios that completed while
                // isolated (v6.12 and v6.14 have it always).
                s.machine.policy.mglru_writeback_in_reclaim = true;
                s.machine.policy.mglru_retry_written_back =
                    s.machine.policy.mglru_version == mmsim_core::config::MglruVersion::V6_1;
                // 6.1's look-around activates fewer than PAGEVEC_SIZE
                // promoted neighbours one by one (the v6.14 model ignores it).
                s.machine.policy.mglru_look_around_activate =
                    s.machine.policy.mglru_version == mmsim_core::config::MglruVersion::V6_1;
                // 6.1 and 6.12 hold a block plug around the eviction loop.
                s.machine.policy.mglru_writeback_plugged = true;
                // 6.12.114's backports (the v6.12 model; others ignore them).
                s.machine.policy.mglru_reset_tier_bits =
                    mglru_reset_tier_bits_of(&r.kernel.release);
                s.machine.policy.mglru_common_reactivation =
                    mglru_common_reactivation_of(&r.kernel.release);
            } else {
                // A case of a kernel before 6.12 may choose the finer model of
                // its flush (`reclaim`: read stale between reclaim passes).
                let by_release = memcg_stats_flush_of(&r.kernel.release);
                if !(by_release == mmsim_core::MemcgStatsFlush::Sync
                    && s.machine.policy.memcg_stats_flush == mmsim_core::MemcgStatsFlush::Reclaim)
                {
                    s.machine.policy.memcg_stats_flush = by_release;
                }
            }
            // MGLRU too: with lru_gen's core bit clear it runs the classic path.
            s.machine.policy.pgdat_dirty_guard = replay::pgdat_dirty_guard_of(&r.kernel.release);
        }
        Err(e) => {
            return Ok(Err(format!(
                "mmsim has no policy `{}` yet ({e})",
                r.case.policy.mmsim_name()
            )))
        }
    }
    // The update threshold counts the kernel machine's CPUs, not the replay's.
    if s.machine.policy.memcg_stats_flush == mmsim_core::MemcgStatsFlush::Ratelimited {
        s.machine.policy.memcg_stats_cpus = replay::kernel_cpus(r);
    }
    s.validate()?;
    Ok(Ok(s))
}

/// Simulates the recorded scenario under the case's policy: the scenario last run and
/// its result. `Err(reason)` when mmsim cannot (a policy it does not have yet): the
/// case is pending.
pub fn simulate(r: &CaseResult) -> Result<std::result::Result<(Scenario, ScenarioResult), String>> {
    let mut s = match sim_scenario(r)? {
        Ok(s) => s,
        Err(why) => return Ok(Err(why)),
    };
    let first = run_scenario(&s, &mut RunOptions::default())?;
    if s.machine.policy.memcg_stats_flush != mmsim_core::MemcgStatsFlush::Ratelimited {
        return Ok(Ok((s, first)));
    }
    // FLUSH_TIME (2 s) and a `memory.stat` reader's period are of the kernel
    // machine's wall clock: scaled to the workload's progress (a machine k
    // times slower than the simulated runtime flushed k times as often).
    let walls: Vec<f64> = r
        .kernel
        .runs
        .iter()
        .filter_map(|k| k.probe.get("wall_s").copied())
        .collect();
    if walls.is_empty() || first.result.runtime_s <= 0.0 {
        return Ok(Ok((s, first)));
    }
    let kernel_wall = walls.iter().sum::<f64>() / walls.len() as f64;
    let scaled = |ms| replay_flush_ms(ms, first.result.runtime_s, kernel_wall);
    let read = replay::stats_read_period(r);
    s.machine.policy.memcg_stats_flush_ms = scaled(0.0);
    s.machine.policy.memcg_stats_read_ms = if read > 0.0 { scaled(read) } else { 0 };
    let last = run_scenario(&s, &mut RunOptions::default())?;
    Ok(Ok((s, last)))
}

/// Compares a recorded case with mmsim.
pub fn compare(r: &CaseResult) -> Result<Comparison> {
    let s = r.scenario()?;
    if let Some(want) = &r.stream {
        let now = stream_digest(&s)?;
        if &now != want {
            return Err(UsageError(format!(
                "case {}: the scenario's event stream is no longer the one the kernel ran \
                 ({} events, digest {} now; {} events, digest {} recorded): a generator \
                 changed; record the case again",
                r.case.name, now.events, now.fnv1a64, want.events, want.fnv1a64
            ))
            .into());
        }
    }
    // A case with several groups names each group's counters with the group; one
    // with one group has its group from the scenario.
    let group = if r.case.groups.is_empty() {
        kernel::group_setup(&s)?.path
    } else {
        groups::check_record(&r.case, &r.kernel.runs, &s).map_err(UsageError)?;
        String::new()
    };
    let (sim, replayed_with) = match simulate(r)? {
        Ok((sim, res)) => (Ok(res), replayed::set_flags(&s.machine, &sim.machine)),
        Err(why) => (Err(why), Vec::new()),
    };
    let names: Vec<&str> = if r.case.counters.is_empty() {
        COUNTERS.iter().map(|c| c.name).collect()
    } else {
        r.case.counters.iter().map(String::as_str).collect()
    };
    // A touch's snapshots (`anon_huge_pages@sN`): their own pass over the stream.
    let snaps = match sim_scenario(r)? {
        Ok(s) if names.iter().any(|n| n.contains("@s")) => snapshots::huge_pages_at_snapshots(&s)?,
        _ => Vec::new(),
    };
    let mut rows = Vec::new();
    for name in names {
        let c = groups::parse(&r.case, name)
            .map_err(|m| UsageError(format!("case {}: {m}", r.case.name)))?;
        let vals: Vec<f64> = r
            .kernel
            .runs
            .iter()
            .filter_map(|k| groups::kernel_value(&c, k))
            .collect();
        if vals.len() != r.kernel.runs.len() || vals.is_empty() {
            continue;
        }
        let enforced = r.case.enforce.iter().any(|e| e == name);
        let (mean, min, max, spread) = counters::stats(&vals);
        let mmsim = match c.part {
            groups::Part::Snapshot(n) => sim.as_ref().ok().and_then(|_| snaps.get(n - 1).copied()),
            _ => sim
                .as_ref()
                .ok()
                .and_then(|res| groups::sim_value(&c, res, &group, r.case.split_at.as_deref())),
        };
        let error = mmsim.map(|m| {
            if mean.abs() > 0.0 {
                (m - mean) / mean
            } else if m == 0.0 {
                0.0
            } else {
                f64::INFINITY
            }
        });
        let allowed = enforced.then(|| {
            let tol = spread
                .max(r.case.policy.min_tolerance())
                .max(r.case.allow.get(name).copied().unwrap_or(0.0));
            tol.max(r.accepted.get(name).copied().unwrap_or(0.0))
        });
        let status = match (&sim, error, allowed) {
            (Err(_), _, _) => "pending",
            (_, Some(e), Some(a)) if e.abs() > a + 1e-9 => "over",
            (_, Some(_), Some(_)) => "ok",
            _ => "info",
        };
        rows.push(Row {
            counter: name.to_string(),
            enforced,
            kernel_mean: mean,
            kernel_min: min,
            kernel_max: max,
            kernel_spread: spread,
            mmsim,
            error,
            allowed,
            status: status.to_string(),
        });
    }
    Ok(Comparison {
        case: r.case.name.clone(),
        site: r.kernel.site,
        policy: r.case.policy,
        release: r.kernel.release.clone(),
        date: r.kernel.date.clone(),
        runs: r.kernel.runs.len(),
        pending: sim.err(),
        replayed_with,
        rows,
    })
}

fn num(v: f64) -> String {
    if v.fract() != 0.0 && v.abs() < 1000.0 {
        return format!("{v:.2}");
    }
    let s = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// The text table of one comparison.
pub fn render(c: &Comparison) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "case {} — {} kernel {}, {:?} LRU, {} runs, {}",
        c.case,
        match c.site {
            KernelSite::Host => "host",
            KernelSite::Guest => "guest",
        },
        c.release,
        c.policy,
        c.runs,
        c.date
    );
    if let Some(p) = &c.pending {
        let _ = writeln!(o, "  mmsim: pending: {p}");
    }
    o.push_str(&replayed::render(&c.replayed_with));
    // Group-qualified names (`/long:workingset_refault_anon@before`) get a wider column.
    let w = if c.rows.iter().any(|r| r.counter.contains(':')) {
        c.rows
            .iter()
            .map(|r| r.counter.len() + 2)
            .max()
            .unwrap_or(26)
    } else {
        26
    };
    let _ = writeln!(
        o,
        "  {:<w$} {:>14} {:>8} {:>14} {:>9} {:>8}  status",
        "counter", "kernel mean", "spread", "mmsim", "error", "allowed"
    );
    for r in &c.rows {
        let _ = writeln!(
            o,
            "  {:<w$} {:>14} {:>7.2}% {:>14} {:>9} {:>8}  {}",
            format!("{}{}", r.counter, if r.enforced { " *" } else { "" }),
            num(r.kernel_mean),
            r.kernel_spread * 100.0,
            r.mmsim.map_or("—".into(), num),
            r.error
                .map_or("—".into(), |e| format!("{:+.2}%", e * 100.0)),
            r.allowed
                .map_or(String::new(), |a| format!("{:.2}%", a * 100.0)),
            r.status
        );
    }
    o
}

fn result_path(dir: &Path, case: &str) -> PathBuf {
    dir.join(format!("{case}.json"))
}

/// Reads a recorded result; errors name the file.
pub fn load_result(p: &Path) -> Result<CaseResult> {
    let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
    let r: CaseResult =
        serde_json::from_str(&text).map_err(|e| UsageError(format!("{}: {e}", p.display())))?;
    if r.format != FORMAT || r.version != 1 {
        return Err(UsageError(format!(
            "{}: format `{}` version {}: expected {FORMAT} version 1",
            p.display(),
            r.format,
            r.version
        ))
        .into());
    }
    if r.kernel.runs.is_empty() {
        return Err(UsageError(format!("{}: kernel.runs is empty", p.display())).into());
    }
    Ok(r)
}

fn utc_now() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn default_probe() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("mmsim-probe")))
        .unwrap_or_else(|| PathBuf::from("mmsim-probe"))
}

/// Dumps the probe's event stream for the scenario and checks it against the one mmsim
/// simulates (`mmsim-probe --dump`, `--check-dump`): the kernel and mmsim see the same
/// accesses, or nothing runs.
fn check_probe_stream(probe: &Path, scenario: &Path, dir: &Path) -> Result<()> {
    if !probe.exists() {
        return Err(UsageError(format!(
            "{}: no such probe binary (cargo build --release -p mmsim-probe, or --probe)",
            probe.display()
        ))
        .into());
    }
    let dump = dir.join("mmsim-validate-dump");
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    struct Rm(PathBuf);
    impl Drop for Rm {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _rm = Rm(dump.clone());
    for args in [
        vec![
            scenario.as_os_str(),
            "--dump".as_ref(),
            dump.as_os_str(),
            "-q".as_ref(),
        ],
        vec!["--check-dump".as_ref(), dump.as_os_str(), "-q".as_ref()],
    ] {
        let out = std::process::Command::new(probe)
            .args(&args)
            .output()
            .with_context(|| format!("running {}", probe.display()))?;
        if !out.status.success() {
            anyhow::bail!(
                "{} {:?} failed ({}): {}",
                probe.display(),
                args,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
    }
    Ok(())
}

/// Runs the kernel side of a case and builds its result (accepted errors filled from
/// the comparison at record time).
fn record(case: &Case, a: &ValidateArgs) -> Result<CaseResult> {
    if !case.groups.is_empty() {
        return Err(UsageError(format!(
            "case {}: it has several groups ({}), which the live runner cannot run (it runs \
             one group and one probe process): record its kernel runs with the case's own \
             scripts (validation/guest-soft/ for guest-soft-v1: run.sh, then summarize.py \
             --validate) and compare with --from-results",
            case.name,
            case.groups.join(", ")
        ))
        .into());
    }
    let text = std::fs::read_to_string(&case.scenario)
        .with_context(|| format!("reading {}", case.scenario.display()))?;
    let s = Scenario::from_file(&case.scenario)?;
    let setup = kernel::group_setup(&s)?;
    if case.app.is_some() || !a.kernel_run.is_empty() {
        return import(case, a, text, &s);
    }
    let runs = a.runs.unwrap_or(case.runs);
    let probe = a.probe.clone().unwrap_or_else(default_probe);
    check_probe_stream(&probe, &case.scenario, &a.dir)?;
    let (runs, release, lru_gen) = match case.kernel {
        KernelSite::Host => {
            let o = kernel::HostOptions {
                probe,
                dir: a.dir.clone(),
                drop_caches: a.drop_caches,
                bpftrace: a.bpftrace.clone(),
                timeout: std::time::Duration::from_secs(a.timeout),
                verbose: !a.quiet,
                anon_read_alloc: case.anon_read_alloc,
                pause: std::time::Duration::from_secs(u64::from(case.pause_s)),
            };
            let runs = kernel::run_host(&case.scenario, &setup, runs, &o)?;
            let rel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_string();
            (runs, rel, false)
        }
        KernelSite::Guest => {
            let lru = case.policy == CasePolicy::Mglru;
            let (runs, rel) = kernel::run_guest(
                &a.guest_script,
                &case.scenario,
                case.guest_kernel.as_deref(),
                lru,
                runs,
                &probe,
                !a.quiet,
            )?;
            (runs, rel, lru)
        }
    };
    let mut r = CaseResult {
        format: FORMAT.into(),
        version: 1,
        case: case.clone(),
        scenario_toml: text,
        kernel: KernelSide {
            site: case.kernel,
            release,
            date: utc_now(),
            lru_gen,
            runs,
        },
        accepted: BTreeMap::new(),
        stream: Some(stream_digest(&s)?),
        base_dir: case.scenario.parent().map(Path::to_path_buf),
    };
    finish_record(&mut r, a)?;
    Ok(r)
}

/// The case's scenario path as written in the suite (relative to the suite's directory),
/// and the accepted errors.
fn finish_record(r: &mut CaseResult, a: &ValidateArgs) -> Result<()> {
    if let Some(base) = a.suite.parent() {
        if let Ok(rel) = r.case.scenario.strip_prefix(base) {
            r.case.scenario = rel.to_path_buf();
        }
    }
    set_accepted(r)
}

/// Records a real-application case from the kernel runs `scripts/capture-app` wrote
/// (`--kernel-run`): the kernel ran the program itself, and the case's scenario replays
/// the trace captured in that run.
fn import(case: &Case, a: &ValidateArgs, text: String, s: &Scenario) -> Result<CaseResult> {
    if case.app.is_none() {
        return Err(UsageError(format!(
            "--kernel-run: case {} runs the probe (it has no `app`); record it without \
             --kernel-run",
            case.name
        ))
        .into());
    }
    if a.kernel_run.is_empty() {
        return Err(UsageError(format!(
            "case {} is a real-application case: capture it with {} and record it with \
             --kernel-run OUT/kernel-run.json (or compare with --from-results)",
            case.name,
            case.app.as_deref().unwrap_or_default()
        ))
        .into());
    }
    let mut runs = Vec::new();
    for p in &a.kernel_run {
        let t = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        let run: KernelRun =
            serde_json::from_str(&t).map_err(|e| UsageError(format!("{}: {e}", p.display())))?;
        if run.memcg.is_empty() {
            return Err(UsageError(format!(
                "{}: `memcg` is empty: not a capture-app kernel run",
                p.display()
            ))
            .into());
        }
        runs.push(run);
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string();
    let mut r = CaseResult {
        format: FORMAT.into(),
        version: 1,
        case: case.clone(),
        scenario_toml: text,
        kernel: KernelSide {
            site: KernelSite::Host,
            release,
            date: utc_now(),
            lru_gen: false,
            runs,
        },
        accepted: BTreeMap::new(),
        stream: Some(stream_digest(s)?),
        base_dir: case.scenario.parent().map(Path::to_path_buf),
    };
    finish_record(&mut r, a)?;
    Ok(r)
}

/// Sets the accepted errors: mmsim's current error on each enforced counter that is
/// beyond the tolerance (the kernel's spread or the policy's minimum).
fn set_accepted(r: &mut CaseResult) -> Result<()> {
    r.accepted.clear();
    let c = compare(r)?;
    for row in c.rows.iter().filter(|x| x.enforced) {
        if let (Some(e), Some(allowed)) = (row.error, row.allowed) {
            if e.abs() > allowed {
                // Rounded up in the 4th decimal so the JSON round trip keeps it.
                let a = (e.abs() * 1e4).ceil() / 1e4;
                r.accepted.insert(row.counter.clone(), a);
            }
        }
    }
    Ok(())
}

/// `mmsim validate`.
pub fn validate(a: ValidateArgs) -> Result<Outcome> {
    if a.list_counters {
        let mut out = crate::output::stdout();
        for c in COUNTERS {
            writeln!(out, "{:<26} {}", c.name, c.what)?;
        }
        return Ok(Outcome::Complete);
    }
    let suite = Suite::load(&a.suite)?;
    let _ = SUITE_DIR.set(a.suite.parent().unwrap_or(Path::new(".")).to_path_buf());
    let results = a
        .results
        .clone()
        .unwrap_or_else(|| a.suite.parent().unwrap_or(Path::new(".")).join("results"));
    if let Some(n) = a.runs {
        if n == 0 || n > 20 {
            return Err(UsageError(format!("--runs {n}: out of range 1..=20")).into());
        }
    }
    for name in &a.cases {
        if !suite.cases.iter().any(|c| &c.name == name) {
            let names: Vec<&str> = suite.cases.iter().map(|c| c.name.as_str()).collect();
            return Err(UsageError(format!(
                "--case {name}: no such case in {} ({})",
                suite.path.display(),
                names.join(", ")
            ))
            .into());
        }
    }
    let chosen: Vec<&Case> = suite
        .cases
        .iter()
        .filter(|c| a.cases.is_empty() || a.cases.contains(&c.name))
        .collect();
    if !a.from_results {
        let _ = ctrlc::set_handler(|| {
            crate::progress::CANCEL.store(true, std::sync::atomic::Ordering::SeqCst);
        });
    }
    let mut comparisons = Vec::new();
    let mut failed = Vec::new();
    for case in chosen {
        let path = result_path(&results, &case.name);
        let r = if a.from_results {
            if !path.exists() {
                if !a.quiet {
                    eprintln!(
                        "validate: {}: no recorded result ({}); skipped",
                        case.name,
                        path.display()
                    );
                }
                continue;
            }
            let mut r = load_result(&path)?;
            r.base_dir = case.scenario.parent().map(Path::to_path_buf);
            // What is shown and enforced is the suite's; what ran is the record's.
            if r.case.policy != case.policy || r.case.kernel != case.kernel {
                return Err(UsageError(format!(
                    "{}: recorded with kernel {:?} and policy {:?}, but the suite now says \
                     {:?} and {:?}: record the case again",
                    path.display(),
                    r.case.kernel,
                    r.case.policy,
                    case.kernel,
                    case.policy
                ))
                .into());
            }
            r.case.counters = case.counters.clone();
            r.case.enforce = case.enforce.clone();
            r.case.note = case.note.clone();
            r.case.allow = case.allow.clone();
            r.case.app = case.app.clone();
            r.case.groups = case.groups.clone();
            r.case.split_at = case.split_at.clone();
            r.case.pause_s = case.pause_s;
            r.case.stats_read_ms = case.stats_read_ms;
            r.case.kernel_cpus = case.kernel_cpus;
            if a.rebaseline {
                if r.stream.is_none() {
                    let s = r.scenario()?;
                    r.stream = Some(stream_digest(&s)?);
                }
                set_accepted(&mut r)?;
                std::fs::write(&path, serde_json::to_string_pretty(&r)? + "\n")
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            r
        } else {
            let r = record(case, &a)?;
            std::fs::create_dir_all(&results)
                .with_context(|| format!("creating {}", results.display()))?;
            std::fs::write(&path, serde_json::to_string_pretty(&r)? + "\n")
                .with_context(|| format!("writing {}", path.display()))?;
            if !a.quiet {
                eprintln!("validate: {} recorded in {}", case.name, path.display());
            }
            r
        };
        let c = compare(&r)?;
        if !a.json {
            writeln!(crate::output::stdout(), "{}", render(&c))?;
        }
        if let Some(p) = &c.pending {
            if !a.quiet {
                eprintln!("validate: {}: mmsim side skipped: {p}", c.case);
            }
        }
        for f in c.failures() {
            failed.push(format!(
                "{}: {} error {:+.2}% > allowed {:.2}%",
                c.case,
                f.counter,
                f.error.unwrap_or(0.0) * 100.0,
                f.allowed.unwrap_or(0.0) * 100.0
            ));
        }
        comparisons.push(c);
    }
    if a.json {
        // An object, so that it can carry the schema version: the cases under `cases`.
        #[derive(serde::Serialize)]
        struct Cases<'a> {
            cases: &'a [Comparison],
        }
        let json = serde_json::to_string_pretty(&crate::output::Versioned::new(&Cases {
            cases: &comparisons,
        }))?;
        writeln!(crate::output::stdout(), "{json}")?;
    }
    if comparisons.is_empty() {
        return Err(UsageError(format!(
            "no case compared (no results in {})",
            results.display()
        ))
        .into());
    }
    if a.check && !failed.is_empty() {
        anyhow::bail!("validation failed:\n  {}", failed.join("\n  "));
    }
    Ok(Outcome::Complete)
}

#[cfg(test)]
mod tests {
    use super::{
        memcg_stats_flush_of, mglru_common_reactivation_of, mglru_fix_underprotected_of,
        mglru_refault_activate_of, mglru_reset_tier_bits_of, mglru_version_of,
    };
    use mmsim_core::config::MglruVersion;

    #[test]
    fn kernel_releases_map_to_the_closest_mglru_model() {
        assert_eq!(mglru_version_of("6.1.0-50-cloud-amd64"), MglruVersion::V6_1);
        assert_eq!(mglru_version_of("6.11.3"), MglruVersion::V6_1);
        assert_eq!(
            mglru_version_of("6.12.107+deb13-cloud-amd64"),
            MglruVersion::V6_12
        );
        assert_eq!(mglru_version_of("6.13.2"), MglruVersion::V6_12);
        assert_eq!(mglru_version_of("6.14.0"), MglruVersion::V6_14);
        assert_eq!(mglru_version_of("6.18.44-fc-v657"), MglruVersion::V6_14);
        assert_eq!(mglru_version_of("7.0"), MglruVersion::V6_14);
        assert_eq!(mglru_version_of("garbage"), MglruVersion::V6_1);
    }

    #[test]
    fn kernel_releases_map_to_their_memcg_stats_flush() {
        use mmsim_core::MemcgStatsFlush::{Ratelimited, Sync};
        assert_eq!(memcg_stats_flush_of("6.1.0-50-cloud-amd64"), Sync);
        assert_eq!(memcg_stats_flush_of("6.11.9"), Sync);
        assert_eq!(
            memcg_stats_flush_of("6.12.107+deb13-cloud-amd64"),
            Ratelimited
        );
        assert_eq!(memcg_stats_flush_of("6.18.44-fc-v657"), Ratelimited);
        assert_eq!(memcg_stats_flush_of("garbage"), Sync);
    }

    #[test]
    fn kernel_releases_map_to_their_mglru_refault_activation() {
        use mmsim_core::MglruRefaultActivate::{Fault, Recent};
        assert_eq!(
            mglru_refault_activate_of("6.12.107+deb13-cloud-amd64"),
            Recent
        );
        assert_eq!(mglru_refault_activate_of("6.13.2"), Recent);
        assert_eq!(mglru_refault_activate_of("6.14.0"), Fault);
        assert_eq!(mglru_refault_activate_of("6.18.44-fc-v657"), Fault);
    }

    #[test]
    fn kernel_releases_map_to_the_6_1_stable_mglru_protection() {
        assert!(mglru_fix_underprotected_of("6.1.0-50-cloud-amd64"));
        assert!(mglru_fix_underprotected_of("6.1.0-17-amd64"));
        assert!(!mglru_fix_underprotected_of("6.1.0-16-amd64"));
        assert!(mglru_fix_underprotected_of("6.1.69"));
        assert!(!mglru_fix_underprotected_of("6.1.68"));
        assert!(!mglru_fix_underprotected_of("6.1.0"));
        assert!(!mglru_fix_underprotected_of("6.12.107+deb13-cloud-amd64"));
        assert!(!mglru_fix_underprotected_of("garbage"));
        // 6.12.114's backports: the guest's 6.12.107 has neither; 6.13 the reset only.
        for (release, reset, common) in [
            ("6.12.107+deb13-cloud-amd64", false, false),
            ("6.12.113", false, false),
            ("6.12.114", true, true),
            ("6.12.117+deb13-amd64", true, true),
            ("6.12", false, false),
            ("6.13.2", true, false),
            ("6.1.0-50-cloud-amd64", false, false),
            ("6.14.0", false, false),
            ("garbage", false, false),
        ] {
            assert_eq!(mglru_reset_tier_bits_of(release), reset, "{release}");
            assert_eq!(mglru_common_reactivation_of(release), common, "{release}");
        }
    }

    /// `sim_scenario` writes the two 6.12.114 backports into the MGLRU policy of the
    /// case it replays, each from its own release test (a recorded guest612 case
    /// relabelled to later releases).
    #[test]
    fn sim_scenario_sets_the_backports_the_release_has() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../validation/results/guest612-anon-zipf-mglru.json"
        );
        let mut r: super::CaseResult =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        // And PGDAT_DIRTY's guard (6.13+), read if lru_gen's core bit is clear.
        for (release, reset, common, guard) in [
            ("6.12.107+deb13-cloud-amd64", false, false, false),
            ("6.12.117+deb13-amd64", true, true, false),
            ("6.13.2", true, false, true),
        ] {
            r.kernel.release = release.to_string();
            let s = super::sim_scenario(&r).unwrap().unwrap();
            let p = &s.machine.policy;
            assert_eq!(p.mglru_version, MglruVersion::V6_12, "{release}");
            assert_eq!(
                (
                    p.mglru_reset_tier_bits,
                    p.mglru_common_reactivation,
                    p.pgdat_dirty_guard
                ),
                (reset, common, guard),
                "{release}"
            );
        }
    }
}
