//! The line loop shared by the line-oriented formats.

use crate::expand::Run;
use crate::input::Input;
use crate::{ReadStats, Record, TraceError};

/// Appends references to `out` until it holds `max` records or the stream ends: drains
/// `run`, reads a line, counts it, skips (and counts) blank and `#` lines, and hands every
/// other line, trimmed of surrounding spaces, tabs and a trailing `\r`, to `parse` with its
/// 1-based number. `parse` either pushes one record (there is room for one), starts
/// `run`, or counts the line as skipped.
pub(crate) fn fill_lines<F>(
    input: &mut Input,
    stats: &mut ReadStats,
    run: &mut Run,
    out: &mut Vec<Record>,
    max: usize,
    mut parse: F,
) -> Result<(), TraceError>
where
    F: FnMut(&[u8], u64, &mut ReadStats, &mut Run, &mut Vec<Record>) -> Result<(), TraceError>,
{
    loop {
        run.drain(out, max, stats);
        if out.len() >= max {
            return Ok(());
        }
        let line_no = stats.records + 1;
        let Some(raw) = input.next_line(line_no)? else {
            return Ok(());
        };
        stats.records += 1;
        let line = raw.trim_ascii();
        match line.first() {
            None => stats.skipped_blank += 1,
            Some(b'#') => stats.skipped_comments += 1,
            Some(_) => parse(line, line_no, stats, run, out)?,
        }
    }
}

/// [`fill_lines`] for the formats whose every content line is one page reference:
/// `parse` turns a line (with its 1-based number) into `(page, write)`.
pub(crate) fn fill_page_lines<F>(
    input: &mut Input,
    stats: &mut ReadStats,
    run: &mut Run,
    out: &mut Vec<Record>,
    max: usize,
    mut parse: F,
) -> Result<(), TraceError>
where
    F: FnMut(&[u8], u64) -> Result<(u64, bool), TraceError>,
{
    fill_lines(
        input,
        stats,
        run,
        out,
        max,
        |line, line_no, stats, _, out| {
            let (key, write) = parse(line, line_no)?;
            stats.writes += u64::from(write);
            out.push(Record::access(key, write));
            Ok(())
        },
    )
}

/// Parses 1 to 16 hexadecimal digits (either case, no prefix) into a u64.
#[inline]
pub(crate) fn parse_hex(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in digits {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u64::from(d);
    }
    Some(v)
}

/// Splits `line` at `sep` into exactly `N` fields (trimmed of spaces), or returns the
/// number of fields found.
#[inline]
pub(crate) fn split_exact<const N: usize>(line: &[u8], sep: u8) -> Result<[&[u8]; N], usize> {
    let mut fields: [&[u8]; N] = [&[]; N];
    let mut count = 0;
    for field in line.split(|&b| b == sep) {
        if count < N {
            fields[count] = field.trim_ascii();
        }
        count += 1;
    }
    if count == N {
        Ok(fields)
    } else {
        Err(count)
    }
}

/// Splits `line` at runs of spaces and tabs into up to `N` fields; returns the fields and
/// the total count (which may exceed `N`).
#[inline]
pub(crate) fn split_ws<const N: usize>(line: &[u8]) -> ([&[u8]; N], usize) {
    let mut fields: [&[u8]; N] = [&[]; N];
    let mut count = 0;
    for field in line
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
    {
        if count < N {
            fields[count] = field;
        }
        count += 1;
    }
    (fields, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_splits() {
        assert_eq!(parse_hex(b"0041f7a0"), Some(0x41f7a0));
        assert_eq!(parse_hex(b"FFFFFFFFFFFFFFFF"), Some(u64::MAX));
        assert_eq!(parse_hex(b"1FFFFFFFFFFFFFFFF"), None);
        assert_eq!(parse_hex(b""), None);
        assert_eq!(parse_hex(b"0x1"), None);
        assert_eq!(
            split_exact::<3>(b"a, b ,c", b','),
            Ok([&b"a"[..], b"b", b"c"])
        );
        assert_eq!(split_exact::<3>(b"a,b", b','), Err(2));
        assert_eq!(split_exact::<2>(b"a,b,c,d", b','), Err(4));
        let (f, n) = split_ws::<2>(b"l  0x10\t3");
        assert_eq!((f, n), ([&b"l"[..], b"0x10"], 3));
    }
}
