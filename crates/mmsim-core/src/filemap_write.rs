//! Buffered writes into large page-cache folios (mm/filemap.c, v6.18).
//!
//! On a filesystem with large folios (`machine.fs.large_folios`: ext4 since
//! 6.16, xfs, any iomap filesystem) a `write()` creates its page-cache
//! folios in the size the write asks for, where the order-0 page cache
//! (the switch off, [`Sim::generic_perform_write`] in `fault.rs`) creates
//! one per page. Read in the 6.18 source:
//!
//! * `generic_perform_write()` walks the write in steps of at most
//!   `mapping_max_folio_size()` (2 MiB, [`MAX_PAGECACHE_ORDER`]) that do
//!   not cross a 2 MiB boundary of the file: `bytes = min(chunk - (pos &
//!   (chunk - 1)), remaining)`; each step is one `write_begin`, copy and
//!   `write_end`, and then moves on by what the folio it got holds
//!   (`bytes` clamped to the folio's end).
//! * The filesystem's `write_begin` (`ext4_write_begin`/`ext4_da_write_begin`
//!   through `write_begin_get_folio()`, `iomap_get_folio()`) asks
//!   `__filemap_get_folio(FGP_WRITEBEGIN | fgf_set_order(bytes))`: a cached
//!   folio holding `pos` is used as it is, whatever its size; otherwise a
//!   new one of order `ilog2(bytes) - PAGE_SHIFT` (0 below a page), capped
//!   by the mapping's maximum order, lowered to `__ffs(index)` where the
//!   index is not aligned to it. Each allocation above the mapping's
//!   minimum order (0) has `__GFP_NORETRY`; an allocation that fails, or a
//!   `filemap_add_folio()` that fails (its memcg charge, made with the
//!   mapping's gfp without `__GFP_NORETRY`, or `-EEXIST` because a page of
//!   the range is cached) retries one order lower, down to 0. Order 1 is a
//!   step like any other (page-cache order-1 folios since 6.8). A write
//!   allocation (`__GFP_WRITE`) runs no refault detection on the shadows
//!   it replaces.
//!
//! The folio is then whole everywhere, as readahead's are
//! (`crate::readahead`): dirtied once in pages (`folio_mark_dirty`),
//! written back as one, one LRU entry, one shadow over its range when it
//! is evicted. Writes do not mark folios accessed (`FGP_WRITEBEGIN` has no
//! `FGP_ACCESSED`).
//!
//! mmsim's writes are whole pages (`Event::FileWrite`), so `bytes` is a
//! page count; a write at an unaligned byte offset is not expressible,
//! but its page-granular image behaves the same when its byte length's
//! `ilog2` equals that of its page count (`tools/wfprobe.c`'s `b` op on
//! the host: 64 KiB at byte 1000 gives an order-4 folio and an order-0
//! one, as pages 0..17 do here).
//!
//! ## Checked against the host
//!
//! `tools/wfprobe.c` writes a new file on the 6.18 host (ext4) and reads
//! back the folio of every page (`/proc/self/pagemap`,
//! `/proc/kpageflags`); the rule tests in `rule_tests/filewrite.rs` assert
//! the same layouts for the same writes (VALIDATION.md, "Large folios from
//! write() on the 6.18 host").

use crate::event::FileId;
use crate::mem::filemap::{slot_folio, SLOT_FOLIO};
use crate::mem::folio::FolioId;
use crate::readahead::MAX_PAGECACHE_ORDER;
use crate::sim::Sim;
use crate::stats::item::*;

/// `generic_perform_write()`'s `chunk`, `mapping_max_folio_size()` in
/// pages: `PAGE_SIZE << MAX_PAGECACHE_ORDER` (2 MiB).
const WRITE_CHUNK_PAGES: u32 = 1 << MAX_PAGECACHE_ORDER;

/// The order `__filemap_get_folio()` tries first for a write of `pages`
/// pages at page `index` (v6.18): `fgf_set_order(bytes)` (`ilog2` of the
/// length, 0 for a page or less), capped by `mapping_max_folio_order()`
/// ([`MAX_PAGECACHE_ORDER`]), lowered to `__ffs(index)` when `index` is
/// not aligned to it.
pub(crate) fn write_begin_order(index: u32, pages: u32) -> u8 {
    let mut order = (31 - pages.max(1).leading_zeros()).min(u32::from(MAX_PAGECACHE_ORDER));
    if index & ((1u32 << order) - 1) != 0 {
        order = index.trailing_zeros();
    }
    order as u8
}

