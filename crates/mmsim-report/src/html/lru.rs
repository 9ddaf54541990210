//! LRU list sizes over time: the classic LRU's four lists (`nr_inactive_anon`,
//! `nr_active_anon`, `nr_inactive_file`, `nr_active_file` of /proc/vmstat, summed over
//! the groups), or, under the multi-gen LRU, each generation's anon and file pages
//! (youngest `max_seq` first, as /sys/kernel/debug/lru_gen lists them).

use super::chart::Chart;
use super::series::{gauge, mib, Run};

/// The LRU chart of `runs` (overlaid in a comparison).
pub fn chart(runs: &[Run]) -> Chart {
    let mut series = Vec::new();
    for run in runs {
        let gens = run
            .samples
            .iter()
            .map(|s| s.lru_gen_pages.len())
            .max()
            .unwrap_or(0);
        if gens > 0 {
            for age in 0..gens {
                for (ty, name) in ["anon", "file"].iter().enumerate() {
                    let label = if age == 0 {
                        format!("lru_gen max_seq {name}")
                    } else {
                        format!("lru_gen max_seq-{age} {name}")
                    };
                    series.push(gauge(run, &label, |s| {
                        mib(s.lru_gen_pages.get(age).map_or(0, |g| g[ty]))
                    }));
                }
            }
        } else {
            series.push(gauge(run, "nr_inactive_anon", |s| {
                mib(s.vmstat.nr_inactive_anon)
            }));
            series.push(gauge(run, "nr_active_anon", |s| {
                mib(s.vmstat.nr_active_anon)
            }));
            series.push(gauge(run, "nr_inactive_file", |s| {
                mib(s.vmstat.nr_inactive_file)
            }));
            series.push(gauge(run, "nr_active_file", |s| {
                mib(s.vmstat.nr_active_file)
            }));
        }
    }
    Chart {
        id: "lru".into(),
        title: "LRU list sizes (/proc/vmstat nr_*_anon/file; MGLRU: pages per generation)".into(),
        y_label: "MiB".into(),
        series,
    }
}
