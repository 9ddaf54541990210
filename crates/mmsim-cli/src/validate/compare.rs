//! The comparison of a recorded case with mmsim: one [`Row`] per counter, with the
//! kernel runs' mean and spread, mmsim's value and error, and the error allowed (the
//! kernel's spread, the policy's minimum, the suite's `allow` or the accepted error,
//! whichever is largest).

use anyhow::Result;
use serde::Serialize;

use super::counters::{self, COUNTERS};
use super::suite::{CasePolicy, KernelSite};
use super::{groups, kernel, replayed, snapshots};
use super::{sim_scenario, simulate, stream_digest, CaseResult};
use crate::UsageError;

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
