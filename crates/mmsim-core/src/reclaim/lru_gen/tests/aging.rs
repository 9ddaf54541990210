//! Rule tests of MGLRU generations and aging: where a folio enters, its tier from
//! reads, promotion by the accessed bit, `inc_max_seq` and `min_seq`.

use super::*;

#[test]
fn initial_state_is_four_generations() {
    let s = mg(V2);
    let lg = s.lru_gen_folio(0);
    assert_eq!((lg.max_seq, lg.min_seq, lg.mm_seq), (3, [0, 0], 2));
    assert_eq!(s.policy, Policy::Mglru(V2));
}

#[test]
fn faulted_page_enters_max_seq_minus_one_in_v6_14_and_max_seq_in_v6_1() {
    for (v, want) in [(V2, 2), (V1, 3)] {
        let (mut s, vma, _) = setup(v);
        touch(&mut s, vma, 0);
        let f = anon_folio(&s, vma, 0);
        assert_eq!(seq_of(&s, f), want, "{v:?}");
        // PG_active is transient: clear once on the list.
        assert!(!s.folios[f].test(flags::ACTIVE));
        assert_eq!(s.lru_gen_folio(0).nr_pages[lru_gen_from_seq(want)][ANON], 1);
        s.check_invariants().unwrap();
    }
}

#[test]
fn fd_read_enters_the_oldest_generation() {
    for v in [V2, V1] {
        let (mut s, _, file) = setup(v);
        read(&mut s, file, 5);
        let f = file_folio(&s, file, 5);
        assert_eq!(seq_of(&s, f), 0, "{v:?}");
    }
}

#[test]
fn workingset_fd_refault_enters_one_generation_younger_in_v6_14() {
    // lru_gen_folio_seq: not active, not reclaiming, PG_workingset →
    // MAX_NR_GENS - 1 → max_seq - 2.
    let (mut s, _, file) = setup(V2);
    read(&mut s, file, 5);
    let f = file_folio(&s, file, 5);
    s.lru_gen_del_folio(f, true);
    s.folios[f].set(flags::WORKINGSET);
    s.lru_gen_add_folio(f, false);
    assert_eq!(seq_of(&s, f), 1);
}

#[test]
fn tier_of_a_folio_read_n_times() {
    // N = 1..=6 reads through a descriptor: tiers 0, 1, 2, 2, 3, 3 in every
    // version, reached through different flag states. 6.12 (6.12.107 mm/swap.c
    // folio_mark_accessed() → folio_inc_refs(), the same function as 6.1's):
    // PG_referenced, then PG_workingset, then refs up to LRU_REFS_MASK; its
    // folio_lru_refs() is refs + PG_workingset and lru_tier_from_refs()
    // order_base_2(refs + 1), so refs 0, 1, 2, 3, 4, 4 → tiers 0, 1, 2, 2, 3, 3.
    for v in [V2, V1, V12] {
        let (mut s, _, file) = setup(v);
        let mut tiers = vec![];
        let mut states = vec![];
        for _ in 0..6 {
            read(&mut s, file, 7);
            let f = file_folio(&s, file, 7);
            let fo = s.folios[f];
            tiers.push(folio_tier(v, &fo));
            states.push((
                fo.test(flags::REFERENCED),
                folio_refs(&fo),
                fo.test(flags::WORKINGSET),
            ));
            read(&mut s, file, 50); // so the next read of 7 is not pos_same_folio
        }
        assert_eq!(tiers, vec![0, 1, 2, 2, 3, 3], "{v:?}");
        let want = match v {
            V2 => vec![
                (true, 0, false),
                (true, 1, false),
                (true, 2, false),
                (true, 3, false),
                (true, 3, true),
                (true, 3, true),
            ],
            V1 | V12 => vec![
                (true, 0, false),
                (true, 0, true),
                (true, 1, true),
                (true, 2, true),
                (true, 3, true),
                (true, 3, true),
            ],
        };
        assert_eq!(states, want, "{v:?}");
        // Tiers never move a folio: still where the read added it, the oldest
        // generation (6.12's lru_gen_add_folio(), "fix underprotected page
        // cache": min_seq + 1 while more than MIN_NR_GENS generations exist).
        let added = if v == V12 { 1 } else { 0 };
        assert_eq!(seq_of(&s, file_folio(&s, file, 7)), added, "{v:?}");
    }
}

