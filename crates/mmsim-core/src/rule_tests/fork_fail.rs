//! Rule test of a failed fork's teardown with THP state (`crate::fork`,
//! v6.12 `dup_mmap` → `copy_page_range` failing with `-ENOMEM`, `dup_mm` →
//! `mmput` → `exit_mmap` of the half-built mm): a parent holding a
//! PMD-mapped THP, PTE-mapped 64K folios, swap entries and a folio on the
//! deferred split queue is OOM-killed by its fork's page-table charge of
//! its second VMA, after the child copied both (the PMD THP's PTEs, the
//! 64K folios' PTEs and the swap entries); after the teardown of the
//! half-built child every mapcount, swap count, RSS counter, memcg and
//! swap charge and the split queue are exactly those of the same machine
//! whose parent was OOM-killed without forking.

use super::thp::thp_machine_with;
use super::*;
use crate::huge_memory::{ThpConfig, ThpEnabled, ThpSizeConfig, ThpSizeEnabled};
use crate::mem::pagetable::{PTE_FOLIO_MASK, PTE_PRESENT};
use crate::memcg::MemcgKnob;

fn write(s: &mut Sim, vma: u32, index: u32) {
    s.step(&Event::Access {
        vma,
        index,
        write: true,
    });
}

fn folio_at(s: &Sim, vma: u32, index: u32) -> FolioId {
    let p = s.vmas[vma as usize].pte(index);
    assert!(p & PTE_PRESENT != 0, "page {index} not present");
    p & PTE_FOLIO_MASK
}

fn queued(s: &Sim) -> u64 {
    s.thp.split_queues.iter().map(|q| q.len).sum()
}

/// The machine every case starts from: (sim, parent, child `c1`, group).
///
/// THP `always` (PMD) and 64K `always`, zram swap, `kmem_accounting`. The
/// parent, in the root group, writes page 0 of a 512-page VMA `a` (one
/// PMD-mapped order-9 folio) and pages 0, 16, 32 of a 64-page VMA `b`
/// (three PTE-mapped order-4 folios); it discards pages 20..24 (the second
/// folio is partly mapped: queued for a deferred split) and the third
/// folio is swapped out whole (16 swap entries). Moved to group `g`
/// (`memory.swap.max` 0: `g`'s reclaim cannot swap), it forks `c1`, which
/// shares all of it, and writes an 8-page VMA `x` of its own (charged to
/// `g`, with its 3 tables). `memory.max` of `g` is then set to its usage
/// plus 3, room for a next fork's copy of `a` (its PTE, PMD and PUD
/// tables), so the page after those charged to `g` finds nothing
/// reclaimable: the shared folios and swap entries are charged to the
/// root, the split queue is the root's, and `x` cannot be swapped. The
/// parent outscores `c1` by `x`.
fn setup() -> (Sim, u32, u32, crate::memcg::MemcgId) {
    let thp = ThpConfig {
        enabled: ThpEnabled::Always,
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        ..Default::default()
    };
    let mut s = thp_machine_with(8192, Some(1024), thp, |c| c.kmem_accounting = true);
    let p = s.add_task("parent");
    let a = s.mmap_anon(p, 512).unwrap();
    let b = s.mmap_anon(p, 64).unwrap();
    write(&mut s, a, 0);
    assert_eq!(s.folios[folio_at(&s, a, 0)].order(), 9);
    for i in [0, 16, 32] {
        write(&mut s, b, i);
        assert_eq!(s.folios[folio_at(&s, b, i)].order(), 4);
    }
    s.step(&Event::Discard {
        vma: b,
        index: 20,
        pages: 4,
    });
    // Queued: the 64K folio, and the PMD folio since its fault (v6.12
    // `__do_huge_pmd_anonymous_page` → `deferred_split_folio(folio, false)`
    // for the underused-THP shrinker).
    assert_eq!((queued(&s), s.thp.stats[4].split_deferred), (2, 1));
    let f = folio_at(&s, b, 32);
    assert_eq!(super::filefolio::reclaim_one(&mut s, f).0, 16);
    assert_eq!(s.thp.stats[4].swpout, 1);
    let g = s.add_memcg(0, "g").unwrap();
    s.set_memcg_knob(g, MemcgKnob::SwapMax, 0).unwrap();
    s.attach_task(p, g).unwrap();
    // The fork runs as the parent, which has not faulted since it moved:
    // its tables are charged to `g` all the same (`Sim::fork_task`).
    let c1 = s.fork_task(p).unwrap();
    let x = s.mmap_anon(p, 8).unwrap();
    touch(&mut s, x, 8);
    // No stocked charge left to take: `g` holds exactly c1's 6 tables
    // (`a`: PTE, PMD, PUD; `b`: the same, counted per VMA) and `x`'s 8
    // pages and 3 tables.
    s.drain_stock();
    let usage = s.memcgs[g as usize].usage;
    assert_eq!(usage, 6 + 8 + 3);
    s.set_memcg_max(g, usage + 3).unwrap();
    (s, p, c1, g)
}

