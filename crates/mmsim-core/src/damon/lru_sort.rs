//! DAMON_LRU_SORT (mm/damon/lru_sort.c; the parameters and defaults of
//! Linux v6.12, Documentation/admin-guide/mm/damon/lru_sort.rst, with the
//! later `filter_young_pages` and `autotune_monitoring_intervals` as
//! options; checked against lru_sort.c at commit 06befa61).
//!
//! One paddr context over the whole physical memory (or
//! `monitor_region_start`..`monitor_region_end`), with two schemes applied
//! every aggregation interval under half of `quota_ms` each, prioritising
//! hotter and older regions first (weights: nr_accesses 1, age 1), and
//! active only while free memory is between `wmarks_low` and `wmarks_high`
//! per mille (hysteresis at `wmarks_mid`):
//!
//! * hot: `nr_accesses >= max_nr_accesses × hot_thres_access_freq / 1000`
//!   → `lru_prio` (`folio_mark_accessed`);
//! * cold: no access for `cold_min_age` µs (`age >= cold_min_age /
//!   aggr_interval`) → `lru_deprio` (`folio_deactivate`).
//!
//! Not modelled: `active_mem_bp` (its goal metrics came after 6.12),
//! `addr_unit`. Writes at run time, `enabled` and `commit_inputs`:
//! `super::module_params`.

use serde::{Deserialize, Serialize};

use super::modules_common::{fixed_intervals, mon_attrs, paddr_target, wmarks};
use super::sysfs::{
    AccessPatternConfig, ContextConfig, DamonOps, DamosAction, FilterConfig, FilterType, Intervals,
    IntervalsGoal, MinMax, QuotasConfig, SchemeConfig, WeightsConfig,
};
use super::{Ctx, Module};
use crate::config::ConfigError;

/// `/sys/module/damon_lru_sort/parameters/` (v6.12 defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LruSortParams {
    /// `enabled` (N).
    pub enabled: bool,
    /// `hot_thres_access_freq`, per mille of `max_nr_accesses` (500).
    pub hot_thres_access_freq: u64,
    /// `cold_min_age`, µs (120,000,000).
    pub cold_min_age: u64,
    /// `quota_ms` (10), split in half between the two schemes.
    pub quota_ms: u64,
    /// `quota_reset_interval_ms` (1,000).
    pub quota_reset_interval_ms: u64,
    /// `wmarks_interval`, µs (5,000,000).
    pub wmarks_interval: u64,
    /// `wmarks_high`, per mille free (200).
    pub wmarks_high: u64,
    /// `wmarks_mid` (150).
    pub wmarks_mid: u64,
    /// `wmarks_low` (50).
    pub wmarks_low: u64,
    /// `sample_interval`, µs (5,000).
    pub sample_interval: u64,
    /// `aggr_interval`, µs (100,000).
    pub aggr_interval: u64,
    /// `min_nr_regions` (10).
    pub min_nr_regions: u64,
    /// `max_nr_regions` (1,000).
    pub max_nr_regions: u64,
    /// `monitor_region_start`, a physical address (0 with the end 0: all RAM).
    pub monitor_region_start: u64,
    /// `monitor_region_end`.
    pub monitor_region_end: u64,
    /// `filter_young_pages` (later kernels; N).
    pub filter_young_pages: bool,
    /// `autotune_monitoring_intervals` (later kernels; N).
    pub autotune_monitoring_intervals: bool,
}

impl Default for LruSortParams {
    fn default() -> Self {
        LruSortParams {
            enabled: false,
            hot_thres_access_freq: 500,
            cold_min_age: 120_000_000,
            quota_ms: 10,
            quota_reset_interval_ms: 1000,
            wmarks_interval: 5_000_000,
            wmarks_high: 200,
            wmarks_mid: 150,
            wmarks_low: 50,
            sample_interval: 5000,
            aggr_interval: 100_000,
            min_nr_regions: 10,
            max_nr_regions: 1000,
            monitor_region_start: 0,
            monitor_region_end: 0,
            filter_young_pages: false,
            autotune_monitoring_intervals: false,
        }
    }
}

