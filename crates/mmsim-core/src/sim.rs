//! The simulated machine and its event loop.
//!
//! [`Sim`] owns everything: the folio arena, tasks and their VMAs, files and
//! their page cache, the swap device, the memory cgroup with its lruvec, the
//! node's free-page count and watermarks, kswapd, the counters and PSI.
//! Workloads drive it one [`Event`](crate::event::Event) at a time through [`Sim::step`].
//!
//! Time. The workload runs on simulated CPU 0 and its clock advances by the
//! cost model's charges ([`crate::cost`]) and by the device waits of major
//! faults. kswapd runs on CPU 1 with its own clock: when woken it performs one
//! `balance_pgdat()` priority iteration at a time, each starting no earlier
//! than the workload time that woke it and taking the CPU time its scanning
//! costs, so a fast allocator can outrun it and fall into direct reclaim just
//! as on a real machine. Writeback completions, the flusher, kswapd's
//! iterations and the scenario's scheduled writes are timers on the same
//! clock ([`crate::timer`]). Everything is integer arithmetic on one clock:
//! the same events give the same bits on any machine.
//!
//! This file holds the machine's types and its setup calls (tasks, files, mappings);
//! by job, its submodules build it (`mm_init`), run its events (`run`), report a run
//! (`report`) and check it (`debug`).

use crate::config::{ConfigError, CostVariant, DeviceKind, MachineConfig};
use crate::cost::CostModel;
use crate::event::FileId;
use crate::mem::blockdev::BlockDev;
use crate::mem::filemap::File;
use crate::mem::folio::{FolioArena, FolioId};
use crate::mem::pagetable::{TaskId, Vma, VmaId, VmaKind};
use crate::mem::swap::SwapDevice;
use crate::memcg::Memcg;
pub(crate) use crate::mmzone::Node;
use crate::psi::{Psi, PsiCpu};
use crate::reclaim::Kswapd;
use crate::result::AccessStats;
use crate::stats::Vmstat;

mod debug;
mod mm_init;
mod report;
mod run;

pub(crate) use mm_init::int_sqrt;
pub(crate) use run::prefetch;

/// Errors from setting up a simulation (not from running it: running never fails).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// A configuration field is out of range.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A setup call referred to something that does not exist or is too large.
    #[error("{0}")]
    Setup(String),
}

/// How the classic LRU balances anon against file (see [`crate::reclaim::balance`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Balance {
    /// recent_scanned / recent_rotated ratios (≈3.11–5.7).
    ScannedRotated,
    /// anon_cost / file_cost from `lru_note_cost` (5.8+), in the given weighting.
    Cost(CostVariant),
}

/// The rules of a classic (active/inactive) LRU kernel era. Each field names
/// the kernel change that flipped it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassicRules {
    /// Balancing model.
    pub balance: Balance,
    /// New anonymous pages start on the active list (before 5.9, "mm: vmscan:
    /// protect the workingset on anonymous LRU").
    pub new_anon_active: bool,
    /// A young swap-backed folio at the inactive tail is activated at once
    /// (`page_check_references` before 5.9).
    pub young_anon_activates: bool,
    /// Anonymous shadows in swap slots and the two-formula refault test (5.9+);
    /// otherwise file shadows only, tested against active_file (3.15–5.7).
    pub anon_workingset: bool,
    /// Active lists are deactivated only when `inactive_is_low` (≤5.4); else
    /// the 5.5+ `may_deactivate` rule driven by refaults at the reclaim root.
    pub deactivate_on_refaults: bool,
    /// PG_workingset exists (4.20+): set on deactivation, carried in shadows,
    /// counted as WORKINGSET_RESTORE.
    pub pg_workingset: bool,
    /// `move_folios_to_lru` ages the workingset clock for reclaim activations (5.9+).
    pub putback_active_ages: bool,
    /// `workingset_eviction` reads the clock before incrementing (5.9+:
    /// `atomic_long_read` then age) rather than `atomic_long_inc_return` (3.15–5.8).
    pub eviction_reads_before_inc: bool,
    /// Dirty file folios and folios under writeback met at the inactive tail
    /// are activated with PG_reclaim ("mm: vmscan: move dirty pages out of
    /// the way until they're flushed", 4.13) instead of kept on the inactive list.
    pub dirty_activates: bool,
    /// `should_continue_reclaim` as before 5.4 (v4.9): continue while the
    /// reclaim's total is below `compact_gap` and more inactive pages are
    /// left, else stop only if a zone is ready or `compaction_suitable`;
    /// otherwise v5.4+'s order (`crate::reclaim::should_continue_reclaim`).
    pub reclaim_compaction_gap_first: bool,
    /// Readahead allocates and charges inside `memalloc_nofs_save()`, so
    /// its mask lacks `__GFP_FS` (v5.8+, "mm: use memalloc_nofs_save in
    /// readahead path", Matthew Wilcox's readahead rework); v4.9's
    /// `__do_page_cache_readahead` ran without the scope, with
    /// `readahead_gfp_mask`'s `__GFP_FS` (`Sim::readahead_gfp`).
    pub readahead_nofs: bool,
    /// A readahead page whose charge fails is skipped and the batch goes
    /// on (v4.9 `read_pages` → `->readpages`: `add_to_page_cache_lru`
    /// failing takes ext4's `goto next_page`); v6.10+ `page_cache_ra_unbounded`
    /// breaks at `-ENOMEM` ("mm/readahead: break read-ahead loop if
    /// filemap_add_folio return -ENOMEM"). An allocation failure ends the
    /// batch in both (`crate::readahead::read_pages`).
    pub readahead_charge_skips: bool,
}

