//! Shadow entries on big machines and with many groups (mm/workingset.c
//! v6.12 `pack_shadow`/`unpack_shadow`, `workingset_init`'s
//! `bucket_order`): the layout gives the memcg id the bits the groups need
//! and the eviction timestamp the rest, exact while memory fits in them.

use super::*;
use crate::reclaim::workingset::ShadowLayout;

/// 64 GiB, one group, `machine.exact_shadows` (the default): 29 timestamp bits, so a refault distance of 48 GiB
/// worth of pages (above the 16 GiB the fixed 22-bit layout was exact to)
/// is measured to the page. The eviction clock is made large by
/// construction (no 12 M evictions are run).
#[test]
fn refault_distance_above_16_gib_is_exact() {
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(1 << 24),
        exact_shadows: true,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        s.shadow_layout,
        ShadowLayout {
            memcg_bits: 1,
            eviction_bits: 29,
            eviction_mask: (1 << 29) - 1,
            bucket_order: 0
        }
    );
    let file = s.add_file("f", 10).unwrap();
    s.step(&Event::FileRead {
        file,
        index: 0,
        pages: 1,
    });
    let f = file_folio(&s, file, 0);
    // An old clock, past 2^32 and the 29-bit mask, as a long run leaves it.
    s.memcgs[0].lruvec.nonresident_age = (5 << 32) + 1234;
    let shadow = s
        .workingset_eviction(f)
        .expect("a file folio leaves a shadow");
    let sh = s.shadow_layout.unpack(shadow).unwrap();
    assert_eq!(sh.memcg_id, 1);
    // The clock is read before its increment (`eviction_reads_before_inc`).
    assert_eq!(sh.eviction, ((5u64 << 32) + 1234) as u32 & ((1 << 29) - 1));
    let d = 3 * (1u64 << 22) + 12_345; // 48 GiB + 12,345 pages
    s.memcgs[0].lruvec.nonresident_age = (5 << 32) + 1234 + d;
    let (distance, _) = s.workingset_refault_distance(sh, true).unwrap();
    assert_eq!(distance, d);
    // With `exact_shadows = false`, the fixed 22 bits of earlier versions
    // quantise it to 4 pages (bucket_order 2), and the run says so.
    let fixed = ShadowLayout::new(1, 1 << 24, false);
    assert_eq!((fixed.eviction_bits, fixed.bucket_order), (22, 2));
    let r = s.finish();
    assert_eq!(r.shadow_quantised, None);
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(1 << 24),
        exact_shadows: false,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(s.shadow_layout, fixed);
    assert_eq!(
        s.finish().shadow_quantised,
        Some(crate::result::ShadowQuantised {
            bucket_order: 2,
            eviction_bits: 22,
            memcg_id_bits: 1
        })
    );
}

/// 300 groups: 9 bits of memcg id (ids up to 300), 21 of timestamp. Each
/// group reads its own file past its limit, so its own reclaim evicts page
/// 0 with a shadow naming it; read again, page 0 refaults into that group,
/// whose distance test passes (the group's own clock and lists).
#[test]
fn three_hundred_groups_each_refault_into_their_own() {
    let mut s = machine(PolicyName::Cost, 1 << 18, None);
    let n = 300;
    let mut groups = Vec::new();
    for g in 0..n {
        groups.push(limited_reader(&mut s, 0, &format!("g{g}"), 64, 200));
    }
    assert_eq!(s.memcgs.len(), n + 1);
    assert_eq!(
        (s.shadow_layout.memcg_bits, s.shadow_layout.eviction_bits),
        (9, 21)
    );
    for &(_, file) in &groups {
        for i in 0..100 {
            s.step(&Event::FileRead {
                file,
                index: i,
                pages: 1,
            });
        }
    }
    for &(m, file) in &groups {
        let sh = s
            .shadow_layout
            .unpack(s.files[file as usize].slot(0))
            .expect("page 0 was evicted by its group's limit");
        assert_eq!(sh.memcg_id, m + 1, "group {m}");
        assert_eq!(s.memcgs[m as usize].id, m + 1);
    }
    for &(m, file) in &groups {
        s.step(&Event::FileRead {
            file,
            index: 0,
            pages: 1,
        });
        let st = &s.memcgs[m as usize].stat;
        assert_eq!(st.workingset_refault_file, 1, "group {m}");
    }
    assert_eq!(s.vm.workingset_refault_file, n as u64);
    s.check_invariants().unwrap();
}

