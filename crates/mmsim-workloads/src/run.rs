//! Running a scenario: machine setup, phases, round-robin interleaving, results.

use std::sync::atomic::{AtomicBool, Ordering};

use mmsim_core::{Event, MachineConfig, RunResult, Sim};
use serde::Serialize;

use crate::error::WorkloadError;
use crate::gen::{workload_seed, Generator, TraceReport};
use crate::scenario::Scenario;

/// Events handed to [`Sim::run`] at a time.
pub const BATCH: usize = 4096;
/// Events generated ahead per workload when several are interleaved.
const LANE: usize = 512;

/// A callback that sees every batch of events before it runs.
pub type BatchObserver<'a> = &'a mut dyn FnMut(&[Event]);

/// Options of [`run_scenario`].
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Called after every batch with the number of events executed so far (a progress
    /// bar can divide by [`Scenario::expected_events`]).
    pub progress: Option<&'a mut dyn FnMut(u64)>,
    /// Called with every batch of events just before it is executed (to record or check
    /// the event stream).
    pub on_batch: Option<BatchObserver<'a>>,
}

impl std::fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("progress", &self.progress.is_some())
            .field("on_batch", &self.on_batch.is_some())
            .finish()
    }
}

/// One workload's line in the result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkloadReport {
    /// Its name (also its task's).
    pub name: String,
    /// Its kind (`zipf`, `trace`, …).
    pub kind: String,
    /// Its target (`anon`, `file`, `mmap`, `mmap-exec`).
    pub target: String,
    /// Its phase.
    pub phase: u32,
    /// Size of its region in pages.
    pub pages: u64,
    /// Events it generated.
    pub events: u64,
}

/// What a scenario run produces: the simulator's [`RunResult`] plus what ran.
///
/// Serialized (JSON) with the `RunResult` fields at the top level (`accesses`, `hits`,
/// `misses`, `miss_ratio`, `vmstat`, `psi`, `runtime_s`, …) next to `scenario`, `seed`,
/// `machine`, `workloads` and `trace`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioResult {
    /// The scenario's name.
    pub scenario: String,
    /// Its description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The seed used.
    pub seed: u64,
    /// The machine it ran on.
    pub machine: MachineConfig,
    /// Events run before the counters were zeroed (0: everything is measured; also 0 when
    /// the run was cancelled before the warmup ended, so the counters include it).
    pub warmup_events: u64,
    /// Events simulated, warmup included.
    pub events: u64,
    /// Whether the run was cancelled (see [`run_scenario_cancellable`]) before the
    /// workloads finished: the counters cover the first `events` events only.
    pub partial: bool,
    /// The simulator's counters.
    #[serde(flatten)]
    pub result: RunResult,
    /// Per workload: name, kind, target, phase, events.
    pub workloads: Vec<WorkloadReport>,
    /// What each trace replay read (empty without trace workloads).
    pub trace: Vec<TraceReport>,
}

struct Lane {
    gen: Generator,
    buf: Vec<Event>,
    pos: usize,
    events: u64,
    /// Simulated time before which the lane issues nothing (`start`), ns.
    start: u64,
}

/// Runs `s`: validates it, builds the machine, creates every workload's task and region
/// in workload order (opening traces up front, so a missing file fails before anything
/// runs), then runs the phases in increasing order. Within a phase the workloads are
/// interleaved round-robin, `weight` events from each live workload in turn, until all are
/// finished. Events go to [`Sim::run`] in batches of [`BATCH`].
///
/// Start times ([`WorkloadSpec::start`](crate::WorkloadSpec::start)): while a workload of
/// the phase waits for its start, the phase runs one round per batch and checks the
/// clock ([`Sim::now`]) before each round; a waiting workload joins the first round that
/// begins at or after its start. If every unfinished workload of the phase is waiting,
/// an `Event::Think` advances the clock to the earliest start (it goes to `on_batch` but
/// not into the event counts, the progress count or `warmup_events`).
pub fn run_scenario(
    s: &Scenario,
    opts: &mut RunOptions<'_>,
) -> Result<ScenarioResult, WorkloadError> {
    run_scenario_cancellable(s, opts, None)
}

