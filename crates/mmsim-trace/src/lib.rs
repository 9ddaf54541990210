//! Streaming readers of page and block access traces.
//!
//! `mmsim-trace` turns a trace file into a sequence of [`Record`]s (a `u64` key — block
//! number, object id or page number — and a write flag) for the simulator and the golden
//! tests. It reads 15 formats (key lists, cache traces, block I/O traces split into 4 KiB
//! pages, memory address traces, valgrind and kernel tracepoint output, and mmsim's own
//! compact native format), streaming, decompresses transparently, detects the format from
//! content and says why, reports every problem with the file name and position, and counts
//! whatever it skips.
//!
//! # Formats
//!
//! | [`Format`] | name (aliases) | content | one record is | writes | module |
//! |---|---|---|---|---|---|
//! | [`Text`](Format::Text) | `text` | one decimal key per line | a line → one reference | no | [`text`] |
//! | [`Lirs`](Format::Lirs) | `lirs` | like `text`; a `*` line is a marker, skipped | a line → one reference | no | [`text`] |
//! | [`Arc`](Format::Arc) | `arc` | `start_block n_blocks ignored request_no` per line (ARC `.lis`) | a line → `n_blocks` references | no | [`arc`] |
//! | [`OracleGeneral`](Format::OracleGeneral) | `oracle-general` (`oraclegeneral`) | libCacheSim packed 24-byte LE records | a record → one reference (`obj_id`) | no | [`oracle`] |
//! | [`Native`](Format::Native) | `native` (`mmsim`) | mmsim's binary format: header, zstd blocks of delta-coded keys with write bits, CRC-32s, footer | a record → one reference | yes | [`native`] |
//! | [`LibCacheSimCsv`](Format::LibCacheSimCsv) | `libcachesim-csv` (`lcs-csv`) | `version,time,op,size,lbn` (libCacheSim block csv, optional header) | a read/write request → one reference per 4 KiB page | yes | [`lcs_csv`] |
//! | [`Vscsi`](Format::Vscsi) | `vscsi` | VMware vscsi v1 (32 B) / v2 (40 B) LE records | a read/write command → one reference per 4 KiB page | yes | [`vscsi`] |
//! | [`Msr`](Format::Msr) | `msr` (`msr-cambridge`) | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | a request → one reference per 4 KiB page | yes | [`msr`] |
//! | [`Memsim`](Format::Memsim) | `memsim` | `<hex vaddr> R\|W` per line | a line → its page `addr >> 12` | yes | [`memsim`] |
//! | [`Ucsd`](Format::Ucsd) | `ucsd` (`address`) | `l\|s 0x<hex addr> <n>` per line (optionally 2 penalty fields) | a line → its page `addr >> 12` | yes | [`ucsd`] |
//! | [`I32Be`](Format::I32Be) | `i32-be` (`cache2k`) | array of big-endian 32-bit keys | 4 bytes → one reference | no | [`keyarray`] |
//! | [`I64Be`](Format::I64Be) | `i64-be` (`corda`, `scarab`) | array of big-endian 64-bit keys | 8 bytes → one reference | no | [`keyarray`] |
//! | [`U32Le`](Format::U32Le) | `u32-le` (`cloudphysics`, `w106`) | array of little-endian 32-bit keys | 4 bytes → one reference | no | [`keyarray`] |
//! | [`Lackey`](Format::Lackey) | `lackey` | valgrind `--tool=lackey --trace-mem=yes` output | an access → one reference per 4 KiB page it touches (`M` = read + write; `I` optional) | yes | [`lackey`] |
//! | [`Filemap`](Format::Filemap) | `filemap` (`ftrace`, `perf-script`) | `perf script` / ftrace text of `filemap:mm_filemap_*` events | an event → one reference per file page, key = file number << 40 \| page | no | [`filemap`] |
//! | [`Csv`](Format::Csv) | `csv` (`tsv`) | any delimited text, columns named by a [`CsvSpec`] (`key=2,op=3,size=4,...`) | a line → one reference, or one per 4 KiB page with a size column | with `op=N` | [`csv`] |
//!
//! [`Format::help`] prints this list (names, aliases, one-line descriptions) for a command
//! line; names parse case-insensitively with [`str::parse`]. Where the writes column says
//! yes, [`Record::write`] is set from the access type; the other formats do not record it
//! and always yield `false`. Block requests are split into 4 KiB pages as described in
//! [`block`] (a request of more than 1 GiB is an error; zero-length requests are skipped
//! and counted). [`NativeWriter`] and [`convert`] write the native format.
//!
//! In the text formats, blank lines and lines starting with `#` are skipped, surrounding
//! spaces/tabs and a trailing `\r` are accepted, and anything else that is not the expected
//! shape is an error (no field is silently ignored; lines that a format defines as
//! skippable — csv headers, lackey messages, other trace events — are skipped and
//! counted).
//!
//! [`sniff_format`] (and [`TraceReader::open_auto`]) detect the format from the first
//! 64 KiB of decompressed content, never from the file name, and
//! [`sniff_format_explained`] / [`TraceReader::sniffed`] say which rule chose it and
//! whether the choice was ambiguous; see [`sniff`] for the rules, in order.
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
//! request of `n_blocks` blocks, a block request of many pages, a filemap range are
//! expanded lazily across batches). The longest accepted text line is 256 KiB
//! ([`TraceError::LineTooLong`] beyond). Two bounded exceptions: the native reader keeps
//! one decompressed block (at most 16 MiB, by default about 16 KiB), and the filemap reader
//! a `(dev, ino)` → file number map limited by [`ReadOptions::max_files`].
//!
//! # Errors
//!
//! Every [`TraceError`] about a trace starts with the trace name and gives the 1-based
//! line (text formats) or record (binary formats) — or, for the native format, the
//! header, block or footer ([`Position`]) — and what was expected, e.g.
//! `x.lis: line 3: expected `start_block n_blocks ignored request_no`, found 2 fields: "1 2"`,
//! `y.bin: record 4: truncated: 10 of 24 bytes`,
//! `t.vscsi: record 2: request length in bytes 4294967295 exceeds the limit of 1073741824`
//! or `t.mmsim: block 2 (from record 11): expected block CRC-32 0x5f0e2b1c, found 0x5f0e2b1d`.
//! A reader delivers every record before the fault, then the error once, then ends. An
//! empty file is a valid, empty trace in every format.
//!
//! # Counting
//!
//! [`ReadStats`] (from [`TraceReader::stats`]) counts what was read so that nothing is lost
//! silently: `records` is the number of lines (text formats, *all* lines including skipped
//! ones) or binary records read; `references` the number of [`Record`]s yielded (larger
//! than `records` where a line or record expands: ARC, block requests, lackey accesses
//! over page boundaries, filemap ranges), `writes` how many of them are writes; and one
//! `skipped_*` counter per reason a line or record yielded nothing (markers, blank lines,
//! comments, csv headers, other SCSI commands, zero-length requests, tool messages,
//! excluded instruction fetches, other trace events). Every line or record read either
//! yields references or is counted in exactly one `skipped_*` counter; for the formats
//! with one reference per line (`text`, `lirs`, `memsim`, `ucsd`),
//! `records == references + skipped_*` once the trace has been read to the end.
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
pub mod block;
pub mod compress;
pub mod csv;
pub mod densify;
pub mod error;
mod expand;
pub mod filemap;
mod input;
pub mod keyarray;
pub mod lackey;
pub mod lcs_csv;
mod lines;
pub mod memsim;
pub mod msr;
pub mod native;
pub mod oracle;
mod reader;
pub mod shards;
pub mod sniff;
pub mod stackdist;
pub mod text;
pub mod ucsd;
pub mod vscsi;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

