//! `do_wp_page` on an anonymous folio fork shared (mm/memory.c v6.12
//! `do_wp_page`, `wp_can_reuse_anon_folio`, `wp_page_copy`; seed 003's
//! RFC v2's range copy and reuse): see `crate::fork`'s overview.

use crate::huge_memory::MIN_THP_ORDER;
use crate::mem::folio::{flags, FolioId};
use crate::mem::pagetable::{VmaId, PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG};
use crate::sim::Sim;

impl Sim {
    /// `do_wp_page` for a store to page `index` of `vma` whose clean PTE
    /// maps anonymous folio `f`, when fork shared it: true if handled
    /// here (copied), false to take the reuse path of an exclusive page.
    #[cold]
    #[inline(never)]
    pub(crate) fn do_wp_page_forked(&mut self, vma: VmaId, index: u32, f: FolioId) -> bool {
        self.do_wp_page_forked_as(vma, index, f, false)
    }

    /// [`Sim::do_wp_page_forked`]; `swapin`: at the end of the
    /// `do_swap_page` that mapped the folio (the access counted as a miss).
    pub(super) fn do_wp_page_forked_as(
        &mut self,
        vma: VmaId,
        index: u32,
        f: FolioId,
        swapin: bool,
    ) -> bool {
        if !self.folio_anon_shared(f) {
            return false;
        }
        let fo = self.folios[f];
        if fo.order() == 0 {
            if fo.mapcount <= 1 && self.wp_can_reuse_anon_folio(f) {
                self.wp_reuse_forked(vma, f);
                return false;
            }
        } else if self.thp.kernel == crate::huge_memory_rfc::ThpKernel::RfcV2 {
            let n = 1u32 << fo.order();
            let v = &self.vmas[vma as usize];
            let here = (fo.index..fo.index + n)
                .filter(|&i| {
                    let p = v.pte(i);
                    p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f
                })
                .count() as u32;
            if fo.mapcount != u8::MAX && here == u32::from(fo.mapcount) {
                // RFC patch 10: wp_page_reuse over the folio's range.
                let v = &mut self.vmas[vma as usize];
                for i in fo.index..fo.index + n {
                    let p = v.pte_mut(i);
                    if *p & PTE_PRESENT != 0 && *p & PTE_FOLIO_MASK == f {
                        *p |= PTE_DIRTY;
                    }
                }
                self.wp_reuse_forked(vma, f);
                if self.folios[f].test(flags::SWAPCACHE) {
                    self.folio_free_swap(f);
                }
                return false;
            }
        }
        self.wp_page_copy_anon(vma, index, f, swapin);
        true
    }

    /// The swap-cache part of v6.12 `wp_can_reuse_anon_folio` (mm/memory.c)
    /// for order-0 folio `f` that fork shared and that this PTE alone maps
    /// (mapcount 1; the caller tests it): a folio in the swap cache gets
    /// `folio_free_swap` (since v5.19, "mm: optimize do_wp_page() for
    /// exclusive pages in the swapcache"), which fails while another swap
    /// PTE holds its slot (`folio_swapped`) or while it is under writeback;
    /// then `folio_ref_count(folio) != 1` (the swap cache's reference is
    /// left) and the store copies. True when the folio may be reused: out
    /// of the swap cache, or never in it. Verified in v6.12's source: the
    /// `folio_ref_count(folio) > 1 + folio_test_swapcache(folio)` test, the
    /// `folio_free_swap` under the folio lock, then `folio_ref_count != 1`.
    /// This is the only place a write fault frees a slot: a page that is
    /// PageAnonExclusive is reused by `do_wp_page` before this function is
    /// reached, keeping its swap-cache slot (`crate::fault`).
    fn wp_can_reuse_anon_folio(&mut self, f: FolioId) -> bool {
        if self.folios[f].test(flags::SWAPCACHE) {
            self.folio_free_swap(f);
        }
        !self.folios[f].test(flags::SWAPCACHE)
    }

    /// `folio_move_anon_rmap` and SetPageAnonExclusive of a reused folio.
    fn wp_reuse_forked(&mut self, vma: VmaId, f: FolioId) {
        self.folios[f].space = vma;
        let fk = self.fork.as_mut().unwrap();
        fk.set_shared(f, false);
        fk.stats.cow_reuses += 1;
    }

