//! Cases with several groups (issue 15 item 2): each group's counters, machine-wide
//! ones, and counters split at a workload's end.
//!
//! A case with `groups = ["/short", "/long"]` names a per-group counter with its group,
//! `/long:workingset_refault_anon`; a machine-wide one (`pswpin`, `pswpout`, `end_ratio`)
//! plainly. With `split_at = "short"` (a workload with `exit = true`), a suffix `@before`
//! or `@after` splits a counter at that workload's end: the kernel's value at the last
//! sample its runner took at or before the end (`KernelRun::at_split`), mmsim's at its
//! last stats sample (`machine.stats_interval_ms`) at or before the workload's
//! `exit_ns`; `@after` is the whole run's value minus `@before`.
//!
//! The live runner runs one group and one probe process, so such a case is recorded by
//! its own scripts (`validation/guest-soft/`) and compared with `--from-results`.

use mmsim_workloads::{Scenario, ScenarioResult};

use super::counters::{counter, Counter, KernelRun};
use super::suite::Case;

/// Counters a group has of its own (its `memory.stat`), which a several-group case
/// names with the group: `/long:pgmajfault`.
pub const GROUP_COUNTERS: &[&str] = &[
    "pgmajfault",
    "workingset_refault_file",
    "workingset_refault_anon",
    "workingset_activate_file",
    "pgscan",
    "pgsteal",
    "pgactivate",
    "pgrefill",
    "pgdeactivate",
];

/// Machine-wide counters that can be split at a workload's end (/proc/vmstat).
pub const SPLIT_MACHINE_COUNTERS: &[&str] = &["pswpin", "pswpout"];

/// Which part of the run a counter covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The whole run.
    Whole,
    /// Up to the split workload's end.
    Before,
    /// After it.
    After,
    /// At the N-th of a touch's `snapshots` (1-based; `anon_huge_pages@sN`, see
    /// [`super::snapshots`]).
    Snapshot(usize),
}

/// A counter as a case names it: `[GROUP:]NAME[@before|@after]`.
pub struct Spec {
    /// The group (several-group cases).
    pub group: Option<String>,
    /// The counter.
    pub base: &'static Counter,
    /// The part of the run.
    pub part: Part,
}

