//! Memory cgroups in scenarios: parsing, every validation error, knob writes at the
//! right simulated times, percentages of peaks, the workloads' tasks and files charged to
//! their group, the kbuild model, and the seed 004 scenarios: the helpers here, the tests in
//! one submodule per part (`parse`, `errors`, `running`, `kbuild`, `seed_004`).

use mmsim_core::memcg::MemcgKnob;
use mmsim_core::{Event, Sim};
use mmsim_workloads::cgroups::{self, CgroupSpec, KnobValue, KnobWrite, Reference};
use mmsim_workloads::gen::Generator;
use mmsim_workloads::models::kbuild::KbuildSpec;
use mmsim_workloads::{
    embedded_scenario, run_scenario, RunOptions, Scenario, ScenarioResult, WorkloadKind,
};

fn run(s: &Scenario) -> ScenarioResult {
    run_scenario(s, &mut RunOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn parse(text: &str) -> Scenario {
    Scenario::from_toml_str(text, "cg.toml").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

const BASE: &str = r#"
[machine]
memory = "64M"

[[cgroup]]
path = "/a"

[[cgroup]]
path = "/a/b"

[[cgroup]]
path = "/c"

[[workload]]
kind = "uniform"
target = "anon"
pages = "1M"
accesses = 100
cgroup = "/a/b"
"#;

/// (message, field) of the error of BASE with `from` replaced by `to`.
fn err_with(from: &str, to: &str) -> (String, String) {
    assert!(BASE.contains(from), "{from}");
    err(&BASE.replacen(from, to, 1))
}

/// (message, field) of the error of BASE followed by `extra`.
fn err_extra(extra: &str) -> (String, String) {
    err(&format!("{BASE}{extra}"))
}

fn err(text: &str) -> (String, String) {
    match Scenario::from_toml_str(text, "cg.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => (e.to_string(), e.field().unwrap_or("").to_string()),
    }
}

/// Asserts the error names `field` and says every one of `needles`.
fn check(got: (String, String), field: &str, needles: &[&str]) {
    let (msg, f) = got;
    assert_eq!(f, field, "{msg}");
    assert!(msg.starts_with("cg.toml: "), "{msg}");
    assert!(msg.contains(field), "{msg}");
    for n in needles {
        assert!(msg.contains(n), "`{n}` not in: {msg}");
    }
}

mod errors;
mod kbuild;
mod parse;
mod running;
mod seed_004;
