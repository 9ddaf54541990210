//! Unit tests of kernel rules: scripted event sequences with the exact
//! outcome the kernel's code dictates (one test per rule).

use crate::config::{
    CgroupVersion, CostVariant, DeviceConfig, DeviceKind, MachineConfig, PolicyConfig, PolicyName,
    Size,
};
use crate::event::Event;
use crate::mem::filemap::slot_folio;
use crate::mem::folio::{flags, FolioId, LruList};
use crate::readahead::Advice;
use crate::reclaim::vmscan::{cost_fractions, inactive_is_low, scanned_rotated_fractions};
use crate::reclaim::workingset::Shadow;
use crate::reclaim::{Reclaimer, ScanControl};
use crate::sim::{ClassicRules, Sim};

fn machine(policy: PolicyName, memory_pages: u64, swap_pages: Option<u64>) -> Sim {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(memory_pages),
        policy: PolicyConfig {
            name: policy,
            cost_variant: CostVariant::V6_2,
            ..Default::default()
        },
        ..Default::default()
    };
    if let Some(s) = swap_pages {
        cfg.swap = DeviceConfig {
            size: Some(Size::from_pages(s)),
            ..DeviceConfig::of(DeviceKind::Zram)
        };
    }
    Sim::new(cfg).unwrap()
}

fn file_folio(sim: &Sim, file: u32, index: u32) -> FolioId {
    slot_folio(sim.files[file as usize].slot(index)).expect("resident")
}

fn list_of(sim: &Sim, f: FolioId) -> LruList {
    LruList::from_index(sim.folios[f].lru)
}

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
        let eviction =
            (now as u32).wrapping_sub(distance as u32) & crate::reclaim::workingset::EVICTION_MASK;
        let shadow = Shadow {
            eviction,
            memcg_id: 1,
            workingset: true,
        }
        .pack();
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
    let mask = crate::reclaim::workingset::EVICTION_MASK;
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
    assert!(nr[0] > 0);
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

/// Puts `sizes[i]` dummy folios on list i (flags matching the list).
fn fill_lists(s: &mut Sim, sizes: [u64; 4]) {
    for (i, &n) in sizes.iter().enumerate() {
        let lru = LruList::from_index(i as u8);
        let mut fl = flags::LRU;
        if !lru.is_file() {
            fl |= flags::SWAPBACKED;
        }
        if lru.is_active() {
            fl |= flags::ACTIVE;
        }
        for _ in 0..n {
            let f = s.folios.alloc(u32::MAX - 1, 0, fl, 0);
            s.memcgs[0].lruvec.lists[i].push_head(&mut s.folios, f, i as u8);
        }
    }
}

#[test]
fn swap_in_keeps_the_slot_on_ssd_but_frees_it_on_zram_and_on_write() {
    for (kind, write, keeps) in [
        (DeviceKind::Ssd, false, true),
        (DeviceKind::Zram, false, false),
        (DeviceKind::Ssd, true, false),
    ] {
        let (mut s, vma) = swapped_out_region(kind, 64, 256);
        let pte = s.vmas[vma as usize].pte(0);
        assert!(
            pte != 0 && pte & crate::mem::pagetable::PTE_PRESENT == 0,
            "page 0 is swapped out"
        );
        assert_eq!(
            s.vm.oom_kill, 0,
            "writeback is waited for, not a reason to OOM"
        );
        let used = s.swap.as_ref().unwrap().used;
        s.step(&Event::Access {
            vma,
            index: 0,
            write,
        });
        assert_eq!(s.vm.pswpin, 1);
        let f = s.vmas[vma as usize].pte(0) & crate::mem::pagetable::PTE_FOLIO_MASK;
        assert_eq!(
            s.folios[f].test(flags::SWAPCACHE),
            keeps,
            "{kind:?} write={write}"
        );
        assert_eq!(
            s.swap.as_ref().unwrap().used,
            if keeps { used } else { used - 1 },
            "{kind:?} write={write}"
        );
    }
}

#[test]
fn swapin_nr_pages_follows_the_kernel_heuristic() {
    use crate::fault::swapin_nr_pages;
    // No hits: read ahead only if the fault is next to the previous one.
    assert_eq!(swapin_nr_pages(10, 50, 0, 8, 0), 1);
    assert_eq!(swapin_nr_pages(49, 50, 0, 8, 0), 2);
    assert_eq!(swapin_nr_pages(51, 50, 0, 8, 0), 2);
    // hits + 2 rounded up to a power of two (at least 4), capped at 2^page-cluster.
    assert_eq!(swapin_nr_pages(10, 50, 1, 8, 0), 4);
    assert_eq!(swapin_nr_pages(10, 50, 3, 8, 0), 8);
    assert_eq!(swapin_nr_pages(10, 50, 30, 8, 0), 8);
    assert_eq!(swapin_nr_pages(10, 50, 30, 32, 0), 32);
    // Don't shrink readahead too fast: at least half the previous window.
    assert_eq!(swapin_nr_pages(10, 50, 0, 8, 8), 4);
}

#[test]
fn sequential_swap_in_reads_ahead_on_ssd_but_not_on_zram() {
    for (kind, expect_ra) in [(DeviceKind::Ssd, true), (DeviceKind::Zram, false)] {
        let (mut s, vma) = swapped_out_region(kind, 256, 2048);
        let before = s.vm.clone();
        // Read back the first 512 pages (swapped out long ago) in order.
        for i in 0..512 {
            s.step(&Event::Access {
                vma,
                index: i,
                write: false,
            });
        }
        let majfault = s.vm.pgmajfault - before.pgmajfault;
        let pswpin = s.vm.pswpin - before.pswpin;
        let ra = s.vm.swap_ra - before.swap_ra;
        let hits = s.vm.swap_ra_hit - before.swap_ra_hit;
        assert!(pswpin >= 500, "{kind:?}: {pswpin}");
        if expect_ra {
            // Windows grow to 2^page-cluster = 8: about one major fault per 8 pages.
            assert!(
                majfault * 6 < pswpin,
                "{kind:?}: {majfault} major faults for {pswpin} swap-ins"
            );
            assert_eq!(ra + majfault, pswpin);
            assert!(
                hits * 10 >= ra * 9,
                "{kind:?}: {hits} hits of {ra} readahead pages"
            );
        } else {
            assert_eq!((ra, hits), (0, 0));
            assert_eq!(majfault, pswpin);
        }
    }
}

