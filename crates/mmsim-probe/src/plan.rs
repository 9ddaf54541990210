//! What a scenario needs on the real machine: one region per workload, with the id its
//! events carry, and the check that the probe can execute the scenario faithfully.

use mmsim_core::{Advice, FileId, Sim, VmaId, VmaThpAdvice, PAGE_SIZE};
use mmsim_workloads::{EventStream, Scenario, Sink, Target, WorkloadKind};
use serde::Serialize;

use crate::error::ProbeError;

/// The real object behind one workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Region {
    /// The workload's index in the scenario.
    pub workload: usize,
    /// Its name (as in mmsim's reports).
    pub name: String,
    /// Its kind (`zipf`, `touch`, …).
    pub kind: &'static str,
    /// Its target.
    pub target: Target,
    /// Size in pages (4 KiB).
    pub pages: u64,
    /// The advice in effect (`posix_fadvise` for `file`, `madvise` for mappings).
    pub advice: Advice,
    /// The workload's `thp_advice` (MADV_HUGEPAGE / MADV_NOHUGEPAGE after the
    /// `mmap`), if any.
    pub thp_advice: Option<VmaThpAdvice>,
    /// The write ratio in effect.
    pub write_ratio: f64,
    /// Its phase.
    pub phase: u32,
    /// Its weight.
    pub weight: u32,
    /// What its events name: `vma` (Access events) or `file` (FileRead/FileWrite).
    pub id_kind: &'static str,
    /// The VMA or file id in its events.
    pub id: u32,
    /// The simulator's id of its file (`file`, `mmap`, `mmap-exec`), `None` for `anon`.
    pub sim_file: Option<FileId>,
    /// The name of its real file in `--dir` (`None` for `anon`).
    pub file_name: Option<String>,
    /// `opens = N`: the N open file descriptions its reads take turns on
    /// (`Event::FdRead`), each an `open()` of its own; 0 without `opens`.
    pub opens: u32,
}

impl Region {
    /// Size in bytes.
    pub fn bytes(&self) -> u64 {
        self.pages * PAGE_SIZE
    }

    /// Whether the region is mapped into the probe's address space (anon, mmap,
    /// mmap-exec) rather than read through a descriptor.
    pub fn is_mapped(&self) -> bool {
        self.target != Target::File
    }
}

/// A scenario checked for what the probe can execute, with its regions.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The scenario (validated).
    pub scenario: Scenario,
    /// One region per workload, in workload order.
    pub regions: Vec<Region>,
    /// Region index per VMA id (Access events).
    vma_region: Vec<usize>,
    /// Region index per file id (FileRead/FileWrite events); `usize::MAX` for the files
    /// behind mappings, which no event names.
    file_region: Vec<usize>,
    /// Region index per open file description (`Event::FdRead`/`FdClose`: the
    /// workloads' `opens = N`, [`mmsim_core::Sim::open_file`]), in the order the
    /// setup opened them.
    fd_region: Vec<usize>,
}

/// The real file name of workload `index` named `name`: `mmsim-probe-<index>-<name>.dat`
/// with every character outside `[A-Za-z0-9._-]` replaced by `_` and the name cut to 64
/// bytes, so it is one path component inside `--dir` whatever the scenario says.
pub fn file_name(index: usize, name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    format!("mmsim-probe-{index}-{clean}.dat")
}

