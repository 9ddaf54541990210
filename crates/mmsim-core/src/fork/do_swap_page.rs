//! `do_swap_page` on a swap entry or swap-cache folio fork shared
//! (mm/memory.c v6.12 `do_swap_page`, `should_try_to_free_swap`; mm/internal.h
//! `swap_pte_batch`; mm/swapfile.c `swap_free_nr`, `folio_swapped`): see
//! `crate::fork`'s overview, section Swap.

use crate::mem::folio::{flags, FolioId};
use crate::mem::pagetable::{pte_present, VmaId, PTE_DIRTY, PTE_YOUNG};
use crate::sim::Sim;

impl Sim {
    /// `should_try_to_free_swap()`'s tests that do not depend on the fault
    /// (swap more than half full, a VM_LOCKED `vma`), for a folio some other
    /// PTE maps too (`crate::fork`): then `folio_free_swap` is still tried.
    pub(super) fn swap_full_or_locked(&self, vma: VmaId, f: FolioId) -> bool {
        self.vmas[vma as usize].locked || self.mem_cgroup_swap_full(self.folios.memcg(f))
    }

    /// `do_swap_page`'s mapping of swap-cache folio `f` at page `index` of
    /// `vma`, when fork shared its slot or the folio: `None` if handled here
    /// (mapped read-only, copied on a store), else the path of an unshared
    /// entry with whether the entry was exclusive (`pte_swp_exclusive`:
    /// false for the last reference of an entry fork shared, which
    /// [`Sim::swapin_pte_mkwrite`] maps writable only once the folio left
    /// the swap cache, `folio_ref_count` 1).
    #[cold]
    #[inline(never)]
    pub(crate) fn map_anon_forked(
        &mut self,
        vma: VmaId,
        index: u32,
        f: FolioId,
        write: bool,
    ) -> Option<bool> {
        let fo = self.folios[f];
        let slot = fo.swap - 1 + index.wrapping_sub(fo.index) * u32::from(fo.order() > 0);
        if fo.mapcount == 0 {
            // The first mapping of a swap-cache folio (`__folio_set_anon`):
            // it is in the faulting VMA's anon_vma, wherever its readahead
            // ran (a task's readahead folio may be mapped by the other).
            self.folios[f].space = vma;
        }
        let fk = self.fork.as_mut().unwrap();
        let refs = fk.refs(slot);
        if refs == 0 && fo.mapcount == 0 && !fk.is_shared(f) {
            return Some(true);
        }
        // swap_free() of this PTE's reference: it maps the folio now.
        let refs = refs.saturating_sub(1);
        if refs > 0 || fk.refs(slot) > 0 {
            *fk.refs_mut(slot) = refs;
        }
        if refs == 0 && fo.mapcount == 0 {
            // The last reference: exclusive again (`folio_ref_count` 1).
            fk.set_shared(f, false);
            return Some(false);
        }
        fk.set_shared(f, true);
        self.folios[f].set_maywrite(false);
        if fo.mapcount == 0 {
            // __folio_set_anon() of a folio not exclusive: the root anon_vma.
            self.folios[f].space = fk.root(vma);
        }
        let fo = &mut self.folios[f];
        fo.mapcount = fo.mapcount.saturating_add(1);
        let pte = pte_present(f, true, false);
        *self.vmas[vma as usize].pte_mut(index) = pte;
        if refs == 0 {
            // `should_try_to_free_swap` (v6.12): a store frees the slot only
            // when no other task maps the folio (`folio_ref_count`); a full
            // swap or a VM_LOCKED VMA frees it anyway (when no swap PTE holds
            // the slot). A shared entry takes no zram bypass.
            if self.folios[f].mapcount == 1 {
                self.should_free_swap(vma, f, write);
            } else if self.swap_full_or_locked(vma, f) {
                self.folio_free_swap(f);
            }
        }
        if write {
            self.wp_page_copy_anon(vma, index, f, true);
        }
        None
    }

    /// `do_swap_page` finding large folio `f` in the swap cache for the
    /// swap entry of `slot` at page `index` of `vma` (v6.12, "entirely map
    /// large folios found in swapcache", v6.11+). Without fork, or when every
    /// entry of the folio is exclusive and nothing maps it,
    /// [`Sim::map_swapcache_large`] maps it (`crate::fault_swapcache`).
    /// Once fork shared its entries or the folio:
    ///
    /// * the whole folio is mapped (under `thp.kernel` 6.12 or later; one
    ///   page per fault before) only when `swap_pte_batch` finds its
    ///   `nr` PTEs, inside the VMA and the fault's PMD, holding its `nr`
    ///   entries in order with the faulting entry's exclusive bit; else the
    ///   faulting page alone (`check_folio` with `nr_pages` = 1);
    /// * `swap_free_nr` drops one count from each slot mapped, then
    ///   `should_try_to_free_swap` frees the slots if nobody else maps the
    ///   folio (under `folio_free_swap`'s `folio_swapped`: no slot may be
    ///   referenced by another swap PTE);
    /// * the folio is mapped exclusive (writable on a store) when the
    ///   faulting entry was exclusive or nothing else holds it
    ///   (`folio_ref_count` 1: out of the swap cache and mapped by no one);
    ///   otherwise read-only and not PageAnonExclusive, and a store copies
    ///   (`do_wp_page`: v6.12 copies a page of a large folio at order 0;
    ///   under `thp.kernel = "rfc-v2"` the RFC's rules).
    pub(crate) fn do_swap_page_swapcache_large(
        &mut self,
        vma: VmaId,
        index: u32,
        slot: u32,
        f: FolioId,
        write: bool,
    ) {
        if self.fork.is_some() && self.map_swapcache_large_forked(vma, index, slot, f, write) {
            return;
        }
        self.map_swapcache_large(vma, index, slot, f, write);
    }