impl ClassicRules {
    /// v4.9: the scanned/rotated era.
    pub(crate) fn v4_9() -> Self {
        ClassicRules {
            balance: Balance::ScannedRotated,
            new_anon_active: true,
            young_anon_activates: true,
            anon_workingset: false,
            deactivate_on_refaults: false,
            pg_workingset: false,
            putback_active_ages: false,
            eviction_reads_before_inc: false,
            dirty_activates: false,
            reclaim_compaction_gap_first: true,
            readahead_nofs: false,
            readahead_charge_skips: true,
        }
    }
    /// v6.x (current): cost-based balancing.
    pub(crate) fn current(variant: CostVariant) -> Self {
        ClassicRules {
            balance: Balance::Cost(variant),
            new_anon_active: false,
            young_anon_activates: false,
            anon_workingset: true,
            deactivate_on_refaults: true,
            pg_workingset: true,
            putback_active_ages: true,
            eviction_reads_before_inc: true,
            dirty_activates: true,
            reclaim_compaction_gap_first: false,
            readahead_nofs: true,
            readahead_charge_skips: false,
        }
    }
}

/// The policy a run uses, resolved from [`PolicyName`](crate::config::PolicyName).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Textbook LRU (see `crate::reclaim::lru`).
    Lru,
    /// Classic active/inactive LRU with era rules.
    Classic(ClassicRules),
    /// The multi-gen LRU (see [`crate::reclaim::lru_gen`]).
    Mglru(crate::config::MglruVersion),
}

/// A task (process) with an address space.
#[derive(Clone, Debug)]
pub(crate) struct Task {
    /// Name for reports.
    pub name: String,
    /// Its VMAs.
    pub vmas: Vec<VmaId>,
    /// Killed by the OOM killer, or exited: its later events are dropped.
    pub dead: bool,
    /// Exited ([`Sim::exit_task`]) rather than killed.
    pub exited: bool,
    /// A child [`Sim::fork_task`] is still copying: not on the task list
    /// yet, so no OOM candidate (`crate::fork`).
    pub forking: bool,
    /// The memory cgroup it runs in (charges go there).
    pub memcg: crate::memcg::MemcgId,
}

