//! The order-0 page allocator's slow path follows the mask's `__GFP_NORETRY`
//! (v6.12 mm/page_alloc.c `__alloc_pages_slowpath`, the same in v4.9): one
//! direct reclaim, then failure without `should_reclaim_retry` or the OOM
//! killer (`crate::page_alloc::alloc_pages_slowpath`). Readahead's order-0
//! allocation carries it (`readahead_gfp_mask`), so under global pressure
//! with nothing reclaimable its batch ends and the reader's page comes from
//! the page-cache miss, whose mapping mask retries and OOM-kills.

use super::*;
use crate::gfp::{GFP_READAHEAD, GFP_USER_FOLIO};

/// [`no_free_memory_of`] under the cost policy (v6.12).
fn no_free_memory() -> (Sim, u32, u32) {
    no_free_memory_of(PolicyName::Cost)
}

/// An 8192-page machine of `policy` without swap and without groups: a hog
/// task with 600 anonymous pages written (nothing reclaimable), a reader
/// task, and every free frame taken as kernel memory ([`take_all_free`]),
/// so that any allocation goes to the slow path and its reclaim finds
/// nothing. Returns the machine, the hog and the reader.
pub(super) fn no_free_memory_of(policy: PolicyName) -> (Sim, u32, u32) {
    let mut s = machine(policy, 8192, None);
    let hog = s.add_task("hog");
    let anon = s.mmap_anon(hog, 600).unwrap();
    touch(&mut s, anon, 600);
    let reader = s.add_task("reader");
    take_all_free(&mut s);
    assert_eq!(s.node.free, 0);
    (s, hog, reader)
}

#[test]
fn a_noretry_order0_allocation_fails_after_one_direct_reclaim_without_oom() {
    // Readahead's mask: kswapd woken, one direct reclaim (one allocstall),
    // then `nopage`: the allocation fails and nobody is killed.
    let (mut s, hog, _) = no_free_memory();
    assert!(!s.alloc_page(GFP_READAHEAD));
    assert_eq!((s.vm.allocstall_normal, s.vm.oom_kill), (1, 0));
    assert!(!s.tasks[hog as usize].dead);
    // A page-cache miss's mask: the same fruitless reclaim, whose watermark
    // test (`reclaim_could_pass_min`) ends the retries, then the OOM killer
    // kills the hog and the allocation takes one of its freed pages.
    let (mut s, hog, _) = no_free_memory();
    assert!(s.alloc_page(GFP_USER_FOLIO));
    assert_eq!((s.vm.allocstall_normal, s.vm.oom_kill), (1, 1));
    assert!(s.tasks[hog as usize].dead);
}

#[test]
fn readahead_ends_at_its_failed_allocation_and_the_reader_allocates_its_page_with_retries() {
    let (mut s, hog, reader) = no_free_memory();
    let file = s.add_file("f", 64).unwrap();
    s.open(file, reader).unwrap();
    // The sync readahead's window (0..4) stopped at page 0's allocation
    // (one direct reclaim, no OOM); `filemap_create_folio`'s allocation of
    // page 0 then reclaimed once more and OOM-killed the hog. Only page 0
    // is cached, read alone (before the rule: the readahead's allocation
    // killed the hog and the window 0..4 was read).
    assert_eq!(super::noretry::read_page_0(&mut s, file), [0]);
    assert_eq!(s.acc.file_pages_read, 1);
    assert_eq!((s.vm.allocstall_normal, s.vm.oom_kill), (2, 1));
    assert!(s.tasks[hog as usize].dead);
    assert!(!s.tasks[reader as usize].dead);
}
