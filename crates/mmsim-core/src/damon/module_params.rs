//! DAMON modules' parameters written at run time
//! (`/sys/module/damon_{reclaim,lru_sort}/parameters/`, mm/damon/reclaim.c
//! and mm/damon/lru_sort.c of Linux v6.12, checked against their source).
//!
//! What a write does, as in the kernel:
//!
//! * `enabled` (`damon_{reclaim,lru_sort}_enabled_store`): a change only.
//!   `Y` applies every parameter (`damon_*_apply_parameters`, whatever
//!   `commit_inputs` says) and starts the kdamond (`damon_start`); `N`
//!   stops it (`damon_stop`: `kdamond_fn` destroys the regions on its way
//!   out; the context, its schemes and their stats stay for the next
//!   start). Invalid parameters make the `Y` write fail (-EINVAL) and
//!   nothing starts.
//! * any other writable parameter (`module_param(..., 0600)`): the value is
//!   stored and nothing else happens — the running context keeps what it
//!   was given.
//! * `commit_inputs` = `Y`: stored too; the running kdamond applies the
//!   parameters from its `after_aggregation` callback (after the merge, before
//!   the schemes are applied) or its `after_wmarks_check` callback (after a
//!   watermark wait), whichever comes first
//!   (`damon_*_handle_commit_inputs`), and clears it. Without a kdamond it
//!   waits (and the next `enabled=Y` applies everything anyway).
//!
//! Applying is `damon_commit_ctx()` of a context built from the parameters
//! into the running one (6.11+): the schemes keep their stats and quota
//! charge state, their pattern, action, quotas, goals, watermarks (with
//! `activated` reset to true, as `damos_commit` copies the whole struct)
//! and filters are replaced; the target's regions are fitted to the
//! monitored range (`damon_set_regions`); `damon_set_attrs()` rescales the
//! regions' `nr_accesses` and `age` when the intervals change and restarts
//! the aggregation, ops-update and every scheme's apply countdown from
//! now — so a commit delays the schemes by one apply interval.
//!
//! Deviations: a write that would make the kernel's apply fail (-EINVAL
//! from `damon_set_attrs`, a `sample_interval` of 0, …) is refused when the
//! scenario is set up, naming the write, rather than ending kdamond at run
//! time; read-only parameters (`kdamond_pid`, the stats) refuse writes
//! (0400 files). The 6.12 kernels before the "use param_ctx correctly"
//! fixes (2025) set the intervals on the running context and then let the
//! commit overwrite them with the staging context's defaults; mmsim
//! applies the module's intervals (the fixed behaviour).

use serde::{Deserialize, Serialize};

use super::lru_sort::LruSortParams;
use super::reclaim::ReclaimParams;
use super::{Ctx, Damon, Module, Phase};
use crate::sim::SimError;

/// A DAMON module with parameters under `/sys/module/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DamonModule {
    /// DAMON_LRU_SORT (`damon_lru_sort`).
    LruSort,
    /// DAMON_RECLAIM (`damon_reclaim`).
    Reclaim,
}

impl DamonModule {
    /// The module's name under `/sys/module/`.
    pub fn sys_name(self) -> &'static str {
        match self {
            DamonModule::LruSort => "damon_lru_sort",
            DamonModule::Reclaim => "damon_reclaim",
        }
    }

    /// Parses the scenario's `module` (`lru_sort`, `reclaim`, or the
    /// `/sys/module/` names).
    pub fn parse(s: &str) -> Result<DamonModule, String> {
        match s {
            "lru_sort" | "damon_lru_sort" => Ok(DamonModule::LruSort),
            "reclaim" | "damon_reclaim" => Ok(DamonModule::Reclaim),
            _ => Err(format!(
                "unknown DAMON module `{s}` (expected `reclaim` or `lru_sort`)"
            )),
        }
    }

    fn ctx_module(self) -> Module {
        match self {
            DamonModule::LruSort => Module::LruSort,
            DamonModule::Reclaim => Module::Reclaim,
        }
    }
}

/// One write to a module parameter, logged in `DamonReport::module_writes`
/// (and the commits it caused).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DamonModuleWriteLog {
    /// When, seconds of simulated time.
    pub t_s: f64,
    /// `damon_reclaim` or `damon_lru_sort`.
    pub module: String,
    /// The parameter file (`commit` for a commit kdamond made).
    pub param: String,
    /// The value written.
    pub value: String,
    /// What it did.
    pub result: String,
}

