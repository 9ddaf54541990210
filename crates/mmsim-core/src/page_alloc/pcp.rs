//! The per-CPU page lists (`struct per_cpu_pages`, include/linux/mmzone.h
//! and mm/page_alloc.c, v6.12) of the one CPU that allocates: one list per
//! migrate type of the buddy lists (`MIGRATE_PCPTYPES`: unmovable, movable,
//! reclaimable) and order, indexed as the kernel's `pindex`
//! (`order_to_pindex`), one `count` of pages over all of them, one `high`
//! and one `batch`.
//!
//! Which orders have lists is `machine.policy.pcp_lists` ([`PcpLists`]):
//!
//! - `"order-0"` (the default; every kernel before v5.14): the three order-0
//!   lists only; every larger allocation and free goes to the buddy lists.
//! - `"6.12"`: `pcp_allowed_order()` — orders 0..=`PAGE_ALLOC_COSTLY_ORDER`
//!   (3), one list per type each (`MIGRATE_PCPTYPES * order + mt`), and the
//!   PMD (THP) order 9 with `NR_PCP_THP` = 2 lists after them
//!   (`NR_LOWORDER_PCP_LISTS` + 1 for movable, + 0 for the other types),
//!   `NR_PCP_LISTS` = 14 (no CMA). History, read in the kernel's source and
//!   its patches through the search tools: Mel Gorman's "mm/page_alloc:
//!   allow high-order pages to be stored on the per-cpu lists" (44042b449872,
//!   v5.14; posted June 2021) added orders 1–3 and the THP order with a list
//!   per type each; "use only one PCP list for THP-sized allocations"
//!   (5d0a661d808f, v6.0) kept one THP list; "Separate THP PCP into movable
//!   and non-movable categories" (bf14ed81f571, June 2024, backported to
//!   stable) made it two and "use the correct THP order for THP PCP"
//!   (2024) tests `HPAGE_PMD_ORDER` instead of `pageblock_order` (both 9 on
//!   x86-64): both are in v6.12.
//!   v6.18 adds a third THP list for CMA (no CMA here). Every large
//!   allocation here is movable but a slab's, so the THP lists of v5.14 and
//!   v6.0 would hold the same pages: only v6.12's is modelled.
//!
//! - Allocation (`rmqueue_pcplist` → `__rmqueue_pcplist`): `free_count`
//!   halved, then the head of the list of the request's order and type; an
//!   empty list is refilled by one `rmqueue_bulk` (one `__rmqueue` per
//!   block, `enum rmqueue_mode` kept across the batch under
//!   `rmqueue_fallback = "6.15"`), each added at the tail: `batch` pages at
//!   order 0, `max(batch >> order, 2)` blocks above (`nr_pcp_alloc`, with
//!   `batch` > 1). Order-0 folios take the movable list
//!   ([`PhysMem::alloc_order0_pcp`]), page-table pages
//!   (`machine.pagetable_frames`, `crate::kmem`) the unmovable one
//!   ([`PhysMem::rmqueue_pcplist`]), large folios and slabs of orders 1–3
//!   and 9 theirs ([`PhysMem::rmqueue_order`]) after the watermark's test
//!   that the buddy lists hold a free block of at least that order
//!   (`__zone_watermark_ok`, which v6.12's `get_page_from_freelist` applies
//!   before `rmqueue`: a block parked on a per-CPU list does not pass it).
//! - Free (`free_unref_page` / `free_unref_folios` →
//!   `free_unref_page_commit`): to the head of the list of the freed
//!   block's order and pageblock type (`get_pfnblock_migratetype`), whatever
//!   type it was allocated as; `count` grows by its pages. A free of order
//!   1..=3 that follows another such free (`PCPF_PREV_FREE_HIGH_ORDER`, which
//!   any other free clears) with `free_count` at least `batch` and `count` at
//!   least `batch` (`PCPF_FREE_HIGH_BATCH`, set when the CPU's share of the
//!   last-level cache exceeds `3 × batch` pages: assumed, as on any machine
//!   with ≥ 1 MiB of cache per CPU) is `free_high`: `nr_pcp_high` is 0 and
//!   `free_pcppages_bulk` returns `min(count, batch << 5)` pages. Otherwise,
//!   when `count` reaches `high`, `free_pcppages_bulk` returns `batch`
//!   pages with the order-0 lists; under `"6.12"` `high` and the pages
//!   returned are auto-tuned (`page_alloc/pcp_high.rs`). `free_count`
//!   counts freed pages up to `batch << 5`.
//! - `free_pcppages_bulk`: starting with the list just freed to and going
//!   round the lists in `pindex` order, each emptied from its tail before
//!   the next, a block at a time (`count` falls by the block's pages, so a
//!   large block may overshoot it), each freed with `__free_one_page`.
//! - `drain_pages_zone`: `free_pcppages_bulk` from index 0 until `count` is
//!   0, `batch << CONFIG_PCP_BATCH_SCALE_MAX` (5) pages a call.
//!
//! Not modelled: MIGRATE_ISOLATE (v6.12 frees an isolated pageblock's page
//! straight to the buddy lists) and MIGRATE_HIGHATOMIC / CMA (freed to the
//! movable list): no pageblock here has those types. Without unmovable or
//! reclaimable pageblocks (no `pagetable_frames`) every page is freed to
//! the movable lists and the round robin starts and ends there: with
//! `"order-0"`, the single list of before. ZONE_DMA (`crate::mmzone`) has no
//! per-CPU lists here.

