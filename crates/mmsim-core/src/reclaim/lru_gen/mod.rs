//! The multi-gen LRU (`CONFIG_LRU_GEN`, the `lru_gen` parts of mm/vmscan.c,
//! mm/workingset.c, include/linux/mm_inline.h and mm/swap.c), in three
//! versions selected by [`MglruVersion`]: v6.1 (the first release), v6.12
//! (v6.1's refs, tiers and PID controller with v6.14's driving loops and
//! its own look-around and reference rules) and v6.14 (current). Behaviour follows spec part D (`lru.md` §6); where the
//! versions differ each function says how.
//!
//! State. Each lruvec has a `LruGenFolio` (`struct lru_gen_folio`):
//! `max_seq`, `min_seq[anon, file]`, per-generation birth times, one list per
//! generation × type (a single zone), page counts per generation (which move
//! with a folio's generation field, not with its list: promotion is lazy),
//! and the PID controller's per-tier counters. A folio's generation and
//! `refs` live in `Folio::gen_refs`; the list it is on is its
//! `FolioArena::lru` tag `LRU_GEN_TAG + gen·2 + type`.
//!
//! Mechanisms, each named after its kernel function below:
//! insertion (`lru_gen_add_folio`, `lru_gen_folio_seq`), tiers
//! (`lru_gen_inc_refs` / v6.1 `folio_inc_refs`), promotion by accessed bits
//! (`folio_update_gen`, `lru_gen_set_refs`, `walk_update_folio`,
//! `lru_gen_look_around`), aging (`try_to_inc_max_seq`, `walk_mm` with its
//! Bloom filters, `inc_max_seq`, `inc_min_seq`), eviction (`evict_folios`,
//! `isolate_folios`, `scan_folios`, `sort_folio`, `isolate_folio`,
//! `try_to_inc_min_seq`), the PID controller (`read_ctrl_pos`,
//! `positive_ctrl_err`, `get_tier_idx`, `get_type_to_scan`,
//! `reset_ctrl_pos`), the driving loops (`get_nr_to_scan`,
//! `should_run_aging`, `try_to_shrink_lruvec`, `lru_gen_shrink_node`,
//! `lru_gen_shrink_lruvec`, `should_abort_scan`, `set_initial_priority`),
//! working-set protection (`lru_gen_age_node` with `min_ttl_ms`), refaults
//! (`lru_gen_eviction`, `lru_gen_refault`), and the debugfs `+`/`-` commands
//! (`run_aging`, `run_eviction`).
//!
//! Simplifications (each also noted at its function): one node and one
//! zone; order-0 folios; `NR_HIST_GENS` = 1 (no `CONFIG_LRU_GEN_STATS`);
//! every task counts as having run since the last walk (the mm list's
//! per-node bitmap); the memcg LRU's random bins come from a seeded
//! generator; PMD accessed bits (cap bit 2) are not modelled.
//!
//! Files, one part of the kernel's MGLRU code each: this file holds the
//! state (`LruGenFolio`, `LruGenState`), folio flags and tiers,
//! insertion and deletion, and promotion by `folio_update_gen`;
//! `aging.rs` creates and retires generations, `walk.rs` the page-table
//! walk and look-around, `evict.rs` the eviction, `pid.rs` the PID
//! controller, `shrink.rs` the driving loops, `memcg_lru.rs` the memcg LRU
//! of global reclaim, `workingset.rs` shadow tokens and refaults,
//! `debugfs.rs` the control files, `report.rs` what a run reports, and
//! `version.rs` the version as a type (hot loops test it once).

mod aging;
mod debugfs;
mod evict;
mod memcg_lru;
mod pid;
mod report;
mod shrink;
#[cfg(test)]
mod tests;
pub(crate) mod version;
mod walk;
mod workingset;

pub use debugfs::*;
pub(crate) use memcg_lru::*;
pub use report::*;
pub(crate) use walk::BloomFilter;

use serde::{Deserialize, Serialize};

use crate::config::MglruVersion;
use crate::mem::folio::{flags, Folio, FolioId, LruList, NIL};
use crate::mem::list::List;
use crate::mem::pagetable::{VmaId, VmaKind, PTE_DIRTY, PTE_FOLIO_MASK};
use crate::memcg::{Lruvec, MemcgId};
use crate::reclaim::vmscan::FolioReferences;
use crate::reclaim::{Reclaimer, ScanControl, DEF_PRIORITY};
use crate::sim::{Policy, Sim, SimError};
use version::{with_version, Ver};

