//! `[machine.compaction]`: the settings of `crate::compaction` (moved out
//! of compaction.rs to keep it under the line limit).

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;

/// `[machine.compaction]`: memory compaction (off by default) and kswapd's nap (on).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CompactionConfig {
    /// Compact on the allocation slow path and run kcompactd (CONFIG_COMPACTION).
    pub enabled: bool,
    /// `vm.compaction_proactiveness` (0..=100, default 20): kcompactd's
    /// proactive compaction target; 0 turns it off.
    pub proactiveness: u32,
    /// `vm.extfrag_threshold` (0..=1000, default 500): costly orders are
    /// compacted only when the fragmentation index is above it.
    pub extfrag_threshold: u32,
    /// Run kcompactd (woken by kswapd and light allocations, and proactive).
    pub kcompactd: bool,
    /// kswapd reclaims for the order of the allocation that woke it
    /// (v6.12 `wakeup_kswapd` and `balance_pgdat` with `sc.order`:
    /// `pgdat_balanced` at that order, `kswapd_shrink_node` dropping to
    /// order 0 once `compact_gap` pages are reclaimed), then wakes kcompactd
    /// when it sleeps. Default false: kswapd balances order 0 only, and a
    /// high-order wakeup of a balanced node wakes kcompactd at once (the
    /// results before this option).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub kswapd_high_order: bool,
    /// kswapd goes to sleep as v6.12 `kswapd_try_to_sleep` does: when
    /// `prepare_kswapd_sleep` holds (the node balanced, or kswapd hopeless
    /// after `MAX_RECLAIM_RETRIES` fruitless runs; only a balanced node
    /// clears PGDAT_DIRTY) it resets the skip hints and wakes kcompactd,
    /// then naps for HZ/10; a wakeup in the nap counts
    /// `kswapd_low_wmark_hit_quickly`; a node no longer balanced after the
    /// nap (nobody woke kswapd) counts `kswapd_high_wmark_hit_quickly` and
    /// starts another `balance_pgdat`, as does a run that ends unbalanced;
    /// each run is for the order `kswapd()` reads from `kswapd_order` (the
    /// wakeups since the last read). The nap goes back to v2.6.3x, so every
    /// modelled kernel has it: on by default since 2026-11-30 (it moves no
    /// validate row; VALIDATION.md "kswapd's nap"). `false` keeps the
    /// earlier model, for reproducing results recorded with it: kswapd
    /// sleeps at once until an allocation wakes it, and resets the hints
    /// only when the free pages are above the high watermark. Written to
    /// scenarios and results only when false. Lives here because what it
    /// changes is mostly compaction's: how often the skip hints are reset.
    #[serde(skip_serializing_if = "is_true")]
    pub kswapd_nap: bool,
    /// The length of kswapd's short nap in ms of simulated time (v6.12
    /// `kswapd_try_to_sleep`'s `schedule_timeout(HZ/10)`: 100, the
    /// default), and the window in which a wakeup counts
    /// `kswapd_low_wmark_hit_quickly`. The kernel's nap is wall-clock time
    /// of the machine it runs on: a slower machine (the TCG guest, whose
    /// runs of the validate cases take about 4x mmsim's simulated time)
    /// allocates fewer pages per nap, which a shorter simulated nap
    /// reproduces (as `policy.memcg_stats_flush_ms` does for the stats
    /// flusher).
    /// Range 1..=60000; written to scenarios and results only when not 100.
    #[serde(skip_serializing_if = "is_default_nap_ms")]
    pub kswapd_nap_ms: u32,
    /// Pageblock skip hints (v6.12 `PB_migrate_skip`: `isolation_suitable`,
    /// `test_and_set_skip`, `update_pageblock_skip`,
    /// `__reset_isolation_suitable`). Default false: every run scans every
    /// block between the cached positions (the results before this option).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skip_hints: bool,
    /// Direct reclaim for a costly order (the slow path's reclaim between
    /// the two compactions) skips the zone when compaction is ready (v6.12
    /// `shrink_zones` with `compaction_ready`: the allocation could
    /// succeed, or the free pages are above the high watermark +
    /// `compact_gap`), checked before each priority pass, and stops after
    /// the pass that found it ready; the stall is still counted. Default false: it
    /// reclaims `SWAP_CLUSTER_MAX` pages (the results before this option).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub compaction_ready: bool,
    /// The free-list searches of v6.12's scanners: `fast_isolate_freepages`
    /// (the free scanner takes a free block of an order below the target
    /// from the MOVABLE lists, preferring the top quarter of the scan space,
    /// before any linear scan) and `fast_find_migrateblock` (the migrate
    /// scanner starts at a pageblock holding a free block of order
    /// `PAGE_ALLOC_COSTLY_ORDER`..target, in the first half or eighth of the
    /// scan space). Default false: linear scans only (the results before
    /// this option).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fast_search: bool,
    /// Page capture (v6.12 `capture_control`, `compaction_capture` in
    /// `__free_one_page`): during direct compaction, a block of the target
    /// order formed by the frames a migration frees goes straight to the
    /// allocating task (no watermark check) and ends the run with
    /// `COMPACT_SUCCESS`. Default false: the allocation takes a block from
    /// the free lists after the run (the results before this option).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub capture: bool,
    /// A migrated folio goes back on its LRU as v6.12 puts it
    /// (`migrate_folio_move` → `folio_add_lru(dst)`): the source is isolated
    /// (`folio_isolate_lru`; under MGLRU a folio of the two youngest
    /// generations gets PG_active) and the destination added at the head of
    /// the list its flags select, or of the generation `lru_gen_add_folio`
    /// picks (v6.12 inline; `lru_gen_folio_seq` from v6.14); a folio
    /// isolated but not migrated goes back the same way
    /// (`putback_movable_pages` → `folio_putback_lru`). Under MGLRU v6.1 and
    /// v6.12 the destination's tier bits start clear (v6.12
    /// `folio_migrate_flags` does not copy `LRU_REFS_MASK`). Default false: the
    /// destination takes the source's place on its list and the folios not
    /// migrated keep theirs (the results before this option). See
    /// `crate::compaction::migrate`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub migrate_lru_add: bool,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            enabled: false,
            proactiveness: 20,
            extfrag_threshold: 500,
            kcompactd: true,
            kswapd_high_order: false,
            kswapd_nap: true,
            kswapd_nap_ms: DEFAULT_KSWAPD_NAP_MS,
            skip_hints: false,
            compaction_ready: false,
            fast_search: false,
            capture: false,
            migrate_lru_add: false,
        }
    }
}

