//! `fork()` of a task's memory and copy-on-write of anonymous pages
//! (kernel/fork.c `dup_mmap`, mm/memory.c `copy_page_range`,
//! `copy_present_pte`, `copy_nonpresent_pte`, `do_wp_page`,
//! `wp_can_reuse_anon_folio`, `wp_page_copy`, `do_swap_page`,
//! `can_swapin_thp`; mm/internal.h `swap_pte_batch`; mm/rmap.c
//! `folio_try_dup_anon_rmap_ptes`, `folio_move_anon_rmap`; mm/swapfile.c
//! `swap_duplicate`, `swap_free_nr`; v6.12), opt-in: nothing here runs
//! until a task forks ([`Sim::fork_task`]), and the hooks elsewhere test
//! `Sim::fork` first.
//!
//! ## Fork
//!
//! The child is a new task in the parent's memory cgroup with a copy of
//! every VMA (`dup_mmap`; VM_LOCKED is not inherited, the THP and readahead
//! advice are); a file VMA's copy holds the parent's `struct file`
//! (`get_file()`), so the two share its readahead state (`f_ra`,
//! `crate::readahead::RaSlots`). Nothing is charged at fork: the shared pages stay charged
//! to the group that faulted them (`copy_present_pte` takes no memcg
//! charge; only page-table pages are kernel memory, charged here through
//! `crate::kmem` when `machine.kmem_accounting` is on). For an anonymous
//! VMA (`vma_needs_copy`: it has an `anon_vma`) every PTE is copied:
//!
//! * a present anonymous folio is shared: its mapcount grows by one per PTE
//!   (`folio_try_dup_anon_rmap_ptes`, for a large folio all its PTEs in the
//!   VMA), its pages lose PageAnonExclusive, and both PTEs are
//!   write-protected; the child's is old (`pte_mkold`). mmsim has no
//!   separate write bit: a clean PTE is the write-protected one (a store to
//!   it faults, [`crate::fault`]), so the parent's PTE loses its dirty bit,
//!   which moves to the folio (`folio_mark_dirty`; an anonymous folio is
//!   dirty from its first store anyway);
//! * the zero page is copied as it is (no mapcount, no charge), and so are
//!   the huge zero PMDs;
//! * a swap entry is duplicated (`swap_duplicate`): the slot's count grows
//!   by one, so the slot stays until every PTE referencing it dropped it.
//!
//! File VMAs get an empty copy (`vma_needs_copy` is false for a shared
//! mapping: the child faults its pages from the page cache). A private file
//! mapping's anonymous copies (`crate::cow`) are **not** shared with the
//! child: the kernel copies those PTEs too (the VMA has an `anon_vma`);
//! here the child faults the file page instead.
//!
//! **A parent killed mid-fork.** v6.12 `copy_page_range` (mm/memory.c)
//! allocates the child's tables (`p4d_alloc`, `pud_alloc`, `pmd_alloc`,
//! `pte_alloc_map_lock` in `copy_p4d_range` ... `copy_pte_range`,
//! `GFP_PGTABLE_USER`: accounted). When such a charge OOM-kills the forking
//! parent itself, `try_charge_memcg` (mm/memcontrol.c) retries; unless the
//! retries find room (the victim's memory is reaped by the oom_reaper
//! `OOM_REAPER_DELAY`, 2 s, later), it reaches `passed_oom &&
//! task_is_dying()` and goes to `nomem`, and as `GFP_PGTABLE_USER` has
//! neither `__GFP_NOFAIL` nor `__GFP_HIGH` the charge fails with
//! `-ENOMEM`. `copy_page_range` returns `-ENOMEM`, `dup_mmap`
//! (kernel/fork.c) stops at that VMA, and `dup_mm` tears the half-built mm
//! down (`mmput` → `exit_mmap`): the fork fails and no child runs. mmsim
//! does the same ([`Sim::fork_task`] returns an error): the copy stops at
//! the VMA whose table charge killed the parent, and the child's VMAs
//! copied so far are zapped, their tables uncharged and their files (`f_ra`
//! slots) put, as at exit but without counting an exit or a fork.
//! Departures: mmsim copies a VMA's PTEs first and charges its tables
//! after (the kernel allocates each table before filling it), and the
//! charge that killed the parent succeeds here (mmsim reaps at the kill)
//! before the teardown uncharges it, so the end state is the kernel's. A
//! kill by another allocation of the fork (a global OOM under
//! `machine.pagetable_frames`) fails it the same way; the kernel would
//! fail it with `-EINTR` at `dup_mmap`'s `fatal_signal_pending` check
//! before the next VMA or `copy_process`'s after `dup_mmap`, with the same
//! end state. The child's task id stays used by a dead task.
//!
//! **The half-built child is no OOM candidate.** v6.12 `copy_process`
//! (kernel/fork.c) links the child into the task list
//! (`list_add_tail_rcu(&p->tasks, ...)`, `attach_pid`) and into its cgroup's
//! tasks (`cgroup_post_fork`) only after `copy_mm` returned, so
//! `select_bad_process` (mm/oom_kill.c: `for_each_process`,
//! `mem_cgroup_scan_tasks` → `oom_evaluate_task`) cannot pick it while
//! `copy_page_range` charges its tables. mmsim marks the child `forking`
//! until the copy ends and the OOM killer skips it (`crate::oom`); what it
//! has charged (its page tables) still counts in the group, as in the
//! kernel, and the shared pages stay charged to their group anyway.
//!
//! The anon_vma tree is kept as, per VMA, the list of the VMAs forked from
//! it directly or not. An anonymous folio's `space` names the VMA whose
//! anon_vma it is in: its rmap walk (`rmap_walk_anon`) visits that VMA and
//! all those forked from it, at the same page index (a child's VMA has the
//! parent's layout). A folio that a child faults itself is in the child's
//! anon_vma only, as in the kernel.
//!
//! ## Write faults on shared pages
//!
//! A store to a write-protected PTE of an anonymous folio is `do_wp_page`:
//!
//! * **Reuse** when the page is PageAnonExclusive (never forked, or reused
//!   before) — the path mmsim always had — or, for an order-0 folio, when
//!   `wp_can_reuse_anon_folio` finds that this PTE is the only reference
//!   (mapcount 1, no other swap PTE of its slot: `folio_ref_count` 1 after
//!   `folio_free_swap`): the folio moves to this VMA's anon_vma
//!   (`folio_move_anon_rmap`), becomes exclusive, and the PTE writable.
//! * **Copy** otherwise (`wp_page_copy`): a new **order-0** folio is
//!   allocated and charged to the faulting task's group (`folio_prealloc`,
//!   order 0 in v6.12 whatever the folio's order or the THP settings), the
//!   page copied, mapped young and dirty; the old folio loses the PTE
//!   (`folio_remove_rmap_pte`). In v6.12 `wp_can_reuse_anon_folio` returns
//!   false for every large folio, so a page of a large folio that lost
//!   PageAnonExclusive at fork is copied on every first store — even after
//!   the other task exited, until the folio is gone (later kernels reuse an
//!   exclusively mapped large folio, `__wp_can_reuse_large_anon_folio` of
//!   the CONFIG_MM_ID series). A large folio left with pages no PTE
//!   maps is queued for a deferred split; one no PTE maps is freed.
//! * Under `thp.kernel = "rfc-v2"`, seed 003's RFC (patches 09-14): a
//!   non-exclusive large folio is copied into a new folio of its own order
//!   ("we aim to allocate the same order folio as the source, subject to
//!   constraints that may arise if the source has been mremapped or
//!   partially munmapped"): the highest order, from the folio's (capped at
//!   `thp.arch_order`) down to 2, whose aligned block around the fault lies
//!   in the VMA with every PTE mapping the folio, the allocation falling back
//!   down the orders to 0 as at a fault (`anon_fault_fallback`); the whole
//!   block is remapped to the copy. A large folio every one of whose
//!   mappings is in the faulting VMA is reused as a whole range ("we reuse
//!   as much of the folio as we can"): all its PTEs there become writable.
//!   Order-0 folios follow the v6.12 rules (the same in v6.3).
//!
//! ## Swap
//!
//! A swapped-out page shared by fork has one slot with a count of swap
//! PTEs (`swap_map`). `do_swap_page` on such an entry maps the swap-cache
//! folio **read-only** and not exclusive when another PTE still references
//! the slot or maps the folio (`pte_swp_exclusive` was cleared at fork, and
//! `folio_ref_count` is above 1); the slot is kept (`folio_free_swap` fails
//! while `folio_swapped`), and a store copies (`do_wp_page` at the end of
//! the same fault, one `pgfault`). The folio of a shared entry is put in the
//! oldest anon_vma of the tree (`__folio_set_anon` with `anon_vma->root`),
//! so the rmap finds every mapping. The last reference takes the path of
//! an unshared entry (but not exclusive: a read maps it writable under
//! v6.11+ only once the folio left the swap cache, `folio_ref_count` 1,
//! `crate::fault_swapcache`). Zapping a swap entry (`free_swap_and_cache`) drops one
//! count; the slot and its swap charge go with the last. On zram an entry
//! counted twice or more is read through `swapin_readahead` (v6.12 skips
//! the swap cache only for `__swap_count(entry) == 1`), so it reads ahead
//! its window as another device would (`crate::fault`'s `do_swap_page`).
//!
//! A slot is counted (`swap_map`) only while its swap PTEs are not
//! exclusive: fork cleared `pte_swp_exclusive` on both copies
//! (`copy_nonpresent_pte`), or they came from a page that was not
//! PageAnonExclusive; an exclusive page's one swap PTE is not counted, as
//! without fork. So `__swap_count(entry)` is the count, or 1.
//!
//! A **large folio in the swap cache** (swapped out whole before the fork,
//! its entries duplicated) is mapped by `do_swap_page`
//! ([`Sim::do_swap_page_swapcache_large`]) as 6.12 does: whole only when
//! `swap_pte_batch` finds all its PTEs holding its entries in order, inside
//! the VMA and the PMD, with the faulting entry's exclusive bit; else the
//! faulting page alone. `swap_free_nr` drops one count per slot mapped;
//! the folio is mapped exclusive only if the faulting entry was or nothing
//! else holds it (out of the swap cache, mapped nowhere), otherwise
//! read-only, and a store copies its page (order 0 in v6.12).
//! `folio_swapped` looks at every slot of a large folio.
//!
//! Large swap-in (`thp.swapin_large`, 6.12+ on zram) is taken only when
//! `__swap_count(entry) == 1` (else the swap cache's order-0 path), and an
//! order only when its block's entries are alike (`can_swapin_thp`:
//! `swap_pte_batch` compares the exclusive bit and the swap cgroup,
//! `swap_zeromap_batch` the zeromap; [`Sim::swap_batch_uniform`]): entries
//! the other task dropped (count 1, not exclusive) are read whole, a block
//! mixing forked and unforked entries falls back to a smaller order. The
//! fresh folio is exclusive; `swap_free_nr` leaves the other task its
//! count of a slot it still holds.
//! Reclaim of a shared large folio (v6.12 `shrink_folio_list`, which
//! splits only a partially mapped one): it is swapped out whole
//! (`add_to_swap` of `folio_nr_pages` slots, `swpout`/`thp_swpout`), every
//! PTE of every VMA becoming its page's entry, not exclusive, each slot
//! counted per swap PTE ([`Sim::try_to_unmap_forked`]). A later swap-in
//! takes the rules above: an entry still counted twice is read at order 0
//! through the swap cache; once the other task dropped its entries (exit,
//! zap) a large swap-in may read the folio back whole.
//!
//! ## Reclaim, exit and OOM
//!
//! `folio_referenced` and `try_to_unmap` walk every VMA of the tree
//! (`crate::rmap`): swap-out of a shared folio turns every PTE mapping it
//! into its swap entry and sets the slot's count to their number. A
//! large folio that is split (partially mapped, swap fallback, the
//! deferred split shrinker) has each tail remapped in every VMA; under the
//! 6.12 content bits a zero-filled page maps the zero page in every VMA
//! instead and is freed (`remove_migration_ptes` walks them all,
//! `crate::split_zeropage`). `exit_mmap`
//! (`crate::exit`) and MADV_DONTNEED zap the task's PTEs: a folio another
//! task maps loses one mapcount and stays; a swap entry drops its count.
//! The OOM reaper does the same for a victim's pages, so the other task's
//! pages stay.
//!
//! A copy whose allocation reclaimed the page it copies (`pte_same`
//! fails) frees the copy and faults again; the retries run as a loop
//! ([`Sim::retry_fault`], `crate::cow`), not a recursion.
//!
//! TLB (`[machine.tlb]`): `dup_mmap` ends with `flush_tlb_mm(oldmm)`, one
//! full flush of the parent's entries per fork (`nr_tlb_local_flush_all`),
//! whatever it copied.
//!
//! Cost of the fork: one system call (`fd_access_ns`) and `pte_walk_ns`
//! per PTE copied. A copy is `minor_fault_ns` (order 0, as `crate::cow`),
//! or `minor_fault_ns` and `clear_page_ns` per further page (the RFC's
//! large copy; a copy costs about a clear).
//!
//! Not modelled: a private file mapping's anonymous copies in the child
//! (above); a PMD-mapped THP is shared as its PTEs (the kernel's
//! `copy_huge_pmd` shares the PMD, and a store splits it, `thp_split_pmd`,
//! not counted here); khugepaged
//! collapses shared pages as it would exclusive ones (`max_ptes_shared` is
//! not checked); the child's own kernel memory (task structures) is not
//! charged. A large swap-cache folio of a task that never forked is still
//! mapped back over every PTE of its block that holds its entry
//! (`crate::huge_memory`), where 6.12 maps the faulting page alone when
//! one PTE of the block no longer does.

