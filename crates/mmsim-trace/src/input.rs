//! The byte source shared by all formats: decompression plus one reused 256 KiB buffer.
//!
//! Parsers read lines or fixed-size records directly out of the buffer; a line or record
//! that straddles two reads is moved to the front of the buffer before the next read, so
//! nothing is allocated per line and memory use is bounded by the buffer whatever the
//! trace contains.

use std::io::{self, Read};

use crate::compress::{self, Compression, MAGIC_LEN};
use crate::TraceError;

/// Size of the read buffer, which is also the longest text line accepted.
pub(crate) const BUFFER_SIZE: usize = 256 * 1024;

pub(crate) struct Input {
    name: String,
    compression: Compression,
    src: Box<dyn Read + Send>,
    buf: Box<[u8]>,
    /// Start of unread bytes.
    pos: usize,
    /// End of valid bytes.
    end: usize,
    /// `src` returned 0.
    eof: bool,
    /// No line has been read yet: the first one may start with a UTF-8 byte-order mark.
    at_start: bool,
}

/// The UTF-8 byte-order mark some editors write at the start of a text file.
pub(crate) const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

impl Input {
    /// Sniffs the compression from the first bytes and sets up the decoder.
    pub(crate) fn new(name: &str, mut src: Box<dyn Read + Send>) -> Result<Input, TraceError> {
        let mut buf = vec![0u8; BUFFER_SIZE].into_boxed_slice();
        let mut end = 0;
        let mut eof = false;
        while end < MAGIC_LEN {
            match src.read(&mut buf[end..MAGIC_LEN]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(TraceError::Io {
                        file: name.to_string(),
                        source,
                    })
                }
            }
        }
        let compression = Compression::detect(&buf[..end]);
        let mut input = Input {
            name: name.to_string(),
            compression,
            src,
            buf,
            pos: 0,
            end,
            eof,
            at_start: true,
        };
        if compression != Compression::None {
            let prefix = input.buf[..end].to_vec();
            let raw: Box<dyn Read + Send> = Box::new(io::empty());
            let raw = std::mem::replace(&mut input.src, raw);
            input.src = compress::decoder(compression, prefix, raw).map_err(|e| input.error(e))?;
            input.end = 0;
            input.eof = false;
        }
        Ok(input)
    }

    pub(crate) fn compression(&self) -> Compression {
        self.compression
    }

    /// Turns an error of `src` into a [`TraceError`], telling I/O errors of the underlying
    /// reader from decoder errors.
    fn error(&self, e: io::Error) -> TraceError {
        let file = self.name.clone();
        if self.compression == Compression::None {
            return TraceError::Io { file, source: e };
        }
        match compress::untag(e) {
            Ok(source) => TraceError::Io { file, source },
            Err(e) => TraceError::Decompress {
                file,
                codec: self.compression.name(),
                message: e.to_string(),
            },
        }
    }

    /// Moves the unread bytes to the front of the buffer and reads once from the source.
    /// Returns the number of bytes added (0 at the end of the stream). The buffer must not
    /// be full of unread bytes.
    fn read_more(&mut self) -> Result<usize, TraceError> {
        if self.eof {
            return Ok(0);
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        debug_assert!(self.end < self.buf.len());
        loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(0);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // Do not read again after an error.
                    self.eof = true;
                    return Err(self.error(e));
                }
            }
        }
    }

    /// Reads until at least `n` bytes (at most the buffer size) are available or the stream
    /// ends; returns the number of bytes available.
    pub(crate) fn fill_at_least(&mut self, n: usize) -> Result<usize, TraceError> {
        let n = n.min(self.buf.len());
        while self.end - self.pos < n && !self.eof {
            self.read_more()?;
        }
        Ok(self.end - self.pos)
    }

    /// The unread bytes in the buffer.
    pub(crate) fn available(&self) -> &[u8] {
        &self.buf[self.pos..self.end]
    }

    /// Marks `n` available bytes as read.
    pub(crate) fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.end - self.pos);
        self.pos += n;
    }

    /// The next line without its `\n` (a `\r` before it is left to the caller), or `None`
    /// at the end of the stream. The last line need not end with `\n`. `line_no` is only
    /// used in the error for an over-long line.
    /// A UTF-8 byte-order mark before the first line is skipped: it is not content.
    pub(crate) fn next_line(&mut self, line_no: u64) -> Result<Option<&[u8]>, TraceError> {
        if self.at_start {
            self.at_start = false;
            self.fill_at_least(UTF8_BOM.len())?;
            if self.available().starts_with(UTF8_BOM) {
                self.consume(UTF8_BOM.len());
            }
        }
        // Bytes after `pos` known to contain no newline.
        let mut searched = 0;
        loop {
            if let Some(i) = find_newline(&self.buf[self.pos + searched..self.end]) {
                let start = self.pos;
                let len = searched + i;
                self.pos += len + 1;
                return Ok(Some(&self.buf[start..start + len]));
            }
            searched = self.end - self.pos;
            if self.eof {
                if searched == 0 {
                    return Ok(None);
                }
                let start = self.pos;
                self.pos = self.end;
                return Ok(Some(&self.buf[start..self.end]));
            }
            if searched == self.buf.len() {
                return Err(TraceError::LineTooLong {
                    file: self.name.clone(),
                    line: line_no,
                    limit: self.buf.len(),
                });
            }
            self.read_more()?;
        }
    }
}

