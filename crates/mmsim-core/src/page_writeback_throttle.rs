//! The writer's pause in `balance_dirty_pages()` (v6.12 mm/page-writeback.c):
//! dirty throttling of the global domain and, for a cgroup v2 group's wb,
//! of its memcg domain; `machine.policy.dirty_throttle` (opt-in; off,
//! nothing here changes a result).
//!
//! Read in v6.12 mm/page-writeback.c: `balance_dirty_pages`,
//! `balance_dirty_pages_ratelimited_flags`, `balance_domain_limits`,
//! `balance_wb_limits`, `wb_dirty_exceeded`, `wb_position_ratio`,
//! `pos_ratio_polynom`, `wb_max_pause`, `wb_min_pause`,
//! `dirty_poll_interval`, `domain_poll_intv`, `dirty_freerun_ceiling`,
//! `__wb_update_bandwidth`, `wb_update_bandwidth`, `do_writepages`,
//! `wb_inode_writeback_end`, `wb_update_write_bandwidth`,
//! `wb_update_dirty_ratelimit`, `update_dirty_limit`,
//! `wb_bandwidth_estimate_start`, `wb_domain_init`, `wb_dirty_limits`,
//! `__wb_calc_thresh`, `folio_account_dirtied`; mm/backing-dev.c
//! `wb_update_bandwidth_workfn`; kernel/fork.c `copy_process` (the task's
//! writer state).
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
//! * **The memcg domain.** For the wb of a cgroup v2 group with cgroup
//!   writeback (`mdtc`, `crate::cgwb`: `mem_cgroup_wb_stats()`,
//!   `mdtc_calc_avail()`, `domain_dirty_limits()`), the writer freeruns only
//!   while both domains are at or under their freerun ceilings (the next
//!   check after the smaller of their poll intervals); else both
//!   `pos_ratio`s are computed and the lower throttles (`sdtc`: its
//!   `wb_dirty` gives `max_pause` and the `wb_stat_error()` exit), and the wb's
//!   `dirty_exceeded` is either domain's. A group whose limit is small
//!   pauses its writers where the global domain lets them run. The memcg
//!   domain has its own `dirty_limit` (`memcg->cgwb_domain`, from 0 at
//!   `wb_domain_init()`), updated with the global one's.
//! * **Estimates.** Per wb (the root's; a group's own with cgroup
//!   writeback, created at its first use with `wb_init()`'s values):
//!   `avg_write_bandwidth`, `dirty_ratelimit` and `balanced_dirty_ratelimit`
//!   start at `INIT_BW` (100 MB/s in pages a second). A throttled writer
//!   updates them every `BANDWIDTH_INTERVAL` (HZ/5,
//!   `__wb_update_bandwidth(gdtc, mdtc, true)`: the global domain's
//!   `dirty_limit` and the ratelimit, then the memcg domain's, then the
//!   write bandwidth) from the pages dirtied and the writes completed
//!   (`WB_WRITTEN`) since the last update; a domain's `dirty_limit` follows
//!   `thresh` up at once and down by 1/32 of the gap an interval. After
//!   writeback the write bandwidth alone (`wb_update_bandwidth()`):
//!   `do_writepages()` when an interval has passed since the last estimate,
//!   and the wb's `bw_dwork`, queued for an interval later when its writeback
//!   ends (`wb_inode_writeback_end()`), so the estimate follows completions
//!   with no writer throttled. `do_writepages()` also restarts the
//!   estimate of a wb idle for a second (`wb_bandwidth_estimate_start()`).
//!
//! The sleep (`io_schedule_timeout()`) is simulated task time
//! ([`Sim::task_sleep_until`]): without the fair schedule the clock moves
//! (and between the repeated pauses at the limit the writes completed by
//! then end and background writeback is started again); under it the task
//! blocks and others run, one pause per check. It is not a memstall: v6.12
//! `balance_dirty_pages()` has no `psi_memstall_enter()` (the sleep is
//! iowait). `HZ` is mmsim's 1000 (`crate::memcg::HZ`).
//!
//! * **Per wb.** In each domain the wb has its `wb_thresh`, its
//!   `__wb_calc_thresh()` share of the domain's writeout completions
//!   (`crate::page_writeback_domain`: the global domain's shared by the
//!   root wb and every group's, aged every `VM_COMPLETIONS_PERIOD_LEN`; a
//!   memcg domain's, whose one wb is the group's), and its `wb_dirty`, its
//!   own file pages dirty and under writeback (`WB_RECLAIMABLE` +
//!   `WB_WRITEBACK`: not the group's swap writeback, which the memcg
//!   domain's `dirty` counts). `wb_position_ratio()`'s wb line,
//!   `wb_dirty_exceeded()` (the wb over its share and the domain over
//!   `thresh`), `wb_max_pause()` and the `wb_stat_error()` exit read them.
//!   A wb that has completed no write has `wb_thresh` 0, which
//!   `wb_position_ratio()` raises to `(limit - dirty) / 8`.
//! * **Per task.** `nr_dirtied`, `nr_dirtied_pause` and
//!   `dirty_paused_when` are each task's (`current`: the task of the event
//!   that writes, faults or discards, or exits: `madvise_dontneed()`'s
//!   VMA's task; kswapd's, kdamond's and khugepaged's dirtying counts for
//!   none, `KTHREAD`), in an array by task id grown once per task.
//!
//! Simplified: one device, so a group has one wb; a write to a file no
//! task opened counts for task 0 (`Sim::set_fd_memcg`: mmsim has no other
//! task to charge it to, and a kernel thread's would leave it unthrottled);
//! reclaim run by `Sim::set_memcg_max` (the kernel's, in the task writing
//! `memory.max`) counts what it dirties for the last task that wrote,
//! faulted or discarded;
//! an exiting task's `nr_dirtied` is dropped (`dirty_throttle_leaks` only
//! under `policy.bdp_ratelimit`, `crate::page_writeback_ratelimit`);
//! the wb's counts and the completion proportions are exact (the kernel's
//! `wb_stat()` and `percpu_counter_read()` may lag by the per-CPU
//! batches); no per-CPU `bdp_ratelimits` /
//! `ratelimit_pages` check (under `policy.bdp_ratelimit`: one count, with
//! one CPU); no strictlimit, no
//! `PF_LOCAL_THROTTLE`, no `BDP_ASYNC`; `wb_inode_writeback_end()` is taken
//! when the wb has no page under writeback left (the kernel's, when one
//! inode has none: the same for a wb writing one file, later with several),
//! and `do_writepages()`'s calls are per folio written (the kernel's per
//! inode's `writepages`); the `bw_dwork` timer fires at the first event
//! boundary after it is due and updates with the due jiffy; background
//! writeback starts at every dirtying of a clean folio, not at the
//! ratelimited check (per wb, `crate::wb_over_bg_thresh`), unless
//! `policy.bdp_ratelimit`; the repeated pauses at the
//! limit also end when no write is in flight (mmsim's own exit: v6.12
//! leaves the loop only when `task_ratelimit` > 0, the wb's dirty pages fall
//! under `wb_stat_error()`, or on a fatal signal — with nothing in flight
//! mmsim's clock would otherwise never bring a completion);
//! `wb_position_ratio()`'s `thresh - wb_thresh` saturates at 0 where the
//! kernel's unsigned arithmetic wraps (it differs only when `dirty_limit`
//! exceeds about 8.75 × `thresh`, after dirtyable memory collapsed); the
//! memcg domain's statistics are exact (no `mem_cgroup_flush_stats` lag)
//! and foreign inodes (`mem_cgroup_flush_foreign()`) are not modelled;
//! the completion counts are aged lazily at the jiffy of the throttle's
//! read, while writes complete at event boundaries, so a completion due
//! before a `writeout_period` expiry but applied after it is not halved by
//! that period (the kernel's `__wb_writeout_add()` runs at the completion,
//! before the timer). The
//! report's `dirty_ratelimit` and `avg_write_bandwidth` are those of the wb
//! throttled last (the root's before any throttling).

