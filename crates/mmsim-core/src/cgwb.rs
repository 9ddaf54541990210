//! The memcg dirty domain of cgroup writeback (cgwb): v6.12
//! mm/page-writeback.c `balance_dirty_pages`, `balance_domain_limits`,
//! `domain_dirty_avail`, `mdtc_calc_avail`, `domain_dirty_limits`,
//! `domain_dirty_freerun`, `wb_over_bg_thresh`; mm/memcontrol.c
//! `mem_cgroup_wb_stats`, `mem_cgroup_wb_domain` (read in Debian's 6.12.118
//! source).
//!
//! Under cgroup v2, on a filesystem that supports cgroup writeback (ext4,
//! xfs, btrfs: `SB_I_CGROUPWB`), an inode belongs to the `bdi_writeback` of
//! the group that dirties it, and `balance_dirty_pages()` for a wb of a
//! group other than the root computes a second dirty domain, the group's
//! (`mdtc`), beside the global one (`gdtc`). Cgroup v1 has no cgwb
//! (`inode_cgwb_enabled()` needs the memory controller on the default
//! hierarchy): every inode is the root wb's, and only the global domain
//! applies. The group's domain, in pages:
//!
//! * `mem_cgroup_wb_stats()`: the group's file LRU pages (`filepages`),
//!   `NR_FILE_DIRTY` and `NR_WRITEBACK` (hierarchical, as `memory.stat`),
//!   and its `headroom`, the least `min(memory.max, memory.high) − usage`
//!   over the group and its ancestors below the root;
//! * `mdtc_calc_avail()`: `avail = filepages + min(headroom, other_clean)`,
//!   where `other_clean` is the global domain's clean dirtyable pages not the
//!   group's (`global_clean − min(global_clean, clean)`);
//! * `domain_dirty_limits()`: `thresh = (vm_dirty_ratio × 4096 / 100) ×
//!   avail / 4096` and `bg_thresh` the same of `dirty_background_ratio`
//!   (ratios per 4096, 819 and 409 of the defaults 20 and 10), `bg_thresh`
//!   halved to `thresh / 2` if not below `thresh`.
//!
//! `balance_dirty_pages()` counts pages under writeback in the domain's
//! dirty pages (`include_writeback`); a domain is "freerun" while they are at
//! or under `(thresh + bg_thresh) / 2` (`dirty_freerun_ceiling`). When the
//! group's domain is not, the task's wb starts background writeback
//! (`wb_start_background_writeback`, "Start writeback even when in laptop
//! mode"). The flusher's `wb_writeback()` then runs passes while
//! `wb_over_bg_thresh()` holds, for the group: its dirty pages, writeback
//! not counted, above the `bg_thresh` computed without writeback. It checks
//! only between passes: within one, `writeback_sb_inodes()` writes each
//! inode up to `writeback_chunk_size()` pages, `round_down(min(bandwidth /
//! 2, global dirty_limit / DIRTY_SCOPE) + MIN_WRITEBACK_PAGES,
//! MIN_WRITEBACK_PAGES)`, at least `MIN_WRITEBACK_PAGES` (4 MiB, 1024
//! pages; v6.12 fs/fs-writeback.c). So a group's background writeback
//! starts at its freerun ceiling (the global one starts at the global
//! `bg_thresh`: `nr_dirty > gdtc->bg_thresh`) and writes at least a chunk,
//! or all the group's dirty pages if fewer, before it looks at its
//! `bg_thresh` again. The periodic flusher's `wb_check_background_flush()`
//! runs the same passes for each group over its `bg_thresh`, every
//! `dirty_writeback_interval`.
//!
//! mmsim computes the group's domain when a task of a v2 group other than
//! the root dirties a file folio by writing, or under
//! `policy.bdp_ratelimit` at the writer's ratelimited check
//! (`generic_perform_write()` and `fault_dirty_shared_page()` call
//! `balance_dirty_pages_ratelimited()` with the writing task's wb,
//! `wb_get_create_current()`; `folio_mark_dirty()`
//! itself, as reclaim's unmap or a zap reach it, balances nothing), with
//! `machine.cgroup_writeback` (default on), and writes the group's own dirty
//! folios (its wb's inodes: a folio's wb is its group's), oldest dirtied
//! first, a chunk a pass, the chunk's bandwidth term fixed at `INIT_BW` (100
//! MB/s: mmsim keeps no `avg_write_bandwidth`) and `dirty_limit` the
//! global domain's `thresh`. A pass counts the chunk over the group's
//! folios, not per inode (the kernel writes up to a chunk of each inode on
//! `b_io`: the same for a group writing one file, fewer pages for several).
//! A folio dirtied again while under writeback ends the writeback, queued
//! again at the tail, as the global background writeback does
//! (`Sim::balance_dirty_pages`; v6.12 passes over it, `WB_SYNC_NONE`). Under
//! `policy = "lru"` no group has a domain: every folio is on the root's
//! list, so a group's file pages would be 0. The throttling pause of both
//! domains (the lower `pos_ratio`) is `crate::page_writeback_throttle`
//! (opt-in; it has the wb's `wb_thresh` share). With the same opt-in
//! (where the shares exist), background writeback is per wb as the
//! kernel's: `wb_over_bg_thresh()` whole, each domain's `bg_thresh` and
//! the wb's `wb_bg_thresh` share of it, the global domain's included for a
//! group's wb, and the global domain's background writeback split into its
//! wbs, each writing its own folios (`crate::wb_over_bg_thresh`). Without
//! it, what is above: a group's writeback tests its memcg domain alone,
//! and the global background writeback writes the oldest dirty folios of
//! every group. The ratelimit of the calls (`balance_dirty_pages_ratelimited`)
//! is `crate::page_writeback_ratelimit`, under `policy.bdp_ratelimit`
//! (opt-in; without it every dirtying of a clean folio balances and only
//! the pause has the task's ratelimit). Not modelled here: strictlimit,
//! stale statistics (`mem_cgroup_flush_stats_ratelimited`: exact
//! counts here), foreign inodes, real-time tasks' lifted limits,
//! `vm_dirty_bytes`/`dirty_background_bytes`. The global domain's dirtyable
//! memory is the kernel's (`Sim::global_dirtyable_memory`: free pages less
//! `totalreserve_pages`, plus file pages, plus 1).