impl LruSortParams {
    /// The context `damon_lru_sort_apply_parameters()` builds, as sysfs
    /// would describe it.
    pub fn context_config(&self) -> ContextConfig {
        let mut intervals = fixed_intervals(self.sample_interval, self.aggr_interval);
        if self.autotune_monitoring_intervals {
            intervals = Intervals {
                sample_us: 5000,
                aggr_us: 100_000,
                update_us: 0,
                intervals_goal: IntervalsGoal {
                    access_bp: 40,
                    aggrs: 3,
                    min_sample_us: 5000,
                    max_sample_us: 10_000_000,
                },
            };
        }
        let max_nr = (intervals.aggr_us / intervals.sample_us.max(1)).max(1);
        let hot_thres = max_nr * self.hot_thres_access_freq / 1000;
        let cold_thres = self.cold_min_age / intervals.aggr_us.max(1);
        let quotas = QuotasConfig {
            ms: self.quota_ms / 2,
            bytes: 0,
            reset_interval_ms: self.quota_reset_interval_ms,
            weights: WeightsConfig {
                sz_permil: 0,
                nr_accesses_permil: 1,
                age_permil: 1,
            },
            goals: Vec::new(),
        };
        let watermarks = wmarks(
            self.wmarks_interval,
            self.wmarks_high,
            self.wmarks_mid,
            self.wmarks_low,
        );
        let young = |matching| FilterConfig {
            filter_type: FilterType::Young,
            matching,
            allow: false,
            memcg_path: None,
            addr_start: 0,
            addr_end: 0,
            target_idx: 0,
            min: 0,
            max: 0,
        };
        let stub = AccessPatternConfig {
            sz: MinMax {
                min: crate::PAGE_SIZE,
                max: u64::MAX,
            },
            ..Default::default()
        };
        let hot = SchemeConfig {
            action: DamosAction::LruPrio,
            apply_interval_us: 0,
            target_nid: None,
            access_pattern: AccessPatternConfig {
                nr_accesses: MinMax {
                    min: hot_thres,
                    max: u32::MAX as u64,
                },
                ..stub
            },
            quotas: quotas.clone(),
            watermarks,
            filters: if self.filter_young_pages {
                vec![young(false)]
            } else {
                Vec::new()
            },
        };
        let cold = SchemeConfig {
            action: DamosAction::LruDeprio,
            access_pattern: AccessPatternConfig {
                nr_accesses: MinMax { min: 0, max: 0 },
                age: MinMax {
                    min: cold_thres,
                    max: u32::MAX as u64,
                },
                ..stub
            },
            filters: if self.filter_young_pages {
                vec![young(true)]
            } else {
                Vec::new()
            },
            ..hot.clone()
        };
        ContextConfig {
            operations: DamonOps::Paddr,
            monitoring_attrs: mon_attrs(intervals, self.min_nr_regions, self.max_nr_regions),
            targets: paddr_target(self.monitor_region_start, self.monitor_region_end),
            schemes: vec![hot, cold],
        }
    }

    /// Checks the parameters as `damon_lru_sort_apply_parameters()` and
    /// `damon_set_attrs()` would, naming the parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.sample_interval == 0 {
            return Err(ConfigError::new(
                "machine.damon.lru_sort.sample_interval",
                "0 is invalid (damon_lru_sort_apply_parameters returns -EINVAL)",
            ));
        }
        if self.hot_thres_access_freq > 1000 {
            return Err(ConfigError::new(
                "machine.damon.lru_sort.hot_thres_access_freq",
                format!(
                    "{} is out of range [0, 1000] (per mille)",
                    self.hot_thres_access_freq
                ),
            ));
        }
        self.context_config().validate("machine.damon.lru_sort")
    }

    /// The module's context.
    pub(crate) fn build_ctx(&self, pfn: (u64, u64)) -> Ctx {
        Ctx::from_sysfs(Module::LruSort, &self.context_config(), pfn)
    }
}

/// The module's read-only stats parameters, from its schemes' stats.
pub(crate) fn stats(c: &Ctx, out: &mut std::collections::BTreeMap<String, u64>) {
    for s in &c.schemes {
        let which = match s.action {
            DamosAction::LruPrio => "hot",
            DamosAction::LruDeprio => "cold",
            _ => continue,
        };
        let st = s.stat;
        out.insert(format!("nr_lru_sort_tried_{which}_regions"), st.nr_tried);
        out.insert(format!("bytes_lru_sort_tried_{which}_regions"), st.sz_tried);
        out.insert(format!("nr_lru_sorted_{which}_regions"), st.nr_applied);
        out.insert(format!("bytes_lru_sorted_{which}_regions"), st.sz_applied);
        out.insert(format!("nr_{which}_quota_exceeds"), st.qt_exceeds);
    }
}
