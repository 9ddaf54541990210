//! The wb's bandwidth estimates: v6.12 mm/page-writeback.c
//! `__wb_update_bandwidth` (from the throttle: `domain_update_dirty_limit`,
//! `update_dirty_limit`, `wb_update_dirty_ratelimit`), `wb_update_bandwidth`
//! (after writeback) and `wb_update_write_bandwidth`. Read in Debian's
//! 6.12.107. What they feed and when they run is in the parent module,
//! `crate::page_writeback_throttle`; its departures apply here.

use super::{roundup_pow_of_two, DirtyThrottle, Dtc, Wb, BANDWIDTH_INTERVAL, RATELIMIT_CALC_SHIFT};
use crate::memcg::HZ;

impl DirtyThrottle {
    /// `__wb_update_bandwidth(gdtc, mdtc, true)` (v6.12) of wb `w` at jiffy
    /// `now`, from the throttle: for the global domain and then the memcg
    /// domain (each `domain_update_dirty_limit()` and
    /// `wb_update_dirty_ratelimit()`: the second starts from the first's
    /// `dirty_ratelimit`), then `wb_update_write_bandwidth()` and the stamps.
    /// Each domain comes with its `pos_ratio`.
    pub(super) fn update_bandwidth_throttled(
        &mut self,
        w: usize,
        now: u64,
        g: (Dtc, u64),
        m: Option<(Dtc, u64)>,
    ) {
        let wb = &mut self.wbs[w];
        let elapsed = now.saturating_sub(wb.bw_time_stamp).max(1);
        update_dirty_limit(
            &mut self.dirty_limit,
            &mut self.dirty_limit_tstamp,
            now,
            g.0,
        );
        wb.update_dirty_ratelimit(g.0, self.dirty_limit, g.1, elapsed);
        if let Some((md, pos_ratio)) = m {
            let (mut dl, mut ts) = (wb.mdom_dirty_limit, wb.mdom_dirty_limit_tstamp);
            update_dirty_limit(&mut dl, &mut ts, now, md);
            (wb.mdom_dirty_limit, wb.mdom_dirty_limit_tstamp) = (dl, ts);
            wb.update_dirty_ratelimit(md, dl, pos_ratio, elapsed);
        }
        wb.update_write_bandwidth(elapsed);
        wb.stamp(now);
    }
}

/// `domain_update_dirty_limit()` → `update_dirty_limit()` (v6.12) of a
/// domain's `dirty_limit` at jiffy `now`: up to `thresh` at once, down by
/// 1/32 of the gap to `max(thresh, dirty)` an interval.
fn update_dirty_limit(dirty_limit: &mut u64, tstamp: &mut u64, now: u64, dtc: Dtc) {
    if now < *tstamp + BANDWIDTH_INTERVAL {
        return;
    }
    if *dirty_limit < dtc.thresh {
        *dirty_limit = dtc.thresh;
    } else {
        let target = dtc.thresh.max(dtc.dirty);
        if *dirty_limit > target {
            *dirty_limit -= (*dirty_limit - target) >> 5;
        }
    }
    *tstamp = now;
}

impl Wb {
    /// `wb_update_bandwidth()` (v6.12, `update_ratelimit` false): from
    /// `do_writepages()` or the `bw_dwork` after writeback ended: the write
    /// bandwidth and the stamps only.
    pub(super) fn update_bandwidth(&mut self, now: u64) {
        let elapsed = now.saturating_sub(self.bw_time_stamp).max(1);
        self.update_write_bandwidth(elapsed);
        self.stamp(now);
    }

    /// The stamps of `__wb_update_bandwidth()`.
    fn stamp(&mut self, now: u64) {
        (self.dirtied_stamp, self.written_stamp, self.bw_time_stamp) =
            (self.dirtied, self.written, now);
    }

    /// `wb_update_dirty_ratelimit()` (v6.12) for one domain, whose
    /// `dirty_limit` is `dom_limit` and `pos_ratio` `pos_ratio`.
    fn update_dirty_ratelimit(&mut self, dtc: Dtc, dom_limit: u64, pos_ratio: u64, elapsed: u64) {
        let (thresh, dirty) = (dtc.thresh, dtc.dirty);
        let freerun = (thresh + dtc.bg_thresh) / 2;
        let limit = thresh.max(dom_limit);
        let setpoint = (freerun + limit) / 2;
        let write_bw = self.avg_write_bandwidth;
        let mut rl = self.dirty_ratelimit;
        let dirty_rate = (self.dirtied - self.dirtied_stamp) * HZ / elapsed;
        let task_ratelimit = ((rl * pos_ratio) >> RATELIMIT_CALC_SHIFT) + 1;
        let balanced = (task_ratelimit * write_bw / (dirty_rate | 1)).min(write_bw);
        let mut step = 0;
        if dirty < setpoint {
            let x = self
                .balanced_dirty_ratelimit
                .min(balanced)
                .min(task_ratelimit);
            if rl < x {
                step = x - rl;
            }
        } else {
            let x = self
                .balanced_dirty_ratelimit
                .max(balanced)
                .max(task_ratelimit);
            if rl > x {
                step = rl - x;
            }
        }
        let shift = rl / (2 * step + 1);
        step = if shift < 64 {
            (step >> shift).div_ceil(8)
        } else {
            0
        };
        if rl < balanced {
            rl += step;
        } else {
            rl = rl.saturating_sub(step);
        }
        self.dirty_ratelimit = rl.max(1);
        self.balanced_dirty_ratelimit = balanced;
    }

    /// `wb_update_write_bandwidth()` (v6.12): the pages written in
    /// `elapsed` jiffies averaged into `write_bandwidth` over a
    /// `roundup_pow_of_two(3 × HZ)` period, `avg_write_bandwidth` following
    /// it by 1/8 of the gap when both moved the same way.
    fn update_write_bandwidth(&mut self, elapsed: u64) {
        let period = roundup_pow_of_two(3 * HZ);
        let mut avg = self.avg_write_bandwidth;
        let old = self.write_bandwidth;
        let mut bw = (self.written - self.written.min(self.written_stamp)) * HZ;
        if elapsed > period {
            bw /= elapsed;
            avg = bw;
        } else {
            bw += old * (period - elapsed);
            bw >>= period.trailing_zeros();
            if avg > old && old >= bw {
                avg -= (avg - old) >> 3;
            }
            if avg < old && old <= bw {
                avg += (old - avg) >> 3;
            }
        }
        self.write_bandwidth = bw;
        self.avg_write_bandwidth = avg.max(1);
    }
}
