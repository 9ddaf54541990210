//! Swap slots of anonymous folios and their owners (mm/swapfile.c,
//! mm/swap_slots.c, mm/swap_cgroup.c, v6.12) with the swap charges of
//! memory cgroups (mm/memcontrol.c).
//!
//! A folio swapped out gets a slot of the swap device ([`crate::mem::swap`])
//! that records the group that swapped it out (`swap_cgroup_record`); the
//! slot is charged to that group's swap counter and its ancestors' (under
//! cgroup v2 up to `memory.swap.max`), and the charge lives as long as the
//! slot: freeing the slot uncharges the owner.
//!
//! Zero-filled pages (`machine.swap_zero_pages`, off by default): the
//! simulator keeps one bit of content per anonymous folio,
//! [`flags::NONZERO`] (set by a store, or by a swap-in of a slot that held
//! data), and per slot the device's zeromap bit. Under `zeromap` (v6.12+,
//! mm/page_io.c `swap_writepage` → `is_folio_zero_filled` →
//! `swap_zeromap_folio_set`; `swap_read_folio` → `swap_read_folio_zeromap`)
//! a zero-filled folio is not written: its slot stays allocated and marked,
//! `swpout_zero` is counted (node and group), the folio is freed in the same
//! reclaim pass, and its swap-in fills zeros without IO, counting
//! `swpin_zero` instead of `pswpin`/`pgpgin`. Under `zram-same` (zram up to
//! 6.11, `zram_write_page` → `page_same_filled`) the page goes to zram as a
//! fill pattern: counted as swap IO, but neither compressed nor decompressed.

use crate::config::SwapZeroPages;
use crate::mem::folio::{flags, FolioId};
use crate::mem::pagetable::{VmaId, PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT};
use crate::memcg::{MemcgId, ROOT};
use crate::sim::Sim;
use crate::stats::item::*;

/// Slot allocation and freeing: mm/swap_slots.c, mm/swapfile.c (v6.12).
impl Sim {
    /// `folio_alloc_swap()`: a slot for anonymous folio `f`, charged to its
    /// group and recorded in the slot's owner (`swap_cgroup_record`); None
    /// when the device is full (counted as `memory.swap.events` fail) or the
    /// group is at its `memory.swap.max`. Inlined into reclaim's per-folio
    /// paths (one call per order-0 anonymous folio swapped out); the
    /// failures are out of line.
    #[inline(always)]
    pub(crate) fn folio_alloc_swap(&mut self, f: crate::mem::folio::FolioId) -> Option<u32> {
        let m = self.folios.memcg(f);
        let Some(slot) = self.swap.as_mut().and_then(|s| s.alloc(m)) else {
            self.folio_alloc_swap_full(m);
            return None;
        };
        if !self.mem_cgroup_try_charge_swap(m) {
            self.swap.as_mut().unwrap().release(slot);
            return None;
        }
        Some(slot)
    }

    /// [`Sim::folio_alloc_swap`] found no free slot: `memory.swap.events`
    /// fail, when there is a device at all.
    #[cold]
    #[inline(never)]
    fn folio_alloc_swap_full(&mut self, m: MemcgId) {
        if self.swap.is_some() {
            self.count_memcg_events(m, MEMCG_SWAP_FAIL, 1);
        }
    }

    /// `swap_free()` with `mem_cgroup_uncharge_swap()`: releases `slot` and
    /// the swap charge of the group that swapped it out.
    pub(crate) fn swap_free(&mut self, slot: u32) {
        let owner = self.swap.as_mut().unwrap().release(slot);
        self.mem_cgroup_uncharge_swap(owner);
    }

    /// [`Sim::swap_free`] of the slot of swap-cache folio `f`, whose group is
    /// the slot's (a swapped-in folio is charged to the group recorded for its
    /// slot, `mem_cgroup_swapin_charge_folio`), so the owner array is not read.
    /// Inlined: one call per order-0 swap-in that frees its slot.
    #[inline(always)]
    pub(crate) fn swap_free_of(&mut self, f: crate::mem::folio::FolioId, slot: u32) {
        let m = self.folios.memcg(f);
        debug_assert_eq!(self.swap.as_ref().unwrap().owner(slot), m);
        self.swap.as_mut().unwrap().release_owned(slot);
        self.mem_cgroup_uncharge_swap(m);
    }
}

