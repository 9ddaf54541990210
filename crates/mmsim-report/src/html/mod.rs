//! The HTML report (`--report FILE.html` of `mmsim run`, `compare` and `reproduce`):
//! one self-contained page, with no network access, no scripts and no fonts of its own,
//! holding the tables (metrics, comparison, published changes with agree/disagree
//! marks), charts over simulated time as inline SVG drawn with plotters, and the
//! scenario as TOML. A print stylesheet keeps it readable on paper (no backgrounds,
//! charts kept whole on a page, the scenario's text wrapped).
//!
//! The charts come from the stats sampler (`machine.stats_interval_ms`); a caller
//! turns it on with [`enable_sampling`] before running (sampling reads state only, so
//! results do not change). Each chart family has its own file: [`lru`] (list sizes or
//! MGLRU generations), [`reclaim`] (refaults; scans and steals), [`swap`], [`psi`],
//! [`memcg`] (usage against limits per group) and [`cpu`] (kswapd and direct reclaim);
//! [`series`] turns samples into bounded series and [`chart`] draws one.
//!
//! Each chart is a `<figure class="chart">` with `data-chart` (the family),
//! `data-series` and `data-points` (how much it draws): the browser test reads them.

pub mod chart;
pub mod cpu;
mod damon;
pub mod lru;
pub mod memcg;
pub mod psi;
pub mod reclaim;
pub mod series;
pub mod swap;

use std::fmt::Write as _;
use std::path::Path;

use mmsim_core::MachineConfig;
use mmsim_workloads::ScenarioResult;

use crate::compare::{metric_infos, CompareReport, ConfigReport};
use crate::export::reproduce::direction;
use crate::metrics::{format_of, Format};
use crate::reproduce::{ReproduceReport, ReproducedRow};
use series::Run;

/// The sampler's interval a report uses when the scenario sets none, ms.
pub const SAMPLE_INTERVAL_MS: u64 = 1;
/// Most samples a report's run keeps (the sampler thins them beyond, see
/// `machine.stats_max_samples`).
pub const MAX_SAMPLES: u64 = 512;

/// Turns the stats sampler on for a report: the scenario's interval if it sets one,
/// else [`SAMPLE_INTERVAL_MS`], and at most [`MAX_SAMPLES`] samples.
pub fn enable_sampling(m: &mut MachineConfig) {
    if m.stats_interval_ms == 0 {
        m.stats_interval_ms = SAMPLE_INTERVAL_MS;
    }
    if m.stats_max_samples == 0 {
        m.stats_max_samples = MAX_SAMPLES;
    }
}

/// Checks that a report can be written to `path` before anything runs: its directory
/// exists and it is not a directory. The error names the path.
pub fn check_path(path: &Path) -> Result<(), String> {
    let shown = path.display();
    if path.as_os_str().is_empty() {
        return Err("--report: empty file name".into());
    }
    if path.is_dir() {
        return Err(format!("--report {shown}: is a directory; name a file"));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!(
            "--report {shown}: the directory {} does not exist; create it first",
            dir.display()
        ));
    }
    Ok(())
}

/// Writes the page to `path` (the file the user named; nothing else is written).
pub fn write(path: &Path, page: &str) -> Result<(), String> {
    check_path(path)?;
    std::fs::write(path, page).map_err(|e| format!("--report {}: {e}", path.display()))
}

/// `text` with `&`, `<`, `>`, `"` and `'` escaped for HTML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 0 auto;
  max-width: 1000px; padding: 1.5rem; color: #111; background: #fff; line-height: 1.4; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.3rem; margin-top: 2rem;
  border-bottom: 2px solid #ccc; } h3 { font-size: 1.1rem; margin-top: 1.5rem; }
