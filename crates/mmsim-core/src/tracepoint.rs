//! The kernel's `vmscan`, `filemap`, `compaction` and `kmem` (extfrag) tracepoints
//! (include/trace/events/vmscan.h, filemap.h, compaction.h and kmem.h, v6.12; `mm_filemap_get_pages`/`mm_filemap_fault` since 6.11): what the
//! simulated kernel would emit, with the kernel's event names, field names and
//! `TP_printk` format strings, printed as `perf script` prints them with simulated
//! timestamps.
//!
//! Off by default (`machine.tracepoints` absent): every call site is one test of
//! `Sim::tp` (an `Option<Box<Tracer>>`) on a slow path — reclaim, page-cache insertion
//! and deletion, faults, the buffered-read path — and a `#[cold]` call when it is set;
//! nothing is emitted on the per-access hit path of mapped pages (the kernel emits no
//! tracepoint there either). A filter (group, file, page range, time window, event
//! names, a cap on the number of events) bounds what a long run keeps.
//!
//! Events and where they are emitted (the kernel function in brackets):
//!
//! | event | emitted |
//! |---|---|
//! | `vmscan:mm_vmscan_kswapd_wake` | kswapd starts a `balance_pgdat` run (`kswapd`) |
//! | `vmscan:mm_vmscan_kswapd_sleep` | kswapd goes to sleep (`kswapd_try_to_sleep`) |
//! | `vmscan:mm_vmscan_wakeup_kswapd` | an allocation wakes a sleeping kswapd (`wakeup_kswapd`, in the waker's context: see [`vmscan`]) |
//! | `vmscan:mm_vmscan_direct_reclaim_begin/end` | `try_to_free_pages` |
//! | `vmscan:mm_vmscan_memcg_reclaim_begin/end` | `try_to_free_mem_cgroup_pages` (limit reclaim and `memory.max`/`memory.high` writes) |
//! | `vmscan:mm_vmscan_lru_isolate` | `isolate_lru_folios` (classic LRU) and the end of `scan_folios` (MGLRU) |
//! | `vmscan:mm_vmscan_lru_shrink_inactive` | end of `shrink_inactive_list` (classic) and of `evict_folios` (MGLRU) |
//! | `vmscan:mm_vmscan_lru_shrink_active` | end of `shrink_active_list` |
//! | `vmscan:mm_vmscan_write_folio` | `pageout` starts writing a dirty folio |
//! | `filemap:mm_filemap_add_to_page_cache` | `__filemap_add_folio` |
//! | `filemap:mm_filemap_delete_from_page_cache` | `__filemap_remove_folio` (reclaim's `__remove_mapping`) |
//! | `filemap:mm_filemap_get_pages` | `filemap_get_pages`, once per buffered read |
//! | `filemap:mm_filemap_fault` | `filemap_fault` (a fault on a file mapping) |
//! | `compaction:mm_compaction_*` | the twelve events of [`compaction`] (its table: `try_to_compact_pages`, `compact_zone`, the deferral, kcompactd) |
//! | `kmem:mm_page_alloc_extfrag` | a fallback to another migrate type's free lists ([`kmem`]: `__rmqueue_fallback`, v6.15's `__rmqueue_claim`/`__rmqueue_steal`) |
//! | `kmem:mm_page_alloc` | the end of every page allocation, failed ones too ([`kmem_page`]: `__alloc_pages_noprof`) |
//! | `kmem:mm_page_free` | every freed block ([`kmem_page`]: `free_pages_prepare`) |
//! | `kmem:mm_page_pcpu_drain` | each block a per-CPU list returns to the buddy lists ([`kmem_page`]: `free_pcppages_bulk`) |
//!
//! Where the simulator has no value for a field, it prints what the kernel prints
//! for a machine without it: `nid=0`, `classzone=` the one zone (`ZONE_NORMAL`, 2),
//! `order=0`, `nr_skipped=0`; `mm_vmscan_lru_shrink_inactive`'s
//! `nr_congested`, `nr_immediate`, `nr_ref_keep` and `nr_unmap_fail` are 0 (the
//! simulator does not count them), `nr_dirty` is the dirty folios met
//! (`nr_unqueued_dirty`), `nr_writeback` 0. A file is `dev=8:1` with inode
//! `FileId + 1` (hex); the workload's tasks are `comm` = their name (the file's
//! opener for reads) with pid `1000 + task`, kswapd is `kswapd0` with pid 80 on CPU 1,
//! kcompactd `kcompactd0` (pid 81) and khugepaged `khugepaged` (pid 82) on
//! CPU 1 too, the workload on CPU 0. The kernel emits `mm_filemap_get_pages` once per folio batch
//! of a read (`filemap_get_pages`, up to 31 folios); the simulator emits it once per
//! read, for the read's whole range. Mainline has no `mm_vmscan_lru_gen_*` events:
//! MGLRU reuses `lru_isolate` (end of `scan_folios`, with `nr_requested` =
//! `MAX_LRU_BATCH`, the batch's scanned, skipped and isolated folios, and
//! `lru` = the type's inactive list) and `lru_shrink_inactive` (end of
//! `evict_folios`), since "mm: multi-gen LRU: reuse some legacy trace events"
//! (8c2214fc9a47, v6.7); the simulator emits both for either MGLRU version.
//!
//! `mm_vmscan_lru_isolate` has no `isolate_mode` field since "mm, vmscan: remove
//! ISOLATE_UNMAPPED" (3dfbb555c98a, v6.7): v6.12's `TP_printk` starts at
//! `classzone=` (the host's 6.18 format file agrees).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;
use crate::sim::Sim;

