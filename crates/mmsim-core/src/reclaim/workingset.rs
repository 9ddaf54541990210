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
//! the node and the workingset bit into an xarray value (mm/workingset.c
//! v6.12, `pack_shadow`): with `EVICTION_SHIFT` = 1 (xarray value tag) + 1
//! (`WORKINGSET_SHIFT`) + `NODES_SHIFT` + `MEM_CGROUP_ID_SHIFT` (16), a 64-bit
//! kernel keeps `EVICTION_BITS` = 64 − `EVICTION_SHIFT` timestamp bits (36 with
//! `CONFIG_NODES_SHIFT` = 10, 46 with 0), and `workingset_init` sets
//! `bucket_order` = `fls_long(totalram − 1) − EVICTION_BITS` only when memory
//! has more pages than that (never below 256 TiB). mmsim keeps 31 bits per
//! slot (bit 31 marks a resident folio), so a shadow is
//! `workingset:1 | memcg id:W | eviction:30 − W` ([`ShadowLayout`]), W chosen
//! per machine as the fewest bits that hold every group's id (ids are dense,
//! index + 1: 1 group → 1 bit and 29 timestamp bits, exact to 2 TiB; 255
//! groups → 8 bits and 22, the layout of earlier versions; 65,535 groups →
//! 16 bits and 14). `bucket_order` is then chosen the kernel's way with the
//! timestamp bits left: distances up to the size of memory are exact while
//! memory has at most 2^(30 − W) pages, and quantised to 2^bucket_order pages
//! beyond — where the kernel is still exact, so a run that quantises says so
//! (`RunResult::shadow_bucket_order`). Larger distances wrap, as the kernel's
//! do at its width. The timestamp takes all 30 − W bits by default
//! (`machine.exact_shadows`); `exact_shadows = false` caps it at the 22 bits
//! of mmsim before 2026-11-29, whose clock laps after 2^22 evictions.

use crate::mem::filemap::SLOT_FOLIO;
use crate::mem::folio::{flags, FolioId, LruList};
use crate::sim::{Balance, Policy, Sim};
use crate::stats::item::*;

/// Bits of a slot a shadow may use: 32 less the resident-folio bit.
const SHADOW_BITS: u32 = 31;
const WORKINGSET_BIT: u32 = 1 << 30;
/// Timestamp bits with `machine.exact_shadows = false`: the fixed layout of
/// earlier versions (8 bits of memcg id, 22 of timestamp).
pub(crate) const FIXED_EVICTION_BITS: u32 = 22;

/// `bucket_order` for a machine of `total_pages` with `eviction_bits`
/// timestamp bits (workingset_init()).
pub(crate) fn bucket_order(total_pages: u64, eviction_bits: u32) -> u32 {
    let fls = 64 - (total_pages.saturating_sub(1)).leading_zeros();
    fls.saturating_sub(eviction_bits)
}

/// How a shadow's 31 bits are shared between the memcg id and the eviction
/// timestamp on this machine, and the timestamp's granularity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ShadowLayout {
    /// Bits of memcg id (≥ 1: id 0 marks "no shadow").
    pub memcg_bits: u32,
    /// Bits of eviction timestamp (`EVICTION_BITS`).
    pub eviction_bits: u32,
    /// Mask of the eviction timestamp (`EVICTION_MASK`).
    pub eviction_mask: u32,
    /// `bucket_order`: log2 of the pages one timestamp step stands for.
    pub bucket_order: u32,
}

impl ShadowLayout {
    /// The layout for `nr_memcgs` groups (ids 1..=nr_memcgs) on a machine of
    /// `total_pages`: the timestamp takes every bit the ids leave when
    /// `exact` (`machine.exact_shadows`), else at most [`FIXED_EVICTION_BITS`].
    pub(crate) fn new(nr_memcgs: usize, total_pages: u64, exact: bool) -> ShadowLayout {
        let memcg_bits = (usize::BITS - nr_memcgs.max(1).leading_zeros()).max(1);
        let mut eviction_bits = SHADOW_BITS - 1 - memcg_bits;
        if !exact {
            eviction_bits = eviction_bits.min(FIXED_EVICTION_BITS);
        }
        ShadowLayout {
            memcg_bits,
            eviction_bits,
            eviction_mask: (1 << eviction_bits) - 1,
            bucket_order: bucket_order(total_pages, eviction_bits),
        }
    }

