//! Rule tests of the multi-gen LRU's kernel-variant options, each against the
//! version or stable release it follows: `mglru_refault_activate` (6.12–6.13 against
//! 6.14+), the v6.1 stable backports `mglru_fix_underprotected` (6.1.69+),
//! `mglru_writeback_in_reclaim`, `mglru_retry_written_back` and
//! `mglru_writeback_plugged`, and v6.1's look-around (`mglru_look_around_activate`).

use super::*;

/// `WORKINGSET_ACTIVATE_*` of a v6.14-model refault: only in a fault under
/// `mglru_refault_activate = "fault"` (6.14+), every recent refault, a buffered
/// read's too, under `"recent"` (6.12–6.13, before "mm/mglru: rework workingset
/// protection"); the refault itself and the folio's generation are the same.
#[test]
fn refault_activation_counting_follows_the_kernel_version() {
    use crate::config::MglruRefaultActivate;
    for (mode, activated) in [
        (MglruRefaultActivate::Fault, 0),
        (MglruRefaultActivate::Recent, 1),
    ] {
        let mut c = cfg(V2, 1 << 16, Some(1 << 14));
        c.policy.mglru_refault_activate = mode;
        let mut s = Sim::new(c).unwrap();
        let t = s.add_task("t");
        let file = s.add_file("f", 100).unwrap();
        s.open(file, t).unwrap();
        s.fadvise(file, Advice::Random).unwrap();
        read(&mut s, file, 9);
        s.lru_gen_run_eviction(0, 0, Some(60), None).unwrap();
        assert!(slot_folio(s.files[file as usize].slot(9)).is_none());
        // Refault through a buffered read (not in a fault).
        read(&mut s, file, 9);
        assert_eq!(s.vm.workingset_refault_file, 1, "{mode:?}");
        assert_eq!(s.lru_gen_folio(0).refaulted[FILE][0], 1, "{mode:?}");
        assert_eq!(s.vm.workingset_activate_file, activated, "{mode:?}");
        assert_eq!(
            s.memcgs[0].lruvec.workingset_activate[1], activated,
            "{mode:?}"
        );
    }
}

/// A v6.1 machine (`mglru_fix_underprotected` = `fix`) with one 100-page file
/// opened under FADV_RANDOM, so that each read is one page.
fn v6_1_random_reader(fix: bool) -> (Sim, crate::event::FileId) {
    let mut c = cfg(V1, 1 << 16, Some(1 << 14));
    c.policy.mglru_fix_underprotected = fix;
    let mut s = Sim::new(c).unwrap();
    let t = s.add_task("t");
    let file = s.add_file("f", 100).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    (s, file)
}