pub mod compaction;
pub mod kmem;
pub mod kmem_page;
pub mod vmscan;
pub use compaction::CompactionEvent;
pub use kmem::ExtfragEvent;

/// What `--tracepoints` asks for (`machine.tracepoints`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TracepointConfig {
    /// Event patterns, `SYSTEM:EVENT` with `*` for a whole system (`vmscan:*`,
    /// `filemap:mm_filemap_add_to_page_cache`) or `*` for every event.
    pub events: Vec<String>,
    /// Only events of this group (its path): reclaim of its lruvec or aimed at it,
    /// page-cache events of its pages. Node-wide events (kswapd wake/sleep, direct
    /// reclaim begin/end) pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Only filemap events of this file (its name in the scenario).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Only filemap events touching page indices `[first, last]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<[u64; 2]>,
    /// Only events at or after this time, simulated ns.
    #[serde(default)]
    pub from_ns: u64,
    /// Only events before this time, simulated ns (None: to the end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_ns: Option<u64>,
    /// Most events kept (later ones are counted in `tracepoints_dropped`);
    /// default 1,000,000.
    #[serde(default = "default_max")]
    pub max_events: u64,
}

fn default_max() -> u64 {
    1_000_000
}

/// Every event, `(system, name)`, in bit order.
pub const EVENTS: [(&str, &str); 33] = [
    ("vmscan", "mm_vmscan_kswapd_wake"),
    ("vmscan", "mm_vmscan_kswapd_sleep"),
    ("vmscan", "mm_vmscan_direct_reclaim_begin"),
    ("vmscan", "mm_vmscan_direct_reclaim_end"),
    ("vmscan", "mm_vmscan_memcg_reclaim_begin"),
    ("vmscan", "mm_vmscan_memcg_reclaim_end"),
    ("vmscan", "mm_vmscan_lru_isolate"),
    ("vmscan", "mm_vmscan_lru_shrink_inactive"),
    ("vmscan", "mm_vmscan_lru_shrink_active"),
    ("vmscan", "mm_vmscan_write_folio"),
    ("filemap", "mm_filemap_add_to_page_cache"),
    ("filemap", "mm_filemap_delete_from_page_cache"),
    ("filemap", "mm_filemap_get_pages"),
    ("filemap", "mm_filemap_fault"),
    ("vmscan", "mm_vmscan_memcg_softlimit_reclaim_begin"),
    ("vmscan", "mm_vmscan_memcg_softlimit_reclaim_end"),
    ("compaction", compaction::NAMES[0]),
    ("compaction", compaction::NAMES[1]),
    ("compaction", compaction::NAMES[2]),
    ("compaction", compaction::NAMES[3]),
    ("compaction", compaction::NAMES[4]),
    ("compaction", compaction::NAMES[5]),
    ("compaction", compaction::NAMES[6]),
    ("compaction", compaction::NAMES[7]),
    ("compaction", compaction::NAMES[8]),
    ("compaction", compaction::NAMES[9]),
    ("compaction", compaction::NAMES[10]),
    ("compaction", compaction::NAMES[11]),
    ("kmem", kmem::NAMES[0]),
    ("vmscan", vmscan::NAMES[0]),
    ("kmem", kmem_page::NAMES[0]),
    ("kmem", kmem_page::NAMES[1]),
    ("kmem", kmem_page::NAMES[2]),
];

