//! The PID controller that chooses the type and tiers to evict
//! (mm/vmscan.c, v6.1, v6.12 and v6.14; v6.12 as v6.1).
//!
//! Models `struct ctrl_pos`, `positive_ctrl_err`, `read_ctrl_pos`,
//! `reset_ctrl_pos`, `get_tier_idx` and `get_type_to_scan`.

use super::*;

/// `struct ctrl_pos`: one side of the PID controller's comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CtrlPos {
    /// Refaults (average plus the current generation's).
    pub refaulted: u64,
    /// Evicted plus protected (average plus current).
    pub total: u64,
    /// The gain (weight).
    pub gain: u64,
}

/// `positive_ctrl_err()`: true when the process variable `pv` is not worse
/// than the set point `sp` (its refault rate over its gain is not above
/// the set point's), or has too few refaults to act on.
pub(crate) fn positive_ctrl_err(sp: CtrlPos, pv: CtrlPos) -> bool {
    pv.refaulted < MIN_LRU_BATCH
        || (pv.refaulted as u128) * (sp.total as u128 + MIN_LRU_BATCH as u128) * sp.gain as u128
            <= (sp.refaulted as u128 + 1) * pv.total as u128 * pv.gain as u128
}

impl Sim {
    /// `reset_ctrl_pos()` for `NR_HIST_GENS` = 1: with `carryover` (min_seq
    /// advancing), fold the generation's counters into the moving averages
    /// (smoothing 1/2) and clear them; without, nothing to do.
    pub(super) fn reset_ctrl_pos(&mut self, m: MemcgId, ty: usize, carryover: bool) {
        if !carryover {
            return;
        }
        let v = self.lru_gen_version();
        let lg = self.lrugen_mut(m);
        for tier in 0..MAX_NR_TIERS {
            lg.avg_refaulted[ty][tier] = (lg.avg_refaulted[ty][tier] + lg.refaulted[ty][tier]) / 2;
            let protected = match v {
                MglruVersion::V6_14 => lg.protected[ty][tier],
                MglruVersion::V6_1 | MglruVersion::V6_12 if tier > 0 => lg.protected[ty][tier - 1],
                MglruVersion::V6_1 | MglruVersion::V6_12 => 0,
            };
            lg.avg_total[ty][tier] =
                (lg.avg_total[ty][tier] + lg.evicted[ty][tier] + protected) / 2;
        }
        lg.refaulted[ty] = [0; MAX_NR_TIERS];
        lg.evicted[ty] = [0; MAX_NR_TIERS];
        lg.protected[ty] = [0; MAX_NR_TIERS];
    }

    /// `read_ctrl_pos()`: refaults and total of `ty`'s tier `tier` (or of
    /// all tiers for `MAX_NR_TIERS`, v6.14) with a gain. v6.1 counts
    /// `protected[tier − 1]` in a tier's total.
    pub(crate) fn read_ctrl_pos(&self, m: MemcgId, ty: usize, tier: usize, gain: u64) -> CtrlPos {
        let v = self.lru_gen_version();
        let lg = self.lrugen(m);
        let tiers = if tier < MAX_NR_TIERS {
            tier..tier + 1
        } else {
            0..MAX_NR_TIERS
        };
        let mut pos = CtrlPos {
            refaulted: 0,
            total: 0,
            gain,
        };
        for i in tiers {
            pos.refaulted += lg.avg_refaulted[ty][i] + lg.refaulted[ty][i];
            pos.total += lg.avg_total[ty][i] + lg.evicted[ty][i];
            pos.total += match v {
                MglruVersion::V6_14 => lg.protected[ty][i],
                MglruVersion::V6_1 | MglruVersion::V6_12 if i > 0 => lg.protected[ty][i - 1],
                MglruVersion::V6_1 | MglruVersion::V6_12 => 0,
            };
        }
        pos
    }

    /// `get_tier_idx()`: the highest tier eviction may take from: tiers
    /// above it are protected. Tier 0 is the set point; a higher tier is
    /// protected once its refault rate exceeds tier 0's by the gain margin
    /// (v6.14 gains 2:3, v6.1 1:2).
    pub(crate) fn get_tier_idx(&self, m: MemcgId, ty: usize) -> usize {
        let (gs, gp) = match self.lru_gen_version() {
            MglruVersion::V6_14 => (2, 3),
            MglruVersion::V6_1 | MglruVersion::V6_12 => (1, 2),
        };
        let sp = self.read_ctrl_pos(m, ty, 0, gs);
        for tier in 1..MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(m, ty, tier, gp);
            if !positive_ctrl_err(sp, pv) {
                return tier - 1;
            }
        }
        MAX_NR_TIERS - 1
    }

    /// Type selection, returning (type, tier_idx if already decided).
    ///
    /// v6.14 `get_type_to_scan()`: swappiness ≤ 1 → file, ≥ 200 → anon,
    /// else the PID comparison over all tiers with gains (swappiness,
    /// 200 − swappiness): file when its refault rate is not worse.
    /// v6.1 and v6.12 (`isolate_folios` + `get_type_to_scan`; 6.12 also picks
    /// file without `__GFP_IO`, not modelled): 0 → file; anon when
    /// its min_seq is older; 1 → file; 200 → anon; else compare tier 0 of
    /// both types, and the chosen type's tiers against the other's tier 0.
    pub(crate) fn get_type_to_scan(&self, m: MemcgId, swappiness: u32) -> (usize, Option<usize>) {
        let s = swappiness as u64;
        match self.lru_gen_version() {
            MglruVersion::V6_14 => {
                if swappiness <= 1 {
                    return (FILE, None);
                }
                if swappiness >= 200 {
                    return (ANON, None);
                }
                let sp = self.read_ctrl_pos(m, ANON, MAX_NR_TIERS, s);
                let pv = self.read_ctrl_pos(m, FILE, MAX_NR_TIERS, 200 - s);
                (
                    if positive_ctrl_err(sp, pv) {
                        FILE
                    } else {
                        ANON
                    },
                    None,
                )
            }
            MglruVersion::V6_1 | MglruVersion::V6_12 => {
                let lg = self.lrugen(m);
                if swappiness == 0 {
                    return (FILE, None);
                }
                if lg.min_seq[ANON] < lg.min_seq[FILE] {
                    return (ANON, None);
                }
                if swappiness == 1 {
                    return (FILE, None);
                }
                if swappiness == 200 {
                    return (ANON, None);
                }
                let gain = [s, 200 - s];
                let sp = self.read_ctrl_pos(m, ANON, 0, gain[ANON]);
                let pv = self.read_ctrl_pos(m, FILE, 0, gain[FILE]);
                let ty = positive_ctrl_err(sp, pv) as usize;
                let sp = self.read_ctrl_pos(m, 1 - ty, 0, gain[1 - ty]);
                let mut tier = 1;
                while tier < MAX_NR_TIERS {
                    let pv = self.read_ctrl_pos(m, ty, tier, gain[ty]);
                    if !positive_ctrl_err(sp, pv) {
                        break;
                    }
                    tier += 1;
                }
                (ty, Some(tier - 1))
            }
        }
    }
}