/// `machine.policy.mglru_fix_underprotected` (v6.1 model; 6.1.69+ stable, "mm/mglru:
/// fix underprotected page cache"): a buffered read's folio enters min_seq + 1 rather
/// than min_seq while more than MIN_NR_GENS generations exist, and eviction protects a
/// folio whose refs saturated (five reads: refs 3 + PG_workingset = BIT(LRU_REFS_WIDTH),
/// tier 3) even when the PID controller's tier_idx is the top tier, counting it in
/// `workingset_activate_file` as v6.1 counts every protected folio. Without the field
/// (v6.1 as released) the folio enters min_seq and is evicted with the rest.
#[test]
fn v6_1_stable_places_fd_reads_one_generation_up_and_protects_saturated_refs() {
    for fix in [false, true] {
        let (mut s, file) = v6_1_random_reader(fix);
        // Page 1 read five times, pages 10..=14 once each (they also keep the
        // reads of page 1 from being pos_same_folio).
        for i in 0..5 {
            read(&mut s, file, 1);
            read(&mut s, file, 10 + i);
        }
        let f1 = file_folio(&s, file, 1);
        let fo = s.folios[f1];
        assert_eq!(folio_lru_refs(V1, &fo), 1 << LRU_REFS_WIDTH);
        assert_eq!(folio_tier(V1, &fo), 3);
        let lg = s.lru_gen_folio(0);
        assert_eq!((lg.min_seq[FILE], lg.max_seq), (0, 3));
        let want_seq = if fix { 1 } else { 0 };
        for p in [1, 10, 11, 12, 13, 14] {
            assert_eq!(
                seq_of(&s, file_folio(&s, file, p)),
                want_seq,
                "fix {fix} page {p}"
            );
        }
        // Back into min_seq (flags kept) so that eviction sorts them.
        for p in [1, 10, 11, 12, 13, 14] {
            let f = file_folio(&s, file, p);
            s.lru_gen_del_folio(f, true);
            s.lru_gen_add_folio_at_for_test(f, 0);
        }
        // No refaults: every tier's error is positive, tier_idx = 3, so tier 3 is
        // not above it.
        assert_eq!(s.get_tier_idx(0, FILE), 3);
        s.lru_gen_run_eviction(0, 0, Some(1), None).unwrap();
        for p in 10..=14 {
            assert!(
                slot_folio(s.files[file as usize].slot(p)).is_none(),
                "page {p}"
            );
        }
        let kept = slot_folio(s.files[file as usize].slot(1));
        assert_eq!(kept.is_some(), fix, "fix {fix}");
        assert_eq!(s.lru_gen.stats.tier_protected, fix as u64);
        assert_eq!(s.memcgs[0].lruvec.workingset_activate[FILE], fix as u64);
        if fix {
            // Protected to min_seq + 1, its refs and PG_workingset cleared
            // (folio_inc_gen), and counted in protected[tier - 1].
            let f = kept.unwrap();
            assert_eq!(seq_of(&s, f), 1);
            assert_eq!(folio_lru_refs(V1, &s.folios[f]), 0);
            assert_eq!(s.lru_gen_folio(0).min_seq[FILE], 1);
        }
        s.check_invariants().unwrap();
    }
}

/// `mglru_fix_underprotected` in `lru_gen_refault()` (6.1.69+): a recent refault whose
/// shadow had refs 3 (a folio read four times: refs 2 + PG_workingset) is restored
/// even outside a fault, with its refs saturated as well as PG_workingset, so that
/// `sort_folio()` will protect it; v6.1 as released restores only from refs 4 and sets
/// PG_workingset alone.
#[test]
fn v6_1_stable_refault_from_refs_three_comes_back_saturated() {
    for fix in [false, true] {
        let (mut s, file) = v6_1_random_reader(fix);
        for i in 0..4 {
            read(&mut s, file, 9);
            read(&mut s, file, 20 + i);
        }
        let f = file_folio(&s, file, 9);
        assert_eq!(folio_lru_refs(V1, &s.folios[f]), 3);
        s.lru_gen_del_folio(f, true);
        s.lru_gen_add_folio_at_for_test(f, 0);
        assert_eq!(s.get_tier_idx(0, FILE), 3);
        s.lru_gen_run_eviction(0, 0, Some(1), None).unwrap();
        assert!(
            slot_folio(s.files[file as usize].slot(9)).is_none(),
            "fix {fix}"
        );
        // Tier 2 (refs 3) was evicted; its shadow holds the min_seq that
        // try_to_inc_min_seq left after the isolation, so the refault is recent.
        assert_eq!(s.lru_gen_folio(0).evicted[FILE][2], 1);
        read(&mut s, file, 9);
        assert_eq!(s.vm.workingset_refault_file, 1, "fix {fix}");
        assert_eq!(s.lru_gen_folio(0).refaulted[FILE][2], 1, "fix {fix}");
        assert_eq!(s.vm.workingset_restore_file, fix as u64, "fix {fix}");
        let fo = s.folios[file_folio(&s, file, 9)];
        // The read after the refault sets PG_referenced (folio_inc_refs).
        assert!(fo.test(flags::REFERENCED));
        assert_eq!(fo.test(flags::WORKINGSET), fix);
        assert_eq!(folio_lru_refs(V1, &fo), if fix { 4 } else { 0 });
        s.check_invariants().unwrap();
    }
}

