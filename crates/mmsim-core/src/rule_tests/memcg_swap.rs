//! Rule tests of groups and swap: `memory.swap.max` and `memory.swap.high`,
//! swap on the filesystem's disk, and swap charges after a group move.

use super::*;

/// Runs the swap.max case under `version`: /a (memory.swap.max 10) over /a/b
/// (memory.max 100) whose task touches 105 anon pages.
fn swap_max_case(
    version: crate::config::CgroupVersion,
) -> (Sim, crate::memcg::MemcgId, crate::memcg::MemcgId, u32) {
    let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 12));
    s.cfg.cgroup_version = version;
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(a, "b").unwrap();
    s.set_memcg_max(b, 100).unwrap();
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::SwapMax, 10)
        .unwrap();
    let t = s.add_task("t");
    s.attach_task(t, b).unwrap();
    let v = s.mmap_anon(t, 105).unwrap();
    touch(&mut s, v, 105);
    s.check_invariants().unwrap();
    (s, a, b, t)
}

#[test]
fn swap_max_caps_the_subtrees_swap_then_anon_is_not_reclaimed() {
    let (mut s, a, b, t) = swap_max_case(crate::config::CgroupVersion::V2);
    // Limit reclaim of /a/b swaps out exactly what /a's swap.max allows; the
    // other anon folios it tried are refused (memory.swap.events max, fail)
    // and activated.
    assert_eq!(s.vm.pswpout, 10);
    assert_eq!(s.memcgs[a as usize].swap_usage, 10);
    assert_eq!(s.memcgs[b as usize].swap_usage, 10);
    assert_eq!(s.memcgs[0].swap_usage, 10);
    let st = s.memcgs[b as usize].stat;
    assert!(st.swap_max > 0);
    assert_eq!(st.swap_max, st.swap_fail);
    assert_eq!(s.mem_cgroup_get_nr_swap_pages(b), 0);
    assert_eq!(s.mem_cgroup_get_nr_swap_pages(0), (1 << 12) - 10);
    // At half its swap.max and more, the group's swap counts as full.
    assert!(s.mem_cgroup_swap_full(b));
    assert!(!s.mem_cgroup_swap_full(0));
    // memory.swap.high counts as swap.max does: at half of it the group's
    // swap is full, whatever its swap.max (v6.12 mem_cgroup_swap_full).
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::SwapMax, u64::MAX)
        .unwrap();
    assert!(!s.mem_cgroup_swap_full(b));
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::SwapHigh, 21)
        .unwrap();
    assert!(!s.mem_cgroup_swap_full(b));
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::SwapHigh, 20)
        .unwrap();
    assert!(s.mem_cgroup_swap_full(b));
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::SwapMax, 10)
        .unwrap();
    // With no swap left for the group, get_scan_count scans only file: the
    // group's limit can no longer be met by reclaim, so the OOM killer runs,
    // and the victim's swap slots are uncharged.
    let w = s.mmap_anon(t, 50).unwrap();
    touch(&mut s, w, 50);
    assert_eq!(s.vm.oom_kill, 1);
    assert_eq!(s.vm.pswpout, 10);
    assert_eq!(s.memcgs[a as usize].swap_usage, 0);
    assert_eq!(s.memcgs[0].swap_usage, 0);
    s.check_invariants().unwrap();
}

#[test]
fn swap_max_is_a_v2_limit_only() {
    // Under cgroup v1 the swap counter only accounts (memory.memsw.* is not
    // modelled): the same run swaps past 10 pages.
    let (s, a, b, _) = swap_max_case(crate::config::CgroupVersion::V1);
    assert!(s.vm.pswpout > 10, "{}", s.vm.pswpout);
    assert_eq!(s.memcgs[a as usize].swap_usage, s.vm.pswpout);
    assert_eq!(s.memcgs[b as usize].stat.swap_max, 0);
}

