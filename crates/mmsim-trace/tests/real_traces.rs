//! Exact counts on the real traces in `data/traces` (see its README.md and SOURCES.md).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use mmsim_trace::{
    sniff_format, Compression, Densifier, Format, OracleRecord, ReadStats, Record, TraceReader,
};

const TRACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces");

fn trace(rel: &str) -> PathBuf {
    let p = Path::new(TRACES).join(rel);
    assert!(
        p.exists(),
        "real trace {} is missing (tests expect the traces in data/traces)",
        p.display()
    );
    p
}

/// Reads the whole trace in batches; returns stats, distinct keys and the first keys.
fn read_all(rel: &str, format: Format) -> (ReadStats, u32, Vec<u64>, Compression) {
    let mut reader = TraceReader::open(&trace(rel), format).unwrap();
    assert_eq!(reader.format(), format);
    let mut dense = Densifier::with_name(rel, u32::MAX);
    let mut batch = Vec::new();
    let mut first = Vec::new();
    let mut total = 0u64;
    // An odd batch size exercises ARC requests split across batches.
    while reader.read_batch(&mut batch, 4093).unwrap() > 0 {
        total += batch.len() as u64;
        for r in &batch {
            assert!(!r.write);
            dense.id(r.key).unwrap();
            if first.len() < 20 {
                first.push(r.key);
            }
        }
    }
    // Finished: stays finished.
    assert_eq!(reader.read_batch(&mut batch, 10).unwrap(), 0);
    assert!(reader.next().is_none());
    let stats = reader.stats().clone();
    assert_eq!(stats.references, total);
    (stats, dense.distinct(), first, reader.compression())
}

fn keys(rel: &str, format: Format) -> Vec<u64> {
    TraceReader::open(&trace(rel), format)
        .unwrap()
        .map(|r| r.unwrap().key)
        .collect()
}

#[test]
fn arc_oltp() {
    let (stats, distinct, first, comp) = read_all("arc/OLTP.lis.zst", Format::Arc);
    assert_eq!(comp, Compression::Zstd);
    assert_eq!(stats.references, 914_145);
    assert_eq!(stats.records, 914_145); // every OLTP request is one block
    assert_eq!(distinct, 186_880);
    assert_eq!(&first[..3], &[1, 2, 3]); // "1 1 0 0", "2 1 0 0", "3 1 0 0"
    assert_eq!(
        (
            stats.skipped_blank,
            stats.skipped_comments,
            stats.skipped_markers
        ),
        (0, 0, 0)
    );
}

#[test]
fn arc_p3_expands_requests() {
    // P3: 238,578 requests of up to 128 blocks, 3,912,296 block references.
    let (stats, _, first, _) = read_all("arc/P3.lis.zst", Format::Arc);
    assert_eq!(stats.records, 238_578);
    assert_eq!(stats.references, 3_912_296);
    // The first 20 references: request 1's 8 blocks from 230,027, then the first 12
    // of request 2's blocks from 1,842,745.
    let want: Vec<u64> = (230_027..230_035).chain(1_842_745..1_842_757).collect();
    assert_eq!(first, want);
}

#[test]
fn arc_p2_first_request_is_expanded() {
    // First lines: "3050771 25 0 0", "2461851 8 0 1".
    let mut r = TraceReader::open(&trace("arc/P2.lis.zst"), Format::Arc).unwrap();
    let got: Vec<u64> = r.by_ref().take(27).map(|x| x.unwrap().key).collect();
    let want: Vec<u64> = (3_050_771..3_050_771 + 25)
        .chain([2_461_851, 2_461_852])
        .collect();
    assert_eq!(got, want);
    assert_eq!(r.stats().records, 2);
    assert_eq!(r.stats().references, 27);
}

#[test]
fn lirs_traces() {
    // (file, refs, distinct, '*' markers, lines)
    let cases = [
        ("lirs/sprite.trace.gz", 133_996, 7_075, 0, 133_996),
        ("lirs/multi2.trace.gz", 26_311, 5_684, 0, 26_311),
        ("lirs/loop.trace.gz", 505_500, 1_011, 0, 505_500),
        ("lirs/cs.trace.gz", 6_781, 1_409, 2, 6_783),
        ("lirs/2_pools.trace.gz", 100_000, 9_939, 2, 100_002),
    ];
    for (rel, refs, distinct, markers, lines) in cases {
        let (stats, d, _, comp) = read_all(rel, Format::Lirs);
        assert_eq!(comp, Compression::Gzip, "{rel}");
        assert_eq!(stats.references, refs, "{rel}");
        assert_eq!(d, distinct, "{rel}");
        assert_eq!(stats.skipped_markers, markers, "{rel}");
        assert_eq!(stats.records, lines, "{rel}");
        assert_eq!(stats.skipped_blank + stats.skipped_comments, 0, "{rel}");
    }
}

