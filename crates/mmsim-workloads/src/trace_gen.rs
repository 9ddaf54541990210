//! Trace replay: a trace's keys turned into page accesses, numbered by first appearance
//! (`trace_keys = "dense"`, the default) or kept as page offsets in their files
//! (`trace_keys = "offset"`, [`TraceKeys`]).
//!
//! Under `offset` the replay keeps the layout the kernel saw, so readahead
//! (`ondemand_readahead` of mm/readahead.c), mmap read-around (`do_sync_mmap_readahead`
//! of mm/filemap.c) and fault-around (`do_fault_around` of mm/memory.c) act on the
//! trace's real neighbours, as on Linux 6.12. A key's bits 40 and up name its file (the
//! `(dev, ino)` number of a `filemap` trace, [`mmsim_trace::filemap::key`]; 0 for a block
//! device's pages), its low 40 bits the page.
//!
//! # Faults through mappings
//!
//! With `trace_faults = "mapped"` (or `"mapped-exec"`, `VM_EXEC`) on a `filemap` trace,
//! each traced file is also mapped whole by the replay's task, `trace_fault_mappings`
//! times (default once), and the trace's page faults and fault-around
//! ([`mmsim_trace::Record::fault`]) become loads through a mapping (`Event::Access`)
//! instead of reads: the page is faulted in (`do_fault`: fault-around of the cached
//! neighbours, else `filemap_fault` with mmap read-around) and mapped with a young PTE,
//! and reclaim's `folio_referenced` finds that reference as the kernel's
//! `folio_check_references` does (mm/vmscan.c, v6.18). The kernel reports a fault only
//! for a page its process had not mapped, so the n-th fault record of a page goes to
//! mapping `n mod trace_fault_mappings` (processes are not in the trace). A
//! fault-around event (`mm_filemap_map_pages`) prints the window `do_fault_around`
//! tried, not the pages it mapped: `filemap_map_pages` maps the cached ones and reads
//! none. It is replayed as one fault at the window's first page, whose own fault-around
//! maps the cached pages of its window (aligned on the file offset here, on the virtual
//! address in the kernel); the window's other pages are counted in
//! [`TraceReport::fault_around_left`], not replayed (a load of each would read the
//! missing ones in). Known departure: when the window's first page is not cached, that
//! replayed fault is a major fault with mmap read-around, which the kernel's
//! fault-around never does (it reads nothing); and the window's first page is usually
//! not the page that faulted. The per-page fault counts that pick the mapping are never
//! reset, so a page evicted and faulted again by the same process goes to the next
//! mapping, where it may still be mapped. A filemap trace converted to the native
//! format loses [`mmsim_trace::Record::fault`] and replays its faults as reads.
//!
//! # Bounded memory
//!
//! The trace is read twice: a first pass finds the files and the last page referenced in
//! each (references at or beyond the per-file limit `pages`, default
//! [`OFFSET_DEFAULT_PAGES`], are left out and counted), then each file is created with
//! that size, so no page-cache array grows past it. Files whose sizes add up to more than
//! [`OFFSET_MAX_TOTAL_PAGES`] are an error before the run, naming the trace and the
//! total. Distinct pages are counted in one bit per page of the layout. A trace has no
//! record of `i_size`: a file ends at its last referenced page, so readahead stops there
//! where the kernel's might read on to the real end of file. Standard input cannot be
//! read twice and is refused.

use std::path::Path;

use mmsim_core::memcg::MemcgId;
use mmsim_core::{Advice, Event, Sim};
use mmsim_trace::filemap::PAGE_BITS;
use mmsim_trace::{Densifier, ReadOptions, Record, TraceReader};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;
use crate::gen::{Sink, Writes};
use crate::scenario::{
    Target, TraceFaults, TraceFormat, TraceKeys, MAX_PAGES, OFFSET_DEFAULT_PAGES,
    OFFSET_MAX_TOTAL_PAGES,
};

