//! The multi-gen LRU (`CONFIG_LRU_GEN`, the `lru_gen` parts of mm/vmscan.c,
//! mm/workingset.c, include/linux/mm_inline.h and mm/swap.c), in two
//! versions selected by [`MglruVersion`]: v6.1 (the first release) and
//! v6.14 (current). Behaviour follows spec part D (`lru.md` §6); where the
//! versions differ each function says how.
//!
//! State. Each lruvec has a [`LruGenFolio`] (`struct lru_gen_folio`):
//! `max_seq`, `min_seq[anon, file]`, per-generation birth times, one list per
//! generation × type (a single zone), page counts per generation (which move
//! with a folio's generation field, not with its list: promotion is lazy),
//! and the PID controller's per-tier counters. A folio's generation and
//! `refs` live in [`Folio::gen_refs`]; the list it is on is its
//! [`Folio::lru`] tag `LRU_GEN_TAG + gen·2 + type`.
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

use serde::{Deserialize, Serialize};

use crate::config::MglruVersion;
use crate::mem::folio::{flags, Folio, FolioId, LruList, NIL};
use crate::mem::list::List;
use crate::mem::pagetable::{VmaId, VmaKind, PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG};
use crate::memcg::{Lruvec, MemcgId};
use crate::reclaim::vmscan::FolioReferences;
use crate::reclaim::{Reclaimer, ScanControl, DEF_PRIORITY};
use crate::sim::{Policy, Sim, SimError};

/// `MIN_NR_GENS`: eviction needs at least this many generations.
pub const MIN_NR_GENS: u64 = 2;
/// `MAX_NR_GENS`: the generation window.
pub const MAX_NR_GENS: u64 = 4;
/// `MAX_NR_TIERS`.
pub const MAX_NR_TIERS: usize = 4;
/// `LRU_REFS_WIDTH`: bits of the refs counter in folio flags.
pub const LRU_REFS_WIDTH: u32 = 2;
/// `LRU_REFS_MASK` (shifted down).
pub const LRU_REFS_MASK: u16 = (1 << LRU_REFS_WIDTH) - 1;
/// `MIN_LRU_BATCH` (`BITS_PER_LONG`).
pub const MIN_LRU_BATCH: u64 = 64;
/// `MAX_LRU_BATCH` (`MIN_LRU_BATCH * 64`).
pub const MAX_LRU_BATCH: u64 = 4096;
/// `SWAPPINESS_ANON_ONLY` (v6.14 `memory.reclaim swappiness=max`).
pub const SWAPPINESS_ANON_ONLY: u32 = 201;
/// First [`Folio::lru`] tag of the MGLRU lists: `LRU_GEN_TAG + gen * 2 + type`.
pub const LRU_GEN_TAG: u8 = 8;
/// `/sys/kernel/mm/lru_gen/enabled` bit: the MGLRU core.
pub const LRU_GEN_CORE: u32 = 1;
/// `/sys/kernel/mm/lru_gen/enabled` bit: the aging's page-table walk.
pub const LRU_GEN_MM_WALK: u32 = 2;
/// `BLOOM_FILTER_SHIFT`: 2^15 bits per filter.
const BLOOM_FILTER_SHIFT: u32 = 15;
/// PTEs per PTE table (a PMD's reach).
const PTRS_PER_PTE: u32 = 512;
const ANON: usize = 0;
const FILE: usize = 1;

/// The list tag of generation `gen`, type `ty` (0 anon, 1 file).
#[inline]
pub fn lru_gen_tag(gen: usize, ty: usize) -> u8 {
    LRU_GEN_TAG + (gen * 2 + ty) as u8
}

/// Whether a [`Folio::lru`] tag names an MGLRU list.
#[inline]
pub fn is_lru_gen_tag(tag: u8) -> bool {
    (LRU_GEN_TAG..LRU_GEN_TAG + 8).contains(&tag)
}

/// `folio_lru_gen()`: the generation in the folio's flags, None if not on an MGLRU list.
#[inline]
pub fn folio_lru_gen(f: &Folio) -> Option<usize> {
    match f.gen_refs & 7 {
        0 => None,
        g => Some(g as usize - 1),
    }
}

#[inline]
fn set_folio_gen(f: &mut Folio, gen: Option<usize>) {
    f.gen_refs = (f.gen_refs & !7) | gen.map_or(0, |g| g as u16 + 1);
}

/// The raw refs counter (`LRU_REFS_MASK` bits).
#[inline]
pub fn folio_refs(f: &Folio) -> u16 {
    (f.gen_refs >> 3) & LRU_REFS_MASK
}

#[inline]
fn set_folio_refs(f: &mut Folio, refs: u16) {
    f.gen_refs = (f.gen_refs & !(LRU_REFS_MASK << 3)) | ((refs & LRU_REFS_MASK) << 3);
}

/// `lru_gen_from_seq()`.
#[inline]
pub fn lru_gen_from_seq(seq: u64) -> usize {
    (seq % MAX_NR_GENS) as usize
}

/// `order_base_2()`: ceil(log2 n), 0 for 0 and 1.
#[inline]
pub fn order_base_2(n: u64) -> usize {
    if n <= 1 {
        0
    } else {
        (64 - (n - 1).leading_zeros()) as usize
    }
}

/// `folio_lru_refs()`: accesses through file descriptors the folio's flags
/// record. v6.14: 0 without PG_referenced, else refs + 1 (= N for N in 1..=4).
/// v6.1: refs + PG_workingset (= N − 1 beyond PG_referenced, up to 4).
#[inline]
pub fn folio_lru_refs(v: MglruVersion, f: &Folio) -> u64 {
    match v {
        MglruVersion::V6_14 => {
            if f.test(flags::REFERENCED) {
                folio_refs(f) as u64 + 1
            } else {
                0
            }
        }
        MglruVersion::V6_1 => folio_refs(f) as u64 + f.test(flags::WORKINGSET) as u64,
    }
}

/// `lru_tier_from_refs()`. v6.14: tier 3 for PG_workingset, else
/// order_base_2(refs). v6.1: order_base_2(refs + 1).
#[inline]
pub fn lru_tier_from_refs(v: MglruVersion, refs: u64, workingset: bool) -> usize {
    match v {
        MglruVersion::V6_14 => {
            if workingset {
                MAX_NR_TIERS - 1
            } else {
                order_base_2(refs)
            }
        }
        MglruVersion::V6_1 => order_base_2(refs + 1).min(MAX_NR_TIERS - 1),
    }
}

/// A folio's tier.
#[inline]
pub fn folio_tier(v: MglruVersion, f: &Folio) -> usize {
    lru_tier_from_refs(v, folio_lru_refs(v, f), f.test(flags::WORKINGSET))
}

/// A Bloom filter of hot PTE tables (`bloom_filters[]`): 2^15 bits, two
/// 15-bit keys from a 30-bit hash of the table's identity.
#[derive(Clone, Debug)]
pub struct BloomFilter(Box<[u64]>);

impl BloomFilter {
    fn new() -> Self {
        BloomFilter(vec![0u64; 1 << (BLOOM_FILTER_SHIFT - 6)].into_boxed_slice())
    }
    /// `get_item_key()`: the PTE table `table` of VMA `vma` (the kernel
    /// hashes the PMD entry's address).
    fn keys(vma: VmaId, table: u32) -> [usize; 2] {
        let h = ((vma as u64) << 32 | table as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 34;
        let mask = (1u64 << BLOOM_FILTER_SHIFT) - 1;
        [
            (h & mask) as usize,
            ((h >> BLOOM_FILTER_SHIFT) & mask) as usize,
        ]
    }
    fn test(&self, vma: VmaId, table: u32) -> bool {
        Self::keys(vma, table)
            .iter()
            .all(|&k| self.0[k / 64] & (1 << (k % 64)) != 0)
    }
    fn insert(&mut self, vma: VmaId, table: u32) {
        for k in Self::keys(vma, table) {
            self.0[k / 64] |= 1 << (k % 64);
        }
    }
}

/// Per-lruvec MGLRU state (`struct lru_gen_folio` with the lruvec's
/// `lru_gen_mm_state`), for one zone and `NR_HIST_GENS` = 1.
#[derive(Clone, Debug)]
pub struct LruGenFolio {
    /// The youngest generation (shared by both types).
    pub max_seq: u64,
    /// The oldest generation of each type.
    pub min_seq: [u64; 2],
    /// Birth time of each generation slot, ns.
    pub timestamps: [u64; MAX_NR_GENS as usize],
    /// The lists: [gen][type]; head = most recently added.
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
    pub fn nr_gens(&self, ty: usize) -> u64 {
        self.max_seq - self.min_seq[ty] + 1
    }
    /// `lru_gen_is_active()`: the two youngest generations count as "active".
    #[inline]
    pub fn is_active(&self, gen: usize) -> bool {
        gen == lru_gen_from_seq(self.max_seq) || gen == lru_gen_from_seq(self.max_seq - 1)
    }
    /// Pages of type `ty` in generation slot `gen`.
    #[inline]
    pub fn pages(&self, gen: usize, ty: usize) -> u64 {
        self.nr_pages[gen][ty].max(0) as u64
    }
    /// The compatibility view of /proc/vmstat and memory.stat: pages of an
    /// evictable classic list (youngest two generations "active").
    pub fn compat_size(&self, lru: LruList) -> u64 {
        if lru == LruList::Unevictable {
            return 0;
        }
        let ty = lru.is_file() as usize;
        (0..MAX_NR_GENS as usize)
            .filter(|&g| self.is_active(g) == lru.is_active())
            .map(|g| self.pages(g, ty))
            .sum()
    }
    /// `evictable_min_seq()` (v6.14): the oldest generation eviction may take
    /// from under `swappiness`. v6.1's `min_seq[!can_swap]` is the same
    /// because v6.1 keeps anon's min_seq ≤ file's.
    pub fn evictable_min_seq(&self, swappiness: u32) -> u64 {
        match swappiness {
            0 => self.min_seq[FILE],
            SWAPPINESS_ANON_ONLY => self.min_seq[ANON],
            _ => self.min_seq[ANON].min(self.min_seq[FILE]),
        }
    }
    /// Evictable pages of the types `swappiness` allows, over all generations.
    pub fn evictable_pages(&self, swappiness: u32) -> u64 {
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
    pub fn all_lists(&self) -> impl Iterator<Item = (usize, usize, &List)> {
        self.lists
            .iter()
            .enumerate()
            .flat_map(|(g, l)| l.iter().enumerate().map(move |(t, l)| (g, t, l)))
    }
}

/// `struct ctrl_pos`: one side of the PID controller's comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtrlPos {
    /// Refaults (average plus the current generation's).
    pub refaulted: u64,
    /// Evicted plus protected (average plus current).
    pub total: u64,
    /// The gain (weight).
    pub gain: u64,
}

/// `positive_ctrl_err()`: true when the process variable `pv` is not worse
/// than the set point `sp` (its refault rate over its gain is not above
/// the set point's), or has too few refaults to act on.
pub fn positive_ctrl_err(sp: CtrlPos, pv: CtrlPos) -> bool {
    pv.refaulted < MIN_LRU_BATCH
        || (pv.refaulted as u128) * (sp.total as u128 + MIN_LRU_BATCH as u128) * sp.gain as u128
            <= (sp.refaulted as u128 + 1) * pv.total as u128 * pv.gain as u128
}

/// Walk statistics (the `lru_gen_full` walker line) and other counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LruGenStats {
    /// `inc_max_seq` calls that made a generation.
    pub aging: u64,
    /// Page-table walk rounds (`walk_mm` over a group's mms).
    pub walks: u64,
    /// PTEs examined by the walk (`MM_LEAF_TOTAL`).
    pub leaf_total: u64,
    /// Young PTEs found by the walk (`MM_LEAF_YOUNG`).
    pub leaf_young: u64,
    /// PTE tables skipped because the Bloom filter did not hold them.
    pub tables_skipped: u64,
    /// PTE tables added to a Bloom filter (`MM_NONLEAF_ADDED`).
    pub tables_added: u64,
    /// `lru_gen_look_around` calls (young target PTEs).
    pub look_around: u64,
    /// Young neighbour PTEs look-around found.
    pub look_around_young: u64,
    /// Folios promoted in place (`folio_update_gen` moved the generation).
    pub promoted: u64,
    /// Folios moved to min_seq + 1 by tier protection (sort_folio).
    pub tier_protected: u64,
    /// OOM kills invoked by `lru_gen_age_node` for `min_ttl_ms`.
    pub min_ttl_oom: u64,
}