/// A machine whose `memcg_max`-page group has written `pages` anonymous
/// pages in order (so the oldest are swapped out to `kind`), with pending
/// writeback given time to complete.
fn swapped_out_region(kind: DeviceKind, memcg_max: u64, pages: u32) -> (Sim, u32) {
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        memcg_max: Some(Size::from_pages(memcg_max)),
        swap: DeviceConfig {
            size: Some(Size::from_pages(4096)),
            ..DeviceConfig::of(kind)
        },
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, pages as u64).unwrap();
    for i in 0..pages {
        s.step(&Event::Access {
            vma,
            index: i,
            write: true,
        });
    }
    s.step(&Event::Think { ns: 1_000_000_000 });
    (s, vma)
}

#[test]
fn swap_writes_completed_during_limit_reclaim_are_reclaimed_in_it() {
    // Writeback ends by interrupt while reclaim is still running: a folio
    // whose swap write completed is rotated to the inactive tail and freed by
    // a later batch of the same reclaim, instead of staying resident as clean
    // swap cache while reclaim writes out ever more pages. So a first write
    // pass over 3x the limit swaps out about what it frees (the host's 6.18
    // kernel: pswpout 139,941, pgsteal 139,598 on the anon-seq-swap case).
    for version in [CgroupVersion::V1, CgroupVersion::V2] {
        let cfg = MachineConfig {
            memory: Size::from_pages(1 << 16),
            memcg_max: Some(Size::from_pages(1000)),
            cgroup_version: version,
            swap: DeviceConfig {
                size: Some(Size::from_pages(8192)),
                ..DeviceConfig::of(DeviceKind::Ssd)
            },
            ..Default::default()
        };
        let mut s = Sim::new(cfg).unwrap();
        let t = s.add_task("t");
        let vma = s.mmap_anon(t, 3000).unwrap();
        for i in 0..3000 {
            s.step(&Event::Access {
                vma,
                index: i,
                write: true,
            });
        }
        let (out, freed) = (s.vm.pswpout, s.vm.pgsteal_anon);
        assert!(freed >= 2000 - 64, "{version:?}: freed {freed}");
        assert!(
            out <= freed + 64,
            "{version:?}: {out} pages written but only {freed} freed"
        );
    }
}

/// Writes page `index` of anonymous `vma` (faulting it in) and returns its folio.
fn fault_anon(s: &mut Sim, vma: u32, index: u32) -> FolioId {
    s.step(&Event::Access {
        vma,
        index,
        write: true,
    });
    s.vmas[vma as usize].pte(index) & crate::mem::pagetable::PTE_FOLIO_MASK
}

// ---------------------------------------------------------------------------
// Readahead (mm/readahead.c, mm/filemap.c, v6.6)

fn read(s: &mut Sim, file: u32, index: u32, pages: u16) {
    s.step(&Event::FileRead { file, index, pages });
}

fn fault(s: &mut Sim, vma: u32, index: u32) {
    s.step(&Event::Access {
        vma,
        index,
        write: false,
    });
}

/// The resident pages of `file` in `[0, upto)`.
fn resident(s: &Sim, file: u32, upto: u32) -> Vec<u32> {
    (0..upto)
        .filter(|&i| slot_folio(s.files[file as usize].slot(i)).is_some())
        .collect()
}

fn marked(s: &Sim, file: u32, upto: u32) -> Vec<u32> {
    resident(s, file, upto)
        .into_iter()
        .filter(|&i| s.folios[file_folio(s, file, i)].test(flags::READAHEAD))
        .collect()
}

#[test]
fn sequential_reads_ramp_the_readahead_window() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 1000).unwrap();
    // Offset 0: initial window get_init_ra_size(1, 32) = 4, async 3, mark on page 1.
    read(&mut s, file, 0, 1);
    assert_eq!(resident(&s, file, 1000), (0..4).collect::<Vec<_>>());
    assert_eq!(marked(&s, file, 1000), vec![1]);
    // Each marker pushes the window on: 4..12 (8), 12..28 (16), 28..60 (32).
    for i in 1..=12 {
        read(&mut s, file, i, 1);
    }
    assert_eq!(resident(&s, file, 1000), (0..60).collect::<Vec<_>>());
    assert_eq!(marked(&s, file, 1000), vec![28]);
    let ra = s.files[file as usize].ra;
    assert_eq!((ra.start, ra.size, ra.async_size), (28, 32, 32));
    assert_eq!(s.acc.file_pages_read, 60);
    assert_eq!((s.acc.accesses, s.acc.misses, s.acc.hits), (13, 1, 12));
}

#[test]
fn fadv_random_reads_exactly_the_request() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 1000).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    read(&mut s, file, 0, 1);
    read(&mut s, file, 1, 1);
    read(&mut s, file, 100, 8);
    let mut want = vec![0, 1];
    want.extend(100..108);
    assert_eq!(resident(&s, file, 1000), want);
    assert!(marked(&s, file, 1000).is_empty());
    // One lookup miss per read that found nothing; the 8-page read is one IO.
    assert_eq!((s.acc.accesses, s.acc.misses), (10, 3));
}

#[test]
fn small_random_read_without_history_reads_one_page() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 1000).unwrap();
    read(&mut s, file, 500, 1);
    read(&mut s, file, 100, 1);
    assert_eq!(resident(&s, file, 1000), vec![100, 500]);
}

#[test]
fn context_readahead_follows_cached_history() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 1000).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    read(&mut s, file, 95, 5);
    read(&mut s, file, 900, 1);
    s.fadvise(file, Advice::Normal).unwrap();
    // Five cached pages before 100 (> req 1): window min(5 + 1, 32) = 6, async 1.
    read(&mut s, file, 100, 1);
    assert_eq!(resident(&s, file, 900), (95..106).collect::<Vec<_>>());
    assert_eq!(marked(&s, file, 1000), vec![105]);
}

