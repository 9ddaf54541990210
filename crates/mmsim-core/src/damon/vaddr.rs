//! mm/damon/vaddr.c (Linux v6.12, checked against a post-6.15 vaddr.c,
//! commit 00c1d298): virtual address spaces.
//!
//! Simulated VMAs have no addresses, so each task gets a fixed layout like a
//! process's (documented, deterministic): an unmodelled one-page program
//! image at [`IMAGE`], its VMAs placed top-down from [`MMAP_BASE`] in the
//! order they were mapped (as `arch_get_unmapped_area_topdown` places
//! anonymous and file mappings, next to each other), and an unmodelled
//! 132 KiB stack at [`STACK`]. The two biggest gaps are then image → mmap
//! area and mmap area → stack, so `__damon_va_three_regions` finds the
//! image, the mapped area and the stack, as on a real process; the image and
//! stack regions hold no simulated pages and never show an access.
//!
//! Sampling walks only the target's own page table (`damon_va_mkold`,
//! `damon_va_young`); the actions are `madvise()` on the region:
//! `MADV_PAGEOUT` and `MADV_COLD` (`madvise_cold_or_pageout_pte_range`:
//! exclusively mapped folios, young bit and PG_referenced/PG_young cleared,
//! then `reclaim_pages` or `folio_deactivate`). As in the kernel the
//! applied size is the whole region when madvise succeeds, and madvise fails
//! (`-ENOMEM`) when part of the range is unmapped, after acting on the
//! mapped part.
//!
//! `willneed`, `hugepage` and `nohugepage` are `madvise()` too
//! (`madvise_willneed`, `hugepage_madvise`; v6.12): `MADV_WILLNEED` on an
//! anonymous mapping reads every swapped-out page of the range into the swap
//! cache without mapping it (`force_swapin_readahead` →
//! `read_swap_cache_async`: `pswpin`, the folio on the LRU, a later fault a
//! swap-cache hit), and on a file mapping is `POSIX_FADV_WILLNEED` over the
//! range's file pages (`force_page_cache_readahead`, at most
//! max(io_pages, ra_pages) pages). `MADV_HUGEPAGE`/`MADV_NOHUGEPAGE` set
//! `VM_HUGEPAGE`/`VM_NOHUGEPAGE` (each clearing the other), which the
//! anonymous fault path reads for its THP orders (`crate::huge_memory`):
//! they override `[machine.thp] vma_advice`, the advice every anonymous
//! mapping starts with, for the mappings the region touches, from the next
//! fault on (folios already mapped stay as they are; khugepaged is not
//! modelled). Deviation: the kernel splits a VMA at the region's bounds
//! (`madvise_update_vma`); simulated mappings cannot be split, so a region
//! covering part of a mapping advises the whole mapping.

use super::core::{damon_set_regions, damon_update_region_access_rate};
use super::sysfs::DamosAction;
use super::{Damon, Region, Scheme, MIN_REGION, REGION_NS};
use crate::mem::folio::flags;
use crate::mem::pagetable::{TaskId, VmaId, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG};
use crate::Sim;

/// The unmodelled program image (text, data, heap) of every task.
pub(crate) const IMAGE: (u64, u64) = (0x0040_0000, 0x0040_1000);
/// Where the top-down mmap area of every task ends.
pub(crate) const MMAP_BASE: u64 = 0x7f00_0000_0000;
/// The unmodelled stack of every task.
pub(crate) const STACK: (u64, u64) = (0x7ffd_0000_0000, 0x7ffd_0002_1000);

/// `__damon_va_three_regions()`: the ranges around the two biggest gaps
/// between consecutive mappings, sorted by address; `None` when there are
/// fewer than two gaps.
pub(crate) fn three_regions(maps: &[(u64, u64, Option<VmaId>)]) -> Option<[(u64, u64); 3]> {
    let mut first_gap = (0u64, 0u64);
    let mut second_gap = (0u64, 0u64);
    let sz = |g: (u64, u64)| g.1 - g.0;
    let (start, _, _) = *maps.first()?;
    for w in maps.windows(2) {
        let (prev_end, vm_start) = (w[0].1, w[1].0);
        let gap = vm_start - prev_end;
        if gap > sz(first_gap) {
            second_gap = first_gap;
            first_gap = (prev_end, vm_start);
        } else if gap > sz(second_gap) {
            second_gap = (prev_end, vm_start);
        }
    }
    if sz(first_gap) == 0 || sz(second_gap) == 0 {
        return None;
    }
    if first_gap.0 > second_gap.0 {
        std::mem::swap(&mut first_gap, &mut second_gap);
    }
    let align = |x: u64| x.div_ceil(MIN_REGION) * MIN_REGION;
    let last_end = maps.last()?.1;
    Some([
        (align(start), align(first_gap.0)),
        (align(first_gap.1), align(second_gap.0)),
        (align(second_gap.1), align(last_end)),
    ])
}

