//! Rule tests of the memory cgroup hierarchy (mm/memcontrol.c,
//! mm/page_counter.c): the subtree walk, charges, `memory.max`/`high`/
//! `low`, memcg OOM, shadows, knob writes, v1 soft limits, per-group
//! pressure and `memory.reclaim`.

use super::*;

/// Reads page `i` of `file` for each `i` in `pages`, one single-page
/// `FileRead` event each (the tests fill a group's page cache this way).
fn read_each(s: &mut Sim, file: u32, pages: std::ops::Range<u32>) {
    for i in pages {
        s.step(&Event::FileRead {
            file,
            index: i,
            pages: 1,
        });
    }
}

#[test]
fn mem_cgroup_iter_walks_the_subtree_in_pre_order() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(a, "b").unwrap();
    let c = s.add_memcg(0, "c").unwrap();
    let d = s.add_memcg(b, "d").unwrap();
    let walk = |root| {
        let mut v = vec![root];
        while let Some(n) = s.mem_cgroup_iter(root, *v.last().unwrap()) {
            v.push(n);
        }
        v
    };
    assert_eq!(walk(0), vec![0, a, b, d, c]);
    assert_eq!(walk(a), vec![a, b, d]);
    assert_eq!(walk(c), vec![c]);
    assert_eq!(s.memcgs[d as usize].path, "/a/b/d");
    assert_eq!(s.memcg_by_path("/a/b"), Some(b));
    assert!(s.add_memcg(a, "b").is_err(), "duplicate path");
    assert!(s.add_memcg(0, "x/y").is_err(), "slash in a name");
}

#[test]
fn charges_sum_up_the_tree_and_uncharge_on_free() {
    let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 14));
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(a, "b").unwrap();
    let c = s.add_memcg(0, "c").unwrap();
    let (tb, tc) = (s.add_task("tb"), s.add_task("tc"));
    s.attach_task(tb, b).unwrap();
    s.attach_task(tc, c).unwrap();
    let vb = s.mmap_anon(tb, 300).unwrap();
    let vc = s.mmap_anon(tc, 200).unwrap();
    touch(&mut s, vb, 300);
    touch(&mut s, vc, 200);
    let usage = |s: &Sim, m: crate::memcg::MemcgId| s.memcgs[m as usize].usage;
    // Charges come in batches of 64 with the surplus in the per-CPU stock,
    // which memory.current includes: b charged 5 batches (320, 20 stocked);
    // c's first batch gave b's stock back; c charged 4 batches (256, 56
    // stocked).
    assert_eq!(
        (usage(&s, b), usage(&s, a), usage(&s, c), usage(&s, 0)),
        (300, 300, 256, 556)
    );
    assert_eq!(s.stock, (c, 56));
    // Each folio sits on its own group's lruvec.
    assert_eq!(s.memcgs[b as usize].lruvec.evictable(), 300);
    assert_eq!(s.memcgs[a as usize].lruvec.evictable(), 0);
    // A file read by tc's descriptor is charged to c.
    read_random(&mut s, tc, 50, 50);
    // 50 page-cache pages come out of c's stock.
    assert_eq!((usage(&s, c), usage(&s, 0)), (256, 556));
    assert_eq!(s.stock, (c, 6));
    // memory.stat is hierarchical: a shows b's pages and faults.
    let (ra, rc, rr) = (s.memcg_report(a), s.memcg_report(c), s.memcg_report(0));
    assert_eq!(
        (ra.current, ra.anon, ra.file, ra.events.pgfault),
        (300, 300, 0, 300)
    );
    assert_eq!(
        (rc.current, rc.anon, rc.file, rc.events.pgfault),
        (256, 200, 50, 200)
    );
    assert_eq!((rr.current, rr.events.pgfault), (556, 500));
    s.check_invariants().unwrap();
}

