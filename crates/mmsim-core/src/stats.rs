//! The counter registry: every counter the simulator keeps, declared once, in
//! the kernel's own words (include/linux/vm_event_item.h `enum vm_event_item`,
//! include/linux/mmzone.h `enum node_stat_item`, include/linux/memcontrol.h
//! `enum memcg_memory_event`, v6.12).
//!
//! One line of [`counters!`](self) declares a counter: its kernel enum name
//! ([`PGFAULT`](item::PGFAULT)), its `/proc/vmstat` name (`pgfault`, also its
//! field and JSON key), its [`Kind`] (event counter or state gauge), its
//! [`Unit`], whether a memory cgroup counts it too and under which line of
//! which cgroup file ([`MemcgLine`]: `memory.stat`, `memory.events`,
//! `memory.swap.events`), and a doc line. From that line come the
//! [`VmItem`] enum with its constant, the field of [`Vmstat`] (`/proc/vmstat`
//! in declaration order: the text report and JSON), the field of
//! [`MemcgStat`] (the per-group counters behind `memory.stat` and
//! `memory.events`), the registry walk [`VmItem::ALL`] with each counter's
//! metadata, and `memory.stat` in the kernel's print order
//! ([`memory_stat_items`]).
//!
//! Counting goes through the kernel's helpers, on [`Sim`]:
//! `count_vm_events` (the node only: global-reclaim
//! counters such as `pgscan_anon`), `count_memcg_events`
//! (the group only: `memory.events` and the counters that cgroup-limit reclaim
//! counts differently), `count_reclaim_events` (the kswapd/direct pair of
//! mm/vmscan.c) and `count_events`, the pair
//! `count_vm_events` + `count_memcg_events` the kernel calls together (a fault,
//! an activation, a refault). The item is a constant at every call site, so
//! each call inlines to the field increment it replaces: no lookup, no
//! hashing, no dispatch on the per-access path.
//!
//! Counted in base pages unless the unit says otherwise (`pgpgin` and
//! `pgpgout` are in KiB, as in the kernel). Which reclaim counts where follows
//! mm/vmscan.c of v6.x: `pgscan_kswapd/direct`, `pgsteal_kswapd/direct` and
//! `pgrefill` count global reclaim only on the node, while `pgscan_anon/file`
//! and `pgsteal_anon/file` also count cgroup-limit reclaim; a group's
//! `pgscan_direct`/`pgsteal_direct` count its limit reclaim too.
//!
//! # Adding a counter
//!
//! One line in the `node` section (a `/proc/vmstat` line) or the `memcg_only`
//! section (a cgroup file line with no `/proc/vmstat` twin); a counter a
//! group keeps also gets its field name in `memcg_fields` (the order of
//! [`MemcgStat`]'s JSON keys, which existing results fix). For the THP
//! fault counter, which the kernel counts on the node and in the group
//! (`count_vm_event(THP_FAULT_ALLOC)` + `count_memcg_event_mm`, memory.stat
//! `thp_fault_alloc`):
//!
//! ```text
//! node {
//!     ...
//!     #[doc = "Counter: THP faults that allocated a huge page."]
//!     THP_FAULT_ALLOC thp_fault_alloc: Event, Count, memcg(Stat, "thp_fault_alloc");
//! }
//! memcg_fields { ..., thp_fault_alloc }
//! ```
//!
//! and the fault path calls `self.count_events(memcg, THP_FAULT_ALLOC, 1)`;
//! `/proc/vmstat` in the report, JSON and `memory.stat` follow, and the
//! registry tests below check the new name against the kernel's
//! `vmstat_text[]` and `memory_stat_format` lists. A DAMOS statistic
//! (`nr_tried`, `sz_applied`, ... of mm/damon/sysfs-schemes.c) or a per-order
//! mTHP statistic (`mthp_stat_item`: `anon_fault_alloc` of
//! /sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats/) is not a
//! /proc/vmstat line: it is one line of a section for its own file, declared
//! like `memcg_only`; the mTHP counters are `crate::huge_memory::MthpStats`,
//! one struct per size as the kernel has one directory per size.

use crate::memcg::MemcgId;
use crate::reclaim::Reclaimer;

/// `skip_serializing_if` of the counters added after the results digest was
/// written: they are absent from the JSON of runs that never count them.
pub(crate) fn is_zero(v: &u64) -> bool {
    *v == 0
}
use crate::sim::Sim;
use serde::{Deserialize, Serialize};

/// What a counter measures over time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Cumulative event counter (`vm_event_item`, `count_vm_events`): only
    /// grows, and a measurement window subtracts its start.
    Event,
    /// State gauge (`node_stat_item` read by `node_page_state`): a level,
    /// filled in at the end of the run.
    State,
}

/// The unit of a counter's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Base pages (4 KiB).
    Pages,
    /// KiB (`pgpgin`/`pgpgout`).
    KiB,
    /// Occurrences (faults, kswapd runs, OOM kills).
    Count,
    /// Nanoseconds of simulated time.
    Ns,
}

/// The cgroup file a per-group counter appears in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemcgFile {
    /// `memory.stat` (`memory_stat_format`).
    Stat,
    /// `memory.events` (`enum memcg_memory_event`).
    Events,
    /// `memory.swap.events`.
    SwapEvents,
    /// No kernel file: the simulator's own per-group measurement.
    Sim,
}

/// Where a group reports a counter: file and line name (which may differ
/// from the `/proc/vmstat` name: `memory.swap.events` calls `swap_max` `max`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemcgLine {
    /// The file.
    pub file: MemcgFile,
    /// The line's name in that file.
    pub name: &'static str,
}

