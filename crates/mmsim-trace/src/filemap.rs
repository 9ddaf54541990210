//! The `filemap` format: text of the kernel's `filemap` tracepoints, as `perf script` or
//! ftrace print them.
//!
//! Capture with `perf record -e filemap:mm_filemap_get_pages -e filemap:mm_filemap_fault
//! -e filemap:mm_filemap_map_pages -- CMD` then `perf script > trace.txt`, or with ftrace
//! (`echo 1 > /sys/kernel/tracing/events/filemap/enable`, then read
//! `/sys/kernel/tracing/trace`). Lines look like
//!
//! ```text
//! # tracer: nop                                                   <- ftrace header (comment)
//!              cat    1234 [002]  5678.901234: filemap:mm_filemap_get_pages: dev=8:1 ino=c0ffee ofs=0-16383
//!              cat-1234    [002] .....  5678.901300: mm_filemap_fault: dev=8:1 ino=c0ffee ofs=40960
//! ```
//!
//! # Events and their `TP_printk` formats
//!
//! From `include/trace/events/filemap.h` (since Linux 6.11; `ino` is printed with `%lx`,
//! the byte offsets with `%lld`/`%lu`):
//!
//! | event | format | pages |
//! |---|---|---|
//! | `mm_filemap_get_pages` (read path: `filemap_get_pages`) | `dev=%d:%d ino=%lx ofs=%lld-%lld` | `ofs` is `index << PAGE_SHIFT`, the second number `((last_index + 1) << PAGE_SHIFT) - 1`, the last byte: pages `ofs >> 12 ..= end >> 12` |
//! | `mm_filemap_map_pages` (fault-around: `filemap_map_pages`) | same class (`mm_filemap_op_page_cache_range`) | same |
//! | `mm_filemap_fault` (`filemap_fault`) | `dev=%d:%d ino=%lx ofs=%lld` | the page `ofs >> 12` |
//! | `mm_filemap_add_to_page_cache` | `dev %d:%d ino %lx pfn=0x%lx ofs=%lu order=%u` | `2^order` pages from `ofs >> 12` (`order` absent in kernels before folios: one page) |
//! | `mm_filemap_delete_from_page_cache` | as above | none: an eviction, not an access; skipped and counted in [`ReadStats::skipped_events`] |
//!
//! | `ext4_da_write_begin`, `ext4_write_begin` (buffered writes: `ext4_da_write_begin()`, `ext4_write_begin()` of fs/ext4/inode.c, `include/trace/events/ext4.h`) | `dev %d,%d ino %lu pos %lld len %u` (the inode in decimal) | pages `pos >> 12 ..= (pos + len - 1) >> 12`, **writes**; `len` 0 is skipped and counted in [`ReadStats::skipped_zero_length`] |
//! | `ext4_writepages` (`do_writepages` of an inode: `fsync`, `fdatasync`, `sync_file_range`; read only with [`ReadOptions::syncs`](crate::ReadOptions::syncs)) | `dev %d,%d ino %lu nr_to_write %ld pages_skipped %ld range_start %lld range_end %lld sync_mode %d for_kupdate %d range_cyclic %d writeback_index %lu` | one [`Record::sync`](crate::Record::sync) record from page `range_start >> 12`, `range_end` LLONG_MAX meaning the whole file, waited for when `sync_mode` is 1 (`WB_SYNC_ALL`); the flusher's own passes (`for_kupdate` or `range_cyclic` 1) are skipped as other events |
//!
//! The form `ofs=%lld max_ofs=%lld` of the range events' v2 patch (the second number the
//! offset of the last page) is accepted too. The page size is taken to be 4 KiB
//! (`PAGE_SHIFT` 12). Before the fix "filemap: fix the last_index of
//! mm_filemap_get_pages" (Linux 6.12), `get_pages` passed an exclusive `last_index`, so
//! its ranges include one page past the read; the reader takes the numbers as printed.
//! `add_to_page_cache` reports insertions (misses and readahead), the other three the
//! pages a task actually reads or maps; trace either kind, mixing them counts pages twice.
//! The pages of `mm_filemap_fault` and `mm_filemap_map_pages` are marked
//! [`Record::fault`](crate::Record::fault) (reads through a mapping, which a replay may
//! issue as accesses to a mapping of the file); the reader cannot tell an executable
//! mapping from another (the events carry no VMA flags).
//! ext4 calls its `write_begin` hook once per folio a buffered write touches, with the
//! part of the write in that folio, so a write's pages are each reported once (`scripts/capture-app` records
//! them beside the reads; a file system other than ext4 has its own event, not read here).
//!
//! # Reads of several calls
//!
//! `filemap_read` (mm/filemap.c, v6.12–6.18) calls `filemap_get_pages` in a loop, and
//! each call emits `mm_filemap_get_pages` with the rest of the read: `index` where the
//! copy has got to, `last_index` the read's last page. A call returns a short batch
//! when `filemap_get_read_batch` stops at a page not cached or after one marked
//! `PG_readahead`, so a read of 96 KiB whose tail is still being read ahead shows as
//! `ofs=98304-116834` then `ofs=102400-116834`: pages 24–28, then 25–28, each copied
//! (and `folio_mark_accessed`) once. Read as two requests, pages 25–28 are read twice and
//! a replay marks them accessed twice (activating them). With
//! [`ReadOptions::read_calls`](crate::ReadOptions::read_calls) an event that continues
//! the `mm_filemap_get_pages` before it (same file, same last byte, a first byte after
//! that event's first and not past its last) is skipped: the read is replayed once,
//! with the range of its first call (the request `page_cache_sync_ra` saw). A read of
//! another task interleaved between two calls hides the continuation (it is replayed as
//! before); a new read that starts inside the previous one and ends at the same byte is
//! taken for a continuation. Off by default.
//!
//! # Keys
//!
//! Every event names one file by `(dev, ino)`. Files are numbered 0, 1, 2, … in order of
//! first appearance, and a page's key is
//!
//! ```text
//! key = file_number << 40 | page_index          (page_index < 2^40, file_number < 2^24)
//! ```
//!
//! so a file may have up to 2^40 pages (4 PiB) and the keys of different files never
//! collide (a write event's `dev` and `ino` name the same file as the filemap events'). A
//! page index of 2^40 or more is a [`TraceError::TooLarge`]; so is a range of
//! more than 1 GiB in one event, and a file beyond [`ReadOptions::max_files`]
//! (default [`DEFAULT_MAX_FILES`], at most [`MAX_FILES`]): the `(dev, ino)` → number map
//! is the one thing this reader keeps per distinct value, and the limit bounds it. The
//! `ext4` write events give writes (`write: true`), every other event reads.
//!
//! # Other lines
//!
//! The event is found by its name (`mm_filemap_…` followed by `:`) anywhere in the line,
//! so `perf script`'s `filemap:` prefix and ftrace's columns are both fine. Lines of any
//! other event, and any other text (`perf script` call chains, …), are skipped and counted
//! in [`ReadStats::skipped_events`]; blank lines and `#` comments (ftrace's header) are
//! skipped and counted as usual. A line of a recognised event whose fields do not parse is
//! an error naming the line.
//!
//! [`ReadOptions::max_files`]: crate::ReadOptions::max_files

