//! The setup that `boost.rs` and `boost_rules.rs` share: the 65536-page
//! boosting machine, a file of clean or dirty page-cache pages read or
//! written one page at a time, and a boost with kswapd run to sleep.

use super::*;
use crate::event::FileId;

/// A 65536-page machine (watermarks 512/640/768) with a zram swap,
/// compaction and kcompactd on (proactiveness 0), page-table frames, and
/// the policy given.
pub(super) fn boost_machine_with(policy: PolicyConfig) -> Sim {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        policy,
        swap: DeviceConfig {
            size: Some(Size::from_pages(1 << 16)),
            ..DeviceConfig::of(DeviceKind::Zram)
        },
        kmem_accounting: true,
        pagetable_frames: true,
        ..Default::default()
    };
    cfg.compaction.enabled = true;
    cfg.compaction.proactiveness = 0;
    let s = Sim::new(cfg).unwrap();
    assert_eq!(
        [s.node.wmark_min, s.node.wmark_low, s.node.wmark_high],
        [512, 640, 768]
    );
    s
}

/// [`boost_machine_with`] under the `cost` policy (v6.2) with `factor`.
pub(super) fn boost_machine(factor: u32) -> Sim {
    boost_machine_with(PolicyConfig {
        name: PolicyName::Cost,
        cost_variant: CostVariant::V6_2,
        watermark_boost_factor: factor,
        ..Default::default()
    })
}

/// A file of `pages` pages opened by a new task, random access (no
/// readahead), nothing cached yet.
pub(super) fn random_file(s: &mut Sim, pages: u64) -> FileId {
    let t = s.add_task("t");
    let file = s.add_file("f", pages).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    file
}

/// Reads (`write` false) or writes `pages` pages of a new [`random_file`]
/// one page at a time: `pages` clean or dirty page-cache pages.
pub(super) fn file_pages(s: &mut Sim, pages: u32, write: bool) -> FileId {
    let file = random_file(s, u64::from(pages));
    for index in 0..pages {
        s.step(&if write {
            Event::FileWrite {
                file,
                index,
                pages: 1,
            }
        } else {
            Event::FileRead {
                file,
                index,
                pages: 1,
            }
        });
    }
    file
}

/// Boosts the zone by a pageblock (a steal's `boost_watermark`, then
/// `rmqueue`'s kswapd wakeup) and runs kswapd to sleep.
pub(super) fn boost_and_run_kswapd(s: &mut Sim) {
    s.phys.zone.boost_watermark();
    s.rmqueue_boosted(true);
    assert!(s.kswapd.running);
    while s.kswapd.running {
        s.kswapd_step();
    }
}
