//! Property test: whatever the bytes, every reader returns records or a
//! clear error — never a panic, never an endless stream.

use mmsim_trace::{Format, NativeOptions, NativeWriter, Record, TraceReader};
use proptest::prelude::*;

fn drain(bytes: Vec<u8>, format: Format) {
    let Ok(mut r) = TraceReader::from_reader(
        "fuzz",
        Box::new(std::io::Cursor::new(bytes.clone())),
        format,
    ) else {
        return;
    };
    let mut out = Vec::new();
    let mut total = 0u64;
    loop {
        match r.read_batch(&mut out, 4096) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n as u64,
        }
        // ARC lines expand to at most 2^20 references each, block requests and lackey or
        // filemap lines to at most 2^18 + 1 pages, native blocks hold fewer records than
        // their decompressed bytes (at most 16 MiB from any payload).
        assert!(total <= (bytes.len() as u64 + 1) << 20, "runaway reader");
    }
}

/// A small valid native trace (three blocks), to be mutated.
fn native_sample() -> Vec<u8> {
    let records: Vec<Record> = (0..40u64)
        .map(|i| Record {
            key: i * 977 % 300,
            write: i % 4 == 0,
            cont: false,
            fault: false,
            sync: mmsim_trace::SyncSpan::NONE,
        })
        .collect();
    let options = NativeOptions {
        block_records: 16,
        ..NativeOptions::default()
    };
    let mut w = NativeWriter::with_options("n", Vec::new(), options).unwrap();
    w.write_all(&records).unwrap();
    w.finish().unwrap().0
}

fn inputs() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // a native trace, cut and with bytes changed
        (
            0usize..400,
            prop::collection::vec((0usize..400, any::<u8>()), 0..4)
        )
            .prop_map(|(cut, edits)| {
                let mut b = native_sample();
                for (at, v) in edits {
                    let n = b.len();
                    b[at % n] = v;
                }
                b.truncate(cut.max(1).min(b.len()));
                b
            }),
        // line-shaped text of the csv, address, lackey and filemap formats
        prop::collection::vec(
            prop::sample::select(vec![
                &b"1,5,2a,512,8\n"[..],
                b"1,hm,0,Read,4096,8192,5\n",
                b"0041f7a0 W\n",
                b"s 0x1fffff50 1\n",
                b"I  04016cb0,3\n",
                b" M 0fff,2\n",
                b"==1== x\n",
                b"c 1 [0] 1.0: filemap:mm_filemap_get_pages: dev=8:1 ino=2 ofs=0-8191\n",
                b"mm_filemap_add_to_page_cache: dev 8:1 ino 3 pfn=0x1 ofs=0 order=9\n",
                b",",
                b"9",
                b"ff",
                b"\n",
                b" ",
                b"-",
            ]),
            0..64
        )
        .prop_map(|parts| parts.concat()),
        prop::collection::vec(any::<u8>(), 0..2048),
        // text-like: digits, spaces, newlines, stars, signs
        prop::collection::vec(
            prop::sample::select(b"0123456789 \n\r*-#x\t".to_vec()),
            0..2048
        ),
        // compressed-looking: a real magic followed by garbage
        (
            prop::sample::select(vec![
                vec![0x1f, 0x8b],
                vec![0xfd, b'7', b'z', b'X', b'Z', 0],
                vec![0x28, 0xb5, 0x2f, 0xfd]
            ]),
            prop::collection::vec(any::<u8>(), 0..512)
        )
            .prop_map(|(mut m, rest)| {
                m.extend(rest);
                m
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn readers_never_panic(bytes in inputs()) {
        for format in Format::ALL {
            drain(bytes.clone(), format);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
    /// Any record sequence survives the native format unchanged, whatever the block size.
    #[test]
    fn native_round_trips(
        records in prop::collection::vec(
            (prop_oneof![any::<u64>(), 0u64..1000, u64::MAX - 1000..=u64::MAX], any::<bool>()),
            0..600,
        ),
        block_records in 1u32..300,
    ) {
        let records: Vec<Record> = records
            .into_iter()
            .map(|(key, write)| Record { key, write, cont: false, fault: false, sync: mmsim_trace::SyncSpan::NONE })
            .collect();
        let options = NativeOptions { block_records, ..NativeOptions::default() };
        let mut w = NativeWriter::with_options("n", Vec::new(), options).unwrap();
        w.write_all(&records).unwrap();
        let (bytes, stats) = w.finish().unwrap();
        prop_assert_eq!(stats.records, records.len() as u64);
        let r = TraceReader::from_reader("n", Box::new(std::io::Cursor::new(bytes)), Format::Native)
            .unwrap();
        let back: Vec<Record> = r.map(Result::unwrap).collect();
        prop_assert_eq!(back, records);
    }
}
