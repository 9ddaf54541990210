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
//!
//! # Fixed size
//!
//! A fixed rate needs the footprint in advance to bound memory. [`FixedSizeShards`]
//! (the paper's fixed-size variant) instead keeps at most `s_max` keys: the rate starts
//! at 1, and whenever a new key makes the sample one too large, the sampled keys with
//! the largest hash leave it and the threshold falls to that hash, so no key with a
//! larger one is ever sampled again. Distances are then among the keys sampled at the
//! time, scaled by the rate at the time; a reference sampled at rate `R` stands for
//! `1 / R` references of the whole stream and is weighted so (the paper rescales the
//! histogram when `R` falls, which gives the same proportions). The curve takes the
//! `SHARDS_adj` correction in the form that holds for any rate history: the weighted
//! misses over the references offered (see [`SampledCurve::miss_ratio`] of
//! [`FixedSizeShards`]).

use std::collections::BinaryHeap;

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

/// What a sampled run estimates for the whole stream, whichever way it sampled.
pub trait SampledCurve {
    /// The method, as reports name it.
    fn method(&self) -> &'static str;
    /// References offered, sampled or not (`N`).
    fn references(&self) -> u64;
    /// References sampled.
    fn sampled_references(&self) -> u64;
    /// Keys in the sample now.
    fn sampled_keys(&self) -> u64;
    /// The rate in effect now.
    fn rate(&self) -> f64;
    /// Estimated miss ratio of an LRU cache of `entries` entries.
    fn miss_ratio(&self, entries: u64) -> f64;
    /// Estimated distance quantile of re-references (`q` in 0..=1).
    fn quantile(&self, q: f64) -> Option<u64>;
    /// Estimated distinct keys of the whole stream.
    fn distinct_estimate(&self) -> f64;
    /// Estimated first references of the whole stream.
    fn cold_estimate(&self) -> f64;
}

impl SampledCurve for Shards {
    fn method(&self) -> &'static str {
        "SHARDS_adj, fixed rate"
    }
    fn references(&self) -> u64 {
        self.references
    }
    fn sampled_references(&self) -> u64 {
        self.sampled()
    }
    fn sampled_keys(&self) -> u64 {
        self.sd.distinct() as u64
    }
    fn rate(&self) -> f64 {
        Shards::rate(self)
    }
    fn miss_ratio(&self, entries: u64) -> f64 {
        Shards::miss_ratio(self, entries)
    }
    fn quantile(&self, q: f64) -> Option<u64> {
        Shards::quantile(self, q)
    }
    fn distinct_estimate(&self) -> f64 {
        Shards::distinct_estimate(self)
    }
    fn cold_estimate(&self) -> f64 {
        Shards::cold_estimate(self)
    }
}

/// The largest sample [`FixedSizeShards::new`] accepts, in keys.
pub const MAX_SAMPLE_KEYS: u32 = 1 << 26;

/// Bits of a scaled distance that a [`WeightedHistogram`] bin keeps exactly.
const BIN_BITS: u32 = 10;
const HALF: u64 = 1 << (BIN_BITS - 1);

/// A histogram of weighted scaled distances in log-linear bins: values below 2^10 each
/// have a bin, larger ones share bins 2^-9 of their size wide (the layout of an HDR
/// histogram), so 56-bit distances take about 25,000 bins.
#[derive(Clone, Debug, Default)]
struct WeightedHistogram {
    bins: Vec<f64>,
}

impl WeightedHistogram {
    fn bin(v: u64) -> usize {
        let len = 64 - v.leading_zeros();
        if len <= BIN_BITS {
            return v as usize;
        }
        let shift = (len - BIN_BITS) as u64;
        (shift * HALF + (v >> shift)) as usize
    }

    /// The values `[low, high]` of bin `i`.
    fn range(i: usize) -> (u64, u64) {
        let i = i as u64;
        if i < 2 * HALF {
            return (i, i);
        }
        let shift = i / HALF - 1;
        let m = i - shift * HALF;
        (m << shift, ((m + 1) << shift) - 1)
    }

    fn add(&mut self, v: u64, w: f64) {
        let i = Self::bin(v);
        if i >= self.bins.len() {
            self.bins.resize(i + 1, 0.0);
        }
        self.bins[i] += w;
    }

    /// Weight of the values ≤ `c`, a bin straddling `c` taken in proportion.
    fn weight_upto(&self, c: u64) -> f64 {
        let mut sum = 0.0;
        for (i, &w) in self.bins.iter().enumerate() {
            let (low, high) = Self::range(i);
            if high <= c {
                sum += w;
            } else {
                if low <= c {
                    sum += w * (c - low + 1) as f64 / (high - low + 1) as f64;
                }
                break;
            }
        }
        sum
    }

    fn total(&self) -> f64 {
        self.bins.iter().sum()
    }