/// One generation in the lru_gen debugfs view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LruGenGen {
    /// Sequence number.
    pub seq: u64,
    /// Birth time (`timestamps[]`), ms of simulated time.
    pub birth_ms: u64,
    /// Age: now − birth, ms.
    pub age_ms: u64,
    /// Anonymous pages (0 if below the type's min_seq).
    pub anon: u64,
    /// File pages.
    pub file: u64,
}

/// Per-tier PID controller counters of one type (`lru_gen_full`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LruGenTiers {
    /// `avg_refaulted` per tier (R).
    pub avg_refaulted: [u64; MAX_NR_TIERS],
    /// `avg_total` per tier (T).
    pub avg_total: [u64; MAX_NR_TIERS],
    /// `refaulted` per tier of the current generation (r).
    pub refaulted: [u64; MAX_NR_TIERS],
    /// `evicted` per tier (e).
    pub evicted: [u64; MAX_NR_TIERS],
    /// `protected` per tier (p).
    pub protected: [u64; MAX_NR_TIERS],
}

/// The lru_gen debugfs view of one group on node 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LruGenMemcg {
    /// `mem_cgroup_id`.
    pub memcg_id: u16,
    /// Cgroup path.
    pub path: String,
    /// Node id.
    pub node: u32,
    /// max_seq.
    pub max_seq: u64,
    /// min_seq [anon, file].
    pub min_seq: [u64; 2],
    /// The generations from the oldest to max_seq (`lru_gen_full`: the last 4).
    pub gens: Vec<LruGenGen>,
    /// Tiers: [anon, file].
    pub tiers: [LruGenTiers; 2],
}

/// A sample of the lru_gen view over time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LruGenSample {
    /// Simulated time, s.
    pub t: f64,
    /// Every group.
    pub memcgs: Vec<LruGenMemcg>,
}

/// What a run reports about the multi-gen LRU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LruGenReport {
    /// `v6.1` or `v6.14`.
    pub version: String,
    /// `/sys/kernel/mm/lru_gen/enabled`.
    pub enabled: u32,
    /// `/sys/kernel/mm/lru_gen/min_ttl_ms`.
    pub min_ttl_ms: u64,
    /// Counters.
    pub stats: LruGenStats,
    /// The final view (`lru_gen_full`).
    pub memcgs: Vec<LruGenMemcg>,
    /// The view over time: at most one sample per `SAMPLE_NS` of simulated
    /// time, taken when a generation is made.
    pub series: Vec<LruGenSample>,
    /// The /sys/kernel/debug/lru_gen writes of the scenario and their results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<LruGenWriteLog>,
}

/// Minimum spacing of the time series samples: 1 s.
pub const SAMPLE_NS: u64 = 1_000_000_000;
/// Most samples kept.
pub const MAX_SAMPLES: usize = 600;

/// `MEMCG_NR_GENS`: generations of the memcg LRU.
pub const MEMCG_NR_GENS: usize = 3;
/// `MEMCG_NR_BINS`: random bins per generation.
pub const MEMCG_NR_BINS: usize = 8;

/// A `shrink_one` verdict (`MEMCG_LRU_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemcgLruOp {
    /// Soft limit exceeded (not modelled under v2 cgroups): head of its list.
    Head,
    /// Reclaim it last in this generation.
    Tail,
    /// Offlined: back to the old generation's head.
    Old,
    /// Aged, protected or exhausted: to the young generation.
    Young,
}

/// `lrugen->seg`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemcgSeg {
    /// No segment.
    #[default]
    None,
    /// `MEMCG_LRU_HEAD`.
    Head,
    /// `MEMCG_LRU_TAIL`.
    Tail,
}

/// A lruvec's place in the memcg LRU (`lrugen->gen`, `seg`, its bin).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LruvecMemcgLru {
    /// In the memcg LRU (`lru_gen_online_memcg` ran).
    pub online: bool,
    /// Its generation (seq % 3).
    pub gen: u8,
    /// Its segment.
    pub seg: MemcgSeg,
    /// Its bin.
    pub bin: u8,
}

/// The node's memcg LRU (`pgdat->memcg_lru`, v6.3+).
#[derive(Clone, Debug, Default)]
pub struct MemcgLru {
    /// `seq`: old generation = seq % 3, young = (seq + 1) % 3.
    pub seq: u64,
    /// `fifo[gen][bin]`: groups, head first.
    pub fifo: [[Vec<MemcgId>; MEMCG_NR_BINS]; MEMCG_NR_GENS],
    /// `nr_memcgs[gen]`.
    pub nr_memcgs: [u64; MEMCG_NR_GENS],
    /// State of the bin generator (xorshift; the kernel uses get_random).
    pub rng: u64,
    /// Reused scratch list.
    pub scratch: Vec<MemcgId>,
}

impl MemcgLru {
    /// `get_memcg_gen(seq)`.
    pub fn old_gen(&self) -> usize {
        (self.seq % MEMCG_NR_GENS as u64) as usize
    }
    /// `get_memcg_gen(seq + 1)`.
    pub fn young_gen(&self) -> usize {
        ((self.seq + 1) % MEMCG_NR_GENS as u64) as usize
    }
    /// `get_random_u32_below(MEMCG_NR_BINS)`, deterministic.
    fn random_bin(&mut self) -> usize {
        let mut x = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        self.rng = x;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((x ^ (x >> 31)) % MEMCG_NR_BINS as u64) as usize
    }
}

