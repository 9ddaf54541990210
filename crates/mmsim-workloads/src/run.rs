//! Running a scenario: machine setup, phases, round-robin interleaving, results.

use std::sync::atomic::{AtomicBool, Ordering};

use mmsim_core::{Event, MachineConfig, RunResult, SeriesMarkerKind, Sim};
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;
use crate::gen::{workload_seed, Generator, TraceReport};
use crate::scenario::Scenario;

/// Events handed to [`Sim::run`] at a time.
pub const BATCH: usize = 4096;
/// Events generated ahead per workload when several are interleaved.
pub(crate) const LANE: usize = 512;

/// A callback that sees every batch of events before it runs.
pub type BatchObserver<'a> = &'a mut dyn FnMut(&[Event]);

/// Options of [`run_scenario`].
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Called after every batch with the number of events executed so far (a progress
    /// bar can divide by [`Scenario::expected_events`]).
    pub progress: Option<&'a mut dyn FnMut(u64)>,
    /// Called with every batch of events just before it is executed (to record or check
    /// the event stream); under `schedule = "fair"`, with each run of one workload's
    /// events just after it was executed (the scheduler learns where a run stops only
    /// by running it), and with each idle wait.
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Simulated time, ns, by which its last event had run (within one batch of
    /// events; None in a partial run it did not finish): its elapsed time when it
    /// started at 0.
    pub end_ns: Option<u64>,
    /// Simulated time, ns, at which its tasks exited (`exit = true`; absent otherwise
    /// and in a partial run that stopped before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_ns: Option<u64>,
    /// Under `schedule = "fair"`: the time its events ran, ns (CPU: accesses, faults,
    /// reclaim, lock spin, think time; warmup included). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns: Option<u64>,
    /// Under `schedule = "fair"`: the time it slept, ns (IO waits of reads and
    /// swap-ins, `memory.high` throttling), while the others ran. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sleep_ns: Option<u64>,
}

/// What a scenario run produces: the simulator's [`RunResult`] plus what ran.
///
/// Serialized (JSON) with the `RunResult` fields at the top level (`accesses`, `hits`,
/// `misses`, `miss_ratio`, `vmstat`, `psi`, `runtime_s`, …) next to `scenario`, `seed`,
/// `machine`, `workloads` and `trace`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// The layout of this result's JSON, [`SCHEMA_VERSION`].
    #[serde(default)]
    pub schema_version: u32,
    /// The scenario's name.
    pub scenario: String,
    /// Its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    /// What the result cannot be trusted for: OOM-killed workloads, empty or wholly
    /// skipped traces, settings the run ignored ([`crate::warnings`]). Empty when the
    /// result is whole.
    pub warnings: Vec<String>,
    /// The most heap the whole process held (simulator, generators, trace key maps,
    /// buffers), bytes; set by a caller that counts its allocations (the CLI), else
    /// absent. Host-dependent, like `sim_heap_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_heap_peak_bytes: Option<u64>,
    /// A sampled run's rate, scale and estimates ([`crate::sample`]); absent for a
    /// whole run. The counters above are then the sample's times `1 / rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<crate::sample::SampleReport>,
}

/// Version of the JSON layout of [`ScenarioResult`] (and of the CLI's other JSON
/// outputs, which carry the same `schema_version` key). Raised when a field is
/// removed, renamed or changes meaning; fields may be added without raising it.
pub const SCHEMA_VERSION: u32 = 1;

pub(crate) struct Lane {
    pub(crate) gen: Generator,
    pub(crate) buf: Vec<Event>,
    pub(crate) pos: usize,
    pub(crate) events: u64,
    /// Simulated time before which the lane issues nothing (`start`), ns.
    pub(crate) start: u64,
    /// Events per turn (`weight`; the CFS load weight under `schedule = "fair"`).
    pub(crate) weight: u32,
    /// Its phase.
    pub(crate) phase: u32,
    /// Its generator is exhausted: dropped from `live` at the end of the round.
    finished: bool,
}

