//! The per-CPU lists of orders 1–3 and the PMD order (`machine.policy.pcp_lists
//! = "6.12"`, `crate::page_alloc`'s `pcp_order.rs`; v6.12 `rmqueue_pcplist`,
//! `nr_pcp_alloc`, `free_unref_page_commit`, `free_pcppages_bulk`), on a
//! 16384-page zone: `batch` 3, `high` 12 unless set.

use crate::page_alloc::{MigrateType, PcpLists, PhysMem, NORMAL_START_PFN};

const BASE: u64 = NORMAL_START_PFN;
const M: MigrateType = MigrateType::Movable;

/// The 16384-page zone with the lists of `orders` and `high` from `low`.
fn zone(orders: PcpLists, low: u64) -> PhysMem {
    let mut p = PhysMem::new(1 << 14, low, 1, false);
    p.pcp.orders = orders;
    assert_eq!(p.pcp.batch, 3);
    p
}

#[test]
fn an_order_2_allocation_takes_the_head_of_a_list_refilled_with_two_blocks() {
    // `nr_pcp_alloc`: batch 3 >> order 2 = 0, at least 2 blocks. The first
    // `__rmqueue` splits the first order-10 block (BASE), the second takes
    // the order-2 remainder `expand` left at BASE + 4: the list is BASE,
    // BASE + 4; BASE is handed out, BASE + 4 stays parked (count 4) and the
    // zone lost 8 pages. The next order-2 request is the list's head, with
    // no zone change. Order-0-only lists: BASE from the zone, 4 pages.
    let mut p = zone(PcpLists::V6_12, 12);
    assert_eq!(p.rmqueue_order(2, M), Some(BASE));
    assert_eq!(p.pcp.count(), 4);
    assert_eq!(p.pcp.list_of(M, 2), [BASE + 4]);
    assert_eq!(p.zone.free_pages(), 16384 - 8);
    assert_eq!(p.rmqueue_order(2, M), Some(BASE + 4));
    assert_eq!((p.pcp.count(), p.zone.free_pages()), (0, 16384 - 8));
    p.pcp.check().unwrap();

    let mut old = zone(PcpLists::Order0, 12);
    assert_eq!(old.rmqueue_order(2, M), Some(BASE));
    assert_eq!((old.pcp.count(), old.zone.free_pages()), (0, 16384 - 4));
    old.free_frames(BASE as u32, 2);
    assert_eq!((old.pcp.count(), old.zone.free_pages()), (0, 16384));
}

#[test]
fn frees_park_up_to_high_then_free_pcppages_bulk_goes_round_the_orders() {
    // `high` fixed at 12 (`high_min == high_max`, as a set
    // `percpu_pagelist_high_fraction` makes it: `nr_pcp_high` returns
    // `high`). Two order-2 blocks (a, b), one order-1 (c) and two pages
    // (z1, z2) freed as a, z1, b, z2, c: each order-0 free clears
    // PCPF_PREV_FREE_HIGH_ORDER, so no free is `free_high`; the count and
    // `free_count` reach 4, 5, 9, 10, 12 = high at c's free:
    // `nr_pcp_free` = clamp(12, 3, 12 - 3) = 9, `free_pcppages_bulk(9)`
    // from c's list (order-1 movable, pindex 4): c (2 pages, 7 to go),
    // then round to pindex 7 (order-2 movable): its tail a, then b (8
    // pages: overshoots). Left: z2, z1; 10 back to the zone.
    let mut p = zone(PcpLists::V6_12, 12);
    p.pcp.high_max = p.pcp.high_min;
    let a = p.zone.alloc_pages(2, M).unwrap();
    let b = p.zone.alloc_pages(2, M).unwrap();
    let c = p.zone.alloc_pages(1, M).unwrap();
    let z1 = p.zone.alloc_pages(0, M).unwrap();
    let z2 = p.zone.alloc_pages(0, M).unwrap();
    let zone_free = p.zone.free_pages();
    for (pfn, order, count) in [(a, 2, 4), (z1, 0, 5), (b, 2, 9), (z2, 0, 10)] {
        p.free_frames(pfn as u32, order);
        assert_eq!(p.pcp.count(), count);
    }
    assert_eq!(p.zone.free_pages(), zone_free);
    p.free_frames(c as u32, 1);
    assert_eq!(p.pcp.count(), 2);
    assert_eq!(p.zone.free_pages(), zone_free + 10);
    assert_eq!(p.pcp.list(M), [z2, z1]);
    assert!(p.pcp.list_of(M, 2).is_empty());
    assert!(p.pcp.list_of(M, 1).is_empty());
    p.pcp.check().unwrap();
    // `drain_pages_zone`: from pindex 0, the order-0 movable list oldest
    // first; everything merges back into the first order-10 block.
    p.drain_pages();
    assert_eq!((p.pcp.count(), p.zone.free_pages()), (0, zone_free + 12));
    assert_eq!(p.zone.free_pages(), 16384);
    assert_eq!(p.zone.buddy_order_at(BASE), Some(10));
}

#[test]
fn consecutive_high_order_frees_are_free_high_and_drain_the_lists() {
    // a then b, both order 2, no free between: at b's free the last free
    // was high-order, `free_count` 4 >= batch 3 and `count` 8 >= batch
    // (PCPF_FREE_HIGH_BATCH): `free_high`, `nr_pcp_high` 0, and
    // `free_pcppages_bulk(min(8, 3 << 5))` empties the list, a first (its
    // tail); 8 < high 12 would have parked both.
    let mut p = zone(PcpLists::V6_12, 12);
    let a = p.zone.alloc_pages(2, M).unwrap();
    let b = p.zone.alloc_pages(2, M).unwrap();
    let zone_free = p.zone.free_pages();
    p.free_frames(a as u32, 2);
    assert_eq!((p.pcp.count(), p.zone.free_pages()), (4, zone_free));
    p.free_frames(b as u32, 2);
    assert_eq!((p.pcp.count(), p.zone.free_pages()), (0, zone_free + 8));
    assert_eq!(p.zone.free_pages(), 16384);
}

