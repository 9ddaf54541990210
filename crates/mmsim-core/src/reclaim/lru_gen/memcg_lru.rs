//! The memcg LRU of global reclaim (`pgdat->memcg_lru`, mm/vmscan.c,
//! v6.3+; v6.1 walks the groups in tree order).
//!
//! Models `MEMCG_LRU_*` verdicts, `lru_gen_rotate_memcg`, `shrink_one`,
//! `shrink_many`, and keeping the LRU in step with the group tree
//! (`lru_gen_online_memcg` / `lru_gen_offline_memcg`, as
//! `memcg_lru_sync`).

use super::*;
use crate::stats::item::*;

/// `MEMCG_NR_GENS`: generations of the memcg LRU.
pub(crate) const MEMCG_NR_GENS: usize = 3;
/// `MEMCG_NR_BINS`: random bins per generation.
pub(crate) const MEMCG_NR_BINS: usize = 8;

/// A `shrink_one` verdict (`MEMCG_LRU_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemcgLruOp {
    /// Soft limit exceeded (not modelled under v2 cgroups): head of its list.
    #[allow(dead_code)] // kept to mirror MEMCG_LRU_HEAD; no path sets it yet
    Head,
    /// Reclaim it last in this generation.
    Tail,
    /// Offlined: back to the old generation's head.
    #[allow(dead_code)] // kept to mirror MEMCG_LRU_OLD; memcg offlining is not modelled
    Old,
    /// Aged, protected or exhausted: to the young generation.
    Young,
}

/// `lrugen->seg`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum MemcgSeg {
    /// No segment.
    #[default]
    None,
    /// `MEMCG_LRU_HEAD`.
    Head,
    /// `MEMCG_LRU_TAIL`.
    Tail,
}

/// A lruvec's place in the memcg LRU (`lrugen->gen`, `seg`, its bin).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LruvecMemcgLru {
    /// In the memcg LRU (`lru_gen_online_memcg` ran).
    pub online: bool,
    /// Its generation (seq % 3).
    pub gen: u8,
    /// Its segment.
    pub seg: MemcgSeg,
    /// Its bin.
    pub bin: u8,
}

/// The node's memcg LRU (`pgdat->memcg_lru`, v6.3+).
#[derive(Clone, Debug, Default)]
pub(crate) struct MemcgLru {
    /// `seq`: old generation = seq % 3, young = (seq + 1) % 3.
    pub seq: u64,
    /// `fifo[gen][bin]`: groups, head first.
    pub fifo: [[Vec<MemcgId>; MEMCG_NR_BINS]; MEMCG_NR_GENS],
    /// `nr_memcgs[gen]`.
    pub nr_memcgs: [u64; MEMCG_NR_GENS],
    /// State of the bin generator (xorshift; the kernel uses get_random).
    pub rng: u64,
    /// Reused scratch list.
    pub scratch: Vec<MemcgId>,
}

impl MemcgLru {
    /// `get_memcg_gen(seq)`.
    pub(crate) fn old_gen(&self) -> usize {
        (self.seq % MEMCG_NR_GENS as u64) as usize
    }
    /// `get_memcg_gen(seq + 1)`.
    pub(crate) fn young_gen(&self) -> usize {
        ((self.seq + 1) % MEMCG_NR_GENS as u64) as usize
    }
    /// `get_random_u32_below(MEMCG_NR_BINS)`, deterministic.
    pub(super) fn random_bin(&mut self) -> usize {
        let mut x = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        self.rng = x;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((x ^ (x >> 31)) % MEMCG_NR_BINS as u64) as usize
    }
}

impl Sim {
    /// `lru_gen_online_memcg()` for groups not in the memcg LRU yet: the
    /// tail of a random bin of the old generation (in group order, with the
    /// machine's seeded generator, so runs repeat).
    pub(crate) fn memcg_lru_sync(&mut self) {
        for m in 0..self.memcgs.len() {
            if self.memcgs[m].lruvec.lrugen.memcg_lru.online {
                continue;
            }
            let gen = self.lru_gen.memcg_lru.old_gen();
            let bin = self.lru_gen.memcg_lru.random_bin();
            let l = &mut self.memcgs[m].lruvec.lrugen.memcg_lru;
            *l = LruvecMemcgLru {
                online: true,
                gen: gen as u8,
                seg: MemcgSeg::None,
                bin: bin as u8,
            };
            self.lru_gen.memcg_lru.fifo[gen][bin].push(m as MemcgId);
            self.lru_gen.memcg_lru.nr_memcgs[gen] += 1;
        }
    }