/// Machine-wide MGLRU state and settings.
#[derive(Clone, Debug, Default)]
pub struct LruGenState {
    /// Version.
    pub version: MglruVersion,
    /// `/sys/kernel/mm/lru_gen/enabled` bits.
    pub enabled: u32,
    /// `lru_gen_min_ttl` in ns.
    pub min_ttl_ns: u64,
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

impl Lruvec {
    /// Every list of the lruvec, classic and MGLRU, with its tag.
    pub fn all_lists(&self) -> impl Iterator<Item = (u8, &List)> {
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

/// `get_swappiness()`-level check of a swappiness value for commands.
fn check_swappiness(s: u32) -> Result<(), String> {
    if s > SWAPPINESS_ANON_ONLY {
        return Err(format!(
            "swappiness {s} is out of range [0, 201] (201 = anon only)"
        ));
    }
    Ok(())
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
    pub fn lru_gen_folio(&self, m: MemcgId) -> &LruGenFolio {
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
    pub(crate) fn lru_gen_folio_seq(&self, m: MemcgId, f: FolioId, reclaiming: bool) -> u64 {
        let lg = self.lrugen(m);
        let fo = &self.folios[f];
        let ty = fo.is_file() as usize;
        let ws = fo.test(flags::WORKINGSET) as u64;
        let cold_but_pending = (!fo.is_file() && !fo.test(flags::SWAPCACHE))
            || (fo.test(flags::RECLAIM) && fo.test(flags::DIRTY | flags::WRITEBACK));
        match self.lru_gen_version() {
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
            MglruVersion::V6_1 => {
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

    /// `lru_gen_add_folio()`: puts folio `f` on the list of the generation
    /// [`Sim::lru_gen_folio_seq`] picks, at the head (tail if `reclaiming`),
    /// clearing PG_active and setting PG_lru. Unevictable folios go to the
    /// classic unevictable list.
    pub(crate) fn lru_gen_add_folio(&mut self, f: FolioId, reclaiming: bool) {
        let m = self.folios[f].memcg;
        self.folios[f].set(flags::LRU);
        if self.folios[f].test(flags::UNEVICTABLE) {
            let l = LruList::Unevictable as usize;
            self.memcgs[m as usize].lruvec.lists[l].push_head(&mut self.folios, f, l as u8);
            return;
        }
        let seq = self.lru_gen_folio_seq(m, f, reclaiming);
        let gen = lru_gen_from_seq(seq);
        let fo = &mut self.folios[f];
        let ty = fo.is_file() as usize;
        fo.clear(flags::ACTIVE);
        set_folio_gen(fo, Some(gen));
        let lg = &mut self.memcgs[m as usize].lruvec.lrugen;
        lg.nr_pages[gen][ty] += 1;
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
    pub(crate) fn lru_gen_del_folio(&mut self, f: FolioId, reclaiming: bool) {
        let m = self.folios[f].memcg as usize;
        let tag = self.folios[f].lru;
        if !is_lru_gen_tag(tag) {
            self.memcgs[m].lruvec.lists[tag as usize].unlink(&mut self.folios, f);
            return;
        }
        let (lg_gen, lg_ty) = (
            ((tag - LRU_GEN_TAG) / 2) as usize,
            ((tag - LRU_GEN_TAG) % 2) as usize,
        );
        let gen = folio_lru_gen(&self.folios[f]).unwrap_or(lg_gen);
        let lg = &mut self.memcgs[m].lruvec.lrugen;
        lg.lists[lg_gen][lg_ty].unlink(&mut self.folios, f);
        lg.nr_pages[gen][lg_ty] -= 1;
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
        if self.lru_gen.in_fault && !self.folios[f].test(flags::UNEVICTABLE) {
            self.folios[f].set(flags::ACTIVE);
        }
        self.lru_gen_add_folio(f, false);
    }

    /// `folio_mark_accessed()` under MGLRU: counts an access through a file
    /// descriptor in the folio's tier bits, never moving it.
    ///
    /// v6.14 `lru_gen_inc_refs()`: 1st access sets PG_referenced (refs 0),
    /// 2nd–4th increment refs, the 5th and later set PG_workingset.
    /// v6.1 `folio_inc_refs()`: 1st sets PG_referenced, 2nd PG_workingset,
    /// then refs += 1 up to its mask.
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
            MglruVersion::V6_1 => {
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
    /// v6.1: promotes at the first sighting, clearing refs, PG_referenced
    /// and PG_workingset.
    pub(crate) fn folio_update_gen(&mut self, f: FolioId, gen: usize) -> Option<usize> {
        let v = self.lru_gen_version();
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
            MglruVersion::V6_1 => fo.clear(flags::WORKINGSET),
        }
        if old == gen {
            return None;
        }
        let ty = fo.is_file() as usize;
        let m = fo.memcg as usize;
        let lg = &mut self.memcgs[m].lruvec.lrugen;
        lg.nr_pages[old][ty] -= 1;
        lg.nr_pages[gen][ty] += 1;
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

    /// `walk_update_folio()`: a young PTE of folio `f` was found and cleared.
    /// A dirty PTE dirties the folio (unless it is anon not in swap cache).
    /// With a walker (kswapd, or aging) the generation is updated in place;
    /// without one (v6.14), `lru_gen_set_refs` decides and the folio is
    /// activated through `folio_activate` (re-added young). v6.1 updates in
    /// place in both cases (its batch fallback also ends in `max_seq`).
    fn walk_update_folio(&mut self, f: FolioId, new_gen: usize, pte_dirty: bool, walker: bool) {
        let fo = self.folios[f];
        if pte_dirty && !fo.test(flags::DIRTY) {
            if fo.is_file() {
                self.folio_mark_dirty(f);
            } else if fo.test(flags::SWAPCACHE) {
                self.folios[f].set(flags::DIRTY);
            }
        }
        if walker || self.lru_gen_version() == MglruVersion::V6_1 {
            self.folio_update_gen(f, new_gen);
        } else if self.lru_gen_set_refs(f) && folio_lru_gen(&self.folios[f]) != Some(new_gen) {
            // folio_activate() → lru_activate(): delete, PG_active, re-add.
            self.lru_gen_del_folio(f, false);
            self.folios[f].set(flags::ACTIVE);
            self.lru_gen_add_folio(f, false);
            self.vm.pgactivate += 1;
        }
    }

    /// `suitable_to_scan()`: a PTE table is worth walking next time if at
    /// least one in 8 of its PTEs was young (x86: 64-byte lines / 8-byte PTEs).
    #[inline]
    fn suitable_to_scan(total: u64, young: u64) -> bool {
        young * 8 >= total
    }

    /// `lru_gen_look_around()`: the rmap found PTE `index` of `vma` mapping
    /// the folio `f` under eviction. If it is young: clear it and scan up to
    /// 64 neighbouring PTEs of the same PTE table (the PMD's range clipped to
    /// the VMA, centred on `index`), promoting young folios of this group
    /// (`walk_update_folio` with max_seq's generation) and feeding a hot
    /// table to the Bloom filter of max_seq. Returns whether the target was
    /// young. v6.1 also counts the isolated target itself (PG_referenced).
    fn lru_gen_look_around(
        &mut self,
        f: FolioId,
        vma: VmaId,
        index: u32,
        sc: &mut ScanControl,
    ) -> bool {
        let pte = self.vmas[vma as usize].pte(index);
        if pte & (PTE_PRESENT | PTE_YOUNG) != PTE_PRESENT | PTE_YOUNG || pte & PTE_FOLIO_MASK != f {
            return false;
        }
        *self.vmas[vma as usize].pte_mut(index) &= !PTE_YOUNG;
        let v = self.lru_gen_version();
        if v == MglruVersion::V6_1 {
            self.folios[f].set(flags::REFERENCED);
        }
        self.lru_gen.stats.look_around += 1;
        let m = self.folios[f].memcg;
        let len = self.vmas[vma as usize].len;
        let start = index & !(PTRS_PER_PTE - 1);
        let end = (start + PTRS_PER_PTE).min(len);
        if end - start == 1 {
            return true;
        }
        let (mut lo, mut hi) = (start, end);
        let half = MIN_LRU_BATCH as u32 / 2;
        if hi - lo > MIN_LRU_BATCH as u32 {
            if index - lo < half {
                hi = lo + MIN_LRU_BATCH as u32;
            } else if hi - index < half {
                lo = hi - MIN_LRU_BATCH as u32;
            } else {
                lo = index - half;
                hi = index + half;
            }
        }
        sc.charge_pt_walk((hi - lo) as u64, self.cost.pte_walk_ns);
        let walker = sc.who == Reclaimer::Kswapd;
        let new_gen = lru_gen_from_seq(self.lrugen(m).max_seq);
        // v6.1's loop met the (still young) target PTE too.
        let mut young = (v == MglruVersion::V6_1) as u64;
        for i in lo..hi {
            let p = self.vmas[vma as usize].pte(i);
            if p & (PTE_PRESENT | PTE_YOUNG) != PTE_PRESENT | PTE_YOUNG {
                continue;
            }
            let g = p & PTE_FOLIO_MASK;
            let go = &self.folios[g];
            if go.memcg != m || folio_lru_gen(go).is_none() {
                continue;
            }
            *self.vmas[vma as usize].pte_mut(i) &= !PTE_YOUNG;
            young += 1;
            self.walk_update_folio(g, new_gen, p & PTE_DIRTY != 0, walker);
        }
        self.lru_gen.stats.look_around_young += young;
        if Self::suitable_to_scan((hi - lo) as u64, young) {
            let seq = self.lrugen(m).max_seq;
            let lg = self.lrugen_mut(m);
            // update_bloom_filter(): the filter of max_seq, if it exists.
            if let Some(fl) = lg.filters[(seq % 2) as usize].as_mut() {
                fl.insert(vma, index / PTRS_PER_PTE);
            }
        }
        true
    }

    /// The MGLRU reference rule of `shrink_folio_list()`
    /// (`folio_check_references()` with `folio_referenced_one()` calling
    /// look-around for every mapping; one `page_vma_mapped_walk` each).
    ///
    /// v6.14: no young PTE → reclaim (fd references were handled by tiers);
    /// young → `lru_gen_set_refs`: first sighting keep, else activate.
    /// v6.1: look-around marked the folio PG_referenced, so a young PTE
    /// activates (the classic rule); otherwise reclaim.
    pub(crate) fn lru_gen_check_references(
        &mut self,
        f: FolioId,
        sc: &mut ScanControl,
    ) -> FolioReferences {
        let fo = self.folios[f];
        let mut referenced = false;
        if fo.mapcount > 0 {
            if !fo.is_file() {
                sc.charge_rmap(self.cost.rmap_ns);
                referenced |= self.lru_gen_look_around(f, fo.space, fo.index, sc);
            } else {
                for i in 0..self.files[fo.space as usize].mappings.len() {
                    let Some((vid, idx)) = self.file_rmap(fo.space, fo.index, i) else {
                        continue;
                    };
                    sc.charge_rmap(self.cost.rmap_ns);
                    referenced |= self.lru_gen_look_around(f, vid, idx, sc);
                }
            }
        }
        if !referenced {
            return FolioReferences::Reclaim;
        }
        match self.lru_gen_version() {
            MglruVersion::V6_14 => {
                if self.lru_gen_set_refs(f) {
                    FolioReferences::Activate
                } else {
                    FolioReferences::Keep
                }
            }
            MglruVersion::V6_1 => {
                self.folios[f].clear(flags::REFERENCED);
                FolioReferences::Activate
            }
        }
    }

    /// `folio_inc_gen()`: moves a folio of min_seq's generation to
    /// min_seq + 1 (or keeps the generation a walker promoted it to),
    /// clearing refs and PG_referenced (v6.1: PG_workingset too); with
    /// `reclaiming`, sets PG_reclaim. Returns the new generation; the caller
    /// moves it between lists.
    fn folio_inc_gen(&mut self, m: MemcgId, f: FolioId, reclaiming: bool) -> usize {
        let v = self.lru_gen_version();
        let fo = &mut self.folios[f];
        let ty = fo.is_file() as usize;
        let lg = &mut self.memcgs[m as usize].lruvec.lrugen;
        let old_gen = lru_gen_from_seq(lg.min_seq[ty]);
        if let Some(g) = folio_lru_gen(fo) {
            if g != old_gen {
                return g;
            }
        }
        let new_gen = (old_gen + 1) % MAX_NR_GENS as usize;
        set_folio_gen(fo, Some(new_gen));
        set_folio_refs(fo, 0);
        fo.clear(flags::REFERENCED);
        if v == MglruVersion::V6_1 {
            fo.clear(flags::WORKINGSET);
        }
        if reclaiming {
            fo.set(flags::RECLAIM);
        }
        lg.nr_pages[old_gen][ty] -= 1;
        lg.nr_pages[new_gen][ty] += 1;
        new_gen
    }

    /// Moves folio `f` from whatever MGLRU list it is on to the head or tail
    /// of generation `gen`'s list of its type (`list_move`, `list_move_tail`).
    fn lru_gen_move(&mut self, m: MemcgId, f: FolioId, gen: usize, tail: bool) {
        let tag = self.folios[f].lru;
        let (g0, ty) = (
            ((tag - LRU_GEN_TAG) / 2) as usize,
            ((tag - LRU_GEN_TAG) % 2) as usize,
        );
        let lg = &mut self.memcgs[m as usize].lruvec.lrugen;
        lg.lists[g0][ty].unlink(&mut self.folios, f);
        let l = &mut lg.lists[gen][ty];
        if tail {
            l.push_tail(&mut self.folios, f, lru_gen_tag(gen, ty));
        } else {
            l.push_head(&mut self.folios, f, lru_gen_tag(gen, ty));
        }
    }

    /// `reset_ctrl_pos()` for `NR_HIST_GENS` = 1: with `carryover` (min_seq
    /// advancing), fold the generation's counters into the moving averages
    /// (smoothing 1/2) and clear them; without, nothing to do.
    fn reset_ctrl_pos(&mut self, m: MemcgId, ty: usize, carryover: bool) {
        if !carryover {
            return;
        }
        let v = self.lru_gen_version();
        let lg = self.lrugen_mut(m);
        for tier in 0..MAX_NR_TIERS {
            lg.avg_refaulted[ty][tier] = (lg.avg_refaulted[ty][tier] + lg.refaulted[ty][tier]) / 2;
            let protected = match v {
                MglruVersion::V6_14 => lg.protected[ty][tier],
                MglruVersion::V6_1 if tier > 0 => lg.protected[ty][tier - 1],
                MglruVersion::V6_1 => 0,
            };
            lg.avg_total[ty][tier] =
                (lg.avg_total[ty][tier] + lg.evicted[ty][tier] + protected) / 2;
        }
        lg.refaulted[ty] = [0; MAX_NR_TIERS];
        lg.evicted[ty] = [0; MAX_NR_TIERS];
        lg.protected[ty] = [0; MAX_NR_TIERS];
    }

    /// `inc_min_seq()`: frees the oldest slot of type `ty` for a new
    /// generation by moving its folios to min_seq + 1 (tail), counting them
    /// as protected per tier (v6.14; not the lazily promoted workingset).
    /// A type eviction may not take from under `swappiness` keeps its folios
    /// where they are (cold/hot inversion accepted).
    fn inc_min_seq(&mut self, m: MemcgId, ty: usize, swappiness: u32) {
        let v = self.lru_gen_version();
        let skip =
            (ty == FILE && swappiness == SWAPPINESS_ANON_ONLY) || (ty == ANON && swappiness == 0);
        if !skip {
            let old_gen = lru_gen_from_seq(self.lrugen(m).min_seq[ty]);
            loop {
                let f = self.lrugen(m).lists[old_gen][ty].tail;
                if f == NIL {
                    break;
                }
                let fo = self.folios[f];
                let refs = folio_lru_refs(v, &fo);
                let ws = fo.test(flags::WORKINGSET);
                let new_gen = self.folio_inc_gen(m, f, false);
                self.lru_gen_move(m, f, new_gen, true);
                if v == MglruVersion::V6_14 && !(refs == LRU_REFS_MASK as u64 + 1 && ws) {
                    let tier = lru_tier_from_refs(v, refs, ws);
                    self.lrugen_mut(m).protected[ty][tier] += 1;
                }
            }
        }
        self.reset_ctrl_pos(m, ty, true);
        self.lrugen_mut(m).min_seq[ty] += 1;
    }

    /// `inc_max_seq()`: makes a new generation: frees the oldest slot of a
    /// type whose window is full, stamps the new slot's birth time and
    /// increments max_seq. Nothing moves: every folio left behind is now one
    /// generation older. Returns false if `seq` is no longer max_seq.
    pub(crate) fn inc_max_seq(&mut self, m: MemcgId, seq: u64, swappiness: u32, now: u64) -> bool {
        if seq != self.lrugen(m).max_seq {
            return false;
        }
        for ty in [ANON, FILE] {
            if self.lrugen(m).nr_gens(ty) == MAX_NR_GENS {
                self.inc_min_seq(m, ty, swappiness);
            }
        }
        for ty in [ANON, FILE] {
            self.reset_ctrl_pos(m, ty, false);
        }
        let lg = self.lrugen_mut(m);
        lg.timestamps[lru_gen_from_seq(lg.max_seq + 1)] = now;
        lg.max_seq += 1;
        self.lru_gen.stats.aging += 1;
        self.lru_gen_sample(now);
        true
    }

    /// `try_to_inc_max_seq()`: one aging round for group `m`: unless another
    /// walker already finished the round for `seq` (`mm_state.seq`), walk
    /// the page tables of the group's tasks (if the MM-walk capability is
    /// enabled; otherwise `iterate_mm_list_nowalk`), then `inc_max_seq`.
    pub(crate) fn try_to_inc_max_seq(
        &mut self,
        m: MemcgId,
        seq: u64,
        swappiness: u32,
        force_scan: bool,
        sc: &mut ScanControl,
    ) -> bool {
        let lg = self.lrugen(m);
        if seq <= lg.mm_seq {
            return false;
        }
        if self.lru_gen.enabled & LRU_GEN_MM_WALK != 0 {
            self.walk_mm(m, seq, swappiness, force_scan, sc);
        }
        self.lrugen_mut(m).mm_seq = seq;
        self.lru_lock_reclaim(sc, m, 0);
        let now = sc.now();
        self.inc_max_seq(m, seq, swappiness, now)
    }

    /// `walk_mm()` over every mm of group `m` (`iterate_mm_list`): for each
    /// VMA the walk may visit (`should_skip_vma`: anon when swappiness is 0,
    /// file when it is 201), each PTE table that is in the Bloom filter of
    /// `seq` (or every table with `force_scan`, or when that filter does not
    /// exist yet): every young PTE of a folio of this group on an MGLRU list
    /// is cleared and promoted to `seq`'s generation (`walk_pte_range` →
    /// `walk_update_folio` with a walker), and a table with enough young
    /// PTEs goes into the filter of `seq + 1` (`reset_bloom_filter` cleared
    /// it at the start of the round). Costs `pte_walk_ns` per PTE.
    fn walk_mm(
        &mut self,
        m: MemcgId,
        seq: u64,
        swappiness: u32,
        force_scan: bool,
        sc: &mut ScanControl,
    ) {
        self.lru_gen.stats.walks += 1;
        {
            let lg = self.lrugen_mut(m);
            let next = ((seq + 1) % 2) as usize;
            match lg.filters[next].as_mut() {
                Some(f) => f.0.fill(0),
                None => lg.filters[next] = Some(BloomFilter::new()),
            }
        }
        let new_gen = lru_gen_from_seq(seq);
        let cur = (seq % 2) as usize;
        for t in 0..self.tasks.len() {
            if self.tasks[t].dead || self.tasks[t].memcg != m {
                continue;
            }
            for vi in 0..self.tasks[t].vmas.len() {
                let vid = self.tasks[t].vmas[vi];
                let v = &self.vmas[vid as usize];
                let anon = v.kind == VmaKind::Anon;
                if (anon && swappiness == 0) || (!anon && swappiness == SWAPPINESS_ANON_ONLY) {
                    continue;
                }
                // VM_SEQ_READ / VM_RAND_READ: no recency to learn.
                if !anon && v.file_ra.advice != crate::readahead::Advice::Normal {
                    continue;
                }
                let n = v.ptes.len() as u32;
                let tables = n.div_ceil(PTRS_PER_PTE);
                for table in 0..tables {
                    if !force_scan {
                        if let Some(fl) = self.lrugen(m).filters[cur].as_ref() {
                            if !fl.test(vid, table) {
                                self.lru_gen.stats.tables_skipped += 1;
                                continue;
                            }
                        }
                    }
                    let lo = table * PTRS_PER_PTE;
                    let hi = (lo + PTRS_PER_PTE).min(n);
                    sc.charge_pt_walk((hi - lo) as u64, self.cost.pte_walk_ns);
                    self.lru_gen.stats.leaf_total += (hi - lo) as u64;
                    let mut young = 0;
                    for i in lo..hi {
                        let p = self.vmas[vid as usize].ptes[i as usize];
                        if p & (PTE_PRESENT | PTE_YOUNG) != PTE_PRESENT | PTE_YOUNG {
                            continue;
                        }
                        let g = p & PTE_FOLIO_MASK;
                        let go = &self.folios[g];
                        if go.memcg != m || folio_lru_gen(go).is_none() {
                            continue;
                        }
                        self.vmas[vid as usize].ptes[i as usize] &= !PTE_YOUNG;
                        young += 1;
                        self.walk_update_folio(g, new_gen, p & PTE_DIRTY != 0, true);
                    }
                    self.lru_gen.stats.leaf_young += young;
                    if Self::suitable_to_scan((hi - lo) as u64, young) {
                        self.lru_gen.stats.tables_added += 1;
                        let next = ((seq + 1) % 2) as usize;
                        if let Some(fl) = self.lrugen_mut(m).filters[next].as_mut() {
                            fl.insert(vid, table);
                        }
                    }
                }
            }
            // reset_batch_size(): the walk's batched generation sizes are
            // folded into the lruvec under lru_lock once per mm.
            self.lru_lock_reclaim(sc, m, 0);
        }
    }

    /// `try_to_inc_min_seq()`: advances each evictable type's min_seq over
    /// empty generations (keeping at least MIN_NR_GENS). v6.14: then keeps
    /// the types within one generation of max_seq − 2 of each other; v6.1:
    /// anon's min_seq may not pass file's. Returns whether anything moved.
    pub(crate) fn try_to_inc_min_seq(&mut self, m: MemcgId, swappiness: u32) -> bool {
        let v = self.lru_gen_version();
        let lg = self.lrugen(m);
        let mut min_seq = lg.min_seq;
        let types: &[usize] = match swappiness {
            0 => &[FILE],
            SWAPPINESS_ANON_ONLY => &[ANON],
            _ => &[ANON, FILE],
        };
        for &ty in types {
            while min_seq[ty] + MIN_NR_GENS <= lg.max_seq {
                if !lg.lists[lru_gen_from_seq(min_seq[ty])][ty].is_empty() {
                    break;
                }
                min_seq[ty] += 1;
            }
        }
        match v {
            MglruVersion::V6_14 => {
                if (1..=200).contains(&swappiness) {
                    let seq = lg.max_seq - MIN_NR_GENS;
                    if min_seq[ANON] > seq && min_seq[FILE] < seq {
                        min_seq[ANON] = seq;
                    } else if min_seq[FILE] > seq && min_seq[ANON] < seq {
                        min_seq[FILE] = seq;
                    }
                }
            }
            MglruVersion::V6_1 => {
                if swappiness != 0 {
                    min_seq[ANON] = min_seq[ANON].min(min_seq[FILE]);
                    min_seq[FILE] = min_seq[ANON].max(lg.min_seq[FILE]);
                }
            }
        }
        let mut success = false;
        for ty in [ANON, FILE] {
            if min_seq[ty] <= self.lrugen(m).min_seq[ty] {
                continue;
            }
            self.reset_ctrl_pos(m, ty, true);
            self.lrugen_mut(m).min_seq[ty] = min_seq[ty];
            success = true;
        }
        success
    }

    /// `read_ctrl_pos()`: refaults and total of `ty`'s tier `tier` (or of
    /// all tiers for `MAX_NR_TIERS`, v6.14) with a gain. v6.1 counts
    /// `protected[tier − 1]` in a tier's total.
    pub fn read_ctrl_pos(&self, m: MemcgId, ty: usize, tier: usize, gain: u64) -> CtrlPos {
        let v = self.lru_gen_version();
        let lg = self.lrugen(m);
        let tiers = if tier < MAX_NR_TIERS {
            tier..tier + 1
        } else {
            0..MAX_NR_TIERS
        };
        let mut pos = CtrlPos {
            refaulted: 0,
            total: 0,
            gain,
        };
        for i in tiers {
            pos.refaulted += lg.avg_refaulted[ty][i] + lg.refaulted[ty][i];
            pos.total += lg.avg_total[ty][i] + lg.evicted[ty][i];
            pos.total += match v {
                MglruVersion::V6_14 => lg.protected[ty][i],
                MglruVersion::V6_1 if i > 0 => lg.protected[ty][i - 1],
                MglruVersion::V6_1 => 0,
            };
        }
        pos
    }

    /// `get_tier_idx()`: the highest tier eviction may take from: tiers
    /// above it are protected. Tier 0 is the set point; a higher tier is
    /// protected once its refault rate exceeds tier 0's by the gain margin
    /// (v6.14 gains 2:3, v6.1 1:2).
    pub fn get_tier_idx(&self, m: MemcgId, ty: usize) -> usize {
        let (gs, gp) = match self.lru_gen_version() {
            MglruVersion::V6_14 => (2, 3),
            MglruVersion::V6_1 => (1, 2),
        };
        let sp = self.read_ctrl_pos(m, ty, 0, gs);
        for tier in 1..MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(m, ty, tier, gp);
            if !positive_ctrl_err(sp, pv) {
                return tier - 1;
            }
        }
        MAX_NR_TIERS - 1
    }

    /// Type selection, returning (type, tier_idx if already decided).
    ///
    /// v6.14 `get_type_to_scan()`: swappiness ≤ 1 → file, ≥ 200 → anon,
    /// else the PID comparison over all tiers with gains (swappiness,
    /// 200 − swappiness): file when its refault rate is not worse.
    /// v6.1 (`isolate_folios` + `get_type_to_scan`): 0 → file; anon when
    /// its min_seq is older; 1 → file; 200 → anon; else compare tier 0 of
    /// both types, and the chosen type's tiers against the other's tier 0.
    pub fn get_type_to_scan(&self, m: MemcgId, swappiness: u32) -> (usize, Option<usize>) {
        let s = swappiness as u64;
        match self.lru_gen_version() {
            MglruVersion::V6_14 => {
                if swappiness <= 1 {
                    return (FILE, None);
                }
                if swappiness >= 200 {
                    return (ANON, None);
                }
                let sp = self.read_ctrl_pos(m, ANON, MAX_NR_TIERS, s);
                let pv = self.read_ctrl_pos(m, FILE, MAX_NR_TIERS, 200 - s);
                (
                    if positive_ctrl_err(sp, pv) {
                        FILE
                    } else {
                        ANON
                    },
                    None,
                )
            }
            MglruVersion::V6_1 => {
                let lg = self.lrugen(m);
                if swappiness == 0 {
                    return (FILE, None);
                }
                if lg.min_seq[ANON] < lg.min_seq[FILE] {
                    return (ANON, None);
                }
                if swappiness == 1 {
                    return (FILE, None);
                }
                if swappiness == 200 {
                    return (ANON, None);
                }
                let gain = [s, 200 - s];
                let sp = self.read_ctrl_pos(m, ANON, 0, gain[ANON]);
                let pv = self.read_ctrl_pos(m, FILE, 0, gain[FILE]);
                let ty = positive_ctrl_err(sp, pv) as usize;
                let sp = self.read_ctrl_pos(m, 1 - ty, 0, gain[1 - ty]);
                let mut tier = 1;
                while tier < MAX_NR_TIERS {
                    let pv = self.read_ctrl_pos(m, ty, tier, gain[ty]);
                    if !positive_ctrl_err(sp, pv) {
                        break;
                    }
                    tier += 1;
                }
                (ty, Some(tier - 1))
            }
        }
    }

    /// `sort_folio()`: true if folio `f` (at the tail of min_seq's list) was
    /// moved instead of being isolated: promoted (its generation field
    /// differs) → its generation's head; protected by tier (> `tier_idx`,
    /// or v6.14's lazily promoted workingset) → min_seq + 1; under
    /// writeback or dirty file → min_seq + 1 with PG_reclaim.
    fn sort_folio(
        &mut self,
        m: MemcgId,
        f: FolioId,
        tier_idx: usize,
        sc: &mut ScanControl,
    ) -> bool {
        let v = self.lru_gen_version();
        let fo = self.folios[f];
        let ty = fo.is_file() as usize;
        let gen = folio_lru_gen(&fo).expect("on an MGLRU list");
        let refs = folio_lru_refs(v, &fo);
        let ws = fo.test(flags::WORKINGSET);
        let tier = lru_tier_from_refs(v, refs, ws);
        let min_gen = lru_gen_from_seq(self.lrugen(m).min_seq[ty]);
        if gen != min_gen {
            self.lru_gen_move(m, f, gen, false);
            return true;
        }
        let lazily_promoted =
            v == MglruVersion::V6_14 && refs + ws as u64 == LRU_REFS_MASK as u64 + 2;
        if tier > tier_idx || lazily_promoted {
            let g = self.folio_inc_gen(m, f, false);
            match v {
                MglruVersion::V6_14 => {
                    self.lru_gen_move(m, f, g, false);
                    if !lazily_promoted {
                        self.lrugen_mut(m).protected[ty][tier] += 1;
                    }
                }
                MglruVersion::V6_1 => {
                    self.lru_gen_move(m, f, g, true);
                    self.lrugen_mut(m).protected[ty][tier - 1] += 1;
                    self.vm_workingset_activate(m, ty == FILE);
                }
            }
            self.lru_gen.stats.tier_protected += 1;
            return true;
        }
        let dirty = fo.test(flags::DIRTY);
        let writeback = fo.test(flags::WRITEBACK);
        if ty == FILE && dirty {
            sc.nr_file_taken += 1;
            if !writeback {
                sc.nr_unqueued_dirty += 1;
            }
        }
        if writeback || (ty == FILE && dirty) {
            let g = self.folio_inc_gen(m, f, true);
            self.lru_gen_move(m, f, g, false);
            return true;
        }
        false
    }

    /// Counts a refault activation (`WORKINGSET_ACTIVATE_*`) in group `m`'s
    /// lruvec, its `memory.stat` and `/proc/vmstat`; shared by the classic
    /// `workingset_refault` and `lru_gen_refault`.
    pub(crate) fn vm_workingset_activate(&mut self, m: MemcgId, file: bool) {
        let g = &mut self.memcgs[m as usize];
        g.lruvec.workingset_activate[file as usize] += 1;
        if file {
            self.vm.workingset_activate_file += 1;
            g.stat.workingset_activate_file += 1;
        } else {
            self.vm.workingset_activate_anon += 1;
            g.stat.workingset_activate_anon += 1;
        }
    }

    /// `isolate_folio()`: takes folio `f` off its list for
    /// `shrink_folio_list`: clears PG_lru and PG_reclaim; without
    /// PG_referenced the refs bits are cleared (v6.1: also PG_workingset,
    /// and PG_referenced always).
    fn isolate_folio(&mut self, f: FolioId) {
        let v = self.lru_gen_version();
        self.lru_gen_del_folio(f, true);
        let fo = &mut self.folios[f];
        fo.clear(flags::LRU);
        if !fo.test(flags::REFERENCED) {
            set_folio_refs(fo, 0);
            if v == MglruVersion::V6_1 {
                fo.clear(flags::WORKINGSET);
            }
        }
        fo.clear(flags::RECLAIM);
        if v == MglruVersion::V6_1 {
            fo.clear(flags::REFERENCED);
        }
    }

    /// `scan_folios()`: from the tail of type `ty`'s oldest generation,
    /// sorts or isolates folios into `self.scratch` until 64 are isolated
    /// or 4096 scanned. Counts PGSCAN_* (isolated) and PGREFILL (sorted).
    /// Returns the number scanned, or 0 if nothing could be isolated.
    fn scan_folios(&mut self, m: MemcgId, ty: usize, tier_idx: usize, sc: &mut ScanControl) -> u64 {
        if self.lrugen(m).nr_gens(ty) == MIN_NR_GENS {
            return 0;
        }
        let gen = lru_gen_from_seq(self.lrugen(m).min_seq[ty]);
        let (mut scanned, mut isolated, mut sorted) = (0u64, 0u64, 0u64);
        let mut remaining = MAX_LRU_BATCH;
        let mut ahead = self.lrugen(m).lists[gen][ty].tail;
        for _ in 0..8 {
            ahead = self.folios.prefetch_and_step_towards_head(ahead);
        }
        loop {
            let f = self.lrugen(m).lists[gen][ty].tail;
            if f == NIL {
                break;
            }
            ahead = self.folios.prefetch_and_step_towards_head(ahead);
            scanned += 1;
            if self.sort_folio(m, f, tier_idx, sc) {
                sorted += 1;
            } else {
                self.isolate_folio(f);
                self.scratch.push(f);
                isolated += 1;
            }
            remaining -= 1;
            if remaining == 0 || isolated >= MIN_LRU_BATCH {
                break;
            }
        }
        sc.charge_lru(scanned * self.cost.scan_ns);
        let global = sc.who != Reclaimer::Memcg;
        let st = &mut self.memcgs[m as usize].stat;
        st.pgrefill += sorted;
        match sc.who {
            Reclaimer::Kswapd => st.pgscan_kswapd += isolated,
            _ => st.pgscan_direct += isolated,
        }
        if global {
            self.vm.pgrefill += sorted;
            match sc.who {
                Reclaimer::Kswapd => self.vm.pgscan_kswapd += isolated,
                _ => self.vm.pgscan_direct += isolated,
            }
        }
        if ty == FILE {
            self.vm.pgscan_file += isolated;
        } else {
            self.vm.pgscan_anon += isolated;
        }
        if isolated > 0 || remaining == 0 {
            scanned
        } else {
            0
        }
    }

    /// `isolate_folios()`: picks the type ([`Sim::get_type_to_scan`]) and
    /// scans it; if nothing was scanned, the other evictable type.
    fn isolate_folios(
        &mut self,
        m: MemcgId,
        swappiness: u32,
        sc: &mut ScanControl,
    ) -> (usize, u64) {
        let (mut ty, mut tier) = match swappiness {
            0 => (FILE, None),
            SWAPPINESS_ANON_ONLY => (ANON, None),
            _ => self.get_type_to_scan(m, swappiness),
        };
        let attempts = if swappiness == 0 || swappiness == SWAPPINESS_ANON_ONLY {
            1
        } else {
            2
        };
        for _ in 0..attempts {
            let tier_idx = tier.unwrap_or_else(|| self.get_tier_idx(m, ty));
            let scanned = self.scan_folios(m, ty, tier_idx, sc);
            if scanned > 0 {
                return (ty, scanned);
            }
            ty = 1 - ty;
            tier = None;
        }
        (ty, 0)
    }

    /// `evict_folios()`: isolate a batch, drop empty oldest generations,
    /// reclaim the batch through `shrink_folio_list` (with the MGLRU
    /// reference rule; v6.14: clean, unmapped, inactive survivors are
    /// retried once, 359a5e1416ca of 6.2) and put survivors back — never
    /// into the oldest generation (v6.14: those whose insertion seq would be
    /// min_seq get PG_active; v6.1: every rejected folio not waiting for
    /// writeback, keeping its refs and PG_workingset, with PG_referenced
    /// restored when PG_workingset is set — checked against v6.1's
    /// mm/vmscan.c, which has neither the retry nor the clearing of the
    /// refs bits).
    /// Returns the number scanned (0 = no progress: the caller ages).
    pub(crate) fn evict_folios(
        &mut self,
        m: MemcgId,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> u64 {
        let v = self.lru_gen_version();
        self.scratch.clear();
        let (ty, mut scanned) = self.isolate_folios(m, swappiness, sc);
        self.lru_lock_reclaim(sc, m, scanned);
        scanned += self.try_to_inc_min_seq(m, swappiness) as u64;
        let lg = self.lrugen(m);
        if lg.evictable_min_seq(swappiness) + MIN_NR_GENS > lg.max_seq {
            scanned = 0;
        }
        if self.scratch.is_empty() {
            return scanned;
        }
        let mut batch = std::mem::take(&mut self.scratch);
        let rules = self.rules();
        let (mut reclaimed, _) = self.shrink_folio_list(&mut batch, sc, rules);
        if v == MglruVersion::V6_14 {
            reclaimed += self.retry_written_back(&mut batch, sc, rules);
        }
        self.lru_lock_reclaim(sc, m, batch.len() as u64);
        for &f in &batch {
            let fo = &mut self.folios[f];
            match v {
                MglruVersion::V6_14 => {
                    if !fo.test(flags::ACTIVE) {
                        let fty = fo.is_file() as usize;
                        if self.lru_gen_folio_seq(m, f, false) == self.lrugen(m).min_seq[fty] {
                            let fo = &mut self.folios[f];
                            fo.set(flags::ACTIVE);
                            fo.clear(flags::REFERENCED);
                            set_folio_refs(fo, 0);
                        }
                    }
                }
                MglruVersion::V6_1 => {
                    if fo.test(flags::WORKINGSET) {
                        fo.set(flags::REFERENCED);
                    }
                    let waiting =
                        fo.test(flags::RECLAIM) && fo.test(flags::DIRTY | flags::WRITEBACK);
                    if waiting {
                        fo.clear(flags::ACTIVE);
                    } else {
                        fo.set(flags::ACTIVE);
                    }
                }
            }
            self.lru_gen_add_folio(f, false);
        }
        batch.clear();
        self.scratch = batch;
        let st = &mut self.memcgs[m as usize].stat;
        match sc.who {
            Reclaimer::Kswapd => {
                st.pgsteal_kswapd += reclaimed;
                self.vm.pgsteal_kswapd += reclaimed;
            }
            Reclaimer::Direct => {
                st.pgsteal_direct += reclaimed;
                self.vm.pgsteal_direct += reclaimed;
            }
            Reclaimer::Memcg => st.pgsteal_direct += reclaimed,
        }
        if ty == FILE {
            self.vm.pgsteal_file += reclaimed;
        } else {
            self.vm.pgsteal_anon += reclaimed;
        }
        sc.nr_reclaimed += reclaimed;
        scanned
    }

    /// "Retry folios that may have missed folio_rotate_reclaimable()" (6.2+,
    /// 359a5e1416ca): the clean, unmapped, inactive survivors of a batch get
    /// one more `shrink_folio_list` pass, and go back into `batch` with the
    /// other survivors. Returns the pages it reclaimed.
    fn retry_written_back(
        &mut self,
        batch: &mut Vec<FolioId>,
        sc: &mut ScanControl,
        rules: crate::sim::ClassicRules,
    ) -> u64 {
        let mut retry = std::mem::take(&mut self.lru_gen.retry);
        retry.clear();
        batch.retain(|&f| {
            let fo = &self.folios[f];
            let again = !fo.test(flags::ACTIVE | flags::DIRTY | flags::WRITEBACK)
                && fo.mapcount == 0
                && !fo.test(flags::UNEVICTABLE);
            if again {
                retry.push(f);
            }
            !again
        });
        let mut reclaimed = 0;
        if !retry.is_empty() {
            sc.nr_scanned = sc.nr_scanned.saturating_sub(retry.len() as u64);
            reclaimed = self.shrink_folio_list(&mut retry, sc, rules).0;
            batch.extend_from_slice(&retry);
        }
        self.lru_gen.retry = retry;
        reclaimed
    }

    /// `get_swappiness()`: 0 when anon cannot be swapped (no `may_swap`, or
    /// fewer than 64 swap slots the group may use, `memory.swap.max`
    /// included: `mem_cgroup_get_nr_swap_pages`), else the group's or the
    /// system's.
    fn lru_gen_swappiness(&self, m: MemcgId, sc: &ScanControl) -> u32 {
        if !sc.may_swap || self.mem_cgroup_get_nr_swap_pages(m) < MIN_LRU_BATCH {
            return 0;
        }
        sc.proactive_swappiness.unwrap_or(
            self.memcgs[m as usize]
                .swappiness
                .unwrap_or(self.cfg.swappiness),
        )
    }

    /// `should_run_aging()`: (must/should age, pages evictable).
    /// v6.14: age when only MIN_NR_GENS + 1 generations remain (must, and
    /// nothing to scan, with MIN_NR_GENS). v6.1: must age with 2; with 3,
    /// age if the youngest holds over half the pages or max_seq − 2 under a
    /// quarter; never with 4.
    pub(crate) fn should_run_aging(&self, m: MemcgId, swappiness: u32) -> (bool, u64) {
        let lg = self.lrugen(m);
        let min = lg.evictable_min_seq(swappiness);
        if min + MIN_NR_GENS > lg.max_seq {
            return (true, 0);
        }
        let total = lg.evictable_pages(swappiness);
        match self.lru_gen_version() {
            MglruVersion::V6_14 => (min + MIN_NR_GENS == lg.max_seq, total),
            MglruVersion::V6_1 => {
                if min + MIN_NR_GENS < lg.max_seq {
                    return (false, total);
                }
                let types: &[usize] = if swappiness == 0 {
                    &[FILE]
                } else {
                    &[ANON, FILE]
                };
                let (mut young, mut old) = (0, 0);
                for &ty in types {
                    young += lg.pages(lru_gen_from_seq(lg.max_seq), ty);
                    old += lg.pages(lru_gen_from_seq(lg.max_seq - MIN_NR_GENS), ty);
                }
                (
                    young * MIN_NR_GENS > total || old * (MIN_NR_GENS + 2) < total,
                    total,
                )
            }
        }
    }

    /// `get_nr_to_scan()`: how much to scan in group `m`; −1 after aging
    /// (v6.14: stop and rotate the group), 0 to stop.
    /// v6.14: no aging needed or DEF_PRIORITY → total >> priority; else age.
    /// v6.1: at DEF_PRIORITY skip aging; kswapd leaves aging to
    /// `lru_gen_age_node`; others age and then scan.
    pub(crate) fn get_nr_to_scan(
        &mut self,
        m: MemcgId,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> i64 {
        let (age, n) = self.should_run_aging(m, swappiness);
        let max_seq = self.lrugen(m).max_seq;
        match self.lru_gen_version() {
            MglruVersion::V6_14 => {
                if self.memcg_below_min(sc.target, m) {
                    return -1;
                }
                if !age || sc.priority == DEF_PRIORITY {
                    return (n >> sc.priority) as i64;
                }
                if self.try_to_inc_max_seq(m, max_seq, swappiness, false, sc) {
                    -1
                } else {
                    0
                }
            }
            MglruVersion::V6_1 => {
                let nr = (n >> sc.priority) as i64;
                if !age {
                    return nr;
                }
                if sc.priority != DEF_PRIORITY {
                    if sc.who == Reclaimer::Kswapd {
                        return 0;
                    }
                    if self.try_to_inc_max_seq(m, max_seq, swappiness, false, sc) {
                        return nr;
                    }
                }
                let lg = self.lrugen(m);
                if lg.evictable_min_seq(swappiness) + MIN_NR_GENS <= lg.max_seq {
                    nr
                } else {
                    0
                }
            }
        }
    }

    /// `should_abort_scan()` (v6.14): root reclaim stops once the goal is
    /// met, kswapd also once free pages clear the high watermark + 64.
    fn should_abort_scan(&self, sc: &ScanControl) -> bool {
        if sc.who == Reclaimer::Memcg {
            return false;
        }
        if sc.nr_reclaimed >= sc.nr_to_reclaim.max(2) {
            return true;
        }
        sc.who == Reclaimer::Kswapd && self.node.free >= self.node.wmark_high + MIN_LRU_BATCH
    }

    /// `try_to_shrink_lruvec()` (v6.14) / v6.1 `lru_gen_shrink_lruvec()`'s
    /// loop: evict until the scan target is met, aging when needed.
    /// Returns true if the group aged (v6.14: rotate it in the memcg LRU).
    fn try_to_shrink_lruvec(&mut self, m: MemcgId, sc: &mut ScanControl) -> bool {
        let v = self.lru_gen_version();
        let swappiness = self.lru_gen_swappiness(m, sc);
        let start = sc.nr_reclaimed;
        let mut scanned = 0u64;
        let mut n;
        loop {
            n = self.get_nr_to_scan(m, sc, swappiness);
            if n <= 0 {
                break;
            }
            let d = self.evict_folios(m, sc, swappiness);
            if d == 0 {
                break;
            }
            scanned += d;
            if scanned >= n as u64 {
                break;
            }
            match v {
                MglruVersion::V6_14 => {
                    if self.should_abort_scan(sc) {
                        break;
                    }
                }
                MglruVersion::V6_1 => {
                    if sc.who != Reclaimer::Memcg
                        && sc.nr_reclaimed - start >= sc.nr_to_reclaim.max(2)
                    {
                        break;
                    }
                }
            }
        }
        if v == MglruVersion::V6_1 && sc.nr_reclaimed - start >= MIN_LRU_BATCH {
            let (age, _) = self.should_run_aging(m, swappiness);
            if !age {
                self.lru_gen.memcgs_need_aging = false;
            }
        }
        if sc.nr_file_taken > 0 && sc.nr_unqueued_dirty == sc.nr_file_taken {
            self.wakeup_flusher(sc.now());
        }
        n < 0
    }

    /// `lru_gen_shrink_lruvec()`: reclaim from one group's lruvec (cgroup
    /// reclaim in v6.14; every reclaim in v6.1, called from the classic
    /// `shrink_node_memcgs`).
    pub(crate) fn lru_gen_shrink_lruvec(&mut self, sc: &mut ScanControl) {
        let m = sc.memcg;
        self.try_to_shrink_lruvec(m, sc);
    }

    /// `set_initial_priority()` (v6.14): for a large goal, start at the
    /// priority where (reclaimable >> priority) ≈ nr_to_reclaim, in [6, 12].
    fn set_initial_priority(&self, sc: &mut ScanControl) {
        if sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
            return;
        }
        let lv = self.subtree_lruvec(crate::memcg::ROOT);
        let mut reclaimable = lv.size(LruList::InactiveFile);
        if self.swap.as_ref().is_some_and(|s| s.nr_free() > 0) {
            reclaimable += lv.size(LruList::InactiveAnon);
        }
        let fls = |x: u64| (64 - x.leading_zeros()) as i64;
        let p = fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1);
        sc.priority = p.clamp(DEF_PRIORITY as i64 / 2, DEF_PRIORITY as i64) as u32;
    }

    /// `lru_gen_shrink_node()` (v6.14 root reclaim: kswapd and direct):
    /// `set_initial_priority`, then `shrink_many` over the memcg LRU.
    pub(crate) fn lru_gen_shrink_node(&mut self, sc: &mut ScanControl) {
        self.set_initial_priority(sc);
        let before = sc.nr_reclaimed;
        self.shrink_many(sc);
        if sc.nr_reclaimed > before {
            self.kswapd.failures = 0;
        }
    }

    /// `lru_gen_online_memcg()` for groups not in the memcg LRU yet: the
    /// tail of a random bin of the old generation (in group order, with the
    /// machine's seeded generator, so runs repeat).
    pub(crate) fn memcg_lru_sync(&mut self) {
        for m in 0..self.memcgs.len() {
            if self.memcgs[m].lruvec.lrugen.memcg_lru.online {
                continue;
            }
            let gen = self.lru_gen.memcg_lru.old_gen();
            let bin = self.lru_gen.memcg_lru.random_bin();
            let l = &mut self.memcgs[m].lruvec.lrugen.memcg_lru;
            *l = LruvecMemcgLru {
                online: true,
                gen: gen as u8,
                seg: MemcgSeg::None,
                bin: bin as u8,
            };
            self.lru_gen.memcg_lru.fifo[gen][bin].push(m as MemcgId);
            self.lru_gen.memcg_lru.nr_memcgs[gen] += 1;
        }
    }

    /// `lru_gen_rotate_memcg()`: applies a `shrink_one` verdict to group `m`:
    /// HEAD/TAIL mark its segment; OLD/YOUNG move it to the old/young
    /// generation (head for OLD, tail otherwise) in a random bin. When the
    /// old generation empties, the memcg LRU's seq advances.
    pub(crate) fn lru_gen_rotate_memcg(&mut self, m: MemcgId, op: MemcgLruOp) {
        let ml = &mut self.lru_gen.memcg_lru;
        let cur = self.memcgs[m as usize].lruvec.lrugen.memcg_lru;
        let old = cur.gen as usize;
        let (seg, new) = match op {
            MemcgLruOp::Head => (MemcgSeg::Head, old),
            MemcgLruOp::Tail => (MemcgSeg::Tail, old),
            MemcgLruOp::Old => (MemcgSeg::None, ml.old_gen()),
            MemcgLruOp::Young => (MemcgSeg::None, ml.young_gen()),
        };
        let bin = ml.random_bin();
        let list = &mut ml.fifo[old][cur.bin as usize];
        if let Some(i) = list.iter().position(|&x| x == m) {
            list.remove(i);
        }
        let list = &mut ml.fifo[new][bin];
        if matches!(op, MemcgLruOp::Head | MemcgLruOp::Old) {
            list.insert(0, m);
        } else {
            list.push(m);
        }
        ml.nr_memcgs[old] -= 1;
        ml.nr_memcgs[new] += 1;
        if ml.nr_memcgs[old] == 0 && old == ml.old_gen() {
            ml.seq += 1;
        }
        self.memcgs[m as usize].lruvec.lrugen.memcg_lru = LruvecMemcgLru {
            online: true,
            gen: new as u8,
            seg,
            bin: bin as u8,
        };
    }

    /// `shrink_one()`: reclaims from group `m` and says where it goes in the
    /// memcg LRU: YOUNG below memory.min or after aging; below memory.low,
    /// TAIL the first time (then reclaimed, with a `low` event); None while
    /// it is still sizable; else TAIL once, then YOUNG.
    fn shrink_one(&mut self, m: MemcgId, sc: &mut ScanControl) -> Option<MemcgLruOp> {
        let root = crate::memcg::ROOT;
        if self.memcg_below_min(root, m) {
            return Some(MemcgLruOp::Young);
        }
        let seg = self.memcgs[m as usize].lruvec.lrugen.memcg_lru.seg;
        if self.memcg_below_low(root, m) {
            if seg != MemcgSeg::Tail {
                return Some(MemcgLruOp::Tail);
            }
            self.memcgs[m as usize].stat.low += 1;
        }
        sc.memcg = m;
        if self.try_to_shrink_lruvec(m, sc) {
            return Some(MemcgLruOp::Young);
        }
        let sw = self.lru_gen_swappiness(m, sc);
        if (self.lrugen(m).evictable_pages(sw) >> sc.priority) > 0 {
            return None;
        }
        Some(if seg != MemcgSeg::Tail {
            MemcgLruOp::Tail
        } else {
            MemcgLruOp::Young
        })
    }

    /// `shrink_many()`: global reclaim over the memcg LRU (v6.3+): from a
    /// random bin of the old generation, each group in bin order gets
    /// `shrink_one` and is rotated by its verdict; then the other bins of
    /// that generation; stops when `should_abort_scan`.
    fn shrink_many(&mut self, sc: &mut ScanControl) {
        self.memcg_lru_sync();
        for m in 0..self.memcgs.len() {
            self.memcg_calculate_protection(crate::memcg::ROOT, m as MemcgId);
        }
        let gen = self.lru_gen.memcg_lru.old_gen();
        let first = self.lru_gen.memcg_lru.random_bin();
        let mut members = std::mem::take(&mut self.lru_gen.memcg_lru.scratch);
        for k in 0..MEMCG_NR_BINS {
            let bin = (first + k) % MEMCG_NR_BINS;
            members.clear();
            members.extend_from_slice(&self.lru_gen.memcg_lru.fifo[gen][bin]);
            for &m in &members {
                if self.memcgs[m as usize].lruvec.lrugen.memcg_lru.gen as usize != gen {
                    continue;
                }
                let op = self.shrink_one(m, sc);
                if let Some(op) = op {
                    self.lru_gen_rotate_memcg(m, op);
                }
                if self.should_abort_scan(sc) {
                    self.lru_gen.memcg_lru.scratch = members;
                    return;
                }
            }
        }
        self.lru_gen.memcg_lru.scratch = members;
    }

    /// `lru_gen_age_node()`, run by kswapd each `balance_pgdat` iteration.
    ///
    /// v6.14: `set_initial_priority`, then with `min_ttl_ms` set: if no
    /// group is reclaimable (not below memory.min, sizable at this priority,
    /// and its oldest evictable generation born at least min_ttl ago), invoke
    /// the OOM killer instead of evicting the working set.
    /// v6.1: skipped every other call unless eviction found aging needed
    /// (`memcgs_need_aging`); `age_lruvec` ages each group that needs it
    /// (min_ttl: only groups whose oldest *file* generation is old enough)
    /// and kills if none passed the min_ttl test.
    pub(crate) fn lru_gen_age_node(&mut self, sc: &mut ScanControl) {
        let min_ttl = self.lru_gen.min_ttl_ns;
        let now = sc.now();
        match self.lru_gen_version() {
            MglruVersion::V6_14 => {
                self.set_initial_priority(sc);
                let mut reclaimable = min_ttl == 0;
                let mut cur = Some(crate::memcg::ROOT);
                while let Some(m) = cur {
                    cur = self.memcg_iter_next(crate::memcg::ROOT, m);
                    self.memcg_calculate_protection(crate::memcg::ROOT, m);
                    if reclaimable {
                        continue;
                    }
                    let sw = self.lru_gen_swappiness(m, sc);
                    let lg = self.lrugen(m);
                    let birth = lg.timestamps[lru_gen_from_seq(lg.evictable_min_seq(sw))];
                    let sizable = (lg.evictable_pages(sw) >> sc.priority) > 0;
                    reclaimable = now >= birth + min_ttl
                        && sizable
                        && !self.memcg_below_min(crate::memcg::ROOT, m);
                }
                if !reclaimable {
                    self.lru_gen.stats.min_ttl_oom += 1;
                    self.out_of_memory(None);
                }
            }
            MglruVersion::V6_1 => {
                if !self.lru_gen.memcgs_need_aging {
                    self.lru_gen.memcgs_need_aging = true;
                    return;
                }
                let mut success = false;
                let mut cur = Some(crate::memcg::ROOT);
                while let Some(m) = cur {
                    cur = self.memcg_iter_next(crate::memcg::ROOT, m);
                    self.memcg_calculate_protection(crate::memcg::ROOT, m);
                    if self.memcg_below_min(crate::memcg::ROOT, m) {
                        continue;
                    }
                    let sw = self.lru_gen_swappiness(m, sc);
                    let (need_aging, n) = self.should_run_aging(m, sw);
                    if min_ttl > 0 {
                        let lg = self.lrugen(m);
                        let birth = lg.timestamps[lru_gen_from_seq(lg.min_seq[FILE])];
                        if now < birth + min_ttl {
                            continue;
                        }
                        if (n >> sc.priority) == 0 && sc.priority != DEF_PRIORITY {
                            continue;
                        }
                    }
                    if need_aging {
                        let max_seq = self.lrugen(m).max_seq;
                        self.try_to_inc_max_seq(m, max_seq, sw, false, sc);
                    }
                    success = true;
                }
                if !success && min_ttl > 0 {
                    self.lru_gen.stats.min_ttl_oom += 1;
                    self.out_of_memory(None);
                }
            }
        }
    }

    /// `lru_gen_eviction()`: the shadow of an evicted folio: a token of the
    /// type's min_seq and the folio's refs − 1, the folio's own group, and
    /// PG_workingset (v6.1: whether refs > 0); counts `evicted[tier]`.
    pub(crate) fn lru_gen_eviction(&mut self, f: FolioId) -> u32 {
        let v = self.lru_gen_version();
        let fo = self.folios[f];
        let ty = fo.is_file() as usize;
        let refs = folio_lru_refs(v, &fo);
        let ws = fo.test(flags::WORKINGSET);
        let tier = lru_tier_from_refs(v, refs, ws);
        let m = fo.memcg;
        let lg = self.lrugen_mut(m);
        let token = (lg.min_seq[ty] << LRU_REFS_WIDTH) | refs.saturating_sub(1);
        lg.evicted[ty][tier] += 1;
        crate::reclaim::workingset::Shadow {
            eviction: token as u32 & crate::reclaim::workingset::EVICTION_MASK,
            memcg_id: self.memcgs[m as usize].id,
            workingset: match v {
                MglruVersion::V6_14 => ws,
                MglruVersion::V6_1 => refs > 0,
            },
        }
        .pack()
    }

    /// `lru_gen_refault()`: a folio comes back whose slot held `shadow`.
    /// Ignored unless it refaults into the group that evicted it. Counts
    /// WORKINGSET_REFAULT; if recent — v6.14: max_seq within MAX_NR_GENS of
    /// the token's seq (`lru_gen_test_recent`); v6.1: the token's seq is
    /// still min_seq — counts `refaulted[tier]`, and restores PG_workingset
    /// (v6.14: if the shadow had it, else the refs; v6.1: in a fault or with
    /// saturated refs). v6.1 counts REFAULT only for recent refaults.
    pub(crate) fn lru_gen_refault(&mut self, f: FolioId, shadow: u32) {
        let Some(s) = crate::reclaim::workingset::Shadow::unpack(shadow) else {
            return;
        };
        let v = self.lru_gen_version();
        let m = self.folios[f].memcg;
        if self.memcgs[m as usize].id != s.memcg_id {
            return;
        }
        let file = self.folios[f].is_file();
        let ty = file as usize;
        let token = s.eviction as u64;
        let seq_mask = (crate::reclaim::workingset::EVICTION_MASK >> LRU_REFS_WIDTH) as u64;
        let lg = self.lrugen(m);
        let recent = match v {
            MglruVersion::V6_14 => {
                (lg.max_seq & seq_mask).abs_diff(token >> LRU_REFS_WIDTH) < MAX_NR_GENS
            }
            MglruVersion::V6_1 => token >> LRU_REFS_WIDTH == lg.min_seq[ty] & seq_mask,
        };
        if v == MglruVersion::V6_14 || recent {
            let st = &mut self.memcgs[m as usize].stat;
            if file {
                self.vm.workingset_refault_file += 1;
                st.workingset_refault_file += 1;
            } else {
                self.vm.workingset_refault_anon += 1;
                st.workingset_refault_anon += 1;
            }
        }
        if !recent {
            return;
        }
        let low = token & LRU_REFS_MASK as u64;
        let (refs, tier, restore) = match v {
            MglruVersion::V6_14 => {
                let refs = low + 1;
                (
                    refs,
                    lru_tier_from_refs(v, refs, s.workingset),
                    s.workingset,
                )
            }
            MglruVersion::V6_1 => {
                let refs = low + s.workingset as u64;
                let restore = self.lru_gen.in_fault || refs == 1 << LRU_REFS_WIDTH;
                (refs, lru_tier_from_refs(v, refs, false), restore)
            }
        };
        self.lrugen_mut(m).refaulted[ty][tier] += 1;
        if v == MglruVersion::V6_14 && self.lru_gen.in_fault {
            self.vm_workingset_activate(m, file);
        }
        if restore {
            self.folios[f].set(flags::WORKINGSET);
            let st = &mut self.memcgs[m as usize].stat;
            if file {
                self.vm.workingset_restore_file += 1;
                st.workingset_restore_file += 1;
            } else {
                self.vm.workingset_restore_anon += 1;
                st.workingset_restore_anon += 1;
            }
        } else if v == MglruVersion::V6_14 {
            set_folio_refs(&mut self.folios[f], (refs - 1) as u16);
        }
    }

    /// `folio_rotate_reclaimable()` under MGLRU (writeback completion of a
    /// PG_reclaim folio): re-added at the tail of the oldest generation
    /// (`lru_move_tail` → `lru_gen_add_folio(reclaiming)`).
    pub(crate) fn lru_gen_rotate_reclaimable(&mut self, f: FolioId) {
        self.lru_gen_del_folio(f, false);
        self.folios[f].clear(flags::ACTIVE);
        self.lru_gen_add_folio(f, true);
        self.vm.pgrotated += 1;
    }

    /// The debugfs `+ memcg_id node_id seq [swappiness [force_scan]]`
    /// command (`run_aging`): make generation `seq` + 1 in group `memcg`.
    /// Errors as the kernel's EINVAL/EEXIST would, with a reason.
    pub fn lru_gen_run_aging(
        &mut self,
        memcg: MemcgId,
        seq: u64,
        swappiness: Option<u32>,
        force_scan: bool,
    ) -> Result<(), String> {
        if !matches!(self.policy, Policy::Mglru(_)) {
            return Err("lru_gen: the policy is not mglru".into());
        }
        if memcg as usize >= self.memcgs.len() {
            return Err(format!("lru_gen: no memcg {memcg}"));
        }
        let max_seq = self.lrugen(memcg).max_seq;
        if seq > max_seq {
            return Err(format!(
                "lru_gen +: seq {seq} is beyond max_seq {max_seq} (EINVAL)"
            ));
        }
        let mut sc = ScanControl::new(Reclaimer::Memcg, 0, self.clock);
        sc.target = memcg;
        sc.memcg = memcg;
        let sw = match swappiness {
            Some(s) => {
                check_swappiness(s)?;
                s
            }
            None => self.lru_gen_swappiness(memcg, &sc),
        };
        if !self.try_to_inc_max_seq(memcg, max_seq, sw, force_scan, &mut sc) {
            return Err(format!(
                "lru_gen +: no new generation after {max_seq} (EEXIST)"
            ));
        }
        Ok(())
    }

    /// The debugfs `- memcg_id node_id seq [swappiness [nr_to_reclaim]]`
    /// command (`run_eviction`): evict generations up to `seq`. Returns the
    /// pages reclaimed.
    pub fn lru_gen_run_eviction(
        &mut self,
        memcg: MemcgId,
        seq: u64,
        swappiness: Option<u32>,
        nr_to_reclaim: Option<u64>,
    ) -> Result<u64, String> {
        if !matches!(self.policy, Policy::Mglru(_)) {
            return Err("lru_gen: the policy is not mglru".into());
        }
        if memcg as usize >= self.memcgs.len() {
            return Err(format!("lru_gen: no memcg {memcg}"));
        }
        let max_seq = self.lrugen(memcg).max_seq;
        if seq + MIN_NR_GENS > max_seq {
            return Err(format!(
                "lru_gen -: seq {seq} + {MIN_NR_GENS} is beyond max_seq {max_seq} (EINVAL)"
            ));
        }
        let mut sc = ScanControl::new(
            Reclaimer::Memcg,
            nr_to_reclaim.unwrap_or(u64::MAX),
            self.clock,
        );
        sc.target = memcg;
        sc.memcg = memcg;
        sc.priority = 0;
        let sw = match swappiness {
            Some(s) => {
                check_swappiness(s)?;
                s
            }
            None => self.lru_gen_swappiness(memcg, &sc),
        };
        while self.lrugen(memcg).evictable_min_seq(sw) <= seq && sc.nr_reclaimed < sc.nr_to_reclaim
        {
            if self.evict_folios(memcg, &mut sc, sw) == 0 {
                break;
            }
        }
        self.clock += sc.cpu_ns;
        Ok(sc.nr_reclaimed)
    }

    /// The lru_gen_full view of every group now.
    pub fn lru_gen_view(&self) -> Vec<LruGenMemcg> {
        let now = self.clock;
        self.memcgs
            .iter()
            .map(|g| {
                let lg = &g.lruvec.lrugen;
                let first = lg.max_seq.saturating_sub(MAX_NR_GENS - 1);
                let gens = (first..=lg.max_seq)
                    .map(|seq| {
                        let gen = lru_gen_from_seq(seq);
                        let pages = |ty: usize| {
                            if seq < lg.min_seq[ty] {
                                0
                            } else {
                                lg.pages(gen, ty)
                            }
                        };
                        LruGenGen {
                            seq,
                            birth_ms: lg.timestamps[gen] / 1_000_000,
                            age_ms: now.saturating_sub(lg.timestamps[gen]) / 1_000_000,
                            anon: pages(ANON),
                            file: pages(FILE),
                        }
                    })
                    .collect();
                let tiers = [ANON, FILE].map(|ty| LruGenTiers {
                    avg_refaulted: lg.avg_refaulted[ty],
                    avg_total: lg.avg_total[ty],
                    refaulted: lg.refaulted[ty],
                    evicted: lg.evicted[ty],
                    protected: lg.protected[ty],
                });
                LruGenMemcg {
                    memcg_id: g.id,
                    path: g.path.clone(),
                    node: 0,
                    max_seq: lg.max_seq,
                    min_seq: lg.min_seq,
                    gens,
                    tiers,
                }
            })
            .collect()
    }

    /// Appends a time-series sample if a second has passed since the last.
    fn lru_gen_sample(&mut self, now: u64) {
        if self
            .lru_gen
            .last_sample
            .is_some_and(|t| now < t + SAMPLE_NS)
            || self.lru_gen.series.len() >= MAX_SAMPLES
        {
            return;
        }
        self.lru_gen.last_sample = Some(now);
        let memcgs = self.lru_gen_view();
        self.lru_gen.series.push(LruGenSample {
            t: now as f64 / 1e9,
            memcgs,
        });
    }

    /// The run's MGLRU report, None under other policies.
    pub fn lru_gen_report(&self) -> Option<LruGenReport> {
        if self.cfg.policy.name != crate::config::PolicyName::Mglru {
            return None;
        }
        let v = self.lru_gen.version;
        Some(LruGenReport {
            version: v.name().into(),
            enabled: self.lru_gen.enabled,
            min_ttl_ms: self.lru_gen.min_ttl_ns / 1_000_000,
            stats: self.lru_gen.stats,
            memcgs: self.lru_gen_view(),
            series: self.lru_gen.series.clone(),
            writes: self.lru_gen.log.clone(),
        })
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
        let m = self.folios[f].memcg as usize;
        let gen = lru_gen_from_seq(seq);
        let fo = &mut self.folios[f];
        let ty = fo.is_file() as usize;
        fo.clear(flags::ACTIVE);
        fo.set(flags::LRU);
        set_folio_gen(fo, Some(gen));
        let lg = &mut self.memcgs[m].lruvec.lrugen;
        lg.nr_pages[gen][ty] += 1;
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
                count[gen][ty] += 1;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_base_2_matches_the_kernel() {
        assert_eq!(
            [0, 1, 2, 3, 4, 5, 8, 9].map(order_base_2),
            [0, 0, 1, 2, 2, 3, 3, 4]
        );
    }

    #[test]
    fn ctrl_err_needs_64_refaults_and_compares_rates_over_gains() {
        let sp = CtrlPos {
            refaulted: 100,
            total: 1000,
            gain: 1,
        };
        // Too few refaults: positive whatever the rate.
        assert!(positive_ctrl_err(
            sp,
            CtrlPos {
                refaulted: 63,
                total: 64,
                gain: 1
            }
        ));
        // 64/1000 vs 101/1064: not worse.
        assert!(positive_ctrl_err(
            sp,
            CtrlPos {
                refaulted: 64,
                total: 1000,
                gain: 1
            }
        ));
        // 500/1000 vs 101/1064: worse.
        assert!(!positive_ctrl_err(
            sp,
            CtrlPos {
                refaulted: 500,
                total: 1000,
                gain: 1
            }
        ));
        // ...unless its gain is five times larger: 500·1064·1 <= 101·1000·5.
        assert!(!positive_ctrl_err(
            sp,
            CtrlPos {
                refaulted: 500,
                total: 1000,
                gain: 5
            }
        ));
        assert!(positive_ctrl_err(
            sp,
            CtrlPos {
                refaulted: 500,
                total: 1000,
                gain: 6
            }
        ));
    }

    #[test]
    fn bloom_filter_holds_what_was_inserted() {
        let mut b = BloomFilter::new();
        assert!(!b.test(3, 7));
        b.insert(3, 7);
        assert!(b.test(3, 7));
        assert!(!b.test(3, 8));
    }
}

/// Which debugfs command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LruGenOp {
    /// `+`: aging (`run_aging`), with `force_scan`.
    Age {
        /// Walk every PTE table, not only those in the Bloom filter (default true).
        force_scan: bool,
    },
    /// `-`: eviction (`run_eviction`) of up to `nr_to_reclaim` pages.
    Evict {
        /// Pages to reclaim at most (default: unlimited).
        nr_to_reclaim: Option<u64>,
    },
}

/// One command written to /sys/kernel/debug/lru_gen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LruGenCommand {
    /// `+` or `-`.
    pub op: LruGenOp,
    /// The group: a `mem_cgroup_id` (1 = the top group) or a cgroup path.
    pub memcg: String,
    /// Node id (only node 0 exists).
    pub node: u32,
    /// The seq argument.
    pub seq: u64,
    /// Swappiness 0..=201, or the group's.
    pub swappiness: Option<u32>,
    /// The command as written.
    pub text: String,
}

/// Parses what a write to /sys/kernel/debug/lru_gen holds (`lru_gen_seq_write`):
/// commands separated by `,`, `;` or newlines, each
/// `+ memcg_id node_id seq [swappiness [force_scan]]` or
/// `- memcg_id node_id seq [swappiness [nr_to_reclaim]]`. `memcg_id` may also be a
/// cgroup path (`/`, `/a/b`). The error says what is wrong and what is allowed.
pub fn parse_lru_gen_write(text: &str) -> Result<Vec<LruGenCommand>, String> {
    let mut out = Vec::new();
    for cmd in text.split([',', ';', '\n']) {
        let cmd = cmd.trim();
        if cmd.is_empty() {
            continue;
        }
        let f: Vec<&str> = cmd.split_whitespace().collect();
        let usage = "expected `+ memcg_id node_id seq [swappiness [force_scan]]` or \
                     `- memcg_id node_id seq [swappiness [nr_to_reclaim]]`";
        if f.len() < 4 || f.len() > 6 {
            return Err(format!("`{cmd}`: {usage}"));
        }
        let num = |s: &str, what: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("`{cmd}`: {what} `{s}` is not a number"))
        };
        let memcg = f[1].to_string();
        if !memcg.starts_with('/') {
            num(&memcg, "memcg_id")?;
        }
        let node = num(f[2], "node_id")?;
        if node != 0 {
            return Err(format!("`{cmd}`: node_id {node}: only node 0 exists"));
        }
        let seq = num(f[3], "seq")?;
        let swappiness = match f.get(4) {
            Some(s) => {
                let v = num(s, "swappiness")?;
                if v > SWAPPINESS_ANON_ONLY as u64 {
                    return Err(format!(
                        "`{cmd}`: swappiness {v} is out of range [0, 201] (201 = anon only)"
                    ));
                }
                Some(v as u32)
            }
            None => None,
        };
        let extra = f.get(5).map(|s| num(s, "the last field")).transpose()?;
        let op = match f[0] {
            "+" => LruGenOp::Age {
                force_scan: extra.is_none_or(|v| v != 0),
            },
            "-" => LruGenOp::Evict {
                nr_to_reclaim: extra,
            },
            o => return Err(format!("`{cmd}`: unknown command `{o}`; {usage}")),
        };
        out.push(LruGenCommand {
            op,
            memcg,
            node: node as u32,
            seq,
            swappiness,
            text: cmd.to_string(),
        });
    }
    if out.is_empty() {
        return Err("no command; expected `+ ...` or `- ...`".into());
    }
    Ok(out)
}

/// /sys/kernel/debug/lru_gen.
pub const LRU_GEN_DEBUG: &str = "/sys/kernel/debug/lru_gen";
/// /sys/kernel/mm/lru_gen/enabled.
pub const LRU_GEN_ENABLED: &str = "/sys/kernel/mm/lru_gen/enabled";
/// /sys/kernel/mm/lru_gen/min_ttl_ms.
pub const LRU_GEN_MIN_TTL: &str = "/sys/kernel/mm/lru_gen/min_ttl_ms";

/// A parsed write to one of the lru_gen files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LruGenFileWrite {
    /// Commands for /sys/kernel/debug/lru_gen.
    Debug(Vec<LruGenCommand>),
    /// New capabilities for /sys/kernel/mm/lru_gen/enabled.
    Enabled(u32),
    /// New /sys/kernel/mm/lru_gen/min_ttl_ms.
    MinTtlMs(u64),
}

/// Parses a write of `text` to the lru_gen file `path`: `enabled` takes
/// `y`/`Y` (all), `n`/`N` (none) or a number (decimal or 0x hex) in
/// 0..=7 (`enabled_store`); `min_ttl_ms` a number of ms in 0..=2^32−1
/// (`min_ttl_ms_store`); the debugfs file commands
/// ([`parse_lru_gen_write`]).
pub fn parse_lru_gen_file_write(path: &str, text: &str) -> Result<LruGenFileWrite, String> {
    let t = text.trim();
    let number = |t: &str| match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => t.parse::<u64>().ok(),
    };
    match path {
        LRU_GEN_DEBUG => parse_lru_gen_write(text).map(LruGenFileWrite::Debug),
        LRU_GEN_ENABLED => {
            let caps = match t {
                "y" | "Y" => Some(7),
                "n" | "N" => Some(0),
                _ => number(t),
            };
            match caps {
                Some(c) if c <= 7 => Ok(LruGenFileWrite::Enabled(c as u32)),
                _ => Err(format!(
                    "`{t}`: expected y, n or a number in [0, 0x7] (bits: 0 core, 1 mm walk, 2 non-leaf young)"
                )),
            }
        }
        LRU_GEN_MIN_TTL => match number(t) {
            Some(ms) if ms <= u32::MAX as u64 => Ok(LruGenFileWrite::MinTtlMs(ms)),
            _ => Err(format!("`{t}`: expected milliseconds in [0, 4294967295]")),
        },
        _ => Err(format!(
            "unknown file `{path}`; allowed: {LRU_GEN_DEBUG}, {LRU_GEN_ENABLED}, {LRU_GEN_MIN_TTL}"
        )),
    }
}

/// A debugfs write run during the simulation, and what it returned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LruGenWriteLog {
    /// When, simulated seconds.
    pub t: f64,
    /// The command.
    pub command: String,
    /// `ok` (for `-`: pages reclaimed), or the error.
    pub result: String,
}

impl Sim {
    /// Resolves a command's group: a `mem_cgroup_id` or a path.
    fn lru_gen_memcg(&self, c: &LruGenCommand) -> Result<MemcgId, String> {
        if c.memcg.starts_with('/') {
            return self
                .memcg_by_path(&c.memcg)
                .ok_or_else(|| format!("`{}`: no cgroup {}", c.text, c.memcg));
        }
        let id: u64 = c
            .memcg
            .parse()
            .map_err(|_| format!("`{}`: bad memcg_id", c.text))?;
        self.memcgs
            .iter()
            .position(|g| g.id as u64 == id)
            .map(|i| i as MemcgId)
            .ok_or_else(|| format!("`{}`: no memcg with id {id}", c.text))
    }