#[test]
fn multi_page_charges_use_the_stock_only_when_it_holds_them_all() {
    // try_charge_memcg(nr_pages) with consume_stock / refill_stock (v6.12).
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let a = s.add_memcg(0, "a").unwrap();
    s.cur_memcg = a;
    let usage = |s: &Sim| s.memcgs[a as usize].usage;
    assert!(s.try_charge_memcg(1, crate::gfp::GFP_KERNEL));
    assert_eq!((usage(&s), s.stock), (64, (a, 63)), "a batch, 63 stocked");
    assert!(s.try_charge_memcg(16, crate::gfp::GFP_KERNEL));
    assert_eq!((usage(&s), s.stock), (64, (a, 47)), "taken from the stock");
    assert!(s.try_charge_memcg(100, crate::gfp::GFP_KERNEL));
    assert_eq!(
        (usage(&s), s.stock),
        (164, (a, 47)),
        "over a batch: exactly 100, the stock untouched"
    );
    assert!(s.try_charge_memcg(48, crate::gfp::GFP_KERNEL));
    assert_eq!(
        (usage(&s), s.stock),
        (228, (a, 63)),
        "the stock is short: a batch, 16 more stocked"
    );
    // At the limit a batch no longer fits but the 16 pages do: exactly 16.
    s.drain_stock();
    assert_eq!(usage(&s), 165);
    s.memcgs[a as usize].max = 185;
    assert!(s.try_charge_memcg(16, crate::gfp::GFP_KERNEL));
    assert_eq!((usage(&s), s.stock), (181, (a, 0)));
    assert_eq!(s.memcgs[a as usize].max_events, 0, "no reclaim was needed");
}

#[test]
fn order0_charges_take_the_counters_fast_path_only_when_nothing_else_is_due() {
    // try_charge_memcg(1) (v6.12) after consume_stock failed: the batch if
    // every level has room for it, else the page; crossing memory.high
    // leaves the overage owed (note_over_high), whichever path charged.
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(a, "b").unwrap();
    s.cur_memcg = b;
    let usage = |s: &Sim, m| s.memcgs[m as usize].usage;
    assert!(s.try_charge_memcg(1, crate::gfp::GFP_USER_FOLIO));
    assert_eq!((usage(&s, b), usage(&s, a), s.stock), (64, 64, (b, 63)));
    // The parent's max leaves room for 9 pages, not a batch: one page.
    s.drain_stock();
    assert_eq!((usage(&s, b), usage(&s, a)), (1, 1));
    s.memcgs[a as usize].max = 10;
    for n in 2..=10 {
        assert!(s.try_charge_memcg(1, crate::gfp::GFP_USER_FOLIO));
        assert_eq!((usage(&s, b), usage(&s, a), s.stock), (n, n, (b, 0)));
    }
    assert_eq!(s.memcgs[a as usize].max_events, 0, "no reclaim was needed");
    // The parent's memory.high is crossed by the batch: it is charged all
    // the same and its 64 pages are owed, not yet reclaimed (64 is not
    // more than a batch).
    s.memcgs[a as usize].max = u64::MAX;
    s.memcgs[a as usize].high = 40;
    assert!(s.try_charge_memcg(1, crate::gfp::GFP_USER_FOLIO));
    assert_eq!(
        (usage(&s, b), s.stock, s.pages_over_high),
        (74, (b, 63), 64)
    );
}

#[test]
fn a_group_at_its_max_reclaims_only_its_subtree() {
    let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 14));
    let a = s.add_memcg(0, "a").unwrap();
    let c = s.add_memcg(0, "c").unwrap();
    s.set_memcg_max(a, 100).unwrap();
    let (ta, tc) = (s.add_task("ta"), s.add_task("tc"));
    s.attach_task(ta, a).unwrap();
    s.attach_task(tc, c).unwrap();
    let vc = s.mmap_anon(tc, 200).unwrap();
    touch(&mut s, vc, 200);
    let va = s.mmap_anon(ta, 300).unwrap();
    touch(&mut s, va, 300);
    assert!(s.memcgs[a as usize].usage <= 100);
    assert!(s.memcgs[a as usize].max_events > 0);
    assert!(s.vm.pswpout >= 200, "a's overflow went to swap");
    // c was never scanned: all its pages are resident, none swapped.
    assert_eq!(s.memcgs[c as usize].usage, 200);
    assert_eq!(s.memcgs[c as usize].lruvec.evictable(), 200);
    // Limit reclaim is not global reclaim; memory.stat counts it as direct.
    assert_eq!(s.vm.pgscan_kswapd + s.vm.pgscan_direct, 0);
    let ra = s.memcg_report(a);
    assert!(ra.pgscan >= 200 && ra.pgsteal >= 200 && ra.events.pgscan_direct == ra.pgscan);
    assert_eq!(ra.events_max, s.memcgs[a as usize].max_events);
    assert_eq!(s.memcg_report(c).pgscan, 0);
    s.check_invariants().unwrap();
}

