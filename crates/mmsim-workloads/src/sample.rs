//! Sampled runs (SHARDS, Waldspurger, Park, Garthwaite and Ahmad, "Efficient MRC
//! Construction with SHARDS", FAST '15): a scenario's `[sample]` table, or `mmsim run
//! --sample RATE`, runs a spatially hashed sample of the pages on a machine scaled by
//! the rate `R`, and scales the counters back by `1 / R`.
//!
//! **Which pages.** A page is kept when the spatial hash of (its file or VMA, its
//! aligned block) modulo `P` = 2^24 is below `R × P` ([`mmsim_trace::shards`]'s
//! [`spatial_hash`], the same function `trace info --sample` uses). The decision is a
//! function of the page, so every access to a kept page is kept and none to another:
//! the kept pages' whole reuse pattern survives, and the sampled LRU stack distances
//! are about `R` times the whole run's. A trace replay samples the trace's keys
//! before they are numbered, so the key map holds the kept keys only.
//!
//! **Blocks, and readahead.** Sampling single pages would cut every sequential run
//! into isolated pages: `ondemand_readahead` (mm/readahead.c) would never see a
//! sequential stream, fault-around and `filemap_read`'s batches would read pages that
//! are not in the sample. So file-backed targets (`file`, `mmap`, `mmap-exec`) are
//! sampled by aligned blocks of a quarter of the bdi's `ra_pages` (`read_ahead_kb /
//! 16` pages, 8 by default; the first window of a small sequential read,
//! `get_init_ra_size`, is 4 to 16 pages): a kept block is kept whole, and a read
//! crossing blocks is cut into the reads of its kept blocks. A larger block keeps
//! longer runs intact but leaves fewer sampled units, and the variance grows with
//! the block: on the ARC OLTP trace at 1 % (128 MiB, `lru`) the miss-ratio error is
//! 0.005 with 1-page blocks, 0.001 with 8 and 0.022 with 32 (the whole window). Readahead windows inside a block behave as in the
//! whole run; a window that would cross into the next kept block (which in the
//! sample follows it in the file's page numbers only if it followed it in the whole
//! run) reads the pages beyond, as the kernel would. Anonymous targets are sampled
//! per page (swap readahead, `page-cluster`, reads swap slots, which the sample
//! allocates densely as it goes). `block_pages` overrides both.
//!
//! **Dense anonymous pages.** An anonymous workload's kept pages are renumbered in
//! address order, the kept page of rank `k` in its VMA becoming page `k` (a table of
//! 12 bytes per 64 pages, built as the pages are first asked for). Left in place,
//! a 1 % sample would leave one present PTE in a hundred: MGLRU's page-table walk and
//! look-around (`walk_pte_range`, `lru_gen_look_around`, v6.1+) clear accessed bits
//! per PTE table and decide from the young PTEs they find among the present ones, so
//! a sparse table made them find and clear little. The sampled run then found its
//! pages young at eviction instead and scanned up to 2.1 times the whole run's pages
//! per page it freed (zipf 0.9 over 4 GiB anonymous memory on 1 GiB, MGLRU; classic
//! LRU, which reads accessed bits through the rmap one folio at a time, was not
//! affected). Renumbered, the sample's page tables are as full as the whole run's.
//! Trace replays need no renumbering: their keys are numbered in order of first
//! appearance among the kept keys. File pages keep their offsets (readahead and
//! fault-around read neighbouring offsets, and the blocks above keep runs whole).
//!
//! **Drawing only kept events.** Filtering costs a whole run's generation: every
//! event is drawn before its page is known to be kept. A zipf workload with
//! `sampler = "alias"` instead draws the kept events themselves
//! ([`crate::zipf::KeptRanks`]: the zipf law conditioned on the kept pages, and a
//! geometric number of offered events between two kept ones), so its cost is per kept
//! event; `events_offered` is still exactly its `accesses`. The default
//! rejection-inversion zipf and the other generators filter.
//!
//! **The machine.** `memory`, `memcg_max`, the swap size and `[[cgroup]]` limits are
//! multiplied by `R` (rounded down to pages); the watermarks are the whole machine's
//! times `R` (`MachineConfig::sample_rate`): the kernel derives `min_free_kbytes`
//! from the square root of memory (`init_per_zone_wmark_min`), so on the sampled
//! memory alone the reserve would be `√(1/R)` times too large a fraction.
//! `watermark_scale_factor` is a fraction of memory and scales by itself. A
//! workload's compute time (`Event::Think`) is multiplied by `R` (the remainder
//! carried, so the total is exact), so that the sampled run's simulated time, which
//! the per-event costs make about `R` times the whole run's, keeps the same ratio of
//! compute to memory work. `warmup_events` counts sampled events (`× R`).
//!
//! **What does not scale** (and what error remains, see BENCHMARKS.md):
//! kswapd's batches (`SWAP_CLUSTER_MAX` = 32 pages) and the per-CPU lists' batches
//! are fixed sizes, so the sampled machine reclaims in larger fractions of its
//! memory and wakes kswapd about `R` times as often per page; MGLRU's generations
//! turn over with the scanned pages, which scale, but `min_ttl_ms`, the flusher's 5 s
//! period, `dirty_expire_centisecs` and PSI's averaging windows are wall times in a
//! run whose simulated time is about `R` times shorter; huge pages (2 MiB, 512
//! pages) are larger than a sampled block. The sample's size also bounds the
//! accuracy: with few kept pages (below ~1,000) the miss ratio has a large variance.
//!
//! **Counters.** The result's counters (`accesses`, `hits`, `misses`, /proc/vmstat,
//! per-group `memory.stat`, pages in use, the times) are multiplied by `1 / R` and
//! marked as estimates in [`ScenarioResult::sample`](crate::ScenarioResult) and in a
//! warning. `accesses` is exact (the page accesses offered to the sample), `misses`
//! the sample's times `1 / R`, and `hits` the rest: the `SHARDS_adj` correction
//! (§4.3 of the paper), which attributes the difference between the sample's size
//! and `R ×` the accesses to hits, so `miss_ratio` is the sample's misses over `R ×`
//! the accesses offered (the sample's own ratio is `sample.miss_ratio_sample`).

