//! The reclaim-begin events of include/trace/events/vmscan.h (v6.12):
//! `mm_vmscan_direct_reclaim_begin`, `mm_vmscan_memcg_reclaim_begin` and
//! `mm_vmscan_memcg_softlimit_reclaim_begin` share the class
//! `mm_vmscan_direct_reclaim_begin_template`, `TP_printk("order=%d
//! gfp_flags=%s", …, show_gfp_flags(__entry->gfp_flags))`.
//!
//! What each prints (checked in v6.12 mm/vmscan.c): direct reclaim the
//! allocation's order and `current_gfp_context` mask (`Sim::alloc_page`'s
//! callers and the large allocations each pass theirs); memcg reclaim order
//! 0 and `crate::gfp::memcg_reclaim_mask` of the charge's mask (a THP
//! charge: its `vma_thp_gfp_mask`, e.g. `GFP_TRANSHUGE|__GFP_NORETRY` prints
//! `__GFP_HIGHMEM|__GFP_IO|__GFP_FS|__GFP_NOWARN|__GFP_NORETRY|__GFP_NOMEMALLOC|__GFP_HARDWALL|__GFP_MOVABLE|__GFP_DIRECT_RECLAIM`:
//! `__GFP_NOWARN|__GFP_NOMEMALLOC` kept, `__GFP_KSWAPD_RECLAIM` absent);
//! `mem_cgroup_shrink_node`'s soft-limit pass `sc.order` (0) and the same
//! mask of its caller's `sc->gfp_mask`.

use std::fmt;

use crate::gfp::{memcg_reclaim_mask, Gfp, ShowGfp, GFP_KERNEL};

/// The soft-limit pass's mask: mmsim runs it only in kswapd, whose
/// `balance_pgdat` scan_control has `.gfp_mask = GFP_KERNEL` (v6.12), so
/// it prints `GFP_HIGHUSER_MOVABLE` (the direct reclaim's pass in
/// `shrink_zones` is not modelled).
pub(super) const SOFTLIMIT_GFP: Gfp = memcg_reclaim_mask(GFP_KERNEL);

/// The template's `TP_printk`.
pub(super) fn begin(f: &mut fmt::Formatter<'_>, order: u32, gfp: Gfp) -> fmt::Result {
    write!(f, "order={order} gfp_flags={}", ShowGfp(gfp))
}
