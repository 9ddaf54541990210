//! What `mmsim trace info` (and Python's `mmsim.trace.info`) reports about a trace,
//! from one pass: records and references and what was skipped, the footprint in
//! distinct 4 KiB pages, reads and writes, the reuse (LRU stack) distance distribution,
//! and the miss-ratio curve of plain LRU at a set of sizes, all from Mattson's
//! stack-distance algorithm ([`mmsim_trace::StackDistance`]). The curve is exact: at
//! every size it equals the misses of `mmsim run --trace T --policy lru --memcg-max
//! <size>p` (the CLI's golden tests check this).
//!
//! [`open`] opens a trace as the CLI's `--format`/`--csv-columns` say, [`trace_info`]
//! reads it into a [`TraceInfo`] (serializable: the `--json` output), and
//! [`render_info`] is the text report.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use mmsim_trace::{
    CsvSpec, Densifier, FixedSizeShards, Format, ReadOptions, Record, SampledCurve, Shards,
    StackDistance, TraceReader,
};
use mmsim_workloads::TraceFormat;
use serde::Serialize;

/// Most distinct keys [`trace_info`] tracks (2^28: ≈ 6 GiB of key map at the limit; a
/// larger trace is an error that names it, not an unbounded allocation).
pub const MAX_DISTINCT: u32 = 1 << 28;

/// Why a trace could not be opened or analysed.
#[derive(Debug)]
pub enum TraceInfoError {
    /// The request itself is wrong (a zero size or limit, csv columns without the csv
    /// format); the message names the flag.
    Usage(String),
    /// Opening or reading the trace failed; the reader's error names the file.
    Trace(mmsim_trace::TraceError),
    /// The caller's cancel flag was raised.
    Cancelled,
}

impl std::fmt::Display for TraceInfoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceInfoError::Usage(m) => f.write_str(m),
            TraceInfoError::Trace(e) => e.fmt(f),
            TraceInfoError::Cancelled => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for TraceInfoError {}

impl From<mmsim_trace::TraceError> for TraceInfoError {
    fn from(e: mmsim_trace::TraceError) -> Self {
        TraceInfoError::Trace(e)
    }
}

/// Opens `path` in `format` (auto: detected from the content); a `csv` trace needs its
/// column spec, and only a `csv` trace takes one.
pub fn open(
    path: &Path,
    format: TraceFormat,
    csv_columns: Option<CsvSpec>,
) -> Result<TraceReader, TraceInfoError> {
    let options = ReadOptions {
        csv: csv_columns,
        ..ReadOptions::default()
    };
    let reader = match format {
        TraceFormat::Fixed(Format::Csv) if csv_columns.is_none() => {
            return Err(TraceInfoError::Usage(
                "--format csv needs --csv-columns (e.g. key=2,op=3,delimiter=tab)".into(),
            ))
        }
        TraceFormat::Fixed(Format::Csv) => TraceReader::open_with(path, Format::Csv, options)?,
        _ if csv_columns.is_some() => {
            return Err(TraceInfoError::Usage(format!(
                "--csv-columns is for --format csv, not --format {format}"
            )))
        }
        TraceFormat::Auto => TraceReader::open_auto(path)?,
        TraceFormat::Fixed(f) => TraceReader::open(path, f)?,
    };
    Ok(reader)
}

/// Reads up to `limit` references in batches, calling `f` on each batch; stops with
/// [`TraceInfoError::Cancelled`] when `cancel` is raised between batches.
pub fn for_each_batch<E: From<TraceInfoError>>(
    reader: &mut TraceReader,
    limit: Option<u64>,
    cancel: Option<&AtomicBool>,
    mut f: impl FnMut(&[Record]) -> Result<(), E>,
) -> Result<(), E> {
    let mut left = limit.unwrap_or(u64::MAX);
    let mut batch = Vec::with_capacity(4096);
    while left > 0 {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(TraceInfoError::Cancelled.into());
        }
        let want = left.min(4096) as usize;
        let n = reader
            .read_batch(&mut batch, want)
            .map_err(|e| E::from(e.into()))?;
        if n == 0 {
            break;
        }
        left -= batch.len() as u64;
        f(&batch)?;
    }
    Ok(())
}