/// `MIN_NR_GENS`: eviction needs at least this many generations.
pub(crate) const MIN_NR_GENS: u64 = 2;
/// `MAX_NR_GENS`: the generation window.
pub(crate) const MAX_NR_GENS: u64 = 4;
/// `MAX_NR_TIERS`.
pub(crate) const MAX_NR_TIERS: usize = 4;
/// `LRU_REFS_WIDTH`: bits of the refs counter in folio flags.
pub(crate) const LRU_REFS_WIDTH: u32 = 2;
/// `LRU_REFS_MASK` (shifted down).
pub(crate) const LRU_REFS_MASK: u16 = (1 << LRU_REFS_WIDTH) - 1;
/// `MIN_LRU_BATCH` (`BITS_PER_LONG`).
pub(crate) const MIN_LRU_BATCH: u64 = 64;
/// `MAX_LRU_BATCH` (`MIN_LRU_BATCH * 64`).
pub(crate) const MAX_LRU_BATCH: u64 = 4096;
/// `SWAPPINESS_ANON_ONLY` (v6.14 `memory.reclaim swappiness=max`).
pub(crate) const SWAPPINESS_ANON_ONLY: u32 = 201;
/// First [`FolioArena::lru`] tag of the MGLRU lists: `LRU_GEN_TAG + gen * 2 + type`.
pub(crate) const LRU_GEN_TAG: u8 = 8;
/// `/sys/kernel/mm/lru_gen/enabled` bit: the MGLRU core.
pub(crate) const LRU_GEN_CORE: u32 = 1;
/// `/sys/kernel/mm/lru_gen/enabled` bit: the aging's page-table walk.
pub(crate) const LRU_GEN_MM_WALK: u32 = 2;
/// `BLOOM_FILTER_SHIFT`: 2^15 bits per filter.
const BLOOM_FILTER_SHIFT: u32 = 15;
/// PTEs per PTE table (a PMD's reach).
const PTRS_PER_PTE: u32 = 512;
const ANON: usize = 0;
const FILE: usize = 1;

/// The list tag of generation `gen`, type `ty` (0 anon, 1 file).
#[inline]
pub(crate) fn lru_gen_tag(gen: usize, ty: usize) -> u8 {
    LRU_GEN_TAG + (gen * 2 + ty) as u8
}

/// Whether a [`FolioArena::lru`] tag names an MGLRU list.
#[inline]
pub(crate) fn is_lru_gen_tag(tag: u8) -> bool {
    (LRU_GEN_TAG..LRU_GEN_TAG + 8).contains(&tag)
}

/// `folio_lru_gen()`: the generation in the folio's flags, None if not on an MGLRU list.
#[inline]
pub(crate) fn folio_lru_gen(f: &Folio) -> Option<usize> {
    match f.gen_refs & 7 {
        0 => None,
        g => Some(g as usize - 1),
    }
}

#[inline]
fn set_folio_gen(f: &mut Folio, gen: Option<usize>) {
    f.gen_refs = (f.gen_refs & !7) | gen.map_or(0, |g| g as u8 + 1);
}

/// The raw refs counter (`LRU_REFS_MASK` bits).
#[inline]
pub(crate) fn folio_refs(f: &Folio) -> u16 {
    (f.gen_refs as u16 >> 3) & LRU_REFS_MASK
}

#[inline]
pub(crate) fn set_folio_refs(f: &mut Folio, refs: u16) {
    f.gen_refs =
        (f.gen_refs & !((LRU_REFS_MASK as u8) << 3)) | (((refs & LRU_REFS_MASK) as u8) << 3);
}

/// `lru_gen_from_seq()`.
#[inline]
pub(crate) fn lru_gen_from_seq(seq: u64) -> usize {
    (seq % MAX_NR_GENS) as usize
}

/// `order_base_2()`: ceil(log2 n), 0 for 0 and 1.
#[inline]
pub(crate) fn order_base_2(n: u64) -> usize {
    if n <= 1 {
        0
    } else {
        (64 - (n - 1).leading_zeros()) as usize
    }
}

/// `folio_lru_refs()`: accesses through file descriptors the folio's flags
/// record. v6.14: 0 without PG_referenced, else refs + 1 (= N for N in 1..=4).
/// v6.1 and v6.12: refs + PG_workingset (= N − 1 beyond PG_referenced, up to 4).
#[inline]
pub(crate) fn folio_lru_refs(v: MglruVersion, f: &Folio) -> u64 {
    match v {
        MglruVersion::V6_14 => {
            if f.test(flags::REFERENCED) {
                folio_refs(f) as u64 + 1
            } else {
                0
            }
        }
        MglruVersion::V6_1 | MglruVersion::V6_12 => {
            folio_refs(f) as u64 + f.test(flags::WORKINGSET) as u64
        }
    }
}

/// `lru_tier_from_refs()`. v6.14: tier 3 for PG_workingset, else
/// order_base_2(refs). v6.1 and v6.12: order_base_2(refs + 1).
#[inline]
pub(crate) fn lru_tier_from_refs(v: MglruVersion, refs: u64, workingset: bool) -> usize {
    match v {
        MglruVersion::V6_14 => {
            if workingset {
                MAX_NR_TIERS - 1
            } else {
                order_base_2(refs)
            }
        }
        MglruVersion::V6_1 | MglruVersion::V6_12 => order_base_2(refs + 1).min(MAX_NR_TIERS - 1),
    }
}

