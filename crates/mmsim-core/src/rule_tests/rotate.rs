//! Rule tests of `folio_rotate_reclaimable()` (mm/swap.c, v5.16 through v6.18):
//! `lru_move_tail` counts PGROTATED in pages, `folio_nr_pages(folio)`, not one
//! per folio (verified in v6.18's mm/swap.c; `thp_nr_pages(page)` before the
//! folio conversion), so a large page-cache folio whose write completes with
//! PG_reclaim set adds its size to `pgrotated`.

use crate::config::{MachineConfig, PolicyConfig, PolicyName, Size};
use crate::event::Event;
use crate::readahead::Advice;
use crate::sim::Sim;

/// A 64-page memory cgroup limit (every reclaim the reader's own limit
/// reclaim) over a 1,000-page file under FADV_RANDOM: one write of `pages`
/// pages at page 8 (one folio of that size with `large_folios`), then pages
/// 100..300 read once each. Returns (pgrotated, nr_vmscan_immediate_reclaim,
/// the written folio's pages).
fn rotated(policy: PolicyName, large_folios: bool, pages: u16) -> (u64, u64, u32) {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        memcg_max: Some(Size::from_pages(64)),
        policy: PolicyConfig {
            name: policy,
            ..Default::default()
        },
        ..Default::default()
    };
    cfg.fs.large_folios = large_folios;
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("writer");
    let f = s.add_file("data", 1000).unwrap();
    s.open(f, t).unwrap();
    s.fadvise(f, Advice::Random).unwrap();
    s.step(&Event::FileWrite {
        file: f,
        index: 8,
        pages,
    });
    let layout = super::filefolio::folios(&s, f, 16);
    let written = layout
        .iter()
        .find(|&&(i, _)| i == 8)
        .map(|&(_, o)| 1u32 << o)
        .expect("page 8 cached");
    let mut ev = Vec::new();
    ev.extend((100..300).map(|index| Event::FileRead {
        file: f,
        index,
        pages: 1,
    }));
    s.run(&ev);
    (s.vm.pgrotated, s.vm.nr_vmscan_immediate_reclaim, written)
}

/// Classic LRU: limit reclaim meets the dirty folio, marks it (4 pages of
/// `nr_vmscan_immediate_reclaim`) and activates it; the flusher writes it; its
/// completion rotates it: `pgrotated` is its 4 pages, as the kernel counts
/// them (1 before).
#[test]
fn a_large_folio_rotated_at_its_write_end_counts_its_pages() {
    let (rot, immediate, nr) = rotated(PolicyName::Cost, true, 4);
    assert_eq!(nr, 4, "one order-2 folio");
    assert_eq!((rot, immediate), (4, 4));
}

/// Order-0 folios: one page each. Reclaim meets page 8 dirty (one immediate),
/// wakes the flusher, which writes all four; it meets pages 9..11 under
/// writeback (PG_reclaim set, no immediate count); all four rotate.
#[test]
fn order_0_folios_rotate_one_page_each() {
    let (rot, immediate, nr) = rotated(PolicyName::Cost, false, 4);
    assert_eq!(nr, 1);
    assert_eq!((rot, immediate), (4, 1));
}

/// MGLRU: `lru_gen_rotate_reclaimable` (`lru_move_tail` →
/// `lru_gen_add_folio(reclaiming)`) counts the folio's pages as well.
#[test]
fn mglru_rotation_counts_the_folio_pages() {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        policy: PolicyConfig {
            name: PolicyName::Mglru,
            ..Default::default()
        },
        ..Default::default()
    };
    cfg.fs.large_folios = true;
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("writer");
    let f = s.add_file("data", 1000).unwrap();
    s.open(f, t).unwrap();
    s.step(&Event::FileWrite {
        file: f,
        index: 8,
        pages: 4,
    });
    let folio = super::slot_folio(s.files[f as usize].slot(8)).expect("cached");
    assert_eq!(s.folios[folio].nr_pages(), 4);
    s.lru_gen_rotate_reclaimable(folio);
    assert_eq!(s.vm.pgrotated, 4);
}
