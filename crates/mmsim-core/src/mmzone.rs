//! The node's second zone, ZONE_DMA (`machine.dma_zone_pages`, opt-in;
//! include/linux/mmzone.h and mm/page_alloc.c of Linux v6.12).
//!
//! With `dma_zone_pages` = 0 (the default) the node is one zone
//! (`crate::page_alloc`'s overview) and nothing here runs. With N > 0 the
//! node's lowest N page frames are ZONE_DMA (PFNs `0..N`, as x86-64's
//! DMA zone holds the PFNs below 16 MiB) and the rest is the upper zone
//! (`PhysMem::zone`, named DMA32 on a machine of at most 4 GiB as in a
//! guest of 512 MiB, else Normal; its PFNs start at 4 GiB as the single
//! zone's do). Each zone has its own buddy free lists, pageblocks and free
//! count; `Node::free` is their sum (with the per-CPU lists, which hold
//! upper-zone pages only).
//!
//! - Watermarks: `__setup_per_zone_wmarks` splits `min_free_kbytes` by
//!   each zone's managed pages (`min = pages_min × managed / lowmem_pages`,
//!   then `low`/`high` add `max(min / 4, managed × watermark_scale_factor /
//!   10000)` each). The node's watermarks (`Node::wmark_*`, which reclaim
//!   and kswapd still read) are the zones' sums.
//! - `lowmem_reserve`: `setup_per_zone_lowmem_reserve` with
//!   `lowmem_reserve_ratio[ZONE_DMA]` = 256: DMA keeps the upper zone's
//!   managed pages / 256 from allocations that could use the upper zone
//!   (every allocation here: user pages and page cache are
//!   `GFP_HIGHUSER_MOVABLE`, highest zone ZONE_MOVABLE); the upper zone
//!   reserves nothing for itself.
//! - Allocation (`get_page_from_freelist`): the zonelist, upper zone
//!   first, then DMA, each against its own watermark plus
//!   `lowmem_reserve[highest_zoneidx]` (`zone_watermark_fast`,
//!   `__zone_watermark_ok`); the slow path (`__alloc_pages_slowpath`)
//!   walks it again at the min watermark after waking kswapd and after
//!   each direct reclaim. The per-access fast path's node check is
//!   switched off (`Node::fast_low`), so every allocation walks the
//!   zonelist.
//! - kswapd (mm/vmscan.c): `pgdat_balanced` is true when **any** zone is
//!   balanced at its high watermark plus its `lowmem_reserve`
//!   (`zone_watermark_ok_safe`), so a DMA above high + reserve lets kswapd
//!   sleep while the upper zone is below its own high watermark;
//!   `kswapd_shrink_node` reclaims Σ max(high, `SWAP_CLUSTER_MAX`) over the
//!   zones.
//! - Compaction per zone (`crate::compaction::zones`): each zone's own
//!   scanners, cached PFNs, skip hints and deferral; direct compaction,
//!   kcompactd and proactive compaction walk the zones.
//! - Direct reclaim for a costly order (`shrink_zones` with
//!   `compaction.compaction_ready`, `crate::reclaim::direct`): the node is
//!   skipped only when every zone is `compaction_ready`, each with its own
//!   watermarks, reserve and fragmentation index, and direct reclaim stops
//!   after a pass that found some zone ready (`do_try_to_free_pages`).
//! - Classic reclaim's `should_continue_reclaim`
//!   (`crate::reclaim::should_continue_reclaim`): the node is shrunk again
//!   only while no zone, each with its own watermarks (DMA with its
//!   `lowmem_reserve`), could take the allocation at its min watermark or
//!   is `compaction_suitable`.
//! - MGLRU's `should_abort_scan` (kswapd, order 0): every zone above its
//!   high watermark + `MIN_LRU_BATCH` (DMA with its `lowmem_reserve`).
//!
//! Not modelled (yet): DMA's per-CPU list (DMA's order-0 pages go to and
//! from its buddy lists directly; its `zone_batchsize` is 1 on a 16 MiB
//! zone); kswapd's other reads such as the sleep-time checks of the
//! node's free pages (they read the node's sums); DMA in DAMON's physical
//! address range, buddyinfo and
//! the results' pagetypeinfo; the LRU stays per node, as in the kernel
//! (movable allocations use both zones, so reclaim skips nothing).

