//! `schedule = "fair"`: the workloads of a phase run side by side in simulated
//! time, picked by a CFS-like scheduler, instead of taking turns by event count.
//!
//! # Which scheduler
//!
//! The CFS of kernel/sched/fair.c as it was up to v6.5 (`pick_next_entity`
//! takes the leftmost entity of the timeline, the least `vruntime`), not the
//! EEVDF of v6.6+. CFS is what the 6.1 guest of the validation cases runs, and
//! its one rule — the runnable task with the least weighted CPU time runs next —
//! is what the memory results depend on (who allocates while whom sleeps);
//! EEVDF's lag and deadlines change latency, not the long-run shares.
//!
//! # Time
//!
//! The simulator executes one task's events at a time on one clock (the
//! `Sim`'s workload clock, which timers, devices and PSI see: wall time). Each
//! task's events are accounted by the simulator (`Sim::task_ran_ns`: access
//! costs, faults, direct and memcg reclaim, `lru_lock` spin, think time), and
//! its sleeps (the IO wait of a read or swap-in, `memory.high` throttling) do
//! not move the clock under this schedule but end its run until it wakes
//! (`Sim::take_task_wake`; see `mmsim_core`'s `sched` module).
//!
//! With P = `machine.cpus` CPUs and R runnable tasks, min(R, P) CPUs are busy:
//! every nanosecond of a task's time moves the shared clock by 1/min(R, P) ns
//! (`Sim::set_runnable`, the fluid clock of `machine.cpus` with the busy CPUs
//! as divisor). The tasks' runs are serialised on the one clock, so a task
//! that runs d ns moves the clock by only d / min(R, P): it runs ahead of the
//! wall time, as if on several CPUs at once, unless the others' runs follow.
//! A task never runs on more than one CPU at once, so:
//!
//! - with R ≤ P each task has a CPU of its own, whose timeline the scheduler
//!   keeps (the wall time it became runnable plus the time it ran since). No
//!   tick preempts it (`check_preempt_tick` only acts with a second task on
//!   the queue); the task whose CPU is furthest behind runs, until its CPU
//!   passes the clock (`Sim::run_task_on_own_cpu`), a wake is due, or it
//!   sleeps, so the tasks take turns event by event
//!   and none leads the clock by more than one event;
//! - with R > P the tasks take turns slice by slice, and a CPU takes a task
//!   up where the clock is; the task that ran may lead the clock by up to a
//!   slice (the others' slices follow; fluid shares, not per-CPU timelines);
//! - a task whose events end ends when its CPU reaches the end of its last
//!   event (its timeline), not at the clock, so its time never exceeds the
//!   wall time since it started.
//!
//! With P = 1 this is exact: one CPU, the clock moves by each nanosecond
//! run, and it idles (moves to the earliest wake or `start`) only when every
//! task sleeps.
//!
//! # The rules (kernel/sched/fair.c, v6.5)
//!
//! - **Load weight**: a workload's `weight` is its CFS load in units of a
//!   nice-0 task (`NICE_0_LOAD` = 1024): weight 2 gets twice the CPU time of
//!   weight 1 while both are runnable (`calc_delta_fair`: `vruntime` grows by
//!   the time run × 1024 / load, kept exact with a remainder).
//! - **Pick** (`pick_next_entity`): the runnable task with the least
//!   `vruntime`; ties go to the earlier workload.
//! - **Slice** (`sched_slice`, `__sched_period`): the period is
//!   `sysctl_sched_latency` (6 ms), or `nr × sysctl_sched_min_granularity`
//!   (0.75 ms) above `sched_nr_latency` (8) tasks per CPU, both scaled by
//!   1 + ilog2(min(P, 8)) (`SCHED_TUNABLESCALING_LOG`); a task's slice is its
//!   load's share of it, at least the minimum granularity (`BASE_SLICE`). The
//!   R runnable tasks are taken as spread evenly over the P CPUs' run queues
//!   (⌈R / P⌉ per queue). A task runs until its slice is used
//!   (`check_preempt_tick`, checked after every event rather than at a 4 ms
//!   tick: the `HRTICK` behaviour), it sleeps, or its events end.
//! - **Wakeup** (`place_entity`): a waking task's `vruntime` is raised to at
//!   least `min_vruntime` − latency / 2 (`GENTLE_FAIR_SLEEPERS`); it preempts
//!   the running task when no CPU is idle and the running task's `vruntime`
//!   exceeds its own by more than the wakeup granularity (1 ms scaled, weighted:
//!   `wakeup_preempt_entity`). The running task is stopped at the first event
//!   boundary at or after the earliest wake, so the decision is made on time.
//! - **New tasks**: the workloads present when a phase starts all begin at
//!   `min_vruntime`; one whose `start` comes later is placed at
//!   `min_vruntime` + its weighted slice (`START_DEBIT`, as a forked task).
//! - `min_vruntime` (`update_min_vruntime`) only grows: the least `vruntime`
//!   of the runnable tasks, never below its last value.
//!
//! Events are atomic (an event runs to its end: a kernel path without a
//! preemption point), and a task's sleep starts at the end of the event that
//! slept. A workload whose events end exits then (`exit = true`), at the
//! simulated time its last event ran (after its last IO when that slept), so
//! the others gain its memory at that time. Phases still run one after the
//! other; `min_vruntime` carries over.
//!
//! Determinism: every decision depends on the simulator's state after an
//! event, never on how many events are handed to it at once
//! ([`Sim::run_task`] stops after the deciding event), so the result is the
//! same for any chunk size; ties break by workload order.

