//! The page allocator's own `kmem:` tracepoints (include/trace/events/kmem.h,
//! v6.12): `mm_page_alloc`, `mm_page_free` and `mm_page_pcpu_drain`, with
//! the kernel's `TP_printk` formats:
//!
//! - `mm_page_alloc`: `page=%p pfn=0x%lx order=%d migratetype=%d
//!   gfp_flags=%s`, emitted at the end of `__alloc_pages_noprof()`
//!   (mm/page_alloc.c) for every call, successful or not: a failed one has
//!   `pfn = -1UL` and prints `page=` NULL and `pfn=0x0`. `migratetype` is
//!   `ac.migratetype`, `gfp_migratetype(gfp)` (`MIGRATE_MOVABLE` 1 for
//!   `__GFP_MOVABLE`, `MIGRATE_RECLAIMABLE` 2 for `__GFP_RECLAIMABLE`, else
//!   `MIGRATE_UNMOVABLE` 0); `gfp_flags` the allocation's mask
//!   (`alloc_gfp`), printed by `show_gfp_flags` (`crate::gfp::ShowGfp`).
//! - `mm_page_free`: `page=%p pfn=0x%lx order=%d`, emitted by
//!   `free_pages_prepare()` for every block freed (`free_unref_page`,
//!   `free_unref_folios`, `__free_pages_ok`), before the block reaches a
//!   per-CPU list or the buddy lists. v6.12 has no `percpu_refill` field
//!   here (that is `mm_page_alloc_zone_locked`'s).
//! - `mm_page_pcpu_drain`: `page=%p pfn=0x%lx order=%d migratetype=%d`,
//!   emitted by `free_pcppages_bulk()` after each block's `__free_one_page`,
//!   `mt` being `get_pfnblock_migratetype()` read before the free (since
//!   "mm: page_alloc: remove pcppage migratetype caching", v6.8).
//!
//! `page=%p` prints the `struct page`'s `vmemmap` address, as the other
//! page tracepoints here do (`0xffffea0000000000 + pfn * 64`), and a NULL
//! page as glibc's `%p` prints it for `perf script`: `(nil)`.
//!
//! Where mmsim emits them (`Sim::trace_page_alloc`, `Sim::free_frames_tp`,
//! `Sim::trace_pcpu_drain_flush`): every `Sim::tp` test is on a path that
//! already allocates or frees a page frame, one load and branch, and the
//! per-CPU drain is logged by `PhysMem::free_pcppages_bulk` (cold) only
//! while `mm_page_pcpu_drain` is selected (`PerCpuPages::drain_log`).
//!
//! - order-0 folios (`Sim::charge_new_folio`: faults, page-cache misses,
//!   readahead, copies, swap-in) with their site's mask; a failed
//!   `Sim::alloc_folio` (no page even after reclaim and the OOM killer, or
//!   `__GFP_NORETRY` giving up) emits the NULL line;
//! - large folios (`Sim::rmqueue_large`: THP and mTHP faults, khugepaged,
//!   large page-cache folios) with the `ThpGfp` mask, NULL when it fails;
//! - page-table pages (`machine.pagetable_frames`: `GFP_PGTABLE_USER |
//!   __GFP_COMP`, unmovable) and slab pages (`machine.slab_frames`: each
//!   `alloc_slab_page` attempt, the first at the cache's order, the
//!   fallback at its minimum order, NULL when an attempt fails).
//! - frees: reclaimed and unmapped folios (`Sim::free_folio_inline`), kernel
//!   frames (`Sim::free_kernel_frames`: page tables, slabs, kernel stacks),
//!   and a large folio whose charge failed.
//!
//! Departures: mmsim charges an order-0 folio before it takes its frame,
//! so a failed charge frees no frame and emits neither the kernel's
//! `mm_page_alloc` nor its `mm_page_free`, and memcg reclaim's events come
//! before the folio's `mm_page_alloc` (the kernel allocates first, then
//! `mem_cgroup_charge`s). Kernel stacks (vmalloc's `alloc_pages_bulk`,
//! which emits no `mm_page_alloc`) and migration targets (compaction's
//! free scanner isolates free pages: no allocation) emit nothing, as in the
//! kernel. A drain outside a free or an allocation (compaction's
//! `drain_all_pages`, v6.12's `decay_pcp_high` timer) is emitted at the
//! next event, or at the run's end, with that time.

