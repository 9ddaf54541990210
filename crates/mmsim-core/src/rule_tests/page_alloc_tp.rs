//! `kmem:mm_page_alloc`, `kmem:mm_page_free` and `kmem:mm_page_pcpu_drain`
//! (`crate::tracepoint::kmem_page`, v6.12 include/trace/events/kmem.h):
//! where the page allocator emits them, in the kernel's order (the free in
//! `free_pages_prepare`, then `free_pcppages_bulk`'s drains), with the
//! allocation's mask and `gfp_migratetype`, and the NULL line of a failed
//! allocation.

use super::*;
use crate::huge_memory::ThpGfp;
use crate::page_alloc::{MigrateType, PhysMem, NORMAL_START_PFN};
use crate::tracepoint::{TpEvent, TracepointConfig, Tracer};

const BASE: u64 = NORMAL_START_PFN;

/// `page=… pfn=…` of the `k`th frame from [`BASE`]: its `struct page` in the
/// vmemmap (64 bytes each from x86-64's `0xffffea0000000000`) and its pfn.
fn page_pfn(k: u64) -> String {
    format!(
        "page={:#018x} pfn={:#x}",
        0xffff_ea00_0000_0000u64 + (BASE + k) * 64,
        BASE + k
    )
}

fn trace_on(s: &mut Sim, event: &str) {
    s.tp = Tracer::new(&TracepointConfig {
        events: vec![event.to_string()],
        max_events: 100_000,
        ..Default::default()
    });
    s.setup_trace_pcpu_drain();
}

/// The kept events as `name: fields`.
fn events(s: &mut Sim) -> Vec<String> {
    let tp = s.tp.take().unwrap();
    tp.records
        .iter()
        .map(|r| format!("{}: {}", r.event.name(), r.event))
        .collect()
}

#[test]
fn free_pcppages_bulk_logs_each_block_from_the_lists_tail_with_its_pageblock_type() {
    // The 16384-page zone of `rule_tests::pcp_high` (`batch` 3, `high` 12):
    // 12 pages taken from the buddy lists in PFN order and freed one by one
    // to the movable list; the 12th free brings `count` to `high` and
    // `free_pcppages_bulk` returns `batch` pages from the list's tail, the
    // oldest first, each logged with its pageblock's type (MOVABLE, 1).
    let mut p = PhysMem::new(1 << 14, 12, 1, false);
    assert_eq!((p.pcp.batch, p.pcp.high), (3, 12));
    p.pcp.drain_log = Some(Vec::new());
    let v: Vec<u64> = (0..12)
        .map(|_| p.zone.alloc_pages(0, MigrateType::Movable).unwrap())
        .collect();
    assert_eq!(v, (BASE..BASE + 12).collect::<Vec<_>>());
    for (k, &pfn) in v.iter().enumerate() {
        p.free_frames(pfn as u32, 0);
        let logged = p.pcp.drain_log.as_ref().unwrap().len();
        assert_eq!(logged, if k < 11 { 0 } else { 3 }, "free {k}");
    }
    let lines: Vec<String> = p
        .pcp
        .drain_log
        .take()
        .unwrap()
        .into_iter()
        .map(|(pfn, order, migratetype)| {
            TpEvent::PcpuDrain {
                pfn,
                order,
                migratetype,
            }
            .to_string()
        })
        .collect();
    assert_eq!(
        lines,
        [
            "page=0xffffea0004000000 pfn=0x100000 order=0 migratetype=1",
            "page=0xffffea0004000040 pfn=0x100001 order=0 migratetype=1",
            "page=0xffffea0004000080 pfn=0x100002 order=0 migratetype=1",
        ]
    );
    // Off (the default), nothing is logged.
    let mut q = PhysMem::new(1 << 14, 12, 1, false);
    for pfn in BASE..BASE + 12 {
        q.zone.alloc_pages(0, MigrateType::Movable).unwrap();
        q.free_frames(pfn as u32, 0);
    }
    assert_eq!(q.pcp.drain_log, None);
}

