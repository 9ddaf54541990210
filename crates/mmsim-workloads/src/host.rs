//! The host memory a run may use: what this process can have (the host's
//! `MemAvailable`, the room left under the `memory.max` (v2) or
//! `memory.limit_in_bytes` (v1) of its cgroup and every ancestor, its
//! `RLIMIT_AS`/`RLIMIT_DATA`; [`detect`]) and whether a scenario's estimate
//! ([`crate::footprint::estimate_host_memory`]) fits in it ([`refusal`]), checked
//! before a run by every front end (the CLI's `--host-memory`, Python's `host_memory=`)
//! so that a scenario too big for the machine is refused with the setting that makes
//! it big, instead of growing until the kernel kills the process.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use mmsim_core::Size;

use crate::footprint::{estimate_host_memory, slot_bytes, FOLIO_BYTES};
use crate::scenario::Scenario;

/// A host memory setting (`--host-memory`): a size, or `max` for no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostMemory {
    /// At most this much.
    Limit(Size),
    /// No limit and no checks.
    Unlimited,
}

impl FromStr for HostMemory {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.trim().eq_ignore_ascii_case("max") {
            return Ok(HostMemory::Unlimited);
        }
        // Size's parser refuses 0 and negative sizes.
        Ok(HostMemory::Limit(s.parse()?))
    }
}

/// The limit in force and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostLimit {
    /// Bytes.
    pub bytes: u64,
    /// Where the number comes from, for messages.
    pub source: String,
}

impl fmt::Display for HostLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", gib(self.bytes), self.source)
    }
}

/// Human-readable bytes.
pub fn gib(bytes: u64) -> String {
    if bytes >= 1 << 40 {
        format!("{:.1} TiB", bytes as f64 / (1u64 << 40) as f64)
    } else if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

/// The smallest of the limits this process lives under; None if none is readable.
pub fn detect() -> Option<HostLimit> {
    detect_in(Path::new("/"))
}

/// [`detect`] reading `/proc` and `/sys` under `root` (a test's fake tree).
fn detect_in(root: &Path) -> Option<HostLimit> {
    let mut best: Option<HostLimit> = None;
    let mut consider = |bytes: u64, source: String| {
        if best.as_ref().is_none_or(|b| bytes < b.bytes) {
            best = Some(HostLimit { bytes, source });
        }
    };
    if let Some(kib) = meminfo_kib(root, "MemAvailable") {
        consider(kib * 1024, "MemAvailable in /proc/meminfo".into());
    }
    for (room, group) in cgroup_rooms(root) {
        consider(
            room,
            format!("room left under the memory limit of cgroup {group}"),
        );
    }
    for (name, bytes) in rlimits(root) {
        consider(bytes, format!("{name} in /proc/self/limits"));
    }
    best
}

fn meminfo_kib(root: &Path, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(root.join("proc/meminfo")).ok()?;
    let line = text.lines().find(|l| l.split(':').next() == Some(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// (limit − usage, group) for this process's memory cgroup and its ancestors.
fn cgroup_rooms(root: &Path) -> Vec<(u64, String)> {
    let Ok(text) = std::fs::read_to_string(root.join("proc/self/cgroup")) else {
        return Vec::new();
    };
    let mut rooms = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), Some(c)) => (a, b, c),
            _ => continue,
        };
        let (mount, max, usage) = if controllers.is_empty() {
            ("sys/fs/cgroup", "memory.max", "memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                "sys/fs/cgroup/memory",
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            )
        } else {
            continue;
        };
        let mut group = std::path::PathBuf::from(path);
        loop {
            let dir = root
                .join(mount)
                .join(group.strip_prefix("/").unwrap_or(&group));
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
            if let (Some(m), Some(u)) = (read(max), read(usage)) {
                if let (Ok(m), Ok(u)) = (m.trim().parse::<u64>(), u.trim().parse::<u64>()) {
                    // v1 writes "no limit" as a page-rounded i64::MAX.
                    if m < 1 << 60 {
                        rooms.push((m.saturating_sub(u), group.display().to_string()));
                    }
                }
            }
            if !group.pop() {
                break;
            }
        }
    }
    rooms
}