/// Batches of swap entries: mm/internal.h `swap_pte_batch`, mm/swap.h
/// `swap_zeromap_batch`, mm/swapfile.c `swap_free_nr` (v6.12).
impl Sim {
    /// Whether the swap entries of slots `first..first + n` (which the
    /// caller found in consecutive PTEs) are alike as `can_swapin_thp`
    /// requires: `swap_pte_batch` compares the swap PTE bits, of which
    /// mmsim has the exclusive one (`pte_swp_exclusive`, cleared by fork:
    /// a slot fork counts, `crate::fork`), and the swap cgroup
    /// (`lookup_swap_cgroup_id`); `swap_zeromap_batch` the zeromap bits
    /// (`machine.swap_zero_pages = "zeromap"`).
    pub(crate) fn swap_batch_uniform(&self, first: u32, n: u32) -> bool {
        let swap = self.swap.as_ref().expect("swap entries without a device");
        let owner = swap.owner(first);
        let forked = self.fork.is_some();
        let shared = forked && self.swap_slot_shared(first);
        let zeromap = self.cfg.swap_zero_pages == SwapZeroPages::Zeromap;
        let zero = zeromap && swap.zeromap_test(first);
        (first + 1..first + n).all(|s| {
            swap.owner(s) == owner
                && (!forked || self.swap_slot_shared(s) == shared)
                && (!zeromap || swap.zeromap_test(s) == zero)
        })
    }

    /// `swap_free_nr()` of the `n` entries from `first` that a swap-in
    /// mapped: each slot loses one count, and goes (with its swap charge)
    /// with its last; a slot fork shared keeps its other swap PTEs'.
    pub(crate) fn swap_free_nr(&mut self, first: u32, n: u32) {
        for s in first..first + n {
            if self.fork.is_some() && self.swap_put_shared(s) {
                continue;
            }
            self.swap_free(s);
        }
    }
}

/// The read of a swap-in.
impl Sim {
    /// `swap_read_folio()` of swap-in folio `f` with the `ra` pages of its
    /// readahead in one batch: the fault waits for the read, a memstall if
    /// the folio is workingset; a zero-filled slot is filled without IO and
    /// the readahead's reads go on without the fault.
    #[inline(always)]
    pub(crate) fn swap_read_folio(&mut self, f: crate::mem::folio::FolioId, ra: u64) {
        let now = self.clock;
        if self.swap_read_zero(f) {
            if ra > 0 {
                self.swap_dev(|d| d.read(now, ra));
            }
        } else {
            let done = self.swap_dev(|d| d.read(now, 1 + ra));
            self.count_vm_events(crate::stats::item::PSWPIN, 1);
            self.count_vm_events(crate::stats::item::PGPGIN, 4);
            let ws = self.folios[f].test(crate::mem::folio::flags::WORKINGSET);
            self.io_wait(done, ws);
        }
    }
}

/// The swap cache's reference to a reclaimed folio's slots.
impl Sim {
    /// `__remove_mapping` → `__delete_from_swap_cache` and `put_swap_folio`
    /// (mm/swap_state.c, mm/swapfile.c, v6.12) of reclaimed swap-cache folio
    /// `f`: the swap cache drops its reference (`SWAP_HAS_CACHE`) to each
    /// slot. A slot a swap PTE references keeps `shadow` (or no shadow); a
    /// slot none references (its `swap_map` count is 0, so
    /// `__swap_entry_free_locked` returns 0) is freed with its swap charge
    /// (`swap_entry_range_free`, which drops the shadow too). Such slots:
    /// the unmapped pages of a partially mapped folio split at swap-out
    /// (`crate::huge_memory`), the pages of a swap-cache folio zapped while
    /// mapped (a present PTE's zap drops no swap count), and slots whose last
    /// swap PTE was zapped while the folio could not leave the swap cache
    /// (under writeback, or other slots still referenced:
    /// [`Sim::try_to_reclaim_swap_zapped`]; `free_unmapped_anon_folio`).
    /// No mark is kept for those: the test below finds them. Without fork the
    /// only swap PTE that can hold a slot is the folio's own page's PTE in
    /// its VMA; with fork, fork's count of the slot or a swap PTE in the
    /// folio's anon_vma tree ([`Sim::swap_slot_held`]). Inlined into
    /// `remove_mapping` (one call per anonymous folio reclaimed): an
    /// order-0 folio without fork reads the one PTE `try_to_unmap` just
    /// wrote.
    #[inline(always)]
    pub(crate) fn put_swap_folio(&mut self, f: FolioId, shadow: Option<u32>) {
        let fo = self.folios[f];
        let v = shadow.unwrap_or(crate::mem::swap::SWAP_NO_SHADOW);
        if fo.order() == 0 && self.fork.is_none() {
            let slot = fo.swap - 1;
            if self.vmas[fo.space as usize].pte(fo.index) == fo.swap {
                *self.swap.as_mut().unwrap().slot_mut(slot) = v;
            } else {
                self.swap_free_of(f, slot);
            }
            return;
        }
        self.put_swap_folio_slots(f, v);
    }

