//! Streaming readers of page and block access traces.
//!
//! `mmsim-trace` turns a trace file into a sequence of [`Record`]s (a `u64` key — block
//! number, object id or page number — and a write flag) for the simulator and the golden
//! tests. It reads streaming, decompresses transparently, reports every problem with the
//! file name and position, and counts whatever it skips.
//!
//! # Formats
//!
//! | [`Format`] | name | content | one record is | module |
//! |---|---|---|---|---|
//! | [`Text`](Format::Text) | `text` | one decimal key per line | a line → one reference | [`text`] |
//! | [`Lirs`](Format::Lirs) | `lirs` | like `text`; a `*` line is a marker, skipped | a line → one reference | [`text`] |
//! | [`Arc`](Format::Arc) | `arc` | `start_block n_blocks ignored request_no` per line (ARC `.lis`) | a line → `n_blocks` references | [`arc`] |
//! | [`OracleGeneral`](Format::OracleGeneral) | `oracle-general` | libCacheSim packed 24-byte LE records | a record → one reference (`obj_id`) | [`oracle`] |
//!
//! In the text formats, blank lines and lines starting with `#` are skipped, surrounding
//! spaces/tabs and a trailing `\r` are accepted, and anything else that is not the expected
//! shape is an error (no field is silently ignored). All formats yield `write: false`:
//! none of them records the access type.
//!
//! [`sniff_format`] (and [`TraceReader::open_auto`]) detect the format from the first
//! 64 KiB of decompressed content, never from the file name; see [`sniff`] for the rules.
//!
//! # Compression
//!
//! gzip, xz and zstd streams are recognised by their magic bytes and decoded on the fly
//! (see [`compress`]), including concatenated members/streams/frames. A corrupt or
//! truncated compressed stream is an error
//! ([`TraceError::Decompress`], e.g. `z.zst: zstd: incomplete frame`), distinct from an
//! I/O error of the file ([`TraceError::Io`]); it never just ends the trace early.
//!
//! # Streaming and memory
//!
//! Nothing proportional to the trace is ever held: the reader owns one 256 KiB buffer
//! (plus the decoder's window), parses lines and records in place without allocating per
//! line, and never allocates according to a length field read from the file (an ARC
//! request of `n_blocks` blocks is expanded lazily across batches). The longest accepted
//! text line is 256 KiB ([`TraceError::LineTooLong`] beyond).
//!
//! # Errors
//!
//! Every [`TraceError`] about a trace starts with the trace name and gives the 1-based
//! line (text formats) or record (binary formats) and what was expected, e.g.
//! `x.lis: line 3: expected `start_block n_blocks ignored request_no`, found 2 fields: "1 2"`
//! or `y.bin: record 4: truncated: 10 of 24 bytes`. A reader delivers every record before
//! the fault, then the error once, then ends. An empty file is a valid, empty trace.
//!
//! # Counting
//!
//! [`ReadStats`] (from [`TraceReader::stats`]) counts what was read so that nothing is lost
//! silently: `records` is the number of lines (text formats, *all* lines including skipped
//! ones) or binary records read; `references` the number of [`Record`]s yielded (larger
//! than `records` for ARC, whose lines expand to several blocks); `skipped_markers`,
//! `skipped_blank` and `skipped_comments` the lines skipped. For the text formats,
//! `records == references + skipped_markers + skipped_blank + skipped_comments` once the
//! trace has been read to the end.
//!
//! # Example
//!
//! ```no_run
//! use mmsim_trace::{Densifier, Format, TraceReader};
//! use std::path::Path;
//!
//! let mut reader = TraceReader::open(Path::new("OLTP.lis.zst"), Format::Arc)?;
//! let mut dense = Densifier::new(1 << 24);
//! let mut batch = Vec::new();
//! while reader.read_batch(&mut batch, 4096)? > 0 {
//!     for r in &batch {
//!         let _page: u32 = dense.id(r.key)?;
//!     }
//! }
//! eprintln!("{:?}, {} distinct keys", reader.stats(), dense.distinct());
//! # Ok::<(), mmsim_trace::TraceError>(())
//! ```
//!
//! [`Densifier`] maps the sparse keys to dense `u32` ids in order of first appearance.

