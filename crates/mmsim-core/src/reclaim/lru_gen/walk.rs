//! Promotion by accessed bits: the aging's page-table walk and the
//! reclaimer's look-around (mm/vmscan.c, v6.1, v6.12 and v6.14).
//!
//! Models `walk_mm` (with `walk_pte_range` folded in) and its Bloom
//! filters of hot PTE tables (`bloom_filters[]`, `test_bloom_filter`,
//! `update_bloom_filter`), `walk_update_folio`, `suitable_to_scan`,
//! `lru_gen_look_around`, and the rmap side of `folio_check_references`
//! under MGLRU (`lru_gen_check_references`).

use super::*;
use crate::rmap::pte_present_young;
use crate::stats::item::*;

/// `PAGEVEC_SIZE` of v6.1 (15; 31 from 6.5): v6.1's look-around activates
/// fewer promoted neighbours than this one by one.
const PAGEVEC_SIZE_V6_1: u32 = 15;

/// A Bloom filter of hot PTE tables (`bloom_filters[]`): 2^15 bits, two
/// 15-bit keys from a 30-bit hash of the table's identity.
#[derive(Clone, Debug)]
pub(crate) struct BloomFilter(Box<[u64]>);

impl BloomFilter {
    pub(super) fn new() -> Self {
        BloomFilter(vec![0u64; 1 << (BLOOM_FILTER_SHIFT - 6)].into_boxed_slice())
    }
    /// `get_item_key()`: the PTE table `table` of VMA `vma` (the kernel
    /// hashes the PMD entry's address).
    pub(super) fn keys(vma: VmaId, table: u32) -> [usize; 2] {
        let h = ((vma as u64) << 32 | table as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 34;
        let mask = (1u64 << BLOOM_FILTER_SHIFT) - 1;
        [
            (h & mask) as usize,
            ((h >> BLOOM_FILTER_SHIFT) & mask) as usize,
        ]
    }
    pub(super) fn test(&self, vma: VmaId, table: u32) -> bool {
        Self::keys(vma, table)
            .iter()
            .all(|&k| self.0[k / 64] & (1 << (k % 64)) != 0)
    }
    pub(super) fn insert(&mut self, vma: VmaId, table: u32) {
        for k in Self::keys(vma, table) {
            self.0[k / 64] |= 1 << (k % 64);
        }
    }
}

/// The accessed-bit scan of up to 64 consecutive PTEs (what `walk_pte_range`
/// and `lru_gen_look_around` test one by one): bit `k` is set if `ptes[k]`
/// is present and young. Sixteen PTEs at a time, so that the compiler turns
/// the test into vector compares and a mask; the callers then visit only the
/// young PTEs, in order. The same PTEs in the same order as a loop over every
/// PTE, since nothing a visit does makes another PTE young.
#[inline]
pub(crate) fn young_mask(ptes: &[u32]) -> u64 {
    debug_assert!(ptes.len() <= 64);
    let mut mask = 0u64;
    let mut chunks = ptes.chunks_exact(16);
    let mut base = 0;
    for c in &mut chunks {
        let c: &[u32; 16] = c.try_into().expect("a chunk of 16");
        let mut m = 0u16;
        for (k, &p) in c.iter().enumerate() {
            m |= (pte_present_young(p) as u16) << k;
        }
        mask |= (m as u64) << base;
        base += 16;
    }
    for (k, &p) in chunks.remainder().iter().enumerate() {
        mask |= (pte_present_young(p) as u64) << (base + k);
    }
    mask
}

impl Sim {
    /// `walk_update_folio()`: a young PTE of folio `f` was found and cleared.
    /// A dirty PTE dirties the folio (unless it is anon not in swap cache).
    /// With a walker (kswapd, or aging) the generation is updated in place;
    /// without one (v6.14), `lru_gen_set_refs` decides and the folio is
    /// activated through `folio_activate` (re-added young). v6.1 updates in
    /// place in both cases (the model's default look-around; with
    /// `mglru_look_around_activate` look-around follows 6.1's own rule,
    /// [`Sim::look_around_activate`]; v6.12's look-around is
    /// [`Sim::look_around_v6_12`]).
    pub(super) fn walk_update_folio(
        &mut self,
        f: FolioId,
        new_gen: usize,
        pte_dirty: bool,
        walker: bool,
    ) {
        self.walk_folio_dirty(f, pte_dirty);
        if walker || self.lru_gen_version() != MglruVersion::V6_14 {
            self.folio_update_gen(f, new_gen);
        } else if self.lru_gen_set_refs(f) && folio_lru_gen(&self.folios[f]) != Some(new_gen) {
            self.lru_gen_folio_activate(f);
        }
    }