#[test]
fn lirs_gli_has_a_trailing_blank_line() {
    let (stats, _, _, _) = read_all("lirs/gli.trace.gz", Format::Lirs);
    assert_eq!(stats.records, 6_016);
    assert_eq!(stats.skipped_blank, 1);
    assert_eq!(stats.references, 6_015);
}

#[test]
fn lirs_cs_markers() {
    // Lines 18 and 28 of cs are '*'; the README's 6,781 references exclude them.
    let got = keys("lirs/cs.trace.gz", Format::Lirs);
    assert_eq!(
        &got[..27],
        &[
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 12, 13, 13, 14, 12, 15, 16, 17, 18, 19, 20,
            21, 22, 23
        ]
    );
    // Read as plain text, the first marker is an error naming line 18.
    let mut r = TraceReader::open(&trace("lirs/cs.trace.gz"), Format::Text).unwrap();
    let results: Vec<_> = r.by_ref().collect();
    assert_eq!(results.len(), 18);
    assert!(results[..17].iter().all(Result::is_ok));
    let e = results[17].as_ref().unwrap_err();
    assert_eq!(e.line(), Some(18));
    assert!(
        e.to_string()
            .contains("cs.trace.gz: line 18: expected one integer key"),
        "{e}"
    );
    assert!(e.to_string().contains("lirs"), "{e}");
}

#[test]
fn libcachesim_text() {
    let (stats, distinct, first, comp) = read_all("libcachesim/cloudPhysicsIO.txt", Format::Text);
    assert_eq!(comp, Compression::None);
    assert_eq!(stats.references, 113_872);
    assert_eq!(stats.records, 113_872); // the last line has no newline
    assert_eq!(distinct, 48_974);
    assert_eq!(&first[..3], &[42_932_745, 42_932_746, 42_932_747]);
}

#[test]
fn libcachesim_oracle_general() {
    let (stats, distinct, first, comp) = read_all(
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
        Format::OracleGeneral,
    );
    assert_eq!(comp, Compression::None);
    assert_eq!(stats.records, 113_872);
    assert_eq!(stats.references, 113_872);
    assert_eq!(distinct, 48_974);
    assert_eq!(
        &first[..4],
        &[42_932_745, 42_932_746, 42_932_747, 40_409_911]
    );

    // Full records: first one, and next_access_vtime is the 1-based position of the next
    // request for the same object.
    let path = trace("libcachesim/cloudPhysicsIO.oracleGeneral.bin");
    let mut r = TraceReader::open(&path, Format::OracleGeneral).unwrap();
    let mut all = Vec::new();
    let mut batch = Vec::new();
    while r.read_oracle_batch(&mut batch, 10_000).unwrap() > 0 {
        all.extend_from_slice(&batch);
    }
    assert_eq!(all.len(), 113_872);
    assert_eq!(
        all[0],
        OracleRecord {
            clock_time: 5_633_898,
            obj_id: 42_932_745,
            obj_size: 512,
            next_access_vtime: -1
        }
    );
    // Object sizes: 512 B to 68 KiB, 4,368,040,448 bytes in all.
    let sizes = || all.iter().map(|r| u64::from(r.obj_size));
    assert_eq!(
        (sizes().min(), sizes().max(), sizes().sum::<u64>()),
        (Some(512), Some(69_632), 4_368_040_448)
    );
    for (i, rec) in all.iter().enumerate() {
        if rec.next_access_vtime != -1 {
            let next = rec.next_access_vtime as usize;
            assert!(next > i + 1);
            assert_eq!(all[next - 1].obj_id, rec.obj_id, "record {}", i + 1);
        }
    }
}

#[test]
fn text_and_oracle_general_have_the_same_keys() {
    let text = keys("libcachesim/cloudPhysicsIO.txt", Format::Text);
    let oracle = keys(
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
        Format::OracleGeneral,
    );
    assert_eq!(text.len(), 113_872);
    assert!(text == oracle, "key sequences differ");
    assert_eq!(text.iter().collect::<HashSet<_>>().len(), 48_974);
}

#[test]
fn iterator_and_batches_agree() {
    let rel = "arc/P6.lis.zst";
    let mut via_iter = TraceReader::open(&trace(rel), Format::Arc).unwrap();
    let mut via_batch = TraceReader::open(&trace(rel), Format::Arc).unwrap();
    let mut batch: Vec<Record> = Vec::new();
    let mut n = 0u64;
    // Mix batch sizes, compare with the iterator for the first 300,000 references.
    let sizes = [1usize, 7, 128, 1000, 3];
    let mut k = 0;
    while n < 300_000 {
        let got = via_batch
            .read_batch(&mut batch, sizes[k % sizes.len()])
            .unwrap();
        // P6 is far longer than 300,000 references: every batch is full.
        assert_eq!(got, sizes[k % sizes.len()], "at reference {n}");
        k += 1;
        for r in &batch {
            assert_eq!(via_iter.next().unwrap().unwrap(), *r);
        }
        n += got as u64;
    }
    assert_eq!(via_iter.stats().references, via_batch.stats().references);
}