pub use block::{MAX_REQUEST_BYTES, PAGE_SIZE};
pub use compress::Compression;
pub use csv::CsvSpec;
pub use densify::{BuildKeyHasher, Densifier, KeyHasher};
pub use error::{Position, TraceError, UnknownFormat};
pub use native::{convert, convert_file, ConvertStats, NativeOptions, NativeWriter, WriteStats};
pub use oracle::OracleRecord;
pub use reader::TraceReader;
pub use shards::{FixedSizeShards, SampledCurve, Shards};
pub use sniff::{sniff_bytes, sniff_bytes_explained, Sniffed};
pub use stackdist::StackDistance;

/// One reference of a trace: a key (block number, object id, page number) and whether it
/// writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    /// The referenced block, object or page.
    pub key: u64,
    /// Whether the reference is a write. Only the formats that record the access type set
    /// it (see the table in the [crate documentation](crate)); the others always yield
    /// `false`.
    pub write: bool,
    /// Whether this reference continues the previous record's request: the next page of
    /// one multi-page request (a filemap range event, a block request, an ARC line of
    /// many blocks), so that a replay can issue the request whole
    /// (`trace_requests = true` in a scenario). The first page of a request, and every
    /// record of a format without multi-page requests, has `false`. Not kept by the
    /// native format.
    pub cont: bool,
    /// Whether the reference is a page fault or fault-around of a file mapping: a
    /// `filemap` trace's `mm_filemap_fault` (`filemap_fault`) and `mm_filemap_map_pages`
    /// (`filemap_map_pages`) events, which a replay may issue as accesses through a
    /// mapping of the file (`trace_faults = "mapped"` in a scenario) rather than as
    /// reads. Every other record has `false`. Not kept by the native format.
    pub fault: bool,
    /// Whether the record is not a reference but a writeback the program started on
    /// the file of `key` from its page (`SyncSpan::NONE` for every reference): a
    /// `filemap` trace's `ext4_writepages` events of the traced program
    /// (`sync_file_range`, `fsync`), which a replay issues as a sync
    /// (`Event::FileSync` of mmsim-core). Not kept by the native format.
    pub sync: SyncSpan,
}

