//! Several independent runs on several cores (`mmsim compare --jobs N`).
//!
//! Each run is a whole simulation of its own scenario on its own thread: runs share
//! nothing but the process heap, the Ctrl-C flag and the progress bar, so a run's
//! result does not depend on how many others ran beside it (same scenario and seed,
//! same bits, whatever `--jobs` is). Workers take the runs in order from a shared
//! counter; the results come back indexed by run, so the caller prints them in the
//! same order as a serial loop would.
//!
//! Memory: the run-time heap guard ([`crate::host::over_limit`]) counts the whole
//! process, so concurrent runs share one limit; [`jobs_for_memory`] lowers the number
//! of workers beforehand so that the concurrent runs' estimates fit under it.
//!
//! Stopping: after an error, no further run starts (the runs already going finish) and
//! the error of the earliest run in order is the one reported, as a serial loop would.
//! After Ctrl-C every running simulation stops at its next batch with a partial
//! result, and the runs not yet started are [`Slot::NotRun`].

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::Result;
use mmsim_workloads::scenario::Scenario;
use mmsim_workloads::ScenarioResult;

use crate::progress::{self, Progress};

/// Most worker threads `--jobs` accepts.
pub const MAX_JOBS: usize = 256;

/// What became of one run.
#[derive(Debug)]
pub enum Slot {
    /// Never started: an earlier run failed or Ctrl-C came first.
    NotRun,
    /// Ran (its result may be partial, see [`ScenarioResult::partial`]) or failed.
    Ran(Result<Box<ScenarioResult>>),
}

/// The cores this process may use (1 if unknown): the default of `--jobs`.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `jobs` lowered so that that many of the largest of `estimates` (bytes of host memory
/// each run may need) fit in `limit` bytes; at least 1 (a single run that does not fit
/// has been refused before). Returns the jobs and whether memory lowered them.
pub fn jobs_for_memory(jobs: usize, estimates: &[u64], limit: Option<u64>) -> (usize, bool) {
    let (Some(limit), Some(&largest)) = (limit, estimates.iter().max()) else {
        return (jobs, false);
    };
    let fit = usize::try_from(limit / largest.max(1)).unwrap_or(usize::MAX);
    if fit >= jobs {
        (jobs, false)
    } else {
        (fit.max(1), true)
    }
}

/// The worker threads for `--jobs` (default: the cores), lowered with a note when
/// that many of the largest run would not fit in the host memory mmsim may use.
pub fn jobs(flag: Option<i64>, runs: &[Scenario], notes: &mut Vec<String>) -> Result<usize> {
    let jobs = match flag {
        None => default_jobs(),
        Some(n) => usize::try_from(n)
            .ok()
            .filter(|n| (1..=MAX_JOBS).contains(n))
            .ok_or_else(|| {
                crate::UsageError(format!("--jobs {n}: out of range [1, {MAX_JOBS}]"))
            })?,
    };
    let jobs = jobs.min(runs.len().max(1));
    let estimates: Vec<u64> = runs
        .iter()
        .map(|s| mmsim_workloads::footprint::estimate_host_memory(s).bytes)
        .collect();
    let limit = crate::host::limit();
    let (fit, lowered) = jobs_for_memory(jobs, &estimates, limit.map(|l| l.bytes));
    if lowered {
        notes.push(format!(
            "{fit} of the {jobs} runs at once: each may need up to {} of host memory, and \
             mmsim may use {}",
            crate::host::gib(estimates.iter().copied().max().unwrap_or(0)),
            limit.map_or_else(String::new, ToString::to_string)
        ));
    }
    Ok(fit)
}

