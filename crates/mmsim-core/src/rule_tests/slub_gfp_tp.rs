//! The gfp masks of slab pages (`crate::slub`, v6.12 mm/slub.c
//! `allocate_slab`) and of kernel stacks' pages, as
//! `vmscan:mm_vmscan_wakeup_kswapd` prints them when such a page finds the
//! free pages at the low mark.

use super::wakeup_kswapd_tp::{lines, trace_on};
use super::*;
use crate::gfp::{self, ShowGfp};
use crate::kmem::Kmem;
use crate::slub::allocate_slab_gfp;

/// `allocate_slab`'s two masks for the two modelled caches, printed:
/// `radix_tree_node` (order 1, minimum 0; `xas_alloc`'s `GFP_NOWAIT |
/// __GFP_NOWARN`, `__GFP_COMP | __GFP_RECLAIMABLE`) keeps
/// `__GFP_KSWAPD_RECLAIM` in its first try (no `__GFP_DIRECT_RECLAIM` to
/// trigger the strip); `task_struct` (order 3, minimum 1; `GFP_KERNEL`,
/// `__GFP_COMP`) loses `__GFP_RECLAIM` and gains `__GFP_NOMEMALLOC` in its
/// first try; a cache of one order only keeps the caller's reclaim flags.
#[test]
fn allocate_slab_masks_of_the_modelled_caches() {
    let nowait = gfp::GFP_NOWAIT | gfp::__GFP_NOWARN;
    let reclaimable = gfp::__GFP_COMP | gfp::__GFP_RECLAIMABLE;
    let show = |(a, b): (gfp::Gfp, gfp::Gfp)| (ShowGfp(a).to_string(), ShowGfp(b).to_string());
    let cases = [
        (
            (nowait, reclaimable, 1, 0),
            (
                "GFP_NOWAIT|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_RECLAIMABLE",
                "GFP_NOWAIT|__GFP_NOWARN|__GFP_COMP|__GFP_RECLAIMABLE",
            ),
        ),
        (
            (gfp::GFP_KERNEL, gfp::__GFP_COMP, 3, 1),
            (
                "__GFP_IO|__GFP_FS|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_NOMEMALLOC",
                "GFP_KERNEL|__GFP_COMP",
            ),
        ),
        (
            (gfp::GFP_KERNEL, gfp::__GFP_COMP, 1, 1),
            (
                "GFP_KERNEL|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP",
                "GFP_KERNEL|__GFP_COMP",
            ),
        ),
    ];
    for ((flags, allocflags, order, min_order), (first, fallback)) in cases {
        assert_eq!(
            show(allocate_slab_gfp(flags, allocflags, order, min_order)),
            (first.to_string(), fallback.to_string()),
            "order {order}, min {min_order}"
        );
    }
    // __GFP_NOFAIL is dropped from the first try only.
    let (first, fallback) = allocate_slab_gfp(gfp::GFP_KERNEL | gfp::__GFP_NOFAIL, 0, 1, 1);
    assert_eq!(first & gfp::__GFP_NOFAIL, 0);
    assert_eq!(fallback, gfp::GFP_KERNEL | gfp::__GFP_NOFAIL);
}

/// A 256 MiB machine with slab frames, traced for kswapd's wakeups, its
/// free pages held down to `wmark_min + 1` (the page allocator's own lists,
/// nothing freed back): an order-1 slab's first try finds no room above the
/// min mark, an order-0 page finds the low mark.
fn low_machine() -> Sim {
    let mut s = slab_machine();
    let min = s.node.wmark_min;
    hold_free_at(&mut s, min + 1);
    trace_on(&mut s);
    s
}

/// The 256 MiB machine of [`low_machine`] before its free pages are held
/// down.
fn slab_machine() -> Sim {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    s.cfg.kmem_accounting = true;
    s.cfg.slab_frames = true;
    s.kmem = Some(Box::new(Kmem::new(true, s.cfg.cpus)));
    s.phys.drain_pages();
    s
}

/// [`slab_machine`] with its free pages held at the low mark, traced.
fn at_low_mark() -> Sim {
    let mut s = slab_machine();
    let low = s.node.wmark_low;
    hold_free_at(&mut s, low);
    trace_on(&mut s);
    s
}