#[test]
fn memcg_oom_kills_inside_the_group_when_reclaim_cannot_make_room() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let a = s.add_memcg(0, "a").unwrap();
    let c = s.add_memcg(0, "c").unwrap();
    s.set_memcg_max(a, 50).unwrap();
    let (ta, tc) = (s.add_task("ta"), s.add_task("tc"));
    s.attach_task(ta, a).unwrap();
    s.attach_task(tc, c).unwrap();
    // tc holds more anon memory than ta, but is outside the limited group.
    let vc = s.mmap_anon(tc, 500).unwrap();
    touch(&mut s, vc, 500);
    let va = s.mmap_anon(ta, 100).unwrap();
    touch(&mut s, va, 100);
    assert_eq!(s.vm.oom_kill, 1);
    assert!(
        s.tasks[ta as usize].dead,
        "the victim is in the group at its limit"
    );
    assert!(!s.tasks[tc as usize].dead);
    assert_eq!(
        s.memcgs[a as usize].usage, 0,
        "the victim's memory is freed"
    );
    s.check_invariants().unwrap();
}

#[test]
fn shadows_name_the_evicting_group_and_age_its_ancestors() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(a, "b").unwrap();
    let t = s.add_task("t");
    s.attach_task(t, b).unwrap();
    s.set_memcg_max(b, 64).unwrap();
    let file = read_random(&mut s, t, 1000, 200);
    // Evictions aged b's clock and its ancestors', not c-like siblings'.
    let age = |m: crate::memcg::MemcgId| s.memcgs[m as usize].lruvec.nonresident_age;
    assert!(age(b) >= 136, "b evicted at least 200 - 64 pages");
    assert_eq!(age(a), age(b));
    assert_eq!(age(0), age(b));
    let slot = s.files[file as usize].slot(0);
    let shadow = s
        .shadow_layout
        .unpack(slot)
        .expect("page 0 was evicted and left a shadow");
    assert_eq!(shadow.memcg_id, b + 1);
}

#[test]
fn memory_high_delay_follows_the_kernel_formula() {
    use crate::memcg::{calculate_high_delay, calculate_overage, MEMCG_CHARGE_BATCH};
    // The worked numbers of mem_cgroup_handle_over_high()'s comment: high =
    // 100 MiB, a task charging a batch of 64 pages, HZ = 1000 (ms).
    let high = 25_600u64; // pages
    let mib = 256u64;
    let delay =
        |usage: u64| calculate_high_delay(MEMCG_CHARGE_BATCH, calculate_overage(usage, high));
    assert_eq!(delay(high), 0);
    assert_eq!(delay(high + mib), 6); // 101M, 1 % over
    assert_eq!(delay(high + 2 * mib), 25);
    assert_eq!(delay(high + 5 * mib), 159);
    assert_eq!(delay(high + 10 * mib), 639); // 110M, 10 % over
    assert_eq!(delay(high + 15 * mib), 1439);
    assert!(delay(high + 18 * mib) > crate::memcg::MEMCG_MAX_HIGH_DELAY_JIFFIES);
    // The task's own share: a single page owes 1/64 of a batch.
    assert_eq!(
        calculate_high_delay(1, calculate_overage(high + 10 * mib, high)),
        9
    );
}