/// What `trace info` reports (also its JSON).
#[derive(Clone, Debug, Serialize)]
pub struct TraceInfo {
    /// The trace as named.
    pub trace: String,
    /// Its format's name.
    pub format: &'static str,
    /// Why auto-detection chose the format (absent when given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sniffed: Option<String>,
    /// Its compression (`none`, `gzip`, `xz`, `zstd`).
    pub compression: String,
    /// A native trace written by `trace convert --dense-keys`: its keys are page ids
    /// numbered by first appearance, so a replay needs no key map (absent otherwise).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dense_keys: bool,
    /// The reader's counts: records, references, writes, and each kind of skipped line.
    pub read: mmsim_trace::ReadStats,
    /// References analysed (all, or `--limit`).
    pub references: u64,
    /// Read references analysed.
    pub reads: u64,
    /// Write references analysed.
    pub writes: u64,
    /// Distinct keys (pages).
    pub footprint_pages: u64,
    /// The footprint in MiB at 4 KiB per page.
    pub footprint_mib: f64,
    /// First references (compulsory misses).
    pub cold: u64,
    /// LRU stack distance quantiles of re-references.
    pub reuse_distance: ReuseSummary,
    /// Plain-LRU miss-ratio curve.
    pub lru_mrc: Vec<MrcPoint>,
    /// With `--sample`: the SHARDS sample the footprint, first references, distances
    /// and curve were estimated from (absent: all exact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<SampleInfo>,
}

/// The SHARDS sample behind an estimated [`TraceInfo`] ([`mmsim_trace::shards`]).
#[derive(Clone, Debug, Serialize)]
pub struct SampleInfo {
    /// The method: `SHARDS_adj, fixed rate` or `SHARDS_adj, fixed size`.
    pub method: &'static str,
    /// The rate in effect at the end (`T / 2^24`).
    pub rate: f64,
    /// With a fixed size: the most keys the sample held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_keys: Option<u64>,
    /// References in the sample.
    pub sampled_references: u64,
    /// Distinct keys in the sample.
    pub sampled_keys: u64,
}

/// LRU stack distance quantiles of re-references (absent without re-references).
#[derive(Clone, Debug, Serialize)]
pub struct ReuseSummary {
    /// Median.
    pub p50: Option<u64>,
    /// 90th percentile.
    pub p90: Option<u64>,
    /// 99th percentile.
    pub p99: Option<u64>,
    /// Largest.
    pub max: Option<u64>,
}

impl ReuseSummary {
    /// The summary from a quantile function (`q` in 0..=1 → distance).
    fn of(quantile: impl Fn(f64) -> Option<u64>) -> ReuseSummary {
        ReuseSummary {
            p50: quantile(0.5),
            p90: quantile(0.9),
            p99: quantile(0.99),
            max: quantile(1.0),
        }
    }
}

/// One point of the plain-LRU miss-ratio curve.
#[derive(Clone, Debug, Serialize)]
pub struct MrcPoint {
    /// Cache size, entries (pages).
    pub entries: u64,
    /// Hits of an LRU cache of that size.
    pub hits: u64,
    /// Misses (cold ones included).
    pub misses: u64,
    /// misses / references.
    pub miss_ratio: f64,
}

/// Checks a request before the trace is opened: a limit and every size at least 1.
pub fn check_request(limit: Option<u64>, sizes: Option<&[u64]>) -> Result<(), TraceInfoError> {
    if let Some(0) = limit {
        return Err(TraceInfoError::Usage("--limit must be at least 1".into()));
    }
    if sizes.is_some_and(|s| s.contains(&0)) {
        return Err(TraceInfoError::Usage(
            "--sizes: a cache size must be at least 1 entry".into(),
        ));
    }
    Ok(())
}

