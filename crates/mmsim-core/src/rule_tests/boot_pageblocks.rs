//! The boot's unmovable and reclaimable pageblocks
//! (`machine.boot_pageblocks`, `page_alloc/boot.rs`): the zone a run starts
//! from, as `/proc/pagetypeinfo` shows it, and the fallbacks that then
//! happen (or do not) because those blocks are there (v6.12
//! `__rmqueue_smallest`, `__rmqueue_fallback`, `steal_suitable_fallback`).

use super::*;
use crate::config::BootPageblocks;
use crate::page_alloc::{MigrateType, Zone, NORMAL_START_PFN, PAGEBLOCK_NR_PAGES};

const U: usize = MigrateType::Unmovable as usize;
const M: usize = MigrateType::Movable as usize;
const R: usize = MigrateType::Reclaimable as usize;

/// A 65536-page machine (128 pageblocks) with page-table frames and the
/// boot's blocks given.
fn boot_machine(boot: BootPageblocks) -> Sim {
    Sim::new(MachineConfig {
        memory: Size::from_pages(1 << 16),
        kmem_accounting: true,
        pagetable_frames: true,
        boot_pageblocks: boot,
        ..Default::default()
    })
    .unwrap()
}

fn three_and_two() -> BootPageblocks {
    BootPageblocks {
        unmovable: 3,
        unmovable_free: 50,
        reclaimable: 2,
        reclaimable_free: 7,
    }
}

#[test]
fn the_run_starts_with_the_boots_pageblocks_and_free_pages() {
    // 3 unmovable blocks with 50 free pages (17, 17, 16: each block's last
    // pages, 17 = an order-0 page at 495 and an order-4 block at 496), then
    // 2 reclaimable with 7 (4: one order-2 block; 3: an order-0 page and an
    // order-1 block). Five pageblocks take three order-10 blocks of the 64;
    // the sixth pageblock stays free and movable (one order-9 block).
    let s = boot_machine(three_and_two());
    let pti = s.phys.zone.pagetypeinfo();
    assert_eq!(pti.pageblocks, vec![3, 123, 2]);
    let mut want_u = [0u64; 11];
    want_u[0] = 2;
    want_u[4] = 3;
    assert_eq!(pti.free_blocks[U], want_u);
    let mut want_r = [0u64; 11];
    want_r[0] = 1;
    want_r[1] = 1;
    want_r[2] = 1;
    assert_eq!(pti.free_blocks[R], want_r);
    let mut want_m = [0u64; 11];
    want_m[9] = 1;
    want_m[10] = 61;
    assert_eq!(pti.free_blocks[M], want_m);
    // 5 × 512 − 57 pages are the kernel's.
    assert_eq!(s.node.free, 65_536 - 2_503);
    assert_eq!(s.phys.zone.free_pages(), 65_536 - 2_503);
    assert_eq!(
        s.phys.zone.pageblock_type(NORMAL_START_PFN),
        MigrateType::Unmovable
    );
    assert_eq!(
        s.phys
            .zone
            .pageblock_type(NORMAL_START_PFN + 3 * PAGEBLOCK_NR_PAGES),
        MigrateType::Reclaimable
    );
    s.check_invariants().unwrap();
    // The default boots every pageblock movable and free, as before.
    let s = boot_machine(BootPageblocks::default());
    assert_eq!(s.phys.zone.pagetypeinfo().pageblocks, vec![0, 128, 0]);
    assert_eq!(s.node.free, 65_536);
}

#[test]
fn page_tables_take_the_boots_free_unmovable_pages_before_claiming_a_block() {
    // 10 MiB written: 7 page-table pages (5 PTE, a PMD, a PUD). Without
    // boot blocks the first finds no unmovable page and claims an order-10
    // block (2 pageblocks, `kmem.rs`'s test); with the boot's 50 free
    // unmovable pages every table is one of them, in the boot's blocks,
    // and no movable pageblock changes type.
    let run = |boot| {
        let mut s = boot_machine(boot);
        let t = s.add_task("t");
        let vma = s.mmap_anon(t, 1 << 20).unwrap();
        touch(&mut s, vma, 2560);
        s.check_invariants().unwrap();
        (s, vma)
    };
    let (s, _) = run(BootPageblocks::default());
    assert_eq!(s.phys.zone.pagetypeinfo().pageblocks, vec![2, 126, 0]);
    let (s, vma) = run(three_and_two());
    assert_eq!(s.phys.zone.pagetypeinfo().pageblocks, vec![3, 123, 2]);
    let frames = s.kmem_vma_frames(vma);
    assert_eq!(frames.len(), 7);
    for &p in &frames {
        let block = (u64::from(p) - NORMAL_START_PFN) / PAGEBLOCK_NR_PAGES;
        assert!(block < 3, "pfn {p:#x} in pageblock {block}");
    }
    assert_eq!(s.node.free, 65_536 - 2_503 - 2_560 - 7);
}

