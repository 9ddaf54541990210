//! Whether a fallback may claim the pageblock it steals from: the counts of
//! `steal_suitable_fallback()` (mm/page_alloc.c, v6.12.0; the same in the
//! later `try_to_steal_block()`, v6.15 and 6.12.y backports).

use super::{MigrateType, Zone, NOT_FREE, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};

impl Zone {
    /// `prep_move_freepages_block()` and the "alike" rule of
    /// `steal_suitable_fallback()` (v6.12): the free pages and the allocated
    /// pages compatible with a `start` allocation in the pageblock of `pfn`,
    /// or `None` when the pageblock is cut by the zone's edge (the kernel
    /// refuses to move a range `zone_spans_pfn()` does not cover, so such a
    /// block is never claimed).
    ///
    /// Alike pages: for a movable allocation the block's movable pages; for
    /// an unmovable or reclaimable one falling back into a MOVABLE block,
    /// every page neither free nor movable (`pageblock_nr_pages - (free +
    /// movable)`); for one falling back between unmovable and reclaimable
    /// blocks, none (their pages cannot be told apart). Movable pages are the
    /// frames allocated movable; the kernel counts `PageLRU` or
    /// `__PageMovable` pages. A page on a per-CPU list is neither free
    /// (`PageBuddy`) nor movable there, so it is alike for an unmovable or
    /// reclaimable claim in a MOVABLE block and not alike for a movable
    /// claim: `page_alloc/pcp.rs` counts it allocated unmovable while it is
    /// on a list (`pcp_mark`, `pcp_take`), whatever it was allocated as.
    /// Departure: a page allocated movable but off the LRU for a while (in
    /// a `folio_batch` before `lru_add`, isolated by reclaim or compaction)
    /// still counts movable here, where the kernel counts it alike for an
    /// unmovable claim.
    pub(super) fn count_block(
        &self,
        pfn: u64,
        start: MigrateType,
        block_mt: MigrateType,
    ) -> Option<(u64, u64)> {
        let first = self.start_pfn + ((self.block_index(pfn) as u64) << PAGEBLOCK_ORDER);
        let end = first + PAGEBLOCK_NR_PAGES;
        if end > self.start_pfn + self.spanned_pages {
            return None;
        }
        let (mut free, mut movable, mut p) = (0, 0, first);
        while p < end {
            let i = self.idx(p);
            let f = self.frames[i];
            if f.free_order() != NOT_FREE {
                let size = 1u64 << f.free_order();
                free += size;
                p += size;
            } else {
                movable += u64::from(f.alloc_type() == MigrateType::Movable as u8);
                p += 1;
            }
        }
        let alike = if start == MigrateType::Movable {
            movable
        } else if block_mt == MigrateType::Movable {
            PAGEBLOCK_NR_PAGES - (free + movable)
        } else {
            0
        };
        Some((free, alike))
    }
}
