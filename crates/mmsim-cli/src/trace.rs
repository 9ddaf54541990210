//! `mmsim trace info | head | convert`: look at a trace before simulating it, and turn
//! any readable trace into mmsim's native format.
//!
//! `info` reads the trace once and reports what a user sizing a cache or a memory limit
//! wants first: how many records and references it has and what was skipped (and why),
//! the footprint in distinct 4 KiB pages, reads and writes, the reuse (LRU stack)
//! distance distribution, and the miss-ratio curve of plain LRU at a set of sizes — all
//! from one pass with Mattson's stack-distance algorithm
//! ([`mmsim_trace::StackDistance`]). The curve is exact: at every size it equals the
//! misses of `mmsim run --trace T --policy lru --memcg-max <size>p` (the golden tests
//! check this).
//!
//! `head` prints the first records as the simulator sees them (key and access type,
//! after block requests are split into pages). `convert` writes the native format
//! (see `mmsim_trace::native`), the fastest to read.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use mmsim_report::trace_info::{self, TraceInfoError};
use mmsim_trace::{CsvSpec, Format, Record, TraceReader};
use mmsim_workloads::TraceFormat;

use crate::{Outcome, UsageError};

/// Most records `trace head` prints.
const MAX_HEAD: u64 = 1 << 20;

/// `mmsim trace`.
#[derive(Args, Debug)]
pub struct TraceArgs {
    #[command(subcommand)]
    command: TraceCommand,
}

#[derive(Subcommand, Debug)]
enum TraceCommand {
    /// Footprint, reads/writes, reuse distances and the LRU miss-ratio curve, in one pass.
    Info(InfoArgs),
    /// Print the first records: page (key) and R/W.
    Head(HeadArgs),
    /// Convert a trace in any readable format to mmsim's native format.
    Convert(ConvertArgs),
    /// List the trace formats mmsim reads.
    Formats,
}

/// What `info`, `head` and `convert` read.
#[derive(Args, Debug)]
struct Input {
    /// The trace (gzip/xz/zstd transparent; `-` reads standard input).
    #[arg(value_name = "TRACE")]
    path: PathBuf,
    /// Its format: auto (detected from the content; the choice and its reason are
    /// printed), or a name from `mmsim trace formats`.
    #[arg(long, value_name = "FORMAT", default_value = "auto")]
    format: TraceFormat,
    /// Read at most N references.
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    /// The columns of a `--format csv` trace: key=N (1-based), op=N, size=N, unit=BYTES,
    /// delimiter=comma|tab|semicolon|space|pipe|C, header, key-is-num=false
    /// (e.g. `key=2,op=3,delimiter=tab`).
    #[arg(long, value_name = "SPEC")]
    csv_columns: Option<CsvSpec>,
}

#[derive(Args, Debug)]
struct InfoArgs {
    #[command(flatten)]
    input: Input,
    /// Cache sizes for the miss-ratio curve, in entries (pages), comma-separated
    /// (default: 1, 2, 5, 10, 20, 50 and 100 % of the footprint).
    #[arg(long, value_name = "N,N,…", value_delimiter = ',')]
    sizes: Option<Vec<u64>>,
    /// Estimate from a SHARDS sample of the keys at this rate (e.g. 0.01) instead of
    /// every reference: distances are computed for about RATE of the keys, so a huge
    /// trace's curve takes a fraction of the time and memory. The footprint, first
    /// references, distances and curve are then estimates.
    #[arg(long, value_name = "RATE", allow_hyphen_values = true)]
    sample: Option<f64>,
    /// Estimate from a fixed-size SHARDS sample of at most N keys: the rate starts at 1
    /// and falls as keys arrive, so memory stays bounded without knowing the footprint
    /// (e.g. 8192; the final rate is reported).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    sample_size: Option<i64>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct HeadArgs {
    #[command(flatten)]
    input: Input,
    /// Records to print.
    #[arg(short = 'n', long = "lines", value_name = "N", default_value_t = 10)]
    lines: u64,
}