use crate::mem::folio::{flags, FolioId};
use crate::mem::pagetable::{
    TaskId, VmaId, VmaKind, PTE_DIRTY, PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG,
};
use crate::reclaim::ScanControl;
use crate::sim::{Sim, SimError};

mod do_swap_page;
mod do_wp_page;

/// Fork and copy-on-write events, for tests and reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForkStats {
    /// `fork()` calls that succeeded (`total_forks`, counted at the end of
    /// `copy_process`): a fork that failed is not counted.
    pub forks: u64,
    /// `wp_page_copy` of an anonymous folio shared by fork.
    pub cow_copies: u64,
    /// Pages copied by those (more than one per copy under the RFC).
    pub cow_copied_pages: u64,
    /// `wp_can_reuse_anon_folio` (or the RFC's range reuse) reusing a folio
    /// that fork had shared.
    pub cow_reuses: u64,
}

/// The state of fork: the anon_vma trees, shared swap slots and which
/// folios lost PageAnonExclusive (see the module overview).
#[derive(Clone, Debug, Default)]
pub(crate) struct ForkState {
    /// Per VMA: the VMAs forked from it, directly or not, in fork order.
    desc: Vec<Vec<VmaId>>,
    /// Per VMA: the VMA it was forked from (`u32::MAX` if none).
    parent: Vec<VmaId>,
    /// Per swap slot: its swap PTEs (`swap_map` count) once fork shared it;
    /// 0 = not tracked (at most one swap PTE, as without fork).
    swap_refs: Vec<u32>,
    /// Per folio, one bit: its pages are not PageAnonExclusive.
    shared: Vec<u64>,
    /// The counters.
    stats: ForkStats,
}

