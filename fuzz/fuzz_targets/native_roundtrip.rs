//! The native format's round trip: any record sequence written by `NativeWriter`
//! reads back identical, and any bytes read as native give records or an error.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use mmsim_trace::{Format, NativeWriter, Record, SyncSpan, TraceReader};

fuzz_target!(|data: &[u8]| {
    // Arbitrary bytes as a native file.
    if let Ok(r) =
        TraceReader::from_reader("raw", Box::new(Cursor::new(data.to_vec())), Format::Native)
    {
        for item in r.take(1 << 20) {
            if item.is_err() {
                break;
            }
        }
    }
    // Records from the bytes: 8-byte keys, the write flag from the top bit of the
    // next byte, so small, huge, repeated and alternating keys all occur.
    let records: Vec<Record> = data
        .chunks(9)
        .filter(|c| c.len() == 9)
        .map(|c| Record {
            key: u64::from_le_bytes(c[..8].try_into().unwrap()),
            write: c[8] & 0x80 != 0,
            // The native format keeps keys and writes, not request boundaries,
            // whether a record was a fault, or syncs.
            cont: false,
            fault: false,
            sync: SyncSpan::NONE,
        })
        .collect();
    let mut w = NativeWriter::new("out", Vec::new()).expect("header");
    w.write_all(&records).expect("write");
    let (bytes, _) = w.finish().expect("finish");
    let back: Vec<Record> =
        TraceReader::from_reader("out", Box::new(Cursor::new(bytes)), Format::Native)
            .expect("open")
            .map(|r| r.expect("read back"))
            .collect();
    assert_eq!(back, records);
});