use std::sync::atomic::{AtomicBool, Ordering};

use mmsim_core::{Event, SeriesMarkerKind, Sim};

use crate::error::WorkloadError;
use crate::run::{EventStream, RunOptions, BATCH, LANE};
use crate::scenario::Scenario;

/// `NICE_0_LOAD` (the load of a nice-0 task, `scale_load_down`ed).
const NICE_0_LOAD: u64 = 1024;
/// `sysctl_sched_latency` before scaling, ns.
const SCHED_LATENCY_NS: u64 = 6_000_000;
/// `sysctl_sched_min_granularity` before scaling, ns.
const SCHED_MIN_GRANULARITY_NS: u64 = 750_000;
/// `sysctl_sched_wakeup_granularity` before scaling, ns.
const SCHED_WAKEUP_GRANULARITY_NS: u64 = 1_000_000;
/// `sched_nr_latency`.
const SCHED_NR_LATENCY: u64 = 8;

/// A workload's state under the fair schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Not in the current phase, or its events ended.
    Out,
    /// Waits for its `start`, ns.
    New(u64),
    /// On the run queue.
    Runnable,
    /// Sleeps until then, ns.
    Sleeping(u64),
}

/// A scheduling entity (`struct sched_entity`): one per workload.
#[derive(Clone, Copy, Debug)]
struct Entity {
    load: u64,
    vruntime: u64,
    /// Remainder of `vruntime`, in 1/`load` ns.
    vrem: u64,
    state: State,
    /// Its events ended while it slept, or before its CPU reached its
    /// last event's end: it ends when it wakes (`Sleeping`'s time).
    ending: bool,
    /// The wall time its CPU has run it to, ns: with no more runnable tasks
    /// than CPUs each runs on a CPU of its own, and this is how far that
    /// CPU's timeline has got (the time it became runnable, plus the time it
    /// ran since). The shared clock moves by 1/R of each run, so the task
    /// that just ran leads it by up to one event (see the module
    /// documentation).
    at: u64,
}

/// What the fair schedule measured per workload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TaskTimes {
    /// Time its events ran, ns.
    pub cpu_ns: u64,
    /// Time it slept (IO, throttling), ns.
    pub sleep_ns: u64,
}

/// The scheduler's tunables, scaled for the machine's CPUs.
struct Tunables {
    cpus: u64,
    latency: u64,
    min_gran: u64,
    wakeup_gran: u64,
}