/// [`run_scenario`] that stops early when `cancel` becomes true (e.g. set by a SIGINT
/// handler or by the progress callback).
///
/// The flag is read once per batch of [`BATCH`] events, after the batch ran and the
/// progress callback saw it, so cancelling costs nothing per event. A cancelled run
/// finishes the machine as a complete run does and returns its counters with
/// [`partial`](ScenarioResult::partial) set and [`events`](ScenarioResult::events) the
/// number of events simulated; cancelled before the warmup ended, the counters were
/// never zeroed and [`warmup_events`](ScenarioResult::warmup_events) is 0.
pub fn run_scenario_cancellable(
    s: &Scenario,
    opts: &mut RunOptions<'_>,
    cancel: Option<&AtomicBool>,
) -> Result<ScenarioResult, WorkloadError> {
    s.validate()?;
    let mut sim = Sim::new(s.machine.clone()).map_err(|source| WorkloadError::Setup {
        what: "machine".into(),
        source,
    })?;
    crate::cgroups::setup(&mut sim, s)?;
    let mut lanes = Vec::with_capacity(s.workloads.len());
    let mut names = Vec::with_capacity(s.workloads.len());
    for (i, w) in s.workloads.iter().enumerate() {
        let name = w.display_name(i);
        let what = format!("workload[{i}] \"{name}\"");
        let gen = Generator::build(
            &mut sim,
            w,
            &name,
            workload_seed(s.seed, i),
            &what,
            s.base_dir.as_deref(),
        )?;
        lanes.push(Lane {
            gen,
            buf: Vec::with_capacity(LANE),
            pos: 0,
            events: 0,
            start: w.start,
        });
        names.push(name);
    }

    let mut phases: Vec<u32> = s.workloads.iter().map(|w| w.phase).collect();
    phases.sort_unstable();
    phases.dedup();
    let mut out: Vec<Event> =
        Vec::with_capacity(BATCH + s.workloads.iter().map(|w| w.weight as usize).sum::<usize>());
    let mut done = 0u64;
    let mut partial = false;
    'phases: for phase in phases {
        let mut live: Vec<usize> = (0..lanes.len())
            .filter(|&i| s.workloads[i].phase == phase)
            .collect();
        while !live.is_empty() {
            out.clear();
            let now = sim.now();
            let waiting = live
                .iter()
                .map(|&i| lanes[i].start)
                .filter(|&t| t > now)
                .min();
            if let Some(next) = waiting {
                // Some lane waits for its start: one round of the started lanes, or an
                // idle wait for the earliest start if none has started.
                let mut any = false;
                let mut k = 0;
                'round: while k < live.len() {
                    let lane = &mut lanes[live[k]];
                    if lane.start > now {
                        k += 1;
                        continue;
                    }
                    any = true;
                    for _ in 0..s.workloads[live[k]].weight {
                        if lane.pos == lane.buf.len() {
                            lane.buf.clear();
                            lane.pos = 0;
                            if lane.gen.fill(&mut lane.buf, LANE)? == 0 {
                                live.remove(k);
                                continue 'round;
                            }
                        }
                        out.push(lane.buf[lane.pos]);
                        lane.pos += 1;
                        lane.events += 1;
                    }
                    k += 1;
                }
                if !any {
                    let idle = [Event::Think { ns: next - now }];
                    if let Some(f) = opts.on_batch.as_mut() {
                        f(&idle);
                    }
                    sim.run(&idle);
                    continue;
                }
                if out.is_empty() {
                    continue;
                }
            } else if live.len() == 1 {
                let lane = &mut lanes[live[0]];
                out.extend_from_slice(&lane.buf[lane.pos..]);
                lane.pos = lane.buf.len();
                let room = BATCH - out.len();
                lane.gen.fill(&mut out, room)?;
                if out.is_empty() {
                    live.clear();
                }
                lane.events += out.len() as u64;
            } else {
                while out.len() < BATCH && !live.is_empty() {
                    let mut k = 0;
                    'lanes: while k < live.len() {
                        let lane = &mut lanes[live[k]];
                        for _ in 0..s.workloads[live[k]].weight {
                            if lane.pos == lane.buf.len() {
                                lane.buf.clear();
                                lane.pos = 0;
                                if lane.gen.fill(&mut lane.buf, LANE)? == 0 {
                                    live.remove(k);
                                    continue 'lanes;
                                }
                            }
                            out.push(lane.buf[lane.pos]);
                            lane.pos += 1;
                            lane.events += 1;
                        }
                        k += 1;
                    }
                }
            }
            if let Some(f) = opts.on_batch.as_mut() {
                f(&out);
            }
            match s.warmup_events {
                Some(w) if done < w && done + out.len() as u64 >= w => {
                    let k = (w - done) as usize;
                    sim.run(&out[..k]);
                    sim.begin_measurement();
                    sim.run(&out[k..]);
                }
                _ => sim.run(&out),
            }
            done += out.len() as u64;
            if let Some(p) = opts.progress.as_mut() {
                p(done);
            }
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                partial = true;
                break 'phases;
            }
        }
    }

    // The counters were zeroed when the events reached the warmup (see above).
    let measured_after = s.warmup_events.filter(|&w| w <= done).unwrap_or(0);
    if let Some(w) = s.warmup_events.filter(|&w| w >= done && !partial) {
        return Err(WorkloadError::Invalid {
            file: s.source.clone(),
            field: "warmup_events".into(),
            message: format!("{w} leaves nothing to measure: the workloads issued {done} events"),
        });
    }
    let result = sim.finish();
    let workloads = s
        .workloads
        .iter()
        .zip(&lanes)
        .zip(&names)
        .map(|((w, lane), name)| WorkloadReport {
            name: name.clone(),
            kind: w.kind.name().to_string(),
            target: w.target_name().to_string(),
            phase: w.phase,
            pages: w.kind.pages(),
            events: lane.events,
        })
        .collect();
    let trace = lanes
        .iter()
        .zip(&names)
        .filter_map(|(lane, name)| lane.gen.trace_report(name))
        .collect();
    Ok(ScenarioResult {
        scenario: s.name.clone(),
        description: s.description.clone(),
        seed: s.seed,
        machine: s.machine.clone(),
        warmup_events: measured_after,
        events: done,
        partial,
        result,
        workloads,
        trace,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WorkloadKind;

    fn scenario(warmup: Option<u64>) -> Scenario {
        let mut s = Scenario::from_toml_str(
            "seed = 3\n[machine]\nmemory = \"64M\"\n\
             [[workload]]\nkind = \"zipf\"\ntarget = \"file\"\npages = \"128M\"\ntheta = 0.9\naccesses = 100000\n\
             [[workload]]\nkind = \"uniform\"\ntarget = \"anon\"\npages = \"16M\"\naccesses = 50000\nphase = 1\n",
            "small.toml",
        )
        .unwrap();
        s.warmup_events = warmup;
        s
    }

    /// Runs `s`, setting the cancel flag from the progress callback once `after` events
    /// ran.
    fn cancelled_after(s: &Scenario, after: u64) -> ScenarioResult {
        let cancel = AtomicBool::new(false);
        let mut seen = Vec::new();
        let mut tick = |done: u64| {
            seen.push(done);
            if done >= after {
                cancel.store(true, Ordering::Relaxed);
            }
        };
        let r = run_scenario_cancellable(
            s,
            &mut RunOptions {
                progress: Some(&mut tick),
                on_batch: None,
            },
            Some(&cancel),
        )
        .unwrap();
        // The run stopped at the first batch boundary after the flag was set.
        assert_eq!(seen.last(), Some(&r.events));
        assert!(seen.iter().rev().skip(1).all(|&d| d < after));
        r
    }

    #[test]
    fn a_complete_run_is_not_partial() {
        let s = scenario(None);
        let r = run_scenario(&s, &mut RunOptions::default()).unwrap();
        assert!(!r.partial);
        assert_eq!(r.events, 150_000);
        assert_eq!(r.result.access.accesses, 150_000);
        // An unset flag changes nothing.
        let cancel = AtomicBool::new(false);
        let c = run_scenario_cancellable(&s, &mut RunOptions::default(), Some(&cancel)).unwrap();
        assert_eq!(r, c);
    }

    #[test]
    fn cancelling_stops_at_a_batch_boundary_and_returns_the_counters_so_far() {
        let s = scenario(None);
        let r = cancelled_after(&s, 10_000);
        assert!(r.partial);
        assert_eq!(r.events, 3 * BATCH as u64);
        assert_eq!(r.result.access.accesses, r.events);
        assert_eq!(r.workloads[0].events, r.events);
        assert_eq!(r.workloads[1].events, 0);
        assert_eq!(r.result.access.hits + r.result.access.misses, r.events);
        assert!(r.result.runtime_s > 0.0);
        // The partial run is the prefix of the full one: the same counters as a scenario
        // whose events stop there.
        let mut short = s.clone();
        if let WorkloadKind::Zipf { accesses, .. } = &mut short.workloads[0].kind {
            *accesses = r.events;
        }
        short.workloads.truncate(1);
        let full = run_scenario(&short, &mut RunOptions::default()).unwrap();
        assert_eq!(full.result.vmstat, r.result.vmstat);
        assert_eq!(full.result.access, r.result.access);
        assert_eq!(full.result.psi, r.result.psi);
        assert_eq!(full.result.runtime_s, r.result.runtime_s);
        // Cancelled in the second phase.
        let r = cancelled_after(&s, 120_000);
        assert!(r.partial);
        assert_eq!(r.workloads[0].events, 100_000);
        assert!(r.workloads[1].events > 0 && r.workloads[1].events < 50_000);
        assert_eq!(r.events, r.result.access.accesses);
    }

    #[test]
    fn cancelling_during_the_warmup_reports_unzeroed_counters() {
        let s = scenario(Some(50_000));
        let r = cancelled_after(&s, 1);
        assert!(r.partial);
        assert_eq!(r.events, BATCH as u64);
        assert_eq!(r.warmup_events, 0, "the counters were never zeroed");
        assert_eq!(r.result.access.accesses, r.events);
        // After the warmup: the counters are those after it.
        let r = cancelled_after(&s, 60_000);
        assert_eq!(r.warmup_events, 50_000);
        assert_eq!(r.result.access.accesses, r.events - 50_000);
    }
}
