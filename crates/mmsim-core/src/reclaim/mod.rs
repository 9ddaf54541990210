//! Page reclaim (mm/vmscan.c, mm/workingset.c, mm/swap.c).
//!
//! Entry points, in `vmscan` (kswapd's own loop in `kswapd`, direct
//! reclaim's entry and its zonelist pass in `direct`):
//!
//! * kswapd (`balance_pgdat`): woken when an allocation finds free pages at
//!   or below the low watermark, reclaims until free pages exceed the high
//!   watermark, priority 12 → 1, on its own simulated CPU;
//! * direct reclaim (`try_to_free_pages`): an allocation at or below the min
//!   watermark reclaims SWAP_CLUSTER_MAX pages itself, priority 12 → 0 (a
//!   costly order on two zones stops after a pass that found a zone
//!   `compaction_ready`; a high order with compaction shrinks the node
//!   again while `should_continue_reclaim` holds);
//! * memcg-limit reclaim (`try_to_free_mem_cgroup_pages`): a charge at
//!   `memory.max` reclaims from the group, with cgroup-reclaim rules.
//!
//! The policy seam: the `cost` and `scanned-rotated` policies share the
//! classic machinery and differ by `crate::sim::ClassicRules`; the `lru`
//! reference policy (`lru`) bypasses it. The `mglru` policy ([`lru_gen`])
//! branches at the entry points (`folio_add_lru`, `folio_mark_accessed`,
//! `shrink_node`/`shrink_lruvec`, the reference check of
//! `shrink_folio_list`, shadows and refaults, writeback rotation) and
//! reuses `shrink_folio_list` for the pageout itself. The hot path dispatches on an
//! enum, never through a trait object.

pub(crate) mod balance;
pub(crate) mod direct;
pub(crate) mod kswapd;
pub(crate) mod lru;
pub mod lru_gen;
pub(crate) mod should_continue_reclaim;
pub(crate) mod vmscan;
pub(crate) mod workingset;

/// kswapd's state between steps.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kswapd {
    /// Inside `balance_pgdat()`.
    pub running: bool,
    /// Current scan priority.
    pub priority: u32,
    /// kswapd's own clock, ns.
    pub clock: u64,
    /// When the current run started (PSI).
    pub run_start: u64,
    /// Pages reclaimed in the current run.
    pub reclaimed: u64,
    /// `kswapd_failures`: fruitless runs in a row (gives up at 16).
    pub failures: u32,
    /// CPU time used, ns.
    pub cpu_ns: u64,
    /// When kswapd last went to sleep (for the hit-quickly counters).
    pub slept_at: u64,
    /// With `compaction.kswapd_nap`: when kswapd's HZ/10 nap ends (0: not
    /// napping; asleep for good or running).
    pub nap_until: u64,
    /// The order `prepare_kswapd_sleep` checks after the nap
    /// (`kswapd_try_to_sleep`'s `reclaim_order`).
    pub nap_order: u32,
    /// With `compaction.kswapd_nap`: `kswapd()`'s `alloc_order`, the order
    /// read from `kswapd_order` for the current (or last) run; kcompactd is
    /// woken for it when a run that ended below it naps.
    pub alloc_order: u32,
    /// Where kswapd's CPU went.
    pub profile: crate::cost::ReclaimProfile,
    /// `balance_pgdat`'s `nr_boost_reclaim`: boosted reclaim left in this
    /// run (`crate::page_alloc_boost`).
    pub nr_boost_reclaim: u64,
    /// `balance_pgdat`'s `zone_boosts[]`: the boost when the run started.
    pub zone_boosts: u64,
    /// Under `policy.kswapd_soft_limit_rounds`: the soft-limit pass of the
    /// current priority iteration, under way.
    pub soft: Option<crate::memcontrol_v1::SoftPass>,
}

/// `SWAP_CLUSTER_MAX`: reclaim batch size.
pub(crate) const SWAP_CLUSTER_MAX: u64 = 32;
/// `DEF_PRIORITY`: initial scan priority (scan size >> priority).
pub(crate) const DEF_PRIORITY: u32 = 12;

