//! Rule tests of the classic LRU: `folio_mark_accessed` activation,
//! refault distance (mm/workingset.c), `get_scan_count` and the anon/file
//! balance (mm/vmscan.c), `inactive_is_low`, VM_EXEC protection.

use super::*;

#[test]
fn mark_accessed_promotes_in_two_steps() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 100).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    s.step(&Event::FileRead {
        file,
        index: 3,
        pages: 1,
    });
    let f = file_folio(&s, file, 3);
    // First read: a new page-cache folio, marked accessed once.
    assert_eq!(list_of(&s, f), LruList::InactiveFile);
    assert!(s.folios[f].test(flags::REFERENCED));
    // A read of the same folio again right away is not a second access (pos_same_folio).
    s.step(&Event::FileRead {
        file,
        index: 3,
        pages: 1,
    });
    assert_eq!(list_of(&s, f), LruList::InactiveFile);
    s.step(&Event::FileRead {
        file,
        index: 4,
        pages: 1,
    });
    // Second access: inactive,referenced -> active,unreferenced; the clock ages.
    let age = s.memcgs[0].lruvec.nonresident_age;
    s.step(&Event::FileRead {
        file,
        index: 3,
        pages: 1,
    });
    assert_eq!(list_of(&s, f), LruList::ActiveFile);
    assert!(!s.folios[f].test(flags::REFERENCED));
    assert_eq!(s.vm.pgactivate, 1);
    assert_eq!(s.memcgs[0].lruvec.nonresident_age, age + 1);
    // Third access: active,unreferenced -> active,referenced, no new activation.
    s.step(&Event::FileRead {
        file,
        index: 4,
        pages: 1,
    });
    s.step(&Event::FileRead {
        file,
        index: 3,
        pages: 1,
    });
    assert!(s.folios[f].test(flags::REFERENCED));
    assert_eq!(s.vm.pgactivate, 2); // page 4's activation
}

/// Evicts every file page through memcg reclaim at the given limit by reading `n` pages.
fn evict_setup(active: u32) -> (Sim, u32) {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 10_000).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    // `active` pages made active by two reads each.
    for i in 0..active {
        s.step(&Event::FileRead {
            file,
            index: i,
            pages: 1,
        });
        s.step(&Event::FileRead {
            file,
            index: 5000 + i,
            pages: 1,
        });
        s.step(&Event::FileRead {
            file,
            index: i,
            pages: 1,
        });
    }
    (s, file)
}

#[test]
fn refault_distance_decides_activation() {
    // active_file = 100 pages. A shadow evicted `d` clock ticks ago refaults.
    for (distance, activated) in [(100u64, true), (101, false), (0, true)] {
        let (mut s, file) = evict_setup(100);
        assert_eq!(s.memcgs[0].lruvec.size(LruList::ActiveFile), 100);
        let now = s.memcgs[0].lruvec.nonresident_age;
        let eviction = (now as u32).wrapping_sub(distance as u32) & s.shadow_layout.eviction_mask;
        let shadow = s.shadow_layout.pack(Shadow {
            eviction,
            memcg_id: 1,
            workingset: true,
        });
        *s.files[file as usize].slot_mut(7000) = shadow;
        let refaults = s.vm.workingset_refault_file;
        s.step(&Event::FileRead {
            file,
            index: 7000,
            pages: 1,
        });
        let f = file_folio(&s, file, 7000);
        assert_eq!(
            s.vm.workingset_refault_file,
            refaults + 1,
            "every shadow hit counts"
        );
        assert_eq!(
            list_of(&s, f) == LruList::ActiveFile,
            activated,
            "distance {distance}"
        );
        assert_eq!(s.vm.workingset_activate_file, activated as u64);
        assert_eq!(s.vm.workingset_restore_file, activated as u64);
        assert_eq!(s.folios[f].test(flags::WORKINGSET), activated);
        if activated {
            // restore is an IO cost event: SWAP_CLUSTER_MAX for one page (6.2+)
            assert_eq!(s.memcgs[0].lruvec.file_cost, 32);
        }
    }
}