/// Records read from the trace at a time.
const TRACE_BATCH: usize = 4096;

/// Page bits of a key under `offset`.
const PAGE_MASK: u64 = (1 << PAGE_BITS) - 1;

/// The most trace files an `offset` replay follows (the filemap reader's largest
/// file number space, 2^24); keys naming a higher file are skipped and counted.
const MAX_OFFSET_FILES: u64 = 1 << 24;

/// No sink for this trace file number.
const NO_SINK: u32 = u32::MAX;

/// What a trace replay read, for reports.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceReport {
    /// The workload's name.
    pub workload: String,
    /// The trace file as opened.
    pub path: String,
    /// The format it was read as (`text`, `lirs`, `arc`, `oracle-general`).
    pub format: String,
    /// Whether the format was detected (`format = "auto"`) rather than given.
    pub format_detected: bool,
    /// Why detection chose the format (absent when it was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detected_because: Option<String>,
    /// Compression detected from the content (`none`, `gzip`, `xz`, `zstd`).
    pub compression: String,
    /// What the reader read: records, references (ARC lines and block requests expand
    /// to several), writes, and every kind of skipped line or request, counted.
    #[serde(flatten)]
    pub read: mmsim_trace::ReadStats,
    /// Distinct keys, i.e. pages of the region touched.
    pub distinct: u32,
    /// Whether the replay stopped at `limit` before the end of the trace.
    pub limited: bool,
    /// How keys became pages: `dense` (by first appearance) or `offset` (page offsets
    /// in their files).
    #[serde(default)]
    pub keys: String,
    /// Under `offset`: the files (or mappings) the trace's files became.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub files: u32,
    /// Under `offset`: the pages those files span together (their sizes).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub layout_pages: u64,
    /// Under `offset`: references skipped because their page is at or beyond the
    /// per-file limit (`pages`), or their file number is beyond 2^24 − 1.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub skipped_beyond_limit: u64,
    /// Under `trace_requests`: references replayed as a further page of the read or
    /// write before them (the pages of multi-page requests after each one's first).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub request_pages_joined: u64,
    /// Under `trace_faults = "mapped"` / `"mapped-exec"`: references replayed as loads
    /// through a mapping of their file (the trace's page faults and fault-around).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub mapped_references: u64,
    /// Under `trace_faults = "mapped"` / `"mapped-exec"`: the pages of fault-around
    /// windows (`mm_filemap_map_pages`) after each window's first, not replayed: the
    /// window's first page is a fault, whose own fault-around maps the cached ones.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub fault_around_left: u64,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

/// The key → page mapping of a replay.
enum KeyMap {
    /// By first appearance.
    Dense(Densifier),
    /// Page offsets in the trace's files.
    Offset(Box<Offsets>),
}

/// The layout of an `offset` replay: which sink each trace file number goes to, each
/// sink's size, and the pages touched (one bit each).
struct Offsets {
    /// Per trace file number: the index of its sink, or [`NO_SINK`].
    sink_of: Vec<u32>,
    /// The sinks, in file-number order.
    sinks: Vec<Sink>,
    /// Each sink's size in pages.
    sizes: Vec<u64>,
    /// Under `trace_faults = "mapped"` / `"mapped-exec"`: per sink, the mappings of its
    /// file that fault and fault-around records ([`Record::fault`]) go to (one per
    /// process of `trace_fault_mappings`); empty otherwise.
    mapped: Vec<Vec<Sink>>,
    /// Per sink, per page: how many fault records reached the page so far (mod the
    /// mappings); the n-th goes to mapping n. Grown on first fault.
    faulted: Vec<Vec<u8>>,
    /// Each sink's touched pages, a bit per page, grown on first touch.
    touched: Vec<Vec<u64>>,
    distinct: u64,
    skipped: u64,
    /// References sent to a mapping (`TraceReport::mapped_references`).
    mapped_refs: u64,
    /// Fault-around pages left to the replay's own fault-around
    /// (`TraceReport::fault_around_left`).
    around_left: u64,
}

