//! The ratelimit of `balance_dirty_pages()`'s calls (`policy.bdp_ratelimit`,
//! opt-in; off, nothing here runs and every dirtying of a clean folio
//! balances): v6.12 mm/page-writeback.c `balance_dirty_pages_ratelimited_flags`,
//! `folio_account_dirtied` (its `bdp_ratelimits`), `writeback_set_ratelimit`
//! (`ratelimit_pages`), `balance_dirty_pages` (its freerun exit and its two
//! `wb_start_background_writeback()` calls), `dirty_poll_interval`,
//! `domain_poll_intv`; kernel/exit.c `do_exit` (`dirty_throttle_leaks`);
//! kernel/fork.c `copy_process` (a task's first `nr_dirtied_pause`). Read
//! in Debian's 6.12.107; the same rules since v3.2 ("writeback: per task
//! dirty rate limit", "writeback: charge leaked page dirties to active
//! tasks").
//!
//! A buffered write calls `balance_dirty_pages_ratelimited()` at the top of
//! every chunk (`generic_perform_write()`, before `write_begin`: each page
//! of the order-0 page cache, each folio-sized step with large folios),
//! whether the chunk dirties a clean folio or not; a write fault on a
//! shared file mapping calls it after `folio_mark_dirty()`, the folio dirty
//! already or not, the file system having `->page_mkwrite`
//! ([`Sim::fault_dirty_shared_page`]). It enters `balance_dirty_pages()`
//! only when `current->nr_dirtied >= ratelimit`:
//!
//! * `ratelimit` is the task's `nr_dirtied_pause` (32 pages at fork,
//!   `128 >> (PAGE_SHIFT - 10)`), at most 8 (`32 >> (PAGE_SHIFT - 10)`)
//!   while its wb's `dirty_exceeded` is set (only the pause,
//!   `crate::page_writeback_throttle`, sets it);
//! * the CPU's `bdp_ratelimits` counts every page dirtied on it
//!   (`folio_account_dirtied()`, whoever dirties); a task at its ratelimit
//!   zeroes it, and when it reaches `ratelimit_pages` first it is zeroed
//!   and `ratelimit` becomes 0, so the task balances now.
//!   `ratelimit_pages` is `dirty_thresh / (num_online_cpus() × 32)`, at
//!   least 16, set at boot (`writeback_set_ratelimit()`; the sysctls that
//!   set it again are not modelled here, whose ratios are fixed);
//! * an exited task's `nr_dirtied` goes to the CPU's `dirty_throttle_leaks`
//!   (`do_exit()`), and the next writer under its ratelimit takes up to
//!   `ratelimit − nr_dirtied` of it into its own `nr_dirtied`.
//!
//! `balance_dirty_pages()` then starts the wb's background writeback when
//! the global `NR_FILE_DIRTY` exceeds `bg_thresh` (and, out of the freerun
//! range, "even when in laptop mode"): so background writeback starts at
//! the first ratelimited check past `bg_thresh`, not at the page that
//! crossed it. In freerun (both domains' dirty and writeback pages at or
//! under `(thresh + bg_thresh) / 2`) the task's `nr_dirtied` goes to 0 and
//! its `nr_dirtied_pause` to the smaller domain's `dirty_poll_interval()`,
//! `1 << (ilog2(thresh − dirty) >> 1)`: the closer to the limit, the more
//! often it checks.
//!
//! Without `policy.dirty_throttle` mmsim's `balance_dirty_pages()` is the
//! background writeback part ([`Sim::balance_dirty_pages`] and the memcg
//! domain's, `crate::cgwb`) and, here, the freerun bookkeeping. With it, the
//! gate is [`Sim::bdp_ratelimit_check`] and the rest is the throttle's loop.
//!
//! Departures: mmsim's tasks have no CPU. With `machine.cpus` = 1
//! `bdp_ratelimits` is the one CPU's count, every task's and kernel
//! thread's dirtying in it: exact. With more CPUs each task is taken to run
//! on a CPU of its own: its `bdp_ratelimits` counts its own dirtying
//! (`TaskDirty::bdp_ratelimits`), so a lone writer checks at
//! `min(nr_dirtied_pause, ratelimit_pages)` pages, as the kernel's does;
//! exact for one writer per CPU, where the kernel's tasks sharing a CPU
//! reach `ratelimit_pages` sooner, and kernel threads' dirtying counts on
//! no writer's CPU. `dirty_throttle_leaks` is one count: an exited task's
//! leak goes to the next writer on any CPU. Without
//! `policy.dirty_throttle` there is no pause: a check out of the freerun
//! range keeps the freerun bookkeeping (`nr_dirtied` 0, `nr_dirtied_pause`
//! the poll interval, 1 at or over `thresh`) where the kernel's pause sets
//! `nr_dirtied_pause` from `wb_min_pause()`. `writeback_in_progress()` is
//! always false at a check: mmsim's background run is synchronous
//! (`crate::wb_over_bg_thresh`, [`Sim::balance_dirty_pages`]), over when
//! the call returns; a global pass that stops at a folio under writeback
//! (see [`Sim::balance_dirty_pages`]) is not taken up again until the
//! task's next ratelimited check (or the periodic flusher), where the
//! kernel's `wb_writeback()` goes on past it. With the throttle, the
//! dirty-page peaks of its report are sampled at each call, before the
//! chunk's dirtying.