/// A folio's tier.
#[inline]
#[cfg_attr(not(test), allow(dead_code))] // only the lru_gen tests read tiers this way
pub(crate) fn folio_tier(v: MglruVersion, f: &Folio) -> usize {
    lru_tier_from_refs(v, folio_lru_refs(v, f), f.test(flags::WORKINGSET))
}

/// Per-lruvec MGLRU state (`struct lru_gen_folio` with the lruvec's
/// `lru_gen_mm_state`), for one zone and `NR_HIST_GENS` = 1.
#[derive(Clone, Debug)]
pub(crate) struct LruGenFolio {
    /// The youngest generation (shared by both types).
    pub max_seq: u64,
    /// The oldest generation of each type.
    pub min_seq: [u64; 2],
    /// Birth time of each generation slot, ns.
    pub timestamps: [u64; MAX_NR_GENS as usize],
    /// The lists: `[gen][type]`; head = most recently added.
    pub lists: [[List; 2]; MAX_NR_GENS as usize],
    /// Pages per generation field (`nr_pages[gen][type][zone]`).
    pub nr_pages: [[i64; 2]; MAX_NR_GENS as usize],
    /// `avg_refaulted[type][tier]`.
    pub avg_refaulted: [[u64; MAX_NR_TIERS]; 2],
    /// `avg_total[type][tier]`.
    pub avg_total: [[u64; MAX_NR_TIERS]; 2],
    /// `protected[hist][type][tier]`.
    pub protected: [[u64; MAX_NR_TIERS]; 2],
    /// `evicted[hist][type][tier]`.
    pub evicted: [[u64; MAX_NR_TIERS]; 2],
    /// `refaulted[hist][type][tier]`.
    pub refaulted: [[u64; MAX_NR_TIERS]; 2],
    /// `mm_state.seq`: the last completed page-table walk round.
    pub mm_seq: u64,
    /// `mm_state.filters[]`, indexed by seq % 2; None tests "present".
    pub filters: [Option<BloomFilter>; 2],
    /// Its place in the memcg LRU.
    pub memcg_lru: LruvecMemcgLru,
}

impl Default for LruGenFolio {
    /// `lru_gen_init_lruvec()`: max_seq 3, min_seq 0, mm_state.seq 2.
    fn default() -> Self {
        LruGenFolio {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0, 0],
            timestamps: [0; MAX_NR_GENS as usize],
            lists: Default::default(),
            nr_pages: [[0; 2]; MAX_NR_GENS as usize],
            avg_refaulted: [[0; MAX_NR_TIERS]; 2],
            avg_total: [[0; MAX_NR_TIERS]; 2],
            protected: [[0; MAX_NR_TIERS]; 2],
            evicted: [[0; MAX_NR_TIERS]; 2],
            refaulted: [[0; MAX_NR_TIERS]; 2],
            mm_seq: MIN_NR_GENS,
            filters: [None, None],
            memcg_lru: LruvecMemcgLru::default(),
        }
    }
}

