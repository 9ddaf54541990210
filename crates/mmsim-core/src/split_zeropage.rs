//! Zero-filled pages of a large anonymous folio at its split (v6.12
//! `__split_huge_page` → `remap_page(folio, nr, RMP_USE_SHARED_ZEROPAGE)`
//! → mm/migrate.c `remove_migration_pte` → `try_to_map_unused_to_zeropage`,
//! b1f202060afe "mm: remap unused subpages to shared zeropage when
//! splitting isolated thp"; 6.13 the same), and the per-page content that
//! test and `thp_underused` (`crate::deferred_split`) read.
//!
//! **Content.** The kernel compares each page with the zero page
//! (`pages_identical`, `memchr_inv`); the simulator has no contents, so it
//! keeps one bit per page frame: set once the page may hold data. The
//! bits are kept whenever the model needs them, i.e. under `thp.kernel`
//! 6.12 or 6.13 with some large anonymous folio possible (a THP size
//! enabled, or khugepaged running), whatever `machine.swap_zero_pages` says
//! ([`PageContent::on`]); 6.8 and the RFC v2 model keep every page of a
//! split mapped, as before. A bit is valid for the frames of a large folio
//! (cleared when one is allocated: `folio_zero_user` at the fault, collapse
//! and swap-in) and of the order-0 folios its split leaves; compaction
//! moves it with the folio.
//!
//! * A new large folio from an anonymous fault has every PTE clean here
//!   (the kernel maps them writable and dirty): the first store to each
//!   page leaves the hot path and is taken by [`Sim::store_to_zero_subpage`],
//!   which sets the page's bit and the PTE's dirty bit and counts a hit,
//!   as the kernel's store through the writable PTE is (no fault, the
//!   hit's cost and TLB access). The faulting page of a write fault is
//!   marked at the fault.
//! * A store through a clean PTE that is a fault (a write-protect fault:
//!   fork, swap cache) marks the page at the fault. Invariant: a clean PTE
//!   over a clear bit means the kernel has that PTE writable and dirty,
//!   except in a folio shared by fork (`crate::fork`, its pages not
//!   PageAnonExclusive), whose PTEs are all write-protected: there a store
//!   is a `do_wp_page` fault that copies the page (v6.12 reuses no large
//!   folio) and leaves the shared page zero-filled. `copy_page_range` at
//!   the fork moves a dirty PTE's data to its page's bit; a page never
//!   stored to keeps its bit clear. Whatever else write-protects a large
//!   folio's PTEs sets their bits first: a read fault under
//!   `machine.swap_zero_pages` (mmsim allocates the folio where the
//!   kernel maps the zero page; its pages then count as data at a split).
//!   A PTE made dirty for
//!   every page of a folio at once (a write fault mapping a large
//!   swap-cache folio whole) marks every page it maps.
//! * A collapse (`crate::khugepaged`) marks the pages copied from a page
//!   that held data (an order-0 source under `machine.swap_zero_pages`:
//!   whose folio is non-zero; otherwise every copied page) and maps the
//!   others clean; a
//!   large folio read back from swap is marked whole (its slots' contents
//!   are not known page by page; under the zeromap an all-zero folio is
//!   left unmarked).
//! * Under `machine.swap_zero_pages` the folio's `NONZERO` flag is set
//!   whenever one of its bits is, and at a split each order-0 folio takes
//!   its own page's bit.
//!
//! **The split** ([`Sim::split_map_unused_to_zeropage`]): under 6.12/6.13,
//! each page of an anonymous large folio that a PTE of its VMA maps, that is
//! zero-filled (bit clear and PTE clean) and whose VMA is not VM_LOCKED is
//! mapped to the zero page instead (`pte_mkspecial(my_zero_pfn)`,
//! MM_ANONPAGES − 1); the page is then unmapped, so the caller frees it
//! (the deferred split shrinker at once; reclaim at putback, as it does an
//! unmapped page of a partially mapped folio). Every split of an anonymous
//! folio takes this path: v6.12 `__split_huge_page` passes
//! `RMP_USE_SHARED_ZEROPAGE` for any anonymous folio (mm/huge_memory.c
//! 3311 in 6.12.107), whoever splits it — the deferred split shrinker
//! (underused or partially mapped), reclaim (`shrink_folio_list`: a
//! partially mapped folio, or the split after `add_to_swap` failed),
//! migration (`try_split_folio`, not modelled: mmsim's compaction moves a
//! large folio whole); a partial unmap only queues the folio. (Reclaim
//! does not split a large folio shared by fork: v6.12 `add_to_swap`s it
//! whole, and so does mmsim, zero-filled pages included.) The split
//! is to order 0 at each of those callers, so `PageCompound` never stops
//! it. A folio shared by fork is walked in every VMA of its anon_vma
//! tree (`Sim::split_remap_forked`): the zero page in each. A read of such a PTE hits
//! the zero page; a store copies it (`wp_page_copy`, `crate::fault`). The
//! zero page is set up for this at its first use even without
//! `machine.zero_page` (then read faults still allocate, as before).
//!
//! Departures: mlock is VM_LOCKED only (`folio_test_mlocked` is not
//! modelled apart from it: a folio is taken as mlocked when a VMA that
//! maps the page is VM_LOCKED). v6.12 `try_to_map_unused_to_zeropage`
//! (mm/migrate.c) tests `folio_test_mlocked(folio) || VM_LOCKED` per VMA
//! as `remove_migration_ptes` walks them; for a folio shared by fork
//! `Sim::split_remap_forked` decides once for every VMA (any mapping VMA
//! VM_LOCKED: the page keeps its folio in all), which is the kernel's
//! outcome whenever a VM_LOCKED mapping has set PG_mlocked; with
//! `[machine.tlb]` the clean PTEs of pages not yet stored to break a
//! contpte or coalesced entry that the kernel's uniform dirty PTEs would
//! allow; a large folio left mapped in the swap cache (`add_to_swap`
//! succeeded, the unmap failed or the folio was activated) is excluded
//! from the hits above, so a store to a page not yet stored to is a
//! `do_wp_page` fault that frees the swap cache (`crate::fault`), where in
//! the kernel the PTE is dirty and the store a hit.