    /// What a run reports of this layout: None while distances up to the
    /// size of memory are exact (`bucket_order` 0).
    pub(crate) fn quantised(&self) -> Option<crate::result::ShadowQuantised> {
        (self.bucket_order > 0).then_some(crate::result::ShadowQuantised {
            bucket_order: self.bucket_order,
            eviction_bits: self.eviction_bits,
            memcg_id_bits: self.memcg_bits,
        })
    }

    /// `pack_shadow()`.
    #[inline]
    pub(crate) fn pack(&self, s: Shadow) -> u32 {
        debug_assert!(s.memcg_id >= 1 && (s.memcg_id as u32) < 1 << self.memcg_bits);
        (s.workingset as u32) << 30
            | (s.memcg_id as u32) << self.eviction_bits
            | (s.eviction & self.eviction_mask)
    }

    /// `unpack_shadow()`; None for an empty slot, a resident folio, or a slot with no shadow.
    #[inline]
    pub(crate) fn unpack(&self, v: u32) -> Option<Shadow> {
        if v == 0 || v & SLOT_FOLIO != 0 {
            return None;
        }
        let memcg_id = ((v & !WORKINGSET_BIT) >> self.eviction_bits) as u16;
        if memcg_id == 0 {
            return None;
        }
        Some(Shadow {
            eviction: v & self.eviction_mask,
            memcg_id,
            workingset: v & WORKINGSET_BIT != 0,
        })
    }
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

impl Sim {
    /// Sets the shadow layout for the groups now configured (called when a
    /// group is added). Shadows already stored are rewritten in the new
    /// layout — same group id, same timestamp (shifted when `bucket_order`
    /// changes, as the classic clock is; an MGLRU token is kept as it is) —
    /// so a refault reads them as before, up to the quantisation the new
    /// layout imposes. Groups are made before a run begins, so this usually
    /// finds no shadow to rewrite.
    pub(crate) fn update_shadow_layout(&mut self) {
        let new = ShadowLayout::new(
            self.memcgs.len(),
            self.cfg.memory.pages(),
            self.cfg.exact_shadows,
        );
        let old = self.shadow_layout;
        if new == old {
            return;
        }
        self.shadow_layout = new;
        let mglru = matches!(self.policy, Policy::Mglru(_));
        let rewrite = |v: &mut u32| {
            if let Some(mut s) = old.unpack(*v) {
                if !mglru && new.bucket_order > old.bucket_order {
                    s.eviction >>= new.bucket_order - old.bucket_order;
                } else if !mglru {
                    s.eviction <<= old.bucket_order - new.bucket_order;
                }
                s.eviction &= new.eviction_mask;
                *v = new.pack(s);
            }
        };
        for f in &mut self.files {
            f.slots.iter_mut().for_each(rewrite);
        }
        if let Some(swap) = &mut self.swap {
            swap.slots.iter_mut().for_each(rewrite);
        }
    }

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
    ///
    /// Inlined into `remove_mapping` (one call per reclaimed folio).
    #[inline(always)]
    pub(crate) fn workingset_eviction(&mut self, f: FolioId) -> Option<u32> {
        if let Policy::Mglru(_) = self.policy {
            return Some(self.lru_gen_eviction(f));
        }
        let Policy::Classic(rules) = self.policy else {
            return None;
        };
        let fo_memcg = self.folios.memcg(f);
        let fo = &self.folios[f];
        if !fo.is_file() && !rules.anon_workingset {
            return None;
        }
        let ws = rules.pg_workingset && fo.test(flags::WORKINGSET);
        let m = fo_memcg;
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
        let sl = self.shadow_layout;
        let shadow = Shadow {
            eviction: ((eviction >> sl.bucket_order) as u32) & sl.eviction_mask,
            memcg_id: self.memcgs[m as usize].id,
            workingset: ws,
        };
        Some(sl.pack(shadow))
    }

    /// `workingset_test_recent()`: would the folio have stayed resident with
    /// `distance` more slots on the inactive list?
    pub(crate) fn workingset_test_recent(&self, shadow: Shadow, file: bool) -> bool {
        self.workingset_refault_distance(shadow, file)
            .is_some_and(|(distance, size)| distance <= size)
    }

