//! Many CPUs: the workload clock of `machine.cpus` CPUs and the
//! `lruvec->lru_lock` they contend on.
//!
//! # Why
//!
//! Seed 000's server benchmarks run 72 fio jobs and 36 memcached threads on
//! the 36 CPUs of one socket. There the designs differ less in what they
//! evict than in how much CPU reclaim takes and how often it needs the LRU
//! lock: "In contrast to moving across generations, which requires the LRU
//! lock, moving across tiers only involves operations on folio->flags"
//! (seed 000). The active/inactive LRU takes `lru_lock` for every
//! activation by `folio_mark_accessed` (mm/swap.c `folio_activate`, batched
//! per CPU), and moves each deactivated folio under it twice
//! (`shrink_active_list`: isolate, then `move_folios_to_lru`); the
//! multi-gen LRU counts accesses in the folio's flags and sorts folios
//! between generations only when eviction meets them. With one CPU none of
//! this shows; with 36 the lock is where the throughput goes.
//!
//! # The model
//!
//! **A fluid clock.** The simulator still executes the tasks' events one
//! after another, in the stream's round-robin order. With `cpus` = P > 1,
//! every nanosecond a task spends (CPU, IO wait, reclaim) moves the shared
//! workload clock by 1/P ns (kept exact with a remainder): the clock is the
//! wall clock of P CPUs each running one of the interleaved tasks. This
//! assumes the tasks keep all P CPUs busy (at least P runnable tasks, as
//! 72 fio jobs on 36 CPUs do); set `cpus` to the number of CPUs the workload
//! can use, not the machine's (under a scenario's `schedule = "fair"` the
//! divisor is the CPUs busy, min(runnable tasks, P): see `crate::sched`).
//! kswapd keeps its own CPU and its own
//! clock, so P allocating CPUs outrun it P times sooner and reclaim falls
//! to the tasks themselves (direct and memcg-limit reclaim), as on a real
//! server. IO devices, the flusher and PSI see the shared clock; PSI then
//! equals the kernel's per-CPU aggregation when each CPU runs one task.
//!
//! **A lock timeline.** Each lruvec's `lru_lock` ([`LruLock`]) has a time
//! at which it is next free. A critical section of `h` ns requested at
//! clock time `t` makes the lock busy until `max(free, t) + h`. The
//! requester spins (CPU time, `do_raw_spin_lock` in a profile) for the
//! backlog `free − t` beyond a slack of one reclaim batch's section per
//! CPU: the fluid clock reorders the P CPUs' sections, so a backlog that
//! short is sections that interleaved rather than queued, and only a lock
//! busy more than all of the time makes CPUs wait. In steady saturation
//! the spin settles where each CPU's cycle (work + section + spin) is P
//! sections long, so throughput is one operation per section time — the
//! bound of a single lock — and below saturation nobody spins. Sections
//! are [`CostModel::lru_lock_ns`](crate::cost::CostModel::lru_lock_ns) per
//! folio plus
//! [`lru_lock_acquire_ns`](crate::cost::CostModel::lru_lock_acquire_ns)
//! per acquisition; per-CPU batches of 15 folios (`folio_batch`) share an
//! acquisition. The section time is part of the CPU costs already charged
//! (it is not added to them); only the spin is added.
//!
//! Where the lock is taken, and which kernel function it models:
//!
//! | where | kernel (v5.17 / v6.x) | folios held for |
//! |---|---|---|
//! | a new folio joins an LRU | `folio_add_lru` → `folio_batch_move_lru` (`__pagevec_lru_add`) | 1, 1/15 acquisition |
//! | classic activation by access | `folio_mark_accessed` → `folio_activate` (`activate_page`) | 1, 1/15 acquisition |
//! | classic isolation | `shrink_{in,}active_list` → `isolate_lru_folios` | folios taken |
//! | classic putback | `move_folios_to_lru` | folios put back |
//! | MGLRU isolation and sorting | `evict_folios` → `isolate_folios` → `scan_folios` | folios scanned |
//! | MGLRU putback | `evict_folios` → `move_folios_to_lru` | folios put back |
//! | MGLRU aging | `inc_max_seq`, `walk_mm` → `reset_batch_size` | one acquisition each |
//!
//! One reclaim invocation runs to its end before the next event, so its own
//! batches are not made to queue behind each other
//! ([`LruLock::acquire_by`]); the tasks' other requesters queue behind the
//! whole run.
//!
//! MGLRU's `folio_inc_refs`/`lru_gen_inc_refs` (accesses through file
//! descriptors), `folio_update_gen` (promotion by the page-table walk and
//! look-around) and the classic `PG_referenced` step take no lock, in
//! either kernel.
//!
//! With `cpus` = 1 (the default) nothing here runs: the clock advances by
//! each nanosecond as before, and contention with kswapd is not modelled.
//!
//! Not modelled: the anon_vma and i_mmap locks of rmap walks (read-mostly),
//! the PTE locks, zone lock contention in the page allocator, and the
//! cross-socket cost of cache lines (the seed binds everything to one
//! node).