/// A zone of 8 pageblocks booted with `boot`.
fn boot_zone(boot: &BootPageblocks) -> Zone {
    let mut z = Zone::new("DMA32", NORMAL_START_PFN, 8 * PAGEBLOCK_NR_PAGES);
    z.boot_pageblocks(boot);
    z
}

/// [`boot_zone`] with one unmovable pageblock whose last `free` pages are
/// free (the other 7 pageblocks movable and free).
fn one_unmovable_block(free: u64) -> Zone {
    let z = boot_zone(&BootPageblocks {
        unmovable: 1,
        unmovable_free: free,
        ..Default::default()
    });
    assert_eq!(z.pagetypeinfo().pageblocks, vec![1, 7, 0]);
    z
}

#[test]
fn an_unmovable_allocation_claims_a_movable_block_once_the_boots_free_pages_are_gone() {
    // One unmovable block with its last 2 pages free (an order-1 block at
    // 510): two unmovable pages come from it, PFNs 510 and 511 (no
    // fallback); the third falls back to the head of the movable order-10
    // list, PFN 1024 (the first pair is the boot's), and claims both its
    // pageblocks.
    let mut z = one_unmovable_block(2);
    let b = NORMAL_START_PFN;
    assert_eq!(z.alloc_pages(0, MigrateType::Unmovable), Some(b + 510));
    assert_eq!(z.alloc_pages(0, MigrateType::Unmovable), Some(b + 511));
    assert_eq!(z.pagetypeinfo().pageblocks, vec![1, 7, 0]);
    assert_eq!(z.alloc_pages(0, MigrateType::Unmovable), Some(b + 1024));
    assert_eq!(z.pagetypeinfo().pageblocks, vec![3, 5, 0]);
}

#[test]
fn a_movable_allocation_steals_the_unmovable_blocks_free_page_and_boosts() {
    // One unmovable block with 1 free page (PFN 511), the 7 movable
    // pageblocks allocated: the next movable page finds no movable or
    // reclaimable page and steals the unmovable one (`fallbacks[MOVABLE]`),
    // below pageblock order, so the steal boosts the watermarks by a
    // pageblock; 1 free + 0 movable pages < 256: the block stays unmovable.
    // Without the boot's block the zone is simply full.
    let mut z = one_unmovable_block(1);
    z.boost.factor = 15_000;
    z.boost.wmark = [64, 80, 96];
    for _ in 0..7 * PAGEBLOCK_NR_PAGES {
        z.alloc_pages(0, MigrateType::Movable).unwrap();
    }
    assert_eq!(z.free_pages(), 1);
    assert_eq!(z.boost.boost, 0);
    assert_eq!(
        z.alloc_pages(0, MigrateType::Movable),
        Some(NORMAL_START_PFN + 511)
    );
    assert_eq!(z.boost.boost, PAGEBLOCK_NR_PAGES);
    assert_eq!(z.pagetypeinfo().pageblocks, vec![1, 7, 0]);
    let mut z = boot_zone(&BootPageblocks::default());
    for _ in 0..8 * PAGEBLOCK_NR_PAGES {
        z.alloc_pages(0, MigrateType::Movable).unwrap();
    }
    assert_eq!(z.alloc_pages(0, MigrateType::Movable), None);
}

#[test]
fn impossible_boot_pageblocks_are_errors_naming_the_field() {
    let err = |boot: BootPageblocks| {
        Sim::new(MachineConfig {
            memory: Size::from_pages(1 << 16),
            boot_pageblocks: boot,
            ..Default::default()
        })
        .err()
        .map(|e| e.to_string())
    };
    assert_eq!(
        err(BootPageblocks {
            unmovable: 100,
            reclaimable: 29,
            ..Default::default()
        }),
        Some(
            "machine.boot_pageblocks: 100 unmovable + 29 reclaimable pageblocks are more \
             than the zone's 128 (its pages in whole 4 MiB blocks, 2 pageblocks each)"
                .into()
        )
    );
    assert_eq!(
        err(BootPageblocks {
            unmovable: 2,
            unmovable_free: 1025,
            ..Default::default()
        }),
        Some(
            "machine.boot_pageblocks.unmovable_free: 1025 is out of range [0, 1024] \
             (512 pages per pageblock)"
                .into()
        )
    );
    assert_eq!(
        err(BootPageblocks {
            reclaimable_free: 1,
            ..Default::default()
        }),
        Some(
            "machine.boot_pageblocks.reclaimable_free: 1 is out of range [0, 0] \
             (512 pages per pageblock)"
                .into()
        )
    );
    assert_eq!(
        err(BootPageblocks {
            unmovable: 121,
            ..Default::default()
        }),
        Some(
            "machine.boot_pageblocks: the boot's 61952 allocated pages leave 3584 of the \
             zone's 65536 pages, fewer than 16M (4096 pages)"
                .into()
        )
    );
    assert_eq!(err(three_and_two()), None);
}