impl Lane {
    /// One turn of the round robin: up to `weight` events into `out`. False once the
    /// generator is exhausted (the lane is then [`finish`](Self::finish)ed; the events
    /// of this turn stay in `out`).
    fn take_turn(&mut self, out: &mut Vec<Event>) -> Result<bool, WorkloadError> {
        for _ in 0..self.weight {
            if self.pos == self.buf.len() {
                self.buf.clear();
                self.pos = 0;
                if self.gen.fill(&mut self.buf, LANE)? == 0 {
                    self.finish();
                    return Ok(false);
                }
            }
            out.push(self.buf[self.pos]);
            self.pos += 1;
            self.events += 1;
        }
        Ok(true)
    }

    /// Marks the lane exhausted and frees its buffer, so that a scenario of many
    /// short workloads holds buffers only for the lanes still running.
    pub(crate) fn finish(&mut self) {
        self.finished = true;
        self.buf = Vec::new();
    }
}

/// Removes the finished lanes from `live`, keeping the round-robin order of the rest:
/// one pass per round, where removing each finished lane in place (`Vec::remove`)
/// made a scenario of many short workloads quadratic.
fn drop_finished(live: &mut Vec<usize>, lanes: &[Lane]) {
    live.retain(|&i| !lanes[i].finished);
}

/// One batch of [`EventStream::next_batch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batch<'a> {
    /// Workload events (never empty), in the order the machine executes them. Counted:
    /// in the workloads' event counts, the progress count and `warmup_events`.
    Events(&'a [Event]),
    /// An idle wait: one `Event::Think` that advances the clock to the earliest
    /// [`start`](crate::WorkloadSpec::start) of the phase's waiting workloads, issued when
    /// every unfinished workload of the phase is waiting. Counted as no workload's event.
    Idle(&'a [Event]),
}

impl<'a> Batch<'a> {
    /// The events of the batch, whichever kind it is.
    pub fn events(self) -> &'a [Event] {
        match self {
            Batch::Events(e) | Batch::Idle(e) => e,
        }
    }
}

/// The event stream of a scenario: its workloads' generators, interleaved phase by phase
/// and round-robin within a phase, handed out in batches. The one implementation of the
/// interleaving: [`run_scenario`] feeds it to the simulator, and other consumers (e.g.
/// `mmsim-probe`, which executes the same events on the real kernel, or dumps them) get
/// exactly the same sequence.
///
/// Rules (as documented on [`run_scenario`]): phases run in increasing order; within a
/// phase the live workloads take turns, `weight` events each, in workload order, until
/// all are finished; a batch holds up to [`BATCH`] events (a round is never split, so a
/// batch may exceed `BATCH` by less than the sum of the weights). A workload with a
/// [`start`](crate::WorkloadSpec::start) after the clock (the `now` passed to
/// [`next_batch`](EventStream::next_batch)) sits the rounds out until a round begins at
/// or after its start; while one waits, every batch is a single round. When all
/// unfinished workloads of the phase wait, the batch is a [`Batch::Idle`] think to the
/// earliest start. Without start times the stream does not depend on `now` at all.
///
/// The sequence is a pure function of the scenario (seed included) and of the ids the
/// setup assigned (see [`EventStream::build`]); the batch boundaries are too.
pub struct EventStream {
    pub(crate) lanes: Vec<Lane>,
    names: Vec<String>,
    /// The phases in increasing order; `phases[next_phase..]` are still to run.
    pub(crate) phases: Vec<u32>,
    pub(crate) next_phase: usize,
    /// Lanes of the current phase not finished yet, in workload order.
    pub(crate) live: Vec<usize>,
    out: Vec<Event>,
    idle: [Event; 1],
    /// Each workload's task ids (set by [`EventStream::build`]).
    tasks: Vec<std::ops::Range<mmsim_core::TaskId>>,
    /// When each workload's last event had run (see [`EventStream::ended_ns`]).
    pub(crate) ended: Vec<Option<u64>>,
    /// Workloads whose last event is in the batch handed out last.
    pending_end: Vec<usize>,
    /// The latest `start` of the current phase's lanes, ns.
    latest_start: u64,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("workloads", &self.names)
            .field("phase", &self.phase())
            .field("live", &self.live)
            .finish_non_exhaustive()
    }
}

