//! What DAMON's modules share (mm/damon/modules-common.h and
//! modules-common.c, Linux v6.12).
//!
//! The kernel declares the monitoring-attribute and watermark parameters once
//! (`DEFINE_DAMON_MODULES_MON_ATTRS_PARAMS`,
//! `DEFINE_DAMON_MODULES_WMARKS_PARAMS`) and builds each module's context
//! with one paddr target (`damon_modules_new_paddr_ctx_target`). The
//! parameters stay flat fields of each module's struct here, because they are
//! flat files under `/sys/module/damon_*/parameters/` and serde cannot refuse
//! unknown fields through a flattened struct; what the kernel shares, the
//! conversion into a context, is shared below. Only the defaults differ:
//! DAMON_LRU_SORT's watermarks are 200/150/50 per mille, DAMON_RECLAIM's
//! 500/400/200.

use super::sysfs::{
    AddrRangeConfig, Intervals, IntervalsGoal, MonitoringAttrs, NrRegions, TargetConfig,
    WatermarksConfig, WmarkMetric,
};

/// `damon_modules_mon_attrs`: the module's `sample_interval` and
/// `aggr_interval` (µs) and `min_nr_regions`..`max_nr_regions`; the ops
/// update interval is 0 (paddr has no mappings to update).
pub(crate) fn mon_attrs(intervals: Intervals, min_nr: u64, max_nr: u64) -> MonitoringAttrs {
    MonitoringAttrs {
        intervals,
        nr_regions: NrRegions {
            min: min_nr,
            max: max_nr,
        },
    }
}

/// The fixed intervals a module's `sample_interval` and `aggr_interval`
/// give, without auto-tuning.
pub(crate) fn fixed_intervals(sample_us: u64, aggr_us: u64) -> Intervals {
    Intervals {
        sample_us,
        aggr_us,
        update_us: 0,
        intervals_goal: IntervalsGoal::default(),
    }
}

/// `damon_modules_wmarks`: free-memory-rate watermarks checked every
/// `wmarks_interval` µs, in per mille.
pub(crate) fn wmarks(interval_us: u64, high: u64, mid: u64, low: u64) -> WatermarksConfig {
    WatermarksConfig {
        metric: WmarkMetric::FreeMemRate,
        interval_us,
        high,
        mid,
        low,
    }
}

/// `damon_modules_new_paddr_ctx_target` with the module's
/// `monitor_region_start`/`_end`: one target over `[start, end)` if either
/// is set, else over the biggest System RAM resource (the whole PFN space
/// here).
pub(crate) fn paddr_target(start: u64, end: u64) -> Vec<TargetConfig> {
    let regions = if start == 0 && end == 0 {
        Vec::new()
    } else {
        vec![AddrRangeConfig { start, end }]
    };
    vec![TargetConfig {
        pid_target: None,
        regions,
    }]
}
