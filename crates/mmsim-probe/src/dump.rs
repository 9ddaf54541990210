//! `--dump`: write a scenario's exact event stream without touching memory, and check a
//! dump against what `run_scenario` feeds the simulator.
//!
//! A dump is a directory:
//!
//! * `events.mmev`: the interleaved stream, every event in order ([`crate::evlog`]);
//! * `workload-<i>-<name>.native`: per workload, its accesses as an mmsim `native` trace
//!   (`mmsim_trace::NativeWriter`; key = page index in the workload's region, write
//!   flag = store or `pwrite`; a read of n pages is n records), readable by `mmsim trace
//!   info` and every trace tool of the project;
//! * `dump.json`: the sidecar ([`DumpInfo`]): format and version, the scenario (name,
//!   seed, its full TOML so the dump stands alone), event counts per kind and per
//!   workload, and per workload its target, size, advice, the id its events carry, the
//!   simulator's file id and the name of its real file in `--dir`.
//!
//! Replaying: the event log *is* the stream; [`verify_dump`] checks it event for event
//! against a fresh `run_scenario` of the scenario. A per-workload native trace replayed
//! by `mmsim run` as a `trace` workload is *not* the same thing: trace replays renumber
//! keys in order of first appearance (`Densifier`), which keeps reuse but loses the
//! spatial layout that readahead and fault-around depend on, and it loses the
//! interleaving. Use the traces for analysis (footprint, reuse distances, miss-ratio
//! curves), the event log for exact replay.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use mmsim_core::Event;
use mmsim_trace::{Format, NativeWriter, Record, TraceReader};
use mmsim_workloads::{run_scenario, Batch, RunOptions, Scenario};
use serde::{Deserialize, Serialize};

use crate::error::ProbeError;
use crate::evlog::{LogReader, LogWriter};
use crate::plan::{Plan, Region};
use crate::EventCounts;

/// Name of the event log in a dump directory.
pub const EVENT_LOG: &str = "events.mmev";
/// Name of the sidecar in a dump directory.
pub const SIDECAR: &str = "dump.json";
/// The sidecar's `format` value.
pub const FORMAT: &str = "mmsim-probe-dump";
/// The sidecar's version.
pub const DUMP_VERSION: u32 = 1;

/// One workload in the sidecar.
#[derive(Clone, Debug, Serialize)]
pub struct DumpWorkload {
    /// Its region (name, kind, target, pages, advice, write ratio, phase, weight, id…).
    #[serde(flatten)]
    pub region: Region,
    /// Events it issued.
    pub events: u64,
    /// Its native trace, relative to the dump directory.
    pub trace: String,
    /// Records in its native trace.
    pub trace_records: u64,
}

/// The sidecar `dump.json`.
#[derive(Clone, Debug, Serialize)]
pub struct DumpInfo {
    /// [`FORMAT`].
    pub format: &'static str,
    /// [`DUMP_VERSION`].
    pub version: u32,
    /// The event log's format version ([`crate::evlog::VERSION`]).
    pub event_log_version: u16,
    /// The scenario's name.
    pub scenario: String,
    /// Where it came from (file path or embedded name).
    pub source: String,
    /// Directory against which its relative trace paths resolve (made absolute).
    pub base_dir: Option<PathBuf>,
    /// The seed.
    pub seed: u64,
    /// `warmup_events` of the scenario.
    pub warmup_events: Option<u64>,
    /// Events in the log.
    pub events: u64,
    /// Of which idle thinks (always 0: the probe rejects start times).
    pub idle_events: u64,
    /// Events per kind.
    pub per_kind: EventCounts,
    /// The event log, relative to the dump directory ([`EVENT_LOG`]).
    pub event_log: String,
    /// Per workload.
    pub workloads: Vec<DumpWorkload>,
    /// The scenario as TOML (`Scenario::to_toml_string`), so the dump stands alone.
    pub scenario_toml: String,
}

