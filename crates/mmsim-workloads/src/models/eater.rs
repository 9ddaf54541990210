//! `eater`: a memory eater — `stress-ng --vm 1 --vm-bytes SIZE --vm-keep`, or the
//! "mem_eater" of the memcg soft-limit benchmarks (seed 004) — that allocates `size` of
//! anonymous memory, touches all of it, and then keeps touching it.
//!
//! ## README
//!
//! ```toml
//! [[workload]]
//! kind = "eater"
//! name = "eater"
//! size = "15G"            # bytes or size string
//! passes = 3              # re-touch passes after the first touch; default 1
//! pattern = "sequential"  # order of the re-touch passes: sequential | random
//! rate = 40.0             # optional: at most 40 pages per simulated ms while allocating
//! collapse = true         # optional: madvise(MADV_COLLAPSE) the mapping once it is touched
//! start = "1s"            # optional, common: begin at 1 s of simulated time
//! ```
//!
//! One task with one anonymous mapping of `size`, both named `name`. First the eater
//! touches every page once, in order, with a store (malloc and memset: each store to a
//! new page is a page fault that allocates it). Then it makes `passes` passes over the
//! mapping, touching every page once per pass: in order (`sequential`), or in a seeded
//! pseudo-random order that is new each pass (`random`). Re-touches are stores unless
//! `write_ratio` (the fraction of stores, default 1) says otherwise.
//!
//! With `rate`, the first touch is paced: after every ⌈`rate`⌉ pages the eater sleeps
//! (`Event::Think`) for ⌈`rate`⌉ / `rate` ms — about a millisecond — so it allocates at
//! most `rate` pages per simulated millisecond; the stores and faults take time too, so
//! under memory pressure it allocates more slowly. (seed 004's mem_eater takes
//! "100 chunks with 1s nap after each": for a 15G eater that is `rate` ≈ 39 pages/ms,
//! spread evenly rather than in 150 MiB bursts.) The re-touch passes are not paced.
//!
//! With `collapse`, once the first touch is done the eater calls
//! `madvise(MADV_COLLAPSE)` on its whole mapping (`Event::Collapse`), as a program does
//! that wants its warmed-up heap in PMD-size pages whatever the THP settings (see
//! `mmsim_core`'s khugepaged module: each 2 MiB-aligned range is collapsed where the
//! kernel can, charged to the eater's group); the re-touch passes then run on what the
//! collapse made.
//!
//! Fields (besides the common `name`, `phase`, `weight`, `advice` (no effect),
//! `start`, `write_ratio`):
//!
//! | field | meaning | range | default |
//! |---|---|---|---|
//! | `size` | bytes of memory, bytes or size string | 4 KiB..=8 TiB | required |
//! | `passes` | re-touch passes after the first touch | 0..=2^40, (1 + passes) × pages ≤ 2^40 | 1 |
//! | `pattern` | order of the re-touch passes: `sequential`, `random` | | `sequential` |
//! | `rate` | pages per simulated ms while allocating | (0, 10^9] | unpaced |
//! | `collapse` | MADV_COLLAPSE the mapping after the first touch | bool | `false` |
//!
//! Events: pages × (1 + `passes`), plus ⌈pages / ⌈`rate`⌉⌉ − 1 naps with `rate`,
//! plus 1 with `collapse`.

use std::fmt;

use mmsim_core::memcg::MemcgId;
use mmsim_core::{Event, Sim, SimError, VmaId};
use rand::RngCore;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Bad, PAGE};
use crate::gen::Permutation;
use crate::scenario::{MAX_EVENTS, MAX_PAGES};

/// Largest `rate`, pages per ms.
pub const MAX_RATE: f64 = 1e9;

/// The order of the re-touch passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum EaterPattern {
    /// Pages 0, 1, … in order.
    #[default]
    Sequential,
    /// Every page once per pass, in a new pseudo-random order each pass.
    Random,
}

