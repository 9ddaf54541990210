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
//!
//! By job: `record` runs (or imports) a case's kernel side, [`release`] maps its kernel
//! release to mmsim's settings, [`compare`](mod@compare) builds the counters' table with their
//! allowances and [`render`](mod@render) prints it; this file holds the recorded result's format,
//! the replay ([`simulate`]) and the command itself.

pub mod compare;
pub mod counters;
pub mod groups;
pub mod kernel;
mod record;
pub mod release;
pub mod render;
pub mod replay;
pub mod replayed;
pub mod snapshots;
pub mod suite;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{Context, Result};
use clap::Args;
use mmsim_core::PolicyName;
use mmsim_workloads::{run_scenario, RunOptions, Scenario, ScenarioResult};
use serde::{Deserialize, Serialize};

use crate::{Outcome, UsageError};
pub use compare::{compare, Comparison};
use counters::{KernelRun, COUNTERS};
use record::{record, set_accepted};
use release::release_version;
pub use release::{
    memcg_stats_flush_of, mglru_common_reactivation_of, mglru_fix_underprotected_of,
    mglru_refault_activate_of, mglru_reset_tier_bits_of, mglru_version_of,
};
pub use render::render;
pub use replay::replay_flush_ms;
use suite::{Case, KernelSite, Suite};

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
                Event::FdClose { fd } => {
                    eat(&[11]);
                    eat(&fd.to_le_bytes());
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
    use mmsim_core::config::MglruVersion;

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
