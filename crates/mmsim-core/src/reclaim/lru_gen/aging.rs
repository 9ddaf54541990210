//! The aging: creating and retiring generations (mm/vmscan.c, v6.1, v6.12
//! and v6.14).
//!
//! Models `folio_inc_gen`, `lru_gen_move`, `inc_min_seq`, `inc_max_seq`,
//! `try_to_inc_max_seq`, `try_to_inc_min_seq`, and `lru_gen_age_node`
//! (kswapd's aging with the `min_ttl_ms` working-set protection).

use super::*;

impl Sim {
    /// `folio_inc_gen()`: moves a folio of min_seq's generation to
    /// min_seq + 1 (or keeps the generation a walker promoted it to),
    /// clearing refs and PG_referenced (v6.1, v6.12: PG_workingset too); with
    /// `reclaiming`, sets PG_reclaim. Returns the new generation; the caller
    /// moves it between lists.
    pub(super) fn folio_inc_gen(&mut self, m: MemcgId, f: FolioId, reclaiming: bool) -> usize {
        let v = self.lru_gen_version();
        let fo = &mut self.folios[f];
        let ty = fo.is_file() as usize;
        let nr = fo.nr_pages() as i64;
        let lg = &mut self.memcgs[m as usize].lruvec.lrugen;
        let old_gen = lru_gen_from_seq(lg.min_seq[ty]);
        if let Some(g) = folio_lru_gen(fo) {
            if g != old_gen {
                return g;
            }
        }
        let new_gen = (old_gen + 1) % MAX_NR_GENS as usize;
        set_folio_gen(fo, Some(new_gen));
        set_folio_refs(fo, 0);
        fo.clear(flags::REFERENCED);
        if v != MglruVersion::V6_14 {
            fo.clear(flags::WORKINGSET);
        }
        if reclaiming {
            fo.set(flags::RECLAIM);
        }
        lg.nr_pages[old_gen][ty] -= nr;
        lg.nr_pages[new_gen][ty] += nr;
        new_gen
    }

    /// Moves folio `f` from whatever MGLRU list it is on to the head or tail
    /// of generation `gen`'s list of its type (`list_move`, `list_move_tail`).
    pub(super) fn lru_gen_move(&mut self, m: MemcgId, f: FolioId, gen: usize, tail: bool) {
        let tag = self.folios.lru(f);
        let (g0, ty) = (
            ((tag - LRU_GEN_TAG) / 2) as usize,
            ((tag - LRU_GEN_TAG) % 2) as usize,
        );
        let lg = &mut self.memcgs[m as usize].lruvec.lrugen;
        lg.lists[g0][ty].unlink(&mut self.folios, f);
        let l = &mut lg.lists[gen][ty];
        if tail {
            l.push_tail(&mut self.folios, f, lru_gen_tag(gen, ty));
        } else {
            l.push_head(&mut self.folios, f, lru_gen_tag(gen, ty));
        }
    }

    /// `inc_min_seq()`: frees the oldest slot of type `ty` for a new
    /// generation by moving its folios to min_seq + 1 (tail), counting them
    /// as protected per tier (v6.14; not the lazily promoted workingset).
    /// A type eviction may not take from under `swappiness` keeps its folios
    /// where they are (cold/hot inversion accepted).
    pub(super) fn inc_min_seq(&mut self, m: MemcgId, ty: usize, swappiness: u32) {
        let v = self.lru_gen_version();
        let skip =
            (ty == FILE && swappiness == SWAPPINESS_ANON_ONLY) || (ty == ANON && swappiness == 0);
        if !skip {
            let old_gen = lru_gen_from_seq(self.lrugen(m).min_seq[ty]);
            loop {
                let f = self.lrugen(m).lists[old_gen][ty].tail;
                if f == NIL {
                    break;
                }
                let fo = self.folios[f];
                let refs = folio_lru_refs(v, &fo);
                let ws = fo.test(flags::WORKINGSET);
                let new_gen = self.folio_inc_gen(m, f, false);
                self.lru_gen_move(m, f, new_gen, true);
                if v == MglruVersion::V6_14 && !(refs == LRU_REFS_MASK as u64 + 1 && ws) {
                    let tier = lru_tier_from_refs(v, refs, ws);
                    self.lrugen_mut(m).protected[ty][tier] += 1;
                }
            }
        }
        self.reset_ctrl_pos(m, ty, true);
        self.lrugen_mut(m).min_seq[ty] += 1;
    }

