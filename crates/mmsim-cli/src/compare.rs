//! `mmsim compare`: one scenario under several configurations, compared metric by
//! metric in the style of mmtests' compare-kernels.
//!
//! The scenario is chosen and adjusted by the same flags as `mmsim run`
//! ([`ScenarioArgs`]). The configurations are the cartesian product of the compared
//! axes, `--policy`, `--cost-variant` and `--set KEY=V1,V2,...`, in command-line order,
//! the first axis varying slowest; the first configuration is the baseline. A `--set`
//! value is written into the scenario's `[machine]` table as a TOML value (numbers and
//! booleans as such, anything else as a string) and the machine is read back and
//! validated, so a bad key or value is reported with the field name and allowed range
//! exactly as in a scenario file.

use std::io::Write;

use anyhow::Result;
use clap::{ArgMatches, Args};
use mmsim_core::{CostVariant, PolicyName};
use mmsim_workloads::{Scenario, ScenarioResult};

use mmsim_report::compare::{
    combination, config_name, AxisReport, CompareReport, ConfigReport, Setting,
};
use mmsim_report::settings::{set_machine, toml_value};
use mmsim_report::{export, published};

use crate::progress::{self, Progress};
use crate::run::{self, ScenarioArgs};
use crate::{Outcome, UsageError};

/// Most configurations one comparison may have.
const MAX_CONFIGS: usize = 1000;
/// Most runs of each configuration.
const MAX_REPEAT: u32 = 1000;

/// Flags of `mmsim compare`.
#[derive(Args, Clone, Debug, Default)]
pub struct CompareArgs {
    /// The scenario and the machine overrides common to every configuration.
    #[command(flatten)]
    pub scenario: ScenarioArgs,

    /// Policies to compare, comma-separated: lru, scanned-rotated, cost (alias classic),
    /// mglru.
    #[arg(long, value_name = "P1,P2,...", allow_hyphen_values = true)]
    pub policy: Option<String>,
    /// Cost weightings to compare, comma-separated: v5.8, v6.2.
    #[arg(long, value_name = "V1,V2,...", allow_hyphen_values = true)]
    pub cost_variant: Option<String>,
    /// A machine setting to compare: a `[machine]` key of the scenario, dotted for its
    /// sub-tables, and comma-separated values (swappiness=60,115; memory=6G,7G;
    /// page_cluster=0,3; swap.device=zram,ssd; memcg_max=…; fs.device=…). Repeatable.
    #[arg(long = "set", value_name = "KEY=V1,V2,...", allow_hyphen_values = true)]
    pub set: Vec<String>,
    /// Run each configuration N times, with seeds seed, seed+1, …: the table shows
    /// Min, Amean, Stddev (sample) and Max, and the changes of the means.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        allow_hyphen_values = true
    )]
    pub repeat: i64,

    /// Print every run as JSON: each configuration's name, settings, metrics,
    /// statistics and full result.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the table's data as CSV: metric, config, value (the mean over the runs),
    /// runs, min, max, stddev, change_pct (of the means, against the baseline).
    #[arg(long)]
    pub csv: bool,
    /// No notes and no progress; only the table.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also write an HTML report to this file: the table, the published results with
    /// agree/disagree marks, charts over simulated time with the configurations
    /// overlaid, and the scenario. Turns the stats sampler on (results do not change).
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<std::path::PathBuf>,
}

/// What one value of an axis does to the machine.
#[derive(Clone, Debug)]
enum Apply {
    Policy(PolicyName),
    Variant(CostVariant),
    Toml(toml::Value),
}

/// One value of a compared axis.
#[derive(Clone, Debug)]
struct AxisValue {
    /// As given (canonical for policies and variants).
    text: String,
    apply: Apply,
}

/// A compared axis.
#[derive(Clone, Debug)]
struct Axis {
    /// Short name for configuration names: `policy`, `cost_variant`, or the `--set` key.
    key: String,
    /// The `[machine]` path it sets: `policy.name`, `swappiness`, `swap.device`.
    path: String,
    /// `--policy` or `--set KEY`.
    flag: String,
    values: Vec<AxisValue>,
    /// Position on the command line, for the axis order.
    index: usize,
}

impl Axis {
    /// The flag and one value, as the user would write them (`--set swappiness=300`).
    fn flag_with(&self, value: &str) -> String {
        match self.flag.strip_prefix("--set ") {
            Some(key) => format!("--set {key}={value}"),
            None => format!("{} {value}", self.flag),
        }
    }
}