impl Plan {
    /// Validates `s` and checks every workload against what the probe executes:
    ///
    /// * kinds `uniform`, `zipf`, `sequential`, `loop`, `hot-cold`, `touch`, and `trace`
    ///   with `pages` given (the region's size: without it the region would be 2^31
    ///   pages);
    /// * any target (`anon`, `file`, `mmap`, `mmap-exec`), advice and write ratio;
    /// * phases, weights, `warmup_events`;
    /// * no `start` (it is compared with the simulated clock, which a real run does not
    ///   have): an error naming `workload[i].start`;
    /// * no program model (`fio`, `kv`, `pgbench`, `dd`, `eater`): their tasks, files and
    ///   mappings are created inside the simulator, which has no way to list them yet;
    /// * `machine.cpus` 1: the probe runs the events on one CPU, one after another;
    /// * the round-robin schedule (no `schedule = "fair"`, whose order follows the
    ///   simulated clock).
    ///
    /// Then builds the event stream once on a scratch simulator to learn the ids the
    /// setup assigns.
    pub fn new(s: &Scenario) -> Result<Plan, ProbeError> {
        s.validate()?;
        // Writes made at simulated times have no counterpart in a real run, which has no
        // simulated clock: refuse them rather than run without them.
        let timed = [
            (
                "cgroup_change",
                s.cgroup_changes.len(),
                "knob writes at a time",
            ),
            ("cgroup_cycle", s.cgroup_cycles.len(), "knob cycles"),
            (
                "cgroup_move",
                s.cgroup_moves.len(),
                "workload moves at a time",
            ),
            (
                "lru_gen_write",
                s.lru_gen_writes.len(),
                "lru_gen file writes at a time",
            ),
            (
                "damon_module_write",
                s.damon_module_writes.len(),
                "DAMON module parameter writes at a time",
            ),
        ];
        if let Some((table, _, what)) = timed.iter().find(|t| t.1 > 0) {
            return Err(ProbeError::Unsupported {
                source_name: s.source.clone(),
                field: format!("{table}[0]"),
                message: format!(
                    "{what} happen at simulated times, which a real run does not have: \
                     remove the [[{table}]] tables (the groups' own knobs in [[cgroup]] are \
                     applied)"
                ),
            });
        }
        let unsupported = |i: usize, field: &str, message: String| ProbeError::Unsupported {
            source_name: s.source.clone(),
            field: format!("workload[{i}].{field}"),
            message,
        };
        for (i, w) in s.workloads.iter().enumerate() {
            match &w.kind {
                WorkloadKind::Uniform { .. }
                | WorkloadKind::Zipf { .. }
                | WorkloadKind::Sequential { .. }
                | WorkloadKind::Loop { .. }
                | WorkloadKind::HotCold { .. }
                | WorkloadKind::Touch { .. } => {}
                WorkloadKind::Trace { pages: None, .. } => {
                    return Err(unsupported(
                        i,
                        "pages",
                        "a trace replay needs `pages` (its region's size) to run for real: \
                         without it the region is 2^31 pages (8 TiB)"
                            .into(),
                    ))
                }
                WorkloadKind::Trace {
                    keys: mmsim_workloads::TraceKeys::Offset,
                    ..
                } if w.target != Target::File => {
                    return Err(unsupported(
                        i,
                        "trace_keys",
                        "mmsim-probe replays an offset trace on `target = \"file\"` only \
                         (one real file, read at the trace's page offsets): use target = \
                         \"file\" or trace_keys = \"dense\""
                            .into(),
                    ))
                }
                WorkloadKind::Trace { .. } => {}
                k => {
                    return Err(unsupported(
                        i,
                        "kind",
                        format!(
                            "kind `{}` is a program model, which mmsim-probe does not execute: \
                             the tasks, files and mappings it creates exist only inside the \
                             simulator; supported kinds: uniform, zipf, sequential, loop, \
                             hot-cold, touch, trace (with pages)",
                            k.name()
                        ),
                    ))
                }
            }
            if let WorkloadKind::Touch { remap: true, .. } = w.kind {
                return Err(unsupported(
                    i,
                    "remap",
                    "mmsim-probe does not run remap (munmap and mmap of the region each \
                     pass) yet: remove it"
                        .into(),
                ));
            }
            if w.start != 0 {
                return Err(unsupported(
                    i,
                    "start",
                    "start times are compared with the simulated clock, which a real run \
                     does not have, so the interleaving could not be reproduced: remove \
                     `start` (or put the workload in a later phase)"
                        .into(),
                ));
            }
        }
        // The fair schedule orders the events by simulated time, which a real run does
        // not have: the probe would run them in the round-robin order instead.
        if s.schedule != mmsim_workloads::Schedule::RoundRobin {
            return Err(ProbeError::Unsupported {
                source_name: s.source.clone(),
                field: "schedule".into(),
                message: "the fair schedule orders the events by simulated time, which a \
                          real run does not have; remove `schedule` (the round robin is \
                          what the probe runs)"
                    .into(),
            });
        }
        // The probe executes the events one after another in one process: a real run of
        // them keeps one CPU busy, whatever the scenario's `cpus` says.
        if s.machine.cpus > 1 {
            return Err(ProbeError::Unsupported {
                source_name: s.source.clone(),
                field: "machine.cpus".into(),
                message: format!(
                    "{} CPUs: the probe runs the events one after another in one process, \
                     on one CPU; set cpus = 1 to compare with the kernel",
                    s.machine.cpus
                ),
            });
        }
        let mut sim = scratch_sim(s)?;
        let stream = EventStream::build(s, &mut sim)?;
        let mut regions = Vec::with_capacity(s.workloads.len());
        let mut vma_region = Vec::new();
        let mut file_region = Vec::new();
        for (i, w) in s.workloads.iter().enumerate() {
            let name = stream.name(i).to_string();
            let (id_kind, id) = match stream.generator(i).sink() {
                Sink::Vma(v) => ("vma", v),
                Sink::File(f) => ("file", f),
            };
            // Each access-pattern workload creates at most one file, in workload order.
            let sim_file = w.target.is_file().then_some(file_region.len() as FileId);
            match (w.target, id_kind) {
                (Target::File, "file") if sim_file == Some(id) => {
                    file_region.push(i);
                }
                (Target::Anon, "vma") if id as usize == vma_region.len() => {
                    vma_region.push(i);
                }
                (Target::Mmap | Target::MmapPrivate | Target::MmapExec, "vma")
                    if id as usize == vma_region.len() =>
                {
                    vma_region.push(i);
                    file_region.push(usize::MAX);
                }
                _ => {
                    return Err(ProbeError::Usage(format!(
                        "internal: workload[{i}] \"{name}\" got {id_kind} id {id}, not what \
                         its setup order implies"
                    )))
                }
            }
            // An offset replay's file is as long as the trace's last referenced page
            // (within `pages`), as the simulator laid it out.
            let pages = match &w.kind {
                WorkloadKind::Trace {
                    keys: mmsim_workloads::TraceKeys::Offset,
                    ..
                } => sim.file_pages(id).unwrap_or(0),
                k => k.pages(),
            };
            regions.push(Region {
                workload: i,
                kind: w.kind.name(),
                target: w.target,
                pages,
                advice: w.effective_advice(),
                thp_advice: w.thp_advice,
                write_ratio: w.effective_write_ratio(),
                phase: w.phase,
                weight: w.weight,
                id_kind,
                id,
                sim_file,
                file_name: w.target.is_file().then(|| file_name(i, &name)),
                opens: 0,
                name,
            });
        }
        // `opens = N`: the descriptors the setup opened, each on its workload's
        // file; the probe opens the same ones.
        let mut fd_region = Vec::with_capacity(sim.nr_fds());
        for fd in 0..sim.nr_fds() as mmsim_core::Fd {
            let r = sim
                .fd_file(fd)
                .and_then(|f| file_region.get(f as usize).copied())
                .filter(|&r| r != usize::MAX)
                .ok_or_else(|| {
                    ProbeError::Usage(format!(
                        "internal: open file description {fd} is not on a file region"
                    ))
                })?;
            regions[r].opens += 1;
            fd_region.push(r);
        }
        if sim.nr_files() != file_region.len() {
            // An offset replay made one file per trace file.
            let i = s
                .workloads
                .iter()
                .position(|w| {
                    matches!(
                        w.kind,
                        WorkloadKind::Trace {
                            keys: mmsim_workloads::TraceKeys::Offset,
                            ..
                        }
                    )
                })
                .unwrap_or(0);
            return Err(unsupported(
                i,
                "trace_keys",
                format!(
                    "the offset replay laid the trace out in {} files; mmsim-probe replays \
                     an offset trace of one file (keys below 2^40) only: use trace_keys = \
                     \"dense\"",
                    sim.nr_files() + 1 - file_region.len()
                ),
            ));
        }
        Ok(Plan {
            scenario: s.clone(),
            regions,
            vma_region,
            file_region,
            fd_region,
        })
    }

