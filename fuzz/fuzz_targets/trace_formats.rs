//! Every trace reader, format chosen by the first byte, on arbitrary (possibly
//! compressed) bytes: a record or a typed error, never a panic, and reading stops.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use mmsim_trace::{Format, ReadOptions, TraceReader};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let format = Format::ALL[pick as usize % Format::ALL.len()];
    // The csv reader's layout, also from the first byte: columns 1-3, with or
    // without a size column and a header, comma or tab.
    let spec = match pick >> 4 {
        0..=3 => "key=1",
        4..=7 => "key=2,op=1,delimiter=tab,header",
        8..=11 => "key=1,op=2,size=3,unit=512",
        _ => "key=3,key-is-num=false,delimiter=space",
    };
    let options = ReadOptions {
        csv: Some(spec.parse().expect("fixed spec")),
        // The filemap reader's optional events, from the same byte.
        syncs: pick & 4 != 0,
        read_calls: pick & 8 != 0,
        ..ReadOptions::default()
    };
    let Ok(reader) = TraceReader::from_reader_with(
        "fuzz",
        Box::new(Cursor::new(body.to_vec())),
        format,
        options,
    ) else {
        return;
    };
    // A reader yields at most a bounded number of references per input byte
    // (arc's n_blocks and block splitting expand lines): cap the walk.
    for item in reader.take(1 << 20) {
        if item.is_err() {
            break;
        }
    }
});