use super::pcp_order::{pindex_to_order, PcpLists, NR_PCP_LISTS};
use super::{MigrateType, PhysMem, RmqueueMode, MIGRATE_TYPES};

/// `CONFIG_PCP_BATCH_SCALE_MAX` (mm/Kconfig, v6.12 default 5).
pub(super) const PCP_BATCH_SCALE_MAX: u32 = 5;

/// The per-CPU page lists (`struct per_cpu_pages`, v6.12): see the
/// module. With the default `"order-0"` lists `high` is `high_min`
/// (`zone_highsize`: the low watermark over the node's CPUs, at least
/// `4 × batch`) and never moves: an order-0 refill takes `batch` pages and
/// a drain at `high` returns `batch`. Under `"6.12"` `high` is auto-tuned
/// between `high_min` and `high_max` (`page_alloc/pcp_high.rs`:
/// `nr_pcp_high`, `nr_pcp_free`, `nr_pcp_alloc`, `decay_pcp_high`). Pages
/// on the lists are free for `Node::free` but not in the zone's free count,
/// as in the kernel (`NR_FREE_PAGES`).
#[derive(Debug, Clone)]
pub(crate) struct PerCpuPages {
    /// `pcp->lists[pindex]` (`order_to_pindex(mt, order)`: order 0's list
    /// of `mt` is index `mt`); each head at the back: a plain vector, since
    /// the per-page operations (free and allocate) are at the head; the
    /// tail is touched only a batch at a time, by the refill of an empty
    /// list and the drains. Lists above index 2 are used only with
    /// [`PcpLists::V6_12`].
    pub(super) lists: [Vec<u64>; NR_PCP_LISTS],
    /// `pcp->count` once the lists are typed: the pages on all the lists,
    /// kept on every push, pop, refill and drain so that a free compares it
    /// with `high` without summing the lists ([`PerCpuPages::check`] checks
    /// the sum). Untyped, only movable lists have pages and this field
    /// counts those of orders above 0, the order-0 movable list's length
    /// being the rest ([`PerCpuPages::total`]): an order-0 free or
    /// allocation is the single list's push or pop.
    pub(super) count: usize,
    /// `pcp->batch` (`zone_batchsize`).
    pub batch: usize,
    /// `pcp->high`: `high_min` at boot; moved only under `pcp_lists =
    /// "6.12"` (`page_alloc/pcp_high.rs`).
    pub high: usize,
    /// `pcp->high_min` (`zone_highsize` of the low watermark).
    pub high_min: usize,
    /// `pcp->high_max` (`zone_highsize` of the managed pages over
    /// `MIN_PERCPU_PAGELIST_HIGH_FRACTION`).
    pub high_max: usize,
    /// `pcp->alloc_factor` (v6.12): an order-0 refill takes `batch <<
    /// alloc_factor`; grown by refills, halved by frees (`"6.12"` only).
    pub(crate) alloc_factor: u32,
    /// The zone's `ZONE_BELOW_HIGH` (v6.12): an allocation found it at or
    /// below its high watermark and no free has since found it above
    /// (`"6.12"` only). Here since the lists are its only reader.
    pub(crate) below_high: bool,
    /// The zone's `ZONE_RECLAIM_ACTIVE` (v6.12): kswapd's `balance_pgdat`
    /// runs (`set_reclaim_active` / `clear_reclaim_active`); read by
    /// `nr_pcp_high` under `"6.12"` only.
    pub(crate) reclaim_active: bool,
    /// `pcp->free_count` (v6.12): pages freed, up to `batch << 5`, halved
    /// at each allocation through the lists.
    pub(super) free_count: usize,
    /// `PCPF_PREV_FREE_HIGH_ORDER`: the last free was of order 1..=3.
    pub(super) prev_free_high: bool,
    /// Which orders have lists (`machine.policy.pcp_lists`).
    pub(crate) orders: PcpLists,
    /// The lists are typed: set by the first non-movable request
    /// ([`PhysMem::pcp_type_lists`]). Until then every pageblock is
    /// MOVABLE (only a non-movable allocation's fallback can claim a block
    /// for another type; this holds because every non-movable request
    /// types the lists first: page tables and slabs), so every free goes to
    /// a movable list and no claim reads `alloc_type`: the pageblock lookup
    /// and the marks of `Zone::count_block`'s view are skipped, with the
    /// same results, and the order-0 path costs what the single list did.
    pub(super) typed: bool,
    /// The `kmem:mm_page_pcpu_drain` events not yet emitted, `(pfn, order,
    /// migratetype)`, logged by [`PhysMem::free_pcppages_bulk`] only while
    /// that tracepoint is selected (`crate::tracepoint::kmem_page`).
    pub(crate) drain_log: Option<Vec<(u64, u8, u8)>>,
}

