//! Rule tests of background writeback per wb with each wb's share of
//! `bg_thresh` (`crate::wb_over_bg_thresh`, v6.12 `wb_over_bg_thresh()`,
//! `domain_over_bg_thresh()`, `wb_bg_dirty_limits()`;
//! `policy.dirty_throttle`): the pages each background run writes.

use super::dirty_throttle::{throttle_machine, write};
use super::dirty_throttle_wb::write_and_complete;
use super::*;
use crate::memcg::{MemcgId, ROOT};

/// A 4096-page cgroup v2 machine with the throttle, file writes taking 100
/// ms; a root task with a 1024-page file, and a group `g` (`memory.max`
/// `max`) whose task has a 1024-page file.
fn machine(max: u64) -> (Sim, MemcgId, [u32; 2]) {
    let mut s = throttle_machine(true, 1e5, |c| c.cgroup_version = CgroupVersion::V2);
    let g = s.add_memcg(ROOT, "g").unwrap();
    s.set_memcg_max(g, max).unwrap();
    let (r, t) = (s.add_task("r"), s.add_task("t"));
    s.attach_task(t, g).unwrap();
    let (fr, fg) = (
        s.add_file("fr", 1024).unwrap(),
        s.add_file("fg", 1024).unwrap(),
    );
    s.open(fr, r).unwrap();
    s.open(fg, t).unwrap();
    (s, g, [fr, fg])
}

/// Dirty file pages and pages under writeback of group `m`.
fn counts(s: &Sim, m: MemcgId) -> (u64, u64) {
    let g = &s.memcgs[m as usize];
    (g.nr_file_dirty, g.nr_writeback)
}

/// v6.12 `domain_over_bg_thresh()`'s second test: the root wb, alone, has
/// completed one write (the global domain's count 1 + 1: its share is
/// 1/2), and then dirties 300 pages. The global domain is under its
/// `bg_thresh` (300 ≤ 389: thresh 780), so no writer starts background
/// writeback; but the wb's 300 dirty pages exceed its share of
/// `bg_thresh`, 389 × 1 / 2 = 194, so the periodic flusher's
/// `wb_check_background_flush()` writes them: one pass, all 300 (less than
/// the 1024-page chunk), after which the wb has none. (mmsim tested the
/// domain alone: nothing was written until the pages expired.)
#[test]
fn the_periodic_flusher_writes_a_wb_over_its_share_of_bg_thresh() {
    let (mut s, _, [fr, _]) = machine(u64::MAX);
    write_and_complete(&mut s, fr, 0, 1);
    for i in 1..=300 {
        write(&mut s, fr, i);
    }
    let (_, bg_thresh) = crate::cgwb::domain_dirty_limits(s.global_dirtyable_memory());
    assert_eq!(bg_thresh, 389);
    assert_eq!(s.wb_bg_dirty_limits(0, bg_thresh, false), (300, 194));
    assert_eq!(counts(&s, ROOT), (300, 0), "no writer started it");
    s.flusher_periodic(s.clock);
    assert_eq!(counts(&s, ROOT), (0, 300));
}

/// `wb_over_bg_thresh()` of a group's wb tests the global domain first,
/// with the wb's share of the global completions: the root wb has
/// completed 64 writes and the group's 1 (global count 1 + 64 + 1 = 66), so
/// the group's wb has 389 × 1 / 66 = 5 of the global `bg_thresh`; in its
/// memcg domain (no limit: `avail` 3905 as the global, `bg_thresh` 389)
/// it has 389 × 1 / 2 = 194. The group dirties 100 pages: both domains
/// under their `bg_thresh`, the memcg share not exceeded, but the global
/// one is, so the periodic flusher writes all 100. (mmsim tested the
/// group's memcg domain alone and wrote nothing.)
#[test]
fn a_groups_wb_over_its_share_of_the_global_bg_thresh_is_written() {
    let (mut s, g, [fr, fg]) = machine(u64::MAX);
    write_and_complete(&mut s, fr, 0, 64);
    write_and_complete(&mut s, fg, 0, 1);
    for i in 1..=100 {
        write(&mut s, fg, i);
    }
    let [gd, md] = s.memcg_dirty_domain(g, false);
    assert_eq!(
        (gd.dirty, gd.bg_thresh, md.dirty, md.bg_thresh),
        (100, 389, 100, 389)
    );
    let w = g as usize;
    assert_eq!(s.wb_bg_dirty_limits(w, 389, false), (100, 5));
    assert_eq!(s.wb_bg_dirty_limits(w, 389, true), (100, 194));
    assert_eq!(counts(&s, g), (100, 0));
    s.flusher_periodic(s.clock);
    assert_eq!(counts(&s, g), (0, 100));
    assert_eq!(counts(&s, ROOT), (0, 0));
}