    /// [`Sim::put_swap_folio`] of a large folio, or of any once a task
    /// forked: slot by slot.
    #[inline(never)]
    fn put_swap_folio_slots(&mut self, f: FolioId, v: u32) {
        let fo = self.folios[f];
        let first = fo.swap - 1;
        for page in 0..fo.nr_pages() as u32 {
            let s = first + page;
            if self.swap_slot_held(f, page) {
                self.swap.as_mut().unwrap().slots[s as usize] = v;
            } else {
                self.swap_free_of(f, s);
            }
        }
    }

    /// Whether a swap PTE references the slot of page `page` of swap-cache
    /// folio `f` (`swap_map` count above 0): the page's PTE in `f`'s VMA
    /// holds its entry, or, once a task forked, fork counted the slot or a
    /// PTE of another VMA of the anon_vma tree holds it.
    pub(crate) fn swap_slot_held(&self, f: FolioId, page: u32) -> bool {
        let fo = self.folios[f];
        let (entry, index) = (fo.swap + page, fo.index + page);
        if self.vmas[fo.space as usize].pte(index) == entry {
            return true;
        }
        self.fork.is_some()
            && (self.swap_slot_shared(entry - 1)
                || self
                    .anon_vma_desc(fo.space)
                    .iter()
                    .any(|&vma| self.vmas[vma as usize].pte(index) == entry))
    }
}

/// The zap of a swap PTE: mm/swapfile.c `free_swap_and_cache_nr` and
/// `__try_to_reclaim_swap` (v6.12), for order-0 and large folios, with or
/// without fork.
impl Sim {
    /// `free_swap_and_cache_nr()` of `slot` after its swap PTE was zapped
    /// (MADV_DONTNEED, munmap, exit, the OOM reaper): the PTE's reference
    /// goes (`swap_entry_put`; a slot fork shared keeps its other swap PTEs'
    /// counts and nothing else happens). A slot no folio holds is freed with
    /// its swap charge. A slot left with only the swap cache's reference
    /// (`SWAP_HAS_CACHE`) has its folio tried by [`Sim::try_to_reclaim_swap_zapped`].
    pub(crate) fn free_swap_and_cache(&mut self, slot: u32) {
        if self.swap.is_none() {
            return;
        }
        if self.fork.is_some() && self.swap_put_shared(slot) {
            // Other swap PTEs of a slot fork shared still reference it.
            return;
        }
        let swap = self.swap.as_ref().unwrap();
        match crate::mem::filemap::slot_folio(swap.slots[slot as usize]) {
            None => self.swap_free(slot),
            Some(f) => self.try_to_reclaim_swap_zapped(f),
        }
    }

    /// `__try_to_reclaim_swap(si, offset, TTRS_UNMAPPED | TTRS_FULL)`
    /// (v6.12) of swap-cache folio `f`, one of whose slots just lost its
    /// last swap PTE. The folio leaves the swap cache when
    ///
    /// * it is not mapped (`TTRS_UNMAPPED`: `!folio_mapped`, every mapping
    ///   of every task) or swap is more than half full (`TTRS_FULL`:
    ///   `mem_cgroup_swap_full`, the device's or the group's),
    /// * `folio_swapcache_freeable`: not under writeback (the folio lock
    ///   `folio_trylock` wants is never held across events here), and
    /// * `swap_is_has_cache` over all its `nr` slots: no swap PTE of any
    ///   task still references one (`folio_swapped`, fork's counts
    ///   included).
    ///
    /// Then `delete_from_swap_cache` frees every slot with its swap charge
    /// and the folio is dirty again; one that nothing maps is freed (the
    /// zap's reference was the last). Otherwise the folio stays in the
    /// swap cache and the slot keeps only the cache's reference: when no PTE
    /// maps its page either, the folio's removal frees it
    /// ([`Sim::put_swap_folio`] finds no swap PTE holding it) instead of
    /// leaving a shadow no PTE will fault; a page still mapped (a task fork
    /// shared it with) gets its slot back from `try_to_unmap`.
    pub(crate) fn try_to_reclaim_swap_zapped(&mut self, f: FolioId) {
        let fo_memcg = self.folios.memcg(f);
        let fo = self.folios[f];
        let mapped = fo.mapcount > 0;
        let need = !mapped || self.mem_cgroup_swap_full(fo_memcg);
        let swapped = match self.fork {
            Some(_) => self.folio_swapped_forked(f),
            None => self.folio_swapped_ptes(f),
        };
        if need && !swapped && !fo.test(flags::WRITEBACK) {
            if mapped {
                self.folio_free_swap(f);
            } else {
                self.free_unmapped_anon_folio(f);
            }
        }
    }

