//! The `csv` format: any delimited text trace, its columns named by a [`CsvSpec`].
//!
//! Traces from caches, key-value stores and block devices come as csv or tsv files of
//! every shape. Like libCacheSim's csv reader (`-t "obj-id-col=2,time-col=1,..."`), this
//! reader takes the column layout from the user instead of guessing it:
//!
//! ```text
//! key=N          the column (1-based) of the key, object id or address   (required)
//! op=N           the column of the operation (read/write; default: all reads)
//! size=N         the column of the request size in bytes: each line is then a byte
//!                range, split into the 4 KiB pages it touches (see [`block`](crate::block))
//! unit=BYTES     with size: what the key column counts, in bytes (1: byte offsets, the
//!                default; 512: sectors; 4096: pages)
//! delimiter=D    comma (default), tab, semicolon, space, pipe, or one other character
//! header         the first content line is a header: skipped and counted
//! key-is-num=false
//!                the key is a string (e.g. `user:42`), hashed to a 64-bit key with
//!                FNV-1a (stable across machines and versions); the default reads
//!                unsigned decimal numbers, or hexadecimal with a `0x` prefix
//! ```
//!
//! e.g. `key=5,op=3,size=4,unit=512,header` reads libCacheSim's block csv, and
//! `key=2,op=3,delimiter=tab` a tsv of `time<TAB>key<TAB>op`.
//!
//! Fields are trimmed of spaces and of one pair of surrounding double quotes (quoted
//! fields may not contain the delimiter). Operations, in any case: `r`, `read`, `get`,
//! `gets`, `load` are reads; `w`, `write`, `set`, `put`, `update`, `store`, `add`,
//! `replace`, `append`, `prepend`, `cas` are writes; anything else is an error naming
//! the line (a `delete` is no access, and dropping it silently would change the trace).
//! A line with fewer columns than the spec names, or a key or size that does not parse,
//! is an error naming the line; blank lines and `#` comments are skipped and counted.

use std::fmt;
use std::str::FromStr;

use crate::block::request;
use crate::error::quote;
use crate::expand::Run;
use crate::input::Input;
use crate::lines::{fill_lines, parse_hex};
use crate::text::parse_u64;
use crate::{Position, ReadStats, Record, TraceError};

/// The most columns a spec may name (a bound on the per-line field scan).
pub const MAX_COLUMN: u16 = 1024;

/// The column layout of a [`Format::Csv`](crate::Format::Csv) trace (see the
/// [module documentation](self) for the syntax, e.g. `key=2,op=3,delimiter=tab`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CsvSpec {
    /// Column of the key, 1-based.
    pub key: u16,
    /// Column of the operation, 1-based (`None`: every line is a read).
    pub op: Option<u16>,
    /// Column of the request size in bytes, 1-based (`None`: one reference per line).
    pub size: Option<u16>,
    /// Bytes per unit of the key column when `size` is given.
    pub unit: u64,
    /// The field separator.
    pub delimiter: u8,
    /// The first content line is a header.
    pub header: bool,
    /// Keys are unsigned numbers (`false`: strings, hashed with FNV-1a).
    pub key_is_num: bool,
}

impl Default for CsvSpec {
    fn default() -> Self {
        CsvSpec {
            key: 1,
            op: None,
            size: None,
            unit: 1,
            delimiter: b',',
            header: false,
            key_is_num: true,
        }
    }
}

impl FromStr for CsvSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<CsvSpec, String> {
        let mut spec = CsvSpec::default();
        let mut has_key = false;
        let mut unit_given = false;
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (name, value) = item.split_once('=').unwrap_or((item, "true"));
            let name = name.trim().to_ascii_lowercase().replace('_', "-");
            let value = value.trim();
            let column = || -> Result<u16, String> {
                value
                    .parse::<u16>()
                    .ok()
                    .filter(|c| (1..=MAX_COLUMN).contains(c))
                    .ok_or_else(|| {
                        format!("{name}={value}: a column number from 1 to {MAX_COLUMN}")
                    })
            };
            let flag = || -> Result<bool, String> {
                match value.to_ascii_lowercase().as_str() {
                    "true" | "yes" | "1" => Ok(true),
                    "false" | "no" | "0" => Ok(false),
                    _ => Err(format!("{name}={value}: true or false")),
                }
            };
            match name.as_str() {
                "key" | "obj-id-col" | "key-col" => {
                    spec.key = column()?;
                    has_key = true;
                }
                "op" | "op-col" => spec.op = Some(column()?),
                "size" | "obj-size-col" | "size-col" => spec.size = Some(column()?),
                "unit" => {
                    unit_given = true;
                    spec.unit = value
                        .parse::<u64>()
                        .ok()
                        .filter(|u| (1..=1 << 20).contains(u))
                        .ok_or_else(|| format!("unit={value}: bytes per unit, 1 to 1048576"))?
                }
                "delimiter" | "delim" | "sep" => spec.delimiter = delimiter(value)?,
                "header" | "has-header" => spec.header = flag()?,
                "key-is-num" | "obj-id-is-num" => spec.key_is_num = flag()?,
                _ => {
                    return Err(format!(
                        "unknown csv column setting `{name}`; expected key=N, op=N, size=N, \
                         unit=BYTES, delimiter=comma|tab|semicolon|space|pipe|C, header, \
                         key-is-num=false"
                    ))
                }
            }
        }
        if !has_key {
            return Err("the csv columns need key=N (the key's column, 1-based)".into());
        }
        let columns = [Some(spec.key), spec.op, spec.size];
        for (i, a) in columns.iter().enumerate() {
            if a.is_some() && columns[i + 1..].contains(a) {
                return Err(format!("column {} is named twice", a.unwrap()));
            }
        }
        if spec.size.is_none() && unit_given {
            return Err("unit=B applies to a size column: give size=N too".into());
        }
        if spec.size.is_some() && !spec.key_is_num {
            return Err("size=N makes the key an address: it cannot be a string".into());
        }
        Ok(spec)
    }
}

