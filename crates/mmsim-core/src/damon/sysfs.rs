//! DAMON's configuration as the sysfs tree names it (mm/damon/sysfs.c,
//! mm/damon/sysfs-schemes.c, Documentation/admin-guide/mm/damon/usage.rst;
//! Linux v6.12, with the 6.14 `allow` file of filters).
//!
//! `/sys/kernel/mm/damon/admin/kdamonds/<N>/contexts/<N>/…` becomes, in a
//! scenario's machine section:
//!
//! ```toml
//! [[machine.damon.kdamonds]]
//! [[machine.damon.kdamonds.contexts]]
//! operations = "paddr"                 # contexts/<N>/operations
//! [machine.damon.kdamonds.contexts.monitoring_attrs.intervals]
//! sample_us = 5000                     # …/intervals/sample_us
//! aggr_us = 100000
//! update_us = 1000000
//! [[machine.damon.kdamonds.contexts.schemes]]
//! action = "pageout"                   # schemes/<N>/action
//! access_pattern = { nr_accesses = { min = 0, max = 0 }, age = { min = 10, max = 4294967295 } }
//! quotas = { ms = 10, bytes = 134217728, reset_interval_ms = 1000 }
//! ```
//!
//! Every file keeps its sysfs name and its sysfs default (the values
//! `damon_sysfs_*_alloc` starts a directory with: intervals 5 ms / 100 ms /
//! 1 s, nr_regions 10..1000, an access pattern admitting everything,
//! quotas and weights 0, watermark metric `none`). The special-purpose
//! modules have their module parameters instead (`lru_sort.rs`, `reclaim.rs`).

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;

/// DAMON in a machine: the kdamonds of the sysfs interface and the
/// special-purpose modules, each off unless given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DamonConfig {
    /// Seed of DAMON's random choices (`damon_rand()`: sampling addresses
    /// and split points). Same seed, same bits.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// `kdamonds/<N>`: each kdamond runs its contexts (one per kdamond, as
    /// the kernel supports).
    #[serde(default)]
    pub kdamonds: Vec<KdamondConfig>,
    /// The DAMON_LRU_SORT module's parameters
    /// (`/sys/module/damon_lru_sort/parameters/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lru_sort: Option<super::lru_sort::LruSortParams>,
    /// The DAMON_RECLAIM module's parameters
    /// (`/sys/module/damon_reclaim/parameters/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reclaim: Option<super::reclaim::ReclaimParams>,
    /// Keep every aggregation's regions (the `damon:damon_aggregated`
    /// tracepoint) in `RunResult::damon` for a damo record (`mmsim run
    /// --damon-record`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub record: bool,
}

fn default_seed() -> u64 {
    0xda30_5eed
}

impl Default for DamonConfig {
    fn default() -> Self {
        DamonConfig {
            seed: default_seed(),
            kdamonds: Vec::new(),
            lru_sort: None,
            reclaim: None,
            record: false,
        }
    }
}

/// `kdamonds/<N>/`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KdamondConfig {
    /// `contexts/<N>`: at most one, as in the kernel.
    #[serde(default)]
    pub contexts: Vec<ContextConfig>,
}

/// `contexts/<N>/operations`: the monitoring operations set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DamonOps {
    /// Virtual address spaces of processes, regions from their mappings.
    Vaddr,
    /// Virtual address spaces, fixed regions the user gives.
    Fvaddr,
    /// The physical address space.
    Paddr,
}

/// `contexts/<N>/`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextConfig {
    /// `operations`.
    pub operations: DamonOps,
    /// `monitoring_attrs/`.
    #[serde(default)]
    pub monitoring_attrs: MonitoringAttrs,
    /// `targets/<N>`.
    #[serde(default)]
    pub targets: Vec<TargetConfig>,
    /// `schemes/<N>`.
    #[serde(default)]
    pub schemes: Vec<SchemeConfig>,
}

