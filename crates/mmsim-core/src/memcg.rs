//! Memory cgroups and their lruvecs (mm/memcontrol.c, include/linux/mmzone.h).
//!
//! For now there is one memory cgroup, which holds every task: the group a
//! workload runs in. Its `memory.max` (if set) bounds the pages charged to it
//! and triggers cgroup-limit reclaim (`try_to_free_mem_cgroup_pages`), with the
//! kernel's cgroup-reclaim rules (swappiness 0 means file only; no
//! `file_is_tiny`; global pgscan/pgsteal_kswapd/direct untouched). Node-wide
//! pressure triggers global reclaim (kswapd, direct) of the same lruvec. The
//! lruvec-per-memcg shape is the kernel's, so a hierarchy slots in later.

use crate::mem::folio::LruList;
use crate::mem::list::List;

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
    /// Path for reports.
    pub path: String,
    /// Charged pages (`memory.current` in pages).
    pub usage: u64,
    /// `memory.max` in pages (u64::MAX: unlimited).
    pub max: u64,
    /// Times a charge hit `memory.max` (`memory.events` max / v1 failcnt).
    pub max_events: u64,
    /// The lruvec of this memcg on the one node.
    pub lruvec: Lruvec,
}

impl Memcg {
    /// A memcg with no limit.
    pub fn new(id: u16, path: &str) -> Self {
        Memcg {
            id,
            path: path.into(),
            usage: 0,
            max: u64::MAX,
            max_events: 0,
            lruvec: Lruvec::default(),
        }
    }
}
