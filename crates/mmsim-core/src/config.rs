//! The typed machine description, validated once on load.
//!
//! A scenario file (TOML) and the command line both end up here. Every field
//! has a documented default and an allowed range; [`MachineConfig::validate`]
//! names the offending field and its range, so an impossible scenario is a
//! clear error before anything runs. Sizes are written as bytes with a K/M/G/T
//! suffix (binary units) or as pages with a `p` suffix (`512M`, `131072p`).

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::config_defaults::*;
use crate::cost::CostModel;
pub use crate::memcg_stats::MemcgStatsFlush;
pub use crate::page_alloc::{BootPageblocks, PcpLists, RmqueueFallback};
pub use crate::reclaim::lru_gen::version::MglruRefaultActivate;
use crate::PAGE_SIZE;

/// Error in a scenario or a command-line setting: names the field and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// Dotted path of the field, e.g. `machine.memory` or `swap.size`.
    pub field: String,
    /// What is wrong and what range is allowed.
    pub message: String,
}

impl ConfigError {
    /// Builds an error for `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            field: field.into(),
            message: message.into(),
        }
    }
}

pub use crate::config_size::Size;

/// The reclaim policy: which LRU design runs and which kernel era it follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyName {
    /// Textbook LRU (not a kernel policy): every reference moves the page to the
    /// head, eviction takes exactly the tail page needed to fit. A reference for
    /// golden tests against published LRU numbers and other simulators.
    Lru,
    /// Classic active/inactive LRU balanced by recent_scanned/recent_rotated, as
    /// in v4.9 (the model of ≈3.11–5.7).
    ScannedRotated,
    /// Classic active/inactive LRU balanced by refault/IO cost (`lru_note_cost`),
    /// as in v5.8+ with the v6.2 rotation weighting by default.
    #[default]
    Cost,
    /// Multi-gen LRU (`lru_gen`, v6.1+), in the version [`MglruVersion`]
    /// selected by `mglru_version` (see `crate::reclaim::lru_gen`).
    Mglru,
}

crate::setting_names! { PolicyName, "policy",
    Lru => "lru",
    ScannedRotated => "scanned-rotated",
    Cost => "cost" | "classic",
    Mglru => "mglru" | "lru_gen",
}

/// Which `lru_note_cost()` weighting the `cost` policy uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum CostVariant {
    /// v5.8–v6.1: every cost event weighs its page count; only refault restores
    /// and reclaim writeback are events.
    #[serde(rename = "v5.8")]
    V5_8,
    /// v6.2+: IO weighs SWAP_CLUSTER_MAX (32) per page, rotations 1 per page
    /// ("mm: vmscan: make rotations a secondary factor in balancing anon vs file").
    #[default]
    #[serde(rename = "v6.2")]
    V6_2,
}

crate::setting_names! { CostVariant, "cost variant",
    V5_8 => "v5.8" | "5.8",
    V6_2 => "v6.2" | "6.2",
}

impl fmt::Display for CostVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which multi-gen LRU the `mglru` policy models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum MglruVersion {
    /// v6.1 (the first release, "MGLRU-v1" of the spec, ≈6.1–6.11 where
    /// later changes are not modelled): faults enter `max_seq`, one young
    /// sighting promotes, tiers 1:2 gains, kswapd ages in `lru_gen_age_node`.
    #[serde(rename = "v6.1")]
    V6_1,
    /// v6.12 (mm/vmscan.c, mm/swap.c, mm/workingset.c, include/linux/mm_inline.h
    /// read in Debian's 6.12 source; also 6.13): the refs, tiers, PID
    /// controller, aging feedback and refault test of v6.1 with "mm/mglru: fix
    /// underprotected page cache" and the retry of folios written back while
    /// isolated; the memcg LRU and driving loops of v6.14. Its own rules:
    /// `lru_gen_look_around()` clears a young neighbour's refs and activates
    /// it (`folio_activate()`) whatever their number, `folio_check_references()`
    /// is the classic one on PG_referenced (which `isolate_folio()` clears),
    /// `lru_gen_add_folio()` clears an active folio's refs and PG_referenced,
    /// `sort_folio()` has no writeback clause and counts no
    /// `workingset_activate`, and every recent refault counts
    /// `workingset_activate`.
    #[serde(rename = "v6.12")]
    V6_12,
    /// v6.14 (current, "MGLRU-v2"): `lru_gen_folio_seq` insertion, two
    /// sightings before promotion, 2:3 gains, aging only on the eviction path,
    /// the memcg LRU.
    #[default]
    #[serde(rename = "v6.14")]
    V6_14,
}

crate::setting_names! { MglruVersion, "mglru version",
    V6_1 => "v6.1" | "6.1",
    V6_12 => "v6.12" | "6.12",
    V6_14 => "v6.14" | "6.14",
}

fn default_exact_shadows() -> bool {
    true
}

fn default_true() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

fn default_lru_gen_enabled() -> u32 {
    0x0007
}

