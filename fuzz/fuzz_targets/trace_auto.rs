//! Format sniffing and decompression (gzip, xz, zstd by magic number) on arbitrary
//! bytes, then the detected reader: a format or a typed error, never a panic.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use mmsim_trace::{sniff_bytes_explained, TraceReader};

fuzz_target!(|data: &[u8]| {
    let _ = sniff_bytes_explained("fuzz", data, true);
    let _ = sniff_bytes_explained("fuzz", data, false);
    let Ok(reader) = TraceReader::from_reader_auto("fuzz", Box::new(Cursor::new(data.to_vec())))
    else {
        return;
    };
    for item in reader.take(1 << 20) {
        if item.is_err() {
            break;
        }
    }
});
