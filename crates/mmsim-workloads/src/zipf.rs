//! A fast exact zipf sampler: an alias table over rank buckets, then a uniform draw
//! inside the bucket with a squeezed rejection test (`sampler = "alias"`).
//!
//! The default zipf sampler, `rand_distr::Zipf`, is rejection-inversion (Hörmann and
//! Derflinger, 1996): exact, O(1) memory, but every draw evaluates `powf`, `ln` and
//! `exp`, which are software routines; profiles of zipf scenarios put half of a run's
//! time in them (issue #18). This sampler draws from the same distribution,
//! `P(rank = k) ∝ k^−θ` for `k` in `1..=n`, with integer work in the common case:
//!
//! 1. **Buckets.** Ranks `1..=HEAD` are buckets of one rank each; past them a bucket
//!    starts at `a` and holds `max(1, a / 16)` ranks, so the density inside a bucket
//!    varies by at most a factor `(17/16)^θ`. Up to `n = 2^31` there are fewer than 450
//!    buckets (about 18 KiB: the table stays in the L1/L2 cache).
//! 2. **Bucket masses** `Σ k^−θ` are summed exactly for buckets of up to 64 ranks and by
//!    Euler–Maclaurin with three Bernoulli terms for wider ones (their first rank is
//!    then above 1,024, where the remainder is below 10^−20 of the bucket's mass): exact
//!    to `f64` rounding, as rejection-inversion is.
//! 3. **Bucket choice** by Vose's alias method: one uniform index and one 64-bit coin.
//! 4. **Rank inside the bucket** `[a, b]`: a uniform `k`, accepted with probability
//!    `(a/k)^θ` (rejection from a flat envelope, exact). A coin below the precomputed
//!    squeeze `(a/b)^θ` accepts without computing the power, which happens for about
//!    19 draws in 20 at θ = 0.9; only the rest call `powf`.
//!
//! Same seed, same ranks: the table is built in a fixed order from `f64` arithmetic,
//! and draws take a fixed number of `u64`s from the caller's generator for a given
//! path. The streams differ from `rand_distr::Zipf`'s (another algorithm consumes the
//! generator differently), which is why the sampler is chosen per workload and the
//! default stays rejection-inversion: every recorded result keeps its bits.
//!
//! **Sampled runs** (`crate::sample`) would otherwise draw and hash `1 / R` events per
//! kept one. [`KeptRanks`] draws the kept events directly: an alias table over the
//! kept pages (one entry each, exact weights) and, for the events offered in between,
//! one geometric gap. Same law as filtering the whole stream, another stream.

use rand::{Rng, RngCore};

/// Ranks below and at this one are buckets of their own.
const HEAD: u64 = 128;
/// A bucket starting at rank `a > HEAD` holds `a >> WIDTH_SHIFT` ranks.
const WIDTH_SHIFT: u32 = 4;
/// Buckets this wide or narrower have their mass summed term by term.
const EXACT_SUM_MAX: u64 = 64;

/// One rank bucket with its alias-table entry.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    /// First rank (1-based).
    first: u64,
    /// Number of ranks.
    width: u64,
    /// Keep this bucket if a 64-bit coin is below this; else take `alias`.
    keep_below: u64,
    /// A coin below this accepts a rank of the bucket without computing `(a/k)^θ`.
    squeeze_below: u64,
    /// The alias bucket.
    alias: u32,
}

/// The alias-over-buckets zipf sampler of this module: ranks `1..=n` with
/// `P(k) ∝ k^−θ`.
#[derive(Clone, Debug)]
pub struct ZipfAlias {
    buckets: Vec<Bucket>,
    theta: f64,
    /// Number of ranks.
    n: u64,
    /// `Σ_{k=1}^{n} k^−θ`, the sum of the bucket masses.
    total_mass: f64,
}

