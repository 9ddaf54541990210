//! Rule tests of cgroup v1 limit reclaim's `reclaim_throttle(pgdat,
//! VMSCAN_THROTTLE_WRITEBACK)` after `shrink_inactive_list()` wakes the
//! flusher (mm/vmscan.c, v6.1 through v6.18; `policy.v1_reclaim_throttle`,
//! `crate::reclaim::vmscan::reclaim_throttle`): the sleeper wakes once more
//! than SWAP_CLUSTER_MAX pages of writeback have ended
//! (`__acct_reclaim_writeback`), or after HZ/10.

use crate::config::{CgroupVersion, PolicyName, Size};
use crate::reclaim::vmscan::reclaim_throttle::WRITEBACK_THROTTLE_TIMEOUT_NS;
use crate::reclaim::{Reclaimer, ScanControl};
use crate::sim::Sim;

/// A 256 MiB machine (order-0 page cache) under cgroup `version` whose
/// 1,000-page file (FADV_RANDOM) has had pages 0..`dirty` written once, with
/// `memcg_max` pages of limit and `policy.v1_reclaim_throttle` = `throttle`.
fn written(version: CgroupVersion, dirty: u16, memcg_max: u64, throttle: bool) -> (Sim, u32) {
    let mut cfg = super::filefolio::lf_config(1 << 16);
    cfg.fs.large_folios = false;
    cfg.cgroup_version = version;
    cfg.memcg_max = Some(Size::from_pages(memcg_max));
    cfg.policy.name = PolicyName::Cost;
    cfg.policy.v1_reclaim_throttle = throttle;
    super::rotate::random_file_written(cfg, 0, dirty)
}

/// The completion times of the writes in flight, earliest first.
fn ends(s: &Sim) -> Vec<u64> {
    let mut v: Vec<u64> = s
        .writeback
        .iter()
        .flat_map(|q| q.iter())
        .map(|&(t, _)| t)
        .collect();
    v.sort_unstable();
    v
}

fn under_writeback(s: &Sim) -> usize {
    s.writeback.iter().map(|q| q.len()).sum()
}

/// 40 one-page writes in flight: the sleeper wakes at the end of the 33rd
/// (`nr_written > SWAP_CLUSTER_MAX * 1`), not the 32nd; those 33 have ended
/// (rotated if marked), 7 are still in flight.
#[test]
fn the_sleeper_wakes_when_more_than_32_pages_have_ended() {
    let (mut s, _) = written(CgroupVersion::V1, 40, 1 << 12, true);
    let now = s.clock;
    s.wakeup_flusher(now);
    let e = ends(&s);
    assert_eq!(e.len(), 40);
    assert!(
        e[31] < e[32],
        "the 32nd and 33rd writes end apart: {} {}",
        e[31],
        e[32]
    );
    let mut sc = ScanControl::new(Reclaimer::Memcg, 32, now);
    s.reclaim_throttle_writeback_v1(&mut sc);
    assert_eq!(sc.io_wait_ns, e[32] - now);
    assert_eq!(under_writeback(&s), 7);
}

/// 10 pages in flight never make more than 32: the sleep lasts HZ/10, 100 ms,
/// and every write has ended by then.
#[test]
fn fewer_than_33_pages_in_flight_sleep_the_whole_timeout() {
    let (mut s, _) = written(CgroupVersion::V1, 10, 1 << 12, true);
    let now = s.clock;
    s.wakeup_flusher(now);
    assert_eq!(under_writeback(&s), 10);
    let mut sc = ScanControl::new(Reclaimer::Memcg, 32, now);
    s.reclaim_throttle_writeback_v1(&mut sc);
    assert_eq!(sc.io_wait_ns, 100_000_000);
    assert_eq!(WRITEBACK_THROTTLE_TIMEOUT_NS, 100_000_000);
    assert_eq!(under_writeback(&s), 0);
}

/// `writeback_throttling_sane()`: false only for cgroup reclaim under v1.
#[test]
fn only_v1_cgroup_reclaim_is_not_sane() {
    let (v1, _) = written(CgroupVersion::V1, 1, 1 << 12, true);
    let (v2, _) = written(CgroupVersion::V2, 1, 1 << 12, true);
    let memcg = ScanControl::new(Reclaimer::Memcg, 32, 0);
    let direct = ScanControl::new(Reclaimer::Direct, 32, 0);
    let kswapd = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    assert!(!v1.writeback_throttling_sane(&memcg));
    assert!(v1.writeback_throttling_sane(&direct));
    assert!(v1.writeback_throttling_sane(&kswapd));
    assert!(v2.writeback_throttling_sane(&memcg));
}

/// The whole path: 40 dirty pages at the tail of a 64-page v1 group, then
/// reads. Limit reclaim's first batch is the dirty page 0 alone (one
/// immediate), which wakes the flusher: all 40 go under writeback. Without
/// the setting reclaim goes on at once and meets the other 39 under
/// writeback, marks them PG_reclaim and activates them: all 40 rotate at
/// their writes' ends and are scanned again (240 pages scanned). With it the
/// reclaimer first sleeps until the 33rd write ends: those pages are clean
/// when met and freed unmarked, so only 5 rotate (page 0 and the in-flight
/// pages reclaim meets before their writes end), 221 scanned, and the run
/// ends later. Under v2 the setting changes nothing.
#[test]
fn v1_limit_reclaim_sleeps_after_an_all_dirty_batch() {
    let run = |version, throttle| {
        let (mut s, f) = written(version, 40, 64, throttle);
        super::rotate::read_100_to_300(&mut s, f);
        (
            s.clock,
            s.vm.pgrotated,
            s.vm.nr_vmscan_immediate_reclaim,
            s.vm.pgscan_file,
        )
    };
    let off = run(CgroupVersion::V1, false);
    let on = run(CgroupVersion::V1, true);
    assert_eq!((off.1, off.2, off.3), (40, 1, 240));
    assert_eq!((on.1, on.2, on.3), (5, 1, 221));
    assert!(
        on.0 > off.0,
        "the sleep delays the run: {} vs {}",
        on.0,
        off.0
    );
    assert_eq!(run(CgroupVersion::V2, true), run(CgroupVersion::V2, false));
}
