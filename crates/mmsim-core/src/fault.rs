//! Fault and access paths (mm/memory.c, mm/filemap.c, mm/swap_state.c, mm/page_alloc.c).
//!
//! * A CPU access to a present PTE only sets its young (and dirty) bit — the
//!   kernel learns of it later through the rmap walk. This is the hot path.
//! * A first touch of anonymous memory is `do_anonymous_page()`. By default
//!   it allocates whether it reads or writes. With `machine.zero_page` a
//!   read maps the shared zero page instead (v6.12: "Use the zero-page for
//!   reads", before `alloc_anon_folio`, so also where multi-size THP would
//!   allocate a large folio; with PMD-size THP allowed there and
//!   `thp.use_zero_page`, the huge zero page, `crate::huge_memory`): a
//!   present, clean PTE to a folio that is on no LRU list, in no group and
//!   counted in no RSS; the fault counts `pgfault` only. A later write
//!   faults again (`do_wp_page` → `wp_page_copy`): the zero page is never
//!   reused, a new order-0 folio is allocated and charged (`folio_prealloc`
//!   with `need_zero`: 6.12 allocates no large folio there; the huge zero
//!   PMD is split first, `thp_split_pmd`) and mapped young and dirty.
//! * A swap PTE is `do_swap_page()`: a minor fault if the folio is still in
//!   the swap cache, else a major fault that reads the slot (pswpin) and runs
//!   `workingset_refault()` on the slot's shadow. `should_try_to_free_swap()`
//!   then frees the slot on a write fault, when swap is more than half full,
//!   in a VM_LOCKED VMA, or always on a SWP_SYNCHRONOUS_IO device such as zram (verified in the
//!   2025 mm/memory.c: "swap cache pinning the slot ... is a more critical
//!   issue"; older kernels skipped the swap cache for such devices, with the
//!   same effect). A large folio found in the swap cache: `crate::fault_swapcache`.
//! * The first write to a clean present PTE is a write-protect fault
//!   (`do_wp_page()`): an exclusive anonymous page is reused and keeps its
//!   swap-cache slot (only `wp_can_reuse_anon_folio`, for a page fork
//!   shared, frees it: `crate::fork`), a file folio is dirtied.
//!   Except where a v6.11+ read swap-in mapped an exclusive folio writable
//!   (`thp.kernel` 6.12/6.13, `crate::fault_swapcache`): that store is a
//!   hit that dirties the PTE, and the folio keeps its swap slot.
//! * A file-descriptor read is `filemap_read()` (`crate::filemap_read`).
//! * A buffered write is `generic_perform_write()`: the folio is found or
//!   created (no refault detection for `__GFP_WRITE` allocations,
//!   `filemap_add_folio`) and dirtied; `FGP_WRITEBEGIN` has no FGP_ACCESSED in
//!   6.x, so writes do not mark the folio accessed. With
//!   `machine.fs.large_folios` the folios are large (`crate::filemap_write`).
//!
//! Page allocation follows `get_page_from_freelist()` / `__alloc_pages_slowpath()`
//! for order 0: take a page while free > low; else wake kswapd and take one
//! while free > min; else direct reclaim (`__alloc_pages_direct_reclaim`) up
//! to MAX_RECLAIM_RETRIES times (`__GFP_NORETRY`: once), then the OOM killer. The memcg charge
//! (`try_charge_memcg()`) reclaims from the group while it is at
//! `memory.max`, up to MAX_RECLAIM_RETRIES times, then OOM-kills in the group.

use crate::event::FileId;
use crate::gfp::{Gfp, GFP_ANON_FOLIO, GFP_USER_FOLIO};
use crate::mem::filemap::{slot_folio, SLOT_FOLIO};
use crate::mem::folio::{flags, FolioId, LruList};
use crate::mem::pagetable::{
    pte_present, VmaId, VmaKind, PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG,
};
use crate::readahead::RaOwner;
use crate::sim::{Policy, Sim};
use crate::stats::item::*;

/// What [`Sim::read_swap_cache_async`] did with one swap PTE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SwapRead {
    /// Nothing to read.
    Nothing,
    /// Read from the swap device into a new swap-cache folio.
    Io,
    /// A new swap-cache folio filled without IO (a zero-filled slot under
    /// `machine.swap_zero_pages`).
    ZeroFilled,
}

/// `MAX_RECLAIM_RETRIES` (mm/internal.h).
pub(crate) const MAX_RECLAIM_RETRIES: u32 = 16;

/// `__alloc_pages_slowpath()`'s `no_progress_loops` (v6.12
/// `should_reclaim_retry()`, order 0; read in Debian's 6.12.107): a direct reclaim that made progress
/// resets the count, so the allocation retries as long as reclaim frees
/// pages (the free pages rise by what it frees, so the loop ends at the
/// min watermark or when reclaim stops freeing); a fruitless one counts,
/// and returns false (the caller then throttles on writeback or gives up).
/// The caller first applies `should_reclaim_retry()`'s watermark test
/// ([`crate::sim::Sim::reclaim_could_pass_min`]): no zone's free plus reclaimable pages
/// above its min mark ends the retries whatever the progress.
/// Departures kept: no retry without progress unless writeback is pending
/// (the kernel retries up to `MAX_RECLAIM_RETRIES` fruitless reclaims while
/// the watermark test passes). As the kernel's `++no_progress_loops >
/// MAX_RECLAIM_RETRIES`, the loop allows 17 fruitless (throttled) reclaims.
pub(crate) fn reclaim_retry(reclaimed: u64, no_progress_loops: &mut u32) -> bool {
    if reclaimed > 0 {
        *no_progress_loops = 0;
        return true;
    }
    *no_progress_loops += 1;
    false
}

