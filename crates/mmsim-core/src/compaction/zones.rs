//! Compaction per zone (mm/compaction.c and mm/page_alloc.c, Linux v6.12):
//! the zone walks of `try_to_compact_pages`, `kcompactd_do_work`,
//! `kcompactd_node_suitable` and `compact_node(pgdat, proactive = true)`, the node's
//! weighted `fragmentation_score_node`, and `compaction_suitable` /
//! `compaction_suit_allocation_order` of one zone.
//!
//! With one zone (`machine.dma_zone_pages` = 0) every walk visits that zone
//! once and reads the node's watermarks and free pages, as before. With
//! ZONE_DMA (`crate::mmzone`) each zone has its own compaction state
//! ([`ZoneCompact`]: cached scanner PFNs, `PB_migrate_skip` bits,
//! `compact_blockskip_flush`, the deferral's `compact_considered`,
//! `compact_defer_shift`, `compact_order_failed`), its scanners run inside
//! its own PFN range, its free scanner isolates its own free pages only,
//! and its checks read its own free pages, watermarks and DMA's
//! `lowmem_reserve`.
//!
//! How: the scanners, the deferral helpers and the skip hints work on "the
//! zone being compacted", which is `PhysMem::zone` with the per-zone fields
//! of `Compaction`. [`Sim::on_zone`] makes ZONE_DMA that zone for the length
//! of one call by swapping DMA's `Zone` into `PhysMem::zone` and its
//! [`ZoneCompact`] into `Compaction` (`Compaction::in_dma` says which one
//! is in), and swaps them back after. During the call only DMA's frames
//! are touched (the scanners stay inside the zone's PFNs, `free_block`,
//! `pfn_folio` and `set_frames_folio` find DMA frames in `PhysMem::zone`),
//! the per-CPU lists (upper-zone pages) are not drained, and `mem_map` is
//! built before the swap.
//!
//! Rules (v6.12):
//! - Direct compaction (`try_to_compact_pages`): the zonelist, upper zone
//!   first, then DMA; per zone, a deferred zone (`compaction_deferred`)
//!   raises the result to `COMPACT_DEFERRED` and is passed over; otherwise
//!   `compact_zone_order` runs and the result is the maximum over the zones
//!   (`enum compact_result` order); `COMPACT_SUCCESS` (or a captured block)
//!   resets the zone's deferral (`compaction_defer_reset(.., false)`) and
//!   stops the walk; a sync run ending `COMPACT_COMPLETE` or
//!   `COMPACT_PARTIAL_SKIPPED` defers the zone. `__alloc_pages_direct_compact`
//!   then counts `compact_stall` once per call (none when the result is
//!   `COMPACT_SKIPPED`: every zone was unsuitable), takes the captured
//!   block or walks the zonelist at the min watermark, and counts
//!   `compact_success` (resetting the deferral of the zone the page came
//!   from, and its `compact_blockskip_flush`, whether the page was captured
//!   or taken from the free lists) or
//!   `compact_fail`, once per call.
//! - kcompactd (`kcompactd_do_work`): one `compact_daemon_wake`; zones from
//!   the lowest (DMA first); per zone: deferred, or the order's min
//!   watermark met, or not suitable (both with `highest_zoneidx` = the zone
//!   itself, so DMA without its reserve) → next zone; else a sync-light
//!   run; success resets the deferral, a run whose scanners met drains the
//!   zone's per-CPU lists and defers the zone. The run's own check
//!   (`compact_zone`, with the request's highest zone) adds DMA's reserve,
//!   so a DMA suitable only without it returns `COMPACT_SKIPPED` (nothing
//!   scanned or deferred): the loop's reserve-less check changes no
//!   outcome (a zone it stops would be stopped with the reserve too). Nor
//!   does the order of the zones: each run reads and changes only its own.
//!   `kcompactd_node_suitable`: some zone misses its min watermark for the
//!   order and is suitable (with the reserve of the highest zone asked for).
//! - Proactive compaction: the node's score (`fragmentation_score_node`) is
//!   Σ over zones of `extfrag_for_order(zone, 9)` × the zone's pages / (the
//!   node's pages + 1); `compact_node(pgdat, proactive = true)` runs a whole-zone run on
//!   each zone, DMA first, each ending at its own zone's score.
//! - kswapd's and the restart's `reset_isolation_suitable` clear each zone's
//!   marks (each gated by its own `compact_blockskip_flush`).
//!
//! Departure: DMA's present pages are taken as its spanned pages (the
//! kernel's `present_pages` of DMA are ~3,999 of 4,096 spanned, page 0 and
//! the BIOS holes excluded).