impl fmt::Display for EaterPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mmsim_core::setting_names! { EaterPattern, "pattern",
    Sequential => "sequential",
    Random => "random",
}

impl Serialize for EaterPattern {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for EaterPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<EaterPattern, D::Error> {
        super::de_from_str(d)
    }
}

/// A `kind = "eater"` workload (see the [module docs](self) for the fields).
#[derive(Clone, Debug, PartialEq)]
pub struct EaterSpec {
    /// Bytes of memory.
    pub size: u64,
    /// Re-touch passes after the first touch (default 1).
    pub passes: u64,
    /// Order of the re-touch passes (default sequential).
    pub pattern: EaterPattern,
    /// Pages per simulated ms while allocating (default unpaced).
    pub rate: Option<f64>,
    /// `madvise(MADV_COLLAPSE)` of the whole mapping after the first touch.
    pub collapse: bool,
}

impl EaterSpec {
    /// An eater of `size` bytes with one sequential re-touch pass, unpaced.
    pub fn new(size: u64) -> EaterSpec {
        EaterSpec {
            size,
            passes: 1,
            pattern: EaterPattern::Sequential,
            rate: None,
            collapse: false,
        }
    }

    /// Pages of the mapping: `size` / 4096.
    pub fn pages(&self) -> u64 {
        self.size / PAGE
    }

    /// Pages touched between naps while allocating (⌈`rate`⌉), if paced.
    pub fn chunk(&self) -> Option<u64> {
        self.rate
            .filter(|r| r.is_finite() && *r > 0.0)
            .map(|r| (r.min(MAX_RATE).ceil() as u64).max(1))
    }

    /// The nap after each chunk, ns: ⌈`rate`⌉ / `rate` ms.
    pub fn nap_ns(&self) -> u64 {
        match (self.chunk(), self.rate) {
            (Some(c), Some(r)) => (c as f64 * 1e6 / r).round() as u64,
            _ => 0,
        }
    }

    /// Naps: one between chunks of the first touch.
    pub fn naps(&self) -> u64 {
        self.chunk()
            .map_or(0, |c| self.pages().div_ceil(c).saturating_sub(1))
    }

    /// Events: every page (1 + `passes`) times, plus the naps and the collapse.
    pub fn events(&self) -> u64 {
        self.pages()
            .saturating_mul(self.passes.saturating_add(1))
            .saturating_add(self.naps())
            .saturating_add(u64::from(self.collapse))
    }

    /// Checks every field against its range.
    pub fn validate(&self) -> Result<(), Bad> {
        if self.pages() == 0 || self.pages() > MAX_PAGES {
            return Err(Bad::new(
                "size",
                format!(
                    "{} bytes is out of range [4k, 8t] (1 to 2^31 pages)",
                    self.size
                ),
            ));
        }
        if self.passes > MAX_EVENTS || self.events() > MAX_EVENTS {
            return Err(Bad::new(
                "passes",
                format!(
                    "pages × (1 + passes) = {} events is more than the 2^40 limit",
                    self.pages().saturating_mul(self.passes.saturating_add(1))
                ),
            ));
        }
        if let Some(r) = self.rate {
            if !(r.is_finite() && r > 0.0 && r <= MAX_RATE) {
                return Err(Bad::new(
                    "rate",
                    format!("{r} is out of range (0, 1e9] pages per ms"),
                ));
            }
        }
        Ok(())
    }
}

/// Decides per re-touch whether it is a store.
#[derive(Clone, Copy, Debug)]
enum Stores {
    All,
    None,
    Below(u64),
}

/// The generator of an eater workload.
#[derive(Debug)]
pub struct EaterGen {
    vma: VmaId,
    pages: u64,
    passes_left: u64,
    /// The pass under way: 0 the first touch, then 1, 2, …
    pass: u64,
    /// Next position within the pass.
    pos: u64,
    /// Pages touched since the last nap (first touch only).
    since_nap: u64,
    chunk: u64,
    nap_ns: u64,
    random: bool,
    perm: Option<Permutation>,
    stores: Stores,
    /// The MADV_COLLAPSE still to come after the first touch (`collapse`).
    collapse: bool,
}

