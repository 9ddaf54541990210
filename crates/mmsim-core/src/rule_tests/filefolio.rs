//! Rule tests of large page-cache folios (`machine.fs.large_folios`):
//! `page_cache_ra_order` and the v6.18 windows of mm/readahead.c, folios
//! added whole to the page cache, reclaimed whole with one shadow over
//! their range, refaults inside that range, and mapped large folios
//! through fault-around and the reverse map.
//!
//! The windows are those `tools/raprobe.c` prints on the 6.18 host (ext4,
//! `read_ahead_kb` 8192, `max_sectors_kb` 4096) with a `s` (sleep) after
//! each read: `r0 s r1 s` leaves 0..20 cached, reads 0..4 then 0..11
//! leave 0..80, and reads 0..20 leave 0..320 (VALIDATION.md).

use super::*;
use crate::mem::pagetable::{PTE_DIRTY, PTE_PRESENT, PTE_YOUNG};

/// A machine whose filesystem has large folios, with the host's readahead
/// limits (`read_ahead_kb` 8192, `max_sectors_kb` 4096).
pub(super) fn lf_config(memory_pages: u64) -> MachineConfig {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(memory_pages),
        read_ahead_kb: 8192,
        max_sectors_kb: 4096,
        policy: PolicyConfig {
            name: PolicyName::Cost,
            cost_variant: CostVariant::V6_2,
            ..Default::default()
        },
        ..Default::default()
    };
    cfg.fs.large_folios = true;
    cfg
}

/// A machine of [`lf_config`].
pub(super) fn lf_machine(memory_pages: u64) -> Sim {
    Sim::new(lf_config(memory_pages)).unwrap()
}

fn read(s: &mut Sim, file: u32, index: u32, pages: u16) {
    s.step(&Event::FileRead { file, index, pages });
}

/// The cached folios of `file` below `upto` as (first page, order).
pub(super) fn folios(s: &Sim, file: u32, upto: u32) -> Vec<(u32, u8)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < upto {
        match slot_folio(s.files[file as usize].slot(i)) {
            Some(f) => {
                let fo = &s.folios[f];
                assert_eq!(fo.index, i, "slot {i} points into the middle of a folio");
                out.push((i, fo.order()));
                i += 1 << fo.order();
            }
            None => i += 1,
        }
    }
    out
}

