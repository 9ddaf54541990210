//! Executing a scenario's event stream on the real machine: setup of files and mappings,
//! the event loop, `getrusage` deltas, cleanup.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mmsim_core::{Advice, Event, VmaThpAdvice, PAGE_SIZE};
use mmsim_workloads::{Batch, Target};
use serde::Serialize;

use crate::error::ProbeError;
use crate::plan::Plan;
use crate::EventCounts;

mod fds;
mod setup;

use setup::{
    fadvise, fadvise_code, madvise_code, open_region_file, thp_madvise_code, Cleanup, Mapping,
};

/// Default of `--max-memory`: 1 GiB of mapped regions.
pub const DEFAULT_MAX_MEMORY: u64 = 1 << 30;
/// Default of `--max-disk`: 4 GiB of region files.
pub const DEFAULT_MAX_DISK: u64 = 4 << 30;

/// Creates `path` (or opens the FIFO there, which blocks until a reader opens it),
/// writes the pid, and waits (polling every 10 ms) until someone removes it. `flag`
/// names the option in errors.
fn hold_on(path: &Path, flag: &'static str) -> Result<(), ProbeError> {
    std::fs::write(path, format!("{}\n", std::process::id())).map_err(|source| {
        ProbeError::Syscall {
            call: flag,
            path: path.to_path_buf(),
            source,
        }
    })?;
    while path.exists() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Ok(())
}

/// How a `Think { ns }` event is executed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ThinkMode {
    /// Spin on the monotonic clock for `ns` (the CPU stays busy, as the simulated task
    /// computes).
    #[default]
    Busy,
    /// `nanosleep` for `ns` (the process sleeps; its CPU time does not grow).
    Sleep,
}

/// How to run: where the files go, what to keep, the guards.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Directory of the region files (required when the scenario has file-backed
    /// workloads). Nothing outside it is created, opened for writing or removed.
    pub dir: Option<PathBuf>,
    /// Use a region file that already exists (it must be a regular file of exactly the
    /// region's size) instead of failing; missing ones are created.
    pub reuse: bool,
    /// Keep the files this run created (default: removed at the end, also after an
    /// error).
    pub keep: bool,
    /// Create the files and stop (implies `keep`): to prepare them outside the
    /// memory-limited cgroup, whose page cache would otherwise be charged the writes.
    pub prepare_only: bool,
    /// Before running: `fsync` and `posix_fadvise(DONTNEED)` every region file, so the
    /// page cache starts cold as in the simulator (default true).
    pub evict: bool,
    /// Largest total size of the mapped regions (anon, mmap, mmap-exec), bytes.
    pub max_memory: u64,
    /// Largest total size of the region files, bytes.
    pub max_disk: u64,
    /// How think events are executed.
    pub think: ThinkMode,
    /// A path to hold on: once the last event ran (the mappings still mapped, the
    /// files still open), the probe creates this file and waits until it is removed
    /// (so a DAMON monitor of the process can be read while its address space is
    /// still the workload's). None: no hold.
    pub hold: Option<PathBuf>,
    /// A path to wait on before the first event: once the files are open and the
    /// regions mapped, the probe creates this file and waits until it is removed (so
    /// machine-wide counters, e.g. the mTHP `hugepages-<size>kB/stats`, can be read
    /// right before the workload; a FIFO there lets a shell wait without polling).
    /// None: no wait.
    pub ready: Option<PathBuf>,
    /// The first load of a page of an anonymous region that nothing touched yet
    /// stores a zero byte instead: the kernel then allocates a zero-filled page (a
    /// write fault), where a load would map the shared zero page. This is what the
    /// simulator does for a first load (it has no zero page), so the kernel's
    /// zero-filled pages at swap-out (`swpout_zero`) can be compared with mmsim's
    /// under `machine.swap_zero_pages`. Default false.
    pub anon_read_alloc: bool,
}

impl Default for RunConfig {
    fn default() -> RunConfig {
        RunConfig {
            dir: None,
            reuse: false,
            keep: false,
            prepare_only: false,
            evict: true,
            max_memory: DEFAULT_MAX_MEMORY,
            max_disk: DEFAULT_MAX_DISK,
            think: ThinkMode::Busy,
            hold: None,
            ready: None,
            anon_read_alloc: false,
        }
    }
}