#[test]
fn accessed_bit_promotes_after_two_sightings_in_v6_14_and_one_in_v6_1() {
    // 6.12 as 6.1: the fault adds the folio active (folio_add_lru() in a
    // fault) to max_seq (3); the aging's walk_pte_range() clears the young
    // PTE and folio_update_gen() rewrites the generation to the walk's
    // max_seq (3, no move) clearing refs, PG_referenced and PG_workingset
    // (6.12.107 mm/vmscan.c, no second chance: that is 6.14's
    // lru_gen_set_refs()); the next walk promotes it to 4, PG_workingset clear.
    for v in [V2, V1, V12] {
        let (mut s, vma, _) = setup(v);
        touch(&mut s, vma, 0); // faulted in young
        let f = anon_folio(&s, vma, 0);
        let start = seq_of(&s, f);
        age(&mut s); // walk sees the young PTE; max_seq 3 → 4
        assert_eq!(s.lru_gen_folio(0).max_seq, 4);
        assert_eq!(
            s.vmas[vma as usize].pte(0) & PTE_YOUNG,
            0,
            "walk clears young"
        );
        match v {
            V2 => {
                assert_eq!(seq_of(&s, f), start, "first sighting: second chance only");
                assert!(s.folios[f].test(flags::REFERENCED));
            }
            V1 | V12 => {
                assert_eq!(seq_of(&s, f), 3, "promoted to the max_seq of the walk");
                assert!(!s.folios[f].test(flags::REFERENCED | flags::WORKINGSET));
            }
        }
        touch(&mut s, vma, 0); // young again
        age(&mut s); // max_seq 4 → 5, walk promotes to 4
        assert_eq!(seq_of(&s, f), 4, "{v:?}");
        assert_eq!(s.folios[f].test(flags::WORKINGSET), v == V2);
        s.check_invariants().unwrap();
    }
}

#[test]
fn an_old_pte_is_not_promoted() {
    let (mut s, vma, _) = setup(V1);
    touch(&mut s, vma, 0);
    let f = anon_folio(&s, vma, 0);
    *s.vmas[vma as usize].pte_mut(0) &= !PTE_YOUNG;
    age(&mut s);
    assert_eq!(seq_of(&s, f), 3, "stays in its generation, now max_seq - 1");
    assert_eq!(s.lru_gen_folio(0).max_seq, 4);
}

#[test]
fn generation_page_counts_follow_folio_nr_pages() {
    // lru_gen_add_folio / folio_update_gen / lru_gen_del_folio move
    // folio_nr_pages(), not 1: a folio of order 2 counts 4 pages.
    let (mut s, _, file) = setup(V2);
    read(&mut s, file, 0);
    let f = file_folio(&s, file, 0);
    let gen_of = |s: &Sim| folio_lru_gen(&s.folios[f]).unwrap();
    let g0 = gen_of(&s);
    assert_eq!(s.lru_gen_folio(0).nr_pages[g0][FILE], 1);
    s.lru_gen_del_folio(f, true);
    assert_eq!(s.lru_gen_folio(0).nr_pages[g0][FILE], 0);
    s.folios[f].set_order(2);
    s.lru_gen_add_folio_at_for_test(f, 1);
    let g1 = lru_gen_from_seq(1);
    assert_eq!(s.lru_gen_folio(0).nr_pages[g1][FILE], 4);
    s.check_lru_gen_invariants(0).unwrap();
    // Promotion to max_seq (v6.14: the second sighting) moves all 4.
    let young = lru_gen_from_seq(s.lru_gen_folio(0).max_seq);
    s.folios[f].set(flags::REFERENCED);
    assert_eq!(s.folio_update_gen(f, young), Some(g1));
    assert_eq!(s.lru_gen_folio(0).nr_pages[g1][FILE], 0);
    assert_eq!(s.lru_gen_folio(0).nr_pages[young][FILE], 4);
    s.lru_gen_del_folio(f, true);
    assert_eq!(s.lru_gen_folio(0).nr_pages[young][FILE], 0);
}

#[test]
fn inc_max_seq_runs_when_three_generations_remain_in_v6_14() {
    let (mut s, _, file) = setup(V2);
    for i in 0..11 {
        read(&mut s, file, i);
    }
    // 4 generations (0..=3): no aging, all 11 file pages evictable.
    assert_eq!(s.should_run_aging(0, 60), (false, 11));
    // Page 10 one generation younger (as a workingset fd refault would be).
    let f = file_folio(&s, file, 10);
    s.lru_gen_del_folio(f, true);
    s.lru_gen_add_folio_at_for_test(f, 1);
    // Evict generation 0: file's min_seq moves to 1; anon's (all empty) as
    // far as the window allows, 2 (max_seq − MIN_NR_GENS + 1).
    let r = s.lru_gen_run_eviction(0, 0, Some(60), None).unwrap();
    assert_eq!(r, 10);
    assert_eq!(s.lru_gen_folio(0).min_seq, [2, 1]);
    // Three generations left: age (1 page evictable).
    assert_eq!(s.should_run_aging(0, 60), (true, 1));
    // At DEF_PRIORITY eviction does not age; below it, get_nr_to_scan ages
    // (try_to_inc_max_seq) and returns -1.
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    assert_eq!(s.get_nr_to_scan(0, &mut sc, 60), 0);
    assert_eq!(s.lru_gen_folio(0).max_seq, 3);
    sc.priority = 11;
    assert_eq!(s.get_nr_to_scan(0, &mut sc, 60), -1);
    assert_eq!(s.lru_gen_folio(0).max_seq, 4);
    assert_eq!(s.lru_gen.stats.aging, 1);
    // A second try for the same seq finds the round done (mm_state.seq).
    let mut sc2 = ScanControl::new(Reclaimer::Direct, 32, 0);
    assert!(!s.try_to_inc_max_seq(0, 3, 60, false, &mut sc2));
}