/// The first pages of the folios marked `PG_readahead`.
fn marked(s: &Sim, file: u32, upto: u32) -> Vec<u32> {
    folios(s, file, upto)
        .into_iter()
        .filter(|&(i, _)| s.folios[file_folio(s, file, i)].test(flags::READAHEAD))
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn the_folio_order_grows_by_two_at_each_async_readahead() {
    let mut s = lf_machine(1 << 16);
    let file = s.add_file("f", 16384).unwrap();
    // Offset 0: window 4 (async 3), ra->order 0: four order-0 folios, mark at 1.
    read(&mut s, file, 0, 1);
    assert_eq!(
        folios(&s, file, 16384),
        vec![(0, 0), (1, 0), (2, 0), (3, 0)]
    );
    assert_eq!(marked(&s, file, 16384), vec![1]);
    // Marker at 1: window 4..20 (next size 16), order 2: four 16 KiB folios,
    // the marker (start + size - async = 4) on the first.
    read(&mut s, file, 1, 1);
    let mut want = vec![(0, 0), (1, 0), (2, 0), (3, 0)];
    want.extend([(4, 2), (8, 2), (12, 2), (16, 2)]);
    assert_eq!(folios(&s, file, 16384), want);
    assert_eq!(marked(&s, file, 16384), vec![4]);
    read(&mut s, file, 2, 1);
    read(&mut s, file, 3, 1);
    // Marker at 4: next size 64 from 20, order 4: the end 84 is rounded
    // down to 16 pages (80), so 20..80; 20 and 24 are aligned only to 4
    // and 8 pages, then order-4 folios.
    read(&mut s, file, 4, 1);
    let ra = s.files[file as usize].ra;
    assert_eq!(
        (ra.start, ra.size, ra.async_size, ra.order),
        (20, 60, 60, 4)
    );
    want.extend([(20, 2), (24, 3), (32, 4), (48, 4), (64, 4)]);
    assert_eq!(folios(&s, file, 16384), want);
    assert_eq!(marked(&s, file, 16384), vec![20]);
    for i in 5..=19 {
        read(&mut s, file, i, 1);
    }
    assert_eq!(s.cached_ranges(file), "0..80 ");
    // Marker at 20 (the host's 0..320): 80..320, order 6 where aligned.
    read(&mut s, file, 20, 1);
    assert_eq!(s.cached_ranges(file), "0..320 ");
    want.extend([(80, 4), (96, 5), (128, 6), (192, 6), (256, 6)]);
    assert_eq!(folios(&s, file, 16384), want);
    assert_eq!(marked(&s, file, 16384), vec![80]);
    // Every page read once, in one IO per window; charged in pages.
    assert_eq!(s.acc.file_pages_read, 320);
    assert_eq!(s.vm.pgpgin, 4 * 320);
    assert_eq!(s.memcgs[0].usage + s.stock.1, 320 + s.stock.1);
    s.check_invariants().unwrap();
}

#[test]
fn a_cached_page_in_the_window_ends_the_large_folios_and_the_rest_is_order_0() {
    let mut s = lf_machine(1 << 16);
    let file = s.add_file("f", 16384).unwrap();
    // Page 10 cached alone (FADV_RANDOM), then the sequential stream.
    s.fadvise(file, Advice::Random).unwrap();
    read(&mut s, file, 10, 1);
    s.fadvise(file, Advice::Normal).unwrap();
    read(&mut s, file, 0, 1);
    // Marker at 1: window 4..20, order 2: the folio at 8 would cover 10
    // (-EEXIST), so 4..8 is one order-2 folio and the fallback reads the
    // rest of the window (16 - 4 pages from 8, async 16) page by page,
    // skipping 10; its mark (8 + 12 - 16) wraps below zero: no marker.
    read(&mut s, file, 1, 1);
    let mut want = vec![(0, 0), (1, 0), (2, 0), (3, 0), (4, 2)];
    want.extend((8..20).map(|i| (i, 0)));
    assert_eq!(folios(&s, file, 16384), want);
    assert_eq!(marked(&s, file, 16384), vec![4]);
}

/// Reads 0..80 as in the first test (folios up to order 4) and returns the
/// sim and the order-4 folio at 32.
pub(super) fn cached_0_80() -> (Sim, u32, FolioId) {
    let mut s = lf_machine(1 << 16);
    let file = s.add_file("f", 16384).unwrap();
    for i in 0..5 {
        read(&mut s, file, i, 1);
    }
    let f = file_folio(&s, file, 40);
    assert_eq!((s.folios[f].index, s.folios[f].order()), (32, 4));
    (s, file, f)
}

/// `shrink_folio_list` of folio `f` alone, references ignored: (pages
/// reclaimed, pages scanned).
pub(super) fn reclaim_one(s: &mut Sim, f: FolioId) -> (u64, u64) {
    let (reclaimed, scanned, _) = shrink_alone(s, f);
    (reclaimed, scanned)
}

/// [`reclaim_one`] with the list's statistics: (pages reclaimed, pages
/// scanned, `struct reclaim_stat`).
pub(super) fn shrink_alone(s: &mut Sim, f: FolioId) -> (u64, u64, ReclaimStat) {
    isolate(s, f);
    let (reclaimed, scanned, _, stat) = shrink_isolated(s, f);
    (reclaimed, scanned, stat)
}

#[test]
fn a_clean_large_folio_is_evicted_whole_with_one_shadow_over_its_range() {
    let (mut s, file, f) = cached_0_80();
    let (lists, age) = (
        s.memcgs[0].lruvec.lists[LruList::InactiveFile as usize].pages,
        s.memcgs[0].lruvec.nonresident_age,
    );
    let usage = s.memcgs[0].usage;
    assert_eq!(reclaim_one(&mut s, f), (16, 16));
    // Sixteen pages freed and uncharged; the clock aged by sixteen.
    assert_eq!(
        s.memcgs[0].lruvec.lists[LruList::InactiveFile as usize].pages,
        lists - 16
    );
    assert_eq!(s.memcgs[0].usage, usage - 16);
    assert_eq!(s.memcgs[0].lruvec.nonresident_age, age + 16);
    assert_eq!(s.vm.pgfree, 16);
    // One shadow, in every slot of 32..48.
    let shadow = s.files[file as usize].slot(32);
    assert!(s.shadow_layout.unpack(shadow).is_some());
    for i in 32..48 {
        assert_eq!(s.files[file as usize].slot(i), shadow, "slot {i}");
    }
    assert_eq!(s.cached_ranges(file), "0..32 48..80 ");
    s.check_invariants().unwrap();
}

#[test]
fn a_refault_in_the_middle_of_an_evicted_large_folio_sees_its_shadow() {
    let (mut s, file, f) = cached_0_80();
    reclaim_one(&mut s, f);
    // The shadow holds the clock read before the eviction aged it by the
    // folio's 16 pages: the distance seen from anywhere in the range is 16.
    let sh = s
        .shadow_layout
        .unpack(s.files[file as usize].slot(40))
        .unwrap();
    assert_eq!(s.workingset_refault_distance(sh, true), Some((16, 0)));
    // A random one-page read at 40 (no cached history right before it: 39
    // was evicted with the folio): an order-0 folio that finds the shadow.
    read(&mut s, file, 40, 1);
    assert_eq!(s.cached_ranges(file), "0..32 40..41 48..80 ");
    assert_eq!(s.vm.workingset_refault_file, 1);
    // 16 > active_file (0): not recent, not activated.
    assert_eq!(s.vm.workingset_activate_file, 0);
    let g = file_folio(&s, file, 40);
    assert_eq!(list_of(&s, g), LruList::InactiveFile);
    // The rest of the range keeps the shadow.
    assert!(s
        .shadow_layout
        .unpack(s.files[file as usize].slot(41))
        .is_some());
}

#[test]
fn a_large_folio_refaulting_whole_counts_its_pages() {
    let (mut s, file, f) = cached_0_80();
    let shadow_before = s.vm.workingset_refault_file;
    reclaim_one(&mut s, f);
    // The stream reaches 32 again from its start: refault of 32..48 as one
    // order-4 folio (the mark at 20 drives the window 80..320 first, so
    // read 32 after dropping everything else).
    for g in folios(&s, file, 16384) {
        let h = file_folio(&s, file, g.0);
        reclaim_one(&mut s, h);
    }
    assert_eq!(s.cached_ranges(file), "");
    read(&mut s, file, 0, 1);
    read(&mut s, file, 1, 1);
    read(&mut s, file, 4, 1);
    assert_eq!(folios(&s, file, 48).last(), Some(&(32, 4)));
    // 0..4, 4..20, 20..80 refaulted: 80 pages, each folio counted in pages.
    assert_eq!(s.vm.workingset_refault_file - shadow_before, 80);
}

#[test]
fn a_dirty_large_folio_is_written_whole() {
    let (mut s, file, f) = cached_0_80();
    s.step(&Event::FileWrite {
        file,
        index: 40,
        pages: 1,
    });
    assert!(s.folios[f].test(flags::DIRTY));
    assert_eq!(s.nr_dirty, 16);
    s.node.dirty = true;
    s.folios[f].set(flags::RECLAIM);
    let lru = LruList::from_index(s.folios.lru(f));
    s.memcgs[0].lruvec.lists[lru as usize].unlink(&mut s.folios, f);
    s.folios[f].clear(flags::LRU);
    let mut batch = vec![f];
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, s.clock);
    sc.ignore_references = true;
    let rules = s.rules();
    s.shrink_folio_list(&mut batch, &mut sc, rules);
    // kswapd wrote it: sixteen pages under writeback, none dirty.
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 16));
    assert_eq!(s.vm.nr_vmscan_write, 16);
    assert_eq!(s.vm.pgpgout, 4 * 16);
}

