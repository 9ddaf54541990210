//! `shrink_folio_list()` of mm/vmscan.c: the reclaim decision for each
//! isolated folio (`folio_check_references`, writeback and dirty handling,
//! `pageout`, `__remove_mapping`) and the freeing of reclaimed folios.

use crate::mem::filemap::SLOT_FOLIO;
use crate::mem::folio::{flags, FolioId};
use crate::reclaim::{Reclaimer, ScanControl};
use crate::sim::{ClassicRules, Policy, Sim};
use crate::stats::item::*;
use crate::tracepoint::TpEvent;

/// Outcome of `folio_check_references()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FolioReferences {
    /// PAGEREF_ACTIVATE
    Activate,
    /// PAGEREF_KEEP
    Keep,
    /// PAGEREF_RECLAIM
    Reclaim,
    /// PAGEREF_RECLAIM_CLEAN
    ReclaimClean,
}

/// Per-call statistics of `shrink_folio_list()` (`struct reclaim_stat`),
/// in base pages as v6.12's are.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ReclaimStat {
    pub(crate) nr_unqueued_dirty: u64,
    /// Pages `pageout()` returned PAGE_SUCCESS for (`+= nr_pages`).
    pub(super) nr_pageout: u64,
}

impl Sim {
    /// `folio_check_references()` (v6.x, or v4.9 where young swap-backed folios activate at once).
    fn folio_check_references(
        &mut self,
        f: FolioId,
        sc: &mut ScanControl,
        rules: ClassicRules,
    ) -> FolioReferences {
        if let Policy::Mglru(_) = self.policy {
            return self.lru_gen_check_references(f, sc);
        }
        let referenced = self.folio_referenced(f, sc);
        let (refs, exec) = (referenced.vmas, referenced.exec);
        let fo = &mut self.folios[f];
        let file = fo.is_file();
        // v6.12: found in a VM_LOCKED VMA (PG_referenced was tested and
        // cleared first). The kernel mlocks it and it moves to the
        // unevictable list on putback; nothing is mlocked in a scenario yet.
        if referenced.locked {
            fo.clear(flags::REFERENCED);
            return FolioReferences::Activate;
        }
        if refs > 0 && rules.young_anon_activates && !file {
            return FolioReferences::Activate;
        }
        let was_ref = fo.test_and_clear(flags::REFERENCED);
        if refs > 0 {
            fo.set(flags::REFERENCED);
            if was_ref || refs > 1 {
                return FolioReferences::Activate;
            }
            if exec && (file || rules.young_anon_activates) {
                return FolioReferences::Activate;
            }
            return FolioReferences::Keep;
        }
        if was_ref && file {
            return FolioReferences::ReclaimClean;
        }
        FolioReferences::Reclaim
    }

    /// `shrink_folio_list()`: decides each isolated folio's fate (spec §3.11).
    /// Freed folios are removed from `batch`; survivors stay in it, with
    /// PG_active set on those to activate. Returns (reclaimed, stats).
    pub(crate) fn shrink_folio_list(
        &mut self,
        batch: &mut Vec<FolioId>,
        sc: &mut ScanControl,
        rules: ClassicRules,
    ) -> (u64, ReclaimStat) {
        let mut stat = ReclaimStat::default();
        let mut reclaimed = 0;
        let mut keep = 0;
        let mut i = 0;
        self.tlb_batch_from(sc.who == Reclaimer::Kswapd);
        // A split appends the tails to `batch`, which this loop reaches too.
        while i < batch.len() {
            let f = batch[i];
            i += 1;
            if let Some(&g) = batch.get(i + 3) {
                self.prefetch_reclaim(g);
            }
            if self.ra_locked(f) {
                // `folio_trylock()` fails: keep, not counted in nr_scanned.
                batch[keep] = f;
                keep += 1;
                continue;
            }
            // Account the number of base pages.
            let mut nr = self.folios[f].nr_pages();
            sc.nr_scanned += nr;
            let len = batch.len();
            let fate = self.reclaim_one(f, sc, rules, &mut stat, batch);
            if batch.len() > len {
                // Split: the tails are scanned on their own.
                sc.nr_scanned -= nr - 1;
                nr = 1;
            }
            match fate {
                Fate::Freed => reclaimed += nr,
                Fate::Activate => {
                    let fo_memcg = self.folios.memcg(f);
                    let fo = self.folios[f];
                    if fo.test(flags::SWAPCACHE) && self.mem_cgroup_swap_full(fo_memcg) {
                        self.folio_free_swap(f);
                    }
                    self.folios[f].set(flags::ACTIVE);
                    self.count_events(sc.memcg, PGACTIVATE, nr);
                    batch[keep] = f;
                    keep += 1;
                }
                Fate::Keep => {
                    batch[keep] = f;
                    keep += 1;
                }
                Fate::FreedAtPutback => {}
            }
        }
        batch.truncate(keep);
        self.try_to_unmap_flush(sc.who == Reclaimer::Kswapd);
        self.tlb_batch_from(false);
        (reclaimed, stat)
    }