/// Policy section of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// Policy name: `lru`, `scanned-rotated`, `cost` (alias `classic`), `mglru`.
    #[serde(default)]
    pub name: PolicyName,
    /// For `cost`: `v6.2` (default, current kernels) or `v5.8`.
    #[serde(default)]
    pub cost_variant: CostVariant,
    /// For `mglru`: `v6.14` (default), `v6.12` or `v6.1`.
    #[serde(default)]
    pub mglru_version: MglruVersion,
    /// For `mglru`: `/sys/kernel/mm/lru_gen/enabled` (default 0x0007):
    /// bit 0 the MGLRU core (clear: the classic lists of the `cost` policy),
    /// bit 1 the page-table walk of aging (`LRU_GEN_MM_WALK`), bit 2
    /// non-leaf PMD young bits (`LRU_GEN_NONLEAF_YOUNG`, accepted, not
    /// modelled). Range 0..=7.
    #[serde(default = "default_lru_gen_enabled")]
    pub lru_gen_enabled: u32,
    /// For `mglru`: `/sys/kernel/mm/lru_gen/min_ttl_ms` (default 0, off):
    /// kswapd invokes the OOM killer rather than evict a working set whose
    /// oldest generation is younger than this. Range 0..=4294967295.
    #[serde(default)]
    pub min_ttl_ms: u64,
    /// When reclaim's memcg statistics are flushed (classic LRU): `sync`
    /// (default; up to 6.11, `mem_cgroup_flush_stats()` at every
    /// `shrink_node`) or `ratelimited` (6.12+: only the periodic flusher
    /// every 2 s, so `prepare_scan_control()` and the refault test read
    /// statistics up to 2 s old) or `reclaim`. See [`MemcgStatsFlush`].
    #[serde(default)]
    pub memcg_stats_flush: MemcgStatsFlush,
    /// For `memcg_stats_flush = "ratelimited"`: the periodic flusher's
    /// period in ms of simulated time (default 2000, the kernel's
    /// `FLUSH_TIME` = 2 × HZ). The kernel's period is wall-clock time of the
    /// machine it runs on; a slower machine (a TCG guest) runs fewer
    /// accesses per period, which a shorter simulated period reproduces.
    /// Range 1..=3600000.
    #[serde(default = "crate::memcg_stats::default_flush_ms")]
    pub memcg_stats_flush_ms: u64,
    /// For `ratelimited`: a reader of each top-level group's `memory.stat`
    /// every this many ms of simulated time, which flushes the group past the
    /// update threshold (`crate::memcg_stats`). Default 0 (none, not written
    /// to results); 0..=3600000.
    #[serde(default, skip_serializing_if = "crate::memcg_stats::is_zero")]
    pub memcg_stats_read_ms: u64,
    /// For `ratelimited`: the CPUs of the update threshold only
    /// (`MEMCG_CHARGE_BATCH × num_online_cpus()`); 0 (default, not written to
    /// results): `machine.cpus`. 0..=4096 (`crate::memcg_stats`).
    #[serde(default, skip_serializing_if = "crate::memcg_stats::is_zero_u32")]
    pub memcg_stats_cpus: u32,
    /// For `mglru` `v6.14`: which refaults count `WORKINGSET_ACTIVATE_*`:
    /// `fault` (default, 6.14+) or `recent` (6.12–6.13). See
    /// [`MglruRefaultActivate`]. The `v6.12` model counts every recent
    /// refault whatever it says; `v6.1` ignores it.
    #[serde(default)]
    pub mglru_refault_activate: MglruRefaultActivate,
    /// For `mglru` `v6.1`: 6.1.69+ stable's "mm/mglru: fix underprotected page
    /// cache" (081488051d28, 6.7; Debian 6.1.0-17+). Default false (6.1.0). With
    /// it `sort_folio()` protects saturated refs whatever `tier_idx`,
    /// `lru_gen_add_folio()` adds clean cold folios to min_seq + 1 (pending ones
    /// to max_seq − 1), and `lru_gen_refault()` restores from refs 3 with the
    /// refs saturated (6.1.192 source). v6.12 has it always and v6.14 ignores
    /// it; written only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mglru_fix_underprotected: bool,
    /// For `mglru` (every version): swap and file writes that completed by
    /// the reclaimer's clock are completed while multi-gen LRU reclaim runs
    /// (`folio_end_writeback()` → `folio_rotate_reclaimable()`, which the
    /// kernel runs from the bio completion interrupt, concurrently with
    /// reclaim): before each `evict_folios()` isolates its batch and after
    /// its `shrink_folio_list()`, as the classic path does before each
    /// `shrink_inactive_list()`. On by default since 2026-11-29 (it brought
    /// the 6.1 and 6.12 guests' anon MGLRU cases from +149 % and +82 % swap
    /// writes to within 2.5 %, VALIDATION.md). `false` keeps the earlier
    /// model, for reproducing results recorded with it: writes complete only
    /// when the workload's clock reaches them, so one long reclaim (a memcg
    /// limit reclaim that waits on a full device queue) writes folio after
    /// folio without freeing any, and the written folios wait in the swap
    /// cache, where the workload's stores dirty them again. Written to
    /// results only when false.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub mglru_writeback_in_reclaim: bool,
    /// For `mglru` `v6.1`: "mm: multi-gen LRU: retry folios written back
    /// while isolated" (359a5e1416ca, Nov 2022, read in Debian's 6.1.192
    /// source): `evict_folios()` gives the clean, unmapped, inactive,
    /// unreferenced survivors of `shrink_folio_list()` (folios whose write
    /// completed while they were isolated, so `folio_rotate_reclaimable()`
    /// missed them) one more pass, and puts every other rejected folio back
    /// active with its refs, PG_referenced and PG_workingset cleared.
    /// Default false: the v6.1 model's putback keeps the refs and has no
    /// retry. The v6.12 and v6.14 models always have both (v6.12 as 6.1.192,
    /// v6.14 its own) and ignore the field.
    /// Written to results only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mglru_retry_written_back: bool,
    /// For `mglru` `v6.1`: `lru_gen_look_around()` follows 6.1's own rule
    /// (mm/vmscan.c, read in 6.1.192): without a page-table walker (kswapd's,
    /// or one a direct reclaimer's aging left) and fewer than `PAGEVEC_SIZE` (15) young
    /// neighbours to promote, each goes through `folio_activate()`: moved to
    /// max_seq's list at once, its refs kept, counted in `pgactivate`
    /// (instead of having its generation rewritten in place for
    /// `sort_folio()` to move and count in `pgrefill`); isolated neighbours
    /// get PG_referenced. Default false: the earlier model, every promoted
    /// neighbour's generation rewritten in place. The v6.12 model (which
    /// activates every one, `look_around_v6_12`) and v6.14 ignore it.
    /// Written to results only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mglru_look_around_activate: bool,
    /// For `mglru` with `mglru_writeback_in_reclaim`: the writes a batch's
    /// `shrink_folio_list()` starts stay in the block plug that
    /// `lru_gen_shrink_lruvec()` holds around its eviction loop
    /// (`blk_start_plug()` … `blk_finish_plug()`, 6.1 and 6.12 mm/vmscan.c;
    /// a batch's swap writes merge into one request, which the plug keeps
    /// until the next request or the end), so none of them completes
    /// before `evict_folios()` puts the batch back: a written folio is not
    /// freed by the retry of folios written back while isolated but rotated
    /// by `folio_rotate_reclaimable()` when its write ends and freed by a
    /// later isolation (counted again in `pgscan`). Writes of earlier
    /// batches complete by the reclaimer's clock as before. Default false:
    /// a write may complete while its batch is isolated. Written to results
    /// only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mglru_writeback_plugged: bool,
    /// For `mglru` `v6.12`: "mm/mglru: reset page lru tier bits when
    /// activating" (Wei Xu; mainline 6.13, 6.12.114 stable; in Debian's
    /// 6.12.117 source, not in its 6.12.107): `lru_gen_add_folio()` clears an
    /// active folio's refs and PG_referenced (PG_workingset kept), and
    /// `lru_gen_look_around()` clears a neighbour's refs, PG_referenced and
    /// PG_workingset (`folio_clear_lru_refs()`) before `folio_activate()`.
    /// Default false (6.12.0 to 6.12.113: the refs stay). Other versions
    /// ignore it. Written to results only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mglru_reset_tier_bits: bool,
    /// For `mglru` `v6.12`: "mm/mglru: use the common routine for
    /// dirty/writeback reactivation" (Kairui Song; 6.12.114 stable; in
    /// Debian's 6.12.117 source, not in its 6.12.107): `sort_folio()` no
    /// longer moves a folio under writeback or a dirty file folio to
    /// min_seq + 1 with PG_reclaim; it is isolated and `shrink_folio_list()`
    /// deals with it. Default false (6.12.0 to 6.12.113: `sort_folio()`'s
    /// "waiting for writeback" clause, counting a dirty file folio in
    /// `nr.file_taken` and, unless under writeback, `nr.unqueued_dirty`).
    /// Other versions ignore it. Written to results only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mglru_common_reactivation: bool,
    /// Classic LRU: kswapd's `shrink_node()` sets PGDAT_DIRTY only if the
    /// pass counted a dirty page (`unqueued_dirty && unqueued_dirty ==
    /// file_taken`, "mm: fix shrink nr.unqueued_dirty counter issue", 6.13):
    /// default true. False: 4.16–6.12's bare equality (6.12.118 too), true
    /// also for a pass that took no file page. MGLRU with lru_gen's core
    /// bit clear runs the classic path and reads it; MGLRU proper ignores it
    /// (v6.1 tests the bare equality, v6.12 and v6.14 kswapd never reach
    /// the test). Written to results only when false.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub pgdat_dirty_guard: bool,
    /// v1 soft limits (tree, classic LRU; refused elsewhere): kswapd runs
    /// `memcg1_soft_limit_reclaim()` one `mem_cgroup_shrink_node()` per step
    /// of its clock, and before `shrink_node()` as v6.12 `balance_pgdat()`
    /// does (timing and order; see `crate::memcontrol_v1`, which also gives
    /// the default path's departure). False (default): the whole pass in one
    /// step, all its pages free at its start. Written only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub kswapd_soft_limit_rounds: bool,
    /// The writer's `balance_dirty_pages()` pause (`crate::page_writeback_throttle`) and
    /// background writeback per wb (`crate::wb_over_bg_thresh`); default off.
    #[serde(default, skip_serializing_if = "is_false")]
    pub dirty_throttle: bool,
    /// `balance_dirty_pages_ratelimited_flags()`'s ratelimit
    /// (`crate::page_writeback_ratelimit`: each task's `nr_dirtied_pause`,
    /// the `dirty_exceeded` clamp, the per-CPU `bdp_ratelimits` against
    /// `ratelimit_pages`, `dirty_throttle_leaks`; every kernel since 3.2):
    /// `balance_dirty_pages()`, and with it the start of background
    /// writeback, runs only when the writing task has dirtied its
    /// ratelimit. Default false: every dirtying of a clean folio balances
    /// (mmsim's older model; with `dirty_throttle` the pause has the task's
    /// ratelimit, background writeback does not). The evidence is v6.12's
    /// code (background writeback starts only inside `balance_dirty_pages()`,
    /// reached only through the gate); the 6.12 guest's buffered writer
    /// (`validation/guest-dirty`, VALIDATION.md) never leaves freerun and is
    /// consistent with both settings. The default is not flipped yet.
    /// Written to results only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub bdp_ratelimit: bool,
    /// cgroup v1 limit reclaim's sleep after it wakes the flusher
    /// (`reclaim_throttle(pgdat, VMSCAN_THROTTLE_WRITEBACK)` in
    /// `shrink_inactive_list()`, v6.1 through v6.18; see
    /// `crate::reclaim::vmscan::reclaim_throttle`): a batch whose every taken
    /// page was dirty and not queued for IO wakes the flusher, and under v1
    /// (`writeback_throttling_sane()` false) the reclaimer then waits for
    /// more than SWAP_CLUSTER_MAX pages of writeback to end, at most HZ/10.
    /// Default false (mmsim's older model: no wait). Written only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub v1_reclaim_throttle: bool,
    /// `vm.watermark_boost_factor` (`crate::page_alloc_boost`; range 0..=2147483647, as the
    /// sysctl's `SYSCTL_ZERO`..`INT_MAX`). The kernel's default is 15000; mmsim's is 0 (off)
    /// until the flip is validated. Written to results only when set.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub watermark_boost_factor: u32,
    /// `__rmqueue`'s fallback (`crate::page_alloc`'s `rmqueue_claim.rs`): `"6.12"` (default,
    /// v6.12.0–6.12.28: a boost at every steal below pageblock order) or `"6.15"` (also 6.12.29+,
    /// the guest's 6.12.107: claim, then steal the smallest block; a boost only at a claim
    /// attempt). Written to results only when not the default.
    #[serde(default, skip_serializing_if = "is_default_fallback")]
    pub rmqueue_fallback: RmqueueFallback,
    /// The per-CPU page lists' orders (`crate::page_alloc`'s `pcp.rs`):
    /// `"order-0"` (default: before v5.14, and mmsim's older model) or
    /// `"6.12"` (orders 1–3 and the PMD order too, v5.14+ with v6.12's THP
    /// lists and high-order free rules). Written to results only when not
    /// the default.
    #[serde(default, skip_serializing_if = "is_default_pcp_lists")]
    pub pcp_lists: PcpLists,
}

