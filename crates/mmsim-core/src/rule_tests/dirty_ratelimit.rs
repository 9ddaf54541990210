//! Rule tests of `balance_dirty_pages_ratelimited_flags()`'s ratelimit
//! (`crate::page_writeback_ratelimit`, `policy.bdp_ratelimit`, v6.12):
//! the page at which a writer's check first starts background writeback,
//! with and without the throttle, the per-CPU `bdp_ratelimits` and the
//! exited tasks' `dirty_throttle_leaks`.
//!
//! The 4096-page machine (`dirty_balance::slow_write_machine`, writes
//! taking 10 s: none completes in a test): dirtyable memory 3905, `thresh`
//! 780, `bg_thresh` 389, freerun ceiling 584; `ratelimit_pages` 780 / (1 ×
//! 32) = 24 with one CPU.
//!
//! A buffered write checks at the top of every page (v6.12
//! `generic_perform_write()`: each page is a chunk of the order-0 page
//! cache), before it dirties the page: the check in the write of page `i`
//! sees the `i` pages dirtied before it.

use super::dirty_throttle::{group_writer_with, throttle_machine, write, write_slept, writer_with};
use super::*;

/// The 4096-page machine, 10 s writes, `dirty_throttle` as given, the
/// ratelimit on or off, `cpus` CPUs; one task with a 1024-page file open.
fn writer(throttle: bool, ratelimit: bool, cpus: u32) -> (Sim, u32) {
    let mut s = throttle_machine(throttle, 1e7, |c| {
        c.policy.bdp_ratelimit = ratelimit;
        c.cpus = cpus;
    });
    let t = s.add_task("t");
    let file = s.add_file("f", 1024).unwrap();
    s.open(file, t).unwrap();
    (s, file)
}

/// Writes pages of `file` from 0 until one starts writeback: (pages
/// written, dirty pages, pages under writeback).
fn write_until_writeback(s: &mut Sim, file: u32) -> (u32, u64, u64) {
    let mut i = 0;
    while s.nr_writeback == 0 {
        write(s, file, i);
        i += 1;
    }
    (i, s.nr_dirty, s.nr_writeback)
}

/// Without the throttle (the global domain's background writeback of
/// `crate::writeback`): the task balances only at its ratelimited checks.
/// After its 24th page the CPU's `bdp_ratelimits` is at `ratelimit_pages`
/// (before its own `nr_dirtied_pause`, 32): the write of page 24 checks
/// first, then dirties its page (`nr_dirtied` 1). Each check is in
/// freerun and sets `nr_dirtied_pause` to `dirty_poll_interval()`,
/// `1 << (ilog2(780 − dirty) >> 1)`: 16 for every gap from 256 to 1023, so
/// the checks come in the writes of pages 24, 40, …, 24 + 16k, each seeing
/// 24 + 16k dirty pages. The first past `bg_thresh` (389) is in the write
/// of page 392 (the 393rd), the 24th check: background writeback writes
/// the 3 oldest pages (389 dirty), then the page is dirtied (390). Without
/// the ratelimit the 390th page started it, after its dirtying, and wrote
/// 1.
#[test]
fn without_the_throttle_background_writeback_starts_at_the_first_check_past_bg_thresh() {
    let (mut s, file) = writer(false, true, 1);
    assert_eq!(s.bdp_ratelimit_state(), (24, 0, 0, 0));
    for i in 0..24 {
        write(&mut s, file, i);
    }
    assert_eq!(s.bdp_ratelimit_state(), (24, 24, 0, 0));
    assert_eq!(s.bdp_task(0).0, 24);
    write(&mut s, file, 24);
    // The per-CPU count forced the check: both counts to 0, then page 24
    // counted in both; the next check 16 pages on (gap 780 − 24 = 756).
    assert_eq!(s.bdp_ratelimit_state(), (24, 1, 0, 1));
    assert_eq!((s.bdp_task(0).0, s.bdp_task(0).1), (1, 16));
    assert_eq!(write_until_writeback(&mut s, file), (393, 390, 3));
    assert_eq!(s.bdp_ratelimit_state().3, 24);
    // The next check is 16 pages on (gap 780 − 392 = 388), in the write of
    // page 408: no writeback until then, the dirty pages over `bg_thresh`
    // meanwhile.
    for i in 393..408 {
        write(&mut s, file, i);
    }
    assert_eq!((s.nr_dirty, s.nr_writeback), (405, 3));
    write(&mut s, file, 408);
    assert_eq!((s.nr_dirty, s.nr_writeback), (390, 19));

    let (mut s, file) = writer(false, false, 1);
    assert_eq!(write_until_writeback(&mut s, file), (390, 389, 1));
}

