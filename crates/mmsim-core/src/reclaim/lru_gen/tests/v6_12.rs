//! Rule tests of the v6.12 multi-gen LRU (`MglruVersion::V6_12`): each rule
//! where 6.12 (mm/vmscan.c, mm/swap.c, mm/workingset.c,
//! include/linux/mm_inline.h, read in Debian's 6.12.107 source, the guest's,
//! and its 6.12.117 source for the 6.12.114 backports behind
//! `mglru_reset_tier_bits` and `mglru_common_reactivation`) differs from the
//! v6.14 model, with the exact outcome of a scripted sequence, beside the
//! other versions' outcomes where they differ.

use super::*;
use crate::reclaim::vmscan::FolioReferences;

/// Reads page `index` of `file` `n` times, each after a read of page 99
/// (a read of the page last read is not an access: `filemap_read()`'s
/// `pos_same_folio`), then parks page 99's folio in seq 2, out of the way
/// of the oldest generation.
fn read_n(s: &mut Sim, file: u32, index: u32, n: u32) {
    for _ in 0..n {
        read(s, file, 99);
        read(s, file, index);
    }
    let g = file_folio(s, file, 99);
    s.lru_gen_del_folio(g, true);
    s.lru_gen_add_folio_at_for_test(g, 2);
}

/// The test machine of version `v` with the v6.12 model's 6.12.114 stable
/// settings `reset` (`mglru_reset_tier_bits`) and `common`
/// (`mglru_common_reactivation`).
fn cfg_stable(v: MglruVersion, reset: bool, common: bool) -> MachineConfig {
    let mut c = cfg(v, 1 << 16, Some(1 << 14));
    c.policy.mglru_reset_tier_bits = reset;
    c.policy.mglru_common_reactivation = common;
    c
}

#[test]
fn v6_12_look_around_activates_every_young_neighbour() {
    // 6.12's lru_gen_look_around() without a walker (direct reclaim): each
    // young neighbour outside max_seq goes through folio_activate(), however
    // many there are (6.1 only below PAGEVEC_SIZE, 15): 19 here, all moved to
    // max_seq's list at once and counted in pgactivate for the node and the
    // group. 6.12.107 keeps their refs and PG_workingset (lru_gen_add_folio()
    // clears only the generation and PG_active); 6.12.114+
    // (`mglru_reset_tier_bits`) first clears them (folio_clear_lru_refs()).
    // The target itself is left to folio_check_references(): young in one
    // VMA, PG_referenced clear, so KEEP with PG_referenced set. v6.14 instead
    // gives each neighbour its first sighting (lru_gen_set_refs:
    // PG_referenced, no move).
    for (v, reset) in [(V12, false), (V12, true), (V2, false)] {
        let (mut s, vma) = young_neighbours_in(cfg_stable(v, reset, false), 20);
        let (f0, f5) = (anon_folio(&s, vma, 0), anon_folio(&s, vma, 5));
        if v == V12 {
            s.folios[f5].set(flags::WORKINGSET);
            set_folio_refs(&mut s.folios[f5], 2);
        }
        s.lru_gen_del_folio(f0, true); // isolated for eviction
        let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
        let r = s.lru_gen_check_references(f0, &mut sc);
        assert_eq!(r, FolioReferences::Keep, "{v:?}");
        assert!(s.folios[f0].test(flags::REFERENCED), "{v:?}");
        for i in 1..20 {
            let f = anon_folio(&s, vma, i);
            assert_eq!(s.vmas[vma as usize].pte(i) & PTE_YOUNG, 0, "{v:?} {i}");
            if v == V12 {
                assert_eq!((seq_of(&s, f), super::list_seq_of(&s, f)), (5, 5), "{i}");
            } else {
                assert!(s.folios[f].test(flags::REFERENCED), "first sighting {i}");
            }
        }
        if v == V12 {
            assert_eq!(s.lru_gen.stats.look_around_young, 20, "young = 1 + 19");
            assert_eq!((s.vm.pgactivate, s.memcgs[0].stat.pgactivate), (19, 19));
            let fo = &s.folios[f5];
            assert!(!fo.test(flags::REFERENCED));
            if reset {
                assert!(!fo.test(flags::WORKINGSET));
                assert_eq!(folio_refs(fo), 0, "folio_clear_lru_refs");
            } else {
                assert!(fo.test(flags::WORKINGSET), "6.12.107 keeps them");
                assert_eq!(folio_refs(fo), 2);
            }
        } else {
            assert_eq!(s.vm.pgactivate, 0);
        }
        s.lru_gen_add_folio(f0, false);
        s.check_invariants().unwrap();
    }
}

