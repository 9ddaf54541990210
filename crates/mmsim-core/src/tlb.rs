//! The data TLB: translation caching, page walks and TLB flushes
//! (`[machine.tlb]`, off by default).
//!
//! The kernel does not run the TLB, the MMU does; but what the kernel maps
//! decides what one TLB entry covers, and the kernel flushes entries when it
//! changes a mapping. This module follows both:
//!
//! * **Where**: one TLB per simulated CPU (`machine.cpus`), with entries
//!   tagged by address space (x86 PCID since v4.14, arm64 ASIDs), so a
//!   context switch keeps them; task `t` runs on CPU `t % machine.cpus`
//!   (mmsim's CPUs are a fluid clock with no placement: pinned tasks, as
//!   will-it-scale's process mode runs them). Per CPU rather than per task
//!   because tasks sharing a core also share its TLB.
//! * **Geometry** (defaults: Intel Golden Cove, the P-core of Alder Lake and
//!   Sapphire Rapids, Intel's optimization reference manual; the 96-entry
//!   L1 is confirmed by public reviews, the ways and 2 MiB counts are
//!   \[U\], not re-checked here): an L1 dTLB of 96 entries for 4 KiB pages
//!   (6-way) and 32 for 2 MiB (4-way), and a second-level STLB of 2048
//!   entries (16-way) shared by 4 KiB and 2 MiB pages. Every size is a
//!   knob. Sets are selected by the low bits of the virtual page number at
//!   the entry's size (plus a per-VMA offset, mmsim having no addresses);
//!   LRU within a set.
//! * **What one entry covers** is read from the page table at the walk:
//!   a PMD mapping (a PMD-order folio mapped whole: an anonymous THP of
//!   `do_huge_pmd_anonymous_page` or a collapse, a page-cache folio of
//!   `do_set_pmd`, or the huge zero page) is one 2 MiB entry; a PTE mapping
//!   is one 4 KiB entry, except that with `contpte` (arm64's contiguous bit,
//!   v6.9+ `contpte_set_ptes` / `__contpte_try_fold`) 16 PTEs of one large
//!   folio, aligned virtually and physically, all present and with the same
//!   permissions (mmsim's write-enable is the PTE dirty bit), are one 64 KiB
//!   entry; and with `pte_coalescing` (AMD Zen's hardware coalescing of four
//!   4 KiB PTEs whose page frames are contiguous and 16 KiB-aligned, with
//!   the same attributes, into one entry; no kernel involvement; \[U\]:
//!   described in AMD's software optimization guides for family 17h on,
//!   which entry levels use it is not confirmed) four pages are one 16 KiB
//!   entry. The walk decides the size from mmsim's PTEs: a PMD-order folio
//!   not partially mapped whose first and last PTEs of its aligned 2 MiB map
//!   it counts as PMD-mapped (checked at both ends, not all 512).
//! * **Cost**: a load that misses the L1 but hits the STLB costs
//!   `cost.tlb_miss_ns`, one that misses both a page walk,
//!   `cost.page_walk_ns` (user time: the hardware walks). A fault ends with
//!   the retried access, which walks (the faulting translation is never
//!   cached).
//! * **Flushes** (x86 `flush_tlb_mm_range`, arch/x86/mm/tlb.c v6.x): a range
//!   of more than `tlb_single_page_flush_ceiling` (33) pages flushes the whole
//!   address space (`nr_tlb_local_flush_all`), a smaller one each page
//!   (`nr_tlb_local_flush_one` per page); done for another CPU (khugepaged,
//!   kcompactd, kswapd) it counts `nr_tlb_remote_flush` there and
//!   `nr_tlb_remote_flush_received` on the CPU flushed. These vmstat items
//!   exist only with CONFIG_DEBUG_TLBFLUSH; mmsim reports them in the TLB
//!   report, not in its /proc/vmstat. Flushed: MADV_DONTNEED and munmap
//!   (the zapped range's present PTEs, `tlb_finish_mmu`), the write fault on
//!   the zero page and on a page-cache page of a private file mapping
//!   (`ptep_clear_flush`, one page), `folio_mkclean` at writeback (one page
//!   per shared PTE it cleans; a PMD once, by `pmdp_invalidate`, which on
//!   x86 is a full flush: `flush_pmd_tlb_range` falls back to
//!   `flush_tlb_range` at page stride, 512 pages over the ceiling; local
//!   for the mappings of the task whose own `fsync`/`sync_file_range`
//!   writes the folio, remote for other tasks' and for the flusher's
//!   kworker), a store through a write-protected file PMD (its split
//!   zaps it: `pmdp_huge_clear_flush`, a local full flush; the same split in
//!   reclaim's `try_to_unmap`, remote from kswapd or kdamond, and of a
//!   PMD a zap covers only in part), an OOM kill's zap (the oom_reaper's
//!   `tlb_finish_mmu`, per VMA), a fork's write-protection of the parent's
//!   PTEs (`dup_mmap` ends with `flush_tlb_mm`: one full flush per fork,
//!   whatever it copied), the huge zero PMD's split
//!   and a collapse (`pmdp_collapse_flush`, 512 pages: a full flush); reclaim
//!   and compaction batch theirs (`try_to_unmap` with TTU_BATCH_FLUSH,
//!   `arch_tlbbatch_add_pending`) and flush every marked CPU whole once per
//!   `shrink_folio_list` or `migrate_pages` (`try_to_unmap_flush`); a split of
//!   a mapped large folio flushes at once (`unmap_folio`). A zap that
//!   clears only page-cache PMDs covered whole flushes at PMD stride (one
//!   entry a PMD, `tlb_get_unmap_shift`). Known departures: the flushing
//!   CPU is taken to be the flushed one (direct reclaim by one task of
//!   another's pages counts local), exit flushes per VMA (the kernel's
//!   `exit_mmap` once), contpte's "same permissions" is the same dirty
//!   bit (arm64 keeps a block folded through `contpte_ptep_set_access_flags`),
//!   and a task is one mm on one CPU, so a local flush sends no IPI to
//!   other CPUs of its `mm_cpumask` (threads are not modelled).
//!
//! Counters are named after perf's generic events where the kernel has
//! none: `dtlb_loads` (`dTLB-loads`: every access), `dtlb_load_misses`
//! (`dTLB-load-misses` as Intel maps it, `DTLB_LOAD_MISSES.MISS_CAUSES_A_WALK`:
//! the loads that walk), `stlb_hits` (`DTLB_LOAD_MISSES.STLB_HIT`), and the
//! walks by the size they filled.
//!
//! Off (the default) the access path pays one test of `Sim::tlb`; on, a
//! lookup per access and no allocation: the arrays are allocated in
//! `Sim::new`.

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;
use crate::mem::folio::{flags, FolioId};
use crate::mem::pagetable::{TaskId, VmaId, VmaKind, PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT};
use crate::sim::Sim;

