//! 6.12's ratelimited memcg statistics flush (`crate::memcg_stats`):
//! reclaim's `lruvec_page_state()` reads are as of the last periodic flush
//! (`flush_memcg_stats_dwork`, every `FLUSH_TIME`), and reclaim flushes
//! itself only when that flusher is a full cycle late.

use super::*;
use crate::config::MemcgStatsFlush;
use crate::memcg::ROOT;
use crate::timer::TimerKind;

const SEC: u64 = 1_000_000_000;

fn machine_flushing(mode: MemcgStatsFlush) -> Sim {
    let cfg = MachineConfig {
        memory: Size::from_pages(65536),
        policy: PolicyConfig {
            name: PolicyName::Cost,
            cost_variant: CostVariant::V6_2,
            memcg_stats_flush: mode,
            ..Default::default()
        },
        ..Default::default()
    };
    Sim::new(cfg).unwrap()
}

/// may_deactivate for file at the top group, as `prepare_scan_control()` decides it.
fn may_deactivate_file(s: &Sim) -> bool {
    let mut sc = ScanControl::new(Reclaimer::Memcg, 32, s.clock);
    s.prepare_scan_control(&mut sc, ClassicRules::current(CostVariant::V6_2));
    sc.may_deactivate[1]
}

#[test]
fn sync_reclaim_reads_the_live_lists_and_arms_no_flusher() {
    let mut s = machine_flushing(MemcgStatsFlush::Sync);
    assert_eq!(s.timers.expires(TimerKind::MemcgStatsFlush), None);
    // 10 inactive against 100 active file pages: inactive_is_low.
    fill_lists(&mut s, [0, 0, 10, 100]);
    assert_eq!(s.lruvec_page_state(ROOT), s.subtree_lruvec(ROOT));
    assert!(s.inactive_is_low(ROOT, true));
    assert!(may_deactivate_file(&s));
}

#[test]
fn ratelimited_reclaim_reads_the_last_periodic_flush() {
    let mut s = machine_flushing(MemcgStatsFlush::Ratelimited);
    // The flusher is queued FLUSH_TIME after boot.
    assert_eq!(s.timers.expires(TimerKind::MemcgStatsFlush), Some(2 * SEC));
    fill_lists(&mut s, [0, 0, 10, 100]);
    // Not flushed yet: the group's counters read zero, so the lists are
    // not "low" and no refault was seen: no deactivation.
    assert_eq!(s.lruvec_page_state(ROOT).size(LruList::ActiveFile), 0);
    assert!(!s.inactive_is_low(ROOT, true));
    assert!(!may_deactivate_file(&s));
    // The periodic flush at 2 s copies the tree's totals and requeues itself.
    s.clock = 2 * SEC;
    s.run_timers();
    assert_eq!(s.memcg_stats.periodic_flushes, 1);
    assert_eq!(s.memcg_stats.flush_last_time, 2 * SEC);
    assert_eq!(s.timers.expires(TimerKind::MemcgStatsFlush), Some(4 * SEC));
    assert_eq!(s.lruvec_page_state(ROOT).size(LruList::ActiveFile), 100);
    assert!(may_deactivate_file(&s));
    // Lists that change after the flush are not seen until the next one:
    // 200 more inactive pages make the live ratio fine, the flushed one not.
    fill_lists(&mut s, [0, 0, 200, 0]);
    assert_eq!(s.subtree_lruvec(ROOT).size(LruList::InactiveFile), 210);
    assert_eq!(s.lruvec_page_state(ROOT).size(LruList::InactiveFile), 10);
    assert!(s.inactive_is_low(ROOT, true));
    s.clock = 4 * SEC;
    s.run_timers();
    assert_eq!(s.lruvec_page_state(ROOT).size(LruList::InactiveFile), 210);
    assert!(!s.inactive_is_low(ROOT, true));
    assert!(!may_deactivate_file(&s));
}

