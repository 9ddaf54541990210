//! PMD mappings of PMD-size page-cache folios, and MADV_HUGEPAGE's
//! PMD-order read-around (mm/filemap.c, mm/memory.c, v6.18).
//!
//! On a filesystem with large folios (`machine.fs.large_folios`) a
//! page-cache folio of the PMD order (9: a 2 MiB write, or readahead's
//! largest windows) can be mapped by one PMD entry; with
//! `machine.fs.pmd_mappings` (off by default, so that the results recorded
//! before keep their bits) mmsim does so:
//!
//! * `filemap_map_pages()` → `filemap_map_pmd()`: fault-around finds the
//!   folio first (uptodate, not `PG_readahead`), and `do_set_pmd()` maps it
//!   whole if the PMD is none (no PTE table in that 2 MiB of the VMA);
//! * otherwise `finish_fault()` after `filemap_fault()` does the same for
//!   the folio it got (also for a write fault on a shared mapping, mapped
//!   dirty).
//!
//! `do_set_pmd()` maps only a folio of exactly `HPAGE_PMD_ORDER` whose
//! 2 MiB range lies inside the VMA at a file offset aligned as its address
//! (`thp_vma_suitable_order`: mmsim takes every mapping as PMD-aligned in
//! memory, so the VMA's file offset must be a multiple of 512 pages), not in
//! a VM_NOHUGEPAGE VMA (`vma_thp_disabled`); the sysfs THP settings do not
//! enter (the folio is already there). It counts `thp_file_mapped`. One
//! fault then maps 512 pages, where fault-around maps `fault_around_bytes`.
//!
//! Here the PMD entry is its 512 PTEs, all present and young (as the huge
//! zero page's are, `crate::huge_memory`), so that reclaim's rmap walk and
//! unmap work unchanged. Not modelled: the PMD's single accessed bit (the
//! rmap walk sees one young PTE per accessed page, where the kernel sees
//! one young PMD), splitting the PMD on a partial unmap (`thp_split_pmd`),
//! the page-table page the kernel does not need (with `kmem`, the PTE table
//! is still charged). The TLB saving shows only with `[machine.tlb]`
//! (`crate::tlb`: such a mapping is one 2 MiB entry); otherwise the saving
//! shown is in faults.
//!
//! MADV_HUGEPAGE on a file mapping (`Sim::madvise_file_hugepage`, VM_HUGEPAGE)
//! changes the read-around of a fault that misses (`do_sync_mmap_readahead`
//! as before the 2025 rework that made it follow `mmap_miss`, which may or
//! may not be in 6.18: not checked; the host cases of VALIDATION.md agree
//! with this one): the window
//! starts at the fault's index rounded down to 512 pages, is 1024 pages (512
//! under `MADV_RANDOM`) with the last 512 asynchronous, with `ra->order` 9,
//! even with readahead off, read by `page_cache_ra_order` into PMD-size
//! folios (order-0 ones without large folios).

use crate::event::FileId;
use crate::huge_memory::VmaThpAdvice;
use crate::mem::filemap::slot_folio;
use crate::mem::folio::{flags, FolioId};
use crate::mem::pagetable::{pte_present, VmaId, VmaKind};
use crate::readahead::{Advice, RaOwner, MAX_PAGECACHE_ORDER};
use crate::sim::{Sim, SimError};
use crate::stats::item::*;

/// `HPAGE_PMD_NR`: pages of a PMD mapping.
const HPAGE_PMD_NR: u32 = 1 << MAX_PAGECACHE_ORDER;

impl Sim {
    /// `madvise(MADV_HUGEPAGE)` (or `MADV_NOHUGEPAGE`, or neither with
    /// [`VmaThpAdvice::None`]) on file mapping `vma` (`hugepage_madvise`
    /// sets VM_HUGEPAGE on any VMA; khugepaged's file collapse is not
    /// modelled).
    pub fn madvise_file_hugepage(
        &mut self,
        vma: VmaId,
        advice: VmaThpAdvice,
    ) -> Result<(), SimError> {
        match self.vmas.get_mut(vma as usize) {
            Some(v) if matches!(v.kind, VmaKind::File { .. }) => v.thp_advice = advice,
            _ => return Err(SimError::Setup(format!("no file VMA {vma}"))),
        }
        Ok(())
    }

