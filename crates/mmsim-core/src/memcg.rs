//! Memory cgroups and their lruvecs (mm/memcontrol.c, mm/page_counter.c,
//! include/linux/mmzone.h), as of v6.x.
//!
//! The groups form a tree under the top group `/` (index [`ROOT`]), the group
//! the workloads run in unless attached elsewhere. Every folio belongs to one
//! group (`folio.memcg`) and sits on that group's own lruvec; a group's
//! `usage` counts its own and its descendants' pages (hierarchical page
//! counters: a charge goes up to the top, and fails at the first ancestor at
//! its `memory.max`). Reclaim walks a subtree in pre-order
//! ([`Sim::memcg_iter_next`], `mem_cgroup_iter`), shrinking each group's own
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

use crate::mem::folio::LruList;
use crate::mem::list::List;
use crate::mem::pagetable::TaskId;
use crate::sim::{Sim, SimError};

/// Index of a memory cgroup in the simulator (its kernel id is index + 1).
pub type MemcgId = u8;

/// The top group, `/`.
pub const ROOT: MemcgId = 0;

/// Most groups: shadow entries keep an 8-bit memcg id (ids 1..=255).
pub const MAX_MEMCGS: usize = 255;

/// Per-(memcg, node) LRU state (`struct lruvec`).
///
/// Sizes are in folios; every folio is order 0 for now, so folios = pages.
#[derive(Clone, Debug, Default)]
pub struct Lruvec {
    /// The five LRU lists, indexed by [`LruList`].
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
}

impl Lruvec {
    /// Pages on one list.
    #[inline]
    pub fn size(&self, lru: LruList) -> u64 {
        self.lists[lru as usize].len as u64
    }
    /// Pages on the evictable lists (`lruvec_lru_size` summed over anon and file).
    #[inline]
    pub fn evictable(&self) -> u64 {
        LruList::EVICTABLE.iter().map(|&l| self.size(l)).sum()
    }
    /// Inactive and active size of a type (file = true).
    #[inline]
    pub fn type_sizes(&self, file: bool) -> (u64, u64) {
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
    pub id: u16,
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
    /// Times a charge hit `memory.max` (`memory.events` max / v1 failcnt).
    pub max_events: u64,
    /// Event counters of this group's own pages and tasks (`memory.stat`
    /// and `memory.events` report them summed over the subtree).
    pub stat: MemcgStat,
    /// The lruvec of this memcg on the one node.
    pub lruvec: Lruvec,
}

impl Memcg {
    /// A memcg with no limit.
    pub fn new(id: u16, path: &str, parent: Option<MemcgId>) -> Self {
        Memcg {
            id,
            path: path.into(),
            parent,
            children: Vec::new(),
            usage: 0,
            max: u64::MAX,
            max_events: 0,
            stat: MemcgStat::default(),
            lruvec: Lruvec::default(),
        }
    }
}

/// Event counters of one group (`memcg->vmstats` events and
/// `memory.events`), local to the group; reports sum them over the subtree
/// as cgroup v2's `memory.stat` and `memory.events` do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemcgStat {
    /// Page faults of the group's tasks.
    pub pgfault: u64,
    /// Major faults of the group's tasks.
    pub pgmajfault: u64,
    /// Active-list pages scanned (deactivation), all reclaim.
    pub pgrefill: u64,
    /// Inactive pages scanned by kswapd.
    pub pgscan_kswapd: u64,
    /// Inactive pages scanned by direct and cgroup-limit reclaim.
    pub pgscan_direct: u64,
    /// Pages reclaimed by kswapd.
    pub pgsteal_kswapd: u64,
    /// Pages reclaimed by direct and cgroup-limit reclaim.
    pub pgsteal_direct: u64,
    /// Activations.
    pub pgactivate: u64,
    /// Deactivations.
    pub pgdeactivate: u64,
    /// Refaults of anon pages whose shadow named this group.
    pub workingset_refault_anon: u64,
    /// Refaults of file pages.
    pub workingset_refault_file: u64,
    /// Anon refaults activated.
    pub workingset_activate_anon: u64,
    /// File refaults activated.
    pub workingset_activate_file: u64,
    /// Anon refaults of workingset pages.
    pub workingset_restore_anon: u64,
    /// File refaults of workingset pages.
    pub workingset_restore_file: u64,
    /// `memory.events` oom: times the group hit its limit and invoked the OOM killer.
    pub oom: u64,
    /// `memory.events` oom_kill: tasks of the group killed by an OOM kill.
    pub oom_kill: u64,
}

impl MemcgStat {
    /// Adds `o`'s counters to these.
    pub fn add(&mut self, o: &MemcgStat) {
        self.pgfault += o.pgfault;
        self.pgmajfault += o.pgmajfault;
        self.pgrefill += o.pgrefill;
        self.pgscan_kswapd += o.pgscan_kswapd;
        self.pgscan_direct += o.pgscan_direct;
        self.pgsteal_kswapd += o.pgsteal_kswapd;
        self.pgsteal_direct += o.pgsteal_direct;
        self.pgactivate += o.pgactivate;
        self.pgdeactivate += o.pgdeactivate;
        self.workingset_refault_anon += o.workingset_refault_anon;
        self.workingset_refault_file += o.workingset_refault_file;
        self.workingset_activate_anon += o.workingset_activate_anon;
        self.workingset_activate_file += o.workingset_activate_file;
        self.workingset_restore_anon += o.workingset_restore_anon;
        self.workingset_restore_file += o.workingset_restore_file;
        self.oom += o.oom;
        self.oom_kill += o.oom_kill;
    }
}

