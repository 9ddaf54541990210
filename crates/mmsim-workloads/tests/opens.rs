//! `opens = N` on a `file` workload (issue #15 stage B): N open file descriptions,
//! each with its own readahead state, read round-robin, through the scenario path.

use mmsim_core::Event;
use mmsim_workloads::gen::Generator;
use mmsim_workloads::{run_scenario, RunOptions, Scenario, ScenarioResult};

fn scenario(opens: &str, advice: &str) -> Scenario {
    let text = format!(
        "seed = 1\n[machine]\nmemory = \"64M\"\n[[workload]]\nkind = \"uniform\"\n\
         target = \"file\"\npages = 8000\naccesses = 20000\n{opens}\n{advice}\n"
    );
    Scenario::from_toml_str(&text, "opens.toml").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run(s: &Scenario) -> ScenarioResult {
    run_scenario(s, &mut RunOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn counters(r: &ScenarioResult) -> (u64, u64, u64) {
    (
        r.result.access.misses,
        r.result.access.file_pages_read,
        r.result.access.hits,
    )
}

#[test]
fn two_opens_read_ahead_and_miss_otherwise_than_one() {
    // One `read()` state for the file (no `opens`), one open, and two opens that
    // take turns: each of the two windows sees every other random read.
    let none = run(&scenario("", ""));
    let one = run(&scenario("opens = 1", ""));
    let two = run(&scenario("opens = 2", ""));
    assert_eq!(counters(&none), (5109, 7975, 14891));
    // One open is the same `struct file` model as the file's `read()` state.
    assert_eq!(counters(&one), counters(&none));
    assert_eq!(counters(&two), (5120, 7973, 14880));
    assert_eq!(none.result.access.accesses, 20000);
    assert_eq!(two.result.access.accesses, 20000);
}

#[test]
fn opens_route_reads_round_robin_and_keep_writes() {
    let text = "seed = 1\n[machine]\nmemory = \"64M\"\n[[workload]]\nkind = \"sequential\"\n\
                target = \"file\"\npages = 6\npasses = 1\nwrite_ratio = 0.5\nopens = 3\n";
    let s = Scenario::from_toml_str(text, "rr.toml").unwrap();
    let mut sim = mmsim_core::Sim::new(s.machine.clone()).unwrap();
    let mut g = Generator::build(&mut sim, &s.workloads[0], "rr", 1, "rr", None).unwrap();
    assert_eq!(sim.nr_fds(), 3);
    let mut out = Vec::new();
    g.fill(&mut out, 100).unwrap();
    let mut next_fd = 0;
    for (i, e) in out.iter().enumerate() {
        match *e {
            Event::FdRead { fd, index, pages } => {
                assert_eq!((fd, index, pages), (next_fd, i as u32, 1));
                next_fd = (next_fd + 1) % 3;
            }
            Event::FileWrite { file, index, .. } => assert_eq!((file, index), (0, i as u32)),
            e => panic!("unexpected {e:?}"),
        }
    }
    assert!(out.iter().any(|e| matches!(e, Event::FileWrite { .. })));
}

#[test]
fn sequential_advice_reaches_every_open() {
    // `advice` is given to each descriptor: FADV_SEQUENTIAL doubles each one's
    // window, so fewer sync misses than `normal` on a loop over a large file.
    let s = |advice: &str| {
        let text = format!(
            "seed = 1\n[machine]\nmemory = \"64M\"\n[[workload]]\nkind = \"loop\"\n\
             target = \"file\"\npages = 20000\niterations = 2\nopens = 3\n{advice}\n"
        );
        Scenario::from_toml_str(&text, "adv.toml").unwrap()
    };
    let normal = run(&s(""));
    let seq = run(&s("advice = \"sequential\""));
    assert_eq!(normal.result.access.misses, 306);
    assert_eq!(seq.result.access.misses, 4);
}

#[test]
fn opens_out_of_range_or_off_a_file_are_errors() {
    let err = |extra: &str, target: &str| {
        let text = format!(
            "seed = 1\n[[workload]]\nkind = \"uniform\"\ntarget = \"{target}\"\npages = 10\n\
             accesses = 10\n{extra}\n"
        );
        Scenario::from_toml_str(&text, "bad.toml")
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err("opens = 0", "file"),
        "bad.toml: workload[0].opens: 0 is out of range [1, 1024]"
    );
    assert_eq!(
        err("opens = 1025", "file"),
        "bad.toml: workload[0].opens: 1025 is out of range [1, 1024]"
    );
    assert_eq!(
        err("opens = 2", "mmap"),
        "bad.toml: workload[0].opens: opens are descriptors read with read(): they need \
         target = \"file\" and an access-pattern kind (not a trace replay)"
    );
}