/// A parsed write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ParamWrite {
    /// `enabled`.
    Enabled(bool),
    /// `commit_inputs`.
    CommitInputs(bool),
    /// Another writable parameter, already parsed into the value it stores.
    Other(String, ParamValue),
}

/// A parameter's parsed value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamValue {
    /// A `ulong` parameter.
    U64(u64),
    /// A `bool` parameter.
    Bool(bool),
}

/// A scheduled write: time (ns), module, the text written, the write.
#[derive(Clone, Debug)]
pub(crate) struct PendingWrite {
    pub at: u64,
    pub module: DamonModule,
    pub param: String,
    pub text: String,
    pub write: ParamWrite,
}

/// The modules' parameter files and scheduled writes.
#[derive(Clone, Debug, Default)]
pub(crate) struct ModuleParams {
    /// DAMON_LRU_SORT's parameters as their files hold them.
    pub lru_sort: LruSortParams,
    /// Its `commit_inputs`.
    pub lru_sort_commit: bool,
    /// DAMON_RECLAIM's parameters.
    pub reclaim: ReclaimParams,
    /// Its `commit_inputs`.
    pub reclaim_commit: bool,
    /// Writes not yet made, latest first (popped from the end).
    pub pending: Vec<PendingWrite>,
    /// What the writes did.
    pub log: Vec<DamonModuleWriteLog>,
}

/// `kstrtobool()`: `y`/`Y`/`1`/`on` and `n`/`N`/`0`/`off` (first characters).
fn kstrtobool(s: &str) -> Result<bool, String> {
    let b = s.trim_end_matches('\n').as_bytes();
    match b {
        [b'y' | b'Y' | b'1', ..] => Ok(true),
        [b'n' | b'N' | b'0', ..] => Ok(false),
        [b'o' | b'O', b'n' | b'N', ..] => Ok(true),
        [b'o' | b'O', b'f' | b'F', ..] => Ok(false),
        _ => Err(format!(
            "`{s}` is not a boolean (kstrtobool: Y/N/1/0/on/off; -EINVAL)"
        )),
    }
}

/// `kstrtoul(s, 0)` of `param_set_ulong`: decimal, `0x` hex or `0` octal,
/// an optional trailing newline; overflow is -ERANGE.
fn kstrtoul(s: &str) -> Result<u64, String> {
    let t = s.strip_suffix('\n').unwrap_or(s);
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or(t.strip_prefix("0X")) {
        (h, 16)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(format!("`{s}` is not an unsigned integer (-EINVAL)"));
    }
    u64::from_str_radix(digits, radix)
        .map_err(|_| format!("`{s}` is out of range of unsigned long (-ERANGE)"))
}

/// The writable `ulong` and `bool` parameters of each module (besides
/// `enabled` and `commit_inputs`), and its read-only ones.
fn params_of(
    m: DamonModule,
) -> (
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
) {
    match m {
        DamonModule::Reclaim => (
            &[
                "min_age",
                "quota_ms",
                "quota_sz",
                "quota_reset_interval_ms",
                "quota_mem_pressure_us",
                "quota_autotune_feedback",
                "wmarks_interval",
                "wmarks_high",
                "wmarks_mid",
                "wmarks_low",
                "sample_interval",
                "aggr_interval",
                "min_nr_regions",
                "max_nr_regions",
                "monitor_region_start",
                "monitor_region_end",
            ],
            &["skip_anon"],
            &[
                "kdamond_pid",
                "nr_reclaim_tried_regions",
                "bytes_reclaim_tried_regions",
                "nr_reclaimed_regions",
                "bytes_reclaimed_regions",
                "nr_quota_exceeds",
            ],
        ),
        DamonModule::LruSort => (
            &[
                "hot_thres_access_freq",
                "cold_min_age",
                "quota_ms",
                "quota_reset_interval_ms",
                "wmarks_interval",
                "wmarks_high",
                "wmarks_mid",
                "wmarks_low",
                "sample_interval",
                "aggr_interval",
                "min_nr_regions",
                "max_nr_regions",
                "monitor_region_start",
                "monitor_region_end",
            ],
            &["filter_young_pages", "autotune_monitoring_intervals"],
            &[
                "kdamond_pid",
                "nr_lru_sort_tried_hot_regions",
                "bytes_lru_sort_tried_hot_regions",
                "nr_lru_sorted_hot_regions",
                "bytes_lru_sorted_hot_regions",
                "nr_hot_quota_exceeds",
                "nr_lru_sort_tried_cold_regions",
                "bytes_lru_sort_tried_cold_regions",
                "nr_lru_sorted_cold_regions",
                "bytes_lru_sorted_cold_regions",
                "nr_cold_quota_exceeds",
            ],
        ),
    }
}