#[test]
fn fadv_sequential_doubles_the_window_limit() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 4000).unwrap();
    s.fadvise(file, Advice::Sequential).unwrap();
    assert_eq!(s.files[file as usize].ra.ra_pages, 64);
    // Windows 4, 8, 16, 32, 64: the last starts at 60.
    for i in 0..=28 {
        read(&mut s, file, i, 1);
    }
    let ra = s.files[file as usize].ra;
    assert_eq!((ra.start, ra.size), (60, 64));
    assert_eq!(resident(&s, file, 4000), (0..124).collect::<Vec<_>>());
}

#[test]
fn oversize_read_uses_the_device_io_size() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 4000).unwrap();
    // A 256-page read at offset 0: max_pages = min(256, io_pages 320) = 256,
    // initial window 256 with its own marker merged (size 256, async 128):
    // 0..256 marked at 128. Reaching 128 pushes on by min(128, io_pages)
    // (the request's remainder): 256..384 marked at 256.
    read(&mut s, file, 0, 256);
    let ra = s.files[file as usize].ra;
    assert_eq!((ra.start, ra.size, ra.async_size), (256, 128, 128));
    assert_eq!(resident(&s, file, 4000), (0..384).collect::<Vec<_>>());
    assert_eq!(marked(&s, file, 4000), vec![256]);
}

#[test]
fn readahead_stops_at_end_of_file() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 10).unwrap();
    read(&mut s, file, 0, 1);
    read(&mut s, file, 1, 1);
    assert_eq!(resident(&s, file, 10), (0..10).collect::<Vec<_>>());
    assert_eq!(s.acc.file_pages_read, 10);
    // The second window (4..12, async 8) is cut to 4..10; its mark index
    // nr - lookahead wraps below zero, so nothing is marked.
    assert!(marked(&s, file, 10).is_empty());
    // A read past the end is cut at the end, the rest counted out of range.
    read(&mut s, file, 8, 5);
    assert_eq!(s.acc.out_of_range, 3);
}

#[test]
fn readahead_pages_go_through_refault_detection() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 100).unwrap();
    let shadow = Shadow {
        eviction: 0,
        memcg_id: 1,
        workingset: true,
    }
    .pack();
    *s.files[file as usize].slot_mut(2) = shadow;
    read(&mut s, file, 0, 1);
    assert_eq!(resident(&s, file, 100), vec![0, 1, 2, 3]);
    assert_eq!(s.vm.workingset_refault_file, 1);
    assert_eq!(s.vm.workingset_activate_file, 1);
    assert_eq!(list_of(&s, file_folio(&s, file, 2)), LruList::ActiveFile);
}

#[test]
fn mmap_read_around_then_fault_around() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let task = s.add_task("t");
    let file = s.add_file("f", 1000).unwrap();
    let vma = s.mmap_file(task, file, 0, 1000, false).unwrap();
    // Major fault at 100: read-around 84..116 (ra_pages centred), async
    // quarter marked at 84 + 32 - 8 = 108; only the faulting page is mapped.
    fault(&mut s, vma, 100);
    assert_eq!(resident(&s, file, 1000), (84..116).collect::<Vec<_>>());
    assert_eq!(marked(&s, file, 1000), vec![108]);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (1, 1));
    let mapped = |s: &Sim| -> Vec<u32> {
        (0..1000)
            .filter(|&i| s.vmas[vma as usize].pte(i) & crate::mem::pagetable::PTE_PRESENT != 0)
            .collect()
    };
    assert_eq!(mapped(&s), vec![100]);
    // Minor fault at 101: fault-around maps the cached 96..112 except the
    // marked 108, and the fault is done without filemap_fault.
    fault(&mut s, vma, 101);
    let want: Vec<u32> = (96..112).filter(|&i| i != 108).collect();
    assert_eq!(mapped(&s), want);
    assert_eq!((s.vm.pgfault, s.vm.pgmajfault), (2, 1));
    // Fault at 108: cached and marked: async readahead of the next window,
    // 116..148, marked at 116.
    fault(&mut s, vma, 108);
    assert_eq!(resident(&s, file, 1000), (84..148).collect::<Vec<_>>());
    assert_eq!(marked(&s, file, 1000), vec![116]);
    assert_eq!(s.vm.pgmajfault, 1);
}

#[test]
fn madv_random_mapping_faults_one_page_at_a_time() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let task = s.add_task("t");
    let file = s.add_file("f", 1000).unwrap();
    let vma = s.mmap_file(task, file, 0, 1000, false).unwrap();
    s.madvise(vma, Advice::Random).unwrap();
    fault(&mut s, vma, 100);
    fault(&mut s, vma, 101);
    assert_eq!(resident(&s, file, 1000), vec![100, 101]);
    assert_eq!(s.vm.pgmajfault, 2);
}

#[test]
fn mmap_miss_beyond_lotsamiss_stops_read_around() {
    let mut cfg_machine = machine(PolicyName::Cost, 1 << 16, None);
    cfg_machine.cfg.fault_around_bytes = 4096;
    let mut s = cfg_machine;
    let task = s.add_task("t");
    let file = s.add_file("f", 8000).unwrap();
    let vma = s.mmap_file(task, file, 0, 8000, false).unwrap();
    // 100 misses 64 pages apart: each reads a 32-page window (the first is
    // clamped at offset 0 to 0..32).
    for k in 0..100 {
        fault(&mut s, vma, k * 64 + 16);
    }
    assert_eq!(s.acc.file_pages_read, 100 * 32);
    assert_eq!(s.vmas[vma as usize].file_ra.mmap_miss, 100);
    // The 101st miss makes mmap_miss 101 > MMAP_LOTSAMISS: just the page.
    fault(&mut s, vma, 100 * 64 + 16);
    assert_eq!(s.acc.file_pages_read, 100 * 32 + 1);
}

