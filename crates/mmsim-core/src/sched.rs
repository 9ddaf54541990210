//! Per-task simulated time for the fair schedule (the scheduler itself is
//! `mmsim_workloads`' `fair` module, which picks the tasks; this module is
//! what the simulator tells it).
//!
//! # What is accounted
//!
//! Every nanosecond the running task spends goes through [`Sim::advance`]
//! (access costs, fault handling, direct and memcg-limit reclaim including
//! its writeback throttling, spin on `lru_lock`, `Think`), which adds it to
//! one counter (`Smp::ran`): the only work this puts on the per-access path.
//! A task's CPU time is the counter's difference around its events.
//!
//! Under the fair schedule ([`Sim::set_fair_schedule`]) a task's sleeps do
//! not move the clock: the IO wait of a read or swap-in fault, of a buffered
//! read and of a page already under IO (`io_wait`, the kernel's
//! `folio_wait_locked`/`io_schedule`), and `memory.high` throttling
//! (`mem_cgroup_handle_over_high` → `schedule_timeout_killable`) record when
//! the task wakes ([`Sim::task_sleep_until`]); the scheduler then runs other
//! tasks until then, as `schedule()` does when a task blocks. The rest of
//! the event that slept runs before the wake (its page mapped at the time
//! the IO was issued): events are atomic, the wait is taken at the end of
//! the event. A memstall sleep (a refault of a workingset page) is recorded
//! in PSI over the sleep. `reclaim_throttle` inside direct reclaim is not a
//! scheduler sleep here: reclaim continues after it at the wake time, so it
//! stays in the reclaiming task's time. The `balance_dirty_pages` pause
//! (`policy.dirty_throttle`, `crate::page_writeback_throttle`) is such a
//! sleep, not a memstall.
//!
//! Outside the fair schedule (the default) a sleep moves the clock as
//! before and nothing here changes a result.

use crate::event::Event;
use crate::psi::PsiCpu;
use crate::sim::Sim;

impl Sim {
    /// Turns the fair schedule's sleeps on (see the module documentation):
    /// set by the scenario runner before the first event under
    /// `schedule = "fair"`.
    pub fn set_fair_schedule(&mut self, on: bool) {
        self.smp.fair = on;
    }

    /// The running tasks' time so far, ns (CPU time, never sleeps under the
    /// fair schedule): a task's time is the difference around its events.
    pub fn task_ran_ns(&self) -> u64 {
        self.smp.ran
    }

    /// The CPUs of the machine (`machine.cpus`).
    pub fn cpus(&self) -> u64 {
        self.smp.cpus
    }

    /// Under the fair schedule: when the running task wakes from the sleep
    /// its last events began, if it sleeps past the clock; cleared (the next
    /// task starts awake).
    pub fn take_task_wake(&mut self) -> Option<u64> {
        let w = std::mem::take(&mut self.smp.wake_at);
        (w > self.clock).then_some(w)
    }

    /// `n` tasks are runnable: the fluid clock divides a task's time among
    /// min(n, `cpus`) busy CPUs (at least 1), as the fair schedule's P CPUs
    /// run up to P tasks at once. The remainder of the last advance is
    /// dropped when the divisor changes (less than 1 ns).
    pub fn set_runnable(&mut self, n: u64) {
        let par = n.clamp(1, self.smp.cpus);
        if par != self.smp.par {
            self.smp.par = par;
            self.smp.frac = 0;
        }
    }

    /// Moves the clock to `t` with no task running (every task sleeps), with
    /// the background work that falls due, as [`Sim::idle`] does.
    pub fn idle_until(&mut self, t: u64) {
        if t > self.clock {
            self.idle(t - self.clock);
        }
    }

    /// Runs `events` of one task until one of them makes it sleep (under
    /// the fair schedule), the task's time since the call reaches
    /// `budget_ns`, or the clock reaches `until`, whichever comes first after
    /// at least one event; returns the events run. Each event runs through
    /// [`Sim::run`], so the tracepoints and `explain` see it; the stop is
    /// decided after every event, so the result does not depend on how the
    /// caller cuts `events`.
    pub fn run_task(&mut self, events: &[Event], budget_ns: u64, until: u64) -> usize {
        self.run_task_while(events, until, |ran, _| ran >= budget_ns)
    }

    /// [`Sim::run_task`] of a task with a CPU of its own, whose timeline is
    /// at `cpu_at` ns: no budget; it stops once its CPU, `cpu_at` plus its
    /// time since the call, is past the clock. With R tasks on R CPUs each
    /// nanosecond run moves the clock by 1/R ns, so a task run on beyond that
    /// point would run on more than one CPU at once (`mmsim_workloads`' fair
    /// schedule).
    pub fn run_task_on_own_cpu(&mut self, events: &[Event], cpu_at: u64, until: u64) -> usize {
        self.run_task_while(events, until, |ran, clock| {
            cpu_at.saturating_add(ran) > clock
        })
    }

    /// The loop of [`Sim::run_task`]: after each event, stops on a sleep,
    /// at `until`, or when `stop(time run since the call, clock)`.
    #[inline]
    fn run_task_while(
        &mut self,
        events: &[Event],
        until: u64,
        stop: impl Fn(u64, u64) -> bool,
    ) -> usize {
        let ran0 = self.smp.ran;
        for (i, ev) in events.iter().enumerate() {
            self.run(std::slice::from_ref(ev));
            if self.smp.wake_at > self.clock
                || stop(self.smp.ran - ran0, self.clock)
                || self.clock >= until
            {
                return i + 1;
            }
        }
        events.len()
    }

    /// The running task sleeps until `t` (an IO completes, a throttle ends):
    /// under the fair schedule the clock stays and the wake is recorded (the
    /// union of the event's sleeps); else the clock moves to `t`. A memstall
    /// is recorded in PSI over the sleep, for the system and the task's
    /// groups. Returns the time slept beyond the sleeps already recorded.
    ///
    /// Every swap-in's read waits here: the plain sleep without the fair
    /// schedule (the clock moves, no memstall) is inline in the caller, the
    /// rest out of line.
    #[inline(always)]
    pub(crate) fn task_sleep_until(&mut self, t: u64, memstall: bool) -> u64 {
        if !self.smp.fair && !memstall {
            let wait = t.saturating_sub(self.clock);
            self.advance(wait);
            return wait;
        }
        self.task_sleep_until_slow(t, memstall)
    }

    /// [`Sim::task_sleep_until`] of a memstall or under the fair schedule.
    #[inline(never)]
    fn task_sleep_until_slow(&mut self, t: u64, memstall: bool) -> u64 {
        if !self.smp.fair {
            let wait = t.saturating_sub(self.clock);
            if memstall {
                self.workload_stall(wait, false);
            } else {
                self.advance(wait);
            }
            return wait;
        }
        let from = self.clock.max(self.smp.wake_at);
        if t <= from {
            return 0;
        }
        self.smp.wake_at = t;
        if memstall {
            self.psi.stall(PsiCpu::Workload, from, t);
            let mut cur = Some(self.cur_memcg);
            while let Some(c) = cur.filter(|&c| c != crate::memcg::ROOT) {
                let g = &mut self.memcgs[c as usize];
                g.psi.stall(PsiCpu::Workload, from, t);
                cur = g.parent;
            }
        }
        t - from
    }
}
