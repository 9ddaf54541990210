//! The per-CPU page lists per migrate type (`crate::page_alloc`'s `pcp.rs`,
//! v6.12 `struct per_cpu_pages`): page-table pages (`machine.pagetable_frames`)
//! come from the unmovable list, which one `rmqueue_bulk()` refills with
//! `batch` pages; a freed page goes to the list of its pageblock's type
//! (`free_unref_page`); the count shared by the lists starts
//! `free_pcppages_bulk()` at `high`.

use super::boost_setup::boost_machine_with;
use super::*;
use crate::page_alloc::{
    MigrateType, PhysMem, RmqueueFallback, NORMAL_START_PFN, PAGEBLOCK_NR_PAGES,
};

/// The 65536-page boosting machine (page-table frames, factor 15000, max
/// boost 1152; `batch` 15, `high` 640) under `f`, every frame taken movable
/// and then three order-6 blocks of each pageblock given back (offsets 0,
/// 128 and 256, none a buddy of another): 192 free pages a pageblock, none
/// unmovable, no pageblock claimable by an unmovable allocation (192 free +
/// 0 alike < 256).
fn fragmented(f: RmqueueFallback) -> Sim {
    let mut s = boost_machine_with(PolicyConfig {
        name: PolicyName::Cost,
        cost_variant: CostVariant::V6_2,
        watermark_boost_factor: 15_000,
        rmqueue_fallback: f,
        ..Default::default()
    });
    assert_eq!((s.phys.pcp.batch, s.phys.pcp.high), (15, 640));
    take_all_free(&mut s);
    for b in 0..s.node.managed / PAGEBLOCK_NR_PAGES {
        for off in [0, 128, 256] {
            let pfn = NORMAL_START_PFN + b * PAGEBLOCK_NR_PAGES + off;
            s.phys.zone.free_pages_block(pfn, 6);
            s.node.free += 64;
        }
    }
    assert_eq!(s.node.free, 128 * 192);
    assert_eq!(s.phys.zone.boost.boost, 0);
    s
}

#[test]
fn one_refill_of_the_unmovable_list_serves_a_batch_of_page_tables_with_one_claim_attempt() {
    // 6.15 (6.12.29+): the first page-table page finds the unmovable lists
    // empty; `rmqueue_bulk()` refills the per-CPU unmovable list with 15
    // pages. Its first `__rmqueue()` makes the one claim attempt (the order-6
    // block's pageblock: 192 free < 256, fails, one boost of 512), then
    // steals the order-6 block; the other 14 are stolen in steal mode (the
    // block's own remainder, split on the movable lists), with no attempt.
    // The fault's three tables (PUD, PMD, PTE) and twelve more PTE pages
    // are the 15 pages of that refill, 15 consecutive frames, and the zone
    // lost 15 pages at the first. One `__rmqueue()` per table instead (the
    // old path): the second table tries to claim at orders 6, 5, … 0 (the
    // stolen block's remainder), a boost at each, up to the cap (1152).
    let mut s = fragmented(RmqueueFallback::V6_15);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1 << 20).unwrap();
    let zone_free = s.phys.zone.free_pages();
    s.kmem_pte_alloc(vma, 0);
    assert_eq!(s.kmem_vma_frames(vma).len(), 3);
    assert_eq!(s.phys.zone.free_pages(), zone_free - 15);
    assert_eq!(s.phys.pcp.list(MigrateType::Unmovable).len(), 12);
    for k in 1..=12 {
        s.kmem_pte_alloc(vma, 512 * k);
    }
    let frames = s.kmem_vma_frames(vma);
    let first = u64::from(frames[0]);
    assert_eq!(first % 64, 0);
    let want: Vec<u32> = (0..15).map(|k| (first + k) as u32).collect();
    assert_eq!(frames, want);
    assert_eq!(s.phys.zone.boost.boost, 512);
    assert_eq!(s.phys.zone.free_pages(), zone_free - 15);
    assert!(s.phys.pcp.list(MigrateType::Unmovable).is_empty());
    assert_eq!(s.phys.zone.pageblock_type(first), MigrateType::Movable);
    assert_eq!(s.node.free, 128 * 192 - 15);

    // v6.12.0 keeps no mode: each page of the refill is its own fallback
    // (the largest block: an order-6 block, one page stolen, a boost), but
    // the refill still takes its 15 pages at the first table.
    let mut s = fragmented(RmqueueFallback::V6_12);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1 << 20).unwrap();
    s.kmem_pte_alloc(vma, 0);
    assert_eq!(s.phys.zone.free_pages(), zone_free - 15);
    assert_eq!(s.phys.pcp.list(MigrateType::Unmovable).len(), 12);
    assert_eq!(s.phys.zone.boost.boost, 1152);
}