fn delimiter(value: &str) -> Result<u8, String> {
    Ok(match value.to_ascii_lowercase().as_str() {
        "comma" => b',',
        "tab" | "\\t" => b'\t',
        "semicolon" => b';',
        "space" => b' ',
        "pipe" => b'|',
        v if v.len() == 1 && v.as_bytes()[0].is_ascii_punctuation() => v.as_bytes()[0],
        _ => {
            return Err(format!(
                "delimiter={value}: comma, tab, semicolon, space, pipe or one punctuation \
                 character"
            ))
        }
    })
}

impl fmt::Display for CsvSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "key={}", self.key)?;
        if let Some(op) = self.op {
            write!(f, ",op={op}")?;
        }
        if let Some(size) = self.size {
            write!(f, ",size={size},unit={}", self.unit)?;
        }
        let d = match self.delimiter {
            b',' => "comma".to_string(),
            b'\t' => "tab".to_string(),
            b';' => "semicolon".to_string(),
            b' ' => "space".to_string(),
            b'|' => "pipe".to_string(),
            c => (c as char).to_string(),
        };
        write!(f, ",delimiter={d}")?;
        if self.header {
            f.write_str(",header")?;
        }
        if !self.key_is_num {
            f.write_str(",key-is-num=false")?;
        }
        Ok(())
    }
}

/// FNV-1a, 64 bits: a string key's number (fixed by its definition, so the same on
/// every machine and in every version).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The first field of `rest` and what follows its delimiter (`None` after the last
/// field). With the space delimiter, any run of spaces and tabs separates fields.
fn next_field(rest: &[u8], delimiter: u8) -> Option<(&[u8], Option<&[u8]>)> {
    if delimiter == b' ' {
        let start = rest.iter().position(|b| !b.is_ascii_whitespace())?;
        let rest = &rest[start..];
        return Some(match rest.iter().position(|b| b.is_ascii_whitespace()) {
            Some(end) => (&rest[..end], Some(&rest[end + 1..])),
            None => (rest, None),
        });
    }
    Some(match rest.iter().position(|&b| b == delimiter) {
        Some(end) => (&rest[..end], Some(&rest[end + 1..])),
        None => (rest, None),
    })
}

fn unquote(field: &[u8]) -> &[u8] {
    let f = field.trim_ascii();
    match f {
        [b'"', inner @ .., b'"'] => inner,
        _ => f,
    }
}

fn number(field: &[u8]) -> Option<u64> {
    match field {
        [b'0', b'x' | b'X', hex @ ..] => parse_hex(hex),
        _ => parse_u64(field),
    }
}

const READS: [&str; 5] = ["r", "read", "get", "gets", "load"];
const WRITES: [&str; 11] = [
    "w", "write", "set", "put", "update", "store", "add", "replace", "append", "prepend", "cas",
];

fn is_write(op: &[u8]) -> Option<bool> {
    let eq = |w: &&str| op.eq_ignore_ascii_case(w.as_bytes());
    if READS.iter().any(eq) {
        Some(false)
    } else if WRITES.iter().any(eq) {
        Some(true)
    } else {
        None
    }
}

