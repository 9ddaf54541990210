//! Rule tests of `folio_rotate_reclaimable()` (mm/swap.c, v5.16 through v6.18):
//! `lru_move_tail` counts PGROTATED in pages, `folio_nr_pages(folio)`, not one
//! per folio (verified in v6.18's mm/swap.c; `thp_nr_pages(page)` before the
//! folio conversion), so a large page-cache folio whose write completes with
//! PG_reclaim set adds its size to `pgrotated`.

use crate::config::{MachineConfig, PolicyName, Size};
use crate::event::Event;
use crate::readahead::Advice;
use crate::sim::Sim;

/// A 1,000-page file under FADV_RANDOM on a 256 MiB machine (`memcg_max`: a
/// limit of that many pages, so every reclaim is the reader's own limit
/// reclaim) after one write of 4 pages at page 8 (one order-2 folio with
/// `large_folios`). Returns the machine and the file.
fn written(policy: PolicyName, memcg_max: Option<u64>, large_folios: bool) -> (Sim, u32) {
    // The large-folio rule tests' machine (`filefolio::lf_config`), made to order.
    let mut cfg = super::filefolio::lf_config(1 << 16);
    cfg.memcg_max = memcg_max.map(Size::from_pages);
    cfg.policy.name = policy;
    cfg.fs.large_folios = large_folios;
    random_file_written(cfg, 8, 4)
}

/// A machine of `cfg` with one task whose 1,000-page file (FADV_RANDOM) has
/// had `pages` pages from page `index` written once. Returns the machine and
/// the file (`crate::rule_tests::reclaim_throttle` starts from it too).
pub(super) fn random_file_written(cfg: MachineConfig, index: u32, pages: u16) -> (Sim, u32) {
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("writer");
    let f = s.add_file("data", 1000).unwrap();
    s.open(f, t).unwrap();
    s.fadvise(f, Advice::Random).unwrap();
    s.step(&Event::FileWrite {
        file: f,
        index,
        pages,
    });
    (s, f)
}

/// Reads pages 100..300 of file `f` once each, one page per read.
pub(super) fn read_100_to_300(s: &mut Sim, f: u32) {
    let ev: Vec<Event> = (100..300)
        .map(|index| Event::FileRead {
            file: f,
            index,
            pages: 1,
        })
        .collect();
    s.run(&ev);
}

/// [`written`] under a 64-page limit, then pages 100..300 read once each.
/// Returns (pgrotated, nr_vmscan_immediate_reclaim, the written folio's pages).
fn rotated(policy: PolicyName, large_folios: bool) -> (u64, u64, u64) {
    let (mut s, f) = written(policy, Some(64), large_folios);
    let nr = s.folios[super::file_folio(&s, f, 8)].nr_pages();
    read_100_to_300(&mut s, f);
    (s.vm.pgrotated, s.vm.nr_vmscan_immediate_reclaim, nr)
}

/// Classic LRU: limit reclaim meets the dirty folio, marks it (4 pages of
/// `nr_vmscan_immediate_reclaim`) and activates it; the flusher writes it; its
/// completion rotates it: `pgrotated` is its 4 pages, as the kernel counts
/// them (1 before).
#[test]
fn a_large_folio_rotated_at_its_write_end_counts_its_pages() {
    let (rot, immediate, nr) = rotated(PolicyName::Cost, true);
    assert_eq!(nr, 4, "one order-2 folio");
    assert_eq!((rot, immediate), (4, 4));
}

/// Order-0 folios: one page each. Reclaim meets page 8 dirty (one immediate),
/// wakes the flusher, which writes all four; it meets pages 9..11 under
/// writeback (PG_reclaim set, no immediate count); all four rotate.
#[test]
fn order_0_folios_rotate_one_page_each() {
    let (rot, immediate, nr) = rotated(PolicyName::Cost, false);
    assert_eq!(nr, 1);
    assert_eq!((rot, immediate), (4, 1));
}

/// MGLRU: `lru_gen_rotate_reclaimable` (`lru_move_tail` →
/// `lru_gen_add_folio(reclaiming)`) counts the folio's pages as well.
#[test]
fn mglru_rotation_counts_the_folio_pages() {
    let (mut s, f) = written(PolicyName::Mglru, None, true);
    let folio = super::file_folio(&s, f, 8);
    assert_eq!(s.folios[folio].nr_pages(), 4);
    s.lru_gen_rotate_reclaimable(folio);
    assert_eq!(s.vm.pgrotated, 4);
}
