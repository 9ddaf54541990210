//! What a run reports: [`RunResult`], returned by `Sim::finish`, and the
//! workload's access counters ([`AccessStats`]) it includes.

use serde::{Deserialize, Serialize};

use crate::psi::PsiReport;
use crate::stats::Vmstat;

/// Access outcome counters of the workload.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessStats {
    /// Events that touched memory (Access, FileRead, FileWrite).
    pub accesses: u64,
    /// Accesses that found the page resident.
    pub hits: u64,
    /// Accesses that found the page not resident (first touch, swapped out,
    /// evicted). For a buffered read, a page-cache lookup that found nothing
    /// and had to wait for a synchronous read; pages readahead brought in
    /// with it count as hits when the read reaches them.
    pub misses: u64,
    /// File pages read from the filesystem device into the page cache
    /// (requested pages and readahead alike).
    #[serde(default)]
    pub file_pages_read: u64,
    /// Events rejected because they named a page beyond the end of a VMA or file.
    pub out_of_range: u64,
    /// Events dropped because their task had been OOM-killed.
    pub dropped_killed: u64,
    /// Reads and closes through a closed descriptor (`Event::FdRead`,
    /// `Event::FdClose`): each fails with `EBADF` and is not simulated
    /// (`crate::open`). Absent from the JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bad_fd: u64,
}

/// Refault distances quantised by the shadow entries' width
/// (`RunResult::shadow_quantised`): mmsim keeps 31 bits per shadow, shared
/// between the memcg id and the eviction timestamp, so a machine with many
/// groups and much memory steps its timestamps by `2^bucket_order` pages
/// (`workingset_init`'s rule), where a 64-bit kernel, with at least 36
/// timestamp bits, is exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShadowQuantised {
    /// `bucket_order`: log2 of the pages one timestamp step stands for.
    pub bucket_order: u32,
    /// Timestamp bits of a shadow (`EVICTION_BITS`).
    pub eviction_bits: u32,
    /// Memcg id bits of a shadow (enough for every group configured).
    pub memcg_id_bits: u32,
}

