//! The writer's pause in `balance_dirty_pages()` (v6.12 mm/page-writeback.c):
//! dirty throttling of the global domain, `machine.policy.dirty_throttle`
//! (opt-in; off, nothing here changes a result).
//!
//! Read in v6.12 mm/page-writeback.c: `balance_dirty_pages`,
//! `balance_dirty_pages_ratelimited_flags`, `wb_position_ratio`,
//! `pos_ratio_polynom`, `wb_max_pause`, `wb_min_pause`,
//! `dirty_poll_interval`, `dirty_freerun_ceiling`, `__wb_update_bandwidth`,
//! `wb_update_write_bandwidth`, `wb_update_dirty_ratelimit`,
//! `update_dirty_limit`, `wb_bandwidth_estimate_start`.
//!
//! * **Ratelimit.** Every page a task dirties (`folio_account_dirtied()`:
//!   `current->nr_dirtied`, the wb's `WB_DIRTIED`) counts; a writer enters
//!   the throttle once it has dirtied `nr_dirtied_pause` pages (32 at first,
//!   `128 >> (PAGE_SHIFT - 10)`; 8 at most while the wb's `dirty_exceeded`).
//! * **Freerun.** While the global domain's dirty pages (`NR_FILE_DIRTY` +
//!   `NR_WRITEBACK`) are at or under `(thresh + bg_thresh) / 2` the writer
//!   does not pause; its next check comes after `dirty_poll_interval()`
//!   pages (`1 << (ilog2(thresh − dirty) >> 1)`).
//! * **Pause.** Above it, `task_ratelimit = dirty_ratelimit × pos_ratio >>
//!   10`, `pos_ratio` the global control line (`pos_ratio_polynom()`, the
//!   setpoint halfway between the freerun ceiling and the limit) times the
//!   wb control line (slope `1 / (8 × write_bw)`); the writer sleeps
//!   `period = HZ × pages_dirtied / task_ratelimit` less the time since its
//!   last pause, bounded by `wb_max_pause()` (at most `MAX_PAUSE` = HZ/5,
//!   200 ms) and skipped under `wb_min_pause()` (the time is carried to the
//!   next period). At or above the limit `pos_ratio` is 0: the writer sleeps
//!   `max_pause` again and again until the dirty pages drop under it —
//!   without the fair schedule; under it one `max_pause` per check, and
//!   with `nr_dirtied_pause` then 0 the writer dirties one page a pause.
//! * **Estimates.** `avg_write_bandwidth`, `dirty_ratelimit` and
//!   `balanced_dirty_ratelimit` start at `INIT_BW` (100 MB/s in pages a
//!   second) and are updated every `BANDWIDTH_INTERVAL` (HZ/5) by the
//!   throttled writer (`__wb_update_bandwidth(gdtc, NULL, true)`) from the
//!   pages dirtied and the writes completed (`WB_WRITTEN`) since the last
//!   update; the global domain's `dirty_limit` follows `thresh` up at once
//!   and down by 1/32 of the gap an interval.
//!
//! The sleep (`io_schedule_timeout()`) is simulated task time
//! ([`Sim::task_sleep_until`]): without the fair schedule the clock moves
//! (and between the repeated pauses at the limit the writes completed by
//! then end and background writeback is started again); under it the task
//! blocks and others run, one pause per check. It is not a memstall: v6.12
//! `balance_dirty_pages()` has no `psi_memstall_enter()` (the sleep is
//! iowait). `HZ` is mmsim's 1000 (`crate::memcg::HZ`).
//!
//! Simplified: one wb (the file device's), whose `wb_thresh` is the
//! domain's `thresh` and `wb_dirty` its dirty pages (the kernel's
//! `__wb_calc_thresh()` share of completions tends to 1 with one device
//! written); `hard_dirty_limit()` is `max(thresh, dirty_limit)` of the
//! global domain only: the memcg domain's pause (`mdtc`'s `pos_ratio`, taken
//! when lower) is not modelled, its background writeback is
//! (`crate::cgwb`); one writer state for the machine (`current->nr_dirtied`,
//! `dirty_paused_when`, `nr_dirtied_pause` are per task in the kernel: with
//! several writers they share one); no per-CPU `bdp_ratelimits` /
//! `ratelimit_pages` check and no `dirty_throttle_leaks`; the bandwidth is
//! estimated only by throttled writers (not by `wb_update_bandwidth()` after
//! writeback), and the estimate restarts (`wb_bandwidth_estimate_start()`)
//! when a throttled writer finds no write in flight after an idle second;
//! background writeback still starts at every dirtying of a clean folio as
//! before (`Sim::balance_dirty_pages`); the repeated pauses at the limit also
//! end when no write is in flight (mmsim's own exit: v6.12 leaves the loop
//! only when `task_ratelimit` > 0, the wb's dirty pages fall under
//! `wb_stat_error()`, or on a fatal signal — with nothing in flight mmsim's
//! clock would otherwise never bring a completion); `wb_position_ratio()`'s
//! `thresh - wb_thresh` saturates at 0 where the kernel's unsigned
//! arithmetic wraps (it differs only when `dirty_limit` exceeds about 8.75 ×
//! `thresh`, after dirtyable memory collapsed).

