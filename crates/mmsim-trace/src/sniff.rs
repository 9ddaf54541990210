//! Format detection from content (`--format auto`).
//!
//! The first [`SNIFF_LEN`] (64 KiB) bytes of the decompressed stream decide; the file name
//! plays no part, and the result depends only on the content (not on how reads happen to
//! be chunked). [`sniff_bytes_explained`] returns a [`Sniffed`]: the format, the rule that
//! chose it (`reason`) and whether another format was about as plausible (`ambiguous`).
//! The rules, in order:
//!
//! 1. An empty stream is [`Format::Text`] (every format reads it as zero references).
//! 2. A stream that starts with the native magic number ([`native::MAGIC`]) is
//!    [`Format::Native`].
//! 3. If the stream (after a UTF-8 byte-order mark, if any) is UTF-8 and has no control
//!    bytes but tab, `\r` and `\n`, it is text: a BOM or an accented comment does not
//!    make a text trace binary (a binary trace is almost never valid UTF-8 without a NUL
//!    over 64 KiB). Its
//!    lines (the last one dropped if the 64 KiB cut it) are examined, ignoring blank lines
//!    and `#` comments, each with the parser of every text format:
//!    - if some line is a `mm_filemap_*` event (see [`filemap`]) →
//!      [`Format::Filemap`] (lines of other events are allowed, as the reader skips them);
//!    - otherwise every line must parse in one and the same format: one integer →
//!      [`Format::Text`], or [`Format::Lirs`] if a `*` line occurs; 4 integers →
//!      [`Format::Arc`]; csv `version,time,op,size,lbn` → [`Format::LibCacheSimCsv`]; csv
//!      of 7 fields with `Read`/`Write` → [`Format::Msr`] (either csv's header only as the
//!      first line); `<hex> R|W` → [`Format::Memsim`]; `l|s 0x<hex> <n>` →
//!      [`Format::Ucsd`]; lackey's `I`/`L`/`S`/`M` lines and `==pid==` messages →
//!      [`Format::Lackey`];
//!    - a line that fits no format, or two lines that fit different formats, is an error
//!      naming the line.
//! 4. Otherwise the stream is binary, and the first rule that fits decides:
//!    1. [`Format::Vscsi`]: the first record has a vscsi version byte (1 at offset 15, or
//!       2 at offset 3; see [`vscsi`]) and so does every whole 32- or 40-byte
//!       record in the head;
//!    2. [`Format::OracleGeneral`]: at least one whole 24-byte record, and for every record
//!       in the head (0-based index `i`): `obj_size > 0` and `next_access_vtime` either −1
//!       or in `i < next_access_vtime < i + 2^40` (it is the 1-based position of a later
//!       request; the upper bound rejects arrays of 32-bit keys, whose pairs read as huge
//!       numbers);
//!    3. a key array ([`keyarray`](crate::keyarray)), if the length is a multiple of 4
//!       (when the whole stream is in the head), it has at least 8 bytes, does not start
//!       with a zlib header (as DAMON's `damon.data` does) and not all its 32-bit words
//!       are equal:
//!       - [`Format::I64Be`] if, in either byte order, at least 90 % of the 64-bit values
//!         are below 2^40 and their high 32-bit halves are far less varied than their low
//!         halves (all equal, or at most a quarter as many distinct values): small 64-bit
//!         keys (in an array of 32-bit keys, even and odd words look alike);
//!       - else [`Format::U32Le`] or [`Format::I32Be`] if at least half the 32-bit words
//!         are below 2^28 in that byte order (the order with more such words wins, ties go
//!         to big-endian);
//!       - else the values look random (hashes). Unless at least 25 % of them are
//!         repeats within the head (keys of a trace recur; compressed data hardly), this
//!         is an error. Otherwise width is the only question:
//!         [`Format::I64Be`] if the head has at least 1.8 times as many distinct 32-bit
//!         words as distinct 64-bit values (the two halves of a 64-bit key are distinct
//!         words; 32-bit keys that repeat make fewer), else [`Format::I32Be`]. Both are
//!         marked `ambiguous`.
//!    4. Otherwise an error.
//!
//! For vscsi and oracleGeneral, a length that is not a whole number of records does not
//! prevent detection: the reader then reports the truncated last record.
//!
//! Byte order of a key array cannot be known from content and does not matter for a
//! simulation: swapping bytes maps distinct keys to distinct keys, so the reference
//! sequence is the same up to renaming. (The cache2k `orm-*` traces, for example, are
//! big-endian but read as `u32-le` by rule 4.3, because their tagged keys are smaller that
//! way; `web07`/`web12` detect as `i32-be`.) Width does matter, hence the rules above.
//!
//! A LIRS trace whose first `*` comes after 64 KiB is detected as `text` and then fails
//! with a clear error at the `*` line (suggesting `lirs`); for the published LIRS traces
//! the two formats yield the same references where no `*` occurs.

