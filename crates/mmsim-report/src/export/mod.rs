//! Exporters: results and comparisons as text tables ([`text`], [`run_text`]), CSV
//! ([`csv`]) and JSON ([`json`]); counters over time ([`series`]: CSV, JSON, text); `mmsim reproduce`'s tables and CSV ([`reproduce`]).
//!
//! Each exporter builds its output in memory and has a `write_*` function that
//! writes it to a writer the caller passes in, in one write; none opens a file or
//! touches standard output itself. The output is exactly what the `mmsim` command
//! prints for the same data.

pub mod csv;
pub mod json;
pub mod reproduce;
pub mod run_text;
pub mod series;
pub mod text;