/// Parses and checks a counter name of `case` (the suite's error text on failure).
pub fn parse(case: &Case, name: &str) -> Result<Spec, String> {
    let (rest, part) = match name.rsplit_once('@') {
        Some((r, "before")) => (r, Part::Before),
        Some((r, "after")) => (r, Part::After),
        Some((r, p)) if super::snapshots::snapshot_index(p).is_some() => {
            if r != "anon_huge_pages" {
                return Err(format!(
                    "`{name}`: only anon_huge_pages has snapshots (`anon_huge_pages@sN`)"
                ));
            }
            (
                r,
                Part::Snapshot(super::snapshots::snapshot_index(p).unwrap_or(1)),
            )
        }
        Some((_, p)) => {
            return Err(format!(
                "`{name}`: `@{p}` is not @before, @after or @sN (N ≥ 1, a snapshot)"
            ))
        }
        None => (name, Part::Whole),
    };
    let (group, base) = match rest.rsplit_once(':') {
        Some((g, b)) => (Some(g.to_string()), b),
        None => (None, rest),
    };
    let known = || {
        super::counters::COUNTERS
            .iter()
            .map(|k| k.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let c =
        counter(base).ok_or_else(|| format!("unknown counter `{base}` (known: {})", known()))?;
    let per_group = GROUP_COUNTERS.contains(&base);
    if let Some(g) = &group {
        if !case.groups.contains(g) {
            return Err(format!(
                "`{name}`: group `{g}` is not in the case's `groups` ({})",
                if case.groups.is_empty() {
                    "none: a one-group case names its counters without a group".to_string()
                } else {
                    case.groups.join(", ")
                }
            ));
        }
        if !per_group {
            return Err(format!(
                "`{name}`: `{base}` is not a group's own counter (those are: {})",
                GROUP_COUNTERS.join(", ")
            ));
        }
    } else if per_group && !case.groups.is_empty() {
        return Err(format!(
            "`{name}`: the case has several groups: name the group, e.g. `{}:{base}`",
            case.groups[0]
        ));
    }
    if matches!(part, Part::Before | Part::After) {
        if case.split_at.is_none() {
            return Err(format!(
                "`{name}`: @before/@after need `split_at` (the workload whose end splits the run)"
            ));
        }
        if group.is_none() && !SPLIT_MACHINE_COUNTERS.contains(&base) {
            return Err(format!(
                "`{name}`: only a group's own counters and {} can be split",
                SPLIT_MACHINE_COUNTERS.join(", ")
            ));
        }
    }
    Ok(Spec {
        group,
        base: c,
        part,
    })
}

/// Checks a recorded several-group case against the suite's `groups` and `split_at`
/// before comparing: every run has every group (and the split sample when a counter
/// is split), and the split workload exists and exits.
pub fn check_record(case: &Case, runs: &[KernelRun], s: &Scenario) -> Result<(), String> {
    let name = &case.name;
    let split_used = case
        .counters
        .iter()
        .chain(&case.enforce)
        .any(|n| n.ends_with("@before") || n.ends_with("@after"));
    for (i, r) in runs.iter().enumerate() {
        for g in &case.groups {
            if !r.groups.contains_key(g) {
                return Err(format!(
                    "case {name}: kernel.runs[{i}].groups has no `{g}` (it has: {}): \
                     the result was recorded for other groups; record it again",
                    r.groups.keys().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
        if split_used {
            let Some(sp) = &r.at_split else {
                return Err(format!(
                    "case {name}: kernel.runs[{i}] has no `at_split` sample, which its \
                     @before/@after counters need"
                ));
            };
            for g in &case.groups {
                if !sp.groups.contains_key(g) && split_group_used(case, g) {
                    return Err(format!(
                        "case {name}: kernel.runs[{i}].at_split.groups has no `{g}`"
                    ));
                }
            }
        }
    }
    if let Some(w) = &case.split_at {
        match s
            .workloads
            .iter()
            .enumerate()
            .find(|(i, x)| x.display_name(*i) == *w)
        {
            None => {
                return Err(format!(
                    "case {name}: split_at = \"{w}\" names no workload of the scenario"
                ))
            }
            Some((i, x)) if !x.exit => {
                return Err(format!(
                    "case {name}: split_at = \"{w}\": workload[{i}] does not exit \
                     (`exit = true`), so it has no end to split at"
                ))
            }
            _ => {}
        }
        if s.machine.stats_interval_ms == 0 {
            return Err(format!(
                "case {name}: split_at needs machine.stats_interval_ms in the scenario \
                 (mmsim splits at its last stats sample before the workload's end)"
            ));
        }
    }
    Ok(())
}

fn split_group_used(case: &Case, g: &str) -> bool {
    case.counters
        .iter()
        .chain(&case.enforce)
        .any(|n| n.starts_with(&format!("{g}:")) && n.contains('@'))
}

/// One group's view of a kernel run: its `memory.stat` as the run's `memcg`.
fn group_view(r: &KernelRun, g: &str) -> KernelRun {
    KernelRun {
        memcg: r.groups.get(g).cloned().unwrap_or_default(),
        vmstat: r.vmstat.clone(),
        probe: r.probe.clone(),
        ..KernelRun::default()
    }
}

/// The kernel run's value of a counter.
pub fn kernel_value(spec: &Spec, r: &KernelRun) -> Option<f64> {
    let whole = match &spec.group {
        Some(g) => spec.base.kernel(&group_view(r, g)),
        None => spec.base.kernel(r),
    };
    match spec.part {
        Part::Whole => return whole,
        Part::Snapshot(n) => return r.probe.get(&format!("anon_huge_kb@{n}")).map(|v| v / 4.0),
        _ => {}
    }
    let sp = r.at_split.as_ref()?;
    let before = match &spec.group {
        Some(g) => sp.groups.get(g)?.get(spec.base.name).copied(),
        None => sp.vmstat.get(spec.base.name).copied(),
    }? as f64;
    match spec.part {
        Part::Before => Some(before),
        _ => Some(whole? - before),
    }
}

/// mmsim's value of a counter; `one_group` is the group of a one-group case.
pub fn sim_value(
    spec: &Spec,
    r: &ScenarioResult,
    one_group: &str,
    split: Option<&str>,
) -> Option<f64> {
    let whole = spec.base.sim(r, spec.group.as_deref().unwrap_or(one_group));
    match spec.part {
        Part::Whole => return whole,
        // From the snapshot pass, not from the result (see `compare`).
        Part::Snapshot(_) => return None,
        _ => {}
    }
    let before = sim_before(spec, r, split?)?;
    match spec.part {
        Part::Before => Some(before),
        _ => Some(whole? - before),
    }
}

/// The counter at mmsim's last stats sample at or before the split workload's exit (0
/// when no sample was taken by then).
fn sim_before(spec: &Spec, r: &ScenarioResult, split: &str) -> Option<f64> {
    let exit = r.workloads.iter().find(|w| w.name == split)?.exit_ns?;
    let Some(sample) = r
        .result
        .stats_samples
        .iter()
        .take_while(|s| s.t_ns <= exit)
        .last()
    else {
        return Some(0.0);
    };
    let v = serde_json::to_value(sample).ok()?;
    let field = match &spec.group {
        Some(g) => {
            let i = r.result.stats_memcg_paths.iter().position(|p| p == g)?;
            &v["memcg"][i][spec.base.name]
        }
        None => &v["vmstat"][spec.base.name],
    };
    field.as_f64()
}