use std::collections::HashSet;
use std::fmt;

use crate::error::quote;
use crate::input::Input;
use crate::oracle::{OracleRecord, RECORD_SIZE};
use crate::{arc, filemap, lackey, lcs_csv, memsim, msr, native, ucsd, vscsi};
use crate::{Format, TraceError};

/// How many bytes of the (decompressed) stream format detection looks at.
pub const SNIFF_LEN: usize = 64 * 1024;

/// Upper bound of `next_access_vtime - index` accepted when detecting oracleGeneral.
const MAX_REUSE_DISTANCE: i64 = 1 << 40;

/// The result of format detection: the format, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sniffed {
    /// The format chosen.
    pub format: Format,
    /// The rule that chose it, in words (e.g. `binary: every 32-byte record has the vscsi
    /// v1 version byte`).
    pub reason: &'static str,
    /// Whether another format was about as plausible (random-looking key arrays, whose
    /// width is a guess); the reason says which.
    pub ambiguous: bool,
}

impl fmt::Display for Sniffed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}", self.format, self.reason)?;
        if self.ambiguous {
            f.write_str("; ambiguous: name the format to be sure")?;
        }
        f.write_str(")")
    }
}

fn sure(format: Format, reason: &'static str) -> Sniffed {
    Sniffed {
        format,
        reason,
        ambiguous: false,
    }
}

/// Detects the format of a stream whose first bytes are `head` (at most [`SNIFF_LEN`] are
/// looked at). `complete` says that `head` is the whole stream. `name` is used in errors.
pub fn sniff_bytes(name: &str, head: &[u8], complete: bool) -> Result<Format, TraceError> {
    sniff_bytes_explained(name, head, complete).map(|s| s.format)
}

/// Like [`sniff_bytes`], also saying why (see the [module documentation](self)).
pub fn sniff_bytes_explained(
    name: &str,
    head: &[u8],
    complete: bool,
) -> Result<Sniffed, TraceError> {
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
        return Ok(sure(
            Format::Text,
            "empty: every format reads it as zero references",
        ));
    }
    if head.starts_with(&native::MAGIC) {
        return Ok(sure(Format::Native, "starts with the native magic number"));
    }
    let body = head.strip_prefix(crate::input::UTF8_BOM).unwrap_or(head);
    if looks_like_text(body, complete) {
        sniff_text(body, complete).map_err(fail)
    } else {
        sniff_binary(head, complete).map_err(fail)
    }
}