#[test]
fn async_readahead_in_flight_is_waited_for() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 1000).unwrap();
    read(&mut s, file, 0, 1);
    read(&mut s, file, 1, 1); // marker: async 4..12 submitted, not waited for
    let ra = s.files[file as usize].ra;
    assert_eq!((ra.inflight_start, ra.inflight_end), (4, 12));
    assert!(s.clock < ra.inflight_done);
    read(&mut s, file, 4, 1); // must wait for the in-flight window
    assert!(s.clock >= ra.inflight_done);
}

// ---------------------------------------------------------------------------
// Memory cgroup hierarchy (mm/memcontrol.c, mm/page_counter.c)

fn touch(s: &mut Sim, vma: u32, pages: u32) {
    for i in 0..pages {
        s.step(&Event::Access {
            vma,
            index: i,
            write: true,
        });
    }
}

#[test]
fn mem_cgroup_iter_walks_the_subtree_in_pre_order() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(a, "b").unwrap();
    let c = s.add_memcg(0, "c").unwrap();
    let d = s.add_memcg(b, "d").unwrap();
    let walk = |root| {
        let mut v = vec![root];
        while let Some(n) = s.memcg_iter_next(root, *v.last().unwrap()) {
            v.push(n);
        }
        v
    };
    assert_eq!(walk(0), vec![0, a, b, d, c]);
    assert_eq!(walk(a), vec![a, b, d]);
    assert_eq!(walk(c), vec![c]);
    assert_eq!(s.memcgs[d as usize].path, "/a/b/d");
    assert_eq!(s.memcg_by_path("/a/b"), Some(b));
    assert!(s.add_memcg(a, "b").is_err(), "duplicate path");
    assert!(s.add_memcg(0, "x/y").is_err(), "slash in a name");
}

#[test]
fn charges_sum_up_the_tree_and_uncharge_on_free() {
    let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 14));
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(a, "b").unwrap();
    let c = s.add_memcg(0, "c").unwrap();
    let (tb, tc) = (s.add_task("tb"), s.add_task("tc"));
    s.attach_task(tb, b).unwrap();
    s.attach_task(tc, c).unwrap();
    let vb = s.mmap_anon(tb, 300).unwrap();
    let vc = s.mmap_anon(tc, 200).unwrap();
    touch(&mut s, vb, 300);
    touch(&mut s, vc, 200);
    let usage = |s: &Sim, m: u8| s.memcgs[m as usize].usage;
    // Charges come in batches of 64 with the surplus in the per-CPU stock,
    // which memory.current includes: b charged 5 batches (320, 20 stocked);
    // c's first batch gave b's stock back; c charged 4 batches (256, 56
    // stocked).
    assert_eq!(
        (usage(&s, b), usage(&s, a), usage(&s, c), usage(&s, 0)),
        (300, 300, 256, 556)
    );
    assert_eq!(s.stock, (c, 56));
    // Each folio sits on its own group's lruvec.
    assert_eq!(s.memcgs[b as usize].lruvec.evictable(), 300);
    assert_eq!(s.memcgs[a as usize].lruvec.evictable(), 0);
    // A file read by tc's descriptor is charged to c.
    let file = s.add_file("f", 50).unwrap();
    s.open(file, tc).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    for i in 0..50 {
        s.step(&Event::FileRead {
            file,
            index: i,
            pages: 1,
        });
    }
    // 50 page-cache pages come out of c's stock.
    assert_eq!((usage(&s, c), usage(&s, 0)), (256, 556));
    assert_eq!(s.stock, (c, 6));
    // memory.stat is hierarchical: a shows b's pages and faults.
    let (ra, rc, rr) = (s.memcg_report(a), s.memcg_report(c), s.memcg_report(0));
    assert_eq!(
        (ra.current, ra.anon, ra.file, ra.events.pgfault),
        (300, 300, 0, 300)
    );
    assert_eq!(
        (rc.current, rc.anon, rc.file, rc.events.pgfault),
        (256, 200, 50, 200)
    );
    assert_eq!((rr.current, rr.events.pgfault), (556, 500));
    s.check_invariants().unwrap();
}

#[test]
fn a_group_at_its_max_reclaims_only_its_subtree() {
    let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 14));
    let a = s.add_memcg(0, "a").unwrap();
    let c = s.add_memcg(0, "c").unwrap();
    s.set_memcg_max(a, 100).unwrap();
    let (ta, tc) = (s.add_task("ta"), s.add_task("tc"));
    s.attach_task(ta, a).unwrap();
    s.attach_task(tc, c).unwrap();
    let vc = s.mmap_anon(tc, 200).unwrap();
    touch(&mut s, vc, 200);
    let va = s.mmap_anon(ta, 300).unwrap();
    touch(&mut s, va, 300);
    assert!(s.memcgs[a as usize].usage <= 100);
    assert!(s.memcgs[a as usize].max_events > 0);
    assert!(s.vm.pswpout >= 200, "a's overflow went to swap");
    // c was never scanned: all its pages are resident, none swapped.
    assert_eq!(s.memcgs[c as usize].usage, 200);
    assert_eq!(s.memcgs[c as usize].lruvec.evictable(), 200);
    // Limit reclaim is not global reclaim; memory.stat counts it as direct.
    assert_eq!(s.vm.pgscan_kswapd + s.vm.pgscan_direct, 0);
    let ra = s.memcg_report(a);
    assert!(ra.pgscan >= 200 && ra.pgsteal >= 200 && ra.events.pgscan_direct == ra.pgscan);
    assert_eq!(ra.events_max, s.memcgs[a as usize].max_events);
    assert_eq!(s.memcg_report(c).pgscan, 0);
    s.check_invariants().unwrap();
}

