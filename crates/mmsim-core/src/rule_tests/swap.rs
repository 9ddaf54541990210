//! Rule tests of swap: swap-in slot freeing, `swapin_nr_pages`, swap
//! readahead, and swap writes completed during limit reclaim.

use super::*;

#[test]
fn swap_in_keeps_the_slot_on_ssd_but_frees_it_on_zram_and_on_write() {
    for (kind, write, keeps) in [
        (DeviceKind::Ssd, false, true),
        (DeviceKind::Zram, false, false),
        (DeviceKind::Ssd, true, false),
    ] {
        let (mut s, vma) = swapped_out_region(kind, 64, 256);
        let pte = s.vmas[vma as usize].pte(0);
        assert!(
            pte != 0 && pte & crate::mem::pagetable::PTE_PRESENT == 0,
            "page 0 is swapped out"
        );
        assert_eq!(
            s.vm.oom_kill, 0,
            "writeback is waited for, not a reason to OOM"
        );
        let used = s.swap.as_ref().unwrap().used;
        s.step(&Event::Access {
            vma,
            index: 0,
            write,
        });
        assert_eq!(s.vm.pswpin, 1);
        let f = s.vmas[vma as usize].pte(0) & crate::mem::pagetable::PTE_FOLIO_MASK;
        assert_eq!(
            s.folios[f].test(flags::SWAPCACHE),
            keeps,
            "{kind:?} write={write}"
        );
        assert_eq!(
            s.swap.as_ref().unwrap().used,
            if keeps { used } else { used - 1 },
            "{kind:?} write={write}"
        );
    }
}

#[test]
fn swapin_nr_pages_follows_the_kernel_heuristic() {
    use crate::swap_state::swapin_nr_pages;
    // No hits: read ahead only if the fault is next to the previous one.
    assert_eq!(swapin_nr_pages(10, 50, 0, 8, 0), 1);
    assert_eq!(swapin_nr_pages(49, 50, 0, 8, 0), 2);
    assert_eq!(swapin_nr_pages(51, 50, 0, 8, 0), 2);
    // hits + 2 rounded up to a power of two (at least 4), capped at 2^page-cluster.
    assert_eq!(swapin_nr_pages(10, 50, 1, 8, 0), 4);
    assert_eq!(swapin_nr_pages(10, 50, 3, 8, 0), 8);
    assert_eq!(swapin_nr_pages(10, 50, 30, 8, 0), 8);
    assert_eq!(swapin_nr_pages(10, 50, 30, 32, 0), 32);
    // Don't shrink readahead too fast: at least half the previous window.
    assert_eq!(swapin_nr_pages(10, 50, 0, 8, 8), 4);
}

#[test]
fn sequential_swap_in_reads_ahead_on_ssd_but_not_on_zram() {
    for (kind, expect_ra) in [(DeviceKind::Ssd, true), (DeviceKind::Zram, false)] {
        let (mut s, vma) = swapped_out_region(kind, 256, 2048);
        let before = s.vm.clone();
        // Read back the first 512 pages (swapped out long ago) in order.
        for i in 0..512 {
            s.step(&Event::Access {
                vma,
                index: i,
                write: false,
            });
        }
        let majfault = s.vm.pgmajfault - before.pgmajfault;
        let pswpin = s.vm.pswpin - before.pswpin;
        let ra = s.vm.swap_ra - before.swap_ra;
        let hits = s.vm.swap_ra_hit - before.swap_ra_hit;
        assert!(pswpin >= 500, "{kind:?}: {pswpin}");
        if expect_ra {
            // Windows grow to 2^page-cluster = 8: about one major fault per 8 pages.
            assert!(
                majfault * 6 < pswpin,
                "{kind:?}: {majfault} major faults for {pswpin} swap-ins"
            );
            assert_eq!(ra + majfault, pswpin);
            assert!(
                hits * 10 >= ra * 9,
                "{kind:?}: {hits} hits of {ra} readahead pages"
            );
        } else {
            assert_eq!((ra, hits), (0, 0));
            assert_eq!(majfault, pswpin);
        }
    }
}

/// `folio_free_swap()` (mm/swapfile.c, v6.12) fails while `folio_swapped()`:
/// an order-0 swap-cache folio that swap readahead brought in, not yet
/// mapped, keeps its slot while its PTE still holds the swap entry (the
/// reclaim activation that frees swap when it is more than half full must
/// not cut it off), and the fault on it is a swap-cache hit, not a read.
#[test]
fn an_unmapped_readahead_folio_keeps_its_slot_while_its_pte_holds_the_entry() {
    for forked in [false, true] {
        an_unmapped_readahead_folio_keeps_its_slot(forked);
    }
}