/// `[machine.tlb]`: the data TLB's geometry and options.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TlbConfig {
    /// Model the TLB (default false: no lookups, no counts).
    pub enabled: bool,
    /// L1 dTLB entries for 4 KiB pages (and 16/64 KiB coalesced ones).
    pub l1_entries: u32,
    /// Their ways.
    pub l1_ways: u32,
    /// L1 dTLB entries for 2 MiB pages.
    pub l1_2m_entries: u32,
    /// Their ways.
    pub l1_2m_ways: u32,
    /// STLB entries (4 KiB and coalesced pages; 2 MiB ones too with `stlb_2m`).
    pub stlb_entries: u32,
    /// Their ways.
    pub stlb_ways: u32,
    /// The STLB also holds 2 MiB entries (Golden Cove's does; Skylake's too).
    pub stlb_2m: bool,
    /// arm64's contiguous bit (`contpte`, v6.9+): 16 aligned PTEs of one
    /// large folio are one 64 KiB entry.
    pub contpte: bool,
    /// AMD-style PTE coalescing \[U\]: four PTEs of contiguous, aligned page
    /// frames are one 16 KiB entry.
    pub pte_coalescing: bool,
}

impl Default for TlbConfig {
    fn default() -> Self {
        TlbConfig {
            enabled: false,
            l1_entries: 96,
            l1_ways: 6,
            l1_2m_entries: 32,
            l1_2m_ways: 4,
            stlb_entries: 2048,
            stlb_ways: 16,
            stlb_2m: true,
            contpte: false,
            pte_coalescing: false,
        }
    }
}

impl TlbConfig {
    /// Whether it is the default (left out of the serialized machine).
    pub fn is_default(&self) -> bool {
        *self == TlbConfig::default()
    }