impl EventStream {
    /// Creates, in `sim`, every workload's task and region (or a model's tasks, files and
    /// mappings) in workload order, opening traces up front (relative paths against
    /// [`Scenario::base_dir`]), and returns the stream of their events. Workload `i` is
    /// named [`display_name(i)`](crate::WorkloadSpec::display_name) and draws from the
    /// random stream [`workload_seed`]`(s.seed, i)`.
    ///
    /// `s` must be valid ([`Scenario::validate`]; `run_scenario` checks it first).
    /// Building on a fresh [`Sim`] assigns the same ids as `run_scenario` does: file and
    /// VMA ids are handed out in setup order, starting at 0.
    pub fn build(s: &Scenario, sim: &mut Sim) -> Result<EventStream, WorkloadError> {
        let mut gens = Vec::with_capacity(s.workloads.len());
        let mut tasks = Vec::with_capacity(s.workloads.len());
        for (i, w) in s.workloads.iter().enumerate() {
            let name = w.display_name(i);
            let what = format!("workload[{i}] \"{name}\"");
            let first = sim.nr_tasks();
            gens.push(Generator::build(
                sim,
                w,
                &name,
                workload_seed(s.seed, i),
                &what,
                s.base_dir.as_deref(),
            )?);
            if let Some(spec) = &s.sample {
                let g = gens.last_mut().expect("just pushed");
                let mut sampler = crate::sample::PageSampler::new(spec, w.target, &s.machine);
                // The files of the descriptors so far (`opens`), so that their
                // reads are sampled by file and page as `FileRead`s are.
                sampler.set_fd_files(
                    (0..sim.nr_fds() as u32)
                        .filter_map(|fd| sim.fd_file(fd))
                        .collect(),
                );
                g.sample(sampler);
            }
            tasks.push(first..sim.nr_tasks());
        }
        let mut stream = EventStream::new(s, gens);
        stream.tasks = tasks;
        Ok(stream)
    }

    /// The stream of `s`'s workloads from generators already built (one per workload, in
    /// order; e.g. with [`Generator::new`] on sinks of one's own). The weights, phases
    /// and start times are the scenario's.
    ///
    /// # Panics
    ///
    /// If the number of generators differs from the number of workloads.
    pub fn new(s: &Scenario, generators: Vec<Generator>) -> EventStream {
        assert_eq!(
            generators.len(),
            s.workloads.len(),
            "one generator per workload"
        );
        let lanes: Vec<Lane> = generators
            .into_iter()
            .zip(&s.workloads)
            .map(|(gen, w)| Lane {
                gen,
                // Grown by the first fill, up to LANE: a workload of 100 events
                // never holds a buffer of 512.
                buf: Vec::new(),
                pos: 0,
                events: 0,
                start: w.start,
                weight: w.weight,
                phase: w.phase,
                finished: false,
            })
            .collect();
        let mut phases: Vec<u32> = s.workloads.iter().map(|w| w.phase).collect();
        phases.sort_unstable();
        phases.dedup();
        let names = s
            .workloads
            .iter()
            .enumerate()
            .map(|(i, w)| w.display_name(i))
            .collect();
        EventStream {
            out: Vec::with_capacity(BATCH + lanes.iter().map(|l| l.weight as usize).sum::<usize>()),
            lanes,
            names,
            phases,
            next_phase: 0,
            live: Vec::new(),
            idle: [Event::Think { ns: 0 }],
            tasks: Vec::new(),
            ended: vec![None; s.workloads.len()],
            pending_end: Vec::new(),
            latest_start: 0,
        }
    }

