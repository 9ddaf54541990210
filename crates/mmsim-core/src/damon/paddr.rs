//! mm/damon/paddr.c (Linux v6.12, checked against a post-6.15 paddr.c,
//! commit 00c010e1): the physical address space.
//!
//! A region is a range of physical addresses (`pfn × 4096`) of the zone;
//! `page_alloc`'s `pfn_folio` (`mem_map`) finds the folio of a sampled
//! address. Sampling makes every PTE mapping that folio old through the
//! reverse map and checks it the same way; the actions walk the region a
//! folio at a time, pass each through the ops filters, and then
//! `reclaim_pages` (pageout), `folio_mark_accessed` (lru_prio) or
//! `folio_deactivate` (lru_deprio) it, or only count it (stat).
//!
//! Not modelled: `s->last_applied` (a folio spanning two regions handled
//! once): every folio is order 0 here, so no folio spans two regions.

use super::core::damon_update_region_access_rate;
use super::sysfs::{DamosAction, FilterType};
use super::{Damon, Region, Scheme, NO_FOLIO_NS, REGION_NS};
use crate::mem::folio::{flags, FolioId};
use crate::Sim;

impl Sim {
    /// `damon_pa_prepare_access_checks()`: a random address in each region,
    /// whose folio (if on an LRU) is made old (`damon_pa_mkold`). Returns
    /// the CPU ns.
    pub(crate) fn damon_pa_prepare_access_checks(&mut self, d: &mut Damon, c: usize) -> u64 {
        self.ensure_mem_map();
        let mut ns = 0;
        let rmap_ns = self.cost.rmap_ns;
        let ctx = &mut d.ctxs[c];
        for t in &mut ctx.targets {
            for r in &mut t.regions {
                r.sampling_addr = d.rng.range(r.start, r.end);
                ns += REGION_NS;
                if let Some(f) = self.damon_get_folio(r.sampling_addr / crate::PAGE_SIZE) {
                    ns += self.damon_folio_mkold(f) * rmap_ns;
                } else {
                    ns += NO_FOLIO_NS;
                }
            }
        }
        ns
    }

    /// `damon_pa_check_accesses()` with `__damon_pa_check_access()`: each
    /// region's sampled folio checked (`damon_pa_young`) — or the last
    /// result reused when the address falls in the folio checked last — and
    /// the region's rate updated. Sets the context's `max_nr_accesses`.
    /// Returns the CPU ns.
    pub(crate) fn damon_pa_check_accesses(&mut self, d: &mut Damon, c: usize) -> u64 {
        self.ensure_mem_map();
        let mut ns = 0;
        let rmap_ns = self.cost.rmap_ns;
        let ctx = &mut d.ctxs[c];
        let max_nr = ctx.attrs.max_nr_accesses();
        let cache = &mut d.pa_cache;
        let mut max_seen = 0;
        for t in &mut ctx.targets {
            for r in &mut t.regions {
                ns += REGION_NS;
                let sz = cache.folio_sz;
                if cache.addr / sz * sz == r.sampling_addr / sz * sz {
                    damon_update_region_access_rate(r, cache.accessed, max_nr);
                } else {
                    // damon_pa_young(): no folio, not accessed (and the size stays).
                    cache.accessed = match self.damon_get_folio(r.sampling_addr / crate::PAGE_SIZE)
                    {
                        Some(f) => {
                            let (young, steps) = self.damon_folio_young(f);
                            ns += steps * rmap_ns;
                            cache.folio_sz = self.folios[f].nr_pages() * crate::PAGE_SIZE;
                            young
                        }
                        None => {
                            ns += NO_FOLIO_NS;
                            false
                        }
                    };
                    damon_update_region_access_rate(r, cache.accessed, max_nr);
                    cache.addr = r.sampling_addr;
                }
                max_seen = max_seen.max(r.nr_accesses);
            }
        }
        ctx.max_nr_accesses = max_seen;
        ns
    }