/// One group as `memory.current`, `memory.max`, `memory.events` and
/// `memory.stat` of cgroup v2 show it (hierarchical), in pages.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MemcgReport {
    /// `memory.current`, pages.
    pub current: u64,
    /// `memory.max`, pages (None: max).
    pub max: Option<u64>,
    /// `memory.events` max: charges that hit the limit.
    pub events_max: u64,
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
    /// `memory.stat` pgscan (kswapd + direct).
    pub pgscan: u64,
    /// `memory.stat` pgsteal (kswapd + direct).
    pub pgsteal: u64,
    /// The event counters, summed over the subtree.
    #[serde(flatten)]
    pub events: MemcgStat,
}

/// Lruvec state the kernel reads hierarchically at a reclaim root or an
/// eviction lruvec (`lruvec_page_state` of a memcg lruvec): summed over the
/// group's subtree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubtreeLruvec {
    /// Pages on each list, by [`LruList`] index.
    pub sizes: [u64; 5],
    /// WORKINGSET_ACTIVATE_{ANON,FILE}.
    pub workingset_activate: [u64; 2],
}

impl SubtreeLruvec {
    /// Pages on one list.
    #[inline]
    pub fn size(&self, lru: LruList) -> u64 {
        self.sizes[lru as usize]
    }
    /// Inactive and active size of a type (file = true).
    #[inline]
    pub fn type_sizes(&self, file: bool) -> (u64, u64) {
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
                "cgroup `{name}`: at most {MAX_MEMCGS} memory cgroups (shadow entries keep 8 bits of memcg id)"
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
        if self.memcgs.iter().any(|m| m.path == path) {
            return Err(SimError::Setup(format!("cgroup `{path}` exists already")));
        }
        let id = self.memcgs.len() as MemcgId;
        self.memcgs
            .push(Memcg::new(id as u16 + 1, &path, Some(parent)));
        self.memcgs[parent as usize].children.push(id);
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

    /// Sets `memory.max` of `memcg` in pages (`u64::MAX`: unlimited).
    pub fn set_memcg_max(&mut self, memcg: MemcgId, pages: u64) -> Result<(), SimError> {
        let m = self
            .memcgs
            .get_mut(memcg as usize)
            .ok_or_else(|| SimError::Setup(format!("no cgroup {memcg}")))?;
        m.max = pages;
        Ok(())
    }

    /// Moves `task` into `memcg` (writing its pid to `cgroup.procs`): its
    /// future charges go there; pages already charged stay where they are
    /// (cgroup v2 does not move charges).
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

    /// `mem_cgroup_iter()` without a reclaim cookie: the group after `cur`
    /// in a pre-order walk of `root`'s subtree, or None at the end.
    pub fn memcg_iter_next(&self, root: MemcgId, cur: MemcgId) -> Option<MemcgId> {
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

    /// Whether `memcg` is `root` or one of its descendants
    /// (`mem_cgroup_is_descendant`).
    pub fn memcg_is_descendant(&self, memcg: MemcgId, root: MemcgId) -> bool {
        let mut m = Some(memcg);
        while let Some(x) = m {
            if x == root {
                return true;
            }
            m = self.memcgs[x as usize].parent;
        }
        false
    }

    /// Hierarchical lruvec state of `memcg` (its subtree's sum).
    pub(crate) fn subtree_lruvec(&self, memcg: MemcgId) -> SubtreeLruvec {
        let mut out = SubtreeLruvec::default();
        let mut cur = Some(memcg);
        while let Some(m) = cur {
            let lv = &self.memcgs[m as usize].lruvec;
            for (i, l) in lv.lists.iter().enumerate() {
                out.sizes[i] += l.len as u64;
            }
            out.workingset_activate[0] += lv.workingset_activate[0];
            out.workingset_activate[1] += lv.workingset_activate[1];
            cur = self.memcg_iter_next(memcg, m);
        }
        out
    }

    /// Zeroes every group's event counters (measurement start).
    pub(crate) fn reset_memcg_stats(&mut self) {
        for m in &mut self.memcgs {
            m.max_events = 0;
            m.stat = MemcgStat::default();
        }
    }

    /// The report of group `m` (hierarchical, like cgroup v2's files).
    pub fn memcg_report(&self, m: MemcgId) -> MemcgReport {
        let lv = self.subtree_lruvec(m);
        let mut events = MemcgStat::default();
        let mut events_max = 0;
        let mut cur = Some(m);
        while let Some(c) = cur {
            events.add(&self.memcgs[c as usize].stat);
            events_max += self.memcgs[c as usize].max_events;
            cur = self.memcg_iter_next(m, c);
        }
        let g = &self.memcgs[m as usize];
        let size = |l: LruList| lv.size(l);
        MemcgReport {
            current: g.usage,
            max: (g.max != u64::MAX).then_some(g.max),
            events_max,
            anon: size(LruList::InactiveAnon) + size(LruList::ActiveAnon),
            file: size(LruList::InactiveFile) + size(LruList::ActiveFile),
            inactive_anon: size(LruList::InactiveAnon),
            active_anon: size(LruList::ActiveAnon),
            inactive_file: size(LruList::InactiveFile),
            active_file: size(LruList::ActiveFile),
            unevictable: size(LruList::Unevictable),
            pgscan: events.pgscan_kswapd + events.pgscan_direct,
            pgsteal: events.pgsteal_kswapd + events.pgsteal_direct,
            events,
        }
    }

    /// The lruvec of folio `f`'s group.
    #[inline]
    pub(crate) fn folio_lruvec(&mut self, f: crate::mem::folio::FolioId) -> &mut Lruvec {
        let m = self.folios[f].memcg as usize;
        &mut self.memcgs[m].lruvec
    }

    /// The group the event being executed charges (the running task's).
    #[inline]
    pub(crate) fn task_memcg(&self, task: TaskId) -> MemcgId {
        self.tasks[task as usize].memcg
    }
}
