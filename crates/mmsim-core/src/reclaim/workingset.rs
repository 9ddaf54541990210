//! Workingset detection (mm/workingset.c): shadow entries and refault distance.
//!
//! Each lruvec has a clock, `nonresident_age`, that advances with evictions
//! and activations. Evicting a folio stores the clock in a shadow entry in
//! the freed page-cache or swap slot; a refault computes the distance
//! `now − then` and activates the folio when the distance fits in the
//! workingset (`workingset_test_recent`, v6.x):
//!
//! * file refault: distance ≤ active_file (+ active_anon + inactive_anon if
//!   the evicting memcg still has swap),
//! * anon refault: distance ≤ active_file + inactive_file (+ active_anon if swap).
//!
//! The v4.9 (3.15–5.7) rule, used by `scanned-rotated`, is distance ≤
//! active_file, file pages only, with no PG_workingset and the clock read
//! after its increment (`atomic_long_inc_return`).
//!
//! Shadow packing. The kernel packs `eviction >> bucket_order`, the memcg id,
//! the node and the workingset bit into an xarray value (§4.3 of the spec).
//! mmsim keeps 31 bits per slot, so a shadow is
//! `workingset:1 | memcg id:8 | eviction:22`, and `bucket_order` is chosen as
//! the kernel chooses it (`fls_long(totalram − 1) − timestamp_bits`, floored
//! at 0) with 22 timestamp bits: distances up to the size of memory are
//! exact on machines up to 16 GiB and quantised to 2^bucket_order pages
//! beyond, and larger distances wrap as the kernel's do.

use crate::mem::filemap::SLOT_FOLIO;
use crate::mem::folio::{flags, FolioId, LruList};
use crate::sim::{Balance, Policy, Sim};
use crate::stats::item::*;

/// Bits of eviction timestamp in a shadow.
pub(crate) const EVICTION_BITS: u32 = 22;
/// Mask of the eviction timestamp (`EVICTION_MASK`).
pub(crate) const EVICTION_MASK: u32 = (1 << EVICTION_BITS) - 1;
const MEMCG_SHIFT: u32 = EVICTION_BITS;
const MEMCG_MASK: u32 = 0xff;
const WORKINGSET_BIT: u32 = 1 << 30;

/// `bucket_order` for a machine of `total_pages` (workingset_init()).
pub(crate) fn bucket_order(total_pages: u64) -> u32 {
    let fls = 64 - (total_pages.saturating_sub(1)).leading_zeros();
    fls.saturating_sub(EVICTION_BITS)
}

/// A decoded shadow entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shadow {
    /// `nonresident_age >> bucket_order` at eviction, masked.
    pub eviction: u32,
    /// `mem_cgroup_id` of the reclaim target that evicted it.
    pub memcg_id: u16,
    /// PG_workingset of the evicted folio.
    pub workingset: bool,
}

impl Shadow {
    /// `pack_shadow()`.
    pub(crate) fn pack(self) -> u32 {
        debug_assert!(self.memcg_id >= 1 && self.memcg_id as u32 <= MEMCG_MASK);
        (self.workingset as u32) << 30
            | (self.memcg_id as u32 & MEMCG_MASK) << MEMCG_SHIFT
            | (self.eviction & EVICTION_MASK)
    }
    /// `unpack_shadow()`; None for an empty slot, a resident folio, or a slot with no shadow.
    pub(crate) fn unpack(v: u32) -> Option<Shadow> {
        if v == 0 || v & SLOT_FOLIO != 0 {
            return None;
        }
        let memcg_id = ((v >> MEMCG_SHIFT) & MEMCG_MASK) as u16;
        if memcg_id == 0 {
            return None;
        }
        Some(Shadow {
            eviction: v & EVICTION_MASK,
            memcg_id,
            workingset: v & WORKINGSET_BIT != 0,
        })
    }
}

impl Sim {
    /// `workingset_age_nonresident()`: advances the clock of group `m`'s
    /// lruvec and of every ancestor's.
    #[inline]
    pub(crate) fn workingset_age_nonresident(&mut self, m: crate::memcg::MemcgId, nr: u64) {
        let mut cur = Some(m);
        while let Some(c) = cur {
            let g = &mut self.memcgs[c as usize];
            g.lruvec.nonresident_age += nr;
            cur = g.parent;
        }
    }

    /// `workingset_eviction()`: the shadow to leave in the slot of an evicted
    /// folio, or None when this era keeps no shadow for it.
    pub(crate) fn workingset_eviction(&mut self, f: FolioId) -> Option<u32> {
        if let Policy::Mglru(_) = self.policy {
            return Some(self.lru_gen_eviction(f));
        }
        let Policy::Classic(rules) = self.policy else {
            return None;
        };
        let fo = &self.folios[f];
        if !fo.is_file() && !rules.anon_workingset {
            return None;
        }
        let ws = rules.pg_workingset && fo.test(flags::WORKINGSET);
        let m = fo.memcg;
        // `workingset_age_nonresident(lruvec, folio_nr_pages(folio))`: a large
        // folio, anonymous or file, ages the clock by its page count (v5.9's
        // `thp_nr_pages`, v6.x's `folio_nr_pages`).
        let nr = fo.nr_pages();
        let eviction = if rules.eviction_reads_before_inc {
            let e = self.memcgs[m as usize].lruvec.nonresident_age;
            self.workingset_age_nonresident(m, nr);
            e
        } else {
            self.workingset_age_nonresident(m, nr);
            self.memcgs[m as usize].lruvec.nonresident_age
        };
        let shadow = Shadow {
            eviction: ((eviction >> self.bucket_order) as u32) & EVICTION_MASK,
            memcg_id: self.memcgs[m as usize].id,
            workingset: ws,
        };
        Some(shadow.pack())
    }