use std::fmt;

use super::TpEvent;
use crate::gfp::{Gfp, ShowGfp};
use crate::sim::Sim;

/// The events of this module, in bit order (after the 30 earlier events of
/// `super::EVENTS`).
pub(super) const NAMES: [&str; 3] = ["mm_page_alloc", "mm_page_free", "mm_page_pcpu_drain"];

/// `pfn_to_page(pfn)` as the tracepoints print it.
fn page_ptr(pfn: u64) -> u64 {
    0xffff_ea00_0000_0000u64 + pfn * 64
}

/// `gfp_migratetype(gfp)` (include/linux/gfp.h, v6.12): bits 3 and 4
/// (`__GFP_MOVABLE`, `__GFP_RECLAIMABLE`) shifted down.
pub(crate) fn gfp_migratetype(gfp: Gfp) -> u8 {
    ((gfp & (crate::gfp::__GFP_MOVABLE | crate::gfp::__GFP_RECLAIMABLE)) >> 3) as u8
}

/// `mm_page_alloc`'s `TP_printk`; `pfn` None: a failed allocation.
pub(super) fn alloc(
    f: &mut fmt::Formatter<'_>,
    pfn: Option<u64>,
    order: u8,
    migratetype: u8,
    gfp: Gfp,
) -> fmt::Result {
    match pfn {
        Some(p) => write!(f, "page={:#018x} pfn={p:#x}", page_ptr(p))?,
        None => write!(f, "page=(nil) pfn=0x0")?,
    }
    write!(
        f,
        " order={order} migratetype={migratetype} gfp_flags={}",
        ShowGfp(gfp)
    )
}

/// `mm_page_free`'s `TP_printk`.
pub(super) fn free(f: &mut fmt::Formatter<'_>, pfn: u64, order: u8) -> fmt::Result {
    write!(f, "page={:#018x} pfn={pfn:#x} order={order}", page_ptr(pfn))
}

/// `mm_page_pcpu_drain`'s `TP_printk`.
pub(super) fn drain(f: &mut fmt::Formatter<'_>, pfn: u64, order: u8, mt: u8) -> fmt::Result {
    write!(
        f,
        "page={:#018x} pfn={pfn:#x} order={order} migratetype={mt}",
        page_ptr(pfn)
    )
}

impl Sim {
    /// Turns on the per-CPU drain log when `kmem:mm_page_pcpu_drain` is
    /// selected (at boot, after the tracer is made).
    pub(crate) fn setup_trace_pcpu_drain(&mut self) {
        let e = TpEvent::PcpuDrain {
            pfn: 0,
            order: 0,
            migratetype: 0,
        };
        let on = self.tp.as_ref().is_some_and(|t| t.selects(&e));
        self.phys.pcp.drain_log = on.then(Vec::new);
    }

    /// `trace_mm_page_alloc(page, order, alloc_gfp, ac.migratetype)` at the
    /// end of `__alloc_pages_noprof`: the drains the allocation made first,
    /// then the event, now, by the running task. Callers test `self.tp`.
    #[cold]
    #[inline(never)]
    pub(crate) fn trace_page_alloc(&mut self, pfn: Option<u64>, order: u8, gfp: Gfp) {
        let t = self.now();
        self.trace_pcpu_drain_flush(t);
        let e = TpEvent::PageAlloc {
            pfn,
            order,
            migratetype: gfp_migratetype(gfp),
            gfp_flags: gfp,
        };
        self.trace_event(t, self.tp_task, super::TpScope::default(), e);
    }

