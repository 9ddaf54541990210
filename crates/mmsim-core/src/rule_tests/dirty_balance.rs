//! Rule tests of the global dirty domain (`crate::writeback`, v6.12
//! `balance_dirty_pages()`'s `gdtc`): who balances it
//! (`balance_dirty_pages_ratelimited()`, writers only).

use super::*;

/// A 4096-page machine whose file system takes 10 s a write (a write
/// started stays in flight through a test).
pub(crate) fn slow_write_machine() -> Sim {
    let mut fs = DeviceConfig::of(DeviceKind::Ssd);
    fs.write_latency_us = Some(1e7);
    Sim::new(MachineConfig {
        memory: Size::from_pages(4096),
        fs,
        ..Default::default()
    })
    .unwrap()
}

/// [`slow_write_machine`] with a task that has a 1024-page file open and
/// mapped shared whole: (sim, file, vma).
fn shared_writer() -> (Sim, u32, crate::mem::pagetable::VmaId) {
    let mut s = slow_write_machine();
    let t = s.add_task("t");
    let file = s.add_file("f", 1024).unwrap();
    s.open(file, t).unwrap();
    let vma = s.mmap_file(t, file, 0, 1024, false).unwrap();
    (s, file, vma)
}

/// Only writers balance the global domain: v6.12 calls
/// `balance_dirty_pages_ratelimited()` from `generic_perform_write()` and
/// `fault_dirty_shared_page()`, not from `folio_mark_dirty()`, which a zap
/// reaches for a dirty PTE (`zap_pte_range()`). Since `folio_mkclean()` at
/// writeback (`crate::writeback::Sim::folio_clear_dirty_for_io`) a dirty
/// shared PTE maps a dirty folio, so the zap dirties no folio and has
/// nothing to balance: the stores' own balancing left the dirty pages at
/// the background threshold and the rest under writeback with clean PTEs,
/// and the zap of all 600 pages leaves both counts as they were; the next
/// buffered write balances. Before `folio_mkclean()` the written folios'
/// stale dirty PTEs dirtied all 600 again at the zap (600 dirty, 211 under
/// writeback), a state v6.12 cannot reach.
#[test]
fn a_zap_after_writeback_dirties_nothing_and_the_next_write_balances() {
    let (mut s, file, vma) = shared_writer();
    for index in 0..600 {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
    }
    // 3456 free pages and 640 file pages (the 600 and read-around's):
    // dirtyable 3456 - 192 (the high watermark) + 640 + 1 = 3905, the
    // background threshold 409 * 3905 / 4096 = 389 pages. Each store past
    // it wrote the oldest page (the writes take 10 s: all in flight).
    assert_eq!((s.node.free, s.global_dirtyable_memory()), (3456, 3905));
    assert_eq!((s.nr_dirty, s.nr_writeback), (389, 211));
    let written = |s: &Sim| {
        (0..600)
            .filter(|&i| s.vmas[vma as usize].pte(i) & crate::mem::pagetable::PTE_DIRTY == 0)
            .count()
    };
    assert_eq!(written(&s), 211, "the written pages' PTEs are clean");
    s.step(&Event::Discard {
        vma,
        index: 0,
        pages: 600,
    });
    assert_eq!((s.nr_dirty, s.nr_writeback), (389, 211));
    s.step(&Event::FileWrite {
        file,
        index: 600,
        pages: 1,
    });
    // 390 dirty: the oldest dirty page written.
    assert_eq!((s.nr_dirty, s.nr_writeback), (389, 212));
}

/// The global domain's limits are v6.12's: `global_dirtyable_memory()` is
/// the free pages (`NR_FREE_PAGES`: not those on the per-CPU list) less
/// `totalreserve_pages` (the one zone's high watermark), plus the file LRU
/// pages, plus 1; `domain_dirty_limits()` takes 409/4096 of it as
/// `bg_thresh` (819/4096 as `thresh`). Buffered writes of one page each
/// start background writeback at the first write past `bg_thresh`.
#[test]
fn the_global_background_threshold_is_409_4096ths_of_free_over_the_reserve_plus_file() {
    let (mut s, file, _) = shared_writer();
    // 4096 pages: min_free_kbytes int_sqrt(16384 * 16) = 512 KiB, WMARK_MIN
    // 128 pages, the gaps max(128 / 4, 4096 * 10 / 10000) = 32: WMARK_HIGH
    // 192 = totalreserve_pages.
    assert_eq!(s.totalreserve_pages(), 192);
    assert_eq!(s.global_dirtyable_memory(), 4096 - 192 + 1);
    assert_eq!(crate::cgwb::domain_dirty_limits(3905), (780, 389));
    let mut index = 0;
    while s.nr_writeback == 0 {
        s.step(&Event::FileWrite {
            file,
            index,
            pages: 1,
        });
        index += 1;
    }
    // The 390th write takes the dirty pages over bg_thresh: 3706 free pages
    // (none on the per-CPU list), 390 file pages, avail again 3706 - 192 +
    // 390 + 1 = 3905, bg_thresh 389: the oldest page written. Before (10 %
    // of free + file, 4096 pages: 409), the 410th.
    assert_eq!(index, 390);
    assert_eq!((s.phys.zone.free_pages(), s.phys.pcp.count()), (3706, 0));
    assert_eq!(s.global_dirtyable_memory(), 3905);
    assert_eq!((s.nr_dirty, s.nr_writeback), (389, 1));
}