/// The memcg domain's part: the group (`memory.max` 300) has completed one
/// write, so its wb has half of its memcg domain's completions (1 / (1 +
/// 1)) and half of the global ones (the root wb has none). It dirties 20
/// pages: the memcg domain (`avail` 21 file pages + 236 of headroom = 257,
/// `thresh` 51, `bg_thresh` 25) is under its `bg_thresh` and its freerun
/// ceiling (38), the global one too, and the wb under its global share
/// (389 / 2 = 194); but over its memcg share, 25 / 2 = 12: the periodic
/// flusher writes the 20 pages.
#[test]
fn a_groups_wb_over_its_share_of_its_memcg_bg_thresh_is_written() {
    let (mut s, g, [_, fg]) = machine(300);
    write_and_complete(&mut s, fg, 0, 1);
    for i in 1..=20 {
        write(&mut s, fg, i);
    }
    let [gd, md] = s.memcg_dirty_domain(g, false);
    assert_eq!((gd.dirty, gd.bg_thresh), (20, 389));
    assert_eq!(
        (md.avail, md.dirty, md.thresh, md.bg_thresh),
        (257, 20, 51, 25)
    );
    let w = g as usize;
    assert_eq!(s.wb_bg_dirty_limits(w, 389, false), (20, 194));
    assert_eq!(s.wb_bg_dirty_limits(w, 25, true), (20, 12));
    assert_eq!(counts(&s, g), (20, 0), "no writer started it");
    s.flusher_periodic(s.clock);
    assert_eq!(counts(&s, g), (0, 20));
}

/// The flusher is per wb: a writer over the global `bg_thresh` starts its
/// own wb's background writeback (`wb_start_background_writeback(wb)`),
/// which writes that wb's inodes only. The root task dirties 200 pages
/// first; the group's task then dirties pages until the global
/// `NR_FILE_DIRTY` exceeds 389, at its 190th (200 + 190 = 390): its wb
/// writes its own 190 pages (one pass, under a chunk) and stops (the
/// global domain at 200, the wb with none left); the root's 200, older,
/// stay dirty. (mmsim wrote the oldest dirty folio of any group: one of the
/// root's, leaving 389.) The 190th page as the start point is mmsim's
/// without `policy.bdp_ratelimit`: background writeback is started at
/// every dirtying of a clean folio (`crate::page_writeback_ratelimit` has
/// the kernel's ratelimited start, `rule_tests::dirty_ratelimit`),
/// whereas the kernel reaches `balance_dirty_pages()` only when the task
/// has dirtied its ratelimit (`nr_dirtied_pause`, 32 pages at first), so
/// it would start at the first such check past 389 (the 192nd page if
/// the pause stayed 32), and write that many. The rule tested (the
/// writer's own wb, not the oldest folio of any) is the same.
#[test]
fn a_writer_over_bg_thresh_writes_its_own_wbs_pages() {
    let (mut s, g, [fr, fg]) = machine(u64::MAX);
    for i in 0..200 {
        write(&mut s, fr, i);
    }
    let mut i = 0;
    while s.nr_writeback == 0 {
        write(&mut s, fg, i);
        i += 1;
    }
    assert_eq!(i, 190);
    assert_eq!(counts(&s, ROOT), (200, 0));
    assert_eq!(counts(&s, g), (0, 190));
}

/// `writeback_chunk_size()` (v6.12 fs/fs-writeback.c) sizes each pass of a
/// background run, and `wb_over_bg_thresh()` is tested between passes. A
/// 131072-page machine (boot `dirty_limit` 25991; with the 11000 pages
/// dirty, `dirty_thresh` 25990 and `bg_thresh` 12979): the chunk is
/// round_down(min(25600 / 2, 25991 / 8) + 1024, 1024) = 4096 pages. The
/// root wb has completed one write (its share of `bg_thresh`: 12979 / 2 =
/// 6489) and dirties 11000 pages, under the global `bg_thresh`, over its
/// share: the periodic flusher's run writes a chunk (6904 left, still
/// over), another (2808 left, under: the test turns false), and stops:
/// 8192 pages, two chunks. (A 2048-page chunk would write 6144, a 1-page
/// one 4511.)
#[test]
fn a_background_run_writes_whole_chunks_until_the_wb_is_under_its_share() {
    let mut s = throttle_machine(true, 1e5, |c| {
        c.memory = Size::from_pages(1 << 17);
        c.cgroup_version = CgroupVersion::V2;
    });
    let r = s.add_task("r");
    let fr = s.add_file("fr", 1 << 15).unwrap();
    s.open(fr, r).unwrap();
    write_and_complete(&mut s, fr, 0, 1);
    for i in 1..=11_000 {
        write(&mut s, fr, i);
    }
    let (thresh, bg_thresh) = crate::cgwb::domain_dirty_limits(s.global_dirtyable_memory());
    assert_eq!((thresh, bg_thresh), (25990, 12979));
    assert_eq!(s.wb_chunk_inputs(0), (25600, 25991));
    assert_eq!(s.wb_bg_dirty_limits(0, bg_thresh, false), (11_000, 6489));
    assert_eq!(counts(&s, ROOT), (11_000, 0), "no writer started it");
    s.flusher_periodic(s.clock);
    assert_eq!(counts(&s, ROOT), (2808, 8192));
}