impl ForkState {
    fn set_shared(&mut self, f: FolioId, on: bool) {
        let w = f as usize / 64;
        if w >= self.shared.len() {
            if !on {
                return;
            }
            self.shared.resize(w + 1, 0);
        }
        if on {
            self.shared[w] |= 1 << (f % 64);
        } else {
            self.shared[w] &= !(1 << (f % 64));
        }
    }

    fn is_shared(&self, f: FolioId) -> bool {
        self.shared
            .get(f as usize / 64)
            .is_some_and(|w| w & (1 << (f % 64)) != 0)
    }

    fn refs(&self, slot: u32) -> u32 {
        self.swap_refs.get(slot as usize).copied().unwrap_or(0)
    }

    fn refs_mut(&mut self, slot: u32) -> &mut u32 {
        let i = slot as usize;
        if i >= self.swap_refs.len() {
            self.swap_refs.resize(i + 1, 0);
        }
        &mut self.swap_refs[i]
    }

    fn root(&self, mut vma: VmaId) -> VmaId {
        while let Some(&p) = self.parent.get(vma as usize) {
            if p == u32::MAX {
                break;
            }
            vma = p;
        }
        vma
    }
}

impl Sim {
    /// `fork()` of `task`: a child task in the same memory cgroup sharing
    /// its anonymous memory copy-on-write (see the module overview).
    /// Returns the child's id; its VMAs are new ids in the parent's order
    /// ([`Sim::task_vmas`]), and so are its descriptors, copies of the
    /// parent's open ones naming the same `struct file`s
    /// ([`Sim::task_fds`], `crate::open`). Errors: an unknown task, or one that exited or
    /// was killed; or the fork failed because a page-table charge of the
    /// copy OOM-killed the task (the module overview): the child's id is
    /// then used by a dead task that never ran.
    pub fn fork_task(&mut self, task: TaskId) -> Result<TaskId, SimError> {
        let t = task as usize;
        if t >= self.tasks.len() {
            return Err(SimError::Setup(format!("fork: no task {task}")));
        }
        if self.tasks[t].dead {
            return Err(SimError::Setup(format!(
                "fork: task {task} has exited or was killed"
            )));
        }
        // The fork runs as the parent: the child's page tables are charged
        // to the parent's group (v6.12 `copy_process` runs in the parent's
        // context, `__pte_alloc` charges `current`'s memcg), not to the
        // group of whichever task faulted last.
        self.cur_memcg = self.task_memcg(task);
        let name = format!("{}+fork", self.tasks[t].name);
        let child = self.add_task(&name);
        self.tasks[child as usize].memcg = self.tasks[t].memcg;
        // Not on the task list until the copy is done (the module overview).
        self.tasks[child as usize].forking = true;
        self.fork.get_or_insert_with(Default::default);
        let mut copied = 0u64;
        for vi in 0..self.tasks[t].vmas.len() {
            let p = self.tasks[t].vmas[vi];
            let v = &self.vmas[p as usize];
            let (kind, len, exec) = (v.kind, u64::from(v.len), v.exec);
            let c = match kind {
                VmaKind::Anon => self.mmap_anon(child, len)?,
                VmaKind::File {
                    file,
                    pgoff,
                    private: true,
                } => self.mmap_file_private(child, file, pgoff, len)?,
                VmaKind::File { file, pgoff, .. } => {
                    self.mmap_file(child, file, pgoff, len, exec)?
                }
            };
            // `vm_area_dup()` copies the flags (`VM_SEQ_READ`,
            // `VM_RAND_READ`); `get_file()`: the child's VMA holds the
            // parent's `struct file`, and so shares its `f_ra`.
            let pv = &self.vmas[p as usize];
            let (advice, ra_advice, slot) = (pv.thp_advice, pv.ra_advice, pv.ra_slot);
            self.vma_put_file(c);
            let slot = self.ra_slots.share(slot);
            let cv = &mut self.vmas[c as usize];
            cv.exec = exec;
            cv.thp_advice = advice;
            cv.ra_advice = ra_advice;
            cv.ra_slot = slot;
            if kind == VmaKind::Anon {
                self.link_anon_vma(p, c);
                copied += self.copy_page_range(p, c);
                if self.tasks[t].dead {
                    // A charge of this copy OOM-killed the parent: the
                    // fork fails here (the module overview).
                    break;
                }
            }
        }
        // `dup_mmap` ends with `flush_tlb_mm(oldmm)`: the parent's TLB
        // entries lose their write permission, all at once.
        self.flush_tlb_mm(task);
        self.advance(self.cost.fd_access_ns + copied * self.cost.pte_walk_ns);
        self.tasks[child as usize].forking = false;
        if self.tasks[t].dead {
            // `dup_mm` → `mmput` of the half-built mm: `exit_mmap` zaps the
            // copies (the shared folios' mapcounts and swap counts drop),
            // frees their tables (uncharged) and puts their files. The child
            // never ran: not an exit, no `total_forks`.
            // `mmput` runs as the parent: `current` is restored after the
            // zap (`madvise_dontneed` sets it to the VMA's task).
            let c = child as usize;
            let w = self.bdp_set_current(task);
            self.exit_mmap(c);
            self.bdp_set_current(w);
            self.tasks[c].dead = true;
            self.tasks[c].exited = true;
            return Err(SimError::Setup(format!(
                "fork: task {task} was OOM-killed by the fork's own page-table \
                 charge (-ENOMEM); no child"
            )));
        }
        // `copy_files()` (kernel/fork.c; `copy_process()` runs it before
        // `copy_mm()`, but nothing here reads the order): the child's
        // descriptor table names the parent's open files (`crate::open`).
        self.fork_files(task, child);
        self.fork.as_mut().unwrap().stats.forks += 1;
        Ok(child)
    }

