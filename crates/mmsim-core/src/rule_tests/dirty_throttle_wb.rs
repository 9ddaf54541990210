//! Rule tests of `balance_dirty_pages()`'s per-wb values and per-task
//! writer state (`crate::page_writeback_throttle`,
//! `crate::page_writeback_domain`, v6.12, `policy.dirty_throttle`).

use super::dirty_throttle::{throttle_machine, write, write_slept};
use super::*;
use crate::page_writeback_throttle::Dtc;

/// Writes `pages` pages of `file` from `from`, starts their writeback
/// (`sync_file_range`), and idles one second (the writes take 100 ms).
pub(super) fn write_and_complete(s: &mut Sim, file: u32, from: u32, pages: u16) {
    for i in from..from + u32::from(pages) {
        write(s, file, i);
    }
    s.step(&Event::FileSync {
        file,
        index: from,
        pages,
        wait: false,
    });
    s.idle(1_000_000_000);
    s.step(&Event::Think { ns: 1 });
}

/// A 4096-page cgroup v2 machine, the throttle on, file writes taking 100
/// ms, swap on an ssd whose writes take 10 s; a root task with a 1024-page
/// file, and a group `g` (`memory.max` 300 pages while it touches its
/// anonymous pages) whose task has a 1024-page file and 400 anonymous
/// pages.
fn two_wbs() -> (Sim, crate::memcg::MemcgId, [u32; 2], u32) {
    let mut s = throttle_machine(true, 1e5, |c| {
        let mut swap = DeviceConfig::of(DeviceKind::Ssd);
        swap.write_latency_us = Some(1e7);
        swap.size = Some(Size::from_pages(4096));
        c.swap = swap;
        c.cgroup_version = CgroupVersion::V2;
    });
    let g = s.add_memcg(crate::memcg::ROOT, "g").unwrap();
    let (r, t) = (s.add_task("r"), s.add_task("t"));
    s.attach_task(t, g).unwrap();
    let (fr, fg) = (
        s.add_file("fr", 1024).unwrap(),
        s.add_file("fg", 1024).unwrap(),
    );
    s.open(fr, r).unwrap();
    s.open(fg, t).unwrap();
    let v = s.mmap_anon(t, 400).unwrap();
    (s, g, [fr, fg], v)
}

/// v6.12 `wb_dirty_limits()`: each wb's `wb_thresh` is its share of the
/// domain's completions (`__wb_calc_thresh()`), its `wb_dirty` its own
/// file pages dirty and under writeback. The group's anonymous pages go to
/// swap under its `memory.max` (10 s writes: 34 still in flight at the
/// end); the root wb then completes 64 writes and the group's wb 32, and
/// the group dirties 100 more pages. In the global domain (`thresh` 726;
/// count 1 + 64 + 32 = 97) the group's wb has 726 × 32 / 97 = 239 and the
/// root's 726 × 64 / 97 = 479; in the group's memcg domain (`thresh` 726;
/// count 1 + 32) 726 × 32 / 33 = 704. Both domains' `dirty` count the 34
/// pages of swap writeback (`mem_cgroup_wb_stats()`: `NR_FILE_DIRTY` +
/// `NR_WRITEBACK`), the wb's `wb_dirty` only its 100 dirty file pages. A
/// period (3 s, `writeout_period`) later the counts are halved: 97 → 48
/// with the group's 32 → 16 and the root's 64 → 32 (242 and 484); in the
/// memcg domain 33 → 16 with the wb's 32 → 16, whose share is then whole
/// (726). (mmsim had `wb_thresh` = `thresh` in the global domain and
/// `wb_dirty` = the domain's `dirty`, 134, in both.)
#[test]
fn each_wb_has_its_share_of_the_domains_completions_and_its_own_dirty_pages() {
    let (mut s, g, [fr, fg], v) = two_wbs();
    s.set_memcg_max(g, 300).unwrap();
    for index in 0..400 {
        s.step(&Event::Access {
            vma: v,
            index,
            write: true,
        });
    }
    s.set_memcg_max(g, u64::MAX).unwrap();
    write_and_complete(&mut s, fr, 0, 64);
    write_and_complete(&mut s, fg, 0, 32);
    for i in 32..132 {
        write(&mut s, fg, i);
    }
    let w = g as usize;
    assert_eq!(
        (s.memcgs[w].nr_file_dirty, s.memcgs[w].nr_writeback),
        (100, 34),
        "100 dirty file pages, 34 anonymous under writeback"
    );
    let dtc = |limit, wb_thresh, wb_dirty| Dtc {
        thresh: 726,
        wb_thresh,
        bg_thresh: 362,
        dirty: 134,
        limit,
        wb_dirty,
    };
    let (gd, md) = s.bdp_domains(w);
    assert_eq!(gd, dtc(780, 239, 100));
    assert_eq!(md, Some(dtc(726, 704, 100)));
    let (root, _) = s.bdp_domains(0);
    assert_eq!(root, dtc(780, 479, 0));
    s.idle(3_000_000_000);
    s.step(&Event::Think { ns: 1 });
    let (gd, md) = s.bdp_domains(w);
    assert_eq!((gd.wb_thresh, gd.wb_dirty), (242, 100));
    assert_eq!((md.unwrap().wb_thresh, md.unwrap().wb_dirty), (726, 100));
    assert_eq!(s.bdp_domains(0).0.wb_thresh, 484);
}

