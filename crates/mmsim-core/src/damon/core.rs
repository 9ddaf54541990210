//! mm/damon/core.c (Linux v6.12; checked against the post-6.15 core.c,
//! commit 004ded6b, for `kdamond_fn`, `damos_apply_scheme`,
//! `damos_adjust_quota`, `damon_merge_regions_of`, `damon_split_regions_of`
//! and `damos_wmark_wait_us`, whose behaviour is the same in 6.12 except
//! the filters' `allow` (6.14) and interval tuning (6.15)).
//!
//! `kdamond_fn`'s loop is cut at its two sleeps into timer steps (see
//! [`Phase`]): `Prepare` waits for the watermarks
//! (`kdamond_wait_activation`) and prepares the access checks, then sleeps
//! a sample interval; `Check` checks the accesses, merges at an aggregation
//! boundary, applies the schemes, tunes the intervals, resets the
//! aggregation and splits, and updates the operations' view of the targets.
//! The work's modelled CPU time delays the next step.

use super::sysfs::{DamonOps, DamosAction, FilterType, GoalMetric, WmarkMetric};
use super::{Ctx, Damon, Phase, Region, Scheme, Target, MAX_SCORE, MIN_REGION, REGION_NS};
use crate::timer::TimerKind;
use crate::Sim;

/// `ALIGN_DOWN(x, DAMON_MIN_REGION)`.
#[inline]
pub(crate) fn align_down(x: u64) -> u64 {
    x / MIN_REGION * MIN_REGION
}

/// `damon_moving_sum()`: drops the no-noise share of the last window and
/// adds the new value (u32 arithmetic wrapping as the kernel's `unsigned int`).
#[inline]
pub(crate) fn damon_moving_sum(mvsum: u32, nomvsum: u32, len_window: u32, new_value: u32) -> u32 {
    mvsum
        .wrapping_sub(nomvsum / len_window)
        .wrapping_add(new_value)
}

/// `damon_update_region_access_rate()`: one sample's result into
/// `nr_accesses_bp` (window `damon_max_nr_accesses()`) and `nr_accesses`.
#[inline]
pub(crate) fn damon_update_region_access_rate(r: &mut Region, accessed: bool, max_nr: u32) {
    r.nr_accesses_bp = damon_moving_sum(
        r.nr_accesses_bp,
        r.last_nr_accesses.wrapping_mul(10_000),
        max_nr,
        if accessed { 10_000 } else { 0 },
    );
    if accessed {
        r.nr_accesses += 1;
    }
}

/// `damon_merge_two_regions()`: `r` (the one after `l`) into `l`, with
/// size-weighted `nr_accesses` and `age`.
fn damon_merge_two_regions(l: &mut Region, r: &Region) {
    let (sl, sr) = (l.sz() as u128, r.sz() as u128);
    l.nr_accesses = ((l.nr_accesses as u128 * sl + r.nr_accesses as u128 * sr) / (sl + sr)) as u32;
    l.nr_accesses_bp = l.nr_accesses.wrapping_mul(10_000);
    l.age = ((l.age as u128 * sl + r.age as u128 * sr) / (sl + sr)) as u32;
    l.end = r.end;
}

/// `damon_merge_regions_of()`: updates each region's age against `thres`
/// and merges it into the previous one when adjacent, within `thres` and
/// within `sz_limit`.
pub(crate) fn damon_merge_regions_of(t: &mut Target, thres: u32, sz_limit: u64) {
    let mut out: Vec<Region> = Vec::with_capacity(t.regions.len());
    for mut r in t.regions.drain(..) {
        if r.nr_accesses.abs_diff(r.last_nr_accesses) > thres {
            r.age = 0;
        } else {
            r.age = r.age.wrapping_add(1);
        }
        if let Some(prev) = out.last_mut() {
            if prev.end == r.start
                && prev.nr_accesses.abs_diff(r.nr_accesses) <= thres
                && prev.sz() + r.sz() <= sz_limit
            {
                damon_merge_two_regions(prev, &r);
                continue;
            }
        }
        out.push(r);
    }
    t.regions = out;
}

/// `kdamond_merge_regions()`: merges with `threshold`, doubling it while
/// the regions exceed `max_nr_regions` (and the threshold can still grow).
pub(crate) fn kdamond_merge_regions(c: &mut Ctx, mut threshold: u32, sz_limit: u64) {
    let max_thres = c.attrs.aggr_us / c.attrs.sample_us.max(1);
    loop {
        let mut nr = 0;
        for t in &mut c.targets {
            damon_merge_regions_of(t, threshold, sz_limit);
            nr += t.regions.len() as u64;
        }
        threshold = threshold.saturating_mul(2).max(1);
        // while (nr_regions > max_nr_regions && threshold / 2 < max_thres)
        if !(nr > c.attrs.max_nr_regions && ((threshold / 2) as u64) < max_thres) {
            break;
        }
    }
}

