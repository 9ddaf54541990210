//! Private file mappings: copy-on-write from the page cache (mm/memory.c,
//! v6.12), and the per-mm RSS counters and `nr_mapped` that show it.
//!
//! A `MAP_PRIVATE` file mapping (`Sim::mmap_file_private`) reads like a
//! shared one and writes into anonymous copies:
//!
//! * A **read fault** is `do_read_fault`: fault-around, then `filemap_fault`,
//!   and the page-cache folio is mapped read-only (clean PTE), as in a shared
//!   mapping (`crate::fault`).
//! * A **write fault on a page not present** is `do_cow_fault`: the
//!   anonymous folio is allocated and charged first (`folio_prealloc`, order
//!   0 — `vma_alloc_folio(GFP_HIGHUSER_MOVABLE, 0, …)` in v6.12, whatever the
//!   multi-size THP settings; the RFC v2 of seed 003 does not change this path
//!   either), then `__do_fault` → `filemap_fault` brings the file page into
//!   the page cache (a major fault and mmap readahead on a miss, no
//!   fault-around for a write), its content is copied, and `finish_fault`
//!   maps the copy young and dirty (`folio_add_new_anon_rmap`,
//!   `folio_add_lru_vma`, MM_ANONPAGES). The page-cache folio stays cached and
//!   is not mapped by this PTE.
//! * A **write to a present read-only PTE of a page-cache folio** is
//!   `do_wp_page` → `wp_page_copy` (the VMA is not VM_SHARED and the folio is
//!   not anonymous): a new order-0 anonymous folio (`folio_prealloc` without
//!   `need_zero`), the copy mapped young and dirty in its place, the old
//!   folio's mapcount dropped (`folio_remove_rmap_pte`; MM_FILEPAGES → MM_ANONPAGES).
//!   `ptep_clear_flush` drops the old PTE's accessed bit with it. If the PTE
//!   changed while the allocation reclaimed (`pte_same` fails), the new folio
//!   is freed and the fault runs again, counted again as the kernel's retried
//!   fault would be ([`Sim::retry_fault`], shared with `crate::fork`'s copies
//!   of anonymous pages: a loop, not a recursion).
//! * The copies are ordinary anonymous folios of the VMA (`space` = the VMA,
//!   `index` = the page in it): charged as anon, on the anon LRU, swapped out
//!   by reclaim (the PTE becomes a swap entry, which `handle_mm_fault` sends to
//!   `do_swap_page` in a file VMA too), freed by `munmap`/`MADV_DONTNEED`/exit.
//!   A write to a clean PTE of a copy (after a swap-in by a read) reuses it
//!   (`wp_can_reuse_anon_folio`: exclusive; `crate::fork` does not share a
//!   private file mapping's copies with a child).
//!
//! Cost: `do_cow_fault` is the file fault's own cost (`minor_fault_ns` on a
//! cached page, the read and its wait on a miss) plus `minor_fault_ns` for
//! the allocation, the 4 KiB copy (in place of the zeroing that cost
//! includes) and the PTE; `wp_page_copy` is `access_ns` (the fault) plus
//! `minor_fault_ns`.
//!
//! A page-cache folio mapped by a PMD (`machine.fs.pmd_mappings`, a read
//! fault) and written through a private mapping has its PMD split first
//! (`wp_huge_pmd` → `__split_huge_pmd`, `thp_split_pmd`: all 512 pages
//! unmapped), then the store is a `do_cow_fault` of its page
//! ([`Sim::wp_huge_pmd_file`]). `mmsim explain`
//! follows the file page of a private mapping, not its anonymous copies.

use crate::event::FileId;
use crate::mem::folio::{flags, FolioId};
use crate::mem::pagetable::{pte_present, TaskId, VmaId, VmaKind, PTE_FOLIO_MASK, PTE_PRESENT};
use crate::sim::{Policy, Sim, SimError};

/// A task's resident-set counters, `get_mm_counter()` (include/linux/mm.h,
/// v6.12) as `/proc/<pid>/status` prints them (RssFile, RssAnon, VmSwap), in
/// pages. The shared zero page counts in none of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MmCounters {
    /// MM_FILEPAGES: PTEs mapping page-cache folios.
    pub file: u64,
    /// MM_ANONPAGES: PTEs mapping anonymous folios (private copies included).
    pub anon: u64,
    /// MM_SWAPENTS: swap entries in the task's page tables.
    pub swap: u64,
}