/// Two tasks of the root group write a page each in turn, each its own
/// 1024-page file, on the 4096-page machine whose writes take 10 s.
/// `current->nr_dirtied`, `nr_dirtied_pause` and `dirty_paused_when` are
/// each task's (v6.12 `balance_dirty_pages_ratelimited_flags()`,
/// `balance_dirty_pages()`; kernel/fork.c `copy_process()` starts them at
/// 0, 32 and 0): after 62 pages each task has dirtied 31, under its 32;
/// the 63rd is task a's 32nd, its check finds the global domain in
/// freerun (63 dirty) and sets its next check `dirty_poll_interval(63,
/// 780)` = 1 << (ilog2(717) >> 1) = 16 pages later, at jiffy 0; b's state
/// is untouched until its own 32nd page, the 64th. (One state shared by
/// both, as mmsim had it, checks at the 32nd page whoever wrote it.) Past
/// the freerun ceiling each task's pause is computed from its own pages
/// since its own last pause: a sleeps 2 ms at the 703rd page, b 4 ms at the
/// 768th and, at the limit, 10.002 s at the 784th (until the first writes
/// complete), where one shared state made the pauses of writers sharing
/// the pages.
#[test]
fn each_writer_has_its_own_ratelimit_and_pause_state() {
    let mut s = throttle_machine(true, 1e7, |_| {});
    let mut files = [0; 2];
    for (i, f) in files.iter_mut().enumerate() {
        let t = s.add_task(if i == 0 { "a" } else { "b" });
        *f = s.add_file("f", 1024).unwrap();
        s.open(*f, t).unwrap();
    }
    let mut pauses = Vec::new();
    for i in 0..800u32 {
        let task = i % 2;
        let slept = write_slept(&mut s, files[task as usize], i / 2);
        if slept > 0 {
            pauses.push((i + 1, task, slept / 1_000_000));
        }
        match i + 1 {
            62 => assert_eq!([s.bdp_task(0), s.bdp_task(1)], [(31, 32, None); 2]),
            63 => assert_eq!(
                [s.bdp_task(0), s.bdp_task(1)],
                [(0, 16, Some(0)), (31, 32, None)]
            ),
            64 => assert_eq!([s.bdp_task(0), s.bdp_task(1)], [(0, 16, Some(0)); 2]),
            _ => {}
        }
    }
    assert_eq!(pauses, [(703, 0, 2), (768, 1, 4), (784, 1, 10_002)]);
}

