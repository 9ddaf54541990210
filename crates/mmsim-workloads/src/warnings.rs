//! What a finished run cannot be trusted for, said in words.
//!
//! A run can finish and still not answer the question it was asked: its workload was
//! OOM-killed after a few hundred references, its trace was empty, or every record of
//! the trace was skipped because it was read in the wrong format. The counters of such
//! a run are exact about what was simulated and useless as an answer. [`result_warnings`]
//! names each of these conditions; the CLI prints them on standard error, JSON carries
//! them in `warnings`, and `--strict` turns them into a failure.

use crate::{Scenario, ScenarioResult};

/// The warnings a result deserves (empty when it is whole).
pub fn result_warnings(s: &Scenario, r: &ScenarioResult) -> Vec<String> {
    let mut warnings = Vec::new();
    let dropped = r.result.access.dropped_killed;
    if dropped > 0 {
        let ran = r.events.saturating_sub(dropped);
        warnings.push(format!(
            "OOM kill: {dropped} of the workloads' {} events belonged to killed tasks and were \
             not simulated (oom_kill {}): the results cover only {ran} events, up to each kill",
            r.events, r.result.vmstat.oom_kill
        ));
    }
    let bad_fd = r.result.access.bad_fd;
    if bad_fd > 0 {
        warnings.push(format!(
            "{bad_fd} reads or closes went through a closed descriptor and failed with EBADF, \
             not simulated"
        ));
    }
    let outside = r.result.access.out_of_range;
    if outside > 0 {
        warnings.push(format!(
            "{outside} events named a page beyond the end of their mapping or file and were \
             rejected, not simulated"
        ));
    }
    if r.result.unapplied_writes > 0 && !r.partial {
        let end = r.workloads.iter().filter_map(|w| w.end_ns).max();
        let ended = end.map_or(String::new(), |ns| format!(" at {:.3} s", ns as f64 / 1e9));
        warnings.push(format!(
            "{} scheduled write(s) (memory cgroup knob changes or cycles, cgroup moves, \
             lru_gen writes), the first due at {:.3} s, came after the workloads ended{ended} \
             and were never applied",
            r.result.unapplied_writes,
            r.result.first_unapplied_s.unwrap_or(0.0),
        ));
    }
    for t in &r.trace {
        let read = &t.read;
        if read.references > 0 {
            continue;
        }
        if read.records == 0 {
            warnings.push(format!(
                "trace {}: empty: not one record was read, so nothing was simulated",
                t.path
            ));
        } else {
            let why: Vec<String> = read
                .skipped()
                .iter()
                .map(|(what, n)| format!("{n} {what}"))
                .collect();
            warnings.push(format!(
                "trace {}: all {} records were skipped ({}) and nothing was simulated; is it \
                 really in the {} format?",
                t.path,
                read.records,
                why.join(", "),
                t.format
            ));
        }
    }
    if r.events == 0 && !r.partial && r.trace.is_empty() {
        warnings.push(format!(
            "scenario {}: no workload issued an event, so nothing was simulated",
            s.name
        ));
    }
    warnings
}
