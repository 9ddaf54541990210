//! `mmsim run --tracepoints PATTERNS --tracepoints-out FILE [--tracepoints-filter ...]`:
//! the kernel's vmscan/filemap events in `perf script` text; mmsim's own `filemap`
//! reader reads them back into the run's access sequence; the filter bounds them; the
//! results do not change; and the errors.

mod common;

use common::{bad_input, json, mmsim, random_trace};

/// The keys `mmsim trace head` reads from `path`.
fn keys(path: &str) -> Vec<u64> {
    let out = mmsim()
        .args(["trace", "head", path, "-n", "1000000"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect()
}

fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// (event name, fields) of a `perf script` line.
fn event(line: &str) -> (&str, &str) {
    let rest = &line[line.find(": ").unwrap() + 2..];
    let (name, fields) = rest.split_once(": ").unwrap();
    (name, fields)
}

/// The timestamp of a `perf script` line, s.
fn time(line: &str) -> f64 {
    let after = line.split("] ").nth(1).unwrap();
    after.split(':').next().unwrap().trim().parse().unwrap()
}

const RUN: [&str; 7] = ["--as", "file", "--memory", "16M", "--memcg-max", "4M", "-q"];

#[test]
fn the_filemap_reader_reads_back_the_runs_access_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let input = random_trace(dir.path(), 5000);
    let out = dir.path().join("tp.txt");
    let o = out.display().to_string();
    let mut args = vec!["run", "--trace", &input];
    args.extend(RUN);
    args.extend([
        "--tracepoints",
        "filemap:mm_filemap_get_pages",
        "--tracepoints-out",
        &o,
    ]);
    mmsim().args(&args).assert().success();
    let back = keys(&o);
    // The replay numbers the trace's pages in order of first reference.
    let mut seen = std::collections::HashMap::new();
    let expect: Vec<u64> = keys(&input)
        .into_iter()
        .map(|k| {
            let n = seen.len() as u64;
            *seen.entry(k).or_insert(n)
        })
        .collect();
    assert_eq!(back.len(), 5000);
    assert_eq!(back, expect);
    // Timestamps never go back, one task on CPU 0.
    let l = lines(&out);
    let t: Vec<f64> = l.iter().map(|x| time(x)).collect();
    assert!(t.windows(2).all(|w| w[0] <= w[1]));
    assert!(l.iter().all(|x| x.contains(" 1000 [000] ")));
}

#[test]
fn reclaim_events_agree_with_the_counters_and_change_no_result() {
    let dir = tempfile::tempdir().unwrap();
    let input = random_trace(dir.path(), 5000);
    let out = dir.path().join("tp.txt");
    let o = out.display().to_string();
    let mut base = vec!["run", "--trace", &input];
    base.extend(RUN);
    base.push("--json");
    let mut traced = base.clone();
    traced.extend([
        "--tracepoints",
        "vmscan:*,filemap:*",
        "--tracepoints-out",
        &o,
    ]);
    let mut with = json(&traced);
    let mut without = json(&base);
    let l = lines(&out);
    let count = |name: &str| l.iter().filter(|x| event(x).0 == name).count() as u64;
    let sum = |name: &str, field: &str| -> u64 {
        l.iter()
            .filter(|x| event(x).0 == name)
            .map(|x| {
                let f = event(x).1;
                let v = f
                    .split(' ')
                    .find_map(|kv| kv.strip_prefix(&format!("{field}=")[..]));
                v.unwrap().parse::<u64>().unwrap()
            })
            .sum()
    };
    // --memcg-max limits the top group.
    let g = &with["memcg"]["/"];
    assert!(g.is_object(), "{}", with["memcg"]);
    // Every page-cache insertion and deletion, and every scanned/reclaimed page of the
    // group's limit reclaim, is an event.
    assert_eq!(count("filemap:mm_filemap_add_to_page_cache"), 3525);
    assert_eq!(
        count("filemap:mm_filemap_add_to_page_cache")
            - count("filemap:mm_filemap_delete_from_page_cache"),
        g["file"].as_u64().unwrap()
    );
    let pgscan = g["pgscan_direct"].as_u64().unwrap() + g["pgscan_kswapd"].as_u64().unwrap();
    let pgsteal = g["pgsteal_direct"].as_u64().unwrap() + g["pgsteal_kswapd"].as_u64().unwrap();
    assert_eq!(
        sum("vmscan:mm_vmscan_lru_shrink_inactive", "nr_scanned"),
        pgscan
    );
    assert_eq!(
        sum("vmscan:mm_vmscan_lru_shrink_inactive", "nr_reclaimed"),
        pgsteal
    );
    assert_eq!(
        count("vmscan:mm_vmscan_memcg_reclaim_begin"),
        count("vmscan:mm_vmscan_memcg_reclaim_end")
    );
    assert_eq!(
        sum("vmscan:mm_vmscan_lru_shrink_active", "nr_taken"),
        g["pgrefill"].as_u64().unwrap()
    );
    for v in [&mut with, &mut without] {
        let o = v.as_object_mut().unwrap();
        o.remove("host_heap_peak_bytes");
        o.remove("machine");
    }
    assert_eq!(with, without);
}

#[test]
fn the_filter_bounds_the_events() {
    let dir = tempfile::tempdir().unwrap();
    let input = random_trace(dir.path(), 5000);
    let run = |filter: &str| -> (Vec<String>, String) {
        let out = dir.path().join("f.txt");
        let o = out.display().to_string();
        let mut args = vec!["run", "--trace", &input];
        args.extend(RUN);
        args.extend([
            "--tracepoints",
            "filemap:*,vmscan:*",
            "--tracepoints-out",
            &o,
        ]);
        args.extend(["--tracepoints-filter", filter]);
        let r = mmsim().args(&args).output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        (lines(&out), String::from_utf8_lossy(&r.stderr).into_owned())
    };
    // Pages 0-9: only filemap events of those pages (vmscan events have no page).
    let (l, _) = run("pages=0-9");
    assert_eq!(l.len(), 69);
    for x in &l {
        let (name, f) = event(x);
        assert!(name.starts_with("filemap:"), "{x}");
        let ofs = f.split(' ').find_map(|kv| kv.strip_prefix("ofs=")).unwrap();
        let first: u64 = ofs.split('-').next().unwrap().parse().unwrap();
        assert!(first >> 12 <= 9, "{x}");
    }
    // A time window.
    let (l, _) = run("from=10ms,to=20ms");
    assert_eq!(l.len(), 220);
    for x in &l {
        let t = time(x);
        assert!((0.010..0.020).contains(&t), "{x}");
    }
    // A cap: the first N kept, the rest counted.
    let (l, err) = run("max=7");
    assert_eq!(l.len(), 7);
    assert!(
        err.contains("7 events kept") && err.contains("dropped"),
        "{err}"
    );
    // Another group: nothing.
    let (l, _) = run("group=/elsewhere");
    assert!(l.iter().all(|x| !event(x).0.contains("shrink")), "{l:?}");
}

#[test]
fn errors() {
    let dir = tempfile::tempdir().unwrap();
    let input = random_trace(dir.path(), 10);
    let o = dir.path().join("tp.txt").display().to_string();
    let base = ["run", "--trace", &input, "--as", "file"];
    let with =
        |more: &[&str]| -> Vec<String> { base.iter().chain(more).map(|s| s.to_string()).collect() };
    let check = |more: &[&str], needles: &[&str]| {
        let a = with(more);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        bad_input(&a, needles);
    };
    check(
        &[
            "--tracepoints",
            "vmscan:mm_vmscan_lru_gen_scan",
            "--tracepoints-out",
            &o,
        ],
        &[
            "--tracepoints",
            "`vmscan:mm_vmscan_lru_gen_scan` names no tracepoint",
        ],
    );
    check(
        &[
            "--tracepoints",
            "vmscan:*",
            "--tracepoints-out",
            &o,
            "--tracepoints-filter",
            "pages=9-3",
        ],
        &["--tracepoints", "first page is after the last"],
    );
    check(
        &[
            "--tracepoints",
            "vmscan:*",
            "--tracepoints-out",
            &o,
            "--tracepoints-filter",
            "colour=red",
        ],
        &["--tracepoints-filter", "unknown key `colour`"],
    );
    check(
        &[
            "--tracepoints",
            "vmscan:*",
            "--tracepoints-out",
            &o,
            "--tracepoints-filter",
            "from=soon",
        ],
        &["--tracepoints-filter from=soon", "not a time"],
    );
    check(
        &[
            "--tracepoints",
            "vmscan:*",
            "--tracepoints-out",
            &o,
            "--tracepoints-filter",
            "max=0",
        ],
        &["--tracepoints", "at least 1"],
    );
    let missing = dir.path().join("no/dir/tp.txt").display().to_string();
    check(
        &["--tracepoints", "vmscan:*", "--tracepoints-out", &missing],
        &["--tracepoints-out", "does not exist"],
    );
    // --tracepoints needs a file, and the file needs --tracepoints (clap: status 2).
    let r = mmsim()
        .args(with(&["--tracepoints", "vmscan:*"]))
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--tracepoints-out"));
    let r = mmsim()
        .args(with(&["--tracepoints-out", &o]))
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
}

#[test]
fn page_cache_events_print_the_folio_order() {
    // `mm_filemap_add_to_page_cache` prints `folio_order()` (as
    // `delete_from_page_cache` does, through the same formatter, not run
    // here): a 64 KiB write into ext4's large folios is one order-4 folio,
    // sixteen order-0 ones without them.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("w.txt");
    std::fs::write(
        &input,
        "ext4_da_write_begin: dev 254,0 ino 12 pos 0 len 65536\n",
    )
    .unwrap();
    let input = input.display().to_string();
    for (large, expect) in [("true", vec!["order=4"]), ("false", vec!["order=0"; 16])] {
        let out = dir.path().join(format!("tp-{large}.txt"));
        let o = out.display().to_string();
        let lf = format!("fs.large_folios={large}");
        mmsim()
            .args([
                "run",
                "--trace",
                &input,
                "--format",
                "filemap",
                "--as",
                "file",
                "--keys",
                "offset",
                "--trace-requests",
                "--set",
                &lf,
                "-q",
                "--tracepoints",
                "filemap:mm_filemap_add_to_page_cache",
                "--tracepoints-out",
                &o,
            ])
            .assert()
            .success();
        let orders: Vec<String> = lines(&out)
            .iter()
            .map(|l| event(l).1.rsplit(' ').next().unwrap().to_string())
            .collect();
        assert_eq!(orders, expect, "large_folios={large}");
    }
}

/// The compact-mthp-always validation case.
const ALWAYS_CASE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../validation/cases/compact-mthp-always.toml"
);

