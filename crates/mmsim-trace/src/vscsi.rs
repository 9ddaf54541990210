//! The `vscsi` format: VMware vscsiStats binary block traces, versions 1 and 2.
//!
//! Packed little-endian records without a file header. Version 1, 32 bytes per record:
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | `u32` | `sn`: serial number |
//! | 4 | `u32` | `len`: request length in bytes |
//! | 8 | `u32` | `nSG`: number of scatter-gather elements |
//! | 12 | `u16` | `cmd`: SCSI command |
//! | 14 | `u16` | `ver`: `ver >> 8 == 1` |
//! | 16 | `u64` | `lbn`: first 512-byte sector |
//! | 24 | `u64` | `ts`: timestamp in µs |
//!
//! Version 2, 40 bytes per record: `u16 cmd; u16 ver (ver >> 8 == 2); u32 sn; u32 len;
//! u32 nSG; u64 lbn; u64 ts; u64 rt` (offsets 0, 2, 4, 8, 12, 16, 24, 32; `rt` is the
//! response time). Both layouts are those of libCacheSim's reader
//! (`libCacheSim/traceReader/customizedReader/vscsi.h`: `trace_v1_record_t`,
//! `trace_v2_record_t`, the version in the high byte of `ver`).
//!
//! The version is taken from the first record, as libCacheSim does (version 2 if the
//! byte at offset 3 is 2 and the one at offset 15 is not 1, version 1 if the reverse;
//! if both fit, the second record decides), and then every record must carry it: a record
//! with another version byte is an error naming it (a misaligned or corrupt trace).
//!
//! Units, as libCacheSim reads them (`obj_id = lbn`, `obj_size = len`): `lbn` counts
//! 512-byte sectors and `len` bytes. The sample `cloudPhysicsIO.vscsi` bears this out:
//! 29,558 of its requests start exactly at `lbn + len / 512` of the one before (only
//! 2,364 would if `lbn` counted 4 KiB blocks), every `len` is a multiple of 512, and the
//! same requests in `cloudPhysicsIO.csv` have `size = len`, `lbn = lbn`.
//!
//! The SCSI command gives the direction: READ(6) `0x08`, READ(10) `0x28` and READ(16)
//! `0x88` are reads, WRITE(6) `0x0a`, WRITE(10) `0x2a` and WRITE(16) `0x8a` writes. Any
//! other command is skipped and counted ([`ReadStats::skipped_commands`]).
//!
//! A read or write of `len` bytes at sector `lbn` yields the 4 KiB pages of bytes
//! `lbn × 512 .. lbn × 512 + len` ([`block`](crate::block)), e.g. the first record of
//! `cloudPhysicsIO.vscsi` (WRITE(10), 512 bytes at sector 42,932,745) yields page
//! 5,366,593. Zero-length requests are skipped and counted; a length over 1 GiB is an
//! error naming the record. A trace whose length is not a whole number of records ends
//! with a [`TraceError::Truncated`] after all whole records.

use crate::block::{request, sector_offset};
use crate::expand::Run;
use crate::input::Input;
use crate::{Position, ReadStats, Record, TraceError};

/// Size of a version 1 record.
pub const V1_RECORD_SIZE: usize = 32;
/// Size of a version 2 record.
pub const V2_RECORD_SIZE: usize = 40;

/// Whether SCSI command `cmd` is a read (`Some(false)`), a write (`Some(true)`) or
/// neither (`None`).
#[inline]
pub fn direction(cmd: u16) -> Option<bool> {
    match cmd {
        0x08 | 0x28 | 0x88 => Some(false),
        0x0a | 0x2a | 0x8a => Some(true),
        _ => None,
    }
}

/// The version whose version byte a record at the start of `b` carries (1, 2), if
/// exactly one fits.
fn version_of(b: &[u8]) -> Option<u8> {
    let v1 = b.len() >= V1_RECORD_SIZE && b[15] == 1;
    let v2 = b.len() >= V2_RECORD_SIZE && b[3] == 2;
    match (v1, v2) {
        (true, false) => Some(1),
        (false, true) => Some(2),
        _ => None,
    }
}

/// Detects the version from the head of a trace (at least one whole record of either
/// version), as described in the module documentation.
pub fn detect_version(head: &[u8]) -> Option<u8> {
    let v1 = head.len() >= V1_RECORD_SIZE && head[15] == 1;
    let v2 = head.len() >= V2_RECORD_SIZE && head[3] == 2;
    match (v1, v2) {
        (true, false) => Some(1),
        (false, true) => Some(2),
        (true, true) => {
            let second_v1 = head.len() >= 2 * V1_RECORD_SIZE && head[V1_RECORD_SIZE + 15] == 1;
            let second_v2 = head.len() >= 2 * V2_RECORD_SIZE && head[V2_RECORD_SIZE + 3] == 2;
            match (second_v1, second_v2) {
                (true, false) => Some(1),
                (false, true) => Some(2),
                // Both still fit: version 1, the common one.
                (true, true) => Some(1),
                (false, false) => None,
            }
        }
        (false, false) => None,
    }
}