/// Checks a `--sample` rate before the trace is opened.
pub fn check_sample(rate: Option<f64>) -> Result<(), TraceInfoError> {
    match rate {
        Some(r) => Shards::new(r, "", 1)
            .map(drop)
            .map_err(|e| TraceInfoError::Usage(format!("--sample {e}"))),
        None => Ok(()),
    }
}

/// How [`trace_info_with`] samples the keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    /// Every reference: exact.
    Off,
    /// SHARDS at a fixed rate in (0, 1].
    Rate(f64),
    /// Fixed-size SHARDS holding at most this many keys.
    Keys(u64),
}

impl Sampling {
    /// From the `--sample RATE` and `--sample-size N` options, checked; both at once
    /// is an error.
    pub fn from_options(rate: Option<f64>, keys: Option<u64>) -> Result<Sampling, TraceInfoError> {
        match (rate, keys) {
            (Some(_), Some(_)) => Err(TraceInfoError::Usage(
                "--sample and --sample-size: give one (a fixed rate, or a fixed number of keys)"
                    .into(),
            )),
            (Some(r), None) => check_sample(Some(r)).map(|()| Sampling::Rate(r)),
            (None, Some(n)) => fixed_size(n, "").map(|_| Sampling::Keys(n)),
            (None, None) => Ok(Sampling::Off),
        }
    }
}

/// A fixed-size sampler of `keys` keys, or the `--sample-size` error.
fn fixed_size(keys: u64, name: &str) -> Result<FixedSizeShards, TraceInfoError> {
    FixedSizeShards::new(keys, name, MAX_DISTINCT)
        .map_err(|e| TraceInfoError::Usage(format!("--sample-size {e}")))
}

/// Reads `reader` (at most `limit` references) once and reports on it, the miss-ratio
/// curve at `sizes` entries (default [`default_sizes`] of the footprint). `name` is the
/// trace as the user named it.
pub fn trace_info(
    reader: TraceReader,
    name: &str,
    limit: Option<u64>,
    sizes: Option<Vec<u64>>,
    cancel: Option<&AtomicBool>,
) -> Result<TraceInfo, TraceInfoError> {
    trace_info_sampled(reader, name, limit, sizes, None, cancel)
}

/// [`trace_info`], estimated from a SHARDS sample at `sample` (a rate in (0, 1],
/// see [`mmsim_trace::shards`]) when given: distances are computed for the sampled
/// keys only, so time and memory for them fall with the rate.
pub fn trace_info_sampled(
    reader: TraceReader,
    name: &str,
    limit: Option<u64>,
    sizes: Option<Vec<u64>>,
    sample: Option<f64>,
    cancel: Option<&AtomicBool>,
) -> Result<TraceInfo, TraceInfoError> {
    let sampling = sample.map_or(Sampling::Off, Sampling::Rate);
    trace_info_with(reader, name, limit, sizes, sampling, cancel)
}