/// `--tracepoints compaction:...` writes the v6.12 `compaction:` events
/// (`mmsim_core::tracepoint::compaction`) of the compact-mthp-always case's
/// direct compactions, by its faulting task; an event mmsim does not emit is refused.
#[test]
fn the_compaction_events_come_from_the_faulting_task() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tp.txt");
    let o = out.display().to_string();
    let case = ALWAYS_CASE;
    let mut args = vec!["run", case, "-q", "--tracepoints-out", &o];
    args.extend([
        "--tracepoints",
        "compaction:mm_compaction_try_to_compact_pages",
        "--tracepoints-filter",
        "max=3",
    ]);
    mmsim().args(&args).assert().success();
    let got = lines(&out);
    assert_eq!(got.len(), 3, "{got:#?}");
    for l in &got {
        assert!(l.starts_with("            anon    1002 [000] "), "{l}");
        assert_eq!(
            event(l),
            (
                "compaction:mm_compaction_try_to_compact_pages",
                "order=4 gfp_mask=GFP_TRANSHUGE|__GFP_NORETRY priority=2"
            )
        );
    }
    let mut bad = args.clone();
    bad[6] = "compaction:mm_compaction_isolate_migratepages";
    bad_input(
        &bad,
        &[
            "--tracepoints",
            "`compaction:mm_compaction_isolate_migratepages` names no tracepoint",
        ],
    );
}