    /// An [`Event::Fork`](crate::Event::Fork) of the task owning `vma`:
    /// fork, the child's stores to the first `pages` pages of its copy of
    /// `vma`, its exit. An unknown or file VMA counts out of range; a
    /// killed or exited task's event is dropped.
    pub(crate) fn fork_event(&mut self, vma: VmaId, pages: u32) {
        let Some(v) = self.vmas.get(vma as usize) else {
            self.acc.out_of_range += 1;
            return;
        };
        if v.kind != VmaKind::Anon {
            self.acc.out_of_range += 1;
            return;
        }
        let (task, len) = (v.task, v.len);
        if self.tasks[task as usize].dead {
            self.acc.dropped_killed += 1;
            return;
        }
        let at = self.tasks[task as usize]
            .vmas
            .iter()
            .position(|&x| x == vma)
            .expect("a VMA is in its task's list");
        let Ok(child) = self.fork_task(task) else {
            // The fork failed: its charge OOM-killed the task, no child.
            self.cur_memcg = self.task_memcg(task);
            return;
        };
        let cvma = self.tasks[child as usize].vmas[at];
        for i in 0..pages.min(len) {
            if self.tasks[child as usize].dead {
                break;
            }
            self.access(cvma, i, true);
        }
        self.exit_task(child).expect("the child exists");
        self.cur_memcg = self.task_memcg(task);
    }

