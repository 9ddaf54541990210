//! `do_swap_page` (mm/memory.c) on a large folio found in the swap cache,
//! without fork (fork's shared entries: `crate::fork`).
//!
//! A large folio swapped out whole (`crate::huge_memory`, v6.10+) stays in the
//! swap cache until reclaim frees it, under writeback on a disk or waiting for
//! the next pass; a fault on one of its swap PTEs then finds it there (a minor
//! fault: `pgfault` only, no `pgmajfault`, `pswpin` or per-size `swpin`, and
//! no readahead hit, `swap_cache_get_folio` passes large folios over).
//!
//! * **v6.11 and later** (`thp.kernel` 6.12, 6.13): "mm: swap: entirely map
//!   large folios found in swapcache" (Chuanhua Han, Barry Song; posted in
//!   May 2024, after v6.10's merge window: v6.10's `do_swap_page` still
//!   maps one PTE and calls `swap_free(entry)`). When the folio's `nr` pages
//!   lie inside the VMA and the fault's page table (the PMD) and the `nr`
//!   PTEs from `address - idx` hold the folio's `nr` swap entries in order
//!   (`pte_same` of the first with the faulting entry moved back by `idx`,
//!   then `swap_pte_batch(folio_ptep, nr, folio_pte) == nr`: consecutive
//!   offsets with the same swap PTE bits, all exclusive here), one fault maps
//!   them all: `swap_free_nr(entry, nr)`, `folio_ref_add(folio, nr - 1)`,
//!   `add_mm_counter(MM_ANONPAGES, nr)`, `folio_add_anon_rmap_ptes(…, nr,
//!   RMAP_EXCLUSIVE)` and `set_ptes` of the same PTE, young (the x86
//!   `vm_page_prot` carries the accessed bit) and, on a write fault to the
//!   exclusive folio, dirty and writable (`maybe_mkwrite(pte_mkdirty)`, so no
//!   `do_wp_page` follows). Otherwise (a neighbour PTE is none, present or
//!   another entry: partial) the fault maps its own page only, as before.
//! * **Before** (`thp.kernel` 6.8 and the RFC's v6.3): every page is its
//!   own fault (`folio_add_anon_rmap_pte`, `set_pte_at`, `swap_free`).
//!
//! Freeing the slots (`should_try_to_free_swap` then `folio_free_swap`):
//! when swap is more than half full (`mem_cgroup_swap_full`), on zram (the
//! model's rule for SWP_SYNCHRONOUS_IO devices, `crate::fault`), or on a write
//! fault when the fault holds the only reference besides the swap cache's:
//! `folio_ref_count(folio) == 1 + folio_nr_pages(folio)` since v6.11
//! ("mm: swap: make should_try_to_free_swap() support large-folio"), that is
//! no page of the folio was mapped before this fault; `== 2` before, which a
//! large folio in the swap cache never meets. `folio_free_swap` then fails
//! while `folio_swapped`: a swap PTE still holds one of the folio's slots
//! ([`Sim::folio_swapped_ptes`]), so a partial fault leaves every slot.
//!
//! **The PTE a swap-in installs** (order 0 and large, swap-cache hit or
//! read, fork's entries included: [`Sim::swapin_pte_mkwrite`]): young
//! (`vm_page_prot`); dirty on a write fault; on a read fault writable and
//! clean since v6.11 when the entry was exclusive (or the folio is left
//! with no other reference), so the first store is no fault
//! ([`Sim::store_to_writable_clean`]); read-only before (6.8, the RFC's
//! v6.3: that store is `do_wp_page`).
//!
//! MADV_DONTNEED of some of the swap PTEs (`zap_pte_range` →
//! `free_swap_and_cache_nr` → `__try_to_reclaim_swap`, v6.12;
//! [`Sim::try_to_reclaim_swap_zapped`] in `crate::swapfile`) leaves the
//! folio in the swap cache while another of its slots is referenced
//! (`swap_is_has_cache` fails), or while it is mapped and swap is not
//! more than half full (`TTRS_UNMAPPED` and `TTRS_FULL`): the zapped slot
//! keeps only the swap cache's reference, and goes when the folio leaves
//! the cache (`put_swap_folio`: no swap PTE holds it). With swap over half
//! full a mapped folio whose slots are all unreferenced leaves the cache
//! at once, its slots freed.

