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
//! unmap work unchanged, and a bit of the VMA ([`Vma::file_pmds`], mmsim's
//! `pmd_trans_huge`) says which 512 PTEs are a PMD — the page table's
//! answer, per VMA, as the kernel's walks read it (a folio flag, or a count
//! such as `folio_entire_mapcount`, cannot say which VMA holds the PMD).
//! The entry goes as the kernel's does (v6.12 mm/huge_memory.c, v6.16+
//! for the accessed mark):
//!
//! * a zap covering it whole (`MADV_DONTNEED`, `munmap`, exit):
//!   [`Sim::zap_huge_pmd_file`], one entry, one flush entry at PMD stride,
//!   one `folio_mark_accessed` if young;
//! * a zap covering it in part, a store through it once write-protected
//!   (shared: refaulted by a PMD; private: `do_cow_fault` of one page), or
//!   reclaim's `try_to_unmap` (`TTU_SPLIT_HUGE_PMD`, kswapd's flush a
//!   remote one; the restarted walk finds no PTE there, so a walk that
//!   only split PMDs queues no batched flush): the split
//!   ([`Sim::split_file_pmd`], `thp_split_pmd`, PG_referenced from the
//!   young bit), which for a file VMA zaps all 512 pages.
//!
//! After either, and after an unmap stopped by a VM_LOCKED VMA, the
//! folio's count is counted again from the page tables
//! ([`Sim::file_folio_remap_count`]). Not modelled: the PMD's single
//! accessed bit (the rmap walk sees one young PTE per accessed page, where
//! the kernel sees one young PMD), the page-table page the kernel does not
//! need (with `kmem`, the PTE table is still charged), a PMD left with a
//! PTE table after its pages were zapped (mmsim's "PMD none" is "no PTE of
//! the 2 MiB set", so such a range is mapped by a PMD again). The TLB saving shows only with `[machine.tlb]`
//! (`crate::tlb`: such a mapping is one 2 MiB entry); otherwise the saving
//! shown is in faults.
//!
//! [`Vma::file_pmds`]: crate::mem::pagetable::Vma::file_pmds
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
        if fo.order() != MAX_PAGECACHE_ORDER {
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
        v.set_file_pmd(base / HPAGE_PMD_NR, true);
        self.count_vm_events(THP_FILE_MAPPED, 1);
        if write && self.fault_dirty_shared_page(f) {
            self.balance_dirty_pages_ratelimited();
        }
        true
    }

    /// Whether page-cache folio `f` is mapped by a PMD in file mapping
    /// `vma` (shared or private): the bit of its PMD in [`Vma::file_pmds`]
    /// (mmsim's `pmd_trans_huge`), whose 512 PTEs map `f`. Returns the
    /// PMD's first page of the VMA. `page_vma_mapped_walk()` finding
    /// `pvmw->pmd` set (mm/page_vma_mapped.c, v6.12): the kernel reads the
    /// page table of that VMA, not the folio, so a folio PMD-mapped in one
    /// VMA and mapped page by page in another (VM_NOHUGEPAGE, or after the
    /// PMD's zap) is a PMD in the first only. (mmsim used a folio flag,
    /// a stand-in for `folio_entire_mapcount() > 0`, before: a count of
    /// PMD mappings cannot tell which VMA holds one either.) Cold: 512 PTE
    /// reads.
    ///
    /// [`Vma::file_pmds`]: crate::mem::pagetable::Vma::file_pmds
    pub(crate) fn file_pmd_mapped(&self, vma: VmaId, f: FolioId) -> Option<u32> {
        let fo = &self.folios[f];
        if !self.cfg.fs.pmd_mappings || fo.order() != MAX_PAGECACHE_ORDER || !fo.is_file() {
            return None;
        }
        let v = &self.vmas[vma as usize];
        let VmaKind::File { file, pgoff, .. } = v.kind else {
            return None;
        };
        if v.file_pmds.is_empty() || file != fo.space || fo.index < pgoff {
            return None;
        }
        let base = fo.index - pgoff;
        if !base.is_multiple_of(HPAGE_PMD_NR) || !v.file_pmd(base / HPAGE_PMD_NR) {
            return None;
        }
        let maps = |i: u32| {
            let p = v.pte(i);
            p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f
        };
        debug_assert!(
            (base..base + HPAGE_PMD_NR).all(maps),
            "a PMD bit maps its folio"
        );
        (base + HPAGE_PMD_NR <= v.len && (base..base + HPAGE_PMD_NR).all(maps)).then_some(base)
    }

    /// The PMD of file VMA `vma` at page `base`, mapping page-cache folio
    /// `f`, is cleared: its 512 PTEs and its bit (mmsim's `pmd_clear`); the
    /// folio's count loses the 512 (`folio_remove_rmap_pmd`,
    /// [`Sim::file_folio_remap_count`]). Returns the entry's (young,
    /// dirty) bits.
    fn clear_file_pmd(&mut self, vma: VmaId, base: u32, f: FolioId) -> (bool, bool) {
        let v = &mut self.vmas[vma as usize];
        let (mut young, mut dirty) = (false, false);
        for i in base..base + HPAGE_PMD_NR {
            let p = v.pte_mut(i);
            young |= *p & PTE_YOUNG != 0;
            dirty |= *p & PTE_DIRTY != 0;
            *p = 0;
        }
        v.set_file_pmd(base / HPAGE_PMD_NR, false);
        self.file_folio_remap_count(f);
        (young, dirty)
    }

    /// `folio_mapcount()` of page-cache folio `f` counted again from the
    /// page tables of its file's mappings (min 255): after a PMD of it went
    /// or PTEs of a saturated count were zapped, a count that saturated at
    /// 255 cannot be decremented (it may stand for more mappings than 255),
    /// and a count left at 0 while other VMAs still map the folio would let
    /// reclaim free it mapped. Cold: a walk of the folio's range in each
    /// mapping that has page tables (the file's `mappings` keeps VMAs
    /// unmapped since, with no PTEs), stopping once 255 are found.
    pub(crate) fn file_folio_remap_count(&mut self, f: FolioId) {
        let file = self.folios[f].space as usize;
        let mut n = 0u32;
        'walk: for m in 0..self.files[file].mappings.len() {
            let vid = self.files[file].mappings[m];
            if self.vmas[vid as usize].ptes.is_empty() {
                continue;
            }
            let Some((lo, hi)) = self.file_large_range(f, vid) else {
                continue;
            };
            let v = &self.vmas[vid as usize];
            for i in lo..hi {
                let p = v.pte(i);
                if p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f {
                    n += 1;
                    if n == 255 {
                        break 'walk;
                    }
                }
            }
        }
        self.folios[f].mapcount = n as u8;
    }

    /// `__split_huge_pmd()` → `__split_huge_pmd_locked()` of the PMD of
    /// page-cache folio `f` at page `base` of file VMA `vma` (v6.12
    /// mm/huge_memory.c): for a file VMA the PMD is not remapped by PTEs,
    /// it is zapped. Counts `thp_split_pmd`, flushes the PMD's range from
    /// the task (`pmdp_huge_clear_flush`: [`Sim::flush_pmd_tlb_range`], a
    /// full flush on x86; `remote` when the splitting CPU is not the
    /// task's, kswapd's), carries the entry's young bit into PG_referenced
    /// (`folio_set_referenced` if not set) and its dirty bit into the folio,
    /// and drops the mapping (`folio_remove_rmap_pmd`; MM_FILEPAGES by
    /// HPAGE_PMD_NR: mmsim counts RSS from the PTEs). Reached from a store
    /// through the write-protected PMD ([`Sim::wp_huge_pmd_file`]), from
    /// a zap that covers the PMD in part (`zap_pmd_range`, `crate::madvise`)
    /// and from reclaim's `try_to_unmap_one` with `TTU_SPLIT_HUGE_PMD`
    /// (`split_huge_pmd_locked` → `__split_huge_pmd_locked`, the same
    /// steps: `Sim::try_to_unmap_file_large`).
    pub(crate) fn split_file_pmd(&mut self, vma: VmaId, base: u32, f: FolioId, remote: bool) {
        self.count_vm_events(THP_SPLIT_PMD, 1);
        self.flush_pmd_tlb_range(vma, base, remote);
        let (young, dirty) = self.clear_file_pmd(vma, base, f);
        let fo = &mut self.folios[f];
        if young && !fo.test(flags::REFERENCED) {
            fo.set(flags::REFERENCED);
        }
        if dirty && !fo.test(flags::DIRTY) {
            self.folio_mark_dirty_mapped(f);
        }
    }

    /// `zap_huge_pmd()` (mm/huge_memory.c) of the PMD of page-cache folio
    /// `f` at page `base` of file VMA `vma`, which a zap (`MADV_DONTNEED`,
    /// `munmap`, exit: `zap_pmd_range`) covers whole: the entry is cleared
    /// (`pmdp_huge_get_and_clear_full`), one `folio_remove_rmap_pmd`, RSS
    /// by HPAGE_PMD_NR at once; its flush is the zap's, at PMD stride
    /// (`tlb_remove_pmd_tlb_entry`, [`Sim::tlb_zap_range`]); the folio stays
    /// cached. Its dirty bit is not carried (a writable PMD maps a folio
    /// dirtied when it was mapped writable or made so, `do_set_pmd` /
    /// [`Sim::wp_huge_pmd_file`]). A young PMD marks the folio accessed
    /// once (`folio_mark_accessed`, when the VMA has recency): v6.16's
    /// "mm: huge_memory: add folio_mark_accessed() when zapping file THP"
    /// (Baolin Wang, April 2025), which this module's v6.18 has; v6.12
    /// does not mark it. Before, mmsim zapped the 512 PTEs one by one:
    /// 512 `folio_mark_accessed` calls (a young PMD activated its folio,
    /// under MGLRU raised its tier), the count decremented 512 times.
    pub(crate) fn zap_huge_pmd_file(&mut self, vma: VmaId, base: u32, f: FolioId) {
        let (young, _) = self.clear_file_pmd(vma, base, f);
        if young && self.vmas[vma as usize].has_recency() {
            self.folio_mark_accessed(f);
        }
    }

    /// The page-cache PMDs of file VMA `vma` that the zap of pages `[lo,
    /// hi)` reaches (`zap_pmd_range`, mm/memory.c v6.12): one covered whole
    /// is zapped ([`Sim::zap_huge_pmd_file`]), one covered in part split
    /// first ([`Sim::split_file_pmd`]: all its 512 pages are unmapped, not
    /// only the range's). Before `zap_pte_range` walks the PTEs, which
    /// then finds these none.
    pub(crate) fn zap_file_pmds(&mut self, vma: VmaId, lo: u32, hi: u32) {
        let first = lo / HPAGE_PMD_NR;
        let last = (hi - 1) / HPAGE_PMD_NR;
        for pmd in first..=last {
            if !self.vmas[vma as usize].file_pmd(pmd) {
                continue;
            }
            let (s, e) = (pmd * HPAGE_PMD_NR, (pmd + 1) * HPAGE_PMD_NR);
            let f = self.vmas[vma as usize].pte(s) & PTE_FOLIO_MASK;
            if lo <= s && hi >= e {
                self.zap_huge_pmd_file(vma, s, f);
            } else {
                self.split_file_pmd(vma, s, f, false);
            }
        }
    }

    /// The first store through a write-protected PMD of page-cache folio
    /// `f` in file mapping `vma`, v6.12 mm/memory.c and mm/huge_memory.c:
    /// `__handle_mm_fault()` → `wp_huge_pmd()`. The VMA is not anonymous
    /// (a private file mapping has `vm_ops`), so `do_huge_pmd_wp_page` is
    /// not called; a shared VMA's `huge_fault` is tried first, but only DAX
    /// has one that does not fall back (ext4's is DAX-only, xfs's
    /// `xfs_filemap_huge_fault` returns VM_FAULT_FALLBACK for a non-DAX
    /// inode, shmem has none); then "COW or write-notify handled on pte
    /// level": `__split_huge_pmd()` ([`Sim::split_file_pmd`]), and the
    /// fault falls back to `handle_pte_fault()` on a PMD that is none now:
    /// `do_pte_missing()` → `do_fault()`.
    ///
    /// * Shared: `do_shared_fault()` → `filemap_fault()` (cached) and
    ///   `do_page_mkwrite()`, then `finish_fault()`, which maps a PMD-size
    ///   folio by a PMD again (`do_set_pmd`, writable and dirty,
    ///   `thp_file_mapped` counted again) — so the store dirties the whole
    ///   PMD, not one PTE; no PTE-level `do_wp_page` runs.
    /// * Private (`MAP_PRIVATE`, read-faulted by a PMD): `do_cow_fault()`
    ///   ([`Sim::do_cow_fault`]): an order-0 anonymous copy of the stored
    ///   page, mapped by one PTE (a PTE table is allocated, `__pte_alloc`);
    ///   the folio's other 511 pages are unmapped until faulted again, by
    ///   PTEs (the PMD has a table now). Before, mmsim copied the page in
    ///   place and left the other 511 PTEs mapped, without a split.
    ///
    /// One fault (`pgfault`, counted by the caller).
    pub(crate) fn wp_huge_pmd_file(&mut self, vma: VmaId, index: u32, f: FolioId, base: u32) {
        self.split_file_pmd(vma, base, f, false);
        let VmaKind::File {
            file,
            pgoff,
            private,
        } = self.vmas[vma as usize].kind
        else {
            return;
        };
        self.lru_gen.in_fault = self.vmas[vma as usize].ra_advice == Advice::Normal;
        if private {
            self.do_cow_fault(vma, index, file, pgoff + index);
        } else {
            self.do_fault(vma, index, file, pgoff + index, true, false);
        }
        self.lru_gen.in_fault = false;
    }

    /// Invariant of [`Vma::file_pmds`] (`Sim::check_invariants`): every
    /// PMD bit of a live file VMA has its 512 PTEs present and mapping one
    /// order-9 page-cache folio of the VMA's file at the matching index.
    ///
    /// [`Vma::file_pmds`]: crate::mem::pagetable::Vma::file_pmds
    pub(crate) fn check_file_pmds(&self) -> Result<(), String> {
        for (vid, v) in self.vmas.iter().enumerate() {
            let VmaKind::File { file, pgoff, .. } = v.kind else {
                continue;
            };
            for pmd in 0..(v.file_pmds.len() * 64) as u32 {
                if !v.file_pmd(pmd) {
                    continue;
                }
                let base = pmd * HPAGE_PMD_NR;
                let f = v.pte(base) & PTE_FOLIO_MASK;
                let fo = &self.folios[f];
                let ok = base + HPAGE_PMD_NR <= v.len
                    && fo.is_file()
                    && fo.order() == MAX_PAGECACHE_ORDER
                    && fo.space == file
                    && fo.index == pgoff + base
                    && (base..base + HPAGE_PMD_NR).all(|i| {
                        let p = v.pte(i);
                        p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f
                    });
                if !ok {
                    return Err(format!(
                        "VMA {vid}: PMD {pmd} does not map one PMD-size folio"
                    ));
                }
            }
        }
        Ok(())
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
        if self.folios[f].order() != MAX_PAGECACHE_ORDER || self.folios[f].test(flags::READAHEAD) {
            return false;
        }
        let ra = self.vma_ra(vma);
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
        let advice = self.vmas[vma as usize].ra_advice;
        let ra = self.vma_ra_mut(vma);
        if v6_19 && advice != Advice::Sequential {
            if ra.mmap_miss < MMAP_LOTSAMISS * 10 {
                ra.mmap_miss += 1;
            }
            if ra.mmap_miss > MMAP_LOTSAMISS {
                return 0;
            }
        }
        ra.start = index & !(HPAGE_PMD_NR - 1);
        ra.size = if advice == Advice::Random {
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