/// `damon_split_region_at()`: `t.regions[i]` keeps `[start, start + sz_r)`;
/// a new region with the same counters takes the rest, right after it.
pub(crate) fn damon_split_region_at(t: &mut Target, i: usize, sz_r: u64) {
    let r = &mut t.regions[i];
    let mut new = *r;
    new.start = r.start + sz_r;
    r.end = new.start;
    t.regions.insert(i + 1, new);
}

/// `damon_split_regions_of()`: each region into up to `nr_subs` pieces at
/// random points (10–90 % of the remaining left piece, page aligned).
fn damon_split_regions_of(t: &mut Target, nr_subs: u32, rng: &mut super::Rng) {
    let mut i = 0;
    while i < t.regions.len() {
        let mut sz_region = t.regions[i].sz();
        let mut added = 0;
        let mut k = 0;
        while k < nr_subs - 1 && sz_region > 2 * MIN_REGION {
            k += 1;
            let sz_sub = align_down(rng.range(1, 10) * sz_region / 10);
            if sz_sub == 0 || sz_sub >= sz_region {
                continue;
            }
            damon_split_region_at(t, i, sz_sub);
            added += 1;
            sz_region = sz_sub;
        }
        i += 1 + added;
    }
}

/// `kdamond_split_regions()`: 2 pieces, 3 when the count did not change
/// since the last call (a static shared by every context) and is below a
/// third of `max_nr_regions`; nothing above half of it.
pub(crate) fn kdamond_split_regions(c: &mut Ctx, last_nr_regions: &mut u64, rng: &mut super::Rng) {
    let nr = c.nr_regions();
    if nr > c.attrs.max_nr_regions / 2 {
        return;
    }
    let nr_subs = if *last_nr_regions == nr && nr < c.attrs.max_nr_regions / 3 {
        3
    } else {
        2
    };
    for t in &mut c.targets {
        damon_split_regions_of(t, nr_subs, rng);
    }
    *last_nr_regions = nr;
}

/// `damon_region_sz_limit()`: total size over `min_nr_regions`, at least a page.
pub(crate) fn damon_region_sz_limit(c: &Ctx) -> u64 {
    let sz: u64 = c
        .targets
        .iter()
        .flat_map(|t| t.regions.iter())
        .map(|r| r.sz())
        .sum();
    sz.checked_div(c.attrs.min_nr_regions)
        .unwrap_or(sz)
        .max(MIN_REGION)
}

/// `damon_set_regions()`: fits the target's regions to `ranges` — drops
/// regions intersecting none, stretches the first and last intersecting
/// region of each range to its bounds and fills the holes between them
/// with new regions, or inserts one new region for a range nothing
/// intersects.
pub(crate) fn damon_set_regions(t: &mut Target, ranges: &[(u64, u64)]) {
    let intersects = |r: &Region, (s, e): (u64, u64)| !(r.end <= s || e <= r.start);
    t.regions
        .retain(|r| ranges.iter().any(|&range| intersects(r, range)));
    for &(s, e) in ranges {
        let (s, e) = (align_down(s), e.div_ceil(MIN_REGION) * MIN_REGION);
        let hits: Vec<usize> = (0..t.regions.len())
            .filter(|&i| intersects(&t.regions[i], (s, e)))
            .collect();
        match (hits.first(), hits.last()) {
            (Some(&first), Some(&last)) => {
                t.regions[first].start = s;
                t.regions[last].end = e;
                // damon_fill_regions_holes()
                let mut i = first;
                let mut last = last;
                while i < last {
                    if t.regions[i].end != t.regions[i + 1].start {
                        let hole = Region::new(t.regions[i].end, t.regions[i + 1].start);
                        t.regions.insert(i + 1, hole);
                        last += 1;
                        i += 1;
                    }
                    i += 1;
                }
            }
            _ => {
                let at = t.regions.partition_point(|r| r.start < s);
                t.regions.insert(at, Region::new(s, e));
            }
        }
    }
}

/// `damon_hot_score()` (mm/damon/ops-common.c): frequency and age subscores
/// weighted by the scheme's quota weights, in `[0, 99]`.
pub(crate) fn damon_hot_score(c: &Ctx, r: &Region, s: &Scheme) -> u32 {
    const MAX_SUBSCORE: i64 = 100;
    const MAX_AGE_IN_LOG: i64 = 32;
    let freq_subscore = r.nr_accesses as i64 * MAX_SUBSCORE / c.attrs.max_nr_accesses() as i64;
    let mut age_in_sec = r.age as u64 * c.attrs.aggr_us / 1_000_000;
    let mut age_in_log = 0i64;
    while age_in_log < MAX_AGE_IN_LOG && age_in_sec > 0 {
        age_in_log += 1;
        age_in_sec >>= 1;
    }
    // If frequency is 0, higher age means it's colder.
    if freq_subscore == 0 {
        age_in_log = -age_in_log;
    }
    let age_subscore = (age_in_log + MAX_AGE_IN_LOG) * MAX_SUBSCORE / MAX_AGE_IN_LOG / 2;
    let (wf, wa) = (s.quota.weight_nr_accesses as i64, s.quota.weight_age as i64);
    let mut hotness = wf * freq_subscore + wa * age_subscore;
    if wf + wa > 0 {
        hotness /= wf + wa;
    }
    // Transform it to fit in [0, DAMOS_MAX_SCORE].
    (hotness * MAX_SCORE as i64 / MAX_SUBSCORE).clamp(0, MAX_SCORE as i64) as u32
}