/// `monitoring_attrs/`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MonitoringAttrs {
    /// `intervals/`.
    #[serde(default)]
    pub intervals: Intervals,
    /// `nr_regions/`.
    #[serde(default)]
    pub nr_regions: NrRegions,
}

/// `monitoring_attrs/intervals/` (µs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intervals {
    /// `sample_us` (default 5,000).
    #[serde(default = "d_sample")]
    pub sample_us: u64,
    /// `aggr_us` (default 100,000).
    #[serde(default = "d_aggr")]
    pub aggr_us: u64,
    /// `update_us` (default 1,000,000).
    #[serde(default = "d_update")]
    pub update_us: u64,
    /// `intervals_goal/` (6.15+ auto-tuning; off when `aggrs` is 0).
    #[serde(default)]
    pub intervals_goal: IntervalsGoal,
}

fn d_sample() -> u64 {
    5_000
}
fn d_aggr() -> u64 {
    100_000
}
fn d_update() -> u64 {
    1_000_000
}

impl Default for Intervals {
    fn default() -> Self {
        Intervals {
            sample_us: d_sample(),
            aggr_us: d_aggr(),
            update_us: d_update(),
            intervals_goal: IntervalsGoal::default(),
        }
    }
}

/// `monitoring_attrs/intervals/intervals_goal/` (`struct damon_intervals_goal`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntervalsGoal {
    /// `access_bp`: the wanted share of observed access events.
    #[serde(default)]
    pub access_bp: u64,
    /// `aggrs`: aggregations between tunings; 0 turns tuning off.
    #[serde(default)]
    pub aggrs: u64,
    /// `min_sample_us`.
    #[serde(default)]
    pub min_sample_us: u64,
    /// `max_sample_us`.
    #[serde(default)]
    pub max_sample_us: u64,
}

/// `monitoring_attrs/nr_regions/`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NrRegions {
    /// `min` (default 10, at least 3).
    #[serde(default = "d_min_regions")]
    pub min: u64,
    /// `max` (default 1,000).
    #[serde(default = "d_max_regions")]
    pub max: u64,
}

fn d_min_regions() -> u64 {
    10
}
fn d_max_regions() -> u64 {
    1000
}

impl Default for NrRegions {
    fn default() -> Self {
        NrRegions {
            min: d_min_regions(),
            max: d_max_regions(),
        }
    }
}

/// `targets/<N>/`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetConfig {
    /// `pid_target`: for `vaddr`/`fvaddr`, the simulated task whose address
    /// space is monitored (a scenario's tasks are numbered 0, 1, … in the
    /// order its workloads create them). Without it, a `vaddr` context
    /// monitors every task of the scenario, one target each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_target: Option<u32>,
    /// `regions/<N>/`: the initial regions (required for `fvaddr`; for
    /// `paddr`, none means the whole physical memory).
    #[serde(default)]
    pub regions: Vec<AddrRangeConfig>,
}

/// `regions/<N>/` and the `addr` filter's range: `[start, end)` in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddrRangeConfig {
    /// `start`.
    pub start: u64,
    /// `end`.
    pub end: u64,
}

/// `schemes/<N>/action` (`enum damos_action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DamosAction {
    /// `MADV_WILLNEED` (vaddr).
    Willneed,
    /// `MADV_COLD` (vaddr).
    Cold,
    /// `MADV_PAGEOUT` (vaddr) or `reclaim_pages()` (paddr).
    Pageout,
    /// `MADV_HUGEPAGE` (vaddr).
    Hugepage,
    /// `MADV_NOHUGEPAGE` (vaddr).
    Nohugepage,
    /// `folio_mark_accessed()` on each folio (paddr).
    LruPrio,
    /// `folio_deactivate()` on each folio (paddr).
    LruDeprio,
    /// Migrate hot folios to another node (paddr).
    MigrateHot,
    /// Migrate cold folios to another node (paddr).
    MigrateCold,
    /// Only count.
    Stat,
}

