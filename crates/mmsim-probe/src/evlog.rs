//! The event log (`.mmev`): the exact interleaved event stream of a scenario, one fixed-size
//! record per [`Event`], in the order the simulator executes them.
//!
//! # Layout (version 1)
//!
//! All integers little-endian.
//!
//! **Header**, 16 bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `89 4d 4d 45 56 54 0d 0a` (`\x89MMEVT\r\n`) |
//! | 8 | 2 | `version`, 1 |
//! | 10 | 2 | `record_size`, 16 |
//! | 12 | 4 | reserved, 0 |
//!
//! **Records**, 16 bytes each:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | `kind`: 0 `Access`, 1 `FileRead`, 2 `FileWrite`, 3 `Think`, 4 `Discard`, 5 `Collapse` (MADV_COLLAPSE; `id` the VMA, `value` the first page and, in its high half, the page count, as `Discard`), 6 `ThpAdvice` (`id` the VMA, `value` 1 MADV_HUGEPAGE or 2 MADV_NOHUGEPAGE), 7 `Remap`, 8 `Fork`, 9 `FileSync`, 10 `FdRead` (`id` the open file description, otherwise as `FileRead`), 11 `FdClose` (`id` the descriptor; `pages` and `value` 0) |
//! | 1 | 1 | `flags`: bit 0 = write (`Access` only); bit 1 = idle (a `Think` issued while every workload of the phase waited for its start, see `mmsim_workloads::Batch::Idle`); other bits 0 |
//! | 2 | 2 | `pages` (`FileRead`/`FileWrite`: ≥ 1; otherwise 0) |
//! | 4 | 4 | `id`: the VMA id (`Access`), the file id (`FileRead`/`FileWrite`), 0 (`Think`) |
//! | 8 | 8 | `value`: the page index (`Access`, `FileRead`, `FileWrite`: < 2^32), or nanoseconds (`Think`) |
//!
//! **Footer**, 16 bytes: magic `89 4d 4d 45 56 45 4e 44` (`\x89MMEVEND`; its first byte is
//! no valid `kind`, which tells it from a record), then the number of records (u64). Then
//! the end of the file.
//!
//! The ids are those the simulator hands out at setup (file and VMA ids in workload
//! order, from 0); the dump's JSON sidecar says which workload, file and region each id
//! is. Batch boundaries are not recorded: the simulator executes a batch event by event,
//! so they change nothing.
//!
//! Reading checks everything: the magic number, version and record size; every record's
//! kind, flags, pages and value range; the footer's count; nothing after the footer; a
//! file that ends without a footer is truncated. 16 bytes per event: 2 M events are 32 MB.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use mmsim_core::{Event, VmaThpAdvice};

use crate::error::ProbeError;

/// The magic number at the start of an event log.
pub const MAGIC: [u8; 8] = *b"\x89MMEVT\r\n";
/// The magic number of the footer.
pub const FOOTER_MAGIC: [u8; 8] = *b"\x89MMEVEND";
/// The format version written and read.
pub const VERSION: u16 = 1;
/// Bytes per record (and of the header and the footer).
pub const RECORD_SIZE: usize = 16;

/// Record flag: the access is a store.
pub const FLAG_WRITE: u8 = 1;
/// Record flag: a think issued while every workload of the phase waited (an idle batch).
pub const FLAG_IDLE: u8 = 2;
/// Record flag: a file sync that waits (`fdatasync`, or `sync_file_range` with its wait flags).
pub const FLAG_WAIT: u8 = 4;

/// One record: an event and whether it was an idle wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// The event.
    pub event: Event,
    /// Whether it came from an idle batch (only `Think` events can).
    pub idle: bool,
}

/// Encodes one record.
pub fn encode(event: &Event, idle: bool) -> [u8; RECORD_SIZE] {
    let (kind, flags, pages, id, value): (u8, u8, u16, u32, u64) = match *event {
        Event::Access { vma, index, write } => (0, write as u8 * FLAG_WRITE, 0, vma, index as u64),
        Event::FileRead { file, index, pages } => (1, 0, pages, file, index as u64),
        Event::FileWrite { file, index, pages } => (2, 0, pages, file, index as u64),
        Event::FdRead { fd, index, pages } => (10, 0, pages, fd, index as u64),
        Event::FdClose { fd } => (11, 0, 0, fd, 0),
        Event::Think { ns } => (3, idle as u8 * FLAG_IDLE, 0, 0, ns),
        // The page count rides in the value's high half.
        Event::Discard { vma, index, pages } => (4, 0, 0, vma, index as u64 | (pages as u64) << 32),
        Event::Collapse { vma, index, pages } => {
            (5, 0, 0, vma, index as u64 | (pages as u64) << 32)
        }
        Event::ThpAdvice { vma, advice } => (
            6,
            0,
            0,
            vma,
            match advice {
                VmaThpAdvice::None => 0,
                VmaThpAdvice::Hugepage => 1,
                VmaThpAdvice::Nohugepage => 2,
            },
        ),
        Event::Remap { vma } => (7, 0, 0, vma, 0),
        Event::Fork { vma, pages } => (8, 0, 0, vma, u64::from(pages)),
        Event::FileSync {
            file,
            index,
            pages,
            wait,
        } => (9, wait as u8 * FLAG_WAIT, pages, file, u64::from(index)),
    };
    let mut r = [0u8; RECORD_SIZE];
    r[0] = kind;
    r[1] = flags;
    r[2..4].copy_from_slice(&pages.to_le_bytes());
    r[4..8].copy_from_slice(&id.to_le_bytes());
    r[8..16].copy_from_slice(&value.to_le_bytes());
    r
}