    /// `workingset_test_recent()`: would the folio have stayed resident with
    /// `distance` more slots on the inactive list?
    pub(crate) fn workingset_test_recent(&self, shadow: Shadow, file: bool) -> bool {
        self.workingset_refault_distance(shadow, file)
            .is_some_and(|(distance, size)| distance <= size)
    }

    /// The refault distance of `shadow` and the workingset size it is compared
    /// with in `workingset_test_recent()`; None when the evicting group is gone.
    pub(crate) fn workingset_refault_distance(
        &self,
        shadow: Shadow,
        file: bool,
    ) -> Option<(u64, u64)> {
        let Policy::Classic(rules) = self.policy else {
            return None;
        };
        // The eviction lruvec: the group named in the shadow, if it still
        // exists (the kernel then compares against its own clock and its
        // hierarchical list sizes); otherwise the refault is not recent.
        let m = (shadow.memcg_id as usize)
            .checked_sub(1)
            .filter(|&m| m < self.memcgs.len())?;
        let age = self.memcgs[m].lruvec.nonresident_age;
        // `lruvec_page_state()`: 6.12's ratelimited flush reads the last 2 s flush.
        let lv = self.lruvec_page_state(m as crate::memcg::MemcgId);
        let now = ((age >> self.bucket_order) as u32) & EVICTION_MASK;
        let distance =
            ((now.wrapping_sub(shadow.eviction) & EVICTION_MASK) as u64) << self.bucket_order;
        let mut size = lv.size(LruList::ActiveFile);
        if rules.anon_workingset {
            if !file {
                size += lv.size(LruList::InactiveFile);
            }
            if self.mem_cgroup_get_nr_swap_pages(m as crate::memcg::MemcgId) > 0 {
                size += lv.size(LruList::ActiveAnon);
                if file {
                    size += lv.size(LruList::InactiveAnon);
                }
            }
        }
        Some((distance, size))
    }

    /// `workingset_refault()`: called for a new folio about to be added to
    /// the LRU, with the value its slot held. Counts the refault and, if the
    /// distance test passes, activates the folio and, for a folio that was
    /// workingset before eviction, restores PG_workingset and charges the IO
    /// cost to its type.
    pub(crate) fn workingset_refault(&mut self, f: FolioId, slot: u32) {
        if let Policy::Mglru(_) = self.policy {
            return self.lru_gen_refault(f, slot);
        }
        let Some(shadow) = Shadow::unpack(slot) else {
            return;
        };
        let Policy::Classic(rules) = self.policy else {
            return;
        };
        if self.xp.is_some() {
            self.xp_count_refault(f);
        }
        let file = self.folios[f].is_file();
        let m = self.folios[f].memcg;
        // Counted in pages: a large page-cache folio refaults whole.
        let nr = self.folios[f].nr_pages();
        let item = if file {
            WORKINGSET_REFAULT_FILE
        } else {
            WORKINGSET_REFAULT_ANON
        };
        self.count_events(m, item, nr);
        if self.memcg_stats.ratelimited {
            // workingset_test_recent(): mem_cgroup_flush_stats_ratelimited(eviction_memcg).
            if let Some(e) = (shadow.memcg_id as usize)
                .checked_sub(1)
                .filter(|&e| e < self.memcgs.len())
            {
                self.mem_cgroup_flush_stats_ratelimited(e as crate::memcg::MemcgId, self.clock);
            }
        }
        if self.xp.is_some() {
            self.xp_workingset_refault(f, shadow, file);
        }
        if !self.workingset_test_recent(shadow, file) {
            return;
        }
        self.folios[f].set(flags::ACTIVE);
        self.workingset_age_nonresident(m, nr);
        self.vm_workingset_activate(m, file, nr);
        if shadow.workingset {
            self.folios[f].set(flags::WORKINGSET);
            if let Balance::Cost(_) = rules.balance {
                self.lru_note_cost(m, file, nr, 0);
            }
            let item = if file {
                WORKINGSET_RESTORE_FILE
            } else {
                WORKINGSET_RESTORE_ANON
            };
            self.count_events(m, item, nr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadow_round_trips() {
        let s = Shadow {
            eviction: 0x3f_ffff,
            memcg_id: 7,
            workingset: true,
        };
        assert_eq!(Shadow::unpack(s.pack()), Some(s));
        assert_eq!(Shadow::unpack(0), None);
        assert_eq!(Shadow::unpack(SLOT_FOLIO | 5), None);
        assert_eq!(Shadow::unpack(crate::mem::swap::SWAP_NO_SHADOW), None);
    }

    #[test]
    fn bucket_order_covers_memory() {
        assert_eq!(bucket_order(1 << 20), 0); // 4 GiB
        assert_eq!(bucket_order(1 << 22), 0); // 16 GiB
        assert_eq!(bucket_order((1 << 22) + 1), 1);
        assert_eq!(bucket_order(6 << 20), 1); // 24 GiB
    }
}