/// With two CPUs each task counts its own `bdp_ratelimits` (a CPU of its
/// own), against `ratelimit_pages` 16: the first check is at
/// `min(nr_dirtied_pause, ratelimit_pages)` = 16 pages, in the write of
/// page 16; then every 16 (the poll interval): the writes of pages
/// 16, 32, …, 16k. The first past 389 sees 400 dirty pages (the write of
/// page 400), whose background writeback writes 11.
#[test]
fn with_two_cpus_the_first_check_is_at_the_tasks_ratelimit_pages() {
    let (mut s, file) = writer(false, true, 2);
    assert_eq!(
        s.bdp_ratelimit_state().0,
        16,
        "780 / (2 × 32) = 12, at least 16"
    );
    for i in 0..16 {
        write(&mut s, file, i);
    }
    assert_eq!(s.bdp_ratelimit_state().3, 0);
    write(&mut s, file, 16);
    assert_eq!(s.bdp_ratelimit_state().3, 1);
    assert_eq!((s.bdp_task(0).0, s.bdp_task(0).1), (1, 16));
    assert_eq!(write_until_writeback(&mut s, file), (401, 390, 11));
}

/// With the throttle, a writer starts its wb's background writeback at its
/// ratelimited check (v6.12 `balance_dirty_pages()`, reached only through
/// the ratelimit), not at every dirtying: the 392nd page, as above. The
/// per-wb run (`crate::wb_over_bg_thresh`) writes a whole chunk (1024
/// pages) before it tests again, so all 392 pages, before the write
/// dirties page 392. Without the ratelimit it started at the 390th and
/// wrote 390.
#[test]
fn with_the_throttle_the_wbs_background_writeback_starts_at_the_check() {
    let (mut s, file) = writer(true, true, 1);
    assert_eq!(write_until_writeback(&mut s, file), (393, 1, 392));
    // The report's dirty pages over `bg_thresh` (389) at that start: the
    // check in the write of page 392 saw 392.
    let over = |s: &Sim| {
        s.dirty_throttle_report()
            .unwrap()
            .nr_dirty_over_bg_thresh_at_start
    };
    assert_eq!(over(&s), 3);
    let (mut s, file) = writer(true, false, 1);
    assert_eq!(write_until_writeback(&mut s, file), (390, 0, 390));
    // Without the ratelimit, the 390th dirtying: 1 over.
    assert_eq!(over(&s), 1);
}

/// `dirty_throttle_leaks` (v6.12 kernel/exit.c `do_exit()`): task a dirties
/// 10 pages and exits under its ratelimit; its `nr_dirtied` is left on the
/// CPU, and task b's first check (the top of its first write) takes it up
/// (`min(10, 32 − 0)`): b's `nr_dirtied` is 11 after one page, and b checks
/// in the write of its page 22, not 32. An 8192-page machine, so that
/// `ratelimit_pages` (49) is over 32 and `bdp_ratelimits` (10 + 22) forces
/// no check first.
#[test]
fn an_exited_tasks_unbalanced_pages_go_to_the_next_writer() {
    let mut s = throttle_machine(false, 1e7, |c| {
        c.policy.bdp_ratelimit = true;
        c.memory = Size::from_pages(8192);
    });
    let a = s.add_task("a");
    let fa = s.add_file("f", 1024).unwrap();
    s.open(fa, a).unwrap();
    assert_eq!(s.bdp_ratelimit_state().0, 49);
    let b = s.add_task("b");
    let fb = s.add_file("fb", 64).unwrap();
    s.open(fb, b).unwrap();
    for i in 0..10 {
        write(&mut s, fa, i);
    }
    assert_eq!(s.bdp_task(0).0, 10);
    s.exit_task(0).unwrap();
    assert_eq!(s.bdp_ratelimit_state().2, 10);
    write(&mut s, fb, 0);
    assert_eq!((s.bdp_task(b).0, s.bdp_ratelimit_state().2), (11, 0));
    for i in 1..22 {
        write(&mut s, fb, i);
    }
    assert_eq!((s.bdp_task(b).0, s.bdp_ratelimit_state().3), (32, 0));
    write(&mut s, fb, 22);
    assert_eq!((s.bdp_task(b).0, s.bdp_ratelimit_state().3), (1, 1));
}