use serde::{Deserialize, Serialize};

use crate::memcg::HZ;
use crate::sim::Sim;

/// Nanoseconds in a jiffy.
const NS_PER_JIFFY: u64 = 1_000_000_000 / HZ;

/// `MAX_PAUSE` (mm/page-writeback.c): `max(HZ / 5, 1)`, 200 ms.
pub(crate) const MAX_PAUSE: u64 = HZ / 5;

/// `BANDWIDTH_INTERVAL`: `max(HZ / 5, 1)` jiffies between estimates.
const BANDWIDTH_INTERVAL: u64 = HZ / 5;

/// `RATELIMIT_CALC_SHIFT`: `pos_ratio` is a fixed-point fraction of 1 << 10.
const RATELIMIT_CALC_SHIFT: u32 = 10;

/// `DIRTY_POLL_THRESH`: `128 >> (PAGE_SHIFT - 10)` pages.
const DIRTY_POLL_THRESH: u64 = 128 >> (crate::PAGE_SIZE.trailing_zeros() - 10);

/// `INIT_BW` (mm/backing-dev.c): 100 MB/s in pages a second.
pub(crate) const INIT_BW: u64 = (100 << 20) / crate::PAGE_SIZE;

/// `WB_BANDWIDTH_IDLE_JIF`: an idle wb's estimate restarts after HZ.
const WB_BANDWIDTH_IDLE_JIF: u64 = HZ;

/// `roundup_pow_of_two()`.
fn roundup_pow_of_two(n: u64) -> u64 {
    n.max(1).next_power_of_two()
}

/// `ilog2()` of a positive number.
fn ilog2(n: u64) -> i64 {
    i64::from(63 - n.max(1).leading_zeros())
}

/// `pos_ratio_polynom()` (v6.12): `1 + ((setpoint − dirty) / (limit −
/// setpoint))³` in units of 1 << 10, clamped to [0, 2].
pub(crate) fn pos_ratio_polynom(setpoint: u64, dirty: u64, limit: u64) -> i64 {
    let x = ((setpoint as i64 - dirty as i64) << RATELIMIT_CALC_SHIFT)
        / ((limit - setpoint) | 1) as i64;
    let mut pos_ratio = x;
    pos_ratio = (pos_ratio * x) >> RATELIMIT_CALC_SHIFT;
    pos_ratio = (pos_ratio * x) >> RATELIMIT_CALC_SHIFT;
    pos_ratio += 1 << RATELIMIT_CALC_SHIFT;
    pos_ratio.clamp(0, 2 << RATELIMIT_CALC_SHIFT)
}

