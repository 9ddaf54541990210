//! Rule tests of `balance_dirty_pages_ratelimited_flags()`'s ratelimit
//! (`crate::page_writeback_ratelimit`, `policy.dirty_ratelimit`, v6.12):
//! the page at which a writer's check first starts background writeback,
//! with and without the throttle, the per-CPU `bdp_ratelimits` and the
//! exited tasks' `dirty_throttle_leaks`.
//!
//! The 4096-page machine (`dirty_balance::slow_write_machine`, writes
//! taking 10 s: none completes in a test): dirtyable memory 3905, `thresh`
//! 780, `bg_thresh` 389, freerun ceiling 584; `ratelimit_pages` 780 / (1 ×
//! 32) = 24 with one CPU.

use super::dirty_throttle::{throttle_machine, write};
use super::*;

/// The 4096-page machine, 10 s writes, `dirty_throttle` as given, the
/// ratelimit on or off, `cpus` CPUs; one task with a 1024-page file open.
fn writer(throttle: bool, ratelimit: bool, cpus: u32) -> (Sim, u32) {
    let mut s = throttle_machine(throttle, 1e7, |c| {
        c.policy.dirty_ratelimit = ratelimit;
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
/// Its 24th page reaches `ratelimit_pages` on the CPU's `bdp_ratelimits`
/// (before its own `nr_dirtied_pause`, 32): the first check. Each check
/// is in freerun and sets `nr_dirtied_pause` to `dirty_poll_interval()`,
/// `1 << (ilog2(780 − dirty) >> 1)`: 16 for every gap from 256 to 1023, so
/// the checks come at pages 24, 40, …, 24 + 16k. The first past
/// `bg_thresh` (389) is the 392nd page, the 24th check: background
/// writeback writes the 3 oldest pages (389 dirty). Without the ratelimit
/// the 390th page started it and wrote 1.
#[test]
fn without_the_throttle_background_writeback_starts_at_the_first_check_past_bg_thresh() {
    let (mut s, file) = writer(false, true, 1);
    assert_eq!(s.bdp_ratelimit_state(), (24, 0, 0, 0));
    for i in 0..23 {
        write(&mut s, file, i);
    }
    assert_eq!(s.bdp_ratelimit_state(), (24, 23, 0, 0));
    assert_eq!(s.bdp_task(0).0, 23);
    write(&mut s, file, 23);
    // The per-CPU count forced the check: both counts back to 0, the next
    // check 16 pages on (gap 780 − 24 = 756).
    assert_eq!(s.bdp_ratelimit_state(), (24, 0, 0, 1));
    assert_eq!((s.bdp_task(0).0, s.bdp_task(0).1), (0, 16));
    assert_eq!(write_until_writeback(&mut s, file), (392, 389, 3));
    assert_eq!(s.bdp_ratelimit_state().3, 24);
    // The next check is 16 pages on (gap 780 − 392 = 388): no writeback
    // until then, the dirty pages over `bg_thresh` meanwhile.
    for i in 392..407 {
        write(&mut s, file, i);
    }
    assert_eq!((s.nr_dirty, s.nr_writeback), (404, 3));
    write(&mut s, file, 407);
    assert_eq!((s.nr_dirty, s.nr_writeback), (389, 19));

    let (mut s, file) = writer(false, false, 1);
    assert_eq!(write_until_writeback(&mut s, file), (390, 389, 1));
}

/// With more than one CPU the per-CPU count is not modelled (mmsim's tasks
/// have no CPU), so the task's own `nr_dirtied_pause` (32 at fork) gives
/// the first check: pages 32, 48, …, 32 + 16k; the first past 389 is the
/// 400th, whose background writeback writes 11 pages.
#[test]
fn with_two_cpus_the_first_check_is_the_tasks_32nd_page() {
    let (mut s, file) = writer(false, true, 2);
    assert_eq!(
        s.bdp_ratelimit_state().0,
        16,
        "780 / (2 × 32) = 12, at least 16"
    );
    for i in 0..31 {
        write(&mut s, file, i);
    }
    assert_eq!(s.bdp_ratelimit_state().3, 0);
    write(&mut s, file, 31);
    assert_eq!(s.bdp_ratelimit_state().3, 1);
    assert_eq!(write_until_writeback(&mut s, file), (400, 389, 11));
}

/// With the throttle, a writer starts its wb's background writeback at its
/// ratelimited check (v6.12 `balance_dirty_pages()`, reached only through
/// the ratelimit), not at every dirtying: the 392nd page, as above. The
/// per-wb run (`crate::wb_over_bg_thresh`) writes a whole chunk (1024
/// pages) before it tests again, so all 392 pages. Without the ratelimit
/// it started at the 390th and wrote 390.
#[test]
fn with_the_throttle_the_wbs_background_writeback_starts_at_the_check() {
    let (mut s, file) = writer(true, true, 1);
    assert_eq!(write_until_writeback(&mut s, file), (392, 0, 392));
    let (mut s, file) = writer(true, false, 1);
    assert_eq!(write_until_writeback(&mut s, file), (390, 0, 390));
}

/// `dirty_throttle_leaks` (v6.12 kernel/exit.c `do_exit()`): task a dirties
/// 10 pages and exits under its ratelimit; its `nr_dirtied` is left on the
/// CPU, and task b's first dirtying takes it up (`min(10, 32 − 1)`): b's
/// `nr_dirtied` is 11 after one page, and b checks at its 22nd page, not
/// its 32nd. Two CPUs, so that `bdp_ratelimits` forces no check.
#[test]
fn an_exited_tasks_unbalanced_pages_go_to_the_next_writer() {
    let (mut s, fa) = writer(false, true, 2);
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
    for i in 1..21 {
        write(&mut s, fb, i);
    }
    assert_eq!((s.bdp_task(b).0, s.bdp_ratelimit_state().3), (31, 0));
    write(&mut s, fb, 21);
    assert_eq!((s.bdp_task(b).0, s.bdp_ratelimit_state().3), (0, 1));
}
