//! Virtual memory areas and their page tables.
//!
//! A VMA (`struct vm_area_struct`) is a range of a task's address space,
//! anonymous or mapping a file. Its page table is a dense array of 32-bit
//! PTEs, one per page, grown on first touch. A PTE is one of:
//!
//! * none (0),
//! * present: `PTE_PRESENT | young | dirty | folio id` — the hardware sets
//!   *young* on every access and *dirty* on every write; reclaim's rmap walk
//!   (`folio_referenced`) tests and clears young; there is no write bit: a
//!   clean PTE is write-protected (a store faults), except a clean PTE of an
//!   anonymous folio marked [`super::folio::GEN_REFS_MAYWRITE`] (a v6.11+
//!   read swap-in mapped it writable),
//! * a swap entry (anonymous only): `slot + 1` with the present bit clear.
//!
//! Four bytes per virtual page keeps a terabyte-class address space cheap.

use super::folio::FolioId;

/// Dense VMA id.
pub type VmaId = u32;
/// Dense task id.
pub type TaskId = u32;

/// PTE bit: maps a resident folio.
pub(crate) const PTE_PRESENT: u32 = 1 << 31;
/// PTE bit: accessed since the bit was last cleared (hardware "accessed").
pub(crate) const PTE_YOUNG: u32 = 1 << 30;
/// PTE bit: written since mapped clean (hardware "dirty").
pub(crate) const PTE_DIRTY: u32 = 1 << 29;
/// Mask of the folio id in a present PTE.
pub(crate) const PTE_FOLIO_MASK: u32 = PTE_DIRTY - 1;

/// Builds a present PTE.
#[inline]
pub(crate) fn pte_present(folio: FolioId, young: bool, dirty: bool) -> u32 {
    debug_assert!(folio <= PTE_FOLIO_MASK);
    PTE_PRESENT | folio | if young { PTE_YOUNG } else { 0 } | if dirty { PTE_DIRTY } else { 0 }
}

/// Builds a swap PTE for `slot`.
#[inline]
pub(crate) fn pte_swap(slot: u32) -> u32 {
    debug_assert!(slot < PTE_PRESENT - 1);
    slot + 1
}

/// What a VMA maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VmaKind {
    /// Private anonymous memory (heap, stack, MAP_ANONYMOUS).
    Anon,
    /// A file mapping: page `i` of the VMA is page `pgoff + i` of `file`.
    File {
        /// The mapped file.
        file: u32,
        /// First file page mapped.
        pgoff: u32,
        /// `MAP_PRIVATE` (no VM_SHARED): a store copies the page into an
        /// anonymous folio (`crate::cow`), so the VMA's PTEs may map
        /// page-cache folios, anonymous copies, or swap entries of those.
        /// False: `MAP_SHARED`, whose PTEs map page-cache folios only.
        private: bool,
    },
}

impl VmaKind {
    /// A `MAP_SHARED` mapping of `file` from page `pgoff`.
    pub(crate) fn shared_file(file: u32, pgoff: u32) -> VmaKind {
        VmaKind::File {
            file,
            pgoff,
            private: false,
        }
    }
}

