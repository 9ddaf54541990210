//! The per-CPU lists' auto-tuned `high` (mm/page_alloc.c and mm/vmstat.c,
//! v6.12; added in v6.7 by "mm, pcp: reduce detecting time of consecutive
//! high order page freeing" and "mm: tune PCP high automatically"), used
//! only under `machine.policy.pcp_lists = "6.12"`: with the default
//! `"order-0"` lists `high` stays `high_min` and a refill and a drain stay
//! `batch` pages, mmsim's older model.
//!
//! - Bounds (`zone_set_high_and_batch`, `percpu_pagelist_high_fraction` 0):
//!   `high_min` is `zone_highsize` of the low watermark,
//!   `high_max` `zone_highsize` of the managed pages over
//!   `MIN_PERCPU_PAGELIST_HIGH_FRACTION` (8), both split over the node's
//!   CPUs and at least `batch << 2`. `pcp->high` starts at `high_min` and
//!   is clamped into the bounds at each use.
//! - Free (`free_unref_page_commit`): `alloc_factor` halved; `nr_pcp_high`
//!   — a `free_high` free lowers `high` by `batch << 5` and frees down to 0;
//!   while kswapd reclaims (`ZONE_RECLAIM_ACTIVE`) `high` falls by
//!   `max(free_count, batch)` and the lists hold at most `min(batch << 2,
//!   high)`; while the zone is below its high watermark (`ZONE_BELOW_HIGH`)
//!   `high` falls the same way and the lists may keep what they hold; else
//!   a free that reaches `high` raises it to `free_count + batch` (the
//!   free-side raise). A free that reaches the returned mark frees
//!   `nr_pcp_free` pages: `free_count` clamped to `batch..=high - batch`,
//!   and clears `ZONE_BELOW_HIGH` if the zone is then above its high mark.
//! - Allocation (`get_page_from_freelist`): an allocation that finds the
//!   zone at or below its high watermark sets `ZONE_BELOW_HIGH`
//!   (`zone_watermark_fast`); `rmqueue_pcplist` halves `free_count`. A
//!   refill (`nr_pcp_alloc`) takes `batch << alloc_factor` pages at order 0
//!   (`alloc_factor` grows by one per refill up to
//!   `CONFIG_PCP_BATCH_SCALE_MAX`, while the refill fits in `high - count -
//!   batch`), and raises `high` by that batch up to `high_max` unless the
//!   zone is below its high mark (the allocation-side raise).
//! - `decay_pcp_high`, from the vmstat worker (`refresh_cpu_vm_stats` every
//!   `sysctl_stat_interval` = HZ): `high` falls by an eighth (not below
//!   `high_min`, nor more than `count - (batch << 5)`), and pages above it
//!   are freed from list 0 on.
//!
//! Simplifications: the vmstat worker fires every whole second of the
//! workload clock (the kernel's stops when nothing changed and the
//! shepherd requeues it when the counters move); `ZONE_RECLAIM_ACTIVE` lasts
//! from each `balance_pgdat` run's start to its end on kswapd's clock,
//! while the workload's own allocations and frees interleave with its
//! steps; `ZONE_BELOW_HIGH` is tested by the allocations that go through
//! the per-CPU paths (order-0 folios, page tables, slabs, `rmqueue_order`),
//! with `zone_watermark_fast`'s plain free-page test (no highatomic or
//! CMA reserve here, `lowmem_reserve` 0 for the zone's own class).
//! `PCPF_FREE_HIGH_BATCH` is assumed set (see `page_alloc/pcp.rs`).

use super::pcp::{PerCpuPages, PCP_BATCH_SCALE_MAX};
use super::pcp_order::order_to_pindex;
use super::{MigrateType, PhysMem, PAGE_ALLOC_COSTLY_ORDER};

/// `MIN_PERCPU_PAGELIST_HIGH_FRACTION` (mm/page_alloc.c v6.12): the
/// smallest `percpu_pagelist_high_fraction`, the divisor of `high_max`.
pub(crate) const MIN_PERCPU_PAGELIST_HIGH_FRACTION: u64 = 8;

/// `zone_highsize` (v6.12, `cpu_online` 0): `total_pages` split over the
/// node's `cpus`, at least `batch << 2`.
pub(crate) fn zone_highsize(total_pages: u64, batch: usize, cpus: u32) -> usize {
    ((total_pages / u64::from(cpus.max(1))) as usize).max(batch << 2)
}