    /// Each array: ways in [1, 64], entries in [ways, 65536] and a multiple
    /// of the ways giving a power-of-two number of sets; and at most
    /// [`MAX_TLB_ENTRIES`] entries over all `cpus` (20 bytes each).
    pub(crate) fn validate(&self, cpus: u32) -> Result<(), ConfigError> {
        if self.enabled {
            let per_cpu = u64::from(self.l1_entries)
                + u64::from(self.l1_2m_entries)
                + u64::from(self.stlb_entries);
            let total = per_cpu * u64::from(cpus);
            if total > MAX_TLB_ENTRIES {
                return Err(ConfigError::new(
                    "machine.tlb",
                    format!(
                        "{per_cpu} entries per CPU on {cpus} CPUs is {total} entries, more than \
                         the {MAX_TLB_ENTRIES} mmsim allocates (fewer CPUs or smaller arrays)"
                    ),
                ));
            }
        }
        for (name, entries, ways) in [
            ("l1", self.l1_entries, self.l1_ways),
            ("l1_2m", self.l1_2m_entries, self.l1_2m_ways),
            ("stlb", self.stlb_entries, self.stlb_ways),
        ] {
            if !(1..=64).contains(&ways) {
                return Err(ConfigError::new(
                    format!("machine.tlb.{name}_ways"),
                    format!("{ways} is out of range [1, 64]"),
                ));
            }
            if !(1..=65536).contains(&entries) {
                return Err(ConfigError::new(
                    format!("machine.tlb.{name}_entries"),
                    format!("{entries} is out of range [1, 65536]"),
                ));
            }
            if entries % ways != 0 || !(entries / ways).is_power_of_two() {
                return Err(ConfigError::new(
                    format!("machine.tlb.{name}_entries"),
                    format!(
                        "{entries} entries in {ways} ways is not a power-of-two number of sets"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Most TLB entries over all simulated CPUs (`[machine.tlb]` is refused
/// above it): 2^24, 320 MiB of host memory.
pub(crate) const MAX_TLB_ENTRIES: u64 = 1 << 24;

/// An empty way.
const EMPTY: u64 = u64::MAX;
/// The folio of a coalesced 16 KiB entry, whose pages may be of several
/// folios: not checked at lookup (the flushes alone keep it true).
const ANY_FOLIO: FolioId = FolioId::MAX;
/// Page-size shifts of the entries: 4 KiB, 16 KiB, 64 KiB, 2 MiB.
const SHIFT_4K: u32 = 0;
const SHIFT_16K: u32 = 2;
const SHIFT_64K: u32 = 4;
const SHIFT_2M: u32 = 9;
const ALL_SHIFTS: [u32; 4] = [SHIFT_4K, SHIFT_16K, SHIFT_64K, SHIFT_2M];
/// `tlb_single_page_flush_ceiling` (arch/x86/mm/tlb.c): above it, a full flush.
const FLUSH_CEILING: u32 = 33;

/// An entry's tag: VMA, size and virtual page number at that size.
#[inline]
fn key(vma: VmaId, shift: u32, index: u32) -> u64 {
    (u64::from(vma) << 36) | (u64::from(shift) << 32) | u64::from(index >> shift)
}

#[inline]
fn key_vma(k: u64) -> VmaId {
    (k >> 36) as VmaId
}

/// One set-associative array of `ways` entries a set, LRU by use stamps.
#[derive(Clone, Debug)]
struct Level {
    ways: usize,
    set_mask: u64,
    keys: Vec<u64>,
    folios: Vec<FolioId>,
    /// When each entry was last used (`clock` then; 0: empty).
    stamps: Vec<u64>,
    clock: u64,
}

impl Level {
    fn new(entries: u32, ways: u32) -> Level {
        Level {
            ways: ways as usize,
            set_mask: u64::from(entries / ways) - 1,
            keys: vec![EMPTY; entries as usize],
            folios: vec![0; entries as usize],
            stamps: vec![0; entries as usize],
            clock: 0,
        }
    }

    /// First way of `k`'s set (a per-VMA offset stands for its address).
    #[inline]
    fn set(&self, k: u64) -> usize {
        let vpn = k & 0xffff_ffff;
        ((vpn + u64::from(key_vma(k)).wrapping_mul(61)) & self.set_mask) as usize * self.ways
    }

    /// Looks `k` up; a hit on folio `f` becomes the most recent. An entry of
    /// another folio is stale (a flush mmsim missed, or a recycled folio
    /// id): dropped, and a miss. A coalesced entry matches any folio.
    #[inline]
    fn lookup(&mut self, k: u64, f: FolioId) -> bool {
        let s = self.set(k);
        let Some(w) = self.keys[s..s + self.ways].iter().position(|&x| x == k) else {
            return false;
        };
        let w = s + w;
        if self.folios[w] != f && self.folios[w] != ANY_FOLIO {
            self.drop_way(w);
            return false;
        }
        self.clock += 1;
        self.stamps[w] = self.clock;
        true
    }

    /// Inserts `k` as the most recent, in place of the least recently used
    /// way (an empty one has stamp 0, so it goes first).
    #[inline]
    fn insert(&mut self, k: u64, f: FolioId) {
        let s = self.set(k);
        let mut victim = s;
        let mut oldest = u64::MAX;
        for (w, &st) in self.stamps[s..s + self.ways].iter().enumerate() {
            if st < oldest {
                oldest = st;
                victim = s + w;
            }
        }
        self.clock += 1;
        self.keys[victim] = k;
        self.folios[victim] = f;
        self.stamps[victim] = self.clock;
    }

    #[inline]
    fn drop_way(&mut self, w: usize) {
        self.keys[w] = EMPTY;
        self.stamps[w] = 0;
    }

    /// INVLPG of one page: drops every entry (of any size) covering it.
    fn invalidate(&mut self, vma: VmaId, index: u32) {
        for sh in ALL_SHIFTS {
            let k = key(vma, sh, index);
            let s = self.set(k);
            for w in s..s + self.ways {
                if self.keys[w] == k {
                    self.drop_way(w);
                }
            }
        }
    }

    /// Drops every entry whose VMA `keep` rejects.
    fn retain(&mut self, mut keep: impl FnMut(VmaId) -> bool) {
        for w in 0..self.keys.len() {
            let k = self.keys[w];
            if k != EMPTY && !keep(key_vma(k)) {
                self.drop_way(w);
            }
        }
    }

    fn clear(&mut self) {
        self.keys.fill(EMPTY);
        self.stamps.fill(0);
    }
}

/// One CPU's TLBs.
#[derive(Clone, Debug)]
struct CpuTlb {
    l1: Level,
    l1_2m: Level,
    stlb: Level,
}

/// The TLB report (`RunResult::tlb`), when `[machine.tlb]` is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TlbReport {
    /// Loads looked up (perf `dTLB-loads`): every access to a present PTE.
    pub dtlb_loads: u64,
    /// L1 dTLB misses (arm64's `L1D_TLB_REFILL`, which perf's
    /// `dTLB-load-misses` counts there): STLB hits plus walks.
    pub l1_dtlb_misses: u64,
    /// L1 misses that hit the STLB (`DTLB_LOAD_MISSES.STLB_HIT`).
    pub stlb_hits: u64,
    /// Loads that walked the page table (perf `dTLB-load-misses` on Intel,
    /// `DTLB_LOAD_MISSES.MISS_CAUSES_A_WALK`).
    pub dtlb_load_misses: u64,
    /// Walks that filled a 4 KiB entry.
    pub walks_4k: u64,
    /// Walks that filled a 16 KiB (coalesced) entry.
    pub walks_16k: u64,
    /// Walks that filled a 64 KiB (contiguous-bit) entry.
    pub walks_64k: u64,
    /// Walks that filled a 2 MiB entry.
    pub walks_2m: u64,
    /// Time of STLB hits and walks, s (part of the runtime).
    pub tlb_miss_s: f64,
    /// `nr_tlb_local_flush_all` (CONFIG_DEBUG_TLBFLUSH).
    pub nr_tlb_local_flush_all: u64,
    /// `nr_tlb_local_flush_one`: pages flushed one by one.
    pub nr_tlb_local_flush_one: u64,
    /// `nr_tlb_remote_flush`: flush requests sent to other CPUs.
    pub nr_tlb_remote_flush: u64,
    /// `nr_tlb_remote_flush_received`: flushes CPUs received.
    pub nr_tlb_remote_flush_received: u64,
}

/// The machine's TLBs (`Sim::tlb`, present when `[machine.tlb]` is on).
#[derive(Clone, Debug)]
pub(crate) struct Tlb {
    cpus: Vec<CpuTlb>,
    /// Shifts the 4 KiB arrays hold.
    small: Vec<u32>,
    stlb_2m: bool,
    contpte: bool,
    coalescing: bool,
    /// CPUs marked by `arch_tlbbatch_add_pending`, not flushed yet.
    pending: Vec<bool>,
    pending_any: bool,
    /// The batch is flushed from another CPU (kswapd's, kcompactd's).
    pending_remote: bool,
    miss_ns: u64,
    pub(crate) stats: TlbReport,
}

impl Tlb {
    /// The TLBs of `cpus` CPUs, or None when `cfg` is off.
    pub(crate) fn new(cfg: &TlbConfig, cpus: u32) -> Option<Box<Tlb>> {
        if !cfg.enabled {
            return None;
        }
        let cpu = CpuTlb {
            l1: Level::new(cfg.l1_entries, cfg.l1_ways),
            l1_2m: Level::new(cfg.l1_2m_entries, cfg.l1_2m_ways),
            stlb: Level::new(cfg.stlb_entries, cfg.stlb_ways),
        };
        let mut small = vec![SHIFT_4K];
        if cfg.pte_coalescing {
            small.push(SHIFT_16K);
        }
        if cfg.contpte {
            small.push(SHIFT_64K);
        }
        let n = cpus.max(1) as usize;
        Some(Box::new(Tlb {
            cpus: vec![cpu; n],
            small,
            stlb_2m: cfg.stlb_2m,
            contpte: cfg.contpte,
            coalescing: cfg.pte_coalescing,
            pending: vec![false; n],
            pending_any: false,
            pending_remote: false,
            miss_ns: 0,
            stats: TlbReport::default(),
        }))
    }

    /// The report, with the time in ns converted.
    pub(crate) fn report(&self) -> TlbReport {
        TlbReport {
            tlb_miss_s: self.miss_ns as f64 / 1e9,
            ..self.stats
        }
    }

    /// Zeroes the counters (`Sim::begin_measurement`).
    pub(crate) fn reset_stats(&mut self) {
        self.stats = TlbReport::default();
        self.miss_ns = 0;
    }

    #[inline]
    fn cpu_of(&self, task: TaskId) -> usize {
        task as usize % self.cpus.len()
    }

    /// Drops every entry of `task`'s VMAs (`vmas`) from `cpu`'s TLBs: the
    /// full flush of `flush_tlb_mm_range()` (`TLB_FLUSH_ALL`, or a range
    /// over the ceiling). The caller counts it.
    fn flush_task_all(&mut self, vmas: &[crate::mem::pagetable::Vma], task: TaskId, cpu: usize) {
        let keep = |v: VmaId| vmas.get(v as usize).is_none_or(|x| x.task != task);
        let c = &mut self.cpus[cpu];
        c.l1.retain(keep);
        c.l1_2m.retain(keep);
        c.stlb.retain(keep);
    }
}

impl Sim {
    /// A load or store through the present PTE `pte` of page `index` of
    /// `vma`: the L1 dTLB, then the STLB, then a page walk that fills both
    /// with an entry of the size the page table gives (see the module
    /// overview). Called only with the TLB on.
    #[inline(never)]
    pub(crate) fn tlb_access(&mut self, vma: VmaId, index: u32, pte: u32) {
        let task = self.vmas[vma as usize].task;
        let f = pte & PTE_FOLIO_MASK;
        let Some(t) = self.tlb.as_mut() else {
            return;
        };
        t.stats.dtlb_loads += 1;
        let cpu = t.cpu_of(task);
        let c = &mut t.cpus[cpu];
        if c.l1_2m.lookup(key(vma, SHIFT_2M, index), f) {
            return;
        }
        for &sh in &t.small {
            if c.l1.lookup(key(vma, sh, index), f) {
                return;
            }
        }
        t.stats.l1_dtlb_misses += 1;
        let mut hit = None;
        if t.stlb_2m && c.stlb.lookup(key(vma, SHIFT_2M, index), f) {
            hit = Some(SHIFT_2M);
        }
        for &sh in &t.small {
            if hit.is_none() && c.stlb.lookup(key(vma, sh, index), f) {
                hit = Some(sh);
            }
        }
        let ns = if hit.is_some() {
            t.stats.stlb_hits += 1;
            self.cost.tlb_miss_ns
        } else {
            self.cost.page_walk_ns
        };
        let sh = match hit {
            Some(sh) => sh,
            None => self.walk_shift(vma, index, pte),
        };
        let t = self.tlb.as_mut().expect("on");
        t.miss_ns += ns;
        if hit.is_none() {
            t.stats.dtlb_load_misses += 1;
            match sh {
                SHIFT_2M => t.stats.walks_2m += 1,
                SHIFT_64K => t.stats.walks_64k += 1,
                SHIFT_16K => t.stats.walks_16k += 1,
                _ => t.stats.walks_4k += 1,
            }
        }
        let stlb_2m = t.stlb_2m;
        let c = &mut t.cpus[cpu];
        let k = key(vma, sh, index);
        let f = if sh == SHIFT_16K { ANY_FOLIO } else { f };
        if sh == SHIFT_2M {
            c.l1_2m.insert(k, f);
            if stlb_2m && hit.is_none() {
                c.stlb.insert(k, f);
            }
        } else {
            c.l1.insert(k, f);
            if hit.is_none() {
                c.stlb.insert(k, f);
            }
        }
        self.advance(ns);
    }

    /// The retried access after a fault on page `index` of `vma`: the
    /// fault dropped any entry for it (x86 invalidates the translation
    /// that faulted), then [`Sim::tlb_access`] if the PTE is present now.
    #[inline(never)]
    pub(crate) fn tlb_after_fault(&mut self, vma: VmaId, index: u32) {
        let Some(v) = self.vmas.get(vma as usize) else {
            return;
        };
        let (task, pte) = (v.task, v.pte(index));
        let Some(t) = self.tlb.as_mut() else {
            return;
        };
        let cpu = t.cpu_of(task);
        let c = &mut t.cpus[cpu];
        c.l1.invalidate(vma, index);
        c.l1_2m.invalidate(vma, index);
        c.stlb.invalidate(vma, index);
        if pte & PTE_PRESENT != 0 && !self.tasks[task as usize].dead {
            self.tlb_access(vma, index, pte);
        }
    }

    /// The page size (as a shift of 4 KiB) the page walk of page `index`
    /// of `vma`, mapped by present PTE `pte`, finds (see the module overview).
    fn walk_shift(&self, vma: VmaId, index: u32, pte: u32) -> u32 {
        let f = pte & PTE_FOLIO_MASK;
        let v = &self.vmas[vma as usize];
        if f == self.zero_folio {
            let pmd = (index >> SHIFT_2M) as usize;
            let huge = v
                .huge_zero_pmds
                .get(pmd / 64)
                .is_some_and(|w| w & (1 << (pmd % 64)) != 0);
            return if huge { SHIFT_2M } else { SHIFT_4K };
        }
        let Some(t) = self.tlb.as_deref() else {
            return SHIFT_4K;
        };
        let fo = &self.folios[f];
        // The folio's first page as a page index of the VMA: a page-cache
        // folio is indexed by file page, an anonymous one (a private file
        // mapping's copies too, `crate::cow`) by VMA page.
        let vstart = match v.kind {
            VmaKind::File { pgoff, .. } if fo.is_file() => i64::from(fo.index) - i64::from(pgoff),
            _ => i64::from(fo.index),
        };
        let n = 1i64 << fo.order();
        let covers = |b: u32, len: u32| {
            i64::from(b) >= vstart
                && i64::from(b) + i64::from(len) <= vstart + n
                && b + len <= v.len
        };
        // mmsim keeps no PMD bit: a whole order-9 folio mapped at an aligned
        // place by every one of this VMA's 512 PTEs is taken as PMD-mapped
        // (page-cache folios only with `fs.pmd_mappings`, without which
        // they are always mapped by PTEs). Decided from this VMA's own
        // PTEs, not the folio's PARTIALLY_MAPPED flag, which a partial zap
        // in another VMA of a fork family may set or (v6.12
        // `__folio_remove_rmap`) leave clear (`crate::madvise`). The ends
        // are compared first; the full scan runs only for a folio that is
        // mapped at both. Known overcount: an order-9 anonymous folio
        // mapped back by 512 PTEs from the swap cache still counts.
        let pmd_possible = !fo.is_file() || self.cfg.fs.pmd_mappings;
        if pmd_possible && u32::from(fo.order()) == SHIFT_2M {
            let b = index & !511;
            let maps_f = |p: u32| p & (PTE_PRESENT | PTE_FOLIO_MASK) == PTE_PRESENT | f;
            if i64::from(b) == vstart
                && covers(b, 512)
                && maps_f(v.pte(b))
                && maps_f(v.pte(b + 511))
                && (b + 1..b + 511).all(|i| maps_f(v.pte(i)))
            {
                return SHIFT_2M;
            }
        }
        if t.contpte && fo.order() >= 4 {
            let b = index & !15;
            // Physically aligned too: the folio is aligned to its order, so
            // the block's offset in it must be a multiple of 16.
            if covers(b, 16)
                && (i64::from(b) - vstart) % 16 == 0
                && (b..b + 16).all(|i| {
                    let p = v.pte(i);
                    let off = |i: u32| (i64::from(i) - vstart) as u32;
                    p & (PTE_PRESENT | PTE_FOLIO_MASK) == PTE_PRESENT | f
                        && self.pte_dirty_as_kernel(p, f, off(i))
                            == self.pte_dirty_as_kernel(pte, f, off(index))
                })
            {
                return SHIFT_64K;
            }
        }
        if t.coalescing {
            let b = index & !3;
            let index_off = (i64::from(index) - vstart) as u32;
            let pfn_of = |i: u32| -> Option<i64> {
                let p = v.pte(i);
                if p & PTE_PRESENT == 0 {
                    return None;
                }
                let g = p & PTE_FOLIO_MASK;
                if g == self.zero_folio {
                    return None;
                }
                let go = &self.folios[g];
                let gstart = match v.kind {
                    VmaKind::Anon => i64::from(go.index),
                    VmaKind::File { pgoff, .. } => i64::from(go.index) - i64::from(pgoff),
                };
                let off = (i64::from(i) - gstart) as u32;
                if self.pte_dirty_as_kernel(p, g, off)
                    != self.pte_dirty_as_kernel(pte, f, index_off)
                {
                    return None;
                }
                Some(i64::from(self.folios.head_pfn(g)) + i64::from(i) - gstart)
            };
            if b + 4 <= v.len {
                if let Some(p0) = pfn_of(b) {
                    if p0 % 4 == 0 && (1..4).all(|j| pfn_of(b + j) == Some(p0 + i64::from(j))) {
                        return SHIFT_16K;
                    }
                }
            }
        }
        SHIFT_4K
    }

    /// The dirty bit of present PTE `p` (page `off` of folio `g`) as the
    /// kernel has it: a clean PTE over a large folio's zero-filled page
    /// under the 6.12 content bits is dirty there (`crate::split_zeropage`),
    /// except over a folio in the swap cache or shared by fork: those are
    /// excluded and the PTE's own bit is returned.
    fn pte_dirty_as_kernel(&self, p: u32, g: FolioId, off: u32) -> bool {
        if p & PTE_DIRTY != 0 || !self.thp.content.on || g == self.zero_folio {
            return p & PTE_DIRTY != 0;
        }
        let go = &self.folios[g];
        go.order() > 0
            && !go.is_file()
            && !go.test(flags::SWAPCACHE)
            && !self.folio_anon_shared(g)
            && off < 1 << go.order()
            && !self.thp.content.test(self.folios.head_pfn(g) + off)
    }

    /// `flush_tlb_mm_range()` (arch/x86/mm/tlb.c, v6.x) of pages `[lo, hi)`
    /// of `vma` on its task's CPU, done by that CPU (`remote` false) or
    /// another (see the module overview for the counts).
    pub(crate) fn flush_tlb_range(&mut self, vma: VmaId, lo: u32, hi: u32, remote: bool) {
        if self.tlb.is_none() || hi <= lo {
            return;
        }
        let task = self.vmas[vma as usize].task;
        let vmas = &self.vmas;
        let t = self.tlb.as_mut().expect("on");
        let cpu = t.cpu_of(task);
        let nr = hi - lo;
        if nr > FLUSH_CEILING {
            t.flush_task_all(vmas, task, cpu);
            if !remote {
                t.stats.nr_tlb_local_flush_all += 1;
            }
        } else {
            let c = &mut t.cpus[cpu];
            for i in lo..hi {
                c.l1.invalidate(vma, i);
                c.l1_2m.invalidate(vma, i);
                c.stlb.invalidate(vma, i);
            }
            if !remote {
                t.stats.nr_tlb_local_flush_one += u64::from(nr);
            }
        }
        if remote {
            t.stats.nr_tlb_remote_flush += 1;
            t.stats.nr_tlb_remote_flush_received += 1;
        }
    }

    /// `flush_pmd_tlb_range()` of the PMD mapping pages `[base, base +
    /// 512)` of `vma` (`pmdp_invalidate` in `folio_mkclean`,
    /// `pmdp_huge_clear_flush` in a file PMD's split, mm/pgtable-generic.c;
    /// the fallback in include/linux/pgtable.h, v6.12). x86 does not define `__HAVE_ARCH_FLUSH_PMD_TLB_RANGE`
    /// (arm64, powerpc and arc do), so the generic fallback runs:
    /// `flush_tlb_range()`, whose stride is `PAGE_SHIFT` for a VMA that is
    /// not hugetlb; 512 pages are over `tlb_single_page_flush_ceiling`, so
    /// it is one full flush of the address space (`nr_tlb_local_flush_all`,
    /// or one remote flush sent and received), as [`Sim::flush_tlb_range`]
    /// counts it. (An mmu_gather's zap tracks `cleared_pmds` and flushes
    /// with PMD stride instead: `tlb_get_unmap_shift`.)
    pub(crate) fn flush_pmd_tlb_range(&mut self, vma: VmaId, base: u32, remote: bool) {
        self.flush_tlb_range(vma, base, base + 512, remote);
    }

    /// `flush_tlb_mm()` of `task`'s address space (x86: `flush_tlb_mm_range`
    /// over `TLB_FLUSH_ALL`, arch/x86/include/asm/tlbflush.h, v6.x): every
    /// entry of the task on its CPU goes, counted as one
    /// `nr_tlb_local_flush_all` (mmsim's task runs on one CPU, so no other
    /// CPU of its `mm_cpumask` is sent one). `dup_mmap` ends with it.
    pub(crate) fn flush_tlb_mm(&mut self, task: TaskId) {
        let vmas = &self.vmas;
        let Some(t) = self.tlb.as_mut() else {
            return;
        };
        let cpu = t.cpu_of(task);
        t.flush_task_all(vmas, task, cpu);
        t.stats.nr_tlb_local_flush_all += 1;
    }

    /// The flush of MADV_DONTNEED's (or exit's) zap of `[lo, hi)` of
    /// `vma` (`tlb_finish_mmu` → `tlb_flush_mmu` → x86
    /// `flush_tlb_mm_range`, v6.12): over the range from the first to the
    /// last entry cleared (nothing when none was present), at the stride
    /// `tlb_get_unmap_shift` gives: page stride if any PTE was cleared,
    /// PMD stride if only page-cache PMDs covered whole were
    /// (`zap_huge_pmd`'s `tlb_remove_pmd_tlb_entry`: one zapped PMD is one
    /// `nr_tlb_local_flush_one`, not 512 pages over the ceiling). A PMD the
    /// range covers in part is split, which flushes it itself
    /// (`crate::filemap_pmd`), and is left out. Call before zapping.
    pub(crate) fn tlb_zap_range(&mut self, vma: VmaId, lo: u32, hi: u32) {
        if self.tlb.is_none() {
            return;
        }
        let v = &self.vmas[vma as usize];
        let top = hi.min(v.ptes.len() as u32);
        let (mut first, mut last, mut ptes) = (u32::MAX, 0u32, false);
        let mut i = lo;
        while i < top {
            let pmd = i >> SHIFT_2M;
            if !v.file_pmds.is_empty() && v.file_pmd(pmd) {
                let (s, e) = (pmd << SHIFT_2M, (pmd + 1) << SHIFT_2M);
                if lo <= s && hi >= e {
                    first = first.min(s);
                    last = last.max(e - 1);
                }
                i = e;
                continue;
            }
            if v.ptes[i as usize] & PTE_PRESENT != 0 {
                first = first.min(i);
                last = last.max(i);
                ptes = true;
            }
            i += 1;
        }
        if first == u32::MAX {
            return;
        }
        if ptes {
            self.flush_tlb_range(vma, first, last + 1, false);
        } else {
            self.flush_tlb_range_pmd_stride(vma, first, last + 1);
        }
    }

    /// `flush_tlb_mm_range()` at PMD stride (`stride_shift` PMD_SHIFT,
    /// arch/x86/mm/tlb.c v6.12) of pages `[lo, hi)` of `vma`, a multiple of
    /// PMDs, from its task's CPU: `(hi - lo) / 512` entries, each one
    /// `nr_tlb_local_flush_one`, or a full flush above the ceiling.
    fn flush_tlb_range_pmd_stride(&mut self, vma: VmaId, lo: u32, hi: u32) {
        let task = self.vmas[vma as usize].task;
        let vmas = &self.vmas;
        let t = self.tlb.as_mut().expect("on");
        let cpu = t.cpu_of(task);
        let nr = (hi - lo) >> SHIFT_2M;
        if nr > FLUSH_CEILING {
            t.flush_task_all(vmas, task, cpu);
            t.stats.nr_tlb_local_flush_all += 1;
            return;
        }
        let c = &mut t.cpus[cpu];
        for i in lo..hi {
            c.l1.invalidate(vma, i);
            c.l1_2m.invalidate(vma, i);
            c.stlb.invalidate(vma, i);
        }
        t.stats.nr_tlb_local_flush_one += u64::from(nr);
    }

    /// `arch_tlbbatch_add_pending()` for a folio about to be unmapped by
    /// reclaim or migration (`fo`, copied before): marks the CPU of the task
    /// mapping it (anonymous) or every CPU (a file folio may be mapped by
    /// any task). Flushed by [`Sim::try_to_unmap_flush`].
    pub(crate) fn tlb_batch_add(&mut self, fo: &crate::mem::folio::Folio) {
        let Some(t) = self.tlb.as_deref() else {
            return;
        };
        let cpu = if fo.is_file() {
            None
        } else {
            self.vmas.get(fo.space as usize).map(|v| t.cpu_of(v.task))
        };
        let t = self.tlb.as_mut().expect("on");
        match cpu {
            Some(c) => t.pending[c] = true,
            None => t.pending.fill(true),
        }
        t.pending_any = true;
    }

    /// Whether batched flushes are done from another CPU than the
    /// workload's (kswapd): set at the start of `shrink_folio_list`, cleared
    /// at its end.
    #[inline]
    pub(crate) fn tlb_batch_from(&mut self, remote: bool) {
        if let Some(t) = self.tlb.as_mut() {
            t.pending_remote = remote;
        }
    }

    /// `try_to_unmap_flush()` → `arch_tlbbatch_flush()`: every marked CPU's
    /// TLB flushed whole; counted as one local full flush, or (from kswapd's
    /// or kcompactd's CPU, `remote`, or the batch's own mark) one remote flush
    /// received by each marked CPU.
    #[inline]
    pub(crate) fn try_to_unmap_flush(&mut self, remote: bool) {
        let Some(t) = self.tlb.as_mut() else {
            return;
        };
        let remote = remote || t.pending_remote;
        if !t.pending_any {
            return;
        }
        t.pending_any = false;
        let mut n = 0;
        for (c, p) in t.cpus.iter_mut().zip(t.pending.iter_mut()) {
            if *p {
                c.l1.clear();
                c.l1_2m.clear();
                c.stlb.clear();
                *p = false;
                n += 1;
            }
        }
        if remote {
            t.stats.nr_tlb_remote_flush += 1;
            t.stats.nr_tlb_remote_flush_received += n;
        } else {
            t.stats.nr_tlb_local_flush_all += 1;
            if n > 1 {
                t.stats.nr_tlb_remote_flush += 1;
                t.stats.nr_tlb_remote_flush_received += n - 1;
            }
        }
    }

    /// `unmap_folio()` of a mapped large folio about to be split: its own
    /// batch, flushed at once.
    pub(crate) fn tlb_unmap_folio(&mut self, fo: &crate::mem::folio::Folio) {
        if self.tlb.is_some() && fo.mapcount > 0 {
            self.tlb_batch_add(fo);
            self.try_to_unmap_flush(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_conflict_evicts_the_least_recent_way() {
        // 2 sets of 2 ways: pages 0, 2, 4 of VMA 0 share set 0.
        let mut l = Level::new(4, 2);
        l.insert(key(0, 0, 0), 1);
        l.insert(key(0, 0, 2), 2);
        assert!(l.lookup(key(0, 0, 0), 1)); // 0 most recent now
        l.insert(key(0, 0, 4), 3); // evicts 2
        assert!(!l.lookup(key(0, 0, 2), 2));
        assert!(l.lookup(key(0, 0, 0), 1));
        assert!(l.lookup(key(0, 0, 4), 3));
        // Another set is untouched.
        l.insert(key(0, 0, 1), 4);
        assert!(l.lookup(key(0, 0, 1), 4));
        // A stale entry (another folio) misses and is dropped.
        assert!(!l.lookup(key(0, 0, 1), 5));
        assert!(!l.lookup(key(0, 0, 1), 4));
    }

    #[test]
    fn validation_names_the_field_and_range() {
        let c = TlbConfig {
            stlb_ways: 0,
            ..Default::default()
        };
        let e = c.validate(1).unwrap_err();
        assert_eq!(e.field, "machine.tlb.stlb_ways");
        let c = TlbConfig {
            l1_entries: 100,
            ..Default::default()
        };
        let e = c.validate(1).unwrap_err();
        assert_eq!(e.field, "machine.tlb.l1_entries");
        // 72 entries in 6 ways: 12 sets, not a power of two.
        let c = TlbConfig {
            l1_entries: 72,
            ..Default::default()
        };
        let e = c.validate(1).unwrap_err();
        assert!(
            e.to_string().contains("not a power-of-two number of sets"),
            "{e}"
        );
        assert!(TlbConfig::default().validate(1).is_ok());
        // The default arrays (2,176 entries per CPU) on 4,096 CPUs: 8.9 M
        // entries, allowed; the largest arrays on 4,096 CPUs are not.
        let on = TlbConfig {
            enabled: true,
            ..Default::default()
        };
        assert!(on.validate(4096).is_ok());
        let big = TlbConfig {
            enabled: true,
            stlb_entries: 65536,
            ..Default::default()
        };
        assert_eq!(big.validate(4096).unwrap_err().field, "machine.tlb");
        assert!(big.validate(200).is_ok());
    }
}