#[test]
fn order_4_bypasses_the_lists_and_the_pmd_order_parks_on_its_movable_list() {
    // high 2000. Order 4 (above PAGE_ALLOC_COSTLY_ORDER, not the PMD
    // order): from the zone and back to it. Order 9: the THP movable list
    // (pindex 13) refilled with 2 blocks (`max(3 >> 9, 2)`): BASE handed
    // out, BASE + 512 parked (count 512), 1024 pages gone from the zone.
    // BASE freed parks at the head (count 1024 < 2000), taken again with no
    // zone change. With `high` fixed at 600 (`high_min == high_max`) its
    // next free makes the count 1024 >= 600: `nr_pcp_free` = clamp(
    // `free_count` 256, 3, 597), `free_pcppages_bulk(256)` frees one block,
    // the tail, BASE + 512.
    let mut p = zone(PcpLists::V6_12, 2000);
    assert_eq!(p.pcp.high, 2000);
    assert_eq!(p.rmqueue_order(4, M), Some(BASE));
    assert_eq!((p.pcp.count(), p.zone.free_pages()), (0, 16384 - 16));
    p.free_frames(BASE as u32, 4);
    assert_eq!((p.pcp.count(), p.zone.free_pages()), (0, 16384));
    assert_eq!(p.rmqueue_order(9, M), Some(BASE));
    assert_eq!((p.pcp.count(), p.zone.free_pages()), (512, 16384 - 1024));
    assert_eq!(p.pcp.list_of(M, 9), [BASE + 512]);
    p.free_frames(BASE as u32, 9);
    assert_eq!(p.pcp.list_of(M, 9), [BASE, BASE + 512]);
    assert_eq!((p.pcp.count(), p.zone.free_pages()), (1024, 16384 - 1024));
    assert_eq!(p.rmqueue_order(9, M), Some(BASE));
    (p.pcp.high_min, p.pcp.high_max) = (600, 600);
    p.free_frames(BASE as u32, 9);
    assert_eq!(p.pcp.list_of(M, 9), [BASE]);
    assert_eq!((p.pcp.count(), p.zone.free_pages()), (512, 16384 - 512));
    p.pcp.check().unwrap();
}

#[test]
fn a_parked_block_does_not_pass_the_watermarks_free_area_test() {
    // After the first order-2 request BASE + 4 is parked; then every block
    // of order 2 or more is taken from the zone. `__zone_watermark_ok`
    // finds no free block of order >= 2, so the request fails though the
    // list holds one. Drained, BASE + 4 is a free order-2 block again (its
    // buddy BASE is allocated): the test passes and the refill takes it
    // (the only block: one, not two), handed out at once.
    let mut p = zone(PcpLists::V6_12, 12);
    assert_eq!(p.rmqueue_order(2, M), Some(BASE));
    while p.zone.has_free_order(2) {
        p.zone.alloc_pages(2, M).unwrap();
    }
    assert_eq!(p.rmqueue_order(2, M), None);
    assert_eq!(p.pcp.list_of(M, 2), [BASE + 4]);
    p.drain_pages();
    assert_eq!(p.zone.buddy_order_at(BASE + 4), Some(2));
    assert_eq!(p.rmqueue_order(2, M), Some(BASE + 4));
    assert_eq!(p.pcp.count(), 0);
}

#[test]
fn a_16k_fault_takes_its_folio_from_the_order_2_list() {
    // 65536 pages: batch 15, so a refill of the order-2 list takes
    // `max(15 >> 2, 2)` = 3 blocks (BASE, BASE + 4, BASE + 8): the first
    // 16K folio is BASE and 8 pages stay parked, 12 gone from the zone; the
    // second fault's folio is the list's head, BASE + 4, with no zone
    // change. Order-0 lists: each fault takes its 4 pages from the zone.
    use super::thp::thp_machine_with;
    use crate::huge_memory::{ThpConfig, ThpSizeConfig, ThpSizeEnabled};
    for (lists, parked, zone_drop) in [(PcpLists::V6_12, 8, 12), (PcpLists::Order0, 0, 4)] {
        let thp = ThpConfig {
            hugepages_16kb: ThpSizeConfig {
                enabled: ThpSizeEnabled::Always,
            },
            ..Default::default()
        };
        let mut s = thp_machine_with(65536, None, thp, |c| c.policy.pcp_lists = lists);
        assert_eq!(s.phys.pcp.batch, 15);
        let t = s.add_task("t");
        let vma = s.mmap_anon(t, 1024).unwrap();
        let zone0 = s.phys.zone.free_pages();
        let f = super::fault_anon(&mut s, vma, 100);
        assert_eq!(s.folios[f].order(), 2);
        assert_eq!(u64::from(s.folios.head_pfn(f)), BASE);
        let drop = zone0 - s.phys.zone.free_pages();
        assert_eq!((s.phys.pcp.count(), drop), (parked, zone_drop));
        let g = super::fault_anon(&mut s, vma, 104);
        assert_eq!(u64::from(s.folios.head_pfn(g)), BASE + 4);
        let drop = zone0 - s.phys.zone.free_pages();
        assert_eq!(
            (s.phys.pcp.count(), drop),
            (parked / 2, zone_drop + 4 - parked / 2)
        );
        s.check_invariants().unwrap();
    }
}
