//! Swap slots of anonymous folios and their owners (mm/swapfile.c,
//! mm/swap_slots.c, mm/swap_cgroup.c, v6.12) with the swap charges of
//! memory cgroups (mm/memcontrol.c).
//!
//! A folio swapped out gets a slot of the swap device ([`crate::mem::swap`])
//! that records the group that swapped it out (`swap_cgroup_record`); the
//! slot is charged to that group's swap counter and its ancestors' (under
//! cgroup v2 up to `memory.swap.max`), and the charge lives as long as the
//! slot: freeing the slot uncharges the owner.

use crate::memcg::{MemcgId, ROOT};
use crate::sim::Sim;

/// Slot allocation and freeing: mm/swap_slots.c, mm/swapfile.c (v6.12).
impl Sim {
    /// `folio_alloc_swap()`: a slot for anonymous folio `f`, charged to its
    /// group and recorded in the slot's owner (`swap_cgroup_record`); None
    /// when the device is full (counted as `memory.swap.events` fail) or the
    /// group is at its `memory.swap.max`.
    pub(crate) fn folio_alloc_swap(&mut self, f: crate::mem::folio::FolioId) -> Option<u32> {
        let m = self.folios[f].memcg;
        let Some(slot) = self.swap.as_mut().and_then(|s| s.alloc(m)) else {
            if self.swap.is_some() {
                self.memcgs[m as usize].stat.swap_fail += 1;
            }
            return None;
        };
        if !self.mem_cgroup_try_charge_swap(m) {
            self.swap.as_mut().unwrap().release(slot);
            return None;
        }
        Some(slot)
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
    #[inline]
    pub(crate) fn swap_free_of(&mut self, f: crate::mem::folio::FolioId, slot: u32) {
        let m = self.folios[f].memcg;
        debug_assert_eq!(self.swap.as_ref().unwrap().owner(slot), m);
        self.swap.as_mut().unwrap().release_owned(slot);
        self.mem_cgroup_uncharge_swap(m);
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
    pub(crate) fn mem_cgroup_try_charge_swap(&mut self, m: MemcgId) -> bool {
        if self.cfg.cgroup_version == crate::config::CgroupVersion::V2 && m != ROOT {
            let mut cur = Some(m);
            while let Some(c) = cur {
                let g = &self.memcgs[c as usize];
                if g.swap_usage >= g.swap_max {
                    let st = &mut self.memcgs[m as usize].stat;
                    st.swap_max += 1;
                    st.swap_fail += 1;
                    return false;
                }
                cur = g.parent;
            }
        }
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &mut self.memcgs[c as usize];
            g.swap_usage += 1;
            cur = g.parent;
        }
        true
    }

    /// `mem_cgroup_uncharge_swap()`: the slot charged to `m` was freed.
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

    /// `mem_cgroup_swap_full()`: the device is more than half full
    /// (`vm_swap_full`), or, under v2, `m` or an ancestor uses at least half
    /// its `memory.swap.max`; then swap-in and activation free the slot.
    pub(crate) fn mem_cgroup_swap_full(&self, m: MemcgId) -> bool {
        if self.swap.as_ref().is_some_and(|s| s.half_full()) {
            return true;
        }
        if self.cfg.cgroup_version == crate::config::CgroupVersion::V2 {
            let mut cur = Some(m);
            while let Some(c) = cur.filter(|&c| c != ROOT) {
                let g = &self.memcgs[c as usize];
                if g.swap_max != u64::MAX && g.swap_usage * 2 >= g.swap_max {
                    return true;
                }
                cur = g.parent;
            }
        }
        false
    }
}