    /// The upper value of the first bin where the cumulative weight reaches `q` of the
    /// total.
    fn quantile(&self, q: f64) -> Option<u64> {
        let total = self.total();
        if total <= 0.0 {
            return None;
        }
        let want = q.clamp(0.0, 1.0) * total;
        let mut acc = 0.0;
        let mut last = None;
        for (i, &w) in self.bins.iter().enumerate() {
            if w <= 0.0 {
                continue;
            }
            acc += w;
            last = Some(Self::range(i).1);
            if acc >= want {
                break;
            }
        }
        last
    }
}

/// A fixed-size SHARDS sample: at most `max_keys` keys, the rate falling as needed
/// (see the module documentation).
#[derive(Clone, Debug)]
pub struct FixedSizeShards {
    max_keys: u32,
    threshold: u64,
    dense: Densifier,
    sd: StackDistance,
    /// The sampled keys, largest hash on top: `(hash mod P, dense id)`.
    heap: BinaryHeap<(u32, u32)>,
    /// Re-references by scaled distance, each weighted `1 / R` at its time.
    reuse: WeightedHistogram,
    /// Weight of the first references.
    cold: f64,
    references: u64,
    sampled: u64,
}

/// The error of a fixed sample size `n` outside `[1, MAX_SAMPLE_KEYS]`, with
/// `n` as the user gave it (a command line may pass a negative one).
pub fn sample_size_out_of_range(n: impl std::fmt::Display) -> String {
    format!("{n}: out of range [1, {MAX_SAMPLE_KEYS}] (the most keys the sample holds)")
}

impl FixedSizeShards {
    /// A sample of at most `max_keys` keys (1 to [`MAX_SAMPLE_KEYS`]); `name` names the
    /// trace in errors, which come when more than `max_distinct` keys have been in the
    /// sample at some time.
    pub fn new(max_keys: u64, name: &str, max_distinct: u32) -> Result<FixedSizeShards, String> {
        if !(1..=u64::from(MAX_SAMPLE_KEYS)).contains(&max_keys) {
            return Err(sample_size_out_of_range(max_keys));
        }
        Ok(FixedSizeShards {
            max_keys: max_keys as u32,
            threshold: MODULUS,
            // Keys that left the sample keep their ids; a falling rate lets in about
            // `max_keys × (1 + ln(footprint / max_keys))` keys over a whole trace.
            dense: Densifier::with_name(name, max_distinct),
            sd: StackDistance::default(),
            heap: BinaryHeap::with_capacity(max_keys as usize + 1),
            reuse: WeightedHistogram::default(),
            cold: 0.0,
            references: 0,
            sampled: 0,
        })
    }

    /// The most keys the sample holds.
    pub fn max_keys(&self) -> u32 {
        self.max_keys
    }

    /// Offers one reference; returns whether it was sampled.
    #[inline]
    pub fn reference(&mut self, key: u64) -> Result<bool, TraceError> {
        self.references += 1;
        let hash = spatial_hash(key) % MODULUS;
        if hash >= self.threshold {
            return Ok(false);
        }
        let id = self.dense.id(key)?;
        let weight = MODULUS as f64 / self.threshold as f64;
        self.sampled += 1;
        match self.sd.reference(id) {
            None => {
                self.cold += weight;
                self.heap.push((hash as u32, id));
                if self.sd.distinct() > self.max_keys {
                    self.lower_rate();
                }
            }
            Some(d) => self.reuse.add((d as f64 * weight).ceil() as u64, weight),
        }
        Ok(true)
    }

    /// Drops the keys with the largest hash and makes that hash the threshold.
    fn lower_rate(&mut self) {
        let Some(&(top, _)) = self.heap.peek() else {
            return;
        };
        while let Some(&(hash, id)) = self.heap.peek() {
            if hash != top {
                break;
            }
            self.heap.pop();
            self.sd.forget(id);
        }
        self.threshold = top as u64;
    }

    fn total(&self) -> f64 {
        self.cold + self.reuse.total()
    }
}

