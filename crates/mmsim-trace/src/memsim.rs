//! The `memsim` format: virtual-address traces of the OS-course "memsim" assignment.
//!
//! ```text
//! 0041f7a0 R
//! 13f5e2c0 R
//! 31348900 W
//! ```
//!
//! Each line is one memory access: a virtual address in hexadecimal (1 to 16 digits, no
//! `0x` prefix; the published traces have 8) and `R` (read) or `W` (write), separated by
//! spaces or tabs (either case is accepted for `R`/`W`). It yields one
//! [`Record`] whose key is the 4 KiB page, `addr >> 12`, with
//! `write: true` for `W`. An access is not split at page boundaries: the traces give no
//! size.
//!
//! Blank lines and `#` comments are skipped and counted, as in every text format; any
//! other shape is an error naming the line.

use crate::error::quote;
use crate::expand::Run;
use crate::input::Input;
use crate::lines::{fill_page_lines, parse_hex, split_ws};
use crate::{ReadStats, Record, TraceError};

const EXPECTED: &str = "`<hex address> R|W`";

/// Parses one trimmed content line into `(page, write)`.
pub(crate) fn parse_line(name: &str, line_no: u64, line: &[u8]) -> Result<(u64, bool), TraceError> {
    let err = |found: String| TraceError::Parse {
        file: name.to_string(),
        line: line_no,
        expected: EXPECTED,
        found,
    };
    let (fields, count) = split_ws::<2>(line);
    if count != 2 {
        return Err(err(format!("{count} fields: {}", quote(line))));
    }
    let addr = parse_hex(fields[0]).ok_or_else(|| err(quote(line)))?;
    let write = match fields[1] {
        b"R" | b"r" => false,
        b"W" | b"w" => true,
        _ => return Err(err(quote(line))),
    };
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
        assert_eq!(parse_line("m", 1, b"0041f7a0 R").unwrap(), (0x41f, false));
        assert_eq!(parse_line("m", 1, b"31348900\tW").unwrap(), (0x31348, true));
        assert_eq!(parse_line("m", 1, b"fff w").unwrap(), (0, true));
        let e = parse_line("m.trace", 7, b"0041f7a0 X").unwrap_err();
        assert_eq!(
            e.to_string(),
            "m.trace: line 7: expected `<hex address> R|W`, found \"0041f7a0 X\""
        );
        let found = |l: &[u8]| parse_line("m", 1, l).unwrap_err().to_string();
        let want = "m: line 1: expected `<hex address> R|W`, found ";
        assert_eq!(found(b"0041f7a0"), format!("{want}1 fields: \"0041f7a0\""));
        assert_eq!(found(b"0x41f7a0 R"), format!("{want}\"0x41f7a0 R\""));
        assert_eq!(
            found(b"0041f7a0 R 3"),
            format!("{want}3 fields: \"0041f7a0 R 3\"")
        );
    }
}
