//! # mmsim-probe: run a scenario's exact event stream on the real kernel
//!
//! mmsim simulates Linux memory management; to validate it, the same workload has to run
//! on a real kernel and in the simulator, and the counters compared (page faults here;
//! the memcg's `memory.stat`, `/proc/vmstat` and tracepoints around it, as the
//! ground-truth runs collect them). `mmsim-probe` is that workload: it takes an mmsim
//! scenario (a TOML file or an embedded name, as `mmsim run` does) and executes, in one
//! process, **the very event stream mmsim feeds its simulator**: the events come from
//! [`mmsim_workloads::EventStream`], the one implementation of the generators and of
//! the phase and round-robin interleaving that `run_scenario` also uses. The sequence is
//! a pure function of the scenario and its seed; nothing depends on timing.
//!
//! It can also write that sequence without touching any memory (`--dump`, [`mod@dump`]), so
//! the trace is produced outside the memory-limited cgroup, and check a dump against the
//! simulator's stream (`--check-dump`, [`dump::verify_dump`]).
//!
//! ## From events to system calls
//!
//! Setup, in workload order (the order in which mmsim creates them):
//!
//! * `anon`: `mmap(MAP_PRIVATE | MAP_ANONYMOUS, PROT_READ | PROT_WRITE)` of the region,
//!   then `madvise(MADV_NOHUGEPAGE)` (the simulator has 4 KiB pages only) unless
//!   `[machine.thp]` allows some size, when the VMA gets its `vma_advice` instead
//!   (MADV_HUGEPAGE, MADV_NOHUGEPAGE or nothing) and the machine's THP sysfs is the
//!   runner's to set (`tools/validate/guest-run.sh`). `advice` does nothing on anon,
//!   as in the simulator.
//! * `file`: a real file `mmsim-probe-<i>-<name>.dat` in `--dir` of exactly the region's
//!   size, created (`O_CREAT | O_EXCL | O_NOFOLLOW`), written once with non-zero content
//!   (no holes) and `fsync`ed, or with `--reuse` an existing one of that size; then
//!   `posix_fadvise(POSIX_FADV_NORMAL | RANDOM | SEQUENTIAL)` per `advice` on the
//!   descriptor the reads use. With `opens = N` the file is then opened N more times
//!   (read only), in the order the simulator's setup opens them, each descriptor
//!   advised the same: N `struct file`s, each with its own `f_ra`, as
//!   `Sim::open_file` models (`exec/fds.rs`).
//! * `mmap`: the same file, `mmap(MAP_SHARED, PROT_READ | PROT_WRITE)` of all of it,
//!   `madvise(MADV_NORMAL | RANDOM | SEQUENTIAL)` per `advice`.
//! * `mmap-private`: the same file, `mmap(MAP_PRIVATE, PROT_READ | PROT_WRITE)`: a
//!   store copies the page into an anonymous page, the file is never written.
//! * `mmap-exec`: the same with `PROT_READ | PROT_EXEC` (program text; loads only). A
//!   `--dir` on a `noexec` mount makes the `mmap` fail with `EPERM`: the error says so.
//! * Every file is `fsync`ed and dropped from the page cache
//!   (`posix_fadvise(POSIX_FADV_DONTNEED)`) before the run, so the cache starts cold as
//!   the simulator's does (`--no-evict` keeps it).
//!
//! Then each event, in order, single-threaded:
//!
//! | event | system call or access |
//! |---|---|
//! | `FileRead { file, index, pages }` | `pread(fd, buf, pages × 4096, index × 4096)`, exactly that many bytes |
//! | `FdRead { fd, index, pages }` | `pread` as above through the workload's descriptor `fd` (`opens = N`) |
//! | `FdClose { fd }` | `close(fd)`; a later read or close of it counts `bad_fd` (`EBADF`), as in the simulator |
//! | `FileWrite { file, index, pages }` | `pwrite(fd, buf, pages × 4096, index × 4096)` of whole pages (no read) |
//! | `Access { vma, index, write: false }` | a volatile load of the first byte of page `index` (with `--anon-read-alloc`, on an anon page not touched yet: a store of a zero byte) |
//! | `Access { vma, index, write: true }` | a volatile store of a non-zero byte to it (one write fault on a new page; never an all-zero page) |
//! | `Think { ns }` | a busy wait on the monotonic clock (`--think sleep`: `nanosleep`); a zero-length one after a `ThpAdvice` event reads `AnonHugePages` of `/proc/self/smaps_rollup` (the report's `anon_huge_kb_at`: a touch's `snapshots`) |
//! | `Discard { vma, index, pages }` | `madvise(MADV_DONTNEED)` of the pages |
//! | `Collapse { vma, index, pages }` | `madvise(MADV_COLLAPSE)` of the pages (an error is counted, `collapse_failed`, and the last errno kept, `collapse_errno`) |
//! | `ThpAdvice { vma, advice }` | `madvise(MADV_HUGEPAGE \| MADV_NOHUGEPAGE)` of the whole mapping |
//!
//! The output ([`exec::RunReport`], JSON) gives the wall time, the events executed per
//! kind and per workload, `getrusage(RUSAGE_SELF)` deltas (minor and major faults, block
//! I/O, context switches, CPU time) for the setup, the run, and with `warmup_events` the
//! warmup and the measured part separately, and the probe's pid. Any failing system call
//! ends the run with a non-zero exit and a message naming the call and the file; created
//! files are removed also then (not with `--keep`).
//!
//! ## What it cannot reproduce
//!
//! * **Tasks are one process.** mmsim gives every workload its own task; the probe runs
//!   them all in one single-threaded process, so the kernel charges everything to one
//!   process and one cgroup. Per-task numbers cannot be compared; per-memcg ones can
//!   (run the probe inside the memcg, e.g. with `gtrun.py`).
//! * **`start`** (a workload's start time) is rejected: it is compared with the
//!   *simulated* clock, and a real run's time has no relation to it, so the interleaving
//!   could not be reproduced. Put late workloads in a later phase instead.
//! * **Program models** (`fio`, `kv`, `pgbench`, `dd`, `eater`) are rejected for now:
//!   their events use the same primitives (preads and pwrites of several pages, touches),
//!   but the tasks, files and mappings they create exist only inside the simulator, which
//!   has no way to list them yet.
//! * **Trace replays** need `pages` (the region's size; the default is 2^31 pages). The
//!   trace is read during the run, so its page cache is charged to the probe too. Under
//!   `trace_keys = "offset"` only a trace of one file (keys below 2^40) on `target =
//!   "file"` runs: one real file as long as the trace's last referenced page (within
//!   `pages`), read at the trace's page offsets, as the simulator lays it out.
//! * **Timing** does not exist in the stream: events follow one another as fast as the
//!   machine goes; the simulator's `runtime_s` and the probe's wall time are not
//!   comparable beyond order of magnitude. Think events come only from a `touch`'s
//!   `snapshots` (waits of at most 100 ms after its `advise_after`; `mmsim validate`
//!   runs the probe with `--think sleep`, so they are wall time), since the idle waits
//!   for a `start` are rejected.
//! * **First reads of anonymous memory** map the kernel's shared zero page (a minor fault,
//!   no memory charged); the simulator allocates a page, as for a write. Touch anon
//!   regions with writes first (`touch` does by default) to compare memory use, or
//!   run with `--anon-read-alloc`: the first load of an untouched anon page then
//!   stores a zero byte, so the kernel allocates a zero-filled page as the simulator
//!   does (the kernel's zero-filled pages at swap-out, `swpout_zero`, then compare).
//! * **The probe's own memory**: its binary, stack, I/O buffers (4 KiB per page read)
//!   and generators take some hundreds of KiB, resident; report `maxrss_kb` with the
//!   results.
//! * **Writes** of the setup (file creation) go through the page cache: run `--prepare`
//!   outside the memcg first and `--reuse` inside it, or the memcg is charged for them.
//!
//! ## Safety
//!
//! Sizes come only from the validated scenario. Total mapped memory is capped by
//! `--max-memory` (default 1 GiB) and total file size by `--max-disk` (default 4 GiB),
//! with an error naming the regions. Files are created only in `--dir`, under names made
//! of `[A-Za-z0-9._-]`, never through a symbolic link, never over an existing file
//! (unless `--reuse`), and removed at the end unless `--keep` or `--prepare`.