use mmsim_core::{Event, MachineConfig, Size, PAGE_SIZE};
use mmsim_trace::shards::{spatial_hash, MIN_RATE, MODULUS};
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;
use crate::scenario::{Scenario, Target};

/// Largest `block_pages`: 1024 pages (4 MiB, one `MAX_ORDER` block).
pub const MAX_BLOCK_PAGES: u32 = 1024;

/// A scenario's `[sample]` table: SHARDS-sampled run at `rate`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleSpec {
    /// The sampling rate `R`, in `[2^-24, 1]` (rounded to a multiple of `2^-24`).
    pub rate: f64,
    /// Pages sampled together (a power of two, 1..=1024); absent: `read_ahead_kb / 16`
    /// (a quarter of the readahead window) for file-backed targets, 1 for anonymous
    /// ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_pages: Option<u32>,
}

impl SampleSpec {
    /// Checks the rate and block size; the error names the field.
    pub fn validate(&self) -> Result<(), (String, String)> {
        if !(self.rate.is_finite() && (MIN_RATE..=1.0).contains(&self.rate)) {
            return Err((
                "sample.rate".into(),
                format!(
                    "{} is out of range (0, 1] (at least 2^-24 = {MIN_RATE:e}: pages are \
                     kept when their hash modulo 2^24 is below rate × 2^24)",
                    self.rate
                ),
            ));
        }
        if let Some(b) = self.block_pages {
            if !(1..=MAX_BLOCK_PAGES).contains(&b) || !b.is_power_of_two() {
                return Err((
                    "sample.block_pages".into(),
                    format!("{b} is not a power of two in [1, {MAX_BLOCK_PAGES}]"),
                ));
            }
        }
        Ok(())
    }

    /// The hash threshold `T = round(R × P)`, at least 1.
    pub fn threshold(&self) -> u64 {
        ((self.rate * MODULUS as f64).round() as u64).clamp(1, MODULUS)
    }

    /// The rate in effect, `T / P`.
    pub fn effective_rate(&self) -> f64 {
        self.threshold() as f64 / MODULUS as f64
    }

