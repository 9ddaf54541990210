//! Moving one folio to a new one (mm/migrate.c, Linux v6.12): the
//! destination is a new folio, with its own id, at the free block
//! `compaction_alloc` gave, and every reference to the source is rewritten
//! to it before the source's id is freed.
//!
//! What was read: v6.12's `migrate_pages_batch`, `migrate_folio_unmap`,
//! `migrate_folio_move`, `move_to_new_folio`, `migrate_folio` /
//! `__migrate_folio`, `folio_migrate_mapping` / `__folio_migrate_mapping`,
//! `folio_migrate_flags`, `remove_migration_ptes` / `remove_migration_pte`
//! and `migrate_folio_done`; `mem_cgroup_migrate` of mm/memcontrol.c.
//! What moves from the source to the destination ([`Sim::migrate_folio_move`]):
//!
//! * **The page-cache or swap-cache slots** (`__folio_migrate_mapping`:
//!   `xas_store` of the new folio in each of the source's slots): the file's
//!   slots `index .. index + nr`, or the swap slots `swap - 1 ..`, that hold
//!   the source. The xarray's shape does not change (`crate::kmem` counts
//!   nothing: a folio replaces a folio).
//! * **The flags and the LRU state** (`folio_migrate_flags`): the folio's
//!   slot is copied whole (flags, generation bits, mapcount, memcg —
//!   `mem_cgroup_migrate` moves the charge, which changes no count —
//!   order, owner and index), with the new head PFN. The MGLRU tier bits
//!   (`LRU_REFS_MASK`) are not copied under v6.1/v6.12 (v6.12
//!   `folio_migrate_flags` names the flags it copies and they are not
//!   among them; the destination's are clear from the buddy allocator);
//!   they are under v6.14 (`folio_migrate_refs` of later trees; the
//!   release that added it was not checked).
//! * **The LRU position.** Departure, kept from before (mmsim keeps the
//!   isolated folios on their lists while compaction runs): the destination
//!   takes the source's place on its list ([`crate::mem::list::List::replace`]),
//!   the same list or MGLRU generation. v6.12 isolates the source
//!   (`folio_isolate_lru`; under MGLRU `lru_gen_del_folio` marks a folio of
//!   the two youngest generations PG_active, which `folio_migrate_flags`
//!   moves) and adds the destination with `folio_add_lru` in
//!   `migrate_folio_move`: at the head of its list, or of the generation
//!   `lru_gen_add_folio` picks (not `reclaiming`; v6.12 picks it inline,
//!   v6.14 through `lru_gen_folio_seq`). BENCHMARKS.md ("Stage B
//!   blocker 1") says what that would change. The opt-in
//!   `migrate_lru_add` does as v6.12, for the folios isolated but not
//!   migrated too ([`Sim::putback_movable_pages`]).
//! * **The PTEs** (`remove_migration_ptes`, an rmap walk): every present
//!   PTE that maps the source, in its own VMA and the VMAs forked from it
//!   (anonymous) or every VMA of the file's `i_mmap` over its pages, keeps
//!   its young and dirty bits and maps the destination. The source's TLB
//!   entries (`crate::tlb`) go in the migration's batched flush
//!   (`try_to_unmap_flush`), after which the source ids are freed: a
//!   freed id is never in a TLB.
//! * **The queues the folio is on**: the dirty queue (`dirty_fifo`: the
//!   page cache's dirty tag moves with the slot), its entry in place
//!   ([`crate::mem::queue::FolioQueue::replace`]); fork's per-folio
//!   PageAnonExclusive bit (`crate::fork`). The deferred split queue: v6.12
//!   `__folio_migrate_mapping` unqueues the source
//!   (`folio_unqueue_deferred_split`) and `migrate_folio_move` queues the
//!   destination at the tail (`deferred_split_folio(dst,
//!   src_partially_mapped)`, v6.12.107).
//! * **No folio under writeback moves**, so no device writeback queue
//!   entry is rewritten (a debug assertion checks it). v6.12
//!   `isolate_migratepages_block` does not isolate one in any mode but
//!   `MIGRATE_SYNC` (`ISOLATE_ASYNC_MIGRATE`), and `migrate_folio_unmap`
//!   fails one that went under writeback after isolation (`-EBUSY`, counted
//!   in `pgmigrate_fail`) in those modes, and waits for the write
//!   (`folio_wait_writeback`) only in `MIGRATE_SYNC`; `migrate_folio`
//!   asserts the write is done. mmsim compacts in async and sync-light
//!   modes only (v6.12's direct compaction at every priority,
//!   `compact_zone_order`; kcompactd; proactive compaction), and no write
//!   starts between isolation and migration, so neither the `-EBUSY` nor
//!   the wait can happen here (`crate::compaction`'s `folio_isolatable`).
//!
//! Nothing else holds a folio id across a migration: the explainer keys its
//! pages by owner and index, DAMON and the page allocator by PFN (`mem_map`
//! is rewritten with the frames), and only folios smaller than the
//! compaction's target order move (`skip_isolation_on_order`), so an
//! allocation's caller that holds a folio of at least that order keeps it.

