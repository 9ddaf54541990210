//! Debugging and checking: the state of one cached page, a summary of the resident
//! folios, and the whole-machine invariants ([`Sim::check_invariants`]), the
//! simulator's counterpart of the kernel's `CONFIG_DEBUG_VM` checks (mm/debug.c,
//! `VM_BUG_ON_FOLIO`).

use super::{Policy, Sim};
use crate::event::FileId;
use crate::mem::folio::{flags, LruList};

impl Sim {
    /// The folio caching page `index` of `file`: its mapcount (`folio_mapcount()`: the
    /// PTEs and PMDs mapping it) and whether it is on an active LRU list
    /// (`PG_active`); `None` if the page is not cached. For tests and tools.
    pub fn file_folio_state(&self, file: FileId, index: u32) -> Option<(u32, bool)> {
        let f = self.files.get(file as usize)?;
        let folio = crate::mem::filemap::slot_folio(*f.slots.get(index as usize)?)?;
        let fo = &self.folios[folio];
        Some((u32::from(fo.mapcount), fo.test(flags::ACTIVE)))
    }

    /// A one-line summary of resident folios by state, for debugging and probes.
    pub fn debug_summary(&self) -> String {
        let mut n = [0u64; 6]; // resident, swapcache, writeback, mapped, referenced, active
        for (_, l) in self.memcgs.iter().flat_map(|m| m.lruvec.all_lists()) {
            let mut c = l.head;
            while c != crate::mem::folio::NIL {
                let f = &self.folios[c];
                n[0] += 1;
                n[1] += f.test(flags::SWAPCACHE) as u64;
                n[2] += f.test(flags::WRITEBACK) as u64;
                n[3] += (f.mapcount > 0) as u64;
                n[4] += f.test(flags::REFERENCED) as u64;
                n[5] += f.test(flags::ACTIVE) as u64;
                c = self.folios.links(c)[1];
            }
        }
        format!(
            "resident {} swapcache {} writeback {} mapped {} referenced {} active {} (writeback queue {})",
            n[0], n[1], n[2], n[3], n[4], n[5], self.writeback[0].len()
        )
    }

