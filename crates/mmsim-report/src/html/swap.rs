//! Swap traffic over time: `pswpin` and `pswpout` (/proc/vmstat), pages per second.

use super::chart::Chart;
use super::series::{rate, Run};

/// Swap-ins and swap-outs per second.
pub fn chart(runs: &[Run]) -> Chart {
    let mut series = Vec::new();
    for run in runs {
        series.push(rate(run, "pswpin", 1e9, |s| s.vmstat.pswpin));
        series.push(rate(run, "pswpout", 1e9, |s| s.vmstat.pswpout));
    }
    Chart {
        id: "swap".into(),
        title: "Swap in and out (pswpin, pswpout)".into(),
        y_label: "pages/s".into(),
        series,
    }
}
