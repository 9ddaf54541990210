//! The kernel's `compaction` tracepoints (include/trace/events/compaction.h,
//! v6.12), the events tools/validate/trace-compaction.events enables in the
//! guest: their fields, `TP_printk` formats, and the `Sim` helpers that emit
//! them (one `Sim::tp` test at each call site, all on compaction's slow paths).
//!
//! | event | emitted (kernel function, v6.12) |
//! |---|---|
//! | `mm_compaction_try_to_compact_pages` | `try_to_compact_pages`, once per direct compaction |
//! | `mm_compaction_suitable` | `compaction_suitable` when `compaction_suit_allocation_order`'s watermark check failed (`compact_zone`, `kcompactd_do_work`) |
//! | `mm_compaction_begin` / `_end` | `compact_zone`, after the scanners' start is chosen / at its end |
//! | `mm_compaction_finished` | `compact_finished`, each `compact_zone` iteration |
//! | `mm_compaction_migratepages` | `compact_zone`, after each `migrate_pages` |
//! | `mm_compaction_deferred` | `compaction_deferred` when it defers |
//! | `mm_compaction_defer_compaction` | `defer_compaction` |
//! | `mm_compaction_defer_reset` | `compaction_defer_reset` |
//! | `mm_compaction_wakeup_kcompactd` | `wakeup_kcompactd` when it wakes kcompactd |
//! | `mm_compaction_kcompactd_wake` | `kcompactd_do_work` |
//! | `mm_compaction_kcompactd_sleep` | `kcompactd`, each time it goes back to sleep |
//!
//! `try_to_compact_pages`' `gfp_mask` is the allocation's own mask
//! (`crate::gfp`, printed as v6.12's `show_gfp_flags`): an (m)THP fault's
//! `vma_thp_gfp_mask` for its `defrag` setting and advice, khugepaged's
//! `GFP_TRANSHUGE` (`GFP_TRANSHUGE_LIGHT` without `khugepaged/defrag`), a
//! large page-cache folio's mapping gfp with `__GFP_NORETRY|__GFP_NOWARN`.
//! `wakeup_kcompactd`'s `classzone_idx` is the waker's `highest_zoneidx`
//! (v6.12): an allocation's `gfp_zone` (`Movable` for every user
//! allocation) or kswapd's classzone (the highest of its wakers' since it
//! last read them: `Movable` after an allocation's wakeup, the boosted
//! zone's index after `rmqueue`'s boost wakeup alone);
//! `kcompactd_wake` prints `kcompactd_highest_zoneidx`, the lowest of the
//! wakers' capped at the node's top zone.
//!
//! Departures: the one node is `nid=0`; the zone is the one being compacted,
//! printed by its name (`DMA`, `DMA32` or `Normal`); `wakeup_kcompactd` is
//! printed whenever kcompactd is woken (the kernel skips a kcompactd that is
//! not asleep, `wq_has_sleeper`); `compaction_suitable` is traced only from
//! compaction's own paths, not from reclaim's `compaction_ready` /
//! `should_continue_reclaim` or `should_compact_retry`, which the kernel
//! traces too. The tasks: a direct compaction is the faulting task's (or
//! khugepaged's, `khugepaged` pid 82), kcompactd is `kcompactd0` (pid 81,
//! CPU 1), kswapd `kswapd0`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{TpEvent, TpScope};
use crate::sim::Sim;

/// The compaction events' names, in bit order (after the 16 earlier events).
pub(super) const NAMES: [&str; 12] = [
    "mm_compaction_try_to_compact_pages",
    "mm_compaction_suitable",
    "mm_compaction_begin",
    "mm_compaction_end",
    "mm_compaction_finished",
    "mm_compaction_migratepages",
    "mm_compaction_defer_compaction",
    "mm_compaction_deferred",
    "mm_compaction_defer_reset",
    "mm_compaction_wakeup_kcompactd",
    "mm_compaction_kcompactd_wake",
    "mm_compaction_kcompactd_sleep",
];

/// `enum compact_result` (v6.12 include/linux/compaction.h) as
/// `COMPACTION_STATUS` prints it, by value.
const STATUS: [&str; 9] = [
    "not_suitable_zone",
    "skipped",
    "deferred",
    "no_suitable_page",
    "continue",
    "complete",
    "partial_skipped",
    "contended",
    "success",
];

