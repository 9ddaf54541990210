//! A touch's `snapshots` (khugepaged's timing): the huge pages at given times after
//! the workload's `madvise(MADV_HUGEPAGE)`.
//!
//! On the kernel, `mmsim-probe` sleeps through each gap (`--think sleep`) and then
//! reads `AnonHugePages` of `/proc/self/smaps_rollup` (`anon_huge_kb@N`); a case names
//! the N-th reading `anon_huge_pages@sN`. The waits are `Think` events of at most
//! 100 ms and each reading a zero-length one
//! ([`mmsim_workloads::scenario::snapshot_waits`]). mmsim's side steps the same event
//! stream on a simulator set up as `run_scenario` sets it up, and at each zero-length
//! `Think` that follows the first `ThpAdvice` reads
//! [`mmsim_core::Sim::anon_huge_pages`] (after the step, which first ran the timers
//! due: khugepaged's wake-ups by then).

use anyhow::Result;
use mmsim_core::{Event, Sim};
use mmsim_workloads::{EventStream, Scenario};

/// The huge pages (4 KiB units) at each zero-length `Think` event that follows the
/// first `ThpAdvice` event of `s`'s stream.
pub fn huge_pages_at_snapshots(s: &Scenario) -> Result<Vec<f64>> {
    let mut sim = Sim::new(s.machine.clone())?;
    mmsim_workloads::cgroups::setup(&mut sim, s)?;
    let mut stream = EventStream::build(s, &mut sim)?;
    let mut out = Vec::new();
    let mut advised = false;
    // The plan of a probe-run scenario has no start times, so the stream does not
    // depend on the clock (as `mmsim-probe` runs it).
    while let Some(batch) = stream.next_batch(0)? {
        for e in batch.events() {
            sim.step(e);
            match *e {
                Event::ThpAdvice { .. } => advised = true,
                Event::Think { ns: 0 } if advised => out.push(sim.anon_huge_pages() as f64),
                _ => {}
            }
        }
    }
    Ok(out)
}

/// `N` of a counter name's `@sN` suffix (1-based), if it has one.
pub fn snapshot_index(part: &str) -> Option<usize> {
    part.strip_prefix('s')
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
        .filter(|&n| n >= 1)
}