/// `__damon_va_init_regions()`'s split: each of the three ranges evenly
/// into `size / (total / min_nr_regions)` pieces (the last absorbing the
/// rounding), or left whole when that is 0 (`damon_va_evenly_split_region`
/// refusing).
pub(crate) fn init_regions(ranges: &[(u64, u64); 3], min_nr_regions: u64) -> Vec<Region> {
    let total: u64 = ranges.iter().map(|r| r.1 - r.0).sum();
    let sz = total
        .checked_div(min_nr_regions)
        .unwrap_or(total)
        .max(MIN_REGION);
    let mut out = Vec::new();
    for &(s, e) in ranges {
        let nr_pieces = (e - s) / sz;
        let sz_piece = (e - s).checked_div(nr_pieces).unwrap_or(0) / MIN_REGION * MIN_REGION;
        if sz_piece == 0 {
            out.push(Region::new(s, e));
            continue;
        }
        let mut start = s;
        while start + sz_piece <= e {
            out.push(Region::new(start, start + sz_piece));
            start += sz_piece;
        }
        out.last_mut().expect("at least one piece").end = e;
    }
    out
}

impl Sim {
    /// Task `task`'s mappings in address order, `(start, end, vma)` (see
    /// the module overview; `None` for the unmodelled image and stack).
    pub(crate) fn damon_va_maps(&self, task: TaskId) -> Vec<(u64, u64, Option<VmaId>)> {
        let vmas = &self.tasks[task as usize].vmas;
        let mut maps = Vec::with_capacity(vmas.len() + 2);
        maps.push((IMAGE.0, IMAGE.1, None));
        let mut end = MMAP_BASE;
        let at = maps.len();
        for &v in vmas {
            let start = end - self.vmas[v as usize].len as u64 * crate::PAGE_SIZE;
            maps.push((start, end, Some(v)));
            end = start;
        }
        maps[at..].reverse();
        maps.push((STACK.0, STACK.1, None));
        maps
    }

    /// Bytes of `[start, end)` that fall in task `task`'s simulated VMAs (not
    /// the unmodelled image and stack): what of a tried region is the
    /// workload's memory rather than address-space holes.
    pub(crate) fn damon_va_mapped_bytes(&self, task: TaskId, start: u64, end: u64) -> u64 {
        self.damon_va_maps(task)
            .iter()
            .filter(|m| m.2.is_some())
            .map(|&(s, e, _)| e.min(end).saturating_sub(s.max(start)))
            .sum()
    }

    /// The VMA and page index holding `addr` in a task's mappings.
    fn va_lookup(maps: &[(u64, u64, Option<VmaId>)], addr: u64) -> Option<(VmaId, u32)> {
        let i = maps.partition_point(|m| m.0 <= addr).checked_sub(1)?;
        let (s, e, v) = maps[i];
        if addr >= e {
            return None;
        }
        Some((v?, ((addr - s) / crate::PAGE_SIZE) as u32))
    }

    /// Whether a target's task still has an address space (`damon_get_mm`).
    fn va_task_mm(&self, task: Option<TaskId>) -> Option<TaskId> {
        task.filter(|&t| !self.tasks[t as usize].dead)
    }

    /// `damon_va_init()`: every target without regions gets the three
    /// regions of its address space, evenly split.
    pub(crate) fn damon_va_init(&mut self, d: &mut Damon, c: usize) {
        let min_nr = d.ctxs[c].attrs.min_nr_regions;
        for ti in 0..d.ctxs[c].targets.len() {
            if !d.ctxs[c].targets[ti].regions.is_empty() {
                continue;
            }
            let Some(task) = self.va_task_mm(d.ctxs[c].targets[ti].task) else {
                continue;
            };
            let Some(ranges) = three_regions(&self.damon_va_maps(task)) else {
                continue;
            };
            d.ctxs[c].targets[ti].regions = init_regions(&ranges, min_nr);
        }
    }

