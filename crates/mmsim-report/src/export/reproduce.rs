//! `mmsim reproduce`'s outputs: per seed, the published changes beside the simulated
//! ones with the direction judged, a verdict line per seed and a summary
//! ([`reproduce_table`]); the same rows as CSV ([`reproduce_csv`]).

use std::fmt::Write as _;
use std::io;

use crate::reproduce::{ReproduceReport, ReproducedRow, Verdict};

/// A percentage with its sign, one decimal (`-` when undefined).
fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{v:+.1}%"))
}

/// A row's simulated change as the table shows it: `new` for a rise from zero.
fn simulated(r: &ReproducedRow) -> String {
    match (r.simulated_pct, r.baseline_value, r.compared_value) {
        (Some(p), _, _) => pct(Some(p)),
        (None, Some(b), Some(c)) if b == 0.0 && c > 0.0 => "new".into(),
        (None, Some(b), Some(c)) if b == 0.0 && c == 0.0 => "0 -> 0".into(),
        _ => "-".into(),
    }
}

/// The direction cell.
pub fn direction(a: Option<bool>) -> &'static str {
    match a {
        Some(true) => "agrees",
        Some(false) => "DISAGREES",
        None => "-",
    }
}

/// The ratio cell: |simulated| / |published|.
fn ratio(r: &ReproducedRow) -> String {
    r.magnitude_ratio.map_or("-".into(), |x| {
        if x >= 100.0 {
            format!("{x:.0}x")
        } else {
            format!("{x:.2}x")
        }
    })
}

/// Columns padded to their widest cell (the last one not padded).
fn columns(rows: &[Vec<String>], right: &[bool]) -> String {
    let n = rows.first().map_or(0, Vec::len);
    let w: Vec<usize> = (0..n)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut t = String::new();
    for r in rows {
        let mut line = String::from("  ");
        for (i, cell) in r.iter().enumerate() {
            let pad = w[i] - cell.chars().count();
            if i + 1 == n {
                line.push_str(cell);
            } else if right[i] {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
                line.push_str("  ");
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        let _ = writeln!(t, "{}", line.trim_end());
    }
    t
}

/// The seed's verdict line.
fn verdict_line(seed: &str, v: Verdict, all: &[&ReproducedRow]) -> String {
    let rows: Vec<&ReproducedRow> = all.iter().copied().filter(|r| r.judged()).collect();
    let not_modelled = all.len() - rows.len();
    let agree = rows.iter().filter(|r| r.agrees == Some(true)).count();
    let disagree = rows.iter().filter(|r| r.agrees == Some(false)).count();
    let unknown = rows.len() - agree - disagree;
    let mut t = format!(
        "verdict: seed {seed} {}: {agree} of {} published directions agree",
        v.name(),
        rows.len()
    );
    if disagree > 0 {
        let _ = write!(t, ", {disagree} disagree");
    }
    if unknown > 0 {
        let _ = write!(t, ", {unknown} undetermined");
    }
    if not_modelled > 0 {
        let _ = write!(t, "; {not_modelled} not modelled (not judged)");
    }
    t
}

/// The tables, verdicts and summary `mmsim reproduce` prints.
pub fn reproduce_table(r: &ReproduceReport) -> String {
    let mut t = String::new();
    let head = [
        "metric",
        "baseline",
        "compared",
        "published",
        "simulated",
        "direction",
        "ratio",
        "source",
    ]
    .map(String::from)
    .to_vec();
    let right = [false, false, false, true, true, false, true, false];
    for s in &r.seeds {
        let _ = writeln!(t, "seed {}  {}", s.seed, s.title);
        let mut all = Vec::new();
        for e in &s.experiments {
            let _ = writeln!(
                t,
                "\n  scenario {}{}{}",
                e.scenario,
                if e.quick { " (quick version)" } else { "" },
                if e.compare.partial { "  PARTIAL" } else { "" }
            );
            let mut rows = vec![head.clone()];
            for row in &e.rows {
                rows.push(vec![
                    row.metric.clone(),
                    row.baseline.clone(),
                    row.compared.clone(),
                    pct(Some(row.published_pct)),
                    simulated(row),
                    if row.judged() {
                        direction(row.agrees).into()
                    } else {
                        "not modelled".into()
                    },
                    ratio(row),
                    row.source.clone(),
                ]);
                all.push(row);
            }
            t.push_str(&columns(&rows, &right));
            for row in e.rows.iter().filter(|r| !r.judged()) {
                let _ = writeln!(
                    t,
                    "  not modelled: {}: {}",
                    row.metric,
                    row.not_modelled.as_deref().unwrap_or("")
                );
            }
        }
        let _ = writeln!(t, "\n{}\n", verdict_line(&s.seed, s.verdict, &all));
    }
    let m = &r.summary;
    let _ = writeln!(
        t,
        "summary: {} seed{}{}, {} published changes: {} agree, {} disagree, {}: {}{}",
        m.seeds,
        if m.seeds == 1 { "" } else { "s" },
        if r.quick { " (quick)" } else { "" },
        m.rows,
        m.agree,
        m.disagree,
        if m.not_modelled > 0 {
            format!(
                "{} undetermined, {} not modelled",
                m.undetermined, m.not_modelled
            )
        } else {
            format!("{} undetermined", m.undetermined)
        },
        m.verdict.name(),
        if r.partial {
            " (PARTIAL: interrupted)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        t,
        "(direction: the sign of the change, within ±1 % none; ratio: |simulated| / |published|; \
         the scenarios are scaled down, so magnitudes differ)"
    );
    t
}

/// Writes [`reproduce_table`].
pub fn write_reproduce(w: &mut dyn io::Write, r: &ReproduceReport) -> io::Result<()> {
    w.write_all(reproduce_table(r).as_bytes())
}

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// One line per published change, full precision:
/// `seed,scenario,quick,metric,baseline,compared,published_pct,baseline_value,compared_value,simulated_pct,agrees,magnitude_ratio,source`
/// (`agrees` is true, false or empty).
pub fn reproduce_csv(r: &ReproduceReport) -> String {
    let mut t = String::from(
        "seed,scenario,quick,metric,baseline,compared,published_pct,baseline_value,\
         compared_value,simulated_pct,agrees,magnitude_ratio,source\n",
    );
    for (s, e) in r.experiments() {
        for row in &e.rows {
            let _ = writeln!(
                t,
                "{},{},{},{},{},{},{},{},{},{},{},{},{}",
                s.seed,
                field(&e.scenario),
                e.quick,
                field(&row.metric),
                field(&row.baseline),
                field(&row.compared),
                row.published_pct,
                opt(row.baseline_value),
                opt(row.compared_value),
                opt(row.simulated_pct),
                row.agrees.map(|a| a.to_string()).unwrap_or_default(),
                opt(row.magnitude_ratio),
                field(&row.source)
            );
        }
    }
    t
}

/// Writes [`reproduce_csv`].
pub fn write_reproduce_csv(w: &mut dyn io::Write, r: &ReproduceReport) -> io::Result<()> {
    w.write_all(reproduce_csv(r).as_bytes())
}