/// Who is reclaiming (`current_is_kswapd()`, `cgroup_reclaim()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reclaimer {
    /// kswapd (global).
    Kswapd,
    /// An allocating task (global direct reclaim).
    Direct,
    /// A task charging a memcg at its limit (cgroup reclaim).
    Memcg,
}

/// `enum scan_balance`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScanBalance {
    /// SCAN_EQUAL: scan both types by size.
    Equal,
    /// SCAN_FRACT: split by the balancing fractions.
    Fract,
    /// SCAN_ANON: anon only.
    Anon,
    /// SCAN_FILE: file only.
    File,
}

/// `struct scan_control`: one reclaim invocation's parameters and results.
#[derive(Clone, Debug)]
pub(crate) struct ScanControl {
    /// Reclaimer kind.
    pub who: Reclaimer,
    /// Goal in pages.
    pub nr_to_reclaim: u64,
    /// Pages reclaimed so far.
    pub nr_reclaimed: u64,
    /// Pages scanned in the current priority pass.
    pub nr_scanned: u64,
    /// Scan priority: lists are scanned size >> priority.
    pub priority: u32,
    /// Anonymous pages may be swapped.
    pub may_swap: bool,
    /// Dirty folios may be written (`may_writepage`; off in kswapd's
    /// boosted reclaim, `crate::page_alloc_boost`).
    pub may_writepage: bool,
    /// `may_deactivate` for [anon, file].
    pub may_deactivate: [bool; 2],
    /// An active list was not deactivated because may_deactivate forbade it.
    pub skipped_deactivate: bool,
    /// kswapd's soft-limit pass was run already, step by step
    /// (`policy.kswapd_soft_limit_rounds`): `shrink_node` skips it.
    pub soft_done: bool,
    /// Retry with deactivation forced.
    pub force_deactivate: bool,
    /// Reclaim file only while inactive file is plentiful and not thrashing.
    pub cache_trim_mode: bool,
    /// File cache is about to run out: reclaim anon.
    pub file_is_tiny: bool,
    /// anon_cost snapshot at the reclaim root.
    pub anon_cost: u64,
    /// file_cost snapshot at the reclaim root.
    pub file_cost: u64,
    /// File folios isolated in this shrink_node pass.
    pub nr_file_taken: u64,
    /// Dirty file folios not yet queued for IO, this pass.
    pub nr_unqueued_dirty: u64,
    /// When the reclaimer started, ns.
    pub start: u64,
    /// CPU time used so far, ns.
    pub cpu_ns: u64,
    /// Time spent waiting for the block layer (a full request queue), ns.
    pub io_wait_ns: u64,
    /// The reclaim root (`sc->target_mem_cgroup`; the top group for global reclaim).
    pub target: crate::memcg::MemcgId,
    /// The group whose lruvec is being shrunk.
    pub memcg: crate::memcg::MemcgId,
    /// Second pass: reclaim below `memory.low` too (`memcg_low_reclaim`).
    pub memcg_low_reclaim: bool,
    /// A group was skipped or spared for its `memory.low` (`memcg_low_skipped`).
    pub memcg_low_skipped: bool,
    /// `memory.reclaim`'s `swappiness=` (`sc->proactive_swappiness`).
    pub proactive_swappiness: Option<u32>,
    /// MGLRU: the page-table walker of a reclaimer other than kswapd
    /// (`current->reclaim_state->mm_walk`): `Some(walk->can_swap)` once its
    /// aging walked page tables (`try_to_inc_max_seq()` allocates it with
    /// `set_mm_walk(NULL…)`), `None` before that and after `clear_mm_walk()`
    /// at the end of `lru_gen_shrink_lruvec()` (and, v6.12 and v6.14, of
    /// `lru_gen_shrink_node()`); a debugfs write's commands have one from
    /// the start (`lru_gen_seq_write()`). Look-around acts as kswapd's while
    /// it is set (v6.1, v6.12 and v6.14 mm/vmscan.c).
    pub mm_walk: Option<bool>,
    /// Where `cpu_ns` went (kswapd's profile).
    pub prof: crate::cost::ReclaimProfile,
    /// CPUs sharing the reclaimer's clock: 1 for kswapd (its own CPU), the
    /// workload's `machine.cpus` for reclaim in the workload's tasks, whose
    /// elapsed time moves the shared clock by 1/par (see [`crate::smp`]).
    pub par: u64,
    /// Reclaim without checking references (`shrink_folio_list`'s
    /// `ignore_references`, v6.10+): `reclaim_pages()` for DAMON's pageout.
    pub ignore_references: bool,
    /// `sc->order` (v6.12): the order of the allocation direct reclaim runs
    /// for (`try_to_free_pages`), kswapd's `balance_pgdat` order
    /// (`Compaction::kswapd_reclaim_order`, dropped to 0 once
    /// `kswapd_shrink_node` has reclaimed `compact_gap` pages), 0 for memcg
    /// reclaim. Read by MGLRU's `should_abort_scan` (v6.12, v6.14: its goal,
    /// `max(nr_to_reclaim, compact_gap(sc->order))`; v6.1's reads no
    /// order); classic reclaim's `compaction_ready` reads
    /// [`ScanControl::compaction_ready_order`], which is set only when that
    /// check is modelled; `memcg1_soft_limit_reclaim` does nothing for
    /// `order > 0`; classic (and v6.1 MGLRU) `shrink_node` shrinks the node
    /// again at the same priority while `should_continue_reclaim` holds
    /// (with `compaction.enabled`: for a costly order, or any order > 0
    /// below `DEF_PRIORITY - 2`, while the pass reclaimed something, no
    /// zone is ready or `compaction_suitable` and more than
    /// `compact_gap(sc->order)` inactive pages remain;
    /// `crate::reclaim::should_continue_reclaim`).
    ///
    /// [`Compaction::kswapd_reclaim_order`]: crate::compaction::Compaction::kswapd_reclaim_order
    pub order: u32,
    /// A costly allocation's order whose `compaction_ready` direct reclaim's
    /// `shrink_zones` asks of each zone before every pass
    /// (with `compaction.enabled` and `compaction.compaction_ready`; 0: not
    /// asked).
    pub compaction_ready_order: usize,
    /// `sc->compaction_ready`: a zone was skipped as `compaction_ready`;
    /// `do_try_to_free_pages` stops after this pass (v6.12).
    pub compaction_ready: bool,
    /// This reclaimer as an `lru_lock` requester (0 until it first takes
    /// the lock with `machine.cpus` > 1; see [`crate::smp::LruLock::acquire_by`]).
    pub lock_owner: u64,
    /// Set by the last `try_to_unmap` of a large page-cache folio: whether
    /// it cleared a PTE (`set_tlb_ubc_flush_pending`, mm/rmap.c v6.12),
    /// not only split PMDs, which flush themselves (`crate::filemap_pmd`).
    pub unmapped_ptes: bool,
    /// v6.1 MGLRU: `lru_gen_shrink_lruvec()`'s `need_swapping`, set by
    /// `evict_folios()` when it isolated a batch of anonymous folios
    /// (`type == LRU_GEN_ANON` with a non-empty list); read by v6.1
    /// `should_abort_scan()` (`crate::reclaim::lru_gen`). Cleared at the
    /// start of each lruvec's shrink.
    pub mglru_need_swapping: bool,
    /// `sc->gfp_mask` (v6.12): the reclaiming allocation's mask
    /// (`current_gfp_context(gfp)`), memcg reclaim's
    /// [`crate::gfp::memcg_reclaim_mask`] of the charge's, `GFP_KERNEL` for
    /// kswapd (`balance_pgdat`), knob writes and `memory.high`. Read by
    /// `may_enter_fs()` in `shrink_folio_list` (`crate::reclaim::vmscan`'s
    /// `shrink_folio_list.rs`): without `__GFP_FS` (readahead's
    /// `memalloc_nofs_save` scope) a folio under writeback is not waited for
    /// and a dirty one is not written, unless it is in the swap cache and
    /// the mask has `__GFP_IO`.
    pub gfp_mask: crate::gfp::Gfp,
}

