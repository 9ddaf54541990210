//! The host memory a run may use, and the two guards that keep mmsim inside it.
//!
//! Before a run, [`check`] compares the scenario's estimate
//! ([`mmsim_workloads::footprint`]) with the memory available to this process: the
//! host's `MemAvailable`, the room left under the `memory.max` (v2) or
//! `memory.limit_in_bytes` (v1) of its cgroup and every ancestor, and its
//! `RLIMIT_AS`/`RLIMIT_DATA`. A scenario that cannot fit is refused with the setting
//! that makes it big. During a run, the progress callback compares the process heap
//! ([`crate::heap`]) with the same limit once per batch and stops the run with an
//! error when it is crossed (a trace with more distinct keys than expected, a model
//! larger than estimated), instead of growing until the kernel or the allocator kills
//! the process. `--host-memory SIZE` sets the limit, `--host-memory max` turns both
//! guards off.

use std::sync::OnceLock;

use anyhow::Result;
use mmsim_workloads::host::{detect, refusal};
pub use mmsim_workloads::host::{gib, HostLimit, HostMemory};
use mmsim_workloads::scenario::Scenario;

use crate::UsageError;

/// The limit of this process, set once by [`check`] and read by the run-time guard.
static LIMIT: OnceLock<Option<HostLimit>> = OnceLock::new();

/// The limit [`check`] set (None before it ran, or with `--host-memory max`).
pub fn limit() -> Option<&'static HostLimit> {
    LIMIT.get().and_then(Option::as_ref)
}

/// Sets the process's limit from `--host-memory` (or detects it) and refuses `s` if
/// its estimate does not fit. Called before each scenario is run; the limit is
/// decided once per process.
pub fn check(s: &Scenario, flag: Option<HostMemory>) -> Result<()> {
    let limit = LIMIT.get_or_init(|| match flag {
        Some(HostMemory::Unlimited) => None,
        Some(HostMemory::Limit(size)) => Some(HostLimit {
            bytes: size.bytes(),
            source: format!("--host-memory {}", gib(size.bytes())),
        }),
        None => detect(),
    });
    let Some(limit) = limit else {
        return Ok(());
    };
    match refusal(s, limit) {
        None => Ok(()),
        Some(msg) => Err(anyhow::Error::new(UsageError(format!(
            "{msg}; `--host-memory max` runs it anyway"
        )))),
    }
}

/// The run-time guard, called once per batch by the progress callback: Some(error
/// text) once the process heap has crossed the limit.
pub fn over_limit() -> Option<String> {
    let limit = limit()?;
    let heap = crate::heap::current() as u64;
    (heap > limit.bytes).then(|| {
        format!(
            "mmsim's heap reached {}, over the {} it may use; the run was stopped (a \
             smaller scenario, `--limit` on a trace, or `--host-memory` with more memory)",
            gib(heap),
            limit
        )
    })
}