/// The simulated machine.
pub struct Sim {
    pub(crate) cfg: MachineConfig,
    pub(crate) cost: CostModel,
    pub(crate) policy: Policy,
    pub(crate) folios: FolioArena,
    /// The zone's buddy allocator and `mem_map` (page frames of the folios).
    pub(crate) phys: crate::page_alloc::PhysMem,
    pub(crate) vmas: Vec<Vma>,
    /// The file mappings' `struct file` readahead states (`Vma::ra_slot`).
    pub(crate) ra_slots: crate::readahead::RaSlots,
    /// The open file descriptions of `Sim::open_file` (`crate::open`).
    pub(crate) fds: Vec<crate::open::OpenFile>,
    pub(crate) tasks: Vec<Task>,
    pub(crate) files: Vec<File>,
    pub(crate) swap: Option<SwapDevice>,
    pub(crate) fs: BlockDev,
    /// The memory cgroups; index 0 is the top group `/`.
    pub(crate) memcgs: Vec<Memcg>,
    /// The group new folios are charged to (the faulting or reading task's).
    pub(crate) cur_memcg: crate::memcg::MemcgId,
    /// The per-CPU charge stock (`memcg_stock_pcp`): group, pages charged but unused.
    pub(crate) stock: (crate::memcg::MemcgId, u64),
    /// `current->memcg_nr_pages_over_high`: pages charged over some
    /// `memory.high`, settled on return to user space.
    pub(crate) pages_over_high: u64,
    /// Fork state (`crate::fork`): None until a task forks.
    pub(crate) fork: Option<Box<crate::fork::ForkState>>,
    /// A store's fault run again (`Sim::retry_fault`, `crate::cow`).
    pub(crate) fault_retry: crate::cow::FaultRetry,
    /// Scheduled knob writes, latest first (popped from the end).
    pub(crate) knob_events: Vec<crate::memcg::KnobEvent>,
    /// Insertion counter of the soft-limit tree.
    pub(crate) soft_tree_seq: u64,
    pub(crate) node: Node,
    pub(crate) kswapd: Kswapd,
    pub(crate) vm: Vmstat,
    pub(crate) psi: Psi,
    pub(crate) acc: AccessStats,
    /// Workload clock, ns (the wall clock of `smp.cpus` CPUs).
    pub(crate) clock: u64,
    /// The workload's CPUs and their lock contention.
    pub(crate) smp: crate::smp::Smp,
    /// Where reclaim in the workload's tasks (direct and memcg-limit reclaim) spent its CPU.
    pub(crate) direct_profile: crate::cost::ReclaimProfile,
    /// The timers of background work (`timer.rs`): writeback completions,
    /// the flusher, kswapd, scheduled writes, the stats sampler.
    pub(crate) timers: crate::timer::TimerList,
    /// The stats sampler's samples (`machine.stats_interval_ms`).
    pub(crate) stats_samples: Vec<crate::timer::StatsSample>,
    /// Scenario events on the sampler's time line (`Sim::series_mark`).
    pub(crate) series_markers: Vec<crate::timer::SeriesMarker>,
    /// The tracepoints (`machine.tracepoints`; None: off, the default).
    pub(crate) tp: Option<Box<crate::tracepoint::Tracer>>,
    /// The task the tracepoints name as running (set only while tracing).
    pub(crate) tp_task: crate::tracepoint::TpTask,
    /// The page-story recorder (`machine.explain`; None: off, the default).
    pub(crate) xp: Option<Box<crate::explain::Explainer>>,
    /// Kernel memory charged to the groups (`machine.kmem_accounting`;
    /// None: off, the default). Tested on fault and eviction paths only.
    pub(crate) kmem: Option<Box<crate::kmem::Kmem>>,
    /// The stats sampler's interval now, ns: `machine.stats_interval_ms`,
    /// doubled each time `machine.stats_max_samples` thins the samples.
    pub(crate) stats_interval_ns: u64,
    /// Writeback completions in submission order, per device (0 swap, 1 fs):
    /// (completion time, folio or NIL for a write cut short: `Sim::queue_writeback`).
    pub(crate) writeback: [std::collections::VecDeque<(u64, FolioId)>; 2],
    /// Writes ever queued per `writeback` queue (`Sim::complete_writeback_before`'s plug).
    pub(crate) writeback_queued: [u64; 2],
    /// Dirty file folios in dirtying order, with the time dirtied (`Sim::dirty_fifo_unqueue`).
    pub(crate) dirty_fifo: crate::mem::queue::FolioQueue<u64>,
    /// Scratch buffer for isolated folios (reused, never shrunk).
    pub(crate) scratch: Vec<FolioId>,
    /// How shadow entries share their bits between memcg id and eviction
    /// timestamp, and the timestamp's granularity (`bucket_order`).
    pub(crate) shadow_layout: crate::reclaim::workingset::ShadowLayout,
    /// Time the workload spent in reclaim, ns.
    pub(crate) reclaim_stall_ns: u64,
    /// Time the workload waited for IO, ns.
    pub(crate) io_wait_ns: u64,
    /// The writer's dirty throttle (`crate::page_writeback_throttle`).
    pub(crate) bdp: crate::page_writeback_throttle::DirtyThrottle,
    /// Whether a readahead read since the caller last looked brought back a
    /// workingset page (its wait is a memstall).
    pub(crate) ra_workingset: bool,
    /// The folios the order-0 readahead batch in progress added: locked
    /// until read in the kernel, so reclaim keeps them
    /// (`crate::readahead::read_pages`); empty outside a batch, and always
    /// under `machine.fs.ra_lock_until_read` (`crate::readahead::read_lock`).
    pub(crate) ra_locked_batch: Vec<FolioId>,
    /// The readahead reads in flight under `machine.fs.ra_lock_until_read`,
    /// by completion time (`crate::readahead::read_lock`).
    pub(crate) ra_reads: crate::readahead::read_lock::RaReads,
    /// Dirty file pages (`NR_FILE_DIRTY`).
    pub(crate) nr_dirty: u64,
    /// Folios with PG_swapcache (`NR_SWAPCACHE`, per folio): see `crate::swapfile`.
    pub(crate) nr_swapcache_folios: u64,
    /// Workload time when the measured part of the run began.
    pub(crate) measure_start: u64,
    /// Pages under writeback.
    pub(crate) nr_writeback: u64,
    /// Multi-gen LRU settings and machine-wide state.
    pub(crate) lru_gen: crate::reclaim::lru_gen::LruGenState,
    /// DAMON's contexts (`crate::damon`), when the machine runs DAMON.
    pub(crate) damon: Option<Box<crate::damon::Damon>>,
    /// Multi-size THP: allowed orders and per-size counters (`crate::huge_memory`).
    pub(crate) thp: crate::huge_memory::Thp,
    /// Memory compaction and kcompactd (`crate::compaction`).
    pub(crate) compact: crate::compaction::Compaction,
    /// The shared zero page's folio (`machine.zero_page`), or NIL: a folio of
    /// no list, group or page frame that read-fault PTEs of anonymous memory
    /// map (`crate::fault`). The kernel's zero page is reserved memory, not
    /// part of the zone, so the invariants leave it out.
    pub(crate) zero_folio: FolioId,
    /// The flushed memcg statistics reclaim reads (`crate::memcg_stats`).
    pub(crate) memcg_stats: crate::memcg_stats::MemcgStats,
    /// The data TLBs (`machine.tlb`, `crate::tlb`; None: off, the default).
    pub(crate) tlb: Option<Box<crate::tlb::Tlb>>,
}