/// Resource use over part of a run (`getrusage(RUSAGE_SELF)` and wall-clock deltas;
/// the faults and blocks include those of the children `Event::Fork` waited for).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Usage {
    /// Events executed in this part.
    pub events: u64,
    /// Wall time, seconds.
    pub wall_s: f64,
    /// Minor page faults (`ru_minflt`).
    pub minflt: i64,
    /// Major page faults (`ru_majflt`): faults that waited for I/O.
    pub majflt: i64,
    /// Blocks read from the filesystem (`ru_inblock`, 512-byte units).
    pub inblock: i64,
    /// Blocks written (`ru_oublock`).
    pub oublock: i64,
    /// Voluntary context switches (`ru_nvcsw`).
    pub nvcsw: i64,
    /// Involuntary context switches (`ru_nivcsw`).
    pub nivcsw: i64,
    /// User CPU time, seconds.
    pub utime_s: f64,
    /// System CPU time, seconds.
    pub stime_s: f64,
}

/// A point in time and the process's counters there.
#[derive(Clone, Copy)]
struct Snapshot {
    at: Instant,
    ru: libc::rusage,
}

impl Snapshot {
    fn now() -> Snapshot {
        // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF cannot fail.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        // The faults and blocks of the children an `Event::Fork` waited for
        // are the workload's too (none without fork).
        // SAFETY: as above; RUSAGE_CHILDREN cannot fail either.
        let mut ch: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ch) };
        ru.ru_minflt += ch.ru_minflt;
        ru.ru_majflt += ch.ru_majflt;
        ru.ru_inblock += ch.ru_inblock;
        ru.ru_oublock += ch.ru_oublock;
        Snapshot {
            at: Instant::now(),
            ru,
        }
    }

    /// What happened from `self` to `later`.
    fn until(&self, later: &Snapshot, events: u64) -> Usage {
        let (a, b) = (&self.ru, &later.ru);
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Usage {
            events,
            wall_s: later.at.duration_since(self.at).as_secs_f64(),
            minflt: b.ru_minflt - a.ru_minflt,
            majflt: b.ru_majflt - a.ru_majflt,
            inblock: b.ru_inblock - a.ru_inblock,
            oublock: b.ru_oublock - a.ru_oublock,
            nvcsw: b.ru_nvcsw - a.ru_nvcsw,
            nivcsw: b.ru_nivcsw - a.ru_nivcsw,
            utime_s: tv(b.ru_utime) - tv(a.ru_utime),
            stime_s: tv(b.ru_stime) - tv(a.ru_stime),
        }
    }
}

/// One workload's line in a [`RunReport`].
#[derive(Clone, Debug, Serialize)]
pub struct RunWorkload {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: &'static str,
    /// Its target.
    pub target: Target,
    /// Its phase.
    pub phase: u32,
    /// Region size in pages.
    pub pages: u64,
    /// The advice applied.
    pub advice: Advice,
    /// Events it issued.
    pub events: u64,
    /// Its real file (not for `anon`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// What happened to the file: `created` (and removed at the end), `created, kept`,
    /// `reused`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_state: Option<String>,
}

/// What a run did: the JSON `mmsim-probe` prints.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// `mmsim-probe`.
    pub probe: &'static str,
    /// The probe's version.
    pub version: &'static str,
    /// The probe's process id (the process whose memory the kernel accounted).
    pub pid: u32,
    /// The scenario's name.
    pub scenario: String,
    /// The seed.
    pub seed: u64,
    /// Whether only the files were prepared (no event ran).
    pub prepare_only: bool,
    /// Events executed.
    pub events: u64,
    /// Events executed per kind.
    pub per_kind: EventCounts,
    /// Per workload.
    pub workloads: Vec<RunWorkload>,
    /// Creating or opening the files and mapping the regions (file writes included).
    pub setup: Usage,
    /// The whole event loop.
    pub run: Usage,
    /// The first `warmup_events` events (with `warmup_events` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Usage>,
    /// The events after the warmup (with `warmup_events` only): compare these with
    /// mmsim's counters, which are zeroed at the same event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<Usage>,
    /// Peak resident set size of the process at the end, KiB (`ru_maxrss`).
    pub maxrss_kb: i64,
    /// A checksum of the bytes read (keeps the loads from being optimised away).
    pub checksum: u64,
    /// How think events were executed.
    pub think: ThinkMode,
    /// Whether the page cache of the files was dropped before the run.
    pub evicted: bool,
    /// `madvise(MADV_COLLAPSE)` calls that returned an error (only when the
    /// run made such calls).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collapse_failed: Option<u64>,
    /// `AnonHugePages` of `/proc/self/smaps_rollup` right after the last
    /// event, KiB: the PMD-mapped anonymous memory the collapses left (only
    /// when the run made `MADV_COLLAPSE` calls; the mappings are still held).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anon_huge_kb: Option<u64>,
    /// The errno number of the last `madvise(MADV_COLLAPSE)` call (0: it
    /// succeeded; only when the run made such calls): EINVAL 22, EBUSY 16 …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collapse_errno: Option<u64>,
    /// In a run with `ThpAdvice` events: `AnonHugePages` of
    /// `/proc/self/smaps_rollup`, KiB, at each zero-length `Think` event after
    /// the first advice (the touch's `snapshots`; absent otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub anon_huge_kb_at: Vec<u64>,
    /// Seconds from the first `ThpAdvice` call to each of those readings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub snapshot_s: Vec<f64>,
    /// Reads and closes through a closed descriptor, which failed with `EBADF`
    /// as the simulator's do (its `bad_fd`; absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub bad_fd: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// `AnonHugePages` of `/proc/self/smaps_rollup`, KiB (None if unreadable).
