//! `tabs`: a browser with many tabs on a small client — the Chrome OS
//! "MemoryPressure" test behind seed 000's client kswapd profiles (4 GiB,
//! zram): tabs are opened one after another, each a renderer process whose
//! anonymous heap is written as the page loads, then the user switches
//! between them and each switch works on the visited tab's heap.
//!
//! ## README
//!
//! ```toml
//! [[workload]]
//! kind = "tabs"
//! name = "chrome"
//! tabs = 40               # renderer processes
//! tab_size = "64M"        # anonymous heap of each tab
//! switches = 2000         # tab switches after all tabs are open
//! touches = 4096          # page accesses per visit; default a quarter of a tab
//! ```
//!
//! Every tab is one task (`name/N`) with one anonymous mapping of `tab_size`.
//! Opening tab N writes every page of its heap in order (page load). Each of the
//! `switches` visits then picks a tab — with probability 1/2 the previously
//! visited one (switching back), else one chosen uniformly — and makes
//! `touches` accesses to its heap: three quarters to its first quarter (the
//! tab's working set: DOM, JS heap in use), the rest anywhere in the heap,
//! stores with probability `write_ratio` (default 0.3).
//!
//! Fields (besides the common `name`, `phase`, `weight`, `advice` (no effect),
//! `start`, `write_ratio`):
//!
//! | field | meaning | range | default |
//! |---|---|---|---|
//! | `tabs` | tabs (tasks) | 1..=4096 | required |
//! | `tab_size` | heap per tab, bytes or size string | 4 KiB..=8 TiB, tabs × size ≤ 2^31 pages | required |
//! | `switches` | visits after opening | 0..=2^32 | required |
//! | `touches` | accesses per visit | 1..=2^31 | tab pages / 4 (at least 1) |
//!
//! Events: tabs × tab pages + switches × touches.

use mmsim_core::memcg::MemcgId;
use mmsim_core::{Event, Sim, SimError, VmaId};
use rand::RngCore;
use rand_pcg::Pcg64Mcg;

use super::{Bad, PAGE};
use crate::scenario::{MAX_EVENTS, MAX_PAGES};

/// Most tabs.
pub const MAX_TABS: u64 = 4096;

/// A `kind = "tabs"` workload (see the [module docs](self) for the fields).
#[derive(Clone, Debug, PartialEq)]
pub struct TabsSpec {
    /// Tabs.
    pub tabs: u64,
    /// Bytes of heap per tab.
    pub tab_size: u64,
    /// Visits after all tabs are open.
    pub switches: u64,
    /// Accesses per visit (default: a quarter of a tab).
    pub touches: Option<u64>,
}

impl TabsSpec {
    /// Pages per tab.
    pub fn tab_pages(&self) -> u64 {
        self.tab_size / PAGE
    }
    /// Pages of all tabs.
    pub fn pages(&self) -> u64 {
        self.tab_pages().saturating_mul(self.tabs)
    }
    /// Accesses per visit in effect.
    pub fn touches(&self) -> u64 {
        self.touches.unwrap_or((self.tab_pages() / 4).max(1))
    }
    /// Events: the page loads plus the visits' accesses.
    pub fn events(&self) -> u64 {
        self.pages()
            .saturating_add(self.switches.saturating_mul(self.touches()))
    }
    /// Checks every field against its range.
    pub fn validate(&self) -> Result<(), Bad> {
        if !(1..=MAX_TABS).contains(&self.tabs) {
            return Err(Bad::new(
                "tabs",
                format!("{} is out of range [1, {MAX_TABS}]", self.tabs),
            ));
        }
        if self.tab_pages() == 0 || self.pages() > MAX_PAGES {
            return Err(Bad::new(
                "tab_size",
                format!(
                    "{} bytes is out of range: at least 4k, and tabs × tab_size at most 2^31 pages",
                    self.tab_size
                ),
            ));
        }
        if self.switches > 1 << 32 {
            return Err(Bad::new(
                "switches",
                format!("{} is out of range [0, 2^32]", self.switches),
            ));
        }
        if let Some(t) = self.touches {
            if !(1..=1 << 31).contains(&t) {
                return Err(Bad::new(
                    "touches",
                    format!("{t} is out of range [1, 2^31]"),
                ));
            }
        }
        if self.events() > MAX_EVENTS {
            return Err(Bad::new(
                "switches",
                "tab pages + switches × touches is more than the 2^40 event limit".to_string(),
            ));
        }
        Ok(())
    }
}

