//! DAMON: data access monitoring and DAMOS (mm/damon/, Linux v6.12; the
//! filters' `allow` of 6.14, and the monitoring-intervals auto-tuning of
//! 6.15 as an option).
//!
//! Off unless the machine has a `damon` section: nothing here runs, no timer
//! is armed, and every result is what it was without this module.
//!
//! ## Layout (one file per kernel file)
//!
//! * `core.rs` — mm/damon/core.c: `kdamond_fn`'s loop split into timer
//!   steps, `damon_update_region_access_rate` (the `nr_accesses_bp` moving
//!   sum), `kdamond_merge_regions`, `kdamond_split_regions`,
//!   `damon_set_regions`, interval tuning, and DAMOS: `kdamond_apply_schemes`,
//!   `damos_apply_scheme`, quotas (`damos_adjust_quota`,
//!   `damos_set_effective_quota`, `damos_skip_charged_region`, goals with
//!   `damon_feed_loop_next_input`), watermarks (`damos_wmark_wait_us`), the
//!   core filters and the stats.
//! * `ops_common.rs` — mm/damon/ops-common.c and the mm/swap.c helpers the
//!   actions call: `damon_folio_mkold`/`damon_folio_young` through the one
//!   rmap walk (`crate::rmap`, so reclaim still sees a consumed access as
//!   PG_young), `damon_hot_score`/`damon_cold_score`, `folio_deactivate`.
//! * `paddr.rs` — mm/damon/paddr.c: sampling over the PFN space through
//!   `page_alloc`'s `pfn_folio`, the ops filters, and the actions pageout
//!   (through `shrink_folio_list`, the real reclaim path), lru_prio,
//!   lru_deprio and stat.
//! * `vaddr.rs` — mm/damon/vaddr.c: a task's address-space layout, the
//!   three-region initialisation and update, sampling through the target's
//!   own PTE, and the madvise actions pageout and cold.
//! * `sysfs.rs` — the configuration with the sysfs tree's names.
//! * `lru_sort.rs`, `reclaim.rs` — the DAMON_LRU_SORT and DAMON_RECLAIM
//!   modules, their parameters and the schemes they build.
//! * `module_params.rs` — writes to the modules' parameter files at run
//!   time (`enabled`, `commit_inputs` and the rest), committed into the
//!   running context as `damon_commit_ctx()` does.
//!
//! ## Time and CPU
//!
//! Each context is a kdamond with its own CPU. Its loop — wait for a
//! watermark, prepare the access checks, sleep one sample interval, check,
//! merge, apply the schemes, reset and split — runs on one timer
//! (`TimerKind::Kdamond`) on the workload clock: a step runs at the first
//! event at or after its time, which is the earliest the workload could
//! have seen its effect. kdamond's work costs modelled CPU time (the cost
//! model's `rmap_ns` per page-table descent or rmap step, `scan_ns` per
//! folio an action handles, the reclaim costs of pageout, and
//! `REGION_NS` per region per pass); that time delays its next step, as
//! the kernel's loop sleeps after its work, is charged to the DAMOS time
//! quota (`total_charged_ns`, which the kernel measures with a clock), and
//! is reported as `kdamond_cpu_s` like kswapd's. kdamond does not take the
//! simulated `lru_lock` (no contention is modelled for it).
//!
//! ## Randomness
//!
//! `damon_rand()` draws from a xorshift64* generator seeded by
//! `machine.damon.seed`: same seed, same bits. The kernel's
//! `get_random_u32_below()` takes a 32-bit range; here the range is 64-bit,
//! so regions above 4 GiB get uniform sampling addresses (the kernel's are
//! truncated).

mod core;
pub(crate) mod lru_sort;
pub mod module_params;
mod modules_common;
mod ops_common;
mod paddr;
pub(crate) mod reclaim;
pub mod sysfs;
mod vaddr;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::mem::pagetable::TaskId;
use crate::memcg::MemcgId;
use sysfs::{DamonOps, DamosAction, FilterType, GoalMetric, WmarkMetric};