fn is_default_pcp_lists(p: &PcpLists) -> bool {
    *p == PcpLists::default()
}

fn is_default_fallback(f: &RmqueueFallback) -> bool {
    *f == RmqueueFallback::default()
}

fn is_false(b: &bool) -> bool {
    !b
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            name: PolicyName::default(),
            cost_variant: CostVariant::default(),
            mglru_version: MglruVersion::default(),
            lru_gen_enabled: default_lru_gen_enabled(),
            min_ttl_ms: 0,
            memcg_stats_flush: MemcgStatsFlush::default(),
            memcg_stats_flush_ms: crate::memcg_stats::default_flush_ms(),
            memcg_stats_read_ms: 0,
            memcg_stats_cpus: 0,
            mglru_refault_activate: MglruRefaultActivate::default(),
            mglru_fix_underprotected: false,
            mglru_writeback_in_reclaim: true,
            mglru_retry_written_back: false,
            mglru_look_around_activate: false,
            mglru_writeback_plugged: false,
            mglru_reset_tier_bits: false,
            mglru_common_reactivation: false,
            pgdat_dirty_guard: true,
            kswapd_soft_limit_rounds: false,
            dirty_throttle: false,
            bdp_ratelimit: false,
            v1_reclaim_throttle: false,
            watermark_boost_factor: 0,
            rmqueue_fallback: RmqueueFallback::default(),
            pcp_lists: PcpLists::default(),
        }
    }
}