use crate::memcg::MemcgId;
use crate::reclaim::ScanControl;
use crate::sim::Sim;

/// Folios per per-CPU LRU batch (`PAGEVEC_SIZE` in v5.17, the size of a
/// `folio_batch` in v6.x): one `lru_lock` acquisition moves up to this many.
pub(crate) const FOLIO_BATCH: u64 = 15;

/// One lruvec's `lru_lock` as a timeline (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LruLock {
    /// When the last section granted ends, ns on the workload clock.
    pub free_at: u64,
    /// Total section time granted, ns.
    pub held_ns: u64,
    /// Acquisitions.
    pub acquisitions: u64,
    /// The requester of the latest sections (0: none named).
    pub owner: u64,
    /// Section time of the owner's unbroken run of acquisitions, ns.
    pub streak_ns: u64,
}

impl LruLock {
    /// A section of `hold` ns requested at time `t`: returns how long the
    /// requester spins, which is the backlog beyond `slack`.
    #[inline]
    pub(crate) fn acquire(&mut self, t: u64, hold: u64, slack: u64) -> u64 {
        self.acquire_placed(t, t, hold, slack)
    }

    /// [`acquire`](Self::acquire) by a requester at time `t` whose section
    /// joins the backlog at `place` ≤ `t` (kswapd, whose clock runs ahead
    /// of the workload's: see the module documentation).
    #[inline]
    pub(crate) fn acquire_placed(&mut self, t: u64, place: u64, hold: u64, slack: u64) -> u64 {
        self.acquire_by(0, t, place, hold, slack)
    }

    /// [`acquire_placed`](Self::acquire_placed) by the named requester
    /// `owner` (≠ 0): a requester does not queue behind its own unbroken run
    /// of sections. The simulator runs one reclaim invocation to its end
    /// before the next event, so without this a lone reclaimer's batches,
    /// moving the shared clock by 1/P of their time, would pile up behind
    /// each other as if P reclaimers had taken the lock at once. Other
    /// requesters still queue behind the whole run.
    #[inline]
    pub(crate) fn acquire_by(
        &mut self,
        owner: u64,
        t: u64,
        place: u64,
        hold: u64,
        slack: u64,
    ) -> u64 {
        let mine = owner != 0 && owner == self.owner;
        let own = if mine { self.streak_ns } else { 0 };
        let wait = self
            .free_at
            .saturating_sub(t)
            .saturating_sub(own)
            .saturating_sub(slack);
        self.free_at = self.free_at.max(place) + hold;
        self.held_ns += hold;
        self.acquisitions += 1;
        if mine {
            self.streak_ns += hold;
        } else {
            (self.owner, self.streak_ns) = (owner, hold);
        }
        wait
    }
}

