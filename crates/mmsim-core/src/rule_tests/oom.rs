//! Rule tests of the OOM killer's victim choice (`crate::oom`, v6.12
//! `select_bad_process`/`oom_badness`): every resident page counts, file
//! pages included, with swap entries and page tables; ties go to the task
//! visited last; a memcg OOM visits its subtree's groups in pre-order; a
//! kill keeps the victim's `f_ra` slots (inside its own readahead, and when
//! it fails the victim's fork).

use super::*;

/// A task with `pages` anonymous pages written.
fn anon_task(s: &mut Sim, pages: u32) -> (u32, u32) {
    let t = s.add_task("anon");
    let vma = s.mmap_anon(t, u64::from(pages)).unwrap();
    touch(s, vma, pages);
    (t, vma)
}

/// A task with `pages` pages of a shared file mapping read in.
fn file_task(s: &mut Sim, pages: u32) -> u32 {
    let t = s.add_task("file");
    let file = s.add_file("f", u64::from(pages)).unwrap();
    let vma = s.mmap_file(t, file, 0, u64::from(pages), false).unwrap();
    s.madvise(vma, Advice::Random).unwrap();
    for index in 0..pages {
        s.step(&Event::Access {
            vma,
            index,
            write: false,
        });
    }
    t
}

#[test]
fn mapped_file_pages_count_in_the_badness() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let (anon, _) = anon_task(&mut s, 10);
    let file = file_task(&mut s, 15);
    // RSS plus one page table each (one 2 MiB range, one 1 GiB, one 512 GiB).
    assert_eq!(s.oom_badness(anon as usize), 10 + 3);
    assert_eq!(s.oom_badness(file as usize), 15 + 3);
    // A kill, although it frees no page: the unmapped cache is reclaimable.
    assert!(s.out_of_memory(None));
    // The file reader was chosen (the old rule counted anonymous VMAs only
    // and took the writer); its mappings are gone, the page cache stays.
    assert!(s.tasks[file as usize].dead);
    assert!(!s.tasks[anon as usize].dead);
    assert_eq!(s.memcg_report(0).file, 15);
    assert_eq!(s.memcg_report(0).anon, 10);
    s.check_invariants().unwrap();
}

#[test]
fn a_tie_goes_to_the_task_visited_last() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let (first, _) = anon_task(&mut s, 8);
    let (second, _) = anon_task(&mut s, 8);
    assert!(s.out_of_memory(None));
    assert!(!s.tasks[first as usize].dead);
    assert!(s.tasks[second as usize].dead);
    assert_eq!(s.memcg_report(0).anon, 8);
}

#[test]
fn swap_entries_and_page_tables_count() {
    let mut s = machine(PolicyName::Cost, 4096, Some(1024));
    // 600 pages span two 2 MiB ranges: two PTE tables, one PMD, one PUD.
    let (t, vma) = anon_task(&mut s, 600);
    assert_eq!(s.oom_badness(t as usize), 600 + 4);
    let f = s.vmas[vma as usize].pte(0) & crate::mem::pagetable::PTE_FOLIO_MASK;
    let (reclaimed, _) = super::filefolio::reclaim_one(&mut s, f);
    assert_eq!(reclaimed, 1);
    // The swapped page counts as a swap entry instead of a resident page.
    assert_eq!(s.oom_badness(t as usize), 599 + 1 + 4);
}

#[test]
fn a_memcg_oom_visits_its_groups_in_pre_order() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(a, "b").unwrap();
    let c = s.add_memcg(a, "c").unwrap();
    // Created in the order c, b, a; visited a, b, c: the tie goes to c's.
    let mut tasks = Vec::new();
    for g in [c, b, a] {
        let (t, _) = anon_task(&mut s, 5);
        s.attach_task(t, g).unwrap();
        tasks.push(t);
    }
    assert!(s.out_of_memory(Some(a)));
    assert!(s.tasks[tasks[0] as usize].dead, "c's task is visited last");
    assert!(!s.tasks[tasks[1] as usize].dead);
    assert!(!s.tasks[tasks[2] as usize].dead);
    // A global OOM visits by creation order: the tie now goes to a's task.
    assert!(s.out_of_memory(None));
    assert!(s.tasks[tasks[2] as usize].dead);
    assert!(!s.tasks[tasks[1] as usize].dead);
}