use super::{CompactControl, CompactResult, MigrateMode, COMPACTION_HPAGE_ORDER};
use crate::compaction::extfrag_for_order;
use crate::cost::{COMPACT_SCAN_NS, MIGRATE_PAGE_NS};
use crate::mmzone::{Wmark, ZoneWmarks};
use crate::page_alloc::Zone;
use crate::sim::Sim;
use crate::stats::item::*;
use crate::tracepoint::compaction::{zone_idx, DeferEvent};
use crate::tracepoint::CompactionEvent;

/// One zone's compaction state (the `compact_*` fields of `struct zone`
/// and its pageblocks' `PB_migrate_skip`); see `Compaction`'s fields of the
/// same names, which hold the state of the zone being compacted.
#[derive(Clone, Debug, Default)]
pub(crate) struct ZoneCompact {
    pub(crate) considered: u32,
    pub(crate) defer_shift: u32,
    pub(crate) order_failed: u32,
    pub(crate) cached_migrate_pfn: [u64; 2],
    pub(crate) cached_free_pfn: u64,
    pub(crate) skip: Vec<u64>,
    pub(crate) blockskip_flush: bool,
    pub(crate) init_free_pfn: u64,
    pub(crate) init_migrate_pfn: u64,
}

/// One zone as compaction's checks read it.
struct ZoneView<'a> {
    zone: &'a Zone,
    /// Free pages (the upper zone's with the per-CPU lists', as the
    /// model's watermarks read them).
    free: u64,
    wm: ZoneWmarks,
    /// DMA's `lowmem_reserve` for a movable allocation (0 for the upper zone).
    reserve: u64,
}

