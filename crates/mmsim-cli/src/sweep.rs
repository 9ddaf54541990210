//! `mmsim sweep GRID.toml --out DIR [--ray ADDRESS]`: every point of a grid, run
//! through the `mmsim` Python package (`python -m mmsim.sweep`, `python/mmsim/sweep.py`).
//!
//! The sweep engine is the package's, not a second one here: it runs the points on
//! local cores (a process pool) or as tasks on a Ray cluster, appends each finished
//! point to a Parquet dataset through pyarrow, and resumes a killed sweep without
//! redoing a finished point. A native sweep would need an Arrow/Parquet writer in
//! Rust (the `arrow` and `parquet` crates: a large dependency tree and build time for
//! every user of the CLI) and a second scheduler beside Ray's; so this command finds
//! the Python interpreter (`MMSIM_PYTHON`, default `python3`), checks that it can
//! import the package, and hands it the arguments, exiting with its status. Without
//! the interpreter or the package it says so and how to install it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::Result;
use clap::Args;

use crate::Outcome;

/// Flags of `mmsim sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The grid: a TOML file whose keys are lists of values (`scenario`, `trace`,
    /// `policy`, `seed`, any `mmsim run` flag such as `memory` or `swappiness`, any
    /// `[machine]` key as `--set` takes it).
    #[arg(value_name = "GRID.toml")]
    pub grid: PathBuf,
    /// The Parquet dataset (a directory of one part per point) the results are
    /// appended to; a sweep started again with it runs only the missing points.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Run the points as tasks on this Ray cluster (`auto`: the one this machine
    /// belongs to) instead of local worker processes.
    #[arg(long, value_name = "ADDRESS")]
    pub ray: Option<String>,
    /// Local worker processes (default: one per core).
    #[arg(long, value_name = "N")]
    pub workers: Option<u32>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The interpreter: `MMSIM_PYTHON`, else `python3`.
fn python() -> OsString {
    std::env::var_os("MMSIM_PYTHON")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into())
}

const INSTALL: &str = "install it with `pip install ./python` from the mmsim repository \
                       (needs Python 3.9+ and cargo), or name an interpreter that has it in \
                       MMSIM_PYTHON";

/// `mmsim sweep`.
pub fn sweep(args: SweepArgs) -> Result<Outcome> {
    let py = python();
    let shown = PathBuf::from(&py).display().to_string();
    let check = Command::new(&py)
        .args(["-c", "import mmsim.sweep"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match check {
        Err(e) => anyhow::bail!(
            "mmsim sweep runs the mmsim Python package, and the interpreter `{shown}` cannot \
             be started ({e}); {INSTALL}"
        ),
        Ok(o) if !o.status.success() => {
            let why = String::from_utf8_lossy(&o.stderr);
            let why = why.lines().last().unwrap_or("").trim();
            anyhow::bail!(
                "mmsim sweep runs the mmsim Python package, which `{shown}` cannot import \
                 ({why}); {INSTALL}"
            )
        }
        Ok(_) => {}
    }
    let mut cmd = Command::new(&py);
    cmd.args(["-m", "mmsim.sweep"])
        .arg(&args.grid)
        .arg("--out")
        .arg(&args.out);
    if let Some(address) = &args.ray {
        cmd.args(["--ray", address]);
    }
    if let Some(n) = args.workers {
        cmd.args(["--workers", &n.to_string()]);
    }
    if args.quiet {
        cmd.arg("--quiet");
    }
    let status = cmd
        .status()
        .map_err(|e| anyhow::anyhow!("cannot start `{shown} -m mmsim.sweep`: {e}"))?;
    Ok(match status.code() {
        Some(0) => Outcome::Complete,
        // The package printed its error; pass its status on (2: bad grid, 130: Ctrl-C).
        Some(code) => Outcome::Status(u8::try_from(code).unwrap_or(1)),
        None => Outcome::Status(1),
    })
}