/// `damon_cold_score()`: `DAMOS_MAX_SCORE` minus the hot score.
pub(crate) fn damon_cold_score(c: &Ctx, r: &Region, s: &Scheme) -> u32 {
    MAX_SCORE - damon_hot_score(c, r, s)
}

/// The operations' `get_scheme_score` (`damon_pa_scheme_score`,
/// `damon_va_scheme_score`).
pub(crate) fn scheme_score(c: &Ctx, r: &Region, s: &Scheme) -> u32 {
    match (c.ops, s.action) {
        (DamonOps::Paddr, DamosAction::Pageout | DamosAction::LruDeprio)
        | (DamonOps::Paddr, DamosAction::MigrateCold) => damon_cold_score(c, r, s),
        (DamonOps::Paddr, DamosAction::LruPrio | DamosAction::MigrateHot) => {
            damon_hot_score(c, r, s)
        }
        (DamonOps::Vaddr | DamonOps::Fvaddr, DamosAction::Pageout) => damon_cold_score(c, r, s),
        _ => MAX_SCORE,
    }
}

/// `__damos_valid_target()`: the region's size, `nr_accesses_bp / 10000`
/// and age are inside the scheme's pattern.
pub(crate) fn damos_pattern_match(r: &Region, s: &Scheme) -> bool {
    let p = &s.pattern;
    let sz = r.sz();
    let nr = (r.nr_accesses_bp / 10_000) as u64;
    let age = r.age as u64;
    p.sz.min <= sz
        && sz <= p.sz.max
        && p.nr_accesses.min <= nr
        && nr <= p.nr_accesses.max
        && p.age.min <= age
        && age <= p.age.max
}

/// `damon_feed_loop_next_input()`: the next input that would bring the
/// score to the goal 10,000, never below 10,000.
pub(crate) fn damon_feed_loop_next_input(last_input: u64, score: u64) -> u64 {
    const GOAL: u64 = 10_000;
    const MIN_INPUT: u64 = 10_000;
    if score == GOAL {
        return last_input;
    }
    if score >= GOAL * 2 {
        return MIN_INPUT;
    }
    let over = score > GOAL;
    let diff = score.abs_diff(GOAL);
    let compensation = if last_input < u64::MAX / diff {
        last_input * diff / GOAL
    } else {
        last_input / GOAL * diff
    };
    if over {
        return last_input.saturating_sub(compensation).max(MIN_INPUT);
    }
    last_input.saturating_add(compensation)
}

/// `damos_skip_charged_region()`: after a window ended on an exhausted
/// quota, skips what was charged then (other targets before it, regions
/// wholly below the remembered address), splitting a region that straddles
/// it; `*ri` moves to the uncharged piece.
pub(crate) fn damos_skip_charged_region(
    targets: &mut [Target],
    ti: usize,
    ri: &mut usize,
    s: &mut Scheme,
) -> bool {
    let q = &mut s.quota;
    let Some(from) = q.charge_target_from else {
        return false;
    };
    if from != ti {
        return true;
    }
    let t = &mut targets[ti];
    if *ri == t.regions.len() - 1 {
        q.charge_target_from = None;
        q.charge_addr_from = 0;
        return true;
    }
    let r = t.regions[*ri];
    if q.charge_addr_from != 0 && r.end <= q.charge_addr_from {
        return true;
    }
    if q.charge_addr_from != 0 && r.start < q.charge_addr_from {
        let mut sz_to_skip = align_down(q.charge_addr_from - r.start);
        if sz_to_skip == 0 {
            if r.sz() <= MIN_REGION {
                return true;
            }
            sz_to_skip = MIN_REGION;
        }
        damon_split_region_at(t, *ri, sz_to_skip);
        *ri += 1;
    }
    q.charge_target_from = None;
    q.charge_addr_from = 0;
    false
}

/// `damos_update_stat()`.
fn damos_update_stat(s: &mut Scheme, sz_tried: u64, sz_applied: u64, sz_passed: u64) {
    s.stat.nr_tried += 1;
    s.stat.sz_tried += sz_tried;
    if sz_applied > 0 {
        s.stat.nr_applied += 1;
    }
    s.stat.sz_applied += sz_applied;
    s.stat.sz_ops_filter_passed += sz_passed;
}

/// `damos_filter_match()` for the core filters (`target`, `addr`); an
/// `addr` range cuts the region at its edges so the decision covers whole
/// pieces.
fn damos_core_filter_match(t: &mut Target, ti: usize, ri: usize, f: &super::Filter) -> bool {
    let matched = match f.ty {
        FilterType::Target => ti as u64 == f.target_idx,
        FilterType::Addr => {
            let (start, end) = (align_down(f.addr.0), align_down(f.addr.1));
            let r = t.regions[ri];
            if start <= r.start && r.end <= end {
                true
            } else if r.end <= start || end <= r.start {
                false
            } else if r.start < start {
                damon_split_region_at(t, ri, start - r.start);
                false
            } else {
                damon_split_region_at(t, ri, end - r.start);
                true
            }
        }
        _ => return false,
    };
    matched == f.matching
}