#[test]
fn a_freed_page_table_page_goes_to_the_head_of_the_unmovable_list() {
    // A fresh machine: the first table's refill claims an order-10 block
    // (two pageblocks UNMOVABLE) and takes 15 pages, the fault uses three.
    // Exit frees the three (`free_pgtables` → `free_unref_page`): each to
    // the head of the unmovable list (their pageblocks' type), none to the
    // buddy lists; the next page-table page is the last one freed.
    let mut s = super::boost_setup::boost_machine(0);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1 << 20).unwrap();
    s.kmem_pte_alloc(vma, 0);
    let f = s.kmem_vma_frames(vma);
    assert_eq!(f.len(), 3);
    let rest = s.phys.pcp.list(MigrateType::Unmovable);
    assert_eq!(rest.len(), 12);
    let zone_free = s.phys.zone.free_pages();
    s.exit_task(t).unwrap();
    let mut want: Vec<u64> = f.iter().rev().map(|&p| u64::from(p)).collect();
    want.extend(&rest);
    assert_eq!(s.phys.pcp.list(MigrateType::Unmovable), want);
    assert_eq!(s.phys.zone.free_pages(), zone_free);
    assert_eq!(s.phys.zone.pageblock_type(want[0]), MigrateType::Unmovable);
    s.check_invariants().unwrap();

    let t = s.add_task("u");
    let vma = s.mmap_anon(t, 1 << 20).unwrap();
    s.kmem_pte_alloc(vma, 0);
    let again: Vec<u64> = s
        .kmem_vma_frames(vma)
        .iter()
        .map(|&p| u64::from(p))
        .collect();
    assert_eq!(again, &want[..3]);
}