impl Offsets {
    /// The layout of `sizes_by_file` (per trace file number; 0: not referenced) on
    /// `sinks`, one per referenced file in file-number order (a last sink beyond them,
    /// if any, is reached by no key).
    fn new(sizes_by_file: &[u64], sinks: Vec<Sink>) -> Offsets {
        let mut sink_of = vec![NO_SINK; sizes_by_file.len()];
        let mut sizes = Vec::with_capacity(sinks.len());
        for (file, &size) in sizes_by_file.iter().enumerate() {
            if size > 0 {
                sink_of[file] = sizes.len() as u32;
                sizes.push(size);
            }
        }
        debug_assert!(sizes.len() <= sinks.len());
        Offsets {
            sink_of,
            mapped: Vec::new(),
            faulted: Vec::new(),
            touched: vec![Vec::new(); sinks.len()],
            sinks,
            sizes,
            distinct: 0,
            skipped: 0,
            mapped_refs: 0,
            around_left: 0,
        }
    }

    /// The `Event::FileSync` of sync record `r` (a writeback the program started,
    /// `Record::sync`) on its file's sink, or `None` (counted as skipped) when its
    /// file is outside the layout or is not replayed as a file. A range of more
    /// pages than an event holds (65,535) is synced to the end of the file.
    #[cold]
    fn sync_event(&mut self, r: &Record) -> Option<Event> {
        let file = r.key >> PAGE_BITS;
        let page = r.key & PAGE_MASK;
        let s = match self.sink_of.get(file as usize) {
            Some(&s) if s != NO_SINK && page < self.sizes[s as usize] => s as usize,
            _ => {
                self.skipped += 1;
                return None;
            }
        };
        let Sink::File(file) = self.sinks[s] else {
            self.skipped += 1;
            return None;
        };
        Some(Event::FileSync {
            file,
            index: page as u32,
            pages: u16::try_from(r.sync.pages()).unwrap_or(0),
            wait: r.sync.wait(),
        })
    }

    /// The sink and page of `key`, or `None` (counted) if it is outside the layout; a
    /// fault record goes to one of its file's mappings when there are any (the n-th
    /// fault of a page to mapping n modulo their number).
    #[inline]
    fn map(&mut self, key: u64, fault: bool) -> Option<(Sink, u32)> {
        let file = key >> PAGE_BITS;
        let page = key & PAGE_MASK;
        let s = match self.sink_of.get(file as usize) {
            Some(&s) if s != NO_SINK && page < self.sizes[s as usize] => s as usize,
            _ => {
                self.skipped += 1;
                return None;
            }
        };
        let bits = &mut self.touched[s];
        let word = (page / 64) as usize;
        if word >= bits.len() {
            bits.resize(word + 1, 0);
        }
        let bit = 1u64 << (page % 64);
        if bits[word] & bit == 0 {
            bits[word] |= bit;
            self.distinct += 1;
        }
        let to = match self.mapped.get(s) {
            Some(maps) if fault => {
                self.mapped_refs += 1;
                let seen = &mut self.faulted[s];
                if page as usize >= seen.len() {
                    seen.resize(page as usize + 1, 0);
                }
                let n = &mut seen[page as usize];
                let to = maps[usize::from(*n)];
                *n = if usize::from(*n) + 1 == maps.len() {
                    0
                } else {
                    *n + 1
                };
                to
            }
            _ => self.sinks[s],
        };
        Some((to, page as u32))
    }
}

/// Under `trace_requests`: extends `last`, a read or write of `file` pages ending
/// just before `page`, by that page when `to` names the same file and the access
/// kind matches, up to the 65,535 pages an event holds. A request cut by the caller's batch (its first pages in an event
/// already handed over) continues as a new read from where it was cut.
#[inline]
fn join(last: Option<&mut Event>, to: Sink, page: u32, write: bool) -> bool {
    let Sink::File(file) = to else { return false };
    match last {
        Some(Event::FileRead {
            file: f,
            index,
            pages,
        }) if !write && *f == file && *pages < u16::MAX && *index + u32::from(*pages) == page => {
            *pages += 1;
            true
        }
        Some(Event::FileWrite {
            file: f,
            index,
            pages,
        }) if write && *f == file && *pages < u16::MAX && *index + u32::from(*pages) == page => {
            *pages += 1;
            true
        }
        _ => false,
    }
}

