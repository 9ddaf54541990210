//! mm/damon/ops-common.c and the helpers DAMON's operations share with the
//! rest of mm (Linux v6.12): `damon_get_folio`, `damon_ptep_mkold`, the
//! paddr `damon_folio_mkold`/`damon_folio_young` reverse-map walks,
//! `damos_pa_filter_match`, and mm/swap.c's `folio_deactivate`.
//!
//! Every accessed bit DAMON clears goes through `Sim::ptep_test_and_clear_young`
//! (crate::rmap): a young PTE DAMON consumes sets PG_young, so reclaim's
//! `folio_referenced` still counts the access, and PG_idle marks the folio
//! as checked; a later access through a file descriptor
//! (`folio_mark_accessed`) clears PG_idle, which is how an unmapped
//! page-cache folio shows an access.

use super::sysfs::FilterType;
use super::Filter;
use crate::mem::folio::{flags, FolioId, LruList};
use crate::mem::pagetable::VmaId;
use crate::rmap::pte_present_young;
use crate::sim::Policy;
use crate::stats::item::PGDEACTIVATE;
use crate::Sim;

impl Sim {
    /// `damon_get_folio()`: the folio holding `pfn` if it is on an LRU list
    /// (`folio_test_lru`), else `None`.
    #[inline]
    pub(crate) fn damon_get_folio(&self, pfn: u64) -> Option<FolioId> {
        let (first, end) = self.damon_pfn_range();
        if pfn < first || pfn >= end {
            return None;
        }
        let f = self.phys.pfn_folio(pfn as u32);
        (f != crate::mem::folio::NIL && self.folios[f].test(flags::LRU)).then_some(f)
    }

    /// `damon_folio_mkold()` (mm/damon/paddr.c): an unmapped folio only gets
    /// PG_idle; a mapped one has every PTE mapping it made old through the
    /// reverse map (`damon_ptep_mkold`: a young PTE cleared sets PG_young),
    /// then PG_idle. Returns the rmap steps taken (one per VMA visited).
    pub(crate) fn damon_folio_mkold(&mut self, f: FolioId) -> u64 {
        if self.folios[f].mapcount == 0 {
            self.folios[f].set(flags::IDLE);
            return 0;
        }
        let mut steps = 0;
        self.rmap_walk(f, |sim, vma, index| {
            steps += 1;
            if sim.page_vma_mapped_walk(f, vma, index).is_some() {
                sim.damon_ptep_mkold(f, vma, index);
            }
            true
        });
        steps
    }

    /// `damon_ptep_mkold()` (mm/damon/ops-common.c): clears the PTE's
    /// accessed bit; if it was set, `folio_set_young`; then `folio_set_idle`.
    #[inline]
    pub(crate) fn damon_ptep_mkold(&mut self, f: FolioId, vma: VmaId, index: u32) {
        let young = self.ptep_test_and_clear_young(vma, index);
        if young {
            self.folios[f].set(flags::YOUNG);
        }
        self.folios[f].set(flags::IDLE);
        if self.xp.is_some() {
            self.xp_damon_mkold(f, young);
        }
    }

    /// `damon_folio_young()` (mm/damon/paddr.c): an unmapped folio is young
    /// iff PG_idle was cleared; a mapped one iff a PTE mapping it is young
    /// or PG_idle was cleared (the walk stops at the first). Returns
    /// (young, rmap steps).
    pub(crate) fn damon_folio_young(&mut self, f: FolioId) -> (bool, u64) {
        let idle = self.folios[f].test(flags::IDLE);
        if self.folios[f].mapcount == 0 {
            return (!idle, 0);
        }
        let mut steps = 0;
        let mut accessed = false;
        self.rmap_walk(f, |sim, vma, index| {
            steps += 1;
            if let Some(pte) = sim.page_vma_mapped_walk(f, vma, index) {
                accessed = pte_present_young(pte) || !idle;
            }
            !accessed
        });
        (accessed, steps)
    }

    /// `damos_pa_filter_match()`: whether folio `f` has the filter's
    /// property, compared with `matching`. A `young` filter mkolds a young
    /// folio (its side effect in the kernel). Adds rmap steps to `steps`.
    pub(crate) fn damos_pa_filter_match(
        &mut self,
        filter: &Filter,
        f: FolioId,
        steps: &mut u64,
    ) -> bool {
        let fo_memcg = self.folios.memcg(f);
        let fo = self.folios[f];
        let matched = match filter.ty {
            FilterType::Anon => !fo.is_file(),
            FilterType::Active => self.folio_test_active(f),
            FilterType::Memcg => filter.memcg == Some(fo_memcg),
            FilterType::Young => {
                let (young, s) = self.damon_folio_young(f);
                *steps += s;
                if young {
                    *steps += self.damon_folio_mkold(f);
                }
                young
            }
            FilterType::HugepageSize => {
                let sz = fo.nr_pages() * crate::PAGE_SIZE;
                filter.sz.0 <= sz && sz <= filter.sz.1
            }
            FilterType::Unmapped => fo.mapcount == 0,
            FilterType::Addr | FilterType::Target => false,
        };
        matched == filter.matching
    }