#[test]
fn faults_allocate_then_a_zap_frees_and_the_free_that_reaches_high_drains() {
    // 16384 pages: `batch` 3; `high` set to 6. Four anonymous faults take
    // BASE..BASE+3 (two refills of 3 pages, each in PFN order), leaving
    // BASE+4 and BASE+5 on the list. MADV_DONTNEED of the four frees them
    // in index order: the fourth free brings `count` to 6, and the drain
    // returns the list's three oldest pages: BASE+5, BASE+4 (the refill's
    // leftovers, oldest at the tail) and BASE (the first freed), each
    // `mm_page_pcpu_drain` after the `mm_page_free` that caused it.
    let mut s = machine(PolicyName::Cost, 1 << 14, None);
    assert_eq!(s.phys.pcp.batch, 3);
    s.phys.pcp.high = 6;
    trace_on(&mut s, "kmem:*");
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 16).unwrap();
    touch(&mut s, vma, 4);
    s.madvise_dontneed(vma, 0, 4);
    let alloc = |k: u64| {
        format!(
            "kmem:mm_page_alloc: {} order=0 migratetype=1 \
             gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO",
            page_pfn(k)
        )
    };
    let free = |k: u64| format!("kmem:mm_page_free: {} order=0", page_pfn(k));
    let drain = |k: u64| {
        format!(
            "kmem:mm_page_pcpu_drain: {} order=0 migratetype=1",
            page_pfn(k)
        )
    };
    assert_eq!(
        events(&mut s),
        [
            alloc(0),
            alloc(1),
            alloc(2),
            alloc(3),
            free(0),
            free(1),
            free(2),
            free(3),
            drain(5),
            drain(4),
            drain(0),
        ]
    );
    assert_eq!(alloc(0).split(": ").nth(1).unwrap(), "page=0xffffea0004000000 pfn=0x100000 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO");
}

#[test]
fn a_large_allocation_prints_its_order_and_a_failed_one_a_null_page() {
    // A THP-sized block with `GFP_TRANSHUGE_LIGHT` (no reclaim): the first
    // order-10 block split, its lower half. Then, with the node's free
    // pages at the min watermark, the same request fails at the low
    // watermark and may neither wake kswapd nor reclaim: `__alloc_pages`
    // still emits, page NULL, pfn 0.
    let mut s = machine(PolicyName::Cost, 1 << 14, None);
    trace_on(&mut s, "kmem:mm_page_alloc");
    let gfp = ThpGfp {
        direct: false,
        kswapd: false,
        noretry: false,
        mask: crate::gfp::GFP_TRANSHUGE_LIGHT,
    };
    assert_eq!(s.rmqueue_large(9, gfp), Some(BASE));
    while s.node.free > s.node.wmark_min {
        s.phys.zone.alloc_pages(0, MigrateType::Movable).unwrap();
        s.node.free -= 1;
    }
    assert_eq!(s.rmqueue_large(9, gfp), None);
    assert_eq!(
        events(&mut s),
        [
            "kmem:mm_page_alloc: page=0xffffea0004000000 pfn=0x100000 order=9 migratetype=1 \
             gfp_flags=GFP_TRANSHUGE_LIGHT",
            "kmem:mm_page_alloc: page=(nil) pfn=0x0 order=9 migratetype=1 \
             gfp_flags=GFP_TRANSHUGE_LIGHT",
        ]
    );
}

#[test]
fn page_tables_are_unmovable_allocations_with_their_own_mask() {
    // `machine.pagetable_frames`: a fresh VMA's first store allocates its
    // PUD, PMD and PTE pages (`GFP_PGTABLE_USER | __GFP_COMP`, migratetype
    // 0) before the anonymous folio (migratetype 1). The first unmovable
    // refill claims the zone's first order-10 block whole (its extfrag
    // event is not selected here), so the tables are BASE..BASE+2 and the
    // folio comes from the next block, BASE + 1024.
    let mut s = machine(PolicyName::Cost, 1 << 14, None);
    s.cfg.kmem_accounting = true;
    s.kmem = Some(Default::default());
    s.cfg.pagetable_frames = true;
    trace_on(&mut s, "kmem:mm_page_alloc");
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1 << 20).unwrap();
    touch(&mut s, vma, 1);
    let table = |k: u64| {
        format!(
            "kmem:mm_page_alloc: {} order=0 migratetype=0 \
             gfp_flags=GFP_KERNEL_ACCOUNT|__GFP_COMP|__GFP_ZERO",
            page_pfn(k)
        )
    };
    assert_eq!(
        events(&mut s),
        [
            table(0),
            table(1),
            table(2),
            "kmem:mm_page_alloc: page=0xffffea0004010000 pfn=0x100400 order=0 migratetype=1 \
             gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO"
                .to_string(),
        ]
    );
}

#[test]
fn tracing_off_emits_nothing_and_changes_no_frame() {
    // The same faults and zap with and without the tracepoints: the same
    // frames in the same order, the same per-CPU list.
    let run = |traced: bool| {
        let mut s = machine(PolicyName::Cost, 1 << 14, None);
        s.phys.pcp.high = 6;
        if traced {
            trace_on(&mut s, "kmem:*");
        }
        let t = s.add_task("t");
        let vma = s.mmap_anon(t, 16).unwrap();
        touch(&mut s, vma, 4);
        s.madvise_dontneed(vma, 0, 4);
        (
            s.phys.pcp.list(MigrateType::Movable),
            s.phys.zone.free_pages(),
            s.tp.map_or(0, |t| t.records.len()),
        )
    };
    let (list, free, n) = run(false);
    assert_eq!((list.clone(), n), (vec![BASE + 3, BASE + 2, BASE + 1], 0));
    assert_eq!(run(true), (list, free, 11));
}
