//! The `msr` format: MSR Cambridge block I/O traces (SNIA IOTTA).
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime     <- optional header
//! 128166385295514663,hm,0,Write,9056014336,2048,2833
//! 128166385301451520,hm,0,Write,3163095040,40960,3438
//! 128166386784960460,hm,0,Read,11946549248,4096,3499
//! ```
//!
//! Seven comma-separated fields: `Timestamp` (Windows filetime, 100 ns units),
//! `Hostname`, `DiskNumber`, `Type` (`Read` or `Write`, any case), `Offset` (bytes),
//! `Size` (bytes) and `ResponseTime` (100 ns units). The numeric fields must be unsigned
//! integers and the host name non-empty; all but `Type`, `Offset` and `Size` are checked
//! and otherwise ignored (the trace of one disk is read as one address space).
//!
//! Each line is a request of `Size` bytes at byte `Offset`, split into the 4 KiB pages it
//! touches ([`block`](crate::block)): keys `Offset / 4096 ..= (Offset + Size − 1) / 4096`,
//! `write: true` for `Write`. E.g. `…,Write,3163095040,40960,…` yields the ten pages
//! 772,240 ..= 772,249. Zero-length requests are skipped and counted
//! ([`ReadStats::skipped_zero_length`]); a request over 1 GiB is an error.
//!
//! The original files have no header; a first content line whose first field is
//! `Timestamp` is taken as a header, skipped and counted
//! ([`ReadStats::skipped_headers`]). Blank lines and `#` comments are skipped and counted;
//! anything else is an error naming the line.

use crate::block::request;
use crate::error::quote;
use crate::expand::Run;
use crate::input::Input;
use crate::lines::{fill_lines, split_exact};
use crate::text::parse_u64;
use crate::{Position, ReadStats, Record, TraceError};

const EXPECTED: &str = "`Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` with \
                        Type Read or Write and unsigned integer numbers";

/// One parsed line: `(offset, size, write)`, or `None` for the header.
pub(crate) fn parse_line(
    name: &str,
    line_no: u64,
    line: &[u8],
    first: bool,
) -> Result<Option<(u64, u64, bool)>, TraceError> {
    let err = |found: String| TraceError::Parse {
        file: name.to_string(),
        line: line_no,
        expected: EXPECTED,
        found,
    };
    let f = split_exact::<7>(line, b',')
        .map_err(|n| err(format!("{n} comma-separated fields: {}", quote(line))))?;
    if first && f[0].eq_ignore_ascii_case(b"Timestamp") {
        return Ok(None);
    }
    let write = if f[3].eq_ignore_ascii_case(b"Read") {
        false
    } else if f[3].eq_ignore_ascii_case(b"Write") {
        true
    } else {
        return Err(err(quote(line)));
    };
    let num = |i: usize| parse_u64(f[i]);
    match (num(0), num(2), num(4), num(5), num(6)) {
        (Some(_), Some(_), Some(offset), Some(size), Some(_)) if !f[1].is_empty() => {
            Ok(Some((offset, size, write)))
        }
        _ => Err(err(quote(line))),
    }
}

/// Appends references to `out` until it holds `max` records or the stream ends.
/// `seen_content` is false until the first content line has been read.
pub(crate) fn fill(
    input: &mut Input,
    name: &str,
    stats: &mut ReadStats,
    run: &mut Run,
    seen_content: &mut bool,
    out: &mut Vec<Record>,
    max: usize,
) -> Result<(), TraceError> {
    fill_lines(
        input,
        stats,
        run,
        out,
        max,
        |line, line_no, stats, run, _| {
            let first = !std::mem::replace(seen_content, true);
            match parse_line(name, line_no, line, first)? {
                None => stats.skipped_headers += 1,
                Some((offset, size, write)) => request(
                    name,
                    Position::Line(line_no),
                    offset,
                    size,
                    write,
                    stats,
                    run,
                )?,
            }
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(
            parse_line(
                "m",
                1,
                b"128166385295514663,hm,0,Write,9056014336,2048,2833",
                true
            )
            .unwrap(),
            Some((9_056_014_336, 2048, true))
        );
        assert_eq!(
            parse_line("m", 1, b"1,hm,0,read,0,512,1", false).unwrap(),
            Some((0, 512, false))
        );
        assert_eq!(
            parse_line(
                "m",
                1,
                b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
                true
            )
            .unwrap(),
            None
        );
        // A header is only accepted as the first content line.
        assert!(parse_line(
            "m",
            5,
            b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
            false
        )
        .is_err());
        let e = parse_line("msr.csv", 4, b"1,hm,0,Trim,0,512,1", false).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("msr.csv: line 4: expected `Timestamp,Hostname"),
            "{e}"
        );
        let e = parse_line("msr.csv", 4, b"1,hm,0,Read,0,512", false).unwrap_err();
        assert!(
            e.to_string().contains("found 6 comma-separated fields"),
            "{e}"
        );
        let want = "m: line 1: expected `Timestamp,Hostname,DiskNumber,Type,Offset,Size,\
                    ResponseTime` with Type Read or Write and unsigned integer numbers, found ";
        for line in ["1,,0,Read,0,512,1", "1,hm,0,Read,-5,512,1"] {
            let e = parse_line("m", 1, line.as_bytes(), false).unwrap_err();
            assert_eq!(e.to_string(), format!("{want}\"{line}\""));
        }
    }
}
