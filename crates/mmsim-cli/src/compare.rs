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
use mmsim_core::PolicyName;
use mmsim_workloads::ScenarioResult;

use mmsim_report::compare::{CompareReport, ConfigReport};
use mmsim_report::configs::{self, Axis, AxisFlags, AxisOrder, Config};
use mmsim_report::{export, published};

use crate::parallel::{self, Slot};
use crate::progress::Progress;
use crate::run::{self, ScenarioArgs};
use crate::{Outcome, UsageError};

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
    /// Run up to N simulations at once, one per core (default: all cores this process
    /// may use, fewer if their memory would not fit). Results and output are the same
    /// for every N.
    #[arg(long, short = 'j', value_name = "N", allow_hyphen_values = true)]
    pub jobs: Option<i64>,

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

fn bad(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// Parses the axes from the flags; `matches` (the subcommand's) gives their
/// command-line order, else `--policy`, `--cost-variant`, then the `--set`s. A flag
/// fixing a compared setting is an error.
fn axes(args: &CompareArgs, matches: Option<&ArgMatches>) -> Result<Vec<Axis>> {
    let order = matches.map(|m| AxisOrder {
        policy: m.index_of("policy"),
        cost_variant: m.index_of("cost_variant"),
        set: m.indices_of("set").map(|i| i.collect()).unwrap_or_default(),
    });
    let axes = configs::axes(&AxisFlags {
        policy: args.policy.as_deref(),
        cost_variant: args.cost_variant.as_deref(),
        set: &args.set,
        order,
    })?;
    let s = &args.scenario;
    let fixed = [
        ("--memory", s.memory.is_some(), "memory"),
        ("--memcg-max", s.memcg_max.is_some(), "memcg_max"),
        ("--swap", s.swap.is_some(), "swap"),
        ("--swap-size", s.swap_size.is_some(), "swap.size"),
        ("--swappiness", s.swappiness.is_some(), "swappiness"),
    ];
    configs::check_fixed(&axes, &fixed)?;
    Ok(axes)
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
    let configs: Vec<Config> = configs::configs(
        base,
        &axes,
        |s, e| {
            run::validate(s, &args.scenario)
                .err()
                .unwrap_or_else(|| e.into())
        },
        |s| crate::host::check(s, args.scenario.host_memory),
    )?;
    let seed = base.seed;
    if seed.checked_add(u64::from(repeat) - 1).is_none() {
        return Err(bad(format!(
            "--seed {seed} with --repeat {repeat}: the seeds seed, seed+1, … overflow"
        )));
    }
    let mut notes = plan.notes.clone();
    if let Some(spec) = &base.sample {
        // Every configuration runs the same sample: say so above the table.
        notes.insert(0, mmsim_workloads::sample::note(spec.rate));
    }
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
    let axis_reports = axes.iter().map(Axis::report).collect();
    let mut report = CompareReport::new(
        base.name.clone(),
        seed,
        repeat,
        base.warmup_events.unwrap_or(0),
        axis_reports,
    );
    let reports = &mut report.configs;
    let scenarios: Vec<mmsim_workloads::Scenario> = configs
        .iter()
        .flat_map(|c| {
            (0..repeat).map(move |r| {
                let mut s = c.scenario.clone();
                s.seed = seed + u64::from(r);
                s
            })
        })
        .collect();
    let jobs = parallel::jobs(args.jobs, &scenarios, &mut notes)?;
    let seed_note = |r: u32| {
        if repeat > 1 {
            format!(" seed {}", seed + u64::from(r))
        } else {
            String::new()
        }
    };
    let label = |i: usize| {
        let (c, r) = (i / repeat as usize, i as u32 % repeat);
        format!(
            "[{}/{}] {}{}",
            c + 1,
            configs.len(),
            configs[c].name,
            seed_note(r)
        )
    };
    let mut slots = parallel::run_all(&scenarios, jobs, &mut progress, &label).into_iter();
    let mut partial = false;
    'configs: for c in &configs {
        let mut results: Vec<ScenarioResult> = Vec::with_capacity(repeat as usize);
        for r in 0..repeat {
            match slots.next() {
                Some(Slot::Ran(result)) => {
                    let result = *result?;
                    partial = result.partial;
                    if partial {
                        eprintln!(
                            "interrupted: {}{} stopped after {} events; printing \
                             the PARTIAL comparison",
                            c.name,
                            seed_note(r),
                            result.events
                        );
                    }
                    results.push(result);
                }
                _ => partial = true,
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
/// [`configs::published_flags`]) in place of the absent axis flags.
fn with_published_axes(
    args: &CompareArgs,
    entries: &[mmsim_workloads::published::Published],
) -> CompareArgs {
    let mut a = args.clone();
    let (policy, cost_variant, set) = configs::published_flags(entries);
    a.policy = a.policy.or(policy);
    a.cost_variant = a.cost_variant.or(cost_variant);
    a.set.extend(set);
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
        let c = configs::configs(
            &mmsim_workloads::default_scenario(),
            &axes,
            |_, e| anyhow::Error::new(e),
            |_| Ok(()),
        )
        .unwrap();
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
