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
    // 110 updates pending: past the update threshold of one CPU (see below).
    fill_lists(&mut s, [0, 0, 10, 100]);
    fill_lists(&mut s, [0, 0, 20, 0]);
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

/// A machine of `cpus` CPUs under the ratelimited flush, with group `a`
/// under the root and a reader of `memory.stat` every `read_ms` ms.
fn group_machine(cpus: u32, read_ms: u64) -> (Sim, crate::memcg::MemcgId) {
    group_machine_threshold(cpus, read_ms, 0)
}

/// [`group_machine`] whose update threshold counts `threshold_cpus` CPUs
/// (`machine.policy.memcg_stats_cpus`; 0: `cpus`).
fn group_machine_threshold(
    cpus: u32,
    read_ms: u64,
    threshold_cpus: u32,
) -> (Sim, crate::memcg::MemcgId) {
    let cfg = MachineConfig {
        memory: Size::from_pages(65536),
        cpus,
        policy: PolicyConfig {
            name: PolicyName::Cost,
            cost_variant: CostVariant::V6_2,
            memcg_stats_flush: MemcgStatsFlush::Ratelimited,
            memcg_stats_read_ms: read_ms,
            memcg_stats_cpus: threshold_cpus,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let a = s.add_memcg(ROOT, "a").unwrap();
    (s, a)
}

/// Puts `n` order-0 pages on group `m`'s inactive file list: `n` updates
/// of NR_INACTIVE_FILE (`memcg_rstat_updated(memcg, 1)` each).
fn add_inactive_file(s: &mut Sim, m: crate::memcg::MemcgId, n: u64) {
    let i = LruList::InactiveFile as usize;
    for _ in 0..n {
        s.node.free -= 1;
        let f = s.alloc_order0_folio(u32::MAX - 1, 0, flags::LRU);
        s.memcgs[m as usize].lruvec.lists[i].push_head(&mut s.folios, f, i as u8);
    }
}

fn flushed_inactive_file(s: &Sim, m: crate::memcg::MemcgId) -> u64 {
    s.lruvec_page_state(m).size(LruList::InactiveFile)
}

/// `memory_stat_show()` → `mem_cgroup_flush_stats(memcg)` (v6.12, v6.18):
/// the group is flushed only when `memcg_vmstats_needs_flush()`, more than
/// `MEMCG_CHARGE_BATCH` × CPUs updates in the atomic count, which one CPU
/// feeds in batches of 64. With 2 CPUs: 191 updates are 2 batches (128, not
/// more than 128): no flush; the 192nd makes 3 batches (192): flushed. A
/// group's flush leaves `flush_last_time` (the root's) alone.
#[test]
fn a_memory_stat_read_flushes_only_past_the_update_threshold() {
    let (mut s, a) = group_machine(2, 100);
    assert_eq!(s.timers.expires(TimerKind::MemcgStatsRead), Some(SEC / 10));
    add_inactive_file(&mut s, a, 191);
    assert_eq!(s.memcg_rstat_pending(a), 191);
    assert!(!s.memcg_vmstats_needs_flush(a));
    s.clock = SEC / 10;
    s.run_timers();
    assert_eq!(
        (s.memcg_stats.read_flushes, s.memcg_stats.read_skips),
        (0, 1)
    );
    assert_eq!(flushed_inactive_file(&s, a), 0);
    assert_eq!(
        s.timers.expires(TimerKind::MemcgStatsRead),
        Some(2 * SEC / 10)
    );
    add_inactive_file(&mut s, a, 1);
    assert!(s.memcg_vmstats_needs_flush(a));
    s.clock = 2 * SEC / 10;
    s.run_timers();
    assert_eq!(
        (s.memcg_stats.read_flushes, s.memcg_stats.read_skips),
        (1, 1)
    );
    assert_eq!(flushed_inactive_file(&s, a), 192);
    assert_eq!(s.memcg_stats.flush_last_time, 0);
    // The flush zeroed the group's count; the root's (not flushed) keeps its 192.
    assert_eq!(s.memcg_rstat_pending(a), 0);
    assert_eq!(s.memcg_rstat_pending(ROOT), 192);
    // One CPU: the threshold is 64, and 128 updates (2 batches) pass it.
    let (mut s, a) = group_machine(1, 100);
    add_inactive_file(&mut s, a, 128);
    s.clock = SEC / 10;
    s.run_timers();
    assert_eq!(
        (s.memcg_stats.read_flushes, flushed_inactive_file(&s, a)),
        (1, 128)
    );
}

/// The update count is of every statistics update, events too
/// (`count_memcg_events()` → `memcg_rstat_updated(memcg, count)`): 128
/// page faults of the group pass one CPU's threshold (2 batches of 64).
#[test]
fn memory_stat_events_count_as_updates() {
    let (mut s, a) = group_machine(1, 100);
    s.count_memcg_events(a, crate::stats::item::PGFAULT, 127);
    assert!(!s.memcg_vmstats_needs_flush(a));
    s.count_memcg_events(a, crate::stats::item::PGFAULT, 1);
    assert_eq!(s.memcg_rstat_pending(a), 128);
    assert!(s.memcg_vmstats_needs_flush(a));
    // A counter of memory.events (`memcg_memory_event()`) is no rstat update.
    let (mut s, a) = group_machine(1, 100);
    s.count_memcg_events(a, crate::stats::item::MEMCG_LOW, 500);
    assert_eq!(s.memcg_rstat_pending(a), 0);
}

/// `mem_cgroup_flush_stats_ratelimited()` (v6.12, v6.18): a full cycle late,
/// it calls `mem_cgroup_flush_stats()`, which still skips a group under the
/// update threshold; the periodic `flush_memcg_stats_dwork()` is forced and
/// flushes whatever is pending.
#[test]
fn the_ratelimited_flush_skips_a_group_under_the_threshold_and_the_periodic_one_does_not() {
    let (mut s, a) = group_machine(1, 0);
    assert_eq!(s.timers.expires(TimerKind::MemcgStatsRead), None);
    add_inactive_file(&mut s, a, 127);
    s.mem_cgroup_flush_stats_ratelimited(a, 4 * SEC + 1);
    assert_eq!(s.memcg_stats.ratelimited_flushes, 0);
    assert_eq!(s.memcg_stats.threshold_skips, 1);
    assert_eq!(flushed_inactive_file(&s, a), 0);
    add_inactive_file(&mut s, a, 1);
    s.mem_cgroup_flush_stats_ratelimited(a, 4 * SEC + 1);
    assert_eq!(s.memcg_stats.ratelimited_flushes, 1);
    assert_eq!(flushed_inactive_file(&s, a), 128);
    // Not the root: flush_last_time stays, so the next call flushes again
    // once more than the threshold is pending.
    assert_eq!(s.memcg_stats.flush_last_time, 0);
    // One update pending: the periodic flush takes it all the same.
    add_inactive_file(&mut s, a, 1);
    s.clock = 2 * SEC;
    s.run_timers();
    assert_eq!(s.memcg_stats.periodic_flushes, 1);
    assert_eq!(flushed_inactive_file(&s, a), 129);
    assert_eq!(s.memcg_stats.flush_last_time, 2 * SEC);
}

#[test]
fn memcg_stats_read_ms_is_checked() {
    let mut cfg = MachineConfig::default();
    cfg.policy.memcg_stats_read_ms = 3_600_001;
    let e = Sim::new(cfg)
        .err()
        .expect("over an hour is refused")
        .to_string();
    assert!(e.contains("machine.policy.memcg_stats_read_ms"), "{e}");
    assert!(e.contains("[0, 3600000]"), "{e}");
}

/// `machine.policy.memcg_stats_cpus` is the update threshold's
/// `num_online_cpus()` and nothing else: a 1-CPU machine (one CPU's clock, no
/// `lru_lock` contention) with the threshold of the 2-CPU host a kernel run
/// was captured on skips a read of 191 pending updates (2 batches, 128: not
/// more than 64 × 2) that its own CPU count flushes (more than 64 × 1).
#[test]
fn memcg_stats_cpus_sets_the_update_threshold_alone() {
    let read = |threshold_cpus| {
        let (mut s, a) = group_machine_threshold(1, 100, threshold_cpus);
        add_inactive_file(&mut s, a, 191);
        s.clock = SEC / 10;
        s.run_timers();
        let r = s.finish();
        assert_eq!(r.cpus, 1);
        let f = r
            .mmsim_memcg_flush
            .expect("ratelimited reports its flushes");
        (f.read, f.read_skipped, s.memcg_stats.cpus)
    };
    assert_eq!(read(0), (1, 0, 1));
    assert_eq!(read(2), (0, 1, 2));
    // And a 2-CPU machine told to count one CPU flushes.
    let (mut s, a) = group_machine_threshold(2, 100, 1);
    add_inactive_file(&mut s, a, 191);
    s.clock = SEC / 10;
    s.run_timers();
    assert_eq!(s.smp.cpus, 2);
    assert_eq!(
        (s.memcg_stats.read_flushes, s.memcg_stats.read_skips),
        (1, 0)
    );
}

/// A reader slower than the periodic flusher (every 3 s against 2 s) still
/// flushes: the read at 3 s finds the updates since the periodic flush at
/// 2 s and, past the threshold, flushes its group, so reclaim reads them a
/// second before the next periodic flush would bring them (v6.18
/// `mem_cgroup_flush_stats()` from `memory_stat_format()`).
#[test]
fn a_reader_slower_than_the_periodic_flusher_still_flushes_between_its_ticks() {
    let (mut s, a) = group_machine(1, 3000);
    add_inactive_file(&mut s, a, 10);
    s.clock = 2 * SEC;
    s.run_timers();
    assert_eq!(s.memcg_stats.periodic_flushes, 1);
    assert_eq!(flushed_inactive_file(&s, a), 10);
    add_inactive_file(&mut s, a, 128);
    s.clock = 3 * SEC;
    s.run_timers();
    assert_eq!(
        (s.memcg_stats.read_flushes, s.memcg_stats.read_skips),
        (1, 0)
    );
    assert_eq!(flushed_inactive_file(&s, a), 138);
    assert_eq!(s.memcg_stats.periodic_flushes, 1);
    assert_eq!(s.timers.expires(TimerKind::MemcgStatsRead), Some(6 * SEC));
}

/// The results count each caller's flushes and the threshold's skips
/// (`mmsim_memcg_flush`): two skipped reads and a flushing one, a skipped and
/// a flushing ratelimited call, one periodic flush; none under `sync`; zeroed
/// at the measurement's start.
#[test]
fn the_results_count_the_flushes_and_the_skips() {
    let (mut s, a) = group_machine(2, 100);
    add_inactive_file(&mut s, a, 191);
    s.clock = SEC / 10;
    s.run_timers();
    add_inactive_file(&mut s, a, 1);
    s.clock = 2 * SEC / 10;
    s.run_timers();
    s.mem_cgroup_flush_stats_ratelimited(a, 4 * SEC + 1);
    add_inactive_file(&mut s, a, 192);
    s.mem_cgroup_flush_stats_ratelimited(a, 4 * SEC + 1);
    s.clock = 2 * SEC;
    s.run_timers();
    let r = s.finish().mmsim_memcg_flush;
    let want = crate::memcg_stats::MemcgFlushReport {
        periodic: 1,
        reclaim: 0,
        ratelimited: 1,
        ratelimited_skipped: 1,
        read: 1,
        // 0.1 s, and the timer's one late run at 2 s (nothing pending then).
        read_skipped: 2,
    };
    assert_eq!(r, Some(want));
    s.begin_measurement();
    let zero = crate::memcg_stats::MemcgFlushReport::default();
    assert_eq!(s.finish().mmsim_memcg_flush, Some(zero));
    let mut s = machine_flushing(MemcgStatsFlush::Sync);
    assert_eq!(s.finish().mmsim_memcg_flush, None);
}

/// The reader and the threshold's CPUs are of the 6.12+ flush: under `sync`
/// and `reclaim` a run would ignore them, so they are refused, naming the
/// field and the mode; `memcg_stats_cpus` has `machine.cpus`' range.
#[test]
fn the_reader_and_its_cpus_are_refused_outside_the_ratelimited_flush() {
    let err = |mode, read_ms, cpus| {
        let mut cfg = MachineConfig::default();
        cfg.policy.memcg_stats_flush = mode;
        cfg.policy.memcg_stats_read_ms = read_ms;
        cfg.policy.memcg_stats_cpus = cpus;
        Sim::new(cfg).err().map(|e| e.to_string())
    };
    let e = err(MemcgStatsFlush::Sync, 200, 0).expect("a reader under sync");
    assert!(e.contains("machine.policy.memcg_stats_read_ms"), "{e}");
    assert!(e.contains("memcg_stats_flush = \"sync\""), "{e}");
    let e = err(MemcgStatsFlush::Reclaim, 0, 2).expect("cpus under reclaim");
    assert!(e.contains("machine.policy.memcg_stats_cpus"), "{e}");
    assert!(e.contains("memcg_stats_flush = \"reclaim\""), "{e}");
    assert_eq!(err(MemcgStatsFlush::Ratelimited, 200, 2), None);
    assert_eq!(err(MemcgStatsFlush::Sync, 0, 0), None);
    let e = err(MemcgStatsFlush::Ratelimited, 0, 4097).expect("over 4096 CPUs");
    assert!(e.contains("machine.policy.memcg_stats_cpus"), "{e}");
    assert!(e.contains("4097 is out of range [0, 4096]"), "{e}");
}