#![warn(missing_docs)]

pub mod arc;
pub mod compress;
pub mod densify;
pub mod error;
mod input;
pub mod oracle;
mod reader;
pub mod sniff;
pub mod stackdist;
pub mod text;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

pub use compress::Compression;
pub use densify::{BuildKeyHasher, Densifier, KeyHasher};
pub use error::{TraceError, UnknownFormat};
pub use oracle::OracleRecord;
pub use reader::TraceReader;
pub use sniff::sniff_bytes;
pub use stackdist::StackDistance;

/// One reference of a trace: a key (block number, object id, page number) and whether it
/// writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// The referenced block, object or page.
    pub key: u64,
    /// Whether the reference is a write (always `false` for the formats of this crate,
    /// which do not record it).
    pub write: bool,
}

/// A trace format (see the [crate documentation](crate) for the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// One decimal key per line.
    Text,
    /// LIRS traces: one decimal key per line, `*` lines are markers (skipped).
    Lirs,
    /// ARC `.lis` traces: `start_block n_blocks ignored request_no`, expanded to blocks.
    Arc,
    /// libCacheSim oracleGeneral binary traces (24-byte little-endian records).
    OracleGeneral,
}

impl Format {
    /// All formats, in the order of [`NAMES`](Format::NAMES).
    pub const ALL: [Format; 4] = [
        Format::Text,
        Format::Lirs,
        Format::Arc,
        Format::OracleGeneral,
    ];

    /// The names accepted by `from_str` (besides the alias `oraclegeneral`; case is
    /// ignored).
    pub const NAMES: [&'static str; 4] = ["text", "lirs", "arc", "oracle-general"];

    /// The canonical name: `"text"`, `"lirs"`, `"arc"` or `"oracle-general"`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Lirs => "lirs",
            Format::Arc => "arc",
            Format::OracleGeneral => "oracle-general",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = UnknownFormat;

    /// Parses `text`, `lirs`, `arc`, `oracle-general` or `oraclegeneral`, ignoring case
    /// (so libCacheSim's spelling `oracleGeneral` works too).
    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        let lower = s.to_ascii_lowercase();
        match lower.as_str() {
            "text" => Ok(Format::Text),
            "lirs" => Ok(Format::Lirs),
            "arc" => Ok(Format::Arc),
            "oracle-general" | "oraclegeneral" => Ok(Format::OracleGeneral),
            _ => Err(UnknownFormat {
                given: s.to_string(),
            }),
        }
    }
}

/// Counts of what the reader did, reported to the user (never silent loss).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Lines (text formats, all of them, skipped ones included) or binary records read.
    pub records: u64,
    /// [`Record`]s yielded (an ARC line yields `n_blocks` of them).
    pub references: u64,
    /// LIRS `*` marker lines skipped.
    pub skipped_markers: u64,
    /// Blank (empty or whitespace-only) lines skipped.
    pub skipped_blank: u64,
    /// Lines starting with `#` skipped (text formats).
    pub skipped_comments: u64,
}

/// Detects the format of the trace at `path` from its first 64 KiB of (decompressed)
/// content.
///
/// Text lines of 4 integer fields are [`Format::Arc`]; lines of one integer or `*` are
/// [`Format::Lirs`] if a `*` occurs in the first 64 KiB, else [`Format::Text`]; binary
/// content is [`Format::OracleGeneral`] if its first records look sane (`obj_size > 0`,
/// `next_access_vtime` −1 or beyond the record's position). Anything else is
/// [`TraceError::Undetected`], naming the file and why. The full rules are in [`sniff`].
pub fn sniff_format(path: &Path) -> Result<Format, TraceError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| TraceError::Io {
        file: name.clone(),
        source,
    })?;
    let mut input = input::Input::new(&name, Box::new(file))?;
    sniff::sniff_input(&name, &mut input)
}