use crate::config::MglruVersion;
use crate::mem::filemap::SLOT_FOLIO;
use crate::mem::folio::{flags, FolioId, NO_LIST};
use crate::mem::pagetable::{VmaKind, PTE_FOLIO_MASK, PTE_PRESENT};
use crate::reclaim::lru_gen::{is_lru_gen_tag, set_folio_refs};
use crate::sim::{Policy, Sim};

impl Sim {
    /// `migrate_folio_move` (v6.12) of folio `src` to a new folio at the
    /// free block at `pfn` (see the module overview): returns the new id.
    /// The source's frames are not freed here, nor its id: the caller
    /// frees the frames at once and the id after the TLB flush
    /// ([`Sim::migrate_free_src`]).
    pub(crate) fn migrate_folio_move(&mut self, src: FolioId, pfn: u64) -> FolioId {
        let fo_lru = self.folios.lru(src);
        let fo_memcg = self.folios.memcg(src);
        let fo = self.folios[src];
        let order = fo.order() as usize;
        let dst = self
            .folios
            .alloc_framed(fo.space, fo.index, fo.flags, fo_memcg, pfn as u32);
        {
            let d = &mut self.folios[dst];
            d.swap = fo.swap;
            d.mapcount = fo.mapcount;
            d.set_order(fo.order());
            d.gen_refs = fo.gen_refs;
        }
        if self.lru_gen_version() != MglruVersion::V6_14 {
            // MGLRU v6.1/v6.12: `folio_migrate_flags` leaves the tier bits
            // (LRU_REFS_MASK) behind; the destination's are clear.
            set_folio_refs(&mut self.folios[dst], 0);
        }
        self.phys.set_frames_folio(pfn, order, dst);
        if fo_lru != NO_LIST {
            if self.compact.cfg.migrate_lru_add {
                self.migrate_lru_add(src, dst);
            } else {
                self.migrate_lru_replace(src, dst);
            }
        }
        let n = 1u32 << order;
        let (old, new) = (SLOT_FOLIO | src, SLOT_FOLIO | dst);
        if fo.is_file() {
            let file = &mut self.files[fo.space as usize];
            for i in fo.index..fo.index + n {
                if file.slots.get(i as usize) == Some(&old) {
                    *file.slot_mut(i) = new;
                }
            }
        } else if fo.test(flags::SWAPCACHE) {
            let slots = &mut self.swap.as_mut().expect("swap cache").slots;
            for s in fo.swap - 1..fo.swap - 1 + n {
                if let Some(v) = slots.get_mut(s as usize).filter(|v| **v == old) {
                    *v = new;
                }
            }
        }
        if fo.mapcount > 0 {
            let found = self.remove_migration_ptes(src, dst);
            debug_assert!(
                fo.mapcount == u8::MAX || found == u32::from(fo.mapcount),
                "migration found {found} PTEs of a folio mapped {} times",
                fo.mapcount
            );
        }
        if fo.is_file() && fo.test(flags::DIRTY) {
            self.dirty_fifo.replace(src, dst);
        }
        // v6.12 `migrate_folio`: the write must be complete. Compaction
        // does not isolate a folio under writeback (`folio_isolatable`), so
        // no device writeback queue names `src`.
        debug_assert!(
            !fo.test(flags::WRITEBACK),
            "migrating folio {src}, which is under writeback"
        );
        if fo.test(flags::DEFERRED_QUEUED) {
            // v6.12 `__folio_migrate_mapping` takes the source off the
            // deferred split queue (`folio_unqueue_deferred_split`, which
            // clears PG_partially_mapped); `migrate_folio_move` queues the
            // destination again with the source's partially-mapped state
            // recorded before the move (`deferred_split_folio(dst,
            // src_partially_mapped)`, mm/migrate.c v6.12.107), counting it
            // again when partially mapped, at its queue's tail.
            let partially = fo.test(flags::PARTIALLY_MAPPED);
            self.deferred_split_unqueue(src);
            self.folios[dst].clear(flags::PARTIALLY_MAPPED | flags::DEFERRED_QUEUED);
            if partially {
                self.deferred_split_folio(dst);
            } else if order == crate::huge_memory::PMD_ORDER as usize {
                self.deferred_split_folio_whole(dst);
            }
        }
        if self.thp.content.on && !fo.is_file() {
            // `folio_copy`: the contents move (`crate::split_zeropage`).
            let from = self.folios.head_pfn(src);
            self.thp.content.copy_range(from, pfn as u32, 1 << order);
        }
        if self.fork.is_some() {
            self.fork_migrate_folio(src, dst);
        }
        dst
    }