    /// The order of the RFC's CoW copy of folio `f` at page `index` of
    /// `vma` (0: order 0).
    fn rfc_cow_order(&self, vma: VmaId, index: u32, f: FolioId) -> u8 {
        let v = &self.vmas[vma as usize];
        let mut order = self.folios[f].order().min(self.thp.rfc_order);
        while order >= MIN_THP_ORDER {
            let n = 1u32 << order;
            let start = index & !(n - 1);
            if start + n <= v.len
                && (start..start + n).all(|i| {
                    let p = v.pte(i);
                    p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f
                })
            {
                return order;
            }
            order -= 1;
        }
        0
    }

    /// `wp_page_copy()` of anonymous folio `f` mapped read-only at `index`
    /// of `vma` by `old` (see the module overview); `swapin`: at the end of
    /// the `do_swap_page` that mapped it (the access counted as a miss).
    pub(super) fn wp_page_copy_anon(&mut self, vma: VmaId, index: u32, f: FolioId, swapin: bool) {
        let rfc =
            self.thp.kernel == crate::huge_memory_rfc::ThpKernel::RfcV2 && self.thp.rfc_order != 0;
        let mut order = if rfc && self.folios[f].order() > 0 {
            self.rfc_cow_order(vma, index, f)
        } else {
            0
        };
        let mut new = None;
        while order >= MIN_THP_ORDER {
            match self.alloc_charge_anon_folio(
                order,
                crate::huge_memory_rfc::RFC_GFP,
                crate::gfp::GFP_KERNEL,
            ) {
                Ok(nf) => {
                    new = Some(nf);
                    break;
                }
                Err(charge) => {
                    let s = &mut self.thp.stats[order as usize];
                    s.anon_fault_fallback += 1;
                    if charge {
                        s.anon_fault_fallback_charge += 1;
                        order = 0;
                        break;
                    }
                }
            }
            order -= 1;
            if order < MIN_THP_ORDER {
                order = 0;
            }
        }
        let new = match new {
            Some(nf) => nf,
            None => match self.folio_prealloc_copy(vma, index) {
                Some(nf) => nf,
                None => return,
            },
        };
        let n = 1u32 << order;
        let start = index & !(n - 1);
        // pte_same(): reclaim may have unmapped the folio meanwhile.
        let v = &self.vmas[vma as usize];
        let same = (start..start + n).all(|i| {
            let p = v.pte(i);
            p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f
        });
        let task = v.task as usize;
        if self.tasks[task].dead {
            self.free_folio(new);
            return;
        }
        if !same {
            self.retry_copy_fault(new, vma, index, swapin);
            return;
        }
        // folio_remove_rmap_ptes of the old folio, ptep_clear_flush.
        let fo = &mut self.folios[f];
        if fo.mapcount != u8::MAX {
            fo.mapcount = fo.mapcount.saturating_sub(n as u8);
        }
        let left = fo.mapcount;
        self.flush_tlb_range(vma, start, start + n, false);
        if order == 0 {
            self.advance(self.cost.minor_fault_ns);
            self.map_copy(vma, index, new);
        } else {
            self.anon_wp_fault_content(new);
            self.map_anon_large(vma, index, new);
            let v = &mut self.vmas[vma as usize];
            for i in start..start + n {
                *v.pte_mut(i) |= PTE_YOUNG;
            }
        }
        let fk = self.fork.as_mut().unwrap();
        fk.stats.cow_copies += 1;
        fk.stats.cow_copied_pages += u64::from(n);
        if self.folios[f].order() > 0 {
            let (mapped, hole) = self.anon_family_mapped(f);
            if mapped == 0 {
                self.folios[f].mapcount = 0;
                self.advance(self.cost.free_ns);
                self.free_unmapped_anon_folio(f);
            } else {
                if left == u8::MAX {
                    self.folios[f].mapcount = mapped.min(255) as u8;
                }
                if hole {
                    self.deferred_split_folio(f);
                }
            }
        }
    }
}