/// Decodes one record; the error says what is wrong with it.
pub fn decode(r: &[u8; RECORD_SIZE]) -> Result<LogRecord, String> {
    let (kind, flags) = (r[0], r[1]);
    let pages = u16::from_le_bytes([r[2], r[3]]);
    let id = u32::from_le_bytes(r[4..8].try_into().expect("4 bytes"));
    let value = u64::from_le_bytes(r[8..16].try_into().expect("8 bytes"));
    let index = || u32::try_from(value).map_err(|_| format!("page index {value} is 2^32 or more"));
    if kind > 11 {
        return Err(format!("unknown kind {kind}"));
    }
    let allowed = match kind {
        0 => FLAG_WRITE,
        3 => FLAG_IDLE,
        9 => FLAG_WAIT,
        _ => 0,
    };
    if flags & !allowed != 0 {
        return Err(format!("flags {flags:#04x} not allowed for kind {kind}"));
    }
    match kind {
        1 | 2 | 10 if pages == 0 => return Err("pages is 0".into()),
        0 | 3 | 4 | 5 | 6 | 7 | 11 if pages != 0 => {
            return Err(format!("pages {pages} on kind {kind}"))
        }
        6 if !(1..=2).contains(&value) => return Err(format!("advice {value} on kind 6")),
        4 if value >> 32 == 0 => return Err("discard of 0 pages".into()),
        5 if value >> 32 == 0 => return Err("collapse of 0 pages".into()),
        3 if id != 0 => return Err(format!("id {id} on a think")),
        7 if value != 0 => return Err(format!("value {value} on a remap")),
        11 if value != 0 => return Err(format!("value {value} on a close")),
        _ => {}
    }
    let event = match kind {
        0 => Event::Access {
            vma: id,
            index: index()?,
            write: flags & FLAG_WRITE != 0,
        },
        1 => Event::FileRead {
            file: id,
            index: index()?,
            pages,
        },
        2 => Event::FileWrite {
            file: id,
            index: index()?,
            pages,
        },
        3 => Event::Think { ns: value },
        4 => Event::Discard {
            vma: id,
            index: value as u32,
            pages: (value >> 32) as u32,
        },
        5 => Event::Collapse {
            vma: id,
            index: value as u32,
            pages: (value >> 32) as u32,
        },
        6 => Event::ThpAdvice {
            vma: id,
            advice: if value == 1 {
                VmaThpAdvice::Hugepage
            } else {
                VmaThpAdvice::Nohugepage
            },
        },
        7 => Event::Remap { vma: id },
        8 => Event::Fork {
            vma: id,
            pages: value as u32,
        },
        9 => Event::FileSync {
            file: id,
            index: index()?,
            pages,
            wait: flags & FLAG_WAIT != 0,
        },
        10 => Event::FdRead {
            fd: id,
            index: index()?,
            pages,
        },
        11 => Event::FdClose { fd: id },
        k => return Err(format!("unknown kind {k}")),
    };
    Ok(LogRecord {
        event,
        idle: flags & FLAG_IDLE != 0,
    })
}

/// Writes an event log.
pub struct LogWriter<W: Write> {
    path: PathBuf,
    out: W,
    records: u64,
}

impl LogWriter<BufWriter<File>> {
    /// Creates the file `path` (truncating it) and writes the header.
    pub fn create(path: &Path) -> Result<LogWriter<BufWriter<File>>, ProbeError> {
        let f = File::create(path).map_err(|e| ProbeError::dump_io(path, e))?;
        LogWriter::new(path, BufWriter::with_capacity(1 << 20, f))
    }
}