/// How global reclaim honours cgroup v1 soft limits
/// (`memory.soft_limit_in_bytes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SoftLimitReclaim {
    /// The per-node tree of groups over their soft limit, the biggest
    /// offender reclaimed at priority 0 before each global reclaim pass
    /// (`memcg1_soft_limit_reclaim`: 2.6.32–3.11 and again in current kernels).
    #[default]
    Tree,
    /// Seed 004's rework (3.12-rc1, reverted before 3.12): each global
    /// reclaim pass first shrinks only groups that are, or have an ancestor,
    /// over their soft limit, and all groups if that scanned nothing.
    #[serde(rename = "seed-004")]
    Seed004,
    /// Soft limits are ignored (as under MGLRU).
    Off,
}

crate::setting_names! { SoftLimitReclaim, "soft-limit reclaim",
    Tree => "tree",
    Seed004 => "seed-004",
    Off => "off",
}

/// Which cgroup hierarchy the memory controller is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CgroupVersion {
    /// cgroup v1 (legacy): `memory.limit_in_bytes`, soft limits, per-group
    /// swappiness; its limit reclaim waits for writeback of folios it finds
    /// under writeback twice (`writeback_throttling_sane()` is false).
    V1,
    /// cgroup v2 (the default): `memory.max/high/low/min`.
    #[default]
    V2,
}

/// Kind of a block device, which sets latency and bandwidth defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// No device (only valid for swap).
    None,
    /// Compressed RAM (zram): synchronous, CPU-bound, microseconds.
    Zram,
    /// NVMe-class flash.
    Ssd,
    /// Rotational disk: random IO dominated by seek and rotation.
    Hdd,
    /// Latency and bandwidth given explicitly.
    Custom,
    /// Swap only: a swap partition (or file) on the filesystem's disk. Swap IO
    /// then has the filesystem device's timing and shares its transfer pipe
    /// and request queue, so swapping and file IO slow each other down, as on
    /// a single-disk machine.
    Fs,
}

crate::setting_names! { DeviceKind, "device",
    None => "none",
    Zram => "zram",
    Ssd => "ssd",
    Hdd => "hdd",
    Custom => "custom",
    Fs => "fs",
}

/// A block device: swap or filesystem.
///
/// Defaults per kind (typical datasheet figures for 4 KiB random IO at queue
/// depth 1; override with `read_latency_us`, `write_latency_us`, `bandwidth_mbps`):
///
/// | kind | read µs | write µs | MB/s | source |
/// |---|---|---|---|---|
/// | zram | 3 | 6 | 2000 | lz4 ≈ 1–3 µs per page decompress, ≈ 2× to compress (zram docs/benchmarks) |
/// | ssd | 90 | 30 | 2000 | NVMe TLC random 4K read ≈ 80–100 µs QD1, writes land in cache |
/// | hdd | 8000 | 8000 | 150 | 7200 rpm: ≈ 4 ms average rotation + ≈ 4 ms seek |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Device kind.
    pub device: DeviceKind,
    /// Capacity (swap only; ignored for the filesystem device).
    #[serde(default)]
    pub size: Option<Size>,
    /// Latency of one read, microseconds.
    #[serde(default)]
    pub read_latency_us: Option<f64>,
    /// Latency of one write, microseconds.
    #[serde(default)]
    pub write_latency_us: Option<f64>,
    /// Sustained bandwidth, MB/s (10^6 bytes per second).
    #[serde(default)]
    pub bandwidth_mbps: Option<f64>,
    /// Requests the block layer keeps in flight before a writer sleeps
    /// (`nr_requests`), 1..=65536; default 128 (`BLKDEV_DEFAULT_RQ`).
    #[serde(default)]
    pub queue_depth: Option<u32>,
    /// Filesystem device only: the filesystem gives its files large folios
    /// (`mapping_set_large_folios()`, as ext4 does since 6.16 and xfs since
    /// 5.18), so readahead allocates page-cache folios of up to
    /// `MAX_PAGECACHE_ORDER` (9) with v6.18's `page_cache_ra_order` (see
    /// `crate::readahead`) and buffered writes folios of the write's size
    /// (v6.18's `write_begin`, `crate::filemap_write`). Off (the default):
    /// order-0 page cache, v6.6 readahead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub large_folios: bool,
    /// Filesystem device with `large_folios` only: a PMD-size page-cache
    /// folio is mapped by a PMD at a fault (`do_set_pmd`, v6.18; counted
    /// `thp_file_mapped`, `crate::filemap_pmd`). Off (the default): mapped
    /// by PTEs, as before this option.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pmd_mappings: bool,
    /// Filesystem device: ext4's buffer heads on written folios, charged (`crate::kmem::buffer_head`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub buffer_heads: bool,
    /// Filesystem device (ignored for swap): readahead folios stay locked
    /// until their read completes (`crate::readahead::read_lock`). Off:
    /// until the batch ends.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ra_lock_until_read: bool,
}

/// Default block-layer request queue depth (`BLKDEV_DEFAULT_RQ`).
pub(crate) const DEFAULT_QUEUE_DEPTH: u32 = 128;

impl DeviceConfig {
    /// A device of `kind` with its defaults.
    pub fn of(kind: DeviceKind) -> Self {
        DeviceConfig {
            device: kind,
            size: None,
            read_latency_us: None,
            write_latency_us: None,
            bandwidth_mbps: None,
            queue_depth: None,
            large_folios: false,
            pmd_mappings: false,
            buffer_heads: false,
            ra_lock_until_read: false,
        }
    }

    /// (read latency ns, write latency ns, ns per 4 KiB page of transfer).
    pub fn timing(&self) -> (u64, u64, u64) {
        let (r, w, bw) = match self.device {
            DeviceKind::Zram => (3.0, 6.0, 2000.0),
            DeviceKind::Ssd => (90.0, 30.0, 2000.0),
            DeviceKind::Hdd => (8000.0, 8000.0, 150.0),
            DeviceKind::Custom | DeviceKind::None | DeviceKind::Fs => (100.0, 100.0, 1000.0),
        };
        let r = self.read_latency_us.unwrap_or(r);
        let w = self.write_latency_us.unwrap_or(w);
        let bw = self.bandwidth_mbps.unwrap_or(bw);
        let per_page = (PAGE_SIZE as f64) / (bw * 1e6) * 1e9;
        ((r * 1e3) as u64, (w * 1e3) as u64, per_page.max(1.0) as u64)
    }

