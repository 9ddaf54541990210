//! Mapping arbitrary u64 keys to dense u32 ids.
//!
//! Trace keys are sparse (block numbers in the hundreds of millions, hashed object ids);
//! simulators want small dense page indices. [`Densifier`] numbers keys 0, 1, 2, … in the
//! order of their first appearance, so the mapping is a pure function of the key
//! sequence: the same trace always gives the same ids, on every machine and run (the
//! table's slot order comes from [`KeyHasher`]'s fixed mixing function, never a randomly
//! seeded one; the ids do not depend on the hash at all).
//!
//! A limit on the number of distinct keys bounds memory and catches a trace that is much
//! larger than intended: the key that would exceed it is an error, not a silent wrap.
//!
//! # The table
//!
//! An open-addressing table with linear probing: one 16-byte slot per entry (the key and
//! its id plus one; an empty slot is all zero), four slots to a cache line, a power of two of
//! them, grown to twice the size when seven eighths are used (as `HashMap`). A lookup is one random
//! cache line in the common case (the slot, or its neighbours in the same line), where a
//! `HashMap` reads a control-byte group and then the bucket. [`Densifier::ids`] resolves
//! a batch of keys with the slots of the keys [`PREFETCH_AHEAD`] positions later
//! prefetched, so a replay's key lookups overlap their cache misses (as `Sim::run`
//! does for pages). The table costs 16 B per slot, 18–37 B per distinct key
//! ([`Densifier::table_bytes`]); a trace converted to the native format with dense keys
//! (`mmsim trace convert --dense-keys`) needs no table at all.

use std::hash::{BuildHasherDefault, Hasher};

use crate::{Record, TraceError};

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

/// How many keys ahead [`Densifier::ids`] prefetches the slot of the key it will
/// resolve.
pub const PREFETCH_AHEAD: usize = 16;

/// The smallest table, in slots.
const MIN_SLOTS: usize = 64;

/// One table slot, four to a 64-byte cache line: the key, and its id plus one (0: the
/// slot is empty; ids are below `max_distinct ≤ u32::MAX`, so id + 1 fits in 32 bits).
/// All-zero empty slots let a new table come from zeroed pages (`calloc`): a page of
/// it is not touched, nor resident, until a key lands in it.
type Slot = [u64; 2];