    /// Runs one parsed command now; the result as the log shows it.
    pub fn lru_gen_run_command(&mut self, c: &LruGenCommand) -> Result<String, String> {
        let m = self.lru_gen_memcg(c)?;
        match c.op {
            LruGenOp::Age { force_scan } => self
                .lru_gen_run_aging(m, c.seq, c.swappiness, force_scan)
                .map(|()| "ok".to_string()),
            LruGenOp::Evict { nr_to_reclaim } => self
                .lru_gen_run_eviction(m, c.seq, c.swappiness, nr_to_reclaim)
                .map(|n| format!("ok, {n} pages reclaimed")),
        }
    }

    /// Schedules a write of `text` to the lru_gen file `path` ([`LRU_GEN_DEBUG`],
    /// [`LRU_GEN_ENABLED`], [`LRU_GEN_MIN_TTL`]) at simulated time `at` (ns):
    /// parsed and its groups checked now; run when the workload clock reaches
    /// `at`, its results logged in the report (a command's error, like the
    /// kernel's EINVAL/EEXIST to the writer, does not stop the run).
    pub fn schedule_lru_gen_write(
        &mut self,
        at: u64,
        path: &str,
        text: &str,
    ) -> Result<(), SimError> {
        if self.cfg.policy.name != crate::config::PolicyName::Mglru {
            return Err(SimError::Setup(format!("{path}: the policy is not mglru")));
        }
        let w = parse_lru_gen_file_write(path, text).map_err(SimError::Setup)?;
        if let LruGenFileWrite::Debug(cmds) = &w {
            for c in cmds {
                self.lru_gen_memcg(c).map_err(SimError::Setup)?;
            }
        }
        let i = self.lru_gen.pending.partition_point(|x| x.0 > at);
        self.lru_gen.pending.insert(i, (at, w));
        self.update_next_bg();
        Ok(())
    }

