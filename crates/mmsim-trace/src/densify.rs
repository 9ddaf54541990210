//! Mapping arbitrary u64 keys to dense u32 ids.
//!
//! Trace keys are sparse (block numbers in the hundreds of millions, hashed object ids);
//! simulators want small dense page indices. [`Densifier`] numbers keys 0, 1, 2, … in the
//! order of their first appearance, so the mapping is a pure function of the key
//! sequence: the same trace always gives the same ids, on every machine and run (the map
//! uses [`KeyHasher`], a fixed hasher, never a randomly seeded one; the ids do not depend
//! on the hasher at all).
//!
//! A limit on the number of distinct keys bounds memory and catches a trace that is much
//! larger than intended: the key that would exceed it is an error, not a silent wrap.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::TraceError;

/// A fast, fixed (unseeded, deterministic) hasher for u64 keys: xor-fold, multiply by a
/// 64-bit odd constant, xor-shift, so both the low bits (bucket index) and the high bits
/// (control bytes) of the hash depend on every bit of the key.
///
/// Not resistant to adversarial keys (HashDoS); traces are trusted input here.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyHasher {
    state: u64,
}

const MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

impl KeyHasher {
    #[inline]
    fn mix(x: u64) -> u64 {
        let h = (x ^ (x >> 32)).wrapping_mul(MULTIPLIER);
        h ^ (h >> 29)
    }
}

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.state
    }

    #[inline]
    fn write_u64(&mut self, key: u64) {
        self.state = Self::mix(self.state.rotate_left(23) ^ key);
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
}

/// `BuildHasher` for [`KeyHasher`]; use it for any `HashMap<u64, _>` keyed by trace keys.
pub type BuildKeyHasher = BuildHasherDefault<KeyHasher>;

/// Maps u64 keys to dense u32 ids `0..distinct()` in order of first appearance.
#[derive(Clone, Debug)]
pub struct Densifier {
    map: HashMap<u64, u32, BuildKeyHasher>,
    max_distinct: u32,
    name: String,
}

impl Densifier {
    /// A densifier accepting up to `max_distinct` distinct keys.
    pub fn new(max_distinct: u32) -> Self {
        Densifier::with_name("", max_distinct)
    }

    /// Like [`new`](Densifier::new), with a trace name to show in the
    /// [`TooManyDistinct`](TraceError::TooManyDistinct) error.
    pub fn with_name(name: &str, max_distinct: u32) -> Self {
        Densifier {
            map: HashMap::default(),
            max_distinct,
            name: name.to_string(),
        }
    }

    /// Dense id of `key`: its existing id, or the next free one if `key` is new.
    /// Fails with [`TraceError::TooManyDistinct`] if `key` is new and `max_distinct` keys
    /// are already mapped (the densifier is unchanged then).
    #[inline]
    pub fn id(&mut self, key: u64) -> Result<u32, TraceError> {
        let next = self.map.len() as u32;
        match self.map.entry(key) {
            Entry::Occupied(e) => Ok(*e.get()),
            Entry::Vacant(e) => {
                if next >= self.max_distinct {
                    return Err(TraceError::TooManyDistinct {
                        file: self.name.clone(),
                        limit: self.max_distinct,
                        key,
                    });
                }
                e.insert(next);
                Ok(next)
            }
        }
    }

    /// The id of `key` if it has been seen, without assigning one.
    pub fn get(&self, key: u64) -> Option<u32> {
        self.map.get(&key).copied()
    }

    /// Number of distinct keys mapped so far (ids are `0..distinct()`).
    pub fn distinct(&self) -> u32 {
        self.map.len() as u32
    }

    /// The limit given at construction.
    pub fn max_distinct(&self) -> u32 {
        self.max_distinct
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn ids_in_order_of_first_appearance() {
        let mut d = Densifier::new(10);
        let keys = [900u64, 5, 900, u64::MAX, 5, 0, 7];
        let ids: Vec<u32> = keys.iter().map(|&k| d.id(k).unwrap()).collect();
        assert_eq!(ids, [0, 1, 0, 2, 1, 3, 4]);
        assert_eq!(d.distinct(), 5);
        assert_eq!(d.get(u64::MAX), Some(2));
        assert_eq!(d.get(1), None);
    }

    #[test]
    fn limit_is_enforced() {
        let mut d = Densifier::with_name("t.txt", 2);
        assert_eq!(d.id(10).unwrap(), 0);
        assert_eq!(d.id(20).unwrap(), 1);
        assert_eq!(d.id(10).unwrap(), 0);
        let e = d.id(30).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.txt: more than 2 distinct keys (key 30 would be number 3); expected at most 2"
        );
        // Unchanged after the error; known keys still work.
        assert_eq!(d.distinct(), 2);
        assert_eq!(d.id(20).unwrap(), 1);
        let mut d = Densifier::new(0);
        let e = d.id(1).unwrap_err();
        assert!(
            e.to_string().starts_with("more than 0 distinct keys"),
            "{e}"
        );
    }

    #[test]
    fn hasher_is_fixed_and_spreads_low_bits() {
        let b = BuildKeyHasher::default();
        assert_eq!(b.hash_one(12345u64), b.hash_one(12345u64));
        // Keys with a large power-of-two stride still fill the low bits.
        let mut low = std::collections::HashSet::new();
        for i in 0..1024u64 {
            low.insert(b.hash_one(i << 20) & 1023);
        }
        assert!(low.len() > 500, "{}", low.len());
    }
}
