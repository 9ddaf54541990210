//! `mmsim trace info | head | convert | formats`: exact numbers on real traces, the
//! one-pass curve against `mmsim run`, the native round trip, and every error path.

mod common;

use common::{bad_input, json, mmsim, simulated, trace};

use predicates::prelude::*;

#[test]
fn info_on_sprite_matches_the_readme_and_lru_runs() {
    let sprite = trace("lirs/sprite.trace.gz");
    let info = json(&[
        "trace",
        "info",
        &sprite,
        "--format",
        "lirs",
        "--sizes",
        "100,400,1000",
        "--json",
    ]);
    assert_eq!(info["format"], "lirs");
    assert!(info.get("sniffed").is_none(), "format was given");
    assert_eq!(info["compression"], "gzip");
    assert_eq!(info["references"], 133_996);
    assert_eq!(info["writes"], 0);
    assert_eq!(info["footprint_pages"], 7_075);
    assert_eq!(info["cold"], 7_075);
    // The traces README: LRU hit % at 100, 400 and 1000 entries.
    let hits: Vec<u64> = info["lru_mrc"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["hits"].as_u64().unwrap())
        .collect();
    let pct: Vec<String> = hits
        .iter()
        .map(|h| format!("{:.2}", *h as f64 * 100.0 / 133_996.0))
        .collect();
    assert_eq!(pct, ["21.58", "70.77", "90.64"]);
    // And each row equals a full simulation at that size.
    for (size, h) in [100u64, 400, 1000].iter().zip(&hits) {
        let run = json(&[
            "run",
            "--trace",
            &sprite,
            "--policy",
            "lru",
            "--memcg-max",
            &format!("{size}p"),
            "--json",
        ]);
        assert_eq!(run["hits"].as_u64().unwrap(), *h, "size {size}");
    }
}

/// The miss ratios of `trace info --json`'s LRU curve, in size order.
fn curve(v: &serde_json::Value) -> Vec<f64> {
    v["lru_mrc"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["miss_ratio"].as_f64().unwrap())
        .collect()
}

/// `--sample RATE`: SHARDS estimates of the curve. At rate 1 it is the exact curve; at
/// 0.1 on OLTP (914 k references, 187 k pages) every point is within 0.005 of the exact
/// miss ratio (the sample is a fixed function of the keys, so these numbers are too).
#[test]
fn sampled_info_estimates_the_exact_curve() {
    let oltp = trace("arc/OLTP.lis.zst");
    let info = |extra: &[&str]| {
        let mut args = vec!["trace", "info", oltp.as_str(), "--json"];
        args.extend_from_slice(extra);
        json(&args)
    };
    let exact = info(&[]);
    assert!(exact.get("sample").is_none());
    let full = info(&["--sample", "1"]);
    assert_eq!(curve(&full), curve(&exact));
    assert_eq!(full["footprint_pages"], exact["footprint_pages"]);

    let est = info(&["--sample", "0.1"]);
    let s = &est["sample"];
    assert_eq!(s["method"], "SHARDS_adj, fixed rate");
    // The rate in effect: 0.1 × 2^24 buckets, rounded.
    assert_eq!(s["rate"].as_f64().unwrap(), 1_677_722.0 / 16_777_216.0);
    let sampled = s["sampled_references"].as_u64().unwrap();
    assert!((80_000..100_000).contains(&sampled), "{sampled}");
    assert_eq!(est["references"], exact["references"]);
    let (a, b) = (curve(&exact), curve(&est));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 0.005, "exact {x} vs sampled {y}");
    }
    let (fe, fs) = (
        exact["footprint_pages"].as_f64().unwrap(),
        est["footprint_pages"].as_f64().unwrap(),
    );
    assert!((fs / fe - 1.0).abs() < 0.01, "{fs} vs {fe}");

    mmsim()
        .args(["trace", "info", &oltp, "--sample", "0.01"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "sample       SHARDS_adj, fixed rate at rate 0.01",
        ))
        .stdout(predicate::str::contains(
            "LRU miss-ratio curve, estimated from the sample",
        ));
}