impl TracepointConfig {
    /// The events the patterns select, one bit per [`EVENTS`] entry; an error names
    /// a pattern that selects nothing.
    pub fn mask(&self) -> Result<u64, ConfigError> {
        let field = "machine.tracepoints.events";
        if self.events.is_empty() {
            return Err(ConfigError::new(field, "no event named (e.g. `vmscan:*`)"));
        }
        let mut mask = 0u64;
        for p in &self.events {
            let (sys, name) = p.split_once(':').unwrap_or(("*", p.as_str()));
            let mut any = false;
            for (i, (s, n)) in EVENTS.iter().enumerate() {
                let sys_ok = sys == "*" || sys == *s;
                if sys_ok && (name == "*" || name == *n) {
                    mask |= 1u64 << i;
                    any = true;
                }
            }
            if !any {
                return Err(ConfigError::new(
                    field,
                    format!(
                        "`{p}` names no tracepoint mmsim emits (vmscan:*, filemap:*, compaction:*, kmem:*, or one of \
                         {})",
                        EVENTS
                            .iter()
                            .map(|(s, n)| format!("{s}:{n}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
        Ok(mask)
    }

    /// Checks the patterns, the page range, the time window and the cap.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.mask()?;
        if let Some([a, b]) = self.pages {
            if a > b {
                return Err(ConfigError::new(
                    "machine.tracepoints.pages",
                    format!("[{a}, {b}]: the first page is after the last"),
                ));
            }
        }
        if self.to_ns.is_some_and(|t| t <= self.from_ns) {
            return Err(ConfigError::new(
                "machine.tracepoints.to_ns",
                "the window ends before it begins",
            ));
        }
        if self.max_events == 0 {
            return Err(ConfigError::new(
                "machine.tracepoints.max_events",
                "0 keeps nothing; at least 1",
            ));
        }
        Ok(())
    }
}

/// One event's fields, named as in the kernel's `TP_STRUCT__entry`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TpEvent {
    /// `mm_vmscan_kswapd_wake`.
    KswapdWake {
        /// `order`.
        order: u32,
    },
    /// `mm_vmscan_kswapd_sleep`.
    KswapdSleep,
    /// `mm_vmscan_direct_reclaim_begin`.
    DirectReclaimBegin {
        /// `order`: of the allocation that entered reclaim.
        order: u32,
        /// `gfp_flags`: its mask (`crate::gfp`), printed by `show_gfp_flags`.
        gfp_flags: crate::gfp::Gfp,
    },
    /// `mm_vmscan_direct_reclaim_end`.
    DirectReclaimEnd {
        /// `nr_reclaimed`.
        nr_reclaimed: u64,
    },
    /// `mm_vmscan_memcg_reclaim_begin` (order 0 always).
    MemcgReclaimBegin {
        /// `gfp_flags`: `crate::gfp::memcg_reclaim_mask` of the charge's mask.
        gfp_flags: crate::gfp::Gfp,
    },
    /// `mm_vmscan_memcg_reclaim_end`.
    MemcgReclaimEnd {
        /// `nr_reclaimed`.
        nr_reclaimed: u64,
    },
    /// `mm_vmscan_memcg_softlimit_reclaim_begin`: one
    /// `mem_cgroup_shrink_node()` of v1 soft-limit reclaim (mm/vmscan.c).
    MemcgSoftlimitReclaimBegin,
    /// `mm_vmscan_memcg_softlimit_reclaim_end`.
    MemcgSoftlimitReclaimEnd {
        /// `nr_reclaimed`.
        nr_reclaimed: u64,
    },
    /// `mm_vmscan_lru_isolate`.
    LruIsolate {
        /// `nr_requested`.
        nr_requested: u64,
        /// `nr_scanned`.
        nr_scanned: u64,
        /// `nr_taken`.
        nr_taken: u64,
        /// `lru`: 0 inactive_anon, 1 active_anon, 2 inactive_file, 3 active_file.
        lru: u8,
    },
    /// `mm_vmscan_lru_shrink_inactive`.
    LruShrinkInactive {
        /// `nr_scanned`.
        nr_scanned: u64,
        /// `nr_reclaimed`.
        nr_reclaimed: u64,
        /// `nr_dirty`.
        nr_dirty: u64,
        /// `nr_activate0`, `nr_activate1` (anon, file).
        nr_activate: [u64; 2],
        /// `priority`.
        priority: i32,
        /// File (`RECLAIM_WB_FILE`) or anon.
        file: bool,
    },
    /// `mm_vmscan_lru_shrink_active`.
    LruShrinkActive {
        /// `nr_taken`.
        nr_taken: u64,
        /// `nr_active`: folios kept active.
        nr_active: u64,
        /// `nr_deactivated`.
        nr_deactivated: u64,
        /// `nr_referenced`.
        nr_referenced: u64,
        /// `priority`.
        priority: i32,
        /// File or anon.
        file: bool,
    },
    /// `mm_vmscan_write_folio`.
    WriteFolio {
        /// `pfn`.
        pfn: u64,
        /// File or anon.
        file: bool,
    },
    /// `mm_filemap_add_to_page_cache`.
    FilemapAdd {
        /// `i_ino`.
        ino: u64,
        /// `pfn`.
        pfn: u64,
        /// `index` (printed as the byte offset `ofs`).
        index: u64,
        /// `order`.
        order: u32,
    },
    /// `mm_filemap_delete_from_page_cache`.
    FilemapDelete {
        /// `i_ino`.
        ino: u64,
        /// `pfn`.
        pfn: u64,
        /// `index`.
        index: u64,
        /// `order`.
        order: u32,
    },
    /// `mm_filemap_get_pages`.
    GetPages {
        /// `i_ino`.
        ino: u64,
        /// `index`.
        index: u64,
        /// `last_index` (inclusive, as 6.12 passes it).
        last_index: u64,
    },
    /// `mm_filemap_fault`.
    Fault {
        /// `i_ino`.
        ino: u64,
        /// `index`.
        index: u64,
    },
    /// A `compaction:` event ([`compaction`]).
    Compaction(CompactionEvent),
    /// `kmem:mm_page_alloc_extfrag` ([`kmem`]).
    Extfrag(ExtfragEvent),
    /// `mm_vmscan_wakeup_kswapd` ([`vmscan`]).
    WakeupKswapd {
        /// `zid`: the waker's `highest_zoneidx` (recorded, not printed).
        zid: u8,
        /// `order`: the waker's order (0 for rmqueue's boost wakeup).
        order: u32,
        /// `gfp_flags`: the waker's mask (0, printed `none`, for rmqueue's
        /// boost wakeup), printed by `show_gfp_flags`.
        gfp_flags: crate::gfp::Gfp,
    },
    /// `kmem:mm_page_alloc` ([`kmem_page`]).
    PageAlloc {
        /// `pfn`: the block's first page; None for a failed allocation
        /// (the kernel's `-1UL`).
        pfn: Option<u64>,
        /// `order`.
        order: u8,
        /// `migratetype`: `gfp_migratetype` of the mask.
        migratetype: u8,
        /// `gfp_flags`, printed by `show_gfp_flags`.
        gfp_flags: crate::gfp::Gfp,
    },
    /// `kmem:mm_page_free` ([`kmem_page`]).
    PageFree {
        /// `pfn`.
        pfn: u64,
        /// `order`.
        order: u8,
    },
    /// `kmem:mm_page_pcpu_drain` ([`kmem_page`]).
    PcpuDrain {
        /// `pfn`.
        pfn: u64,
        /// `order`.
        order: u8,
        /// `migratetype`: the block's pageblock type.
        migratetype: u8,
    },
}

/// The `dev` of every simulated file: 8:1.
const DEV: (u32, u32) = (8, 1);
/// `ZONE_NORMAL`, the zone every simulated page is in.
const CLASSZONE: u32 = 2;

impl TpEvent {
    /// Its bit in the event mask (the index in [`EVENTS`]).
    pub fn bit(&self) -> u64 {
        1u64 << match self {
            TpEvent::KswapdWake { .. } => 0,
            TpEvent::KswapdSleep => 1,
            TpEvent::DirectReclaimBegin { .. } => 2,
            TpEvent::DirectReclaimEnd { .. } => 3,
            TpEvent::MemcgReclaimBegin { .. } => 4,
            TpEvent::MemcgReclaimEnd { .. } => 5,
            TpEvent::LruIsolate { .. } => 6,
            TpEvent::LruShrinkInactive { .. } => 7,
            TpEvent::LruShrinkActive { .. } => 8,
            TpEvent::WriteFolio { .. } => 9,
            TpEvent::FilemapAdd { .. } => 10,
            TpEvent::FilemapDelete { .. } => 11,
            TpEvent::GetPages { .. } => 12,
            TpEvent::Fault { .. } => 13,
            TpEvent::MemcgSoftlimitReclaimBegin => 14,
            TpEvent::MemcgSoftlimitReclaimEnd { .. } => 15,
            TpEvent::Compaction(ref e) => 16 + e.index(),
            TpEvent::Extfrag(_) => 28,
            TpEvent::WakeupKswapd { .. } => 29,
            TpEvent::PageAlloc { .. } => 30,
            TpEvent::PageFree { .. } => 31,
            TpEvent::PcpuDrain { .. } => 32,
        }
    }

    /// `system:name`.
    pub fn name(&self) -> String {
        let (s, n) = EVENTS[self.bit().trailing_zeros() as usize];
        format!("{s}:{n}")
    }
}

/// `show_reclaim_flags(trace_reclaim_flags(file))`.
fn reclaim_flags(file: bool) -> &'static str {
    if file {
        "RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"
    } else {
        "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC"
    }
}

/// `__print_symbolic(lru, LRU_NAMES)`.
const LRU_NAMES: [&str; 4] = [
    "inactive_anon",
    "active_anon",
    "inactive_file",
    "active_file",
];

impl fmt::Display for TpEvent {
    /// The event's `TP_printk` output.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (ma, mi) = DEV;
        match *self {
            TpEvent::KswapdWake { order } => write!(f, "nid=0 order={order}"),
            TpEvent::KswapdSleep => write!(f, "nid=0"),
            TpEvent::DirectReclaimBegin { order, gfp_flags } => vmscan::begin(f, order, gfp_flags),
            TpEvent::MemcgReclaimBegin { gfp_flags } => vmscan::begin(f, 0, gfp_flags),
            TpEvent::MemcgSoftlimitReclaimBegin => vmscan::begin(f, 0, vmscan::SOFTLIMIT_GFP),
            TpEvent::DirectReclaimEnd { nr_reclaimed }
            | TpEvent::MemcgReclaimEnd { nr_reclaimed }
            | TpEvent::MemcgSoftlimitReclaimEnd { nr_reclaimed } => {
                write!(f, "nr_reclaimed={nr_reclaimed}")
            }
            TpEvent::LruIsolate {
                nr_requested,
                nr_scanned,
                nr_taken,
                lru,
            } => write!(
                f,
                "classzone={CLASSZONE} order=0 nr_requested={nr_requested} \
                 nr_scanned={nr_scanned} nr_skipped=0 nr_taken={nr_taken} lru={}",
                LRU_NAMES[lru as usize & 3]
            ),
            TpEvent::LruShrinkInactive {
                nr_scanned,
                nr_reclaimed,
                nr_dirty,
                nr_activate,
                priority,
                file,
            } => write!(
                f,
                "nid=0 nr_scanned={nr_scanned} nr_reclaimed={nr_reclaimed} nr_dirty={nr_dirty} \
                 nr_writeback=0 nr_congested=0 nr_immediate=0 nr_activate_anon={} \
                 nr_activate_file={} nr_ref_keep=0 nr_unmap_fail=0 priority={priority} flags={}",
                nr_activate[0],
                nr_activate[1],
                reclaim_flags(file)
            ),
            TpEvent::LruShrinkActive {
                nr_taken,
                nr_active,
                nr_deactivated,
                nr_referenced,
                priority,
                file,
            } => write!(
                f,
                "nid=0 nr_taken={nr_taken} nr_active={nr_active} nr_deactivated={nr_deactivated} \
                 nr_referenced={nr_referenced} priority={priority} flags={}",
                reclaim_flags(file)
            ),
            TpEvent::WriteFolio { pfn, file } => write!(
                f,
                "page={:#018x} pfn={pfn:#x} flags={}",
                0xffff_ea00_0000_0000u64 + pfn * 64,
                reclaim_flags(file)
            ),
            TpEvent::FilemapAdd {
                ino,
                pfn,
                index,
                order,
            }
            | TpEvent::FilemapDelete {
                ino,
                pfn,
                index,
                order,
            } => write!(
                f,
                "dev {ma}:{mi} ino {ino:x} pfn={pfn:#x} ofs={} order={order}",
                index << 12
            ),
            TpEvent::GetPages {
                ino,
                index,
                last_index,
            } => write!(
                f,
                "dev={ma}:{mi} ino={ino:x} ofs={}-{}",
                index << 12,
                ((last_index + 1) << 12) - 1
            ),
            TpEvent::Fault { ino, index } => {
                write!(f, "dev={ma}:{mi} ino={ino:x} ofs={}", index << 12)
            }
            TpEvent::Compaction(ref e) => e.fmt(f),
            TpEvent::Extfrag(ref e) => e.fmt(f),
            TpEvent::WakeupKswapd {
                order, gfp_flags, ..
            } => vmscan::wakeup_kswapd(f, order, gfp_flags),
            TpEvent::PageAlloc {
                pfn,
                order,
                migratetype,
                gfp_flags,
            } => kmem_page::alloc(f, pfn, order, migratetype, gfp_flags),
            TpEvent::PageFree { pfn, order } => kmem_page::free(f, pfn, order),
            TpEvent::PcpuDrain {
                pfn,
                order,
                migratetype,
            } => kmem_page::drain(f, pfn, order, migratetype),
        }
    }
}

/// Who emitted an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TpTask {
    /// A workload task (by id).
    Task(u32),
    /// kswapd0.
    Kswapd,
    /// kcompactd0.
    Kcompactd,
    /// khugepaged (pid 82, CPU 1): its collapses' allocations, direct
    /// reclaim and compactions (`crate::khugepaged`).
    Khugepaged,
}

/// One emitted event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// When, simulated ns.
    pub t_ns: u64,
    /// Who.
    pub task: TpTask,
    /// The event and its fields.
    #[serde(flatten)]
    pub event: TpEvent,
}

impl TraceRecord {
    /// The line `perf script` prints for it: `COMM PID [CPU] SECS.USECS: SYS:EVENT:
    /// FIELDS`; `names` gives each workload task's name.
    pub fn perf_script_line(&self, names: &[String]) -> String {
        let (comm, pid, cpu) = match self.task {
            TpTask::Kswapd => ("kswapd0", 80, 1),
            TpTask::Kcompactd => ("kcompactd0", 81, 1),
            TpTask::Khugepaged => ("khugepaged", 82, 1),
            TpTask::Task(t) => (
                names.get(t as usize).map_or("mmsim", String::as_str),
                1000 + t,
                0,
            ),
        };
        format!(
            "{comm:>16} {pid:>7} [{cpu:03}] {:>5}.{:06}: {}: {}",
            self.t_ns / 1_000_000_000,
            self.t_ns % 1_000_000_000 / 1000,
            self.event.name(),
            self.event
        )
    }
}

/// The tracepoints' runtime state (`Sim::tp`, set when `machine.tracepoints` is).
#[derive(Debug)]
pub(crate) struct Tracer {
    mask: u64,
    cfg: TracepointConfig,
    /// The events kept.
    pub(crate) records: Vec<TraceRecord>,
    /// Events that passed the filter after `max_events` were kept.
    pub(crate) dropped: u64,
}

impl Tracer {
    /// The tracer of `cfg` (validated).
    pub(crate) fn new(cfg: &TracepointConfig) -> Option<Box<Tracer>> {
        Some(Box::new(Tracer {
            mask: cfg.mask().ok()?,
            cfg: cfg.clone(),
            records: Vec::new(),
            dropped: 0,
        }))
    }

