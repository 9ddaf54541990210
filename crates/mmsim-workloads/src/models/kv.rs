//! `kv`: a key-value store in anonymous memory (memcached), filled and then read by
//! `memtier_benchmark`.
//!
//! ## README
//!
//! ```toml
//! [[workload]]
//! kind = "kv"
//! name = "memcached"
//! keys = 650_000           # memtier --key-minimum=1 --key-maximum=650000
//! value_size = 2000        # memtier -d 2000 (bytes per item); default 32
//! gets = 2_000_000         # requests of the get phase
//! key_pattern = "R"        # R uniform | G gaussian | Z zipf | S sequential
//! ratio = "0:1"            # memtier --ratio SET:GET of the get phase; default 0:1
//! ```
//!
//! One task (the server, named `name`) with one anonymous mapping holding the items.
//! Items are packed into pages in key order: `4096 / value_size` items per page when an
//! item fits in a page, else each item takes `ceil(value_size / 4096)` consecutive pages
//! of its own. A request touches every page of its item: a SET stores to them, a GET
//! loads them (`Event::Access`, one per page).
//!
//! Two phases, as the benchmark of the MGLRU series (seed 000) runs memtier twice:
//!
//! 1. **set phase** (`memtier --ratio 1:0 --key-pattern P:P -n allkeys`): every key is
//!    SET once, in key order 1, 2, …, `keys`;
//! 2. **get phase** (`memtier --ratio S:G --key-pattern X:X`): `gets` GETs with keys
//!    drawn by `key_pattern`, and as memtier does with `ratio = "S:G"`, S SETs then G
//!    GETs, repeated (the SETs draw their keys from the same pattern).
//!
//! Fields (besides the common `name`, `phase`, `weight`, `start`, and `advice`, which
//! has no effect on anonymous memory):
//!
//! | field | meaning | range | default |
//! |---|---|---|---|
//! | `keys` | keys, numbered 1..=`keys` | 1..=2^31, the items fit in 2^31 pages | required |
//! | `value_size` | bytes per item, bytes or size string | 1..=1 MiB (memcached's default item limit) | 32 (memtier's `-d`) |
//! | `gets` | GET requests of the get phase | 0..=2^40 | required |
//! | `key_pattern` | `R` uniform, `G` gaussian, `Z` zipf, `S` sequential | | `R` |
//! | `key_stddev` | `G`: standard deviation, in keys | > 0 | (`keys` − 1) / 6 |
//! | `key_median` | `G`: centre, a key number | (1, `keys`) | the middle key |
//! | `theta` | `Z`: exponent (memtier's `--key-zipf-exp`) | (0, 5) | 1 |
//! | `ratio` | `"S:G"`: SETs and GETs per cycle of the get phase | S 0..=1000, G 1..=1000 | `"0:1"` |
//!
//! Events: (`keys` + `gets` + S × ⌈`gets` / G⌉) × pages per item.
//!
//! ## memtier's behaviour, and where it was checked
//!
//! Against memtier_benchmark's source (github.com/RedisLabs/memtier_benchmark,
//! obj_gen.cpp, client.cpp, memtier_benchmark.cpp; mirror at commit 2f74d611):
//!
//! * **R** (`random_range`): uniform over `[key_min, key_max]`.
//! * **G** (`gaussian_distribution_range`): `median + stddev × N(0, 1)` by the Marsaglia
//!   polar method (one spare kept), redrawn while outside `[min, max + 1]`, truncated to
//!   an integer; the median defaults to `(max − min) / 2 + min + 0.5` and the deviation
//!   to `(max − min) / 6`. mmsim does the same with `min = 1`, `max = keys` (a draw that
//!   truncates to `max + 1` is counted as `max`).
//! * **Z** (`zipf_distribution`): rejection-inversion sampling of key `k` with probability
//!   ∝ `k^−θ` over `[1, max]`; key 1 is the hottest and keys are not scattered. mmsim
//!   uses `rand_distr::Zipf`, the same method. Since the set phase stores keys in order,
//!   the hot keys are the first pages of the mapping, as in a memcached filled that way.
//! * **S**: a cursor from `key_min` wrapping after `key_max`, one for SETs, one for GETs.
//! * **ratio** (`client::create_request`): S SETs, then G GETs, then again.
//! * Defaults: `-d` 32 bytes, key range 0..10,000,000 (mmsim: `keys` is required),
//!   `--ratio 1:10` (mmsim's get phase defaults to the seed's `0:1`), zipf exponent 1.
//!
//! Not modelled: memcached's slab classes, item headers and hash table (give the stored
//! item size as `value_size` if the ~50-byte header matters), items straddling 4 KiB
//! pages (memcached packs chunks back to back in 1 MiB slab pages), LRU maintenance and
//! expiry, several clients (`-c`, `-t`: the set phase is one sequential pass, not 36
//! interleaved key ranges), and network and CPU time per request.

