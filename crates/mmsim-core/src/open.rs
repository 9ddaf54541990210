//! Open files (fs/open.c `do_dentry_open()`, v6.12) and their readahead
//! state: one `struct file` per `open()`, each with its own `file->f_ra`.
//!
//! In v6.12 `do_dentry_open()` calls `file_ra_state_init(&f->f_ra,
//! f->f_mapping->host->i_mapping)`, which sets `ra_pages` from the
//! backing device (`bdi->ra_pages`) and `prev_pos = -1`. The readahead
//! state is therefore per open file, not per inode: two descriptors of one
//! file read sequentially keep two windows, and advice given to one
//! (`generic_fadvise()`, mm/fadvise.c) changes only that `struct file`.
//! A mapping made from a descriptor (`mmap_region()` sets
//! `vma->vm_file = get_file(file)`) reads around through that same
//! `f_ra` (`do_sync_mmap_readahead()`, mm/filemap.c, uses
//! `vmf->vma->vm_file->f_ra`, and counts `mmap_miss` there).
//!
//! mmsim models it with [`Sim::open_file`] → [`Fd`]: each open takes a slot
//! of [`crate::readahead::RaSlots`] (the table that already holds the
//! mappings' `struct file` states), held by the descriptor, and
//! [`Sim::mmap_fd`] maps through it (the VMA shares the slot, as
//! `get_file()` shares the file). [`crate::Event::FdRead`] reads through a
//! descriptor with `filemap_read()` on the descriptor's state
//! ([`crate::readahead::RaOwner::Open`]), charged to the group of the task
//! that opened it. [`crate::Event::FileRead`] keeps the older model (one
//! `read()` state per file, [`Sim::open`]), so every workload that names
//! no descriptor runs as before.
//!
//! `generic_fadvise()` of v6.12 (checked in mm/fadvise.c):
//! `POSIX_FADV_NORMAL` sets `f_ra.ra_pages = bdi->ra_pages` and clears
//! `FMODE_RANDOM`; `POSIX_FADV_RANDOM` sets `FMODE_RANDOM` and leaves
//! `ra_pages` alone; `POSIX_FADV_SEQUENTIAL` sets `ra_pages = 2 *
//! bdi->ra_pages` and clears `FMODE_RANDOM` ([`Sim::fadvise_fd`]).
//! `FMODE_RANDOM` is the slot's `advice == Random`; it makes
//! `page_cache_sync_ra()` read just the request for the descriptor's reads
//! and for the sync readahead of a `VM_SEQ_READ` mapping made from it (the
//! kernel tests `ractl->file->f_mode`, the mapping's file).
//!
//! Descriptors and their `struct file`s (fs/file.c, v6.12; [`file`]):
//! [`Sim::dup_fd`] and [`Sim::dup2_fd`] install a second descriptor of
//! the same `struct file` (one `f_ra`), [`Sim::close_fd`] and
//! [`crate::Event::FdClose`] drop one (`fput()`: the state goes with the
//! last reference, a descriptor's or a mapping's), `fork()` copies the
//! task's descriptor table (`dup_fd()`, [`Sim::fork_task`]) and exit
//! closes it (`exit_files()`, [`Sim::exit_task`]). A read or close through
//! a closed descriptor fails with `EBADF`, counted in
//! [`crate::AccessStats::bad_fd`].
//!
//! Descriptor numbers: an [`Fd`] is a dense id over the whole run (what
//! events name); the number the task sees (`Sim::fd_number`) is the
//! kernel's, the lowest free one of the task's table (`alloc_fd()`,
//! [`file`]). Departures: `FdRead` is `pread()`, so `f_pos`,
//! which the descriptors of one `struct file` share, is not modelled; the
//! `FMODE_NOREUSE` of `POSIX_FADV_NOREUSE` is not modelled.

mod file;

use crate::event::FileId;
use crate::mem::pagetable::{TaskId, VmaId};
use crate::readahead::{Advice, FileRaState};
use crate::sim::{Sim, SimError};

/// An open file description (`struct file`), as returned by
/// [`Sim::open_file`]: dense, in opening order.
pub type Fd = u32;

/// One descriptor of a `struct file`: the file, the task whose table holds
/// it (its reads are charged to that task's group), its number in that
/// table (`alloc_fd()`'s) and the `struct file`'s `f_ra` slot in
/// [`crate::readahead::RaSlots`] (shared by its dups and mappings;
/// [`crate::readahead::RaSlots::NONE`]: closed).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpenFile {
    pub file: FileId,
    pub task: TaskId,
    pub nr: u32,
    pub ra_slot: u32,
}

impl Sim {
    /// `open()` of `file` by `task` (`do_dentry_open()` →
    /// `file_ra_state_init()`, v6.12): a new open file description with its
    /// own readahead state (limit `read_ahead_kb / 4`, no history).
    pub fn open_file(&mut self, file: FileId, task: TaskId) -> Result<Fd, SimError> {
        if task as usize >= self.tasks.len() {
            return Err(SimError::Setup(format!("no task {task}")));
        }
        if file as usize >= self.files.len() {
            return Err(SimError::Setup(format!("no file {file}")));
        }
        let ra_slot = self.ra_slots.open(self.cfg.ra_pages());
        let nr = self.alloc_fd(task, 0);
        self.fds.push(OpenFile {
            file,
            task,
            nr,
            ra_slot,
        });
        Ok((self.fds.len() - 1) as Fd)
    }

