//! Memory compaction (mm/compaction.c and the compaction steps of
//! `__alloc_pages_slowpath` in mm/page_alloc.c, Linux v6.12), off by
//! default (`[machine.compaction] enabled = true` turns it on; every other
//! run keeps its bits).
//!
//! What was read: v6.12's `compact_zone`, `compact_finished` /
//! `__compact_finished`, `isolate_migratepages`, `isolate_migratepages_block`
//! (with `skip_isolation_on_order`), `suitable_migration_source`/`_target`,
//! `isolate_freepages`, `isolate_freepages_block`, `compaction_alloc`,
//! `release_free_list`, `compaction_suitable`/`__compaction_suitable`,
//! `fragmentation_index`, `extfrag_for_order`, the deferral helpers,
//! `try_to_compact_pages`, `__alloc_pages_direct_compact`, the kcompactd
//! thread (`wakeup_kcompactd`, `kcompactd_do_work`, the proactive check of
//! `kcompactd()`), and `vma_thp_gfp_mask` of mm/huge_memory.c.
//!
//! * **The scanners** ([`Sim::compact_zone`]): the migrate scanner walks
//!   pageblocks up from the zone start (or its cached position), the free
//!   scanner down from the last pageblock; they stop when they meet
//!   (`compact_scanners_met`). The migrate scanner takes LRU folios smaller
//!   than the target order (`skip_isolation_on_order`) in batches of
//!   `COMPACT_CLUSTER_MAX` (32); async direct compaction scans only movable
//!   pageblocks (`suitable_migration_source`) and gives up an order-aligned
//!   chunk at its first page that cannot move (`skip_on_failure`). Free
//!   blocks it meets are skipped whole; frames of no folio (kernel pages,
//!   pages on the per-CPU lists) cannot move. The free scanner isolates free
//!   buddy blocks (`__isolate_free_page` with its min-watermark check) of
//!   movable pageblocks whose first page is not already a free block of the
//!   target order, with the async stride (`COMPACT_CLUSTER_MAX`, reset to 1
//!   after a block that gave pages, doubled after one that gave none).
//! * **Migration** (`migrate_pages` with `compaction_alloc`): folios move in
//!   the order of the kernel's migrate list (the last isolated first); each
//!   takes the first isolated free block of its order or the smallest larger
//!   one, split with the upper halves kept (v6.10+ per-order free lists). A
//!   folio that moves becomes a new folio (new id) at the target frames, as
//!   `migrate_folio_move` makes one: its page-cache or swap-cache slots,
//!   PTEs, queue entries and LRU place name the new id, with its flags,
//!   charge and mapcount (`crate::compaction::migrate`); its old frames go
//!   back to the buddy allocator, merging, and its old id is freed after
//!   the batch's TLB flush. Isolated free blocks left over are released
//!   (`release_free_list`).
//! * **When to stop** (`__compact_finished`): at each pageblock boundary of
//!   the migrate scanner, a free block of at least the order on the movable
//!   lists, or on another type's list at an order a movable allocation may
//!   claim (`find_suitable_fallback` with `only_stealable`), ends it
//!   (`COMPACT_SUCCESS`); proactive compaction ends when the zone's
//!   fragmentation score is at or under the low mark.
//! * **Whether to start**: `compaction_suitable` (the order-0 watermark —
//!   low for costly orders, min otherwise — plus `compact_gap` = 2 << order,
//!   and for costly orders a fragmentation index above `extfrag_threshold`),
//!   and the deferral of `compaction_deferred` / `defer_compaction` /
//!   `compaction_defer_reset` (`compact_considered`, `compact_defer_shift` up
//!   to `COMPACT_MAX_DEFER_SHIFT` = 6, `compact_order_failed`).
//! * **Direct compaction** ([`Sim::alloc_slowpath_compact`], the slow path of
//!   a THP, mTHP, khugepaged or large page-cache allocation): wake kswapd if
//!   allowed, try the min watermark, then (costly orders, direct reclaim
//!   allowed) async compaction; a `__GFP_NORETRY` allocation gives up when it
//!   was skipped or deferred; then one direct reclaim (with
//!   `compaction_ready = true` each of its priority passes first asks
//!   whether compaction is ready, and the first that finds it so skips the
//!   node and ends the reclaim: `crate::reclaim::direct`), if it made
//!   progress the min watermark (again after draining the per-CPU lists, as
//!   `__alloc_pages_direct_reclaim` does; after no progress neither), and a
//!   second compaction (async for `__GFP_NORETRY` costly
//!   allocations, else `MIGRATE_SYNC_LIGHT`). `__GFP_NORETRY` is set as
//!   `vma_thp_gfp_mask` sets it (defrag `always` outside MADV_HUGEPAGE VMAs)
//!   and for readahead's large folios. Every attempt checks the deferral;
//!   only sync runs defer (`try_to_compact_pages`). A deferred attempt still
//!   counts `compact_stall` (and `compact_fail`), a skipped one does not.
//!   Departure: without `[machine.compaction]` a costly `__GFP_NORETRY`
//!   allocation still reclaims directly, where the kernel's
//!   compaction-disabled `__alloc_pages_direct_compact` stub returns
//!   `COMPACT_SKIPPED` and the slow path gives up (`goto nopage`); THP
//!   selects COMPACTION, so that kernel has no real counterpart.
//! * **kcompactd** (`TimerKind::Kcompactd`, `kcompactd = true`): woken for
//!   the allocation's order when an allocation that wakes kswapd finds the
//!   node balanced (`wakeup_kswapd`), and by kswapd when it goes to sleep
//!   balanced after such a wakeup (`kswapd_try_to_sleep`), if compaction
//!   could help (`kcompactd_node_suitable`); it compacts in `MIGRATE_SYNC_LIGHT` mode
//!   (`kcompactd_do_work`) and counts `compact_daemon_*`. Every
//!   `HPAGE_FRAG_CHECK_INTERVAL_MSEC` (500 ms) it checks the fragmentation
//!   score (`extfrag_for_order` at order 9) against
//!   `100 - proactiveness` (+10 to start) and compacts the whole zone while
//!   it is above the low mark, backing off 64 intervals when a run did not
//!   lower the score (`proactiveness = 0` turns it off). kcompactd runs on
//!   its own CPU: its time is not the workload's.
//! * **Cost**: direct compaction stalls the allocating task for
//!   `crate::cost::COMPACT_SCAN_NS` per page either scanner looks at and
//!   `crate::cost::MIGRATE_PAGE_NS` per page migrated.
//!
//! * **Skip hints** (`skip_hints = true`, off by default): v6.12's
//!   `PB_migrate_skip` per pageblock. A scanner passes over a marked block
//!   (`isolation_suitable`, checked at the block's first page); the migrate
//!   scanner marks a block when it first isolates from it
//!   (`test_and_set_skip`) or scans it to the end without isolating, the
//!   free scanner when it scans a block to the end (`update_pageblock_skip`).
//!   When direct compaction's scanners meet, `compact_blockskip_flush` is set
//!   (a direct compaction that gets its page, captured or from the free
//!   lists, clears it: v6.12 `__alloc_pages_direct_compact`, as since v3.7),
//!   and the marks are cleared (`__reset_isolation_suitable`) when kswapd
//!   goes to sleep or a deferred compaction restarts
//!   (`compaction_restarting`). Proactive compaction ignores the marks.
//!   Under steady pressure kswapd does not sleep, so kcompactd (and direct
//!   compaction) finds the zone marked and ends at once, as the 6.12 guest
//!   shows (VALIDATION.md, compact-mthp-defer). Without `fast_search`
//!   (`fast_isolate_freepages`) the free scanner walks and marks far more
//!   blocks than the kernel's when few pages are free. Both resets go through
//!   `__reset_isolation_suitable`, which runs only when the flag is set
//!   (`crate::compaction_skip`): it samples each block for an LRU page
//!   (migrate side, the zone's lower half) or a free page (free side, the
//!   upper half), clears the marks of the blocks it finds them in, keeps
//!   the others, and restarts the scanners at the first such blocks.
//!
//! * **Free-list searches** (`fast_search = true`, off by default):
//!   `fast_isolate_freepages` and `fast_find_migrateblock`, in
//!   `crate::compaction::fast` (its overview has the rules).
//! * **Page capture** (`capture = true`, off by default; direct compaction
//!   only): v6.12's `capture_control`. While the run is on, the first block
//!   of the target order that a free forms (`__free_one_page` merging the
//!   migrated folio's old frames with free buddies: `compaction_capture`)
//!   is kept off the free lists; the run ends `COMPACT_SUCCESS` after that
//!   migration batch, and the allocation takes the block without a
//!   watermark check (`compact_zone_order`, `__alloc_pages_direct_compact`,
//!   which on success also clears `compact_blockskip_flush`). Order-0
//!   sources are freed to the per-CPU lists, so their blocks form (and are
//!   captured) when `compact_zone` drains the lists after the migrate
//!   scanner leaves the order-aligned block (`crate::compaction::drain`,
//!   with or without capture; until 2026-12-01 they went to the buddy
//!   lists at once and the capture happened at the migration).
//!
//! Simplified (marked): without `fast_search` no free-list searches start
//! a scanner elsewhere, no pageblock skip hints unless `skip_hints` (the cached scanner
//! positions are kept), no page capture unless `capture`; the per-CPU lists are drained
//! when a run starts (the model's list holds up to the low watermark, as
//! v6.12's `high_min` without the adaptive tuning; the kernel drains it after
//! a failed direct reclaim, which the slow path here does too);
//! `compaction_suitable` reads the free pages the model's watermarks read
//! (`Node::free`, per-CPU lists included); no pinning or `too_many_isolated`
//! checks (a folio under writeback is not isolated: `folio_isolatable`);
//! migration never fails once a target is found. The kernel
//! puts a migrated folio back at its list's head (`folio_add_lru` of the
//! new folio), and so a folio isolated but not migrated (`putback_movable_pages`
//! → `folio_putback_lru`: a batch given up, or those left by a migration
//! that found no target); here both keep their places unless `migrate_lru_add`
//! is set (`crate::compaction::migrate`). Per zone with ZONE_DMA
//! (`crate::compaction::zones`), else one zone; the kswapd side reclaims
//! for a high order only with `kswapd_high_order` (otherwise `kswapd_order`
//! only decides the kcompactd wake). Non-costly orders do not loop in
//! `should_compact_retry`.

