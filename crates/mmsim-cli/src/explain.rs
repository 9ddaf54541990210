//! `mmsim explain`: a page's life story, event by event, in the kernel's terms
//! (`mmsim_core::explain`). The scenario comes from the same flags as `run`.
//! `--page FILE:INDEX|TASK:0xVADDR` names pages; `--top N` runs the scenario
//! twice: a first pass counts every page's refaults, a second (the same
//! deterministic run) records the N most refaulted pages' stories.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use mmsim_core::explain::{ExplainConfig, ExplainReport, PageStory};
use mmsim_core::{CostVariant, PolicyName};
use mmsim_workloads::Scenario;

use crate::progress::Progress;
use crate::run::{self, ScenarioArgs};
use crate::{Outcome, UsageError};

/// Flags of `mmsim explain`.
#[derive(Args, Debug, Default)]
pub struct ExplainArgs {
    /// The scenario and the machine overrides (as for `run`).
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// Reclaim policy (as for `run`).
    #[arg(long, value_name = "POLICY")]
    pub policy: Option<PolicyName>,
    /// Cost weighting of the cost policy: v5.8 or v6.2.
    #[arg(long, value_name = "VARIANT")]
    pub cost_variant: Option<CostVariant>,
    /// Set a `[machine]` key as a scenario file would (as for `run`). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", allow_hyphen_values = true)]
    pub set: Vec<String>,
    /// A page to explain: `FILE:INDEX` (a file of the scenario, a page index) or
    /// `TASK:0xVADDR` (a task, an address in its simulated layout). Repeatable.
    #[arg(
        long,
        value_name = "FILE:INDEX|TASK:0xVADDR",
        required_unless_present = "top"
    )]
    pub page: Vec<String>,
    /// Explain the N most refaulted pages (two runs: the first finds them, the second
    /// records their stories).
    #[arg(long, value_name = "N", conflicts_with = "page")]
    pub top: Option<usize>,
    /// Most events printed per page (the rest are counted); default 10000.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_events: u64,
    /// Print the stories as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress display.
    #[arg(long, short)]
    pub quiet: bool,
}

fn bad(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// The scenario of `args` with `explain` set, validated.
fn scenario(args: &ExplainArgs, explain: ExplainConfig) -> Result<Scenario> {
    let mut plan = run::plan(&args.scenario)?;
    run::apply_machine_flags(
        &mut plan.scenario.machine,
        args.policy,
        args.cost_variant,
        &args.set,
    )?;
    plan.scenario.machine.explain = Some(explain);
    run::validate(&plan.scenario, &args.scenario)?;
    crate::host::check(&plan.scenario, args.scenario.host_memory)?;
    Ok(plan.scenario)
}

/// Runs `s` and returns its explain report.
fn run_pass(s: &Scenario, quiet: bool) -> Result<ExplainReport> {
    let mut progress = Progress::new(run::show_progress(quiet), s.expected_events());
    let result = run::run_with_progress(s, &mut progress);
    progress.clear();
    let r = result?;
    if r.partial {
        anyhow::bail!(
            "{}",
            run::interrupted_message(s, &r).replace("partial", "no story")
        );
    }
    Ok(r.result.explain.unwrap_or_default())
}

/// `mmsim explain`.
pub fn explain(args: ExplainArgs) -> Result<Outcome> {
    if args.top == Some(0) {
        return Err(bad("--top 0: explains nothing; give at least 1"));
    }
    if args.max_events == 0 {
        return Err(bad("--max-events 0: keeps nothing; give at least 1"));
    }
    for p in &args.page {
        let one = ExplainConfig {
            pages: vec![p.clone()],
            ..Default::default()
        };
        one.validate()
            .map_err(|e| bad(format!("--page: {}", e.message)))?;
    }
    let mut note = None;
    let pages = match args.top {
        Some(n) => {
            let count = ExplainConfig {
                pages: Vec::new(),
                count_refaults: true,
                max_events: args.max_events,
            };
            let s = scenario(&args, count)?;
            let first = run_pass(&s, args.quiet)?;
            if first.refaults.is_empty() {
                return Err(bad(format!(
                    "--top {n}: no page refaulted in scenario `{}` (nothing was evicted and \
                     read back); name a page with --page",
                    s.name
                )));
            }
            let total = first.refaults.len();
            let chosen: Vec<(String, u64)> = first.refaults.into_iter().take(n).collect();
            note = Some(format!(
                "The {} most refaulted of {total} refaulted pages ({}), found by a first run; \
                 their stories were recorded by a second, identical run (the simulator is \
                 deterministic).",
                chosen.len(),
                chosen
                    .iter()
                    .map(|(p, c)| format!("{p}: {c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            chosen.into_iter().map(|(p, _)| p).collect()
        }
        None => args.page.clone(),
    };
    let cfg = ExplainConfig {
        pages,
        count_refaults: false,
        max_events: args.max_events,
    };
    let s = scenario(&args, cfg)?;
    let report = run_pass(&s, args.quiet)?;
    for p in &report.pages {
        if let Some(e) = &p.error {
            return Err(bad(format!("--page {}: {e}", p.page)));
        }
    }
    let mut out = crate::output::stdout();
    if args.json {
        #[derive(serde::Serialize)]
        struct Json<'a> {
            scenario: &'a str,
            policy: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            note: Option<&'a str>,
            pages: &'a [PageStory],
        }
        let j = Json {
            scenario: &s.name,
            policy: s.machine.policy.name.name().to_string(),
            note: note.as_deref(),
            pages: &report.pages,
        };
        serde_json::to_writer_pretty(&mut out, &crate::output::Versioned::new(&j))?;
        writeln!(out)?;
        return Ok(Outcome::Complete);
    }
    let mut text = format!(
        "Scenario `{}`, policy {}: the life of {} page(s), event by event (simulated seconds; \
         [n] = accesses since the previous event).\n",
        s.name,
        s.machine.policy.name.name(),
        report.pages.len()
    );
    if let Some(n) = &note {
        text.push_str(n);
        text.push('\n');
    }
    for p in &report.pages {
        text.push_str(&story_text(p));
    }
    out.write_all(text.as_bytes())?;
    Ok(Outcome::Complete)
}

/// One page's story as text.
pub fn story_text(p: &PageStory) -> String {
    let mut t = format!(
        "\n{} — {}: {} accesses, {} refaults, {} events{}\n",
        p.page,
        p.what,
        p.accesses,
        p.refaults,
        p.events.len(),
        if p.dropped > 0 {
            format!(" ({} more not kept: raise --max-events)", p.dropped)
        } else {
            String::new()
        }
    );
    for e in &p.events {
        let acc = if e.accesses_before > 0 {
            format!(" [{}]", e.accesses_before)
        } else {
            String::new()
        };
        t.push_str(&format!(
            "  {:>12.6}{acc}  {}  {}: {}\n",
            e.t_ns as f64 / 1e9,
            e.who,
            e.func,
            e.text
        ));
    }
    t
}