impl<W: Write> LogWriter<W> {
    /// A writer to `out` (`path` names it in errors); writes the header.
    pub fn new(path: &Path, out: W) -> Result<LogWriter<W>, ProbeError> {
        let mut w = LogWriter {
            path: path.to_path_buf(),
            out,
            records: 0,
        };
        let mut h = [0u8; RECORD_SIZE];
        h[..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&VERSION.to_le_bytes());
        h[10..12].copy_from_slice(&(RECORD_SIZE as u16).to_le_bytes());
        w.put(&h)?;
        Ok(w)
    }

    fn put(&mut self, b: &[u8]) -> Result<(), ProbeError> {
        self.out
            .write_all(b)
            .map_err(|e| ProbeError::dump_io(&self.path, e))
    }

    /// Appends the events of one batch (`idle`: an idle batch).
    pub fn write_batch(&mut self, events: &[Event], idle: bool) -> Result<(), ProbeError> {
        for e in events {
            let r = encode(e, idle);
            self.put(&r)?;
        }
        self.records += events.len() as u64;
        Ok(())
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Writes the footer and flushes; returns the output and the number of records.
    pub fn finish(mut self) -> Result<(W, u64), ProbeError> {
        let mut f = [0u8; RECORD_SIZE];
        f[..8].copy_from_slice(&FOOTER_MAGIC);
        f[8..].copy_from_slice(&self.records.to_le_bytes());
        self.put(&f)?;
        self.out
            .flush()
            .map_err(|e| ProbeError::dump_io(&self.path, e))?;
        Ok((self.out, self.records))
    }
}

/// Reads an event log record by record (an iterator of results; after an error it ends).
pub struct LogReader<R: Read> {
    path: PathBuf,
    input: R,
    records: u64,
    done: bool,
}

impl LogReader<BufReader<File>> {
    /// Opens `path` and checks its header.
    pub fn open(path: &Path) -> Result<LogReader<BufReader<File>>, ProbeError> {
        let f = File::open(path).map_err(|e| ProbeError::dump_io(path, e))?;
        LogReader::new(path, BufReader::with_capacity(1 << 20, f))
    }
}

impl<R: Read> LogReader<R> {
    /// A reader of `input` (`path` names it in errors); checks the header.
    pub fn new(path: &Path, mut input: R) -> Result<LogReader<R>, ProbeError> {
        let err = |m: String| ProbeError::Dump {
            path: path.to_path_buf(),
            message: m,
        };
        let mut h = [0u8; RECORD_SIZE];
        read_full(&mut input, &mut h)
            .map_err(|e| err(format!("header: {e}")))?
            .then_some(())
            .ok_or_else(|| err("header: the file is shorter than a header".into()))?;
        if h[..8] != MAGIC {
            return Err(err(
                "not an mmsim-probe event log (wrong magic number)".into()
            ));
        }
        let version = u16::from_le_bytes([h[8], h[9]]);
        if version != VERSION {
            return Err(err(format!(
                "event log version {version}; this probe reads version {VERSION}"
            )));
        }
        let size = u16::from_le_bytes([h[10], h[11]]);
        if size as usize != RECORD_SIZE || h[12..] != [0; 4] {
            return Err(err(format!(
                "header: record size {size} (expected {RECORD_SIZE}) or reserved bytes not 0"
            )));
        }
        Ok(LogReader {
            path: path.to_path_buf(),
            input,
            records: 0,
            done: false,
        })
    }

