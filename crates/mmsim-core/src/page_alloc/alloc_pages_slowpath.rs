//! The mask's say in the order-0 slow path's retries: `__alloc_pages_slowpath()`
//! (mm/page_alloc.c, v6.12; the same test in v4.9).
//!
//! After the first direct reclaim (`__alloc_pages_direct_reclaim`) and direct
//! compaction (`__alloc_pages_direct_compact`, which returns at once for
//! order 0) have not produced a page, an allocation whose mask carries
//! `__GFP_NORETRY` goes to `nopage`: it neither reaches `should_reclaim_retry()`
//! nor `__alloc_pages_may_oom()`, so it fails after one reclaim pass and never
//! OOM-kills. The order-0 allocation with that bit in mmsim is readahead's
//! (`readahead_gfp_mask`, [`crate::gfp::GFP_READAHEAD`]); its failure ends the
//! readahead batch (`page_cache_ra_unbounded`'s `if (!folio) break;`) and the
//! page the reader waits for then comes from the page-cache miss, whose
//! mapping mask retries and may OOM-kill.
//!
//! History (checked in the sources through the search tools): the
//! `if (gfp_mask & __GFP_NORETRY) goto nopage;` after direct reclaim and
//! compaction has stood in `__alloc_pages_slowpath` since Michal Hocko's
//! 2016 OOM-detection rework (v4.7/v4.8: `should_reclaim_retry`, the
//! `noretry` label folded into `nopage`), so v4.9 has it as v6.12 does;
//! before it `should_alloc_retry()` returned 0 for `__GFP_NORETRY` to the same
//! effect. Every era mmsim models therefore shares the rule: no variant.
//! The watermark kswapd's wakeup and the one reclaim pass are unchanged.

use crate::gfp::{Gfp, __GFP_NORETRY};

/// `__alloc_pages_slowpath()`'s "Do not loop if specifically requested"
/// (mm/page_alloc.c, v6.12 and v4.9): true if an allocation with `gfp`
/// whose first direct reclaim (and, above order 0, compaction) did not
/// yield a page must fail now instead of retrying and calling the OOM
/// killer. Called by [`crate::sim::Sim::alloc_page`]'s slow path and its
/// two-zone form (`Sim::alloc_page_zoned`).
#[inline]
pub(crate) fn noretry_gives_up(gfp: Gfp) -> bool {
    gfp & __GFP_NORETRY != 0
}
