//! Rule tests of the writer's pause in `balance_dirty_pages()`
//! (`crate::page_writeback_throttle`, v6.12, `policy.dirty_throttle`).

use super::*;
use crate::page_writeback_throttle::*;

/// A 4096-page machine whose file system takes `write_us` a write, the
/// throttle on or off, with `tweak` applied to its configuration (the
/// dirty-throttle rule tests' shared machine).
pub(super) fn throttle_machine(
    throttle: bool,
    write_us: f64,
    tweak: impl FnOnce(&mut MachineConfig),
) -> Sim {
    let mut fs = DeviceConfig::of(DeviceKind::Ssd);
    fs.write_latency_us = Some(write_us);
    let mut cfg = MachineConfig {
        memory: Size::from_pages(4096),
        fs,
        policy: PolicyConfig {
            dirty_throttle: throttle,
            ..Default::default()
        },
        ..Default::default()
    };
    tweak(&mut cfg);
    Sim::new(cfg).unwrap()
}

/// A 4096-page machine whose file system takes `write_ms` a write, the
/// throttle on or off, with a task that has a 2048-page file open.
fn writer(throttle: bool, write_ms: f64) -> (Sim, u32) {
    writer_with(throttle, write_ms, |_| {})
}

/// [`writer`] with `tweak` applied to the machine's configuration.
pub(super) fn writer_with(
    throttle: bool,
    write_ms: f64,
    tweak: impl FnOnce(&mut MachineConfig),
) -> (Sim, u32) {
    let mut s = throttle_machine(throttle, write_ms * 1e3, tweak);
    let t = s.add_task("t");
    let file = s.add_file("f", 2048).unwrap();
    s.open(file, t).unwrap();
    (s, file)
}

/// One page of `file` written at `index`.
pub(super) fn write(s: &mut Sim, file: u32, index: u32) {
    s.step(&Event::FileWrite {
        file,
        index,
        pages: 1,
    });
}

/// [`write`], returning how long the writer slept in `balance_dirty_pages`
/// (ns; 0 when it did not pause).
pub(super) fn write_slept(s: &mut Sim, file: u32, index: u32) -> u64 {
    let p0 = s.bdp_pause_ns();
    write(s, file, index);
    s.bdp_pause_ns() - p0
}

/// The control functions give v6.12's values, worked by hand for the
/// 4096-page machine's global domain: thresh 780, bg_thresh 389 (freerun
/// ceiling 584), limit 780, setpoint (584 + 780) / 2 = 682, `INIT_BW` 25600
/// pages a second.
#[test]
fn the_control_functions_give_v6_12s_values() {
    // x = (682 − 648) × 1024 / (98 | 1) = 351; 351³ >> 20 = 41; + 1024.
    assert_eq!(pos_ratio_polynom(682, 648, 780), 1065);
    // x = −41984 / 99 = −424 (truncated); (179776 >> 10) × −424 >> 10 =
    // −73 (floored); + 1024.
    assert_eq!(pos_ratio_polynom(682, 723, 780), 951);
    assert_eq!(pos_ratio_polynom(682, 0, 780), 2048, "clamped to 2.0");
    // The wb line: x_intercept 681 + 204537, slope ~1 / (8 × write_bw):
    // 1065 × 204570 / 204537 = 1065, 951 × 204495 / 204537 = 950.
    assert_eq!(
        wb_position_ratio(780, 780, 389, 780, 648, 648, INIT_BW),
        1065
    );
    assert_eq!(
        wb_position_ratio(780, 780, 389, 780, 723, 723, INIT_BW),
        950
    );
    // A wb with half the domain's share (`wb_thresh` 390) and its own
    // `wb_dirty` under the domain's 648: x = (390 << 16) / 781 = 32726,
    // wb_setpoint 682 × 32726 >> 16 = 340, span (390 + 204800) × 32726 >>
    // 16 = 102463. `wb_dirty` 300: 1065 × 102503 / 102463 = 1065 (with
    // the domain's 648, 1065 × 102155 / 102463 = 1061); `wb_dirty` 100,
    // 1067, under `wb_thresh` / 2 = 195 (and over 195 / 8): × 195 / 100.
    assert_eq!(
        wb_position_ratio(780, 390, 389, 780, 648, 300, INIT_BW),
        1065
    );
    assert_eq!(
        wb_position_ratio(780, 390, 389, 780, 648, 648, INIT_BW),
        1061
    );
    assert_eq!(
        wb_position_ratio(780, 390, 389, 780, 648, 100, INIT_BW),
        2080
    );
    // `wb_dirty_exceeded()`: the domain over `thresh` is not enough, the
    // wb's own `wb_dirty` must pass its share.
    let dtc = |wb_dirty| Dtc {
        thresh: 726,
        wb_thresh: 239,
        bg_thresh: 362,
        dirty: 760,
        limit: 780,
        wb_dirty,
    };
    assert!(!dtc(239).exceeded());
    assert!(dtc(240).exceeded());
    // A fresh group's wb (`wb_thresh` 0, raised to (195 − 172) / 8 = 2):
    // x = (2 << 16) / 195 = 672, wb_setpoint 170 × 672 >> 16 = 1, span
    // (193 + 204800) × 672 >> 16 = 2101: 1023 × 1930 / 2101 = 939.
    assert_eq!(wb_position_ratio(195, 0, 97, 195, 172, 172, INIT_BW), 939);
    assert_eq!(
        wb_position_ratio(780, 780, 389, 780, 780, 780, INIT_BW),
        0,
        "at the limit"
    );
    // 648 / (1 + 25600 / 128) + 1 = 4 jiffies; at most MAX_PAUSE.
    assert_eq!(wb_max_pause(INIT_BW, 648), 4);
    assert_eq!(wb_max_pause(1, 100_000), MAX_PAUSE);
    // t = min(10, 1 + 4 / 2) = 3 jiffies: 25600 × 3 / 1024 = 75 pages,
    // min_pause 1 + 3 / 2 = 2; with task_ratelimit 0 the estimate (75000)
    // exceeds max_pause: 0 pages, min_pause = max_pause.
    assert_eq!(wb_min_pause(INIT_BW, INIT_BW, 4, 26625), (2, 75));
    assert_eq!(wb_min_pause(INIT_BW, INIT_BW, 4, 0), (4, 0));
    // 1 << (ilog2(780 − 584) >> 1) = 1 << 3.
    assert_eq!(dirty_poll_interval(584, 780), 8);
    assert_eq!(dirty_poll_interval(780, 780), 1);
}

