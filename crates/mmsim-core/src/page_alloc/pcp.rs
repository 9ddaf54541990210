//! The per-CPU page list (`struct per_cpu_pages`, mm/page_alloc.c v6.12):
//! `rmqueue_pcplist`'s take from it, `rmqueue_bulk`'s refill,
//! `free_unref_page_commit`'s free to it, `free_pcppages_bulk` and
//! `drain_pages_zone`.

use super::{MigrateType, PhysMem, RmqueueMode};

/// The per-CPU page list of order-0 movable pages (`struct per_cpu_pages`,
/// mm/page_alloc.c v6.12) of the one CPU that allocates: frees go to its
/// head (`free_unref_page_commit`) and allocations take its head
/// (`__rmqueue_pcplist`); an empty list is refilled with `batch` pages
/// (`rmqueue_bulk`, each added at the tail) and a list at `high` gives
/// `batch` pages from its tail back to the buddy lists
/// (`free_pcppages_bulk`). `high` is `zone_highsize` without auto-tuning:
/// the low watermark over the node's CPUs, at least `4 × batch`; v6.12's
/// adaptive `high` (`decay_pcp_high`, `nr_pcp_free`'s growing free count)
/// is not modelled. Pages on the list are free for `Node::free` but not in
/// the zone's free count, as in the kernel (`NR_FREE_PAGES`).
#[derive(Debug, Clone)]
pub(crate) struct PerCpuPages {
    /// The list, head at the back: a plain vector, since the per-page
    /// operations (free and allocate) are at the head; the tail is touched
    /// only a batch at a time, by the refill of an empty list and the
    /// drain at `high`.
    pub(super) list: Vec<u64>,
    /// `pcp->batch` (`zone_batchsize`).
    pub batch: usize,
    /// `pcp->high` (`zone_highsize`).
    pub high: usize,
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
            list: Vec::new(),
            batch,
            high,
        }
    }

    /// Pages on the list (`pcp->count`).
    pub(crate) fn count(&self) -> u64 {
        self.list.len() as u64
    }
}

impl PhysMem {
    /// `rmqueue` for one order-0 page (`rmqueue_pcplist`, the path of
    /// every order-0 fault and page-cache miss) without the refill: DMA's
    /// page when the zonelist picked DMA, else the per-CPU list's head, or
    /// None when the list is empty (the caller refills it from the buddy
    /// lists: `Sim::alloc_order0_refill`, `page_alloc/rmqueue.rs`). Larger
    /// orders are taken from the zone directly (`Sim::rmqueue_large`).
    #[inline(always)]
    pub(crate) fn alloc_order0_pcp(&mut self) -> Option<u64> {
        if let Some(d) = self.dma.as_mut().filter(|d| d.take_dma) {
            d.take_dma = false;
            let pfn = d.zone.alloc_pages(0, MigrateType::Movable);
            return Some(pfn.expect("Node::free promised a free page"));
        }
        self.pcp.list.pop()
    }

    /// `rmqueue_bulk`: up to `batch` pages from the buddy lists, each at the
    /// tail, so that the first taken is the first used.
    #[cold]
    #[inline(never)]
    pub(super) fn rmqueue_bulk(&mut self) {
        debug_assert!(self.pcp.list.is_empty(), "refilled only when empty");
        let mut mode = RmqueueMode::Normal;
        for _ in 0..self.pcp.batch {
            match self
                .zone
                .alloc_pages_mode(0, MigrateType::Movable, &mut mode)
            {
                Some(pfn) => self.pcp.list.push(pfn),
                None => break,
            }
        }
        // Each went to the tail (the front): the first taken is at the head.
        self.pcp.list.reverse();
    }

    /// `free_unref_folios` of one order-0 page (`free_unref_page_commit`):
    /// to the per-CPU list's head, `batch` pages drained from its tail at
    /// `high`.
    #[inline(always)]
    pub(super) fn free_order0(&mut self, pfn: u64) {
        self.pcp.list.push(pfn);
        if self.pcp.list.len() >= self.pcp.high {
            self.free_pcppages_bulk();
        }
    }

    /// `free_pcppages_bulk`: `batch` pages from the per-CPU list's tail back
    /// to the buddy lists.
    #[cold]
    #[inline(never)]
    fn free_pcppages_bulk(&mut self) {
        let n = self.pcp.batch.min(self.pcp.list.len());
        for p in self.pcp.list.drain(..n) {
            self.zone.free_pages_block(p, 0);
        }
    }

    /// `drain_pages_zone` (mm/page_alloc.c, v6.12): every page of the
    /// per-CPU list back to the buddy lists, oldest first.
    pub(crate) fn drain_pages(&mut self) {
        for p in self.pcp.list.drain(..) {
            self.zone.free_pages_block(p, 0);
        }
    }
}
