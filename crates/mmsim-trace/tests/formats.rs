//! Each format on a tiny inline excerpt of a real trace, raw and compressed.

use std::io::{Cursor, Write};

use mmsim_trace::{Compression, Format, OracleRecord, ReadStats, Record, TraceReader};

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn xz(data: &[u8]) -> Vec<u8> {
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 6);
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 3).unwrap()
}

fn reader(bytes: Vec<u8>, format: Format) -> TraceReader {
    TraceReader::from_reader("excerpt", Box::new(Cursor::new(bytes)), format).unwrap()
}

/// Reads `data` raw and in every compression, checks all give `want` and the same stats.
fn check(data: &[u8], format: Format, want: &[Record]) -> ReadStats {
    let variants = [
        (data.to_vec(), Compression::None),
        (gzip(data), Compression::Gzip),
        (xz(data), Compression::Xz),
        (zstd(data), Compression::Zstd),
    ];
    let mut first_stats = None;
    for (bytes, comp) in variants {
        // Iterator.
        let mut r = reader(bytes.clone(), format);
        assert_eq!(r.compression(), comp);
        assert_eq!(r.format(), format);
        let got: Vec<Record> = r.by_ref().map(Result::unwrap).collect();
        assert_eq!(got, want, "{comp:?}");
        assert_eq!(r.stats().references, want.len() as u64);
        let iter_stats = r.stats().clone();
        if let Some(first) = &first_stats {
            assert_eq!(&iter_stats, first, "{comp:?}");
        }
        // Batches of every small size.
        for max in 1..=want.len() + 1 {
            let mut r = reader(bytes.clone(), format);
            let mut all = Vec::new();
            let mut batch = vec![Record {
                key: 999,
                write: true,
                cont: false,
                fault: false,
                sync: mmsim_trace::SyncSpan::NONE,
            }]; // cleared by read_batch
            loop {
                let n = r.read_batch(&mut batch, max).unwrap();
                assert_eq!(n, batch.len());
                assert!(n <= max);
                if n == 0 {
                    break;
                }
                all.extend_from_slice(&batch);
            }
            assert_eq!(all, want, "{comp:?} max {max}");
            assert_eq!(r.stats(), &iter_stats, "{comp:?} max {max}");
        }
        first_stats.get_or_insert(iter_stats);
    }
    first_stats.unwrap()
}

fn recs(keys: impl IntoIterator<Item = u64>) -> Vec<Record> {
    keys.into_iter()
        .map(|key| Record {
            key,
            write: false,
            cont: false,
            fault: false,
            sync: mmsim_trace::SyncSpan::NONE,
        })
        .collect()
}

#[test]
fn text_excerpt() {
    // First lines of libcachesim/cloudPhysicsIO.txt, plus what the format tolerates.
    let data =
        b"# cloudPhysicsIO.txt, first requests\n42932745\n42932746\r\n\n  42932747\t\n40409911";
    let stats = check(
        data,
        Format::Text,
        &recs([42_932_745, 42_932_746, 42_932_747, 40_409_911]),
    );
    assert_eq!(
        stats,
        ReadStats {
            records: 6,
            references: 4,
            skipped_markers: 0,
            skipped_blank: 1,
            skipped_comments: 1,
            ..ReadStats::default()
        }
    );
}

#[test]
fn lirs_excerpt() {
    // Lines 12..=20 of lirs/cs.trace.gz (line 18 is a marker).
    let data = b"11\n12\n12\n13\n13\n14\n*\n12\n15\n";
    let stats = check(data, Format::Lirs, &recs([11, 12, 12, 13, 13, 14, 12, 15]));
    assert_eq!(
        stats,
        ReadStats {
            records: 9,
            references: 8,
            skipped_markers: 1,
            skipped_blank: 0,
            skipped_comments: 0,
            ..ReadStats::default()
        }
    );
}

#[test]
fn lirs_crlf_excerpt() {
    // lirs/loop.trace.gz has CRLF line ends.
    let data = b"0\r\n1\r\n2\r\n*\r\n";
    let stats = check(data, Format::Lirs, &recs([0, 1, 2]));
    assert_eq!(stats.skipped_markers, 1);
}

#[test]
fn arc_excerpt() {
    // First lines of arc/P2.lis.zst.
    let data = b"3050771 25 0 0\n2461851 8 0 1\n3050771 8 0 2\n";
    let want: Vec<u64> = (3_050_771..3_050_796)
        .chain(2_461_851..2_461_859)
        .chain(3_050_771..3_050_779)
        .collect();
    let stats = check(data, Format::Arc, &recs(want));
    assert_eq!(
        stats,
        ReadStats {
            records: 3,
            references: 41,
            ..ReadStats::default()
        }
    );
}

