//! Rule tests of the OOM killer's victim choice (`crate::oom`, v6.12
//! `select_bad_process`/`oom_badness`): every resident page counts, file
//! pages included, with swap entries and page tables; ties go to the task
//! visited last; a memcg OOM visits its subtree's groups in pre-order.

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
/// full and no reclaimable page: the memcg OOM kills the faulting task
/// itself, inside its own readahead. The kill does not `fput` the victim's
/// files (v6.12: the oom_reaper only zaps; `remove_vma` → `fput` is the
/// victim's own `exit_mmap`, later), so the readahead that goes on after
/// the kill still finds the VMA's `f_ra` (it read past a freed slot,
/// index `u32::MAX`, when the kill put it).
#[test]
fn an_oom_kill_inside_the_victims_own_readahead_keeps_its_file_ra() {
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
    let t = s.add_task("victim");
    s.tasks[t as usize].memcg = g;
    let anon = s.mmap_anon(t, 64).unwrap();
    touch(&mut s, anon, 64);
    let fv = s.mmap_file(t, file, 0, 1000, false).unwrap();
    let slot = s.vmas[fv as usize].ra_slot;
    s.step(&Event::Access {
        vma: fv,
        index: 108,
        write: false,
    });
    assert!(s.tasks[t as usize].dead, "the faulting task is the victim");
    assert!(!s.tasks[root as usize].dead);
    // The victim's VMA still holds its `struct file` (no exit follows the
    // kill in mmsim: the hold stays), and the root's is untouched.
    assert_eq!(s.vmas[fv as usize].ra_slot, slot);
    assert_ne!(s.vmas[rv as usize].ra_slot, slot);
    s.check_invariants().unwrap();
    // Later events of the victim are dropped; the root reads on.
    s.step(&Event::Access {
        vma: rv,
        index: 108,
        write: false,
    });
    s.check_invariants().unwrap();
}