use std::collections::VecDeque;

use crate::cost::{COMPACT_SCAN_NS, MIGRATE_PAGE_NS};
use crate::huge_memory::ThpGfp;
use crate::mem::folio::{flags, FolioId, NIL};
use crate::mmzone::Wmark;
use crate::page_alloc::{
    can_steal_fallback, MigrateType, NR_PAGE_ORDERS, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER,
    PAGE_ALLOC_COSTLY_ORDER,
};
use crate::sim::Sim;
use crate::stats::item::*;
use crate::timer::TimerKind;
use crate::tracepoint::{CompactionEvent, TpTask};

pub(crate) use crate::compaction_skip::extfrag_for_order;
#[cfg(test)]
pub(crate) use crate::compaction_skip::fragmentation_index;
pub use config::CompactionConfig;

mod config;
mod drain;
use drain::last_migrated_pfn;
mod fast;
mod migrate;
mod nofs;
mod trace;
mod wakeup;
mod zones;

/// `COMPACT_CLUSTER_MAX` (= `SWAP_CLUSTER_MAX`): folios isolated per batch.
const COMPACT_CLUSTER_MAX: u64 = 32;
/// `COMPACT_MAX_DEFER_SHIFT`.
pub(crate) const COMPACT_MAX_DEFER_SHIFT: u32 = 6;
/// `HPAGE_FRAG_CHECK_INTERVAL_MSEC`: kcompactd's proactive check period.
pub(crate) const HPAGE_FRAG_CHECK_INTERVAL_NS: u64 = 500_000_000;
/// `COMPACTION_HPAGE_ORDER` on x86-64: the order the fragmentation score is for.
const COMPACTION_HPAGE_ORDER: usize = 9;

/// `enum migrate_mode` as compaction uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MigrateMode {
    /// `MIGRATE_ASYNC`: THP faults' first attempt.
    Async,
    /// `MIGRATE_SYNC_LIGHT`: kcompactd, and the second direct attempt.
    SyncLight,
}