impl Tunables {
    fn new(cpus: u64) -> Tunables {
        // SCHED_TUNABLESCALING_LOG: factor = 1 + ilog2(min(cpus, 8)).
        let factor = 1 + u64::from(cpus.clamp(1, 8).ilog2());
        Tunables {
            cpus: cpus.max(1),
            latency: SCHED_LATENCY_NS * factor,
            min_gran: SCHED_MIN_GRANULARITY_NS * factor,
            wakeup_gran: SCHED_WAKEUP_GRANULARITY_NS * factor,
        }
    }

    /// `sched_slice` of a task of `load` among `nr` runnable tasks of total
    /// load `total` (the task included), ns.
    fn slice(&self, load: u64, nr: u64, total: u64) -> u64 {
        let per_cpu = nr.div_ceil(self.cpus);
        let period = if per_cpu > SCHED_NR_LATENCY {
            per_cpu * self.min_gran
        } else {
            self.latency
        };
        let busy = nr.min(self.cpus);
        let s = (u128::from(period) * u128::from(load) * u128::from(busy)
            / u128::from(total.max(1))) as u64;
        s.max(self.min_gran)
    }
}

/// `calc_delta_fair`: `delta` ns of a task of `load` in virtual ns.
fn calc_delta_fair(delta: u64, load: u64) -> u64 {
    (u128::from(delta) * u128::from(NICE_0_LOAD) / u128::from(load)) as u64
}