#[test]
fn v6_12_look_around_of_kswapd_rewrites_generations_in_place() {
    // kswapd has a page-table walker (pgdat->mm_walk): folio_update_gen()
    // rewrites each neighbour's generation to max_seq without moving it
    // (its list stays seq 3), refs cleared, nothing counted.
    let (mut s, vma) = young_neighbours(V12, 20);
    let f0 = anon_folio(&s, vma, 0);
    s.lru_gen_del_folio(f0, true);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    s.lru_gen_check_references(f0, &mut sc);
    for i in 1..20 {
        let f = anon_folio(&s, vma, i);
        assert_eq!((seq_of(&s, f), super::list_seq_of(&s, f)), (5, 3), "{i}");
    }
    assert_eq!(s.vm.pgactivate, 0);
    s.lru_gen_add_folio(f0, false);
    s.check_invariants().unwrap();
}

#[test]
fn v6_12_reference_check_is_the_classic_one_on_pg_referenced() {
    // 6.12's folio_check_references() has no MGLRU case: PG_referenced is
    // tested and cleared; a young PTE in one VMA keeps the folio and sets
    // it, a second young sighting with it set activates; without a young
    // PTE an anon folio is reclaimed (its PG_referenced cleared).
    let (mut s, vma) = young_neighbours(V12, 1);
    let f0 = anon_folio(&s, vma, 0);
    s.lru_gen_del_folio(f0, true);
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    assert_eq!(
        s.lru_gen_check_references(f0, &mut sc),
        FolioReferences::Keep
    );
    assert!(s.folios[f0].test(flags::REFERENCED));
    touch(&mut s, vma, 0); // young again
    assert_eq!(
        s.lru_gen_check_references(f0, &mut sc),
        FolioReferences::Activate
    );
    assert!(s.folios[f0].test(flags::REFERENCED));
    assert_eq!(
        s.lru_gen_check_references(f0, &mut sc),
        FolioReferences::Reclaim
    );
    assert!(!s.folios[f0].test(flags::REFERENCED));
    // An unmapped file folio read once (folio_inc_refs: PG_referenced):
    // RECLAIM_CLEAN in 6.12, RECLAIM in v6.14 (no young PTE).
    for (v, want) in [
        (V12, FolioReferences::ReclaimClean),
        (V2, FolioReferences::Reclaim),
    ] {
        let (mut s, _, file) = setup(v);
        read(&mut s, file, 4);
        let f = file_folio(&s, file, 4);
        assert!(s.folios[f].test(flags::REFERENCED));
        s.lru_gen_del_folio(f, true);
        assert_eq!(s.lru_gen_check_references(f, &mut sc), want, "{v:?}");
    }
}