/// `enum compact_result`, the values the model returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum CompactResult {
    /// `COMPACT_SKIPPED`: not suitable (too few free pages, or the index).
    Skipped,
    /// `COMPACT_DEFERRED`.
    Deferred,
    /// `COMPACT_CONTINUE` (internal).
    Continue,
    /// `COMPACT_COMPLETE`: the scanners met in a `whole_zone` run (one
    /// whose migrate scanner started at or below `compact_init_migrate_pfn`).
    Complete,
    /// `COMPACT_PARTIAL_SKIPPED`: they met in any other run (and before the
    /// first reset of the skip marks, every run of a zone starting above
    /// pfn 0 is such a run).
    PartialSkipped,
    /// `COMPACT_CONTENDED`: no free page for a migration target.
    Contended,
    /// `COMPACT_SUCCESS`.
    Success,
}

/// A zone's compaction state (the `compact_*` fields of `struct zone`) and
/// kcompactd's (`kcompactd_max_order` of `pg_data_t`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Compaction {
    /// The configuration.
    pub cfg: CompactionConfig,
    /// `compact_considered`.
    pub considered: u32,
    /// `compact_defer_shift`.
    pub defer_shift: u32,
    /// `compact_order_failed`.
    pub order_failed: u32,
    /// `compact_cached_migrate_pfn[async, sync]` (0 = unset).
    pub(crate) cached_migrate_pfn: [u64; 2],
    /// `compact_cached_free_pfn` (0 = unset).
    pub(crate) cached_free_pfn: u64,
    /// `kcompactd_max_order` (0 = no request).
    pub kcompactd_max_order: u32,
    /// `kswapd_order`: the highest order kswapd was woken for since it last slept.
    pub kswapd_order: u32,
    /// `pgdat->kswapd_highest_zoneidx`: the highest `highest_zoneidx` of
    /// the wakeups since kswapd last read it (None: `MAX_NR_ZONES`).
    pub(crate) kswapd_highest_zoneidx: Option<u8>,
    /// `kswapd()`'s local `highest_zoneidx`: the run's classzone, passed to
    /// `kswapd_try_to_sleep` and `balance_pgdat` (None: its initial
    /// `ZONE_NORMAL`).
    pub(crate) kswapd_classzone: Option<u8>,
    /// `pgdat->kcompactd_highest_zoneidx`: the lowest `highest_zoneidx` of
    /// the wakeups since kcompactd last ran (None: `nr_zones - 1`).
    pub(crate) kcompactd_highest_zoneidx: Option<u8>,
    /// `balance_pgdat`'s `sc.order` (`kswapd_high_order` only, else 0): the
    /// order kswapd's current run balances for.
    pub kswapd_reclaim_order: u32,
    /// kcompactd's next proactive check (ns), or `u64::MAX`.
    proactive_at: u64,
    /// CPU time kcompactd spent (ns).
    pub kcompactd_ns: u64,
    /// `PB_migrate_skip` of each pageblock, one bit each (`skip_hints`;
    /// `crate::compaction_skip`).
    pub(crate) skip: Vec<u64>,
    /// `compact_blockskip_flush`: direct compaction's scanners met since the
    /// marks were last cleared.
    pub(crate) blockskip_flush: bool,
    /// `compact_init_free_pfn` (`fast_search`): 0 until a reset sets it.
    pub(crate) init_free_pfn: u64,
    /// `compact_init_migrate_pfn`: 0 until a reset of the marks sets it
    /// (`skip_hints`); a run starting at or below it covers the whole zone.
    pub(crate) init_migrate_pfn: u64,
    /// ZONE_DMA is the zone being compacted (its state swapped in;
    /// `crate::compaction::zones`).
    pub(crate) in_dma: bool,
    /// The per-zone state of the zone not being compacted (ZONE_DMA's
    /// unless `in_dma`).
    pub(crate) dma_state: zones::ZoneCompact,
}

impl Compaction {
    /// The state for `cfg`.
    pub(crate) fn new(cfg: &CompactionConfig) -> Compaction {
        Compaction {
            cfg: cfg.clone(),
            proactive_at: u64::MAX,
            ..Default::default()
        }
    }

    /// `compaction_deferred`: whether to skip compaction for `order` this
    /// time (counts the attempt in `compact_considered`).
    pub(crate) fn compaction_deferred(&mut self, order: u32) -> bool {
        let limit = 1u32 << self.defer_shift;
        if order < self.order_failed {
            return false;
        }
        self.considered += 1;
        if self.considered >= limit {
            self.considered = limit;
            return false;
        }
        true
    }

    /// `defer_compaction`: a sync run for `order` failed.
    pub(crate) fn defer_compaction(&mut self, order: u32) {
        self.considered = 0;
        self.defer_shift = (self.defer_shift + 1).min(COMPACT_MAX_DEFER_SHIFT);
        if order < self.order_failed {
            self.order_failed = order;
        }
    }

    /// `compaction_defer_reset`: `order` succeeded (`alloc_success`: the
    /// allocation too).
    pub(crate) fn compaction_defer_reset(&mut self, order: u32, alloc_success: bool) {
        if alloc_success {
            self.considered = 0;
            self.defer_shift = 0;
        }
        if order >= self.order_failed {
            self.order_failed = order + 1;
        }
    }
}

/// `struct compact_control`: one run's scanners, lists and totals.
#[derive(Debug)]
struct CompactControl {
    /// Target order, or None for a whole-zone (proactive) run (order -1).
    order: Option<usize>,
    mode: MigrateMode,
    direct: bool,
    proactive: bool,
    /// `ignore_skip_hint` (proactive runs).
    ignore_skip_hint: bool,
    whole_zone: bool,
    migrate_pfn: u64,
    free_pfn: u64,
    /// `cc->migratepages`, in isolation order (the kernel's list is the reverse).
    migratepages: Vec<FolioId>,
    nr_migratepages: u64,
    /// `cc->freepages[order]`, head first.
    freepages: [VecDeque<u64>; NR_PAGE_ORDERS],
    nr_freepages: u64,
    total_migrate_scanned: u64,
    total_free_scanned: u64,
    migrated: u64,
    /// `fast_search` on (`crate::compaction::fast`).
    fast: bool,
    /// Page capture on (direct compaction with `capture`).
    capture: bool,
    /// `cc->search_order`, `cc->fast_search_fail`, `cc->fast_start_pfn`.
    search_order: usize,
    fast_search_fail: u32,
    fast_start_pfn: FastStart,
    /// `cc->gfp_mask`: the allocation's, `GFP_KERNEL` for kcompactd (`compaction/nofs.rs`).
    gfp_mask: crate::gfp::Gfp,
}

