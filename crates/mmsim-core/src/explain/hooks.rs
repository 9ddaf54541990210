//! The explainer's hooks: what reclaim (`get_scan_count`, `folio_referenced`,
//! `folio_check_references`, `shrink_folio_list`'s keep rules, `shrink_active_list`,
//! `__remove_mapping`), the workingset code (`workingset_refault`), MGLRU
//! (`lru_gen_look_around`, `walk_mm`, `sort_folio`) and DAMON (`damon_ptep_mkold`,
//! DAMOS prio/deprio) tell a chosen page's story. Each is `#[cold]` and called only
//! when `Sim::xp` is set (see the parent module).

use super::*;

impl Sim {
    /// `get_scan_count` decided `balance` for group `m` (kept for the next eviction's story).
    #[cold]
    pub(crate) fn xp_scan_count(
        &mut self,
        sc: &ScanControl,
        balance: crate::reclaim::ScanBalance,
        fraction: [u64; 2],
        denominator: u64,
        nr: [u64; 4],
    ) {
        let text = format!(
            "get_scan_count: {} (anon {}/{}, file {}/{}; scan anon {}+{}, file {}+{} at priority \
             {})",
            match balance {
                crate::reclaim::ScanBalance::Equal => "SCAN_EQUAL",
                crate::reclaim::ScanBalance::Fract => "SCAN_FRACT",
                crate::reclaim::ScanBalance::Anon => "SCAN_ANON",
                crate::reclaim::ScanBalance::File => "SCAN_FILE",
            },
            fraction[0],
            denominator,
            fraction[1],
            denominator,
            nr[0],
            nr[1],
            nr[2],
            nr[3],
            sc.priority
        );
        if let Some(xp) = self.xp.as_mut() {
            xp.balance = Some((sc.memcg, text));
        }
    }

    /// `folio_referenced` found `young` young PTEs (or PG_young) of folio `f`.
    #[cold]
    pub(crate) fn xp_referenced(
        &mut self,
        f: FolioId,
        sc: &ScanControl,
        r: &crate::rmap::Referenced,
    ) {
        let Some(i) = self.xp_page(f) else {
            return;
        };
        if let Some(xp) = self.xp.as_mut() {
            xp.referenced = (r.vmas, r.exec, r.locked);
        }
        if self.folios[f].mapcount == 0 {
            // Not mapped: the rmap walk has no PTE to test (nothing to tell).
            return;
        }
        let lru_gen = matches!(self.policy, crate::sim::Policy::Mglru(_));
        let found = match r.vmas {
            0 => "no young PTE".to_string(),
            n => format!("{n} mapping(s) with a young PTE"),
        };
        let text = format!(
            "rmap walk by {} (priority {}): {found}{}{}, accessed bits cleared{}",
            reclaimer(sc),
            sc.priority,
            if r.exec { ", VM_EXEC" } else { "" },
            if r.locked { ", VM_LOCKED" } else { "" },
            if lru_gen && r.vmas > 0 {
                " (through lru_gen_look_around, which also scans the neighbouring PTEs)"
            } else {
                ""
            }
        );
        let who = self.xp_reclaimer_task(sc);
        self.xp_push(i, sc.now(), &who, "folio_referenced", text);
    }

    /// `folio_check_references` of `shrink_folio_list` decided `refs` for folio `f`,
    /// whose flags were `before`.
    #[cold]
    pub(crate) fn xp_check_references(
        &mut self,
        f: FolioId,
        sc: &ScanControl,
        before: u16,
        refs: crate::reclaim::vmscan::FolioReferences,
    ) {
        use crate::reclaim::vmscan::FolioReferences as R;
        let Some(i) = self.xp_page(f) else {
            return;
        };
        let (young, exec, locked) = self.xp.as_ref().expect("on").referenced;
        let file = self.folios[f].is_file();
        let was_ref = before & flags::REFERENCED != 0;
        let rule = match (self.policy, refs) {
            (_, R::Activate) if locked => "found in a VM_LOCKED VMA → activate".to_string(),
            (crate::sim::Policy::Mglru(_), R::Activate) => {
                "young PTE, and lru_gen_set_refs saw it referenced before → activate".to_string()
            }
            (crate::sim::Policy::Mglru(_), R::Keep) => {
                "young PTE, first sighting (lru_gen_set_refs set PG_referenced) → keep".to_string()
            }
            (_, R::Activate) if young > 0 && !file && !was_ref && young == 1 && !exec => {
                "young PTE on a swap-backed folio (4.9: activate at once) → activate".to_string()
            }
            (_, R::Activate) if was_ref => {
                "referenced twice: a young PTE and PG_referenced already set → activate".to_string()
            }
            (_, R::Activate) if young > 1 => {
                format!("referenced by {young} mappings at once → activate")
            }
            (_, R::Activate) if exec => "young PTE of a VM_EXEC file folio → activate".to_string(),
            (_, R::Activate) => "activate".to_string(),
            (_, R::Keep) => {
                "first young PTE: PG_referenced set, kept on the inactive list (one more \
                 round)"
                    .to_string()
            }
            (crate::sim::Policy::Mglru(_), _) => {
                "no young PTE (fd accesses count in the tiers sort_folio judged) → reclaim"
                    .to_string()
            }
            (_, R::ReclaimClean) => {
                "no young PTE, PG_referenced only (fd access) on a file folio → reclaim if clean"
                    .to_string()
            }
            (_, R::Reclaim) => "no young PTE and no PG_referenced → reclaim".to_string(),
        };
        let who = self.xp_reclaimer_task(sc);
        self.xp_push(i, sc.now(), &who, "folio_check_references", rule);
        if refs == R::Activate {
            // shrink_folio_list sets PG_active on the way out (activate_locked).
            self.xp.as_mut().expect("on").pages[i].last.flags |= flags::ACTIVE;
        }
    }

