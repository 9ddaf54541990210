//! The repository stands alone: no tracked file reads or cites a directory beside the
//! checkout (the traces it needs are in `data/traces`, see its SOURCES.md). Skipped
//! outside a git checkout (e.g. a crate unpacked from a registry); CI runs it from one.

use std::path::Path;
use std::process::Command;

#[test]
fn no_tracked_file_reads_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let Ok(out) = Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["ls-files", "-z"])
        .output()
    else {
        eprintln!("git not available: check skipped");
        return;
    };
    if !out.status.success() {
        eprintln!("not a git checkout: check skipped");
        return;
    }
    // Built by parts so that this file does not match itself.
    let needles = [format!("../{}", "shared"), format!("/work/{}", "shared")];
    let mut offenders = Vec::new();
    for name in out.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name);
        if name == "data/traces/SOURCES.md" {
            continue;
        }
        let Ok(bytes) = std::fs::read(root.join(name.as_ref())) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for (line_no, line) in text.lines().enumerate() {
            if needles.iter().any(|n| line.contains(n.as_str())) {
                offenders.push(format!("{name}:{}: {}", line_no + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "tracked files read or cite a directory outside the repository:\n{}",
        offenders.join("\n")
    );
}