/// `cc->fast_start_pfn` (v6.12 `update_fast_start_pfn`, `reinit_migrate_pfn`):
/// the lowest block `fast_find_migrateblock` started the migrate scanner at.
/// The kernel keeps it in one `unsigned long`, 0 for unset and `ULONG_MAX`
/// for used; 0 can be no zone's block there (x86-64's ZONE_DMA starts at
/// pfn 1), but mmsim's ZONE_DMA starts at pfn 0, so unset is a state of
/// its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FastStart {
    /// No block found yet (the kernel's 0).
    Unset,
    /// The lowest block found (a pfn, 0 included).
    At(u64),
    /// `reinit_migrate_pfn` restarted the scanner there (the kernel's
    /// `ULONG_MAX`): no more updates this run.
    Used,
}

/// What one `isolate_migratepages` call found.
#[derive(PartialEq, Eq)]
enum Isolate {
    None,
    Success,
}

fn pageblock_start(pfn: u64) -> u64 {
    pfn & !(PAGEBLOCK_NR_PAGES - 1)
}

fn pageblock_end(pfn: u64) -> u64 {
    pageblock_start(pfn) + PAGEBLOCK_NR_PAGES
}

/// `block_end_pfn(pfn, order)`.
fn block_end(pfn: u64, order: usize) -> u64 {
    (pfn | ((1 << order) - 1)) + 1
}

impl Sim {
    /// `get_page_from_freelist` / `__alloc_pages_slowpath` for a THP order:
    /// a free block above the low watermark (`zone_watermark_fast` with the
    /// order's unusable pages); else, as the gfp allows, wake kswapd, try
    /// above the min watermark, then reclaim directly once and, only if it
    /// made progress, the min watermark, a per-CPU drain and the min
    /// watermark again (`Sim::alloc_pages_direct_reclaim`); with
    /// `[machine.compaction]`, `Sim::alloc_slowpath_compact`. The pages
    /// leave `Node::free`. (Here rather than in `crate::huge_memory`, whose
    /// fault path, `crate::khugepaged` and large page-cache folios call it.)
    /// Then `rmqueue`'s tail: a boosting steal wakes kswapd when `gfp` may
    /// (`crate::page_alloc_boost`).
    pub(crate) fn rmqueue_large(&mut self, order: u8, gfp: ThpGfp) -> Option<u64> {
        let pfn = self.rmqueue_large_slowpath(order, gfp);
        self.rmqueue_boosted(gfp.kswapd);
        self.traced_alloc(pfn, order, gfp.mask)
    }

    fn rmqueue_large_slowpath(&mut self, order: u8, gfp: ThpGfp) -> Option<u64> {
        if let Some(p) = self.take_block(order, Wmark::Low) {
            return Some(p);
        }
        if !gfp.kswapd && !gfp.direct {
            return None;
        }
        if self.compact.cfg.enabled {
            return self.alloc_slowpath_compact(order, gfp);
        }
        if gfp.kswapd {
            self.wakeup_kswapd(gfp.mask);
        }
        if let Some(p) = self.take_block(order, Wmark::Min) {
            return Some(p);
        }
        if !gfp.direct {
            return None;
        }
        self.alloc_pages_direct_reclaim(order, gfp)
    }

    /// `__alloc_pages_direct_reclaim()` (mm/page_alloc.c, v6.12) for a block
    /// of `order`: `__perform_reclaim` (`try_to_free_pages` for the order);
    /// `if (unlikely(!(*did_some_progress))) goto out;` — a reclaim that
    /// made no progress (nothing reclaimed and not aborted for compaction,
    /// whose `do_try_to_free_pages` returns 1) neither retries the free
    /// lists nor drains; else `get_page_from_freelist` at the min mark,
    /// and on failure `drain_all_pages` and once more. (The kernel's
    /// `unreserve_highatomic_pageblock` before the drain has nothing to do
    /// here: mmsim has no MIGRATE_HIGHATOMIC reserve.) Checked against
    /// v6.12; the slow path's retry loop around it (`should_reclaim_retry`
    /// for non-costly orders) is not modelled: one reclaim per allocation.
    fn alloc_pages_direct_reclaim(&mut self, order: u8, gfp: ThpGfp) -> Option<u64> {
        if self.try_to_free_pages_order(order as usize, gfp.mask) == 0 {
            return None;
        }
        if let Some(p) = self.take_block(order, Wmark::Min) {
            return Some(p);
        }
        self.phys.drain_pages();
        self.take_block(order, Wmark::Min)
    }

    /// A free block of `order` if free pages minus the order's unusable
    /// ones stay above `mark` (`__zone_watermark_ok`).
    pub(crate) fn take_block(&mut self, order: u8, w: Wmark) -> Option<u64> {
        let pfn = self.take_block_unlogged(order, w);
        // The allocation's `kmem:mm_page_alloc_extfrag` events, emitted at
        // its end (`crate::tracepoint::kmem`); nothing is logged when the
        // watermark test failed before the buddy lists were touched.
        if self.phys.zone.extfrag.is_some() {
            self.trace_extfrag_flush();
        }
        pfn
    }

    /// [`Sim::take_block`] without emitting the extfrag events it logged.
    fn take_block_unlogged(&mut self, order: u8, w: Wmark) -> Option<u64> {
        if self.phys.dma.is_some() {
            return self.take_block_zoned(order, w);
        }
        let (n, mark) = (1u64 << order, self.node_wmark(w));
        if self.node.free < n || self.node.free - (n - 1) <= mark {
            return None;
        }
        let pfn = (self.phys).rmqueue_order(order as usize, MigrateType::Movable)?;
        self.node.free -= n;
        Some(pfn)
    }

    /// `fragmentation_score_wmark`: the low (stop) or high (start) mark.
    fn fragmentation_score_wmark(&self, low: bool) -> u64 {
        let wmark_low = 100u64
            .saturating_sub(u64::from(self.compact.cfg.proactiveness))
            .max(5);
        if low {
            wmark_low
        } else {
            (wmark_low + 10).min(100)
        }
    }