#[test]
fn sniffing_real_traces() {
    let cases = [
        ("arc/OLTP.lis.zst", Format::Arc),
        ("arc/P12.lis.zst", Format::Arc),
        ("lirs/sprite.trace.gz", Format::Text), // no '*' in it: text and lirs read alike
        ("lirs/multi2.trace.gz", Format::Text),
        ("lirs/loop.trace.gz", Format::Text),
        ("lirs/cs.trace.gz", Format::Lirs),
        ("lirs/2_pools.trace.gz", Format::Lirs),
        ("lirs/gli.trace.gz", Format::Text),
        ("libcachesim/cloudPhysicsIO.txt", Format::Text),
        (
            "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
            Format::OracleGeneral,
        ),
    ];
    for (rel, want) in cases {
        assert_eq!(sniff_format(&trace(rel)).unwrap(), want, "{rel}");
        // open_auto agrees and reads the same as an explicit open.
        let r = TraceReader::open_auto(&trace(rel)).unwrap();
        assert_eq!(r.format(), want, "{rel}");
    }
    let auto: Vec<u64> = TraceReader::open_auto(&trace("lirs/cs.trace.gz"))
        .unwrap()
        .map(|r| r.unwrap().key)
        .collect();
    assert_eq!(auto, keys("lirs/cs.trace.gz", Format::Lirs));
}

#[test]
fn sniffing_new_formats_says_why() {
    use mmsim_trace::sniff_format_explained;
    // (trace, format, ambiguous, a word of the reason)
    let cases = [
        (
            "libcachesim/cloudPhysicsIO.csv",
            Format::LibCacheSimCsv,
            false,
            "csv",
        ),
        (
            "libcachesim/cloudPhysicsIO.vscsi",
            Format::Vscsi,
            false,
            "v1",
        ),
        (
            "cloudphysics/w106.trace.xz",
            Format::U32Le,
            false,
            "little-endian",
        ),
        ("memsim-spec/gcc.trace.gz", Format::Memsim, false, "R|W"),
        ("ucsd-address/gcc.trace.gz", Format::Ucsd, false, "l|s"),
        (
            "ucsd-address/penalties/gcc.trace.xz",
            Format::Ucsd,
            false,
            "l|s",
        ),
        (
            "msr-sample/msr-cambridge1-sample.csv",
            Format::Msr,
            false,
            "Timestamp",
        ),
        ("cache2k/web07.trace.xz", Format::I32Be, false, "big-endian"),
        ("cache2k/web12.trace.xz", Format::I32Be, false, "big-endian"),
        // Big-endian tagged keys that are smaller read little-endian: same trace up to
        // renaming.
        ("cache2k/orm-busy.trace.xz", Format::U32Le, false, "renames"),
        (
            "misc-kv/scarab-recs.trace.xz",
            Format::I64Be,
            true,
            "64-bit",
        ),
        (
            "misc-kv/trace_vaultservice.gz",
            Format::I64Be,
            true,
            "64-bit",
        ),
    ];
    for (rel, want, ambiguous, word) in cases {
        let s = sniff_format_explained(&trace(rel)).unwrap();
        assert_eq!(s.format, want, "{rel}: {s}");
        assert_eq!(s.ambiguous, ambiguous, "{rel}: {s}");
        assert!(s.reason.contains(word), "{rel}: {s}");
        let r = TraceReader::open_auto(&trace(rel)).unwrap();
        assert_eq!(r.sniffed(), Some(&s), "{rel}");
    }
}

#[test]
fn sniffing_rejects_unsupported_traces() {
    // Formats this crate does not read must be refused, naming the file and why.
    for (rel, why) in [
        ("misc-kv/adaptsize-request.trace.xz", "fits no text format"),
        ("msr-sample/upenn-aligned.trace", "fits no text format"),
        ("damon/damon.data", "zlib"),
        ("damon/report-raw.txt", "fits no text format"),
    ] {
        let e = sniff_format(&trace(rel)).unwrap_err().to_string();
        assert!(e.contains(rel), "{rel}: {e}");
        assert!(e.contains("cannot detect the trace format"), "{rel}: {e}");
        assert!(e.contains(why), "{rel}: {e}");
    }
}
