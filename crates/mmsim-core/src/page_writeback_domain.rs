//! A `wb_domain`'s writeout completions and a wb's share of its dirty
//! threshold (v6.12 mm/page-writeback.c `wb_domain_init`,
//! `wb_domain_writeout_add`, `__wb_writeout_add`, `writeout_period`,
//! `wp_next_time`, `__wb_calc_thresh`, `wb_min_max_ratio`, `wb_dirty_limits`;
//! lib/flex_proportions.c `fprop_global_init`, `fprop_new_period`,
//! `fprop_local_init_percpu`, `fprop_reflect_period_percpu`,
//! `__fprop_add_percpu`, `__fprop_add_percpu_max`, `fprop_fraction_percpu`).
//!
//! Every completed write of a wb's file pages (`__folio_end_writeback()` →
//! `__wb_writeout_add()`) counts in the global domain's proportions (the
//! wb's `wb->completions` against `global_wb_domain.completions`) and, for
//! a group's wb, in its memcg domain's (`wb_memcg_completions()` against
//! `memcg->cgwb_domain.completions`). A domain's `fprop_global` starts its
//! event count at 1 ("to avoid dealing with periods with 0 events"); every
//! `VM_COMPLETIONS_PERIOD_LEN` (3 s) the domain's `writeout_period` timer
//! halves it (`fprop_new_period(…, 1)`: `events -= events − (events >> 1)`)
//! and advances the period; a wb's local count is halved once per period
//! passed when it is next read or added to (`fprop_reflect_period_percpu`).
//! The timer is armed at the first completion after it stopped
//! (`period_time` 0: `wp_next_time(jiffies)`), and stops when a period
//! finds at most 1 event left.
//!
//! `__wb_calc_thresh()` gives the wb the share `numerator / denominator`
//! (`fprop_fraction_percpu()`, the denominator raised to the numerator, or
//! to 1, when not above it) of the domain's `thresh`: with the defaults
//! (`bdi_min_ratio` 0, the bdi's `min_ratio` 0 and `max_ratio` 100 ×
//! `BDI_RATIO_SCALE`, so `wb_min_max_ratio()` scales nothing) `thresh ×
//! numerator / denominator`, at most `thresh`. A wb that has completed no
//! write has `wb_thresh` 0; the only wb writing has a share just under 1
//! (the global count's initial 1) until aging rounds it away.
//!
//! Simplified: the counts are exact (the kernel's `percpu_counter_read()`
//! may lag by up to `nr_cpu_ids × PROP_BATCH` events); the timer
//! (`TIMER_DEFERRABLE`) is run on time, at the first read or completion at or
//! after its jiffy (each expiry ages one period, `miss_periods` 0: a
//! deferred timer on an idle CPU ages the missed periods at once, which
//! rounds differently); `max_prop_frac` is the default `FPROP_FRAC_BASE`
//! (`__fprop_add_percpu_max()` then adds unconditionally).

use crate::memcg::HZ;

/// `VM_COMPLETIONS_PERIOD_LEN` (v6.12 mm/page-writeback.c): `3 * HZ`
/// jiffies, the period over which completions are halved.
pub(crate) const VM_COMPLETIONS_PERIOD_LEN: u64 = 3 * HZ;

/// `struct fprop_global`'s event count and period (lib/flex_proportions.c,
/// v6.12).
#[derive(Clone, Debug)]
pub(crate) struct FpropGlobal {
    events: u64,
    period: u32,
}

impl Default for FpropGlobal {
    /// `fprop_global_init()`: period 0, events 1.
    fn default() -> Self {
        FpropGlobal {
            events: 1,
            period: 0,
        }
    }
}

impl FpropGlobal {
    /// `fprop_new_period()` (v6.12): nothing with at most 1 event (false);
    /// else the count aged `periods` times (`events >> periods` left) and
    /// the period advanced.
    fn new_period(&mut self, periods: u32) -> bool {
        let mut events = self.events;
        if events <= 1 {
            return false;
        }
        if periods < 64 {
            events -= events >> periods;
        }
        self.events -= events;
        self.period += periods;
        true
    }
}

/// `struct fprop_local_percpu`'s event count and the period it reflects.
#[derive(Clone, Debug, Default)]
pub(crate) struct FpropLocal {
    events: u64,
    period: u32,
}

impl FpropLocal {
    /// `fprop_reflect_period_percpu()` (v6.12): halved once per period the
    /// global count advanced since, 0 after 64 or more.
    fn reflect_period(&mut self, p: &FpropGlobal) {
        if self.period >= p.period {
            return;
        }
        let d = p.period - self.period;
        self.events = if d < 64 { self.events >> d } else { 0 };
        self.period = p.period;
    }
}