    /// The allocation slow path of a large folio with compaction on
    /// (`__alloc_pages_slowpath` for `order`, see the module overview),
    /// after the low-watermark attempt failed. The block's pages leave
    /// `Node::free` as in `take_block`.
    pub(crate) fn alloc_slowpath_compact(&mut self, order: u8, gfp: ThpGfp) -> Option<u64> {
        let o = order as usize;
        if gfp.kswapd {
            self.wakeup_kswapd_order(o, crate::gfp::gfp_zone(gfp.mask), gfp.mask);
        }
        if let Some(p) = self.take_block(order, Wmark::Min) {
            return Some(p);
        }
        if !gfp.direct {
            return None;
        }
        let costly = o > PAGE_ALLOC_COSTLY_ORDER as usize;
        if costly {
            let (page, r) =
                self.alloc_pages_direct_compact_gfp(order, MigrateMode::Async, gfp.mask);
            if page.is_some() {
                return page;
            }
            if gfp.noretry && matches!(r, CompactResult::Skipped | CompactResult::Deferred) {
                return None;
            }
        }
        // `reclaim::direct`'s shrink_zones asks each zone for
        // compaction_ready on every pass (one zone or two).
        if let Some(p) = self.alloc_pages_direct_reclaim(order, gfp) {
            return Some(p);
        }
        let prio = if costly && gfp.noretry {
            MigrateMode::Async
        } else {
            MigrateMode::SyncLight
        };
        self.alloc_pages_direct_compact_gfp(order, prio, gfp.mask).0
    }

    /// Arms kcompactd's first proactive check (at boot, with compaction,
    /// kcompactd and proactiveness on).
    pub(crate) fn compaction_init(&mut self) {
        let c = &self.compact.cfg;
        if c.enabled && c.kcompactd && c.proactiveness > 0 {
            self.compact.proactive_at = HPAGE_FRAG_CHECK_INTERVAL_NS;
            self.timers
                .add_timer(TimerKind::Kcompactd, HPAGE_FRAG_CHECK_INTERVAL_NS);
        }
    }

    /// kcompactd's timer: a requested `kcompactd_do_work`, or the periodic
    /// proactive check; then sleep until the next check.
    pub(crate) fn kcompactd_timer(&mut self, now: u64) {
        let task = std::mem::replace(&mut self.tp_task, TpTask::Kcompactd);
        if self.compact.kcompactd_max_order > 0 {
            self.kcompactd_do_work();
            if self.compact.proactive_at != u64::MAX {
                self.compact.proactive_at = now + HPAGE_FRAG_CHECK_INTERVAL_NS;
            }
        } else if self.compact.proactive_at <= now {
            let mut next = now + HPAGE_FRAG_CHECK_INTERVAL_NS;
            if !self.kswapd.running
                && self.fragmentation_score() > self.fragmentation_score_wmark(false)
            {
                let prev = self.fragmentation_score();
                self.proactive_compact_node();
                if self.fragmentation_score() >= prev {
                    next = now + (HPAGE_FRAG_CHECK_INTERVAL_NS << COMPACT_MAX_DEFER_SHIFT);
                }
            }
            self.compact.proactive_at = next;
        }
        let at = self.compact.proactive_at;
        self.timers
            .set(TimerKind::Kcompactd, (at != u64::MAX).then_some(at));
        if self.tp.is_some() {
            self.trace_compaction(CompactionEvent::KcompactdSleep);
        }
        self.tp_task = task;
    }

    /// kcompactd's counters and CPU time for one run.
    fn kcompactd_account(&mut self, cc: &CompactControl) {
        self.count_vm_events(KCOMPACTD_MIGRATE_SCANNED, cc.total_migrate_scanned);
        self.count_vm_events(KCOMPACTD_FREE_SCANNED, cc.total_free_scanned);
        self.compact.kcompactd_ns += (cc.total_migrate_scanned + cc.total_free_scanned)
            * COMPACT_SCAN_NS
            + cc.migrated * MIGRATE_PAGE_NS;
    }

    /// `compact_zone` (v6.12): see the module overview. Counts
    /// `compact_migrate_scanned`, `compact_free_scanned`, `compact_isolated`,
    /// `pgmigrate_success` and `pgmigrate_fail`.
    fn compact_zone(&mut self, cc: &mut CompactControl) -> CompactResult {
        // The model's per-CPU lists hold up to the low watermark (no
        // adaptive `high`): drained first so that its pages merge and can
        // be targets (the kernel's slow path drains after failed reclaim).
        // (ZONE_DMA has no per-CPU lists: `crate::compaction::zones`.)
        if !self.compact.in_dma {
            self.phys.drain_pages();
        }
        if let Some(o) = cc.order {
            if let Some(r) = self.compact_zone_suit(o) {
                return r;
            }
            if cc.capture {
                self.phys.zone.capture_order = o as u8;
            }
        }
        cc.fast = self.compact.cfg.fast_search;
        if cc
            .order
            .is_some_and(|o| self.compact.compaction_restarting(o as u32))
        {
            self.reset_isolation_suitable_zone();
        }
        self.ensure_mem_map();
        self.phys.zone.materialize_all_pristine();
        let (start, end) = self.phys.pfn_range();
        let sync = usize::from(cc.mode != MigrateMode::Async);
        let last_block = pageblock_start(end - 1);
        if cc.whole_zone {
            cc.migrate_pfn = start;
            cc.free_pfn = last_block;
        } else {
            let c = &mut self.compact;
            cc.migrate_pfn = c.cached_migrate_pfn[sync];
            cc.free_pfn = c.cached_free_pfn;
            // 0 = unset, also in ZONE_DMA, which starts at pfn 0 here (at
            // pfn 1 in x86-64's kernel, so that 0 is below it there too).
            if cc.free_pfn == 0 || cc.free_pfn < start || cc.free_pfn >= end {
                cc.free_pfn = last_block;
                c.cached_free_pfn = cc.free_pfn;
            }
            if cc.migrate_pfn < start || cc.migrate_pfn >= end {
                cc.migrate_pfn = start;
                c.cached_migrate_pfn = [start, start];
            }
            // v6.12 compact_zone(): whole_zone when migrate_pfn <=
            // compact_init_migrate_pfn, which is 0 until the first reset of
            // the skip marks (`__reset_isolation_suitable`) sets it: before
            // one, a zone starting above pfn 0 is never "whole", and its
            // runs whose scanners meet end COMPACT_PARTIAL_SKIPPED. ZONE_DMA
            // starts at pfn 0 here, so its runs from its start are whole
            // from the first (the kernel's starts at pfn 1; both results
            // defer).
            cc.whole_zone = cc.migrate_pfn <= c.init_migrate_pfn;
        }
        if self.tp.is_some() {
            self.trace_compact_zone(cc, None);
        }
        let mut update_cached = sync == 0 && {
            let c = &self.compact.cached_migrate_pfn;
            c[0] == c[1]
        };
        // `last_migrated_pfn` (None for the kernel's 0): the pageblock the
        // last isolation took folios from (`crate::compaction::drain`).
        let mut last_migrated = None;
        let ret = loop {
            let r = self.compact_finished(cc);
            if self.tp.is_some() {
                self.trace_compact_finished(cc, r);
            }
            if r != CompactResult::Continue {
                break r;
            }
            // cc->finish_pageblock (v6.12): the last isolation took folios
            // from the pageblock this iteration starts in (0 for none).
            let finish_pageblock =
                pageblock_start(last_migrated.unwrap_or(0)) == pageblock_start(cc.migrate_pfn);
            match self.isolate_migratepages(cc) {
                Isolate::None => {
                    if update_cached {
                        let c = &mut self.compact.cached_migrate_pfn;
                        c[1] = c[0];
                    }
                    // goto check_drain
                }
                Isolate::Success => {
                    update_cached = false;
                    last_migrated = Some(last_migrated_pfn(cc, start));
                    let (nr_all, before) = (cc.nr_migratepages, cc.migrated);
                    let enomem = self.migrate_pages(cc);
                    if self.tp.is_some() {
                        self.trace_migratepages(nr_all, cc.migrated - before);
                    }
                    if self.phys.zone.captured.is_some() {
                        break CompactResult::Success;
                    }
                    if enomem {
                        if !self.scanners_met(cc) {
                            break CompactResult::Contended;
                        }
                        self.compact_failed_drain(cc, finish_pageblock, &mut last_migrated);
                        if cc.direct && cc.mode == MigrateMode::Async {
                            if let Some(o) = cc.order {
                                cc.migrate_pfn = block_end(cc.migrate_pfn - 1, o);
                            }
                        }
                    }
                }
            }
            self.compact_check_drain(cc, &mut last_migrated);
        };
        // release_free_list, and where the free scanner restarts.
        let mut high = 0;
        for o in 0..NR_PAGE_ORDERS {
            while let Some(p) = cc.freepages[o].pop_front() {
                self.compact_release_page(p, o);
                high = high.max(p);
            }
        }
        if cc.nr_freepages > 0 {
            let free_pfn = pageblock_start(high);
            if free_pfn > self.compact.cached_free_pfn {
                self.compact.cached_free_pfn = free_pfn;
            }
        }
        cc.nr_freepages = 0;
        self.count_vm_events(COMPACTMIGRATE_SCANNED, cc.total_migrate_scanned);
        self.count_vm_events(COMPACTFREE_SCANNED, cc.total_free_scanned);
        if self.tp.is_some() {
            self.trace_compact_zone(cc, Some(ret));
        }
        ret
    }