use std::collections::HashMap;

use crate::block::{MAX_REQUEST_BYTES, PAGE_SHIFT};
use crate::densify::BuildKeyHasher;
use crate::error::quote;
use crate::expand::Run;
use crate::input::Input;
use crate::lines::{fill_lines, parse_hex};
use crate::text::parse_u64;
use crate::{Position, ReadStats, Record, SyncSpan, TraceError};

/// Bits of a key that hold the page index; the file number is above them.
pub const PAGE_BITS: u32 = 40;

/// The largest number of distinct files any reader accepts (2^24, all the key bits above
/// [`PAGE_BITS`]).
pub const MAX_FILES: u32 = 1 << 24;

/// The default [`ReadOptions::max_files`](crate::ReadOptions::max_files): 2^20 files.
pub const DEFAULT_MAX_FILES: u32 = 1 << 20;

/// The key of page `page` of file number `file`.
#[inline]
pub fn key(file: u32, page: u64) -> u64 {
    (u64::from(file) << PAGE_BITS) | page
}

/// The `(dev, ino)` → file number map, and the last read's range.
#[derive(Debug, Default)]
pub(crate) struct Files {
    map: HashMap<(u64, u64), u32, BuildKeyHasher>,
    /// The last `mm_filemap_get_pages` event replayed: `(dev, ino, first, last)` bytes.
    last_read: Option<(u64, u64, u64, u64)>,
}