use crate::page_writeback_throttle::{dirty_poll_interval, KTHREAD};
use crate::sim::Sim;

/// `32 >> (PAGE_SHIFT - 10)`: the ratelimit's cap while the wb's
/// `dirty_exceeded` is set.
pub(crate) const DIRTY_EXCEEDED_RATELIMIT: u64 = 32 >> (crate::PAGE_SIZE.trailing_zeros() - 10);

/// The ratelimit's counts besides each task's (`TaskDirty`): the per-CPU
/// `bdp_ratelimits` (the one CPU's with `machine.cpus` = 1) and
/// `dirty_throttle_leaks` (see the module documentation) and
/// `ratelimit_pages`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BdpRatelimit {
    /// `bdp_ratelimits`: pages dirtied since a task last reached its
    /// ratelimit (every dirtying, `folio_account_dirtied()`).
    pub(crate) bdp_ratelimits: u64,
    /// `dirty_throttle_leaks`: exited tasks' unbalanced `nr_dirtied`.
    pub(crate) dirty_throttle_leaks: u64,
    /// `ratelimit_pages` (`writeback_set_ratelimit()`).
    pub(crate) ratelimit_pages: u64,
    /// Calls into `balance_dirty_pages()` the ratelimit let through.
    pub(crate) checks: u64,
}

impl Sim {
    /// `writeback_set_ratelimit()` (v6.12) at boot with the global
    /// `dirty_thresh`: `ratelimit_pages = dirty_thresh / (num_online_cpus()
    /// × 32)`, at least 16.
    pub(crate) fn writeback_set_ratelimit(&mut self, dirty_thresh: u64) {
        let cpus = self.cfg.cpus.max(1) as u64;
        self.bdp.rl.ratelimit_pages = (dirty_thresh / (cpus * 32)).max(16);
    }

    /// `balance_dirty_pages_ratelimited_flags()`'s gate (v6.12) for task
    /// `t` writing through wb `w`: whether it calls `balance_dirty_pages()`
    /// now (see the module documentation: `nr_dirtied_pause`, the
    /// `dirty_exceeded` clamp, `bdp_ratelimits` against `ratelimit_pages`,
    /// the leaks taken up).
    pub(crate) fn bdp_ratelimit_check(&mut self, w: usize, t: u32) -> bool {
        let exceeded = self.wb_dirty_exceeded(w);
        let one_cpu = self.smp.cpus == 1;
        let mut ts = *self.bdp_task_mut(t);
        let rl = &mut self.bdp.rl;
        // The CPU's count: the one count with one CPU, else the task's own.
        let p = if one_cpu {
            &mut rl.bdp_ratelimits
        } else {
            &mut ts.bdp_ratelimits
        };
        let mut ratelimit = ts.nr_dirtied_pause;
        if exceeded {
            ratelimit = ratelimit.min(DIRTY_EXCEEDED_RATELIMIT);
        }
        let mut nr_dirtied = ts.nr_dirtied;
        if nr_dirtied >= ratelimit {
            *p = 0;
        } else if *p >= rl.ratelimit_pages {
            *p = 0;
            ratelimit = 0;
        }
        if rl.dirty_throttle_leaks > 0 && nr_dirtied < ratelimit {
            let n = rl.dirty_throttle_leaks.min(ratelimit - nr_dirtied);
            rl.dirty_throttle_leaks -= n;
            nr_dirtied += n;
        }
        let balance = nr_dirtied >= ratelimit;
        rl.checks += u64::from(balance);
        ts.nr_dirtied = nr_dirtied;
        *self.bdp_task_mut(t) = ts;
        balance
    }

