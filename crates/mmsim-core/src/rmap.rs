//! The reverse map (mm/rmap.c, v6.12) and the idle-page bits of
//! mm/page_idle.c.
//!
//! Reclaim finds the PTEs that map a folio through the reverse map: an
//! anonymous folio is mapped at its own page of its own VMA and, once a
//! task forked (`crate::fork`), of the VMAs forked from it (its
//! `anon_vma` tree), a file folio by every VMA of the file's
//! `i_mmap` interval tree that covers its index. `Sim::rmap_walk` visits
//! those VMAs; `Sim::folio_referenced` (with the rules of
//! `folio_referenced_one`) tests and clears their accessed bits, and
//! `Sim::try_to_unmap` (`try_to_unmap_one`) removes the PTEs, and
//! `Sim::folio_mkclean` cleans and write-protects a page-cache folio's
//! shared PTEs, or its PMD once, before its write (`crate::writeback`,
//! `crate::filemap_sync`), flushing locally for the mappings of the task
//! whose `fsync` writes it and remotely for the rest. Every clear
//! of a PTE's accessed bit goes through `Sim::ptep_test_and_clear_young`:
//! the reclaim walk here, MGLRU's look-around and page-table walk
//! (`crate::reclaim::lru_gen`), and the idle-page tracking below.
//!
//! ## PG_young and PG_idle
//!
//! When something other than reclaim clears an accessed bit — the idle page
//! tracking of mm/page_idle.c, or DAMON's `damon_folio_mkold` — it sets
//! PG_young on the folio, so that the access it consumed is not lost to
//! reclaim: `folio_referenced_one` counts a folio with PG_young as
//! referenced (and clears the bit). PG_idle is set by the idle tracker and
//! cleared by any reference reclaim finds. `Sim::folio_mkold_for_idle` is
//! that tracker's entry (only rule tests call it); DAMON (`crate::damon`)
//! has its own mkold and young walks, which clear through
//! `Sim::ptep_test_and_clear_young` too.
//!
//! ## Page-table growth
//!
//! The classic reclaim walk and `try_to_unmap` take each PTE they examine
//! through `Vma::pte_mut`, which grows a page table that never reached the
//! index (zeroes; no PTE changes). MGLRU's `walk_mm` walks every table up to
//! its length, so after a switch to MGLRU its cost depends on that growth:
//! it is kept so that every result stays as it was.

use crate::mem::folio::{flags, FolioId};
use crate::mem::pagetable::{
    pte_swap, TaskId, VmaId, VmaKind, PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG,
};
use crate::reclaim::ScanControl;
use crate::sim::{Policy, Sim};

/// What `folio_referenced()` found: the count it returns and the `vm_flags`
/// it reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Referenced {
    /// VMAs in which the folio was referenced (a young PTE, or PG_young).
    pub vmas: u32,
    /// VM_EXEC: one of those VMAs is executable.
    pub exec: bool,
    /// VM_LOCKED: the walk met a VM_LOCKED VMA mapping the folio and stopped.
    pub locked: bool,
}

/// `pte_young()` of a present PTE: the hardware accessed bit.
#[inline]
pub(crate) fn pte_present_young(pte: u32) -> bool {
    pte & (PTE_PRESENT | PTE_YOUNG) == PTE_PRESENT | PTE_YOUNG
}

/// The cursor of [`Sim::rmap_walk`]: `rmap_walk_anon` visits the anonymous
/// folio's VMA and those forked from it (`crate::fork`; one VMA when no task
/// forked), `rmap_walk_file`
/// each VMA of the file's `i_mmap` that covers the folio's index, in mapping
/// order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RmapWalk {
    space: u32,
    index: u32,
    file: bool,
    next: u32,
    end: u32,
}

/// `ptep_test_and_clear_young()` on a PTE already looked up: clears its
/// accessed bit and returns whether it was set. `Sim::ptep_test_and_clear_young`
/// and the classic reclaim walk, which holds the PTE already, call it.
#[inline(always)]
fn ptep_test_and_clear_young(pte: &mut u32) -> bool {
    let young = *pte & PTE_YOUNG != 0;
    *pte &= !PTE_YOUNG;
    young
}

/// `pra->mapcount` of `folio_referenced()`: the PTEs still to be found,
/// from `folio_mapcount()`. The folio's count saturates at 255; a saturated
/// count cannot tell when every PTE was found, so the walk then never stops
/// early.
#[inline]
fn mapcount_to_find(mapcount: u8) -> u32 {
    if mapcount == u8::MAX {
        u32::MAX
    } else {
        mapcount as u32
    }
}

impl Sim {
    /// Mapping `m` of a file's reverse map (`vma_interval_tree_foreach` over
    /// `mapping->i_mmap`, v6.12): the VMA and the page index in it, if that
    /// VMA covers page `index` of `file`.
    #[inline]
    pub(crate) fn file_rmap(&self, file: u32, index: u32, m: usize) -> Option<(VmaId, u32)> {
        let vid = self.files[file as usize].mappings[m];
        let v = &self.vmas[vid as usize];
        let VmaKind::File { pgoff, .. } = v.kind else {
            return None;
        };
        let i = index.checked_sub(pgoff).filter(|i| *i < v.len)?;
        Some((vid, i))
    }