/// `wb_position_ratio()` (v6.12, no strictlimit) of the one wb, whose
/// `wb_thresh` is `thresh` and `wb_dirty` is `dirty`: 0 at or above
/// `limit`, else the global control line times the wb's.
pub(crate) fn wb_position_ratio(
    thresh: u64,
    bg_thresh: u64,
    limit: u64,
    dirty: u64,
    write_bw: u64,
) -> u64 {
    if dirty >= limit {
        return 0;
    }
    let freerun = (thresh + bg_thresh) / 2;
    let setpoint = (freerun + limit) / 2;
    let mut pos_ratio = pos_ratio_polynom(setpoint, dirty, limit) as u64;
    let wb_dirty = dirty;
    let wb_thresh = thresh.max((limit - dirty) / 8);
    let x = (wb_thresh << 16) / (thresh | 1);
    let wb_setpoint = (setpoint * x) >> 16;
    let span = ((thresh.saturating_sub(wb_thresh) + 8 * write_bw) * x) >> 16;
    let x_intercept = wb_setpoint + span;
    if wb_dirty < x_intercept - span / 4 {
        pos_ratio = pos_ratio * (x_intercept - wb_dirty) / ((x_intercept - wb_setpoint) | 1);
    } else {
        pos_ratio /= 4;
    }
    let x_intercept = wb_thresh / 2;
    if wb_dirty < x_intercept {
        if wb_dirty > x_intercept / 8 {
            pos_ratio = pos_ratio * x_intercept / wb_dirty;
        } else {
            pos_ratio *= 8;
        }
    }
    pos_ratio
}

/// `wb_max_pause()` (v6.12), jiffies: `wb_dirty / (1 + bw /
/// roundup_pow_of_two(1 + HZ / 8)) + 1`, at most `MAX_PAUSE`.
pub(crate) fn wb_max_pause(bw: u64, wb_dirty: u64) -> u64 {
    let t = wb_dirty / (1 + bw / roundup_pow_of_two(1 + HZ / 8)) + 1;
    t.min(MAX_PAUSE)
}

/// `wb_min_pause()` (v6.12): `(min_pause, nr_dirtied_pause)`, jiffies and
/// pages.
pub(crate) fn wb_min_pause(
    avg_write_bw: u64,
    dirty_ratelimit: u64,
    max_pause: u64,
    task_ratelimit: u64,
) -> (i64, u64) {
    let (hi, lo) = (ilog2(avg_write_bw), ilog2(dirty_ratelimit));
    let hz = HZ as i64;
    let mut t: i64 = (hz / 100).max(1);
    if hi > lo {
        t += (hi - lo) * (10 * hz) / 1024;
    }
    let max_pause = max_pause as i64;
    t = t.min(1 + max_pause / 2);
    let rhz = roundup_pow_of_two(HZ);
    let mut pages = dirty_ratelimit * t as u64 / rhz;
    if pages < DIRTY_POLL_THRESH {
        t = max_pause;
        pages = dirty_ratelimit * t as u64 / rhz;
        if pages > DIRTY_POLL_THRESH {
            pages = DIRTY_POLL_THRESH;
            t = (HZ * DIRTY_POLL_THRESH / dirty_ratelimit) as i64;
        }
    }
    let pause = (HZ * pages / (task_ratelimit + 1)) as i64;
    if pause > max_pause {
        t = max_pause;
        pages = task_ratelimit * t as u64 / rhz;
    }
    let min_pause = if pages >= DIRTY_POLL_THRESH {
        1 + t / 2
    } else {
        t
    };
    (min_pause, pages)
}

/// `dirty_poll_interval()` (v6.12): pages a freerunning writer dirties
/// before its next check, `1 << (ilog2(thresh − dirty) >> 1)`, or 1.
pub(crate) fn dirty_poll_interval(dirty: u64, thresh: u64) -> u64 {
    if thresh > dirty {
        1 << (ilog2(thresh - dirty) >> 1)
    } else {
        1
    }
}

/// The throttle's state: the writer's (`current->nr_dirtied`,
/// `nr_dirtied_pause`, `dirty_paused_when`), the wb's estimates and the
/// global domain's `dirty_limit`; and the pauses slept.
#[derive(Clone, Debug)]
pub(crate) struct DirtyThrottle {
    /// Pages dirtied since the writer's last check (`current->nr_dirtied`).
    nr_dirtied: u64,
    /// Pages to dirty before the next check (`current->nr_dirtied_pause`).
    nr_dirtied_pause: u64,
    /// When the last pause ended, jiffies (`current->dirty_paused_when`;
    /// None: 0, never).
    dirty_paused_when: Option<u64>,
    /// `wb->dirty_exceeded`.
    dirty_exceeded: bool,
    /// `wb->dirty_ratelimit`, pages a second.
    dirty_ratelimit: u64,
    /// `wb->balanced_dirty_ratelimit`.
    balanced_dirty_ratelimit: u64,
    /// `wb->write_bandwidth`, pages a second.
    write_bandwidth: u64,
    /// `wb->avg_write_bandwidth`.
    avg_write_bandwidth: u64,
    /// `wb->bw_time_stamp`, jiffies.
    bw_time_stamp: u64,
    /// `WB_DIRTIED` and `WB_WRITTEN` (file pages dirtied and written).
    dirtied: u64,
    written: u64,
    /// `wb->dirtied_stamp`, `wb->written_stamp`.
    dirtied_stamp: u64,
    written_stamp: u64,
    /// The global `wb_domain`'s `dirty_limit` and `dirty_limit_tstamp`.
    dirty_limit: u64,
    dirty_limit_tstamp: u64,
    /// Pause time and pauses slept since the measurement began.
    pause_ns: u64,
    pauses: u64,
    /// The most `NR_FILE_DIRTY` and `NR_FILE_DIRTY + NR_WRITEBACK` a
    /// dirtying writer saw.
    nr_dirty_peak: u64,
    dirty_peak: u64,
}