/// `damos_filter_out()`: the first matching core filter decides; none
/// matching, the default (`core_filters_default_reject`).
fn damos_filter_out(t: &mut Target, ti: usize, ri: usize, s: &mut Scheme) -> bool {
    s.core_filters_allowed = false;
    for k in 0..s.core_filters.len() {
        let f = s.core_filters[k];
        if damos_core_filter_match(t, ti, ri, &f) {
            if f.allow {
                s.core_filters_allowed = true;
            }
            return !f.allow;
        }
    }
    s.core_filters_default_reject
}

impl Sim {
    /// The kdamond timer's function: runs every context's steps due by `now`
    /// and re-arms the timer for the earliest next step.
    pub(crate) fn kdamond_timer(&mut self, now: u64) {
        let Some(mut d) = self.damon.take() else {
            return;
        };
        // kdamond is `current`: what its schemes dirty (a `pageout` zap's
        // dirty PTEs) counts for no writer (`crate::page_writeback_throttle`).
        let writer = self.bdp_set_current(crate::page_writeback_throttle::KTHREAD);
        loop {
            // A module parameter write due by now runs after the steps due
            // before it (and before those due at its own time).
            let write_at = d.modules.pending.last().map(|w| w.at).filter(|&a| a <= now);
            let limit = write_at.map_or(now, |a| a.saturating_sub(1));
            for c in 0..d.ctxs.len() {
                while d.ctxs[c].phase != Phase::Stopped
                    && d.ctxs[c].next_ns <= limit
                    && (write_at.is_none() || d.ctxs[c].next_ns < write_at.unwrap_or(0))
                {
                    self.kdamond_step(&mut d, c);
                }
            }
            if write_at.is_none() {
                break;
            }
            self.damon_module_write(&mut d);
        }
        self.bdp_set_current(writer);
        let next = d.next_timer();
        self.damon = Some(d);
        self.timers.set(TimerKind::Kdamond, next);
    }

    /// One step of `kdamond_fn`'s loop for context `c`.
    pub(crate) fn kdamond_step(&mut self, d: &mut Damon, c: usize) {
        match d.ctxs[c].phase {
            Phase::Init => {
                self.kdamond_init_ctx(d, c);
                d.ctxs[c].phase = if self.kdamond_need_stop(&d.ctxs[c]) {
                    Phase::Stopped
                } else {
                    Phase::Prepare
                };
            }
            Phase::Prepare => {
                if d.ctxs[c].wmark_waited {
                    // kdamond_wait_activation(): after the wait's sleep.
                    d.ctxs[c].wmark_waited = false;
                    self.damon_module_callback(d, c, "after_wmarks_check");
                    if d.ctxs[c].phase == Phase::Stopped {
                        return;
                    }
                } else {
                    // The top of kdamond_fn's loop iteration.
                    let ctx = &mut d.ctxs[c];
                    ctx.loop_sis = (ctx.next_aggregation_sis, ctx.next_ops_update_sis);
                }
                let wait_us = self.kdamond_wait_activation(&mut d.ctxs[c]);
                if wait_us > 0 {
                    d.ctxs[c].next_ns += wait_us * 1000;
                    d.ctxs[c].wmark_waited = true;
                    return;
                }
                let ns = self.prepare_access_checks(d, c);
                let ctx = &mut d.ctxs[c];
                ctx.cpu_ns += ns;
                ctx.next_ns += ns + ctx.attrs.sample_us.max(1) * 1000;
                ctx.phase = Phase::Check;
            }
            Phase::Check => {
                let ns = self.kdamond_after_sample(d, c);
                let ctx = &mut d.ctxs[c];
                ctx.cpu_ns += ns;
                ctx.next_ns += ns;
                if ctx.phase != Phase::Stopped {
                    ctx.phase = Phase::Prepare;
                }
            }
            Phase::Stopped => {}
        }
    }

    /// `kdamond_need_stop()`: a virtual-address context whose targets all
    /// lack a task stops.
    fn kdamond_need_stop(&self, c: &Ctx) -> bool {
        c.ops != DamonOps::Paddr && c.targets.iter().all(|t| t.task.is_none())
    }