/// The generator of a tabs workload.
#[derive(Debug)]
pub struct TabsGen {
    vmas: Vec<VmaId>,
    tab_pages: u64,
    touches: u64,
    switches_left: u64,
    /// Loading: the tab being opened and the next page; then the tab visited.
    tab: usize,
    /// The tab visited before `tab`.
    prev: usize,
    pos: u64,
    loading: bool,
    /// Accesses left in the current visit.
    left: u64,
    store_below: u64,
}

impl TabsGen {
    /// Creates one task and heap per tab in group `memcg`.
    pub fn setup(
        sim: &mut Sim,
        spec: &TabsSpec,
        name: &str,
        write_ratio: f64,
        memcg: MemcgId,
    ) -> Result<TabsGen, SimError> {
        let mut vmas = Vec::with_capacity(spec.tabs as usize);
        for i in 0..spec.tabs.clamp(1, MAX_TABS) {
            let task = sim.add_task(&format!("{name}/{i}"));
            sim.attach_task(task, memcg)?;
            vmas.push(sim.mmap_anon(task, spec.tab_pages().max(1))?);
        }
        let store_below = if write_ratio >= 1.0 {
            u64::MAX
        } else if write_ratio <= 0.0 || write_ratio.is_nan() {
            0
        } else {
            (write_ratio * 18_446_744_073_709_551_616.0) as u64
        };
        Ok(TabsGen {
            vmas,
            tab_pages: spec.tab_pages().max(1),
            touches: spec.touches(),
            switches_left: spec.switches,
            tab: 0,
            prev: 0,
            pos: 0,
            loading: true,
            left: 0,
            store_below,
        })
    }

    /// The first tab's heap (for reports).
    pub fn vma(&self) -> VmaId {
        self.vmas[0]
    }

    /// Appends up to `max` events to `out`; returns how many.
    pub fn fill(&mut self, rng: &mut Pcg64Mcg, out: &mut Vec<Event>, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            if self.loading {
                if self.pos == self.tab_pages {
                    self.tab += 1;
                    self.pos = 0;
                    if self.tab == self.vmas.len() {
                        self.loading = false;
                        self.tab = self.vmas.len() - 1;
                        self.prev = self.tab.saturating_sub(1);
                        continue;
                    }
                }
                out.push(Event::Access {
                    vma: self.vmas[self.tab],
                    index: self.pos as u32,
                    write: true,
                });
                self.pos += 1;
                n += 1;
                continue;
            }
            if self.left == 0 {
                if self.switches_left == 0 {
                    break;
                }
                self.switches_left -= 1;
                // Back to the previous tab with probability 1/2, else any tab.
                let r = rng.next_u64();
                let next = if r & 1 == 0 {
                    self.prev
                } else {
                    ((r >> 1) % self.vmas.len() as u64) as usize
                };
                self.prev = self.tab;
                self.tab = next;
                self.left = self.touches;
            }
            let r = rng.next_u64();
            let hot = (self.tab_pages / 4).max(1);
            let index = if !r.is_multiple_of(4) {
                (r >> 2) % hot
            } else {
                (r >> 2) % self.tab_pages
            };
            let write = rng.next_u64() < self.store_below;
            out.push(Event::Access {
                vma: self.vmas[self.tab],
                index: index as u32,
                write,
            });
            self.left -= 1;
            n += 1;
        }
        n
    }
}

impl super::Model for TabsSpec {
    const KIND: &'static str = "tabs";
    const REQUIRED: &'static [&'static str] = &["tabs", "tab_size", "switches"];
    const OPTIONAL: &'static [&'static str] = &["touches"];
    const TARGET: crate::Target = crate::Target::Anon;

    fn pages(&self) -> u64 {
        TabsSpec::pages(self)
    }

    fn events(&self) -> Option<u64> {
        Some(TabsSpec::events(self))
    }

    fn validate(&self) -> Result<(), Bad> {
        TabsSpec::validate(self)
    }
}