    /// Every used swap slot is held, by a live swap-cache folio whose slots
    /// cover it or, when
    /// its page was swapped out (a shadow), by at least one swap PTE of a
    /// live VMA (with or without fork). A slot neither holds is leaked (no
    /// fault can read it and no zap free it; the kernel's `swap_map` count
    /// would be 0 and the slot free). And the converse: every swap PTE
    /// references a used slot (the kernel's swap PTE holds a `swap_map`
    /// count, so its slot cannot be free; one freed under it would read
    /// another page's data). For `Sim::check_invariants`; O(slots + PTEs).
    pub(crate) fn check_swap_slots_held(&self) -> Result<(), String> {
        let Some(swap) = self.swap.as_ref() else {
            return Ok(());
        };
        let mut held = vec![false; swap.slots.len()];
        let free = swap.free_slots();
        for (vma, v) in self.vmas.iter().enumerate() {
            for (i, &p) in v.ptes.iter().enumerate() {
                if p != 0 && p & PTE_PRESENT == 0 {
                    let s = (p - 1) as usize;
                    match held.get_mut(s) {
                        Some(h) if !free[s] && swap.slots[s] != 0 => *h = true,
                        _ => {
                            return Err(format!(
                                "VMA {vma} page {i}: its swap PTE references slot {}, \
                                 which is free or beyond the device",
                                p - 1
                            ))
                        }
                    }
                }
            }
        }
        let listed = free.iter().filter(|&&f| f).count() as u64;
        if listed + swap.used != swap.slots.len() as u64 {
            return Err(format!(
                "swap: {listed} slots on the free-slot stack + {} used != {} slots",
                swap.used,
                swap.slots.len()
            ));
        }
        for (s, &v) in swap.slots.iter().enumerate() {
            if free[s] {
                continue;
            }
            match crate::mem::filemap::slot_folio(v) {
                Some(f) => self.check_swap_cache_slot(s as u32, f)?,
                None if v != 0 && !held[s] => {
                    return Err(format!(
                        "swap slot {s} is used (a swapped-out page) but no swap PTE references it"
                    ))
                }
                None => {}
            }
        }
        Ok(())
    }

    /// A slot that names a swap-cache folio is held by it: the folio is
    /// live, in the swap cache, and its slots cover this one (a folio freed
    /// or split without `put_swap_folio` / `folio_free_swap` would leave a
    /// charged slot naming a dead or foreign folio).
    fn check_swap_cache_slot(&self, slot: u32, f: FolioId) -> Result<(), String> {
        let ok = self.folios.is_live(f) && {
            let fo = &self.folios[f];
            fo.test(flags::SWAPCACHE)
                && fo.swap != 0
                && (fo.swap - 1..fo.swap - 1 + (1u32 << fo.order())).contains(&slot)
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "swap slot {slot} names folio {f}, which is not a live swap-cache folio \
                 covering it"
            ))
        }
    }
}

/// A swap-in whose folio was lost (`crate::fault`'s `do_swap_page`).
impl Sim {
    /// The folio a swap-in just allocated was reclaimed while its readahead
    /// allocated the window (in a small group it reaches the list's tail in
    /// one pass; the kernel's is locked for its read and cannot go, and a
    /// folio id reused meanwhile would map another page): the fault reads
    /// its page again. The kernel makes one swap-in of it, so the fault's
    /// counts stay one swap-in's: `pgmajfault` and the refault were counted
    /// with the lost folio (the shadow it left is not tested again), and
    /// `pswpin` is counted here, where the fault's one read is done.
    #[cold]
    #[inline(never)]
    /// `ra` and `workingset` are the lost swap-in's readahead pages and
    /// PG_workingset, which the read and its stall keep.
    pub(crate) fn swapin_folio_lost(
        &mut self,
        vma: u32,
        index: u32,
        slot: u32,
        write: bool,
        ra: u64,
        workingset: bool,
    ) {
        // A slot value of 0: no shadow to test.
        let Some(f) = self.swapin_folio(vma, index, slot, 0, 0) else {
            return;
        };
        if self.tasks[self.vmas[vma as usize].task as usize].dead {
            return;
        }
        if workingset {
            self.folios[f].set(crate::mem::folio::flags::WORKINGSET);
        }
        self.swap_read_folio(f, ra);
        self.map_anon(vma, index, f, write);
    }
}

