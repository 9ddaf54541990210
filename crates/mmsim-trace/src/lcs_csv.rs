//! The `libcachesim-csv` format: libCacheSim's block-trace csv.
//!
//! ```text
//! version,time,op,size,lbn            <- optional header
//! 1,5633898,2a,512,42932745
//! 1,5633898,2a,6656,40409911
//! 1,5633899,28,4096,31954535
//! ```
//!
//! Five comma-separated fields, as in libCacheSim's `data/cloudPhysicsIO.csv` (the same
//! requests as `cloudPhysicsIO.vscsi`, field for field): `version` (unsigned integer,
//! checked and ignored), `time` (seconds, unsigned integer, checked and ignored), `op`
//! (the SCSI command in hexadecimal, 1 to 4 digits, e.g. `2a` = WRITE(10)), `size` (bytes)
//! and `lbn` (first 512-byte sector).
//!
//! The direction comes from `op` exactly as in [`vscsi`](crate::vscsi) (`08`/`28`/`88`
//! read, `0a`/`2a`/`8a` write; any other command is skipped and counted in
//! [`ReadStats::skipped_commands`]). A request yields the 4 KiB pages of bytes
//! `lbn × 512 .. lbn × 512 + size` ([`block`](crate::block)): the second line above
//! (6,656 bytes at sector 40,409,911) yields pages 5,051,238 ..= 5,051,240. Zero-length
//! requests are skipped and counted; a size over 1 GiB is an error naming the line.
//!
//! A first content line `version,time,op,size,lbn` (any case, spaces around fields
//! allowed) is the header: skipped and counted ([`ReadStats::skipped_headers`]). Blank
//! lines and `#` comments are skipped and counted; anything else is an error naming the
//! line.

use crate::block::{request, sector_offset};
use crate::error::quote;
use crate::expand::Run;
use crate::input::Input;
use crate::lines::{fill_lines, parse_hex, split_exact};
use crate::text::parse_u64;
use crate::vscsi::direction;
use crate::{Position, ReadStats, Record, TraceError};

/// The header line's fields.
pub const HEADER: [&str; 5] = ["version", "time", "op", "size", "lbn"];

const EXPECTED: &str = "`version,time,op,size,lbn` with unsigned integers and op a \
                        hexadecimal SCSI command";

/// A parsed line.
#[derive(Debug)]
pub(crate) enum Line {
    Header,
    /// `(op, size, lbn)`.
    Request(u16, u64, u64),
}

pub(crate) fn parse_line(
    name: &str,
    line_no: u64,
    line: &[u8],
    first: bool,
) -> Result<Line, TraceError> {
    let err = |found: String| TraceError::Parse {
        file: name.to_string(),
        line: line_no,
        expected: EXPECTED,
        found,
    };
    let f = split_exact::<5>(line, b',')
        .map_err(|n| err(format!("{n} comma-separated fields: {}", quote(line))))?;
    if first
        && f.iter()
            .zip(HEADER)
            .all(|(a, b)| a.eq_ignore_ascii_case(b.as_bytes()))
    {
        return Ok(Line::Header);
    }
    let op = (f[2].len() <= 4).then(|| parse_hex(f[2])).flatten();
    match (
        parse_u64(f[0]),
        parse_u64(f[1]),
        op,
        parse_u64(f[3]),
        parse_u64(f[4]),
    ) {
        (Some(_), Some(_), Some(op), Some(size), Some(lbn)) => {
            Ok(Line::Request(op as u16, size, lbn))
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
                Line::Header => stats.skipped_headers += 1,
                Line::Request(op, size, lbn) => {
                    let at = Position::Line(line_no);
                    match direction(op) {
                        None => stats.skipped_commands += 1,
                        Some(write) => {
                            let offset = sector_offset(name, at, lbn)?;
                            request(name, at, offset, size, write, stats, run)?;
                        }
                    }
                }
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
        assert!(matches!(
            parse_line("c", 1, b"version,time,op,size,lbn", true).unwrap(),
            Line::Header
        ));
        // A header after the first line is a bad line.
        let want =
            "c: line 2: expected `version,time,op,size,lbn` with unsigned integers and op a \
                    hexadecimal SCSI command, found \"version,time,op,size,lbn\"";
        let e = parse_line("c", 2, b"version,time,op,size,lbn", false).unwrap_err();
        assert_eq!(e.to_string(), want);
        assert!(matches!(
            parse_line("c", 2, b"1,5633898,2a,6656,40409911", false).unwrap(),
            Line::Request(0x2a, 6656, 40_409_911)
        ));
        let e = parse_line("c.csv", 9, b"1,5633898,zz,6656,40409911", false).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("c.csv: line 9: expected `version,time,op,size,lbn`"),
            "{e}"
        );
        let found = |l: &[u8]| {
            let e = parse_line("c", 9, l, false).unwrap_err().to_string();
            e.split_once(", found ").unwrap().1.to_string()
        };
        assert_eq!(
            found(b"1,5633898,2a,6656"),
            "4 comma-separated fields: \"1,5633898,2a,6656\""
        );
        assert_eq!(
            found(b"1,5633898,12345,6656,1"),
            "\"1,5633898,12345,6656,1\""
        );
    }
}