/// The events read.
#[derive(Debug, PartialEq, Eq)]
enum Event {
    /// A buffered write of `len` bytes at byte `pos` of file `(dev, ino)`.
    Write {
        dev: u64,
        ino: u64,
        pos: u64,
        len: u64,
    },
    /// Pages `first ..= last` of file `(dev, ino)`, given as byte offsets; `fault`: a
    /// mapping's page fault or fault-around (`mm_filemap_fault`, `mm_filemap_map_pages`),
    /// not a read.
    Range {
        dev: u64,
        ino: u64,
        first: u64,
        last: u64,
        fault: bool,
    },
    /// A writeback of bytes `start ..= end` of file `(dev, ino)` (`ext4_writepages`);
    /// `wait`: `sync_mode` `WB_SYNC_ALL` (fsync), else `WB_SYNC_NONE`.
    Sync {
        dev: u64,
        ino: u64,
        start: u64,
        end: u64,
        wait: bool,
    },
    /// `2^order` pages from byte offset `ofs`.
    Added {
        dev: u64,
        ino: u64,
        ofs: u64,
        order: u64,
    },
    /// An event that is skipped.
    Other,
}

const EXPECTED_RANGE: &str = "`dev=MAJOR:MINOR ino=HEX ofs=START-END` (or `ofs=START max_ofs=END`)";
const EXPECTED_FAULT: &str = "`dev=MAJOR:MINOR ino=HEX ofs=OFFSET`";
const EXPECTED_ADD: &str = "`dev MAJOR:MINOR ino HEX pfn=0xPFN ofs=OFFSET order=ORDER`";
const EXPECTED_WRITE: &str = "`dev MAJOR,MINOR ino DECIMAL pos OFFSET len BYTES`";

/// The ext4 write events read (their `TP_printk` in include/trace/events/ext4.h).
const WRITE_EVENTS: [&[u8]; 2] = [b"ext4_da_write_begin", b"ext4_write_begin"];

/// ext4's `do_writepages` event: a writeback of a range of one inode (read only with
/// [`crate::ReadOptions::syncs`]).
const WRITEPAGES: &[u8] = b"ext4_writepages";

const EXPECTED_WRITEPAGES: &str = "`dev MAJOR,MINOR ino DECIMAL nr_to_write N pages_skipped N \
     range_start BYTE range_end BYTE sync_mode 0|1 ...`";

/// The event name and the text after its `:`, if the line holds a `mm_filemap_` event
/// or an ext4 write event (or, with `syncs`, `ext4_writepages`).
pub(crate) fn find_event(line: &[u8], syncs: bool) -> Option<(&[u8], &[u8])> {
    find_prefixed(line, b"mm_filemap_").or_else(|| {
        WRITE_EVENTS
            .iter()
            .chain(syncs.then_some(&WRITEPAGES))
            .find_map(|name| {
                find_prefixed(line, name).filter(|(found, _)| found.len() == name.len())
            })
    })
}

/// The event whose name starts with `PREFIX`, at a word boundary and followed by `:`.
fn find_prefixed<'a>(line: &'a [u8], prefix: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    let mut from = 0;
    while let Some(i) = line[from..]
        .windows(prefix.len())
        .position(|w| w == prefix)
        .map(|i| i + from)
    {
        let boundary = i == 0 || matches!(line[i - 1], b' ' | b'\t' | b':');
        let end = line[i..]
            .iter()
            .position(|&b| !(b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'))
            .map_or(line.len(), |e| i + e);
        if boundary && line.get(end) == Some(&b':') {
            return Some((&line[i..end], line[end + 1..].trim_ascii()));
        }
        from = i + 1;
    }
    None
}

fn parse_dev(s: &[u8]) -> Option<u64> {
    let colon = s.iter().position(|&b| b == b':')?;
    let major = parse_u64(&s[..colon])?;
    let minor = parse_u64(&s[colon + 1..])?;
    (major <= u64::from(u32::MAX) && minor <= u64::from(u32::MAX)).then_some(major << 32 | minor)
}

fn parse_ino(s: &[u8]) -> Option<u64> {
    parse_hex(s.strip_prefix(b"0x").unwrap_or(s))
}

/// The `name value` pairs of an ext4 event's payload, read in the order its
/// `TP_printk` prints them; `expected` is the error for any departure.
struct Ext4Fields<'a, I: Iterator<Item = &'a [u8]>> {
    tokens: I,
    expected: &'static str,
}

impl<'a, I: Iterator<Item = &'a [u8]>> Ext4Fields<'a, I> {
    /// The value of the next field, which must be `name`.
    fn next(&mut self, name: &[u8]) -> Result<&'a [u8], &'static str> {
        if self.tokens.next() != Some(name) {
            return Err(self.expected);
        }
        self.tokens.next().ok_or(self.expected)
    }
    /// The next field `name`, a decimal number.
    fn number(&mut self, name: &[u8]) -> Result<u64, &'static str> {
        parse_u64(self.next(name)?).ok_or(self.expected)
    }
    /// The leading `dev MAJOR,MINOR ino DECIMAL` every ext4 event prints, as
    /// `(major << 32 | minor, ino)`.
    fn dev_ino(&mut self) -> Result<(u64, u64), &'static str> {
        let e = self.expected;
        let dev = self.next(b"dev")?;
        let comma = dev.iter().position(|&b| b == b',').ok_or(e)?;
        let (Some(major), Some(minor)) = (parse_u64(&dev[..comma]), parse_u64(&dev[comma + 1..]))
        else {
            return Err(e);
        };
        if major > u64::from(u32::MAX) || minor > u64::from(u32::MAX) {
            return Err(e);
        }
        Ok((major << 32 | minor, self.number(b"ino")?))
    }
}