use serde::{Deserialize, Serialize};

use crate::memcg::HZ;
use crate::page_writeback_domain::{FpropLocal, WbDomain};
use crate::page_writeback_ratelimit::DIRTY_EXCEEDED_RATELIMIT;
use crate::sim::Sim;

mod wb_update_bandwidth;

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

/// `wb_position_ratio()` (v6.12, no strictlimit) of a wb whose dirty and
/// writeback pages are `wb_dirty` and whose `wb_thresh` (its
/// `__wb_calc_thresh()` share, at most `thresh`) is raised to `(limit -
/// dirty) / 8` as the kernel's is: 0 at or above `limit`, else the global
/// control line (the domain's `dirty`) times the wb's (its `wb_dirty`).
pub(crate) fn wb_position_ratio(
    thresh: u64,
    wb_thresh: u64,
    bg_thresh: u64,
    limit: u64,
    dirty: u64,
    wb_dirty: u64,
    write_bw: u64,
) -> u64 {
    if dirty >= limit {
        return 0;
    }
    let freerun = (thresh + bg_thresh) / 2;
    let setpoint = (freerun + limit) / 2;
    let mut pos_ratio = pos_ratio_polynom(setpoint, dirty, limit) as u64;
    let wb_thresh = wb_thresh.min(thresh).max((limit - dirty) / 8);
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

/// One `bdi_writeback`'s estimates (`struct bdi_writeback`, v6.12
/// include/linux/backing-dev-defs.h), and, for a group's wb, its memcg's
/// `wb_domain` (`memcg->cgwb_domain`): one wb per group on the one device.
#[derive(Clone, Debug)]
pub(crate) struct Wb {
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
    /// The wb's file pages under writeback (`WB_WRITEBACK`; also mmsim's
    /// stand-in for `wb->writeback_inodes`, the inodes with pages under
    /// writeback).
    writeback: u64,
    /// The wb's dirty file pages (`WB_RECLAIMABLE`: `folio_account_dirtied()`
    /// adds, `folio_clear_dirty_for_io()` and `folio_account_cleaned()`
    /// subtract).
    reclaimable: u64,
    /// `wb->completions`: its share of the global domain's completions.
    completions: FpropLocal,
    /// `wb->memcg_completions` and the memcg domain's completions
    /// (`memcg->cgwb_domain`; a group's wb only).
    memcg_completions: FpropLocal,
    mdom: WbDomain,
    /// When `wb->bw_dwork` runs, jiffies, while queued.
    bw_dwork: Option<u64>,
    /// The memcg domain's `dirty_limit` and `dirty_limit_tstamp` (a
    /// group's wb only; `wb_domain_init()`: 0 and the creation time).
    mdom_dirty_limit: u64,
    mdom_dirty_limit_tstamp: u64,
}

impl Wb {
    /// `wb_init()` at jiffy `now`: the estimates at `INIT_BW`.
    fn new(now: u64) -> Wb {
        Wb {
            dirty_exceeded: false,
            dirty_ratelimit: INIT_BW,
            balanced_dirty_ratelimit: INIT_BW,
            write_bandwidth: INIT_BW,
            avg_write_bandwidth: INIT_BW,
            bw_time_stamp: now,
            dirtied: 0,
            written: 0,
            dirtied_stamp: 0,
            written_stamp: 0,
            writeback: 0,
            reclaimable: 0,
            completions: FpropLocal::default(),
            memcg_completions: FpropLocal::default(),
            mdom: WbDomain::default(),
            bw_dwork: None,
            mdom_dirty_limit: 0,
            mdom_dirty_limit_tstamp: now,
        }
    }
}

/// One domain's values in `balance_dirty_pages()` (`struct
/// dirty_throttle_control`): `thresh`, `bg_thresh`, `dirty` (with
/// writeback) and `hard_dirty_limit()`, and the wb's `wb_thresh` and
/// `wb_dirty` (`wb_dirty_limits()`, v6.12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dtc {
    pub thresh: u64,
    /// The wb's `wb_thresh`: its `__wb_calc_thresh()` share of `thresh`
    /// (`crate::page_writeback_domain`).
    pub wb_thresh: u64,
    pub bg_thresh: u64,
    pub dirty: u64,
    pub limit: u64,
    /// The wb's `wb_dirty`: its own `WB_RECLAIMABLE` + `WB_WRITEBACK`, file
    /// pages only (exact, so `wb_stat()` and `wb_stat_sum()` agree).
    pub wb_dirty: u64,
}