#[test]
fn the_shared_count_drains_a_batch_at_high_from_the_list_freed_to_then_round_the_lists() {
    // 16384 pages: batch 3, high 12 (low mark 12). Two unmovable pages
    // (their order-10 block claimed: pageblocks 0 and 1 UNMOVABLE) and ten
    // movable ones (the next order-10 block) taken from the zone. Ten movable
    // frees fill the movable list, one unmovable free the unmovable list:
    // count 11. The second unmovable free makes the shared count 12 = high:
    // `free_pcppages_bulk(3)` from the unmovable list (the one freed to),
    // its tail first (BASE, then BASE + 1: the list is empty), then the
    // movable list's tail, its oldest page (BASE + 1024). Counting per list
    // (10 and 2) would drain nothing.
    const BASE: u64 = NORMAL_START_PFN;
    let mut p = PhysMem::new(1 << 14, 12, 1, false);
    assert_eq!((p.pcp.batch, p.pcp.high), (3, 12));
    // Unmovable pages are taken from the zone directly below: type the
    // lists as `rmqueue_pcplist`'s first unmovable request would.
    p.pcp_type_lists();
    let u: Vec<u64> = (0..2)
        .map(|_| p.zone.alloc_pages(0, MigrateType::Unmovable).unwrap())
        .collect();
    assert_eq!(u, [BASE, BASE + 1]);
    let m: Vec<u64> = (0..10)
        .map(|_| p.zone.alloc_pages(0, MigrateType::Movable).unwrap())
        .collect();
    assert_eq!(m, (BASE + 1024..BASE + 1034).collect::<Vec<_>>());
    let zone_free = p.zone.free_pages();
    for &pfn in &m {
        p.free_frames(pfn as u32, 0);
    }
    p.free_frames(u[0] as u32, 0);
    assert_eq!(p.pcp.count(), 11);
    assert_eq!(p.zone.free_pages(), zone_free);
    p.free_frames(u[1] as u32, 0);
    assert_eq!(p.pcp.count(), 9);
    assert!(p.pcp.list(MigrateType::Unmovable).is_empty());
    let movable: Vec<u64> = (BASE + 1025..BASE + 1034).rev().collect();
    assert_eq!(p.pcp.list(MigrateType::Movable), movable);
    assert_eq!(p.zone.free_pages(), zone_free + 3);
    // BASE and BASE + 1 merge back into their order-10 block; BASE + 1024's
    // buddy is still on the movable list.
    assert_eq!(p.zone.buddy_order_at(BASE), Some(10));
    assert_eq!(p.zone.buddy_order_at(BASE + 1024), Some(0));
    // `drain_pages_zone`: the rest, the movable list oldest first.
    p.drain_pages();
    assert_eq!(p.pcp.count(), 0);
    assert_eq!(p.zone.free_pages(), zone_free + 12);
}

#[test]
fn a_drain_at_high_starts_at_the_movable_list_when_the_free_reaching_high_is_movable() {
    // The same machine (batch 3, high 12): one unmovable page freed first
    // (count 1), then ten movable ones (count 11), then an eleventh movable
    // one: the shared count reaches 12 = high at a free to the movable list
    // (index 1) while the unmovable list (index 0) holds one page.
    // `free_pcppages_bulk(3)` starts at the list freed to: the movable
    // list's tail, its three oldest pages (BASE + 1024, + 1025, + 1026);
    // the unmovable list keeps its page. A drain from list 0 would return
    // BASE first.
    const BASE: u64 = NORMAL_START_PFN;
    let mut p = PhysMem::new(1 << 14, 12, 1, false);
    assert_eq!((p.pcp.batch, p.pcp.high), (3, 12));
    // Unmovable pages are taken from the zone directly below: type the
    // lists as `rmqueue_pcplist`'s first unmovable request would.
    p.pcp_type_lists();
    let u = p.zone.alloc_pages(0, MigrateType::Unmovable).unwrap();
    assert_eq!(u, BASE);
    let m: Vec<u64> = (0..11)
        .map(|_| p.zone.alloc_pages(0, MigrateType::Movable).unwrap())
        .collect();
    assert_eq!(m, (BASE + 1024..BASE + 1035).collect::<Vec<_>>());
    let zone_free = p.zone.free_pages();
    p.free_frames(u as u32, 0);
    for &pfn in &m[..10] {
        p.free_frames(pfn as u32, 0);
    }
    assert_eq!(p.pcp.count(), 11);
    assert_eq!(p.zone.free_pages(), zone_free);
    p.free_frames(m[10] as u32, 0);
    assert_eq!(p.pcp.count(), 9);
    assert_eq!(p.pcp.list(MigrateType::Unmovable), [BASE]);
    let movable: Vec<u64> = (BASE + 1027..BASE + 1035).rev().collect();
    assert_eq!(p.pcp.list(MigrateType::Movable), movable);
    assert_eq!(p.zone.free_pages(), zone_free + 3);
    // The three drained pages are on the buddy lists: BASE + 1024 and
    // + 1025 merged at order 1, BASE + 1026 alone (its buddy + 1027 is on
    // the movable list).
    assert_eq!(p.zone.buddy_order_at(BASE + 1024), Some(1));
    assert_eq!(p.zone.buddy_order_at(BASE + 1026), Some(0));
    assert_eq!(p.zone.buddy_order_at(BASE), None);
}