fn bad(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// Whether two `[machine]` paths set overlapping values (equal, or one inside the
/// other's table).
fn overlap(a: &str, b: &str) -> bool {
    a == b || a.starts_with(&format!("{b}.")) || b.starts_with(&format!("{a}."))
}

/// The comma-separated items of a list flag: none empty.
fn items<'a>(what: &str, raw: &'a str) -> Result<Vec<&'a str>> {
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
fn no_duplicates(what: &str, values: &[AxisValue]) -> Result<()> {
    for (i, v) in values.iter().enumerate() {
        if values[..i].iter().any(|w| w.text == v.text) {
            return Err(bad(format!("{what}: `{}` is listed twice", v.text)));
        }
    }
    Ok(())
}

/// Parses the axes from the flags; `matches` (the subcommand's) gives their
/// command-line order, else `--policy`, `--cost-variant`, then the `--set`s.
fn axes(args: &CompareArgs, matches: Option<&ArgMatches>) -> Result<Vec<Axis>> {
    let index =
        |id: &str, fallback: usize| matches.and_then(|m| m.index_of(id)).unwrap_or(fallback);
    let mut axes = Vec::new();
    if let Some(raw) = &args.policy {
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
            .collect::<Result<Vec<_>>>()?;
        no_duplicates(&what, &values)?;
        axes.push(Axis {
            key: "policy".into(),
            path: "policy.name".into(),
            flag: "--policy".into(),
            values,
            index: index("policy", 0),
        });
    }
    if let Some(raw) = &args.cost_variant {
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
            .collect::<Result<Vec<_>>>()?;
        no_duplicates(&what, &values)?;
        axes.push(Axis {
            key: "cost_variant".into(),
            path: "policy.cost_variant".into(),
            flag: "--cost-variant".into(),
            values,
            index: index("cost_variant", 1),
        });
    }
    let set_indices: Vec<usize> = matches
        .and_then(|m| m.indices_of("set"))
        .map(|i| i.collect())
        .unwrap_or_default();
    for (i, raw) in args.set.iter().enumerate() {
        let what = format!("--set {raw}");
        let Some((key, list)) = raw.split_once('=') else {
            return Err(bad(format!(
                "{what}: expected KEY=V1,V2,... with a [machine] key, e.g. swappiness=60,115"
            )));
        };
        let key = key.trim();
        let key = key.strip_prefix("machine.").unwrap_or(key);
        let well_formed = key.split('.').all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
        if !well_formed {
            return Err(bad(format!(
                "{what}: `{key}` is not a [machine] key; keys are like swappiness, memory, \
                 page_cluster, swap.device"
            )));
        }
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
    let s = &args.scenario;
    let fixed = [
        ("--memory", s.memory.is_some(), "memory"),
        ("--memcg-max", s.memcg_max.is_some(), "memcg_max"),
        ("--swap", s.swap.is_some(), "swap"),
        ("--swap-size", s.swap_size.is_some(), "swap.size"),
        ("--swappiness", s.swappiness.is_some(), "swappiness"),
    ];
    for (flag, given, path) in fixed {
        if let Some(a) = axes.iter().find(|a| given && overlap(&a.path, path)) {
            return Err(bad(format!(
                "{flag} conflicts with {}: the setting is compared, so it cannot also be \
                 fixed; drop {flag}",
                a.flag
            )));
        }
    }
    Ok(axes)
}

/// One configuration to run.
struct Config {
    name: String,
    settings: Vec<Setting>,
    scenario: Scenario,
}

/// The configurations: the product of the axes' values applied to `base`, each
/// validated.
fn configs(base: &Scenario, axes: &[Axis], args: &ScenarioArgs) -> Result<Vec<Config>> {
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
                return Err(anyhow::Error::new(e).context(a.flag_with(&a.values[j].text)));
            }
            run::validate(&s, args)?;
        }
        crate::host::check(&s, args.host_memory)?;
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