/// With the throttle and the ratelimit, the writer (10 ms writes) reaches
/// `balance_dirty_pages()` only at its ratelimited checks: 56 checks in
/// 900 pages, 4 of them pauses (the writes of pages 640, 688, 736 and
/// 760, 2, 2, 3 and 4 ms), where without the ratelimit the pause's own
/// ratelimit let through 1,238 pauses and 10.011 s
/// (`dirty_throttle::a_writer_faster_than_the_device_sleeps_the_computed_pause`).
#[test]
fn with_the_throttle_the_pauses_come_at_the_ratelimited_checks() {
    let (mut s, file) = writer_with(true, 10.0, |c| c.policy.bdp_ratelimit = true);
    let mut pauses = Vec::new();
    for i in 0..900 {
        let slept = write_slept(&mut s, file, i);
        if slept > 0 {
            pauses.push((i, slept));
        }
    }
    assert_eq!(
        pauses,
        [
            (640, 2_000_000),
            (688, 2_000_000),
            (736, 3_000_000),
            (760, 4_000_000)
        ]
    );
    let r = s.dirty_throttle_report().unwrap();
    assert_eq!(
        (r.balance_dirty_pages_pauses, r.balance_dirty_pages_pause_ns),
        (4, 11_000_000)
    );
    assert_eq!(s.bdp_ratelimit_state().3, 56);
    // The report's calls are those checks.
    assert_eq!(r.balance_dirty_pages_calls, 56);
}

/// Without the throttle, a v2 group's writer (`memory.max` 1000 pages)
/// leaves its freerun check with the smaller poll interval of the two
/// domains: at the first check (the write of page 24, 24 dirty pages) the
/// global gap 780 − 24 gives 16, the group's (thresh 193 at 32 pages
/// charged, `dirty_throttle::a_groups_small_dirty_domain_pauses_its_writer_where_the_global_one_would_not`)
/// 1 << (ilog2(193 − 24) >> 1) = 8: `nr_dirtied_pause` 8, and the checks
/// come every 8 pages.
#[test]
fn a_groups_writer_checks_at_the_smaller_poll_interval_of_the_two_domains() {
    let (mut s, _, file) = group_writer_with(false, |c| c.policy.bdp_ratelimit = true);
    // The writer: the task `group_writer_with` added last.
    let t = (s.tasks.len() - 1) as u32;
    let mut checks = Vec::new();
    for i in 0..50 {
        let c0 = s.bdp_ratelimit_state().3;
        write(&mut s, file, i);
        if s.bdp_ratelimit_state().3 > c0 {
            checks.push((i, s.bdp_task(t).0, s.bdp_task(t).1));
        }
    }
    assert_eq!(checks, [(24, 1, 8), (32, 1, 8), (40, 1, 8), (48, 1, 8)]);
}

/// An OOM victim's unbalanced `nr_dirtied` goes to `dirty_throttle_leaks`
/// (its `do_exit()`, v6.12 kernel/exit.c): the victim (100 anonymous
/// pages, the larger) wrote 10 pages under its ratelimit.
#[test]
fn an_oom_victims_unbalanced_pages_are_left_for_the_next_writer() {
    let mut s = throttle_machine(false, 1e7, |c| c.policy.bdp_ratelimit = true);
    let v = s.add_task("v");
    let vma = s.mmap_anon(v, 100).unwrap();
    touch(&mut s, vma, 100);
    let file = s.add_file("f", 64).unwrap();
    s.open(file, v).unwrap();
    for i in 0..10 {
        write(&mut s, file, i);
    }
    let o = s.add_task("o");
    let vo = s.mmap_anon(o, 20).unwrap();
    touch(&mut s, vo, 20);
    assert_eq!((s.bdp_task(v).0, s.bdp_ratelimit_state().2), (10, 0));
    assert!(s.out_of_memory(None));
    assert!(s.tasks[v as usize].dead);
    assert_eq!((s.bdp_task(v).0, s.bdp_ratelimit_state().2), (0, 10));
}

