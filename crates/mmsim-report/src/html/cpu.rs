//! Reclaim CPU over time: kswapd's CPU (one CPU: at most 100 %) and the CPU of reclaim
//! in the workload's tasks (direct and memcg-limit reclaim, summed over the tasks'
//! CPUs), percent of each sampling interval, from the cost model's counters
//! (`RunResult::kswapd_cpu_s`, `direct_profile`).

use super::chart::Chart;
use super::series::{rate, Run};

/// kswapd and direct-reclaim CPU, percent.
pub fn chart(runs: &[Run]) -> Chart {
    let mut series = Vec::new();
    for run in runs {
        series.push(rate(run, "kswapd", 100.0, |s| s.kswapd_cpu_ns));
        series.push(rate(run, "direct reclaim", 100.0, |s| {
            s.direct_reclaim_cpu_ns
        }));
    }
    Chart {
        id: "cpu".into(),
        title: "Reclaim CPU (kswapd; direct and memcg-limit reclaim in the tasks)".into(),
        y_label: "% of one CPU".into(),
        series,
    }
}