fn anon_huge_kb() -> Option<u64> {
    let t = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    t.lines()
        .find_map(|l| l.strip_prefix("AnonHugePages:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Checks the scenario against `--max-memory` and `--max-disk`.
pub fn check_limits(plan: &Plan, cfg: &RunConfig) -> Result<(), ProbeError> {
    let (mapped, detail) = plan.mapped_bytes();
    if mapped > cfg.max_memory {
        return Err(ProbeError::Limit {
            what: "mapped memory",
            option: "--max-memory",
            needed: mapped,
            limit: cfg.max_memory,
            detail,
        });
    }
    let (disk, detail) = plan.file_bytes();
    if disk > cfg.max_disk {
        return Err(ProbeError::Limit {
            what: "file space",
            option: "--max-disk",
            needed: disk,
            limit: cfg.max_disk,
            detail,
        });
    }
    Ok(())
}

/// Where Access events of one VMA id go.
#[derive(Clone, Copy)]
struct VmaSlot {
    base: *mut u8,
    pages: u64,
    writable: bool,
    region: usize,
}

/// Where FileRead/FileWrite events of one file id (or FdRead events of one
/// descriptor) go.
#[derive(Clone, Copy)]
struct FileSlot {
    fd: i32,
    pages: u64,
    region: usize,
}

/// The event loop's state.
struct Executor<'a> {
    vmas: Vec<Option<VmaSlot>>,
    files: Vec<Option<FileSlot>>,
    /// Where FdRead events of each open file description go (None: closed).
    fds: Vec<Option<FileSlot>>,
    /// The descriptors themselves (`opens = N`).
    open: fds::OpenFds,
    /// Reads and closes through a closed descriptor (`EBADF`, as the simulator's
    /// `bad_fd`).
    bad_fd: u64,
    /// Path or name of each region, for errors.
    names: &'a [PathBuf],
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    counts: EventCounts,
    checksum: u64,
    think: ThinkMode,
    index: u64,
    /// Per VMA id, with `anon_read_alloc`, one bit per page already touched (empty:
    /// loads are loads).
    touched: Vec<Vec<u64>>,
    /// `madvise(MADV_COLLAPSE)` calls that failed.
    collapse_failed: u64,
    /// The errno of the last one (0: it succeeded).
    collapse_errno: u64,
    /// When the first `ThpAdvice` call returned.
    advised_at: Option<Instant>,
    /// `AnonHugePages` (KiB) and seconds since `advised_at` at each
    /// zero-length `Think` that followed it.
    snapshots: Vec<(u64, f64)>,
}

impl Executor<'_> {
    fn bad(&self, message: String) -> ProbeError {
        ProbeError::BadEvent {
            index: self.index,
            message,
        }
    }

    #[inline]
    fn run(&mut self, events: &[Event]) -> Result<(), ProbeError> {
        for e in events {
            self.step(e)?;
            self.counts.add(e);
            self.index += 1;
        }
        Ok(())
    }

    /// Pages `index..index + pages` lie inside region `region` of `limit`
    /// pages (and are at least one page).
    fn check_pages(
        &self,
        index: u32,
        pages: u32,
        limit: u64,
        region: usize,
    ) -> Result<(), ProbeError> {
        if index as u64 + pages as u64 > limit || pages == 0 {
            return Err(self.bad(format!(
                "pages {index}..{} of {} are beyond its {} pages",
                index as u64 + pages as u64,
                self.names[region].display(),
                limit
            )));
        }
        Ok(())
    }

    /// `pread` (or with `write`, `pwrite`) of `pages` pages from page `index` of
    /// `f`, exactly that many bytes.
    #[inline]
    fn rw(&mut self, f: FileSlot, index: u32, pages: u16, write: bool) -> Result<(), ProbeError> {
        self.check_pages(index, u32::from(pages), f.pages, f.region)?;
        let len = pages as usize * PAGE_SIZE as usize;
        let off = index as i64 * PAGE_SIZE as i64;
        let (call, n) = if write {
            if self.wbuf.len() < len {
                self.wbuf.resize(len, 0xa5);
            }
            // SAFETY: the buffer holds at least `len` bytes.
            let n = unsafe { libc::pwrite(f.fd, self.wbuf.as_ptr().cast(), len, off) };
            ("pwrite", n)
        } else {
            if self.rbuf.len() < len {
                self.rbuf.resize(len, 0);
            }
            // SAFETY: the buffer holds at least `len` bytes.
            let n = unsafe { libc::pread(f.fd, self.rbuf.as_mut_ptr().cast(), len, off) };
            self.checksum = self.checksum.wrapping_add(self.rbuf[0] as u64);
            ("pread", n)
        };
        if n < 0 {
            return Err(ProbeError::last_os(call, &self.names[f.region]));
        }
        if n as usize != len {
            return Err(ProbeError::Short {
                call,
                path: self.names[f.region].clone(),
                message: format!("{len} bytes at offset {off} asked, {n} done"),
            });
        }
        Ok(())
    }

    #[inline]
    fn step(&mut self, e: &Event) -> Result<(), ProbeError> {
        match *e {
            Event::Access { vma, index, write } => {
                let Some(Some(v)) = self.vmas.get(vma as usize).copied() else {
                    return Err(self.bad(format!("no mapped region has VMA id {vma}")));
                };
                if index as u64 >= v.pages {
                    return Err(self.bad(format!(
                        "page {index} of {} is beyond its {} pages",
                        self.names[v.region].display(),
                        v.pages
                    )));
                }
                // SAFETY: `index < pages`, so the byte lies inside the live mapping.
                let p = unsafe { v.base.add(index as usize * PAGE_SIZE as usize) };
                let first = match self.touched[vma as usize].get_mut(index as usize / 64) {
                    Some(w) => {
                        let bit = 1u64 << (index % 64);
                        let first = *w & bit == 0;
                        *w |= bit;
                        first
                    }
                    None => false,
                };
                if !write && first {
                    // `anon_read_alloc`: a first load allocates a zero-filled page.
                    // SAFETY: as below; anonymous regions are writable.
                    unsafe { std::ptr::write_volatile(p, 0) };
                } else if write {
                    if !v.writable {
                        return Err(self.bad(format!(
                            "a store to the executable mapping of {}",
                            self.names[v.region].display()
                        )));
                    }
                    // A store of a non-zero byte: one write fault on a new page, and the
                    // page is never all zeros (the kernel swaps those out as swpout_zero).
                    let tag = (self.index as u8) | 1;
                    // SAFETY: as above; the mapping is writable.
                    unsafe { std::ptr::write_volatile(p, tag) };
                } else {
                    // SAFETY: as above.
                    let b = unsafe { std::ptr::read_volatile(p) };
                    self.checksum = self.checksum.wrapping_add(b as u64);
                }
            }
            Event::FdRead { fd, index, pages } => match self.fds.get(fd as usize).copied() {
                None => return Err(self.bad(format!("no file region has open file {fd}"))),
                // As the simulator: a read through a closed descriptor fails
                // (EBADF) and is counted.
                Some(None) => self.bad_fd += 1,
                Some(Some(f)) => self.rw(f, index, pages, false)?,
            },
            Event::FdClose { fd } => match self.fds.get(fd as usize).copied() {
                None => return Err(self.bad(format!("no file region has open file {fd}"))),
                Some(None) => self.bad_fd += 1,
                Some(Some(_)) => {
                    self.fds[fd as usize] = None;
                    self.open.close(fd);
                }
            },
            Event::FileRead { file, index, pages } | Event::FileWrite { file, index, pages } => {
                let Some(Some(f)) = self.files.get(file as usize).copied() else {
                    return Err(self.bad(format!("no file region has file id {file}")));
                };
                self.rw(f, index, pages, matches!(e, Event::FileWrite { .. }))?;
            }
            Event::FileSync {
                file,
                index,
                pages,
                wait,
            } => {
                let Some(Some(f)) = self.files.get(file as usize).copied() else {
                    return Err(self.bad(format!("no file region has file id {file}")));
                };
                let off = index as i64 * PAGE_SIZE as i64;
                // `pages` 0: to the end of the file (sync_file_range's nbytes 0).
                let len = pages as i64 * PAGE_SIZE as i64;
                let (call, r) = if wait && pages == 0 && index == 0 {
                    // SAFETY: a plain system call on an open descriptor.
                    ("fdatasync", unsafe { libc::fdatasync(f.fd) })
                } else {
                    let flags = if wait {
                        libc::SYNC_FILE_RANGE_WAIT_BEFORE
                            | libc::SYNC_FILE_RANGE_WRITE
                            | libc::SYNC_FILE_RANGE_WAIT_AFTER
                    } else {
                        libc::SYNC_FILE_RANGE_WRITE
                    };
                    // SAFETY: as above.
                    let r = unsafe { libc::sync_file_range(f.fd, off, len, flags) };
                    ("sync_file_range", r)
                };
                if r != 0 {
                    return Err(ProbeError::last_os(call, &self.names[f.region]));
                }
            }
            Event::Discard { vma, index, pages } | Event::Collapse { vma, index, pages } => {
                let collapse = matches!(*e, Event::Collapse { .. });
                let Some(Some(v)) = self.vmas.get(vma as usize).copied() else {
                    return Err(self.bad(format!("no mapped region has VMA id {vma}")));
                };
                self.check_pages(index, pages, v.pages, v.region)?;
                let len = pages as usize * PAGE_SIZE as usize;
                // MADV_COLLAPSE (Linux 6.1+; include/uapi/asm-generic/mman-common.h).
                const MADV_COLLAPSE: i32 = 25;
                let advice = if collapse {
                    MADV_COLLAPSE
                } else {
                    libc::MADV_DONTNEED
                };
                // SAFETY: the range lies inside the live mapping (checked above);
                // MADV_DONTNEED only drops its pages, MADV_COLLAPSE only moves them.
                let r = unsafe {
                    let p = v.base.add(index as usize * PAGE_SIZE as usize);
                    libc::madvise(p.cast(), len, advice)
                };
                // A collapse may fail as the simulator's may (ENOMEM, EBUSY,
                // EAGAIN: the range stays as it was); only a discard must succeed.
                if r != 0 && !collapse {
                    return Err(ProbeError::last_os("madvise", &self.names[v.region]));
                }
                if collapse {
                    self.collapse_failed += u64::from(r != 0);
                    self.collapse_errno = if r != 0 {
                        std::io::Error::last_os_error()
                            .raw_os_error()
                            .map_or(0, |n| n as u64)
                    } else {
                        0
                    };
                }
            }
            Event::Think { ns } => match self.think {
                ThinkMode::Busy => {
                    let end = Instant::now() + Duration::from_nanos(ns);
                    while Instant::now() < end {
                        std::hint::spin_loop();
                    }
                }
                ThinkMode::Sleep => std::thread::sleep(Duration::from_nanos(ns)),
            },
            Event::Remap { .. } => {
                return Err(self.bad("a Remap event: mmsim-probe does not run remap".into()))
            }
            Event::Fork { vma, pages } => {
                let Some(Some(v)) = self.vmas.get(vma as usize).copied() else {
                    return Err(self.bad(format!("no mapped region has VMA id {vma}")));
                };
                let n = u64::from(pages).min(v.pages);
                // SAFETY: the child only stores to pages of the live mapping it
                // inherited and leaves by `_exit`, both async-signal-safe.
                let pid = unsafe { libc::fork() };
                if pid < 0 {
                    return Err(ProbeError::last_os("fork", &self.names[v.region]));
                }
                if pid == 0 {
                    for i in 0..n {
                        // SAFETY: `i < pages`: inside the mapping (anonymous, writable).
                        unsafe {
                            std::ptr::write_volatile(v.base.add((i * PAGE_SIZE) as usize), 1)
                        };
                    }
                    // SAFETY: ends the child without running the parent's destructors.
                    unsafe { libc::_exit(0) };
                }
                let mut status = 0;
                // SAFETY: waits for the child just forked.
                let r = unsafe { libc::waitpid(pid, &mut status, 0) };
                if r != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
                    return Err(ProbeError::last_os("waitpid", &self.names[v.region]));
                }
            }
            Event::ThpAdvice { vma, advice } => {
                let Some(Some(v)) = self.vmas.get(vma as usize).copied() else {
                    return Err(self.bad(format!("no mapped region has VMA id {vma}")));
                };
                let (code, call) = match advice {
                    VmaThpAdvice::Hugepage => (libc::MADV_HUGEPAGE, "madvise(MADV_HUGEPAGE)"),
                    VmaThpAdvice::Nohugepage => (libc::MADV_NOHUGEPAGE, "madvise(MADV_NOHUGEPAGE)"),
                    VmaThpAdvice::None => {
                        return Err(self.bad("a ThpAdvice event without advice".into()))
                    }
                };
                // SAFETY: the whole live mapping; the advice moves no page.
                let r = unsafe {
                    libc::madvise(v.base.cast(), v.pages as usize * PAGE_SIZE as usize, code)
                };
                if r != 0 {
                    return Err(ProbeError::last_os(call, &self.names[v.region]));
                }
                self.advised_at.get_or_insert_with(Instant::now);
            }
        }
        // The touch's `snapshots` (a zero-length Think after the advice is the
        // mark): what the advice led to by then.
        if let (Event::Think { ns: 0 }, Some(t0)) = (*e, self.advised_at) {
            // A reading that fails is an error, not a zero the case would compare.
            let kb = anon_huge_kb().ok_or_else(|| {
                self.bad("no AnonHugePages line in /proc/self/smaps_rollup".into())
            })?;
            self.snapshots.push((kb, t0.elapsed().as_secs_f64()));
        }
        Ok(())
    }
}

