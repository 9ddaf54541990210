//! The derived real-application traces of `data/realapp` can be made again from the
//! repository: `scripts/realapp/derive-grep-group` turns `grep-include.trace.zst` and
//! the exclusion list `grep-include-group.exclude` into the content of the shipped
//! `grep-include-group.trace.zst`, byte for byte, and `scripts/realapp/derive-pg-group`
//! does the same for the three pgbench captures' `NAME-group.trace.zst`
//! (`data/realapp/SOURCES.md`).
//!
//! Needs `bash` and the `zstd` command (`.ci/run` installs it): without them the test
//! fails, saying so, rather than passing unchecked.

use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e} (needs bash and zstd)"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn grep_include_group_is_derived_from_the_capture_by_its_exclusion_list() {
    let root = repo();
    let derived = run(Command::new("bash")
        .arg(root.join("scripts/realapp/derive-grep-group"))
        .current_dir(root));
    let shipped = run(Command::new("zstd")
        .arg("-dc")
        .arg(root.join("data/realapp/grep-include-group.trace.zst")));
    assert_eq!(
        derived.len(),
        shipped.len(),
        "derived and shipped sizes differ"
    );
    assert!(
        derived == shipped,
        "the derived trace differs from the shipped one"
    );
    // The list is what makes the difference: 22 files, 347 events fewer.
    let full = run(Command::new("zstd")
        .arg("-dc")
        .arg(root.join("data/realapp/grep-include.trace.zst")));
    let lines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count() as i64;
    assert_eq!(lines(&full) + 1 - lines(&shipped), 347);
    let list = std::fs::read_to_string(root.join("data/realapp/grep-include-group.exclude"))
        .expect("the exclusion list");
    let files = list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    assert_eq!(files.count(), 22);
}

/// `scripts/realapp/derive-pg-group NAME` makes each pgbench capture's shipped group trace
/// again from the capture and `NAME-group.exclude`, byte for byte; the list drops exactly
/// its files' events (all reads, faults and fault-around: no excluded file is written in
/// the run, so the ext4 events' decimal-inode form never names one).
#[test]
fn pgbench_group_traces_are_derived_from_the_captures_by_their_exclusion_lists() {
    let root = repo();
    let lines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count() as i64;
    // (capture, excluded files, their events)
    for (name, files, events) in [
        ("pgbench-S", 123, 5724),
        ("pgbench-tpcb", 123, 5797),
        ("pgbench-tpcb-fsync", 124, 5825),
    ] {
        let derived = run(Command::new("bash")
            .arg(root.join("scripts/realapp/derive-pg-group"))
            .arg(name)
            .current_dir(root));
        let shipped = run(Command::new("zstd")
            .arg("-dc")
            .arg(root.join(format!("data/realapp/{name}-group.trace.zst"))));
        assert!(
            derived == shipped,
            "{name}: the derived trace differs from the shipped one"
        );
        let full = run(Command::new("zstd")
            .arg("-dc")
            .arg(root.join(format!("data/realapp/{name}.trace.zst"))));
        // One note line more, `events` event lines fewer.
        assert_eq!(lines(&full) + 1 - lines(&shipped), events, "{name}");
        let list = std::fs::read_to_string(root.join(format!("data/realapp/{name}-group.exclude")))
            .expect("the exclusion list");
        let inos: Vec<&str> = list
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.strip_prefix("dev=254:0 ino=").expect("dev=254:0 ino=HEX"))
            .collect();
        assert_eq!(inos.len(), files, "{name}");
        let full = String::from_utf8(full).unwrap();
        let shipped = String::from_utf8(shipped).unwrap();
        for ino in &inos {
            let pat = format!(" ino={ino} ");
            assert!(full.contains(&pat), "{name}: {ino} is not in the capture");
            assert!(!shipped.contains(&pat), "{name}: {ino} is left in");
            let dec = format!(" ino {} ", u64::from_str_radix(ino, 16).unwrap());
            assert!(!full.contains(&dec), "{name}: excluded {ino} is written");
        }
    }
}
