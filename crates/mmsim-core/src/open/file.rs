//! Descriptors of one `struct file` (fs/file.c and fs/open.c, v6.12):
//! `dup()`, `dup2()`, `close()`, the descriptor table a `fork()` copies and
//! the one an exit closes.
//!
//! Checked in v6.12 fs/file.c: `ksys_dup()` takes `fget_raw(fildes)` and
//! installs it in a new descriptor (`get_unused_fd_flags()`,
//! `fd_install()`), so the two descriptors name one `struct file`, with one
//! `f_ra` and one `f_pos`; `do_dup2()` installs `file` (with `get_file()`)
//! in `newfd` and `filp_close()`s the file `newfd` held before, and
//! `dup2(fd, fd)` of an open `fd` returns it unchanged. `close_fd()` →
//! `file_close_fd()` takes the file out of the table and `filp_close()` →
//! `fput()` drops one reference; the `struct file` and its `f_ra` are freed
//! by the last `fput()` (`__fput()` → `file_free()`), so a mapping made
//! from the file (`vma->vm_file`, `get_file()`) keeps it after the close.
//! `copy_process()` → `copy_files()` → `dup_fd()` gives the child a copy
//! of the table whose entries are the parent's files, each `get_file()`d;
//! `do_exit()` → `exit_files()` → `put_files_struct()` → `close_files()`
//! `filp_close()`s every entry. A `read()` or `close()` of a closed
//! descriptor fails with `EBADF` (`fdget()` / `file_close_fd()` find no
//! file).
//!
//! Here a descriptor is an [`Fd`] (a [`super::OpenFile`]) and a `struct
//! file` is its `f_ra` slot in [`crate::readahead::RaSlots`], whose count is
//! the file's reference count: descriptors plus mappings.

use super::{Fd, OpenFile};
use crate::mem::pagetable::TaskId;
use crate::readahead::RaSlots;
use crate::sim::{Sim, SimError};

impl Sim {
    /// `dup(fd)` (`ksys_dup()`, fs/file.c, v6.12): a new descriptor of
    /// `fd`'s `struct file` in the same task's table; reads through either
    /// go through one `f_ra`. Errors: `fd` unknown or closed.
    pub fn dup_fd(&mut self, fd: Fd) -> Result<Fd, SimError> {
        let o = self.open_of(fd)?;
        let ra_slot = self.ra_slots.share(o.ra_slot);
        self.fds.push(OpenFile { ra_slot, ..o });
        Ok((self.fds.len() - 1) as Fd)
    }

    /// `dup2(old, new)` (`do_dup2()`, fs/file.c, v6.12): `new` (an existing
    /// descriptor id, open or closed) names `old`'s `struct file` from now
    /// on; the file `new` held before is put (`filp_close()`). `new == old`
    /// leaves it as it is. Errors: `old` unknown or closed, `new` unknown.
    pub fn dup2_fd(&mut self, old: Fd, new: Fd) -> Result<Fd, SimError> {
        let o = self.open_of(old)?;
        let Some(prev) = self.fds.get(new as usize).map(|n| n.ra_slot) else {
            return Err(SimError::Setup(format!("no open file {new}")));
        };
        if new != old {
            let ra_slot = self.ra_slots.share(o.ra_slot);
            self.fds[new as usize] = OpenFile { ra_slot, ..o };
            self.ra_slots.put(prev);
        }
        Ok(new)
    }

    /// `close(fd)` (`close_fd()` → `filp_close()` → `fput()`, fs/file.c and
    /// fs/open.c, v6.12): the descriptor is closed; its `struct file` and
    /// `f_ra` go with their last reference (another descriptor or a
    /// mapping may hold it). Errors: `fd` unknown or closed (`EBADF`).
    pub fn close_fd(&mut self, fd: Fd) -> Result<(), SimError> {
        self.open_of(fd)?;
        let slot = std::mem::replace(&mut self.fds[fd as usize].ra_slot, RaSlots::NONE);
        self.ra_slots.put(slot);
        Ok(())
    }

    /// Whether descriptor `fd` exists and is open.
    pub fn fd_is_open(&self, fd: Fd) -> bool {
        self.live_fd(fd).is_some()
    }

    /// The open descriptors in `task`'s table, in id order.
    pub fn task_fds(&self, task: TaskId) -> Vec<Fd> {
        (0..self.fds.len() as Fd)
            .filter(|&fd| self.live_fd(fd).is_some_and(|o| o.task == task))
            .collect()
    }

    /// [`crate::Event::FdClose`]: [`Sim::close_fd`]; an unknown descriptor
    /// counts out of range, a closed one `EBADF`
    /// ([`crate::AccessStats::bad_fd`]).
    pub(crate) fn fd_close_event(&mut self, fd: Fd) {
        match self.fds.get(fd as usize) {
            None => self.acc.out_of_range += 1,
            Some(o) if o.ra_slot == RaSlots::NONE => self.acc.bad_fd += 1,
            Some(_) => {
                let _ = self.close_fd(fd);
            }
        }
    }

    /// `copy_files()` → `dup_fd()` (fs/file.c, v6.12) at `fork()`: each open
    /// descriptor of `parent`, in id order, gets a copy in `child`'s table
    /// naming the same `struct file` (`get_file()`): parent and child read
    /// through one `f_ra`, and the child's reads are charged to its group.
    pub(crate) fn fork_files(&mut self, parent: TaskId, child: TaskId) {
        for fd in self.task_fds(parent) {
            let o = self.fds[fd as usize];
            let ra_slot = self.ra_slots.share(o.ra_slot);
            self.fds.push(OpenFile {
                task: child,
                ra_slot,
                ..o
            });
        }
    }

    /// `exit_files()` → `close_files()` (kernel/exit.c, fs/file.c, v6.12):
    /// every open descriptor of `task` is closed.
    pub(crate) fn exit_files(&mut self, task: TaskId) {
        for fd in self.task_fds(task) {
            let _ = self.close_fd(fd);
        }
    }
}
