//! Bad inputs: every one must give a clear error (file, position, expectation), no panic,
//! and never a silently shortened trace.

use std::io::{self, Cursor, Read, Write};
use std::path::{Path, PathBuf};

use mmsim_trace::{
    sniff_format, Densifier, Format, OracleRecord, ReadOptions, Record, TraceError, TraceReader,
};

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

/// zstd with a content checksum, as the `zstd` command line writes it (without one,
/// corruption that still decodes to plausible data cannot be detected by anyone).
fn zstd(data: &[u8]) -> Vec<u8> {
    let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    e.include_checksum(true).unwrap();
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

/// Reads everything; returns the records before the error and the error (if any).
fn read_to_error(mut r: TraceReader) -> (Vec<Record>, Option<TraceError>, TraceReader) {
    let mut ok = Vec::new();
    let mut err = None;
    for item in r.by_ref() {
        match item {
            Ok(rec) => ok.push(rec),
            Err(e) => {
                assert!(err.is_none(), "more than one error");
                err = Some(e);
            }
        }
    }
    // Finished after the error.
    assert!(r.next().is_none());
    let mut batch = Vec::new();
    assert_eq!(r.read_batch(&mut batch, 10).unwrap(), 0);
    (ok, err, r)
}

fn open_err(path: &Path, format: Format) -> (Vec<Record>, TraceError) {
    let (ok, err, _) = read_to_error(TraceReader::open(path, format).unwrap());
    (ok, err.expect("an error"))
}

fn oracle_bytes(n: u64) -> Vec<u8> {
    (0..n)
        .flat_map(|i| {
            OracleRecord {
                clock_time: 1,
                obj_id: 100 + i,
                obj_size: 4096,
                next_access_vtime: -1,
            }
            .to_bytes()
        })
        .collect()
}

#[test]
fn truncated_oracle_general_record() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = oracle_bytes(3);
    data.extend_from_slice(&[7u8; 10]);
    for (name, bytes) in [("y.bin", data.clone()), ("y.bin.zst", zstd(&data))] {
        let path = write(dir.path(), name, &bytes);
        let (ok, e) = open_err(&path, Format::OracleGeneral);
        assert_eq!(
            ok.iter().map(|r| r.key).collect::<Vec<_>>(),
            [100, 101, 102]
        );
        assert_eq!(
            e.to_string(),
            format!("{}: record 4: truncated: 10 of 24 bytes", path.display())
        );
        assert_eq!(e.record(), Some(4));
        assert!(matches!(
            e,
            TraceError::Truncated {
                got: 10,
                expected: 24,
                ..
            }
        ));
    }
    // Through read_batch: the whole records come first, the error on the next call.
    let path = write(dir.path(), "y2.bin", &data);
    let mut r = TraceReader::open(&path, Format::OracleGeneral).unwrap();
    let mut batch = Vec::new();
    assert_eq!(r.read_batch(&mut batch, 100).unwrap(), 3);
    assert!(matches!(
        r.read_batch(&mut batch, 100),
        Err(TraceError::Truncated { record: 4, .. })
    ));
    assert!(batch.is_empty());
    assert_eq!(r.read_batch(&mut batch, 100).unwrap(), 0);
    assert_eq!(r.stats().records, 3);
    assert_eq!(r.stats().references, 3);
}

#[test]
fn malformed_text_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = b"1\n\n# c\n12ab\n5\n";
    for (name, bytes) in [
        ("cloudPhysicsIO.txt", data.to_vec()),
        ("cloudPhysicsIO.txt.gz", gzip(data)),
    ] {
        let path = write(dir.path(), name, &bytes);
        let (ok, e) = open_err(&path, Format::Text);
        assert_eq!(
            ok,
            [Record {
                key: 1,
                write: false,
                cont: false,
                fault: false,
                sync: mmsim_trace::SyncSpan::NONE,
            }]
        );
        assert_eq!(
            e.to_string(),
            format!(
                "{}: line 4: expected one integer key, found \"12ab\"",
                path.display()
            )
        );
        assert_eq!(e.line(), Some(4));
        assert_eq!(e.file(), path.display().to_string());
    }
    // Other shapes of bad lines, each naming its line.
    for (data, line, found) in [
        (&b"1\n2 3\n"[..], 2, "2 fields"),
        (b"-1\n", 1, "\"-1\""),
        (b"0x10\n", 1, "\"0x10\""),
        (b"7\n18446744073709551616\n", 2, "2^64"),
        (b"1\n*\n", 2, "LIRS marker"),
        (b"1\n2\n3,\n", 3, "\"3,\""),
        (b"\xff\xfe\n", 1, "\u{fffd}"),
    ] {
        let r = TraceReader::from_reader("t", Box::new(Cursor::new(data.to_vec())), Format::Text)
            .unwrap();
        let (_, e, _) = read_to_error(r);
        let e = e.expect("error");
        assert_eq!(e.line(), Some(line), "{e}");
        assert!(e.to_string().contains(found), "{e}");
    }
    // In lirs, only a lone '*' is a marker.
    let r = TraceReader::from_reader(
        "t",
        Box::new(Cursor::new(b"1\n**\n".to_vec())),
        Format::Lirs,
    )
    .unwrap();
    let e = read_to_error(r).1.unwrap();
    assert_eq!(
        e.to_string(),
        "t: line 2: expected one integer key (or a `*` marker), found \"**\""
    );
}

