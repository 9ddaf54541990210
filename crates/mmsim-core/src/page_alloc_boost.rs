//! Watermark boosting (mm/page_alloc.c and mm/vmscan.c of Linux v6.12; in
//! every kernel since v5.0), `machine.policy.watermark_boost_factor`.
//!
//! The kernel's default factor is 15000 (`vm.watermark_boost_factor`); mmsim's
//! is 0 (off) until the flip is validated (VALIDATION.md, "boost13"), so
//! recorded results keep their bits.
//!
//! - `boost_watermark()`: a fallback that takes pages from another migrate
//!   type's pageblock below `pageblock_order` (`steal_suitable_fallback`,
//!   whether or not it then claims the block) raises `zone->watermark_boost`
//!   by one pageblock, capped at `max_boost = mult_frac(_watermark[WMARK_HIGH],
//!   factor, 10000)` (at least one pageblock); nothing with factor 0, with no
//!   high watermark yet, or in a zone smaller than four pageblocks (the
//!   small-zone guard).
//! - `wmark_pages()` adds the boost to every mark (`_watermark[i] +
//!   watermark_boost`): here [`Node`](crate::sim::Node)'s `wmark_*` and
//!   `fast_low` carry it, so every reader (the allocator's checks,
//!   `pgdat_balanced`, kswapd's target, compaction's suitability, MGLRU's
//!   `should_abort_scan`, `prepare_scan_control`'s `file_is_tiny`) sees the
//!   boosted marks as in the kernel; `totalreserve_pages` (the dirty limits)
//!   was computed from the unboosted marks and reads [`ZoneBoost::wmark`].
//!   The results' `watermarks` are the boosted marks, as /proc/zoneinfo's
//!   min/low/high are.
//! - ZONE_BOOSTED_WATERMARK: set by a boosting steal whose allocation has
//!   ALLOC_KSWAPD, and tested and cleared by the same allocation's `rmqueue`,
//!   which then calls `wakeup_kswapd(zone, 0, 0, zone_idx)`; so here a
//!   boosting steal wakes kswapd at order 0 at the end of its allocation
//!   ([`Sim::rmqueue_boosted`]) when that allocation may wake kswapd (every
//!   order-0 user and page-table page; a large folio per its `gfp`).
//!   `wakeup_kswapd` wakes a balanced node while any zone is boosted
//!   (`pgdat_watermark_boosted`).
//! - `balance_pgdat`: `nr_boost_reclaim` = the boost at the run's start; while
//!   it lasts reclaim neither swaps nor writes (`may_swap`, `may_writepage`
//!   off; under MGLRU v6.12 and v6.14 it reclaims nothing at all, since
//!   `lru_gen_shrink_node` returns at once without `may_writepage`; v6.1's
//!   `lru_gen_shrink_lruvec` turns `!may_swap` into swappiness 1 for global
//!   reclaim, file first but anon when no file is left in the oldest
//!   generation), the priority stays at or above `DEF_PRIORITY - 2`, and a pass that
//!   reclaims nothing ends the run; a node found unbalanced drops the boosted
//!   mode and restarts at `DEF_PRIORITY` as ordinary reclaim. At the end the
//!   boost the run started with is subtracted and kcompactd is woken at
//!   `pageblock_order` (`wakeup_kcompactd(pgdat, pageblock_order, …)`).
//! - `zone_watermark_fast`'s exception (order-0 ALLOC_MIN_RESERVE allocations
//!   at WMARK_MIN ignore the boost) never applies here: every allocation is a
//!   user, page-cache or page-table page without `__GFP_HIGH`.
//! - `setup_per_zone_wmarks` resets the boost; the marks are set once at
//!   boot here (no runtime `min_free_kbytes` change), when it is 0.
//!
//! Which 6.12: `machine.policy.rmqueue_fallback`. `"6.12"` (the default) is
//! v6.12.0's placement (`steal_suitable_fallback`, which boosts at every
//! fallback below `pageblock_order` before it tries to claim, including a
//! movable allocation's fallback to the smallest block
//! `find_suitable_fallback` finds when it may not steal). `"6.15"` is the
//! v6.15 split into `__rmqueue_claim` and `__rmqueue_steal`, backported to
//! 6.12.29 stable and so in the guest's Debian 6.12.107 (checked in its
//! mm/page_alloc.c): `try_to_steal_block` boosts at each claim attempt
//! below `pageblock_order` (claimed or not), `__rmqueue_steal`'s single-page
//! steals never boost (`crate::page_alloc`'s `rmqueue_claim.rs`). Whether a
//! steal claims its pageblock (the same rule in both) is its `claim.rs`.
//!
//! Not modelled: ZONE_DMA (`machine.dma_zone_pages` is refused with a boost
//! factor); ALLOC_NOFRAGMENT (not modelled by the allocator either). Nothing
//! new is counted: the kernel counts boosted runs only as `pageoutrun` and
//! `compact_daemon_wake`.

