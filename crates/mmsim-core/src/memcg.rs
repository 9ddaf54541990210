//! Memory cgroups and their lruvecs (mm/memcontrol.c,
//! include/linux/mmzone.h), as of v6.x.
//!
//! The groups form a tree under the top group `/` (index [`ROOT`]), the group
//! the workloads run in unless attached elsewhere. Every folio belongs to one
//! group (`folio.memcg`) and sits on that group's own lruvec; a group's
//! `usage` counts its own and its descendants' pages (hierarchical page
//! counters: a charge goes up to the top, and fails at the first ancestor at
//! its `memory.max`; `crate::page_counter` has the counters and the
//! per-CPU charge stock, `crate::swapfile` the swap slots' owners and
//! swap charges). Reclaim walks a subtree in pre-order
//! (`Sim::mem_cgroup_iter`), shrinking each group's own
//! lruvec; what the kernel reads as hierarchical lruvec state at the reclaim
//! root (list sizes, `WORKINGSET_ACTIVATE`) is summed over the subtree, and
//! the cost counters (`lru_note_cost`) and the workingset clock
//! (`workingset_age_nonresident`) are propagated to every ancestor as the
//! kernel does.
//!
//! `memory.max` at a group's limit triggers cgroup-limit reclaim of that
//! group's subtree (`try_to_free_mem_cgroup_pages`) with the kernel's
//! cgroup-reclaim rules (swappiness 0 means file only; no `file_is_tiny`;
//! global pgscan/pgsteal_kswapd/direct untouched). Node-wide pressure
//! triggers global reclaim (kswapd, direct) of the whole tree.

use crate::gfp::Gfp;
use crate::mem::folio::LruList;
use crate::mem::list::List;
use crate::mem::pagetable::TaskId;
use crate::sim::{Sim, SimError};
use crate::stats::item::*;
use crate::timer::SeriesMarkerKind;

/// Index of a memory cgroup in the simulator (its kernel id is index + 1).
pub type MemcgId = u16;

/// The top group, `/`.
pub const ROOT: MemcgId = 0;

/// Most groups: the kernel's `MEM_CGROUP_ID_MAX` (include/linux/memcontrol.h,
/// v6.12: `MEM_CGROUP_ID_SHIFT` = 16 bits of id, ids 1..=65,535). Shadow
/// entries give the id as many bits as the groups configured need (see
/// `crate::reclaim::workingset`).
pub const MAX_MEMCGS: usize = 65_535;

/// `MEMCG_CHARGE_BATCH`: pages a charge takes from the page counters at
/// once, the surplus kept in the per-CPU stock.
pub(crate) const MEMCG_CHARGE_BATCH: u64 = 64;
/// `MEMCG_DELAY_PRECISION_SHIFT`.
const MEMCG_DELAY_PRECISION_SHIFT: u32 = 20;
/// `MEMCG_DELAY_SCALING_SHIFT`.
const MEMCG_DELAY_SCALING_SHIFT: u32 = 14;
/// `HZ` assumed by the throttling formula (the source comment's worked
/// numbers are for HZ = 1000, one jiffy = 1 ms).
pub(crate) const HZ: u64 = 1000;
/// `MEMCG_MAX_HIGH_DELAY_JIFFIES`: at most 2 s of throttling per return to user.
pub(crate) const MEMCG_MAX_HIGH_DELAY_JIFFIES: u64 = 2 * HZ;

/// A group's settable knob (what `set_memcg_knob` writes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemcgKnob {
    /// `memory.max` (v1 `memory.limit_in_bytes`), pages.
    Max,
    /// `memory.high`, pages.
    High,
    /// `memory.low`, pages: best-effort protection.
    Low,
    /// `memory.min`, pages: hard protection.
    Min,
    /// v1 `memory.soft_limit_in_bytes`, pages.
    SoftLimit,
    /// v1 `memory.swappiness` (0..=200; `u64::MAX` restores the global
    /// `vm.swappiness`).
    Swappiness,
    /// A write of `N` pages to `memory.reclaim` (proactive reclaim; see
    /// `Sim::memory_reclaim`).
    Reclaim,
    /// v2 `memory.swap.max`, pages: the most swap slots the group's pages
    /// may hold (see `Sim::mem_cgroup_try_charge_swap`).
    SwapMax,
    /// v2 `memory.swap.high`, pages: above it the group's tasks are
    /// throttled on return to user space as over `memory.high` (the same
    /// curve, `swap_find_max_overage`), but nothing is reclaimed.
    SwapHigh,
    /// A write of a task id to `cgroup.procs`: moves the task into the group
    /// ([`Sim::attach_task`]). Not a scenario knob name (scenarios move
    /// workloads with `[[cgroup_move]]`).
    #[serde(skip)]
    Procs,
}

impl MemcgKnob {
    /// The cgroup file name.
    pub fn file(self) -> &'static str {
        match self {
            MemcgKnob::Max => "memory.max",
            MemcgKnob::High => "memory.high",
            MemcgKnob::Low => "memory.low",
            MemcgKnob::Min => "memory.min",
            MemcgKnob::SoftLimit => "memory.soft_limit_in_bytes",
            MemcgKnob::Swappiness => "memory.swappiness",
            MemcgKnob::Reclaim => "memory.reclaim",
            MemcgKnob::SwapMax => "memory.swap.max",
            MemcgKnob::SwapHigh => "memory.swap.high",
            MemcgKnob::Procs => "cgroup.procs",
        }
    }
}

/// A knob write scheduled at a simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KnobEvent {
    /// When, in simulated ns of the workload clock.
    pub at: u64,
    /// Which group.
    pub memcg: MemcgId,
    /// Which knob.
    pub knob: MemcgKnob,
    /// The value written, pages (`u64::MAX`: "max").
    pub pages: u64,
}

/// `effective_protection()` without recursive protection: the protected
/// usage, scaled down when the siblings' protected usage overcommits the
/// parent's effective protection.
pub(crate) fn effective_protection(
    usage: u64,
    setting: u64,
    parent_effective: u64,
    siblings_protected: u64,
) -> u64 {
    let protected = usage.min(setting);
    if siblings_protected > parent_effective {
        return (protected as u128 * parent_effective as u128 / siblings_protected as u128) as u64;
    }
    protected
}