#[test]
fn v6_12_isolation_clears_pg_referenced_and_keeps_the_tier_of_a_referenced_folio() {
    // isolate_folio(): with PG_referenced the refs and PG_workingset stay;
    // PG_referenced is cleared "for shrink_folio_list()" (v6.1 and v6.12;
    // v6.14 keeps it for lru_gen_set_refs()).
    for v in [V12, V1, V2] {
        let (mut s, _, file) = setup(v);
        read_n(&mut s, file, 7, 2);
        let f = file_folio(&s, file, 7);
        s.lru_gen_del_folio(f, true);
        s.lru_gen_add_folio_at_for_test(f, 0);
        let before = s.folios[f];
        let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
        s.scratch.clear();
        let (ty, n) = s.isolate_folios_for_test(0, 0, &mut sc);
        assert_eq!((ty, n, s.scratch.clone()), (FILE, 1, vec![f]), "{v:?}");
        let fo = &s.folios[f];
        assert_eq!(fo.test(flags::REFERENCED), v == V2, "{v:?}");
        assert_eq!(fo.test(flags::WORKINGSET), before.test(flags::WORKINGSET));
        assert_eq!(folio_refs(fo), folio_refs(&before), "{v:?}");
        assert_eq!(
            fo.test(flags::WORKINGSET),
            v != V2,
            "{v:?}: the second read"
        );
        s.scratch.clear();
        s.lru_gen_add_folio(f, false);
    }
}

#[test]
fn v6_12_adds_an_active_folio_to_max_seq_clearing_its_refs_from_6_12_114() {
    // 6.12's lru_gen_add_folio(): an active folio enters max_seq (v6.14:
    // max_seq − 1 without PG_workingset, as here). 6.12.107 clears only the
    // generation and PG_active (its refs and PG_referenced stay); 6.12.114+
    // (`mglru_reset_tier_bits`, "mm/mglru: reset page lru tier bits when
    // activating") clears LRU_REFS_MASK and PG_referenced too, PG_workingset
    // kept; v6.14 keeps them. A clean fd read enters min_seq + 1 in 6.12
    // ("fix underprotected page cache"; v6.14: the oldest generation).
    for (v, reset, read_seq, active_seq) in
        [(V12, true, 1, 3), (V12, false, 1, 3), (V2, false, 0, 2)]
    {
        let (mut s, _, file) = setup_in(cfg_stable(v, reset, false));
        read_n(&mut s, file, 2, 4);
        let f = file_folio(&s, file, 2);
        assert_eq!(seq_of(&s, f), read_seq, "{v:?}");
        let refs = folio_refs(&s.folios[f]);
        let ws = s.folios[f].test(flags::WORKINGSET);
        assert_eq!((refs, ws), if v == V12 { (2, true) } else { (3, false) });
        s.lru_gen_del_folio(f, false);
        s.folios[f].set(flags::ACTIVE);
        s.lru_gen_add_folio(f, false);
        let fo = &s.folios[f];
        assert_eq!(seq_of(&s, f), active_seq, "{v:?}");
        assert_eq!(fo.test(flags::WORKINGSET), ws, "{v:?}: kept");
        if reset {
            assert_eq!(folio_refs(fo), 0);
            assert!(!fo.test(flags::REFERENCED));
        } else {
            assert_eq!(folio_refs(fo), refs);
            assert!(fo.test(flags::REFERENCED));
        }
        s.check_invariants().unwrap();
    }
}

