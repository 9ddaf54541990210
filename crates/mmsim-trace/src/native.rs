//! The `native` format: mmsim's own compact binary trace, the fastest to read.
//!
//! Write it with [`NativeWriter`], or copy any readable trace into it with [`convert`] /
//! [`convert_file`]; read it like any other format ([`Format::Native`]).
//! A native trace holds exactly the [`Record`] sequence it was written with: keys
//! (any `u64`) and write flags, in order.
//!
//! # Layout
//!
//! All integers are little-endian. CRC-32 is the IEEE polynomial (zlib's, as computed by
//! the `crc32fast` crate).
//!
//! **File header**, 16 bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic number `89 4d 4d 53 49 4d 0d 0a` (`\x89MMSIM\r\n`: the high byte marks it binary, the CR LF catches line-end conversion) |
//! | 8 | 2 | `version`, 1 |
//! | 10 | 2 | `flags`: bit 0 ([`FLAG_WRITE_BIT`]) = each value carries the record's write flag; bit 1 ([`FLAG_DENSE_KEYS`]) = the keys are dense ids in order of first appearance (below); the other bits must be 0 |
//! | 12 | 4 | CRC-32 of bytes 0..12 |
//!
//! Then any number of **blocks**, each a 16-byte header and a payload:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | `records` in the block, 1 ..= `raw_len` (each record takes at least one byte) |
//! | 4 | 4 | `raw_len`: decompressed payload length, 1 ..= [`MAX_BLOCK_BYTES`] (16 MiB) |
//! | 8 | 4 | `comp_len`: payload length in the file, 1 ..= [`MAX_COMPRESSED_BYTES`] |
//! | 12 | 4 | CRC-32 of header bytes 0..12 followed by the `comp_len` payload bytes |
//! | 16 | `comp_len` | payload: one zstd frame that decompresses to exactly `raw_len` bytes |
//!
//! The decompressed payload holds the block's records in **miniblocks** of
//! [`MINIBLOCK`] (64) records — the last one of a block has the remaining
//! `records mod 64` if that is not 0 — and nothing else. A miniblock is one width byte
//! `w` followed by its records' values, each `w` bytes little-endian:
//!
//! | size | field |
//! |---|---|
//! | 1 | `w`, 1 ..= 9 (1 ..= 8 without [`FLAG_WRITE_BIT`]) |
//! | `w × n` | `n` values `v`, `w` bytes each, little-endian |
//!
//! Record `i` of the block has key `k[i]`; with `k[-1] = 0` at the start of every block
//! (blocks decode independently), its value is
//!
//! ```text
//! d  = k[i] - k[i-1]                 (wrapping, as a two's-complement i64)
//! zz = (d << 1) ^ (d >> 63)          (zigzag: small |d| give small zz)
//! v  = zz << 1 | write               (with FLAG_WRITE_BIT; v = zz without it)
//! ```
//!
//! so `v` has up to 65 bits, and `w` is the fewest bytes that hold the largest `v` of the
//! miniblock (at least 1). A sequential run (`d = 1`) costs one byte per record before
//! compression. Fixed widths, rather than a varint per record, let the reader decode a
//! miniblock without a byte-by-byte dependency from one record to the next (several
//! times faster); the zero high bytes a wide outlier forces on its miniblock cost little
//! after zstd.
//!
//! **Footer**, 24 bytes, after the last block:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | 0 (where a block would have its non-zero `records`: this marks the footer) |
//! | 4 | 8 | number of blocks |
//! | 12 | 8 | total number of records |
//! | 20 | 4 | CRC-32 of footer bytes 0..20 |
//!
//! and then the end of the file. An empty trace is a header and a footer (40 bytes); a
//! 0-byte file is an empty trace too, as in every format.
//!
//! # Reading
//!
//! Everything is checked, and every failure is an error naming the file, the part
//! (header, block and its first record, record, footer) and what was expected: wrong
//! magic number, unknown version or flags, a header CRC mismatch; a block header or
//! payload cut short by the end of the file; a `raw_len` above 16 MiB or a `comp_len`
//! above [`MAX_COMPRESSED_BYTES`] ([`TraceError::TooLarge`]); a block CRC mismatch; a
//! payload that is not a zstd frame of `raw_len` bytes, a miniblock width out of range, a
//! miniblock that runs past the block, a value of 2^65 or more, bytes left after the block's last record; a missing footer (the file
//! ends after a block: truncated), a footer whose counts differ from what was read, bytes
//! after the footer. The records of the blocks before a fault are delivered first.
//!
//! Memory: the reader keeps one decompressed block (at most 16 MiB, sized only after the
//! block's CRC has been verified) and, for payloads larger than its 256 KiB input buffer,
//! a copy of the compressed payload grown as its bytes actually arrive. Decoding writes
//! records straight into the caller's batch.
//!
//! The whole file may itself be gzip/xz/zstd-compressed (detected as for every format),
//! though that gains little.
//!
//! # Speed and size
//!
//! Decoding costs a couple of ns per record; zstd's share grows with the compression
//! level. Measured on this project's 2-core machine (shared, so ±15 %), warm page cache,
//! reading libCacheSim's `cloudPhysicsIO` sample to the end; criterion medians of
//! `benches/read_speed.rs` where given, else medians of 3 runs of 300–2,000 reads:
//!
//! | trace | native level −1000 | −20 | **−5 (default)** | 3 | other formats |
//! |---|---|---|---|---|---|
//! | 113,872 keys | 396 KB, ~740 M rec/s | 282 KB, ~590 | 233 KB, **439** | 178 KB, 253 | oracleGeneral 2.7 MB, 534; its `.zst` 504 KB, 39; text 1.0 MB, 91 |
//! | 1,141,869 pages | 2.8 MB, ~650–800 | 1.2 MB, ~450 | 538 KB, **361** | 327 KB, 293 | vscsi 3.6 MB, 576; csv 3.1 MB, 204 |
//!
//! So native reads several times faster than any text format or compressed trace and is
//! 5–15 times smaller than the raw binary ones; against a raw binary trace already in the
//! page cache (where reading is a memory copy) it keeps up only at the fastest levels.
//! Once a trace has to come from disk the smaller file wins. Blocks of 4,096 records keep
//! the decoder's data in cache; the decompression context is reused across the readers of
//! a thread.
//!
//! # Writing
//!
//! [`NativeWriter`] buffers [`NativeOptions::block_records`] records (default 4,096),
//! then compresses and writes the block; [`finish`](NativeWriter::finish) writes the last
//! block and the footer. A writer dropped without `finish` leaves a file without a footer,
//! which readers reject as truncated.