#[test]
fn fault_around_maps_the_pages_of_a_large_folio_and_reclaim_unmaps_them_all() {
    let (mut s, file, f) = cached_0_80();
    let task = s.add_task("t");
    let vma = s.mmap_file(task, file, 0, 16384, false).unwrap();
    // A read fault at 40: fault-around (16 pages, 32..48) maps every page
    // of the folio; only the faulting PTE is young.
    s.step(&Event::Access {
        vma,
        index: 40,
        write: false,
    });
    let present = |s: &Sim| {
        (0..100u32)
            .filter(|&i| s.vmas[vma as usize].pte(i) & PTE_PRESENT != 0)
            .collect::<Vec<_>>()
    };
    assert_eq!(present(&s), (32..48).collect::<Vec<_>>());
    assert_eq!(s.folios[f].mapcount, 16);
    assert_eq!(s.vm.pgmajfault, 0);
    // A store through page 45 (write-protect fault) dirties the PTE.
    s.step(&Event::Access {
        vma,
        index: 45,
        write: true,
    });
    assert_ne!(s.vmas[vma as usize].pte(45) & PTE_DIRTY, 0);
    // The reverse map finds the young PTEs of the folio in the VMA: the
    // VMA counts once, every young bit is cleared.
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, s.clock);
    let r = s.folio_referenced(f, &mut sc);
    assert_eq!((r.vmas, r.locked), (1, false));
    assert!((32..48).all(|i| s.vmas[vma as usize].pte(i) & PTE_YOUNG == 0));
    assert_eq!(s.folio_referenced(f, &mut sc).vmas, 0);
    // try_to_unmap clears all sixteen PTEs; the dirty one dirties the folio.
    assert!(s.try_to_unmap(f, &mut sc));
    assert!(present(&s).is_empty());
    assert_eq!(s.folios[f].mapcount, 0);
    assert!(s.folios[f].test(flags::DIRTY));
    assert_eq!(s.nr_dirty, 16);
}

