//! The per-CPU page lists (`struct per_cpu_pages`, include/linux/mmzone.h
//! and mm/page_alloc.c, v6.12) of the one CPU that allocates: one order-0
//! list per migrate type of the buddy lists (`MIGRATE_PCPTYPES`:
//! unmovable, movable, reclaimable; `order_to_pindex(mt, 0)` is `mt`, so a
//! list's index here is the kernel's `pindex`), one `count` over all of
//! them, one `high` and one `batch`.
//!
//! - Allocation (`rmqueue_pcplist` → `__rmqueue_pcplist`): the head of the
//!   list of the request's type; an empty list is refilled with `batch`
//!   pages of that type by one `rmqueue_bulk` (one `__rmqueue` per page,
//!   `enum rmqueue_mode` kept across the batch under `rmqueue_fallback =
//!   "6.15"`), each added at the tail. Order-0 folios take the movable list
//!   ([`PhysMem::alloc_order0_pcp`]), page-table pages
//!   (`machine.pagetable_frames`, `crate::kmem`) the unmovable one
//!   ([`PhysMem::rmqueue_pcplist`]).
//! - Free (`free_unref_page` / `free_unref_folios` →
//!   `free_unref_page_commit`): to the head of the list of the freed page's
//!   pageblock type (`get_pfnblock_migratetype`), whatever type the page
//!   was allocated as; when `count` reaches `high`, `free_pcppages_bulk`
//!   returns `batch` pages starting with the list just freed to and going
//!   round the lists in index order, each list emptied from its tail before
//!   the next.
//! - `drain_pages_zone`: `free_pcppages_bulk` from index 0 until `count` is
//!   0, `batch << CONFIG_PCP_BATCH_SCALE_MAX` (5) pages a call.
//!
//! Not modelled: the lists of orders 1–3 and of THP (`NR_PCP_LISTS`; larger
//! orders go to the zone directly), MIGRATE_ISOLATE (v6.12 frees an
//! isolated pageblock's page straight to the buddy lists) and
//! MIGRATE_HIGHATOMIC / CMA (freed to the movable list): no pageblock here
//! has those types. Without unmovable or reclaimable pageblocks (no
//! `pagetable_frames`) every page is freed to the movable list and the
//! round robin starts and ends there: the single list of before.

use super::{MigrateType, PhysMem, RmqueueMode, MIGRATE_TYPES};

/// `CONFIG_PCP_BATCH_SCALE_MAX` (mm/Kconfig, v6.12 default 5).
const PCP_BATCH_SCALE_MAX: u32 = 5;

/// The per-CPU page lists of order 0 (`struct per_cpu_pages`, v6.12): see
/// the module. `high` is `zone_highsize` without auto-tuning: the low
/// watermark over the node's CPUs, at least `4 × batch`; v6.12's adaptive
/// `high` (`nr_pcp_high`, `decay_pcp_high`), `nr_pcp_free`'s growing free
/// count and `nr_pcp_alloc`'s growing refill (`alloc_factor`) are not
/// modelled: a refill takes `batch` pages and a drain at `high` returns
/// `batch`. Pages on the lists are free for `Node::free` but not in the
/// zone's free count, as in the kernel (`NR_FREE_PAGES`).
#[derive(Debug, Clone)]
pub(crate) struct PerCpuPages {
    /// `pcp->lists[order_to_pindex(mt, 0)]`, indexed by `mt`; each head
    /// at the back: a plain vector, since the per-page operations (free and
    /// allocate) are at the head; the tail is touched only a batch at a
    /// time, by the refill of an empty list and the drains.
    lists: [Vec<u64>; MIGRATE_TYPES],
    /// `pcp->count` once the lists are typed: the pages on all the lists,
    /// kept on every push, pop, refill and drain so that a free compares it
    /// with `high` without summing the lists ([`PerCpuPages::check`] checks
    /// the sum). Untyped, only the movable list has pages and its length is
    /// the count ([`PerCpuPages::total`]): this field is 0 and not kept, so
    /// an order-0 free or allocation is the single list's push or pop.
    count: usize,
    /// `pcp->batch` (`zone_batchsize`).
    pub batch: usize,
    /// `pcp->high` (`zone_highsize`).
    pub high: usize,
    /// The lists are typed: set by the first non-movable request
    /// ([`PhysMem::pcp_type_lists`]). Until then every pageblock is
    /// MOVABLE (only a non-movable allocation's fallback can claim a block
    /// for another type; this holds because every request of order > 0,
    /// `rmqueue_large`, is movable: a non-movable one would have to type
    /// the lists first), so every free goes to the movable list and no
    /// claim reads `alloc_type`: the pageblock lookup and the marks of
    /// `Zone::count_block`'s view are skipped, with the same results, and
    /// the order-0 path costs what the single list did.
    typed: bool,
}