#[test]
fn anon_refault_distance_includes_inactive_file() {
    let (s, _file) = evict_setup(10);
    let lv = &s.memcgs[0].lruvec;
    let (inactive, active) = lv.type_sizes(true);
    let now = lv.nonresident_age;
    let d = inactive + active;
    let mask = s.shadow_layout.eviction_mask;
    let near = Shadow {
        eviction: (now as u32).wrapping_sub(d as u32) & mask,
        memcg_id: 1,
        workingset: false,
    };
    let far = Shadow {
        eviction: (now as u32).wrapping_sub(d as u32 + 1) & mask,
        memcg_id: 1,
        workingset: false,
    };
    assert!(s.workingset_test_recent(near, false));
    assert!(!s.workingset_test_recent(far, false));
    // The same distance is too far for a file refault (active_file only, no swap).
    assert!(!s.workingset_test_recent(near, true));
}

#[test]
fn scanned_rotated_refault_tests_active_file_only_and_keeps_no_anon_shadow() {
    let mut s = machine(PolicyName::ScannedRotated, 1 << 16, Some(1024));
    let task = s.add_task("t");
    let vma = s.mmap_anon(task, 10).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    // v4.9: new anon pages start active.
    assert_eq!(list_of(&s, f), LruList::ActiveAnon);
    s.folios[f].set(flags::SWAPCACHE);
    assert_eq!(s.workingset_eviction(f), None);
    s.folios[f].clear(flags::SWAPCACHE);
}

#[test]
fn get_scan_count_cost_example_of_the_spec() {
    // spec §3.6: swappiness 60, anon_cost 100, file_cost 300 → 143 : 239.
    assert_eq!(cost_fractions(60, 100, 300), (143, 239));
    let mut s = machine(PolicyName::Cost, 1 << 20, Some(1 << 16));
    fill_lists(&mut s, [4096 * 4, 0, 4096 * 4, 0]);
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    sc.anon_cost = 100;
    sc.file_cost = 300;
    let nr = s.get_scan_count(&mut sc, ClassicRules::current(CostVariant::V6_2));
    // size >> 12 = 4 per list, × fraction / (143 + 239)
    assert_eq!(nr, [4 * 143 / 382, 0, 4 * 239 / 382, 0]);
    let mut sc = sc.clone();
    sc.priority = 2;
    let nr = s.get_scan_count(&mut sc, ClassicRules::current(CostVariant::V6_2));
    assert_eq!(nr, [4096 * 143 / 382, 0, 4096 * 239 / 382, 0]);
}

#[test]
fn swappiness_182_scans_9_percent_file_90_percent_anon() {
    // seed 001: "This will scan and reclaim 9% of the file pages and 90% of the anon pages."
    let sizes = [1 << 20, 0, 1 << 20, 0];
    let (mut rs, mut rr) = ([1000, 1000], [1000, 1000]);
    let (ap, fp) = scanned_rotated_fractions(182, sizes, &mut rs, &mut rr, true);
    assert_eq!((ap, fp), (182, 18));
    let denominator = ap + fp + 1;
    assert_eq!(ap * 1000 / denominator, 905); // 90.5 % of anon's scan target
    assert_eq!(fp * 1000 / denominator, 89); // 8.9 % of file's
                                             // Under the cost model with equal costs, the same 182:18 split (up to rounding).
    let (ap, fp) = cost_fractions(182, 500, 500);
    assert_eq!((ap, fp), (363, 35));
    assert_eq!(ap * 1000 / (ap + fp), 912);
    assert_eq!(fp * 1000 / (ap + fp), 87);
}