    /// `folio_test_active()`: PG_active on the classic lists; under MGLRU a
    /// folio in one of the two youngest generations (`lru_gen_is_active`).
    pub(crate) fn folio_test_active(&self, f: FolioId) -> bool {
        let fo = &self.folios[f];
        match self.policy {
            Policy::Mglru(_) => crate::reclaim::lru_gen::folio_lru_gen(fo).is_some_and(|gen| {
                self.memcgs[self.folios.memcg(f) as usize]
                    .lruvec
                    .lrugen
                    .is_active(gen)
            }),
            _ => fo.test(flags::ACTIVE),
        }
    }

    /// `folio_deactivate()` with `lru_deactivate()` (mm/swap.c, v6.12): an
    /// evictable folio on an LRU that is active (or any, under MGLRU) is
    /// taken off its list, loses PG_active and PG_referenced, and is added
    /// back — at the head of the inactive list (classic), or through
    /// `lru_gen_add_folio` into the generation it picks for a folio that is
    /// not active (MGLRU). Counts PGDEACTIVATE. Returns whether it moved.
    pub(crate) fn folio_deactivate(&mut self, f: FolioId) -> bool {
        let fo_memcg = self.folios.memcg(f);
        let fo = self.folios[f];
        let mglru = matches!(self.policy, Policy::Mglru(_));
        if fo.test(flags::UNEVICTABLE) || !(fo.test(flags::ACTIVE) || mglru) {
            return false;
        }
        if !fo.test(flags::LRU) {
            return false;
        }
        let m = fo_memcg;
        if mglru {
            self.lru_gen_del_folio(f, false);
            self.folios[f].clear(flags::ACTIVE | flags::REFERENCED);
            self.lru_gen_add_folio(f, false);
        } else {
            let from = LruList::of_flags(fo.flags);
            self.memcgs[m as usize].lruvec.lists[from as usize].unlink(&mut self.folios, f);
            let fo = &mut self.folios[f];
            fo.clear(flags::ACTIVE | flags::REFERENCED);
            let to = LruList::of_flags(fo.flags);
            self.memcgs[m as usize].lruvec.lists[to as usize].push_head(
                &mut self.folios,
                f,
                to as u8,
            );
        }
        self.count_events(m, PGDEACTIVATE, 1);
        if self.xp.is_some() {
            let to = if mglru {
                "lru_gen_add_folio: to an old generation"
            } else {
                "to the inactive head"
            };
            self.xp_actor(
                f,
                "kdamond",
                "folio_deactivate",
                format!(
                    "a DAMOS scheme (lru_deprio, or madvise cold) found its region cold: \
                     lru_deactivate {to}, -PG_active -PG_referenced, pgdeactivate counted"
                ),
            );
        }
        true
    }

    /// `folio_isolate_lru()`: takes folio `f` off its LRU list (clearing
    /// PG_lru; under MGLRU through `lru_gen_del_folio`, which marks a
    /// folio of a young generation PG_active). False if it was not on one.
    pub(crate) fn folio_isolate_lru(&mut self, f: FolioId) -> bool {
        if !self.folios[f].test(flags::LRU) {
            return false;
        }
        match self.policy {
            Policy::Mglru(_) => self.lru_gen_del_folio(f, false),
            _ => {
                let m = self.folios.memcg(f) as usize;
                let tag = self.folios.lru(f) as usize;
                self.memcgs[m].lruvec.lists[tag].unlink(&mut self.folios, f);
            }
        }
        self.folios[f].clear(flags::LRU);
        true
    }

    /// `folio_putback_lru()` of a folio DAMON isolated: back on the list its
    /// flags select (`folio_add_lru`; kdamond is never in a fault, so
    /// MGLRU adds it through `lru_gen_add_folio` as is).
    pub(crate) fn damon_putback_lru(&mut self, f: FolioId) {
        match self.policy {
            Policy::Mglru(_) => self.lru_gen_add_folio(f, false),
            _ => {
                let fo_memcg = self.folios.memcg(f);
                let fo = &mut self.folios[f];
                fo.set(flags::LRU);
                let lru = LruList::of_flags(fo.flags);
                let m = fo_memcg as usize;
                self.memcgs[m].lruvec.lists[lru as usize].push_head(&mut self.folios, f, lru as u8);
            }
        }
    }

    /// `reclaim_pages()` with `reclaim_folio_list()` (mm/vmscan.c, v6.12):
    /// reclaims the isolated folios with a scan control that may write,
    /// unmap and swap and ignores their references (6.10+), through the
    /// same `shrink_folio_list` as kswapd and direct reclaim; the folios it
    /// could not free go back to the LRU (`folio_putback_lru`). Each folio
    /// is shrunk with its own group as the scan control's memcg, so events
    /// count against it. Returns (pages reclaimed, reclaim CPU ns).
    pub(crate) fn reclaim_pages(&mut self, list: &[FolioId]) -> (u64, u64) {
        use crate::reclaim::{Reclaimer, ScanControl};
        let rules = self.rules();
        let mut reclaimed = 0;
        // One reclaimer whose clock runs on as it works (its writes queue on
        // the swap device one after the other).
        let mut sc = ScanControl::new(Reclaimer::Direct, list.len() as u64, self.clock);
        sc.ignore_references = true;
        let mut batch = Vec::with_capacity(1);
        for &f in list {
            sc.memcg = self.folios.memcg(f);
            sc.target = sc.memcg;
            batch.clear();
            batch.push(f);
            let (n, _) = self.shrink_folio_list(&mut batch, &mut sc, rules);
            reclaimed += n;
            for &g in &batch {
                self.damon_putback_lru(g);
            }
        }
        (reclaimed, sc.cpu_ns)
    }
}