impl PerCpuPages {
    /// `zone_batchsize` and `zone_highsize` (v6.12, `percpu_pagelist_high_fraction` 0).
    pub(crate) fn new(managed: u64, low_wmark: u64, cpus: u32) -> Self {
        let batch = ((managed >> 10).min((1 << 20) / 4096) / 4).max(1);
        // rounddown_pow_of_two(batch + batch / 2) - 1, at least 1 (pageset_update).
        let x = batch + batch / 2;
        let batch = (((1u64 << (63 - x.leading_zeros())) - 1) as usize).max(1);
        let high = ((low_wmark / u64::from(cpus.max(1))) as usize).max(batch << 2);
        PerCpuPages {
            lists: Default::default(),
            count: 0,
            batch,
            high,
            typed: false,
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

    /// Pages on all the lists: `count` once typed, else the movable list's
    /// length (the only list with pages then).
    #[inline(always)]
    fn total(&self) -> usize {
        if self.typed {
            self.count
        } else {
            self.lists[MigrateType::Movable as usize].len()
        }
    }

    /// `count` is the sum of the lists' lengths once typed; untyped, only
    /// the movable list has pages and `count` is 0 (`Sim::check_invariants`).
    pub(crate) fn check(&self) -> Result<(), String> {
        let sum: usize = self.lists.iter().map(Vec::len).sum();
        let movable = self.lists[MigrateType::Movable as usize].len();
        if self.typed && sum != self.count {
            return Err(format!(
                "per-CPU count {} != {sum} on the lists",
                self.count
            ));
        }
        if !self.typed && (sum != movable || self.count != 0) {
            return Err(format!(
                "untyped per-CPU lists: {sum} pages, {movable} of them movable, count {}",
                self.count
            ));
        }
        Ok(())
    }

    /// The list of `mt`, head first (rule tests).
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
    /// Larger orders are taken from the zone directly (`Sim::rmqueue_large`).
    #[inline(always)]
    pub(crate) fn alloc_order0_pcp(&mut self) -> Option<u64> {
        if let Some(d) = self.dma.as_mut().filter(|d| d.take_dma) {
            d.take_dma = false;
            let pfn = d.zone.alloc_pages(0, MigrateType::Movable);
            return Some(pfn.expect("Node::free promised a free page"));
        }
        self.pcp_take(MigrateType::Movable)
    }

    /// The head of `mt`'s list, taken off it and counted as allocated `mt`
    /// again for `Zone::count_block` (a page taken movable
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

    /// A page put on a per-CPU list: neither free (`PageBuddy`) nor
    /// movable (`PageLRU` / `__PageMovable`) for
    /// `prep_move_freepages_block()`'s count (`Zone::count_block`).
    #[inline(always)]
    fn pcp_mark(&mut self, pfn: u64) {
        let i = self.zone.idx(pfn);
        self.zone.frames[i].set_alloc_type(MigrateType::Unmovable as u8);
    }

    /// `__rmqueue_pcplist` (v6.12) of one order-0 page of `mt` from
    /// ZONE_NORMAL: the head of `mt`'s list, which [`PhysMem::rmqueue_bulk`]
    /// refills when it is empty. When the refill finds nothing (every free
    /// page is on the other lists: `Node::free` counts them), the lists are
    /// drained and the refill tried again; the kernel, whose watermarks do
    /// not count per-CPU pages, gets there through its slow path
    /// (`__alloc_pages_direct_reclaim` → `drain_all_pages`).
    pub(crate) fn rmqueue_pcplist(&mut self, mt: MigrateType) -> u64 {
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

    /// `rmqueue_bulk` (v6.12): up to `batch` order-0 pages of `mt` from the
    /// buddy lists (`__rmqueue`, one mode across the batch), each at the
    /// tail of `mt`'s list, so that the first taken is the first used.
    #[cold]
    #[inline(never)]
    pub(super) fn rmqueue_bulk(&mut self, mt: MigrateType) {
        let (batch, typed) = (self.pcp.batch, self.pcp.typed);
        let list = &mut self.pcp.lists[mt as usize];
        debug_assert!(list.is_empty(), "refilled only when empty");
        let mut mode = RmqueueMode::Normal;
        for _ in 0..batch {
            match self.zone.alloc_pages_mode(0, mt, &mut mode) {
                Some(pfn) => {
                    if typed {
                        let i = self.zone.idx(pfn);
                        self.zone.frames[i].set_alloc_type(MigrateType::Unmovable as u8);
                    }
                    list.push(pfn);
                }
                None => break,
            }
        }
        // Each went to the tail (the front): the first taken is at the head.
        list.reverse();
        if typed {
            self.pcp.count += list.len();
        }
    }

    /// `free_unref_page` / `free_unref_folios` of one order-0 page of
    /// ZONE_NORMAL (`free_unref_page_commit`, v6.12): to the head of the
    /// list of its pageblock's type (`get_pfnblock_migratetype`); when the
    /// shared count reaches `high`, `batch` pages go back to the buddy
    /// lists, that list's first.
    /// Untyped ([`PerCpuPages::typed`]), the push to the movable list and
    /// its length against `high`, as the single list's free was.
    #[inline(always)]
    pub(crate) fn free_order0(&mut self, pfn: u64) {
        if !self.pcp.typed {
            let list = &mut self.pcp.lists[MigrateType::Movable as usize];
            list.push(pfn);
            if list.len() >= self.pcp.high {
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
        self.pcp_mark(pfn);
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
        for mt in 0..MIGRATE_TYPES {
            for k in 0..self.pcp.lists[mt].len() {
                let pfn = self.pcp.lists[mt][k];
                self.pcp_mark(pfn);
            }
        }
    }

    /// `free_pcppages_bulk` (v6.12): up to `count` pages back to the buddy
    /// lists (`__free_one_page` with each page's pageblock type), from the
    /// tail of list `pindex` first, then round the lists in index order,
    /// each emptied (or `count` reached) before the next.
    #[cold]
    #[inline(never)]
    fn free_pcppages_bulk(&mut self, count: usize, pindex: usize) {
        let mut count = count.min(self.pcp.total());
        if self.pcp.typed {
            self.pcp.count -= count;
        }
        let mut p = pindex + MIGRATE_TYPES - 1;
        while count > 0 {
            p = (p + 1) % MIGRATE_TYPES;
            while self.pcp.lists[p].is_empty() {
                p = (p + 1) % MIGRATE_TYPES;
            }
            let n = count.min(self.pcp.lists[p].len());
            for pfn in self.pcp.lists[p].drain(..n) {
                self.zone.free_pages_block(pfn, 0);
            }
            count -= n;
        }
    }

    /// `drain_pages_zone` (v6.12): every page of the lists back to the
    /// buddy lists, `free_pcppages_bulk` from list 0 a
    /// `batch << CONFIG_PCP_BATCH_SCALE_MAX` at a time: the unmovable list,
    /// then the movable, then the reclaimable, each oldest first.
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
