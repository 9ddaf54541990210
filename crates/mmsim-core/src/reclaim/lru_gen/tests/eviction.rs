//! Rule tests of MGLRU eviction: refaults activated, tiers protected, young mapped
//! and dirty folios, writeback rotation, `min_ttl_ms`, the debugfs eviction counts,
//! v6.1's rejected folio, and `lru_isolate` from `scan_folios`.

use super::*;

#[test]
fn recent_refault_is_activated_and_an_old_one_is_not() {
    for v in [V2, V1, V12] {
        let mut s = mg(v);
        let t = s.add_task("t");
        let file = s.add_file("f", 100).unwrap();
        let map = s.mmap_file(t, file, 0, 100, false).unwrap();
        s.open(file, t).unwrap();
        s.fadvise(file, Advice::Random).unwrap();
        read(&mut s, file, 9); // oldest generation (v6.12: min_seq + 1)
        let seq = seq_of(&s, file_folio(&s, file, 9));
        s.lru_gen_run_eviction(0, seq, Some(60), None).unwrap();
        assert!(slot_folio(s.files[file as usize].slot(9)).is_none());
        assert_eq!(s.lru_gen_folio(0).evicted[FILE][0], 1);
        // Refault through the mapping, in a fault: recent.
        touch(&mut s, map, 9);
        let f = file_folio(&s, file, 9);
        assert_eq!(s.vm.workingset_refault_file, 1, "{v:?}");
        assert_eq!(s.lru_gen_folio(0).refaulted[FILE][0], 1, "{v:?}");
        match v {
            V12 => {
                // 6.12.107 lru_gen_refault(): the token's seq is min_seq
                // (recent): WORKINGSET_ACTIVATE_FILE; in a fault, refs
                // saturated and PG_workingset set, WORKINGSET_RESTORE_FILE.
                // filemap_add_folio() then calls folio_add_lru(), which in a
                // fault sets PG_active: lru_gen_add_folio() puts it in max_seq
                // and (6.12.107, without "reset page lru tier bits when
                // activating") keeps the refs.
                let w = (s.vm.workingset_activate_file, s.vm.workingset_restore_file);
                assert_eq!(w, (1, 1));
                assert!(s.folios[f].test(flags::WORKINGSET));
                assert_eq!(folio_refs(&s.folios[f]), LRU_REFS_MASK);
                assert_eq!(seq_of(&s, f), 3);
            }
            V2 => {
                assert_eq!(s.vm.workingset_activate_file, 1);
                assert_eq!(seq_of(&s, f), 2, "active: max_seq - 1");
            }
            V1 => {
                // In a fault: PG_workingset restored; PG_active → max_seq.
                assert_eq!(s.vm.workingset_restore_file, 1);
                assert!(s.folios[f].test(flags::WORKINGSET));
                assert_eq!(seq_of(&s, f), 3);
            }
        }
        // Evict again, then age far beyond the window: not recent.
        let (mut s2, _, file2) = setup(v);
        read(&mut s2, file2, 9);
        let seq = seq_of(&s2, file_folio(&s2, file2, 9));
        s2.lru_gen_run_eviction(0, seq, Some(60), None).unwrap();
        for _ in 0..5 {
            age(&mut s2);
        }
        read(&mut s2, file2, 9);
        assert_eq!(s2.lru_gen_folio(0).refaulted[FILE], [0; 4], "{v:?}");
        // v6.14 and v6.12 count every refault (6.12.107: WORKINGSET_REFAULT
        // before `if (!recent)`); v6.1 only recent ones.
        assert_eq!(s2.vm.workingset_refault_file, (v != V1) as u64, "{v:?}");
    }
}

#[test]
fn eviction_protects_a_tier_above_tier_idx() {
    for v in [V2, V1] {
        let (mut s, _, file) = setup(v);
        // Page 1 read 3 times (tier 2), page 2 once (tier 0).
        for _ in 0..3 {
            read(&mut s, file, 1);
            read(&mut s, file, 2);
        }
        read(&mut s, file, 3);
        // Make tier 2 refault far more than tier 0: tier_idx 1.
        ctrl(&mut s, FILE, 0, 100, 1000);
        ctrl(&mut s, FILE, 2, 800, 1000);
        assert_eq!(s.get_tier_idx(0, FILE), 1);
        s.lru_gen_run_eviction(0, 0, Some(1), None).unwrap();
        let f1 = file_folio(&s, file, 1);
        assert_eq!(seq_of(&s, f1), 1, "{v:?}: protected to min_seq + 1");
        assert!(slot_folio(s.files[file as usize].slot(3)).is_none());
        let p = s.lru_gen_folio(0).avg_total[FILE];
        // The protected count went into the average when min_seq moved on.
        // When min_seq moved on, each tier's average became (old + new) / 2:
        // tier 0's (1000 + 0) / 2, tier 2's (1000 + its 2 protected) / 2.
        assert_eq!(p, [500, 0, 501, 0], "{v:?}");
        assert_eq!(s.lru_gen.stats.tier_protected, 2, "pages 1 and 2 (tier 2)");
    }
}