    /// `damos_pa_filter_out()`: allowed by a core filter, the folio passes;
    /// else the first matching ops filter decides (pageout's temporary
    /// "reject young" filter, `young_filter`, comes last); none matching,
    /// the default. Adds rmap steps to `steps`.
    fn damos_pa_filter_out(
        &mut self,
        s: &Scheme,
        f: FolioId,
        young_filter: bool,
        steps: &mut u64,
    ) -> bool {
        if s.core_filters_allowed {
            return false;
        }
        for filter in &s.ops_filters {
            if self.damos_pa_filter_match(filter, f, steps) {
                return !filter.allow;
            }
        }
        if young_filter {
            let young = super::Filter {
                ty: FilterType::Young,
                matching: true,
                allow: false,
                memcg: None,
                addr: (0, 0),
                target_idx: 0,
                sz: (0, 0),
            };
            if self.damos_pa_filter_match(&young, f, steps) {
                return true;
            }
        }
        s.ops_filters_default_reject
    }

    /// `damon_pa_apply_scheme()`: the action on every LRU folio of region
    /// `r` that passes the ops filters. Returns (bytes applied, bytes that
    /// passed the ops filters, CPU ns).
    pub(crate) fn damon_pa_apply_scheme(&mut self, r: &Region, s: &mut Scheme) -> (u64, u64, u64) {
        self.ensure_mem_map();
        let rmap_ns = self.cost.rmap_ns;
        let scan_ns = self.cost.scan_ns;
        let has_ops_filter = !s.ops_filters.is_empty();
        if s.action == DamosAction::Stat && !has_ops_filter {
            // damon_pa_stat() without ops filters returns at once.
            return (0, 0, 0);
        }
        // damon_pa_pageout(): check access at page level again by default.
        let young_filter = s.action == DamosAction::Pageout
            && !s.ops_filters.iter().any(|f| f.ty == FilterType::Young);
        let mut ns = 0;
        let mut steps = 0;
        let mut passed = 0;
        let mut applied = 0;
        let mut list = Vec::new();
        let mut pfn = r.start / crate::PAGE_SIZE;
        let end = r.end / crate::PAGE_SIZE;
        while pfn < end {
            let Some(f) = self.damon_get_folio(pfn) else {
                ns += NO_FOLIO_NS;
                pfn += 1;
                continue;
            };
            ns += scan_ns;
            let nr = self.folios[f].nr_pages();
            pfn += nr;
            if self.damos_pa_filter_out(s, f, young_filter, &mut steps) {
                continue;
            }
            passed += nr * crate::PAGE_SIZE;
            match s.action {
                DamosAction::Pageout => {
                    let fo = &mut self.folios[f];
                    fo.clear(flags::REFERENCED);
                    fo.clear(flags::YOUNG);
                    if !self.folio_isolate_lru(f) {
                        continue;
                    }
                    if self.folios[f].test(flags::UNEVICTABLE) {
                        self.damon_putback_lru(f);
                    } else {
                        list.push(f);
                    }
                }
                DamosAction::LruPrio => {
                    self.folio_mark_accessed(f);
                    if self.xp.is_some() {
                        self.xp_actor(
                            f,
                            "kdamond",
                            "folio_mark_accessed",
                            "DAMOS lru_prio found its region hot: marked accessed as a \
                             reference would"
                                .to_string(),
                        );
                    }
                    applied += nr;
                }
                DamosAction::LruDeprio => {
                    self.folio_deactivate(f);
                    applied += nr;
                }
                _ => {}
            }
        }
        if s.action == DamosAction::Pageout {
            let (reclaimed, cpu) = self.reclaim_pages(&list);
            applied = reclaimed;
            ns += cpu;
        }
        ns += steps * rmap_ns;
        (applied * crate::PAGE_SIZE, passed, ns)
    }
}