#[test]
fn memory_high_reclaims_file_and_throttles_what_it_cannot_reclaim() {
    // File pages over high are reclaimed on return to user space.
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let g = s.add_memcg(0, "g").unwrap();
    s.set_memcg_knob(g, crate::memcg::MemcgKnob::High, 256)
        .unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    read_random(&mut s, t, 4000, 2000);
    let r = s.memcg_report(g);
    assert!(r.current <= 256 + 64, "kept near high: {}", r.current);
    assert!(r.events.high > 0 && r.pgsteal > 1500);
    assert_eq!(r.events.oom_kill, 0);
    // Anonymous memory without swap cannot be reclaimed: the task is
    // throttled instead, never killed, and the group grows past high.
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let g = s.add_memcg(0, "g").unwrap();
    s.set_memcg_knob(g, crate::memcg::MemcgKnob::High, 256)
        .unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    let v = s.mmap_anon(t, 1024).unwrap();
    touch(&mut s, v, 1024);
    let r = s.memcg_report(g);
    assert!(r.current >= 1024);
    assert!(r.events.high_throttle_ns > 0, "throttled");
    assert_eq!(s.vm.oom_kill, 0);
    let psi_ns = s.psi.report(s.clock).some.total * 1000;
    assert!(
        psi_ns >= r.events.high_throttle_ns,
        "the sleep is a memstall"
    );
    s.check_invariants().unwrap();
}

#[test]
fn effective_low_shares_overcommitted_protection_among_siblings() {
    // The example tree of Documentation/admin-guide/cgroup-v2.rst: A with
    // low 2G and usage 6G; children B (low 3G, 2G used), C (low 1G, 2G
    // used), D (low 0, 2G used), E (low 10G, nothing used). Siblings
    // protect min(2,3) + min(2,1) = 3G > A's 2G, so B gets 2G·2/3 ≈ 1.33G,
    // C 2G·1/3 ≈ 0.67G, D nothing; E has no usage and is left alone.
    let gib = 1u64 << 18; // pages
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let a = s.add_memcg(0, "A").unwrap();
    let kids: Vec<crate::memcg::MemcgId> = ["B", "C", "D", "E"]
        .iter()
        .map(|n| s.add_memcg(a, n).unwrap())
        .collect();
    let (b, c, d, e) = (kids[0], kids[1], kids[2], kids[3]);
    for (m, low, usage) in [(b, 3, 2), (c, 1, 2), (d, 0, 2), (e, 10, 0)] {
        s.memcgs[m as usize].low = low * gib;
        s.memcgs[m as usize].usage = usage * gib;
    }
    s.memcgs[a as usize].low = 2 * gib;
    s.memcgs[a as usize].usage = 6 * gib;
    for m in [a, b, c, d, e] {
        s.memcg_calculate_protection(0, m);
    }
    let elow = |s: &Sim, m: crate::memcg::MemcgId| s.memcgs[m as usize].elow;
    assert_eq!(
        elow(&s, a),
        2 * gib,
        "a child of the reclaim root keeps its setting"
    );
    assert_eq!(elow(&s, b), 2 * gib * 2 / 3);
    assert_eq!(elow(&s, c), 2 * gib / 3);
    assert_eq!(elow(&s, d), 0);
    assert_eq!(elow(&s, e), 0);
    assert!(!s.memcg_below_low(0, b) && !s.memcg_below_low(0, a));
    // Reclaim rooted at A protects nothing of A itself; its children get
    // their own settings.
    s.memcg_calculate_protection(a, b);
    assert_eq!(elow(&s, b), 3 * gib);
    assert!(s.memcg_below_low(a, b), "B's usage is within its low");
    // memory.min follows the same rule.
    assert_eq!(crate::memcg::effective_protection(5, 10, 3, 6), 2);
    assert_eq!(crate::memcg::effective_protection(5, 10, 8, 6), 5);
}

#[test]
fn memory_low_spares_a_group_until_nothing_else_is_reclaimable() {
    // Two groups of file pages under a 1000-page limit on their parent;
    // `p` protects 400 pages, `u` nothing.
    let run = |low: u64| {
        let mut s = machine(PolicyName::Cost, 1 << 16, None);
        let parent = s.add_memcg(0, "parent").unwrap();
        s.set_memcg_max(parent, 1000).unwrap();
        let p = s.add_memcg(parent, "p").unwrap();
        let u = s.add_memcg(parent, "u").unwrap();
        s.set_memcg_knob(p, crate::memcg::MemcgKnob::Low, low)
            .unwrap();
        let (tp, tu) = (s.add_task("tp"), s.add_task("tu"));
        s.attach_task(tp, p).unwrap();
        s.attach_task(tu, u).unwrap();
        let (fp, fu) = (
            s.add_file("fp", 400).unwrap(),
            s.add_file("fu", 5000).unwrap(),
        );
        s.open(fp, tp).unwrap();
        s.open(fu, tu).unwrap();
        s.fadvise(fp, Advice::Random).unwrap();
        s.fadvise(fu, Advice::Random).unwrap();
        read_each(&mut s, fp, 0..400);
        read_each(&mut s, fu, 0..5000);
        s.check_invariants().unwrap();
        (s.memcg_report(p), s.memcg_report(u))
    };
    let (p, u) = run(400);
    assert_eq!(
        p.pgsteal, 0,
        "p is below its low and u has reclaimable pages"
    );
    assert!(p.current >= 400 && u.pgsteal > 4000);
    assert_eq!(p.events.low, 0);
    let (p, _) = run(0);
    assert!(p.pgsteal > 0, "without protection p is reclaimed too");
}