#[test]
fn arc_line_with_three_fields() {
    let dir = tempfile::tempdir().unwrap();
    let data = b"5 1 0 0\n6 2 0 1\n7 1 0\n";
    for (name, bytes) in [("x.lis", data.to_vec()), ("x.lis.xz", xz(data))] {
        let path = write(dir.path(), name, &bytes);
        let (ok, e) = open_err(&path, Format::Arc);
        assert_eq!(ok.iter().map(|r| r.key).collect::<Vec<_>>(), [5, 6, 7]);
        assert_eq!(
            e.to_string(),
            format!(
                "{}: line 3: expected `start_block n_blocks ignored request_no`, found 3 fields: \"7 1 0\"",
                path.display()
            )
        );
    }
}

#[test]
fn arc_absurd_and_zero_n_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = Vec::new();
    for i in 0..8 {
        writeln!(data, "{i} 1 0 {i}").unwrap();
    }
    data.extend_from_slice(b"1 5000000000 0 8\n");
    let path = write(dir.path(), "x.lis", &data);
    let (ok, e) = open_err(&path, Format::Arc);
    assert_eq!(ok.len(), 8);
    assert_eq!(
        e.to_string(),
        format!(
            "{}: line 9: n_blocks 5000000000 exceeds the limit of 1048576 blocks per request",
            path.display()
        )
    );
    // The limit itself is accepted (and expanded lazily).
    let r = TraceReader::from_reader(
        "big",
        Box::new(Cursor::new(b"0 1048576 0 0\n".to_vec())),
        Format::Arc,
    )
    .unwrap();
    let mut n = 0u64;
    for (i, x) in r.enumerate() {
        assert_eq!(x.unwrap().key, i as u64);
        n += 1;
    }
    assert_eq!(n, 1 << 20);
    // Zero blocks.
    let r = TraceReader::from_reader(
        "z",
        Box::new(Cursor::new(b"3 0 0 0\n".to_vec())),
        Format::Arc,
    )
    .unwrap();
    let e = read_to_error(r).1.unwrap();
    assert_eq!(
        e.to_string(),
        "z: line 1: n_blocks is 0; expected at least 1 block per request"
    );
}