impl Dtc {
    /// `wb_dirty_exceeded()` (v6.12, no strictlimit): the wb over its share
    /// and the domain over its `thresh`.
    pub(crate) fn exceeded(&self) -> bool {
        self.wb_dirty > self.wb_thresh && self.dirty > self.thresh
    }

    /// `domain_dirty_freerun()` (no strictlimit).
    fn freerun(&self) -> bool {
        self.dirty <= (self.thresh + self.bg_thresh) / 2
    }

    /// `wb_position_ratio()` of the domain, with the wb's bandwidth.
    fn pos_ratio(&self, write_bw: u64) -> u64 {
        wb_position_ratio(
            self.thresh,
            self.wb_thresh,
            self.bg_thresh,
            self.limit,
            self.dirty,
            self.wb_dirty,
            write_bw,
        )
    }
}

/// A task's writer state (v6.12 include/linux/sched.h `task_struct`):
/// `nr_dirtied`, `nr_dirtied_pause`, `dirty_paused_when`, as kernel/fork.c
/// `copy_process()` starts them (0, `128 >> (PAGE_SHIFT - 10)`, 0).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TaskDirty {
    /// Pages dirtied since the task's last check (`current->nr_dirtied`).
    pub(crate) nr_dirtied: u64,
    /// Pages to dirty before the next check (`current->nr_dirtied_pause`).
    pub(crate) nr_dirtied_pause: u64,
    /// When the last pause ended, jiffies (`current->dirty_paused_when`;
    /// None: 0, never).
    dirty_paused_when: Option<u64>,
    /// The task's own `bdp_ratelimits` with `machine.cpus` > 1 (each task
    /// on a CPU of its own, `crate::page_writeback_ratelimit`).
    pub(crate) bdp_ratelimits: u64,
}

impl Default for TaskDirty {
    fn default() -> Self {
        TaskDirty {
            nr_dirtied: 0,
            nr_dirtied_pause: DIRTY_POLL_THRESH,
            dirty_paused_when: None,
            bdp_ratelimits: 0,
        }
    }
}

/// The running task is a kernel thread (kswapd, kdamond, khugepaged): the
/// pages it dirties
/// count for no writer (its `current->nr_dirtied`, which no
/// `balance_dirty_pages()` reads).
pub(crate) const KTHREAD: u32 = u32::MAX;

/// The throttle's state: each task's (`TaskDirty`, by task id), each wb's
/// estimates (index 0 the root wb, else the group's id) and the global
/// domain's completions and `dirty_limit`; and the pauses slept.
#[derive(Clone, Debug)]
pub(crate) struct DirtyThrottle {
    /// The tasks' writer states, by task id (a task's is created with
    /// `copy_process()`'s values when it first dirties a page).
    tasks: Vec<TaskDirty>,
    /// The running task (`current`), or [`KTHREAD`].
    pub(crate) cur_task: u32,
    /// The ratelimit's per-CPU counts (`policy.bdp_ratelimit`,
    /// `crate::page_writeback_ratelimit`).
    pub(crate) rl: crate::page_writeback_ratelimit::BdpRatelimit,
    /// The wbs: the root's, then a group's at its id once it has one.
    wbs: Vec<Wb>,
    /// The global `wb_domain`'s completions (`global_wb_domain`).
    dom: WbDomain,
    /// The global `wb_domain`'s `dirty_limit` and `dirty_limit_tstamp`.
    dirty_limit: u64,
    dirty_limit_tstamp: u64,
    /// Pause time and pauses slept since the measurement began.
    pause_ns: u64,
    pauses: u64,
    /// Of those, the pauses whose `pos_ratio` was the memcg domain's.
    memcg_pauses: u64,
    /// Calls into `balance_dirty_pages()` since the measurement began.
    calls: u64,
    /// The wb of the writer throttled last (0, the root's, before any).
    last_wb: usize,
    /// The most `NR_FILE_DIRTY` and `NR_FILE_DIRTY + NR_WRITEBACK` a
    /// dirtying writer saw.
    nr_dirty_peak: u64,
    dirty_peak: u64,
    /// `NR_FILE_DIRTY - bg_thresh` at the writer's first
    /// `wb_start_background_writeback` test past `bg_thresh` (0 before).
    pub(crate) first_over_bg_thresh: u64,
}

