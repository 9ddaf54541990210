//! Multi-size THP from the command line: `--set thp.…` on `run` and `compare`
//! (dense and sparse anonymous touches, the seed 003 shape: faults fall 16x, sparse
//! memory rises 16x), the `touch` workload's `stride`, and the errors of both.

mod common;

use common::{bad_input, json, mmsim};
use serde_json::Value;

/// A trace of pages 0..n (one per line) in a temporary directory.
fn trace_file(dir: &std::path::Path, n: u32) -> String {
    let p = dir.join("dense.txt");
    let text: String = (0..n).map(|i| format!("{i}\n")).collect();
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// A scenario touching `pages` of anonymous memory every `stride` pages.
fn touch_scenario(dir: &std::path::Path, pages: u32, stride: u32) -> String {
    let p = dir.join(format!("touch-{stride}.toml"));
    std::fs::write(
        &p,
        format!(
            "[machine]\nmemory = \"1G\"\n[[workload]]\nname = \"t\"\nkind = \"touch\"\n\
             target = \"anon\"\npages = {pages}\nstride = {stride}\n"
        ),
    )
    .unwrap();
    p.display().to_string()
}

/// The metric `name` of each configuration's first run in a `compare --json` report.
fn metric(report: &Value, name: &str) -> Vec<f64> {
    report["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["runs"][0]["metrics"][name].as_f64().unwrap())
        .collect()
}

#[test]
fn run_set_allocates_64k_folios_for_a_dense_anon_trace() {
    let dir = tempfile_dir("run");
    let t = trace_file(&dir, 65536);
    let base = ["run", "--trace", &t, "--as", "anon", "--json", "-q"];
    let off = json(&base);
    assert_eq!(off["vmstat"]["pgfault"], 65536);
    assert!(off.get("mthp").is_none(), "no THP report when THP is off");
    let mut args = base.to_vec();
    args.extend(["--set", "thp.hugepages-64kB.enabled=always"]);
    let on = json(&args);
    assert_eq!(on["vmstat"]["pgfault"], 4096);
    assert_eq!(on["anon_thp_pages"], 65536);
    let sizes = on["mthp"].as_array().unwrap();
    let s64 = sizes.iter().find(|s| s["size"] == "64kB").unwrap();
    assert_eq!(s64["anon_fault_alloc"], 4096);
    assert_eq!(s64["anon_fault_fallback"], 0);
    assert_eq!(sizes.len(), 8, "16kB .. 2048kB");
    // Fewer faults, each zeroing 16 pages: faster overall.
    assert!(on["runtime_s"].as_f64() < off["runtime_s"].as_f64());
    // The kernel variant as a number or a string.
    for k in ["thp.kernel=6.8", "thp.kernel=\"6.12\""] {
        let mut a = args.clone();
        a.extend(["--set", k]);
        assert_eq!(json(&a)["vmstat"]["pgfault"], 4096, "{k}");
    }
}

#[test]
fn compare_dense_faults_fall_16x_and_sparse_memory_rises_16x() {
    let dir = tempfile_dir("compare");
    let axis = ["--set", "thp.hugepages-64kB.enabled=never,always"];
    let dense = touch_scenario(&dir, 65536, 1);
    let mut args = vec!["compare", dense.as_str(), "--json"];
    args.extend(axis);
    let r = json(&args);
    assert_eq!(metric(&r, "minor_faults"), [65536.0, 4096.0]);
    assert_eq!(metric(&r, "mem_used_pages"), [65536.0, 65536.0]);
    let sparse = touch_scenario(&dir, 65536, 16);
    let mut args = vec!["compare", sparse.as_str(), "--json"];
    args.extend(axis);
    let r = json(&args);
    assert_eq!(metric(&r, "minor_faults"), [4096.0, 4096.0]);
    assert_eq!(metric(&r, "mem_used_pages"), [4096.0, 65536.0]);
    assert_eq!(metric(&r, "anon_thp_pages"), [0.0, 65536.0]);
}

#[test]
fn reproduce_003_judges_seed_003() {
    let out = mmsim().args(["reproduce", "003"]).output().unwrap();
    // Every direction agrees: the kernel build's compilers free their heaps at the end
    // of each compile (`cc_exit`), so its memory grows with 64 KiB folios as the
    // post's did (+2.6 % against +2.1 %).
    // will-it-scale: malloc1 slows down as published (its header write faults 16
    // zeroed pages); page_fault2/3, read1/2 and mmap1 do not move with anonymous
    // folios and are marked not modelled.
    assert_eq!(out.status.code(), Some(0));
    let t = String::from_utf8(out.stdout).unwrap();
    assert!(
        t.contains(
            "verdict: seed 003 reproduced: 8 of 8 published directions agree; 5 not modelled \
             (not judged)"
        ),
        "{t}"
    );
    assert!(t.starts_with("seed 003  Ryan Roberts"), "{t}");
    for needle in [
        "scenario mthp-page-fault1",
        "scenario mthp-sparse-touch",
        "scenario mthp-kbuild",
        "scenario mthp-malloc1",
        "scenario mthp-page-fault2",
        "scenario mthp-page-fault3",
        "scenario mthp-read1",
        "scenario mthp-read2",
        "scenario mthp-mmap1",
        "-47.1%     -24.9%  agrees",
        "+89.1%     +33.2%  agrees",
        "+33.8%      +0.0%  not modelled",
        "+59.1%      +0.0%  not modelled",
        "+5.5%      +0.0%  not modelled",
        "+230.4%      +0.0%  not modelled",
        "+9.2%      +0.0%  not modelled",
        "not modelled: throughput: do_cow_fault allocates an order-0 CoW page",
    ] {
        assert!(t.contains(needle), "{needle:?} in:\n{t}");
    }
}

#[test]
fn reproduce_003_under_the_rfc_v2_variant() {
    // examples/rfc003: the seed's scenarios with `compared = "thp.kernel=rfc-v2"`.
    let ex = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rfc003");
    let mut args = vec!["reproduce".to_string(), "003".to_string(), "-q".to_string()];
    for n in ["page-fault1", "sparse-touch", "kbuild", "malloc1"] {
        args.push("--scenario".into());
        args.push(ex.join(format!("mthp-{n}-rfc.toml")).display().to_string());
    }
    let out = mmsim().args(&args).output().unwrap();
    let t = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("verdict: seed 003 reproduced: 8 of 8 published directions agree"),
        "{t}"
    );
    // malloc1: the RFC's order 4 at the header write's fault, as 6.12's 64K `always`.
    assert!(t.contains("-47.1%     -24.9%  agrees"), "{t}");
    // The README's numbers: page_fault1 +300 %, the kernel build's faults -93.7 %.
    assert!(t.contains("+410.5%    +300.0%"), "{t}");
    assert!(t.contains("-53.8%     -93.7%"), "{t}");
}

#[test]
fn the_rfc_v2_variant_maps_a_large_folio_when_the_zero_page_is_written() {
    // Loads of 64 pages, then stores to them, with the zero page on: 6.12 with
    // 64K `always` copies the zero page one page at a time; the RFC v2 maps 64K.
    let dir = tempfile_dir("rfc-zero");
    let path = dir.join("rw.lackey");
    let mut text = String::new();
    for op in ["L", "S"] {
        for i in 0..64u64 {
            text.push_str(&format!(" {op} {:08x},8\n", 0x1000_0000 + i * 4096));
        }
    }
    std::fs::write(&path, text).unwrap();
    let faults = |set: &str| {
        let p = path.display().to_string();
        let v = json(&[
            "run",
            "--trace",
            &p,
            "--format",
            "lackey",
            "--as",
            "anon",
            "--set",
            "zero_page=true",
            "--set",
            set,
            "--json",
            "-q",
        ]);
        v["vmstat"]["pgfault"].as_u64().unwrap()
    };
    assert_eq!(faults("thp.hugepages-64kB.enabled=always"), 128);
    assert_eq!(faults("thp.kernel=rfc-v2"), 68);
}

#[test]
fn bad_thp_settings_name_the_key() {
    let dir = tempfile_dir("bad");
    let t = trace_file(&dir, 16);
    let run = |set: &str| -> Vec<String> {
        ["run", "--trace", &t, "--as", "anon", "--set", set]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let check = |set: &str, needles: &[&str]| {
        let args = run(set);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        bad_input(&args, needles);
    };
    check(
        "thp.hugepages-64kB.enabled=sometimes",
        &["thp.hugepages-64kB.enabled", "unknown variant `sometimes`"],
    );
    check(
        "thp.hugepages-48kB.enabled=always",
        &["unknown field `hugepages-48kB`"],
    );
    check(
        "thp.defrag=maybe",
        &["thp.defrag", "unknown variant `maybe`"],
    );
    check("thp.kernel=6.1", &["thp.kernel", "unknown kernel `6.1`"]);
    check(
        "thp.shrink_underused=maybe",
        &["machine.thp.shrink_underused", "expected a boolean"],
    );
    check("thp.kernel=\"5\"", &["thp.kernel", "unknown kernel `5`"]);
    // shrink_underused is a v6.12+ setting: off under 6.8 is an error.
    let args = run("thp.shrink_underused=false");
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend(["--set", "thp.kernel=6.8"]);
    bad_input(
        &args,
        &["machine.thp.shrink_underused", "needs machine.thp.kernel"],
    );
    // Large folios need the kernel's lists.
    let args = run("thp.enabled=always");
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend(["--policy", "lru"]);
    bad_input(&args, &["machine.thp", "`lru` policy"]);
    // touch: stride out of range.
    let s = touch_scenario(&dir, 64, 65);
    bad_input(&["run", &s], &["stride", "65 is out of range [1, 64]"]);
    let s = touch_scenario(&dir, 64, 0);
    bad_input(&["run", &s], &["stride", "0 is out of range [1, 64]"]);
}

#[test]
fn rfc_v2_settings_name_the_key() {
    let dir = tempfile_dir("bad-rfc");
    let t = trace_file(&dir, 16);
    let check = |sets: &[&str], needles: &[&str]| {
        let mut args = vec!["run", "--trace", &t, "--as", "anon"];
        for s in sets {
            args.extend(["--set", s]);
        }
        bad_input(&args, needles);
    };
    check(
        &["thp.kernel=rfc-v3"],
        &["thp.kernel", "unknown kernel `rfc-v3`", "\"rfc-v2\""],
    );
    for bad in ["1", "5", "9"] {
        check(
            &["thp.kernel=rfc-v2", &format!("thp.arch_order={bad}")],
            &[
                "machine.thp.arch_order",
                &format!("{bad} is out of range (allowed: 0 or 2..=4"),
            ],
        );
    }
    check(
        &["thp.arch_order=3"],
        &["machine.thp.arch_order", "thp.kernel = \"rfc-v2\""],
    );
    check(
        &["thp.kernel=rfc-v2", "thp.hugepages-64kB.enabled=always"],
        &["machine.thp.hugepages-64kB.enabled", "no per-size controls"],
    );
    check(
        &["thp.kernel=rfc-v2", "thp.hugepages-2048kB.enabled=never"],
        &["machine.thp.hugepages-2048kB.enabled", "top-level"],
    );
    // The RFC's large folios need the kernel's lists too.
    let mut args = vec!["run", "--trace", &t, "--as", "anon"];
    args.extend(["--set", "thp.kernel=rfc-v2", "--policy", "lru"]);
    bad_input(&args, &["machine.thp", "`lru` policy"]);
}

#[test]
fn bad_khugepaged_settings_name_the_key_and_range() {
    let dir = tempfile_dir("bad-khugepaged");
    let t = trace_file(&dir, 16);
    let check = |sets: &[&str], extra: &[&str], needles: &[&str]| {
        let mut args = vec!["run", "--trace", &t, "--as", "anon"];
        for s in sets {
            args.extend(["--set", s]);
        }
        args.extend(extra);
        bad_input(&args, needles);
    };
    for k in ["max_ptes_none", "max_ptes_swap", "max_ptes_shared"] {
        let set = format!("thp.khugepaged.{k}=512");
        check(
            &[&set],
            &[],
            &[
                &format!("machine.thp.khugepaged.{k}"),
                "512 is out of range (allowed: 0..=511",
            ],
        );
    }
    check(
        &["thp.khugepaged.pages_to_scan=0"],
        &[],
        &["machine.thp.khugepaged.pages_to_scan", "allowed: 1..="],
    );
    check(
        &[
            "thp.khugepaged.run=true",
            "thp.khugepaged.scan_sleep_millisecs=0",
        ],
        &[],
        &[
            "machine.thp.khugepaged.scan_sleep_millisecs",
            "not modelled",
        ],
    );
    check(
        &["thp.khugepaged.run=true"],
        &["--policy", "lru"],
        &["machine.thp.khugepaged.run", "`lru` policy"],
    );
    check(
        &["thp.khugepaged.pages=1"],
        &[],
        &["unknown field `pages`", "pages_to_scan"],
    );
}

/// A fresh directory under the target's temporary directory.
fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("thp-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The text report of `mmsim run`: a per-size table when a size is on (the sparse
/// touch's 64 KiB row: 256 faults that each allocated a 64 KiB folio, 4096 pages in
/// them, no fallback), and no THP lines at all when every size is never.
#[test]
fn run_text_report_has_thp_lines_only_when_a_size_is_on() {
    let dir = tempfile_dir("text");
    let s = touch_scenario(&dir, 4096, 16);
    let text = |extra: &[&str]| {
        let out = mmsim()
            .args(["run", &s, "-q"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let off = text(&[]);
    assert!(!off.contains("transparent_hugepage"), "{off}");
    assert!(!off.contains("anon_fault_alloc"), "{off}");
    let on = text(&["--set", "thp.hugepages-64kB.enabled=always"]);
    assert!(
        on.contains(
            "/sys/kernel/mm/transparent_hugepage/hugepages-<size>/stats \
             (4096 pages in large anon folios at the end)"
        ),
        "{on}"
    );
    let row: Vec<&str> = on
        .lines()
        .find(|l| l.trim_start().starts_with("64kB"))
        .unwrap_or_else(|| panic!("no 64kB row:\n{on}"))
        .split_whitespace()
        .collect();
    // size, alloc, fallback, fallback_charge, swpout, swpout_fallback, split, nr_anon
    assert_eq!(row, ["64kB", "256", "0", "0", "0", "0", "0", "256"], "{on}");
    assert!(
        !on.lines().any(|l| l.trim_start().starts_with("16kB")),
        "{on}"
    );
    // On but nothing allocated (the VMA is MADV_NOHUGEPAGE): one line says so.
    let none = text(&[
        "--set",
        "thp.hugepages-64kB.enabled=always",
        "--set",
        "thp.vma_advice=nohugepage",
    ]);
    assert!(
        none.contains("  no large folio allocated, tried or split"),
        "{none}"
    );
}

/// `machine.zero_page`: a trace replayed as anonymous memory reads its pages, so with
/// the zero page each first read maps it (as many faults, no memory), and with PMD-size
/// THP on one huge zero page maps each 2 MiB (one fault per 512 pages,
/// `thp_zero_page_alloc` once). Off (the default), the new counters are absent.
#[test]
fn zero_page_maps_reads_without_memory() {
    let dir = tempfile_dir("zero");
    let t = trace_file(&dir, 4096);
    let base = ["run", "--trace", &t, "--as", "anon", "--json", "-q"];
    let anon = |v: &Value| {
        v["vmstat"]["nr_inactive_anon"].as_u64().unwrap()
            + v["vmstat"]["nr_active_anon"].as_u64().unwrap()
    };
    let off = json(&base);
    assert_eq!(off["vmstat"]["pgfault"], 4096);
    assert_eq!(anon(&off), 4096);
    for k in [
        "thp_zero_page_alloc",
        "thp_split_pmd",
        "thp_deferred_split_page",
    ] {
        assert!(off["vmstat"].get(k).is_none(), "{k} in a default run");
    }
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend(extra);
        json(&a)
    };
    let on = with(&["--set", "machine.zero_page=true"]);
    assert_eq!(on["vmstat"]["pgfault"], 4096);
    assert_eq!(anon(&on), 0);
    let huge = with(&[
        "--set",
        "machine.zero_page=true",
        "--set",
        "thp.enabled=always",
    ]);
    assert_eq!(huge["vmstat"]["pgfault"], 8);
    assert_eq!(huge["vmstat"]["thp_zero_page_alloc"], 1);
    assert_eq!(huge["vmstat"]["thp_fault_alloc"], 0);
    assert_eq!(anon(&huge), 0);
    let no_huge = with(&[
        "--set",
        "machine.zero_page=true",
        "--set",
        "thp.enabled=always",
        "--set",
        "thp.use_zero_page=false",
    ]);
    assert_eq!(no_huge["vmstat"]["pgfault"], 4096);
    // The zero page needs the kernel's lists.
    bad_input(
        &[
            "run",
            "--trace",
            &t,
            "--as",
            "anon",
            "--set",
            "machine.zero_page=true",
            "--policy",
            "lru",
        ],
        &["machine.zero_page", "`lru` policy"],
    );
}