    /// `compact_scanners_met`.
    fn scanners_met(&self, cc: &CompactControl) -> bool {
        (cc.free_pfn >> PAGEBLOCK_ORDER) <= (cc.migrate_pfn >> PAGEBLOCK_ORDER)
    }

    /// `compact_finished` / `__compact_finished` (v6.12).
    fn compact_finished(&mut self, cc: &CompactControl) -> CompactResult {
        if self.scanners_met(cc) {
            // reset_cached_positions
            let (start, end) = self.phys.pfn_range();
            let c = &mut self.compact;
            c.cached_migrate_pfn = [start, start];
            c.cached_free_pfn = pageblock_start(end - 1);
            c.blockskip_flush |= cc.direct;
            return if cc.whole_zone {
                CompactResult::Complete
            } else {
                CompactResult::PartialSkipped
            };
        }
        if cc.proactive {
            if self.kswapd.running {
                return CompactResult::PartialSkipped;
            }
            return if self.fragmentation_score_zone() > self.fragmentation_score_wmark(true) {
                CompactResult::Continue
            } else {
                CompactResult::Success
            };
        }
        let Some(order) = cc.order else {
            return CompactResult::Continue;
        };
        if !cc.migrate_pfn.is_multiple_of(PAGEBLOCK_NR_PAGES) {
            return CompactResult::Continue;
        }
        let zone = &self.phys.zone;
        let nr_free = zone.buddyinfo();
        for (o, &n) in nr_free.iter().enumerate().skip(order) {
            if zone.has_free(o, MigrateType::Movable) {
                return CompactResult::Success;
            }
            if n > 0
                && can_steal_fallback(o, MigrateType::Movable)
                && MigrateType::Movable
                    .fallbacks()
                    .iter()
                    .any(|&mt| zone.has_free(o, mt))
            {
                return CompactResult::Success;
            }
        }
        CompactResult::Continue
    }

    /// `isolate_migratepages` (v6.12 without `fast_find_migrateblock`):
    /// from the migrate scanner's block up to the free scanner, the first
    /// suitable pageblock is scanned by `isolate_migratepages_block`.
    fn isolate_migratepages(&mut self, cc: &mut CompactControl) -> Isolate {
        let (start, _) = self.phys.pfn_range();
        let mut low_pfn = self.fast_find_migrateblock(cc);
        // fast_find_block: the found block's mark was checked already.
        let mut fast_find_block = low_pfn != cc.migrate_pfn && cc.fast_search_fail == 0;
        let mut block_end_pfn = pageblock_end(low_pfn);
        while block_end_pfn <= cc.free_pfn {
            let block_start = pageblock_start(low_pfn).max(start);
            if (low_pfn == block_start)
                && !std::mem::take(&mut fast_find_block)
                && !self
                    .compact
                    .isolation_suitable(cc.ignore_skip_hint, block_start)
            {
                low_pfn = block_end_pfn;
                cc.migrate_pfn = low_pfn;
                block_end_pfn += PAGEBLOCK_NR_PAGES;
                continue;
            }
            if !self.suitable_migration_source(cc, block_start) {
                self.update_cached_migrate(cc, block_end_pfn);
                low_pfn = block_end_pfn;
                cc.migrate_pfn = low_pfn;
                block_end_pfn += PAGEBLOCK_NR_PAGES;
                continue;
            }
            self.isolate_migratepages_block(cc, low_pfn, block_end_pfn);
            break;
        }
        if cc.nr_migratepages > 0 {
            Isolate::Success
        } else {
            Isolate::None
        }
    }

