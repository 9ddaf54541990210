//! `mmsim explain`: a page's story from the CLI (`--page` for file and anon pages,
//! `--top N` with its two runs, `--json`), and its bad input.

mod common;

use common::{bad_input, json, mmsim, random_trace};

#[test]
fn top_finds_the_most_refaulted_page_and_tells_its_refaults() {
    let out = mmsim()
        .args(["explain", "zipf-file", "--top", "1", "-q"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("found by a first run"), "{text}");
    assert!(text.contains("reader:88 — page 88 of file `reader`: 4 accesses, 2 refaults"));
    // The refault's decision against the workingset size, and the eviction's reclaimer.
    assert!(text.contains("workingset_refault: refault distance 7406 ≤ workingset size 66021"));
    assert!(text.contains("__remove_mapping: evicted by kswapd at priority 9 from /"));
    // The JSON has the same story.
    let j = json(&[
        "explain",
        "zipf-file",
        "--page",
        "reader:88",
        "--json",
        "-q",
    ]);
    assert_eq!(j["schema_version"], 1);
    let p = &j["pages"][0];
    assert_eq!(p["page"], "reader:88");
    assert_eq!(p["refaults"], 2);
    let funcs: Vec<&str> = p["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["func"].as_str().unwrap())
        .collect();
    assert_eq!(
        funcs.iter().filter(|f| **f == "workingset_refault").count(),
        2
    );
    assert_eq!(
        funcs.iter().filter(|f| **f == "__remove_mapping").count(),
        2
    );
    assert_eq!(funcs[0], "filemap_read");
}

#[test]
fn anon_pages_are_named_by_task_and_address() {
    let dir = tempfile::tempdir().unwrap();
    let t = random_trace(dir.path(), 20_000);
    let args = [
        "explain",
        "--trace",
        &t,
        "--as",
        "anon",
        "--memcg-max",
        "1000p",
        "--swap",
        "zram",
        "--top",
        "1",
        "--json",
        "-q",
    ];
    let j = json(&args);
    let p = &j["pages"][0];
    let name = p["page"].as_str().unwrap().to_string();
    assert!(name.starts_with("in.txt:0x7"), "{name}");
    assert!(p["what"].as_str().unwrap().starts_with("anon page "));
    let ev = p["events"].as_array().unwrap();
    assert_eq!(ev[0]["func"], "do_anonymous_page");
    assert!(ev.iter().any(|e| e["func"] == "do_swap_page"));
    // Asking for that page by name tells the same story.
    let k = json(&[
        "explain",
        "--trace",
        &t,
        "--as",
        "anon",
        "--memcg-max",
        "1000p",
        "--swap",
        "zram",
        "--page",
        &name,
        "--json",
        "-q",
    ]);
    assert_eq!(k["pages"][0]["events"], p["events"]);
    // An address outside every mapping is an error naming the mappings.
    bad_input(
        &[
            "explain",
            "--trace",
            &t,
            "--as",
            "anon",
            "--page",
            "in.txt:0x1000",
            "-q",
        ],
        &["--page in.txt:0x1000: 0x1000 is in no mapping of task `in.txt`"],
    );
}

#[test]
fn bad_pages_name_the_page() {
    bad_input(
        &["explain", "zipf-file", "--page", "nope:1", "-q"],
        &["--page nope:1: no file `nope` in the scenario (files: reader)"],
    );
    bad_input(
        &["explain", "zipf-file", "--page", "reader:999999", "-q"],
        &["page index 999999 is out of range: file `reader` has 262144 pages"],
    );
    bad_input(
        &["explain", "zipf-file", "--page", "reader", "-q"],
        &["--page: `reader`: expected FILE:INDEX or TASK:0xVADDR"],
    );
    bad_input(&["explain", "zipf-file", "-q"], &["--page"]);
    bad_input(
        &["explain", "zipf-file", "--top", "0"],
        &["--top 0: explains nothing"],
    );
    bad_input(
        &["explain", "zipf-file", "--top", "1", "--page", "reader:1"],
        &["cannot be used with"],
    );
}