use crate::compaction_skip::fragmentation_index;
use crate::config::{ConfigError, MachineConfig, PolicyName};
use crate::page_alloc::{
    MigrateType, PerCpuPages, PhysMem, Zone, NORMAL_START_PFN, PAGE_ALLOC_COSTLY_ORDER,
};
use crate::reclaim::SWAP_CLUSTER_MAX;
use crate::sim::Sim;

/// `lowmem_reserve_ratio[ZONE_DMA]` (mm/page_alloc.c, v6.12 default).
pub(crate) const DMA_LOWMEM_RESERVE_RATIO: u64 = 256;
/// Largest ZONE_DMA: 16 MiB (`MAX_DMA_PFN` on x86-64).
pub(crate) const MAX_DMA_PAGES: u64 = 4096;

/// Which watermark an allocation is checked against (`ALLOC_WMARK_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wmark {
    /// `ALLOC_WMARK_MIN`.
    Min,
    /// `ALLOC_WMARK_LOW`.
    Low,
}

/// One zone's watermarks (`zone->_watermark[]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ZoneWmarks {
    /// WMARK_MIN.
    pub min: u64,
    /// WMARK_LOW.
    pub low: u64,
    /// WMARK_HIGH.
    pub high: u64,
}

/// The node (`pg_data_t`, include/linux/mmzone.h): free pages and
/// watermarks (with ZONE_DMA, the zones' sums).
#[derive(Clone, Debug, Default)]
pub(crate) struct Node {
    /// Managed pages.
    pub managed: u64,
    /// Free pages.
    pub free: u64,
    /// WMARK_MIN.
    pub wmark_min: u64,
    /// WMARK_LOW.
    pub wmark_low: u64,
    /// WMARK_HIGH.
    pub wmark_high: u64,
    /// The order-0 fast path's mark: WMARK_LOW, or none (`u64::MAX`) with two zones.
    pub fast_low: u64,
    /// PGDAT_DIRTY: kswapd met only dirty file pages at the inactive tail.
    pub dirty: bool,
}

impl ZoneWmarks {
    /// The mark of `w`.
    pub(crate) fn get(&self, w: Wmark) -> u64 {
        match w {
            Wmark::Min => self.min,
            Wmark::Low => self.low,
        }
    }
}

/// `__setup_per_zone_wmarks` (mm/page_alloc.c, v6.12) for one zone of
/// `managed` pages on a node of `lowmem_pages` managed pages, with
/// `pages_min` = `min_free_kbytes` / 4.
pub(crate) fn zone_wmarks(managed: u64, lowmem_pages: u64, pages_min: u64, wsf: u32) -> ZoneWmarks {
    let min = pages_min * managed / lowmem_pages.max(1);
    let gap = (min >> 2).max(managed * u64::from(wsf) / 10_000);
    ZoneWmarks {
        min,
        low: min + gap,
        high: min + 2 * gap,
    }
}

/// ZONE_DMA and the zone-level state of the two-zone node.
#[derive(Debug, Clone)]
pub(crate) struct DmaZone {
    /// ZONE_DMA's frames and free lists (PFNs `0..dma_zone_pages`).
    pub zone: Zone,
    /// DMA's watermarks.
    pub wmark: ZoneWmarks,
    /// The upper zone's watermarks.
    pub upper_wmark: ZoneWmarks,
    /// DMA's `lowmem_reserve[]` for allocations whose highest zone is above
    /// it (the upper zone's managed pages / 256).
    pub lowmem_reserve: u64,
    /// The zone the zonelist walk picked for the next order-0 frame is DMA.
    pub take_dma: bool,
}

