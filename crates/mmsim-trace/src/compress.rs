//! Transparent decompression: detection by magic bytes and decoder set-up.
//!
//! A trace may be stored raw or compressed with gzip, xz or zstd; the compression is
//! recognised from the first bytes of the stream (never from the file name):
//!
//! | magic bytes | compression | decoder |
//! |---|---|---|
//! | `1f 8b` | gzip | [`flate2::bufread::MultiGzDecoder`] (concatenated members are read) |
//! | `fd 37 7a 58 5a 00` | xz | [`xz2::bufread::XzDecoder::new_multi_decoder`] (concatenated streams are read) |
//! | `28 b5 2f fd` | zstd | [`zstd::stream::read::Decoder`] (concatenated frames are read) |
//! | anything else | none | the bytes are the trace |
//!
//! Errors of the underlying reader (the file) are kept apart from the decoder's errors:
//! the first become [`TraceError::Io`](crate::TraceError::Io), the second
//! [`TraceError::Decompress`](crate::TraceError::Decompress) with the codec's name, so a
//! truncated `.zst` file reads as `z.zst: zstd: incomplete frame` rather than as an I/O
//! error. A compressed stream that ends early is always an error, never a silently
//! shorter trace.

use std::fmt;
use std::io::{self, BufReader, Cursor, Read};

/// Compression of a trace, detected from its magic bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Raw (uncompressed) trace.
    None,
    /// gzip (`1f 8b`), possibly several concatenated members.
    Gzip,
    /// xz (`fd 37 7a 58 5a 00`), possibly several concatenated streams.
    Xz,
    /// zstd (`28 b5 2f fd`), possibly several concatenated frames.
    Zstd,
}

/// How many leading bytes [`Compression::detect`] needs to recognise every magic number.
pub const MAGIC_LEN: usize = 6;

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const XZ_MAGIC: &[u8] = &[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00];
const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// Size of the decoders' input buffers (the decoded output goes to the reader's own
/// 256 KiB buffer).
const DECODER_INPUT_BUFFER: usize = 64 * 1024;

impl Compression {
    /// Short lower-case name: `"none"`, `"gzip"`, `"xz"` or `"zstd"`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Xz => "xz",
            Compression::Zstd => "zstd",
        }
    }

    /// Detects the compression from the first bytes of a stream (at least [`MAGIC_LEN`]
    /// bytes should be given unless the stream is shorter).
    pub fn detect(prefix: &[u8]) -> Compression {
        if prefix.starts_with(XZ_MAGIC) {
            Compression::Xz
        } else if prefix.starts_with(ZSTD_MAGIC) {
            Compression::Zstd
        } else if prefix.starts_with(GZIP_MAGIC) {
            Compression::Gzip
        } else {
            Compression::None
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Marks an error as coming from the underlying reader rather than from a decoder.
#[derive(Debug)]
pub(crate) struct SourceError(pub(crate) io::Error);

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SourceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Wraps the underlying reader so that its errors can be told apart from decoder errors
/// after passing through a decoder.
struct Tagged<R>(R);

impl<R: Read> Read for Tagged<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::Interrupted {
                e
            } else {
                io::Error::new(e.kind(), SourceError(e))
            }
        })
    }
}

/// If `e` was produced by [`Tagged`], returns the original error of the underlying reader.
pub(crate) fn untag(e: io::Error) -> Result<io::Error, io::Error> {
    let tagged = e
        .get_ref()
        .is_some_and(|inner| inner.downcast_ref::<SourceError>().is_some());
    if !tagged {
        return Err(e);
    }
    let kind = e.kind();
    match e.into_inner().map(|inner| inner.downcast::<SourceError>()) {
        Some(Ok(source)) => Ok(source.0),
        // Unreachable given the check above; keep the error rather than panic.
        Some(Err(other)) => Ok(io::Error::new(kind, other)),
        None => Ok(io::Error::from(kind)),
    }
}

/// Builds the decoder for `compression` over `prefix` (bytes already taken from the
/// stream) followed by the rest of `source`.
pub(crate) fn decoder(
    compression: Compression,
    prefix: Vec<u8>,
    source: Box<dyn Read + Send>,
) -> io::Result<Box<dyn Read + Send>> {
    let input = BufReader::with_capacity(
        DECODER_INPUT_BUFFER,
        Cursor::new(prefix).chain(Tagged(source)),
    );
    Ok(match compression {
        Compression::None => Box::new(input),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(input)),
        Compression::Xz => Box::new(xz2::bufread::XzDecoder::new_multi_decoder(input)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(input)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_magic_bytes() {
        assert_eq!(Compression::detect(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(Compression::detect(XZ_MAGIC), Compression::Xz);
        assert_eq!(
            Compression::detect(&[0x28, 0xb5, 0x2f, 0xfd, 0x24]),
            Compression::Zstd
        );
        assert_eq!(Compression::detect(b"1\n2\n"), Compression::None);
        assert_eq!(Compression::detect(&[0x1f]), Compression::None);
        assert_eq!(Compression::detect(&[]), Compression::None);
        // xz magic cut short is not xz.
        assert_eq!(Compression::detect(&XZ_MAGIC[..5]), Compression::None);
    }

    #[test]
    fn source_errors_are_untagged() {
        let e = io::Error::other(SourceError(io::Error::other("disk")));
        let orig = untag(e).expect("tagged");
        assert_eq!(orig.to_string(), "disk");
        let e = io::Error::new(io::ErrorKind::InvalidData, "corrupt");
        // Not tagged: handed back as it was.
        let back = untag(e).unwrap_err();
        assert_eq!(
            (back.kind(), back.to_string()),
            (io::ErrorKind::InvalidData, "corrupt".into())
        );
    }
}