/// A root task maps a file and faults page 100 (read-around 84..116, the
/// mark on 108); a task of group `g` (`memory.max` 64 pages, no swap) fills
/// its 64 pages with anonymous memory, maps the same file and faults the
/// marked page 108. The async readahead's first charge finds the group
/// full and no reclaimable page. Until 2026-12-02 mmsim retried that
/// charge into the memcg OOM killer, which killed the faulting task inside
/// its own readahead; v6.12 `try_charge_memcg` fails it instead
/// (`__GFP_NORETRY` of `readahead_gfp_mask`: one reclaim, the stock drain,
/// `nomem`), `page_cache_ra_unbounded` ends the batch and the fault maps
/// the cached page 108. Nobody is killed, `g` counts two `max` events and
/// no `oom`, nothing past 116 is cached, and the VMA's `f_ra` slot is
/// untouched.
#[test]
fn a_full_groups_async_readahead_fails_its_charge_without_an_oom_kill() {
    let mut s = machine(PolicyName::Cost, 4096, None);
    let root = s.add_task("root");
    let file = s.add_file("f", 1000).unwrap();
    let rv = s.mmap_file(root, file, 0, 1000, false).unwrap();
    s.step(&Event::Access {
        vma: rv,
        index: 100,
        write: false,
    });
    let g = s.add_memcg(0, "g").unwrap();
    s.set_memcg_max(g, 64).unwrap();
    let t = s.add_task("reader");
    s.tasks[t as usize].memcg = g;
    let anon = s.mmap_anon(t, 64).unwrap();
    touch(&mut s, anon, 64);
    let fv = s.mmap_file(t, file, 0, 1000, false).unwrap();
    let slot = s.vmas[fv as usize].ra_slot;
    let max_before = s.memcgs[g as usize].max_events;
    s.step(&Event::Access {
        vma: fv,
        index: 108,
        write: false,
    });
    assert!(!s.tasks[t as usize].dead);
    assert!(!s.tasks[root as usize].dead);
    assert_eq!(s.vm.oom_kill, 0);
    assert_eq!(s.memcgs[g as usize].max_events - max_before, 2);
    let oom = s.memcgs[g as usize].stat.get(crate::stats::item::MEMCG_OOM);
    assert_eq!(oom, Some(0));
    let cached = (116..1000)
        .filter(|&i| slot_folio(s.files[file as usize].slot(i)).is_some())
        .count();
    assert_eq!(cached, 0);
    assert_eq!(s.vmas[fv as usize].ra_slot, slot);
    s.check_invariants().unwrap();
}

/// A parent OOM-killed by its own fork: v6.12 `copy_page_range` charges
/// the child's page tables (`GFP_PGTABLE_USER`) to the parent's group; when
/// that charge OOM-kills the parent, `try_charge_memcg` reaches
/// `passed_oom && task_is_dying()` and fails it (`-ENOMEM`), `dup_mmap`
/// stops at that VMA and `dup_mm`'s `mmput` tears the half-built mm down.
/// The parent maps a 64-page anonymous VMA `a` and then a file VMA `fv`
/// whose fault at page 100 (in the root group) read around 84..116, marked
/// 108 and mapped 96..112 but the marked page: 15 PTEs, window (84, 32, 8)
/// in `fv`'s `f_ra` slot 0. Moved to group `g` (`memory.max` 67, no swap),
/// it writes `a`: 64 pages and `a`'s 3 table pages fill `g`. The fork
/// copies `a` first; the charge of the child's 3 table pages finds nothing
/// to reclaim (anonymous, no swap) and `g`'s OOM kills the parent (64 +
/// 15 + 6 tables = 85 against the child's 64 + 3). The fork fails there: the
/// child's only VMA is its copy of `a`, zapped (the 64 pages, which the
/// kill's reap left to the child, are freed), its tables uncharged; `fv`
/// was never copied, so slot 0 keeps the killed parent's hold alone (count
/// 1: a kill puts no file, `crate::oom`) and its window. No fork is
/// counted; the child's id is a dead task that never ran.
#[test]
fn a_parent_oom_killed_by_its_fork_fails_it_and_keeps_its_file_ra() {
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(4096),
        policy: PolicyConfig {
            name: PolicyName::Cost,
            cost_variant: CostVariant::V6_2,
            ..Default::default()
        },
        kmem_accounting: true,
        ..Default::default()
    })
    .unwrap();
    let p = s.add_task("parent");
    let file = s.add_file("f", 1000).unwrap();
    let a = s.mmap_anon(p, 64).unwrap();
    let fv = s.mmap_file(p, file, 0, 1000, false).unwrap();
    let read = |s: &mut Sim, vma: u32, index: u32| {
        s.step(&Event::Access {
            vma,
            index,
            write: false,
        })
    };
    let window = |s: &Sim, vma: u32| {
        let ra = s.vma_ra(vma);
        (ra.start, ra.size, ra.async_size)
    };
    read(&mut s, fv, 100);
    let slot = s.vmas[fv as usize].ra_slot;
    assert_eq!((slot, window(&s, fv)), (0, (84, 32, 8)));
    let g = s.add_memcg(0, "g").unwrap();
    s.set_memcg_max(g, 67).unwrap();
    s.attach_task(p, g).unwrap();
    touch(&mut s, a, 64);
    assert_eq!((s.memcgs[g as usize].usage, s.stock), (67, (g, 0)));
    let c = s.mm_counters(p).unwrap();
    assert_eq!((c.anon, c.file, s.oom_badness(p as usize)), (64, 15, 85));
    // The fork runs in the parent's context: its charges go to `g`.
    let child = s.tasks.len();
    let err = s.fork_task(p).unwrap_err().to_string();
    assert!(err.contains("-ENOMEM"), "{err}");
    assert_eq!(s.vm.oom_kill, 1);
    assert!(s.tasks[p as usize].dead);
    assert!(s.tasks[child].dead && s.tasks[child].exited);
    assert_eq!(s.fork_stats().forks, 0);
    // The copy stopped at `a`: the child has its copy of `a` only, torn
    // down (no PTE, no table), and the parent's tables went with the kill.
    let ca = match s.tasks[child].vmas[..] {
        [ca] => ca,
        ref v => panic!("the child's VMAs: {v:?}"),
    };
    assert!(s.vmas[ca as usize].ptes.is_empty());
    assert_eq!(
        (s.kmem_vma_tables(a), s.kmem_vma_tables(ca)),
        (Some(0), Some(0))
    );
    // Nothing is left charged to `g`: the 64 pages and every table freed.
    assert_eq!(s.memcgs[g as usize].usage, 0);
    // Slot 0: the killed parent's `fv` alone holds it, its window intact.
    assert_eq!(s.vmas[fv as usize].ra_slot, slot);
    assert_eq!(s.ra_slots.refs(slot), 1);
    assert_eq!(window(&s, fv), (84, 32, 8));
    s.check_invariants().unwrap();
    // The next mapping of the file opens a new slot.
    let other = s.add_task("other");
    let v2 = s.mmap_file(other, file, 0, 1000, false).unwrap();
    assert_eq!(s.vmas[v2 as usize].ra_slot, 1);
    assert_eq!(s.ra_slots.refs(slot), 1);
    s.check_invariants().unwrap();
}

