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
//!
//! Descriptor numbers (checked in v6.12 fs/file.c): `get_unused_fd_flags()`
//! → `alloc_fd(0, …)` and `ksys_dup()` take `find_next_fd(fdt, start)`, the
//! lowest number at or above `start` (0; `files->next_fd` is only a search
//! hint) whose `open_fds` bit is clear, so a closed descriptor's number is
//! the next one handed out; `do_dup2()` puts `file` at exactly `newfd`,
//! `filp_close()`ing the file it held; `dup_fd()` copies the table with its
//! numbers; `close_fd()` → `__put_unused_fd()` clears the bit. A task here
//! starts with 0, 1 and 2 held (stdin, stdout, stderr, which mmsim does not
//! model: a process started from a shell), so its first `open()` returns 3;
//! a `dup2()` onto one of them replaces it, and once that descriptor is
//! closed the number is free ([`Sim::fd_number`]). Not modelled: a child
//! forked after its parent closed such a replaced 0–2 sees it held again.

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
        let nr = self.alloc_fd(o.task, 0);
        self.fds.push(OpenFile { ra_slot, nr, ..o });
        Ok((self.fds.len() - 1) as Fd)
    }

    /// `alloc_fd(start)` → `find_next_fd()` (fs/file.c, v6.12): the lowest
    /// descriptor number at or above `start` that is free in `task`'s
    /// table. 0, 1 and 2 are held (stdio) until a descriptor of the task
    /// has taken that number (a `dup2()` onto it) and been closed.
    pub(crate) fn alloc_fd(&self, task: TaskId, start: u32) -> u32 {
        let mut used: Vec<u32> = (0..3)
            .filter(|&n| !self.fds.iter().any(|o| o.task == task && o.nr == n))
            .collect();
        used.extend(
            self.fds
                .iter()
                .filter(|o| o.task == task && o.ra_slot != RaSlots::NONE)
                .map(|o| o.nr),
        );
        used.sort_unstable();
        let mut nr = start;
        for u in used {
            if u == nr {
                nr += 1;
            } else if u > nr {
                break;
            }
        }
        nr
    }

    /// The number of descriptor `fd` in its task's table (what `open()`,
    /// `dup()` and `dup2()` return in the kernel: `alloc_fd()`'s
    /// lowest free one), if it is open.
    pub fn fd_number(&self, fd: Fd) -> Option<u32> {
        self.live_fd(fd).map(|o| o.nr)
    }

    /// The open descriptor of `task` numbered `nr`, if any.
    pub fn fd_of_number(&self, task: TaskId, nr: u32) -> Option<Fd> {
        (0..self.fds.len() as Fd).find(|&fd| {
            self.live_fd(fd)
                .is_some_and(|o| o.task == task && o.nr == nr)
        })
    }

    /// `dup2(old, newfd)` with `newfd` a number of `old`'s task's table
    /// (`do_dup2()`, fs/file.c, v6.12): the descriptor numbered `newfd` is
    /// closed first if open (`filp_close()`), then `newfd` names `old`'s
    /// `struct file`; returns the descriptor. `newfd` = `old`'s own number
    /// returns `old` unchanged. Errors: `old` unknown or closed.
    pub fn dup2_number(&mut self, old: Fd, newfd: u32) -> Result<Fd, SimError> {
        let o = self.open_of(old)?;
        if let Some(fd) = self.fd_of_number(o.task, newfd) {
            return self.dup2_fd(old, fd);
        }
        let ra_slot = self.ra_slots.share(o.ra_slot);
        self.fds.push(OpenFile {
            ra_slot,
            nr: newfd,
            ..o
        });
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
            let n = self.fds[new as usize];
            if prev == RaSlots::NONE {
                // A closed `new` whose number another descriptor took since:
                // that one is `newfd` now, closed first.
                if let Some(other) = self.fd_of_number(n.task, n.nr) {
                    self.close_fd(other)?;
                }
            }
            let ra_slot = self.ra_slots.share(o.ra_slot);
            // `newfd` keeps its number (and its task's table), now naming
            // `old`'s file.
            self.fds[new as usize] = OpenFile {
                ra_slot,
                task: n.task,
                nr: n.nr,
                ..o
            };
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

    /// The open descriptors in `task`'s table, by number (the order
    /// `dup_fd()` copies and `close_files()` closes them).
    pub fn task_fds(&self, task: TaskId) -> Vec<Fd> {
        let mut fds: Vec<Fd> = (0..self.fds.len() as Fd)
            .filter(|&fd| self.live_fd(fd).is_some_and(|o| o.task == task))
            .collect();
        fds.sort_by_key(|&fd| self.fds[fd as usize].nr);
        fds
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
    /// descriptor of `parent`, by number, gets a copy in `child`'s table
    /// with the same number, naming the same `struct file` (`get_file()`):
    /// parent and child read
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
