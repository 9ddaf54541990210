//! Format detection from content (`--format auto`).
//!
//! The first [`SNIFF_LEN`] (64 KiB) bytes of the decompressed stream decide; the file name
//! plays no part, and the result depends only on the content (not on how reads happen to
//! be chunked):
//!
//! 1. An empty stream is [`Format::Text`] (every format reads it as zero references).
//! 2. If every byte is printable ASCII, space, tab, `\r` or `\n`, the stream is text. Its
//!    lines (the last one dropped if the 64 KiB cut it) are examined, ignoring blank lines
//!    and `#` comments:
//!    - every line has 4 integer fields → [`Format::Arc`];
//!    - every line is one integer or `*` → [`Format::Lirs`] if a `*` was seen,
//!      otherwise [`Format::Text`];
//!    - anything else (2 or 3 fields, words, a mix of 1- and 4-field lines) → error naming
//!      the first offending line.
//! 3. Otherwise the stream is binary and must look like [`Format::OracleGeneral`]: at least
//!    one whole 24-byte record, a length that is a multiple of 24 if the whole stream fits
//!    in 64 KiB, and for every record in the head (0-based index `i`): `obj_size > 0` and
//!    `next_access_vtime` either −1 or in `i < next_access_vtime < i + 2^40` (it is the
//!    1-based position of a later request; the upper bound rejects arrays of 32-bit keys,
//!    whose pairs read as huge numbers). Else error.
//!
//! A LIRS trace whose first `*` comes after 64 KiB is detected as `text` and then fails
//! with a clear error at the `*` line (suggesting `lirs`); for the published LIRS traces
//! the two formats yield the same references where no `*` occurs.

use crate::error::quote;
use crate::input::Input;
use crate::oracle::{OracleRecord, RECORD_SIZE};
use crate::text::parse_u64;
use crate::{Format, TraceError};

/// How many bytes of the (decompressed) stream format detection looks at.
pub const SNIFF_LEN: usize = 64 * 1024;

/// Upper bound of `next_access_vtime - index` accepted when detecting oracleGeneral.
const MAX_REUSE_DISTANCE: i64 = 1 << 40;

