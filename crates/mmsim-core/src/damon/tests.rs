//! Rule tests of DAMON and DAMOS: scripted sequences with the exact outcome
//! mm/damon/ (v6.12) dictates, under a fixed seed.

use super::core::{
    damon_feed_loop_next_input, damon_merge_regions_of, damon_moving_sum, damon_set_regions,
    damon_update_region_access_rate, kdamond_split_regions,
};
use super::sysfs::*;
use super::vaddr::{init_regions, three_regions, IMAGE, MMAP_BASE, STACK};
use super::{Ctx, Damon, Module, Region, Rng, Scheme, Target, MIN_REGION};
use crate::config::{
    CostVariant, DeviceConfig, DeviceKind, MachineConfig, PolicyConfig, PolicyName, Size,
};
use crate::event::Event;
use crate::mem::folio::{flags, FolioId, LruList};
use crate::mem::pagetable::PTE_PRESENT;
use crate::sim::Sim;

const P: u64 = MIN_REGION;

fn machine(policy: PolicyName, damon: Option<DamonConfig>) -> Sim {
    Sim::new(MachineConfig {
        memory: Size::from_pages(4096),
        policy: PolicyConfig {
            name: policy,
            cost_variant: CostVariant::V6_2,
            ..Default::default()
        },
        swap: DeviceConfig {
            size: Some(Size::from_pages(4096)),
            ..DeviceConfig::of(DeviceKind::Zram)
        },
        damon,
        ..Default::default()
    })
    .unwrap()
}

fn one_ctx(ctx: ContextConfig) -> DamonConfig {
    DamonConfig {
        kdamonds: vec![KdamondConfig {
            contexts: vec![ctx],
        }],
        ..Default::default()
    }
}

fn scheme(action: DamosAction) -> SchemeConfig {
    SchemeConfig {
        action,
        apply_interval_us: 0,
        target_nid: None,
        access_pattern: AccessPatternConfig::default(),
        quotas: QuotasConfig::default(),
        watermarks: WatermarksConfig::default(),
        filters: Vec::new(),
    }
}

fn filter(ty: FilterType, matching: bool, allow: bool) -> FilterConfig {
    FilterConfig {
        filter_type: ty,
        matching,
        allow,
        memcg_path: None,
        addr_start: 0,
        addr_end: 0,
        target_idx: 0,
        min: 0,
        max: 0,
    }
}

fn paddr(regions: Vec<(u64, u64)>, schemes: Vec<SchemeConfig>) -> ContextConfig {
    ContextConfig {
        operations: DamonOps::Paddr,
        monitoring_attrs: MonitoringAttrs::default(),
        targets: vec![TargetConfig {
            pid_target: None,
            regions: regions
                .into_iter()
                .map(|(start, end)| AddrRangeConfig { start, end })
                .collect(),
        }],
        schemes,
    }
}

/// The first physical address of the machine.
fn base(s: &Sim) -> u64 {
    s.damon_pfn_range().0 * P
}

/// Takes DAMON out of the machine after its first step (`kdamond_init_ctx`).
fn started(s: &mut Sim) -> Box<Damon> {
    let mut d = s.damon.take().expect("damon on");
    s.kdamond_step(&mut d, 0);
    d
}

fn region(start: u64, end: u64, nr: u32, age: u32) -> Region {
    Region {
        nr_accesses: nr,
        nr_accesses_bp: nr * 10_000,
        last_nr_accesses: nr,
        age,
        ..Region::new(start, end)
    }
}

fn spans(t: &Target) -> Vec<(u64, u64)> {
    t.regions.iter().map(|r| (r.start, r.end)).collect()
}

// ---- monitoring --------------------------------------------------------

#[test]
fn the_moving_sum_drops_the_last_windows_mean_per_sample() {
    // Window 20, last aggregation 10 accesses: each sample drops 10000·10/20.
    let mut r = region(0, P, 0, 0);
    r.last_nr_accesses = 10;
    r.nr_accesses_bp = 100_000;
    damon_update_region_access_rate(&mut r, true, 20);
    assert_eq!((r.nr_accesses, r.nr_accesses_bp), (1, 105_000));
    damon_update_region_access_rate(&mut r, false, 20);
    assert_eq!((r.nr_accesses, r.nr_accesses_bp), (1, 100_000));
    // 20 accessed samples from a cold start reach exactly 20 × 10000.
    let mut r = region(0, P, 0, 0);
    for _ in 0..20 {
        damon_update_region_access_rate(&mut r, true, 20);
    }
    assert_eq!((r.nr_accesses, r.nr_accesses_bp), (20, 200_000));
    assert_eq!(damon_moving_sum(5, 10_000, 1, 0), 5u32.wrapping_sub(10_000));
}

/// One page of one task, written before every sample: every sample of its
/// one-page region finds it young.
fn page_touched_every_sample(samples: u32) -> (Sim, RunSummary) {
    let ctx = ContextConfig {
        operations: DamonOps::Fvaddr,
        monitoring_attrs: MonitoringAttrs::default(),
        targets: vec![TargetConfig {
            pid_target: Some(0),
            regions: vec![AddrRangeConfig {
                start: MMAP_BASE - P,
                end: MMAP_BASE,
            }],
        }],
        schemes: Vec::new(),
    };
    let mut s = machine(PolicyName::Cost, Some(one_ctx(ctx)));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1).unwrap();
    let mut last_before_reset = Vec::new();
    for _ in 0..samples {
        s.step(&Event::Access {
            vma,
            index: 0,
            write: true,
        });
        s.step(&Event::Think { ns: 5_000_000 });
        let d = s.damon.as_ref().unwrap();
        last_before_reset.push(d.ctxs[0].targets[0].regions[0].last_nr_accesses);
    }
    let d = s.damon.as_ref().unwrap();
    let sum = RunSummary {
        samples: d.ctxs[0].passed_sample_intervals,
        aggregations: d.ctxs[0].nr_aggregations,
        region: d.ctxs[0].targets[0].regions[0],
        last: last_before_reset,
    };
    (s, sum)
}

struct RunSummary {
    samples: u64,
    aggregations: u64,
    region: Region,
    last: Vec<u32>,
}

#[test]
fn a_page_accessed_every_sample_counts_every_sample() {
    let (s, sum) = page_touched_every_sample(45);
    // The first step (at 0) prepares. kdamond's period is the sample
    // interval plus its work (5 ms + 180 ns), a little longer than the
    // workload's (5 ms + 50 ns), and a step runs at the first event at or
    // after its time: by the last event (at 44 × 5 ms) 43 samples passed.
    assert_eq!(sum.samples, 43);
    assert_eq!(sum.aggregations, 2);
    // Each aggregation saw 20 of 20 samples accessed.
    assert!(sum.last.contains(&20));
    assert_eq!(sum.region.last_nr_accesses, 20);
    assert_eq!(sum.region.nr_accesses, 3);
    // 3 accessed samples into the window of a region that had 20 of 20:
    // each drops 10000 and adds 10000.
    assert_eq!(sum.region.nr_accesses_bp, 200_000);
    // A one-page region never splits or merges; its access rate never
    // changed by more than the threshold after the first window, so its
    // age is 1 (the first window changed it from 0 to 20).
    assert_eq!(sum.region.age, 1);
    // The last prepare made the page old and kept the access as PG_young.
    let f = s.vmas[0].pte(0) & crate::mem::pagetable::PTE_FOLIO_MASK;
    assert!(s.folios[f].test(flags::IDLE));
}