/// `memory.stat` lines of cgroup v2 in the order `memory_stat_format` prints
/// them (mm/memcontrol.c v6.12: `memory_stats[]`, then `pgscan`/`pgsteal`,
/// then `memcg_vm_event_stat[]`), restricted to the lines the simulator can
/// produce. `pgscan` and `pgsteal` are the kernel's sums of the kswapd,
/// direct and khugepaged counters ([`crate::memcg::MemcgReport`]), not counters of their own.
pub(crate) const MEMORY_STAT_ORDER_V6_12: &[&str] = &[
    "anon",
    "file",
    "kernel",
    "kernel_stack",
    "pagetables",
    "inactive_anon",
    "active_anon",
    "inactive_file",
    "active_file",
    "unevictable",
    "slab_reclaimable",
    "slab_unreclaimable",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "workingset_restore_anon",
    "workingset_restore_file",
    "workingset_nodereclaim",
    "pgscan",
    "pgsteal",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgscan_khugepaged",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgsteal_khugepaged",
    "pgfault",
    "pgmajfault",
    "pgrefill",
    "pgactivate",
    "pgdeactivate",
    "pglazyfree",
    "pglazyfreed",
    "swpin_zero",
    "swpout_zero",
    "thp_fault_alloc",
    "thp_collapse_alloc",
];

/// `memory.events` lines in the kernel's order (`memory_events_show`,
/// mm/memcontrol.c v6.12); `max` is the charge counter the report keeps
/// apart ([`crate::memcg::MemcgReport::events_max`]).
pub(crate) const MEMORY_EVENTS_ORDER_V6_12: &[&str] =
    &["low", "high", "max", "oom", "oom_kill", "oom_group_kill"];

/// `memory.swap.events` lines in the kernel's order (`swap_events_show`, v6.12).
pub(crate) const MEMORY_SWAP_EVENTS_ORDER_V6_12: &[&str] = &["high", "max", "fail"];

/// `None`, or the group's line of a declared counter.
macro_rules! memcg_line {
    () => {
        None
    };
    ($file:ident, $name:literal) => {
        Some(MemcgLine {
            file: MemcgFile::$file,
            name: $name,
        })
    };
}