#[test]
fn v6_12_sort_folio_isolates_a_dirty_file_folio_from_6_12_114() {
    // 6.12.114+'s sort_folio() (`mglru_common_reactivation`, "mm/mglru: use
    // the common routine for dirty/writeback reactivation") has no writeback
    // clause: a dirty file folio at the tail of the oldest generation is
    // isolated (scan_folios counts it in nr.file_taken; shrink_folio_list()
    // counts it unqueued dirty). 6.12.107's (the default) moves it to
    // min_seq + 1 with PG_reclaim, as v6.1 and v6.14 do
    // (dirty_file_folio_at_eviction_waits_in_min_seq_plus_one), counting it
    // in nr.file_taken and nr.unqueued_dirty and in pgrefill.
    v6_12_107_sorts_a_dirty_file_folio();
    let (mut s, _, file) = setup_in(cfg_stable(V12, false, true));
    s.step(&Event::FileWrite {
        file,
        index: 3,
        pages: 1,
    });
    let f = file_folio(&s, file, 3);
    assert_eq!(
        seq_of(&s, f),
        1,
        "min_seq + 1: fix underprotected page cache"
    );
    s.lru_gen_del_folio(f, true);
    s.lru_gen_add_folio_at_for_test(f, 0);
    assert!(s.folios[f].test(flags::DIRTY));
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    s.scratch.clear();
    let scanned = s.isolate_folios_for_test(0, 0, &mut sc).1;
    assert_eq!((scanned, s.scratch.clone()), (1, vec![f]));
    assert!(!s.folios[f].test(flags::RECLAIM));
    assert_eq!((sc.nr_file_taken, sc.nr_unqueued_dirty), (1, 0));
    assert_eq!(s.vm.pgrefill, 0, "nothing sorted");
    s.scratch.clear();
    s.lru_gen_add_folio(f, false);
}

#[test]
fn v6_12_protects_a_tier_in_protected_of_the_tier_below_without_workingset_activate() {
    // sort_folio() protects a folio of tier 2 > tier_idx 1: min_seq + 1, at
    // the tail, refs and PG_workingset cleared, counted in
    // protected[tier − 1] as in v6.1; 6.12 counts no workingset_activate
    // there (6.1 does: WORKINGSET_ACTIVATE_BASE + type).
    for v in [V12, V1] {
        let (mut s, _, file) = setup(v);
        read_n(&mut s, file, 1, 3);
        read(&mut s, file, 3);
        let (f1, f3) = (file_folio(&s, file, 1), file_folio(&s, file, 3));
        for f in [f3, f1] {
            s.lru_gen_del_folio(f, true);
            s.lru_gen_add_folio_at_for_test(f, 0);
        }
        assert_eq!(folio_tier(v, &s.folios[f1]), 2, "{v:?}");
        ctrl(&mut s, FILE, 0, 100, 1000);
        ctrl(&mut s, FILE, 2, 800, 1000);
        assert_eq!(s.get_tier_idx(0, FILE), 1, "{v:?}");
        let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
        s.scratch.clear();
        let (ty, n) = s.isolate_folios_for_test(0, 0, &mut sc);
        assert_eq!((ty, n, s.scratch.clone()), (FILE, 2, vec![f3]), "{v:?}");
        assert_eq!(seq_of(&s, f1), 1, "{v:?}");
        let fo = &s.folios[f1];
        assert!(!fo.test(flags::WORKINGSET | flags::REFERENCED) && folio_refs(fo) == 0);
        assert_eq!(s.lru_gen_folio(0).protected[FILE], [0, 1, 0, 0], "{v:?}");
        assert_eq!(s.vm.workingset_activate_file, (v == V1) as u64, "{v:?}");
        assert_eq!(s.vm.pgrefill, 1, "{v:?}");
        s.scratch.clear();
        s.lru_gen_add_folio(f3, false);
    }
}

/// [`v6_12_sort_folio_isolates_a_dirty_file_folio_from_6_12_114`] before
/// 6.12.114: 6.12.107's sort_folio() "waiting for writeback" clause.
fn v6_12_107_sorts_a_dirty_file_folio() {
    let (mut s, _, file) = setup(V12);
    s.step(&Event::FileWrite {
        file,
        index: 3,
        pages: 1,
    });
    let f = file_folio(&s, file, 3);
    s.lru_gen_del_folio(f, true);
    s.lru_gen_add_folio_at_for_test(f, 0);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    s.scratch.clear();
    let scanned = s.isolate_folios_for_test(0, 0, &mut sc).1;
    // Nothing isolated: scan_folios() reports no progress.
    assert_eq!((scanned, s.scratch.len()), (0, 0), "sorted, none isolated");
    assert!(s.folios[f].test(flags::RECLAIM));
    assert_eq!(seq_of(&s, f), 1, "folio_inc_gen(): min_seq + 1");
    assert_eq!((sc.nr_file_taken, sc.nr_unqueued_dirty), (1, 1));
    assert_eq!(s.vm.pgrefill, 1);
    s.check_invariants().unwrap();
}

