//! Rule tests for the buddy allocator: exact free lists after splits and
//! merges, the fallback order, fragmentation, per-order watermarks, and a
//! property test that alloc/free sequences keep counts consistent.

use super::*;
use proptest::prelude::*;

use MigrateType::{Movable, Reclaimable, Unmovable};

/// Every list's tail index is its last written entry, reached by walking
/// `prev` back to the head; the pristine blocks follow the written ones on
/// the order-10 movable list.
fn check_tails(zone: &Zone) {
    for order in 0..NR_PAGE_ORDERS {
        for mt in MigrateType::ALL {
            let mut list = Vec::new();
            let mut i = zone.heads[order][mt as usize];
            while i != NONE {
                list.push(zone.start_pfn + i as u64);
                i = zone.frames[i as usize].next(i);
            }
            let tail = zone.tails[order][mt as usize];
            match list.last() {
                None => assert_eq!(zone.heads[order][mt as usize], NONE),
                Some(&last) => {
                    assert_eq!(zone.start_pfn + tail as u64, last, "order {order} {mt:?}")
                }
            }
            let mut back = Vec::new();
            let mut i = if list.is_empty() { NONE } else { tail };
            while i != NONE {
                back.push(zone.start_pfn + i as u64);
                i = zone.frames[i as usize].prev(i);
            }
            back.reverse();
            assert_eq!(back, list, "prev links of order {order} {mt:?}");
            let full = zone.free_list(order, mt);
            assert_eq!(full[..list.len()], list[..], "written entries first");
            assert_eq!(full.len() as u64, zone.free_list_len(order, mt));
        }
    }
}

/// Boot writes nothing per page frame: a 2 TiB zone (512 Mi pages) holds
/// its 512 Ki order-10 blocks as the pristine tail of one list, and its host
/// memory is the pageblock table (1 byte per 2 MiB) and the chunk tables.
#[test]
fn a_2_tib_zone_boots_without_per_page_memory() {
    let mut zone = Zone::new("Normal", 1 << 20, 512 << 20);
    assert_eq!(zone.buddyinfo()[MAX_PAGE_ORDER], 512 << 10);
    assert_eq!(zone.free_pages(), 512 << 20);
    assert!(zone.heap_bytes() < 2 << 20, "{} bytes", zone.heap_bytes());
    // The first allocation splits the lowest block, as after a real boot.
    assert_eq!(zone.alloc_pages(0, Movable), Some(1 << 20));
    assert_eq!(zone.buddyinfo()[MAX_PAGE_ORDER], (512 << 10) - 1);
    assert_eq!(zone.free_list(9, Movable), vec![(1 << 20) + 512]);
    check_tails(&zone);
    // One chunk of 32 Ki pages written, for each of the four per-page arrays.
    assert!(zone.heap_bytes() < 3 << 20, "{} bytes", zone.heap_bytes());
}

/// A zone that is not whole order-10 blocks: the rest is freed in smaller
/// blocks at boot, and (smallest order first) serves the first allocation.
#[test]
fn a_partial_last_block_is_used_first() {
    let mut zone = Zone::new("Normal", 1 << 20, 3 * 1024 + 512 + 1);
    assert_eq!(zone.buddyinfo(), [1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3]);
    assert_eq!(
        zone.alloc_pages(0, Movable),
        Some((1 << 20) + 3 * 1024 + 512)
    );
    assert_eq!(zone.alloc_pages(0, Movable), Some((1 << 20) + 3 * 1024));
    check_tails(&zone);
}

#[test]
fn a_fresh_zone_is_max_order_blocks_on_the_movable_list() {
    let zone = Zone::new("Normal", 0, 4096);
    assert_eq!(zone.buddyinfo(), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4]);
    assert_eq!(
        zone.free_list(10, Movable),
        vec![0, 1024, 2048, 3072],
        "FPI_TO_TAIL keeps boot order"
    );
    assert_eq!(zone.pagetypeinfo().pageblocks, vec![0, 8, 0]);
    assert_eq!(zone.buddyinfo_line(0), "Node 0, zone   Normal      0      0      0      0      0      0      0      0      0      0      4");
}