use crate::config::{ConfigError, MachineConfig, PolicyName};
use crate::page_alloc::{Zone, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use crate::reclaim::DEF_PRIORITY;
use crate::sim::Sim;

/// A zone's watermark boost (`zone->watermark_boost`, mm/page_alloc.c v6.12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ZoneBoost {
    /// `watermark_boost_factor` (0: off).
    pub factor: u32,
    /// The unboosted `_watermark[WMARK_MIN/LOW/HIGH]`.
    pub wmark: [u64; 3],
    /// `zone->watermark_boost`, pages.
    pub boost: u64,
    /// A steal boosted during the current allocation (`boost_watermark()`
    /// returned true); [`Sim::rmqueue_boosted`] takes it.
    pub pending: bool,
}

impl Zone {
    /// `boost_watermark(zone)` (mm/page_alloc.c, v6.12), called by
    /// v6.12.0's `steal_suitable_fallback` below `pageblock_order` (every
    /// steal), or by v6.15's `try_to_steal_block` (a claim attempt only;
    /// `machine.policy.rmqueue_fallback = "6.15"`, 6.12.107 lines 1937-1970).
    pub(crate) fn boost_watermark(&mut self) {
        let b = &mut self.boost;
        if b.factor == 0 || PAGEBLOCK_NR_PAGES * 4 > self.managed_pages {
            return;
        }
        // mult_frac(high, factor, 10000)
        let high = b.wmark[2];
        let f = u64::from(b.factor);
        let max_boost = (high / 10_000) * f + (high % 10_000) * f / 10_000;
        if max_boost == 0 {
            return;
        }
        let max_boost = max_boost.max(PAGEBLOCK_NR_PAGES);
        b.boost = (b.boost + PAGEBLOCK_NR_PAGES).min(max_boost);
        b.pending = true;
    }
}

impl MachineConfig {
    /// Checks `machine.policy.watermark_boost_factor`: 0..=2147483647 (the
    /// sysctl's `INT_MAX`); with a factor, one zone and the kernel's LRU lists.
    pub(crate) fn validate_watermark_boost(&self) -> Result<(), ConfigError> {
        let f = self.policy.watermark_boost_factor;
        let field = "machine.policy.watermark_boost_factor";
        if f > i32::MAX as u32 {
            return Err(ConfigError::new(
                field,
                format!("{f} is out of range [0, 2147483647]"),
            ));
        }
        if f > 0 && (self.dma_zone_pages > 0 || self.policy.name == PolicyName::Lru) {
            return Err(ConfigError::new(
                field,
                "watermark boosting is modelled for one zone (machine.dma_zone_pages = 0) and \
                 the kernel's LRU lists (policy cost, scanned-rotated or mglru)",
            ));
        }
        Ok(())
    }
}

impl Sim {
    /// Boot: the factor and the unboosted marks (`setup_per_zone_wmarks`
    /// leaves the boost at 0), and each zone's `__rmqueue` fallback variant
    /// (`machine.policy.rmqueue_fallback`), and the per-CPU lists' orders
    /// (`machine.policy.pcp_lists`).
    pub(crate) fn setup_watermark_boost(&mut self) {
        let n = &self.node;
        self.phys.zone.boost = ZoneBoost {
            factor: self.cfg.policy.watermark_boost_factor,
            wmark: [n.wmark_min, n.wmark_low, n.wmark_high],
            boost: 0,
            pending: false,
        };
        self.phys.pcp.orders = self.cfg.policy.pcp_lists;
        if self.phys.pcp.orders == crate::page_alloc::PcpLists::V6_12 {
            // The vmstat worker's first `decay_pcp_high`, a second in.
            let kind = crate::timer::TimerKind::VmstatUpdate;
            self.timers
                .add_timer(kind, crate::page_alloc::VMSTAT_INTERVAL_NS);
        }
        let fallback = self.cfg.policy.rmqueue_fallback;
        self.phys.zone.fallback = fallback;
        if let Some(d) = self.phys.dma.as_mut() {
            d.zone.fallback = fallback;
        }
    }

    /// The end of `rmqueue` after an allocation that may have stolen
    /// (`alloc_kswapd`: the allocation has ALLOC_KSWAPD): a boosting steal
    /// raised the node's marks, and sets and clears ZONE_BOOSTED_WATERMARK,
    /// waking kswapd at order 0.
    #[inline(always)]
    pub(crate) fn rmqueue_boosted(&mut self, alloc_kswapd: bool) {
        if self.phys.zone.extfrag.is_some() {
            // The allocation's `kmem:mm_page_alloc_extfrag` events, emitted in
            // `__rmqueue` before this tail (`crate::tracepoint::kmem`).
            self.trace_extfrag_flush();
        }
        if self.phys.zone.boost.pending {
            self.watermark_boosted(alloc_kswapd);
        }
    }

