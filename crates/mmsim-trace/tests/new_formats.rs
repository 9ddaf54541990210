//! Exact counts for the formats added after text/lirs/arc/oracle-general, on the real traces
//! in `data/traces` (see its README.md and SOURCES.md) or on small excerpts written here. The
//! expected numbers were computed independently (a short Python script over the same
//! files: struct/csv parsing, page = byte offset // 4096), not copied from the reader.

use std::collections::HashSet;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use mmsim_trace::filemap::key as file_key;
use mmsim_trace::{convert, Format, NativeWriter, ReadOptions, ReadStats, Record, TraceReader};

const TRACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces");

fn trace(rel: &str) -> PathBuf {
    let p = Path::new(TRACES).join(rel);
    assert!(p.exists(), "real trace {} is missing", p.display());
    p
}

/// Reads a whole trace: stats, distinct keys, the first 12 records.
fn summary(mut reader: TraceReader) -> (ReadStats, usize, Vec<Record>) {
    let mut distinct = HashSet::new();
    let mut first = Vec::new();
    let mut batch = Vec::new();
    let mut writes = 0u64;
    while reader.read_batch(&mut batch, 4093).unwrap() > 0 {
        for r in &batch {
            distinct.insert(r.key);
            writes += u64::from(r.write);
            if first.len() < 12 {
                // Keys and writes are what these summaries check; `cont` is checked in
                // `filemap_excerpts` and in the reader's own tests.
                first.push(Record { cont: false, ..*r });
            }
        }
    }
    let stats = reader.stats().clone();
    assert_eq!(stats.writes, writes);
    (stats, distinct.len(), first)
}

fn open(rel: &str, format: Format) -> (ReadStats, usize, Vec<Record>) {
    summary(TraceReader::open(&trace(rel), format).unwrap())
}

fn rec(key: u64, write: bool) -> Record {
    Record {
        key,
        write,
        cont: false,
        fault: false,
        sync: mmsim_trace::SyncSpan::NONE,
    }
}

#[test]
fn vscsi_cloudphysics_split_into_pages() {
    let (s, distinct, first) = open("libcachesim/cloudPhysicsIO.vscsi", Format::Vscsi);
    assert_eq!(s.records, 113_872);
    assert_eq!(s.references, 1_141_869);
    assert_eq!(s.writes, 656_169);
    assert_eq!(distinct, 269_210);
    assert_eq!(s.skipped_commands + s.skipped_zero_length, 0);
    // Records 1-3: WRITE(10) of 512 bytes at sectors 42932745..=42932747 (one page,
    // 5366593, three times); record 4: 6656 bytes at sector 40409911 = bytes
    // 20689874432..20689881088, pages 5051238..=5051240; record 5: 6144 bytes at sector
    // 31954535, pages 3994316..=3994318.
    let want = [
        (5_366_593, true),
        (5_366_593, true),
        (5_366_593, true),
        (5_051_238, true),
        (5_051_239, true),
        (5_051_240, true),
        (3_994_316, true),
        (3_994_317, true),
        (3_994_318, true),
        (779_774, true),
        (779_775, true),
        (779_776, true),
    ];
    assert_eq!(first, want.map(|(k, w)| rec(k, w)));
}

#[test]
fn libcachesim_csv_is_the_vscsi_trace() {
    let (s, distinct, _) = open("libcachesim/cloudPhysicsIO.csv", Format::LibCacheSimCsv);
    assert_eq!(s.records, 113_873); // the header line too
    assert_eq!(s.skipped_headers, 1);
    assert_eq!(s.references, 1_141_869);
    assert_eq!(s.writes, 656_169);
    assert_eq!(distinct, 269_210);
    // Record for record the same references.
    let a = TraceReader::open(
        &trace("libcachesim/cloudPhysicsIO.csv"),
        Format::LibCacheSimCsv,
    )
    .unwrap();
    let b = TraceReader::open(&trace("libcachesim/cloudPhysicsIO.vscsi"), Format::Vscsi).unwrap();
    assert!(a.map(Result::unwrap).eq(b.map(Result::unwrap)));
}