    /// `kdamond_init_ctx()` and `ops.init`: the interval counters, each
    /// scheme's first apply, the filters' defaults, the targets' regions.
    pub(super) fn kdamond_init_ctx(&mut self, d: &mut Damon, c: usize) {
        self.damon_resolve_targets(d, c);
        let ctx = &mut d.ctxs[c];
        let sample = ctx.attrs.sample_us.max(1);
        ctx.passed_sample_intervals = 0;
        ctx.next_aggregation_sis = ctx.attrs.aggr_us / sample;
        ctx.next_ops_update_sis = ctx.attrs.ops_update_us / sample;
        ctx.next_intervals_tune_sis = ctx.next_aggregation_sis * ctx.attrs.goal.aggrs;
        for s in &mut ctx.schemes {
            let apply = if s.apply_interval_us > 0 {
                s.apply_interval_us
            } else {
                ctx.attrs.aggr_us
            };
            s.next_apply_sis = apply / sample;
            s.set_filters_default_reject();
        }
        // The memcg filters' paths (damon_sysfs_memcg_path_to_id).
        for s in &mut ctx.schemes {
            for (f, path) in s.ops_filters.iter_mut().zip(&s.memcg_paths) {
                if let Some(p) = path {
                    f.memcg = self
                        .memcgs
                        .iter()
                        .position(|m| &m.path == p)
                        .map(|m| m as crate::memcg::MemcgId);
                }
            }
        }
        if ctx.ops == DamonOps::Vaddr {
            self.damon_va_init(d, c);
        }
        let ctx = &mut d.ctxs[c];
        ctx.sz_limit = damon_region_sz_limit(ctx);
    }

    /// The `pid`s of a virtual-address context's targets: each names a task
    /// (`pid_target` = task index); without one, every task of the machine.
    fn damon_resolve_targets(&mut self, d: &mut Damon, c: usize) {
        let ctx = &mut d.ctxs[c];
        if ctx.ops == DamonOps::Paddr {
            return;
        }
        let nr_tasks = self.tasks.len() as u32;
        for (t, pid) in ctx.targets.iter_mut().zip(&ctx.pids) {
            t.task = pid.filter(|&p| p < nr_tasks);
        }
        if ctx.all_tasks {
            for task in 0..nr_tasks {
                ctx.targets.push(Target {
                    task: Some(task),
                    regions: Vec::new(),
                });
            }
        }
    }

    /// `kdamond_wait_activation()`: the smallest watermark wait over the
    /// schemes (0 when any is active, or when there are none).
    fn kdamond_wait_activation(&mut self, c: &mut Ctx) -> u64 {
        let mut min_wait: Option<u64> = None;
        for si in 0..c.schemes.len() {
            let w = self.damos_wmark_wait_us(&mut c.schemes[si]);
            if min_wait.is_none_or(|m| w < m) {
                min_wait = Some(w);
            }
        }
        min_wait.unwrap_or(0)
    }

    /// `damos_wmark_wait_us()`: deactivates a scheme when the metric is
    /// above `high` or below `low`, keeps an inactive one inactive between
    /// `mid` and `high`, activates it otherwise; an inactive scheme waits
    /// `interval_us`. The metric `free_mem_rate` is free pages per mille of
    /// total RAM; `none` keeps the scheme as it is (always active).
    pub(crate) fn damos_wmark_wait_us(&self, s: &mut Scheme) -> u64 {
        let w = &mut s.wmarks;
        if w.metric == WmarkMetric::None {
            return 0;
        }
        let metric = self.node.free * 1000 / self.node.managed.max(1);
        if metric > w.high || w.low > metric {
            w.activated = false;
            return w.interval_us;
        }
        if (w.high >= metric && metric >= w.mid) && !w.activated {
            return w.interval_us;
        }
        w.activated = true;
        0
    }

    /// `prepare_access_checks` of the context's operations; returns the CPU ns.
    fn prepare_access_checks(&mut self, d: &mut Damon, c: usize) -> u64 {
        match d.ctxs[c].ops {
            DamonOps::Paddr => self.damon_pa_prepare_access_checks(d, c),
            DamonOps::Vaddr | DamonOps::Fvaddr => self.damon_va_prepare_access_checks(d, c),
        }
    }

