//! Rule tests of MGLRU's settings and groups: the core bit and its toggling, bad
//! settings, debugfs commands, swappiness, the memcg LRU and memory.low.

use super::*;

#[test]
fn core_bit_clear_is_the_classic_lru() {
    let mut c = cfg(V2, 4096, None);
    c.policy.lru_gen_enabled = 6;
    let s = Sim::new(c).unwrap();
    assert!(matches!(s.policy, Policy::Classic(_)));
}

#[test]
fn bad_settings_name_the_field() {
    let mut c = cfg(V2, 4096, None);
    c.policy.lru_gen_enabled = 8;
    let e: ConfigError = c.validate().unwrap_err();
    assert_eq!(e.field, "machine.policy.lru_gen_enabled");
    assert!(e.message.contains("[0, 0x7]"), "{}", e.message);
    let mut c = cfg(V2, 4096, None);
    c.policy.min_ttl_ms = 1 << 33;
    assert_eq!(c.validate().unwrap_err().field, "machine.policy.min_ttl_ms");
    let e = "v6.2".parse::<MglruVersion>().unwrap_err();
    assert!(
        e.contains("allowed: v6.1 (alias 6.1), v6.12 (alias 6.12), v6.14 (alias 6.14)"),
        "{e}"
    );
}

#[test]
fn debugfs_commands_check_their_arguments() {
    let mut s = mg(V2);
    assert!(s
        .lru_gen_run_aging(0, 4, None, true)
        .unwrap_err()
        .contains("EINVAL"));
    assert!(s
        .lru_gen_run_aging(0, 3, Some(202), true)
        .unwrap_err()
        .contains("[0, 201]"));
    s.lru_gen_run_aging(0, 3, None, true).unwrap();
    // An older seq still ages from the current max_seq (run_aging).
    s.lru_gen_run_aging(0, 3, None, false).unwrap();
    assert_eq!(s.lru_gen_folio(0).max_seq, 5);
    assert!(s
        .lru_gen_run_eviction(0, 4, None, None)
        .unwrap_err()
        .contains("EINVAL"));
    assert_eq!(s.lru_gen_run_eviction(0, 3, None, None).unwrap(), 0);
}

#[test]
fn swappiness_decides_the_evictable_types() {
    for v in [V2, V1] {
        let (mut s, vma, file) = setup(v);
        touch(&mut s, vma, 0);
        read(&mut s, file, 0);
        // Both pages in the oldest generation.
        let a = anon_folio(&s, vma, 0);
        s.lru_gen_del_folio(a, true);
        s.lru_gen_add_folio_at_for_test(a, 0);
        let fpage = file_folio(&s, file, 0);
        // Make anon the PID controller's choice.
        ctrl(&mut s, FILE, 0, 900, 1000);
        assert_eq!(s.get_type_to_scan(0, 60).0, ANON, "{v:?}");
        // swappiness 0: file only (isolate_folios never tries anon).
        let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
        s.scratch.clear();
        let (ty, n) = s.isolate_folios_for_test(0, 0, &mut sc);
        assert_eq!((ty, n, s.scratch.clone()), (FILE, 1, vec![fpage]), "{v:?}");
        s.scratch.clear();
        // 201 (memory.reclaim swappiness=max): anon only.
        let (ty, n) = s.isolate_folios_for_test(0, SWAPPINESS_ANON_ONLY, &mut sc);
        assert_eq!((ty, n, s.scratch.clone()), (ANON, 1, vec![a]), "{v:?}");
        s.scratch.clear();
        // 200: anon first when both types are evictable (v6.1: same generation).
        assert_eq!(s.get_type_to_scan(0, 200).0, ANON);
    }
}

