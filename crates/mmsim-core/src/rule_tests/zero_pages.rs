//! Rule tests of zero-filled anonymous pages at swap-out and swap-in
//! (`machine.swap_zero_pages`): the 6.12 zeromap (mm/page_io.c
//! `swap_writepage` → `is_folio_zero_filled` → `swap_zeromap_folio_set`,
//! `swap_read_folio_zeromap`) and zram's same-filled pages (≤ 6.11).

use super::*;
use crate::config::SwapZeroPages;
use crate::mem::pagetable::{PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT};

/// A 64-page group with 4096 swap slots on `kind`, page-cluster 0 (no swap
/// readahead), under `mode`, and one anonymous VMA of `pages` pages.
fn zero_machine(mode: SwapZeroPages, kind: DeviceKind, pages: u64) -> (Sim, u32) {
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        memcg_max: Some(Size::from_pages(64)),
        page_cluster: 0,
        swap: DeviceConfig {
            size: Some(Size::from_pages(4096)),
            ..DeviceConfig::of(kind)
        },
        swap_zero_pages: mode,
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, pages).unwrap();
    (s, vma)
}

fn touch(s: &mut Sim, vma: u32, index: u32, write: bool) {
    s.step(&Event::Access { vma, index, write });
}

/// Pages 0..128 loaded only (zero-filled), pages 128..256 stored to, in
/// order, then a second to let writeback complete.
fn half_zero(mode: SwapZeroPages, kind: DeviceKind) -> (Sim, u32) {
    let (mut s, vma) = zero_machine(mode, kind, 256);
    for i in 0..256 {
        touch(&mut s, vma, i, i >= 128);
    }
    s.step(&Event::Think { ns: 1_000_000_000 });
    (s, vma)
}

/// The swap slot of page `i`, if it is swapped out.
fn slot_of(s: &Sim, vma: u32, i: u32) -> Option<u32> {
    let pte = s.vmas[vma as usize].pte(i);
    (pte != 0 && pte & PTE_PRESENT == 0).then(|| pte - 1)
}

#[test]
fn zeromap_swaps_out_zero_filled_pages_without_io() {
    let (s, vma) = half_zero(SwapZeroPages::Zeromap, DeviceKind::Ssd);
    let swap = s.swap.as_ref().unwrap();
    let (mut zero_out, mut data_out) = (0, 0);
    for i in 0..256 {
        if let Some(slot) = slot_of(&s, vma, i) {
            // The slot stays allocated; its zeromap bit is the page's content.
            assert_eq!(swap.zeromap_test(slot), i < 128, "page {i}");
            if i < 128 {
                zero_out += 1;
            } else {
                data_out += 1;
            }
        }
    }
    // Every loaded page is older than the 64 pages the group can hold.
    assert_eq!(zero_out, 128);
    assert!(data_out > 0);
    assert_eq!(s.vm.swpout_zero, zero_out);
    assert_eq!(s.vm.pswpout, data_out, "only the stored pages were written");
    assert_eq!(s.vm.pgpgout, 4 * data_out);
    assert_eq!(swap.used, zero_out + data_out);
    // pageout() counts every write it asked for, zero-filled or not.
    assert_eq!(s.vm.nr_vmscan_write, zero_out + data_out);
    // The group counts them too (memory.stat swpout_zero).
    let g = s.memcgs[s.task_memcg(0) as usize].stat.swpout_zero;
    assert_eq!(g, zero_out);
}

