//! [`TraceReader`]: the streaming reader for all formats.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::arc;
use crate::input::Input;
use crate::oracle::{self, OracleRecord};
use crate::sniff;
use crate::text;
use crate::{Compression, Format, ReadStats, Record, TraceError};

/// Streaming reader of one trace: decompression, parsing, counting.
///
/// Read it either as an iterator of `Result<Record, TraceError>` or, faster, in batches
/// with [`read_batch`](TraceReader::read_batch). Both may be mixed; they draw from the same
/// position.
///
/// Error handling: records before a faulty line or record are all delivered first, then
/// the error is reported once, after which the reader is finished (the iterator yields
/// `None`, `read_batch` returns `Ok(0)`).
///
/// Memory is bounded (one 256 KiB buffer plus the decoder's state) whatever the trace
/// contains.
pub struct TraceReader {
    name: String,
    format: Format,
    input: Input,
    stats: ReadStats,
    arc: arc::Pending,
    /// An error found while filling a batch that already held records; reported next.
    pending_error: Option<TraceError>,
    finished: bool,
    /// Scratch for the iterator.
    one: Vec<Record>,
}

impl std::fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceReader")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("compression", &self.input.compression())
            .field("stats", &self.stats)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

fn open_file(path: &Path) -> Result<(String, Box<dyn Read + Send>), TraceError> {
    let name = path.display().to_string();
    match File::open(path) {
        Ok(file) => Ok((name, Box::new(file))),
        Err(source) => Err(TraceError::Io { file: name, source }),
    }
}

impl TraceReader {
    /// Opens the file at `path` (raw, gzip, xz or zstd, detected from its content) as a
    /// trace in `format`. The path as given is the name used in errors.
    pub fn open(path: &Path, format: Format) -> Result<TraceReader, TraceError> {
        let (name, file) = open_file(path)?;
        TraceReader::from_reader(&name, file, format)
    }

    /// Opens the file at `path` and detects its format with the rules of
    /// [`sniff_format`](crate::sniff_format), reading the file only once.
    pub fn open_auto(path: &Path) -> Result<TraceReader, TraceError> {
        let (name, file) = open_file(path)?;
        TraceReader::from_reader_auto(&name, file)
    }

    /// Reads a trace in `format` from any reader (decompressing it if its first bytes are
    /// a gzip, xz or zstd magic number). `name` identifies the trace in errors. Reads the
    /// first few bytes immediately (I/O errors then are reported here).
    pub fn from_reader(
        name: &str,
        reader: Box<dyn Read + Send>,
        format: Format,
    ) -> Result<TraceReader, TraceError> {
        let input = Input::new(name, reader)?;
        Ok(TraceReader::with_input(name, input, format))
    }

    /// Like [`from_reader`](TraceReader::from_reader), detecting the format from the first
    /// 64 KiB of content (see [`sniff_format`](crate::sniff_format)).
    pub fn from_reader_auto(
        name: &str,
        reader: Box<dyn Read + Send>,
    ) -> Result<TraceReader, TraceError> {
        let mut input = Input::new(name, reader)?;
        let format = sniff::sniff_input(name, &mut input)?;
        Ok(TraceReader::with_input(name, input, format))
    }

    fn with_input(name: &str, input: Input, format: Format) -> TraceReader {
        TraceReader {
            name: name.to_string(),
            format,
            input,
            stats: ReadStats::default(),
            arc: arc::Pending::default(),
            pending_error: None,
            finished: false,
            one: Vec::with_capacity(1),
        }
    }

    /// What has been read so far: records, references yielded, skipped lines.
    pub fn stats(&self) -> &ReadStats {
        &self.stats
    }

    /// The format the trace is read as.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The compression detected from the first bytes.
    pub fn compression(&self) -> Compression {
        self.input.compression()
    }

    /// The name used in errors (the path as given, or the name given to `from_reader`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Clears `out` and fills it with up to `max` records; returns how many. `Ok(0)` means
    /// the end of the trace (or `max == 0`). A batch shorter than `max` is returned only at
    /// the end of the trace or just before an error, which the next call returns.
    ///
    /// This is the fast path: records are parsed straight from the read buffer into `out`,
    /// which is reused across calls (no allocation once its capacity reaches `max`).
    pub fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<usize, TraceError> {
        self.run(out, max, |r, out, max| {
            let TraceReader {
                name,
                format,
                input,
                stats,
                arc,
                ..
            } = r;
            match format {
                Format::Text => text::fill(input, name, stats, false, out, max),
                Format::Lirs => text::fill(input, name, stats, true, out, max),
                Format::Arc => arc::fill(input, name, stats, arc, out, max),
                Format::OracleGeneral => oracle::fill(input, name, stats, out, max, |b| Record {
                    key: oracle::obj_id(b),
                    write: false,
                }),
            }
        })
    }

    /// Like [`read_batch`](TraceReader::read_batch) but with every field of the records;
    /// only for the [`OracleGeneral`](Format::OracleGeneral) format (otherwise
    /// [`TraceError::WrongFormat`], and the reader is left as it was).
    pub fn read_oracle_batch(
        &mut self,
        out: &mut Vec<OracleRecord>,
        max: usize,
    ) -> Result<usize, TraceError> {
        if self.format != Format::OracleGeneral {
            out.clear();
            return Err(TraceError::WrongFormat {
                file: self.name.clone(),
                operation: "read_oracle_batch",
                needed: Format::OracleGeneral,
                actual: self.format,
            });
        }
        self.run(out, max, |r, out, max| {
            oracle::fill(
                &mut r.input,
                &r.name,
                &mut r.stats,
                out,
                max,
                OracleRecord::from_bytes,
            )
        })
    }

    /// Common bookkeeping of the batch readers: pending errors, end of trace, counts.
    fn run<T>(
        &mut self,
        out: &mut Vec<T>,
        max: usize,
        fill: impl FnOnce(&mut Self, &mut Vec<T>, usize) -> Result<(), TraceError>,
    ) -> Result<usize, TraceError> {
        out.clear();
        if let Some(e) = self.pending_error.take() {
            self.finished = true;
            return Err(e);
        }
        if self.finished || max == 0 {
            return Ok(0);
        }
        let result = fill(self, out, max);
        self.stats.references += out.len() as u64;
        match result {
            Ok(()) => {
                if out.is_empty() {
                    self.finished = true;
                }
                Ok(out.len())
            }
            Err(e) if out.is_empty() => {
                self.finished = true;
                Err(e)
            }
            Err(e) => {
                self.pending_error = Some(e);
                Ok(out.len())
            }
        }
    }
}

impl Iterator for TraceReader {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut one = std::mem::take(&mut self.one);
        let result = self.read_batch(&mut one, 1);
        let record = one.first().copied();
        self.one = one;
        match result {
            Ok(0) => None,
            Ok(_) => record.map(Ok),
            Err(e) => Some(Err(e)),
        }
    }
}