    /// `rmap_walk()` (mm/rmap.c, v6.12): calls `rmap_one(sim, vma, index)`
    /// for every VMA that may map folio `f`, in [`RmapWalk`]'s order, until
    /// `rmap_one` returns false (the kernel's `rmap_one` returning false, or
    /// its `done` callback). `index` is the folio's page in that VMA; whether
    /// a PTE there maps the folio is for `rmap_one` to check
    /// (`Sim::page_vma_mapped_walk`). Reclaim's walks, which run for every
    /// folio scanned, drive the cursor themselves so that their per-VMA step
    /// is inlined.
    #[inline]
    #[cfg_attr(not(test), allow(dead_code))] // the idle tracker's walk, for DAMON
    pub(crate) fn rmap_walk(
        &mut self,
        f: FolioId,
        mut rmap_one: impl FnMut(&mut Sim, VmaId, u32) -> bool,
    ) {
        let mut walk = self.rmap_walk_start(f);
        while let Some((vma, index)) = self.rmap_walk_next(&mut walk) {
            if !rmap_one(self, vma, index) {
                return;
            }
        }
    }

    /// Starts an [`RmapWalk`] over the VMAs that may map folio `f`.
    #[inline(always)]
    pub(crate) fn rmap_walk_start(&self, f: FolioId) -> RmapWalk {
        let fo = &self.folios[f];
        let file = fo.is_file();
        RmapWalk {
            space: fo.space,
            index: fo.index,
            file,
            next: 0,
            end: if file {
                self.files[fo.space as usize].mappings.len() as u32
            } else {
                // The folio's VMA and those forked from it (`crate::fork`).
                1 + self.anon_vma_desc(fo.space).len() as u32
            },
        }
    }

    /// The next VMA of `walk` and the folio's page index in it.
    #[inline(always)]
    pub(crate) fn rmap_walk_next(&self, walk: &mut RmapWalk) -> Option<(VmaId, u32)> {
        while walk.next < walk.end {
            let m = walk.next;
            walk.next += 1;
            if !walk.file {
                if m == 0 {
                    return Some((walk.space, walk.index));
                }
                let vma = self.anon_vma_desc(walk.space)[m as usize - 1];
                return Some((vma, walk.index));
            }
            if let Some(target) = self.file_rmap(walk.space, walk.index, m as usize) {
                return Some(target);
            }
        }
        None
    }

    /// `page_vma_mapped_walk()` (mm/page_vma_mapped.c, v6.12) for an order-0
    /// folio: the PTE of page `index` of `vma` if it is present and maps
    /// folio `f`.
    #[inline]
    pub(crate) fn page_vma_mapped_walk(&self, f: FolioId, vma: VmaId, index: u32) -> Option<u32> {
        let pte = self.vmas[vma as usize].pte(index);
        (pte & PTE_PRESENT != 0 && pte & PTE_FOLIO_MASK == f).then_some(pte)
    }

    /// `ptep_test_and_clear_young()` (arch/x86/mm/pgtable.c, v6.12; the
    /// rmap calls it through `ptep_clear_flush_young_notify`): clears the
    /// accessed bit of the present PTE of page `index` of `vma` and returns
    /// whether it was set. With the free function of the same name, which
    /// the reclaim walk calls on the PTE it holds, the one place accessed bits
    /// are cleared.
    #[inline]
    pub(crate) fn ptep_test_and_clear_young(&mut self, vma: VmaId, index: u32) -> bool {
        ptep_test_and_clear_young(&mut self.vmas[vma as usize].ptes[index as usize])
    }

    /// `folio_referenced()` with `folio_referenced_one()` (mm/rmap.c,
    /// v6.12): walks the reverse map of folio `f`; charges one rmap step per
    /// VMA examined.
    ///
    /// Nothing to do for an unmapped folio. In each VMA the walk visits
    /// (not `invalid_folio_referenced_vma()`: VMAs without recency,
    /// `vma_has_recency()` v6.3+, `MADV_RANDOM`/`MADV_SEQUENTIAL`, are
    /// skipped, their young bits neither read nor cleared), the PTE mapping
    /// the folio (`page_vma_mapped_walk`) is found:
    ///
    /// * in a VM_LOCKED VMA the walk stops and reports VM_LOCKED (the
    ///   kernel also mlocks the folio: not modelled, nothing is mlocked);
    /// * else a young PTE is cleared and counts — under MGLRU
    ///   (`lru_gen_enabled()`) through `lru_gen_look_around`, which also
    ///   scans the neighbouring PTEs;
    ///
    /// then a reference clears PG_idle, and PG_young (set by the idle-page
    /// tracker when it cleared a young PTE) is consumed and counts too. A
    /// VMA with a reference counts once and contributes its VM_EXEC. The
    /// walk ends once `folio_mapcount()` PTEs were found.
    ///
    /// Kept from before this module, so that results stay as they were:
    /// under MGLRU, VMAs without recency are not skipped (v6.12 skips them
    /// there too) and untouched page tables are not grown.
    #[inline(always)]
    pub(crate) fn folio_referenced(&mut self, f: FolioId, sc: &mut ScanControl) -> Referenced {
        let r = self.folio_referenced_walk(f, sc);
        if self.xp.is_some() {
            self.xp_referenced(f, sc, &r);
        }
        r
    }

