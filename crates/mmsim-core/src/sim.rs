//! The simulated machine and its event loop.
//!
//! [`Sim`] owns everything: the folio arena, tasks and their VMAs, files and
//! their page cache, the swap device, the memory cgroup with its lruvec, the
//! node's free-page count and watermarks, kswapd, the counters and PSI.
//! Workloads drive it one [`Event`] at a time through [`Sim::step`].
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

use crate::config::{ConfigError, CostVariant, DeviceKind, MachineConfig, PolicyName};
use crate::cost::CostModel;
use crate::event::{Event, FileId};
use crate::mem::blockdev::BlockDev;
use crate::mem::filemap::File;
use crate::mem::folio::{flags, FolioArena, FolioId, LruList};
use crate::mem::pagetable::{TaskId, Vma, VmaId, VmaKind};
use crate::mem::swap::SwapDevice;
use crate::memcg::Memcg;
pub(crate) use crate::mmzone::Node;
use crate::psi::{Psi, PsiCpu};
use crate::reclaim::Kswapd;
use crate::result::{AccessStats, RunResult};
use crate::stats::Vmstat;

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
        }
    }
}

/// The policy a run uses, resolved from [`PolicyName`].
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
    /// Builds a machine from a validated configuration.
    pub fn new(cfg: MachineConfig) -> Result<Sim, SimError> {
        cfg.validate()?;
        let managed = cfg.memory.pages();
        let (min, low, high) = match cfg.sample_rate {
            None => watermarks(managed, cfg.min_free_kbytes, cfg.watermark_scale_factor),
            Some(r) => {
                sampled_watermarks(managed, r, cfg.min_free_kbytes, cfg.watermark_scale_factor)
            }
        };
        let policy = match cfg.policy.name {
            PolicyName::Lru => Policy::Lru,
            PolicyName::ScannedRotated => Policy::Classic(ClassicRules::v4_9()),
            PolicyName::Cost => Policy::Classic(ClassicRules::current(cfg.policy.cost_variant)),
            // lru_gen/enabled without the core bit: the classic lists.
            PolicyName::Mglru
                if cfg.policy.lru_gen_enabled & crate::reclaim::lru_gen::LRU_GEN_CORE == 0 =>
            {
                Policy::Classic(ClassicRules::current(cfg.policy.cost_variant))
            }
            PolicyName::Mglru => Policy::Mglru(cfg.policy.mglru_version),
        };
        let lru_gen = crate::reclaim::lru_gen::LruGenState::new(&cfg.policy);
        let swap = match (cfg.swap.device, cfg.swap.size) {
            (DeviceKind::None, _) | (_, None) => None,
            (_, Some(size)) => Some(SwapDevice::new(&cfg.swap, size.pages())),
        };
        let mut memcg = Memcg::new(1, "/", None);
        if let Some(m) = cfg.memcg_max {
            memcg.max = m.pages();
        }
        let mut sim = Sim {
            smp: crate::smp::Smp::new(cfg.cpus, &cfg.cost),
            direct_profile: Default::default(),
            cost: cfg.cost.clone(),
            policy,
            folios: FolioArena::with_capacity(1024),
            phys: crate::page_alloc::PhysMem::new(managed, low, cfg.cpus, cfg.damon.is_some()),
            vmas: Vec::new(),
            ra_slots: Default::default(),
            fds: Vec::new(),
            tasks: Vec::new(),
            files: Vec::new(),
            swap,
            fs: BlockDev::new(&cfg.fs),
            memcgs: vec![memcg],
            cur_memcg: crate::memcg::ROOT,
            stock: (crate::memcg::ROOT, 0),
            pages_over_high: 0,
            fork: None,
            fault_retry: Default::default(),
            knob_events: Vec::new(),
            soft_tree_seq: 0,
            node: Node {
                managed,
                free: managed,
                wmark_min: min,
                wmark_low: low,
                wmark_high: high,
                fast_low: low,
                dirty: false,
            },
            kswapd: Kswapd::default(),
            vm: Vmstat::default(),
            psi: Psi::default(),
            acc: AccessStats::default(),
            clock: 0,
            timers: crate::timer::TimerList::new(),
            stats_samples: Vec::new(),
            series_markers: Vec::new(),
            tp: cfg
                .tracepoints
                .as_ref()
                .and_then(crate::tracepoint::Tracer::new),
            tp_task: crate::tracepoint::TpTask::Task(0),
            xp: crate::explain::Explainer::new(cfg.explain.as_ref()),
            kmem: cfg.kmem_accounting.then(Default::default),
            stats_interval_ns: 0,
            writeback: Default::default(),
            writeback_queued: [0; 2],
            dirty_fifo: Default::default(),
            scratch: Vec::with_capacity(64),
            shadow_layout: crate::reclaim::workingset::ShadowLayout::new(
                1,
                managed,
                cfg.exact_shadows,
            ),
            reclaim_stall_ns: 0,
            io_wait_ns: 0,
            bdp: Default::default(),
            ra_workingset: false,
            nr_dirty: 0,
            nr_swapcache_folios: 0,
            measure_start: 0,
            nr_writeback: 0,
            lru_gen,
            damon: None,
            thp: crate::huge_memory::Thp::new(
                &cfg.thp,
                cfg.zero_page,
                cfg.swap.device == crate::config::DeviceKind::Zram,
            ),
            compact: crate::compaction::Compaction::new(&cfg.compaction),
            zero_folio: crate::mem::folio::NIL,
            memcg_stats: crate::memcg_stats::MemcgStats::new(
                cfg.policy.memcg_stats_flush,
                cfg.policy.memcg_stats_flush_ms,
            )
            .with_reader(&cfg.policy, cfg.cpus),
            tlb: crate::tlb::Tlb::new(&cfg.tlb, cfg.cpus),
            cfg,
        };
        sim.setup_dma_zone();
        sim.setup_watermark_boost();
        sim.setup_trace_extfrag();
        sim.page_writeback_init();
        sim.arm_stats_sampler();
        sim.arm_memcg_stats_flush();
        sim.compaction_init();
        if sim.cfg.zero_page {
            // ZERO_PAGE(0): never on a list, never freed.
            sim.zero_folio = sim.alloc_zero_folio();
        }
        if let Some(d) = sim.cfg.damon.clone() {
            // Configured but with nothing running (a module's `enabled = false`),
            // DAMON still reports: no kdamond, no CPU.
            let damon = crate::damon::Damon::new(&d, sim.damon_pfn_range());
            if !damon.ctxs.is_empty() {
                // Each kdamond starts on the first event (after setup).
                sim.timers.add_timer(crate::timer::TimerKind::Kdamond, 0);
            }
            sim.damon = Some(Box::new(damon));
        }
        Ok(sim)
    }

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

    /// Executes one event. This is the per-access hot path.
    #[inline(always)]
    pub fn step(&mut self, ev: &Event) {
        if self.clock >= self.timers.next_expiry() {
            self.run_timers();
        }
        match *ev {
            Event::Access { vma, index, write } => self.access(vma, index, write),
            Event::FileRead { file, index, pages } => self.filemap_read(file, index, pages),
            Event::FdRead { fd, index, pages } => self.fd_read(fd, index, pages),
            Event::FileWrite { file, index, pages } => {
                self.generic_perform_write(file, index, pages)
            }
            Event::FileSync { .. } => self.file_sync(ev),
            Event::Think { ns } => self.advance(ns),
            Event::Discard { vma, index, pages } => self.madvise_dontneed(vma, index, pages),
            Event::Collapse { vma, index, pages } => self.collapse_event(vma, index, pages),
            Event::ThpAdvice { vma, advice } => self.thp_advice_event(vma, advice),
            Event::Remap { vma } => self.remap_event(vma),
            Event::Fork { vma, pages } => self.fork_event(vma, pages),
        }
        if self.pages_over_high > 0 {
            self.mem_cgroup_handle_over_high();
        }
    }

    /// Executes a batch of events.
    ///
    /// Accesses to large footprints are bound by memory latency (the PTE or
    /// page-cache slot and then the folio are random loads), so the batch is
    /// software-pipelined: the slot of event i + 2·D and the folio of event
    /// i + D are prefetched while event i executes. Prefetches are hints
    /// only; they change no state.
    pub fn run(&mut self, events: &[Event]) {
        if self.kmem.is_some() {
            self.kmem_charge_tasks();
        }
        if self.tp.is_some() || self.xp.is_some() {
            if self.xp.is_some() {
                self.run_explained(events);
            } else {
                self.run_traced(events);
            }
            return;
        }
        const D: usize = 8;
        let n = events.len();
        for i in 0..n {
            if i + 2 * D < n {
                self.prefetch_slot(&events[i + 2 * D]);
            }
            if i + D < n {
                self.prefetch_folio(&events[i + D]);
            }
            self.step(&events[i]);
        }
    }

    /// [`Sim::run`] with the tracepoints on: each event's task becomes the one
    /// the tracepoints name, and a buffered read emits `mm_filemap_get_pages`
    /// (`filemap_get_pages`, before the read) for its whole range. The untraced
    /// loop pays one test per batch for this.
    #[cold]
    pub(crate) fn run_traced(&mut self, events: &[Event]) {
        use crate::tracepoint::TpTask;
        for ev in events {
            match *ev {
                Event::Access { vma, .. } => {
                    if let Some(v) = self.vmas.get(vma as usize) {
                        self.tp_task = TpTask::Task(v.task);
                    }
                }
                Event::FileRead { file, index, pages } => {
                    self.tp_task = self.tp_file_task(file);
                    self.tp_get_pages(file, index, pages);
                }
                Event::FdRead { fd, index, pages } => {
                    if let (Some(file), Some(task)) = (self.fd_file(fd), self.fd_task(fd)) {
                        self.tp_task = TpTask::Task(task);
                        self.tp_get_pages(file, index, pages);
                    }
                }
                Event::FileWrite { file, .. } => self.tp_task = self.tp_file_task(file),
                _ => {} // Think, Discard, Collapse, ThpAdvice, FileSync: no tracepoint
            }
            self.step(ev);
        }
    }

    /// The PTE or page-cache slot an event will read, if it exists yet, and
    /// whether it is a PTE: two tests (Access first), not a six-way jump table.
    #[inline(always)]
    fn slot_ref(&self, ev: &Event) -> Option<(&u32, bool)> {
        if let Event::Access { vma, index, .. } = *ev {
            return Some((self.vmas.get(vma as usize)?.ptes.get(index as usize)?, true));
        }
        if let Event::FileRead { file, index, .. } | Event::FileWrite { file, index, .. } = *ev {
            let slots = &self.files.get(file as usize)?.slots;
            return Some((slots.get(index as usize)?, false));
        }
        None
    }

    #[inline]
    fn prefetch_slot(&self, ev: &Event) {
        if let Some((p, _)) = self.slot_ref(ev) {
            prefetch(p as *const u32 as *const u8);
        }
    }

    /// Second stage: the slot has been prefetched; prefetch what it points
    /// to — the resident folio, or for a swapped-out anonymous page its swap
    /// slot (which `do_swap_page` reads first).
    #[inline]
    fn prefetch_folio(&self, ev: &Event) {
        let Some((&v, pte)) = self.slot_ref(ev) else {
            return;
        };
        if v & crate::mem::pagetable::PTE_PRESENT != 0 {
            let f = if pte {
                v & crate::mem::pagetable::PTE_FOLIO_MASK
            } else {
                v & !crate::mem::filemap::SLOT_FOLIO
            };
            self.folios.prefetch(f);
        } else if v != 0 && pte {
            if let Some(swap) = self.swap.as_ref() {
                if let Some(slot) = swap.slots.get((v - 1) as usize) {
                    prefetch(slot as *const u32 as *const u8);
                }
                if let Some(owner) = swap.owner_ref(v - 1) {
                    prefetch(owner as *const crate::memcg::MemcgId as *const u8);
                }
            }
        }
    }

    /// Starts the measured part of a run: zeroes every event counter (the
    /// vmstat counters, access counts, PSI, stall and IO-wait times, kswapd
    /// CPU) so that [`Sim::finish`] reports only what happens from here on,
    /// like counters read before and after a benchmark's measured run after
    /// a warmup. The machine's state (memory contents, LRU order, costs,
    /// the workingset clock) is untouched.
    pub fn begin_measurement(&mut self) {
        self.vm = Vmstat::default();
        self.acc = AccessStats::default();
        self.psi = Psi::starting_at(self.clock);
        self.reclaim_stall_ns = 0;
        self.io_wait_ns = 0;
        self.dirty_throttle_begin_measurement();
        self.kswapd.cpu_ns = 0;
        self.kswapd.profile = Default::default();
        self.direct_profile = Default::default();
        self.smp.reset_stats();
        self.lru_gen.stats = Default::default();
        self.reset_memcg_stats();
        self.damon_begin_measurement();
        if let Some(t) = self.tlb.as_mut() {
            t.reset_stats();
        }
        self.series_mark(
            crate::timer::SeriesMarkerKind::MeasurementStart,
            None,
            "warmup ended: counters zeroed".into(),
        );
        self.measure_start = self.clock;
    }

    /// Current workload time, ns.
    pub fn now(&self) -> u64 {
        self.clock
    }

    /// Counters so far.
    pub fn vmstat(&self) -> &Vmstat {
        &self.vm
    }

    /// Access counters so far.
    pub fn access_stats(&self) -> &AccessStats {
        &self.acc
    }

    /// Ends the run: settles background work and reports.
    pub fn finish(&mut self) -> RunResult {
        // kswapd may still be mid-run; let it finish its current run so its CPU is accounted.
        while self.kswapd.running {
            self.kswapd_step();
        }
        self.arm_kswapd_timer();
        self.fill_gauges();
        let end = (self.clock - self.measure_start).max(1);
        let psi = self.psi.report(self.clock.max(self.kswapd.clock));
        let heap = self.heap_bytes();
        let live = self.folios.live().max(1) as f64;
        let (slot_bytes, tracked) = self.slot_bytes();
        RunResult {
            policy: self.cfg.policy.name.name().to_string(),
            miss_ratio: if self.acc.accesses == 0 {
                0.0
            } else {
                self.acc.misses as f64 / self.acc.accesses as f64
            },
            access: self.acc.clone(),
            vmstat: self.vm.clone(),
            psi,
            runtime_s: (self.clock - self.measure_start) as f64 / 1e9,
            throughput: self.acc.accesses as f64 / (end as f64 / 1e9),
            kswapd_cpu_s: self.kswapd.cpu_ns as f64 / 1e9,
            reclaim_stall_s: self.reclaim_stall_ns as f64 / 1e9,
            io_wait_s: self.io_wait_ns as f64 / 1e9,
            dirty_throttle: self.dirty_throttle_report(),
            memcg_usage_pages: self.memcgs[0].usage,
            memcg_max_pages: (self.memcgs[0].max != u64::MAX).then_some(self.memcgs[0].max),
            memcg_max_events: self.memcgs.iter().map(|m| m.max_events).sum(),
            memcg: (0..self.memcgs.len())
                .map(|m| {
                    let m = m as crate::memcg::MemcgId;
                    (self.memcgs[m as usize].path.clone(), self.memcg_report(m))
                })
                .collect(),
            watermarks: [
                self.node.wmark_min,
                self.node.wmark_low,
                self.node.wmark_high,
            ],
            buddyinfo: self.phys.zone.buddyinfo(),
            pagetypeinfo: self.phys.zone.pagetypeinfo(),
            pcp_pages: self.phys.pcp.count(),
            swap_used_pages: self.swap.as_ref().map_or(0, |s| s.used),
            sim_bytes_per_resident_folio: self.folios.heap_bytes() as f64 / live,
            sim_bytes_per_tracked_page: slot_bytes as f64 / tracked.max(1) as f64,
            sim_heap_bytes: heap as u64,
            kswapd_profile: self.kswapd.profile,
            direct_profile: self.direct_profile,
            cpus: self.smp.cpus as u32,
            lru_lock_wait_s: (self.direct_profile.lock_ns + self.smp.task_lock_wait_ns) as f64
                / 1e9,
            // A saturated lock's backlog may run past the end: at most 100 %.
            lru_lock_busy_pct: (self.busiest_lru_lock_ns() as f64 * 100.0 / end as f64).min(100.0),
            lru_gen: self.lru_gen_report(),
            stats_memcg_paths: if self.stats_samples.is_empty() {
                Vec::new()
            } else {
                self.memcgs.iter().map(|m| m.path.clone()).collect()
            },
            stats_samples: self.stats_samples.clone(),
            series_markers: self.series_markers.clone(),
            tracepoints: self
                .tp
                .as_mut()
                .map(|t| {
                    // kswapd's clock runs ahead of the workload's: in time order, as
                    // `perf script` sorts a recording.
                    let mut r = std::mem::take(&mut t.records);
                    r.sort_by_key(|e| e.t_ns);
                    r
                })
                .unwrap_or_default(),
            tracepoints_dropped: self.tp.as_ref().map_or(0, |t| t.dropped),
            task_names: if self.tp.is_some() {
                self.tasks.iter().map(|t| t.name.clone()).collect()
            } else {
                Vec::new()
            },
            damon: self.damon_report(),
            explain: self.explain_report(),
            mthp: self.thp_report(),
            anon_thp_pages: self.anon_large_pages(),
            khugepaged: self.khugepaged_report(),
            tlb: self.tlb.as_ref().map(|t| t.report()),
            unapplied_writes: (self.knob_events.len() + self.lru_gen.pending.len()) as u64,
            first_unapplied_s: self
                .knob_events
                .last()
                .map(|e| e.at)
                .into_iter()
                .chain(self.lru_gen.pending.last().map(|w| w.0))
                .min()
                .map(|at| at as f64 / 1e9),
            shadow_quantised: self.shadow_layout.quantised(),
            mmsim_memcg_flush: self.memcg_stats.report(),
        }
    }

    /// The gauges of /proc/vmstat that need no walk: free pages, the LRU
    /// list sizes summed over the groups, dirty and writeback pages.
    pub(crate) fn fill_cheap_gauges(&self, vm: &mut Vmstat) {
        let lv = self.subtree_lruvec(crate::memcg::ROOT);
        vm.nr_free_pages = self.node.free;
        vm.nr_inactive_anon = lv.size(LruList::InactiveAnon);
        vm.nr_active_anon = lv.size(LruList::ActiveAnon);
        vm.nr_inactive_file = lv.size(LruList::InactiveFile);
        vm.nr_active_file = lv.size(LruList::ActiveFile);
        vm.nr_unevictable = lv.size(LruList::Unevictable);
        vm.nr_dirty = self.nr_dirty;
        vm.nr_writeback = self.nr_writeback;
    }

    /// The end-of-run gauges: the cheap ones and `nr_swapcached`, which is
    /// kept as folios enter and leave the swap cache (it was a walk of every
    /// listed folio, 48 s at 1 TiB, before an interrupted run could report).
    fn fill_gauges(&mut self) {
        let mut vm = std::mem::take(&mut self.vm);
        self.fill_cheap_gauges(&mut vm);
        self.vm = vm;
        self.vm.nr_swapcached = self.nr_swapcache_folios;
        debug_assert_eq!(self.nr_swapcache_folios, self.swapcached_walk());
    }

    /// (bytes, entries) of the per-page slot arrays: PTEs, page-cache slots, swap slots.
    fn slot_bytes(&self) -> (usize, usize) {
        let mut bytes = 0;
        let mut n = 0;
        for v in &self.vmas {
            bytes += v.ptes.capacity() * 4;
            n += v.ptes.len();
        }
        for f in &self.files {
            bytes += f.slots.capacity() * 4;
            n += f.slots.len();
        }
        if let Some(s) = &self.swap {
            bytes += s.heap_bytes();
            n += s.slots.len();
        }
        (bytes, n)
    }

    /// Simulator heap bytes: folio arena, zone and `mem_map`, page tables,
    /// page cache, swap slots.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.folios.heap_bytes()
            + self.phys.heap_bytes()
            + self
                .vmas
                .iter()
                .map(|v| v.ptes.capacity() * 4)
                .sum::<usize>()
            + self
                .files
                .iter()
                .map(|f| f.slots.capacity() * 4)
                .sum::<usize>()
            + self.swap.as_ref().map_or(0, |s| s.heap_bytes())
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

    /// The folio caching page `index` of `file`: its mapcount (`folio_mapcount()`: the
    /// PTEs and PMDs mapping it) and whether it is on an active LRU list
    /// (`PG_active`); `None` if the page is not cached. For tests and tools.
    pub fn file_folio_state(&self, file: FileId, index: u32) -> Option<(u32, bool)> {
        let f = self.files.get(file as usize)?;
        let folio = crate::mem::filemap::slot_folio(*f.slots.get(index as usize)?)?;
        let fo = &self.folios[folio];
        Some((u32::from(fo.mapcount), fo.test(flags::ACTIVE)))
    }

    /// A one-line summary of resident folios by state, for debugging and probes.
    pub fn debug_summary(&self) -> String {
        let mut n = [0u64; 6]; // resident, swapcache, writeback, mapped, referenced, active
        for (_, l) in self.memcgs.iter().flat_map(|m| m.lruvec.all_lists()) {
            let mut c = l.head;
            while c != crate::mem::folio::NIL {
                let f = &self.folios[c];
                n[0] += 1;
                n[1] += f.test(flags::SWAPCACHE) as u64;
                n[2] += f.test(flags::WRITEBACK) as u64;
                n[3] += (f.mapcount > 0) as u64;
                n[4] += f.test(flags::REFERENCED) as u64;
                n[5] += f.test(flags::ACTIVE) as u64;
                c = self.folios.links(c)[1];
            }
        }
        format!(
            "resident {} swapcache {} writeback {} mapped {} referenced {} active {} (writeback queue {})",
            n[0], n[1], n[2], n[3], n[4], n[5], self.writeback[0].len()
        )
    }

    /// Checks the data-structure invariants; returns a description of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.check_swapcache_count()?;
        self.check_swap_slots_held()?;
        self.check_dirty_ranges()?;
        self.check_ptes()?;
        let fds = self.fd_ra_slots();
        self.ra_slots
            .check(self.vmas.iter().map(|v| v.ra_slot).chain(fds))?;
        let mut on_lists = 0u64;
        let mut own = vec![0u64; self.memcgs.len()];
        for (m, memcg) in self.memcgs.iter().enumerate() {
            if let Err(e) = self.check_lru_gen_invariants(m) {
                return Err(format!("memcg {}: {e}", memcg.path));
            }
            for (i, l) in memcg.lruvec.all_lists() {
                let i = i as usize;
                let mglru = crate::reclaim::lru_gen::is_lru_gen_tag(i as u8);
                let mut n = 0u32;
                let mut pages = 0u64;
                let mut c = l.head;
                let mut prev = crate::mem::folio::NIL;
                while c != crate::mem::folio::NIL {
                    let f = &self.folios[c];
                    if f.lru as usize != i {
                        return Err(format!("folio {c} on list {i} tagged {}", f.lru));
                    }
                    if self.folios.links(c)[0] != prev {
                        return Err(format!("folio {c} has a broken prev link"));
                    }
                    if mglru {
                        let want = i as u8 - crate::reclaim::lru_gen::LRU_GEN_TAG;
                        if f.is_file() as u8 != want % 2
                            || f.test(flags::ACTIVE)
                            || crate::reclaim::lru_gen::folio_lru_gen(f).is_none()
                            || f.memcg as usize != m
                        {
                            return Err(format!(
                                "folio {c} on MGLRU list {i} with flags {:#x}, gen_refs {:#x}, group {}",
                                f.flags, f.gen_refs, f.memcg
                            ));
                        }
                    } else if self.policy != Policy::Lru {
                        if LruList::of_flags(f.flags) as usize != i {
                            return Err(format!(
                                "folio {c} on list {i} but flags say {:?}",
                                LruList::of_flags(f.flags)
                            ));
                        }
                        if f.memcg as usize != m {
                            return Err(format!(
                                "folio {c} of group {} on the lruvec of group {m}",
                                f.memcg
                            ));
                        }
                    }
                    own[f.memcg as usize] += f.nr_pages();
                    pages += f.nr_pages();
                    n += 1;
                    prev = c;
                    c = self.folios.links(c)[1];
                }
                if n != l.len || prev != l.tail || pages != l.pages {
                    return Err(format!(
                        "list {i}: counted {n} folios of {pages} pages, header says {} of {}",
                        l.len, l.pages
                    ));
                }
                on_lists += n as u64;
            }
        }
        // Each group's deferred split queue length counts its queued folios.
        if !self.thp.split_queues.is_empty() {
            let mut pm = vec![0u64; self.thp.split_queues.len().max(self.memcgs.len())];
            self.folios.for_each_live(|fo| {
                if fo.test(flags::DEFERRED_QUEUED) {
                    pm[fo.memcg as usize] += 1;
                }
            });
            for (m, q) in self.thp.split_queues.iter().enumerate() {
                if q.len != pm[m] {
                    return Err(format!(
                        "group {m}: deferred split queue length {} but {} queued folios",
                        q.len, pm[m]
                    ));
                }
            }
        }
        // The zero page is on no list and takes no page of the zone.
        let zero = u64::from(self.zero_folio != crate::mem::folio::NIL);
        let live = self.folios.live() as u64 - zero;
        if on_lists != live {
            return Err(format!("{live} live folios but {on_lists} on lists"));
        }
        let used = self.folios.live_pages() - zero + self.kmem_pagetable_frames();
        if self.node.free + used != self.node.managed {
            return Err(format!(
                "free {} + used {used} != managed {}",
                self.node.free, self.node.managed
            ));
        }
        self.check_page_alloc()?;
        // The per-CPU stock is charged to its group but holds no folio yet.
        own[self.stock.0 as usize] += self.stock.1;
        // Kernel memory (`crate::kmem`) is charged beside the folios.
        self.kmem_check()?;
        for (m, o) in own.iter_mut().enumerate() {
            *o += self.kmem_pages(m as crate::memcg::MemcgId);
        }
        // Hierarchical usage: own pages plus the children's usage.
        for (m, memcg) in self.memcgs.iter().enumerate() {
            let want = own[m]
                + memcg
                    .children
                    .iter()
                    .map(|&c| self.memcgs[c as usize].usage)
                    .sum::<u64>();
            if memcg.usage != want {
                return Err(format!(
                    "memcg {} usage {} != own {} + children's",
                    memcg.path, memcg.usage, own[m]
                ));
            }
            if memcg.usage > memcg.max && !memcg.over_max_after_write {
                return Err(format!(
                    "memcg {} usage {} over max {}",
                    memcg.path, memcg.usage, memcg.max
                ));
            }
        }
        // Swap charges: each used slot charges its owner and the owner's ancestors.
        let mut own_swap = vec![0u64; self.memcgs.len()];
        if let Some(swap) = &self.swap {
            for (i, &v) in swap.slots.iter().enumerate() {
                if v != 0 {
                    own_swap[swap.owner(i as u32) as usize] += 1;
                }
            }
        }
        for (m, memcg) in self.memcgs.iter().enumerate() {
            let want = own_swap[m]
                + memcg
                    .children
                    .iter()
                    .map(|&c| self.memcgs[c as usize].swap_usage)
                    .sum::<u64>();
            if memcg.swap_usage != want {
                return Err(format!(
                    "memcg {} swap usage {} != own slots {} + children's",
                    memcg.path, memcg.swap_usage, own_swap[m]
                ));
            }
        }
        Ok(())
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