#[test]
fn corrupt_and_truncated_compressed_streams() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..50_000u32)
        .map(|i| format!("{}\n", i * 13 % 7777))
        .collect();
    let cases: [(&str, Vec<u8>, &str); 3] = [
        ("t.gz", gzip(text.as_bytes()), "gzip"),
        ("t.xz", xz(text.as_bytes()), "xz"),
        ("t.zst", zstd(text.as_bytes()), "zstd"),
    ];
    for (name, good, codec) in cases {
        // Truncated: drop the last third.
        let cut = &good[..good.len() * 2 / 3];
        let path = write(dir.path(), &format!("cut-{name}"), cut);
        let (ok, e) = open_err(&path, Format::Text);
        assert!(ok.len() < 50_000, "{name}: {} records", ok.len());
        assert!(
            matches!(&e, TraceError::Decompress { codec: c, .. } if *c == codec),
            "{name}: {e}"
        );
        assert!(
            e.to_string()
                .starts_with(&format!("{}: {codec}: ", path.display())),
            "{e}"
        );
        // Corrupt: flip bytes in the middle of the compressed data.
        let mut bad = good.clone();
        let mid = bad.len() / 2;
        for b in &mut bad[mid..mid + 16] {
            *b ^= 0x5a;
        }
        let path = write(dir.path(), &format!("bad-{name}"), &bad);
        // The decoder may produce garbage before a checksum catches it: then the garbage
        // is reported (as a bad line) first. Either way the trace does not end quietly.
        let (_, e) = open_err(&path, Format::Text);
        eprintln!("corrupt {name}: {e}");
        assert!(
            matches!(&e, TraceError::Decompress { codec: c, .. } if *c == codec)
                || matches!(&e, TraceError::Parse { .. }),
            "{name}: {e}"
        );
        // Only the magic number.
        let magic_len = if codec == "xz" {
            6
        } else if codec == "zstd" {
            4
        } else {
            2
        };
        let path = write(dir.path(), &format!("magic-{name}"), &good[..magic_len]);
        let r = TraceReader::open(&path, Format::Text).unwrap();
        let e = read_to_error(r).1.expect("error for a bare magic number");
        assert!(matches!(e, TraceError::Decompress { .. }), "{name}: {e}");
    }
    // A wrong gzip CRC is caught at the end, after all (suspect) records were yielded.
    let mut crc = gzip(text.as_bytes());
    let n = crc.len();
    crc[n - 8] ^= 1;
    let path = write(dir.path(), "crc.gz", &crc);
    let (ok, e) = open_err(&path, Format::Text);
    assert_eq!(ok.len(), 50_000);
    assert!(
        matches!(e, TraceError::Decompress { codec: "gzip", .. }),
        "{e}"
    );
    // Garbage after a zstd frame is not silently ignored.
    let mut trailing = zstd(b"1\n2\n");
    trailing.extend_from_slice(b"garbage!");
    let r =
        TraceReader::from_reader("g.zst", Box::new(Cursor::new(trailing)), Format::Text).unwrap();
    let (_, e, _) = read_to_error(r);
    assert!(matches!(e, Some(TraceError::Decompress { .. })), "{e:?}");
}

/// A reader that fails after `ok` bytes.
struct FailingReader {
    data: Cursor<Vec<u8>>,
    ok: u64,
}

impl Read for FailingReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.data.position() >= self.ok {
            return Err(io::Error::other("device on fire"));
        }
        let room = (self.ok - self.data.position()) as usize;
        let n = buf.len().min(room);
        self.data.read(&mut buf[..n])
    }
}

#[test]
fn io_errors_are_not_decoder_errors() {
    let text: String = (0..100_000u32).map(|i| format!("{i}\n")).collect();
    // Records read before the source fails at half its bytes: uncompressed, every
    // whole line of the first 294,445 bytes (10,000 keys of up to 4 digits in 48,890
    // bytes, then 40,925 of 5); compressed, what the decoder's buffering let through.
    for (data, codec, decoded) in [
        (text.clone().into_bytes(), "none", 50_925),
        (zstd(text.as_bytes()), "zstd", 23_697),
        (gzip(text.as_bytes()), "gzip", 49_351),
        (xz(text.as_bytes()), "xz", 45_002),
    ] {
        let ok = data.len() as u64 / 2;
        let src = FailingReader {
            data: Cursor::new(data),
            ok,
        };
        let r = TraceReader::from_reader("foo", Box::new(src), Format::Text).unwrap();
        assert_eq!(r.compression().name(), codec);
        let (recs, e, _) = read_to_error(r);
        let e = e.expect("error");
        assert_eq!(recs.len(), decoded, "{codec}");
        assert_eq!(e.to_string(), "foo: I/O error: device on fire", "{codec}");
        assert!(matches!(e, TraceError::Io { .. }));
    }
    // Failing at once: reported by from_reader.
    let src = FailingReader {
        data: Cursor::new(Vec::new()),
        ok: 0,
    };
    let e = TraceReader::from_reader("foo", Box::new(src), Format::Text).unwrap_err();
    assert_eq!(e.to_string(), "foo: I/O error: device on fire");
}

#[test]
fn missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.trace");
    let e = TraceReader::open(&path, Format::Text).unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("{}: I/O error: ", path.display())),
        "{e}"
    );
    assert_eq!(
        sniff_format(&path).unwrap_err().to_string(),
        format!(
            "{}: I/O error: No such file or directory (os error 2)",
            path.display()
        )
    );
}

