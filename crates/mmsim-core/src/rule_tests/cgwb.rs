//! Rule tests of a v2 group's own dirty domain (`crate::cgwb`, v6.12
//! `balance_dirty_pages()`'s `mdtc`): its thresholds in pages from
//! `memory.max`, `memory.high` and an ancestor's limit, and its background
//! writeback; a v1 group, the root group and a filesystem without cgroup
//! writeback keep the global domain alone.

use super::*;
use crate::cgwb::DirtyDomain;
use crate::memcg::{MemcgId, MemcgKnob, ROOT};

/// A 4096-page machine (cgroup `version`, cgroup writeback `cgwb`) whose
/// file system takes 10 s a write (none completes during a test), a group
/// `g` (under `/p` when `parent_max` is given, with that `memory.max`) with
/// `memory.max` 1000 pages, and its task with a 1024-page file open.
fn group_writer(
    version: CgroupVersion,
    cgwb: bool,
    parent_max: Option<u64>,
) -> (Sim, MemcgId, u32) {
    group_writer_on(
        MachineConfig {
            cgroup_version: version,
            cgroup_writeback: cgwb,
            ..Default::default()
        },
        parent_max,
        1000,
    )
}

/// [`group_writer`] on `cfg` (its memory and file system replaced) with
/// the group's `memory.max` `max`: over 1000, a 32768-page machine and an
/// 8192-page file.
fn group_writer_on(cfg: MachineConfig, parent_max: Option<u64>, max: u64) -> (Sim, MemcgId, u32) {
    let mut fs = DeviceConfig::of(DeviceKind::Ssd);
    fs.write_latency_us = Some(1e7);
    let pages = if max > 1000 { 32768 } else { 4096 };
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(pages),
        fs,
        ..cfg
    })
    .unwrap();
    let parent = match parent_max {
        Some(max) => {
            let p = s.add_memcg(ROOT, "p").unwrap();
            s.set_memcg_max(p, max).unwrap();
            p
        }
        None => ROOT,
    };
    let g = s.add_memcg(parent, "g").unwrap();
    s.set_memcg_max(g, max).unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    let file = s.add_file("f", pages / 4).unwrap();
    s.open(file, t).unwrap();
    (s, g, file)
}

/// Writes pages `from..to` of `file`, one page a write.
fn write_pages(s: &mut Sim, file: u32, from: u32, to: u32) {
    for index in from..to {
        s.step(&Event::FileWrite {
            file,
            index,
            pages: 1,
        });
    }
}

#[test]
fn a_groups_dirty_thresholds_are_the_kernels_in_pages_of_its_headroom() {
    // 100 dirty pages in a group of memory.max 1000: filepages 100, dirty
    // 100, headroom 900; the global domain's clean pages not the group's
    // (its free pages, well over 900) do not bind, so avail = 100 + 900 =
    // 1000, thresh = 819 * 1000 / 4096 = 199, bg_thresh = 409 * 1000 / 4096
    // = 99 (per-4096 ratios of 20 % and 10 %, rounded down).
    let (mut s, g, file) = group_writer(CgroupVersion::V2, true, None);
    write_pages(&mut s, file, 0, 100);
    // The usage counts the per-CPU stock's pre-charge (64-page batches:
    // `page_counter_read()` includes it); drained, as a knob write drains
    // it, it is the 100 pages.
    assert_eq!(s.memcgs[g as usize].usage, 128);
    s.drain_stock();
    assert_eq!(s.memcgs[g as usize].usage, 100);
    let [global, md] = s.memcg_dirty_domain(g, true);
    assert_eq!(global.dirty, 100);
    assert!(global.avail - global.dirty >= 900, "{global:?}");
    let want = DirtyDomain {
        avail: 1000,
        dirty: 100,
        thresh: 199,
        bg_thresh: 99,
    };
    assert_eq!(md, want);
    assert_eq!(md.freerun_ceiling(), 149);
    // memory.high 800 is the tighter ceiling: headroom 700, avail 800,
    // thresh 819 * 800 / 4096 = 159, bg_thresh 409 * 800 / 4096 = 79.
    s.set_memcg_knob(g, MemcgKnob::High, 800).unwrap();
    let [_, md] = s.memcg_dirty_domain(g, true);
    assert_eq!((md.avail, md.thresh, md.bg_thresh), (800, 159, 79));
    s.check_invariants().unwrap();
}