    /// The walk of [`Sim::folio_referenced`].
    #[inline(always)]
    fn folio_referenced_walk(&mut self, f: FolioId, sc: &mut ScanControl) -> Referenced {
        let mut found = Referenced::default();
        let mapcount = self.folios[f].mapcount;
        if mapcount == 0 {
            return found;
        }
        let mut to_find = mapcount_to_find(mapcount);
        let lru_gen = matches!(self.policy, Policy::Mglru(_));
        let fo = &self.folios[f];
        if !fo.is_file() {
            // rmap_walk_anon: the one VMA, without the cursor's loop.
            let (vma, index) = (fo.space, fo.index);
            if self.fork.is_some() && self.anon_forked(vma) {
                self.folio_referenced_forked(f, lru_gen, sc, &mut found, to_find);
                return found;
            }
            if fo.order() > 0 {
                self.folio_referenced_large(f, vma, index, lru_gen, sc, &mut found);
                return found;
            }
            self.folio_referenced_one(f, vma, index, lru_gen, sc, &mut found, &mut to_find);
            return found;
        }
        if fo.order() > 0 {
            self.folio_referenced_file_large(f, lru_gen, sc, &mut found, to_find);
            return found;
        }
        let mut walk = self.rmap_walk_start(f);
        while let Some((vma, index)) = self.rmap_walk_next(&mut walk) {
            if !self.folio_referenced_one(f, vma, index, lru_gen, sc, &mut found, &mut to_find) {
                break;
            }
        }
        found
    }

    /// `rmap_walk_anon` of [`Sim::folio_referenced`] over an anon_vma tree
    /// with forked VMAs (`crate::fork`): every VMA of the tree, the large
    /// folio's PTEs in each, until `to_find` PTEs were found.
    #[inline(never)]
    fn folio_referenced_forked(
        &mut self,
        f: FolioId,
        lru_gen: bool,
        sc: &mut ScanControl,
        found: &mut Referenced,
        mut to_find: u32,
    ) {
        let large = self.folios[f].order() > 0;
        let mut walk = self.rmap_walk_start(f);
        while let Some((vma, index)) = self.rmap_walk_next(&mut walk) {
            if large {
                self.folio_referenced_large(f, vma, index, lru_gen, sc, found);
                if found.locked {
                    return;
                }
            } else if !self.folio_referenced_one(f, vma, index, lru_gen, sc, found, &mut to_find) {
                return;
            }
        }
    }