/// Detects the format of a stream whose first bytes are `head` (at most [`SNIFF_LEN`] are
/// looked at). `complete` says that `head` is the whole stream. `name` is used in errors.
pub fn sniff_bytes(name: &str, head: &[u8], complete: bool) -> Result<Format, TraceError> {
    let (head, complete) = if head.len() > SNIFF_LEN {
        (&head[..SNIFF_LEN], false)
    } else {
        (head, complete)
    };
    let fail = |reason: String| TraceError::Undetected {
        file: name.to_string(),
        reason,
    };
    if head.is_empty() {
        return Ok(Format::Text);
    }
    let is_text = head
        .iter()
        .all(|&b| b.is_ascii_graphic() || matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
    if is_text {
        sniff_text(head, complete).map_err(fail)
    } else {
        sniff_binary(head, complete).map_err(fail)
    }
}

fn sniff_text(head: &[u8], complete: bool) -> Result<Format, String> {
    let whole = if complete {
        head
    } else {
        match head.iter().rposition(|&b| b == b'\n') {
            Some(last) => &head[..last],
            None => {
                return Err(format!(
                    "text without a line end in the first {SNIFF_LEN} bytes"
                ))
            }
        }
    };
    let (mut ones, mut fours, mut star) = (0u64, 0u64, false);
    for (i, raw) in whole.split(|&b| b == b'\n').enumerate() {
        let line = raw.trim_ascii();
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        let fields: Vec<&[u8]> = line
            .split(u8::is_ascii_whitespace)
            .filter(|f| !f.is_empty())
            .take(5)
            .collect();
        let all_ints = fields.iter().all(|f| parse_u64(f).is_some());
        match fields.len() {
            1 if line == b"*" => star = true,
            1 if all_ints => ones += 1,
            4 if all_ints => fours += 1,
            _ => {
                return Err(format!(
                    "line {} is {}, which is neither one integer key (text, lirs) nor \
                     `start_block n_blocks ignored request_no` (arc)",
                    i + 1,
                    quote(line)
                ))
            }
        }
        if fours > 0 && (ones > 0 || star) {
            return Err(format!(
                "line {} mixes one-key lines (text, lirs) with four-field lines (arc)",
                i + 1
            ));
        }
    }
    Ok(if fours > 0 {
        Format::Arc
    } else if star {
        Format::Lirs
    } else {
        Format::Text
    })
}

fn sniff_binary(head: &[u8], complete: bool) -> Result<Format, String> {
    if head.len() < RECORD_SIZE {
        return Err(format!(
            "binary data of {} bytes, shorter than one {RECORD_SIZE}-byte oracleGeneral record",
            head.len()
        ));
    }
    if complete && !head.chunks_exact(RECORD_SIZE).remainder().is_empty() {
        return Err(format!(
            "binary data of {} bytes, not a whole number of {RECORD_SIZE}-byte oracleGeneral records",
            head.len()
        ));
    }
    for (i, chunk) in head.chunks_exact(RECORD_SIZE).enumerate() {
        let rec = OracleRecord::from_bytes(chunk.try_into().expect("chunks_exact"));
        let i = i as i64;
        let vtime = rec.next_access_vtime;
        let vtime_ok = vtime == -1 || (vtime > i && vtime - i < MAX_REUSE_DISTANCE);
        if rec.obj_size == 0 || !vtime_ok {
            return Err(format!(
                "binary data, but record {} does not look like oracleGeneral \
                 (obj_size {}, next_access_vtime {}; expected obj_size > 0 and \
                 next_access_vtime -1 or a later position)",
                i + 1,
                rec.obj_size,
                vtime
            ));
        }
    }
    Ok(Format::OracleGeneral)
}

/// Reads the head of `input` (without consuming it) and detects the format.
pub(crate) fn sniff_input(name: &str, input: &mut Input) -> Result<Format, TraceError> {
    let n = input.fill_at_least(SNIFF_LEN)?;
    let head = input.available();
    // Deterministic: with fewer than SNIFF_LEN bytes the stream has ended; with SNIFF_LEN
    // or more, only the first SNIFF_LEN count and the stream is taken as longer.
    let complete = n < SNIFF_LEN;
    sniff_bytes(name, &head[..n.min(SNIFF_LEN)], complete)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniff(s: &[u8]) -> Result<Format, TraceError> {
        sniff_bytes("t", s, true)
    }

    #[test]
    fn text_formats() {
        assert_eq!(sniff(b"").unwrap(), Format::Text);
        assert_eq!(sniff(b"1\n2\n3").unwrap(), Format::Text);
        assert_eq!(sniff(b"# c\n\n1\r\n2\r\n").unwrap(), Format::Text);
        assert_eq!(sniff(b"1\n*\n2\n").unwrap(), Format::Lirs);
        assert_eq!(sniff(b"1 1 0 0\n2 8 0 1\n").unwrap(), Format::Arc);
        let e = sniff(b"1 2\n").unwrap_err().to_string();
        assert!(
            e.starts_with("t: cannot detect the trace format: line 1 is \"1 2\""),
            "{e}"
        );
        assert!(sniff(b"1\n1 1 0 0\n").is_err());
        assert!(sniff(b"version,time,op,size,lbn\n").is_err());
    }

    #[test]
    fn cut_last_line_is_ignored() {
        // Not complete: the partial last line "1 2" is not examined.
        assert_eq!(sniff_bytes("t", b"5\n6\n1 2", false).unwrap(), Format::Text);
        assert!(sniff_bytes("t", b"5\n6\n1 2", true).is_err());
        assert!(sniff_bytes("t", b"123", false).is_err());
    }

    #[test]
    fn oracle_general() {
        let recs = [
            OracleRecord {
                clock_time: 1,
                obj_id: 7,
                obj_size: 512,
                next_access_vtime: 3,
            },
            OracleRecord {
                clock_time: 1,
                obj_id: 8,
                obj_size: 512,
                next_access_vtime: -1,
            },
            OracleRecord {
                clock_time: 2,
                obj_id: 7,
                obj_size: 512,
                next_access_vtime: -1,
            },
        ];
        let bytes: Vec<u8> = recs.iter().flat_map(|r| r.to_bytes()).collect();
        assert_eq!(sniff(&bytes).unwrap(), Format::OracleGeneral);
        assert!(sniff(&bytes[..47]).is_err());
        assert_eq!(
            sniff_bytes("t", &bytes[..47], false).unwrap(),
            Format::OracleGeneral
        );
        let mut bad = bytes.clone();
        bad[12..16].copy_from_slice(&0u32.to_le_bytes());
        assert!(sniff(&bad).unwrap_err().to_string().contains("record 1"));
        // An array of u32 keys is rejected.
        let keys: Vec<u8> = (1000u32..1030).flat_map(|k| k.to_le_bytes()).collect();
        assert!(sniff(&keys).is_err());
    }
}
