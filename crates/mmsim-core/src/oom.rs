//! The OOM killer (mm/oom_kill.c, v6.12): `select_bad_process` picks the
//! task with the highest `oom_badness` — its resident pages (file and
//! anonymous, `get_mm_rss`), its swap entries (`MM_SWAPENTS`) and its page
//! tables (`mm_pgtables_bytes / PAGE_SIZE`), without the `oom_score_adj`
//! term (mmsim has no adjustment) — visiting the tasks as the kernel does:
//! a memcg OOM walks the groups of the subtree in pre-order
//! (`mem_cgroup_scan_tasks`) and each group's tasks in creation order; a
//! global OOM walks every task in creation order (`for_each_process`). A
//! task that scores as much as the one chosen so far replaces it
//! (`oom_evaluate_task` skips only `points < chosen_points`), so ties go
//! to the task visited last. A child that `fork` is still copying is not
//! visited (v6.12 `copy_process` lists it only after `copy_mm`, `crate::fork`).
//! Killing it frees its anonymous memory and swap
//! slots and unmaps its file mappings (the page cache stays); its VMAs keep
//! their `struct file`s (their `f_ra` slots, `crate::readahead::RaSlots`):
//! the kernel's `fput` is the victim's own `exit_mmap`, which mmsim does not
//! model after a kill, so the holds stay for the rest of the run. Later events
//! of a killed task are dropped and counted.
//!
//! Departures: a task scoring 0 (nothing resident, swapped or mapped) is
//! never chosen, as killing it would free nothing here; page tables are
//! counted from `machine.kmem_accounting`'s per-VMA tables when it is on,
//! else from the 2 MiB, 1 GiB and 512 GiB ranges that hold a PTE or swap
//! entry now (the kernel keeps a table whose entries were all zapped until
//! `munmap` or exit, so it may count a few more).

use crate::sim::Sim;
use crate::stats::item::*;

impl Sim {
    /// `out_of_memory()`: kills a task if one holds memory; returns whether
    /// it killed one (as `mem_cgroup_out_of_memory` does), not whether that
    /// freed a page: a reader's mapped page cache is only unmapped, and the
    /// caller's next reclaim takes it. A memcg OOM (`mem_cgroup_out_of_memory`) chooses
    /// only among the tasks of group `scope`'s subtree; a global one among all.
    pub(crate) fn out_of_memory(&mut self, scope: Option<crate::memcg::MemcgId>) -> bool {
        let mut best: Option<(u64, usize)> = None;
        for t in self.oom_candidates(scope) {
            let badness = self.oom_badness(t);
            if badness > 0 && best.is_none_or(|(b, _)| badness >= b) {
                best = Some((badness, t));
            }
        }
        let Some((_, victim)) = best else {
            return false;
        };
        let m = self.tasks[victim].memcg;
        self.count_events(m, OOM_KILL, 1);
        self.series_mark(
            crate::timer::SeriesMarkerKind::OomKill,
            Some(m),
            format!("task {victim}"),
        );
        self.tasks[victim].dead = true;
        // The pages the zap dirties (dirty PTEs of shared file mappings)
        // count for the victim, never for the task whose allocation chose
        // it: v6.12's oom_reaper (`__oom_reap_task_mm`) skips `VM_SHARED`
        // file mappings, so only the victim's own `exit_mmap()` zaps them,
        // into its `current->nr_dirtied`; its `do_exit()` then leaves that
        // in `dirty_throttle_leaks` (read under `policy.bdp_ratelimit`),
        // after the zap ([`Sim::bdp_task_exit`] below).
        let writer = self.bdp_set_current(victim as u32);
        for vi in 0..self.tasks[victim].vmas.len() {
            let vid = self.tasks[victim].vmas[vi] as usize;
            self.kmem_free_vma_tables(vid as u32);
            // No `fput` here: the oom_reaper only zaps (v6.12
            // `__oom_reap_task_mm`); the victim's own `exit_mmap()` →
            // `remove_vma()` puts its files later. mmsim never exits a
            // killed task, so its VMAs keep their `f_ra` slots: a readahead
            // of the victim's that goes on after the kill (the kill came
            // from its own charge) still finds its state; a fork of it in
            // progress fails, and only its child's copies put their holds
            // (`crate::fork`).
            // The oom_reaper's zap ends with its TLB flush (crate::tlb).
            self.tlb_zap_range(vid as u32, 0, u32::MAX);
            if self.fork.is_some() {
                // Pages shared by fork stay with the other tasks (`crate::fork`).
                self.oom_reap_forked(vid as u32);
                self.vmas[vid].ptes = Vec::new();
                self.vmas[vid].file_pmds = Vec::new();
                continue;
            }
            // `__oom_reap_task_mm` → `unmap_page_range`: the zap of
            // MADV_DONTNEED (each swap entry put once, a large swap-cache
            // folio's slots freed with the folio, `crate::madvise`).
            let len = self.vmas[vid].len;
            self.zap_pte_range(vid as u32, 0, len);
            self.vmas[vid].ptes = Vec::new();
            self.vmas[vid].file_pmds = Vec::new();
        }
        self.bdp_set_current(writer);
        self.bdp_task_exit(victim as u32);
        true
    }

    /// The live tasks an OOM of `scope` chooses among, in the kernel's
    /// visiting order (see the module overview).
    fn oom_candidates(&self, scope: Option<crate::memcg::MemcgId>) -> Vec<usize> {
        // A child still being forked is not on the task list yet (v6.12
        // `copy_process` adds it after `copy_mm`, `crate::fork`).
        let live = |t: &usize| !self.tasks[*t].dead && !self.tasks[*t].forking;
        let Some(root) = scope else {
            return (0..self.tasks.len()).filter(live).collect();
        };
        let mut order = Vec::new();
        let mut m = Some(root);
        while let Some(g) = m {
            order.extend((0..self.tasks.len()).filter(|&t| self.tasks[t].memcg == g && live(&t)));
            m = self.mem_cgroup_iter(root, g);
        }
        order
    }

    /// `oom_badness()` (mm/oom_kill.c, v6.12) of task `t` without
    /// `oom_score_adj`: `get_mm_rss` + `MM_SWAPENTS` + its page-table pages.
    pub(crate) fn oom_badness(&self, t: usize) -> u64 {
        let c = self.mm_counters(t as u32).unwrap_or_default();
        c.file + c.anon + c.swap + self.task_pgtable_pages(t)
    }

    /// `mm_pgtables_bytes(mm) / PAGE_SIZE` of task `t` (PTE, PMD and PUD
    /// tables; see the module overview for how they are counted).
    fn task_pgtable_pages(&self, t: usize) -> u64 {
        self.tasks[t]
            .vmas
            .iter()
            .map(|&v| {
                self.kmem_vma_tables(v).unwrap_or_else(|| {
                    let mut last = [u32::MAX; 3];
                    let mut n = 0;
                    for (i, &pte) in self.vmas[v as usize].ptes.iter().enumerate() {
                        if pte == 0 {
                            continue;
                        }
                        for (l, shift) in [9u32, 18, 27].into_iter().enumerate() {
                            let range = i as u32 >> shift;
                            if last[l] != range {
                                last[l] = range;
                                n += 1;
                            }
                        }
                    }
                    n
                })
            })
            .sum()
    }
}