impl Record {
    /// A single-page reference to `key`: not continuing a request, not a fault, not a
    /// sync.
    #[inline]
    pub const fn access(key: u64, write: bool) -> Record {
        Record {
            key,
            write,
            cont: false,
            fault: false,
            sync: SyncSpan::NONE,
        }
    }
}

// `Record::sync` fits in the padding: a record stays 16 bytes (replays move batches
// of them).
const _: () = assert!(std::mem::size_of::<Record>() == 16);

/// A writeback a program started itself on a range of a file ([`Record::sync`]):
/// how many pages, and whether the program waited for it (`fsync`, `fdatasync`, a
/// `WB_SYNC_ALL` writeback) or not (`sync_file_range(SYNC_FILE_RANGE_WRITE)`,
/// `WB_SYNC_NONE`). Four bytes, so that a [`Record`] stays 16.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SyncSpan(u32);

impl SyncSpan {
    /// Not a sync: a reference.
    pub const NONE: SyncSpan = SyncSpan(0);
    const IS_SYNC: u32 = 1 << 31;
    const WAIT: u32 = 1 << 30;
    /// The most pages a span names; more, or 0, is "to the end of the file".
    pub const MAX_PAGES: u32 = (1 << 30) - 1;

    /// A sync of `pages` pages (0 or more than [`SyncSpan::MAX_PAGES`]: to the end of
    /// the file), waited for or not.
    pub fn new(pages: u64, wait: bool) -> SyncSpan {
        let pages = if pages > u64::from(Self::MAX_PAGES) {
            0
        } else {
            pages as u32
        };
        SyncSpan(Self::IS_SYNC | if wait { Self::WAIT } else { 0 } | pages)
    }
    /// Whether this is a sync (not [`SyncSpan::NONE`]).
    #[inline]
    pub fn is_sync(self) -> bool {
        self.0 & Self::IS_SYNC != 0
    }
    /// Whether the program waited for the writeback.
    pub fn wait(self) -> bool {
        self.0 & Self::WAIT != 0
    }
    /// Pages in the range; 0: to the end of the file.
    pub fn pages(self) -> u32 {
        self.0 & Self::MAX_PAGES
    }
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
    /// mmsim's own compact binary format ([`native`]): zstd-compressed blocks of
    /// delta-coded keys with write bits, checksummed, with a footer.
    Native,
    /// libCacheSim's block-trace csv `version,time,op,size,lbn` ([`lcs_csv`]), split into
    /// 4 KiB pages.
    LibCacheSimCsv,
    /// VMware vscsi binary block traces, version 1 or 2 ([`vscsi`]), split into 4 KiB
    /// pages.
    Vscsi,
    /// MSR Cambridge block traces (`Timestamp,Hostname,DiskNumber,Type,Offset,Size,
    /// ResponseTime`, [`msr`]), split into 4 KiB pages.
    Msr,
    /// memsim text `<hex vaddr> R|W` ([`memsim`]): 4 KiB pages.
    Memsim,
    /// UCSD address traces `l|s 0x<hex addr> <n>` ([`ucsd`]): 4 KiB pages.
    Ucsd,
    /// Array of big-endian 32-bit keys (cache2k traces, [`keyarray`]).
    I32Be,
    /// Array of big-endian 64-bit keys (corda and scarab traces, [`keyarray`]).
    I64Be,
    /// Array of little-endian 32-bit keys (CloudPhysics w106, [`keyarray`]).
    U32Le,
    /// valgrind `--tool=lackey --trace-mem=yes` output ([`lackey`]): 4 KiB pages.
    Lackey,
    /// `perf script` or ftrace text of the `filemap:mm_filemap_*` tracepoints
    /// ([`filemap`]): file pages.
    Filemap,
    /// Any csv or tsv trace, its key, operation and size columns named by a
    /// [`CsvSpec`] in [`ReadOptions::csv`] ([`csv`]); never auto-detected.
    Csv,
}

