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

/// A `--set` value as TOML reads it: an integer, float or boolean, a quoted string, or
/// else the text as a string (`6G`, `zram`).
pub fn toml_value(raw: &str) -> toml::Value {
    match format!("v = {raw}").parse::<toml::Table>() {
        Ok(mut t) => match t.remove("v") {
            Some(
                v @ (toml::Value::Integer(_)
                | toml::Value::Float(_)
                | toml::Value::Boolean(_)
                | toml::Value::String(_)),
            ) => v,
            _ => toml::Value::String(raw.to_string()),
        },
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

/// `machine` with `[machine] path = value`, read back as the scenario reader reads it;
/// the error is the reader's message (an unknown key lists the allowed ones).
pub fn set_machine(
    m: &MachineConfig,
    path: &str,
    value: &toml::Value,
) -> Result<MachineConfig, String> {
    let mut root = toml::Table::try_from(m).map_err(|e| e.to_string())?;
    let parts: Vec<&str> = path.split('.').collect();
    let (last, tables) = parts.split_last().ok_or("empty key")?;
    let mut t = &mut root;
    for (i, p) in tables.iter().enumerate() {
        let entry = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        t = match entry {
            toml::Value::Table(t) => t,
            _ => {
                return Err(format!(
                    "`{}` is a value, not a table",
                    parts[..=i].join(".")
                ))
            }
        };
    }
    t.insert(last.to_string(), value.clone());
    toml::Value::Table(root)
        .try_into::<MachineConfig>()
        .map_err(|e| e.message().trim().to_string())
}

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
    fn values_are_typed_as_toml_reads_them() {
        assert_eq!(toml_value("60"), toml::Value::Integer(60));
        assert_eq!(toml_value("0.5"), toml::Value::Float(0.5));
        assert_eq!(toml_value("true"), toml::Value::Boolean(true));
        assert_eq!(toml_value("6G"), toml::Value::String("6G".into()));
        assert_eq!(toml_value("\"60\""), toml::Value::String("60".into()));
        assert_eq!(toml_value("zram"), toml::Value::String("zram".into()));
    }

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