    /// Records read so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The next record, `Ok(None)` at the footer (checked, and the end of the file
    /// after it).
    pub fn next_record(&mut self) -> Result<Option<LogRecord>, ProbeError> {
        if self.done {
            return Ok(None);
        }
        let n = self.records;
        let err = |m: String| ProbeError::Dump {
            path: self.path.clone(),
            message: m,
        };
        let mut r = [0u8; RECORD_SIZE];
        match read_full(&mut self.input, &mut r) {
            Ok(true) => {}
            Ok(false) => {
                self.done = true;
                return Err(err(format!(
                    "truncated: ends after {n} records without a footer"
                )));
            }
            Err(e) => {
                self.done = true;
                return Err(err(format!("record {n}: {e}")));
            }
        }
        if r[..8] == FOOTER_MAGIC {
            self.done = true;
            let count = u64::from_le_bytes(r[8..].try_into().expect("8 bytes"));
            if count != n {
                return Err(err(format!(
                    "the footer counts {count} records, the file has {n}"
                )));
            }
            let mut extra = [0u8; 1];
            match self.input.read(&mut extra) {
                Ok(0) => return Ok(None),
                Ok(_) => return Err(err("bytes after the footer".into())),
                Err(e) => return Err(err(format!("after the footer: {e}"))),
            }
        }
        match decode(&r) {
            Ok(rec) => {
                self.records += 1;
                Ok(Some(rec))
            }
            Err(m) => {
                self.done = true;
                Err(err(format!("record {n}: {m}")))
            }
        }
    }
}

impl<R: Read> Iterator for LogReader<R> {
    type Item = Result<LogRecord, ProbeError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

/// Fills `buf`; `Ok(false)` if the input ends first (having read nothing or part of it:
/// a partial record is reported as the end too, and the caller calls it truncated).
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => return Ok(false),
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Reads a whole event log into memory (for tests and small dumps).
pub fn read_all(path: &Path) -> Result<Vec<LogRecord>, ProbeError> {
    LogReader::open(path)?.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Event> {
        vec![
            Event::Access {
                vma: 3,
                index: 7,
                write: true,
            },
            Event::Access {
                vma: 0,
                index: u32::MAX,
                write: false,
            },
            Event::FileRead {
                file: 2,
                index: 9,
                pages: 1,
            },
            Event::FileWrite {
                file: 1,
                index: 0,
                pages: 65535,
            },
            Event::Think { ns: u64::MAX },
            Event::Discard {
                vma: 4,
                index: u32::MAX - 1,
                pages: u32::MAX,
            },
            Event::FileSync {
                file: 1,
                index: 3,
                pages: 8,
                wait: false,
            },
            Event::FileSync {
                file: 2,
                index: 0,
                pages: 0,
                wait: true,
            },
        ]
    }

    #[test]
    fn a_collapse_round_trips() {
        let path = Path::new("c.mmev");
        let mut w = LogWriter::new(path, Vec::new()).unwrap();
        let ev = Event::Collapse {
            vma: 5,
            index: 512,
            pages: u32::MAX,
        };
        w.write_batch(&[ev], false).unwrap();
        let (bytes, n) = w.finish().unwrap();
        assert_eq!(n, 1);
        let got: Vec<LogRecord> = LogReader::new(path, &bytes[..])
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].event, ev);
    }

    #[test]
    fn a_thp_advice_round_trips_and_a_bad_one_is_refused() {
        for advice in [VmaThpAdvice::Hugepage, VmaThpAdvice::Nohugepage] {
            let ev = Event::ThpAdvice { vma: 3, advice };
            let got = decode(&encode(&ev, false)).unwrap();
            assert_eq!(got.event, ev);
        }
        let mut r = encode(
            &Event::ThpAdvice {
                vma: 3,
                advice: VmaThpAdvice::Hugepage,
            },
            false,
        );
        r[8] = 3;
        assert_eq!(decode(&r).unwrap_err(), "advice 3 on kind 6");
    }

    #[test]
    fn round_trip() {
        let path = Path::new("mem.mmev");
        let mut w = LogWriter::new(path, Vec::new()).unwrap();
        w.write_batch(&sample(), false).unwrap();
        w.write_batch(&[Event::Think { ns: 5 }], true).unwrap();
        let (bytes, n) = w.finish().unwrap();
        assert_eq!(n, 9);
        assert_eq!(bytes.len(), RECORD_SIZE * 11);
        let got: Vec<LogRecord> = LogReader::new(path, &bytes[..])
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let events: Vec<Event> = got.iter().map(|r| r.event).collect();
        let mut want = sample();
        want.push(Event::Think { ns: 5 });
        assert_eq!(events, want);
        assert_eq!(got.iter().filter(|r| r.idle).count(), 1);
        assert!(got[8].idle);
    }

    #[test]
    fn damage_is_reported() {
        let path = Path::new("x.mmev");
        let mut w = LogWriter::new(path, Vec::new()).unwrap();
        w.write_batch(&sample(), false).unwrap();
        let (bytes, _) = w.finish().unwrap();
        let read =
            |b: &[u8]| -> Result<Vec<LogRecord>, ProbeError> { LogReader::new(path, b)?.collect() };
        let msg = |b: &[u8]| read(b).unwrap_err().to_string();
        assert!(msg(&bytes[..bytes.len() - 16]).contains("truncated"));
        assert!(msg(&bytes[..bytes.len() - 3]).contains("truncated"));
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(msg(&extra).contains("after the footer"));
        let mut bad = bytes.clone();
        bad[16] = 200;
        assert!(
            msg(&bad).contains("record 0: unknown kind 200"),
            "{}",
            msg(&bad)
        );
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(msg(&bad).contains("magic"));
        let mut bad = bytes.clone();
        bad[8] = 2;
        assert!(msg(&bad).contains("version 2"));
        let mut bad = bytes.clone();
        let footer = bad.len() - 8;
        bad[footer] = 9;
        assert!(msg(&bad).contains("footer counts 9"));
        let mut bad = bytes.clone();
        bad[16 + 16 + 1] = FLAG_WRITE | 4;
        assert!(msg(&bad).contains("record 1: flags"));
        assert!(msg(&[]).contains("shorter than a header"));
    }
}