/// `PAGEVEC_SIZE`: folios a `struct folio_batch` holds (31 since v6.5 \[R\];
/// 15 before), which bounds `filemap_get_read_batch`.
pub(crate) const FOLIO_BATCH: u32 = 31;
impl Sim {
    /// A load or store to page `index` of VMA `vma`: the MMU's accessed-bit
    /// update on a hit, else `handle_mm_fault()` → `handle_pte_fault()`
    /// (mm/memory.c, v6.x) dispatching to the fault handlers below.
    #[inline(always)]
    pub(crate) fn access(&mut self, vma: VmaId, index: u32, write: bool) {
        let Some(v) = self.vmas.get_mut(vma as usize) else {
            self.acc.out_of_range += 1;
            return;
        };
        if index >= v.len {
            self.acc.out_of_range += 1;
            return;
        }
        let pte = v.pte_mut(index);
        let old = *pte;
        if old & PTE_PRESENT != 0 && (!write || old & PTE_DIRTY != 0) {
            // Hot path: the hardware sets the accessed bit.
            *pte = old | PTE_YOUNG;
            self.acc.accesses += 1;
            self.acc.hits += 1;
            self.advance(self.cost.access_ns);
            if self.tlb.is_some() {
                self.tlb_access(vma, index, old);
            }
            if self.policy == Policy::Lru {
                self.lru_touch(old & PTE_FOLIO_MASK);
            }
            return;
        }
        // A large folio's zero-filled page under the 6.12 content bits:
        // the kernel's PTE is writable, so the store is a hit.
        if write
            && old & PTE_PRESENT != 0
            && self.thp.content.on
            && self.store_to_zero_subpage(vma, index, old)
        {
            return;
        }
        // So is a store to a page a v6.11+ read swap-in mapped writable.
        if write
            && old & PTE_PRESENT != 0
            && self.thp.swapin_mkwrite
            && self.store_to_writable_clean(vma, index, old)
        {
            return;
        }
        self.handle_mm_fault(vma, index, write, old);
        if self.tlb.is_some() {
            self.tlb_after_fault(vma, index);
        }
    }

    /// The rest of [`Sim::access`] after the hit test: `handle_mm_fault()`.
    /// Out of line, so that the hit inlines into the event loop.
    #[inline(never)]
    pub(crate) fn handle_mm_fault(&mut self, vma: VmaId, index: u32, write: bool, old: u32) {
        let task = self.vmas[vma as usize].task;
        if self.tasks[task as usize].dead {
            self.acc.dropped_killed += 1;
            return;
        }
        self.cur_memcg = self.task_memcg(task);
        self.bdp_set_current(task);
        self.acc.accesses += 1;
        if old & PTE_PRESENT != 0 {
            self.acc.hits += 1;
            self.do_wp_page(vma, index, old);
            if self.thp.content.on {
                self.page_content_store_fault(vma, index);
            }
            return;
        }
        self.acc.misses += 1;
        self.count_events(self.cur_memcg, PGFAULT, 1);
        // current->in_lru_fault (handle_mm_fault, VMAs without VM_SEQ_READ/VM_RAND_READ).
        self.lru_gen.in_fault =
            self.vmas[vma as usize].ra_advice == crate::readahead::Advice::Normal;
        match self.vmas[vma as usize].kind {
            VmaKind::Anon if old == 0 => self.do_anonymous_page(vma, index, write),
            VmaKind::Anon => self.do_swap_page(vma, index, old - 1, write),
            // A private file mapping's anonymous copy that was swapped out.
            VmaKind::File { .. } if old != 0 => self.do_swap_page(vma, index, old - 1, write),
            VmaKind::File {
                file,
                pgoff,
                private: true,
            } if write => self.do_cow_fault(vma, index, file, pgoff + index),
            VmaKind::File { file, pgoff, .. } => {
                self.do_fault(vma, index, file, pgoff + index, write, false)
            }
        }
        if self.tracks_zero_pages() && self.vmas[vma as usize].kind == VmaKind::Anon {
            self.anon_fault_content(vma, index, old == 0, write);
        }
        if write && self.thp.content.on {
            self.page_content_store_fault(vma, index);
        }
        self.lru_gen.in_fault = false;
    }

    /// First store through a clean present PTE (`do_wp_page`, mm/memory.c
    /// v6.12). For a page-cache folio in a shared mapping (mapped read-only
    /// by a read fault, or cleaned by `folio_mkclean()` at writeback) it is
    /// `wp_page_shared()` → `fault_dirty_shared_page()` (one mapped by a
    /// PMD, shared or private, takes `wp_huge_pmd()` instead,
    /// [`Sim::wp_huge_pmd_file`]): the PTE made
    /// writable and dirty, the folio dirtied, and if that dirtied it, the
    /// writer balances (`balance_dirty_pages_ratelimited`). Counted as a
    /// fault (`pgfault`; a minor one, no `pgmajfault`); the shared
    /// page-cache case costs `minor_fault_ns` in all, as a cached
    /// `filemap_fault` does (v6.12 runs `do_page_mkwrite()` —
    /// `ext4_page_mkwrite`, `file_update_time` — then
    /// `finish_mkwrite_fault()`), the anonymous reuse `access_ns`; the
    /// PMD case `access_ns` and then the fallback fault's `minor_fault_ns`
    /// (`filemap_fault` of a cached folio). Departure: with
    /// `page_mkwrite` (ext4, xfs) v6.12 also calls the balance when the
    /// folio was dirty already; its ratelimit counts only new dirtyings
    /// (`current->nr_dirtied`), so that call acts only on a ratelimit an
    /// earlier dirtying reached.
    ///
    /// An anonymous page that is PageAnonExclusive (every page of a task
    /// that never forked, and a shared one once reused) is reused without
    /// further checks (v6.12 `do_wp_page`: `PageAnonExclusive(vmf->page) ||
    /// wp_can_reuse_anon_folio()` → `wp_page_reuse`, since v5.19): the PTE
    /// becomes writable and dirty and the folio stays in the swap cache
    /// with its slot, to be written to it again at reclaim (the PTE's dirty
    /// bit moves to the folio at `try_to_unmap`), as after v6.11's
    /// writable read swap-in ([`Sim::store_to_writable_clean`]). Only
    /// `wp_can_reuse_anon_folio`, for a page fork shared, tries
    /// `folio_free_swap` (`crate::fork`). Before this was checked mmsim
    /// freed the slot here at every store (under `thp.kernel` 6.8 and the
    /// RFC's v6.3, whose read swap-ins map read-only).
    fn do_wp_page(&mut self, vma: VmaId, index: u32, old: u32) {
        self.count_events(self.cur_memcg, PGFAULT, 1);
        self.advance(self.cost.access_ns);
        let f = old & PTE_FOLIO_MASK;
        if f == self.zero_folio {
            self.wp_page_copy_zero(vma, index);
            return;
        }
        if self.cfg.fs.pmd_mappings {
            if let Some(base) = self.file_pmd_mapped(vma, f) {
                // A PMD-mapped page-cache folio: `wp_huge_pmd()`.
                self.wp_huge_pmd_file(vma, index, f, base);
                return;
            }
        }
        if !self.folios[f].test(flags::SWAPBACKED) && self.vma_is_private_file(vma) {
            // A page-cache folio mapped read-only in a MAP_PRIVATE mapping.
            self.wp_page_copy_file(vma, index, f);
            return;
        }
        if self.fork.is_some() && self.do_wp_page_forked(vma, index, f) {
            return;
        }
        *self.vmas[vma as usize].pte_mut(index) = old | PTE_YOUNG | PTE_DIRTY;
        if self.folios[f].test(flags::SWAPBACKED) {
            // `PageAnonExclusive`: reused at once (`wp_page_reuse`), the
            // folio keeps its swap-cache slot (see the doc above).
            self.anon_wp_fault_content(f);
        } else {
            let mkwrite = self.cost.minor_fault_ns.saturating_sub(self.cost.access_ns);
            self.advance(mkwrite);
            if self.fault_dirty_shared_page(f) {
                self.balance_dirty_pages_ratelimited();
            }
        }
        if self.policy == Policy::Lru {
            self.lru_touch(f);
        }
    }