    /// Runs the lru_gen writes due by `now` (from `background()`).
    pub(crate) fn run_lru_gen_writes(&mut self, now: u64) {
        while self.lru_gen.pending.last().is_some_and(|w| w.0 <= now) {
            let (_, w) = self.lru_gen.pending.pop().expect("checked");
            let t = self.clock as f64 / 1e9;
            match w {
                LruGenFileWrite::Debug(cmds) => {
                    for c in cmds {
                        let result = match self.lru_gen_run_command(&c) {
                            Ok(r) => r,
                            Err(e) => format!("error: {e}"),
                        };
                        self.lru_gen.log.push(LruGenWriteLog {
                            t,
                            command: c.text.clone(),
                            result,
                        });
                    }
                }
                LruGenFileWrite::Enabled(caps) => {
                    let moved = self.lru_gen_set_enabled(caps);
                    self.lru_gen.log.push(LruGenWriteLog {
                        t,
                        command: format!("{LRU_GEN_ENABLED} = {caps:#06x}"),
                        result: format!("ok, {moved} folios moved"),
                    });
                }
                LruGenFileWrite::MinTtlMs(ms) => {
                    self.lru_gen.min_ttl_ns = ms * 1_000_000;
                    self.lru_gen.log.push(LruGenWriteLog {
                        t,
                        command: format!("{LRU_GEN_MIN_TTL} = {ms}"),
                        result: "ok".into(),
                    });
                }
            }
        }
    }