/// The part of a sidecar [`verify_dump`] reads.
#[derive(Deserialize)]
struct SidecarHead {
    format: String,
    version: u32,
    scenario: String,
    source: String,
    base_dir: Option<PathBuf>,
    event_log: String,
    scenario_toml: String,
    workloads: Vec<SidecarWorkload>,
}

#[derive(Deserialize)]
struct SidecarWorkload {
    trace: String,
}

/// Writes the dump of `plan`'s scenario into the directory `dir` (created if missing;
/// files of an earlier dump there are overwritten). Touches no memory of the regions and
/// creates no region file: it can run anywhere, outside the memory-limited cgroup.
pub fn dump(plan: &Plan, dir: &Path) -> Result<DumpInfo, ProbeError> {
    std::fs::create_dir_all(dir).map_err(|e| ProbeError::dump_io(dir, e))?;
    let log_path = dir.join(EVENT_LOG);
    let mut log = LogWriter::create(&log_path)?;
    let mut traces = Vec::with_capacity(plan.regions.len());
    for r in &plan.regions {
        let name = trace_name(r);
        let path = dir.join(&name);
        let f = File::create(&path).map_err(|e| ProbeError::dump_io(&path, e))?;
        let w = NativeWriter::new(&path.display().to_string(), BufWriter::new(f))
            .map_err(|e| ProbeError::dump_io(&path, e))?;
        traces.push((name, path, w));
    }
    let mut counts = EventCounts::default();
    let mut idle_events = 0u64;
    let mut stream = plan.stream()?;
    let mut index = 0u64;
    while let Some(batch) = stream.next_batch(0)? {
        let idle = matches!(batch, Batch::Idle(_));
        let events = batch.events();
        log.write_batch(events, idle)?;
        for e in events {
            counts.add(e);
            if idle {
                idle_events += 1;
            }
            for (key, write, region) in records_of(plan, e, index)? {
                let (_, path, w) = &mut traces[region];
                w.write(Record {
                    key,
                    write,
                    cont: false,
                    fault: false,
                    sync: mmsim_trace::SyncSpan::NONE,
                })
                .map_err(|e| ProbeError::dump_io(&*path, e))?;
            }
            index += 1;
        }
    }
    let (_, events) = log.finish()?;
    let mut workloads = Vec::with_capacity(plan.regions.len());
    for (i, (name, path, w)) in traces.into_iter().enumerate() {
        let (out, stats) = w.finish().map_err(|e| ProbeError::dump_io(&path, e))?;
        out.into_inner()
            .map_err(|e| ProbeError::dump_io(&path, e.error()))?;
        workloads.push(DumpWorkload {
            region: plan.regions[i].clone(),
            events: stream.events(i),
            trace: name,
            trace_records: stats.records,
        });
    }
    let s = &plan.scenario;
    let info = DumpInfo {
        format: FORMAT,
        version: DUMP_VERSION,
        event_log_version: crate::evlog::VERSION,
        scenario: s.name.clone(),
        source: s.source.clone(),
        // Absolute, so that the dump can be checked from any directory.
        base_dir: s.base_dir.as_ref().map(|d| {
            let d = if d.as_os_str().is_empty() {
                Path::new(".")
            } else {
                d.as_path()
            };
            std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf())
        }),
        seed: s.seed,
        warmup_events: s.warmup_events,
        events,
        idle_events,
        per_kind: counts,
        event_log: EVENT_LOG.into(),
        workloads,
        scenario_toml: s.to_toml_string(),
    };
    let side = dir.join(SIDECAR);
    let json = serde_json::to_string_pretty(&info).map_err(|e| ProbeError::dump_io(&side, e))?;
    std::fs::write(&side, json + "\n").map_err(|e| ProbeError::dump_io(&side, e))?;
    Ok(info)
}

/// The native trace file name of a region.
fn trace_name(r: &Region) -> String {
    let base = crate::plan::file_name(r.workload, &r.name);
    let stem = base
        .strip_prefix("mmsim-probe-")
        .and_then(|b| b.strip_suffix(".dat"))
        .unwrap_or(&base);
    format!("workload-{stem}.native")
}

