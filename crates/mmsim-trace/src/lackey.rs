//! The `lackey` format: what `valgrind --tool=lackey --trace-mem=yes` prints.
//!
//! ```text
//! ==21722== Lackey, an example Valgrind tool
//! ==21722== Command: ./a.out
//! I  04016cb0,3
//!  S 7ff000ae8,8
//! I  04016cb3,3
//!  L 04221e70,8
//!  M 0421f4a0,4
//! ==21722== ...
//! ```
//!
//! Lackey prints one line per access (`lackey/lk_main.c`: `"I  %08lx,%lu"`,
//! `" L %08lx,%lu"`, `" S %08lx,%lu"`, `" M %08lx,%lu"`): the kind, the address in
//! hexadecimal (at least 8 digits, no `0x`) and the size in bytes. Leading and trailing
//! spaces are ignored. An access yields one [`Record`] per 4 KiB page
//! it touches, `addr >> 12 ..= (addr + size − 1) >> 12` — an access spanning a page
//! boundary touches both pages:
//!
//! | line | references per page | write |
//! |---|---|---|
//! | `I` instruction fetch | one read, or skipped if [`ReadOptions::instructions`](crate::ReadOptions::instructions) is `false` (counted in [`ReadStats::skipped_instructions`]) | `false` |
//! | `L` load | one read | `false` |
//! | `S` store | one write | `true` |
//! | `M` modify (load then store of the same bytes) | a read, then a write | `false`, `true` |
//!
//! Instruction fetches are included by default: they are references to (text) pages
//! like any other.
//!
//! Valgrind's own messages (`==pid== …`) and the `SB <addr>` lines of
//! `--trace-superblocks=yes` are skipped and counted in [`ReadStats::skipped_messages`];
//! blank lines and `#` comments are skipped and counted. An access of 0 bytes is skipped
//! and counted ([`ReadStats::skipped_zero_length`]); a size over 1 GiB is an error. Any
//! other line is an error naming it — including the program's own output if it was not
//! sent elsewhere (run lackey with `--log-file=` to keep the trace clean).

use crate::block::MAX_REQUEST_BYTES;
use crate::error::quote;
use crate::expand::Run;
use crate::input::Input;
use crate::lines::{fill_lines, parse_hex, split_exact};
use crate::text::parse_u64;
use crate::{block, Position, ReadStats, Record, TraceError};

const EXPECTED: &str = "a lackey line `I  addr,size`, ` L|S|M addr,size`, `SB addr` or a \
                        `==pid==` message";

/// What a line is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    Message,
    /// `(kind, addr, size)` with kind one of `I L S M`.
    Access(u8, u64, u64),
}

pub(crate) fn parse_line(name: &str, line_no: u64, line: &[u8]) -> Result<Line, TraceError> {
    let err = || TraceError::Parse {
        file: name.to_string(),
        line: line_no,
        expected: EXPECTED,
        found: quote(line),
    };
    if line.starts_with(b"==") {
        return Ok(Line::Message);
    }
    let split = line
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .ok_or_else(err)?;
    let (kind, rest) = (&line[..split], line[split..].trim_ascii());
    if kind == b"SB" {
        return parse_hex(rest).map(|_| Line::Message).ok_or_else(err);
    }
    let kind = match kind {
        [k @ (b'I' | b'L' | b'S' | b'M')] => *k,
        _ => return Err(err()),
    };
    let [addr, size] = split_exact::<2>(rest, b',').map_err(|_| err())?;
    match (parse_hex(addr), parse_u64(size)) {
        (Some(addr), Some(size)) => Ok(Line::Access(kind, addr, size)),
        _ => Err(err()),
    }
}

/// Appends references to `out` until it holds `max` records or the stream ends.
pub(crate) fn fill(
    input: &mut Input,
    name: &str,
    stats: &mut ReadStats,
    run: &mut Run,
    instructions: bool,
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
            let (kind, addr, size) = match parse_line(name, line_no, line)? {
                Line::Message => {
                    stats.skipped_messages += 1;
                    return Ok(());
                }
                Line::Access(kind, addr, size) => (kind, addr, size),
            };
            let at = Position::Line(line_no);
            if size == 0 {
                stats.skipped_zero_length += 1;
                return Ok(());
            }
            if size > MAX_REQUEST_BYTES {
                return Err(TraceError::TooLarge {
                    file: name.to_string(),
                    at,
                    what: "access size in bytes",
                    value: size,
                    limit: MAX_REQUEST_BYTES,
                });
            }
            let Some((first, count)) = block::pages(addr, size) else {
                return Err(TraceError::Invalid {
                    file: name.to_string(),
                    at,
                    expected: "an access below address 2^64".to_string(),
                    found: format!("{size} bytes at {addr:#x}"),
                });
            };
            match kind {
                b'I' if !instructions => stats.skipped_instructions += 1,
                b'I' | b'L' => run.start(first, count, false),
                b'S' => run.start(first, count, true),
                _ => run.start_modify(first, count),
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
            parse_line("l", 1, b"I  04016cb0,3").unwrap(),
            Line::Access(b'I', 0x0401_6cb0, 3)
        );
        assert_eq!(
            parse_line("l", 1, b"S 7ff000ae8,8").unwrap(),
            Line::Access(b'S', 0x7_ff00_0ae8, 8)
        );
        assert_eq!(
            parse_line("l", 1, b"==21722== Lackey, an example Valgrind tool").unwrap(),
            Line::Message
        );
        assert_eq!(parse_line("l", 1, b"SB 04016cb0").unwrap(), Line::Message);
        for bad in [
            &b"X 0400,3"[..],
            b"L 0400",
            b"L 0400,x",
            b"L ,3",
            b"hello world",
            b"L",
        ] {
            let e = parse_line("l.out", 4, bad).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("l.out: line 4: expected a lackey line"),
                "{e}"
            );
        }
    }
}
