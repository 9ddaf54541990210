//! Shadow tokens and refaults of the multi-gen LRU (mm/workingset.c, v6.1,
//! v6.12 and v6.14).
//!
//! Models `lru_gen_eviction` (the shadow entry: memcg, min_seq, tier),
//! `lru_gen_refault` (PID refault counters, PG_workingset, tier
//! promotion) and the `WORKINGSET_ACTIVATE` accounting
//! (`vm_workingset_activate`).

use super::*;
use crate::stats::item::*;

impl Sim {
    /// Counts a refault activation (`WORKINGSET_ACTIVATE_*`) in group `m`'s
    /// lruvec, its `memory.stat` and `/proc/vmstat`; shared by the classic
    /// `workingset_refault` and `lru_gen_refault`.
    pub(crate) fn vm_workingset_activate(&mut self, m: MemcgId, file: bool, nr: u64) {
        self.memcgs[m as usize].lruvec.workingset_activate[file as usize] += nr;
        let item = if file {
            WORKINGSET_ACTIVATE_FILE
        } else {
            WORKINGSET_ACTIVATE_ANON
        };
        self.count_events(m, item, nr);
    }

    /// `lru_gen_eviction()`: the shadow of an evicted folio: a token of the
    /// type's min_seq and the folio's refs − 1, the folio's own group, and
    /// PG_workingset (v6.1, v6.12: whether refs > 0); counts `evicted[tier]`.
    /// Inlined into `workingset_eviction`.
    #[inline(always)]
    pub(crate) fn lru_gen_eviction(&mut self, f: FolioId) -> u32 {
        let v = self.lru_gen_version();
        let fo = self.folios[f];
        let ty = fo.is_file() as usize;
        let refs = folio_lru_refs(v, &fo);
        let ws = fo.test(flags::WORKINGSET);
        let tier = lru_tier_from_refs(v, refs, ws);
        let m = self.folios.memcg(f);
        let lg = self.lrugen_mut(m);
        let token = (lg.min_seq[ty] << LRU_REFS_WIDTH) | refs.saturating_sub(1);
        lg.evicted[ty][tier] += 1;
        let sl = self.shadow_layout;
        sl.pack(crate::reclaim::workingset::Shadow {
            eviction: token as u32 & sl.eviction_mask,
            memcg_id: self.memcgs[m as usize].id,
            workingset: match v {
                MglruVersion::V6_14 => ws,
                MglruVersion::V6_1 | MglruVersion::V6_12 => refs > 0,
            },
        })
    }

    /// `lru_gen_refault()`: a folio comes back whose slot held `shadow`.
    /// Ignored unless it refaults into the group that evicted it. Counts
    /// WORKINGSET_REFAULT; if recent — v6.14: max_seq within MAX_NR_GENS of
    /// the token's seq (`lru_gen_test_recent`); v6.1 and v6.12: the token's
    /// seq is still min_seq — counts `refaulted[tier]`, and restores
    /// PG_workingset (v6.14: if the shadow had it, else the refs; v6.1: in a
    /// fault or with saturated refs; v6.12 and, with `fix_underprotected`,
    /// 6.1.69+: in a fault or from refs 3, and with refs saturated too). v6.1
    /// counts REFAULT only for recent refaults. v6.12 counts
    /// WORKINGSET_ACTIVATE for every recent refault.
    #[inline(never)]
    pub(crate) fn lru_gen_refault(&mut self, f: FolioId, shadow: u32) {
        with_version!(self.lru_gen_version(), X => self.lru_gen_refault_v::<X>(f, shadow))
    }