const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// `p` (in [0, 1]) as a threshold for a uniform `u64`: `P(coin < t) = p` to `f64`
/// precision. `p = 1` maps to `u64::MAX` (the one coin `u64::MAX` then misses, with
/// probability 2^−64, and the bucket's alias is itself, so the draw stays exact).
fn threshold(p: f64) -> u64 {
    if p >= 1.0 {
        u64::MAX
    } else if p <= 0.0 {
        0
    } else {
        (p * TWO_POW_64) as u64
    }
}

/// Vose's alias method over `weights` (not all zero), in a fixed order
/// (deterministic): per entry, the coin threshold below which it keeps itself and
/// the entry it otherwise takes.
fn vose(weights: &[f64]) -> Vec<(u64, u32)> {
    let count = weights.len();
    let total: f64 = weights.iter().sum();
    let mut scaled: Vec<f64> = weights.iter().map(|w| w * count as f64 / total).collect();
    let mut table = vec![(u64::MAX, 0u32); count];
    let (mut small, mut large): (Vec<usize>, Vec<usize>) =
        (0..count).partition(|&i| scaled[i] < 1.0);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        table[s] = (threshold(scaled[s]), l as u32);
        scaled[l] -= 1.0 - scaled[s];
        if scaled[l] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // What is left holds probability 1 up to rounding: keep always, alias itself.
    for i in large.into_iter().chain(small) {
        table[i] = (u64::MAX, i as u32);
    }
    table
}

/// `Σ_{k=a}^{b} k^−s` (1 ≤ a ≤ b): term by term for narrow buckets, else
/// Euler–Maclaurin (integral, end-point half terms, B2, B4, B6 corrections).
fn bucket_mass(a: u64, b: u64, s: f64) -> f64 {
    if b - a < EXACT_SUM_MAX {
        return (a..=b).map(|k| (k as f64).powf(-s)).sum();
    }
    let (fa, fb) = (a as f64, b as f64);
    let f = |x: f64| x.powf(-s);
    // Odd derivatives of x^−s: f' = −s x^(−s−1), f''' = −s(s+1)(s+2) x^(−s−3),
    // f^(5) = −s(s+1)(s+2)(s+3)(s+4) x^(−s−5).
    let d1 = |x: f64| -s * x.powf(-s - 1.0);
    let d3 = |x: f64| -s * (s + 1.0) * (s + 2.0) * x.powf(-s - 3.0);
    let d5 = |x: f64| -s * (s + 1.0) * (s + 2.0) * (s + 3.0) * (s + 4.0) * x.powf(-s - 5.0);
    integral(fa, fb, s) + (f(fa) + f(fb)) / 2.0 + (d1(fb) - d1(fa)) / 12.0
        - (d3(fb) - d3(fa)) / 720.0
        + (d5(fb) - d5(fa)) / 30240.0
}

/// `∫_a^b x^−s dx`, computed without cancellation near `s = 1`:
/// `a^(1−s) · ln(b/a) · expm1(t)/t` with `t = (1−s) ln(b/a)`.
fn integral(a: f64, b: f64, s: f64) -> f64 {
    let ln_ratio = (b / a).ln();
    let t = (1.0 - s) * ln_ratio;
    let expm1_over_t = if t.abs() < 1e-300 {
        1.0
    } else {
        t.exp_m1() / t
    };
    a.powf(1.0 - s) * ln_ratio * expm1_over_t
}