/// Runs every phase of `stream` under the fair schedule, handing each
/// executed run of events (and each idle wait) to `opts.on_batch`; at most
/// `chunk` events go to the simulator at a time (the result does not depend
/// on it). Returns the events run and whether `cancel` stopped the run.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    sim: &mut Sim,
    s: &Scenario,
    stream: &mut EventStream,
    opts: &mut RunOptions<'_>,
    cancel: Option<&AtomicBool>,
    exited: &mut [Option<u64>],
    times: &mut [TaskTimes],
    chunk: usize,
) -> Result<(u64, bool), WorkloadError> {
    sim.set_fair_schedule(true);
    let tun = Tunables::new(sim.cpus());
    let n = stream.lanes.len();
    let mut ents: Vec<Entity> = stream
        .lanes
        .iter()
        .map(|l| Entity {
            load: u64::from(l.weight.max(1)) * NICE_0_LOAD,
            vruntime: 0,
            vrem: 0,
            state: State::Out,
            ending: false,
            at: 0,
        })
        .collect();
    let mut min_vr = 0u64;
    let mut done = 0u64;
    let mut next_tick = BATCH as u64;
    let chunk = chunk.max(1);
    let phases = stream.phases.clone();
    for (pi, &phase) in phases.iter().enumerate() {
        stream.next_phase = pi + 1;
        let live: Vec<usize> = (0..n).filter(|&i| stream.lanes[i].phase == phase).collect();
        let t0 = sim.now();
        sim.series_mark_at(
            t0,
            SeriesMarkerKind::PhaseStart,
            None,
            format!("phase {phase}"),
        );
        for &i in &live {
            let start = stream.lanes[i].start;
            let e = &mut ents[i];
            if start > t0 {
                e.state = State::New(start);
            } else {
                e.state = State::Runnable;
                e.vruntime = e.vruntime.max(min_vr);
                e.at = e.at.max(t0);
            }
        }
        // The running task and what is left of its slice.
        let mut curr: Option<(usize, u64)> = None;
        loop {
            let now = sim.now();
            // Wakeups and new tasks due, in workload order.
            let mut preempt = false;
            for &i in &live {
                match ents[i].state {
                    State::Sleeping(t) if t <= now => {
                        if ents[i].ending {
                            end_lane(sim, s, stream, exited, &mut ents, i, t)?;
                            continue;
                        }
                        let busy_before = live
                            .iter()
                            .filter(|&&j| ents[j].state == State::Runnable)
                            .count() as u64;
                        let e = &mut ents[i];
                        e.state = State::Runnable;
                        e.at = e.at.max(t);
                        // place_entity(initial = 0), GENTLE_FAIR_SLEEPERS.
                        e.vruntime = e.vruntime.max(min_vr.saturating_sub(tun.latency / 2));
                        // check_preempt_wakeup: only when no CPU is idle.
                        let limit = e.vruntime + calc_delta_fair(tun.wakeup_gran, e.load);
                        if let Some((c, _)) = curr {
                            if busy_before >= tun.cpus && ents[c].vruntime > limit {
                                preempt = true;
                            }
                        }
                    }
                    State::New(t) if t <= now => {
                        let (nr, total) = runnable_load(&ents, &live);
                        let e = &mut ents[i];
                        let slice = tun.slice(e.load, nr + 1, total + e.load);
                        // place_entity(initial = 1), START_DEBIT.
                        e.vruntime = e.vruntime.max(min_vr + calc_delta_fair(slice, e.load));
                        e.state = State::Runnable;
                        e.at = e.at.max(t);
                    }
                    _ => {}
                }
            }
            if preempt {
                curr = None;
            }
            let (nr, total) = runnable_load(&ents, &live);
            let next_wake = live
                .iter()
                .filter_map(|&i| match ents[i].state {
                    State::Sleeping(t) | State::New(t) => Some(t),
                    _ => None,
                })
                .min();
            if nr == 0 {
                let Some(t) = next_wake else { break };
                sim.set_runnable(1);
                if let Some(f) = opts.on_batch.as_mut() {
                    f(&[Event::Think { ns: t - now }]);
                }
                sim.idle_until(t);
                continue;
            }
            sim.set_runnable(nr);
            // One CPU: the slices alone (a wake keeps `curr` for the
            // wakeup-preemption test), as before.
            let own_cpus = tun.cpus > 1 && nr <= tun.cpus;
            if !own_cpus {
                take_up_at(&mut ents, &live, now);
            }
            let (c, slice_left) = match curr {
                Some(cs) if ents[cs.0].state == State::Runnable => cs,
                _ if own_cpus => {
                    // A CPU each: no tick preemption (`check_preempt_tick`
                    // needs a second task on the queue); the task whose CPU
                    // is furthest behind runs, until its CPU passes the
                    // clock (`Sim::run_task_on_own_cpu`).
                    let c = live
                        .iter()
                        .copied()
                        .filter(|&i| ents[i].state == State::Runnable)
                        .min_by_key(|&i| (ents[i].at, i))
                        .expect("nr > 0");
                    (c, u64::MAX)
                }
                _ => {
                    // pick_next_entity: the least vruntime, the first workload on a tie.
                    let c = live
                        .iter()
                        .copied()
                        .filter(|&i| ents[i].state == State::Runnable)
                        .min_by_key(|&i| (ents[i].vruntime, i))
                        .expect("nr > 0");
                    (c, tun.slice(ents[c].load, nr, total))
                }
            };
            // Events of `c` ready to run (its buffer is refilled after each run,
            // so an empty one means its events ended).
            let lane = &mut stream.lanes[c];
            if lane.pos == lane.buf.len() && !refill(lane)? {
                end_lane(sim, s, stream, exited, &mut ents, c, now)?;
                curr = None;
                continue;
            }
            let mut take = (lane.buf.len() - lane.pos).min(chunk);
            if let Some(w) = s.warmup_events.filter(|&w| done < w) {
                take = take.min((w - done) as usize);
            }
            let until = next_wake.unwrap_or(u64::MAX);
            let ran0 = sim.task_ran_ns();
            let evs = &lane.buf[lane.pos..lane.pos + take];
            let k = if own_cpus {
                sim.run_task_on_own_cpu(evs, ents[c].at, until)
            } else {
                sim.run_task(evs, slice_left, until)
            };
            // A no-op unless `MMSIM_PERMUTE_FOLIO_IDS` (`crate::run`).
            sim.shuffle_free_folio_ids();
            if let Some(f) = opts.on_batch.as_mut() {
                f(&evs[..k]);
            }
            lane.pos += k;
            lane.events += k as u64;
            done += k as u64;
            if s.warmup_events == Some(done) {
                sim.begin_measurement();
            }
            let delta = sim.task_ran_ns() - ran0;
            times[c].cpu_ns += delta;
            ents[c].at += delta;
            if !own_cpus {
                // After every run too, so that the CPUs of a switch to
                // `own_cpus` start where the clock is after the last event,
                // whatever `chunk` cut the run into.
                take_up_at(&mut ents, &live, sim.now());
            }
            let e = &mut ents[c];
            let v = u128::from(e.vrem) + u128::from(delta) * u128::from(NICE_0_LOAD);
            e.vruntime += (v / u128::from(e.load)) as u64;
            e.vrem = (v % u128::from(e.load)) as u64;
            // update_min_vruntime.
            let least = live
                .iter()
                .filter(|&&i| ents[i].state == State::Runnable)
                .map(|&i| ents[i].vruntime)
                .min()
                .unwrap_or(min_vr);
            min_vr = min_vr.max(least);
            let slice_left = slice_left.saturating_sub(delta);
            curr = if own_cpus {
                // It runs on while its CPU is not past the clock and no wake
                // is due (the stops of `run_task_on_own_cpu`: a run cut
                // short by `chunk` goes on).
                (ents[c].at <= sim.now() && sim.now() < until).then_some((c, u64::MAX))
            } else {
                (slice_left > 0).then_some((c, slice_left))
            };
            if let Some(w) = sim.take_task_wake() {
                times[c].sleep_ns += w - sim.now();
                ents[c].state = State::Sleeping(w);
                curr = None;
            }
            // Its events ended: it ends now, or when it wakes, or when its CPU
            // reaches the end of its last event (a task runs on one CPU at a
            // time: its time from its start never exceeds the wall time).
            let lane = &mut stream.lanes[c];
            if lane.pos == lane.buf.len() && !refill(lane)? {
                let at = ents[c].at;
                match ents[c].state {
                    State::Sleeping(_) => ents[c].ending = true,
                    _ if at > sim.now() => {
                        ents[c].state = State::Sleeping(at);
                        ents[c].ending = true;
                        curr = None;
                    }
                    _ => {
                        let t = sim.now();
                        end_lane(sim, s, stream, exited, &mut ents, c, t)?;
                        curr = None;
                    }
                }
            }
            if done >= next_tick {
                next_tick = (done / BATCH as u64 + 1) * BATCH as u64;
                if let Some(p) = opts.progress.as_mut() {
                    p(done);
                }
                if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return Ok((done, true));
                }
            }
        }
    }
    stream.live.clear();
    if let Some(p) = opts.progress.as_mut() {
        p(done);
    }
    Ok((done, false))
}