impl LruGenFolio {
    /// `get_nr_gens()`.
    #[inline]
    pub(crate) fn nr_gens(&self, ty: usize) -> u64 {
        self.max_seq - self.min_seq[ty] + 1
    }
    /// `lru_gen_is_active()`: the two youngest generations count as "active".
    #[inline]
    pub(crate) fn is_active(&self, gen: usize) -> bool {
        gen == lru_gen_from_seq(self.max_seq) || gen == lru_gen_from_seq(self.max_seq - 1)
    }
    /// Pages of type `ty` in generation slot `gen`.
    #[inline]
    pub(crate) fn pages(&self, gen: usize, ty: usize) -> u64 {
        self.nr_pages[gen][ty].max(0) as u64
    }
    /// Whether no generation holds a page (the classic policies' case):
    /// the largest count is at most 0, without branches (a loop over the
    /// fixed-size array, which unrolls; an iterator over the flattened
    /// slice did not).
    #[inline(always)]
    fn is_empty(&self) -> bool {
        let mut max = 0;
        for g in &self.nr_pages {
            max = max.max(g[0]).max(g[1]);
        }
        max <= 0
    }
    /// The compatibility view of /proc/vmstat and memory.stat: pages of an
    /// evictable classic list (youngest two generations "active").
    /// Nothing to add up when no generation holds a page, as under the
    /// classic policies, whose `Lruvec::size` reads this view for every
    /// list (as [`Self::compat_sizes`] does).
    #[inline]
    pub(crate) fn compat_size(&self, lru: LruList) -> u64 {
        if lru == LruList::Unevictable || self.is_empty() {
            return 0;
        }
        let ty = lru.is_file() as usize;
        (0..MAX_NR_GENS as usize)
            .filter(|&g| self.is_active(g) == lru.is_active())
            .map(|g| self.pages(g, ty))
            .sum()
    }
    /// [`Self::compat_size`] of every list at once, by [`LruList`] index:
    /// one pass over the generations instead of one per list.
    /// Nothing to add up when no generation holds a page, as under the
    /// classic policies, which read this view in every hierarchical list
    /// size (`Sim::subtree_lruvec`): eight loads and no generation
    /// arithmetic. The test is inlined into every caller (one per
    /// refault under the classic policies: `workingset_refault_classic`'s
    /// `lruvec_page_state`); the sum is out of line.
    #[inline(always)]
    pub(crate) fn compat_sizes(&self) -> [u64; 5] {
        if self.is_empty() {
            return [0; 5];
        }
        self.compat_sizes_sum()
    }
    /// [`Self::compat_sizes`] when some generation holds a page (MGLRU).
    #[inline(never)]
    fn compat_sizes_sum(&self) -> [u64; 5] {
        let mut out = [0; 5];
        for gen in 0..MAX_NR_GENS as usize {
            let active = self.is_active(gen) as usize;
            out[LruList::InactiveAnon as usize + active] += self.pages(gen, ANON);
            out[LruList::InactiveFile as usize + active] += self.pages(gen, FILE);
        }
        out
    }
    /// `evictable_min_seq()` (v6.14): the oldest generation eviction may take
    /// from under `swappiness`. v6.1's `min_seq[!can_swap]` is the same
    /// because v6.1 keeps anon's min_seq ≤ file's.
    pub(crate) fn evictable_min_seq(&self, swappiness: u32) -> u64 {
        match swappiness {
            0 => self.min_seq[FILE],
            SWAPPINESS_ANON_ONLY => self.min_seq[ANON],
            _ => self.min_seq[ANON].min(self.min_seq[FILE]),
        }
    }
    /// Evictable pages of the types `swappiness` allows, over all generations.
    pub(crate) fn evictable_pages(&self, swappiness: u32) -> u64 {
        let types: &[usize] = match swappiness {
            0 => &[FILE],
            SWAPPINESS_ANON_ONLY => &[ANON],
            _ => &[ANON, FILE],
        };
        let mut n = 0;
        for &ty in types {
            for seq in self.min_seq[ty]..=self.max_seq {
                n += self.pages(lru_gen_from_seq(seq), ty);
            }
        }
        n
    }
    /// Every MGLRU list, for walks that visit all folios.
    pub(crate) fn all_lists(&self) -> impl Iterator<Item = (usize, usize, &List)> {
        self.lists
            .iter()
            .enumerate()
            .flat_map(|(g, l)| l.iter().enumerate().map(move |(t, l)| (g, t, l)))
    }
}

/// Machine-wide MGLRU state and settings.
#[derive(Clone, Debug, Default)]
pub(crate) struct LruGenState {
    /// Version.
    pub version: MglruVersion,
    /// `/sys/kernel/mm/lru_gen/enabled` bits.
    pub enabled: u32,
    /// `lru_gen_min_ttl` in ns.
    pub min_ttl_ns: u64,
    /// `machine.policy.mglru_refault_activate = "recent"` (v6.14 model):
    /// every recent refault counts `WORKINGSET_ACTIVATE_*`, as kernels
    /// before 6.14 count it; else only refaults in a page fault.
    pub activate_recent: bool,
    /// `machine.policy.mglru_fix_underprotected` (v6.1 model): the 6.1.69+
    /// stable rules of "mm/mglru: fix underprotected page cache" in
    /// `sort_folio()`, `lru_gen_add_folio()` and `lru_gen_refault()`.
    pub fix_underprotected: bool,
    /// `machine.policy.mglru_writeback_in_reclaim`: writes due by the
    /// reclaimer's clock complete while `evict_folios` runs.
    pub writeback_in_reclaim: bool,
    /// `machine.policy.mglru_retry_written_back` (v6.1 model): 6.1's
    /// retry of folios written back while isolated, and its putback.
    pub retry_written_back: bool,
    /// `machine.policy.mglru_look_around_activate` (v6.1 model): look-around
    /// activates fewer than `PAGEVEC_SIZE` promoted neighbours through
    /// `folio_activate()`, as 6.1 does.
    pub look_around_activate: bool,
    /// `machine.policy.mglru_writeback_plugged`: a batch's writes stay in
    /// the block plug until `evict_folios()` has put the batch back.
    pub writeback_plugged: bool,
    /// `machine.policy.mglru_reset_tier_bits` (v6.12 model): 6.12.114+'s
    /// "mm/mglru: reset page lru tier bits when activating".
    pub reset_tier_bits: bool,
    /// `machine.policy.mglru_common_reactivation` (v6.12 model): 6.12.114+'s
    /// "mm/mglru: use the common routine for dirty/writeback reactivation".
    pub common_reactivation: bool,
    /// `pgdat->mm_walk.can_swap` (v6.1): whether kswapd's page-table walker
    /// last walked with swap allowed (`try_to_inc_max_seq()` sets it; zero
    /// at boot), which v6.1's look-around of kswapd passes to
    /// `get_pfn_folio()`.
    pub kswapd_walk_can_swap: bool,
    /// `current->in_lru_fault`: inside a page fault (set by the fault path).
    pub in_fault: bool,
    /// v6.1 `sc->memcgs_need_aging` of kswapd's scan control.
    pub memcgs_need_aging: bool,
    /// The node's memcg LRU.
    pub memcg_lru: MemcgLru,
    /// Counters.
    pub stats: LruGenStats,
    /// Time series.
    pub series: Vec<LruGenSample>,
    /// Time of the last sample, ns.
    pub last_sample: Option<u64>,
    /// Scheduled writes, latest first: (time, what).
    pub pending: Vec<(u64, LruGenFileWrite)>,
    /// The debugfs writes run so far.
    pub log: Vec<LruGenWriteLog>,
    /// Scratch list of `evict_folios`' retried folios (reused).
    pub retry: Vec<FolioId>,
}