impl PhysMem {
    /// Whether `pfn` is a frame of ZONE_DMA (none without it).
    pub(crate) fn dma_in_zone(&self, pfn: u64) -> bool {
        let dma = self.dma.as_ref().map_or(0, |d| d.zone.spanned_pages);
        pfn < dma
    }

    /// Frees the block at `pfn` to its zone's buddy lists (ZONE_DMA's
    /// below the upper zone).
    pub(crate) fn free_block(&mut self, pfn: u64, order: usize) {
        match self.dma.as_mut().filter(|_| pfn < self.zone.start_pfn) {
            Some(d) => d.zone.free_pages_block(pfn, order),
            None => self.zone.free_pages_block(pfn, order),
        }
    }
}

impl MachineConfig {
    /// Checks `machine.dma_zone_pages`: 0, or 1..=4096 (16 MiB) and less than
    /// the machine's pages; not with the `lru` policy or a sampled node.
    pub(crate) fn validate_dma_zone(&self) -> Result<(), ConfigError> {
        let n = self.dma_zone_pages;
        if n == 0 {
            return Ok(());
        }
        let max = MAX_DMA_PAGES.min(self.memory.pages().saturating_sub(1));
        if n > max {
            return Err(ConfigError::new(
                "machine.dma_zone_pages",
                format!(
                    "{n} is out of range [0, {max}]: ZONE_DMA is at most 16 MiB (4096 pages) \
                     and smaller than the machine ({} pages), which keeps a second zone",
                    self.memory.pages()
                ),
            ));
        }
        if self.policy.name == PolicyName::Lru || self.sample_rate.is_some() {
            return Err(ConfigError::new(
                "machine.dma_zone_pages",
                "a second zone needs the kernel's LRU lists (policy cost, scanned-rotated or \
                 mglru) and a whole node (not machine.sample_rate)",
            ));
        }
        Ok(())
    }
}

impl Sim {
    /// Splits the node into ZONE_DMA and the upper zone
    /// (`machine.dma_zone_pages` > 0; nothing otherwise), before anything is
    /// allocated: per-zone watermarks (`__setup_per_zone_wmarks`), DMA's
    /// `lowmem_reserve` (`setup_per_zone_lowmem_reserve`), the upper zone's
    /// per-CPU list (`zone_batchsize`, `zone_highsize` of its own managed
    /// pages and low watermark), and the node's watermarks as the sums.
    pub(crate) fn setup_dma_zone(&mut self) {
        let dma = self.cfg.dma_zone_pages;
        if dma == 0 {
            return;
        }
        let managed = self.node.managed;
        let upper = managed - dma;
        let kb = self
            .cfg
            .min_free_kbytes
            .unwrap_or_else(|| crate::sim::int_sqrt(managed * 4 * 16).clamp(128, 262_144));
        let wsf = self.cfg.watermark_scale_factor;
        let wd = zone_wmarks(dma, managed, kb / 4, wsf);
        let wu = zone_wmarks(upper, managed, kb / 4, wsf);
        let name = if managed <= 1 << 20 {
            "DMA32"
        } else {
            "Normal"
        };
        self.phys.zone = Zone::new(name, NORMAL_START_PFN, upper);
        self.phys.pcp = PerCpuPages::new(upper, wu.low, self.cfg.cpus);
        self.phys.dma = Some(Box::new(DmaZone {
            zone: Zone::new("DMA", 0, dma),
            wmark: wd,
            upper_wmark: wu,
            lowmem_reserve: upper / DMA_LOWMEM_RESERVE_RATIO,
            take_dma: false,
        }));
        let n = &mut self.node;
        n.wmark_min = wd.min + wu.min;
        n.wmark_low = wd.low + wu.low;
        n.wmark_high = wd.high + wu.high;
        n.fast_low = u64::MAX;
    }

