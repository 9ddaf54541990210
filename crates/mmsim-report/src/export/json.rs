//! JSON of results and comparisons: pretty-printed with a final newline, as
//! `mmsim run --json` and `mmsim compare --json` print them, and read back.
//!
//! A [`ScenarioResult`] (with the core `RunResult` it flattens) and a
//! [`CompareReport`] round-trip: what is written reads back to the same value, and
//! writing that again gives the same text.

use std::io;

use mmsim_workloads::ScenarioResult;
use serde::Serialize;

use crate::compare::CompareReport;

/// `value` as pretty-printed JSON with a final newline.
pub fn to_string(value: &impl Serialize) -> serde_json::Result<String> {
    let mut t = serde_json::to_string_pretty(value)?;
    t.push('\n');
    Ok(t)
}

/// Writes `value` as pretty-printed JSON with a final newline, in one write.
fn write(w: &mut dyn io::Write, value: &impl Serialize) -> io::Result<()> {
    w.write_all(to_string(value)?.as_bytes())
}

/// Writes a run's result, what `mmsim run --json` prints.
pub fn write_result(w: &mut dyn io::Write, r: &ScenarioResult) -> io::Result<()> {
    write(w, r)
}

/// Writes a comparison, what `mmsim compare --json` prints.
pub fn write_compare(w: &mut dyn io::Write, r: &CompareReport) -> io::Result<()> {
    write(w, r)
}

/// Reads a run's result as [`write_result`] (or `mmsim run --json`) wrote it.
pub fn read_result(text: &str) -> serde_json::Result<ScenarioResult> {
    serde_json::from_str(text)
}

/// Reads a comparison as [`write_compare`] (or `mmsim compare --json`) wrote it.
pub fn read_compare(text: &str) -> serde_json::Result<CompareReport> {
    serde_json::from_str(text)
}
