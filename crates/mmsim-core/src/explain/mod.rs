//! A page's life story (`mmsim explain`): every event of a few chosen pages'
//! lives told in the kernel's terms — how each came in (`do_anonymous_page`,
//! `do_swap_page`, `filemap_fault`, `filemap_read`, readahead), who saw and
//! cleared its accessed bits (`folio_referenced` in reclaim's rmap walk,
//! MGLRU's `lru_gen_look_around` and `walk_mm`, DAMON's `damon_ptep_mkold`),
//! which rule moved it between lists (`folio_mark_accessed`,
//! `folio_check_references`, `shrink_active_list`, MGLRU's `sort_folio`),
//! which rule of `shrink_folio_list` kept it when it was not evicted (a dirty
//! file folio left to the flusher, one under writeback, no swap slot, still
//! mapped, dirty with PG_referenced, a write just started), the actors
//! outside reclaim that moved it (`folio_end_writeback`'s rotation, DAMOS
//! `lru_prio`/`lru_deprio` by kdamond), who evicted it (`__remove_mapping` under kswapd, direct or memcg
//! reclaim, with the priority, the group and `get_scan_count`'s balance at
//! that moment), the shadow left behind (`workingset_eviction`,
//! `lru_gen_eviction`) and, on refault, the refault distance against the
//! workingset size and the decision (`workingset_refault`,
//! `lru_gen_refault`). The functions named are those of mm/ in v6.12
//! (mm/vmscan.c, mm/workingset.c, mm/swap.c, mm/rmap.c), or the MGLRU
//! version the machine runs (v6.1 / v6.14).
//!
//! Off by default (`machine.explain` absent). Like the tracepoints
//! (`crate::tracepoint`), each call site is one test of `Sim::xp` (an
//! `Option<Box<Explainer>>`) on a slow path — reclaim, refault, MGLRU
//! aging and look-around, DAMON's mkold — and a `#[cold]` call when it is
//! set. The per-access path pays nothing: `Sim::run` tests `xp` once per
//! batch and runs `run_explained` when it is on, which after each event
//! compares the chosen pages' state (resident or not, PG_active,
//! PG_referenced, PG_workingset, the MGLRU generation and refs) with what
//! the story last recorded, and tells the change the hooks did not explain
//! (a fault, a readahead, `folio_mark_accessed`).
//!
//! Memory is bounded: events are kept only for the chosen pages (at most
//! `max_events` each). For `--top N` a first pass (`count_refaults`) counts
//! the refaults of every page, in a map of refaulted pages only, and a
//! second, deterministic pass of the same scenario records the N most
//! refaulted pages' stories.
//!
//! A page is named `FILE:INDEX` (a file of the scenario by name, a page
//! index) or `TASK:VADDR` (a task by name, a hex address in its simulated
//! layout, `crate::damon`'s `damon_va_maps`: VMAs top-down from
//! 0x7f0000000000 in mapping order).
//!
//! This file holds the configuration, the story's types, the per-event
//! comparison (`run_explained`) and the report; `hooks.rs` the calls from
//! reclaim, the workingset code, MGLRU and DAMON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;
use crate::event::Event;
use crate::mem::folio::{flags, FolioId, GEN_REFS_MAYWRITE};
use crate::mem::pagetable::{VmaKind, PTE_FOLIO_MASK, PTE_PRESENT};
use crate::reclaim::{Reclaimer, ScanControl};
use crate::sim::Sim;

mod hooks;

/// What `mmsim explain` asks for (`machine.explain`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplainConfig {
    /// The pages whose stories are recorded: `FILE:INDEX` or `TASK:0xVADDR`.
    #[serde(default)]
    pub pages: Vec<String>,
    /// Count every page's refaults (the first pass of `--top N`).
    #[serde(default)]
    pub count_refaults: bool,
    /// Most events kept per page (later ones are counted as dropped); default 10,000.
    #[serde(default = "default_max")]
    pub max_events: u64,
}