    fn validate(&self, field: &str, needs_size: bool) -> Result<(), ConfigError> {
        if self.device == DeviceKind::Custom
            && (self.read_latency_us.is_none() || self.bandwidth_mbps.is_none())
        {
            return Err(ConfigError::new(
                format!("{field}.device"),
                "a custom device needs read_latency_us and bandwidth_mbps",
            ));
        }
        for (name, v, max) in [
            ("read_latency_us", self.read_latency_us, 1e7),
            ("write_latency_us", self.write_latency_us, 1e7),
            ("bandwidth_mbps", self.bandwidth_mbps, 1e6),
        ] {
            if let Some(v) = v {
                if !(v.is_finite() && v > 0.0 && v <= max) {
                    return Err(ConfigError::new(
                        format!("{field}.{name}"),
                        format!("{v} is out of range (0, {max}]"),
                    ));
                }
            }
        }
        if let Some(q) = self.queue_depth {
            if !(1..=65536).contains(&q) {
                return Err(ConfigError::new(
                    format!("{field}.queue_depth"),
                    format!("{q} is out of range [1, 65536]"),
                ));
            }
        }
        if needs_size && self.device != DeviceKind::None && self.size.is_none() {
            return Err(ConfigError::new(
                format!("{field}.size"),
                "a swap device needs a size, e.g. size = \"4G\"",
            ));
        }
        Ok(())
    }
}