/// HZ/10 in ms: the default of `kswapd_nap_ms`.
pub(crate) const DEFAULT_KSWAPD_NAP_MS: u32 = 100;

/// `skip_serializing_if` for `kswapd_nap_ms`.
fn is_default_nap_ms(ms: &u32) -> bool {
    *ms == DEFAULT_KSWAPD_NAP_MS
}

/// `skip_serializing_if` for the fields that default to true.
fn is_true(b: &bool) -> bool {
    *b
}

impl CompactionConfig {
    /// Whether every field has its default (the section is left out).
    pub fn is_default(&self) -> bool {
        *self == CompactionConfig::default()
    }

    /// Each knob in its kernel range; the error names the field.
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.proactiveness > 100 {
            return Err(ConfigError::new(
                "machine.compaction.proactiveness",
                format!(
                    "{} is out of range (allowed: 0..=100, as vm.compaction_proactiveness)",
                    self.proactiveness
                ),
            ));
        }
        if self.extfrag_threshold > 1000 {
            return Err(ConfigError::new(
                "machine.compaction.extfrag_threshold",
                format!(
                    "{} is out of range (allowed: 0..=1000, as vm.extfrag_threshold)",
                    self.extfrag_threshold
                ),
            ));
        }
        if !(1..=60_000).contains(&self.kswapd_nap_ms) {
            return Err(ConfigError::new(
                "machine.compaction.kswapd_nap_ms",
                format!(
                    "{} is out of range (allowed: 1..=60000, ms of simulated time; \
                     the kernel's HZ/10 is 100)",
                    self.kswapd_nap_ms
                ),
            ));
        }
        Ok(())
    }

    /// kswapd's nap in ns of simulated time (`kswapd_nap_ms`).
    pub(crate) fn kswapd_nap_ns(&self) -> u64 {
        u64::from(self.kswapd_nap_ms) * 1_000_000
    }
}
