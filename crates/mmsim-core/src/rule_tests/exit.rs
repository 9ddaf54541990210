//! Rule tests of a task that exits (`crate::exit`, `do_exit` → `exit_mmap`):
//! its anonymous memory, swap slots and charges go, its page cache stays
//! charged to its group, and with kernel-memory accounting its page tables
//! and baseline are uncharged.

use super::*;
use crate::memcg::ROOT;

/// A group `/a` (memory.max `max`) with swap, whose task writes `anon` pages of
/// an anonymous VMA and reads `file` pages of a file it opened.
fn exiting(
    max: u64,
    anon: u32,
    file_pages: u32,
    kmem: bool,
) -> (Sim, crate::memcg::MemcgId, u32, u32) {
    let mut s = machine(PolicyName::Cost, 1 << 16, Some(1 << 12));
    s.cfg.kmem_accounting = kmem;
    s.kmem = kmem.then(Default::default);
    let a = s.add_memcg(ROOT, "a").unwrap();
    s.set_memcg_max(a, max).unwrap();
    let t = s.add_task("t");
    s.attach_task(t, a).unwrap();
    let file = s.add_file("f", 1000).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    let v = s.mmap_anon(t, u64::from(anon)).unwrap();
    // A run starts (the kmem baseline is charged at the first `Sim::run`).
    // The file is read last, so limit reclaim has not taken it yet.
    let mut events: Vec<Event> = (0..anon)
        .map(|index| Event::Access {
            vma: v,
            index,
            write: true,
        })
        .collect();
    events.extend((0..file_pages).map(|index| Event::FileRead {
        file,
        index,
        pages: 1,
    }));
    s.run(&events);
    s.check_invariants().unwrap();
    (s, a, t, v)
}

fn lru_pages(s: &Sim, m: crate::memcg::MemcgId, list: LruList) -> u64 {
    s.memcgs[m as usize].lruvec.lists[list as usize].pages
}

#[test]
fn an_exited_task_frees_its_anon_memory_and_swap_and_leaves_its_page_cache() {
    let (mut s, a, t, v) = exiting(150, 200, 20, false);
    // Limit reclaim swapped part of the 200 anon pages out.
    let swapped = s.memcgs[a as usize].swap_usage;
    assert!(swapped >= 50, "{swapped}");
    let file = lru_pages(&s, a, LruList::InactiveFile) + lru_pages(&s, a, LruList::ActiveFile);
    let free = s.node.free;
    let resident_anon =
        lru_pages(&s, a, LruList::InactiveAnon) + lru_pages(&s, a, LruList::ActiveAnon);
    s.exit_task(t).unwrap();
    assert!(s.tasks[t as usize].dead && s.tasks[t as usize].exited);
    // Every anonymous page freed, none swapped, no slot charged.
    assert_eq!(lru_pages(&s, a, LruList::InactiveAnon), 0);
    assert_eq!(lru_pages(&s, a, LruList::ActiveAnon), 0);
    assert_eq!(s.memcgs[a as usize].swap_usage, 0);
    assert_eq!(s.memcgs[ROOT as usize].swap_usage, 0);
    // Swap-cache folios (swapped but not yet freed) go too, so at least the
    // resident anon pages return to the zone.
    assert!(
        s.node.free >= free + resident_anon,
        "{} {free} {resident_anon}",
        s.node.free
    );
    // The page cache it read stays, charged to /a.
    let file_after =
        lru_pages(&s, a, LruList::InactiveFile) + lru_pages(&s, a, LruList::ActiveFile);
    assert_eq!(file_after, file);
    assert_eq!(file, 20);
    assert!(s.memcgs[a as usize].usage >= file);
    // Later accesses of the exited task are dropped, not faulted.
    let faults = s.vm.pgfault;
    s.step(&Event::Access {
        vma: v,
        index: 0,
        write: true,
    });
    assert_eq!(s.vm.pgfault, faults);
    // Exiting twice is nothing; an unknown task is an error.
    s.exit_task(t).unwrap();
    assert!(s.exit_task(99).is_err());
    s.check_invariants().unwrap();
}

#[test]
fn an_exited_task_uncharges_its_page_tables_and_baseline() {
    let (mut s, a, t, _) = exiting(10_000, 1000, 20, true);
    let before = s.kmem_report(a).unwrap();
    // 1000 pages at index 0: two PTE tables, one PMD and one PUD, and the
    // baseline's PGD page; a kernel stack of KERNEL_STACK_PAGES; the task
    // structures' TASK_SLAB_BYTES of unreclaimable slab.
    assert_eq!(before.pagetables, (4 + 1) * 4096, "{before:?}");
    assert_eq!(before.kernel_stack, 4 * 4096);
    assert_eq!(before.slab_unreclaimable, 16 << 10);
    s.exit_task(t).unwrap();
    let after = s.kmem_report(a).unwrap();
    assert_eq!(after.pagetables, 0, "{after:?}");
    assert_eq!(after.kernel_stack, 0);
    // The page cache's xarray nodes stay with the cached pages.
    assert_eq!(after.xa_nodes, before.xa_nodes);
    assert_eq!(after.slab_unreclaimable, 0);
    s.check_invariants().unwrap();
}

/// A swap slot whose last swap PTE goes while its folio is under writeback
/// (`free_swap_and_cache` cannot free it then: v6.12 leaves `swap_map` at
/// `SWAP_HAS_CACHE`) is freed with the folio when reclaim removes it
/// (`put_swap_folio`), not left holding a shadow no PTE will fault.
#[test]
fn a_slot_zapped_under_writeback_is_freed_with_its_folio() {
    let cfg = MachineConfig {
        memory: Size::from_pages(4096),
        swap: DeviceConfig {
            size: Some(Size::from_pages(1024)),
            ..DeviceConfig::of(DeviceKind::Ssd)
        },
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("t");
    let v = s.mmap_anon(t, 4).unwrap();
    touch(&mut s, v, 4);
    let f = s.vmas[v as usize].pte(0) & crate::mem::pagetable::PTE_FOLIO_MASK;
    let (reclaimed, _) = super::filefolio::reclaim_one(&mut s, f);
    assert_eq!(reclaimed, 0, "the write is in flight");
    assert!(s.folios[f].test(flags::WRITEBACK));
    assert_eq!(s.memcgs[0].swap_usage, 1);
    // Put back on its list, as `shrink_inactive_list` does.
    s.folio_add_lru(f);
    s.exit_task(t).unwrap();
    // The folio (under writeback) and its slot stay, mapped by nothing.
    assert_eq!((s.memcgs[0].swap_usage, s.nr_swapcache_folios), (1, 1));
    // The write completes (`folio_end_writeback`).
    s.complete_writeback(u64::MAX);
    assert!(!s.folios[f].test(flags::WRITEBACK));
    let (reclaimed, _) = super::filefolio::reclaim_one(&mut s, f);
    assert_eq!(reclaimed, 1);
    assert_eq!((s.memcgs[0].swap_usage, s.nr_swapcache_folios), (0, 0));
    assert_eq!(s.swap.as_ref().unwrap().used, 0);
    s.check_invariants().unwrap();
}