/// `calculate_overage()`: how far `usage` is over `high`, as a fixed-point
/// fraction of `high` (2^20 = 100 %).
pub(crate) fn calculate_overage(usage: u64, high: u64) -> u64 {
    if usage <= high {
        return 0;
    }
    let high = high.max(1);
    ((usage - high) << MEMCG_DELAY_PRECISION_SHIFT) / high
}

/// `calculate_high_delay()`: jiffies to throttle a task that charged
/// `nr_pages` over `memory.high` with the given overage: quadratic in the
/// overage, proportional to the task's own share of a charge batch.
pub(crate) fn calculate_high_delay(nr_pages: u64, max_overage: u64) -> u64 {
    if max_overage == 0 {
        return 0;
    }
    let penalty = (max_overage * max_overage).saturating_mul(HZ)
        >> MEMCG_DELAY_PRECISION_SHIFT
        >> MEMCG_DELAY_SCALING_SHIFT;
    penalty.saturating_mul(nr_pages) / MEMCG_CHARGE_BATCH
}

/// Per-(memcg, node) LRU state (`struct lruvec`).
///
/// Sizes are in folios; every folio is order 0 for now, so folios = pages.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lruvec {
    /// The five LRU lists, indexed by `LruList`.
    pub lists: [List; 5],
    /// `lruvec->anon_cost` (5.8+ balancing).
    pub anon_cost: u64,
    /// `lruvec->file_cost`.
    pub file_cost: u64,
    /// `lruvec->nonresident_age`: the workingset clock (mm/workingset.c).
    pub nonresident_age: u64,
    /// `lruvec->refaults[]`: WORKINGSET_ACTIVATE_{ANON,FILE} at the end of the last reclaim cycle.
    pub refaults: [u64; 2],
    /// WORKINGSET_ACTIVATE_{ANON,FILE} of this lruvec (lruvec_page_state).
    pub workingset_activate: [u64; 2],
    /// `reclaim_stat.recent_scanned[]` (≈3.11–5.7 balancing).
    pub recent_scanned: [u64; 2],
    /// `reclaim_stat.recent_rotated[]`.
    pub recent_rotated: [u64; 2],
    /// The multi-gen LRU (`lruvec->lrugen`), used by the `mglru` policy.
    pub lrugen: crate::reclaim::lru_gen::LruGenFolio,
    /// `lruvec->lru_lock` (contended only with `machine.cpus` > 1).
    pub lru_lock: crate::smp::LruLock,
}

impl Lruvec {
    /// Pages on one list.
    #[inline]
    pub(crate) fn size(&self, lru: LruList) -> u64 {
        // Under MGLRU the evictable classic lists are empty and the
        // generations give the compatibility view (`lru_gen_is_active`).
        self.lists[lru as usize].pages + self.lrugen.compat_size(lru)
    }
    /// Pages on each evictable list, in [`LruList::EVICTABLE`] order (MGLRU's
    /// compatibility view taken once for the four, as `compat_sizes`).
    #[inline]
    pub(crate) fn evictable_sizes(&self) -> [u64; 4] {
        let compat = self.lrugen.compat_sizes();
        LruList::EVICTABLE.map(|l| self.lists[l as usize].pages + compat[l as usize])
    }
    /// Pages on the evictable lists (`lruvec_lru_size` summed over anon and file).
    #[inline]
    pub(crate) fn evictable(&self) -> u64 {
        self.evictable_sizes().iter().sum()
    }
    /// Inactive and active size of a type (file = true).
    #[inline]
    pub(crate) fn type_sizes(&self, file: bool) -> (u64, u64) {
        (
            self.size(LruList::inactive(file)),
            self.size(LruList::active(file)),
        )
    }
}

/// A memory cgroup.
#[derive(Clone, Debug)]
pub struct Memcg {
    /// Kernel cgroup id (`mem_cgroup_id`), ≥ 1; stored in shadow entries.
    pub(crate) id: u16,
    /// Path for reports (`/`, `/a`, `/a/b`).
    pub path: String,
    /// The parent group (None for the top group).
    pub parent: Option<MemcgId>,
    /// Child groups in creation order (the iteration order).
    pub children: Vec<MemcgId>,
    /// Charged pages of this group and its descendants (`memory.current`
    /// in pages).
    pub usage: u64,
    /// `memory.max` in pages (u64::MAX: unlimited).
    pub max: u64,
    /// `memory.high` in pages (u64::MAX: unlimited).
    pub high: u64,
    /// `memory.low` in pages (0: none).
    pub low: u64,
    /// `memory.min` in pages (0: none).
    pub min: u64,
    /// v1 `memory.soft_limit_in_bytes` in pages (u64::MAX: unlimited).
    pub soft_limit: u64,
    /// v1 `memory.swappiness` (None: the global `vm.swappiness`).
    pub swappiness: Option<u32>,
    /// Key in the soft-limit tree (its excess when last updated), None when
    /// not in the tree (`mem_cgroup_per_node.on_tree`, `usage_in_excess`).
    pub(crate) soft_tree_key: Option<u64>,
    /// Insertion order in the soft-limit tree (ties go to the latest).
    pub(crate) soft_tree_seq: u64,
    /// Charge and uncharge page events since the last tree update
    /// (`memcg1_check_events` with SOFTLIMIT_EVENTS_TARGET).
    pub(crate) soft_events: u64,
    /// Effective `memory.min` in the current reclaim (`memory.emin`).
    pub(crate) emin: u64,
    /// Effective `memory.low` in the current reclaim (`memory.elow`).
    pub(crate) elow: u64,
    /// Times a charge hit `memory.max` (`memory.events` max / v1 failcnt).
    pub(crate) max_events: u64,
    /// Swap slots held by the group's pages and its descendants' (the `swap`
    /// page counter; `memory.swap.current`).
    pub swap_usage: u64,
    /// `memory.swap.max`, pages (`u64::MAX`: max).
    pub swap_max: u64,
    /// `memory.swap.high`, pages (`u64::MAX`: max).
    pub swap_high: u64,
    /// A `memory.max` write left the usage above the new limit (reclaim and
    /// the OOM killer could not bring it down; `memory_max_write` then gives
    /// up, as the kernel does). Cleared once the usage is back under it.
    pub(crate) over_max_after_write: bool,
    /// `memory.pressure`: stalls of the tasks of this group and its
    /// descendants (the top group's is the system's).
    pub(crate) psi: crate::psi::Psi,
    /// Event counters of this group's own pages and tasks (`memory.stat`
    /// and `memory.events` report them summed over the subtree).
    pub(crate) stat: MemcgStat,
    /// The lruvec of this memcg on the one node.
    pub(crate) lruvec: Lruvec,
    /// Dirty file pages of this group's own (`NR_FILE_DIRTY` of its
    /// lruvec; `memory.stat`'s `file_dirty` sums the subtree).
    pub(crate) nr_file_dirty: u64,
    /// Pages of this group's own under writeback, file and swap
    /// (`NR_WRITEBACK`; `file_writeback` sums the subtree).
    pub(crate) nr_writeback: u64,
    /// Where this group's background writeback resumes its walk of the
    /// flusher's queue (`crate::cgwb`): no live entry before it is a
    /// folio of this group that it could write.
    pub(crate) wb_cursor: u64,
}