/// Four anon pages stored to, their PTEs old, aged into the oldest
/// generation (no page-table walk), on a swap device whose writes take
/// `write_us` µs plus 4 ns of transfer per page;
/// `machine.policy.mglru_writeback_in_reclaim` = `wb` and
/// `mglru_retry_written_back` = `retry`.
fn swapping(v: MglruVersion, write_us: f64, wb: bool, retry: bool) -> (Sim, Vec<FolioId>) {
    let mut c = cfg(v, 1 << 16, None);
    c.swap = DeviceConfig {
        size: Some(Size::from_pages(1 << 14)),
        read_latency_us: Some(100.0),
        write_latency_us: Some(write_us),
        bandwidth_mbps: Some(1e6),
        ..DeviceConfig::of(DeviceKind::Custom)
    };
    c.policy.mglru_writeback_in_reclaim = wb;
    c.policy.mglru_retry_written_back = retry;
    let mut s = Sim::new(c).unwrap();
    s.lru_gen.enabled = LRU_GEN_CORE;
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 4).unwrap();
    let mut fs = Vec::new();
    for i in 0..4 {
        s.step(&Event::Access {
            vma,
            index: i,
            write: true,
        });
        *s.vmas[vma as usize].pte_mut(i) &= !PTE_YOUNG;
        fs.push(anon_folio(&s, vma, i));
    }
    age(&mut s);
    age(&mut s);
    age(&mut s);
    assert_eq!(s.lru_gen_folio(0).min_seq[ANON], seq_of(&s, fs[0]));
    (s, fs)
}

#[test]
fn writes_that_end_while_reclaim_runs_rotate_their_folios_and_free_them_unwritten() {
    // A write of 1 ms. The first eviction (reclaimer's clock at 0) writes
    // the four folios. A second one whose clock is at 10 ms, while the
    // workload's clock is still 0: with the field, the writes' completions
    // run first (folio_end_writeback → folio_rotate_reclaimable: to the
    // tail of the oldest generation) and the four clean swap-cache folios
    // are freed without a second write; without it they are still under
    // writeback in the generation the putback chose (v6.1: min_seq + 1;
    // v6.14: max_seq − 1), the oldest generation's list is empty, and
    // nothing is freed.
    for v in [V1, V2] {
        for wb in [false, true] {
            let (mut s, fs) = swapping(v, 1000.0, wb, true);
            let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
            s.evict_folios(0, &mut sc, SWAPPINESS_ANON_ONLY);
            assert_eq!((s.vm.pswpout, s.vm.pgsteal_anon), (4, 0), "{v:?} {wb}");
            for &f in &fs {
                let fo = &s.folios[f];
                assert!(fo.test(flags::WRITEBACK) && fo.test(flags::RECLAIM));
                assert!(fo.test(flags::SWAPCACHE) && fo.mapcount == 0);
            }
            if v == V2 {
                // In max_seq − 1, which is now anon's min_seq: two
                // generations, too few to evict from until aged once.
                assert_eq!(s.lru_gen_folio(0).min_seq[ANON], seq_of(&s, fs[0]));
                age(&mut s);
            }
            let mut sc = ScanControl::new(Reclaimer::Direct, 32, 10_000_000);
            s.evict_folios(0, &mut sc, SWAPPINESS_ANON_ONLY);
            assert_eq!(s.vm.pswpout, 4, "{v:?} {wb}: never written twice");
            if wb {
                assert_eq!((s.vm.pgrotated, s.vm.pgsteal_anon), (4, 4), "{v:?}");
                assert!(fs.iter().all(|&f| !s.folios.is_live(f)));
            } else {
                assert_eq!((s.vm.pgrotated, s.vm.pgsteal_anon), (0, 0), "{v:?}");
                assert!(fs.iter().all(|&f| s.folios[f].test(flags::WRITEBACK)));
            }
            s.check_invariants().unwrap();
        }
    }
}