impl PerCpuPages {
    /// `zone_batchsize` and `zone_set_high_and_batch`'s two `zone_highsize`
    /// (v6.12, `percpu_pagelist_high_fraction` 0): `high_min` from the low
    /// watermark, `high_max` from the managed pages over
    /// `MIN_PERCPU_PAGELIST_HIGH_FRACTION`; `high` starts at `high_min`.
    pub(crate) fn new(managed: u64, low_wmark: u64, cpus: u32) -> Self {
        let batch = ((managed >> 10).min((1 << 20) / 4096) / 4).max(1);
        // rounddown_pow_of_two(batch + batch / 2) - 1, at least 1 (pageset_update).
        let x = batch + batch / 2;
        let batch = (((1u64 << (63 - x.leading_zeros())) - 1) as usize).max(1);
        let high = super::pcp_high::zone_highsize(low_wmark, batch, cpus);
        let fraction = super::pcp_high::MIN_PERCPU_PAGELIST_HIGH_FRACTION;
        let high_max = super::pcp_high::zone_highsize(managed / fraction, batch, cpus);
        PerCpuPages {
            lists: Default::default(),
            count: 0,
            batch,
            high,
            high_min: high,
            high_max,
            alloc_factor: 0,
            below_high: false,
            reclaim_active: false,
            free_count: 0,
            prev_free_high: false,
            orders: PcpLists::default(),
            typed: false,
            drain_log: None,
        }
    }

    /// The lists are typed ([`PerCpuPages::typed`]).
    pub(crate) fn is_typed(&self) -> bool {
        self.typed
    }

    /// Pages on all the lists (`pcp->count`).
    #[inline(always)]
    pub(crate) fn count(&self) -> u64 {
        self.total() as u64
    }

    /// Pages on all the lists: `count` once typed, else `count` and the
    /// order-0 movable list's length.
    #[inline(always)]
    pub(super) fn total(&self) -> usize {
        if self.typed {
            self.count
        } else {
            self.count + self.lists[MigrateType::Movable as usize].len()
        }
    }

    /// Lists in use: order 0's three, or all `NR_PCP_LISTS`.
    #[inline]
    pub(super) fn nr_lists(&self) -> usize {
        match self.orders {
            PcpLists::Order0 => MIGRATE_TYPES,
            PcpLists::V6_12 => NR_PCP_LISTS,
        }
    }