    /// [`Sim::do_swap_page_swapcache_large`] once a task forked: true if
    /// handled here.
    #[cold]
    #[inline(never)]
    fn map_swapcache_large_forked(
        &mut self,
        vma: VmaId,
        index: u32,
        slot: u32,
        f: FolioId,
        write: bool,
    ) -> bool {
        let fo = self.folios[f];
        let n = 1u32 << fo.order();
        let first = fo.swap - 1;
        let fk = self.fork.as_ref().unwrap();
        let forked = (first..first + n).any(|s| fk.refs(s) > 0);
        if !forked && !fk.is_shared(f) && fo.mapcount == 0 {
            return false;
        }
        let excl = fk.refs(slot) == 0;
        // swap_pte_batch() also wants every entry's exclusive bit alike.
        let batch = self.thp.swapcache_batch
            && self.swap_pte_batch_folio(vma, index, slot, f)
            && index - (slot - first) == fo.index
            && (0..n).all(|i| (fk.refs(first + i) == 0) == excl);
        if batch && excl && !fk.is_shared(f) && fo.mapcount == 0 {
            return false;
        }
        let (start, from, nr) = if batch {
            (fo.index, first, n)
        } else {
            (index, slot, 1)
        };
        self.map_swapcache_ptes(vma, index, f, (start, from, nr), excl, write);
        true
    }

    /// Maps `nr` pages of swap-cache folio `f` from page `start` of `vma`
    /// in place of the swap entries of slots `from..` (`excl`: the faulting
    /// entry at `index` was exclusive); see
    /// [`Sim::do_swap_page_swapcache_large`].
    fn map_swapcache_ptes(
        &mut self,
        vma: VmaId,
        index: u32,
        f: FolioId,
        (start, from, nr): (u32, u32, u32),
        excl: bool,
        write: bool,
    ) {
        let before = self.folios[f].mapcount;
        // swap_free_nr(): each slot loses this PTE's count.
        let fk = self.fork.as_mut().unwrap();
        for s in from..from + nr {
            let r = fk.refs(s);
            if r > 0 {
                *fk.refs_mut(s) = r - 1;
            }
        }
        let v = &mut self.vmas[vma as usize];
        for i in start..start + nr {
            *v.pte_mut(i) = pte_present(f, true, false);
        }
        let fo = &mut self.folios[f];
        fo.mapcount = (u32::from(fo.mapcount) + nr).min(255) as u8;
        // should_try_to_free_swap(), as for an order-0 shared entry.
        if before == 0 {
            self.should_free_swap(vma, f, write);
        } else if self.swap_full_or_locked(vma, f) {
            self.folio_free_swap(f);
        }
        let exclusive = excl || (before == 0 && !self.folios[f].test(flags::SWAPCACHE));
        let fk = self.fork.as_mut().unwrap();
        fk.set_shared(f, !exclusive);
        if before == 0 {
            self.folios[f].space = if exclusive { vma } else { fk.root(vma) };
        }
        if exclusive {
            if write {
                let v = &mut self.vmas[vma as usize];
                for i in start..start + nr {
                    *v.pte_mut(i) |= PTE_DIRTY;
                }
            } else if self.thp.swapin_mkwrite {
                self.folios[f].set_maywrite(true);
            }
            return;
        }
        self.folios[f].set_maywrite(false);
        if write {
            // do_wp_page() at the end of the same fault.
            let old = self.vmas[vma as usize].pte(index);
            if !self.do_wp_page_forked_as(vma, index, f, true) {
                // Reused (the RFC's whole-range reuse).
                *self.vmas[vma as usize].pte_mut(index) = old | PTE_YOUNG | PTE_DIRTY;
                if self.folios[f].test(flags::SWAPCACHE) {
                    self.folio_free_swap(f);
                }
                self.anon_wp_fault_content(f);
            }
        }
    }

    /// `folio_swapped()` of swap-cache folio `f` once a task forked: some
    /// slot of it is still referenced by a swap PTE — a counted one (not
    /// exclusive), or an exclusive one left in its anon_vma tree: a large
    /// folio's when only some of its pages were mapped back, an order-0
    /// folio's when swap readahead brought it in (v6.12 `swap_swapcount()`
    /// counts exclusive PTEs too).
    #[cold]
    #[inline(never)]
    pub(crate) fn folio_swapped_forked(&self, f: FolioId) -> bool {
        let fo = self.folios[f];
        let n = 1u32 << fo.order();
        let first = fo.swap - 1;
        if (first..first + n).any(|s| self.swap_slot_shared(s)) {
            return true;
        }
        std::iter::once(&fo.space)
            .chain(self.anon_vma_desc(fo.space))
            .any(|&vma| self.swap_ptes_hold(vma, f))
    }

    /// `__swap_count(entry) > 1` for the entry of `slot`: other swap PTEs
    /// reference it (so `do_swap_page` takes the swap cache's order-0 path).
    #[inline]
    pub(crate) fn swap_count_above_one(&self, slot: u32) -> bool {
        self.fork.as_ref().is_some_and(|fk| fk.refs(slot) > 1)
    }
}
