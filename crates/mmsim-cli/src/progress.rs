//! Long runs: a progress bar on stderr and Ctrl-C (SIGINT) that stops a run cleanly.
//!
//! The bar appears only after a second (short runs print nothing), only when stderr is
//! a terminal and `--quiet` is not given. It counts simulated events against
//! [`Scenario::expected_events`](mmsim_workloads::Scenario::expected_events) with the
//! rate (events per host second) and an ETA, or, for a trace of unknown length, shows
//! a spinner with the count and the rate.
//!
//! The first Ctrl-C sets [`CANCEL`]; `run_scenario_cancellable` reads it between
//! batches, so the run stops within a few thousand events and its partial result is
//! printed (marked PARTIAL; exit status 130). A second Ctrl-C exits at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// Set by the first SIGINT; runs stop at the next batch boundary when it is set.
pub static CANCEL: AtomicBool = AtomicBool::new(false);

/// Exit status of a run stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// How long a run goes before the bar appears.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Installs the SIGINT handler: the first Ctrl-C sets [`CANCEL`], the second exits with
/// status 130 at once. Best effort: without a handler, Ctrl-C kills the process as usual.
pub fn install_sigint_handler() {
    let _ = ctrlc::set_handler(|| {
        if CANCEL.swap(true, Ordering::SeqCst) {
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
    });
}

/// Ctrl-C stopped a command that has no partial result to print (`trace`); exits
/// with [`EXIT_INTERRUPTED`].
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted (Ctrl-C)")
    }
}

impl std::error::Error for Interrupted {}

/// Whether Ctrl-C was pressed.
pub fn cancelled() -> bool {
    CANCEL.load(Ordering::Relaxed)
}

/// Events per second since the command started, for the bar: `12.3M ev/s`.
///
/// Averaged over the whole command rather than taken from indicatif's estimator: the
/// bar appears only after [`SHOW_AFTER`], already at a large position, and the
/// estimator's first frames divided that jump by the bar's own age (a few
/// milliseconds), showing rates thousands of times too high.
fn rate(start: Instant, state: &ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = w.write_str(&rate_text(state.pos(), start.elapsed().as_secs_f64()));
}

fn rate_text(done: u64, secs: f64) -> String {
    let r = done as f64 / secs.max(1e-3);
    if r >= 1e6 {
        format!("{:.1}M ev/s", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1}k ev/s", r / 1e3)
    } else {
        format!("{r:.0} ev/s")
    }
}

/// Time left at the average rate since the command started (see [`rate`]; indicatif's
/// own estimate showed `ETA 0s` on the first frames).
fn eta(start: Instant, state: &ProgressState, w: &mut dyn std::fmt::Write) {
    let total = state.len().unwrap_or(0);
    let _ = w.write_str(&eta_text(state.pos(), total, start.elapsed().as_secs_f64()));
}

fn eta_text(done: u64, total: u64, secs: f64) -> String {
    if done == 0 {
        return "?".into();
    }
    let s = (total.saturating_sub(done) as f64 * secs / done as f64).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// The progress of one command: one bar over all its runs (a compare's configurations
/// and repeats add up), created lazily after [`SHOW_AFTER`].
pub struct Progress {
    enabled: bool,
    start: Instant,
    total: Option<u64>,
    /// Events of the runs already finished.
    base: u64,
    label: String,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A progress display for `total` events (`None`: unknown, a spinner), shown if
    /// `enabled` (the caller checks `--quiet` and whether stderr is a terminal).
    pub fn new(enabled: bool, total: Option<u64>) -> Progress {
        Progress {
            enabled,
            start: Instant::now(),
            total,
            base: 0,
            label: String::new(),
            bar: None,
        }
    }

    /// Sets the text shown after the counts (e.g. the configuration running).
    pub fn set_label(&mut self, label: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(label.clone());
        }
        self.label = label;
    }

    /// The current run has simulated `done` events.
    pub fn tick(&mut self, done: u64) {
        self.tick_total(self.base + done);
    }

    /// All runs together have simulated `pos` events (runs going on side by side).
    pub fn tick_total(&mut self, pos: u64) {
        match &self.bar {
            Some(bar) => bar.set_position(pos),
            None if self.enabled && self.start.elapsed() >= SHOW_AFTER => {
                let bar = self.make_bar();
                bar.set_position(pos);
                // The rate counts from here: the jump from 0 to `pos` took more than an
                // instant.
                bar.reset_eta();
                self.bar = Some(bar);
            }
            None => {}
        }
    }

    /// The current run is over after `events` events; the next run counts on from there.
    pub fn run_done(&mut self, events: u64) {
        self.base += events;
    }

    fn make_bar(&self) -> ProgressBar {
        let (len, template) = match self.total {
            Some(t) if t > 0 => (
                Some(t),
                "{elapsed_precise} [{bar:30}] {percent:>3}% {human_pos}/{human_len} events, \
                 {rate}, ETA {eta} {msg}",
            ),
            _ => (
                None,
                "{spinner} {elapsed_precise} {human_pos} events, {rate} {msg}",
            ),
        };
        let style = ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key("rate", {
                let start = self.start;
                move |state: &ProgressState, w: &mut dyn std::fmt::Write| rate(start, state, w)
            })
            .with_key("eta", {
                let start = self.start;
                move |state: &ProgressState, w: &mut dyn std::fmt::Write| eta(start, state, w)
            })
            .progress_chars("=> ");
        ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr())
            .with_style(style)
            .with_elapsed(self.start.elapsed())
            .with_message(self.label.clone())
    }

    /// Removes the bar (before the result is printed).
    pub fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first frame, 1.5 s in at 12 M events, shows the average rate, not the jump
    /// divided by the bar's age.
    #[test]
    fn first_frame_rate_and_eta_are_averages() {
        assert_eq!(rate_text(12_000_000, 1.5), "8.0M ev/s");
        assert_eq!(rate_text(4_500, 1.5), "3.0k ev/s");
        assert_eq!(rate_text(15, 1.5), "10 ev/s");
        assert_eq!(rate_text(15, 0.0), "15.0k ev/s");
        assert_eq!(eta_text(12_000_000, 60_000_000, 1.5), "6s");
        assert_eq!(eta_text(1_000, 60_000_000, 1.5), "24h59m");
        assert_eq!(eta_text(1_000_000, 60_000_000, 1.5), "1m29s");
        assert_eq!(eta_text(0, 60_000_000, 1.5), "?");
    }
}