use std::fmt;
use std::str::FromStr;

use mmsim_core::memcg::MemcgId;
use mmsim_core::{Event, Sim, SimError, VmaId};
use rand::Rng;
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Bad, PAGE};
use crate::scenario::{MAX_EVENTS, MAX_PAGES};

/// Largest `value_size`: 1 MiB, memcached's default item size limit (`-I 1m`).
pub const MAX_VALUE_SIZE: u64 = 1 << 20;
/// Largest part of a `ratio`.
pub const MAX_RATIO: u32 = 1000;
/// memtier's zipf exponents are within (0, 5).
pub const MAX_KV_THETA: f64 = 5.0;

/// memtier's key patterns (`--key-pattern`), for the get phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum KeyPattern {
    /// `R`: uniform random.
    #[default]
    Random,
    /// `G`: gaussian around `key_median` with `key_stddev`.
    Gaussian,
    /// `Z`: zipf with exponent `theta`, key 1 hottest.
    Zipf,
    /// `S`: sequential, wrapping.
    Sequential,
}

impl KeyPattern {
    /// memtier's letter.
    pub fn letter(self) -> &'static str {
        match self {
            KeyPattern::Random => "R",
            KeyPattern::Gaussian => "G",
            KeyPattern::Zipf => "Z",
            KeyPattern::Sequential => "S",
        }
    }
}

impl fmt::Display for KeyPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.letter())
    }
}

impl FromStr for KeyPattern {
    type Err = String;
    fn from_str(s: &str) -> Result<KeyPattern, String> {
        Ok(match s {
            "R" => KeyPattern::Random,
            "G" => KeyPattern::Gaussian,
            "Z" => KeyPattern::Zipf,
            "S" => KeyPattern::Sequential,
            _ => {
                return Err(format!(
                    "unknown key_pattern `{s}`; allowed: R (uniform), G (gaussian), \
                     Z (zipf), S (sequential)"
                ))
            }
        })
    }
}

impl Serialize for KeyPattern {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.letter())
    }
}

impl<'de> Deserialize<'de> for KeyPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KeyPattern, D::Error> {
        super::de_from_str(d)
    }
}

/// memtier's `--ratio SET:GET`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KvRatio {
    /// SETs per cycle, 0..=1000.
    pub sets: u32,
    /// GETs per cycle, 1..=1000.
    pub gets: u32,
}

impl Default for KvRatio {
    fn default() -> KvRatio {
        KvRatio { sets: 0, gets: 1 }
    }
}

impl fmt::Display for KvRatio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.sets, self.gets)
    }
}

impl FromStr for KvRatio {
    type Err = String;
    fn from_str(s: &str) -> Result<KvRatio, String> {
        let usage = "write \"SETS:GETS\", e.g. \"1:10\"; SETS 0..=1000, GETS 1..=1000";
        let (a, b) = s
            .split_once(':')
            .ok_or_else(|| format!("ratio `{s}`: {usage}"))?;
        let part = |p: &str| p.trim().parse::<u32>().ok();
        match (part(a), part(b)) {
            (Some(sets), Some(gets)) if sets <= MAX_RATIO && (1..=MAX_RATIO).contains(&gets) => {
                Ok(KvRatio { sets, gets })
            }
            (Some(_), Some(0)) => Err(format!(
                "ratio `{s}`: the get phase needs GETS ≥ 1 (the set phase already writes \
                 every key); {usage}"
            )),
            _ => Err(format!("ratio `{s}`: {usage}")),
        }
    }
}