/// UTF-8 (a character cut by the 64 KiB head excepted) with no control bytes but tab,
/// `\r` and `\n`.
fn looks_like_text(head: &[u8], complete: bool) -> bool {
    let utf8 = match std::str::from_utf8(head) {
        Ok(_) => true,
        // `error_len() == None`: the head ends inside a character.
        Err(e) => !complete && e.error_len().is_none(),
    };
    utf8 && head
        .iter()
        .all(|&b| b >= 0x80 || b.is_ascii_graphic() || matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// The text formats a line can belong to, as bits.
const TEXT: u16 = 1;
const STAR: u16 = 1 << 1;
const ARC: u16 = 1 << 2;
const LCS: u16 = 1 << 3;
const MSR: u16 = 1 << 4;
const MEMSIM: u16 = 1 << 5;
const UCSD: u16 = 1 << 6;
const LACKEY: u16 = 1 << 7;

const KINDS: [(u16, Format, &str); 8] = [
    (TEXT, Format::Text, "one integer key (text, lirs)"),
    (STAR, Format::Lirs, "a `*` marker (lirs)"),
    (
        ARC,
        Format::Arc,
        "`start_block n_blocks ignored request_no` (arc)",
    ),
    (
        LCS,
        Format::LibCacheSimCsv,
        "`version,time,op,size,lbn` (libcachesim-csv)",
    ),
    (
        MSR,
        Format::Msr,
        "`Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` (msr)",
    ),
    (MEMSIM, Format::Memsim, "`<hex address> R|W` (memsim)"),
    (UCSD, Format::Ucsd, "`l|s 0x<hex address> <n>` (ucsd)"),
    (LACKEY, Format::Lackey, "a lackey line (lackey)"),
];

fn kind_name(kind: u16) -> &'static str {
    KINDS.iter().find(|k| k.0 == kind).map_or("?", |k| k.2)
}

/// Which format a trimmed content line fits (0 if none). `first` says whether it is the
/// first content line (where csv headers are allowed).
fn classify(line: &[u8], first: bool) -> u16 {
    if line == b"*" {
        return STAR;
    }
    if crate::text::parse_u64(line).is_some() {
        return TEXT;
    }
    if arc::parse_line("", 0, line).is_ok() {
        return ARC;
    }
    if memsim::parse_line("", 0, line).is_ok() {
        return MEMSIM;
    }
    if ucsd::parse_line("", 0, line).is_ok() {
        return UCSD;
    }
    if lackey::parse_line("", 0, line).is_ok() {
        return LACKEY;
    }
    if lcs_csv::parse_line("", 0, line, first).is_ok() {
        return LCS;
    }
    if msr::parse_line("", 0, line, first).is_ok() {
        return MSR;
    }
    0
}

fn sniff_text(head: &[u8], complete: bool) -> Result<Sniffed, String> {
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
    let lines = || {
        whole
            .split(|&b| b == b'\n')
            .enumerate()
            .map(|(i, raw)| (i + 1, raw.trim_ascii()))
            .filter(|(_, l)| !l.is_empty() && l[0] != b'#')
    };
    if lines().any(|(_, l)| filemap::find_event(l, false).is_some()) {
        return Ok(sure(
            Format::Filemap,
            "text with lines of mm_filemap_* tracepoint events (perf script / ftrace)",
        ));
    }
    let mut seen = 0u16;
    let mut first_of_kind = [0usize; 8];
    for (n, (line_no, line)) in lines().enumerate() {
        let kind = classify(line, n == 0);
        if kind == 0 {
            return Err(format!(
                "line {line_no} is {}, which fits no text format (expected one integer key \
                 (text, lirs), `start_block n_blocks ignored request_no` (arc), a csv line of \
                 libcachesim-csv or msr, `<hex> R|W` (memsim), `l|s 0x<hex> <n>` (ucsd), a \
                 lackey line or a mm_filemap_* event)",
                quote(line)
            ));
        }
        let bit = kind.trailing_zeros() as usize;
        if first_of_kind[bit] == 0 {
            first_of_kind[bit] = line_no;
        }
        seen |= kind;
        let family = seen & !(TEXT | STAR);
        let mixed = family.count_ones() > 1 || (family != 0 && seen & (TEXT | STAR) != 0);
        if mixed {
            let other = (seen & !kind).trailing_zeros() as usize;
            return Err(format!(
                "line {line_no} is {}, but line {} is {}: lines of different formats",
                kind_name(kind),
                first_of_kind[other],
                kind_name(1 << other)
            ));
        }
    }
    Ok(match seen {
        0 => sure(
            Format::Text,
            "text without content lines (only blank lines and comments)",
        ),
        TEXT => sure(
            Format::Text,
            "text: every line is one integer key (no `*` marker, which would make it lirs)",
        ),
        _ if seen & STAR != 0 => sure(
            Format::Lirs,
            "text: lines of one integer key and `*` marker lines (LIRS)",
        ),
        ARC => sure(
            Format::Arc,
            "text: every line is `start_block n_blocks ignored request_no` (ARC .lis)",
        ),
        LCS => sure(
            Format::LibCacheSimCsv,
            "text: csv lines `version,time,op,size,lbn` (libCacheSim block csv)",
        ),
        MSR => sure(
            Format::Msr,
            "text: csv lines `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` \
             (MSR Cambridge)",
        ),
        MEMSIM => sure(
            Format::Memsim,
            "text: every line is `<hex address> R|W` (memsim)",
        ),
        UCSD => sure(
            Format::Ucsd,
            "text: every line is `l|s 0x<hex address> <n>` (UCSD address trace)",
        ),
        _ => sure(
            Format::Lackey,
            "text: valgrind lackey lines (`I  addr,size`, ` L|S|M addr,size`, `==pid==`)",
        ),
    })
}

fn sniff_vscsi(head: &[u8]) -> Option<Sniffed> {
    let version = vscsi::detect_version(head)?;
    let (size, at, byte) = if version == 1 {
        (vscsi::V1_RECORD_SIZE, 15, 1)
    } else {
        (vscsi::V2_RECORD_SIZE, 3, 2)
    };
    head.chunks_exact(size).all(|r| r[at] == byte).then(|| {
        sure(
            Format::Vscsi,
            if version == 1 {
                "binary: every 32-byte record has the vscsi v1 version byte (offset 15)"
            } else {
                "binary: every 40-byte record has the vscsi v2 version byte (offset 3)"
            },
        )
    })
}

fn oracle_problem(head: &[u8]) -> Option<String> {
    if head.len() < RECORD_SIZE {
        return Some(format!(
            "shorter than one {RECORD_SIZE}-byte oracleGeneral record"
        ));
    }
    for (i, chunk) in head.chunks_exact(RECORD_SIZE).enumerate() {
        let rec = OracleRecord::from_bytes(chunk.try_into().expect("chunks_exact"));
        let i = i as i64;
        let vtime = rec.next_access_vtime;
        let vtime_ok = vtime == -1 || (vtime > i && vtime - i < MAX_REUSE_DISTANCE);
        if rec.obj_size == 0 || !vtime_ok {
            return Some(format!(
                "oracleGeneral record {} would have obj_size {} and next_access_vtime {}",
                i + 1,
                rec.obj_size,
                vtime
            ));
        }
    }
    None
}

fn sniff_key_array(head: &[u8], complete: bool) -> Result<Sniffed, String> {
    if head.len() < 8 {
        return Err(format!(
            "only {} bytes, too few for a key array (at least 8)",
            head.len()
        ));
    }
    if complete && !head.len().is_multiple_of(4) {
        return Err(format!(
            "{} bytes, not a whole number of 32-bit keys",
            head.len()
        ));
    }
    // zlib (RFC 1950) header: CM 8, a window of at most 32 KiB, the check bits.
    let (cmf, flg) = (head[0], head[1]);
    if cmf & 0x0f == 8 && cmf >> 4 <= 7 && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0 {
        return Err(
            "it starts with a zlib header (zlib is not a supported compression; \
                    gzip, xz and zstd are)"
                .to_string(),
        );
    }
    let words = || head.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]);
    let first = words().next();
    if words().all(|w| Some(w) == first) {
        return Err("all 32-bit words are equal".to_string());
    }
    let can64 = !complete || head.len().is_multiple_of(8);
    let n32 = head.len() / 4;
    let n64 = head.len() / 8;
    let small = |v: u64, bits: u32| v >> bits == 0;
    if can64 {
        // Small 64-bit keys: nearly all values below 2^40, and their high halves far less
        // varied than their low halves (in a 32-bit array, even and odd words look alike).
        let looks64 = |f: fn([u8; 8]) -> u64| {
            let values = || {
                head.chunks_exact(8)
                    .map(|c| f(c.try_into().expect("8 bytes")))
            };
            let small_count = values().filter(|&v| small(v, 40)).count();
            let d_hi = values().map(|v| v >> 32).collect::<HashSet<_>>().len();
            let d_lo = values().map(|v| v as u32).collect::<HashSet<_>>().len();
            small_count * 10 >= n64 * 9 && ((d_hi == 1 && d_lo > 1) || d_hi * 4 <= d_lo)
        };
        let (be, le) = (looks64(u64::from_be_bytes), looks64(u64::from_le_bytes));
        if be || le {
            return Ok(sure(
                Format::I64Be,
                if be {
                    "binary: array of 64-bit keys (as big-endian 64-bit values almost all are \
                     below 2^40, with high halves far less varied than low halves)"
                } else {
                    "binary: array of 64-bit keys (almost all below 2^40 as little-endian; read \
                     as big-endian, which only renames keys)"
                },
            ));
        }
    }
    let le = words()
        .filter(|w| small(u64::from(u32::from_le_bytes(*w)), 28))
        .count();
    let be = words()
        .filter(|w| small(u64::from(u32::from_be_bytes(*w)), 28))
        .count();
    if le.max(be) * 2 >= n32 {
        return Ok(if le > be {
            sure(
                Format::U32Le,
                "binary: array of 32-bit keys, most below 2^28 read little-endian (byte order \
                 only renames keys)",
            )
        } else {
            sure(
                Format::I32Be,
                "binary: array of 32-bit keys, most below 2^28 read big-endian (byte order only \
                 renames keys)",
            )
        });
    }
    let d32 = words().collect::<HashSet<_>>().len();
    let d64 = head.chunks_exact(8).collect::<HashSet<_>>().len();
    let wide = can64 && d32 * 10 >= d64 * 18;
    // Keys of a trace repeat; noise (compressed or encrypted data) does not.
    let (distinct, count) = if wide { (d64, n64) } else { (d32, n32) };
    if distinct * 4 > count * 3 {
        return Err(format!(
            "random-looking values that repeat too little ({distinct} distinct of {count}; a \
             key array needs at least 25 % repeats): compressed or encrypted data rather \
             than keys"
        ));
    }
    Ok(if wide {
        Sniffed {
            format: Format::I64Be,
            reason: "binary: array of random-looking keys, taken as 64-bit because the halves \
                     of its 64-bit values are distinct 32-bit words (i32-be is the alternative)",
            ambiguous: true,
        }
    } else {
        Sniffed {
            format: Format::I32Be,
            reason: "binary: array of random-looking keys, taken as 32-bit because its 32-bit \
                     words repeat (i64-be is the alternative)",
            ambiguous: true,
        }
    })
}