/// One writer writing a file page by page on a device whose writes take
/// 10 s, with the throttle and without, in step. Without it nothing
/// sleeps: 900 pages dirty or under writeback. With it the writer
/// freeruns to the freerun ceiling (584), then checks every
/// `nr_dirtied_pause` pages. The root wb has completed no write, so its
/// `__wb_calc_thresh()` share of the global domain is 0 / 1
/// (`crate::page_writeback_domain`), raised by `wb_position_ratio()` to
/// `(limit − dirty) / 8`; its `wb_dirty` is the domain's dirty pages (the
/// one wb):
///
/// * the 648th page (64 dirtied since the freerun reset at 584: the checks
///   at 592, 600 and 616 found a period of 0 jiffies and doubled
///   `nr_dirtied_pause`, 8 → 16 → 32 → 64; dirty 648): `wb_thresh` (780 −
///   648) / 8 = 16, x = (16 << 16) / 781 = 1342, wb_setpoint 682 × 1342 >>
///   16 = 13, span (764 + 204800) × 1342 >> 16 = 4209: `pos_ratio` 1065 ×
///   3574 / 4209 = 904, `task_ratelimit` 25600 × 904 >> 10 = 22600, period
///   1000 × 64 / 22600 = 2 jiffies, none elapsed since the last check's
///   jiffy: a 2 ms pause (≥ min_pause 2), next check in 75 pages;
/// * the 723rd (75 dirtied, dirty 723): `wb_thresh` 7, x 587, wb_setpoint
///   6, span 1841: `pos_ratio` 951 × 1124 / 1841 = 580, 14500 pages/s,
///   period 75000 / 14500 = 5 jiffies, over `max_pause` (723 / 201 + 1 =
///   4): 4 ms, the extra jiffy carried into `dirty_paused_when`; next check
///   in 14500 × 4 / 1024 = 56 pages;
/// * the 779th (dirty 779, `wb_thresh` 0): the wb line at its floor,
///   `pos_ratio_polynom` 62 / 4 = 15, 375 pages/s, period 149 jiffies:
///   `max_pause`, 4 ms, next check in 1 page;
/// * the 780th (at the limit 780): `pos_ratio` 0, the writer sleeps
///   `max_pause` again and again until the first writes complete.
///
/// (With the domain's `thresh` as the wb's share, as mmsim had it, the
/// pauses were 2 ms at the 648th, 3 ms at the 723rd, and the limit was
/// passed at the 798th.)
///
/// Its elapsed time grows by exactly the pauses, and the dirty and
/// writeback pages never pass the limit by more than a check's pages.
#[test]
fn a_writer_faster_than_the_device_sleeps_the_computed_pause() {
    let (mut on, file) = writer(true, 1e4);
    let (mut off, _) = writer(false, 1e4);
    let mut pauses = Vec::new();
    let (mut done0, mut woke) = (None, None);
    for i in 0..900 {
        let (c_on, c_off, p0) = (on.clock, off.clock, on.bdp_pause_ns());
        write(&mut on, file, i);
        write(&mut off, file, i);
        let slept = on.bdp_pause_ns() - p0;
        assert_eq!(on.clock - c_on, off.clock - c_off + slept, "page {i}");
        if slept > 0 {
            pauses.push((i, slept));
            woke = Some(on.clock);
        }
        if done0.is_none() && on.nr_writeback > 0 {
            done0 = Some(on.writeback[1][0].0);
        }
        assert!(on.nr_dirty + on.nr_writeback <= 780 + 75, "page {i}");
    }
    assert_eq!(
        &pauses[..3],
        &[(647, 2_000_000), (722, 4_000_000), (778, 4_000_000)]
    );
    assert_eq!(pauses.len(), 4);
    // The fourth: max_pause after max_pause (4 ms, longer as the estimated
    // bandwidth falls with no write completing), until the first write
    // completed, less than a pause before.
    let (i, slept) = pauses[3];
    assert_eq!(i, 779);
    // 10 s in 1,235 pauses, each `wb_max_pause()` of the falling
    // estimates: with no write completed the write bandwidth averages down
    // to 3,554 pages/s and `dirty_ratelimit` to 7,579 (from INIT_BW's
    // 25,600).
    assert_eq!(slept, 10_000_000_000);
    let r = on.dirty_throttle_report().unwrap();
    assert_eq!(
        (
            r.balance_dirty_pages_pauses,
            r.avg_write_bandwidth,
            r.dirty_ratelimit
        ),
        (1_238, 3_554, 7_579)
    );
    assert_eq!(r.balance_dirty_pages_pause_ns, 10_000_000 + slept);
    assert_eq!(on.clock, off.clock + r.balance_dirty_pages_pause_ns);
    assert_eq!(r.nr_dirty_writeback_peak, 780);
    assert_eq!(
        (r.nr_dirty_threshold, r.nr_dirty_background_threshold),
        (780, 389)
    );
    let (woke, done0) = (woke.unwrap(), done0.unwrap());
    assert!(
        woke >= done0 && woke < done0 + MAX_PAUSE * 1_000_000,
        "{woke} {done0}"
    );
    // Without the throttle: every page dirty or under writeback, no report.
    assert_eq!(off.nr_dirty + off.nr_writeback, 900);
    assert_eq!(off.dirty_throttle_report(), None);
}