impl SampledCurve for FixedSizeShards {
    fn method(&self) -> &'static str {
        "SHARDS_adj, fixed size"
    }
    fn references(&self) -> u64 {
        self.references
    }
    fn sampled_references(&self) -> u64 {
        self.sampled
    }
    fn sampled_keys(&self) -> u64 {
        self.sd.distinct() as u64
    }
    fn rate(&self) -> f64 {
        self.threshold as f64 / MODULUS as f64
    }
    /// `SHARDS_adj` carried over to a falling rate: the weighted misses over the
    /// references offered, `(W − hits_w(C)) / N`. With one rate `R`, `W = Ns / R` and
    /// this is the fixed-rate estimate exactly; normalising by `W` instead (the
    /// paper's plain fixed-size curve) leaves the error of hot keys that fell in or
    /// out of the sample: on a 10 M-reference zipf(0.9) trace with 8,192 keys the
    /// largest error over the default sizes is 0.080 that way and 0.022 this way
    /// (BENCHMARKS.md).
    fn miss_ratio(&self, entries: u64) -> f64 {
        if self.references == 0 {
            return 0.0;
        }
        let misses = self.total() - self.reuse.weight_upto(entries);
        (misses / self.references as f64).clamp(0.0, 1.0)
    }
    fn quantile(&self, q: f64) -> Option<u64> {
        self.reuse.quantile(q)
    }
    fn distinct_estimate(&self) -> f64 {
        self.sd.distinct() as f64 / self.rate()
    }
    fn cold_estimate(&self) -> f64 {
        let total = self.total();
        if total <= 0.0 {
            0.0
        } else {
            self.cold / total * self.references as f64
        }
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

    /// Feeds the same uniform stream as `samples_estimate_a_uniform_stream` to a
    /// fixed-size sample of 2,000 keys (1 % of the footprint at the end).
    #[test]
    fn a_fixed_size_sample_estimates_a_uniform_stream_in_bounded_keys() {
        let k = 200_000u64;
        let mut exact = StackDistance::default();
        let mut d = Densifier::new(1 << 20);
        let mut fixed = FixedSizeShards::new(2_000, "t", 1 << 20).unwrap();
        let mut x = 0x1234_5678u64;
        let n = 4_000_000u64;
        let mut rate = 1.0;
        for i in 0..n {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let key = x.wrapping_mul(0x2545_f491_4f6c_dd1d) % k;
            exact.reference(d.id(key).unwrap());
            fixed.reference(key).unwrap();
            assert!(fixed.sampled_keys() <= 2_000);
            if i % 100_000 == 0 {
                assert!(fixed.rate() <= rate, "the rate never rises");
                rate = fixed.rate();
            }
        }
        assert_eq!(fixed.sampled_keys(), 2_000);
        assert!((fixed.rate() - 0.01).abs() < 0.001, "{}", fixed.rate());
        for c in [2_000u64, 20_000, 50_000, 100_000, 150_000, 200_000] {
            let want = exact.lru_misses(c) as f64 / n as f64;
            let got = fixed.miss_ratio(c);
            assert!((got - want).abs() < 0.03, "size {c}: {got} vs {want}");
        }
        let est = fixed.distinct_estimate();
        assert!((est / k as f64 - 1.0).abs() < 0.05, "{est}");
        let cold = fixed.cold_estimate();
        assert!((cold / k as f64 - 1.0).abs() < 0.1, "{cold}");
    }

    /// A sample as large as the footprint never lowers its rate: its curve is the
    /// exact one (up to the histogram's bins, exact below 1,024).
    #[test]
    fn a_fixed_size_sample_larger_than_the_footprint_is_exact() {
        let keys: Vec<u64> = (0..20_000u64).map(|i| (i * 7919) % 900).collect();
        let mut s = FixedSizeShards::new(900, "t", 1 << 20).unwrap();
        let mut sd = StackDistance::default();
        let mut d = Densifier::new(1 << 20);
        for &k in &keys {
            assert!(s.reference(k).unwrap());
            sd.reference(d.id(k).unwrap());
        }
        assert_eq!(s.rate(), 1.0);
        for c in [1u64, 10, 100, 500, 899, 900, 4000] {
            let exact = sd.lru_misses(c) as f64 / keys.len() as f64;
            assert!((s.miss_ratio(c) - exact).abs() < 1e-12, "size {c}");
        }
        assert_eq!(s.quantile(0.5), sd.quantile(0.5).map(u64::from));
        assert_eq!(s.distinct_estimate(), 900.0);
        assert!((s.cold_estimate() - 900.0).abs() < 1e-9);
    }

    #[test]
    fn one_more_key_than_the_sample_holds_lowers_the_rate_to_the_largest_hash() {
        let mut s = FixedSizeShards::new(3, "t", 16).unwrap();
        let hashes: Vec<u64> = (0..4u64).map(|k| spatial_hash(k) % MODULUS).collect();
        for k in 0..4u64 {
            assert!(s.reference(k).unwrap());
        }
        let top = *hashes.iter().max().unwrap();
        assert_eq!(s.rate(), top as f64 / MODULUS as f64);
        assert_eq!(s.sampled_keys(), 3);
        let gone = hashes.iter().position(|&h| h == top).unwrap() as u64;
        assert!(
            !s.reference(gone).unwrap(),
            "the key that left is not sampled again"
        );
        assert_eq!(s.references(), 5);
        assert_eq!(s.sampled_references(), 4);
    }

    #[test]
    fn bad_sample_sizes_are_refused() {
        for n in [0, u64::from(MAX_SAMPLE_KEYS) + 1] {
            let e = FixedSizeShards::new(n, "t", 10).unwrap_err();
            assert!(e.contains("out of range"), "{e}");
        }
    }

    #[test]
    fn histogram_bins_cover_every_value_once_in_order() {
        let mut prev_high = None::<u64>;
        for i in 0..(8 * HALF as usize) {
            let (low, high) = WeightedHistogram::range(i);
            if let Some(p) = prev_high {
                assert_eq!(low, p + 1, "bin {i}");
            }
            assert_eq!(WeightedHistogram::bin(low), i);
            assert_eq!(WeightedHistogram::bin(high), i);
            prev_high = Some(high);
        }
        assert!(WeightedHistogram::bin(1 << 56) < 30_000);
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
