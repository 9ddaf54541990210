//! The `compaction:` tracepoints of `compact_zone` (v6.12 mm/compaction.c):
//! `mm_compaction_begin`, `_end`, `_finished` and `_migratepages`, built from
//! the run's `compact_control` (`crate::tracepoint::compaction` has the
//! events and their formats). Callers test `Sim::tp` first.

use super::{CompactControl, CompactResult, MigrateMode, PAGEBLOCK_NR_PAGES};
use crate::sim::Sim;
use crate::tracepoint::compaction::{status, CompactionEvent};

/// The kernel's `enum compact_result` value of a model result.
pub(crate) fn kernel_status(r: CompactResult) -> u8 {
    match r {
        CompactResult::Skipped => status::SKIPPED,
        CompactResult::Deferred => 2,
        CompactResult::Continue => status::CONTINUE,
        CompactResult::Complete => 5,
        CompactResult::PartialSkipped => 6,
        CompactResult::Contended => 7,
        CompactResult::Success => 8,
    }
}

impl Sim {
    /// `trace_mm_compaction_begin` (`end` None) or `trace_mm_compaction_end`
    /// (`end` = the run's result) of `compact_zone`: the zone's span, the
    /// scanners' positions, sync or async.
    #[cold]
    pub(super) fn trace_compact_zone(&mut self, cc: &CompactControl, end: Option<CompactResult>) {
        let (zone_start, zone_end) = self.phys.pfn_range();
        let sync = cc.mode != MigrateMode::Async;
        let (migrate_pfn, free_pfn) = (cc.migrate_pfn, cc.free_pfn);
        self.trace_compaction(match end {
            None => CompactionEvent::Begin {
                zone_start,
                migrate_pfn,
                free_pfn,
                zone_end,
                sync,
            },
            Some(r) => CompactionEvent::End {
                zone_start,
                migrate_pfn,
                free_pfn,
                zone_end,
                sync,
                status: kernel_status(r),
            },
        });
    }

    /// `trace_mm_compaction_finished` of `compact_finished`: `__compact_finished`'s
    /// verdict before `COMPACT_NO_SUITABLE_PAGE` becomes `COMPACT_CONTINUE`. The
    /// model returns `Continue` for both; the kernel's is `NO_SUITABLE_PAGE` when
    /// the order walk ran (an order-targeted, non-proactive run with the migrate
    /// scanner at a pageblock boundary and the scanners apart).
    #[cold]
    pub(super) fn trace_compact_finished(&mut self, cc: &CompactControl, r: CompactResult) {
        let walked = r == CompactResult::Continue
            && !cc.proactive
            && cc.order.is_some()
            && cc.migrate_pfn.is_multiple_of(PAGEBLOCK_NR_PAGES);
        let ret = if walked {
            status::NO_SUITABLE_PAGE
        } else {
            kernel_status(r)
        };
        let e = CompactionEvent::Finished {
            zone: self.tp_compact_zone(),
            order: cc.order.map_or(-1, |o| o as i32),
            ret,
        };
        self.trace_compaction(e);
    }

    /// `trace_mm_compaction_migratepages(nr_migratepages, nr_succeeded)` after a
    /// `migrate_pages` of `nr_all` pages that moved `succeeded`.
    #[cold]
    pub(super) fn trace_migratepages(&mut self, nr_all: u64, succeeded: u64) {
        self.trace_compaction(CompactionEvent::Migratepages {
            nr_migrated: succeeded,
            nr_failed: nr_all.saturating_sub(succeeded),
        });
    }
}
