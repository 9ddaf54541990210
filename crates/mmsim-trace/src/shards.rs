//! Sampled miss-ratio curves: SHARDS (Waldspurger, Park, Garthwaite and Ahmad,
//! "Efficient MRC Construction with SHARDS", FAST '15), fixed-rate with the
//! `SHARDS_adj` correction.
//!
//! A key is in the sample when its spatial hash, taken modulo `P` = 2^24, is below a
//! threshold `T`; the sampling rate is `R = T / P`. Every reference to a sampled key is
//! kept and every reference to another key dropped, so the sample is a set of keys, not
//! of references: a sampled key's whole reuse pattern survives. The LRU stack distances
//! of the sampled references, taken among sampled keys only, are about `R` times the
//! full distances, so an LRU cache of `C` entries hits the sampled references whose
//! distance is at most `C × R` (Mattson's histogram of the sample, read at the scaled
//! size).
//!
//! `SHARDS_adj` (§4.3 of the paper): the sample holds `Ns` references where `N × R`
//! were expected; the difference `N × R − Ns` is added to the histogram's first bucket
//! (references that hit at every size), which makes the miss ratio at size `C`
//! `(Ns − hits_s(C × R)) / (N × R)`, clamped to [0, 1]. It removes most of the error
//! a few very hot keys cause when they fall in (or out of) the sample.
//!
//! The hash is a fixed function of the key (a 64-bit finaliser), so the sample and the
//! curve are the same on every run and machine. The key map and the Fenwick tree hold
//! only sampled keys: memory and time for distances fall with `R`; reading the trace
//! does not.

use crate::{Densifier, StackDistance, TraceError};

/// `P`, the hash modulus of the paper (2^24).
pub const MODULUS: u64 = 1 << 24;

/// The rates [`Shards::new`] accepts: `(0, 1]`, and at least `1 / P`.
pub const MIN_RATE: f64 = 1.0 / MODULUS as f64;

