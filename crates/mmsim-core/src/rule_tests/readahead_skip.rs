//! A failed page of an order-0 readahead batch, by era
//! (`crate::readahead::read_pages`): v4.9 skips a page whose charge fails
//! (`read_pages` → ext4's `goto next_page`) and tries the next, v6.12 ends
//! the batch at it (`-ENOMEM` breaks `page_cache_ra_unbounded`); a failed
//! allocation ends the batch in both. The batch's own folios are locked
//! until read, so its charges' reclaim keeps them.

use super::noretry::{cached_pages, full_group_of, read_page_0};
use super::*;
use crate::memcg::MemcgId;

/// [`full_group_of`] `policy` (group `g` filled by a hog's 100 anonymous
/// pages under `memory.max` 100, nothing reclaimable, the stock drained),
/// whose reader then reads page 0 of a 64-page file: its sync readahead
/// window is 0..4. Returns the machine, the group, the file and the hog.
fn read_in_full_group(policy: PolicyName) -> (Sim, MemcgId, u32, u32) {
    let (mut s, g, hog, reader) = full_group_of(policy);
    let file = s.add_file("f", 64).unwrap();
    s.open(file, reader).unwrap();
    read_page_0(&mut s, file);
    (s, g, file, hog)
}

#[test]
fn v4_9_skips_a_readahead_page_whose_charge_fails_v6_12_ends_the_batch() {
    // v6.12: page 0's charge fails (reclaim, drain, reclaim: 2 `max`) and
    // ends the batch; the page-cache miss's charge of page 0 takes 18 and
    // OOM-kills the hog.
    let (s, g, file, hog) = read_in_full_group(PolicyName::Cost);
    assert_eq!(s.memcgs[g as usize].max_events, 20);
    assert_eq!(cached_pages(&s, file), [0]);
    assert!(s.tasks[hog as usize].dead);
    // v4.9: each of the window's four pages is tried (2 `max` each), then
    // the miss's 18: 26. The same page 0 read alone and one OOM kill.
    let (s, g, file, hog) = read_in_full_group(PolicyName::ScannedRotated);
    assert_eq!(s.memcgs[g as usize].max_events, 26);
    assert_eq!(cached_pages(&s, file), [0]);
    assert_eq!(s.acc.file_pages_read, 1);
    assert_eq!(s.vm.oom_kill, 1);
    assert!(s.tasks[hog as usize].dead);
}

#[test]
fn v4_9_skips_only_the_failed_page_and_reads_the_rest() {
    // Room for two pages in the group: the hog's 100 pages under a
    // `memory.max` of 102 (stock drained). Pages 0 and 1 of the window are
    // charged; page 2's charge reclaims, but 0 and 1 are the batch's own,
    // locked until read (`folio_trylock` fails: kept), and the hog's pages
    // are anonymous without swap, so it fails (2 `max`). v4.9 skips it and
    // tries page 3 (2 more); v6.12 stops. Both read 0..2 as one run, no OOM.
    // (Without the lock, page 2's reclaim took page 0 or 1, unread.)
    for (policy, max_events) in [(PolicyName::ScannedRotated, 4), (PolicyName::Cost, 2)] {
        let (mut s, g, _, reader) = full_group_of(policy);
        s.set_memcg_max(g, 102).unwrap();
        assert_eq!(s.memcgs[g as usize].max_events, 0, "{policy:?}");
        let file = s.add_file("f", 64).unwrap();
        s.open(file, reader).unwrap();
        assert_eq!(read_page_0(&mut s, file), [0, 1], "{policy:?}");
        assert_eq!(s.memcgs[g as usize].max_events, max_events, "{policy:?}");
        assert_eq!(s.acc.file_pages_read, 2, "{policy:?}");
        assert_eq!(s.vm.oom_kill, 0, "{policy:?}");
    }
}

#[test]
fn a_failed_readahead_allocation_ends_the_batch_in_both_eras() {
    // Global: no free page and nothing reclaimable (a hog's anonymous
    // pages, no swap). Readahead's allocation of page 0 fails after one
    // direct reclaim (`__GFP_NORETRY`) and ends the batch in v4.9 too
    // (`__do_page_cache_readahead`'s `break`); the miss's allocation
    // reclaims once more and OOM-kills the hog: 2 allocstalls in each era.
    for policy in [PolicyName::ScannedRotated, PolicyName::Cost] {
        let (mut s, hog, reader) = super::slowpath_noretry::no_free_memory_of(policy);
        let file = s.add_file("f", 64).unwrap();
        s.open(file, reader).unwrap();
        assert_eq!(read_page_0(&mut s, file), [0], "{policy:?}");
        assert_eq!(
            (s.vm.allocstall_normal, s.vm.oom_kill),
            (2, 1),
            "{policy:?}"
        );
        assert!(s.tasks[hog as usize].dead, "{policy:?}");
    }
}