    /// [`Sim::lru_gen_refault`] for version `X` ([`super::version`]).
    #[inline(always)]
    fn lru_gen_refault_v<X: Ver>(&mut self, f: FolioId, shadow: u32) {
        let Some(s) = self.shadow_layout.unpack(shadow) else {
            return;
        };
        if self.xp.is_some() {
            self.xp_count_refault(f);
        }
        let v = X::V;
        // "mm/mglru: fix underprotected page cache" (6.1.69+ with the option; 6.12).
        let fixed = v == MglruVersion::V6_12
            || (v == MglruVersion::V6_1 && self.lru_gen.fix_underprotected);
        let m = self.folios.memcg(f);
        if self.memcgs[m as usize].id != s.memcg_id {
            if self.xp.is_some() {
                self.xp_lru_gen_refault_elsewhere(f);
            }
            return;
        }
        let file = self.folios[f].is_file();
        let ty = file as usize;
        let token = s.eviction as u64;
        let seq_mask = (self.shadow_layout.eviction_mask >> LRU_REFS_WIDTH) as u64;
        let lg = self.lrugen(m);
        let recent = match v {
            MglruVersion::V6_14 => {
                (lg.max_seq & seq_mask).abs_diff(token >> LRU_REFS_WIDTH) < MAX_NR_GENS
            }
            MglruVersion::V6_1 | MglruVersion::V6_12 => {
                token >> LRU_REFS_WIDTH == lg.min_seq[ty] & seq_mask
            }
        };
        if v != MglruVersion::V6_1 || recent {
            let item = if file {
                WORKINGSET_REFAULT_FILE
            } else {
                WORKINGSET_REFAULT_ANON
            };
            self.count_events(m, item, 1);
        }
        if self.xp.is_some() {
            self.xp_lru_gen_refault(f, m, token, s.workingset, recent);
        }
        if !recent {
            return;
        }
        let low = token & LRU_REFS_MASK as u64;
        let (refs, tier, restore) = match v {
            MglruVersion::V6_14 => {
                let refs = low + 1;
                (
                    refs,
                    lru_tier_from_refs(v, refs, s.workingset),
                    s.workingset,
                )
            }
            MglruVersion::V6_1 | MglruVersion::V6_12 => {
                let refs = low + s.workingset as u64;
                // 6.1.69+ (`fix_underprotected`) and 6.12: from refs
                // BIT(LRU_REFS_WIDTH) - 1, "they would have been protected by
                // sort_folio()".
                let restore = self.lru_gen.in_fault
                    || if fixed {
                        refs >= (1 << LRU_REFS_WIDTH) - 1
                    } else {
                        refs == 1 << LRU_REFS_WIDTH
                    };
                (refs, lru_tier_from_refs(v, refs, false), restore)
            }
        };
        self.lrugen_mut(m).refaulted[ty][tier] += 1;
        // 6.14+ ("mm/mglru: rework workingset protection"): "see folio_add_lru()
        // where folio_set_active() will be called", only in a fault; before it
        // (6.12, 6.13) every recent refault counted WORKINGSET_ACTIVATE.
        if v == MglruVersion::V6_12
            || (v == MglruVersion::V6_14 && (self.lru_gen.in_fault || self.lru_gen.activate_recent))
        {
            let nr = if file { self.folios[f].nr_pages() } else { 1 };
            self.vm_workingset_activate(m, file, nr);
        }
        if restore {
            if fixed {
                // set_mask_bits(LRU_REFS_MASK | PG_workingset): refs saturated, so
                // that sort_folio() protects it.
                set_folio_refs(&mut self.folios[f], LRU_REFS_MASK);
            }
            self.folios[f].set(flags::WORKINGSET);
            let item = if file {
                WORKINGSET_RESTORE_FILE
            } else {
                WORKINGSET_RESTORE_ANON
            };
            self.count_events(m, item, 1);
        } else if v == MglruVersion::V6_14 {
            set_folio_refs(&mut self.folios[f], (refs - 1) as u16);
        }
    }

    /// `mmsim explain`'s story of a refault into another group than the one
    /// that evicted the folio (out of line: only with `--explain`).
    #[cold]
    #[inline(never)]
    fn xp_lru_gen_refault_elsewhere(&mut self, f: FolioId) {
        let text = "refault into another group than the one that evicted it: ignored \
                    (not counted, not recent)"
            .to_string();
        self.xp_refault(f, "lru_gen_refault", text);
    }

    /// `mmsim explain`'s story of [`Sim::lru_gen_refault`]'s test of the
    /// shadow token (out of line: only with `--explain`).
    #[cold]
    #[inline(never)]
    fn xp_lru_gen_refault(&mut self, f: FolioId, m: MemcgId, token: u64, ws: bool, recent: bool) {
        let v = self.lru_gen_version();
        let ty = self.folios[f].is_file() as usize;
        let lg = self.lrugen(m);
        let text = format!(
            "shadow token seq {} refs {} (workingset {}); now min_seq {} max_seq {}: {}",
            token >> LRU_REFS_WIDTH,
            token & LRU_REFS_MASK as u64,
            ws,
            lg.min_seq[ty],
            lg.max_seq,
            match (v, recent) {
                (MglruVersion::V6_14, true) => "recent (max_seq within MAX_NR_GENS of the \
                                                token): refaulted[tier] counted"
                    .to_string(),
                (MglruVersion::V6_1 | MglruVersion::V6_12, true) => {
                    "recent (the token's seq is still min_seq): refaulted[tier] counted".to_string()
                }
                (_, false) => "not recent: counted only, no protection".to_string(),
            }
        );
        self.xp_refault(f, "lru_gen_refault", text);
    }
}