/// A cache prefetch hint (no-op where the architecture has none).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Maps u64 keys to dense u32 ids `0..distinct()` in order of first appearance.
#[derive(Clone, Debug)]
pub struct Densifier {
    slots: Vec<Slot>,
    /// `64 - log2(slots.len())`: the slot of a key is the top bits of its hash.
    shift: u32,
    len: u32,
    max_distinct: u32,
    name: String,
    /// The keys are ids already ([`assume_dense`](Densifier::assume_dense)): no table.
    dense: bool,
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
            slots: vec![[0; 2]; MIN_SLOTS],
            shift: 64 - MIN_SLOTS.trailing_zeros(),
            len: 0,
            max_distinct,
            name: name.to_string(),
            dense: false,
        }
    }

    /// The first slot probed for `key`.
    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (KeyHasher::mix(key) >> self.shift) as usize
    }

    /// Dense id of `key`: its existing id, or the next free one if `key` is new.
    /// Fails with [`TraceError::TooManyDistinct`] if `key` is new and `max_distinct` keys
    /// are already mapped (the densifier is unchanged then).
    #[inline]
    pub fn id(&mut self, key: u64) -> Result<u32, TraceError> {
        if self.dense {
            return self.dense_id(key);
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let [k, id1] = self.slots[i];
            if id1 == 0 {
                return self.insert(i, key);
            }
            if k == key {
                return Ok(id1 as u32 - 1);
            }
            i = (i + 1) & mask;
        }
    }

    /// Gives `key`, absent, the next id in empty slot `i` of its probe sequence.
    #[inline]
    fn insert(&mut self, i: usize, key: u64) -> Result<u32, TraceError> {
        let next = self.len;
        if next >= self.max_distinct {
            return Err(TraceError::TooManyDistinct {
                file: self.name.clone(),
                limit: self.max_distinct,
                key,
            });
        }
        self.slots[i] = [key, u64::from(next) + 1];
        self.len += 1;
        if self.len as usize * 8 > self.slots.len() * 7 {
            self.grow();
        }
        Ok(next)
    }

    /// Takes every key as its own id from now on, with no table: for keys that are dense
    /// ids in order of first appearance already, as a reader whose
    /// [`dense_keys`](crate::TraceReader::dense_keys) is true delivers them (each key at
    /// most [`distinct`](Densifier::distinct)), so the ids are the ones the table would
    /// give. Only before the first key (later it does nothing): the table is freed.
    pub fn assume_dense(&mut self) {
        if self.len == 0 {
            self.dense = true;
            self.slots = Vec::new();
        }
    }

    /// Whether [`assume_dense`](Densifier::assume_dense) is in force.
    pub fn is_dense(&self) -> bool {
        self.dense
    }

    /// The id of `key` under [`assume_dense`](Densifier::assume_dense): the key itself,
    /// within the limit. A key beyond `distinct()` (not from a checked reader) counts
    /// the ids it skips as seen.
    #[inline]
    fn dense_id(&mut self, key: u64) -> Result<u32, TraceError> {
        if key < u64::from(self.len) {
            return Ok(key as u32);
        }
        if key >= u64::from(self.max_distinct) {
            return Err(TraceError::TooManyDistinct {
                file: self.name.clone(),
                limit: self.max_distinct,
                key,
            });
        }
        self.len = key as u32 + 1;
        Ok(key as u32)
    }

    /// Doubles the table and re-places every entry.
    #[cold]
    fn grow(&mut self) {
        let bigger = vec![[0; 2]; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        self.shift -= 1;
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|s| s[1] != 0) {
            let mut i = self.home(s[0]);
            while self.slots[i][1] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }

    /// The ids of a batch of records' keys, appended to `out` in order: the same ids as
    /// [`id`](Densifier::id) on each key in turn, with the slot of the key
    /// [`PREFETCH_AHEAD`] positions later prefetched while one is resolved. On an
    /// error, `out` holds the ids of the keys before the failing one.
    #[inline]
    pub fn ids(&mut self, records: &[Record], out: &mut Vec<u32>) -> Result<(), TraceError> {
        out.reserve(records.len());
        if self.dense {
            for r in records {
                out.push(self.dense_id(r.key)?);
            }
            return Ok(());
        }
        for r in records.iter().take(PREFETCH_AHEAD) {
            prefetch(&self.slots[self.home(r.key)]);
        }
        for (i, r) in records.iter().enumerate() {
            if let Some(ahead) = records.get(i + PREFETCH_AHEAD) {
                prefetch(&self.slots[self.home(ahead.key)]);
            }
            out.push(self.id(r.key)?);
        }
        Ok(())
    }

    /// The id of `key` if it has been seen, without assigning one.
    pub fn get(&self, key: u64) -> Option<u32> {
        if self.dense {
            return (key < u64::from(self.len)).then_some(key as u32);
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let [k, id1] = self.slots[i];
            if id1 == 0 {
                return None;
            }
            if k == key {
                return Some(id1 as u32 - 1);
            }
            i = (i + 1) & mask;
        }
    }

    /// Number of distinct keys mapped so far (ids are `0..distinct()`).
    pub fn distinct(&self) -> u32 {
        self.len
    }

    /// The limit given at construction.
    pub fn max_distinct(&self) -> u32 {
        self.max_distinct
    }

    /// Host memory the table takes, in bytes (16 per slot; 0 under
    /// [`assume_dense`](Densifier::assume_dense)).
    pub fn table_bytes(&self) -> u64 {
        (self.slots.len() * std::mem::size_of::<Slot>()) as u64
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
    fn table_grows_and_batches_match_single_lookups() {
        assert_eq!(std::mem::size_of::<Slot>(), 16);
        // Sparse keys with a power-of-two stride and repeats, across several growths.
        let keys: Vec<u64> = (0..20_000u64)
            .map(|i| (((i * 7919) % 5003) << 33) | (i % 3))
            .collect();
        let mut one = Densifier::new(u32::MAX - 1);
        let single: Vec<u32> = keys.iter().map(|&k| one.id(k).unwrap()).collect();
        let mut reference = std::collections::HashMap::new();
        for (&k, &id) in keys.iter().zip(&single) {
            let n = reference.len() as u32;
            assert_eq!(*reference.entry(k).or_insert(n), id);
        }
        let mut batched = Densifier::new(u32::MAX - 1);
        let records: Vec<Record> = keys.iter().map(|&key| Record::access(key, false)).collect();
        let mut ids = Vec::new();
        for chunk in records.chunks(1000) {
            batched.ids(chunk, &mut ids).unwrap();
        }
        assert_eq!(ids, single);
        assert_eq!(batched.distinct(), reference.len() as u32);
        assert_eq!(batched.distinct(), one.distinct());
        for (&k, &id) in &reference {
            assert_eq!(batched.get(k), Some(id));
        }
        assert_eq!(batched.get(1 << 63), None);
        // Load stays at most 7/8 and above 7/16 once grown.
        let slots = batched.table_bytes() / 16;
        assert!(u64::from(batched.distinct()) * 8 <= slots * 7);
        assert!(u64::from(batched.distinct()) * 16 > slots * 7);
    }

    #[test]
    fn dense_keys_are_their_own_ids() {
        let mut d = Densifier::with_name("d.native", 3);
        d.assume_dense();
        assert!(d.is_dense());
        assert_eq!(d.table_bytes(), 0);
        let records: Vec<Record> = [0u64, 1, 0, 2, 1]
            .iter()
            .map(|&key| Record::access(key, false))
            .collect();
        let mut ids = Vec::new();
        d.ids(&records, &mut ids).unwrap();
        assert_eq!(ids, [0, 1, 0, 2, 1]);
        assert_eq!((d.distinct(), d.get(2), d.get(3)), (3, Some(2), None));
        let e = d.id(3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "d.native: more than 3 distinct keys (key 3 would be number 4); expected at most 3"
        );
        // Too late once a key has been numbered by the table.
        let mut d = Densifier::new(10);
        d.id(77).unwrap();
        d.assume_dense();
        assert!(!d.is_dense());
        assert_eq!(d.id(77).unwrap(), 0);
    }

    #[test]
    fn batch_stops_at_the_limit_with_the_ids_before() {
        let mut d = Densifier::with_name("t.txt", 2);
        let records: Vec<Record> = [5u64, 6, 5, 7, 5]
            .iter()
            .map(|&key| Record::access(key, false))
            .collect();
        let mut ids = Vec::new();
        let e = d.ids(&records, &mut ids).unwrap_err();
        assert_eq!(ids, [0, 1, 0]);
        assert_eq!(
            e.to_string(),
            "t.txt: more than 2 distinct keys (key 7 would be number 3); expected at most 2"
        );
        assert_eq!(d.distinct(), 2);
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