    #[inline(always)]
    fn reclaim_one(
        &mut self,
        f: FolioId,
        sc: &mut ScanControl,
        rules: ClassicRules,
        stat: &mut ReclaimStat,
        list: &mut Vec<FolioId>,
    ) -> Fate {
        // A loop rather than a recursive retry, so that `inline(always)`
        // holds (LLVM does not inline a recursive function).
        let file = loop {
            let fo = self.folios[f];
            let file = fo.is_file();
            if file && fo.test(flags::DIRTY) && !fo.test(flags::WRITEBACK) {
                // In pages (`+= nr_pages`), as `nr_taken` is.
                stat.nr_unqueued_dirty += fo.nr_pages();
            }
            if !fo.test(flags::WRITEBACK) {
                break file;
            }
            // Case 3: cgroup v1 limit reclaim (writeback_throttling_sane() is
            // false) waits for a folio it already marked, then retries it.
            // (`!may_enter_fs`: case 2, as readahead's GFP_NOFS charge finds.)
            if sc.who == Reclaimer::Memcg
                && self.cfg.cgroup_version == crate::config::CgroupVersion::V1
                && fo.test(flags::RECLAIM)
                && may_enter_fs(&fo, sc.gfp_mask)
            {
                if let Some(done) = self.writeback_done_time(f) {
                    let now = sc.now();
                    sc.io_wait_ns += done.saturating_sub(now);
                    self.complete_writeback(done.max(now));
                    if !self.folios[f].test(flags::WRITEBACK) {
                        continue;
                    }
                }
            }
            // Cases 1 and 2: mark it for rotation when its writeback ends.
            self.folios[f].set(flags::RECLAIM);
            if self.xp.is_some() {
                self.xp_kept(
                    f,
                    sc,
                    rules.dirty_activates,
                    "under writeback: PG_reclaim set, so folio_end_writeback rotates it to \
                     the inactive tail when the write completes",
                );
            }
            return if rules.dirty_activates {
                Fate::Activate
            } else {
                Fate::Keep
            };
        };
        let refs = if sc.ignore_references {
            FolioReferences::Reclaim
        } else {
            let before = self.folios[f].flags;
            let r = self.folio_check_references(f, sc, rules);
            if self.xp.is_some() {
                self.xp_check_references(f, sc, before, r);
            }
            r
        };
        match refs {
            FolioReferences::Activate => return Fate::Activate,
            FolioReferences::Keep => return Fate::Keep,
            _ => {}
        }
        // A large folio gets its slots whole or is split first (`crate::huge_memory`).
        if !file
            && !self.folios[f].test(flags::SWAPCACHE)
            && (self.folios[f].order() == 0 || !self.add_to_swap_large(f, list))
        {
            // add_to_swap()
            let Some(slot) = self.folio_alloc_swap(f) else {
                if self.xp.is_some() {
                    self.xp_kept(
                        f,
                        sc,
                        true,
                        "add_to_swap found no swap slot (swap full, or the group's \
                         memory.swap.max reached)",
                    );
                }
                return Fate::Activate;
            };
            *self.swap.as_mut().unwrap().slot_mut(slot) = SLOT_FOLIO | f;
            let fo = &mut self.folios[f];
            fo.swap = slot + 1;
            fo.set(flags::SWAPCACHE | flags::DIRTY);
            self.nr_swapcache_folios += 1;
        }
        // A mapped order-0 anonymous folio takes `try_to_unmap`'s own path
        // for it, inlined here (one per anonymous folio reclaimed).
        let fo = self.folios[f];
        // Nothing maps it (a split's zapped tail; a swap-cache folio zapped
        // whole): no swap PTE may hold its slots (`swap_writepage`, below).
        let unmapped_anon = !file && fo.mapcount == 0;
        let unmapped = if !file && fo.order() == 0 && fo.mapcount > 0 {
            self.try_to_unmap_anon(f, sc)
        } else {
            self.try_to_unmap(f, sc)
        };
        // A large page-cache folio whose walk only split PMDs queued no
        // batched flush (each split flushed its PMD: `crate::filemap_pmd`).
        if fo.mapcount > 0 && unmapped && !(fo.is_file() && fo.order() > 0 && !sc.unmapped_ptes) {
            self.tlb_batch_add(&fo);
        }
        if !unmapped {
            // Still mapped (a VM_LOCKED VMA): activate_locked.
            if self.xp.is_some() {
                self.xp_kept(f, sc, true, "try_to_unmap left it mapped (a VM_LOCKED VMA)");
            }
            return Fate::Activate;
        }
        let fo = self.folios[f];
        if fo.test(flags::DIRTY) {
            if file && !(sc.who == Reclaimer::Kswapd && fo.test(flags::RECLAIM) && self.node.dirty)
            {
                // The flusher writes it; rotate it out of the way meanwhile
                // (in pages: `node_stat_mod_folio(.., nr_pages)`, v6.12, v6.18).
                self.count_vm_events(NR_VMSCAN_IMMEDIATE, fo.nr_pages());
                self.folios[f].set(flags::RECLAIM);
                if self.xp.is_some() {
                    self.xp_kept(
                        f,
                        sc,
                        rules.dirty_activates,
                        if sc.who == Reclaimer::Kswapd {
                            "dirty file folio left to the flusher (kswapd writes one only if it \
                             already has PG_reclaim and the node is marked dirty): PG_reclaim \
                             set, nr_vmscan_immediate_reclaim counted"
                        } else {
                            "dirty file folio left to the flusher (only kswapd may write file \
                             folios): PG_reclaim set, nr_vmscan_immediate_reclaim counted"
                        },
                    );
                }
                return if rules.dirty_activates {
                    Fate::Activate
                } else {
                    Fate::Keep
                };
            }
            // One test for both reasons to keep a dirty folio unwritten
            // (FOLIOREF_RECLAIM_CLEAN, then `!sc->may_writepage`), their
            // explanations out of line.
            if refs == FolioReferences::ReclaimClean
                || !may_enter_fs(&fo, sc.gfp_mask)
                || !sc.may_writepage
            {
                if self.xp.is_some() {
                    self.xp_kept_unwritten(f, sc, refs);
                }
                return Fate::Keep;
            }
            // pageout(): PAGE_SUCCESS counts the folio's pages (`nr_pageout +=
            // nr_pages`, in pages since v5.8's "mm: vmscan: reclaim writepage
            // is IO cost" introduced it; 1 for a folio split above, as the
            // kernel's reset `nr_pages` is), the IO `lru_note_cost` charges.
            stat.nr_pageout += fo.nr_pages();
            if unmapped_anon && self.swap_writepage_free_swap(f, sc) {
                return Fate::FreedAtPutback;
            }
            if !self.pageout(f, sc) {
                if self.xp.is_some() {
                    self.xp_kept(
                        f,
                        sc,
                        false,
                        if self.folios[f].is_file() {
                            "dirty: pageout started its write; under writeback with PG_reclaim, \
                             rotated to the inactive tail when the write completes"
                        } else {
                            "dirty in the swap cache: pageout started its swap write; under \
                             writeback with PG_reclaim, rotated to the inactive tail when the \
                             write completes"
                        },
                    );
                }
                return Fate::Keep;
            }
        }
        if self.xp.is_some() {
            let (key, swap) = (self.xp_key_of(f), self.folios[f].swap);
            self.remove_mapping(f);
            let shadow = self.xp_slot_shadow(key, swap);
            self.xp_evicted(key, sc, shadow);
        } else {
            self.remove_mapping(f);
        }
        sc.charge_free(self.cost.free_ns);
        Fate::Freed
    }