    /// `lru_gen_rotate_memcg()`: applies a `shrink_one` verdict to group `m`:
    /// HEAD/TAIL mark its segment; OLD/YOUNG move it to the old/young
    /// generation (head for OLD, tail otherwise) in a random bin. When the
    /// old generation empties, the memcg LRU's seq advances.
    pub(crate) fn lru_gen_rotate_memcg(&mut self, m: MemcgId, op: MemcgLruOp) {
        let ml = &mut self.lru_gen.memcg_lru;
        let cur = self.memcgs[m as usize].lruvec.lrugen.memcg_lru;
        let old = cur.gen as usize;
        let (seg, new) = match op {
            MemcgLruOp::Head => (MemcgSeg::Head, old),
            MemcgLruOp::Tail => (MemcgSeg::Tail, old),
            MemcgLruOp::Old => (MemcgSeg::None, ml.old_gen()),
            MemcgLruOp::Young => (MemcgSeg::None, ml.young_gen()),
        };
        let bin = ml.random_bin();
        let list = &mut ml.fifo[old][cur.bin as usize];
        if let Some(i) = list.iter().position(|&x| x == m) {
            list.remove(i);
        }
        let list = &mut ml.fifo[new][bin];
        if matches!(op, MemcgLruOp::Head | MemcgLruOp::Old) {
            list.insert(0, m);
        } else {
            list.push(m);
        }
        ml.nr_memcgs[old] -= 1;
        ml.nr_memcgs[new] += 1;
        if ml.nr_memcgs[old] == 0 && old == ml.old_gen() {
            ml.seq += 1;
        }
        self.memcgs[m as usize].lruvec.lrugen.memcg_lru = LruvecMemcgLru {
            online: true,
            gen: new as u8,
            seg,
            bin: bin as u8,
        };
    }

    /// `shrink_one()`: reclaims from group `m` and says where it goes in the
    /// memcg LRU: YOUNG below memory.min or after aging; below memory.low,
    /// TAIL the first time (then reclaimed, with a `low` event); None while
    /// it is still sizable; else TAIL once, then YOUNG.
    pub(super) fn shrink_one(&mut self, m: MemcgId, sc: &mut ScanControl) -> Option<MemcgLruOp> {
        let root = crate::memcg::ROOT;
        if self.memcg_below_min(root, m) {
            return Some(MemcgLruOp::Young);
        }
        let seg = self.memcgs[m as usize].lruvec.lrugen.memcg_lru.seg;
        if self.memcg_below_low(root, m) {
            if seg != MemcgSeg::Tail {
                return Some(MemcgLruOp::Tail);
            }
            self.count_memcg_events(m, MEMCG_LOW, 1);
        }
        sc.memcg = m;
        let young = self.try_to_shrink_lruvec(m, sc);
        if self.kmem.is_some() {
            self.shrink_slab_shadow(m, sc.priority, sc.start + sc.elapsed());
        }
        if !self.thp.split_queues.is_empty() {
            self.shrink_slab_deferred_split(m, sc.priority);
        }
        if young {
            return Some(MemcgLruOp::Young);
        }
        let sw = self.lru_gen_swappiness(m, sc);
        if (self.lrugen(m).evictable_pages(sw) >> sc.priority) > 0 {
            return None;
        }
        Some(if seg != MemcgSeg::Tail {
            MemcgLruOp::Tail
        } else {
            MemcgLruOp::Young
        })
    }

    /// `shrink_many()`: global reclaim over the memcg LRU (v6.3+): from a
    /// random bin of the old generation, each group in bin order gets
    /// `shrink_one` and is rotated by its verdict; then the other bins of
    /// that generation; stops when `should_abort_scan`.
    pub(super) fn shrink_many(&mut self, sc: &mut ScanControl) {
        self.memcg_lru_sync();
        for m in 0..self.memcgs.len() {
            self.memcg_calculate_protection(crate::memcg::ROOT, m as MemcgId);
        }
        let gen = self.lru_gen.memcg_lru.old_gen();
        let first = self.lru_gen.memcg_lru.random_bin();
        let mut members = std::mem::take(&mut self.lru_gen.memcg_lru.scratch);
        for k in 0..MEMCG_NR_BINS {
            let bin = (first + k) % MEMCG_NR_BINS;
            members.clear();
            members.extend_from_slice(&self.lru_gen.memcg_lru.fifo[gen][bin]);
            for &m in &members {
                if self.memcgs[m as usize].lruvec.lrugen.memcg_lru.gen as usize != gen {
                    continue;
                }
                let op = self.shrink_one(m, sc);
                if let Some(op) = op {
                    self.lru_gen_rotate_memcg(m, op);
                }
                if self.should_abort_scan(sc) {
                    self.lru_gen.memcg_lru.scratch = members;
                    return;
                }
            }
        }
        self.lru_gen.memcg_lru.scratch = members;
    }
}