use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::input::{Input, BUFFER_SIZE};
use crate::{Format, Position, ReadStats, Record, TraceError, TraceReader};

/// The magic number at the start of a native trace.
pub const MAGIC: [u8; 8] = *b"\x89MMSIM\r\n";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 1;
/// Header flag: each value carries the record's write flag in its lowest bit.
pub const FLAG_WRITE_BIT: u16 = 1;
/// Header flag: the keys are dense ids numbered in order of first appearance — each
/// record's key is at most one more than the largest key before it (the first is 0), as
/// a [`Densifier`](crate::Densifier) numbers them. Written by
/// [`NativeOptions::dense_keys`]; checked by the reader on every record (a key that
/// skips ahead is an [`Invalid`](TraceError::Invalid) record), so a replay can take the
/// keys as page ids without a key table ([`TraceReader::dense_keys`]).
pub const FLAG_DENSE_KEYS: u16 = 2;
/// Size of the file header.
pub const HEADER_SIZE: usize = 16;
/// Size of a block header.
pub const BLOCK_HEADER_SIZE: usize = 16;
/// Size of the footer.
pub const FOOTER_SIZE: usize = 24;
/// The largest decompressed block accepted (16 MiB).
pub const MAX_BLOCK_BYTES: u32 = 16 << 20;
/// The largest compressed payload accepted: 16 MiB + 128 KiB, above zstd's bound for a
/// 16 MiB input.
pub const MAX_COMPRESSED_BYTES: u32 = MAX_BLOCK_BYTES + MAX_BLOCK_BYTES / 128;
/// The most records [`NativeOptions::block_records`] allows (2^20: at most 9.2 MiB of
/// values and width bytes, below [`MAX_BLOCK_BYTES`]).
pub const MAX_BLOCK_RECORDS: u32 = 1 << 20;
/// Records per miniblock (all but the last of a block).
pub const MINIBLOCK: usize = 64;
/// Zero bytes kept after a decompressed block so that 8-byte loads never leave it.
const PADDING: usize = 16;

