//! Swap devices and their slots (mm/swapfile.c, mm/swap_state.c).
//!
//! Each slot is 32 bits: held by a folio in the swap cache
//! (`SLOT_FOLIO | id`), holding the shadow entry of an evicted anonymous
//! page (any other value but 0), just allocated (0), or free, when it holds
//! the link of the device's free-slot stack ([`SwapDevice::free_slots`]
//! tells; the value alone does not). Since 5.9 the kernel keeps anonymous shadows in the
//! swap cache's xarray exactly like page-cache shadows; a slot that was written
//! but whose shadow was not recorded holds [`SWAP_NO_SHADOW`].

use super::blockdev::BlockDev;
use crate::config::DeviceConfig;
use crate::memcg::MemcgId;

/// Slot value of a swapped-out page with no shadow (shadows disabled).
pub(crate) const SWAP_NO_SHADOW: u32 = 1;

/// End of the free-slot stack (`SwapDevice::free_head`): no slot index
/// (a device holds fewer than 2^31 slots: a PTE's swap entry is `slot + 1`
/// below `PTE_PRESENT`).
const NO_FREE_SLOT: u32 = u32::MAX;

/// One swap device.
#[derive(Clone, Debug)]
pub(crate) struct SwapDevice {
    /// Slots, grown as they are first used.
    pub slots: Vec<u32>,
    /// The group each slot is charged to (`swap_cgroup`), parallel to
    /// `slots` once a slot is first charged to a group other than the root;
    /// empty until then, and shorter than `slots` where the slots past its
    /// end are the root's: see [`SwapDevice::set_owner`].
    owner: Vec<MemcgId>,
    /// Top of the stack of freed slots, reused LIFO, or [`NO_FREE_SLOT`]:
    /// each free slot's own word in `slots` holds the next one down (issue
    /// #18 item 3: a separate `Vec<u32>` of freed slots cost 4 B per freed
    /// slot at its high-water mark, 2 B per swapped-out page in the
    /// `anon1g` run of BENCHMARKS.md). The kernel keeps no per-slot free
    /// list either: a free slot is one whose `swap_map` count is 0, and its
    /// free clusters are linked through their own `swap_cluster_info`
    /// (`si->free_clusters`, mm/swapfile.c, v6.12). The order is the old
    /// `Vec`'s (push on release, pop on alloc), so every slot number, and
    /// every result, is as before.
    free_head: u32,
    /// `si->zeromap` (v6.12+): one bit per slot whose page was zero-filled
    /// at swap-out, so nothing was written. Empty until a bit is first set
    /// (only under `machine.swap_zero_pages`).
    zeromap: Vec<u64>,
    /// Capacity in slots (pages).
    pub capacity: u64,
    /// Slots in use.
    pub used: u64,
    /// Device timing.
    pub dev: BlockDev,
}

impl SwapDevice {
    /// A swap device of `capacity` pages with the timing of `cfg`.
    pub(crate) fn new(cfg: &DeviceConfig, capacity: u64) -> Self {
        SwapDevice {
            slots: Vec::new(),
            owner: Vec::new(),
            free_head: NO_FREE_SLOT,
            zeromap: Vec::new(),
            capacity,
            used: 0,
            dev: BlockDev::new(cfg),
        }
    }

    /// `get_swap_pages()`: a free slot owned by `memcg`, or None when the
    /// device is full.
    #[inline]
    pub(crate) fn alloc(&mut self, memcg: MemcgId) -> Option<u32> {
        if self.used >= self.capacity {
            return None;
        }
        self.used += 1;
        let slot = match self.free_head {
            NO_FREE_SLOT => self.push_slot(0),
            s => {
                self.free_head = std::mem::take(&mut self.slots[s as usize]);
                s
            }
        };
        self.set_owner(slot, memcg);
        Some(slot)
    }

    /// Appends a slot holding `v` to the slots ever used and returns its
    /// number. Grows the array by a sixteenth at a time (as the folio
    /// arena does), not `Vec`'s doubling: at most ~6 % spare capacity,
    /// where doubling left up to half the array unused. Out of line: once
    /// per slot the device ever uses.
    #[cold]
    #[inline(never)]
    fn push_slot(&mut self, v: u32) -> u32 {
        if self.slots.len() == self.slots.capacity() {
            self.slots.reserve_exact((self.slots.len() / 16).max(1024));
        }
        self.slots.push(v);
        (self.slots.len() - 1) as u32
    }

    /// The word of slot `slot` (a swap-cache folio, a shadow, 0), read
    /// without the bounds check outside debug builds and the crate's tests:
    /// see [`SwapDevice::checked_slot`].
    #[inline(always)]
    pub(crate) fn slot(&self, slot: u32) -> u32 {
        let i = self.checked_slot(slot);
        // SAFETY: `checked_slot`: every slot the caller holds is below `slots.len()`.
        unsafe { *self.slots.get_unchecked(i) }
    }

