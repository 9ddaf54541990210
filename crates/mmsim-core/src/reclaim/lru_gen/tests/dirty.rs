//! Rule tests of the counters MGLRU eviction keeps for the flusher wake-up
//! (`sc->nr.file_taken`, `sc->nr.unqueued_dirty`) and of the wake-up itself,
//! per version: 6.12 and 6.14 count in `sort_folio()`, `scan_folios()` and
//! `evict_folios()` and wake the flusher at the end of
//! `try_to_shrink_lruvec()` (1bc542c6a0d1); 6.1 has neither. Also what a
//! group at its limit full of dirty page cache gets (no MGLRU version's
//! memcg reclaim throttles on writeback), and v6.1 kswapd's PGDAT_DIRTY.

use super::*;

/// A machine of version `v` with the file pages `clean` read and `dirty`
/// written (one page each, FADV_RANDOM), every folio moved to the tail
/// side of the oldest generation in that order (clean first: the first
/// scanned). Returns it with the file.
fn oldest_gen_of(v: MglruVersion, clean: &[u32], dirty: &[u32]) -> (Sim, u32) {
    let (mut s, _, file) = setup(v);
    for &i in clean {
        read(&mut s, file, i);
    }
    for &i in dirty {
        s.step(&Event::FileWrite {
            file,
            index: i,
            pages: 1,
        });
    }
    for &i in clean.iter().chain(dirty) {
        let f = file_folio(&s, file, i);
        s.lru_gen_del_folio(f, true);
        s.lru_gen_add_folio_at_for_test(f, 0);
    }
    assert_eq!(s.nr_dirty, dirty.len() as u64);
    (s, file)
}

/// A direct reclaimer at priority 0 (scan everything) without swap: file
/// only (swappiness 0).
fn file_reclaimer() -> ScanControl {
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    sc.priority = 0;
    sc.may_swap = false;
    sc
}

#[test]
fn sort_and_scan_count_dirty_and_isolated_file_pages_in_6_12_and_6_14_not_6_1() {
    // Clean pages 1 and 2 are isolated, dirty page 3 is sorted to
    // min_seq + 1. 6.14 and 6.12: sort_folio() adds the dirty folio's pages
    // to nr.file_taken and (not under writeback) nr.unqueued_dirty;
    // scan_folios() adds the 2 isolated pages to nr.file_taken: (3, 1).
    // 6.1's sort_folio() and scan_folios() count neither: (0, 0).
    for (v, want) in [(V2, (3, 1)), (V12, (3, 1)), (V1, (0, 0))] {
        let (mut s, file) = oldest_gen_of(v, &[1, 2], &[3]);
        let mut sc = file_reclaimer();
        s.scratch.clear();
        let (ty, n) = s.isolate_folios_for_test(0, 0, &mut sc);
        let (f1, f2, f3) = (
            file_folio(&s, file, 1),
            file_folio(&s, file, 2),
            file_folio(&s, file, 3),
        );
        assert_eq!((ty, n, s.scratch.clone()), (FILE, 3, vec![f1, f2]), "{v:?}");
        assert_eq!(seq_of(&s, f3), 1, "{v:?}: waiting for writeback");
        assert_eq!((sc.nr_file_taken, sc.nr_unqueued_dirty), want, "{v:?}");
        for f in std::mem::take(&mut s.scratch) {
            s.lru_gen_add_folio(f, false);
        }
        s.check_invariants().unwrap();
    }
}

#[test]
fn a_dirty_folio_under_writeback_counts_as_taken_not_unqueued() {
    // sort_folio(): `if (!writeback) sc->nr.unqueued_dirty += delta`.
    for (v, want) in [(V2, (1, 0)), (V12, (1, 0)), (V1, (0, 0))] {
        let (mut s, file) = oldest_gen_of(v, &[], &[3]);
        let f = file_folio(&s, file, 3);
        s.folios[f].set(flags::WRITEBACK);
        let mut sc = file_reclaimer();
        s.scratch.clear();
        // Sorted to min_seq + 1, nothing isolated: no progress.
        assert_eq!(s.isolate_folios_for_test(0, 0, &mut sc).1, 0, "{v:?}");
        assert_eq!((seq_of(&s, f), s.vm.pgrefill), (1, 1), "{v:?}");
        assert_eq!((sc.nr_file_taken, sc.nr_unqueued_dirty), want, "{v:?}");
    }
}