/// Position of the first `\n` in `s`, eight bytes at a time.
#[inline]
pub(crate) fn find_newline(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut chunks = s.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word) ^ NL;
        // Lowest set bit marks the first zero byte (borrows only propagate upwards).
        let zero = w.wrapping_sub(LO) & !w & HI;
        if zero != 0 {
            return Some(base + (zero.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|p| base + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that returns at most `step` bytes per call, to exercise straddling.
    struct Dribble {
        data: Vec<u8>,
        pos: usize,
        step: usize,
    }

    impl Read for Dribble {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len() - self.pos);
            buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    #[test]
    fn find_newline_matches_naive() {
        let mut data: Vec<u8> = (0..200u32).map(|i| (i * 7 % 251) as u8).collect();
        data.retain(|&b| b != b'\n');
        assert_eq!(find_newline(&data), None);
        for pos in [0, 1, 7, 8, 9, 15, 16, 63, 150, data.len() - 1] {
            let mut d = data.clone();
            d[pos] = b'\n';
            // Bytes with the high bit set or equal to 0x0b next to it must not confuse it.
            if pos + 1 < d.len() {
                d[pos + 1] = 0x0b;
            }
            assert_eq!(find_newline(&d), Some(pos), "pos {pos}");
            assert_eq!(find_newline(&d[..pos]), None);
        }
        assert_eq!(find_newline(b""), None);
        assert_eq!(find_newline(b"\n"), Some(0));
    }

    #[test]
    fn lines_across_reads() {
        let text = b"12\n345\r\n\n6789\nlast";
        for step in [1, 2, 3, 5, 100] {
            let src = Dribble {
                data: text.to_vec(),
                pos: 0,
                step,
            };
            let mut input = Input::new("t", Box::new(src)).unwrap();
            let mut lines = Vec::new();
            while let Some(l) = input.next_line(0).unwrap() {
                lines.push(l.to_vec());
            }
            let want: Vec<&[u8]> = vec![b"12", b"345\r", b"", b"6789", b"last"];
            assert_eq!(lines, want, "step {step}");
        }
    }

    #[test]
    fn over_long_line_is_an_error() {
        let data = vec![b'7'; BUFFER_SIZE + 10];
        let mut input = Input::new("long", Box::new(io::Cursor::new(data))).unwrap();
        let e = input.next_line(1).unwrap_err();
        assert!(matches!(e, TraceError::LineTooLong { line: 1, .. }), "{e}");
    }
}