impl PerCpuPages {
    /// `pcp->high = clamp(pcp->high, high_min, high_max)`, as `nr_pcp_high`
    /// and `nr_pcp_alloc` (v6.12) begin.
    #[inline]
    fn clamp_high(&mut self) -> usize {
        self.high = self.high.max(self.high_min).min(self.high_max);
        self.high
    }

    /// `nr_pcp_high` (v6.12): the count at which a free drains, adjusting
    /// `high` on the way (see the module).
    pub(super) fn nr_pcp_high(&mut self, free_high: bool) -> usize {
        let (high_min, high_max, batch) = (self.high_min, self.high_max, self.batch);
        let high = self.clamp_high();
        if high == 0 {
            return 0;
        }
        if free_high {
            self.high = high
                .saturating_sub(batch << PCP_BATCH_SCALE_MAX)
                .max(high_min);
            return 0;
        }
        if self.reclaim_active {
            let free_count = self.free_count.max(batch);
            self.high = high.saturating_sub(free_count).max(high_min);
            return (batch << 2).min(self.high);
        }
        if high_min == high_max {
            return high;
        }
        if self.below_high {
            let free_count = self.free_count.max(batch);
            self.high = high.saturating_sub(free_count).max(high_min);
            return self.total().max(high_min);
        }
        if self.total() >= high {
            // Large enough to hold a batch of freed pages.
            let need_high = self.free_count + batch;
            if self.high < need_high {
                self.high = need_high.max(high_min).min(high_max);
            }
        }
        high
    }

    /// `nr_pcp_free` (v6.12): pages a free that reached `high` returns;
    /// `clamp_t(free_count, batch, high - batch)` (max first, then min, as
    /// the kernel's macro), all up to `batch << 5` for `free_high`.
    pub(super) fn nr_pcp_free(&self, high: usize, free_high: bool) -> usize {
        let batch = self.batch;
        if free_high {
            return self.total().min(batch << PCP_BATCH_SCALE_MAX);
        }
        if high < batch {
            return 1;
        }
        self.free_count.max(batch).min(high - batch)
    }

    /// `nr_pcp_alloc` (v6.12): blocks of `order` an empty list's refill
    /// takes, growing `alloc_factor` (order 0) and `high` (see the module).
    pub(super) fn nr_pcp_alloc(&mut self, order: usize) -> usize {
        let base_batch = self.batch;
        let mut high = self.clamp_high();
        if high < base_batch {
            return 1;
        }
        let mut batch = if order > 0 {
            base_batch
        } else {
            base_batch << self.alloc_factor
        };
        if self.high_min != self.high_max && !self.below_high {
            high = (high + batch).min(self.high_max);
            self.high = high;
        }
        if order == 0 {
            let room = high as isize - self.total() as isize - base_batch as isize;
            let max_nr_alloc = room.max(base_batch as isize) as usize;
            if batch <= max_nr_alloc && self.alloc_factor < PCP_BATCH_SCALE_MAX {
                self.alloc_factor += 1;
            }
            batch = batch.min(max_nr_alloc);
        }
        if batch > 1 {
            batch = (batch >> order).max(2);
        }
        batch
    }
}

impl PhysMem {
    /// `high_wmark_pages()` of ZONE_NORMAL: its own high mark (the upper
    /// zone's with `machine.dma_zone_pages`) and the watermark boost.
    fn zone_high_wmark(&self) -> u64 {
        let b = &self.zone.boost;
        let mark = self.dma.as_ref().map_or(b.wmark[2], |d| d.upper_wmark.high);
        mark + b.boost
    }

    /// An allocation of `order` from ZONE_NORMAL under `pcp_lists = "6.12"`:
    /// `get_page_from_freelist`'s `ZONE_BELOW_HIGH` detection
    /// (`zone_watermark_fast` at the high mark, tested until the flag is
    /// set) and, through the lists, `rmqueue_pcplist`'s halving of
    /// `free_count`. Out of line: the default lists never come here.
    #[cold]
    #[inline(never)]
    pub(super) fn pcp_alloc_v6_12(&mut self, order: usize) {
        self.zone_below_high_test(order);
        self.pcp.free_count >>= 1;
    }

    /// `get_page_from_freelist` (v6.12): an allocation of `order` that
    /// finds ZONE_NORMAL failing `zone_watermark_fast` at its high mark sets
    /// `ZONE_BELOW_HIGH`; once set it is not tested again until a free
    /// clears it.
    pub(super) fn zone_below_high_test(&mut self, order: usize) {
        if !self.pcp.below_high && !self.zone.watermark_ok(order, self.zone_high_wmark()) {
            self.pcp.below_high = true;
        }
    }

