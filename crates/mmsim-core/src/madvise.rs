//! Discarding a range of a mapping: `madvise(MADV_DONTNEED)` and `munmap`
//! of part of a VMA (mm/madvise.c `madvise_dontneed_single_vma` →
//! `zap_page_range_single`, mm/memory.c `zap_pte_range` /
//! `zap_present_folio_ptes`, v6.12), the `Event::Discard` of a workload.
//!
//! Each PTE of the range is cleared (the VMA itself stays, as after
//! MADV_DONTNEED; page-table pages are not freed):
//!
//! * **Anonymous, present**: the folio loses the mapping
//!   (`folio_remove_rmap_ptes`). A folio no PTE maps any more is freed
//!   (taken off its LRU list, its swap slots released, uncharged; the TLB
//!   batch's `free_pages_and_swap_cache`); one under writeback or isolated
//!   by reclaim is left to reclaim. A large folio still mapped in part is
//!   *partially mapped*: `deferred_split_folio` queues it on its group's
//!   deferred split queue (`crate::huge_memory`), whose shrinker splits it
//!   under reclaim and frees the unmapped pages. A PMD-size folio mapped by
//!   its PMD has the PMD split first when the range covers part of it
//!   (`__split_huge_pmd`, `thp_split_pmd`); the whole PMD zapped frees it
//!   (`zap_huge_pmd`).
//! * **Anonymous, swap entry**: `free_swap_and_cache_nr` drops the PTE's
//!   reference to the slot; a slot nothing else holds is released (with
//!   its swap charge). One its swap-cache folio still holds has the folio
//!   tried by `__try_to_reclaim_swap(TTRS_UNMAPPED | TTRS_FULL)`
//!   (`Sim::try_to_reclaim_swap_zapped`, `crate::swapfile`): the folio
//!   leaves the swap cache with all its slots when no swap PTE holds any of
//!   them and it is unmapped (then freed) or swap is over half full.
//! * **The zero page** (`machine.zero_page`): the PTE is cleared; a huge
//!   zero PMD the range covers in part is split first (`thp_split_pmd`).
//! * **A file mapping**: an anonymous copy of a private mapping
//!   (`crate::cow`) is zapped as anonymous memory above; a page-cache folio stays cached; the PTE's dirty
//!   bit dirties it (`folio_mark_dirty`) and its young bit marks it accessed
//!   (`folio_mark_accessed`, when the VMA has recency). A folio whose count
//!   saturated (255) is counted again after the zap
//!   (`Sim::file_folio_remap_count`), not decremented. A page-cache PMD
//!   (`crate::filemap_pmd`) the range covers whole is one entry
//!   (`zap_huge_pmd`), one it covers in part is split first, which unmaps
//!   all its 512 pages (`__split_huge_pmd`, `thp_split_pmd`).
//!
//! A later access to a discarded anonymous page faults a new zero-filled
//! page. Cost: one system call (`fd_access_ns`), `pte_walk_ns` per page of
//! the range and `free_ns` per folio freed.

use crate::huge_memory::PMD_ORDER;
use crate::mem::folio::{flags, FolioId, LruList};
use crate::mem::pagetable::{VmaId, VmaKind, PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG};
use crate::sim::{Policy, Sim};
use crate::stats::item::*;

impl Sim {
    /// `madvise(addr, len, advice)` over a whole mapping: `MADV_RANDOM` sets
    /// `VM_RAND_READ`, `MADV_SEQUENTIAL` `VM_SEQ_READ` (`madvise_behavior()`,
    /// the VMA's own flags: it does not double the window, nor touch the
    /// file's shared `f_ra`).
    pub fn madvise(
        &mut self,
        vma: VmaId,
        advice: crate::readahead::Advice,
    ) -> Result<(), crate::SimError> {
        let v = self
            .vmas
            .get_mut(vma as usize)
            .ok_or_else(|| crate::SimError::Setup(format!("no mapping {vma}")))?;
        v.ra_advice = advice;
        Ok(())
    }

    /// `madvise(MADV_DONTNEED)` of `pages` pages from page `index` of `vma`
    /// (see the module overview). A range past the VMA's end is cut at it;
    /// one starting past it, or an unknown VMA, counts out of range.
    pub(crate) fn madvise_dontneed(&mut self, vma: VmaId, index: u32, pages: u32) {
        let Some(v) = self.vmas.get(vma as usize) else {
            self.acc.out_of_range += 1;
            return;
        };
        if index >= v.len || pages == 0 {
            self.acc.out_of_range += 1;
            return;
        }
        let task = v.task;
        if self.tasks[task as usize].dead {
            return;
        }
        let end = index.saturating_add(pages).min(v.len);
        self.cur_memcg = self.task_memcg(task);
        // The VMA's task is `current` (the caller of `madvise()`, or the
        // exiting task): the dirty PTEs the zap moves to its folios count
        // in its `nr_dirtied` (`crate::page_writeback_throttle`).
        self.bdp_set_current(task);
        self.advance(self.cost.fd_access_ns + u64::from(end - index) * self.cost.pte_walk_ns);
        self.tlb_zap_range(vma, index, end);
        self.zap_pte_range(vma, index, end);
    }

