//! Scenario validation errors: each names the field (and the allowed range or
//! the choices), the file or the workload; a missing scenario file names it.

use mmsim_workloads::{Scenario, WorkloadKind, ZipfSampler};

const BASE: &str = r#"
seed = 3
[machine]
memory = "1G"

[[workload]]
kind = "touch"
target = "anon"
pages = 10

[[workload]]
kind = "zipf"
target = "file"
pages = 100
theta = 0.9
accesses = 10
"#;

fn err(text: &str) -> (String, Option<String>) {
    match Scenario::from_toml_str(text, "s.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => (e.to_string(), e.field().map(str::to_string)),
    }
}

#[test]
fn base_scenario_is_valid() {
    let s = Scenario::from_toml_str(BASE, "s.toml").unwrap();
    assert_eq!(s.seed, 3);
    assert_eq!(s.workloads.len(), 2);
    assert_eq!(s.workloads[1].display_name(1), "zipf-1");
}

#[test]
fn bad_theta_names_the_field() {
    let (msg, field) = err(&BASE.replace("theta = 0.9", "theta = 7.5"));
    assert_eq!(field.as_deref(), Some("workload[1].theta"));
    assert_eq!(msg, "s.toml: workload[1].theta: 7.5 is out of range [0, 5]");
    let (_, field) = err(&BASE.replace("theta = 0.9", "theta = -0.1"));
    assert_eq!(field.as_deref(), Some("workload[1].theta"));
}

#[test]
fn zero_pages_names_the_field() {
    let (msg, field) = err(&BASE.replace("pages = 10\n", "pages = 0\n"));
    assert_eq!(field.as_deref(), Some("workload[0].pages"), "{msg}");
    assert!(
        msg.starts_with("s.toml: workload[0].pages: 0 is out of range"),
        "{msg}"
    );
    let (msg, field) = err(&BASE.replace("pages = 100", "pages = \"0M\""));
    assert_eq!(field.as_deref(), Some("workload[1].pages"), "{msg}");
    assert!(msg.contains("line 14"), "{msg}");
}

#[test]
fn unknown_kind_names_the_field_and_the_choices() {
    let (msg, field) = err(&BASE.replace("\"zipf\"", "\"zipfian\""));
    assert_eq!(field.as_deref(), Some("workload[1].kind"), "{msg}");
    assert!(msg.contains("line 12"), "{msg}");
    assert!(msg.contains("unknown variant `zipfian`"), "{msg}");
    assert!(msg.contains("`hot-cold`"), "{msg}");
}

#[test]
fn unknown_field_names_the_field() {
    let (msg, field) = err(&BASE.replace("theta = 0.9", "theta = 0.9\nthetaa = 1"));
    assert_eq!(field.as_deref(), Some("workload[1].thetaa"), "{msg}");
    assert!(msg.contains("unknown field `thetaa`"), "{msg}");
    let (msg, field) = err(&BASE.replace("memory = \"1G\"", "memory = \"1G\"\nmemroy = 3"));
    assert_eq!(field.as_deref(), Some("machine.memroy"), "{msg}");
    let (msg, field) = err(&format!("colour = 1\n{BASE}"));
    assert_eq!(field.as_deref(), Some("colour"), "{msg}");
    assert!(msg.contains("line 1"), "{msg}");
}

#[test]
fn field_of_another_kind_is_an_error() {
    let (msg, field) = err(&BASE.replace("theta = 0.9", "theta = 0.9\npasses = 2"));
    assert_eq!(field.as_deref(), Some("workload[1].passes"), "{msg}");
    assert!(msg.contains("line 16"), "{msg}");
    assert!(
        msg.contains("`passes` does not apply to kind `zipf`"),
        "{msg}"
    );
    let (msg, field) = err(&BASE.replace("theta = 0.9\n", ""));
    assert_eq!(field.as_deref(), Some("workload[1]"), "{msg}");
    assert!(msg.contains("line 11"), "{msg}");
    assert!(msg.contains("kind `zipf` needs the field `theta`"), "{msg}");
}

#[test]
fn bad_sizes_name_the_field() {
    let (msg, field) = err(&BASE.replace("\"1G\"", "\"0M\""));
    assert_eq!(field.as_deref(), Some("machine.memory"), "{msg}");
    assert!(msg.contains("line 4, column 10"), "{msg}");
    assert!(msg.contains("zero size"), "{msg}");
    let (msg, field) = err(&BASE.replace("\"1G\"", "\"1M\""));
    assert_eq!(field.as_deref(), Some("machine.memory"), "{msg}");
    assert!(msg.contains("out of range [16M, 2T]"), "{msg}");
    let (msg, field) = err(&BASE.replace("\"1G\"", "\"-1G\""));
    assert_eq!(field.as_deref(), Some("machine.memory"), "{msg}");
    assert!(msg.contains("negative"), "{msg}");
}

