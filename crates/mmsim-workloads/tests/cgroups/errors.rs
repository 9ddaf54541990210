//! Memory cgroups in scenarios: every validation error names its field.

use super::*;

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