/// Swap charges of memory cgroups: mm/memcontrol.c (v6.12).
impl Sim {
    /// `__mem_cgroup_try_charge_swap()` (mm/memcontrol.c, v5.8–v6.14): at
    /// swap-out (`folio_alloc_swap`), charges one slot to the swap counter of
    /// `m` and its ancestors. Under cgroup v2 a group below the top one is
    /// refused when it or an ancestor is at `memory.swap.max`, counting
    /// `memory.swap.events` max and fail; the folio is then not swapped out
    /// (`add_to_swap` fails and `shrink_folio_list` activates it). Under v1
    /// the swap counter only accounts (`memory.memsw.*` is not modelled).
    /// The charge lives as long as the slot (v2: "memory and swap charge
    /// lifetimes correspond 1:1 to page and swap slot lifetimes").
    ///
    /// The walk is `page_counter_try_charge()`'s (mm/page_counter.c): each
    /// level from `m` up is charged in turn, and the first one found at its
    /// limit undoes the levels charged below it, so a charge that fits
    /// takes one walk.
    #[inline(always)]
    pub(crate) fn mem_cgroup_try_charge_swap(&mut self, m: MemcgId) -> bool {
        let limited = self.cfg.cgroup_version == crate::config::CgroupVersion::V2 && m != ROOT;
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &mut self.memcgs[c as usize];
            if limited && g.swap_usage >= g.swap_max {
                self.mem_cgroup_try_charge_swap_fail(m, c);
                return false;
            }
            g.swap_usage += 1;
            cur = g.parent;
        }
        true
    }

    /// [`Sim::mem_cgroup_try_charge_swap`] found `over` at its
    /// `memory.swap.max`: the levels from `m` below `over` give their charge
    /// back, and `m` counts `memory.swap.events` max and fail.
    #[cold]
    #[inline(never)]
    fn mem_cgroup_try_charge_swap_fail(&mut self, m: MemcgId, over: MemcgId) {
        let mut cur = m;
        while cur != over {
            let g = &mut self.memcgs[cur as usize];
            g.swap_usage -= 1;
            cur = g.parent.expect("`over` is an ancestor of `m`");
        }
        self.count_memcg_events(m, MEMCG_SWAP_MAX, 1);
        self.count_memcg_events(m, MEMCG_SWAP_FAIL, 1);
    }

    /// `mem_cgroup_uncharge_swap()`: the slot charged to `m` was freed.
    #[inline(always)]
    pub(crate) fn mem_cgroup_uncharge_swap(&mut self, m: MemcgId) {
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &mut self.memcgs[c as usize];
            g.swap_usage -= 1;
            cur = g.parent;
        }
    }

    /// `mem_cgroup_get_nr_swap_pages()`: the slots group `m` may still use —
    /// the device's free slots, bounded under v2 by the room under every
    /// `memory.swap.max` from `m` up (the top group is not limited).
    pub(crate) fn mem_cgroup_get_nr_swap_pages(&self, m: MemcgId) -> u64 {
        let mut n = self.swap.as_ref().map_or(0, |s| s.nr_free());
        if self.cfg.cgroup_version == crate::config::CgroupVersion::V2 {
            let mut cur = Some(m);
            while let Some(c) = cur.filter(|&c| c != ROOT) {
                let g = &self.memcgs[c as usize];
                n = n.min(g.swap_max.saturating_sub(g.swap_usage));
                cur = g.parent;
            }
        }
        n
    }

    /// `mem_cgroup_swap_full()` (v6.12): the device is more than half full
    /// (`vm_swap_full`), or, under v2, `m` or an ancestor uses at least half
    /// its `memory.swap.high` or its `memory.swap.max` (swap.high counts
    /// since v5.8); then swap-in, activation and a zap free the slot.
    pub(crate) fn mem_cgroup_swap_full(&self, m: MemcgId) -> bool {
        if self.swap.as_ref().is_some_and(|s| s.half_full()) {
            return true;
        }
        if self.cfg.cgroup_version == crate::config::CgroupVersion::V2 {
            let mut cur = Some(m);
            while let Some(c) = cur.filter(|&c| c != ROOT) {
                let g = &self.memcgs[c as usize];
                let half_of = |limit: u64| limit != u64::MAX && g.swap_usage * 2 >= limit;
                if half_of(g.swap_high) || half_of(g.swap_max) {
                    return true;
                }
                cur = g.parent;
            }
        }
        false
    }
}