impl Serialize for KvRatio {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for KvRatio {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KvRatio, D::Error> {
        super::de_from_str(d)
    }
}

/// A `kind = "kv"` workload (see the [module docs](self) for the fields).
#[derive(Clone, Debug, PartialEq)]
pub struct KvSpec {
    /// Keys, numbered 1..=`keys`.
    pub keys: u64,
    /// Bytes per item, 1..=1 MiB (default 32).
    pub value_size: u64,
    /// GET requests of the get phase.
    pub gets: u64,
    /// Key pattern of the get phase (default `R`).
    pub key_pattern: KeyPattern,
    /// `G`: standard deviation in keys (default (`keys` − 1) / 6).
    pub key_stddev: Option<f64>,
    /// `G`: centre key (default the middle).
    pub key_median: Option<f64>,
    /// `Z`: exponent (default 1).
    pub theta: Option<f64>,
    /// SET:GET cycle of the get phase (default 0:1).
    pub ratio: KvRatio,
}

impl KvSpec {
    /// `keys` items of `value_size` bytes, then `gets` uniform GETs.
    pub fn new(keys: u64, value_size: u64, gets: u64) -> KvSpec {
        KvSpec {
            keys,
            value_size,
            gets,
            key_pattern: KeyPattern::Random,
            key_stddev: None,
            key_median: None,
            theta: None,
            ratio: KvRatio::default(),
        }
    }

    /// Items per page (0 when an item takes more than a page).
    pub fn items_per_page(&self) -> u64 {
        PAGE / self.value_size.max(1)
    }

    /// Pages one item touches: 1, or ⌈`value_size` / 4096⌉ for large items.
    pub fn pages_per_item(&self) -> u64 {
        self.value_size.max(1).div_ceil(PAGE)
    }

    /// Pages of the mapping.
    pub fn pages(&self) -> u64 {
        match self.items_per_page() {
            0 => self.keys.saturating_mul(self.pages_per_item()),
            per => self.keys.div_ceil(per),
        }
    }

    /// SETs of the get phase: S × ⌈gets / G⌉.
    pub fn mixed_sets(&self) -> u64 {
        u64::from(self.ratio.sets)
            .saturating_mul(self.gets.div_ceil(u64::from(self.ratio.gets.max(1))))
    }

    /// Requests: every key once, then the get phase.
    pub fn requests(&self) -> u64 {
        self.keys
            .saturating_add(self.gets)
            .saturating_add(self.mixed_sets())
    }

    /// Events: one per page of every request's item.
    pub fn events(&self) -> u64 {
        self.requests().saturating_mul(self.pages_per_item())
    }