impl LruGenState {
    /// The state of a new machine with the MGLRU settings of `p`.
    pub(crate) fn new(p: &crate::config::PolicyConfig) -> Self {
        LruGenState {
            version: p.mglru_version,
            enabled: p.lru_gen_enabled,
            min_ttl_ns: p.min_ttl_ms * 1_000_000,
            activate_recent: p.mglru_refault_activate
                == crate::config::MglruRefaultActivate::Recent,
            fix_underprotected: p.mglru_fix_underprotected,
            writeback_in_reclaim: p.mglru_writeback_in_reclaim,
            retry_written_back: p.mglru_retry_written_back,
            look_around_activate: p.mglru_look_around_activate,
            writeback_plugged: p.mglru_writeback_plugged,
            reset_tier_bits: p.mglru_reset_tier_bits,
            common_reactivation: p.mglru_common_reactivation,
            ..Default::default()
        }
    }
}

impl Lruvec {
    /// Every list of the lruvec, classic and MGLRU, with its tag.
    pub(crate) fn all_lists(&self) -> impl Iterator<Item = (u8, &List)> {
        self.lists
            .iter()
            .enumerate()
            .map(|(i, l)| (i as u8, l))
            .chain(
                self.lrugen
                    .all_lists()
                    .map(|(g, t, l)| (lru_gen_tag(g, t), l)),
            )
    }
}

/// [`Sim::lru_gen_folio_seq`] of folio `fo` in the lruvec state `lg`, for
/// version `v` (the callers read each once).
#[inline(always)]
fn folio_seq(
    v: MglruVersion,
    fix_underprotected: bool,
    lg: &LruGenFolio,
    fo: &Folio,
    reclaiming: bool,
) -> u64 {
    let ty = fo.is_file() as usize;
    let ws = fo.test(flags::WORKINGSET) as u64;
    let cold_but_pending = (!fo.is_file() && !fo.test(flags::SWAPCACHE))
        || (fo.test(flags::RECLAIM) && fo.test(flags::DIRTY | flags::WRITEBACK));
    match v {
        MglruVersion::V6_14 => {
            let g = if fo.test(flags::ACTIVE) {
                MIN_NR_GENS - ws
            } else if reclaiming {
                MAX_NR_GENS
            } else if cold_but_pending {
                MIN_NR_GENS
            } else {
                MAX_NR_GENS - ws
            };
            (lg.max_seq + 1).saturating_sub(g).max(lg.min_seq[ty])
        }
        _ if v == MglruVersion::V6_12 || fix_underprotected => {
            // 6.1.69+ and 6.12 ("mm/mglru: fix underprotected page cache"): the
            // pending go to the second youngest generation, the clean and
            // cold to the second oldest unless rotated or at MIN_NR_GENS.
            if fo.test(flags::ACTIVE) {
                lg.max_seq
            } else if cold_but_pending {
                lg.max_seq - 1
            } else if reclaiming || lg.min_seq[ty] + MIN_NR_GENS >= lg.max_seq {
                lg.min_seq[ty]
            } else {
                lg.min_seq[ty] + 1
            }
        }
        MglruVersion::V6_1 | MglruVersion::V6_12 => {
            if fo.test(flags::ACTIVE) {
                lg.max_seq
            } else if cold_but_pending {
                lg.min_seq[ty] + 1
            } else {
                lg.min_seq[ty]
            }
        }
    }
}