    /// `inc_max_seq()`: makes a new generation: frees the oldest slot of a
    /// type whose window is full, stamps the new slot's birth time and
    /// increments max_seq. Nothing moves: every folio left behind is now one
    /// generation older. Returns false if `seq` is no longer max_seq.
    pub(crate) fn inc_max_seq(&mut self, m: MemcgId, seq: u64, swappiness: u32, now: u64) -> bool {
        if seq != self.lrugen(m).max_seq {
            return false;
        }
        for ty in [ANON, FILE] {
            if self.lrugen(m).nr_gens(ty) == MAX_NR_GENS {
                self.inc_min_seq(m, ty, swappiness);
            }
        }
        for ty in [ANON, FILE] {
            self.reset_ctrl_pos(m, ty, false);
        }
        let lg = self.lrugen_mut(m);
        lg.timestamps[lru_gen_from_seq(lg.max_seq + 1)] = now;
        lg.max_seq += 1;
        self.lru_gen.stats.aging += 1;
        self.lru_gen_sample(now);
        true
    }

    /// `try_to_inc_max_seq()`: one aging round for group `m`: unless another
    /// walker already finished the round for `seq` (`mm_state.seq`), walk
    /// the page tables of the group's tasks (if the MM-walk capability is
    /// enabled; otherwise `iterate_mm_list_nowalk`), then `inc_max_seq`.
    pub(crate) fn try_to_inc_max_seq(
        &mut self,
        m: MemcgId,
        seq: u64,
        swappiness: u32,
        force_scan: bool,
        sc: &mut ScanControl,
    ) -> bool {
        let lg = self.lrugen(m);
        if seq <= lg.mm_seq {
            return false;
        }
        if self.lru_gen.enabled & LRU_GEN_MM_WALK != 0 {
            if sc.who == Reclaimer::Kswapd {
                // v6.1: `walk->can_swap = can_swap` of pgdat->mm_walk.
                self.lru_gen.kswapd_walk_can_swap = swappiness != 0;
            } else {
                // `set_mm_walk(NULL…)`: another reclaimer's walker, kept in
                // `current->reclaim_state` until `clear_mm_walk()`.
                sc.mm_walk = Some(swappiness != 0);
            }
            self.walk_mm(m, seq, swappiness, force_scan, sc);
        }
        self.lrugen_mut(m).mm_seq = seq;
        self.lru_lock_reclaim(sc, m, 0);
        let now = sc.now();
        self.inc_max_seq(m, seq, swappiness, now)
    }

    /// `try_to_inc_min_seq()`: advances each evictable type's min_seq over
    /// empty generations (keeping at least MIN_NR_GENS). v6.14: then keeps
    /// the types within one generation of max_seq − 2 of each other; v6.1
    /// and v6.12: anon's min_seq may not pass file's. Returns whether
    /// anything moved.
    pub(crate) fn try_to_inc_min_seq(&mut self, m: MemcgId, swappiness: u32) -> bool {
        let v = self.lru_gen_version();
        let lg = self.lrugen(m);
        let mut min_seq = lg.min_seq;
        let types: &[usize] = match swappiness {
            0 => &[FILE],
            SWAPPINESS_ANON_ONLY => &[ANON],
            _ => &[ANON, FILE],
        };
        for &ty in types {
            while min_seq[ty] + MIN_NR_GENS <= lg.max_seq {
                if !lg.lists[lru_gen_from_seq(min_seq[ty])][ty].is_empty() {
                    break;
                }
                min_seq[ty] += 1;
            }
        }
        match v {
            MglruVersion::V6_14 => {
                if (1..=200).contains(&swappiness) {
                    let seq = lg.max_seq - MIN_NR_GENS;
                    if min_seq[ANON] > seq && min_seq[FILE] < seq {
                        min_seq[ANON] = seq;
                    } else if min_seq[FILE] > seq && min_seq[ANON] < seq {
                        min_seq[FILE] = seq;
                    }
                }
            }
            MglruVersion::V6_1 | MglruVersion::V6_12 => {
                if swappiness != 0 {
                    min_seq[ANON] = min_seq[ANON].min(min_seq[FILE]);
                    min_seq[FILE] = min_seq[ANON].max(lg.min_seq[FILE]);
                }
            }
        }
        let mut success = false;
        for ty in [ANON, FILE] {
            if min_seq[ty] <= self.lrugen(m).min_seq[ty] {
                continue;
            }
            self.reset_ctrl_pos(m, ty, true);
            self.lrugen_mut(m).min_seq[ty] = min_seq[ty];
            success = true;
        }
        success
    }