/// `ZONE_TYPE` (`enum zone_type` on x86-64) as the events print it.
const ZONE_TYPE: [&str; 4] = ["DMA", "DMA32", "Normal", "Movable"];

/// The zone index of a simulated zone name.
pub(crate) fn zone_idx(name: &str) -> u8 {
    ZONE_TYPE.iter().position(|z| *z == name).unwrap_or(2) as u8
}

/// `enum compact_result` values the events print.
pub(crate) mod status {
    /// `COMPACT_NOT_SUITABLE_ZONE`.
    pub(crate) const NOT_SUITABLE_ZONE: u8 = 0;
    /// `COMPACT_SKIPPED`.
    pub(crate) const SKIPPED: u8 = 1;
    /// `COMPACT_NO_SUITABLE_PAGE`.
    pub(crate) const NO_SUITABLE_PAGE: u8 = 3;
    /// `COMPACT_CONTINUE`.
    pub(crate) const CONTINUE: u8 = 4;
}

/// One compaction event's fields (`TP_STRUCT__entry`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "compaction_event", rename_all = "snake_case")]
pub enum CompactionEvent {
    /// `mm_compaction_try_to_compact_pages`.
    TryToCompactPages {
        /// `order`.
        order: u32,
        /// `gfp_mask` (the allocation's, `crate::gfp`).
        gfp_mask: crate::gfp::Gfp,
        /// `prio`: `enum compact_priority` (0 sync full, 1 sync light, 2 async).
        prio: u32,
    },
    /// `mm_compaction_suitable`.
    Suitable {
        /// `idx` (zone type).
        zone: u8,
        /// `order`.
        order: i32,
        /// `ret` (`enum compact_result`).
        ret: u8,
    },
    /// `mm_compaction_begin`.
    Begin {
        /// `zone_start`.
        zone_start: u64,
        /// `migrate_pfn`.
        migrate_pfn: u64,
        /// `free_pfn`.
        free_pfn: u64,
        /// `zone_end`.
        zone_end: u64,
        /// `sync`.
        sync: bool,
    },
    /// `mm_compaction_end`.
    End {
        /// `zone_start`.
        zone_start: u64,
        /// `migrate_pfn`.
        migrate_pfn: u64,
        /// `free_pfn`.
        free_pfn: u64,
        /// `zone_end`.
        zone_end: u64,
        /// `sync`.
        sync: bool,
        /// `status` (`enum compact_result`).
        status: u8,
    },
    /// `mm_compaction_finished`.
    Finished {
        /// `idx`.
        zone: u8,
        /// `order` (-1: a whole-zone run).
        order: i32,
        /// `ret`.
        ret: u8,
    },
    /// `mm_compaction_migratepages`.
    Migratepages {
        /// `nr_migrated`.
        nr_migrated: u64,
        /// `nr_failed`.
        nr_failed: u64,
    },
    /// `mm_compaction_defer_compaction`.
    DeferCompaction(DeferState),
    /// `mm_compaction_deferred`.
    Deferred(DeferState),
    /// `mm_compaction_defer_reset`.
    DeferReset(DeferState),
    /// `mm_compaction_wakeup_kcompactd`.
    WakeupKcompactd {
        /// `order`.
        order: u32,
        /// `highest_zoneidx`.
        zone: u8,
    },
    /// `mm_compaction_kcompactd_wake`.
    KcompactdWake {
        /// `order`.
        order: u32,
        /// `highest_zoneidx`.
        zone: u8,
    },
    /// `mm_compaction_kcompactd_sleep`.
    KcompactdSleep,
}

/// `mm_compaction_defer_template`'s fields: the zone's deferral after the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeferState {
    /// `idx`.
    pub zone: u8,
    /// `order`.
    pub order: i32,
    /// `considered` (`compact_considered`).
    pub considered: u32,
    /// `defer_shift` (printed as `limit=1 << defer_shift`).
    pub defer_shift: u32,
    /// `order_failed`.
    pub order_failed: i32,
}

