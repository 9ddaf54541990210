//! What `mmsim validate` changed in a recorded scenario before simulating it,
//! as `mmsim run --set` flags. `sim_scenario` writes the settings the kernel
//! release implies (the policy's name, the memcg statistics flush of 6.12+,
//! `pgdat_dirty_guard`, MGLRU's version and backports) and `simulate` may
//! run it twice, the second time with the flusher's period scaled to the
//! kernel machine's wall clock; a plain `mmsim run` of the case's scenario
//! file has none of these, so its counters differ (compact-mthp-always:
//! compact_success 58 from `mmsim run`, 36 from `validate`). The text output
//! prints these flags under each case; `mmsim run SCENARIO` with them
//! reproduces the mmsim column.

use mmsim_core::config::MachineConfig;
use mmsim_workloads::scenario::overrides::toml_value;

/// `--set KEY=VALUE` flags (without `--set`) that turn `recorded` into
/// `simulated`: every leaf of `[machine]` whose value differs, dotted. A
/// leaf the simulated machine does not write is at the value serde skips:
/// an integer 0, and a flag the opposite of the recorded one (a flag is
/// written only when it differs from its skipped default, false for most,
/// true for `policy.pgdat_dirty_guard` and `mglru_writeback_in_reclaim`).
/// A table on one side only is compared leaf by leaf with an empty one.
pub fn set_flags(recorded: &MachineConfig, simulated: &MachineConfig) -> Vec<String> {
    let (Ok(a), Ok(b)) = (
        toml::Table::try_from(recorded),
        toml::Table::try_from(simulated),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    diff("", &a, &b, &mut out);
    out
}

fn diff(prefix: &str, a: &toml::Table, b: &toml::Table, out: &mut Vec<String>) {
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for k in keys {
        let key = format!("{prefix}{k}");
        match (a.get(k), b.get(k)) {
            (Some(toml::Value::Table(x)), Some(toml::Value::Table(y))) => {
                diff(&format!("{key}."), x, y, out)
            }
            (None, Some(toml::Value::Table(y))) => {
                diff(&format!("{key}."), &toml::Table::new(), y, out)
            }
            (Some(toml::Value::Table(x)), None) => {
                diff(&format!("{key}."), x, &toml::Table::new(), out)
            }
            (x, Some(y)) if x != Some(y) => out.push(format!("{key}={}", shown(y))),
            (Some(toml::Value::Integer(_)), None) => out.push(format!("{key}=0")),
            (Some(toml::Value::Boolean(x)), None) => out.push(format!("{key}={}", !x)),
            _ => {}
        }
    }
}

/// A value as `--set` reads it back: a string bare when it reads as itself.
fn shown(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) if toml_value(s) == *v => s.clone(),
        _ => v.to_string(),
    }
}

/// The line under a case's header that lists `flags` (none: no line): the
/// settings the mmsim column ran with besides the recorded scenario.
pub fn render(flags: &[String]) -> String {
    if flags.is_empty() {
        return String::new();
    }
    let set: Vec<String> = flags.iter().map(|f| format!("--set {f}")).collect();
    format!(
        "  mmsim ran the scenario with the kernel release's settings (`mmsim run` \
         reproduces it with these): {}\n",
        set.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::set_flags;
    use mmsim_core::config::MachineConfig;

    #[test]
    fn the_flags_name_each_changed_leaf_and_nothing_else() {
        let a = MachineConfig::default();
        assert!(set_flags(&a, &a).is_empty());
        let mut b = a.clone();
        b.policy.memcg_stats_flush = mmsim_core::MemcgStatsFlush::Ratelimited;
        b.policy.memcg_stats_flush_ms = 445;
        b.policy.pgdat_dirty_guard = false;
        b.policy.memcg_stats_cpus = 2;
        assert_eq!(
            set_flags(&a, &b),
            [
                "policy.memcg_stats_cpus=2",
                "policy.memcg_stats_flush=ratelimited",
                "policy.memcg_stats_flush_ms=445",
                "policy.pgdat_dirty_guard=false",
            ]
        );
        // Back to the defaults, which the machine does not write: the zero
        // and, for a flag serde skips at true, true.
        let back = set_flags(&b, &a);
        assert_eq!(back[0], "policy.memcg_stats_cpus=0");
        assert_eq!(back[3], "policy.pgdat_dirty_guard=true");
        // A table the recorded machine lacks: each of its leaves.
        let mut c = a.clone();
        c.thp.enabled = mmsim_core::ThpEnabled::Always;
        let flags = set_flags(&a, &c);
        // Every leaf of the table, each at the value a default machine has.
        assert_eq!(
            flags,
            [
                "thp.defrag=madvise",
                "thp.enabled=always",
                "thp.hugepages-1024kB.enabled=never",
                "thp.hugepages-128kB.enabled=never",
                "thp.hugepages-16kB.enabled=never",
                "thp.hugepages-2048kB.enabled=inherit",
                "thp.hugepages-256kB.enabled=never",
                "thp.hugepages-32kB.enabled=never",
                "thp.hugepages-512kB.enabled=never",
                "thp.hugepages-64kB.enabled=never",
                "thp.kernel=\"6.12\"",
                "thp.vma_advice=none",
            ]
        );
    }
}