/// `--sample-size N`: fixed-size SHARDS holds at most N keys whatever the footprint,
/// lowering its rate as keys arrive, and its curve stays near the exact one.
#[test]
fn fixed_size_sampled_info_holds_at_most_n_keys() {
    let oltp = trace("arc/OLTP.lis.zst");
    let exact = json(&["trace", "info", &oltp, "--json"]);
    let est = json(&["trace", "info", &oltp, "--sample-size", "16384", "--json"]);
    let s = &est["sample"];
    assert_eq!(s["method"], "SHARDS_adj, fixed size");
    assert_eq!(s["max_keys"], 16384);
    assert_eq!(
        s["sampled_keys"], 16384,
        "a footprint larger than the sample fills it"
    );
    let footprint = exact["footprint_pages"].as_f64().unwrap();
    let rate = s["rate"].as_f64().unwrap();
    assert!(
        rate < 1.0 && (rate * footprint / 16384.0 - 1.0).abs() < 0.1,
        "{rate}"
    );
    for (x, y) in curve(&exact).iter().zip(&curve(&est)) {
        assert!((x - y).abs() < 0.01, "exact {x} vs sampled {y}");
    }
    let fs = est["footprint_pages"].as_f64().unwrap();
    assert!((fs / footprint - 1.0).abs() < 0.05, "{fs} vs {footprint}");
    mmsim()
        .args(["trace", "info", &oltp, "--sample-size", "16384"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "sample       SHARDS_adj, fixed size of at most 16,384 keys, rate ",
        ));
}

#[test]
fn info_text_says_what_was_detected_and_skipped() {
    mmsim()
        .args(["trace", "info", &trace("lirs/cs.trace.gz")])
        .assert()
        .success()
        .stdout(predicate::str::contains("format       lirs (detected: "))
        .stdout(predicate::str::contains("skipped      2 markers"))
        .stdout(predicate::str::contains(
            "footprint    1,409 distinct pages",
        ))
        .stdout(predicate::str::contains("LRU miss-ratio curve"));
}

#[test]
fn info_splits_block_requests_and_counts_writes() {
    let info = json(&[
        "trace",
        "info",
        &trace("msr-sample/msr-cambridge1-sample.csv"),
        "--json",
    ]);
    assert_eq!(info["format"], "msr");
    // Independently (Python over the csv): 1,000 requests touch 2,473 pages, 936 of
    // them by writes, 1,917 distinct.
    assert_eq!(info["read"]["records"], 1_000);
    assert_eq!(info["references"], 2_473);
    assert_eq!(info["writes"], 936);
    assert_eq!(info["reads"], 2_473 - 936);
    assert_eq!(info["footprint_pages"], 1_917);
}

#[test]
fn head_prints_records_with_access_type() {
    let out = mmsim()
        .args([
            "trace",
            "head",
            &trace("memsim-spec/gcc.trace.gz"),
            "-n",
            "3",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 3, "{text}");
    for l in &lines {
        let (key, rw) = l.split_once(' ').unwrap();
        key.parse::<u64>().unwrap();
        assert!(rw == "R" || rw == "W", "{l}");
    }
    assert!(
        text.starts_with("# "),
        "the detected format is said: {text}"
    );
}

#[test]
fn convert_to_native_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oltp.mmsim");
    let oltp = trace("arc/OLTP.lis.zst");
    mmsim()
        .args(["trace", "convert", &oltp, out.to_str().unwrap()])
        .assert()
        .success()
        .stderr(predicate::str::contains("914145 references"));
    let a = json(&["trace", "info", &oltp, "--sizes", "1000,5000", "--json"]);
    assert_eq!(
        a["schema_version"], 1,
        "every JSON output carries its layout version"
    );
    let b = json(&[
        "trace",
        "info",
        out.to_str().unwrap(),
        "--sizes",
        "1000,5000",
        "--json",
    ]);
    assert_eq!(b["format"], "native");
    for k in [
        "references",
        "writes",
        "footprint_pages",
        "cold",
        "lru_mrc",
        "reuse_distance",
    ] {
        assert_eq!(a[k], b[k], "{k}");
    }
    // The native trace replays to the ARC paper's number too.
    let run = json(&[
        "run",
        "--trace",
        out.to_str().unwrap(),
        "--policy",
        "lru",
        "--memcg-max",
        "1000p",
        "--json",
    ]);
    assert_eq!(run["hits"], 300_122);
    // It does not overwrite without --force, nor its own input.
    bad_input(
        &["trace", "convert", &oltp, out.to_str().unwrap()],
        &["exists", "--force"],
    );
    bad_input(
        &[
            "trace",
            "convert",
            out.to_str().unwrap(),
            out.to_str().unwrap(),
            "--force",
        ],
        &["overwrite the input"],
    );
    // --limit converts a prefix.
    mmsim()
        .args([
            "trace",
            "convert",
            &oltp,
            out.to_str().unwrap(),
            "--force",
            "--limit",
            "10",
        ])
        .assert()
        .success();
    let c = json(&["trace", "info", out.to_str().unwrap(), "--json"]);
    assert_eq!(c["references"], 10);
}

