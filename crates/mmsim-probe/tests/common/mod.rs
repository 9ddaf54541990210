//! Helpers shared by the probe's integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mmsim_core::Event;
use mmsim_workloads::{run_scenario, RunOptions, Scenario};

/// The probe binary.
pub fn probe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mmsim-probe"))
}

/// Runs the probe with `args`; returns its output.
pub fn run_probe(args: &[&str]) -> Output {
    probe().args(args).output().expect("run mmsim-probe")
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Standard output parsed as JSON.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            stderr(o)
        )
    })
}

/// A scenario from TOML text, named `name`.
pub fn scenario(name: &str, toml: &str) -> Scenario {
    Scenario::from_toml_str(toml, &format!("{name}.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// Writes `toml` to `dir/name.toml`.
pub fn write_scenario(dir: &Path, name: &str, toml: &str) -> PathBuf {
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, toml).unwrap();
    p
}

/// Every event `run_scenario` feeds the simulator for `s`, in order.
pub fn simulator_stream(s: &Scenario) -> Vec<Event> {
    let mut events = Vec::new();
    let mut record = |b: &[Event]| events.extend_from_slice(b);
    run_scenario(
        s,
        &mut RunOptions {
            progress: None,
            on_batch: Some(&mut record),
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    events
}

/// A machine header for small scenarios.
pub const MACHINE: &str = "[machine]\nmemory = \"64M\"\n";

/// Spawns the probe with `args` and `--hold hold` (stdout and stderr piped) and
/// waits until it holds: its events are done and `hold` exists.
pub fn spawn_held(args: &[&str], hold: &Path) -> std::process::Child {
    let child = probe()
        .args(args)
        .args(["--hold", hold.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !hold.exists() {
        assert!(t0.elapsed().as_secs() < 60, "the hold file never appeared");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child
}