    /// The work after a sample interval's sleep (the second half of
    /// `kdamond_fn`'s iteration). Returns the CPU ns.
    pub(super) fn kdamond_after_sample(&mut self, d: &mut Damon, c: usize) -> u64 {
        let (next_aggregation_sis, next_ops_update_sis) = d.ctxs[c].loop_sis;
        d.ctxs[c].passed_sample_intervals += 1;
        let mut ns = match d.ctxs[c].ops {
            DamonOps::Paddr => self.damon_pa_check_accesses(d, c),
            DamonOps::Vaddr | DamonOps::Fvaddr => self.damon_va_check_accesses(d, c),
        };
        let aggregating = d.ctxs[c].passed_sample_intervals >= next_aggregation_sis;
        if aggregating {
            let ctx = &mut d.ctxs[c];
            ns += REGION_NS * ctx.nr_regions();
            let (thres, sz_limit) = (ctx.max_nr_accesses / 10, ctx.sz_limit);
            kdamond_merge_regions(ctx, thres, sz_limit);
            self.damon_module_callback(d, c, "after_aggregation");
            if d.ctxs[c].phase == Phase::Stopped {
                return ns;
            }
        }
        if !d.ctxs[c].schemes.is_empty() {
            ns += self.kdamond_apply_schemes(d, c);
        }
        let ctx = &mut d.ctxs[c];
        if aggregating {
            if ctx.attrs.goal.aggrs > 0
                && ctx.passed_sample_intervals >= ctx.next_intervals_tune_sis
            {
                ctx.next_intervals_tune_sis += ctx.attrs.aggr_samples * ctx.attrs.goal.aggrs;
                kdamond_tune_intervals(ctx);
            }
            let sample = ctx.attrs.sample_us.max(1);
            ctx.next_aggregation_sis = next_aggregation_sis + ctx.attrs.aggr_us / sample;
            ctx.nr_aggregations += 1;
            self.kdamond_reset_aggregated(d, c);
            let ctx = &mut d.ctxs[c];
            kdamond_split_regions(ctx, &mut d.last_nr_regions, &mut d.rng);
        }
        let ctx = &mut d.ctxs[c];
        if ctx.passed_sample_intervals >= next_ops_update_sis {
            let sample = ctx.attrs.sample_us.max(1);
            ctx.next_ops_update_sis = next_ops_update_sis + ctx.attrs.ops_update_us / sample;
            if ctx.ops == DamonOps::Vaddr {
                self.damon_va_update(d, c);
            }
            let ctx = &mut d.ctxs[c];
            ctx.sz_limit = damon_region_sz_limit(ctx);
        }
        ns
    }

    /// `kdamond_reset_aggregated()`: each region's `nr_accesses` becomes
    /// `last_nr_accesses` and restarts at 0 (`nr_accesses_bp` is fixed to
    /// `nr_accesses × 10000` if it drifted, as the kernel warns and does);
    /// the `damon_aggregated` tracepoint's snapshot goes to the record.
    fn kdamond_reset_aggregated(&mut self, d: &mut Damon, c: usize) {
        let ctx = &mut d.ctxs[c];
        if let Some(rec) = d.record.as_mut() {
            let aggr_ns = ctx.attrs.aggr_us * 1000;
            let end = self.clock;
            for (ti, t) in ctx.targets.iter().enumerate() {
                rec.push(super::RecordSnapshot {
                    ctx: c,
                    target: ti,
                    start_ns: end.saturating_sub(aggr_ns),
                    end_ns: end,
                    regions: t
                        .regions
                        .iter()
                        .map(|r| (r.start, r.end, r.nr_accesses, r.age))
                        .collect(),
                });
            }
        }
        for t in &mut ctx.targets {
            for r in &mut t.regions {
                if r.nr_accesses_bp != r.nr_accesses.wrapping_mul(10_000) {
                    r.nr_accesses_bp = r.nr_accesses.wrapping_mul(10_000);
                }
                r.last_nr_accesses = r.nr_accesses;
                r.nr_accesses = 0;
            }
        }
    }

    /// `kdamond_apply_schemes()`: adjusts the due, active schemes' quotas,
    /// then walks every region of every target through
    /// `damon_do_apply_schemes`, then sets each due scheme's next apply
    /// time. Returns the CPU ns.
    pub(super) fn kdamond_apply_schemes(&mut self, d: &mut Damon, c: usize) -> u64 {
        let now = self.clock;
        let passed = d.ctxs[c].passed_sample_intervals;
        let mut any = false;
        for si in 0..d.ctxs[c].schemes.len() {
            let s = &d.ctxs[c].schemes[si];
            if passed < s.next_apply_sis || !s.wmarks.activated {
                continue;
            }
            any = true;
            d.ctxs[c].schemes[si].pass_tried = (0, 0, 0);
            self.damos_adjust_quota(&mut d.ctxs[c], si, now);
        }
        if !any {
            return 0;
        }
        let mut ns = 0;
        let ctx = &mut d.ctxs[c];
        for ti in 0..ctx.targets.len() {
            let mut i = 0;
            while i < ctx.targets[ti].regions.len() {
                let before = ctx.targets[ti].regions.len();
                ns += REGION_NS;
                ns += self.damon_do_apply_schemes(ctx, ti, i);
                i += 1 + (ctx.targets[ti].regions.len() - before);
            }
        }
        let sample = ctx.attrs.sample_us.max(1);
        for s in &mut ctx.schemes {
            if passed < s.next_apply_sis {
                continue;
            }
            if s.wmarks.activated {
                s.last_tried = s.pass_tried;
            }
            let iv = if s.apply_interval_us > 0 {
                s.apply_interval_us
            } else {
                ctx.attrs.aggr_us
            };
            s.next_apply_sis = passed + iv / sample;
        }
        ns
    }

