//! [`TraceReader`]: the streaming reader for all formats.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::expand::Run;
use crate::input::Input;
use crate::oracle::{self, OracleRecord};
use crate::{
    arc, csv, filemap, keyarray, lackey, lcs_csv, memsim, msr, native, sniff, text, ucsd, vscsi,
};
use crate::{Compression, Format, Position, ReadOptions, ReadStats, Record, Sniffed, TraceError};

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
    options: ReadOptions,
    /// How the format was detected, for readers opened with `open_auto`.
    sniffed: Option<Sniffed>,
    arc: arc::Pending,
    /// The rest of a request that expands to several references.
    run: Run,
    /// csv formats: a content line has been read (a header is only accepted before).
    seen_content: bool,
    /// vscsi: the version (0 until detected).
    vscsi_version: u8,
    /// filemap: the (dev, ino) → file number map.
    files: filemap::Files,
    /// native: block decoder.
    native: Box<native::State>,
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
            .field("sniffed", &self.sniffed)
            .field("compression", &self.input.compression())
            .field("stats", &self.stats)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

/// The file at `path`, or standard input for `-` (named so in errors).
fn open_file(path: &Path) -> Result<(String, Box<dyn Read + Send>), TraceError> {
    if path == Path::new("-") {
        return Ok(("standard input".to_string(), Box::new(std::io::stdin())));
    }
    let name = path.display().to_string();
    match File::open(path) {
        Ok(file) => Ok((name, Box::new(file))),
        Err(source) => Err(TraceError::Io { file: name, source }),
    }
}

impl TraceReader {
    /// Opens the file at `path` (raw, gzip, xz or zstd, detected from its content) as a
    /// trace in `format`; `-` is standard input. The path as given is the name used in
    /// errors.
    pub fn open(path: &Path, format: Format) -> Result<TraceReader, TraceError> {
        TraceReader::open_with(path, format, ReadOptions::default())
    }

    /// Like [`open`](TraceReader::open), with reader options.
    pub fn open_with(
        path: &Path,
        format: Format,
        options: ReadOptions,
    ) -> Result<TraceReader, TraceError> {
        let (name, file) = open_file(path)?;
        TraceReader::from_reader_with(&name, file, format, options)
    }

    /// Opens the file at `path` and detects its format with the rules of
    /// [`sniff_format`](crate::sniff_format), reading the file only once;
    /// [`sniffed`](TraceReader::sniffed) then says what was chosen and why.
    pub fn open_auto(path: &Path) -> Result<TraceReader, TraceError> {
        TraceReader::open_auto_with(path, ReadOptions::default())
    }

    /// Like [`open_auto`](TraceReader::open_auto), with reader options.
    pub fn open_auto_with(path: &Path, options: ReadOptions) -> Result<TraceReader, TraceError> {
        let (name, file) = open_file(path)?;
        TraceReader::from_reader_auto_with(&name, file, options)
    }

    /// Reads a trace in `format` from any reader (decompressing it if its first bytes are
    /// a gzip, xz or zstd magic number). `name` identifies the trace in errors. Reads the
    /// first few bytes immediately (I/O errors then are reported here).
    pub fn from_reader(
        name: &str,
        reader: Box<dyn Read + Send>,
        format: Format,
    ) -> Result<TraceReader, TraceError> {
        TraceReader::from_reader_with(name, reader, format, ReadOptions::default())
    }

    /// Like [`from_reader`](TraceReader::from_reader), with reader options.
    pub fn from_reader_with(
        name: &str,
        reader: Box<dyn Read + Send>,
        format: Format,
        options: ReadOptions,
    ) -> Result<TraceReader, TraceError> {
        if format == Format::Csv && options.csv.is_none() {
            return Err(TraceError::Invalid {
                file: name.to_string(),
                at: Position::Header,
                expected: "the csv format's column layout, which the `mmsim trace` commands \
                           take as --csv-columns (e.g. key=2,op=3); to run a csv trace, convert \
                           it first: mmsim trace convert IN OUT.mmt --format csv --csv-columns ..."
                    .into(),
                found: "no column layout".into(),
            });
        }
        let input = Input::new(name, reader)?;
        Ok(TraceReader::with_input(name, input, format, options, None))
    }