/// The state of [`Sim::retry_fault`]: whether a retried fault runs, and the
/// store to fault again after it (VMA, page).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FaultRetry {
    retrying: bool,
    retry: Option<(VmaId, u32)>,
}

impl Sim {
    /// Maps pages `[pgoff, pgoff + pages)` of `file` into `task` with
    /// `MAP_PRIVATE` (see the module overview); the errors of
    /// [`Sim::mmap_file`].
    pub fn mmap_file_private(
        &mut self,
        task: TaskId,
        file: FileId,
        pgoff: u32,
        pages: u64,
    ) -> Result<VmaId, SimError> {
        let id = self.mmap_file(task, file, pgoff, pages, false)?;
        if let VmaKind::File { private, .. } = &mut self.vmas[id as usize].kind {
            *private = true;
        }
        Ok(id)
    }

    /// Whether `vma` is a `MAP_PRIVATE` file mapping.
    #[inline]
    pub(crate) fn vma_is_private_file(&self, vma: VmaId) -> bool {
        matches!(
            self.vmas[vma as usize].kind,
            VmaKind::File { private: true, .. }
        )
    }

    /// `folio_prealloc(…, need_zero = false)` (mm/memory.c, v6.12): an
    /// order-0 anonymous folio for a copy, allocated and charged (active
    /// first under `new_anon_active`), not mapped nor on a list yet. None if
    /// it could not be had or its own OOM kill took the faulting task.
    pub(crate) fn folio_prealloc_copy(&mut self, vma: VmaId, index: u32) -> Option<FolioId> {
        let mut fl = flags::SWAPBACKED | flags::DIRTY;
        if let Policy::Classic(r) = self.policy {
            if r.new_anon_active {
                fl |= flags::ACTIVE;
            }
        }
        let f = self.alloc_folio(vma, index, fl, crate::gfp::GFP_USER_FOLIO)?;
        if self.task_dead(vma) {
            self.free_folio(f);
            return None;
        }
        Some(f)
    }

    fn task_dead(&self, vma: VmaId) -> bool {
        self.tasks[self.vmas[vma as usize].task as usize].dead
    }

    /// Maps the copy `f` young and dirty at `index` of `vma` with mapcount 1
    /// and puts it on the LRU (`set_pte_range`, `folio_add_lru_vma`).
    pub(crate) fn map_copy(&mut self, vma: VmaId, index: u32, f: FolioId) {
        self.folios[f].mapcount = 1;
        *self.vmas[vma as usize].pte_mut(index) = pte_present(f, true, true);
        // The store makes the copy non-zero (`machine.swap_zero_pages`).
        self.anon_wp_fault_content(f);
        self.folio_add_lru(f);
    }

    /// `do_cow_fault()` (mm/memory.c, v6.12): a store to page `index` of
    /// private file mapping `vma` whose PTE is none (see the module overview).
    pub(crate) fn do_cow_fault(&mut self, vma: VmaId, index: u32, file: FileId, findex: u32) {
        if self.kmem.is_some() {
            // `__pte_alloc()`: the PTE was none (crate::kmem).
            self.kmem_pte_alloc(vma, index);
        }
        let Some(new) = self.folio_prealloc_copy(vma, index) else {
            return;
        };
        // `__do_fault()`: the page-cache folio to copy. The copy is on no
        // list, so the reclaim this may run cannot take it.
        let src = self.filemap_fault(vma, file, findex);
        if src.is_none() || self.task_dead(vma) {
            self.free_folio(new);
            return;
        }
        self.advance(self.cost.minor_fault_ns);
        self.map_copy(vma, index, new);
    }

    /// `wp_page_copy()` (mm/memory.c, v6.12) of page-cache folio `old`,
    /// mapped read-only at `index` of private file mapping `vma`: see the
    /// module overview.
    pub(crate) fn wp_page_copy_file(&mut self, vma: VmaId, index: u32, old: FolioId) {
        let Some(new) = self.folio_prealloc_copy(vma, index) else {
            return;
        };
        let pte = self.vmas[vma as usize].pte(index);
        if pte & PTE_PRESENT == 0 || pte & PTE_FOLIO_MASK != old {
            // `pte_same()` failed: reclaim unmapped the page meanwhile.
            self.retry_copy_fault(new, vma, index, false);
            return;
        }
        self.advance(self.cost.minor_fault_ns);
        let fo = &mut self.folios[old];
        // A saturated count (a PMD-mapped folio, `do_set_pmd`) stays
        // "unknown": rmap walks every mapping rather than trust it.
        if fo.mapcount != u8::MAX {
            fo.mapcount -= 1;
        }
        // ptep_clear_flush() of the page-cache PTE (crate::tlb).
        self.flush_tlb_range(vma, index, index + 1, false);
        self.map_copy(vma, index, new);
    }