impl Memcg {
    /// A memcg with no limit.
    pub(crate) fn new(id: u16, path: &str, parent: Option<MemcgId>) -> Self {
        Memcg {
            id,
            path: path.into(),
            parent,
            children: Vec::new(),
            usage: 0,
            max: u64::MAX,
            high: u64::MAX,
            low: 0,
            min: 0,
            soft_limit: u64::MAX,
            swappiness: None,
            soft_tree_key: None,
            soft_tree_seq: 0,
            soft_events: 0,
            emin: 0,
            elow: 0,
            max_events: 0,
            swap_usage: 0,
            swap_max: u64::MAX,
            swap_high: u64::MAX,
            over_max_after_write: false,
            stat: MemcgStat::default(),
            psi: crate::psi::Psi::default(),
            lruvec: Lruvec::default(),
            nr_file_dirty: 0,
            nr_writeback: 0,
            wb_cursor: 0,
        }
    }
}

/// The per-group counters, declared in the counter registry (`stats.rs`).
pub use crate::stats::MemcgStat;

/// One group as `memory.current`, `memory.max`, `memory.events` and
/// `memory.stat` of cgroup v2 show it (hierarchical), in pages.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MemcgReport {
    /// `memory.current`, pages.
    pub current: u64,
    /// `memory.max`, pages (None: max).
    pub max: Option<u64>,
    /// `memory.high`, pages (None: max).
    pub high: Option<u64>,
    /// `memory.low`, pages.
    pub low: u64,
    /// `memory.min`, pages.
    pub min: u64,
    /// v1 `memory.soft_limit_in_bytes`, pages (None: unlimited).
    pub soft_limit: Option<u64>,
    /// `memory.events` max: charges that hit the limit.
    pub events_max: u64,
    /// `memory.swap.current`, pages: swap slots held by the subtree's pages.
    pub swap_current: u64,
    /// `memory.swap.max`, pages (None: max).
    pub swap_max_limit: Option<u64>,
    /// `memory.swap.high`, pages (None: max).
    pub swap_high_limit: Option<u64>,
    /// `memory.stat` anon (pages).
    pub anon: u64,
    /// `memory.stat` file (pages).
    pub file: u64,
    /// `memory.stat` inactive_anon.
    pub inactive_anon: u64,
    /// `memory.stat` active_anon.
    pub active_anon: u64,
    /// `memory.stat` inactive_file.
    pub inactive_file: u64,
    /// `memory.stat` active_file.
    pub active_file: u64,
    /// `memory.stat` unevictable.
    pub unevictable: u64,
    /// `memory.stat` pgscan (kswapd + direct + khugepaged).
    pub pgscan: u64,
    /// `memory.stat` pgsteal (kswapd + direct + khugepaged).
    pub pgsteal: u64,
    /// The event counters, summed over the subtree. Flattened into the group's
    /// JSON object; `memory.events` low and high are `events_low` and
    /// `events_high` there, so they do not collide with the limits `low` and
    /// `high` above.
    #[serde(flatten)]
    pub events: MemcgStat,
    /// Kernel memory charged to the subtree (`memory.stat` kernel,
    /// pagetables, slab, …; `crate::kmem`), only under
    /// `machine.kmem_accounting` (absent from the JSON otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kmem: Option<crate::kmem::KmemReport>,
    /// `memory.pressure` at the end (the top group: /proc/pressure/memory).
    pub psi: crate::psi::PsiReport,
}

impl MemcgReport {
    /// Multiplies every page count, limit and event counter by `factor`, rounded
    /// (a sampled run's group scaled back to the whole machine; estimates). PSI's
    /// times and averages are left as they are.
    pub fn scale(&mut self, factor: f64) {
        let up = |x: &mut u64| *x = (*x as f64 * factor).round() as u64;
        for x in [
            &mut self.current,
            &mut self.low,
            &mut self.min,
            &mut self.events_max,
            &mut self.swap_current,
            &mut self.anon,
            &mut self.file,
            &mut self.inactive_anon,
            &mut self.active_anon,
            &mut self.inactive_file,
            &mut self.active_file,
            &mut self.unevictable,
            &mut self.pgscan,
            &mut self.pgsteal,
        ] {
            up(x);
        }
        for x in [
            &mut self.max,
            &mut self.high,
            &mut self.soft_limit,
            &mut self.swap_max_limit,
            &mut self.swap_high_limit,
        ]
        .into_iter()
        .flatten()
        {
            up(x);
        }
        self.events.scale(factor);
        if let Some(k) = self.kmem.as_mut() {
            k.scale(factor);
        }
    }
}

/// Lruvec state the kernel reads hierarchically at a reclaim root or an
/// eviction lruvec (`lruvec_page_state` of a memcg lruvec): summed over the
/// group's subtree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SubtreeLruvec {
    /// Pages on each list, by [`LruList`] index.
    pub sizes: [u64; 5],
    /// WORKINGSET_ACTIVATE_{ANON,FILE}.
    pub workingset_activate: [u64; 2],
}

