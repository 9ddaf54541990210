//! Direct reclaim's entry and its zonelist pass (mm/vmscan.c, v6.12):
//! `try_to_free_pages` and `shrink_zones` with `compaction_ready`.
//!
//! Split out of `vmscan.rs` (its priority loop, `do_try_to_free_pages`,
//! stays there) only to keep files short. A costly allocation's direct
//! reclaim with `compaction.compaction_ready` walks the zonelist as v6.12
//! `shrink_zones` does on every pass of the priority loop: a zone that is
//! `compaction_ready` is skipped and sets `sc->compaction_ready`, the node
//! is shrunk once for the first zone that is not, and
//! `do_try_to_free_pages` stops after a pass that set the flag (`if
//! (sc->compaction_ready) break;`) and does not retry. With one zone that
//! is the one zone's check before each pass: ready before the first, the
//! node is not shrunk (the stall is still counted and the refaults
//! snapshot taken); made ready by a pass that reclaimed fewer than
//! `SWAP_CLUSTER_MAX` pages, no lower priority follows. Two zones
//! (`machine.dma_zone_pages`, `crate::mmzone`): the upper zone, then DMA.

use crate::page_alloc::PAGE_ALLOC_COSTLY_ORDER;
use crate::reclaim::{Reclaimer, ScanControl, SWAP_CLUSTER_MAX};
use crate::sim::Sim;
use crate::stats::item::*;
use crate::tracepoint::TpEvent;

impl Sim {
    /// `try_to_free_pages()`: direct reclaim of SWAP_CLUSTER_MAX pages by the
    /// allocating task for an allocation of `order` with mask `gfp`; a
    /// memstall. For a costly order with
    /// `compaction.compaction_ready`, `shrink_zones` checks each zone's
    /// `compaction_ready` on every pass (the module overview). Returns
    /// what v6.12 `do_try_to_free_pages` returns: the pages reclaimed, else
    /// 1 if the reclaim stopped for `compaction_ready` ("Aborted reclaim to
    /// try compaction? don't OOM, then"), else 0 — the progress
    /// `__alloc_pages_direct_reclaim` tests. `gfp` is the allocation's mask:
    /// v6.12 traces `mm_vmscan_direct_reclaim_begin(order, sc.gfp_mask)`
    /// with `sc.gfp_mask = current_gfp_context(gfp_mask)`, the mask itself
    /// outside a `memalloc_noio`/`nofs` scope (readahead's, the one scope
    /// mmsim's allocations are in, is in its mask: `crate::gfp::GFP_READAHEAD`).
    /// Order-0 sites: `Sim::alloc_page`'s callers (anonymous, copy, swap-in,
    /// page-cache and readahead folios, page tables), each with its mask.
    /// The mask is `sc.gfp_mask`, which `shrink_folio_list`'s
    /// `may_enter_fs` reads (`ScanControl::gfp_mask`). Departure: mmsim has
    /// no filesystem slab shrinker to skip without `__GFP_FS`.
    pub(crate) fn try_to_free_pages_order(&mut self, order: usize, gfp: crate::gfp::Gfp) -> u64 {
        self.count_vm_events(ALLOCSTALL_NORMAL, 1);
        let mut sc =
            ScanControl::new(Reclaimer::Direct, SWAP_CLUSTER_MAX, self.clock).on_cpus(self.smp.par);
        sc.order = order as u32;
        sc.gfp_mask = gfp;
        if order > PAGE_ALLOC_COSTLY_ORDER as usize
            && self.compact.cfg.enabled
            && self.compact.cfg.compaction_ready
        {
            sc.compaction_ready_order = order;
        }
        if self.tp.is_some() {
            let e = TpEvent::DirectReclaimBegin {
                order: order as u32,
                gfp_flags: gfp,
            };
            self.trace_vmscan(self.clock, None, e);
        }
        self.do_try_to_free_pages(&mut sc);
        let progress = if sc.nr_reclaimed == 0 && sc.compaction_ready {
            1
        } else {
            sc.nr_reclaimed
        };
        if self.tp.is_some() {
            // v6.12 `try_to_free_pages` traces what `do_try_to_free_pages`
            // returned: the 1 of an abort for compaction too.
            let e = TpEvent::DirectReclaimEnd {
                nr_reclaimed: progress,
            };
            self.trace_vmscan(sc.now(), None, e);
        }
        self.direct_profile.add(&sc.prof);
        self.workload_stall(sc.elapsed(), true);
        progress
    }

    /// `shrink_zones()` (v6.12) for one pass of `do_try_to_free_pages`:
    /// `shrink_node` once; for a costly order (`sc.compaction_ready_order`)
    /// the one zone, when `compaction_ready`, is skipped and sets
    /// `sc.compaction_ready` instead; on the two-zone node the zonelist is
    /// walked upper zone first: a zone that is `compaction_ready` is skipped and sets
    /// `sc.compaction_ready`; the node is shrunk for the first zone that is
    /// not (once: `last_pgdat`). DMA is checked after the upper zone's
    /// shrink, as the kernel's walk reaches it then.
    pub(crate) fn shrink_zones(&mut self, sc: &mut ScanControl) {
        let order = sc.compaction_ready_order;
        if order == 0 {
            self.shrink_node(sc);
            return;
        }
        if self.phys.dma.is_none() {
            if self.compaction_ready(order) {
                sc.compaction_ready = true;
            } else {
                self.shrink_node(sc);
            }
            return;
        }
        let upper = self.zone_compaction_ready(order, false);
        if !upper {
            self.shrink_node(sc);
        }
        let dma = self.zone_compaction_ready(order, true);
        if upper && !dma {
            self.shrink_node(sc);
        }
        sc.compaction_ready |= upper || dma;
    }

    /// `compaction_ready(zone, sc)` (mm/vmscan.c, v6.12) of the upper zone
    /// or (`dma`) ZONE_DMA, with the zone's watermarks, `lowmem_reserve` and
    /// fragmentation index: the allocation could succeed at the min
    /// watermark, or compaction is suitable and the free pages are above
    /// high + `compact_gap(order)`. The per-zone test of
    /// `Sim::compaction_ready_zoned` (`crate::mmzone`), which asks it of
    /// every zone. False without a DMA zone.
    pub(crate) fn zone_compaction_ready(&self, order: usize, dma: bool) -> bool {
        let Some(d) = self.phys.dma.as_ref() else {
            return false;
        };
        self.debug_assert_upper_zone_in("compaction_ready");
        let (zone, free, wm, reserve) = if dma {
            (&d.zone, d.zone.free_pages(), d.wmark, d.lowmem_reserve)
        } else {
            (&self.phys.zone, self.upper_free(), d.upper_wmark, 0)
        };
        if zone.watermark_ok(order, wm.min + reserve) {
            return true;
        }
        self.zone_compaction_suitable(zone, free, wm, reserve, order)
            && free > wm.high + (2u64 << order) + reserve
    }
}