#[test]
fn young_mapped_folio_at_eviction_is_kept_in_v6_14_and_activated_in_v6_1() {
    // A young PTE found by eviction's rmap walk (look-around). v6.14: the
    // first sighting is KEEP (lru_gen_set_refs' second chance), put back
    // young because its insertion seq would be min_seq; v6.1: ACTIVATE
    // into max_seq. v6.12: KEEP (the classic folio_check_references(), with
    // PG_referenced cleared by isolate_folio()), and the putback of a
    // mapped rejected folio sets PG_active: max_seq, not counted.
    for v in [V2, V1, V12] {
        let mut s = mg(v);
        s.lru_gen.enabled = LRU_GEN_CORE; // no page-table walk: the PTE stays young
        let t = s.add_task("t");
        let file = s.add_file("f", 100).unwrap();
        let map = s.mmap_file(t, file, 0, 1, false).unwrap();
        touch(&mut s, map, 0); // a fault: max_seq − 1 (v6.1: max_seq)
        let f = file_folio(&s, file, 0);
        age(&mut s);
        age(&mut s);
        age(&mut s);
        let lg = s.lru_gen_folio(0);
        assert_eq!((lg.max_seq, lg.min_seq[FILE]), (6, seq_of(&s, f)), "{v:?}");
        let min = lg.min_seq[FILE];
        s.lru_gen_run_eviction(0, min, Some(60), Some(1)).unwrap();
        assert!(s.folios.is_live(f));
        match v {
            V2 => {
                assert_eq!(s.vm.pgactivate, 0, "KEEP");
                assert_eq!(seq_of(&s, f), 5, "max_seq − 1");
            }
            V1 => {
                assert_eq!(s.vm.pgactivate, 1, "ACTIVATE");
                assert_eq!(seq_of(&s, f), 6, "max_seq");
            }
            V12 => {
                assert_eq!(s.vm.pgactivate, 0, "KEEP");
                assert_eq!(seq_of(&s, f), 6, "max_seq");
                assert!(!s.folios[f].test(flags::REFERENCED), "putback clears it");
            }
        }
        s.check_invariants().unwrap();
    }
}

#[test]
fn min_ttl_kills_instead_of_evicting_a_young_working_set() {
    for v in [V2, V1] {
        for (ttl, want_kill) in [(0, false), (10_000, true)] {
            let mut c = cfg(v, 4096, Some(8192));
            c.policy.min_ttl_ms = ttl;
            let mut s = Sim::new(c).unwrap();
            let t = s.add_task("t");
            let vma = s.mmap_anon(t, 6000).unwrap();
            for i in 0..6000 {
                s.step(&Event::Access {
                    vma,
                    index: i,
                    write: true,
                });
            }
            let r = s.finish();
            assert_eq!(
                s.lru_gen.stats.min_ttl_oom > 0,
                want_kill,
                "{v:?} ttl {ttl}"
            );
            assert_eq!(r.vmstat.oom_kill > 0, want_kill, "{v:?} ttl {ttl}");
        }
    }
}

#[test]
fn dirty_file_folio_at_eviction_waits_in_min_seq_plus_one() {
    // Counted for the flusher wake-up by 6.14 only (tests/dirty.rs).
    for (v, counted) in [(V2, (1, 1)), (V1, (0, 0))] {
        let (mut s, _, file) = setup(v);
        s.step(&Event::FileWrite {
            file,
            index: 3,
            pages: 1,
        });
        let f = file_folio(&s, file, 3);
        assert_eq!(seq_of(&s, f), 0, "{v:?}: a buffered write is not a fault");
        assert!(s.folios[f].test(flags::DIRTY));
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
        s.scratch.clear();
        let scanned = s.isolate_folios_for_test(0, 0, &mut sc).1;
        // Sorted, not isolated: nothing isolated and the list walked out.
        assert_eq!(scanned, 0);
        assert!(s.scratch.is_empty());
        assert_eq!(seq_of(&s, f), 1, "{v:?}");
        assert!(s.folios[f].test(flags::RECLAIM));
        assert_eq!((sc.nr_file_taken, sc.nr_unqueued_dirty), counted);
        assert_eq!(s.vm.pgrefill, 1, "sorted folios count as PGREFILL");
    }
}

#[test]
fn writeback_rotation_goes_to_the_tail_of_the_oldest_generation() {
    let (mut s, _, file) = setup(V2);
    read(&mut s, file, 1);
    read(&mut s, file, 2);
    let f1 = file_folio(&s, file, 1);
    let f2 = file_folio(&s, file, 2);
    // Move page 1 to seq 2, then rotate it as folio_end_writeback would.
    s.lru_gen_del_folio(f1, true);
    s.lru_gen_add_folio_at_for_test(f1, 2);
    s.lru_gen_rotate_reclaimable(f1);
    assert_eq!(seq_of(&s, f1), 0);
    let lg = s.lru_gen_folio(0);
    assert_eq!(lg.lists[0][FILE].tail, f1, "at the tail: evicted first");
    assert_eq!(lg.lists[0][FILE].head, f2);
    assert_eq!(s.vm.pgrotated, 1);
    s.check_invariants().unwrap();
}