impl Default for DirtyThrottle {
    fn default() -> Self {
        DirtyThrottle {
            nr_dirtied: 0,
            nr_dirtied_pause: DIRTY_POLL_THRESH,
            dirty_paused_when: None,
            dirty_exceeded: false,
            dirty_ratelimit: INIT_BW,
            balanced_dirty_ratelimit: INIT_BW,
            write_bandwidth: INIT_BW,
            avg_write_bandwidth: INIT_BW,
            bw_time_stamp: 0,
            dirtied: 0,
            written: 0,
            dirtied_stamp: 0,
            written_stamp: 0,
            dirty_limit: 0,
            dirty_limit_tstamp: 0,
            pause_ns: 0,
            pauses: 0,
            nr_dirty_peak: 0,
            dirty_peak: 0,
        }
    }
}

/// The throttle's outputs in the result (`machine.policy.dirty_throttle`
/// only). The kernel has no counter of the pause; its `balance_dirty_pages`
/// tracepoint reports each one (`pause`, `period`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirtyThrottleReport {
    /// The pauses writers slept, ns (the tracepoint's `pause`, summed).
    pub balance_dirty_pages_pause_ns: u64,
    /// The pauses slept (tracepoint events with `pause` > 0).
    pub balance_dirty_pages_pauses: u64,
    /// /proc/vmstat `nr_dirty_threshold` at the end (the global `thresh`).
    pub nr_dirty_threshold: u64,
    /// /proc/vmstat `nr_dirty_background_threshold` at the end.
    pub nr_dirty_background_threshold: u64,
    /// `wb->dirty_ratelimit` at the end, pages a second (the
    /// `bdi_dirty_ratelimit` tracepoint's `dirty_ratelimit`, in KB/s there).
    pub dirty_ratelimit: u64,
    /// `wb->avg_write_bandwidth` at the end, pages a second.
    pub avg_write_bandwidth: u64,
    /// mmsim's own: the most `nr_dirty` a dirtying writer saw.
    pub nr_dirty_peak: u64,
    /// mmsim's own: the most `nr_dirty + nr_writeback` a dirtying writer saw.
    pub nr_dirty_writeback_peak: u64,
}

impl Sim {
    /// `page_writeback_init()` at boot, after the zones are set up (v6.12
    /// mm/page-writeback.c): `writeback_set_ratelimit()` starts the global
    /// domain's `dirty_limit` at the boot-time `dirty_thresh` (it moves only
    /// in `update_dirty_limit()`, while a writer is throttled); and the
    /// flusher's periodic timer (`wb_wakeup_delayed()`, every
    /// `dirty_writeback_centisecs`) is armed.
    pub(crate) fn page_writeback_init(&mut self) {
        let (thresh, _) = crate::cgwb::domain_dirty_limits(self.global_dirtyable_memory());
        self.bdp.dirty_limit = thresh;
        self.timers.add_timer(
            crate::timer::TimerKind::Flusher,
            crate::sim::DIRTY_WRITEBACK_NS,
        );
    }

    /// `folio_account_dirtied()`'s `current->nr_dirtied` and `WB_DIRTIED`:
    /// `nr` file pages dirtied (counted whether the throttle is on or not;
    /// read only by it).
    #[inline]
    pub(crate) fn bdp_account_dirtied(&mut self, nr: u64) {
        self.bdp.nr_dirtied += nr;
        self.bdp.dirtied += nr;
    }