impl Default for DirtyThrottle {
    fn default() -> Self {
        DirtyThrottle {
            tasks: Vec::new(),
            cur_task: 0,
            rl: Default::default(),
            wbs: vec![Wb::new(0)],
            dom: WbDomain::default(),
            dirty_limit: 0,
            dirty_limit_tstamp: 0,
            pause_ns: 0,
            pauses: 0,
            memcg_pauses: 0,
            calls: 0,
            last_wb: 0,
            nr_dirty_peak: 0,
            dirty_peak: 0,
            first_over_bg_thresh: 0,
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
    /// Of those, the pauses throttled by the memcg domain (its `pos_ratio`
    /// the lower: the tracepoint's `limit`, `setpoint`, `dirty` are the
    /// group's).
    #[serde(default)]
    pub balance_dirty_pages_memcg_pauses: u64,
    /// Calls into `balance_dirty_pages()`: writers' calls that passed
    /// `balance_dirty_pages_ratelimited_flags()`'s gate (with
    /// `policy.bdp_ratelimit` the ratelimited checks; without it every
    /// dirtying of a clean folio past the task's `nr_dirtied_pause`, or
    /// past 8 pages while the wb's `dirty_exceeded` is set: the clamp,
    /// `crate::page_writeback_ratelimit::DIRTY_EXCEEDED_RATELIMIT`, is in
    /// both). The kernel's count: its `writeback:global_dirty_state` events of the
    /// writer's task (one a pass of the loop; the repeated pauses at the
    /// limit add passes mmsim does not count).
    #[serde(default)]
    pub balance_dirty_pages_calls: u64,
    /// /proc/vmstat `nr_dirty_threshold` at the end (the global `thresh`).
    pub nr_dirty_threshold: u64,
    /// /proc/vmstat `nr_dirty_background_threshold` at the end.
    pub nr_dirty_background_threshold: u64,
    /// `wb->dirty_ratelimit` at the end, pages a second, of the wb whose
    /// writer was throttled last (the root's before any; the
    /// `bdi_dirty_ratelimit` tracepoint's `dirty_ratelimit`, in KB/s there).
    pub dirty_ratelimit: u64,
    /// `wb->avg_write_bandwidth` at the end, pages a second, of the same wb.
    pub avg_write_bandwidth: u64,
    /// mmsim's own: the most `nr_dirty` a dirtying writer saw.
    pub nr_dirty_peak: u64,
    /// mmsim's own: the most `nr_dirty + nr_writeback` a dirtying writer saw.
    pub nr_dirty_writeback_peak: u64,
    /// `nr_dirty` − `bg_thresh` at the first test of a writer's
    /// `balance_dirty_pages()` that found `nr_dirty` over `bg_thresh` (v6.12
    /// starts background writeback there, mm/page-writeback.c
    /// `balance_dirty_pages()`; mmsim: `Sim::wb_start_background_writeback`,
    /// at every dirtying without `policy.bdp_ratelimit`, at the ratelimited
    /// check with it); 0 if none did. The kernel's value: the writer's
    /// first `writeback:global_dirty_state` event with `dirty` > `bg_thresh`
    /// (`validation/guest-dirty/summarize.py`).
    #[serde(default)]
    pub nr_dirty_over_bg_thresh_at_start: u64,
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
        self.writeback_set_ratelimit(thresh);
        self.timers.add_timer(
            crate::timer::TimerKind::Flusher,
            crate::sim::DIRTY_WRITEBACK_NS,
        );
    }

    /// The wb of group `m`'s pages and writers: its own under cgroup
    /// writeback ([`Sim::has_memcg_domain`]), else the root's (0).
    #[inline]
    pub(crate) fn wb_index(&self, m: crate::memcg::MemcgId) -> usize {
        if self.has_memcg_domain(m) {
            m as usize
        } else {
            0
        }
    }

    /// Wb `w`, created (`cgwb_create()`, at the clock's jiffy) if it is new.
    #[inline]
    fn wb_mut(&mut self, w: usize) -> &mut Wb {
        if w >= self.bdp.wbs.len() {
            self.wb_create(w);
        }
        &mut self.bdp.wbs[w]
    }

    /// Creates the wbs up to `w` (`cgwb_create()`).
    #[cold]
    #[inline(never)]
    fn wb_create(&mut self, w: usize) {
        let now = self.clock / NS_PER_JIFFY;
        self.bdp.wbs.resize_with(w + 1, || Wb::new(now));
    }

    /// `folio_account_dirtied()`'s `current->nr_dirtied` (the running
    /// task's, none for a kernel thread) and `WB_DIRTIED` and
    /// `WB_RECLAIMABLE` of group `m`'s wb: `nr` file pages dirtied (counted
    /// whether the throttle is on or not; read only by it).
    #[inline]
    pub(crate) fn bdp_account_dirtied(&mut self, m: crate::memcg::MemcgId, nr: u64) {
        let t = self.bdp.cur_task;
        if t != KTHREAD {
            let ts = self.bdp_task_mut(t);
            ts.nr_dirtied += nr;
            ts.bdp_ratelimits += nr;
        }
        self.bdp.rl.bdp_ratelimits += nr;
        let w = self.wb_index(m);
        let wb = self.wb_mut(w);
        wb.dirtied += nr;
        wb.reclaimable += nr;
    }

    /// `WB_RECLAIMABLE` of group `m`'s wb down by `nr` pages
    /// (`folio_clear_dirty_for_io()`, `folio_account_cleaned()`: wherever
    /// `NR_FILE_DIRTY` goes down). Exact: the count is the dirty file pages
    /// of the groups the wb serves ([`Sim::check_wb_reclaimable`]), so it
    /// cannot go below 0; the subtraction still saturates (mmsim never
    /// panics or wraps on any input), and a desync is caught by that
    /// invariant check in the tests, not here.
    #[inline]
    pub(crate) fn bdp_account_cleaned(&mut self, m: crate::memcg::MemcgId, nr: u64) {
        let w = self.wb_index(m);
        let wb = self.wb_mut(w);
        wb.reclaimable = wb.reclaimable.saturating_sub(nr);
    }

    /// Invariant (`Sim::check_invariants`): each wb's `WB_RECLAIMABLE` is
    /// the `NR_FILE_DIRTY` of the groups it serves (the root's wb: the root
    /// and every group without a memcg domain; a group's own wb: that
    /// group's), as `folio_account_dirtied()` and `folio_account_cleaned()`
    /// move both together (`Sim::file_dirty_add`, `Sim::file_dirty_sub`).
    pub(crate) fn check_wb_reclaimable(&self) -> Result<(), String> {
        let mut want = vec![0u64; self.bdp.wbs.len()];
        for (m, g) in self.memcgs.iter().enumerate() {
            let w = self.wb_index(m as crate::memcg::MemcgId);
            match want.get_mut(w) {
                Some(n) => *n += g.nr_file_dirty,
                None if g.nr_file_dirty == 0 => {}
                None => {
                    return Err(format!(
                        "group {m}: {} dirty file pages but no wb {w}",
                        g.nr_file_dirty
                    ))
                }
            }
        }
        for (w, (wb, n)) in self.bdp.wbs.iter().zip(want).enumerate() {
            if wb.reclaimable != n {
                return Err(format!(
                    "wb {w}: WB_RECLAIMABLE {} but its groups have {n} dirty file pages",
                    wb.reclaimable
                ));
            }
        }
        Ok(())
    }

    /// The running task becomes `t` (`current`: the task of the event that
    /// writes, faults or discards), or [`KTHREAD`] for a kernel thread;
    /// returns the one before. Set where kernel code runs for the task (a
    /// fault, `Sim::handle_mm_fault`; a read or write call past its
    /// one-page cached fast path, `Sim::set_fd_memcg`; a discard, an exit),
    /// not by an access that hits in the MMU or a cached one-page read,
    /// which neither dirty, balance nor reclaim: `current` is read only
    /// under those (`folio_account_dirtied()`, the pause, reclaim's
    /// kernel-thread test).
    #[inline]
    pub(crate) fn bdp_set_current(&mut self, t: u32) -> u32 {
        std::mem::replace(&mut self.bdp.cur_task, t)
    }

    /// Whether a kernel thread (kswapd, kdamond, khugepaged) is `current`.
    #[inline]
    pub(crate) fn current_is_kthread(&self) -> bool {
        self.bdp.cur_task == KTHREAD
    }

    /// Task `t`'s writer state, created (`copy_process()`'s values) if new:
    /// the per-task array grows once per task, not per page.
    #[inline]
    pub(crate) fn bdp_task_mut(&mut self, t: u32) -> &mut TaskDirty {
        if t as usize >= self.bdp.tasks.len() {
            self.bdp_task_create(t);
        }
        &mut self.bdp.tasks[t as usize]
    }

    /// How many tasks have a writer state.
    #[inline]
    pub(crate) fn bdp_tasks_len(&self) -> usize {
        self.bdp.tasks.len()
    }

    /// Creates the writer states up to task `t`'s.
    #[cold]
    #[inline(never)]
    fn bdp_task_create(&mut self, t: u32) {
        let n = (t as usize + 1).max(self.tasks.len());
        self.bdp.tasks.resize(n, TaskDirty::default());
    }

    /// `WB_WRITTEN` (`__wb_writeout_add()` at `__folio_end_writeback()`) of
    /// group `m`'s wb: `nr` file pages' writes completed at `done` ns. With
    /// the throttle, the completions of the domains
    /// (`crate::page_writeback_domain`), `WB_WRITEBACK` down, and
    /// `wb_inode_writeback_end()`: when the wb has no page under writeback
    /// left, its `bw_dwork` is queued for `BANDWIDTH_INTERVAL` later (not
    /// moved if already queued).
    #[inline]
    pub(crate) fn bdp_account_written(&mut self, m: crate::memcg::MemcgId, nr: u64, done: u64) {
        let w = self.wb_index(m);
        let throttle = self.cfg.policy.dirty_throttle;
        let now = done / NS_PER_JIFFY;
        self.wb_mut(w).written += nr;
        if throttle {
            // `wb_domain_writeout_add()` of the global domain and, for a
            // group's wb, of its memcg domain (`__wb_writeout_add()`).
            let d = &mut self.bdp;
            let wb = &mut d.wbs[w];
            d.dom.writeout_add(&mut wb.completions, nr, now);
            if w != 0 {
                wb.mdom.writeout_add(&mut wb.memcg_completions, nr, now);
            }
            wb.writeback = wb.writeback.saturating_sub(nr);
            if wb.writeback == 0 && wb.bw_dwork.is_none() {
                wb.bw_dwork = Some(now + BANDWIDTH_INTERVAL);
                self.arm_wb_bandwidth_timer();
            }
        }
    }

    /// `__folio_start_writeback()` of group `m`'s `nr` file pages outside
    /// `do_writepages()` (reclaim's `pageout()` → `->writepage`): the wb's
    /// pages under writeback (`WB_WRITEBACK`, `wb_inode_writeback_start`),
    /// with no bandwidth update (v6.12: that is `do_writepages()`'s).
    #[cold]
    pub(crate) fn bdp_writeback_start(&mut self, m: crate::memcg::MemcgId, nr: u64) {
        let w = self.wb_index(m);
        self.wb_mut(w).writeback += nr;
    }

    /// A write of group `m`'s `nr` file pages the `lru` reference policy cut
    /// short: no longer under writeback, nothing written.
    #[cold]
    pub(crate) fn bdp_writeback_cut_short(&mut self, m: crate::memcg::MemcgId, nr: u64) {
        let w = self.wb_index(m);
        let wb = self.wb_mut(w);
        wb.writeback = wb.writeback.saturating_sub(nr);
    }

    /// `do_writepages()` (v6.12 mm/page-writeback.c) around the write of a
    /// file folio of group `m` at `now` ns, `nr` pages, with the throttle:
    /// `wb_bandwidth_estimate_start()` before (an idle wb — no page under
    /// writeback, no estimate for `WB_BANDWIDTH_IDLE_JIF` — restarts its
    /// stamps), and after, `wb_update_bandwidth()` once
    /// `BANDWIDTH_INTERVAL` has passed since the last estimate ("if
    /// there's constant writeback being submitted"). The kernel does this
    /// per inode's `writepages`; mmsim per folio written (the flusher's
    /// writes of one pass share a time).
    #[cold]
    pub(crate) fn bdp_do_writepages(&mut self, m: crate::memcg::MemcgId, nr: u64, now: u64) {
        let w = self.wb_index(m);
        let now = now / NS_PER_JIFFY;
        let wb = self.wb_mut(w);
        if now.saturating_sub(wb.bw_time_stamp) > WB_BANDWIDTH_IDLE_JIF && wb.writeback == 0 {
            (wb.dirtied_stamp, wb.written_stamp, wb.bw_time_stamp) = (wb.dirtied, wb.written, now);
        }
        wb.writeback += nr;
        if now > wb.bw_time_stamp + BANDWIDTH_INTERVAL {
            wb.update_bandwidth(now);
        }
    }

    /// The `bw_dwork` timer (`wb_update_bandwidth_workfn()`, mm/backing-dev.c
    /// v6.12): at `now` ns, every wb whose work is due runs
    /// `wb_update_bandwidth()` at the jiffy it was due (the timer fires at
    /// the first event boundary after it); the timer follows the next.
    pub(crate) fn wb_bandwidth_dwork(&mut self, now: u64) {
        let now = now / NS_PER_JIFFY;
        for wb in &mut self.bdp.wbs {
            if let Some(due) = wb.bw_dwork.filter(|&t| t <= now) {
                wb.bw_dwork = None;
                wb.update_bandwidth(due);
            }
        }
        self.arm_wb_bandwidth_timer();
    }

    /// Arms the `bw_dwork` timer for the earliest queued work, or disarms it.
    fn arm_wb_bandwidth_timer(&mut self) {
        let next = self.bdp.wbs.iter().filter_map(|w| w.bw_dwork).min();
        self.timers.set(
            crate::timer::TimerKind::WbBandwidth,
            next.map(|j| j * NS_PER_JIFFY),
        );
    }

    /// `balance_dirty_pages_ratelimited_flags()`'s ratelimit and
    /// `balance_dirty_pages()`'s pause (see the module documentation),
    /// after a writer dirtied a clean folio, with
    /// `machine.policy.dirty_throttle`.
    ///
    /// With `policy.bdp_ratelimit` the whole ratelimit (per-CPU count and
    /// exited tasks' leaks included) gates the call, and the wb's background
    /// writeback is started here, at the check, not at every dirtying
    /// (`crate::page_writeback_ratelimit`).
    pub(crate) fn balance_dirty_pages_pause(&mut self) {
        let t = self.bdp.cur_task;
        if t == KTHREAD {
            return;
        }
        let w = self.wb_index(self.cur_memcg);
        let balance = if self.cfg.policy.bdp_ratelimit {
            let balance = self.bdp_ratelimit_check(w, t);
            if balance {
                self.wb_start_background_writeback(w);
            }
            balance
        } else {
            let exceeded = self.wb_mut(w).dirty_exceeded;
            let ts = *self.bdp_task_mut(t);
            let mut ratelimit = ts.nr_dirtied_pause;
            if exceeded {
                ratelimit = ratelimit.min(DIRTY_EXCEEDED_RATELIMIT);
            }
            ts.nr_dirtied >= ratelimit
        };
        let dirty = self.nr_dirty + self.nr_writeback;
        let d = &mut self.bdp;
        d.nr_dirty_peak = d.nr_dirty_peak.max(self.nr_dirty);
        d.dirty_peak = d.dirty_peak.max(dirty);
        if balance {
            d.calls += 1;
            self.balance_dirty_pages_throttle(w, t as usize);
        }
    }

    /// `wb->dirty_exceeded` of wb `w` (created if new).
    #[inline]
    pub(crate) fn wb_dirty_exceeded(&mut self, w: usize) -> bool {
        self.wb_mut(w).dirty_exceeded
    }

    /// The domains of `balance_dirty_pages()`'s loop for wb `w` (v6.12
    /// `balance_domain_limits()`, `wb_dirty_limits()`): the global one, and
    /// the memcg one of a group's wb (`mdtc`), each with its
    /// `hard_dirty_limit()` and the wb's `wb_thresh` (`__wb_calc_thresh()`:
    /// its share of the domain's completions) and `wb_dirty` (its own file
    /// pages dirty and under writeback: not the group's swap writeback,
    /// which the memcg domain's `dirty` counts, `mem_cgroup_wb_stats()`'s
    /// `NR_WRITEBACK`).
    pub(crate) fn bdp_domains(&mut self, w: usize) -> (Dtc, Option<Dtc>) {
        let now = self.clock / NS_PER_JIFFY;
        let (thresh, bg_thresh) = crate::cgwb::domain_dirty_limits(self.global_dirtyable_memory());
        let dirty = self.nr_dirty + self.nr_writeback;
        let d = &mut self.bdp;
        let wb = &mut d.wbs[w];
        let g = Dtc {
            thresh,
            wb_thresh: d.dom.wb_calc_thresh(&mut wb.completions, thresh, now),
            bg_thresh,
            dirty,
            limit: thresh.max(d.dirty_limit),
            wb_dirty: wb.reclaimable + wb.writeback,
        };
        if w == 0 {
            return (g, None);
        }
        let [_, md] = self.memcg_dirty_domain(w as crate::memcg::MemcgId, true);
        let wb = &mut self.bdp.wbs[w];
        let m = Dtc {
            thresh: md.thresh,
            wb_thresh: wb
                .mdom
                .wb_calc_thresh(&mut wb.memcg_completions, md.thresh, now),
            bg_thresh: md.bg_thresh,
            dirty: md.dirty,
            limit: md.thresh.max(wb.mdom_dirty_limit),
            wb_dirty: g.wb_dirty,
        };
        (g, Some(m))
    }

    /// `wb_bg_dirty_limits()` (v6.12) of wb `w` in the global domain
    /// (`memcg` false) or in its memcg domain: `(wb_dirty, wb_bg_thresh)`,
    /// its `WB_RECLAIMABLE` (exact: `wb_stat()` and `wb_stat_sum()` agree)
    /// and its `__wb_calc_thresh()` share of the domain's `bg_thresh`.
    pub(crate) fn wb_bg_dirty_limits(
        &mut self,
        w: usize,
        bg_thresh: u64,
        memcg: bool,
    ) -> (u64, u64) {
        let now = self.clock / NS_PER_JIFFY;
        self.wb_mut(w);
        let d = &mut self.bdp;
        let wb = &mut d.wbs[w];
        let share = if memcg {
            wb.mdom
                .wb_calc_thresh(&mut wb.memcg_completions, bg_thresh, now)
        } else {
            d.dom.wb_calc_thresh(&mut wb.completions, bg_thresh, now)
        };
        (wb.reclaimable, share)
    }

    /// Wb `w`'s `avg_write_bandwidth` (pages a second) and the global
    /// domain's `dirty_limit`, for `writeback_chunk_size()`.
    pub(crate) fn wb_chunk_inputs(&self, w: usize) -> (u64, u64) {
        (self.bdp.wbs[w].avg_write_bandwidth, self.bdp.dirty_limit)
    }

    /// The wbs that exist: the root's and each group's created so far (by
    /// index, [`Sim::wb_index`]).
    pub(crate) fn nr_wbs(&self) -> usize {
        self.bdp.wbs.len()
    }

    /// Wb `w`'s `WB_RECLAIMABLE`, 0 for a wb not created yet.
    pub(crate) fn wb_reclaimable(&self, w: usize) -> u64 {
        self.bdp.wbs.get(w).map_or(0, |wb| wb.reclaimable)
    }

    /// Wb `w`'s `WB_RECLAIMABLE`, for tests that break the invariant.
    #[cfg(test)]
    pub(crate) fn wb_reclaimable_mut(&mut self, w: usize) -> &mut u64 {
        &mut self.bdp.wbs[w].reclaimable
    }

    /// `balance_dirty_pages()`'s loop (v6.12) for wb `w` and task `t`: the
    /// global domain and, for a group's wb, the memcg domain.
    #[cold]
    #[inline(never)]
    fn balance_dirty_pages_throttle(&mut self, w: usize, t: usize) {
        let pages_dirtied = self.bdp.tasks[t].nr_dirtied;
        loop {
            let mut now = self.clock / NS_PER_JIFFY;
            let (g, md) = self.bdp_domains(w);
            if g.freerun() && md.is_none_or(|m| m.freerun()) {
                let intv = dirty_poll_interval(g.dirty, g.thresh);
                let m_intv = md.map_or(u64::MAX, |m| dirty_poll_interval(m.dirty, m.thresh));
                let ts = &mut self.bdp.tasks[t];
                ts.dirty_paused_when = Some(now);
                ts.nr_dirtied = 0;
                ts.nr_dirtied_pause = intv.min(m_intv);
                return;
            }
            self.bdp.last_wb = w;
            let wb = &self.bdp.wbs[w];
            let g_pos = g.pos_ratio(wb.avg_write_bandwidth);
            let mut exceeded = g.exceeded();
            let (mut sdtc, mut pos_ratio, mut by_memcg) = (g, g_pos, false);
            let m_ctl = md.map(|m| {
                let m_pos = m.pos_ratio(wb.avg_write_bandwidth);
                exceeded |= m.exceeded();
                if m_pos < g_pos {
                    (sdtc, pos_ratio, by_memcg) = (m, m_pos, true);
                }
                (m, m_pos)
            });
            self.bdp.wbs[w].dirty_exceeded = exceeded;
            if now > self.bdp.wbs[w].bw_time_stamp + BANDWIDTH_INTERVAL {
                self.bdp
                    .update_bandwidth_throttled(w, now, (g, g_pos), m_ctl);
            }
            let d = &mut self.bdp;
            let wb = &d.wbs[w];
            let dirty_ratelimit = wb.dirty_ratelimit;
            let task_ratelimit = (dirty_ratelimit * pos_ratio) >> RATELIMIT_CALC_SHIFT;
            let max_pause = wb_max_pause(wb.avg_write_bandwidth, sdtc.wb_dirty);
            let (min_pause, nr_dirtied_pause) = wb_min_pause(
                wb.avg_write_bandwidth,
                dirty_ratelimit,
                max_pause,
                task_ratelimit,
            );
            let mut pause = max_pause as i64;
            let ts = &mut d.tasks[t];
            // `task_ratelimit` 0: `max_pause`.
            if let Some(period) = (HZ * pages_dirtied).checked_div(task_ratelimit) {
                let period = period as i64;
                pause = period;
                if let Some(when) = ts.dirty_paused_when {
                    pause -= now as i64 - when as i64;
                }
                if pause < min_pause {
                    if pause < -(HZ as i64) {
                        ts.dirty_paused_when = Some(now);
                        ts.nr_dirtied = 0;
                    } else if period > 0 {
                        let when = ts.dirty_paused_when.unwrap_or(0);
                        ts.dirty_paused_when = Some((when as i64 + period) as u64);
                        ts.nr_dirtied = 0;
                    } else if ts.nr_dirtied_pause <= pages_dirtied {
                        ts.nr_dirtied_pause += pages_dirtied;
                    }
                    return;
                }
                if pause > max_pause as i64 {
                    now += (pause as u64 - max_pause).min(max_pause);
                    pause = max_pause as i64;
                }
            }
            let pause = pause as u64;
            ts.dirty_paused_when = Some(now + pause);
            ts.nr_dirtied = 0;
            ts.nr_dirtied_pause = nr_dirtied_pause;
            d.pause_ns += pause * NS_PER_JIFFY;
            d.pauses += 1;
            d.memcg_pauses += u64::from(by_memcg);
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
            if sdtc.wb_dirty <= cpus * 8 * (1 + ilog2(cpus) as u64) {
                return;
            }
            // While the writer slept: the writes completed by now end, the
            // bandwidth work due runs, and the wb's background writeback
            // goes on (`crate::wb_over_bg_thresh`).
            self.complete_writeback(self.clock);
            if self
                .timers
                .due(crate::timer::TimerKind::WbBandwidth, self.clock)
            {
                self.wb_bandwidth_dwork(self.clock);
            }
            self.wb_start_background_writeback(w);
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
            balance_dirty_pages_memcg_pauses: d.memcg_pauses,
            balance_dirty_pages_calls: d.calls,
            nr_dirty_threshold: thresh,
            nr_dirty_background_threshold: bg_thresh,
            dirty_ratelimit: d.wbs[d.last_wb].dirty_ratelimit,
            avg_write_bandwidth: d.wbs[d.last_wb].avg_write_bandwidth,
            nr_dirty_peak: d.nr_dirty_peak,
            nr_dirty_writeback_peak: d.dirty_peak,
            nr_dirty_over_bg_thresh_at_start: d.first_over_bg_thresh,
        })
    }