    /// `wp_page_copy()` of a PTE mapping the zero page (mm/memory.c, v6.12):
    /// a huge zero PMD is split first (`do_huge_pmd_wp_page` falls back);
    /// then a new zeroed order-0 folio (`folio_prealloc(…, need_zero)`) is
    /// charged, mapped young and dirty in place of the zero page, and added
    /// to the LRU. Nothing is copied and the zero page is not unmapped from
    /// anywhere else. Under `thp.kernel = "rfc-v2"` a large folio is tried
    /// first (`crate::huge_memory_rfc`, RFC patch 15).
    fn wp_page_copy_zero(&mut self, vma: VmaId, index: u32) {
        if self.thp.huge_zero {
            self.split_huge_zero_pmd(vma, index);
        }
        // ptep_clear_flush() of the zero page's PTE (crate::tlb).
        self.flush_tlb_range(vma, index, index + 1, false);
        // The RFC v2 variant: a large folio over the zero page's range.
        if self.thp.rfc_order != 0 && self.do_anonymous_rfc(vma, index, true) {
            return;
        }
        let Some(f) = self.map_new_anon_folio(vma, index) else {
            return;
        };
        // The store that copied the zero page makes the new folio non-zero.
        self.anon_wp_fault_content(f);
        self.folio_add_lru(f);
    }

    /// The order-0 allocation of `do_anonymous_page` and `wp_page_copy`
    /// (mm/memory.c, v6.12): a zeroed anonymous folio (active first under
    /// `new_anon_active`), charged, mapped young and dirty at `index` with
    /// mapcount 1; the caller adds it to the LRU. `None` when the allocation
    /// failed or its own OOM kill took the faulting task (the folio freed).
    #[inline]
    fn map_new_anon_folio(&mut self, vma: VmaId, index: u32) -> Option<FolioId> {
        self.advance(self.cost.minor_fault_ns);
        let mut fl = flags::SWAPBACKED | flags::DIRTY;
        if let Policy::Classic(r) = self.policy {
            if r.new_anon_active {
                fl |= flags::ACTIVE;
            }
        }
        let f = self.alloc_folio(vma, index, fl, GFP_ANON_FOLIO)?;
        if self.tasks[self.vmas[vma as usize].task as usize].dead {
            self.free_folio(f);
            return None;
        }
        self.folios[f].mapcount = 1;
        *self.vmas[vma as usize].pte_mut(index) = pte_present(f, true, true);
        Some(f)
    }

    /// `do_anonymous_page()`: allocate, map young and dirty, add to the LRU;
    /// or, for a read with `machine.zero_page`, map the zero page.
    fn do_anonymous_page(&mut self, vma: VmaId, index: u32, write: bool) {
        if self.kmem.is_some() {
            // `__pte_alloc()`: the PTE was none (crate::kmem).
            self.kmem_pte_alloc(vma, index);
        }
        if !write && self.cfg.zero_page {
            // create_huge_pmd() comes first in __handle_mm_fault().
            if self.thp.huge_zero && self.do_huge_zero_page(vma, index) {
                return;
            }
            // "Use the zero-page for reads": no anon_vma, no charge, no LRU.
            self.advance(self.cost.minor_fault_ns);
            *self.vmas[vma as usize].pte_mut(index) = pte_present(self.zero_folio, true, false);
            return;
        }
        // alloc_anon_folio(): a large folio when multi-size THP allows one.
        if self.thp.active() && self.do_anonymous_large(vma, index) {
            return;
        }
        if let Some(f) = self.map_new_anon_folio(vma, index) {
            self.folio_add_lru(f);
        }
    }

    /// `do_swap_page()`: bring an anonymous page back from its swap slot.
    ///
    /// A swap-cache hit is a minor fault (`swap_cache_get_folio` →
    /// `swap_update_readahead`, which counts a readahead hit). A miss is a
    /// major fault: `swap_vma_readahead()` reads the window around the fault
    /// in one batch with the faulting page, and the fault waits for that
    /// batch. On a SWP_SYNCHRONOUS_IO device (zram) an entry whose
    /// `__swap_count` is 1 skips the swap cache and readahead (v6.12: the
    /// `data_race(si->flags & SWP_SYNCHRONOUS_IO) && __swap_count(entry) ==
    /// 1` branch; the VMA's readahead state, `swap_readahead_info`, is left
    /// as it was, `swap_ra_info` not being called), while one that fork
    /// shared (count 2 or more) goes through `swapin_readahead` like any
    /// device's: it reads ahead its window (`swap_ra`, a `pswpin` per page
    /// read) and updates that state.
    pub(crate) fn do_swap_page(&mut self, vma: VmaId, index: u32, slot: u32, write: bool) {
        let swap = self.swap.as_mut().expect("swap PTE without a swap device");
        let sv = swap.slot(slot);
        if let Some(f) = slot_folio(sv) {
            self.advance(self.cost.minor_fault_ns);
            self.swap_update_readahead(vma, index, f);
            if self.folios[f].order() > 0 {
                return self.do_swap_page_swapcache_large(vma, index, slot, f, write);
            }
            self.map_anon(vma, index, f, write);
            return;
        }
        self.count_events(self.cur_memcg, PGMAJFAULT, 1);
        self.advance(self.cost.major_fault_ns);
        if self.thp.swapin_large && self.do_swap_page_large(vma, index, slot, write) {
            return;
        }
        let Some(f) = self.swapin_folio(vma, index, slot, sv, 0) else {
            return;
        };
        // v6.12 `do_swap_page`: a SWP_SYNCHRONOUS_IO device (zram) skips the
        // swap cache, and with it `swapin_readahead`, only for an entry
        // with `__swap_count(entry) == 1`; one fork shared (a count above
        // one) is read through `swapin_readahead` → `swap_vma_readahead`
        // with its window, as on any other device.
        let ra = if self.cfg.swap.device == crate::config::DeviceKind::Zram
            && !self.swap_count_above_one(slot)
        {
            // Nothing allocated since `swapin_folio` returned `f` alive in
            // its slot (its refault test and LRU add reclaim nothing), so
            // the two tests below, which the readahead's allocations need,
            // would pass: a zram swap-in of an unshared entry skips them.
            debug_assert!(!self.tasks[self.vmas[vma as usize].task as usize].dead);
            debug_assert_eq!(
                self.swap.as_ref().unwrap().slots[slot as usize],
                SLOT_FOLIO | f
            );
            0
        } else {
            let task = self.vmas[vma as usize].task as usize;
            let ws = self.folios[f].test(flags::WORKINGSET);
            let ra = self.swap_vma_readahead(vma, index);
            if self.tasks[task].dead {
                return;
            }
            if self.swap.as_ref().unwrap().slot(slot) != SLOT_FOLIO | f {
                return self.swapin_folio_lost(vma, index, slot, write, ra, ws);
            }
            ra
        };
        self.swap_read_folio(f, ra);
        self.map_anon(vma, index, f, write);
    }