/// The spatial hash: a 64-bit finaliser (Stafford's mix13, as in `splitmix64`), so
/// that nearby keys (consecutive block numbers) land far apart.
#[inline]
pub fn spatial_hash(key: u64) -> u64 {
    let mut z = key;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A fixed-rate SHARDS sample of a reference stream and its LRU stack distances.
#[derive(Clone, Debug)]
pub struct Shards {
    threshold: u64,
    dense: Densifier,
    sd: StackDistance,
    /// All references offered, sampled or not.
    references: u64,
}

impl Shards {
    /// A sampler at `rate` (rounded to a multiple of `1 / P`), tracking at most
    /// `max_distinct` sampled keys; `name` names the trace in errors.
    pub fn new(rate: f64, name: &str, max_distinct: u32) -> Result<Shards, String> {
        if !(rate.is_finite() && (MIN_RATE..=1.0).contains(&rate)) {
            return Err(format!(
                "{rate}: out of range [{MIN_RATE:e}, 1] (SHARDS samples keys whose hash \
                 modulo 2^24 is below rate × 2^24)"
            ));
        }
        Ok(Shards {
            threshold: (rate * MODULUS as f64).round() as u64,
            dense: Densifier::with_name(name, max_distinct),
            sd: StackDistance::default(),
            references: 0,
        })
    }

    /// The rate in effect, `T / P`.
    pub fn rate(&self) -> f64 {
        self.threshold as f64 / MODULUS as f64
    }

    /// Whether `key` is in the sample.
    #[inline]
    pub fn samples(&self, key: u64) -> bool {
        spatial_hash(key) % MODULUS < self.threshold
    }

    /// Offers one reference; returns whether it was sampled.
    #[inline]
    pub fn reference(&mut self, key: u64) -> Result<bool, TraceError> {
        self.references += 1;
        if !self.samples(key) {
            return Ok(false);
        }
        let id = self.dense.id(key)?;
        self.sd.reference(id);
        Ok(true)
    }

    /// References offered.
    pub fn references(&self) -> u64 {
        self.references
    }

    /// References sampled (`Ns`).
    pub fn sampled(&self) -> u64 {
        self.sd.references()
    }

    /// The stack distances of the sample (distances among sampled keys).
    pub fn stack(&self) -> &StackDistance {
        &self.sd
    }

    /// Sampled references expected, `N × R`.
    fn expected(&self) -> f64 {
        self.references as f64 * self.rate()
    }

    /// Estimated distinct keys of the whole stream: sampled keys / R.
    pub fn distinct_estimate(&self) -> f64 {
        self.sd.distinct() as f64 / self.rate()
    }

    /// Estimated first references of the whole stream: sampled ones, scaled to
    /// the `N × R` expected.
    pub fn cold_estimate(&self) -> f64 {
        self.scale(self.sd.cold() as f64)
    }

    /// A count of the sample scaled to the whole stream, `count × N / Ns` (the
    /// `SHARDS_adj` normalisation), 0 for an empty sample.
    fn scale(&self, count: f64) -> f64 {
        let ns = self.sampled();
        if ns == 0 {
            0.0
        } else {
            count * self.references as f64 / ns as f64
        }
    }

    /// The `SHARDS_adj` miss ratio of an LRU cache of `entries` entries.
    pub fn miss_ratio(&self, entries: u64) -> f64 {
        let expected = self.expected();
        if expected <= 0.0 {
            return 0.0;
        }
        let scaled = (entries as f64 * self.rate()).floor() as u64;
        let misses = self.sampled() - self.sd.lru_hits(scaled);
        (misses as f64 / expected).clamp(0.0, 1.0)
    }

    /// A distance quantile of the sample scaled to the whole stream (distance / R).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        self.sd
            .quantile(q)
            .map(|d| (d as f64 / self.rate()).round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_one_is_the_exact_curve() {
        let keys: Vec<u64> = (0..20_000u64).map(|i| (i * 7919) % 1500).collect();
        let mut s = Shards::new(1.0, "t", 1 << 20).unwrap();
        let mut sd = StackDistance::default();
        let mut d = Densifier::new(1 << 20);
        for &k in &keys {
            assert!(s.reference(k).unwrap());
            sd.reference(d.id(k).unwrap());
        }
        for c in [1u64, 10, 100, 500, 1499, 1500, 4000] {
            let exact = sd.lru_misses(c) as f64 / keys.len() as f64;
            assert_eq!(s.miss_ratio(c), exact, "size {c}");
        }
        assert_eq!(s.distinct_estimate(), 1500.0);
    }

    /// A uniform stream over 200 k keys, 4 M references: the 10 % sample's curve is
    /// within 0.005 of the exact one at every size, the 1 % sample's within 0.02 (about
    /// 2,000 sampled keys: the count of keys in the sample itself varies by ~2 %).
    #[test]
    fn samples_estimate_a_uniform_stream() {
        let k = 200_000u64;
        let mut exact = StackDistance::default();
        let mut d = Densifier::new(1 << 20);
        let mut ten = Shards::new(0.1, "t", 1 << 20).unwrap();
        let mut one = Shards::new(0.01, "t", 1 << 20).unwrap();
        let mut x = 0x1234_5678u64;
        let n = 4_000_000u64;
        for _ in 0..n {
            // xorshift64*: uniform keys.
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let key = x.wrapping_mul(0x2545_f491_4f6c_dd1d) % k;
            exact.reference(d.id(key).unwrap());
            ten.reference(key).unwrap();
            one.reference(key).unwrap();
        }
        for (s, tolerance) in [(&ten, 0.005), (&one, 0.02)] {
            let frac = s.sampled() as f64 / n as f64;
            assert!((frac / s.rate() - 1.0).abs() < 0.1, "{frac}");
            for c in [2_000u64, 20_000, 50_000, 100_000, 150_000, 200_000] {
                let want = exact.lru_misses(c) as f64 / n as f64;
                let got = s.miss_ratio(c);
                assert!(
                    (got - want).abs() < tolerance,
                    "rate {}: size {c}: {got} vs {want}",
                    s.rate()
                );
            }
            let est = s.distinct_estimate();
            assert!((est / k as f64 - 1.0).abs() < 0.05, "{est}");
        }
    }

    #[test]
    fn bad_rates_are_refused() {
        for r in [0.0, -0.1, 1.5, f64::NAN, 1e-9] {
            let e = Shards::new(r, "t", 10).unwrap_err();
            assert!(e.contains("out of range"), "{e}");
        }
    }

    #[test]
    fn the_hash_spreads_consecutive_keys() {
        // Of 100,000 consecutive block numbers, a 10 % sample takes about 10 %.
        let s = Shards::new(0.1, "t", 10).unwrap();
        let n = (0..100_000u64).filter(|&k| s.samples(k)).count();
        assert!((9_500..=10_500).contains(&n), "{n}");
    }
}