/// Checks a write of `text` to `module`'s `param` file (the parameter
/// exists, is writable, and `text` parses as its type), naming the file.
pub fn check_write(m: DamonModule, param: &str, text: &str) -> Result<(), String> {
    parse_write(m, param, text).map(|_| ())
}

/// Parses a write of `text` to `module`'s `param` file.
pub(crate) fn parse_write(m: DamonModule, param: &str, text: &str) -> Result<ParamWrite, String> {
    let (ulongs, bools, read_only) = params_of(m);
    let at = |e: String| format!("/sys/module/{}/parameters/{param}: {e}", m.sys_name());
    match param {
        "enabled" => kstrtobool(text).map(ParamWrite::Enabled).map_err(at),
        "commit_inputs" => kstrtobool(text).map(ParamWrite::CommitInputs).map_err(at),
        p if ulongs.contains(&p) => kstrtoul(text)
            .map(|v| ParamWrite::Other(p.into(), ParamValue::U64(v)))
            .map_err(at),
        p if bools.contains(&p) => kstrtobool(text)
            .map(|v| ParamWrite::Other(p.into(), ParamValue::Bool(v)))
            .map_err(at),
        p if read_only.contains(&p) => Err(at("read-only (mode 0400)".into())),
        _ => Err(format!(
            "{} has no parameter `{param}` (writable: enabled, commit_inputs, {}, {})",
            m.sys_name(),
            ulongs.join(", "),
            bools.join(", ")
        )),
    }
}

macro_rules! store {
    ($p:expr, $name:expr, $v:expr, [$($u:ident),*], [$($b:ident),*]) => {
        match ($name, $v) {
            $((stringify!($u), ParamValue::U64(v)) => $p.$u = v,)*
            $((stringify!($b), ParamValue::Bool(v)) => $p.$b = v,)*
            _ => unreachable!("parse_write checked the parameter"),
        }
    };
}

impl ModuleParams {
    /// The module parameters a machine starts with (its `machine.damon`
    /// sections, else the defaults).
    pub(crate) fn new(cfg: &super::sysfs::DamonConfig) -> ModuleParams {
        ModuleParams {
            lru_sort: cfg.lru_sort.clone().unwrap_or_default(),
            reclaim: cfg.reclaim.clone().unwrap_or_default(),
            ..Default::default()
        }
    }

    /// Stores a parameter value (not `enabled`/`commit_inputs`).
    fn store(&mut self, m: DamonModule, name: &str, v: ParamValue) {
        match m {
            DamonModule::Reclaim => store!(
                self.reclaim,
                name,
                v,
                [
                    min_age,
                    quota_ms,
                    quota_sz,
                    quota_reset_interval_ms,
                    quota_mem_pressure_us,
                    quota_autotune_feedback,
                    wmarks_interval,
                    wmarks_high,
                    wmarks_mid,
                    wmarks_low,
                    sample_interval,
                    aggr_interval,
                    min_nr_regions,
                    max_nr_regions,
                    monitor_region_start,
                    monitor_region_end
                ],
                [skip_anon]
            ),
            DamonModule::LruSort => store!(
                self.lru_sort,
                name,
                v,
                [
                    hot_thres_access_freq,
                    cold_min_age,
                    quota_ms,
                    quota_reset_interval_ms,
                    wmarks_interval,
                    wmarks_high,
                    wmarks_mid,
                    wmarks_low,
                    sample_interval,
                    aggr_interval,
                    min_nr_regions,
                    max_nr_regions,
                    monitor_region_start,
                    monitor_region_end
                ],
                [filter_young_pages, autotune_monitoring_intervals]
            ),
        }
    }