    /// log2 of the block a workload on `target` is sampled by.
    pub fn block_shift(&self, target: Target, machine: &MachineConfig) -> u32 {
        let pages = match (self.block_pages, target) {
            (Some(b), _) => b,
            (None, Target::Anon) => 1,
            (None, _) => (machine.read_ahead_kb / 16).clamp(1, MAX_BLOCK_PAGES),
        };
        // A power of two at most `pages` (read_ahead_kb need not be one).
        31 - pages.leading_zeros()
    }
}

/// Scales a size by the rate, rounded down to whole pages (at least one page).
fn scale_size(s: Size, rate: f64) -> Size {
    let pages = ((s.pages() as f64 * rate) as u64).max(1);
    Size(pages * PAGE_SIZE)
}

/// The scenario a sampled run simulates: `s` with its machine (memory, `memcg_max`,
/// swap size, watermarks through `sample_rate`), its groups' limits and its
/// `warmup_events` scaled by the rate. Errors when the scaled memory falls below the
/// simulator's minimum (the rate is too small for the machine).
pub fn scaled(s: &Scenario, spec: &SampleSpec) -> Result<Scenario, WorkloadError> {
    let invalid = |field: &str, message: String| WorkloadError::Invalid {
        file: s.source.clone(),
        field: field.into(),
        message,
    };
    spec.validate().map_err(|(f, m)| invalid(&f, m))?;
    let rate = spec.effective_rate();
    let mut t = s.clone();
    let m = &mut t.machine;
    let min = mmsim_core::config::MIN_SAMPLED_MEMORY_PAGES;
    let pages = (m.memory.pages() as f64 * rate) as u64;
    if pages < min {
        let need = min as f64 / m.memory.pages() as f64;
        return Err(invalid(
            "sample.rate",
            format!(
                "{} is too small for this machine: {} × {} = {} pages, below the \
                 simulator's minimum for a sampled machine, {min} pages (1M); use a rate of at least {need:.2e} \
                 or a larger machine",
                spec.rate,
                m.memory,
                spec.rate,
                pages
            ),
        ));
    }
    m.memory = Size(pages * PAGE_SIZE);
    m.memcg_max = m.memcg_max.map(|x| scale_size(x, rate));
    m.swap.size = m.swap.size.map(|x| scale_size(x, rate));
    m.sample_rate = Some(rate);
    crate::cgroups::scale_limits(&mut t, rate);
    t.warmup_events = t
        .warmup_events
        .map(|w| ((w as f64 * rate).round() as u64).max(1));
    Ok(t)
}

/// The kept pages of one anonymous VMA, numbered densely in address order: page `i`
/// is the kept page of rank `bases[i / 64] + popcount(bits[i / 64] below i % 64)`.
/// Built lazily, 64 pages at a time, up to the highest page asked for: 12 bytes per
/// 64 pages of the VMA's used range.
#[derive(Clone, Debug, Default)]
struct DenseVma {
    bases: Vec<u32>,
    bits: Vec<u64>,
}

/// Bits of a page index that select its page within a [`DenseVma`] chunk.
const CHUNK_SHIFT: u32 = 6;

/// The per-page decision and the event filter of one workload.
#[derive(Clone, Debug)]
pub struct PageSampler {
    threshold: u64,
    shift: u32,
    /// The remainder of scaled `Think` times, in 2^-24 ns.
    carry: u64,
    /// Events offered (generated before sampling), `Think` excluded.
    offered: u64,
    /// Reused buffer of the filter.
    scratch: Vec<Event>,
    /// For an anonymous workload: each VMA's kept pages renumbered densely, by VMA id
    /// (see the module overview, "Dense anonymous pages"); None for file-backed ones.
    dense: Option<Vec<DenseVma>>,
    /// The file of each open file description (`Sim::open_file`), by
    /// descriptor: a read through one is cut by its file's blocks.
    fd_files: Vec<u32>,
}