    /// `folio_referenced_one()` (mm/rmap.c, v6.12) for page `index` of
    /// `vma`: see [`Sim::folio_referenced`]. Returns whether the walk goes
    /// on. Inlined into the walk: it runs for every folio reclaim scans.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn folio_referenced_one(
        &mut self,
        f: FolioId,
        vma: VmaId,
        index: u32,
        lru_gen: bool,
        sc: &mut ScanControl,
        found: &mut Referenced,
        to_find: &mut u32,
    ) -> bool {
        let rmap_ns = self.cost.rmap_ns;
        let (referenced, exec) = if lru_gen {
            sc.charge_rmap(rmap_ns);
            let v = &self.vmas[vma as usize];
            let (locked, exec) = (v.locked, v.exec);
            match self.page_vma_mapped_walk(f, vma, index) {
                None => (false, exec),
                Some(pte) => {
                    if locked {
                        found.locked = true;
                        return false;
                    }
                    *to_find -= 1;
                    (self.lru_gen_look_around(f, vma, index, pte, sc), exec)
                }
            }
        } else {
            let v = &mut self.vmas[vma as usize];
            // invalid_folio_referenced_vma()
            if !v.has_recency() {
                return true;
            }
            sc.charge_rmap(rmap_ns);
            // page_vma_mapped_walk() on the PTE the classic walk examines
            // through `Vma::pte_mut` (see the module overview).
            let (locked, exec) = (v.locked, v.exec);
            let pte = v.pte_mut(index);
            if *pte & PTE_PRESENT == 0 || *pte & PTE_FOLIO_MASK != f {
                (false, exec)
            } else {
                if locked {
                    found.locked = true;
                    return false;
                }
                *to_find -= 1;
                (ptep_test_and_clear_young(pte), exec)
            }
        };
        self.count_referenced_vma(f, referenced, exec, found);
        *to_find > 0
    }

    /// `folio_referenced_one()` for a large anonymous folio in its VMA
    /// (mm/rmap.c, v6.12): `page_vma_mapped_walk` visits each of the
    /// folio's PTEs (one rmap step for the VMA, a PTE-walk step per PTE);
    /// every young one is cleared — under MGLRU through
    /// `lru_gen_look_around` per PTE — and the VMA counts once if any was.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn folio_referenced_large(
        &mut self,
        f: FolioId,
        vma: VmaId,
        index: u32,
        lru_gen: bool,
        sc: &mut ScanControl,
        found: &mut Referenced,
    ) {
        let n = 1u32 << self.folios[f].order();
        let v = &self.vmas[vma as usize];
        if !lru_gen && !v.has_recency() {
            return;
        }
        let (locked, exec) = (v.locked, v.exec);
        sc.charge_rmap(self.cost.rmap_ns);
        let mut referenced = false;
        for i in index..index + n {
            let Some(pte) = self.page_vma_mapped_walk(f, vma, i) else {
                continue;
            };
            if locked {
                found.locked = true;
                return;
            }
            referenced |= if lru_gen {
                self.lru_gen_look_around(f, vma, i, pte, sc)
            } else {
                sc.charge_pt_walk(1, self.cost.pte_walk_ns);
                self.ptep_test_and_clear_young(vma, i)
            };
        }
        self.count_referenced_vma(f, referenced, exec, found);
    }

    /// The pages of large file folio `f` that VMA `vid` maps, as indexes in
    /// that VMA: the folio's range cut to the VMA's window of the file.
    #[inline]
    pub(crate) fn file_large_range(&self, f: FolioId, vid: VmaId) -> Option<(u32, u32)> {
        let fo = &self.folios[f];
        let v = &self.vmas[vid as usize];
        let VmaKind::File { pgoff, .. } = v.kind else {
            return None;
        };
        let lo = fo.index.max(pgoff);
        let hi = (u64::from(fo.index) + fo.nr_pages()).min(u64::from(pgoff) + u64::from(v.len));
        (u64::from(lo) < hi).then(|| (lo - pgoff, (hi - u64::from(pgoff)) as u32))
    }

    /// `folio_referenced()` of a large page-cache folio (mm/rmap.c, v6.12):
    /// `rmap_walk_file` visits each VMA of the file that overlaps the
    /// folio's range (one rmap step each), `folio_referenced_one`'s
    /// `page_vma_mapped_walk` each PTE there that maps the folio (a
    /// PTE-walk step each); young ones are cleared (under MGLRU through
    /// `lru_gen_look_around`), and a VMA counts once if any was. VMAs
    /// without recency are skipped (classic), a VM_LOCKED VMA ends the
    /// walk, and so does finding `to_find` PTEs (the folio's mapcount).
    #[inline(never)]
    fn folio_referenced_file_large(
        &mut self,
        f: FolioId,
        lru_gen: bool,
        sc: &mut ScanControl,
        found: &mut Referenced,
        mut to_find: u32,
    ) {
        let file = self.folios[f].space as usize;
        for m in 0..self.files[file].mappings.len() {
            let vid = self.files[file].mappings[m];
            let Some((lo, hi)) = self.file_large_range(f, vid) else {
                continue;
            };
            let v = &self.vmas[vid as usize];
            if !lru_gen && !v.has_recency() {
                continue;
            }
            let (locked, exec) = (v.locked, v.exec);
            sc.charge_rmap(self.cost.rmap_ns);
            let mut referenced = false;
            for i in lo..hi {
                let Some(pte) = self.page_vma_mapped_walk(f, vid, i) else {
                    continue;
                };
                if locked {
                    found.locked = true;
                    return;
                }
                to_find = to_find.saturating_sub(1);
                referenced |= if lru_gen {
                    self.lru_gen_look_around(f, vid, i, pte, sc)
                } else {
                    sc.charge_pt_walk(1, self.cost.pte_walk_ns);
                    self.ptep_test_and_clear_young(vid, i)
                };
            }
            self.count_referenced_vma(f, referenced, exec, found);
            if to_find == 0 {
                return;
            }
        }
    }

    /// `try_to_unmap()` of a large page-cache folio (mm/rmap.c, v6.12):
    /// in each VMA of the file overlapping its range (one rmap step each),
    /// every PTE mapping it is cleared, a dirty one dirtying the folio; a
    /// VM_LOCKED VMA stops the walk with the folio still mapped there. A
    /// PMD mapping of it (`crate::filemap_pmd`) in a VMA not VM_LOCKED
    /// (`try_to_unmap_one` tests VM_LOCKED first) is split first
    /// (`TTU_SPLIT_HUGE_PMD` → `split_huge_pmd_locked` →
    /// `__split_huge_pmd_locked`, v6.12, [`Sim::split_file_pmd`]: for a
    /// file VMA it zaps the PMD — `thp_split_pmd`, a flush of its range at
    /// once by the reclaiming CPU, `pmdp_huge_clear_flush`, kswapd's a
    /// remote one; PG_referenced from its young bit, the folio dirtied from
    /// its dirty bit), then `page_vma_mapped_walk_restart` finds no PTE
    /// there, and PTEs elsewhere are cleared as below. Whether any PTE was
    /// cleared goes to [`ScanControl::unmapped_ptes`]: a walk that only
    /// split PMDs queues no batched flush (`set_tlb_ubc_flush_pending` is
    /// per PTE). A walk stopped by a VM_LOCKED VMA leaves the count as
    /// what is still mapped, counted again from the page tables
    /// ([`Sim::file_folio_remap_count`]): a saturated 255 may stand for
    /// more than it, so taking the cleared PTEs off it could reach 0 with
    /// the folio still mapped.
    #[inline(never)]
    fn try_to_unmap_file_large(&mut self, f: FolioId, sc: &mut ScanControl) -> bool {
        let file = self.folios[f].space as usize;
        let (mut dirty, mut unmapped, mut aborted) = (false, 0u32, false);
        // A kernel thread's split (kswapd; kdamond's DAMOS pageout, which
        // reclaims as `Direct`) flushes the task's CPUs from another CPU.
        let remote = sc.who == crate::reclaim::Reclaimer::Kswapd || self.current_is_kthread();
        'walk: for m in 0..self.files[file].mappings.len() {
            let vid = self.files[file].mappings[m];
            let Some((lo, hi)) = self.file_large_range(f, vid) else {
                continue;
            };
            sc.charge_rmap(self.cost.rmap_ns);
            if !self.vmas[vid as usize].locked {
                if let Some(base) = self.file_pmd_mapped(vid, f) {
                    self.split_file_pmd(vid, base, f, remote);
                }
            }
            let v = &mut self.vmas[vid as usize];
            for i in lo..hi {
                let pte = v.pte_mut(i);
                if *pte & PTE_PRESENT == 0 || *pte & PTE_FOLIO_MASK != f {
                    continue;
                }
                if v.locked {
                    aborted = true;
                    break 'walk;
                }
                let pte = v.pte_mut(i);
                dirty |= *pte & PTE_DIRTY != 0;
                *pte = 0;
                unmapped += 1;
            }
        }
        sc.unmapped_ptes = unmapped > 0;
        if aborted {
            // Counted again: a saturated count cannot be decremented, and
            // a split PMD's recount already left out PTEs cleared before
            // it in this walk (cold: VM_LOCKED).
            self.file_folio_remap_count(f);
        } else {
            self.folios[f].mapcount = 0;
        }
        if dirty {
            self.folio_mark_dirty_mapped(f);
        }
        !aborted
    }

    /// The end of `folio_referenced_one()` (mm/rmap.c, v6.12) for one VMA:
    /// a young PTE clears PG_idle, PG_young (set by the idle tracker or
    /// DAMON's mkold) counts as a reference and is cleared, and a referenced
    /// VMA counts once.
    fn count_referenced_vma(
        &mut self,
        f: FolioId,
        mut referenced: bool,
        exec: bool,
        found: &mut Referenced,
    ) {
        let fo = &mut self.folios[f];
        if referenced {
            fo.clear(flags::IDLE);
        }
        referenced |= fo.test_and_clear(flags::YOUNG);
        if referenced {
            found.vmas += 1;
            found.exec |= exec;
        }
    }

    /// `try_to_unmap()` with `try_to_unmap_one()` (mm/rmap.c, v6.12):
    /// removes every PTE mapping folio `f`, walking the reverse map until
    /// the folio is unmapped (charging one rmap step per VMA examined). An
    /// anonymous folio's PTE becomes its swap entry (the folio is in the
    /// swap cache by now), a file folio's PTE is cleared; a dirty PTE
    /// dirties the folio. A VM_LOCKED VMA stops the walk. Returns whether
    /// the folio is unmapped now (the kernel's returns nothing, and
    /// `shrink_folio_list` activates a folio still `folio_mapped()`).
    ///
    /// Inline up to `shrink_folio_list`'s own `folio_mapped()` test, which
    /// an unmapped page-cache folio (every buffered read's) fails: the walk
    /// is out of line.
    #[inline(always)]
    pub(crate) fn try_to_unmap(&mut self, f: FolioId, sc: &mut ScanControl) -> bool {
        if self.folios[f].mapcount == 0 {
            return true;
        }
        self.try_to_unmap_mapped(f, sc)
    }

    /// [`Sim::try_to_unmap`] of a mapped folio.
    fn try_to_unmap_mapped(&mut self, f: FolioId, sc: &mut ScanControl) -> bool {
        let fo = self.folios[f];
        if fo.order() > 0 {
            if fo.is_file() {
                return self.try_to_unmap_file_large(f, sc);
            }
            return self.try_to_unmap_large(f, sc);
        }
        if !fo.is_file() {
            return self.try_to_unmap_anon(f, sc);
        }
        let mut to_unmap = mapcount_to_find(fo.mapcount);
        let (mut dirty, mut unmapped, mut aborted) = (false, 0u8, false);
        let mut walk = self.rmap_walk_start(f);
        while let Some((vma, index)) = self.rmap_walk_next(&mut walk) {
            sc.charge_rmap(self.cost.rmap_ns);
            // page_vma_mapped_walk() on the PTE, taken through `Vma::pte_mut`
            // as the walk always did (see the module overview).
            let v = &mut self.vmas[vma as usize];
            let locked = v.locked;
            let pte = v.pte_mut(index);
            if *pte & PTE_PRESENT == 0 || *pte & PTE_FOLIO_MASK != f {
                continue;
            }
            if locked {
                aborted = true;
                break;
            }
            dirty |= *pte & PTE_DIRTY != 0;
            // An anonymous folio is in the swap cache by now (`swap` is its
            // slot + 1); computed here, not before the walk, because a walk
            // stopped by VM_LOCKED unmaps nothing and may run without one.
            *pte = if fo.is_file() {
                0
            } else {
                pte_swap(fo.swap - 1)
            };
            unmapped = unmapped.saturating_add(1);
            to_unmap -= 1;
            // rwc.done = folio_not_mapped()
            if to_unmap == 0 {
                break;
            }
        }
        let fo_mut = &mut self.folios[f];
        if !aborted {
            fo_mut.mapcount = 0;
        } else if fo_mut.mapcount == u8::MAX {
            // Saturated: 255 may stand for more, so what is still mapped
            // is counted again (`Sim::file_folio_remap_count`), not taken
            // down by the PTEs cleared (which could reach 0 still mapped).
            self.file_folio_remap_count(f);
        } else {
            fo_mut.mapcount = fo_mut.mapcount.saturating_sub(unmapped);
        }
        if dirty {
            self.folio_mark_dirty_mapped(f);
        }
        !aborted
    }

    /// [`Sim::try_to_unmap`] of a mapped order-0 anonymous folio: the walk
    /// of its one VMA (`anon_vma` of a private mapping that was never
    /// forked; a forked one takes `Sim::try_to_unmap_forked`) written out, one rmap step for its one PTE. A PTE that does
    /// not map the folio leaves it unmapped; a VM_LOCKED VMA keeps it
    /// mapped; otherwise the PTE becomes the folio's swap entry (it is in
    /// the swap cache by now) and a dirty PTE dirties the folio. The same
    /// steps and outcome as the general walk, whose `to_unmap` ends after
    /// the one VMA anyway.
    #[inline(always)]
    pub(crate) fn try_to_unmap_anon(&mut self, f: FolioId, sc: &mut ScanControl) -> bool {
        let fo = self.folios[f];
        if self.fork.is_some() && self.anon_forked(fo.space) {
            return self.try_to_unmap_forked(f, sc);
        }
        sc.charge_rmap(self.cost.rmap_ns);
        let v = &mut self.vmas[fo.space as usize];
        let locked = v.locked;
        let pte = v.pte_mut(fo.index);
        let mut dirty = false;
        if *pte & PTE_PRESENT != 0 && *pte & PTE_FOLIO_MASK == f {
            if locked {
                return false;
            }
            dirty = *pte & PTE_DIRTY != 0;
            *pte = pte_swap(fo.swap - 1);
        }
        let fo_mut = &mut self.folios[f];
        fo_mut.mapcount = 0;
        fo_mut.set_maywrite(false);
        if dirty {
            fo_mut.set(flags::DIRTY);
        }
        true
    }

    /// The step of [`Sim::try_to_unmap_anon`] past its fork test and its
    /// charge: `try_to_unmap_one()` (mm/rmap.c, v6.12) on the one PTE of an
    /// order-0 anonymous folio of a VMA that was never forked. The `lru`
    /// reference policy, which charges no CPU, calls it without building a
    /// `ScanControl`. The same steps as the end of `try_to_unmap_anon`,
    /// written out twice: with that function calling this one, LLVM laid
    /// out `shrink_folio_list` (where it is inlined) differently, +2.6 %
    /// of its instructions under `cost` / anon.
    #[inline(always)]
    pub(crate) fn try_to_unmap_anon_pte(&mut self, f: FolioId) -> bool {
        let fo = self.folios[f];
        let v = &mut self.vmas[fo.space as usize];
        let locked = v.locked;
        let pte = v.pte_mut(fo.index);
        let mut dirty = false;
        if *pte & PTE_PRESENT != 0 && *pte & PTE_FOLIO_MASK == f {
            if locked {
                return false;
            }
            dirty = *pte & PTE_DIRTY != 0;
            *pte = pte_swap(fo.swap - 1);
        }
        let fo_mut = &mut self.folios[f];
        fo_mut.mapcount = 0;
        fo_mut.set_maywrite(false);
        if dirty {
            fo_mut.set(flags::DIRTY);
        }
        true
    }

    /// `try_to_unmap_one()` over the PTEs of a large anonymous folio in
    /// its VMA: each PTE mapping it becomes the swap entry of its page's
    /// slot (the folio has `folio_nr_pages` contiguous slots by now); a
    /// dirty PTE dirties the folio; a VM_LOCKED VMA keeps it mapped.
    #[inline(never)]
    fn try_to_unmap_large(&mut self, f: FolioId, sc: &mut ScanControl) -> bool {
        let fo = self.folios[f];
        if self.fork.is_some() && self.anon_forked(fo.space) {
            return self.try_to_unmap_forked(f, sc);
        }
        let n = 1u32 << fo.order();
        sc.charge_rmap(self.cost.rmap_ns);
        if self.vmas[fo.space as usize].locked {
            return false;
        }
        self.split_anon_pmd_at_unmap(fo.space, f);
        let v = &mut self.vmas[fo.space as usize];
        let mut dirty = false;
        for i in 0..n {
            let pte = v.pte_mut(fo.index + i);
            if *pte & PTE_PRESENT == 0 || *pte & PTE_FOLIO_MASK != f {
                continue;
            }
            dirty |= *pte & PTE_DIRTY != 0;
            *pte = pte_swap(fo.swap - 1 + i);
        }
        self.folios[f].mapcount = 0;
        self.folios[f].set_maywrite(false);
        if dirty {
            self.folios[f].set(flags::DIRTY);
        }
        true
    }

    /// `try_to_unmap_one`'s `TTU_SPLIT_HUGE_PMD` step (mm/rmap.c, v6.12)
    /// for anonymous folio `f` in `vma` (not VM_LOCKED: that test comes
    /// first): a PMD-size folio mapped by a PMD there is split
    /// (`split_huge_pmd_locked` → `__split_huge_pmd_locked`, one
    /// `thp_split_pmd`), then its PTEs are unmapped as any others; the
    /// flag is cleared after the split (`flags &= ~TTU_SPLIT_HUGE_PMD`), so
    /// one count per VMA mapping the folio by a PMD, not per PTE or per
    /// rmap step. `shrink_folio_list` (mm/vmscan.c) sets the flag for every
    /// `folio_test_pmd_mappable` folio. mmsim keeps no PMD bit for an
    /// anonymous THP: as `crate::tlb` and `crate::madvise` do, the folio
    /// is taken as PMD-mapped in `vma` when its 512 pages there, at its
    /// aligned place, are all mapped by PTEs of it (known overcount, as
    /// theirs: a PMD-size folio mapped back by 512 PTEs from the swap
    /// cache). The split's flush is not modelled here (`try_to_unmap`'s
    /// batched flush covers the range).
    pub(crate) fn split_anon_pmd_at_unmap(&mut self, vma: VmaId, f: FolioId) {
        let fo = self.folios[f];
        if fo.order() != crate::huge_memory::PMD_ORDER || !fo.index.is_multiple_of(512) {
            return;
        }
        let v = &self.vmas[vma as usize];
        let maps = |i: u32| {
            let p = v.pte(i);
            p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f
        };
        if fo.index + 512 <= v.len && (fo.index..fo.index + 512).all(maps) {
            self.count_vm_events(crate::stats::item::THP_SPLIT_PMD, 1);
        }
    }

    /// `unmap_folio()`'s PMD splits (mm/huge_memory.c, v6.12) for anonymous
    /// PMD-size folio `f` that `split_huge_page_to_list_to_order` is
    /// splitting (the deferred split shrinker, reclaim's swap-out fallback
    /// and its split of a partially mapped folio): `unmap_folio` passes
    /// `TTU_SPLIT_HUGE_PMD` for a `folio_test_pmd_mappable` folio, and
    /// `try_to_migrate_one` (mm/rmap.c) starts in every VMA of the rmap
    /// walk with `split_huge_pmd_address(vma, address, true, folio)` →
    /// `__split_huge_pmd`, which splits only a PMD that still maps the
    /// folio, → `__split_huge_pmd_locked`, `count_vm_event(THP_SPLIT_PMD)`.
    /// No VM_LOCKED test precedes it. So one `thp_split_pmd` per VMA whose
    /// PMD maps the folio ([`Sim::split_anon_pmd_at_unmap`]'s test, with its
    /// known overcount); none for a VMA where a partial zap split it already
    /// (`crate::madvise` counted that split).
    pub(crate) fn split_unmap_folio_pmds(&mut self, f: FolioId) {
        let mut walk = self.rmap_walk_start(f);
        while let Some((vma, _)) = self.rmap_walk_next(&mut walk) {
            self.split_anon_pmd_at_unmap(vma, f);
        }
    }

    /// `folio_mkclean()` with `page_mkclean_one()` → `page_vma_mkclean_one()`
    /// (mm/rmap.c, v6.12) of page-cache folio `f`, run by task `by` (its
    /// own `fsync` or `sync_file_range`, `crate::filemap_sync`) or, with
    /// `None`, by a kworker (the flusher, background writeback): every
    /// mapping of it in a shared VMA of its file is cleaned and
    /// write-protected; returns how many were dirty or writable (`ret` of
    /// `page_vma_mkclean_one`: a PMD counts once). Private VMAs are
    /// skipped (`invalid_mkclean_vma`: not VM_SHARED; they map page-cache
    /// folios read-only). mmsim's PTE has one bit for dirty and writable: in
    /// a shared file mapping the two go together (a read fault maps the page
    /// read-only under write-notify, a write fault writable and dirty,
    /// `set_pte_range` → `maybe_mkwrite(pte_mkdirty())`, and only this walk
    /// cleans), so clearing `PTE_DIRTY` is the write-protection.
    ///
    /// * A PTE (`ptep_clear_flush`, `pte_wrprotect`, `pte_mkclean`; the
    ///   accessed bit stays) is flushed from the TLB, one page
    ///   (`crate::tlb`); the next store takes `do_wp_page`.
    /// * A PMD (`crate::filemap_pmd`, [`Sim::file_pmd_mapped`]: its 512
    ///   PTEs) is cleaned once: `pmdp_invalidate`, `pmd_wrprotect`,
    ///   `pmd_mkclean`, all 512 PTEs together, one
    ///   [`Sim::flush_pmd_tlb_range`] (a full flush on x86); the next store
    ///   takes `wp_huge_pmd` ([`Sim::wp_huge_pmd_file`]).
    ///
    /// The flush is local when `by` owns the VMA (the kernel flushes from
    /// the caller's CPU, where its own mm is loaded; mmsim runs a task on
    /// one CPU, so no other CPU of its `mm_cpumask` is sent one), remote
    /// otherwise (another task's mapping of the file, or a kworker's
    /// flush). Charges no CPU (the flusher is its own thread; the fsync's
    /// walk is in its system call). Nothing for an unmapped folio.
    pub(crate) fn folio_mkclean(&mut self, f: FolioId, by: Option<TaskId>) -> u32 {
        let fo = &self.folios[f];
        if fo.mapcount == 0 || !fo.is_file() {
            return 0;
        }
        let file = fo.space as usize;
        let mut cleaned = 0;
        for m in 0..self.files[file].mappings.len() {
            let vid = self.files[file].mappings[m];
            if !matches!(
                self.vmas[vid as usize].kind,
                VmaKind::File { private: false, .. }
            ) {
                continue;
            }
            let Some((lo, hi)) = self.file_large_range(f, vid) else {
                continue;
            };
            let remote = by != Some(self.vmas[vid as usize].task);
            if let Some(base) = self.file_pmd_mapped(vid, f) {
                let ptes = &mut self.vmas[vid as usize].ptes[base as usize..base as usize + 512];
                if ptes.iter().all(|&p| p & PTE_DIRTY == 0) {
                    continue;
                }
                for p in ptes {
                    *p &= !PTE_DIRTY;
                }
                self.flush_pmd_tlb_range(vid, base, remote);
                cleaned += 1;
                continue;
            }
            for i in lo..hi {
                let Some(pte) = self.page_vma_mapped_walk(f, vid, i) else {
                    continue;
                };
                if pte & PTE_DIRTY == 0 {
                    continue;
                }
                self.vmas[vid as usize].ptes[i as usize] = pte & !PTE_DIRTY;
                self.flush_tlb_range(vid, i, i + 1, remote);
                cleaned += 1;
            }
        }
        cleaned
    }

    /// `page_idle_clear_pte_refs()` with `page_idle_clear_pte_refs_one()`
    /// (mm/page_idle.c, v6.12): clears the young bit of every PTE mapping
    /// folio `f`; if one was young, the folio loses PG_idle and gains
    /// PG_young, so reclaim's `folio_referenced` still sees that access.
    /// The idle tracker's walk skips no VMA and charges no reclaim time.
    #[allow(dead_code)] // DAMON's entry; only the rule tests call it so far.
    pub(crate) fn page_idle_clear_pte_refs(&mut self, f: FolioId) {
        if self.folios[f].mapcount == 0 {
            return;
        }
        let mut referenced = false;
        self.rmap_walk(f, |sim, vma, index| {
            if let Some(pte) = sim.page_vma_mapped_walk(f, vma, index) {
                referenced |= pte_present_young(pte) && sim.ptep_test_and_clear_young(vma, index);
            }
            true
        });
        if referenced {
            let fo = &mut self.folios[f];
            fo.clear(flags::IDLE);
            fo.set(flags::YOUNG);
        }
    }

    /// Marks folio `f` idle the way a write to
    /// /sys/kernel/mm/page_idle/bitmap does (`page_idle_bitmap_write`,
    /// mm/page_idle.c, v6.12): `page_idle_clear_pte_refs`, then
    /// `folio_set_idle`. DAMON's `damon_folio_mkold` (mm/damon/ops-common.c)
    /// has the same effect on the bits. The entry for DAMON.
    #[allow(dead_code)] // DAMON's entry; only the rule tests call it so far.
    pub(crate) fn folio_mkold_for_idle(&mut self, f: FolioId) {
        self.page_idle_clear_pte_refs(f);
        self.folios[f].set(flags::IDLE);
    }

    /// Whether folio `f` stayed idle since `Sim::folio_mkold_for_idle`
    /// (`page_idle_bitmap_read`, mm/page_idle.c, v6.12): clears the young
    /// PTEs first (turning them into PG_young), then tests PG_idle.
    #[allow(dead_code)] // DAMON's entry; only the rule tests call it so far.
    pub(crate) fn folio_test_idle(&mut self, f: FolioId) -> bool {
        self.page_idle_clear_pte_refs(f);
        self.folios[f].test(flags::IDLE)
    }
}