#[test]
fn memcg_lru_rotates_aged_groups_young_and_advances_its_seq() {
    let mut s = mg(V2);
    let a = s.add_memcg(0, "a").unwrap();
    s.memcg_lru_sync();
    let ml = &s.lru_gen.memcg_lru;
    assert_eq!(
        (ml.seq, ml.nr_memcgs),
        (0, [2, 0, 0]),
        "both online in the old gen"
    );
    s.lru_gen_rotate_memcg(0, MemcgLruOp::Young);
    assert_eq!(s.lru_gen.memcg_lru.nr_memcgs, [1, 1, 0]);
    assert_eq!(s.lru_gen.memcg_lru.seq, 0);
    s.lru_gen_rotate_memcg(a, MemcgLruOp::Tail);
    let l = s.memcgs[a as usize].lruvec.lrugen.memcg_lru;
    assert_eq!((l.gen, l.seg), (0, MemcgSeg::Tail));
    // The last group of the old generation leaves: seq advances, the young
    // generation becomes the old one.
    s.lru_gen_rotate_memcg(a, MemcgLruOp::Young);
    let ml = &s.lru_gen.memcg_lru;
    assert_eq!((ml.seq, ml.nr_memcgs, ml.old_gen()), (1, [0, 2, 0], 1));
    let bins: usize = ml.fifo[1].iter().map(Vec::len).sum();
    assert_eq!(bins, 2);
}

#[test]
fn global_reclaim_takes_groups_below_memory_low_last() {
    // Group /a below memory.low, /b not: shrink_one gives /a TAIL first
    // (no reclaim from it) while /b is reclaimed.
    let mut s = Sim::new(cfg(V2, 1 << 16, None)).unwrap();
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(0, "b").unwrap();
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::Low, 1 << 20)
        .unwrap();
    for (g, name) in [(a, "ta"), (b, "tb")] {
        let t = s.add_task(name);
        s.attach_task(t, g).unwrap();
        let f = s.add_file(name, 200).unwrap();
        s.open(f, t).unwrap();
        s.fadvise(f, Advice::Random).unwrap();
        for i in 0..200 {
            read(&mut s, f, i);
        }
    }
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    sc.priority = 1;
    s.lru_gen_shrink_node(&mut sc);
    assert!(s.memcgs[b as usize].usage < 200, "b reclaimed");
    assert_eq!(s.memcgs[a as usize].usage, 200, "a spared");
    assert_eq!(
        s.memcgs[a as usize].lruvec.lrugen.memcg_lru.seg,
        MemcgSeg::Tail
    );
    assert_eq!(s.memcgs[a as usize].stat.low, 0);
}

#[test]
fn toggling_the_core_bit_moves_folios_between_classic_lists_and_generations() {
    use crate::mem::folio::LruList;
    for v in [V2, V1] {
        let (mut s, vma, file) = setup(v);
        touch(&mut s, vma, 0); // young generation
        read(&mut s, file, 1); // oldest generation
        let (a, f) = (anon_folio(&s, vma, 0), file_folio(&s, file, 1));
        // Off: drain_evictable. The young anon folio goes to the active list.
        assert_eq!(s.lru_gen_set_enabled(6), 2);
        assert!(matches!(s.policy, Policy::Classic(_)));
        assert_eq!(
            LruList::from_index(s.folios.lru(a)),
            LruList::ActiveAnon,
            "{v:?}"
        );
        assert_eq!(LruList::from_index(s.folios.lru(f)), LruList::InactiveFile);
        s.check_invariants().unwrap();
        // On: fill_evictable. Active → young; inactive file → oldest.
        assert_eq!(s.lru_gen_set_enabled(7), 2);
        assert_eq!(s.policy, Policy::Mglru(v));
        let young = if v == V2 { 2 } else { 3 };
        assert_eq!(seq_of(&s, a), young, "{v:?}");
        assert_eq!(seq_of(&s, f), 0);
        s.check_invariants().unwrap();
        // The MM_WALK bit alone changes no lists.
        assert_eq!(s.lru_gen_set_enabled(5), 0);
        assert_eq!(s.lru_gen.enabled, 5);
    }
}
