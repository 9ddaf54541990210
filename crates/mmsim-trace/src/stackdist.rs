//! LRU stack distances in one pass (Mattson et al., 1970), and the miss-ratio curve of
//! plain LRU at every cache size from them.
//!
//! The stack distance of a reference is the number of distinct keys referenced since the
//! previous reference to the same key, plus one: the depth at which LRU's recency stack
//! holds the key. LRU with a cache of `c` entries hits exactly the references of
//! distance ≤ `c` (LRU is a stack algorithm: the cache of size `c` is always the top `c`
//! of the stack), so one histogram of distances gives the hit count at every size.
//! First references have no distance (compulsory misses, "cold").
//!
//! # Algorithm and cost
//!
//! Keys are dense ids (see [`crate::Densifier`]). Every key has a mark at the time of its
//! last reference in a Fenwick tree over time; the distance of a reference at time `t`
//! to a key last seen at `p` is the number of marks in `(p, t)` plus one, after which
//! the mark moves from `p` to `t`. When time runs past the tree's capacity, the live
//! marks (one per distinct key) are renumbered in order into a tree of twice their
//! number, so memory stays O(distinct keys) however long the trace is, and the total
//! cost is O(n log d) for n references and d distinct keys.
//!
//! The histogram is exact up to `max_distance` (default: unlimited, i.e. the number of
//! distinct keys); larger distances are counted together, which is enough for curves up
//! to that size.

/// One-pass LRU stack-distance histogram.
#[derive(Clone, Debug)]
pub struct StackDistance {
    /// Time of each key's last reference, or `u32::MAX` if not seen.
    last: Vec<u32>,
    /// Fenwick tree over time slots: 1 where a key's last reference is.
    tree: Vec<u32>,
    /// Next time slot.
    now: u32,
    /// `hist[d]`: references of distance `d` (1-based; `hist[0]` unused).
    hist: Vec<u64>,
    /// References whose distance exceeded `max_distance`.
    beyond: u64,
    /// First references.
    cold: u64,
    /// Number of distinct keys seen.
    distinct: u32,
    max_distance: u32,
}

impl Default for StackDistance {
    fn default() -> Self {
        Self::new(u32::MAX)
    }
}

impl StackDistance {
    /// An empty histogram exact up to distance `max_distance`.
    pub fn new(max_distance: u32) -> Self {
        StackDistance {
            last: Vec::new(),
            tree: vec![0; 1025],
            now: 0,
            hist: vec![0],
            beyond: 0,
            cold: 0,
            distinct: 0,
            max_distance,
        }
    }

    /// Records a reference to dense key `id`; returns its stack distance (`None` for a
    /// first reference).
    pub fn reference(&mut self, id: u32) -> Option<u32> {
        if self.now as usize + 1 >= self.tree.len() {
            self.compact();
        }
        let i = id as usize;
        if i >= self.last.len() {
            self.last.resize(i + 1, u32::MAX);
        }
        let t = self.now;
        self.now += 1;
        let prev = self.last[i];
        self.last[i] = t;
        self.add(t, 1);
        if prev == u32::MAX {
            self.distinct += 1;
            self.cold += 1;
            return None;
        }
        // Marks strictly between prev and t, plus one.
        let d = self.prefix(t - 1) - self.prefix(prev) + 1;
        self.add(prev, u32::MAX); // -1 in wrapping arithmetic
        if d > self.max_distance {
            self.beyond += 1;
        } else {
            let d = d as usize;
            if d >= self.hist.len() {
                self.hist.resize(d + 1, 0);
            }
            self.hist[d] += 1;
        }
        Some(d)
    }

    /// Drops dense key `id` from the stack, as if it had never been referenced: later
    /// distances no longer count it, and [`distinct`](StackDistance::distinct) falls by
    /// one. The references it made stay in the histogram. Fixed-size SHARDS
    /// ([`crate::shards::FixedSizeShards`]) forgets the keys that leave its sample.
    pub fn forget(&mut self, id: u32) {
        let Some(&t) = self.last.get(id as usize) else {
            return;
        };
        if t != u32::MAX {
            self.add(t, u32::MAX); // -1 in wrapping arithmetic
            self.last[id as usize] = u32::MAX;
            self.distinct -= 1;
        }
    }

    /// Renumbers the live marks 0.. in time order into a tree of twice their number.
    fn compact(&mut self) {
        let mut live: Vec<(u32, u32)> = self
            .last
            .iter()
            .enumerate()
            .filter(|(_, &t)| t != u32::MAX)
            .map(|(k, &t)| (t, k as u32))
            .collect();
        live.sort_unstable();
        let cap = (live.len() * 2).max(1024);
        self.tree.clear();
        self.tree.resize(cap + 1, 0);
        for (new_t, &(_, k)) in live.iter().enumerate() {
            self.last[k as usize] = new_t as u32;
            self.add(new_t as u32, 1);
        }
        self.now = live.len() as u32;
    }