/// `DAMON_MIN_REGION`: regions are page aligned.
pub(crate) const MIN_REGION: u64 = crate::PAGE_SIZE;
/// `DAMOS_MAX_SCORE`.
pub(crate) const MAX_SCORE: u32 = 99;
/// kdamond CPU per region per pass of its loop (the region list walk, the
/// random draw, the rate update; an estimate of a few cache misses), ns.
pub(crate) const REGION_NS: u64 = 30;
/// kdamond CPU to look up a PFN that holds no LRU folio
/// (`damon_get_folio` failing), ns.
pub(crate) const NO_FOLIO_NS: u64 = 10;

/// `struct damon_region`: `[start, end)` in bytes of the target's address
/// space, with its access counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Region {
    /// `ar.start`.
    pub start: u64,
    /// `ar.end`.
    pub end: u64,
    /// `sampling_addr`: the address checked this sample.
    pub sampling_addr: u64,
    /// `nr_accesses`: samples that found an access this aggregation.
    pub nr_accesses: u32,
    /// `nr_accesses_bp`: the pseudo moving sum, basis points.
    pub nr_accesses_bp: u32,
    /// `last_nr_accesses`: `nr_accesses` of the last aggregation.
    pub last_nr_accesses: u32,
    /// `age`: aggregations the access frequency stayed (within the merge threshold).
    pub age: u32,
}

impl Region {
    /// `damon_new_region()`: all counters zero.
    pub(crate) fn new(start: u64, end: u64) -> Region {
        Region {
            start,
            end,
            ..Default::default()
        }
    }
    /// `damon_sz_region()`.
    #[inline]
    pub(crate) fn sz(&self) -> u64 {
        self.end - self.start
    }
}

/// `struct damon_target`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Target {
    /// The task of a virtual-address target (`pid`), if it exists.
    pub task: Option<TaskId>,
    /// The ordered, non-overlapping regions.
    pub regions: Vec<Region>,
}

/// `struct damon_attrs` (µs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Attrs {
    /// `sample_interval`.
    pub sample_us: u64,
    /// `aggr_interval`.
    pub aggr_us: u64,
    /// `ops_update_interval`.
    pub ops_update_us: u64,
    /// `min_nr_regions`.
    pub min_nr_regions: u64,
    /// `max_nr_regions`.
    pub max_nr_regions: u64,
    /// `aggr_samples`: aggregation / sample, kept by the interval tuner.
    pub aggr_samples: u64,
    /// `intervals_goal`.
    pub goal: sysfs::IntervalsGoal,
}

impl Attrs {
    /// `damon_max_nr_accesses()`: samples per aggregation, at least 1.
    #[inline]
    pub(crate) fn max_nr_accesses(&self) -> u32 {
        (self.aggr_us / self.sample_us.max(1)).clamp(1, u32::MAX as u64) as u32
    }
}

/// `struct damos_filter`, resolved (a memcg path to its group).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Filter {
    /// `type`.
    pub ty: FilterType,
    /// `matching`.
    pub matching: bool,
    /// `allow`.
    pub allow: bool,
    /// The group of a `memcg` filter (`None` while its path names no group).
    pub memcg: Option<MemcgId>,
    /// `addr_range` of an `addr` filter.
    pub addr: (u64, u64),
    /// `target_idx`.
    pub target_idx: u64,
    /// `sz_range` of a `hugepage_size` filter.
    pub sz: (u64, u64),
}

/// One `struct damos_quota_goal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Goal {
    /// `metric`.
    pub metric: GoalMetric,
    /// `target_value`.
    pub target_value: u64,
    /// `current_value`.
    pub current_value: u64,
    /// `last_psi_total` (µs) of the `some_mem_psi_us` metric.
    pub last_psi_total: u64,
}