    /// A fresh event stream of the scenario: the one `run_scenario` feeds the simulator
    /// (built the same way, on a scratch simulator, so the ids are the same).
    pub fn stream(&self) -> Result<EventStream, ProbeError> {
        let mut sim = scratch_sim(&self.scenario)?;
        Ok(EventStream::build(&self.scenario, &mut sim)?)
    }

    /// The region an Access event's VMA id belongs to.
    pub fn vma_region(&self, vma: VmaId) -> Option<usize> {
        self.vma_region.get(vma as usize).copied()
    }

    /// The region a FileRead/FileWrite event's file id belongs to.
    pub fn file_region(&self, file: FileId) -> Option<usize> {
        self.file_region
            .get(file as usize)
            .copied()
            .filter(|&r| r != usize::MAX)
    }

    /// The region an `FdRead`/`FdClose` event's descriptor reads.
    pub fn fd_region(&self, fd: mmsim_core::Fd) -> Option<usize> {
        self.fd_region.get(fd as usize).copied()
    }

    /// Number of open file descriptions (`opens = N` of every workload).
    pub fn fds(&self) -> usize {
        self.fd_region.len()
    }

    /// Number of VMA ids.
    pub fn vmas(&self) -> usize {
        self.vma_region.len()
    }

    /// Number of file ids.
    pub fn files(&self) -> usize {
        self.file_region.len()
    }