#[test]
fn a_large_folio_is_marked_accessed_once_per_read() {
    let (mut s, file, f) = cached_0_80();
    s.fadvise(file, Advice::Random).unwrap();
    // One read of 16 pages over the folio: referenced once, not activated.
    read(&mut s, file, 32, 16);
    assert!(s.folios[f].test(flags::REFERENCED));
    assert_eq!(list_of(&s, f), LruList::InactiveFile);
    // A read starting in the page where the previous one ended (47) is the
    // same folio (`pos_same_folio`): not marked again.
    read(&mut s, file, 47, 1);
    assert_eq!(list_of(&s, f), LruList::InactiveFile);
    // So is a read at 33 right after it (the previous read ended in 47).
    read(&mut s, file, 33, 1);
    assert_eq!(list_of(&s, f), LruList::InactiveFile);
    // After a read elsewhere, a read in the folio is its second reference:
    // activated.
    read(&mut s, file, 70, 1);
    read(&mut s, file, 40, 1);
    assert_eq!(list_of(&s, f), LruList::ActiveFile);
    // `lru_activate` counts the folio's pages, and `workingset_activation`
    // ages the clock by them.
    assert_eq!(s.vm.pgactivate, 16);
}

#[test]
fn large_folios_under_memcg_limit_reclaim_keep_the_invariants() {
    for policy in [PolicyName::Cost, PolicyName::Mglru] {
        let mut cfg = MachineConfig {
            memory: Size::from_pages(1 << 15),
            read_ahead_kb: 8192,
            max_sectors_kb: 4096,
            memcg_max: Some(Size::from_pages(4096)),
            ..Default::default()
        };
        cfg.fs.large_folios = true;
        cfg.policy.name = policy;
        let mut s = Sim::new(cfg).unwrap();
        let task = s.add_task("t");
        let file = s.add_file("f", 20_000).unwrap();
        s.open(file, task).unwrap();
        let vma = s.mmap_file(task, file, 0, 20_000, false).unwrap();
        for pass in 0..2u32 {
            for i in 0..20_000u32 {
                if i % 7 == 3 {
                    s.step(&Event::Access {
                        vma,
                        index: (i * 13) % 20_000,
                        write: i % 3 == 0,
                    });
                } else {
                    read(&mut s, file, i, 1);
                }
                if i % 2500 == 0 {
                    s.check_invariants()
                        .unwrap_or_else(|e| panic!("{policy:?} pass {pass} at {i}: {e}"));
                }
            }
        }
        s.check_invariants()
            .unwrap_or_else(|e| panic!("{policy:?}: {e}"));
        assert!(s.vm.workingset_refault_file > 0, "{policy:?}");
        assert_eq!(s.vm.oom_kill, 0, "{policy:?}");
    }
}

#[test]
fn large_folios_are_a_filesystem_setting_refused_under_lru() {
    let mut cfg = MachineConfig::default();
    cfg.fs.large_folios = true;
    cfg.policy.name = PolicyName::Lru;
    let e = Sim::new(cfg).err().expect("refused");
    assert!(format!("{e}").contains("machine.fs.large_folios"), "{e}");
    let cfg = MachineConfig {
        swap: DeviceConfig {
            size: Some(Size::from_pages(1024)),
            large_folios: true,
            ..DeviceConfig::of(DeviceKind::Zram)
        },
        ..Default::default()
    };
    let e = Sim::new(cfg).err().expect("refused");
    assert!(format!("{e}").contains("machine.swap.large_folios"), "{e}");
}