    /// Whether `event`'s tracepoint is selected.
    pub(crate) fn selects(&self, event: &TpEvent) -> bool {
        self.mask & event.bit() != 0
    }
}

/// What an event is about, for the filter.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TpScope {
    /// The group (None: node-wide).
    pub(crate) memcg: Option<crate::memcg::MemcgId>,
    /// The file and page range (filemap events).
    pub(crate) file: Option<(crate::event::FileId, u64, u64)>,
}

impl Sim {
    /// Emits `event` at `t_ns` by `task` if its tracepoint is on and the filter
    /// passes it. Callers test `self.tp.is_some()` first.
    #[cold]
    #[inline(never)]
    pub(crate) fn trace_event(&mut self, t_ns: u64, task: TpTask, scope: TpScope, event: TpEvent) {
        // `mm_page_pcpu_drain` events logged outside an allocation or a free
        // (`kmem_page`): emitted before any later event.
        if self
            .phys
            .pcp
            .drain_log
            .as_ref()
            .is_some_and(|l| !l.is_empty())
        {
            self.trace_pcpu_drain_flush(t_ns);
        }
        self.trace_event_now(t_ns, task, scope, event);
    }

    /// [`Sim::trace_event`] without the drain log's flush.
    pub(crate) fn trace_event_now(
        &mut self,
        t_ns: u64,
        task: TpTask,
        scope: TpScope,
        event: TpEvent,
    ) {
        let Some(tp) = self.tp.as_ref() else {
            return;
        };
        if tp.mask & event.bit() == 0
            || t_ns < tp.cfg.from_ns
            || tp.cfg.to_ns.is_some_and(|t| t_ns >= t)
        {
            return;
        }
        if let (Some(path), Some(m)) = (&tp.cfg.group, scope.memcg) {
            if self.memcgs.get(m as usize).is_none_or(|g| &g.path != path) {
                return;
            }
        }
        match scope.file {
            Some((file, first, last)) => {
                if let Some(name) = &tp.cfg.file {
                    if self
                        .files
                        .get(file as usize)
                        .is_none_or(|f| &f.name != name)
                    {
                        return;
                    }
                }
                if let Some([a, b]) = tp.cfg.pages {
                    if last < a || first > b {
                        return;
                    }
                }
            }
            None if tp.cfg.file.is_some() || tp.cfg.pages.is_some() => return,
            None => {}
        }
        let tp = self.tp.as_mut().expect("checked");
        if tp.records.len() as u64 >= tp.cfg.max_events {
            tp.dropped += 1;
            return;
        }
        tp.records.push(TraceRecord { t_ns, task, event });
    }