fn crc32(parts: &[&[u8]]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for p in parts {
        h.update(p);
    }
    h.finalize()
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[inline]
fn zigzag(d: u64) -> u64 {
    let d = d as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

#[inline]
fn unzigzag(zz: u64) -> u64 {
    (zz >> 1) ^ (zz & 1).wrapping_neg()
}

/// The fewest bytes (at least 1) that hold `v`.
#[inline]
fn width(v: u128) -> usize {
    ((128 - v.leading_zeros() as usize).div_ceil(8)).max(1)
}

/// Options of a [`NativeWriter`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NativeOptions {
    /// zstd compression level of the blocks (default −5, one of zstd's fast levels).
    /// Reading gets slower as the level rises, files smaller; see the measurements in the
    /// [module documentation](self#speed-and-size).
    pub level: i32,
    /// Records per block (default 4,096; clamped to 1 ..= [`MAX_BLOCK_RECORDS`]). Small
    /// blocks keep the reader's buffers small and cache-resident (faster to read);
    /// larger ones compress a little better.
    pub block_records: u32,
    /// Write the keys numbered by first appearance (0, 1, 2, …, a key seen before keeping
    /// its number) and set [`FLAG_DENSE_KEYS`] (default off: keys as given). The
    /// original keys are not kept; a simulation gives the same results, since a replay
    /// numbers keys by first appearance anyway.
    pub dense_keys: bool,
}

impl Default for NativeOptions {
    fn default() -> Self {
        NativeOptions {
            level: -5,
            block_records: 1 << 12,
            dense_keys: false,
        }
    }
}

/// What a [`NativeWriter`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Records written.
    pub records: u64,
    /// Of them, writes.
    pub writes: u64,
    /// Blocks written.
    pub blocks: u64,
    /// Bytes written, header and footer included.
    pub bytes: u64,
    /// Sync records ([`Record::sync`]) given and not written: the native format keeps
    /// references only.
    pub syncs_dropped: u64,
}

/// Streaming writer of a native trace (see the [module documentation](self) for the
/// layout).
///
/// ```
/// use mmsim_trace::{Format, NativeWriter, Record, SyncSpan, TraceReader};
///
/// let mut w = NativeWriter::new("mem", Vec::new())?;
/// w.write(Record { key: 7, write: false, cont: false, fault: false, sync: SyncSpan::NONE })?;
/// w.write(Record { key: 8, write: true, cont: false, fault: false, sync: SyncSpan::NONE })?;
/// let (bytes, stats) = w.finish()?;
/// assert_eq!(stats.records, 2);
/// let r = TraceReader::from_reader("mem", Box::new(std::io::Cursor::new(bytes)), Format::Native)?;
/// let keys: Vec<u64> = r.map(|x| x.map(|r| r.key)).collect::<Result<_, _>>()?;
/// assert_eq!(keys, [7, 8]);
/// # Ok::<(), mmsim_trace::TraceError>(())
/// ```
pub struct NativeWriter<W: Write> {
    name: String,
    out: W,
    cctx: zstd::bulk::Compressor<'static>,
    block_records: u32,
    raw: Vec<u8>,
    comp: Vec<u8>,
    /// Values of the current miniblock.
    mini: [u128; MINIBLOCK],
    /// Values in `mini`.
    in_mini: usize,
    /// Records in the current block.
    n: u32,
    prev: u64,
    stats: WriteStats,
    /// With [`NativeOptions::dense_keys`]: the numbering of the keys written.
    dense: Option<crate::Densifier>,
}

