//! How much host memory a scenario will make mmsim use, estimated before it runs.
//!
//! mmsim's own memory grows with the pages a run touches, not with the simulated
//! machine's size: every structure is grown on demand (the folio arena, each VMA's
//! PTE array, each file's page-cache slots, the swap slots, a trace's key map). So a
//! 2 TiB machine costs nothing until its workloads touch its memory, and a workload
//! that touches 1.5 TiB of pages needs about 20 GB of host memory. This module bounds
//! that from the scenario alone, so the CLI can refuse a run that will not fit before
//! it starts, naming the setting that makes it big, instead of growing until the host
//! or a cgroup limit kills it.
//!
//! The bound per workload is the pages it can touch: its region (`pages`, or a
//! model's files and mappings together), at most what its known number of events can
//! reach (each event touches one page plus read-ahead or fault-around, counted as
//! [`PAGES_PER_EVENT`]). Per touched page it costs a page-table or page-cache slot, a
//! folio while resident (at most the machine's memory), a swap slot while swapped (at
//! most the swap device), and for a trace the key map's entry. A trace without `pages`
//! or `limit` has no bound known before reading it: it is listed as unbounded and
//! left to the run-time guard, which watches the process heap.

use crate::scenario::{Scenario, Target, TraceKeys, WorkloadKind};

/// Host bytes per resident page: its folio in the arena (a 24-byte slot, an
/// 8-byte link pair, a 4-byte head PFN) and its page frame's state in the
/// buddy allocator and `mem_map` (links, folio, order, type: 16 bytes with
/// padding).
pub const FOLIO_BYTES: u64 = 52;
/// Host bytes per page-table entry or page-cache slot.
pub const SLOT_BYTES: u64 = 4;
/// Host bytes per swap slot in use: the slot, its free-list entry, its owner.
pub const SWAP_SLOT_BYTES: u64 = 10;
/// Host bytes per distinct trace key (the key map's entry and its share of the table).
pub const TRACE_KEY_BYTES: u64 = 48;
/// Host bytes per kept page of a sampled `sampler = "alias"` zipf workload's table
/// ([`crate::zipf::KeptRanks`]), built over its whole region whatever its accesses.
pub const KEPT_RANK_BYTES: u64 = 16;
/// Pages one event of a simple generator can bring in: the page and a read-ahead
/// window (mmsim's default read-ahead is at most 32 pages; fault-around 16).
pub const PAGES_PER_EVENT: u64 = 33;
/// Spare capacity of arrays grown on demand, as a fraction 1/N of what they hold.
pub const GROWTH_SLACK: u64 = 8;
/// Fixed overhead of a run: the binary, buffers and tables independent of the
/// scenario's size.
pub const BASE_BYTES: u64 = 16 << 20;

/// One workload's share of the estimate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadFootprint {
    /// Index in the scenario's `[[workload]]` tables.
    pub index: usize,
    /// Its name, as in reports.
    pub name: String,
    /// Pages it can touch at most (0 when unbounded).
    pub pages: u64,
    /// Host bytes for those pages' slots and key-map entries.
    pub bytes: u64,
    /// A trace whose number of distinct keys is not known before reading it.
    pub unbounded: bool,
}

/// The estimate for a whole scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostMemoryEstimate {
    /// Bytes in all: [`BASE_BYTES`], the workloads' slots, folios, swap slots.
    pub bytes: u64,
    /// Resident folios at most: the pages touched, at most the machine's memory.
    pub folios: u64,
    /// Swap slots in use at most: the anonymous pages touched, at most the swap device.
    pub swap_slots: u64,
    /// Per workload, in scenario order.
    pub workloads: Vec<WorkloadFootprint>,
}

impl HostMemoryEstimate {
    /// The workload that contributes most (slots, and its share of folios and swap).
    pub fn largest(&self) -> Option<&WorkloadFootprint> {
        self.workloads
            .iter()
            .max_by_key(|w| (w.pages, usize::MAX - w.index))
    }

    /// The workloads whose size is not known before the run.
    pub fn unbounded(&self) -> impl Iterator<Item = &WorkloadFootprint> {
        self.workloads.iter().filter(|w| w.unbounded)
    }
}

/// Pages workload kind `kind` can touch at most, or None for a trace of unknown size.
fn touchable_pages(kind: &WorkloadKind) -> Option<u64> {
    match kind {
        // An offset replay's files span at most OFFSET_MAX_TOTAL_PAGES, slots included
        // between touched pages.
        WorkloadKind::Trace {
            keys: TraceKeys::Offset,
            ..
        } => Some(kind.pages()),
        WorkloadKind::Trace { pages, limit, .. } => match (pages, limit) {
            (Some(p), Some(l)) => Some((*p).min(*l)),
            (Some(p), None) => Some(*p),
            (None, Some(l)) => Some(*l),
            (None, None) => None,
        },
        WorkloadKind::Uniform { .. }
        | WorkloadKind::Zipf { .. }
        | WorkloadKind::HotCold { .. }
        | WorkloadKind::Sequential { .. }
        | WorkloadKind::Loop { .. }
        | WorkloadKind::Touch { .. } => {
            let by_events = kind
                .events()
                .map_or(u64::MAX, |e| e.saturating_mul(PAGES_PER_EVENT));
            Some(kind.pages().min(by_events))
        }
        // A model's events may each cover many pages: its region is the bound.
        _ => Some(kind.pages()),
    }
}

/// Host bytes a touched page of `kind` costs whether resident or not: its
/// page-table or page-cache slot, and for a trace its key-map entry.
pub fn slot_bytes(kind: &WorkloadKind) -> u64 {
    match kind {
        WorkloadKind::Trace { .. } => SLOT_BYTES + TRACE_KEY_BYTES,
        _ => SLOT_BYTES,
    }
}