    /// The first step of `walk_update_folio()` (and of v6.1's and v6.12's
    /// look-around loops): a dirty PTE dirties folio `f`, unless it is anon
    /// not in the swap cache.
    #[inline]
    fn walk_folio_dirty(&mut self, f: FolioId, pte_dirty: bool) {
        let fo = self.folios[f];
        if pte_dirty && !fo.test(flags::DIRTY) && (fo.is_file() || fo.test(flags::SWAPCACHE)) {
            self.folio_mark_dirty_mapped(f);
        }
    }

    /// `folio_activate()` under MGLRU (mm/swap.c: v6.1 `folio_activate_fn`,
    /// v6.12 `lru_activate`): a folio on an LRU list, neither active nor
    /// unevictable, is deleted (`lru_gen_del_folio`), marked PG_active and
    /// re-added (`lru_gen_add_folio`: a young generation, at the head),
    /// counting `PGACTIVATE` for the node and its group (`__count_vm_events`
    /// and `__count_memcg_events`). The per-CPU batch that delays the move
    /// until it holds `PAGEVEC_SIZE` folios is drained at once (not
    /// modelled). Returns whether it moved.
    pub(super) fn lru_gen_folio_activate(&mut self, f: FolioId) -> bool {
        let fo_memcg = self.folios.memcg(f);
        let fo = self.folios[f];
        if !fo.test(flags::LRU) || fo.test(flags::ACTIVE | flags::UNEVICTABLE) {
            return false;
        }
        self.lru_gen_del_folio(f, false);
        self.folios[f].set(flags::ACTIVE);
        self.lru_gen_add_folio(f, false);
        self.count_events(fo_memcg, PGACTIVATE, fo.nr_pages());
        true
    }

    /// The step `lru_gen_look_around` and `walk_pte_range` (mm/vmscan.c,
    /// v6.1+) share, over the PTEs `[from, to)` of `vma` (at most 64; a PTE
    /// past the table reads as none): each young PTE mapping a folio of group
    /// `m` on MGLRU's lists has its accessed bit cleared
    /// (`ptep_test_and_clear_young`) and its folio moved to `new_gen`
    /// (`walk_update_folio`; `walker` as there). Without `can_swap` an anon
    /// folio is passed over, its PTE left young (`get_pfn_folio()`'s "file
    /// VMAs can contain anon pages from COW", v6.1 and v6.12). With
    /// `--explain`, every folio but `except` gets the story `why`. Returns
    /// the PTEs cleared.
    #[inline]
    fn clear_young_ptes(
        &mut self,
        vma: VmaId,
        (from, to): (u32, u32),
        (m, new_gen, walker, can_swap): (MemcgId, usize, bool, bool),
        sc: &ScanControl,
        except: Option<FolioId>,
        why: &str,
    ) -> u64 {
        let take = |go: &crate::mem::folio::Folio| {
            folio_lru_gen(go).is_some() && (can_swap || go.is_file())
        };
        self.for_each_young_pte(vma, from, to, m, take, |s, g, _, p| {
            s.walk_update_folio(g, new_gen, p & PTE_DIRTY != 0, walker);
            if s.xp.is_some() && except != Some(g) {
                s.xp_lru_gen_young(g, sc, why);
            }
        })
    }

    /// The young PTEs among `[lo, hi)` of `vma` that map a folio of group
    /// `m` accepted by `take`: each is read again (a visit may have cleaned
    /// a later PTE: writeback), cleared (`ptep_test_and_clear_young`) and
    /// handed to `visit` with its folio, its offset from `lo` and its value
    /// before the clear. The loop all look-around and walk variants share.
    /// Returns the PTEs cleared.
    #[inline(always)]
    fn for_each_young_pte(
        &mut self,
        vma: VmaId,
        lo: u32,
        hi: u32,
        m: MemcgId,
        take: impl Fn(&crate::mem::folio::Folio) -> bool,
        mut visit: impl FnMut(&mut Self, FolioId, u32, u32),
    ) -> u64 {
        let mut bits = {
            let ptes = &self.vmas[vma as usize].ptes;
            let end = (hi as usize).min(ptes.len());
            young_mask(&ptes[(lo as usize).min(end)..end])
        };
        let mut young = 0;
        while bits != 0 {
            let k = bits.trailing_zeros();
            bits &= bits - 1;
            let i = lo + k;
            let p = self.vmas[vma as usize].ptes[i as usize];
            if !pte_present_young(p) {
                continue;
            }
            let g = p & PTE_FOLIO_MASK;
            if self.folios.memcg(g) != m || !take(&self.folios[g]) {
                continue;
            }
            self.ptep_test_and_clear_young(vma, i);
            young += 1;
            visit(self, g, k, p);
        }
        young
    }