fn sniff_binary(head: &[u8], complete: bool) -> Result<Sniffed, String> {
    if let Some(s) = sniff_vscsi(head) {
        return Ok(s);
    }
    let oracle = match oracle_problem(head) {
        None => {
            return Ok(sure(
                Format::OracleGeneral,
                "binary: 24-byte records with obj_size > 0 and next_access_vtime -1 or a \
                 later position (libCacheSim oracleGeneral)",
            ))
        }
        Some(p) => p,
    };
    sniff_key_array(head, complete).map_err(|keys| {
        format!(
            "binary data of {}{} bytes that is no native trace (magic number), no vscsi trace \
             (version byte), no oracleGeneral trace ({oracle}) and no key array ({keys})",
            head.len(),
            if complete { "" } else { "+" },
        )
    })
}

/// Reads the head of `input` (without consuming it) and detects the format.
pub(crate) fn sniff_input(name: &str, input: &mut Input) -> Result<Sniffed, TraceError> {
    let n = input.fill_at_least(SNIFF_LEN)?;
    let head = input.available();
    // Deterministic: with fewer than SNIFF_LEN bytes the stream has ended; with SNIFF_LEN
    // or more, only the first SNIFF_LEN count and the stream is taken as longer.
    let complete = n < SNIFF_LEN;
    sniff_bytes_explained(name, &head[..n.min(SNIFF_LEN)], complete)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniff(s: &[u8]) -> Result<Format, TraceError> {
        sniff_bytes("t", s, true)
    }

    /// Why `sniff_bytes` detected no format: its error without the prefix and the
    /// list of formats every such error ends with.
    fn undetected(s: &[u8], complete: bool) -> String {
        let e = sniff_bytes("t", s, complete).unwrap_err().to_string();
        let tail = format!(
            "; expected one of {}, or name the format explicitly",
            Format::NAMES.join(", ")
        );
        let e = e
            .strip_prefix("t: cannot detect the trace format: ")
            .unwrap();
        e.strip_suffix(&tail).unwrap().to_string()
    }

    /// The reason of a line that fits no text format.
    const NO_TEXT: &str = "which fits no text format (expected one integer key (text, lirs), \
        `start_block n_blocks ignored request_no` (arc), a csv line of libcachesim-csv or msr, \
        `<hex> R|W` (memsim), `l|s 0x<hex> <n>` (ucsd), a lackey line or a mm_filemap_* event)";

    /// The reason of binary data that is no binary format.
    fn no_binary(n: usize, oracle: &str, keys: &str) -> String {
        format!(
            "binary data of {n} bytes that is no native trace (magic number), no vscsi trace \
             (version byte), no oracleGeneral trace ({oracle}) and no key array ({keys})"
        )
    }

    #[test]
    fn a_bom_or_an_accented_comment_is_still_text() {
        assert_eq!(sniff(b"\xEF\xBB\xBF1\n2\n").unwrap(), Format::Text);
        assert_eq!(
            sniff("# trace de l'\u{e9}t\u{e9}\n1\n2\n".as_bytes()).unwrap(),
            Format::Text
        );
        assert_eq!(
            sniff("\u{feff}1 1 0 0\n2 8 0 1\n".as_bytes()).unwrap(),
            Format::Arc
        );
        // A head cut inside a two-byte character is text when more follows...
        assert_eq!(
            sniff_bytes("t", b"# \xC3\xA9\n1\n# \xC3", false).unwrap(),
            Format::Text
        );
        // ...but a stream that ends in half a character, or has a stray byte, is not.
        for s in [
            &b"# \xC3\xA9\n1\n# \xC3"[..],
            b"1\n\xFF\n2\n",
            b"1\n\x01\n2\n",
        ] {
            assert!(!looks_like_text(s, true), "{s:?}");
        }
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
        let e = sniff(b"1\n1 1 0 0\n").unwrap_err().to_string();
        assert!(e.contains("line 2 is `start_block"), "{e}");
        assert!(e.contains("but line 1 is one integer key"), "{e}");
        assert_eq!(
            sniff(b"version,time,op,size,lbn\n1,5633898,2a,512,42932745\n").unwrap(),
            Format::LibCacheSimCsv
        );
        // A header alone is a (header-only) csv too; a header in the middle is not.
        assert_eq!(
            sniff(b"version,time,op,size,lbn\n").unwrap(),
            Format::LibCacheSimCsv
        );
        assert_eq!(
            undetected(
                b"1,5633898,2a,512,42932745\nversion,time,op,size,lbn\n",
                true
            ),
            format!("line 2 is \"version,time,op,size,lbn\", {NO_TEXT}")
        );
        assert_eq!(
            sniff(b"128166385295514663,hm,0,Write,9056014336,2048,2833\n").unwrap(),
            Format::Msr
        );
        assert_eq!(sniff(b"0041f7a0 R\n31348900 W\n").unwrap(), Format::Memsim);
        assert_eq!(
            sniff(b"s 0x1fffff50 1\nl 0x1fffff58 1\n").unwrap(),
            Format::Ucsd
        );
        assert_eq!(
            sniff(b"s 0x1fffff50 1 1 100\nl 0x1fffff58 1 1 100\n").unwrap(),
            Format::Ucsd
        );
        assert_eq!(
            sniff(b"==1== Lackey\nI  04016cb0,3\n S 7ff000ae8,8\n M 0421f4a0,4\n").unwrap(),
            Format::Lackey
        );
        assert_eq!(
            sniff(b"# tracer: nop\n cat-1 [002] ..... 5.1: sched_switch: x\n cat-1 [002] ..... 5.2: mm_filemap_fault: dev=8:1 ino=2 ofs=0\n")
                .unwrap(),
            Format::Filemap
        );
        assert_eq!(
            undetected(b"0041f7a0 R\ns 0x1fffff50 1\n", true),
            "line 2 is `l|s 0x<hex address> <n>` (ucsd), but line 1 is `<hex address> R|W` \
             (memsim): lines of different formats"
        );
        assert_eq!(
            undetected(b"hello\n", true),
            format!("line 1 is \"hello\", {NO_TEXT}")
        );
    }

    #[test]
    fn cut_last_line_is_ignored() {
        // Not complete: the partial last line "1 2" is not examined.
        assert_eq!(sniff_bytes("t", b"5\n6\n1 2", false).unwrap(), Format::Text);
        assert_eq!(
            undetected(b"5\n6\n1 2", true),
            format!("line 3 is \"1 2\", {NO_TEXT}")
        );
        assert_eq!(
            undetected(b"123", false),
            "text without a line end in the first 65536 bytes"
        );
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
        // A truncated last record does not prevent detection (the reader reports it).
        assert_eq!(sniff(&bytes[..47]).unwrap(), Format::OracleGeneral);
        let mut bad = bytes.clone();
        bad[12..16].copy_from_slice(&0u32.to_le_bytes());
        // Not oracleGeneral any more; it falls through to a key array.
        assert_eq!(sniff(&bad).unwrap(), Format::I32Be);
        // An array of u32 keys is not oracleGeneral.
        let keys: Vec<u8> = (1000u32..1030).flat_map(|k| k.to_le_bytes()).collect();
        assert_eq!(sniff(&keys).unwrap(), Format::U32Le);
    }

    #[test]
    fn key_arrays_and_vscsi() {
        let be32: Vec<u8> = (0u32..100)
            .map(|k| k % 37)
            .flat_map(u32::to_be_bytes)
            .collect();
        assert_eq!(sniff(&be32).unwrap(), Format::I32Be);
        let be64: Vec<u8> = (0u64..100)
            .map(|k| k % 37 + 1)
            .flat_map(u64::to_be_bytes)
            .collect();
        assert_eq!(sniff(&be64).unwrap(), Format::I64Be);
        // Random-looking 64-bit keys (a multiplicative hash), repeating.
        let hashed: Vec<u8> = (0u64..400)
            .map(|k| (k % 97 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .flat_map(u64::to_be_bytes)
            .collect();
        let s = sniff_bytes_explained("t", &hashed, true).unwrap();
        assert_eq!((s.format, s.ambiguous), (Format::I64Be, true), "{s}");
        // Random-looking 32-bit keys that repeat.
        let hashed32: Vec<u8> = (0u32..400)
            .map(|k| (k % 97 + 1).wrapping_mul(0x9e37_79b9))
            .flat_map(u32::to_be_bytes)
            .collect();
        let s = sniff_bytes_explained("t", &hashed32, true).unwrap();
        assert_eq!((s.format, s.ambiguous), (Format::I32Be, true), "{s}");
        // Noise that does not repeat is no key array.
        let noise: Vec<u8> = (0u64..400)
            .map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .flat_map(u64::to_be_bytes)
            .collect();
        assert_eq!(
            undetected(&noise, true),
            no_binary(
                3200,
                "oracleGeneral record 1 would have obj_size 360467071 and next_access_vtime \
                 3096388564388376124",
                "random-looking values that repeat too little (400 distinct of 400; a key array \
                 needs at least 25 % repeats): compressed or encrypted data rather than keys"
            )
        );
        // Degenerate and too short.
        assert_eq!(
            undetected(&[0u8; 48], true),
            no_binary(
                48,
                "oracleGeneral record 1 would have obj_size 0 and next_access_vtime 0",
                "all 32-bit words are equal"
            )
        );
        assert_eq!(
            undetected(&[1u8, 0, 0, 0, 2, 0], true),
            no_binary(
                6,
                "shorter than one 24-byte oracleGeneral record",
                "only 6 bytes, too few for a key array (at least 8)"
            )
        );
        assert_eq!(
            undetected(&be32[..399], true),
            no_binary(
                399,
                "oracleGeneral record 1 would have obj_size 50331648 and next_access_vtime \
                 360287970256748544",
                "399 bytes, not a whole number of 32-bit keys"
            )
        );
        // vscsi v1: version byte 1 at offset 15 of every 32-byte record.
        let mut v1 = vec![0u8; 64];
        for r in v1.chunks_exact_mut(32) {
            r[12] = 0x28;
            r[15] = 1;
            r[4] = 2; // len 512
        }
        let s = sniff_bytes_explained("t", &v1, true).unwrap();
        assert_eq!(s.format, Format::Vscsi);
        assert!(s.reason.contains("v1"), "{s}");
        v1[47] = 0;
        assert_eq!(sniff(&v1).unwrap(), Format::I64Be);
        // The native magic number.
        let mut native = crate::native::MAGIC.to_vec();
        native.extend_from_slice(&[1, 0, 1, 0]);
        assert_eq!(sniff(&native).unwrap(), Format::Native);
    }
}