use crate::mem::folio::{flags, LruList};
use crate::memcg::{MemcgId, ROOT};
use crate::sim::Sim;

/// `vm_dirty_ratio` (percent).
pub(crate) const VM_DIRTY_RATIO: u64 = 20;

/// `MIN_WRITEBACK_PAGES` (v6.12 fs/fs-writeback.c): 4 MiB of pages.
pub(crate) const MIN_WRITEBACK_PAGES: u64 = (4 << 20) / crate::PAGE_SIZE;

/// `DIRTY_SCOPE` (include/linux/writeback.h).
const DIRTY_SCOPE: u64 = 8;

/// `INIT_BW` (mm/backing-dev.c): a wb's first write bandwidth estimate,
/// 100 MB/s in pages a second.
const INIT_BW: u64 = (100 << 20) / crate::PAGE_SIZE;

/// `writeback_chunk_size()` (v6.12 fs/fs-writeback.c) of background
/// writeback (`nr_pages` unbounded, `WB_SYNC_NONE`), given the global
/// `dirty_limit`: `round_down(min(avg_write_bandwidth / 2, dirty_limit /
/// DIRTY_SCOPE) + MIN_WRITEBACK_PAGES, MIN_WRITEBACK_PAGES)`, the bandwidth
/// at `INIT_BW`.
pub(crate) fn writeback_chunk_size(dirty_limit: u64) -> u64 {
    let pages = (INIT_BW / 2).min(dirty_limit / DIRTY_SCOPE);
    (pages + MIN_WRITEBACK_PAGES) / MIN_WRITEBACK_PAGES * MIN_WRITEBACK_PAGES
}

/// A dirty domain (`struct dirty_throttle_control`): dirtyable pages, dirty
/// pages and the two thresholds, in pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirtyDomain {
    /// `avail`: pages that may be dirty.
    pub avail: u64,
    /// `dirty`: dirty pages, with or without those under writeback.
    pub dirty: u64,
    /// `thresh`: the throttling threshold.
    pub thresh: u64,
    /// `bg_thresh`: the background writeback threshold.
    pub bg_thresh: u64,
}

impl DirtyDomain {
    /// `dirty_freerun_ceiling()`: `(thresh + bg_thresh) / 2`.
    pub fn freerun_ceiling(&self) -> u64 {
        (self.thresh + self.bg_thresh) / 2
    }
}

