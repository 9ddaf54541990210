//! Statistics of a metric over repeated runs, and the change against a baseline.
//!
//! The statistics are mmtests' compare-kernels ones (Min, Amean, Stddev, Max), the
//! standard deviation the sample one; the change is in percent of the baseline, as the
//! comparison table and the published-result judgement show it.

use serde::{Deserialize, Serialize};

/// A metric over the runs of one configuration (mmtests' Min, Amean, Stddev, Max).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Runs in which the metric is defined.
    pub n: usize,
    /// Smallest value.
    pub min: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator); `None` for one run.
    pub stddev: Option<f64>,
    /// Largest value.
    pub max: f64,
}

impl Stats {
    /// The statistics of the defined values among `values`; `None` if there are none.
    pub fn of(values: &[Option<f64>]) -> Option<Stats> {
        let v: Vec<f64> = values.iter().flatten().copied().collect();
        if v.is_empty() {
            return None;
        }
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let stddev = (n > 1).then(|| {
            let ss: f64 = v.iter().map(|x| (x - mean) * (x - mean)).sum();
            (ss / (n - 1) as f64).sqrt()
        });
        Some(Stats {
            n,
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            mean,
            stddev,
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// The change of `value` against `base`, in percent of `base`: `Some(0)` when both are
/// 0, `None` when undefined (`base` is 0 and `value` is not: a new effect, printed
/// `new`).
pub fn change_pct(base: f64, value: f64) -> Option<f64> {
    if base == 0.0 {
        (value == 0.0).then_some(0.0)
    } else {
        Some((value - base) / base.abs() * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_mmtests_min_amean_sample_stddev_max() {
        let s = Stats::of(&[Some(2.0), Some(4.0), Some(4.0), Some(4.0), Some(5.0)]).unwrap();
        assert_eq!((s.n, s.min, s.mean, s.max), (5, 2.0, 3.8, 5.0));
        // Sample variance: (3.24 + 3 × 0.04 + 1.44) / 4 = 1.2
        assert!((s.stddev.unwrap() - 1.2f64.sqrt()).abs() < 1e-12);
        let one = Stats::of(&[Some(7.0)]).unwrap();
        assert_eq!((one.mean, one.stddev), (7.0, None));
        assert_eq!(Stats::of(&[None, None]), None);
        let some = Stats::of(&[None, Some(1.0), Some(3.0)]).unwrap();
        assert_eq!((some.n, some.mean), (2, 2.0));
    }

    #[test]
    fn change_is_relative_to_the_baseline() {
        assert_eq!(change_pct(200.0, 150.0), Some(-25.0));
        assert_eq!(change_pct(200.0, 250.0), Some(25.0));
        assert_eq!(change_pct(0.0, 0.0), Some(0.0));
        assert_eq!(change_pct(0.0, 5.0), None);
        assert_eq!(change_pct(-2.0, -1.0), Some(50.0));
    }
}
