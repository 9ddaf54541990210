//! The CPU cost model: simulated nanoseconds charged per event.
//!
//! mmsim does not measure time, it assigns it. Every access, fault, scanned
//! folio and reverse-map step costs CPU time on the simulated CPU of whoever
//! does it (the workload task, or kswapd); device IO costs latency plus
//! transfer time on the device (see [`crate::config::DeviceConfig`]). Runtime,
//! throughput, kswapd CPU and PSI stall times all come from these numbers.
//!
//! Defaults are order-of-magnitude figures for a current x86-64 server, from
//! where each is documented on its field. They are knobs: a user who has
//! measured their machine (e.g. with `perf trace` or the groundtruth scripts)
//! overrides them in the scenario's `[machine.cost]` table.

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;

/// Simulated CPU costs in nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostModel {
    /// User CPU per memory access that hits (the workload's own work between
    /// references). 50 ns: a cache-missing load plus a little computation.
    pub access_ns: u64,
    /// Buffered read/write of one resident 4 KiB page through a file
    /// descriptor: syscall entry plus a 4 KiB copy (≈ 0.5 µs, `perf bench` of
    /// pread on a cached file).
    pub fd_access_ns: u64,
    /// Minor page fault: exception, page allocation, zeroing, PTE install,
    /// memcg charge (≈ 1 µs for a 4 KiB anon fault, will-it-scale page_fault1).
    pub minor_fault_ns: u64,
    /// CPU of a major fault or page-cache miss beyond the device wait:
    /// allocation, page-cache insertion, bio submission and completion (≈ 2 µs).
    pub major_fault_ns: u64,
    /// Reclaim CPU per folio isolated and examined on an LRU list
    /// (isolate_lru_folios + shrink_folio_list bookkeeping, ≈ 100 ns).
    pub scan_ns: u64,
    /// Reclaim CPU per reverse-map step: one page_vma_mapped_walk of one VMA
    /// mapping a folio (folio_referenced / try_to_unmap, ≈ 150 ns, dominated
    /// by cache misses on the page table).
    pub rmap_ns: u64,
    /// Reclaim CPU to free one folio: page-cache or swap-cache removal, shadow
    /// store, uncharge, return to the buddy allocator (≈ 150 ns).
    pub free_ns: u64,
    /// CPU to start writeback of one page (swap slot allocation, bio
    /// submission; zram compression is in the device's write latency), ≈ 1 µs.
    pub pageout_ns: u64,
    /// Reclaim CPU per PTE examined by the multi-gen LRU's page-table walk
    /// (`walk_pte_range`) or look-around (`lru_gen_look_around`): a
    /// sequential read of a PTE already in cache plus the young test
    /// (≈ 10 ns; the walk reads 512 PTEs of a table in a row, unlike the
    /// rmap's one page-table descent per mapping).
    #[serde(default = "default_pte_walk_ns")]
    pub pte_walk_ns: u64,
    /// Time `lruvec->lru_lock` is held per folio moved onto, off or within
    /// an LRU list under it (`folio_batch_move_lru`, `isolate_lru_folios`,
    /// `move_folios_to_lru`, MGLRU's `scan_folios`): the list and flag
    /// updates of one folio, whose struct page line and list neighbours are
    /// usually cache misses (≈ 50 ns, half of `scan_ns`). Part of the CPU
    /// costs above, not added to them: it only decides how long other CPUs
    /// wait when `machine.cpus` > 1.
    #[serde(default = "default_lru_lock_ns")]
    pub lru_lock_ns: u64,
    /// Time per `lru_lock` acquisition for the lock's cache line to move to
    /// the acquiring CPU and the irq-disabling lock/unlock pair (≈ 100 ns on
    /// one socket of a current server). Per-CPU batches (`folio_batch`,
    /// 15 folios) share one acquisition. Counted only when `machine.cpus` > 1.
    #[serde(default = "default_lru_lock_acquire_ns")]
    pub lru_lock_acquire_ns: u64,
    /// CPU to zero one more 4 KiB page of a large folio at an anonymous
    /// fault (`folio_zero_user` → `clear_page_erms`: a 4 KiB streaming store
    /// at ≈ 25 GB/s, ≈ 150 ns); `minor_fault_ns` already holds the first
    /// page's. Only large folios (`crate::huge_memory`) pay it.
    #[serde(default = "default_clear_page_ns")]
    pub clear_page_ns: u64,
    /// A load that misses the L1 dTLB and hits the STLB (`crate::tlb`,
    /// only with `[machine.tlb]`): ≈ 7 cycles on Golden Cove at ≈ 3.5 GHz, 2 ns.
    #[serde(
        default = "default_tlb_miss_ns",
        skip_serializing_if = "is_tlb_miss_default"
    )]
    pub tlb_miss_ns: u64,
    /// A load that misses the STLB: a page walk whose upper levels hit the
    /// paging-structure caches and whose leaf PTE comes from L2/L3 (≈ 100
    /// cycles, 30 ns; a walk missing to DRAM costs ≈ 3× more). An estimate;
    /// only with `[machine.tlb]`.
    #[serde(
        default = "default_page_walk_ns",
        skip_serializing_if = "is_page_walk_default"
    )]
    pub page_walk_ns: u64,
}

fn default_tlb_miss_ns() -> u64 {
    2
}

fn default_page_walk_ns() -> u64 {
    30
}