    /// Whether the module's parameters would apply (what
    /// `damon_*_apply_parameters` and `damon_commit_ctx` accept).
    fn check(&self, m: DamonModule) -> Result<(), String> {
        match m {
            DamonModule::Reclaim => self.reclaim.validate(),
            DamonModule::LruSort => self.lru_sort.validate(),
        }
        .map_err(|e| e.to_string())
    }

    /// The context the module's parameters build.
    fn build(&self, m: DamonModule, pfn: (u64, u64)) -> Ctx {
        match m {
            DamonModule::Reclaim => self.reclaim.build_ctx(pfn),
            DamonModule::LruSort => self.lru_sort.build_ctx(pfn),
        }
    }

    fn commit_flag(&mut self, m: DamonModule) -> &mut bool {
        match m {
            DamonModule::Reclaim => &mut self.reclaim_commit,
            DamonModule::LruSort => &mut self.lru_sort_commit,
        }
    }

    fn enabled_flag(&mut self, m: DamonModule) -> &mut bool {
        match m {
            DamonModule::Reclaim => &mut self.reclaim.enabled,
            DamonModule::LruSort => &mut self.lru_sort.enabled,
        }
    }
}

/// `damon_commit_ctx(dst, src)` for a module's context (one paddr target,
/// the same number of schemes): see the module overview.
fn damon_commit_ctx(dst: &mut Ctx, src: Ctx) {
    // damon_commit_schemes() → damos_commit() of each.
    if dst.schemes.len() == src.schemes.len() {
        for (d, s) in dst.schemes.iter_mut().zip(src.schemes) {
            d.pattern = s.pattern;
            d.action = s.action;
            d.apply_interval_us = s.apply_interval_us;
            // damos_commit_quota(): the configuration; the charge state stays.
            d.quota.ms = s.quota.ms;
            d.quota.sz = s.quota.sz;
            d.quota.reset_interval_ms = s.quota.reset_interval_ms;
            d.quota.weight_sz = s.quota.weight_sz;
            d.quota.weight_nr_accesses = s.quota.weight_nr_accesses;
            d.quota.weight_age = s.quota.weight_age;
            // damos_commit_quota_goals(): goal by goal (the PSI baseline
            // stays), extra ones dropped, new ones added.
            let n = s.quota.goals.len();
            for (i, g) in s.quota.goals.into_iter().enumerate() {
                match d.quota.goals.get_mut(i) {
                    Some(dg) => {
                        dg.metric = g.metric;
                        dg.target_value = g.target_value;
                        if g.metric == super::sysfs::GoalMetric::UserInput {
                            dg.current_value = g.current_value;
                        }
                    }
                    None => d.quota.goals.push(g),
                }
            }
            d.quota.goals.truncate(n);
            d.wmarks = s.wmarks;
            d.core_filters = s.core_filters;
            d.ops_filters = s.ops_filters;
            d.memcg_paths = s.memcg_paths;
            d.set_filters_default_reject();
        }
    } else {
        dst.schemes = src.schemes;
    }
    // damon_commit_targets(): the one paddr target's regions to the range.
    for (dt, st) in dst.targets.iter_mut().zip(&src.targets) {
        let ranges: Vec<(u64, u64)> = st.regions.iter().map(|r| (r.start, r.end)).collect();
        super::core::damon_set_regions(dt, &ranges);
    }
    damon_set_attrs(dst, src.attrs);
}

/// `damon_set_attrs()`: the new intervals and region bounds, the regions'
/// results rescaled (`damon_update_monitoring_results`), the countdowns
/// restarted from the samples passed.
pub(crate) fn damon_set_attrs(c: &mut Ctx, new: super::Attrs) {
    let old = c.attrs;
    if old.sample_us != new.sample_us || old.aggr_us != new.aggr_us {
        super::core::damon_update_monitoring_results(c, &old, &new);
    }
    c.attrs = new;
    let sample = new.sample_us.max(1);
    let passed = c.passed_sample_intervals;
    c.next_aggregation_sis = passed + new.aggr_us / sample;
    c.next_ops_update_sis = passed + new.ops_update_us / sample;
    for s in &mut c.schemes {
        // damos_set_next_apply_sis()
        let apply = if s.apply_interval_us > 0 {
            s.apply_interval_us
        } else {
            new.aggr_us
        };
        s.next_apply_sis = passed + apply / sample;
    }
}