/// A 4096-page machine (cgroup `version`) whose writes take 10 s, the
/// throttle on, a group `g` with `memory.max` 1000 pages and its task with a
/// 1024-page file open.
fn group_writer(version: CgroupVersion) -> (Sim, crate::memcg::MemcgId, u32) {
    group_writer_with(true, |c| c.cgroup_version = version)
}

/// [`group_writer`] with the throttle as given and `tweak` applied.
pub(super) fn group_writer_with(
    throttle: bool,
    tweak: impl FnOnce(&mut MachineConfig),
) -> (Sim, crate::memcg::MemcgId, u32) {
    let mut s = throttle_machine(throttle, 1e7, tweak);
    let g = s.add_memcg(crate::memcg::ROOT, "g").unwrap();
    s.set_memcg_max(g, 1000).unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    let file = s.add_file("f", 1024).unwrap();
    s.open(file, t).unwrap();
    (s, g, file)
}

/// A v2 group of `memory.max` 1000 pages writes 250 pages. The global
/// domain (thresh 780, bg_thresh 389: freerun up to 584 pages) never
/// throttles; the group's (`avail` = its file pages + `memory.max` − usage,
/// usage charged in 64-page batches) does, from its freerun ceiling:
///
/// * freerun checks every 8 pages (`min(dirty_poll_interval())` of the two
///   domains: the group's 1 << (ilog2(193 − 32) >> 1) = 8 at 32 pages), then
///   4 (at 136: thresh 188, 188 − 136 = 52);
/// * at 144 pages (usage 192: avail 144 + 808 = 952, thresh 819 × 952 /
///   4096 = 190, bg_thresh 95, ceiling 142) the group's domain is over its
///   ceiling: its `pos_ratio` (1675: the group's wb has completed no
///   write, so its `wb_thresh` is 0, raised to (limit − dirty) / 8) is
///   below the global one's (5560) and
///   throttles; the periods of 4, 8 and 16 pages at 25600 × pos_ratio >>
///   10 pages/s round to 0 jiffies and double `nr_dirtied_pause`;
/// * at 172 pages (32 dirtied; avail 172 + 808 = 980, thresh 195,
///   bg_thresh 97, setpoint (146 + 195) / 2 = 170): `pos_ratio_polynom`'s
///   x = −2048 / 25 = −81, x² >> 10 = 6, × x >> 10 = −1: 1023; the wb line
///   with `wb_thresh` 2 (`the_control_functions_give_v6_12s_values`): 939;
///   `task_ratelimit` 25600 × 939 >> 10 = 23475, period 32000 / 23475 = 1
///   jiffy: a 1 ms pause (`wb_min_pause()`: 1 jiffy, next check
///   in 25 pages);
/// * at 197 pages (avail 197 + 744 = 941, thresh 188): over the group's
///   limit, `pos_ratio` 0: `max_pause` after `max_pause` (1 jiffy, then
///   longer as the estimate falls), 3,935 pauses and 10.001 s in all,
///   until its first writes (queued at the ceiling, 0.36 ms) complete.
///
/// The same group under cgroup v1 has no domain of its own: no pause.
#[test]
fn a_groups_small_dirty_domain_pauses_its_writer_where_the_global_one_would_not() {
    let mut pauses = Vec::new();
    for version in [CgroupVersion::V2, CgroupVersion::V1] {
        let (mut s, g, file) = group_writer(version);
        let mut p = Vec::new();
        for i in 0..250 {
            let slept = write_slept(&mut s, file, i);
            if slept > 0 {
                p.push((i, slept));
            }
            let [gd, _] = s.memcg_dirty_domain(g, true);
            assert!(gd.dirty <= gd.freerun_ceiling(), "page {i}");
        }
        let r = s.dirty_throttle_report().unwrap();
        pauses.push((
            p,
            r.balance_dirty_pages_pauses,
            r.balance_dirty_pages_memcg_pauses,
        ));
        if version == CgroupVersion::V2 {
            // The group's domain `dirty_limit` followed its thresh up; the
            // report gives the group's wb's estimates, which fell with no
            // write completing, not the root wb's (at `INIT_BW`).
            let ((rl, _, avg, _), limit) = s.bdp_wb(g as usize);
            assert_eq!(limit, 188);
            assert_eq!((r.dirty_ratelimit, r.avg_write_bandwidth), (rl, avg));
            assert_eq!((rl, avg), (6_930, 3_511));
            assert_eq!(s.bdp_wb(0).0 .0, INIT_BW);
        }
    }
    assert_eq!(
        pauses[0],
        (vec![(171, 1_000_000), (196, 10_001_000_000)], 3_936, 3_936)
    );
    assert_eq!(pauses[1], (vec![], 0, 0));
}