    /// `balance_dirty_pages_ratelimited_flags()` (v6.12) without
    /// `policy.dirty_throttle`, after the running task dirtied a clean file
    /// folio: at its ratelimited check, the global domain's background
    /// writeback ([`Sim::balance_dirty_pages`]), the memcg domain's
    /// (`crate::cgwb`), then the freerun exit's bookkeeping: `nr_dirtied`
    /// 0 and `nr_dirtied_pause` the smaller `domain_poll_intv()` of the
    /// domains (dirty pages with writeback, against `thresh`).
    pub(crate) fn balance_dirty_pages_ratelimited_flags(&mut self) {
        let t = self.bdp.cur_task;
        if t == KTHREAD {
            return;
        }
        let m = self.cur_memcg;
        let w = self.wb_index(m);
        if !self.bdp_ratelimit_check(w, t) {
            return;
        }
        self.balance_dirty_pages();
        let memcg_domain = self.has_memcg_domain(m);
        if memcg_domain {
            self.balance_dirty_pages_memcg(m);
        }
        let (thresh, _) = crate::cgwb::domain_dirty_limits(self.global_dirtyable_memory());
        let mut intv = dirty_poll_interval(self.nr_dirty + self.nr_writeback, thresh);
        if memcg_domain {
            let [_, md] = self.memcg_dirty_domain(m, true);
            intv = intv.min(dirty_poll_interval(md.dirty, md.thresh));
        }
        let ts = self.bdp_task_mut(t);
        ts.nr_dirtied = 0;
        ts.nr_dirtied_pause = intv;
    }

    /// `fault_dirty_shared_page()` (v6.12 mm/memory.c) for file folio `f`
    /// after a write fault on a shared mapping: `folio_mark_dirty()`, then
    /// whether the writer calls `balance_dirty_pages_ratelimited()`. The
    /// kernel's condition is `(dirtied || page_mkwrite) && mapping`; mmsim's
    /// file systems have `->page_mkwrite` (ext4, xfs), so under
    /// `policy.bdp_ratelimit` every such fault calls it, the folio dirty
    /// already or not. Without the ratelimit only the dirtying of a clean
    /// folio does (each call balances then, and the results recorded before
    /// the ratelimit are kept).
    #[inline]
    pub(crate) fn fault_dirty_shared_page(&mut self, f: crate::mem::folio::FolioId) -> bool {
        let dirtied = self.folio_mark_dirty_mapped(f);
        // `ext4_page_mkwrite`'s buffers (`crate::kmem::buffer_head`).
        self.create_empty_buffers(f);
        dirtied || self.cfg.policy.bdp_ratelimit
    }

    /// `do_exit()`'s `dirty_throttle_leaks` (v6.12 kernel/exit.c): task
    /// `t`'s unbalanced `nr_dirtied` is left for the next writer.
    pub(crate) fn bdp_task_exit(&mut self, t: u32) {
        if (t as usize) < self.bdp_tasks_len() {
            let ts = self.bdp_task_mut(t);
            let n = std::mem::take(&mut ts.nr_dirtied);
            self.bdp.rl.dirty_throttle_leaks += n;
        }
    }

    /// `(ratelimit_pages, bdp_ratelimits, dirty_throttle_leaks, checks)`.
    #[cfg(test)]
    pub(crate) fn bdp_ratelimit_state(&self) -> (u64, u64, u64, u64) {
        let rl = &self.bdp.rl;
        (
            rl.ratelimit_pages,
            rl.bdp_ratelimits,
            rl.dirty_throttle_leaks,
            rl.checks,
        )
    }
}