/// `domain_dirty_limits()` (v6.12) of `avail` pages with the default
/// ratios and no byte limits: `(thresh, bg_thresh)`.
pub(crate) fn domain_dirty_limits(avail: u64) -> (u64, u64) {
    let page = crate::PAGE_SIZE;
    // Ratios per PAGE_SIZE "for higher precision".
    let ratio = VM_DIRTY_RATIO * page / 100;
    let bg_ratio = crate::writeback::DIRTY_BACKGROUND_RATIO * page / 100;
    let thresh = (ratio * avail / page).min(u64::from(u32::MAX));
    let mut bg_thresh = bg_ratio * avail / page;
    if bg_thresh >= thresh {
        bg_thresh = thresh / 2;
    }
    (thresh, bg_thresh)
}

/// `mem_cgroup_wb_stats()`'s four values of one group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct WbStats {
    pub filepages: u64,
    pub headroom: u64,
    pub dirty: u64,
    pub writeback: u64,
}

impl Sim {
    /// `totalreserve_pages` (`calculate_totalreserve_pages()`, v6.12
    /// mm/page_alloc.c): per zone, its largest `lowmem_reserve` plus its
    /// high watermark, at most its managed pages. The highest zone's
    /// `lowmem_reserve` is 0 (it protects a zone only against allocations
    /// allowed above it: `setup_per_zone_lowmem_reserve` sums the managed
    /// pages of the zones above), so one zone gives its high watermark;
    /// with ZONE_DMA (`machine.dma_zone_pages`) DMA adds its high watermark
    /// and its reserve.
    pub(crate) fn totalreserve_pages(&self) -> u64 {
        match self.phys.dma.as_deref() {
            None => self.high_wmark_unboosted().min(self.node.managed),
            Some(d) => {
                let dma = (d.wmark.high + d.lowmem_reserve).min(d.zone.managed_pages);
                dma + d.upper_wmark.high.min(self.phys.zone.managed_pages)
            }
        }
    }

    /// The global domain's dirtyable pages (`global_dirtyable_memory()`,
    /// v6.12 mm/page-writeback.c): the free pages (`NR_FREE_PAGES`: the
    /// zones', not those on the per-CPU lists) less [`Sim::totalreserve_pages`],
    /// plus the file LRU pages, plus 1 ("never 0"). No highmem here.
    pub(crate) fn global_dirtyable_memory(&self) -> u64 {
        let lv = self.subtree_lruvec(ROOT);
        let dma = self.phys.dma.as_ref().map_or(0, |d| d.zone.free_pages());
        let free = self.phys.zone.free_pages() + dma;
        let free = free - free.min(self.totalreserve_pages());
        free + lv.size(LruList::ActiveFile) + lv.size(LruList::InactiveFile) + 1
    }

    /// Whether group `m`'s wb has a memcg domain: cgroup v2 with cgroup
    /// writeback, and not the root group (`mem_cgroup_wb_domain()` is NULL
    /// for the root). Never under `policy = "lru"`, whose one list is the
    /// root's (a group's `filepages` would be 0).
    #[inline]
    pub(crate) fn has_memcg_domain(&self, m: MemcgId) -> bool {
        m != ROOT
            && self.cfg.cgroup_writeback
            && self.cfg.cgroup_version == crate::config::CgroupVersion::V2
            && self.policy != crate::sim::Policy::Lru
    }

    /// `mem_cgroup_wb_stats()` of group `m` (v6.12 mm/memcontrol.c).
    pub(crate) fn mem_cgroup_wb_stats(&self, m: MemcgId) -> WbStats {
        let lv = self.subtree_lruvec(m);
        let mut st = WbStats {
            filepages: lv.size(LruList::ActiveFile) + lv.size(LruList::InactiveFile),
            headroom: u64::MAX,
            ..Default::default()
        };
        let mut cur = Some(m);
        while let Some(g) = cur {
            let grp = &self.memcgs[g as usize];
            st.dirty += grp.nr_file_dirty;
            st.writeback += grp.nr_writeback;
            cur = self.mem_cgroup_iter(m, g);
        }
        let mut g = m;
        while let Some(parent) = self.memcgs[g as usize].parent {
            let grp = &self.memcgs[g as usize];
            let ceiling = grp.max.min(grp.high);
            st.headroom = st.headroom.min(ceiling - ceiling.min(grp.usage));
            g = parent;
        }
        st
    }

