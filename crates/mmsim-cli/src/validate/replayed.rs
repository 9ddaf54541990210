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
/// leaf the simulated machine does not write (an integer or flag left at
/// its zero default) is set to 0 or false.
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
            (x, Some(y)) if x != Some(y) => out.push(format!("{key}={}", shown(y))),
            (Some(toml::Value::Integer(_)), None) => out.push(format!("{key}=0")),
            (Some(toml::Value::Boolean(_)), None) => out.push(format!("{key}=false")),
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
        // Back to the zero default, which the machine does not write.
        assert_eq!(set_flags(&b, &a)[0], "policy.memcg_stats_cpus=0");
    }
}