    /// Checks the data-structure invariants; returns a description of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.check_swapcache_count()?;
        self.check_swap_slots_held()?;
        self.check_dirty_ranges()?;
        self.check_ptes()?;
        let fds = self.fd_ra_slots();
        self.ra_slots
            .check(self.vmas.iter().map(|v| v.ra_slot).chain(fds))?;
        let mut on_lists = 0u64;
        let mut own = vec![0u64; self.memcgs.len()];
        for (m, memcg) in self.memcgs.iter().enumerate() {
            if let Err(e) = self.check_lru_gen_invariants(m) {
                return Err(format!("memcg {}: {e}", memcg.path));
            }
            for (i, l) in memcg.lruvec.all_lists() {
                let i = i as usize;
                let mglru = crate::reclaim::lru_gen::is_lru_gen_tag(i as u8);
                let mut n = 0u32;
                let mut pages = 0u64;
                let mut c = l.head;
                let mut prev = crate::mem::folio::NIL;
                while c != crate::mem::folio::NIL {
                    let f = &self.folios[c];
                    let (f_lru, f_memcg) = (self.folios.lru(c), self.folios.memcg(c));
                    if f_lru as usize != i {
                        return Err(format!("folio {c} on list {i} tagged {f_lru}"));
                    }
                    if self.folios.links(c)[0] != prev {
                        return Err(format!("folio {c} has a broken prev link"));
                    }
                    if mglru {
                        let want = i as u8 - crate::reclaim::lru_gen::LRU_GEN_TAG;
                        if f.is_file() as u8 != want % 2
                            || f.test(flags::ACTIVE)
                            || crate::reclaim::lru_gen::folio_lru_gen(f).is_none()
                            || f_memcg as usize != m
                        {
                            return Err(format!(
                                "folio {c} on MGLRU list {i} with flags {:#x}, gen_refs {:#x}, group {}",
                                f.flags, f.gen_refs, f_memcg
                            ));
                        }
                    } else if self.policy != Policy::Lru {
                        if LruList::of_flags(f.flags) as usize != i {
                            return Err(format!(
                                "folio {c} on list {i} but flags say {:?}",
                                LruList::of_flags(f.flags)
                            ));
                        }
                        if f_memcg as usize != m {
                            return Err(format!(
                                "folio {c} of group {f_memcg} on the lruvec of group {m}"
                            ));
                        }
                    }
                    own[f_memcg as usize] += f.nr_pages();
                    pages += f.nr_pages();
                    n += 1;
                    prev = c;
                    c = self.folios.links(c)[1];
                }
                if n != l.len || prev != l.tail || pages != l.pages {
                    return Err(format!(
                        "list {i}: counted {n} folios of {pages} pages, header says {} of {}",
                        l.len, l.pages
                    ));
                }
                on_lists += n as u64;
            }
        }
        // Each group's deferred split queue length counts its queued folios.
        if !self.thp.split_queues.is_empty() {
            let mut pm = vec![0u64; self.thp.split_queues.len().max(self.memcgs.len())];
            self.folios.for_each_live_id(|id, fo| {
                if fo.test(flags::DEFERRED_QUEUED) {
                    pm[self.folios.memcg(id) as usize] += 1;
                }
            });
            for (m, q) in self.thp.split_queues.iter().enumerate() {
                if q.len != pm[m] {
                    return Err(format!(
                        "group {m}: deferred split queue length {} but {} queued folios",
                        q.len, pm[m]
                    ));
                }
            }
        }
        // The zero page is on no list and takes no page of the zone.
        let zero = u64::from(self.zero_folio != crate::mem::folio::NIL);
        let live = self.folios.live() as u64 - zero;
        if on_lists != live {
            return Err(format!("{live} live folios but {on_lists} on lists"));
        }
        let used = self.folios.live_pages() - zero
            + self.kmem_pagetable_frames()
            + self.slub_frames()
            + self.cfg.boot_pageblocks.allocated_pages();
        if self.node.free + used != self.node.managed {
            return Err(format!(
                "free {} + used {used} != managed {}",
                self.node.free, self.node.managed
            ));
        }
        self.check_page_alloc()?;
        // The per-CPU stock is charged to its group but holds no folio yet.
        own[self.stock.0 as usize] += self.stock.1;
        // Kernel memory (`crate::kmem`) is charged beside the folios.
        self.kmem_check()?;
        self.slub_check()?;
        for (m, o) in own.iter_mut().enumerate() {
            *o += self.kmem_pages(m as crate::memcg::MemcgId);
        }
        // Hierarchical usage: own pages plus the children's usage.
        for (m, memcg) in self.memcgs.iter().enumerate() {
            let want = own[m]
                + memcg
                    .children
                    .iter()
                    .map(|&c| self.memcgs[c as usize].usage)
                    .sum::<u64>();
            if memcg.usage != want {
                return Err(format!(
                    "memcg {} usage {} != own {} + children's",
                    memcg.path, memcg.usage, own[m]
                ));
            }
            if memcg.usage > memcg.max && !memcg.over_max_after_write {
                return Err(format!(
                    "memcg {} usage {} over max {}",
                    memcg.path, memcg.usage, memcg.max
                ));
            }
        }
        // Swap charges: each used slot charges its owner and the owner's ancestors.
        let mut own_swap = vec![0u64; self.memcgs.len()];
        if let Some(swap) = &self.swap {
            let free = swap.free_slots();
            for (i, &v) in swap.slots.iter().enumerate() {
                if !free[i] && v != 0 {
                    own_swap[swap.owner(i as u32) as usize] += 1;
                }
            }
        }
        for (m, memcg) in self.memcgs.iter().enumerate() {
            let want = own_swap[m]
                + memcg
                    .children
                    .iter()
                    .map(|&c| self.memcgs[c as usize].swap_usage)
                    .sum::<u64>();
            if memcg.swap_usage != want {
                return Err(format!(
                    "memcg {} swap usage {} != own slots {} + children's",
                    memcg.path, memcg.swap_usage, own_swap[m]
                ));
            }
        }
        Ok(())
    }
}
