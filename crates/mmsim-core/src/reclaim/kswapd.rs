//! kswapd (mm/vmscan.c's kswapd section, v6.x): `wakeup_kswapd`, and
//! `balance_pgdat`'s priority loop run one step at a time on kswapd's own
//! clock from the timer list (`TimerKind::Kswapd`).
//!
//! Split out of `vmscan.rs` only to keep files short; in the kernel it sits in
//! mm/vmscan.c after the reclaim it drives. kswapd wakes when an allocation
//! finds free pages at or under the low watermark and reclaims towards the high
//! one, aging anon on the way (`kswapd_age_node`, or `lru_gen_age_node` under
//! MGLRU); sixteen fruitless runs put it to sleep for good
//! (`MAX_RECLAIM_RETRIES`, `kswapd_failures`).

use crate::psi::PsiCpu;
use crate::reclaim::vmscan::inactive_is_low;
use crate::reclaim::{Reclaimer, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::sim::{Policy, Sim};
use crate::stats::item::*;
use crate::tracepoint::{TpEvent, TpScope, TpTask};

impl Sim {
    /// Whether kswapd's pass through `shrink_node()` (the classic LRU, and
    /// v6.1 MGLRU, whose root reclaim goes through `shrink_node_memcgs()`)
    /// sets PGDAT_DIRTY: every file page it isolated was dirty and not
    /// queued for writeback (`sc->nr.unqueued_dirty == sc->nr.file_taken`).
    /// Kernels 4.16 to 6.12 test the bare equality (true also for 0 == 0, a
    /// pass that took no file page); 6.13 added the non-zero guard ("mm: fix
    /// shrink nr.unqueued_dirty counter issue"), and the newest remove the
    /// flag with kswapd's file writeback. The classic LRU follows
    /// `machine.policy.pgdat_dirty_guard` (default: the guard). v6.1 MGLRU: 6.1.176's
    /// bare equality, and its MGLRU eviction fills no `sc->nr` count, so
    /// every pass sets the flag; it frees nothing there, as kswapd writes a
    /// dirty file folio only if it has PG_reclaim and `isolate_folio()`
    /// cleared that before `shrink_folio_list()` (and `sort_folio()` keeps
    /// dirty file folios from isolation).
    pub(crate) fn kswapd_sets_pgdat_dirty(&self, sc: &ScanControl) -> bool {
        if self.policy == Policy::Mglru(crate::config::MglruVersion::V6_1) {
            return sc.nr_unqueued_dirty == sc.nr_file_taken;
        }
        (sc.nr_unqueued_dirty > 0 || !self.cfg.policy.pgdat_dirty_guard)
            && sc.nr_unqueued_dirty == sc.nr_file_taken
    }

    /// Wakes kswapd (`wakeup_kswapd()`), unless it runs already, the node is
    /// balanced, or kswapd has given up (16 fruitless runs). A wakeup within
    /// HZ/10 of going to sleep counts `kswapd_low_wmark_hit_quickly`, as
    /// kswapd's interrupted short nap does in `kswapd_try_to_sleep()`.
    /// `gfp` is the waker's mask, for `mm_vmscan_wakeup_kswapd` only: the
    /// classzone stays a user allocation's (`GFP_HIGHUSER_MOVABLE`'s ZONE_MOVABLE).
    pub(crate) fn wakeup_kswapd(&mut self, gfp: crate::gfp::Gfp) {
        self.wakeup_kswapd_zone(
            0,
            crate::gfp::gfp_zone(crate::gfp::GFP_HIGHUSER_MOVABLE),
            gfp,
        );
    }

    /// [`Sim::wakeup_kswapd_zone`] for a user allocation
    /// (`GFP_HIGHUSER_MOVABLE`: `highest_zoneidx` ZONE_MOVABLE). Order-0
    /// allocations pass their own mask's `gfp_zone` (`Sim::alloc_page`):
    /// a page table's `GFP_PGTABLE_USER` wakes kswapd with ZONE_NORMAL.
    #[cfg(test)]
    pub(crate) fn wakeup_kswapd_at(&mut self, order: u32) {
        let gfp = crate::gfp::GFP_HIGHUSER_MOVABLE;
        self.wakeup_kswapd_zone(order, crate::gfp::gfp_zone(gfp), gfp);
    }

    /// kswapd's classzone (`kswapd()`'s `highest_zoneidx`, ZONE_NORMAL
    /// until a wakeup sets it).
    pub(crate) fn kswapd_classzone(&self) -> u8 {
        self.compact.kswapd_classzone.unwrap_or(2)
    }

    /// `kswapd_highest_zoneidx(pgdat, highest_zoneidx)` and the reset to
    /// `MAX_NR_ZONES` (v6.12 `kswapd()`): the wakeups' highest classzone,
    /// or the previous run's when none came.
    fn kswapd_read_classzone(&mut self) {
        let c = &mut self.compact;
        if let Some(z) = c.kswapd_highest_zoneidx.take() {
            c.kswapd_classzone = Some(z);
        }
    }

    /// `wakeup_kswapd(…, order, …)` (mm/vmscan.c, v6.12): as
    /// [`Sim::wakeup_kswapd`], the node judged balanced at the waker's
    /// `order` when `compaction.kswapd_high_order` is on (at order 0
    /// otherwise), and the run started then balancing for `pgdat->kswapd_order`
    /// (`balance_pgdat`'s `sc.order`). Like v6.12, it raises `kswapd_order` to
    /// `order` first, whether kswapd then runs or not; a higher order an
    /// earlier wakeup left there is the run's order but not the test's (a
    /// node balanced at this allocation's order stays asleep). It raises
    /// `kswapd_highest_zoneidx` to `highest_zoneidx` the same way; the run
    /// it starts reads it as its classzone ([`Sim::kswapd_classzone`]).
    /// A wakeup that gets past the tests emits `mm_vmscan_wakeup_kswapd`
    /// (the waker's task, `order` and `gfp`; `crate::tracepoint::vmscan`).
    pub(crate) fn wakeup_kswapd_zone(
        &mut self,
        order: u32,
        highest_zoneidx: u8,
        gfp: crate::gfp::Gfp,
    ) {
        let c = &mut self.compact;
        c.kswapd_order = c.kswapd_order.max(order);
        c.kswapd_highest_zoneidx = Some(
            c.kswapd_highest_zoneidx
                .map_or(highest_zoneidx, |z| z.max(highest_zoneidx)),
        );
        if self.kswapd.running || self.kswapd.failures >= crate::fault::MAX_RECLAIM_RETRIES {
            return;
        }
        let high_order = self.compact.cfg.kswapd_high_order;
        // A boosted zone wakes a balanced node (`pgdat_watermark_boosted`).
        if self.pgdat_balanced(if high_order { order } else { 0 })
            && !self.pgdat_watermark_boosted()
        {
            return;
        }
        if self.tp.is_some() {
            let e = TpEvent::WakeupKswapd {
                zid: highest_zoneidx,
                order,
                gfp_flags: gfp,
            };
            let (t, task) = (self.clock, self.tp_task);
            self.trace_event(t, task, TpScope::default(), e);
        }
        let order = if high_order {
            order.max(self.compact.kswapd_order)
        } else {
            0
        };
        let order = if self.compact.cfg.kswapd_nap {
            // kswapd_try_to_sleep(), woken in its nap ("remaining"): it
            // raises kswapd_order to the order it was to sleep at; then
            // kswapd() reads kswapd_order for the run and clears it.
            let c = &mut self.compact;
            if self.kswapd.nap_until != 0 {
                c.kswapd_order = c.kswapd_order.max(self.kswapd.nap_order);
            }
            c.kswapd_order = c.kswapd_order.max(order);
            self.kswapd_read_order()
        } else {
            self.compact.kswapd_reclaim_order = order;
            order
        };
        self.kswapd_read_classzone();
        // kswapd's short nap in `kswapd_try_to_sleep` (v6.12: HZ/10,
        // `compaction.kswapd_nap_ms`) is the window of a quick wakeup.
        let nap = self.compact.cfg.kswapd_nap_ns();
        let k = &mut self.kswapd;
        if k.slept_at > 0 && self.clock.saturating_sub(k.slept_at) < nap {
            self.vm.count(KSWAPD_LOW_WMARK_HIT_QUICKLY, 1);
        }
        k.nap_until = 0;
        k.running = true;
        k.clock = k.clock.max(self.clock);
        k.run_start = k.clock;
        k.priority = DEF_PRIORITY;
        k.reclaimed = 0;
        self.vm.count(PAGEOUTRUN, 1);
        self.timers
            .add_timer(crate::timer::TimerKind::Kswapd, k.clock);
        self.kswapd_boost_run_start();
        // v6.1: balance_pgdat()'s scan_control starts with memcgs_need_aging clear.
        self.lru_gen.memcgs_need_aging = false;
        if self.tp.is_some() {
            let (t, e) = (self.kswapd.clock, TpEvent::KswapdWake { order });
            self.trace_event(t, TpTask::Kswapd, TpScope::default(), e);
        }
    }

    /// One iteration of `balance_pgdat()`'s priority loop on kswapd's clock:
    /// background anon aging, then `shrink_node()` towards the high watermark.
    /// While boosted reclaim lasts (`crate::page_alloc_boost`) it goes on
    /// past balance, without swap or writes.
    ///
    /// Under `policy.kswapd_soft_limit_rounds` (v1 soft limits) a step is
    /// one `mem_cgroup_shrink_node()` of v6.1/v6.12 `balance_pgdat()`'s
    /// soft-limit pass (`memcg1_soft_limit_reclaim`, after `kswapd_age_node`)
    /// while the pass lasts, and the step that ends it goes on to
    /// `kswapd_shrink_node()`; the loop's top (balance, boost) is tested
    /// only when a new priority iteration starts, as in the kernel.
    pub(crate) fn kswapd_step(&mut self) {
        let resuming = self.kswapd.soft.is_some();
        if !resuming {
            let balanced = self.pgdat_balanced(self.compact.kswapd_reclaim_order);
            if self.kswapd_boost_loop_top(balanced) {
                self.kswapd_end_run();
                return;
            }
        }
        let rules = self.rules();
        let mut sc = ScanControl::new(
            Reclaimer::Kswapd,
            self.kswapd_nr_to_reclaim(),
            self.kswapd.clock,
        );
        sc.priority = self.kswapd.priority;
        sc.order = self.compact.kswapd_reclaim_order;
        let boosting = self.kswapd.nr_boost_reclaim > 0;
        sc.may_swap = !boosting;
        sc.may_writepage = !boosting || sc.priority < DEF_PRIORITY - 2;
        let task = std::mem::replace(&mut self.tp_task, TpTask::Kswapd);
        // kswapd is `current`: what its unmap dirties counts for no writer.
        let writer = self.bdp_set_current(crate::page_writeback_throttle::KTHREAD);
        // kswapd_age_node(): keep enough inactive anon, judged on the whole
        // node, by deactivating in every group; under MGLRU lru_gen_age_node().
        let (inactive, active) = self.lruvec_page_state(crate::memcg::ROOT).type_sizes(false);
        let mglru = matches!(self.policy, Policy::Mglru(_));
        // A resumed soft-limit pass aged the node at its first step.
        if mglru {
            self.lru_gen_age_node(&mut sc);
        } else if !resuming && self.can_age_anon() && inactive_is_low(inactive, active) {
            let mut memcg = Some(crate::memcg::ROOT);
            while let Some(m) = memcg {
                sc.memcg = m;
                self.shrink_active_list(SWAP_CLUSTER_MAX, false, &mut sc, rules);
                memcg = self.mem_cgroup_iter(crate::memcg::ROOT, m);
            }
        }
        if self.cfg.policy.kswapd_soft_limit_rounds
            && self.cfg.soft_limit_reclaim == crate::config::SoftLimitReclaim::Tree
            && !mglru
        {
            let mut pass = self.kswapd.soft.take().unwrap_or_default();
            if !self.soft_limit_reclaim_step(&mut pass, &mut sc) {
                self.kswapd.soft = Some(pass);
                self.tp_task = task;
                self.bdp_set_current(writer);
                let k = &mut self.kswapd;
                k.clock += sc.elapsed().max(1);
                k.cpu_ns += sc.cpu_ns;
                k.profile.add(&sc.prof);
                return;
            }
            // balance_pgdat(): `sc.nr_reclaimed += nr_soft_reclaimed`.
            sc.nr_reclaimed += pass.reclaimed;
            sc.soft_done = true;
        }
        sc.nr_scanned = 0;
        self.shrink_node(&mut sc);
        self.tp_task = task;
        self.bdp_set_current(writer);
        let raise = sc.nr_scanned < sc.nr_to_reclaim;
        let k = &mut self.kswapd;
        if mglru {
            // set_initial_priority() lowered balance_pgdat()'s priority.
            k.priority = k.priority.min(sc.priority.max(1));
        }
        k.clock += sc.elapsed().max(1);
        k.cpu_ns += sc.cpu_ns;
        k.profile.add(&sc.prof);
        k.reclaimed += sc.nr_reclaimed;
        // kswapd_shrink_node(): once compact_gap(order) pages are reclaimed,
        // the rest of the run is for order 0 (compaction's turn).
        let order = self.compact.kswapd_reclaim_order;
        if order > 0 && k.reclaimed >= 2u64 << order {
            self.compact.kswapd_reclaim_order = 0;
        }
        let (raise, stop) = self.kswapd_boost_after_pass(raise, sc.nr_reclaimed);
        if stop {
            return self.kswapd_end_run();
        }
        let k = &mut self.kswapd;
        if raise || sc.nr_reclaimed == 0 {
            k.priority -= 1;
        }
        if k.priority < 1 {
            self.kswapd_end_run();
        }
    }

    /// `kswapd()` reading `pgdat->kswapd_order` for the next
    /// `balance_pgdat` (with `compaction.kswapd_nap`; mm/vmscan.c v6.12):
    /// the run's `alloc_order` is the highest order asked for since the
    /// last read, and `kswapd_order` starts again from 0, so that wakeups
    /// during the run are what the next run reads. The run reclaims for
    /// that order with `compaction.kswapd_high_order`, else for order 0.
    fn kswapd_read_order(&mut self) -> u32 {
        let alloc = std::mem::take(&mut self.compact.kswapd_order);
        self.kswapd.alloc_order = alloc;
        let order = if self.compact.cfg.kswapd_high_order {
            alloc
        } else {
            0
        };
        self.compact.kswapd_reclaim_order = order;
        order
    }

    /// `prepare_kswapd_sleep(pgdat, order, …)` (mm/vmscan.c v6.12): a
    /// hopeless node (`kswapd_failures >= MAX_RECLAIM_RETRIES`) may sleep
    /// and returns before anything is cleared; a balanced one clears its
    /// flags (`clear_pgdat_congested`: PGDAT_DIRTY here) and may sleep.
    fn prepare_kswapd_sleep(&mut self, order: u32) -> bool {
        if self.kswapd.failures >= crate::fault::MAX_RECLAIM_RETRIES {
            return true;
        }
        if self.pgdat_balanced(order) {
            self.node.dirty = false;
            return true;
        }
        false
    }

    /// What `kswapd()` does after `balance_pgdat` returned, with
    /// `compaction.kswapd_nap` (mm/vmscan.c v6.12): a run that ended below
    /// its order (`reclaim_order < alloc_order`) tries to sleep at both;
    /// else the loop's top reads `kswapd_order` (wakeups during the run)
    /// for both. Then `kswapd_try_to_sleep`: if `prepare_kswapd_sleep`
    /// holds, reset the skip hints, wake kcompactd for `alloc_order` and
    /// nap for HZ/10 (ended by [`Sim::kswapd_nap_end`] or a wakeup); if not,
    /// count `kswapd_high_wmark_hit_quickly` and start another run for
    /// the order read from `kswapd_order`, no wakeup needed.
    fn kswapd_try_to_sleep(&mut self) {
        let reclaim = std::mem::take(&mut self.compact.kswapd_reclaim_order);
        let (alloc, reclaim) = if reclaim < self.kswapd.alloc_order {
            (self.kswapd.alloc_order, reclaim)
        } else {
            let k = self.compact.kswapd_order;
            (
                k,
                if self.compact.cfg.kswapd_high_order {
                    k
                } else {
                    0
                },
            )
        };
        if self.prepare_kswapd_sleep(reclaim) {
            let nap = self.compact.cfg.kswapd_nap_ns();
            let k = &mut self.kswapd;
            k.running = false;
            k.slept_at = k.clock;
            k.nap_until = k.clock + nap;
            k.nap_order = reclaim;
            self.reset_isolation_suitable();
            self.wakeup_kcompactd(alloc);
            return;
        }
        self.vm.count(KSWAPD_HIGH_WMARK_HIT_QUICKLY, 1);
        self.kswapd_rerun();
    }

    /// The end of kswapd's HZ/10 nap (v6.12 `kswapd_try_to_sleep`, with
    /// `compaction.kswapd_nap`; nobody woke it, or [`Sim::wakeup_kswapd_at`]
    /// would have ended the nap): `prepare_kswapd_sleep` again at the order
    /// it napped at. Holds (balanced or hopeless): sleep until woken. Not:
    /// count `kswapd_high_wmark_hit_quickly` and start another
    /// `balance_pgdat` run at once for the order `kswapd()` reads from
    /// `kswapd_order`, no wakeup needed.
    pub(crate) fn kswapd_nap_end(&mut self) {
        let at = std::mem::take(&mut self.kswapd.nap_until);
        if self.prepare_kswapd_sleep(self.kswapd.nap_order) {
            if self.tp.is_some() {
                self.trace_event(at, TpTask::Kswapd, TpScope::default(), TpEvent::KswapdSleep);
            }
            return;
        }
        self.vm.count(KSWAPD_HIGH_WMARK_HIT_QUICKLY, 1);
        let k = &mut self.kswapd;
        k.running = true;
        k.clock = k.clock.max(at);
        self.kswapd_rerun();
    }

    /// A `balance_pgdat` run that no wakeup started (`kswapd_try_to_sleep`
    /// found the node unbalanced, or the nap ended so): for the order read
    /// from `kswapd_order` ([`Sim::kswapd_read_order`]), on kswapd's clock.
    fn kswapd_rerun(&mut self) {
        let order = self.kswapd_read_order();
        self.kswapd_read_classzone();
        let k = &mut self.kswapd;
        k.run_start = k.clock;
        k.priority = DEF_PRIORITY;
        k.reclaimed = 0;
        self.vm.count(PAGEOUTRUN, 1);
        self.kswapd_boost_run_start();
        self.lru_gen.memcgs_need_aging = false;
        if self.tp.is_some() {
            let (t, e) = (self.kswapd.clock, TpEvent::KswapdWake { order });
            self.trace_event(t, TpTask::Kswapd, TpScope::default(), e);
        }
    }

    /// `pgdat_balanced(pgdat, order, …)` (v6.12): free pages above the
    /// high watermark, and for `order` > 0 (only with
    /// `compaction.kswapd_high_order`) a free block of at least `order`
    /// with the zone's free pages above it (`zone_watermark_ok_safe`). Two
    /// zones (`machine.dma_zone_pages`): any zone balanced, `crate::mmzone`.
    fn pgdat_balanced(&self, order: u32) -> bool {
        if self.phys.dma.is_some() {
            return self.pgdat_balanced_zoned(order);
        }
        self.node.free > self.node.wmark_high
            && (order == 0
                || self
                    .phys
                    .zone
                    .watermark_ok(order as usize, self.node.wmark_high))
    }

    /// End of a `balance_pgdat()` run: PSI, refault snapshot, failure count;
    /// sleep if balanced, else start another run unless kswapd has failed 16 times.
    fn kswapd_end_run(&mut self) {
        self.kswapd_boost_run_end();
        let (start, end) = (self.kswapd.run_start, self.kswapd.clock);
        self.psi.stall(PsiCpu::Kswapd, start, end);
        self.snapshot_refaults(crate::memcg::ROOT);
        if self.kswapd.reclaimed == 0 {
            self.kswapd.failures += 1;
        }
        if self.compact.cfg.kswapd_nap {
            self.kswapd_try_to_sleep();
            return;
        }
        let balanced = self.pgdat_balanced(self.compact.kswapd_reclaim_order);
        let k = &mut self.kswapd;
        if balanced || k.failures >= crate::fault::MAX_RECLAIM_RETRIES {
            k.running = false;
            k.slept_at = k.clock;
            self.node.dirty = false;
            self.compact.kswapd_reclaim_order = 0;
            if self.node.free > self.node.wmark_high {
                self.kswapd_sleep_compact();
            }
            if self.tp.is_some() {
                let t = self.kswapd.clock;
                self.trace_event(t, TpTask::Kswapd, TpScope::default(), TpEvent::KswapdSleep);
            }
            return;
        }
        let k = &mut self.kswapd;
        k.run_start = k.clock;
        k.priority = DEF_PRIORITY;
        k.reclaimed = 0;
        self.count_vm_events(PAGEOUTRUN, 1);
        self.kswapd_boost_run_start();
    }
}