/// `dirty_writeback_centisecs` = 500: the flusher's period.
pub(crate) const DIRTY_WRITEBACK_NS: u64 = 5_000_000_000;
/// `dirty_expire_centisecs` = 3000: age at which dirty data is written back.
pub(crate) const DIRTY_EXPIRE_NS: u64 = 30_000_000_000;

impl Sim {
    /// The resolved policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Tasks added so far; the next task's id.
    pub fn nr_tasks(&self) -> TaskId {
        self.tasks.len() as TaskId
    }

    /// Adds a task; returns its id.
    pub fn add_task(&mut self, name: &str) -> TaskId {
        self.tasks.push(Task {
            name: name.into(),
            vmas: Vec::new(),
            dead: false,
            exited: false,
            forking: false,
            memcg: crate::memcg::ROOT,
        });
        (self.tasks.len() - 1) as TaskId
    }

    /// Adds a file of `pages` pages (at most 2^31) with an empty page cache.
    pub fn add_file(&mut self, name: &str, pages: u64) -> Result<FileId, SimError> {
        if pages == 0 || pages > 1 << 31 {
            return Err(SimError::Setup(format!(
                "file `{name}`: size {pages} pages is out of range [1, 2^31]"
            )));
        }
        self.files
            .push(File::new(name.into(), pages as u32, self.cfg.ra_pages()));
        Ok((self.files.len() - 1) as FileId)
    }

    /// The size in pages of file `file`, if it exists.
    pub fn file_pages(&self, file: FileId) -> Option<u64> {
        self.files.get(file as usize).map(|f| u64::from(f.pages))
    }

    /// How many files were added ([`Sim::add_file`]).
    pub fn nr_files(&self) -> usize {
        self.files.len()
    }

    /// `open()`: `task` reads and writes `file` through a descriptor from now
    /// on; the page cache it brings in is charged to the task's group.
    pub fn open(&mut self, file: FileId, task: TaskId) -> Result<(), SimError> {
        if task as usize >= self.tasks.len() {
            return Err(SimError::Setup(format!("no task {task}")));
        }
        let f = self
            .files
            .get_mut(file as usize)
            .ok_or_else(|| SimError::Setup(format!("no file {file}")))?;
        f.task = Some(task);
        Ok(())
    }