/// [`trace_info`] with any [`Sampling`]: exact, a fixed SHARDS rate, or a fixed-size
/// SHARDS sample (memory bounded by the number of keys whatever the footprint).
pub fn trace_info_with(
    mut reader: TraceReader,
    name: &str,
    limit: Option<u64>,
    sizes: Option<Vec<u64>>,
    sampling: Sampling,
    cancel: Option<&AtomicBool>,
) -> Result<TraceInfo, TraceInfoError> {
    check_request(limit, sizes.as_deref())?;
    let mut writes = 0u64;
    let mut info = match sampling {
        Sampling::Off => {
            let mut dense = Densifier::with_name(reader.name(), MAX_DISTINCT);
            let mut sd = StackDistance::default();
            for_each_batch(&mut reader, limit, cancel, |batch| {
                for r in batch {
                    writes += r.write as u64;
                    sd.reference(dense.id(r.key)?);
                }
                Ok::<(), TraceInfoError>(())
            })?;
            exact(&sd, sizes)
        }
        Sampling::Rate(rate) => {
            let mut shards = Shards::new(rate, reader.name(), MAX_DISTINCT)
                .map_err(|e| TraceInfoError::Usage(format!("--sample {e}")))?;
            for_each_batch(&mut reader, limit, cancel, |batch| {
                for r in batch {
                    writes += r.write as u64;
                    shards.reference(r.key)?;
                }
                Ok::<(), TraceInfoError>(())
            })?;
            sampled(&shards, sizes, None)
        }
        Sampling::Keys(keys) => {
            let mut shards = fixed_size(keys, reader.name())?;
            for_each_batch(&mut reader, limit, cancel, |batch| {
                for r in batch {
                    writes += r.write as u64;
                    shards.reference(r.key)?;
                }
                Ok::<(), TraceInfoError>(())
            })?;
            sampled(&shards, sizes, Some(keys))
        }
    };
    info.trace = name.to_string();
    info.format = reader.format().name();
    info.sniffed = reader.sniffed().map(|s| s.reason.to_string());
    info.compression = format!("{:?}", reader.compression()).to_lowercase();
    info.dense_keys = reader.dense_keys();
    info.read = reader.stats().clone();
    info.reads = info.references - writes;
    info.writes = writes;
    Ok(info)
}

/// The report's numbers from the whole stream's distances (the reader's fields are
/// filled in by the caller).
fn exact(sd: &StackDistance, sizes: Option<Vec<u64>>) -> TraceInfo {
    let footprint = sd.distinct() as u64;
    let sizes = sizes.unwrap_or_else(|| default_sizes(footprint));
    let references = sd.references();
    let lru_mrc = sd
        .miss_ratio_curve(&sizes)
        .into_iter()
        .map(|(entries, misses, miss_ratio)| MrcPoint {
            entries,
            hits: references - misses,
            misses,
            miss_ratio,
        })
        .collect();
    report(
        references,
        footprint,
        sd.cold(),
        ReuseSummary::of(|x| sd.quantile(x).map(u64::from)),
        lru_mrc,
        None,
    )
}

/// The report's numbers estimated from a SHARDS sample (`max_keys` for a fixed size).
fn sampled(
    shards: &impl SampledCurve,
    sizes: Option<Vec<u64>>,
    max_keys: Option<u64>,
) -> TraceInfo {
    let references = shards.references();
    let footprint = shards.distinct_estimate().round() as u64;
    let sizes = sizes.unwrap_or_else(|| default_sizes(footprint));
    let lru_mrc = sizes
        .iter()
        .map(|&entries| {
            let miss_ratio = shards.miss_ratio(entries);
            let misses = (miss_ratio * references as f64).round() as u64;
            MrcPoint {
                entries,
                hits: references - misses.min(references),
                misses: misses.min(references),
                miss_ratio,
            }
        })
        .collect();
    report(
        references,
        footprint,
        (shards.cold_estimate().round() as u64).min(references),
        ReuseSummary::of(|x| shards.quantile(x)),
        lru_mrc,
        Some(SampleInfo {
            method: shards.method(),
            rate: shards.rate(),
            max_keys,
            sampled_references: shards.sampled_references(),
            sampled_keys: shards.sampled_keys(),
        }),
    )
}

fn report(
    references: u64,
    footprint: u64,
    cold: u64,
    reuse_distance: ReuseSummary,
    lru_mrc: Vec<MrcPoint>,
    sample: Option<SampleInfo>,
) -> TraceInfo {
    TraceInfo {
        trace: String::new(),
        format: "",
        sniffed: None,
        compression: String::new(),
        dense_keys: false,
        read: mmsim_trace::ReadStats::default(),
        references,
        reads: 0,
        writes: 0,
        footprint_pages: footprint,
        footprint_mib: footprint as f64 * 4096.0 / (1 << 20) as f64,
        cold,
        reuse_distance,
        lru_mrc,
        sample,
    }
}