    /// `free_unref_page_commit` (v6.12) of a block of `order` under
    /// `pcp_lists = "6.12"`: `alloc_factor` halved, the block to the head of
    /// its order's list of its pageblock's type (`count` up by its pages),
    /// `PCPF_PREV_FREE_HIGH_ORDER` and `free_count` kept, then
    /// [`PerCpuPages::nr_pcp_high`]; at that count
    /// [`PerCpuPages::nr_pcp_free`] pages go back to the buddy lists, the
    /// freed list's first, and `ZONE_BELOW_HIGH` is cleared if the zone is
    /// now above its high mark.
    /// `#[cold]`: not rare under "6.12", but the hint keeps the default
    /// lists' per-page free (its caller's branch) free of the call's spills.
    #[cold]
    #[inline(never)]
    pub(super) fn free_unref_page_commit(&mut self, pfn: u64, order: usize) {
        self.pcp.alloc_factor >>= 1;
        let mt = if self.pcp.typed {
            self.pcp_mark(pfn, order);
            self.zone.pageblock_type(pfn)
        } else {
            MigrateType::Movable
        };
        let pindex = order_to_pindex(mt, order);
        self.pcp.lists[pindex].push(pfn);
        if self.pcp.typed || order > 0 {
            self.pcp.count += 1 << order;
        }
        let pcp = &mut self.pcp;
        let batch = pcp.batch;
        let mut free_high = false;
        if order > 0 && order <= PAGE_ALLOC_COSTLY_ORDER as usize {
            free_high = pcp.free_count >= batch && pcp.prev_free_high && pcp.total() >= batch;
            pcp.prev_free_high = true;
        } else {
            pcp.prev_free_high = false;
        }
        if pcp.free_count < batch << PCP_BATCH_SCALE_MAX {
            pcp.free_count += 1 << order;
        }
        let high = pcp.nr_pcp_high(free_high);
        if pcp.total() >= high {
            let n = pcp.nr_pcp_free(high, free_high);
            self.free_pcppages_bulk(n, pindex);
            if self.pcp.below_high && self.zone.watermark_ok(0, self.zone_high_wmark()) {
                self.pcp.below_high = false;
            }
        }
    }

    /// `decay_pcp_high` (v6.12), the vmstat worker's step for the lists
    /// (`refresh_cpu_vm_stats(true)`): `high` lowered to the largest of
    /// `count - (batch << 5)`, `high - high / 8` and `high_min`, then the
    /// pages above it freed from list 0 on (`free_pcppages_bulk`). True
    /// when there is more to do (`high` still above `high_min`, or pages
    /// were freed).
    pub(crate) fn decay_pcp_high(&mut self) -> bool {
        let pcp = &mut self.pcp;
        let (high_min, batch) = (pcp.high_min as isize, pcp.batch as isize);
        let mut todo = false;
        if pcp.high as isize > high_min {
            let high = pcp.high as isize;
            let count = pcp.total() as isize;
            let new = (count - (batch << PCP_BATCH_SCALE_MAX))
                .max(high - (high >> 3))
                .max(high_min);
            pcp.high = new as usize;
            todo = new > high_min;
        }
        let to_drain = pcp.total() as isize - pcp.high as isize;
        if to_drain > 0 {
            self.free_pcppages_bulk(to_drain as usize, 0);
            todo = true;
        }
        todo
    }
}

/// `sysctl_stat_interval` (mm/vmstat.c v6.12): HZ, one second, between the
/// vmstat worker's runs.
pub(crate) const VMSTAT_INTERVAL_NS: u64 = 1_000_000_000;

impl crate::sim::Sim {
    /// `vmstat_update` (mm/vmstat.c v6.12) on the one CPU:
    /// `refresh_cpu_vm_stats(true)`'s `decay_pcp_high` of ZONE_NORMAL's
    /// lists ([`PhysMem::decay_pcp_high`]; the counters themselves are
    /// exact here), requeued for the next whole second
    /// (`round_jiffies_relative(sysctl_stat_interval)`). Armed only under
    /// `pcp_lists = "6.12"`.
    pub(crate) fn vmstat_update(&mut self, now: u64) {
        let freed_before = self.phys.zone.free_pages();
        self.phys.decay_pcp_high();
        // Pages moved from the lists to the buddy lists: `Node::free`
        // counts both, so it does not move.
        debug_assert!(self.phys.zone.free_pages() >= freed_before);
        let next = now - now % VMSTAT_INTERVAL_NS + VMSTAT_INTERVAL_NS;
        self.timers
            .mod_timer(crate::timer::TimerKind::VmstatUpdate, next);
    }
}