/// `struct damos_quota` with its private state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Quota {
    /// `ms`.
    pub ms: u64,
    /// `sz`.
    pub sz: u64,
    /// `reset_interval` (ms).
    pub reset_interval_ms: u64,
    /// `weight_sz` (unused by the score functions, as in the kernel).
    pub weight_sz: u64,
    /// `weight_nr_accesses`.
    pub weight_nr_accesses: u64,
    /// `weight_age`.
    pub weight_age: u64,
    /// `goals`.
    pub goals: Vec<Goal>,
    /// `esz`: the effective size quota of this window (0: none).
    pub esz: u64,
    /// `total_charged_sz`.
    pub total_charged_sz: u64,
    /// `total_charged_ns`.
    pub total_charged_ns: u64,
    /// `charged_sz` of this window.
    pub charged_sz: u64,
    /// `charged_from`: when this window began (`None` before the first).
    pub charged_from: Option<u64>,
    /// `charge_target_from`: the target index to resume at.
    pub charge_target_from: Option<usize>,
    /// `charge_addr_from`.
    pub charge_addr_from: u64,
    /// `min_score`: the priority cut-off.
    pub min_score: u32,
    /// `esz_bp`: the goal tuner's last output.
    pub esz_bp: u64,
}

impl Quota {
    /// Whether any quota is set (`ms`, `sz` or goals).
    pub(crate) fn is_set(&self) -> bool {
        self.ms != 0 || self.sz != 0 || !self.goals.is_empty()
    }
}

/// `struct damos_watermarks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wmarks {
    /// `metric`.
    pub metric: WmarkMetric,
    /// `interval` (µs).
    pub interval_us: u64,
    /// `high`.
    pub high: u64,
    /// `mid`.
    pub mid: u64,
    /// `low`.
    pub low: u64,
    /// `activated`.
    pub activated: bool,
}

/// `struct damos_stat`: what a scheme did (sysfs `schemes/<N>/stats/`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DamosStat {
    /// `nr_tried`: regions the action was tried on.
    pub nr_tried: u64,
    /// `sz_tried`: their bytes.
    pub sz_tried: u64,
    /// `nr_applied`: regions on which the action did something.
    pub nr_applied: u64,
    /// `sz_applied`: bytes the action applied to.
    pub sz_applied: u64,
    /// `sz_ops_filter_passed`: bytes that passed the ops-layer filters.
    pub sz_ops_filter_passed: u64,
    /// `qt_exceeds`: quota windows that ended exhausted.
    pub qt_exceeds: u64,
}

/// `struct damos`.
#[derive(Clone, Debug)]
pub(crate) struct Scheme {
    /// `action`.
    pub action: DamosAction,
    /// `apply_interval_us` (0: the aggregation interval).
    pub apply_interval_us: u64,
    /// `pattern`: sz, nr_accesses, age as inclusive ranges.
    pub pattern: sysfs::AccessPatternConfig,
    /// `quota`.
    pub quota: Quota,
    /// `wmarks`.
    pub wmarks: Wmarks,
    /// `filters` (core layer: addr, target).
    pub core_filters: Vec<Filter>,
    /// `ops_filters`.
    pub ops_filters: Vec<Filter>,
    /// The memcg paths of the `memcg` ops filters, resolved at start.
    pub memcg_paths: Vec<Option<String>>,
    /// `core_filters_default_reject`.
    pub core_filters_default_reject: bool,
    /// `ops_filters_default_reject`.
    pub ops_filters_default_reject: bool,
    /// `core_filters_allowed`: a core filter allowed the region being applied.
    pub core_filters_allowed: bool,
    /// `next_apply_sis`.
    pub next_apply_sis: u64,
    /// `stat`.
    pub stat: DamosStat,
    /// Regions, bytes, and bytes inside the target's simulated mappings (vaddr;
    /// paddr: all) the apply pass under way has tried (what the sysfs
    /// `tried_regions/` directory collects through `before_damos_apply`).
    pub pass_tried: (u64, u64, u64),
    /// The same for the last completed apply pass (`tried_regions/` and its
    /// `total_bytes` after `update_schemes_tried_regions`).
    pub last_tried: (u64, u64, u64),
}

/// Where a context's loop is (`kdamond_fn`'s iteration, split at its sleeps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Not started: `kdamond_init_ctx` and `ops.init` run first.
    Init,
    /// Top of the loop: the watermark wait, then `prepare_access_checks`.
    Prepare,
    /// After the sample interval's sleep: check, merge, apply, reset, split.
    Check,
    /// Stopped: every target is gone (`kdamond_need_stop`).
    Stopped,
}

