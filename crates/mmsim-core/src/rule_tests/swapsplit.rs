//! Rule tests of the swap slots of a large anonymous folio unmapped in
//! part before reclaim, without fork: `shrink_folio_list` splits a partially
//! mapped folio before `add_to_swap` (v6.12 "Split partially mapped folios
//! right away", `folio_test_partially_mapped`; v6.8 splits every folio
//! without a PMD mapping), whose unmapped pages `swap_writepage` frees
//! without IO (`folio_free_swap`: no swap PTE holds their slots), and
//! `__remove_mapping` → `put_swap_folio` frees a slot no swap PTE
//! references (its `swap_map` count is 0) with its swap charge instead of
//! leaving a shadow in it. Either way the swap usage and charge end at the
//! mapped pages' slots.

use super::thp::thp_machine;
use super::*;
use crate::huge_memory::{ThpConfig, ThpEnabled, ThpKernel, ThpSizeConfig, ThpSizeEnabled};
use crate::mem::pagetable::PTE_PRESENT;

fn discard(s: &mut Sim, vma: u32, index: u32, pages: u32) {
    s.step(&Event::Discard { vma, index, pages });
}

fn used_slots(s: &Sim) -> u64 {
    s.swap.as_ref().unwrap().used
}

/// Runs isolated folio `f` through `shrink_folio_list`: (pages
/// reclaimed, pages scanned, folios left in the batch).
fn shrink(s: &mut Sim, f: FolioId) -> (u64, u64, usize) {
    let (reclaimed, scanned, kept, _) = shrink_isolated(s, f);
    (reclaimed, scanned, kept)
}

/// Page `i`'s PTE holds a swap entry whose slot is used and holds a shadow
/// (or no shadow), not a folio.
fn swapped_out(s: &Sim, vma: u32, i: u32) -> bool {
    let pte = s.vmas[vma as usize].pte(i);
    let swap = s.swap.as_ref().unwrap();
    pte != 0
        && pte & PTE_PRESENT == 0
        && !swap.is_free(pte - 1)
        && swap.slots[(pte - 1) as usize] != 0
        && slot_folio(swap.slots[(pte - 1) as usize]).is_none()
}

fn thp_64k(kernel: ThpKernel) -> ThpConfig {
    ThpConfig {
        kernel,
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    }
}

#[test]
fn v6_12_splits_a_partially_mapped_64k_folio_before_swap_out() {
    let mut s = thp_machine(8192, Some(1024), thp_64k(ThpKernel::V6_12));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    assert_eq!(s.folios[f].order(), 4);
    // Every page written: v6.12's split maps zero-filled ones to the zero page (split_zeropage.rs).
    touch(&mut s, vma, 16);
    // MADV_DONTNEED of 4 of its 16 pages: partially mapped, queued.
    discard(&mut s, vma, 4, 4);
    assert_eq!(s.folios[f].mapcount, 12);
    assert!(s.folios[f].test(flags::PARTIALLY_MAPPED));
    assert_eq!(s.thp.split_queues[0].len, 1);
    isolate(&mut s, f);
    let (reclaimed, scanned, kept) = shrink(&mut s, f);
    // Split before add_to_swap: the head and 15 tails, each scanned as an
    // order-0 folio; the 12 mapped ones reclaimed, the 4 unmapped ones
    // freed at putback (below); no whole swap-out, no fallback.
    assert_eq!((reclaimed, scanned, kept), (12, 16, 0));
    let st = s.thp.stats[4];
    assert_eq!(
        (st.split, st.swpout, st.swpout_fallback, st.split_deferred),
        (1, 0, 0, 1)
    );
    assert_eq!(s.thp.split_queues[0].len, 0);
    assert_eq!(s.vm.thp_split_page, 0, "not PMD size");
    // The four unmapped pages went through reclaim too, each given a slot
    // by add_to_swap and sent to pageout, but not written: swap_writepage's
    // folio_free_swap finds no swap PTE holding the slot, frees it and
    // dirties the folio, which move_folios_to_lru then frees ("We can free
    // the unmapped pages without IO"). nr_vmscan_write counts all 16.
    assert_eq!(s.vm.pswpout, 12);
    assert_eq!(s.vm.nr_vmscan_write, 16);
    assert_eq!(used_slots(&s), 12);
    assert_eq!(s.memcgs[0].swap_usage, 12);
    for i in (0..4).chain(8..16) {
        assert!(swapped_out(&s, vma, i), "page {i}");
    }
    for i in 4..8 {
        assert_eq!(s.vmas[vma as usize].pte(i), 0, "page {i}");
    }
    assert_eq!(s.folios.live(), 0);
    assert_eq!(s.node.free, s.node.managed);
    s.check_invariants().unwrap();
}