#[test]
fn write_mode_writes_zero_filled_pages_like_any_other() {
    let (s, vma) = half_zero(SwapZeroPages::Write, DeviceKind::Ssd);
    let out = (0..256).filter(|&i| slot_of(&s, vma, i).is_some()).count() as u64;
    assert_eq!((s.vm.swpout_zero, s.vm.swpin_zero), (0, 0));
    assert_eq!(s.vm.pswpout, out);
    // A first load maps its new page dirty, as before the setting existed.
    let (s, vma) = {
        let (mut s, vma) = zero_machine(SwapZeroPages::Write, DeviceKind::Ssd, 8);
        touch(&mut s, vma, 0, false);
        (s, vma)
    };
    assert_ne!(s.vmas[vma as usize].pte(0) & PTE_DIRTY, 0);
    // Zero counters are absent from the JSON of such a run.
    let json = serde_json::to_string(&s.vm).unwrap();
    assert!(!json.contains("swpout_zero") && !json.contains("swpin_zero"));
}

#[test]
fn zeromap_swap_in_fills_zeros_without_io_and_still_refaults() {
    let mut by_mode = Vec::new();
    for mode in [SwapZeroPages::Write, SwapZeroPages::Zeromap] {
        let (mut s, vma) = half_zero(mode, DeviceKind::Ssd);
        assert!(slot_of(&s, vma, 0).is_some());
        let (before, t0) = (s.vm.clone(), s.now());
        touch(&mut s, vma, 0, false);
        let d = |f: fn(&crate::stats::Vmstat) -> u64| f(&s.vm) - f(&before);
        by_mode.push((
            d(|v| v.pgmajfault),
            d(|v| v.pswpin),
            d(|v| v.pgpgin),
            d(|v| v.swpin_zero),
            d(|v| v.workingset_refault_anon),
            s.now() - t0,
        ));
        // The page came back zero-filled, in the swap cache, its slot kept.
        let f = s.vmas[vma as usize].pte(0) & PTE_FOLIO_MASK;
        assert!(!s.folios[f].test(flags::NONZERO));
        assert!(s.folios[f].test(flags::SWAPCACHE));
    }
    let (w, z) = (by_mode[0], by_mode[1]);
    assert_eq!(
        (w.0, w.1, w.2, w.3),
        (1, 1, 4, 0),
        "write mode: a read from the device"
    );
    assert_eq!(
        (z.0, z.1, z.2, z.3),
        (1, 0, 0, 1),
        "zeromap: major fault, no IO"
    );
    assert_eq!(z.4, w.4, "the refault is counted either way");
    // No device latency (90 µs on an SSD) in the zeromap fault.
    assert!(z.5 < 90_000 && w.5 >= 90_000, "{} vs {} ns", z.5, w.5);
}

#[test]
fn a_store_after_a_load_makes_the_page_non_zero() {
    let (mut s, vma) = zero_machine(SwapZeroPages::Zeromap, DeviceKind::Ssd, 256);
    // Load page 0: a new zero-filled folio, mapped clean.
    touch(&mut s, vma, 0, false);
    let pte = s.vmas[vma as usize].pte(0);
    let f = pte & PTE_FOLIO_MASK;
    assert_eq!(pte & PTE_DIRTY, 0);
    assert!(!s.folios[f].test(flags::NONZERO));
    assert_eq!(s.vm.pgfault, 1);
    // Store to it: a write-protect fault (as the kernel's copy of the zero
    // page is), and the folio is no longer zero-filled.
    touch(&mut s, vma, 0, true);
    assert_eq!(s.vm.pgfault, 2);
    assert_ne!(s.vmas[vma as usize].pte(0) & PTE_DIRTY, 0);
    assert!(s.folios[f].test(flags::NONZERO));
    // A second store is a hit.
    touch(&mut s, vma, 0, true);
    assert_eq!(s.vm.pgfault, 2);
    // Push it out: written to the device, not a zero-filled slot.
    for i in 1..256 {
        touch(&mut s, vma, i, false);
    }
    s.step(&Event::Think { ns: 1_000_000_000 });
    let slot = slot_of(&s, vma, 0).expect("page 0 swapped out");
    assert!(!s.swap.as_ref().unwrap().zeromap_test(slot));
    assert_eq!(s.vm.pswpout, 1, "page 0 is the only stored page");
    // Swapped back in by a load, it is non-zero again (its slot held data).
    touch(&mut s, vma, 0, false);
    let f = s.vmas[vma as usize].pte(0) & PTE_FOLIO_MASK;
    assert!(s.folios[f].test(flags::NONZERO));
    assert_eq!((s.vm.pswpin, s.vm.swpin_zero), (1, 0));
}