use crate::huge_memory::ThpKernel;
use crate::mem::folio::{flags, FolioId, NIL};
use crate::mem::pagetable::{
    pte_present, VmaId, VmaKind, PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG,
};
use crate::sim::Sim;

/// One bit per page frame: the page may hold data (see the module overview).
#[derive(Clone, Debug, Default)]
pub(crate) struct PageContent {
    /// The bits are kept: `thp.kernel` 6.12/6.13 with large anonymous
    /// folios possible.
    pub on: bool,
    /// Bit `pfn` set: the page may hold data. Grown on first use.
    bits: Vec<u64>,
}

impl PageContent {
    /// The state for a machine with `kernel` and large anonymous folios
    /// possible (`large`).
    pub(crate) fn new(kernel: ThpKernel, large: bool) -> PageContent {
        PageContent {
            on: large && crate::deferred_split::queues_whole(kernel),
            bits: Vec::new(),
        }
    }

    /// Clears the bits of `n` frames from `pfn` (a new, zeroed folio).
    pub(crate) fn clear_range(&mut self, pfn: u32, n: u32) {
        let end = (pfn + n) as usize;
        if self.bits.len() * 64 < end {
            self.bits.resize(end.div_ceil(64), 0);
        }
        for p in pfn..pfn + n {
            self.bits[p as usize / 64] &= !(1 << (p % 64));
        }
    }

    /// Marks frame `pfn`.
    pub(crate) fn set(&mut self, pfn: u32) {
        let w = pfn as usize / 64;
        if self.bits.len() <= w {
            self.bits.resize(w + 1, 0);
        }
        self.bits[w] |= 1 << (pfn % 64);
    }