/// A trace replay: the reader, the key → page mapping, the current batch.
pub(crate) struct TraceGen {
    what: String,
    reader: TraceReader,
    keys: KeyMap,
    records: Vec<Record>,
    /// The dense ids of a batch of records (scratch, reused).
    ids: Vec<u32>,
    pos: usize,
    left: Option<u64>,
    detected: bool,
    /// `trace_requests`: a multi-page request's pages go into one event.
    requests: bool,
    /// References joined to the event before them (`TraceReport::request_pages_joined`).
    joined: u64,
}

impl std::fmt::Debug for TraceGen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceGen")
            .field("reader", &self.reader)
            .field("distinct", &self.distinct())
            .field("left", &self.left)
            .finish_non_exhaustive()
    }
}

/// The trace at `path`, opened in `format`; `read_calls`: a filemap trace's reads
/// replayed once however many `filemap_get_pages` calls they made
/// (`mmsim_trace::ReadOptions::read_calls`); `syncs`: its `ext4_writepages` events read
/// as sync records (`mmsim_trace::ReadOptions::syncs`).
fn open_reader(
    path: &Path,
    format: TraceFormat,
    read_calls: bool,
    syncs: bool,
) -> Result<TraceReader, mmsim_trace::TraceError> {
    let options = ReadOptions {
        read_calls,
        syncs,
        ..Default::default()
    };
    match format {
        TraceFormat::Auto => TraceReader::open_auto_with(path, options),
        TraceFormat::Fixed(f) => TraceReader::open_with(path, f, options),
    }
}