#[test]
fn msr_sample_split_into_pages() {
    let (s, distinct, first) = open("msr-sample/msr-cambridge1-sample.csv", Format::Msr);
    assert_eq!(s.records, 1000);
    assert_eq!(s.references, 2473);
    assert_eq!(s.writes, 936);
    assert_eq!(distinct, 1917);
    assert_eq!(s.skipped_headers + s.skipped_zero_length, 0);
    // Line 1: Write 2048 bytes at 9056014336 = page 2210941; line 2: 512 at 11855351808 =
    // page 2894373; line 3: 4096 at 5548077056 = page 1354511 (aligned: one page);
    // line 4: 40960 at 3163095040 = pages 772240..=772249.
    let mut want = vec![
        rec(2_210_941, true),
        rec(2_894_373, true),
        rec(1_354_511, true),
    ];
    want.extend((772_240..772_249).map(|k| rec(k, true)));
    assert_eq!(first, want);
}

#[test]
fn memsim_spec() {
    for (rel, writes, distinct_pages) in [
        ("memsim-spec/gcc.trace.gz", 107_184, 2852),
        ("memsim-spec/swim.trace.gz", 67_170, 2543),
    ] {
        let (s, distinct, _) = open(rel, Format::Memsim);
        assert_eq!((s.records, s.references), (1_000_000, 1_000_000), "{rel}");
        assert_eq!(s.writes, writes, "{rel}");
        assert_eq!(distinct, distinct_pages, "{rel}");
    }
    // First lines of gcc: 0041f7a0 R, 13f5e2c0 R, 05e78900 R, 004758a0 R, 31348900 W.
    let (_, _, first) = open("memsim-spec/gcc.trace.gz", Format::Memsim);
    assert_eq!(
        &first[..5],
        &[
            rec(0x41f, false),
            rec(0x13f5e, false),
            rec(0x5e78, false),
            rec(0x475, false),
            rec(0x31348, true)
        ]
    );
}

#[test]
fn ucsd_address_traces() {
    for (rel, records, writes, pages) in [
        ("ucsd-address/gcc.trace.gz", 515_683, 197_486, 294),
        ("ucsd-address/swim.trace.gz", 303_193, 82_525, 135),
        // With hit/miss penalties: the same accesses.
        ("ucsd-address/penalties/gcc.trace.xz", 515_683, 197_486, 294),
    ] {
        let (s, distinct, first) = open(rel, Format::Ucsd);
        assert_eq!((s.records, s.references), (records, records), "{rel}");
        assert_eq!(s.writes, writes, "{rel}");
        assert_eq!(distinct, pages, "{rel}");
        if rel.contains("gcc") {
            // s 0x1fffff50, l 0x1fffff58
            assert_eq!(&first[..2], &[rec(0x1ffff, true), rec(0x1ffff, false)]);
        }
    }
}

#[test]
fn key_arrays() {
    // (trace, format, references, distinct, first keys)
    let cases: [(&str, Format, u64, usize, [u64; 3]); 5] = [
        (
            "cache2k/web07.trace.xz",
            Format::I32Be,
            76_118,
            20_484,
            [0, 1, 2],
        ),
        (
            "cache2k/orm-busy.trace.xz",
            Format::I32Be,
            5_000_000,
            76_349,
            [4_026_531_841, 2_281_701_888, 2_281_702_400],
        ),
        (
            "misc-kv/scarab-recs.trace.xz",
            Format::I64Be,
            1_245_184,
            258_368,
            [
                8_756_849_942_801_480_528,
                11_518_129_014_535_343_692,
                11_489_559_693_973_432_113,
            ],
        ),
        (
            "misc-kv/trace_vaultservice.gz",
            Format::I64Be,
            135_702,
            90_468,
            [
                4_115_321_255_546_405_575,
                380_797_412_902_322_124,
                4_115_321_255_546_405_575,
            ],
        ),
        // README: 5,292,456 refs, 275,171 distinct.
        (
            "cloudphysics/w106.trace.xz",
            Format::U32Le,
            5_292_456,
            275_171,
            [904_906, 896_511, 904_187],
        ),
    ];
    for (rel, format, refs, distinct_keys, first_keys) in cases {
        let (s, distinct, first) = open(rel, format);
        assert_eq!(
            (s.records, s.references, s.writes),
            (refs, refs, 0),
            "{rel}"
        );
        assert_eq!(distinct, distinct_keys, "{rel}");
        assert_eq!(
            first[..3].iter().map(|r| r.key).collect::<Vec<_>>(),
            first_keys,
            "{rel}"
        );
    }
    // orm-busy read in the byte order the sniffer picks: the same trace up to renaming.
    let (s, distinct, _) = open("cache2k/orm-busy.trace.xz", Format::U32Le);
    assert_eq!((s.references, distinct), (5_000_000, 76_349));
}