    /// `shrink_folio_list` kept folio `f` instead of evicting it, by the rule `why`
    /// (a dirty folio left to the flusher, one under writeback, no swap slot, ...):
    /// `activate` when it goes back to the active list (`activate_locked`), else it
    /// goes back to the inactive list (`keep_locked`).
    #[cold]
    pub(crate) fn xp_kept(&mut self, f: FolioId, sc: &ScanControl, activate: bool, why: &str) {
        let Some(i) = self.xp_page(f) else {
            return;
        };
        let text = format!(
            "not evicted by {} (priority {}): {why} → {}",
            reclaimer(sc),
            sc.priority,
            if activate {
                "activate_locked: PG_active, back to the active list"
            } else {
                "keep_locked: back to the inactive list"
            }
        );
        let who = self.xp_reclaimer_task(sc);
        self.xp_push(i, sc.now(), &who, "shrink_folio_list", text);
        if activate {
            // shrink_folio_list sets PG_active on the way out.
            self.xp.as_mut().expect("on").pages[i].last.flags |= flags::ACTIVE;
        }
    }

    /// An actor outside the page's own events and reclaim's scans (`who`, in the
    /// kernel's `func`) changed folio `f`: told by name instead of as "background".
    #[cold]
    pub(crate) fn xp_actor(&mut self, f: FolioId, who: &str, func: &str, text: String) {
        let Some(i) = self.xp_page(f) else {
            return;
        };
        let t = self.clock;
        self.xp_push(i, t, who, func, text);
    }

    /// `shrink_active_list` kept (`kept`) or deactivated folio `f`.
    #[cold]
    pub(crate) fn xp_shrink_active(&mut self, f: FolioId, sc: &ScanControl, kept: bool) {
        let Some(i) = self.xp_page(f) else {
            return;
        };
        let text = if kept {
            "young PTE of a VM_EXEC file folio: stays on the active list".to_string()
        } else {
            format!(
                "taken from the active tail by {} (priority {}) and deactivated to the inactive \
                 list{} (PG_referenced is not consulted)",
                reclaimer(sc),
                sc.priority,
                if self.folios[f].test(flags::WORKINGSET) {
                    ", PG_workingset set"
                } else {
                    ""
                }
            )
        };
        let who = self.xp_reclaimer_task(sc);
        self.xp_push(i, sc.now(), &who, "shrink_active_list", text);
    }

    /// Folio `f` (page `key`) was evicted by `sc`: `__remove_mapping` left `slot`
    /// (a shadow, or nothing) in its page-cache or swap slot.
    #[cold]
    pub(crate) fn xp_evicted(&mut self, key: PageKey, sc: &ScanControl, shadow: Option<u32>) {
        let Some(i) = self.xp.as_ref().and_then(|x| x.index_of(key)) else {
            return;
        };
        let group = self
            .memcgs
            .get(sc.memcg as usize)
            .map_or("?", |g| g.path.as_str())
            .to_string();
        let balance = match self.xp.as_ref().and_then(|x| x.balance.as_ref()) {
            Some((m, b)) if *m == sc.memcg => format!("; {b}"),
            _ => String::new(),
        };
        let shadow_text = match shadow.and_then(|v| self.shadow_layout.unpack(v)) {
            Some(s) => match self.policy {
                crate::sim::Policy::Mglru(_) => format!(
                    "shadow stored (lru_gen_eviction): token seq {} refs {}, memcg id {}, \
                     workingset {}",
                    s.eviction >> crate::reclaim::lru_gen::LRU_REFS_WIDTH,
                    s.eviction & crate::reclaim::lru_gen::LRU_REFS_MASK as u32,
                    s.memcg_id,
                    s.workingset
                ),
                _ => format!(
                    "shadow stored (workingset_eviction): eviction clock {} (nonresident_age \
                     >> {}), memcg id {}, workingset {}",
                    s.eviction, self.shadow_layout.bucket_order, s.memcg_id, s.workingset
                ),
            },
            None => "no shadow kept".to_string(),
        };
        let where_ = if key.file {
            "dropped from the page cache"
        } else {
            "its data now in its swap slot"
        };
        let text = format!(
            "evicted by {} at priority {} from {group}: {where_}; {shadow_text}{balance}",
            reclaimer(sc),
            sc.priority
        );
        let who = self.xp_reclaimer_task(sc);
        self.xp_push(i, sc.now(), &who, "__remove_mapping", text);
    }