#[test]
fn v6_1_retries_folios_whose_write_ended_while_isolated() {
    // Writes of 1 ns + 4 ns of transfer: each folio's write has ended when
    // the next folio's pageout starts, the last one's 5 ns after the batch.
    // After shrink_folio_list the three ended writes complete; their folios
    // were isolated, so folio_end_writeback only clears PG_reclaim (no
    // rotation). 6.1's retry (359a5e1416ca) frees those three clean,
    // unmapped folios in a second pass, without writing them again; the
    // last, still under writeback with PG_reclaim, waits in min_seq + 1.
    // Without the retry the three go back active into max_seq (the v6.1
    // putback keeps their refs), where reclaim reaches them last.
    for retry in [false, true] {
        let (mut s, fs) = swapping(V1, 0.001, true, retry);
        let min = s.lru_gen_folio(0).min_seq[ANON];
        let max = s.lru_gen_folio(0).max_seq;
        let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
        s.evict_folios(0, &mut sc, SWAPPINESS_ANON_ONLY);
        assert_eq!(s.vm.pswpout, 4);
        assert_eq!(s.vm.pgrotated, 0, "isolated: no rotation");
        let last = fs[3];
        assert!(s.folios[last].test(flags::WRITEBACK) && s.folios[last].test(flags::RECLAIM));
        assert_eq!(seq_of(&s, last), min + 1);
        if retry {
            assert_eq!(s.vm.pgsteal_anon, 3);
            assert!(fs[..3].iter().all(|&f| !s.folios.is_live(f)));
            assert_eq!(sc.nr_scanned, 7, "6.1 keeps the retried folios counted");
        } else {
            assert_eq!(s.vm.pgsteal_anon, 0);
            for &f in &fs[..3] {
                let fo = &s.folios[f];
                assert!(!fo.test(flags::WRITEBACK | flags::RECLAIM | flags::DIRTY));
                assert_eq!(seq_of(&s, f), max);
            }
            assert_eq!(sc.nr_scanned, 4);
        }
        s.check_invariants().unwrap();
    }
}

#[test]
fn v6_1_retry_putback_clears_the_refs_of_a_rejected_folio() {
    // The putback that came with the retry (6.1.192): a rejected folio
    // loses its refs, PG_referenced and PG_workingset and goes active into
    // max_seq (compare v6_1_puts_a_rejected_folio_back_with_its_refs_and_no_retry).
    let (mut s, f) = v6_1_rejected_mapped_folio(true);
    evict_the_oldest_file_generation_keeping(&mut s, f);
    let fo = &s.folios[f];
    assert!(!fo.test(flags::WORKINGSET) && !fo.test(flags::REFERENCED));
    assert_eq!(folio_lru_refs(V1, fo), 0, "refs cleared");
    s.check_invariants().unwrap();
}

#[test]
fn v6_1_look_around_activates_fewer_than_fifteen_neighbours_one_by_one() {
    // 6.1's lru_gen_look_around(): direct reclaim has no walker, and 9
    // young neighbours outside max_seq are fewer than PAGEVEC_SIZE, so each
    // goes through folio_activate(): moved to max_seq's list now, counted
    // in pgactivate (node and group), refs and PG_workingset kept. Without
    // the setting (the earlier model) their generation fields are rewritten
    // in place, refs cleared, nothing counted, and they stay on seq 3's
    // list for sort_folio() to move and count as sorted (pgrefill).
    for on in [false, true] {
        let (mut s, vma) = v6_1_young_neighbours(on, 10);
        let (f0, f5) = (anon_folio(&s, vma, 0), anon_folio(&s, vma, 5));
        s.folios[f5].set(flags::WORKINGSET);
        assert_eq!((seq_of(&s, f5), list_seq_of(&s, f5)), (3, 3));
        s.lru_gen_del_folio(f0, true); // isolated for eviction
        let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
        let r = s.lru_gen_check_references(f0, &mut sc);
        assert_eq!(r, crate::reclaim::vmscan::FolioReferences::Activate);
        assert_eq!(s.lru_gen.stats.look_around_young, 10, "the target counts");
        for i in 1..10 {
            let f = anon_folio(&s, vma, i);
            assert_eq!(seq_of(&s, f), 5, "{on}: page {i}'s generation is max_seq");
            assert_eq!(
                list_seq_of(&s, f),
                if on { 5 } else { 3 },
                "{on}: page {i}'s list"
            );
            assert_eq!(s.vmas[vma as usize].pte(i) & PTE_YOUNG, 0);
        }
        if on {
            assert_eq!((s.vm.pgactivate, s.memcgs[0].stat.pgactivate), (9, 9));
            assert!(s.folios[f5].test(flags::WORKINGSET), "refs kept");
        } else {
            assert_eq!((s.vm.pgactivate, s.memcgs[0].stat.pgactivate), (0, 0));
            assert!(
                !s.folios[f5].test(flags::WORKINGSET),
                "folio_update_gen clears it"
            );
        }
        s.lru_gen_add_folio(f0, false);
        s.check_invariants().unwrap();
    }
}