fn default_max() -> u64 {
    10_000
}

impl Default for ExplainConfig {
    fn default() -> Self {
        ExplainConfig {
            pages: Vec::new(),
            count_refaults: false,
            max_events: default_max(),
        }
    }
}

impl ExplainConfig {
    /// Checks the page names' shape and the cap; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for p in &self.pages {
            PageSpec::parse(p)?;
        }
        if self.max_events == 0 {
            return Err(ConfigError::new(
                "machine.explain.max_events",
                "0 keeps nothing; at least 1",
            ));
        }
        Ok(())
    }
}

/// A page named by the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PageSpec {
    /// Page `index` of the file named so.
    File(String, u64),
    /// The page holding `vaddr` in the task named so.
    Task(String, u64),
}

impl PageSpec {
    /// `FILE:INDEX` or `TASK:0xVADDR` (the last colon splits).
    pub(crate) fn parse(s: &str) -> Result<PageSpec, ConfigError> {
        let field = "machine.explain.pages";
        let Some((name, at)) = s.rsplit_once(':') else {
            return Err(ConfigError::new(
                field,
                format!("`{s}`: expected FILE:INDEX or TASK:0xVADDR"),
            ));
        };
        if name.is_empty() {
            return Err(ConfigError::new(
                field,
                format!("`{s}`: no file or task name before the colon"),
            ));
        }
        if let Some(hex) = at.strip_prefix("0x").or_else(|| at.strip_prefix("0X")) {
            let v = u64::from_str_radix(hex, 16).map_err(|_| {
                ConfigError::new(field, format!("`{s}`: `{at}` is not a hex address"))
            })?;
            return Ok(PageSpec::Task(name.to_string(), v));
        }
        let i = at.parse::<u64>().map_err(|_| {
            ConfigError::new(
                field,
                format!("`{s}`: `{at}` is neither a page index nor a 0x address"),
            )
        })?;
        Ok(PageSpec::File(name.to_string(), i))
    }
}

/// A page as the simulator names it: a file's page, or an anonymous VMA's page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct PageKey {
    /// File-backed (`space` is a file id) or anonymous (`space` is a VMA id).
    pub(crate) file: bool,
    /// The file or VMA.
    pub(crate) space: u32,
    /// The page index in it.
    pub(crate) index: u32,
}

/// One event of a page's life.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoryEvent {
    /// Simulated time, ns.
    pub t_ns: u64,
    /// Who acted: a task's name, `kswapd0`, `kdamond`.
    pub who: String,
    /// The kernel function whose decision this is.
    pub func: String,
    /// What happened and why, in the kernel's terms.
    pub text: String,
    /// Accesses to the page by the workload since the previous event.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub accesses_before: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One chosen page's story.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageStory {
    /// The page as asked for (`FILE:INDEX`, `TASK:0xVADDR`).
    pub page: String,
    /// What it is: `file data page 12`, `anon page 3 of task app's VMA 0`.
    pub what: String,
    /// Why there is no story (unknown file, out of range, never touched); None
    /// when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its events in time order.
    pub events: Vec<StoryEvent>,
    /// Accesses by the workload in all.
    pub accesses: u64,
    /// Refaults (`workingset_refault` calls for it).
    pub refaults: u64,
    /// Events not kept (over `max_events`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: u64,
}

/// What `machine.explain` produced (`RunResult::explain`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExplainReport {
    /// The chosen pages' stories, in the order asked.
    pub pages: Vec<PageStory>,
    /// With `count_refaults`: every refaulted page as `FILE:INDEX` or
    /// `TASK:0xVADDR` and its refaults, most refaulted first (ties by name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refaults: Vec<(String, u64)>,
}

/// The state of a page the story last told.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct PageState {
    resident: bool,
    flags: u16,
    gen_refs: u8,
}

/// The flags whose changes a story tells.
const TOLD: u16 = flags::ACTIVE | flags::REFERENCED | flags::WORKINGSET | flags::UNEVICTABLE;