#[test]
fn order_0_allocation_splits_one_block_and_freeing_merges_it_back() {
    let mut zone = Zone::new("Normal", 0, 1024);
    let pfn = zone.alloc_pages(0, Movable).unwrap();
    assert_eq!(pfn, 0);
    // expand puts the upper half of each split on its list: 512, 256, ..., 1.
    for order in 0..MAX_PAGE_ORDER {
        assert_eq!(
            zone.free_list(order, Movable),
            vec![1 << order],
            "order {order}"
        );
    }
    assert_eq!(zone.free_pages(), 1023);
    // The next order-0 allocation takes the order-0 buddy, the one after splits order 1.
    assert_eq!(zone.alloc_pages(0, Movable), Some(1));
    assert_eq!(zone.alloc_pages(0, Movable), Some(2));
    assert_eq!(zone.free_list(0, Movable), vec![3]);
    zone.free_pages_block(1, 0);
    assert_eq!(
        zone.free_list(0, Movable),
        vec![1, 3],
        "no buddy free: added at the head"
    );
    zone.free_pages_block(0, 0);
    // 0+1 merge to order 1 at 0; its buddy 2 is allocated.
    assert_eq!(zone.free_list(0, Movable), vec![3]);
    assert_eq!(zone.free_list(1, Movable), vec![0]);
    zone.free_pages_block(2, 0);
    assert_eq!(zone.buddyinfo(), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    assert_eq!(zone.free_pages(), 1024);
}

#[test]
fn unmovable_falls_back_to_movable_and_claims_the_whole_range() {
    let mut zone = Zone::new("Normal", 0, 2048);
    assert_eq!(zone.alloc_pages(0, Unmovable), Some(0));
    // The order-10 block was claimed: its two pageblocks became unmovable.
    assert_eq!(zone.pagetypeinfo().pageblocks, vec![2, 2, 0]);
    for order in 0..MAX_PAGE_ORDER {
        assert_eq!(zone.free_list(order, Unmovable), vec![1 << order]);
    }
    assert_eq!(zone.free_list(10, Movable), vec![1024]);
}

#[test]
fn fallback_order_follows_the_kernel_table() {
    assert_eq!(Unmovable.fallbacks(), [Reclaimable, Movable]);
    assert_eq!(Movable.fallbacks(), [Reclaimable, Unmovable]);
    assert_eq!(Reclaimable.fallbacks(), [Unmovable, Movable]);
    // 3 order-10 blocks: give one to unmovable, one to reclaimable.
    let mut zone = Zone::new("Normal", 0, 3072);
    assert_eq!(zone.alloc_pages(10, Unmovable), Some(0));
    assert_eq!(zone.alloc_pages(10, Reclaimable), Some(1024));
    zone.free_pages_block(0, 10);
    zone.free_pages_block(1024, 10);
    assert_eq!(zone.pagetypeinfo().pageblocks, vec![2, 2, 2]);
    // Movable takes its own block first, then reclaimable before unmovable.
    assert_eq!(zone.alloc_pages(10, Movable), Some(2048));
    assert_eq!(zone.alloc_pages(10, Movable), Some(1024));
    assert_eq!(zone.alloc_pages(10, Movable), Some(0));
    assert_eq!(zone.alloc_pages(0, Movable), None);
}

#[test]
fn small_movable_fallback_takes_the_smallest_block_without_claiming() {
    assert!(!can_steal_fallback(3, Movable));
    assert!(can_steal_fallback(4, Movable));
    assert!(can_steal_fallback(0, Unmovable));
    // An all-unmovable zone with only an order-0 (5) and an order-1 (8) block
    // free: the largest fallback (order 1) is too small to claim, so a movable
    // order-0 allocation takes the smallest block instead (`find_smallest`).
    let mut zone = Zone::new("Normal", 0, 1024);
    for _ in 0..1024 {
        zone.alloc_pages(0, Unmovable).unwrap();
    }
    for pfn in [5, 8, 9] {
        zone.free_pages_block(pfn, 0);
    }
    assert_eq!(zone.free_list(1, Unmovable), vec![8]);
    assert_eq!(zone.alloc_pages(0, Movable), Some(5));
    assert_eq!(
        zone.pagetypeinfo().pageblocks,
        vec![2, 0, 0],
        "nothing claimed"
    );
    assert_eq!(zone.free_list(1, Unmovable), vec![8]);
}

#[test]
fn unmovable_fragmentation_fails_order_4_while_order_0_succeeds() {
    let mut zone = Zone::new("Normal", 0, 1024);
    for pfn in 0..1024 {
        assert_eq!(zone.alloc_pages(0, Unmovable), Some(pfn));
    }
    // Free every other page: 512 free pages, none with a free buddy.
    for pfn in (0..1024).step_by(2) {
        zone.free_pages_block(pfn, 0);
    }
    assert_eq!(zone.free_pages(), 512);
    assert_eq!(zone.buddyinfo(), [512, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert!(zone.watermark_ok(0, 100));
    assert!(
        !zone.watermark_ok(4, 100),
        "enough free pages, no order-4 block"
    );
    assert_eq!(zone.alloc_pages(4, Unmovable), None);
    assert_eq!(zone.alloc_pages(4, Movable), None);
    assert!(zone.alloc_pages(0, Unmovable).is_some());
}

#[test]
fn watermark_ok_subtracts_the_unusable_pages_of_the_order() {
    let mut zone = Zone::new("Normal", 0, 1024);
    // 1024 free: order 0 passes a mark of 1023, fails 1024.
    assert!(zone.watermark_ok(0, 1023));
    assert!(!zone.watermark_ok(0, 1024));
    // Order 3 subtracts 7: 1017 > mark.
    assert!(zone.watermark_ok(3, 1016));
    assert!(!zone.watermark_ok(3, 1017));
    // Take the order-10 block: nothing free at any order.
    zone.alloc_pages(10, Movable).unwrap();
    assert!(!zone.watermark_ok(0, 0));
    zone.free_pages_block(0, 10);
    zone.alloc_pages(9, Movable).unwrap();
    // 512 free in one order-9 block: order 9 passes, order 10 has no block (and too few pages).
    assert!(zone.watermark_ok(9, 0));
    assert!(!zone.watermark_ok(10, 0));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn alloc_free_keeps_counts_and_merges_back(ops in prop::collection::vec((0usize..6, 0u8..3, any::<bool>()), 1..200)) {
        let total = 4096;
        let mut zone = Zone::new("Normal", 0, total);
        let mut held: Vec<(u64, usize)> = Vec::new();
        for (order, mt, free) in ops {
            if free && !held.is_empty() {
                let (pfn, o) = held.swap_remove(order % held.len());
                zone.free_pages_block(pfn, o);
            } else if let Some(pfn) = zone.alloc_pages(order, MigrateType::ALL[mt as usize]) {
                prop_assert!(pfn.is_multiple_of(1 << order));
                held.push((pfn, order));
            }
            let used: u64 = held.iter().map(|&(_, o)| 1u64 << o).sum();
            prop_assert_eq!(zone.free_pages() + used, total);
            let listed: u64 = (0..NR_PAGE_ORDERS)
                .map(|o| zone.buddyinfo()[o] << o)
                .sum();
            prop_assert_eq!(listed, zone.free_pages());
            check_tails(&zone);
            let info = zone.pagetypeinfo();
            for o in 0..NR_PAGE_ORDERS {
                prop_assert_eq!(info.free_blocks.iter().map(|b| b[o]).sum::<u64>(), zone.buddyinfo()[o]);
            }
        }
        for (pfn, o) in held {
            zone.free_pages_block(pfn, o);
        }
        prop_assert_eq!(zone.buddyinfo(), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4]);
    }
}

#[test]
fn a_frame_is_8_bytes_and_mem_map_is_allocated_only_when_kept() {
    assert_eq!(std::mem::size_of::<Frame>(), 8);
    // Without mem_map, allocations and frees write no mem_map chunk.
    let mut p = PhysMem::new(1 << 16, 0, 1, false);
    let pfn = p.alloc_order0().unwrap();
    p.set_frames_folio(pfn, 0, 7);
    assert_eq!(p.zone.mem_map.heap_bytes(), 2 * 8);
    p.mem_map = true;
    p.set_frames_folio(pfn, 0, 7);
    assert_eq!(p.pfn_folio(pfn as u32), 7);
    assert_eq!(p.zone.mem_map.heap_bytes(), (1 << 15) * 4 + 2 * 8);
}