    /// `damon_do_apply_schemes()`: each due, active scheme with quota left,
    /// past its resume point and matching the pattern and the priority
    /// cut-off, is applied to region `ri` of target `ti`.
    fn damon_do_apply_schemes(&mut self, ctx: &mut Ctx, ti: usize, ri0: usize) -> u64 {
        let mut ri = ri0;
        let mut ns = 0;
        for si in 0..ctx.schemes.len() {
            let s = &ctx.schemes[si];
            if ctx.passed_sample_intervals < s.next_apply_sis || !s.wmarks.activated {
                continue;
            }
            if s.quota.esz != 0 && s.quota.charged_sz >= s.quota.esz {
                continue;
            }
            if damos_skip_charged_region(&mut ctx.targets, ti, &mut ri, &mut ctx.schemes[si]) {
                continue;
            }
            let r = ctx.targets[ti].regions[ri];
            let s = &ctx.schemes[si];
            if !damos_pattern_match(&r, s) {
                continue;
            }
            if s.quota.esz != 0 && scheme_score(ctx, &r, s) < s.quota.min_score {
                continue;
            }
            ns += self.damos_apply_scheme(ctx, ti, ri, si);
        }
        ns
    }

    /// `damos_apply_scheme()`: cuts the region at the quota's edge, runs the
    /// core filters, applies the action through the operations (timing it
    /// for the time quota), charges the quota, resets the region's age
    /// (except for `stat`) and updates the stats.
    fn damos_apply_scheme(&mut self, ctx: &mut Ctx, ti: usize, ri: usize, si: usize) -> u64 {
        let mut sz = ctx.targets[ti].regions[ri].sz();
        let q = &ctx.schemes[si].quota;
        if q.esz != 0 && q.charged_sz + sz > q.esz {
            sz = align_down(q.esz - q.charged_sz);
            if sz == 0 {
                damos_update_stat(&mut ctx.schemes[si], 0, 0, 0);
                return 0;
            }
            damon_split_region_at(&mut ctx.targets[ti], ri, sz);
        }
        if damos_filter_out(&mut ctx.targets[ti], ti, ri, &mut ctx.schemes[si]) {
            return 0;
        }
        let r = ctx.targets[ti].regions[ri];
        // damon_sysfs_before_damos_apply(): the region joins `tried_regions/`
        // (v6.12 calls c->callback.before_damos_apply after damos_filter_out
        // and the quota-edge split, so the piece that passed; checked in
        // mm/damon/core.c's damos_apply_scheme, v6.12 and v6.13).
        let task = ctx.targets[ti].task;
        let mapped = match (ctx.ops, task) {
            (DamonOps::Paddr, _) => r.sz(),
            (_, Some(t)) => self.damon_va_mapped_bytes(t, r.start, r.end),
            (_, None) => 0,
        };
        let pt = &mut ctx.schemes[si].pass_tried;
        *pt = (pt.0 + 1, pt.1 + r.sz(), pt.2 + mapped);
        let (applied, passed, ns) = match ctx.ops {
            DamonOps::Paddr => self.damon_pa_apply_scheme(&r, &mut ctx.schemes[si]),
            DamonOps::Vaddr | DamonOps::Fvaddr => {
                self.damon_va_apply_scheme(task, &r, &ctx.schemes[si])
            }
        };
        let s = &mut ctx.schemes[si];
        s.quota.total_charged_ns += ns;
        s.quota.charged_sz += sz;
        if s.quota.esz != 0 && s.quota.charged_sz >= s.quota.esz {
            s.quota.charge_target_from = Some(ti);
            s.quota.charge_addr_from = r.end + 1;
        }
        if s.action != DamosAction::Stat {
            ctx.targets[ti].regions[ri].age = 0;
        }
        damos_update_stat(s, sz, applied, passed);
        ns
    }

    /// `damos_adjust_quota()`: at a new charge window (on the first apply,
    /// and `reset_interval_ms` after the last window began) counts an
    /// exhausted window in `qt_exceeds`, adds the window's charge to the
    /// total and recomputes `esz`; then fills the score histogram of the
    /// regions matching the pattern and sets `min_score` where the
    /// cumulated size from the top score reaches `esz`.
    fn damos_adjust_quota(&mut self, ctx: &mut Ctx, si: usize, now: u64) {
        if !ctx.schemes[si].quota.is_set() {
            return;
        }
        let reset_ns = ctx.schemes[si].quota.reset_interval_ms * 1_000_000;
        let new_window = ctx.schemes[si]
            .quota
            .charged_from
            .is_none_or(|from| now >= from + reset_ns);
        if new_window {
            let s = &mut ctx.schemes[si];
            if s.quota.esz != 0 && s.quota.charged_sz >= s.quota.esz {
                s.stat.qt_exceeds += 1;
            }
            s.quota.total_charged_sz += s.quota.charged_sz;
            s.quota.charged_from = Some(now);
            s.quota.charged_sz = 0;
            self.damos_set_effective_quota(&mut ctx.schemes[si].quota, now);
        }
        // Every in-tree operations set has a score function.
        ctx.hist = [0; MAX_SCORE as usize + 1];
        let s = &ctx.schemes[si];
        let mut max_score = 0;
        for t in &ctx.targets {
            for r in &t.regions {
                if !damos_pattern_match(r, s) {
                    continue;
                }
                let score = scheme_score(ctx, r, s);
                ctx.hist[score as usize] += r.sz();
                max_score = max_score.max(score);
            }
        }
        let esz = s.quota.esz;
        let mut cumulated = 0;
        let mut score = max_score;
        loop {
            cumulated += ctx.hist[score as usize];
            if cumulated >= esz || score == 0 {
                break;
            }
            score -= 1;
        }
        ctx.schemes[si].quota.min_score = score;
    }

