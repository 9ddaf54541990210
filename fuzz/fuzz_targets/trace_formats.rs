//! Every trace reader, format chosen by the first byte, on arbitrary (possibly
//! compressed) bytes: a record or a typed error, never a panic, and reading stops.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use mmsim_trace::{Format, TraceReader};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let format = Format::ALL[pick as usize % Format::ALL.len()];
    let Ok(reader) = TraceReader::from_reader("fuzz", Box::new(Cursor::new(body.to_vec())), format)
    else {
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