/// A decoded request: `(cmd, len, lbn)`.
#[inline]
fn decode(version: u8, b: &[u8]) -> (u16, u32, u64) {
    let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let u64_at = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[i..i + 8]);
        u64::from_le_bytes(w)
    };
    if version == 1 {
        (u16_at(12), u32_at(4), u64_at(16))
    } else {
        (u16_at(0), u32_at(8), u64_at(16))
    }
}

/// Appends references to `out` until it holds `max` records or the stream ends.
/// `version` is 0 until detected from the first record.
pub(crate) fn fill(
    input: &mut Input,
    name: &str,
    stats: &mut ReadStats,
    run: &mut Run,
    version: &mut u8,
    out: &mut Vec<Record>,
    max: usize,
) -> Result<(), TraceError> {
    loop {
        run.drain(out, max, stats);
        if out.len() >= max {
            return Ok(());
        }
        let record_no = stats.records + 1;
        let at = Position::Record(record_no);
        if *version == 0 {
            let avail = input.fill_at_least(2 * V2_RECORD_SIZE)?;
            if avail == 0 {
                return Ok(());
            }
            if avail < V1_RECORD_SIZE {
                return Err(TraceError::Truncated {
                    file: name.to_string(),
                    record: record_no,
                    got: avail,
                    expected: V1_RECORD_SIZE,
                });
            }
            let head = input.available();
            *version = detect_version(head).ok_or_else(|| TraceError::Invalid {
                file: name.to_string(),
                at,
                expected: "a vscsi record: version byte 1 at offset 15 (v1) or 2 at offset 3 (v2)"
                    .to_string(),
                found: format!(
                    "bytes {:02x} at offset 15 and {:02x} at offset 3",
                    head[15], head[3]
                ),
            })?;
        }
        let size = if *version == 1 {
            V1_RECORD_SIZE
        } else {
            V2_RECORD_SIZE
        };
        let avail = input.fill_at_least(size)?;
        if avail == 0 {
            return Ok(());
        }
        if avail < size {
            return Err(TraceError::Truncated {
                file: name.to_string(),
                record: record_no,
                got: avail,
                expected: size,
            });
        }
        let b = &input.available()[..size];
        if version_of(b) != Some(*version) {
            let at_byte = if *version == 1 { 15 } else { 3 };
            return Err(TraceError::Invalid {
                file: name.to_string(),
                at,
                expected: format!(
                    "a vscsi v{} record (version byte {} at offset {at_byte})",
                    version, version
                ),
                found: format!("version byte {:02x}", b[at_byte]),
            });
        }
        let (cmd, len, lbn) = decode(*version, b);
        input.consume(size);
        stats.records += 1;
        let Some(write) = direction(cmd) else {
            stats.skipped_commands += 1;
            continue;
        };
        let offset = sector_offset(name, at, lbn)?;
        request(name, at, offset, u64::from(len), write, stats, run)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first record of cloudPhysicsIO.vscsi.
    const FIRST: [u8; 32] = [
        0xf4, 0x00, 0x00, 0x80, 0x00, 0x02, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x00,
        0x01, 0x09, 0x1a, 0x8f, 0x02, 0x00, 0x00, 0x00, 0x00, 0x22, 0xcf, 0x82, 0xbe, 0x1f, 0x05,
        0x00, 0x00,
    ];

    #[test]
    fn decodes_v1() {
        assert_eq!(detect_version(&FIRST), Some(1));
        assert_eq!(decode(1, &FIRST), (0x2a, 512, 42_932_745));
        assert_eq!(direction(0x2a), Some(true));
        assert_eq!(direction(0x28), Some(false));
        assert_eq!(direction(0x12), None);
    }

    #[test]
    fn detects_v2() {
        let mut r = [0u8; 40];
        r[0] = 0x28;
        r[2..4].copy_from_slice(&0x0200u16.to_le_bytes());
        r[8..12].copy_from_slice(&4096u32.to_le_bytes());
        r[16..24].copy_from_slice(&8u64.to_le_bytes());
        assert_eq!(detect_version(&r), Some(2));
        assert_eq!(decode(2, &r), (0x28, 4096, 8));
        assert_eq!(detect_version(&[0u8; 40]), None);
    }
}
