//! What a failed page does to an order-0 readahead batch, by kernel era
//! (mm/readahead.c and fs/ext4/readpage.c; checked in the sources through
//! the search tools).
//!
//! * v4.9 `__do_page_cache_readahead`: `__page_cache_alloc(gfp_mask)`
//!   failing ends the batch (`break`; the pages already allocated are still
//!   read). The pages enter the page cache later, in `read_pages()` →
//!   `->readpages` (ext4's `ext4_mpage_readpages`, `mpage_readpages`): each
//!   `add_to_page_cache_lru(page, …, readahead_gfp_mask(mapping))` that
//!   fails (its memcg charge, since v4.8 with the readahead mask's
//!   `__GFP_NORETRY`) puts that page and goes on with the next
//!   (`goto next_page`); the bio is cut there, so the pages before and
//!   after are two reads.
//! * v5.8–v6.9 `page_cache_ra_unbounded` (Matthew Wilcox's readahead
//!   rework): the same, a page at a time: `read_pages()` submits the batch,
//!   the failed index is skipped.
//! * v6.10+ (and v6.12, mmsim's current rules): `filemap_add_folio`'s
//!   `-ENOMEM` ends the batch ("mm/readahead: break read-ahead loop if
//!   filemap_add_folio return -ENOMEM", Liu Shixin, 2024): retrying the
//!   charge page after page only repeated memcg reclaim.
//!
//! The batch's folios are locked until their read completes
//! (`filemap_add_folio` sets PG_locked, the read's end unlocks), so reclaim
//! inside the batch (its later pages' charges and allocations; the
//! reclaimer's `lru_add_drain()` puts them on the LRU) cannot take them:
//! `shrink_folio_list`'s `folio_trylock()` fails and the folio is kept
//! ([`Sim::ra_locked`], v6.12 and v4.9 alike). By default mmsim holds them
//! only until the batch ends; `machine.fs.ra_lock_until_read` holds them,
//! and every other readahead folio, until the read's completion time
//! ([`super::read_lock`]).
//!
//! [`crate::sim::ClassicRules::readahead_charge_skips`] picks the v4.9
//! rule under the `scanned-rotated` policy. Departure kept: v4.9 allocated
//! every page of the batch before charging any; mmsim allocates and
//! charges page by page (so a charge's reclaim may precede a later page's
//! allocation).
//!
//! **Which rule MGLRU `v6.1` follows.** The MGLRU `v6.1` variant
//! (`policy.mglru_version = "v6.1"`) stands for kernels 6.1 to 6.11, and
//! the change to a failed charge came in v6.10 (Liu Shixin's "break
//! read-ahead loop if filemap_add_folio return -ENOMEM"): 6.1–6.9 skipped
//! the page and went on, 6.10 and 6.11 end the batch. mmsim's `v6.1`
//! follows the v6.10+ rule (ends the batch; `readahead_charge_skips` is a
//! `scanned-rotated` rule only), so for 6.1–6.9 a readahead batch in a
//! full group reads fewer pages and reclaims less than those kernels did.

use crate::gfp::Gfp;
use crate::mem::folio::FolioId;
use crate::sim::{Policy, Sim};
use crate::FileId;

/// The outcome of one order-0 page of a readahead batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RaAdd {
    /// Allocated, charged and in the page cache.
    Added(FolioId),
    /// Its charge failed and the era skips it: submit the run so far and
    /// go on with the next index.
    Skip,
    /// The batch ends here (what was added is read).
    Stop,
}

impl Sim {
    /// One order-0 page of `page_cache_ra_unbounded`'s loop (v6.12) or of
    /// v4.9's `__do_page_cache_readahead` + `read_pages`: allocate with
    /// `gfp` (failure: [`RaAdd::Stop`] in every era), charge (failure:
    /// [`RaAdd::Skip`] under `readahead_charge_skips`, else
    /// [`RaAdd::Stop`]), then insert as [`Sim::filemap_add_folio`] does.
    #[inline]
    pub(crate) fn ra_add_order0(&mut self, file: FileId, index: u32, slot: u32, gfp: Gfp) -> RaAdd {
        if !self.alloc_page(gfp) {
            return RaAdd::Stop;
        }
        let Some(f) = self.charge_new_folio(file, index, 0, gfp) else {
            return match self.policy {
                Policy::Classic(r) if r.readahead_charge_skips => RaAdd::Skip,
                _ => RaAdd::Stop,
            };
        };
        let f = self.filemap_insert_folio(f, file, index, slot, false);
        self.ra_lock_folio(f, true);
        RaAdd::Added(f)
    }
}