impl DamosAction {
    /// The sysfs name.
    pub fn name(self) -> &'static str {
        match self {
            DamosAction::Willneed => "willneed",
            DamosAction::Cold => "cold",
            DamosAction::Pageout => "pageout",
            DamosAction::Hugepage => "hugepage",
            DamosAction::Nohugepage => "nohugepage",
            DamosAction::LruPrio => "lru_prio",
            DamosAction::LruDeprio => "lru_deprio",
            DamosAction::MigrateHot => "migrate_hot",
            DamosAction::MigrateCold => "migrate_cold",
            DamosAction::Stat => "stat",
        }
    }
}

/// `schemes/<N>/`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemeConfig {
    /// `action`.
    pub action: DamosAction,
    /// `apply_interval_us` (0: the aggregation interval).
    #[serde(default)]
    pub apply_interval_us: u64,
    /// `target_nid` of the migrate actions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_nid: Option<i64>,
    /// `access_pattern/`.
    #[serde(default)]
    pub access_pattern: AccessPatternConfig,
    /// `quotas/`.
    #[serde(default)]
    pub quotas: QuotasConfig,
    /// `watermarks/`.
    #[serde(default)]
    pub watermarks: WatermarksConfig,
    /// `filters/<N>/`, in order.
    #[serde(default)]
    pub filters: Vec<FilterConfig>,
}

/// A `min`/`max` directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MinMax {
    /// `min`.
    #[serde(default)]
    pub min: u64,
    /// `max`.
    pub max: u64,
}

/// `access_pattern/`: every bound inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessPatternConfig {
    /// `sz/` in bytes (default 0..ULONG_MAX). Left out when written back at
    /// its default: TOML integers stop at 2^63 − 1, so a scenario with the
    /// default could not be rendered as TOML (a probe dump's sidecar).
    #[serde(default = "d_sz", skip_serializing_if = "is_d_sz")]
    pub sz: MinMax,
    /// `nr_accesses/` in samples per aggregation (default 0..UINT_MAX).
    #[serde(default = "d_u32_range")]
    pub nr_accesses: MinMax,
    /// `age/` in aggregation intervals (default 0..UINT_MAX).
    #[serde(default = "d_u32_range")]
    pub age: MinMax,
}

fn d_sz() -> MinMax {
    MinMax {
        min: 0,
        max: u64::MAX,
    }
}
fn is_d_sz(m: &MinMax) -> bool {
    *m == d_sz()
}
fn d_u32_range() -> MinMax {
    MinMax {
        min: 0,
        max: u32::MAX as u64,
    }
}

impl Default for AccessPatternConfig {
    fn default() -> Self {
        AccessPatternConfig {
            sz: d_sz(),
            nr_accesses: d_u32_range(),
            age: d_u32_range(),
        }
    }
}

/// `quotas/`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotasConfig {
    /// `ms`: time quota per reset interval.
    #[serde(default)]
    pub ms: u64,
    /// `bytes`: size quota per reset interval.
    #[serde(default)]
    pub bytes: u64,
    /// `reset_interval_ms`.
    #[serde(default)]
    pub reset_interval_ms: u64,
    /// `weights/`.
    #[serde(default)]
    pub weights: WeightsConfig,
    /// `goals/<N>/`.
    #[serde(default)]
    pub goals: Vec<QuotaGoalConfig>,
}

/// `quotas/weights/` (per mille; the kernel's scores use them as plain weights).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightsConfig {
    /// `sz_permil` (unused by the in-tree score functions).
    #[serde(default)]
    pub sz_permil: u64,
    /// `nr_accesses_permil`.
    #[serde(default)]
    pub nr_accesses_permil: u64,
    /// `age_permil`.
    #[serde(default)]
    pub age_permil: u64,
}

/// `goals/<N>/target_metric` (`enum damos_quota_goal_metric`, v6.12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalMetric {
    /// `user_input`: `current_value` as written.
    UserInput,
    /// `some_mem_psi_us`: system memory PSI "some" µs per reset interval.
    SomeMemPsiUs,
    /// `node_mem_used_bp`: used memory of the node, basis points.
    NodeMemUsedBp,
    /// `node_mem_free_bp`: free memory of the node, basis points.
    NodeMemFreeBp,
}