#[test]
fn scheduled_knob_writes_apply_when_the_clock_reaches_them() {
    use crate::memcg::MemcgKnob;
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let g = s.add_memcg(0, "g").unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    let file = s.add_file("f", 100_000).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    // A cycle: 300 pages at 1 ms, unlimited at 2 ms, 200 pages at 3 ms.
    s.schedule_memcg_knob(3_000_000, g, MemcgKnob::Max, 200)
        .unwrap();
    s.schedule_memcg_knob(1_000_000, g, MemcgKnob::Max, 300)
        .unwrap();
    s.schedule_memcg_knob(2_000_000, g, MemcgKnob::Max, u64::MAX)
        .unwrap();
    assert!(s.schedule_memcg_knob(0, 9, MemcgKnob::Max, 1).is_err());
    let mut i = 0;
    let mut seen = Vec::new();
    while s.clock < 4_000_000 {
        s.step(&Event::FileRead {
            file,
            index: i,
            pages: 1,
        });
        i += 1;
        let max = s.memcgs[g as usize].max;
        if seen.last() != Some(&max) {
            seen.push(max);
        }
        assert!(s.memcgs[g as usize].usage <= max);
    }
    assert_eq!(seen, vec![u64::MAX, 300, u64::MAX, 200]);
    s.check_invariants().unwrap();
}

fn soft_limit_machine(
    design: crate::config::SoftLimitReclaim,
) -> (Sim, crate::memcg::MemcgId, crate::memcg::MemcgId, u32, u32) {
    soft_limit_machine_swap(design, None)
}

/// [`soft_limit_machine`] with `swap` pages of zram swap (none: no swap).
fn soft_limit_machine_swap(
    design: crate::config::SoftLimitReclaim,
    swap: Option<u64>,
) -> (Sim, crate::memcg::MemcgId, crate::memcg::MemcgId, u32, u32) {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(8192),
        soft_limit_reclaim: design,
        policy: PolicyConfig {
            name: PolicyName::Cost,
            cost_variant: CostVariant::V6_2,
            ..Default::default()
        },
        ..Default::default()
    };
    if let Some(pages) = swap {
        cfg.swap = DeviceConfig {
            size: Some(Size::from_pages(pages)),
            ..DeviceConfig::of(DeviceKind::Zram)
        };
    }
    let mut s = Sim::new(cfg).unwrap();
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(0, "b").unwrap();
    let (ta, tb) = (s.add_task("ta"), s.add_task("tb"));
    s.attach_task(ta, a).unwrap();
    s.attach_task(tb, b).unwrap();
    let (fa, fb) = (
        s.add_file("fa", 100_000).unwrap(),
        s.add_file("fb", 100_000).unwrap(),
    );
    s.open(fa, ta).unwrap();
    s.open(fb, tb).unwrap();
    s.fadvise(fa, Advice::Random).unwrap();
    s.fadvise(fb, Advice::Random).unwrap();
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::SoftLimit, 0)
        .unwrap();
    (s, a, b, fa, fb)
}

/// Both groups read 6,000 pages each, interleaved, on an 8,192-page
/// machine: global reclaim must take 4,000+ pages from somewhere.
fn soft_limit_run(design: crate::config::SoftLimitReclaim) -> (u64, u64) {
    let (mut s, a, b, fa, fb) = soft_limit_machine(design);
    for i in 0..6000 {
        for f in [fa, fb] {
            read_each(&mut s, f, i..i + 1);
        }
    }
    s.check_invariants().unwrap();
    (s.memcg_report(a).pgsteal, s.memcg_report(b).pgsteal)
}

