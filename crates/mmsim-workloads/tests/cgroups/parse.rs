//! Memory cgroups in scenarios: parsing groups, changes and cycles.

use super::*;

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