#[test]
fn empty_files() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("empty", Vec::new()),
        ("empty.gz", gzip(b"")),
        ("empty.xz", xz(b"")),
        ("empty.zst", zstd(b"")),
    ] {
        let path = write(dir.path(), name, &bytes);
        for format in Format::ALL {
            let options = ReadOptions {
                csv: Some("key=1".parse().unwrap()),
                ..ReadOptions::default()
            };
            let (ok, e, r) = read_to_error(TraceReader::open_with(&path, format, options).unwrap());
            assert!(ok.is_empty() && e.is_none(), "{name} {format}");
            assert_eq!(r.stats(), &Default::default());
        }
        assert_eq!(sniff_format(&path).unwrap(), Format::Text);
    }
    // Only blank lines and comments: zero references, counted skips.
    let r = TraceReader::from_reader(
        "b",
        Box::new(Cursor::new(b"\n# x\n \r\n".to_vec())),
        Format::Arc,
    )
    .unwrap();
    let (ok, e, r) = read_to_error(r);
    assert!(ok.is_empty() && e.is_none());
    assert_eq!(r.stats().skipped_blank, 2);
    assert_eq!(r.stats().skipped_comments, 1);
    assert_eq!(r.stats().records, 3);
}

#[test]
fn over_long_line() {
    let mut data = b"1\n".to_vec();
    data.extend_from_slice(&[b'9'; 300_000]);
    let r =
        TraceReader::from_reader("long.txt", Box::new(Cursor::new(data)), Format::Text).unwrap();
    let (ok, e, _) = read_to_error(r);
    assert_eq!(ok.len(), 1);
    let e = e.unwrap();
    assert!(matches!(e, TraceError::LineTooLong { line: 2, .. }), "{e}");
    // A binary trace read as text fails fast rather than buffering it.
    let r = TraceReader::from_reader(
        "bin",
        Box::new(Cursor::new(vec![0u8; 1 << 20])),
        Format::Text,
    )
    .unwrap();
    assert_eq!(
        read_to_error(r).1.unwrap().to_string(),
        "bin: line 1: line longer than 262144 bytes; expected a short text line (is this a \
         binary trace?)"
    );
}

#[test]
fn unknown_format_string() {
    let e = "lru".parse::<Format>().unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "unknown trace format \"lru\"; expected one of: {}",
            Format::NAMES.join(", ")
        )
    );
    assert!(e
        .to_string()
        .contains("text, lirs, arc, oracle-general, native, "));
    // `auto` is the CLI's, not a format.
    for name in ["", "auto"] {
        assert_eq!(
            name.parse::<Format>().unwrap_err().to_string(),
            format!(
                "unknown trace format \"{name}\"; expected one of: {}",
                Format::NAMES.join(", ")
            )
        );
    }
}

#[test]
fn densifier_over_its_limit() {
    let mut d = Densifier::new(3);
    for k in [10, 20, 10, 30, 20] {
        d.id(k).unwrap();
    }
    assert_eq!(d.distinct(), 3);
    let e = d.id(40).unwrap_err();
    assert!(matches!(
        e,
        TraceError::TooManyDistinct {
            limit: 3,
            key: 40,
            ..
        }
    ));
    assert_eq!(
        e.to_string(),
        "more than 3 distinct keys (key 40 would be number 4); expected at most 3"
    );
    assert_eq!(d.id(30).unwrap(), 2);
}

#[test]
fn undetectable_content_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for (name, data) in [
        ("pairs.txt", b"1 2\n3 4\n".to_vec()),
        ("words.txt", b"hello\nworld\n".to_vec()),
        ("short.bin", vec![0u8, 1, 2, 255]),
        ("zeros.bin", vec![0u8; 48]),
        ("odd.bin", [0u8, 0, 0, 1, 0, 0, 0, 2, 0, 9].to_vec()),
    ] {
        let path = write(dir.path(), name, &data);
        let e = sniff_format(&path).unwrap_err();
        assert!(matches!(e, TraceError::Undetected { .. }), "{name}: {e}");
        assert!(
            e.to_string().starts_with(&format!(
                "{}: cannot detect the trace format: ",
                path.display()
            )),
            "{e}"
        );
        let opened = TraceReader::open_auto(&path).err();
        assert_eq!(opened.map(|o| o.to_string()), Some(e.to_string()));
    }
    // A truncated oracleGeneral trace is still recognised; reading it reports the cut.
    let path = write(dir.path(), "cut.bin", &oracle_bytes(2)[..40]);
    assert_eq!(sniff_format(&path).unwrap(), Format::OracleGeneral);
    let (ok, e, _) = read_to_error(TraceReader::open_auto(&path).unwrap());
    assert_eq!(ok.len(), 1);
    assert!(
        matches!(
            e,
            Some(TraceError::Truncated {
                record: 2,
                got: 16,
                ..
            })
        ),
        "{e:?}"
    );
    // And compressed content is sniffed after decompression.
    let path = write(dir.path(), "o.bin.xz", &xz(&oracle_bytes(5)));
    assert_eq!(sniff_format(&path).unwrap(), Format::OracleGeneral);
    let path = write(dir.path(), "l.gz", &gzip(b"1\n*\n2\n"));
    assert_eq!(sniff_format(&path).unwrap(), Format::Lirs);
}