/// The simulated machine: one NUMA node with one zone, a root memory cgroup,
/// an optional swap device and a filesystem device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    /// Total memory of the node (managed pages).
    pub memory: Size,
    /// `vm.min_free_kbytes`; default from the kernel's formula
    /// (`init_per_zone_wmark_min`: clamp(int_sqrt(lowmem_kB × 16), 128, 262144)).
    #[serde(default)]
    pub min_free_kbytes: Option<u64>,
    /// `vm.watermark_scale_factor` in 1/10000 of memory (kernel default 10, range 1..=3000).
    #[serde(default = "default_wsf")]
    pub watermark_scale_factor: u32,
    /// `vm.swappiness` 0..=200 (default 60).
    #[serde(default = "default_swappiness")]
    pub swappiness: u32,
    /// `vm.page-cluster`: swap readahead reads up to 2^n pages (default 3;
    /// 0 disables; at most 5, `SWAP_RA_ORDER_CEILING`).
    #[serde(default = "default_page_cluster")]
    pub page_cluster: u32,
    /// `memory.max` of the root's workload group (here: the root memcg, which
    /// holds every task): reclaim keeps the charged pages at or below it.
    #[serde(default)]
    pub memcg_max: Option<Size>,
    /// LRU policy.
    #[serde(default)]
    pub policy: PolicyConfig,
    /// Swap device (default: none).
    #[serde(default = "default_swap")]
    pub swap: DeviceConfig,
    /// Filesystem device backing file pages (default: ssd).
    #[serde(default = "default_fs")]
    pub fs: DeviceConfig,
    /// `/sys/block/<dev>/queue/read_ahead_kb` of the filesystem device: the
    /// readahead window limit `bdi->ra_pages` in KiB (default 128, range
    /// 0..=65536; 0 disables readahead).
    #[serde(default = "default_read_ahead_kb")]
    pub read_ahead_kb: u32,
    /// `/sys/block/<dev>/queue/max_sectors_kb`: the largest IO, which bounds
    /// `bdi->io_pages` (default 1280, range 4..=65536).
    #[serde(default = "default_max_sectors_kb")]
    pub max_sectors_kb: u32,
    /// `/sys/kernel/debug/fault_around_bytes`: how much of a file mapping a
    /// read fault maps from the page cache at once (default 65536, range
    /// 0..=2097152, rounded down to a power of two of pages as the kernel
    /// does; 4096 or less turns fault-around off).
    #[serde(default = "default_fault_around_bytes")]
    pub fault_around_bytes: u32,
    /// The cgroup hierarchy of the memory controller: `v2` (default) or `v1`.
    #[serde(default)]
    pub cgroup_version: CgroupVersion,
    /// Cgroup writeback (a filesystem with it, as ext4, xfs, btrfs): under
    /// v2 each group but the root has a dirty domain of its own
    /// (`crate::cgwb`, v6.12). Default true; false: the global domain only,
    /// as v1 has. Written to results only when false.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub cgroup_writeback: bool,
    /// How global reclaim honours v1 soft limits: `tree` (default),
    /// `seed-004` or `off`.
    #[serde(default)]
    pub soft_limit_reclaim: SoftLimitReclaim,
    /// CPUs the workload's tasks keep busy (default 1). With more than one,
    /// the workload clock is the wall clock of that many CPUs running the
    /// interleaved tasks, and the per-lruvec `lru_lock` is a shared resource
    /// whose contention is modelled (see `crate::smp`). Range 1..=4096.
    #[serde(default = "default_cpus")]
    pub cpus: u32,
    /// CPU cost model overrides.
    #[serde(default)]
    pub cost: CostModel,
    /// Interval of the stats sampler in simulated ms (0, the default: off).
    /// When set, `RunResult::stats_samples` holds the counters at every
    /// multiple of it; results are the same with or without it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stats_interval_ms: u64,
    /// Most samples the stats sampler keeps (0, the default: no bound). Once
    /// reached, every other sample is dropped and the interval doubled, so a
    /// run of any length ends with at most this many, evenly spaced.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stats_max_samples: u64,
    /// DAMON (`crate::damon`): kdamonds with the sysfs tree's names and the
    /// DAMON_LRU_SORT / DAMON_RECLAIM modules. Off when absent (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damon: Option<crate::damon::sysfs::DamonConfig>,
    /// Transparent huge pages of every size (`[machine.thp]`,
    /// /sys/kernel/mm/transparent_hugepage; `crate::huge_memory`): off by default.
    #[serde(
        default,
        skip_serializing_if = "crate::huge_memory::ThpConfig::is_default"
    )]
    pub thp: crate::huge_memory::ThpConfig,
    /// Memory compaction (`[machine.compaction]`, `crate::compaction`): off by default.
    #[serde(
        default,
        skip_serializing_if = "crate::compaction::CompactionConfig::is_default"
    )]
    pub compaction: crate::compaction::CompactionConfig,
    /// ZONE_DMA's pages, the node's lowest (`crate::mmzone`); 0 (default): one zone.
    #[serde(default, skip_serializing_if = "crate::mmzone::is_zero")]
    pub dma_zone_pages: u64,
    /// The pageblocks the boot's early kernel allocations leave unmovable
    /// and reclaimable, and their free pages (`[machine.boot_pageblocks]`,
    /// [`BootPageblocks`]; v6.12 `memmap_init_range` and the boot's
    /// fallback claims). All 0 (default): every pageblock movable and free.
    #[serde(default, skip_serializing_if = "BootPageblocks::is_default")]
    pub boot_pageblocks: BootPageblocks,
    /// The data TLB (`[machine.tlb]`, `crate::tlb`): off by default.
    #[serde(default, skip_serializing_if = "crate::tlb::TlbConfig::is_default")]
    pub tlb: crate::tlb::TlbConfig,
    /// The kernel's tracepoints to emit (`crate::tracepoint`; `mmsim run
    /// --tracepoints`). Off when absent (the default); results are the same
    /// with or without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracepoints: Option<crate::tracepoint::TracepointConfig>,
    /// The pages whose life stories are recorded (`crate::explain`; `mmsim
    /// explain`). Off when absent (the default); results are the same with or
    /// without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<crate::explain::ExplainConfig>,
    /// A SHARDS-sampled run's rate `R` (absent, the default: a whole run). The
    /// machine's `memory`, `memcg_max` and swap size are then already the whole
    /// machine's times `R` (the scenario's `[sample]` scales them), and the
    /// watermarks are the whole machine's times `R`: `min_free_kbytes` (given, or
    /// `init_per_zone_wmark_min`'s square-root formula on `memory / R`) is scaled
    /// by `R`, where applying the formula to the small memory would give a
    /// reserve √(1/R) times too large. Range (0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_rate: Option<f64>,
    /// Kernel memory charged to the memory cgroups (`crate::kmem`:
    /// `__GFP_ACCOUNT` objects under `memcg_kmem`, v6.12): page-cache xarray
    /// nodes with the shadow-node shrinker, page-table pages, each task's
    /// stack and task structures. Off by default (pages only, as before).
    /// The kernel charges them from 4.6 on (v1 too, with no kmem limit set),
    /// per object (`obj_cgroup`) from 5.9, as modelled; not when booted with
    /// `cgroup.memory=nokmem`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kmem_accounting: bool,
    /// Read faults on anonymous memory map the shared zero page
    /// (`do_anonymous_page`, v6.12: "Use the zero-page for reads"); a later
    /// write copies it into a new order-0 folio (`wp_page_copy`). Off by
    /// default (every first touch allocates, as before), so that trace
    /// replays, whose first access to a page is often a read, keep their
    /// results. With `[machine.thp]` allowing PMD size, `thp.use_zero_page`
    /// maps the huge zero page on a PMD read fault. See `crate::fault`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub zero_page: bool,
    /// What swap-out does with a zero-filled anonymous page (`write`, the
    /// default: written like any other; `zeromap`: 6.12+; `zram-same`: zram's
    /// same-filled pages, ≤ 6.11). See [`SwapZeroPages`].
    #[serde(default, skip_serializing_if = "SwapZeroPages::is_default")]
    pub swap_zero_pages: SwapZeroPages,
    /// Shadow entries give the eviction timestamp every bit the memcg ids
    /// leave (30 − W of a shadow's 31, W the bits of the largest group id),
    /// so refault distances are exact up to 2^(30 − W) pages of memory (2 TiB
    /// with one group), as a 64-bit kernel's are (mm/workingset.c v6.12:
    /// `EVICTION_BITS` ≥ 36, so its clock never laps in a run). On by
    /// default. `false` keeps the 22 timestamp bits of mmsim before
    /// 2026-11-29, for reproducing results recorded with it: above 16 GiB
    /// the distances are quantised (`bucket_order`, reported), and a shadow
    /// older than 2^22 evictions wraps and may read as recent. See
    /// `crate::reclaim::workingset`.
    #[serde(default = "default_exact_shadows", skip_serializing_if = "is_true")]
    pub exact_shadows: bool,
    /// Page-table pages take page frames (`crate::kmem`): each PTE, PMD or
    /// PUD page a fault allocates (`__pte_alloc` → `pte_alloc_one`,
    /// `GFP_PGTABLE_USER`) is an order-0 `MIGRATE_UNMOVABLE` page of the
    /// buddy allocator, taken with the allocator's watermarks and reclaim,
    /// and returned when the task's tables are freed (exit, OOM kill). The
    /// unmovable fragmentation source of a real machine: its allocations
    /// fall back into movable pageblocks and compaction cannot move them.
    /// Needs `kmem_accounting` (the pages it counts as `pagetables`). Off by
    /// default (page tables are counted, not placed, as before).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pagetable_frames: bool,
    /// Slab pages take page frames (`crate::slub`, mm/slub.c v6.12): the
    /// `radix_tree_node` slab of the page-cache xarray nodes kernel memory
    /// accounting counts (`SLAB_RECLAIM_ACCOUNT`: `MIGRATE_RECLAIMABLE`
    /// pages) and each task's `task_struct` slab object and kernel stack
    /// (`MIGRATE_UNMOVABLE`), allocated when a cache needs a new slab
    /// (`allocate_slab`) and freed when a slab empties (`discard_slab`).
    /// They fill reclaimable and unmovable pageblocks, where page tables
    /// (`pagetable_frames`) then find their own kind first. Needs
    /// `kmem_accounting`, and one zone (`dma_zone_pages = 0`). Off by
    /// default (slab is counted, not placed, as before).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub slab_frames: bool,
    /// The read-around of a fault that misses in a MADV_HUGEPAGE file
    /// mapping: `v6.18` (the default; every miss reads the PMD window) or
    /// `v6.19` (only while `mmap_miss` is at most `MMAP_LOTSAMISS`). See
    /// [`crate::HugepageReadaround`].
    #[serde(default, skip_serializing_if = "crate::HugepageReadaround::is_default")]
    pub hugepage_readaround: crate::HugepageReadaround,
    /// A read fault that had to read its page is retried, as every kernel
    /// since 5.1 does (6b4c9f446981 "filemap: drop the mmap_sem for all
    /// blocking operations"; v6.18 `filemap_fault`): the read is done with
    /// the mmap lock dropped (`maybe_unlock_mmap_for_io`), so the fault
    /// returns `VM_FAULT_RETRY` and `handle_mm_fault` runs again with
    /// `FAULT_FLAG_TRIED`. The second attempt's fault-around
    /// (`filemap_map_pages`) maps the window's pages the read just brought
    /// in, and every one that is not workingset is a hit against the
    /// file's `mmap_miss`; if it did not map the faulting page,
    /// `filemap_fault` finds it cached (`do_async_mmap_readahead`: one miss
    /// less, async readahead if marked). So misses of pages read for the
    /// first time never add up to `MMAP_LOTSAMISS`, and read-around goes
    /// on (as reported on linux-mm, and as the 6.18 host shows:
    /// VALIDATION.md); only refaults of workingset pages stop it. The retry
    /// is not a second `pgfault` (the kernel counts a fault once it
    /// completes). On by default. `false` maps the faulting page at once
    /// and lets every miss count, as mmsim did before 2026-11-29 (and as
    /// kernels before 5.1 did, which held the lock over the read).
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub fault_retry: bool,
}