    /// `unlink_anon_vmas` of an exiting or killed task's VMA: it leaves the
    /// anon_vma trees of the VMAs it was forked from (its own stays, for
    /// the folios its own children still map).
    pub(crate) fn unlink_anon_vma(&mut self, vma: VmaId) {
        let Some(fk) = self.fork.as_mut() else {
            return;
        };
        let mut a = fk.parent.get(vma as usize).copied().unwrap_or(u32::MAX);
        while a != u32::MAX {
            fk.desc[a as usize].retain(|&d| d != vma);
            a = fk.parent[a as usize];
        }
    }

    /// The VMAs of `task` in mapping order (for a forked child: the copies
    /// of its parent's VMAs); None for an unknown task.
    pub fn task_vmas(&self, task: TaskId) -> Option<&[VmaId]> {
        self.tasks.get(task as usize).map(|t| t.vmas.as_slice())
    }

    /// The swap PTEs counted for `slot` once fork shared it (0: untracked).
    #[cfg(test)]
    pub(crate) fn fork_swap_refs(&self, slot: u32) -> u32 {
        self.fork.as_ref().map_or(0, |fk| fk.refs(slot))
    }

    /// The fork and copy-on-write counters ([`ForkStats`]; zero without fork).
    pub fn fork_stats(&self) -> ForkStats {
        self.fork.as_ref().map(|f| f.stats).unwrap_or_default()
    }