/// Runs every scenario of `runs` on up to `jobs` threads; `label(i)` names run `i` in
/// the progress bar. The slots are in the order of `runs`.
pub fn run_all(
    runs: &[Scenario],
    jobs: usize,
    progress: &mut Progress,
    label: &(dyn Fn(usize) -> String + Sync),
) -> Vec<Slot> {
    if jobs <= 1 || runs.len() <= 1 {
        return serial(runs, progress, label);
    }
    let jobs = jobs.min(runs.len());
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    // Events of finished runs, and of each worker's current run, for one bar over all.
    let finished = AtomicU64::new(0);
    let current: Vec<AtomicU64> = (0..jobs).map(|_| AtomicU64::new(0)).collect();
    let slots: Vec<Mutex<Slot>> = runs.iter().map(|_| Mutex::new(Slot::NotRun)).collect();
    let shared = Mutex::new(progress);
    let running = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for w in 0..jobs {
            let (next, failed, finished, current, slots, shared, running) = (
                &next, &failed, &finished, &current, &slots, &shared, &running,
            );
            scope.spawn(move || loop {
                if failed.load(Ordering::Relaxed) || progress::cancelled() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= runs.len() {
                    break;
                }
                let n = running.fetch_add(1, Ordering::Relaxed) + 1;
                lock(shared).set_label(format!("{} ({n} running)", label(i)));
                let mut tick = |done: u64| {
                    current[w].store(done, Ordering::Relaxed);
                    let sum: u64 = current.iter().map(|c| c.load(Ordering::Relaxed)).sum();
                    lock(shared).tick_total(finished.load(Ordering::Relaxed) + sum);
                };
                let result = crate::run::run_with_tick(&runs[i], &mut tick).map(Box::new);
                running.fetch_sub(1, Ordering::Relaxed);
                current[w].store(0, Ordering::Relaxed);
                match &result {
                    Ok(r) => {
                        finished.fetch_add(r.events, Ordering::Relaxed);
                    }
                    Err(_) => failed.store(true, Ordering::Relaxed),
                }
                *lock(&slots[i]) = Slot::Ran(result);
            });
        }
    });
    slots
        .into_iter()
        .map(|s| s.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect()
}

/// One run after another on this thread (`--jobs 1`, or a single run).
fn serial(
    runs: &[Scenario],
    progress: &mut Progress,
    label: &(dyn Fn(usize) -> String + Sync),
) -> Vec<Slot> {
    let mut slots: Vec<Slot> = runs.iter().map(|_| Slot::NotRun).collect();
    for (i, s) in runs.iter().enumerate() {
        if progress::cancelled() {
            break;
        }
        progress.set_label(label(i));
        let result = crate::run::run_with_progress(s, progress).map(Box::new);
        let stop = match &result {
            Ok(r) => r.partial,
            Err(_) => true,
        };
        slots[i] = Slot::Ran(result);
        if stop {
            break;
        }
    }
    slots
}

/// A poisoned lock still holds usable data (a panicking worker aborts the command
/// anyway when the scope joins it).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_lowers_jobs_to_what_fits() {
        let gib = 1u64 << 30;
        assert_eq!(
            jobs_for_memory(4, &[gib, 3 * gib], Some(7 * gib)),
            (2, true)
        );
        assert_eq!(jobs_for_memory(4, &[gib], Some(8 * gib)), (4, false));
        // One run that does not fit alone was refused earlier: one worker still runs.
        assert_eq!(jobs_for_memory(4, &[9 * gib], Some(8 * gib)), (1, true));
        assert_eq!(jobs_for_memory(4, &[9 * gib], None), (4, false));
        assert_eq!(jobs_for_memory(3, &[], Some(gib)), (3, false));
    }

    fn small(seed: u64) -> Scenario {
        let text = format!(
            "seed = {seed}\n[machine]\nmemory = \"64M\"\n[[workload]]\nkind = \"zipf\"\n\
             target = \"file\"\npages = \"96M\"\ntheta = 0.9\naccesses = 20000\n"
        );
        Scenario::from_toml_str(&text, "small.toml").unwrap()
    }

    /// Parallel runs give the serial runs' results, bit for bit, in run order.
    #[test]
    fn parallel_results_equal_serial_in_order() {
        let runs: Vec<Scenario> = (1..=5).map(small).collect();
        let label = |i: usize| format!("run {i}");
        let mut p = Progress::new(false, None);
        let serial = run_all(&runs, 1, &mut p, &label);
        let parallel = run_all(&runs, 3, &mut p, &label);
        assert_eq!(serial.len(), 5);
        let json = |slots: &[Slot]| -> Vec<String> {
            slots
                .iter()
                .map(|s| match s {
                    Slot::Ran(Ok(r)) => serde_json::to_string(r).unwrap(),
                    other => panic!("not run: {other:?}"),
                })
                .collect()
        };
        let (a, b) = (json(&serial), json(&parallel));
        assert_eq!(a, b);
        // The seeds differ, so the order is checked, not only the set.
        assert_ne!(a[0], a[1]);
    }
}