    /// The store to page `index` of `vma` faults again: its copy-on-write
    /// found the PTE changed (`pte_same` failed in `wp_page_copy()`, v6.12
    /// mm/memory.c: the copy's allocation reclaimed the page), and the
    /// kernel returns from the fault for the store to fault anew. Called by
    /// [`Sim::wp_page_copy_file`] and `crate::fork`'s `wp_page_copy_anon`.
    ///
    /// Run as a loop, not a recursion: the outermost retry runs the faults
    /// one after another, and a retry asked for inside one of them is
    /// queued for the next turn, so an allocation that keeps reclaiming the
    /// page cannot grow the stack. The order of events is the recursion's:
    /// nothing between the nested copy and its `handle_mm_fault` acts after
    /// it returns but that fault's `anon_fault_content`, which a pending
    /// retry skips ([`Sim::fault_retry_pending`]) as the retried fault does
    /// it itself.
    pub(crate) fn retry_fault(&mut self, vma: VmaId, index: u32) {
        let r = &mut self.fault_retry;
        if r.retrying {
            debug_assert!(r.retry.is_none(), "one retry per fault");
            r.retry = Some((vma, index));
            return;
        }
        r.retrying = true;
        let mut next = Some((vma, index));
        while let Some((v, i)) = next {
            let pte = self.vmas[v as usize].pte(i);
            self.handle_mm_fault(v, i, true, pte);
            next = self.fault_retry.retry.take();
        }
        self.fault_retry.retrying = false;
    }

    /// The copy `new` of a write-protect fault is dropped, `pte_same` having
    /// failed: the fault returns uncounted (its access undone, and its hit,
    /// or its miss when it read the page from swap) and the store faults
    /// again ([`Sim::retry_fault`]).
    pub(crate) fn retry_copy_fault(&mut self, new: FolioId, vma: VmaId, index: u32, swapin: bool) {
        self.free_folio(new);
        self.acc.accesses -= 1;
        if swapin {
            self.acc.misses -= 1;
        } else {
            self.acc.hits -= 1;
        }
        self.retry_fault(vma, index);
    }

    /// A fault's retry is queued ([`Sim::retry_fault`]): the fault that
    /// asked for it is unwinding.
    #[inline]
    pub(crate) fn fault_retry_pending(&self) -> bool {
        self.fault_retry.retry.is_some()
    }

    /// No retried fault is running or queued ([`Sim::retry_fault`]).
    #[cfg(test)]
    pub(crate) fn fault_retry_idle(&self) -> bool {
        !self.fault_retry.retrying && self.fault_retry.retry.is_none()
    }

    /// The RSS counters of `task` (see [`MmCounters`]), counted from its
    /// page tables; None for an unknown task. Not for the hot path.
    pub fn mm_counters(&self, task: TaskId) -> Option<MmCounters> {
        let t = self.tasks.get(task as usize)?;
        let mut c = MmCounters::default();
        for &vma in &t.vmas {
            for &pte in &self.vmas[vma as usize].ptes {
                if pte == 0 {
                    continue;
                }
                if pte & PTE_PRESENT == 0 {
                    c.swap += 1;
                    continue;
                }
                let f = pte & PTE_FOLIO_MASK;
                if f == self.zero_folio {
                    continue;
                }
                if self.folios[f].is_file() {
                    c.file += 1;
                } else {
                    c.anon += 1;
                }
            }
        }
        Some(c)
    }

    /// `nr_mapped` of /proc/vmstat (NR_FILE_MAPPED, v6.12): page-cache pages
    /// mapped by at least one PTE, counted from the page tables of the live
    /// tasks. Not for the hot path.
    pub fn nr_file_mapped(&self) -> u64 {
        let mut pages: Vec<(u32, u32)> = Vec::new();
        for t in self.tasks.iter().filter(|t| !t.dead) {
            for &vma in &t.vmas {
                let v = &self.vmas[vma as usize];
                let VmaKind::File { file, pgoff, .. } = v.kind else {
                    continue;
                };
                for (i, &pte) in v.ptes.iter().enumerate() {
                    if pte & PTE_PRESENT != 0 && self.folios[pte & PTE_FOLIO_MASK].is_file() {
                        pages.push((file, pgoff + i as u32));
                    }
                }
            }
        }
        pages.sort_unstable();
        pages.dedup();
        pages.len() as u64
    }
}