    /// The node's watermark `w` (`Node::wmark_*`: the zones' sums).
    pub(crate) fn node_wmark(&self, w: Wmark) -> u64 {
        match w {
            Wmark::Min => self.node.wmark_min,
            Wmark::Low => self.node.wmark_low,
        }
    }

    /// Free pages of the upper zone: its buddy lists and the per-CPU lists
    /// (`Node::free` less DMA's).
    pub(crate) fn upper_free(&self) -> u64 {
        self.debug_assert_upper_zone_in("upper_free");
        let dma = self.phys.dma.as_ref().map_or(0, |d| d.zone.free_pages());
        self.node.free - dma
    }

    /// `get_page_from_freelist` for one order-0 page on the two-zone node:
    /// the zone whose free pages stay above its watermark `w` (plus DMA's
    /// `lowmem_reserve`), upper zone first; `Some(true)` for DMA.
    pub(crate) fn zonelist_order0(&self, w: Wmark) -> Option<bool> {
        let d = self.phys.dma.as_ref()?;
        if self.upper_free() > d.upper_wmark.get(w) {
            return Some(false);
        }
        (d.zone.free_pages() > d.wmark.get(w) + d.lowmem_reserve).then_some(true)
    }

    /// Takes one order-0 page from the zone [`Sim::zonelist_order0`] picks
    /// at `w` (out of `Node::free`; the frame is taken by the caller's
    /// `alloc_order0`), or false.
    fn take_order0_zoned(&mut self, w: Wmark) -> bool {
        let Some(dma) = self.zonelist_order0(w) else {
            return false;
        };
        self.take_order0_from(dma);
        true
    }

    /// `zone_reclaimable_pages()` (v6.12.107 mm/vmscan.c 368-386) of the
    /// upper zone, read exactly as its `zone_page_state_snapshot()`: the
    /// file LRU pages, plus the anon ones when `can_reclaim_anon_pages()`
    /// (free swap slots, `get_nr_swap_pages() > 0`; mmsim has no demotion
    /// targets), or its free pages when both are empty. Departure: mmsim
    /// keeps no per-zone LRU counts, so every LRU page counts in the upper
    /// zone (the node's only zone without ZONE_DMA) and ZONE_DMA has none.
    pub(crate) fn zone_reclaimable_pages(&self, zone_free: u64) -> u64 {
        use crate::mem::folio::LruList;
        let s = self.subtree_lruvec(crate::memcg::ROOT).sizes;
        let mut nr = s[LruList::InactiveFile as usize] + s[LruList::ActiveFile as usize];
        if self.swap.as_ref().is_some_and(|d| d.nr_free() > 0) {
            nr += s[LruList::InactiveAnon as usize] + s[LruList::ActiveAnon as usize];
        }
        if nr == 0 {
            nr = zone_free;
        }
        nr
    }

    /// `should_reclaim_retry()`'s watermark test (v6.12.107
    /// mm/page_alloc.c 4160-4235, order 0): would a zone of the zonelist
    /// pass its min mark (`__zone_watermark_ok` on free plus
    /// [`Sim::zone_reclaimable_pages`], DMA's with its `lowmem_reserve`) if
    /// all its reclaimable pages were freed? If none would, direct reclaim
    /// stops retrying and the allocation goes to the OOM killer. Not
    /// modelled: `unreserve_highatomic_pageblock()` before OOM.
    pub(crate) fn reclaim_could_pass_min(&self) -> bool {
        match self.phys.dma.as_ref() {
            None => {
                let free = self.node.free;
                free + self.zone_reclaimable_pages(free) > self.node.wmark_min
            }
            Some(d) => {
                let (upper, dma) = (self.upper_free(), d.zone.free_pages());
                upper + self.zone_reclaimable_pages(upper) > d.upper_wmark.min
                    || 2 * dma > d.wmark.min + d.lowmem_reserve
            }
        }
    }