    /// A write to /sys/kernel/mm/lru_gen/enabled (`enabled_store`): sets the
    /// capabilities; toggling the core bit switches the policy and moves
    /// every evictable folio (`lru_gen_change_state`): on, `fill_evictable`
    /// from the classic lists into generations by the insertion rule (active
    /// folios young); off, `drain_evictable` back onto the classic lists
    /// (folios of the two youngest generations active). Returns the number
    /// of folios moved.
    pub fn lru_gen_set_enabled(&mut self, caps: u32) -> u64 {
        let was = matches!(self.policy, Policy::Mglru(_));
        let core = caps & LRU_GEN_CORE != 0;
        self.lru_gen.enabled = caps;
        let mut moved = 0;
        if core && !was {
            self.policy = Policy::Mglru(self.lru_gen.version);
            for m in 0..self.memcgs.len() {
                for lru in LruList::EVICTABLE {
                    while let Some(f) =
                        self.memcgs[m].lruvec.lists[lru as usize].pop_tail(&mut self.folios)
                    {
                        self.lru_gen_add_folio(f, false);
                        moved += 1;
                    }
                }
            }
        } else if !core && was {
            for m in 0..self.memcgs.len() {
                for gen in 0..MAX_NR_GENS as usize {
                    for ty in [ANON, FILE] {
                        loop {
                            let f = self.memcgs[m].lruvec.lrugen.lists[gen][ty].tail;
                            if f == NIL {
                                break;
                            }
                            self.lru_gen_del_folio(f, false);
                            let lru = LruList::of_flags(self.folios[f].flags);
                            self.memcgs[m].lruvec.lists[lru as usize].push_head(
                                &mut self.folios,
                                f,
                                lru as u8,
                            );
                            moved += 1;
                        }
                    }
                }
            }
            self.policy = Policy::Classic(crate::sim::ClassicRules::current(
                self.cfg.policy.cost_variant,
            ));
        }
        moved
    }

    /// When the next scheduled debugfs write is due.
    pub(crate) fn next_lru_gen_write(&self) -> Option<u64> {
        self.lru_gen.pending.last().map(|w| w.0)
    }
}