    /// `suitable_to_scan()`: a PTE table is worth walking next time if at
    /// least one in 8 of its PTEs was young (x86: 64-byte lines / 8-byte PTEs).
    #[inline]
    pub(super) fn suitable_to_scan(total: u64, young: u64) -> bool {
        young * 8 >= total
    }

    /// `lru_gen_look_around()`: the rmap found PTE `index` of `vma` mapping
    /// the folio `f` under eviction. If it is young: clear it and scan up to
    /// 64 neighbouring PTEs of the same PTE table (the PMD's range clipped to
    /// the VMA, centred on `index`), promoting young folios of this group
    /// (`walk_update_folio` with max_seq's generation) and feeding a hot
    /// table to the Bloom filter of max_seq. Returns whether the target was
    /// young. v6.1 also counts the isolated target itself (PG_referenced);
    /// v6.12 counts it in `young` but leaves its flags to
    /// `folio_check_references()`. Anon neighbours (COW copies in a file
    /// VMA) are passed over when `get_pfn_folio()`'s `can_swap` is false:
    /// v6.12 (6.12.107): when the target is a file folio; v6.1 (6.1.176):
    /// for a reclaimer whose walker (kswapd's, or the one another
    /// reclaimer's aging left in `current->reclaim_state`) last walked
    /// without swap; v6.14: never.
    ///
    /// `pte` is the target's PTE as the caller's `page_vma_mapped_walk`
    /// found it (the kernel passes its `pvmw`). Inline up to the accessed
    /// bit, which most targets under eviction do not have; the scan of a
    /// young target's neighbours is out of line.
    #[inline(always)]
    pub(crate) fn lru_gen_look_around(
        &mut self,
        f: FolioId,
        vma: VmaId,
        index: u32,
        pte: u32,
        sc: &mut ScanControl,
    ) -> bool {
        if !pte_present_young(pte) {
            return false;
        }
        self.lru_gen_look_around_young(f, vma, index, sc)
    }

    /// [`Sim::lru_gen_look_around`] of a young target.
    #[inline(never)]
    fn lru_gen_look_around_young(
        &mut self,
        f: FolioId,
        vma: VmaId,
        index: u32,
        sc: &mut ScanControl,
    ) -> bool {
        self.ptep_test_and_clear_young(vma, index);
        let v = self.lru_gen_version();
        if v == MglruVersion::V6_1 {
            self.folios[f].set(flags::REFERENCED);
        }
        self.lru_gen.stats.look_around += 1;
        let m = self.folios.memcg(f);
        let len = self.vmas[vma as usize].len;
        let start = index & !(PTRS_PER_PTE - 1);
        let end = (start + PTRS_PER_PTE).min(len);
        if end - start == 1 {
            return true;
        }
        let (mut lo, mut hi) = (start, end);
        let half = MIN_LRU_BATCH as u32 / 2;
        if hi - lo > MIN_LRU_BATCH as u32 {
            if index - lo < half {
                hi = lo + MIN_LRU_BATCH as u32;
            } else if hi - index < half {
                lo = hi - MIN_LRU_BATCH as u32;
            } else {
                lo = index - half;
                hi = index + half;
            }
        }
        sc.charge_pt_walk((hi - lo) as u64, self.cost.pte_walk_ns);
        // `current->reclaim_state->mm_walk`: kswapd's, or the one another
        // reclaimer's aging allocated in this `lru_gen_shrink_lruvec()`
        // (v6.12, v6.14: `lru_gen_shrink_node()`), which it keeps until
        // `clear_mm_walk()`.
        let walker = sc.who == Reclaimer::Kswapd || sc.mm_walk.is_some();
        // get_pfn_folio()'s can_swap, which skips anon neighbours (COW copies
        // in a file VMA) when false. 6.12 ("Multi-gen LRU: fix can_swap in
        // lru_gen_look_around()", 6.5): whether the target is anon; 6.1.176
        // (not backported): `!walk || walk->can_swap`, kswapd's walker's
        // setting from its last walk; 6.14 dropped the filter.
        let can_swap = match v {
            MglruVersion::V6_12 => !self.folios[f].is_file(),
            MglruVersion::V6_1 if sc.who == Reclaimer::Kswapd => self.lru_gen.kswapd_walk_can_swap,
            MglruVersion::V6_1 => sc.mm_walk.unwrap_or(true),
            MglruVersion::V6_14 => true,
        };
        let new_gen = lru_gen_from_seq(self.lrugen(m).max_seq);
        // v6.1's loop met the (still young) target PTE too; 6.12 starts
        // from `young = 1` for it.
        let mut young = (v != MglruVersion::V6_14) as u64;
        let why = "look-around next to an evicted folio";
        let (span, cur) = ((lo, hi), (m, new_gen, walker, can_swap));
        young += if v == MglruVersion::V6_12 {
            self.look_around_v6_12(vma, span, cur, sc, f, why)
        } else if v == MglruVersion::V6_1 && self.lru_gen.look_around_activate {
            self.look_around_activate(vma, span, cur, sc, f, why)
        } else {
            self.clear_young_ptes(vma, span, cur, sc, Some(f), why)
        };
        self.lru_gen.stats.look_around_young += young;
        if Self::suitable_to_scan((hi - lo) as u64, young) {
            let seq = self.lrugen(m).max_seq;
            let lg = self.lrugen_mut(m);
            // update_bloom_filter(): the filter of max_seq, if it exists.
            if let Some(fl) = lg.filters[(seq % 2) as usize].as_mut() {
                fl.insert(vma, index / PTRS_PER_PTE);
            }
        }
        true
    }

