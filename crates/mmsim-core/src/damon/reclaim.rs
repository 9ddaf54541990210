//! DAMON_RECLAIM (mm/damon/reclaim.c; the parameters and defaults of Linux
//! v6.12, Documentation/admin-guide/mm/damon/reclaim.rst).
//!
//! One paddr context over the whole physical memory (or
//! `monitor_region_start`..`monitor_region_end`) with one scheme applied
//! every aggregation interval: regions not accessed for `min_age` µs are
//! paged out (`reclaim_pages`), oldest first (weights: age 1), under
//! `quota_ms` of CPU and `quota_sz` bytes per `quota_reset_interval_ms`,
//! active only while free memory is between `wmarks_low` and `wmarks_high`
//! per mille (hysteresis at `wmarks_mid`). `quota_mem_pressure_us` adds a
//! `some_mem_psi_us` goal, `quota_autotune_feedback` a `user_input` goal
//! (target 10,000), and `skip_anon` a filter rejecting anonymous folios.
//!
//! Not modelled: `addr_unit`. Writes at run time, `enabled` and
//! `commit_inputs`: `super::module_params`.

use serde::{Deserialize, Serialize};

use super::modules_common::{fixed_intervals, mon_attrs, paddr_target, wmarks};
use super::sysfs::{
    AccessPatternConfig, ContextConfig, DamonOps, DamosAction, FilterConfig, FilterType,
    GoalMetric, MinMax, QuotaGoalConfig, QuotasConfig, SchemeConfig, WeightsConfig,
};
use super::{Ctx, Module};
use crate::config::ConfigError;

/// `/sys/module/damon_reclaim/parameters/` (v6.12 defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReclaimParams {
    /// `enabled` (N).
    pub enabled: bool,
    /// `min_age`, µs (120,000,000).
    pub min_age: u64,
    /// `quota_ms` (10).
    pub quota_ms: u64,
    /// `quota_sz`, bytes (128 MiB).
    pub quota_sz: u64,
    /// `quota_reset_interval_ms` (1,000).
    pub quota_reset_interval_ms: u64,
    /// `quota_mem_pressure_us` (0: off): the wanted memory PSI "some" µs
    /// per reset interval.
    pub quota_mem_pressure_us: u64,
    /// `quota_autotune_feedback` (0: off): the user's score against 10,000.
    pub quota_autotune_feedback: u64,
    /// `wmarks_interval`, µs (5,000,000).
    pub wmarks_interval: u64,
    /// `wmarks_high`, per mille free (500).
    pub wmarks_high: u64,
    /// `wmarks_mid` (400).
    pub wmarks_mid: u64,
    /// `wmarks_low` (200).
    pub wmarks_low: u64,
    /// `sample_interval`, µs (5,000).
    pub sample_interval: u64,
    /// `aggr_interval`, µs (100,000).
    pub aggr_interval: u64,
    /// `min_nr_regions` (10).
    pub min_nr_regions: u64,
    /// `max_nr_regions` (1,000).
    pub max_nr_regions: u64,
    /// `monitor_region_start` (0 with the end 0: all RAM).
    pub monitor_region_start: u64,
    /// `monitor_region_end`.
    pub monitor_region_end: u64,
    /// `skip_anon` (N).
    pub skip_anon: bool,
}

impl Default for ReclaimParams {
    fn default() -> Self {
        ReclaimParams {
            enabled: false,
            min_age: 120_000_000,
            quota_ms: 10,
            quota_sz: 128 << 20,
            quota_reset_interval_ms: 1000,
            quota_mem_pressure_us: 0,
            quota_autotune_feedback: 0,
            wmarks_interval: 5_000_000,
            wmarks_high: 500,
            wmarks_mid: 400,
            wmarks_low: 200,
            sample_interval: 5000,
            aggr_interval: 100_000,
            min_nr_regions: 10,
            max_nr_regions: 1000,
            monitor_region_start: 0,
            monitor_region_end: 0,
            skip_anon: false,
        }
    }
}

impl ReclaimParams {
    /// The context `damon_reclaim_apply_parameters()` builds, as sysfs
    /// would describe it.
    pub fn context_config(&self) -> ContextConfig {
        let mut goals = Vec::new();
        if self.quota_mem_pressure_us > 0 {
            goals.push(QuotaGoalConfig {
                target_metric: GoalMetric::SomeMemPsiUs,
                target_value: self.quota_mem_pressure_us,
                current_value: 0,
            });
        }
        if self.quota_autotune_feedback > 0 {
            goals.push(QuotaGoalConfig {
                target_metric: GoalMetric::UserInput,
                target_value: 10_000,
                current_value: self.quota_autotune_feedback,
            });
        }
        let scheme = SchemeConfig {
            action: DamosAction::Pageout,
            apply_interval_us: 0,
            target_nid: None,
            access_pattern: AccessPatternConfig {
                sz: MinMax {
                    min: crate::PAGE_SIZE,
                    max: u64::MAX,
                },
                nr_accesses: MinMax { min: 0, max: 0 },
                age: MinMax {
                    min: self.min_age / self.aggr_interval.max(1),
                    max: u32::MAX as u64,
                },
            },
            quotas: QuotasConfig {
                ms: self.quota_ms,
                bytes: self.quota_sz,
                reset_interval_ms: self.quota_reset_interval_ms,
                weights: WeightsConfig {
                    sz_permil: 0,
                    nr_accesses_permil: 0,
                    age_permil: 1,
                },
                goals,
            },
            watermarks: wmarks(
                self.wmarks_interval,
                self.wmarks_high,
                self.wmarks_mid,
                self.wmarks_low,
            ),
            filters: if self.skip_anon {
                vec![FilterConfig {
                    filter_type: FilterType::Anon,
                    matching: true,
                    allow: false,
                    memcg_path: None,
                    addr_start: 0,
                    addr_end: 0,
                    target_idx: 0,
                    min: 0,
                    max: 0,
                }]
            } else {
                Vec::new()
            },
        };
        ContextConfig {
            operations: DamonOps::Paddr,
            monitoring_attrs: mon_attrs(
                fixed_intervals(self.sample_interval, self.aggr_interval),
                self.min_nr_regions,
                self.max_nr_regions,
            ),
            targets: paddr_target(self.monitor_region_start, self.monitor_region_end),
            schemes: vec![scheme],
        }
    }

    /// Checks the parameters as `damon_reclaim_apply_parameters()` and
    /// `damon_set_attrs()` would, naming the parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.sample_interval == 0 {
            return Err(ConfigError::new(
                "machine.damon.reclaim.sample_interval",
                "0 is invalid (damon_reclaim_apply_parameters returns -EINVAL)",
            ));
        }
        self.context_config().validate("machine.damon.reclaim")
    }

    /// The module's context.
    pub(crate) fn build_ctx(&self, pfn: (u64, u64)) -> Ctx {
        Ctx::from_sysfs(Module::Reclaim, &self.context_config(), pfn)
    }
}

/// The module's read-only stats parameters, from its scheme's stats.
pub(crate) fn stats(c: &Ctx, out: &mut std::collections::BTreeMap<String, u64>) {
    if let Some(s) = c.schemes.first() {
        let st = s.stat;
        out.insert("nr_reclaim_tried_regions".into(), st.nr_tried);
        out.insert("bytes_reclaim_tried_regions".into(), st.sz_tried);
        out.insert("nr_reclaimed_regions".into(), st.nr_applied);
        out.insert("bytes_reclaimed_regions".into(), st.sz_applied);
        out.insert("nr_quota_exceeds".into(), st.qt_exceeds);
    }
}