#[test]
fn the_two_youngest_generations_count_as_active() {
    let (mut s, vma, _) = setup(V2);
    s.lru_gen.enabled = LRU_GEN_CORE; // no walk: nothing is promoted
    touch(&mut s, vma, 0); // seq 2 of max_seq 3: active
    let r = s.memcg_report(0);
    assert_eq!((r.active_anon, r.inactive_anon), (1, 0));
    age(&mut s); // max_seq 4: seq 2 is now inactive
    let r = s.memcg_report(0);
    assert_eq!((r.active_anon, r.inactive_anon), (0, 1));
    // Taken off the list outside reclaim, a young folio is marked active
    // (to be re-added young); an old one is not.
    let f = anon_folio(&s, vma, 0);
    s.lru_gen_del_folio(f, false);
    assert!(!s.folios[f].test(flags::ACTIVE));
    s.lru_gen_add_folio_at_for_test(f, 4);
    s.lru_gen_del_folio(f, false);
    assert!(s.folios[f].test(flags::ACTIVE));
    s.lru_gen_add_folio(f, false);
    assert_eq!(seq_of(&s, f), 3, "active → max_seq − 1");
}

#[test]
fn debugfs_eviction_counts_tier_evictions_and_no_global_pgsteal() {
    // `-` runs as cgroup-style reclaim: the group's counters, not /proc/vmstat's.
    let (mut s, _, file) = setup(V2);
    for i in 0..5 {
        read(&mut s, file, i);
    }
    let r = s.lru_gen_run_eviction(0, 0, Some(0), None).unwrap();
    assert_eq!(r, 5);
    assert_eq!(
        s.vm.pgsteal_direct + s.vm.pgsteal_kswapd,
        0,
        "memcg-type command"
    );
    assert_eq!(s.lru_gen_folio(0).evicted[FILE][0], 5);
    assert_eq!(s.memcgs[0].stat.pgsteal_direct, 5);
}

#[test]
fn v6_1_puts_a_rejected_folio_back_with_its_refs_and_no_retry() {
    // v6.1 evict_folios(): every rejected folio not waiting for writeback is
    // set active (→ max_seq) and keeps its refs and PG_workingset; one with
    // PG_workingset gets PG_referenced back ("restore LRU_REFS_FLAGS
    // cleared by isolate_folio()"). The clearing of those bits and the
    // retry of written-back folios (359a5e1416ca, in Debian's 6.1.192
    // source) are `mglru_retry_written_back`, off here.
    let (mut s, f) = v6_1_rejected_mapped_folio(false);
    let refs = folio_lru_refs(V1, &s.folios[f]);
    evict_the_oldest_file_generation_keeping(&mut s, f);
    let fo = &s.folios[f];
    assert!(fo.test(flags::WORKINGSET) && fo.test(flags::REFERENCED));
    assert_eq!(folio_lru_refs(V1, fo), refs, "refs kept");
    s.check_invariants().unwrap();
}

#[test]
fn scan_folios_emits_lru_isolate_with_the_kernels_arguments() {
    // v6.12 scan_folios() ends with trace_mm_vmscan_lru_isolate(reclaim_idx,
    // order, MAX_LRU_BATCH, scanned, skipped, isolated, type ? LRU_INACTIVE_FILE
    // : LRU_INACTIVE_ANON): nr_requested is the constant, nr_scanned counts the
    // sorted (protected) folios too, nr_taken only the isolated ones.
    use crate::tracepoint::{TpEvent, TracepointConfig, Tracer};
    for v in [V2, V1] {
        let (mut s, _, file) = setup(v);
        for _ in 0..3 {
            read(&mut s, file, 1);
            read(&mut s, file, 2);
        }
        read(&mut s, file, 3);
        ctrl(&mut s, FILE, 0, 100, 1000);
        ctrl(&mut s, FILE, 2, 800, 1000);
        s.tp = Tracer::new(&TracepointConfig {
            events: vec!["vmscan:*".into()],
            max_events: 100,
            ..Default::default()
        });
        s.lru_gen_run_eviction(0, 0, Some(1), None).unwrap();
        let tp = s.tp.take().unwrap();
        let lines: Vec<String> = tp
            .records
            .iter()
            .filter(|r| matches!(r.event, TpEvent::LruIsolate { .. }))
            .map(|r| r.event.to_string())
            .collect();
        assert_eq!(
            lines[0],
            "classzone=2 order=0 nr_requested=4096 nr_scanned=3 nr_skipped=0 nr_taken=1 \
             lru=inactive_file",
            "{v:?}: pages 1 and 2 sorted (tier 2 above tier_idx 1), page 3 isolated"
        );
        // The batch's shrink_inactive follows its isolate, with what was isolated.
        let kinds: Vec<&str> = tp
            .records
            .iter()
            .map(|r| match r.event {
                TpEvent::LruIsolate { .. } => "isolate",
                TpEvent::LruShrinkInactive { .. } => "shrink_inactive",
                _ => "other",
            })
            .filter(|k| *k != "other")
            .collect();
        assert_eq!(kinds[..2], ["isolate", "shrink_inactive"], "{v:?}");
    }
}