/// 57 lines of `valgrind --tool=lackey --trace-mem=yes --log-file=... /bin/true`
/// (valgrind 3.19.0): the first 40, 11 from the middle (with `I  04014fff,5`, which crosses
/// a page boundary) and the last 6.
const LACKEY: &str = r"==1169== Lackey, an example Valgrind tool
==1169== Copyright (C) 2002-2017, and GNU GPL'd, by Nicholas Nethercote.
==1169== Using Valgrind-3.19.0 and LibVEX; rerun with -h for copyright info
==1169== Command: /bin/true
==1169== Parent PID: 1167
==1169== 
I  0401ab70,3
I  0401ab73,5
 S 1fff000678,8
I  0401b770,1
 S 1fff000670,8
I  0401b771,7
I  0401b778,7
I  0401b77f,5
I  0401b784,5
I  0401b789,4
I  0401b78d,3
I  0401b790,2
 S 1fff000668,8
I  0401b792,2
 S 1fff000660,8
I  0401b794,2
 S 1fff000658,8
I  0401b796,2
 S 1fff000650,8
I  0401b798,1
 S 1fff000648,8
I  0401b799,7
I  0401b7a0,7
 S 1fff0005e8,8
I  0401b7a7,4
 S 1fff0005f0,16
I  0401b7ab,2
I  0401b7ad,7
 M 04033e06,1
I  0401b7b4,4
I  0401b7b8,7
 S 04033ad0,8
I  0401b7bf,3
I  0401b7c2,7
I  04014fe9,2
I  04014feb,3
I  04014fee,2
I  04014ff0,3
I  04014ff3,2
I  04014ff5,6
I  04014ffb,4
I  04014fff,5
I  04014ee5,1
 L 1fff000450,8
I  04014ee6,1
==1169== Ratios:
==1169==   guest instrs : SB entered  = 48 : 10
==1169==        IRStmts : SB entered  = 332 : 10
==1169==        IRStmts : guest instr = 69 : 10
==1169== 
==1169== Exit code:       0
";

#[test]
fn lackey_excerpt() {
    let read = |options: ReadOptions| {
        summary(
            TraceReader::from_reader_with(
                "lackey.out",
                Box::new(Cursor::new(LACKEY.as_bytes().to_vec())),
                Format::Lackey,
                options,
            )
            .unwrap(),
        )
    };
    let (s, distinct, first) = read(ReadOptions::default());
    assert_eq!(s.records, 57);
    assert_eq!(s.references, 47);
    assert_eq!(s.writes, 11);
    assert_eq!(distinct, 6);
    assert_eq!(s.skipped_messages, 12);
    // I 0401ab70, I 0401ab73, S 1fff000678, I 0401b770, S 1fff000670
    assert_eq!(
        &first[..5],
        &[
            rec(0x401a, false),
            rec(0x401a, false),
            rec(0x1fff000, true),
            rec(0x401b, false),
            rec(0x1fff000, true)
        ]
    );
    let (s, distinct, _) = read(ReadOptions {
        instructions: false,
        ..ReadOptions::default()
    });
    assert_eq!(s.records, 57);
    assert_eq!(s.references, 13);
    assert_eq!(s.writes, 11);
    assert_eq!(distinct, 2);
    assert_eq!(s.skipped_instructions, 33);
    // Modify = read then write of each page; an access over a page boundary touches both.
    let r = TraceReader::from_reader(
        "m",
        Box::new(Cursor::new(b" M 0000fffe,4\nI  00001fff,1\n".to_vec())),
        Format::Lackey,
    )
    .unwrap();
    let got: Vec<Record> = r.map(Result::unwrap).collect();
    assert_eq!(
        got,
        [
            rec(15, false),
            rec(15, true),
            rec(16, false),
            rec(16, true),
            rec(1, false)
        ]
    );
}

/// What ftrace's `trace` file shows for the filemap events, written from the kernel's
/// `TP_printk` formats (include/trace/events/filemap.h); this host has no tracefs.
const FTRACE: &str = "# tracer: nop
#
# entries-in-buffer/entries-written: 7/7   #P:2
#
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
             cat-4242    [001] ..... 12345.678901: mm_filemap_get_pages: dev=259:2 ino=2a0f31 ofs=0-131071
             cat-4242    [001] ..... 12345.678950: mm_filemap_add_to_page_cache: dev 259:2 ino 2a0f31 pfn=0x1a2b3c ofs=131072 order=2
             cat-4242    [001] ..... 12345.679001: mm_filemap_get_pages: dev=259:2 ino=2a0f31 ofs=131072-135167
            bash-4100    [000] ..... 12345.700000: mm_filemap_fault: dev=259:2 ino=1b ofs=8192
            bash-4100    [000] ..... 12345.700010: mm_filemap_map_pages: dev=259:2 ino=1b ofs=0-65535
            bash-4100    [000] ..... 12345.700020: mm_filemap_delete_from_page_cache: dev 259:2 ino 99 pfn=0x1234 ofs=0 order=0
            bash-4100    [000] d.... 12345.700030: sched_switch: prev_comm=bash prev_pid=4100