use crate::mem::folio::{flags, FolioId, NIL};
use crate::mem::pagetable::{pte_present, VmaId, PTE_DIRTY, PTE_FOLIO_MASK, PTE_YOUNG};
use crate::sim::{Policy, Sim};

impl Sim {
    /// `do_swap_page` mapping large folio `f`, found in the swap cache for
    /// the swap entry of `slot` at page `index` of `vma` (see the module
    /// overview): the whole folio when `thp.kernel` is 6.12 or later and
    /// [`Sim::swap_pte_batch_folio`] holds, else page `index` alone.
    pub(crate) fn map_swapcache_large(
        &mut self,
        vma: VmaId,
        index: u32,
        slot: u32,
        f: FolioId,
        write: bool,
    ) {
        let fo = self.folios[f];
        let idx = slot - (fo.swap - 1);
        let before = fo.mapcount;
        let whole = self.thp.swapcache_batch && self.swap_pte_batch_folio(vma, index, slot, f);
        let (start, nr) = if whole {
            (index - idx, 1u32 << fo.order())
        } else {
            (index, 1)
        };
        // set_ptes(): exclusive entries, so a store maps dirty and writable.
        let v = &mut self.vmas[vma as usize];
        for i in start..start + nr {
            *v.pte_mut(i) = pte_present(f, true, write);
        }
        let fo = &mut self.folios[f];
        fo.mapcount = (u32::from(fo.mapcount) + nr).min(255) as u8;
        // should_try_to_free_swap(): a store frees the slots when the fault
        // holds the only reference besides the swap cache's (v6.11+; never
        // for a large folio before).
        let only_ref = write && before == 0 && self.thp.swapcache_batch;
        self.should_free_swap(vma, f, only_ref);
        if !write && self.thp.swapin_mkwrite {
            self.swapin_pte_mkwrite(f, true);
        }
    }

    /// The end of `do_swap_page` (mm/memory.c v6.12, 4537-4553) on a read
    /// fault that mapped anonymous folio `f` (`exclusive`: the swap entry's
    /// `pte_swp_exclusive`, or a fresh folio the swap cache never held):
    /// since v6.11 (Barry Song, "mm: swap: reuse exclusive folio directly
    /// instead of wp page faults", c18160dba5ff, June 2024) the PTE is made
    /// writable (`pte_mkwrite`) when the folio is not KSM and is exclusive
    /// or `folio_ref_count(folio) == 1` (here: out of the swap cache after
    /// `should_try_to_free_swap` and mapped by this fault alone), the VMA
    /// has VM_WRITE and neither uffd-wp nor soft-dirty tracking wants a
    /// write fault; dirty only on a write fault. Before (v6.10 back to the
    /// `reuse_swap_page` era) only a write fault mapped it writable, so the
    /// first store after a read swap-in was a `do_wp_page` fault. Under
    /// `thp.kernel` 6.12/6.13 only ([`crate::huge_memory::Thp::swapin_mkwrite`];
    /// 6.8 and the RFC's v6.3 keep the fault). mmsim's PTE has no write
    /// bit: the folio is marked ([`crate::mem::folio::GEN_REFS_MAYWRITE`])
    /// and its clean PTEs count as writable
    /// ([`Sim::store_to_writable_clean`]). Departures: every VMA is taken
    /// to have VM_WRITE (mmsim has no `mprotect`, uffd-wp, soft-dirty or
    /// KSM); a folio under writeback on a SWP_STABLE_WRITES device (zram)
    /// is not made non-exclusive (mmsim's zram writes complete at once).
    /// The bit is assigned, not only set: a folio that left its PTEs with
    /// the bit (cleared by `try_to_unmap` anyway) and is mapped read-only
    /// here (not exclusive, still in the swap cache or mapped elsewhere)
    /// has clean PTEs that are write-protected, as the kernel's are.
    #[inline]
    pub(crate) fn swapin_pte_mkwrite(&mut self, f: FolioId, exclusive: bool) {
        let fo = &mut self.folios[f];
        let writable = exclusive || (!fo.test(flags::SWAPCACHE) && fo.mapcount == 1);
        fo.set_maywrite(writable);
    }