#[test]
fn v6_1_look_around_rewrites_generations_from_fifteen_neighbours_or_with_a_walker() {
    // 15 young neighbours outside max_seq (not fewer than PAGEVEC_SIZE), or
    // kswapd's walker: folio_update_gen() for each, nothing counted.
    for (n, who) in [(16, Reclaimer::Direct), (10, Reclaimer::Kswapd)] {
        let (mut s, vma) = v6_1_young_neighbours(true, n);
        s.lru_gen.kswapd_walk_can_swap = true; // as after kswapd's walk with swap
        let f0 = anon_folio(&s, vma, 0);
        s.lru_gen_del_folio(f0, true);
        let mut sc = ScanControl::new(who, 32, 0);
        s.lru_gen_check_references(f0, &mut sc);
        for i in 1..n {
            let f = anon_folio(&s, vma, i);
            assert_eq!((seq_of(&s, f), list_seq_of(&s, f)), (5, 3), "{n} {who:?}");
        }
        assert_eq!(s.vm.pgactivate, 0, "{n} {who:?}");
        s.lru_gen_add_folio(f0, false);
        s.check_invariants().unwrap();
    }
}

#[test]
fn v6_1_look_around_marks_an_isolated_neighbour_referenced() {
    // get_pfn_folio() does not look at PG_lru: a young neighbour isolated in
    // the same batch has its accessed bit cleared and gets PG_referenced;
    // its own reference check then finds no young PTE and reclaims it (an
    // anon folio's PG_referenced alone does not keep it). The earlier model
    // left it young, and its check activated it.
    for on in [false, true] {
        let (mut s, vma) = v6_1_young_neighbours(on, 3);
        let (f0, f1) = (anon_folio(&s, vma, 0), anon_folio(&s, vma, 1));
        s.lru_gen_del_folio(f0, true);
        s.lru_gen_del_folio(f1, true);
        let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
        s.lru_gen_check_references(f0, &mut sc);
        assert_eq!(s.folios[f1].test(flags::REFERENCED), on);
        assert_eq!(s.vmas[vma as usize].pte(1) & PTE_YOUNG == 0, on);
        let r = s.lru_gen_check_references(f1, &mut sc);
        let want = if on {
            crate::reclaim::vmscan::FolioReferences::Reclaim
        } else {
            crate::reclaim::vmscan::FolioReferences::Activate
        };
        assert_eq!(r, want, "{on}");
        // The third page: activated by folio_activate() (fewer than 15).
        assert_eq!(s.vm.pgactivate, on as u64);
    }
}

