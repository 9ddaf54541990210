//! BAD_INPUT.md stays true: every row with a command is run in a copy of
//! `tests/bad_input/`, and its exit status and first line of standard error must be
//! the table's. `MMSIM_BAD_INPUT_UPDATE=1` rewrites those two columns instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The cells of a table row, split on `|` not escaped as `\|`.
fn cells(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => out.push(String::new()),
            _ => out.last_mut().unwrap().push(c),
        }
    }
    out.iter().map(|c| c.trim().to_string()).collect()
}

/// `mmsim ARGS [> FILE]` from a command cell: arguments split on spaces, `''` for
/// an empty one; the file standard output goes to, if redirected.
fn parse_command(cell: &str) -> Option<(Vec<String>, Option<String>)> {
    let cmd = cell.strip_prefix("`mmsim ")?.strip_suffix('`')?;
    let (cmd, redirect) = match cmd.split_once(" > ") {
        Some((c, f)) => (c, Some(f.trim().to_string())),
        None => (cmd, None),
    };
    let args = cmd
        .split_whitespace()
        .map(|a| {
            if a == "''" {
                String::new()
            } else {
                a.to_string()
            }
        })
        .collect();
    Some((args, redirect))
}

/// Exit status and the first line of standard error (`(nothing)` if empty).
fn run(dir: &Path, args: &[String], redirect: Option<&str>) -> (i32, String) {
    let stdout = match redirect {
        Some(f) => Stdio::from(std::fs::OpenOptions::new().write(true).open(f).unwrap()),
        None => Stdio::null(),
    };
    let out = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .current_dir(dir)
        .stdout(stdout)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    let first = stderr.lines().next().unwrap_or("(nothing)").to_string();
    (out.status.code().unwrap_or(-1), first)
}

#[test]
fn every_row_of_bad_input_md_is_what_mmsim_says() {
    let path = repo_root().join("BAD_INPUT.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let fixtures = repo_root().join("crates/mmsim-cli/tests/bad_input");
    let dir = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(&fixtures).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.path().join(e.file_name())).unwrap();
    }
    let update = std::env::var_os("MMSIM_BAD_INPUT_UPDATE").is_some();
    let (mut rows, mut commands, mut wrong) = (0, 0, Vec::new());
    let mut rewritten = String::new();
    for line in text.lines() {
        let c = cells(line);
        let is_row = c.len() == 8 && c[1].parse::<u32>().is_ok();
        let parsed = if is_row { parse_command(&c[3]) } else { None };
        let Some((args, redirect)) = parsed else {
            rows += usize::from(is_row);
            rewritten.push_str(line);
            rewritten.push('\n');
            continue;
        };
        rows += 1;
        commands += 1;
        let (code, message) = run(dir.path(), &args, redirect.as_deref());
        let message_cell = message.replace('|', "\\|");
        if c[4] != code.to_string() || c[5] != message {
            wrong.push(format!(
                "row {}: `{}`\n  table: exit {}, {}\n  mmsim: exit {code}, {message_cell}",
                c[1], c[3], c[4], c[5]
            ));
        }
        rewritten.push_str(&format!(
            "| {} | {} | {} | {code} | {message_cell} | {} |\n",
            c[1], c[2], c[3], c[6]
        ));
    }
    // The failed conversion left the existing output alone.
    assert_eq!(
        std::fs::read(dir.path().join("existing.mmt")).unwrap(),
        std::fs::read(fixtures.join("existing.mmt")).unwrap()
    );
    assert!(
        rows >= 40,
        "BAD_INPUT.md has {rows} rows; the issue asks for 40"
    );
    assert!(commands >= 40, "only {commands} rows are checked here");
    if update {
        std::fs::write(&path, rewritten).unwrap();
    } else {
        assert!(
            wrong.is_empty(),
            "BAD_INPUT.md differs from what mmsim says (MMSIM_BAD_INPUT_UPDATE=1 rewrites it):\n{}",
            wrong.join("\n")
        );
    }
}