    /// `lru_gen_age_node()`, run by kswapd each `balance_pgdat` iteration.
    ///
    /// v6.14 and v6.12: `set_initial_priority`, then with `min_ttl_ms` set: if no
    /// group is reclaimable (not below memory.min, sizable at this priority,
    /// and its oldest evictable generation born at least min_ttl ago), invoke
    /// the OOM killer instead of evicting the working set.
    /// v6.1: skipped every other call unless eviction found aging needed
    /// (`memcgs_need_aging`); `age_lruvec` ages each group that needs it
    /// (min_ttl: only groups whose oldest *file* generation is old enough)
    /// and kills if none passed the min_ttl test.
    pub(crate) fn lru_gen_age_node(&mut self, sc: &mut ScanControl) {
        let min_ttl = self.lru_gen.min_ttl_ns;
        let now = sc.now();
        match self.lru_gen_version() {
            // 6.12's `lruvec_is_reclaimable()` reads the birth of min_seq[file]
            // where 6.14 reads the evictable min_seq (a departure with min_ttl).
            MglruVersion::V6_14 | MglruVersion::V6_12 => {
                self.set_initial_priority(sc);
                let mut reclaimable = min_ttl == 0;
                let mut cur = Some(crate::memcg::ROOT);
                while let Some(m) = cur {
                    cur = self.mem_cgroup_iter(crate::memcg::ROOT, m);
                    self.memcg_calculate_protection(crate::memcg::ROOT, m);
                    if reclaimable {
                        continue;
                    }
                    let sw = self.lru_gen_swappiness(m, sc);
                    let lg = self.lrugen(m);
                    let birth = lg.timestamps[lru_gen_from_seq(lg.evictable_min_seq(sw))];
                    let sizable = (lg.evictable_pages(sw) >> sc.priority) > 0;
                    reclaimable = now >= birth + min_ttl
                        && sizable
                        && !self.memcg_below_min(crate::memcg::ROOT, m);
                }
                if !reclaimable {
                    self.lru_gen.stats.min_ttl_oom += 1;
                    self.out_of_memory(None);
                }
            }
            MglruVersion::V6_1 => {
                if !self.lru_gen.memcgs_need_aging {
                    self.lru_gen.memcgs_need_aging = true;
                    return;
                }
                let mut success = false;
                let mut cur = Some(crate::memcg::ROOT);
                while let Some(m) = cur {
                    cur = self.mem_cgroup_iter(crate::memcg::ROOT, m);
                    self.memcg_calculate_protection(crate::memcg::ROOT, m);
                    if self.memcg_below_min(crate::memcg::ROOT, m) {
                        continue;
                    }
                    let sw = self.lru_gen_swappiness(m, sc);
                    let (need_aging, n) = self.should_run_aging(m, sw);
                    if min_ttl > 0 {
                        let lg = self.lrugen(m);
                        let birth = lg.timestamps[lru_gen_from_seq(lg.min_seq[FILE])];
                        if now < birth + min_ttl {
                            continue;
                        }
                        if (n >> sc.priority) == 0 && sc.priority != DEF_PRIORITY {
                            continue;
                        }
                    }
                    if need_aging {
                        let max_seq = self.lrugen(m).max_seq;
                        self.try_to_inc_max_seq(m, max_seq, sw, false, sc);
                    }
                    success = true;
                }
                if !success && min_ttl > 0 {
                    self.lru_gen.stats.min_ttl_oom += 1;
                    self.out_of_memory(None);
                }
            }
        }
    }
}