/// 65,535 groups (the kernel's `MEM_CGROUP_ID_MAX`) on 4 GiB: 16 bits of
/// id leave 14 of timestamp, so `bucket_order` = 20 − 14 = 6 and refault
/// distances are multiples of 64 pages, as `workingset_init` quantises
/// when memory exceeds the timestamp bits; the run reports it. One more
/// group is refused.
#[test]
fn quantisation_when_forced_is_the_kernels_and_reported() {
    let mut s = machine(PolicyName::Cost, 1 << 20, None);
    // 256 groups under `/`, each with up to 255 children.
    'fill: for top in 0..256 {
        let p = s.add_memcg(0, &format!("t{top}")).unwrap();
        for g in 0..255 {
            if s.memcgs.len() == crate::memcg::MAX_MEMCGS {
                break 'fill;
            }
            s.add_memcg(p, &format!("g{g}")).unwrap();
        }
    }
    assert_eq!(s.memcgs.len(), 65_535);
    let err = s.add_memcg(0, "one-too-many").unwrap_err().to_string();
    assert!(err.contains("at most 65535 memory cgroups"), "{err}");
    let sl = s.shadow_layout;
    assert_eq!(
        (sl.memcg_bits, sl.eviction_bits, sl.bucket_order),
        (16, 14, 6)
    );
    let last = 65_534 as crate::memcg::MemcgId;
    let file = s.add_file("f", 10).unwrap();
    let t = s.add_task("t");
    s.attach_task(t, last).unwrap();
    s.open(file, t).unwrap();
    s.step(&Event::FileRead {
        file,
        index: 0,
        pages: 1,
    });
    let f = file_folio(&s, file, 0);
    assert_eq!(s.folios.memcg(f), last);
    // The clock at 1000 (bucket 15, 1000 = 15 × 64 + 40) when evicted.
    s.memcgs[last as usize].lruvec.nonresident_age = 999;
    let shadow = s.workingset_eviction(f).unwrap();
    let sh = s.shadow_layout.unpack(shadow).unwrap();
    assert_eq!((sh.memcg_id, sh.eviction), (65_535, 1000 >> 6));
    // 100 pages later the clock is at 1100 (bucket 17): the distance is
    // two buckets, 128 pages, not 100.
    s.memcgs[last as usize].lruvec.nonresident_age = 1100;
    assert_eq!(s.workingset_refault_distance(sh, true).unwrap().0, 128);
    let r = s.finish();
    assert_eq!(
        r.shadow_quantised,
        Some(crate::result::ShadowQuantised {
            bucket_order: 6,
            eviction_bits: 14,
            memcg_id_bits: 16
        })
    );
}

/// Groups added after shadows exist: the shadows are rewritten in the new
/// layout and read back with the same group and timestamp.
#[test]
fn shadows_survive_a_layout_change() {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let (_, file) = limited_reader(&mut s, 0, "a", 64, 1000);
    for i in 0..200 {
        s.step(&Event::FileRead {
            file,
            index: i,
            pages: 1,
        });
    }
    let before = s
        .shadow_layout
        .unpack(s.files[file as usize].slot(0))
        .unwrap();
    assert_eq!(s.shadow_layout.memcg_bits, 2);
    for g in 0..300 {
        s.add_memcg(0, &format!("g{g}")).unwrap();
    }
    assert_eq!(s.shadow_layout.memcg_bits, 9);
    let after = s
        .shadow_layout
        .unpack(s.files[file as usize].slot(0))
        .unwrap();
    assert_eq!(after, before);
}

/// The swap-cache gauge is kept as folios enter and leave the swap cache:
/// equal to the walk of every listed folio at the end of a run with
/// swap-outs, swap-ins and frees of swap slots.
#[test]
fn nr_swapcached_is_kept_without_a_walk() {
    // An SSD (zram frees every slot at swap-in, so nothing would stay).
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(4096),
        swap: DeviceConfig {
            size: Some(Size::from_pages(16384)),
            ..DeviceConfig::of(DeviceKind::Ssd)
        },
        ..Default::default()
    })
    .unwrap();
    let t = s.add_task("t");
    let v = s.mmap_anon(t, 8000).unwrap();
    touch(&mut s, v, 8000);
    for i in 0..8000 {
        s.step(&Event::Access {
            vma: v,
            index: i,
            write: i % 3 == 0,
        });
    }
    s.check_invariants().unwrap();
    s.check_gauges().unwrap();
    let walk = s.swapcached_walk();
    let r = s.finish();
    assert_eq!(r.vmstat.nr_swapcached, walk);
    assert!(walk > 0, "some read-faulted pages stay in the swap cache");
}
