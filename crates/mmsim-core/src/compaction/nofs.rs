//! Compaction for an allocation without `__GFP_FS` (v6.12 mm/compaction.c
//! `isolate_migratepages_block`): "Only allow to migrate anonymous pages in
//! GFP_NOFS context because those do not depend on fs locks" — a folio with
//! a mapping (`folio_mapping()`: a page-cache folio's file, a swap-cache
//! folio's swap address space) is not isolated (`isolate_fail_put`) when
//! `cc->gfp_mask` lacks `__GFP_FS`; an anonymous folio outside the swap
//! cache (no mapping) is.
//!
//! In mmsim the one such allocation that compacts is a large readahead
//! folio (`machine.fs.large_folios`): `readahead_gfp_mask` inside
//! `page_cache_ra_unbounded`'s and `page_cache_ra_order`'s
//! `memalloc_nofs_save` scope (`crate::gfp::GFP_READAHEAD`), whose direct
//! compaction then moves only anonymous folios. kcompactd and proactive
//! compaction run with `GFP_KERNEL` (`kcompactd_do_work`,
//! `proactive_compact_node`) and a write's large folio with the mapping's
//! gfp, so they isolate page-cache folios as before.
//!
//! History: the test came with "mm, compaction: allow compaction for
//! GFP_NOFS requests" (Michal Hocko, v4.10, commit 73e64c51afc5); before
//! it `try_to_compact_pages` skipped compaction altogether without
//! `__GFP_FS`. No v4.9-era path of mmsim compacts for a NOFS allocation
//! (large page-cache folios are v6.18's), so the variant is not needed.

use crate::mem::folio::{flags, FolioId};
use crate::sim::Sim;

impl Sim {
    /// Whether the migrate scanner may isolate folio `f` for an allocation
    /// with mask `gfp` (the module overview): always with `__GFP_FS`;
    /// without it only a folio with no mapping (anonymous, not in the swap
    /// cache).
    #[inline]
    pub(super) fn nofs_isolatable(&self, gfp: crate::gfp::Gfp, f: FolioId) -> bool {
        if gfp & crate::gfp::__GFP_FS != 0 {
            return true;
        }
        let fo = &self.folios[f];
        !fo.is_file() && !fo.test(flags::SWAPCACHE)
    }
}