    /// `WB_WRITTEN` (`wb_writeout_inc()` at `__folio_end_writeback()`): `nr`
    /// file pages' writes completed.
    #[inline]
    pub(crate) fn bdp_account_written(&mut self, nr: u64) {
        self.bdp.written += nr;
    }

    /// `balance_dirty_pages_ratelimited_flags()`'s ratelimit and
    /// `balance_dirty_pages()`'s pause for the global domain (see the
    /// module documentation), after a writer dirtied a clean folio, with
    /// `machine.policy.dirty_throttle`.
    pub(crate) fn balance_dirty_pages_pause(&mut self) {
        let dirty = self.nr_dirty + self.nr_writeback;
        let d = &mut self.bdp;
        d.nr_dirty_peak = d.nr_dirty_peak.max(self.nr_dirty);
        d.dirty_peak = d.dirty_peak.max(dirty);
        let mut ratelimit = d.nr_dirtied_pause;
        if d.dirty_exceeded {
            ratelimit = ratelimit.min(32 >> (crate::PAGE_SIZE.trailing_zeros() - 10));
        }
        if d.nr_dirtied < ratelimit {
            return;
        }
        self.balance_dirty_pages_throttle();
    }

    /// `balance_dirty_pages()`'s loop (v6.12) over the global domain.
    #[cold]
    #[inline(never)]
    fn balance_dirty_pages_throttle(&mut self) {
        let pages_dirtied = self.bdp.nr_dirtied;
        // `wb_bandwidth_estimate_start()`, here at the throttle.
        let now = self.clock / NS_PER_JIFFY;
        if now.saturating_sub(self.bdp.bw_time_stamp) > WB_BANDWIDTH_IDLE_JIF
            && self.nr_writeback == 0
        {
            let d = &mut self.bdp;
            (d.dirtied_stamp, d.written_stamp, d.bw_time_stamp) = (d.dirtied, d.written, now);
        }
        loop {
            let mut now = self.clock / NS_PER_JIFFY;
            let (thresh, bg_thresh) =
                crate::cgwb::domain_dirty_limits(self.global_dirtyable_memory());
            let dirty = self.nr_dirty + self.nr_writeback;
            if dirty <= (thresh + bg_thresh) / 2 {
                let d = &mut self.bdp;
                d.dirty_paused_when = Some(now);
                d.nr_dirtied = 0;
                d.nr_dirtied_pause = dirty_poll_interval(dirty, thresh);
                return;
            }
            self.bdp.dirty_exceeded = dirty > thresh;
            let limit = thresh.max(self.bdp.dirty_limit);
            let pos_ratio = wb_position_ratio(
                thresh,
                bg_thresh,
                limit,
                dirty,
                self.bdp.avg_write_bandwidth,
            );
            if now > self.bdp.bw_time_stamp + BANDWIDTH_INTERVAL {
                self.bdp
                    .update_bandwidth(now, thresh, bg_thresh, dirty, pos_ratio);
            }
            let d = &mut self.bdp;
            let dirty_ratelimit = d.dirty_ratelimit;
            let task_ratelimit = (dirty_ratelimit * pos_ratio) >> RATELIMIT_CALC_SHIFT;
            let max_pause = wb_max_pause(d.avg_write_bandwidth, dirty);
            let (min_pause, nr_dirtied_pause) = wb_min_pause(
                d.avg_write_bandwidth,
                dirty_ratelimit,
                max_pause,
                task_ratelimit,
            );
            let mut pause = max_pause as i64;
            // `task_ratelimit` 0: `max_pause`.
            if let Some(period) = (HZ * pages_dirtied).checked_div(task_ratelimit) {
                let period = period as i64;
                pause = period;
                if let Some(when) = d.dirty_paused_when {
                    pause -= now as i64 - when as i64;
                }
                if pause < min_pause {
                    if pause < -(HZ as i64) {
                        d.dirty_paused_when = Some(now);
                        d.nr_dirtied = 0;
                    } else if period > 0 {
                        let when = d.dirty_paused_when.unwrap_or(0);
                        d.dirty_paused_when = Some((when as i64 + period) as u64);
                        d.nr_dirtied = 0;
                    } else if d.nr_dirtied_pause <= pages_dirtied {
                        d.nr_dirtied_pause += pages_dirtied;
                    }
                    return;
                }
                if pause > max_pause as i64 {
                    now += (pause as u64 - max_pause).min(max_pause);
                    pause = max_pause as i64;
                }
            }
            let pause = pause as u64;
            d.pause_ns += pause * NS_PER_JIFFY;
            d.pauses += 1;
            d.dirty_paused_when = Some(now + pause);
            d.nr_dirtied = 0;
            d.nr_dirtied_pause = nr_dirtied_pause;
            // `io_schedule_timeout(pause)`: not a memstall. Under the fair
            // schedule the task may already be blocked on an IO of this
            // event (`smp.wake_at`): the pause follows that wait, as the
            // kernel's comes after the writer's IO, so all of it is slept.
            let from = if self.smp.fair {
                self.clock.max(self.smp.wake_at)
            } else {
                self.clock
            };
            self.task_sleep_until(from + pause * NS_PER_JIFFY, false);
            if task_ratelimit > 0 || self.smp.fair {
                return;
            }
            // `wb_stat_error()`: `nr_cpu_ids × WB_STAT_BATCH`.
            let cpus = self.smp.cpus.max(1);
            if dirty <= cpus * 8 * (1 + ilog2(cpus) as u64) {
                return;
            }
            // While the writer slept: the writes completed by now end, and
            // background writeback goes on.
            self.complete_writeback(self.clock);
            self.balance_dirty_pages();
            if self.nr_writeback == 0 {
                return;
            }
        }
    }