impl Sim {
    /// [`Sim::generic_perform_write`] on a filesystem with large folios:
    /// `generic_perform_write()` of v6.18 (mm/filemap.c) over pages
    /// `[index, end)` of `file`, each step getting its folio from
    /// [`Sim::write_begin_folio`] and dirtying it. Every page written is
    /// an access; one in a folio the step created is a miss, the others
    /// hits. Stops if even an order-0 folio cannot be had (OOM).
    #[inline(never)]
    pub(crate) fn generic_perform_write_large(&mut self, file: FileId, index: u32, end: u32) {
        // Under `policy.bdp_ratelimit` the check is at the top of every
        // step, before `write_begin`, whether the step dirties a clean folio
        // or not (v6.12 `generic_perform_write()`, after `retry:`); without
        // it, after each dirtying of a clean folio.
        let top = self.cfg.policy.bdp_ratelimit;
        let mut pos = index;
        while pos < end {
            let offset = pos & (WRITE_CHUNK_PAGES - 1);
            let bytes = (WRITE_CHUNK_PAGES - offset).min(end - pos);
            if top {
                self.balance_dirty_pages_ratelimited();
            }
            let slot = self.files[file as usize].slot(pos);
            let (f, created) = match slot_folio(slot) {
                Some(f) => (f, false),
                None => match self.write_begin_folio(file, pos, bytes) {
                    Some(f) => (f, true),
                    None => return,
                },
            };
            let fo = &self.folios[f];
            let folio_end = fo.index + (1u32 << fo.order());
            let n = bytes.min(folio_end - pos);
            self.acc.accesses += u64::from(n);
            if created {
                self.acc.misses += u64::from(n);
            } else {
                self.acc.hits += u64::from(n);
            }
            self.advance(self.cost.fd_access_ns * u64::from(n));
            let dirtied = self.folio_mark_dirty(f);
            // `ext4_block_write_begin`'s buffers (`crate::kmem::buffer_head`).
            self.create_empty_buffers(f);
            if dirtied && !top {
                self.balance_dirty_pages_ratelimited();
            }
            pos += n;
        }
    }

    /// `__filemap_get_folio(FGP_WRITEBEGIN | fgf_set_order(bytes))` of
    /// v6.18 (mm/filemap.c) for a page `index` not in the page cache: the
    /// order from [`write_begin_order`], then one order lower after each
    /// failed allocation (`__GFP_NORETRY` above order 0), failed charge
    /// or cached page in the range (`-EEXIST`), ending with order 0 as an
    /// ordinary write miss. None if even that failed.
    pub(crate) fn write_begin_folio(
        &mut self,
        file: FileId,
        index: u32,
        bytes: u32,
    ) -> Option<FolioId> {
        let mut order = write_begin_order(index, bytes);
        while order > 0 {
            let n = 1u32 << order;
            let fo = &self.files[file as usize];
            let busy = (index..index + n).any(|i| fo.slot(i) & SLOT_FOLIO != 0);
            if !busy {
                if let Some(f) = self.filemap_add_large_folio(file, index, order, true) {
                    self.advance(self.cost.major_fault_ns);
                    return Some(f);
                }
            }
            order -= 1;
        }
        let slot = self.files[file as usize].slot(index);
        self.page_cache_miss(file, index, slot, true)
    }