/// One chosen page while the run goes.
#[derive(Clone, Debug)]
struct Tracked {
    spec: PageSpec,
    key: Option<PageKey>,
    story: PageStory,
    last: PageState,
    pending_accesses: u64,
}

/// The recorder (`Sim::xp`).
#[derive(Clone, Debug)]
pub(crate) struct Explainer {
    pages: Vec<Tracked>,
    max_events: u64,
    unresolved: usize,
    /// Refaults per page (`count_refaults`).
    counts: Option<BTreeMap<PageKey, u64>>,
    /// `get_scan_count`'s last decision, by group: (group, text).
    balance: Option<(crate::memcg::MemcgId, String)>,
    /// The last `folio_referenced` result of a chosen folio: (young PTEs, exec, locked).
    referenced: (u32, bool, bool),
    /// The task of the event being run (who direct reclaim and refaults run in).
    task: String,
}

impl Explainer {
    /// The recorder for `cfg`, if there is one.
    pub(crate) fn new(cfg: Option<&ExplainConfig>) -> Option<Box<Explainer>> {
        let cfg = cfg?;
        let pages: Vec<Tracked> = cfg
            .pages
            .iter()
            .filter_map(|p| {
                Some(Tracked {
                    spec: PageSpec::parse(p).ok()?,
                    key: None,
                    story: PageStory {
                        page: p.clone(),
                        ..Default::default()
                    },
                    last: PageState::default(),
                    pending_accesses: 0,
                })
            })
            .collect();
        Some(Box::new(Explainer {
            unresolved: pages.len(),
            pages,
            max_events: cfg.max_events,
            counts: cfg.count_refaults.then(BTreeMap::new),
            balance: None,
            referenced: (0, false, false),
            task: String::new(),
        }))
    }

    fn index_of(&self, key: PageKey) -> Option<usize> {
        self.pages.iter().position(|p| p.key == Some(key))
    }
}

/// The reclaimer's name as the story tells it.
fn reclaimer(sc: &ScanControl) -> &'static str {
    match sc.who {
        Reclaimer::Kswapd => "kswapd",
        Reclaimer::Direct => "direct reclaim",
        Reclaimer::Memcg if sc.proactive_swappiness.is_some() => "proactive (memory.reclaim)",
        Reclaimer::Memcg => "memcg limit reclaim",
    }
}

fn list_name(fl: u16) -> &'static str {
    match crate::mem::folio::LruList::of_flags(fl) {
        crate::mem::folio::LruList::InactiveAnon => "inactive_anon",
        crate::mem::folio::LruList::ActiveAnon => "active_anon",
        crate::mem::folio::LruList::InactiveFile => "inactive_file",
        crate::mem::folio::LruList::ActiveFile => "active_file",
        crate::mem::folio::LruList::Unevictable => "unevictable",
    }
}

/// `+name`/`-name` for each told flag that changed.
fn flag_changes(old: u16, new: u16) -> String {
    let names = [
        (flags::ACTIVE, "PG_active"),
        (flags::REFERENCED, "PG_referenced"),
        (flags::WORKINGSET, "PG_workingset"),
        (flags::UNEVICTABLE, "PG_unevictable"),
    ];
    let mut out = Vec::new();
    for (b, n) in names {
        if old & b == 0 && new & b != 0 {
            out.push(format!("+{n}"));
        } else if old & b != 0 && new & b == 0 {
            out.push(format!("-{n}"));
        }
    }
    out.join(" ")
}

impl Sim {
    /// The key of folio `f`'s (head) page.
    #[inline]
    fn xp_key(&self, f: FolioId) -> PageKey {
        let fo = &self.folios[f];
        PageKey {
            file: fo.is_file(),
            space: fo.space,
            index: fo.index,
        }
    }

    /// The chosen page folio `f` is, if it is one.
    fn xp_page(&self, f: FolioId) -> Option<usize> {
        let xp = self.xp.as_ref()?;
        if xp.unresolved == xp.pages.len() {
            return None;
        }
        xp.index_of(self.xp_key(f))
    }