#[test]
fn an_ancestors_limit_bounds_the_headroom() {
    // Parent /p with memory.max 600 over g's 1000: headroom min(1000 - 100,
    // 600 - 100) = 500, avail 600, thresh 819 * 600 / 4096 = 119,
    // bg_thresh 409 * 600 / 4096 = 59.
    let (mut s, g, file) = group_writer(CgroupVersion::V2, true, Some(600));
    write_pages(&mut s, file, 0, 100);
    // With the stock's 128 pages charged to both: headroom 600 - 128, avail
    // 572, thresh 819 * 572 / 4096 = 114, bg_thresh 409 * 572 / 4096 = 57.
    let [_, md] = s.memcg_dirty_domain(g, true);
    assert_eq!((md.avail, md.thresh, md.bg_thresh), (572, 114, 57));
    s.drain_stock();
    let [_, md] = s.memcg_dirty_domain(g, true);
    assert_eq!(
        md,
        DirtyDomain {
            avail: 600,
            dirty: 100,
            thresh: 119,
            bg_thresh: 59,
        }
    );
    // The parent's domain counts the child's pages (hierarchical stats).
    let p = s.memcgs[g as usize].parent.unwrap();
    let [_, pd] = s.memcg_dirty_domain(p, true);
    assert_eq!((pd.avail, pd.dirty), (600, 100));
}

#[test]
fn a_groups_background_writeback_starts_at_its_freerun_ceiling_and_writes_a_chunk() {
    // After n writes the group holds n dirty pages and, with the stock's
    // 64-page batches, a usage of 64 * ceil(n / 64): from n = 129 on 192,
    // headroom 808, avail n + 808. n = 141: avail 949, thresh 819 * 949 /
    // 4096 = 189, bg_thresh 409 * 949 / 4096 = 94, freerun ceiling 141:
    // nothing written (the global background threshold is about 400).
    // n = 142: avail 950, thresh 189, bg_thresh 94, ceiling 141 < 142: the
    // group's wb runs a pass (its 142 dirty pages over its bg_thresh 94),
    // which writes a chunk, 1024 pages (the global thresh / DIRTY_SCOPE is
    // under 1024): all 142. Before, it stopped at the bg_thresh (48 written).
    // n = 143: dirty 1 + writeback 142 = 143 over the ceiling (951: thresh
    // 190, bg_thresh 94, ceiling 142), but 1 dirty page is not over 94:
    // nothing written.
    let (mut s, g, file) = group_writer(CgroupVersion::V2, true, None);
    write_pages(&mut s, file, 0, 141);
    assert_eq!((s.nr_dirty, s.nr_writeback), (141, 0));
    let [global, md] = s.memcg_dirty_domain(g, true);
    assert_eq!((md.avail, md.thresh, md.bg_thresh), (949, 189, 94));
    assert!(global.thresh / 8 < 1024, "{global:?}");
    assert_eq!(crate::cgwb::writeback_chunk_size(global.thresh), 1024);
    write_pages(&mut s, file, 141, 142);
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 142));
    let grp = &s.memcgs[g as usize];
    assert_eq!((grp.nr_file_dirty, grp.nr_writeback), (0, 142));
    // The walk of the flusher's queue resumes after its last entry.
    assert_eq!(grp.wb_cursor, 142);
    let under_wb = |s: &Sim, i: u32| s.folios[file_folio(s, file, i)].test(flags::WRITEBACK);
    assert!((0..142).all(|i| under_wb(&s, i)));
    write_pages(&mut s, file, 142, 143);
    let [_, md] = s.memcg_dirty_domain(g, true);
    assert_eq!((md.avail, md.dirty, md.freerun_ceiling()), (951, 143, 142));
    assert_eq!((s.nr_dirty, s.nr_writeback), (1, 142));
    assert!(!under_wb(&s, 142));
    s.check_invariants().unwrap();
}