#[derive(Args, Debug)]
struct ConvertArgs {
    #[command(flatten)]
    input: Input,
    /// The native trace to write.
    #[arg(value_name = "OUTPUT")]
    output: PathBuf,
    /// Overwrite OUTPUT if it exists. OUTPUT is written whole or not at all (through a
    /// temporary file beside it, renamed over it at the end), a symlink's target is
    /// written in place, and directories, devices, pipes and sockets are refused.
    #[arg(long)]
    force: bool,
    /// Write the keys numbered by first appearance (0, 1, 2, …) and mark the file so: a
    /// replay (`trace_keys = "dense"`, the default) then takes each key as its page with
    /// no key table, with the same results. The original keys are not kept.
    #[arg(long)]
    dense_keys: bool,
}

/// Runs `mmsim trace …`.
pub fn trace(args: TraceArgs) -> Result<Outcome> {
    match args.command {
        TraceCommand::Info(a) => info(a),
        TraceCommand::Head(a) => head(a),
        TraceCommand::Convert(a) => convert(a),
        TraceCommand::Formats => formats(),
    }
    .map(|()| Outcome::Complete)
}

fn open(input: &Input) -> Result<TraceReader> {
    trace_info::open(&input.path, input.format, input.csv_columns).map_err(cli_error)
}

/// A library error as the CLI reports it: a usage error exits 2, a trace error keeps
/// its type (bad input), cancellation is Ctrl-C's.
fn cli_error(e: TraceInfoError) -> anyhow::Error {
    match e {
        TraceInfoError::Usage(m) => UsageError(m).into(),
        TraceInfoError::Trace(e) => e.into(),
        TraceInfoError::Cancelled => crate::progress::Interrupted.into(),
    }
}

/// Reads up to `limit` references in batches, calling `f` on each batch; Ctrl-C stops it.
fn for_each_batch(
    reader: &mut TraceReader,
    limit: Option<u64>,
    f: impl FnMut(&[Record]) -> Result<()>,
) -> Result<()> {
    trace_info::for_each_batch(reader, limit, Some(&crate::progress::CANCEL), f).map_err(
        |e| match e.downcast::<TraceInfoError>() {
            Ok(e) => cli_error(e),
            Err(e) => e,
        },
    )
}

fn info(a: InfoArgs) -> Result<()> {
    trace_info::check_request(a.input.limit, a.sizes.as_deref()).map_err(cli_error)?;
    let keys = match a.sample_size {
        Some(n) if n < 1 => {
            return Err(UsageError(format!(
                "--sample-size {}",
                mmsim_trace::shards::sample_size_out_of_range(n)
            ))
            .into())
        }
        n => n.map(|n| n as u64),
    };
    let sampling = trace_info::Sampling::from_options(a.sample, keys).map_err(cli_error)?;
    let reader = open(&a.input)?;
    let info = trace_info::trace_info_with(
        reader,
        &a.input.path.display().to_string(),
        a.input.limit,
        a.sizes,
        sampling,
        Some(&crate::progress::CANCEL),
    )
    .map_err(cli_error)?;
    let mut out = crate::output::stdout();
    if a.json {
        serde_json::to_writer_pretty(&mut out, &crate::output::Versioned::new(&info))?;
        writeln!(out)?;
    } else {
        out.write_all(trace_info::render_info(&info).as_bytes())?;
    }
    Ok(())
}

fn head(a: HeadArgs) -> Result<()> {
    if a.lines == 0 || a.lines > MAX_HEAD {
        return Err(UsageError(format!("-n {} is out of range [1, {MAX_HEAD}]", a.lines)).into());
    }
    let mut reader = open(&a.input)?;
    let limit = a.input.limit.map_or(a.lines, |l| l.min(a.lines));
    let mut out = crate::output::stdout();
    if let Some(s) = reader.sniffed() {
        writeln!(
            out,
            "# {}: format {} ({})",
            reader.name(),
            reader.format().name(),
            s.reason
        )?;
    }
    for_each_batch(&mut reader, Some(limit), |batch| {
        for r in batch {
            writeln!(out, "{} {}", r.key, if r.write { 'W' } else { 'R' })?;
        }
        Ok(())
    })?;
    Ok(())
}