/// What swap-out does with an anonymous page whose content is all zeros
/// (`machine.swap_zero_pages`; `crate::swapfile`'s zero-filled pages).
///
/// The simulator has no page contents: an anonymous page is zero-filled
/// until the workload writes it. Under `zeromap` and `zram-same` a first
/// touch by a load maps the new folio with a clean PTE, so that a later
/// store is a write-protect fault (`do_wp_page`) that marks the folio
/// written (as the kernel's read fault maps the zero page, and the store
/// copies it); a swapped-out page keeps its zero-filled bit in its slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwapZeroPages {
    /// Every anonymous page is written to the swap device (`pswpout`), as
    /// before 6.12 on a disk (the default; the results of every run before
    /// this setting).
    #[default]
    Write,
    /// 6.12+ (mm/page_io.c `swap_writeout`/`swap_writepage` →
    /// `is_folio_zero_filled`): a zero-filled folio is not written; its
    /// slots are marked in the device's `zeromap` (`swap_zeromap_folio_set`,
    /// counting `swpout_zero`) and the folio is freed at once. A swap-in of
    /// such a slot fills zeros without IO (`swap_read_folio_zeromap`,
    /// `swpin_zero`, no `pswpin`/`pgpgin`); the fault is still major and
    /// the refault is counted.
    Zeromap,
    /// zram up to 6.11 (drivers/block/zram `zram_write_page` →
    /// `page_same_filled`): a zero-filled page is stored as its fill
    /// pattern (`same_pages`), with no compression and no decompression on
    /// swap-in; the swap IO is counted as usual (`pswpout`, `pswpin`).
    /// Needs `swap.device = "zram"`.
    ZramSame,
}

crate::setting_names! { SwapZeroPages, "swap_zero_pages",
    Write => "write",
    Zeromap => "zeromap",
    ZramSame => "zram-same",
}

impl SwapZeroPages {
    /// The default (`write`): serialized only when another value is set.
    pub fn is_default(&self) -> bool {
        *self == SwapZeroPages::Write
    }
}

impl Default for MachineConfig {
    fn default() -> Self {
        MachineConfig {
            tracepoints: None,
            explain: None,
            sample_rate: None,
            kmem_accounting: false,
            zero_page: false,
            swap_zero_pages: SwapZeroPages::Write,
            exact_shadows: default_exact_shadows(),
            pagetable_frames: false,
            slab_frames: false,
            hugepage_readaround: Default::default(),
            fault_retry: true,
            memory: Size(4 << 30),
            min_free_kbytes: None,
            watermark_scale_factor: default_wsf(),
            swappiness: default_swappiness(),
            page_cluster: default_page_cluster(),
            memcg_max: None,
            policy: PolicyConfig::default(),
            swap: default_swap(),
            fs: default_fs(),
            read_ahead_kb: default_read_ahead_kb(),
            max_sectors_kb: default_max_sectors_kb(),
            fault_around_bytes: default_fault_around_bytes(),
            cgroup_version: CgroupVersion::default(),
            cgroup_writeback: true,
            soft_limit_reclaim: SoftLimitReclaim::default(),
            cpus: default_cpus(),
            cost: CostModel::default(),
            stats_interval_ms: 0,
            stats_max_samples: 0,
            damon: None,
            thp: Default::default(),
            compaction: Default::default(),
            dma_zone_pages: 0,
            boot_pageblocks: Default::default(),
            tlb: Default::default(),
        }
    }
}

/// Smallest simulated machine: 16 MiB (4096 pages). Below that the kernel's
/// watermark formulas leave almost nothing for workloads.
pub const MIN_MEMORY_PAGES: u64 = 4096;
/// Smallest sampled machine (`sample_rate`): 1 MiB (256 pages). Its watermarks
/// are the whole machine's scaled down, so the formulas' floor does not apply.
pub const MIN_SAMPLED_MEMORY_PAGES: u64 = 256;
/// Largest simulated machine: 2^29 pages (2 TiB), the reach of a PTE's folio field.
pub const MAX_MEMORY_PAGES: u64 = 1 << 29;
/// Largest swap device: 2^30 slots (4 TiB).
pub(crate) const MAX_SWAP_PAGES: u64 = 1 << 30;

impl MachineConfig {
    /// `fault_around_pages` as `fault_around_bytes_set()` computes it:
    /// the byte count rounded down to a power of two of pages, at least 1.
    pub fn fault_around_pages(&self) -> u32 {
        let pages = self.fault_around_bytes / 4096;
        if pages == 0 {
            1
        } else {
            1 << (31 - pages.leading_zeros())
        }
    }