/// A machine of version `v` (swap of `swap` pages, or none) whose private
/// mapping of a 100-page file has pages 0 and 2 read (page-cache folios) and
/// page 1 written (`do_cow_fault`: an anonymous copy in the file VMA), all
/// young (the other pages fault-around mapped made old), aged twice without the page-table walk (`walk` false) so that the
/// young bits stay. Returns it with the VMA.
fn cow_neighbours(v: MglruVersion, swap: Option<u64>, walk: bool) -> (Sim, u32) {
    let mut s = Sim::new(cfg(v, 1 << 16, swap)).unwrap();
    let t = s.add_task("t");
    let file = s.add_file("f", 100).unwrap();
    let vma = s.mmap_file_private(t, file, 0, 100).unwrap();
    touch(&mut s, vma, 0);
    s.step(&Event::Access {
        vma,
        index: 1,
        write: true,
    });
    touch(&mut s, vma, 2);
    // Fault-around mapped more cached pages young: only 0..=2 stay young.
    for i in 3..100 {
        *s.vmas[vma as usize].pte_mut(i) &= !PTE_YOUNG;
    }
    if !walk {
        s.lru_gen.enabled = LRU_GEN_CORE;
        age(&mut s);
        age(&mut s);
    }
    (s, vma)
}

/// The folio PTE `i` of `vma` maps (present or not).
fn pte_folio(s: &Sim, vma: u32, i: u32) -> FolioId {
    s.vmas[vma as usize].pte(i) & PTE_FOLIO_MASK
}