/// The registry: see the module documentation.
macro_rules! counters {
    (
        node {
            $( $(#[doc = $d:literal])*
               $item:ident $name:ident : $kind:ident, $unit:ident
               $(, memcg($file:ident, $mname:literal))?
               $(, skip_if($skip:literal))? ; )*
        }
        memcg_only {
            $( $(#[doc = $md:literal])*
               $mitem:ident $mfield:ident : $mkind:ident, $munit:ident,
               memcg($mfile:ident, $mmname:literal) ; )*
        }
        memcg_fields { $( $f:ident $(as $json:literal)? $(skip_if $fskip:literal)? ),* $(,)? }
    ) => {
        /// Every counter of the registry (`enum vm_event_item` and
        /// `node_stat_item` for the node, `memcg_memory_event` for groups),
        /// named as its field; [`item`] has the kernel's upper-case names.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum VmItem {
            $( $(#[doc = $d])* $name, )*
            $( $(#[doc = $md])* $mfield, )*
        }

        /// The counters under the kernel's enum names, for call sites
        /// (`self.count_events(memcg, PGFAULT, 1)`). Every counter is declared;
        /// gauges filled at the end of a run are not counted by name.
        #[allow(dead_code)]
        pub(crate) mod item {
            use super::VmItem;
            $( #[doc = concat!("`", stringify!($name), "`.")]
               pub(crate) const $item: VmItem = VmItem::$name; )*
            $( #[doc = concat!("`", stringify!($mfield), "`.")]
               pub(crate) const $mitem: VmItem = VmItem::$mfield; )*
        }

        impl VmItem {
            /// The registry in declaration order: `/proc/vmstat` lines, then
            /// the group-only counters.
            pub const ALL: &'static [VmItem] = &[
                $( VmItem::$name, )* $( VmItem::$mfield, )*
            ];

            /// The field name: the `/proc/vmstat` line for node counters.
            pub const fn name(self) -> &'static str {
                match self {
                    $( VmItem::$name => stringify!($name), )*
                    $( VmItem::$mfield => stringify!($mfield), )*
                }
            }

            /// The kernel's enum name (`PGFAULT`, `MEMCG_LOW`).
            pub const fn kernel_name(self) -> &'static str {
                match self {
                    $( VmItem::$name => stringify!($item), )*
                    $( VmItem::$mfield => stringify!($mitem), )*
                }
            }

            /// Event counter or state gauge.
            pub const fn kind(self) -> Kind {
                match self {
                    $( VmItem::$name => Kind::$kind, )*
                    $( VmItem::$mfield => Kind::$mkind, )*
                }
            }

            /// The unit of its value.
            pub const fn unit(self) -> Unit {
                match self {
                    $( VmItem::$name => Unit::$unit, )*
                    $( VmItem::$mfield => Unit::$munit, )*
                }
            }

            /// Whether it is a `/proc/vmstat` line ([`Vmstat`] field).
            pub const fn in_vmstat(self) -> bool {
                match self {
                    $( VmItem::$name => true, )*
                    $( VmItem::$mfield => false, )*
                }
            }

            /// The group's line of it, if groups count it ([`MemcgStat`] field).
            pub const fn memcg(self) -> Option<MemcgLine> {
                match self {
                    $( VmItem::$name => memcg_line!($($file, $mname)?), )*
                    $( VmItem::$mfield => memcg_line!($mfile, $mmname), )*
                }
            }

            /// Its doc line.
            pub const fn doc(self) -> &'static str {
                match self {
                    $( VmItem::$name => concat!($($d),*), )*
                    $( VmItem::$mfield => concat!($($md),*), )*
                }
            }
        }

        /// Cumulative event counters and end-of-run gauges, named as in /proc/vmstat.
        #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct Vmstat {
            $( $(#[doc = $d])*
               $( #[serde(default, skip_serializing_if = $skip)] )?
               pub $name: u64, )*
        }

        impl Vmstat {
            /// (name, value) pairs in /proc/vmstat order, for tables.
            pub fn pairs(&self) -> Vec<(&'static str, u64)> {
                vec![ $( (stringify!($name), self.$name), )* ]
            }

            /// Multiplies every counter and gauge by `factor`, rounded to the
            /// nearest integer: a sampled run's counters scaled back to the
            /// whole machine (estimates; see `MachineConfig::sample_rate`).
            pub fn scale(&mut self, factor: f64) {
                $( self.$name = (self.$name as f64 * factor).round() as u64; )*
            }

            /// The counter `item`'s field (None: not a /proc/vmstat line).
            /// With a constant `item` this inlines to the field.
            #[inline(always)]
            pub fn slot_mut(&mut self, item: VmItem) -> Option<&mut u64> {
                #[allow(unreachable_patterns)]
                match item {
                    $( VmItem::$name => Some(&mut self.$name), )*
                    _ => None,
                }
            }

            /// `__count_vm_events`: adds `n` to counter `item`, borrowing
            /// only the counters (for call sites that hold another part of
            /// the `Sim`). With a constant `item` this inlines to the
            /// field increment.
            #[inline(always)]
            pub fn count(&mut self, item: VmItem, n: u64) {
                match self.slot_mut(item) {
                    Some(c) => *c += n,
                    None => debug_assert!(false, "{} is not a /proc/vmstat line", item.name()),
                }
            }

            /// The counter `item`'s value (None: not a /proc/vmstat line).
            pub fn get(&self, item: VmItem) -> Option<u64> {
                #[allow(unreachable_patterns)]
                match item {
                    $( VmItem::$name => Some(self.$name), )*
                    _ => None,
                }
            }
        }

        /// Event counters of one group (`memcg->vmstats` events and
        /// `memory.events`), local to the group; reports sum them over the
        /// subtree as cgroup v2's `memory.stat` and `memory.events` do. The
        /// fields are the registry's counters with a `MemcgLine`, in the
        /// order of the results' JSON keys.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct MemcgStat {
            $( #[doc = concat!("`VmItem::", stringify!($f), "`: ",
                               "see its declaration.")]
               $( #[serde(rename = $json)] )?
               $( #[serde(default, skip_serializing_if = $fskip)] )?
               pub $f: u64, )*
        }

        impl MemcgStat {
            /// Adds `o`'s counters to these.
            pub fn add(&mut self, o: &MemcgStat) {
                $( self.$f += o.$f; )*
            }

            /// Multiplies every counter by `factor`, rounded to the nearest
            /// integer (a sampled run's counters scaled back; estimates).
            pub fn scale(&mut self, factor: f64) {
                $( self.$f = (self.$f as f64 * factor).round() as u64; )*
            }

            /// The counter `item`'s field (None: groups do not count it).
            /// With a constant `item` this inlines to the field.
            #[inline(always)]
            pub fn slot_mut(&mut self, item: VmItem) -> Option<&mut u64> {
                #[allow(unreachable_patterns)]
                match item {
                    $( VmItem::$f => Some(&mut self.$f), )*
                    _ => None,
                }
            }

            /// `__count_memcg_events` on one group's own counters: adds `n`
            /// to counter `item`. With a constant `item` this inlines to the
            /// field increment.
            #[inline(always)]
            pub fn count(&mut self, item: VmItem, n: u64) {
                match self.slot_mut(item) {
                    Some(c) => *c += n,
                    None => debug_assert!(false, "groups do not count {}", item.name()),
                }
            }

            /// The counter `item`'s value (None: groups do not count it).
            pub fn get(&self, item: VmItem) -> Option<u64> {
                #[allow(unreachable_patterns)]
                match item {
                    $( VmItem::$f => Some(self.$f), )*
                    _ => None,
                }
            }
        }
    };
}

counters! {
    node {
        #[doc = "Gauge: free pages at the end."]
        NR_FREE_PAGES nr_free_pages: State, Pages;
        #[doc = "Gauge: LRU sizes at the end."]
        NR_INACTIVE_ANON nr_inactive_anon: State, Pages;
        #[doc = "Gauge."]
        NR_ACTIVE_ANON nr_active_anon: State, Pages;
        #[doc = "Gauge."]
        NR_INACTIVE_FILE nr_inactive_file: State, Pages;
        #[doc = "Gauge."]
        NR_ACTIVE_FILE nr_active_file: State, Pages;
        #[doc = "Gauge."]
        NR_UNEVICTABLE nr_unevictable: State, Pages;
        #[doc = "Gauge: dirty file pages."]
        NR_FILE_DIRTY nr_dirty: State, Pages;
        #[doc = "Gauge: pages under writeback."]
        NR_WRITEBACK nr_writeback: State, Pages;
        #[doc = "Gauge: anonymous pages also in the swap cache (`nr_swapcached`)."]
        NR_SWAPCACHE nr_swapcached: State, Pages;
        #[doc = "Counter: pages written by reclaim's pageout()."]
        NR_VMSCAN_WRITE nr_vmscan_write: Event, Pages;
        #[doc = "Counter: dirty or writeback folios reclaim activated with PG_reclaim set."]
        NR_VMSCAN_IMMEDIATE nr_vmscan_immediate_reclaim: Event, Pages;
        #[doc = "Counter: page-ins, KiB."]
        PGPGIN pgpgin: Event, KiB;
        #[doc = "Counter: page-outs, KiB."]
        PGPGOUT pgpgout: Event, KiB;
        #[doc = "Counter: pages swapped in."]
        PSWPIN pswpin: Event, Pages;
        #[doc = "Counter: pages swapped out."]
        PSWPOUT pswpout: Event, Pages;
        #[doc = "Counter: pages read by swap readahead (besides the faulting page)."]
        SWAP_RA swap_ra: Event, Pages;
        #[doc = "Counter: swap-cache hits on pages brought in by swap readahead."]
        SWAP_RA_HIT swap_ra_hit: Event, Pages;
        #[doc = "Counter: page allocations."]
        PGALLOC_NORMAL pgalloc_normal: Event, Pages;
        #[doc = "Counter: pages freed."]
        PGFREE pgfree: Event, Pages;
        #[doc = "Counter: activations (reclaim and mark_accessed, not refaults)."]
        PGACTIVATE pgactivate: Event, Pages, memcg(Stat, "pgactivate");
        #[doc = "Counter: deactivations."]
        PGDEACTIVATE pgdeactivate: Event, Pages, memcg(Stat, "pgdeactivate");
        #[doc = "Counter: page faults (minor and major)."]
        PGFAULT pgfault: Event, Count, memcg(Stat, "pgfault");
        #[doc = "Counter: major faults (IO needed)."]
        PGMAJFAULT pgmajfault: Event, Count, memcg(Stat, "pgmajfault");
        #[doc = "Counter: active-list pages scanned (global reclaim; a group's: all reclaim)."]
        PGREFILL pgrefill: Event, Pages, memcg(Stat, "pgrefill");
        #[doc = "Counter: inactive pages reclaimed by kswapd."]
        PGSTEAL_KSWAPD pgsteal_kswapd: Event, Pages, memcg(Stat, "pgsteal_kswapd");
        #[doc = "Counter: inactive pages reclaimed by direct reclaim (global; a group's: also its limit reclaim)."]
        PGSTEAL_DIRECT pgsteal_direct: Event, Pages, memcg(Stat, "pgsteal_direct");
        #[doc = "Counter: inactive pages reclaimed by khugepaged's reclaim (global; a group's: also its limit reclaim; in JSON only when non-zero)."]
        PGSTEAL_KHUGEPAGED pgsteal_khugepaged: Event, Pages, memcg(Stat, "pgsteal_khugepaged"), skip_if("is_zero");
        #[doc = "Counter: inactive pages scanned by kswapd."]
        PGSCAN_KSWAPD pgscan_kswapd: Event, Pages, memcg(Stat, "pgscan_kswapd");
        #[doc = "Counter: inactive pages scanned by direct reclaim (global; a group's: also its limit reclaim)."]
        PGSCAN_DIRECT pgscan_direct: Event, Pages, memcg(Stat, "pgscan_direct");
        #[doc = "Counter: inactive pages scanned by khugepaged's reclaim (global; a group's: also its limit reclaim; in JSON only when non-zero)."]
        PGSCAN_KHUGEPAGED pgscan_khugepaged: Event, Pages, memcg(Stat, "pgscan_khugepaged"), skip_if("is_zero");
        #[doc = "Counter: direct reclaimers throttled."]
        PGSCAN_DIRECT_THROTTLE pgscan_direct_throttle: Event, Count;
        #[doc = "Counter: anon pages scanned (all reclaim)."]
        PGSCAN_ANON pgscan_anon: Event, Pages;
        #[doc = "Counter: file pages scanned (all reclaim)."]
        PGSCAN_FILE pgscan_file: Event, Pages;
        #[doc = "Counter: anon pages reclaimed (all reclaim)."]
        PGSTEAL_ANON pgsteal_anon: Event, Pages;
        #[doc = "Counter: file pages reclaimed (all reclaim)."]
        PGSTEAL_FILE pgsteal_file: Event, Pages;
        #[doc = "Counter: writeback completions that rotated a folio to the inactive tail."]
        PGROTATED pgrotated: Event, Pages;
        #[doc = "Counter: refaults of anon pages that found a shadow."]
        WORKINGSET_REFAULT_ANON workingset_refault_anon: Event, Pages,
            memcg(Stat, "workingset_refault_anon");
        #[doc = "Counter: refaults of file pages that found a shadow."]
        WORKINGSET_REFAULT_FILE workingset_refault_file: Event, Pages,
            memcg(Stat, "workingset_refault_file");
        #[doc = "Counter: anon refaults activated by the distance test."]
        WORKINGSET_ACTIVATE_ANON workingset_activate_anon: Event, Pages,
            memcg(Stat, "workingset_activate_anon");
        #[doc = "Counter: file refaults activated by the distance test."]
        WORKINGSET_ACTIVATE_FILE workingset_activate_file: Event, Pages,
            memcg(Stat, "workingset_activate_file");
        #[doc = "Counter: activated anon refaults whose shadow had PG_workingset."]
        WORKINGSET_RESTORE_ANON workingset_restore_anon: Event, Pages,
            memcg(Stat, "workingset_restore_anon");
        #[doc = "Counter: activated file refaults whose shadow had PG_workingset."]
        WORKINGSET_RESTORE_FILE workingset_restore_file: Event, Pages,
            memcg(Stat, "workingset_restore_file");
        #[doc = "Counter: kswapd balance_pgdat() runs."]
        PAGEOUTRUN pageoutrun: Event, Count;
        #[doc = "Counter: direct reclaim entries (global), ZONE_NORMAL."]
        ALLOCSTALL_NORMAL allocstall_normal: Event, Count;
        #[doc = "Counter: kswapd went to sleep and was woken again quickly (low mark)."]
        KSWAPD_LOW_WMARK_HIT_QUICKLY kswapd_low_wmark_hit_quickly: Event, Count;
        #[doc = "Counter: kswapd found the node unbalanced when it tried to sleep, or after its HZ/10 nap (`compaction.kswapd_nap`; in JSON only when non-zero)."]
        KSWAPD_HIGH_WMARK_HIT_QUICKLY kswapd_high_wmark_hit_quickly: Event, Count, skip_if("is_zero");
        #[doc = "Counter: OOM kills (a group's: `memory.events` oom_kill, tasks of the group killed)."]
        OOM_KILL oom_kill: Event, Count, memcg(Events, "oom_kill");
        #[doc = "Counter: pages migrated (`migrate_pages`; here by compaction, `crate::compaction`; in JSON only when non-zero)."]
        PGMIGRATE_SUCCESS pgmigrate_success: Event, Pages, skip_if("is_zero");
        #[doc = "Counter: pages that failed to migrate (in JSON only when non-zero)."]
        PGMIGRATE_FAIL pgmigrate_fail: Event, Pages, skip_if("is_zero");
        #[doc = "Counter: pages the compaction migrate scanner looked at (in JSON only when non-zero)."]
        COMPACTMIGRATE_SCANNED compact_migrate_scanned: Event, Pages, skip_if("is_zero");
        #[doc = "Counter: pages the compaction free scanner looked at (in JSON only when non-zero)."]
        COMPACTFREE_SCANNED compact_free_scanned: Event, Pages, skip_if("is_zero");
        #[doc = "Counter: pages isolated by either compaction scanner (in JSON only when non-zero)."]
        COMPACTISOLATED compact_isolated: Event, Pages, skip_if("is_zero");
        #[doc = "Counter: direct compaction runs that were not skipped (in JSON only when non-zero)."]
        COMPACTSTALL compact_stall: Event, Count, skip_if("is_zero");
        #[doc = "Counter: direct compaction runs after which the allocation still failed (in JSON only when non-zero)."]
        COMPACTFAIL compact_fail: Event, Count, skip_if("is_zero");
        #[doc = "Counter: direct compaction runs after which the allocation succeeded (in JSON only when non-zero)."]
        COMPACTSUCCESS compact_success: Event, Count, skip_if("is_zero");
        #[doc = "Counter: kcompactd runs for a requested order (`kcompactd_do_work`; in JSON only when non-zero)."]
        KCOMPACTD_WAKE compact_daemon_wake: Event, Count, skip_if("is_zero");
        #[doc = "Counter: pages kcompactd's migrate scanner looked at (in JSON only when non-zero)."]
        KCOMPACTD_MIGRATE_SCANNED compact_daemon_migrate_scanned: Event, Pages, skip_if("is_zero");
        #[doc = "Counter: pages kcompactd's free scanner looked at (in JSON only when non-zero)."]
        KCOMPACTD_FREE_SCANNED compact_daemon_free_scanned: Event, Pages, skip_if("is_zero");
        #[doc = "Counter: PMD-size THP faults that allocated a huge page (`crate::huge_memory`)."]
        THP_FAULT_ALLOC thp_fault_alloc: Event, Count, memcg(Stat, "thp_fault_alloc");
        #[doc = "Counter: PMD-size THP faults that fell back to smaller folios."]
        THP_FAULT_FALLBACK thp_fault_fallback: Event, Count;
        #[doc = "Counter: of those, the ones whose memcg charge failed."]
        THP_FAULT_FALLBACK_CHARGE thp_fault_fallback_charge: Event, Count;
        #[doc = "Counter: PMD-size folios allocated to collapse a range (khugepaged, MADV_COLLAPSE; `crate::khugepaged`; in JSON only when non-zero)."]
        THP_COLLAPSE_ALLOC thp_collapse_alloc: Event, Count,
            memcg(Stat, "thp_collapse_alloc"), skip_if("is_zero");
        #[doc = "Counter: collapses whose PMD-size allocation failed (in JSON only when non-zero)."]
        THP_COLLAPSE_ALLOC_FAILED thp_collapse_alloc_failed: Event, Count, skip_if("is_zero");
        #[doc = "Counter: PMD-size page-cache folios mapped by a PMD (`do_set_pmd`; in JSON only when non-zero)."]
        THP_FILE_MAPPED thp_file_mapped: Event, Count, skip_if("is_zero");
        #[doc = "Counter: PMD-size THPs split."]
        THP_SPLIT_PAGE thp_split_page: Event, Count;
        #[doc = "Counter: PMD-size THPs swapped out whole."]
        THP_SWPOUT thp_swpout: Event, Count;
        #[doc = "Counter: PMD-size THPs split because they could not be swapped out whole."]
        THP_SWPOUT_FALLBACK thp_swpout_fallback: Event, Count;
        #[doc = "Counter: PMD-size huge zero pages allocated (`get_huge_zero_page`; in JSON only when non-zero)."]
        THP_ZERO_PAGE_ALLOC thp_zero_page_alloc: Event, Count, skip_if("is_zero");
        #[doc = "Counter: PMD mappings split into PTEs (here: huge zero PMDs split by a write; in JSON only when non-zero)."]
        THP_SPLIT_PMD thp_split_pmd: Event, Count, skip_if("is_zero");
        #[doc = "Counter: large folios queued for a deferred split (`deferred_split_folio`; in JSON only when non-zero)."]
        THP_DEFERRED_SPLIT_PAGE thp_deferred_split_page: Event, Count, skip_if("is_zero");
        #[doc = "Counter: PMD-size THPs queued whole that the deferred split shrinker split as underused (`thp_underused`, v6.12; in JSON only when non-zero)."]
        THP_UNDERUSED_SPLIT_PAGE thp_underused_split_page: Event, Count, skip_if("is_zero");
        #[doc = "Counter: khugepaged scans stopped by more none or zero-page PTEs than `max_ptes_none` (in JSON only when non-zero)."]
        THP_SCAN_EXCEED_NONE_PTE thp_scan_exceed_none_pte: Event, Count, skip_if("is_zero");
        #[doc = "Counter: khugepaged scans stopped by more swap PTEs than `max_ptes_swap` (in JSON only when non-zero)."]
        THP_SCAN_EXCEED_SWAP_PTE thp_scan_exceed_swap_pte: Event, Count, skip_if("is_zero");
        #[doc = "Counter: swap-ins of zero-filled slots, filled without IO (v6.12+ zeromap; "]
        #[doc = "`machine.swap_zero_pages = \"zeromap\"`, absent from the JSON while 0)."]
        SWPIN_ZERO swpin_zero: Event, Pages, memcg(Stat, "swpin_zero"), skip_if("is_zero");
        #[doc = "Counter: zero-filled pages swapped out without IO (v6.12+ zeromap; "]
        #[doc = "`machine.swap_zero_pages = \"zeromap\"`, absent from the JSON while 0)."]
        SWPOUT_ZERO swpout_zero: Event, Pages, memcg(Stat, "swpout_zero"), skip_if("is_zero");
    }
    memcg_only {
        #[doc = "`memory.events` low: times the group was reclaimed below its effective `memory.low` (in the retry pass that ignores it)."]
        MEMCG_LOW low: Event, Count, memcg(Events, "low");
        #[doc = "`memory.events` high: times reclaim ran because the group was over `memory.high`."]
        MEMCG_HIGH high: Event, Count, memcg(Events, "high");
        #[doc = "Nanoseconds tasks were throttled for being over `memory.high` (`mem_cgroup_handle_over_high`)."]
        MEMCG_HIGH_THROTTLE_NS high_throttle_ns: Event, Ns, memcg(Sim, "high_throttle_ns");
        #[doc = "`memory.events` oom: times the group hit its limit and invoked the OOM killer."]
        MEMCG_OOM oom: Event, Count, memcg(Events, "oom");
        #[doc = "`memory.swap.events` max: swap-outs refused because the group or an ancestor was at its `memory.swap.max`."]
        MEMCG_SWAP_MAX swap_max: Event, Count, memcg(SwapEvents, "max");
        #[doc = "`memory.swap.events` fail: swap-outs that failed for want of a slot (the device full, or `memory.swap.max`)."]
        MEMCG_SWAP_FAIL swap_fail: Event, Count, memcg(SwapEvents, "fail");
        #[doc = "`memory.swap.events` high: returns to user space that found the group over its `memory.swap.high`."]
        MEMCG_SWAP_HIGH swap_high: Event, Count, memcg(SwapEvents, "high");
    }
    memcg_fields {
        pgfault, pgmajfault, pgrefill, pgscan_kswapd, pgscan_direct, pgsteal_kswapd,
        pgsteal_direct, pgactivate, pgdeactivate, workingset_refault_anon,
        workingset_refault_file, workingset_activate_anon, workingset_activate_file,
        workingset_restore_anon, workingset_restore_file,
        // JSON: beside `MemcgReport`'s `low`/`high` limits, as `events_max` is.
        low as "events_low", high as "events_high", high_throttle_ns, oom,
        oom_kill, swap_max, swap_fail, swap_high, thp_fault_alloc,
        swpin_zero skip_if "is_zero", swpout_zero skip_if "is_zero",
        thp_collapse_alloc skip_if "is_zero",
        pgscan_khugepaged skip_if "is_zero", pgsteal_khugepaged skip_if "is_zero",
    }
}

impl MemcgFile {
    /// The file's lines in the kernel's print order (empty for [`MemcgFile::Sim`]).
    pub const fn kernel_order(self) -> &'static [&'static str] {
        match self {
            MemcgFile::Stat => MEMORY_STAT_ORDER_V6_12,
            MemcgFile::Events => MEMORY_EVENTS_ORDER_V6_12,
            MemcgFile::SwapEvents => MEMORY_SWAP_EVENTS_ORDER_V6_12,
            MemcgFile::Sim => &[],
        }
    }
}

