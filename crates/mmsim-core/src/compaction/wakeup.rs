//! Waking kswapd and kcompactd for a high-order allocation (v6.12
//! mm/compaction.c `wakeup_kcompactd`, mm/vmscan.c `wakeup_kswapd`): the
//! order and `highest_zoneidx` each wakeup records, which
//! `mm_compaction_wakeup_kcompactd` and `mm_compaction_kcompactd_wake` print.

use crate::sim::Sim;
use crate::timer::TimerKind;
use crate::tracepoint::CompactionEvent;

impl Sim {
    /// `wakeup_kswapd` for a high order: records `kswapd_order`; when kswapd
    /// stays asleep (the node is balanced, at order 0, or at `order` with
    /// `kswapd_high_order`) kcompactd is woken at once. The kernel wakes it
    /// there directly for a light allocation (`!__GFP_DIRECT_RECLAIM`); for
    /// one that may reclaim, kswapd first reclaims `compact_gap` pages for
    /// the order and wakes kcompactd when it sleeps (`kswapd_high_order`).
    /// `highest_zoneidx` is the allocation's (`gfp_zone` of its mask:
    /// `ac->highest_zoneidx`), which both wakeups receive.
    /// `gfp` is the allocation's mask (printed by `mm_vmscan_wakeup_kswapd`).
    pub(super) fn wakeup_kswapd_order(
        &mut self,
        order: usize,
        highest_zoneidx: u8,
        gfp: crate::gfp::Gfp,
    ) {
        self.wakeup_kswapd_zone(order as u32, highest_zoneidx, gfp);
        if !self.kswapd.running {
            self.wakeup_kcompactd_zone(order as u32, highest_zoneidx);
        }
    }

    /// kswapd goes to sleep above the high watermark (without `kswapd_nap`;
    /// with it, `Sim::kswapd_try_to_sleep`): it resets the skip hints and
    /// wakes kcompactd for the order it was woken for.
    pub(crate) fn kswapd_sleep_compact(&mut self) {
        self.reset_isolation_suitable();
        let order = std::mem::take(&mut self.compact.kswapd_order);
        if self.compact.cfg.enabled && order > 0 {
            self.wakeup_kcompactd(order);
        }
    }

    /// `wakeup_kcompactd(pgdat, order, highest_zoneidx)` with kswapd's
    /// classzone (`kswapd_try_to_sleep`, `balance_pgdat`'s boosted end).
    pub(crate) fn wakeup_kcompactd(&mut self, order: u32) {
        let idx = self.kswapd_classzone();
        self.wakeup_kcompactd_zone(order, idx);
    }

    /// `wakeup_kcompactd` (v6.12 mm/compaction.c): records the order and
    /// the lowest `highest_zoneidx` (`kcompactd_highest_zoneidx`, which
    /// `mm_compaction_kcompactd_wake` prints), and, if compaction could
    /// help (`kcompactd_node_suitable`), wakes kcompactd now;
    /// `mm_compaction_wakeup_kcompactd` prints the waker's own
    /// `highest_zoneidx`.
    pub(crate) fn wakeup_kcompactd_zone(&mut self, order: u32, highest_zoneidx: u8) {
        if order == 0 || !self.compact.cfg.enabled || !self.compact.cfg.kcompactd {
            return;
        }
        let c = &mut self.compact;
        c.kcompactd_max_order = c.kcompactd_max_order.max(order);
        c.kcompactd_highest_zoneidx = Some(
            c.kcompactd_highest_zoneidx
                .map_or(highest_zoneidx, |z| z.min(highest_zoneidx)),
        );
        if self.kcompactd_node_suitable() {
            if self.tp.is_some() {
                let zone = highest_zoneidx;
                self.trace_compaction(CompactionEvent::WakeupKcompactd { order, zone });
            }
            self.timers.mod_timer(TimerKind::Kcompactd, self.clock);
        }
    }
}
