//! Standard output whose write errors say what failed.
//!
//! A full disk or a closed pipe behind standard output used to surface as a bare
//! "No space left on device", or as a panic from `println!`. Every command writes
//! its result through [`stdout`], whose errors name standard output; `main` ends
//! quietly on a closed pipe (`mmsim ... | head`).

use std::io::{self, Write};

/// Standard output, locked, with named write errors.
pub struct Stdout(io::StdoutLock<'static>);

/// Standard output for a command's result.
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

fn named(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("writing to standard output: {e}"))
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(named)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(named)
    }
}

/// A JSON object output with the `schema_version` key first
/// ([`mmsim_workloads::SCHEMA_VERSION`]), then the fields of `T` (a struct or map).
#[derive(serde::Serialize)]
pub struct Versioned<'a, T: serde::Serialize> {
    /// The layout version of every JSON output of mmsim.
    pub schema_version: u32,
    /// The output's own fields.
    #[serde(flatten)]
    pub fields: &'a T,
}

impl<'a, T: serde::Serialize> Versioned<'a, T> {
    /// `fields` under the current schema version.
    pub fn new(fields: &'a T) -> Self {
        Versioned {
            schema_version: mmsim_workloads::SCHEMA_VERSION,
            fields,
        }
    }
}
