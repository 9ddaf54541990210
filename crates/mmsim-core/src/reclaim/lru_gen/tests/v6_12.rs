//! Rule tests of the v6.12 multi-gen LRU (`MglruVersion::V6_12`): each rule
//! where 6.12 (mm/vmscan.c, mm/swap.c, mm/workingset.c,
//! include/linux/mm_inline.h, read in Debian's 6.12 source) differs from the
//! v6.14 model, with the exact outcome of a scripted sequence, beside the
//! other versions' outcomes where they differ.

use super::*;
use crate::reclaim::vmscan::FolioReferences;

const V12: MglruVersion = MglruVersion::V6_12;

/// A machine of version `v` without the page-table walk, whose anon VMA of
/// 100 pages has pages `0..n` faulted in (young PTEs) and aged twice: in
/// v6.1 and v6.12 they sit in seq 3 of max_seq 5 (a fault enters max_seq).
fn young_neighbours(v: MglruVersion, n: u32) -> (Sim, u32) {
    let mut s = mg(v);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 100).unwrap();
    for i in 0..n {
        touch(&mut s, vma, i);
    }
    s.lru_gen.enabled = LRU_GEN_CORE;
    age(&mut s);
    age(&mut s);
    assert_eq!(s.lru_gen_folio(0).max_seq, 5);
    (s, vma)
}

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

#[test]
fn v6_12_look_around_activates_every_young_neighbour_after_clearing_its_refs() {
    // 6.12's lru_gen_look_around() without a walker (direct reclaim): each
    // young neighbour outside max_seq gets folio_clear_lru_refs() and
    // folio_activate(), however many there are (6.1 only below PAGEVEC_SIZE,
    // 15): 19 here, all moved to max_seq's list at once and counted in
    // pgactivate for the node and the group. The target itself is left to
    // folio_check_references(): young in one VMA, PG_referenced clear, so
    // KEEP with PG_referenced set. v6.14 instead gives each neighbour its
    // first sighting (lru_gen_set_refs: PG_referenced, no move).
    for v in [V12, V2] {
        let (mut s, vma) = young_neighbours(v, 20);
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
            assert!(!fo.test(flags::WORKINGSET | flags::REFERENCED));
            assert_eq!(folio_refs(fo), 0, "folio_clear_lru_refs");
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
fn v6_12_adds_an_active_folio_to_max_seq_with_its_refs_and_referenced_cleared() {
    // 6.12's lru_gen_add_folio(): an active folio enters max_seq (v6.14:
    // max_seq − 1 without PG_workingset, as here) with LRU_REFS_MASK and
    // PG_referenced cleared, PG_workingset kept ("mm/mglru: reset page lru
    // tier bits when activating"); v6.14 keeps them. A clean fd read enters
    // min_seq + 1 in 6.12 ("fix underprotected page cache"; v6.14: the
    // oldest generation).
    for (v, read_seq, active_seq) in [(V12, 1, 3), (V2, 0, 2)] {
        let (mut s, _, file) = setup(v);
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
        if v == V12 {
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
fn v6_12_sort_folio_isolates_a_dirty_file_folio() {
    // 6.12's sort_folio() has no writeback clause: a dirty file folio at
    // the tail of the oldest generation is isolated (scan_folios counts it
    // in nr.file_taken; shrink_folio_list() counts it unqueued dirty), not
    // moved to min_seq + 1 with PG_reclaim (v6.1, v6.14:
    // dirty_file_folio_at_eviction_waits_in_min_seq_plus_one).
    let (mut s, _, file) = setup(V12);
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
