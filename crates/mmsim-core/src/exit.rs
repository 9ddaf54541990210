//! A task that ends: `do_exit()` (kernel/exit.c) → `exit_mm()` → `mmput()` →
//! `exit_mmap()` (mm/mmap.c), v6.12, for a workload whose scenario says
//! `exit = true`.
//!
//! Every VMA of the task is unmapped as `unmap_vmas()` → `zap_pte_range()` does
//! it (the same zap as `madvise(MADV_DONTNEED)`, [`crate::madvise`]):
//!
//! * anonymous folios no other PTE maps are freed (off their LRU list,
//!   uncharged; their swap-cache slots released), large ones whole; a folio
//!   that a task forked from or by this one still maps loses one mapcount
//!   (`crate::fork`);
//! * swap entries release their slots and the swap charge
//!   (`free_swap_and_cache`; a slot fork shared drops one count);
//! * file mappings leave the page cache in place, still charged to the group
//!   that brought it in (a memcg is not uncharged by its tasks leaving), with
//!   the PTE's dirty bit moved to the folio and its young bit marking it
//!   accessed (`zap_present_folio_ptes`).
//!
//! Then `free_pgtables()` releases the VMAs' page-table pages, and with
//! `machine.kmem_accounting` the task's own kernel memory (its stack, PGD and
//! task structures, charged at its start, `crate::kmem`) is uncharged — in
//! the kernel that happens when the parent reaps it; mmsim has no parent, so
//! at once. Files the task read stay cached; their descriptors have no memory
//! of their own here. Later events of an exited task, which a finished
//! workload does not issue, would be dropped as a killed task's are.
//!
//! Cost: one system call per VMA (`fd_access_ns`) and `pte_walk_ns` per page
//! of its range, as for `MADV_DONTNEED`; `free_ns` per folio freed.

use crate::mem::pagetable::TaskId;
use crate::sim::{Sim, SimError};

impl Sim {
    /// `do_exit()` of `task` (see the module overview). A task already killed by
    /// the OOM killer, or exited, is left alone.
    pub fn exit_task(&mut self, task: TaskId) -> Result<(), SimError> {
        let t = task as usize;
        if t >= self.tasks.len() {
            return Err(SimError::Setup(format!("no task {task}")));
        }
        if self.tasks[t].dead {
            return Ok(());
        }
        self.series_mark(
            crate::timer::SeriesMarkerKind::TaskExit,
            Some(self.tasks[t].memcg),
            format!("task {task}"),
        );
        self.exit_mmap(t);
        // `exit_files()`: the task's descriptors are closed (`crate::open`).
        self.exit_files(task);
        self.kmem_free_task(t);
        // `dirty_throttle_leaks` (read under `policy.bdp_ratelimit`).
        self.bdp_task_exit(task);
        self.tasks[t].dead = true;
        self.tasks[t].exited = true;
        Ok(())
    }

    /// `exit_mmap()` of task `t`'s VMAs (see the module overview): each
    /// zapped, its page tables freed, its `struct file` put. Also the
    /// teardown of a failed fork's half-built mm (`crate::fork`).
    pub(crate) fn exit_mmap(&mut self, t: usize) {
        for vi in 0..self.tasks[t].vmas.len() {
            let vma = self.tasks[t].vmas[vi];
            let len = self.vmas[vma as usize].len;
            if len > 0 {
                self.madvise_dontneed(vma, 0, len);
            }
            self.kmem_free_vma_tables(vma);
            if self.fork.is_some() {
                self.unlink_anon_vma(vma);
            }
            // The page table's host memory goes with the mm.
            self.vmas[vma as usize].ptes = Vec::new();
            self.vmas[vma as usize].file_pmds = Vec::new();
            self.vma_put_file(vma);
        }
    }
}
