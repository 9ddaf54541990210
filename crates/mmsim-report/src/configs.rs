//! The configurations of a comparison (`mmsim compare`, Python's `mmsim.compare`): the
//! compared axes parsed from their value lists (`--policy a,b`, `--cost-variant
//! v5.8,v6.2`, `--set KEY=V1,V2`), and their cartesian product applied to a base
//! scenario, each configuration named and validated.
//!
//! A `--set` value is written into the scenario's `[machine]` table as a TOML value
//! (numbers and booleans as such, anything else as a string;
//! [`mmsim_workloads::scenario::overrides::set_machine`]) and the machine is read back
//! and validated, so a bad key or value is reported with the field name and allowed
//! range exactly as in a scenario file. Errors name the flag that gave the value.

use mmsim_core::{CostVariant, PolicyName};
use mmsim_workloads::published::Published;
use mmsim_workloads::scenario::overrides::{machine_key, set_machine, toml_value};
use mmsim_workloads::{Scenario, WorkloadError};

use crate::compare::{combination, config_name, AxisReport, Setting};

/// Most configurations one comparison may have.
pub const MAX_CONFIGS: usize = 1000;

/// The axis flags as given: each a comma-separated list, and where each stood on the
/// command line (the first axis varies slowest).
#[derive(Clone, Debug, Default)]
pub struct AxisFlags<'a> {
    /// `--policy P1,P2,...`.
    pub policy: Option<&'a str>,
    /// `--cost-variant V1,V2,...`.
    pub cost_variant: Option<&'a str>,
    /// Each `--set KEY=V1,V2,...`.
    pub set: &'a [String],
    /// Positions of `--policy`, `--cost-variant` and each `--set` on the command line;
    /// absent: `--policy`, `--cost-variant`, then the `--set`s in order.
    pub order: Option<AxisOrder>,
}

/// Positions of the axis flags on the command line.
#[derive(Clone, Debug, Default)]
pub struct AxisOrder {
    /// Of `--policy`.
    pub policy: Option<usize>,
    /// Of `--cost-variant`.
    pub cost_variant: Option<usize>,
    /// Of each `--set`, in order.
    pub set: Vec<usize>,
}

/// The axis lists of a scenario's published results ([`crate::published::axes`]) as
/// the flags would give them: `--policy`, `--cost-variant` and the `--set` items — what
/// a comparison without axis flags compares.
pub fn published_flags(entries: &[Published]) -> (Option<String>, Option<String>, Vec<String>) {
    let (mut policy, mut cost_variant, mut set) = (None, None, Vec::new());
    for (key, values) in crate::published::axes(entries) {
        let list = values.join(",");
        match key.as_str() {
            "policy" => policy = Some(list),
            "cost_variant" => cost_variant = Some(list),
            _ => set.push(format!("{key}={list}")),
        }
    }
    (policy, cost_variant, set)
}

fn bad(msg: impl Into<String>) -> WorkloadError {
    WorkloadError::Usage(msg.into())
}

/// What one value of an axis does to the machine.
#[derive(Clone, Debug)]
pub enum Apply {
    /// Sets `machine.policy.name`.
    Policy(PolicyName),
    /// Sets `machine.policy.cost_variant`.
    Variant(CostVariant),
    /// Writes the value at the axis's `[machine]` path.
    Toml(toml::Value),
}

/// One value of a compared axis.
#[derive(Clone, Debug)]
pub struct AxisValue {
    /// As given (canonical for policies and variants).
    pub text: String,
    /// What it does to the machine.
    pub apply: Apply,
}

/// A compared axis.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Short name for configuration names: `policy`, `cost_variant`, or the `--set` key.
    pub key: String,
    /// The `[machine]` path it sets: `policy.name`, `swappiness`, `swap.device`.
    pub path: String,
    /// `--policy` or `--set KEY`.
    pub flag: String,
    /// Its values, in the order given.
    pub values: Vec<AxisValue>,
    /// Position on the command line, for the axis order.
    pub index: usize,
}

impl Axis {
    /// The flag and one value, as the user would write them (`--set swappiness=300`).
    pub fn flag_with(&self, value: &str) -> String {
        match self.flag.strip_prefix("--set ") {
            Some(key) => format!("--set {key}={value}"),
            None => format!("{} {value}", self.flag),
        }
    }

