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
    assert_eq!(LruList::from_index(s.folios.lru(f)), LruList::InactiveFile);
    assert!(s.folios[f].test(flags::REFERENCED));
    let activations = s.vm.pgactivate;
    assert_eq!(apply(&mut s, &scheme(DamosAction::LruPrio), r), (P, P));
    assert_eq!(LruList::from_index(s.folios.lru(f)), LruList::ActiveFile);
    assert_eq!(s.vm.pgactivate, activations + 1);
    // lru_deprio: back to the head of the inactive list, flags cleared.
    let deact = s.vm.pgdeactivate;
    assert_eq!(apply(&mut s, &scheme(DamosAction::LruDeprio), r), (P, P));
    assert_eq!(LruList::from_index(s.folios.lru(f)), LruList::InactiveFile);
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

// The configuration, module-parameter and whole-run tests are in `runs.rs`.
mod runs;
