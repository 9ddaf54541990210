//! `reclaim_throttle(pgdat, VMSCAN_THROTTLE_WRITEBACK)` where
//! `shrink_inactive_list()` calls it (mm/vmscan.c, v6.1 through v6.18), under
//! `policy.v1_reclaim_throttle` (opt-in).
//!
//! A batch whose every taken page was dirty and not yet queued for IO
//! (`stat.nr_unqueued_dirty == nr_taken`) wakes the flusher
//! (`wakeup_flusher_threads(WB_REASON_VMSCAN)`, [`Sim::wakeup_flusher`]).
//! Since v6.1 (81a70c21d917, "mm: cgroup reclaim: fix dirty pages throttling
//! on cgroup v1", also in the 5.15/6.0 stable trees) the reclaimer then
//! sleeps when `writeback_throttling_sane(sc)` is false, that is in cgroup
//! reclaim of a v1 hierarchy (limit reclaim, `mem_cgroup_shrink_node()`'s
//! soft-limit reclaim): cgroup v1 has no per-group dirty throttling, so
//! reclaim waits for the flusher's writes instead. `reclaim_throttle()`
//! (mm/vmscan.c) sleeps `HZ/10` at most; the sleeper counts in
//! `pgdat->nr_writeback_throttled`, and `folio_end_writeback()` →
//! `acct_reclaim_writeback()` → `__acct_reclaim_writeback()` adds each
//! ended folio's pages to `NR_THROTTLED_WRITTEN` and wakes the sleepers once
//! more than `SWAP_CLUSTER_MAX × nr_throttled` pages have ended since the
//! first of them went to sleep.
//!
//! Verified: the patch 81a70c21d917 (the call in `shrink_inactive_list`),
//! the v6.x text of `reclaim_throttle`, `acct_reclaim_writeback` (folio
//! version, mm/internal.h) and `__acct_reclaim_writeback` (`nr_written >
//! SWAP_CLUSTER_MAX * nr_throttled`, folio pages); on the 6.18.44 host
//! (VALIDATION.md "pgbench TPC-B's pgrotated, captured") pgbench's backends in
//! their 192M v1 group emit `mm_vmscan_throttled` with
//! `usec_timeout=100000 reason=VMSCAN_THROTTLE_WRITEBACK` right after such a
//! batch (16 in the fsync-off run, 2 in the fsync-on run), delayed 0 to 20 ms.
//!
//! The model: one reclaimer sleeps at a time (mmsim's workload is one
//! stream), so the wake comes when more than SWAP_CLUSTER_MAX pages of the
//! writes in flight at the sleep have ended, or after 100 ms; the writes
//! end as they would have (their rotation, `folio_rotate_reclaimable`, at
//! their own completion times), and the wait counts as the reclaim's IO
//! wait, inside its memory stall. Not modelled: writes that other tasks
//! would start during the sleep (none run), the jiffy granularity of the
//! timeout, `mm_vmscan_throttled` (mmsim does not print it).

use crate::config::CgroupVersion;
use crate::mem::folio::NIL;
use crate::reclaim::{Reclaimer, ScanControl, SWAP_CLUSTER_MAX};
use crate::sim::Sim;

/// `HZ/10`, `reclaim_throttle()`'s timeout for VMSCAN_THROTTLE_WRITEBACK, in ns.
pub(crate) const WRITEBACK_THROTTLE_TIMEOUT_NS: u64 = 100_000_000;

impl Sim {
    /// `writeback_throttling_sane()` (mm/vmscan.c, v6.x): false only for
    /// cgroup reclaim on a v1 hierarchy (no `cgroup_subsys_on_dfl()`).
    pub(crate) fn writeback_throttling_sane(&self, sc: &ScanControl) -> bool {
        !(sc.who == Reclaimer::Memcg && self.cfg.cgroup_version == CgroupVersion::V1)
    }

    /// `reclaim_throttle(pgdat, VMSCAN_THROTTLE_WRITEBACK)` after
    /// `shrink_inactive_list()` woke the flusher: waits until more than
    /// SWAP_CLUSTER_MAX pages of the writes in flight have ended, or 100 ms,
    /// adds the wait to `sc.io_wait_ns`, and completes the writes that ended
    /// by then.
    ///
    /// Every write is at least one page, so the wake is among the
    /// SWAP_CLUSTER_MAX + 1 earliest ends: those are kept, sorted, in an
    /// array on the stack (no allocation; the queues need not be in end
    /// order).
    pub(crate) fn reclaim_throttle_writeback_v1(&mut self, sc: &mut ScanControl) {
        const KEEP: usize = SWAP_CLUSTER_MAX as usize + 1;
        let now = sc.now();
        let timeout = now + WRITEBACK_THROTTLE_TIMEOUT_NS;
        let mut ends = [(0u64, 0u64); KEEP];
        let mut kept = 0;
        for &(t, f) in self.writeback.iter().flat_map(|q| q.iter()) {
            if f == NIL || t >= timeout || (kept == KEEP && t >= ends[KEEP - 1].0) {
                continue;
            }
            // Insertion into the sorted prefix, the latest end dropped when full.
            let at = ends[..kept].partition_point(|&(e, _)| e <= t);
            kept = (kept + 1).min(KEEP);
            ends.copy_within(at..kept - 1, at + 1);
            ends[at] = (t, self.folios[f].nr_pages());
        }
        let mut written = 0;
        let mut wake = timeout;
        for &(t, n) in &ends[..kept] {
            written += n;
            // `nr_written > SWAP_CLUSTER_MAX * nr_throttled`, one sleeper.
            if written > SWAP_CLUSTER_MAX {
                wake = t.max(now);
                break;
            }
        }
        sc.io_wait_ns += wake - now;
        self.complete_writeback(wake);
    }
}