/// Where `convert` may write: the output path itself, or the file a symlink points to
/// (written in place, so the link stays valid); never a directory, device, pipe or
/// socket, and an existing file only with `--force`.
fn output_target(output: &Path, force: bool) -> Result<PathBuf> {
    let bad = |msg: String| anyhow::Error::new(UsageError(msg));
    let shown = output.display();
    let target = match std::fs::symlink_metadata(output) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(output)
            .or_else(|_| {
                std::fs::read_link(output).map(|t| match output.parent() {
                    Some(dir) if t.is_relative() => dir.join(t),
                    _ => t,
                })
            })
            .with_context(|| format!("cannot resolve the symlink {shown}"))?,
        _ => output.to_path_buf(),
    };
    match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => Err(bad(format!("{shown}: is a directory"))),
        Ok(m) if !m.is_file() => Err(bad(format!(
            "{shown}: not a regular file (a device, pipe or socket); traces are written to \
             regular files only"
        ))),
        Ok(_) if !force => Err(bad(format!("{shown}: exists; use --force to overwrite it"))),
        _ => Ok(target),
    }
}

fn convert(a: ConvertArgs) -> Result<()> {
    let target = output_target(&a.output, a.force)?;
    if same_file(&a.input.path, &target) {
        return Err(UsageError("the output would overwrite the input".into()).into());
    }
    let mut reader = open(&a.input)?;
    let name = a.output.display().to_string();
    // Written beside the output and renamed over it only once whole: a bad input, a
    // full disk or Ctrl-C leaves an existing output as it was, and no partial file.
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".mmsim-convert-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&target).map_or(0o644, |m| m.permissions().mode() & 0o7777);
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    let temp = builder
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a file beside {name}"))?;
    let file = temp
        .as_file()
        .try_clone()
        .with_context(|| format!("writing {name}"))?;
    let options = mmsim_trace::NativeOptions {
        dense_keys: a.dense_keys,
        ..Default::default()
    };
    let mut writer = mmsim_trace::NativeWriter::with_options(
        &name,
        std::io::BufWriter::with_capacity(1 << 20, file),
        options,
    )?;
    let result = for_each_batch(&mut reader, a.input.limit, |batch| {
        writer.write_all(batch)?;
        Ok(())
    })
    .and_then(|()| {
        let (buf, stats) = writer.finish()?;
        buf.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        Ok(stats)
    });
    // On an error the temporary file is removed when `temp` drops.
    let stats = result?;
    temp.persist(&target)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot rename the converted trace to {name}"))?;
    let in_bytes = std::fs::metadata(&a.input.path)
        .map(|m| m.len())
        .unwrap_or(0);
    let r = reader.stats();
    eprintln!(
        "{} ({}): {} records → {} references ({} writes) → {}: {} bytes in {} blocks ({:.2} bytes/reference; input {} bytes)",
        a.input.path.display(),
        reader.format().name(),
        r.records,
        stats.records,
        stats.writes,
        name,
        stats.bytes,
        stats.blocks,
        stats.bytes as f64 / stats.records.max(1) as f64,
        in_bytes
    );
    Ok(())
}

fn formats() -> Result<()> {
    let mut out = crate::output::stdout();
    for f in Format::ALL {
        let aliases = f.aliases();
        let aka = if aliases.is_empty() {
            String::new()
        } else {
            format!(" (also {})", aliases.join(", "))
        };
        writeln!(out, "{:<16} {}{aka}", f.name(), f.description())?;
    }
    writeln!(
        out,
        "\nauto-detection reads the first 64 KiB (after gzip/xz/zstd) and says what it chose and why"
    )?;
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