    /// The loop of v6.1's `lru_gen_look_around()` over the PTEs `[lo, hi)`
    /// of `vma` (mm/vmscan.c, read in 6.1.192; `mglru_look_around_activate`;
    /// the target `f`'s PTE is already cleared). Each young PTE mapping a
    /// folio of group `m` is cleared (`ptep_test_and_clear_young`), a dirty
    /// one dirties its folio, and a folio on no list (isolated for
    /// eviction: `get_pfn_folio()` does not look at PG_lru) gets
    /// PG_referenced. The folios outside max_seq's generation `new_gen` are
    /// collected in a bitmap; without a page-table walker
    /// (`current->reclaim_state->mm_walk`: kswapd's, or another reclaimer's
    /// once its aging allocated one, [`ScanControl::mm_walk`]) and fewer
    /// than `PAGEVEC_SIZE` (15) of them, each goes through `folio_activate()`
    /// ([`Sim::lru_gen_folio_activate`]: moved to max_seq at once, refs
    /// kept, `pgactivate`); otherwise each has its generation rewritten
    /// (`folio_update_gen()`: refs and flags cleared), which `sort_folio()`
    /// later moves and counts in `pgrefill`. A folio already in `new_gen`
    /// keeps its refs. Returns the PTEs cleared.
    fn look_around_activate(
        &mut self,
        vma: VmaId,
        (lo, hi): (u32, u32),
        (m, new_gen, walker, can_swap): (MemcgId, usize, bool, bool),
        sc: &ScanControl,
        f: FolioId,
        why: &str,
    ) -> u64 {
        // The bitmap of the folios to promote (bit k: PTE lo + k).
        let mut promote = 0u64;
        let young = self.for_each_young_pte(
            vma,
            lo,
            hi,
            m,
            |go| can_swap || go.is_file(),
            |s, g, k, p| {
                s.walk_folio_dirty(g, p & PTE_DIRTY != 0);
                match folio_lru_gen(&s.folios[g]) {
                    None => s.folios[g].set(flags::REFERENCED),
                    Some(old) if old != new_gen => promote |= 1 << k,
                    Some(_) => {}
                }
                if s.xp.is_some() && g != f {
                    s.xp_lru_gen_young(g, sc, why);
                }
            },
        );
        let activate = !walker && promote.count_ones() < PAGEVEC_SIZE_V6_1;
        while promote != 0 {
            let i = lo + promote.trailing_zeros();
            promote &= promote - 1;
            let g = self.vmas[vma as usize].ptes[i as usize] & PTE_FOLIO_MASK;
            if activate {
                self.lru_gen_folio_activate(g);
            } else {
                self.folio_update_gen(g, new_gen);
            }
        }
        young
    }

