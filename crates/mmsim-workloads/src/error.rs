//! The error type of scenario loading and running.

use std::fmt;
use std::io;

use mmsim_core::SimError;
use mmsim_trace::TraceError;

/// Everything that can go wrong while loading, validating or running a scenario.
///
/// The `Display` text is complete and meant to be shown to the user as is: it names the
/// scenario file, the line or the dotted field path (`machine.memory`,
/// `workload[2].theta`), or the workload and the trace position. Variants that wrap an
/// error of another crate include its text *and* return it from
/// [`source`](std::error::Error::source), so a caller printing the whole chain should skip
/// causes whose text is already shown.
#[derive(Debug)]
#[non_exhaustive]
pub enum WorkloadError {
    /// The scenario file could not be read.
    Io {
        /// The scenario file.
        file: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// The scenario is not valid TOML or does not have the expected shape (a missing or
    /// unknown field, a value of the wrong type, an unknown `kind`, a malformed size).
    Parse {
        /// The scenario file (or the name given to [`crate::Scenario::from_toml_str`]).
        file: String,
        /// 1-based line of the problem, if the parser located it.
        line: Option<usize>,
        /// 1-based column (in characters), if located.
        column: Option<usize>,
        /// Dotted path of the field (`machine.memory`, `workload[1].theta`, `workload[0]`),
        /// as far as it could be determined from the position.
        field: Option<String>,
        /// The parser's message.
        message: String,
    },
    /// A field has a value outside its allowed range, or fields contradict each other.
    Invalid {
        /// The scenario file.
        file: String,
        /// Dotted path of the field, e.g. `machine.swappiness` or `workload[2].theta`.
        field: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// Building the simulated machine or a workload's task, file or mapping failed.
    Setup {
        /// Which workload (`workload[1] "db"`), or `machine`.
        what: String,
        /// The simulator's error.
        source: SimError,
    },
    /// Opening or reading a trace failed (missing file, malformed line, truncated
    /// record, corrupt compression, too many distinct keys).
    Trace {
        /// Which workload, e.g. `workload[0] "trace"`.
        what: String,
        /// The trace reader's error (it names the trace file and line or record).
        source: TraceError,
    },
    /// A setting given by a front end (a command-line flag, a keyword argument) is out
    /// of range or contradicts another, or a named scenario does not exist; the message
    /// names the setting as the flag that gives it.
    Usage(String),
}

impl WorkloadError {
    /// The dotted field path the error is about, if any.
    pub fn field(&self) -> Option<&str> {
        match self {
            WorkloadError::Parse { field, .. } => field.as_deref(),
            WorkloadError::Invalid { field, .. } => Some(field),
            _ => None,
        }
    }

    /// Whether the error is the user's input (scenario, trace file, setting) rather than an
    /// internal failure. Every variant is, today; a command-line tool maps these to its
    /// "bad input" exit code.
    pub fn is_bad_input(&self) -> bool {
        true
    }
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadError::Io { file, source } => write!(f, "{file}: cannot read: {source}"),
            WorkloadError::Parse {
                file,
                line,
                column,
                field,
                message,
            } => {
                write!(f, "{file}")?;
                if let Some(line) = line {
                    write!(f, ": line {line}")?;
                    if let Some(column) = column {
                        write!(f, ", column {column}")?;
                    }
                }
                if let Some(field) = field {
                    write!(f, ": {field}")?;
                }
                write!(f, ": {message}")
            }
            WorkloadError::Invalid {
                file,
                field,
                message,
            } => write!(f, "{file}: {field}: {message}"),
            WorkloadError::Setup { what, source } => write!(f, "{what}: {source}"),
            WorkloadError::Trace { what, source } => write!(f, "{what}: {source}"),
            WorkloadError::Usage(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for WorkloadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WorkloadError::Io { source, .. } => Some(source),
            WorkloadError::Setup { source, .. } => Some(source),
            WorkloadError::Trace { source, .. } => Some(source),
            WorkloadError::Parse { .. }
            | WorkloadError::Invalid { .. }
            | WorkloadError::Usage(_) => None,
        }
    }
}