#[test]
fn ratelimited_refaults_are_seen_once_per_flush() {
    let mut s = machine_flushing(MemcgStatsFlush::Ratelimited);
    fill_lists(&mut s, [0, 0, 1000, 100]);
    s.clock = 2 * SEC;
    s.run_timers();
    assert!(!may_deactivate_file(&s));
    // A refault activation after the flush: WORKINGSET_ACTIVATE_FILE moves
    // live, but prepare_scan_control() compares the flushed value with the
    // snapshot, so it does not deactivate until the next flush shows it.
    s.memcgs[0].lruvec.workingset_activate[1] += 1;
    assert!(!may_deactivate_file(&s));
    s.clock = 4 * SEC;
    s.run_timers();
    assert!(may_deactivate_file(&s));
    // snapshot_refaults() at the end of the cycle takes the flushed value:
    // the refault is then "seen" and the next cycle does not deactivate.
    s.snapshot_refaults(ROOT);
    assert_eq!(s.memcgs[0].lruvec.refaults[1], 1);
    assert!(!may_deactivate_file(&s));
}

#[test]
fn reclaim_flushes_itself_only_when_the_flusher_is_a_cycle_late() {
    let mut s = machine_flushing(MemcgStatsFlush::Ratelimited);
    fill_lists(&mut s, [0, 0, 10, 100]);
    // flush_last_time is 0: at 4 s the flusher is exactly 2 × FLUSH_TIME
    // old, which is not late (`time_after64` is strict).
    s.mem_cgroup_flush_stats_ratelimited(ROOT, 4 * SEC);
    assert_eq!(s.memcg_stats.ratelimited_flushes, 0);
    assert_eq!(s.lruvec_page_state(ROOT).size(LruList::ActiveFile), 0);
    s.mem_cgroup_flush_stats_ratelimited(ROOT, 4 * SEC + 1);
    assert_eq!(s.memcg_stats.ratelimited_flushes, 1);
    assert_eq!(s.lruvec_page_state(ROOT).size(LruList::ActiveFile), 100);
    // A flush of the root records its time whoever asks for it
    // (`__mem_cgroup_flush_stats`: `if (mem_cgroup_is_root(memcg))
    // WRITE_ONCE(flush_last_time, jiffies_64)`), so the next reclaim
    // within 4 s does not flush again.
    assert_eq!(s.memcg_stats.flush_last_time, 4 * SEC + 1);
    s.mem_cgroup_flush_stats_ratelimited(ROOT, 8 * SEC + 1);
    assert_eq!(s.memcg_stats.ratelimited_flushes, 1);
    // Under sync the call never flushes.
    let mut s = machine_flushing(MemcgStatsFlush::Sync);
    s.mem_cgroup_flush_stats_ratelimited(ROOT, 100 * SEC);
    assert_eq!(s.memcg_stats.ratelimited_flushes, 0);
}

#[test]
fn ratelimited_refault_test_compares_with_the_flushed_workingset() {
    for (mode, recent) in [
        (MemcgStatsFlush::Sync, true),
        (MemcgStatsFlush::Ratelimited, false),
    ] {
        let mut s = machine_flushing(mode);
        // 50 active file pages flushed at 2 s; 50 more activated after it.
        fill_lists(&mut s, [0, 0, 10, 50]);
        s.clock = 2 * SEC;
        s.run_timers();
        fill_lists(&mut s, [0, 0, 0, 50]);
        let now = s.memcgs[0].lruvec.nonresident_age;
        let mask = s.shadow_layout.eviction_mask;
        // A file refault at distance 80: within the live active_file (100),
        // beyond the flushed one (50).
        let shadow = Shadow {
            eviction: (now as u32).wrapping_sub(80) & mask,
            memcg_id: 1,
            workingset: false,
        };
        assert_eq!(s.workingset_test_recent(shadow, true), recent, "{mode:?}");
    }
}

#[test]
fn memcg_stats_flush_ms_is_checked() {
    let mut cfg = MachineConfig::default();
    cfg.policy.memcg_stats_flush_ms = 0;
    let e = Sim::new(cfg).err().expect("0 ms is refused").to_string();
    assert!(e.contains("machine.policy.memcg_stats_flush_ms"), "{e}");
    assert!(e.contains("[1, 3600000]"), "{e}");
}