#[test]
fn formats_lists_every_format() {
    let out = mmsim().args(["trace", "formats"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for name in mmsim_trace::Format::NAMES {
        assert!(text.contains(name), "{name} missing from {text}");
    }
}

#[test]
fn trace_errors_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("bad.lis");
    std::fs::write(&garbage, "1 2 3 4\n5 6 7 8\nnot a line\n").unwrap();
    let g = garbage.to_str().unwrap();
    bad_input(
        &["trace", "info", g, "--format", "arc"],
        &["bad.lis", "line 3"],
    );
    bad_input(
        &["trace", "info", "/nonexistent/t.trace"],
        &["/nonexistent/t.trace"],
    );
    bad_input(&["trace", "info", g, "--format", "nope"], &["nope"]);
    bad_input(&["trace", "info", g, "--sizes", "0,10"], &["--sizes"]);
    bad_input(&["trace", "info", g, "--limit", "0"], &["--limit"]);
    for r in ["0", "-0.5", "2", "nan"] {
        bad_input(
            &["trace", "info", "/nonexistent/t.trace", "--sample", r],
            &["--sample", "out of range"],
        );
    }
    for n in ["0", "-3", "67108865"] {
        bad_input(
            &["trace", "info", "/nonexistent/t.trace", "--sample-size", n],
            &["--sample-size", "out of range"],
        );
    }
    bad_input(
        &[
            "trace",
            "info",
            "/nonexistent/t.trace",
            "--sample",
            "0.1",
            "--sample-size",
            "100",
        ],
        &["--sample and --sample-size"],
    );
    bad_input(&["trace", "head", g, "-n", "0"], &["-n 0"]);
    let truncated = dir.path().join("t.bin");
    std::fs::write(&truncated, [0u8; 30]).unwrap();
    bad_input(
        &[
            "trace",
            "info",
            truncated.to_str().unwrap(),
            "--format",
            "oracle-general",
        ],
        &["t.bin", "record 2"],
    );
}

/// `--format csv --csv-columns`: any tsv of string keys, read by the columns it is
/// told, with the flag's own errors.
#[test]
fn csv_columns_read_any_delimited_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv.tsv");
    std::fs::write(
        &path,
        "time\tkey\top\n1\tuser:1\tGET\n2\tuser:2\tSET\n3\tuser:1\tget\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let spec = "key=2,op=3,delimiter=tab,header,key-is-num=false";
    let info = json(&[
        "trace",
        "info",
        p,
        "--format",
        "tsv",
        "--csv-columns",
        spec,
        "--json",
    ]);
    assert_eq!(info["references"], 3);
    assert_eq!(info["writes"], 1);
    assert_eq!(info["read"]["writes"], 1);
    assert_eq!(info["read"]["skipped_headers"], 1);
    assert_eq!(info["footprint_pages"], 2);
    bad_input(
        &["trace", "head", p, "--format", "csv"],
        &["--format csv needs --csv-columns"],
    );
    bad_input(
        &[
            "trace",
            "head",
            p,
            "--format",
            "text",
            "--csv-columns",
            "key=1",
        ],
        &["--csv-columns is for --format csv"],
    );
    bad_input(
        &[
            "trace",
            "head",
            p,
            "--format",
            "csv",
            "--csv-columns",
            "kee=2",
        ],
        &["--csv-columns", "unknown csv column setting `kee`"],
    );
    // Without `header`, the header line is an operation that is no access.
    bad_input(
        &[
            "trace",
            "head",
            p,
            "--format",
            "csv",
            "--csv-columns",
            "key=2,op=3,delimiter=tab,key-is-num=false",
        ],
        &["kv.tsv: line 1", "an operation in column 3", "\"op\""],
    );
}

/// `-` is standard input for `trace` and `run --trace`; `compare` refuses it, since it
/// would read the stream once and then replay an empty trace.
#[test]
fn dash_reads_standard_input() {
    let keys = "1\n2\n1\n3\n1\n2\n";
    let out = mmsim()
        .args(["trace", "info", "-", "--sizes", "2", "--json"])
        .write_stdin(keys)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["references"], 6);
    assert_eq!(info["footprint_pages"], 3);
    // Stack distances 1 2 1 3 1 2 -> at 2 entries: hits at refs 3 and 5.
    assert_eq!(info["lru_mrc"][0]["hits"], 2);
    let out = mmsim()
        .args([
            "run",
            "--trace",
            "-",
            "--policy",
            "lru",
            "--memcg-max",
            "2p",
            "--json",
            "-q",
        ])
        .write_stdin(keys)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (run["hits"].as_u64(), run["misses"].as_u64()),
        (Some(2), Some(4))
    );
    let out = mmsim()
        .args([
            "compare",
            "--trace",
            "-",
            "--policy",
            "lru,cost",
            "--memcg-max",
            "2p",
        ])
        .write_stdin(keys)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("standard input can be read once"));
}