/// Runs the comparison; the report, the notes for the table, and the scenario as TOML
/// (before the compared settings).
fn compare_report(
    args: &CompareArgs,
    matches: Option<&ArgMatches>,
) -> Result<(CompareReport, Vec<String>, String)> {
    let repeat = u32::try_from(args.repeat)
        .ok()
        .filter(|r| (1..=MAX_REPEAT).contains(r))
        .ok_or_else(|| {
            bad(format!(
                "--repeat {}: out of range [1, {MAX_REPEAT}]",
                args.repeat
            ))
        })?;
    let mut plan = run::plan(&args.scenario)?;
    let toml = plan.scenario.to_toml_string();
    if let Some(path) = &args.report {
        mmsim_report::html::check_path(path).map_err(bad)?;
        mmsim_report::html::enable_sampling(&mut plan.scenario.machine);
    }
    let base = &plan.scenario;
    published::check_metrics(base).map_err(|(field, message)| {
        anyhow::Error::new(mmsim_workloads::WorkloadError::Invalid {
            file: base.source.clone(),
            field,
            message,
        })
    })?;
    // Without axis flags, compare what the scenario's published results compare.
    let derived;
    let (args, matches) = if args.policy.is_none()
        && args.cost_variant.is_none()
        && args.set.is_empty()
        && !base.published.is_empty()
    {
        derived = with_published_axes(args, &base.published);
        (&derived, None)
    } else {
        (args, matches)
    };
    let axes = axes(args, matches)?;
    let configs = configs(base, &axes, &args.scenario)?;
    let seed = base.seed;
    if seed.checked_add(u64::from(repeat) - 1).is_none() {
        return Err(bad(format!(
            "--seed {seed} with --repeat {repeat}: the seeds seed, seed+1, … overflow"
        )));
    }
    let mut notes = plan.notes.clone();
    if axes.iter().any(|a| a.key == "cost_variant") {
        let mut others: Vec<&str> = configs
            .iter()
            .map(|c| c.scenario.machine.policy.name)
            .filter(|&p| p != PolicyName::Cost)
            .map(PolicyName::name)
            .collect();
        others.sort_unstable();
        others.dedup();
        if !others.is_empty() {
            notes.push(format!(
                "the cost variant applies to the cost policy only: under {} the variants \
                 behave identically",
                others.join(", ")
            ));
        }
    }

    let runs = configs.len() as u64 * u64::from(repeat);
    if runs > 1 && args.scenario.trace.as_deref() == Some(std::path::Path::new("-")) {
        return Err(UsageError(format!(
            "--trace -: standard input can be read once, and compare runs {runs} times; \
             save the trace to a file (or `mmsim trace convert - FILE`)"
        ))
        .into());
    }
    let total = base.expected_events().and_then(|e| e.checked_mul(runs));
    let mut progress = Progress::new(run::show_progress(args.quiet), total);
    let axis_reports = axes
        .iter()
        .map(|a| AxisReport {
            key: a.key.clone(),
            flag: a.flag.clone(),
            values: a.values.iter().map(|v| v.text.clone()).collect(),
        })
        .collect();
    let mut report = CompareReport::new(
        base.name.clone(),
        seed,
        repeat,
        base.warmup_events.unwrap_or(0),
        axis_reports,
    );
    let reports = &mut report.configs;
    let mut partial = false;
    'configs: for (i, c) in configs.iter().enumerate() {
        let mut results: Vec<ScenarioResult> = Vec::with_capacity(repeat as usize);
        for r in 0..repeat {
            if progress::cancelled() {
                partial = true;
            } else {
                let mut s = c.scenario.clone();
                s.seed = seed + u64::from(r);
                let seed_note = if repeat > 1 {
                    format!(" seed {}", s.seed)
                } else {
                    String::new()
                };
                progress.set_label(format!(
                    "[{}/{}] {}{seed_note}",
                    i + 1,
                    configs.len(),
                    c.name
                ));
                let result = run::run_with_progress(&s, &mut progress)?;
                partial = result.partial;
                if partial {
                    eprintln!(
                        "interrupted: {}{seed_note} stopped after {} events; printing \
                         the PARTIAL comparison",
                        c.name, result.events
                    );
                }
                results.push(result);
            }
            if partial {
                if !results.is_empty() {
                    reports.push(ConfigReport::new(
                        c.name.clone(),
                        c.settings.clone(),
                        &results,
                    ));
                }
                break 'configs;
            }
        }
        reports.push(ConfigReport::new(
            c.name.clone(),
            c.settings.clone(),
            &results,
        ));
    }
    progress.clear();
    report.partial = partial;

    // Per-group metrics only for the groups every run has; the published rows.
    notes.extend(report.finish(&base.published));
    Ok((report, notes, toml))
}

/// `args` with the axes of the scenario's published results (see
/// [`published::axes`]) in place of the absent axis flags.
fn with_published_axes(
    args: &CompareArgs,
    entries: &[mmsim_workloads::published::Published],
) -> CompareArgs {
    let mut a = args.clone();
    for (key, values) in published::axes(entries) {
        let list = values.join(",");
        match key.as_str() {
            "policy" => a.policy = Some(list),
            "cost_variant" => a.cost_variant = Some(list),
            _ => a.set.push(format!("{key}={list}")),
        }
    }
    a
}

