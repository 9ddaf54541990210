//! `get_scan_count()` of mm/vmscan.c: how many pages to scan on each
//! evictable LRU list at a priority, and the SCAN_FRACT arithmetic of the
//! v5.8+ cost model ([`cost_fractions`]) and of v4.9's
//! recent_scanned / recent_rotated ([`scanned_rotated_fractions`]).

use crate::reclaim::{Reclaimer, ScanBalance, ScanControl, SWAP_CLUSTER_MAX};
use crate::sim::{Balance, ClassicRules, Sim};

impl Sim {
    /// `get_scan_count()`: how many pages to scan on each evictable list.
    // The decision cascades repeat SCAN_FILE on purpose: each branch is one of the kernel's.
    #[allow(clippy::if_same_then_else)]
    pub(crate) fn get_scan_count(&mut self, sc: &mut ScanControl, rules: ClassicRules) -> [u64; 4] {
        // memory.min/low: scan a protected group in proportion to its
        // unprotected share (apply_proportional_protection).
        let (emin, elow) = self.memcg_protection(sc.target, sc.memcg);
        let protection = if emin > 0 || elow > 0 {
            let p = if !sc.memcg_low_reclaim && elow > emin {
                sc.memcg_low_skipped = true;
                elow
            } else {
                emin
            };
            Some((p, self.memcgs[sc.memcg as usize].usage.max(p)))
        } else {
            None
        };
        // mem_cgroup_swappiness(): a v1 group's own, else vm.swappiness.
        let swappiness = sc.proactive_swappiness.unwrap_or(
            self.memcgs[sc.memcg as usize]
                .swappiness
                .unwrap_or(self.cfg.swappiness),
        ) as u64;
        let lv = &self.memcgs[sc.memcg as usize].lruvec;
        let cgroup = sc.who == Reclaimer::Memcg;
        let sizes = lv.evictable_sizes();
        let (balance, fraction, denominator) = match rules.balance {
            Balance::Cost(_) => {
                let b = if !sc.may_swap || !self.can_reclaim_anon(sc.memcg) {
                    ScanBalance::File
                } else if cgroup && swappiness == 0 {
                    ScanBalance::File
                } else if sc.priority == 0 && swappiness != 0 {
                    ScanBalance::Equal
                } else if sc.file_is_tiny {
                    ScanBalance::Anon
                } else if sc.cache_trim_mode {
                    ScanBalance::File
                } else {
                    ScanBalance::Fract
                };
                let (ap, fp) = cost_fractions(swappiness, sc.anon_cost, sc.file_cost);
                (b, [ap, fp], ap + fp)
            }
            Balance::ScannedRotated => {
                let file_pages = sizes[2] + sizes[3];
                let b = if !sc.may_swap || !self.can_reclaim_anon(sc.memcg) {
                    ScanBalance::File
                } else if cgroup && swappiness == 0 {
                    ScanBalance::File
                } else if sc.priority == 0 && swappiness != 0 {
                    ScanBalance::Equal
                } else if !cgroup && file_pages + self.node.free <= self.node.wmark_high {
                    ScanBalance::Anon
                } else if !self.inactive_is_low(sc.memcg, true) && (sizes[2] >> sc.priority) > 0 {
                    ScanBalance::File
                } else {
                    ScanBalance::Fract
                };
                let lv = &mut self.memcgs[sc.memcg as usize].lruvec;
                let (ap, fp) = scanned_rotated_fractions(
                    swappiness,
                    sizes,
                    &mut lv.recent_scanned,
                    &mut lv.recent_rotated,
                    b == ScanBalance::Fract,
                );
                (b, [ap, fp], ap + fp + 1)
            }
        };
        // v4.9 force_scan: memcg reclaim scans at least SWAP_CLUSTER_MAX when the shift rounds to 0.
        let force_scan = rules.balance == Balance::ScannedRotated && cgroup;
        let mut nr = [0u64; 4];
        for pass in 0..2 {
            let mut some = false;
            for (i, &size) in sizes.iter().enumerate() {
                let file = i >= 2;
                let mut scan = match protection {
                    Some((p, cgroup_size)) => {
                        let s =
                            size - (size as u128 * p as u128 / (cgroup_size as u128 + 1)) as u64;
                        s.max(SWAP_CLUSTER_MAX)
                    }
                    None => size,
                };
                scan >>= sc.priority;
                if scan == 0 && pass == 1 && force_scan {
                    scan = size.min(SWAP_CLUSTER_MAX);
                }
                scan = match balance {
                    ScanBalance::Equal => scan,
                    ScanBalance::Fract => scan * fraction[file as usize] / denominator.max(1),
                    ScanBalance::File if !file => 0,
                    ScanBalance::Anon if file => 0,
                    _ => scan,
                };
                some |= scan > 0;
                nr[i] = scan;
            }
            if some || !force_scan {
                break;
            }
        }
        if self.xp.is_some() {
            self.xp_scan_count(sc, balance, fraction, denominator, nr);
        }
        nr
    }
}

/// SCAN_FRACT of v5.8+ `get_scan_count()`: (ap, fp) with the one-third floor
/// ("mm: vmscan: limit the range of LRU type balancing").
pub(crate) fn cost_fractions(swappiness: u64, anon_cost: u64, file_cost: u64) -> (u64, u64) {
    let total_cost = anon_cost + file_cost;
    let anon = total_cost + anon_cost;
    let file = total_cost + file_cost;
    let total = anon + file;
    let ap = swappiness * (total + 1) / (anon + 1);
    let fp = (200 - swappiness) * (total + 1) / (file + 1);
    (ap, fp)
}

/// SCAN_FRACT of v4.9 `get_scan_count()`: (ap, fp) from recent_scanned /
/// recent_rotated, halving each type's history when it exceeds a quarter
/// of that type's pages (only when SCAN_FRACT is reached, as in the kernel).
pub(crate) fn scanned_rotated_fractions(
    swappiness: u64,
    sizes: [u64; 4],
    scanned: &mut [u64; 2],
    rotated: &mut [u64; 2],
    fract: bool,
) -> (u64, u64) {
    if !fract {
        return (0, 0);
    }
    let anon = sizes[0] + sizes[1];
    let file = sizes[2] + sizes[3];
    if scanned[0] > anon / 4 {
        scanned[0] /= 2;
        rotated[0] /= 2;
    }
    if scanned[1] > file / 4 {
        scanned[1] /= 2;
        rotated[1] /= 2;
    }
    let ap = swappiness * (scanned[0] + 1) / (rotated[0] + 1);
    let fp = (200 - swappiness) * (scanned[1] + 1) / (rotated[1] + 1);
    (ap, fp)
}