#[test]
fn a_page_on_a_per_cpu_list_is_alike_for_an_unmovable_claim_of_its_movable_pageblock() {
    // Every page of the 16384-page zone taken movable, then 248 pages of
    // pageblock 0 given back to the buddy lists (blocks of order 7, 6, 5,
    // 4, 3 at offsets 0, 128, 192, 224, 240) and 11 more (offsets 248..259)
    // freed to the per-CPU movable list (count 11 < high 12). An unmovable
    // page falls back to the order-7 block: a claim attempt below
    // pageblock order. v6.12 `prep_move_freepages_block()` counts the 11
    // per-CPU pages neither free nor movable (not `PageBuddy`, not
    // `PageLRU`), so they are alike: 248 + 11 = 259 >= 256, the pageblock
    // becomes UNMOVABLE. Counted movable (as allocated) they would not be
    // alike: 248 < 256, no claim.
    const BASE: u64 = NORMAL_START_PFN;
    let mut p = PhysMem::new(1 << 14, 12, 1, false);
    assert_eq!((p.pcp.batch, p.pcp.high), (3, 12));
    while p.zone.alloc_pages(0, MigrateType::Movable).is_some() {}
    for (off, order) in [(0, 7), (128, 6), (192, 5), (224, 4), (240, 3)] {
        p.zone.free_pages_block(BASE + off, order);
    }
    assert_eq!(p.zone.free_pages(), 248);
    for off in 248..259 {
        p.free_frames((BASE + off) as u32, 0);
    }
    assert_eq!(p.pcp.count(), 11);
    assert_eq!(p.zone.pageblock_type(BASE), MigrateType::Movable);
    // The first unmovable request types the lists (`rmqueue_pcplist`),
    // marking the 11 pages already on them.
    p.pcp_type_lists();
    let pfn = p.zone.alloc_pages(0, MigrateType::Unmovable).unwrap();
    assert_eq!(p.zone.pageblock_type(BASE), MigrateType::Unmovable);
    assert_eq!(pfn / PAGEBLOCK_NR_PAGES, BASE / PAGEBLOCK_NR_PAGES);
    assert_eq!(p.zone.free_pages(), 247);
}

#[test]
fn typing_the_lists_carries_the_count_of_the_pages_freed_before() {
    // 16384 pages: batch 3, high 12. Eleven movable pages freed before any
    // non-movable request: the lists are untyped, the movable list alone
    // holds pages and its length is the count (11). The first unmovable
    // request types the lists (`pcp_type_lists`), which takes that count
    // over; the unmovable page's free then makes it 12 = high:
    // `free_pcppages_bulk(3)`, three pages back to the zone, count 9. A
    // count restarted at 0 by the typing would be 1 and drain nothing.
    let mut p = PhysMem::new(1 << 14, 12, 1, false);
    assert_eq!((p.pcp.batch, p.pcp.high), (3, 12));
    let m: Vec<u64> = (0..11)
        .map(|_| p.zone.alloc_pages(0, MigrateType::Movable).unwrap())
        .collect();
    for &pfn in &m {
        p.free_frames(pfn as u32, 0);
    }
    assert_eq!(p.pcp.count(), 11);
    assert_eq!(p.pcp.list(MigrateType::Movable).len(), 11);
    p.pcp.check().unwrap();
    p.pcp_type_lists();
    assert_eq!(p.pcp.count(), 11);
    p.pcp.check().unwrap();
    let u = p.zone.alloc_pages(0, MigrateType::Unmovable).unwrap();
    let zone_free = p.zone.free_pages();
    p.free_frames(u as u32, 0);
    assert_eq!(p.pcp.count(), 9);
    assert_eq!(p.zone.free_pages(), zone_free + 3);
    p.pcp.check().unwrap();
}
