//! Anon/file balancing state: `lru_note_cost()` (mm/swap.c, 5.8+) and the
//! older `recent_scanned`/`recent_rotated` ratios (≈3.11–5.7).
//!
//! Cost model (v6.2+, "mm: vmscan: make rotations a secondary factor in
//! balancing anon vs file"): `cost = nr_io × SWAP_CLUSTER_MAX + nr_rotated`
//! is added to the lruvec's `anon_cost` or `file_cost` (and its ancestors');
//! when their sum exceeds a quarter of the lruvec's LRU pages both are
//! halved. v5.8–6.1 charged every event at its page count and knew no
//! rotation events. The events are: refaults that restore PG_workingset
//! (IO), pages written by reclaim (IO), inactive pages scanned but not
//! reclaimed (rotations, 6.2+) and VM_EXEC file pages kept active (6.2+).

use crate::config::CostVariant;
use crate::mem::folio::LruList;
use crate::reclaim::SWAP_CLUSTER_MAX;
use crate::sim::{Balance, Policy, Sim};

impl Sim {
    /// `lru_note_cost(lruvec, file, nr_io, nr_rotated)`.
    ///
    /// The cost is recorded on the group's lruvec and on every ancestor's,
    /// each decaying against its own (hierarchical) list sizes, so that the
    /// reclaim root sees the cost of its whole subtree. The sizes are
    /// `lruvec_page_state()`: the last 2 s flush under 6.12's ratelimited
    /// memcg statistics (`crate::memcg_stats`).
    pub(crate) fn lru_note_cost(
        &mut self,
        m: crate::memcg::MemcgId,
        file: bool,
        nr_io: u64,
        nr_rotated: u64,
    ) {
        let Policy::Classic(rules) = self.policy else {
            return;
        };
        let cost = match rules.balance {
            Balance::Cost(CostVariant::V6_2) => nr_io * SWAP_CLUSTER_MAX + nr_rotated,
            Balance::Cost(CostVariant::V5_8) => nr_io,
            Balance::ScannedRotated => return,
        };
        if cost == 0 {
            return;
        }
        let mut cur = Some(m);
        while let Some(c) = cur {
            let lrusize: u64 = if self.memcg_stats.ratelimited {
                let t = self.lruvec_page_state(c);
                LruList::EVICTABLE.iter().map(|&l| t.size(l)).sum()
            } else if self.memcgs[c as usize].children.is_empty() {
                self.memcgs[c as usize].lruvec.evictable()
            } else {
                let t = self.subtree_lruvec(c);
                LruList::EVICTABLE.iter().map(|&l| t.size(l)).sum()
            };
            let lv = &mut self.memcgs[c as usize].lruvec;
            if file {
                lv.file_cost += cost;
            } else {
                lv.anon_cost += cost;
            }
            if lv.file_cost + lv.anon_cost > lrusize / 4 {
                lv.file_cost /= 2;
                lv.anon_cost /= 2;
            }
            cur = self.memcgs[c as usize].parent;
        }
    }

    /// `recent_scanned[file] += nr` (v4.9 balancing only).
    #[inline]
    pub(crate) fn note_scanned(&mut self, m: crate::memcg::MemcgId, file: bool, nr: u64) {
        if let Policy::Classic(r) = self.policy {
            if r.balance == Balance::ScannedRotated {
                self.memcgs[m as usize].lruvec.recent_scanned[file as usize] += nr;
            }
        }
    }

    /// `recent_rotated[file] += nr` (v4.9 balancing only).
    #[inline]
    pub(crate) fn note_rotated(&mut self, m: crate::memcg::MemcgId, file: bool, nr: u64) {
        if let Policy::Classic(r) = self.policy {
            if r.balance == Balance::ScannedRotated {
                self.memcgs[m as usize].lruvec.recent_rotated[file as usize] += nr;
            }
        }
    }
}