#![warn(missing_docs)]

pub mod dump;
pub mod error;
pub mod evlog;
pub mod exec;
pub mod plan;

use mmsim_core::Event;
use serde::Serialize;

pub use dump::{dump, verify_dump, DumpInfo, VerifyReport};
pub use error::ProbeError;
pub use exec::{run, RunConfig, RunReport, ThinkMode};
pub use plan::{Plan, Region};

/// Events counted by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EventCounts {
    /// Loads (`Access` without write).
    pub access_read: u64,
    /// Stores (`Access` with write).
    pub access_write: u64,
    /// `FileRead` events (`pread` calls).
    pub file_read: u64,
    /// Pages read by them.
    pub file_read_pages: u64,
    /// `FileWrite` events (`pwrite` calls).
    pub file_write: u64,
    /// Pages written by them.
    pub file_write_pages: u64,
    /// `Think` events.
    pub think: u64,
    /// Their nanoseconds.
    pub think_ns: u64,
    /// `Discard` events (`madvise(MADV_DONTNEED)` calls; absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub discard: u64,
    /// `Collapse` events (`madvise(MADV_COLLAPSE)` calls; absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub collapse: u64,
    /// `ThpAdvice` events (`madvise(MADV_HUGEPAGE | MADV_NOHUGEPAGE)` calls; absent
    /// when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub thp_advice: u64,
    /// `Remap` events (`munmap` and `mmap` of a whole region; absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub remap: u64,
    /// `Fork` events (`fork`, the child's stores, `wait4`; absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fork: u64,
    /// `FileSync` events (`sync_file_range` calls, or `fdatasync` for a waited sync of
    /// a whole file; absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub file_sync: u64,
    /// `FdClose` events (`close` calls; absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fd_close: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl EventCounts {
    /// Counts one event.
    #[inline]
    pub fn add(&mut self, e: &Event) {
        match *e {
            Event::Access { write: false, .. } => self.access_read += 1,
            Event::Access { write: true, .. } => self.access_write += 1,
            Event::FileRead { pages, .. } | Event::FdRead { pages, .. } => {
                self.file_read += 1;
                self.file_read_pages += pages as u64;
            }
            Event::FileWrite { pages, .. } => {
                self.file_write += 1;
                self.file_write_pages += pages as u64;
            }
            Event::Think { ns } => {
                self.think += 1;
                self.think_ns = self.think_ns.saturating_add(ns);
            }
            Event::Discard { .. } => self.discard += 1,
            Event::Collapse { .. } => self.collapse += 1,
            Event::ThpAdvice { .. } => self.thp_advice += 1,
            Event::Remap { .. } => self.remap += 1,
            Event::Fork { .. } => self.fork += 1,
            Event::FileSync { .. } => self.file_sync += 1,
            Event::FdClose { .. } => self.fd_close += 1,
        }
    }

    /// All events counted.
    pub fn total(&self) -> u64 {
        self.access_read
            + self.access_write
            + self.file_read
            + self.file_write
            + self.think
            + self.discard
            + self.collapse
            + self.thp_advice
            + self.remap
            + self.fork
            + self.file_sync
            + self.fd_close
    }
}