#[test]
fn the_flusher_is_woken_when_every_file_page_taken_was_dirty_in_6_12_and_6_14() {
    // try_to_shrink_lruvec() (6.12, 6.14): `if (sc->nr.unqueued_dirty &&
    // sc->nr.unqueued_dirty == sc->nr.file_taken) wakeup_flusher_threads()`.
    // Only dirty pages in the oldest generation: 3 taken, 3 unqueued → the
    // flusher writes all three (nr_writeback 3, nr_dirty 0). 6.1's MGLRU
    // reclaim never wakes it: they stay dirty. (6.1's `should_abort_scan`
    // ends the loop after the first batch, at priority 0 with free pages
    // above the low mark, adding MIN_LRU_BATCH to `nr_reclaimed`.)
    for (v, woken, reclaimed) in [(V2, true, 0), (V12, true, 0), (V1, false, 64)] {
        let (mut s, _) = oldest_gen_of(v, &[], &[1, 2, 3]);
        let mut sc = file_reclaimer();
        s.try_to_shrink_lruvec(0, &mut sc);
        assert_eq!(sc.nr_reclaimed, reclaimed, "{v:?}");
        let want = if woken { (0, 3) } else { (3, 0) };
        assert_eq!((s.nr_dirty, s.nr_writeback), want, "{v:?}");
        s.check_invariants().unwrap();
    }
}

#[test]
fn clean_file_pages_taken_with_a_dirty_one_leave_the_flusher_asleep() {
    // Clean 1 and 2 isolated (and reclaimed), dirty 3 sorted: 6.12 and
    // 6.14 took 3 file pages of which 1 unqueued dirty, so no wake-up (the
    // model before this test counted only the sorted dirty folio in
    // v6.14's nr.file_taken and woke it). 6.1 never wakes it.
    for v in [V2, V12, V1] {
        let (mut s, _) = oldest_gen_of(v, &[1, 2], &[3]);
        let mut sc = file_reclaimer();
        s.try_to_shrink_lruvec(0, &mut sc);
        assert_eq!(sc.nr_reclaimed, 2, "{v:?}");
        assert_eq!((s.nr_dirty, s.nr_writeback), (1, 0), "{v:?}");
        s.check_invariants().unwrap();
    }
}

#[test]
fn v6_1_kswapd_sets_pgdat_dirty_with_nothing_counted_and_writes_no_file_folio() {
    // 6.1.176 shrink_node(): kswapd sets PGDAT_DIRTY when
    // `sc->nr.unqueued_dirty == sc->nr.file_taken`, with no non-zero guard,
    // and 6.1's MGLRU eviction counts neither: 0 == 0 after every pass,
    // also the one that took (and freed) the clean pages 4 and 5. The
    // flag writes nothing: sort_folio() keeps the dirty pages 1-3 from
    // isolation (min_seq + 1, PG_reclaim), and isolate_folio() clears the
    // PG_reclaim kswapd's pageout needs. They stay dirty, nothing written
    // (the model before set the flag only with a dirty page counted, so
    // never under 6.1). 6.12 and 6.14: kswapd's root reclaim leaves
    // shrink_node() through lru_gen_shrink_node() before the test: never
    // set; with only dirty pages taken the flusher writes them.
    for v in [V1, V12, V2] {
        for clean in [&[][..], &[4u32, 5][..]] {
            let (mut s, _) = oldest_gen_of(v, clean, &[1, 2, 3]);
            for pass in 0..2 {
                let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
                sc.priority = 0;
                sc.may_swap = false;
                s.shrink_node(&mut sc);
                let freed = if pass == 0 { clean.len() as u64 } else { 0 };
                assert_eq!(sc.nr_reclaimed, freed, "{v:?} {clean:?} {pass}");
                assert_eq!(s.node.dirty, v == V1, "{v:?} {clean:?} {pass}");
                assert_eq!(s.vm.nr_vmscan_write, 0, "{v:?} {clean:?} {pass}");
            }
            let written = v != V1 && (clean.is_empty() || v == V12);
            let want = if written { (0, 3) } else { (3, 0) };
            assert_eq!((s.nr_dirty, s.nr_writeback), want, "{v:?} {clean:?}");
            s.check_invariants().unwrap();
        }
    }
}