/// Everything the teardown must leave as the parent's kill alone leaves
/// it: each live folio, each live task's PTEs, RSS counters and tables,
/// each slot's swap count, the groups' charges, the split queue, free
/// frames.
fn state(s: &Sim) -> String {
    let folios: Vec<_> = (0..s.folios.id_end())
        .filter(|&f| s.folios.is_live(f))
        .map(|f| (f, s.folios[f]))
        .collect();
    let tasks: Vec<_> = (0..s.tasks.len() as u32)
        .filter(|&t| !s.tasks[t as usize].dead)
        .map(|t| {
            let vmas: Vec<_> = s.tasks[t as usize]
                .vmas
                .iter()
                .map(|&v| (s.vmas[v as usize].ptes.clone(), s.kmem_vma_tables(v)))
                .collect();
            (t, s.mm_counters(t), vmas)
        })
        .collect();
    let refs: Vec<_> = (0..1024).map(|slot| s.fork_swap_refs(slot)).collect();
    let groups: Vec<_> = s.memcgs.iter().map(|m| (m.usage, m.swap_usage)).collect();
    format!(
        "{folios:?}\n{tasks:?}\n{refs:?}\n{groups:?}\n{}\n{}\n{}",
        queued(s),
        s.swap.as_ref().unwrap().nr_free(),
        s.node.free
    )
}

/// The failed fork: `c2` copies `a` (512 shared PTEs) and charges its 3
/// tables to `g`, filling it; it copies `b` (the 64K folios' 28 PTEs and
/// the 16 swap entries: `swap_map` counts 2 → 3) and charges `b`'s first
/// table: `g` is full, its reclaim finds nothing, and its OOM chooses
/// between the parent (512 + 28 resident in `a` and `b`, 16 swap entries,
/// 8 in `x`, tables) and `c1` (the same less `x`): the parent, whose
/// teardown puts its swap entries (3 → 2). The fork fails and `c2` is torn
/// down with both copies (2 → 1, and the folios' mapcounts back to
/// `c1`'s PTEs); the state is then exactly that
/// of the same machine whose parent was killed by a memcg OOM of `g`
/// with no fork: `c1` alone maps the PMD folio and the 64K folios (mapcount
/// = its PTEs), holds the 16 swap entries (count 1 each), and the partly mapped folio is still queued.
#[test]
fn a_failed_fork_leaves_the_thp_and_swap_state_the_kill_alone_leaves() {
    let (mut s, p, c1, g) = setup();
    let c2 = s.tasks.len();
    let pb = s.tasks[p as usize].vmas[1];
    let slots: Vec<u32> = (32..48).map(|i| s.vmas[pb as usize].pte(i) - 1).collect();
    assert!(slots.iter().all(|&slot| s.fork_swap_refs(slot) == 2));
    let err = s.fork_task(p).unwrap_err().to_string();
    assert!(err.contains("-ENOMEM"), "{err}");
    assert!(s.tasks[p as usize].dead && !s.tasks[c1 as usize].dead);
    assert!(s.tasks[c2].dead && s.tasks[c2].exited);
    // `c2` got as far as `b`: both its VMAs were built (a failure at `a`
    // would have stopped the copy before `b`).
    assert_eq!(s.tasks[c2].vmas.len(), 2);
    assert!(slots.iter().all(|&slot| s.fork_swap_refs(slot) == 1));
    assert_eq!((s.vm.oom_kill, s.fork_stats().forks), (1, 1));
    let (mut r, rp, rc1, rg) = setup();
    assert!(r.out_of_memory(Some(rg)));
    assert!(r.tasks[rp as usize].dead && !r.tasks[rc1 as usize].dead);
    assert_eq!(state(&s), state(&r));
    // The exact end state: c1 maps 512 + 16 + 12 pages and holds 16 swap
    // entries; its 6 table pages (`a`'s PTE, PMD and PUD tables, `b`'s,
    // counted per VMA) stay charged to `g`; the root keeps the folios'
    // 512 + 32 pages (the queued folio's 4 unmapped pages until its split)
    // and the 16 swap pages.
    let c = s.mm_counters(c1).unwrap();
    assert_eq!((c.anon, c.swap), (512 + 28, 16));
    let ca = s.tasks[c1 as usize].vmas[0];
    let cb = s.tasks[c1 as usize].vmas[1];
    let pmd = folio_at(&s, ca, 0);
    assert_eq!(s.folios[pmd].order(), 9);
    assert!((0..512).all(|i| folio_at(&s, ca, i) == pmd));
    assert_eq!(s.folios[folio_at(&s, cb, 0)].mapcount, 16);
    assert_eq!(s.folios[folio_at(&s, cb, 16)].mapcount, 12);
    for i in 32..48 {
        // `swap_map` count 1: c1's PTE alone (the parent's and c2's put).
        assert_eq!(s.fork_swap_refs(s.vmas[cb as usize].pte(i) - 1), 1);
    }
    // Still queued: the PMD folio (whole) and the partly mapped 64K one;
    // the parent's zap of folios c1 maps whole queues nothing (v6.12
    // `__folio_remove_rmap`, `crate::madvise`).
    assert_eq!(queued(&s), 2);
    assert_eq!(s.thp.stats[4].split_deferred, 1);
    assert_eq!(
        (s.thp.stats[9].split_deferred, s.vm.thp_deferred_split_page),
        (0, 0)
    );
    assert_eq!(s.memcgs[g as usize].usage, 6);
    assert_eq!(s.memcg_report(0).anon, 512 + 32);
    assert_eq!(s.memcgs[0].swap_usage, 16);
    s.check_invariants().unwrap();
}
