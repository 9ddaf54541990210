//! The event model: what workloads ask of the simulated machine.
//!
//! Workloads (synthetic generators, trace replays) produce [`Event`]s; the
//! [`crate::Sim`] executes them in order on the workload's simulated CPU.
//! An event names its target by dense ids handed out by the `Sim` at setup
//! (`mmap_anon`, `mmap_file`, `add_file`), so the per-access path never looks
//! anything up by name or address.

use crate::mem::pagetable::VmaId;

/// Dense file id.
pub type FileId = u32;

/// One thing a workload does. 12 bytes; `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A CPU load or store to page `index` of a mapped VMA (anonymous or a
    /// file mapping). The hardware sets the PTE's accessed bit, and the dirty
    /// bit on a store; a non-present page faults.
    Access {
        /// The VMA.
        vma: VmaId,
        /// Page index within the VMA.
        index: u32,
        /// A store (true) or a load.
        write: bool,
    },
    /// A buffered `pread()` of `pages` pages from page `index` of a file
    /// (`filemap_read()`): cached pages are marked accessed, a miss starts
    /// readahead as the file's advice and history decide (see
    /// `crate::readahead`). The part beyond the end of the file is not read
    /// and counted out of range.
    FileRead {
        /// The file.
        file: FileId,
        /// First page index in the file.
        index: u32,
        /// Pages read (4 KiB each); at least 1.
        pages: u16,
    },
    /// A buffered `pread()` through open file description `fd`
    /// (`Sim::open_file`, `crate::open`): [`Event::FileRead`] in the
    /// descriptor's own readahead state (`file->f_ra`), charged to the
    /// group of the task that opened it. An unknown descriptor counts its
    /// pages out of range.
    FdRead {
        /// The open file.
        fd: crate::open::Fd,
        /// First page index in the file.
        index: u32,
        /// Pages read (4 KiB each); at least 1.
        pages: u16,
    },
    /// `close(fd)` of a descriptor (`close_fd()`, fs/file.c, v6.12;
    /// `Sim::close_fd`): the `struct file` and its `f_ra` go with their
    /// last reference. A closed descriptor's close (and its later
    /// `FdRead`s) fail with `EBADF` (`AccessStats::bad_fd`); an unknown
    /// one counts out of range.
    FdClose {
        /// The descriptor.
        fd: crate::open::Fd,
    },
    /// A buffered `pwrite()` of `pages` whole pages from page `index`: the
    /// pages are dirtied in the page cache (no read, no readahead) and
    /// written back later by the flusher.
    FileWrite {
        /// The file.
        file: FileId,
        /// First page index in the file.
        index: u32,
        /// Pages written; at least 1.
        pages: u16,
    },
    /// Writeback the task starts itself on `pages` pages from page `index`
    /// of a file (from `index` to the file's end when `pages` is 0):
    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)` (`wait` false), or with
    /// `wait` `fsync()`/`fdatasync()` (the whole file: `index` and `pages`
    /// 0) or `sync_file_range` with its wait flags (a range); see
    /// `crate::filemap_sync`. Dirty pages of the range are written at once
    /// instead of when the flusher comes; with `wait` the task sleeps until
    /// every write of the range has completed.
    FileSync {
        /// The file.
        file: FileId,
        /// First page index in the file.
        index: u32,
        /// Pages in the range; 0: to the end of the file.
        pages: u16,
        /// Wait for the range's writeback to complete (fsync).
        wait: bool,
    },
    /// The task computes for `ns` nanoseconds without touching memory.
    Think {
        /// Nanoseconds.
        ns: u64,
    },
    /// `madvise(MADV_DONTNEED)` (or `munmap` of part) of `pages` pages from
    /// page `index` of a mapped VMA: the PTEs are zapped, anonymous pages
    /// freed, large folios left partly mapped queued for a deferred split
    /// (`crate::madvise`). The VMA stays; a later access faults afresh.
    Discard {
        /// The VMA.
        vma: VmaId,
        /// First page index within the VMA.
        index: u32,
        /// Pages discarded; at least 1.
        pages: u32,
    },
    /// `madvise(MADV_COLLAPSE)` of `pages` pages from page `index` of an
    /// anonymous VMA: its whole PMD ranges are collapsed into PMD-size
    /// folios where they can be (`crate::khugepaged`), whatever the THP
    /// settings. The call's result is not reported per event.
    Collapse {
        /// The VMA.
        vma: VmaId,
        /// First page index within the VMA.
        index: u32,
        /// Pages; at least 1.
        pages: u32,
    },
    /// `madvise(MADV_HUGEPAGE)` or `madvise(MADV_NOHUGEPAGE)` of the whole
    /// anonymous VMA `vma` (`hugepage_madvise`, `Sim::madvise_thp`): its THP
    /// advice from now on; MADV_HUGEPAGE registers the task with khugepaged.
    /// A file VMA or an unknown one is ignored (counted out of range).
    ThpAdvice {
        /// The VMA.
        vma: VmaId,
        /// The advice.
        advice: crate::huge_memory::VmaThpAdvice,
    },
    /// `munmap()` of the whole VMA `vma` and an `mmap()` of the same kind and
    /// size in its place (`crate::mmap`): its pages zapped as by
    /// [`Event::Discard`], its page tables freed, nothing faulted in. The
    /// loop of will-it-scale's mmap1. An unknown VMA counts out of range.
    Remap {
        /// The VMA.
        vma: VmaId,
    },
    /// `fork()` by the task owning anonymous VMA `vma` (`crate::fork`): the
    /// child shares the task's anonymous memory copy-on-write, stores to
    /// the first `pages` pages of its copy of `vma` (cut at its end), and
    /// exits; the task waits for it (`wait4`), so the child's faults take
    /// the task's time. An unknown VMA counts out of range.
    Fork {
        /// The VMA.
        vma: VmaId,
        /// Pages the child writes before it exits.
        pages: u32,
    },
}

#[cfg(test)]
mod tests {
    #[test]
    fn event_is_small() {
        assert!(std::mem::size_of::<super::Event>() <= 16);
    }
}