#[test]
fn zram_same_filled_pages_count_as_swap_io_without_compression() {
    let (mut zero, _) = zero_machine(SwapZeroPages::ZramSame, DeviceKind::Zram, 256);
    let (mut data, _) = zero_machine(SwapZeroPages::ZramSame, DeviceKind::Zram, 256);
    for i in 0..256 {
        touch(&mut zero, 0, i, false);
        touch(&mut data, 0, i, true);
    }
    let (rz, rd) = (zero.finish(), data.finish());
    // The same swap-outs, counted as IO either way (no zeromap before 6.12) ...
    assert_eq!(rz.vmstat.pswpout, rd.vmstat.pswpout);
    assert!(rz.vmstat.pswpout > 0);
    assert_eq!(rz.vmstat.swpout_zero, 0);
    // ... but only the stored pages were compressed.
    let compress =
        |r: &crate::result::RunResult| r.kswapd_profile.compress_ns + r.direct_profile.compress_ns;
    assert_eq!(compress(&rz), 0);
    assert!(compress(&rd) > 0);
}

#[test]
fn zram_same_needs_a_zram_device() {
    let mut cfg = MachineConfig {
        swap: DeviceConfig {
            size: Some(Size::from_pages(4096)),
            ..DeviceConfig::of(DeviceKind::Ssd)
        },
        swap_zero_pages: SwapZeroPages::ZramSame,
        ..Default::default()
    };
    let e = cfg.validate().unwrap_err().to_string();
    assert!(
        e.contains("machine.swap_zero_pages") && e.contains("zram"),
        "{e}"
    );
    cfg.swap.device = DeviceKind::Zram;
    cfg.validate().unwrap();
    assert_eq!(
        "zeromap".parse::<SwapZeroPages>(),
        Ok(SwapZeroPages::Zeromap)
    );
    assert!("zero"
        .parse::<SwapZeroPages>()
        .unwrap_err()
        .contains("allowed"));
}

/// `machine.zero_page` with the zeromap: a load maps the shared zero page (no
/// folio, nothing to swap); the store after it copies into a folio that is
/// non-zero, so it is written to swap (`pswpout`), never `swpout_zero`.
#[test]
fn a_store_after_the_zero_page_swaps_out_as_data() {
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        memcg_max: Some(Size::from_pages(64)),
        page_cluster: 0,
        zero_page: true,
        swap: DeviceConfig {
            size: Some(Size::from_pages(4096)),
            ..DeviceConfig::of(DeviceKind::Ssd)
        },
        swap_zero_pages: SwapZeroPages::Zeromap,
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 256).unwrap();
    // Pages 0..128 loaded then stored to; 128..256 only loaded.
    for i in 0..128 {
        touch(&mut s, vma, i, false);
        touch(&mut s, vma, i, true);
    }
    for i in 128..256 {
        touch(&mut s, vma, i, false);
    }
    s.step(&Event::Think { ns: 1_000_000_000 });
    // The loads took no memory: 128 folios for a group of 64 pages, so at
    // least 64 swapped (reclaim's batches take 80), every one written.
    let swapped = (0..128).filter(|&i| slot_of(&s, vma, i).is_some()).count() as u64;
    assert_eq!(swapped, 80);
    assert_eq!(s.vm.pswpout, swapped);
    assert_eq!(s.vm.swpout_zero, 0);
    for i in 128..256 {
        assert!(slot_of(&s, vma, i).is_none(), "page {i} maps the zero page");
    }
    s.check_invariants().unwrap();
}
