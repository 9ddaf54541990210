//! The `oracle-general` format: libCacheSim's binary `oracleGeneral` traces.
//!
//! The file is a sequence of packed little-endian 24-byte records, with no header:
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | `u32` | `clock_time` (seconds) |
//! | 4 | `u64` | `obj_id` |
//! | 12 | `u32` | `obj_size` (bytes) |
//! | 16 | `i64` | `next_access_vtime`: 1-based index of the next request for the same object, −1 if none |
//!
//! As a [`Record`](crate::Record), each record is one reference with `key = obj_id` and `write: false`.
//! [`TraceReader::read_oracle_batch`](crate::TraceReader::read_oracle_batch) gives the
//! full [`OracleRecord`]s instead (e.g. to simulate a cache sized in bytes).
//!
//! The fields are not validated while reading (any value is a valid record); only
//! [`sniff_format`](crate::sniff_format) looks at them to recognise the format. A trace
//! whose length is not a multiple of 24 ends in an error naming the incomplete record,
//! after all whole records have been yielded.

use crate::input::Input;
use crate::{ReadStats, TraceError};

/// Size of one record in bytes.
pub const RECORD_SIZE: usize = 24;

/// One record of an oracleGeneral trace, all fields decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OracleRecord {
    /// Request time in seconds.
    pub clock_time: u32,
    /// Object id (the key).
    pub obj_id: u64,
    /// Object size in bytes.
    pub obj_size: u32,
    /// 1-based position of the next request for `obj_id` in the trace, or −1 if none.
    pub next_access_vtime: i64,
}

impl OracleRecord {
    /// Decodes a packed little-endian record.
    #[inline]
    pub fn from_bytes(b: &[u8; RECORD_SIZE]) -> OracleRecord {
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(w)
        };
        OracleRecord {
            clock_time: u32_at(0),
            obj_id: u64_at(4),
            obj_size: u32_at(12),
            next_access_vtime: u64_at(16) as i64,
        }
    }

    /// Encodes the record in the packed little-endian layout (e.g. to write test traces).
    pub fn to_bytes(&self) -> [u8; RECORD_SIZE] {
        let mut b = [0u8; RECORD_SIZE];
        b[0..4].copy_from_slice(&self.clock_time.to_le_bytes());
        b[4..12].copy_from_slice(&self.obj_id.to_le_bytes());
        b[12..16].copy_from_slice(&self.obj_size.to_le_bytes());
        b[16..24].copy_from_slice(&self.next_access_vtime.to_le_bytes());
        b
    }
}

/// Decodes only the key (`obj_id`) of a packed record.
#[inline]
pub(crate) fn obj_id(b: &[u8; RECORD_SIZE]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[4..12]);
    u64::from_le_bytes(w)
}

/// Appends `decode(record)` to `out` until it holds `max` items or the stream ends.
pub(crate) fn fill<T>(
    input: &mut Input,
    name: &str,
    stats: &mut ReadStats,
    out: &mut Vec<T>,
    max: usize,
    decode: impl Fn(&[u8; RECORD_SIZE]) -> T,
) -> Result<(), TraceError> {
    while out.len() < max {
        let mut avail = input.available().len();
        if avail < RECORD_SIZE {
            avail = input.fill_at_least(RECORD_SIZE)?;
            if avail == 0 {
                return Ok(());
            }
            if avail < RECORD_SIZE {
                return Err(TraceError::Truncated {
                    file: name.to_string(),
                    record: stats.records + 1,
                    got: avail,
                    expected: RECORD_SIZE,
                });
            }
        }
        let n = (avail / RECORD_SIZE).min(max - out.len());
        let bytes = &input.available()[..n * RECORD_SIZE];
        out.extend(bytes.chunks_exact(RECORD_SIZE).map(|chunk| {
            let rec: &[u8; RECORD_SIZE] = chunk.try_into().expect("chunks_exact");
            decode(rec)
        }));
        input.consume(n * RECORD_SIZE);
        stats.records += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let r = OracleRecord {
            clock_time: 5_633_898,
            obj_id: 42_932_745,
            obj_size: 512,
            next_access_vtime: -1,
        };
        let b = r.to_bytes();
        assert_eq!(OracleRecord::from_bytes(&b), r);
        assert_eq!(obj_id(&b), 42_932_745);
        assert_eq!(&b[16..24], &[0xff; 8]);
        assert_eq!(&b[0..4], &5_633_898u32.to_le_bytes());
    }
}