/// Which module built a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Module {
    /// A kdamond of the sysfs interface (index).
    Sysfs(usize),
    /// DAMON_LRU_SORT.
    LruSort,
    /// DAMON_RECLAIM.
    Reclaim,
}

/// `struct damon_ctx` and its kdamond.
#[derive(Clone, Debug)]
pub(crate) struct Ctx {
    /// Who built it.
    pub module: Module,
    /// `ops`.
    pub ops: DamonOps,
    /// `attrs`.
    pub attrs: Attrs,
    /// `adaptive_targets`.
    pub targets: Vec<Target>,
    /// A vaddr target without a pid: monitor every task (one target each).
    pub all_tasks: bool,
    /// The configured pids of the targets (vaddr/fvaddr).
    pub pids: Vec<Option<u32>>,
    /// `schemes`.
    pub schemes: Vec<Scheme>,
    /// `passed_sample_intervals`.
    pub passed_sample_intervals: u64,
    /// `next_aggregation_sis`.
    pub next_aggregation_sis: u64,
    /// `next_ops_update_sis`.
    pub next_ops_update_sis: u64,
    /// `next_intervals_tune_sis`.
    pub next_intervals_tune_sis: u64,
    /// kdamond's `sz_limit` (`damon_region_sz_limit`).
    pub sz_limit: u64,
    /// `max_nr_accesses` returned by the last check.
    pub max_nr_accesses: u32,
    /// `regions_score_histogram`.
    pub hist: [u64; MAX_SCORE as usize + 1],
    /// Where the loop is.
    pub phase: Phase,
    /// When its next step is due, ns on the workload clock.
    pub next_ns: u64,
    /// kdamond's CPU time, ns.
    pub cpu_ns: u64,
    /// Aggregation intervals completed.
    pub nr_aggregations: u64,
    /// The last `Prepare` step slept a watermark wait (its
    /// `after_wmarks_check` callback runs at the next).
    pub wmark_waited: bool,
    /// `next_aggregation_sis` and `next_ops_update_sis` as the loop
    /// iteration read them at its top (`kdamond_fn`'s locals).
    pub loop_sis: (u64, u64),
}

impl Ctx {
    /// Total regions of every target.
    pub(crate) fn nr_regions(&self) -> u64 {
        self.targets.iter().map(|t| t.regions.len() as u64).sum()
    }
}

/// The last access check's result (the static `last_addr`, `last_folio_sz`,
/// `last_accessed` of `__damon_pa_check_access`/`__damon_va_check_access`,
/// one per operations set, shared by every context as in the kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CheckCache {
    /// `last_addr`.
    pub addr: u64,
    /// `last_folio_sz`.
    pub folio_sz: u64,
    /// `last_accessed`.
    pub accessed: bool,
}

impl Default for CheckCache {
    fn default() -> Self {
        CheckCache {
            addr: 0,
            folio_sz: crate::PAGE_SIZE,
            accessed: false,
        }
    }
}

/// xorshift64* : DAMON's random numbers (`damon_rand`).
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    /// Seeded through splitmix64, so that nearby seeds diverge.
    pub(crate) fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// `damon_rand(l, r)`: uniform in `[l, r)` (`l` when the range is empty).
    pub(crate) fn range(&mut self, l: u64, r: u64) -> u64 {
        if r <= l {
            return l;
        }
        l + ((self.next() as u128 * (r - l) as u128) >> 64) as u64
    }
}

/// DAMON in a machine: every running context, and what they share.
#[derive(Clone, Debug)]
pub(crate) struct Damon {
    /// The contexts, each with its own kdamond.
    pub ctxs: Vec<Ctx>,
    /// `damon_rand()`'s generator.
    pub rng: Rng,
    /// `last_nr_regions` of `kdamond_split_regions` (a function-local
    /// static in the kernel, shared by every context).
    pub last_nr_regions: u64,
    /// paddr's check cache.
    pub pa_cache: CheckCache,
    /// vaddr's check cache.
    pub va_cache: CheckCache,
    /// Aggregation snapshots for a damo record (when recording).
    pub record: Option<Vec<RecordSnapshot>>,
    /// The modules' parameter files and their scheduled writes.
    pub modules: module_params::ModuleParams,
}