#[test]
fn memcg_oom_kills_inside_the_group_when_reclaim_cannot_make_room() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let a = s.add_memcg(0, "a").unwrap();
    let c = s.add_memcg(0, "c").unwrap();
    s.set_memcg_max(a, 50).unwrap();
    let (ta, tc) = (s.add_task("ta"), s.add_task("tc"));
    s.attach_task(ta, a).unwrap();
    s.attach_task(tc, c).unwrap();
    // tc holds more anon memory than ta, but is outside the limited group.
    let vc = s.mmap_anon(tc, 500).unwrap();
    touch(&mut s, vc, 500);
    let va = s.mmap_anon(ta, 100).unwrap();
    touch(&mut s, va, 100);
    assert_eq!(s.vm.oom_kill, 1);
    assert!(
        s.tasks[ta as usize].dead,
        "the victim is in the group at its limit"
    );
    assert!(!s.tasks[tc as usize].dead);
    assert_eq!(
        s.memcgs[a as usize].usage, 0,
        "the victim's memory is freed"
    );
    s.check_invariants().unwrap();
}

#[test]
fn shadows_name_the_evicting_group_and_age_its_ancestors() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(a, "b").unwrap();
    let t = s.add_task("t");
    s.attach_task(t, b).unwrap();
    s.set_memcg_max(b, 64).unwrap();
    let file = s.add_file("f", 1000).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    for i in 0..200 {
        s.step(&Event::FileRead {
            file,
            index: i,
            pages: 1,
        });
    }
    // Evictions aged b's clock and its ancestors', not c-like siblings'.
    let age = |m: u8| s.memcgs[m as usize].lruvec.nonresident_age;
    assert!(age(b) >= 136, "b evicted at least 200 - 64 pages");
    assert_eq!(age(a), age(b));
    assert_eq!(age(0), age(b));
    let slot = s.files[file as usize].slot(0);
    let shadow = Shadow::unpack(slot).expect("page 0 was evicted and left a shadow");
    assert_eq!(shadow.memcg_id, b as u16 + 1);
}

#[test]
fn memory_high_delay_follows_the_kernel_formula() {
    use crate::memcg::{calculate_high_delay, calculate_overage, MEMCG_CHARGE_BATCH};
    // The worked numbers of mem_cgroup_handle_over_high()'s comment: high =
    // 100 MiB, a task charging a batch of 64 pages, HZ = 1000 (ms).
    let high = 25_600u64; // pages
    let mib = 256u64;
    let delay =
        |usage: u64| calculate_high_delay(MEMCG_CHARGE_BATCH, calculate_overage(usage, high));
    assert_eq!(delay(high), 0);
    assert_eq!(delay(high + mib), 6); // 101M, 1 % over
    assert_eq!(delay(high + 2 * mib), 25);
    assert_eq!(delay(high + 5 * mib), 159);
    assert_eq!(delay(high + 10 * mib), 639); // 110M, 10 % over
    assert_eq!(delay(high + 15 * mib), 1439);
    assert!(delay(high + 18 * mib) > crate::memcg::MEMCG_MAX_HIGH_DELAY_JIFFIES);
    // The task's own share: a single page owes 1/64 of a batch.
    assert_eq!(
        calculate_high_delay(1, calculate_overage(high + 10 * mib, high)),
        9
    );
}

#[test]
fn memory_high_reclaims_file_and_throttles_what_it_cannot_reclaim() {
    // File pages over high are reclaimed on return to user space.
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let g = s.add_memcg(0, "g").unwrap();
    s.set_memcg_knob(g, crate::memcg::MemcgKnob::High, 256)
        .unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    let file = s.add_file("f", 4000).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    for i in 0..2000 {
        s.step(&Event::FileRead {
            file,
            index: i,
            pages: 1,
        });
    }
    let r = s.memcg_report(g);
    assert!(r.current <= 256 + 64, "kept near high: {}", r.current);
    assert!(r.events.high > 0 && r.pgsteal > 1500);
    assert_eq!(r.events.oom_kill, 0);
    // Anonymous memory without swap cannot be reclaimed: the task is
    // throttled instead, never killed, and the group grows past high.
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let g = s.add_memcg(0, "g").unwrap();
    s.set_memcg_knob(g, crate::memcg::MemcgKnob::High, 256)
        .unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    let v = s.mmap_anon(t, 1024).unwrap();
    touch(&mut s, v, 1024);
    let r = s.memcg_report(g);
    assert!(r.current >= 1024);
    assert!(r.events.high_throttle_ns > 0, "throttled");
    assert_eq!(s.vm.oom_kill, 0);
    let psi_ns = s.psi.report(s.clock).some.total * 1000;
    assert!(
        psi_ns >= r.events.high_throttle_ns,
        "the sleep is a memstall"
    );
    s.check_invariants().unwrap();
}

#[test]
fn effective_low_shares_overcommitted_protection_among_siblings() {
    // The example tree of Documentation/admin-guide/cgroup-v2.rst: A with
    // low 2G and usage 6G; children B (low 3G, 2G used), C (low 1G, 2G
    // used), D (low 0, 2G used), E (low 10G, nothing used). Siblings
    // protect min(2,3) + min(2,1) = 3G > A's 2G, so B gets 2G·2/3 ≈ 1.33G,
    // C 2G·1/3 ≈ 0.67G, D nothing; E has no usage and is left alone.
    let gib = 1u64 << 18; // pages
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let a = s.add_memcg(0, "A").unwrap();
    let kids: Vec<u8> = ["B", "C", "D", "E"]
        .iter()
        .map(|n| s.add_memcg(a, n).unwrap())
        .collect();
    let (b, c, d, e) = (kids[0], kids[1], kids[2], kids[3]);
    for (m, low, usage) in [(b, 3, 2), (c, 1, 2), (d, 0, 2), (e, 10, 0)] {
        s.memcgs[m as usize].low = low * gib;
        s.memcgs[m as usize].usage = usage * gib;
    }
    s.memcgs[a as usize].low = 2 * gib;
    s.memcgs[a as usize].usage = 6 * gib;
    for m in [a, b, c, d, e] {
        s.memcg_calculate_protection(0, m);
    }
    let elow = |s: &Sim, m: u8| s.memcgs[m as usize].elow;
    assert_eq!(
        elow(&s, a),
        2 * gib,
        "a child of the reclaim root keeps its setting"
    );
    assert_eq!(elow(&s, b), 2 * gib * 2 / 3);
    assert_eq!(elow(&s, c), 2 * gib / 3);
    assert_eq!(elow(&s, d), 0);
    assert_eq!(elow(&s, e), 0);
    assert!(!s.memcg_below_low(0, b) && !s.memcg_below_low(0, a));
    // Reclaim rooted at A protects nothing of A itself; its children get
    // their own settings.
    s.memcg_calculate_protection(a, b);
    assert_eq!(elow(&s, b), 3 * gib);
    assert!(s.memcg_below_low(a, b), "B's usage is within its low");
    // memory.min follows the same rule.
    assert_eq!(crate::memcg::effective_protection(5, 10, 3, 6), 2);
    assert_eq!(crate::memcg::effective_protection(5, 10, 8, 6), 5);
}

