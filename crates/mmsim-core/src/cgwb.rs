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
//! mode"), and the flusher writes the wb's inodes while `wb_over_bg_thresh()`
//! holds, for the group: its dirty pages, writeback not counted, above the
//! `bg_thresh` computed without writeback. So a group's background
//! writeback starts at its freerun ceiling (the global one starts at the
//! global `bg_thresh`: `nr_dirty > gdtc->bg_thresh`) and brings its dirty
//! pages down to its `bg_thresh`.
//!
//! mmsim computes the group's domain at each dirtying of a file folio of a
//! v2 group other than the root (`machine.cgroup_writeback`, default on) and
//! writes the group's own dirty folios, oldest dirtied first (its wb's
//! inodes: a folio's wb is its group's), passing over folios under
//! writeback as `WB_SYNC_NONE` does. Not modelled: the throttling pause of
//! either domain (`balance_dirty_pages` sleeping: mmsim has none, globally or
//! per group), the per-wb shares (`wb_thresh`, `wb_bg_thresh`, strictlimit),
//! the ratelimit of the calls (`balance_dirty_pages_ratelimited`: here every
//! dirtying), stale statistics (`mem_cgroup_flush_stats_ratelimited`: exact
//! counts here), foreign inodes, real-time tasks' lifted limits,
//! `vm_dirty_bytes`/`dirty_background_bytes`, and the global domain's split
//! into per-group wbs (mmsim's global background writeback writes the
//! oldest dirty folios of every group). The global domain's dirtyable
//! memory is mmsim's (free + file pages; the kernel subtracts
//! `totalreserve_pages` from the free pages and adds 1).

use crate::mem::folio::{flags, FolioId, LruList};
use crate::memcg::{MemcgId, ROOT};
use crate::sim::Sim;

/// `vm_dirty_ratio` (percent).
pub(crate) const VM_DIRTY_RATIO: u64 = 20;

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
    /// The global domain's dirtyable pages (`global_dirtyable_memory()`, as
    /// mmsim counts it: free pages and the file LRU pages).
    pub(crate) fn global_dirtyable_memory(&self) -> u64 {
        let lv = self.subtree_lruvec(ROOT);
        self.node.free + lv.size(LruList::ActiveFile) + lv.size(LruList::InactiveFile)
    }

    /// Whether group `m`'s wb has a memcg domain: cgroup v2 with cgroup
    /// writeback, and not the root group (`mem_cgroup_wb_domain()` is NULL
    /// for the root).
    #[inline]
    pub(crate) fn has_memcg_domain(&self, m: MemcgId) -> bool {
        m != ROOT
            && self.cfg.cgroup_writeback
            && self.cfg.cgroup_version == crate::config::CgroupVersion::V2
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

    /// The background writeback of group `m`'s wb: its own dirty folios,
    /// oldest dirtied first, while its dirty pages exceed its background
    /// threshold (`wb_over_bg_thresh()`'s memcg part, writeback not
    /// counted). A folio under writeback is passed over and stays queued.
    #[cold]
    #[inline(never)]
    fn memcg_background_writeback(&mut self, m: MemcgId) {
        let [_, md] = self.memcg_dirty_domain(m, false);
        if md.dirty <= md.bg_thresh {
            return;
        }
        let mut need = md.dirty - md.bg_thresh;
        let mut take: Vec<FolioId> = Vec::new();
        let folios = &self.folios;
        self.dirty_fifo.scan_live(|_, f| {
            if folios.is_live(f) {
                let fo = &folios[f];
                if fo.memcg == m
                    && fo.is_file()
                    && fo.test(flags::DIRTY)
                    && !fo.test(flags::WRITEBACK)
                {
                    take.push(f);
                    need = need.saturating_sub(fo.nr_pages());
                }
            }
            need > 0
        });
        let now = self.clock;
        for f in take {
            self.dirty_fifo_unqueue(f);
            self.write_folio(f, now);
        }
    }

    /// Each group's own dirty file pages and pages under writeback are
    /// those of its live folios (`Sim::check_invariants`).
    pub(crate) fn check_memcg_dirty_counts(&self) -> Result<(), String> {
        let mut counts = vec![(0u64, 0u64); self.memcgs.len()];
        self.folios.for_each_live(|fo| {
            let c = &mut counts[fo.memcg as usize];
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
        Ok(())
    }

    /// `NR_FILE_DIRTY` of the node and of group `m` go up by `nr` pages.
    #[inline]
    pub(crate) fn file_dirty_add(&mut self, m: MemcgId, nr: u64) {
        self.nr_dirty += nr;
        self.memcgs[m as usize].nr_file_dirty += nr;
    }

    /// `NR_FILE_DIRTY` of the node and of group `m` go down by `nr` pages.
    #[inline]
    pub(crate) fn file_dirty_sub(&mut self, m: MemcgId, nr: u64) {
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