/// A byte-order mark or an accented comment is text, not binary keys: the same
/// references as the plain file, whatever the format.
#[test]
fn bom_and_accented_comments_read_as_text() {
    let plain: Vec<u64> = read_to_error(
        TraceReader::from_reader_auto("plain", Box::new(Cursor::new(b"7\n8\n7\n".to_vec())))
            .unwrap(),
    )
    .0
    .iter()
    .map(|r| r.key)
    .collect();
    assert_eq!(plain, [7, 8, 7]);
    for data in [
        b"\xEF\xBB\xBF7\n8\n7\n".to_vec(),
        "# r\u{e9}sum\u{e9}\n7\n8\n7\n".as_bytes().to_vec(),
        "\u{feff}# \u{e9}t\u{e9}\r\n7\r\n8\r\n7\r\n"
            .as_bytes()
            .to_vec(),
    ] {
        let r = TraceReader::from_reader_auto("t", Box::new(Cursor::new(data.clone()))).unwrap();
        assert_eq!(r.format(), Format::Text, "{data:?}");
        let (records, err, _) = read_to_error(r);
        assert!(err.is_none(), "{data:?}: {err:?}");
        let keys: Vec<u64> = records.iter().map(|r| r.key).collect();
        assert_eq!(keys, plain, "{data:?}");
    }
    // A BOM is skipped by every text reader, also with an explicit format.
    let r = TraceReader::from_reader(
        "t",
        Box::new(Cursor::new(b"\xEF\xBB\xBF1 2 0 0\n".to_vec())),
        Format::Arc,
    )
    .unwrap();
    let (records, err, _) = read_to_error(r);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(records.iter().map(|r| r.key).collect::<Vec<_>>(), [1, 2]);
}

/// The generic csv reader, told the MSR columns, reads an MSR trace exactly as the
/// MSR reader does (pages, writes, skipped header); its errors name the line.
#[test]
fn csv_with_msr_columns_matches_the_msr_reader() {
    let msr = b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n\
        128166385295514663,hm,0,Write,9056014336,2048,2833\n\
        128166385301451520,hm,0,Write,3163095040,40960,3438\n\
        \n\
        # a comment\n\
        128166386784960460,hm,0,Read,11946549248,4096,3499\n\
        128166386784960461,hm,0,Read,11946549248,0,3499\n";
    let read = |format: Format, csv: Option<&str>| {
        let options = ReadOptions {
            csv: csv.map(|s| s.parse().unwrap()),
            ..ReadOptions::default()
        };
        let r = TraceReader::from_reader_with(
            "m",
            Box::new(Cursor::new(msr.to_vec())),
            format,
            options,
        )
        .unwrap();
        let (records, e, r) = read_to_error(r);
        assert!(e.is_none(), "{e:?}");
        (records, r.stats().clone())
    };
    let (want, want_stats) = read(Format::Msr, None);
    assert_eq!(want.len(), 12);
    let (got, got_stats) = read(Format::Csv, Some("key=5,op=4,size=6,header"));
    assert_eq!(got, want);
    assert_eq!(got_stats, want_stats);
    // Without a layout, a csv reader is refused at open.
    let e = TraceReader::from_reader("m", Box::new(Cursor::new(msr.to_vec())), Format::Csv)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("--csv-columns"), "{e}");
    // A line with too few columns names its number.
    let options = ReadOptions {
        csv: Some("key=2,op=3".parse().unwrap()),
        ..ReadOptions::default()
    };
    let r = TraceReader::from_reader_with(
        "kv.csv",
        Box::new(Cursor::new(b"1,7,get\n2,8,set\n3,9\n".to_vec())),
        Format::Csv,
        options,
    )
    .unwrap();
    let (records, e, _) = read_to_error(r);
    assert_eq!(
        records,
        [
            Record {
                key: 7,
                write: false,
                cont: false,
                fault: false,
                sync: mmsim_trace::SyncSpan::NONE,
            },
            Record {
                key: 8,
                write: true,
                cont: false,
                fault: false,
                sync: mmsim_trace::SyncSpan::NONE,
            }
        ]
    );
    assert_eq!(
        e.unwrap().to_string(),
        "kv.csv: line 3: expected at least 3 columns (the spec names column 3), found 2: \"3,9\""
    );
}