    /// `damon_va_update()`: every target's regions fitted to its current
    /// three regions (`damon_set_regions`).
    pub(crate) fn damon_va_update(&mut self, d: &mut Damon, c: usize) {
        for ti in 0..d.ctxs[c].targets.len() {
            let Some(task) = self.va_task_mm(d.ctxs[c].targets[ti].task) else {
                continue;
            };
            let Some(ranges) = three_regions(&self.damon_va_maps(task)) else {
                continue;
            };
            damon_set_regions(&mut d.ctxs[c].targets[ti], &ranges);
        }
    }

    /// `damon_va_prepare_access_checks()`: a random address per region,
    /// whose PTE (if present and mapping an LRU folio) is made old with
    /// `damon_ptep_mkold`. Returns the CPU ns (one page-table descent per
    /// region, at the cost model's `rmap_ns`).
    pub(crate) fn damon_va_prepare_access_checks(&mut self, d: &mut Damon, c: usize) -> u64 {
        let mut ns = 0;
        let rmap_ns = self.cost.rmap_ns;
        for ti in 0..d.ctxs[c].targets.len() {
            let Some(task) = self.va_task_mm(d.ctxs[c].targets[ti].task) else {
                continue;
            };
            let layout = self.damon_va_maps(task);
            for r in &mut d.ctxs[c].targets[ti].regions {
                r.sampling_addr = d.rng.range(r.start, r.end);
                ns += REGION_NS + rmap_ns;
                let Some((vma, index)) = Self::va_lookup(&layout, r.sampling_addr) else {
                    continue;
                };
                let pte = self.vmas[vma as usize].pte(index);
                if pte & PTE_PRESENT == 0 {
                    continue;
                }
                let f = pte & PTE_FOLIO_MASK;
                if self.folios[f].test(flags::LRU) {
                    self.damon_ptep_mkold(f, vma, index);
                }
            }
        }
        ns
    }

    /// `damon_va_check_accesses()` with `__damon_va_check_access()`: the
    /// sampled PTE young, or its folio's PG_idle cleared, means accessed;
    /// within a target, an address in the folio checked last reuses that
    /// result. A target without an address space sees no access.
    pub(crate) fn damon_va_check_accesses(&mut self, d: &mut Damon, c: usize) -> u64 {
        let mut ns = 0;
        let rmap_ns = self.cost.rmap_ns;
        let max_nr = d.ctxs[c].attrs.max_nr_accesses();
        let mut max_seen = 0;
        for ti in 0..d.ctxs[c].targets.len() {
            let task = self.va_task_mm(d.ctxs[c].targets[ti].task);
            let layout = task.map(|t| self.damon_va_maps(t)).unwrap_or_default();
            let mut same_target = false;
            for ri in 0..d.ctxs[c].targets[ti].regions.len() {
                let cache = &mut d.va_cache;
                let r = &mut d.ctxs[c].targets[ti].regions[ri];
                ns += REGION_NS;
                if task.is_none() {
                    damon_update_region_access_rate(r, false, max_nr);
                } else if same_target
                    && cache.addr / cache.folio_sz == r.sampling_addr / cache.folio_sz
                {
                    damon_update_region_access_rate(r, cache.accessed, max_nr);
                } else {
                    ns += rmap_ns;
                    let mut young = false;
                    if let Some((vma, index)) = Self::va_lookup(&layout, r.sampling_addr) {
                        let pte = self.vmas[vma as usize].pte(index);
                        let f = pte & PTE_FOLIO_MASK;
                        if pte & PTE_PRESENT != 0 && self.folios[f].test(flags::LRU) {
                            young = pte & PTE_YOUNG != 0 || !self.folios[f].test(flags::IDLE);
                            cache.folio_sz = self.folios[f].nr_pages() * crate::PAGE_SIZE;
                        }
                    }
                    cache.accessed = young;
                    damon_update_region_access_rate(r, young, max_nr);
                    cache.addr = r.sampling_addr;
                }
                max_seen = max_seen.max(r.nr_accesses);
                same_target = true;
            }
        }
        d.ctxs[c].max_nr_accesses = max_seen;
        ns
    }