";

/// The same events as `perf script` prints them (with a sched event in between).
const PERF: &str = "             cat  4242 [001] 12345.678901: filemap:mm_filemap_get_pages: dev=259:2 ino=2a0f31 ofs=0-131071
             cat  4242 [001] 12345.678950: filemap:mm_filemap_add_to_page_cache: dev 259:2 ino 2a0f31 pfn=0x1a2b3c ofs=131072 order=2
             cat  4242 [001] 12345.679001: filemap:mm_filemap_get_pages: dev=259:2 ino=2a0f31 ofs=131072-135167
            bash  4100 [000] 12345.700000: filemap:mm_filemap_fault: dev=259:2 ino=1b ofs=8192
            bash  4100 [000] 12345.700005:       sched:sched_switch: prev_comm=bash prev_pid=4100
            bash  4100 [000] 12345.700010: filemap:mm_filemap_map_pages: dev=259:2 ino=1b ofs=0-65535
            bash  4100 [000] 12345.700020: filemap:mm_filemap_delete_from_page_cache: dev 259:2 ino 99 pfn=0x1234 ofs=0 order=0
";

#[test]
fn filemap_excerpts() {
    // File 0 = (259:2, 0x2a0f31), file 1 = (259:2, 0x1b).
    // Each event is one request: its pages after the first continue it.
    // The fault and fault-around events' pages are marked `fault`.
    let req_as = |file: u32, pages: std::ops::Range<u64>, fault: bool| {
        let first = pages.start;
        pages.map(move |p| Record {
            cont: p > first,
            fault,
            ..rec(file_key(file, p), false)
        })
    };
    let req = |file, pages| req_as(file, pages, false);
    let mut want: Vec<Record> = req(0, 0..32).collect(); // 0-131071
    want.extend(req(0, 32..36)); // order 2 at 131072
    want.extend(req(0, 32..33)); // 131072-135167
    want.extend(req_as(1, 2..3, true)); // fault at 8192
    want.extend(req_as(1, 0..16, true)); // map_pages 0-65535
    assert_eq!(want.len(), 54);
    for (name, text, comments) in [("trace", FTRACE, 12), ("perf.txt", PERF, 0)] {
        let r = TraceReader::from_reader(
            name,
            Box::new(Cursor::new(text.as_bytes().to_vec())),
            Format::Filemap,
        )
        .unwrap();
        let mut r = r;
        let got: Vec<Record> = r.by_ref().map(Result::unwrap).collect();
        assert_eq!(got, want, "{name}");
        let s = r.stats();
        assert_eq!(s.references, 54, "{name}");
        assert_eq!(s.skipped_events, 2, "{name}"); // delete_from_page_cache, sched_switch
        assert_eq!(s.skipped_comments, comments, "{name}");
        assert_eq!(got.iter().map(|r| r.key).collect::<HashSet<_>>().len(), 52);
        // Detected from content too.
        let r =
            TraceReader::from_reader_auto(name, Box::new(Cursor::new(text.as_bytes().to_vec())))
                .unwrap();
        assert_eq!(r.format(), Format::Filemap);
    }
    // The file limit.
    let r = TraceReader::from_reader_with(
        "perf.txt",
        Box::new(Cursor::new(PERF.as_bytes().to_vec())),
        Format::Filemap,
        ReadOptions {
            max_files: 1,
            ..ReadOptions::default()
        },
    )
    .unwrap();
    let results: Vec<_> = r.collect();
    let e = results.last().unwrap().as_ref().unwrap_err();
    assert_eq!(
        e.to_string(),
        "perf.txt: line 4: number of distinct (dev, ino) files 2 exceeds the limit of 1"
    );
    assert_eq!(results.len(), 38); // the 37 references of file 0, then the error
}