    /// `count` is the pages on the lists once typed; untyped, only movable
    /// lists have pages and `count` is those above order 0
    /// (`Sim::check_invariants`).
    pub(crate) fn check(&self) -> Result<(), String> {
        let pages = |p: usize| self.lists[p].len() << pindex_to_order(p);
        let sum: usize = (0..NR_PCP_LISTS).map(pages).sum();
        let movable = self.lists[MigrateType::Movable as usize].len();
        if self.typed && sum != self.count {
            return Err(format!(
                "per-CPU count {} != {sum} pages on the lists",
                self.count
            ));
        }
        let others: usize = (0..NR_PCP_LISTS)
            .filter(|&p| !super::pcp_order::pindex_is_movable(p))
            .map(pages)
            .sum();
        if !self.typed && (others != 0 || self.count + movable != sum) {
            return Err(format!(
                "untyped per-CPU lists: {sum} pages, {others} of them not movable, \
                 {movable} order-0 movable, count {}",
                self.count
            ));
        }
        if self.orders == PcpLists::Order0 && (MIGRATE_TYPES..NR_PCP_LISTS).any(|p| pages(p) > 0) {
            return Err("order-0 per-CPU lists with a larger block on them".to_string());
        }
        Ok(())
    }

    /// The order-0 list of `mt`, head first (rule tests).
    #[cfg(test)]
    pub(crate) fn list(&self, mt: MigrateType) -> Vec<u64> {
        self.lists[mt as usize].iter().rev().copied().collect()
    }

    /// Host bytes of the lists.
    pub(super) fn heap_bytes(&self) -> usize {
        self.lists.iter().map(|l| l.capacity() * 8).sum()
    }
}

impl PhysMem {
    /// `rmqueue` for one order-0 movable page (`rmqueue_pcplist`, the path
    /// of every order-0 fault and page-cache miss) without the refill:
    /// DMA's page when the zonelist picked DMA, else the movable list's
    /// head, or None when that list is empty (the caller refills it from
    /// the buddy lists: `Sim::alloc_order0_refill`, `page_alloc/rmqueue.rs`).
    /// Larger orders: [`PhysMem::rmqueue_order`].
    #[inline(always)]
    pub(crate) fn alloc_order0_pcp(&mut self) -> Option<u64> {
        if let Some(d) = self.dma.as_mut().filter(|d| d.take_dma) {
            d.take_dma = false;
            let pfn = d.zone.alloc_pages(0, MigrateType::Movable);
            return Some(pfn.expect("Node::free promised a free page"));
        }
        // `free_count` is read only under "6.12" (never grown otherwise).
        if self.pcp.orders == PcpLists::V6_12 {
            self.pcp_alloc_v6_12(0);
        }
        self.pcp_take(MigrateType::Movable)
    }

    /// The head of `mt`'s order-0 list, taken off it and counted as
    /// allocated `mt` again for `Zone::count_block` (a page taken movable
    /// becomes an LRU page).
    #[inline(always)]
    pub(super) fn pcp_take(&mut self, mt: MigrateType) -> Option<u64> {
        let pfn = self.pcp.lists[mt as usize].pop()?;
        if self.pcp.typed {
            self.pcp.count -= 1;
            let i = self.zone.idx(pfn);
            self.zone.frames[i].set_alloc_type(mt as u8);
        }
        Some(pfn)
    }

    /// A block of `order` put on a per-CPU list: neither free (`PageBuddy`)
    /// nor movable (`PageLRU` / `__PageMovable`) for
    /// `prep_move_freepages_block()`'s count (`Zone::count_block`).
    #[inline(always)]
    pub(super) fn pcp_mark(&mut self, pfn: u64, order: usize) {
        self.set_block_alloc_type(pfn, order, MigrateType::Unmovable);
    }

    /// Every frame of the block of `order` at `pfn` counted as allocated
    /// `mt` by `Zone::count_block`: the mark of a block put on a per-CPU
    /// list ([`PhysMem::pcp_mark`], unmovable) and the unmark of one taken
    /// off it (its request's type), shared by the refill, the free and the
    /// allocation of every order.
    #[inline(always)]
    pub(super) fn set_block_alloc_type(&mut self, pfn: u64, order: usize, mt: MigrateType) {
        let i = self.zone.idx(pfn);
        for k in i..i + (1 << order) {
            self.zone.frames[k].set_alloc_type(mt as u8);
        }
    }