    /// The simulated time by which workload `i`'s last event had run: the clock given
    /// to the first [`next_batch`](Self::next_batch) call after the batch holding that
    /// event (so later than the event by at most the rest of its batch, at most
    /// [`BATCH`] events of the other workloads). None while it still has events.
    pub fn ended_ns(&self, i: usize) -> Option<u64> {
        self.ended.get(i).copied().flatten()
    }

    /// The task ids of each workload, in workload order (empty ranges for a stream made
    /// with [`EventStream::new`], which does not see the tasks created).
    pub fn tasks(&self) -> &[std::ops::Range<mmsim_core::TaskId>] {
        &self.tasks
    }

    /// Whether workload `i`'s generator is exhausted: every event it issued was in
    /// a batch already handed out.
    pub fn is_finished(&self, i: usize) -> bool {
        self.lanes[i].finished
    }

    /// The next batch, given the current time `now` (ns; the simulator's clock, which
    /// only matters for workloads with a `start`), or `None` once every workload is
    /// finished. Never an empty batch.
    ///
    /// A generator's error (a trace that fails to read) is returned as it happens; the
    /// events generated before it in the same batch are dropped, and the stream should
    /// not be used further.
    pub fn next_batch(&mut self, now: u64) -> Result<Option<Batch<'_>>, WorkloadError> {
        loop {
            // Every event handed out before this call has run by `now`; a lane found
            // empty in an earlier round of this call added nothing since.
            for i in self.pending_end.drain(..) {
                self.ended[i] = Some(now);
            }
            if self.live.is_empty() {
                let Some(&phase) = self.phases.get(self.next_phase) else {
                    return Ok(None);
                };
                self.next_phase += 1;
                self.live = (0..self.lanes.len())
                    .filter(|&i| self.lanes[i].phase == phase)
                    .collect();
                self.latest_start = self
                    .live
                    .iter()
                    .map(|&i| self.lanes[i].start)
                    .max()
                    .unwrap_or(0);
                continue;
            }
            let EventStream {
                lanes,
                live,
                out,
                pending_end,
                latest_start,
                ..
            } = self;
            out.clear();
            // Once the clock passed the phase's latest start, no lane waits: the scan
            // (one per batch) is skipped.
            let waiting = if now >= *latest_start {
                None
            } else {
                live.iter()
                    .map(|&i| lanes[i].start)
                    .filter(|&t| t > now)
                    .min()
            };
            if let Some(next) = waiting {
                // Some lane waits for its start: one round of the started lanes, or an
                // idle wait for the earliest start if none has started.
                let mut any = false;
                for &i in live.iter() {
                    let lane = &mut lanes[i];
                    if lane.start > now {
                        continue;
                    }
                    any = true;
                    if !lane.take_turn(out)? {
                        pending_end.push(i);
                    }
                }
                drop_finished(live, lanes);
                if !any {
                    self.idle = [Event::Think { ns: next - now }];
                    return Ok(Some(Batch::Idle(&self.idle)));
                }
                if out.is_empty() {
                    continue;
                }
            } else if live.len() == 1 {
                let lane = &mut lanes[live[0]];
                out.extend_from_slice(&lane.buf[lane.pos..]);
                lane.pos = lane.buf.len();
                let room = BATCH - out.len();
                lane.gen.fill(out, room)?;
                lane.events += out.len() as u64;
                if out.is_empty() {
                    lane.finish();
                    pending_end.append(live);
                    continue;
                }
            } else {
                while out.len() < BATCH && !live.is_empty() {
                    for &i in live.iter() {
                        if !lanes[i].take_turn(out)? {
                            pending_end.push(i);
                        }
                    }
                    drop_finished(live, lanes);
                }
                if out.is_empty() {
                    continue;
                }
            }
            return Ok(Some(Batch::Events(&self.out)));
        }
    }

    /// The phase being run (`None` before the first batch and after the last).
    pub fn phase(&self) -> Option<u32> {
        if self.live.is_empty() {
            None
        } else {
            Some(self.phases[self.next_phase - 1])
        }
    }

    /// Number of workloads.
    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    /// Whether the scenario has no workloads.
    pub fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    /// Workload `i`'s name (as in reports).
    pub fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    /// Events workload `i` has issued so far (into [`Batch::Events`] handed out).
    pub fn events(&self, i: usize) -> u64 {
        self.lanes[i].events
    }

    /// Workload `i`'s generator (e.g. for its [`sink`](Generator::sink)).
    pub fn generator(&self, i: usize) -> &Generator {
        &self.lanes[i].gen
    }

    /// What each trace replay read so far, in workload order (empty without trace
    /// workloads).
    pub fn trace_reports(&self) -> Vec<TraceReport> {
        self.lanes
            .iter()
            .zip(&self.names)
            .filter_map(|(lane, name)| lane.gen.trace_report(name))
            .collect()
    }

    /// In a sampled run: the events offered to the samplers (before sampling, `Think`
    /// excluded) and each workload's sampled block in pages (None: not sampled).
    pub fn sample_stats(&self) -> Option<(u64, Vec<u32>)> {
        let mut offered = 0;
        let mut blocks = Vec::with_capacity(self.lanes.len());
        for lane in &self.lanes {
            let s = lane.gen.sampler()?;
            offered += s.offered();
            blocks.push(s.block_pages());
        }
        Some((offered, blocks))
    }
}

