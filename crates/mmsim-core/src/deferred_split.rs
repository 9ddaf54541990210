//! The deferred split queue and its shrinker (mm/huge_memory.c, v6.12:
//! `deferred_split_folio`, `folio_unqueue_deferred_split`,
//! `deferred_split_count`, `deferred_split_scan`, `thp_underused`).
//!
//! A group's queue holds large anonymous folios, oldest first
//! ([`flags::DEFERRED_QUEUED`]):
//!
//! * **Partially mapped** folios (`deferred_split_folio(folio, true)`, at a
//!   partial unmap, `crate::madvise`; every `thp.kernel`): marked
//!   PG_partially_mapped and counted (`thp_deferred_split_page` at PMD
//!   size, per-size `split_deferred`, `nr_anon_partially_mapped`). The
//!   shrinker splits each to order 0 and frees the pages no PTE maps.
//! * **Whole PMD-size folios** (`deferred_split_folio(folio, false)`, v6.12's
//!   "mm: split underused THPs", dafff3f4c850): under `thp.kernel` 6.12 or
//!   6.13 with `thp.shrink_underused` (sysfs
//!   `transparent_hugepage/shrink_underused`, on by default), each PMD-size
//!   THP is queued at its fault (`__do_huge_pmd_anonymous_page`) and at
//!   its collapse (`collapse_huge_page`). The shrinker splits one only
//!   when [`Sim::thp_underused`] says so (counting
//!   `thp_underused_split_page`); otherwise, or when the split fails, the
//!   folio leaves the queue ("consider it used"). Without
//!   `shrink_underused` nothing is queued this way (already queued folios
//!   stay). 6.8 and the RFC v2 model queue nothing whole.
//!
//! The shrinker runs at each group of a reclaim walk, where the
//! shadow-node shrinker runs (`shrink_slab`): `do_shrink_slab` with
//! `seeks = 2` scans `(queued >> priority) * 2` plus its deferred work, so
//! a short queue is scanned only at a low priority.
//!
//! A migrated folio (`crate::compaction`) leaves the queue and its
//! destination is queued at the tail (v6.12 `migrate_folio_move`,
//! `deferred_split_folio(dst, src_partially_mapped)`).

use crate::huge_memory::{ThpKernel, PMD_ORDER};
use crate::mem::folio::{flags, FolioId};
use crate::sim::Sim;
use crate::stats::item::*;

/// `HPAGE_PMD_NR`.
const HPAGE_PMD_NR: u32 = 1 << PMD_ORDER;

impl Sim {
    /// `deferred_split_folio(folio, partially_mapped = true)`
    /// (mm/huge_memory.c, v6.12) of large anonymous folio `f`, some of whose
    /// pages were just unmapped: unless it is in the swap cache or already
    /// partially mapped, it is marked PG_partially_mapped and counted
    /// (`thp_deferred_split_page` at PMD size, per-size `split_deferred`
    /// and `nr_anon_partially_mapped`); it is queued at the tail of its
    /// group's deferred split queue unless it is queued already (whole,
    /// from its fault: it keeps its place).
    pub(crate) fn deferred_split_folio(&mut self, f: FolioId) {
        let fo = &mut self.folios[f];
        if fo.order() == 0 || fo.test(flags::SWAPCACHE) || fo.test(flags::PARTIALLY_MAPPED) {
            return;
        }
        fo.set(flags::PARTIALLY_MAPPED);
        let order = fo.order();
        if order == PMD_ORDER {
            self.count_vm_events(THP_DEFERRED_SPLIT_PAGE, 1);
        }
        self.thp.stats[order as usize].split_deferred += 1;
        self.deferred_split_queue(f);
    }

    /// `deferred_split_folio(folio, partially_mapped = false)` (v6.12) of a
    /// PMD-size folio just mapped whole by its fault or collapse: queued
    /// (uncounted) under `thp.kernel` 6.12/6.13 with `shrink_underused`
    /// (`split_underused_thp`), unless it is in the swap cache.
    pub(crate) fn deferred_split_folio_whole(&mut self, f: FolioId) {
        if !self.thp.shrink_underused || self.folios[f].test(flags::SWAPCACHE) {
            return;
        }
        debug_assert_eq!(self.folios[f].order(), PMD_ORDER);
        self.deferred_split_queue(f);
    }

    /// `list_add_tail(&folio->_deferred_list, &ds_queue->split_queue)` when
    /// the list is empty.
    fn deferred_split_queue(&mut self, f: FolioId) {
        let fo_memcg = self.folios.memcg(f);
        let fo = &mut self.folios[f];
        if fo.test(flags::DEFERRED_QUEUED) {
            return;
        }
        fo.set(flags::DEFERRED_QUEUED);
        let m = fo_memcg as usize;
        if self.thp.split_queues.len() <= m {
            self.thp.split_queues.resize_with(m + 1, Default::default);
        }
        let q = &mut self.thp.split_queues[m];
        q.queue.push_back((), f);
        q.len += 1;
    }

    /// Takes folio `f` off its deferred split queue (its split, or its
    /// freeing: `folio_unqueue_deferred_split`, v6.12): its entry is
    /// skipped when the shrinker meets it and counts in no scan, so a
    /// folio that reuses the id and is queued later is met at its own
    /// place ([`crate::mem::queue`]).
    pub(crate) fn deferred_split_unqueue(&mut self, f: FolioId) {
        let fo_memcg = self.folios.memcg(f);
        let fo = &mut self.folios[f];
        fo.clear(flags::PARTIALLY_MAPPED | flags::DEFERRED_QUEUED);
        let q = &mut self.thp.split_queues[fo_memcg as usize];
        q.len -= 1;
        q.queue.unqueue(f);
    }