/// Zero-filled anonymous pages at swap-out and swap-in: mm/page_io.c
/// (v6.12 zeromap) and zram's same-filled pages (drivers/block/zram, ≤ 6.11).
impl Sim {
    /// Whether `machine.swap_zero_pages` tracks page contents.
    #[inline]
    pub(crate) fn tracks_zero_pages(&self) -> bool {
        self.cfg.swap_zero_pages != SwapZeroPages::Write
    }

    /// After an anonymous fault on page `index` of `vma` (`do_anonymous_page`
    /// when `new`, else `do_swap_page`): a store makes the folio's content
    /// non-zero; a load's first touch leaves it zero-filled and maps it with
    /// clean PTEs, so that the first store is a write-protect fault
    /// ([`Sim::anon_wp_fault_content`]), as the kernel's store after a
    /// read of the zero page is (`do_wp_page` → `wp_page_copy`). The
    /// kernel's read fault maps the zero page (no folio); mmsim's model
    /// allocates the folio, large ones included, and write-protects it.
    /// Under the 6.12 content bits (`crate::split_zeropage`) a large
    /// folio's pages are all marked here, so that their clean PTEs stay
    /// write-protect faults rather than the hits of a fresh write-faulted
    /// THP; such pages count as data at a split (departure: the kernel
    /// would find them zero-filled, but it never allocated them).
    pub(crate) fn anon_fault_content(&mut self, vma: VmaId, index: u32, new: bool, write: bool) {
        if self.fault_retry_pending() {
            return; // the retried fault (`Sim::retry_fault`, `crate::cow`) marks its own folio
        }
        let pte = self.vmas[vma as usize].pte(index);
        if pte & PTE_PRESENT == 0 {
            return; // the fault got no folio (its task was OOM-killed)
        }
        let f = pte & PTE_FOLIO_MASK;
        if f == self.zero_folio {
            return; // a load mapped the shared zero page (`machine.zero_page`)
        }
        if write {
            self.folios[f].set(flags::NONZERO);
        } else if new {
            let fo = self.folios[f];
            let v = &mut self.vmas[vma as usize];
            for i in fo.index..fo.index + (1u32 << fo.order()) {
                let p = v.pte_mut(i);
                if *p & PTE_PRESENT != 0 && *p & PTE_FOLIO_MASK == f {
                    *p &= !PTE_DIRTY;
                }
            }
            if self.thp.content.on && fo.order() > 0 {
                // Keep the first store to each page a write-protect fault:
                // a clean PTE with a clear content bit is a hit there
                // (`crate::split_zeropage`). The pages then count as data
                // at a split (NONZERO is left alone).
                let pfn = self.folios.head_pfn(f);
                for i in 0..1u32 << fo.order() {
                    self.thp.content.set(pfn + i);
                }
            }
        }
    }

    /// `do_wp_page` on anonymous folio `f`: the store makes it non-zero.
    #[inline]
    pub(crate) fn anon_wp_fault_content(&mut self, f: FolioId) {
        if self.tracks_zero_pages() {
            self.folios[f].set(flags::NONZERO);
        }
    }

    /// `swap_writepage()` of anonymous folio `f` (in the swap cache) when
    /// zero-filled pages are tracked: `Some(true)` when it was zero-filled
    /// and is done with (zeromap: not written, `swpout_zero`; zram-same:
    /// stored as a pattern, counted as swap IO), so the caller frees it now;
    /// `None` to write it as usual (its zeromap bits cleared,
    /// `swap_zeromap_folio_clear`).
    pub(crate) fn swap_writepage_zero(&mut self, f: FolioId) -> Option<bool> {
        let fo_memcg = self.folios.memcg(f);
        let fo = self.folios[f];
        debug_assert!(fo.test(flags::SWAPCACHE) && fo.swap != 0);
        let (first, n) = (fo.swap - 1, 1u32 << fo.order());
        let swap = self
            .swap
            .as_mut()
            .expect("a swap-cache folio without a device");
        if fo.test(flags::NONZERO) {
            swap.zeromap_clear(first, n);
            return None;
        }
        swap.zeromap_set(first, n);
        self.folios[f].clear(flags::DIRTY);
        let nr = u64::from(n);
        // pageout() counts the write whatever swap_writepage() did with it.
        self.count_vm_events(NR_VMSCAN_WRITE, nr);
        match self.cfg.swap_zero_pages {
            SwapZeroPages::Zeromap => self.count_events(fo_memcg, SWPOUT_ZERO, nr),
            _ => {
                // zram: the bio is submitted and completes synchronously.
                self.count_vm_events(PGPGOUT, 4 * nr);
                self.count_vm_events(PSWPOUT, nr);
                if fo.order() > 0 {
                    self.count_swpout_large(fo.order());
                }
            }
        }
        Some(true)
    }

