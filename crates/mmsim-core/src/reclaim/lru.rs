//! The `lru` reference policy: textbook LRU, not a kernel design.
//!
//! Every reference moves the page to the head of one list; when a page must
//! be found (the group is at `memory.max` or the node has no free page),
//! exactly one page is evicted from the tail, synchronously, with no
//! watermarks, no batching and no cost. With `--memcg-max Np` the machine
//! therefore holds exactly N pages of the trace's data and its hits and
//! misses equal an N-entry LRU cache's — the number every cache-simulation
//! paper and simulator (libCacheSim, the ARC and LIRS papers) reports, so
//! mmsim can be checked against them exactly.
//!
//! Recency is one list (the inactive file list's header, whatever the
//! folio's type): a reference moves the folio to the head, eviction takes
//! the tail. The links are the arena's dense link array, so a hit relinks
//! four 8-byte entries that stay in cache, and the victim's folio is
//! prefetched while its predecessors are walked.

use crate::config::DeviceKind;
use crate::mem::folio::{flags, FolioId, LruList};
use crate::reclaim::ScanControl;
use crate::sim::Sim;
use crate::stats::item::*;

impl Sim {
    /// Adds a new folio under the `lru` policy: at the head of the one list.
    #[inline]
    pub(crate) fn lru_policy_add(&mut self, f: FolioId) {
        let l = LruList::InactiveFile as usize;
        self.memcgs[0].lruvec.lists[l].push_head(&mut self.folios, f, l as u8);
    }

    /// Removes a folio from the `lru` policy's list.
    #[inline]
    pub(crate) fn lru_policy_del(&mut self, f: FolioId) {
        self.memcgs[0].lruvec.lists[LruList::InactiveFile as usize].unlink(&mut self.folios, f);
    }

    /// Records a reference (the LRU "move to head").
    #[inline]
    pub(crate) fn lru_touch(&mut self, f: FolioId) {
        self.memcgs[0].lruvec.lists[LruList::InactiveFile as usize]
            .move_to_head(&mut self.folios, f);
    }

    /// Evicts the least recently used evictable page. Anonymous pages need a
    /// free swap slot (written synchronously); pages that cannot be evicted
    /// are skipped (and keep their place). Returns false if nothing could be evicted.
    pub(crate) fn lru_evict_one(&mut self) -> bool {
        let mut c = self.memcgs[0].lruvec.lists[LruList::InactiveFile as usize].tail;
        while c != crate::mem::folio::NIL {
            // The next victims: start loading the folio three ahead, and the
            // slot of the one two ahead (its folio was prefetched an eviction ago).
            let prev = self.folios.links(c)[0];
            if prev != crate::mem::folio::NIL {
                let prev2 = self.folios.links(prev)[0];
                if prev2 != crate::mem::folio::NIL {
                    let prev3 = self.folios.links(prev2)[0];
                    if prev3 != crate::mem::folio::NIL {
                        self.folios.prefetch(prev3);
                    }
                    self.prefetch_reclaim(prev2);
                }
            }
            if self.lru_evict(c) {
                return true;
            }
            c = prev;
        }
        false
    }

    fn lru_evict(&mut self, f: FolioId) -> bool {
        let fo = self.folios[f];
        if !fo.is_file() && !fo.test(flags::SWAPCACHE) {
            let Some(slot) = self.folio_alloc_swap(f) else {
                return false;
            };
            let fo = &mut self.folios[f];
            fo.swap = slot + 1;
            fo.set(flags::SWAPCACHE | flags::DIRTY);
            self.nr_swapcache_folios += 1;
        }
        self.lru_policy_del(f);
        // The reference policy charges no CPU: the ScanControl only collects
        // it, and an unmapped folio (`try_to_unmap` returns at once for it:
        // every page-cache folio only read through a file descriptor) needs none.
        if fo.mapcount > 0 {
            // An order-0 anonymous folio of a VMA never forked takes
            // `try_to_unmap`'s own step for it, without the unread
            // ScanControl; every other folio the general walk, with one.
            let unmapped = if fo.order() == 0
                && !fo.is_file()
                && !(self.fork.is_some() && self.anon_forked(fo.space))
            {
                self.try_to_unmap_anon_pte(f)
            } else {
                let mut sc = ScanControl::new(crate::reclaim::Reclaimer::Direct, 0, self.clock);
                self.try_to_unmap(f, &mut sc)
            };
            debug_assert!(unmapped, "the lru policy maps no VM_LOCKED memory");
        }
        let fo_memcg = self.folios.memcg(f);
        let fo = self.folios[f];
        if fo.test(flags::WRITEBACK) {
            // The reference policy does not wait: the write is cut short.
            self.writeback_cut_short(f);
        }
        let dirty = fo.test(flags::DIRTY);
        if !fo.is_file() {
            if dirty {
                self.folios[f].clear(flags::DIRTY);
                self.count_vm_events(PSWPOUT, 1);
                self.count_vm_events(PGPGOUT, 4);
            }
            // One test of the swap device for the write and the slot
            // (`Sim::swap_dev`'s choice of device written out).
            let (now, on_fs) = (self.clock, self.cfg.swap.device == DeviceKind::Fs);
            let swap = self
                .swap
                .as_mut()
                .expect("an anonymous folio has a swap slot");
            if dirty {
                if on_fs {
                    self.fs.write(now, 1);
                } else {
                    swap.dev.write(now, 1);
                }
            }
            swap.slots[(fo.swap - 1) as usize] = crate::mem::swap::SWAP_NO_SHADOW;
        } else {
            if dirty {
                self.folios[f].clear(flags::DIRTY);
                self.file_dirty_sub(fo_memcg, 1);
                self.dirty_fifo_unqueue(f);
                self.fs.write(self.clock, 1);
                self.count_vm_events(PGPGOUT, 4);
            }
            self.try_to_free_buffers(f);
            if self.kmem.is_some() {
                let old = crate::mem::filemap::SLOT_FOLIO | f;
                self.kmem_slot_changed(fo.space, fo.index, old, 0);
            }
            *self.files[fo.space as usize].slot_mut(fo.index) = 0;
        }
        self.free_folio_inline(f);
        true
    }
}