    /// The loop of v6.12's `lru_gen_look_around()` over the PTEs `[lo, hi)`
    /// of `vma` (mm/vmscan.c, read in Debian's 6.12.107 and 6.12.117 sources;
    /// the target `f`'s PTE is already cleared, so the loop passes over it).
    /// Each young PTE mapping a folio of group `m` (not anon without
    /// `can_swap`: a file target's) is cleared (`ptep_clear_young_notify`)
    /// and a dirty one dirties its folio. With a page-table walker (kswapd,
    /// or another reclaimer after its aging: [`ScanControl::mm_walk`])
    /// the folio's generation is rewritten in place (`folio_update_gen()`:
    /// refs and flags cleared; an isolated folio gets PG_referenced).
    /// Without one, a folio on no list (isolated for eviction) gets
    /// PG_referenced, and one outside max_seq's generation `new_gen` goes
    /// through `folio_activate()` (with `mglru_reset_tier_bits`, 6.12.114+,
    /// its refs, PG_referenced and PG_workingset cleared first:
    /// `folio_clear_lru_refs()`) ([`Sim::lru_gen_folio_activate`]:
    /// moved to max_seq at once, `pgactivate`), whatever their number (6.1
    /// does so only below `PAGEVEC_SIZE`; 6.14 first asks
    /// `lru_gen_set_refs()`). Returns the PTEs cleared.
    #[inline(never)]
    pub(super) fn look_around_v6_12(
        &mut self,
        vma: VmaId,
        (lo, hi): (u32, u32),
        (m, new_gen, walker, can_swap): (MemcgId, usize, bool, bool),
        sc: &ScanControl,
        f: FolioId,
        why: &str,
    ) -> u64 {
        let reset_tier_bits = self.lru_gen.reset_tier_bits;
        self.for_each_young_pte(
            vma,
            lo,
            hi,
            m,
            |go| can_swap || go.is_file(),
            |s, g, _, p| {
                s.walk_folio_dirty(g, p & PTE_DIRTY != 0);
                match folio_lru_gen(&s.folios[g]) {
                    None => s.folios[g].set(flags::REFERENCED),
                    Some(_) if walker => {
                        s.folio_update_gen(g, new_gen);
                    }
                    Some(old) if old != new_gen => {
                        if reset_tier_bits {
                            // 6.12.114+: folio_clear_lru_refs().
                            let go = &mut s.folios[g];
                            set_folio_refs(go, 0);
                            go.clear(flags::REFERENCED | flags::WORKINGSET);
                        }
                        s.lru_gen_folio_activate(g);
                    }
                    Some(_) => {}
                }
                if s.xp.is_some() && g != f {
                    s.xp_lru_gen_young(g, sc, why);
                }
            },
        )
    }

    /// The MGLRU reference rule of `shrink_folio_list()`
    /// (`folio_check_references()`; `crate::rmap`'s `folio_referenced`
    /// calls look-around for every PTE mapping the folio).
    ///
    /// v6.14: no young PTE → reclaim (fd references were handled by tiers);
    /// young → `lru_gen_set_refs`: first sighting keep, else activate.
    /// v6.1: look-around marked the folio PG_referenced, so a young PTE
    /// activates (the classic rule); otherwise reclaim.
    /// v6.12: the classic rule itself (6.12 `folio_check_references()` has no
    /// MGLRU case): PG_referenced is tested and cleared (`isolate_folio()`
    /// cleared it, so only a look-around of a neighbour in the same batch
    /// set it); with young PTEs the folio gets PG_referenced and is activated
    /// if it had it or was young in more than one VMA (or is file-backed in
    /// an executable VMA), else kept; without, a file folio that had it is
    /// reclaimed clean, others reclaimed.
    pub(crate) fn lru_gen_check_references(
        &mut self,
        f: FolioId,
        sc: &mut ScanControl,
    ) -> FolioReferences {
        let referenced = self.folio_referenced(f, sc);
        if referenced.locked {
            // v6.12: found in a VM_LOCKED VMA (nothing is mlocked yet).
            self.folios[f].clear(flags::REFERENCED);
            return FolioReferences::Activate;
        }
        let v = self.lru_gen_version();
        if v == MglruVersion::V6_12 {
            let fo = &mut self.folios[f];
            let was_ref = fo.test_and_clear(flags::REFERENCED);
            if referenced.vmas > 0 {
                fo.set(flags::REFERENCED);
                if was_ref || referenced.vmas > 1 || (referenced.exec && fo.is_file()) {
                    return FolioReferences::Activate;
                }
                return FolioReferences::Keep;
            }
            if was_ref && fo.is_file() {
                return FolioReferences::ReclaimClean;
            }
            return FolioReferences::Reclaim;
        }
        if referenced.vmas == 0 {
            return FolioReferences::Reclaim;
        }
        match v {
            MglruVersion::V6_14 => {
                if self.lru_gen_set_refs(f) {
                    FolioReferences::Activate
                } else {
                    FolioReferences::Keep
                }
            }
            MglruVersion::V6_1 | MglruVersion::V6_12 => {
                self.folios[f].clear(flags::REFERENCED);
                FolioReferences::Activate
            }
        }
    }