    /// `swap_read_folio()` of swap-cache folio `f`, just allocated for its
    /// slot, when zero-filled pages are tracked: true when the slot was
    /// zero-filled, so no IO is needed (zeromap: `swpin_zero`; zram-same:
    /// `pswpin`/`pgpgin` counted, no decompression); false when the caller
    /// reads it from the device as usual.
    pub(crate) fn swap_read_zero(&mut self, f: FolioId) -> bool {
        if !self.tracks_zero_pages() || self.folios[f].test(flags::NONZERO) {
            return false;
        }
        match self.cfg.swap_zero_pages {
            SwapZeroPages::Zeromap => {
                let m = self.folios.memcg(f);
                self.count_events(m, SWPIN_ZERO, 1);
            }
            _ => {
                self.count_vm_events(PSWPIN, 1);
                self.count_vm_events(PGPGIN, 4);
            }
        }
        true
    }

    /// The counts of a large folio's swap read of `n` pages (v6.12
    /// `swap_read_folio_bdev_sync` → `count_swpin_vm_event`,
    /// `count_mthp_stat(MTHP_STAT_SWPIN)`): `pswpin` per page, `pgpgin`,
    /// and the order's mTHP `swpin`.
    pub(crate) fn count_large_swap_read(&mut self, order: u8, n: u32) {
        self.count_vm_events(PSWPIN, u64::from(n));
        self.count_vm_events(PGPGIN, 4 * u64::from(n));
        self.thp.stats[order as usize].swpin += 1;
    }

    /// `swap_read_folio()` of large folio `f` swapped in whole from the
    /// slots from `first` (v6.12+ `alloc_swap_folio`): `None` when the folio
    /// is filled without a bio, else the pages of the folio the swap device
    /// reads (the caller submits the bio and counts it: `pswpin` per page,
    /// `pgpgin` and the mTHP `swpin`, as `swap_read_folio_bdev_sync` does).
    /// Untracked zero-filled pages: all `n`. Tracked, the folio's content
    /// bit is non-zero unless every slot's zeromap bit is set. Under the
    /// zeromap the slots are all zero-filled or all not (`can_swapin_thp`
    /// checked `swap_zeromap_batch`; v6.12 `swap_read_folio_zeromap` refuses
    /// a mixed folio), and when they are it fills the folio without IO
    /// (`None`), counting `swpin_zero` per page, and no `pswpin`, `pgpgin`,
    /// device read or mTHP `swpin`. Under `zram-same` the bio is submitted
    /// whatever the pages hold, and zram reads it page by page (v6.12
    /// `zram_bio_read` → `zram_bvec_read` → `zram_read_page` →
    /// `zram_read_from_zspool`): a same-filled page (`ZRAM_SAME`) is filled
    /// from its pattern (`zram_fill_page`), only the others are
    /// decompressed, so the device reads the pages whose slot is not
    /// marked; `swpin_zero` is the zeromap's alone. That pairing is
    /// hypothetical: `zram-same` is zram up to 6.11, and whole-folio
    /// swap-in from zram starts in 6.12, where a zero-filled page never
    /// reaches zram (the zeromap takes it) and a mixed block is swapped in
    /// page by page (`can_swapin_thp`).
    pub(crate) fn swap_read_large_zero(&mut self, f: FolioId, first: u32) -> Option<u32> {
        let n = self.folios[f].nr_pages() as u32;
        if !self.tracks_zero_pages() {
            return Some(n);
        }
        let swap = self.swap.as_ref().unwrap();
        let same = (first..first + n).filter(|&s| swap.zeromap_test(s)).count() as u32;
        if same < n {
            self.folios[f].set(flags::NONZERO);
        }
        match self.cfg.swap_zero_pages {
            SwapZeroPages::ZramSame => Some(n - same),
            _ if same == n => {
                let m = self.folios.memcg(f);
                self.count_events(m, SWPIN_ZERO, u64::from(n));
                None
            }
            _ => Some(n),
        }
    }

    /// The content bit of a folio just read into the swap cache from `slot`:
    /// non-zero unless the slot's zeromap bit says it was zero-filled.
    #[inline]
    pub(crate) fn swapin_content(&mut self, f: FolioId, slot: u32) {
        if self.tracks_zero_pages() && !self.swap.as_ref().unwrap().zeromap_test(slot) {
            self.folios[f].set(flags::NONZERO);
        }
    }
}