impl Sim {
    /// The MGLRU version in force (v6.14 if the policy is not MGLRU).
    #[inline]
    pub(crate) fn lru_gen_version(&self) -> MglruVersion {
        match self.policy {
            Policy::Mglru(v) => v,
            _ => MglruVersion::V6_14,
        }
    }

    #[inline]
    fn lrugen(&self, m: MemcgId) -> &LruGenFolio {
        &self.memcgs[m as usize].lruvec.lrugen
    }

    #[inline]
    fn lrugen_mut(&mut self, m: MemcgId) -> &mut LruGenFolio {
        &mut self.memcgs[m as usize].lruvec.lrugen
    }

    /// The MGLRU state of group `m` (for tests and reports).
    #[cfg_attr(not(test), allow(dead_code))] // only the lru_gen tests read it
    pub(crate) fn lru_gen_folio(&self, m: MemcgId) -> &LruGenFolio {
        self.lrugen(m)
    }

    /// `lru_gen_folio_seq()` (v6.14) / the seq choice of v6.1
    /// `lru_gen_add_folio()`: the generation a folio enters.
    ///
    /// v6.14: active → max_seq−1 (max_seq with PG_workingset); reclaiming
    /// (added to the tail) → the oldest; anon not in the swap cache, or
    /// PG_reclaim and dirty/writeback → max_seq−1; otherwise the oldest
    /// (one younger with PG_workingset); never below min_seq.
    /// v6.1: active → max_seq; anon not in swap cache or PG_reclaim with
    /// dirty/writeback → min_seq + 1; otherwise min_seq.
    /// v6.12 (and v6.1 with `mglru_fix_underprotected`): active → max_seq;
    /// those pending → max_seq − 1; reclaiming, or with only MIN_NR_GENS
    /// generations → min_seq; otherwise min_seq + 1.
    ///
    /// Its logic is `folio_seq`, inlined into `lru_gen_add_folio` (every
    /// folio added, which has the folio and lruvec at hand) and, through
    /// this method, into the putback of `evict_folios`.
    #[inline(always)]
    pub(crate) fn lru_gen_folio_seq(&self, m: MemcgId, f: FolioId, reclaiming: bool) -> u64 {
        folio_seq(
            self.lru_gen_version(),
            self.lru_gen.fix_underprotected,
            self.lrugen(m),
            &self.folios[f],
            reclaiming,
        )
    }

    /// `lru_gen_add_folio()`: puts folio `f` on the list of the generation
    /// [`Sim::lru_gen_folio_seq`] picks, at the head (tail if `reclaiming`),
    /// clearing PG_active and setting PG_lru (v6.12 with
    /// `mglru_reset_tier_bits`, 6.12.114+: an active folio's refs and
    /// PG_referenced too). Unevictable folios go to the classic
    /// unevictable list.
    pub(crate) fn lru_gen_add_folio(&mut self, f: FolioId, reclaiming: bool) {
        self.lru_gen_add_folio_inline(f, reclaiming, false);
    }

    /// [`Sim::lru_gen_add_folio`] inlined into `folio_add_lru` (every new
    /// folio), which passes `fault`: an evictable folio gets PG_active
    /// first. The folio and its lruvec are each looked up once.
    #[inline(always)]
    pub(crate) fn lru_gen_add_folio_inline(&mut self, f: FolioId, reclaiming: bool, fault: bool) {
        with_version!(self.lru_gen_version(), X => {
            self.lru_gen_add_folio_v::<X>(f, reclaiming, fault)
        })
    }

    /// [`Sim::lru_gen_add_folio_inline`] for version `X` (its clauses
    /// resolved at compile time, [`version`]).
    #[inline(always)]
    fn lru_gen_add_folio_v<X: Ver>(&mut self, f: FolioId, reclaiming: bool, fault: bool) {
        let v = X::V;
        let fix_underprotected = self.lru_gen.fix_underprotected;
        let reset_tier_bits = self.lru_gen.reset_tier_bits;
        let fo_memcg = self.folios.memcg(f);
        let fo = &mut self.folios[f];
        let m = fo_memcg as usize;
        fo.set(flags::LRU);
        if fo.test(flags::UNEVICTABLE) {
            let l = LruList::Unevictable as usize;
            self.memcgs[m].lruvec.lists[l].push_head(&mut self.folios, f, l as u8);
            return;
        }
        if fault {
            fo.set(flags::ACTIVE);
        }
        let lg = &mut self.memcgs[m].lruvec.lrugen;
        let seq = folio_seq(v, fix_underprotected, lg, fo, reclaiming);
        let gen = lru_gen_from_seq(seq);
        let ty = fo.is_file() as usize;
        let nr = fo.nr_pages() as i64;
        if v == MglruVersion::V6_12 && reset_tier_bits && fo.test(flags::ACTIVE) {
            // 6.12.114+ ("reset page lru tier bits when activating"): `mask |=
            // LRU_REFS_MASK | BIT(PG_referenced) | BIT(PG_active)` (PG_workingset
            // kept). 6.12.107 clears only LRU_GEN_MASK and PG_active.
            set_folio_refs(fo, 0);
            fo.clear(flags::REFERENCED);
        }
        fo.clear(flags::ACTIVE);
        set_folio_gen(fo, Some(gen));
        lg.nr_pages[gen][ty] += nr;
        let list = &mut lg.lists[gen][ty];
        if reclaiming {
            list.push_tail(&mut self.folios, f, lru_gen_tag(gen, ty));
        } else {
            list.push_head(&mut self.folios, f, lru_gen_tag(gen, ty));
        }
    }