#[test]
fn swap_on_the_filesystems_disk_shares_its_device() {
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        fs: DeviceConfig::of(DeviceKind::Hdd),
        swap: DeviceConfig {
            size: Some(Size::from_pages(1 << 12)),
            ..DeviceConfig::of(DeviceKind::Fs)
        },
        ..Default::default()
    };
    cfg.validate().unwrap();
    let mut s = Sim::new(cfg).unwrap();
    let a = s.add_memcg(0, "a").unwrap();
    s.set_memcg_max(a, 100).unwrap();
    let t = s.add_task("t");
    s.attach_task(t, a).unwrap();
    let v = s.mmap_anon(t, 200).unwrap();
    touch(&mut s, v, 200);
    assert!(s.vm.pswpout >= 100);
    // Swap writes went to the filesystem's disk, with its (hdd) timing.
    assert_eq!(s.fs.pages_written, s.vm.pswpout);
    assert_eq!(s.swap.as_ref().unwrap().dev.pages_written, 0);
    assert!(s.fs.busy_until > 0);
    let before = s.fs.pages_read;
    touch(&mut s, v, 1);
    assert_eq!(s.fs.pages_read, before + s.vm.pswpin);
}

#[test]
fn a_swapped_in_page_is_charged_to_its_slots_group_after_a_move() {
    let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 12));
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(0, "b").unwrap();
    s.set_memcg_max(a, 100).unwrap();
    let t = s.add_task("t");
    s.attach_task(t, a).unwrap();
    let v = s.mmap_anon(t, 150).unwrap();
    touch(&mut s, v, 150);
    let swapped = s.memcgs[a as usize].swap_usage;
    assert!(swapped >= 50, "{swapped}");
    // Move the task (cgroup.procs), then fault the swapped pages back in: they are
    // charged to /a, whose slots they were (mem_cgroup_swapin_charge_folio); a
    // new page is charged to /b.
    s.set_memcg_knob(b, crate::memcg::MemcgKnob::Procs, t as u64)
        .unwrap();
    let b_before = s.memcgs[b as usize].usage;
    for i in 0..150 {
        s.step(&Event::Access {
            vma: v,
            index: i,
            write: false,
        });
    }
    assert!(s.vm.pswpin > 0);
    assert_eq!(
        s.memcgs[b as usize].usage, b_before,
        "no swap-in charged to /b"
    );
    let w = s.mmap_anon(t, 1).unwrap();
    touch(&mut s, w, 1);
    assert!(s.memcgs[b as usize].usage > b_before);
    assert!(s
        .set_memcg_knob(b, crate::memcg::MemcgKnob::Procs, 99)
        .is_err());
    s.check_invariants().unwrap();
}

#[test]
fn swap_high_throttles_without_reclaiming() {
    let run = |swap_high: u64| {
        let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 12));
        let a = s.add_memcg(0, "a").unwrap();
        s.set_memcg_max(a, 100).unwrap();
        s.set_memcg_knob(a, crate::memcg::MemcgKnob::SwapHigh, swap_high)
            .unwrap();
        let t = s.add_task("t");
        s.attach_task(t, a).unwrap();
        let v = s.mmap_anon(t, 300).unwrap();
        touch(&mut s, v, 300);
        s.check_invariants().unwrap();
        (
            s.memcgs[a as usize].stat,
            s.memcgs[a as usize].swap_usage,
            s.vm.pswpout,
        )
    };
    let (free, _, out_free) = run(u64::MAX);
    assert_eq!((free.swap_high, free.high_throttle_ns), (0, 0));
    let (capped, usage, out) = run(10);
    // Swapping goes on (swap.high is no limit) ...
    assert_eq!(out, out_free);
    assert!(usage > 10);
    // ... but returns to user space over it are throttled, by the
    // memory.high curve: once the usage is twice swap.high or more, the 2 s
    // maximum each time.
    assert!(capped.swap_high > 100, "{}", capped.swap_high);
    assert!(
        capped.high_throttle_ns > 100 * 2_000_000_000,
        "{}",
        capped.high_throttle_ns
    );
    assert_eq!(capped.high, 0, "no memory.high reclaim");
}
