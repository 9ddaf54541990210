//! Swap devices and their slots (mm/swapfile.c, mm/swap_state.c).
//!
//! Each slot is 32 bits: free (0), held by a folio in the swap cache
//! (`SLOT_FOLIO | id`), or holding the shadow entry of an evicted anonymous
//! page (any other value). Since 5.9 the kernel keeps anonymous shadows in the
//! swap cache's xarray exactly like page-cache shadows; a slot that was written
//! but whose shadow was not recorded holds [`SWAP_NO_SHADOW`].

use super::blockdev::BlockDev;
use crate::config::DeviceConfig;
use crate::memcg::MemcgId;

/// Slot value of a swapped-out page with no shadow (shadows disabled).
pub(crate) const SWAP_NO_SHADOW: u32 = 1;

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
    /// Freed slots, reused LIFO.
    free: Vec<u32>,
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
            free: Vec::new(),
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
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(0);
                (self.slots.len() - 1) as u32
            }
        };
        self.set_owner(slot, memcg);
        Some(slot)
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
            self.slots.push(0);
            self.free.push((self.slots.len() - 1) as u32);
        }
        for _ in 0..n {
            self.slots.push(0);
            self.set_owner((self.slots.len() - 1) as u32, memcg);
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
        self.slots[slot as usize] = 0;
        self.used -= 1;
        self.free.push(slot);
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
        self.slots[slot as usize] = 0;
        self.used -= 1;
        self.free.push(slot);
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
    /// 2 bytes per entry: counted as 1 before issue #18 item 6's change).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 4
            + self.free.capacity() * 4
            + self.owner.capacity() * std::mem::size_of::<MemcgId>()
            + self.zeromap.capacity() * 8
    }
}
