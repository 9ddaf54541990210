//! Error type of the trace readers.
//!
//! Every error that comes from reading a trace names the trace (the path as given to
//! [`TraceReader::open`](crate::TraceReader::open) or the name given to
//! [`TraceReader::from_reader`](crate::TraceReader::from_reader)), the position (1-based
//! line number for the text formats, 1-based record number for binary formats) where it
//! applies, and what was expected, so that a user can fix the input without a debugger:
//!
//! ```text
//! cloudPhysicsIO.txt: line 17: expected one integer key, found "12ab"
//! x.lis: line 3: expected `start_block n_blocks ignored request_no`, found 2 fields: "1 2"
//! x.lis: line 9: n_blocks 5000000000 exceeds the limit of 1048576 blocks per request
//! y.bin: record 4: truncated: 10 of 24 bytes
//! z.zst: zstd: Unknown frame descriptor
//! foo: I/O error: No such file or directory (os error 2)
//! ```

use std::fmt;
use std::io;

/// Everything that can go wrong while opening, sniffing or reading a trace, or while
/// densifying its keys.
///
/// The `Display` text is complete and meant to be shown to the user as is (it starts with
/// the trace name). The variants are public so that callers and tests can match on them;
/// [`file`](TraceError::file), [`line`](TraceError::line) and
/// [`record`](TraceError::record) give the position without matching.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// Opening or reading the underlying file (or reader) failed.
    #[error("{file}: I/O error: {source}")]
    Io {
        /// Trace name.
        file: String,
        /// The operating system's (or the reader's) error.
        #[source]
        source: io::Error,
    },

    /// The compressed stream is corrupt or truncated: the decoder's own message.
    #[error("{file}: {codec}: {message}")]
    Decompress {
        /// Trace name.
        file: String,
        /// `"gzip"`, `"xz"` or `"zstd"` ([`Compression::name`](crate::Compression::name)).
        codec: &'static str,
        /// What the decoder reported, e.g. `unexpected end of file`, `incomplete frame`.
        message: String,
    },

    /// A line of a text format does not have the expected shape.
    #[error("{file}: line {line}: expected {expected}, found {found}")]
    Parse {
        /// Trace name.
        file: String,
        /// 1-based line number (all lines count, including blank, comment and marker lines).
        line: u64,
        /// What the line should have been, e.g. ``one integer key`` or
        /// ``an unsigned integer n_blocks``.
        expected: &'static str,
        /// What was found: the (quoted, escaped, possibly shortened) text, or a field count.
        found: String,
    },

    /// A line of a text format is longer than the reader's buffer: this is not a text trace
    /// (or the format was not detected correctly).
    #[error(
        "{file}: line {line}: line longer than {limit} bytes; expected a short text line \
         (is this a binary trace?)"
    )]
    LineTooLong {
        /// Trace name.
        file: String,
        /// 1-based line number.
        line: u64,
        /// The longest line accepted, in bytes.
        limit: usize,
    },

    /// An ARC line requests zero blocks.
    #[error("{file}: line {line}: n_blocks is 0; expected at least 1 block per request")]
    ZeroBlocks {
        /// Trace name.
        file: String,
        /// 1-based line number.
        line: u64,
    },

    /// An ARC line requests an absurd number of blocks (more than [`crate::arc::MAX_BLOCKS`]).
    #[error(
        "{file}: line {line}: n_blocks {n_blocks} exceeds the limit of {limit} blocks per request"
    )]
    TooManyBlocks {
        /// Trace name.
        file: String,
        /// 1-based line number.
        line: u64,
        /// The `n_blocks` field as read.
        n_blocks: u64,
        /// The limit ([`crate::arc::MAX_BLOCKS`]).
        limit: u64,
    },

    /// An ARC line's block range `start_block .. start_block + n_blocks` does not fit in u64.
    #[error(
        "{file}: line {line}: start_block {start_block} + n_blocks {n_blocks} overflows; \
         expected block numbers below 2^64"
    )]
    KeyOverflow {
        /// Trace name.
        file: String,
        /// 1-based line number.
        line: u64,
        /// The `start_block` field.
        start_block: u64,
        /// The `n_blocks` field.
        n_blocks: u64,
    },

    /// A binary trace ends in the middle of a record.
    #[error("{file}: record {record}: truncated: {got} of {expected} bytes")]
    Truncated {
        /// Trace name.
        file: String,
        /// 1-based number of the incomplete record.
        record: u64,
        /// Bytes present.
        got: usize,
        /// Size of a whole record.
        expected: usize,
    },

    /// [`sniff_format`](crate::sniff_format) could not recognise the content.
    #[error(
        "{file}: cannot detect the trace format: {reason}; expected one of {}, \
         or name the format explicitly",
        crate::Format::NAMES.join(", ")
    )]
    Undetected {
        /// Trace name.
        file: String,
        /// Why no format fits.
        reason: String,
    },

    /// A [`Densifier`](crate::Densifier) was asked for more distinct keys than its limit.
    #[error(
        "{}more than {limit} distinct keys (key {key} would be number {}); expected at most {limit}",
        prefix(.file),
        u64::from(*.limit) + 1
    )]
    TooManyDistinct {
        /// Trace name, or empty when the densifier was created without one.
        file: String,
        /// The densifier's limit.
        limit: u32,
        /// The first key that did not fit.
        key: u64,
    },

    /// A binary record, block, header or footer (or a field of a text line, where a
    /// [`Parse`](TraceError::Parse) does not fit) does not have the expected content: wrong
    /// magic number, unknown version, checksum mismatch, a value that is out of range.
    #[error("{file}: {at}: expected {expected}, found {found}")]
    Invalid {
        /// Trace name.
        file: String,
        /// Where: header, line, record, block or footer.
        at: Position,
        /// What it should have been.
        expected: String,
        /// What was found.
        found: String,
    },

    /// A length or count read from the trace exceeds a fixed limit of the reader (a request
    /// of more than 1 GiB, a native block of more than 16 MiB, more distinct files than
    /// allowed): a corrupt field, not a real request, and never something to allocate for.
    #[error("{file}: {at}: {what} {value} exceeds the limit of {limit}")]
    TooLarge {
        /// Trace name.
        file: String,
        /// Where.
        at: Position,
        /// What the number is, with its unit, e.g. `request length in bytes`.
        what: &'static str,
        /// The value read (or reached).
        value: u64,
        /// The largest value accepted.
        limit: u64,
    },

    /// A method was used with a reader of the wrong format (e.g.
    /// [`read_oracle_batch`](crate::TraceReader::read_oracle_batch) on a text trace).
    #[error("{file}: {operation} needs the {needed} format, but the trace is read as {actual}")]
    WrongFormat {
        /// Trace name.
        file: String,
        /// The method called.
        operation: &'static str,
        /// The format it needs.
        needed: crate::Format,
        /// The format of the reader.
        actual: crate::Format,
    },
}

