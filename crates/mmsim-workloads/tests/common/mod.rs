//! Helpers shared by the workloads' model test files: a small machine, the events a
//! workload generates, whole scenario runs (recorded or not) and event constructors.
#![allow(dead_code)] // not every test binary uses every helper

use mmsim_core::{Event, MachineConfig, Sim, Size};
use mmsim_workloads::gen::{workload_seed, Generator};
use mmsim_workloads::models::fio::FioSpec;
use mmsim_workloads::{
    run_scenario, RunOptions, Scenario, ScenarioResult, WorkloadKind, WorkloadSpec,
};

/// The machine of the model tests: 256 MiB, defaults otherwise.
pub fn machine() -> MachineConfig {
    MachineConfig {
        memory: Size(256 << 20),
        ..MachineConfig::default()
    }
}

/// All events of one workload built on a fresh machine, with the machine.
pub fn events_of(spec: &WorkloadSpec, seed: u64) -> (Vec<Event>, Sim) {
    let mut sim = Sim::new(machine()).unwrap();
    let mut g = Generator::build(&mut sim, spec, "w", seed, "test", None).unwrap();
    let mut out = Vec::new();
    while g.fill(&mut out, 1000).unwrap() > 0 {}
    (out, sim)
}

pub fn all(spec: &WorkloadSpec) -> Vec<Event> {
    events_of(spec, workload_seed(1, 0)).0
}

pub fn run(s: &Scenario) -> ScenarioResult {
    run_scenario(s, &mut RunOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `s`, recording every event handed to the simulator.
pub fn run_recorded(s: &Scenario) -> (ScenarioResult, Vec<Event>) {
    let mut events = Vec::new();
    let mut record = |b: &[Event]| events.extend_from_slice(b);
    let r = run_scenario(
        s,
        &mut RunOptions {
            on_batch: Some(&mut record),
            ..RunOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    (r, events)
}

pub fn read(file: u32, index: u32, pages: u16) -> Event {
    Event::FileRead { file, index, pages }
}

pub fn write(file: u32, index: u32, pages: u16) -> Event {
    Event::FileWrite { file, index, pages }
}

pub fn access(vma: u32, index: u32, write: bool) -> Event {
    Event::Access { vma, index, write }
}

pub fn fio(f: FioSpec) -> WorkloadSpec {
    WorkloadSpec::model(WorkloadKind::Fio(f))
}