    /// `lru_gen_del_folio()`: takes folio `f` off its MGLRU list (or the
    /// unevictable list). Unless `reclaiming`, a folio of one of the two
    /// youngest generations gets PG_active so that it is re-added young.
    /// (`isolate_folio` inlines the case of `scan_folios`.)
    pub(crate) fn lru_gen_del_folio(&mut self, f: FolioId, reclaiming: bool) {
        let m = self.folios.memcg(f) as usize;
        let tag = self.folios.lru(f);
        if !is_lru_gen_tag(tag) {
            self.memcgs[m].lruvec.lists[tag as usize].unlink(&mut self.folios, f);
            return;
        }
        let (lg_gen, lg_ty) = (
            ((tag - LRU_GEN_TAG) / 2) as usize,
            ((tag - LRU_GEN_TAG) % 2) as usize,
        );
        let gen = folio_lru_gen(&self.folios[f]).unwrap_or(lg_gen);
        let nr = self.folio_nr_pages(f) as i64;
        let lg = &mut self.memcgs[m].lruvec.lrugen;
        lg.lists[lg_gen][lg_ty].unlink(&mut self.folios, f);
        lg.nr_pages[gen][lg_ty] -= nr;
        let active = !reclaiming && lg.is_active(gen);
        let fo = &mut self.folios[f];
        set_folio_gen(fo, None);
        if active {
            fo.set(flags::ACTIVE);
        }
    }

    /// `folio_add_lru()` under MGLRU: a folio added from a page fault
    /// (`lru_gen_in_fault()`) is marked PG_active first, so it enters a
    /// young generation; buffered-IO page cache enters cold.
    pub(crate) fn lru_gen_folio_add_lru(&mut self, f: FolioId) {
        let fault = self.lru_gen.in_fault;
        self.lru_gen_add_folio_inline(f, false, fault);
    }

    /// `folio_mark_accessed()` under MGLRU: counts an access through a file
    /// descriptor in the folio's tier bits, never moving it.
    ///
    /// v6.14 `lru_gen_inc_refs()`: 1st access sets PG_referenced (refs 0),
    /// 2nd–4th increment refs, the 5th and later set PG_workingset.
    /// v6.1 and v6.12 `folio_inc_refs()`: 1st sets PG_referenced, 2nd
    /// PG_workingset, then refs += 1 up to its mask.
    pub(crate) fn lru_gen_inc_refs(&mut self, f: FolioId) {
        let v = self.lru_gen_version();
        let fo = &mut self.folios[f];
        if fo.test(flags::UNEVICTABLE) {
            return;
        }
        if !fo.test(flags::REFERENCED) {
            if v == MglruVersion::V6_14 {
                set_folio_refs(fo, 0);
            }
            fo.set(flags::REFERENCED);
            return;
        }
        match v {
            MglruVersion::V6_14 => {
                let r = folio_refs(fo);
                if r == LRU_REFS_MASK {
                    fo.set(flags::WORKINGSET);
                } else {
                    set_folio_refs(fo, r + 1);
                }
            }
            MglruVersion::V6_1 | MglruVersion::V6_12 => {
                if !fo.test(flags::WORKINGSET) {
                    fo.set(flags::WORKINGSET);
                    return;
                }
                let r = folio_refs(fo);
                if r != LRU_REFS_MASK {
                    set_folio_refs(fo, r + 1);
                }
            }
        }
    }