#[test]
fn machine_range_errors_name_the_field() {
    let (msg, field) = err(&BASE.replace("memory = \"1G\"", "memory = \"1G\"\nswappiness = 300"));
    assert_eq!(field.as_deref(), Some("machine.swappiness"), "{msg}");
    let (msg, field) = err(&BASE.replace("memory = \"1G\"", "memory = \"1G\"\nmemcg_max = 100"));
    assert_eq!(field.as_deref(), Some("machine.memcg_max"), "{msg}");
    let (msg, field) = err(&BASE.replace(
        "memory = \"1G\"",
        "memory = \"1G\"\nswap = { device = \"ssd\" }",
    ));
    assert_eq!(field.as_deref(), Some("machine.swap.size"), "{msg}");
}

#[test]
fn other_workload_range_errors() {
    let cases = [
        ("accesses = 10", "accesses = 0", "workload[1].accesses"),
        (
            "accesses = 10",
            "accesses = 2000000000000",
            "workload[1].accesses",
        ),
        ("pages = 100", "pages = 4294967296", "workload[1].pages"),
        (
            "theta = 0.9",
            "theta = 0.9\nwrite_ratio = 1.5",
            "workload[1].write_ratio",
        ),
        (
            "target = \"anon\"",
            "target = \"mmap-exec\"\nwrite_ratio = 0.5",
            "workload[0].write_ratio",
        ),
        (
            "pages = 10\n",
            "pages = 10\nname = \"zipf-1\"\n",
            "workload[1].name",
        ),
        (
            "target = \"file\"",
            "target = \"tape\"",
            "workload[1].target",
        ),
        ("accesses = 10", "accesses = -10", "workload[1].accesses"),
        (
            "accesses = 10",
            "accesses = 10\nweight = 0",
            "workload[1].weight",
        ),
        (
            "accesses = 10",
            "accesses = 10\nweight = 1001",
            "workload[1].weight",
        ),
    ];
    for (from, to, want) in cases {
        let (msg, field) = err(&BASE.replace(from, to));
        assert_eq!(field.as_deref(), Some(want), "{to}: {msg}");
    }
    let hc = "[[workload]]\nkind = \"hot-cold\"\ntarget = \"anon\"\npages = 10\nhot_fraction = 0\nhot_probability = 0.5\naccesses = 1\n";
    let (msg, field) = err(hc);
    assert_eq!(field.as_deref(), Some("workload[0].hot_fraction"), "{msg}");
    let (msg, field) = err(&hc.replace("0.5", "2"));
    assert_eq!(field.as_deref(), Some("workload[0].hot_fraction"), "{msg}");
    let (msg, field) = err(&hc
        .replace("hot_fraction = 0", "hot_fraction = 0.5")
        .replace("0.5\naccesses", "2\naccesses"));
    assert_eq!(
        field.as_deref(),
        Some("workload[0].hot_probability"),
        "{msg}"
    );
    // A warmup as long as the workloads' known events leaves nothing to measure.
    let (msg, field) = err(&format!("warmup_events = 1_000_000_000\n{BASE}"));
    assert_eq!(field.as_deref(), Some("warmup_events"), "{msg}");
    let (msg, field) = err("seed = 1\n");
    assert_eq!(field.as_deref(), Some("workload"), "{msg}");
    let (msg, _) = err("[[workload]\n");
    assert!(msg.starts_with("s.toml: line 1"), "{msg}");
}

#[test]
fn missing_scenario_file_names_it() {
    let e = Scenario::from_file(std::path::Path::new("/nonexistent/x.toml")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.toml: cannot read"),
        "{e}"
    );
}

#[test]
fn readme_scenario_example_is_valid() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let start = readme.find("```toml\n").expect("README has a TOML example") + "```toml\n".len();
    let end = start + readme[start..].find("```").unwrap();
    let s =
        Scenario::from_toml_str(&readme[start..end], "README.md").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.warmup_events, Some(1_000_000));
    assert_eq!(s.workloads[0].weight, 3);
}

#[test]
fn the_zipf_sampler_is_a_zipf_field() {
    let text = BASE.replace("theta = 0.9", "theta = 0.9\nsampler = \"alias\"");
    let s = Scenario::from_toml_str(&text, "s.toml").unwrap_or_else(|e| panic!("{e}"));
    let WorkloadKind::Zipf { sampler, .. } = s.workloads[1].kind else {
        panic!("{:?}", s.workloads[1].kind)
    };
    assert_eq!(sampler, ZipfSampler::Alias);
    let out = s.to_toml_string();
    assert!(out.contains("sampler = \"alias\""), "{out}");
    assert_eq!(Scenario::from_toml_str(&out, "s.toml").unwrap(), s);
    // The default is not written out, so existing scenarios print as before.
    let plain = Scenario::from_toml_str(BASE, "s.toml")
        .unwrap()
        .to_toml_string();
    assert!(!plain.contains("sampler"), "{plain}");
    let (msg, field) = err(&BASE.replace("theta = 0.9", "theta = 0.9\nsampler = \"vose\""));
    assert_eq!(field.as_deref(), Some("workload[1].sampler"), "{msg}");
    assert!(
        msg.contains("unknown zipf sampler `vose`; allowed: rejection-inversion, alias"),
        "{msg}"
    );
    let (msg, field) = err(&BASE.replace("pages = 10\n", "pages = 10\nsampler = \"alias\"\n"));
    assert_eq!(field.as_deref(), Some("workload[0].sampler"), "{msg}");
    assert!(msg.contains("`sampler` does not apply to kind"), "{msg}");
}