#[test]
fn kdamond_cpu_is_the_modelled_work_of_its_samples() {
    let (mut s, sum) = page_touched_every_sample(45);
    let per_pass = super::REGION_NS + s.cost.rmap_ns;
    // 44 prepares (the first at 0) and 43 checks of one region, and two
    // merges of one region.
    let want = 44 * per_pass + 43 * per_pass + 2 * super::REGION_NS;
    assert_eq!(sum.samples, 43);
    let r = s.finish();
    let d = r.damon.expect("report");
    assert_eq!(d.contexts[0].kdamond_cpu_s, want as f64 / 1e9);
    assert_eq!(d.kdamond_cpu_s, want as f64 / 1e9);
}

#[test]
fn merge_joins_adjacent_regions_within_the_threshold() {
    let mut t = Target {
        task: None,
        regions: vec![
            region(0, 4 * P, 10, 3),
            region(4 * P, 8 * P, 12, 7),
            region(8 * P, 16 * P, 30, 1),
            region(20 * P, 24 * P, 30, 1),
        ],
    };
    damon_merge_regions_of(&mut t, 2, u64::MAX);
    // |10 − 12| ≤ 2: merged, size-weighted (equal sizes): nr 11, age (4+8)/2.
    // 30 is 18 away from 11; the last region is not adjacent.
    assert_eq!(
        spans(&t),
        vec![(0, 8 * P), (8 * P, 16 * P), (20 * P, 24 * P)]
    );
    assert_eq!(t.regions[0].nr_accesses, 11);
    assert_eq!(t.regions[0].nr_accesses_bp, 110_000);
    assert_eq!(t.regions[0].age, 6);
    // sz_limit stops a merge.
    let mut t = Target {
        task: None,
        regions: vec![region(0, 4 * P, 10, 0), region(4 * P, 8 * P, 10, 0)],
    };
    damon_merge_regions_of(&mut t, 2, 7 * P);
    assert_eq!(t.regions.len(), 2);
}

#[test]
fn age_resets_when_the_access_rate_changes_beyond_the_threshold() {
    let mut changed = region(0, P, 9, 5);
    changed.last_nr_accesses = 2;
    let mut kept = region(2 * P, 3 * P, 4, 5);
    kept.last_nr_accesses = 2;
    let mut t = Target {
        task: None,
        regions: vec![changed, kept],
    };
    damon_merge_regions_of(&mut t, 2, u64::MAX);
    assert_eq!(t.regions[0].age, 0);
    assert_eq!(t.regions[1].age, 6);
}

fn ctx_with(regions: Vec<Region>, max_nr_regions: u64) -> Ctx {
    let mut c = Ctx::from_sysfs(Module::Sysfs(0), &paddr(vec![(0, P)], Vec::new()), (0, 0));
    c.attrs.max_nr_regions = max_nr_regions;
    c.targets[0].regions = regions;
    c
}

#[test]
fn split_makes_two_then_three_pieces_and_stops_above_half_the_maximum() {
    let mut rng = Rng::new(7);
    let mut last = 0;
    let mut c = ctx_with(vec![Region::new(0, 1000 * P)], 1000);
    kdamond_split_regions(&mut c, &mut last, &mut rng);
    assert_eq!(c.nr_regions(), 2);
    assert_eq!(last, 1);
    kdamond_split_regions(&mut c, &mut last, &mut rng);
    assert_eq!(c.nr_regions(), 4);
    // The count did not change since the last split: three pieces each.
    last = 4;
    kdamond_split_regions(&mut c, &mut last, &mut rng);
    assert_eq!(c.nr_regions(), 12);
    // Pieces stay contiguous and page aligned.
    let t = &c.targets[0];
    assert_eq!(t.regions[0].start, 0);
    assert_eq!(t.regions.last().unwrap().end, 1000 * P);
    assert!(t.regions.windows(2).all(|w| w[0].end == w[1].start));
    assert!(t.regions.iter().all(|r| r.start % P == 0 && r.sz() > 0));
    // Above max_nr_regions / 2 nothing splits.
    c.attrs.max_nr_regions = 22;
    kdamond_split_regions(&mut c, &mut last, &mut rng);
    assert_eq!(c.nr_regions(), 12);
    // Two-page regions are too small to split.
    let mut c = ctx_with(vec![Region::new(0, 2 * P)], 1000);
    kdamond_split_regions(&mut c, &mut last, &mut rng);
    assert_eq!(c.nr_regions(), 1);
}

#[test]
fn vaddr_starts_with_three_regions_split_evenly() {
    let maps = vec![
        (IMAGE.0, IMAGE.1, None),
        (MMAP_BASE - 30 * P, MMAP_BASE - 10 * P, Some(1)),
        (MMAP_BASE - 10 * P, MMAP_BASE, Some(0)),
        (STACK.0, STACK.1, None),
    ];
    let three = three_regions(&maps).unwrap();
    assert_eq!(
        three,
        [IMAGE, (MMAP_BASE - 30 * P, MMAP_BASE), (STACK.0, STACK.1)]
    );
    // 64 pages over 10 regions: pieces of 26214 bytes; the image stays
    // whole, the 30-page area makes 4 pieces of 7 pages (the last takes
    // the rest), the 33-page stack 5 of 6.
    let r = init_regions(&three, 10);
    let sizes: Vec<u64> = r.iter().map(|r| r.sz() / P).collect();
    assert_eq!(sizes, vec![1, 7, 7, 7, 9, 6, 6, 6, 6, 9]);
    // Fewer than two gaps: no regions.
    assert_eq!(three_regions(&maps[1..3]), None);
}

#[test]
fn vaddr_regions_follow_a_new_mapping() {
    let ctx = ContextConfig {
        operations: DamonOps::Vaddr,
        monitoring_attrs: MonitoringAttrs::default(),
        targets: vec![TargetConfig::default()],
        schemes: Vec::new(),
    };
    let mut s = machine(PolicyName::Cost, Some(one_ctx(ctx)));
    let t = s.add_task("t");
    s.mmap_anon(t, 30).unwrap();
    let mut d = started(&mut s);
    let before = d.ctxs[0].targets[0].regions.clone();
    assert_eq!(before[1].start, MMAP_BASE - 30 * P);
    s.mmap_anon(t, 5).unwrap();
    s.damon_va_update(&mut d, 0);
    let after = &d.ctxs[0].targets[0].regions;
    // The first region of the mmap area stretches down to the new mapping.
    assert_eq!(after.len(), before.len());
    assert_eq!(after[1].start, MMAP_BASE - 35 * P);
    assert_eq!(after[1].end, before[1].end);
    // damon_set_regions fills a hole and adds a range nothing intersects.
    let mut t = Target {
        task: None,
        regions: vec![Region::new(0, P), Region::new(3 * P, 4 * P)],
    };
    damon_set_regions(&mut t, &[(0, 4 * P), (10 * P, 12 * P)]);
    assert_eq!(
        spans(&t),
        vec![(0, P), (P, 3 * P), (3 * P, 4 * P), (10 * P, 12 * P)]
    );
}

// ---- DAMOS -------------------------------------------------------------