    /// `read_swap_cache_async()` for page `index` of `vma`, as swap readahead
    /// and `MADV_WILLNEED` issue it: [`SwapRead::Nothing`] when there is
    /// nothing to read (the PTE is none or present, or its slot's folio is
    /// already in the swap cache); [`SwapRead::Io`] when the page was read
    /// into a new swap-cache folio on the LRU, not mapped, counting `pswpin`
    /// and `pgpgin`; [`SwapRead::ZeroFilled`] when that folio was filled
    /// without IO ([`Sim::swap_read_zero`]); `None` when no folio could be had.
    pub(crate) fn read_swap_cache_async(
        &mut self,
        vma: VmaId,
        index: u32,
        extra: u16,
    ) -> Option<SwapRead> {
        let pte = self.vmas[vma as usize].pte(index);
        if pte == 0 || pte & PTE_PRESENT != 0 {
            return Some(SwapRead::Nothing);
        }
        let slot = pte - 1;
        let Some(swap) = self.swap.as_ref() else {
            return Some(SwapRead::Nothing);
        };
        let sv = swap.slot(slot);
        if slot_folio(sv).is_some() {
            return Some(SwapRead::Nothing);
        }
        let f = self.swapin_folio(vma, index, slot, sv, extra)?;
        if self.swap_read_zero(f) {
            return Some(SwapRead::ZeroFilled);
        }
        self.count_vm_events(PSWPIN, 1);
        self.count_vm_events(PGPGIN, 4);
        Some(SwapRead::Io)
    }

    /// `__read_swap_cache_async()` for page `index` of `vma` whose swap
    /// `slot` holds `shadow`: allocates and charges a folio, puts it in the
    /// swap cache, runs `workingset_refault()` and adds it to the LRU. None
    /// if no folio could be had, or if the allocation's own OOM kill took
    /// the task (which freed its slots). Inlined: one per swap-in.
    #[inline(always)]
    pub(crate) fn swapin_folio(
        &mut self,
        vma: VmaId,
        index: u32,
        slot: u32,
        shadow: u32,
        extra: u16,
    ) -> Option<FolioId> {
        let task = self.vmas[vma as usize].task as usize;
        // mem_cgroup_swapin_charge_folio(): the folio is charged to the group
        // recorded for the slot, which differs from the faulting task's after
        // the task moved groups.
        let owner = self.swap.as_ref().unwrap().owner(slot);
        let faulting = std::mem::replace(&mut self.cur_memcg, owner);
        let fl = flags::SWAPBACKED | flags::SWAPCACHE | extra;
        let f = self.alloc_folio(vma, index, fl, GFP_USER_FOLIO);
        self.cur_memcg = faulting;
        let f = f?;
        self.nr_swapcache_folios += 1;
        if self.tasks[task].dead {
            self.free_folio(f);
            return None;
        }
        self.folios[f].swap = slot + 1;
        *self.swap.as_mut().unwrap().slot_mut(slot) = SLOT_FOLIO | f;
        self.swapin_content(f, slot);
        self.workingset_refault(f, shadow);
        self.folio_add_lru(f);
        Some(f)
    }

    /// Maps a swap-cache folio at `index`; frees its slot on a write fault,
    /// when swap is more than half full, or on zram (`should_try_to_free_swap`);
    /// a read fault maps it writable when v6.11+ would
    /// ([`Sim::swapin_pte_mkwrite`]).
    #[inline(always)]
    pub(crate) fn map_anon(&mut self, vma: VmaId, index: u32, f: FolioId, write: bool) {
        // Without fork every swap entry is exclusive (`pte_swp_exclusive`).
        let mut exclusive = true;
        if self.fork.is_some() {
            match self.map_anon_forked(vma, index, f, write) {
                Some(e) => exclusive = e,
                None => return,
            }
        }
        self.folios[f].mapcount = self.folios[f].mapcount.saturating_add(1);
        *self.vmas[vma as usize].pte_mut(index) = pte_present(f, true, write);
        self.should_free_swap(vma, f, write);
        if !write && self.thp.swapin_mkwrite {
            self.swapin_pte_mkwrite(f, exclusive);
        }
    }

    /// `should_try_to_free_swap()` (mm/memory.c, v6.12): after a swap fault
    /// mapped `f` in `vma`, its slot goes on a write fault (the caller
    /// passes `write` only when the fault holds the folio's only reference
    /// besides the swap cache's, `folio_ref_count == 1 + nr`), when swap is
    /// more than half full (`mem_cgroup_swap_full`), when the VMA is
    /// VM_LOCKED (`vma->vm_flags & VM_LOCKED || folio_test_mlocked`: mmsim
    /// has no PG_mlocked, a folio is mlocked only through its VMA), or on
    /// zram (the skip-swapcache path's outcome, `crate::fault`'s overview).
    /// A locked VMA's pages are never swapped out here (`try_to_unmap`
    /// stops at VM_LOCKED), so the lock matters for a page swapped out
    /// before its VMA was locked: read back, it leaves the swap cache at once.
    /// `mem_cgroup_swap_full` reads state only, so it is asked last (the kernel
    /// asks it first): on a write fault, zram or a locked VMA its group walk
    /// is skipped, with the same outcome. Inlined, with the order-0
    /// `folio_free_swap`.
    #[inline(always)]
    pub(crate) fn should_free_swap(&mut self, vma: VmaId, f: FolioId, write: bool) {
        let synchronous = self.cfg.swap.device == crate::config::DeviceKind::Zram;
        if write
            || synchronous
            || self.vmas[vma as usize].locked
            || self.mem_cgroup_swap_full(self.folios.memcg(f))
        {
            self.folio_free_swap_inline(f, true);
        }
    }