    /// `pfn`, the result of an allocation of `order` with mask `gfp`, after
    /// its `mm_page_alloc` (None: the NULL line) when the tracepoints are on.
    #[inline(always)]
    pub(crate) fn traced_alloc(&mut self, pfn: Option<u64>, order: u8, gfp: Gfp) -> Option<u64> {
        if self.tp.is_some() {
            self.trace_page_alloc(pfn, order, gfp);
        }
        pfn
    }

    /// A failed allocation of `order` with mask `gfp`: its `mm_page_alloc`
    /// (page NULL) when the tracepoints are on, and None.
    #[inline]
    pub(crate) fn alloc_failed<T>(&mut self, order: u8, gfp: Gfp) -> Option<T> {
        self.traced_alloc(None, order, gfp);
        None
    }

    /// [`Sim::alloc_order0_folio`] of an allocation with mask `gfp`: its
    /// `mm_page_alloc` when the tracepoints are on (the one test the
    /// per-fault path adds).
    #[inline(always)]
    pub(crate) fn alloc_order0_folio_gfp(
        &mut self,
        sp: u32,
        i: u32,
        fl: u16,
        gfp: Gfp,
    ) -> crate::mem::folio::FolioId {
        let f = self.alloc_order0_folio(sp, i, fl);
        if self.tp.is_some() {
            let pfn = u64::from(self.folios.head_pfn(f));
            self.trace_page_alloc(Some(pfn), 0, gfp);
        }
        f
    }

    /// Frees the `1 << order` frames at `pfn` ([`crate::page_alloc::PhysMem::free_frames`])
    /// with the tracepoints on: `mm_page_free` (`free_pages_prepare`) first,
    /// then the drains the free caused (`free_pcppages_bulk`).
    #[cold]
    #[inline(never)]
    pub(crate) fn free_frames_tp(&mut self, pfn: u32, order: usize) {
        if pfn != crate::mem::folio::NO_PFN {
            self.trace_page_free(u64::from(pfn), order);
        }
        self.phys.free_frames(pfn, order);
        let t = self.now();
        self.trace_pcpu_drain_flush(t);
    }

    /// `trace_mm_page_free(page, order)` (`free_pages_prepare`), now, by the
    /// running task. Callers test `self.tp`.
    #[cold]
    #[inline(never)]
    pub(crate) fn trace_page_free(&mut self, pfn: u64, order: usize) {
        let t = self.now();
        let e = TpEvent::PageFree {
            pfn,
            order: order as u8,
        };
        self.trace_event(t, self.tp_task, super::TpScope::default(), e);
    }

    /// [`crate::page_alloc::PhysMem::free_frames`], traced when the tracepoints are on.
    #[inline(always)]
    pub(crate) fn free_frames(&mut self, pfn: u32, order: usize) {
        if self.tp.is_some() {
            self.free_frames_tp(pfn, order);
        } else {
            self.phys.free_frames(pfn, order);
        }
    }

    /// Emits the logged `mm_page_pcpu_drain` events at `t`.
    pub(crate) fn trace_pcpu_drain_flush(&mut self, t: u64) {
        let Some(mut log) = self
            .phys
            .pcp
            .drain_log
            .as_mut()
            .filter(|l| !l.is_empty())
            .map(std::mem::take)
        else {
            return;
        };
        for (pfn, order, mt) in log.drain(..) {
            let e = TpEvent::PcpuDrain {
                pfn,
                order,
                migratetype: mt,
            };
            self.trace_event_now(t, self.tp_task, super::TpScope::default(), e);
        }
        // Give the buffer back, so a run allocates it once.
        if let Some(l) = self.phys.pcp.drain_log.as_mut() {
            if l.is_empty() {
                *l = log;
            }
        }
    }
}