    /// `anon_vma_fork`: `child` joins the anon_vma tree of `parent`.
    fn link_anon_vma(&mut self, parent: VmaId, child: VmaId) {
        let fk = self.fork.as_mut().unwrap();
        let need = child.max(parent) as usize + 1;
        if fk.desc.len() < need {
            fk.desc.resize(need, Vec::new());
            fk.parent.resize(need, u32::MAX);
        }
        fk.parent[child as usize] = parent;
        let mut a = parent;
        loop {
            fk.desc[a as usize].push(child);
            let up = fk.parent[a as usize];
            if up == u32::MAX {
                break;
            }
            a = up;
        }
    }

    /// `copy_page_range` of anonymous VMA `p` into its fresh copy `c`;
    /// returns the PTEs copied.
    fn copy_page_range(&mut self, p: VmaId, c: VmaId) -> u64 {
        let ptes = std::mem::take(&mut self.vmas[p as usize].ptes);
        let mut child = vec![0u32; ptes.len()];
        let mut parent = ptes;
        let mut copied = 0;
        let fk = self.fork.as_mut().unwrap();
        for (i, pte) in parent.iter_mut().enumerate() {
            let old = *pte;
            if old == 0 {
                continue;
            }
            copied += 1;
            if old & PTE_PRESENT == 0 {
                // copy_nonpresent_pte → swap_duplicate().
                let r = fk.refs_mut(old - 1);
                *r = if *r == 0 { 2 } else { *r + 1 };
                child[i] = old;
                continue;
            }
            let f = old & PTE_FOLIO_MASK;
            if f == self.zero_folio {
                child[i] = old & !PTE_YOUNG;
                continue;
            }
            // copy_present_ptes → folio_try_dup_anon_rmap_ptes, wrprotect.
            if self.thp.content.on && self.folios[f].order() > 0 && old & PTE_DIRTY != 0 {
                // The 6.12 content bits (`crate::split_zeropage`): the
                // page's data moves from the dirty PTE, cleared below, to
                // its bit. A page never stored to stays zero-filled; the
                // folio being shared makes a store to it a fault from now
                // on (`Sim::store_to_zero_subpage`).
                let off = (i as u32).wrapping_sub(self.folios[f].index);
                if off < 1 << self.folios[f].order() {
                    self.thp.content.set(self.folios.head_pfn(f) + off);
                }
            }
            let fo = &mut self.folios[f];
            fo.mapcount = fo.mapcount.saturating_add(1);
            if old & PTE_DIRTY != 0 {
                fo.set(flags::DIRTY);
            }
            fk.set_shared(f, true);
            fo.set_maywrite(false);
            *pte = old & !PTE_DIRTY;
            child[i] = old & !(PTE_DIRTY | PTE_YOUNG);
        }
        self.vmas[p as usize].ptes = parent;
        let zero_pmds = self.vmas[p as usize].huge_zero_pmds.clone();
        let cv = &mut self.vmas[c as usize];
        cv.ptes = child;
        cv.huge_zero_pmds = zero_pmds;
        let len = self.vmas[p as usize].ptes.len() as u32;
        if self.kmem.is_some() {
            // The child's page tables (`__pte_alloc` per table reached),
            // until a charge OOM-kills the parent: v6.12 fails that charge
            // (`passed_oom && task_is_dying()`) and the copy stops.
            // Departure in order: mmsim copies the VMA's PTEs first and
            // then charges its tables, while v6.12 `copy_pte_range` (via
            // `copy_pmd_range` ... `copy_p4d_range`) allocates each table
            // before copying the PTEs under it. So when a table charge
            // OOMs, mmsim's half-built child already maps the whole VMA
            // (RSS counted by `oom_badness` were it a candidate) where the
            // kernel's maps only the tables copied before; the OOM rule
            // test's parent/child "tie" (rule_tests/oom.rs, 64 pages + 3
            // tables each) depends on this order.
            let parent = self.vmas[p as usize].task as usize;
            let mut i = 0;
            while i < len && !self.tasks[parent].dead {
                let table_end = (i | 511) + 1;
                if self.vmas[c as usize].ptes[i as usize..table_end.min(len) as usize]
                    .iter()
                    .any(|&p| p != 0)
                {
                    self.kmem_pte_alloc(c, i);
                }
                i = table_end;
            }
        }
        copied
    }