/// One target's regions at the end of an aggregation interval (what the
/// `damon:damon_aggregated` tracepoint reports, and damo records).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordSnapshot {
    /// Context index.
    pub ctx: usize,
    /// Target index (`target_id` of the tracepoint).
    pub target: usize,
    /// Start of the aggregation interval, ns.
    pub start_ns: u64,
    /// End of the aggregation interval, ns.
    pub end_ns: u64,
    /// `(start, end, nr_accesses, age)` of every region.
    pub regions: Vec<(u64, u64, u32, u32)>,
}

/// What one context's kdamond did (in `RunResult::damon`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DamonCtxReport {
    /// `kdamond 0`, …, `damon_lru_sort` or `damon_reclaim`.
    pub name: String,
    /// `vaddr`, `fvaddr` or `paddr`.
    pub ops: String,
    /// kdamond's CPU time, seconds.
    pub kdamond_cpu_s: f64,
    /// Sample intervals passed.
    pub nr_samples: u64,
    /// Aggregation intervals completed.
    pub nr_aggregations: u64,
    /// Regions at the end.
    pub nr_regions: u64,
    /// The sampling interval at the end, µs (the tuner may change it).
    pub sample_us: u64,
    /// The aggregation interval at the end, µs.
    pub aggr_us: u64,
    /// Each scheme's action and stats, in order.
    pub schemes: Vec<DamosSchemeReport>,
}

/// One scheme's action and `stats/`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DamosSchemeReport {
    /// The action's sysfs name.
    pub action: String,
    /// Its stats.
    #[serde(flatten)]
    pub stat: DamosStat,
    /// The effective size quota at the end (`esz`, bytes; 0: none).
    pub esz: u64,
    /// Regions the last apply pass tried (the entries of sysfs `tried_regions/`
    /// after `update_schemes_tried_regions`).
    #[serde(default)]
    pub nr_tried_regions: u64,
    /// Their bytes (`tried_regions/total_bytes`).
    #[serde(default)]
    pub tried_regions_bytes: u64,
    /// The part of those bytes inside the target's simulated mappings (vaddr: the
    /// workload's memory, not the holes between mappings; paddr: all of them).
    #[serde(default)]
    pub tried_regions_mapped_bytes: u64,
}

/// DAMON's part of a run's result: kdamond CPU and DAMOS stats.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DamonReport {
    /// CPU time of every kdamond, seconds (reported like kswapd's).
    pub kdamond_cpu_s: f64,
    /// Per context.
    pub contexts: Vec<DamonCtxReport>,
    /// The modules' read-only stats parameters (`nr_lru_sort_tried_hot_regions`, …).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub module_stats: std::collections::BTreeMap<String, u64>,
    /// The aggregation snapshots, when a record was asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub record: Vec<RecordSnapshot>,
    /// The module parameter writes of the run (`[[damon_module_write]]`)
    /// and the commits they caused, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub module_writes: Vec<module_params::DamonModuleWriteLog>,
}

impl Damon {
    /// Builds the contexts of a validated configuration (not started: each
    /// starts on its first timer step).
    pub(crate) fn new(cfg: &sysfs::DamonConfig, pfn_range: (u64, u64)) -> Damon {
        let mut ctxs = Vec::new();
        for (k, kd) in cfg.kdamonds.iter().enumerate() {
            for c in &kd.contexts {
                ctxs.push(Ctx::from_sysfs(Module::Sysfs(k), c, pfn_range));
            }
        }
        if let Some(p) = cfg.lru_sort.as_ref().filter(|p| p.enabled) {
            ctxs.push(p.build_ctx(pfn_range));
        }
        if let Some(p) = cfg.reclaim.as_ref().filter(|p| p.enabled) {
            ctxs.push(p.build_ctx(pfn_range));
        }
        Damon {
            ctxs,
            rng: Rng::new(cfg.seed),
            last_nr_regions: 0,
            pa_cache: CheckCache::default(),
            va_cache: CheckCache::default(),
            record: cfg.record.then(Vec::new),
            modules: module_params::ModuleParams::new(cfg),
        }
    }
}