    /// The page key of folio `f` while it is still there (for [`Sim::xp_evicted`]).
    #[cold]
    pub(crate) fn xp_key_of(&self, f: FolioId) -> PageKey {
        self.xp_key(f)
    }

    /// The shadow left in page `key`'s slot, if any.
    #[cold]
    pub(crate) fn xp_slot_shadow(&self, key: PageKey, swap_slot: u32) -> Option<u32> {
        let v = if key.file {
            self.xp_slot(key)
        } else {
            let swap = self.swap.as_ref()?;
            *swap.slots.get(swap_slot.checked_sub(1)? as usize)?
        };
        self.shadow_layout.unpack(v).map(|_| v)
    }

    /// Counts a refault of folio `f` (for `--top`).
    #[cold]
    pub(crate) fn xp_count_refault(&mut self, f: FolioId) {
        let key = self.xp_key(f);
        let Some(xp) = self.xp.as_mut() else {
            return;
        };
        if let Some(c) = xp.counts.as_mut() {
            *c.entry(key).or_insert(0) += 1;
        }
        if let Some(i) = xp.index_of(key) {
            xp.pages[i].story.refaults += 1;
        }
    }

    /// The refault of folio `f` was judged: `text` says how.
    #[cold]
    pub(crate) fn xp_refault(&mut self, f: FolioId, func: &str, text: String) {
        let Some(i) = self.xp_page(f) else {
            return;
        };
        let t = self.clock;
        let who = self.xp.as_ref().expect("on").task.clone();
        self.xp_push(i, t, &who, func, text);
        // The folio is not in its slot yet: the read or fault that follows tells
        // how it came in and on which list.
        self.xp.as_mut().expect("on").pages[i].last = PageState::default();
    }

    /// `workingset_refault` of folio `f` with `shadow`: the distance against the
    /// workingset size and the decision.
    #[cold]
    pub(crate) fn xp_workingset_refault(
        &mut self,
        f: FolioId,
        shadow: crate::reclaim::workingset::Shadow,
        file: bool,
    ) {
        if self.xp_page(f).is_none() {
            return;
        }
        let text = match self.workingset_refault_distance(shadow, file) {
            None => "the evicting group is gone: not recent, stays inactive".to_string(),
            Some((d, size)) if d <= size => format!(
                "refault distance {d} ≤ workingset size {size} (the pages it would have needed \
                 on the inactive list): workingset_activate → active list{}",
                if shadow.workingset {
                    "; the shadow had PG_workingset: workingset_restore, PG_workingset set, IO \
                     cost noted (lru_note_cost)"
                } else {
                    ""
                }
            ),
            Some((d, size)) => format!(
                "refault distance {d} > workingset size {size}: too long ago to have stayed \
                 resident with more memory, stays inactive"
            ),
        };
        self.xp_refault(f, "workingset_refault", text);
    }

    /// A page-table scan of MGLRU found folio `f`'s PTE young and cleared it.
    #[cold]
    pub(crate) fn xp_lru_gen_young(&mut self, f: FolioId, sc: &ScanControl, by: &str) {
        let Some(i) = self.xp_page(f) else {
            return;
        };
        let gen = crate::reclaim::lru_gen::folio_lru_gen(&self.folios[f]);
        let text = format!(
            "{by} by {}: young PTE cleared, folio_update_gen → generation {}",
            reclaimer(sc),
            gen.map_or("none".to_string(), |g| g.to_string())
        );
        let who = self.xp_reclaimer_task(sc);
        let func = if by.starts_with("look") {
            "lru_gen_look_around"
        } else {
            "walk_mm"
        };
        self.xp_push(i, sc.now(), &who, func, text);
    }

    /// MGLRU's `sort_folio` moved folio `f` instead of isolating it (`why`).
    #[cold]
    pub(crate) fn xp_sort_folio(&mut self, f: FolioId, sc: &ScanControl, why: &str) {
        let Some(i) = self.xp_page(f) else {
            return;
        };
        let gen = crate::reclaim::lru_gen::folio_lru_gen(&self.folios[f]);
        let text = format!(
            "{why} → generation {} ({}, priority {})",
            gen.map_or("none".to_string(), |g| g.to_string()),
            reclaimer(sc),
            sc.priority
        );
        let who = self.xp_reclaimer_task(sc);
        self.xp_push(i, sc.now(), &who, "sort_folio", text);
    }

    /// DAMON cleared folio `f`'s accessed bit (`damon_ptep_mkold`).
    #[cold]
    pub(crate) fn xp_damon_mkold(&mut self, f: FolioId, young: bool) {
        let Some(i) = self.xp_page(f) else {
            return;
        };
        let text = if young {
            "DAMON sampling: the young PTE was cleared (PG_young set so reclaim still sees it), \
             PG_idle set"
        } else {
            "DAMON sampling: PTE already old, PG_idle set"
        };
        let t = self.clock;
        self.xp_push(i, t, "kdamond", "damon_ptep_mkold", text.to_string());
    }
}