/// The `dirty_exceeded` clamp (v6.12 `balance_dirty_pages_ratelimited_flags()`,
/// mm/page-writeback.c: `ratelimit = min(ratelimit, 32 >> (PAGE_SHIFT -
/// 10))`, 8 pages with 4 KiB pages, while `wb->dirty_exceeded`). The
/// writer of `with_the_throttle_the_pauses_come_at_the_ratelimited_checks`
/// (10 ms writes), 1,960 pages: the throttle's loop sets the wb's
/// `dirty_exceeded` first at its pause in the write of page 1944 (the wb
/// over its `wb_thresh` and the domain over `thresh`), where `wb_min_pause()` gives
/// `nr_dirtied_pause` 0, so page 1945 checks again: in freerun (the writes
/// completed during the pause), which sets `nr_dirtied_pause` to the poll
/// interval, 16, and leaves `dirty_exceeded` set (v6.12 sets it only
/// after the freerun exit; nothing clears it there). So the next checks
/// come every 8 pages, at 1953 and 1961 and on, not at 1961 and 1977 as
/// the task's own `nr_dirtied_pause` of 16 would have them.
#[test]
fn while_the_wbs_dirty_exceeded_is_set_a_writer_checks_every_8_pages() {
    assert_eq!(crate::page_writeback_ratelimit::DIRTY_EXCEEDED_RATELIMIT, 8);
    let (mut s, file) = writer_with(true, 10.0, |c| c.policy.bdp_ratelimit = true);
    let mut exceeded_at = None;
    let mut checks = Vec::new();
    for i in 0..1990 {
        let c0 = s.bdp_ratelimit_state().3;
        write(&mut s, file, i);
        if exceeded_at.is_none() && s.wb_dirty_exceeded(0) {
            exceeded_at = Some(i);
        }
        if i >= 1944 && s.bdp_ratelimit_state().3 > c0 {
            checks.push((i, s.bdp_task(0).1));
        }
    }
    assert_eq!(exceeded_at, Some(1944));
    assert!(s.wb_dirty_exceeded(0));
    assert_eq!(
        checks,
        [
            (1944, 0),
            (1945, 16),
            (1953, 16),
            (1961, 16),
            (1969, 16),
            (1977, 16),
            (1985, 16)
        ]
    );
}

/// The same clamp on the default path (`policy.bdp_ratelimit` false: the
/// task's own `nr_dirtied_pause` gates `balance_dirty_pages()`, clamped to
/// 8 pages while the wb's `dirty_exceeded` is set, as v6.12
/// `balance_dirty_pages_ratelimited_flags()` clamps its ratelimit; the
/// copy of the clamp in `Sim::balance_dirty_pages_pause`). The writer of
/// `dirty_throttle` (10 ms writes), 2,040 pages: its call in the write of
/// page 1890 pauses (3 ms; 25 ms slept in all) and sets `nr_dirtied_pause`
/// 75, without `dirty_exceeded`; the next, 75 pages on in the write of
/// page 1965, pauses 8 ms, sets the wb's `dirty_exceeded` for the first
/// time and leaves `nr_dirtied_pause` 16. From there the calls come every
/// 8 pages (1973, 1981, …, 2037, none pausing, `dirty_exceeded` kept), not
/// every 16 as the task's `nr_dirtied_pause` would have them.
#[test]
fn without_the_ratelimit_dirty_exceeded_still_clamps_the_checks_to_8_pages() {
    let (mut s, file) = writer_with(true, 10.0, |_| {});
    let calls = |s: &Sim| s.dirty_throttle_report().unwrap().balance_dirty_pages_calls;
    let mut exceeded_at = None;
    let mut checks = Vec::new();
    for i in 0..2040 {
        let c0 = calls(&s);
        write(&mut s, file, i);
        if exceeded_at.is_none() && s.wb_dirty_exceeded(0) {
            exceeded_at = Some(i);
        }
        if i >= 1890 && calls(&s) > c0 {
            let (_, pause, _) = s.bdp_task(0);
            checks.push((
                i,
                pause,
                s.wb_dirty_exceeded(0),
                s.bdp_pause_ns() / 1_000_000,
            ));
        }
    }
    assert_eq!(exceeded_at, Some(1965));
    let mut expected = vec![(1890, 75, false, 25), (1965, 16, true, 33)];
    expected.extend((1973..2040).step_by(8).map(|i| (i, 16, true, 33)));
    assert_eq!(checks, expected);
}