#[test]
fn v6_1_ages_three_generations_only_when_unevenly_spread() {
    let (mut s, vma, file) = setup(V1);
    // v6.1: faults enter max_seq (3), fd reads min_seq (0).
    for i in 0..3 {
        read(&mut s, file, i);
    }
    for i in 0..3 {
        touch(&mut s, vma, i);
    }
    assert!(!s.should_run_aging(0, 60).0, "4 generations");
    let f = file_folio(&s, file, 2);
    s.lru_gen_del_folio(f, true);
    s.lru_gen_add_folio_at_for_test(f, 1);
    s.lru_gen_run_eviction(0, 0, Some(60), None).unwrap();
    // File stops at its page in seq 1; anon may not pass file.
    assert_eq!(s.lru_gen_folio(0).min_seq, [1, 1]);
    // 3 generations, 3 of 4 pages in max_seq: young·2 > total → age.
    assert_eq!(s.should_run_aging(0, 60), (true, 4));
    // Spread evenly over max_seq - 2, - 1 and max_seq: no aging.
    for (i, seq) in [(0u32, 1u64), (1, 2)] {
        let f = anon_folio(&s, vma, i);
        s.lru_gen_del_folio(f, true);
        s.lru_gen_add_folio_at_for_test(f, seq);
    }
    s.check_invariants().unwrap();
    // young 1, old (max_seq − 2) 2 of 4: within [1/2, 1/4] → no aging.
    assert_eq!(s.should_run_aging(0, 60), (false, 4));
}

#[test]
fn min_seq_advances_when_its_lists_empty() {
    for v in [V2, V1, V12] {
        let (mut s, vma, file) = setup(v);
        read(&mut s, file, 1); // file in gen 0 (v6.12: gen 1)
        touch(&mut s, vma, 1); // anon young
        assert_eq!(s.lru_gen_folio(0).min_seq, [0, 0]);
        // Anon's lists are empty up to its page (v6.14: seq 2, v6.1 and
        // v6.12: 3), but at least MIN_NR_GENS stay.
        let (moved, min_seq) = match v {
            // v6.14: anon may go to max_seq - 2 = 1 (file stays within one).
            V2 => (true, [1, 0]),
            // v6.1: anon may not pass file, whose gen 0 holds a page: no move.
            V1 => (false, [0, 0]),
            // 6.12.107 try_to_inc_min_seq() (6.1's): anon's empty lists take
            // it to 2 and file's to its page in 1; then anon = min(2, 1) and
            // file = max(1, 0): both move to 1.
            V12 => (true, [1, 1]),
        };
        assert_eq!(s.try_to_inc_min_seq(0, 60), moved, "{v:?}");
        assert_eq!(s.lru_gen_folio(0).min_seq, min_seq, "{v:?}");
        if v == V1 {
            continue;
        }
        // Empty the file list: both advance as far as the window allows
        // (v6.12: anon = min(2, 2), file = max(2, 1)).
        let f = file_folio(&s, file, 1);
        s.lru_gen_del_folio(f, true);
        s.lru_gen_add_folio_at_for_test(f, 2);
        assert!(s.try_to_inc_min_seq(0, 60));
        assert_eq!(s.lru_gen_folio(0).min_seq, [2, 2], "{v:?}");
        // Without swap (swappiness 0) only file moves (v6.12: `type =
        // !can_swap` skips anon, and the min/max step needs can_swap).
        let mut t = mg(v);
        let task = t.add_task("t");
        let vm = t.mmap_anon(task, 4).unwrap();
        touch(&mut t, vm, 0);
        assert!(t.try_to_inc_min_seq(0, 0));
        assert_eq!(t.lru_gen_folio(0).min_seq, [0, 2], "{v:?}");
    }
}