#[test]
fn swappiness_0_in_memcg_reclaim_scans_file_only() {
    let mut s = machine(PolicyName::Cost, 1 << 20, Some(1 << 16));
    s.cfg.swappiness = 0;
    fill_lists(&mut s, [1 << 16, 1 << 16, 1 << 16, 1 << 16]);
    let mut sc = ScanControl::new(Reclaimer::Memcg, 32, 0);
    let nr = s.get_scan_count(&mut sc, ClassicRules::current(CostVariant::V6_2));
    assert_eq!(nr, [0, 0, 16, 16]);
    // Global reclaim with swappiness 0 still may scan anon (SCAN_FRACT with ap = 0 → 0 here,
    // but at priority 0 it is SCAN_EQUAL only if swappiness != 0).
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    sc.priority = 0;
    let nr = s.get_scan_count(&mut sc, ClassicRules::current(CostVariant::V6_2));
    assert_eq!(nr[0], 0);
}

#[test]
fn inactive_is_low_uses_sqrt_ratio() {
    // < 1 GiB: ratio 1
    assert!(inactive_is_low(99, 100));
    assert!(!inactive_is_low(100, 100));
    // 1 GiB pair: ratio int_sqrt(10) = 3 → 25 % inactive target
    let total = 1u64 << 18;
    assert!(!inactive_is_low(total / 4, total - total / 4));
    assert!(inactive_is_low(total / 4 - 1, total - total / 4 + 1));
    // 10 GiB: ratio 10
    let total = 10u64 << 18;
    assert!(!inactive_is_low(total / 11 + 1, total - total / 11 - 1));
    assert!(inactive_is_low(total / 11 - 1, total - total / 11 + 1));
}

#[test]
fn vm_exec_file_folios_stay_active() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let task = s.add_task("t");
    let file = s.add_file("lib.so", 8).unwrap();
    let text = s.mmap_file(task, file, 0, 4, true).unwrap();
    let data = s.mmap_file(task, file, 4, 4, false).unwrap();
    for i in 0..4 {
        s.step(&Event::Access {
            vma: text,
            index: i,
            write: false,
        });
        s.step(&Event::Access {
            vma: data,
            index: i,
            write: false,
        });
    }
    // At the inactive tail: a young VM_EXEC file folio is activated on its first reference.
    let rules = ClassicRules::current(CostVariant::V6_2);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    s.shrink_inactive_list(8, true, &mut sc, rules);
    for i in 0..4 {
        assert_eq!(
            list_of(&s, file_folio(&s, file, i)),
            LruList::ActiveFile,
            "exec page {i}"
        );
        assert_eq!(
            list_of(&s, file_folio(&s, file, 4 + i)),
            LruList::InactiveFile,
            "data page {i} kept"
        );
    }
    // On the active list, referenced VM_EXEC folios rotate (stay active); others deactivate.
    for i in 0..4 {
        s.step(&Event::Access {
            vma: text,
            index: i,
            write: false,
        });
    }
    s.step(&Event::Access {
        vma: text,
        index: 0,
        write: false,
    });
    let before = s.vm.pgdeactivate;
    // Make page 3 unreferenced: clear its young bit.
    let pte = s.vmas[text as usize].pte_mut(3);
    *pte &= !crate::mem::pagetable::PTE_YOUNG;
    s.shrink_active_list(4, true, &mut sc, rules);
    for i in 0..3 {
        assert_eq!(
            list_of(&s, file_folio(&s, file, i)),
            LruList::ActiveFile,
            "referenced exec page {i}"
        );
    }
    let f3 = file_folio(&s, file, 3);
    assert_eq!(list_of(&s, f3), LruList::InactiveFile);
    assert!(s.folios[f3].test(flags::WORKINGSET));
    assert_eq!(s.vm.pgdeactivate, before + 1);
    // 6.2+: the three rotations are a cost event of weight 1 each.
    assert_eq!(s.memcgs[0].lruvec.file_cost, 3);
}

