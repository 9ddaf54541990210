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
//!
//! And `mm_vmscan_wakeup_kswapd` (`TP_printk("nid=%d order=%d gfp_flags=%s",
//! …, show_gfp_flags(__entry->gfp_flags))` in v6.12; `zid` is recorded but not
//! printed, as `mm_vmscan_kswapd_wake`'s). v6.12 mm/vmscan.c `wakeup_kswapd()`
//! emits it in the waker's context only when it wakes kswapd: after raising
//! `kswapd_highest_zoneidx` and `kswapd_order`, and only if kswapd waits on
//! `kswapd_wait` (asleep or in its short nap: `waitqueue_active`), the node is not
//! hopeless (`kswapd_failures < MAX_RECLAIM_RETRIES`) and not balanced at the
//! waker's order unless a zone is boosted (`pgdat_watermark_boosted`). mmsim emits
//! it at the same point of `Sim::wakeup_kswapd_zone`, at the waker's time, before
//! kswapd's own `mm_vmscan_kswapd_wake`. The wakers and their masks:
//! `__alloc_pages_slowpath`'s `wake_all_kswapds` (the allocation's order and mask:
//! a page fault's `GFP_HIGHUSER_MOVABLE`, readahead's page-cache mask, a page
//! table's `GFP_PGTABLE_USER`, a slab page's, a 64 KiB fault's when its mask has
//! `__GFP_KSWAPD_RECLAIM`), and `rmqueue`'s `ZONE_BOOSTED_WATERMARK` test after a
//! boosting fallback (`wakeup_kswapd(zone, 0, 0, zone_idx(zone))`: order 0,
//! `gfp_flags=none`).

use std::fmt;

use crate::gfp::{memcg_reclaim_mask, Gfp, ShowGfp, GFP_KERNEL};

/// The events of this module that are not reclaim-begin events, in bit order
/// (after the 29 earlier events of `super::EVENTS`).
pub(super) const NAMES: [&str; 1] = ["mm_vmscan_wakeup_kswapd"];

/// The soft-limit pass's mask: mmsim runs it only in kswapd, whose
/// `balance_pgdat` scan_control has `.gfp_mask = GFP_KERNEL` (v6.12), so
/// it prints `GFP_HIGHUSER_MOVABLE` (the direct reclaim's pass in
/// `shrink_zones` is not modelled).
pub(super) const SOFTLIMIT_GFP: Gfp = memcg_reclaim_mask(GFP_KERNEL);

/// The template's `TP_printk`.
pub(super) fn begin(f: &mut fmt::Formatter<'_>, order: u32, gfp: Gfp) -> fmt::Result {
    write!(f, "order={order} gfp_flags={}", ShowGfp(gfp))
}

/// `mm_vmscan_wakeup_kswapd`'s `TP_printk` (the node is always 0).
pub(super) fn wakeup_kswapd(f: &mut fmt::Formatter<'_>, order: u32, gfp: Gfp) -> fmt::Result {
    write!(f, "nid=0 order={order} gfp_flags={}", ShowGfp(gfp))
}