impl ZipfAlias {
    /// The sampler of ranks `1..=n` (n ≥ 1) with exponent `theta` (finite, ≥ 0).
    pub fn new(n: u64, theta: f64) -> ZipfAlias {
        let n = n.max(1);
        let theta = if theta.is_finite() {
            theta.max(0.0)
        } else {
            0.0
        };
        let mut buckets = Vec::new();
        let mut masses = Vec::new();
        let mut first = 1u64;
        while first <= n {
            let width = if first <= HEAD {
                1
            } else {
                (first >> WIDTH_SHIFT).max(1)
            }
            .min(n - first + 1);
            let last = first + width - 1;
            masses.push(bucket_mass(first, last, theta));
            let squeeze = (first as f64 / last as f64).powf(theta);
            buckets.push(Bucket {
                first,
                width,
                keep_below: u64::MAX,
                // Conservative by 2^−40 so that f64 rounding of `squeeze` cannot accept a
                // rank the exact test would reject.
                squeeze_below: threshold(squeeze).saturating_sub(1 << 24),
                alias: 0,
            });
            first = last + 1;
        }
        Self::fill_alias(&mut buckets, &masses);
        ZipfAlias {
            buckets,
            theta,
            n,
            total_mass: masses.iter().sum(),
        }
    }

    /// The alias entries of the buckets, from their masses ([`vose`]).
    fn fill_alias(buckets: &mut [Bucket], masses: &[f64]) {
        for (b, (keep_below, alias)) in buckets.iter_mut().zip(vose(masses)) {
            b.keep_below = keep_below;
            b.alias = alias;
        }
    }

    /// Number of ranks `n`.
    pub fn ranks(&self) -> u64 {
        self.n
    }

    /// The exponent `θ`.
    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// `Σ_{k=1}^{n} k^−θ`: the normalising constant of the distribution.
    pub fn total_mass(&self) -> f64 {
        self.total_mass
    }

    /// Number of rank buckets (the alias table's size).
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }

    /// A rank in `1..=n`.
    #[inline]
    pub fn sample<R: RngCore>(&self, rng: &mut R) -> u64 {
        let i = rng.random_range(0..self.buckets.len());
        let mut b = self.buckets[i];
        if rng.next_u64() >= b.keep_below {
            b = self.buckets[b.alias as usize];
        }
        if b.width == 1 {
            return b.first;
        }
        loop {
            let k = b.first + rng.random_range(0..b.width);
            let coin = rng.next_u64();
            if coin < b.squeeze_below
                || (coin as f64) < (b.first as f64 / k as f64).powf(self.theta) * TWO_POW_64
            {
                return k;
            }
        }
    }
}

/// One kept page of a [`KeptRanks`] table with its alias entry.
#[derive(Clone, Copy, Debug)]
struct KeptEntry {
    /// Keep this entry if a 64-bit coin is below this; else take `alias`.
    keep_below: u64,
    /// The alias entry.
    alias: u32,
    /// The page this rank maps to.
    page: u32,
}

/// The zipf distribution restricted to the pages a sampled run keeps
/// (`crate::sample`), with the number of events between two kept ones.
///
/// Filtering a whole stream draws `1 / R` events for every kept one. The kept events
/// of a stream of independent zipf draws are themselves independent draws from the
/// distribution conditioned on the kept pages, `P(page) = k^−θ / W` with `W` the kept
/// pages' share of the total mass, and the number of events offered up to and
/// including the next kept one is geometric with success probability `W`. So a sampled
/// run draws the kept page from an alias table over the kept pages (exact weights, one
/// entry each) and the gap from the geometric law: two or three draws per kept event
/// instead of `1 / R` draws and hashes. The result has the law of the filtered stream
/// (not its bits: another algorithm consumes the generator differently).
#[derive(Clone, Debug)]
pub struct KeptRanks {
    entries: Vec<KeptEntry>,
    /// `ln(1 − W)`: the gap is `1 + ⌊ln U / ln(1 − W)⌋` for `U` uniform in (0, 1].
    ln_miss: f64,
    /// The kept share of the mass, `W`.
    kept_mass: f64,
}

impl KeptRanks {
    /// Largest table (entries of 16 bytes: 256 MiB); larger samples filter the stream.
    pub const MAX_ENTRIES: u64 = 1 << 24;