fn ext4_fields<'a>(
    payload: &'a [u8],
    expected: &'static str,
) -> Ext4Fields<'a, impl Iterator<Item = &'a [u8]>> {
    Ext4Fields {
        tokens: payload
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| !t.is_empty()),
        expected,
    }
}

/// Parses `dev 8,1 ino 1234 pos 0 len 8192` (ext4's write events).
fn parse_write(payload: &[u8]) -> Result<Event, &'static str> {
    let mut f = ext4_fields(payload, EXPECTED_WRITE);
    let (dev, ino) = f.dev_ino()?;
    let pos = f.number(b"pos")?;
    let len = f.number(b"len")?;
    // Later kernels print more fields (`flags`): ignored.
    Ok(Event::Write { dev, ino, pos, len })
}

/// Parses `dev 8,1 ino 1234 nr_to_write 9223372036854775807 pages_skipped 0
/// range_start 0 range_end 9223372036854775807 sync_mode 1 for_kupdate 0 range_cyclic 0
/// writeback_index 0` (`ext4_writepages`).
fn parse_writepages(payload: &[u8]) -> Result<Event, &'static str> {
    let e = EXPECTED_WRITEPAGES;
    let mut f = ext4_fields(payload, e);
    let (dev, ino) = f.dev_ino()?;
    f.next(b"nr_to_write")?;
    f.next(b"pages_skipped")?;
    let start = f.number(b"range_start")?;
    let end = f.number(b"range_end")?;
    let wait = match f.next(b"sync_mode")? {
        b"0" => false,
        b"1" => true,
        _ => return Err(e),
    };
    if end < start {
        return Err(e);
    }
    // The flusher's own writeback (`wb_writeback`: periodic `for_kupdate`, or a
    // `range_cyclic` background pass) is not the program's: a trace taken without
    // capture-app's per-process filter has it too. Skipped as another event.
    let t = &mut f.tokens;
    while let (Some(name), Some(v)) = (t.next(), t.next()) {
        if (name == b"for_kupdate" || name == b"range_cyclic") && v != b"0" {
            return Ok(Event::Other);
        }
    }
    Ok(Event::Sync {
        dev,
        ino,
        start,
        end,
        wait,
    })
}