    /// Frees the id of a migrated folio's source, whose references
    /// [`Sim::migrate_folio_move`] rewrote (`migrate_folio_done`'s put;
    /// its frames are freed already).
    pub(crate) fn migrate_free_src(&mut self, src: FolioId) {
        debug_assert_eq!(self.folios.lru(src), NO_LIST);
        self.folios.free(src);
    }

    /// The destination `dst` takes the place of `src` on its LRU list: the
    /// list its tag names (the `lru` policy's one list, an MGLRU
    /// generation's, or a classic list of its group).
    fn migrate_lru_replace(&mut self, src: FolioId, dst: FolioId) {
        let fo_lru = self.folios.lru(src);
        let fo_memcg = self.folios.memcg(src);
        let (tag, m) = (fo_lru, fo_memcg as usize);
        let lruvec = match self.policy {
            Policy::Lru => &mut self.memcgs[0].lruvec,
            _ => &mut self.memcgs[m].lruvec,
        };
        let list = if is_lru_gen_tag(tag) {
            let i = (tag - crate::reclaim::lru_gen::LRU_GEN_TAG) as usize;
            &mut lruvec.lrugen.lists[i / 2][i % 2]
        } else {
            &mut lruvec.lists[tag as usize]
        };
        list.replace(&mut self.folios, src, dst);
    }

    /// `migrate_lru_add` (v6.12's order, the kernel's placement): the
    /// source leaves its list as `isolate_migratepages_block` takes it
    /// (`folio_isolate_lru`, which under MGLRU sets PG_active on a folio
    /// of the two youngest generations), the destination gets its flags
    /// (`folio_migrate_flags`: PG_active among them) and is added by
    /// `folio_add_lru`: at the head of the list its flags select, or under
    /// MGLRU by `lru_gen_add_folio` (not `reclaiming`; compaction runs
    /// with PF_MEMALLOC, so the fault's PG_active of `folio_add_lru` is not
    /// set). `migrate_pages` moves a batch in the order of the kernel's list
    /// (the last isolated first) and each destination is added at the head
    /// in turn (the per-CPU `lru_add` batch drains in order), so the batch
    /// ends at the head in isolation order, its lowest PFN first. The tier
    /// bits (`LRU_REFS_MASK`): v6.12's `folio_migrate_flags` does not copy
    /// them (the destination's are clear, as every page's from the buddy
    /// allocator), so under MGLRU v6.1/v6.12 they start at 0; later trees
    /// copy them (`folio_migrate_refs`; which release added it was not
    /// checked), kept for v6.14.
    fn migrate_lru_add(&mut self, src: FolioId, dst: FolioId) {
        if self.policy == Policy::Lru {
            self.lru_policy_del(src);
            self.folios[src].clear(flags::LRU);
            self.folios.set_lru(dst, NO_LIST);
            self.lru_policy_add(dst);
            return;
        }
        self.folio_isolate_lru(src);
        let s = self.folios[src];
        let copy_refs = self.lru_gen_version() == MglruVersion::V6_14;
        let d = &mut self.folios[dst];
        d.flags = s.flags;
        d.gen_refs = s.gen_refs;
        if !copy_refs {
            set_folio_refs(d, 0);
        }
        self.folios.set_lru(dst, NO_LIST);
        self.damon_putback_lru(dst);
    }