/// One VMA with its page table.
#[derive(Clone, Debug)]
pub(crate) struct Vma {
    /// Owning task.
    pub task: TaskId,
    /// What it maps.
    pub kind: VmaKind,
    /// VM_EXEC: executable mapping (text of a program or library).
    pub exec: bool,
    /// VM_LOCKED (`mlock`): reclaim's rmap walk stops at it and keeps the
    /// folio (`folio_referenced_one`, `try_to_unmap_one`). Nothing sets it yet.
    pub locked: bool,
    /// Length in pages.
    pub len: u32,
    /// VM_HUGEPAGE / VM_NOHUGEPAGE from `madvise` (anonymous VMAs).
    pub thp_advice: crate::huge_memory::VmaThpAdvice,
    /// PTEs, grown on first touch up to `len`.
    pub ptes: Vec<u32>,
    /// One bit per PMD (512 pages) mapped by the huge zero page
    /// (`crate::huge_memory`; its PTEs all map the zero folio, standing for
    /// the PMD entry until a write splits it). Empty unless
    /// `machine.zero_page` and PMD-size THP are on.
    pub huge_zero_pmds: Vec<u64>,
    /// One bit per PMD (512 pages) of a file VMA mapped by a PMD entry of
    /// a PMD-size page-cache folio (`do_set_pmd`, `crate::filemap_pmd`; its
    /// 512 PTEs all map that folio, standing for the entry): mmsim's
    /// `pmd_trans_huge(*pmd)` of this VMA's page table, which is what the
    /// kernel reads (`page_vma_mapped_walk`, `zap_pmd_range`,
    /// `__handle_mm_fault`) to tell a PMD from 512 PTEs. Set by
    /// `do_set_pmd`, cleared where the entry goes (its split, its zap,
    /// `try_to_unmap`). Empty unless `machine.fs.pmd_mappings`.
    pub file_pmds: Vec<u64>,
    /// `vma->swap_readahead_info`: the last swap fault's page, window and hits.
    pub swap_ra: SwapRaInfo,
    /// The readahead state of its file (`vma->vm_file->f_ra`): a slot of
    /// `crate::readahead::RaSlots`, shared with every VMA of the same
    /// `struct file` (a forked child's copy); `RaSlots::NONE` for an
    /// anonymous VMA or once the task has exited.
    pub ra_slot: u32,
    /// The `madvise` advice (`VM_RAND_READ`/`VM_SEQ_READ`, `vm_flags`).
    pub ra_advice: crate::readahead::Advice,
}

/// Per-VMA swap readahead state (`SWAP_RA_VAL(addr, win, hits)`, mm/swap_state.c).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SwapRaInfo {
    /// Page index of the last swap fault or swap-cache hit.
    pub prev: u32,
    /// Window of the last readahead, pages.
    pub win: u32,
    /// Readahead pages hit since the last readahead.
    pub hits: u32,
}

impl Vma {
    /// `vma_has_recency()` (v6.3+): false under `MADV_RANDOM` or
    /// `MADV_SEQUENTIAL`, whose references reclaim ignores.
    #[inline]
    pub(crate) fn has_recency(&self) -> bool {
        self.ra_advice == crate::readahead::Advice::Normal
    }

    /// The PTE for page `index`, growing the table if needed. `index < len` is the caller's contract.
    #[inline(always)]
    pub(crate) fn pte_mut(&mut self, index: u32) -> &mut u32 {
        let i = index as usize;
        if i >= self.ptes.len() {
            // Returned from the growth, so that past this test the index
            // is known to be in bounds (no second check on the hot path).
            return self.grow(i);
        }
        &mut self.ptes[i]
    }

    /// Grows the array to cover `i`: by a quarter at a time (never past the
    /// end of the region), so a partly touched region costs at most ~5 bytes
    /// per touched page while the copies stay amortised O(1).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) -> &mut u32 {
        let cur = self.ptes.len();
        let want = (i + 1)
            .max(cur + cur / 4 + 1024)
            .min(self.len as usize)
            .max(i + 1);
        self.ptes.reserve_exact(want - cur);
        self.ptes.resize(want, 0);
        &mut self.ptes[i]
    }

    /// Whether PMD `pmd` (pages `pmd * 512 ..`) is a page-cache PMD mapping
    /// ([`Vma::file_pmds`]).
    #[inline]
    pub(crate) fn file_pmd(&self, pmd: u32) -> bool {
        let p = pmd as usize;
        self.file_pmds
            .get(p / 64)
            .is_some_and(|w| w & (1 << (p % 64)) != 0)
    }

    /// Sets or clears the bit of PMD `pmd` in [`Vma::file_pmds`].
    pub(crate) fn set_file_pmd(&mut self, pmd: u32, on: bool) {
        let p = pmd as usize;
        if on {
            if self.file_pmds.len() <= p / 64 {
                self.file_pmds.resize(p / 64 + 1, 0);
            }
            self.file_pmds[p / 64] |= 1 << (p % 64);
        } else if let Some(w) = self.file_pmds.get_mut(p / 64) {
            *w &= !(1 << (p % 64));
        }
    }

    /// The PTE for page `index`, or 0 if never touched.
    #[inline]
    pub(crate) fn pte(&self, index: u32) -> u32 {
        self.ptes.get(index as usize).copied().unwrap_or(0)
    }
}