/// Everything a run reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Policy name.
    pub policy: String,
    /// Accesses, hits, misses.
    #[serde(flatten)]
    pub access: AccessStats,
    /// misses / accesses.
    pub miss_ratio: f64,
    /// /proc/vmstat counters.
    pub vmstat: Vmstat,
    /// /proc/pressure/memory.
    pub psi: PsiReport,
    /// Simulated wall time of the workload, seconds.
    pub runtime_s: f64,
    /// Accesses per simulated second.
    pub throughput: f64,
    /// kswapd CPU time, seconds.
    pub kswapd_cpu_s: f64,
    /// Time the workload spent in direct or memcg reclaim, seconds.
    pub reclaim_stall_s: f64,
    /// Time the workload waited for IO, seconds.
    pub io_wait_s: f64,
    /// Charged pages of the workload memcg at the end, and its limit.
    pub memcg_usage_pages: u64,
    /// `memory.max` in pages, if set.
    pub memcg_max_pages: Option<u64>,
    /// Times a charge found the group at `memory.max`.
    pub memcg_max_events: u64,
    /// Every memory cgroup by path (`/`, `/a`, …): `memory.current`,
    /// `memory.max`, `memory.events` and `memory.stat`, hierarchical.
    #[serde(default)]
    pub memcg: std::collections::BTreeMap<String, crate::memcg::MemcgReport>,
    /// Watermarks in pages: min, low, high.
    pub watermarks: [u64; 3],
    /// `/proc/buddyinfo` of the zone at the end: free blocks per order 0..=10
    /// (the per-CPU lists' pages are not in it, as in the kernel).
    #[serde(default)]
    pub buddyinfo: [u64; crate::page_alloc::NR_PAGE_ORDERS],
    /// `/proc/pagetypeinfo` of the zone at the end.
    #[serde(default)]
    pub pagetypeinfo: crate::page_alloc::PageTypeInfo,
    /// Free pages on the per-CPU lists at the end (`pcp->count`): free for
    /// `nr_free_pages` but in no buddy list.
    #[serde(default)]
    pub pcp_pages: u64,
    /// Swap slots in use at the end.
    pub swap_used_pages: u64,
    /// Simulator memory per resident folio: the folio arena's bytes over live folios.
    pub sim_bytes_per_resident_folio: f64,
    /// Simulator memory per tracked page: page-table, page-cache and swap
    /// slot bytes over the pages they cover (resident or not).
    pub sim_bytes_per_tracked_page: f64,
    /// Simulator heap in bytes (arena, page tables, page cache, swap).
    pub sim_heap_bytes: u64,
    /// Where kswapd's CPU went (`kswapd_cpu_s` by kernel function).
    #[serde(default)]
    pub kswapd_profile: crate::cost::ReclaimProfile,
    /// Where the CPU of reclaim in the workload's tasks (direct and
    /// memcg-limit reclaim) went, summed over its CPUs.
    #[serde(default)]
    pub direct_profile: crate::cost::ReclaimProfile,
    /// CPUs the workload ran on (`machine.cpus`).
    #[serde(default = "one")]
    pub cpus: u32,
    /// Time the workload's tasks spun on a contended `lru_lock`, in and out
    /// of reclaim, summed over its CPUs, s (0 with one CPU).
    #[serde(default)]
    pub lru_lock_wait_s: f64,
    /// Section time of the busiest lruvec's `lru_lock` over the run time, %
    /// (near 100: the lock bounds throughput; 0 with one CPU).
    #[serde(default)]
    pub lru_lock_busy_pct: f64,
    /// The multi-gen LRU's view (`mglru` policy only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lru_gen: Option<crate::reclaim::lru_gen::LruGenReport>,
    /// Paths of the groups whose usage each stats sample lists, in order
    /// (empty when the sampler is off).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stats_memcg_paths: Vec<String>,
    /// The stats sampler's time series, one sample per
    /// `machine.stats_interval_ms` (empty when the sampler is off).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stats_samples: Vec<crate::timer::StatsSample>,
    /// Scenario events (knob writes, moves, phase starts, OOM kills) on the
    /// sampler's time line (empty when the sampler is off).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series_markers: Vec<crate::timer::SeriesMarker>,
    /// The tracepoint events emitted (`machine.tracepoints`; empty when off).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tracepoints: Vec<crate::tracepoint::TraceRecord>,
    /// Events the filter passed after `max_events` were kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tracepoints_dropped: u64,
    /// The workload tasks' names by id, for the tracepoints' `comm` (empty when off).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_names: Vec<String>,
    /// The chosen pages' life stories (`machine.explain`; None when off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<crate::explain::ExplainReport>,
    /// Scheduled writes (memcg knob changes and cycles, cgroup moves, lru_gen
    /// writes) still pending when the run ended: due after its last event, so
    /// never applied.
    #[serde(default)]
    pub unapplied_writes: u64,
    /// When the first of them was due, seconds on the workload clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_unapplied_s: Option<f64>,
    /// How shadow entries quantised refault distances, when they did (None
    /// when every distance up to the size of memory was exact, as the
    /// kernel's are): see `crate::reclaim::workingset`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadow_quantised: Option<ShadowQuantised>,
    /// DAMON's kdamond CPU and DAMOS stats, when the machine runs DAMON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damon: Option<crate::damon::DamonReport>,
    /// Multi-size THP: each size's `hugepages-<size>kB/stats` (empty when
    /// `[machine.thp]` allows no size).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mthp: Vec<crate::huge_memory::MthpSizeReport>,
    /// Base pages in large anonymous folios at the end (`AnonHugePages`
    /// for every size; memory.stat `anon_thp`), when THP is on.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub anon_thp_pages: u64,
    /// khugepaged and MADV_COLLAPSE (`crate::khugepaged`), when used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub khugepaged: Option<crate::khugepaged::KhugepagedReport>,
    /// The data TLB's counts (`[machine.tlb]`, `crate::tlb`), when on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlb: Option<crate::tlb::TlbReport>,
    /// The memcg statistics flushes by caller and those the update threshold
    /// skipped: mmsim's own counts, which the kernel does not expose
    /// (`crate::memcg_stats`); under `memcg_stats_flush` `ratelimited` and
    /// `reclaim` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmsim_memcg_flush: Option<crate::memcg_stats::MemcgFlushReport>,
    /// The writer's `balance_dirty_pages()` pauses and the dirty thresholds
    /// (`policy.dirty_throttle`, `crate::page_writeback_throttle`), when on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_throttle: Option<crate::page_writeback_throttle::DirtyThrottleReport>,
}

fn one() -> u32 {
    1
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}
