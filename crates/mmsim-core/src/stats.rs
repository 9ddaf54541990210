//! Counters in the kernel's own words (`/proc/vmstat`, include/linux/vm_event_item.h
//! and mmzone.h's node_stat_item).
//!
//! Every field is named exactly as the kernel names the line in /proc/vmstat,
//! counted in base pages unless the kernel counts otherwise (`pgpgin` and
//! `pgpgout` are in KiB, as in the kernel). Which reclaim counts where follows
//! mm/vmscan.c of v6.x: `pgscan_kswapd/direct`, `pgsteal_kswapd/direct` and
//! `pgrefill` count global reclaim only, while `pgscan_anon/file` and
//! `pgsteal_anon/file` also count cgroup-limit reclaim.

use serde::{Deserialize, Serialize};

macro_rules! vmstat_struct {
    ($( $(#[doc = $d:literal])* $name:ident ),* $(,)?) => {
        /// Cumulative event counters and end-of-run gauges, named as in /proc/vmstat.
        #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct Vmstat {
            $( $(#[doc = $d])* pub $name: u64, )*
        }
        impl Vmstat {
            /// (name, value) pairs in /proc/vmstat order, for tables.
            pub fn pairs(&self) -> Vec<(&'static str, u64)> {
                vec![ $( (stringify!($name), self.$name), )* ]
            }
        }
    };
}

vmstat_struct! {
    #[doc = "Gauge: free pages at the end."]
    nr_free_pages,
    #[doc = "Gauge: LRU sizes at the end."]
    nr_inactive_anon,
    #[doc = "Gauge."]
    nr_active_anon,
    #[doc = "Gauge."]
    nr_inactive_file,
    #[doc = "Gauge."]
    nr_active_file,
    #[doc = "Gauge."]
    nr_unevictable,
    #[doc = "Gauge: dirty file pages."]
    nr_dirty,
    #[doc = "Gauge: pages under writeback."]
    nr_writeback,
    #[doc = "Gauge: anonymous pages also in the swap cache (`nr_swapcached`)."]
    nr_swapcached,
    #[doc = "Counter: pages written by reclaim's pageout()."]
    nr_vmscan_write,
    #[doc = "Counter: dirty or writeback folios reclaim activated with PG_reclaim set."]
    nr_vmscan_immediate_reclaim,
    #[doc = "Counter: page-ins, KiB."]
    pgpgin,
    #[doc = "Counter: page-outs, KiB."]
    pgpgout,
    #[doc = "Counter: pages swapped in."]
    pswpin,
    #[doc = "Counter: pages swapped out."]
    pswpout,
    #[doc = "Counter: pages read by swap readahead (besides the faulting page)."]
    swap_ra,
    #[doc = "Counter: swap-cache hits on pages brought in by swap readahead."]
    swap_ra_hit,
    #[doc = "Counter: page allocations."]
    pgalloc_normal,
    #[doc = "Counter: pages freed."]
    pgfree,
    #[doc = "Counter: activations (reclaim and mark_accessed, not refaults)."]
    pgactivate,
    #[doc = "Counter: deactivations."]
    pgdeactivate,
    #[doc = "Counter: page faults (minor and major)."]
    pgfault,
    #[doc = "Counter: major faults (IO needed)."]
    pgmajfault,
    #[doc = "Counter: active-list pages scanned (global reclaim)."]
    pgrefill,
    #[doc = "Counter: inactive pages reclaimed by kswapd."]
    pgsteal_kswapd,
    #[doc = "Counter: inactive pages reclaimed by direct reclaim (global)."]
    pgsteal_direct,
    #[doc = "Counter: inactive pages scanned by kswapd."]
    pgscan_kswapd,
    #[doc = "Counter: inactive pages scanned by direct reclaim (global)."]
    pgscan_direct,
    #[doc = "Counter: direct reclaimers throttled."]
    pgscan_direct_throttle,
    #[doc = "Counter: anon pages scanned (all reclaim)."]
    pgscan_anon,
    #[doc = "Counter: file pages scanned (all reclaim)."]
    pgscan_file,
    #[doc = "Counter: anon pages reclaimed (all reclaim)."]
    pgsteal_anon,
    #[doc = "Counter: file pages reclaimed (all reclaim)."]
    pgsteal_file,
    #[doc = "Counter: writeback completions that rotated a folio to the inactive tail."]
    pgrotated,
    #[doc = "Counter: refaults of anon pages that found a shadow."]
    workingset_refault_anon,
    #[doc = "Counter: refaults of file pages that found a shadow."]
    workingset_refault_file,
    #[doc = "Counter: anon refaults activated by the distance test."]
    workingset_activate_anon,
    #[doc = "Counter: file refaults activated by the distance test."]
    workingset_activate_file,
    #[doc = "Counter: activated anon refaults whose shadow had PG_workingset."]
    workingset_restore_anon,
    #[doc = "Counter: activated file refaults whose shadow had PG_workingset."]
    workingset_restore_file,
    #[doc = "Counter: kswapd balance_pgdat() runs."]
    pageoutrun,
    #[doc = "Counter: direct reclaim entries (global), ZONE_NORMAL."]
    allocstall_normal,
    #[doc = "Counter: kswapd went to sleep and was woken again quickly (low mark)."]
    kswapd_low_wmark_hit_quickly,
    #[doc = "Counter: OOM kills."]
    oom_kill,
}
