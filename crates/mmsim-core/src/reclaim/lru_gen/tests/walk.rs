//! Rule tests of MGLRU's page-table walk and look-around: young neighbours, the
//! Bloom filter of hot page tables, look-around without a walker.

use super::*;

#[test]
fn look_around_promotes_young_neighbours() {
    // Kswapd has a walker: neighbours' generations are updated in place.
    let (mut s, vma, _) = setup(V1);
    for i in 0..10 {
        touch(&mut s, vma, i);
    }
    let f0 = anon_folio(&s, vma, 0);
    let f5 = anon_folio(&s, vma, 5);
    // Age the neighbours out of max_seq without clearing their young bits
    // (the walk is off: lru_gen/enabled without MM_WALK).
    s.lru_gen.enabled = LRU_GEN_CORE;
    age(&mut s);
    age(&mut s);
    assert_eq!(seq_of(&s, f5), 3);
    // 6.1's kswapd passes its walker's can_swap (set by its last walk, here
    // none: as after one with swap) to get_pfn_folio().
    s.lru_gen.kswapd_walk_can_swap = true;
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    let r = s.lru_gen_check_references(f0, &mut sc);
    assert_eq!(r, crate::reclaim::vmscan::FolioReferences::Activate);
    assert_eq!(seq_of(&s, f5), 5, "neighbour promoted to max_seq");
    assert_eq!(
        s.lru_gen.stats.look_around_young, 10,
        "v6.1 counts the target"
    );
    assert_eq!(
        sc.prof.ptes_walked, 64,
        "64 PTEs of the 100-page VMA's table"
    );
    assert_eq!(sc.prof.rmap_walks, 1);
}

#[test]
fn page_table_walk_follows_the_bloom_filter_of_hot_tables() {
    let mut s = mg(V2);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 2048).unwrap(); // 4 PTE tables
    for i in 0..2048 {
        touch(&mut s, vma, i);
    }
    // Only table 0 (pages 0..512) is young again: 100 pages ≥ 512/8.
    age_no_force(&mut s); // first round: no filter yet, every table walked
    let st = s.lru_gen.stats;
    assert_eq!((st.walks, st.leaf_total, st.tables_skipped), (1, 2048, 0));
    assert_eq!(st.tables_added, 4, "all four were young (first touch)");
    for i in 0..100 {
        touch(&mut s, vma, i);
    }
    age_no_force(&mut s); // every table was hot last round: all walked again
    let st = s.lru_gen.stats;
    assert_eq!(
        (st.leaf_total, st.leaf_young, st.tables_added),
        (4096, 2148, 5)
    );
    for i in 0..100 {
        touch(&mut s, vma, i);
    }
    age_no_force(&mut s); // only table 0 stayed hot: three tables skipped
    let st = s.lru_gen.stats;
    assert_eq!((st.leaf_total, st.tables_skipped), (4096 + 512, 3));
    // force_scan walks everything regardless.
    age(&mut s);
    assert_eq!(s.lru_gen.stats.leaf_total, 4096 + 512 + 2048);
}

#[test]
fn look_around_without_a_walker_activates_after_two_sightings_in_v6_14() {
    // Direct reclaim has no walker: a young neighbour first gets
    // PG_referenced, and at its second sighting folio_activate() re-adds it
    // young (max_seq, PG_workingset).
    let (mut s, vma, _) = setup(V2);
    s.lru_gen.enabled = LRU_GEN_CORE;
    for i in 0..4 {
        touch(&mut s, vma, i);
    }
    let (f0, f1) = (anon_folio(&s, vma, 0), anon_folio(&s, vma, 1));
    age(&mut s);
    age(&mut s); // f1 at seq 2 of max_seq 5
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    s.lru_gen_check_references(f0, &mut sc);
    assert_eq!(seq_of(&s, f1), 2, "first sighting: PG_referenced only");
    assert!(s.folios[f1].test(flags::REFERENCED));
    touch(&mut s, vma, 0);
    touch(&mut s, vma, 1);
    s.lru_gen_check_references(f0, &mut sc);
    assert_eq!(seq_of(&s, f1), 5, "second: activated into max_seq");
    assert!(s.folios[f1].test(flags::WORKINGSET));
    assert_eq!(s.vm.pgactivate, 1);
    // lru_activate() counts the group's event too (__count_memcg_events).
    assert_eq!(s.memcgs[0].stat.pgactivate, 1);
    s.check_invariants().unwrap();
}

#[test]
fn bloom_filter_holds_what_was_inserted() {
    let mut b = BloomFilter::new();
    assert!(!b.test(3, 7));
    b.insert(3, 7);
    assert!(b.test(3, 7));
    assert!(!b.test(3, 8));
}
