//! The open file descriptions of `opens = N` (`Event::FdRead`, `Event::FdClose`):
//! each a separate `open()` of its workload's real file, so each has its own
//! `struct file` and `file->f_ra` on the kernel as in the simulator
//! (`do_dentry_open()` → `file_ra_state_init()`, fs/open.c), with the workload's
//! advice given to each (`posix_fadvise`, `generic_fadvise()` on that file only).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;

use super::{fadvise, fadvise_code, FileSlot};
use crate::error::ProbeError;
use crate::plan::Plan;

/// The descriptors, by the simulator's [`mmsim_core::Fd`] (None: closed).
pub(super) struct OpenFds {
    files: Vec<Option<File>>,
}

impl OpenFds {
    /// Opens every descriptor of `plan` (read only, never through a symbolic
    /// link) on its region's file `names[region]`, in the order the
    /// simulator's setup opened them, and advises each as its workload.
    pub(super) fn open(plan: &Plan, names: &[PathBuf]) -> Result<OpenFds, ProbeError> {
        let mut files = Vec::with_capacity(plan.fds());
        for fd in 0..plan.fds() as mmsim_core::Fd {
            let r = plan.fd_region(fd).expect("fd below plan.fds()");
            let path = &names[r];
            let f = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
                .map_err(|source| ProbeError::Syscall {
                    call: "open (opens)",
                    path: path.clone(),
                    source,
                })?;
            let (code, call) = fadvise_code(plan.regions[r].advice);
            fadvise(&f, code, call, path)?;
            files.push(Some(f));
        }
        Ok(OpenFds { files })
    }

    /// No descriptor (`--prepare`: no event runs).
    pub(super) fn none() -> OpenFds {
        OpenFds { files: Vec::new() }
    }

    /// Where the reads through each descriptor go, by descriptor.
    pub(super) fn slots(&self, plan: &Plan) -> Vec<Option<FileSlot>> {
        self.files
            .iter()
            .enumerate()
            .map(|(fd, f)| {
                let region = plan.fd_region(fd as mmsim_core::Fd)?;
                f.as_ref().map(|f| FileSlot {
                    fd: f.as_raw_fd(),
                    pages: plan.regions[region].pages,
                    region,
                })
            })
            .collect()
    }

    /// `close()` of descriptor `fd` (nothing if it is closed already).
    pub(super) fn close(&mut self, fd: mmsim_core::Fd) {
        if let Some(f) = self.files.get_mut(fd as usize) {
            *f = None;
        }
    }
}