#[test]
fn a_pass_writes_one_chunk_then_checks_the_groups_bg_thresh() {
    // A 32768-page machine, memory.max 16000: the global avail is 32768
    // less the high watermark (542) and the page on the per-CPU list, plus
    // 1: 32226, thresh 819 * 32226 / 4096 = 6443, 6443 / DIRTY_SCOPE = 805,
    // so a chunk is round_down(805 + 1024, 1024) = 1024 pages; the global
    // background threshold (3217) stays above the group's freerun ceiling. n = 2392
    // writes: usage 64 * 38 = 2432, headroom 13568, avail 15960, thresh
    // 819 * 15960 / 4096 = 3191, bg_thresh 409 * 15960 / 4096 = 1593,
    // ceiling 2392: freerun. n = 2393: avail 15961, thresh 3191, bg_thresh
    // 1593, ceiling 2392 < 2393: one pass writes the oldest 1024 pages;
    // the 1369 left are under 1593, so no second pass. Before, the
    // writeback stopped at the bg_thresh: 2393 - 1593 = 800 pages.
    let (mut s, g, file) = group_writer_on(
        MachineConfig {
            cgroup_version: CgroupVersion::V2,
            ..Default::default()
        },
        None,
        16000,
    );
    write_pages(&mut s, file, 0, 2392);
    assert_eq!((s.nr_dirty, s.nr_writeback), (2392, 0));
    write_pages(&mut s, file, 2392, 2393);
    let [global, md] = s.memcg_dirty_domain(g, false);
    assert_eq!((global.avail, global.thresh), (32226, 6443));
    assert_eq!(crate::cgwb::writeback_chunk_size(global.thresh), 1024);
    assert_eq!(
        (md.avail, md.dirty, md.thresh, md.bg_thresh),
        (15961, 1369, 3191, 1593)
    );
    assert_eq!((s.nr_dirty, s.nr_writeback), (1369, 1024));
    let under_wb = |s: &Sim, i: u32| s.folios[file_folio(s, file, i)].test(flags::WRITEBACK);
    assert!((0..1024).all(|i| under_wb(&s, i)));
    assert!((1024..2393).all(|i| !under_wb(&s, i)));
    // The next pass resumes after the last entry it looked at.
    assert_eq!(s.memcgs[g as usize].wb_cursor, 1024);
    s.check_invariants().unwrap();
}

#[test]
fn a_folio_dirtied_again_under_writeback_ends_the_pass_queued_again() {
    // As above to n = 143: pages 0..142 under writeback (queue entries
    // 0..=141), page 142 dirty (entry 142), the walk's cursor at 142, the
    // group's avail 951, bg_thresh 94. Rewriting pages 0..93 dirties them
    // again under writeback (entries 143..=236); the 94th makes 95 dirty
    // pages, over 94: the pass writes page 142 (entry 142), then meets
    // page 0 (entry 143) under writeback: queued again at the tail (entry
    // 237), the pass ends, the cursor at 144. The next rewrite (page 94, 96
    // dirty) resumes there and meets page 1: nothing written, cursor 145.
    let (mut s, g, file) = group_writer(CgroupVersion::V2, true, None);
    write_pages(&mut s, file, 0, 143);
    assert_eq!((s.nr_dirty, s.nr_writeback), (1, 142));
    assert_eq!(s.memcgs[g as usize].wb_cursor, 142);
    write_pages(&mut s, file, 0, 93);
    assert_eq!((s.nr_dirty, s.nr_writeback), (94, 142));
    write_pages(&mut s, file, 93, 94);
    assert_eq!((s.nr_dirty, s.nr_writeback), (94, 143));
    assert!(s.folios[file_folio(&s, file, 142)].test(flags::WRITEBACK));
    assert_eq!(s.memcgs[g as usize].wb_cursor, 144);
    let f0 = file_folio(&s, file, 0);
    assert_eq!(s.dirty_fifo.entry_at(143), Some(None));
    assert_eq!(s.dirty_fifo.entry_at(237).unwrap().unwrap().1, f0);
    write_pages(&mut s, file, 94, 95);
    assert_eq!((s.nr_dirty, s.nr_writeback), (95, 143));
    assert_eq!(s.memcgs[g as usize].wb_cursor, 145);
    s.check_invariants().unwrap();
}

