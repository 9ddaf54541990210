//! DAMON rule tests, continued: configuration errors, the modules' kernel
//! schemes, whole runs under DAMON_RECLAIM, module-parameter writes and the
//! vaddr schemes' madvise actions (v6.12 mm/damon/), with the machines and
//! helpers of the parent module.

use super::*;

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
        lru_sort: Some(super::super::lru_sort::LruSortParams {
            enabled: true,
            ..Default::default()
        }),
        reclaim: Some(super::super::reclaim::ReclaimParams {
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
    let ls = super::super::lru_sort::LruSortParams::default().context_config();
    assert_eq!(ls.schemes.len(), 2);
    // max_nr_accesses 20 × 500‰ = 10; 120 s / 100 ms = 1200 aggregations.
    assert_eq!(ls.schemes[0].access_pattern.nr_accesses.min, 10);
    assert_eq!(ls.schemes[1].access_pattern.age.min, 1200);
    assert_eq!(ls.schemes[0].quotas.ms, 5);
    assert_eq!(ls.schemes[0].watermarks.high, 200);
    let rc = super::super::reclaim::ReclaimParams {
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
        reclaim: Some(super::super::reclaim::ReclaimParams {
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
    use super::super::core::kdamond_tune_intervals;
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
        assert_eq!(LruList::from_index(s.folios.lru(f)), LruList::ActiveAnon);
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
        assert_eq!(LruList::from_index(s.folios.lru(f)), LruList::InactiveAnon);
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
    let mut q = super::super::Quota {
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
    q.goals.push(super::super::Goal {
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
    q.goals[0] = super::super::Goal {
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
    writes: &[(u64, super::super::module_params::DamonModule, &str, &str)],
) -> (crate::result::RunResult, Option<u64>) {
    let cfg = DamonConfig {
        seed: 1,
        reclaim: Some(super::super::reclaim::ReclaimParams {
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
    use super::super::module_params::DamonModule::Reclaim;
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
    use super::super::module_params::DamonModule::Reclaim;
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
    use super::super::module_params::DamonModule::Reclaim;
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
    use super::super::module_params::DamonModule::{LruSort, Reclaim};
    let mut s = machine(PolicyName::Cost, None);
    let w = |at, m, p: &str, v: &str| (at, m, p.to_string(), v.to_string());
    let err = |s: &mut Sim,
               ws: &[(
        u64,
        super::super::module_params::DamonModule,
        String,
        String,
    )]| {
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
        s.folios[f].order()
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