    /// `shrink_slab()` of the deferred split shrinker for group `m` at
    /// `priority` (mm/shrinker.c `do_shrink_slab`, v6.12, with
    /// `deferred_split_count` = the queue's length and the default
    /// `seeks` of 2): scans `(len >> priority) * 2` plus the deferred work
    /// `>> priority` (at most twice the length) in batches of 128, the
    /// rest deferred; so a short queue waits for a low priority. Returns
    /// the folios split.
    #[cold]
    #[inline(never)]
    pub(crate) fn shrink_slab_deferred_split(
        &mut self,
        m: crate::memcg::MemcgId,
        priority: u32,
    ) -> u64 {
        const SHRINK_BATCH: u64 = 128;
        let Some(q) = self.thp.split_queues.get_mut(m as usize) else {
            return 0;
        };
        let freeable = q.len;
        if freeable == 0 {
            return 0;
        }
        let nr = std::mem::take(&mut q.nr_deferred);
        let delta = (freeable >> priority) * 4 / 2;
        let mut total_scan = ((nr >> priority) + delta).min(2 * freeable);
        let mut scanned = 0;
        let mut freed = 0;
        while total_scan >= SHRINK_BATCH || total_scan >= freeable {
            let n = total_scan.min(SHRINK_BATCH);
            let (split, stop) = self.deferred_split_scan(m, n);
            freed += split;
            if stop {
                break;
            }
            total_scan -= n;
            scanned += n;
        }
        let next = (nr + delta).saturating_sub(scanned).min(2 * freeable);
        self.thp.split_queues[m as usize].nr_deferred += next;
        freed
    }

    /// `deferred_split_scan()` (mm/huge_memory.c, v6.12): up to `nr` folios
    /// from the head of `m`'s queue. A folio queued whole (not partially
    /// mapped) is split only if [`Sim::thp_underused`] (counting
    /// `thp_underused_split_page`), else it leaves the queue. A split is to
    /// order 0 (`split_folio`: counts `split`, `thp_split_page`; v6.12 maps
    /// zero-filled pages to the zero page, `crate::split_zeropage`); the
    /// pages no PTE maps any more are freed (`free_page_and_swap_cache` in
    /// `__split_huge_page`), the others go back to the LRU. A folio whose
    /// split fails (under writeback, or isolated by someone else) stays
    /// queued at the tail if partially mapped, else leaves the queue.
    /// Returns the folios split and whether the scan should stop
    /// (`SHRINK_STOP`: none split and the queue empty).
    pub(crate) fn deferred_split_scan(&mut self, m: crate::memcg::MemcgId, nr: u64) -> (u64, bool) {
        let mut split = 0;
        let mut tails = Vec::new();
        for _ in 0..nr {
            let Some(((), f)) = self.thp.split_queues[m as usize].queue.pop_front() else {
                break;
            };
            let fo_memcg = self.folios.memcg(f);
            let fo = self.folios[f];
            debug_assert!(
                fo.test(flags::DEFERRED_QUEUED) && fo_memcg == m && fo.order() > 0,
                "deferred split queue {m}: folio {f} left it but its entry is live"
            );
            let partial = fo.test(flags::PARTIALLY_MAPPED);
            let underused = !partial && self.thp_underused(f);
            // `split_folio` fails (-EBUSY) under writeback; a folio not
            // on the LRU is isolated by someone else.
            if (!partial && !underused) || fo.test(flags::WRITEBACK) || !self.folio_isolate_lru(f) {
                if partial {
                    self.thp.split_queues[m as usize].queue.push_back((), f);
                } else {
                    // list_del_init(): its entry is popped already.
                    self.folios[f].clear(flags::DEFERRED_QUEUED);
                    self.thp.split_queues[m as usize].len -= 1;
                }
                continue;
            }
            tails.clear();
            self.split_folio_to_list(f, &mut tails);
            split += 1;
            if underused {
                self.count_vm_events(THP_UNDERUSED_SPLIT_PAGE, 1);
            }
            tails.push(f);
            for &t in &tails {
                if self.folios[t].mapcount == 0 {
                    // Off every list: freed at once.
                    self.advance(self.cost.free_ns);
                    self.free_unmapped_anon_folio(t);
                } else {
                    self.damon_putback_lru(t);
                }
            }
        }
        let empty = self.thp.split_queues[m as usize].len == 0;
        (split, split == 0 && empty)
    }

    /// `thp_underused()` (mm/huge_memory.c, v6.12) of folio `f`: false at
    /// once when `khugepaged/max_ptes_none` is `HPAGE_PMD_NR - 1` (511, the
    /// default); else its pages are compared with the zero page in order
    /// (`pages_identical`, here [`Sim::page_zero_filled`]): true as soon as
    /// more than `max_ptes_none` are zero-filled, false as soon as
    /// `HPAGE_PMD_NR - max_ptes_none` are not (or at the end).
    pub(crate) fn thp_underused(&self, f: FolioId) -> bool {
        let max_none = self.thp.khuge.cfg.max_ptes_none;
        if max_none == HPAGE_PMD_NR - 1 {
            return false;
        }
        let (mut zero, mut filled) = (0u32, 0u32);
        for i in 0..1u32 << self.folios[f].order() {
            if self.page_zero_filled(f, i) {
                zero += 1;
                if zero > max_none {
                    return true;
                }
            } else {
                filled += 1;
                if filled >= HPAGE_PMD_NR - max_none {
                    return false;
                }
            }
        }
        false
    }
}

/// Whether `kernel` queues PMD-size folios whole at their fault (v6.12+).
pub(crate) fn queues_whole(kernel: ThpKernel) -> bool {
    matches!(kernel, ThpKernel::V6_12 | ThpKernel::V6_13)
}