impl crate::Sim {
    /// Schedules writes to DAMON module parameter files
    /// (`[[damon_module_write]]`): each `(at ns, module, parameter, text)`.
    /// Every write is parsed now, and the parameters as they stand at each
    /// `enabled=Y` and `commit_inputs=Y` are checked now; an error names
    /// the write by its index in `writes`. Writes at the same time run in
    /// the given order.
    pub fn schedule_damon_module_writes(
        &mut self,
        writes: &[(u64, DamonModule, String, String)],
    ) -> Result<(), (usize, SimError)> {
        if writes.is_empty() {
            return Ok(());
        }
        let cfg = self.cfg.damon.clone().unwrap_or_default();
        let mut shadow = ModuleParams::new(&cfg);
        let mut order: Vec<usize> = (0..writes.len()).collect();
        order.sort_by_key(|&i| writes[i].0);
        let mut parsed = Vec::new();
        for &i in &order {
            let (at, m, param, text) = &writes[i];
            let err = |e: String| (i, SimError::Setup(e));
            let w = parse_write(*m, param, text).map_err(err)?;
            match &w {
                ParamWrite::Enabled(true) | ParamWrite::CommitInputs(true) => {
                    shadow.check(*m).map_err(|e| {
                        err(format!(
                            "{param}=Y would apply invalid parameters ({e}; the kernel returns -EINVAL)"
                        ))
                    })?;
                }
                ParamWrite::Other(name, v) => shadow.store(*m, name, *v),
                _ => {}
            }
            parsed.push(PendingWrite {
                at: *at,
                module: *m,
                param: param.clone(),
                text: text.clone(),
                write: w,
            });
        }
        if self.damon.is_none() {
            let d = super::Damon::new(&cfg, self.damon_pfn_range());
            self.damon = Some(Box::new(d));
        }
        let d = self.damon.as_mut().expect("just made");
        parsed.reverse();
        d.modules.pending = parsed;
        let next = d.next_timer();
        self.timers.set(crate::timer::TimerKind::Kdamond, next);
        Ok(())
    }

    /// Makes the module writes due by `now` that come before the context
    /// steps due by then (ties: the write first).
    pub(crate) fn damon_module_write(&mut self, d: &mut Damon) {
        let w = d.modules.pending.pop().expect("caller checked");
        let m = w.module;
        let t_s = self.clock as f64 / 1e9;
        let result = match w.write {
            ParamWrite::Other(name, v) => {
                d.modules.store(m, &name, v);
                "stored (applied on commit_inputs=Y or enabled=Y)".to_string()
            }
            ParamWrite::CommitInputs(v) => {
                *d.modules.commit_flag(m) = v;
                if !v {
                    "stored".into()
                } else if self.damon_module_running(d, m).is_some() {
                    "stored: kdamond applies the parameters after its next aggregation or watermark check".into()
                } else {
                    "stored: no kdamond runs (the module is disabled)".into()
                }
            }
            ParamWrite::Enabled(on) => {
                if *d.modules.enabled_flag(m) == on {
                    "no change".into()
                } else if on {
                    match d.modules.check(m) {
                        Err(e) => format!("error: {e} (-EINVAL; not started)"),
                        Ok(()) => {
                            *d.modules.enabled_flag(m) = true;
                            self.damon_module_start(d, m);
                            "kdamond started with the parameters".into()
                        }
                    }
                } else {
                    *d.modules.enabled_flag(m) = false;
                    if let Some(c) = self.damon_module_running(d, m) {
                        // damon_stop(); kdamond_fn destroys the regions.
                        let ctx = &mut d.ctxs[c];
                        ctx.phase = Phase::Stopped;
                        for t in &mut ctx.targets {
                            t.regions.clear();
                        }
                    }
                    "kdamond stopped".into()
                }
            }
        };
        self.series_mark(
            crate::timer::SeriesMarkerKind::KnobWrite,
            None,
            format!("{}.{}={}", m.sys_name(), w.param, w.text.trim_end()),
        );
        d.modules.log.push(DamonModuleWriteLog {
            t_s,
            module: m.sys_name().into(),
            param: w.param,
            value: w.text,
            result,
        });
    }