/// The address-space and data-segment limits, when set.
fn rlimits(root: &Path) -> Vec<(&'static str, u64)> {
    let Ok(text) = std::fs::read_to_string(root.join("proc/self/limits")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, label) in [
        ("Max address space", "RLIMIT_AS"),
        ("Max data size", "RLIMIT_DATA"),
    ] {
        let soft = text
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok());
        if let Some(bytes) = soft {
            out.push((label, bytes));
        }
    }
    out
}

/// Why `s` is refused under `limit`: its estimate, the limit and where it comes from,
/// and the workload that makes it big; None when it fits. The caller adds how to run
/// it anyway (its own flag).
pub fn refusal(s: &Scenario, limit: &HostLimit) -> Option<String> {
    let est = estimate_host_memory(s);
    if est.bytes <= limit.bytes {
        return None;
    }
    let mut msg = format!(
        "scenario `{}` would need about {} of host memory, more than the {} mmsim may use",
        s.name,
        gib(est.bytes),
        limit
    );
    if let Some(w) = est.largest() {
        let per_page = slot_bytes(&s.workloads[w.index].kind) + FOLIO_BYTES;
        msg.push_str(&format!(
            ": workload[{}] (`{}`) can touch {} pages ({} of simulated memory), each costing \
             mmsim up to {per_page} bytes; make it smaller (its `pages` or size fields) or \
             lower machine.memory",
            w.index,
            w.name,
            w.pages,
            gib(w.pages.saturating_mul(4096))
        ));
    }
    Some(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake `/` with the given files.
    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    const MEMINFO: &str =
        "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:    8388608 kB\n";
    const NO_LIMITS: &str =
        "Limit                     Soft Limit           Hard Limit           Units\n\
        Max data size             unlimited            unlimited            bytes\n\
        Max address space         unlimited            unlimited            bytes\n";

    #[test]
    fn memavailable_alone() {
        let t = tree(&[("proc/meminfo", MEMINFO), ("proc/self/limits", NO_LIMITS)]);
        let l = detect_in(t.path()).unwrap();
        assert_eq!(l.bytes, 8 << 30);
        assert_eq!(l.source, "MemAvailable in /proc/meminfo");
    }

    #[test]
    fn cgroup_v2_room_is_the_tightest_ancestor() {
        let t = tree(&[
            ("proc/meminfo", MEMINFO),
            ("proc/self/limits", NO_LIMITS),
            ("proc/self/cgroup", "0::/a/b\n"),
            ("sys/fs/cgroup/a/b/memory.max", "1073741824\n"),
            ("sys/fs/cgroup/a/b/memory.current", "268435456\n"),
            // "max" is no limit: skipped.
            ("sys/fs/cgroup/a/memory.max", "max\n"),
            ("sys/fs/cgroup/a/memory.current", "300000000\n"),
        ]);
        let l = detect_in(t.path()).unwrap();
        assert_eq!(l.bytes, 768 << 20);
        assert_eq!(l.source, "room left under the memory limit of cgroup /a/b");
    }

    #[test]
    fn cgroup_v1_skips_the_unlimited_group_and_takes_its_parent() {
        let t = tree(&[
            ("proc/meminfo", MEMINFO),
            ("proc/self/cgroup", "5:cpu,cpuacct:/x\n4:memory:/x\n"),
            (
                "sys/fs/cgroup/memory/x/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
            ("sys/fs/cgroup/memory/x/memory.usage_in_bytes", "1000\n"),
            ("sys/fs/cgroup/memory/memory.limit_in_bytes", "2147483648\n"),
            ("sys/fs/cgroup/memory/memory.usage_in_bytes", "1610612736\n"),
        ]);
        let l = detect_in(t.path()).unwrap();
        assert_eq!(l.bytes, 512 << 20);
        assert_eq!(l.source, "room left under the memory limit of cgroup /");
    }

    #[test]
    fn an_address_space_rlimit_below_the_memory_wins() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
            Max data size             unlimited            unlimited            bytes\n\
            Max address space         1073741824           unlimited            bytes\n";
        let t = tree(&[("proc/meminfo", MEMINFO), ("proc/self/limits", limits)]);
        let l = detect_in(t.path()).unwrap();
        assert_eq!(l.bytes, 1 << 30);
        assert_eq!(l.source, "RLIMIT_AS in /proc/self/limits");
    }

    #[test]
    fn nothing_readable_is_no_limit() {
        let t = tree(&[("proc/meminfo", "MemTotal: 1 kB\n")]);
        assert!(detect_in(t.path()).is_none());
    }
}