    /// The table over `kept`, the kept (0-based rank, page) pairs of `zipf`'s ranks, in
    /// any fixed order (the order fixes the bits, not the law). `None` when nothing is
    /// kept or more than [`KeptRanks::MAX_ENTRIES`] pages are.
    pub fn new(zipf: &ZipfAlias, kept: impl Iterator<Item = (u64, u32)>) -> Option<KeptRanks> {
        let mut entries = Vec::new();
        let mut weights = Vec::new();
        for (rank, page) in kept {
            if entries.len() as u64 >= Self::MAX_ENTRIES {
                return None;
            }
            weights.push(((rank + 1) as f64).powf(-zipf.theta()));
            entries.push(KeptEntry {
                keep_below: u64::MAX,
                alias: 0,
                page,
            });
        }
        if entries.is_empty() {
            return None;
        }
        let kept_sum: f64 = weights.iter().sum();
        let kept_mass = (kept_sum / zipf.total_mass()).clamp(0.0, 1.0);
        for (e, (keep_below, alias)) in entries.iter_mut().zip(vose(&weights)) {
            e.keep_below = keep_below;
            e.alias = alias;
        }
        Some(KeptRanks {
            entries,
            ln_miss: (-kept_mass).ln_1p(),
            kept_mass,
        })
    }

    /// Number of kept pages (the table's size).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Always false: an empty sample has no table ([`KeptRanks::new`] is `None`).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The kept pages' share of the distribution's mass, `W`.
    pub fn kept_mass(&self) -> f64 {
        self.kept_mass
    }