/// `quotas/goals/<N>/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaGoalConfig {
    /// `target_metric`.
    pub target_metric: GoalMetric,
    /// `target_value`.
    pub target_value: u64,
    /// `current_value` (for `user_input`).
    #[serde(default)]
    pub current_value: u64,
}

/// `watermarks/metric`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WmarkMetric {
    /// Always active.
    #[default]
    None,
    /// Free memory per mille of total RAM.
    FreeMemRate,
}

/// `watermarks/` (per mille).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatermarksConfig {
    /// `metric`.
    #[serde(default)]
    pub metric: WmarkMetric,
    /// `interval_us`: how long to wait before checking again.
    #[serde(default)]
    pub interval_us: u64,
    /// `high`.
    #[serde(default)]
    pub high: u64,
    /// `mid`.
    #[serde(default)]
    pub mid: u64,
    /// `low`.
    #[serde(default)]
    pub low: u64,
}

/// `filters/<N>/type` (`enum damos_filter_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilterType {
    /// Anonymous folios (ops layer).
    Anon,
    /// Folios on an active list (ops layer).
    Active,
    /// Folios of the memory cgroup `memcg_path` (ops layer).
    Memcg,
    /// Folios accessed since their last check (ops layer; mkolds them).
    Young,
    /// Folios whose size is in `[min, max]` bytes (ops layer).
    HugepageSize,
    /// Folios mapped by no page table (ops layer).
    Unmapped,
    /// Regions inside `[addr_start, addr_end)` (core layer).
    Addr,
    /// The target of index `target_idx` (core layer).
    Target,
}

impl FilterType {
    /// `damos_filter_for_ops()`: handled by the operations set, per folio.
    pub fn for_ops(self) -> bool {
        !matches!(self, FilterType::Addr | FilterType::Target)
    }
}

/// `filters/<N>/`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilterConfig {
    /// `type`.
    #[serde(rename = "type")]
    pub filter_type: FilterType,
    /// `matching`: the filter matches memory that has (true) or lacks (false)
    /// the property.
    #[serde(default = "d_true")]
    pub matching: bool,
    /// `allow` (6.14+): a match allows (true) or rejects (false).
    #[serde(default)]
    pub allow: bool,
    /// `memcg_path` of a `memcg` filter (e.g. `/workload`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memcg_path: Option<String>,
    /// `addr_start` of an `addr` filter.
    #[serde(default)]
    pub addr_start: u64,
    /// `addr_end` of an `addr` filter.
    #[serde(default)]
    pub addr_end: u64,
    /// `target_idx` of a `target` filter.
    #[serde(default)]
    pub target_idx: u64,
    /// `min` of a `hugepage_size` filter, bytes.
    #[serde(default)]
    pub min: u64,
    /// `max` of a `hugepage_size` filter, bytes.
    #[serde(default)]
    pub max: u64,
}

fn d_true() -> bool {
    true
}

fn err(field: String, msg: impl Into<String>) -> ConfigError {
    ConfigError::new(field, msg)
}

impl DamonConfig {
    /// Checks every context as `damon_set_attrs()`, `damon_commit_ctx()` and
    /// the sysfs store functions do, naming the field
    /// (`machine.damon.kdamonds[0].contexts[0]…`). Actions this simulator
    /// cannot apply are refused here, never ignored.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (k, kd) in self.kdamonds.iter().enumerate() {
            if kd.contexts.len() > 1 {
                return Err(err(
                    format!("machine.damon.kdamonds[{k}].contexts"),
                    format!(
                        "{} contexts; a kdamond runs at most one (the kernel's limit)",
                        kd.contexts.len()
                    ),
                ));
            }
            for (c, ctx) in kd.contexts.iter().enumerate() {
                ctx.validate(&format!("machine.damon.kdamonds[{k}].contexts[{c}]"))?;
            }
        }
        if let Some(p) = &self.lru_sort {
            p.validate()?;
        }
        if let Some(p) = &self.reclaim {
            p.validate()?;
        }
        if self.lru_sort.as_ref().is_some_and(|p| p.enabled)
            && self.reclaim.as_ref().is_some_and(|p| p.enabled)
        {
            return Err(err(
                "machine.damon.lru_sort.enabled".into(),
                "DAMON_LRU_SORT and DAMON_RECLAIM both enabled: each starts its context \
                 exclusively (damon_start(.., true)), so the second fails with -EBUSY",
            ));
        }
        Ok(())
    }
}