#[test]
fn memory_low_spares_a_group_until_nothing_else_is_reclaimable() {
    // Two groups of file pages under a 1000-page limit on their parent;
    // `p` protects 400 pages, `u` nothing.
    let run = |low: u64| {
        let mut s = machine(PolicyName::Cost, 1 << 16, None);
        let parent = s.add_memcg(0, "parent").unwrap();
        s.set_memcg_max(parent, 1000).unwrap();
        let p = s.add_memcg(parent, "p").unwrap();
        let u = s.add_memcg(parent, "u").unwrap();
        s.set_memcg_knob(p, crate::memcg::MemcgKnob::Low, low)
            .unwrap();
        let (tp, tu) = (s.add_task("tp"), s.add_task("tu"));
        s.attach_task(tp, p).unwrap();
        s.attach_task(tu, u).unwrap();
        let (fp, fu) = (
            s.add_file("fp", 400).unwrap(),
            s.add_file("fu", 5000).unwrap(),
        );
        s.open(fp, tp).unwrap();
        s.open(fu, tu).unwrap();
        s.fadvise(fp, Advice::Random).unwrap();
        s.fadvise(fu, Advice::Random).unwrap();
        for i in 0..400 {
            s.step(&Event::FileRead {
                file: fp,
                index: i,
                pages: 1,
            });
        }
        for i in 0..5000 {
            s.step(&Event::FileRead {
                file: fu,
                index: i,
                pages: 1,
            });
        }
        s.check_invariants().unwrap();
        (s.memcg_report(p), s.memcg_report(u))
    };
    let (p, u) = run(400);
    assert_eq!(
        p.pgsteal, 0,
        "p is below its low and u has reclaimable pages"
    );
    assert!(p.current >= 400 && u.pgsteal > 4000);
    assert_eq!(p.events.low, 0);
    let (p, _) = run(0);
    assert!(p.pgsteal > 0, "without protection p is reclaimed too");
}

#[test]
fn scheduled_knob_writes_apply_when_the_clock_reaches_them() {
    use crate::memcg::MemcgKnob;
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let g = s.add_memcg(0, "g").unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    let file = s.add_file("f", 100_000).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    // A cycle: 300 pages at 1 ms, unlimited at 2 ms, 200 pages at 3 ms.
    s.schedule_memcg_knob(3_000_000, g, MemcgKnob::Max, 200)
        .unwrap();
    s.schedule_memcg_knob(1_000_000, g, MemcgKnob::Max, 300)
        .unwrap();
    s.schedule_memcg_knob(2_000_000, g, MemcgKnob::Max, u64::MAX)
        .unwrap();
    assert!(s.schedule_memcg_knob(0, 9, MemcgKnob::Max, 1).is_err());
    let mut i = 0;
    let mut seen = Vec::new();
    while s.clock < 4_000_000 {
        s.step(&Event::FileRead {
            file,
            index: i,
            pages: 1,
        });
        i += 1;
        let max = s.memcgs[g as usize].max;
        if seen.last() != Some(&max) {
            seen.push(max);
        }
        assert!(s.memcgs[g as usize].usage <= max);
    }
    assert_eq!(seen, vec![u64::MAX, 300, u64::MAX, 200]);
    s.check_invariants().unwrap();
}