    /// `damon_va_apply_scheme()` → `damos_madvise()`: `MADV_PAGEOUT` or
    /// `MADV_COLD` over the region. Returns (bytes applied: the region's size
    /// if madvise succeeded, 0 bytes passed (vaddr has no ops filters), CPU ns).
    pub(crate) fn damon_va_apply_scheme(
        &mut self,
        task: Option<TaskId>,
        r: &Region,
        s: &Scheme,
    ) -> (u64, u64, u64) {
        if s.action == DamosAction::Stat {
            return (0, 0, 0);
        }
        let Some(task) = self.va_task_mm(task) else {
            return (0, 0, 0);
        };
        match s.action {
            DamosAction::Willneed => return self.damon_va_willneed(task, r),
            DamosAction::Hugepage | DamosAction::Nohugepage => {
                return self.damon_va_hugepage(task, r, s.action == DamosAction::Hugepage)
            }
            _ => {}
        }
        let pageout = s.action == DamosAction::Pageout;
        let layout = self.damon_va_maps(task);
        let mut covered = 0;
        let mut ns = 0;
        let mut list = Vec::new();
        for &(s0, e0, v) in &layout {
            let (s1, e1) = (s0.max(r.start), e0.min(r.end));
            if s1 >= e1 {
                continue;
            }
            let Some(vma) = v else {
                continue;
            };
            covered += e1 - s1;
            let first = ((s1 - s0) / crate::PAGE_SIZE) as u32;
            let last = ((e1 - s0) / crate::PAGE_SIZE) as u32;
            for index in first..last {
                ns += self.cost.pte_walk_ns;
                let pte = self.vmas[vma as usize].pte(index);
                if pte & PTE_PRESENT == 0 {
                    continue;
                }
                let f = pte & PTE_FOLIO_MASK;
                // folio_likely_mapped_shared(): only exclusive folios.
                if self.folios[f].mapcount != 1 || !self.folios[f].test(flags::LRU) {
                    continue;
                }
                ns += self.cost.scan_ns;
                self.ptep_test_and_clear_young(vma, index);
                let fo = &mut self.folios[f];
                fo.clear(flags::REFERENCED);
                fo.clear(flags::YOUNG);
                if pageout {
                    if self.folio_isolate_lru(f) {
                        list.push(f);
                    }
                } else {
                    self.folio_deactivate(f);
                }
            }
        }
        if pageout {
            let (_, cpu) = self.reclaim_pages(&list);
            ns += cpu;
        }
        let applied = if covered == r.sz() { r.sz() } else { 0 };
        (applied, 0, ns)
    }

    /// `MADV_WILLNEED` over region `r` of `task` (`madvise_willneed`): see
    /// the module overview. Returns as `damon_va_apply_scheme`.
    fn damon_va_willneed(&mut self, task: TaskId, r: &Region) -> (u64, u64, u64) {
        use crate::mem::pagetable::VmaKind;
        let layout = self.damon_va_maps(task);
        let ra_pages = self.cfg.ra_pages();
        let (mut covered, mut ns) = (0, 0);
        for &(s0, e0, v) in &layout {
            let (s1, e1) = (s0.max(r.start), e0.min(r.end));
            let Some(vma) = v.filter(|_| s1 < e1) else {
                continue;
            };
            covered += e1 - s1;
            let first = ((s1 - s0) / crate::PAGE_SIZE) as u32;
            let last = ((e1 - s0) / crate::PAGE_SIZE) as u32;
            match self.vmas[vma as usize].kind {
                VmaKind::File { file, pgoff, .. } => {
                    ns += self.cost.pte_walk_ns * (last - first) as u64;
                    self.force_page_cache_ra(file, pgoff + first, last - first, ra_pages);
                }
                VmaKind::Anon => {
                    for index in first..last {
                        ns += self.cost.pte_walk_ns;
                        if self.read_swap_cache_async(vma, index, 0).is_none() {
                            break;
                        }
                    }
                }
            }
        }
        let applied = if covered == r.sz() { r.sz() } else { 0 };
        (applied, 0, ns)
    }

    /// `MADV_HUGEPAGE` (`on`) or `MADV_NOHUGEPAGE` over region `r` of
    /// `task` (`hugepage_madvise`): the advice of every mapping the region
    /// touches. Returns as `damon_va_apply_scheme`.
    fn damon_va_hugepage(&mut self, task: TaskId, r: &Region, on: bool) -> (u64, u64, u64) {
        use crate::huge_memory::VmaThpAdvice;
        let layout = self.damon_va_maps(task);
        let (mut covered, mut ns) = (0, 0);
        for &(s0, e0, v) in &layout {
            let (s1, e1) = (s0.max(r.start), e0.min(r.end));
            let Some(vma) = v.filter(|_| s1 < e1) else {
                continue;
            };
            covered += e1 - s1;
            ns += self.cost.scan_ns;
            self.vmas[vma as usize].thp_advice = if on {
                VmaThpAdvice::Hugepage
            } else {
                VmaThpAdvice::Nohugepage
            };
        }
        let applied = if covered == r.sz() { r.sz() } else { 0 };
        (applied, 0, ns)
    }
}
