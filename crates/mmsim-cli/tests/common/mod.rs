//! Helpers shared by the CLI test files: the binary, the shared traces,
//! successful JSON runs and the bad-input contract (exit status 2, a message
//! containing every needle, never a panic).
#![allow(dead_code)]

use std::path::PathBuf;

use assert_cmd::Command;

/// The `mmsim` binary under test.
pub fn mmsim() -> Command {
    Command::cargo_bin("mmsim").unwrap()
}

/// A trace of data/traces by its relative path.
pub fn trace(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/traces")
        .join(rel)
        .display()
        .to_string()
}

/// Runs, expects success, parses stdout as JSON.
pub fn json(args: &[&str]) -> serde_json::Value {
    json_with_status(args, 0)
}

/// `run`'s JSON without `host_heap_peak_bytes`: the process's peak heap depends
/// on the host's allocator and threads, not on the simulation, so two runs of
/// one scenario agree on everything else, bit for bit.
pub fn simulated(mut v: serde_json::Value) -> serde_json::Value {
    v.as_object_mut().unwrap().remove("host_heap_peak_bytes");
    v
}

/// A validation case by its name: `validation/cases/NAME.toml`.
pub fn validation_case(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../validation/cases")
        .join(format!("{name}.toml"))
        .display()
        .to_string()
}

/// `mmsim run CASE -q --json EXTRA...`: expects success, parses stdout as JSON.
pub fn run_json(case: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["run", case, "-q", "--json"];
    args.extend_from_slice(extra);
    json(&args)
}

/// Runs, expects exit status `code`, parses stdout as JSON.
#[allow(dead_code)] // not every test binary uses it
pub fn json_with_status(args: &[&str], code: i32) -> serde_json::Value {
    let out = mmsim().args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs, expects exit status 2 and a one-line error containing every
/// `needles`, no panic.
pub fn bad_input(args: &[&str], needles: &[&str]) {
    let out = mmsim().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{args:?}: expected {n:?} in: {stderr}");
    }
}

/// A text trace of `n` page numbers in `dir` (`in.txt`): a fixed
/// pseudo-random sequence (a 64-bit LCG's high bits) over 3000 pages.
pub fn random_trace(dir: &std::path::Path, n: usize) -> String {
    let mut x: u64 = 12345;
    let mut t = String::new();
    for _ in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        t.push_str(&format!("{}\n", (x >> 33) % 3000));
    }
    let p = dir.join("in.txt");
    std::fs::write(&p, t).unwrap();
    p.display().to_string()
}