fn prefix(file: &str) -> String {
    if file.is_empty() {
        String::new()
    } else {
        format!("{file}: ")
    }
}

impl TraceError {
    /// The trace name the error is about (empty only for a [`Densifier`](crate::Densifier)
    /// created without a name).
    pub fn file(&self) -> &str {
        match self {
            TraceError::Io { file, .. }
            | TraceError::Decompress { file, .. }
            | TraceError::Parse { file, .. }
            | TraceError::LineTooLong { file, .. }
            | TraceError::ZeroBlocks { file, .. }
            | TraceError::TooManyBlocks { file, .. }
            | TraceError::KeyOverflow { file, .. }
            | TraceError::Truncated { file, .. }
            | TraceError::Undetected { file, .. }
            | TraceError::Invalid { file, .. }
            | TraceError::TooLarge { file, .. }
            | TraceError::TooManyDistinct { file, .. }
            | TraceError::WrongFormat { file, .. } => file,
        }
    }

    /// The 1-based line number, for errors about a line of a text format.
    pub fn line(&self) -> Option<u64> {
        match self {
            TraceError::Parse { line, .. }
            | TraceError::LineTooLong { line, .. }
            | TraceError::ZeroBlocks { line, .. }
            | TraceError::TooManyBlocks { line, .. }
            | TraceError::KeyOverflow { line, .. } => Some(*line),
            TraceError::Invalid { at, .. } | TraceError::TooLarge { at, .. } => at.line(),
            _ => None,
        }
    }

    /// The 1-based record number, for errors about a record of a binary format.
    pub fn record(&self) -> Option<u64> {
        match self {
            TraceError::Truncated { record, .. } => Some(*record),
            TraceError::Invalid { at, .. } | TraceError::TooLarge { at, .. } => at.record(),
            _ => None,
        }
    }
}

/// Where in a trace an [`Invalid`](TraceError::Invalid) or
/// [`TooLarge`](TraceError::TooLarge) error applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Position {
    /// The file header (native format).
    Header,
    /// A 1-based line of a text format.
    Line(u64),
    /// A 1-based record of a binary format.
    Record(u64),
    /// A 1-based block of the native format, and the 1-based number of its first record.
    Block {
        /// 1-based block number.
        block: u64,
        /// 1-based number of the block's first record.
        record: u64,
    },
    /// The footer (native format).
    Footer,
}

impl Position {
    /// The line number, for [`Position::Line`].
    pub fn line(self) -> Option<u64> {
        match self {
            Position::Line(l) => Some(l),
            _ => None,
        }
    }

    /// The record number, for [`Position::Record`] and [`Position::Block`] (its first
    /// record).
    pub fn record(self) -> Option<u64> {
        match self {
            Position::Record(r) | Position::Block { record: r, .. } => Some(r),
            _ => None,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Header => f.write_str("header"),
            Position::Line(l) => write!(f, "line {l}"),
            Position::Record(r) => write!(f, "record {r}"),
            Position::Block { block, record } => {
                write!(f, "block {block} (from record {record})")
            }
            Position::Footer => f.write_str("footer"),
        }
    }
}

/// Error of `Format::from_str`: the name is not one of [`Format::NAMES`](crate::Format::NAMES).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFormat {
    /// The name that was given.
    pub given: String,
}

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown trace format {:?}; expected one of: {}",
            self.given,
            crate::Format::NAMES.join(", ")
        )
    }
}

impl std::error::Error for UnknownFormat {}

/// Quotes a piece of a line for an error message: lossy UTF-8, escaped, at most 80 chars.
pub(crate) fn quote(bytes: &[u8]) -> String {
    const MAX: usize = 80;
    let text = String::from_utf8_lossy(bytes);
    let mut short: String = text.chars().take(MAX).collect();
    let cut = short.len() < text.len();
    short = format!("{short:?}");
    if cut {
        short.push_str("...");
    }
    short
}