impl<W: Write> std::fmt::Debug for NativeWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeWriter")
            .field("name", &self.name)
            .field("block_records", &self.block_records)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<W: Write> NativeWriter<W> {
    /// A writer with the default [`NativeOptions`]; writes the file header at once. `name`
    /// names the output in errors.
    pub fn new(name: &str, out: W) -> Result<NativeWriter<W>, TraceError> {
        NativeWriter::with_options(name, out, NativeOptions::default())
    }

    /// A writer with the given options; writes the file header at once.
    pub fn with_options(
        name: &str,
        out: W,
        options: NativeOptions,
    ) -> Result<NativeWriter<W>, TraceError> {
        let io = |source| TraceError::Io {
            file: name.to_string(),
            source,
        };
        let cctx = zstd::bulk::Compressor::new(options.level).map_err(io)?;
        let mut w = NativeWriter {
            name: name.to_string(),
            out,
            cctx,
            block_records: options.block_records.clamp(1, MAX_BLOCK_RECORDS),
            raw: Vec::new(),
            comp: Vec::new(),
            mini: [0; MINIBLOCK],
            in_mini: 0,
            n: 0,
            prev: 0,
            stats: WriteStats::default(),
            dense: options
                .dense_keys
                .then(|| crate::Densifier::with_name(name, u32::MAX)),
        };
        let flags = if options.dense_keys {
            FLAG_WRITE_BIT | FLAG_DENSE_KEYS
        } else {
            FLAG_WRITE_BIT
        };
        let mut header = [0u8; HEADER_SIZE];
        header[..8].copy_from_slice(&MAGIC);
        header[8..10].copy_from_slice(&VERSION.to_le_bytes());
        header[10..12].copy_from_slice(&flags.to_le_bytes());
        let crc = crc32(&[&header[..12]]);
        header[12..].copy_from_slice(&crc.to_le_bytes());
        w.put(&header)?;
        Ok(w)
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), TraceError> {
        self.out.write_all(bytes).map_err(|source| TraceError::Io {
            file: self.name.clone(),
            source,
        })?;
        self.stats.bytes += bytes.len() as u64;
        Ok(())
    }

    /// Appends one record (with [`NativeOptions::dense_keys`], its key's number). Fails
    /// only on an output error, or with dense keys past 2^32 − 1 distinct keys.
    #[inline]
    pub fn write(&mut self, record: Record) -> Result<(), TraceError> {
        if record.sync.is_sync() {
            self.stats.syncs_dropped += 1;
            return Ok(());
        }
        let key = match &mut self.dense {
            Some(d) => u64::from(d.id(record.key)?),
            None => record.key,
        };
        let zz = zigzag(key.wrapping_sub(self.prev));
        self.mini[self.in_mini] = (u128::from(zz) << 1) | u128::from(record.write);
        self.in_mini += 1;
        self.prev = key;
        self.n += 1;
        self.stats.records += 1;
        self.stats.writes += u64::from(record.write);
        if self.in_mini == MINIBLOCK || self.n == self.block_records {
            self.flush_miniblock();
        }
        if self.n == self.block_records {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Appends the pending values to the block as one miniblock.
    fn flush_miniblock(&mut self) {
        let values = &self.mini[..self.in_mini];
        if values.is_empty() {
            return;
        }
        let w = width(values.iter().fold(0, |a, &v| a | v));
        self.raw.push(w as u8);
        for &v in values {
            self.raw.extend_from_slice(&v.to_le_bytes()[..w]);
        }
        self.in_mini = 0;
    }

    /// Appends records in order.
    pub fn write_all(&mut self, records: &[Record]) -> Result<(), TraceError> {
        records.iter().try_for_each(|&r| self.write(r))
    }

    /// What has been written so far (the current block's records included).
    pub fn stats(&self) -> &WriteStats {
        &self.stats
    }

    fn flush_block(&mut self) -> Result<(), TraceError> {
        self.flush_miniblock();
        if self.n == 0 {
            return Ok(());
        }
        self.comp.clear();
        self.comp
            .reserve(zstd::zstd_safe::compress_bound(self.raw.len()));
        self.cctx
            .compress_to_buffer(&self.raw[..], &mut self.comp)
            .map_err(|source| TraceError::Io {
                file: self.name.clone(),
                source,
            })?;
        let mut header = [0u8; BLOCK_HEADER_SIZE];
        header[0..4].copy_from_slice(&self.n.to_le_bytes());
        header[4..8].copy_from_slice(&(self.raw.len() as u32).to_le_bytes());
        header[8..12].copy_from_slice(&(self.comp.len() as u32).to_le_bytes());
        let crc = crc32(&[&header[..12], &self.comp]);
        header[12..].copy_from_slice(&crc.to_le_bytes());
        self.put(&header)?;
        let comp = std::mem::take(&mut self.comp);
        let result = self.put(&comp);
        self.comp = comp;
        result?;
        self.stats.blocks += 1;
        self.raw.clear();
        self.n = 0;
        self.prev = 0;
        Ok(())
    }

    /// Writes the last block and the footer, flushes, and returns the output and what was
    /// written.
    pub fn finish(mut self) -> Result<(W, WriteStats), TraceError> {
        self.flush_block()?;
        let mut footer = [0u8; FOOTER_SIZE];
        footer[4..12].copy_from_slice(&self.stats.blocks.to_le_bytes());
        footer[12..20].copy_from_slice(&self.stats.records.to_le_bytes());
        let crc = crc32(&[&footer[..20]]);
        footer[20..].copy_from_slice(&crc.to_le_bytes());
        self.put(&footer)?;
        self.out.flush().map_err(|source| TraceError::Io {
            file: self.name.clone(),
            source,
        })?;
        Ok((self.out, self.stats))
    }
}

/// What [`convert`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvertStats {
    /// The reader's counts (records read, references, skipped lines and why).
    pub read: ReadStats,
    /// What was written.
    pub written: WriteStats,
}

/// Copies every reference of `reader` (from where it stands to its end) into `writer`,
/// finishes it, and returns the output and the counts. The first error of either side
/// ends the conversion (the output is then incomplete: it has no footer).
pub fn convert<W: Write>(
    reader: &mut TraceReader,
    mut writer: NativeWriter<W>,
) -> Result<(W, ConvertStats), TraceError> {
    let mut batch = Vec::with_capacity(1 << 16);
    while reader.read_batch(&mut batch, 1 << 16)? > 0 {
        writer.write_all(&batch)?;
    }
    let (out, written) = writer.finish()?;
    Ok((
        out,
        ConvertStats {
            read: reader.stats().clone(),
            written,
        },
    ))
}

/// Converts the trace at `src` (in `format`, or detected from its content if `None`) into
/// a native trace at `dst` (created or truncated).
pub fn convert_file(
    src: &Path,
    format: Option<Format>,
    dst: &Path,
) -> Result<ConvertStats, TraceError> {
    let mut reader = match format {
        Some(f) => TraceReader::open(src, f)?,
        None => TraceReader::open_auto(src)?,
    };
    let name = dst.display().to_string();
    let file = File::create(dst).map_err(|source| TraceError::Io {
        file: name.clone(),
        source,
    })?;
    let writer = NativeWriter::new(&name, BufWriter::with_capacity(1 << 20, file))?;
    let (buffered, stats) = convert(&mut reader, writer)?;
    buffered.into_inner().map_err(|e| TraceError::Io {
        file: name,
        source: e.into_error(),
    })?;
    Ok(stats)
}

thread_local! {
    /// A decompression context left by a finished reader, for the next one on this thread
    /// (creating one costs as much as decoding thousands of records).
    static SPARE_DCTX: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

fn take_decompressor() -> std::io::Result<zstd::bulk::Decompressor<'static>> {
    match SPARE_DCTX.try_with(|spare| spare.borrow_mut().take()) {
        Ok(Some(d)) => Ok(d),
        _ => zstd::bulk::Decompressor::new(),
    }
}

impl Drop for State {
    fn drop(&mut self) {
        if let Some(d) = self.dctx.take() {
            // During thread teardown the slot may be gone: then the context is just freed.
            let _ = SPARE_DCTX.try_with(|spare| *spare.borrow_mut() = Some(d));
        }
    }
}

/// The reader's state.
#[derive(Default)]
pub(crate) struct State {
    started: bool,
    done: bool,
    flags: u16,
    /// Under [`FLAG_DENSE_KEYS`]: one more than the largest key read so far (the most
    /// the next key may be).
    dense_next: u64,
    dctx: Option<zstd::bulk::Decompressor<'static>>,
    /// The decompressed block, followed by [`PADDING`] zero bytes.
    raw: Vec<u8>,
    /// `raw`'s length without the padding.
    raw_len: usize,
    pos: usize,
    /// Records left in the current block.
    left: u32,
    /// Records left in the current miniblock, and their width.
    mini_left: u32,
    mini_width: usize,
    prev: u64,
    blocks: u64,
    /// Copy of a compressed payload larger than the input buffer.
    comp: Vec<u8>,
}

fn invalid(
    name: &str,
    at: Position,
    expected: impl Into<String>,
    found: impl Into<String>,
) -> TraceError {
    TraceError::Invalid {
        file: name.to_string(),
        at,
        expected: expected.into(),
        found: found.into(),
    }
}

impl State {
    fn read_header(&mut self, input: &mut Input, name: &str) -> Result<(), TraceError> {
        let at = Position::Header;
        let avail = input.fill_at_least(HEADER_SIZE)?;
        if avail == 0 {
            // A 0-byte file: an empty trace.
            self.started = true;
            self.done = true;
            return Ok(());
        }
        let h = &input.available()[..avail.min(HEADER_SIZE)];
        if !MAGIC.starts_with(&h[..h.len().min(8)]) || h.len() < 8 {
            return Err(invalid(
                name,
                at,
                format!("the native magic number {}", hex(&MAGIC)),
                if h.len() < 8 {
                    format!("{} bytes: {}", h.len(), hex(h))
                } else {
                    hex(&h[..8])
                },
            ));
        }
        if h.len() < HEADER_SIZE {
            return Err(invalid(
                name,
                at,
                format!("a {HEADER_SIZE}-byte header"),
                format!("{} bytes before the end of the file", h.len()),
            ));
        }
        let version = u16::from_le_bytes([h[8], h[9]]);
        if version != VERSION {
            return Err(invalid(
                name,
                at,
                format!("version {VERSION} (this reader's)"),
                format!("version {version}"),
            ));
        }
        let crc = crc32(&[&h[..12]]);
        let stored = u32_at(h, 12);
        if crc != stored {
            return Err(invalid(
                name,
                at,
                format!("header CRC-32 {crc:#010x}"),
                format!("{stored:#010x}"),
            ));
        }
        let flags = u16::from_le_bytes([h[10], h[11]]);
        if flags & !(FLAG_WRITE_BIT | FLAG_DENSE_KEYS) != 0 {
            return Err(invalid(
                name,
                at,
                "flags 0x0000 to 0x0003 (bit 0: write bit, bit 1: dense keys)",
                format!("{flags:#06x}"),
            ));
        }
        input.consume(HEADER_SIZE);
        self.flags = flags;
        self.started = true;
        Ok(())
    }

    fn read_footer(
        &mut self,
        input: &mut Input,
        name: &str,
        stats: &ReadStats,
    ) -> Result<(), TraceError> {
        let at = Position::Footer;
        let avail = input.fill_at_least(FOOTER_SIZE)?;
        if avail < FOOTER_SIZE {
            return Err(invalid(
                name,
                at,
                format!("a {FOOTER_SIZE}-byte footer"),
                format!("{avail} bytes before the end of the file"),
            ));
        }
        let f = &input.available()[..FOOTER_SIZE];
        let crc = crc32(&[&f[..20]]);
        let stored = u32_at(f, 20);
        if crc != stored {
            return Err(invalid(
                name,
                at,
                format!("footer CRC-32 {crc:#010x}"),
                format!("{stored:#010x}"),
            ));
        }
        let (blocks, records) = (u64_at(f, 4), u64_at(f, 12));
        if (blocks, records) != (self.blocks, stats.records) {
            return Err(invalid(
                name,
                at,
                format!(
                    "{} blocks and {} records, as read",
                    self.blocks, stats.records
                ),
                format!("{blocks} blocks and {records} records"),
            ));
        }
        input.consume(FOOTER_SIZE);
        let more = input.fill_at_least(1)?;
        if more > 0 {
            return Err(invalid(
                name,
                at,
                "the end of the file after the footer",
                format!("{more}{} more bytes", if more == 1 { "" } else { " or" }),
            ));
        }
        self.done = true;
        Ok(())
    }

    /// Reads the next block header and payload, or the footer.
    fn next_block(
        &mut self,
        input: &mut Input,
        name: &str,
        stats: &ReadStats,
    ) -> Result<(), TraceError> {
        let at = Position::Block {
            block: self.blocks + 1,
            record: stats.records + 1,
        };
        let avail = input.fill_at_least(BLOCK_HEADER_SIZE)?;
        if avail == 0 {
            return Err(invalid(
                name,
                at,
                "another block or the footer",
                "the end of the file (the trace is truncated)",
            ));
        }
        if avail >= 4 && u32_at(input.available(), 0) == 0 {
            return self.read_footer(input, name, stats);
        }
        if avail < BLOCK_HEADER_SIZE {
            return Err(invalid(
                name,
                at,
                format!("a {BLOCK_HEADER_SIZE}-byte block header"),
                format!("{avail} bytes before the end of the file"),
            ));
        }
        let mut header = [0u8; BLOCK_HEADER_SIZE];
        header.copy_from_slice(&input.available()[..BLOCK_HEADER_SIZE]);
        let (records, raw_len, comp_len, stored) = (
            u32_at(&header, 0),
            u32_at(&header, 4),
            u32_at(&header, 8),
            u32_at(&header, 12),
        );
        let too_large = |what, value: u32, limit: u32| TraceError::TooLarge {
            file: name.to_string(),
            at,
            what,
            value: u64::from(value),
            limit: u64::from(limit),
        };
        if raw_len > MAX_BLOCK_BYTES {
            return Err(too_large(
                "decompressed block length in bytes",
                raw_len,
                MAX_BLOCK_BYTES,
            ));
        }
        if comp_len > MAX_COMPRESSED_BYTES {
            return Err(too_large(
                "compressed block length in bytes",
                comp_len,
                MAX_COMPRESSED_BYTES,
            ));
        }
        if raw_len == 0 || comp_len == 0 || records > raw_len {
            return Err(invalid(
                name,
                at,
                "a block header with 1 <= records <= raw_len and comp_len >= 1",
                format!("records {records}, raw_len {raw_len}, comp_len {comp_len}"),
            ));
        }
        let comp_len = comp_len as usize;
        let truncated = |got: usize| {
            invalid(
                name,
                at,
                format!("{comp_len} bytes of compressed data"),
                format!("{got} bytes before the end of the file (the trace is truncated)"),
            )
        };
        let total = BLOCK_HEADER_SIZE + comp_len;
        let in_buffer = total <= BUFFER_SIZE;
        if in_buffer {
            let avail = input.fill_at_least(total)?;
            if avail < total {
                return Err(truncated(avail - BLOCK_HEADER_SIZE));
            }
        } else {
            input.consume(BLOCK_HEADER_SIZE);
            self.comp.clear();
            while self.comp.len() < comp_len {
                let want = comp_len - self.comp.len();
                let avail = input.fill_at_least(want.min(BUFFER_SIZE))?;
                if avail == 0 {
                    return Err(truncated(self.comp.len()));
                }
                let take = avail.min(want);
                self.comp.extend_from_slice(&input.available()[..take]);
                input.consume(take);
            }
        }
        let payload: &[u8] = if in_buffer {
            &input.available()[BLOCK_HEADER_SIZE..total]
        } else {
            &self.comp
        };
        let crc = crc32(&[&header[..12], payload]);
        if crc != stored {
            return Err(invalid(
                name,
                at,
                format!("block CRC-32 {crc:#010x}"),
                format!("{stored:#010x}"),
            ));
        }
        let dctx = match &mut self.dctx {
            Some(d) => d,
            None => self
                .dctx
                .insert(take_decompressor().map_err(|source| TraceError::Io {
                    file: name.to_string(),
                    source,
                })?),
        };
        self.raw.clear();
        self.raw.reserve(raw_len as usize + PADDING);
        let result = dctx.decompress_to_buffer(payload, &mut self.raw);
        if in_buffer {
            input.consume(total);
        }
        match result {
            Ok(n) if n == raw_len as usize => {}
            Ok(n) => {
                return Err(invalid(
                    name,
                    at,
                    format!("{raw_len} decompressed bytes"),
                    format!("{n} bytes"),
                ))
            }
            Err(e) => {
                return Err(invalid(
                    name,
                    at,
                    format!("a zstd frame of {raw_len} bytes"),
                    format!("zstd error: {e}"),
                ))
            }
        }
        self.raw_len = self.raw.len();
        self.raw.resize(self.raw_len + PADDING, 0);
        self.blocks += 1;
        self.left = records;
        self.mini_left = 0;
        self.pos = 0;
        self.prev = 0;
        Ok(())
    }

    /// Decodes up to `n` records of the current block into `out`.
    #[inline]
    fn decode(
        &mut self,
        name: &str,
        stats: &mut ReadStats,
        out: &mut Vec<Record>,
        n: usize,
    ) -> Result<(), TraceError> {
        let with_write = self.flags & FLAG_WRITE_BIT != 0;
        let max_width = if with_write { 9 } else { 8 };
        let mut done = 0usize;
        out.reserve(n);
        while done < n {
            if self.mini_left == 0 {
                let at = Position::Record(stats.records + 1);
                let count = (self.left as usize).min(MINIBLOCK);
                let w = match self.raw[..self.raw_len].get(self.pos) {
                    Some(&w) => usize::from(w),
                    None => {
                        return Err(invalid(
                            name,
                            at,
                            format!("a miniblock of {count} records"),
                            "the end of the block",
                        ))
                    }
                };
                if w == 0 || w > max_width {
                    return Err(invalid(
                        name,
                        at,
                        format!("a miniblock width of 1 to {max_width} bytes"),
                        format!("width {w}"),
                    ));
                }
                if self.pos + 1 + count * w > self.raw_len {
                    return Err(invalid(
                        name,
                        at,
                        format!("{count} values of {w} bytes within the block"),
                        format!("{} bytes left", self.raw_len - self.pos - 1),
                    ));
                }
                self.pos += 1;
                self.mini_left = count as u32;
                self.mini_width = w;
            }
            let m = (self.mini_left as usize).min(n - done);
            let (w, pos) = (self.mini_width, self.pos);
            // In bounds: the miniblock was checked to lie within the block, and the block
            // is followed by PADDING bytes, enough for the 8-byte (9 for w = 9) loads.
            let src = &self.raw[pos..pos + m * w + 8];
            let ok = match w {
                1 => unpack::<1>(src, m, with_write, &mut self.prev, stats, out),
                2 => unpack::<2>(src, m, with_write, &mut self.prev, stats, out),
                3 => unpack::<3>(src, m, with_write, &mut self.prev, stats, out),
                4 => unpack::<4>(src, m, with_write, &mut self.prev, stats, out),
                5 => unpack::<5>(src, m, with_write, &mut self.prev, stats, out),
                6 => unpack::<6>(src, m, with_write, &mut self.prev, stats, out),
                7 => unpack::<7>(src, m, with_write, &mut self.prev, stats, out),
                8 => unpack::<8>(src, m, with_write, &mut self.prev, stats, out),
                _ => unpack9(&self.raw[pos..pos + m * 9], m, &mut self.prev, stats, out),
            };
            if !ok {
                return Err(invalid(
                    name,
                    Position::Record(stats.records + 1),
                    "a 9-byte value below 2^65",
                    "a larger one in its miniblock",
                ));
            }
            if self.flags & FLAG_DENSE_KEYS != 0 {
                self.check_dense(name, stats, out, m)?;
            }
            self.pos += m * w;
            self.mini_left -= m as u32;
            self.left -= m as u32;
            stats.records += m as u64;
            done += m;
        }
        if self.left == 0 && self.pos != self.raw_len {
            return Err(invalid(
                name,
                Position::Record(stats.records),
                "the end of the block after its last record",
                format!("{} more bytes", self.raw_len - self.pos),
            ));
        }
        Ok(())
    }
}

impl State {
    /// Under [`FLAG_DENSE_KEYS`]: checks that each of the last `m` records of `out` (just
    /// decoded, the first being record `stats.records + 1`) is at most one more than the
    /// largest key before it. On a failure, `out` keeps only the records before it.
    #[inline]
    fn check_dense(
        &mut self,
        name: &str,
        stats: &ReadStats,
        out: &mut Vec<Record>,
        m: usize,
    ) -> Result<(), TraceError> {
        let mut next = self.dense_next;
        let start = out.len() - m;
        for (i, r) in out[start..].iter().enumerate() {
            if r.key > next {
                let key = r.key;
                out.truncate(start + i);
                return Err(invalid(
                    name,
                    Position::Record(stats.records + 1 + i as u64),
                    format!("a dense key of at most {next} (the header's dense-keys flag)"),
                    format!("key {key}"),
                ));
            }
            next = next.max(r.key + 1);
        }
        self.dense_next = next;
        Ok(())
    }

    /// Whether the header (read) has [`FLAG_DENSE_KEYS`].
    pub(crate) fn dense_keys(&self) -> bool {
        self.flags & FLAG_DENSE_KEYS != 0
    }
}

/// Decodes the first `m` values of `W` (1 ..= 8) bytes in `src` into records.
#[inline]
fn unpack<const W: usize>(
    src: &[u8],
    m: usize,
    with_write: bool,
    prev: &mut u64,
    stats: &mut ReadStats,
    out: &mut Vec<Record>,
) -> bool {
    let values = src[..m * W].chunks_exact(W).map(|c| {
        let mut b = [0u8; 8];
        b[..W].copy_from_slice(c);
        u64::from_le_bytes(b)
    });
    let mut key = *prev;
    if with_write {
        let mut writes = 0u64;
        out.extend(values.map(|v| {
            key = key.wrapping_add(unzigzag(v >> 1));
            writes += v & 1;
            Record {
                key,
                write: v & 1 == 1,
                cont: false,
                fault: false,
                sync: crate::SyncSpan::NONE,
            }
        }));
        stats.writes += writes;
    } else {
        out.extend(values.map(|v| {
            key = key.wrapping_add(unzigzag(v));
            Record::access(key, false)
        }));
    }
    *prev = key;
    true
}

/// Decodes `m` values of 9 bytes (write-bit traces only); `false` if one is 2^65 or more.
fn unpack9(
    src: &[u8],
    m: usize,
    prev: &mut u64,
    stats: &mut ReadStats,
    out: &mut Vec<Record>,
) -> bool {
    if src.chunks_exact(9).any(|c| c[8] > 1) {
        return false;
    }
    let mut key = *prev;
    for c in src.chunks_exact(9).take(m) {
        let lo = u64_at(c, 0);
        let zz = (lo >> 1) | (u64::from(c[8]) << 63);
        key = key.wrapping_add(unzigzag(zz));
        stats.writes += lo & 1;
        out.push(Record {
            key,
            write: lo & 1 == 1,
            cont: false,
            fault: false,
            sync: crate::SyncSpan::NONE,
        });
    }
    *prev = key;
    true
}

/// Appends records to `out` until it holds `max` records or the trace ends.
pub(crate) fn fill(
    input: &mut Input,
    name: &str,
    stats: &mut ReadStats,
    state: &mut State,
    out: &mut Vec<Record>,
    max: usize,
) -> Result<(), TraceError> {
    if !state.started {
        state.read_header(input, name)?;
    }
    while out.len() < max {
        if state.left > 0 {
            let n = (state.left as usize).min(max - out.len());
            state.decode(name, stats, out, n)?;
            continue;
        }
        if state.done {
            return Ok(());
        }
        state.next_block(input, name, stats)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_records_are_dropped_and_counted() {
        let rec = |key, sync| Record {
            key,
            write: false,
            cont: false,
            fault: false,
            sync,
        };
        let mut w = NativeWriter::new("t", Vec::new()).unwrap();
        w.write(rec(7, crate::SyncSpan::NONE)).unwrap();
        w.write(rec(7, crate::SyncSpan::new(4, true))).unwrap();
        let (bytes, stats) = w.finish().unwrap();
        assert_eq!((stats.records, stats.syncs_dropped), (1, 1));
        let r = crate::TraceReader::from_reader(
            "t",
            Box::new(std::io::Cursor::new(bytes)),
            crate::Format::Native,
        )
        .unwrap();
        assert_eq!(r.count(), 1);
    }

    #[test]
    fn zigzag_round_trips() {
        for d in [
            0u64,
            1,
            u64::MAX,
            2,
            u64::MAX - 1,
            1 << 63,
            (1 << 63) - 1,
            12345,
        ] {
            assert_eq!(unzigzag(zigzag(d)), d, "{d}");
        }
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(u64::MAX), 1); // -1
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn widths() {
        assert_eq!(width(0), 1);
        assert_eq!(width(255), 1);
        assert_eq!(width(256), 2);
        assert_eq!(width(u128::from(u64::MAX)), 8);
        assert_eq!(width((1 << 65) - 1), 9);
    }
}
