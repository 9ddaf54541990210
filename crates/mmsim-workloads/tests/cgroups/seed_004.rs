//! Memory cgroups in scenarios: the seed 004 scenarios.

use super::running::TWO;
use super::*;

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
