//! # mmsim-core: the simulated machine
//!
//! A deterministic, event-driven model of Linux memory management: folios
//! on LRU lists, page tables with accessed and dirty bits, a page cache and
//! swap slots holding shadow entries, the page allocator's watermarks,
//! kswapd, direct and memcg-limit reclaim, workingset refault detection,
//! dirty writeback, and the counters a kernel developer reads
//! (`/proc/vmstat`, PSI).
//!
//! ## Event model
//!
//! A workload (see the `mmsim-workloads` crate) sets the machine up —
//! [`Sim::add_task`], [`Sim::mmap_anon`], [`Sim::add_file`],
//! [`Sim::mmap_file`] — and then feeds it [`Event`]s through [`Sim::step`]:
//! loads and stores to mapped pages, buffered reads and writes of file pages,
//! and think time. [`Sim::finish`] settles background work and returns a
//! [`RunResult`].
//!
//! ## Units
//!
//! Memory is counted in 4 KiB base pages ([`PAGE_SIZE`]); time in simulated
//! nanoseconds. `pgpgin`/`pgpgout` are in KiB, as in the kernel.
//!
//! ## Policies
//!
//! * `cost` (alias `classic`): the active/inactive LRU of v5.8+ with
//!   cost-based anon/file balancing (`lru_note_cost`), v6.2 rotation
//!   weighting by default ([`config::CostVariant`]).
//! * `scanned-rotated`: the same lists as in v4.9, balanced by
//!   recent_scanned/recent_rotated (the ≈3.11–5.7 model).
//! * `mglru`: the multi-gen LRU of v6.1, v6.12 or v6.14 (`reclaim::lru_gen`).
//! * `lru`: textbook LRU, for exact comparison with published cache results.
//!
//! ## CPUs
//!
//! By default the workload runs on one CPU and kswapd on another. With
//! `machine.cpus` > 1 the workload clock is the wall clock of that many
//! CPUs and each lruvec's `lru_lock` is contended (`smp`).
//!
//! Every mechanism's doc comment names the kernel function it models and the
//! version whose behaviour it follows.
//!
//! ## Determinism
//!
//! No wall clock, no hash-map iteration, no floating point in decisions: the
//! same configuration and events give bit-identical results on any machine.
//!
//! ## Hot path
//!
//! An access to a resident page is a bounds check, one 32-bit PTE update and
//! a counter increment: no allocation, hashing or dynamic dispatch.

#![warn(missing_docs)]
#![warn(unreachable_pub)]

// `config`, `memcg` and `reclaim::lru_gen` stay public paths because other
// crates name items through them (`mmsim_core::memcg::MemcgId`, ...); every
// other module is private and what other crates use is re-exported below.
mod cgwb;
mod compaction;
mod compaction_skip;
pub mod config;
mod config_defaults;
mod config_size;
mod cost;
mod cow;
pub mod damon;
mod deferred_split;
mod event;
mod exit;
pub mod explain;
mod fault;
mod fault_swapcache;
mod filemap_pmd;
mod filemap_read;
mod filemap_sync;
mod filemap_write;
mod fork;
pub mod gfp;
mod huge_memory;
mod huge_memory_rfc;
mod id_order;
mod khugepaged;
mod kmem;
mod madvise;
mod mem;
pub mod memcg;
mod memcg_stats;
mod memcontrol_v1;
mod mmap;
mod mmzone;
mod oom;
mod open;
mod page_alloc;
mod page_alloc_boost;
mod page_counter;
mod page_writeback_domain;
mod page_writeback_ratelimit;
mod page_writeback_throttle;
mod psi;
mod pte_invariants;
mod readahead;
pub mod reclaim;
mod result;
mod rmap;
mod sched;
#[doc(hidden)]
pub mod setting_names;
mod sim;
mod slub;
mod smp;
mod split_zeropage;
mod stats;
mod swap_state;
mod swapfile;
mod timer;
mod tlb;
pub mod tracepoint;
mod wb_over_bg_thresh;
mod writeback;

#[cfg(test)]
mod rule_tests;

pub use compaction::CompactionConfig;
pub use config::MAX_MEMORY_PAGES;
pub use config::{
    CgroupVersion, ConfigError, CostVariant, DeviceConfig, DeviceKind, MachineConfig,
    MemcgStatsFlush, MglruRefaultActivate, MglruVersion, PolicyConfig, PolicyName, RmqueueFallback,
    Size, SoftLimitReclaim, SwapZeroPages,
};
pub use cost::{CostModel, ReclaimProfile};
pub use cow::MmCounters;
pub use damon::module_params::{DamonModule, DamonModuleWriteLog};
pub use damon::sysfs::DamonConfig;
pub use damon::{DamonCtxReport, DamonReport, DamosSchemeReport, DamosStat, RecordSnapshot};
pub use event::{Event, FileId};
pub use filemap_pmd::HugepageReadaround;
pub use fork::ForkStats;
pub use huge_memory::{
    MthpSizeReport, MthpStats, ThpConfig, ThpDefrag, ThpEnabled, ThpKernel, ThpSizeConfig,
    ThpSizeEnabled, VmaThpAdvice,
};
pub use khugepaged::{CollapseError, KhugepagedConfig, KhugepagedReport};
pub use kmem::KmemReport;
pub use mem::pagetable::{TaskId, VmaId};
pub use memcg::{MemcgId, MemcgKnob, MemcgReport};
pub use memcg::{MAX_MEMCGS, ROOT};
pub use memcg_stats::MemcgFlushReport;
pub use open::Fd;
pub use page_alloc::PageTypeInfo;
pub use page_writeback_throttle::DirtyThrottleReport;
pub use readahead::Advice;
pub use reclaim::lru_gen::{parse_lru_gen_file_write, LruGenReport, LRU_GEN_DEBUG};
pub use result::{AccessStats, RunResult, ShadowQuantised};
pub use sim::Policy;
pub use sim::{Sim, SimError};
pub use stats::Vmstat;
pub use timer::{SeriesMarker, SeriesMarkerKind, StatsSample};
pub use tlb::{TlbConfig, TlbReport};

/// Bytes in a base page.
pub const PAGE_SIZE: u64 = 4096;