/// The native-trace records of event number `index`: (page, write, region) per page; none
/// for a think.
fn records_of(
    plan: &Plan,
    e: &Event,
    index: u64,
) -> Result<impl Iterator<Item = (u64, bool, usize)>, ProbeError> {
    let bad = |m: String| ProbeError::BadEvent { index, message: m };
    let (region, first, pages, write) = match *e {
        Event::Access { vma, index, write } => (
            plan.vma_region(vma)
                .ok_or_else(|| bad(format!("no region has VMA id {vma}")))?,
            index,
            1u16,
            write,
        ),
        Event::FdRead { fd, index, pages } => (
            plan.fd_region(fd)
                .ok_or_else(|| bad(format!("no file region has open file {fd}")))?,
            index,
            pages,
            false,
        ),
        Event::FileRead { file, index, pages } | Event::FileWrite { file, index, pages } => (
            plan.file_region(file)
                .ok_or_else(|| bad(format!("no file region has file id {file}")))?,
            index,
            pages,
            matches!(e, Event::FileWrite { .. }),
        ),
        // A discard touches no page.
        Event::Think { .. }
        | Event::Discard { .. }
        | Event::Collapse { .. }
        | Event::ThpAdvice { .. }
        | Event::Remap { .. }
        // The child's stores are the child's.
        | Event::Fork { .. }
        // A sync writes back what the writes dirtied: no access of its own.
        | Event::FileSync { .. }
        // A close touches no page.
        | Event::FdClose { .. } => (0, 0, 0, false),
    };
    Ok((0..pages as u64).map(move |p| (first as u64 + p, write, region)))
}

/// The result of [`verify_dump`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// The scenario checked.
    pub scenario: String,
    /// Events the simulator was fed (`on_batch`, idle thinks included).
    pub simulator_events: u64,
    /// Events in the dump's log.
    pub dump_events: u64,
    /// Whether the log equals the simulator's stream, event for event.
    pub equal: bool,
    /// Whether every workload's native trace equals its events in the stream.
    pub traces_equal: bool,
    /// The first difference, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<String>,
}

/// Reads a dump's sidecar and returns the scenario it was made from (its TOML, with the
/// original name, source and base directory).
pub fn dumped_scenario(dir: &Path) -> Result<Scenario, ProbeError> {
    Ok(read_sidecar(dir)?.1)
}

fn read_sidecar(dir: &Path) -> Result<(SidecarHead, Scenario), ProbeError> {
    let side = dir.join(SIDECAR);
    let text = std::fs::read_to_string(&side).map_err(|e| ProbeError::dump_io(&side, e))?;
    let head: SidecarHead =
        serde_json::from_str(&text).map_err(|e| ProbeError::dump_io(&side, e))?;
    if head.format != FORMAT || head.version != DUMP_VERSION {
        return Err(ProbeError::dump_io(
            &side,
            format!(
                "format {:?} version {}; this probe reads {FORMAT:?} version {DUMP_VERSION}",
                head.format, head.version
            ),
        ));
    }
    let mut s = Scenario::from_toml_str(&head.scenario_toml, &head.source)?;
    s.name = head.scenario.clone();
    s.base_dir = head.base_dir.clone();
    Ok((head, s))
}