    /// [`Sim::xp_kept`] of a dirty folio that reclaim keeps without
    /// writing it: referenced (FOLIOREF_RECLAIM_CLEAN) or in kswapd's
    /// boosted reclaim (`!sc->may_writepage`), tested in that order as
    /// v6.12 `shrink_folio_list` does.
    #[cold]
    #[inline(never)]
    fn xp_kept_unwritten(&mut self, f: FolioId, sc: &ScanControl, refs: FolioReferences) {
        let why = if refs == FolioReferences::ReclaimClean {
            "dirty, and PG_referenced (FOLIOREF_RECLAIM_CLEAN): reclaimed only if clean"
        } else if !may_enter_fs(&self.folios[f], sc.gfp_mask) {
            "dirty, and the reclaiming allocation's mask has no __GFP_FS (may_enter_fs)"
        } else {
            "dirty, and kswapd's boosted reclaim may not write (may_writepage)"
        };
        self.xp_kept(f, sc, false, why);
    }

    /// `pageout()`: starts writeback of a dirty folio to swap or the
    /// filesystem, sleeping first if the device's request queue is full.
    /// Returns true if the write completed synchronously (zram, whose
    /// compression is the reclaimer's own CPU time) or was not needed (a
    /// zero-filled anonymous folio under `machine.swap_zero_pages`:
    /// [`Sim::swap_writepage_zero`]), so the folio can be freed now; else it stays under writeback with PG_reclaim and is
    /// rotated to the inactive tail on completion.
    fn pageout(&mut self, f: FolioId, sc: &mut ScanControl) -> bool {
        sc.charge_pageout(self.cost.pageout_ns);
        let now = sc.now();
        if self.tp.is_some() {
            let e = TpEvent::WriteFolio {
                pfn: u64::from(self.folios.head_pfn(f)),
                file: self.folios[f].is_file(),
            };
            self.trace_vmscan(now, Some(sc.memcg), e);
        }
        // kswapd's clock runs ahead of the workload's: its write joins the
        // device's backlog at the workload's present (BlockDev::write_placed).
        let place = if sc.who == Reclaimer::Kswapd {
            now.min(self.clock)
        } else {
            now
        };
        if self.tracks_zero_pages() && !self.folios[f].is_file() {
            // swap_writepage(): a zero-filled folio needs no write.
            if let Some(freed) = self.swap_writepage_zero(f) {
                return freed;
            }
        }
        let fo_memcg = self.folios.memcg(f);
        let fo = &mut self.folios[f];
        fo.clear(flags::DIRTY);
        let file = fo.is_file();
        let (order, nr, m) = (fo.order(), fo.nr_pages(), fo_memcg);
        self.count_vm_events(NR_VMSCAN_WRITE, nr);
        self.count_vm_events(PGPGOUT, 4 * nr);
        let (io, sync, q) = if file {
            self.file_dirty_sub(m, nr);
            self.dirty_fifo_unqueue(f);
            (self.fs.write_placed(now, place, nr), false, 1)
        } else {
            self.count_vm_events(PSWPOUT, nr);
            if order > 0 {
                self.count_swpout_large(order);
            }
            (
                self.swap_dev(|d| d.write_placed(now, place, nr)),
                self.cfg.swap.device == crate::config::DeviceKind::Zram,
                0,
            )
        };
        if sync {
            sc.charge_compress(io.done - now);
            return true;
        }
        sc.io_wait_ns += io.wait;
        let done = io.done;
        let fo = &mut self.folios[f];
        fo.set(flags::WRITEBACK | flags::RECLAIM);
        self.writeback_add(m, nr);
        if file && self.cfg.policy.dirty_throttle {
            self.bdp_writeback_start(m, nr);
        }
        self.queue_writeback(q, done, f);
        false
    }

