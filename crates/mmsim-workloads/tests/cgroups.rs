//! Memory cgroups in scenarios: parsing, every validation error, knob writes at the
//! right simulated times, percentages of peaks, the workloads' tasks and files charged to
//! their group, the kbuild model, and the seed 004 scenarios.

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

// ---- parsing ---------------------------------------------------------------------------

#[test]
fn groups_changes_and_cycles_parse() {
    let s = parse(&format!(
        "{BASE}
[[cgroup]]
path = \"/v1\"
version = \"v1\"
max = \"16M\"
soft_limit = 0
swappiness = 100

[[cgroup]]
path = \"/v2\"
version = \"v2\"
max = \"max\"
high = \"1000p\"
low = \"0M\"
min = \"4K\"

[[cgroup_change]]
at = \"1.5s\"
path = \"/v1\"
max = \"12M\"
swappiness = 0

[[cgroup_cycle]]
path = \"/v2\"
knob = \"high\"
values = [\"75%\", \"200%\"]
durations = [\"1s\", \"10s\"]
of = \"100M\"
start = \"2s\"
until = \"60s\"
final = \"max\"
"
    ));
    assert_eq!(s.cgroups.len(), 5);
    let v1 = &s.cgroups[3];
    assert_eq!(v1.max, Some(KnobValue::Pages(4096)));
    assert_eq!(v1.soft_limit, Some(KnobValue::Number(0)));
    assert_eq!(v1.swappiness, Some(KnobValue::Number(100)));
    let v2 = &s.cgroups[4];
    assert_eq!(v2.max, Some(KnobValue::Max));
    assert_eq!(v2.high, Some(KnobValue::Pages(1000)));
    assert_eq!(v2.low, Some(KnobValue::Pages(0)));
    assert_eq!(v2.min, Some(KnobValue::Pages(1)));
    assert_eq!(s.cgroup_changes[0].at, 1_500_000_000);
    let c = &s.cgroup_cycles[0];
    assert_eq!(c.knob, MemcgKnob::High);
    assert_eq!(
        c.values,
        [KnobValue::Percent(75.0), KnobValue::Percent(200.0)]
    );
    assert_eq!(c.durations, [1_000_000_000, 10_000_000_000]);
    assert_eq!((c.start, c.until), (2_000_000_000, 60_000_000_000));
    assert_eq!(c.of, Some(Reference::Pages(25600)));
    assert_eq!(c.final_value, Some(KnobValue::Max));
    assert_eq!(s.workloads[0].cgroup_path(), "/a/b");

    // The expansion: setup writes, then by time; 75 % of 25600 = 19200.
    let w = cgroups::schedule(&s).unwrap();
    let setup: Vec<_> = w.iter().filter(|w| w.at.is_none()).collect();
    assert_eq!(setup.len(), 7);
    let timed: Vec<(u64, u64)> = w
        .iter()
        .filter(|w| w.path == "/v2" && w.at.is_some())
        .map(|w| (w.at.unwrap() / 1_000_000_000, w.value))
        .collect();
    assert_eq!(
        timed,
        [
            (2, 19200),
            (3, 51200),
            (13, 19200),
            (14, 51200),
            (24, 19200),
            (25, 51200),
            (35, 19200),
            (36, 51200),
            (46, 19200),
            (47, 51200),
            (57, 19200),
            (58, 51200),
            (60, u64::MAX)
        ]
    );
    assert!(w.contains(&KnobWrite {
        at: Some(1_500_000_000),
        path: "/v1".into(),
        knob: MemcgKnob::Swappiness,
        value: 0
    }));
    let times: Vec<u64> = w.iter().filter_map(|w| w.at).collect();
    assert!(times.windows(2).all(|p| p[0] <= p[1]), "{times:?}");

    // And back from TOML.
    let text = s.to_toml_string();
    let back = parse(&text);
    assert_eq!(back, s, "{text}");
}

#[test]
fn the_top_group_may_be_configured() {
    let s = parse(&BASE.replace(
        "[[cgroup]]\npath = \"/a\"\n",
        "[[cgroup]]\npath = \"/\"\nmax = \"32M\"\nsoft_limit = \"1G\"\n\n[[cgroup]]\npath = \"/a\"\n",
    ));
    let r = run(&s);
    assert_eq!(r.result.memcg["/"].max, Some(8192));
    assert_eq!(r.result.memcg_max_pages, Some(8192));
    assert_eq!(r.result.memcg["/"].soft_limit, Some(262144));
    // A version on `/` is inherited.
    let (msg, field) = err(&BASE.replace(
        "[[cgroup]]\npath = \"/a\"\n",
        "[[cgroup]]\npath = \"/\"\nversion = \"v2\"\n\n[[cgroup]]\npath = \"/a\"\nsoft_limit = 0\n",
    ));
    check(
        (msg, field),
        "cgroup[1].soft_limit",
        &["v2", "cgroup[0].version"],
    );
}

// ---- errors ----------------------------------------------------------------------------

#[test]
fn bad_paths() {
    check(
        err_with("path = \"/a/b\"", "path = \"/x/b\""),
        "cgroup[1].path",
        &["parent `/x`", "not declared", "before it"],
    );
    check(
        err_with("path = \"/c\"", "path = \"c\""),
        "cgroup[2].path",
        &["does not start with `/`"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/c/\""),
        "cgroup[2].path",
        &["empty name"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/a b\""),
        "cgroup[2].path",
        &["not a usable name"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/..\""),
        "cgroup[2].path",
        &["not a group name"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/a\""),
        "cgroup[2].path",
        &["already declared by cgroup[0]"],
    );
    // A parent declared after its child.
    check(
        err(&BASE.replacen(
            "[[cgroup]]\npath = \"/a\"\n\n[[cgroup]]\npath = \"/a/b\"\n",
            "[[cgroup]]\npath = \"/a/b\"\n\n[[cgroup]]\npath = \"/a\"\n",
            1,
        )),
        "cgroup[0].path",
        &["parent `/a`"],
    );
    // Too many groups: the kernel's 65,535 memcg ids, `/` included.
    let mut text = String::from("[machine]\nmemory = \"64M\"\n");
    for i in 0..65_535 {
        text.push_str(&format!("[[cgroup]]\npath = \"/g{i}\"\n"));
    }
    text.push_str("[[workload]]\nkind = \"touch\"\ntarget = \"anon\"\npages = 1\n");
    check(err(&text), "cgroup[65534].path", &["at most 65534"]);
}

#[test]
fn bad_values() {
    check(
        err_with("path = \"/c\"", "path = \"/c\"\nmax = \"12Q\""),
        "cgroup[2].max",
        &["line 13", "suffix"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/c\"\nmax = -1"),
        "cgroup[2].max",
        &["below 0"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/c\"\nhigh = \"-5M\""),
        "cgroup[2].high",
        &["below 0"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/c\"\nmax = 100"),
        "cgroup[2].max",
        &["no unit", "\"100p\""],
    );
    check(
        err_with("path = \"/c\"", "path = \"/c\"\nmax = \"100\""),
        "cgroup[2].max",
        &["less than one 4 KiB page"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/c\"\nmax = 1.5"),
        "cgroup[2].max",
        &["unit"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/c\"\nswappiness = 201"),
        "cgroup[2].swappiness",
        &["out of range [0, 200]"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/c\"\nswappiness = \"10M\""),
        "cgroup[2].swappiness",
        &["not a size"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/c\"\nmax = \"50%\""),
        "cgroup[2].max",
        &["of what", "`of`"],
    );
    check(
        err_with(
            "path = \"/c\"",
            "path = \"/c\"\nmax = \"20000%\"\nof = \"1G\"",
        ),
        "cgroup[2].max",
        &["out of range [0%, 10000%]"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/c\"\nmax = \"1G\"\nof = \"1G\""),
        "cgroup[2].of",
        &["no value of the table is a percentage"],
    );
    check(
        err_with(
            "path = \"/c\"",
            "path = \"/c\"\nmax = \"5%\"\nof = \"lots\"",
        ),
        "cgroup[2].of",
        &["\"peak\""],
    );
    check(
        err_with("path = \"/c\"", "path = \"/c\"\nmaxx = \"1G\""),
        "cgroup[2].maxx",
        &["unknown field `maxx`"],
    );
    check(
        err_with("path = \"/c\"", "path = \"/c\"\nversion = \"v3\""),
        "cgroup[2].version",
        &["unknown variant `v3`"],
    );
}

#[test]
fn versions_and_the_top_group() {
    check(
        err_with(
            "path = \"/c\"",
            "path = \"/c\"\nversion = \"v2\"\nsoft_limit = 0",
        ),
        "cgroup[2].soft_limit",
        &[
            "not a cgroup v2 knob",
            "cgroup[2].version",
            "max, high, low, min",
        ],
    );
    check(
        err_with(
            "path = \"/c\"",
            "path = \"/c\"\nversion = \"v1\"\nlow = \"1M\"",
        ),
        "cgroup[2].low",
        &["not a cgroup v1 knob", "max, soft_limit, swappiness"],
    );
    // Inherited: /a/b is v1 through /a.
    let v1 = BASE.replacen("path = \"/a\"\n", "path = \"/a\"\nversion = \"v1\"\n", 1);
    let s = parse(&v1.replacen("path = \"/a/b\"", "path = \"/a/b\"\nsoft_limit = \"1M\"", 1));
    assert_eq!(s.cgroups[1].soft_limit, Some(KnobValue::Pages(256)));
    check(
        err(&v1.replacen("path = \"/a/b\"", "path = \"/a/b\"\nhigh = \"1M\"", 1)),
        "cgroup[1].high",
        &["`/a/b` is v1 (cgroup[0].version)"],
    );
    check(
        err(&v1.replacen("path = \"/a/b\"", "path = \"/a/b\"\nversion = \"v2\"", 1)),
        "cgroup[1].version",
        &["its ancestor is v1", "separate hierarchies"],
    );
    // Changes and cycles obey the version too.
    check(
        err(&format!(
            "{v1}[[cgroup_change]]\nat = \"1s\"\npath = \"/a\"\nmin = \"1M\"\n"
        )),
        "cgroup_change[0].min",
        &["not a cgroup v1 knob"],
    );
    check(
        err(&format!(
            "{v1}[[cgroup_cycle]]\npath = \"/a/b\"\nknob = \"high\"\nvalues = [\"1M\"]\n\
             durations = [\"1s\"]\nuntil = \"2s\"\n"
        )),
        "cgroup_cycle[0].knob",
        &["not a cgroup v1 knob"],
    );
    // The top group.
    let top = |knobs: &str| {
        BASE.replacen(
            "[[cgroup]]\npath = \"/a\"\n",
            &format!("[[cgroup]]\npath = \"/\"\n{knobs}\n[[cgroup]]\npath = \"/a\"\n"),
            1,
        )
    };
    for knob in ["high", "low", "min"] {
        check(
            err(&top(&format!("{knob} = \"1M\""))),
            &format!("cgroup[0].{knob}"),
            &["the top group `/` has no"],
        );
    }
    check(
        err(&top("swappiness = 10")),
        "cgroup[0].swappiness",
        &["machine.swappiness"],
    );
    check(
        err(&top("max = \"32M\"")
            .replace("memory = \"64M\"", "memory = \"64M\"\nmemcg_max = \"16M\"")),
        "cgroup[0].max",
        &["machine.memcg_max already sets"],
    );
    check(
        err_extra("[[cgroup]]\npath = \"/\"\nversion = \"v1\"\n"),
        "cgroup[3].version",
        &["declare `/` before the other groups"],
    );
    check(
        err_extra("[[cgroup_change]]\nat = \"1s\"\npath = \"/\"\nhigh = \"1M\"\n"),
        "cgroup_change[0].high",
        &["the top group"],
    );
}

#[test]
fn protection_may_not_exceed_the_parents() {
    let prot = BASE
        .replacen(
            "path = \"/a\"\n",
            "path = \"/a\"\nlow = \"8M\"\nmin = \"4M\"\n",
            1,
        )
        .replacen("path = \"/a/b\"\n", "path = \"/a/b\"\nlow = \"6M\"\n", 1);
    parse(&prot);
    check(
        err(&prot.replacen("low = \"6M\"", "low = \"9M\"", 1)),
        "cgroup[1].low",
        &[
            "9M",
            "memory.low of `/a/b`",
            "parent `/a`'s (8M, cgroup[0].low)",
        ],
    );
    check(
        err(&prot.replacen("low = \"6M\"", "low = \"max\"", 1)),
        "cgroup[1].low",
        &["larger than its parent"],
    );
    check(
        err(&prot.replacen("low = \"6M\"", "low = \"6M\"\nmin = \"5M\"", 1)),
        "cgroup[1].min",
        &["memory.min"],
    );
    // A parent without protection, or the top group, constrains nothing.
    parse(&BASE.replacen("path = \"/a/b\"\n", "path = \"/a/b\"\nlow = \"60M\"\n", 1));
    parse(&BASE.replacen("path = \"/a\"\n", "path = \"/a\"\nlow = \"60M\"\n", 1));
    // Over time: lowering the parent below the child.
    check(
        err(&format!(
            "{prot}[[cgroup_change]]\nat = \"2s\"\npath = \"/a\"\nlow = \"1M\"\n"
        )),
        "cgroup_change[0].low",
        &[
            "at 2s",
            "`/a/b`",
            "(6M, cgroup[1].low)",
            "(1M, cgroup_change[0].low)",
        ],
    );
    // … unless the child is lowered at the same time.
    parse(&format!(
        "{prot}[[cgroup_change]]\nat = \"2s\"\npath = \"/a\"\nlow = \"1M\"\n\
         [[cgroup_change]]\nat = \"2s\"\npath = \"/a/b\"\nlow = \"1M\"\n"
    ));
    // A cycle that raises the child above the parent in its second step.
    check(
        err(&format!(
            "{prot}[[cgroup_cycle]]\npath = \"/a/b\"\nknob = \"low\"\n\
             values = [\"2M\", \"10M\"]\ndurations = [\"1s\", \"1s\"]\nuntil = \"10s\"\n"
        )),
        "cgroup_cycle[0].values[1]",
        &["at 1s", "10M"],
    );
}

#[test]
fn bad_changes() {
    let change = |body: &str| err_extra(&format!("[[cgroup_change]]\n{body}\n"));
    check(
        change("at = \"1s\"\npath = \"/x\"\nmax = \"1M\""),
        "cgroup_change[0].path",
        &["no group `/x`", "the groups are /, /a, /a/b, /c"],
    );
    check(
        change("at = \"1s\"\npath = \"/a\""),
        "cgroup_change[0]",
        &["writes no knob"],
    );
    check(
        change("at = \"2000000s\"\npath = \"/a\"\nmax = \"1M\""),
        "cgroup_change[0].at",
        &["out of range [0s, 1000000s]"],
    );
    check(
        change("at = 5\npath = \"/a\"\nmax = \"1M\""),
        "cgroup_change[0].at",
        &["no unit"],
    );
    check(
        change("at = \"-1s\"\npath = \"/a\"\nmax = \"1M\""),
        "cgroup_change[0].at",
        &["negative"],
    );
    check(
        change("path = \"/a\"\nmax = \"1M\""),
        "cgroup_change[0]",
        &["missing field `at`"],
    );
    check(
        change("at = \"1s\"\npath = \"/a\"\nmax = \"garbage\""),
        "cgroup_change[0].max",
        &["`garbage`"],
    );
    check(
        err_extra(
            "[[cgroup_change]]\nat = \"1s\"\npath = \"/a\"\nmax = \"1M\"\n\
             [[cgroup_change]]\nat = \"1s\"\npath = \"/a\"\nhigh = \"1M\"\nmax = \"2M\"\n",
        ),
        "cgroup_change[1].max",
        &["cgroup_change[0] writes max of `/a` at the same time (1s)"],
    );
    check(
        err_extra("[[cgroup_change]]\nat = \"1s\"\npath = \"/a\"\nmax = \"1M\"\nof = \"peak\"\n"),
        "cgroup_change[0].of",
        &["no value of the table is a percentage"],
    );
}

const CYCLE: &str = "[[cgroup_cycle]]\npath = \"/a\"\nknob = \"max\"\n\
                     values = [\"300M\", \"600M\"]\ndurations = [\"1s\", \"10s\"]\n";

#[test]
fn bad_cycles() {
    let cycle = |body: &str| err_extra(&format!("{CYCLE}{body}\n"));
    parse(&format!("{BASE}{CYCLE}until = \"60s\"\n"));
    check(cycle(""), "cgroup_cycle[0]", &["missing field `until`"]);
    check(
        cycle("until = \"60s\"\nstart = \"60s\""),
        "cgroup_cycle[0].until",
        &["out of range (1min, 1000000s]"],
    );
    check(
        cycle("until = \"2000000s\""),
        "cgroup_cycle[0].until",
        &["out of range"],
    );
    check(
        cycle("until = \"60s\"\nstart = \"1000001s\""),
        "cgroup_cycle[0].start",
        &["out of range [0s, 1000000s]"],
    );
    check(
        err_extra(&format!(
            "{}until = \"60s\"\n",
            CYCLE.replace("\"10s\"]", "\"10s\", \"1s\"]")
        )),
        "cgroup_cycle[0].durations",
        &["3 durations for 2 values"],
    );
    check(
        err_extra(&format!(
            "{}until = \"60s\"\n",
            CYCLE.replace("\"10s\"]", "\"0s\"]")
        )),
        "cgroup_cycle[0].durations[1]",
        &["out of range (0s, 1000000s]"],
    );
    check(
        err_extra(&format!(
            "{}until = \"60s\"\n",
            CYCLE
                .replace("[\"300M\", \"600M\"]", "[]")
                .replace("[\"1s\", \"10s\"]", "[]")
        )),
        "cgroup_cycle[0].values",
        &["0 values; a cycle has 1 to 64"],
    );
    check(
        err_extra(&format!(
            "{}until = \"60s\"\n",
            CYCLE.replace("\"600M\"", "\"lots\"")
        )),
        "cgroup_cycle[0].values",
        &["`lots`"],
    );
    check(
        err_extra(&format!(
            "{}until = \"60s\"\n",
            CYCLE.replace("knob = \"max\"", "knob = \"maximum\"")
        )),
        "cgroup_cycle[0].knob",
        &["unknown variant `maximum`", "`soft_limit`"],
    );
    check(
        err_extra(&format!(
            "{}until = \"60s\"\n",
            CYCLE.replace("path = \"/a\"", "path = \"/nope\"")
        )),
        "cgroup_cycle[0].path",
        &["no group `/nope`"],
    );
    check(
        err_extra(&format!(
            "{}until = \"60s\"\n",
            CYCLE.replace("\"600M\"", "\"50%\"")
        )),
        "cgroup_cycle[0].values[1]",
        &["of what"],
    );
    check(
        cycle("until = \"60s\"\nfinal = \"-1M\""),
        "cgroup_cycle[0].final",
        &["below 0"],
    );
    // Too many writes: 10^6 s in steps of 1 ms.
    check(
        err_extra(&format!(
            "{}until = \"1000000s\"\n",
            CYCLE.replace("[\"1s\", \"10s\"]", "[\"1ms\", \"1ms\"]")
        )),
        "cgroup_cycle[0].until",
        &["more than 1000000 times"],
    );
    // Overlapping cycles of the same knob and group.
    check(
        cycle("until = \"60s\"\n[[cgroup_cycle]]\npath = \"/a\"\nknob = \"max\"\nvalues = [\"1G\"]\ndurations = [\"1s\"]\nstart = \"59s\"\nuntil = \"70s\""),
        "cgroup_cycle[1]",
        &["overlapping cgroup_cycle[0] (0s to 1min)"],
    );
    // Back to back is fine, unless the first writes a final value then.
    let next = "[[cgroup_cycle]]\npath = \"/a\"\nknob = \"max\"\nvalues = [\"1G\"]\n\
                durations = [\"1s\"]\nstart = \"60s\"\nuntil = \"70s\"";
    parse(&format!("{BASE}{CYCLE}until = \"60s\"\n{next}\n"));
    check(
        cycle(&format!("until = \"60s\"\nfinal = \"max\"\n{next}")),
        "cgroup_cycle[1]",
        &["overlapping"],
    );
    // Another knob or group may cycle at the same time.
    parse(&format!(
        "{BASE}{CYCLE}until = \"60s\"\n{}",
        next.replace("knob = \"max\"", "knob = \"high\"")
            .replace("start = \"60s\"", "start = \"0s\"")
    ));
    // A change of the cycled knob inside the cycle.
    check(
        cycle("until = \"60s\"\n[[cgroup_change]]\nat = \"30s\"\npath = \"/a\"\nmax = \"1G\"\nhigh = \"1G\""),
        "cgroup_change[0].max",
        &["inside cgroup_cycle[0] (0s to 1min)"],
    );
    parse(&format!(
        "{BASE}{CYCLE}until = \"60s\"\n[[cgroup_change]]\nat = \"60s\"\npath = \"/a\"\nmax = \"1G\"\n"
    ));
}

#[test]
fn a_workload_runs_in_a_declared_group() {
    check(
        err_with("cgroup = \"/a/b\"", "cgroup = \"/a/x\""),
        "workload[0].cgroup",
        &["no group `/a/x`"],
    );
    check(
        err_with("cgroup = \"/a/b\"", "cgroup = \"a\""),
        "workload[0].cgroup",
        &["does not start with `/`"],
    );
    // "/" needs no declaration.
    parse(&BASE.replace("cgroup = \"/a/b\"", "cgroup = \"/\""));
}

// ---- running -----------------------------------------------------------------------------

const TWO: &str = r#"
[machine]
memory = "256M"
swap = { device = "zram", size = "256M" }

[[cgroup]]
path = "/limited"
max = "4M"

[[cgroup]]
path = "/free"

[[workload]]
name = "anon"
kind = "uniform"
target = "anon"
pages = "16M"
accesses = 40000
cgroup = "/limited"

[[workload]]
name = "file"
kind = "uniform"
target = "file"
pages = "16M"
accesses = 40000
cgroup = "/free"
"#;

#[test]
fn the_group_with_a_limit_is_reclaimed_and_the_other_is_not() {
    let r = run(&parse(TWO));
    let m = &r.result.memcg;
    assert_eq!(
        m.keys().map(String::as_str).collect::<Vec<_>>(),
        ["/", "/free", "/limited"]
    );
    let lim = &m["/limited"];
    assert_eq!(lim.max, Some(1024));
    assert!(lim.current <= 1024, "{lim:?}");
    assert!(lim.pgsteal > 0 && lim.events_max > 0, "{lim:?}");
    assert!(lim.anon > 0 && lim.file == 0, "{lim:?}");
    assert!(lim.events.workingset_refault_anon > 0, "{lim:?}");
    assert!(lim.events.pgmajfault > 0, "{lim:?}");
    let free = &m["/free"];
    assert_eq!(free.max, None);
    assert_eq!((free.pgscan, free.pgsteal, free.events_max), (0, 0, 0));
    assert!(free.file > 3000 && free.anon == 0, "{free:?}");
    // Hierarchical: the top group holds both.
    assert_eq!(m["/"].current, lim.current + free.current);
    assert_eq!(m["/"].pgsteal, lim.pgsteal);
    // The JSON has the same object.
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["memcg"]["/limited"]["max"], 1024);
    assert_eq!(j["memcg"]["/limited"]["pgsteal"], lim.pgsteal);
    assert_eq!(j["memcg"]["/free"]["current"], free.current);
    // Deterministic.
    assert_eq!(run(&parse(TWO)).result, r.result);
}

#[test]
fn a_cycle_writes_its_values_at_their_times() {
    let text = format!(
        "{TWO}
[[cgroup_cycle]]
path = \"/free\"
knob = \"max\"
values = [\"1000p\", \"2000p\"]
durations = [\"10ms\", \"5ms\"]
start = \"2ms\"
until = \"40ms\"
final = \"max\"

[[cgroup_change]]
at = \"20ms\"
path = \"/limited\"
max = \"3000p\"
"
    );
    let s = parse(&text);
    let mut sim = Sim::new(s.machine.clone()).unwrap();
    cgroups::setup(&mut sim, &s).unwrap();
    let free = sim.memcg_by_path("/free").unwrap() as usize;
    let lim = sim.memcg_by_path("/limited").unwrap() as usize;
    assert_eq!(sim.memcgs()[lim].max, 1024, "set up front");
    for ms in 0..50u64 {
        // A zero think lets due writes happen at the current time.
        sim.step(&Event::Think { ns: 0 });
        assert_eq!(sim.now(), ms * 1_000_000);
        let want = match ms {
            0..=1 => u64::MAX,
            2..=11 | 17..=26 | 32..=39 => 1000,
            12..=16 | 27..=31 => 2000,
            _ => u64::MAX,
        };
        assert_eq!(sim.memcgs()[free].max, want, "at {ms} ms");
        let want = if ms < 20 { 1024 } else { 3000 };
        assert_eq!(sim.memcgs()[lim].max, want, "at {ms} ms");
        sim.step(&Event::Think { ns: 1_000_000 });
    }
    // In a run, the last write stays.
    let r = run(&s);
    assert_eq!(r.result.memcg["/limited"].max, Some(3000));
}

#[test]
fn percentages_of_a_peak_take_a_calibration_run() {
    let text = r#"
[machine]
memory = "64M"
swap = { device = "zram", size = "64M" }

[[cgroup]]
path = "/work"

[[cgroup]]
path = "/idle"

[[cgroup_cycle]]
path = "/work"
knob = "max"
values = ["75%", "200%"]
durations = ["1s", "10s"]
until = "30s"
of = "peak"

[[workload]]
kind = "eater"
size = "8M"
cgroup = "/work"
"#;
    let s = parse(text);
    assert!(cgroups::needs_calibration(&s));
    let cal = cgroups::calibration_scenario(&s);
    assert!(cal.cgroup_cycles.is_empty());
    assert_eq!(
        cal.cgroups,
        [CgroupSpec::new("/work"), CgroupSpec::new("/idle")]
    );
    let peaks = cgroups::peaks(&s).unwrap();
    assert_eq!(peaks["/work"], 2048);
    let w = cgroups::schedule(&s).unwrap();
    let v: Vec<(u64, u64)> = w.iter().map(|w| (w.at.unwrap(), w.value)).collect();
    assert_eq!(
        v,
        [
            (0, 1536),
            (1_000_000_000, 4096),
            (11_000_000_000, 1536),
            (12_000_000_000, 4096),
            (22_000_000_000, 1536),
            (23_000_000_000, 4096)
        ]
    );
    // The run is squeezed to 75 % of its peak from the start.
    let r = run(&s);
    let work = &r.result.memcg["/work"];
    assert!(work.pgsteal > 0 && work.events_max > 0, "{work:?}");
    // A group without memory has no peak.
    let idle = text.replace("path = \"/work\"\nknob", "path = \"/idle\"\nknob");
    let e = run_scenario(&parse(&idle), &mut RunOptions::default()).unwrap_err();
    assert_eq!(e.field(), Some("cgroup_cycle[0].of"), "{e}");
    assert!(e.to_string().contains("no memory"), "{e}");
}

/// One small workload of every kind, each in `/w`: all its memory is charged there.
#[test]
fn every_kind_charges_its_group() {
    let kinds = [
        ("kind = \"uniform\"\ntarget = \"file\"\npages = \"2M\"\naccesses = 2000", true, false),
        ("kind = \"uniform\"\ntarget = \"mmap\"\npages = \"2M\"\naccesses = 2000", true, false),
        ("kind = \"touch\"\ntarget = \"anon\"\npages = \"2M\"", false, true),
        ("kind = \"fio\"\nrw = \"randread\"\nsize = \"1m\"\nnumjobs = 2", true, false),
        ("kind = \"fio\"\nrw = \"randread\"\nsize = \"1m\"\nnumjobs = 2\nshared_file = true", true, false),
        ("kind = \"kv\"\nkeys = 1000\ngets = 1000", false, true),
        ("kind = \"pgbench\"\nscale = 1\ntransactions = 100\nshared_buffers = \"1m\"", true, true),
        ("kind = \"dd\"\ncount = 1000", true, false),
        ("kind = \"dd\"\ncount = 1000\nread = true", true, false),
        ("kind = \"eater\"\nsize = \"1m\"", false, true),
        ("kind = \"kbuild\"\nunits = 20\njobs = 2\nheaders = \"1m\"\ncc_mem = \"256k\"\nincludes = 20", true, true),
    ];
    for (body, file, anon) in kinds {
        let text = format!(
            "[machine]\nmemory = \"256M\"\n[[cgroup]]\npath = \"/w\"\n\
             [[workload]]\n{body}\ncgroup = \"/w\"\n"
        );
        let r = run(&parse(&text));
        let w = &r.result.memcg["/w"];
        let top = &r.result.memcg["/"];
        assert!(w.current > 0, "{body}: {w:?}");
        assert_eq!(
            w.current, top.current,
            "{body}: everything is charged to /w"
        );
        assert_eq!(w.file > 0, file, "{body}: {w:?}");
        assert_eq!(w.anon > 0, anon, "{body}: {w:?}");
        assert_eq!(w.events.pgfault, top.events.pgfault, "{body}");
    }
}

// ---- kbuild --------------------------------------------------------------------------------

#[test]
fn kbuild_events_are_known_before_running() {
    let spec = KbuildSpec {
        jobs: 3,
        headers: 256 << 10,
        cc_mem: 64 << 10,
        includes: 7,
        ..KbuildSpec::new(25)
    };
    let w = mmsim_workloads::WorkloadSpec::model(WorkloadKind::Kbuild(spec.clone()));
    let count = |seed| {
        let mut sim = Sim::new(mmsim_core::MachineConfig::default()).unwrap();
        let mut g = Generator::build(&mut sim, &w, "kb", seed, "test", None).unwrap();
        let mut out = Vec::new();
        while g.fill(&mut out, 100).unwrap() > 0 {}
        out
    };
    let a = count(1);
    assert_eq!(a.len() as u64, spec.events());
    assert_eq!(a, count(1), "deterministic");
    let b = count(2);
    assert_eq!(b.len(), a.len(), "the tree does not depend on the seed");
    assert_ne!(a, b, "the header picks do");
    // Per compile: a source read, 7 header reads, 3 passes over its memory, an object
    // write and a think.
    let reads = a
        .iter()
        .filter(|e| matches!(e, Event::FileRead { .. }))
        .count();
    let writes = a
        .iter()
        .filter(|e| matches!(e, Event::FileWrite { .. }))
        .count();
    let thinks = a
        .iter()
        .filter(|e| matches!(e, Event::Think { ns: 1_000_000 }))
        .count();
    assert_eq!((reads, writes, thinks), (25 * 8, 25, 25));
    let mem: u64 = (0..25).map(|u| u64::from(spec.unit(u).mem)).sum();
    let accesses = a
        .iter()
        .filter(|e| matches!(e, Event::Access { .. }))
        .count() as u64;
    assert_eq!(accesses, mem * 3);
    // Sizes are within [½, 1½] of the means.
    for u in 0..25 {
        let x = spec.unit(u);
        assert!((3..=9).contains(&x.source), "{x:?}");
        assert!((5..=15).contains(&x.object), "{x:?}");
        assert!((8..=24).contains(&x.mem), "{x:?}");
    }
}

#[test]
fn kbuild_fields_are_checked() {
    let base = "[[workload]]\nkind = \"kbuild\"\nunits = 10\n";
    parse(base);
    for (extra, field, needle) in [
        ("jobs = 0", "jobs", "out of range [1, 256]"),
        ("jobs = 257", "jobs", "out of range [1, 256]"),
        ("source_size = 100", "source_size", "out of range [4k, 16m]"),
        (
            "object_size = \"17m\"",
            "object_size",
            "out of range [4k, 16m]",
        ),
        ("header_size = \"1k\"", "header_size", "out of range"),
        ("headers = \"4k\"", "headers", "header_size"),
        ("headers = \"8g\"", "headers", "100000 × header_size"),
        ("includes = 100001", "includes", "out of range"),
        ("header_theta = 6.0", "header_theta", "out of range [0, 5]"),
        ("cc_mem = \"5g\"", "cc_mem", "out of range [4k, 4g]"),
        ("cc_passes = 0", "cc_passes", "out of range [1, 1000]"),
        ("cpu = \"2h\"", "cpu", "out of range [0s, 1h]"),
        ("cpu = 5", "cpu", "no unit"),
        ("size = \"1m\"", "size", "does not apply to kind `kbuild`"),
    ] {
        let (msg, f) = err(&format!("{base}{extra}\n"));
        assert_eq!(f, format!("workload[0].{field}"), "{msg}");
        assert!(msg.contains(needle), "{extra}: {msg}");
    }
    let (msg, f) = err(&base.replace("units = 10", "units = 0"));
    assert_eq!(f, "workload[0].units", "{msg}");
    let (msg, f) = err(&base.replace("units = 10\n", ""));
    assert_eq!(f, "workload[0]", "{msg}");
    assert!(msg.contains("needs the field `units`"), "{msg}");
}

/// `cc_exit = true`: every compile ends by zapping the heap pages it used, so each
/// compile faults its heap afresh — exactly one fault per heap page per compile on a
/// machine without memory pressure — where a reused heap faults only the pages no
/// earlier compile of the same job touched. The field is printed only when set.
#[test]
fn kbuild_cc_exit_frees_each_compiles_heap() {
    let text = |exit: bool| {
        format!(
            "seed = 5\n[machine]\nmemory = \"512M\"\n[[workload]]\nkind = \"kbuild\"\n\
             units = 12\njobs = 2\nheaders = \"256k\"\ncc_mem = \"128k\"\nincludes = 4\n\
             cpu = \"0s\"\n{}",
            if exit { "cc_exit = true\n" } else { "" }
        )
    };
    let spec = KbuildSpec {
        jobs: 2,
        headers: 256 << 10,
        cc_mem: 128 << 10,
        includes: 4,
        cpu: 0,
        ..KbuildSpec::new(12)
    };
    let heap: u64 = (0..12).map(|u| u64::from(spec.unit(u).mem)).sum();
    let exits = parse(&text(true));
    let reused = parse(&text(false));
    assert!(exits.to_toml_string().contains("cc_exit = true"));
    assert!(!reused.to_toml_string().contains("cc_exit"));
    let (a, b) = (run(&exits), run(&reused));
    let anon_faults = |r: &ScenarioResult| r.result.vmstat.pgfault - r.result.vmstat.pgmajfault;
    assert_eq!(a.result.vmstat.pgmajfault, 0);
    // File reads fault nothing (read(2), not mappings): every fault is a heap page's.
    assert_eq!(anon_faults(&a), heap, "one fault per heap page per compile");
    assert!(anon_faults(&b) < heap, "{} vs {heap}", anon_faults(&b));
    // Every compile, the last ones too, has freed its heap by the end; a reused heap
    // stays charged.
    assert_eq!(a.result.memcg["/"].anon, 0);
    assert!(b.result.memcg["/"].anon > 0);
    // One more event per compile.
    assert_eq!(a.events, b.events + 12);
}

// ---- the seed 004 scenarios ----------------------------------------------------------------

#[test]
fn seed_004_scenarios_run_in_their_groups() {
    for (name, groups) in [
        ("softlimit-kbuild", ["/build-a", "/build-b"]),
        ("softlimit-stream-vs-eater", ["/A", "/B"]),
        ("softlimit-kbuild-vs-eater", ["/A", "/B"]),
    ] {
        let s = embedded_scenario(name).unwrap().unwrap();
        assert_eq!(
            s.to_toml_string(),
            parse(&s.to_toml_string()).to_toml_string()
        );
        let t = std::time::Instant::now();
        let r = run(&s);
        eprintln!("{name}: {:.2} s", t.elapsed().as_secs_f64());
        let m = &r.result.memcg;
        assert_eq!(m.len(), 3, "{name}");
        // The first group is over its soft limit of 0, the second has none (kbuild: both 0).
        assert_eq!(m[groups[0]].soft_limit, Some(0), "{name}");
        let second = if name == "softlimit-kbuild" {
            Some(0)
        } else {
            None
        };
        assert_eq!(m[groups[1]].soft_limit, second, "{name}");
        for g in groups {
            assert!(m[g].current > 0, "{name}: {g}");
        }
        assert_eq!(m["/"].current, m[groups[0]].current + m[groups[1]].current);
        assert!(m["/"].pgsteal > 0, "{name}: under memory pressure");
        assert_eq!(
            r.workloads.iter().map(|w| w.events).sum::<u64>(),
            s.expected_events().unwrap(),
            "{name}"
        );
    }
}

#[test]
fn swap_max_caps_a_groups_swap() {
    let capped = TWO.replacen("max = \"4M\"", "max = \"4M\"\nswap_max = \"2M\"", 1);
    let r = run(&parse(&capped));
    let lim = &r.result.memcg["/limited"];
    assert_eq!(lim.swap_max_limit, Some(512));
    // 16M of anon in 4M of memory needs 12M of swap: at 2M the group can
    // neither swap nor stay under memory.max, and its task is OOM-killed.
    assert!(lim.events.swap_max > 0, "{lim:?}");
    assert_eq!(lim.events.oom_kill, 1, "{lim:?}");
    // Without the cap the same run swaps far more and kills nobody.
    let free = run(&parse(TWO));
    let l = &free.result.memcg["/limited"];
    let (capped, uncapped) = (r.result.vmstat.pswpout, free.result.vmstat.pswpout);
    assert!(capped * 4 < uncapped, "{capped} {uncapped}");
    assert_eq!((l.events.swap_max, l.events.oom_kill), (0, 0));
    assert_eq!(l.swap_max_limit, None);
    assert!(l.swap_current > 512, "{l:?}");
    // swap_max is a v2 knob, and the top group has none.
    check(
        err_with(
            "path = \"/c\"",
            "path = \"/c\"\nversion = \"v1\"\nswap_max = \"1M\"",
        ),
        "cgroup[2].swap_max",
        &["memory.swap.max is not a cgroup v1 knob"],
    );
    check(
        err_extra("[[cgroup_change]]\nat = \"1s\"\npath = \"/\"\nswap_max = \"1M\"\n"),
        "cgroup_change[0].swap_max",
        &["the top group `/` has no memory.swap.max"],
    );
    let s = parse(&format!(
        "{BASE}[[cgroup_cycle]]\npath = \"/a\"\nknob = \"swap_max\"\nvalues = [\"1M\", \"max\"]\n\
         durations = [\"1s\", \"1s\"]\nuntil = \"4s\"\n"
    ));
    assert_eq!(s.cgroup_cycles[0].knob, mmsim_core::MemcgKnob::SwapMax);
}

#[test]
fn a_moved_workload_charges_its_new_group_from_then_on() {
    let text = r#"
[machine]
memory = "256M"

[[cgroup]]
path = "/a"

[[cgroup]]
path = "/b"

[[workload]]
name = "toucher"
kind = "touch"
target = "anon"
pages = "8M"
cgroup = "/a"

[[workload]]
name = "idler"
kind = "touch"
target = "anon"
pages = "4K"
"#;
    let stay = run(&parse(text));
    let a = &stay.result.memcg["/a"];
    // 2048 pages and one page of the per-CPU charge stock, which the idler's charge in
    // `/` drained except for the batch's last page.
    assert_eq!((a.anon, a.current), (2048, 2049), "{a:?}");
    // Move the toucher after its first fault (1 ns in; each fault costs more).
    let moved =
        format!("{text}\n[[cgroup_move]]\nat = \"1ns\"\nworkload = \"toucher\"\nto = \"/b\"\n");
    let r = run(&parse(&moved));
    let (a, b) = (&r.result.memcg["/a"], &r.result.memcg["/b"]);
    // The first fault's page stays charged to /a (charges do not move); the rest go
    // to /b.
    assert_eq!((a.anon, a.current), (1, 1), "{a:?}");
    assert_eq!(b.anon, 2047, "{b:?}");
    assert_eq!(a.events.pgfault + b.events.pgfault, 2048);
    assert_eq!(run(&parse(&moved)).result, r.result, "deterministic");
    // Errors name the field.
    let bad = |m: &str| err(&format!("{text}\n[[cgroup_move]]\n{m}\n"));
    check(
        bad("at = \"1s\"\nworkload = \"nope\"\nto = \"/b\""),
        "cgroup_move[0].workload",
        &["no workload `nope`", "toucher, idler"],
    );
    check(
        bad("at = \"1s\"\nworkload = \"toucher\"\nto = \"/c\""),
        "cgroup_move[0].to",
        &["no group `/c`"],
    );
    check(
        bad("at = \"1s\"\nworkload = \"toucher\"\nto = \"/b\"\n[[cgroup_move]]\nat = \"1s\"\nworkload = \"toucher\"\nto = \"/a\""),
        "cgroup_move[1]",
        &["as cgroup_move[0] does"],
    );
    check(
        bad("at = \"2000000s\"\nworkload = \"toucher\"\nto = \"/b\""),
        "cgroup_move[0].at",
        &["out of range"],
    );
}

#[test]
fn a_reclaim_cycle_reclaims_proactively_in_v2_groups() {
    let text = TWO.replacen("path = \"/free\"", "path = \"/free\"\nversion = \"v2\"", 1);
    let cycle = "[[cgroup_cycle]]\npath = \"/free\"\nknob = \"reclaim\"\nvalues = [\"4M\"]\n\
                 durations = [\"100ms\"]\nuntil = \"10s\"\n";
    let quiet = run(&parse(&text));
    assert_eq!(quiet.result.memcg["/free"].pgsteal, 0);
    let r = run(&parse(&format!("{text}{cycle}")));
    let free = &r.result.memcg["/free"];
    assert!(free.pgsteal > 0, "{free:?}");
    assert!(
        free.current < quiet.result.memcg["/free"].current,
        "{free:?}"
    );
    // memory.reclaim is a cgroup v2 file.
    let v1 = TWO.replacen("path = \"/free\"", "path = \"/free\"\nversion = \"v1\"", 1);
    check(
        err(&format!("{v1}{cycle}")),
        "cgroup_cycle[0].knob",
        &["memory.reclaim is not a cgroup v1 knob"],
    );
}

#[test]
fn swap_high_throttles_a_group_over_it() {
    let high = TWO.replacen("max = \"4M\"", "max = \"4M\"\nswap_high = \"1M\"", 1);
    let r = run(&parse(&high));
    let lim = &r.result.memcg["/limited"];
    assert_eq!(lim.swap_high_limit, Some(256));
    assert!(lim.events.swap_high > 0, "{lim:?}");
    assert!(lim.events.high_throttle_ns > 0, "{lim:?}");
    let free = run(&parse(TWO));
    assert_eq!(free.result.memcg["/limited"].events.high_throttle_ns, 0);
    assert!(r.result.runtime_s > free.result.runtime_s);
    check(
        err_extra("[[cgroup_change]]\nat = \"1s\"\npath = \"/\"\nswap_high = \"1M\"\n"),
        "cgroup_change[0].swap_high",
        &["the top group `/` has no memory.swap.high"],
    );
}