    /// Like [`from_reader`](TraceReader::from_reader), detecting the format from the first
    /// 64 KiB of content (see [`sniff_format`](crate::sniff_format)).
    pub fn from_reader_auto(
        name: &str,
        reader: Box<dyn Read + Send>,
    ) -> Result<TraceReader, TraceError> {
        TraceReader::from_reader_auto_with(name, reader, ReadOptions::default())
    }

    /// Like [`from_reader_auto`](TraceReader::from_reader_auto), with reader options.
    pub fn from_reader_auto_with(
        name: &str,
        reader: Box<dyn Read + Send>,
        options: ReadOptions,
    ) -> Result<TraceReader, TraceError> {
        let mut input = Input::new(name, reader)?;
        let sniffed = sniff::sniff_input(name, &mut input)?;
        Ok(TraceReader::with_input(
            name,
            input,
            sniffed.format,
            options,
            Some(sniffed),
        ))
    }

    fn with_input(
        name: &str,
        input: Input,
        format: Format,
        options: ReadOptions,
        sniffed: Option<Sniffed>,
    ) -> TraceReader {
        TraceReader {
            name: name.to_string(),
            format,
            input,
            stats: ReadStats::default(),
            options,
            sniffed,
            arc: arc::Pending::default(),
            run: Run::default(),
            seen_content: false,
            vscsi_version: 0,
            files: filemap::Files::default(),
            native: Box::default(),
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

    /// For a reader opened with format detection (`open_auto`, `from_reader_auto`): the
    /// format chosen and why. `None` when the format was given.
    pub fn sniffed(&self) -> Option<&Sniffed> {
        self.sniffed.as_ref()
    }

    /// The options the reader was opened with.
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    /// The compression detected from the first bytes.
    pub fn compression(&self) -> Compression {
        self.input.compression()
    }

    /// The name used in errors (the path as given, or the name given to `from_reader`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the keys read are dense ids in order of first appearance, checked as they
    /// are read: a native trace whose header has
    /// [`FLAG_DENSE_KEYS`](crate::native::FLAG_DENSE_KEYS) (known once the first batch
    /// has been read). A replay can then take each key as its page id without a table
    /// ([`Densifier::assume_dense`](crate::Densifier::assume_dense)).
    pub fn dense_keys(&self) -> bool {
        self.format == Format::Native && self.native.dense_keys()
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
                options,
                arc,
                run,
                seen_content,
                vscsi_version,
                files,
                native,
                ..
            } = r;
            match format {
                Format::Text => text::fill(input, name, stats, false, out, max),
                Format::Lirs => text::fill(input, name, stats, true, out, max),
                Format::Arc => arc::fill(input, name, stats, arc, out, max),
                Format::OracleGeneral => oracle::fill(input, name, stats, out, max, |b| {
                    Record::access(oracle::obj_id(b), false)
                }),
                Format::Native => native::fill(input, name, stats, native, out, max),
                Format::LibCacheSimCsv => {
                    lcs_csv::fill(input, name, stats, run, seen_content, out, max)
                }
                Format::Vscsi => vscsi::fill(input, name, stats, run, vscsi_version, out, max),
                Format::Msr => msr::fill(input, name, stats, run, seen_content, out, max),
                Format::Memsim => memsim::fill(input, name, stats, run, out, max),
                Format::Ucsd => ucsd::fill(input, name, stats, run, out, max),
                Format::I32Be => keyarray::fill(input, name, stats, out, max, keyarray::i32_be),
                Format::I64Be => keyarray::fill(input, name, stats, out, max, keyarray::i64_be),
                Format::U32Le => keyarray::fill(input, name, stats, out, max, keyarray::u32_le),
                Format::Lackey => {
                    lackey::fill(input, name, stats, run, options.instructions, out, max)
                }
                Format::Filemap => filemap::fill(input, name, stats, run, files, options, out, max),
                Format::Csv => {
                    // from_reader_with refuses a csv reader without a layout.
                    let spec = options.csv.as_ref().expect("csv layout checked at open");
                    csv::fill(input, name, spec, stats, run, seen_content, out, max)
                }
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