    /// When folio `f`'s writeback completes, if it is under writeback (a
    /// folio has at most one event: see [`Sim::queue_writeback`]). Cold:
    /// cgroup v1 limit reclaim alone waits for a write.
    #[cold]
    #[inline(never)]
    fn writeback_done_time(&self, f: FolioId) -> Option<u64> {
        self.writeback
            .iter()
            .flat_map(|q| q.iter())
            .find(|&&(_, g)| g == f)
            .map(|&(t, _)| t)
    }

    /// `__remove_mapping()` + free: leaves the shadow in the slot, uncharges, frees.
    /// Inlined into `shrink_folio_list`'s two calls: one per reclaimed folio.
    #[inline(always)]
    pub(crate) fn remove_mapping(&mut self, f: FolioId) {
        if self.tp.is_some() {
            self.trace_filemap_folio(f, false);
        }
        let shadow = self.workingset_eviction(f);
        let fo = self.folios[f];
        if fo.is_file() {
            // `filemap_release_folio` first (`crate::kmem::buffer_head`).
            self.try_to_free_buffers(f);
            // `page_cache_delete`: the shadow over the folio's whole range
            // (one multi-index entry in the kernel, `crate::kmem`'s xarray
            // counts it so; the slot array holds it in each page's slot).
            let new = shadow.unwrap_or(0);
            if fo.order() == 0 {
                if self.kmem.is_some() {
                    self.kmem_slot_changed(fo.space, fo.index, SLOT_FOLIO | f, new);
                }
                *self.files[fo.space as usize].slot_mut(fo.index) = new;
            } else {
                // Order ≥ 6: one entry in a level-1 node; below, 2^order
                // slots of a leaf, as many order-0 entries.
                let multi = fo.order() >= crate::kmem::XA_CHUNK_SHIFT as u8;
                if multi && self.kmem.is_some() {
                    self.kmem_store_multi(fo.space, fo.index, fo.order(), new);
                }
                for index in fo.index..fo.index + fo.nr_pages() as u32 {
                    if !multi && self.kmem.is_some() {
                        self.kmem_slot_changed(fo.space, index, SLOT_FOLIO | f, new);
                    }
                    *self.files[fo.space as usize].slot_mut(index) = new;
                }
            }
        } else if fo.test(flags::SWAPCACHE) {
            // Each slot a swap PTE holds keeps the shadow; the others are freed.
            self.put_swap_folio(f, shadow);
        }
        self.free_folio_inline(f);
    }