/// `NR_SWAPCACHE` kept as folios enter and leave the swap cache
/// (`Sim::nr_swapcache_folios`), checked against the walks it replaced.
impl Sim {
    /// `nr_swapcached` by the walk of every listed folio that the kept
    /// count replaces: what [`Sim::check_gauges`] compares it with.
    pub(crate) fn swapcached_walk(&self) -> u64 {
        let mut swapcached = 0;
        for (_, l) in self.memcgs.iter().flat_map(|m| m.lruvec.all_lists()) {
            let mut c = l.head;
            while c != crate::mem::folio::NIL {
                swapcached += self.folios[c].test(flags::SWAPCACHE) as u64;
                c = self.folios.links(c)[1];
            }
        }
        swapcached
    }

    /// Checks the gauges kept as state changes against the walk over every
    /// folio they replace (`nr_swapcached`); an error names the difference.
    /// Used by tests over the embedded scenarios; O(folios).
    #[doc(hidden)]
    pub fn check_gauges(&self) -> Result<(), String> {
        let walk = self.swapcached_walk();
        if walk != self.nr_swapcache_folios {
            return Err(format!(
                "nr_swapcached: kept {} but the walk counts {walk}",
                self.nr_swapcache_folios
            ));
        }
        Ok(())
    }

    /// The kept count against every live folio's PG_swapcache (for
    /// `Sim::check_invariants`, which may run while folios are isolated).
    pub(crate) fn check_swapcache_count(&self) -> Result<(), String> {
        let mut swapcache = 0;
        self.folios
            .for_each_live(|fo| swapcache += fo.test(flags::SWAPCACHE) as u64);
        if swapcache != self.nr_swapcache_folios {
            return Err(format!(
                "{swapcache} folios have PG_swapcache but NR_SWAPCACHE keeps {}",
                self.nr_swapcache_folios
            ));
        }
        Ok(())
    }
}

/// `pageout` of an anonymous folio nothing maps, in reclaim.
impl Sim {
    /// `swap_writepage()`'s first test (mm/page_io.c, v6.12; the same since
    /// v2.6): "stale swap cache pages", a swap-cache folio whose slots no
    /// swap PTE references (`folio_free_swap`: `!folio_swapped`, not under
    /// writeback), are not written. `folio_free_swap` deletes it from the
    /// swap cache (every slot freed with its swap charge) and dirties it
    /// again; `pageout` still returns PAGE_SUCCESS, so `nr_vmscan_write` and
    /// `mm_vmscan_write_folio` count it, but no `pswpout`. Back in
    /// `shrink_folio_list` the dirty folio goes to `keep`, and
    /// `move_folios_to_lru` drops the last reference (the folio is isolated
    /// and unmapped): it is uncharged and freed without counting as
    /// reclaimed (no `pgsteal`). Such folios: the unmapped pages of a
    /// partially mapped folio split before `add_to_swap`
    /// (`crate::huge_memory`: v6.12's "We can free the unmapped pages
    /// without IO"), a swap-cache folio whose every PTE was zapped while it
    /// was isolated. Only for a folio nothing mapped before `try_to_unmap`
    /// (the caller tests that): one any PTE mapped has a swap PTE now.
    /// Returns false (write it) when a swap PTE holds one of its slots.
    #[cold]
    #[inline(never)]
    pub(crate) fn swap_writepage_free_swap(
        &mut self,
        f: FolioId,
        sc: &mut crate::reclaim::ScanControl,
    ) -> bool {
        let fo = self.folios[f];
        if !fo.test(flags::SWAPCACHE) || fo.test(flags::WRITEBACK) {
            return false;
        }
        let swapped = match self.fork {
            Some(_) => self.folio_swapped_forked(f),
            None => self.folio_swapped_ptes(f),
        };
        if swapped {
            return false;
        }
        sc.charge_pageout(self.cost.pageout_ns);
        if self.tp.is_some() {
            let e = crate::tracepoint::TpEvent::WriteFolio {
                pfn: u64::from(self.folios.head_pfn(f)),
                file: false,
            };
            self.trace_vmscan(sc.now(), Some(sc.memcg), e);
        }
        self.count_vm_events(crate::stats::item::NR_VMSCAN_WRITE, fo.nr_pages());
        self.folio_free_swap(f);
        if self.xp.is_some() {
            self.xp_actor(
                f,
                "reclaim",
                "swap_writepage",
                "nothing maps it and no swap PTE holds its slots: folio_free_swap drops \
                 them instead of writing it; dirty again, freed at putback \
                 (move_folios_to_lru), not counted as reclaimed"
                    .to_string(),
            );
        }
        self.free_folio(f);
        sc.charge_free(self.cost.free_ns);
        true
    }
}
