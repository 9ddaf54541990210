//! Memory pressure over time: the share of each sampling interval that some task
//! (`some`) or every non-idle task (`full`) was stalled on memory, from the `total`
//! stall times of /proc/pressure/memory between samples (kernel/sched/psi.c's totals;
//! the avg10/60/300 lines are exponential averages of the same).

use super::chart::Chart;
use super::series::{rate, Run};

/// PSI some/full, percent of each interval.
pub fn chart(runs: &[Run]) -> Chart {
    let mut series = Vec::new();
    // total is in µs: µs per ns of interval × 1e3 × 100 = percent.
    for run in runs {
        series.push(rate(run, "memory some", 1e5, |s| s.psi.some.total));
        series.push(rate(run, "memory full", 1e5, |s| s.psi.full.total));
    }
    Chart {
        id: "psi".into(),
        title: "Memory pressure (/proc/pressure/memory some, full)".into(),
        y_label: "% of time stalled".into(),
        series,
    }
}
