//! Reclaim activity over time, per second: refaults (`workingset_refault_anon`,
//! `workingset_refault_file`) and pages scanned and stolen by kswapd and by direct
//! reclaim (`pgscan_kswapd`, `pgscan_direct`, `pgsteal_kswapd`, `pgsteal_direct`), the
//! /proc/vmstat counters' increase between samples.

use super::chart::Chart;
use super::series::{rate, Run};

/// Refaults per second.
pub fn refaults(runs: &[Run]) -> Chart {
    let mut series = Vec::new();
    for run in runs {
        series.push(rate(run, "workingset_refault_anon", 1e9, |s| {
            s.vmstat.workingset_refault_anon
        }));
        series.push(rate(run, "workingset_refault_file", 1e9, |s| {
            s.vmstat.workingset_refault_file
        }));
    }
    Chart {
        id: "refaults".into(),
        title: "Refaults (workingset_refault_anon/file)".into(),
        y_label: "pages/s".into(),
        series,
    }
}

/// Scans and steals per second.
pub fn scans(runs: &[Run]) -> Chart {
    let mut series = Vec::new();
    for run in runs {
        series.push(rate(run, "pgscan_kswapd", 1e9, |s| s.vmstat.pgscan_kswapd));
        series.push(rate(run, "pgscan_direct", 1e9, |s| s.vmstat.pgscan_direct));
        series.push(rate(run, "pgsteal_kswapd", 1e9, |s| {
            s.vmstat.pgsteal_kswapd
        }));
        series.push(rate(run, "pgsteal_direct", 1e9, |s| {
            s.vmstat.pgsteal_direct
        }));
    }
    Chart {
        id: "scans".into(),
        title: "Pages scanned and reclaimed (pgscan_kswapd/direct, pgsteal_kswapd/direct)".into(),
        y_label: "pages/s".into(),
        series,
    }
}