/// The declared group counter that is line `name` of `file`, if any.
pub(crate) fn memcg_item(file: MemcgFile, name: &str) -> Option<VmItem> {
    VmItem::ALL
        .iter()
        .copied()
        .find(|i| i.memcg().is_some_and(|l| l.file == file && l.name == name))
}

/// The group counters that are lines of `file`, in the order the kernel
/// prints them ([`MemcgFile::kernel_order`]; [`MemcgFile::Sim`]: declaration order).
#[cfg_attr(not(test), allow(dead_code))] // for DAMOS/mTHP files and the report
pub(crate) fn memcg_file_items(file: MemcgFile) -> Vec<VmItem> {
    let order = file.kernel_order();
    let rank = |i: &VmItem| {
        let name = i.memcg().map_or("", |l| l.name);
        order.iter().position(|n| *n == name)
    };
    let mut v: Vec<VmItem> = VmItem::ALL
        .iter()
        .copied()
        .filter(|i| i.memcg().is_some_and(|l| l.file == file))
        .collect();
    v.sort_by_key(rank);
    v
}

/// The group counters that are `memory.stat` lines, in the order the kernel
/// prints them ([`MEMORY_STAT_ORDER_V6_12`]).
#[cfg_attr(not(test), allow(dead_code))] // for DAMOS/mTHP files and the report
pub(crate) fn memory_stat_items() -> Vec<VmItem> {
    memcg_file_items(MemcgFile::Stat)
}