#[test]
fn the_writing_tasks_group_balances_not_the_folios() {
    // Group g's task reads pages 0..200 (charged to g); a task of the root
    // group then writes them: v6.12 balances the writer's wb (the root's,
    // which has no memcg domain), so g's 200 dirty pages, over its freerun
    // ceiling, are not written. Before, the folio's group (g) balanced.
    let (mut s, g, file) = group_writer(CgroupVersion::V2, true, None);
    s.step(&Event::FileRead {
        file,
        index: 0,
        pages: 200,
    });
    assert!((0..200).all(|i| s.folios.memcg(file_folio(&s, file, i)) == g));
    let root_task = s.add_task("root-task");
    s.open(file, root_task).unwrap();
    write_pages(&mut s, file, 0, 200);
    assert_eq!((s.nr_dirty, s.nr_writeback), (200, 0));
    assert_eq!(s.memcgs[g as usize].nr_file_dirty, 200);
    let [_, md] = s.memcg_dirty_domain(g, true);
    assert!(md.dirty > md.freerun_ceiling(), "{md:?}");
    s.check_invariants().unwrap();
}

#[test]
fn the_periodic_flusher_writes_a_group_over_its_bg_thresh() {
    // 120 dirty pages: over g's bg_thresh, under its freerun ceiling
    // (usage 128, headroom 872, avail 992: thresh 198, bg_thresh 99,
    // ceiling 148), so no write starts them. The periodic flusher's pass,
    // before any page expires, runs wb_check_background_flush: one chunk
    // (1024 pages) writes all 120. Before, nothing was written.
    let (mut s, g, file) = group_writer(CgroupVersion::V2, true, None);
    write_pages(&mut s, file, 0, 120);
    let [_, md] = s.memcg_dirty_domain(g, true);
    assert_eq!((md.avail, md.thresh, md.bg_thresh), (992, 198, 99));
    assert_eq!((s.nr_dirty, s.nr_writeback), (120, 0));
    let now = s.clock;
    s.flusher_periodic(now);
    assert_eq!((s.nr_dirty, s.nr_writeback), (0, 120));
    s.check_invariants().unwrap();
}

#[test]
fn under_the_lru_policy_no_group_has_a_domain() {
    // Every folio is on the root's list, so g's file pages would be 0 and
    // its avail its headroom alone (808 once 129 pages are charged: thresh
    // 161, bg_thresh 80, freerun ceiling 120, so the 129th write would
    // start its writeback): 151 writes write nothing.
    let (mut s, g, file) = group_writer_on(
        MachineConfig {
            cgroup_version: CgroupVersion::V2,
            policy: PolicyConfig {
                name: PolicyName::Lru,
                ..Default::default()
            },
            ..Default::default()
        },
        None,
        1000,
    );
    assert!(!s.has_memcg_domain(g));
    write_pages(&mut s, file, 0, 151);
    assert_eq!((s.nr_dirty, s.nr_writeback), (151, 0));
}

#[test]
fn v1_the_root_group_and_a_filesystem_without_cgwb_keep_the_global_domain_alone() {
    // 151 writes: no group domain, so nothing is written below
    // the global background threshold (about 400 pages here).
    for (version, cgwb) in [
        (CgroupVersion::V1, true),
        (CgroupVersion::V2, false),
        (CgroupVersion::V1, false),
    ] {
        let (mut s, g, file) = group_writer(version, cgwb, None);
        write_pages(&mut s, file, 0, 151);
        assert_eq!((s.nr_dirty, s.nr_writeback), (151, 0), "{version:?} {cgwb}");
        assert_eq!(s.memcgs[g as usize].nr_file_dirty, 151);
        s.check_invariants().unwrap();
    }
    // A task of the root group under v2.
    let (mut s, g, _) = group_writer(CgroupVersion::V2, true, None);
    assert!(!s.has_memcg_domain(ROOT) && s.has_memcg_domain(g));
    let t = s.add_task("root-task");
    let file = s.add_file("r", 1024).unwrap();
    s.open(file, t).unwrap();
    write_pages(&mut s, file, 0, 151);
    assert_eq!((s.nr_dirty, s.nr_writeback), (151, 0));
}