#[test]
fn quota_charges_and_splits_at_its_edge_and_resumes_after_the_charged_part() {
    let mut s = machine(PolicyName::Cost, None);
    let b = base(&s);
    let mut st = scheme(DamosAction::Stat);
    st.quotas.bytes = 10 * P;
    st.quotas.reset_interval_ms = 1000;
    let cfg = one_ctx(paddr(
        vec![(b, b + 100 * P), (b + 100 * P, b + 200 * P)],
        vec![st],
    ));
    s = Sim::new(MachineConfig {
        damon: Some(cfg),
        ..s.cfg.clone()
    })
    .unwrap();
    let mut d = started(&mut s);
    d.ctxs[0].passed_sample_intervals = 20;
    s.kdamond_apply_schemes(&mut d, 0);
    let c = &d.ctxs[0];
    assert_eq!(
        spans(&c.targets[0]),
        vec![
            (b, b + 10 * P),
            (b + 10 * P, b + 100 * P),
            (b + 100 * P, b + 200 * P)
        ]
    );
    let q = &c.schemes[0].quota;
    assert_eq!((q.esz, q.charged_sz), (10 * P, 10 * P));
    assert_eq!(
        (q.charge_target_from, q.charge_addr_from),
        (Some(0), b + 10 * P + 1)
    );
    assert_eq!(
        (c.schemes[0].stat.nr_tried, c.schemes[0].stat.sz_tried),
        (1, 10 * P)
    );
    // Same window: the quota is spent, nothing more is tried.
    d.ctxs[0].passed_sample_intervals = 40;
    s.kdamond_apply_schemes(&mut d, 0);
    assert_eq!(d.ctxs[0].schemes[0].stat.nr_tried, 1);
    // Next window: the exhausted one counts; the charged region is
    // skipped and the next one is cut one page past the resume address
    // (charge_addr_from is end + 1), then charged up to the quota.
    s.clock = 1_000_000_000;
    d.ctxs[0].passed_sample_intervals = 60;
    s.kdamond_apply_schemes(&mut d, 0);
    let c = &d.ctxs[0];
    assert_eq!(c.schemes[0].stat.qt_exceeds, 1);
    assert_eq!(
        (c.schemes[0].stat.nr_tried, c.schemes[0].stat.sz_tried),
        (2, 20 * P)
    );
    assert_eq!(
        spans(&c.targets[0]),
        vec![
            (b, b + 10 * P),
            (b + 10 * P, b + 11 * P),
            (b + 11 * P, b + 21 * P),
            (b + 21 * P, b + 100 * P),
            (b + 100 * P, b + 200 * P)
        ]
    );
    assert_eq!(c.schemes[0].quota.charge_addr_from, b + 21 * P + 1);
}

#[test]
fn the_priority_cut_off_admits_the_bucket_that_crosses_the_quota() {
    let mut st = scheme(DamosAction::LruPrio);
    st.quotas.bytes = 20 * P;
    st.quotas.reset_interval_ms = 1000;
    st.quotas.weights.nr_accesses_permil = 1;
    let mut s = machine(PolicyName::Cost, None);
    let b = base(&s);
    s = Sim::new(MachineConfig {
        damon: Some(one_ctx(paddr(vec![(b, b + 30 * P)], vec![st]))),
        ..s.cfg.clone()
    })
    .unwrap();
    let mut d = started(&mut s);
    // Scores with weight on frequency only (max_nr_accesses 20): 20 → 99,
    // 10 → 49, 5 → 24.
    d.ctxs[0].targets[0].regions = vec![
        region(b, b + 10 * P, 20, 0),
        region(b + 10 * P, b + 20 * P, 10, 0),
        region(b + 20 * P, b + 30 * P, 5, 0),
    ];
    d.ctxs[0].passed_sample_intervals = 20;
    s.kdamond_apply_schemes(&mut d, 0);
    let sch = &d.ctxs[0].schemes[0];
    assert_eq!(d.ctxs[0].hist[99], 10 * P);
    assert_eq!(d.ctxs[0].hist[49], 10 * P);
    assert_eq!(d.ctxs[0].hist[24], 10 * P);
    assert_eq!(sch.quota.min_score, 49);
    assert_eq!((sch.stat.nr_tried, sch.stat.sz_tried), (2, 20 * P));
    // Tried regions had their age reset (lru_prio is not stat).
    assert_eq!(d.ctxs[0].targets[0].regions[0].age, 0);
}

#[test]
fn hot_and_cold_scores_follow_frequency_and_age() {
    let c = ctx_with(vec![], 1000);
    let mut sch = Scheme::from_sysfs(&scheme(DamosAction::Pageout));
    sch.quota.weight_nr_accesses = 1;
    sch.quota.weight_age = 1;
    // 10 of 20 samples (freq 50), 30 aggregations = 3 s (log 2): age
    // subscore (2 + 32)·100/32/2 = 53; hot (50 + 53)/2 = 51 → 51·99/100 = 50.
    let r = region(0, P, 10, 30);
    assert_eq!(super::core::damon_hot_score(&c, &r, &sch), 50);
    assert_eq!(super::core::damon_cold_score(&c, &r, &sch), 49);
    // Idle for 100 s (log 7, negated): age subscore (−7 + 32)·100/64 = 39;
    // hot 39/2 = 19 → 18; cold 81.
    let r = region(0, P, 0, 1000);
    assert_eq!(super::core::damon_cold_score(&c, &r, &sch), 81);
}

#[test]
fn the_feedback_loop_scales_the_input_by_two_minus_the_score() {
    assert_eq!(damon_feed_loop_next_input(20_000, 10_000), 20_000);
    assert_eq!(damon_feed_loop_next_input(20_000, 5_000), 30_000);
    assert_eq!(damon_feed_loop_next_input(20_000, 15_000), 10_000);
    assert_eq!(damon_feed_loop_next_input(20_000, 20_000), 10_000);
    assert_eq!(damon_feed_loop_next_input(10_000, 12_000), 10_000);
}

#[test]
fn watermarks_activate_and_deactivate_with_hysteresis() {
    let mut s = machine(PolicyName::Cost, None);
    let mut sc = scheme(DamosAction::Stat);
    sc.watermarks = WatermarksConfig {
        metric: WmarkMetric::FreeMemRate,
        interval_us: 5_000_000,
        high: 500,
        mid: 400,
        low: 200,
    };
    let mut sch = Scheme::from_sysfs(&sc);
    let mut at = |free: u64, sch: &mut Scheme| {
        s.node.free = free;
        (s.damos_wmark_wait_us(sch), sch.wmarks.activated)
    };
    // 4096 pages: 2500 free = 610‰ > high: off.
    assert_eq!(at(2500, &mut sch), (5_000_000, false));
    // 439‰, between mid and high while inactive: stays off.
    assert_eq!(at(1800, &mut sch), (5_000_000, false));
    // 366‰, between low and mid: on.
    assert_eq!(at(1500, &mut sch), (0, true));
    // 439‰ again while active: stays on.
    assert_eq!(at(1800, &mut sch), (0, true));
    // 170‰ < low: off.
    assert_eq!(at(700, &mut sch), (5_000_000, false));
}

/// A machine with 8 faulted anonymous pages (mapped, young) and 4 file
/// pages read through a descriptor (unmapped), and its whole-memory region.
fn folios_machine(policy: PolicyName) -> (Sim, u32, u64, u64) {
    let mut s = machine(policy, None);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 8).unwrap();
    for index in 0..8 {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
    }
    let file = s.add_file("f", 4).unwrap();
    s.open(file, t).unwrap();
    s.step(&Event::FileRead {
        file,
        index: 0,
        pages: 4,
    });
    let (first, end) = s.damon_pfn_range();
    (s, vma, first * P, end * P)
}

fn apply(s: &mut Sim, sc: &SchemeConfig, r: (u64, u64)) -> (u64, u64) {
    let mut sch = Scheme::from_sysfs(sc);
    sch.set_filters_default_reject();
    for (f, p) in sch.ops_filters.iter_mut().zip(&sch.memcg_paths) {
        if let Some(p) = p {
            f.memcg = s
                .memcgs
                .iter()
                .position(|m| &m.path == p)
                .map(|m| m as crate::memcg::MemcgId);
        }
    }
    let (applied, passed, _) = s.damon_pa_apply_scheme(&Region::new(r.0, r.1), &mut sch);
    (applied, passed)
}