    /// Whether frame `pfn` is marked.
    pub(crate) fn test(&self, pfn: u32) -> bool {
        self.bits
            .get(pfn as usize / 64)
            .is_some_and(|w| w & (1 << (pfn % 64)) != 0)
    }

    /// Copies the bits of `n` frames from `src` to `dst` (a migration).
    pub(crate) fn copy_range(&mut self, src: u32, dst: u32, n: u32) {
        for i in 0..n {
            if self.test(src + i) {
                self.set(dst + i);
            } else {
                self.clear_range(dst + i, 1);
            }
        }
    }
}

/// Per-page content and the zero page at a split: mm/huge_memory.c and
/// mm/migrate.c (v6.12).
impl Sim {
    /// A new anonymous large folio `f` (zeroed): its pages hold no data.
    #[inline]
    pub(crate) fn page_content_new(&mut self, f: FolioId) {
        if self.thp.content.on {
            let n = self.folios[f].nr_pages() as u32;
            let pfn = self.folios.head_pfn(f);
            self.thp.content.clear_range(pfn, n);
        }
    }

    /// Marks page `i` of folio `f` as holding data (and the folio
    /// non-zero under `machine.swap_zero_pages`).
    pub(crate) fn page_content_mark(&mut self, f: FolioId, i: u32) {
        let pfn = self.folios.head_pfn(f) + i;
        self.thp.content.set(pfn);
        if self.tracks_zero_pages() {
            self.folios[f].set(flags::NONZERO);
        }
    }

    /// After a fault on page `index` of anonymous VMA `vma` that stored:
    /// the page its PTE maps now holds data, and the PTE is dirty. A PTE made dirty for every
    /// page of its large folio at once (`write`, a large swap-cache folio
    /// mapped whole) marks them all: see the module overview.
    #[cold]
    #[inline(never)]
    pub(crate) fn page_content_store_fault(&mut self, vma: VmaId, index: u32) {
        let v = &self.vmas[vma as usize];
        if v.kind != VmaKind::Anon {
            return;
        }
        let pte = v.pte(index);
        let f = pte & PTE_FOLIO_MASK;
        if pte & PTE_PRESENT == 0 || f == self.zero_folio || self.folios[f].is_file() {
            return;
        }
        // The kernel's write fault leaves the PTE writable and dirty.
        *self.vmas[vma as usize].pte_mut(index) = pte | PTE_DIRTY;
        let v = &self.vmas[vma as usize];
        let fo = self.folios[f];
        for i in 0..1u32 << fo.order() {
            let p = v.pte(fo.index + i);
            if fo.index + i == index
                || (p & (PTE_PRESENT | PTE_DIRTY) == PTE_PRESENT | PTE_DIRTY
                    && p & PTE_FOLIO_MASK == f)
            {
                let pfn = self.folios.head_pfn(f) + i;
                self.thp.content.set(pfn);
            }
        }
    }

    /// The first store to page `index` of `vma` through a clean PTE `old`
    /// over a zero-filled page of a large anonymous folio that the kernel
    /// maps writable (see the module overview): the page is marked, the
    /// PTE made young and dirty, and the access counted as the hit it is.
    /// False when the store is a fault (the caller's `handle_mm_fault`).
    #[cold]
    #[inline(never)]
    pub(crate) fn store_to_zero_subpage(&mut self, vma: VmaId, index: u32, old: u32) -> bool {
        let f = old & PTE_FOLIO_MASK;
        if f == self.zero_folio || f == NIL {
            return false;
        }
        let fo = self.folios[f];
        if fo.order() == 0
            || fo.is_file()
            || fo.test(flags::SWAPCACHE)
            || self.vmas[vma as usize].kind != VmaKind::Anon
            || self.folio_anon_shared(f)
        {
            return false;
        }
        let i = index.wrapping_sub(fo.index);
        if i >= 1 << fo.order() || self.thp.content.test(self.folios.head_pfn(f) + i) {
            return false;
        }
        self.page_content_mark(f, i);
        *self.vmas[vma as usize].pte_mut(index) = old | PTE_YOUNG | PTE_DIRTY;
        self.acc.accesses += 1;
        self.acc.hits += 1;
        self.advance(self.cost.access_ns);
        if self.tlb.is_some() {
            self.tlb_access(vma, index, old | PTE_DIRTY);
        }
        true
    }