impl Scheme {
    /// `damon_new_scheme()` from a sysfs `schemes/<N>/` directory.
    pub(crate) fn from_sysfs(s: &sysfs::SchemeConfig) -> Scheme {
        let q = &s.quotas;
        let w = &s.watermarks;
        let mut core_filters = Vec::new();
        let mut ops_filters = Vec::new();
        let mut memcg_paths = Vec::new();
        for f in &s.filters {
            let filter = Filter {
                ty: f.filter_type,
                matching: f.matching,
                allow: f.allow,
                memcg: None,
                addr: (f.addr_start, f.addr_end),
                target_idx: f.target_idx,
                sz: (f.min, f.max),
            };
            // damos_add_filter(): ops-handled filters on their own list.
            if f.filter_type.for_ops() {
                ops_filters.push(filter);
                memcg_paths.push(f.memcg_path.clone());
            } else {
                core_filters.push(filter);
            }
        }
        Scheme {
            action: s.action,
            apply_interval_us: s.apply_interval_us,
            pattern: s.access_pattern,
            quota: Quota {
                ms: q.ms,
                sz: q.bytes,
                reset_interval_ms: q.reset_interval_ms,
                weight_sz: q.weights.sz_permil,
                weight_nr_accesses: q.weights.nr_accesses_permil,
                weight_age: q.weights.age_permil,
                goals: q
                    .goals
                    .iter()
                    .map(|g| Goal {
                        metric: g.target_metric,
                        target_value: g.target_value,
                        current_value: g.current_value,
                        last_psi_total: 0,
                    })
                    .collect(),
                ..Default::default()
            },
            wmarks: Wmarks {
                metric: w.metric,
                interval_us: w.interval_us,
                high: w.high,
                mid: w.mid,
                low: w.low,
                activated: true,
            },
            core_filters,
            ops_filters,
            memcg_paths,
            core_filters_default_reject: false,
            ops_filters_default_reject: false,
            core_filters_allowed: false,
            next_apply_sis: 0,
            stat: DamosStat::default(),
            pass_tried: (0, 0, 0),
            last_tried: (0, 0, 0),
        }
    }

    /// `damos_set_filters_default_reject()` (6.14+): with no ops filters, a
    /// core filter list ending in an allow filter rejects by default; an ops
    /// filter list ending in an allow filter does.
    pub(crate) fn set_filters_default_reject(&mut self) {
        let last_allows = |l: &[Filter]| l.last().is_some_and(|f| f.allow);
        self.core_filters_default_reject =
            self.ops_filters.is_empty() && last_allows(&self.core_filters);
        self.ops_filters_default_reject = last_allows(&self.ops_filters);
    }
}

impl Ctx {
    /// A context from a sysfs `contexts/<N>/` directory.
    pub(crate) fn from_sysfs(module: Module, c: &sysfs::ContextConfig, pfn: (u64, u64)) -> Ctx {
        let iv = &c.monitoring_attrs.intervals;
        let nr = &c.monitoring_attrs.nr_regions;
        let attrs = Attrs {
            sample_us: iv.sample_us,
            aggr_us: iv.aggr_us,
            ops_update_us: iv.update_us,
            min_nr_regions: nr.min,
            max_nr_regions: nr.max,
            aggr_samples: iv.aggr_us / iv.sample_us.max(1),
            goal: iv.intervals_goal,
        };
        let mut targets = Vec::new();
        let mut pids = Vec::new();
        let mut all_tasks = false;
        for t in &c.targets {
            let mut regions: Vec<Region> = t
                .regions
                .iter()
                .map(|r| {
                    Region::new(
                        r.start / MIN_REGION * MIN_REGION,
                        r.end.div_ceil(MIN_REGION) * MIN_REGION,
                    )
                })
                .collect();
            if c.operations == DamonOps::Paddr && regions.is_empty() {
                regions.push(Region::new(pfn.0 * MIN_REGION, pfn.1 * MIN_REGION));
            }
            if c.operations == DamonOps::Vaddr && t.pid_target.is_none() {
                all_tasks = true;
                continue;
            }
            pids.push(t.pid_target);
            targets.push(Target {
                task: None,
                regions,
            });
        }
        Ctx {
            module,
            ops: c.operations,
            attrs,
            targets,
            all_tasks,
            pids,
            schemes: c.schemes.iter().map(Scheme::from_sysfs).collect(),
            passed_sample_intervals: 0,
            next_aggregation_sis: 0,
            next_ops_update_sis: 0,
            next_intervals_tune_sis: 0,
            sz_limit: MIN_REGION,
            max_nr_accesses: 0,
            hist: [0; MAX_SCORE as usize + 1],
            phase: Phase::Init,
            next_ns: 0,
            cpu_ns: 0,
            nr_aggregations: 0,
            wmark_waited: false,
            loop_sis: (0, 0),
        }
    }

