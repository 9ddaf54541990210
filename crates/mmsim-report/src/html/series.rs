//! Time series for the report's charts, taken from the stats sampler's samples
//! (`RunResult::stats_samples`, `machine.stats_interval_ms`): gauges as sampled,
//! event counters as rates (the difference of two samples over their distance), and
//! downsampling to a bounded number of points.

use mmsim_core::StatsSample;

/// Most points a series keeps: more are thinned by [`downsample`].
pub const MAX_POINTS: usize = 600;

/// One line of a chart: a label for the legend and (seconds, value) points.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend's text (a kernel counter name, prefixed by the configuration in a
    /// comparison).
    pub label: String,
    /// (simulated time in seconds, value), in time order.
    pub points: Vec<(f64, f64)>,
    /// A limit rather than a measurement (drawn thin and dashed).
    pub dashed: bool,
    /// The index of its run in a comparison (its line pattern).
    pub run: usize,
}

/// One run, named for the legends (empty for a single run).
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    /// The configuration's name, or "" for a single run.
    pub label: &'a str,
    /// Its index among the runs drawn together.
    pub index: usize,
    /// Its stats samples (`RunResult::stats_samples`).
    pub samples: &'a [StatsSample],
    /// The groups their `memcg_*` vectors list (`RunResult::stats_memcg_paths`).
    pub memcg_paths: &'a [String],
}

impl Run<'_> {
    /// `name` prefixed by the run's label in a comparison: `policy=cost: pswpin`.
    pub fn name(&self, name: &str) -> String {
        if self.label.is_empty() {
            name.to_string()
        } else {
            format!("{}: {name}", self.label)
        }
    }
}

/// Bytes per page.
pub const PAGE: f64 = 4096.0;

/// Pages as MiB.
pub fn mib(pages: u64) -> f64 {
    pages as f64 * PAGE / (1024.0 * 1024.0)
}

fn secs(s: &StatsSample) -> f64 {
    s.t_ns as f64 / 1e9
}

/// A gauge as sampled: `value` of every sample.
pub fn gauge(run: &Run, name: &str, value: impl Fn(&StatsSample) -> f64) -> Series {
    Series {
        label: run.name(name),
        points: downsample(run.samples.iter().map(|s| (secs(s), value(s))).collect()),
        dashed: false,
        run: run.index,
    }
}

/// A counter's rate: the increase of `value` between consecutive samples divided by
/// their distance in `per` nanoseconds (1e9: per second), stamped at the later one;
/// the first sample's rate is over the time since 0. A counter that went down (zeroed
/// at the end of the warmup) counts from 0.
pub fn rate(run: &Run, name: &str, per: f64, value: impl Fn(&StatsSample) -> u64) -> Series {
    let mut prev = (0u64, 0u64);
    let mut points = Vec::with_capacity(run.samples.len());
    for s in run.samples {
        let v = value(s);
        let dt = s.t_ns.saturating_sub(prev.0);
        let dv = v.checked_sub(prev.1).unwrap_or(v);
        if dt > 0 {
            points.push((secs(s), dv as f64 * per / dt as f64));
        }
        prev = (s.t_ns, v);
    }
    Series {
        label: run.name(name),
        points: downsample(points),
        dashed: false,
        run: run.index,
    }
}

/// At most [`MAX_POINTS`] points: consecutive points are grouped in buckets of equal
/// count, and each bucket keeps its largest value at its last time (peaks survive,
/// as in a max-filtered plot). Shorter series are kept whole.
pub fn downsample(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if points.len() <= MAX_POINTS {
        return points;
    }
    let per = points.len().div_ceil(MAX_POINTS);
    points
        .chunks(per)
        .map(|c| {
            let t = c[c.len() - 1].0;
            let v = c.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
            (t, v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(samples: &[(u64, u64)]) -> Vec<StatsSample> {
        samples
            .iter()
            .map(|&(t, v)| {
                let mut s = StatsSample {
                    t_ns: t,
                    ..Default::default()
                };
                s.vmstat.pswpout = v;
                s
            })
            .collect()
    }

    #[test]
    fn rates_are_differences_over_the_spacing() {
        let r = samples(&[(500_000_000, 10), (1_000_000_000, 40), (2_000_000_000, 5)]);
        let run = Run {
            label: "policy=cost",
            index: 0,
            samples: &r,
            memcg_paths: &[],
        };
        let s = rate(&run, "pswpout", 1e9, |s| s.vmstat.pswpout);
        assert_eq!(s.label, "policy=cost: pswpout");
        // 10 in 0.5 s, 30 in 0.5 s, then reset to 0 (warmup end): 5 in 1 s.
        assert_eq!(s.points, [(0.5, 20.0), (1.0, 60.0), (2.0, 5.0)]);
        let g = gauge(&run, "x", |s| s.vmstat.pswpout as f64);
        assert_eq!(g.points, [(0.5, 10.0), (1.0, 40.0), (2.0, 5.0)]);
    }

    #[test]
    fn downsampling_keeps_the_peaks() {
        let pts: Vec<(f64, f64)> = (0..1200).map(|i| (i as f64, (i % 7) as f64)).collect();
        let d = downsample(pts);
        assert_eq!(d.len(), 600);
        assert_eq!(d[0], (1.0, 1.0));
        assert_eq!(d[3], (7.0, 6.0));
        let short: Vec<(f64, f64)> = (0..10).map(|i| (i as f64, 1.0)).collect();
        assert_eq!(downsample(short.clone()), short);
    }
}