/// Sets up every region of `plan` and executes the scenario's event stream on it, single
/// threaded, in this process; `log` gets one line per step of the setup (for `--quiet`
/// to drop).
pub fn run(
    plan: &Plan,
    cfg: &RunConfig,
    log: &mut dyn FnMut(&str),
) -> Result<RunReport, ProbeError> {
    check_limits(plan, cfg)?;
    let s = &plan.scenario;
    let dir = match (&cfg.dir, plan.regions.iter().find(|r| r.target.is_file())) {
        (None, Some(r)) => {
            return Err(ProbeError::Usage(format!(
                "workload[{}] \"{}\" (target {}) needs a real file: give --dir DIR",
                r.workload, r.name, r.target
            )))
        }
        (Some(d), _) => {
            match std::fs::metadata(d) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(ProbeError::Usage(format!(
                        "--dir {}: not a directory",
                        d.display()
                    )))
                }
                Err(source) => {
                    return Err(ProbeError::Syscall {
                        call: "stat (--dir)",
                        path: d.clone(),
                        source,
                    })
                }
            }
            Some(d.as_path())
        }
        (None, None) => None,
    };

    let t_setup = Snapshot::now();
    let mut cleanup = Cleanup {
        created: Vec::new(),
        keep: cfg.keep || cfg.prepare_only,
    };
    // Declared after `cleanup`, so dropped (closed and unmapped) before the files go.
    let mut files: Vec<Option<File>> = Vec::with_capacity(plan.regions.len());
    let mut mappings: Vec<Option<Mapping>> = Vec::with_capacity(plan.regions.len());
    let mut names: Vec<PathBuf> = Vec::with_capacity(plan.regions.len());
    let mut states: Vec<Option<String>> = Vec::with_capacity(plan.regions.len());
    for r in &plan.regions {
        let bytes = r.bytes() as usize;
        let (file, path) = match (&r.file_name, dir) {
            (Some(name), Some(dir)) => {
                let path = dir.join(name);
                let (f, created) = open_region_file(&path, r.pages, cfg.reuse, &mut cleanup)?;
                log(&format!(
                    "{} {} ({} pages) for workload[{}] \"{}\"",
                    if created { "created" } else { "reusing" },
                    path.display(),
                    r.pages,
                    r.workload,
                    r.name
                ));
                states.push(Some(
                    match (created, cleanup.keep) {
                        (false, _) => "reused",
                        (true, true) => "created, kept",
                        (true, false) => "created, removed",
                    }
                    .to_string(),
                ));
                (Some(f), path)
            }
            _ => {
                states.push(None);
                (None, PathBuf::from(format!("anon \"{}\"", r.name)))
            }
        };
        if cfg.prepare_only {
            names.push(path);
            files.push(file);
            mappings.push(None);
            continue;
        }
        if let Some(f) = &file {
            if cfg.evict {
                f.sync_all().map_err(|source| ProbeError::Syscall {
                    call: "fsync",
                    path: path.clone(),
                    source,
                })?;
                fadvise(
                    f,
                    libc::POSIX_FADV_DONTNEED,
                    "posix_fadvise(DONTNEED)",
                    &path,
                )?;
            }
        }
        let mapping = match r.target {
            Target::Anon => {
                let m = Mapping::new(
                    bytes,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    None,
                    &path,
                )?;
                // Without [machine.thp] sizes the simulator has 4 KiB pages only: no
                // transparent huge pages (EINVAL: a kernel without THP, nothing to turn
                // off). With them, the VMA gets the workload's `thp_advice` or
                // else the scenario's `vma_advice`, as mmsim's VMAs do (the
                // machine's sysfs settings are the runner's).
                let thp = &s.machine.thp;
                let advice = if !thp.allows_large_folios() {
                    thp_madvise_code(VmaThpAdvice::Nohugepage)
                } else {
                    thp_madvise_code(r.thp_advice.unwrap_or(thp.vma_advice))
                };
                if let Some((code, call)) = advice {
                    match m.madvise(code, call, &path) {
                        Err(ProbeError::Syscall { source, .. })
                            if source.raw_os_error() == Some(libc::EINVAL) => {}
                        r => r?,
                    }
                }
                Some(m)
            }
            Target::File => {
                let (code, call) = fadvise_code(r.advice);
                fadvise(
                    file.as_ref().expect("file target has a file"),
                    code,
                    call,
                    &path,
                )?;
                None
            }
            Target::Mmap | Target::MmapPrivate | Target::MmapExec => {
                let prot = if r.target == Target::MmapExec {
                    libc::PROT_READ | libc::PROT_EXEC
                } else {
                    libc::PROT_READ | libc::PROT_WRITE
                };
                // mmap-private: MAP_PRIVATE, so that a store copies the page.
                let flags = if r.target == Target::MmapPrivate {
                    libc::MAP_PRIVATE
                } else {
                    libc::MAP_SHARED
                };
                let m = Mapping::new(bytes, prot, flags, file.as_ref(), &path)?;
                let (code, call) = madvise_code(r.advice);
                m.madvise(code, call, &path)?;
                // VM_HUGEPAGE: PMD-size read-around on a fault that misses.
                if let Some((code, call)) = r.thp_advice.and_then(thp_madvise_code) {
                    m.madvise(code, call, &path)?;
                }
                Some(m)
            }
        };
        log(&format!(
            "workload[{}] \"{}\": {} of {} pages, advice {}",
            r.workload,
            r.name,
            r.target,
            r.pages,
            r.advice.name()
        ));
        names.push(path);
        files.push(file);
        mappings.push(mapping);
    }
    // `opens = N`: the workloads' own descriptors, after their files exist.
    let open = if cfg.prepare_only {
        fds::OpenFds::none()
    } else {
        fds::OpenFds::open(plan, &names)?
    };
    let t_ready = Snapshot::now();
    let setup = t_setup.until(&t_ready, 0);

    let mut workloads: Vec<RunWorkload> = plan
        .regions
        .iter()
        .zip(&names)
        .zip(&states)
        .map(|((r, path), state)| RunWorkload {
            name: r.name.clone(),
            kind: r.kind,
            target: r.target,
            phase: r.phase,
            pages: r.pages,
            advice: r.advice,
            events: 0,
            file: r.file_name.as_ref().map(|_| path.clone()),
            file_state: state.clone(),
        })
        .collect();
    let mut report = RunReport {
        probe: "mmsim-probe",
        version: env!("CARGO_PKG_VERSION"),
        pid: std::process::id(),
        scenario: s.name.clone(),
        seed: s.seed,
        prepare_only: cfg.prepare_only,
        events: 0,
        per_kind: EventCounts::default(),
        workloads: Vec::new(),
        setup,
        run: Usage::default(),
        warmup: None,
        measured: None,
        maxrss_kb: 0,
        checksum: 0,
        think: cfg.think,
        evicted: cfg.evict && !cfg.prepare_only,
        collapse_failed: None,
        anon_huge_kb: None,
        collapse_errno: None,
        anon_huge_kb_at: Vec::new(),
        snapshot_s: Vec::new(),
        bad_fd: 0,
    };
    if cfg.prepare_only {
        report.maxrss_kb = t_ready.ru.ru_maxrss;
        report.workloads = workloads;
        return Ok(report);
    }

    let mut ex = Executor {
        vmas: vec![None; plan.vmas()],
        files: vec![None; plan.files()],
        fds: open.slots(plan),
        open,
        bad_fd: 0,
        names: &names,
        rbuf: Vec::new(),
        wbuf: Vec::new(),
        counts: EventCounts::default(),
        checksum: 0,
        think: cfg.think,
        index: 0,
        touched: vec![Vec::new(); plan.vmas()],
        collapse_failed: 0,
        collapse_errno: 0,
        advised_at: None,
        snapshots: Vec::new(),
    };
    for (i, r) in plan.regions.iter().enumerate() {
        match (r.id_kind, &mappings[i], &files[i]) {
            ("vma", Some(m), _) => {
                if cfg.anon_read_alloc && r.target == Target::Anon {
                    ex.touched[r.id as usize] = vec![0; r.pages.div_ceil(64) as usize];
                }
                ex.vmas[r.id as usize] = Some(VmaSlot {
                    base: m.ptr,
                    pages: r.pages,
                    writable: r.target != Target::MmapExec,
                    region: i,
                })
            }
            ("file", None, Some(f)) => {
                ex.files[r.id as usize] = Some(FileSlot {
                    fd: f.as_raw_fd(),
                    pages: r.pages,
                    region: i,
                })
            }
            _ => unreachable!("the plan pairs VMA ids with mappings and file ids with files"),
        }
    }

    let mut stream = plan.stream()?;
    let warmup = s.warmup_events;
    if let Some(r) = &cfg.ready {
        hold_on(r, "write (--ready)")?;
    }
    let mut done = 0u64;
    let mut at_warmup = None;
    let start = Snapshot::now();
    // No start times (the plan rejects them): the stream does not depend on the clock.
    while let Some(batch) = stream.next_batch(0)? {
        let events = match batch {
            Batch::Idle(e) => {
                ex.run(e)?;
                continue;
            }
            Batch::Events(e) => e,
        };
        match warmup {
            Some(w) if done < w && done + events.len() as u64 >= w => {
                let k = (w - done) as usize;
                ex.run(&events[..k])?;
                at_warmup = Some(Snapshot::now());
                ex.run(&events[k..])?;
            }
            _ => ex.run(events)?,
        }
        done += events.len() as u64;
    }
    let end = Snapshot::now();
    if ex.counts.collapse > 0 {
        report.collapse_failed = Some(ex.collapse_failed);
        report.collapse_errno = Some(ex.collapse_errno);
    }
    if ex.counts.collapse > 0 || ex.counts.thp_advice > 0 {
        report.anon_huge_kb = anon_huge_kb();
    }
    report.anon_huge_kb_at = ex.snapshots.iter().map(|s| s.0).collect();
    report.snapshot_s = ex.snapshots.iter().map(|s| s.1).collect();
    report.run = start.until(&end, ex.index);
    if let (Some(w), Some(mid)) = (warmup, at_warmup) {
        report.warmup = Some(start.until(&mid, w));
        report.measured = Some(mid.until(&end, done - w));
    }
    for (i, w) in workloads.iter_mut().enumerate() {
        w.events = stream.events(i);
    }
    report.events = ex.index;
    report.per_kind = ex.counts;
    report.bad_fd = ex.bad_fd;
    report.checksum = ex.checksum;
    report.maxrss_kb = end.ru.ru_maxrss;
    report.workloads = workloads;
    if let Some(h) = &cfg.hold {
        hold_on(h, "write (--hold)")?;
    }
    drop(ex);
    drop(mappings);
    drop(files);
    drop(cleanup);
    Ok(report)
}