    /// The inode number the tracepoints print for `file`.
    pub(crate) fn tp_ino(file: crate::event::FileId) -> u64 {
        u64::from(file) + 1
    }

    /// `mm_filemap_get_pages` (`filemap_get_pages`, before a buffered read)
    /// for the read's whole range within the file.
    pub(crate) fn tp_get_pages(&mut self, file: crate::event::FileId, index: u32, pages: u16) {
        let size = self.files.get(file as usize).map_or(0, |f| f.pages);
        let last = (index + u32::from(pages.max(1)) - 1).min(size.saturating_sub(1));
        if index < size {
            let scope = TpScope {
                memcg: Some(self.cur_memcg),
                file: Some((file, u64::from(index), u64::from(last))),
            };
            let event = TpEvent::GetPages {
                ino: Self::tp_ino(file),
                index: u64::from(index),
                last_index: u64::from(last),
            };
            self.trace_event(self.clock, self.tp_task, scope, event);
        }
    }

    /// The task a file's reads run in (its opener), for the tracepoints.
    pub(crate) fn tp_file_task(&self, file: crate::event::FileId) -> TpTask {
        TpTask::Task(
            self.files
                .get(file as usize)
                .and_then(|f| f.task)
                .unwrap_or(0),
        )
    }

    /// A vmscan event at `t_ns` by the running task (kswapd or a workload task),
    /// about group `memcg` (None: node-wide).
    #[cold]
    pub(crate) fn trace_vmscan(
        &mut self,
        t_ns: u64,
        memcg: Option<crate::memcg::MemcgId>,
        event: TpEvent,
    ) {
        let scope = TpScope { memcg, file: None };
        self.trace_event(t_ns, self.tp_task, scope, event);
    }