/// `trace convert` never destroys what it was not asked to change: a bad input leaves
/// an existing output byte-identical, a symlink's target is written in place (the
/// link kept), devices, pipes and directories are refused even with --force, and no
/// temporary file is left behind.
#[cfg(unix)]
#[test]
fn convert_writes_whole_outputs_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = d.join("keys.txt");
    std::fs::write(&good, "1\n2\n3\n2\n").unwrap();
    let bad = d.join("bad.txt");
    std::fs::write(&bad, "1\n2\nnot a key\n").unwrap();
    let keep = d.join("keep.bin");
    std::fs::write(&keep, "precious").unwrap();
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    // A bad input: the existing output is untouched, even with --force.
    bad_input(
        &[
            "trace",
            "convert",
            &s(&bad),
            &s(&keep),
            "--force",
            "--format",
            "text",
        ],
        &["line 3", "not a key"],
    );
    assert_eq!(std::fs::read(&keep).unwrap(), b"precious");
    // Without --force an existing output is refused.
    bad_input(
        &["trace", "convert", &s(&good), &s(&keep)],
        &["exists; use --force"],
    );
    // A symlink: its target is rewritten, the link stays a link.
    let link = d.join("link.bin");
    std::os::unix::fs::symlink("keep.bin", &link).unwrap();
    mmsim()
        .args(["trace", "convert", &s(&good), &s(&link), "--force"])
        .assert()
        .success();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let v = json(&["trace", "info", &s(&keep), "--json"]);
    assert_eq!(
        (v["format"].as_str(), v["references"].as_u64()),
        (Some("native"), Some(4))
    );
    // Not regular files: refused whatever the flags.
    for (out, why) in [
        ("/dev/full", "not a regular file"),
        ("/dev/null", "not a regular file"),
        (d.to_str().unwrap(), "is a directory"),
    ] {
        bad_input(
            &["trace", "convert", &s(&good), out, "--force"],
            &[out, why],
        );
    }
    // Nothing but the files made here is left in the directory.
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["bad.txt", "keep.bin", "keys.txt", "link.bin"]);
}

/// Ctrl-C during `trace convert` exits 130 and leaves the existing output as it was,
/// with no partial or temporary file.
///
/// No sleeps: writing more than a pipe's worth of input returns only once the child is
/// reading (so its handler is installed), and after the signal the child never sees the
/// end of its input until it has exited — the `ctrlc` thread may set the flag late under
/// load, and an early end of input would let the conversion finish instead.
#[cfg(unix)]
#[test]
fn convert_interrupted_leaves_the_output_alone() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bin");
    std::fs::write(&out, "precious").unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("mmsim"))
        .args([
            "trace",
            "convert",
            "-",
            out.to_str().unwrap(),
            "--force",
            "--format",
            "text",
        ])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let keys: String = (0..200_000).map(|k| format!("{k}\n")).collect();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(keys.as_bytes()).unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    // Feed input until the child stops reading (a broken pipe once it exited); bounded so
    // that a child that ignores Ctrl-C fails the test below instead of hanging it.
    for _ in 0..2_000 {
        if stdin.write_all(keys.as_bytes()).is_err() {
            break;
        }
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted (Ctrl-C)"), "{stderr}");
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// A filemap trace's `ext4_writepages` (the program's own fsync or sync_file_range) are
/// replayed as syncs when the files are kept, and the text report counts them; a dense
/// replay skips them as other events.
#[test]
fn run_reports_the_syncs_of_a_filemap_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sync.txt");
    let text = "  pg 7 [000] 1.0: filemap:mm_filemap_get_pages: dev=8:1 ino=a ofs=0-8191\n\
                \x20 pg 7 [000] 1.1: ext4:ext4_da_write_begin: dev 8,1 ino 10 pos 0 len 4096\n\
                \x20 pg 7 [000] 1.2: ext4:ext4_writepages: dev 8,1 ino 10 nr_to_write 1 \
                pages_skipped 0 range_start 0 range_end 9223372036854775807 sync_mode 1 \
                for_kupdate 0 range_cyclic 0 writeback_index 0\n";
    std::fs::write(&path, text).unwrap();
    let p = path.to_str().unwrap();
    mmsim()
        .args(["run", "--trace", p, "--keys", "offset"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "references        4 (1 writes, 1 syncs: the program's fsync or sync_file_range)",
        ));
    let dense = json(&["run", "--trace", p, "--json", "-q"]);
    assert_eq!(dense["trace"][0]["skipped_events"], 1);
    assert!(dense["trace"][0].get("syncs").is_none());
}