    /// `filemap_add_folio()` of a large folio (mm/filemap.c, v6.18):
    /// allocates a folio of `order` (`filemap_alloc_folio` with
    /// `__GFP_NORETRY`: kswapd is woken and one direct reclaim pass may
    /// run), charges it whole (`mem_cgroup_charge`), points the slots of
    /// all its pages at it, and, unless it is for a write (`__GFP_WRITE`),
    /// runs refault detection on the shadow the store replaced: the last
    /// one in its range, as `xas_for_each_conflict` leaves it (a large
    /// folio's eviction stores one shadow over its whole range). The
    /// charge of readahead (`readahead_gfp_mask`) has `__GFP_NORETRY` and
    /// gives up after one reclaim pass and a stock drain; a write's has
    /// the mapping's gfp and retries (without the OOM killer above
    /// `PAGE_ALLOC_COSTLY_ORDER`). None if the allocation or the charge
    /// failed; the caller has checked that no page of the range is cached.
    #[inline(never)]
    pub(crate) fn filemap_add_large_folio(
        &mut self,
        file: FileId,
        index: u32,
        order: u8,
        write: bool,
    ) -> Option<FolioId> {
        let n = 1u32 << order;
        // v6.18 __filemap_get_folio: the mapping's gfp (GFP_HIGHUSER_MOVABLE)
        // with __GFP_NORETRY | __GFP_NOWARN above the minimum order, and
        // filemap_alloc_folio's __GFP_COMP; readahead's (`GFP_READAHEAD`)
        // has them too, without __GFP_FS (its memalloc_nofs_save scope).
        use crate::gfp::*;
        let fs = if write { __GFP_FS } else { 0 };
        let gfp = crate::huge_memory::ThpGfp {
            direct: true,
            kswapd: true,
            noretry: true,
            mask: GFP_READAHEAD | fs,
        };
        let pfn = self.rmqueue_large(order, gfp)?;
        // A write's charge: the mapping's gfp (`GFP_KERNEL` as traced);
        // readahead's: its allocation mask, `__GFP_NORETRY` included.
        let charge_gfp = if write { GFP_KERNEL } else { gfp.mask };
        if !self.try_charge_memcg(u64::from(n), charge_gfp) {
            self.free_frames(pfn as u32, order as usize);
            self.node.free += u64::from(n);
            return None;
        }
        self.count_vm_events(PGALLOC_NORMAL, u64::from(n));
        self.memcg1_check_events(self.cur_memcg, u64::from(n));
        let f = self.folios.alloc(file, index, 0, self.cur_memcg);
        self.folios[f].set_order(order);
        self.phys.set_frames_folio(pfn, order as usize, f);
        self.folios.set_head_pfn(f, pfn as u32);
        // The slots as the store finds them (reclaim in the allocation may
        // have changed shadows).
        let mut shadow = 0;
        // Order ≥ 6: one multi-index entry in a level-1 node (`crate::kmem`).
        let multi = order >= crate::kmem::XA_CHUNK_SHIFT as u8;
        if multi && self.kmem.is_some() {
            self.kmem_store_multi(file, index, order, SLOT_FOLIO | f);
        }
        for i in index..index + n {
            let cur = self.files[file as usize].slot(i);
            if cur != 0 {
                shadow = cur;
            }
            if !multi && self.kmem.is_some() {
                self.kmem_slot_changed(file, i, cur, SLOT_FOLIO | f);
            }
            *self.files[file as usize].slot_mut(i) = SLOT_FOLIO | f;
        }
        if self.tp.is_some() {
            self.trace_filemap_folio(f, true);
        }
        if !write {
            self.workingset_refault(f, shadow);
        }
        self.folio_add_lru(f);
        Some(f)
    }

    /// The page-cache folios of `file` as `tools/wfprobe.c` prints those of
    /// the real kernel: runs of folios of one order, `first..end/oORDER`,
    /// then a line `folios:` with the count of each order (`oK=N`).
    pub fn cached_folios(&self, file: FileId) -> String {
        let Some(fo) = self.files.get(file as usize) else {
            return String::new();
        };
        let mut runs = String::new();
        let mut hist = [0u64; 16];
        let mut run: Option<(u32, u32, u8)> = None;
        let mut i = 0;
        while i < fo.pages {
            let Some(f) = slot_folio(fo.slot(i)) else {
                i += 1;
                continue;
            };
            let order = self.folios[f].order();
            let end = self.folios[f].index + (1u32 << order);
            hist[usize::from(order)] += 1;
            run = match run {
                Some((a, b, o)) if o == order && b == i => Some((a, end, o)),
                Some((a, b, o)) => {
                    runs.push_str(&format!("{a}..{b}/o{o} "));
                    Some((i, end, order))
                }
                None => Some((i, end, order)),
            };
            i = end;
        }
        if let Some((a, b, o)) = run {
            runs.push_str(&format!("{a}..{b}/o{o}"));
        }
        runs.push_str("\nfolios:");
        for (o, n) in hist.iter().enumerate().filter(|(_, &n)| n > 0) {
            runs.push_str(&format!(" o{o}={n}"));
        }
        runs
    }
}