    /// Whether anonymous `vma`'s anon_vma has VMAs forked from it.
    #[inline]
    pub(crate) fn anon_forked(&self, vma: VmaId) -> bool {
        self.fork
            .as_ref()
            .is_some_and(|fk| fk.desc.get(vma as usize).is_some_and(|d| !d.is_empty()))
    }

    /// The VMAs forked from `vma` (its anon_vma tree below it).
    #[inline]
    pub(crate) fn anon_vma_desc(&self, vma: VmaId) -> &[VmaId] {
        match &self.fork {
            Some(fk) => fk.desc.get(vma as usize).map_or(&[], |d| d.as_slice()),
            None => &[],
        }
    }

    /// The folio's pages lost PageAnonExclusive at a fork.
    #[inline]
    pub(crate) fn folio_anon_shared(&self, f: FolioId) -> bool {
        self.fork.as_ref().is_some_and(|fk| fk.is_shared(f))
    }

    /// `free_folio`'s hook: a freed folio id forgets its sharing.
    #[cold]
    #[inline(never)]
    pub(crate) fn fork_forget_folio(&mut self, f: FolioId) {
        if let Some(fk) = self.fork.as_mut() {
            fk.set_shared(f, false);
        }
    }

    /// A migration's hook (`crate::compaction::migrate`): the destination
    /// `dst` of folio `src` takes its PageAnonExclusive bit.
    #[cold]
    #[inline(never)]
    pub(crate) fn fork_migrate_folio(&mut self, src: FolioId, dst: FolioId) {
        if let Some(fk) = self.fork.as_mut() {
            let shared = fk.is_shared(src);
            fk.set_shared(src, false);
            fk.set_shared(dst, shared);
        }
    }

    /// Whether swap `slot` is referenced by swap PTEs that fork shared
    /// (`folio_swapped`): the slot must stay.
    #[inline]
    pub(crate) fn swap_slot_shared(&self, slot: u32) -> bool {
        self.fork.as_ref().is_some_and(|fk| fk.refs(slot) > 0)
    }

    /// `free_swap_and_cache`'s `swap_entry_put` for a slot fork shared:
    /// drops one swap PTE's count; true if others remain (the caller then
    /// frees nothing).
    #[cold]
    #[inline(never)]
    pub(crate) fn swap_put_shared(&mut self, slot: u32) -> bool {
        let Some(fk) = self.fork.as_mut() else {
            return false;
        };
        let r = fk.refs(slot);
        if r == 0 {
            return false;
        }
        *fk.refs_mut(slot) = r - 1;
        r > 1
    }

    /// The PTEs of every VMA of folio `f`'s anon_vma tree that map it, and
    /// whether some page of it is mapped by none.
    #[cold]
    #[inline(never)]
    pub(crate) fn anon_family_mapped(&self, f: FolioId) -> (u32, bool) {
        let fo = self.folios[f];
        let n = 1u32 << fo.order();
        let mut per_page = [false; 512];
        let mut total = 0;
        let desc = self.anon_vma_desc(fo.space);
        for &vma in std::iter::once(&fo.space).chain(desc) {
            let v = &self.vmas[vma as usize];
            for i in 0..n {
                let p = v.pte(fo.index + i);
                if p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f {
                    total += 1;
                    per_page[i as usize] = true;
                }
            }
        }
        (total, per_page[..n as usize].iter().any(|m| !m))
    }