impl Format {
    /// All formats, in the order of [`NAMES`](Format::NAMES).
    pub const ALL: [Format; 16] = [
        Format::Text,
        Format::Lirs,
        Format::Arc,
        Format::OracleGeneral,
        Format::Native,
        Format::LibCacheSimCsv,
        Format::Vscsi,
        Format::Msr,
        Format::Memsim,
        Format::Ucsd,
        Format::I32Be,
        Format::I64Be,
        Format::U32Le,
        Format::Lackey,
        Format::Filemap,
        Format::Csv,
    ];

    /// The canonical names accepted by `from_str` (case is ignored; the
    /// [`aliases`](Format::aliases) are accepted too).
    pub const NAMES: [&'static str; 16] = [
        "text",
        "lirs",
        "arc",
        "oracle-general",
        "native",
        "libcachesim-csv",
        "vscsi",
        "msr",
        "memsim",
        "ucsd",
        "i32-be",
        "i64-be",
        "u32-le",
        "lackey",
        "filemap",
        "csv",
    ];

    /// The canonical name, e.g. `"oracle-general"` (one of [`NAMES`](Format::NAMES)).
    pub fn name(self) -> &'static str {
        Format::NAMES[self as usize]
    }

    /// Other names `from_str` accepts for this format (e.g. the trace collection it comes
    /// from: `cache2k` for [`I32Be`](Format::I32Be)).
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Format::OracleGeneral => &["oraclegeneral"],
            Format::Native => &["mmsim"],
            Format::LibCacheSimCsv => &["lcs-csv"],
            Format::Msr => &["msr-cambridge"],
            Format::Ucsd => &["address"],
            Format::I32Be => &["cache2k"],
            Format::I64Be => &["corda", "scarab"],
            Format::U32Le => &["cloudphysics", "w106"],
            Format::Filemap => &["ftrace", "perf-script"],
            Format::Csv => &["tsv"],
            _ => &[],
        }
    }

    /// A one-line description for a command line's list of formats: the content, and what
    /// one record becomes.
    pub fn description(self) -> &'static str {
        match self {
            Format::Text => "one decimal key per line",
            Format::Lirs => "one decimal key per line, `*` marker lines skipped (LIRS traces)",
            Format::Arc => {
                "`start_block n_blocks ignored request_no` per line, expanded to n_blocks \
                 blocks (ARC .lis traces)"
            }
            Format::OracleGeneral => "libCacheSim oracleGeneral: 24-byte LE records, key = obj_id",
            Format::Native => {
                "mmsim native: zstd blocks of delta-coded keys with write bits (fastest to read)"
            }
            Format::LibCacheSimCsv => {
                "libCacheSim block csv `version,time,op,size,lbn`, split into 4 KiB pages"
            }
            Format::Vscsi => "VMware vscsi v1/v2 binary block trace, split into 4 KiB pages",
            Format::Msr => {
                "MSR Cambridge csv `Timestamp,Hostname,DiskNumber,Type,Offset,Size,\
                 ResponseTime`, split into 4 KiB pages"
            }
            Format::Memsim => "`<hex vaddr> R|W` per line, key = 4 KiB page (memsim traces)",
            Format::Ucsd => {
                "`l|s 0x<hex addr> <n>` per line, key = 4 KiB page (UCSD address traces)"
            }
            Format::I32Be => "array of big-endian 32-bit keys (cache2k traces)",
            Format::I64Be => "array of big-endian 64-bit keys (corda, scarab traces)",
            Format::U32Le => "array of little-endian 32-bit keys (CloudPhysics w106)",
            Format::Lackey => {
                "valgrind lackey --trace-mem=yes output (I/L/S/M addr,size), 4 KiB pages"
            }
            Format::Filemap => {
                "perf script / ftrace text of filemap:mm_filemap_* events (and ext4 write_begin \
                 as writes), key = file and page"
            }
            Format::Csv => {
                "any csv/tsv, columns chosen with --csv-columns (key=N,op=N,size=N,unit=B,\
                 delimiter=D,header)"
            }
        }
    }

    /// Whether the format records the access type (so that [`Record::write`] can be
    /// `true`).
    pub fn has_writes(self) -> bool {
        matches!(
            self,
            Format::Native
                | Format::LibCacheSimCsv
                | Format::Vscsi
                | Format::Msr
                | Format::Memsim
                | Format::Ucsd
                | Format::Lackey
                | Format::Csv
        )
    }

    /// The list of formats a command line can print for `--format help`: one line per
    /// format, `name  description`, the names aligned, aliases in parentheses.
    pub fn help() -> String {
        let label = |f: Format| {
            let aliases = f.aliases();
            if aliases.is_empty() {
                f.name().to_string()
            } else {
                format!("{} ({})", f.name(), aliases.join(", "))
            }
        };
        let width = Format::ALL
            .iter()
            .map(|&f| label(f).len())
            .max()
            .unwrap_or(0);
        let mut out = String::new();
        for f in Format::ALL {
            out.push_str(&format!("{:width$}  {}\n", label(f), f.description()));
        }
        out
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = UnknownFormat;

    /// Parses a canonical name ([`Format::NAMES`]) or an alias ([`Format::aliases`]),
    /// ignoring case (so libCacheSim's spelling `oracleGeneral` works too) and accepting
    /// `_` for `-`.
    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        let lower = s.to_ascii_lowercase().replace('_', "-");
        Format::ALL
            .into_iter()
            .find(|f| f.name() == lower || f.aliases().contains(&lower.as_str()))
            .ok_or_else(|| UnknownFormat {
                given: s.to_string(),
            })
    }
}