#[test]
fn soft_limit_tree_is_keyed_every_1024_events() {
    let (mut s, a, _, fa, _) = soft_limit_machine(crate::config::SoftLimitReclaim::Tree);
    read_each(&mut s, fa, 0..1023);
    assert_eq!(
        s.memcgs[a as usize].soft_tree_key, None,
        "1,023 events: not yet"
    );
    read_each(&mut s, fa, 1023..1024);
    // The excess when the 1,024th page was charged (usage includes the stock).
    assert_eq!(
        s.memcgs[a as usize].soft_tree_key,
        Some(s.memcgs[a as usize].usage)
    );
    assert_eq!(
        s.memcgs[0].soft_tree_key, None,
        "the top group has no soft limit"
    );
}

#[test]
fn soft_limit_designs_reclaim_the_group_over_its_soft_limit_first() {
    use crate::config::SoftLimitReclaim;
    let (a_off, b_off) = soft_limit_run(SoftLimitReclaim::Off);
    let (a_tree, b_tree) = soft_limit_run(SoftLimitReclaim::Tree);
    let (a_seed, b_seed) = soft_limit_run(SoftLimitReclaim::Seed004);
    // Ignoring soft limits, the two equal readers are reclaimed alike.
    assert!(
        a_off.abs_diff(b_off) * 10 < a_off + b_off,
        "{a_off} vs {b_off}"
    );
    // The tree reclaims the offender at priority 0 first; normal reclaim
    // still takes some from b.
    assert!(a_tree > 2 * b_tree, "tree: {a_tree} vs {b_tree}");
    // Seed 004 shrinks only eligible groups while they have pages.
    assert!(
        a_seed > 10 * b_seed.max(1),
        "seed-004: {a_seed} vs {b_seed}"
    );
}

#[test]
fn seed_004_eligibility_follows_ancestors() {
    let (mut s, a, b, _, _) = soft_limit_machine(crate::config::SoftLimitReclaim::Seed004);
    let a1 = s.add_memcg(a, "a1").unwrap();
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::SoftLimit, u64::MAX)
        .unwrap();
    s.memcgs[a as usize].usage = 10;
    s.memcgs[0].usage = 10;
    assert!(!s.soft_reclaim_eligible(a1), "nothing over its soft limit");
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::SoftLimit, 5)
        .unwrap();
    assert!(s.soft_reclaim_eligible(a), "a is over");
    assert!(s.soft_reclaim_eligible(a1), "a1's parent is over");
    assert!(!s.soft_reclaim_eligible(b));
}

#[test]
fn memory_pressure_is_per_group_and_rolls_up() {
    // a/a1 is throttled over memory.high (anon, no swap); b just runs.
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let a = s.add_memcg(0, "a").unwrap();
    let a1 = s.add_memcg(a, "a1").unwrap();
    let b = s.add_memcg(0, "b").unwrap();
    s.set_memcg_knob(a1, crate::memcg::MemcgKnob::High, 128)
        .unwrap();
    let (t1, tb) = (s.add_task("t1"), s.add_task("tb"));
    s.attach_task(t1, a1).unwrap();
    s.attach_task(tb, b).unwrap();
    let (v1, vb) = (
        s.mmap_anon(t1, 1024).unwrap(),
        s.mmap_anon(tb, 1024).unwrap(),
    );
    for i in 0..1024 {
        for v in [v1, vb] {
            s.step(&Event::Access {
                vma: v,
                index: i,
                write: true,
            });
        }
    }
    let total = |m: crate::memcg::MemcgId| s.memcg_report(m).psi.some.total;
    assert!(total(a1) > 0);
    assert_eq!(total(a), total(a1), "a's only stalled task is in a1");
    assert_eq!(total(b), 0);
    assert!(total(0) >= total(a1), "the system sees every stall");
    let series = s.memcg_psi_series(a1);
    assert_eq!(series.last().unwrap().1, s.memcg_report(a1).psi);
}

