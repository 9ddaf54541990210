//! Setting a run up on the real machine: the region files (created, filled, or reused),
//! their mappings (`mmap`, unmapped on drop), the `madvise`/`posix_fadvise` calls of a
//! workload's advice, and the removal of the files a run created.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use mmsim_core::{Advice, VmaThpAdvice, PAGE_SIZE};

use crate::error::ProbeError;

/// Bytes written per call when a file is created.
const FILL_CHUNK: usize = 1 << 20;

/// A region mapped into the address space; unmapped on drop.
pub(super) struct Mapping {
    pub(super) ptr: *mut u8,
    len: usize,
}

impl Mapping {
    /// `mmap` of `len` bytes; `fd` `None` for anonymous memory.
    pub(super) fn new(
        len: usize,
        prot: i32,
        flags: i32,
        fd: Option<&File>,
        what: &Path,
    ) -> Result<Mapping, ProbeError> {
        let fd = fd.map_or(-1, |f| f.as_raw_fd());
        // SAFETY: a new mapping at an address the kernel chooses; nothing else refers to it.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, fd, 0) };
        if p == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            let mut call = "mmap";
            if prot & libc::PROT_EXEC != 0 && e.raw_os_error() == Some(libc::EPERM) {
                call = "mmap (PROT_EXEC; is --dir on a noexec mount?)";
            }
            return Err(ProbeError::Syscall {
                call,
                path: what.to_path_buf(),
                source: e,
            });
        }
        Ok(Mapping { ptr: p.cast(), len })
    }

    pub(super) fn madvise(
        &self,
        advice: i32,
        call: &'static str,
        what: &Path,
    ) -> Result<(), ProbeError> {
        // SAFETY: the range is exactly this mapping.
        if unsafe { libc::madvise(self.ptr.cast(), self.len, advice) } != 0 {
            return Err(ProbeError::last_os(call, what));
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `new` mapped; no reference into it outlives `self`.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Removes the files a run created, unless they are to be kept; also after an error.
pub(super) struct Cleanup {
    pub(super) created: Vec<PathBuf>,
    pub(super) keep: bool,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !self.keep {
            for p in &self.created {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

pub(super) fn fadvise_code(a: Advice) -> (i32, &'static str) {
    match a {
        Advice::Normal => (libc::POSIX_FADV_NORMAL, "posix_fadvise(NORMAL)"),
        Advice::Random => (libc::POSIX_FADV_RANDOM, "posix_fadvise(RANDOM)"),
        Advice::Sequential => (libc::POSIX_FADV_SEQUENTIAL, "posix_fadvise(SEQUENTIAL)"),
    }
}

/// The `madvise` call of a THP advice (None: no call).
pub(super) fn thp_madvise_code(advice: VmaThpAdvice) -> Option<(libc::c_int, &'static str)> {
    match advice {
        VmaThpAdvice::None => None,
        VmaThpAdvice::Hugepage => Some((libc::MADV_HUGEPAGE, "madvise(MADV_HUGEPAGE)")),
        VmaThpAdvice::Nohugepage => Some((libc::MADV_NOHUGEPAGE, "madvise(MADV_NOHUGEPAGE)")),
    }
}

pub(super) fn madvise_code(a: Advice) -> (i32, &'static str) {
    match a {
        Advice::Normal => (libc::MADV_NORMAL, "madvise(MADV_NORMAL)"),
        Advice::Random => (libc::MADV_RANDOM, "madvise(MADV_RANDOM)"),
        Advice::Sequential => (libc::MADV_SEQUENTIAL, "madvise(MADV_SEQUENTIAL)"),
    }
}

pub(super) fn fadvise(
    f: &File,
    advice: i32,
    call: &'static str,
    path: &Path,
) -> Result<(), ProbeError> {
    // SAFETY: a plain syscall on an open descriptor.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, advice) };
    if rc != 0 {
        return Err(ProbeError::errno(call, path, rc));
    }
    Ok(())
}

/// Writes the content of a new region file: every page non-zero (its first 8 bytes are
/// the page number + 1, the rest 0x5a), so the file has no holes.
pub(super) fn fill(f: &File, pages: u64, path: &Path) -> Result<(), ProbeError> {
    let mut buf = vec![0x5au8; FILL_CHUNK];
    let per = FILL_CHUNK as u64 / PAGE_SIZE;
    let mut page = 0u64;
    while page < pages {
        let n = per.min(pages - page);
        for k in 0..n {
            let o = (k * PAGE_SIZE) as usize;
            buf[o..o + 8].copy_from_slice(&(page + k + 1).to_le_bytes());
        }
        let len = (n * PAGE_SIZE) as usize;
        f.write_all_at(&buf[..len], page * PAGE_SIZE)
            .map_err(|source| ProbeError::Syscall {
                call: "pwrite",
                path: path.to_path_buf(),
                source,
            })?;
        page += n;
    }
    Ok(())
}

/// Opens (with `reuse`, if it exists) or creates region file `path` of `pages` pages;
/// returns the file and whether it was created. Never follows a symbolic link.
pub(super) fn open_region_file(
    path: &Path,
    pages: u64,
    reuse: bool,
    cleanup: &mut Cleanup,
) -> Result<(File, bool), ProbeError> {
    let bytes = pages * PAGE_SIZE;
    if reuse {
        match std::fs::symlink_metadata(path) {
            Ok(m) => {
                if !m.file_type().is_file() {
                    return Err(ProbeError::Usage(format!(
                        "--reuse {}: not a regular file",
                        path.display()
                    )));
                }
                if m.len() != bytes {
                    return Err(ProbeError::Usage(format!(
                        "--reuse {}: its size is {} bytes, the workload needs exactly {bytes}: \
                         remove it, or run without --reuse on a fresh --dir",
                        path.display(),
                        m.len()
                    )));
                }
                let f = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(path)
                    .map_err(|source| ProbeError::Syscall {
                        call: "open",
                        path: path.to_path_buf(),
                        source,
                    })?;
                return Ok((f, false));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(ProbeError::Syscall {
                    call: "stat",
                    path: path.to_path_buf(),
                    source,
                })
            }
        }
    }
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|source| {
            let call = if source.kind() == std::io::ErrorKind::AlreadyExists {
                "create (it exists: pass --reuse to run on it, or remove it)"
            } else {
                "create"
            };
            ProbeError::Syscall {
                call,
                path: path.to_path_buf(),
                source,
            }
        })?;
    cleanup.created.push(path.to_path_buf());
    fill(&f, pages, path)?;
    f.sync_all().map_err(|source| ProbeError::Syscall {
        call: "fsync",
        path: path.to_path_buf(),
        source,
    })?;
    Ok((f, true))
}