/// Options of the readers that have any (see the fields); `ReadOptions::default()` is
/// what [`TraceReader::open`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// [`Format::Lackey`]: yield instruction fetches (`I` lines) as read references
    /// (default `true`); when `false` they are skipped and counted in
    /// [`ReadStats::skipped_instructions`].
    pub instructions: bool,
    /// [`Format::Filemap`]: the most distinct `(dev, ino)` files accepted (default [`filemap::DEFAULT_MAX_FILES`],
    /// maximum [`filemap::MAX_FILES`]; larger values act as the maximum); one more file is a
    /// [`TraceError::TooLarge`].
    pub max_files: u32,
    /// [`Format::Filemap`]: replay a buffered read once however many
    /// `filemap_get_pages` calls it made (default `false`): a `mm_filemap_get_pages`
    /// event that continues the read of the `mm_filemap_get_pages` event before it —
    /// the same file, the same last byte, a first byte after the earlier event's and
    /// not past its end — is skipped and counted in [`ReadStats::skipped_events`]. See
    /// [`filemap`]'s "Reads of several calls".
    pub read_calls: bool,
    /// [`Format::Csv`]: the column layout (required for that format: opening a csv
    /// trace without one is a [`TraceError::Invalid`]).
    pub csv: Option<CsvSpec>,
    /// [`Format::Filemap`]: yield the traced program's own writebacks
    /// (`ext4_writepages` events: `fsync`, `fdatasync`, `sync_file_range`) as
    /// [`Record::sync`] records, counted in [`ReadStats::syncs`] (default `false`:
    /// they are skipped and counted in [`ReadStats::skipped_events`], as every other
    /// event; a replay that cannot tell files apart has no use for them).
    pub syncs: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            instructions: true,
            max_files: filemap::DEFAULT_MAX_FILES,
            read_calls: false,
            csv: None,
            syncs: false,
        }
    }
}

