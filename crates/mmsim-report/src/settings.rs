//! Configuration settings written into a scenario's machine: what a compared axis value
//! (`mmsim compare --set KEY=V1,V2`) or a published result's `key=value` pair does.
//!
//! A value is written into the scenario's `[machine]` table as a TOML value (numbers
//! and booleans as such, anything else as a string, [`toml_value`]) and the machine is
//! read back as the scenario reader reads it ([`set_machine`]), so a bad key or value
//! gets the reader's message (an unknown key lists the allowed ones). `policy` and
//! `cost_variant` are the short keys of `policy.name` and `policy.cost_variant`
//! ([`apply`]).

use mmsim_core::{CostVariant, MachineConfig, PolicyName};

/// The value typing and machine writing of `mmsim run --set`, shared with the
/// scenario overrides so that both read a setting the same way.
pub use mmsim_workloads::scenario::overrides::{set_machine, toml_value};

/// The `[machine]` path a configuration key sets: `policy` is `policy.name`,
/// `cost_variant` is `policy.cost_variant`, any other key is its own path.
pub fn machine_path(key: &str) -> &str {
    match key {
        "policy" => "policy.name",
        "cost_variant" => "policy.cost_variant",
        k => k,
    }
}

/// Writes the setting `key=value` (a configuration name's pair) into `m`; the error
/// says what is wrong with the value.
pub fn apply(m: &mut MachineConfig, key: &str, value: &str) -> Result<(), String> {
    match key {
        "policy" => m.policy.name = value.parse::<PolicyName>()?,
        "cost_variant" => m.policy.cost_variant = value.parse::<CostVariant>()?,
        k => {
            *m = set_machine(
                m,
                k.strip_prefix("machine.").unwrap_or(k),
                &toml_value(value),
            )?
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_apply_to_the_machine() {
        let mut m = MachineConfig::default();
        apply(&mut m, "policy", "scanned-rotated").unwrap();
        assert_eq!(m.policy.name, PolicyName::ScannedRotated);
        apply(&mut m, "cost_variant", "v5.8").unwrap();
        assert_eq!(m.policy.cost_variant, CostVariant::V5_8);
        apply(&mut m, "swappiness", "115").unwrap();
        assert_eq!(m.swappiness, 115);
        apply(&mut m, "machine.page_cluster", "0").unwrap();
        assert_eq!(m.page_cluster, 0);
        let e = apply(&mut m, "policy", "fifo").unwrap_err();
        assert!(e.contains("fifo"), "{e}");
        let e = apply(&mut m, "swapiness", "1").unwrap_err();
        assert!(e.contains("unknown field `swapiness`"), "{e}");
        assert_eq!(machine_path("policy"), "policy.name");
        assert_eq!(machine_path("swap.device"), "swap.device");
    }
}