#[test]
fn oracle_general_excerpt() {
    // First records of libcachesim/cloudPhysicsIO.oracleGeneral.bin.
    let excerpt = [
        (5_633_898, 42_932_745, 512, -1),
        (5_633_898, 42_932_746, 512, -1),
        (5_633_898, 42_932_747, 512, -1),
        (5_633_898, 40_409_911, 6656, -1),
        (5_633_899, 31_954_535, 6144, -1),
    ];
    let records: Vec<OracleRecord> = excerpt
        .iter()
        .map(
            |&(clock_time, obj_id, obj_size, next_access_vtime)| OracleRecord {
                clock_time,
                obj_id,
                obj_size,
                next_access_vtime,
            },
        )
        .collect();
    let data: Vec<u8> = records.iter().flat_map(OracleRecord::to_bytes).collect();
    assert_eq!(data.len(), 5 * 24);
    let stats = check(
        &data,
        Format::OracleGeneral,
        &recs(excerpt.iter().map(|e| e.1)),
    );
    assert_eq!(
        stats,
        ReadStats {
            records: 5,
            references: 5,
            ..ReadStats::default()
        }
    );
    // Full records.
    let mut r = reader(zstd(&data), Format::OracleGeneral);
    let mut out = Vec::new();
    assert_eq!(r.read_oracle_batch(&mut out, 100).unwrap(), 5);
    assert_eq!(out, records);
    assert_eq!(r.read_oracle_batch(&mut out, 100).unwrap(), 0);
    // Not available for other formats.
    let mut r = reader(b"1\n".to_vec(), Format::Text);
    let e = r.read_oracle_batch(&mut out, 1).unwrap_err();
    assert!(
        e.to_string().contains("needs the oracle-general format"),
        "{e}"
    );
    assert_eq!(r.next().unwrap().unwrap().key, 1);
}

#[test]
fn concatenated_compressed_streams() {
    let a = b"1\n2\n";
    let b = b"3\n";
    for (bytes, comp) in [
        ([gzip(a), gzip(b)].concat(), Compression::Gzip),
        ([xz(a), xz(b)].concat(), Compression::Xz),
        ([zstd(a), zstd(b)].concat(), Compression::Zstd),
    ] {
        let mut r = reader(bytes, Format::Text);
        assert_eq!(r.compression(), comp);
        let keys: Vec<u64> = r.by_ref().map(|x| x.unwrap().key).collect();
        assert_eq!(keys, [1, 2, 3], "{comp:?}");
    }
}

#[test]
fn long_streams_straddle_the_buffer() {
    // Several MB of text so that lines and records straddle buffer refills.
    let n = 700_000u64;
    let text: String = (0..n)
        .map(|i| format!("{}\n", i * 7919 % 1_000_003))
        .collect();
    for bytes in [text.as_bytes().to_vec(), zstd(text.as_bytes())] {
        let mut r = reader(bytes, Format::Text);
        let mut batch = Vec::new();
        let mut i = 0u64;
        while r.read_batch(&mut batch, 10_007).unwrap() > 0 {
            for rec in &batch {
                assert_eq!(rec.key, i * 7919 % 1_000_003);
                i += 1;
            }
        }
        assert_eq!(i, n);
    }
    let bin: Vec<u8> = (0..200_000u64)
        .flat_map(|i| {
            OracleRecord {
                clock_time: i as u32,
                obj_id: i * 3,
                obj_size: 1,
                next_access_vtime: -1,
            }
            .to_bytes()
        })
        .collect();
    for bytes in [bin.clone(), gzip(&bin)] {
        let keys: Vec<u64> = reader(bytes, Format::OracleGeneral)
            .map(|x| x.unwrap().key)
            .collect();
        assert_eq!(keys.len(), 200_000);
        assert!(keys.iter().enumerate().all(|(i, &k)| k == i as u64 * 3));
    }
}

#[test]
fn format_names() {
    for f in Format::ALL {
        assert_eq!(f.name().parse::<Format>().unwrap(), f);
        assert_eq!(f.to_string(), f.name());
    }
    assert_eq!(
        "oraclegeneral".parse::<Format>().unwrap(),
        Format::OracleGeneral
    );
    assert_eq!(
        "oracleGeneral".parse::<Format>().unwrap(),
        Format::OracleGeneral
    );
    assert_eq!("LIRS".parse::<Format>().unwrap(), Format::Lirs);
    // Aliases, `_` for `-`, and the list a command line prints.
    for (alias, f) in [
        ("cache2k", Format::I32Be),
        ("scarab", Format::I64Be),
        ("corda", Format::I64Be),
        ("w106", Format::U32Le),
        ("lcs_csv", Format::LibCacheSimCsv),
        ("perf-script", Format::Filemap),
        ("ftrace", Format::Filemap),
        ("MSR-Cambridge", Format::Msr),
        ("mmsim", Format::Native),
    ] {
        assert_eq!(alias.parse::<Format>().unwrap(), f, "{alias}");
    }
    let help = Format::help();
    assert_eq!(help.lines().count(), Format::ALL.len());
    // Every format is described: the shortest description is text's.
    let shortest = Format::ALL.iter().min_by_key(|f| f.description().len());
    assert_eq!(shortest.unwrap().description(), "one decimal key per line");
    for f in Format::ALL {
        let line = help.lines().find(|l| l.starts_with(f.name())).unwrap();
        assert!(line.ends_with(f.description()), "{line}");
        for a in f.aliases() {
            assert!(line.contains(a), "{line}");
        }
    }
    assert_eq!(Compression::Zstd.name(), "zstd");
    assert_eq!(Compression::None.to_string(), "none");
}

#[test]
fn reader_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<TraceReader>();
    assert_send::<mmsim_trace::TraceError>();
    assert_send::<mmsim_trace::Densifier>();
}
