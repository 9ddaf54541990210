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
    let mut fs = DeviceConfig::of(DeviceKind::Ssd);
    fs.write_latency_us = Some(1e7);
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(4096),
        cgroup_version: version,
        cgroup_writeback: cgwb,
        fs,
        ..Default::default()
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
    s.set_memcg_max(g, 1000).unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    let file = s.add_file("f", 1024).unwrap();
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
fn a_groups_background_writeback_starts_at_its_freerun_ceiling_and_stops_at_its_bg_thresh() {
    // After n writes the group holds n dirty pages and, with the stock's
    // 64-page batches, a usage of 64 * ceil(n / 64): from n = 129 on 192,
    // headroom 808, avail n + 808. n = 141: avail 949, thresh 819 * 949 /
    // 4096 = 189, bg_thresh 409 * 949 / 4096 = 94, freerun ceiling 141:
    // nothing written (the global background threshold is about 400).
    // n = 142: avail 950, thresh 189, bg_thresh 94, ceiling 141 < 142: the
    // group's wb writes its oldest dirty pages, 0..=47, until 94 (its
    // bg_thresh, writeback not counted; its avail is the same 950 without
    // the writeback) are left. n = 143: avail 951, thresh 190, bg_thresh 94,
    // ceiling 142 < 95 + 48: page 48 is written. n = 144: avail 952, thresh
    // 190, bg_thresh 95: out of freerun (96 + 49 > 142) but 95 dirty pages
    // are not over 95: nothing written.
    let (mut s, g, file) = group_writer(CgroupVersion::V2, true, None);
    write_pages(&mut s, file, 0, 141);
    assert_eq!((s.nr_dirty, s.nr_writeback), (141, 0));
    let [_, md] = s.memcg_dirty_domain(g, true);
    assert_eq!((md.avail, md.thresh, md.bg_thresh), (949, 189, 94));
    write_pages(&mut s, file, 141, 142);
    assert_eq!((s.nr_dirty, s.nr_writeback), (94, 48));
    let grp = &s.memcgs[g as usize];
    assert_eq!((grp.nr_file_dirty, grp.nr_writeback), (94, 48));
    let under_wb = |s: &Sim, i: u32| s.folios[file_folio(s, file, i)].test(flags::WRITEBACK);
    assert!((0..48).all(|i| under_wb(&s, i)));
    assert!((48..142).all(|i| !under_wb(&s, i)));
    write_pages(&mut s, file, 142, 143);
    assert_eq!((s.nr_dirty, s.nr_writeback), (94, 49));
    assert!(under_wb(&s, 48) && !under_wb(&s, 49));
    write_pages(&mut s, file, 143, 144);
    let [_, md] = s.memcg_dirty_domain(g, false);
    assert_eq!((md.avail, md.dirty, md.bg_thresh), (952, 95, 95));
    assert_eq!((s.nr_dirty, s.nr_writeback), (95, 49));
    s.check_invariants().unwrap();
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
    let (mut s, _, _) = group_writer(CgroupVersion::V2, true, None);
    let t = s.add_task("root-task");
    let file = s.add_file("r", 1024).unwrap();
    s.open(file, t).unwrap();
    write_pages(&mut s, file, 0, 151);
    assert_eq!((s.nr_dirty, s.nr_writeback), (151, 0));
}