    /// Checks every field against its allowed range; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.thp.validate(self.policy.name == PolicyName::Lru)?;
        self.compaction.validate()?;
        self.validate_dma_zone()?;
        self.validate_watermark_boost()?;
        self.boot_pageblocks
            .validate(self.memory.pages().saturating_sub(self.dma_zone_pages))?;
        self.tlb.validate(self.cpus)?;
        crate::kmem::buffer_head::validate(self)?;
        if self.zero_page && self.policy.name == PolicyName::Lru {
            return Err(ConfigError::new(
                "machine.zero_page",
                "the zero page needs the kernel's LRU lists (policy cost, scanned-rotated or \
                 mglru); the textbook `lru` policy moves every mapped page on each access",
            ));
        }
        if self.fs.large_folios && self.policy.name == PolicyName::Lru {
            return Err(ConfigError::new(
                "machine.fs.large_folios",
                "large folios need the kernel's LRU lists (policy cost, scanned-rotated or \
                 mglru); the textbook `lru` policy handles 4 KiB pages only",
            ));
        }
        if self.pagetable_frames && !self.kmem_accounting {
            return Err(ConfigError::new(
                "machine.pagetable_frames",
                "page-table frames are the page-table pages kernel memory accounting counts \
                 (memory.stat `pagetables`): set machine.kmem_accounting = true too",
            ));
        }
        if self.slab_frames && !self.kmem_accounting {
            return Err(ConfigError::new(
                "machine.slab_frames",
                "slab frames hold the slab objects kernel memory accounting counts (xarray \
                 nodes, task structures): set machine.kmem_accounting = true too",
            ));
        }
        if self.slab_frames && self.dma_zone_pages > 0 {
            return Err(ConfigError::new(
                "machine.slab_frames",
                "slab frames are modelled for one zone: set machine.dma_zone_pages = 0",
            ));
        }
        if let Some(t) = &self.tracepoints {
            t.validate()?;
        }
        if let Some(x) = &self.explain {
            x.validate()?;
        }
        if let Some(d) = &self.damon {
            d.validate()?;
            if self.policy.name == PolicyName::Lru {
                return Err(ConfigError::new(
                    "machine.damon",
                    "DAMON needs the kernel's LRU lists (policy cost, scanned-rotated or \
                     mglru); the textbook `lru` policy has none",
                ));
            }
        }
        let pages = self.memory.pages();
        let (min, min_name) = match self.sample_rate {
            None => (MIN_MEMORY_PAGES, "16M"),
            Some(_) => (MIN_SAMPLED_MEMORY_PAGES, "1M"),
        };
        if !(min..=MAX_MEMORY_PAGES).contains(&pages) {
            return Err(ConfigError::new(
                "machine.memory",
                format!("{} is out of range [{min_name}, 2T]", self.memory),
            ));
        }
        if !(1..=3000).contains(&self.watermark_scale_factor) {
            return Err(ConfigError::new(
                "machine.watermark_scale_factor",
                format!("{} is out of range [1, 3000]", self.watermark_scale_factor),
            ));
        }
        if self.policy.lru_gen_enabled > 7 {
            return Err(ConfigError::new(
                "machine.policy.lru_gen_enabled",
                format!(
                    "{:#x} is out of range [0, 0x7] (bits: 0 core, 1 mm walk, 2 non-leaf young)",
                    self.policy.lru_gen_enabled
                ),
            ));
        }
        crate::memcg_stats::validate_policy(&self.policy)?;
        crate::memcontrol_v1::validate_kswapd_soft_limit_rounds(self)?;
        if self.policy.min_ttl_ms > u32::MAX as u64 {
            return Err(ConfigError::new(
                "machine.policy.min_ttl_ms",
                format!("{} is out of range [0, 4294967295]", self.policy.min_ttl_ms),
            ));
        }
        if self.stats_max_samples == 1 || self.stats_max_samples > 1 << 24 {
            return Err(ConfigError::new(
                "machine.stats_max_samples",
                format!(
                    "{} is out of range: 0 (no bound) or [2, 16777216]",
                    self.stats_max_samples
                ),
            ));
        }
        if self.swappiness > 200 {
            return Err(ConfigError::new(
                "machine.swappiness",
                format!("{} is out of range [0, 200]", self.swappiness),
            ));
        }
        if self.page_cluster > 5 {
            return Err(ConfigError::new(
                "machine.page_cluster",
                format!("{} is out of range [0, 5]", self.page_cluster),
            ));
        }
        for (name, v, lo, hi) in [
            ("read_ahead_kb", self.read_ahead_kb, 0, 65536),
            ("max_sectors_kb", self.max_sectors_kb, 4, 65536),
            ("fault_around_bytes", self.fault_around_bytes, 0, 2 << 20),
            ("cpus", self.cpus, 1, 4096),
        ] {
            if !(lo..=hi).contains(&v) {
                return Err(ConfigError::new(
                    format!("machine.{name}"),
                    format!("{v} is out of range [{lo}, {hi}]"),
                ));
            }
        }
        if let Some(r) = self.sample_rate {
            if !(r.is_finite() && r > 0.0 && r <= 1.0) {
                return Err(ConfigError::new(
                    "machine.sample_rate",
                    format!("{r} is out of range (0, 1]"),
                ));
            }
        }
        if let Some(k) = self.min_free_kbytes {
            // A sampled machine's min_free_kbytes is the whole machine's.
            let whole = (pages as f64 / self.sample_rate.unwrap_or(1.0)) as u64;
            let max = whole * 4 / 4;
            if k < 128 || k > max {
                return Err(ConfigError::new(
                    "machine.min_free_kbytes",
                    format!("{k} is out of range [128, {max}] (a quarter of memory)"),
                ));
            }
        }
        if let Some(m) = self.memcg_max {
            if m.pages() == 0 {
                return Err(ConfigError::new(
                    "machine.memcg_max",
                    "must be at least one page",
                ));
            }
        }
        self.swap.validate("machine.swap", true)?;
        if self.swap.large_folios {
            return Err(ConfigError::new(
                "machine.swap.large_folios",
                "large folios are a filesystem setting: set machine.fs.large_folios",
            ));
        }
        if self.swap.pmd_mappings {
            return Err(ConfigError::new(
                "machine.swap.pmd_mappings",
                "PMD mappings of page-cache folios are a filesystem setting: set \
                 machine.fs.pmd_mappings",
            ));
        }
        if self.fs.pmd_mappings && !self.fs.large_folios {
            return Err(ConfigError::new(
                "machine.fs.pmd_mappings",
                "PMD mappings need PMD-size page-cache folios: set machine.fs.large_folios = true too",
            ));
        }
        if let Some(s) = self.swap.size {
            if s.pages() > MAX_SWAP_PAGES {
                return Err(ConfigError::new(
                    "swap.size",
                    format!("{s} is larger than the 4T maximum"),
                ));
            }
        }
        if self.fs.device == DeviceKind::None {
            return Err(ConfigError::new(
                "fs.device",
                "the filesystem needs a device: zram, ssd, hdd or custom",
            ));
        }
        self.fs.validate("machine.fs", false)?;
        if self.fs.device == DeviceKind::Fs {
            return Err(ConfigError::new(
                "machine.fs.device",
                "`fs` is only for swap; the filesystem device is one of zram, ssd, hdd, custom",
            ));
        }
        if self.swap.device == DeviceKind::Fs
            && (self.swap.read_latency_us.is_some()
                || self.swap.write_latency_us.is_some()
                || self.swap.bandwidth_mbps.is_some()
                || self.swap.queue_depth.is_some())
        {
            return Err(ConfigError::new(
                "machine.swap.device",
                "swap on `fs` has the filesystem device's timing: set it in machine.fs",
            ));
        }
        if self.swap_zero_pages == SwapZeroPages::ZramSame && self.swap.device != DeviceKind::Zram {
            return Err(ConfigError::new(
                "machine.swap_zero_pages",
                "`zram-same` is zram's same-filled pages: it needs swap.device = \"zram\" \
                 (allowed: write, zeromap, zram-same)",
            ));
        }
        self.cost.validate()?;
        Ok(())
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
