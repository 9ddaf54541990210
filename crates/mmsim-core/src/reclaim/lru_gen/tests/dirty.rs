//! Rule tests of the counters MGLRU eviction keeps for the flusher wake-up
//! (`sc->nr.file_taken`, `sc->nr.unqueued_dirty`) and of the wake-up itself,
//! per version: 6.12 and 6.14 count in `sort_folio()`, `scan_folios()` and
//! `evict_folios()` and wake the flusher at the end of
//! `try_to_shrink_lruvec()` (1bc542c6a0d1); 6.1 has neither.

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
    // reclaim never wakes it: they stay dirty.
    for (v, woken) in [(V2, true), (V12, true), (V1, false)] {
        let (mut s, _) = oldest_gen_of(v, &[], &[1, 2, 3]);
        let mut sc = file_reclaimer();
        s.try_to_shrink_lruvec(0, &mut sc);
        assert_eq!(sc.nr_reclaimed, 0, "{v:?}");
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