/// Runs `s`: validates it, builds the machine, creates every workload's task and region
/// in workload order (opening traces up front, so a missing file fails before anything
/// runs), then runs the phases in increasing order. Within a phase the workloads are
/// interleaved round-robin, `weight` events from each live workload in turn, until all are
/// finished. Events go to [`Sim::run`] in batches of [`BATCH`]. The events and their
/// order come from an [`EventStream`].
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

/// Marks the start of a new phase on the time series (`Sim::series_mark_at`) at `t0`,
/// the clock before the batch that began it, if the stream moved to a new phase.
/// Schedules the scenario's `[[damon_module_write]]` tables
/// (`Sim::schedule_damon_module_writes`).
fn schedule_damon_module_writes(sim: &mut Sim, s: &Scenario) -> Result<(), WorkloadError> {
    let mut writes = Vec::with_capacity(s.damon_module_writes.len());
    for (i, w) in s.damon_module_writes.iter().enumerate() {
        let m = mmsim_core::DamonModule::parse(&w.module).map_err(|e| WorkloadError::Setup {
            what: format!("damon_module_write[{i}].module"),
            source: mmsim_core::SimError::Setup(e),
        })?;
        writes.push((w.at, m, w.param.clone(), w.value.clone()));
    }
    sim.schedule_damon_module_writes(&writes)
        .map_err(|(i, source)| WorkloadError::Setup {
            what: format!("damon_module_write[{i}]"),
            source,
        })
}

/// Exits workload `i`'s tasks ([`Sim::exit_task`]).
pub(crate) fn exit_workload(
    sim: &mut Sim,
    stream: &EventStream,
    i: usize,
) -> Result<(), WorkloadError> {
    for t in stream.tasks()[i].clone() {
        sim.exit_task(t).map_err(|source| WorkloadError::Setup {
            what: format!("workload[{i}] exit"),
            source,
        })?;
    }
    Ok(())
}

/// Exits the tasks of every finished workload with `exit = true` not exited yet
/// ([`Sim::exit_task`]), noting the time in `exited`.
fn exit_finished(
    sim: &mut Sim,
    s: &Scenario,
    stream: &EventStream,
    exited: &mut [Option<u64>],
) -> Result<(), WorkloadError> {
    for (i, w) in s.workloads.iter().enumerate() {
        if !w.exit || exited[i].is_some() || !stream.is_finished(i) {
            continue;
        }
        exit_workload(sim, stream, i)?;
        exited[i] = Some(sim.now());
    }
    Ok(())
}

fn mark_phase(sim: &mut Sim, stream: &EventStream, phase: &mut Option<u32>, t0: u64) {
    if stream.phase() != *phase {
        *phase = stream.phase();
        if let Some(p) = *phase {
            sim.series_mark_at(t0, SeriesMarkerKind::PhaseStart, None, format!("phase {p}"));
        }
    }
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
    run_scenario_chunked(s, opts, cancel, BATCH)
}