/// With `forked`, another task has forked (so fork's rmap state decides
/// `folio_swapped`), not this one: the entry is still exclusive.
fn an_unmapped_readahead_folio_keeps_its_slot(forked: bool) {
    let (mut s, vma) = swapped_out_region(DeviceKind::Ssd, 256, 2048);
    if forked {
        let other = s.add_task("other");
        s.mmap_anon(other, 4).unwrap();
        s.fork_task(other).unwrap();
    }
    let mut i = 0;
    // Sequential swap-ins until one reads a page ahead of the fault.
    let (index, f, slot) = loop {
        s.step(&Event::Access {
            vma,
            index: i,
            write: false,
        });
        i += 1;
        let pte = s.vmas[vma as usize].pte(i);
        if pte != 0 && pte & crate::mem::pagetable::PTE_PRESENT == 0 {
            let slot = pte - 1;
            if let Some(f) = slot_folio(s.swap.as_ref().unwrap().slots[slot as usize]) {
                break (i, f, slot);
            }
        }
        assert!(i < 512, "no swap readahead");
    };
    assert_eq!(s.folios[f].mapcount, 0);
    s.folio_free_swap(f);
    assert!(
        s.folios[f].test(flags::SWAPCACHE),
        "forked={forked}: the PTE holds the slot"
    );
    assert_eq!(s.folios[f].swap, slot + 1);
    let majors = s.vm.pgmajfault;
    s.step(&Event::Access {
        vma,
        index,
        write: false,
    });
    assert_eq!(s.vm.pgmajfault, majors, "a swap-cache hit");
    let pte = s.vmas[vma as usize].pte(index);
    assert_eq!(pte & crate::mem::pagetable::PTE_FOLIO_MASK, f);
    // Mapped now, its slot may go.
    s.folio_free_swap(f);
    assert!(!s.folios[f].test(flags::SWAPCACHE));
    s.check_invariants().unwrap();
}

/// A machine whose `memcg_max`-page group has written `pages` anonymous
/// pages in order (so the oldest are swapped out to `kind`), with pending
/// writeback given time to complete.
fn swapped_out_region(kind: DeviceKind, memcg_max: u64, pages: u32) -> (Sim, u32) {
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        memcg_max: Some(Size::from_pages(memcg_max)),
        swap: DeviceConfig {
            size: Some(Size::from_pages(4096)),
            ..DeviceConfig::of(kind)
        },
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, pages as u64).unwrap();
    for i in 0..pages {
        s.step(&Event::Access {
            vma,
            index: i,
            write: true,
        });
    }
    s.step(&Event::Think { ns: 1_000_000_000 });
    (s, vma)
}

#[test]
fn swap_writes_completed_during_limit_reclaim_are_reclaimed_in_it() {
    // Writeback ends by interrupt while reclaim is still running: a folio
    // whose swap write completed is rotated to the inactive tail and freed by
    // a later batch of the same reclaim, instead of staying resident as clean
    // swap cache while reclaim writes out ever more pages. So a first write
    // pass over 3x the limit swaps out about what it frees (the host's 6.18
    // kernel: pswpout 139,941, pgsteal 139,598 on the anon-seq-swap case).
    for version in [CgroupVersion::V1, CgroupVersion::V2] {
        let cfg = MachineConfig {
            memory: Size::from_pages(1 << 16),
            memcg_max: Some(Size::from_pages(1000)),
            cgroup_version: version,
            swap: DeviceConfig {
                size: Some(Size::from_pages(8192)),
                ..DeviceConfig::of(DeviceKind::Ssd)
            },
            ..Default::default()
        };
        let mut s = Sim::new(cfg).unwrap();
        let t = s.add_task("t");
        let vma = s.mmap_anon(t, 3000).unwrap();
        for i in 0..3000 {
            s.step(&Event::Access {
                vma,
                index: i,
                write: true,
            });
        }
        let (out, freed) = (s.vm.pswpout, s.vm.pgsteal_anon);
        assert!(freed >= 2000 - 64, "{version:?}: freed {freed}");
        assert!(
            out <= freed + 64,
            "{version:?}: {out} pages written but only {freed} freed"
        );
    }
}