    /// The axis as the report shows it.
    pub fn report(&self) -> AxisReport {
        AxisReport {
            key: self.key.clone(),
            flag: self.flag.clone(),
            values: self.values.iter().map(|v| v.text.clone()).collect(),
        }
    }
}

/// Whether two `[machine]` paths set overlapping values (equal, or one inside the
/// other's table).
fn overlap(a: &str, b: &str) -> bool {
    a == b || a.starts_with(&format!("{b}.")) || b.starts_with(&format!("{a}."))
}

/// The comma-separated items of a list flag: none empty.
fn items<'a>(what: &str, raw: &'a str) -> Result<Vec<&'a str>, WorkloadError> {
    if raw.trim().is_empty() {
        return Err(bad(format!(
            "{what}: empty list; give one or more values separated by commas"
        )));
    }
    let items: Vec<&str> = raw.split(',').map(str::trim).collect();
    if items.iter().any(|i| i.is_empty()) {
        return Err(bad(format!(
            "{what}: empty value in the list `{raw}`; separate values by single commas"
        )));
    }
    Ok(items)
}

/// Rejects a value listed twice (the configurations would be the same).
fn no_duplicates(what: &str, values: &[AxisValue]) -> Result<(), WorkloadError> {
    for (i, v) in values.iter().enumerate() {
        if values[..i].iter().any(|w| w.text == v.text) {
            return Err(bad(format!("{what}: `{}` is listed twice", v.text)));
        }
    }
    Ok(())
}

/// Parses the axes from the flags, in their command-line order ([`AxisFlags::order`]),
/// else `--policy`, `--cost-variant`, then the `--set`s; rejects an empty list, a value
/// given twice, no axis at all, and two axes setting the same `[machine]` value.
pub fn axes(args: &AxisFlags<'_>) -> Result<Vec<Axis>, WorkloadError> {
    let order = args.order.as_ref();
    let mut axes = Vec::new();
    if let Some(raw) = args.policy {
        let what = format!("--policy {raw}");
        let values = items(&what, raw)?
            .into_iter()
            .map(|v| {
                let p: PolicyName = v.parse().map_err(|e: String| bad(format!("{what}: {e}")))?;
                Ok(AxisValue {
                    text: p.name().to_string(),
                    apply: Apply::Policy(p),
                })
            })
            .collect::<Result<Vec<_>, WorkloadError>>()?;
        no_duplicates(&what, &values)?;
        axes.push(Axis {
            key: "policy".into(),
            path: "policy.name".into(),
            flag: "--policy".into(),
            values,
            index: order.and_then(|o| o.policy).unwrap_or(0),
        });
    }
    if let Some(raw) = args.cost_variant {
        let what = format!("--cost-variant {raw}");
        let values = items(&what, raw)?
            .into_iter()
            .map(|v| {
                let c: CostVariant = v.parse().map_err(|e: String| bad(format!("{what}: {e}")))?;
                let text = match c {
                    CostVariant::V5_8 => "v5.8",
                    CostVariant::V6_2 => "v6.2",
                };
                Ok(AxisValue {
                    text: text.into(),
                    apply: Apply::Variant(c),
                })
            })
            .collect::<Result<Vec<_>, WorkloadError>>()?;
        no_duplicates(&what, &values)?;
        axes.push(Axis {
            key: "cost_variant".into(),
            path: "policy.cost_variant".into(),
            flag: "--cost-variant".into(),
            values,
            index: order.and_then(|o| o.cost_variant).unwrap_or(1),
        });
    }
    let set_indices: &[usize] = order.map_or(&[], |o| &o.set);
    for (i, raw) in args.set.iter().enumerate() {
        let what = format!("--set {raw}");
        let Some((key, list)) = raw.split_once('=') else {
            return Err(bad(format!(
                "{what}: expected KEY=V1,V2,... with a [machine] key, e.g. swappiness=60,115"
            )));
        };
        let key = machine_key(&what, key)?;
        let values: Vec<AxisValue> = items(&what, list)?
            .into_iter()
            .map(|v| AxisValue {
                text: v.to_string(),
                apply: Apply::Toml(toml_value(v)),
            })
            .collect();
        no_duplicates(&what, &values)?;
        axes.push(Axis {
            key: key.to_string(),
            path: key.to_string(),
            flag: format!("--set {key}"),
            values,
            index: set_indices.get(i).copied().unwrap_or(2 + i),
        });
    }
    if axes.is_empty() {
        return Err(bad(
            "nothing to compare: give --policy, --cost-variant or --set with the values to \
             compare, e.g. --policy scanned-rotated,cost",
        ));
    }
    axes.sort_by_key(|a| a.index);
    for (i, a) in axes.iter().enumerate() {
        if let Some(b) = axes[..i].iter().find(|b| overlap(&a.path, &b.path)) {
            return Err(bad(format!(
                "{} and {}: duplicate axis: both set machine.{}; compare each setting once",
                b.flag,
                a.flag,
                if a.path.len() <= b.path.len() {
                    &a.path
                } else {
                    &b.path
                }
            )));
        }
    }
    Ok(axes)
}