    /// `folio_update_gen()`: promotion by an accessed bit found by a walker:
    /// rewrites the folio's generation to `gen` in place (no list move) and
    /// moves its page count. Returns the old generation if it moved.
    ///
    /// v6.14: a folio with neither PG_referenced nor PG_workingset only gets
    /// PG_referenced (second chance: two sightings before promotion); a
    /// promoted folio loses refs/PG_referenced and gains PG_workingset.
    /// v6.1 and v6.12: promotes at the first sighting, clearing refs,
    /// PG_referenced and PG_workingset.
    pub(crate) fn folio_update_gen(&mut self, f: FolioId, gen: usize) -> Option<usize> {
        let v = self.lru_gen_version();
        let m = self.folios.memcg(f) as usize;
        let fo = &mut self.folios[f];
        let old = folio_lru_gen(fo)?;
        if v == MglruVersion::V6_14 && !fo.test(flags::REFERENCED | flags::WORKINGSET) {
            set_folio_refs(fo, 0);
            fo.set(flags::REFERENCED);
            return None;
        }
        set_folio_gen(fo, Some(gen));
        set_folio_refs(fo, 0);
        fo.clear(flags::REFERENCED);
        match v {
            MglruVersion::V6_14 => fo.set(flags::WORKINGSET),
            MglruVersion::V6_1 | MglruVersion::V6_12 => fo.clear(flags::WORKINGSET),
        }
        if old == gen {
            return None;
        }
        let ty = fo.is_file() as usize;
        let nr = fo.nr_pages() as i64;
        let lg = &mut self.memcgs[m].lruvec.lrugen;
        lg.nr_pages[old][ty] -= nr;
        lg.nr_pages[gen][ty] += nr;
        self.lru_gen.stats.promoted += 1;
        Some(old)
    }

    /// `lru_gen_set_refs()` (v6.14, the rmap path): first sighting sets
    /// PG_referenced and returns false; later ones clear refs and
    /// PG_referenced, set PG_workingset and return true.
    pub(crate) fn lru_gen_set_refs(&mut self, f: FolioId) -> bool {
        let fo = &mut self.folios[f];
        if !fo.test(flags::REFERENCED | flags::WORKINGSET) {
            set_folio_refs(fo, 0);
            fo.set(flags::REFERENCED);
            return false;
        }
        set_folio_refs(fo, 0);
        fo.clear(flags::REFERENCED);
        fo.set(flags::WORKINGSET);
        true
    }
}

impl Sim {
    /// Test helper: `isolate_folios`.
    #[cfg(test)]
    pub(crate) fn isolate_folios_for_test(
        &mut self,
        m: MemcgId,
        swappiness: u32,
        sc: &mut ScanControl,
    ) -> (usize, u64) {
        self.isolate_folios(m, swappiness, sc)
    }

    /// Test helper: puts folio `f` (on no list) at the head of generation `seq`.
    #[cfg(test)]
    pub(crate) fn lru_gen_add_folio_at_for_test(&mut self, f: FolioId, seq: u64) {
        let m = self.folios.memcg(f) as usize;
        let gen = lru_gen_from_seq(seq);
        let fo = &mut self.folios[f];
        let ty = fo.is_file() as usize;
        let nr = fo.nr_pages() as i64;
        fo.clear(flags::ACTIVE);
        fo.set(flags::LRU);
        set_folio_gen(fo, Some(gen));
        let lg = &mut self.memcgs[m].lruvec.lrugen;
        lg.nr_pages[gen][ty] += nr;
        lg.lists[gen][ty].push_head(&mut self.folios, f, lru_gen_tag(gen, ty));
    }

    /// MGLRU invariants of group `m`: the window holds 2..=4 generations
    /// per type, every page count matches the folios whose generation field
    /// names it, and slots outside the window are empty.
    #[allow(clippy::needless_range_loop)] // gen indexes three arrays
    pub(crate) fn check_lru_gen_invariants(&self, m: usize) -> Result<(), String> {
        let lg = &self.memcgs[m].lruvec.lrugen;
        let mut count = [[0i64; 2]; MAX_NR_GENS as usize];
        for (g, ty, l) in lg.all_lists() {
            let mut c = l.head;
            while c != NIL {
                let fo = &self.folios[c];
                let Some(gen) = folio_lru_gen(fo) else {
                    return Err(format!(
                        "folio {c} on list gen {g} type {ty} has no generation"
                    ));
                };
                count[gen][ty] += fo.nr_pages() as i64;
                c = self.folios.links(c)[1];
            }
        }
        for ty in [ANON, FILE] {
            let n = lg.nr_gens(ty);
            if !(MIN_NR_GENS..=MAX_NR_GENS).contains(&n) {
                return Err(format!(
                    "type {ty}: {n} generations (max_seq {}, min_seq {})",
                    lg.max_seq, lg.min_seq[ty]
                ));
            }
            for gen in 0..MAX_NR_GENS as usize {
                if lg.nr_pages[gen][ty] != count[gen][ty] {
                    return Err(format!(
                        "gen {gen} type {ty}: nr_pages {} but {} folios",
                        lg.nr_pages[gen][ty], count[gen][ty]
                    ));
                }
                let in_window = (lg.min_seq[ty]..=lg.max_seq).any(|s| lru_gen_from_seq(s) == gen);
                if !in_window && (count[gen][ty] != 0 || !lg.lists[gen][ty].is_empty()) {
                    return Err(format!(
                        "gen {gen} type {ty} outside the window holds folios"
                    ));
                }
            }
        }
        Ok(())
    }
}