    /// `try_to_unmap` of anonymous folio `f` whose anon_vma tree has forked
    /// VMAs: every PTE mapping it in every VMA of the tree becomes its
    /// page's swap entry (the folio is in the swap cache by now), and each
    /// slot's count is set to its swap PTEs; a VM_LOCKED VMA stops the walk
    /// and keeps the folio mapped.
    #[inline(never)]
    pub(crate) fn try_to_unmap_forked(&mut self, f: FolioId, sc: &mut ScanControl) -> bool {
        let fo = self.folios[f];
        let n = 1u32 << fo.order();
        let mut per_page = [0u32; 512];
        let (mut dirty, mut unmapped, mut aborted) = (false, 0u32, false);
        let mut walk = self.rmap_walk_start(f);
        'walk: while let Some((vma, index)) = self.rmap_walk_next(&mut walk) {
            sc.charge_rmap(self.cost.rmap_ns);
            if !self.vmas[vma as usize].locked {
                // TTU_SPLIT_HUGE_PMD: a PMD mapping of it here is split.
                self.split_anon_pmd_at_unmap(vma, f);
            }
            let v = &mut self.vmas[vma as usize];
            for i in 0..n {
                let p = v.pte(index + i);
                if p & PTE_PRESENT == 0 || p & PTE_FOLIO_MASK != f {
                    continue;
                }
                if v.locked {
                    aborted = true;
                    break 'walk;
                }
                dirty |= p & PTE_DIRTY != 0;
                *v.pte_mut(index + i) = crate::mem::pagetable::pte_swap(fo.swap - 1 + i);
                per_page[i as usize] += 1;
                unmapped += 1;
            }
        }
        // A page that lost PageAnonExclusive leaves swap PTEs that are not
        // exclusive (`pte_swp_exclusive` clear), counted per slot; an
        // exclusive page leaves one exclusive swap PTE, as without fork.
        let shared = self.folio_anon_shared(f);
        let fk = self.fork.as_mut().unwrap();
        for (i, &c) in per_page[..n as usize].iter().enumerate() {
            if c > 1 || (c > 0 && shared) {
                *fk.refs_mut(fo.swap - 1 + i as u32) += c;
            }
        }
        let fo_mut = &mut self.folios[f];
        fo_mut.mapcount = if aborted {
            fo_mut.mapcount.saturating_sub(unmapped.min(255) as u8)
        } else {
            // No PTE left to be writable (`GEN_REFS_MAYWRITE`).
            fo_mut.set_maywrite(false);
            0
        };
        if dirty {
            fo_mut.set(flags::DIRTY);
        }
        !aborted
    }

    /// `__split_huge_page_tail` remapping page `i` of large anonymous folio
    /// `f` to folio `t` in every VMA of its anon_vma tree; returns
    /// the PTEs now mapping `t`.
    ///
    /// v6.12 `remap_page` → `remove_migration_ptes(…,
    /// RMP_USE_SHARED_ZEROPAGE)` walks every VMA of the anon_vma
    /// (`rmap_walk`), and `try_to_map_unused_to_zeropage` tests the page,
    /// not its mappings: no mapcount or PageAnonExclusive test. So a
    /// zero-filled page of a folio shared by fork maps the zero page in the
    /// parent and in every child that maps it
    /// ([`Sim::split_page_zero_filled`]), and is freed. Its mlock test is
    /// `folio_test_mlocked(folio) || vma->vm_flags & VM_LOCKED`: here the
    /// folio counts as mlocked when any VMA that maps the page is
    /// VM_LOCKED (a child does not inherit VM_LOCKED, `dup_mmap`), so then
    /// no VMA gets the zero page. Departure: the kernel decides per VMA
    /// (`folio_test_mlocked` is the folio's PG_mlocked, which mlock sets on
    /// a large folio only where a VM_LOCKED VMA maps it whole,
    /// `allow_mlock_munlock` in mm/mlock.c); mmsim
    /// decides once, for every VMA, from the page's mappings — the same
    /// outcome when PG_mlocked is set, but where it is not (a VM_LOCKED VMA
    /// mapping only part of the folio) the kernel maps the zero page in
    /// the other VMAs and mmsim does not.
    #[cold]
    #[inline(never)]
    pub(crate) fn split_remap_forked(&mut self, f: FolioId, i: u32, t: FolioId) -> u8 {
        let maps = |p: u32| p & PTE_PRESENT != 0 && p & PTE_FOLIO_MASK == f;
        let mut zero = self.split_page_zero_filled(f, i, t);
        if zero {
            let mut walk = self.rmap_walk_start(f);
            while let Some((vma, index)) = self.rmap_walk_next(&mut walk) {
                let v = &self.vmas[vma as usize];
                if v.locked && maps(v.pte(index + i)) {
                    zero = false;
                }
            }
        }
        let mut mapped = 0u8;
        let mut walk = self.rmap_walk_start(f);
        while let Some((vma, index)) = self.rmap_walk_next(&mut walk) {
            let p = self.vmas[vma as usize].pte(index + i);
            if !maps(p) {
                continue;
            }
            let new = if zero {
                self.zero_page_pte()
            } else {
                mapped = mapped.saturating_add(1);
                (p & !PTE_FOLIO_MASK) | t
            };
            *self.vmas[vma as usize].pte_mut(index + i) = new;
        }
        if t != f && self.folio_anon_shared(f) {
            self.fork.as_mut().unwrap().set_shared(t, true);
        }
        mapped
    }

    /// The OOM reaper's zap of anonymous VMA `vid` of a victim once a task
    /// forked (`__oom_reap_task_mm` → `unmap_page_range`): the zap of
    /// MADV_DONTNEED without its cost.
    #[cold]
    #[inline(never)]
    pub(crate) fn oom_reap_forked(&mut self, vid: VmaId) {
        let len = self.vmas[vid as usize].len;
        self.zap_pte_range(vid, 0, len);
        self.unlink_anon_vma(vid);
    }
}