/// Takes free pages from the zone's lists (never given back) until the node
/// has `free` left.
fn hold_free_at(s: &mut Sim, free: u64) {
    while s.node.free > free {
        s.phys
            .zone
            .alloc_pages(0, crate::page_alloc::MigrateType::Movable)
            .unwrap();
        s.node.free -= 1;
    }
}

/// The first xarray node's slab: the order-1 try fails at the min mark,
/// the order-0 fallback takes a page and wakes kswapd with
/// `allocate_slab`'s fallback mask (`GFP_NOWAIT | __GFP_NOWARN` of
/// `xas_alloc` with the cache's `__GFP_COMP | __GFP_RECLAIMABLE`), as v6.12
/// `show_gfp_flags` prints it.
#[test]
fn an_xarray_node_slab_at_the_low_mark_wakes_kswapd_with_its_mask() {
    let mut s = low_machine();
    s.kmem_slot_changed(0, 0, 0, 2);
    s.kmem_slot_changed(0, 1, 0, 2);
    assert_eq!(s.kmem_file_nodes(0), 1);
    assert_eq!(
        lines(&mut s),
        [
            "Task(0) vmscan:mm_vmscan_wakeup_kswapd: nid=0 order=0 \
             gfp_flags=GFP_NOWAIT|__GFP_NOWARN|__GFP_COMP|__GFP_RECLAIMABLE",
            "Kswapd vmscan:mm_vmscan_kswapd_wake: nid=0 order=0",
        ]
    );
    assert!(s.kswapd.running);
}

/// A task's kernel stack page woke kswapd (vmalloc's mask, order 0), and
/// kswapd ran.
const KERNEL_STACK_WAKES: [&str; 2] = [
    "Task(0) vmscan:mm_vmscan_wakeup_kswapd: nid=0 order=0 \
     gfp_flags=GFP_KERNEL|__GFP_HIGHMEM|__GFP_NOWARN|__GFP_ZERO",
    "Kswapd vmscan:mm_vmscan_kswapd_wake: nid=0 order=0",
];

/// A task's baseline: `task_struct`'s slab (order 3, then order 1) finds no
/// room above the min mark and none at all for order 1 from the one free
/// page left; the kernel stack's first vmalloc'd page wakes kswapd with
/// `GFP_KERNEL | __GFP_ZERO | __GFP_HIGHMEM | __GFP_NOWARN`.
#[test]
fn a_kernel_stack_page_at_the_low_mark_wakes_kswapd_with_the_vmalloc_mask() {
    let mut s = low_machine();
    // One free page: the order-1 fallback of task_struct finds none.
    hold_free_at(&mut s, 1);
    s.add_task("t");
    s.kmem_charge_tasks();
    assert_eq!(lines(&mut s), KERNEL_STACK_WAKES);
}

/// v6.12 `allocate_slab`: `radix_tree_node`'s first try (order 1 above its
/// minimum 0) keeps `__GFP_KSWAPD_RECLAIM` (`xas_alloc`'s `GFP_NOWAIT` has
/// no `__GFP_DIRECT_RECLAIM`, so `__GFP_RECLAIM` is not stripped): with the
/// node's free pages at the low mark it succeeds above the min mark and
/// wakes kswapd at order 1 with the first try's mask
/// (`__GFP_NORETRY` added). `task_struct`'s first try (`GFP_KERNEL`, order
/// 3 above its minimum 1) lost `__GFP_RECLAIM` and wakes nobody: its
/// task's only wakeup is its kernel stack's order-0 page.
#[test]
fn an_xarray_node_slabs_first_try_wakes_kswapd_at_its_order() {
    let mut s = at_low_mark();
    let low = s.node.wmark_low;
    s.kmem_slot_changed(0, 0, 0, 2);
    s.kmem_slot_changed(0, 1, 0, 2);
    assert_eq!(s.node.free, low - 2);
    assert_eq!(
        lines(&mut s),
        [
            "Task(0) vmscan:mm_vmscan_wakeup_kswapd: nid=0 order=1 \
             gfp_flags=GFP_NOWAIT|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_RECLAIMABLE",
            "Kswapd vmscan:mm_vmscan_kswapd_wake: nid=0 order=0",
        ]
    );
    let mut s = at_low_mark();
    s.add_task("t");
    s.kmem_charge_tasks();
    assert_eq!(lines(&mut s), KERNEL_STACK_WAKES);
}