    /// The index of the module's context while its kdamond runs.
    fn damon_module_running(&self, d: &Damon, m: DamonModule) -> Option<usize> {
        let module = m.ctx_module();
        d.ctxs
            .iter()
            .position(|c| c.module == module && c.phase != Phase::Stopped)
    }

    /// `damon_*_turn(true)`: apply the parameters and start a kdamond now.
    fn damon_module_start(&mut self, d: &mut Damon, m: DamonModule) {
        let pfn = self.damon_pfn_range();
        let module = m.ctx_module();
        let fresh = d.modules.build(m, pfn);
        match d.ctxs.iter().position(|c| c.module == module) {
            Some(c) => {
                // The stopped context: its schemes (and stats) stay.
                let ctx = &mut d.ctxs[c];
                damon_commit_ctx(ctx, fresh);
                ctx.phase = Phase::Init;
                ctx.wmark_waited = false;
                ctx.next_ns = self.clock;
            }
            None => {
                let mut ctx = fresh;
                ctx.next_ns = self.clock;
                d.ctxs.push(ctx);
            }
        }
    }

    /// `damon_*_handle_commit_inputs()` from the `after_aggregation` and
    /// `after_wmarks_check` callbacks of a module's context `c`.
    pub(crate) fn damon_module_callback(&mut self, d: &mut Damon, c: usize, from: &str) {
        let m = match d.ctxs[c].module {
            Module::Reclaim => DamonModule::Reclaim,
            Module::LruSort => DamonModule::LruSort,
            Module::Sysfs(_) => return,
        };
        if !*d.modules.commit_flag(m) {
            return;
        }
        *d.modules.commit_flag(m) = false;
        let result = match d.modules.check(m) {
            Err(e) => {
                // The callback's error ends kdamond_fn.
                d.ctxs[c].phase = Phase::Stopped;
                format!("error: {e}; kdamond stopped")
            }
            Ok(()) => {
                let fresh = d.modules.build(m, self.damon_pfn_range());
                damon_commit_ctx(&mut d.ctxs[c], fresh);
                format!("parameters applied ({from})")
            }
        };
        d.modules.log.push(DamonModuleWriteLog {
            t_s: self.clock as f64 / 1e9,
            module: m.sys_name().into(),
            param: "commit".into(),
            value: String::new(),
            result,
        });
    }
}

impl Damon {
    /// When the kdamond timer must fire next: the earliest running
    /// context's step or scheduled module write.
    pub(crate) fn next_timer(&self) -> Option<u64> {
        let steps = self
            .ctxs
            .iter()
            .filter(|c| c.phase != Phase::Stopped)
            .map(|c| c.next_ns)
            .min();
        let write = self.modules.pending.last().map(|w| w.at);
        match (steps, write) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_text_parses_as_the_kernel_parses_it() {
        assert_eq!(kstrtobool("Y\n"), Ok(true));
        assert_eq!(kstrtobool("on"), Ok(true));
        assert_eq!(kstrtobool("off"), Ok(false));
        assert_eq!(kstrtobool("0"), Ok(false));
        assert!(kstrtobool("maybe").is_err());
        assert_eq!(kstrtoul("5000000\n"), Ok(5_000_000));
        assert_eq!(kstrtoul("0x10"), Ok(16));
        assert_eq!(kstrtoul("010"), Ok(8));
        assert!(kstrtoul("-1").unwrap_err().contains("-EINVAL"));
        assert!(kstrtoul("99999999999999999999")
            .unwrap_err()
            .contains("-ERANGE"));
        let r = DamonModule::Reclaim;
        assert_eq!(
            parse_write(r, "min_age", "5000000"),
            Ok(ParamWrite::Other(
                "min_age".into(),
                ParamValue::U64(5_000_000)
            ))
        );
        assert_eq!(
            parse_write(r, "enabled", "Y"),
            Ok(ParamWrite::Enabled(true))
        );
        assert!(parse_write(r, "nr_reclaimed_regions", "1")
            .unwrap_err()
            .contains("read-only"));
        assert!(parse_write(r, "hot_thres_access_freq", "1")
            .unwrap_err()
            .contains("damon_reclaim has no parameter `hot_thres_access_freq`"));
        assert!(parse_write(DamonModule::LruSort, "skip_anon", "Y").is_err());
        assert!(DamonModule::parse("stat").is_err());
    }
}