/// Parses the payload of event `name`.
fn parse_event(name: &[u8], payload: &[u8]) -> Result<Event, &'static str> {
    if WRITE_EVENTS.contains(&name) {
        return parse_write(payload);
    }
    if name == WRITEPAGES {
        return parse_writepages(payload);
    }
    let expected = match name {
        b"mm_filemap_get_pages" | b"mm_filemap_map_pages" => EXPECTED_RANGE,
        b"mm_filemap_fault" => EXPECTED_FAULT,
        b"mm_filemap_add_to_page_cache" => EXPECTED_ADD,
        _ => return Ok(Event::Other),
    };
    let (mut dev, mut ino, mut ofs, mut end, mut max_ofs, mut order) =
        (None, None, None, None, None, None);
    let mut tokens = payload
        .split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty());
    while let Some(t) = tokens.next() {
        let (k, v) = match t.iter().position(|&b| b == b'=') {
            Some(eq) => (&t[..eq], &t[eq + 1..]),
            // `dev 8:1 ino 1a2b` (add_to_page_cache): the value is the next token.
            None if t == b"dev" || t == b"ino" => (t, tokens.next().ok_or(expected)?),
            None => return Err(expected),
        };
        match k {
            b"dev" => dev = Some(parse_dev(v).ok_or(expected)?),
            b"ino" => ino = Some(parse_ino(v).ok_or(expected)?),
            b"ofs" => match v.iter().position(|&b| b == b'-') {
                Some(dash) if dash > 0 => {
                    ofs = Some(parse_u64(&v[..dash]).ok_or(expected)?);
                    end = Some(parse_u64(&v[dash + 1..]).ok_or(expected)?);
                }
                _ => ofs = Some(parse_u64(v).ok_or(expected)?),
            },
            b"max_ofs" => max_ofs = Some(parse_u64(v).ok_or(expected)?),
            b"order" => order = Some(parse_u64(v).ok_or(expected)?),
            b"pfn" | b"page" => {}
            _ => return Err(expected),
        }
    }
    let (Some(dev), Some(ino), Some(ofs)) = (dev, ino, ofs) else {
        return Err(expected);
    };
    match expected {
        EXPECTED_RANGE => {
            let last = match (end, max_ofs) {
                (Some(e), None) | (None, Some(e)) => e,
                _ => return Err(expected),
            };
            if order.is_some() {
                return Err(expected);
            }
            Ok(Event::Range {
                dev,
                ino,
                first: ofs,
                last,
                fault: name == b"mm_filemap_map_pages",
            })
        }
        EXPECTED_FAULT => {
            if end.is_some() || max_ofs.is_some() || order.is_some() {
                return Err(expected);
            }
            Ok(Event::Range {
                dev,
                ino,
                first: ofs,
                last: ofs,
                fault: true,
            })
        }
        _ => {
            if end.is_some() || max_ofs.is_some() {
                return Err(expected);
            }
            Ok(Event::Added {
                dev,
                ino,
                ofs,
                order: order.unwrap_or(0),
            })
        }
    }
}

