//! Errors of the probe: every one names what failed (the scenario field, the file and the
//! system call, the limit).

use std::io;
use std::path::PathBuf;

use mmsim_workloads::WorkloadError;

/// What can go wrong planning, dumping, checking or running a scenario for real.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The scenario itself is invalid, or a trace it replays cannot be read.
    #[error(transparent)]
    Scenario(#[from] WorkloadError),

    /// The scenario is valid but asks for something the probe cannot execute faithfully.
    #[error("{source_name}: {field}: {message}")]
    Unsupported {
        /// The scenario's file or name.
        source_name: String,
        /// The field, e.g. `workload[0].kind`.
        field: String,
        /// Why, and what to do instead.
        message: String,
    },

    /// The command line or the options do not allow the run (e.g. a missing `--dir`).
    #[error("{0}")]
    Usage(String),

    /// The scenario needs more memory or disk than the guard allows.
    #[error("{what}: the scenario needs {needed} bytes ({detail}), more than {option} {limit} bytes; raise {option} if this is intended")]
    Limit {
        /// `mapped memory` or `file space`.
        what: &'static str,
        /// The option that sets the limit (`--max-memory`, `--max-disk`).
        option: &'static str,
        /// Bytes the scenario needs.
        needed: u64,
        /// The limit in bytes.
        limit: u64,
        /// Per region: name and size.
        detail: String,
    },

    /// A system call failed.
    #[error("{call} {}: {source}", path.display())]
    Syscall {
        /// The call (`open`, `pread`, `mmap`, `posix_fadvise`, …).
        call: &'static str,
        /// The file it was about (for anonymous memory, the region's name).
        path: PathBuf,
        /// The error.
        source: io::Error,
    },

    /// A system call returned less than asked (a short read or write).
    #[error("{call} {}: {message}", path.display())]
    Short {
        /// The call.
        call: &'static str,
        /// The file.
        path: PathBuf,
        /// What was asked and what came back.
        message: String,
    },

    /// An event names a region the setup did not create, or a page beyond its end (a bug
    /// or a hand-made dump: never executed).
    #[error("event {index}: {message}")]
    BadEvent {
        /// The event's position in the stream (0-based).
        index: u64,
        /// What is wrong.
        message: String,
    },

    /// Reading or writing a dump failed.
    #[error("{}: {message}", path.display())]
    Dump {
        /// The dump file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

impl ProbeError {
    /// A [`ProbeError::Syscall`] from the last OS error.
    pub fn last_os(call: &'static str, path: impl Into<PathBuf>) -> ProbeError {
        ProbeError::Syscall {
            call,
            path: path.into(),
            source: io::Error::last_os_error(),
        }
    }

    /// A [`ProbeError::Syscall`] from an error number (as `posix_fadvise` returns it).
    pub fn errno(call: &'static str, path: impl Into<PathBuf>, errno: i32) -> ProbeError {
        ProbeError::Syscall {
            call,
            path: path.into(),
            source: io::Error::from_raw_os_error(errno),
        }
    }

    /// A [`ProbeError::Dump`] from an I/O error.
    pub fn dump_io(path: impl Into<PathBuf>, e: impl std::fmt::Display) -> ProbeError {
        ProbeError::Dump {
            path: path.into(),
            message: e.to_string(),
        }
    }
}
