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
//! Recency is kept exactly but lazily: each reference stamps the folio with
//! a reference counter (in a dense side array, 4 bytes per folio, so that
//! checking stamps stays in cache) and appends (stamp, folio) to a FIFO; the
//! least recently used folio is the first FIFO entry whose stamp is still its
//! folio's stamp (older entries of re-referenced folios are stale and
//! skipped). Stamp 0 means "not resident". A hit thus writes 4 bytes and
//! appends 8, instead of relinking three list neighbours. Stale entries are compacted away when
//! the FIFO grows beyond twice the resident folios, which keeps it bounded
//! and keeps stamps from wrapping within an entry's life. Folios are counted
//! on the inactive file list (for the gauges and invariants) but not linked:
//! the FIFO is their only order, so an eviction touches no list neighbours.

use crate::mem::folio::{flags, FolioId, LruList};
use crate::mem::pagetable::pte_swap;
use crate::reclaim::ScanControl;
use crate::sim::Sim;

impl Sim {
    /// Adds a new folio under the `lru` policy: counted, stamped, not linked.
    #[inline]
    pub(crate) fn lru_policy_add(&mut self, f: FolioId) {
        self.folios[f].lru = LruList::InactiveFile as u8;
        self.memcg.lruvec.lists[LruList::InactiveFile as usize].len += 1;
        self.lru_touch(f);
    }

    /// Removes a folio from the `lru` policy's count.
    #[inline]
    pub(crate) fn lru_policy_del(&mut self, f: FolioId) {
        self.folios[f].lru = crate::mem::folio::NO_LIST;
        self.lru_stamps[f as usize] = 0;
        self.memcg.lruvec.lists[LruList::InactiveFile as usize].len -= 1;
    }

    /// Records a reference (the LRU "move to head").
    #[inline]
    pub(crate) fn lru_touch(&mut self, f: FolioId) {
        self.lru_stamp = self.lru_stamp.wrapping_add(1).max(1);
        let i = f as usize;
        if i >= self.lru_stamps.len() {
            self.lru_stamps.resize(i + 1, 0);
        }
        self.lru_stamps[i] = self.lru_stamp;
        self.lru_fifo.push_back((self.lru_stamp, f));
        if self.lru_fifo.len() > 4 * self.folios.live() + 64 {
            self.lru_compact();
        }
    }

    /// Whether a FIFO entry is the current one of a resident folio.
    #[inline]
    fn lru_entry_valid(&self, s: u32, f: FolioId) -> bool {
        self.lru_stamps.get(f as usize) == Some(&s)
    }

    /// Drops stale FIFO entries.
    #[cold]
    fn lru_compact(&mut self) {
        let stamps = &self.lru_stamps;
        self.lru_fifo.retain(|&(s, f)| stamps[f as usize] == s);
    }

    /// Evicts the least recently used evictable page. Anonymous pages need a
    /// free swap slot (written synchronously); pages that cannot be evicted
    /// are skipped (and keep their place). Returns false if nothing could be evicted.
    pub(crate) fn lru_evict_one(&mut self) -> bool {
        let mut skipped = 0usize;
        while skipped < self.lru_fifo.len() {
            // Victims come from the front: start loading the next candidates' folios.
            for k in [4, 8] {
                if let Some(&(_, ahead)) = self.lru_fifo.get(skipped + k) {
                    if let Some(fo) = self.folios.get(ahead) {
                        crate::sim::prefetch(fo as *const _ as *const u8);
                    }
                }
            }
            let (s, f) = self.lru_fifo[skipped];
            if !self.lru_entry_valid(s, f) {
                if skipped == 0 {
                    self.lru_fifo.pop_front();
                } else {
                    skipped += 1;
                }
                continue;
            }
            if self.lru_evict(f) {
                if skipped == 0 {
                    self.lru_fifo.pop_front();
                }
                // An entry behind skipped ones is now stale (its folio is gone).
                return true;
            }
            skipped += 1;
        }
        false
    }

    fn lru_evict(&mut self, f: FolioId) -> bool {
        let fo = self.folios[f];
        if !fo.is_file() && !fo.test(flags::SWAPCACHE) {
            let Some(slot) = self.swap.as_mut().and_then(|s| s.alloc()) else {
                return false;
            };
            let fo = &mut self.folios[f];
            fo.swap = slot + 1;
            fo.set(flags::SWAPCACHE | flags::DIRTY);
        }
        self.lru_policy_del(f);
        let fo = self.folios[f];
        if fo.mapcount > 0 {
            if fo.is_file() {
                let mut sc = ScanControl::new(crate::reclaim::Reclaimer::Direct, 0, self.clock);
                // Reuse the reclaim unmap for file mappings.
                self.lru_unmap_file(f, &mut sc);
            } else {
                *self.vmas[fo.space as usize].pte_mut(fo.index) = pte_swap(fo.swap - 1);
                self.folios[f].mapcount = 0;
            }
        }
        let fo = self.folios[f];
        if fo.test(flags::DIRTY) {
            self.folios[f].clear(flags::DIRTY);
            if fo.is_file() {
                self.nr_dirty -= 1;
                self.fs.write(self.clock, 1);
            } else {
                self.vm.pswpout += 1;
                self.swap.as_mut().unwrap().dev.write(self.clock, 1);
            }
            self.vm.pgpgout += 4;
        }
        if !fo.is_file() {
            self.swap.as_mut().unwrap().slots[(fo.swap - 1) as usize] =
                crate::mem::swap::SWAP_NO_SHADOW;
        } else {
            *self.files[fo.space as usize].slot_mut(fo.index) = 0;
        }
        self.free_folio(f);
        true
    }

    fn lru_unmap_file(&mut self, f: FolioId, _sc: &mut ScanControl) {
        use crate::mem::pagetable::{VmaKind, PTE_FOLIO_MASK, PTE_PRESENT};
        let fo = self.folios[f];
        for m in 0..self.files[fo.space as usize].mappings.len() {
            let vid = self.files[fo.space as usize].mappings[m];
            let v = &mut self.vmas[vid as usize];
            let VmaKind::File { pgoff, .. } = v.kind else {
                continue;
            };
            let Some(i) = fo.index.checked_sub(pgoff).filter(|i| *i < v.len) else {
                continue;
            };
            let pte = v.pte_mut(i);
            if *pte & PTE_PRESENT != 0 && *pte & PTE_FOLIO_MASK == f {
                *pte = 0;
            }
        }
        self.folios[f].mapcount = 0;
    }
}