    /// Open file descriptions so far ([`Sim::open_file`]).
    pub fn nr_fds(&self) -> usize {
        self.fds.len()
    }

    /// The file that `fd` is an open of (None: unknown or closed).
    pub fn fd_file(&self, fd: Fd) -> Option<FileId> {
        self.live_fd(fd).map(|o| o.file)
    }

    /// Descriptor `fd` if it is open.
    #[inline]
    fn live_fd(&self, fd: Fd) -> Option<&OpenFile> {
        self.fds
            .get(fd as usize)
            .filter(|o| o.ra_slot != crate::readahead::RaSlots::NONE)
    }

    fn open_of(&self, fd: Fd) -> Result<OpenFile, SimError> {
        match self.fds.get(fd as usize) {
            None => Err(SimError::Setup(format!("no open file {fd}"))),
            Some(_) => self
                .live_fd(fd)
                .copied()
                .ok_or_else(|| SimError::Setup(format!("open file {fd} is closed (EBADF)"))),
        }
    }

    /// `posix_fadvise(fd, 0, 0, advice)`: `generic_fadvise()` of v6.12 on
    /// this open file only (see the module overview: `FADV_RANDOM` keeps
    /// `ra_pages`).
    pub fn fadvise_fd(&mut self, fd: Fd, advice: Advice) -> Result<(), SimError> {
        let o = self.open_of(fd)?;
        let bdi = self.cfg.ra_pages();
        let ra = self.ra_slots.get_mut(o.ra_slot);
        ra.advice = advice;
        match advice {
            Advice::Normal => ra.ra_pages = bdi,
            Advice::Sequential => ra.ra_pages = 2 * bdi,
            Advice::Random => {}
        }
        Ok(())
    }

    /// `mmap(MAP_SHARED, fd)` of pages `[pgoff, pgoff + pages)` of `fd`'s file
    /// into `task` (`private`: `MAP_PRIVATE`); `exec` marks it VM_EXEC. The
    /// VMA's `vm_file` is `fd`'s `struct file`: its faults read around in
    /// `fd`'s `f_ra` and count `mmap_miss` there. The errors of
    /// [`Sim::mmap_file`].
    pub fn mmap_fd(
        &mut self,
        task: TaskId,
        fd: Fd,
        pgoff: u32,
        pages: u64,
        exec: bool,
        private: bool,
    ) -> Result<VmaId, SimError> {
        let o = self.open_of(fd)?;
        let vma = if private {
            self.mmap_file_private(task, o.file, pgoff, pages)?
        } else {
            self.mmap_file(task, o.file, pgoff, pages, exec)?
        };
        // The VMA takes the descriptor's file in place of a fresh one.
        let fresh = std::mem::replace(
            &mut self.vmas[vma as usize].ra_slot,
            self.ra_slots.share(o.ra_slot),
        );
        self.ra_slots.put(fresh);
        Ok(vma)
    }

    /// The readahead state of `fd` (`file->f_ra`), if it is open.
    pub(crate) fn fd_ra(&self, fd: Fd) -> Option<&FileRaState> {
        self.live_fd(fd).map(|o| self.ra_slots.get(o.ra_slot))
    }

    /// `read()` through `fd` of `pages` pages from page `index`
    /// (`filemap_read()` on the descriptor's `f_ra`); an unknown descriptor
    /// counts every page out of range, a closed one fails (`fdget()` finds
    /// no file: `EBADF`) and counts one [`crate::AccessStats::bad_fd`].
    pub(crate) fn fd_read(&mut self, fd: Fd, index: u32, pages: u16) {
        let Some(o) = self.fds.get(fd as usize) else {
            self.acc.out_of_range += u64::from(pages.max(1));
            return;
        };
        if o.ra_slot == crate::readahead::RaSlots::NONE {
            self.acc.bad_fd += 1;
            return;
        }
        let file = o.file;
        self.filemap_read_ra(crate::readahead::RaOwner::Open(fd), file, index, pages);
    }

    /// The `f_ra` slots the descriptors hold (a closed one's is
    /// `RaSlots::NONE`, which `RaSlots::check` skips).
    pub(crate) fn fd_ra_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.fds.iter().map(|o| o.ra_slot)
    }

    /// The task that opened `fd`, whose group its reads are charged to.
    #[inline]
    pub(crate) fn fd_task(&self, fd: Fd) -> Option<TaskId> {
        self.live_fd(fd).map(|o| o.task)
    }

    /// Charges of a read through `fd` go to the group of the task that
    /// opened it, which is also the running task (`current`); as
    /// `Sim::set_fd_memcg` does for a file's reader.
    pub(crate) fn set_open_memcg(&mut self, fd: Fd) {
        let task = self.fds[fd as usize].task;
        self.cur_memcg = self.task_memcg(task);
        self.bdp_set_current(task);
    }
}