/// The workload's CPUs (`machine.cpus`) and what their sharing costs.
#[derive(Clone, Debug)]
pub(crate) struct Smp {
    /// CPUs sharing the workload clock (P ≥ 1).
    pub cpus: u64,
    /// Remainder of the last clock advance, in 1/`par` ns.
    pub(crate) frac: u64,
    /// The CPUs a task's time is shared among (the divisor of the fluid
    /// clock): `cpus`, or under the fair schedule the runnable tasks when
    /// they are fewer (`Sim::set_runnable`, `crate::sched`).
    pub(crate) par: u64,
    /// The running tasks' time so far, ns: every [`Sim::advance`] adds its
    /// `ns` (CPU, spin, reclaim, and outside the fair schedule IO waits), so
    /// a task's time is the difference around its events (`crate::sched`).
    pub(crate) ran: u64,
    /// Whether the fair schedule is on (`Sim::set_fair_schedule`): a sleep
    /// sets `wake_at` instead of moving the clock.
    pub(crate) fair: bool,
    /// Under the fair schedule: the running task sleeps until then (IO,
    /// `memory.high` throttling); 0 when it does not.
    pub(crate) wake_at: u64,
    /// The lock backlog taken as reordering rather than queueing: one
    /// reclaim batch's section (an acquisition and SWAP_CLUSTER_MAX
    /// folios) per CPU.
    slack: u64,
    /// Spin on `lru_lock` by the workload's tasks outside reclaim, ns.
    pub task_lock_wait_ns: u64,
    /// Reclaim invocations named as lock requesters so far.
    pub owners: u64,
}

impl Smp {
    /// The CPUs of `cpus` (≥ 1) with the lock costs of `cost`.
    pub(crate) fn new(cpus: u32, cost: &crate::cost::CostModel) -> Smp {
        let cpus = cpus.max(1) as u64;
        Smp {
            cpus,
            frac: 0,
            par: cpus,
            ran: 0,
            fair: false,
            wake_at: 0,
            slack: cpus
                * (cost.lru_lock_acquire_ns + crate::reclaim::SWAP_CLUSTER_MAX * cost.lru_lock_ns),
            task_lock_wait_ns: 0,
            owners: 0,
        }
    }

    /// Zeroes the counters (a measurement starts).
    pub(crate) fn reset_stats(&mut self) {
        self.task_lock_wait_ns = 0;
    }
}

impl Sim {
    /// Advances the workload clock by `ns` of one task's time: by `ns` on
    /// one CPU, by `ns`/P (exactly, over many calls) on P CPUs (under the
    /// fair schedule P is the CPUs busy, `crate::sched`); counted in the
    /// running tasks' time (`Smp::ran`).
    #[inline]
    pub(crate) fn advance(&mut self, ns: u64) {
        self.smp.ran += ns;
        if self.smp.par == 1 {
            self.clock += ns;
        } else {
            let t = self.smp.frac + ns;
            self.clock += t / self.smp.par;
            self.smp.frac = t % self.smp.par;
        }
    }

    /// Every task waits `ns` of wall time (all workloads of a phase wait for
    /// a start time): the clock moves by `ns` whatever the number of CPUs,
    /// with the background work (kswapd, writeback) that falls due.
    pub fn idle(&mut self, ns: u64) {
        self.step(&crate::event::Event::Think {
            ns: ns.saturating_mul(self.smp.par),
        });
    }

    /// `lru_lock` of group `m` taken outside reclaim by the running task for
    /// `folios` folios of a per-CPU batch (`folio_batch_move_lru`): each
    /// folio's section plus its share of one acquisition. The spin moves the
    /// task's time. Nothing with one CPU.
    #[inline]
    pub(crate) fn lru_lock_batched(&mut self, m: MemcgId, folios: u64) {
        if self.smp.cpus > 1 {
            let hold = folios * self.cost.lru_lock_ns + self.cost.lru_lock_acquire_ns / FOLIO_BATCH;
            let wait =
                self.memcgs[m as usize]
                    .lruvec
                    .lru_lock
                    .acquire(self.clock, hold, self.smp.slack);
            if wait > 0 {
                self.smp.task_lock_wait_ns += wait;
                self.advance(wait);
            }
        }
    }