#[test]
fn ops_filters_allow_and_reject_by_folio_property() {
    let (mut s, _, start, end) = folios_machine(PolicyName::Cost);
    let r = (start, end);
    let with = |fs: Vec<FilterConfig>| {
        let mut sc = scheme(DamosAction::Stat);
        sc.filters = fs;
        sc
    };
    // Stat without ops filters walks nothing.
    assert_eq!(apply(&mut s, &scheme(DamosAction::Stat), r), (0, 0));
    // anon: reject → the 4 file pages pass; allow → the 8 anon pages pass
    // (the list ends in an allow filter: the rest is rejected).
    assert_eq!(
        apply(
            &mut s,
            &with(vec![filter(FilterType::Anon, true, false)]),
            r
        ),
        (0, 4 * P)
    );
    assert_eq!(
        apply(&mut s, &with(vec![filter(FilterType::Anon, true, true)]), r),
        (0, 8 * P)
    );
    // unmapped: reject → the mapped anon pages pass.
    assert_eq!(
        apply(
            &mut s,
            &with(vec![filter(FilterType::Unmapped, true, false)]),
            r
        ),
        (0, 8 * P)
    );
    // hugepage_size [4K, 4K] matches every order-0 folio.
    let mut hp = filter(FilterType::HugepageSize, true, false);
    (hp.min, hp.max) = (P, P);
    assert_eq!(apply(&mut s, &with(vec![hp.clone()]), r), (0, 0));
    (hp.min, hp.max) = (2 * P, 2 << 20);
    assert_eq!(apply(&mut s, &with(vec![hp]), r), (0, 12 * P));
    // memcg: the root group holds everything; a path naming no group
    // matches nothing.
    let mut m = filter(FilterType::Memcg, true, true);
    m.memcg_path = Some("/".into());
    assert_eq!(apply(&mut s, &with(vec![m.clone()]), r), (0, 12 * P));
    m.memcg_path = Some("/nope".into());
    assert_eq!(apply(&mut s, &with(vec![m]), r), (0, 0));
    // young: everything was just touched (file folios were never marked
    // idle), so rejecting young rejects all — and makes them old, so the
    // next pass lets all through.
    let y = with(vec![filter(FilterType::Young, true, false)]);
    assert_eq!(apply(&mut s, &y, r), (0, 0));
    assert_eq!(apply(&mut s, &y, r), (0, 12 * P));
    // First match decides: allow anon, then reject everything unmapped.
    let both = with(vec![
        filter(FilterType::Anon, true, true),
        filter(FilterType::Unmapped, true, false),
    ]);
    assert_eq!(apply(&mut s, &both, r), (0, 8 * P));
}

#[test]
fn core_filters_cut_regions_and_decide_before_the_action() {
    let mut s = machine(PolicyName::Cost, None);
    let b = base(&s);
    let mut st = scheme(DamosAction::Stat);
    let mut a = filter(FilterType::Addr, true, true);
    (a.addr_start, a.addr_end) = (b + 10 * P, b + 20 * P);
    st.filters = vec![a];
    let mut t2 = paddr(vec![(b, b + 100 * P)], vec![st.clone()]);
    t2.targets.push(TargetConfig {
        pid_target: None,
        regions: vec![AddrRangeConfig {
            start: b + 200 * P,
            end: b + 300 * P,
        }],
    });
    s = Sim::new(MachineConfig {
        damon: Some(one_ctx(t2)),
        ..s.cfg.clone()
    })
    .unwrap();
    let mut d = started(&mut s);
    d.ctxs[0].passed_sample_intervals = 20;
    s.kdamond_apply_schemes(&mut d, 0);
    // The region starting before the range is cut at its start and, not
    // matching the allow filter, rejected by default (no ops filters, last
    // core filter allows); the new piece waits for the next walk.
    assert_eq!(
        spans(&d.ctxs[0].targets[0]),
        vec![(b, b + 10 * P), (b + 10 * P, b + 100 * P)]
    );
    assert_eq!(d.ctxs[0].schemes[0].stat.nr_tried, 0);
    d.ctxs[0].passed_sample_intervals = 40;
    s.kdamond_apply_schemes(&mut d, 0);
    assert_eq!(
        spans(&d.ctxs[0].targets[0]),
        vec![
            (b, b + 10 * P),
            (b + 10 * P, b + 20 * P),
            (b + 20 * P, b + 100 * P)
        ]
    );
    // The action covered the 10 pages inside the range, but the stats and
    // the quota count the size the region had before the filter cut it
    // (damos_apply_scheme reads it first): 90 pages.
    let stat = d.ctxs[0].schemes[0].stat;
    assert_eq!((stat.nr_tried, stat.sz_tried), (1, 90 * P));
    // A target filter rejecting target 1: only target 0's regions are tried.
    let mut st = scheme(DamosAction::Stat);
    let mut tf = filter(FilterType::Target, true, false);
    tf.target_idx = 1;
    st.filters = vec![tf];
    let mut two = paddr(vec![(b, b + 100 * P)], vec![st]);
    two.targets.push(TargetConfig {
        pid_target: None,
        regions: vec![AddrRangeConfig {
            start: b + 200 * P,
            end: b + 300 * P,
        }],
    });
    s = Sim::new(MachineConfig {
        damon: Some(one_ctx(two)),
        ..s.cfg.clone()
    })
    .unwrap();
    let mut d = started(&mut s);
    d.ctxs[0].passed_sample_intervals = 20;
    s.kdamond_apply_schemes(&mut d, 0);
    let stat = d.ctxs[0].schemes[0].stat;
    assert_eq!((stat.nr_tried, stat.sz_tried), (1, 100 * P));
}

fn folio_at(s: &Sim, vma: u32, index: u32) -> FolioId {
    s.vmas[vma as usize].pte(index) & crate::mem::pagetable::PTE_FOLIO_MASK
}

fn pfn_region(s: &Sim, f: FolioId) -> (u64, u64) {
    let pfn = s.folios.head_pfn(f) as u64;
    (pfn * P, (pfn + 1) * P)
}

#[test]
fn lru_prio_and_lru_deprio_move_folios_on_the_classic_lists() {
    let (mut s, _, _, _) = folios_machine(PolicyName::Cost);
    let f = crate::mem::filemap::slot_folio(s.files[0].slot(0)).expect("resident");
    let r = pfn_region(&s, f);
    // Read once: inactive, referenced. lru_prio once more activates it.
    assert_eq!(LruList::from_index(s.folios[f].lru), LruList::InactiveFile);
    assert!(s.folios[f].test(flags::REFERENCED));
    let activations = s.vm.pgactivate;
    assert_eq!(apply(&mut s, &scheme(DamosAction::LruPrio), r), (P, P));
    assert_eq!(LruList::from_index(s.folios[f].lru), LruList::ActiveFile);
    assert_eq!(s.vm.pgactivate, activations + 1);
    // lru_deprio: back to the head of the inactive list, flags cleared.
    let deact = s.vm.pgdeactivate;
    assert_eq!(apply(&mut s, &scheme(DamosAction::LruDeprio), r), (P, P));
    assert_eq!(LruList::from_index(s.folios[f].lru), LruList::InactiveFile);
    assert!(!s.folios[f].test(flags::ACTIVE) && !s.folios[f].test(flags::REFERENCED));
    assert_eq!(
        s.memcgs[0].lruvec.lists[LruList::InactiveFile as usize].head,
        f
    );
    assert_eq!(s.vm.pgdeactivate, deact + 1);
    // An inactive folio is not deactivated again (applied still counts it).
    assert_eq!(apply(&mut s, &scheme(DamosAction::LruDeprio), r), (P, P));
    assert_eq!(s.vm.pgdeactivate, deact + 1);
}