/// `--tracepoints kmem:mm_page_alloc_extfrag` writes v6.12's extfrag event
/// (`mmsim_core::tracepoint::kmem`) of every fallback to another migrate
/// type: on compact-mthp-always with page tables in unmovable frames, the
/// first page table of the anonymous task claims a movable pageblock, and a
/// 64 KiB folio claims back a part of it (the back and forth of issue #13).
#[test]
fn the_extfrag_event_shows_page_tables_and_mthp_claiming_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("extfrag.txt");
    let o = out.display().to_string();
    let mut args = [
        "run",
        ALWAYS_CASE,
        "-q",
        "--set",
        "machine.kmem_accounting=true",
        "--set",
        "machine.pagetable_frames=true",
        "--tracepoints",
        "kmem:mm_page_alloc_extfrag",
        "--tracepoints-filter",
        "max=2",
        "--tracepoints-out",
        &o,
    ];
    mmsim().args(args).assert().success();
    assert_eq!(
        lines(&out),
        [
            "            anon    1002 [000]    18.275179: kmem:mm_page_alloc_extfrag: \
             page=0xffffea0004698000 pfn=0x11a600 alloc_order=0 fallback_order=9 \
             pageblock_order=9 alloc_migratetype=0 fallback_migratetype=1 fragmenting=0 \
             change_ownership=1",
            "            anon    1002 [000]    18.303339: kmem:mm_page_alloc_extfrag: \
             page=0xffffea0004698800 pfn=0x11a620 alloc_order=4 fallback_order=8 \
             pageblock_order=9 alloc_migratetype=1 fallback_migratetype=0 fragmenting=1 \
             change_ownership=1",
        ]
    );
    // `mm_page_alloc_zone_locked` is not emitted (`mm_page_alloc` is:
    // tracepoints_page_alloc.rs).
    args[8] = "kmem:mm_page_alloc_zone_locked";
    bad_input(
        &args,
        &[
            "--tracepoints",
            "`kmem:mm_page_alloc_zone_locked` names no tracepoint",
        ],
    );
}