    /// The word of slot `slot` to write (unchecked as [`SwapDevice::slot`]).
    #[inline(always)]
    pub(crate) fn slot_mut(&mut self, slot: u32) -> &mut u32 {
        let i = self.checked_slot(slot);
        // SAFETY: as [`SwapDevice::slot`].
        unsafe { self.slots.get_unchecked_mut(i) }
    }

    /// `slot` as an index of `slots`, which it is below when the caller
    /// took it from a PTE's swap entry (`slot + 1`) or a swap-cache folio's
    /// `swap` (`slot + 1`): both hold only slot numbers that
    /// [`SwapDevice::alloc`] or [`SwapDevice::alloc_contig`] returned, each
    /// the index of a slot it pushed first (`push_slot`) or of one on the
    /// free-slot stack (a slot pushed earlier); `slots` never shrinks and
    /// a machine's swap device is never replaced, so such a number stays
    /// below `slots.len()` (the kernel's `swp_offset` of an entry it
    /// allocated is below `si->max` likewise). The free-slot stack's own
    /// reads (`alloc`, `push_free`) keep their checks. Debug builds and the
    /// crate's tests (`cfg(test)`, release included) check, so a broken
    /// invariant panics there instead of reading past the array. Issue #18
    /// item 1: the swap fault, the swap-out and the shadow store each index
    /// a slot once per page.
    #[inline(always)]
    fn checked_slot(&self, slot: u32) -> usize {
        let i = slot as usize;
        #[cfg(any(test, debug_assertions))]
        assert!(
            i < self.slots.len(),
            "swap slot {slot} outside the device's {} slots in use",
            self.slots.len()
        );
        i
    }

    /// Puts free slot `slot` on top of the free-slot stack.
    #[inline(always)]
    fn push_free(&mut self, slot: u32) {
        self.slots[slot as usize] = self.free_head;
        self.free_head = slot;
    }

    /// Whether slot `slot` is free (on the free-slot stack, or never used).
    /// O(slots): for tests.
    #[cfg(test)]
    pub(crate) fn is_free(&self, slot: u32) -> bool {
        slot as usize >= self.slots.len() || self.free_slots()[slot as usize]
    }

    /// One flag per slot ever used: free (on the free-slot stack). O(slots):
    /// for checks and tests. Ends the walk after as many links as there are
    /// free slots, so a corrupt stack cannot loop.
    pub(crate) fn free_slots(&self) -> Vec<bool> {
        let mut free = vec![false; self.slots.len()];
        let mut s = self.free_head;
        let listed = self.slots.len() as u64 - self.used;
        for _ in 0..listed {
            match free.get_mut(s as usize) {
                Some(f) if !*f => *f = true,
                _ => break,
            }
            s = self.slots[s as usize];
        }
        free
    }

    /// `get_swap_pages()` for a folio of `n` pages (a power of two): `n`
    /// contiguous slots aligned to `n`, owned by `memcg`, or None. The
    /// kernel takes them from a swap cluster reserved for the order
    /// (v6.10+, mm/swapfile.c); here they come from the device's space never
    /// used yet (the slots skipped to align it join the free slots), so
    /// large swap-outs fall back once that space is gone, as they do in
    /// the kernel once no free cluster is left.
    pub(crate) fn alloc_contig(&mut self, memcg: MemcgId, n: u32) -> Option<u32> {
        let start = (self.slots.len() as u64).next_multiple_of(u64::from(n));
        let end = start + u64::from(n);
        let pad = start - self.slots.len() as u64;
        if end > self.capacity || self.used + u64::from(n) > self.capacity {
            return None;
        }
        for _ in 0..pad {
            let s = self.push_slot(0);
            self.push_free(s);
        }
        for _ in 0..n {
            let s = self.push_slot(0);
            self.set_owner(s, memcg);
        }
        self.used += u64::from(n);
        Some(start as u32)
    }

    /// Marks slots `first..first + n` zero-filled (`swap_zeromap_folio_set`).
    pub(crate) fn zeromap_set(&mut self, first: u32, n: u32) {
        let words = (self.slots.len()).div_ceil(64);
        if self.zeromap.len() < words {
            self.zeromap.resize(words, 0);
        }
        for s in first..first + n {
            self.zeromap[s as usize / 64] |= 1 << (s % 64);
        }
    }