/// A child still being forked is invisible to the OOM killer: v6.12
/// `copy_process` (kernel/fork.c) links it into the task list
/// (`list_add_tail_rcu(&p->tasks, ...)`, `attach_pid`) and its cgroup
/// (`cgroup_post_fork`) only after `copy_mm` returned, so neither
/// `for_each_process` nor `mem_cgroup_scan_tasks` in `select_bad_process`
/// (mm/oom_kill.c) visits it while `copy_page_range` charges its tables.
/// The parent (group `g`, `memory.max` 67, no swap) writes a 64-page
/// anonymous VMA: 64 pages and 3 table pages (PTE, PMD, PUD) fill `g`. Its
/// fork copies the 64 PTEs (shared, write-protected) and charges the
/// child's 3 tables: `g` is full, nothing is reclaimable, the memcg OOM
/// runs. Scored, the half-built child would tie the parent (64 shared
/// pages + 3 tables each) and, visited last, take the kill; it is not a
/// candidate, so the parent is killed, the charge fails (`passed_oom &&
/// task_is_dying()`: `-ENOMEM`) and `dup_mm` tears the child down. The
/// child's copies counted in `g` until then (its tables are charged, as
/// the kernel's are): after the teardown nothing is charged to `g`.
#[test]
fn a_child_being_forked_is_not_an_oom_candidate() {
    let mut s = Sim::new(MachineConfig {
        memory: Size::from_pages(4096),
        policy: PolicyConfig {
            name: PolicyName::Cost,
            cost_variant: CostVariant::V6_2,
            ..Default::default()
        },
        kmem_accounting: true,
        ..Default::default()
    })
    .unwrap();
    let p = s.add_task("parent");
    let a = s.mmap_anon(p, 64).unwrap();
    let g = s.add_memcg(0, "g").unwrap();
    s.set_memcg_max(g, 67).unwrap();
    s.attach_task(p, g).unwrap();
    touch(&mut s, a, 64);
    assert_eq!(s.memcgs[g as usize].usage, 67);
    assert_eq!(s.oom_badness(p as usize), 64 + 3);
    let child = s.tasks.len();
    let err = s.fork_task(p).unwrap_err().to_string();
    assert!(err.contains("-ENOMEM"), "{err}");
    // One kill, of the parent; the child never ran and is torn down.
    assert_eq!(s.vm.oom_kill, 1);
    assert!(s.tasks[p as usize].dead && !s.tasks[p as usize].exited);
    assert!(s.tasks[child].dead && s.tasks[child].exited);
    assert_eq!(s.fork_stats().forks, 0);
    let ca = s.tasks[child].vmas[0];
    assert!(s.vmas[ca as usize].ptes.is_empty());
    assert_eq!(
        (s.kmem_vma_tables(a), s.kmem_vma_tables(ca)),
        (Some(0), Some(0))
    );
    assert_eq!(s.memcgs[g as usize].usage, 0);
    assert_eq!(s.memcg_report(g).anon, 0);
    s.check_invariants().unwrap();
}