    /// `spin_lock_irq(&lruvec->lru_lock)` by reclaimer `sc` on group `m`'s
    /// lruvec for a section over `folios` folios (one acquisition); the spin
    /// is charged to the reclaimer. Nothing with one CPU.
    #[inline]
    pub(crate) fn lru_lock_reclaim(&mut self, sc: &mut ScanControl, m: MemcgId, folios: u64) {
        if self.smp.cpus > 1 {
            let hold = self.cost.lru_lock_acquire_ns + folios * self.cost.lru_lock_ns;
            // kswapd runs whole priority iterations ahead of the workload
            // clock: its sections join the lock's backlog at the present
            // rather than block the tasks until kswapd's future, and it
            // waits only for a backlog that reaches its own time.
            let t = sc.now();
            if sc.lock_owner == 0 {
                self.smp.owners += 1;
                sc.lock_owner = self.smp.owners;
            }
            let wait = self.memcgs[m as usize].lruvec.lru_lock.acquire_by(
                sc.lock_owner,
                t,
                t.min(self.clock),
                hold,
                self.smp.slack,
            );
            sc.charge_lock_wait(wait);
        }
    }

    /// Section time of the busiest lruvec's `lru_lock` since the measurement
    /// began, ns.
    pub(crate) fn busiest_lru_lock_ns(&self) -> u64 {
        self.memcgs
            .iter()
            .map(|g| g.lruvec.lru_lock.held_ns)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{MachineConfig, PolicyConfig, PolicyName, Size};
    use crate::event::Event;
    use crate::readahead::Advice;

    fn machine(policy: PolicyName, cpus: u32) -> Sim {
        Sim::new(MachineConfig {
            memory: Size::from_pages(1 << 16),
            policy: PolicyConfig {
                name: policy,
                ..Default::default()
            },
            cpus,
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn p_cpus_move_the_clock_by_a_pth_exactly() {
        let mut one = machine(PolicyName::Cost, 1);
        let mut four = machine(PolicyName::Cost, 4);
        for _ in 0..4 {
            one.step(&Event::Think { ns: 10 });
            four.step(&Event::Think { ns: 10 });
        }
        assert_eq!(one.now(), 40);
        // 10/4 = 2 rem 2, then 12/4 = 3: the remainder is carried, not lost.
        assert_eq!(four.now(), 10);
        four.step(&Event::Think { ns: 3 });
        assert_eq!(four.now(), 10);
        four.step(&Event::Think { ns: 1 });
        assert_eq!(four.now(), 11);
    }

    /// Reads pages 3, 4, 3 of a FADV_RANDOM file: two new folios, and the
    /// second access to page 3.
    fn read_343(s: &mut Sim) -> crate::mem::folio::FolioId {
        let file = s.add_file("f", 100).unwrap();
        s.fadvise(file, Advice::Random).unwrap();
        for index in [3, 4, 3] {
            s.step(&Event::FileRead {
                file,
                index,
                pages: 1,
            });
        }
        crate::mem::filemap::slot_folio(s.files[file as usize].slot(3)).unwrap()
    }

    #[test]
    fn classic_activation_takes_the_lru_lock_mglru_refs_do_not() {
        // Classic: each new folio joins the LRU under the lock (folio_add_lru),
        // and the second access activates page 3 under it (folio_activate).
        let mut s = machine(PolicyName::Cost, 2);
        let f = read_343(&mut s);
        assert!(s.folios[f].test(crate::mem::folio::flags::ACTIVE));
        let l = s.memcgs[0].lruvec.lru_lock;
        assert_eq!(l.acquisitions, 3);
        let (lock, acq) = (s.cost.lru_lock_ns, s.cost.lru_lock_acquire_ns);
        assert_eq!(l.held_ns, 3 * (lock + acq / FOLIO_BATCH));
        // MGLRU: the second access only counts in the folio's flags
        // (folio_inc_refs / lru_gen_inc_refs).
        let mut s = machine(PolicyName::Mglru, 2);
        read_343(&mut s);
        assert_eq!(s.memcgs[0].lruvec.lru_lock.acquisitions, 2);
        // One CPU: the lock is not modelled at all.
        let mut s = machine(PolicyName::Cost, 1);
        read_343(&mut s);
        assert_eq!(s.memcgs[0].lruvec.lru_lock, LruLock::default());
    }

    #[test]
    fn an_idle_wait_moves_the_clock_by_wall_time_on_any_number_of_cpus() {
        for cpus in [1, 36] {
            let mut s = machine(PolicyName::Cost, cpus);
            s.step(&Event::Think { ns: 72 });
            s.idle(1_000);
            assert_eq!(s.now(), 72 / cpus as u64 + 1_000, "{cpus} CPUs");
        }
    }

    #[test]
    fn kswapd_sections_join_the_backlog_at_the_present() {
        // The workload is at 1000; kswapd asks at 5000 (ahead) for 100 ns.
        let mut l = LruLock::default();
        assert_eq!(l.acquire_placed(5_000, 1_000, 100, 0), 0);
        assert_eq!(l.free_at, 1_100);
        // A task at 1000 waits for kswapd's section, not until kswapd's future.
        assert_eq!(l.acquire(1_000, 100, 0), 100);
        // kswapd does not wait for a backlog behind its own time.
        assert_eq!(l.acquire_placed(5_100, 1_000, 100, 0), 0);
    }

    #[test]
    fn a_lock_below_saturation_never_spins() {
        // Sections of 100 ns every 200 ns: half busy.
        let mut l = LruLock::default();
        for i in 0..1000 {
            assert_eq!(l.acquire(i * 200, 100, 0), 0);
        }
        assert_eq!(l.held_ns, 100_000);
        assert_eq!(l.acquisitions, 1000);
    }

    #[test]
    fn a_saturated_lock_paces_requesters_to_one_section_each() {
        // P = 4 requesters, each with 300 ns of work and a 100 ns section:
        // demand 4 × 100 per 400 ns of work per CPU = saturated exactly at
        // 300 + 100 = 400 = 4 × 100; with 200 ns of work it is over-saturated
        // and each cycle must stretch to 4 sections (400 ns): spin 100 ns.
        let p = 4;
        let mut l = LruLock::default();
        let mut clock_p = 0u64; // clock × P, exact
        let mut last_wait = 0;
        for _ in 0..10_000 {
            let wait = l.acquire(clock_p / p, 100, 0);
            clock_p += 200 + 100 + wait;
            last_wait = wait;
        }
        assert!((99..=101).contains(&last_wait), "spin {last_wait}");
        // Throughput: one section per 100 ns of wall time.
        let wall = clock_p / p;
        assert!((999_000..=1_001_000).contains(&wall), "wall {wall}");
    }

    #[test]
    fn a_requester_does_not_queue_behind_its_own_run_of_sections() {
        // Reclaimer 7 takes the lock 10 times at one instant (its clock
        // moves by 1/P of its work): it never waits for itself...
        let mut l = LruLock::default();
        for _ in 0..10 {
            assert_eq!(l.acquire_by(7, 1_000, 1_000, 100, 0), 0);
        }
        assert_eq!((l.owner, l.streak_ns, l.free_at), (7, 1_000, 2_000));
        // ...another requester queues behind the whole run...
        assert_eq!(l.acquire_by(8, 1_000, 1_000, 100, 0), 1_000);
        // ...and 7, coming back after 8, waits for 8's section and its own old run.
        assert_eq!(l.acquire_by(7, 1_000, 1_000, 100, 0), 1_100);
        // Unnamed requesters (0) never count as the same one.
        assert_eq!(l.acquire_placed(1_000, 1_000, 100, 0), 1_200);
        assert_eq!(l.acquire_placed(1_000, 1_000, 100, 0), 1_300);
    }

    #[test]
    fn slack_shifts_the_backlog_not_the_steady_spin() {
        let p = 4;
        let run = |slack| {
            let mut l = LruLock::default();
            let mut clock_p = 0u64;
            let mut w = 0;
            for _ in 0..10_000 {
                w = l.acquire(clock_p / p, 100, slack);
                clock_p += 200 + 100 + w;
            }
            (w, clock_p / p)
        };
        let (w0, t0) = run(0);
        let (w1, t1) = run(2_000);
        assert_eq!(w0, w1);
        assert!(t0.abs_diff(t1) <= 2_000, "{t0} vs {t1}");
    }
}
