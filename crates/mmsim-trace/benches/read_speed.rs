//! Criterion benchmark of reading speed (records per second) on libCacheSim's
//! `cloudPhysicsIO` sample, the same requests in several encodings:
//!
//! * `read_speed/keys`: 113,872 keys from `cloudPhysicsIO.txt` (`text`),
//!   `cloudPhysicsIO.oracleGeneral.bin` (`oracle-general`), the same zstd-compressed as
//!   libCacheSim distributes its traces (`oracle-general.zst`), and the latter converted to
//!   `native` in a temporary file, at the default level (`native`) and at zstd level 3
//!   (`native-level3`);
//! * `read_speed/pages`: the 1,141,869 4 KiB pages of the block requests from
//!   `cloudPhysicsIO.vscsi` (`vscsi`), `cloudPhysicsIO.csv` (`libcachesim-csv`) and the
//!   former converted to `native` (both levels).
//!
//! Each iteration opens the file and reads it to the end in batches of 4096 (the files are
//! in the page cache after the first iteration).
//!
//! `cargo bench -p mmsim-trace --bench read_speed`
// criterion_group! generates an undocumented `fn benches`.
#![allow(missing_docs)]

use std::path::{Path, PathBuf};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use mmsim_trace::{convert, convert_file, Format, NativeOptions, NativeWriter, TraceReader};

const TRACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces");

fn trace(rel: &str) -> PathBuf {
    Path::new(TRACES).join(rel)
}

/// Reads the whole trace; returns the number of records and a checksum of the keys.
fn read(path: &Path, format: Format) -> (u64, u64) {
    let mut r = TraceReader::open(path, format).expect("open");
    let mut batch = Vec::with_capacity(4096);
    let (mut n, mut sum) = (0u64, 0u64);
    while r.read_batch(&mut batch, 4096).expect("read") > 0 {
        n += batch.len() as u64;
        for rec in &batch {
            sum = sum.wrapping_add(rec.key);
        }
    }
    (n, sum)
}

fn group(c: &mut Criterion, name: &str, cases: &[(&str, &Path, Format)]) {
    let (records, sum) = read(cases[0].1, cases[0].2);
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(records));
    for &(label, path, format) in cases {
        assert_eq!(
            read(path, format),
            (records, sum),
            "{label} reads differently"
        );
        g.bench_function(label, |b| {
            b.iter(|| black_box(read(black_box(path), format)))
        });
    }
    g.finish();
}

/// Converts `src` to native at zstd `level` into `dst`.
fn to_native(src: &Path, format: Format, level: i32, dst: &Path) {
    let mut reader = TraceReader::open(src, format).expect("open");
    let options = NativeOptions {
        level,
        ..NativeOptions::default()
    };
    let file = std::fs::File::create(dst).expect("create");
    let writer = NativeWriter::with_options("bench", file, options).expect("writer");
    convert(&mut reader, writer).expect("convert");
}

fn read_speed(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let oracle = trace("libcachesim/cloudPhysicsIO.oracleGeneral.bin");
    let native_keys = dir.path().join("keys.mmsim");
    convert_file(&oracle, Some(Format::OracleGeneral), &native_keys).expect("convert");
    let native_keys3 = dir.path().join("keys3.mmsim");
    to_native(&oracle, Format::OracleGeneral, 3, &native_keys3);
    let oracle_zst = dir.path().join("cloudPhysicsIO.oracleGeneral.bin.zst");
    let raw = std::fs::read(&oracle).expect("read");
    std::fs::write(&oracle_zst, zstd::encode_all(&raw[..], 3).expect("zstd")).expect("write");
    let text = trace("libcachesim/cloudPhysicsIO.txt");
    group(
        c,
        "read_speed/keys",
        &[
            ("native", &native_keys, Format::Native),
            ("native-level3", &native_keys3, Format::Native),
            ("oracle-general", &oracle, Format::OracleGeneral),
            ("oracle-general.zst", &oracle_zst, Format::OracleGeneral),
            ("text", &text, Format::Text),
        ],
    );
    let vscsi = trace("libcachesim/cloudPhysicsIO.vscsi");
    let native_pages = dir.path().join("pages.mmsim");
    convert_file(&vscsi, Some(Format::Vscsi), &native_pages).expect("convert");
    let native_pages3 = dir.path().join("pages3.mmsim");
    to_native(&vscsi, Format::Vscsi, 3, &native_pages3);
    let csv = trace("libcachesim/cloudPhysicsIO.csv");
    group(
        c,
        "read_speed/pages",
        &[
            ("native", &native_pages, Format::Native),
            ("native-level3", &native_pages3, Format::Native),
            ("vscsi", &vscsi, Format::Vscsi),
            ("libcachesim-csv", &csv, Format::LibCacheSimCsv),
        ],
    );
    for (label, path) in [
        ("keys native", &native_keys),
        ("keys native-level3", &native_keys3),
        ("keys oracle-general.zst", &oracle_zst),
        ("pages native", &native_pages),
        ("pages native-level3", &native_pages3),
    ] {
        let size = std::fs::metadata(path).expect("size").len();
        eprintln!("file size: {label}: {size} bytes");
    }
}

criterion_group!(benches, read_speed);
criterion_main!(benches);
