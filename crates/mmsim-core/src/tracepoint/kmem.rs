//! The kernel's `kmem:mm_page_alloc_extfrag` tracepoint (include/trace/events/kmem.h,
//! v6.12; unchanged since "mm, page_alloc: fix the trace event for change_ownership",
//! v4.0, and the `pfn=0x%lx` format of v5.x): one event each time the buddy
//! allocator serves an allocation from another migrate type's free lists.
//!
//! Emitted (mm/page_alloc.c) where the kernel emits it:
//!
//! - `rmqueue_fallback = "6.12"` (v6.12.0): `__rmqueue_fallback()` after
//!   `steal_suitable_fallback()`, at every fallback, whether it claimed the
//!   pageblock or took one block, and also for a fallback of `pageblock_order`
//!   or more (taken whole, `fragmenting=0`).
//! - `"6.15"` (v6.15, 6.12.29+): `__rmqueue_claim()` when `try_to_steal_block()`
//!   (`try_to_claim_block()`) returned a page, and `__rmqueue_steal()` at every
//!   single-block steal; a claim attempt that fails emits nothing.
//!
//! Fields (`TP_STRUCT__entry`): `pfn`, `alloc_order`, `fallback_order`,
//! `alloc_migratetype`, `fallback_migratetype`, `change_ownership`, the last taken
//! at the trace point as `alloc_migratetype == get_pageblock_migratetype(page)`
//! (the page's pageblock now belongs to the allocation's type: claimed).
//! `TP_printk` adds `pageblock_order` (9) and `fragmenting` (`fallback_order <
//! pageblock_order`); `page=%p` prints the page's `vmemmap` address as
//! `mm_vmscan_write_folio` does (`0xffffea0000000000 + pfn * 64`). Migrate types
//! print as numbers (`MIGRATE_UNMOVABLE` 0, `MIGRATE_MOVABLE` 1,
//! `MIGRATE_RECLAIMABLE` 2).
//!
//! The zone (`crate::page_alloc::Zone`) has no clock: it keeps the events of the
//! allocation in progress (only while this tracepoint is selected,
//! `Zone::extfrag`), and the allocation's end (`Sim::rmqueue_boosted`, or
//! `Sim::trace_extfrag_flush` after a large block) emits them at the
//! allocation's time, by the allocating task (kswapd, kcompactd or a workload task).
//! Departure: a movable order-0 page that the zonelist took from ZONE_DMA
//! (`machine.dma_zone_pages`) and that fell back there is emitted at the next
//! allocation's end instead (no test on the per-fault path).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{TpEvent, TpScope};
use crate::page_alloc::PAGEBLOCK_ORDER;
use crate::sim::Sim;

/// The `kmem:` events' names, in bit order (after the 28 earlier events).
pub(super) const NAMES: [&str; 1] = ["mm_page_alloc_extfrag"];

/// `mm_page_alloc_extfrag`'s fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtfragEvent {
    /// `pfn`: the first page handed to the allocation.
    pub pfn: u64,
    /// `alloc_order`: the request's order.
    pub alloc_order: u8,
    /// `fallback_order`: the order of the free block taken from the other type.
    pub fallback_order: u8,
    /// `alloc_migratetype`.
    pub alloc_migratetype: u8,
    /// `fallback_migratetype`: the type whose lists the block came from.
    pub fallback_migratetype: u8,
    /// `change_ownership`: the page's pageblock is now the allocation's type.
    pub change_ownership: bool,
}

impl fmt::Display for ExtfragEvent {
    /// `TP_printk("page=%p pfn=0x%lx alloc_order=%d fallback_order=%d
    /// pageblock_order=%d alloc_migratetype=%d fallback_migratetype=%d
    /// fragmenting=%d change_ownership=%d")`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "page={:#018x} pfn={:#x} alloc_order={} fallback_order={} pageblock_order={} \
             alloc_migratetype={} fallback_migratetype={} fragmenting={} change_ownership={}",
            0xffff_ea00_0000_0000u64 + self.pfn * 64,
            self.pfn,
            self.alloc_order,
            self.fallback_order,
            PAGEBLOCK_ORDER,
            self.alloc_migratetype,
            self.fallback_migratetype,
            u8::from(usize::from(self.fallback_order) < PAGEBLOCK_ORDER),
            u8::from(self.change_ownership)
        )
    }
}

impl Sim {
    /// Turns on the zones' extfrag logs when `kmem:mm_page_alloc_extfrag` is selected
    /// (at boot, after the tracer is made).
    pub(crate) fn setup_trace_extfrag(&mut self) {
        let on = self
            .tp
            .as_ref()
            .is_some_and(|t| t.selects(&TpEvent::Extfrag(ExtfragEvent::default_for_bit())));
        self.phys.zone.extfrag = on.then(Vec::new);
        if let Some(d) = self.phys.dma.as_mut() {
            d.zone.extfrag = on.then(Vec::new);
        }
    }

    /// Emits the extfrag events the zones logged during the allocation that just
    /// ended, now, by the running task.
    #[cold]
    #[inline(never)]
    pub(crate) fn trace_extfrag_flush(&mut self) {
        let mut events = self.phys.zone.extfrag.as_mut().map(std::mem::take);
        if let Some(d) = self.phys.dma.as_mut().and_then(|d| d.zone.extfrag.as_mut()) {
            let dma = std::mem::take(d);
            events.get_or_insert_with(Vec::new).extend(dma);
        }
        let Some(mut events) = events.filter(|e| !e.is_empty()) else {
            return;
        };
        let t = self.now();
        for e in events.drain(..) {
            self.trace_event(t, self.tp_task, TpScope::default(), TpEvent::Extfrag(e));
        }
        // Give the buffer back, so a run allocates it once.
        if let Some(z) = self.phys.zone.extfrag.as_mut() {
            if z.is_empty() {
                *z = events;
            }
        }
    }
}

impl ExtfragEvent {
    /// Any event (for the mask test).
    fn default_for_bit() -> ExtfragEvent {
        ExtfragEvent {
            pfn: 0,
            alloc_order: 0,
            fallback_order: 0,
            alloc_migratetype: 0,
            fallback_migratetype: 0,
            change_ownership: false,
        }
    }
}