    /// The folio holding page `key`, if resident.
    fn xp_folio(&self, key: PageKey) -> Option<FolioId> {
        if key.file {
            let v = *self
                .files
                .get(key.space as usize)?
                .slots
                .get(key.index as usize)?;
            crate::mem::filemap::slot_folio(v)
        } else {
            let v = *self
                .vmas
                .get(key.space as usize)?
                .ptes
                .get(key.index as usize)?;
            (v & PTE_PRESENT != 0).then_some(v & PTE_FOLIO_MASK)
        }
    }

    fn xp_state(&self, key: PageKey) -> PageState {
        match self.xp_folio(key) {
            Some(f) => {
                let fo = &self.folios[f];
                PageState {
                    resident: true,
                    flags: fo.flags & TOLD,
                    // MGLRU's bits only: bit 7 (`GEN_REFS_MAYWRITE`, the
                    // writable mark of a read swap-in) is not told, so a
                    // fork clearing it is no change of the page's state.
                    gen_refs: fo.gen_refs
                        & !(GEN_REFS_MAYWRITE | crate::mem::folio::GEN_REFS_RA_LOCKED),
                }
            }
            None => PageState::default(),
        }
    }

    /// Adds an event to page `i`'s story and takes its state as told.
    fn xp_push(&mut self, i: usize, t_ns: u64, who: &str, func: &str, text: String) {
        let key = {
            let xp = self.xp.as_ref().expect("explain on");
            xp.pages[i].key
        };
        let state = key.map(|k| self.xp_state(k)).unwrap_or_default();
        let xp = self.xp.as_mut().expect("explain on");
        let max = xp.max_events;
        let p = &mut xp.pages[i];
        p.last = state;
        if p.story.events.len() as u64 >= max {
            p.story.dropped += 1;
            return;
        }
        let accesses_before = std::mem::take(&mut p.pending_accesses);
        p.story.events.push(StoryEvent {
            t_ns,
            who: who.to_string(),
            func: func.to_string(),
            text,
            accesses_before,
        });
    }

    /// The name of the workload task `t`.
    fn xp_task_name(&self, t: crate::mem::pagetable::TaskId) -> String {
        self.tasks
            .get(t as usize)
            .map_or_else(|| format!("task{t}"), |t| t.name.clone())
    }

    /// Who runs reclaim `sc`: kswapd0, khugepaged, or the workload's current task.
    fn xp_reclaimer_task(&self, sc: &ScanControl) -> String {
        match sc.who {
            Reclaimer::Kswapd => "kswapd0".to_string(),
            _ if self.thp.khuge.current => "khugepaged".to_string(),
            _ => self.xp.as_ref().map_or(String::new(), |x| x.task.clone()),
        }
    }

    /// Whether read `ev` runs under `FADV_RANDOM` (its file's `read()`
    /// state, or its descriptor's).
    fn xp_read_random(&self, ev: &Event) -> bool {
        let ra = match *ev {
            Event::FileRead { file, .. } => self.files.get(file as usize).map(|f| &f.ra),
            Event::FdRead { fd, .. } => self.fd_ra(fd),
            _ => None,
        };
        ra.is_some_and(|ra| ra.advice == crate::readahead::Advice::Random)
    }

    /// How read `ev` is called: `read()`, or through a descriptor
    /// `read(fd N)` with the number the task's table gave it
    /// ([`Sim::fd_number`]).
    fn xp_read_call(&self, ev: &Event) -> String {
        match *ev {
            Event::FdRead { fd, .. } => match self.fd_number(fd) {
                Some(nr) => format!("read(fd {nr})"),
                None => "read()".to_string(),
            },
            _ => "read()".to_string(),
        }
    }