/// `wb_update_bandwidth()` after writeback (v6.12): no writer is throttled,
/// yet the estimate follows the completions. 64 pages written by
/// `sync_file_range` at 0.16 ms on a device whose writes take 100 ms: the
/// last completes at 100.29 ms, the wb has no page under writeback left and
/// its `bw_dwork` runs `BANDWIDTH_INTERVAL` later, at jiffy 300: elapsed
/// 300, `write_bandwidth` = (64 × 1000 + 25600 × (4096 − 300)) >> 12 =
/// 23740 (`avg_write_bandwidth` stays: it moves only when the two estimates
/// moved the same way). At the next sync, jiffy 1000, more than an interval
/// since: `do_writepages()` updates first, nothing written since: 23740 ×
/// (4096 − 700) >> 12 = 19682, the average 1/8 of the gap down: 25600 −
/// (25600 − 23740) / 8 = 25368. Its writes end at 1100.45 ms, the work runs
/// at jiffy 1300: (64000 + 19682 × 3796) >> 12 = 18256, average 25368 −
/// 5686 / 8 = 24658. `dirty_ratelimit` moves only with a throttled writer.
#[test]
fn the_write_bandwidth_estimate_follows_completed_writeback() {
    let (mut s, file) = writer(true, 100.0);
    let mut seen = Vec::new();
    for round in 0..2u32 {
        for i in 0..64 {
            write(&mut s, file, round * 64 + i);
        }
        s.step(&Event::FileSync {
            file,
            index: round * 64,
            pages: 64,
            wait: false,
        });
        seen.push(s.bdp_wb(0).0);
        s.idle(1_000_000_000);
        // The timers due by the idle's end run at the next event.
        s.step(&Event::Think { ns: 1 });
        seen.push(s.bdp_wb(0).0);
    }
    assert_eq!(
        seen,
        [
            (INIT_BW, INIT_BW, INIT_BW, 0),
            (INIT_BW, 23_740, INIT_BW, 300),
            (INIT_BW, 19_682, 25_368, 1000),
            (INIT_BW, 18_256, 24_658, 1300),
        ]
    );
}