/// What one content line holds: `(key or byte offset, size in bytes if any, write)`.
fn parse_line(
    spec: &CsvSpec,
    name: &str,
    line_no: u64,
    line: &[u8],
) -> Result<(u64, Option<u64>, bool), TraceError> {
    let err = |expected: String, found: String| TraceError::Invalid {
        file: name.to_string(),
        at: Position::Line(line_no),
        expected,
        found,
    };
    let wanted = [Some(spec.key), spec.op, spec.size];
    let last = wanted.iter().flatten().copied().max().unwrap_or(1);
    let mut fields: [&[u8]; 3] = [&[]; 3];
    let mut seen = 0u16;
    let mut rest = Some(line);
    while seen < last {
        let Some((field, tail)) = rest.and_then(|r| next_field(r, spec.delimiter)) else {
            break;
        };
        rest = tail;
        seen += 1;
        for (slot, col) in fields.iter_mut().zip(wanted) {
            if col == Some(seen) {
                *slot = unquote(field);
            }
        }
    }
    if seen < last {
        return Err(err(
            format!("at least {last} columns (the spec names column {last})"),
            format!("{seen}: {}", quote(line)),
        ));
    }
    let key = if spec.key_is_num {
        number(fields[0]).ok_or_else(|| {
            err(
                format!("an unsigned key in column {}", spec.key),
                quote(fields[0]),
            )
        })?
    } else {
        fnv1a(fields[0])
    };
    let write = match spec.op {
        None => false,
        Some(col) => is_write(fields[1]).ok_or_else(|| {
            err(
                format!(
                    "an operation in column {col}: {} (reads) or {} (writes)",
                    READS.join("/"),
                    WRITES.join("/")
                ),
                quote(fields[1]),
            )
        })?,
    };
    let size = match spec.size {
        None => None,
        Some(col) => Some(
            number(fields[2])
                .ok_or_else(|| err(format!("a size in bytes in column {col}"), quote(fields[2])))?,
        ),
    };
    Ok((key, size, write))
}

/// Appends references to `out` until it holds `max` records or the stream ends.
/// `seen_content` is false until the first content line has been read.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fill(
    input: &mut Input,
    name: &str,
    spec: &CsvSpec,
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
        |line, line_no, stats, run, out| {
            let first = !std::mem::replace(seen_content, true);
            if first && spec.header {
                stats.skipped_headers += 1;
                return Ok(());
            }
            match parse_line(spec, name, line_no, line)? {
                (key, None, write) => {
                    stats.writes += u64::from(write);
                    out.push(Record::access(key, write));
                }
                (addr, Some(len), write) => {
                    let offset =
                        addr.checked_mul(spec.unit)
                            .ok_or_else(|| TraceError::Invalid {
                                file: name.to_string(),
                                at: Position::Line(line_no),
                                expected: format!(
                                    "an address below 2^64 bytes (unit {})",
                                    spec.unit
                                ),
                                found: addr.to_string(),
                            })?;
                    request(
                        name,
                        Position::Line(line_no),
                        offset,
                        len,
                        write,
                        stats,
                        run,
                    )?;
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
    fn specs_parse_print_and_refuse() {
        let s: CsvSpec = "key=5, op=3,size=4,unit=512,header".parse().unwrap();
        assert_eq!(
            s,
            CsvSpec {
                key: 5,
                op: Some(3),
                size: Some(4),
                unit: 512,
                header: true,
                ..CsvSpec::default()
            }
        );
        assert_eq!(
            s.to_string(),
            "key=5,op=3,size=4,unit=512,delimiter=comma,header"
        );
        assert_eq!(s.to_string().parse::<CsvSpec>().unwrap(), s);
        let t: CsvSpec = "obj-id-col=2,delimiter=tab,obj-id-is-num=false"
            .parse()
            .unwrap();
        assert_eq!((t.key, t.delimiter, t.key_is_num), (2, b'\t', false));
        for (bad, needle) in [
            ("op=2", "need key=N"),
            ("key=0", "from 1 to 1024"),
            ("key=2,op=2", "named twice"),
            ("key=1,colour=2", "unknown csv column setting `colour`"),
            ("key=1,delimiter=ab", "delimiter=ab"),
            ("key=1,size=2,key-is-num=false", "cannot be a string"),
            ("key=1,header=maybe", "true or false"),
            // Found by the fuzzer: a unit without a size column was accepted and lost.
            ("key=92,unit=2", "give size=N too"),
        ] {
            let e = bad.parse::<CsvSpec>().unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn lines_by_column() {
        let spec: CsvSpec = "key=2,op=3".parse().unwrap();
        assert_eq!(
            parse_line(&spec, "t", 1, b"9,42,GET").unwrap(),
            (42, None, false)
        );
        assert_eq!(
            parse_line(&spec, "t", 1, b"9, \"0x2a\" ,set,x").unwrap(),
            (42, None, true)
        );
        let e = parse_line(&spec, "t", 7, b"9,42").unwrap_err().to_string();
        assert_eq!(
            e,
            "t: line 7: expected at least 3 columns (the spec names column 3), found 2: \"9,42\""
        );
        let e = parse_line(&spec, "t", 8, b"9,42,delete")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 8") && e.contains("\"delete\""), "{e}");
        let e = parse_line(&spec, "t", 9, b"9,-1,get")
            .unwrap_err()
            .to_string();
        assert!(e.contains("an unsigned key in column 2"), "{e}");
        let words: CsvSpec = "key=1,key-is-num=false,delimiter=space".parse().unwrap();
        let (a, _, _) = parse_line(&words, "t", 1, b"user:42   x").unwrap();
        assert_eq!(a, fnv1a(b"user:42"));
        // FNV-1a's published test vector.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