#[test]
fn lru_prio_and_lru_deprio_on_the_multi_gen_lru() {
    use crate::reclaim::lru_gen::{folio_lru_gen, lru_gen_from_seq};
    let (mut s, vma, _, _) = folios_machine(PolicyName::Mglru);
    let anon = folio_at(&s, vma, 3);
    let file = crate::mem::filemap::slot_folio(s.files[0].slot(0)).expect("resident");
    let lg = &s.memcgs[0].lruvec.lrugen;
    let max_seq = lg.max_seq;
    assert_eq!((max_seq, lg.min_seq), (3, [0, 0]));
    // Both folios made young (v6.14 `lru_gen_folio_seq`: active with
    // PG_workingset enters max_seq).
    for f in [anon, file] {
        s.lru_gen_del_folio(f, false);
        s.folios[f].set(flags::ACTIVE | flags::WORKINGSET);
        s.lru_gen_add_folio(f, false);
        assert_eq!(folio_lru_gen(&s.folios[f]), Some(lru_gen_from_seq(max_seq)));
    }
    // lru_deprio re-adds them as not active (lru_gen_add_folio, v6.14):
    // anon outside the swap cache to max_seq − 1, file with PG_workingset
    // to one above the oldest (max_seq + 1 − (MAX_NR_GENS − 1)).
    let deact = s.vm.pgdeactivate;
    for f in [anon, file] {
        let r = pfn_region(&s, f);
        assert_eq!(apply(&mut s, &scheme(DamosAction::LruDeprio), r), (P, P));
    }
    assert_eq!(
        folio_lru_gen(&s.folios[anon]),
        Some(lru_gen_from_seq(max_seq - 1))
    );
    assert_eq!(
        folio_lru_gen(&s.folios[file]),
        Some(lru_gen_from_seq(max_seq - 2))
    );
    assert_eq!(s.vm.pgdeactivate, deact + 2);
    // lru_prio: folio_mark_accessed under MGLRU only marks a reference
    // (PG_referenced, then the tier counter); the generation stays.
    s.folios[file].clear(flags::REFERENCED);
    let r = pfn_region(&s, file);
    assert_eq!(apply(&mut s, &scheme(DamosAction::LruPrio), r), (P, P));
    assert!(s.folios[file].test(flags::REFERENCED));
    assert_eq!(
        folio_lru_gen(&s.folios[file]),
        Some(lru_gen_from_seq(max_seq - 2))
    );
    s.check_invariants().unwrap();
}

#[test]
fn pageout_goes_through_reclaim_and_spares_pages_touched_since_the_check() {
    let (mut s, vma, start, end) = folios_machine(PolicyName::Cost);
    let pageout = scheme(DamosAction::Pageout);
    // Everything was just touched (the file folios were never marked
    // idle): the default young filter keeps it all, and makes it old.
    assert_eq!(apply(&mut s, &pageout, (start, end)), (0, 0));
    assert_eq!(s.vm.pswpout, 0);
    // Not touched since: isolated and reclaimed by shrink_folio_list —
    // the anon pages swapped to zram, the clean file pages dropped.
    let free = s.node.free;
    assert_eq!(apply(&mut s, &pageout, (start, end)), (12 * P, 12 * P));
    assert_eq!(s.vm.pswpout, 8);
    assert_eq!(s.node.free, free + 12);
    assert_eq!(
        s.vmas[vma as usize].pte(0) & crate::mem::pagetable::PTE_PRESENT,
        0
    );
    s.check_invariants().unwrap();
    // A page touched since the last check stays.
    s.step(&Event::Access {
        vma,
        index: 0,
        write: false,
    });
    assert_eq!(apply(&mut s, &pageout, (start, end)), (0, 0));
    // An allow filter decides before the temporary young filter: allowing
    // anon pages pages out the touched one too (first match decides).
    let mut anon = scheme(DamosAction::Pageout);
    anon.filters = vec![filter(FilterType::Anon, true, true)];
    s.step(&Event::Access {
        vma,
        index: 0,
        write: false,
    });
    assert_eq!(apply(&mut s, &anon, (start, end)), (P, P));
    s.check_invariants().unwrap();
}

#[test]
fn pageout_works_on_the_multi_gen_lru() {
    let (mut s, _, start, end) = folios_machine(PolicyName::Mglru);
    let pageout = scheme(DamosAction::Pageout);
    assert_eq!(apply(&mut s, &pageout, (start, end)), (0, 0));
    assert_eq!(apply(&mut s, &pageout, (start, end)), (12 * P, 12 * P));
    assert_eq!(s.vm.pswpout, 8);
    s.check_invariants().unwrap();
}

// ---- configuration and runs --------------------------------------------

#[test]
fn bad_configurations_name_the_field() {
    let mut cfg = one_ctx(paddr(vec![], vec![scheme(DamosAction::MigrateCold)]));
    let e = cfg.validate().unwrap_err();
    assert_eq!(
        e.field,
        "machine.damon.kdamonds[0].contexts[0].schemes[0].action"
    );
    assert!(e.message.contains("one node"), "{e}");
    cfg.kdamonds[0].contexts[0].schemes = vec![scheme(DamosAction::Willneed)];
    assert!(cfg.validate().is_err());
    cfg.kdamonds[0].contexts[0].schemes.clear();
    cfg.kdamonds[0].contexts[0].monitoring_attrs.nr_regions.min = 2;
    let e = cfg.validate().unwrap_err();
    assert_eq!(
        e.field,
        "machine.damon.kdamonds[0].contexts[0].monitoring_attrs.nr_regions"
    );
    cfg.kdamonds[0].contexts[0].monitoring_attrs.nr_regions.min = 10;
    cfg.kdamonds[0].contexts[0]
        .monitoring_attrs
        .intervals
        .aggr_us = 10;
    let e = cfg.validate().unwrap_err();
    assert!(e.field.ends_with("intervals.aggr_us"), "{e}");
    let both = DamonConfig {
        lru_sort: Some(super::lru_sort::LruSortParams {
            enabled: true,
            ..Default::default()
        }),
        reclaim: Some(super::reclaim::ReclaimParams {
            enabled: true,
            ..Default::default()
        }),
        ..Default::default()
    };
    assert!(both.validate().unwrap_err().message.contains("EBUSY"));
    let lru = MachineConfig {
        policy: PolicyConfig {
            name: PolicyName::Lru,
            ..Default::default()
        },
        damon: Some(DamonConfig::default()),
        ..Default::default()
    };
    assert_eq!(lru.validate().unwrap_err().field, "machine.damon");
}

#[test]
fn the_modules_build_their_kernel_schemes() {
    let ls = super::lru_sort::LruSortParams::default().context_config();
    assert_eq!(ls.schemes.len(), 2);
    // max_nr_accesses 20 × 500‰ = 10; 120 s / 100 ms = 1200 aggregations.
    assert_eq!(ls.schemes[0].access_pattern.nr_accesses.min, 10);
    assert_eq!(ls.schemes[1].access_pattern.age.min, 1200);
    assert_eq!(ls.schemes[0].quotas.ms, 5);
    assert_eq!(ls.schemes[0].watermarks.high, 200);
    let rc = super::reclaim::ReclaimParams {
        skip_anon: true,
        quota_mem_pressure_us: 1000,
        ..Default::default()
    }
    .context_config();
    let sc = &rc.schemes[0];
    assert_eq!(sc.action, DamosAction::Pageout);
    assert_eq!(sc.quotas.bytes, 128 << 20);
    assert_eq!(sc.quotas.weights.age_permil, 1);
    assert_eq!(sc.filters[0].filter_type, FilterType::Anon);
    assert_eq!(sc.quotas.goals[0].target_metric, GoalMetric::SomeMemPsiUs);
}