    /// `folio_free_swap()`: drops the swap slot; the folio becomes dirty (it must be written again).
    pub(crate) fn folio_free_swap(&mut self, f: FolioId) {
        self.folio_free_swap_inline(f, false);
    }

    /// [`Sim::folio_free_swap`] inlined where it runs once per swap-in;
    /// a large folio's slots are freed out of line. `just_mapped`: the
    /// caller's fault has just mapped `f` (`should_free_swap`).
    #[inline(always)]
    fn folio_free_swap_inline(&mut self, f: FolioId, just_mapped: bool) {
        let fo = &mut self.folios[f];
        if !fo.test(flags::SWAPCACHE) || fo.test(flags::WRITEBACK) {
            return;
        }
        let (slot, order) = (fo.swap - 1, fo.order());
        // folio_swapped(): a swap PTE still references a slot. Without fork
        // an order-0 folio has one PTE, which a fault that just mapped it
        // holds: that answer is known, and the PTE is not read again (it
        // would cost every zram swap-in about 40 instructions).
        let swapped = match self.fork {
            Some(_) => self.folio_swapped_forked(f),
            None if just_mapped && order == 0 => {
                debug_assert!(!self.folio_swapped_ptes(f));
                false
            }
            None => self.folio_swapped_ptes(f),
        };
        if swapped {
            return;
        }
        let fo = &mut self.folios[f];
        fo.swap = 0;
        fo.clear(flags::SWAPCACHE);
        fo.set(flags::DIRTY);
        self.nr_swapcache_folios -= 1;
        if order == 0 {
            self.swap_free_of(f, slot);
        } else {
            self.swap_free_of_range(f, slot, 1u32 << order);
        }
    }

    /// The slots `slot..slot + n` of large folio `f` freed by
    /// [`Sim::folio_free_swap`]: no swap PTE references them (`folio_swapped`).
    #[inline(never)]
    fn swap_free_of_range(&mut self, f: FolioId, slot: u32, n: u32) {
        for i in 0..n {
            self.swap_free_of(f, slot + i);
        }
    }

    /// `do_fault()` (mm/memory.c, v6.x): a fault on a file mapping. A read
    /// fault first maps what the page cache already holds around it
    /// (`do_read_fault` → `do_fault_around`);
    /// if that mapped the page, the fault is done (`VM_FAULT_NOPAGE`).
    /// Otherwise `filemap_fault()`: a cached page is a minor fault that may
    /// trigger async readahead; a missing one is a major fault with mmap
    /// readahead, then a read of the page if readahead did not bring it.
    /// Write faults on a shared mapping (`do_shared_fault`) skip fault-around.
    /// With `machine.fs.pmd_mappings` a PMD-size folio is mapped by a PMD
    /// (`crate::filemap_pmd`) from fault-around or `finish_fault`. With
    /// `machine.fault_retry` a read fault that read its page is retried
    /// (`tried`; see [`crate::MachineConfig::fault_retry`]).
    pub(crate) fn do_fault(
        &mut self,
        vma: VmaId,
        index: u32,
        file: FileId,
        findex: u32,
        write: bool,
        tried: bool,
    ) {
        let pmd = self.cfg.fs.pmd_mappings;
        let around = !write && self.cfg.fault_around_pages() > 1;
        if pmd && around && self.filemap_map_pmd(vma, index, file, findex) {
            self.advance(self.cost.minor_fault_ns);
            return;
        }
        if self.kmem.is_some() {
            // `__pte_alloc()`: a file PTE not present is none (crate::kmem).
            self.kmem_pte_alloc(vma, index);
        }
        if around {
            self.do_fault_around(vma, index, findex - index);
            if self.vmas[vma as usize].pte(index) & PTE_PRESENT != 0 {
                self.advance(self.cost.minor_fault_ns);
                return;
            }
        }
        let cached = slot_folio(self.files[file as usize].slot(findex)).is_some();
        let Some(f) = self.filemap_fault(vma, file, findex) else {
            return;
        };
        if self.tasks[self.vmas[vma as usize].task as usize].dead {
            return; // the read's allocation OOM-killed the faulting task
        }
        if self.cfg.fault_retry && !write && !tried && !cached {
            // VM_FAULT_RETRY: the read dropped the lock; the fault runs again.
            return self.do_fault(vma, index, file, findex, write, true);
        }
        // finish_fault(): a PMD-size folio is mapped by a PMD if it can be.
        if pmd && self.do_set_pmd(vma, index, f, write) {
            return;
        }
        self.map_file_folio(vma, index, f, write);
        if write && self.fault_dirty_shared_page(f) {
            self.balance_dirty_pages_ratelimited();
        }
    }

    /// `filemap_fault()` (mm/filemap.c, v6.x) for page `findex` of `file`
    /// through `vma`: a cached page is a minor fault that may start async
    /// readahead (and waits for a read still in flight); a missing one is a
    /// major fault (`pgmajfault`) with mmap readahead, then a read of the
    /// page alone if readahead did not bring it. None if no folio could be had.
    pub(crate) fn filemap_fault(
        &mut self,
        vma: VmaId,
        file: FileId,
        findex: u32,
    ) -> Option<FolioId> {
        if self.tp.is_some() {
            self.trace_filemap_fault(vma, file, findex);
        }
        let slot = self.files[file as usize].slot(findex);
        if let Some(f) = slot_folio(slot) {
            self.advance(self.cost.minor_fault_ns);
            let pending = self
                .inflight_until(RaOwner::Vma(vma), findex)
                .max(self.ra_read_pending(f));
            self.do_async_mmap_readahead(vma, file, f, findex);
            if self.clock < pending {
                self.io_wait(pending, false);
            }
            // Its large folios' allocation may have compacted, migrating `f`
            // to a new id (crate::compaction::migrate): the slot has it. Or
            // its direct reclaim evicted `f` (departure: the kernel's fault
            // holds a reference, so it cannot): the page is read as a miss
            // below, never mapped by a freed id.
            if let Some(f) = slot_folio(self.files[file as usize].slot(findex)) {
                return Some(f);
            }
        }
        self.count_events(self.cur_memcg, PGMAJFAULT, 1);
        let done = self.do_sync_mmap_readahead(vma, file, findex);
        if let Some(f) = slot_folio(self.files[file as usize].slot(findex)) {
            self.wait_readahead(done);
            return Some(f);
        }
        self.page_cache_miss(file, findex, slot, false)
    }