    /// `rmqueue_pcplist` (v6.12) of one order-0 page of `mt` from
    /// ZONE_NORMAL: `free_count` halved (under "6.12" after the
    /// `ZONE_BELOW_HIGH` test), then [`PhysMem::rmqueue_pcplist_refill`].
    pub(crate) fn rmqueue_pcplist(&mut self, mt: MigrateType) -> u64 {
        if self.pcp.orders == PcpLists::V6_12 {
            self.pcp_alloc_v6_12(0);
        }
        self.rmqueue_pcplist_refill(mt)
    }

    /// `__rmqueue_pcplist` (v6.12) of one order-0 page of `mt`: the head of
    /// `mt`'s list, which [`PhysMem::rmqueue_bulk`] refills when it is
    /// empty. When the refill finds nothing (every free page is on the
    /// other lists: `Node::free` counts them), the lists are drained and
    /// the refill tried again; the kernel, whose watermarks do not count
    /// per-CPU pages, gets there through its slow path
    /// (`__alloc_pages_direct_reclaim` → `drain_all_pages`).
    pub(crate) fn rmqueue_pcplist_refill(&mut self, mt: MigrateType) -> u64 {
        if !self.pcp.typed && mt != MigrateType::Movable {
            self.pcp_type_lists();
        }
        if let Some(pfn) = self.pcp_take(mt) {
            return pfn;
        }
        self.rmqueue_bulk(mt);
        if let Some(pfn) = self.pcp_take(mt) {
            return pfn;
        }
        self.drain_pages();
        self.rmqueue_bulk(mt);
        (self.pcp_take(mt)).expect("Node::free promised a free page")
    }

    /// `rmqueue_bulk` (v6.12) of order 0: up to `batch` pages of `mt` onto
    /// its empty list ([`PhysMem::rmqueue_bulk_order`]); under "6.12"
    /// `nr_pcp_alloc`'s count (`page_alloc/pcp_high.rs`).
    #[cold]
    #[inline(never)]
    pub(super) fn rmqueue_bulk(&mut self, mt: MigrateType) {
        let n = match self.pcp.orders {
            PcpLists::Order0 => self.pcp.batch,
            PcpLists::V6_12 => self.pcp.nr_pcp_alloc(0),
        };
        self.rmqueue_bulk_order(0, n, mt);
    }

    /// `rmqueue_bulk` (v6.12): up to `n` blocks of `order` of `mt` from the
    /// buddy lists (`__rmqueue`, one mode across the batch), each at the
    /// tail of the empty list `order_to_pindex(mt, order)`, so that the
    /// first taken is the first used.
    pub(super) fn rmqueue_bulk_order(&mut self, order: usize, n: usize, mt: MigrateType) {
        let typed = self.pcp.typed;
        let pindex = super::pcp_order::order_to_pindex(mt, order);
        debug_assert!(
            self.pcp.lists[pindex].is_empty(),
            "refilled only when empty"
        );
        let mut mode = RmqueueMode::Normal;
        for _ in 0..n {
            let Some(pfn) = self.zone.alloc_pages_mode(order, mt, &mut mode) else {
                break;
            };
            if typed {
                self.pcp_mark(pfn, order);
            }
            self.pcp.lists[pindex].push(pfn);
        }
        // Each went to the tail (the front): the first taken is at the head.
        let list = &mut self.pcp.lists[pindex];
        list.reverse();
        if typed || order > 0 {
            self.pcp.count += list.len() << order;
        }
    }