    /// `trace_mm_vmscan_lru_isolate` of `isolate_lru_folios`: `requested` asked,
    /// `taken` taken from `lru` (one zone: scanned = taken, nothing skipped).
    #[cold]
    pub(crate) fn trace_isolate(
        &mut self,
        sc: &crate::reclaim::ScanControl,
        requested: u64,
        taken: u64,
        lru: crate::mem::folio::LruList,
    ) {
        let e = TpEvent::LruIsolate {
            nr_requested: requested,
            nr_scanned: taken,
            nr_taken: taken,
            lru: lru as u8,
        };
        self.trace_vmscan(sc.now(), Some(sc.memcg), e);
    }

    /// `trace_mm_vmscan_lru_isolate` at the end of MGLRU's `scan_folios` (v6.12):
    /// `nr_requested` is `MAX_LRU_BATCH` (the kernel passes the constant, not what
    /// the caller wanted), `scanned` the folios looked at (sorted or isolated),
    /// `isolated` those taken, nothing skipped (one zone), and `lru` the type's
    /// inactive list (`type ? LRU_INACTIVE_FILE : LRU_INACTIVE_ANON`).
    #[cold]
    pub(crate) fn trace_scan_folios(
        &mut self,
        sc: &crate::reclaim::ScanControl,
        memcg: crate::memcg::MemcgId,
        scanned: u64,
        isolated: u64,
        file: bool,
    ) {
        let e = TpEvent::LruIsolate {
            nr_requested: crate::reclaim::lru_gen::MAX_LRU_BATCH,
            nr_scanned: scanned,
            nr_taken: isolated,
            lru: crate::mem::folio::LruList::inactive(file) as u8,
        };
        self.trace_vmscan(sc.now(), Some(memcg), e);
    }

