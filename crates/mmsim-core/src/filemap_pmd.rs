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
//! one young PMD), splitting the PMD on a partial unmap (`thp_split_pmd`;
//! the split of a store through a write-protected PMD is modelled:
//! [`Sim::wp_huge_pmd_file`]),
//! the page-table page the kernel does not need (with `kmem`, the PTE table
//! is still charged). The TLB saving shows only with `[machine.tlb]`
//! (`crate::tlb`: such a mapping is one 2 MiB entry); otherwise the saving
//! shown is in faults.
//!
//! MADV_HUGEPAGE on a file mapping (`Sim::madvise_file_hugepage`, VM_HUGEPAGE)
//! changes the read-around of a fault that misses (`do_sync_mmap_readahead`):
//! the window starts at the fault's index rounded down to 512 pages, is 1024
//! pages (512 under `MADV_RANDOM`) with the last 512 asynchronous, with
//! `ra->order` 9, even with readahead off, read by `page_cache_ra_order` into
//! PMD-size folios (order-0 ones without large folios). Whether a miss first
//! counts against `mmap_miss` is the kernel version
//! ([`HugepageReadaround`], `machine.hugepage_readaround`): not up to 6.18
//! (the default), yes from 6.19.

use serde::{Deserialize, Serialize};

use crate::event::FileId;
use crate::huge_memory::VmaThpAdvice;
use crate::mem::filemap::slot_folio;
use crate::mem::folio::{flags, FolioId};
use crate::mem::pagetable::{
    pte_present, VmaId, VmaKind, PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG,
};
use crate::readahead::{Advice, RaOwner, MAX_PAGECACHE_ORDER, MMAP_LOTSAMISS};
use crate::sim::{Sim, SimError};
use crate::stats::item::*;

/// `HPAGE_PMD_NR`: pages of a PMD mapping.
const HPAGE_PMD_NR: u32 = 1 << MAX_PAGECACHE_ORDER;

/// Which `do_sync_mmap_readahead()` a fault that misses in a VM_HUGEPAGE
/// file mapping follows (`machine.hugepage_readaround`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HugepageReadaround {
    /// 5.18 (4687fdbb805a "mm/filemap: Support VM_HUGEPAGE for file
    /// mappings") through 6.18 (the default): every miss reads the PMD
    /// window, whatever `mmap_miss` says, and so does a miss with
    /// readahead off, `MADV_RANDOM` or `MADV_SEQUENTIAL`.
    #[default]
    #[serde(rename = "v6.18")]
    V6_18,
    /// 6.19 ("mm: readahead: make thp readahead conditional to mmap_miss
    /// logic", Roman Gushchin, v3 of 2025-10-06; queued in the mm tree
    /// after the 6.18 merge window opened, so first in 6.19 — from the mm
    /// tree's shortlogs, not checked against a 6.19 tree): outside
    /// `MADV_SEQUENTIAL` the miss counts against `mmap_miss` first, and
    /// beyond `MMAP_LOTSAMISS` the fault reads only its own page, as an
    /// ordinary mapping's does; readahead off and `MADV_RANDOM` still take
    /// the PMD window below that. It undoes a regression of 5.18 for
    /// tight memory.max groups, where every fault read 2-4 MiB that
    /// reclaim then threw away.
    ///
    /// A PMD mapping (`filemap_map_pmd`) maps no page through the
    /// fault-around loop, so it takes nothing off `mmap_miss`: on a
    /// mapping whose misses are all PMD-mapped the count only grows, and
    /// the 101st miss reads one page.
    #[serde(rename = "v6.19")]
    V6_19,
}

crate::setting_names! { HugepageReadaround, "hugepage read-around",
    V6_18 => "v6.18" | "6.18",
    V6_19 => "v6.19" | "6.19",
}