/// A cache prefetch hint (no-op where the architecture has none).
#[inline(always)]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Watermarks of a single-zone node (`__setup_per_zone_wmarks`, v4.6+ formula,
/// with `min_free_kbytes` from `init_per_zone_wmark_min` when not given).
pub(crate) fn watermarks(managed: u64, min_free_kbytes: Option<u64>, wsf: u32) -> (u64, u64, u64) {
    let kb = min_free_kbytes.unwrap_or_else(|| {
        let lowmem_kb = managed * 4;
        int_sqrt(lowmem_kb * 16).clamp(128, 262_144)
    });
    let min = kb / 4;
    let gap = (min / 4).max(managed * wsf as u64 / 10_000);
    (min, min + gap, min + 2 * gap)
}

/// Watermarks of a SHARDS-sampled node of `managed` pages sampled at `rate`: the
/// whole node's (`managed / rate` pages, [`watermarks`]) times `rate`, so that the
/// reserve is the same fraction of memory as on the whole machine (the kernel's
/// `init_per_zone_wmark_min` grows with the square root of memory, which on the
/// sampled node alone would make it √(1/rate) times too large). At least one page
/// each, strictly increasing as the kernel's are.
pub(crate) fn sampled_watermarks(
    managed: u64,
    rate: f64,
    min_free_kbytes: Option<u64>,
    wsf: u32,
) -> (u64, u64, u64) {
    let whole = (managed as f64 / rate).round() as u64;
    let (min, low, high) = watermarks(whole, min_free_kbytes, wsf);
    let scale = |p: u64| ((p as f64 * rate).round() as u64).max(1);
    let min = scale(min);
    let low = scale(low).max(min + 1);
    let high = scale(high).max(low + 1);
    (min, low, high)
}

/// Integer square root (`int_sqrt`).
pub(crate) fn int_sqrt(x: u64) -> u64 {
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

#[cfg(test)]
#[path = "sim_tests.rs"]
mod tests;