    /// The pause time slept so far, ns.
    #[cfg(test)]
    pub(crate) fn bdp_pause_ns(&self) -> u64 {
        self.bdp.pause_ns
    }

    /// Task `t`'s `(nr_dirtied, nr_dirtied_pause, dirty_paused_when)`.
    #[cfg(test)]
    pub(crate) fn bdp_task(&self, t: u32) -> (u64, u64, Option<u64>) {
        let ts = self.bdp.tasks.get(t as usize).copied().unwrap_or_default();
        (ts.nr_dirtied, ts.nr_dirtied_pause, ts.dirty_paused_when)
    }

    /// Wb `w`'s `(dirty_ratelimit, write_bandwidth, avg_write_bandwidth,
    /// bw_time_stamp)`, and the memcg domain's `dirty_limit`.
    #[cfg(test)]
    pub(crate) fn bdp_wb(&self, w: usize) -> ((u64, u64, u64, u64), u64) {
        let wb = &self.bdp.wbs[w];
        let est = (
            wb.dirty_ratelimit,
            wb.write_bandwidth,
            wb.avg_write_bandwidth,
            wb.bw_time_stamp,
        );
        (est, wb.mdom_dirty_limit)
    }

    /// A measurement starts: the pauses and peaks counted from here.
    pub(crate) fn dirty_throttle_begin_measurement(&mut self) {
        let d = &mut self.bdp;
        (d.pause_ns, d.pauses, d.nr_dirty_peak, d.dirty_peak) = (0, 0, 0, 0);
        d.memcg_pauses = 0;
        d.calls = 0;
        d.first_over_bg_thresh = 0;
    }
}