impl PageSampler {
    /// The sampler of `spec` for a workload on `target` of `machine`.
    pub fn new(spec: &SampleSpec, target: Target, machine: &MachineConfig) -> PageSampler {
        PageSampler {
            threshold: spec.threshold(),
            shift: spec.block_shift(target, machine),
            carry: 0,
            offered: 0,
            scratch: Vec::new(),
            dense: (target == Target::Anon).then(Vec::new),
            fd_files: Vec::new(),
        }
    }

    /// The file of each descriptor the workload reads through
    /// ([`Event::FdRead`]), by descriptor.
    pub fn set_fd_files(&mut self, files: Vec<u32>) {
        self.fd_files = files;
    }

    /// Whether an anonymous workload's kept pages are renumbered densely.
    pub fn renumbers(&self) -> bool {
        self.dense.is_some()
    }

    /// Where page `index` of anonymous VMA `vma` goes in the sampled run: its rank
    /// among the VMA's kept pages, or None when it is not kept. Pages of a file-backed
    /// workload keep their index (None when not kept).
    #[inline]
    pub fn place(&mut self, vma: u32, index: u32) -> Option<u32> {
        let (threshold, shift) = (self.threshold, self.shift);
        let keeps = move |i: u64| kept(threshold, shift, u64::from(vma), i);
        let Some(dense) = self.dense.as_mut() else {
            return keeps(u64::from(index)).then_some(index);
        };
        if dense.len() <= vma as usize {
            dense.resize_with(vma as usize + 1, DenseVma::default);
        }
        let d = &mut dense[vma as usize];
        let chunk = (index >> CHUNK_SHIFT) as usize;
        while d.bits.len() <= chunk {
            let c = d.bits.len() as u64;
            let base = match (d.bases.last(), d.bits.last()) {
                (Some(b), Some(w)) => b + w.count_ones(),
                _ => 0,
            };
            let first = c << CHUNK_SHIFT;
            let word = (0..64).fold(0u64, |w, j| w | (u64::from(keeps(first + j)) << j));
            d.bases.push(base);
            d.bits.push(word);
        }
        let bit = index & 63;
        let word = d.bits[chunk];
        (word >> bit & 1 == 1).then(|| d.bases[chunk] + (word & ((1u64 << bit) - 1)).count_ones())
    }

    /// The dense range of anonymous `[index, index + pages)` in `vma`: the kept pages
    /// in it, renumbered (see [`place`](PageSampler::place)); None when it holds none.
    fn place_range(&mut self, vma: u32, index: u32, pages: u32) -> Option<(u32, u32)> {
        if self.dense.is_none() {
            return Some((index, pages));
        }
        let end = index.saturating_add(pages);
        let first = (index..end).find_map(|i| self.place(vma, i))?;
        let last = (index..end).rev().find_map(|i| self.place(vma, i))?;
        Some((first, last - first + 1))
    }

    /// The rate in effect, `threshold / 2^24`.
    pub fn rate(&self) -> f64 {
        self.threshold as f64 / MODULUS as f64
    }

    /// Pages per sampled block.
    pub fn block_pages(&self) -> u32 {
        1 << self.shift
    }

    /// Whether a trace key (one key space) is kept: its block's hash.
    #[inline]
    pub fn keeps_key(&self, key: u64) -> bool {
        spatial_hash(key >> self.shift) % MODULUS < self.threshold
    }

    /// Whether page `index` of `space` (a VMA, or a file: see [`file_space`]) is kept.
    #[inline]
    pub fn keeps(&self, space: u64, index: u32) -> bool {
        kept(self.threshold, self.shift, space, u64::from(index))
    }

    /// Counts `n` events offered to the sample (trace replays, which filter keys).
    pub fn offer(&mut self, n: u64) {
        self.offered += n;
    }

    /// Page accesses offered so far (an access 1, a read or write its pages; `Think`
    /// not counted): the unit of the simulator's `accesses`.
    pub fn offered(&self) -> u64 {
        self.offered
    }