    #[cold]
    #[inline(never)]
    fn watermark_boosted(&mut self, alloc_kswapd: bool) {
        self.phys.zone.boost.pending = false;
        self.apply_watermark_boost();
        if alloc_kswapd {
            // v6.12 rmqueue: wakeup_kswapd(zone, 0, 0, zone_idx(zone)).
            let idx = crate::tracepoint::compaction::zone_idx(self.phys.zone.name);
            self.wakeup_kswapd_zone(0, idx, 0);
        }
    }

    /// `wmark_pages()`: the node's marks are `_watermark[i] + watermark_boost`.
    fn apply_watermark_boost(&mut self) {
        let b = self.phys.zone.boost;
        let n = &mut self.node;
        n.wmark_min = b.wmark[0] + b.boost;
        n.wmark_low = b.wmark[1] + b.boost;
        n.wmark_high = b.wmark[2] + b.boost;
        n.fast_low = n.wmark_low;
    }

    /// `zone->_watermark[WMARK_HIGH]`, without the boost: the stored mark
    /// (exact also while a steal's boost is pending, not yet in the node's
    /// marks).
    pub(crate) fn high_wmark_unboosted(&self) -> u64 {
        self.phys.zone.boost.wmark[2]
    }

    /// `pgdat_watermark_boosted()` (mm/vmscan.c v6.12).
    pub(crate) fn pgdat_watermark_boosted(&self) -> bool {
        self.phys.zone.boost.boost > 0
    }

    /// `balance_pgdat`'s start: `nr_boost_reclaim` and `zone_boosts[]` are
    /// the boost now (left in place while kswapd runs); ZONE_RECLAIM_ACTIVE
    /// set for the per-CPU lists' `nr_pcp_high`.
    pub(crate) fn kswapd_boost_run_start(&mut self) {
        // `set_reclaim_active` at `restart:` (read by `nr_pcp_high`).
        self.phys.pcp.reclaim_active = true;
        let b = self.phys.zone.boost.boost;
        self.kswapd.nr_boost_reclaim = b;
        self.kswapd.zone_boosts = b;
    }

    /// `balance_pgdat`'s top of the priority loop: `Some(true)` to end the
    /// run (balanced and no boosted reclaim left, `goto out`); a node found
    /// unbalanced during boosted reclaim restarts as ordinary reclaim at
    /// `DEF_PRIORITY` (`goto restart`).
    pub(crate) fn kswapd_boost_loop_top(&mut self, balanced: bool) -> bool {
        let k = &mut self.kswapd;
        if !balanced && k.nr_boost_reclaim > 0 {
            k.nr_boost_reclaim = 0;
            k.priority = DEF_PRIORITY;
        }
        balanced && k.nr_boost_reclaim == 0
    }

    /// After a boosted pass reclaimed `nr`: whether the priority may rise
    /// (not below `DEF_PRIORITY - 2` while boosting, `raise_priority`
    /// cleared), and whether the run ends (a boosted pass that reclaimed
    /// nothing: `break`). `raise` is `kswapd_shrink_node`'s verdict.
    pub(crate) fn kswapd_boost_after_pass(&mut self, raise: bool, nr: u64) -> (bool, bool) {
        let k = &mut self.kswapd;
        let boosting = k.nr_boost_reclaim > 0;
        let raise = raise && !(boosting && k.priority == DEF_PRIORITY - 2);
        k.nr_boost_reclaim -= k.nr_boost_reclaim.min(nr);
        (raise, k.nr_boost_reclaim > 0 && nr == 0)
    }

    /// `balance_pgdat`'s `out:`: ZONE_RECLAIM_ACTIVE cleared; after a
    /// boosted run the boost the run started with is taken off (later
    /// steals' stays) and kcompactd is woken at `pageblock_order`.
    pub(crate) fn kswapd_boost_run_end(&mut self) {
        // `clear_reclaim_active` at `out:`, before the boost's accounting.
        self.phys.pcp.reclaim_active = false;
        let start = std::mem::take(&mut self.kswapd.zone_boosts);
        self.kswapd.nr_boost_reclaim = 0;
        if start == 0 {
            return;
        }
        let b = &mut self.phys.zone.boost.boost;
        *b -= (*b).min(start);
        self.apply_watermark_boost();
        self.wakeup_kcompactd(PAGEBLOCK_ORDER as u32);
    }
}