    /// `suitable_migration_source`: async direct compaction for a movable
    /// allocation scans only movable pageblocks.
    fn suitable_migration_source(&self, cc: &CompactControl, pfn: u64) -> bool {
        if cc.mode != MigrateMode::Async || !cc.direct {
            return true;
        }
        self.phys.zone.pageblock_type(pfn) == MigrateType::Movable
    }

    /// `update_cached_migrate`.
    fn update_cached_migrate(&mut self, cc: &CompactControl, pfn: u64) {
        let c = &mut self.compact.cached_migrate_pfn;
        if pfn > c[0] {
            c[0] = pfn;
        }
        if cc.mode != MigrateMode::Async && pfn > c[1] {
            c[1] = pfn;
        }
    }

    /// Whether compaction may isolate folio `f` (`isolate_migratepages_block`'s
    /// checks, v6.12): on an LRU list, and not under writeback. v6.12
    /// `isolate_migratepages` passes `ISOLATE_ASYNC_MIGRATE` in every mode but
    /// `MIGRATE_SYNC` (since v4.8, 1d2047fefa20), and under it a folio with
    /// PG_writeback is not isolated (`isolate_fail_put`: scanned, not counted
    /// in `compact_isolated`). Both of mmsim's modes, async and sync-light,
    /// are such modes; `MIGRATE_SYNC` (`compact_node` for
    /// `/proc/sys/vm/compact_memory`, `alloc_contig_range`) is not modelled.
    fn folio_isolatable(&self, f: FolioId) -> bool {
        let fo = &self.folios[f];
        fo.test(flags::LRU) && !fo.test(flags::WRITEBACK)
    }

    /// `isolate_migratepages_block` (v6.12): isolates the movable folios of
    /// `[low_pfn, end)` up to `COMPACT_CLUSTER_MAX` pages, and sets
    /// `cc.migrate_pfn` where it stopped.
    fn isolate_migratepages_block(&mut self, cc: &mut CompactControl, mut low_pfn: u64, end: u64) {
        let skip_on_failure = cc.direct && cc.mode == MigrateMode::Async;
        let order = cc.order.unwrap_or(0);
        let mut next_skip_pfn = if skip_on_failure {
            block_end(low_pfn, order)
        } else {
            0
        };
        let (mut nr_scanned, mut nr_isolated) = (0u64, 0u64);
        let mut isolated_here: Vec<FolioId> = Vec::new();
        while low_pfn < end {
            if skip_on_failure && low_pfn >= next_skip_pfn {
                if nr_isolated > 0 {
                    break;
                }
                next_skip_pfn = block_end(low_pfn, order);
            }
            nr_scanned += 1;
            let zone = &self.phys.zone;
            if let Some(o) = zone.buddy_order_at(low_pfn) {
                if o > 0 {
                    low_pfn += (1 << o) - 1;
                    nr_scanned += (1 << o) - 1;
                }
                low_pfn += 1;
                continue;
            }
            let f = zone.frame_folio(low_pfn);
            let mut fail = f == NIL;
            if !fail {
                let head = u64::from(self.folios.head_pfn(f));
                let fo = self.folios[f].order() as usize;
                let too_big = cc.order.is_some_and(|t| fo >= t) || fo >= PAGEBLOCK_ORDER;
                if head != low_pfn || fo > 0 && too_big {
                    // A tail page, or a folio not to move for this order:
                    // skip to its end.
                    let last = head + (1 << fo) - 1;
                    nr_scanned += last - low_pfn;
                    low_pfn = last;
                    fail = true;
                } else if !self.folio_isolatable(f) || !self.nofs_isolatable(cc.gfp_mask, f) {
                    fail = true;
                } else {
                    isolated_here.push(f);
                    let n = 1u64 << fo;
                    cc.nr_migratepages += n;
                    nr_isolated += n;
                    nr_scanned += n - 1;
                    low_pfn += n - 1;
                    if cc.nr_migratepages >= COMPACT_CLUSTER_MAX {
                        low_pfn += 1;
                        break;
                    }
                }
            }
            if fail && skip_on_failure {
                if nr_isolated > 0 {
                    // putback_movable_pages(&cc->migratepages): the kernel's
                    // list holds the last isolated first.
                    let batch = std::mem::take(&mut isolated_here);
                    self.putback_movable_pages(batch.into_iter().rev());
                    cc.nr_migratepages = 0;
                    nr_isolated = 0;
                }
                if low_pfn < next_skip_pfn {
                    low_pfn = next_skip_pfn - 1;
                    next_skip_pfn += 1 << order;
                }
            }
            low_pfn += 1;
        }
        low_pfn = low_pfn.min(end);
        if nr_isolated > 0 && !cc.ignore_skip_hint {
            // test_and_set_skip when the LRU lock is first taken in the block.
            self.compact.set_skip(end - 1);
        }
        if low_pfn == end && nr_isolated == 0 {
            self.compact.set_skip(end - 1);
            self.update_cached_migrate(cc, low_pfn);
        }
        cc.total_migrate_scanned += nr_scanned;
        if nr_isolated > 0 {
            self.count_vm_events(COMPACTISOLATED, nr_isolated);
        }
        cc.migratepages.extend(isolated_here);
        cc.migrate_pfn = low_pfn;
    }

    /// `migrate_pages` with `compaction_alloc` for `cc.migratepages` (the
    /// kernel's list order: the last isolated first). Returns whether a
    /// folio found no target (-ENOMEM); the folios after it stay.
    fn migrate_pages(&mut self, cc: &mut CompactControl) -> bool {
        let list = std::mem::take(&mut cc.migratepages);
        let mut moved = Vec::with_capacity(list.len());
        let mut enomem = false;
        for &f in list.iter().rev() {
            let order = self.folios[f].order() as usize;
            let Some(target) = self.compaction_alloc(cc, order) else {
                self.count_vm_events(PGMIGRATE_FAIL, 1 << order);
                enomem = true;
                // This folio and those after it stay on the list, which
                // compact_zone puts back.
                let left = list.len() - moved.len();
                self.putback_movable_pages(list[..left].iter().rev().copied());
                break;
            };
            if self.folios[f].mapcount > 0 {
                // try_to_migrate with TTU_BATCH_FLUSH (crate::tlb).
                let fo = self.folios[f];
                self.tlb_batch_add(&fo);
            }
            let old = u64::from(self.folios.head_pfn(f));
            self.phys.set_frames_folio(old, order, NIL);
            self.migrate_folio_move(f, target);
            self.migrate_free_old_frames(old, order);
            moved.push(f);
            cc.migrated += 1 << order;
            self.count_vm_events(PGMIGRATE_SUCCESS, 1 << order);
        }
        cc.nr_migratepages = 0;
        self.try_to_unmap_flush(!cc.direct);
        // The sources' ids, once no TLB holds them (crate::compaction::migrate).
        for f in moved {
            self.migrate_free_src(f);
        }
        enomem
    }