    /// Checks every field against its range.
    pub fn validate(&self) -> Result<(), Bad> {
        if self.keys == 0 || self.keys > MAX_PAGES {
            return Err(Bad::new(
                "keys",
                format!("{} is out of range [1, 2^31]", self.keys),
            ));
        }
        if self.value_size == 0 || self.value_size > MAX_VALUE_SIZE {
            return Err(Bad::new(
                "value_size",
                format!(
                    "{} bytes is out of range [1, 1048576] (1 byte to memcached's 1 MiB item \
                     limit)",
                    self.value_size
                ),
            ));
        }
        if self.pages() > MAX_PAGES {
            return Err(Bad::new(
                "keys",
                format!(
                    "{} keys of {} bytes need {} pages, more than the 2^31-page (8 TiB) limit",
                    self.keys,
                    self.value_size,
                    self.pages()
                ),
            ));
        }
        if self.gets > MAX_EVENTS {
            return Err(Bad::new(
                "gets",
                format!("{} is out of range [0, 2^40]", self.gets),
            ));
        }
        if self.ratio.sets > MAX_RATIO || !(1..=MAX_RATIO).contains(&self.ratio.gets) {
            return Err(Bad::new(
                "ratio",
                format!("`{}`: SETS must be 0..=1000 and GETS 1..=1000", self.ratio),
            ));
        }
        if self.events() > MAX_EVENTS {
            return Err(Bad::new(
                "gets",
                format!(
                    "the requests touch {} pages in all, more than the 2^40-event limit",
                    self.events()
                ),
            ));
        }
        let only = |field: &'static str, pattern: KeyPattern| {
            Bad::new(
                field,
                format!(
                    "applies to key_pattern = \"{pattern}\" only, not \"{}\"",
                    self.key_pattern
                ),
            )
        };
        if let Some(s) = self.key_stddev {
            if self.key_pattern != KeyPattern::Gaussian {
                return Err(only("key_stddev", KeyPattern::Gaussian));
            }
            if !(s.is_finite() && s > 0.0) {
                return Err(Bad::new(
                    "key_stddev",
                    format!("{s} is out of range: it must be greater than 0"),
                ));
            }
        }
        if let Some(m) = self.key_median {
            if self.key_pattern != KeyPattern::Gaussian {
                return Err(only("key_median", KeyPattern::Gaussian));
            }
            if !(m.is_finite() && m > 1.0 && m < self.keys as f64) {
                return Err(Bad::new(
                    "key_median",
                    format!("{m} is out of range (1, {}) (a key number)", self.keys),
                ));
            }
        }
        if let Some(t) = self.theta {
            if self.key_pattern != KeyPattern::Zipf {
                return Err(only("theta", KeyPattern::Zipf));
            }
            if !(t.is_finite() && t > 0.0 && t < MAX_KV_THETA) {
                return Err(Bad::new(
                    "theta",
                    format!("{t} is out of range (0, 5) (memtier's --key-zipf-exp)"),
                ));
            }
        }
        Ok(())
    }
}

/// How keys are drawn in the get phase.
#[derive(Debug)]
enum Keys {
    Random,
    Gaussian {
        stddev: f64,
        median: f64,
        spare: Option<f64>,
    },
    Zipf(Zipf<f64>),
    /// Cursors (0-based) of the SETs and the GETs.
    Sequential([u64; 2]),
}

/// The generator of a kv workload.
#[derive(Debug)]
pub struct KvGen {
    vma: VmaId,
    keys: u64,
    /// Items per page; 0: large items of `ppi` pages each.
    ipp: u64,
    /// Pages per item.
    ppi: u32,
    /// Next key of the set phase (0-based).
    set_next: u64,
    gets_left: u64,
    ratio: KvRatio,
    /// Position in the current SET:GET cycle: SETs done, GETs done.
    cycle: (u32, u32),
    pattern: Keys,
    /// The request being emitted: its first page, pages left, whether a SET.
    cur: (u32, u32, bool),
}

impl KvGen {
    /// Creates the server task (in memory cgroup `memcg`) and its mapping in `sim`.
    ///
    /// `spec` must be valid ([`KvSpec::validate`]); out-of-range values are clamped.
    pub fn setup(
        sim: &mut Sim,
        spec: &KvSpec,
        name: &str,
        memcg: MemcgId,
    ) -> Result<KvGen, SimError> {
        let task = sim.add_task(name);
        sim.attach_task(task, memcg)?;
        let pages = spec.pages().clamp(1, MAX_PAGES);
        let vma = sim.mmap_anon(task, pages)?;
        let keys = spec.keys.clamp(1, MAX_PAGES);
        let max = keys as f64;
        let pattern = match spec.key_pattern {
            KeyPattern::Random => Keys::Random,
            KeyPattern::Gaussian => {
                let len = max - 1.0;
                Keys::Gaussian {
                    stddev: spec.key_stddev.filter(|s| *s > 0.0).unwrap_or(len / 6.0),
                    median: spec.key_median.unwrap_or(len / 2.0 + 1.0 + 0.5),
                    spare: None,
                }
            }
            KeyPattern::Zipf => {
                let t = spec.theta.unwrap_or(1.0).clamp(0.0, MAX_KV_THETA);
                Keys::Zipf(
                    Zipf::new(max, t)
                        .map_err(|e| SimError::Setup(format!("kv `{name}`: zipf: {e}")))?,
                )
            }
            KeyPattern::Sequential => Keys::Sequential([0, 0]),
        };
        Ok(KvGen {
            vma,
            keys,
            ipp: spec.items_per_page(),
            ppi: spec.pages_per_item().min(u64::from(u32::MAX)) as u32,
            set_next: 0,
            gets_left: spec.gets,
            ratio: KvRatio {
                sets: spec.ratio.sets.min(MAX_RATIO),
                gets: spec.ratio.gets.clamp(1, MAX_RATIO),
            },
            cycle: (0, 0),
            pattern,
            cur: (0, 0, false),
        })
    }