    /// Keeps the sampled part of `events[from..]`: accesses to kept pages, the kept
    /// blocks of each read or write (a request crossing blocks is cut into one
    /// request per run of kept blocks), every `Think` scaled by the rate. Returns the
    /// events now at `from..`.
    pub fn filter(&mut self, events: &mut Vec<Event>, from: usize) -> usize {
        self.scratch.clear();
        self.scratch.extend(events.drain(from..));
        let mut scratch = std::mem::take(&mut self.scratch);
        for &e in &scratch {
            match e {
                Event::Access { vma, index, write } => {
                    self.offered += 1;
                    if let Some(index) = self.place(vma, index) {
                        events.push(Event::Access { vma, index, write });
                    }
                }
                Event::FileRead { file, index, pages } => {
                    self.offered += u64::from(pages.max(1));
                    self.cut(events, file, index, pages, |file, index, pages| {
                        Event::FileRead { file, index, pages }
                    });
                }
                Event::FdRead { fd, index, pages } => {
                    self.offered += u64::from(pages.max(1));
                    match self.fd_files.get(fd as usize) {
                        Some(&file) => self.cut(events, file, index, pages, |_, index, pages| {
                            Event::FdRead { fd, index, pages }
                        }),
                        // An unknown descriptor: the run counts it out of range.
                        None => events.push(e),
                    }
                }
                Event::FileWrite { file, index, pages } => {
                    self.offered += u64::from(pages.max(1));
                    self.cut(events, file, index, pages, |file, index, pages| {
                        Event::FileWrite { file, index, pages }
                    });
                }
                // Pages outside the sample were never faulted: zapping
                // them is a no-op, so the range passes whole (its kept
                // pages, renumbered, for an anonymous workload).
                Event::Discard { vma, index, pages } => {
                    if let Some((index, pages)) = self.place_range(vma, index, pages) {
                        events.push(Event::Discard { vma, index, pages });
                    }
                }
                Event::Collapse { vma, index, pages } => {
                    if let Some((index, pages)) = self.place_range(vma, index, pages) {
                        events.push(Event::Collapse { vma, index, pages });
                    }
                }
                // The advice and the remap are of the whole VMA, sampled or not.
                // A fork's child stores to its own copy, not sampled. A sync's
                // range passes whole: a file keeps its page indices, and the
                // pages outside the sample are never cached, so not written.
                // A close is of the whole descriptor.
                Event::ThpAdvice { .. }
                | Event::FdClose { .. }
                | Event::Remap { .. }
                | Event::Fork { .. }
                | Event::FileSync { .. } => events.push(e),
                Event::Think { ns } => {
                    let t = u128::from(ns) * u128::from(self.threshold) + u128::from(self.carry);
                    self.carry = (t % u128::from(MODULUS)) as u64;
                    let ns = (t / u128::from(MODULUS)) as u64;
                    if ns > 0 {
                        events.push(Event::Think { ns });
                    }
                }
            }
        }
        scratch.clear();
        self.scratch = scratch;
        events.len() - from
    }

    /// Pushes the runs of kept blocks of the request `[index, index + pages)` of
    /// `file`, made by `make`.
    fn cut(
        &self,
        out: &mut Vec<Event>,
        file: u32,
        index: u32,
        pages: u16,
        make: impl Fn(u32, u32, u16) -> Event,
    ) {
        let space = file_space(file);
        let end = u64::from(index) + u64::from(pages);
        let mut at = u64::from(index);
        let mut run: Option<u64> = None;
        while at < end {
            let block_end = (((at >> self.shift) + 1) << self.shift).min(end);
            let kept = self.keeps(space, at as u32);
            match (kept, run) {
                (true, None) => run = Some(at),
                (false, Some(s)) => {
                    out.push(make(file, s as u32, (at - s) as u16));
                    run = None;
                }
                _ => {}
            }
            at = block_end;
        }
        if let Some(s) = run {
            out.push(make(file, s as u32, (end - s) as u16));
        }
    }
}

/// Whether page `index` of `space` is in a sample of hash threshold `threshold` and
/// blocks of `1 << shift` pages ([`PageSampler::keeps`]).
#[inline]
fn kept(threshold: u64, shift: u32, space: u64, index: u64) -> bool {
    spatial_hash((space << 40) ^ (index >> shift)) % MODULUS < threshold
}

/// The key space of file `file` (VMAs use their id; files are set apart by bit 32).
#[inline]
pub fn file_space(file: u32) -> u64 {
    (1 << 32) | u64::from(file)
}