/// [`run_scenario_cancellable`] handing the simulator at most `chunk` events at a time
/// under `schedule = "fair"` (its result does not depend on `chunk`: tested).
pub(crate) fn run_scenario_chunked(
    s: &Scenario,
    opts: &mut RunOptions<'_>,
    cancel: Option<&AtomicBool>,
    chunk: usize,
) -> Result<ScenarioResult, WorkloadError> {
    s.validate()?;
    // A sampled run simulates the scaled scenario (`crate::sample`).
    let scaled;
    let s = match &s.sample {
        Some(spec) => {
            scaled = crate::sample::scaled(s, spec)?;
            &scaled
        }
        None => s,
    };
    let mut sim = Sim::new(s.machine.clone()).map_err(|source| WorkloadError::Setup {
        what: "machine".into(),
        source,
    })?;
    // `MMSIM_PERMUTE_FOLIO_IDS` set (any value; its bytes seed the order):
    // folio ids are handed out in a permuted order and reused at random
    // (`Sim::permute_folio_ids`), a test that no result depends on them
    // (the CLI test `id_order.rs` compares such runs with plain ones).
    let permute_ids = std::env::var_os("MMSIM_PERMUTE_FOLIO_IDS").is_some_and(|v| {
        let seed = v
            .as_encoded_bytes()
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
        sim.permute_folio_ids(seed);
        true
    });
    crate::cgroups::setup(&mut sim, s)?;
    for (i, w) in s.lru_gen_writes.iter().enumerate() {
        sim.schedule_lru_gen_write(w.at, w.path(), &w.write)
            .map_err(|source| WorkloadError::Setup {
                what: format!("lru_gen_write[{i}]"),
                source,
            })?;
    }
    schedule_damon_module_writes(&mut sim, s)?;
    let mut stream = EventStream::build(s, &mut sim)?;
    crate::cgroups::schedule_moves(&mut sim, s, stream.tasks())?;
    let mut done = 0u64;
    let mut partial = false;
    let mut phase = None;
    let mut exited: Vec<Option<u64>> = vec![None; s.workloads.len()];
    let exits = s.workloads.iter().any(|w| w.exit);
    let fair = s.schedule == crate::scenario::Schedule::Fair;
    let mut times = vec![crate::fair::TaskTimes::default(); s.workloads.len()];
    if fair {
        (done, partial) = crate::fair::run(
            &mut sim,
            s,
            &mut stream,
            opts,
            cancel,
            &mut exited,
            &mut times,
            chunk,
        )?;
    }
    loop {
        if fair {
            break;
        }
        // A batch is of one phase: a new phase starts at the clock before its first batch.
        let t0 = sim.now();
        let Some(batch) = stream.next_batch(t0)? else {
            break;
        };
        let out = match batch {
            Batch::Idle(idle) => {
                if let Some(f) = opts.on_batch.as_mut() {
                    f(idle);
                }
                for e in idle {
                    if let mmsim_core::Event::Think { ns } = *e {
                        sim.idle(ns);
                    }
                }
                mark_phase(&mut sim, &stream, &mut phase, t0);
                continue;
            }
            Batch::Events(out) => out,
        };
        if let Some(f) = opts.on_batch.as_mut() {
            f(out);
        }
        match s.warmup_events {
            Some(w) if done < w && done + out.len() as u64 >= w => {
                let k = (w - done) as usize;
                sim.run(&out[..k]);
                sim.begin_measurement();
                sim.run(&out[k..]);
            }
            _ => sim.run(out),
        }
        done += out.len() as u64;
        if permute_ids {
            sim.shuffle_free_folio_ids();
        }
        if exits {
            exit_finished(&mut sim, s, &stream, &mut exited)?;
        }
        mark_phase(&mut sim, &stream, &mut phase, t0);
        if let Some(p) = opts.progress.as_mut() {
            p(done);
        }
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            partial = true;
            break;
        }
    }

    if exits && !partial {
        exit_finished(&mut sim, s, &stream, &mut exited)?;
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
    // `MMSIM_CHECK_GAUGES` set: the gauges the machine keeps as state changes
    // are compared with the walks over every folio they replace (the results
    // digest test sets it, so every digest scenario checks them).
    if std::env::var_os("MMSIM_CHECK_GAUGES").is_some() {
        sim.check_gauges().map_err(|m| WorkloadError::Setup {
            what: "MMSIM_CHECK_GAUGES".into(),
            source: mmsim_core::SimError::Setup(m),
        })?;
    }
    let result = sim.finish();
    let workloads = s
        .workloads
        .iter()
        .enumerate()
        .map(|(i, w)| WorkloadReport {
            name: stream.name(i).to_string(),
            kind: w.kind.name().to_string(),
            target: w.target_name().to_string(),
            phase: w.phase,
            pages: w.kind.pages(),
            events: stream.events(i),
            end_ns: stream.ended_ns(i),
            exit_ns: exited[i],
            cpu_ns: fair.then_some(times[i].cpu_ns),
            sleep_ns: fair.then_some(times[i].sleep_ns),
        })
        .collect();
    let trace = stream.trace_reports();
    let mut result = result;
    let sample = match (&s.sample, stream.sample_stats()) {
        (Some(spec), Some((offered, block_pages))) => {
            let rate = spec.effective_rate();
            let sample_ratio = result.miss_ratio;
            let adj = if offered == 0 {
                0.0
            } else {
                (result.access.misses as f64 / (rate * offered as f64)).clamp(0.0, 1.0)
            };
            crate::sample::scale_result(&mut result, rate);
            // SHARDS_adj: the accesses are the ones offered (exact); the misses the
            // sample's scaled; the difference between the sample's size and `R ×` the
            // offered accesses goes to the hits (§4.3 of the paper).
            let a = &mut result.access;
            a.accesses = offered;
            a.misses = a.misses.min(offered);
            a.hits = offered - a.misses;
            result.miss_ratio = adj;
            Some(crate::sample::SampleReport {
                rate,
                scale: 1.0 / rate,
                block_pages,
                events_offered: offered,
                events_kept: done,
                miss_ratio_sample: sample_ratio,
                miss_ratio_adj: adj,
                note: crate::sample::note(spec.rate),
            })
        }
        _ => None,
    };
    let mut r = ScenarioResult {
        schema_version: SCHEMA_VERSION,
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
        warnings: Vec::new(),
        host_heap_peak_bytes: None,
        sample,
    };
    r.warnings = crate::warnings::result_warnings(s, &r);
    if let Some(x) = &r.sample {
        r.warnings.insert(0, x.note.clone());
    }
    Ok(r)
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
    fn the_stream_is_what_run_scenario_feeds_the_simulator() {
        let mut s = scenario(None);
        s.workloads[1].phase = 0;
        s.workloads[1].weight = 3;
        let mut fed = Vec::new();
        let mut record = |b: &[Event]| fed.extend_from_slice(b);
        let r = run_scenario(
            &s,
            &mut RunOptions {
                progress: None,
                on_batch: Some(&mut record),
            },
        )
        .unwrap();
        let mut sim = Sim::new(s.machine.clone()).unwrap();
        let mut stream = EventStream::build(&s, &mut sim).unwrap();
        assert_eq!(stream.phase(), None);
        let mut got = Vec::new();
        while let Some(b) = stream.next_batch(0).unwrap() {
            let Batch::Events(e) = b else {
                panic!("no start times: no idle batch")
            };
            assert!(!e.is_empty() && e.len() < BATCH + 4);
            got.extend_from_slice(e);
        }
        assert_eq!(stream.phase(), None);
        assert_eq!(got, fed);
        assert_eq!(stream.events(0) + stream.events(1), r.events);
        assert_eq!(stream.events(1), r.workloads[1].events);
        assert!(stream.next_batch(0).unwrap().is_none());
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