    fn take_order0_from(&mut self, dma: bool) {
        if let Some(d) = self.phys.dma.as_mut() {
            d.take_dma = dma;
        }
        self.node.free -= 1;
    }

    /// `__alloc_pages` of one order-0 page on the two-zone node (see
    /// `Sim::alloc_page`): the zonelist at the low watermark, then wake
    /// kswapd, at the min watermark, direct reclaim with retries, and the
    /// OOM killer (`__GFP_NORETRY`: one reclaim, then failure,
    /// `crate::page_alloc::alloc_pages_slowpath`).
    pub(crate) fn alloc_page_zoned(&mut self, gfp: crate::gfp::Gfp) -> bool {
        if self.take_order0_zoned(Wmark::Low) {
            return true;
        }
        self.wakeup_kswapd_zone(0, crate::gfp::gfp_zone(gfp), gfp);
        if self.take_order0_zoned(Wmark::Min) {
            return true;
        }
        let mut no_progress_loops = 0;
        while no_progress_loops <= crate::fault::MAX_RECLAIM_RETRIES {
            let reclaimed = self.try_to_free_pages_order(0, gfp);
            if self.take_order0_zoned(Wmark::Min) {
                return true;
            }
            if crate::page_alloc::alloc_pages_slowpath::noretry_gives_up(gfp) {
                return false;
            }
            if !self.reclaim_could_pass_min() {
                break;
            }
            if !crate::fault::reclaim_retry(reclaimed, &mut no_progress_loops)
                && !self.reclaim_throttle_writeback()
            {
                break;
            }
        }
        if self.out_of_memory(None) && self.node.free > 0 {
            // Any free page, upper zone first.
            let dma = self.upper_free() == 0;
            self.take_order0_from(dma);
            return true;
        }
        false
    }

    /// `get_page_from_freelist` for a block of `order` on the two-zone node:
    /// each zone in zonelist order whose free pages less the order's
    /// unusable ones stay above its watermark `w` (DMA's plus its
    /// `lowmem_reserve`) and that has a free block of the order.
    pub(crate) fn take_block_zoned(&mut self, order: u8, w: Wmark) -> Option<u64> {
        self.debug_assert_upper_zone_in("take_block_zoned");
        let d = self.phys.dma.as_ref()?;
        let n = 1u64 << order;
        let (upper_mark, dma_mark) = (d.upper_wmark.get(w), d.wmark.get(w) + d.lowmem_reserve);
        let upper = self.upper_free();
        if upper >= n && upper - (n - 1) > upper_mark {
            if let Some(p) = (self.phys).rmqueue_order(order as usize, MigrateType::Movable) {
                self.node.free -= n;
                return Some(p);
            }
        }
        let d = self.phys.dma.as_mut()?;
        let free = d.zone.free_pages();
        if free >= n && free - (n - 1) > dma_mark {
            let p = d.zone.alloc_pages(order as usize, MigrateType::Movable)?;
            self.node.free -= n;
            return Some(p);
        }
        None
    }
}

/// `skip_serializing_if` of `machine.dma_zone_pages`: the default, 0.
pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What kswapd and direct reclaim read per zone on the two-zone node
/// (mm/vmscan.c, v6.12).
impl Sim {
    /// `pgdat_balanced` (v6.12) on the two-zone node: true when **any**
    /// zone, bottom-up (DMA, then the upper zone), is balanced:
    /// `zone_watermark_ok_safe(zone, order, high_wmark_pages(zone),
    /// highest_zoneidx)`, which adds the zone's `lowmem_reserve` (DMA's
    /// for a movable allocation; the upper zone's own is 0). The upper
    /// zone's order-0 check reads its free pages with the per-CPU lists',
    /// as the one-zone check reads `Node::free`.
    pub(crate) fn pgdat_balanced_zoned(&self, order: u32) -> bool {
        let Some(d) = self.phys.dma.as_ref() else {
            return false;
        };
        self.debug_assert_upper_zone_in("pgdat_balanced");
        let o = order as usize;
        if d.zone.watermark_ok(o, d.wmark.high + d.lowmem_reserve) {
            return true;
        }
        let high = d.upper_wmark.high;
        self.upper_free() > high && (o == 0 || self.phys.zone.watermark_ok(o, high))
    }