    /// A store through the clean present PTE `old` at page `index` of `vma`
    /// whose folio v6.11+ `do_swap_page` mapped writable
    /// ([`Sim::swapin_pte_mkwrite`]): no fault, the hardware sets the
    /// dirty (and accessed) bit, and the access is the hit it is. Unlike
    /// the write-protect fault it replaces (`do_wp_page`, a `pgfault`), it
    /// takes no fault; as there, the folio
    /// stays in the swap cache with its slot; the dirty PTE dirties it at
    /// reclaim (`try_to_unmap`), which writes it to that slot again. False
    /// when the store is a fault (the caller's `handle_mm_fault`).
    #[cold]
    #[inline(never)]
    pub(crate) fn store_to_writable_clean(&mut self, vma: VmaId, index: u32, old: u32) -> bool {
        let f = old & PTE_FOLIO_MASK;
        if f == self.zero_folio || f == NIL || !self.folios[f].maywrite() {
            return false;
        }
        debug_assert!(!self.folio_anon_shared(f));
        *self.vmas[vma as usize].pte_mut(index) = old | PTE_YOUNG | PTE_DIRTY;
        self.acc.accesses += 1;
        self.acc.hits += 1;
        self.advance(self.cost.access_ns);
        if self.tlb.is_some() {
            self.tlb_access(vma, index, old | PTE_DIRTY);
        }
        if self.policy == Policy::Lru {
            self.lru_touch(f);
        }
        // The store makes the page data (`crate::split_zeropage`).
        self.anon_wp_fault_content(f);
        if self.thp.content.on {
            self.page_content_store_fault(vma, index);
        }
        true
    }

    /// The batch test of v6.12 `do_swap_page` for large swap-cache folio
    /// `f` and the faulting entry of `slot` at page `index` of `vma`: the
    /// folio's pages from `index - idx` (`idx` = the entry's page in the
    /// folio) lie inside the VMA and the PMD of `index`, and their PTEs
    /// hold the folio's swap entries in order (`swap_pte_batch`).
    pub(crate) fn swap_pte_batch_folio(
        &self,
        vma: VmaId,
        index: u32,
        slot: u32,
        f: FolioId,
    ) -> bool {
        let fo = self.folios[f];
        let (first, n) = (fo.swap - 1, 1u32 << fo.order());
        let idx = slot - first;
        let v = &self.vmas[vma as usize];
        let pmd = index & !511;
        let Some(start) = index.checked_sub(idx) else {
            return false;
        };
        start >= pmd
            && u64::from(start) + u64::from(n) <= u64::from(v.len.min(pmd + 512))
            && (0..n).all(|i| v.pte(start + i) == first + i + 1)
    }

    /// `folio_swapped()` (mm/swapfile.c, v6.12) of swap-cache folio `f`
    /// without fork: a swap PTE of its VMA still holds one of its slots (the
    /// swap count of some slot is above the cache's reference). For an
    /// order-0 folio that is `swap_swapcount()` of its one slot: a folio
    /// swap readahead brought in, not yet mapped.
    pub(crate) fn folio_swapped_ptes(&self, f: FolioId) -> bool {
        self.swap_ptes_hold(self.folios[f].space, f)
    }

    /// Whether a swap PTE of `vma`, at swap-cache folio `f`'s pages, still
    /// holds one of its slots (each page's PTE its own slot's entry).
    pub(crate) fn swap_ptes_hold(&self, vma: VmaId, f: FolioId) -> bool {
        let fo = self.folios[f];
        let (first, n) = (fo.swap - 1, 1u32 << fo.order());
        let v = &self.vmas[vma as usize];
        (0..n).any(|i| v.pte(fo.index + i) == first + i + 1)
    }

    /// The last mapped page of large swap-cache folio `f` zapped (without
    /// fork) while swap PTEs still hold some of its slots (a partial swap-in
    /// of v6.8): `folio_free_swap` fails (`folio_swapped`), so the folio
    /// stays in the swap cache for reclaim, whose `put_swap_folio` frees the
    /// slots no swap PTE holds. False when the folio may be freed.
    pub(crate) fn unmapped_large_stays_swapped(&self, f: FolioId) -> bool {
        let fo = self.folios[f];
        fo.order() > 0
            && self.fork.is_none()
            && fo.test(flags::SWAPCACHE)
            && self.folio_swapped_ptes(f)
    }
}