    /// Clears the zero-filled bits of slots `first..first + n`
    /// (`swap_zeromap_folio_clear`, and `swap_range_free` on release).
    #[inline]
    pub(crate) fn zeromap_clear(&mut self, first: u32, n: u32) {
        for s in first..first + n {
            if let Some(w) = self.zeromap.get_mut(s as usize / 64) {
                *w &= !(1 << (s % 64));
            }
        }
    }

    /// Whether slot `slot`'s page was zero-filled at swap-out (`swap_zeromap_batch`).
    #[inline]
    pub(crate) fn zeromap_test(&self, slot: u32) -> bool {
        self.zeromap
            .get(slot as usize / 64)
            .is_some_and(|w| w & (1 << (slot % 64)) != 0)
    }

    /// Releases a slot; returns the group it was charged to (the caller
    /// uncharges it: `Sim::swap_free`).
    #[inline]
    pub(crate) fn release(&mut self, slot: u32) -> MemcgId {
        if !self.zeromap.is_empty() {
            self.zeromap_clear(slot, 1);
        }
        self.used -= 1;
        self.push_free(slot);
        self.owner(slot)
    }

    /// Releases a slot whose owner the caller knows. Inlined into the swap
    /// fault's slot freeing (one per swap-in), which LLVM would otherwise
    /// call out of line.
    #[inline(always)]
    pub(crate) fn release_owned(&mut self, slot: u32) {
        if !self.zeromap.is_empty() {
            self.zeromap_clear(slot, 1);
        }
        self.used -= 1;
        self.push_free(slot);
    }

    /// Charges slot `slot` to `memcg` (`swap_cgroup_record`, mm/swap_cgroup.c,
    /// v6.12). The kernel allocates its map, 2 bytes per slot, at swapon
    /// (`swap_cgroup_swapon`, unless memcg is disabled); here it is not
    /// allocated while every slot charged so far is the root's (id 0), the
    /// one group of a machine without cgroups, so such runs keep no owner
    /// bytes per swapped-out page (issue #18 item 6). The first other group
    /// grows it to the slots in use, the root's entries 0; from then on
    /// every charge is written. [`SwapDevice::owner`] reads a slot past its
    /// end as the root's. Every slot reads back the group last charged, as
    /// with the full map, so results keep their bits. Rule test:
    /// `rule_tests::swap_owner::the_owner_map_is_allocated_at_the_first_non_root_charge`.
    #[inline]
    fn set_owner(&mut self, slot: u32, memcg: MemcgId) {
        if memcg == 0 && self.owner.is_empty() {
            return;
        }
        if self.owner.len() < self.slots.len() {
            self.owner.resize(self.slots.len(), 0);
        }
        self.owner[slot as usize] = memcg;
    }

    /// The group slot `slot` is charged to (`lookup_swap_cgroup_id`).
    #[inline]
    pub(crate) fn owner(&self, slot: u32) -> MemcgId {
        self.owner.get(slot as usize).copied().unwrap_or(0)
    }

    /// Where slot `slot`'s owner is kept, for a prefetch (None: the root's,
    /// kept nowhere).
    #[inline]
    pub(crate) fn owner_ref(&self, slot: u32) -> Option<&MemcgId> {
        self.owner.get(slot as usize)
    }

    /// `mem_cgroup_swap_full()` / `vm_swap_full()`: more than half the slots in use.
    #[inline]
    pub(crate) fn half_full(&self) -> bool {
        self.used * 2 > self.capacity
    }

    /// Free slots (`get_nr_swap_pages()`).
    #[inline]
    pub(crate) fn nr_free(&self) -> u64 {
        self.capacity - self.used
    }

    /// Bytes of simulator memory for the slot arrays (the owner map at its
    /// 2 bytes per entry: counted as 1 before issue #18 item 6's change; the
    /// free-slot stack lives in the slots since item 3's).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 4
            + self.owner.capacity() * std::mem::size_of::<MemcgId>()
            + self.zeromap.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DeviceKind;

    /// The slot word, read and written without a bounds check outside
    /// tests, keeps the check in them: the slots `alloc` returned read back
    /// what was written; one past the slots in use (inside the array's
    /// spare capacity, where an unchecked read would not fail) panics.
    #[test]
    #[should_panic(expected = "swap slot 2 outside the device's 2 slots in use")]
    fn a_slot_past_the_device_panics_in_tests() {
        let mut d = SwapDevice::new(&DeviceConfig::of(DeviceKind::Ssd), 64);
        let (a, b) = (d.alloc(0).unwrap(), d.alloc(0).unwrap());
        *d.slot_mut(b) = 7;
        assert_eq!((a, b, d.slot(a), d.slot(b)), (0, 1, 0, 7));
        assert!(d.slots.capacity() > 2);
        let _ = d.slot(b + 1);
    }
}