    /// Group `m`'s domain with or without its pages under writeback
    /// (`domain_dirty_avail()` of the global domain, then of the group's,
    /// then `domain_dirty_limits()`): the global domain and the group's.
    pub fn memcg_dirty_domain(&self, m: MemcgId, include_writeback: bool) -> [DirtyDomain; 2] {
        let mut g = DirtyDomain {
            avail: self.global_dirtyable_memory(),
            dirty: self.nr_dirty,
            ..Default::default()
        };
        let st = self.mem_cgroup_wb_stats(m);
        let mut md = DirtyDomain {
            dirty: st.dirty,
            ..Default::default()
        };
        if include_writeback {
            g.dirty += self.nr_writeback;
            md.dirty += st.writeback;
        }
        (g.thresh, g.bg_thresh) = domain_dirty_limits(g.avail);
        // `mdtc_calc_avail()`.
        let clean = st.filepages - st.filepages.min(md.dirty);
        let global_clean = g.avail - g.avail.min(g.dirty);
        let other_clean = global_clean - global_clean.min(clean);
        md.avail = st.filepages + st.headroom.min(other_clean);
        (md.thresh, md.bg_thresh) = domain_dirty_limits(md.avail);
        [g, md]
    }

    /// `balance_dirty_pages_ratelimited()` (v6.12 mm/page-writeback.c)
    /// from `generic_perform_write()` (a buffered write) and
    /// `fault_dirty_shared_page()` (a write fault on a shared mapping:
    /// `do_shared_fault()`, `wp_page_shared()`, and mmsim's PMD mapping of a
    /// page-cache folio). Without `policy.bdp_ratelimit` mmsim calls it
    /// after each dirtying of a clean file folio; with it where the kernel
    /// does: at the top of every chunk of a write, clean folio or not, and
    /// after every shared write fault (`crate::page_writeback_ratelimit`).
    /// Only writers call it: reclaim's
    /// unmap, the MGLRU walk and a zap reach `folio_mark_dirty()` from a
    /// dirty PTE and balance nothing. The wb is the writing task's
    /// (`wb_get_create_current()`: the group charged now,
    /// `Sim::cur_memcg`), not the folio's group's. Without
    /// `policy.dirty_throttle`: the global domain first
    /// ([`Sim::balance_dirty_pages`]), then that wb's memcg domain
    /// ([`Sim::balance_dirty_pages_memcg`]); without
    /// `policy.bdp_ratelimit` every dirtying of a clean folio balances,
    /// with it only the task's ratelimited checks do
    /// (`crate::page_writeback_ratelimit`). With `policy.dirty_throttle`:
    /// [`Sim::wb_start_background_writeback`] of that wb
    /// (`wb_index(cur_memcg)`: the global domain's and its memcg domain's
    /// tests, then the per-wb background writeback of
    /// `crate::wb_over_bg_thresh`), at every dirtying without
    /// `bdp_ratelimit`, at the ratelimited check with it, then the
    /// writer's pause ([`Sim::balance_dirty_pages_pause`], with the
    /// kernel's ratelimit, `crate::page_writeback_throttle`).
    #[inline]
    pub(crate) fn balance_dirty_pages_ratelimited(&mut self) {
        if self.cfg.policy.dirty_throttle {
            // Per wb, with its shares (`crate::wb_over_bg_thresh`); under
            // `bdp_ratelimit` started at the ratelimited check.
            if !self.cfg.policy.bdp_ratelimit {
                let w = self.wb_index(self.cur_memcg);
                self.wb_start_background_writeback(w);
            }
            self.balance_dirty_pages_pause();
            return;
        }
        if self.cfg.policy.bdp_ratelimit {
            self.balance_dirty_pages_ratelimited_flags();
            return;
        }
        self.balance_dirty_pages();
        let m = self.cur_memcg;
        if self.has_memcg_domain(m) {
            self.balance_dirty_pages_memcg(m);
        }
    }