    /// `zap_pte_range()` of pages `[index, end)` of `vma` (see the module
    /// overview), without the system call's cost or TLB flush.
    pub(crate) fn zap_pte_range(&mut self, vma: VmaId, index: u32, end: u32) {
        let kind = self.vmas[vma as usize].kind;
        if self.zero_folio != crate::mem::folio::NIL && kind == VmaKind::Anon {
            self.zap_huge_zero_pmds(vma, index, end);
        }
        if !self.vmas[vma as usize].file_pmds.is_empty() {
            // Page-cache PMDs: zapped whole or split (crate::filemap_pmd).
            self.zap_file_pmds(vma, index, end);
        }
        let top = end.min(self.vmas[vma as usize].ptes.len() as u32);
        let mut large: Vec<FolioId> = Vec::new();
        let mut zapped: Vec<u32> = Vec::new();
        let mut saturated: Vec<FolioId> = Vec::new();
        for i in index..top {
            let pte = self.vmas[vma as usize].ptes[i as usize];
            if pte == 0 {
                continue;
            }
            self.vmas[vma as usize].ptes[i as usize] = 0;
            if pte & PTE_PRESENT == 0 {
                // A swap entry (of anonymous memory: an anon VMA's page or a
                // private file mapping's copy).
                self.free_swap_and_cache(pte - 1);
                continue;
            }
            let f = pte & PTE_FOLIO_MASK;
            if f == self.zero_folio {
                continue;
            }
            // A page-cache folio (a private file mapping's PTEs may map
            // anonymous copies too, zapped as anonymous).
            if self.folios[f].is_file() {
                let fo = &mut self.folios[f];
                if fo.mapcount == u8::MAX {
                    // A saturated count stays "unknown" until counted
                    // again below (`Sim::file_folio_remap_count`). A
                    // folio's PTEs in one VMA are contiguous (page i of a
                    // file VMA maps file page pgoff + i; between them only
                    // none, swap or anonymous-copy PTEs), so the last
                    // entry is the only one to compare with: O(1) per PTE.
                    if saturated.last() != Some(&f) {
                        saturated.push(f);
                    }
                } else {
                    fo.mapcount = fo.mapcount.saturating_sub(1);
                }
                if pte & PTE_DIRTY != 0 {
                    self.folio_mark_dirty_mapped(f);
                }
                if pte & PTE_YOUNG != 0 && self.vmas[vma as usize].has_recency() {
                    self.folio_mark_accessed(f);
                }
                continue;
            }
            self.zap_anon_pte(f, &mut large);
            if self.folios[f].order() > 0 {
                // PTEs of each large folio this zap cleared: whether its
                // PMD was intact before it (`zap_large_anon`).
                let k = large.iter().position(|&g| g == f).expect("noted");
                zapped.resize(large.len(), 0);
                zapped[k] += 1;
            }
        }
        for (k, f) in large.into_iter().enumerate() {
            self.zap_large_anon(vma, f, index, end, zapped[k]);
        }
        // Bounded dedupe should a folio's PTEs ever not be contiguous
        // (a recount is idempotent; this only spares repeating it).
        saturated.sort_unstable();
        saturated.dedup();
        for f in saturated {
            self.file_folio_remap_count(f);
        }
    }

    /// After the range `[lo, hi)` of `vma` was zapped: large anonymous folio
    /// `f`, mapped by PTEs of that VMA, is freed if none maps it any more,
    /// else queued for a deferred split (its PMD split first at PMD size)
    /// if some page of it is now mapped by no PTE: v6.12
    /// `__folio_remove_rmap` (mm/rmap.c) queues it only when
    /// `partially_mapped = nr && atomic_read(mapped)`, `nr` the pages whose
    /// mapcount fell to -1, so a folio that a task forked from or by this
    /// one still maps whole is not queued (`crate::fork`).
    ///
    /// Departure: mmsim queues the folio whenever some page of it is left
    /// mapped by no PTE (`hole`), while the kernel queues it only when this
    /// removal itself dropped some page's mapcount to -1. They differ when
    /// the hole is older than this zap and the zap's pages stay mapped by
    /// another task of the fork family: e.g. a first zap while the folio
    /// was in the swap cache, where `deferred_split_folio` returned early
    /// without queueing; the kernel never queues it for that hole, mmsim
    /// does at this later zap.
    fn zap_large_anon(&mut self, vma: VmaId, f: FolioId, lo: u32, hi: u32, zapped: u32) {
        let fo = self.folios[f];
        let n = 1u32 << fo.order();
        let v = &self.vmas[vma as usize];
        let (mapped, hole) = if self.fork.is_some() && self.anon_forked(fo.space) {
            // Mapped in other VMAs of its anon_vma tree too (`crate::fork`).
            self.anon_family_mapped(f)
        } else {
            // This VMA alone maps it, one PTE a page: the zapped PTE left
            // its page unmapped.
            let m = (fo.index..fo.index + n)
                .filter(|&i| {
                    let p = v.pte(i);
                    p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f
                })
                .count() as u32;
            (m, m < n)
        };
        if mapped == 0 {
            self.folios[f].mapcount = 0;
            self.advance(self.cost.free_ns);
            self.free_unmapped_anon_folio(f);
            return;
        }
        // A PMD-mapped THP has its PMD split when the range covers part of
        // it. Whether this VMA's PMD was intact before the zap is read from
        // this VMA's own PTEs (mmsim keeps no PMD bit): every page of the
        // folio was mapped here by a PTE of `f`, those the zap cleared and
        // those outside `[lo, hi)` that still map it. Not the folio's
        // PARTIALLY_MAPPED flag: a partial zap in one VMA of a fork family
        // leaves it clear while another VMA maps the folio whole (see
        // above), and would then count a split at every later partial zap.
        if fo.order() == PMD_ORDER && (lo > fo.index || hi < fo.index + n) {
            let start = lo.clamp(fo.index, fo.index + n);
            let end = hi.clamp(fo.index, fo.index + n);
            let v = &self.vmas[vma as usize];
            let outside_intact = (fo.index..start).chain(end..fo.index + n).all(|i| {
                let p = v.pte(i);
                p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f
            });
            if outside_intact && zapped == end - start {
                self.count_vm_events(THP_SPLIT_PMD, 1);
            }
        }
        self.folios[f].mapcount = mapped.min(255) as u8;
        if hole {
            self.deferred_split_folio(f);
        }
    }