/// Every real trace converted to native reads back as the identical record sequence.
#[test]
fn native_round_trip_of_every_real_trace() {
    let cases = [
        ("libcachesim/cloudPhysicsIO.txt", Format::Text),
        (
            "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
            Format::OracleGeneral,
        ),
        ("libcachesim/cloudPhysicsIO.vscsi", Format::Vscsi),
        ("libcachesim/cloudPhysicsIO.csv", Format::LibCacheSimCsv),
        ("lirs/cs.trace.gz", Format::Lirs),
        ("lirs/sprite.trace.gz", Format::Lirs),
        ("arc/OLTP.lis.zst", Format::Arc),
        ("arc/P3.lis.zst", Format::Arc),
        ("msr-sample/msr-cambridge1-sample.csv", Format::Msr),
        ("memsim-spec/gcc.trace.gz", Format::Memsim),
        ("ucsd-address/gcc.trace.gz", Format::Ucsd),
        ("cache2k/web07.trace.xz", Format::I32Be),
        ("cache2k/orm-busy.trace.xz", Format::I32Be),
        ("misc-kv/scarab-recs.trace.xz", Format::I64Be),
        ("misc-kv/trace_vaultservice.gz", Format::I64Be),
        ("cloudphysics/w106.trace.xz", Format::U32Le),
    ];
    for (rel, format) in cases {
        let mut src = TraceReader::open(&trace(rel), format).unwrap();
        let writer = NativeWriter::new("native", Vec::new()).unwrap();
        let (bytes, stats) = convert(&mut src, writer).unwrap();
        assert_eq!(stats.written.records, stats.read.references, "{rel}");
        assert_eq!(stats.written.writes, stats.read.writes, "{rel}");
        assert_eq!(stats.written.bytes, bytes.len() as u64, "{rel}");
        let original = TraceReader::open(&trace(rel), format).unwrap();
        let mut back =
            TraceReader::from_reader_auto("native", Box::new(Cursor::new(bytes))).unwrap();
        assert_eq!(back.format(), Format::Native, "{rel}");
        let mut a = Vec::new();
        let mut b = Vec::new();
        let mut original = original;
        loop {
            let n = original.read_batch(&mut a, 10_000).unwrap();
            let m = back.read_batch(&mut b, 10_000).unwrap();
            // The native format keeps keys and writes, not request boundaries.
            let kw = |v: &[Record]| v.iter().map(|r| (r.key, r.write)).collect::<Vec<_>>();
            assert_eq!(kw(&a), kw(&b), "{rel}");
            assert_eq!(n, m);
            if n == 0 {
                break;
            }
        }
        assert_eq!(back.stats().records, stats.read.references, "{rel}");
        assert_eq!(back.stats().references, stats.read.references, "{rel}");
        assert_eq!(back.stats().writes, stats.read.writes, "{rel}");
    }
}

#[test]
fn native_round_trip_of_extreme_keys() {
    let keys = [
        0u64,
        u64::MAX,
        0,
        1 << 63,
        (1 << 63) - 1,
        5,
        4,
        3,
        u64::MAX - 1,
        42,
    ];
    let records: Vec<Record> = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| rec(k, i % 3 == 0))
        .collect();
    for block_records in [1, 2, 3, 7, 1 << 16] {
        let options = mmsim_trace::NativeOptions {
            block_records,
            ..Default::default()
        };
        let mut w = NativeWriter::with_options("n", Vec::new(), options).unwrap();
        w.write_all(&records).unwrap();
        let (bytes, ws) = w.finish().unwrap();
        assert_eq!(
            ws.blocks,
            keys.len().div_ceil(block_records as usize) as u64
        );
        let r =
            TraceReader::from_reader("n", Box::new(Cursor::new(bytes)), Format::Native).unwrap();
        let got: Vec<Record> = r.map(Result::unwrap).collect();
        assert_eq!(got, records, "block_records {block_records}");
    }
    // An empty trace: header and footer.
    let (bytes, ws) = NativeWriter::new("e", Vec::new())
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!((bytes.len(), ws.records, ws.blocks), (40, 0, 0));
    let r = TraceReader::from_reader("e", Box::new(Cursor::new(bytes)), Format::Native).unwrap();
    assert_eq!(r.count(), 0);
}

#[test]
fn native_file_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join("cp.mmsim");
    let stats =
        mmsim_trace::convert_file(&trace("libcachesim/cloudPhysicsIO.vscsi"), None, &dst).unwrap();
    assert_eq!(stats.read.references, 1_141_869);
    assert_eq!(stats.written.records, 1_141_869);
    let size = std::fs::metadata(&dst).unwrap().len();
    assert_eq!(size, stats.written.bytes);
    // Much smaller than the 3.6 MB vscsi file.
    assert!(size < 1_500_000, "{size}");
    let (s, distinct, _) = summary(TraceReader::open_auto(&dst).unwrap());
    assert_eq!(
        (s.references, s.writes, distinct),
        (1_141_869, 656_169, 269_210)
    );
}