    /// Bytes mapped into the address space (anon and file mappings), and the regions
    /// that add up to it.
    pub fn mapped_bytes(&self) -> (u64, String) {
        sum(self.regions.iter().filter(|r| r.is_mapped()))
    }

    /// Bytes of real files (every target but `anon`), and the regions that add up to it.
    pub fn file_bytes(&self) -> (u64, String) {
        sum(self.regions.iter().filter(|r| r.target.is_file()))
    }

    /// Events the scenario issues, if known up front (see
    /// [`Scenario::expected_events`]).
    pub fn expected_events(&self) -> Option<u64> {
        self.scenario.expected_events()
    }
}

fn sum<'a>(regions: impl Iterator<Item = &'a Region>) -> (u64, String) {
    let mut total = 0u64;
    let mut parts = Vec::new();
    for r in regions {
        total = total.saturating_add(r.bytes());
        parts.push(format!("{} \"{}\" {} bytes", r.target, r.name, r.bytes()));
    }
    (total, parts.join(" + "))
}

/// A simulator only to hand out ids: the scenario's machine (whose size costs nothing
/// until pages are touched).
/// A simulator set up as `run_scenario` sets it up before building the stream: the
/// machine, then the scenario's memory cgroups (workloads name them).
fn scratch_sim(s: &Scenario) -> Result<Sim, ProbeError> {
    let mut sim = Sim::new(s.machine.clone()).map_err(|e| {
        ProbeError::Scenario(mmsim_workloads::WorkloadError::Setup {
            what: "machine".into(),
            source: e,
        })
    })?;
    mmsim_workloads::cgroups::setup(&mut sim, s)?;
    Ok(sim)
}