    /// The report name.
    pub(crate) fn name(&self) -> String {
        match self.module {
            Module::Sysfs(k) => format!("kdamond {k}"),
            Module::LruSort => "damon_lru_sort".into(),
            Module::Reclaim => "damon_reclaim".into(),
        }
    }
}

impl crate::Sim {
    /// The PFN range DAMON's paddr operations cover: `[first, end)` of the
    /// zone (the one "System RAM" resource).
    pub(crate) fn damon_pfn_range(&self) -> (u64, u64) {
        self.phys.pfn_range()
    }

    /// Starts recording aggregation snapshots (for a damo record).
    pub fn damon_start_record(&mut self) {
        if let Some(d) = self.damon.as_mut() {
            d.record.get_or_insert_with(Vec::new);
        }
    }

    /// Whether DAMON runs in this machine.
    pub fn damon_enabled(&self) -> bool {
        self.damon.is_some()
    }

    /// DAMON's report: kdamond CPU, per-context stats, module stats.
    pub(crate) fn damon_report(&self) -> Option<DamonReport> {
        let d = self.damon.as_ref()?;
        let mut cpu = 0;
        let mut contexts = Vec::new();
        for c in &d.ctxs {
            cpu += c.cpu_ns;
            contexts.push(DamonCtxReport {
                name: c.name(),
                ops: match c.ops {
                    DamonOps::Vaddr => "vaddr",
                    DamonOps::Fvaddr => "fvaddr",
                    DamonOps::Paddr => "paddr",
                }
                .into(),
                kdamond_cpu_s: c.cpu_ns as f64 / 1e9,
                nr_samples: c.passed_sample_intervals,
                nr_aggregations: c.nr_aggregations,
                nr_regions: c.nr_regions(),
                sample_us: c.attrs.sample_us,
                aggr_us: c.attrs.aggr_us,
                schemes: c
                    .schemes
                    .iter()
                    .map(|s| DamosSchemeReport {
                        action: s.action.name().into(),
                        stat: s.stat,
                        esz: s.quota.esz,
                        nr_tried_regions: s.last_tried.0,
                        tried_regions_bytes: s.last_tried.1,
                        tried_regions_mapped_bytes: s.last_tried.2,
                    })
                    .collect(),
            });
        }
        let mut module_stats = std::collections::BTreeMap::new();
        for c in &d.ctxs {
            match c.module {
                Module::LruSort => lru_sort::stats(c, &mut module_stats),
                Module::Reclaim => reclaim::stats(c, &mut module_stats),
                Module::Sysfs(_) => {}
            }
        }
        Some(DamonReport {
            kdamond_cpu_s: cpu as f64 / 1e9,
            contexts,
            module_stats,
            record: d.record.clone().unwrap_or_default(),
            module_writes: d.modules.log.clone(),
        })
    }

    /// Zeroes DAMON's counters (kdamond CPU, DAMOS stats, the record) for
    /// `Sim::begin_measurement`; the monitoring state stays.
    pub(crate) fn damon_begin_measurement(&mut self) {
        if let Some(d) = self.damon.as_mut() {
            for c in &mut d.ctxs {
                c.cpu_ns = 0;
                for s in &mut c.schemes {
                    s.stat = DamosStat::default();
                }
            }
            if let Some(r) = d.record.as_mut() {
                r.clear();
            }
        }
    }
}