impl EaterGen {
    /// Creates the task (in memory cgroup `memcg`) and its mapping in `sim`;
    /// re-touches are stores with probability `write_ratio`.
    ///
    /// `spec` must be valid ([`EaterSpec::validate`]); out-of-range values are clamped.
    pub fn setup(
        sim: &mut Sim,
        spec: &EaterSpec,
        name: &str,
        write_ratio: f64,
        memcg: MemcgId,
    ) -> Result<EaterGen, SimError> {
        let task = sim.add_task(name);
        sim.attach_task(task, memcg)?;
        let pages = spec.pages().clamp(1, MAX_PAGES);
        let vma = sim.mmap_anon(task, pages)?;
        let stores = if write_ratio >= 1.0 {
            Stores::All
        } else if write_ratio <= 0.0 || write_ratio.is_nan() {
            Stores::None
        } else {
            Stores::Below((write_ratio * 18_446_744_073_709_551_616.0) as u64)
        };
        Ok(EaterGen {
            vma,
            pages,
            passes_left: spec.passes.min(MAX_EVENTS),
            pass: 0,
            pos: 0,
            since_nap: 0,
            chunk: spec.chunk().unwrap_or(u64::MAX),
            nap_ns: spec.nap_ns(),
            random: spec.pattern == EaterPattern::Random,
            perm: None,
            stores,
            collapse: spec.collapse,
        })
    }

    /// The mapping.
    pub fn vma(&self) -> VmaId {
        self.vma
    }

    /// Appends up to `max` events to `out`; returns how many.
    pub fn fill(&mut self, rng: &mut Pcg64Mcg, out: &mut Vec<Event>, max: usize) -> usize {
        let mut n = 0;
        out.reserve(max.min(1 << 16));
        while n < max {
            if self.pos == self.pages {
                if self.collapse {
                    self.collapse = false;
                    out.push(Event::Collapse {
                        vma: self.vma,
                        index: 0,
                        pages: self.pages as u32,
                    });
                    n += 1;
                    continue;
                }
                if self.passes_left == 0 {
                    break;
                }
                self.passes_left -= 1;
                self.pass += 1;
                self.pos = 0;
                if self.random {
                    self.perm = Some(Permutation::new(self.pages, rng));
                }
            }
            if self.pass == 0 {
                if self.since_nap == self.chunk {
                    self.since_nap = 0;
                    out.push(Event::Think { ns: self.nap_ns });
                    n += 1;
                    continue;
                }
                self.since_nap += 1;
                out.push(Event::Access {
                    vma: self.vma,
                    index: self.pos as u32,
                    write: true,
                });
            } else {
                let index = match &self.perm {
                    Some(p) => p.apply(self.pos),
                    None => self.pos,
                } as u32;
                let write = match self.stores {
                    Stores::All => true,
                    Stores::None => false,
                    Stores::Below(t) => rng.next_u64() < t,
                };
                out.push(Event::Access {
                    vma: self.vma,
                    index,
                    write,
                });
            }
            self.pos += 1;
            n += 1;
        }
        n
    }
}

impl super::Model for EaterSpec {
    const KIND: &'static str = "eater";
    const REQUIRED: &'static [&'static str] = &["size"];
    const OPTIONAL: &'static [&'static str] = &["passes", "pattern", "rate", "collapse"];
    const TARGET: crate::Target = crate::Target::Anon;

    fn pages(&self) -> u64 {
        EaterSpec::pages(self)
    }

    fn events(&self) -> Option<u64> {
        Some(EaterSpec::events(self))
    }

    fn validate(&self) -> Result<(), Bad> {
        EaterSpec::validate(self)
    }
}