    /// Installs a PTE for file folio `f` at `index` of `vma`: young (x86
    /// maps fault-around pages young too: `arch_wants_old_prefaulted_pte()`
    /// is false there), dirty on a store.
    fn map_file_folio(&mut self, vma: VmaId, index: u32, f: FolioId, write: bool) {
        let exec = self.vmas[vma as usize].exec;
        let fo = &mut self.folios[f];
        fo.mapcount = fo.mapcount.saturating_add(1);
        if exec {
            fo.set(flags::EXEC_MAPPED);
        }
        *self.vmas[vma as usize].pte_mut(index) = pte_present(f, true, write);
    }

    /// `do_fault_around()` + `filemap_map_pages()` (v6.6): maps the cached,
    /// uptodate pages of the `fault_around_pages`-aligned window around
    /// `index` (clamped to the VMA; mappings are taken as PMD-aligned) whose
    /// PTEs are empty. Pages marked `PG_readahead` are left for a real fault,
    /// so that it can trigger the next readahead. Every mapped page that is
    /// not workingset counts as a hit against `mmap_miss`.
    fn do_fault_around(&mut self, vma: VmaId, index: u32, pgoff: u32) {
        let nr = self.cfg.fault_around_pages();
        let len = self.vmas[vma as usize].len;
        let from = index & !(nr - 1);
        let to = (from + nr).min(len);
        let VmaKind::File { file, .. } = self.vmas[vma as usize].kind else {
            return;
        };
        let ra = self.vma_ra(vma);
        let mut mapped_hits = 0u32;
        for i in from..to {
            if self.vmas[vma as usize].pte(i) != 0 {
                continue;
            }
            let page = pgoff + i;
            let Some(f) = slot_folio(self.files[file as usize].slot(page)) else {
                continue;
            };
            let in_flight = (ra.inflight_start..ra.inflight_end).contains(&page)
                && self.clock < ra.inflight_done;
            if self.folios[f].test(flags::READAHEAD) || in_flight || self.ra_locked(f) {
                continue;
            }
            if !self.folios[f].test(flags::WORKINGSET) {
                mapped_hits += 1;
            }
            self.map_file_folio(vma, i, f, false);
        }
        let ra = self.vma_ra_mut(vma);
        ra.mmap_miss = ra.mmap_miss.saturating_sub(mapped_hits);
    }

    /// The end of a `read()`/`write()` of `pages` pages (at least one) from
    /// page `index` of `file`, in the calling task's group: pages past the
    /// file's end, or all of them for an unknown file (None), count out of
    /// range.
    pub(crate) fn fd_range(&mut self, file: FileId, index: u32, pages: u16) -> Option<u32> {
        self.set_fd_memcg(file);
        self.fd_end(file, index, pages)
    }

    /// [`Sim::fd_range`] without choosing the group (`crate::open`'s reads
    /// choose the descriptor's).
    #[inline(always)]
    pub(crate) fn fd_end(&mut self, file: FileId, index: u32, pages: u16) -> Option<u32> {
        let want = pages.max(1) as u32;
        let Some(fo) = self.files.get(file as usize) else {
            self.acc.out_of_range += u64::from(want);
            return None;
        };
        let end = index.saturating_add(want).min(fo.pages.max(index));
        self.acc.out_of_range += u64::from(want - (end - index));
        Some(end)
    }

    /// A buffered write of `pages` whole pages (`generic_perform_write()`,
    /// mm/filemap.c, v6.x):
    /// each page is found or created without a read and dirtied. With
    /// `machine.fs.large_folios`, v6.18's large folios
    /// ([`Sim::generic_perform_write_large`], `crate::filemap_write`).
    pub(crate) fn generic_perform_write(&mut self, file: FileId, index: u32, pages: u16) {
        let Some(end) = self.fd_range(file, index, pages) else {
            return;
        };
        if self.cfg.fs.large_folios {
            return self.generic_perform_write_large(file, index, end);
        }
        // Under `policy.bdp_ratelimit` the check is at the top of every
        // page (a chunk of the order-0 page cache), before `write_begin`,
        // clean or not (v6.12 `generic_perform_write()`, after `retry:`);
        // without it, after each dirtying of a clean folio.
        let top = self.cfg.policy.bdp_ratelimit;
        for page in index..end {
            if top {
                self.balance_dirty_pages_ratelimited();
            }
            self.acc.accesses += 1;
            self.advance(self.cost.fd_access_ns);
            let slot = self.files[file as usize].slot(page);
            let f = match slot_folio(slot) {
                Some(f) => {
                    self.acc.hits += 1;
                    if self.policy == Policy::Lru {
                        self.lru_touch(f);
                    }
                    f
                }
                None => {
                    self.acc.misses += 1;
                    match self.page_cache_miss(file, page, slot, true) {
                        Some(f) => f,
                        None => return,
                    }
                }
            };
            let dirtied = self.folio_mark_dirty(f);
            self.create_empty_buffers(f);
            if dirtied && !top {
                self.balance_dirty_pages_ratelimited();
            }
        }
    }

    /// Charges of an fd access go to the group of the file's reader task.
    /// The file's task is also the running one (`current`, whose
    /// `nr_dirtied` its writes count: `crate::page_writeback_throttle`);
    /// task 0 for a file no task opened, as the tracepoints name it.
    pub(crate) fn set_fd_memcg(&mut self, file: FileId) {
        let task = self.files.get(file as usize).and_then(|f| f.task);
        self.cur_memcg = match task {
            Some(t) => self.task_memcg(t),
            None => crate::memcg::ROOT,
        };
        self.bdp_set_current(task.unwrap_or(0));
    }

    /// `filemap_add_folio()` (mm/filemap.c, v6.x): allocates a folio for
    /// `file`/`index`, puts it in the page cache and on the LRU, and unless
    /// it is for a full-page write runs refault detection on the old slot's
    /// shadow (which may set PG_active and PG_workingset first). The caller
    /// reads it; `gfp` is the allocation's mask (`crate::gfp`).
    pub(crate) fn filemap_add_folio(
        &mut self,
        file: FileId,
        index: u32,
        old_slot: u32,
        write: bool,
        gfp: Gfp,
    ) -> Option<FolioId> {
        let f = self.alloc_folio(file, index, 0, gfp)?;
        Some(self.filemap_insert_folio(f, file, index, old_slot, write))
    }

