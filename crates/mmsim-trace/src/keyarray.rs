//! The key-array formats: a file that is nothing but fixed-width integer keys.
//!
//! | [`Format`](crate::Format) | name | element | traces |
//! |---|---|---|---|
//! | [`I32Be`](crate::Format::I32Be) | `i32-be` (`cache2k`) | big-endian 32-bit | cache2k (`orm-busy`, `orm-night`, `web07`, `web12`): Java `DataOutputStream.writeInt`, read by Caffeine's `Cache2kTraceReader` with `readInt` |
//! | [`I64Be`](crate::Format::I64Be) | `i64-be` (`corda`, `scarab`) | big-endian 64-bit | `trace_vaultservice` (R3 Corda) and `scarab-recs` (Scarab Research): read by Caffeine's `CordaTraceReader` / `ScarabTraceReader` with `readLong` |
//! | [`U32Le`](crate::Format::U32Le) | `u32-le` (`cloudphysics`, `w106`) | little-endian 32-bit | CloudPhysics `w106` as redistributed with LIRS2 / Caffeine |
//!
//! Each element is one reference (`write: false`) whose key is the element's bit pattern:
//! a 32-bit element is zero-extended (the key of the signed value −1 is `0xffff_ffff`),
//! a 64-bit one taken as is. Keys only name pages, so this choice does not change a
//! simulation — nor would the opposite byte order: swapping bytes maps distinct keys to
//! distinct keys.
//!
//! There is no header; an empty file is an empty trace. A file whose length is not a
//! multiple of the element size ends with a [`TraceError::Truncated`] naming the
//! incomplete element, after all whole ones.

use crate::input::Input;
use crate::{ReadStats, Record, TraceError};

/// Appends one record per `N`-byte element (decoded by `decode`) to `out` until it holds
/// `max` records or the stream ends.
#[inline]
pub(crate) fn fill<const N: usize>(
    input: &mut Input,
    name: &str,
    stats: &mut ReadStats,
    out: &mut Vec<Record>,
    max: usize,
    decode: impl Fn(&[u8; N]) -> u64,
) -> Result<(), TraceError> {
    while out.len() < max {
        let mut avail = input.available().len();
        if avail < N {
            avail = input.fill_at_least(N)?;
            if avail == 0 {
                return Ok(());
            }
            if avail < N {
                return Err(TraceError::Truncated {
                    file: name.to_string(),
                    record: stats.records + 1,
                    got: avail,
                    expected: N,
                });
            }
        }
        let n = (avail / N).min(max - out.len());
        let bytes = &input.available()[..n * N];
        out.extend(
            bytes.chunks_exact(N).map(|chunk| {
                Record::access(decode(chunk.try_into().expect("chunks_exact")), false)
            }),
        );
        input.consume(n * N);
        stats.records += n as u64;
    }
    Ok(())
}

/// Decodes a big-endian 32-bit element.
#[inline]
pub(crate) fn i32_be(b: &[u8; 4]) -> u64 {
    u64::from(u32::from_be_bytes(*b))
}

/// Decodes a big-endian 64-bit element.
#[inline]
pub(crate) fn i64_be(b: &[u8; 8]) -> u64 {
    u64::from_be_bytes(*b)
}

/// Decodes a little-endian 32-bit element.
#[inline]
pub(crate) fn u32_le(b: &[u8; 4]) -> u64 {
    u64::from(u32::from_le_bytes(*b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoders() {
        assert_eq!(i32_be(&[0xf0, 0, 0, 1]), 0xf000_0001);
        assert_eq!(i32_be(&[0xff; 4]), 0xffff_ffff);
        assert_eq!(u32_le(&[0xca, 0xce, 0x0d, 0]), 0x000d_ceca);
        assert_eq!(
            i64_be(&[0x39, 0x1c, 0x8e, 0xe0, 0xc5, 0x75, 0x42, 0xc7]),
            0x391c_8ee0_c575_42c7
        );
    }
}