    /// Events offered up to and including the next kept one (≥ 1; `u64::MAX` when
    /// the gap does not fit).
    #[inline]
    pub fn gap<R: RngCore>(&self, rng: &mut R) -> u64 {
        if self.kept_mass >= 1.0 {
            return 1;
        }
        // U in (0, 1]: 53 random bits, never 0.
        let u = ((rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
        let g = (u.ln() / self.ln_miss).floor();
        if g >= (u64::MAX - 1) as f64 {
            u64::MAX
        } else {
            1 + g as u64
        }
    }

    /// A kept page, with probability proportional to its rank's `k^−θ`.
    #[inline]
    pub fn page<R: RngCore>(&self, rng: &mut R) -> u32 {
        let i = rng.random_range(0..self.entries.len());
        let e = self.entries[i];
        if rng.next_u64() >= e.keep_below {
            self.entries[e.alias as usize].page
        } else {
            e.page
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    fn exact(n: u64, s: f64) -> Vec<f64> {
        let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
        let t: f64 = w.iter().sum();
        w.into_iter().map(|x| x / t).collect()
    }

    /// Pearson's χ² of `draws` samples against the exact probabilities, over cells of
    /// single ranks (head) and merged tail ranks with an expected count ≥ 50.
    fn chi2(n: u64, s: f64, draws: u64, seed: u64) -> (f64, usize) {
        let z = ZipfAlias::new(n, s);
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut count = vec![0u64; n as usize + 1];
        for _ in 0..draws {
            let k = z.sample(&mut rng);
            assert!((1..=n).contains(&k), "rank {k} out of 1..={n}");
            count[k as usize] += 1;
        }
        let p = exact(n, s);
        let (mut stat, mut cells, mut e_acc, mut o_acc) = (0.0, 0usize, 0.0, 0.0);
        for k in 1..=n as usize {
            e_acc += p[k - 1] * draws as f64;
            o_acc += count[k] as f64;
            if e_acc >= 50.0 || k == n as usize {
                stat += (o_acc - e_acc).powi(2) / e_acc;
                cells += 1;
                e_acc = 0.0;
                o_acc = 0.0;
            }
        }
        (stat, cells - 1)
    }

    /// χ² critical value at p = 0.001 by the Wilson–Hilferty approximation.
    fn critical(df: usize) -> f64 {
        let d = df as f64;
        let z = 3.09;
        d * (1.0 - 2.0 / (9.0 * d) + z * (2.0 / (9.0 * d)).sqrt()).powi(3)
    }

    #[test]
    fn draws_follow_the_exact_distribution() {
        for &(n, s) in &[
            (100_000u64, 0.9),
            (50_000, 0.0),
            (20_000, 1.0),
            (5_000, 2.5),
        ] {
            let (stat, df) = chi2(n, s, 2_000_000, 7);
            assert!(
                stat < critical(df),
                "n={n} θ={s}: χ²={stat:.1} over {df} df, limit {:.1}",
                critical(df)
            );
        }
    }

    #[test]
    fn a_wrong_distribution_is_caught() {
        // The test above must be able to fail: θ = 0.9 draws judged as θ = 0.85.
        let (n, draws) = (100_000u64, 2_000_000u64);
        let z = ZipfAlias::new(n, 0.9);
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut count = vec![0u64; n as usize + 1];
        for _ in 0..draws {
            count[z.sample(&mut rng) as usize] += 1;
        }
        let p = exact(n, 0.85);
        let head: f64 = (1..=10)
            .map(|k| {
                let e = p[k - 1] * draws as f64;
                (count[k] as f64 - e).powi(2) / e
            })
            .sum();
        assert!(head > critical(10), "χ² {head:.1} did not reject θ = 0.85");
    }

    /// The χ² above merges tail ranks into cells wider than a bucket, so it cannot see
    /// the shape inside one. Here: over every multi-rank bucket, the draws in its first
    /// half against the exact expectation (a uniform draw inside the bucket, without the
    /// rejection step, is off by about 12 standard deviations).
    #[test]
    fn ranks_inside_a_bucket_lean_to_its_start() {
        let (n, s, draws) = (200_000u64, 0.9, 2_000_000u64);
        let z = ZipfAlias::new(n, s);
        let p = exact(n, s);
        let mut rng = Pcg64Mcg::seed_from_u64(11);
        let mut count = vec![0u64; n as usize + 1];
        for _ in 0..draws {
            count[z.sample(&mut rng) as usize] += 1;
        }
        let (mut observed, mut expected, mut variance) = (0.0, 0.0, 0.0);
        for b in z.buckets.iter().filter(|b| b.width > 1) {
            for k in b.first..b.first + b.width / 2 {
                observed += count[k as usize] as f64;
                let e = p[k as usize - 1] * draws as f64;
                expected += e;
                variance += e;
            }
        }
        let zscore = (observed - expected) / variance.sqrt();
        assert!(zscore.abs() < 4.0, "first halves: z = {zscore:.1}");
    }

    #[test]
    fn bucket_masses_match_the_direct_sum() {
        for &s in &[0.0, 0.5, 0.9, 0.999_999_9, 1.0, 1.3, 5.0] {
            for &(a, b) in &[
                (1025u64, 1088u64),
                (2000, 2124),
                (1 << 20, (1 << 20) + 65_535),
            ] {
                let direct: f64 = (a..=b).map(|k| (k as f64).powf(-s)).sum();
                let em = bucket_mass(a, b, s);
                assert!(
                    ((em - direct) / direct).abs() < 1e-12,
                    "s={s} [{a},{b}]: {em} vs {direct}"
                );
            }
        }
    }

    #[test]
    fn the_table_stays_small_and_covers_every_rank() {
        let z = ZipfAlias::new(1 << 31, 0.9);
        assert!(z.buckets() < 450, "{} buckets", z.buckets());
        let last = z.buckets.last().unwrap();
        assert_eq!(last.first + last.width - 1, 1 << 31);
        let mut next = 1;
        for b in &z.buckets {
            assert_eq!(b.first, next);
            next += b.width;
        }
        assert_eq!(
            ZipfAlias::new(1, 0.9).sample(&mut Pcg64Mcg::seed_from_u64(1)),
            1
        );
    }

    #[test]
    fn same_seed_same_ranks() {
        let z = ZipfAlias::new(1_000_000, 0.9);
        let draw = |seed| {
            let mut rng = Pcg64Mcg::seed_from_u64(seed);
            (0..1000).map(|_| z.sample(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
    }

    /// Kept pages: every 7th rank (0-based), mapped to page `rank + 1000`.
    fn every_seventh(n: u64) -> impl Iterator<Item = (u64, u32)> {
        (0..n).filter(|r| r % 7 == 3).map(|r| (r, r as u32 + 1000))
    }

    #[test]
    fn kept_pages_follow_the_conditional_distribution() {
        let (n, s, draws) = (50_000u64, 0.9, 1_000_000u64);
        let z = ZipfAlias::new(n, s);
        let t = KeptRanks::new(&z, every_seventh(n)).expect("pages kept");
        let p = exact(n, s);
        let w: f64 = (0..n).filter(|r| r % 7 == 3).map(|r| p[r as usize]).sum();
        assert!(
            (t.kept_mass() - w).abs() < 1e-12,
            "W {} vs {w}",
            t.kept_mass()
        );
        let mut rng = Pcg64Mcg::seed_from_u64(11);
        let mut count = vec![0u64; n as usize];
        for _ in 0..draws {
            let page = t.page(&mut rng);
            assert!(
                page >= 1000 && (page - 1000) % 7 == 3,
                "page {page} not kept"
            );
            count[(page - 1000) as usize] += 1;
        }
        let (mut stat, mut cells, mut e_acc, mut o_acc) = (0.0, 0usize, 0.0, 0.0);
        for r in (0..n as usize).filter(|r| r % 7 == 3) {
            e_acc += p[r] / w * draws as f64;
            o_acc += count[r] as f64;
            if e_acc >= 50.0 {
                stat += (o_acc - e_acc).powi(2) / e_acc;
                cells += 1;
                e_acc = 0.0;
                o_acc = 0.0;
            }
        }
        assert!(
            stat < critical(cells - 1),
            "χ²={stat:.1} over {} df",
            cells - 1
        );
        // The same test rejects the unconditioned weights: every kept page equally
        // likely is far off.
        let flat = draws as f64 / (n / 7) as f64;
        let off: f64 = (0..n as usize)
            .filter(|r| r % 7 == 3)
            .take(20)
            .map(|r| (count[r] as f64 - flat).powi(2) / flat)
            .sum();
        assert!(
            off > critical(19) * 100.0,
            "flat weights not rejected: {off:.1}"
        );
    }

    #[test]
    fn gaps_are_geometric_with_the_kept_mass() {
        let z = ZipfAlias::new(10_000, 0.9);
        let t = KeptRanks::new(&z, every_seventh(10_000)).expect("pages kept");
        let w = t.kept_mass();
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let draws = 400_000u64;
        let (mut sum, mut ones) = (0u64, 0u64);
        for _ in 0..draws {
            let g = t.gap(&mut rng);
            assert!(g >= 1);
            sum += g;
            ones += u64::from(g == 1);
        }
        // Mean 1/W (sd of the mean √(1−W)/W/√draws), P(gap = 1) = W.
        let mean = sum as f64 / draws as f64;
        let sd = (1.0 - w).sqrt() / w / (draws as f64).sqrt();
        assert!(
            (mean - 1.0 / w).abs() < 5.0 * sd,
            "mean gap {mean} vs {}",
            1.0 / w
        );
        let p1 = ones as f64 / draws as f64;
        let sd1 = (w * (1.0 - w) / draws as f64).sqrt();
        assert!((p1 - w).abs() < 5.0 * sd1, "P(gap=1) {p1} vs {w}");
    }

    #[test]
    fn a_table_of_everything_gaps_by_one_and_none_is_no_table() {
        let z = ZipfAlias::new(100, 1.0);
        let all = KeptRanks::new(&z, (0..100).map(|r| (r, r as u32))).expect("kept");
        assert!((all.kept_mass() - 1.0).abs() < 1e-12);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        assert!((0..1000).all(|_| all.gap(&mut rng) == 1));
        assert!(KeptRanks::new(&z, std::iter::empty()).is_none());
    }
}