fn is_tlb_miss_default(v: &u64) -> bool {
    *v == default_tlb_miss_ns()
}

fn is_page_walk_default(v: &u64) -> bool {
    *v == default_page_walk_ns()
}

fn default_clear_page_ns() -> u64 {
    150
}

fn default_lru_lock_ns() -> u64 {
    50
}

fn default_lru_lock_acquire_ns() -> u64 {
    100
}

fn default_pte_walk_ns() -> u64 {
    10
}

/// Where reclaim CPU went, by the kernel functions a profile of kswapd
/// shows (seed 000's kswapd profiles), in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReclaimProfile {
    /// LRU list work: isolation, sorting, putback (`isolate_lru_folios`,
    /// `scan_folios`, `sort_folio`, `shrink_folio_list` bookkeeping).
    pub lru_ns: u64,
    /// Reverse-map walks: `page_vma_mapped_walk` per mapping visited by
    /// `folio_referenced` and `try_to_unmap`.
    pub rmap_ns: u64,
    /// Page-table scanning of the multi-gen LRU: aging's `walk_mm` and
    /// eviction's `lru_gen_look_around`, per PTE.
    pub pt_walk_ns: u64,
    /// Freeing (`__remove_mapping`, `free_unref_folios`).
    pub free_ns: u64,
    /// Writeback submission (`pageout`).
    pub pageout_ns: u64,
    /// Synchronous swap-device work done on the reclaimer's CPU: zram
    /// compression (`lzo1x_1_do_compress`, `zram_bvec_write`).
    pub compress_ns: u64,
    /// Spinning on a contended `lruvec->lru_lock` (`do_raw_spin_lock`,
    /// `_raw_spin_lock_irq`); only with `machine.cpus` > 1.
    #[serde(default)]
    pub lock_ns: u64,
    /// page_vma_mapped_walk calls.
    pub rmap_walks: u64,
    /// PTEs examined by page-table walks and look-around.
    pub ptes_walked: u64,
}

impl ReclaimProfile {
    /// Adds another profile.
    pub(crate) fn add(&mut self, o: &ReclaimProfile) {
        self.lru_ns += o.lru_ns;
        self.rmap_ns += o.rmap_ns;
        self.pt_walk_ns += o.pt_walk_ns;
        self.free_ns += o.free_ns;
        self.pageout_ns += o.pageout_ns;
        self.compress_ns += o.compress_ns;
        self.lock_ns += o.lock_ns;
        self.rmap_walks += o.rmap_walks;
        self.ptes_walked += o.ptes_walked;
    }
    /// Total CPU, ns.
    pub fn total_ns(&self) -> u64 {
        self.lru_ns
            + self.rmap_ns
            + self.pt_walk_ns
            + self.free_ns
            + self.pageout_ns
            + self.compress_ns
            + self.lock_ns
    }
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            access_ns: 50,
            fd_access_ns: 500,
            minor_fault_ns: 1000,
            major_fault_ns: 2000,
            scan_ns: 100,
            rmap_ns: 150,
            free_ns: 150,
            pageout_ns: 1000,
            pte_walk_ns: default_pte_walk_ns(),
            lru_lock_ns: default_lru_lock_ns(),
            lru_lock_acquire_ns: default_lru_lock_acquire_ns(),
            clear_page_ns: default_clear_page_ns(),
            tlb_miss_ns: default_tlb_miss_ns(),
            page_walk_ns: default_page_walk_ns(),
        }
    }
}

impl CostModel {
    /// Every cost must be at most one second; zero is allowed (to switch a cost off).
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        for (name, v) in [
            ("access_ns", self.access_ns),
            ("fd_access_ns", self.fd_access_ns),
            ("minor_fault_ns", self.minor_fault_ns),
            ("major_fault_ns", self.major_fault_ns),
            ("scan_ns", self.scan_ns),
            ("rmap_ns", self.rmap_ns),
            ("free_ns", self.free_ns),
            ("pageout_ns", self.pageout_ns),
            ("pte_walk_ns", self.pte_walk_ns),
            ("lru_lock_ns", self.lru_lock_ns),
            ("lru_lock_acquire_ns", self.lru_lock_acquire_ns),
            ("clear_page_ns", self.clear_page_ns),
            ("tlb_miss_ns", self.tlb_miss_ns),
            ("page_walk_ns", self.page_walk_ns),
        ] {
            if v > 1_000_000_000 {
                return Err(ConfigError::new(
                    format!("machine.cost.{name}"),
                    format!("{v} is out of range [0, 1000000000] ns"),
                ));
            }
        }
        Ok(())
    }
}

/// Memory compaction (`crate::compaction`): CPU per page a scanner looks at: reading one `struct page` (64 bytes,
/// sequential, so prefetched: a few ns) plus the per-page checks. An
/// estimate, 10 ns; the kernel's scanners cover on the order of 100 M
/// pages/s when they find nothing to do.
pub(crate) const COMPACT_SCAN_NS: u64 = 10;
/// CPU per page migrated: isolation, the rmap walk that unmaps it and
/// installs migration entries, a TLB flush, the 4 KiB copy (≈ 300 ns at
/// ≈ 13 GB/s) and the remap. An estimate, 2 µs (≈ 2 GB/s of base pages,
/// the order `migrate_pages` reaches single-threaded on x86).
pub(crate) const MIGRATE_PAGE_NS: u64 = 2_000;