fn soft_limit_machine(design: crate::config::SoftLimitReclaim) -> (Sim, u8, u8, u32, u32) {
    let cfg = MachineConfig {
        memory: Size::from_pages(8192),
        soft_limit_reclaim: design,
        policy: PolicyConfig {
            name: PolicyName::Cost,
            cost_variant: CostVariant::V6_2,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(0, "b").unwrap();
    let (ta, tb) = (s.add_task("ta"), s.add_task("tb"));
    s.attach_task(ta, a).unwrap();
    s.attach_task(tb, b).unwrap();
    let (fa, fb) = (
        s.add_file("fa", 100_000).unwrap(),
        s.add_file("fb", 100_000).unwrap(),
    );
    s.open(fa, ta).unwrap();
    s.open(fb, tb).unwrap();
    s.fadvise(fa, Advice::Random).unwrap();
    s.fadvise(fb, Advice::Random).unwrap();
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::SoftLimit, 0)
        .unwrap();
    (s, a, b, fa, fb)
}

/// Both groups read 6,000 pages each, interleaved, on an 8,192-page
/// machine: global reclaim must take 4,000+ pages from somewhere.
fn soft_limit_run(design: crate::config::SoftLimitReclaim) -> (u64, u64) {
    let (mut s, a, b, fa, fb) = soft_limit_machine(design);
    for i in 0..6000 {
        for f in [fa, fb] {
            s.step(&Event::FileRead {
                file: f,
                index: i,
                pages: 1,
            });
        }
    }
    s.check_invariants().unwrap();
    (s.memcg_report(a).pgsteal, s.memcg_report(b).pgsteal)
}

#[test]
fn soft_limit_tree_is_keyed_every_1024_events() {
    let (mut s, a, _, fa, _) = soft_limit_machine(crate::config::SoftLimitReclaim::Tree);
    for i in 0..1023 {
        s.step(&Event::FileRead {
            file: fa,
            index: i,
            pages: 1,
        });
    }
    assert_eq!(
        s.memcgs[a as usize].soft_tree_key, None,
        "1,023 events: not yet"
    );
    s.step(&Event::FileRead {
        file: fa,
        index: 1023,
        pages: 1,
    });
    // The excess when the 1,024th page was charged (usage includes the stock).
    assert_eq!(
        s.memcgs[a as usize].soft_tree_key,
        Some(s.memcgs[a as usize].usage)
    );
    assert_eq!(
        s.memcgs[0].soft_tree_key, None,
        "the top group has no soft limit"
    );
}

#[test]
fn soft_limit_designs_reclaim_the_group_over_its_soft_limit_first() {
    use crate::config::SoftLimitReclaim;
    let (a_off, b_off) = soft_limit_run(SoftLimitReclaim::Off);
    let (a_tree, b_tree) = soft_limit_run(SoftLimitReclaim::Tree);
    let (a_seed, b_seed) = soft_limit_run(SoftLimitReclaim::Seed004);
    // Ignoring soft limits, the two equal readers are reclaimed alike.
    assert!(
        a_off.abs_diff(b_off) * 10 < a_off + b_off,
        "{a_off} vs {b_off}"
    );
    // The tree reclaims the offender at priority 0 first; normal reclaim
    // still takes some from b.
    assert!(a_tree > 2 * b_tree, "tree: {a_tree} vs {b_tree}");
    // Seed 004 shrinks only eligible groups while they have pages.
    assert!(
        a_seed > 10 * b_seed.max(1),
        "seed-004: {a_seed} vs {b_seed}"
    );
}

#[test]
fn seed_004_eligibility_follows_ancestors() {
    let (mut s, a, b, _, _) = soft_limit_machine(crate::config::SoftLimitReclaim::Seed004);
    let a1 = s.add_memcg(a, "a1").unwrap();
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::SoftLimit, u64::MAX)
        .unwrap();
    s.memcgs[a as usize].usage = 10;
    s.memcgs[0].usage = 10;
    assert!(!s.soft_reclaim_eligible(a1), "nothing over its soft limit");
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::SoftLimit, 5)
        .unwrap();
    assert!(s.soft_reclaim_eligible(a), "a is over");
    assert!(s.soft_reclaim_eligible(a1), "a1's parent is over");
    assert!(!s.soft_reclaim_eligible(b));
}

#[test]
fn memory_pressure_is_per_group_and_rolls_up() {
    // a/a1 is throttled over memory.high (anon, no swap); b just runs.
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let a = s.add_memcg(0, "a").unwrap();
    let a1 = s.add_memcg(a, "a1").unwrap();
    let b = s.add_memcg(0, "b").unwrap();
    s.set_memcg_knob(a1, crate::memcg::MemcgKnob::High, 128)
        .unwrap();
    let (t1, tb) = (s.add_task("t1"), s.add_task("tb"));
    s.attach_task(t1, a1).unwrap();
    s.attach_task(tb, b).unwrap();
    let (v1, vb) = (
        s.mmap_anon(t1, 1024).unwrap(),
        s.mmap_anon(tb, 1024).unwrap(),
    );
    for i in 0..1024 {
        for v in [v1, vb] {
            s.step(&Event::Access {
                vma: v,
                index: i,
                write: true,
            });
        }
    }
    let total = |m: u8| s.memcg_report(m).psi.some.total;
    assert!(total(a1) > 0);
    assert_eq!(total(a), total(a1), "a's only stalled task is in a1");
    assert_eq!(total(b), 0);
    assert!(total(0) >= total(a1), "the system sees every stall");
    let series = s.memcg_psi_series(a1);
    assert_eq!(series.last().unwrap().1, s.memcg_report(a1).psi);
}

#[test]
fn memory_reclaim_reclaims_on_demand_and_honours_swappiness() {
    let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 14));
    let g = s.add_memcg(0, "g").unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    let v = s.mmap_anon(t, 1000).unwrap();
    touch(&mut s, v, 1000);
    // swappiness=0 reclaims file only: there is none, so EAGAIN.
    assert!(s.memory_reclaim(g, 100, Some(0)).is_err());
    assert_eq!(s.vm.pswpout, 0);
    let before = s.memcgs[g as usize].usage;
    let got = s.memory_reclaim(g, 300, Some(200)).unwrap();
    assert!(got >= 300);
    assert_eq!(s.memcgs[g as usize].usage, before - got);
    assert!(s.vm.pswpout >= 300);
    // As a scheduled knob write.
    s.schedule_memcg_knob(s.clock + 1, g, crate::memcg::MemcgKnob::Reclaim, 200)
        .unwrap();
    let usage = s.memcgs[g as usize].usage;
    s.step(&Event::Think { ns: 10 }); // the clock passes the write's time
    assert_eq!(s.memcgs[g as usize].usage, usage);
    s.step(&Event::Think { ns: 10 }); // applied before the next event
    assert!(s.memcgs[g as usize].usage <= usage - 200);
    s.check_invariants().unwrap();
}

/// Runs the swap.max case under `version`: /a (memory.swap.max 10) over /a/b
/// (memory.max 100) whose task touches 105 anon pages.
fn swap_max_case(version: crate::config::CgroupVersion) -> (Sim, u8, u8, u32) {
    let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 12));
    s.cfg.cgroup_version = version;
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(a, "b").unwrap();
    s.set_memcg_max(b, 100).unwrap();
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::SwapMax, 10)
        .unwrap();
    let t = s.add_task("t");
    s.attach_task(t, b).unwrap();
    let v = s.mmap_anon(t, 105).unwrap();
    touch(&mut s, v, 105);
    s.check_invariants().unwrap();
    (s, a, b, t)
}