impl TraceGen {
    /// A replay of the trace at `path` whose keys go to `sink`: numbered by first
    /// appearance (at most `pages` distinct keys), or under `offset` taken as pages of
    /// that one region of `pages` pages (keys of other files or beyond it skipped).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open(
        what: &str,
        path: &Path,
        format: TraceFormat,
        read_calls: bool,
        limit: Option<u64>,
        pages: u64,
        keys: TraceKeys,
        sink: Sink,
    ) -> Result<TraceGen, WorkloadError> {
        let reader = open_reader(path, format, read_calls, false).map_err(|source| {
            WorkloadError::Trace {
                what: what.to_string(),
                source,
            }
        })?;
        let keys = match keys {
            TraceKeys::Dense => {
                let max_distinct = pages.min(MAX_PAGES - 1) as u32;
                KeyMap::Dense(Densifier::with_name(reader.name(), max_distinct))
            }
            TraceKeys::Offset => {
                KeyMap::Offset(Box::new(Offsets::new(&[pages.min(MAX_PAGES)], vec![sink])))
            }
        };
        Ok(TraceGen::with(what, reader, keys, limit, format))
    }

    fn with(
        what: &str,
        reader: TraceReader,
        keys: KeyMap,
        limit: Option<u64>,
        format: TraceFormat,
    ) -> TraceGen {
        TraceGen {
            what: what.to_string(),
            reader,
            keys,
            records: Vec::with_capacity(TRACE_BATCH),
            ids: Vec::with_capacity(TRACE_BATCH),
            pos: 0,
            left: limit,
            detected: format == TraceFormat::Auto,
            requests: false,
            joined: 0,
        }
    }

    /// An `offset` replay of the trace at `path` with its own files: reads the trace
    /// once for the layout (see the module overview), creates task `name` in `memcg`
    /// with one file or mapping per referenced trace file on `target`, then opens the
    /// trace again for the replay. Returns the replay and its first sink.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn setup_offset(
        sim: &mut Sim,
        what: &str,
        name: &str,
        path: &Path,
        format: TraceFormat,
        read_calls: bool,
        limit: Option<u64>,
        pages: Option<u64>,
        target: Target,
        advice: Advice,
        memcg: MemcgId,
        requests: bool,
        faults: TraceFaults,
        mappings: u8,
    ) -> Result<(TraceGen, Sink), WorkloadError> {
        let trace_err = |source| WorkloadError::Trace {
            what: what.to_string(),
            source,
        };
        let invalid = |message: String| WorkloadError::Invalid {
            file: what.to_string(),
            field: "trace_keys".into(),
            message,
        };
        if path == Path::new("-") {
            return Err(invalid(
                "`offset` reads the trace twice (once for its layout): give a file, not \
                 standard input"
                    .into(),
            ));
        }
        let per_file = pages.unwrap_or(OFFSET_DEFAULT_PAGES);
        // A replay into files replays the program's own writebacks (a filemap
        // trace's `ext4_writepages`: fsync, sync_file_range) as `Event::FileSync`.
        let syncs = target == Target::File;
        let mut scan = open_reader(path, format, read_calls, syncs).map_err(trace_err)?;
        let mut sizes: Vec<u64> = Vec::new();
        let mut batch = Vec::with_capacity(TRACE_BATCH);
        let mut left = limit;
        loop {
            let want = match left {
                Some(0) => break,
                Some(l) => l.min(TRACE_BATCH as u64) as usize,
                None => TRACE_BATCH,
            };
            let got = scan.read_batch(&mut batch, want).map_err(trace_err)?;
            if got == 0 {
                break;
            }
            if let Some(l) = &mut left {
                *l -= got as u64;
            }
            for r in &batch {
                let (file, page) = (r.key >> PAGE_BITS, r.key & PAGE_MASK);
                // A sync references no page: it does not size its file.
                if file >= MAX_OFFSET_FILES || page >= per_file || r.sync.is_sync() {
                    continue;
                }
                let file = file as usize;
                if file >= sizes.len() {
                    sizes.resize(file + 1, 0);
                }
                sizes[file] = sizes[file].max(page + 1);
            }
        }
        let total: u64 = sizes.iter().sum();
        let files = sizes.iter().filter(|&&s| s > 0).count();
        if total > OFFSET_MAX_TOTAL_PAGES {
            return Err(WorkloadError::Invalid {
                file: what.to_string(),
                field: "pages".into(),
                message: format!(
                    "trace {}: its {files} files span {total} pages up to their last \
                     references, more than the {OFFSET_MAX_TOTAL_PAGES} an offset replay \
                     may lay out; lower `pages` (the largest file, now {per_file}) or use \
                     trace_keys = \"dense\"",
                    scan.name()
                ),
            });
        }
        let setup = |source| WorkloadError::Setup {
            what: what.to_string(),
            source,
        };
        let task = sim.add_task(name);
        sim.attach_task(task, memcg).map_err(setup)?;
        let mut sinks = Vec::with_capacity(files);
        let mut mapped = Vec::new();
        for (number, &size) in sizes.iter().enumerate().filter(|(_, &s)| s > 0) {
            let file_name = if files == 1 {
                name.to_string()
            } else {
                format!("{name}#{number}")
            };
            let sink = match target {
                Target::Anon => Sink::Vma(sim.mmap_anon(task, size).map_err(setup)?),
                Target::File => {
                    let file = sim.add_file(&file_name, size).map_err(setup)?;
                    sim.open(file, task).map_err(setup)?;
                    sim.fadvise(file, advice).map_err(setup)?;
                    if faults != TraceFaults::Read {
                        // `trace_faults`: the task also maps the whole file (shared,
                        // read), as a program maps its binaries and libraries; the
                        // trace's faults and fault-around are loads through it.
                        let exec = faults == TraceFaults::MappedExec;
                        let mut maps = Vec::with_capacity(usize::from(mappings));
                        for _ in 0..mappings {
                            let vma = sim.mmap_file(task, file, 0, size, exec).map_err(setup)?;
                            sim.madvise(vma, advice).map_err(setup)?;
                            maps.push(Sink::Vma(vma));
                        }
                        mapped.push(maps);
                    }
                    Sink::File(file)
                }
                Target::Mmap | Target::MmapExec => {
                    let file = sim.add_file(&file_name, size).map_err(setup)?;
                    let vma = sim
                        .mmap_file(task, file, 0, size, target == Target::MmapExec)
                        .map_err(setup)?;
                    sim.madvise(vma, advice).map_err(setup)?;
                    Sink::Vma(vma)
                }
                Target::MmapPrivate => {
                    let file = sim.add_file(&file_name, size).map_err(setup)?;
                    let vma = sim.mmap_file_private(task, file, 0, size).map_err(setup)?;
                    sim.madvise(vma, advice).map_err(setup)?;
                    Sink::Vma(vma)
                }
            };
            sinks.push(sink);
        }
        if sinks.is_empty() {
            // Nothing within the limit: a one-page region nothing reaches, so the run
            // reports every reference as skipped.
            let sink = Sink::setup_in(sim, name, target, 1, advice, memcg).map_err(setup)?;
            sinks.push(sink);
        }
        let first = sinks[0];
        drop(scan);
        let reader = open_reader(path, format, read_calls, syncs).map_err(trace_err)?;
        let mut offsets = Offsets::new(&sizes, sinks);
        offsets.faulted = vec![Vec::new(); mapped.len()];
        offsets.mapped = mapped;
        let mut gen = TraceGen::with(
            what,
            reader,
            KeyMap::Offset(Box::new(offsets)),
            limit,
            format,
        );
        gen.requests = requests;
        Ok((gen, first))
    }

    /// Appends up to `max` events to `out`; returns how many (0: the trace is done).
    /// With a `sampler` (a sampled run, `crate::sample`), only the records whose key
    /// it keeps: the rest are counted as offered and dropped before the key map sees
    /// them, so the map holds kept keys only.
    pub(crate) fn fill(
        &mut self,
        sink: Sink,
        writes: Writes,
        rng: &mut Pcg64Mcg,
        out: &mut Vec<Event>,
        max: usize,
        mut sampler: Option<&mut crate::sample::PageSampler>,
    ) -> Result<usize, WorkloadError> {
        let mut n = 0;
        while n < max {
            if self.pos == self.records.len() {
                let want = match self.left {
                    Some(0) => break,
                    Some(l) => l.min(TRACE_BATCH as u64) as usize,
                    None => TRACE_BATCH,
                };
                self.pos = 0;
                let got = self
                    .reader
                    .read_batch(&mut self.records, want)
                    .map_err(|source| WorkloadError::Trace {
                        what: self.what.clone(),
                        source,
                    })?;
                if got == 0 {
                    break;
                }
                if let KeyMap::Dense(dense) = &mut self.keys {
                    // A native trace written with dense keys: ids without a table
                    // (not in a sampled run, whose kept keys are no longer dense).
                    if dense.distinct() == 0 && sampler.is_none() && self.reader.dense_keys() {
                        dense.assume_dense();
                    }
                }
                if let Some(l) = &mut self.left {
                    *l -= got as u64;
                }
            }
            if let Some(smp) = sampler.as_deref_mut() {
                let (mut i, mut syncs) = (self.pos, 0u64);
                while i < self.records.len() && n < max {
                    let r = self.records[i];
                    i += 1;
                    if r.sync.is_sync() {
                        // A sync passes whole (`crate::sample`) and is no
                        // page access: not offered to the sampler.
                        syncs += 1;
                        if let KeyMap::Offset(o) = &mut self.keys {
                            if let Some(ev) = o.sync_event(&r) {
                                out.push(ev);
                                n += 1;
                            }
                        }
                        continue;
                    }
                    if !smp.keeps_key(r.key) {
                        continue;
                    }
                    if let KeyMap::Offset(o) = &mut self.keys {
                        if r.fault && r.cont && !o.mapped.is_empty() {
                            o.around_left += 1;
                            continue;
                        }
                    }
                    let ev = match &mut self.keys {
                        KeyMap::Dense(dense) => {
                            let page = dense.id(r.key).map_err(|source| WorkloadError::Trace {
                                what: self.what.clone(),
                                source,
                            })?;
                            Some(sink.event(page, r.write || writes.draw(rng)))
                        }
                        KeyMap::Offset(offsets) => offsets
                            .map(r.key, r.fault)
                            .map(|(to, page)| to.event(page, r.write || writes.draw(rng))),
                    };
                    if let Some(ev) = ev {
                        out.push(ev);
                        n += 1;
                    }
                }
                smp.offer((i - self.pos) as u64 - syncs);
                self.pos = i;
                continue;
            }
            let take = (self.records.len() - self.pos).min(max - n);
            let batch = &self.records[self.pos..self.pos + take];
            match &mut self.keys {
                KeyMap::Dense(dense) => {
                    // The batch's ids first (the key table's slots prefetched ahead),
                    // then its events; on an error, the events before it are kept.
                    self.ids.clear();
                    let res = dense.ids(batch, &mut self.ids);
                    for (r, &page) in batch.iter().zip(&self.ids) {
                        out.push(sink.event(page, r.write || writes.draw(rng)));
                    }
                    res.map_err(|source| WorkloadError::Trace {
                        what: self.what.clone(),
                        source,
                    })?;
                    n += take;
                }
                KeyMap::Offset(offsets) => {
                    for r in batch {
                        if r.sync.is_sync() {
                            if let Some(ev) = offsets.sync_event(r) {
                                out.push(ev);
                                n += 1;
                            }
                            continue;
                        }
                        if r.fault && r.cont && !offsets.mapped.is_empty() {
                            // A fault-around window after its first page: left to
                            // the replay's own `do_fault_around` (see `map`).
                            offsets.around_left += 1;
                            continue;
                        }
                        if let Some((to, page)) = offsets.map(r.key, r.fault) {
                            let write = r.write || writes.draw(rng);
                            if self.requests && r.cont && join(out.last_mut(), to, page, write) {
                                self.joined += 1;
                                continue;
                            }
                            out.push(to.event(page, write));
                            n += 1;
                        }
                    }
                }
            }
            self.pos += take;
        }
        Ok(n)
    }

    fn distinct(&self) -> u32 {
        match &self.keys {
            KeyMap::Dense(d) => d.distinct(),
            KeyMap::Offset(o) => o.distinct.min(u64::from(u32::MAX)) as u32,
        }
    }

    /// What the replay read so far, for workload `workload`.
    pub(crate) fn report(&self, workload: &str) -> TraceReport {
        let s = self.reader.stats();
        let (keys, files, layout_pages, skipped, mapped, around) = match &self.keys {
            KeyMap::Dense(_) => (TraceKeys::Dense, 0, 0, 0, 0, 0),
            KeyMap::Offset(o) => (
                TraceKeys::Offset,
                o.sizes.len() as u32,
                o.sizes.iter().sum(),
                o.skipped,
                o.mapped_refs,
                o.around_left,
            ),
        };
        TraceReport {
            workload: workload.to_string(),
            path: self.reader.name().to_string(),
            format: self.reader.format().name().to_string(),
            format_detected: self.detected,
            compression: self.reader.compression().name().to_string(),
            detected_because: self.reader.sniffed().map(|x| x.reason.to_string()),
            read: s.clone(),
            distinct: self.distinct(),
            limited: self.left == Some(0),
            keys: keys.name().to_string(),
            files,
            layout_pages,
            skipped_beyond_limit: skipped,
            request_pages_joined: self.joined,
            mapped_references: mapped,
            fault_around_left: around,
        }
    }
}
