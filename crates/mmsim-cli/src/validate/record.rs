//! Recording a case: running its kernel side (the probe on the host or in the guest,
//! after checking the probe's event stream is mmsim's), or importing a
//! real-application case's kernel runs, and filling in the accepted errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use mmsim_workloads::Scenario;

use super::counters::KernelRun;
use super::kernel;
use super::suite::{Case, CasePolicy, KernelSite};
use super::{compare, stream_digest, CaseResult, KernelSide, ValidateArgs, FORMAT};
use crate::UsageError;

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
pub(super) fn record(case: &Case, a: &ValidateArgs) -> Result<CaseResult> {
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
pub(super) fn set_accepted(r: &mut CaseResult) -> Result<()> {
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