#[test]
fn swap_max_caps_the_subtrees_swap_then_anon_is_not_reclaimed() {
    let (mut s, a, b, t) = swap_max_case(crate::config::CgroupVersion::V2);
    // Limit reclaim of /a/b swaps out exactly what /a's swap.max allows; the
    // other anon folios it tried are refused (memory.swap.events max, fail)
    // and activated.
    assert_eq!(s.vm.pswpout, 10);
    assert_eq!(s.memcgs[a as usize].swap_usage, 10);
    assert_eq!(s.memcgs[b as usize].swap_usage, 10);
    assert_eq!(s.memcgs[0].swap_usage, 10);
    let st = s.memcgs[b as usize].stat;
    assert!(st.swap_max > 0);
    assert_eq!(st.swap_max, st.swap_fail);
    assert_eq!(s.mem_cgroup_get_nr_swap_pages(b), 0);
    assert_eq!(s.mem_cgroup_get_nr_swap_pages(0), (1 << 12) - 10);
    // At half its swap.max and more, the group's swap counts as full.
    assert!(s.mem_cgroup_swap_full(b));
    assert!(!s.mem_cgroup_swap_full(0));
    // With no swap left for the group, get_scan_count scans only file: the
    // group's limit can no longer be met by reclaim, so the OOM killer runs,
    // and the victim's swap slots are uncharged.
    let w = s.mmap_anon(t, 50).unwrap();
    touch(&mut s, w, 50);
    assert_eq!(s.vm.oom_kill, 1);
    assert_eq!(s.vm.pswpout, 10);
    assert_eq!(s.memcgs[a as usize].swap_usage, 0);
    assert_eq!(s.memcgs[0].swap_usage, 0);
    s.check_invariants().unwrap();
}

#[test]
fn swap_max_is_a_v2_limit_only() {
    // Under cgroup v1 the swap counter only accounts (memory.memsw.* is not
    // modelled): the same run swaps past 10 pages.
    let (s, a, b, _) = swap_max_case(crate::config::CgroupVersion::V1);
    assert!(s.vm.pswpout > 10, "{}", s.vm.pswpout);
    assert_eq!(s.memcgs[a as usize].swap_usage, s.vm.pswpout);
    assert_eq!(s.memcgs[b as usize].stat.swap_max, 0);
}

#[test]
fn swap_on_the_filesystems_disk_shares_its_device() {
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        fs: DeviceConfig::of(DeviceKind::Hdd),
        swap: DeviceConfig {
            size: Some(Size::from_pages(1 << 12)),
            ..DeviceConfig::of(DeviceKind::Fs)
        },
        ..Default::default()
    };
    cfg.validate().unwrap();
    let mut s = Sim::new(cfg).unwrap();
    let a = s.add_memcg(0, "a").unwrap();
    s.set_memcg_max(a, 100).unwrap();
    let t = s.add_task("t");
    s.attach_task(t, a).unwrap();
    let v = s.mmap_anon(t, 200).unwrap();
    touch(&mut s, v, 200);
    assert!(s.vm.pswpout >= 100);
    // Swap writes went to the filesystem's disk, with its (hdd) timing.
    assert_eq!(s.fs.pages_written, s.vm.pswpout);
    assert_eq!(s.swap.as_ref().unwrap().dev.pages_written, 0);
    assert!(s.fs.busy_until > 0);
    let before = s.fs.pages_read;
    touch(&mut s, v, 1);
    assert_eq!(s.fs.pages_read, before + s.vm.pswpin);
}

#[test]
fn a_swapped_in_page_is_charged_to_its_slots_group_after_a_move() {
    let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 12));
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(0, "b").unwrap();
    s.set_memcg_max(a, 100).unwrap();
    let t = s.add_task("t");
    s.attach_task(t, a).unwrap();
    let v = s.mmap_anon(t, 150).unwrap();
    touch(&mut s, v, 150);
    let swapped = s.memcgs[a as usize].swap_usage;
    assert!(swapped >= 50, "{swapped}");
    // Move the task (cgroup.procs), then fault the swapped pages back in: they are
    // charged to /a, whose slots they were (mem_cgroup_swapin_charge_folio); a
    // new page is charged to /b.
    s.set_memcg_knob(b, crate::memcg::MemcgKnob::Procs, t as u64)
        .unwrap();
    let b_before = s.memcgs[b as usize].usage;
    for i in 0..150 {
        s.step(&Event::Access {
            vma: v,
            index: i,
            write: false,
        });
    }
    assert!(s.vm.pswpin > 0);
    assert_eq!(
        s.memcgs[b as usize].usage, b_before,
        "no swap-in charged to /b"
    );
    let w = s.mmap_anon(t, 1).unwrap();
    touch(&mut s, w, 1);
    assert!(s.memcgs[b as usize].usage > b_before);
    assert!(s
        .set_memcg_knob(b, crate::memcg::MemcgKnob::Procs, 99)
        .is_err());
    s.check_invariants().unwrap();
}

#[test]
fn swap_high_throttles_without_reclaiming() {
    let run = |swap_high: u64| {
        let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 12));
        let a = s.add_memcg(0, "a").unwrap();
        s.set_memcg_max(a, 100).unwrap();
        s.set_memcg_knob(a, crate::memcg::MemcgKnob::SwapHigh, swap_high)
            .unwrap();
        let t = s.add_task("t");
        s.attach_task(t, a).unwrap();
        let v = s.mmap_anon(t, 300).unwrap();
        touch(&mut s, v, 300);
        s.check_invariants().unwrap();
        (
            s.memcgs[a as usize].stat,
            s.memcgs[a as usize].swap_usage,
            s.vm.pswpout,
        )
    };
    let (free, _, out_free) = run(u64::MAX);
    assert_eq!((free.swap_high, free.high_throttle_ns), (0, 0));
    let (capped, usage, out) = run(10);
    // Swapping goes on (swap.high is no limit) ...
    assert_eq!(out, out_free);
    assert!(usage > 10);
    // ... but returns to user space over it are throttled, by the
    // memory.high curve: once the usage is twice swap.high or more, the 2 s
    // maximum each time.
    assert!(capped.swap_high > 100, "{}", capped.swap_high);
    assert!(
        capped.high_throttle_ns > 100 * 2_000_000_000,
        "{}",
        capped.high_throttle_ns
    );
    assert_eq!(capped.high, 0, "no memory.high reclaim");
}