/// A `struct wb_domain`'s completions and its `writeout_period` timer
/// (`period_time`, jiffies; 0: stopped). Its `dirty_limit` is kept by the
/// throttle (`crate::page_writeback_throttle`).
#[derive(Clone, Debug, Default)]
pub(crate) struct WbDomain {
    completions: FpropGlobal,
    period_time: u64,
}

/// `wp_next_time()` (v6.12): `cur_time + VM_COMPLETIONS_PERIOD_LEN`, never
/// 0 (0 means stopped).
fn wp_next_time(cur_time: u64) -> u64 {
    (cur_time + VM_COMPLETIONS_PERIOD_LEN).max(1)
}

impl WbDomain {
    /// The `writeout_period()` timer's expiries due by jiffy `now`, each on
    /// time (v6.12: `fprop_new_period(miss_periods + 1)` with no missed
    /// period, the timer re-armed a period later, or stopped when aging
    /// found at most 1 event).
    fn run_period_timer(&mut self, now: u64) {
        while self.period_time != 0 && now >= self.period_time {
            if self.completions.new_period(1) {
                self.period_time = wp_next_time(self.period_time);
            } else {
                self.period_time = 0;
            }
        }
    }

    /// `wb_domain_writeout_add()` (v6.12) at jiffy `now`: `nr` completions
    /// of the wb whose local count is `local` (`__fprop_add_percpu()`), and
    /// the period timer armed if it was stopped.
    pub(crate) fn writeout_add(&mut self, local: &mut FpropLocal, nr: u64, now: u64) {
        self.run_period_timer(now);
        local.reflect_period(&self.completions);
        local.events += nr;
        self.completions.events += nr;
        if self.period_time == 0 {
            self.period_time = wp_next_time(now);
        }
    }

    /// `fprop_fraction_percpu()` (v6.12) at jiffy `now`: the wb's
    /// `(numerator, denominator)`, the denominator at least the numerator
    /// and at least 1.
    pub(crate) fn fraction(&mut self, local: &mut FpropLocal, now: u64) -> (u64, u64) {
        self.run_period_timer(now);
        local.reflect_period(&self.completions);
        let (num, mut den) = (local.events, self.completions.events);
        if den <= num {
            den = num.max(1);
        }
        (num, den)
    }

    /// `__wb_calc_thresh()` (v6.12, default ratios) at jiffy `now`: the wb's
    /// share of `thresh`, `thresh × numerator / denominator`, at most
    /// `thresh`.
    pub(crate) fn wb_calc_thresh(&mut self, local: &mut FpropLocal, thresh: u64, now: u64) -> u64 {
        let (num, den) = self.fraction(local, now);
        let share = u128::from(thresh) * u128::from(num) / u128::from(den);
        (share as u64).min(thresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The proportions of v6.12 lib/flex_proportions.c, worked by hand: the
    /// global count starts at 1, so one wb's 100 completions are 100 / 101
    /// of the domain; each 3 s period halves both counts (global 301 → 150,
    /// the first wb's 100 → 50 read later); the timer stops once aging
    /// leaves at most 1 event.
    #[test]
    fn completions_age_by_half_a_period_and_the_timer_stops_at_one_event() {
        let mut dom = WbDomain::default();
        let (mut a, mut b) = (FpropLocal::default(), FpropLocal::default());
        assert_eq!(dom.fraction(&mut a, 0), (0, 1), "no event: 0 / 1");
        dom.writeout_add(&mut a, 100, 10);
        assert_eq!(dom.period_time, 3010);
        assert_eq!(dom.fraction(&mut a, 10), (100, 101));
        assert_eq!(dom.wb_calc_thresh(&mut a, 780, 10), 772);
        assert_eq!(dom.wb_calc_thresh(&mut b, 780, 10), 0);
        dom.writeout_add(&mut b, 200, 3009);
        assert_eq!(dom.fraction(&mut b, 3009), (200, 301));
        // The period at 3010: 301 → 150 (301 − (301 − 150)).
        assert_eq!(dom.fraction(&mut a, 3010), (50, 150));
        assert_eq!(dom.fraction(&mut b, 3010), (100, 150));
        assert_eq!(dom.wb_calc_thresh(&mut b, 780, 3010), 520);
        // Seven periods later (jiffy 24010): 150 >> 7 = 1; a's 50 >> 7 = 0;
        // the eighth finds 1 event and stops the timer.
        assert_eq!(dom.fraction(&mut a, 24_010), (0, 1));
        assert_eq!(dom.period_time, 27_010);
        assert_eq!(dom.fraction(&mut b, 27_010), (0, 1));
        assert_eq!(dom.period_time, 0);
        // The next completion rearms it from its own jiffy.
        dom.writeout_add(&mut a, 1, 40_000);
        assert_eq!(dom.period_time, 43_000);
        // Only one wb writes: 1 / 2, the denominator's initial event aged
        // to 1 and kept.
        assert_eq!(dom.fraction(&mut a, 40_000), (1, 2));
    }
}