    /// The task event `ev` runs in.
    fn xp_event_task(&self, ev: &Event) -> String {
        match *ev {
            Event::Access { vma, .. }
            | Event::Discard { vma, .. }
            | Event::Collapse { vma, .. }
            | Event::ThpAdvice { vma, .. }
            | Event::Remap { vma }
            | Event::Fork { vma, .. } => self
                .vmas
                .get(vma as usize)
                .map_or_else(String::new, |v| self.xp_task_name(v.task)),
            Event::FileRead { file, .. }
            | Event::FileWrite { file, .. }
            | Event::FileSync { file, .. } => {
                let t = self
                    .files
                    .get(file as usize)
                    .and_then(|f| f.task)
                    .unwrap_or(0);
                self.xp_task_name(t)
            }
            Event::FdRead { fd, .. } | Event::FdClose { fd } => {
                self.xp_task_name(self.fd_task(fd).unwrap_or(0))
            }
            Event::Think { .. } => "workload".to_string(),
        }
    }

    /// Resolves the chosen pages' names to the simulator's pages (files and VMAs exist
    /// once the workloads are set up; a VMA mapped later resolves then).
    fn xp_resolve(&mut self) {
        let Some(mut xp) = self.xp.take() else {
            return;
        };
        for p in xp.pages.iter_mut().filter(|p| p.key.is_none()) {
            let r = match &p.spec {
                PageSpec::File(name, index) => {
                    match self.files.iter().position(|f| &f.name == name) {
                        None => Err(format!(
                            "no file `{name}` in the scenario (files: {})",
                            if self.files.is_empty() {
                                "none".to_string()
                            } else {
                                self.files
                                    .iter()
                                    .map(|f| f.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            }
                        )),
                        Some(fid) => {
                            let size = u64::from(self.files[fid].pages);
                            if *index >= size {
                                Err(format!(
                                    "page index {index} is out of range: file `{name}` has \
                                     {size} pages (0..={})",
                                    size.saturating_sub(1)
                                ))
                            } else {
                                Ok((
                                    PageKey {
                                        file: true,
                                        space: fid as u32,
                                        index: *index as u32,
                                    },
                                    format!("page {index} of file `{name}`"),
                                ))
                            }
                        }
                    }
                }
                PageSpec::Task(name, vaddr) => {
                    match self.tasks.iter().position(|t| &t.name == name) {
                        None => Err(format!(
                            "no task `{name}` in the scenario (tasks: {})",
                            self.tasks
                                .iter()
                                .map(|t| t.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                        Some(t) => {
                            let maps = self.damon_va_maps(t as u32);
                            let hit = maps
                                .iter()
                                .find(|m| m.0 <= *vaddr && *vaddr < m.1)
                                .and_then(|m| {
                                    let v = m.2?;
                                    Some((v, ((*vaddr - m.0) / crate::PAGE_SIZE) as u32))
                                });
                            match hit {
                                None => Err(format!(
                                    "{vaddr:#x} is in no mapping of task `{name}` (its VMAs: {})",
                                    maps.iter()
                                        .filter(|m| m.2.is_some())
                                        .map(|m| format!("{:#x}-{:#x}", m.0, m.1))
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                )),
                                Some((v, index)) => {
                                    let vma = &self.vmas[v as usize];
                                    match vma.kind {
                                        VmaKind::Anon => Ok((
                                            PageKey {
                                                file: false,
                                                space: v,
                                                index,
                                            },
                                            format!(
                                                "anon page {index} of task `{name}`'s VMA {v} \
                                                 at {vaddr:#x}"
                                            ),
                                        )),
                                        VmaKind::File { file, pgoff, .. } => {
                                            let fi = pgoff + index;
                                            Ok((
                                                PageKey {
                                                    file: true,
                                                    space: file,
                                                    index: fi,
                                                },
                                                format!(
                                                    "page {fi} of file `{}`, mapped by task \
                                                     `{name}` at {vaddr:#x}",
                                                    self.files[file as usize].name
                                                ),
                                            ))
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            };
            match r {
                Ok((key, what)) => {
                    p.key = Some(key);
                    p.story.what = what;
                    p.story.error = None;
                    xp.unresolved -= 1;
                }
                Err(e) => p.story.error = Some(e),
            }
        }
        self.xp = Some(xp);
    }

    /// [`Sim::run`] with `machine.explain` on: after each event, the chosen pages'
    /// changes the hooks did not tell are told (faults, reads, readahead,
    /// `folio_mark_accessed`).
    #[cold]
    pub(crate) fn run_explained(&mut self, events: &[Event]) {
        if self.xp.as_ref().is_some_and(|x| x.unresolved > 0) {
            self.xp_resolve();
        }
        let keys: Vec<Option<PageKey>> = self
            .xp
            .as_ref()
            .map_or_else(Vec::new, |x| x.pages.iter().map(|p| p.key).collect());
        let mut touched: Vec<Option<u32>> = vec![None; keys.len()];
        for ev in events {
            // Which chosen pages the event touches, and what their slots held before.
            for (t, key) in touched.iter_mut().zip(&keys) {
                *t = key
                    .filter(|&k| self.xp_touches(ev, k))
                    .map(|k| self.xp_slot(k));
            }
            let task = self.xp_event_task(ev);
            if let Some(x) = self.xp.as_mut() {
                x.task = task;
            }
            if self.tp.is_some() {
                self.run_traced(std::slice::from_ref(ev));
            } else {
                self.step(ev);
            }
            for (i, (key, &hit)) in keys.iter().zip(&touched).enumerate() {
                if let Some(key) = *key {
                    self.xp_after_event(i, key, ev, hit);
                }
            }
        }
    }

    /// Whether `ev` accesses page `key`.
    fn xp_touches(&self, ev: &Event, key: PageKey) -> bool {
        match *ev {
            Event::Access { vma, index, .. } => {
                let Some(v) = self.vmas.get(vma as usize) else {
                    return false;
                };
                match v.kind {
                    VmaKind::Anon => !key.file && key.space == vma && key.index == index,
                    VmaKind::File { file, pgoff, .. } => {
                        key.file && key.space == file && key.index == pgoff + index
                    }
                }
            }
            Event::FileRead { file, index, pages } | Event::FileWrite { file, index, pages } => {
                key.file
                    && key.space == file
                    && key.index >= index
                    && key.index < index.saturating_add(u32::from(pages.max(1)))
            }
            Event::FdRead { fd, index, pages } => self.fd_file(fd).is_some_and(|file| {
                key.file
                    && key.space == file
                    && key.index >= index
                    && key.index < index.saturating_add(u32::from(pages.max(1)))
            }),
            Event::Discard { vma, index, pages } | Event::Collapse { vma, index, pages } => {
                let Some(v) = self.vmas.get(vma as usize) else {
                    return false;
                };
                let (space, first) = match v.kind {
                    VmaKind::Anon => (vma, index),
                    VmaKind::File { file, pgoff, .. } => (file, pgoff.saturating_add(index)),
                };
                key.file == matches!(v.kind, VmaKind::File { .. })
                    && key.space == space
                    && key.index >= first
                    && key.index < first.saturating_add(pages)
            }
            // The child's copies are not followed (`crate::fork`); a close
            // touches no page.
            Event::Fork { .. } | Event::FdClose { .. } => false,
            // The remap's zap (a discard of the whole VMA).
            Event::Remap { vma } => {
                let Some(v) = self.vmas.get(vma as usize) else {
                    return false;
                };
                match v.kind {
                    VmaKind::Anon => !key.file && key.space == vma,
                    VmaKind::File { file, pgoff, .. } => {
                        key.file
                            && key.space == file
                            && key.index >= pgoff
                            && key.index - pgoff < v.len
                    }
                }
            }
            // The advice changes no page: its later faults and collapses
            // are their own events. A sync's writes are the flusher's kind
            // (`explain` follows their completion, not their start).
            Event::Think { .. } | Event::ThpAdvice { .. } | Event::FileSync { .. } => false,
        }
    }

    /// The raw slot of page `key`: a PTE (present, swap entry or 0) or a page-cache slot.
    fn xp_slot(&self, key: PageKey) -> u32 {
        if key.file {
            self.files
                .get(key.space as usize)
                .and_then(|f| f.slots.get(key.index as usize))
                .copied()
                .unwrap_or(0)
        } else {
            self.vmas
                .get(key.space as usize)
                .and_then(|v| v.ptes.get(key.index as usize))
                .copied()
                .unwrap_or(0)
        }
    }

    /// After event `ev`: counts an access to page `i` (`before`: its slot before a
    /// touching event) and tells a change of its state no hook told.
    fn xp_after_event(&mut self, i: usize, key: PageKey, ev: &Event, before: Option<u32>) {
        let now = self.xp_state(key);
        let last = self.xp.as_ref().expect("on").pages[i].last;
        if before.is_some() {
            self.xp.as_mut().expect("on").pages[i].story.accesses += 1;
        }
        if now == last {
            if before.is_some() {
                self.xp.as_mut().expect("on").pages[i].pending_accesses += 1;
            }
            return;
        }
        let who = self.xp.as_ref().expect("on").task.clone();
        let t = self.clock;
        let f = self.xp_folio(key);
        if now.resident && !last.resident {
            let f = f.expect("resident");
            let fo = self.folios[f];
            let list = if crate::reclaim::lru_gen::folio_lru_gen(&fo).is_some() {
                format!(
                    "MGLRU generation {} (refs bits {})",
                    crate::reclaim::lru_gen::folio_lru_gen(&fo).unwrap_or(0),
                    (fo.gen_refs >> 3) & 3
                )
            } else {
                list_name(fo.flags).to_string()
            };
            let (func, how) = match (*ev, before) {
                (Event::Access { write, .. }, Some(slot)) if !key.file => {
                    if slot == 0 {
                        (
                            "do_anonymous_page",
                            format!(
                                "first touch ({}): a new zeroed anon folio",
                                if write { "store" } else { "load" }
                            ),
                        )
                    } else {
                        (
                            "do_swap_page",
                            "major fault: swapped in from its swap slot".to_string(),
                        )
                    }
                }
                (Event::Access { .. }, Some(slot)) => (
                    "filemap_fault",
                    format!(
                        "page-cache miss on a file mapping ({}), read in",
                        if slot == 0 {
                            "never cached"
                        } else {
                            "a shadow entry in the slot"
                        }
                    ),
                ),
                (Event::FileRead { .. } | Event::FdRead { .. }, Some(_)) => (
                    "filemap_read",
                    if self.xp_read_random(ev) {
                        format!(
                            "page-cache miss in {}: page_cache_sync_ra → force_page_cache_ra \
                             (FADV_RANDOM: the requested pages only)",
                            self.xp_read_call(ev)
                        )
                    } else {
                        format!(
                            "page-cache miss in {}: page_cache_sync_ra read it with its \
                             readahead window",
                            self.xp_read_call(ev)
                        )
                    },
                ),
                (Event::FileWrite { .. }, Some(_)) => (
                    "generic_perform_write",
                    "write(): a new page-cache folio, dirtied".to_string(),
                ),
                _ => (
                    "page_cache_ra_unbounded",
                    format!(
                        "brought in by readahead{} for another page (fault-around or a read)",
                        if fo.test(flags::READAHEAD) {
                            ", PG_readahead set (the async marker)"
                        } else {
                            ""
                        }
                    ),
                ),
            };
            let mut ws = String::new();
            for (b, n) in [
                (flags::REFERENCED, "PG_referenced"),
                (flags::WORKINGSET, "PG_workingset"),
            ] {
                if fo.test(b) {
                    ws.push_str(", ");
                    ws.push_str(n);
                }
            }
            self.xp_push(
                i,
                t,
                &who,
                func,
                format!("{how}; folio_add_lru → {list}{ws}"),
            );
            return;
        }
        if !now.resident && last.resident {
            self.xp_push(
                i,
                t,
                &who,
                "folio_put",
                "freed outside reclaim's eviction (unmapped, truncated or the task exited)"
                    .to_string(),
            );
            return;
        }
        // A resident page's flags or generation changed.
        let changes = flag_changes(last.flags, now.flags);
        let gen_text = if now.gen_refs != last.gen_refs {
            let g = |v: u8| match v & 7 {
                0 => "none".to_string(),
                g => (g - 1).to_string(),
            };
            format!(
                "generation {} → {}, refs {} → {}",
                g(last.gen_refs),
                g(now.gen_refs),
                (last.gen_refs >> 3) & 3,
                (now.gen_refs >> 3) & 3
            )
        } else {
            String::new()
        };
        let (func, why) = if before.is_some() {
            let read = matches!(
                ev,
                Event::FileRead { .. } | Event::FdRead { .. } | Event::FileWrite { .. }
            );
            if now.flags & flags::ACTIVE != 0 && last.flags & flags::ACTIVE == 0 {
                (
                    "folio_mark_accessed",
                    "referenced twice (PG_referenced was set) → folio_activate: to the active list"
                        .to_string(),
                )
            } else if now.flags & flags::REFERENCED != 0 && last.flags & flags::REFERENCED == 0 {
                (
                    "folio_mark_accessed",
                    if now.flags & flags::ACTIVE != 0 {
                        "a reference to an active folio: PG_referenced set".to_string()
                    } else {
                        "first reference: PG_referenced set, stays inactive".to_string()
                    },
                )
            } else if read {
                (
                    "folio_mark_accessed",
                    "a read of a cached page (lru_gen_inc_refs under MGLRU)".to_string(),
                )
            } else {
                (
                    "handle_mm_fault",
                    "the access changed its state".to_string(),
                )
            }
        } else {
            (
                "background",
                "changed outside this page's events (an LRU move of its group)".to_string(),
            )
        };
        let sep = if !changes.is_empty() && !gen_text.is_empty() {
            "; "
        } else {
            ""
        };
        self.xp_push(i, t, &who, func, format!("{why}: {changes}{sep}{gen_text}"));
    }

    /// The story so far, for the result.
    pub(crate) fn explain_report(&mut self) -> Option<ExplainReport> {
        let xp = self.xp.as_mut()?;
        let mut pages = Vec::new();
        for p in &mut xp.pages {
            let mut s = std::mem::take(&mut p.story);
            if s.error.is_none() && p.key.is_some() && s.accesses == 0 && s.events.is_empty() {
                s.error = Some("the page was never touched in this run".to_string());
            }
            // kswapd's clock runs ahead of the workload's: tell in time order.
            s.events.sort_by_key(|e| e.t_ns);
            pages.push(s);
        }
        let mut refaults = Vec::new();
        if let Some(c) = xp.counts.take() {
            let mut v: Vec<(PageKey, u64)> = c.into_iter().collect();
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            for (k, n) in v {
                refaults.push((self.xp_name(k), n));
            }
        }
        Some(ExplainReport { pages, refaults })
    }

    /// `FILE:INDEX` or `TASK:0xVADDR` for page `k`.
    fn xp_name(&self, k: PageKey) -> String {
        if k.file {
            let name = self.files.get(k.space as usize).map_or("?", |f| &f.name);
            return format!("{name}:{}", k.index);
        }
        let Some(v) = self.vmas.get(k.space as usize) else {
            return format!("vma{}:{}", k.space, k.index);
        };
        let maps = self.damon_va_maps(v.task);
        let start = maps
            .iter()
            .find(|m| m.2 == Some(k.space))
            .map_or(0, |m| m.0);
        format!(
            "{}:{:#x}",
            self.xp_task_name(v.task),
            start + u64::from(k.index) * crate::PAGE_SIZE
        )
    }
}