    /// [`Sim::filemap_add_folio`] once the folio `f` is allocated and
    /// charged (`__filemap_add_folio` and `folio_add_lru`).
    pub(crate) fn filemap_insert_folio(
        &mut self,
        f: FolioId,
        file: FileId,
        index: u32,
        old_slot: u32,
        write: bool,
    ) -> FolioId {
        let old_slot = if self.kmem.is_some() {
            // The slot as the store finds it: reclaim in the allocation may
            // have taken its shadow with its node (`shadow_lru_isolate`).
            let cur = self.files[file as usize].slot(index);
            self.kmem_slot_changed(file, index, cur, SLOT_FOLIO | f);
            cur
        } else {
            old_slot
        };
        *self.files[file as usize].slot_mut(index) = SLOT_FOLIO | f;
        if self.tp.is_some() {
            self.trace_filemap_folio(f, true);
        }
        if !write {
            self.workingset_refault(f, old_slot);
        }
        self.folio_add_lru(f);
        f
    }

    /// A page-cache miss handled alone: [`Sim::filemap_add_folio`] and,
    /// unless it is for a full-page write, a synchronous read of that page
    /// (`filemap_read_folio()`).
    pub(crate) fn page_cache_miss(
        &mut self,
        file: FileId,
        index: u32,
        old_slot: u32,
        write: bool,
    ) -> Option<FolioId> {
        self.advance(self.cost.major_fault_ns);
        let f = self.filemap_add_folio(file, index, old_slot, write, GFP_USER_FOLIO)?;
        if !write {
            let done = self.fs.read(self.clock, 1);
            self.count_vm_events(PGPGIN, 4);
            self.acc.file_pages_read += 1;
            self.io_wait(done, self.folios[f].test(flags::WORKINGSET));
        }
        Some(f)
    }

    /// The workload waits for an IO that completes at `done`; a memstall if
    /// the page is workingset (the thrashing wait).
    /// Under the fair schedule the task sleeps instead (`crate::sched`).
    pub(crate) fn io_wait(&mut self, done: u64, memstall: bool) {
        self.io_wait_ns += self.task_sleep_until(done, memstall);
    }

    /// `folio_mark_dirty()` for a file folio: accounted, queued for the
    /// flusher. True if it dirtied a clean file folio: a writer then calls
    /// [`Sim::balance_dirty_pages_ratelimited`] (v6.12: only writers
    /// balance, not reclaim's unmap or a zap that reach `folio_mark_dirty`).
    pub(crate) fn folio_mark_dirty(&mut self, f: FolioId) -> bool {
        let fo_memcg = self.folios.memcg(f);
        let fo = &mut self.folios[f];
        if fo.test(flags::DIRTY) {
            return false;
        }
        fo.set(flags::DIRTY);
        if !fo.is_file() {
            return false;
        }
        let (space, index, nr, m) = (fo.space, fo.index, fo.nr_pages(), fo_memcg);
        self.file_dirty_add(m, nr);
        if let Some(file) = self.files.get_mut(space as usize) {
            file.note_dirty(index, nr as u32);
        }
        self.dirty_fifo.push_back(self.clock, f);
        true
    }

    /// `folio_add_lru()` (mm/swap.c, v6.x): a new folio goes to the head of
    /// the list its flags select.
    ///
    /// The policy dispatch is inline; MGLRU's add and the classic add are
    /// each their own call, so that neither pays for the other's frame.
    #[inline(always)]
    pub(crate) fn folio_add_lru(&mut self, f: FolioId) {
        self.folios[f].set(flags::LRU);
        match self.policy {
            Policy::Lru => self.lru_policy_add(f),
            Policy::Mglru(_) => self.folio_add_lru_gen(f),
            Policy::Classic(r) => self.folio_add_lru_classic(f, r),
        }
    }

    /// [`Sim::folio_add_lru`] under MGLRU (`lru_gen_add_folio` inlined).
    #[inline(never)]
    fn folio_add_lru_gen(&mut self, f: FolioId) {
        self.lru_gen_folio_add_lru(f);
        let m = self.folios.memcg(f);
        self.lru_lock_batched(m, 1);
    }

    /// [`Sim::folio_add_lru`] of the classic LRU.
    #[inline(never)]
    fn folio_add_lru_classic(&mut self, f: FolioId, r: crate::sim::ClassicRules) {
        let fl = self.folios[f].flags;
        if r.balance == crate::sim::Balance::ScannedRotated {
            // v4.9 __pagevec_lru_add_fn → update_page_reclaim_stat(file, active)
            let file = (fl & flags::SWAPBACKED == 0) as usize;
            let lv = self.folio_lruvec(f);
            lv.recent_scanned[file] += 1;
            if fl & flags::ACTIVE != 0 {
                lv.recent_rotated[file] += 1;
            }
        }
        let lru = LruList::of_flags(fl);
        let m = self.folios.memcg(f) as usize;
        self.memcgs[m].lruvec.lists[lru as usize].push_head(&mut self.folios, f, lru as u8);
        self.lru_lock_batched(m as crate::memcg::MemcgId, 1);
    }

    /// `folio_mark_accessed()`: two-step promotion (inactive,unreferenced →
    /// inactive,referenced → active), mm/swap.c v6.x; the activation ages the
    /// workingset clock (`workingset_activation`), and PG_idle is cleared
    /// (a read through a descriptor is how an unmapped page-cache folio
    /// shows DAMON an access). Under `lru`: move to head.
    ///
    /// Inline up to the activation (out of line): every cached read calls it.
    #[inline]
    pub(crate) fn folio_mark_accessed(&mut self, f: FolioId) {
        // v6.12 ends with `if (folio_test_idle(folio)) folio_clear_idle(folio)`:
        // only DAMON and the idle tracker set PG_idle, so with both off the test
        // fails and the folio's flags are not written here.
        if self.folios[f].test(flags::IDLE) {
            self.folios[f].clear(flags::IDLE);
        }
        let rules = match self.policy {
            Policy::Lru => return self.lru_touch(f),
            Policy::Mglru(_) => return self.lru_gen_inc_refs(f),
            Policy::Classic(r) => r,
        };
        let fo = &mut self.folios[f];
        if !fo.test(flags::REFERENCED) {
            fo.set(flags::REFERENCED);
        } else if !fo.test(flags::UNEVICTABLE) && !fo.test(flags::ACTIVE) {
            self.folio_activate_referenced(f, rules);
        }
    }