impl ContextConfig {
    /// Checks the context; `f` is its field path.
    pub fn validate(&self, f: &str) -> Result<(), ConfigError> {
        let iv = &self.monitoring_attrs.intervals;
        let nr = &self.monitoring_attrs.nr_regions;
        if iv.sample_us == 0 || iv.sample_us > 3_600_000_000 {
            return Err(err(
                format!("{f}.monitoring_attrs.intervals.sample_us"),
                format!(
                    "{} is out of range [1, 3600000000] (µs; 0 would busy-loop)",
                    iv.sample_us
                ),
            ));
        }
        if iv.aggr_us < iv.sample_us || iv.aggr_us > 3_600_000_000 {
            return Err(err(
                format!("{f}.monitoring_attrs.intervals.aggr_us"),
                format!(
                    "{} is out of range [sample_us = {}, 3600000000] (damon_set_attrs)",
                    iv.aggr_us, iv.sample_us
                ),
            ));
        }
        if iv.update_us > 3_600_000_000_000 {
            return Err(err(
                format!("{f}.monitoring_attrs.intervals.update_us"),
                format!("{} is out of range [0, 3600000000000]", iv.update_us),
            ));
        }
        let g = &iv.intervals_goal;
        if g.aggrs > 0
            && (g.access_bp == 0
                || g.access_bp > 10_000
                || g.min_sample_us == 0
                || g.min_sample_us > g.max_sample_us
                || !(g.min_sample_us..=g.max_sample_us).contains(&iv.sample_us))
        {
            return Err(err(
                format!("{f}.monitoring_attrs.intervals.intervals_goal"),
                "with aggrs > 0: access_bp in [1, 10000] and \
                 0 < min_sample_us <= sample_us <= max_sample_us (damon_set_attrs)",
            ));
        }
        if nr.min < 3 || nr.min > nr.max || nr.max > 1_000_000 {
            return Err(err(
                format!("{f}.monitoring_attrs.nr_regions"),
                format!(
                    "min {} max {}: need 3 <= min <= max <= 1000000 (damon_set_attrs)",
                    nr.min, nr.max
                ),
            ));
        }
        if self.operations == DamonOps::Fvaddr && self.targets.iter().any(|t| t.regions.is_empty())
        {
            return Err(err(
                format!("{f}.targets"),
                "an fvaddr target needs its regions",
            ));
        }
        for (t, tc) in self.targets.iter().enumerate() {
            let mut last = 0;
            for (r, rg) in tc.regions.iter().enumerate() {
                if rg.start >= rg.end || rg.start < last {
                    return Err(err(
                        format!("{f}.targets[{t}].regions[{r}]"),
                        format!(
                            "[{:#x}, {:#x}): regions must be non-empty, sorted and \
                             not overlapping",
                            rg.start, rg.end
                        ),
                    ));
                }
                last = rg.end;
            }
        }
        for (s, sc) in self.schemes.iter().enumerate() {
            sc.validate(&format!("{f}.schemes[{s}]"), self.operations)?;
        }
        Ok(())
    }
}