/// A v1 group of 64 pages (no swap) on a 32768-page machine of version
/// `v`, its file system on `fs`; its task holds 8 anonymous pages (an OOM
/// victim, as dd's few pages of RSS) and writes pages 0..63 of a file, all
/// dirty. Returns it with the file.
fn group_full_of_dirty(v: MglruVersion, fs: DeviceKind) -> (Sim, u32) {
    let mut c = cfg(v, 1 << 15, None);
    c.memcg_max = Some(Size::from_pages(72));
    c.cgroup_version = crate::config::CgroupVersion::V1;
    c.fs.device = fs;
    let mut s = Sim::new(c).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 8).unwrap();
    for index in 0..8 {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
    }
    let file = s.add_file("f", 1024).unwrap();
    s.open(file, t).unwrap();
    for index in 0..64 {
        s.step(&Event::FileWrite {
            file,
            index,
            pages: 1,
        });
    }
    assert_eq!((s.nr_dirty, s.vm.oom_kill), (64, 0), "{v:?}");
    (s, file)
}

#[test]
fn v6_1_group_full_of_dirty_page_cache_goes_to_the_oom_killer() {
    // The next write's charge: limit reclaim sorts the 64 dirty folios to
    // min_seq + 1 and frees nothing; 6.1 neither wakes the flusher nor
    // throttles, so after MAX_RECLAIM_RETRIES fruitless retries
    // mem_cgroup_out_of_memory() kills the task, all 64 pages still dirty
    // (the report behind 1bc542c6a0d1: "file_dirty 303247360,
    // file_writeback 0"); the victim's 8 pages uncharged, the write's page
    // is charged: 65 dirty, nothing written or reclaimed. 6.12 and 6.14 wake the flusher from the first
    // fruitless reclaim; the SSD's writes end within the retries and the
    // charge succeeds.
    for (v, killed) in [(V1, true), (V12, false), (V2, false)] {
        let (mut s, file) = group_full_of_dirty(v, DeviceKind::Ssd);
        s.step(&Event::FileWrite {
            file,
            index: 64,
            pages: 1,
        });
        assert_eq!(s.vm.oom_kill, killed as u64, "{v:?}");
        if killed {
            assert_eq!(
                (s.nr_dirty, s.nr_writeback, s.vm.pgsteal_file),
                (65, 0, 0),
                "{v:?}"
            );
        } else {
            // The flusher's writes ended within the retries: the clean pages
            // reclaimed then (deterministic: 13 under 6.12, 10 under 6.14).
            let want = if v == V12 { 13 } else { 10 };
            assert_eq!(s.vm.pgsteal_file, want, "{v:?}");
        }
        s.check_invariants().unwrap();
    }
}

#[test]
fn mglru_limit_reclaim_does_not_wait_for_writeback() {
    // The 64 dirty pages under writeback to a disk (the flusher woken
    // before the write). Limit reclaim sorts folios under writeback to
    // min_seq + 1 and frees nothing; no MGLRU version's memcg reclaim
    // throttles (its `sc->nr` has no dirty/congested/immediate count for
    // shrink_node()), so the retries follow at once and the OOM killer
    // runs while the writes are still milliseconds from done, every page
    // still under writeback. (The model before slept until the next write
    // ended on every retry, as for the classic LRU, and the charge
    // succeeded without a kill.)
    for v in [V1, V12, V2] {
        let (mut s, file) = group_full_of_dirty(v, DeviceKind::Hdd);
        s.wakeup_flusher(s.clock);
        assert_eq!((s.nr_dirty, s.nr_writeback), (0, 64), "{v:?}");
        s.step(&Event::FileWrite {
            file,
            index: 64,
            pages: 1,
        });
        assert_eq!(s.vm.oom_kill, 1, "{v:?}");
        assert_eq!((s.nr_writeback, s.vm.pgsteal_file), (64, 0), "{v:?}");
        s.check_invariants().unwrap();
    }
}