impl crate::memcg::MemcgReport {
    /// `memory.stat` of cgroup v2 as `memory_stat_format` prints it (v6.12):
    /// the lines the simulator produces, LRU sizes and the `pgscan`/`pgsteal`
    /// sums from the report, the counters from the registry.
    pub fn memory_stat(&self) -> Vec<(&'static str, u64)> {
        let mut sums = vec![
            ("anon", self.anon),
            ("file", self.file),
            ("inactive_anon", self.inactive_anon),
            ("active_anon", self.active_anon),
            ("inactive_file", self.inactive_file),
            ("active_file", self.active_file),
            ("unevictable", self.unevictable),
            ("pgscan", self.pgscan),
            ("pgsteal", self.pgsteal),
        ];
        // Kernel memory (`crate::kmem`, bytes as the kernel prints them),
        // only under `machine.kmem_accounting`.
        if let Some(k) = &self.kmem {
            sums.extend(k.memory_stat());
        }
        let mut lines = self.file_lines(MemcgFile::Stat, &sums);
        // The kernel prints the khugepaged lines always (6.3+); here only
        // when khugepaged reclaimed in the group, so that the series columns
        // of runs without it stay as they were.
        lines.retain(|&(name, v)| {
            v != 0 || !matches!(name, "pgscan_khugepaged" | "pgsteal_khugepaged")
        });
        lines
    }

