//! `trace_keys = "offset"`: a trace's keys replayed as page offsets in their own files,
//! so readahead (`ondemand_readahead`) and mmap read-around (`do_sync_mmap_readahead`)
//! see the real layout; the bounds on the layout and their errors.

use std::fmt::Write as _;
use std::path::PathBuf;

use mmsim_workloads::{run_scenario, RunOptions, Scenario, ScenarioResult, WorkloadError};

/// Writes `text` to a fresh file named `name` in the test's scratch directory. Each
/// call gets a file of its own (the tests run in parallel and several write the same
/// trace: a shared path could be read while another test truncates it).
fn write_trace(name: &str, text: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("trace_offset")
        .join(format!("{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A `perf script` line of `mm_filemap_get_pages` reading page `page` of inode `ino`.
fn get_pages(out: &mut String, ino: u64, page: u64) {
    let ofs = page << 12;
    writeln!(
        out,
        "  cat 1234 [000] 10.000001: filemap:mm_filemap_get_pages: dev=8:1 ino={ino:x} \
         ofs={ofs}-{}",
        ofs + 4095
    )
    .unwrap();
}

/// Two files of 16 pages read one page at a time, their reads interleaved:
/// a0 b0 a1 b1 … a15 b15.
fn interleaved() -> PathBuf {
    let mut t = String::new();
    for p in 0..16 {
        get_pages(&mut t, 0xa, p);
        get_pages(&mut t, 0xb, p);
    }
    write_trace("interleaved.txt", &t)
}

fn scenario(path: &std::path::Path, target: &str, extra: &str) -> Scenario {
    let toml = format!(
        "[machine]\nmemory = \"64M\"\n\n[[workload]]\nkind = \"trace\"\npath = {:?}\n\
         format = \"filemap\"\ntarget = \"{target}\"\n{extra}\n",
        path.display().to_string()
    );
    Scenario::from_toml_str(&toml, "t.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn run(s: &Scenario) -> ScenarioResult {
    run_scenario(s, &mut RunOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// With the layout kept, each file's sequential reads are one stream to readahead
/// (read_ahead_kb 128: ra_pages 32): the miss at page 0 reads the initial window
/// 0..=3 (`get_init_ra_size(1, 32)` = 4, marker on page 1), page 1 pushes the window to
/// 4..=11 (`get_next_ra_size(4, 32)` = 8), page 4 to 12..=15 (16 pages, cut at the end
/// of the file). One synchronous miss per file; 30 reads find their page cached.
/// Numbered by first appearance under FADV_RANDOM (the dense default) every read misses.
#[test]
fn offset_keys_let_readahead_see_each_files_stream() {
    let path = interleaved();
    let r = run(&scenario(&path, "file", "trace_keys = \"offset\""));
    let t = &r.trace[0];
    assert_eq!(t.keys, "offset");
    assert_eq!(t.files, 2);
    assert_eq!(t.layout_pages, 32);
    assert_eq!(t.skipped_beyond_limit, 0);
    assert_eq!(t.distinct, 32);
    let a = &r.result.access;
    assert_eq!((a.accesses, a.misses, a.hits), (32, 2, 30));
    assert_eq!(a.file_pages_read, 32);

    let r = run(&scenario(&path, "file", ""));
    let t = &r.trace[0];
    assert_eq!(t.keys, "dense");
    assert_eq!((t.files, t.layout_pages, t.distinct), (0, 0, 32));
    let a = &r.result.access;
    assert_eq!((a.accesses, a.misses, a.hits), (32, 32, 0));
    assert_eq!(a.file_pages_read, 32);
}

/// On a file mapping the first fault of each file reads around it
/// (`do_sync_mmap_readahead`: 32 pages from 0 with a quarter, 8, asynchronous;
/// `do_page_cache_ra` cuts the read to the file's 16 pages and
/// `page_cache_ra_unbounded` marks page 16 − 8 = 8 `PG_readahead`). The read drops the
/// lock, so the fault is retried, and the retry's fault-around (`filemap_map_pages`,
/// 64 KiB) maps 0..=15 except the marked page 8, which `next_uptodate_folio` skips so
/// that its own fault can start async readahead: 2 faults per file, 1 major. Dense
/// under MADV_RANDOM: 32 major.
#[test]
fn offset_keys_let_read_around_see_each_file() {
    let path = interleaved();
    let r = run(&scenario(&path, "mmap", "trace_keys = \"offset\""));
    let a = &r.result.access;
    assert_eq!((a.accesses, a.misses, a.hits), (32, 4, 28));
    assert_eq!(a.file_pages_read, 32);
    assert_eq!(
        (r.result.vmstat.pgmajfault, r.result.vmstat.pgfault),
        (2, 4)
    );

    let r = run(&scenario(&path, "mmap", ""));
    let a = &r.result.access;
    assert_eq!((a.accesses, a.misses, a.hits), (32, 32, 0));
    assert_eq!(
        (r.result.vmstat.pgmajfault, r.result.vmstat.pgfault),
        (32, 32)
    );
}

/// References at or beyond the per-file limit are skipped and counted: page 2^24 under
/// the default limit (2^24 pages), and pages 3 and up under `pages = 3`.
#[test]
fn offset_keys_beyond_the_limit_are_skipped_and_counted() {
    let mut t = String::new();
    for p in 0..4 {
        get_pages(&mut t, 0xa, p);
    }
    get_pages(&mut t, 0xa, 1 << 24);
    let path = write_trace("beyond.txt", &t);
    let r = run(&scenario(&path, "file", "trace_keys = \"offset\""));
    let t = &r.trace[0];
    assert_eq!((t.files, t.layout_pages, t.skipped_beyond_limit), (1, 4, 1));
    assert_eq!(r.result.access.accesses, 4);

    let r = run(&scenario(
        &path,
        "file",
        "trace_keys = \"offset\"\npages = 3",
    ));
    let t = &r.trace[0];
    assert_eq!((t.files, t.layout_pages, t.skipped_beyond_limit), (1, 3, 2));
    assert_eq!(r.result.access.accesses, 3);
}

/// 17 files each referenced at page 2^24 − 1 span 17 × 2^24 pages, more than the
/// 2^28 an offset replay may lay out: an error before any file is created.
#[test]
fn offset_layout_over_the_total_is_an_error() {
    let mut t = String::new();
    for ino in 1..=17 {
        get_pages(&mut t, ino, (1 << 24) - 1);
    }
    let path = write_trace("too-large.txt", &t);
    let e = run_scenario(
        &scenario(&path, "file", "trace_keys = \"offset\""),
        &mut RunOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, WorkloadError::Invalid { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("its 17 files span 285212672 pages")
            && msg.contains("more than the 268435456"),
        "{msg}"
    );
}

/// The scenario field: parsed, written back only when not the default, range-checked
/// under `offset`, and rejected on other kinds and with unknown values.
#[test]
fn trace_keys_field_parses_and_is_checked() {
    let path = interleaved();
    let s = scenario(&path, "file", "trace_keys = \"offset\"");
    let toml = s.to_toml_string();
    assert!(toml.contains("trace_keys = \"offset\""), "{toml}");
    let s = scenario(&path, "file", "");
    assert!(!s.to_toml_string().contains("trace_keys"));

    let bad = |extra: &str| {
        let toml = format!(
            "[[workload]]\nkind = \"trace\"\npath = \"t.txt\"\ntarget = \"file\"\n{extra}\n"
        );
        Scenario::from_toml_str(&toml, "t.toml")
            .unwrap_err()
            .to_string()
    };
    let e = bad("trace_keys = \"sparse\"");
    assert!(
        e.contains("unknown trace keys `sparse`; allowed: dense, offset"),
        "{e}"
    );
    let e = bad("trace_keys = \"offset\"\npages = 268435457");
    assert!(
        e.contains("workload[0].pages: 268435457 is out of range [1, 268435456] pages"),
        "{e}"
    );
    let e = Scenario::from_toml_str(
        "[[workload]]\nkind = \"zipf\"\npages = 10\naccesses = 10\ntrace_keys = \"offset\"\n",
        "t.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("trace_keys"), "{e}");
}

/// `trace_requests`: four 8 KiB reads at scattered offsets (pages 100, 37, 250 and
/// 180 of one file, each a two-page `mm_filemap_get_pages` range). Replayed whole, each
/// is one two-page read that is neither at the file's start nor next to the previous
/// read, so `page_cache_sync_ra` reads just the request (v6.12: a random read of
/// `req_count` pages): 8 pages read. Page by page, the second page of each read
/// follows the first (`index - prev_index <= 1`) and starts a readahead window of
/// `get_init_ra_size(1, 32)` = 4 pages.
#[test]
fn trace_requests_replay_a_ranges_pages_as_one_read() {
    let mut t = String::new();
    for page in [100u64, 37, 250, 180] {
        let ofs = page << 12;
        writeln!(
            t,
            "  pg 77 [000] 10.000001: filemap:mm_filemap_get_pages: dev=8:1 ino=5 \
             ofs={ofs}-{}",
            ofs + 8191
        )
        .unwrap();
    }
    // A last page of the file, so that it spans the reads' windows.
    writeln!(
        t,
        "  pg 77 [000] 10.000002: filemap:mm_filemap_get_pages: dev=8:1 ino=5 ofs={}-{}",
        511u64 << 12,
        (512u64 << 12) - 1
    )
    .unwrap();
    let path = write_trace("requests.txt", &t);
    let whole = run(&scenario(
        &path,
        "file",
        "trace_keys = \"offset\"\ntrace_requests = true",
    ));
    let by_page = run(&scenario(&path, "file", "trace_keys = \"offset\""));
    let (w, p) = (&whole.result.access, &by_page.result.access);
    assert_eq!(whole.trace[0].request_pages_joined, 4);
    assert_eq!(by_page.trace[0].request_pages_joined, 0);
    assert_eq!(w.file_pages_read, 9);
    assert_eq!(p.file_pages_read, 9 + 4 * 3);
    assert_eq!((w.accesses, p.accesses), (9, 9));
}

/// `trace_requests` needs the layout kept and a file target: anything else is an error
/// naming the field.
#[test]
fn trace_requests_without_offset_keys_or_a_file_is_an_error() {
    let path = interleaved();
    for (target, keys) in [("file", ""), ("mmap", "trace_keys = \"offset\"\n")] {
        let toml = format!(
            "[machine]\nmemory = \"64M\"\n\n[[workload]]\nkind = \"trace\"\npath = {:?}\n\
             format = \"filemap\"\ntarget = \"{target}\"\n{keys}trace_requests = true\n",
            path.display().to_string()
        );
        let e = Scenario::from_toml_str(&toml, "t.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("trace_requests"), "{e}");
        assert!(
            e.contains("needs trace_keys = \"offset\" and target = \"file\""),
            "{e}"
        );
    }
}

/// `trace_read_calls`: grep's read of the last 18,531 bytes of a 116,835-byte file after
/// a 96 KiB read shows as two `mm_filemap_get_pages` events, pages 24–28 then 25–28 (the
/// first `filemap_get_pages` call stopped after the `PG_readahead` page 24). Replayed as
/// two reads, pages 25–28 are read twice: the second `folio_mark_accessed` activates
/// them. With `trace_read_calls = true` the second event is skipped (counted in the
/// reader's skipped events): 29 pages read once each, none active.
#[test]
fn trace_read_calls_replay_a_read_of_several_calls_once() {
    let t = "  grep 7 [000] 1.000001: filemap:mm_filemap_get_pages: dev=8:1 ino=5 ofs=0-98303\n  \
             grep 7 [000] 1.000002: filemap:mm_filemap_get_pages: dev=8:1 ino=5 ofs=98304-116834\n  \
             grep 7 [000] 1.000003: filemap:mm_filemap_get_pages: dev=8:1 ino=5 ofs=102400-116834\n";
    let path = write_trace("read_calls.txt", t);
    let keys = "trace_keys = \"offset\"\ntrace_requests = true";
    let calls = run(&scenario(&path, "file", keys));
    let once = run(&scenario(
        &path,
        "file",
        &format!("{keys}\ntrace_read_calls = true"),
    ));
    let (c, o) = (&calls.result, &once.result);
    // Pages 0-23, 24-28, 25-28 read: 33 accesses of 29 pages, 25-28 activated (their
    // second `folio_mark_accessed`, on the LRU: `folio_activate`, counted).
    let active = |r: &mmsim_core::RunResult| (r.vmstat.pgactivate, r.vmstat.nr_active_file);
    assert_eq!((c.access.accesses, c.access.file_pages_read), (33, 29));
    assert_eq!(active(c), (4, 4));
    assert_eq!((o.access.accesses, o.access.file_pages_read), (29, 29));
    assert_eq!(active(o), (0, 0));
    assert_eq!(calls.trace[0].read.skipped_events, 0);
    assert_eq!(once.trace[0].read.skipped_events, 1);
}