/// `mmsim run --trace T --keys offset`: a filemap trace of two files read page by page,
/// interleaved, keeps each file's layout (one readahead miss per file instead of 32
/// misses), says so in the text and JSON reports, and refuses bad modes, `--keys`
/// without `--trace`, and standard input (which cannot be read twice).
#[test]
fn run_keys_offset_keeps_the_files_layout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two-files.txt");
    let mut text = String::new();
    for page in 0..16u64 {
        for ino in ["a", "b"] {
            let ofs = page << 12;
            text += &format!(
                "  cat 1234 [000] 10.000001: filemap:mm_filemap_get_pages: dev=8:1 ino={ino} \
                 ofs={ofs}-{}\n",
                ofs + 4095
            );
        }
    }
    std::fs::write(&path, &text).unwrap();
    let p = path.to_str().unwrap();

    let offset = json(&["run", "--trace", p, "--keys", "offset", "--json", "-q"]);
    assert_eq!(offset["misses"], 2);
    assert_eq!(offset["hits"], 30);
    let t = &offset["trace"][0];
    assert_eq!(t["keys"], "offset");
    assert_eq!(t["files"], 2);
    assert_eq!(t["layout_pages"], 32);
    let dense = json(&["run", "--trace", p, "--json", "-q"]);
    assert_eq!(dense["misses"], 32);
    assert_eq!(dense["trace"][0]["keys"], "dense");

    mmsim()
        .args(["run", "--trace", p, "--keys", "offset"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "keys              offset: page offsets in 2 file(s) of 32 pages; 0 references \
             beyond the per-file limit skipped",
        ));
    mmsim()
        .args(["run", "--trace", p])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "keys              dense (numbered by first appearance)",
        ));

    bad_input(
        &["run", "--trace", p, "--keys", "sparse"],
        &[
            "--keys",
            "unknown trace keys `sparse`; allowed: dense, offset",
        ],
    );
    mmsim()
        .args(["run", "--keys", "offset"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--trace <PATH>"));
    mmsim()
        .args(["run", "--trace", "-", "--keys", "offset"])
        .write_stdin(text)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "trace_keys: `offset` reads the trace twice (once for its layout): give a file, \
             not standard input",
        ));
}

#[test]
fn dense_keys_replay_to_the_same_result_without_a_key_table() {
    let dir = tempfile::tempdir().unwrap();
    let dense = dir.path().join("cp.dense.mmsim");
    let src = trace("libcachesim/cloudPhysicsIO.oracleGeneral.bin");
    mmsim()
        .args([
            "trace",
            "convert",
            &src,
            "--format",
            "oracle-general",
            dense.to_str().unwrap(),
            "--dense-keys",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("113872 references"));
    for (policy, target) in [("lru", "file"), ("cost", "anon"), ("mglru", "file")] {
        let run = |path: &str, format: &str| {
            let mut v = simulated(json(&[
                "run",
                "--trace",
                path,
                "--format",
                format,
                "--policy",
                policy,
                "--as",
                target,
                "--memcg-max",
                "2000p",
                "--json",
            ]));
            // The trace's own description differs (path, format, compression), and
            // the workload is named after the file.
            v.as_object_mut().unwrap().remove("trace");
            v["workloads"][0]["name"] = serde_json::Value::Null;
            v
        };
        let a = run(&src, "oracle-general");
        let b = run(dense.to_str().unwrap(), "native");
        assert_eq!(a, b, "{policy} {target}");
    }
    // `trace info` says the keys are dense (text and JSON), and only for such a trace;
    // the analysis is the same.
    let info = json(&["trace", "info", dense.to_str().unwrap(), "--json"]);
    assert_eq!(info["dense_keys"], true);
    let plain = json(&["trace", "info", &src, "--json"]);
    assert!(plain.get("dense_keys").is_none(), "{plain}");
    assert_eq!(info["lru_mrc"], plain["lru_mrc"]);
    assert_eq!(info["footprint_pages"], plain["footprint_pages"]);
    mmsim()
        .args(["trace", "info", dense.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("keys         dense"));
}
