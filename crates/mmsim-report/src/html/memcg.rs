//! Memory cgroups over time: each group's `memory.current` against its `memory.max`
//! (dotted; none drawn for `max`).

use super::chart::Chart;
use super::series::{gauge, mib, Run};

/// Usage and limit per group.
pub fn chart(runs: &[Run]) -> Chart {
    let mut series = Vec::new();
    for run in runs {
        for (i, path) in run.memcg_paths.iter().enumerate() {
            series.push(gauge(run, &format!("{path} memory.current"), |s| {
                mib(s.memcg_usage_pages.get(i).copied().unwrap_or(0))
            }));
            let limited = run
                .samples
                .iter()
                .any(|s| s.memcg_max_pages.get(i).copied().flatten().is_some());
            if limited {
                let mut max = gauge(run, &format!("{path} memory.max"), |s| {
                    s.memcg_max_pages
                        .get(i)
                        .copied()
                        .flatten()
                        .map_or(f64::NAN, mib)
                });
                max.dashed = true;
                series.push(max);
            }
        }
    }
    Chart {
        id: "memcg".into(),
        title: "Memory cgroups: memory.current against memory.max (dotted)".into(),
        y_label: "MiB".into(),
        series,
    }
}
