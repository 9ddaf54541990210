//! Rule tests of the page flag that PG_readahead and PG_reclaim share
//! (`PG_readahead = PG_reclaim`, include/linux/page-flags.h, through
//! v6.18): reclaim's mark on a dirty file folio is a readahead marker to
//! the next read, and that read's asynchronous readahead clears it.

use super::filefolio::shrink_alone;
use super::*;

#[test]
fn a_dirty_folio_reclaim_marked_starts_readahead_when_it_is_read() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let file = s.add_file("f", 1000).unwrap();
    // A full-page write creates page 100 dirty; nothing else is cached.
    s.step(&Event::FileWrite {
        file,
        index: 100,
        pages: 1,
    });
    let f = file_folio(&s, file, 100);
    // Direct reclaim meets it dirty: PG_reclaim set, activated
    // (shrink_folio_list), still dirty and cached (left isolated: the
    // helper does not put the list back).
    let (reclaimed, _, stat) = shrink_alone(&mut s, f);
    assert_eq!((reclaimed, stat.nr_unqueued_dirty), (0, 1));
    for flag in [flags::RECLAIM, flags::ACTIVE, flags::DIRTY] {
        assert!(s.folios[f].test(flag));
    }
    // A read of it hits a marked folio not under writeback:
    // page_cache_async_ra without matching state sizes the window from the
    // cached run after it (none: start 101) and ramps it up,
    // get_next_ra_size(1 + 1, 32) = 4, so pages 101..105 are read and the
    // mark (PG_reclaim too) is cleared. Separate bits read page 100 alone.
    s.step(&Event::FileRead {
        file,
        index: 100,
        pages: 1,
    });
    let cached: Vec<u32> = (0..1000)
        .filter(|&i| slot_folio(s.files[file as usize].slot(i)).is_some())
        .collect();
    assert_eq!(cached, vec![100, 101, 102, 103, 104]);
    assert!(!s.folios[f].test(flags::RECLAIM));
    assert_eq!(s.acc.file_pages_read, 4);
}

/// `folio_mark_dirty()` clears PG_reclaim: a store through a shared mapping
/// takes reclaim's mark off a dirty folio (so it is neither rotated at the
/// end of a write nor a readahead marker), where a buffered write, which
/// dirties the folio through its buffers, leaves the mark.
#[test]
fn a_store_through_a_mapping_clears_reclaims_mark_and_a_buffered_write_does_not() {
    for mapped in [false, true] {
        let mut s = machine(PolicyName::Cost, 1 << 16, None);
        let t = s.add_task("t");
        let file = s.add_file("f", 1000).unwrap();
        s.open(file, t).unwrap();
        let vma = s.mmap_file(t, file, 0, 1000, false).unwrap();
        s.step(&Event::FileWrite {
            file,
            index: 100,
            pages: 1,
        });
        let f = file_folio(&s, file, 100);
        s.folios[f].set(flags::RECLAIM);
        if mapped {
            s.step(&Event::Access {
                vma,
                index: 100,
                write: true,
            });
            assert_eq!(s.folios[f].mapcount, 1);
        } else {
            s.step(&Event::FileWrite {
                file,
                index: 100,
                pages: 1,
            });
        }
        assert!(s.folios[f].test(flags::DIRTY));
        assert_eq!(s.folios[f].test(flags::RECLAIM), !mapped, "mapped {mapped}");
    }
}