/// A workload touching a hot 64-page set every step and a cold 192-page
/// set once, under DAMON_RECLAIM tuned to act within the run.
fn reclaim_run(seed: u64) -> crate::result::RunResult {
    let cfg = DamonConfig {
        seed,
        reclaim: Some(super::reclaim::ReclaimParams {
            enabled: true,
            min_age: 2_000_000,
            wmarks_high: 1000,
            wmarks_mid: 999,
            wmarks_low: 0,
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut s = machine(PolicyName::Cost, Some(cfg));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 256).unwrap();
    for index in 64..256 {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
    }
    for i in 0..20_000u32 {
        s.step(&Event::Access {
            vma,
            index: i % 64,
            write: true,
        });
        s.step(&Event::Think { ns: 500_000 });
    }
    s.finish()
}

#[test]
fn damon_reclaim_pages_out_the_cold_set_and_keeps_the_hot_one() {
    let r = reclaim_run(1);
    let d = r.damon.as_ref().expect("report");
    assert_eq!(d.contexts[0].name, "damon_reclaim");
    let st = &d.contexts[0].schemes[0];
    assert!(st.stat.sz_applied > 0, "{st:?}");
    // Every pageout was a swap-out. All 192 cold pages went and stayed
    // out; a hot page paged out (one not touched between DAMON's last
    // mkold and the pageout) faulted back in.
    assert_eq!(r.vmstat.pswpout * P, st.stat.sz_applied);
    assert_eq!(r.vmstat.pswpout - r.vmstat.pswpin, 192);
    assert_eq!(
        d.module_stats["bytes_reclaimed_regions"],
        st.stat.sz_applied
    );
    // Same seed, same bits.
    assert_eq!(r, reclaim_run(1));
}

#[test]
fn interval_tuning_doubles_or_halves_the_sampling_interval_within_bounds() {
    use super::core::kdamond_tune_intervals;
    let mk = |nr: u32| {
        let mut c = ctx_with(vec![region(0, P, nr, 7)], 1000);
        c.attrs.goal = IntervalsGoal {
            access_bp: 40,
            aggrs: 3,
            min_sample_us: 2_000,
            max_sample_us: 8_000,
        };
        c
    };
    // No access seen: score 0, the feedback loop doubles (adaptation 20000 bp),
    // 10 ms clamped to max_sample_us; aggr keeps its 20 samples; age rescaled
    // by old/new aggregation (7 × 100 / 160 = 4).
    let mut c = mk(0);
    kdamond_tune_intervals(&mut c);
    assert_eq!((c.attrs.sample_us, c.attrs.aggr_us), (8_000, 160_000));
    assert_eq!(c.targets[0].regions[0].age, 4);
    // Every sample accessed: score far above the 0.4 % goal, adaptation
    // 5000 bp (halved), 2.5 ms, above min_sample_us.
    let mut c = mk(20);
    kdamond_tune_intervals(&mut c);
    assert_eq!((c.attrs.sample_us, c.attrs.aggr_us), (2_500, 50_000));
    // nr_accesses rescaled through basis points: 20 of 20 stays 20 of 20.
    assert_eq!(c.targets[0].regions[0].nr_accesses, 20);
    assert_eq!(c.targets[0].regions[0].nr_accesses_bp, 200_000);
}

#[test]
fn vaddr_cold_deactivates_the_regions_pages_and_applies_its_size() {
    let ctx = ContextConfig {
        operations: DamonOps::Vaddr,
        monitoring_attrs: MonitoringAttrs::default(),
        targets: vec![TargetConfig {
            pid_target: Some(0),
            regions: Vec::new(),
        }],
        schemes: vec![scheme(DamosAction::Cold)],
    };
    let mut s = machine(PolicyName::Cost, Some(one_ctx(ctx)));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 8).unwrap();
    for index in 0..8 {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
    }
    // Activate them first (two marks each).
    for index in 0..8 {
        let f = folio_at(&s, vma, index);
        s.folio_mark_accessed(f);
        s.folio_mark_accessed(f);
        assert_eq!(LruList::from_index(s.folios[f].lru), LruList::ActiveAnon);
    }
    let d = started(&mut s);
    let sch = d.ctxs[0].schemes[0].clone();
    // MADV_COLD over the mapping: young bits cleared, folios deactivated; the
    // applied size is the whole region (madvise succeeded).
    let r = Region::new(MMAP_BASE - 8 * P, MMAP_BASE);
    let (applied, passed, _) = s.damon_va_apply_scheme(Some(t), &r, &sch);
    assert_eq!((applied, passed), (8 * P, 0));
    for index in 0..8 {
        let f = folio_at(&s, vma, index);
        assert_eq!(LruList::from_index(s.folios[f].lru), LruList::InactiveAnon);
        assert_eq!(
            s.vmas[vma as usize].pte(index) & crate::mem::pagetable::PTE_YOUNG,
            0
        );
    }
    // A range reaching past the mapping fails with -ENOMEM: nothing applied.
    let r = Region::new(MMAP_BASE - 9 * P, MMAP_BASE);
    assert_eq!(s.damon_va_apply_scheme(Some(t), &r, &sch).0, 0);
}

#[test]
fn the_effective_quota_takes_the_smallest_of_size_time_and_goal() {
    let mut s = machine(PolicyName::Cost, None);
    let mut q = super::Quota {
        ms: 10,
        ..Default::default()
    };
    // No charge yet: 4 MiB per ms (PAGE_SIZE × 1024) × 10 ms.
    s.damos_set_effective_quota(&mut q, 0);
    assert_eq!(q.esz, 40 << 20);
    // 1 MiB charged in 1 ms: 1 MiB/ms × 10 ms, then capped by the size quota.
    (q.total_charged_sz, q.total_charged_ns) = (1 << 20, 1_000_000);
    s.damos_set_effective_quota(&mut q, 0);
    assert_eq!(q.esz, 10 << 20);
    q.sz = 5 << 20;
    s.damos_set_effective_quota(&mut q, 0);
    assert_eq!(q.esz, 5 << 20);
    // A user_input goal half achieved: esz_bp from the floor 10,000 grows by
    // half (15,000 bp), i.e. 1 byte: goal-driven quotas start tiny and grow.
    q.goals.push(super::Goal {
        metric: GoalMetric::UserInput,
        target_value: 10_000,
        current_value: 5_000,
        last_psi_total: 0,
    });
    s.damos_set_effective_quota(&mut q, 0);
    assert_eq!((q.esz_bp, q.esz), (15_000, 1));
    s.damos_set_effective_quota(&mut q, 0);
    assert_eq!((q.esz_bp, q.esz), (22_500, 2));
    // The node's free memory as a goal: all 4096 pages free is 10,000 bp.
    q.goals[0] = super::Goal {
        metric: GoalMetric::NodeMemFreeBp,
        target_value: 5_000,
        current_value: 0,
        last_psi_total: 0,
    };
    s.damos_set_effective_quota(&mut q, 0);
    assert_eq!(q.goals[0].current_value, 10_000);
    // Score 20,000 (twice the goal): the input drops to the minimum.
    assert_eq!(q.esz_bp, 10_000);
}

/// `tried_regions/` (`damon_sysfs_before_damos_apply`): the regions one apply
/// pass tried, their bytes, and the part of them inside the task's mappings;
/// each pass starts the list anew.
#[test]
fn tried_regions_are_the_last_apply_pass() {
    let mut st = scheme(DamosAction::Stat);
    st.access_pattern.nr_accesses = MinMax { min: 0, max: 0 };
    st.access_pattern.age = MinMax {
        min: 10,
        max: u32::MAX as u64,
    };
    let ctx = ContextConfig {
        operations: DamonOps::Vaddr,
        monitoring_attrs: MonitoringAttrs::default(),
        targets: vec![TargetConfig::default()],
        schemes: vec![st],
    };
    let mut s = machine(PolicyName::Cost, Some(one_ctx(ctx)));
    let t = s.add_task("t");
    s.mmap_anon(t, 30).unwrap();
    let mut d = started(&mut s);
    let m = MMAP_BASE;
    // The image page, a 10-page hole below the mapping, the mapping's cold
    // 20 pages and its hot 10 pages.
    d.ctxs[0].targets[0].regions = vec![
        region(IMAGE.0, IMAGE.1, 0, 20),
        region(m - 40 * P, m - 30 * P, 0, 20),
        region(m - 30 * P, m - 10 * P, 0, 20),
        region(m - 10 * P, m, 5, 20),
    ];
    d.ctxs[0].passed_sample_intervals = 20;
    s.kdamond_apply_schemes(&mut d, 0);
    assert_eq!(d.ctxs[0].schemes[0].last_tried, (3, 31 * P, 20 * P));
    d.ctxs[0].targets[0].regions[3] = region(m - 10 * P, m, 0, 20);
    d.ctxs[0].passed_sample_intervals = 40;
    s.kdamond_apply_schemes(&mut d, 0);
    assert_eq!(d.ctxs[0].schemes[0].last_tried, (4, 41 * P, 30 * P));
    assert_eq!(d.ctxs[0].schemes[0].stat.nr_tried, 7);
    // Not due (the next apply is at 60 samples): the list stays.
    d.ctxs[0].targets[0].regions.truncate(1);
    d.ctxs[0].passed_sample_intervals = 50;
    s.kdamond_apply_schemes(&mut d, 0);
    assert_eq!(d.ctxs[0].schemes[0].last_tried, (4, 41 * P, 30 * P));
    s.damon = Some(d);
    let rep = s.damon_report().unwrap();
    let sc = &rep.contexts[0].schemes[0];
    assert_eq!(
        (
            sc.nr_tried_regions,
            sc.tried_regions_bytes,
            sc.tried_regions_mapped_bytes
        ),
        (4, 41 * P, 30 * P)
    );
}

/// `reclaim_run`'s workload under DAMON_RECLAIM (min_age 2 s, watermarks
/// always active), `enabled` from the start or not, with module parameter
/// writes; returns the result and the clock at the first pageout.
fn reclaim_writes_run(
    enabled: bool,
    writes: &[(u64, super::module_params::DamonModule, &str, &str)],
) -> (crate::result::RunResult, Option<u64>) {
    let cfg = DamonConfig {
        seed: 1,
        reclaim: Some(super::reclaim::ReclaimParams {
            enabled,
            min_age: 2_000_000,
            wmarks_high: 1000,
            wmarks_mid: 999,
            wmarks_low: 0,
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut s = machine(PolicyName::Cost, Some(cfg));
    let w: Vec<_> = writes
        .iter()
        .map(|&(at, m, p, v)| (at, m, p.to_string(), v.to_string()))
        .collect();
    s.schedule_damon_module_writes(&w).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 256).unwrap();
    for index in 64..256 {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
    }
    let mut first = None;
    for i in 0..20_000u32 {
        s.step(&Event::Access {
            vma,
            index: i % 64,
            write: true,
        });
        s.step(&Event::Think { ns: 500_000 });
        if first.is_none() && s.vmstat().pswpout > 0 {
            first = Some(s.now());
        }
    }
    (s.finish(), first)
}

const SEC: u64 = 1_000_000_000;

#[test]
fn enabling_damon_reclaim_at_5s_starts_its_pageouts_after_5s_plus_min_age() {
    use super::module_params::DamonModule::Reclaim;
    let (r, first) = reclaim_writes_run(false, &[(5 * SEC, Reclaim, "enabled", "Y")]);
    let d = r.damon.as_ref().expect("report");
    assert_eq!(d.contexts.len(), 1);
    assert_eq!(d.contexts[0].name, "damon_reclaim");
    // Its regions are born at 5 s: none is 2 s old before 7 s.
    let first = first.expect("paged out");
    assert!(
        (7 * SEC..8 * SEC).contains(&first),
        "first pageout at {first}"
    );
    // Most of the 192 cold pages are out by 10 s (3 s of pageouts; the
    // whole-run module gets all 192 in 10 s).
    let out = r.vmstat.pswpout - r.vmstat.pswpin;
    assert!((150..=192).contains(&out), "{out}");
    // kdamond sampled only after 5 s: at most (10 s - 5 s) / 5 ms samples.
    assert!(
        d.contexts[0].nr_samples <= 1000,
        "{}",
        d.contexts[0].nr_samples
    );
    assert!(
        d.contexts[0].nr_samples > 900,
        "{}",
        d.contexts[0].nr_samples
    );
    assert_eq!(d.module_writes.len(), 1);
    // Made at the first event at or after 5 s (a timer fires at events).
    let t = d.module_writes[0].t_s;
    assert!((5.0..5.001).contains(&t), "{t}");
    assert_eq!(
        d.module_writes[0].result,
        "kdamond started with the parameters"
    );
    // Never enabled: no kdamond, no pageout.
    let (r, first) = reclaim_writes_run(false, &[]);
    assert_eq!(first, None);
    assert!(r.damon.expect("report").contexts.is_empty());
}

#[test]
fn a_parameter_write_without_commit_inputs_changes_nothing() {
    use super::module_params::DamonModule::Reclaim;
    let (base, base_first) = reclaim_writes_run(true, &[]);
    let (stored, stored_first) =
        reclaim_writes_run(true, &[(SEC, Reclaim, "min_age", "100000000")]);
    assert_eq!(base_first, stored_first);
    assert_eq!(base.vmstat, stored.vmstat);
    let (bd, sd) = (base.damon.unwrap(), stored.damon.unwrap());
    assert_eq!(bd.contexts, sd.contexts);
    assert_eq!(sd.module_writes.len(), 1);
    assert!(sd.module_writes[0].result.starts_with("stored"));
    // With commit_inputs, kdamond applies min_age = 100 s at its next
    // aggregation (every 100 ms): nothing is that old in a 10 s run.
    let (committed, first) = reclaim_writes_run(
        true,
        &[
            (SEC, Reclaim, "min_age", "100000000"),
            (SEC, Reclaim, "commit_inputs", "Y"),
        ],
    );
    assert_eq!(first, None);
    assert_eq!(committed.vmstat.pswpout, 0);
    let cd = committed.damon.unwrap();
    let commit = &cd.module_writes[2];
    assert_eq!(commit.param, "commit");
    assert_eq!(commit.result, "parameters applied (after_aggregation)");
    assert!(commit.t_s > 1.0 && commit.t_s <= 1.11, "{}", commit.t_s);
    // The scheme's stats survive the commit (damos_commit keeps them).
    assert_eq!(cd.contexts[0].schemes[0].stat.nr_applied, 0);
    assert!(cd.contexts[0].schemes[0].stat.nr_tried == 0);
}

#[test]
fn disabling_damon_reclaim_stops_its_kdamond_and_drops_its_regions() {
    use super::module_params::DamonModule::Reclaim;
    let (r, _) = reclaim_writes_run(true, &[(SEC, Reclaim, "enabled", "N")]);
    let d = r.damon.unwrap();
    // 1 s of 5 ms samples, then nothing.
    assert!(
        (190..=200).contains(&d.contexts[0].nr_samples),
        "{}",
        d.contexts[0].nr_samples
    );
    assert_eq!(d.contexts[0].nr_regions, 0);
    assert_eq!(r.vmstat.pswpout, 0);
    assert_eq!(d.module_writes[0].result, "kdamond stopped");
}

#[test]
fn bad_module_parameter_writes_name_the_write() {
    use super::module_params::DamonModule::{LruSort, Reclaim};
    let mut s = machine(PolicyName::Cost, None);
    let w = |at, m, p: &str, v: &str| (at, m, p.to_string(), v.to_string());
    let err = |s: &mut Sim, ws: &[(u64, super::module_params::DamonModule, String, String)]| {
        let (i, e) = s.schedule_damon_module_writes(ws).unwrap_err();
        format!("{i}: {e}")
    };
    assert_eq!(
        err(
            &mut s,
            &[w(0, Reclaim, "min_age", "1"), w(0, Reclaim, "min_aeg", "1")]
        )
        .split(" (")
        .next()
        .unwrap(),
        "1: damon_reclaim has no parameter `min_aeg`"
    );
    assert_eq!(
        err(&mut s, &[w(0, LruSort, "kdamond_pid", "1")]),
        "0: /sys/module/damon_lru_sort/parameters/kdamond_pid: read-only (mode 0400)"
    );
    assert_eq!(
        err(&mut s, &[w(0, Reclaim, "quota_ms", "ten")]),
        "0: /sys/module/damon_reclaim/parameters/quota_ms: `ten` is not an unsigned integer (-EINVAL)"
    );
    // Invalid only when applied: the sample interval 0 at commit_inputs.
    let e = err(
        &mut s,
        &[
            w(SEC, Reclaim, "sample_interval", "0"),
            w(2 * SEC, Reclaim, "commit_inputs", "Y"),
        ],
    );
    assert!(
        e.starts_with("1: commit_inputs=Y would apply invalid parameters"),
        "{e}"
    );
    assert!(e.contains("sample_interval"), "{e}");
    let e = err(
        &mut s,
        &[
            w(0, LruSort, "hot_thres_access_freq", "1001"),
            w(1, LruSort, "enabled", "Y"),
        ],
    );
    assert!(e.starts_with("1: enabled=Y would apply"), "{e}");
    // Refused writes schedule nothing.
    assert!(s.damon.is_none());
}

/// A vaddr context over task 0 with one scheme of `action`.
fn vaddr_one(action: DamosAction) -> DamonConfig {
    one_ctx(ContextConfig {
        operations: DamonOps::Vaddr,
        monitoring_attrs: MonitoringAttrs::default(),
        targets: vec![TargetConfig {
            pid_target: Some(0),
            regions: Vec::new(),
        }],
        schemes: vec![scheme(action)],
    })
}

#[test]
fn vaddr_willneed_reads_swapped_pages_into_the_swap_cache() {
    let mut s = machine(PolicyName::Cost, Some(vaddr_one(DamosAction::Willneed)));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 8).unwrap();
    for index in 0..8 {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
    }
    let d = started(&mut s);
    let willneed = d.ctxs[0].schemes[0].clone();
    let pageout = Scheme::from_sysfs(&scheme(DamosAction::Pageout));
    let r = Region::new(MMAP_BASE - 8 * P, MMAP_BASE);
    // MADV_PAGEOUT first: all 8 pages to zram, their PTEs swap entries.
    s.damon_va_apply_scheme(Some(t), &r, &pageout);
    assert_eq!(s.vmstat().pswpout, 8);
    let pte = |s: &Sim, i| s.vmas[vma as usize].pte(i);
    assert!((0..8).all(|i| pte(&s, i) != 0 && pte(&s, i) & PTE_PRESENT == 0));
    // MADV_WILLNEED over the upper half: 4 pages read back into the swap
    // cache (pswpin), still unmapped; the whole region applied.
    let half = Region::new(MMAP_BASE - 4 * P, MMAP_BASE);
    let (applied, _, _) = s.damon_va_apply_scheme(Some(t), &half, &willneed);
    assert_eq!(applied, 4 * P);
    assert_eq!(s.vmstat().pswpin, 4);
    assert!((0..8).all(|i| pte(&s, i) & PTE_PRESENT == 0));
    // Again: they are in the swap cache already, nothing is read.
    s.damon_va_apply_scheme(Some(t), &half, &willneed);
    assert_eq!(s.vmstat().pswpin, 4);
    // A fault on a read-ahead page is a swap-cache hit (no major fault); on
    // one left in swap it reads (a major fault).
    let majors = s.vmstat().pgmajfault;
    s.step(&Event::Access {
        vma,
        index: 7,
        write: false,
    });
    assert_eq!(s.vmstat().pgmajfault, majors);
    s.step(&Event::Access {
        vma,
        index: 0,
        write: false,
    });
    assert_eq!(s.vmstat().pgmajfault, majors + 1);
    assert_eq!(s.vmstat().pswpin, 5);
}

#[test]
fn vaddr_hugepage_and_nohugepage_set_the_mappings_thp_advice() {
    use crate::huge_memory::{ThpConfig, ThpSizeConfig, ThpSizeEnabled, VmaThpAdvice};
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(4096),
        policy: PolicyConfig {
            name: PolicyName::Cost,
            ..Default::default()
        },
        // 64 KiB folios only under MADV_HUGEPAGE.
        thp: ThpConfig {
            hugepages_64kb: ThpSizeConfig {
                enabled: ThpSizeEnabled::Madvise,
            },
            ..Default::default()
        },
        damon: Some(vaddr_one(DamosAction::Hugepage)),
        ..Default::default()
    })
    .unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let d = started(&mut s);
    let hugepage = d.ctxs[0].schemes[0].clone();
    let nohugepage = Scheme::from_sysfs(&scheme(DamosAction::Nohugepage));
    let fault = |s: &mut Sim, index| {
        s.step(&Event::Access {
            vma,
            index,
            write: true,
        });
        let f = s.vmas[vma as usize].pte(index) & crate::mem::pagetable::PTE_FOLIO_MASK;
        s.folios[f].order
    };
    // [machine.thp] vma_advice = none: base pages.
    assert_eq!(fault(&mut s, 0), 0);
    // MADV_HUGEPAGE over part of the mapping advises the whole mapping.
    let part = Region::new(MMAP_BASE - 16 * P, MMAP_BASE);
    assert_eq!(s.damon_va_apply_scheme(Some(t), &part, &hugepage).0, 16 * P);
    assert_eq!(s.vmas[vma as usize].thp_advice, VmaThpAdvice::Hugepage);
    assert_eq!(fault(&mut s, 16), 4);
    // MADV_NOHUGEPAGE: base pages again, whatever the settings.
    let all = Region::new(MMAP_BASE - 64 * P, MMAP_BASE);
    assert_eq!(
        s.damon_va_apply_scheme(Some(t), &all, &nohugepage).0,
        64 * P
    );
    assert_eq!(s.vmas[vma as usize].thp_advice, VmaThpAdvice::Nohugepage);
    assert_eq!(fault(&mut s, 32), 0);
    // A region reaching past the mapping: -ENOMEM, nothing applied, but
    // the mapped part is advised (madvise acts before it fails).
    let past = Region::new(MMAP_BASE - 64 * P, MMAP_BASE + P);
    assert_eq!(s.damon_va_apply_scheme(Some(t), &past, &hugepage).0, 0);
    assert_eq!(s.vmas[vma as usize].thp_advice, VmaThpAdvice::Hugepage);
    s.check_invariants().unwrap();
}