impl HugepageReadaround {
    /// The default (`v6.18`): serialized only when another value is set.
    pub fn is_default(&self) -> bool {
        *self == HugepageReadaround::V6_18
    }
}

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
        fo.set(flags::PMD_MAPPED);
        let pte = pte_present(f, true, write);
        let v = &mut self.vmas[vma as usize];
        for i in base..base + HPAGE_PMD_NR {
            *v.pte_mut(i) = pte;
        }
        self.count_vm_events(THP_FILE_MAPPED, 1);
        if write && self.folio_mark_dirty_mapped(f) {
            self.balance_dirty_pages_ratelimited();
        }
        true
    }

    /// Whether page-cache folio `f` is mapped by a PMD in shared file
    /// mapping `vma` (mmsim keeps no PMD bit: with `fs.pmd_mappings`, an
    /// order-9 folio [`Sim::do_set_pmd`] mapped (`flags::PMD_MAPPED`) whose
    /// aligned 2 MiB of the VMA holds its 512 pages, every PTE present and
    /// mapping it, as `do_set_pmd` leaves it): the PMD's first page of the
    /// VMA. `page_vma_mapped_walk()` finding `pvmw->pmd` set
    /// (mm/page_vma_mapped.c, v6.12). Cold: 512 PTE reads. **Departure:**
    /// the flag is per folio and is cleared only by the split at a store
    /// ([`Sim::wp_huge_pmd_file`]) or when the folio is freed, so a folio
    /// that is PMD-mapped in one VMA (or was, before a zap) and mapped
    /// whole page by page in another (VM_NOHUGEPAGE) is taken as
    /// PMD-mapped in both.
    pub(crate) fn file_pmd_mapped(&self, vma: VmaId, f: FolioId) -> Option<u32> {
        let fo = &self.folios[f];
        if !self.cfg.fs.pmd_mappings || fo.order != MAX_PAGECACHE_ORDER || !fo.is_file() {
            return None;
        }
        let v = &self.vmas[vma as usize];
        let VmaKind::File {
            file,
            pgoff,
            private: false,
        } = v.kind
        else {
            return None;
        };
        if !fo.test(flags::PMD_MAPPED)
            || file != fo.space
            || pgoff % HPAGE_PMD_NR != 0
            || fo.index < pgoff
        {
            return None;
        }
        let base = fo.index - pgoff;
        let maps = |i: u32| {
            let p = v.pte(i);
            p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f
        };
        (base + HPAGE_PMD_NR <= v.len && (base..base + HPAGE_PMD_NR).all(maps)).then_some(base)
    }

    /// The first store through a write-protected PMD of page-cache folio
    /// `f` in shared mapping `vma` (`folio_mkclean` cleaned it at
    /// writeback, or a read fault mapped it), v6.12 mm/memory.c and
    /// mm/huge_memory.c: `__handle_mm_fault()` → `wp_huge_pmd()`; a shared
    /// VMA's `huge_fault` is tried first, but only DAX has one that
    /// does not fall back (ext4's is DAX-only, xfs's `xfs_filemap_huge_fault`
    /// returns VM_FAULT_FALLBACK for a non-DAX inode, shmem has none), so
    /// `__split_huge_pmd()` → `__split_huge_pmd_locked()`, which for a file
    /// VMA does not remap the PMD by PTEs: it counts `thp_split_pmd`, zaps
    /// the PMD (`pmdp_huge_clear_flush`: one flush of the PMD's range from
    /// the faulting task, [`Sim::flush_pmd_tlb_range`]), carries its young
    /// bit into PG_referenced (`folio_set_referenced` if not set) and its
    /// dirty bit into the folio, and drops the mapping. The fault falls back
    /// to `handle_pte_fault()` on a PMD that is none now: `do_fault()` →
    /// `do_shared_fault()` → `filemap_fault()` (cached) and
    /// `do_page_mkwrite()`, then `finish_fault()`, which maps a PMD-size
    /// folio by a PMD again (`do_set_pmd`, writable and dirty,
    /// `thp_file_mapped` counted again) — so the store dirties the whole
    /// PMD, not one PTE; no PTE-level `do_wp_page` runs. One fault
    /// (`pgfault`, counted by the caller).
    pub(crate) fn wp_huge_pmd_file(&mut self, vma: VmaId, index: u32, f: FolioId, base: u32) {
        self.count_vm_events(THP_SPLIT_PMD, 1);
        self.flush_pmd_tlb_range(vma, base, false);
        let v = &mut self.vmas[vma as usize];
        let (mut young, mut dirty) = (false, false);
        for i in base..base + HPAGE_PMD_NR {
            let p = v.pte_mut(i);
            young |= *p & PTE_YOUNG != 0;
            dirty |= *p & PTE_DIRTY != 0;
            *p = 0;
        }
        let VmaKind::File { file, pgoff, .. } = v.kind else {
            return;
        };
        let fo = &mut self.folios[f];
        // `folio_remove_rmap_pmd`: the count `do_set_pmd` saturated stays
        // "unknown" for the rmap walks; `do_set_pmd` maps it again below.
        fo.clear(flags::PMD_MAPPED);
        if young && !fo.test(flags::REFERENCED) {
            fo.set(flags::REFERENCED);
        }
        if dirty && !fo.test(flags::DIRTY) {
            self.folio_mark_dirty_mapped(f);
        }
        self.lru_gen.in_fault = self.vmas[vma as usize].file_ra.advice == Advice::Normal;
        self.do_fault(vma, index, file, pgoff + index, true, false);
        self.lru_gen.in_fault = false;
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
    /// [`Sim::page_cache_ra_order`]; readahead off does not stop it. Under
    /// [`HugepageReadaround::V6_19`] a miss outside `MADV_SEQUENTIAL` first
    /// counts against `mmap_miss`, and beyond `MMAP_LOTSAMISS` nothing is
    /// read ahead (0: the fault reads its page alone).
    pub(crate) fn do_sync_mmap_readahead_pmd(
        &mut self,
        vma: VmaId,
        file: FileId,
        index: u32,
    ) -> u64 {
        let v6_19 = self.cfg.hugepage_readaround == HugepageReadaround::V6_19;
        let ra = &mut self.vmas[vma as usize].file_ra;
        if v6_19 && ra.advice != Advice::Sequential {
            if ra.mmap_miss < MMAP_LOTSAMISS * 10 {
                ra.mmap_miss += 1;
            }
            if ra.mmap_miss > MMAP_LOTSAMISS {
                return 0;
            }
        }
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