    /// `memory.events` as `memory_events_show` prints it (v6.12), the lines
    /// the simulator produces.
    pub fn memory_events(&self) -> Vec<(&'static str, u64)> {
        self.file_lines(MemcgFile::Events, &[("max", self.events_max)])
    }

    /// `memory.swap.events` as `swap_events_show` prints it (v6.12).
    pub fn memory_swap_events(&self) -> Vec<(&'static str, u64)> {
        self.file_lines(MemcgFile::SwapEvents, &[])
    }

    /// Lines of `file` in the kernel's order: from `extra`, else the
    /// registry's counter of that line; lines the simulator lacks are left out.
    fn file_lines(
        &self,
        file: MemcgFile,
        extra: &[(&'static str, u64)],
    ) -> Vec<(&'static str, u64)> {
        file.kernel_order()
            .iter()
            .filter_map(|&name| {
                let v = extra.iter().find(|e| e.0 == name).map(|e| e.1);
                v.or_else(|| memcg_item(file, name).and_then(|i| self.events.get(i)))
                    .map(|v| (name, v))
            })
            .collect()
    }
}

impl Sim {
    /// `count_vm_events` (include/linux/vmstat.h, v6.12): adds `n` to the
    /// node's counter `item` only. For counters the kernel keeps on the node
    /// alone, and for global-reclaim counts a group counts differently.
    #[inline(always)]
    pub(crate) fn count_vm_events(&mut self, item: VmItem, n: u64) {
        self.vm.count(item, n);
    }

    /// `count_memcg_events` / `memcg_memory_event` (mm/memcontrol.c, v6.12):
    /// adds `n` to group `memcg`'s own counter `item` only.
    #[inline(always)]
    pub(crate) fn count_memcg_events(&mut self, memcg: MemcgId, item: VmItem, n: u64) {
        self.memcgs[memcg as usize].stat.count(item, n);
    }

    /// The kernel's pair `count_vm_events` + `count_memcg_events` (or
    /// `__count_memcg_events` under the lruvec): adds `n` to counter `item`
    /// of the node and of group `memcg`.
    #[inline(always)]
    pub(crate) fn count_events(&mut self, memcg: MemcgId, item: VmItem, n: u64) {
        self.count_vm_events(item, n);
        self.count_memcg_events(memcg, item, n);
    }

    /// `reclaimer_offset()` (mm/vmscan.c, v6.3 to v6.17): which of a
    /// reclaim counter's three items the reclaimer `who` counts: 0 for
    /// kswapd, 2 for khugepaged (`current_is_khugepaged()`, whether its
    /// global direct reclaim or the limit reclaim of its charge), else 1
    /// (direct, and a task's limit reclaim). v6.18 adds `sc->proactive`
    /// (`pgscan_proactive`, for `memory.reclaim`), not modelled.
    #[inline]
    pub(crate) fn reclaimer_offset(&self, who: Reclaimer) -> usize {
        if who == Reclaimer::Kswapd {
            0
        } else if self.thp.khuge.current {
            2
        } else {
            1
        }
    }

    /// The reclaim counters of mm/vmscan.c (v6.12 `shrink_inactive_list`,
    /// `evict_folios`): `item = PGSCAN_KSWAPD + reclaimer_offset()`, counted
    /// on the node unless `cgroup_reclaim(sc)`, and always in group `memcg`
    /// (which counts its limit reclaim as direct, or as khugepaged's).
    /// `items` are the three items in the kernel's order ([`PGSCAN`] or
    /// [`PGSTEAL`]).
    #[inline]
    pub(crate) fn count_reclaim_events(
        &mut self,
        memcg: MemcgId,
        who: Reclaimer,
        items: [VmItem; 3],
        n: u64,
    ) {
        let item = items[self.reclaimer_offset(who)];
        if who != Reclaimer::Memcg {
            self.count_vm_events(item, n);
        }
        self.count_memcg_events(memcg, item, n);
    }
}

/// `PGSCAN_KSWAPD`, `PGSCAN_DIRECT`, `PGSCAN_KHUGEPAGED`: consecutive in
/// `enum vm_event_item`, indexed by [`Sim::reclaimer_offset`].
pub(crate) const PGSCAN: [VmItem; 3] = [
    item::PGSCAN_KSWAPD,
    item::PGSCAN_DIRECT,
    item::PGSCAN_KHUGEPAGED,
];
/// `PGSTEAL_KSWAPD`, `PGSTEAL_DIRECT`, `PGSTEAL_KHUGEPAGED`.
pub(crate) const PGSTEAL: [VmItem; 3] = [
    item::PGSTEAL_KSWAPD,
    item::PGSTEAL_DIRECT,
    item::PGSTEAL_KHUGEPAGED,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// /proc/vmstat names of v6.12 (mm/vmstat.c `vmstat_text[]`) that the
    /// registry may use.
    const KERNEL_VMSTAT_V6_12: &[&str] = &[
        "nr_free_pages",
        "nr_inactive_anon",
        "nr_active_anon",
        "nr_inactive_file",
        "nr_active_file",
        "nr_unevictable",
        "nr_mlock",
        "nr_anon_pages",
        "nr_mapped",
        "nr_file_pages",
        "nr_dirty",
        "nr_writeback",
        "nr_shmem",
        "nr_swapcached",
        "nr_vmscan_write",
        "nr_vmscan_immediate_reclaim",
        "nr_dirtied",
        "nr_written",
        "workingset_nodes",
        "workingset_refault_anon",
        "workingset_refault_file",
        "workingset_activate_anon",
        "workingset_activate_file",
        "workingset_restore_anon",
        "workingset_restore_file",
        "workingset_nodereclaim",
        "pgpgin",
        "pgpgout",
        "pswpin",
        "pswpout",
        "pgalloc_normal",
        "allocstall_normal",
        "pgfree",
        "pgactivate",
        "pgdeactivate",
        "pglazyfree",
        "pgfault",
        "pgmajfault",
        "pglazyfreed",
        "pgrefill",
        "pgreuse",
        "pgsteal_kswapd",
        "pgsteal_direct",
        "pgsteal_khugepaged",
        "pgscan_kswapd",
        "pgscan_direct",
        "pgscan_khugepaged",
        "pgscan_direct_throttle",
        "pgscan_anon",
        "pgscan_file",
        "pgsteal_anon",
        "pgsteal_file",
        "pginodesteal",
        "slabs_scanned",
        "kswapd_inodesteal",
        "kswapd_low_wmark_hit_quickly",
        "kswapd_high_wmark_hit_quickly",
        "pageoutrun",
        "pgrotated",
        "drop_pagecache",
        "drop_slab",
        "oom_kill",
        "pgmigrate_success",
        "pgmigrate_fail",
        "compact_migrate_scanned",
        "compact_free_scanned",
        "compact_isolated",
        "compact_stall",
        "compact_fail",
        "compact_success",
        "compact_daemon_wake",
        "compact_daemon_migrate_scanned",
        "compact_daemon_free_scanned",
        "thp_fault_alloc",
        "thp_fault_fallback",
        "thp_fault_fallback_charge",
        "thp_collapse_alloc",
        "thp_collapse_alloc_failed",
        "thp_file_mapped",
        "thp_split_page",
        "thp_swpout",
        "thp_swpout_fallback",
        "thp_zero_page_alloc",
        "thp_split_pmd",
        "thp_deferred_split_page",
        "thp_underused_split_page",
        "thp_scan_exceed_none_pte",
        "thp_scan_exceed_swap_pte",
        "swap_ra",
        "swap_ra_hit",
        "swpin_zero",
        "swpout_zero",
    ];

    #[test]
    fn registry_names_are_unique_and_the_kernels() {
        let mut seen = std::collections::HashSet::new();
        for &i in VmItem::ALL {
            assert!(seen.insert(i.name()), "{} declared twice", i.name());
            assert!(seen.insert(i.kernel_name()), "{} twice", i.kernel_name());
            assert!(!i.doc().is_empty(), "{} has no doc line", i.name());
            if i.in_vmstat() {
                assert!(
                    KERNEL_VMSTAT_V6_12.contains(&i.name()),
                    "{} is not a /proc/vmstat line of v6.12",
                    i.name()
                );
            } else {
                assert!(i.memcg().is_some(), "{} is counted nowhere", i.name());
            }
        }
        let vm = Vmstat::default();
        let names: Vec<_> = vm.pairs().iter().map(|p| p.0).collect();
        let declared: Vec<_> = VmItem::ALL
            .iter()
            .filter(|i| i.in_vmstat())
            .map(|i| i.name())
            .collect();
        assert_eq!(names, declared, "/proc/vmstat in declaration order");
    }

    #[test]
    fn per_group_counters_match_their_declaration() {
        let g = MemcgStat::default();
        for &i in VmItem::ALL {
            assert_eq!(g.get(i).is_some(), i.memcg().is_some(), "{}", i.name());
            assert_eq!(Vmstat::default().get(i).is_some(), i.in_vmstat());
            if let Some(l) = i.memcg() {
                if l.file == MemcgFile::Stat {
                    assert!(MEMORY_STAT_ORDER_V6_12.contains(&l.name), "{}", l.name);
                }
            }
        }
        let order: Vec<_> = memory_stat_items()
            .iter()
            .map(|i| i.memcg().unwrap().name)
            .collect();
        assert_eq!(
            order,
            [
                "workingset_refault_anon",
                "workingset_refault_file",
                "workingset_activate_anon",
                "workingset_activate_file",
                "workingset_restore_anon",
                "workingset_restore_file",
                "pgscan_kswapd",
                "pgscan_direct",
                "pgscan_khugepaged",
                "pgsteal_kswapd",
                "pgsteal_direct",
                "pgsteal_khugepaged",
                "pgfault",
                "pgmajfault",
                "pgrefill",
                "pgactivate",
                "pgdeactivate",
                "swpin_zero",
                "swpout_zero",
                "thp_fault_alloc",
                "thp_collapse_alloc",
            ],
            "memory.stat as memory_stat_format prints it"
        );
    }

    #[test]
    fn cgroup_files_print_in_the_kernels_order() {
        let mut r = crate::memcg::MemcgReport {
            current: 0,
            max: None,
            high: None,
            low: 0,
            min: 0,
            soft_limit: None,
            events_max: 7,
            swap_current: 0,
            swap_max_limit: None,
            swap_high_limit: None,
            anon: 1,
            file: 2,
            inactive_anon: 0,
            active_anon: 1,
            inactive_file: 2,
            active_file: 0,
            unevictable: 0,
            pgscan: 5,
            pgsteal: 4,
            events: MemcgStat::default(),
            kmem: None,
            psi: crate::psi::Psi::default().report(0),
        };
        r.events.count(item::MEMCG_LOW, 3);
        r.events.count(item::OOM_KILL, 1);
        r.events.count(item::MEMCG_SWAP_FAIL, 2);
        let names = |v: Vec<(&'static str, u64)>| v.iter().map(|l| l.0).collect::<Vec<_>>();
        let stat = r.memory_stat();
        assert_eq!(
            &stat[..3],
            &[("anon", 1), ("file", 2), ("inactive_anon", 0)]
        );
        let at = |n: &str| names(r.memory_stat()).iter().position(|x| *x == n).unwrap();
        assert!(at("unevictable") < at("workingset_refault_anon"));
        assert!(
            at("workingset_restore_file") < at("pgscan") && at("pgsteal") < at("pgscan_kswapd")
        );
        assert!(at("pgsteal_direct") < at("pgfault") && at("pgrefill") < at("pgdeactivate"));
        assert_eq!(
            stat.len(),
            9 + memory_stat_items().len() - 2,
            "khugepaged's lines only when non-zero"
        );
        assert_eq!(
            r.memory_events(),
            [
                ("low", 3),
                ("high", 0),
                ("max", 7),
                ("oom", 0),
                ("oom_kill", 1)
            ]
        );
        assert_eq!(
            r.memory_swap_events(),
            [("high", 0), ("max", 0), ("fail", 2)]
        );
    }

    #[test]
    fn counting_bumps_the_declared_fields() {
        let mut vm = Vmstat::default();
        *vm.slot_mut(item::PGFAULT).unwrap() += 3;
        assert_eq!(vm.pgfault, 3);
        assert!(vm.slot_mut(item::MEMCG_LOW).is_none());
        let mut g = MemcgStat::default();
        *g.slot_mut(item::MEMCG_SWAP_MAX).unwrap() += 1;
        assert_eq!((g.swap_max, g.get(item::MEMCG_SWAP_MAX)), (1, Some(1)));
        assert!(g.slot_mut(item::PSWPOUT).is_none());
    }
}
