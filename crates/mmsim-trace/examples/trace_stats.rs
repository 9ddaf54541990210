//! Prints what the reader finds in a trace: format, compression, counts, distinct keys,
//! throughput.
//!
//! ```text
//! cargo run -p mmsim-trace --release --example trace_stats -- FILE [FORMAT]
//! ```
//! Without a format, it is detected from the content (and the reason printed); `help` as
//! the format lists the formats.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use mmsim_trace::{Densifier, Format, TraceReader};

fn run(path: &Path, format: Option<Format>) -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let mut reader = match format {
        Some(f) => TraceReader::open(path, f)?,
        None => TraceReader::open_auto(path)?,
    };
    if let Some(sniffed) = reader.sniffed() {
        println!("{}: detected {sniffed}", reader.name());
    }
    let mut dense = Densifier::with_name(reader.name(), u32::MAX);
    let mut batch = Vec::new();
    while reader.read_batch(&mut batch, 1 << 16)? > 0 {
        for r in &batch {
            dense.id(r.key)?;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let s = reader.stats();
    println!(
        "{}: format {}, compression {}, {} records, {} references ({} writes), {} distinct \
         keys; {:.3} s ({:.1} M refs/s)",
        reader.name(),
        reader.format(),
        reader.compression(),
        s.records,
        s.references,
        s.writes,
        dense.distinct(),
        secs,
        s.references as f64 / secs / 1e6
    );
    println!("  {s:?}");
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!(
            "usage: trace_stats FILE [FORMAT]\n\nformats:\n{}",
            Format::help()
        );
        return ExitCode::from(2);
    };
    if args.get(1).is_some_and(|a| a == "help") {
        print!("{}", Format::help());
        return ExitCode::SUCCESS;
    }
    let format = match args.get(1).map(|s| s.parse::<Format>()).transpose() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(Path::new(file), format) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