#[test]
fn a_partially_mapped_pmd_thp_is_split_before_swap_out_under_v6_8_and_v6_12() {
    for kernel in [ThpKernel::V6_8, ThpKernel::V6_12] {
        for partial in [false, true] {
            let thp = ThpConfig {
                kernel,
                enabled: ThpEnabled::Always,
                ..Default::default()
            };
            let mut s = thp_machine(8192, Some(1024), thp);
            let t = s.add_task("t");
            let vma = s.mmap_anon(t, 512).unwrap();
            let f = fault_anon(&mut s, vma, 0);
            assert_eq!(s.folios[f].order(), 9);
            // Every page written: v6.12's split maps zero-filled ones to
            // the zero page (split_zeropage.rs).
            touch(&mut s, vma, 512);
            if partial {
                // The PMD is split (v6.8: no entire mapcount left).
                discard(&mut s, vma, 100, 10);
                assert_eq!(s.vm.thp_split_pmd, 1);
            }
            isolate(&mut s, f);
            let (reclaimed, scanned, kept) = shrink(&mut s, f);
            let mapped = if partial { 502 } else { 512 };
            // The 10 unmapped pages of the split are freed without IO.
            assert_eq!((reclaimed, scanned, kept), (mapped, 512, 0), "{kernel:?}");
            let split = u64::from(partial);
            assert_eq!(
                (
                    s.vm.thp_split_page,
                    s.vm.thp_swpout,
                    s.vm.thp_swpout_fallback
                ),
                (split, 1 - split, 0),
                "{kernel:?} partial {partial}"
            );
            assert_eq!(s.thp.stats[9].split, split);
            assert_eq!(s.vm.pswpout, mapped);
            assert_eq!(s.vm.nr_vmscan_write, 512);
            // Every page freed: the reclaimed ones and the unmapped ones at putback.
            assert_eq!(s.node.free, s.node.managed, "{kernel:?} partial {partial}");
            assert_eq!(used_slots(&s), mapped, "{kernel:?} partial {partial}");
            assert_eq!(s.memcgs[0].swap_usage, mapped);
            s.check_invariants().unwrap();
        }
    }
}

#[test]
fn a_swap_cache_folio_zapped_in_part_frees_the_zapped_pages_slots_when_reclaimed() {
    // A 64K folio added to swap whole (16 slots) but not yet unmapped, then
    // 4 of its pages zapped: a present PTE's zap drops no swap count, and a
    // swap-cache folio is not queued for a deferred split (v6.12
    // `deferred_split_folio`), so reclaim keeps it whole.
    let mut s = thp_machine(8192, Some(1024), thp_64k(ThpKernel::V6_12));
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 64).unwrap();
    let f = fault_anon(&mut s, vma, 0);
    let lru = isolate(&mut s, f);
    let mut tails = Vec::new();
    assert!(s.add_to_swap_large(f, &mut tails));
    s.memcgs[0].lruvec.lists[lru as usize].push_head(&mut s.folios, f, lru as u8);
    s.folios[f].set(flags::LRU);
    assert_eq!(used_slots(&s), 16);
    discard(&mut s, vma, 4, 4);
    assert_eq!(s.folios[f].mapcount, 12);
    assert!(!s.folios[f].test(flags::PARTIALLY_MAPPED));
    isolate(&mut s, f);
    let (reclaimed, scanned, kept) = shrink(&mut s, f);
    assert_eq!((reclaimed, scanned, kept), (16, 16, 0));
    let st = s.thp.stats[4];
    assert_eq!((st.split, st.swpout), (0, 1));
    // Written whole; at its removal the 12 slots swap PTEs hold keep the
    // shadow and the 4 zapped pages' slots are freed with their charge.
    assert_eq!(s.vm.pswpout, 16);
    assert_eq!(used_slots(&s), 12);
    assert_eq!(s.memcgs[0].swap_usage, 12);
    for i in (0..4).chain(8..16) {
        assert_eq!(s.vmas[vma as usize].pte(i), i + 1, "page {i}");
        assert!(swapped_out(&s, vma, i), "page {i}");
    }
    for i in 4..8 {
        assert!(s.swap.as_ref().unwrap().is_free(i as u32), "slot {i}");
    }
    s.check_invariants().unwrap();
}