    /// `damos_set_effective_quota()`: `esz` from the size quota, the time
    /// quota times the measured throughput (bytes per ms charged so far, or
    /// 4 MiB/ms before any charge), and the goals' feedback loop; the
    /// smallest wins.
    pub(crate) fn damos_set_effective_quota(&mut self, q: &mut super::Quota, now: u64) {
        if q.ms == 0 && q.goals.is_empty() {
            q.esz = q.sz;
            return;
        }
        let mut esz = u64::MAX;
        if !q.goals.is_empty() {
            let score = self.damos_quota_score(q, now);
            q.esz_bp = damon_feed_loop_next_input(q.esz_bp.max(10_000), score);
            esz = q.esz_bp / 10_000;
        }
        if q.ms != 0 {
            let throughput = if q.total_charged_ns > 0 {
                (q.total_charged_sz as u128 * 1_000_000 / q.total_charged_ns as u128) as u64
            } else {
                crate::PAGE_SIZE * 1024
            };
            esz = esz.min(throughput.saturating_mul(q.ms));
        }
        if q.sz != 0 && q.sz < esz {
            esz = q.sz;
        }
        q.esz = esz;
    }

    /// `damos_quota_score()`: the highest `current * 10000 / target` over
    /// the goals, after `damos_set_quota_goal_current_value()` reads each
    /// metric (PSI "some" µs since the last window, the node's used or free
    /// memory in basis points, or the user's value).
    fn damos_quota_score(&mut self, q: &mut super::Quota, now: u64) -> u64 {
        let mut highest = 0;
        for g in &mut q.goals {
            match g.metric {
                GoalMetric::UserInput => {}
                GoalMetric::SomeMemPsiUs => {
                    let total = self.psi.report(now).some.total;
                    g.current_value = total.saturating_sub(g.last_psi_total);
                    g.last_psi_total = total;
                }
                GoalMetric::NodeMemUsedBp => {
                    let n = &self.node;
                    g.current_value = (n.managed - n.free) * 10_000 / n.managed.max(1);
                }
                GoalMetric::NodeMemFreeBp => {
                    let n = &self.node;
                    g.current_value = n.free * 10_000 / n.managed.max(1);
                }
            }
            highest = highest.max(g.current_value.saturating_mul(10_000) / g.target_value);
        }
        highest
    }
}

/// `kdamond_tune_intervals()` (6.15+): scales the sampling interval by the
/// feedback loop's adaptation (0.5×..2×) towards `access_bp` of the
/// possible access events, within `[min_sample_us, max_sample_us]`,
/// keeping `aggr_samples`; the regions' counters are rescaled as
/// `damon_update_monitoring_results()` does.
pub(crate) fn kdamond_tune_intervals(c: &mut Ctx) {
    let mut max_events: u128 = 0;
    let mut events: u128 = 0;
    for r in c.targets.iter().flat_map(|t| t.regions.iter()) {
        max_events += r.sz() as u128 * c.attrs.aggr_samples as u128;
        events += r.sz() as u128 * r.nr_accesses as u128;
    }
    let target = (max_events * c.attrs.goal.access_bp as u128 / 10_000).max(1);
    let score_bp = (events * 10_000 / target).min(u64::MAX as u128) as u64;
    let mut adaptation_bp = damon_feed_loop_next_input(100_000_000, score_bp) / 10_000;
    if adaptation_bp <= 10_000 {
        adaptation_bp = 5_000 + adaptation_bp / 2;
    }
    if adaptation_bp == 10_000 {
        return;
    }
    let g = &c.attrs.goal;
    let sample = (c.attrs.sample_us * adaptation_bp / 10_000)
        .min(g.max_sample_us)
        .max(g.min_sample_us);
    let old = c.attrs;
    let mut new = old;
    new.sample_us = sample;
    new.aggr_us = sample * old.aggr_samples;
    // At the aggregation boundary (kdamond_fn restored
    // next_aggregation_sis, so not "aggregating").
    damon_update_monitoring_results(c, &old, &new);
    c.attrs = new;
}

/// `damon_update_monitoring_results()`: each region's `nr_accesses` kept
/// as the same share of the possible samples, and its `age` as the same
/// time, under the new intervals.
pub(crate) fn damon_update_monitoring_results(c: &mut Ctx, old: &super::Attrs, new: &super::Attrs) {
    for r in c.targets.iter_mut().flat_map(|t| t.regions.iter_mut()) {
        let bp = r.nr_accesses as u64 * 10_000 / old.max_nr_accesses() as u64;
        r.nr_accesses = (bp * new.max_nr_accesses() as u64 / 10_000) as u32;
        r.nr_accesses_bp = r.nr_accesses.wrapping_mul(10_000);
        r.age = (r.age as u64 * old.aggr_us / new.aggr_us.max(1)) as u32;
    }
}