impl Sim {
    /// The zones in zonelist order (`for_each_zone_zonelist`: upper zone,
    /// then DMA; `true` = DMA).
    pub(crate) fn compact_zonelist(&self) -> &'static [bool] {
        if self.phys.dma.is_some() {
            &[false, true]
        } else {
            &[false]
        }
    }

    /// Debug builds: panics when ZONE_DMA is swapped into `PhysMem::zone`
    /// and `Compaction` (an [`Sim::on_zone`] call for DMA is under way).
    /// The entry points that read the upper zone there or its compaction
    /// state in `Compaction` call it (`who` names them): the zonelist walks
    /// of the allocator, kswapd's and direct reclaim's per-zone checks, and
    /// the compaction walks, which each start from the upper zone.
    #[inline(always)]
    pub(crate) fn debug_assert_upper_zone_in(&self, who: &str) {
        debug_assert!(
            !self.compact.in_dma,
            "ZONE_DMA is swapped in (on_zone): {who} reads the upper zone"
        );
    }

    /// Runs `f` with ZONE_DMA (`dma`) or the upper zone as the zone being
    /// compacted (the module overview).
    pub(crate) fn on_zone<R>(&mut self, dma: bool, f: impl FnOnce(&mut Sim) -> R) -> R {
        if dma == self.compact.in_dma {
            return f(self);
        }
        self.ensure_mem_map();
        self.swap_compact_zone();
        let r = f(self);
        self.swap_compact_zone();
        r
    }

    fn swap_compact_zone(&mut self) {
        use std::mem::swap;
        let d = self.phys.dma.as_mut().expect("ZONE_DMA");
        swap(&mut self.phys.zone, &mut d.zone);
        let c = &mut self.compact;
        let z = &mut c.dma_state;
        swap(&mut c.considered, &mut z.considered);
        swap(&mut c.defer_shift, &mut z.defer_shift);
        swap(&mut c.order_failed, &mut z.order_failed);
        swap(&mut c.cached_migrate_pfn, &mut z.cached_migrate_pfn);
        swap(&mut c.cached_free_pfn, &mut z.cached_free_pfn);
        swap(&mut c.skip, &mut z.skip);
        swap(&mut c.blockskip_flush, &mut z.blockskip_flush);
        swap(&mut c.init_free_pfn, &mut z.init_free_pfn);
        swap(&mut c.init_migrate_pfn, &mut z.init_migrate_pfn);
        c.in_dma = !c.in_dma;
    }

    /// Zone `dma` (or the one zone) as the checks read it.
    fn zone_view(&self, dma: bool) -> ZoneView<'_> {
        let Some(d) = self.phys.dma.as_ref() else {
            let n = &self.node;
            return ZoneView {
                zone: &self.phys.zone,
                free: self.phys.free_pages(),
                wm: ZoneWmarks {
                    min: n.wmark_min,
                    low: n.wmark_low,
                    high: n.wmark_high,
                },
                reserve: 0,
            };
        };
        let zone = if dma == self.compact.in_dma {
            &self.phys.zone
        } else {
            &d.zone
        };
        let (free, wm, reserve) = if dma {
            (zone.free_pages(), d.wmark, d.lowmem_reserve)
        } else {
            (zone.free_pages() + self.phys.pcp.count(), d.upper_wmark, 0)
        };
        ZoneView {
            zone,
            free,
            wm,
            reserve,
        }
    }

    /// The min watermark of the zone being compacted (`__isolate_free_page`'s
    /// check; the node's with one zone).
    pub(crate) fn compact_wmark_min(&self) -> u64 {
        self.zone_view(self.compact.in_dma).wm.min
    }

    /// `compaction_suit_allocation_order(zone, order, highest_zoneidx,
    /// ALLOC_WMARK_MIN)` (v6.12): `Some(COMPACT_SUCCESS)` when the order's
    /// min watermark (+ `reserve`) is met, `Some(COMPACT_SKIPPED)` when
    /// compaction is not suitable, `None` (`COMPACT_CONTINUE`) otherwise.
    fn suit_allocation_order(
        &self,
        dma: bool,
        order: usize,
        reserve: bool,
    ) -> Option<CompactResult> {
        let v = self.zone_view(dma);
        let reserve = if reserve { v.reserve } else { 0 };
        if v.zone.watermark_ok(order, v.wm.min + reserve) {
            return Some(CompactResult::Success);
        }
        if !self.zone_compaction_suitable(v.zone, v.free, v.wm, reserve, order) {
            return Some(CompactResult::Skipped);
        }
        None
    }

    /// `compaction_suitable` (v6.12) of the zone being compacted, for a
    /// movable allocation (DMA with its `lowmem_reserve`): enough order-0
    /// free pages above the watermark (low for costly orders, else min)
    /// plus `compact_gap`, and for costly orders a fragmentation index
    /// above `extfrag_threshold`. With one zone the free pages are the
    /// node's (`Node::free`: the buddy lists and the per-CPU lists, which
    /// `compact_zone` drains first).
    pub(crate) fn compaction_suitable(&self, order: usize) -> bool {
        let v = self.zone_view(self.compact.in_dma);
        self.zone_compaction_suitable(v.zone, v.free, v.wm, v.reserve, order)
    }

    /// `compact_zone`'s own `compaction_suit_allocation_order` for the zone
    /// being compacted (with the allocation's reserve).
    pub(super) fn compact_zone_suit(&mut self, order: usize) -> Option<CompactResult> {
        self.suit_allocation_order_tp(self.compact.in_dma, order, true)
    }

    /// [`Sim::suit_allocation_order`] with v6.12 `compaction_suitable`'s
    /// `mm_compaction_suitable` tracepoint, emitted when the watermark check
    /// failed (`compaction_suitable` ran): `ret` is `COMPACT_SKIPPED` (too few
    /// free pages), `COMPACT_NOT_SUITABLE_ZONE` (the fragmentation index) or
    /// `COMPACT_CONTINUE`.
    fn suit_allocation_order_tp(
        &mut self,
        dma: bool,
        order: usize,
        reserve: bool,
    ) -> Option<CompactResult> {
        let r = self.suit_allocation_order(dma, order, reserve);
        if self.tp.is_some() && r != Some(CompactResult::Success) {
            let v = self.zone_view(dma);
            let reserve = if reserve { v.reserve } else { 0 };
            let ret = self.zone_compaction_suitable_result(v.zone, v.free, v.wm, reserve, order);
            let e = CompactionEvent::Suitable {
                zone: zone_idx(v.zone.name),
                order: order as i32,
                ret,
            };
            self.trace_compaction(e);
        }
        r
    }

    /// `compaction_deferred` with its `mm_compaction_deferred` tracepoint
    /// (v6.12: emitted when it defers).
    fn compaction_deferred(&mut self, order: u32) -> bool {
        let d = self.compact.compaction_deferred(order);
        if d && self.tp.is_some() {
            self.trace_defer(DeferEvent::Deferred, order);
        }
        d
    }

    /// `defer_compaction` with `mm_compaction_defer_compaction` (v6.12).
    fn defer_compaction(&mut self, order: u32) {
        self.compact.defer_compaction(order);
        if self.tp.is_some() {
            self.trace_defer(DeferEvent::DeferCompaction, order);
        }
    }

    /// `compaction_defer_reset` with `mm_compaction_defer_reset` (v6.12).
    fn compaction_defer_reset(&mut self, order: u32, alloc_success: bool) {
        self.compact.compaction_defer_reset(order, alloc_success);
        if self.tp.is_some() {
            self.trace_defer(DeferEvent::DeferReset, order);
        }
    }

    /// `fragmentation_score_zone` of the zone being compacted:
    /// `extfrag_for_order` at order 9.
    pub(super) fn fragmentation_score_zone(&self) -> u64 {
        extfrag_for_order(&self.phys.zone.buddyinfo(), COMPACTION_HPAGE_ORDER)
    }

    /// `fragmentation_score_node`: Σ over the zones of their score weighted
    /// by `pages / (node pages + 1)`.
    pub(crate) fn fragmentation_score(&self) -> u64 {
        let zones = self.compact_zonelist();
        let views: Vec<ZoneView<'_>> = zones.iter().map(|&d| self.zone_view(d)).collect();
        let node: u64 = views.iter().map(|v| v.zone.spanned_pages).sum();
        views
            .iter()
            .map(|v| {
                let s = extfrag_for_order(&v.zone.buddyinfo(), COMPACTION_HPAGE_ORDER);
                s * v.zone.spanned_pages / (node + 1)
            })
            .sum()
    }

    /// [`Sim::alloc_pages_direct_compact_gfp`] for an mTHP fault under
    /// `defrag=always` outside MADV_HUGEPAGE (`GFP_TRANSHUGE|__GFP_NORETRY`).
    #[cfg(test)]
    pub(crate) fn alloc_pages_direct_compact(
        &mut self,
        order: u8,
        prio: MigrateMode,
    ) -> (Option<u64>, CompactResult) {
        use crate::gfp::{__GFP_NORETRY, GFP_TRANSHUGE};
        self.alloc_pages_direct_compact_gfp(order, prio, GFP_TRANSHUGE | __GFP_NORETRY)
    }

    /// `__alloc_pages_direct_compact` → `try_to_compact_pages` →
    /// `compact_zone_order` per zone (the module overview): the block and
    /// the result (the maximum over the zones); counts `compact_stall` /
    /// `compact_success` / `compact_fail` once per call and charges the
    /// scanning and migration to the allocating task. A success clears the
    /// page's zone's `compact_blockskip_flush` (v6.12, mm/page_alloc.c),
    /// whether the page was captured or taken from the free lists, so that
    /// kswapd's next sleep does not reset the skip hints; the clear came
    /// with the flag itself (v3.7, Mel Gorman's skip-hint series), long
    /// before page capture (v5.1), so every modelled kernel has it. (Until
    /// 2026-12-01 mmsim cleared it only with `capture`.)
    /// `gfp_mask` is the allocation's (`crate::gfp`), printed by
    /// `mm_compaction_try_to_compact_pages`.
    pub(crate) fn alloc_pages_direct_compact_gfp(
        &mut self,
        order: u8,
        prio: MigrateMode,
        gfp_mask: crate::gfp::Gfp,
    ) -> (Option<u64>, CompactResult) {
        self.debug_assert_upper_zone_in("try_to_compact_pages");
        let (o, ord) = (order as usize, u32::from(order));
        if self.tp.is_some() {
            // `enum compact_priority`: COMPACT_PRIO_ASYNC 2, SYNC_LIGHT 1.
            let prio = if prio == MigrateMode::Async { 2 } else { 1 };
            self.trace_compaction(CompactionEvent::TryToCompactPages {
                order: ord,
                gfp_mask,
                prio,
            });
        }
        let mut rc = CompactResult::Skipped;
        let mut captured = None;
        for &dma in self.compact_zonelist() {
            // try_to_compact_pages: every priority above MIN_COMPACT_PRIORITY
            // (sync full, unused here) checks the deferral.
            let (status, ns) = self.on_zone(dma, |s| {
                if s.compaction_deferred(ord) {
                    return (CompactResult::Deferred, 0);
                }
                let mut cc = CompactControl::new(Some(o), prio, true, false);
                cc.capture = s.compact.cfg.capture;
                cc.gfp_mask = gfp_mask;
                let mut r = s.compact_zone(&mut cc);
                // compact_zone_order: hide capture_control, read the page.
                s.phys.zone.capture_order = u8::MAX;
                if let Some(p) = s.phys.zone.captured.take() {
                    captured = Some((p, dma));
                    r = CompactResult::Success;
                }
                if r == CompactResult::Success {
                    s.compaction_defer_reset(ord, false);
                } else if prio != MigrateMode::Async
                    && matches!(r, CompactResult::Complete | CompactResult::PartialSkipped)
                {
                    s.defer_compaction(ord);
                }
                let ns = (cc.total_migrate_scanned + cc.total_free_scanned) * COMPACT_SCAN_NS
                    + cc.migrated * MIGRATE_PAGE_NS;
                (r, ns)
            });
            self.advance(ns);
            rc = rc.max(status);
            if status == CompactResult::Success {
                break;
            }
        }
        if rc == CompactResult::Skipped {
            return (None, rc);
        }
        self.count_vm_events(COMPACTSTALL, 1);
        let page = match captured {
            Some((p, dma)) => {
                self.node.free -= 1 << order;
                Some((p, dma))
            }
            None => self
                .take_block(order, Wmark::Min)
                .map(|p| (p, self.phys.dma_in_zone(p))),
        };
        if let Some((p, dma)) = page {
            self.on_zone(dma, |s| {
                // Any page, captured or from the free lists: the flag has been
                // cleared here since v3.7 (every modelled kernel).
                s.compact.blockskip_flush = false;
                s.compaction_defer_reset(ord, true);
            });
            self.count_vm_events(COMPACTSUCCESS, 1);
            return (Some(p), rc);
        }
        self.count_vm_events(COMPACTFAIL, 1);
        (None, rc)
    }

    /// `kcompactd_node_suitable` (v6.12): some zone misses the order's min
    /// watermark (with the reserve of the highest zone asked for) and
    /// compaction is suitable there.
    pub(crate) fn kcompactd_node_suitable(&self) -> bool {
        let o = self.compact.kcompactd_max_order as usize;
        self.compact_zonelist()
            .iter()
            .rev()
            .any(|&dma| self.suit_allocation_order(dma, o, true).is_none())
    }

    /// `kcompactd_do_work` (v6.12): per zone, lowest first, one sync-light
    /// run for `kcompactd_max_order` unless deferred, already satisfied or
    /// not suitable (checked with `highest_zoneidx` = the zone; the run's
    /// own check adds DMA's reserve); defers the zone on failure.
    pub(crate) fn kcompactd_do_work(&mut self) {
        self.debug_assert_upper_zone_in("kcompactd_do_work");
        let order = self.compact.kcompactd_max_order;
        // cc.highest_zoneidx = kcompactd_highest_zoneidx, reset at the end
        // to nr_zones - 1 (`kcompactd_highest_zoneidx >= cc.highest_zoneidx`
        // always holds here: nothing wakes kcompactd during its run).
        let top = zone_idx(self.phys.zone.name);
        let highest = self
            .compact
            .kcompactd_highest_zoneidx
            .take()
            .map_or(top, |z| z.min(top));
        if self.tp.is_some() {
            let zone = highest;
            self.trace_compaction(CompactionEvent::KcompactdWake { order, zone });
        }
        self.count_vm_events(KCOMPACTD_WAKE, 1);
        let o = order as usize;
        for &dma in self.compact_zonelist().iter().rev() {
            self.on_zone(dma, |s| {
                if s.compaction_deferred(order)
                    || s.suit_allocation_order_tp(dma, o, false).is_some()
                {
                    return;
                }
                let mut cc = CompactControl::new(Some(o), MigrateMode::SyncLight, false, false);
                let r = s.compact_zone(&mut cc);
                s.kcompactd_account(&cc);
                if r == CompactResult::Success {
                    s.compaction_defer_reset(order, false);
                } else if matches!(r, CompactResult::Complete | CompactResult::PartialSkipped) {
                    // drain_all_pages(zone) (DMA has no per-CPU lists), then defer.
                    if !dma {
                        s.phys.drain_pages();
                    }
                    s.defer_compaction(order);
                }
            });
        }
        if self.compact.kcompactd_max_order <= order {
            self.compact.kcompactd_max_order = 0;
        }
    }

    /// `compact_node(pgdat, proactive = true)` (v6.12): a whole-zone proactive run on each
    /// zone, lowest first.
    pub(super) fn proactive_compact_node(&mut self) {
        self.debug_assert_upper_zone_in("compact_node");
        for &dma in self.compact_zonelist().iter().rev() {
            self.on_zone(dma, |s| {
                let mut cc = CompactControl::new(None, MigrateMode::SyncLight, false, true);
                cc.whole_zone = true;
                s.compact_zone(&mut cc);
                s.kcompactd_account(&cc);
            });
        }
    }

    /// `reset_isolation_suitable(pgdat)`: each zone's marks
    /// (`Sim::reset_isolation_suitable_zone`).
    pub(crate) fn reset_isolation_suitable(&mut self) {
        self.debug_assert_upper_zone_in("reset_isolation_suitable");
        for &dma in self.compact_zonelist().iter().rev() {
            // `__reset_isolation_suitable` returns at once without the
            // zone's `compact_blockskip_flush`: test it before swapping the
            // zone in, which would build `mem_map` for nothing.
            let flush = if dma == self.compact.in_dma {
                self.compact.blockskip_flush
            } else {
                self.compact.dma_state.blockskip_flush
            };
            if flush {
                self.on_zone(dma, Sim::reset_isolation_suitable_zone);
            }
        }
    }
}
