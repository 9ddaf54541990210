//! `mmsim bench`: simulated accesses per second and simulator memory per page.
//!
//! A zipf(0.9) event list over `--pages` pages (ranks scattered over the region) is
//! generated once, then replayed on a fresh machine per policy, with `memory.max` =
//! `--memory-fraction` × pages and memory large enough that only the limit reclaims.
//! Only `Sim::run` is timed. Above [`CHUNK`] accesses the list is not held whole (a
//! billion events took 15.6 GB): each policy regenerates the same stream in chunks of
//! [`CHUNK`] events, and only the replay of each chunk is timed. This is a benchmark, not a test: the numbers depend on the
//! host.

use std::io::Write;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use mmsim_core::PolicyName;
use mmsim_workloads::bench::AccessBench;
use mmsim_workloads::{Target, ZipfSampler};

use crate::UsageError;

/// Flags of `mmsim bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Number of accesses.
    #[arg(long, default_value_t = 10_000_000)]
    pub accesses: u64,
    /// Region size in pages.
    #[arg(long, default_value_t = 1_000_000)]
    pub pages: u64,
    /// memory.max as a fraction of the region, (0, 1].
    #[arg(long, default_value_t = 0.10)]
    pub memory_fraction: f64,
    /// Policies to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "lru,cost")]
    pub policy: Vec<PolicyName>,
    /// file (fd reads) or anon (loads; zram swap is added).
    #[arg(long, default_value = "file")]
    pub target: Target,
    /// Zipf exponent.
    #[arg(long, default_value_t = 0.9)]
    pub theta: f64,
    /// Seed of the access stream.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The zipf rank sampler: rejection-inversion (rand_distr, the default) or alias
    /// (an alias table over rank buckets; another stream, same distribution).
    #[arg(long, default_value = "rejection-inversion")]
    pub zipf_sampler: ZipfSampler,
    /// Events per chunk when streaming (tests use small chunks).
    #[arg(long, default_value_t = CHUNK, hide = true)]
    pub chunk_events: usize,
}

/// Events generated and replayed at a time above which a run streams its events: the
/// default 10 M accesses stay one list, as the recorded benchmarks were measured.
pub const CHUNK: usize = 1 << 24;

/// Largest `--accesses` (time, not memory, is the limit).
const MAX_ACCESSES: u64 = 1 << 40;

/// Peak resident set of this process (VmHWM), KiB.
fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resets VmHWM to the current RSS (Linux: `echo 5 > /proc/self/clear_refs`); best effort.
fn reset_hwm() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Generates the benchmark's stream chunk by chunk and replays each on `sim`; returns
/// the seconds spent replaying (generation is not timed) and the events replayed.
fn replay_in_chunks(
    b: &AccessBench,
    sim: &mut mmsim_core::Sim,
    events: usize,
) -> Result<(f64, u64)> {
    let mut gen = b.generator()?;
    let mut chunk = Vec::with_capacity(events);
    let (mut secs, mut replayed) = (0.0, 0u64);
    loop {
        chunk.clear();
        if gen.fill(&mut chunk, events)? == 0 {
            return Ok((secs, replayed));
        }
        let start = Instant::now();
        sim.run(&chunk);
        secs += start.elapsed().as_secs_f64();
        replayed += chunk.len() as u64;
    }
}

/// Runs `mmsim bench`.
pub fn bench(args: BenchArgs) -> Result<()> {
    let bad = |m: String| anyhow::Error::new(UsageError(m));
    if !(args.memory_fraction > 0.0 && args.memory_fraction <= 1.0) {
        return Err(bad(format!(
            "--memory-fraction {}: out of range (0, 1]",
            args.memory_fraction
        )));
    }
    if !(1..=1 << 31).contains(&args.pages) {
        return Err(bad(format!(
            "--pages {}: out of range [1, 2^31]",
            args.pages
        )));
    }
    if !(1..=MAX_ACCESSES).contains(&args.accesses) {
        return Err(bad(format!(
            "--accesses {}: out of range [1, 2^40]",
            args.accesses
        )));
    }
    if !(0.0..=5.0).contains(&args.theta) {
        return Err(bad(format!("--theta {}: out of range [0, 5]", args.theta)));
    }
    if args.target != Target::File && args.target != Target::Anon {
        return Err(bad(format!("--target {}: use file or anon", args.target)));
    }
    let b = AccessBench {
        pages: args.pages,
        accesses: args.accesses,
        theta: args.theta,
        memory_fraction: args.memory_fraction,
        target: args.target,
        seed: args.seed,
        sampler: args.zipf_sampler,
    };
    let mut out = crate::output::stdout();
    let t0 = Instant::now();
    // Held whole when it fits in one chunk (generated once for every policy).
    let chunk = args.chunk_events.max(1);
    let whole = if args.accesses <= chunk as u64 {
        Some(b.events()?)
    } else {
        None
    };
    let generated = match &whole {
        Some(_) => format!("generated in {:.2} s", t0.elapsed().as_secs_f64()),
        None => format!("streamed in chunks of {chunk} events"),
    };
    writeln!(
        out,
        "bench: {} accesses, zipf({}, {} sampler) scattered over {} pages, target {}, memory.max {} pages ({}), {generated}",
        args.accesses,
        args.theta,
        args.zipf_sampler,
        args.pages,
        args.target,
        b.memcg_pages(),
        args.memory_fraction,
    )?;
    writeln!(
        out,
        "{:<16} {:>12} {:>10} {:>12} {:>10} {:>10} {:>14}",
        "policy", "accesses/s", "run s", "miss ratio", "B/folio", "B/page", "peak RSS MiB"
    )?;
    for policy in &args.policy {
        let resettable = reset_hwm();
        let mut sim = b
            .sim(*policy)
            .with_context(|| format!("setting up the {} machine", policy.name()))?;
        let (secs, replayed) = match &whole {
            Some(events) => {
                let start = Instant::now();
                sim.run(events);
                (start.elapsed().as_secs_f64(), events.len() as u64)
            }
            None => replay_in_chunks(&b, &mut sim, chunk)?,
        };
        let r = sim.finish();
        let hwm = vm_hwm_kib().map_or("?".to_string(), |k| {
            format!(
                "{:.1}{}",
                k as f64 / 1024.0,
                if resettable { "" } else { "*" }
            )
        });
        writeln!(
            out,
            "{:<16} {:>10.2} M {:>10.3} {:>12.6} {:>10.1} {:>10.2} {:>14}",
            policy.name(),
            replayed as f64 / secs / 1e6,
            secs,
            r.miss_ratio,
            r.sim_bytes_per_resident_folio,
            r.sim_bytes_per_tracked_page,
            hwm
        )?;
    }
    let list_events = whole.as_ref().map_or(chunk, Vec::len);
    writeln!(
        out,
        "(peak RSS: VmHWM of this process during the policy's run, including the {:.1} MiB event {})",
        (list_events * std::mem::size_of::<mmsim_core::Event>()) as f64 / (1 << 20) as f64,
        if whole.is_some() { "list" } else { "chunk" }
    )?;
    Ok(())
}