    /// `filemap_map_pmd()` / `finish_fault()` → `do_set_pmd()` (v6.18):
    /// maps folio `f` (holding page `index` of `vma`) by a PMD if it is
    /// PMD-size, its range fits the VMA at an aligned file offset, the VMA
    /// is not VM_NOHUGEPAGE and no PTE of that range is set. Counts
    /// `thp_file_mapped`. Returns whether it mapped.
    pub(crate) fn do_set_pmd(&mut self, vma: VmaId, index: u32, f: FolioId, write: bool) -> bool {
        let fo = &self.folios[f];
        if fo.order != MAX_PAGECACHE_ORDER {
            return false;
        }
        let v = &self.vmas[vma as usize];
        let VmaKind::File { pgoff, .. } = v.kind else {
            return false;
        };
        let base = index & !(HPAGE_PMD_NR - 1);
        if pgoff % HPAGE_PMD_NR != 0
            || base + HPAGE_PMD_NR > v.len
            || v.thp_advice == VmaThpAdvice::Nohugepage
            || (base..base + HPAGE_PMD_NR).any(|i| v.pte(i) != 0)
        {
            return false;
        }
        debug_assert_eq!(fo.index, pgoff + base);
        let exec = v.exec;
        let fo = &mut self.folios[f];
        // Saturating at 255, as every large mapping here (`mapcount_to_find`).
        fo.mapcount = (u32::from(fo.mapcount) + HPAGE_PMD_NR).min(255) as u8;
        if exec {
            fo.set(flags::EXEC_MAPPED);
        }
        let pte = pte_present(f, true, write);
        let v = &mut self.vmas[vma as usize];
        for i in base..base + HPAGE_PMD_NR {
            *v.pte_mut(i) = pte;
        }
        self.count_vm_events(THP_FILE_MAPPED, 1);
        if write {
            self.folio_mark_dirty(f);
        }
        true
    }

    /// `filemap_map_pages()`'s `filemap_map_pmd()` (v6.18): before
    /// fault-around, the folio cached at file page `findex` is mapped by a
    /// PMD if it is uptodate (no readahead still in flight over it), not
    /// marked `PG_readahead` (`next_uptodate_folio` skips those) and
    /// [`Sim::do_set_pmd`] takes it.
    pub(crate) fn filemap_map_pmd(
        &mut self,
        vma: VmaId,
        index: u32,
        file: FileId,
        findex: u32,
    ) -> bool {
        let Some(f) = slot_folio(self.files[file as usize].slot(findex)) else {
            return false;
        };
        if self.folios[f].order != MAX_PAGECACHE_ORDER || self.folios[f].test(flags::READAHEAD) {
            return false;
        }
        let ra = self.vmas[vma as usize].file_ra;
        if (ra.inflight_start..ra.inflight_end).contains(&findex) && self.clock < ra.inflight_done {
            return false;
        }
        self.do_set_pmd(vma, index, f, false)
    }

    /// `do_sync_mmap_readahead()` with VM_HUGEPAGE (v6.18): the window from
    /// `index` rounded down to 512 pages, 1024 pages (512 under
    /// `MADV_RANDOM`), its second half asynchronous, `ra->order` 9, read by
    /// [`Sim::page_cache_ra_order`]; readahead off does not stop it.
    pub(crate) fn do_sync_mmap_readahead_pmd(
        &mut self,
        vma: VmaId,
        file: FileId,
        index: u32,
    ) -> u64 {
        let ra = &mut self.vmas[vma as usize].file_ra;
        ra.start = index & !(HPAGE_PMD_NR - 1);
        ra.size = if ra.advice == Advice::Random {
            HPAGE_PMD_NR
        } else {
            2 * HPAGE_PMD_NR
        };
        ra.async_size = HPAGE_PMD_NR;
        ra.order = MAX_PAGECACHE_ORDER;
        let (start, size) = (ra.start, ra.size);
        if !self.cfg.fs.large_folios {
            // page_cache_ra_order()'s fallback without large folios.
            return self.do_page_cache_ra(file, start, size, HPAGE_PMD_NR);
        }
        self.page_cache_ra_order(RaOwner::Vma(vma), file)
    }
}