    /// `trace_mm_vmscan_lru_shrink_inactive` at the end of `shrink_inactive_list`
    /// (and MGLRU's `evict_folios`): `kept` are the folios put back, the active
    /// ones among them counted as activated by type.
    #[cold]
    #[allow(clippy::too_many_arguments)] // the tracepoint's own arguments
    pub(crate) fn trace_shrink_inactive(
        &mut self,
        sc: &crate::reclaim::ScanControl,
        memcg: crate::memcg::MemcgId,
        scanned: u64,
        reclaimed: u64,
        dirty: u64,
        kept: &[crate::mem::folio::FolioId],
        file: bool,
    ) {
        let mut nr_activate = [0u64; 2];
        for &f in kept {
            let fo = &self.folios[f];
            if fo.test(crate::mem::folio::flags::ACTIVE) {
                nr_activate[usize::from(fo.is_file())] += 1;
            }
        }
        let e = TpEvent::LruShrinkInactive {
            nr_scanned: scanned,
            nr_reclaimed: reclaimed,
            nr_dirty: dirty,
            nr_activate,
            priority: sc.priority as i32,
            file,
        };
        self.trace_vmscan(sc.now(), Some(memcg), e);
    }

    /// `trace_mm_filemap_fault` of `filemap_fault`: a fault on page `index` of
    /// `file` through mapping `vma`.
    #[cold]
    pub(crate) fn trace_filemap_fault(
        &mut self,
        vma: crate::mem::pagetable::VmaId,
        file: crate::event::FileId,
        index: u32,
    ) {
        let Some(v) = self.vmas.get(vma as usize) else {
            return;
        };
        let task = TpTask::Task(v.task);
        let memcg = self.tasks.get(v.task as usize).map(|t| t.memcg);
        let scope = TpScope {
            memcg,
            file: Some((file, u64::from(index), u64::from(index))),
        };
        let e = TpEvent::Fault {
            ino: Self::tp_ino(file),
            index: u64::from(index),
        };
        self.trace_event(self.clock, task, scope, e);
    }

    /// `trace_mm_filemap_add_to_page_cache` / `delete_from_page_cache` of folio `f`.
    #[cold]
    pub(crate) fn trace_filemap_folio(&mut self, f: crate::mem::folio::FolioId, add: bool) {
        let fo_memcg = self.folios.memcg(f);
        let fo = self.folios[f];
        if !fo.is_file() {
            return;
        }
        let (file, index) = (fo.space, u64::from(fo.index));
        let ino = Self::tp_ino(file);
        let pfn = u64::from(self.folios.head_pfn(f));
        // `folio_order(folio)`, as the kernel prints it (large page-cache folios).
        let order = u32::from(fo.order());
        let event = if add {
            TpEvent::FilemapAdd {
                ino,
                pfn,
                index,
                order,
            }
        } else {
            TpEvent::FilemapDelete {
                ino,
                pfn,
                index,
                order,
            }
        };
        let scope = TpScope {
            memcg: Some(fo_memcg),
            file: Some((file, index, index)),
        };
        let task = if add {
            self.tp_file_task(file)
        } else {
            self.tp_task
        };
        let t = self.clock;
        self.trace_event(t, task, scope, event);
    }
}

#[cfg(test)]
mod tests;