    /// The throttle's outputs (None with `dirty_throttle` off).
    pub(crate) fn dirty_throttle_report(&self) -> Option<DirtyThrottleReport> {
        if !self.cfg.policy.dirty_throttle {
            return None;
        }
        let (thresh, bg_thresh) = crate::cgwb::domain_dirty_limits(self.global_dirtyable_memory());
        let d = &self.bdp;
        Some(DirtyThrottleReport {
            balance_dirty_pages_pause_ns: d.pause_ns,
            balance_dirty_pages_pauses: d.pauses,
            nr_dirty_threshold: thresh,
            nr_dirty_background_threshold: bg_thresh,
            dirty_ratelimit: d.dirty_ratelimit,
            avg_write_bandwidth: d.avg_write_bandwidth,
            nr_dirty_peak: d.nr_dirty_peak,
            nr_dirty_writeback_peak: d.dirty_peak,
        })
    }

    /// The pause time slept so far, ns.
    #[cfg(test)]
    pub(crate) fn bdp_pause_ns(&self) -> u64 {
        self.bdp.pause_ns
    }

    /// A measurement starts: the pauses and peaks counted from here.
    pub(crate) fn dirty_throttle_begin_measurement(&mut self) {
        let d = &mut self.bdp;
        (d.pause_ns, d.pauses, d.nr_dirty_peak, d.dirty_peak) = (0, 0, 0, 0);
    }
}

impl DirtyThrottle {
    /// `__wb_update_bandwidth(gdtc, NULL, true)` (v6.12) at jiffy `now`:
    /// `domain_update_dirty_limit()`, `wb_update_dirty_ratelimit()` and
    /// `wb_update_write_bandwidth()`, then the stamps.
    fn update_bandwidth(&mut self, now: u64, thresh: u64, bg: u64, dirty: u64, pos_ratio: u64) {
        let elapsed = now.saturating_sub(self.bw_time_stamp).max(1);
        // `domain_update_dirty_limit()` → `update_dirty_limit()`.
        if now >= self.dirty_limit_tstamp + BANDWIDTH_INTERVAL {
            if self.dirty_limit < thresh {
                self.dirty_limit = thresh;
            } else {
                let target = thresh.max(dirty);
                if self.dirty_limit > target {
                    self.dirty_limit -= (self.dirty_limit - target) >> 5;
                }
            }
            self.dirty_limit_tstamp = now;
        }
        // `wb_update_dirty_ratelimit()`.
        let freerun = (thresh + bg) / 2;
        let limit = thresh.max(self.dirty_limit);
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
        // `wb_update_write_bandwidth()`.
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
        (self.dirtied_stamp, self.written_stamp, self.bw_time_stamp) =
            (self.dirtied, self.written, now);
    }
}