/// More runnable tasks than CPUs: they wait on the run queues, and a CPU
/// takes a task up where the clock is (`now`), not where it last stopped.
fn take_up_at(ents: &mut [Entity], live: &[usize], now: u64) {
    for &i in live {
        if ents[i].state == State::Runnable {
            ents[i].at = ents[i].at.max(now);
        }
    }
}

/// Runnable tasks of `live` and their total load.
fn runnable_load(ents: &[Entity], live: &[usize]) -> (u64, u64) {
    live.iter()
        .filter(|&&i| ents[i].state == State::Runnable)
        .fold((0, 0), |(n, l), &i| (n + 1, l + ents[i].load))
}

/// Refills an empty lane's buffer; false when its generator is exhausted
/// (the lane is then finished).
fn refill(lane: &mut crate::run::Lane) -> Result<bool, WorkloadError> {
    lane.buf.clear();
    lane.pos = 0;
    if lane.gen.fill(&mut lane.buf, LANE)? == 0 {
        lane.finish();
        return Ok(false);
    }
    Ok(true)
}

/// Workload `i` ended at `t`: noted, and its tasks exited now (`exit = true`).
fn end_lane(
    sim: &mut Sim,
    s: &Scenario,
    stream: &mut EventStream,
    exited: &mut [Option<u64>],
    ents: &mut [Entity],
    i: usize,
    t: u64,
) -> Result<(), WorkloadError> {
    ents[i].state = State::Out;
    ents[i].ending = false;
    stream.ended[i] = Some(t);
    if s.workloads[i].exit && exited[i].is_none() {
        crate::run::exit_workload(sim, stream, i)?;
        exited[i] = Some(sim.now());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{run_scenario, run_scenario_chunked, ScenarioResult};

    /// A machine where an anonymous access costs exactly 100 µs (faults and zeroing
    /// free), one CPU unless `cpus` says otherwise.
    const MACHINE: &str = "[machine]\nmemory = \"256M\"\n\
        [machine.cost]\naccess_ns = 100000\nminor_fault_ns = 100000\nclear_page_ns = 0\n";

    fn parse(text: &str) -> Scenario {
        let s = Scenario::from_toml_str(text, "fair.toml").unwrap();
        s.validate().unwrap();
        s
    }

    fn anon(name: &str, accesses: u64, weight: u32) -> String {
        format!(
            "[[workload]]\nname = \"{name}\"\nkind = \"uniform\"\ntarget = \"anon\"\n\
             pages = 16\naccesses = {accesses}\nweight = {weight}\n"
        )
    }

    /// Runs `s` and returns the result with the executed runs as (workload by VMA,
    /// events) pairs, consecutive runs of one workload merged.
    fn runs(s: &Scenario) -> (ScenarioResult, Vec<(u32, usize)>) {
        let mut seq: Vec<(u32, usize)> = Vec::new();
        let mut record = |b: &[Event]| {
            for e in b {
                if let Event::Access { vma, .. } = *e {
                    match seq.last_mut() {
                        Some((v, n)) if *v == vma => *n += 1,
                        _ => seq.push((vma, 1)),
                    }
                }
            }
        };
        let r = run_scenario(
            s,
            &mut RunOptions {
                progress: None,
                on_batch: Some(&mut record),
            },
        )
        .unwrap();
        (r, seq)
    }

    #[test]
    fn two_tasks_of_equal_cost_alternate_slice_by_slice() {
        let s = parse(&format!(
            "schedule = \"fair\"\n{MACHINE}{}{}",
            anon("a", 100, 1),
            anon("b", 100, 1)
        ));
        let (r, seq) = runs(&s);
        // sched_slice = 6 ms × 1024 / 2048 = 3 ms: 30 events of 100 µs each, A first
        // (equal vruntime, the first workload), then B, …; the last 10 of each.
        let mut want = Vec::new();
        for _ in 0..3 {
            want.push((0, 30));
            want.push((1, 30));
        }
        // With 10 events left each, A's slice is cut at its end, then B's.
        want.push((0, 10));
        want.push((1, 10));
        assert_eq!(seq, want);
        let (a, b) = (&r.workloads[0], &r.workloads[1]);
        assert_eq!(a.cpu_ns, Some(10_000_000));
        assert_eq!(b.cpu_ns, Some(10_000_000));
        assert_eq!(a.sleep_ns, Some(0));
        assert_eq!(a.end_ns, Some(19_000_000));
        assert_eq!(b.end_ns, Some(20_000_000));
        assert_eq!(r.result.runtime_s, 0.02);
        // Round robin, one event each per turn, ends both at the same times ± 1 event.
        let mut rr = s.clone();
        rr.schedule = crate::scenario::Schedule::RoundRobin;
        let (rr, seq) = runs(&rr);
        assert_eq!(seq.len(), 200);
        assert_eq!(
            rr.workloads[0].cpu_ns, None,
            "no new field without the schedule"
        );
        assert_eq!(rr.result.runtime_s, 0.02);
    }

    #[test]
    fn a_heavier_weight_gets_proportionally_more_time() {
        let s = parse(&format!(
            "schedule = \"fair\"\n{MACHINE}{}{}",
            anon("heavy", 300, 3),
            anon("light", 100, 1)
        ));
        let (r, seq) = runs(&s);
        // Slices 6 ms × 3/4 = 4.5 ms (45 events) and 6 ms × 1/4 = 1.5 ms (15 events):
        // both vruntimes grow 1.5 ms a round, A first on each tie.
        assert_eq!(&seq[..4], &[(0, 45), (1, 15), (0, 45), (1, 15)]);
        let heavy: usize = seq.iter().filter(|r| r.0 == 0).map(|r| r.1).sum();
        assert_eq!(heavy, 300);
        // 3:1 all along: after 6 rounds A issued 270 and B 90; both end in round 7.
        let (a, b) = (&r.workloads[0], &r.workloads[1]);
        assert_eq!(a.end_ns, Some(6 * 6_000_000 + 3_000_000));
        assert_eq!(b.end_ns, Some(40_000_000));
    }

    /// Two tasks on two CPUs, 100 and 50 events of 100 µs: each has a CPU of
    /// its own, so each runs at most one CPU's worth: the short one ends at
    /// 5 ms, not after its 5 ms ran at the clock's half speed (2.5 ms), and
    /// the long one, alone after 5 ms, at 10 ms (+ 50 µs: the clock is half an
    /// event behind its CPU when the other ends, the granularity of
    /// serialised events).
    #[test]
    fn with_a_cpu_each_no_task_runs_faster_than_the_wall_clock() {
        let machine = MACHINE.replace("[machine]\n", "[machine]\ncpus = 2\n");
        let s = parse(&format!(
            "schedule = \"fair\"\n{machine}{}{}",
            anon("a", 100, 1),
            anon("b", 50, 1)
        ));
        let (r, seq) = runs(&s);
        // The CPU furthest behind runs until it passes the clock: a's first event
        // (its CPU at 100 µs, the clock at 50), then two of b's (b's CPU from 0 to
        // 200 µs, the clock to 150), then two of a's, … until b's last.
        let mut want = vec![(0, 1)];
        for _ in 0..24 {
            want.push((1, 2));
            want.push((0, 2));
        }
        want.push((1, 2));
        want.push((0, 51));
        assert_eq!(seq, want);
        let (a, b) = (&r.workloads[0], &r.workloads[1]);
        assert_eq!((a.cpu_ns, b.cpu_ns), (Some(10_000_000), Some(5_000_000)));
        assert_eq!(b.end_ns, Some(5_000_000));
        assert_eq!(a.end_ns, Some(10_050_000));
        assert_eq!(r.result.runtime_s, 0.01005);
    }

    /// A task reading a file with `FADV_RANDOM` (one page, no readahead) from an HDD.
    fn reader_and_cpu(schedule: &str) -> Scenario {
        parse(&format!(
            "schedule = \"{schedule}\"\n{MACHINE}[machine.fs]\ndevice = \"hdd\"\n\
             read_latency_us = 5000\n\
             [[workload]]\nname = \"reader\"\nkind = \"sequential\"\ntarget = \"file\"\n\
             pages = 1\nadvice = \"random\"\n{}",
            anon("cpu", 200, 1)
        ))
    }

    #[test]
    fn a_task_sleeping_on_io_lets_the_other_run_ahead_by_the_io_time() {
        let fair = runs(&reader_and_cpu("fair")).0;
        let rr = runs(&reader_and_cpu("round-robin")).0;
        let (reader, cpu) = (&fair.workloads[0], &fair.workloads[1]);
        // The IO wait: the device's latency and transfer from the time the read was
        // issued; the same under both schedules.
        let io = (fair.result.io_wait_s * 1e9).round() as u64;
        assert_eq!(fair.result.io_wait_s, rr.result.io_wait_s);
        assert!(io >= 5_000_000, "the read waits its latency: {io}");
        // The read ran first (2.5 µs: the read call and the major fault; 500 ns of it
        // after the IO was issued) and slept the rest of the wait.
        assert_eq!(reader.cpu_ns, Some(2_500));
        assert_eq!(reader.sleep_ns, Some(io - 500));
        assert_eq!(reader.end_ns, Some(2_000 + io));
        // The CPU task ran meanwhile: it ends exactly the IO time earlier than under
        // round robin, where the wait stopped the clock.
        assert_eq!(cpu.cpu_ns, Some(20_000_000));
        assert_eq!(cpu.sleep_ns, Some(0));
        assert_eq!(cpu.end_ns, Some(2_500 + 20_000_000));
        assert_eq!(cpu.end_ns.unwrap() + io, rr.workloads[1].end_ns.unwrap());
    }

    /// A scenario with reclaim, swap, IO sleeps, two CPUs and an exit.
    fn busy(schedule: &str) -> Scenario {
        parse(&format!(
            "seed = 7\nschedule = \"{schedule}\"\n[machine]\nmemory = \"48M\"\ncpus = 2\n\
             [machine.swap]\ndevice = \"ssd\"\nsize = \"64M\"\n\
             [[workload]]\nkind = \"zipf\"\ntarget = \"file\"\npages = \"40M\"\ntheta = 0.8\n\
             accesses = 30000\nexit = true\n\
             [[workload]]\nkind = \"zipf\"\ntarget = \"anon\"\npages = \"32M\"\ntheta = 0.6\n\
             accesses = 60000\nweight = 2\n\
             [[workload]]\nkind = \"uniform\"\ntarget = \"anon\"\npages = \"8M\"\n\
             accesses = 20000\nstart = \"5ms\"\n"
        ))
    }

    #[test]
    fn the_result_does_not_depend_on_how_many_events_go_to_the_simulator_at_once() {
        let s = busy("fair");
        let run =
            |chunk| run_scenario_chunked(&s, &mut RunOptions::default(), None, chunk).unwrap();
        let whole = run(BATCH);
        assert_eq!(whole.result.vmstat.pswpout, 3405);
        assert_eq!(whole.result.io_wait_s, 1.016366864);
        let times: Vec<_> = whole
            .workloads
            .iter()
            .map(|w| (w.cpu_ns, w.end_ns, w.exit_ns))
            .collect();
        assert_eq!(
            times,
            [
                (Some(38_426_503), Some(1_049_312_893), Some(1_049_312_893)),
                (Some(10_653_200), Some(10_696_750), None),
                (Some(2_945_600), Some(7_986_525), None),
            ]
        );
        // No task ran faster than the wall clock since its start (5 ms for the
        // third).
        for (w, start) in whole.workloads.iter().zip([0, 0, 5_000_000]) {
            assert!(w.cpu_ns.unwrap() <= w.end_ns.unwrap() - start, "{w:?}");
        }
        for chunk in [1, 7, 500] {
            assert_eq!(run(chunk), whole, "chunk {chunk}");
        }
        // Run twice: the same bits.
        assert_eq!(run(BATCH), whole);
    }

    #[test]
    fn the_round_robin_default_is_untouched() {
        let a = run_scenario(&busy("round-robin"), &mut RunOptions::default()).unwrap();
        let mut s = busy("round-robin");
        s.schedule = Default::default();
        assert_eq!(run_scenario(&s, &mut RunOptions::default()).unwrap(), a);
        assert!(!s.to_toml_string().contains("schedule"));
        assert!(busy("fair")
            .to_toml_string()
            .contains("schedule = \"fair\""));
    }

    #[test]
    fn tunables_scale_with_the_cpus_as_the_kernel_does() {
        assert_eq!(Tunables::new(1).latency, 6_000_000);
        assert_eq!(Tunables::new(2).latency, 12_000_000);
        assert_eq!(Tunables::new(8).latency, 24_000_000);
        assert_eq!(Tunables::new(64).latency, 24_000_000);
        let t = Tunables::new(1);
        // Above 8 runnable tasks the period is 0.75 ms each.
        assert_eq!(t.slice(1024, 16, 16 * 1024), 750_000);
        assert_eq!(t.slice(1024, 4, 4 * 1024), 1_500_000);
        // Never below the minimum granularity (BASE_SLICE).
        assert_eq!(t.slice(1024, 4, 100 * 1024), 750_000);
    }
}
