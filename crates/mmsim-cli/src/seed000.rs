//! Seed 000's published multi-gen LRU results beside the simulated ones.
//!
//! Seed 000 ("mm: multi-gen LRU: minimal implementation", v9 06/14) reports,
//! for 5.17-rc2 (classic LRU, our `cost` policy) against the series (MGLRU):
//! fio buffered random reads +47–49 % IOPS, memcached on a ramdisk swap
//! +101–105 % ops/s, and a client (Chrome OS on 4 GiB, zram) kswapd profile in
//! which `page_vma_mapped_walk` falls from 38.05 % to 14.96 % of kswapd's
//! samples. When a comparison has a `cost` and an `mglru` configuration, these
//! lines print the published number and the simulated change side by side.

use crate::metrics::{CompareReport, ConfigReport};

/// One published result and the simulated counterpart.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedRatio {
    /// What was measured.
    pub what: &'static str,
    /// The compared metric.
    pub metric: &'static str,
    /// The published value, as the seed writes it.
    pub published: &'static str,
    /// Simulated: cost's and mglru's means.
    pub simulated: (f64, f64),
}

impl SeedRatio {
    /// The simulated relative change, percent (None if the baseline is 0).
    pub fn change_pct(&self) -> Option<f64> {
        let (a, b) = self.simulated;
        (a != 0.0).then(|| (b - a) * 100.0 / a)
    }
}

fn policy_of(c: &ConfigReport) -> Option<&str> {
    c.settings
        .iter()
        .find(|s| s.key == "policy.name")
        .map(|s| s.value.as_str())
}

fn mean(c: &ConfigReport, metric: &str) -> Option<f64> {
    c.stats.get(metric).and_then(|s| s.as_ref()).map(|s| s.mean)
}

/// The seed-000 comparisons that apply to this report: throughput for its
/// fio and memcached scenarios, and kswapd's rmap share for any scenario.
pub fn ratios(report: &CompareReport) -> Vec<SeedRatio> {
    let find = |p: &str| report.configs.iter().find(|c| policy_of(c) == Some(p));
    let (Some(cost), Some(mglru)) = (find("cost"), find("mglru")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut push = |what, metric, published| {
        if let (Some(a), Some(b)) = (mean(cost, metric), mean(mglru, metric)) {
            out.push(SeedRatio {
                what,
                metric,
                published,
                simulated: (a, b),
            });
        }
    };
    let name = report.scenario.as_str();
    if name.starts_with("fio") {
        push("fio buffered random read IOPS", "throughput", "+47–49 %");
    }
    if name.starts_with("memcached") {
        push("memcached ops/s", "throughput", "+101–105 %");
    }
    // Only where the classic kswapd walked reverse maps at all (mapped pages).
    if mean(cost, "kswapd_rmap_walks").is_some_and(|w| w > 0.0) {
        push(
            "kswapd share in page_vma_mapped_walk",
            "kswapd_rmap_pct",
            "38.05 % → 14.96 %",
        );
    }
    out
}

/// The lines printed under the comparison table.
pub fn notes(report: &CompareReport) -> Vec<String> {
    ratios(report)
        .into_iter()
        .map(|r| {
            let sim = match (r.metric, r.change_pct()) {
                ("kswapd_rmap_pct", _) => {
                    format!("{:.2} % → {:.2} %", r.simulated.0, r.simulated.1)
                }
                (_, Some(c)) => format!("{c:+.1} %"),
                (_, None) => "n/a".into(),
            };
            format!(
                "seed 000, {} (cost → mglru): published {}, simulated {sim} ({})",
                r.what, r.published, r.metric
            )
        })
        .collect()
}