    /// Whether page `i` of anonymous folio `f` is zero-filled
    /// (`pages_identical(page, ZERO_PAGE(0))`): its bit is clear and no
    /// dirty PTE of its VMA maps it.
    pub(crate) fn page_zero_filled(&self, f: FolioId, i: u32) -> bool {
        if self.thp.content.test(self.folios.head_pfn(f) + i) {
            return false;
        }
        let fo = self.folios[f];
        let p = self.vmas[fo.space as usize].pte(fo.index + i);
        !(p & (PTE_PRESENT | PTE_DIRTY) == PTE_PRESENT | PTE_DIRTY && p & PTE_FOLIO_MASK == f)
    }

    /// `try_to_map_unused_to_zeropage` (mm/migrate.c, v6.12) for page `i`
    /// of anonymous folio `fo` (id `f`) being split, whose PTE in its VMA
    /// is `pte` and which becomes folio `t`: when the 6.12 rule applies and
    /// the page is zero-filled, its PTE maps the zero page and true is
    /// returned (the page stays unmapped). Under `machine.swap_zero_pages`
    /// a split-off page that stays takes its own content bit.
    pub(crate) fn split_map_unused_to_zeropage(
        &mut self,
        f: FolioId,
        fo: &crate::mem::folio::Folio,
        i: u32,
        t: FolioId,
    ) -> bool {
        if !self.split_page_zero_filled(f, i, t) || self.vmas[fo.space as usize].locked {
            return false;
        }
        let v = &self.vmas[fo.space as usize];
        let pte = v.pte(fo.index + i);
        if pte & PTE_PRESENT == 0 || pte & PTE_FOLIO_MASK != f {
            return false;
        }
        let zpte = self.zero_page_pte();
        *self.vmas[fo.space as usize].pte_mut(fo.index + i) = zpte;
        true
    }

    /// Whether page `i` of anonymous folio `f`, split off as folio `t`,
    /// gets the zero page where it is mapped (`remap_page` with
    /// `RMP_USE_SHARED_ZEROPAGE`, which v6.12 `__split_huge_page` passes for
    /// every anonymous folio, and `pages_identical`): the 6.12 rule applies
    /// and the page is zero-filled. Under `machine.swap_zero_pages` `t`
    /// takes the page's own content (`NONZERO`).
    pub(crate) fn split_page_zero_filled(&mut self, f: FolioId, i: u32, t: FolioId) -> bool {
        if !self.thp.content.on {
            return false;
        }
        let zero = self.page_zero_filled(f, i);
        if self.tracks_zero_pages() {
            if zero {
                self.folios[t].clear(flags::NONZERO);
            } else {
                self.folios[t].set(flags::NONZERO);
            }
        }
        zero
    }

    /// The PTE `try_to_map_unused_to_zeropage` writes over a present
    /// PTE: the zero page (`pte_mkspecial(pfn_pte(my_zero_pfn,
    /// vm_page_prot))`, mm/migrate.c v6.12), read-only and young whatever
    /// `old` was: `vm_page_prot` carries the accessed bit on x86
    /// (`_PAGE_ACCESSED` in every user `protection_map` entry,
    /// arch/x86/include/asm/pgtable_types.h) and arm64 (`PTE_AF`).
    /// The zero page is set up at its first use.
    pub(crate) fn zero_page_pte(&mut self) -> u32 {
        if self.zero_folio == NIL {
            // ZERO_PAGE(0) without `machine.zero_page`: set up at first use.
            self.zero_folio = self.alloc_zero_folio();
        }
        pte_present(self.zero_folio, true, false)
    }
}