    /// The second reference of [`Sim::folio_mark_accessed`] to an inactive,
    /// referenced, evictable folio: activated (if on a list),
    /// PG_referenced cleared, the workingset clock aged.
    #[inline(never)]
    fn folio_activate_referenced(&mut self, f: FolioId, rules: crate::sim::ClassicRules) {
        let fo_memcg = self.folios.memcg(f);
        let fo = &self.folios[f];
        if fo.test(flags::LRU) {
            let from = LruList::of_flags(fo.flags);
            let m = fo_memcg as usize;
            self.memcgs[m].lruvec.lists[from as usize].unlink(&mut self.folios, f);
            let fo = &mut self.folios[f];
            fo.set(flags::ACTIVE);
            let to = LruList::of_flags(fo.flags);
            self.memcgs[m].lruvec.lists[to as usize].push_head(&mut self.folios, f, to as u8);
            let nr = self.folios[f].nr_pages();
            self.count_events(m as crate::memcg::MemcgId, PGACTIVATE, nr);
            self.lru_lock_batched(m as crate::memcg::MemcgId, 1);
            if rules.balance == crate::sim::Balance::ScannedRotated {
                // v4.9 __activate_page → update_page_reclaim_stat(file, rotated = 1)
                let file = from.is_file() as usize;
                self.memcgs[m].lruvec.recent_scanned[file] += 1;
                self.memcgs[m].lruvec.recent_rotated[file] += 1;
            }
        }
        self.folios[f].clear(flags::REFERENCED);
        // `workingset_activation()`: `folio_nr_pages(folio)`.
        let (m, nr) = (self.folios.memcg(f), self.folios[f].nr_pages());
        self.workingset_age_nonresident(m, nr);
    }

    /// Allocates and charges one order-0 folio of `sp`/`i` with the site's `gfp` (its slow
    /// path's reclaim trace and wakeup zone); None if even the OOM killer could not make
    /// room (the access is then dropped and counted).
    pub(crate) fn alloc_folio(&mut self, sp: u32, i: u32, fl: u16, gfp: Gfp) -> Option<FolioId> {
        if !self.alloc_page(gfp) {
            return self.alloc_failed(0, gfp);
        }
        self.charge_new_folio(sp, i, fl, gfp)
    }

    /// [`Sim::alloc_folio`] once its page is taken: the charge (whose failure
    /// frees the page) and the folio. Readahead calls it apart to tell a
    /// failed charge from a failed allocation (`crate::readahead::read_pages`).
    #[inline]
    pub(crate) fn charge_new_folio(
        &mut self,
        sp: u32,
        i: u32,
        fl: u16,
        gfp: Gfp,
    ) -> Option<FolioId> {
        if !self.try_charge_memcg(1, gfp) {
            self.node.free += 1;
            return None;
        }
        self.count_vm_events(PGALLOC_NORMAL, 1);
        self.memcg1_check_events(self.cur_memcg, 1);
        // `rmqueue`'s boosted-watermark test is in the refill of the
        // per-CPU list, the one step of an order-0 allocation that can
        // steal (`Sim::alloc_order0_refill`).
        Some(self.alloc_order0_folio_gfp(sp, i, fl, gfp))
    }

    /// Takes a free page from the node, reclaiming as the allocator does:
    /// `get_page_from_freelist()` against WMARK_LOW, then
    /// `__alloc_pages_slowpath()` (wake kswapd, WMARK_MIN, direct reclaim with
    /// retries, `out_of_memory()`; `__GFP_NORETRY` fails after one reclaim:
    /// `crate::page_alloc::alloc_pages_slowpath`); the `lru` policy evicts one page instead.
    ///
    /// The fast path is inline for every policy: above WMARK_LOW (the
    /// zone's fast mark) for the kernel's, any free page for the `lru`
    /// policy, which evicts only at `node.free == 0` (in the slow path).
    #[inline]
    pub(crate) fn alloc_page(&mut self, gfp: Gfp) -> bool {
        let mark = if self.policy == Policy::Lru {
            0
        } else {
            self.node.fast_low
        };
        if self.node.free > mark {
            self.node.free -= 1; // the fast path, inline
            return true;
        }
        self.alloc_page_slow(gfp)
    }
    /// [`Sim::alloc_page`] past its fast path (out of line).
    #[inline(never)]
    fn alloc_page_slow(&mut self, gfp: Gfp) -> bool {
        if self.policy == Policy::Lru {
            if self.node.free == 0 && !self.lru_evict_one() {
                return self.oom_then_take();
            }
            self.node.free -= 1;
            return true;
        }
        if self.phys.dma.is_some() {
            return self.alloc_page_zoned(gfp);
        }
        if self.node.free > self.node.wmark_low {
            self.node.free -= 1;
            return true;
        }
        self.wakeup_kswapd_zone(0, crate::gfp::gfp_zone(gfp), gfp);
        if self.node.free > self.node.wmark_min {
            self.node.free -= 1;
            return true;
        }
        let mut no_progress_loops = 0;
        while no_progress_loops <= MAX_RECLAIM_RETRIES {
            let reclaimed = self.try_to_free_pages_order(0, gfp);
            if self.node.free > self.node.wmark_min {
                self.node.free -= 1;
                return true;
            }
            if crate::page_alloc::alloc_pages_slowpath::noretry_gives_up(gfp) {
                return false;
            }
            if !self.reclaim_could_pass_min() {
                break;
            }
            if !reclaim_retry(reclaimed, &mut no_progress_loops)
                && !self.reclaim_throttle_writeback()
            {
                break;
            }
        }
        self.oom_then_take()
    }

    /// `reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK)`: a reclaimer that made no
    /// progress while pages are under writeback waits for the next writeback
    /// completion (a memstall: it runs inside the reclaim's memstall section)
    /// instead of declaring OOM. Returns false if nothing is under writeback.
    pub(crate) fn reclaim_throttle_writeback(&mut self) -> bool {
        let next = self
            .writeback
            .iter()
            .filter_map(|q| q.front().map(|&(t, _)| t))
            .min();
        let Some(t) = next else { return false };
        self.workload_stall(t.saturating_sub(self.clock), true);
        self.complete_writeback(self.clock);
        true
    }

    fn oom_then_take(&mut self) -> bool {
        if self.out_of_memory(None) && self.node.free > 0 {
            self.node.free -= 1;
            return true;
        }
        false
    }
}