/// Rejects a setting fixed by a flag that an axis also compares: `fixed` lists each
/// flag, whether it was given, and the `[machine]` path it sets.
pub fn check_fixed(axes: &[Axis], fixed: &[(&str, bool, &str)]) -> Result<(), WorkloadError> {
    for &(flag, given, path) in fixed {
        if let Some(a) = axes.iter().find(|a| given && overlap(&a.path, path)) {
            return Err(bad(format!(
                "{flag} conflicts with {}: the setting is compared, so it cannot also be \
                 fixed; drop {flag}",
                a.flag
            )));
        }
    }
    Ok(())
}

/// One configuration to run.
pub struct Config {
    /// Its name ([`config_name`]).
    pub name: String,
    /// Its settings, one per axis.
    pub settings: Vec<Setting>,
    /// The base scenario with the settings applied, validated.
    pub scenario: Scenario,
}

/// The configurations: the product of the axes' values applied to `base`, each
/// validated. A validation error about a compared setting names the axis's flag and
/// value; any other goes through `on_invalid` (which may name the flag that fixed the
/// field). `check` sees each valid configuration (e.g. against the host's memory).
pub fn configs<E: From<WorkloadError>>(
    base: &Scenario,
    axes: &[Axis],
    mut on_invalid: impl FnMut(&Scenario, WorkloadError) -> E,
    mut check: impl FnMut(&Scenario) -> Result<(), E>,
) -> Result<Vec<Config>, E> {
    let total = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
        .filter(|&n| n <= MAX_CONFIGS)
        .ok_or_else(|| {
            bad(format!(
                "{}: too many configurations; at most {MAX_CONFIGS}",
                axes.iter()
                    .map(|a| format!("{} ({} values)", a.flag, a.values.len()))
                    .collect::<Vec<_>>()
                    .join(" × ")
            ))
        })?;
    let sizes: Vec<usize> = axes.iter().map(|a| a.values.len()).collect();
    let mut out = Vec::with_capacity(total);
    for i in 0..total {
        let pick = combination(&sizes, i);
        let mut s = base.clone();
        let mut settings = Vec::with_capacity(axes.len());
        for (a, &j) in axes.iter().zip(&pick) {
            let v = &a.values[j];
            let m = &mut s.machine;
            match &v.apply {
                Apply::Policy(p) => m.policy.name = *p,
                Apply::Variant(c) => m.policy.cost_variant = *c,
                Apply::Toml(t) => {
                    *m = set_machine(m, &a.path, t).map_err(|e| {
                        bad(format!("{}: machine.{}: {e}", a.flag_with(&v.text), a.path))
                    })?;
                }
            }
            settings.push(Setting {
                key: a.path.clone(),
                value: v.text.clone(),
            });
        }
        if let Err(e) = s.validate() {
            let field = e.field().and_then(|f| f.strip_prefix("machine."));
            let axis =
                field.and_then(|f| axes.iter().zip(&pick).find(|(a, _)| overlap(&a.path, f)));
            if let Some((a, &j)) = axis {
                let flag = a.flag_with(&a.values[j].text);
                return Err(bad(format!("{flag}: {e}")).into());
            }
            return Err(on_invalid(&s, e));
        }
        check(&s)?;
        let name = config_name(
            axes.iter()
                .zip(&pick)
                .map(|(a, &j)| (a.key.as_str(), a.values[j].text.as_str())),
        );
        out.push(Config {
            name,
            settings,
            scenario: s,
        });
    }
    Ok(out)
}