/// Appends references to `out` until it holds `max` records or the stream ends.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fill(
    input: &mut Input,
    name: &str,
    stats: &mut ReadStats,
    run: &mut Run,
    files: &mut Files,
    options: &crate::ReadOptions,
    out: &mut Vec<Record>,
    max: usize,
) -> Result<(), TraceError> {
    let max_files = options.max_files.min(MAX_FILES);
    let read_calls = options.read_calls;
    fill_lines(
        input,
        stats,
        run,
        out,
        max,
        |line, line_no, stats, run, out| {
            let Some((event, payload)) = find_event(line, options.syncs) else {
                stats.skipped_events += 1;
                return Ok(());
            };
            let at = Position::Line(line_no);
            let too_large = |what, value, limit| TraceError::TooLarge {
                file: name.to_string(),
                at,
                what,
                value,
                limit,
            };
            let parsed = parse_event(event, payload).map_err(|expected| TraceError::Parse {
                file: name.to_string(),
                line: line_no,
                expected,
                found: quote(line),
            })?;
            let (mut write, mut fault, mut sync) = (false, false, SyncSpan::NONE);
            let (dev, ino, first_page, pages) = match parsed {
                Event::Other => {
                    stats.skipped_events += 1;
                    return Ok(());
                }
                Event::Write { len: 0, .. } => {
                    stats.skipped_zero_length += 1;
                    return Ok(());
                }
                Event::Write { dev, ino, pos, len } => {
                    if len > MAX_REQUEST_BYTES {
                        return Err(too_large("write length in bytes", len, MAX_REQUEST_BYTES));
                    }
                    let Some(last) = pos.checked_add(len - 1) else {
                        return Err(too_large("write end in bytes", pos, u64::MAX - len + 1));
                    };
                    write = true;
                    let p = pos >> PAGE_SHIFT;
                    (dev, ino, p, (last >> PAGE_SHIFT) - p + 1)
                }
                Event::Range {
                    dev,
                    ino,
                    first,
                    last,
                    fault: f,
                } => {
                    fault = f;
                    if last < first {
                        return Err(TraceError::Invalid {
                            file: name.to_string(),
                            at,
                            expected: "a range whose end is not before its start".to_string(),
                            found: format!("{first}-{last}"),
                        });
                    }
                    if last - first >= MAX_REQUEST_BYTES {
                        return Err(too_large(
                            "range length in bytes",
                            last - first + 1,
                            MAX_REQUEST_BYTES,
                        ));
                    }
                    if read_calls && !fault {
                        // A later `filemap_get_pages` call of the same read: its pages
                        // were replayed with the first call's range.
                        if let Some((d, i, f, l)) = files.last_read {
                            if (d, i) == (dev, ino) && last == l && first > f && first <= l {
                                stats.skipped_events += 1;
                                return Ok(());
                            }
                        }
                        files.last_read = Some((dev, ino, first, last));
                    }
                    let p = first >> PAGE_SHIFT;
                    (dev, ino, p, (last >> PAGE_SHIFT) - p + 1)
                }
                Event::Sync {
                    dev,
                    ino,
                    start,
                    end,
                    wait,
                } => {
                    // fsync's range is the whole file (`range_end` LLONG_MAX): a span
                    // past SyncSpan::MAX_PAGES is "to the end of the file".
                    let p = start >> PAGE_SHIFT;
                    sync = SyncSpan::new((end >> PAGE_SHIFT) - p + 1, wait);
                    (dev, ino, p, 1)
                }
                Event::Added {
                    dev,
                    ino,
                    ofs,
                    order,
                } => {
                    const MAX_ORDER: u64 =
                        (MAX_REQUEST_BYTES >> PAGE_SHIFT).trailing_zeros() as u64;
                    if order > MAX_ORDER {
                        return Err(too_large("folio order", order, MAX_ORDER));
                    }
                    (dev, ino, ofs >> PAGE_SHIFT, 1u64 << order)
                }
            };
            let last_page = first_page + (pages - 1);
            if last_page >> PAGE_BITS != 0 {
                return Err(too_large("page index", last_page, (1u64 << PAGE_BITS) - 1));
            }
            let next = files.map.len() as u32;
            let file = match files.map.get(&(dev, ino)) {
                Some(&f) => f,
                None => {
                    if next >= max_files {
                        return Err(too_large(
                            "number of distinct (dev, ino) files",
                            u64::from(next) + 1,
                            u64::from(max_files),
                        ));
                    }
                    files.map.insert((dev, ino), next);
                    next
                }
            };
            if sync.is_sync() {
                stats.syncs += 1;
                out.push(Record {
                    key: key(file, first_page),
                    write: false,
                    cont: false,
                    fault: false,
                    sync,
                });
            } else if fault {
                run.start_fault(key(file, first_page), pages);
            } else {
                run.start(key(file, first_page), pages, write);
            }
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_events() {
        let perf = b"cat    1234 [002]  5678.901234: filemap:mm_filemap_get_pages: dev=8:1 ino=c0ffee ofs=0-16383";
        let (name, payload) = find_event(perf, false).unwrap();
        assert_eq!(name, b"mm_filemap_get_pages");
        assert_eq!(payload, b"dev=8:1 ino=c0ffee ofs=0-16383");
        let ftrace =
            b"cat-1234    [002] .....  5678.901300: mm_filemap_fault: dev=8:1 ino=c0ffee ofs=40960";
        assert_eq!(find_event(ftrace, false).unwrap().0, b"mm_filemap_fault");
        assert!(find_event(
            b"cat 1 [0] 1.0: sched:sched_switch: prev=mm_filemap_x",
            false
        )
        .is_none());
        assert!(find_event(b"xmm_filemap_fault: dev=1:2", false).is_none());
    }

    #[test]
    fn parses_payloads() {
        assert_eq!(
            parse_event(b"mm_filemap_get_pages", b"dev=8:1 ino=c0ffee ofs=0-16383"),
            Ok(Event::Range {
                dev: 8 << 32 | 1,
                ino: 0xc0ffee,
                first: 0,
                last: 16383,
                fault: false,
            })
        );
        assert_eq!(
            parse_event(
                b"mm_filemap_map_pages",
                b"dev=259:3 ino=1a ofs=4096 max_ofs=8192"
            ),
            Ok(Event::Range {
                dev: 259 << 32 | 3,
                ino: 0x1a,
                first: 4096,
                last: 8192,
                fault: true,
            })
        );
        assert_eq!(
            parse_event(b"mm_filemap_fault", b"dev=8:1 ino=c0ffee ofs=40960"),
            Ok(Event::Range {
                dev: 8 << 32 | 1,
                ino: 0xc0ffee,
                first: 40960,
                last: 40960,
                fault: true,
            })
        );
        assert_eq!(
            parse_event(
                b"mm_filemap_add_to_page_cache",
                b"dev 8:1 ino 12 pfn=0x1234 ofs=8192 order=2"
            ),
            Ok(Event::Added {
                dev: 8 << 32 | 1,
                ino: 0x12,
                ofs: 8192,
                order: 2
            })
        );
        assert_eq!(
            parse_event(b"mm_filemap_delete_from_page_cache", b"anything"),
            Ok(Event::Other)
        );
        for (name, bad) in [
            (&b"mm_filemap_get_pages"[..], &b"dev=8:1 ino=c0ffee"[..]),
            (b"mm_filemap_get_pages", b"dev=8:1 ino=c0ffee ofs=0"),
            (b"mm_filemap_get_pages", b"dev=8 ino=c0ffee ofs=0-1"),
            (b"mm_filemap_get_pages", b"dev=8:1 ino=xyz ofs=0-1"),
            (b"mm_filemap_get_pages", b"dev=8:1 ino=1 ofs=0-1 bogus=2"),
            (b"mm_filemap_fault", b"dev=8:1 ino=1 ofs=0-1"),
            (b"mm_filemap_add_to_page_cache", b"dev 8:1 ino"),
        ] {
            assert!(
                parse_event(name, bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn reads_ext4_writes() {
        let line = b"postgres-812 [001] ..... 620.1: ext4_da_write_begin: dev 254,0 ino 1234 pos 8192 len 8192";
        let (name, payload) = find_event(line, false).unwrap();
        assert_eq!(name, b"ext4_da_write_begin");
        assert_eq!(
            parse_event(name, payload),
            Ok(Event::Write {
                dev: 254 << 32,
                ino: 1234,
                pos: 8192,
                len: 8192
            })
        );
        let (name, payload) = find_event(
            b"ext4_write_begin: dev 8,1 ino 7 pos 100 len 1 flags 0",
            false,
        )
        .unwrap();
        assert_eq!(name, b"ext4_write_begin");
        assert!(matches!(
            parse_event(name, payload),
            Ok(Event::Write {
                ino: 7,
                pos: 100,
                len: 1,
                ..
            })
        ));
        // Other ext4 events are not found; a bad write payload is an error.
        assert!(find_event(
            b"ext4_da_write_end: dev 8,1 ino 7 pos 0 len 1 copied 1",
            false
        )
        .is_none());
        assert!(find_event(b"ext4_da_write_beginx: dev 8,1", false).is_none());
        for bad in [
            &b"dev 8:1 ino 7 pos 0 len 1"[..],
            b"dev 8,1 ino 7f pos 0 len 1",
            b"dev 8,1 ino 7 pos 0",
            b"ino 7 dev 8,1 pos 0 len 1",
        ] {
            assert_eq!(
                parse_write(bad),
                Err(EXPECTED_WRITE),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    /// A write event and the read of the same file: one file, the written pages as
    /// writes (the ino is decimal in ext4's events, hex in filemap's).
    #[test]
    fn writes_and_reads_share_their_file() {
        let text = "mm_filemap_get_pages: dev=254:0 ino=4d2 ofs=0-8191\n\
                    ext4_da_write_begin: dev 254,0 ino 1234 pos 4096 len 8192\n\
                    ext4_da_write_begin: dev 254,0 ino 1234 pos 0 len 0\n\
                    ext4_da_write_begin: dev 254,0 ino 99 pos 0 len 10\n";
        let mut r = crate::TraceReader::from_reader(
            "t",
            Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
            crate::Format::Filemap,
        )
        .unwrap();
        let (mut batch, mut got) = (Vec::new(), Vec::new());
        while r.read_batch(&mut batch, 100).unwrap() > 0 {
            got.extend(batch.iter().map(|x| (x.key, x.write)));
        }
        assert_eq!(
            got,
            vec![
                (0, false),
                (1, false),
                (1, true),
                (2, true),
                (key(1, 0), true)
            ]
        );
        assert_eq!(r.stats().skipped_zero_length, 1);
    }

    /// `read_calls`: the later calls of one read (same file, same last byte, a first
    /// byte inside the first call's range) are skipped; a read of the same range again,
    /// a read of another file in between, a fault and a read that ends elsewhere are not.
    #[test]
    fn read_calls_replay_a_read_once() {
        let text = "mm_filemap_get_pages: dev=254:0 ino=a ofs=0-98303\n\
                    mm_filemap_get_pages: dev=254:0 ino=a ofs=98304-116834\n\
                    mm_filemap_get_pages: dev=254:0 ino=a ofs=102400-116834\n\
                    mm_filemap_get_pages: dev=254:0 ino=a ofs=110592-116834\n\
                    mm_filemap_get_pages: dev=254:0 ino=a ofs=98304-116834\n\
                    mm_filemap_get_pages: dev=254:0 ino=b ofs=0-4095\n\
                    mm_filemap_get_pages: dev=254:0 ino=a ofs=102400-116834\n\
                    mm_filemap_fault: dev=254:0 ino=a ofs=106496\n\
                    mm_filemap_get_pages: dev=254:0 ino=a ofs=106496-110591\n";
        let pages = |read_calls: bool| {
            let options = crate::ReadOptions {
                read_calls,
                ..Default::default()
            };
            let mut r = crate::TraceReader::from_reader_with(
                "t",
                Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
                crate::Format::Filemap,
                options,
            )
            .unwrap();
            let (mut batch, mut got) = (Vec::new(), Vec::new());
            while r.read_batch(&mut batch, 100).unwrap() > 0 {
                got.extend(batch.iter().map(|x| x.key));
            }
            (got, r.stats().skipped_events)
        };
        let (all, skipped) = pages(false);
        assert_eq!(
            (all.len(), skipped),
            (24 + 5 + 4 + 2 + 5 + 1 + 4 + 1 + 1, 0)
        );
        let (once, skipped) = pages(true);
        let mut want: Vec<u64> = (0..29).collect(); // the first read: pages 0-23, 24-28
        want.extend(24..29); // the same range read again
        want.push(key(1, 0)); // file b
        want.extend(25..29); // after b: not known to continue a's read
        want.push(26); // the fault
        want.push(26); // ends at another byte: a read of its own
        assert_eq!((once, skipped), (want, 2));
    }

    /// `ext4_writepages` lines as printed on the 6.18 host: a `sync_file_range` of
    /// 16 KiB at 8 KiB (`WB_SYNC_NONE`) and an fsync (`WB_SYNC_ALL`, the whole file).
    #[test]
    fn writepages_become_syncs_when_asked() {
        let text = "mm_filemap_get_pages: dev=254:0 ino=63 ofs=0-4095\n\
                    ext4_writepages: dev 254,0 ino 99 nr_to_write 4 pages_skipped 0 \
                    range_start 8192 range_end 24575 sync_mode 0 for_kupdate 0 \
                    range_cyclic 0 writeback_index 0\n\
                    ext4_writepages: dev 254,0 ino 99 nr_to_write 9223372036854775807 \
                    pages_skipped 0 range_start 0 range_end 9223372036854775807 \
                    sync_mode 1 for_kupdate 0 range_cyclic 0 writeback_index 0\n\
                    ext4_writepages: dev 254,0 ino 99 nr_to_write 1024 pages_skipped 0 \
                    range_start 0 range_end 9223372036854775807 sync_mode 0 for_kupdate 0 \
                    range_cyclic 1 writeback_index 0\n";
        let read = |syncs: bool| {
            let mut r = crate::TraceReader::from_reader_with(
                "t",
                Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
                crate::Format::Filemap,
                crate::ReadOptions {
                    syncs,
                    ..Default::default()
                },
            )
            .unwrap();
            let (mut batch, mut got) = (Vec::new(), Vec::new());
            while r.read_batch(&mut batch, 100).unwrap() > 0 {
                got.extend(batch.iter().map(|x| (x.key, x.sync)));
            }
            (got, r.stats().clone())
        };
        let (got, stats) = read(true);
        assert_eq!(
            got,
            vec![
                (0, SyncSpan::NONE),
                // ino 99 is the filemap events' ino=63 (hex): the same file.
                (key(0, 2), SyncSpan::new(4, false)),
                (key(0, 0), SyncSpan::new(0, true)),
            ]
        );
        assert_eq!(
            (stats.references, stats.syncs),
            (3, 2),
            "syncs are references too"
        );
        // The flusher's background pass (`range_cyclic 1`) is not the program's.
        assert_eq!(stats.skipped_events, 1);
        assert_eq!(got[2].1.pages(), 0, "to the end of the file");
        assert!(got[2].1.wait() && !got[1].1.wait());
        // Without the option they are other events, as before.
        let (got, stats) = read(false);
        assert_eq!(got, vec![(0, SyncSpan::NONE)]);
        assert_eq!((stats.syncs, stats.skipped_events), (0, 3));
        // A malformed one names what is expected.
        assert_eq!(
            parse_event(WRITEPAGES, b"dev 8,1 ino 7 nr_to_write 1 pages_skipped 0 range_start 9 range_end 2 sync_mode 0"),
            Err(EXPECTED_WRITEPAGES)
        );
        assert_eq!(
            parse_event(WRITEPAGES, b"dev 8,1 ino 7 nr_to_write 1 pages_skipped 0 range_start 0 range_end 2 sync_mode 2"),
            Err(EXPECTED_WRITEPAGES)
        );
    }

    #[test]
    fn keys() {
        assert_eq!(key(0, 5), 5);
        assert_eq!(key(3, 5), (3 << 40) + 5);
    }
}