    /// `posix_fadvise(fd, 0, 0, advice)` on the file's `read()` descriptor.
    pub fn fadvise(
        &mut self,
        file: FileId,
        advice: crate::readahead::Advice,
    ) -> Result<(), SimError> {
        let ra_pages = self.cfg.ra_pages();
        let f = self
            .files
            .get_mut(file as usize)
            .ok_or_else(|| SimError::Setup(format!("no file {file}")))?;
        f.ra.advise(advice, ra_pages);
        Ok(())
    }

    /// Maps `pages` pages of private anonymous memory into `task`.
    pub fn mmap_anon(&mut self, task: TaskId, pages: u64) -> Result<VmaId, SimError> {
        self.mmap(task, VmaKind::Anon, pages, false)
            .inspect(|&id| self.khugepaged_enter_vma(id))
    }

    /// Maps pages `[pgoff, pgoff + pages)` of `file` into `task` (shared);
    /// `exec` marks it VM_EXEC (program text).
    pub fn mmap_file(
        &mut self,
        task: TaskId,
        file: FileId,
        pgoff: u32,
        pages: u64,
        exec: bool,
    ) -> Result<VmaId, SimError> {
        let f = self
            .files
            .get(file as usize)
            .ok_or_else(|| SimError::Setup(format!("no file {file}")))?;
        if pgoff as u64 + pages > f.pages as u64 {
            return Err(SimError::Setup(format!(
                "mapping of `{}` beyond its end ({} pages)",
                f.name, f.pages
            )));
        }
        let id = self.mmap(task, VmaKind::shared_file(file, pgoff), pages, exec)?;
        self.files[file as usize].mappings.push(id);
        Ok(id)
    }

    fn mmap(
        &mut self,
        task: TaskId,
        kind: VmaKind,
        pages: u64,
        exec: bool,
    ) -> Result<VmaId, SimError> {
        if task as usize >= self.tasks.len() {
            return Err(SimError::Setup(format!("no task {task}")));
        }
        if pages == 0 || pages > 1 << 31 {
            return Err(SimError::Setup(format!(
                "mapping size {pages} pages is out of range [1, 2^31]"
            )));
        }
        self.vmas.push(Vma {
            task,
            kind,
            exec,
            locked: false,
            len: pages as u32,
            thp_advice: if kind == VmaKind::Anon {
                self.cfg.thp.vma_advice
            } else {
                crate::huge_memory::VmaThpAdvice::None
            },
            ptes: Vec::new(),
            huge_zero_pmds: Vec::new(),
            file_pmds: Vec::new(),
            swap_ra: Default::default(),
            ra_slot: match kind {
                VmaKind::Anon => crate::readahead::RaSlots::NONE,
                _ => self.ra_slots.open(self.cfg.ra_pages()),
            },
            ra_advice: crate::readahead::Advice::Normal,
        });
        let id = (self.vmas.len() - 1) as VmaId;
        self.tasks[task as usize].vmas.push(id);
        Ok(id)
    }

    /// Charges CPU time to the workload (and PSI if it is a memstall).
    #[inline]
    pub(crate) fn workload_stall(&mut self, ns: u64, reclaim: bool) {
        if ns == 0 {
            return;
        }
        let start = self.clock;
        self.advance(ns);
        let end = self.clock;
        self.psi.stall(PsiCpu::Workload, start, end);
        // The stalled task's group and its ancestors (psi_group hierarchy);
        // the top group's pressure is the system's, recorded above.
        let mut cur = Some(self.cur_memcg);
        while let Some(c) = cur.filter(|&c| c != crate::memcg::ROOT) {
            let g = &mut self.memcgs[c as usize];
            g.psi.stall(PsiCpu::Workload, start, end);
            cur = g.parent;
        }
        if reclaim {
            self.reclaim_stall_ns += ns;
        }
    }
}

impl Sim {
    /// Runs `io` on the swap device's timing: the swap device's own, or the
    /// filesystem's when swap is on the filesystem's disk (`swap.device = "fs"`).
    #[inline]
    pub(crate) fn swap_dev<T>(&mut self, io: impl FnOnce(&mut BlockDev) -> T) -> T {
        if self.cfg.swap.device == DeviceKind::Fs {
            io(&mut self.fs)
        } else {
            io(&mut self.swap.as_mut().expect("a swap device").dev)
        }
    }
}

#[cfg(test)]
#[path = "sim_tests.rs"]
mod tests;