#[test]
fn memory_reclaim_reclaims_on_demand_and_honours_swappiness() {
    let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 14));
    let g = s.add_memcg(0, "g").unwrap();
    let t = s.add_task("t");
    s.attach_task(t, g).unwrap();
    let v = s.mmap_anon(t, 1000).unwrap();
    touch(&mut s, v, 1000);
    // swappiness=0 reclaims file only: there is none, so EAGAIN.
    assert!(s.memory_reclaim(g, 100, Some(0)).is_err());
    assert_eq!(s.vm.pswpout, 0);
    let before = s.memcgs[g as usize].usage;
    let got = s.memory_reclaim(g, 300, Some(200)).unwrap();
    assert!(got >= 300);
    assert_eq!(s.memcgs[g as usize].usage, before - got);
    assert!(s.vm.pswpout >= 300);
    // As a scheduled knob write.
    s.schedule_memcg_knob(s.clock + 1, g, crate::memcg::MemcgKnob::Reclaim, 200)
        .unwrap();
    let usage = s.memcgs[g as usize].usage;
    s.step(&Event::Think { ns: 10 }); // the clock passes the write's time
    assert_eq!(s.memcgs[g as usize].usage, usage);
    s.step(&Event::Think { ns: 10 }); // applied before the next event
    assert!(s.memcgs[g as usize].usage <= usage - 200);
    s.check_invariants().unwrap();
}

/// v6.12 `memcg1_soft_limit_reclaim()` returns 0 at once for `order > 0`:
/// a reclaim for a large folio (`sc.order` 4) leaves the offender and the
/// tree alone; the same reclaim at order 0 takes pages from it.
#[test]
fn soft_limit_reclaim_is_skipped_for_a_higher_order_reclaim() {
    use crate::reclaim::{Reclaimer, ScanControl, SWAP_CLUSTER_MAX};
    let (mut s, a, _, fa, _) = soft_limit_machine(crate::config::SoftLimitReclaim::Tree);
    read_each(&mut s, fa, 0..2048);
    let key = s.memcgs[a as usize].soft_tree_key;
    assert!(key.is_some(), "a is in the soft-limit tree");
    let mut sc = ScanControl::new(Reclaimer::Direct, SWAP_CLUSTER_MAX, s.clock);
    sc.order = 4;
    assert_eq!(s.memcg1_soft_limit_reclaim(&mut sc), (0, 0));
    assert_eq!(s.memcgs[a as usize].soft_tree_key, key, "not popped");
    assert_eq!(s.memcg_report(a).pgsteal, 0);
    sc.order = 0;
    let (reclaimed, _) = s.memcg1_soft_limit_reclaim(&mut sc);
    assert_eq!(reclaimed, 512, "order 0: the offender is reclaimed");
    assert_eq!(s.memcg_report(a).pgsteal, 512);
    s.check_invariants().unwrap();
}

/// v6.1/v6.12 `mem_cgroup_shrink_node()` (mm/vmscan.c) wraps its one
/// `shrink_lruvec()` in `mm_vmscan_memcg_softlimit_reclaim_begin` and
/// `_end` (with that call's `nr_reclaimed`): each round of soft-limit
/// reclaim over the offender is one begin/end pair around its batches.
/// Here 16 rounds of 32 clean file pages each, 512 in all.
#[test]
fn soft_limit_reclaim_emits_a_begin_end_pair_per_shrink_node() {
    use crate::reclaim::{Reclaimer, ScanControl, SWAP_CLUSTER_MAX};
    use crate::tracepoint::{TpEvent, TracepointConfig, Tracer};
    let (mut s, _, _, fa, _) = soft_limit_machine(crate::config::SoftLimitReclaim::Tree);
    read_each(&mut s, fa, 0..2048);
    s.tp = Tracer::new(&TracepointConfig {
        events: vec!["vmscan:*".into()],
        max_events: 10_000,
        ..Default::default()
    });
    let mut sc = ScanControl::new(Reclaimer::Direct, SWAP_CLUSTER_MAX, s.clock);
    let (reclaimed, _) = s.memcg1_soft_limit_reclaim(&mut sc);
    assert_eq!(reclaimed, 512);
    let tp = s.tp.take().unwrap();
    let kinds: Vec<String> = tp
        .records
        .iter()
        .filter_map(|r| match r.event {
            TpEvent::MemcgSoftlimitReclaimBegin => Some("begin".to_string()),
            TpEvent::MemcgSoftlimitReclaimEnd { nr_reclaimed } => {
                Some(format!("end {nr_reclaimed}"))
            }
            TpEvent::LruShrinkInactive { nr_reclaimed, .. } => {
                Some(format!("batch {nr_reclaimed}"))
            }
            _ => None,
        })
        .collect();
    let round = ["begin", "batch 32", "end 32"];
    assert_eq!(kinds.len(), 16 * 3, "{kinds:?}");
    for r in kinds.chunks(3) {
        assert_eq!(r, round);
    }
}

