//! The validation suite file (`validation/suite.toml`): which cases exist, where each
//! runs on a real kernel, and which counters are compared and enforced.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};

use crate::UsageError;

/// Where the kernel side of a case runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelSite {
    /// This machine's kernel, in a memory cgroup under the runner's own.
    Host,
    /// A Debian kernel booted under qemu (`tools/validate/guest-run.sh`).
    Guest,
}

/// Reclaim policy of a case: the kernel's LRU implementation, and the policy mmsim
/// simulates it with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CasePolicy {
    /// Two-list active/inactive LRU (mmsim policy `cost`).
    Classic,
    /// Multi-generational LRU (`/sys/kernel/mm/lru_gen/enabled`; mmsim policy `mglru`).
    Mglru,
}

impl CasePolicy {
    /// The mmsim policy name.
    pub fn mmsim_name(self) -> &'static str {
        match self {
            CasePolicy::Classic => "cost",
            CasePolicy::Mglru => "mglru",
        }
    }
    /// The error allowed on enforced counters besides the kernel's own spread.
    pub fn min_tolerance(self) -> f64 {
        match self {
            CasePolicy::Classic => 0.02,
            CasePolicy::Mglru => 0.05,
        }
    }
}

/// One `[[case]]` of the suite.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique name; the results go to `<results>/<name>.json`.
    pub name: String,
    /// The scenario file (relative to the suite file). It must put every workload in one
    /// `[[cgroup]]` group, whose knobs the kernel group gets.
    pub scenario: PathBuf,
    /// Where the kernel side runs (default host).
    #[serde(default = "default_site")]
    pub kernel: KernelSite,
    /// Reclaim policy (default classic). `mglru` needs the guest.
    #[serde(default = "default_policy")]
    pub policy: CasePolicy,
    /// Guest cases: the Debian kernel package to boot (default: the guest runner's,
    /// linux-image-6.1.0-50-cloud-amd64-unsigned from bookworm); a trixie package
    /// (`+deb13` in the name) is fetched through a private apt configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_kernel: Option<String>,
    /// Kernel runs (default 3).
    #[serde(default = "default_runs")]
    pub runs: u32,
    /// Counters shown (default: all that the kernel side measured).
    #[serde(default)]
    pub counters: Vec<String>,
    /// Counters whose error is enforced by the CI test (the misses).
    pub enforce: Vec<String>,
    /// Free text: what the case shows, known deviations.
    #[serde(default)]
    pub note: Option<String>,
    /// Per enforced counter, the relative error allowed besides the kernel's spread and
    /// the policy's minimum (for sampled counters such as DAMON's, whose run-to-run
    /// spread over a few runs understates their variance; VALIDATION.md says why each
    /// one was chosen). Keys must be in `enforce`; values in (0, 10].
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub allow: std::collections::BTreeMap<String, f64>,
    /// A real-application case: how its kernel side was captured (free text naming the
    /// `scripts/capture-app` command line). Its scenario replays the captured trace, and
    /// its kernel runs are recorded with `--kernel-run` from the capture's
    /// `kernel-run.json`, not by running the probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// Host cases: run the probe with `--anon-read-alloc` (a first load of an anon
    /// page allocates a zero-filled page, as in mmsim, instead of mapping the zero
    /// page), for the kernel's zero-filled swap pages (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anon_read_alloc: bool,
    /// A case with several groups (issue 15 item 2): the `[[cgroup]]` paths whose own
    /// counters it compares, each named `GROUP:COUNTER` in `counters` and `enforce`
    /// (`/long:pgmajfault`); machine-wide counters are named plainly. The live runner
    /// runs one group and one probe process, so such a case is recorded by its own
    /// scripts and compared with `--from-results` ([`super::groups`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// The workload (`exit = true`) whose end splits a counter named with `@before` or
    /// `@after` (`/long:workingset_refault_anon@after`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_at: Option<String>,
    /// Host cases: seconds the runner waits before each run (default 0; at most
    /// 600). For khugepaged's timing: a run's exited mm stays on khugepaged's list
    /// until its next wake-up when it was the scan cursor, and MADV_HUGEPAGE wakes
    /// khugepaged only when the list is empty (`__khugepaged_enter`), so the next run
    /// waits one `scan_sleep_millisecs` or more.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pause_s: u32,
    /// The kernel runs read the group's `memory.stat` every this many ms of their wall
    /// clock (`scripts/capture-app` samples it every 200 ms), for runs that do not say:
    /// the period capture-app measured (`memory_stat_read_mean_ms`) comes first, this
    /// next, then capture-app's nominal `memory_stat_read_ms`; 0 (default) and none of
    /// them: nothing read it.
    /// Reading `memory.stat` flushes the group's statistics
    /// (`memcg_stat_format` → `mem_cgroup_flush_stats`) when more updates than the
    /// threshold are pending, so under the 6.12+ ratelimited flush the statistics
    /// reclaim and `count_shadow_nodes` read can be fresher than the periodic
    /// flusher's 2 s: the replay's `memcg_stats_read_ms` is scaled from it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stats_read_ms: u32,
    /// The CPUs of the machine the kernel runs ran on, for runs that do not say
    /// (capture-app and the host runner write `online_cpus` now): the replay's
    /// `memcg_stats_cpus`, the update threshold's `num_online_cpus()` under the 6.12+
    /// flush, and nothing else. 0 (default) and no run says: the scenario's `cpus`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kernel_cpus: u32,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn default_site() -> KernelSite {
    KernelSite::Host
}
fn default_policy() -> CasePolicy {
    CasePolicy::Classic
}
fn default_runs() -> u32 {
    3
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteToml {
    #[serde(rename = "case", default)]
    cases: Vec<Case>,
}

/// A loaded suite: its cases with scenario paths resolved against the suite's directory.
#[derive(Debug)]
pub struct Suite {
    /// The suite file.
    pub path: PathBuf,
    /// Its cases, in file order.
    pub cases: Vec<Case>,
}

impl Suite {
    /// Reads and checks a suite file; every error names the file and the case field.
    pub fn load(path: &Path) -> Result<Suite> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the suite {}", path.display()))?;
        let t: SuiteToml = toml::from_str(&text)
            .map_err(|e| UsageError(format!("{}: {}", path.display(), e.message().trim())))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut cases = Vec::new();
        for (i, mut c) in t.cases.into_iter().enumerate() {
            let at = |field: &str, msg: String| {
                anyhow!(UsageError(format!(
                    "{}: case[{i}] ({}).{field}: {msg}",
                    path.display(),
                    c.name
                )))
            };
            if c.name.is_empty()
                || !c
                    .name
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_')
            {
                return Err(at("name", "use letters, digits, - and _ only".into()));
            }
            if c.guest_kernel.is_some() && c.kernel != KernelSite::Guest {
                return Err(at("guest_kernel", "only for kernel = \"guest\"".into()));
            }
            if let Some(k) = &c.guest_kernel {
                if !k
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || "+-._".contains(ch))
                {
                    return Err(at("guest_kernel", format!("`{k}` is not a package name")));
                }
            }
            if cases.iter().any(|o: &Case| o.name == c.name) {
                return Err(at("name", "duplicate case name".into()));
            }
            if c.runs == 0 || c.runs > 20 {
                return Err(at("runs", format!("{} is out of range 1..=20", c.runs)));
            }
            if c.policy == CasePolicy::Mglru && c.kernel == KernelSite::Host {
                return Err(at(
                    "kernel",
                    "policy mglru needs kernel = \"guest\" (the host has no lru_gen)".into(),
                ));
            }
            for (j, g) in c.groups.iter().enumerate() {
                if !g.starts_with('/') || g.len() < 2 || c.groups[..j].contains(g) {
                    return Err(at(
                        "groups",
                        format!("`{g}`: name each group once, by its [[cgroup]] path (`/short`)"),
                    ));
                }
            }
            if c.groups.len() == 1 {
                return Err(at(
                    "groups",
                    "one group: leave `groups` out (a one-group case names its counters plainly)"
                        .into(),
                ));
            }
            if !c.groups.is_empty() && c.counters.is_empty() {
                return Err(at(
                    "counters",
                    "a case with `groups` lists its counters (`/short:pgmajfault`, `pswpout`, ...)"
                        .into(),
                ));
            }
            if c.split_at.is_some() && c.groups.is_empty() {
                return Err(at("split_at", "only for a case with `groups`".into()));
            }
            if !c.groups.is_empty() && (c.app.is_some() || c.anon_read_alloc) {
                return Err(at(
                    "groups",
                    "not with `app` or `anon_read_alloc` (one-process runners)".into(),
                ));
            }
            for (field, list) in [("counters", &c.counters), ("enforce", &c.enforce)] {
                for n in list {
                    super::groups::parse(&c, n).map_err(|m| at(field, m))?;
                }
            }
            if let Some(t) = c
                .enforce
                .iter()
                .find(|n| super::groups::parse(&c, n).is_ok_and(|sp| sp.base.timing))
            {
                return Err(at(
                    "enforce",
                    format!("`{t}` depends on timing, which mmsim models but does not match"),
                ));
            }
            for (name, v) in &c.allow {
                if !c.enforce.contains(name) {
                    return Err(at(
                        "allow",
                        format!("`{name}` is not an enforced counter of the case"),
                    ));
                }
                if !(*v > 0.0 && *v <= 10.0) {
                    return Err(at("allow", format!("{name} = {v} is out of range (0, 10]")));
                }
            }
            if c.pause_s > 600 {
                return Err(at(
                    "pause_s",
                    format!("{} s is out of range [0, 600]", c.pause_s),
                ));
            }
            if c.app.as_deref().is_some_and(|a| a.trim().is_empty()) {
                return Err(at(
                    "app",
                    "name the capture command (e.g. `scripts/capture-app ...`)".into(),
                ));
            }
            if c.app.is_some() && c.kernel != KernelSite::Host {
                return Err(at(
                    "app",
                    "real-application cases are captured on the host (kernel = \"host\")".into(),
                ));
            }
            if c.anon_read_alloc && c.kernel != KernelSite::Host {
                return Err(at(
                    "anon_read_alloc",
                    "only for kernel = \"host\" (the guest runner has no probe options)".into(),
                ));
            }
            if c.enforce.is_empty() {
                return Err(at("enforce", "name at least one counter".into()));
            }
            c.scenario = base.join(&c.scenario);
            cases.push(c);
        }
        if cases.is_empty() {
            return Err(UsageError(format!("{}: no [[case]] in the suite", path.display())).into());
        }
        Ok(Suite {
            path: path.to_path_buf(),
            cases,
        })
    }
}
