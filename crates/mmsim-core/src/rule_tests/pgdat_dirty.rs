//! kswapd's PGDAT_DIRTY on the classic LRU per kernel version
//! (`machine.policy.pgdat_dirty_guard`): `shrink_node()` of 4.16 to 6.12
//! (6.12.118 still) sets it when `sc->nr.unqueued_dirty ==
//! sc->nr.file_taken`, also for a pass that took no file page (0 == 0);
//! 6.13's "mm: fix shrink nr.unqueued_dirty counter issue" sets it only with
//! a dirty page counted.

use super::*;

/// A classic (`cost`) machine of 4096 pages with a 4096-page zram swap,
/// PGDAT_DIRTY's test with (`guard`) or without the non-zero guard, one
/// task with a 16-page file open. Returns it with the task and the file.
fn classic(guard: bool) -> (Sim, crate::TaskId, u32) {
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(4096),
        policy: PolicyConfig {
            name: PolicyName::Cost,
            pgdat_dirty_guard: guard,
            ..Default::default()
        },
        swap: DeviceConfig {
            size: Some(Size::from_pages(4096)),
            ..DeviceConfig::of(DeviceKind::Zram)
        },
        ..Default::default()
    })
    .unwrap();
    let t = s.add_task("t");
    let file = s.add_file("f", 16).unwrap();
    s.open(file, t).unwrap();
    (s, t, file)
}

/// One kswapd pass of `shrink_node()` at priority 0 (everything on the
/// lists is scanned); returns the pages it counted as file taken and as
/// unqueued dirty.
fn kswapd_pass(s: &mut Sim, may_swap: bool) -> (u64, u64) {
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    sc.priority = 0;
    sc.may_swap = may_swap;
    s.shrink_node(&mut sc);
    (sc.nr_file_taken, sc.nr_unqueued_dirty)
}

#[test]
fn a_pass_that_takes_no_file_page_sets_pgdat_dirty_only_without_the_guard() {
    // 8 anonymous pages and no page cache: the pass scans anon only,
    // file_taken 0 and unqueued_dirty 0. 6.12's bare equality holds
    // (0 == 0) and sets the flag; 6.13's guard does not.
    for guard in [true, false] {
        let (mut s, t, _) = classic(guard);
        let vma = s.mmap_anon(t, 8).unwrap();
        touch(&mut s, vma, 8);
        assert!(!s.node.dirty);
        assert_eq!(kswapd_pass(&mut s, true), (0, 0), "{guard}");
        assert_eq!(s.node.dirty, !guard, "{guard}");
        s.check_invariants().unwrap();
    }
}

#[test]
fn only_dirty_file_pages_taken_set_pgdat_dirty_either_way_and_clean_ones_neither() {
    // 8 dirty pages: file_taken 8 == unqueued_dirty 8, both versions set
    // it. 8 clean pages (read): 8 taken, 0 dirty, neither does.
    for guard in [true, false] {
        for dirty in [true, false] {
            let (mut s, _, file) = classic(guard);
            s.fadvise(file, crate::readahead::Advice::Random).unwrap();
            for index in 0..8 {
                let e = if dirty {
                    Event::FileWrite {
                        file,
                        index,
                        pages: 1,
                    }
                } else {
                    Event::FileRead {
                        file,
                        index,
                        pages: 1,
                    }
                };
                s.step(&e);
            }
            let want = if dirty { (8, 8) } else { (8, 0) };
            assert_eq!(kswapd_pass(&mut s, false), want, "{guard} {dirty}");
            assert_eq!(s.node.dirty, dirty, "{guard} {dirty}");
            s.check_invariants().unwrap();
        }
    }
}

#[test]
fn direct_reclaim_never_sets_pgdat_dirty() {
    // The test sits under `current_is_kswapd()`: a direct reclaimer's
    // pass that took no file page leaves the flag clear in both versions.
    for guard in [true, false] {
        let (mut s, t, _) = classic(guard);
        let vma = s.mmap_anon(t, 8).unwrap();
        touch(&mut s, vma, 8);
        let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
        sc.priority = 0;
        s.shrink_node(&mut sc);
        assert_eq!((sc.nr_file_taken, sc.nr_unqueued_dirty), (0, 0));
        assert!(!s.node.dirty, "{guard}");
    }
}