/// Under the fair schedule the throttled writer blocks for its pause and
/// another task runs meanwhile: the writer of
/// [`a_writer_faster_than_the_device_sleeps_the_computed_pause`] sleeps 2 ms
/// at its 648th page; a task thinking 100 µs an event runs 20 events, to
/// exactly the writer's wake; the writer's own time excludes the pause; its
/// next pause, 4 ms at the 723rd page, is the same as without the schedule.
#[test]
fn under_the_fair_schedule_another_task_runs_during_the_pause() {
    let (mut s, file) = writer(true, 1e4);
    s.add_task("other");
    s.set_fair_schedule(true);
    s.set_runnable(2);
    let writes: Vec<Event> = (0..900)
        .map(|index| Event::FileWrite {
            file,
            index,
            pages: 1,
        })
        .collect();
    let think = vec![Event::Think { ns: 100_000 }; 100];
    let mut next = 0;
    let mut slept = Vec::new();
    for _ in 0..2 {
        let (ran0, clock0) = (s.task_ran_ns(), s.clock);
        let n = s.run_task(&writes[next..], u64::MAX, u64::MAX);
        next += n;
        let (at, ran) = (s.clock, s.task_ran_ns() - ran0);
        let wake = s.take_task_wake().expect("the writer sleeps");
        // The writer's time is its writes' (2.5 µs each), not the pause:
        // the clock has not slept through it.
        assert_eq!((at - clock0, ran), (n as u64 * 2_500, n as u64 * 2_500));
        let others = s.run_task(&think, u64::MAX, wake);
        assert_eq!(s.clock, wake, "the other task ran to the wake");
        slept.push((next - 1, wake - at, others));
    }
    assert_eq!(slept, [(647, 2_000_000, 20), (722, 4_000_000, 40)]);
}

/// `WB_RECLAIMABLE` is exact: a wb's count is the dirty file pages of the
/// groups it serves, as writes dirty them and writeback cleans them;
/// `Sim::check_invariants` compares the two.
#[test]
fn each_wbs_reclaimable_count_is_its_groups_dirty_pages_and_the_invariant_checks_it() {
    let (mut s, g, file) = group_writer(CgroupVersion::V2);
    for i in 0..40 {
        write(&mut s, file, i);
    }
    // A root task's writes count in the root's wb.
    let r = s.add_task("r");
    let f2 = s.add_file("f2", 64).unwrap();
    s.open(f2, r).unwrap();
    for i in 0..10 {
        write(&mut s, f2, i);
    }
    let gd = s.memcgs[g as usize].nr_file_dirty;
    assert_eq!(gd, 40);
    assert_eq!(s.wb_reclaimable(g as usize), 40);
    assert_eq!(s.wb_reclaimable(0), s.memcgs[0].nr_file_dirty);
    assert_eq!(s.wb_reclaimable(0), 10);
    s.check_invariants().unwrap();
    // One page too many in the group's wb: the check names it.
    *s.wb_reclaimable_mut(g as usize) += 1;
    assert_eq!(
        s.check_invariants().unwrap_err(),
        format!("wb {g}: WB_RECLAIMABLE 41 but its groups have 40 dirty file pages")
    );
    *s.wb_reclaimable_mut(g as usize) -= 1;
    // Writeback cleans them: both counts fall together.
    s.finish();
    assert_eq!(
        s.wb_reclaimable(g as usize),
        s.memcgs[g as usize].nr_file_dirty
    );
    s.check_invariants().unwrap();
}