    /// MGLRU's `should_abort_scan` (v6.12) for kswapd on the two-zone node:
    /// every zone passes `zone_watermark_ok(zone, 0, high + extra,
    /// reclaim_idx, 0)`, i.e. its free pages are above its high watermark +
    /// `extra` (DMA's + its `lowmem_reserve`; the upper zone's free pages
    /// with the per-CPU lists', as in [`Sim::pgdat_balanced_zoned`]).
    pub(crate) fn zones_watermark_ok_order0(&self, extra: u64) -> bool {
        let Some(d) = self.phys.dma.as_ref() else {
            return false;
        };
        d.zone.free_pages() > d.wmark.high + extra + d.lowmem_reserve
            && self.upper_free() > d.upper_wmark.high + extra
    }

    /// `kswapd_shrink_node`'s `sc->nr_to_reclaim` (v6.12): Σ over the
    /// node's zones of max(high watermark, `SWAP_CLUSTER_MAX`).
    pub(crate) fn kswapd_nr_to_reclaim(&self) -> u64 {
        match self.phys.dma.as_ref() {
            None => self.node.wmark_high.max(SWAP_CLUSTER_MAX),
            Some(d) => {
                d.wmark.high.max(SWAP_CLUSTER_MAX) + d.upper_wmark.high.max(SWAP_CLUSTER_MAX)
            }
        }
    }

    /// `shrink_zones` with `compaction_ready` (v6.12) for a costly order on
    /// the two-zone node: the node is skipped only when **every** zone is
    /// ready (the first zone of the zonelist that is not ready has the
    /// node shrunk). A zone is ready when the allocation could succeed at
    /// its min watermark, or compaction is suitable and its free pages are
    /// above high + `compact_gap(order)`, each with the zone's
    /// `lowmem_reserve`.
    pub(crate) fn compaction_ready_zoned(&self, order: usize) -> bool {
        self.zone_compaction_ready(order, false) && self.zone_compaction_ready(order, true)
    }

    /// `compaction_suitable(zone, order, highest_zoneidx)` (v6.12) of one
    /// zone with `free` pages: above its watermark (low for costly orders,
    /// else min) + `reserve` + `compact_gap`, and for costly orders a
    /// fragmentation index of the zone above `extfrag_threshold`.
    pub(crate) fn zone_compaction_suitable(
        &self,
        zone: &Zone,
        free: u64,
        wm: ZoneWmarks,
        reserve: u64,
        order: usize,
    ) -> bool {
        self.zone_compaction_suitable_result(zone, free, wm, reserve, order)
            == crate::tracepoint::compaction::status::CONTINUE
    }

    /// `compaction_suitable`'s result as its tracepoint prints it (v6.12):
    /// `COMPACT_SKIPPED` below the watermark, `COMPACT_NOT_SUITABLE_ZONE` by
    /// the fragmentation index, else `COMPACT_CONTINUE` (suitable).
    pub(crate) fn zone_compaction_suitable_result(
        &self,
        zone: &Zone,
        free: u64,
        wm: ZoneWmarks,
        reserve: u64,
        order: usize,
    ) -> u8 {
        use crate::tracepoint::compaction::status;
        let costly = order > PAGE_ALLOC_COSTLY_ORDER as usize;
        let mark = if costly { wm.low } else { wm.min } + reserve + (2u64 << order);
        if free <= mark {
            return status::SKIPPED;
        }
        if costly {
            let idx = fragmentation_index(&zone.buddyinfo(), order);
            if idx >= 0 && idx <= i64::from(self.compact.cfg.extfrag_threshold) {
                return status::NOT_SUITABLE_ZONE;
            }
        }
        status::CONTINUE
    }
}
