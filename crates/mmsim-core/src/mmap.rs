//! `munmap()` and `mmap()` of a whole VMA in its place: the loop of
//! will-it-scale's mmap1 (`mmap` of 128 MiB anonymous memory, `munmap`,
//! repeat, nothing touched), `Event::Remap` (mm/mmap.c, mm/vma.c, v6.12).
//!
//! * `do_vmi_munmap()` → `vms_complete_munmap_vmas()`: the range is zapped
//!   as `unmap_vmas()` → `zap_pte_range()` does it, the same zap as
//!   `MADV_DONTNEED` ([`crate::madvise`]): over the extent of the page table
//!   the VMA ever grew (none for a VMA never touched: `zap_pmd_range` skips
//!   PMD entries without a table, so an untouched VMA costs no walk), then
//!   `free_pgtables()` releases its page-table pages (with
//!   `machine.kmem_accounting`, uncharged).
//! * `mmap_region()`: a new VMA of the same kind, length and file offset
//!   at the same address. It has no page table, a fresh swap readahead
//!   state and a fresh file readahead state (`file_ra_state_init` is per
//!   open file: the old VMA's `f_ra` slot is put, freed if it held the last
//!   reference, and a new one opened; the kernel keeps the descriptor's
//!   when the same one is mapped again, which the event does not say,
//!   `crate::readahead`); it keeps the VMA's
//!   advice and THP advice (a workload that `madvise`s after its `mmap` does
//!   so again each time).
//!
//! No fault and no page-cache change: a later access faults afresh. The
//! task's number of VMAs (`mm->map_count`, [`Sim::map_count`]) is the same
//! before and after. Cost: the two system calls (2 × `fd_access_ns`); the
//! VMA allocation, maple-tree update and TLB flush have no cost of their
//! own here, and the zap of a touched VMA costs what a `MADV_DONTNEED`
//! call does, its own system call included (three in all).

use crate::mem::pagetable::{SwapRaInfo, TaskId, VmaId};
use crate::sim::Sim;

impl Sim {
    /// An `Event::Remap` of `vma` (see the module overview). An unknown VMA
    /// counts out of range; a killed or exited task's is dropped.
    pub(crate) fn remap_event(&mut self, vma: VmaId) {
        let Some(v) = self.vmas.get(vma as usize) else {
            self.acc.out_of_range += 1;
            return;
        };
        if self.tasks[v.task as usize].dead {
            self.acc.dropped_killed += 1;
            return;
        }
        // munmap(): the zap over what the page table covers.
        let grown = v.ptes.len() as u32;
        if grown > 0 {
            self.madvise_dontneed(vma, 0, grown);
        }
        self.kmem_free_vma_tables(vma);
        self.advance(2 * self.cost.fd_access_ns);
        // mmap(): the new VMA in its place.
        let v = &mut self.vmas[vma as usize];
        v.ptes = Vec::new();
        v.huge_zero_pmds = Vec::new();
        v.file_pmds = Vec::new();
        v.swap_ra = SwapRaInfo::default();
        // A fresh `struct file`'s readahead state (the event does not say
        // whether the program mapped the same descriptor again); the
        // VMA's advice stays.
        if v.ra_slot != crate::readahead::RaSlots::NONE {
            self.vma_put_file(vma);
            self.vmas[vma as usize].ra_slot = self.ra_slots.open(self.cfg.ra_pages());
        }
    }

    /// `mm->map_count` of `task`: its VMAs; None for an unknown task.
    pub fn map_count(&self, task: TaskId) -> Option<usize> {
        self.tasks.get(task as usize).map(|t| t.vmas.len())
    }
}