    /// The refault distance of `shadow` and the workingset size it is compared
    /// with in `workingset_test_recent()`; None when the evicting group is gone.
    /// Inlined into `workingset_test_recent` (one call per refault).
    #[inline(always)]
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
        let sl = self.shadow_layout;
        let now = ((age >> sl.bucket_order) as u32) & sl.eviction_mask;
        let distance =
            ((now.wrapping_sub(shadow.eviction) & sl.eviction_mask) as u64) << sl.bucket_order;
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
    ///
    /// The dispatch is inline, so that MGLRU's `lru_gen_refault` and the
    /// classic path below are each their own call (neither pays for the
    /// other's frame).
    #[inline]
    pub(crate) fn workingset_refault(&mut self, f: FolioId, slot: u32) {
        // The kernel calls it only for a slot that held a shadow (`if (shadow)`);
        // both paths below begin by finding none in an empty slot.
        if slot == 0 {
            return;
        }
        if let Policy::Mglru(_) = self.policy {
            return self.lru_gen_refault(f, slot);
        }
        self.workingset_refault_classic(f, slot);
    }

    /// [`Sim::workingset_refault`] of the classic LRU.
    #[inline(never)]
    fn workingset_refault_classic(&mut self, f: FolioId, slot: u32) {
        let Some(shadow) = self.shadow_layout.unpack(slot) else {
            return;
        };
        let Policy::Classic(rules) = self.policy else {
            return;
        };
        if self.xp.is_some() {
            self.xp_count_refault(f);
        }
        let file = self.folios[f].is_file();
        let m = self.folios.memcg(f);
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
        let l = ShadowLayout::new(255, 1 << 20, false);
        assert_eq!((l.memcg_bits, l.eviction_bits, l.bucket_order), (8, 22, 0));
        let s = Shadow {
            eviction: 0x3f_ffff,
            memcg_id: 7,
            workingset: true,
        };
        // The layout of 255 groups is the fixed layout of earlier versions.
        assert_eq!(l.pack(s), 1 << 30 | 7 << 22 | 0x3f_ffff);
        assert_eq!(l.unpack(l.pack(s)), Some(s));
        assert_eq!(l.unpack(0), None);
        assert_eq!(l.unpack(SLOT_FOLIO | 5), None);
        assert_eq!(l.unpack(crate::mem::swap::SWAP_NO_SHADOW), None);
        for (groups, bits) in [(1, 29), (3, 28), (256, 21), (300, 21), (65_535, 14)] {
            let l = ShadowLayout::new(groups, 1 << 20, true);
            assert_eq!(l.eviction_bits, bits, "{groups} groups");
            let s = Shadow {
                eviction: l.eviction_mask,
                memcg_id: groups as u16,
                workingset: true,
            };
            assert_eq!(l.unpack(l.pack(s)), Some(s));
            assert_eq!(l.unpack(crate::mem::swap::SWAP_NO_SHADOW), None);
        }
    }

    #[test]
    fn bucket_order_covers_memory() {
        assert_eq!(bucket_order(1 << 20, 22), 0); // 4 GiB
        assert_eq!(bucket_order(1 << 22, 22), 0); // 16 GiB
        assert_eq!(bucket_order((1 << 22) + 1, 22), 1);
        assert_eq!(bucket_order(6 << 20, 22), 1); // 24 GiB
                                                  // 1 TiB with one group: 29 bits, exact.
        assert_eq!(ShadowLayout::new(1, 1 << 28, true).bucket_order, 0);
        assert_eq!(ShadowLayout::new(1, 1 << 29, true).bucket_order, 0);
        assert_eq!(ShadowLayout::new(1, (1 << 29) + 1, true).bucket_order, 1);
        // With exact_shadows = false: 22 bits, as before (16 GiB exact).
        assert_eq!(ShadowLayout::new(1, 1 << 22, false).bucket_order, 0);
        assert_eq!(ShadowLayout::new(1, 1 << 28, false).bucket_order, 6);
        assert_eq!(
            ShadowLayout::new(255, 1 << 20, false),
            ShadowLayout::new(255, 1 << 20, true)
        );
        // 65,535 groups on 4 GiB: 14 bits, buckets of 64 pages.
        assert_eq!(ShadowLayout::new(65_535, 1 << 20, true).bucket_order, 6);
    }
}