/// `mmsim compare`; `matches` are the subcommand's, for the order of the axes.
pub fn compare(args: CompareArgs, matches: Option<&ArgMatches>) -> Result<Outcome> {
    let (report, notes, toml) = compare_report(&args, matches)?;
    if let Some(path) = &args.report {
        let page = mmsim_report::html::compare_page(&report, &toml);
        mmsim_report::html::write(path, &page).map_err(bad)?;
    }
    let mut out = crate::output::stdout();
    if args.json {
        export::json::write_compare(&mut out, &report)?;
    } else if args.csv {
        export::csv::write_compare(&mut out, &report)?;
    } else {
        let notes: &[String] = if args.quiet { &[] } else { &notes };
        export::text::write_compare(&mut out, &report, notes)?;
    }
    out.flush()?;
    Ok(if report.partial {
        Outcome::Interrupted
    } else {
        Outcome::Complete
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mmsim_core::MachineConfig;

    fn small() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("small.toml");
        std::fs::write(
            &path,
            "seed = 4\n[machine]\nmemory = \"64M\"\nswappiness = 100\n\
             [machine.swap]\ndevice = \"zram\"\nsize = \"64M\"\n\
             [[workload]]\nkind = \"zipf\"\ntarget = \"file\"\npages = \"96M\"\ntheta = 0.9\naccesses = 30000\n\
             [[workload]]\nkind = \"uniform\"\ntarget = \"anon\"\npages = \"48M\"\naccesses = 30000\n",
        )
        .unwrap();
        let p = path.to_str().unwrap().to_string();
        (dir, p)
    }

    fn args(path: &str) -> CompareArgs {
        CompareArgs {
            scenario: ScenarioArgs {
                scenario: Some(path.into()),
                ..ScenarioArgs::default()
            },
            ..CompareArgs::default()
        }
    }

    #[test]
    fn json_report_round_trips() {
        let (_dir, p) = small();
        let mut a = args(&p);
        a.policy = Some("scanned-rotated,cost".into());
        a.set = vec!["page_cluster=0,3".into()];
        a.repeat = 2;
        let (report, _, _) = compare_report(&a, None).unwrap();
        assert_eq!(report.configs.len(), 4);
        assert_eq!(
            report.configs[1].name,
            "policy=scanned-rotated,page_cluster=3"
        );
        assert_eq!(report.configs[0].runs[1].seed, 5);
        let text = serde_json::to_string_pretty(&report).unwrap();
        let back: CompareReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, report);
        assert_eq!(serde_json::to_string_pretty(&back).unwrap(), text);
    }

    #[test]
    fn set_machine_round_trips_every_embedded_machine() {
        for (name, _) in mmsim_workloads::EMBEDDED_SCENARIOS {
            let s = mmsim_workloads::embedded_scenario(name).unwrap().unwrap();
            let m = &s.machine;
            let same = set_machine(m, "swappiness", &toml::Value::Integer(m.swappiness.into()));
            assert_eq!(same.as_ref(), Ok(m), "{name}");
        }
        let m = MachineConfig::default();
        let z = set_machine(&m, "swap.device", &toml_value("zram")).unwrap();
        assert_eq!(z.swap.device, mmsim_core::DeviceKind::Zram);
        let e = set_machine(&m, "swapiness", &toml_value("1")).unwrap_err();
        assert!(e.contains("unknown field `swapiness`"), "{e}");
        let e = set_machine(&m, "swappiness.x", &toml_value("1")).unwrap_err();
        assert!(e.contains("`swappiness` is a value"), "{e}");
    }

    #[test]
    fn axes_follow_the_command_line_order() {
        use clap::{CommandFactory, FromArgMatches};
        let argv = [
            "mmsim",
            "compare",
            "--set",
            "swappiness=10,20",
            "--policy",
            "cost,lru",
            "--set",
            "page_cluster=1,2",
        ];
        let m = crate::Cli::command().get_matches_from(argv);
        let sub = m.subcommand_matches("compare").unwrap();
        let a = CompareArgs::from_arg_matches(sub).unwrap();
        let axes = axes(&a, Some(sub)).unwrap();
        let keys: Vec<_> = axes.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, ["swappiness", "policy", "page_cluster"]);
        let c = configs(&mmsim_workloads::default_scenario(), &axes, &a.scenario).unwrap();
        let names: Vec<_> = c.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "swappiness=10,policy=cost,page_cluster=1",
                "swappiness=10,policy=cost,page_cluster=2",
                "swappiness=10,policy=lru,page_cluster=1",
                "swappiness=10,policy=lru,page_cluster=2",
                "swappiness=20,policy=cost,page_cluster=1",
                "swappiness=20,policy=cost,page_cluster=2",
                "swappiness=20,policy=lru,page_cluster=1",
                "swappiness=20,policy=lru,page_cluster=2",
            ]
        );
        assert_eq!(c[5].scenario.machine.swappiness, 20);
        assert_eq!(c[5].scenario.machine.page_cluster, 2);
        assert_eq!(c[5].scenario.machine.policy.name, PolicyName::Cost);
    }
}