    /// `walk_mm()` over every mm of group `m` (`iterate_mm_list`): for each
    /// VMA the walk may visit (`should_skip_vma`: anon when swappiness is 0,
    /// file when it is 201), each PTE table that is in the Bloom filter of
    /// `seq` (or every table with `force_scan`, or when that filter does not
    /// exist yet): every young PTE of a folio of this group on an MGLRU list
    /// (v6.1 and v6.12 at swappiness 0: not an anon one, `walk->can_swap`)
    /// is cleared and promoted to `seq`'s generation (`walk_pte_range` →
    /// `walk_update_folio` with a walker), and a table with enough young
    /// PTEs goes into the filter of `seq + 1` (`reset_bloom_filter` cleared
    /// it at the start of the round). Costs `pte_walk_ns` per PTE.
    pub(super) fn walk_mm(
        &mut self,
        m: MemcgId,
        seq: u64,
        swappiness: u32,
        force_scan: bool,
        sc: &mut ScanControl,
    ) {
        self.lru_gen.stats.walks += 1;
        {
            let lg = self.lrugen_mut(m);
            let next = ((seq + 1) % 2) as usize;
            match lg.filters[next].as_mut() {
                Some(f) => f.0.fill(0),
                None => lg.filters[next] = Some(BloomFilter::new()),
            }
        }
        let new_gen = lru_gen_from_seq(seq);
        let cur = (seq % 2) as usize;
        // walk_pte_range()'s get_pfn_folio(…, walk->can_swap) (v6.1, v6.12):
        // without swap, anon folios in file VMAs (COW copies) are passed over;
        // v6.14 dropped the filter (should_skip_vma() alone).
        let can_swap = self.lru_gen_version() == MglruVersion::V6_14 || swappiness != 0;
        for t in 0..self.tasks.len() {
            if self.tasks[t].dead || self.tasks[t].memcg != m {
                continue;
            }
            for vi in 0..self.tasks[t].vmas.len() {
                let vid = self.tasks[t].vmas[vi];
                let v = &self.vmas[vid as usize];
                let anon = v.kind == VmaKind::Anon;
                if (anon && swappiness == 0) || (!anon && swappiness == SWAPPINESS_ANON_ONLY) {
                    continue;
                }
                // VM_SEQ_READ / VM_RAND_READ: no recency to learn.
                if !anon && v.ra_advice != crate::readahead::Advice::Normal {
                    continue;
                }
                let n = v.ptes.len() as u32;
                let tables = n.div_ceil(PTRS_PER_PTE);
                for table in 0..tables {
                    if !force_scan {
                        if let Some(fl) = self.lrugen(m).filters[cur].as_ref() {
                            if !fl.test(vid, table) {
                                self.lru_gen.stats.tables_skipped += 1;
                                continue;
                            }
                        }
                    }
                    let lo = table * PTRS_PER_PTE;
                    let hi = (lo + PTRS_PER_PTE).min(n);
                    sc.charge_pt_walk((hi - lo) as u64, self.cost.pte_walk_ns);
                    self.lru_gen.stats.leaf_total += (hi - lo) as u64;
                    let mut young = 0;
                    for from in (lo..hi).step_by(64) {
                        let to = (from + 64).min(hi);
                        let why = "aging's page-table walk";
                        let cur = (m, new_gen, true, can_swap);
                        young += self.clear_young_ptes(vid, (from, to), cur, sc, None, why);
                    }
                    self.lru_gen.stats.leaf_young += young;
                    if Self::suitable_to_scan((hi - lo) as u64, young) {
                        self.lru_gen.stats.tables_added += 1;
                        let next = ((seq + 1) % 2) as usize;
                        if let Some(fl) = self.lrugen_mut(m).filters[next].as_mut() {
                            fl.insert(vid, table);
                        }
                    }
                }
            }
            // reset_batch_size(): the walk's batched generation sizes are
            // folded into the lruvec under lru_lock once per mm.
            self.lru_lock_reclaim(sc, m, 0);
        }
    }
}
