//! The `native` format: mmsim's own compact binary trace, the fastest to read.
//!
//! Write it with [`NativeWriter`], or copy any readable trace into it with [`convert`] /
//! [`convert_file`]; read it like any other format ([`Format::Native`](crate::Format::Native)).
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
//! | 10 | 2 | `flags`: bit 0 ([`FLAG_WRITE_BIT`]) = each varint carries the record's write flag; the other bits must be 0 |
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
//! The decompressed payload is `records` LEB128 varints (7 bits per byte, least
//! significant group first, bit 7 set on all bytes but the last) and nothing else. Record
//! `i` of the block has key `k[i]`; with `k[-1] = 0` at the start of every block (blocks
//! decode independently), the varint is
//!
//! ```text
//! d  = k[i] - k[i-1]                 (wrapping, as a two's-complement i64)
//! zz = (d << 1) ^ (d >> 63)          (zigzag: small |d| give small zz)
//! v  = zz << 1 | write               (with FLAG_WRITE_BIT; v = zz without it)
//! ```
//!
//! so `v` has up to 65 bits and a varint up to 10 bytes. A sequential run (`d = 1`) costs
//! one byte per record before compression.
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
//! payload that is not a zstd frame of `raw_len` bytes, a varint that runs past the block
//! or past 65 bits, bytes left after the block's last record; a missing footer (the file
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
//! # Writing
//!
//! [`NativeWriter`] buffers [`NativeOptions::block_records`] records (default 65,536),
//! then compresses and writes the block; [`finish`](NativeWriter::finish) writes the last
//! block and the footer. A writer dropped without `finish` leaves a file without a footer,
//! which readers reject as truncated.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::input::{Input, BUFFER_SIZE};
use crate::{Format, Position, ReadStats, Record, TraceError, TraceReader};

/// The magic number at the start of a native trace.
pub const MAGIC: [u8; 8] = *b"\x89MMSIM\r\n";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 1;
/// Header flag: each varint carries the record's write flag in its lowest bit.
pub const FLAG_WRITE_BIT: u16 = 1;
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
/// The most records [`NativeOptions::block_records`] allows (2^20: at most 10 MiB of
/// varints, below [`MAX_BLOCK_BYTES`]).
pub const MAX_BLOCK_RECORDS: u32 = 1 << 20;

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

/// Appends the LEB128 encoding of `v` (< 2^65) to `buf`.
#[inline]
fn put_varint(buf: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Decodes a varint of 2 to 10 bytes at `*pos`: returns `(low 64 bits, bits 64 and up)`,
/// or `None` if it runs past `buf` or has more than 10 bytes.
#[inline]
fn varint_slow(buf: &[u8], pos: &mut usize) -> Option<(u64, u64)> {
    let mut lo: u64 = 0;
    for i in 0..10 {
        let b = *buf.get(*pos + i)?;
        if i == 9 {
            if b >= 0x80 {
                return None;
            }
            *pos += 10;
            return Some((lo | (u64::from(b) << 63), u64::from(b) >> 1));
        }
        lo |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            *pos += i + 1;
            return Some((lo, 0));
        }
    }
    unreachable!("the loop returns by its 10th byte")
}

/// Options of a [`NativeWriter`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NativeOptions {
    /// zstd compression level of the blocks (default 3). Reading speed hardly depends on
    /// it; higher levels make smaller files and slower conversions.
    pub level: i32,
    /// Records per block (default 65,536; clamped to 1 ..= [`MAX_BLOCK_RECORDS`]).
    pub block_records: u32,
}

impl Default for NativeOptions {
    fn default() -> Self {
        NativeOptions {
            level: 3,
            block_records: 1 << 16,
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
}

/// Streaming writer of a native trace (see the [module documentation](self) for the
/// layout).
///
/// ```
/// use mmsim_trace::{Format, NativeWriter, Record, TraceReader};
///
/// let mut w = NativeWriter::new("mem", Vec::new())?;
/// w.write(Record { key: 7, write: false })?;
/// w.write(Record { key: 8, write: true })?;
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
    /// Records in the current block.
    n: u32,
    prev: u64,
    stats: WriteStats,
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
            n: 0,
            prev: 0,
            stats: WriteStats::default(),
        };
        let mut header = [0u8; HEADER_SIZE];
        header[..8].copy_from_slice(&MAGIC);
        header[8..10].copy_from_slice(&VERSION.to_le_bytes());
        header[10..12].copy_from_slice(&FLAG_WRITE_BIT.to_le_bytes());
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