    /// `putback_movable_pages` (v6.12, mm/migrate.c) of folios compaction
    /// isolated but did not migrate, `list` in the order of the kernel's
    /// list (the last isolated first): the folio a `migrate_pages` that
    /// found no target stopped at and those after it (`compact_zone` puts
    /// back what `migrate_pages` left on `cc->migratepages`), or a batch
    /// `isolate_migratepages_block` gave up (`skip_on_failure`). Under
    /// `migrate_lru_add` each goes back by `folio_putback_lru` →
    /// `folio_add_lru`: it leaves its list as `folio_isolate_lru` took it
    /// (MGLRU: PG_active on a folio of the two youngest generations) and
    /// is added at the head of the list its flags select, or by
    /// `lru_gen_add_folio` (not `reclaiming`), in turn, so the last of
    /// `list` ends at the head (the per-CPU `lru_add` batch is drained in
    /// order). Without the option isolation takes no folio off its list,
    /// so they keep their places.
    pub(crate) fn putback_movable_pages(&mut self, list: impl Iterator<Item = FolioId>) {
        if !self.compact.cfg.migrate_lru_add {
            return;
        }
        for f in list {
            if self.policy == Policy::Lru {
                self.lru_touch(f);
            } else if self.folio_isolate_lru(f) {
                self.damon_putback_lru(f);
            }
        }
    }

    /// `remove_migration_ptes` (v6.12): every present PTE mapping `src`
    /// maps `dst`, young and dirty bits kept. Returns the PTEs rewritten.
    fn remove_migration_ptes(&mut self, src: FolioId, dst: FolioId) -> u32 {
        let fo = self.folios[dst];
        let n = 1u32 << fo.order();
        let mut found = 0;
        let mut rewrite = |ptes: &mut [u32], lo: u32, hi: u32| {
            let hi = (hi as usize).min(ptes.len());
            for p in ptes.get_mut(lo as usize..hi).into_iter().flatten() {
                if *p & PTE_PRESENT != 0 && *p & PTE_FOLIO_MASK == src {
                    *p = (*p & !PTE_FOLIO_MASK) | dst;
                    found += 1;
                }
            }
        };
        if fo.is_file() {
            for &vid in &self.files[fo.space as usize].mappings {
                let v = &mut self.vmas[vid as usize];
                let VmaKind::File { pgoff, .. } = v.kind else {
                    continue;
                };
                // The folio's pages `index .. index + n` in the VMA's range.
                let lo = fo.index.max(pgoff);
                let hi = (fo.index + n).min(pgoff.saturating_add(v.len));
                if lo < hi {
                    rewrite(&mut v.ptes, lo - pgoff, hi - pgoff);
                }
            }
        } else {
            let desc = match &self.fork {
                Some(_) => self.anon_vma_desc(fo.space).to_vec(),
                None => Vec::new(),
            };
            for vid in std::iter::once(fo.space).chain(desc) {
                let v = &mut self.vmas[vid as usize];
                rewrite(&mut v.ptes, fo.index, fo.index + n);
            }
        }
        found
    }
}
