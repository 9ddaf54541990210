//! The `arc` format: the `.lis` traces of the ARC paper (Megiddo & Modha, FAST'03).
//!
//! ```text
//! start_block n_blocks ignored request_no
//! 36443 1 0 0
//! 1000 3 0 1          <- references 1000, 1001, 1002
//! ```
//!
//! Each line is a request for `n_blocks` consecutive 512-byte blocks starting at
//! `start_block`; it stands for `n_blocks` unit references `start_block`,
//! `start_block + 1`, …, each yielded as its own [`Record`] (`write: false`). The line is
//! one *record* in [`ReadStats::records`](crate::ReadStats::records), the blocks are
//! *references* in [`ReadStats::references`](crate::ReadStats::references). The four
//! fields are whitespace-separated unsigned decimal integers; the third is checked to be
//! an integer and otherwise ignored (the fourth, the request number, too). Blank lines and
//! lines starting with `#` are skipped and counted, as in the [`text`](crate::text) format.
//!
//! Expansion is lazy: a request longer than the batch being filled continues in the next
//! batch, so memory never depends on `n_blocks`. Still, `n_blocks` of 0 is rejected (it
//! would silently drop a request) and so is `n_blocks` above [`MAX_BLOCKS`] (2^20 blocks
//! = 512 MiB in one request: a corrupt line, not a real request; the ARC traces never
//! exceed 512).

use crate::error::quote;
use crate::input::Input;
use crate::text::{field_count, parse_u64};
use crate::{ReadStats, Record, TraceError};

/// Largest `n_blocks` accepted on one line (2^20).
pub const MAX_BLOCKS: u64 = 1 << 20;

/// The expected shape of a line, as shown in errors.
const SHAPE: &str = "`start_block n_blocks ignored request_no`";

/// What each field should be, as shown in errors.
const FIELD_EXPECTED: [&str; 4] = [
    "an unsigned integer start_block (field 1 of `start_block n_blocks ignored request_no`)",
    "an unsigned integer n_blocks (field 2 of `start_block n_blocks ignored request_no`)",
    "an unsigned integer (field 3 of `start_block n_blocks ignored request_no`)",
    "an unsigned integer request_no (field 4 of `start_block n_blocks ignored request_no`)",
];

/// The rest of a request not yet yielded.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    next: u64,
    left: u64,
}

/// Parses one trimmed, non-empty, non-comment line into `(start_block, n_blocks)`.
pub(crate) fn parse_line(name: &str, line_no: u64, line: &[u8]) -> Result<(u64, u64), TraceError> {
    let mut fields: [&[u8]; 4] = [&[]; 4];
    let mut count = 0;
    for field in line
        .split(u8::is_ascii_whitespace)
        .filter(|f| !f.is_empty())
    {
        if count == 4 {
            count = field_count(line);
            break;
        }
        fields[count] = field;
        count += 1;
    }
    if count != 4 {
        return Err(TraceError::Parse {
            file: name.to_string(),
            line: line_no,
            expected: SHAPE,
            found: format!("{count} fields: {}", quote(line)),
        });
    }
    let mut values = [0u64; 4];
    for (i, field) in fields.iter().enumerate() {
        values[i] = parse_u64(field).ok_or_else(|| TraceError::Parse {
            file: name.to_string(),
            line: line_no,
            expected: FIELD_EXPECTED[i],
            found: quote(field),
        })?;
    }
    let [start_block, n_blocks, _, _] = values;
    if n_blocks == 0 {
        return Err(TraceError::ZeroBlocks {
            file: name.to_string(),
            line: line_no,
        });
    }
    if n_blocks > MAX_BLOCKS {
        return Err(TraceError::TooManyBlocks {
            file: name.to_string(),
            line: line_no,
            n_blocks,
            limit: MAX_BLOCKS,
        });
    }
    if start_block.checked_add(n_blocks - 1).is_none() {
        return Err(TraceError::KeyOverflow {
            file: name.to_string(),
            line: line_no,
            start_block,
            n_blocks,
        });
    }
    Ok((start_block, n_blocks))
}

/// Appends references to `out` until it holds `max` records or the stream ends.
pub(crate) fn fill(
    input: &mut Input,
    name: &str,
    stats: &mut ReadStats,
    pending: &mut Pending,
    out: &mut Vec<Record>,
    max: usize,
) -> Result<(), TraceError> {
    loop {
        if pending.left > 0 {
            let room = (max - out.len()) as u64;
            let n = pending.left.min(room);
            let next = pending.next;
            out.extend((0..n).map(|i| Record {
                key: next + i,
                write: false,
                cont: false,
                fault: false,
                sync: crate::SyncSpan::NONE,
            }));
            // May wrap only when the request ends at u64::MAX, and then `left` becomes 0.
            pending.next = next.wrapping_add(n);
            pending.left -= n;
        }
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
            Some(_) => {
                let (start, n) = parse_line(name, line_no, line)?;
                pending.next = start;
                pending.left = n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines() {
        assert_eq!(parse_line("x", 1, b"36443 1 0 0").unwrap(), (36443, 1));
        assert_eq!(parse_line("x", 1, b"5\t128  7 9").unwrap(), (5, 128));
        assert_eq!(
            parse_line("x", 1, b"18446744073709551615 1 0 0").unwrap(),
            (u64::MAX, 1)
        );
        let e = parse_line("x.lis", 3, b"1 2").unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.lis: line 3: expected `start_block n_blocks ignored request_no`, found 2 fields: \"1 2\""
        );
        let e = parse_line("x.lis", 3, b"1 2 3 4 5 6").unwrap_err();
        assert!(e.to_string().contains("found 6 fields"), "{e}");
        let e = parse_line("x.lis", 9, b"1 5000000000 0 0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.lis: line 9: n_blocks 5000000000 exceeds the limit of 1048576 blocks per request"
        );
        assert!(matches!(
            parse_line("x", 2, b"1 0 0 0").unwrap_err(),
            TraceError::ZeroBlocks { line: 2, .. }
        ));
        assert!(matches!(
            parse_line("x", 2, b"18446744073709551615 2 0 0").unwrap_err(),
            TraceError::KeyOverflow { line: 2, .. }
        ));
        let e = parse_line("x", 4, b"1 two 0 0").unwrap_err();
        assert!(e.to_string().contains("n_blocks"), "{e}");
        assert!(e.to_string().contains("\"two\""), "{e}");
    }
}
