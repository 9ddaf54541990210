//! Rule tests of the global dirty domain (`crate::writeback`, v6.12
//! `balance_dirty_pages()`'s `gdtc`): who balances it
//! (`balance_dirty_pages_ratelimited()`, writers only).

use super::*;

/// A 4096-page machine whose file system takes 10 s a write, a task with a
/// 1024-page file open and mapped shared whole: (sim, file, vma).
fn shared_writer() -> (Sim, u32, crate::mem::pagetable::VmaId) {
    let mut fs = DeviceConfig::of(DeviceKind::Ssd);
    fs.write_latency_us = Some(1e7);
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(4096),
        fs,
        ..Default::default()
    })
    .unwrap();
    let t = s.add_task("t");
    let file = s.add_file("f", 1024).unwrap();
    s.open(file, t).unwrap();
    let vma = s.mmap_file(t, file, 0, 1024, false).unwrap();
    (s, file, vma)
}

/// Only writers balance the global domain: v6.12 calls
/// `balance_dirty_pages_ratelimited()` from `generic_perform_write()` and
/// `fault_dirty_shared_page()`, not from `folio_mark_dirty()`, so a zap that
/// finds dirty PTEs over clean folios (`zap_pte_range()` →
/// `folio_mark_dirty()`) dirties them past the background threshold and
/// starts no writeback; the next buffered write does.
#[test]
fn a_zap_that_dirties_folios_starts_no_background_writeback_and_the_next_write_does() {
    let (mut s, file, vma) = shared_writer();
    for index in 0..600 {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
    }
    // Every page written and its write completed: 600 clean folios whose
    // PTEs stay dirty (mmsim does not `folio_mkclean()` at writeback).
    s.wakeup_flusher(s.clock);
    s.complete_writeback(u64::MAX);
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 0));
    // 3456 free pages and 640 file pages (the 600 and read-around's): the
    // background threshold is 10 % of 4096, 409 pages.
    assert_eq!((s.node.free, s.global_dirtyable_memory()), (3456, 4096));
    s.step(&Event::Discard {
        vma,
        index: 0,
        pages: 600,
    });
    // Before: the zap's 600 dirtyings balanced, writing down to the
    // threshold.
    assert_eq!((s.nr_dirty, s.nr_writeback), (600, 0));
    s.step(&Event::FileWrite {
        file,
        index: 600,
        pages: 1,
    });
    // The oldest dirtied written down to the threshold: 409 dirty, 192
    // under writeback.
    assert_eq!((s.nr_dirty, s.nr_writeback), (409, 192));
}