impl SubtreeLruvec {
    /// Pages on one list.
    #[inline]
    pub(crate) fn size(&self, lru: LruList) -> u64 {
        self.sizes[lru as usize]
    }
    /// Inactive and active size of a type (file = true).
    #[inline]
    pub(crate) fn type_sizes(&self, file: bool) -> (u64, u64) {
        (
            self.size(LruList::inactive(file)),
            self.size(LruList::active(file)),
        )
    }
}

impl Sim {
    /// Creates group `name` under `parent` (`mkdir` in the cgroup tree);
    /// no limit, no tasks.
    pub fn add_memcg(&mut self, parent: MemcgId, name: &str) -> Result<MemcgId, SimError> {
        if self.memcgs.len() >= MAX_MEMCGS {
            return Err(SimError::Setup(format!(
                "cgroup `{name}`: at most {MAX_MEMCGS} memory cgroups (the kernel's MEM_CGROUP_ID_MAX)"
            )));
        }
        let Some(p) = self.memcgs.get(parent as usize) else {
            return Err(SimError::Setup(format!(
                "cgroup `{name}`: no parent group {parent}"
            )));
        };
        if name.is_empty() || name.contains('/') {
            return Err(SimError::Setup(format!(
                "cgroup name `{name}` must be non-empty and without `/`"
            )));
        }
        let path = if p.parent.is_none() {
            format!("/{name}")
        } else {
            format!("{}/{name}", p.path)
        };
        // Paths differ when names differ among siblings: a check of the
        // parent's children, not of every group (65,535 of them at most).
        if self.memcgs[parent as usize]
            .children
            .iter()
            .any(|&c| self.memcgs[c as usize].path == path)
        {
            return Err(SimError::Setup(format!("cgroup `{path}` exists already")));
        }
        let id = self.memcgs.len() as MemcgId;
        self.memcgs
            .push(Memcg::new(id as u16 + 1, &path, Some(parent)));
        self.memcgs[parent as usize].children.push(id);
        self.update_shadow_layout();
        Ok(id)
    }

    /// The group at `path` (`/` is [`ROOT`]).
    pub fn memcg_by_path(&self, path: &str) -> Option<MemcgId> {
        self.memcgs
            .iter()
            .position(|m| m.path == path)
            .map(|i| i as MemcgId)
    }

    /// The groups, indexed by [`MemcgId`].
    pub fn memcgs(&self) -> &[Memcg] {
        &self.memcgs
    }

    /// Sets `memory.max` of `memcg` in pages (`u64::MAX`: unlimited), as
    /// [`Sim::set_memcg_knob`] with [`MemcgKnob::Max`].
    pub fn set_memcg_max(&mut self, memcg: MemcgId, pages: u64) -> Result<(), SimError> {
        self.set_memcg_knob(memcg, MemcgKnob::Max, pages)
    }

