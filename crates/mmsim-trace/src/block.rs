//! Splitting block requests into 4 KiB pages.
//!
//! The block traces ([`vscsi`](crate::vscsi), [`lcs_csv`](crate::lcs_csv),
//! [`msr`](crate::msr)) record requests as a byte range (a start sector or byte offset
//! and a length in bytes). mmsim simulates 4 KiB pages, so a request at byte offset `o`
//! of `n > 0` bytes yields one [`Record`](crate::Record) per page it touches, in
//! ascending order:
//!
//! ```text
//! keys  o / 4096  ..=  (o + n - 1) / 4096        (write = the request's direction)
//! ```
//!
//! e.g. 6,656 bytes at sector 40,409,911 (byte 20,689,874,432) are the three pages
//! 5,051,238 ..= 5,051,240 (the range is not page-aligned); a 512-byte request yields one page, and several small requests to the same
//! page yield the same key several times (one reference each). The sector size is the
//! format's own: 512 bytes for vscsi and libCacheSim csv (`lbn` is a 512-byte sector
//! number), none for MSR (offsets are in bytes).
//!
//! * A request of 0 bytes touches no page: it is skipped and counted in
//!   [`ReadStats::skipped_zero_length`](crate::ReadStats::skipped_zero_length).
//! * A request longer than [`MAX_REQUEST_BYTES`] (1 GiB) is an error
//!   ([`TraceError::TooLarge`](crate::TraceError::TooLarge)) naming the record: no real
//!   request is that long, a corrupt length field is more likely, and clamping it would
//!   silently change the trace. Within the limit, expansion is lazy (a request can span
//!   several batches), so memory never depends on the length field.
//! * A byte range that passes 2^64 − 1 is an error
//!   ([`TraceError::Invalid`](crate::TraceError::Invalid)).

/// The page size the block traces are split into, in bytes.
pub const PAGE_SIZE: u64 = 4096;

/// The longest request (or access) accepted, in bytes: 1 GiB, i.e. at most 262,145 pages.
pub const MAX_REQUEST_BYTES: u64 = 1 << 30;

/// log2 of [`PAGE_SIZE`].
pub(crate) const PAGE_SHIFT: u32 = 12;

/// The pages touched by `len > 0` bytes at byte `offset`: `(first page, page count)`, or
/// `None` if the range passes 2^64 − 1.
#[inline]
pub fn pages(offset: u64, len: u64) -> Option<(u64, u64)> {
    debug_assert!(len > 0);
    let last_byte = offset.checked_add(len - 1)?;
    let first = offset >> PAGE_SHIFT;
    Some((first, (last_byte >> PAGE_SHIFT) - first + 1))
}

/// Starts the run of pages of one request of `len` bytes at byte `offset` (see the
/// module documentation): counts a zero-length request, rejects an absurd length or a
/// range past 2^64 − 1 with an error at `at`.
pub(crate) fn request(
    name: &str,
    at: crate::Position,
    offset: u64,
    len: u64,
    write: bool,
    stats: &mut crate::ReadStats,
    run: &mut crate::expand::Run,
) -> Result<(), crate::TraceError> {
    if len == 0 {
        stats.skipped_zero_length += 1;
        return Ok(());
    }
    if len > MAX_REQUEST_BYTES {
        return Err(crate::TraceError::TooLarge {
            file: name.to_string(),
            at,
            what: "request length in bytes",
            value: len,
            limit: MAX_REQUEST_BYTES,
        });
    }
    let Some((first, count)) = pages(offset, len) else {
        return Err(crate::TraceError::Invalid {
            file: name.to_string(),
            at,
            expected: "a byte range below 2^64".to_string(),
            found: format!("{len} bytes at byte offset {offset}"),
        });
    };
    run.start(first, count, write);
    Ok(())
}

/// The byte offset of 512-byte sector `lbn`, or an error at `at` if it passes 2^64 − 1.
pub(crate) fn sector_offset(
    name: &str,
    at: crate::Position,
    lbn: u64,
) -> Result<u64, crate::TraceError> {
    lbn.checked_mul(SECTOR_SIZE)
        .ok_or_else(|| crate::TraceError::Invalid {
            file: name.to_string(),
            at,
            expected: "a sector number (lbn) below 2^55, so that its byte offset fits in 64 bits"
                .to_string(),
            found: lbn.to_string(),
        })
}

/// The sector size of the formats whose `lbn` counts sectors (vscsi, libCacheSim csv).
pub const SECTOR_SIZE: u64 = 512;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_ranges() {
        assert_eq!(pages(0, 1), Some((0, 1)));
        assert_eq!(pages(0, 4096), Some((0, 1)));
        assert_eq!(pages(0, 4097), Some((0, 2)));
        assert_eq!(pages(4095, 2), Some((0, 2)));
        assert_eq!(pages(40_409_911 * 512, 6656), Some((5_051_238, 3)));
        assert_eq!(pages(u64::MAX, 1), Some((u64::MAX >> 12, 1)));
        assert_eq!(pages(u64::MAX, 2), None);
    }
}