/// `current` is the task whose VMA a discard or an exit zaps (v6.12
/// `madvise_dontneed_single_vma()` runs in the caller, `exit_mmap()` in
/// the exiting task): the folios its dirty PTEs dirty count in that task's
/// `nr_dirtied`, not in the task that wrote last (as mmsim had it: only a
/// write or fault set it).
#[test]
fn a_discard_or_an_exit_runs_as_the_vmas_task() {
    use crate::page_writeback_throttle::KTHREAD;
    let (mut s, _, [fr, _], v) = two_wbs();
    let current = |s: &mut Sim| {
        let t = s.bdp_set_current(KTHREAD);
        s.bdp_set_current(t);
        t
    };
    s.step(&Event::Access {
        vma: v,
        index: 0,
        write: true,
    });
    write(&mut s, fr, 0);
    assert_eq!(current(&mut s), 0, "root task r wrote last");
    s.step(&Event::Discard {
        vma: v,
        index: 0,
        pages: 1,
    });
    assert_eq!(current(&mut s), 1, "g's task t discarded");
    write(&mut s, fr, 1);
    s.exit_task(1).unwrap();
    assert_eq!(current(&mut s), 1, "t exited");
}

/// `current` after an access that hit: a hit in the MMU (a load, or a
/// store through a dirty PTE) runs no kernel code, so only the faults and
/// file calls that can dirty, balance or reclaim make their task `current`
/// (`Sim::handle_mm_fault`, `Sim::set_fd_memcg`); a hit leaves it as it
/// was. Tasks a and b each map a file shared. b read-faults its page 0
/// (clean), a write-faults its page 0 (a's 1st dirtied page, a is
/// current), b's load of its page 0 hits (a stays current: nothing reads
/// it before the next fault), then b's store to that clean page is a
/// write-protect fault (`wp_page_shared()` → `folio_mark_dirty()` →
/// `folio_account_dirtied()`): b becomes current and the page counts in
/// b's `nr_dirtied`, not a's. Then a's load hits and b write-faults a
/// new page: b's 2nd. (Without the fault's store of `current`, both of b's
/// dirtyings counted for task 0, a.)
#[test]
fn a_write_fault_after_another_tasks_hit_runs_as_the_faulting_task() {
    use crate::page_writeback_throttle::KTHREAD;
    let (mut s, _, _, _) = two_wbs();
    let current = |s: &mut Sim| {
        let t = s.bdp_set_current(KTHREAD);
        s.bdp_set_current(t);
        t
    };
    let (a, b) = (0, 1);
    let (fa, fb) = (s.add_file("a", 16).unwrap(), s.add_file("b", 16).unwrap());
    let (va, vb) = (
        s.mmap_file(a, fa, 0, 16, false).unwrap(),
        s.mmap_file(b, fb, 0, 16, false).unwrap(),
    );
    let touch = |s: &mut Sim, vma, index, write| s.step(&Event::Access { vma, index, write });
    touch(&mut s, vb, 0, false);
    assert_eq!(current(&mut s), b);
    touch(&mut s, va, 0, true);
    assert_eq!((current(&mut s), s.bdp_task(a).0), (a, 1));
    let hits = s.acc.hits;
    touch(&mut s, vb, 0, false);
    assert_eq!(s.acc.hits, hits + 1, "b's load hit");
    assert_eq!(current(&mut s), a, "a hit runs no kernel code");
    touch(&mut s, vb, 0, true);
    assert_eq!(
        s.acc.hits,
        hits + 2,
        "the write-protect fault counts as a hit"
    );
    assert_eq!(current(&mut s), b);
    assert_eq!((s.bdp_task(a).0, s.bdp_task(b).0), (1, 1));
    touch(&mut s, va, 0, false);
    touch(&mut s, vb, 1, true);
    assert_eq!(current(&mut s), b);
    assert_eq!((s.bdp_task(a).0, s.bdp_task(b).0), (1, 2));
}