    /// Writes a knob of group `memcg` (`u64::MAX`: "max"). Writing
    /// `memory.max` below the usage reclaims down to it right away
    /// (`memory_max_write`: up to MAX_RECLAIM_RETRIES fruitless reclaims,
    /// then OOM kills in the group); `memory.high` likewise reclaims once
    /// (`memory_high_write`), and never kills. This reclaim runs in the
    /// writer's context: it does not stall the workload.
    pub fn set_memcg_knob(
        &mut self,
        memcg: MemcgId,
        knob: MemcgKnob,
        pages: u64,
    ) -> Result<(), SimError> {
        if memcg as usize >= self.memcgs.len() {
            return Err(SimError::Setup(format!("no cgroup {memcg}")));
        }
        self.drain_stock();
        let m = memcg as usize;
        if self.stats_interval_ns > 0 {
            let (kind, detail) = match knob {
                MemcgKnob::Procs => (SeriesMarkerKind::Move, format!("task {pages}")),
                _ if pages == u64::MAX => {
                    (SeriesMarkerKind::KnobWrite, format!("{}=max", knob.file()))
                }
                _ => (
                    SeriesMarkerKind::KnobWrite,
                    format!("{}={pages}p", knob.file()),
                ),
            };
            self.series_mark(kind, Some(memcg), detail);
        }
        match knob {
            MemcgKnob::Max => {
                self.memcgs[m].max = pages;
                let mut retries = crate::fault::MAX_RECLAIM_RETRIES;
                while self.memcgs[m].usage > pages {
                    if retries > 0 {
                        let over = self.memcgs[m].usage - pages;
                        if self.memcg_reclaim(memcg, over).nr_reclaimed == 0 {
                            retries -= 1;
                        }
                        continue;
                    }
                    self.count_memcg_events(m as crate::memcg::MemcgId, MEMCG_OOM, 1);
                    if !self.out_of_memory(Some(memcg)) {
                        break;
                    }
                }
                self.memcgs[m].over_max_after_write = self.memcgs[m].usage > pages;
            }
            MemcgKnob::Low => self.memcgs[m].low = pages,
            MemcgKnob::Reclaim => {
                self.memory_reclaim(memcg, pages, None)?;
            }
            MemcgKnob::SoftLimit => self.memcgs[m].soft_limit = pages,
            MemcgKnob::Swappiness => {
                if pages != u64::MAX && pages > 200 {
                    return Err(SimError::Setup(format!(
                        "memory.swappiness {pages} is out of range [0, 200]"
                    )));
                }
                self.memcgs[m].swappiness = (pages != u64::MAX).then_some(pages as u32);
            }
            MemcgKnob::Min => self.memcgs[m].min = pages,
            // swap_max_write(): only the limit changes; nothing is swapped in.
            MemcgKnob::SwapMax => self.memcgs[m].swap_max = pages,
            // swap_high_write(): only the limit changes.
            MemcgKnob::SwapHigh => self.memcgs[m].swap_high = pages,
            MemcgKnob::Procs => {
                let task = TaskId::try_from(pages)
                    .map_err(|_| SimError::Setup(format!("no task {pages}")))?;
                self.attach_task(task, memcg)?;
            }
            MemcgKnob::High => {
                self.memcgs[m].high = pages;
                let mut retries = crate::fault::MAX_RECLAIM_RETRIES;
                while self.memcgs[m].usage > pages && retries > 0 {
                    let over = self.memcgs[m].usage - pages;
                    if self.memcg_reclaim(memcg, over).nr_reclaimed == 0 {
                        retries -= 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// `page_counter_calculate_protection()` (mm/page_counter.c, 6.8+; in
    /// memcontrol.c before): the effective `memory.min`/`memory.low` of
    /// `m` in a reclaim rooted at `root`, from its parent's effective values
    /// (computed earlier in the same pre-order walk). A child of the root
    /// gets its own settings; deeper, protection overcommitted among
    /// siblings is shared out in proportion to each one's protected usage.
    /// Unclaimed parental protection is not distributed
    /// (`memory_recursiveprot` is off, the kernel default).
    pub(crate) fn memcg_calculate_protection(&mut self, root: MemcgId, m: MemcgId) {
        if m == root {
            return;
        }
        let g = &self.memcgs[m as usize];
        let usage = g.usage;
        if usage == 0 {
            return;
        }
        let Some(parent) = g.parent else { return };
        if parent == root {
            let (min, low) = (g.min, g.low);
            let g = &mut self.memcgs[m as usize];
            g.emin = min;
            g.elow = low;
            return;
        }
        let p = &self.memcgs[parent as usize];
        let (children_min, children_low) = p.children.iter().fold((0, 0), |(mn, lo), &c| {
            let c = &self.memcgs[c as usize];
            (mn + c.usage.min(c.min), lo + c.usage.min(c.low))
        });
        let emin = effective_protection(usage, g.min, p.emin, children_min);
        let elow = effective_protection(usage, g.low, p.elow, children_low);
        let g = &mut self.memcgs[m as usize];
        g.emin = emin;
        g.elow = elow;
    }

    /// `mem_cgroup_below_min()`: fully protected from this reclaim.
    pub(crate) fn memcg_below_min(&self, root: MemcgId, m: MemcgId) -> bool {
        let g = &self.memcgs[m as usize];
        m != root && g.parent.is_some() && g.emin >= g.usage
    }

    /// `mem_cgroup_below_low()`: protected unless nothing else is reclaimable.
    pub(crate) fn memcg_below_low(&self, root: MemcgId, m: MemcgId) -> bool {
        let g = &self.memcgs[m as usize];
        m != root && g.parent.is_some() && g.elow >= g.usage
    }

    /// `mem_cgroup_protection()`: (emin, elow) to scale scanning by, none
    /// for the reclaim root itself.
    pub(crate) fn memcg_protection(&self, root: MemcgId, m: MemcgId) -> (u64, u64) {
        if m == root {
            return (0, 0);
        }
        let g = &self.memcgs[m as usize];
        (g.emin, g.elow)
    }

    /// `memory_reclaim()` (a write of "N [swappiness=S]" to
    /// `memory.reclaim`, 6.8+ for the swappiness key): reclaims `pages` from
    /// the group's subtree in batches of a quarter of what is left (at least
    /// SWAP_CLUSTER_MAX), allowing MAX_RECLAIM_RETRIES fruitless batches;
    /// returns what it reclaimed, or an error (the kernel's -EAGAIN) if it
    /// fell short. Runs in the writer's context, not the workload's.
    pub(crate) fn memory_reclaim(
        &mut self,
        memcg: MemcgId,
        pages: u64,
        swappiness: Option<u32>,
    ) -> Result<u64, SimError> {
        if memcg as usize >= self.memcgs.len() {
            return Err(SimError::Setup(format!("no cgroup {memcg}")));
        }
        if swappiness.is_some_and(|s| s > 200) {
            return Err(SimError::Setup(
                "memory.reclaim swappiness is out of range [0, 200]".into(),
            ));
        }
        let mut retries = crate::fault::MAX_RECLAIM_RETRIES;
        let mut reclaimed = 0;
        while reclaimed < pages {
            let batch = (pages - reclaimed) / 4;
            let mut sc = crate::reclaim::ScanControl::new(
                crate::reclaim::Reclaimer::Memcg,
                batch.max(crate::reclaim::SWAP_CLUSTER_MAX),
                self.clock,
            );
            sc.target = memcg;
            sc.proactive_swappiness = swappiness;
            self.do_try_to_free_pages(&mut sc);
            if sc.nr_reclaimed == 0 {
                if retries == 0 {
                    return Err(SimError::Setup(format!(
                        "memory.reclaim of {}: reclaimed {reclaimed} of {pages} pages (EAGAIN)",
                        self.memcgs[memcg as usize].path
                    )));
                }
                retries -= 1;
            }
            reclaimed += sc.nr_reclaimed;
        }
        Ok(reclaimed)
    }

    /// `try_charge_memcg()` (mm/memcontrol.c, v6.12): charges `nr_pages`
    /// (a folio's `folio_nr_pages()`) to the current group (`cur_memcg`) and
    /// its ancestors, with the charge's mask `gfp`.
    ///
    /// The per-CPU stock is consumed first (`consume_stock`: only for at
    /// most MEMCG_CHARGE_BATCH pages, and only if it holds them all);
    /// otherwise a batch of `max(MEMCG_CHARGE_BATCH, nr_pages)` pages is
    /// charged and the surplus stocked, or, if that hits a limit, exactly
    /// `nr_pages`. At a limit the loop follows the mask as the kernel's
    /// does ([`Sim::try_charge_memcg_counters`]): without
    /// `__GFP_DIRECT_RECLAIM` (`gfpflags_allow_blocking` false, as a THP
    /// fault's `GFP_TRANSHUGE_LIGHT`) the charge fails at once; otherwise
    /// `memory.events` `max` is counted and `nr_pages` reclaimed from the
    /// group that hit it (`mem_over_limit`), tracing
    /// [`crate::gfp::memcg_reclaim_mask`]`(gfp)`; the charge retries once its
    /// margin holds them, drains the stock once; then `__GFP_NORETRY`
    /// (readahead's `readahead_gfp_mask`, a THP fault's mask under
    /// `defrag=always` outside MADV_HUGEPAGE) fails it (`goto nomem`: no
    /// retries, no `oom` event, no OOM killer); otherwise it retries after
    /// any progress while `nr_pages` is at most `1 << PAGE_ALLOC_COSTLY_ORDER`,
    /// else up to MAX_RECLAIM_RETRIES times, then `__GFP_RETRY_MAYFAIL`
    /// fails it, and otherwise the OOM killer runs in that group (not above
    /// PAGE_ALLOC_COSTLY_ORDER: `mem_cgroup_oom` returns OOM_SKIPPED and the
    /// charge fails). After a successful charge over some ancestor's
    /// `memory.high`, the task owes reclaim (and maybe a throttling sleep)
    /// on its return to user space.
    ///
    /// The `__GFP_NORETRY` test has been in `try_charge()` since v3.x
    /// (before the drain became a retry of its own), and readahead has
    /// charged with `readahead_gfp_mask` (`__GFP_NORETRY|__GFP_NOWARN`)
    /// since v4.8 ("mm, memcg: use consistent gfp flags during readahead",
    /// Michal Hocko, 2016: `read_pages`, `mpage_readpages` and ext4's
    /// `ext4_mpage_readpages` took the mask `__do_page_cache_readahead`
    /// allocated with), so every modelled kernel (v4.9 to v6.18) gives a
    /// readahead charge up after one reclaim. Not modelled: `__GFP_NOFAIL`
    /// and `__GFP_HIGH` charges forced over the limit (no mmsim site has
    /// them), `PF_MEMALLOC`, `task_in_memcg_oom`.
    #[inline(always)]
    pub(crate) fn try_charge_memcg(&mut self, nr_pages: u64, gfp: Gfp) -> bool {
        let m = self.cur_memcg;
        if nr_pages <= MEMCG_CHARGE_BATCH && self.stock.0 == m && self.stock.1 >= nr_pages {
            self.stock.1 -= nr_pages;
            return true;
        }
        // The textbook `lru` policy keeps its groups at their limit: no
        // quiet fast path, its own loop.
        if self.policy == crate::sim::Policy::Lru {
            let blocking = gfp & crate::gfp::__GFP_DIRECT_RECLAIM != 0;
            return self.lru_charge_counters(m, nr_pages, blocking);
        }
        if nr_pages == 1 && self.try_charge_one_quiet(m) {
            return true;
        }
        self.try_charge_memcg_counters(m, nr_pages, gfp)
    }

    /// A charge of `nr_pages` that took `charged` (the batch) from the
    /// counters (`try_charge_memcg()`'s `done_restock`, v6.12): the surplus
    /// goes to the stock, and `memory.high` is checked.
    #[inline(always)]
    fn charged_counters(&mut self, m: MemcgId, nr_pages: u64, charged: u64) {
        if charged > nr_pages {
            self.refill_stock(m, charged - nr_pages);
        }
        self.note_over_high(m, charged);
        if self.pages_over_high > MEMCG_CHARGE_BATCH {
            self.mem_cgroup_handle_over_high();
        }
    }

    /// The charge's OOM step (`try_charge_memcg()` → `mem_cgroup_oom()`,
    /// v6.12), shared by both charge loops: a costly charge (over
    /// `1 << PAGE_ALLOC_COSTLY_ORDER` pages) fails at once (`nomem`);
    /// otherwise `MEMCG_OOM` is counted and the group's OOM killer runs.
    /// True when it killed something, so the charge retries.
    #[inline(always)]
    pub(crate) fn charge_oom(&mut self, over: MemcgId, nr_pages: u64) -> bool {
        if nr_pages > 1 << crate::page_alloc::PAGE_ALLOC_COSTLY_ORDER {
            return false;
        }
        self.count_memcg_events(over, MEMCG_OOM, 1);
        self.out_of_memory(Some(over))
    }

    /// The part of [`Sim::try_charge_memcg`] after `consume_stock`
    /// failed, under every policy but `lru` (its own
    /// [`Sim::lru_charge_counters`]): out of line, so that a charge the stock covers (most of
    /// them) inlines into the fault path. The loop of v6.12
    /// `try_charge_memcg()` from its `retry:` label, reading `gfp` as the
    /// kernel does (see [`Sim::try_charge_memcg`]).
    #[inline(never)]
    fn try_charge_memcg_counters(&mut self, m: MemcgId, nr_pages: u64, gfp: Gfp) -> bool {
        use crate::gfp::{__GFP_DIRECT_RECLAIM, __GFP_NORETRY, __GFP_RETRY_MAYFAIL};
        debug_assert!(
            self.policy != crate::sim::Policy::Lru,
            "lru_charge_counters"
        );
        let mut batch = MEMCG_CHARGE_BATCH.max(nr_pages);
        let mut drained = false;
        let mut retries = crate::fault::MAX_RECLAIM_RETRIES;
        loop {
            // The batch, or else exactly `nr_pages` (the kernel's two
            // `page_counter_try_charge` calls, in one walk); after a
            // failure, `nr_pages` only.
            match self.page_counter_try_charge_batch(m, batch, nr_pages) {
                Ok(charged) => {
                    self.charged_counters(m, nr_pages, charged);
                    return true;
                }
                Err(_) if gfp & __GFP_DIRECT_RECLAIM == 0 => return false,
                Err(over) => {
                    batch = nr_pages;
                    // memcg_memory_event(MEMCG_MAX) on every pass.
                    self.memcgs[over as usize].max_events += 1;
                    let reclaimed = self.try_to_free_mem_cgroup_pages(over, nr_pages, gfp);
                    // mem_cgroup_margin(mem_over_limit) >= nr_pages
                    let g = &self.memcgs[over as usize];
                    if g.max.saturating_sub(g.usage) >= nr_pages {
                        continue;
                    }
                    if !drained {
                        drained = true;
                        self.drain_stock();
                        continue;
                    }
                    // `if (gfp_mask & __GFP_NORETRY) goto nomem;`
                    if gfp & __GFP_NORETRY != 0 {
                        return false;
                    }
                    // Progress: retry without counting, for at most
                    // 1 << PAGE_ALLOC_COSTLY_ORDER pages.
                    if reclaimed > 0 && nr_pages <= 1 << crate::page_alloc::PAGE_ALLOC_COSTLY_ORDER
                    {
                        continue;
                    }
                    if retries > 0 {
                        retries -= 1;
                        // Stands in for reclaim_throttle() in the reclaim
                        // that found everything under writeback. Not
                        // under MGLRU: its memcg reclaim fills none of
                        // the `sc->nr` counts that throttle (6.1.176,
                        // 6.12.107: `shrink_node()`'s LRUVEC_CONGESTED
                        // test, `shrink_inactive_list()`'s throttle),
                        // so the retries follow at once and a group
                        // full of dirty folios goes to the OOM killer
                        // unless writes end within them.
                        if !matches!(self.policy, crate::sim::Policy::Mglru(_)) {
                            self.reclaim_throttle_writeback();
                        }
                        continue;
                    }
                    if gfp & __GFP_RETRY_MAYFAIL != 0 {
                        return false;
                    }
                    if !self.charge_oom(over, nr_pages) {
                        return false;
                    }
                    retries = crate::fault::MAX_RECLAIM_RETRIES;
                }
            }
        }
    }

    /// The high check at the end of `try_charge_memcg()`: the first group
    /// from `m` up over its `memory.high` (or, under v2, its
    /// `memory.swap.high`) makes the task owe `batch` pages
    /// (`memcg_nr_pages_over_high`), handled on return to user space, or
    /// right away once more than a batch is owed.
    pub(crate) fn note_over_high(&mut self, m: MemcgId, batch: u64) {
        let v2 = self.cfg.cgroup_version == crate::config::CgroupVersion::V2;
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &self.memcgs[c as usize];
            if g.usage > g.high || (v2 && g.swap_usage > g.swap_high) {
                self.pages_over_high += batch;
                break;
            }
            cur = g.parent;
        }
    }

    /// `mem_cgroup_handle_over_high()` on return to user space: reclaim
    /// from every level over its `memory.high` (`reclaim_high`), then, if
    /// the overage still calls for more than 10 ms, retry while reclaim
    /// makes progress (up to MAX_RECLAIM_RETRIES fruitless times) and
    /// finally sleep the penalty (at most 2 s; a memstall).
    pub(crate) fn mem_cgroup_handle_over_high(&mut self) {
        let nr = std::mem::take(&mut self.pages_over_high);
        if nr == 0 {
            return;
        }
        let m = self.cur_memcg;
        let mut retries = crate::fault::MAX_RECLAIM_RETRIES;
        let mut in_retry = false;
        loop {
            let target = if in_retry {
                crate::reclaim::SWAP_CLUSTER_MAX
            } else {
                nr
            };
            let reclaimed = self.reclaim_high(m, target);
            let swap_overage = self.swap_find_max_overage(m);
            let penalty = (calculate_high_delay(nr, self.mem_find_max_overage(m))
                + calculate_high_delay(nr, swap_overage))
            .min(MEMCG_MAX_HIGH_DELAY_JIFFIES);
            if penalty <= HZ / 100 {
                return;
            }
            if reclaimed > 0 || retries > 0 {
                if reclaimed == 0 {
                    retries -= 1;
                }
                in_retry = true;
                continue;
            }
            let ns = penalty * (1_000_000_000 / HZ);
            self.count_memcg_events(m, MEMCG_HIGH_THROTTLE_NS, ns);
            // A memstall sleep; under the fair schedule others run meanwhile.
            self.task_sleep_until(self.clock + ns, true);
            return;
        }
    }

    /// `reclaim_high()`: reclaims `nr` pages from each level (from `m` up,
    /// the top group excluded) that is over its `memory.high`.
    fn reclaim_high(&mut self, m: MemcgId, nr: u64) -> u64 {
        let mut reclaimed = 0;
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &self.memcgs[c as usize];
            let parent = g.parent;
            if parent.is_none() {
                break;
            }
            if g.usage > g.high {
                self.count_memcg_events(c, MEMCG_HIGH, 1);
                // v6.12 reclaim_high: try_to_free_mem_cgroup_pages(…, GFP_KERNEL, …).
                let gfp = crate::gfp::GFP_KERNEL;
                reclaimed += self.try_to_free_mem_cgroup_pages(c, nr, gfp);
            }
            cur = parent;
        }
        reclaimed
    }

    /// `mem_find_max_overage()`: the largest overage from `m` up (the top
    /// group excluded).
    fn mem_find_max_overage(&self, m: MemcgId) -> u64 {
        let mut max = 0;
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &self.memcgs[c as usize];
            if g.parent.is_none() {
                break;
            }
            max = max.max(calculate_overage(g.usage, g.high));
            cur = g.parent;
        }
        max
    }

    /// `swap_find_max_overage()` (v5.8+): the largest `memory.swap.high`
    /// overage from `m` up (the top group excluded), counting a
    /// `memory.swap.events` high at every level over it. Under v1 there is
    /// no swap counter to throttle on: 0.
    fn swap_find_max_overage(&mut self, m: MemcgId) -> u64 {
        if self.cfg.cgroup_version != crate::config::CgroupVersion::V2 {
            return 0;
        }
        let mut max = 0;
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &mut self.memcgs[c as usize];
            if g.parent.is_none() {
                break;
            }
            let o = calculate_overage(g.swap_usage, g.swap_high);
            if o > 0 {
                g.stat.count(MEMCG_SWAP_HIGH, 1);
            }
            max = max.max(o);
            cur = g.parent;
        }
        max
    }

    /// Moves `task` into `memcg` (writing its pid to `cgroup.procs`,
    /// `cgroup_migrate` → `mem_cgroup_attach`): its future charges, and those
    /// of reads through the files it opened, go there; pages already charged
    /// stay where they are (cgroup v2 never moves charges, and v1 only with
    /// `memory.move_charge_at_immigrate`, 0 by default and deprecated since
    /// 6.7).
    pub fn attach_task(&mut self, task: TaskId, memcg: MemcgId) -> Result<(), SimError> {
        if memcg as usize >= self.memcgs.len() {
            return Err(SimError::Setup(format!("no cgroup {memcg}")));
        }
        let t = self
            .tasks
            .get_mut(task as usize)
            .ok_or_else(|| SimError::Setup(format!("no task {task}")))?;
        t.memcg = memcg;
        Ok(())
    }

    /// `mem_cgroup_iter()` (mm/memcontrol.c, v6.x) without a reclaim cookie:
    /// the group after `cur` in a pre-order walk of `root`'s subtree, or
    /// None at the end.
    pub(crate) fn mem_cgroup_iter(&self, root: MemcgId, cur: MemcgId) -> Option<MemcgId> {
        if let Some(&c) = self.memcgs[cur as usize].children.first() {
            return Some(c);
        }
        let mut cur = cur;
        while cur != root {
            let parent = self.memcgs[cur as usize].parent?;
            let siblings = &self.memcgs[parent as usize].children;
            let i = siblings.iter().position(|&c| c == cur)?;
            if let Some(&next) = siblings.get(i + 1) {
                return Some(next);
            }
            cur = parent;
        }
        None
    }

    /// Hierarchical lruvec state of `memcg` (its subtree's sum).
    ///
    /// A group without children (the usual eviction lruvec: a workload's
    /// own group, read once per refault by `workingset_test_recent`) is its
    /// own subtree: its lruvec is read directly, without the pre-order walk
    /// (`mem_cgroup_iter`) and its per-group loop, inline in the caller.
    /// Same sums.
    #[inline(always)]
    pub(crate) fn subtree_lruvec(&self, memcg: MemcgId) -> SubtreeLruvec {
        let g = &self.memcgs[memcg as usize];
        if g.children.is_empty() {
            return Self::lruvec_state(&g.lruvec);
        }
        self.subtree_lruvec_walk(memcg)
    }

    /// One lruvec's list sizes (with MGLRU's compatibility view) and
    /// WORKINGSET_ACTIVATE counts.
    #[inline(always)]
    fn lruvec_state(lv: &Lruvec) -> SubtreeLruvec {
        let compat = lv.lrugen.compat_sizes();
        SubtreeLruvec {
            sizes: std::array::from_fn(|i| lv.lists[i].pages + compat[i]),
            workingset_activate: lv.workingset_activate,
        }
    }

    /// [`Sim::subtree_lruvec`] of a group with children: the sum over its
    /// subtree in `mem_cgroup_iter` order.
    #[inline(never)]
    fn subtree_lruvec_walk(&self, memcg: MemcgId) -> SubtreeLruvec {
        let mut out = SubtreeLruvec::default();
        let mut cur = Some(memcg);
        while let Some(m) = cur {
            let one = Self::lruvec_state(&self.memcgs[m as usize].lruvec);
            for (s, x) in out.sizes.iter_mut().zip(one.sizes) {
                *s += x;
            }
            out.workingset_activate[0] += one.workingset_activate[0];
            out.workingset_activate[1] += one.workingset_activate[1];
            cur = self.mem_cgroup_iter(memcg, m);
        }
        out
    }

    /// Zeroes every group's event counters and pressure (measurement start).
    pub(crate) fn reset_memcg_stats(&mut self) {
        self.kmem_reset_stats();
        self.memcg_stats.flushed_events.fill(0);
        self.memcg_stats.reset_counts();
        let now = self.clock;
        for m in &mut self.memcgs {
            m.max_events = 0;
            m.stat = MemcgStat::default();
            m.psi = crate::psi::Psi::starting_at(now);
            let l = &mut m.lruvec.lru_lock;
            (l.held_ns, l.acquisitions) = (0, 0);
        }
    }

    /// `memory.pressure` of group `m` after every 2 s period (the top group:
    /// the system's): (seconds, report).
    #[cfg_attr(not(test), allow(dead_code))] // only the memcg rule tests read it
    pub(crate) fn memcg_psi_series(&self, m: MemcgId) -> Vec<(f64, crate::psi::PsiReport)> {
        if m == ROOT {
            self.psi.series(self.clock)
        } else {
            self.memcgs[m as usize].psi.series(self.clock)
        }
    }

    /// The report of group `m` (hierarchical, like cgroup v2's files).
    pub(crate) fn memcg_report(&self, m: MemcgId) -> MemcgReport {
        let lv = self.subtree_lruvec(m);
        let mut events = MemcgStat::default();
        let mut events_max = 0;
        let mut cur = Some(m);
        while let Some(c) = cur {
            events.add(&self.memcgs[c as usize].stat);
            events_max += self.memcgs[c as usize].max_events;
            cur = self.mem_cgroup_iter(m, c);
        }
        let g = &self.memcgs[m as usize];
        let size = |l: LruList| lv.size(l);
        MemcgReport {
            current: g.usage,
            max: (g.max != u64::MAX).then_some(g.max),
            high: (g.high != u64::MAX).then_some(g.high),
            low: g.low,
            min: g.min,
            soft_limit: (g.soft_limit != u64::MAX).then_some(g.soft_limit),
            events_max,
            swap_current: g.swap_usage,
            swap_max_limit: (g.swap_max != u64::MAX).then_some(g.swap_max),
            swap_high_limit: (g.swap_high != u64::MAX).then_some(g.swap_high),
            anon: size(LruList::InactiveAnon) + size(LruList::ActiveAnon),
            file: size(LruList::InactiveFile) + size(LruList::ActiveFile),
            inactive_anon: size(LruList::InactiveAnon),
            active_anon: size(LruList::ActiveAnon),
            inactive_file: size(LruList::InactiveFile),
            active_file: size(LruList::ActiveFile),
            unevictable: size(LruList::Unevictable),
            pgscan: events.pgscan_kswapd + events.pgscan_direct + events.pgscan_khugepaged,
            pgsteal: events.pgsteal_kswapd + events.pgsteal_direct + events.pgsteal_khugepaged,
            events,
            kmem: self.kmem_report(m),
            psi: if m == ROOT {
                self.psi.report(self.clock)
            } else {
                g.psi.report(self.clock)
            },
        }
    }

    /// The lruvec of folio `f`'s group.
    #[inline]
    pub(crate) fn folio_lruvec(&mut self, f: crate::mem::folio::FolioId) -> &mut Lruvec {
        let m = self.folios.memcg(f) as usize;
        &mut self.memcgs[m].lruvec
    }

    /// The group the event being executed charges (the running task's).
    #[inline]
    pub(crate) fn task_memcg(&self, task: TaskId) -> MemcgId {
        self.tasks[task as usize].memcg
    }
}