    /// Clears the huge zero PMD bits of `vma` that `[lo, hi)` overlaps; a
    /// PMD covered in part is split (`thp_split_pmd`), one covered whole is
    /// zapped (`zap_huge_pmd`).
    fn zap_huge_zero_pmds(&mut self, vma: VmaId, lo: u32, hi: u32) {
        if self.vmas[vma as usize].huge_zero_pmds.is_empty() {
            return;
        }
        let first = lo >> PMD_ORDER;
        let last = (hi - 1) >> PMD_ORDER;
        for pmd in first..=last {
            let (s, e) = (pmd << PMD_ORDER, (pmd + 1) << PMD_ORDER);
            if lo <= s && hi >= e {
                let v = &mut self.vmas[vma as usize];
                if let Some(w) = v.huge_zero_pmds.get_mut(pmd as usize / 64) {
                    *w &= !(1 << (pmd % 64));
                }
            } else {
                self.split_huge_zero_pmd(vma, s);
            }
        }
    }

    /// One anonymous PTE of folio `f` zapped (`zap_present_ptes`): an order-0
    /// folio loses the mapping and is freed with its last one; a large folio is
    /// noted once in `large`, for the caller to settle after the whole range
    /// (it may be left partly mapped). Shared by MADV_DONTNEED and khugepaged's
    /// collapse, which drops the old small folios the same way.
    pub(crate) fn zap_anon_pte(&mut self, f: FolioId, large: &mut Vec<FolioId>) {
        if self.folios[f].order() > 0 {
            if !large.contains(&f) {
                large.push(f);
            }
            return;
        }
        let fo = &mut self.folios[f];
        fo.mapcount = fo.mapcount.saturating_sub(1);
        if fo.mapcount == 0 {
            self.advance(self.cost.free_ns);
            self.free_unmapped_anon_folio(f);
        }
    }

    /// Frees anonymous folio `f`, which no PTE maps: off its LRU list (if on
    /// one), its swap slots released, uncharged and freed. A folio under
    /// writeback is left on its list to reclaim, which frees it as an
    /// unmapped folio, and its slots with it (`Sim::put_swap_folio`: no swap
    /// PTE holds them).
    pub(crate) fn free_unmapped_anon_folio(&mut self, f: FolioId) {
        let fo_lru = self.folios.lru(f);
        let fo_memcg = self.folios.memcg(f);
        let fo = self.folios[f];
        let shared =
            self.fork.is_some() && fo.test(flags::SWAPCACHE) && self.folio_swapped_forked(f);
        if shared {
            // folio_free_swap() fails while `folio_swapped`: the unmapped
            // folio stays in the swap cache, for reclaim (`crate::fork`).
            return;
        }
        if self.unmapped_large_stays_swapped(f) {
            return; // swap PTEs hold some of its slots (crate::fault_swapcache)
        }
        if fo.test(flags::WRITEBACK) {
            // No PTE holds its slots any more: reclaim's `put_swap_folio`
            // frees them (`crate::swapfile`).
            return;
        }
        if fo.test(flags::SWAPCACHE) {
            let (slot, n) = (fo.swap - 1, fo.nr_pages() as u32);
            for i in 0..n {
                self.swap_free_of(f, slot + i);
            }
        }
        if fo.test(flags::LRU) {
            if self.policy == Policy::Lru {
                self.lru_policy_del(f);
            } else if crate::reclaim::lru_gen::is_lru_gen_tag(fo_lru) {
                self.lru_gen_del_folio(f, true);
            } else {
                let m = fo_memcg as usize;
                let lru = LruList::from_index(fo_lru);
                self.memcgs[m].lruvec.lists[lru as usize].unlink(&mut self.folios, f);
            }
        }
        self.free_folio(f);
    }
}