    /// Returns a folio's page to the node and uncharges it (`mem_cgroup_uncharge`
    /// + `free_unref_folios`, as at the end of `shrink_folio_list`).
    ///
    /// The folio's slot is read once (flags, group, order, head PFN) and
    /// the order-0 frame goes straight to the per-CPU list.
    pub(crate) fn free_folio(&mut self, f: FolioId) {
        self.free_folio_inline(f);
    }

    /// [`Sim::free_folio`] inlined into reclaim's per-folio paths
    /// (`remove_mapping`, the `lru` policy's eviction), which free a folio
    /// for every one they reclaim.
    #[inline(always)]
    pub(crate) fn free_folio_inline(&mut self, f: FolioId) {
        let fo_memcg = self.folios.memcg(f);
        let fo = self.folios[f];
        // Not under writeback (its completion event would outlive it), not a
        // dirty file folio (`pageout`, the `lru` policy write it first).
        debug_assert!(
            !(fo.test(flags::WRITEBACK) || (fo.test(flags::DIRTY) && fo.is_file())),
            "freeing folio {f} under writeback or dirty"
        );
        if fo.test(flags::DEFERRED_QUEUED) {
            self.deferred_split_unqueue(f);
        }
        // NR_SWAPCACHE: a folio freed from the swap cache leaves it.
        self.nr_swapcache_folios -= fo.test(flags::SWAPCACHE) as u64;
        let (m, order) = (fo_memcg, fo.order() as usize);
        let nr = fo.nr_pages();
        if self.fork.is_some() {
            self.fork_forget_folio(f);
        }
        self.free_frames(self.folios.head_pfn(f), order);
        self.folios.free(f);
        self.page_counter_uncharge(m, nr);
        self.memcg1_check_events(m, nr);
        self.node.free += nr;
        self.count_vm_events(PGFREE, nr);
    }
}

/// `may_enter_fs()` (mm/vmscan.c, v6.12; the test has read the reclaimer's
/// `sc->gfp_mask` this way since v2.6): a reclaimer whose mask has
/// `__GFP_FS` may wait for a folio's writeback and write a dirty one; one
/// without it (readahead's allocations and charges, inside
/// `memalloc_nofs_save`) only for a swap-cache folio, with `__GFP_IO`, on
/// a swap device without `SWP_FS_OPS` (mmsim's swap is a block device or
/// zram, never a swap file on NFS).
#[inline(always)]
fn may_enter_fs(fo: &crate::mem::folio::Folio, gfp: crate::gfp::Gfp) -> bool {
    use crate::gfp::{__GFP_FS, __GFP_IO};
    gfp & __GFP_FS != 0 || (fo.test(flags::SWAPCACHE) && gfp & __GFP_IO != 0)
}

/// What `shrink_folio_list()` did with one folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Freed,
    Activate,
    Keep,
    /// Dirty again and put back, where its last reference went: freed by
    /// `move_folios_to_lru`, not counted as reclaimed ([`Sim::swap_writepage_free_swap`]).
    FreedAtPutback,
}