/// What a sampled run was, in its result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleReport {
    /// The rate in effect, `T / 2^24`.
    pub rate: f64,
    /// The factor the counters were multiplied by, `1 / rate`.
    pub scale: f64,
    /// Pages per sampled block, per workload (in workload order).
    pub block_pages: Vec<u32>,
    /// Page accesses the workloads generated before sampling (an access 1, a read or
    /// write its pages, `Think` 0): the result's `accesses`.
    pub events_offered: u64,
    /// Events the sample kept (what the machine ran).
    pub events_kept: u64,
    /// The sample's own miss ratio: its misses over its accesses.
    pub miss_ratio_sample: f64,
    /// The `SHARDS_adj` estimate, the result's `miss_ratio`: the sample's misses over
    /// `rate × events_offered`, clamped to [0, 1].
    pub miss_ratio_adj: f64,
    /// The note shown with the result: counters are estimates.
    pub note: String,
}

/// The note of a sampled result for the rate a user gave, e.g. "sampled at 1% (…):
/// counters are estimates ×100".
pub fn note(rate: f64) -> String {
    format!(
        "sampled at {}% (SHARDS spatial sampling of pages): counters are estimates ×{}",
        significant(rate * 100.0),
        significant(1.0 / rate)
    )
}

/// `x` with at most 4 significant digits, without trailing zeros.
fn significant(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Multiplies a sampled run's counters by `1 / rate` (see the module overview).
pub fn scale_result(r: &mut mmsim_core::RunResult, rate: f64) {
    let f = 1.0 / rate;
    let up = |x: &mut u64| *x = (*x as f64 * f).round() as u64;
    let a = &mut r.access;
    for x in [
        &mut a.accesses,
        &mut a.hits,
        &mut a.misses,
        &mut a.file_pages_read,
        &mut a.out_of_range,
        &mut a.dropped_killed,
    ] {
        up(x);
    }
    r.vmstat.scale(f);
    up(&mut r.memcg_usage_pages);
    if let Some(m) = &mut r.memcg_max_pages {
        up(m);
    }
    up(&mut r.memcg_max_events);
    up(&mut r.swap_used_pages);
    up(&mut r.pcp_pages);
    up(&mut r.anon_thp_pages);
    for w in &mut r.watermarks {
        up(w);
    }
    for g in r.memcg.values_mut() {
        g.scale(f);
    }
    for t in [
        &mut r.runtime_s,
        &mut r.kswapd_cpu_s,
        &mut r.reclaim_stall_s,
        &mut r.io_wait_s,
        &mut r.lru_lock_wait_s,
    ] {
        *t *= f;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampler(rate: f64, block: u32) -> PageSampler {
        PageSampler::new(
            &SampleSpec {
                rate,
                block_pages: Some(block),
            },
            Target::File,
            &MachineConfig::default(),
        )
    }

    #[test]
    fn anonymous_pages_are_renumbered_densely_in_address_order() {
        let spec = SampleSpec {
            rate: 0.1,
            block_pages: None,
        };
        let mut s = PageSampler::new(&spec, Target::Anon, &MachineConfig::default());
        assert!(s.renumbers());
        let kept: Vec<u32> = (0..100_000u32).filter(|&i| s.keeps(3, i)).collect();
        // Asked out of order: the rank does not depend on the order of the questions.
        for (rank, &i) in kept.iter().enumerate().rev() {
            assert_eq!(s.place(3, i), Some(rank as u32), "page {i}");
        }
        assert!((0..100_000u32)
            .filter(|i| kept.binary_search(i).is_err())
            .all(|i| s.place(3, i).is_none()));
        // Another VMA has its own numbering from 0.
        let first = (0..).find(|&i| s.keeps(4, i)).unwrap();
        assert_eq!(s.place(4, first), Some(0));
        // A discard's range becomes the kept pages in it, renumbered.
        let (a, b) = (kept[10], kept[20]);
        assert_eq!(s.place_range(3, a, b - a), Some((10, 10)));
        assert_eq!(s.place_range(3, kept[10] + 1, 0), None);
        // File-backed workloads keep their offsets.
        let mut f = sampler(0.1, 1);
        assert!(!f.renumbers());
        assert_eq!(f.place(3, kept[5]), Some(kept[5]));
    }

    #[test]
    fn filtered_anonymous_accesses_land_on_dense_pages() {
        let spec = SampleSpec {
            rate: 0.01,
            block_pages: None,
        };
        let mut s = PageSampler::new(&spec, Target::Anon, &MachineConfig::default());
        let mut ev: Vec<Event> = (0..200_000u32)
            .map(|index| Event::Access {
                vma: 1,
                index,
                write: false,
            })
            .collect();
        let n = s.filter(&mut ev, 0);
        assert!((1_800..2_200).contains(&n), "{n}");
        for (k, e) in ev.iter().enumerate() {
            assert_eq!(
                *e,
                Event::Access {
                    vma: 1,
                    index: k as u32,
                    write: false
                }
            );
        }
    }

    #[test]
    fn kept_fraction_is_the_rate() {
        let s = sampler(0.1, 1);
        let kept = (0..1_000_000u32).filter(|&i| s.keeps(7, i)).count();
        assert!((kept as f64 / 1e6 - 0.1).abs() < 0.002, "{kept}");
    }

    #[test]
    fn blocks_are_kept_whole() {
        let s = sampler(0.25, 32);
        for b in 0..1000u32 {
            let first = s.keeps(3, b * 32);
            assert!((0..32).all(|i| s.keeps(3, b * 32 + i) == first));
        }
    }

    #[test]
    fn reads_are_cut_into_kept_runs() {
        let mut s = sampler(0.5, 4);
        let f = file_space(0);
        // Blocks 0..4 of file 0: find which are kept and check the cut read.
        let kept: Vec<bool> = (0..4).map(|b| s.keeps(f, b * 4)).collect();
        let mut ev = vec![Event::FileRead {
            file: 0,
            index: 2,
            pages: 12,
        }];
        let n = s.filter(&mut ev, 0);
        let mut want = Vec::new();
        let mut run: Option<u32> = None;
        for p in 2..14u32 {
            let k = kept[(p / 4) as usize];
            match (k, run) {
                (true, None) => run = Some(p),
                (false, Some(st)) => {
                    want.push((st, p - st));
                    run = None;
                }
                _ => {}
            }
        }
        if let Some(st) = run {
            want.push((st, 14 - st));
        }
        let got: Vec<(u32, u32)> = ev
            .iter()
            .map(|e| match *e {
                Event::FileRead { index, pages, .. } => (index, u32::from(pages)),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(got, want);
        assert_eq!(n, want.len());
        assert_eq!(s.offered(), 12);
    }

    #[test]
    fn think_time_is_scaled_exactly() {
        let mut s = sampler(0.25, 1);
        let mut ev = vec![Event::Think { ns: 3 }; 4];
        s.filter(&mut ev, 0);
        let total: u64 = ev
            .iter()
            .map(|e| match *e {
                Event::Think { ns } => ns,
                _ => 0,
            })
            .sum();
        // 4 × 3 ns × 0.25 = 3 ns, whatever the rounding of each.
        assert_eq!(total, 3);
        assert_eq!(s.offered(), 0);
    }

    #[test]
    fn rates_out_of_range_are_named() {
        for r in [0.0, -1.0, 1.5, f64::NAN] {
            let e = SampleSpec {
                rate: r,
                block_pages: None,
            }
            .validate()
            .unwrap_err();
            assert_eq!(e.0, "sample.rate");
        }
        let e = SampleSpec {
            rate: 0.5,
            block_pages: Some(3),
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.0, "sample.block_pages");
    }

    #[test]
    fn note_names_rate_and_factor() {
        assert!(
            note(0.001).starts_with("sampled at 0.1% ("),
            "{}",
            note(0.001)
        );
        assert!(note(0.003).ends_with("estimates ×333.3"), "{}", note(0.003));
        assert_eq!(
            note(0.01),
            "sampled at 1% (SHARDS spatial sampling of pages): counters are estimates ×100"
        );
    }
}