impl ScanControl {
    /// A scan control at DEF_PRIORITY starting at `now`.
    pub(crate) fn new(who: Reclaimer, nr_to_reclaim: u64, now: u64) -> Self {
        ScanControl {
            who,
            nr_to_reclaim,
            nr_reclaimed: 0,
            nr_scanned: 0,
            priority: DEF_PRIORITY,
            may_swap: true,
            may_writepage: true,
            may_deactivate: [false, false],
            skipped_deactivate: false,
            soft_done: false,
            force_deactivate: false,
            cache_trim_mode: false,
            file_is_tiny: false,
            anon_cost: 0,
            file_cost: 0,
            nr_file_taken: 0,
            nr_unqueued_dirty: 0,
            start: now,
            cpu_ns: 0,
            io_wait_ns: 0,
            target: crate::memcg::ROOT,
            memcg: crate::memcg::ROOT,
            memcg_low_reclaim: false,
            memcg_low_skipped: false,
            proactive_swappiness: None,
            mm_walk: None,
            prof: crate::cost::ReclaimProfile::default(),
            par: 1,
            ignore_references: false,
            order: 0,
            compaction_ready_order: 0,
            compaction_ready: false,
            lock_owner: 0,
            unmapped_ptes: false,
            mglru_need_swapping: false,
            gfp_mask: crate::gfp::GFP_KERNEL,
        }
    }