    /// Appends one record.
    #[inline]
    pub fn write(&mut self, record: Record) -> Result<(), TraceError> {
        let zz = zigzag(record.key.wrapping_sub(self.prev));
        put_varint(
            &mut self.raw,
            (u128::from(zz) << 1) | u128::from(record.write),
        );
        self.prev = record.key;
        self.n += 1;
        self.stats.records += 1;
        self.stats.writes += u64::from(record.write);
        if self.n == self.block_records {
            self.flush_block()?;
        }
        Ok(())
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

/// The reader's state.
#[derive(Default)]
pub(crate) struct State {
    started: bool,
    done: bool,
    flags: u16,
    dctx: Option<zstd::bulk::Decompressor<'static>>,
    raw: Vec<u8>,
    pos: usize,
    /// Records left in the current block.
    left: u32,
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
        if flags & !FLAG_WRITE_BIT != 0 {
            return Err(invalid(
                name,
                at,
                "flags 0x0000 or 0x0001 (bit 0: write bit)",
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
                .insert(
                    zstd::bulk::Decompressor::new().map_err(|source| TraceError::Io {
                        file: name.to_string(),
                        source,
                    })?,
                ),
        };
        self.raw.clear();
        self.raw.reserve(raw_len as usize);
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
        self.blocks += 1;
        self.left = records;
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
        let raw = &self.raw[..];
        let mut pos = self.pos;
        let mut prev = self.prev;
        let mut writes = 0u64;
        let with_write = self.flags & FLAG_WRITE_BIT != 0;
        let mut done = 0usize;
        let mut bad = false;
        out.reserve(n);
        while done < n {
            let (lo, hi) = match raw.get(pos) {
                Some(&b) if b < 0x80 => {
                    pos += 1;
                    (u64::from(b), 0)
                }
                _ => match varint_slow(raw, &mut pos) {
                    Some(v) => v,
                    None => {
                        bad = true;
                        break;
                    }
                },
            };
            let (zz, write) = if with_write {
                if hi > 1 {
                    bad = true;
                    break;
                }
                ((lo >> 1) | (hi << 63), lo & 1 == 1)
            } else {
                if hi > 0 {
                    bad = true;
                    break;
                }
                (lo, false)
            };
            prev = prev.wrapping_add(unzigzag(zz));
            writes += u64::from(write);
            out.push(Record { key: prev, write });
            done += 1;
        }
        self.pos = pos;
        self.prev = prev;
        self.left -= done as u32;
        stats.records += done as u64;
        stats.writes += writes;
        if bad {
            return Err(invalid(
                name,
                Position::Record(stats.records + 1),
                format!(
                    "a varint of at most 10 bytes and {} bits within its block",
                    if with_write { 65 } else { 64 }
                ),
                format!(
                    "bytes {}",
                    hex(&raw[pos.min(raw.len())..(pos + 10).min(raw.len())])
                ),
            ));
        }
        if self.left == 0 && self.pos != raw.len() {
            return Err(invalid(
                name,
                Position::Record(stats.records),
                "the end of the block after its last record",
                format!("{} more bytes", raw.len() - self.pos),
            ));
        }
        Ok(())
    }
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
    fn varints_round_trip() {
        for v in [
            0u128,
            1,
            127,
            128,
            300,
            u64::MAX as u128,
            (1u128 << 65) - 1,
            1 << 64,
        ] {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            assert!(buf.len() <= 10);
            let mut pos = 0;
            let (lo, hi) = varint_slow(&buf, &mut pos).unwrap();
            assert_eq!(pos, buf.len());
            assert_eq!(u128::from(lo) | (u128::from(hi) << 64), v, "{v}");
        }
        // Runs past the end; more than 10 bytes.
        assert!(varint_slow(&[0x80, 0x80], &mut 0).is_none());
        assert!(varint_slow(&[0xff; 11], &mut 0).is_none());
    }
}