/// 1, 2, 5, 10, 20, 50 and 100 % of the footprint, at least one entry, without repeats.
pub fn default_sizes(footprint: u64) -> Vec<u64> {
    let mut v: Vec<u64> = [1u64, 2, 5, 10, 20, 50, 100]
        .iter()
        .map(|p| (footprint * p / 100).max(1))
        .collect();
    v.dedup();
    v
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The text report `mmsim trace info` prints.
pub fn render_info(i: &TraceInfo) -> String {
    let mut s = String::new();
    let r = &i.read;
    s += &format!("trace        {}\n", i.trace);
    match &i.sniffed {
        Some(why) => s += &format!("format       {} (detected: {why})\n", i.format),
        None => s += &format!("format       {}\n", i.format),
    }
    s += &format!("compression  {}\n", i.compression);
    if i.dense_keys {
        s += "keys         dense (numbered by first appearance at conversion; replayed without a key map)\n";
    }
    s += &format!(
        "records      {} read → {} references ({} reads, {} writes){}\n",
        thousands(r.records),
        thousands(r.references),
        thousands(r.references - r.writes),
        thousands(r.writes),
        if i.references < r.references {
            format!("; {} analysed (--limit)", thousands(i.references))
        } else {
            String::new()
        }
    );
    let skipped: Vec<String> = r
        .skipped()
        .into_iter()
        .map(|(what, n)| format!("{} {what}", thousands(n)))
        .collect();
    s += &format!(
        "skipped      {}\n",
        if skipped.is_empty() {
            "nothing".to_string()
        } else {
            skipped.join(", ")
        }
    );
    s += &format!(
        "footprint    {} distinct pages ({:.1} MiB at 4 KiB)\n",
        thousands(i.footprint_pages),
        i.footprint_mib
    );
    let q = |d: Option<u64>| d.map_or("-".to_string(), thousands);
    s += &format!(
        "reuse        {} first references ({:.2} %); LRU stack distance p50 {}, p90 {}, p99 {}, max {}\n",
        thousands(i.cold),
        i.cold as f64 * 100.0 / i.references.max(1) as f64,
        q(i.reuse_distance.p50),
        q(i.reuse_distance.p90),
        q(i.reuse_distance.p99),
        q(i.reuse_distance.max),
    );
    match &i.sample {
        None => s += "\nLRU miss-ratio curve (one pass; each row equals `mmsim run --policy lru --memcg-max <entries>p`):\n",
        Some(sm) => {
            let rate = format!("{:.6}", sm.rate)
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string();
            let rate = match sm.max_keys {
                None => format!("at rate {rate}"),
                Some(n) => format!("of at most {} keys, rate {rate} at the end", thousands(n)),
            };
            s += &format!(
                "sample       {} {rate} (2^24 hash buckets): {} of the references, {} \
                 keys; footprint, first references, distances and the curve are estimates\n",
                sm.method,
                thousands(sm.sampled_references),
                thousands(sm.sampled_keys)
            );
            s += "\nLRU miss-ratio curve, estimated from the sample (without --sample: exact):\n";
        }
    }
    s += &format!(
        "{:>12} {:>13} {:>12} {:>12} {:>11}\n",
        "entries", "of footprint", "hits", "misses", "miss ratio"
    );
    for p in &i.lru_mrc {
        s += &format!(
            "{:>12} {:>12.1}% {:>12} {:>12} {:>11.6}\n",
            thousands(p.entries),
            p.entries as f64 * 100.0 / i.footprint_pages.max(1) as f64,
            thousands(p.hits),
            thousands(p.misses),
            p.miss_ratio
        );
    }
    s
}