impl SchemeConfig {
    /// Checks the scheme; `f` is its field path.
    pub fn validate(&self, f: &str, ops: DamonOps) -> Result<(), ConfigError> {
        let supported = match ops {
            DamonOps::Paddr => matches!(
                self.action,
                DamosAction::Pageout
                    | DamosAction::LruPrio
                    | DamosAction::LruDeprio
                    | DamosAction::Stat
            ),
            DamonOps::Vaddr | DamonOps::Fvaddr => matches!(
                self.action,
                DamosAction::Pageout
                    | DamosAction::Cold
                    | DamosAction::Stat
                    | DamosAction::Willneed
                    | DamosAction::Hugepage
                    | DamosAction::Nohugepage
            ),
        };
        if matches!(
            self.action,
            DamosAction::MigrateHot | DamosAction::MigrateCold
        ) {
            return Err(err(
                format!("{f}.action"),
                format!(
                    "`{}` migrates to another NUMA node, and the simulated machine has one \
                     node (damon_pa_migrate() does nothing when target_nid is the \
                     folio's own node)",
                    self.action.name()
                ),
            ));
        }
        if !supported {
            return Err(err(
                format!("{f}.action"),
                format!(
                    "`{}` is not modelled for {:?} contexts (supported: paddr pageout, \
                     lru_prio, lru_deprio, stat; vaddr/fvaddr pageout, cold, willneed, hugepage, \
                     nohugepage, stat)",
                    self.action.name(),
                    ops
                ),
            ));
        }
        let p = &self.access_pattern;
        for (name, r) in [("sz", p.sz), ("nr_accesses", p.nr_accesses), ("age", p.age)] {
            if r.min > r.max {
                return Err(err(
                    format!("{f}.access_pattern.{name}"),
                    format!("min {} > max {}", r.min, r.max),
                ));
            }
        }
        for (name, r) in [("nr_accesses", p.nr_accesses), ("age", p.age)] {
            if r.max > u32::MAX as u64 {
                return Err(err(
                    format!("{f}.access_pattern.{name}.max"),
                    format!("{} is out of range [0, 4294967295]", r.max),
                ));
            }
        }
        let q = &self.quotas;
        if q.ms > 3_600_000 || q.reset_interval_ms > 3_600_000_000 {
            return Err(err(
                format!("{f}.quotas"),
                "ms must be at most 3600000 and reset_interval_ms at most 3600000000",
            ));
        }
        for (i, g) in q.goals.iter().enumerate() {
            if g.target_value == 0 {
                return Err(err(
                    format!("{f}.quotas.goals[{i}].target_value"),
                    "0 divides the goal's score (current_value * 10000 / target_value)",
                ));
            }
        }
        let w = &self.watermarks;
        if w.metric == WmarkMetric::FreeMemRate && !(w.low <= w.mid && w.mid <= w.high) {
            return Err(err(
                format!("{f}.watermarks"),
                format!(
                    "need low <= mid <= high (per mille), got {} / {} / {}",
                    w.low, w.mid, w.high
                ),
            ));
        }
        for (i, fc) in self.filters.iter().enumerate() {
            let ff = format!("{f}.filters[{i}]");
            if ops != DamonOps::Paddr && fc.filter_type.for_ops() {
                return Err(err(
                    format!("{ff}.type"),
                    format!(
                        "`{:?}` filters are handled by the paddr operations set only \
                         (damos_pa_filter_out)",
                        fc.filter_type
                    ),
                ));
            }
            match fc.filter_type {
                FilterType::Memcg if fc.memcg_path.is_none() => {
                    return Err(err(
                        format!("{ff}.memcg_path"),
                        "a memcg filter needs memcg_path",
                    ))
                }
                FilterType::Addr if fc.addr_start >= fc.addr_end => {
                    return Err(err(
                        format!("{ff}.addr_end"),
                        format!(
                            "addr range [{:#x}, {:#x}) is empty",
                            fc.addr_start, fc.addr_end
                        ),
                    ))
                }
                FilterType::HugepageSize if fc.min > fc.max => {
                    return Err(err(
                        format!("{ff}.min"),
                        format!("min {} > max {}", fc.min, fc.max),
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }
}
