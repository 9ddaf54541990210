//! Converts a trace to the native format: `to_native SRC DST [FORMAT [LEVEL [BLOCK_RECORDS]]]`.
use std::io::BufWriter;
use std::path::Path;

use mmsim_trace::{convert, Format, NativeOptions, NativeWriter, TraceReader};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().collect();
    let (src, dst) = (Path::new(&a[1]), Path::new(&a[2]));
    let mut reader = match a.get(3) {
        Some(f) => TraceReader::open(src, f.parse::<Format>()?)?,
        None => TraceReader::open_auto(src)?,
    };
    let mut options = NativeOptions::default();
    if let Some(l) = a.get(4) {
        options.level = l.parse()?;
    }
    if let Some(b) = a.get(5) {
        options.block_records = b.parse()?;
    }
    let out = BufWriter::new(std::fs::File::create(dst)?);
    let writer = NativeWriter::with_options(&a[2], out, options)?;
    let (_, stats) = convert(&mut reader, writer)?;
    println!("{stats:?}");
    Ok(())
}
