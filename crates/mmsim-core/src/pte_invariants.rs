//! Invariants of the page tables, for `Sim::check_invariants`: the zero
//! page's PTEs and the anonymous folios' mapcounts (besides the file PMDs
//! of `crate::filemap_pmd`).
//!
//! * The zero page (`ZERO_PAGE(0)`, [`Sim::zero_folio`]) is a special
//!   mapping (`pte_mkspecial`; `vm_normal_page` returns no page for it):
//!   checked here, it is order 0 with no mapcount, no LRU list and no swap
//!   slot. (It is also charged to no group and counted in no
//!   `mm_counters` — `try_to_map_unused_to_zeropage` and
//!   `do_anonymous_page`'s zero-page path add nothing — but those two are
//!   not checked here.) Its PTEs are read-only (mmsim: clean, so
//!   that a store faults and copies, `wp_page_copy`) and live only in
//!   anonymous VMAs (`do_anonymous_page`, the 6.12 split), never in a file
//!   VMA (`do_read_fault` maps the page-cache folio).
//! * An anonymous folio's `mapcount` is the number of present PTEs that
//!   map it, over every VMA (saturating at 255), as `folio_mapcount` counts
//!   PTE mappings (`folio_add_anon_rmap_ptes`, `folio_remove_rmap_ptes`).

use crate::mem::folio::{NIL, NO_LIST};
use crate::mem::pagetable::{VmaKind, PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT};
use crate::sim::Sim;

impl Sim {
    /// The page-table invariants (see the module overview).
    pub(crate) fn check_ptes(&self) -> Result<(), String> {
        self.check_file_pmds()?;
        self.check_zero_page_ptes()?;
        self.check_anon_mapcounts()
    }

    /// The zero page's state and its PTEs.
    fn check_zero_page_ptes(&self) -> Result<(), String> {
        let z = self.zero_folio;
        if z != NIL {
            let zf_lru = self.folios.lru(z);
            let zf = &self.folios[z];
            if zf.mapcount != 0 || zf_lru != NO_LIST || zf.swap != 0 || zf.order() != 0 {
                return Err(format!(
                    "zero page {z}: mapcount {}, list {}, swap {}, order {}",
                    zf.mapcount,
                    zf_lru,
                    zf.swap,
                    zf.order()
                ));
            }
        }
        for (vid, v) in self.vmas.iter().enumerate() {
            for (i, &p) in v.ptes.iter().enumerate() {
                if p & PTE_PRESENT == 0 || p & PTE_FOLIO_MASK != z || z == NIL {
                    continue;
                }
                if p & PTE_DIRTY != 0 {
                    return Err(format!(
                        "VMA {vid} page {i}: a dirty PTE maps the zero page"
                    ));
                }
                if v.kind != VmaKind::Anon {
                    return Err(format!("file VMA {vid} page {i} maps the zero page"));
                }
            }
        }
        Ok(())
    }

    /// Each anonymous folio's mapcount against its present PTEs.
    fn check_anon_mapcounts(&self) -> Result<(), String> {
        let mut ptes = vec![0u32; self.folios.id_end() as usize];
        for v in &self.vmas {
            for &p in &v.ptes {
                let f = p & PTE_FOLIO_MASK;
                if p & PTE_PRESENT != 0 && f != self.zero_folio {
                    ptes[f as usize] += 1;
                }
            }
        }
        for f in 0..self.folios.id_end() {
            if !self.folios.is_live(f) || f == self.zero_folio || self.folios[f].is_file() {
                continue;
            }
            let fo = &self.folios[f];
            let want = ptes[f as usize].min(255);
            if u32::from(fo.mapcount) != want {
                return Err(format!(
                    "anonymous folio {f} (order {}): mapcount {} but {want} PTEs map it",
                    fo.order(),
                    fo.mapcount
                ));
            }
        }
        Ok(())
    }
}