/// v6.1/v6.12 `balance_pgdat()` runs the soft-limit pass
/// (`memcg1_soft_limit_reclaim`) one `mem_cgroup_shrink_node()` after the
/// other on kswapd's own time. With `policy.kswapd_soft_limit_rounds` each
/// kswapd step is one of them: the offender a (2,048 clean file pages over
/// a zero soft limit) gives 32 pages a step for 16 steps; the 17th finds
/// the walk's end (`mem_cgroup_iter` NULL) with a quarter of the excess
/// (512) back, ends the pass, adds its 512 pages to the iteration's
/// `sc.nr_reclaimed` and goes on to `kswapd_shrink_node()` (which frees
/// nothing more at priority 12). `kswapd_age_node()` runs once, at the
/// pass's first step, as the kernel ages once per priority iteration:
/// group b's 1,024 active anon pages (none inactive; 4,096 pages of swap)
/// lose 32 to the inactive list then, not 32 a step, and 32 more in
/// `shrink_node()`'s own deactivation at the step that ends the pass.
/// Without the option the first step does it all.
#[test]
fn kswapd_soft_limit_pass_runs_one_shrink_node_per_step() {
    use crate::page_alloc::MigrateType;
    let mut got = Vec::new();
    for on in [false, true] {
        let tree = crate::config::SoftLimitReclaim::Tree;
        let (mut s, a, b, fa, _) = soft_limit_machine_swap(tree, Some(4096));
        s.cfg.policy.kswapd_soft_limit_rounds = on;
        read_each(&mut s, fa, 0..2048);
        // 1,024 anon pages of group b (no soft limit), made active.
        let t = s.add_task("anon");
        s.attach_task(t, b).unwrap();
        let vma = s.mmap_anon(t, 1024).unwrap();
        for i in 0..1024 {
            let f = fault_anon(&mut s, vma, i);
            if list_of(&s, f) == LruList::InactiveAnon {
                let lv = &mut s.memcgs[b as usize].lruvec;
                lv.lists[LruList::InactiveAnon as usize].unlink(&mut s.folios, f);
                s.folios[f].set(flags::ACTIVE);
                let active = LruList::ActiveAnon as u8;
                lv.lists[active as usize].push_head(&mut s.folios, f, active);
            }
        }
        let mut held = Vec::new();
        while s.node.free > s.node.wmark_high {
            held.push(s.phys.zone.alloc_pages(0, MigrateType::Movable).unwrap());
            s.node.free -= 1;
        }
        s.kswapd.running = true;
        s.kswapd.priority = crate::reclaim::DEF_PRIORITY;
        let mut steps = Vec::new();
        for _ in 0..17 {
            s.kswapd_step();
            let inactive_anon =
                s.memcgs[b as usize].lruvec.lists[LruList::InactiveAnon as usize].pages;
            steps.push((
                s.memcg_report(a).pgsteal,
                s.kswapd.soft.is_some(),
                s.kswapd.reclaimed,
                inactive_anon,
            ));
        }
        got.push(steps);
    }
    assert_eq!(
        got[0][0],
        (512, false, 512, 64),
        "off: the whole pass in one step"
    );
    let on: Vec<_> = (1..=17u64)
        .map(|i| {
            let (reclaimed, inactive_anon) = if i < 17 { (0, 32) } else { (512, 64) };
            (32 * i.min(16), i < 17, reclaimed, inactive_anon)
        })
        .collect();
    assert_eq!(got[1], on, "on: 32 pages a step, the pass over at the 17th");
}