/// Host bytes of a sampled alias zipf's kept-page table (0 for anything else): see
/// [`crate::gen::Generator::sample`].
fn kept_rank_bytes(s: &Scenario, kind: &WorkloadKind) -> u64 {
    match (&s.sample, kind) {
        (
            Some(spec),
            WorkloadKind::Zipf {
                pages,
                sampler: crate::scenario::ZipfSampler::Alias,
                ..
            },
        ) => {
            let kept = (*pages as f64 * spec.rate).ceil() as u64;
            if kept <= crate::zipf::KeptRanks::MAX_ENTRIES {
                kept * KEPT_RANK_BYTES
            } else {
                0
            }
        }
        _ => 0,
    }
}

/// Estimates the host memory a run of `s` needs at most (see the module overview).
pub fn estimate_host_memory(s: &Scenario) -> HostMemoryEstimate {
    let mut workloads = Vec::with_capacity(s.workloads.len());
    let (mut touched, mut anon) = (0u64, 0u64);
    for (index, w) in s.workloads.iter().enumerate() {
        let bound = touchable_pages(&w.kind);
        let pages = bound.unwrap_or(0);
        touched = touched.saturating_add(pages);
        let target = w.kind.model_target().unwrap_or(w.target);
        if target == Target::Anon {
            anon = anon.saturating_add(pages);
        }
        workloads.push(WorkloadFootprint {
            index,
            name: w.display_name(index),
            pages,
            bytes: pages
                .saturating_mul(slot_bytes(&w.kind))
                .saturating_add(kept_rank_bytes(s, &w.kind)),
            unbounded: bound.is_none(),
        });
    }
    let memory = s.machine.memory.pages();
    let folios = touched.min(memory);
    let swap_device = match s.machine.swap.device {
        mmsim_core::DeviceKind::None => 0,
        _ => s.machine.swap.size.map_or(0, |z| z.pages()),
    };
    let swap_slots = anon.min(swap_device);
    let grown = workloads
        .iter()
        .fold(0u64, |b, w| b.saturating_add(w.bytes))
        .saturating_add(folios.saturating_mul(FOLIO_BYTES))
        .saturating_add(swap_slots.saturating_mul(SWAP_SLOT_BYTES));
    // Arrays grown on demand hold spare capacity (the folio arena grows by 1/16).
    let bytes = BASE_BYTES.saturating_add(grown.saturating_add(grown / GROWTH_SLACK));
    HostMemoryEstimate {
        bytes,
        folios,
        swap_slots,
        workloads,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(text: &str) -> Scenario {
        Scenario::parse_toml_str(text, "t.toml").unwrap()
    }

    #[test]
    fn touched_pages_cost_slots_folios_and_swap_slots() {
        let s = scenario(
            "[machine]\nmemory = \"800p\"\n[machine.swap]\ndevice = \"zram\"\nsize = \"600p\"\n\
             [[workload]]\nkind = \"touch\"\ntarget = \"anon\"\npages = 1000\n\
             [[workload]]\nkind = \"zipf\"\ntheta = 0.9\ntarget = \"file\"\npages = 1000000\naccesses = 10\n",
        );
        let e = estimate_host_memory(&s);
        // The zipf workload's 10 accesses reach 10 × 33 pages, not its million.
        assert_eq!(e.workloads[1].pages, 330);
        assert_eq!(e.folios, 800, "at most the machine's memory");
        assert_eq!(e.swap_slots, 600, "at most the swap device");
        let grown = 1330 * SLOT_BYTES + 800 * FOLIO_BYTES + 600 * SWAP_SLOT_BYTES;
        assert_eq!(e.bytes, BASE_BYTES + grown + grown / GROWTH_SLACK);
        assert_eq!(e.largest().unwrap().index, 0);
        assert_eq!(e.unbounded().count(), 0);
    }

    #[test]
    fn a_sampled_alias_zipf_counts_its_kept_page_table() {
        let text = "[machine]\nmemory = \"1G\"\n[[workload]]\nkind = \"zipf\"\ntheta = 0.9\n\
                    target = \"file\"\npages = 1000000\naccesses = 10\nsampler = \"alias\"\n";
        let whole = estimate_host_memory(&scenario(text)).workloads[0].bytes;
        assert_eq!(whole, 330 * SLOT_BYTES, "not sampled: no table");
        let sampled = scenario(&format!("{text}[sample]\nrate = 0.01\n"));
        assert_eq!(
            estimate_host_memory(&sampled).workloads[0].bytes,
            330 * SLOT_BYTES + 10_000 * KEPT_RANK_BYTES
        );
        let ri = scenario(&format!(
            "{}[sample]\nrate = 0.01\n",
            text.replace("sampler = \"alias\"\n", "")
        ));
        assert_eq!(
            estimate_host_memory(&ri).workloads[0].bytes,
            330 * SLOT_BYTES
        );
    }

    #[test]
    fn a_trace_without_pages_or_limit_is_unbounded() {
        let s = scenario(
            "[machine]\nmemory = \"1G\"\n[[workload]]\nkind = \"trace\"\ntarget = \"file\"\npath = \"x.txt\"\n\
             [[workload]]\nkind = \"trace\"\ntarget = \"anon\"\npath = \"y.txt\"\nlimit = 500\n",
        );
        let e = estimate_host_memory(&s);
        assert!(e.workloads[0].unbounded);
        assert_eq!(e.workloads[1].pages, 500);
        assert_eq!(e.workloads[1].bytes, 500 * (SLOT_BYTES + TRACE_KEY_BYTES));
    }
}
