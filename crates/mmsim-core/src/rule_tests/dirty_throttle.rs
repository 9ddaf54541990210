//! Rule tests of the writer's pause in `balance_dirty_pages()`
//! (`crate::page_writeback_throttle`, v6.12, `policy.dirty_throttle`).

use super::*;
use crate::page_writeback_throttle::*;

/// A 4096-page machine whose file system takes `write_ms` a write, the
/// throttle on or off, with a task that has a 2048-page file open.
fn writer(throttle: bool, write_ms: f64) -> (Sim, u32) {
    let mut fs = DeviceConfig::of(DeviceKind::Ssd);
    fs.write_latency_us = Some(write_ms * 1e3);
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(4096),
        fs,
        policy: PolicyConfig {
            dirty_throttle: throttle,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let t = s.add_task("t");
    let file = s.add_file("f", 2048).unwrap();
    s.open(file, t).unwrap();
    (s, file)
}

fn write(s: &mut Sim, file: u32, index: u32) {
    s.step(&Event::FileWrite {
        file,
        index,
        pages: 1,
    });
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
    assert_eq!(wb_position_ratio(780, 389, 780, 648, INIT_BW), 1065);
    assert_eq!(wb_position_ratio(780, 389, 780, 723, INIT_BW), 950);
    assert_eq!(
        wb_position_ratio(780, 389, 780, 780, INIT_BW),
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
/// `nr_dirtied_pause` pages:
///
/// * the 648th page (64 dirtied since the freerun reset at 584: the checks
///   at 592, 600 and 616 found a period of 0 jiffies and doubled
///   `nr_dirtied_pause`, 8 → 16 → 32 → 64; dirty 648):
///   `pos_ratio` 1065, `task_ratelimit` 25600 × 1065 >> 10 = 26625,
///   period 1000 × 64 / 26625 = 2 jiffies, none elapsed since the last
///   check's jiffy: a 2 ms pause (≥ min_pause 2), next check in 75 pages;
/// * the 723rd (75 dirtied, dirty 723): `pos_ratio` 950, 23750 pages/s,
///   period 75000 / 23750 = 3 jiffies: 3 ms;
/// * the 798th (dirty 798, over the limit 780): `pos_ratio` 0, the writer
///   sleeps `max_pause` again and again until the first writes complete.
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
    assert_eq!(&pauses[..2], &[(647, 2_000_000), (722, 3_000_000)]);
    assert_eq!(pauses.len(), 3);
    // The third: max_pause after max_pause (4 ms, longer as the estimated
    // bandwidth falls with no write completing), until the first write
    // completed, less than a pause before.
    let (i, slept) = pauses[2];
    assert_eq!(i, 797);
    // 9.997 s in 1,197 pauses (the first write's 10 s less what passed
    // since it was queued), each `wb_max_pause()` of the falling estimates:
    // with no write completed the write bandwidth averages down to 3,547
    // pages/s and `dirty_ratelimit` to 7,596 (from INIT_BW's 25,600).
    assert_eq!(slept, 9_997_000_000);
    let r = on.dirty_throttle_report().unwrap();
    assert_eq!(
        (
            r.balance_dirty_pages_pauses,
            r.avg_write_bandwidth,
            r.dirty_ratelimit
        ),
        (1_199, 3_547, 7_596)
    );
    assert_eq!(r.balance_dirty_pages_pause_ns, 5_000_000 + slept);
    assert_eq!(on.clock, off.clock + r.balance_dirty_pages_pause_ns);
    assert_eq!(r.nr_dirty_writeback_peak, 798);
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