#[test]
fn plugged_writes_of_a_batch_do_not_end_while_it_is_isolated() {
    // Writes of 1 ns + 4 ns of transfer, as in
    // v6_1_retries_folios_whose_write_ended_while_isolated. With
    // `mglru_writeback_plugged` the batch's four writes sit in
    // lru_gen_shrink_lruvec()'s block plug until evict_folios() has put the
    // batch back: none ends while the batch is isolated, so the retry
    // frees nothing and all four wait under writeback with PG_reclaim
    // (v6.1: min_seq + 1; v6.14: max_seq − 1). The next eviction (its
    // clock 10 ms later) first completes them: folio_rotate_reclaimable()
    // moves each to the tail of the oldest generation (pgrotated 4), and
    // that batch frees all four clean swap-cache folios without writing
    // them again. Every folio was isolated twice: pgscan 8 for pgsteal 4.
    // Without the plug the retry freed three of them in the first pass.
    for v in [V1, V2] {
        for plugged in [false, true] {
            let (mut s, fs) = swapping(v, 0.001, true, true);
            s.lru_gen.writeback_plugged = plugged;
            let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
            s.evict_folios(0, &mut sc, SWAPPINESS_ANON_ONLY);
            assert_eq!((s.vm.pswpout, s.vm.pgscan_anon), (4, 4), "{v:?} {plugged}");
            if !plugged {
                assert_eq!(s.vm.pgsteal_anon, 3, "{v:?}: the retry freed three");
                continue;
            }
            assert_eq!((s.vm.pgsteal_anon, s.vm.pgrotated), (0, 0), "{v:?}");
            for &f in &fs {
                let fo = &s.folios[f];
                assert!(
                    fo.test(flags::WRITEBACK) && fo.test(flags::RECLAIM),
                    "{v:?}"
                );
            }
            if v == V2 {
                age(&mut s);
            }
            let mut sc = ScanControl::new(Reclaimer::Direct, 32, 10_000_000);
            s.evict_folios(0, &mut sc, SWAPPINESS_ANON_ONLY);
            assert_eq!(s.vm.pgrotated, 4, "{v:?}");
            assert_eq!(
                (s.vm.pswpout, s.vm.pgscan_anon, s.vm.pgsteal_anon),
                (4, 8, 4),
                "{v:?}"
            );
            assert!(fs.iter().all(|&f| !s.folios.is_live(f)));
            s.check_invariants().unwrap();
        }
    }
}

#[test]
fn v6_1_look_around_after_a_direct_reclaimers_aging_uses_its_walker() {
    // 6.1's try_to_inc_max_seq() gives a direct reclaimer a walker
    // (`set_mm_walk(NULL)`), which stays in `current->reclaim_state` until
    // lru_gen_shrink_lruvec()'s clear_mm_walk(): a look-around after that
    // aging acts as kswapd's, folio_update_gen() for each of the 9 young
    // neighbours, nothing counted (the earlier model activated them: only
    // kswapd had a walker). The walk skips the VMA's one PTE table (not in
    // max_seq 5's Bloom filter: the round before found it cold), so the
    // neighbours stay young. Without the aging: folio_activate(), 9
    // pgactivate.
    for aged in [false, true] {
        let (mut s, vma) = v6_1_young_neighbours(true, 10);
        s.lru_gen.enabled = LRU_GEN_CORE | LRU_GEN_MM_WALK;
        s.lrugen_mut(0).filters[1] = Some(BloomFilter::new());
        let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
        if aged {
            assert!(s.try_to_inc_max_seq(0, 5, 60, false, &mut sc));
            assert_eq!(sc.mm_walk, Some(true), "walk->can_swap");
        }
        let max = s.lru_gen_folio(0).max_seq;
        assert_eq!(max, 5 + aged as u64);
        let f0 = anon_folio(&s, vma, 0);
        s.lru_gen_del_folio(f0, true);
        s.lru_gen_check_references(f0, &mut sc);
        for i in 1..10 {
            let f = anon_folio(&s, vma, i);
            let list = if aged { 3 } else { max };
            assert_eq!((seq_of(&s, f), list_seq_of(&s, f)), (max, list), "{aged}");
        }
        assert_eq!(s.vm.pgactivate, if aged { 0 } else { 9 });
        s.lru_gen_add_folio(f0, false);
        s.check_invariants().unwrap();
    }
}

#[test]
fn v6_1_evict_folios_sets_need_swapping_after_a_batch_of_anon() {
    // v6.1 `evict_folios(…, &need_swapping)`: a batch isolated from the
    // anon lists sets it (`type == LRU_GEN_ANON`), which lets
    // `should_abort_scan` stop a direct reclaimer at its goal; the file
    // batch of `abort_v6_1`'s tests leaves it clear.
    let (mut s, _) = swapping(V1, 1000.0, false, false);
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    assert!(!sc.mglru_need_swapping);
    s.evict_folios(0, &mut sc, SWAPPINESS_ANON_ONLY);
    assert_eq!((s.vm.pswpout, sc.mglru_need_swapping), (4, true));
}
