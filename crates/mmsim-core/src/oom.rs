//! The OOM killer (mm/oom_kill.c), simplified: the victim is the live task
//! with the most resident anonymous pages plus swap entries (`oom_badness`
//! without the oom_score_adj term); killing it frees its anonymous memory
//! and swap slots and unmaps its file mappings. Later events of a killed
//! task are dropped and counted.

use crate::mem::filemap::slot_folio;
use crate::mem::folio::{flags, LruList};
use crate::mem::pagetable::{VmaKind, PTE_FOLIO_MASK, PTE_PRESENT};
use crate::sim::Sim;
use crate::stats::item::*;

impl Sim {
    /// `out_of_memory()`: kills a task if one holds memory; returns whether
    /// it freed anything. A memcg OOM (`mem_cgroup_out_of_memory`) chooses
    /// only among the tasks of group `scope`'s subtree; a global one among all.
    pub(crate) fn out_of_memory(&mut self, scope: Option<crate::memcg::MemcgId>) -> bool {
        let mut best: Option<(u64, usize)> = None;
        for (t, task) in self.tasks.iter().enumerate() {
            if task.dead {
                continue;
            }
            if scope.is_some_and(|root| !self.mem_cgroup_is_descendant(task.memcg, root)) {
                continue;
            }
            let badness: u64 = task
                .vmas
                .iter()
                .filter(|&&v| self.vmas[v as usize].kind == VmaKind::Anon)
                .map(|&v| {
                    self.vmas[v as usize]
                        .ptes
                        .iter()
                        .filter(|&&p| p != 0)
                        .count() as u64
                })
                .sum();
            if badness > 0 && best.is_none_or(|(b, _)| badness > b) {
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
        let before = self.node.free;
        for vi in 0..self.tasks[victim].vmas.len() {
            let vid = self.tasks[victim].vmas[vi] as usize;
            self.kmem_free_vma_tables(vid as u32);
            // The oom_reaper's zap ends with its TLB flush (crate::tlb).
            self.tlb_zap_range(vid as u32, 0, u32::MAX);
            if self.fork.is_some() {
                // Pages shared by fork stay with the other tasks (`crate::fork`).
                self.oom_reap_forked(vid as u32);
                self.vmas[vid].ptes = Vec::new();
                continue;
            }
            let ptes = std::mem::take(&mut self.vmas[vid].ptes);
            for &pte in &ptes {
                if pte & PTE_PRESENT != 0 {
                    // A large folio is freed at its first PTE; its other
                    // PTEs then find a freed slot (no LRU flag) and skip it.
                    // Anonymous folios are those of anonymous VMAs and the
                    // copies of a MAP_PRIVATE file mapping (`crate::cow`).
                    let f = pte & PTE_FOLIO_MASK;
                    let fo = &mut self.folios[f];
                    fo.mapcount = fo.mapcount.saturating_sub(1);
                    let anon = !fo.is_file();
                    if anon && !fo.test(flags::WRITEBACK) && fo.test(flags::LRU) {
                        let lru = LruList::from_index(fo.lru);
                        if fo.test(flags::SWAPCACHE) {
                            // Every slot of the folio (a large one has
                            // contiguous slots, `crate::huge_memory`).
                            let (slot, n) = (fo.swap - 1, fo.nr_pages() as u32);
                            for i in 0..n {
                                self.swap_free_of(f, slot + i);
                            }
                        }
                        if self.policy == crate::sim::Policy::Lru {
                            self.lru_policy_del(f);
                        } else if crate::reclaim::lru_gen::is_lru_gen_tag(self.folios[f].lru) {
                            self.lru_gen_del_folio(f, true);
                        } else {
                            let m = self.folios[f].memcg as usize;
                            self.memcgs[m].lruvec.lists[lru as usize].unlink(&mut self.folios, f);
                        }
                        self.free_folio(f);
                    }
                } else if pte != 0 {
                    // A swap entry: only anonymous memory has them.
                    let slot = pte - 1;
                    let swap = self.swap.as_ref().unwrap();
                    if slot_folio(swap.slots[slot as usize]).is_none() {
                        self.swap_free(slot);
                    }
                }
            }
        }
        self.node.free > before
    }
}