.meta { color: #444; margin-top: 0; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .88rem; }
th, td { border: 1px solid #bbb; padding: .2rem .5rem; vertical-align: top; }
th { background: #eee; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.agrees { color: #0a6b2e; font-weight: 600; } .disagrees { color: #b00020; font-weight: 700; }
.undetermined { color: #555; }
.verdict { font-size: 1.05rem; padding: .4rem .6rem; border-left: 5px solid #999; background: #f6f6f6; }
.verdict.reproduced { border-color: #0a6b2e; } .verdict.disagrees { border-color: #b00020; }
figure.chart { margin: 1rem 0; break-inside: avoid; page-break-inside: avoid; }
figure.chart > svg { width: 100%; height: auto; display: block; border: 1px solid #ddd; }
figcaption { font-weight: 600; margin-bottom: .3rem; }
ul.legend { list-style: none; margin: .3rem 0 0; padding: 0; columns: 2; font-size: .82rem; }
ul.legend li { break-inside: avoid; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
ul.legend svg { vertical-align: middle; margin-right: .35rem; }
p.empty { color: #666; font-style: italic; }
pre { background: #f6f6f6; border: 1px solid #ddd; padding: .6rem; overflow-x: auto; font-size: .8rem; }
details > summary { cursor: pointer; font-weight: 600; }
.scroll { overflow-x: auto; }
@media print {
  ul.legend { font-size: 8pt; }
  body { max-width: none; padding: 0; font-size: 10pt; }
  th, .verdict, pre { background: none; }
  pre { white-space: pre-wrap; word-break: break-all; }
  .scroll { overflow: visible; }
  h2 { break-after: avoid; page-break-after: avoid; }
  table { break-inside: auto; } tr { break-inside: avoid; }
}
";

/// The page around `body`.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\
         <footer><p class=\"meta\">mmsim {} — counters named as in /proc/vmstat, \
         memory.stat and /proc/pressure/memory; simulated time on every x axis.</p>\
         </footer>\n</body>\n</html>\n",
        escape(title),
        env!("CARGO_PKG_VERSION")
    )
}

/// A metric's value as the tables print it.
fn value(name: &str, v: Option<f64>) -> String {
    match (v, format_of(name)) {
        (None, _) => "-".into(),
        (Some(v), Format::Count) if v.fract() == 0.0 => thousands(v),
        (Some(v), Format::Count) => format!("{v:.2}"),
        (Some(v), Format::Decimals(d)) => format!("{v:.d$}"),
    }
}

/// An integer with thousands separators.
fn thousands(v: f64) -> String {
    let s = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Every chart of `runs`, overlaid.
fn charts(runs: &[Run]) -> String {
    let mut out = String::from("<div class=\"charts\">\n");
    for c in [
        lru::chart(runs),
        reclaim::refaults(runs),
        reclaim::scans(runs),
        swap::chart(runs),
        psi::chart(runs),
        memcg::chart(runs),
        cpu::chart(runs),
    ] {
        out.push_str(&chart::figure(&c));
    }
    out.push_str("</div>\n");
    out
}

/// The sampling note under the charts' heading.
fn sampling_note(results: &[&ScenarioResult]) -> String {
    let n = results
        .iter()
        .map(|r| r.result.stats_samples.len())
        .max()
        .unwrap_or(0);
    let spacing = results
        .iter()
        .filter_map(|r| {
            let s = &r.result.stats_samples;
            (s.len() >= 2).then(|| (s[1].t_ns - s[0].t_ns) as f64 / 1e9)
        })
        .fold(0.0, f64::max);
    format!(
        "<p class=\"meta\">{n} samples per run, {spacing:.3} s apart (the stats sampler, \
         thinned to at most {MAX_SAMPLES}); rates are the counters' increase between \
         samples.</p>\n"
    )
}

/// The scenario as TOML, foldable.
fn scenario_block(toml: &str) -> String {
    format!(
        "<details open><summary>The scenario (TOML)</summary><pre>{}</pre></details>\n",
        escape(toml)
    )
}

/// The metrics table of a comparison (or of one run: one column).
fn metrics_table(configs: &[ConfigReport]) -> String {
    let mut t = String::from("<div class=\"scroll\"><table class=\"metrics\"><tr><th>metric</th>");
    for c in configs {
        let _ = write!(t, "<th>{}</th>", escape(&c.name));
    }
    t.push_str("</tr>\n");
    for m in metric_infos(configs) {
        let _ = write!(
            t,
            "<tr><td title=\"{}\">{}</td>",
            escape(&m.about),
            escape(&m.name)
        );
        let base = configs
            .first()
            .and_then(|c| c.stat(&m.name))
            .map(|s| s.mean);
        for (i, c) in configs.iter().enumerate() {
            let v = c.stat(&m.name).map(|s| s.mean);
            let change = match (i, base, v) {
                (0, _, _) => String::new(),
                (_, Some(b), Some(v)) => match crate::stats::change_pct(b, v) {
                    Some(p) => format!(" ({p:+.2}%)"),
                    None => " (new)".into(),
                },
                _ => String::new(),
            };
            let _ = write!(t, "<td class=\"num\">{}{change}</td>", value(&m.name, v));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</table></div>\n");
    t
}

/// A direction mark: ✔ agrees, ✘ DISAGREES, – undetermined.
fn mark(a: Option<bool>) -> String {
    let (class, sign) = match a {
        Some(true) => ("agrees", "✔"),
        Some(false) => ("disagrees", "✘"),
        None => ("undetermined", "–"),
    };
    format!("<td class=\"{class}\">{sign} {}</td>", direction(a))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:+.1}%"))
}

/// The published changes beside the simulated ones, with marks.
fn published_table(rows: &[ReproducedRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut t = String::from(
        "<div class=\"scroll\"><table class=\"published\"><tr><th>metric</th><th>baseline</th>\
         <th>compared</th><th>published</th><th>simulated</th><th>direction</th>\
         <th>ratio</th><th>source</th></tr>\n",
    );
    for r in rows {
        let simulated = match (r.simulated_pct, r.baseline_value, r.compared_value) {
            (Some(p), _, _) => pct(Some(p)),
            (None, Some(b), Some(c)) if b == 0.0 && c > 0.0 => "new".into(),
            _ => "-".into(),
        };
        let _ = writeln!(
            t,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{simulated}</td>{}<td class=\"num\">{}</td><td>{}</td></tr>",
            escape(&r.metric),
            escape(&r.baseline),
            escape(&r.compared),
            pct(Some(r.published_pct)),
            if r.judged() {
                mark(r.agrees)
            } else {
                "<td title=\"not modelled\">not modelled</td>".into()
            },
            r.magnitude_ratio.map_or("-".into(), |x| format!("{x:.2}×")),
            escape(&r.source)
        );
    }
    t.push_str("</table></div>\n");
    t
}

/// The "What changed" section of the compare page: per configuration against the
/// baseline, the same groups and readings as the text
/// ([`crate::changes::what_changed_text`]), with each group's largest changes; empty
/// with one configuration.
fn what_changed_html(all: &[crate::changes::WhatChanged]) -> String {
    if all.is_empty() {
        return String::new();
    }
    let mut t = format!(
        "<h2>What changed</h2>\n<p class=\"meta\">each configuration against the baseline: \
         the changes of {}% or more (beyond the runs' spread), grouped by mechanism, the \
         group with the largest change first</p>\n",
        crate::changes::MIN_CHANGE_PCT
    );
    for w in all {
        let _ = writeln!(
            t,
            "<h3>{} against {}</h3>",
            escape(&w.config),
            escape(&w.against)
        );
        if w.mechanisms.is_empty() {
            let _ = writeln!(
                t,
                "<p class=\"meta\">nothing by {}% or more (beyond the runs' spread)</p>",
                crate::changes::MIN_CHANGE_PCT
            );
            continue;
        }
        t.push_str(
            "<div class=\"scroll\"><table class=\"changes\"><tr><th>mechanism</th>\
             <th>reading</th><th>largest changes</th></tr>\n",
        );
        for m in &w.mechanisms {
            let changes: Vec<String> = m.changes.iter().map(|c| escape(&c.label())).collect();
            let _ = writeln!(
                t,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
                escape(&m.mechanism),
                escape(&m.reading),
                changes.join("<br>")
            );
        }
        t.push_str("</table></div>\n");
    }
    t
}

/// The results of a comparison's first runs, read back from its JSON.
fn first_results(report: &CompareReport) -> Vec<(String, ScenarioResult)> {
    report
        .configs
        .iter()
        .filter_map(|c| {
            let r = c.runs.first()?;
            let result: ScenarioResult = serde_json::from_value(r.result.clone()).ok()?;
            Some((c.name.clone(), result))
        })
        .collect()
}

/// The runs of `results` for the charts.
fn runs_of(results: &[(String, ScenarioResult)]) -> Vec<Run<'_>> {
    results
        .iter()
        .enumerate()
        .map(|(index, (label, r))| Run {
            label,
            index,
            samples: &r.result.stats_samples,
            memcg_paths: &r.result.stats_memcg_paths,
        })
        .collect()
}

/// The page of `mmsim run --report`: the metrics, the charts, the scenario.
pub fn run_page(result: &ScenarioResult, scenario_toml: &str) -> String {
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<h1>mmsim run: {}</h1>\n<p class=\"meta\">{} · policy {} · seed {} · {} events{}</p>",
        escape(&result.scenario),
        escape(result.description.as_deref().unwrap_or("")),
        escape(&result.result.policy),
        result.seed,
        thousands(result.events as f64),
        if result.partial { " · PARTIAL" } else { "" }
    );
    for w in &result.warnings {
        let _ = writeln!(
            b,
            "<p class=\"verdict disagrees\">warning: {}</p>",
            escape(w)
        );
    }
    let config = ConfigReport::new(
        result.result.policy.clone(),
        vec![],
        std::slice::from_ref(result),
    );
    b.push_str("<h2>Charts over simulated time</h2>\n");
    b.push_str(&sampling_note(&[result]));
    b.push_str(&charts(&[Run {
        label: "",
        index: 0,
        samples: &result.result.stats_samples,
        memcg_paths: &result.result.stats_memcg_paths,
    }]));
    b.push_str(&damon::section(result.result.damon.as_ref()));
    b.push_str("<h2>Metrics</h2>\n");
    b.push_str(&metrics_table(std::slice::from_ref(&config)));
    b.push_str("<h2>Scenario</h2>\n");
    b.push_str(&scenario_block(scenario_toml));
    page(&format!("mmsim run: {}", result.scenario), &b)
}

/// The page of `mmsim compare --report`: the comparison table, the published changes,
/// the charts with the configurations overlaid, what changed by mechanism, the
/// scenario.
pub fn compare_page(report: &CompareReport, scenario_toml: &str) -> String {
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<h1>mmsim compare: {}</h1>\n<p class=\"meta\">{} configurations · seed {} · {} run(s) \
         each · baseline {}{}</p>",
        escape(&report.scenario),
        report.configs.len(),
        report.seed,
        report.repeat,
        escape(report.configs.first().map_or("", |c| c.name.as_str())),
        if report.partial { " · PARTIAL" } else { "" }
    );
    let rows = crate::reproduce::judge_rows(&report.published, report);
    if !rows.is_empty() {
        b.push_str("<h2>Published results</h2>\n");
        b.push_str(&published_table(&rows));
    }
    let results = first_results(report);
    let refs: Vec<&ScenarioResult> = results.iter().map(|r| &r.1).collect();
    b.push_str("<h2>Charts over simulated time (configurations overlaid)</h2>\n");
    if report.repeat > 1 {
        b.push_str("<p class=\"meta\">each configuration's first run (seed as above)</p>\n");
    }
    b.push_str(&sampling_note(&refs));
    b.push_str(&charts(&runs_of(&results)));
    b.push_str(
        "<h2>Comparison</h2>\n<p class=\"meta\">the mean over the runs; in brackets the \
                change against the first configuration</p>\n",
    );
    b.push_str(&metrics_table(&report.configs));
    b.push_str(&what_changed_html(&report.what_changed));
    b.push_str("<h2>Scenario (the baseline's machine)</h2>\n");
    b.push_str(&scenario_block(scenario_toml));
    page(&format!("mmsim compare: {}", report.scenario), &b)
}

/// The page of `mmsim reproduce --report`: the summary, and per seed its verdict and
/// per experiment the published table with marks, the charts with the configurations
/// overlaid, and the scenario.
pub fn reproduce_page(report: &ReproduceReport) -> String {
    let mut b = String::new();
    let m = &report.summary;
    let _ = writeln!(
        b,
        "<h1>mmsim reproduce{}</h1>\n<p class=\"verdict {}\">summary: {} seeds, {} published \
         changes: {} agree, {} disagree, {} undetermined{}: <strong>{}</strong>{}</p>",
        if report.quick { " --quick" } else { "" },
        verdict_class(m.verdict),
        m.seeds,
        m.rows,
        m.agree,
        m.disagree,
        m.undetermined,
        if m.not_modelled > 0 {
            format!(", {} not modelled", m.not_modelled)
        } else {
            String::new()
        },
        m.verdict.name(),
        if report.partial { " (PARTIAL)" } else { "" }
    );
    b.push_str(
        "<p class=\"meta\">direction: the sign of the change (within ±1 %: none; from zero: \
         an increase); ratio: |simulated| / |published|. The scenarios are scaled down, so \
         magnitudes differ.</p>\n",
    );
    for s in &report.seeds {
        let _ = writeln!(
            b,
            "<h2>seed {}</h2>\n<p class=\"meta\">{}</p>",
            escape(&s.seed),
            escape(&s.title)
        );
        let rows: Vec<&ReproducedRow> = s
            .experiments
            .iter()
            .flat_map(|e| &e.rows)
            .filter(|r| r.judged())
            .collect();
        let agree = rows.iter().filter(|r| r.agrees == Some(true)).count();
        let _ = writeln!(
            b,
            "<p class=\"verdict {}\">verdict: seed {} {}: {agree} of {} published directions \
             agree</p>",
            verdict_class(s.verdict),
            escape(&s.seed),
            s.verdict.name(),
            rows.len()
        );
        for e in &s.experiments {
            let _ = writeln!(
                b,
                "<h3>{}{}</h3>",
                escape(&e.scenario),
                if e.quick { " (quick version)" } else { "" }
            );
            b.push_str(&published_table(&e.rows));
            let results = first_results(&e.compare);
            b.push_str(&charts(&runs_of(&results)));
            b.push_str(&scenario_block(&e.scenario_toml).replace("<details open>", "<details>"));
        }
    }
    page("mmsim reproduce", &b)
}

fn verdict_class(v: crate::reproduce::Verdict) -> &'static str {
    match v {
        crate::reproduce::Verdict::Reproduced => "reproduced",
        crate::reproduce::Verdict::Disagrees => "disagrees",
        crate::reproduce::Verdict::Undetermined => "undetermined",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_numbers_grouped() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(thousands(1234567.0), "1,234,567");
        assert_eq!(thousands(-1000.0), "-1,000");
        assert_eq!(thousands(999.0), "999");
    }

    #[test]
    fn report_paths_are_checked() {
        let dir = std::env::temp_dir();
        assert_eq!(check_path(&dir.join("r.html")), Ok(()));
        let e = check_path(&dir.join("no-such-dir-mmsim/r.html")).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        let e = check_path(&dir).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
    }
}
