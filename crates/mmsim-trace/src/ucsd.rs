//! The `ucsd` format: the UC San Diego CSE 240A cache-simulator address traces.
//!
//! ```text
//! s 0x1fffff50 1
//! l 0x1fffff58 1
//! l 0x1fffff88 6
//! ```
//!
//! Each line is one data access: `l` (load) or `s` (store), the address as `0x` followed
//! by 1 to 16 hexadecimal digits, and the number of instructions executed since the
//! previous access (an unsigned integer, checked and otherwise ignored). The variant with
//! hit and miss penalties (`s 0x1fffff50 1 200 1200`, Caffeine's
//! `address-penalties` traces) is accepted too: two more numeric fields (digits with at
//! most one `.`), checked and ignored. Fields are separated by spaces or tabs.
//!
//! A line yields one [`Record`]: key = the 4 KiB page `addr >> 12`,
//! `write: true` for `s`. Accesses are not split at page boundaries (the traces give no
//! size). Blank lines and `#` comments are skipped and counted; anything else is an
//! error naming the line.

use crate::error::quote;
use crate::expand::Run;
use crate::input::Input;
use crate::lines::{fill_page_lines, parse_hex, split_ws};
use crate::text::parse_u64;
use crate::{ReadStats, Record, TraceError};

const EXPECTED: &str = "`l|s 0x<hex address> <instructions>` (optionally followed by \
                        `<hit penalty> <miss penalty>`)";

/// Digits with at most one `.` (a penalty).
fn is_number(f: &[u8]) -> bool {
    let dots = f.iter().filter(|&&b| b == b'.').count();
    dots <= 1
        && f.iter().any(u8::is_ascii_digit)
        && f.iter().all(|&b| b == b'.' || b.is_ascii_digit())
}

/// Parses one trimmed content line into `(page, write)`.
pub(crate) fn parse_line(name: &str, line_no: u64, line: &[u8]) -> Result<(u64, bool), TraceError> {
    let err = |found: String| TraceError::Parse {
        file: name.to_string(),
        line: line_no,
        expected: EXPECTED,
        found,
    };
    let (f, count) = split_ws::<5>(line);
    if count != 3 && count != 5 {
        return Err(err(format!("{count} fields: {}", quote(line))));
    }
    let write = match f[0] {
        b"l" | b"L" => false,
        b"s" | b"S" => true,
        _ => return Err(err(quote(line))),
    };
    let addr = f[1]
        .strip_prefix(b"0x")
        .or_else(|| f[1].strip_prefix(b"0X"))
        .and_then(parse_hex)
        .ok_or_else(|| err(quote(line)))?;
    if parse_u64(f[2]).is_none() || (count == 5 && !(is_number(f[3]) && is_number(f[4]))) {
        return Err(err(quote(line)));
    }
    Ok((addr >> 12, write))
}

/// Appends references to `out` until it holds `max` records or the stream ends.
pub(crate) fn fill(
    input: &mut Input,
    name: &str,
    stats: &mut ReadStats,
    run: &mut Run,
    out: &mut Vec<Record>,
    max: usize,
) -> Result<(), TraceError> {
    fill_page_lines(input, stats, run, out, max, |line, line_no| {
        parse_line(name, line_no, line)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(
            parse_line("u", 1, b"s 0x1fffff50 1").unwrap(),
            (0x1ffff, true)
        );
        assert_eq!(
            parse_line("u", 1, b"l 0x1fffff58 1").unwrap(),
            (0x1ffff, false)
        );
        assert_eq!(
            parse_line("u", 1, b"l 0x1fffff88 6 1 10").unwrap(),
            (0x1ffff, false)
        );
        assert_eq!(
            parse_line("u", 1, b"l 0x1000 6 1.5 10").unwrap(),
            (1, false)
        );
        for bad in [
            &b"x 0x10 1"[..],
            b"l 10 1",
            b"l 0x 1",
            b"l 0x10",
            b"l 0x10 -1",
            b"l 0x10 1 2",
            b"l 0x10 1 2 a",
            b"l 0x10 1 2 1.2.3",
        ] {
            let e = parse_line("u.trace", 3, bad).unwrap_err();
            assert_eq!(e.line(), Some(3), "{e}");
            assert!(
                e.to_string().starts_with("u.trace: line 3: expected `l|s"),
                "{e}"
            );
        }
    }
}