    /// `free_unref_page` / `free_unref_folios` of one order-0 page of
    /// ZONE_NORMAL (`free_unref_page_commit`, v6.12): to the head of the
    /// list of its pageblock's type (`get_pfnblock_migratetype`); when the
    /// shared count reaches `high`, `batch` pages go back to the buddy
    /// lists, that list's first. Under "6.12" the auto-tuned
    /// `free_unref_page_commit` of `page_alloc/pcp_high.rs` instead.
    /// Untyped ([`PerCpuPages::typed`]), the push to the movable list and
    /// the count against `high`, as the single list's free was.
    #[inline(always)]
    pub(crate) fn free_order0(&mut self, pfn: u64) {
        // "6.12": the auto-tuned free (`free_count`, `alloc_factor`,
        // `nr_pcp_high`), out of line; the default lists keep `high` and
        // `batch` fixed and need none of it.
        if self.pcp.orders == PcpLists::V6_12 {
            self.free_unref_page_commit(pfn, 0);
            return;
        }
        if !self.pcp.typed {
            let list = &mut self.pcp.lists[MigrateType::Movable as usize];
            list.push(pfn);
            if list.len() + self.pcp.count >= self.pcp.high {
                self.free_pcppages_bulk(self.pcp.batch, MigrateType::Movable as usize);
            }
            return;
        }
        self.free_order0_typed(pfn);
    }

    /// [`PhysMem::free_order0`] of typed lists: to the list of the page's
    /// pageblock type, marked for `Zone::count_block`, counted.
    #[inline(always)]
    fn free_order0_typed(&mut self, pfn: u64) {
        self.pcp_mark(pfn, 0);
        let pindex = self.zone.pageblock_type(pfn) as usize;
        self.pcp.lists[pindex].push(pfn);
        self.pcp.count += 1;
        if self.pcp.count >= self.pcp.high {
            self.free_pcppages_bulk(self.pcp.batch, pindex);
        }
    }

    /// The first non-movable request types the lists
    /// ([`PerCpuPages::typed`]): the pages already on them are marked as
    /// neither free nor movable for `Zone::count_block`, as every page put
    /// on a list from now on is.
    #[cold]
    #[inline(never)]
    pub(crate) fn pcp_type_lists(&mut self) {
        self.pcp.count = self.pcp.total();
        self.pcp.typed = true;
        for p in 0..NR_PCP_LISTS {
            for k in 0..self.pcp.lists[p].len() {
                let pfn = self.pcp.lists[p][k];
                self.pcp_mark(pfn, pindex_to_order(p));
            }
        }
    }

    /// `free_pcppages_bulk` (v6.12): up to `count` pages back to the buddy
    /// lists (`__free_one_page` with each block's pageblock type), from the
    /// tail of list `pindex` first, then round the lists in index order,
    /// each emptied (or `count` reached) before the next; `count` falls by
    /// each block's pages.
    #[cold]
    #[inline(never)]
    pub(super) fn free_pcppages_bulk(&mut self, count: usize, pindex: usize) {
        let mut count = count.min(self.pcp.total()) as isize;
        let n = self.pcp.nr_lists();
        let mut p = pindex + n - 1;
        while count > 0 {
            p = (p + 1) % n;
            while self.pcp.lists[p].is_empty() {
                p = (p + 1) % n;
            }
            let order = pindex_to_order(p);
            let len = self.pcp.lists[p].len();
            let k = (count as usize).div_ceil(1 << order).min(len);
            count -= (k << order) as isize;
            if self.pcp.typed || order > 0 {
                self.pcp.count -= k << order;
            }
            for pfn in self.pcp.lists[p].drain(..k) {
                // `trace_mm_page_pcpu_drain(page, order, mt)` after the free,
                // `mt` the pageblock's type read before it.
                if let Some(log) = self.pcp.drain_log.as_mut() {
                    log.push((pfn, order as u8, self.zone.pageblock_type(pfn) as u8));
                }
                self.zone.free_pages_block(pfn, order);
            }
        }
    }

    /// `drain_pages_zone` (v6.12): every page of the lists back to the
    /// buddy lists, `free_pcppages_bulk` from list 0 a
    /// `batch << CONFIG_PCP_BATCH_SCALE_MAX` at a time: the unmovable list,
    /// then the movable, then the reclaimable, each oldest first, then the
    /// larger orders'.
    pub(crate) fn drain_pages(&mut self) {
        loop {
            let count = self.pcp.total();
            if count == 0 {
                return;
            }
            self.free_pcppages_bulk(count.min(self.pcp.batch << PCP_BATCH_SCALE_MAX), 0);
        }
    }
}