#[test]
fn look_around_of_a_file_target_passes_over_anon_neighbours_in_v6_12() {
    // get_pfn_folio(pfn, memcg, pgdat, can_swap) returns no folio for an anon
    // neighbour (a COW copy in a file VMA) when can_swap is false. 6.12's
    // lru_gen_look_around() sets can_swap = !folio_is_file_lru(target)
    // ("Multi-gen LRU: fix can_swap in lru_gen_look_around()", 6.5), whatever
    // swap there is: for the file target page 0 the anon page 1 is passed over
    // (its PTE stays young, it is neither counted nor activated), while the
    // file page 2 is activated. For the anon target page 1 both file
    // neighbours are taken. 6.1.176's look-around passes `!walk ||
    // walk->can_swap`: direct reclaim has no walker, so page 1 is taken (its
    // generation rewritten), kswapd's walker has can_swap false until its
    // first walk (pgdat->mm_walk starts zeroed). v6.14 has no such filter:
    // page 1 gets its first sighting.
    for (v, swap) in [(V12, None), (V12, Some(1 << 14)), (V1, None), (V2, None)] {
        let (mut s, vma) = cow_neighbours(v, swap, false);
        let (f0, f1, f2) = (
            pte_folio(&s, vma, 0),
            pte_folio(&s, vma, 1),
            pte_folio(&s, vma, 2),
        );
        assert!(s.folios[f0].is_file() && !s.folios[f1].is_file() && s.folios[f2].is_file());
        let seq1 = seq_of(&s, f1);
        s.lru_gen_del_folio(f0, true); // isolated for eviction
        let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
        s.lru_gen_check_references(f0, &mut sc);
        let young1 = s.vmas[vma as usize].pte(1) & PTE_YOUNG != 0;
        let max = s.lru_gen_folio(0).max_seq;
        match v {
            V12 => {
                assert!(young1, "{swap:?}: passed over");
                assert_eq!((seq_of(&s, f1), list_seq_of(&s, f1)), (seq1, seq1));
                assert_eq!(list_seq_of(&s, f2), max, "{swap:?}: activated");
                assert_eq!(s.lru_gen.stats.look_around_young, 2, "target and page 2");
                assert_eq!(s.vm.pgactivate, 1, "{swap:?}");
            }
            V1 => {
                assert!(!young1, "!walk: taken");
                assert_eq!((seq_of(&s, f1), list_seq_of(&s, f1)), (max, seq1));
            }
            V2 => {
                assert!(!young1);
                assert!(s.folios[f1].test(flags::REFERENCED), "first sighting");
            }
        }
        s.lru_gen_add_folio(f0, false);
        s.check_invariants().unwrap();
    }
    // 6.12, the anon page 1 as the target: can_swap, every neighbour taken.
    let (mut s, vma) = cow_neighbours(V12, Some(1 << 14), false);
    let (f0, f1, f2) = (
        pte_folio(&s, vma, 0),
        pte_folio(&s, vma, 1),
        pte_folio(&s, vma, 2),
    );
    s.lru_gen_del_folio(f1, true);
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    s.lru_gen_check_references(f1, &mut sc);
    let max = s.lru_gen_folio(0).max_seq;
    assert_eq!((list_seq_of(&s, f0), list_seq_of(&s, f2)), (max, max));
    assert_eq!(s.vm.pgactivate, 2);
    s.lru_gen_add_folio(f1, false);
    // 6.1, kswapd before its first walk: pgdat->mm_walk.can_swap is false.
    let (mut s, vma) = cow_neighbours(V1, Some(1 << 14), false);
    let f0 = pte_folio(&s, vma, 0);
    s.lru_gen_del_folio(f0, true);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    s.lru_gen_check_references(f0, &mut sc);
    assert_ne!(
        s.vmas[vma as usize].pte(1) & PTE_YOUNG,
        0,
        "kswapd: passed over"
    );
    assert_eq!(s.vmas[vma as usize].pte(2) & PTE_YOUNG, 0);
    s.lru_gen.kswapd_walk_can_swap = true; // as after a walk with swap
    touch(&mut s, vma, 0);
    s.lru_gen_check_references(f0, &mut sc);
    assert_eq!(
        s.vmas[vma as usize].pte(1) & PTE_YOUNG,
        0,
        "kswapd after a walk: taken"
    );
}

#[test]
fn aging_walk_without_swap_passes_over_anon_folios_of_file_vmas_in_v6_1_and_v6_12() {
    // walk_pte_range() passes walk->can_swap (the aging's swappiness != 0) to
    // get_pfn_folio() in 6.1 and 6.12: at swappiness 0 the COW copy page 1 of
    // the private file mapping keeps its young PTE and its generation, while
    // the file pages are promoted to the walk's max_seq. 6.14 dropped the
    // filter (should_skip_vma() skips anon VMAs only): page 1's PTE is
    // cleared too.
    for v in [V12, V1, V2] {
        let (mut s, vma) = cow_neighbours(v, Some(1 << 14), true);
        let f1 = pte_folio(&s, vma, 1);
        let seq1 = seq_of(&s, f1);
        let max = s.lru_gen_folio(0).max_seq;
        s.lru_gen_run_aging(0, max, Some(0), true).unwrap();
        let young = |s: &Sim, i| s.vmas[vma as usize].pte(i) & PTE_YOUNG != 0;
        assert!(!young(&s, 0) && !young(&s, 2), "{v:?}: file pages walked");
        assert_eq!(young(&s, 1), v != V2, "{v:?}");
        if v != V2 {
            assert_eq!(seq_of(&s, f1), seq1, "{v:?}");
        }
        // With swap allowed the walk takes it.
        let max = s.lru_gen_folio(0).max_seq;
        s.lru_gen_run_aging(0, max, Some(60), true).unwrap();
        assert!(!young(&s, 1), "{v:?}");
        s.check_invariants().unwrap();
    }
}