    /// The mapping.
    pub fn vma(&self) -> VmaId {
        self.vma
    }

    /// The first page of key `k` (0-based).
    #[inline]
    fn first_page(&self, k: u64) -> u32 {
        match k.checked_div(self.ipp) {
            Some(page) => page as u32,
            None => (k * u64::from(self.ppi)) as u32,
        }
    }

    /// A 0-based key of the get phase; `set` picks the SET cursor of `S`.
    #[inline]
    fn draw(&mut self, rng: &mut Pcg64Mcg, set: bool) -> u64 {
        let keys = self.keys;
        match &mut self.pattern {
            Keys::Random => rng.random_range(0..keys),
            Keys::Gaussian {
                stddev,
                median,
                spare,
            } => {
                if keys == 1 {
                    return 0;
                }
                let (min, max) = (1.0, keys as f64);
                loop {
                    // Marsaglia polar method, one spare kept (memtier's gaussian_noise).
                    let z = match spare.take() {
                        Some(z) => z,
                        None => loop {
                            let u = rng.random::<f64>() * 2.0 - 1.0;
                            let v = rng.random::<f64>() * 2.0 - 1.0;
                            let s = u * u + v * v;
                            if s < 1.0 && s != 0.0 {
                                let f = (-2.0 * s.ln() / s).sqrt();
                                *spare = Some(v * f);
                                break u * f;
                            }
                        },
                    };
                    let val = z * *stddev + *median;
                    if (min..=max + 1.0).contains(&val) {
                        return (val as u64).clamp(1, keys) - 1;
                    }
                }
            }
            Keys::Zipf(z) => (z.sample(rng) as u64).clamp(1, keys) - 1,
            Keys::Sequential(cursors) => {
                let c = &mut cursors[usize::from(!set)];
                let k = *c;
                *c = if k + 1 == keys { 0 } else { k + 1 };
                k
            }
        }
    }

    /// Appends up to `max` events to `out`; returns how many.
    pub fn fill(&mut self, rng: &mut Pcg64Mcg, out: &mut Vec<Event>, max: usize) -> usize {
        let mut n = 0;
        out.reserve(max.min(1 << 16));
        while n < max {
            if self.cur.1 == 0 {
                // The next request.
                let (key, set) = if self.set_next < self.keys {
                    self.set_next += 1;
                    (self.set_next - 1, true)
                } else if self.gets_left == 0 {
                    break;
                } else {
                    if self.cycle.0 == self.ratio.sets && self.cycle.1 == self.ratio.gets {
                        self.cycle = (0, 0);
                    }
                    let set = self.cycle.0 < self.ratio.sets;
                    if set {
                        self.cycle.0 += 1;
                    } else {
                        self.cycle.1 += 1;
                        self.gets_left -= 1;
                    }
                    (self.draw(rng, set), set)
                };
                self.cur = (self.first_page(key), self.ppi, set);
            }
            let (page, left, write) = self.cur;
            out.push(Event::Access {
                vma: self.vma,
                index: page,
                write,
            });
            self.cur = (page + 1, left - 1, write);
            n += 1;
        }
        n
    }
}

impl super::Model for KvSpec {
    const KIND: &'static str = "kv";
    const REQUIRED: &'static [&'static str] = &["keys", "gets"];
    const OPTIONAL: &'static [&'static str] = &[
        "value_size",
        "key_pattern",
        "key_stddev",
        "key_median",
        "theta",
        "ratio",
    ];
    const TARGET: crate::Target = crate::Target::Anon;

    fn pages(&self) -> u64 {
        KvSpec::pages(self)
    }

    fn events(&self) -> Option<u64> {
        Some(KvSpec::events(self))
    }

    fn validate(&self) -> Result<(), Bad> {
        KvSpec::validate(self)
    }
}