impl CompactionEvent {
    /// Its index in [`NAMES`].
    pub(super) fn index(&self) -> u32 {
        match self {
            CompactionEvent::TryToCompactPages { .. } => 0,
            CompactionEvent::Suitable { .. } => 1,
            CompactionEvent::Begin { .. } => 2,
            CompactionEvent::End { .. } => 3,
            CompactionEvent::Finished { .. } => 4,
            CompactionEvent::Migratepages { .. } => 5,
            CompactionEvent::DeferCompaction(_) => 6,
            CompactionEvent::Deferred(_) => 7,
            CompactionEvent::DeferReset(_) => 8,
            CompactionEvent::WakeupKcompactd { .. } => 9,
            CompactionEvent::KcompactdWake { .. } => 10,
            CompactionEvent::KcompactdSleep => 11,
        }
    }
}

fn zone_name(idx: u8) -> &'static str {
    ZONE_TYPE[usize::from(idx).min(3)]
}

fn status_name(s: u8) -> &'static str {
    STATUS[usize::from(s).min(8)]
}

fn mode(sync: bool) -> &'static str {
    if sync {
        "sync"
    } else {
        "async"
    }
}

impl fmt::Display for CompactionEvent {
    /// The event's `TP_printk` output (`zone=%-8s`: the name padded to 8).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use CompactionEvent::*;
        match *self {
            TryToCompactPages {
                order,
                gfp_mask,
                prio,
            } => write!(
                f,
                "order={order} gfp_mask={} priority={prio}",
                crate::gfp::ShowGfp(gfp_mask)
            ),
            Suitable { zone, order, ret } | Finished { zone, order, ret } => write!(
                f,
                "node=0 zone={:<8} order={order} ret={}",
                zone_name(zone),
                status_name(ret)
            ),
            Begin {
                zone_start,
                migrate_pfn,
                free_pfn,
                zone_end,
                sync,
            } => write!(
                f,
                "zone_start={zone_start:#x} migrate_pfn={migrate_pfn:#x} free_pfn={free_pfn:#x} \
                 zone_end={zone_end:#x}, mode={}",
                mode(sync)
            ),
            End {
                zone_start,
                migrate_pfn,
                free_pfn,
                zone_end,
                sync,
                status,
            } => write!(
                f,
                "zone_start={zone_start:#x} migrate_pfn={migrate_pfn:#x} free_pfn={free_pfn:#x} \
                 zone_end={zone_end:#x}, mode={} status={}",
                mode(sync),
                status_name(status)
            ),
            Migratepages {
                nr_migrated,
                nr_failed,
            } => write!(f, "nr_migrated={nr_migrated} nr_failed={nr_failed}"),
            DeferCompaction(d) | Deferred(d) | DeferReset(d) => write!(
                f,
                "node=0 zone={:<8} order={} order_failed={} consider={} limit={}",
                zone_name(d.zone),
                d.order,
                d.order_failed,
                d.considered,
                1u64 << d.defer_shift
            ),
            WakeupKcompactd { order, zone } | KcompactdWake { order, zone } => write!(
                f,
                "nid=0 order={order} classzone_idx={:<8}",
                zone_name(zone)
            ),
            KcompactdSleep => write!(f, "nid=0"),
        }
    }
}

/// Which deferral event.
#[derive(Clone, Copy, Debug)]
pub(crate) enum DeferEvent {
    /// `mm_compaction_deferred`.
    Deferred,
    /// `mm_compaction_defer_compaction`.
    DeferCompaction,
    /// `mm_compaction_defer_reset`.
    DeferReset,
}

impl Sim {
    /// Emits compaction event `e` now, by the running task (node-wide).
    #[cold]
    #[inline(never)]
    pub(crate) fn trace_compaction(&mut self, e: CompactionEvent) {
        let t = self.now();
        self.trace_event(t, self.tp_task, TpScope::default(), TpEvent::Compaction(e));
    }

    /// The index of the zone being compacted.
    pub(crate) fn tp_compact_zone(&self) -> u8 {
        zone_idx(self.phys.zone.name)
    }

    /// A deferral event for `order` with the zone's state after the call.
    #[cold]
    pub(crate) fn trace_defer(&mut self, which: DeferEvent, order: u32) {
        let c = &self.compact;
        let d = DeferState {
            zone: zone_idx(self.phys.zone.name),
            order: order as i32,
            considered: c.considered,
            defer_shift: c.defer_shift,
            order_failed: c.order_failed as i32,
        };
        self.trace_compaction(match which {
            DeferEvent::Deferred => CompactionEvent::Deferred(d),
            DeferEvent::DeferCompaction => CompactionEvent::DeferCompaction(d),
            DeferEvent::DeferReset => CompactionEvent::DeferReset(d),
        });
    }
}