    /// `balance_dirty_pages()`'s memcg domain for the wb of group `m`
    /// (see the module documentation): outside its freerun range, the
    /// group's background writeback. Only for a group with a domain.
    pub(crate) fn balance_dirty_pages_memcg(&mut self, m: MemcgId) {
        let [_, md] = self.memcg_dirty_domain(m, true);
        if md.dirty <= md.freerun_ceiling() {
            return;
        }
        self.memcg_background_writeback(m);
    }

    /// `wb_check_background_flush()` of every group's wb, after the
    /// periodic flusher's pass (`wb_do_writeback()`, every
    /// `dirty_writeback_interval`): a group with a domain over its
    /// `bg_thresh` gets its background writeback.
    pub(crate) fn memcg_background_flush(&mut self) {
        for m in 1..self.memcgs.len() as MemcgId {
            if self.memcgs[m as usize].nr_file_dirty > 0 && self.has_memcg_domain(m) {
                self.memcg_background_writeback(m);
            }
        }
    }

    /// The background writeback of group `m`'s wb (`wb_writeback()` with
    /// `for_background`) without `policy.dirty_throttle`: while its dirty
    /// pages exceed its background threshold (`wb_over_bg_thresh()`'s
    /// memcg domain part, writeback not counted), a pass writes a chunk of
    /// its own dirty folios, oldest dirtied first ([`writeback_chunk_size`],
    /// `Sim::wb_writeback_pass`). It ends after a pass that wrote less than
    /// a chunk or met a folio under writeback. With the throttle, the whole
    /// test is `Sim::wb_over_bg_thresh`.
    #[cold]
    #[inline(never)]
    fn memcg_background_writeback(&mut self, m: MemcgId) {
        loop {
            let [g, md] = self.memcg_dirty_domain(m, false);
            if md.dirty <= md.bg_thresh {
                return;
            }
            let chunk = writeback_chunk_size(g.thresh);
            if !self.wb_writeback_pass(m as usize, chunk, self.clock) {
                return;
            }
        }
    }

    /// Each group's own dirty file pages and pages under writeback are
    /// those of its live folios, and each wb's count of dirty pages is its
    /// groups' (`Sim::check_invariants`).
    pub(crate) fn check_memcg_dirty_counts(&self) -> Result<(), String> {
        let mut counts = vec![(0u64, 0u64); self.memcgs.len()];
        self.folios.for_each_live_id(|id, fo| {
            let c = &mut counts[self.folios.memcg(id) as usize];
            if fo.is_file() && fo.test(flags::DIRTY) {
                c.0 += fo.nr_pages();
            }
            if fo.test(flags::WRITEBACK) {
                c.1 += fo.nr_pages();
            }
        });
        for (m, (g, c)) in self.memcgs.iter().zip(counts).enumerate() {
            if (g.nr_file_dirty, g.nr_writeback) != c {
                return Err(format!(
                    "group {m} counts {} dirty file pages and {} under writeback, its folios {} and {}",
                    g.nr_file_dirty, g.nr_writeback, c.0, c.1
                ));
            }
        }
        self.check_wb_reclaimable()
    }

    /// `NR_FILE_DIRTY` of the node and of group `m` go up by `nr` pages.
    #[inline]
    pub(crate) fn file_dirty_add(&mut self, m: MemcgId, nr: u64) {
        self.bdp_account_dirtied(m, nr);
        self.nr_dirty += nr;
        self.memcgs[m as usize].nr_file_dirty += nr;
    }

    /// `NR_FILE_DIRTY` of the node and of group `m` go down by `nr` pages.
    #[inline]
    pub(crate) fn file_dirty_sub(&mut self, m: MemcgId, nr: u64) {
        self.bdp_account_cleaned(m, nr);
        self.nr_dirty -= nr;
        self.memcgs[m as usize].nr_file_dirty -= nr;
    }

    /// `NR_WRITEBACK` of the node and of group `m` go up by `nr` pages.
    #[inline]
    pub(crate) fn writeback_add(&mut self, m: MemcgId, nr: u64) {
        self.nr_writeback += nr;
        self.memcgs[m as usize].nr_writeback += nr;
    }

    /// `NR_WRITEBACK` of the node and of group `m` go down by `nr` pages.
    #[inline]
    pub(crate) fn writeback_sub(&mut self, m: MemcgId, nr: u64) {
        self.nr_writeback -= nr;
        self.memcgs[m as usize].nr_writeback -= nr;
    }
}