    /// The same scan control run by one of `par` CPUs sharing the workload clock.
    pub(crate) fn on_cpus(mut self, par: u64) -> Self {
        self.par = par.max(1);
        self
    }

    /// Charges LRU list work.
    #[inline]
    pub(crate) fn charge_lru(&mut self, ns: u64) {
        self.cpu_ns += ns;
        self.prof.lru_ns += ns;
    }
    /// Charges one `page_vma_mapped_walk` of one mapping.
    #[inline]
    pub(crate) fn charge_rmap(&mut self, ns: u64) {
        self.cpu_ns += ns;
        self.prof.rmap_ns += ns;
        self.prof.rmap_walks += 1;
    }
    /// Charges `ptes` PTEs examined by a page-table walk or look-around.
    #[inline]
    pub(crate) fn charge_pt_walk(&mut self, ptes: u64, ns_per_pte: u64) {
        self.cpu_ns += ptes * ns_per_pte;
        self.prof.pt_walk_ns += ptes * ns_per_pte;
        self.prof.ptes_walked += ptes;
    }
    /// Charges freeing a folio.
    #[inline]
    pub(crate) fn charge_free(&mut self, ns: u64) {
        self.cpu_ns += ns;
        self.prof.free_ns += ns;
    }
    /// Charges writeback submission.
    #[inline]
    pub(crate) fn charge_pageout(&mut self, ns: u64) {
        self.cpu_ns += ns;
        self.prof.pageout_ns += ns;
    }
    /// Charges spinning on a contended `lru_lock`.
    #[inline]
    pub(crate) fn charge_lock_wait(&mut self, ns: u64) {
        self.cpu_ns += ns;
        self.prof.lock_ns += ns;
    }
    /// Charges synchronous compression (zram) on the reclaimer's CPU.
    #[inline]
    pub(crate) fn charge_compress(&mut self, ns: u64) {
        self.cpu_ns += ns;
        self.prof.compress_ns += ns;
    }

    /// The reclaimer's current time on its clock: start plus CPU used plus
    /// IO waits, shared by `par` CPUs. One CPU (the common case) takes no
    /// division: `shrink_folio_list` asks once per folio it writes.
    #[inline]
    pub(crate) fn now(&self) -> u64 {
        let t = self.cpu_ns + self.io_wait_ns;
        self.start + if self.par == 1 { t } else { t / self.par }
    }

    /// Elapsed time of the reclaim so far (CPU and waits).
    pub(crate) fn elapsed(&self) -> u64 {
        self.cpu_ns + self.io_wait_ns
    }
}