    #[inline]
    fn add(&mut self, t: u32, delta: u32) {
        let mut i = t as usize + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Marks at times `0..=t`.
    #[inline]
    fn prefix(&self, t: u32) -> u32 {
        let mut i = t as usize + 1;
        let mut s = 0u32;
        while i > 0 {
            s = s.wrapping_add(self.tree[i]);
            i &= i - 1;
        }
        s
    }

    /// References recorded.
    pub fn references(&self) -> u64 {
        self.cold + self.beyond + self.hist.iter().sum::<u64>()
    }

    /// First references (compulsory misses).
    pub fn cold(&self) -> u64 {
        self.cold
    }

    /// Distinct keys seen (less those [`forget`](StackDistance::forget) dropped).
    pub fn distinct(&self) -> u32 {
        self.distinct
    }

    /// The histogram: `histogram()[d]` references had distance `d` (index 0 is 0).
    pub fn histogram(&self) -> &[u64] {
        &self.hist
    }

    /// Hits of an LRU cache of `entries` entries over the references so far (exact for
    /// `entries ≤ max_distance`).
    pub fn lru_hits(&self, entries: u64) -> u64 {
        let upto = (entries as usize).min(self.hist.len() - 1);
        self.hist[1..=upto].iter().sum()
    }

    /// Misses of an LRU cache of `entries` entries: references minus hits.
    pub fn lru_misses(&self, entries: u64) -> u64 {
        self.references() - self.lru_hits(entries)
    }

    /// The miss-ratio curve at the given sizes: `(entries, misses, miss ratio)`.
    pub fn miss_ratio_curve(&self, sizes: &[u64]) -> Vec<(u64, u64, f64)> {
        let n = self.references().max(1) as f64;
        sizes
            .iter()
            .map(|&c| {
                let m = self.lru_misses(c);
                (c, m, m as f64 / n)
            })
            .collect()
    }

    /// The smallest distance `d` such that at least `q` (0..=1) of the re-references
    /// (those with a distance) have distance ≤ `d`; `None` without re-references.
    pub fn quantile(&self, q: f64) -> Option<u32> {
        let reuses: u64 = self.hist.iter().sum::<u64>() + self.beyond;
        if reuses == 0 {
            return None;
        }
        let want = ((q.clamp(0.0, 1.0) * reuses as f64).ceil() as u64).max(1);
        let mut acc = 0;
        for (d, &c) in self.hist.iter().enumerate() {
            acc += c;
            if acc >= want {
                return Some(d as u32);
            }
        }
        Some(self.max_distance.saturating_add(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference LRU: a Vec as the recency stack.
    fn naive(refs: &[u32], size: usize) -> u64 {
        let mut stack: Vec<u32> = Vec::new();
        let mut hits = 0;
        for &r in refs {
            if let Some(p) = stack.iter().position(|&x| x == r) {
                if p < size {
                    hits += 1;
                }
                stack.remove(p);
            }
            stack.insert(0, r);
        }
        hits
    }

    #[test]
    fn distances_of_a_small_sequence() {
        let mut s = StackDistance::default();
        let d: Vec<Option<u32>> = [0, 1, 2, 0, 0, 2, 1]
            .iter()
            .map(|&k| s.reference(k))
            .collect();
        assert_eq!(d, [None, None, None, Some(3), Some(1), Some(2), Some(3)]);
        assert_eq!((s.cold(), s.distinct(), s.references()), (3, 3, 7));
        assert_eq!(s.lru_hits(1), 1);
        assert_eq!(s.lru_hits(2), 2);
        assert_eq!(s.lru_hits(3), 4);
        assert_eq!(s.quantile(0.5), Some(2));
    }

    #[test]
    fn a_forgotten_key_no_longer_counts_in_distances() {
        let mut s = StackDistance::default();
        for k in [0, 1, 2] {
            s.reference(k);
        }
        s.forget(1);
        s.forget(1); // twice: no effect
        s.forget(9); // never seen: no effect
        assert_eq!(s.distinct(), 2);
        // Key 0 was referenced 3 keys ago, one of them forgotten: distance 2, not 3.
        assert_eq!(s.reference(0), Some(2));
        assert_eq!(s.references(), 4);
    }

    #[test]
    fn matches_naive_lru_across_compactions() {
        // Pseudo-random keys from a small LCG; long enough to compact many times.
        let mut x = 12345u64;
        let refs: Vec<u32> = (0..20_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 33) % 700) as u32
            })
            .collect();
        let mut s = StackDistance::default();
        for &r in &refs {
            s.reference(r);
        }
        for size in [1usize, 10, 100, 350, 699, 700, 1000] {
            assert_eq!(s.lru_hits(size as u64), naive(&refs, size), "size {size}");
        }
    }

    #[test]
    fn capped_histogram_counts_beyond() {
        let mut s = StackDistance::new(2);
        for k in [0, 1, 2, 3, 0, 3] {
            s.reference(k);
        }
        assert_eq!(s.references(), 6);
        assert_eq!(s.lru_hits(2), 1);
        assert_eq!(s.lru_misses(2), 5);
    }
}