/// Counts of what the reader did, reported to the user (never silent loss).
///
/// Every line or record read is counted in `records`; what it became is counted in
/// `references` (one or more [`Record`]s; a sync [`Record`] in `syncs` too) or in
/// exactly one of the `skipped_*` counters (the reason it yielded nothing).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReadStats {
    /// Lines (text formats, all of them, skipped ones included) or binary records read
    /// (for the native format: records decoded).
    pub records: u64,
    /// [`Record`]s yielded (an ARC line yields `n_blocks` of them, a block request one
    /// per 4 KiB page it touches).
    pub references: u64,
    /// Of the `references`, how many are writes (`Record::write`).
    pub writes: u64,
    /// LIRS `*` marker lines skipped.
    pub skipped_markers: u64,
    /// Blank (empty or whitespace-only) lines skipped.
    pub skipped_blank: u64,
    /// Lines starting with `#` skipped (text formats; ftrace's header).
    pub skipped_comments: u64,
    /// csv header lines skipped (libCacheSim csv, MSR).
    pub skipped_headers: u64,
    /// Block requests skipped because their command is neither a read nor a write (vscsi
    /// and libCacheSim csv: other SCSI commands).
    pub skipped_commands: u64,
    /// Requests or accesses of zero bytes skipped (they touch no page).
    pub skipped_zero_length: u64,
    /// Lines of tool output that are no access, skipped: lackey's `==pid==` messages and
    /// `SB` superblock lines.
    pub skipped_messages: u64,
    /// Lackey instruction fetches skipped because
    /// [`ReadOptions::instructions`] is `false`.
    pub skipped_instructions: u64,
    /// filemap: lines of other events (or other text) skipped, including
    /// `mm_filemap_delete_from_page_cache`.
    pub skipped_events: u64,
    /// Of the `references`, the sync records ([`Record::sync`]): with
    /// [`ReadOptions::syncs`], a filemap trace's `ext4_writepages` lines, one each.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub syncs: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ReadStats {
    /// The non-zero skip counters with what they count, for reports: e.g.
    /// `[("markers", 12), ("blank lines", 1)]`.
    pub fn skipped(&self) -> Vec<(&'static str, u64)> {
        [
            ("markers", self.skipped_markers),
            ("blank lines", self.skipped_blank),
            ("comments", self.skipped_comments),
            ("headers", self.skipped_headers),
            ("other commands", self.skipped_commands),
            ("zero-length requests", self.skipped_zero_length),
            ("tool messages", self.skipped_messages),
            ("instruction fetches", self.skipped_instructions),
            ("other events", self.skipped_events),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .collect()
    }
}

/// Detects the format of the trace at `path` from its first 64 KiB of (decompressed)
/// content.
///
/// The native magic number decides first; text is recognised by the shape of its lines
/// (all lines must agree on one format); binary content by fixed record layouts (vscsi
/// version bytes, oracleGeneral's plausible fields) and, last, as an array of 32- or
/// 64-bit keys. Anything else is [`TraceError::Undetected`], naming the file and why. The
/// full rules, in order, are in [`sniff`]; [`sniff_format_explained`] also says which rule
/// matched.
pub fn sniff_format(path: &Path) -> Result<Format, TraceError> {
    sniff_format_explained(path).map(|s| s.format)
}

/// Like [`sniff_format`], also saying why: which rule of [`sniff`] chose the format and
/// whether another format was plausible too ([`Sniffed::ambiguous`]).
pub fn sniff_format_explained(path: &Path) -> Result<Sniffed, TraceError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| TraceError::Io {
        file: name.clone(),
        source,
    })?;
    let mut input = input::Input::new(&name, Box::new(file))?;
    sniff::sniff_input(&name, &mut input)
}
