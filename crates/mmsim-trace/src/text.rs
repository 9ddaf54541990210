//! The `text` and `lirs` formats: one decimal key per line.
//!
//! ```text
//! # a comment (skipped, counted in skipped_comments)
//! 42
//! 7
//!                      <- blank line (skipped, counted in skipped_blank)
//! *                    <- lirs only: a marker (skipped, counted in skipped_markers)
//! 42
//! ```
//!
//! Each content line is one reference (`write: false`) to the key it holds: an unsigned
//! decimal integer below 2^64, optionally surrounded by spaces or tabs; a trailing `\r`
//! (CRLF line ends, as in the LIRS `loop` trace) is accepted. The last line need not end
//! with a newline. Anything else is an error naming the line: a sign, hex digits, a second
//! field, a number too large for u64. In the `text` format a `*` line is an error too (it
//! hints that the trace is a LIRS trace).
//!
//! The LIRS traces (Jiang & Zhang, SIGMETRICS 2002) contain a few `*` lines (`cs` has two,
//! `2_pools` has two); the reference counts published with the traces exclude them, so
//! they are skipped rather than read as references.
//!
//! Lines are parsed in place in the reader's buffer; nothing is allocated per line.

use crate::error::quote;
use crate::input::Input;
use crate::{ReadStats, Record, TraceError};

/// Parses an unsigned decimal integer made only of ASCII digits (no sign, no spaces).
/// Returns `None` for an empty slice, any other byte, or a value above `u64::MAX`.
#[inline]
pub fn parse_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    // Up to 19 digits cannot overflow.
    if digits.len() <= 19 {
        let mut v: u64 = 0;
        for &b in digits {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + u64::from(d);
        }
        return Some(v);
    }
    let mut v: u64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Number of whitespace-separated fields of a line.
pub(crate) fn field_count(line: &[u8]) -> usize {
    line.split(u8::is_ascii_whitespace)
        .filter(|f| !f.is_empty())
        .count()
}

/// What a trimmed, non-empty content line that failed to parse as a key looks like.
pub(crate) fn describe_bad_key(line: &[u8], lirs: bool) -> String {
    let fields = field_count(line);
    if fields > 1 {
        format!("{fields} fields: {}", quote(line))
    } else if line == b"*" && !lirs {
        format!(
            "{} (a LIRS marker line: read this trace as lirs)",
            quote(line)
        )
    } else if line.iter().all(u8::is_ascii_digit) {
        format!("{} (larger than 2^64 - 1)", quote(line))
    } else {
        quote(line)
    }
}

/// Appends references to `out` until it holds `max` records or the stream ends.
pub(crate) fn fill(
    input: &mut Input,
    name: &str,
    stats: &mut ReadStats,
    lirs: bool,
    out: &mut Vec<Record>,
    max: usize,
) -> Result<(), TraceError> {
    while out.len() < max {
        let line_no = stats.records + 1;
        let Some(raw) = input.next_line(line_no)? else {
            return Ok(());
        };
        stats.records += 1;
        let line = raw.trim_ascii();
        match line.first() {
            None => stats.skipped_blank += 1,
            Some(b'#') => stats.skipped_comments += 1,
            Some(b'*') if lirs && line.len() == 1 => stats.skipped_markers += 1,
            _ => match parse_u64(line) {
                Some(key) => out.push(Record::access(key, false)),
                None => {
                    return Err(TraceError::Parse {
                        file: name.to_string(),
                        line: line_no,
                        expected: if lirs {
                            "one integer key (or a `*` marker)"
                        } else {
                            "one integer key"
                        },
                        found: describe_bad_key(line, lirs),
                    })
                }
            },
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_u64_is_strict() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"42932745"), Some(42_932_745));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"0000000000000000000000042"), Some(42));
        assert_eq!(parse_u64(b"99999999999999999999"), None);
        assert_eq!(
            parse_u64(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        for bad in [
            &b""[..],
            b"-1",
            b"+1",
            b"12ab",
            b"1 2",
            b" 1",
            b"0x10",
            b"1.0",
        ] {
            assert_eq!(parse_u64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn describes_bad_lines() {
        assert_eq!(describe_bad_key(b"12ab", false), "\"12ab\"");
        assert_eq!(describe_bad_key(b"1 2", false), "2 fields: \"1 2\"");
        assert!(describe_bad_key(b"*", false).contains("LIRS marker"));
        assert!(describe_bad_key(b"99999999999999999999", false).contains("2^64"));
    }
}