#[test]
fn madv_random_and_sequential_mappings_have_no_recency() {
    // v6.3+ `vma_has_recency()`: folio_referenced() skips VMAs with
    // VM_RAND_READ or VM_SEQ_READ, so their young PTEs neither protect nor
    // activate the folio, and the young bit is left set.
    for (advice, recency) in [
        (Advice::Normal, true),
        (Advice::Random, false),
        (Advice::Sequential, false),
    ] {
        let mut s = machine(PolicyName::Cost, 1 << 16, None);
        let task = s.add_task("t");
        let file = s.add_file("f", 8).unwrap();
        let vma = s.mmap_file(task, file, 0, 8, false).unwrap();
        s.madvise(vma, advice).unwrap();
        for i in 0..8 {
            s.step(&Event::Access {
                vma,
                index: i,
                write: false,
            });
        }
        let rules = ClassicRules::current(CostVariant::V6_2);
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
        s.shrink_inactive_list(8, true, &mut sc, rules);
        if recency {
            // One young PTE: kept on the inactive list with PG_referenced,
            // the young bit consumed by the walk.
            assert_eq!(s.vm.pgsteal_kswapd, 0, "{advice:?}");
            for i in 0..8 {
                let f = file_folio(&s, file, i);
                assert_eq!(list_of(&s, f), LruList::InactiveFile, "{advice:?} page {i}");
                assert!(s.folios[f].test(flags::REFERENCED), "{advice:?} page {i}");
                let young = s.vmas[vma as usize].pte(i) & crate::mem::pagetable::PTE_YOUNG;
                assert_eq!(young, 0, "{advice:?} page {i}");
            }
        } else {
            // The mapping is ignored: the folios look unreferenced and go.
            assert_eq!(s.vm.pgsteal_kswapd, 8, "{advice:?}");
            assert_eq!(s.vm.pgactivate, 0, "{advice:?}");
        }
    }
}

#[test]
fn anon_is_not_scanned_when_swap_is_exhausted() {
    let mut s = machine(PolicyName::Cost, 1 << 20, Some(64));
    fill_lists(&mut s, [1 << 16, 1 << 16, 1 << 16, 1 << 16]);
    let sw = s.swap.as_mut().unwrap();
    while sw.alloc(0).is_some() {}
    assert_eq!(sw.nr_free(), 0);
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    let nr = s.get_scan_count(&mut sc, ClassicRules::current(CostVariant::V6_2));
    assert_eq!(nr, [0, 0, 16, 16]);
    // With one slot free again, anon is scanned.
    s.swap.as_mut().unwrap().release(3);
    let nr = s.get_scan_count(&mut sc, ClassicRules::current(CostVariant::V6_2));
    // No cost recorded yet: SCAN_FRACT with fraction anon 60 (swappiness),
    // file 140, denominator 201; each list's 65536 >> DEF_PRIORITY = 16
    // scaled and rounded down (an online group): 16 × 60 / 201 = 4,
    // 16 × 140 / 201 = 11.
    assert_eq!(nr, [4, 4, 11, 11]);
}

#[test]
fn young_anon_needs_two_inactive_scans_in_current_kernels_but_one_in_4_9() {
    for (policy, scans_to_activate) in [(PolicyName::Cost, 2), (PolicyName::ScannedRotated, 1)] {
        let mut s = machine(policy, 1 << 16, Some(1 << 10));
        let task = s.add_task("t");
        let vma = s.mmap_anon(task, 4).unwrap();
        let f = fault_anon(&mut s, vma, 0);
        // Put it on the inactive list (4.9 starts it active).
        if list_of(&s, f) == LruList::ActiveAnon {
            let lv = &mut s.memcgs[0].lruvec;
            lv.lists[LruList::ActiveAnon as usize].unlink(&mut s.folios, f);
            s.folios[f].clear(flags::ACTIVE);
            lv.lists[LruList::InactiveAnon as usize].push_head(&mut s.folios, f, 0);
        }
        let crate::sim::Policy::Classic(rules) = s.policy else {
            unreachable!()
        };
        let mut n = 0;
        while list_of(&s, f) == LruList::InactiveAnon {
            s.step(&Event::Access {
                vma,
                index: 0,
                write: false,
            });
            let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
            s.shrink_inactive_list(1, false, &mut sc, rules);
            n += 1;
            assert!(n < 5);
        }
        assert_eq!(n, scans_to_activate, "{policy:?}");
    }
}