    /// `compaction_alloc` (v6.10+): the first isolated free block of
    /// `order`, else of the smallest larger order split (upper halves back
    /// on the lists' heads); the free scanner runs once when they are empty.
    fn compaction_alloc(&mut self, cc: &mut CompactControl, order: usize) -> Option<u64> {
        let mut isolated = false;
        loop {
            if let Some(start) = (order..NR_PAGE_ORDERS).find(|&o| !cc.freepages[o].is_empty()) {
                let pfn = cc.freepages[start].pop_front().expect("non-empty");
                let mut o = start;
                while o > order {
                    o -= 1;
                    cc.freepages[o].push_front(pfn + (1 << o));
                }
                cc.nr_freepages -= 1 << order;
                return Some(pfn);
            }
            if isolated {
                return None;
            }
            self.isolate_freepages(cc);
            isolated = true;
        }
    }

    /// `isolate_freepages` (v6.12 without `fast_isolate_freepages`): down
    /// from the free scanner's pageblock to the one above the migrate
    /// scanner's, until enough pages are isolated.
    fn isolate_freepages(&mut self, cc: &mut CompactControl) {
        self.fast_isolate_freepages(cc);
        if cc.nr_freepages > 0 {
            return;
        }
        let (_, end) = self.phys.pfn_range();
        let mut isolate_start = cc.free_pfn;
        let mut block_start = pageblock_start(isolate_start);
        let mut block_end_pfn = (block_start + PAGEBLOCK_NR_PAGES).min(end);
        let low_pfn = pageblock_end(cc.migrate_pfn);
        let mut stride = if cc.mode == MigrateMode::Async {
            COMPACT_CLUSTER_MAX
        } else {
            1
        };
        while block_start >= low_pfn {
            if self.suitable_migration_target(cc, block_start)
                && self
                    .compact
                    .isolation_suitable(cc.ignore_skip_hint, block_start)
            {
                let nr =
                    self.isolate_freepages_block(cc, &mut isolate_start, block_end_pfn, stride);
                if isolate_start == block_end_pfn {
                    // update_pageblock_skip
                    self.compact.set_skip(block_start);
                    let pfn = block_start - PAGEBLOCK_NR_PAGES;
                    if pfn < self.compact.cached_free_pfn {
                        self.compact.cached_free_pfn = pfn;
                    }
                }
                if cc.nr_freepages >= cc.nr_migratepages {
                    if isolate_start >= block_end_pfn {
                        isolate_start = block_start - PAGEBLOCK_NR_PAGES;
                    }
                    break;
                } else if isolate_start < block_end_pfn {
                    break;
                }
                if nr > 0 {
                    stride = 1;
                } else {
                    stride = (stride << 1).min(COMPACT_CLUSTER_MAX);
                }
            }
            block_end_pfn = block_start;
            block_start -= PAGEBLOCK_NR_PAGES;
            isolate_start = block_start;
        }
        cc.free_pfn = isolate_start;
    }

    /// `suitable_migration_target`: a movable pageblock whose first page is
    /// not a free block of the target order (or of a pageblock) already.
    fn suitable_migration_target(&self, cc: &CompactControl, pfn: u64) -> bool {
        let zone = &self.phys.zone;
        if let Some(o) = zone.buddy_order_at(pfn) {
            let want = cc.order.filter(|&o| o > 0).unwrap_or(PAGEBLOCK_ORDER);
            if o >= want {
                return false;
            }
        }
        zone.pageblock_type(pfn) == MigrateType::Movable
    }

    /// `isolate_freepages_block` (v6.12, not strict): isolates free blocks
    /// from `*start` up to `end` every `stride` pages until the isolated
    /// pages cover the isolated folios; returns the pages isolated.
    fn isolate_freepages_block(
        &mut self,
        cc: &mut CompactControl,
        start: &mut u64,
        end: u64,
        stride: u64,
    ) -> u64 {
        let mut pfn = *start;
        let (mut nr_scanned, mut total) = (0u64, 0u64);
        while pfn < end {
            nr_scanned += 1;
            let zone = &self.phys.zone;
            let Some(order) = zone.buddy_order_at(pfn) else {
                let f = zone.frame_folio(pfn);
                if f != NIL && u64::from(self.folios.head_pfn(f)) == pfn {
                    let n = 1u64 << self.folios[f].order();
                    if n > 1 && pfn + n <= end {
                        pfn += n - 1;
                        nr_scanned += n - 1;
                    }
                }
                pfn += stride;
                continue;
            };
            // __isolate_free_page: the order-0 watermark above min + the block.
            let n = 1u64 << order;
            if !zone.watermark_ok(0, self.compact_wmark_min() + n) {
                break;
            }
            self.phys.zone.isolate_free_block(pfn, order);
            nr_scanned += n - 1;
            total += n;
            cc.nr_freepages += n;
            cc.freepages[order].push_back(pfn);
            if cc.nr_migratepages <= cc.nr_freepages {
                pfn += n;
                break;
            }
            pfn += n - 1;
            pfn += stride;
        }
        *start = pfn.min(end);
        cc.total_free_scanned += nr_scanned;
        if total > 0 {
            self.count_vm_events(COMPACTISOLATED, total);
        }
        total
    }
}

impl CompactControl {
    fn new(order: Option<usize>, mode: MigrateMode, direct: bool, proactive: bool) -> Self {
        CompactControl {
            order,
            mode,
            direct,
            proactive,
            ignore_skip_hint: proactive,
            whole_zone: false,
            migrate_pfn: 0,
            free_pfn: 0,
            migratepages: Vec::new(),
            nr_migratepages: 0,
            freepages: Default::default(),
            nr_freepages: 0,
            total_migrate_scanned: 0,
            total_free_scanned: 0,
            migrated: 0,
            fast: false,
            capture: false,
            search_order: order.unwrap_or(0),
            fast_search_fail: 0,
            fast_start_pfn: FastStart::Unset,
            gfp_mask: crate::gfp::GFP_KERNEL,
        }
    }
}