/// `memcg_stats_flush = "reclaim"` (5.15–6.11 as the kernel does it):
/// `shrink_node()` flushes the whole tree, reads in between see that flush,
/// and the refault test's delayed flush waits 2 × FLUSH_TIME after any flush.
#[test]
fn reclaim_flush_is_taken_by_shrink_node_and_read_stale_in_between() {
    let mut s = machine_flushing(MemcgStatsFlush::Reclaim);
    // The periodic flusher runs in every kernel since 5.15.
    assert_eq!(s.timers.expires(TimerKind::MemcgStatsFlush), Some(2 * SEC));
    fill_lists(&mut s, [0, 0, 10, 100]);
    assert_eq!(s.lruvec_page_state(ROOT).size(LruList::ActiveFile), 0);
    assert!(!s.inactive_is_low(ROOT, true));
    // A global reclaim pass flushes before prepare_scan_control().
    let mut sc = ScanControl::new(Reclaimer::Memcg, 0, 5);
    s.shrink_node(&mut sc);
    assert_eq!(s.memcg_stats.reclaim_flushes, 1);
    assert_eq!(s.memcg_stats.flush_last_time, 5);
    assert_eq!(s.lruvec_page_state(ROOT).size(LruList::ActiveFile), 100);
    assert!(s.inactive_is_low(ROOT, true));
    // 200 more inactive pages after the pass: still "low" until a flush.
    fill_lists(&mut s, [0, 0, 200, 0]);
    assert!(s.inactive_is_low(ROOT, true));
    // workingset_refault()'s mem_cgroup_flush_stats_delayed(): not until
    // 2 × FLUSH_TIME after the last flush (strictly), then the whole tree.
    s.mem_cgroup_flush_stats_ratelimited(ROOT, 4 * SEC + 5);
    assert_eq!(s.memcg_stats.ratelimited_flushes, 0);
    s.mem_cgroup_flush_stats_ratelimited(ROOT, 4 * SEC + 6);
    assert_eq!(s.memcg_stats.ratelimited_flushes, 1);
    assert_eq!(s.memcg_stats.flush_last_time, 4 * SEC + 6);
    assert_eq!(s.lruvec_page_state(ROOT).size(LruList::InactiveFile), 210);
    assert!(!s.inactive_is_low(ROOT, true));
}

/// v1 soft-limit reclaim under `reclaim`: it runs before `shrink_node()`'s
/// flush, so each `mem_cgroup_shrink_node()` decides `inactive_is_low()` on
/// the lists as the previous pass left them, and deactivates more anon
/// pages than on the live lists (`sync`).
#[test]
fn soft_limit_reclaim_reads_the_previous_pass_statistics() {
    let run = |mode: MemcgStatsFlush| {
        let cfg = MachineConfig {
            memory: Size::from_pages(4096),
            soft_limit_reclaim: crate::config::SoftLimitReclaim::Tree,
            policy: PolicyConfig {
                name: PolicyName::Cost,
                cost_variant: CostVariant::V6_2,
                memcg_stats_flush: mode,
                ..Default::default()
            },
            swap: DeviceConfig {
                size: Some(Size::from_pages(16384)),
                ..DeviceConfig::of(DeviceKind::Zram)
            },
            ..Default::default()
        };
        let mut s = Sim::new(cfg).unwrap();
        let a = s.add_memcg(0, "a").unwrap();
        let t = s.add_task("t");
        s.attach_task(t, a).unwrap();
        s.set_memcg_knob(a, crate::memcg::MemcgKnob::SoftLimit, 0)
            .unwrap();
        let v = s.mmap_anon(t, 6000).unwrap();
        // A sweep of 6,000 pages through 4,096, with a hot 1,500 pages
        // touched between every two cold ones (activated when scanned).
        for round in 0..4u32 {
            for i in 0..6000u32 {
                s.step(&Event::Access {
                    vma: v,
                    index: i,
                    write: true,
                });
                if i % 2 == 0 {
                    s.step(&Event::Access {
                        vma: v,
                        index: (i / 2 + round * 7) % 1500,
                        write: true,
                    });
                }
            }
        }
        s.check_invariants().unwrap();
        let v = s.vmstat();
        (v.pgdeactivate, v.pswpout, s.memcg_stats.reclaim_flushes)
    };
    let (sync_deact, sync_out, sync_flushes) = run(MemcgStatsFlush::Sync);
    let (rec_deact, rec_out, rec_flushes) = run(MemcgStatsFlush::Reclaim);
    assert_eq!(sync_flushes, 0);
    assert!(rec_flushes > 0);
    assert!(rec_deact > sync_deact, "{rec_deact} vs {sync_deact}");
    assert_eq!(
        (sync_deact, sync_out, rec_deact, rec_out, rec_flushes),
        (288, 18278, 3136, 19047, 19),
        "exact outcomes: 11 times the deactivations, 4 % more swap-outs"
    );
}