/// Checks the dump in `dir` against the stream [`run_scenario`] feeds the simulator for
/// `scenario` (default: the scenario recorded in the dump): runs the simulation with an
/// `on_batch` observer that compares every event with the next one of the event log, and
/// every access with the next record of its workload's native trace. Streams both sides:
/// memory does not grow with the dump.
///
/// A difference is not an error: it is reported ([`VerifyReport::equal`],
/// [`VerifyReport::first_difference`]). Errors are unreadable dumps and scenarios.
pub fn verify_dump(dir: &Path, scenario: Option<&Scenario>) -> Result<VerifyReport, ProbeError> {
    let (head, recorded) = read_sidecar(dir)?;
    let s = scenario.unwrap_or(&recorded);
    let plan = Plan::new(s)?;
    let log_path = dir.join(&head.event_log);
    let mut log = LogReader::open(&log_path)?;
    if head.workloads.len() != plan.regions.len() {
        return Ok(VerifyReport {
            scenario: s.name.clone(),
            simulator_events: 0,
            dump_events: 0,
            equal: false,
            traces_equal: false,
            first_difference: Some(format!(
                "the dump has {} workloads, the scenario {}",
                head.workloads.len(),
                plan.regions.len()
            )),
        });
    }
    let mut cursors = Vec::with_capacity(head.workloads.len());
    for w in &head.workloads {
        let path = dir.join(&w.trace);
        let reader =
            TraceReader::open(&path, Format::Native).map_err(|e| ProbeError::dump_io(&path, e))?;
        cursors.push(Cursor {
            path,
            reader,
            buf: Vec::new(),
            pos: 0,
        });
    }

    let mut seen = 0u64;
    let mut diff: Option<String> = None;
    let mut trace_diff: Option<String> = None;
    let mut failure: Option<ProbeError> = None;
    let mut observe = |batch: &[Event]| {
        for e in batch {
            let index = seen;
            seen += 1;
            if failure.is_some() {
                continue;
            }
            if diff.is_none() {
                match log.next_record() {
                    Ok(Some(r)) if r.event == *e => {}
                    Ok(Some(r)) => {
                        diff = Some(format!(
                            "event {index}: the simulator got {e:?}, the dump has {:?}",
                            r.event
                        ))
                    }
                    Ok(None) => {
                        diff = Some(format!(
                            "event {index}: the simulator got {e:?}, the dump has ended"
                        ))
                    }
                    Err(err) => failure = Some(err),
                }
            }
            if trace_diff.is_some() {
                continue;
            }
            match records_of(&plan, e, index) {
                Ok(recs) => {
                    for (key, write, region) in recs {
                        let c = &mut cursors[region];
                        match c.next() {
                            Ok(Some(r)) if r.key == key && r.write == write => {}
                            Ok(got) => {
                                trace_diff = Some(format!(
                                    "{}: event {index} ({e:?}) should be record (page {key}, \
                                     write {write}), the trace has {got:?}",
                                    c.path.display()
                                ));
                                break;
                            }
                            Err(err) => {
                                failure = Some(err);
                                break;
                            }
                        }
                    }
                }
                Err(err) => trace_diff = Some(err.to_string()),
            }
        }
    };
    run_scenario(
        s,
        &mut RunOptions {
            progress: None,
            on_batch: Some(&mut observe),
        },
    )?;
    if let Some(e) = failure {
        return Err(e);
    }
    if diff.is_none() {
        match log.next_record()? {
            None => {}
            Some(r) => {
                diff = Some(format!(
                    "the simulator's stream ends after {seen} events; the dump goes on with {:?}",
                    r.event
                ))
            }
        }
    }
    if trace_diff.is_none() {
        for c in &mut cursors {
            if let Some(r) = c.next()? {
                trace_diff = Some(format!(
                    "{}: records left after the stream ended, first {r:?}",
                    c.path.display()
                ));
                break;
            }
        }
    }
    // Count the rest of the log for the report.
    while log.next_record()?.is_some() {}
    let equal = diff.is_none();
    let traces_equal = trace_diff.is_none();
    Ok(VerifyReport {
        scenario: s.name.clone(),
        simulator_events: seen,
        dump_events: log.records(),
        equal,
        traces_equal,
        first_difference: diff.or(trace_diff),
    })
}

/// Reads a native trace record by record.
struct Cursor {
    path: PathBuf,
    reader: TraceReader,
    buf: Vec<Record>,
    pos: usize,
}

impl Cursor {
    fn next(&mut self) -> Result<Option<Record>, ProbeError> {
        if self.pos == self.buf.len() {
            self.pos = 0;
            let n = self
                .reader
                .read_batch(&mut self.buf, 4096)
                .map_err(|e| ProbeError::dump_io(&self.path, e))?;
            if n == 0 {
                return Ok(None);
            }
        }
        self.pos += 1;
        Ok(Some(self.buf[self.pos - 1]))
    }
}
