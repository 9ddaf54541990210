//! `mmsim reproduce [SEED|all]`: runs the published experiments ("seeds") and prints,
//! per seed, the published changes beside the simulated ones with the directions
//! judged, a verdict per seed and a summary (see `mmsim_report::reproduce`, which
//! plans, runs and judges; this module is the flags, the progress bar and the output).
//!
//! Exit status: 0 when no direction disagrees, [`EXIT_DISAGREES`] when one does (after
//! printing everything), 2 for an unknown seed, 130 when Ctrl-C stopped it (what ran is
//! printed, marked PARTIAL).

use std::io::Write;

use anyhow::Result;
use clap::Args;
use mmsim_report::export;
use mmsim_report::reproduce::{self, ReproduceReport};

use mmsim_workloads::Scenario;

use crate::parallel::{self, Slot};
use crate::progress::Progress;
use crate::{Outcome, UsageError};

/// Exit status when a simulated direction disagrees with a published one.
pub const EXIT_DISAGREES: u8 = 4;

/// Simulated events per host second assumed for the announced duration: the slowest
/// of the seeds' scenarios on one core of this project's 2-core VM (seed 004's
/// kbuild and eater models, 2.5 M events/s; the default scenario runs at 5.7 M/s).
const EVENTS_PER_SECOND: f64 = 2.5e6;

/// Flags of `mmsim reproduce`.
#[derive(Args, Clone, Debug, Default)]
pub struct ReproduceArgs {
    /// The seed to reproduce (`004` or `4`), or `all` (the default).
    #[arg(value_name = "SEED|all", default_value = "all")]
    pub seed: String,
    /// Run the scaled-down versions where a seed's scenario has one (all seeds in
    /// seconds); the others run as they are.
    #[arg(long)]
    pub quick: bool,
    /// Reproduce the published entries of this scenario file instead of the embedded
    /// ones (to try a new seed's scenario before embedding it): its entries' sources
    /// must start with `seed NNN`. Repeatable.
    #[arg(long, value_name = "FILE.toml")]
    pub scenario: Vec<std::path::PathBuf>,
    /// Print everything as JSON: per seed its verdict, experiments, judged rows and
    /// the comparison of each experiment (every run's whole result).
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the judged rows as CSV, full precision.
    #[arg(long)]
    pub csv: bool,
    /// Also write an HTML report to this file: per seed the verdict, per experiment the
    /// published table with agree/disagree marks, charts over simulated time with the
    /// configurations overlaid, and the scenario. Turns the stats sampler on (results do
    /// not change).
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<std::path::PathBuf>,
    /// No announcement and no progress; only the tables.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run up to N simulations at once, one per core (default: all cores this process
    /// may use, fewer if their memory would not fit). Results and output are the same
    /// for every N.
    #[arg(long, short = 'j', value_name = "N", allow_hyphen_values = true)]
    pub jobs: Option<i64>,
}

/// `mmsim reproduce`.
pub fn reproduce(args: ReproduceArgs) -> Result<Outcome> {
    if let Some(path) = &args.report {
        mmsim_report::html::check_path(path).map_err(UsageError)?;
    }
    let report = run(&args)?;
    if let Some(path) = &args.report {
        let page = mmsim_report::html::reproduce_page(&report);
        mmsim_report::html::write(path, &page).map_err(UsageError)?;
    }
    let mut out = crate::output::stdout();
    if args.json {
        out.write_all(export::json::to_string(&report)?.as_bytes())?;
    } else if args.csv {
        export::reproduce::write_reproduce_csv(&mut out, &report)?;
    } else {
        export::reproduce::write_reproduce(&mut out, &report)?;
    }
    out.flush()?;
    Ok(if report.partial {
        Outcome::Interrupted
    } else if report.disagrees() {
        Outcome::Disagrees
    } else {
        Outcome::Complete
    })
}

/// Plans and runs the reproduction with a progress bar.
fn run(args: &ReproduceArgs) -> Result<ReproduceReport> {
    if args.quick && !args.scenario.is_empty() {
        return Err(UsageError(
            "--quick and --scenario: a scenario file has no quick version; run it as it is".into(),
        )
        .into());
    }
    let planned = if args.scenario.is_empty() {
        reproduce::plan(&args.seed, args.quick)
    } else {
        let files = args
            .scenario
            .iter()
            .map(|p| mmsim_workloads::Scenario::from_file(p))
            .collect::<Result<Vec<_>, _>>()?;
        reproduce::plan_scenarios(&args.seed, files)
    };
    let mut plan = planned.map_err(|e| match e {
        reproduce::PlanError::UnknownSeed(m) => anyhow::Error::new(UsageError(m)),
        reproduce::PlanError::Scenario(w) => anyhow::Error::new(w),
        e @ reproduce::PlanError::Setting { .. } => anyhow::Error::new(UsageError(e.to_string())),
    })?;
    for c in plan.iter_mut().flat_map(|e| &mut e.configs) {
        crate::host::check(&c.scenario, None)?;
        if args.report.is_some() {
            mmsim_report::html::enable_sampling(&mut c.scenario.machine);
        }
    }
    let scenarios: Vec<Scenario> = plan
        .iter()
        .flat_map(|e| e.configs.iter().map(|c| c.scenario.clone()))
        .collect();
    let mut notes = Vec::new();
    let jobs = parallel::jobs(args.jobs, &scenarios, &mut notes)?;
    if !args.quiet {
        for n in notes {
            eprintln!("note: {n}");
        }
    }
    let runs: usize = plan.iter().map(|e| e.configs.len()).sum();
    let total = reproduce::expected_events(&plan);
    if !args.quiet && !args.quick {
        let mut seeds: Vec<&str> = plan.iter().map(|e| e.seed.as_str()).collect();
        seeds.dedup();
        let duration = total.map_or("an unknown time".to_string(), |n| {
            format!(
                "about {:.0} s ({:.0} M events)",
                (n as f64 / EVENTS_PER_SECOND).max(1.0),
                n as f64 / 1e6
            )
        });
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        eprintln!(
            "reproducing seed{} {}: {}, {} at full scale, {duration} on one core, run on \
             all cores (--quick: the scaled-down versions)",
            if seeds.len() == 1 { "" } else { "s" },
            seeds.join(", "),
            plural(plan.len(), "experiment"),
            plural(runs, "run"),
        );
    }
    let labels: Vec<String> = plan
        .iter()
        .flat_map(|e| {
            e.configs
                .iter()
                .map(move |c| format!("seed {} {} {}", e.seed, e.scenario, c.name))
        })
        .collect();
    let label = |i: usize| format!("[{}/{runs}] {}", i + 1, labels[i]);
    let mut bar = Progress::new(crate::run::show_progress(args.quiet), total);
    let mut slots: Vec<Option<Slot>> = parallel::run_all(&scenarios, jobs, &mut bar, &label)
        .into_iter()
        .map(Some)
        .collect();
    let report = reproduce::run(&plan, args.quick, |_, _, i, _| {
        match slots[i].take() {
            Some(Slot::Ran(r)) => {
                let r = *r?;
                if r.partial {
                    eprintln!(
                        "interrupted: {} stopped after {} events; printing the PARTIAL \
                         reproduction",
                        labels[i], r.events
                    );
                }
                Ok(r)
            }
            // Ctrl-C came after the runs before this one had finished, and before
            // this one started: nothing partial to print.
            _ => Err(anyhow::Error::new(crate::progress::Interrupted)),
        }
    });
    bar.clear();
    report
}
