//! The human-readable tables of a comparison: the metric table and the published
//! results beside it.
//!
//! The metric table follows mmtests' compare-kernels: one row per metric, one column
//! per configuration, the first column the baseline; every other cell is the value
//! and, in parentheses, its change in percent of the baseline's, e.g.
//! `12345 (  -12.40%)` (`new` when the baseline is 0). With repeated runs, each metric
//! has Min, Amean, Stddev and Max rows, and the change is shown on the Amean row: it
//! compares the means.

use std::fmt::Write as _;
use std::io;

use mmsim_workloads::published::settings;

use crate::compare::CompareReport;
use crate::metrics::{format_of, Format};
use crate::published::PublishedRow;
use crate::stats::{change_pct, Stats};

/// Widest column name; longer names are replaced by shorter ones and a legend.
pub const MAX_HEADER: usize = 24;

/// The rows of one metric: which statistic each shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Row {
    /// The value of the single run.
    Single,
    Min,
    Amean,
    Stddev,
    Max,
}

impl Row {
    fn label(self) -> &'static str {
        match self {
            Row::Single => "",
            Row::Min => "Min",
            Row::Amean => "Amean",
            Row::Stddev => "Stddev",
            Row::Max => "Max",
        }
    }

    fn value(self, s: &Stats) -> Option<f64> {
        match self {
            Row::Single | Row::Amean => Some(s.mean),
            Row::Min => Some(s.min),
            Row::Stddev => s.stddev,
            Row::Max => Some(s.max),
        }
    }

    /// Whether the row shows the change against the baseline.
    fn changes(self) -> bool {
        matches!(self, Row::Single | Row::Amean)
    }
}

/// A value as the table prints it.
fn number(format: Format, row: Row, v: Option<f64>) -> String {
    let Some(v) = v else {
        return "-".into();
    };
    match format {
        Format::Count if matches!(row, Row::Amean | Row::Stddev) => format!("{v:.2}"),
        Format::Count => format!("{v:.0}"),
        Format::Decimals(d) => format!("{v:.d$}"),
    }
}

/// `(  -12.40%)`, `(     new)`, or blanks of the same width.
fn change_cell(base: Option<f64>, v: Option<f64>) -> String {
    match (base, v) {
        (Some(b), Some(v)) => match change_pct(b, v) {
            // Keep the width for changes of 1000× and more.
            Some(p) if p.abs() >= 99_999.995 => format!("({:>8}%)", format!("{p:.1e}")),
            // No `-0.00%` for a change that rounds to nothing.
            Some(p) if p.abs() < 0.005 => format!("({:>8.2}%)", 0.0),
            Some(p) => format!("({p:>8.2}%)"),
            None => format!("({:>9})", "new"),
        },
        _ => " ".repeat(11),
    }
}

/// Column headers: the names if they fit, else the values only (with a line naming the
/// keys), else `c1`, `c2`, … (with a legend).
fn headers(r: &CompareReport) -> (Vec<String>, Vec<String>) {
    let mark = |i: usize, h: String| {
        if r.configs[i].partial {
            format!("{h}*")
        } else {
            h
        }
    };
    let fits = |hs: &[String]| hs.iter().all(|h| h.len() <= MAX_HEADER);
    let names: Vec<String> = r.configs.iter().map(|c| c.name.clone()).collect();
    if fits(&names) {
        let h = names.into_iter().enumerate().map(|(i, h)| mark(i, h));
        return (h.collect(), Vec::new());
    }
    let values: Vec<String> = r
        .configs
        .iter()
        .map(|c| {
            c.settings
                .iter()
                .map(|s| s.value.as_str())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    if fits(&values) {
        let keys: Vec<&str> = r.axes.iter().map(|a| a.key.as_str()).collect();
        let legend = vec![format!("columns are {}", keys.join(","))];
        let h = values.into_iter().enumerate().map(|(i, h)| mark(i, h));
        return (h.collect(), legend);
    }
    let mut legend = vec!["columns".to_string()];
    for (i, c) in r.configs.iter().enumerate() {
        legend.push(format!("  c{:<4}{}", i + 1, c.name));
    }
    let h = (0..r.configs.len()).map(|i| mark(i, format!("c{}", i + 1)));
    (h.collect(), legend)
}

/// The human-readable comparison: what ran, notes, the table.
pub fn compare_table(r: &CompareReport, notes: &[String]) -> String {
    let mut t = String::new();
    let mut line = |label: &str, value: String| {
        let _ = writeln!(t, "{label:<12}{value}");
    };
    line("scenario", r.scenario.clone());
    if r.warmup_events > 0 {
        line(
            "measured",
            format!("after {} warmup events", r.warmup_events),
        );
    }
    if r.repeat > 1 {
        line(
            "runs",
            format!(
                "{} per configuration, seeds {}..={}; the changes compare the means (Amean)",
                r.repeat,
                r.seed,
                r.seed + u64::from(r.repeat) - 1
            ),
        );
    } else {
        line("seed", r.seed.to_string());
    }
    if let Some(b) = r.configs.first() {
        line(
            "baseline",
            format!("{}; (±x.xx%) is the change against it", b.name),
        );
    }
    for n in notes {
        line("note", n.clone());
    }
    if r.partial {
        let last = r.configs.last();
        line(
            "PARTIAL",
            format!(
                "interrupted by Ctrl-C{}; configurations after it did not run",
                last.filter(|c| c.partial)
                    .map(|c| format!(
                        ": {}* counts only the {} events simulated",
                        c.name,
                        c.runs.last().map_or(0, |r| r.events)
                    ))
                    .unwrap_or_default()
            ),
        );
    }
    if r.configs.is_empty() {
        return t;
    }

    let (headers, legend) = headers(r);
    let rows: &[Row] = if r.repeat > 1 {
        &[Row::Min, Row::Amean, Row::Stddev, Row::Max]
    } else {
        &[Row::Single]
    };
    // cells[row][column] = (value, change)
    let mut labels = Vec::new();
    let mut cells: Vec<Vec<(String, String)>> = Vec::new();
    for m in &r.metrics {
        let name = m.name.as_str();
        let format = format_of(name);
        let base = r.configs[0].stat(name);
        for &row in rows {
            labels.push(if row == Row::Single {
                name.to_string()
            } else {
                format!("{:<7}{}", row.label(), name)
            });
            let base_v = base.and_then(|s| row.value(s));
            cells.push(
                r.configs
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let v = c.stat(name).and_then(|s| row.value(s));
                        let change = if i == 0 {
                            String::new()
                        } else if row.changes() {
                            change_cell(base_v, v)
                        } else {
                            " ".repeat(11)
                        };
                        (number(format, row, v), change)
                    })
                    .collect(),
            );
        }
    }
    let label_w = labels.iter().map(String::len).max().unwrap_or(0);
    let widths: Vec<(usize, usize)> = (0..headers.len())
        .map(|i| {
            let value_w = cells.iter().map(|r| r[i].0.len()).max().unwrap_or(0);
            let cell_w = if i == 0 { value_w } else { value_w + 12 };
            (value_w, cell_w.max(headers[i].chars().count()))
        })
        .collect();

    t.push('\n');
    for l in &legend {
        let _ = writeln!(t, "{l}");
    }
    if !legend.is_empty() {
        t.push('\n');
    }
    let mut head = format!("{:label_w$}", "");
    for (h, (_, w)) in headers.iter().zip(&widths) {
        let _ = write!(head, "  {h:>w$}");
    }
    let _ = writeln!(t, "{}", head.trim_end());
    for (label, row) in labels.iter().zip(&cells) {
        let mut l = format!("{label:<label_w$}");
        for (i, ((v, change), (value_w, w))) in row.iter().zip(&widths).enumerate() {
            let cell = if i == 0 {
                format!("{v:>value_w$}")
            } else {
                format!("{v:>value_w$} {change}")
            };
            let _ = write!(l, "  {cell:>w$}");
        }
        let _ = writeln!(t, "{}", l.trim_end());
    }
    t
}

/// Writes what `mmsim compare` prints: [`compare_table`] (with `notes` as `note`
/// lines), what changed by mechanism ([`crate::changes::what_changed_text`]), then
/// [`published_table`] of the report's published rows.
pub fn write_compare(w: &mut dyn io::Write, r: &CompareReport, notes: &[String]) -> io::Result<()> {
    let mut t = compare_table(r, notes);
    t.push_str(&crate::changes::what_changed_text(&r.what_changed));
    t.push_str(&published_table(&r.published));
    w.write_all(t.as_bytes())
}

/// `key: compared-value vs baseline-value` for the settings that differ, then the
/// shared ones in brackets: `soft_limit_reclaim: seed-004 vs tree [swap.device=fs]`.
fn pair_label(baseline: &str, compared: &str) -> String {
    let (Ok(b), Ok(c)) = (settings(baseline), settings(compared)) else {
        return format!("{compared} vs {baseline}");
    };
    let differ: Vec<&(&str, &str)> = c.iter().filter(|p| !b.contains(p)).collect();
    let shared: Vec<String> = c
        .iter()
        .filter(|p| b.contains(p))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let keys: Vec<&str> = differ.iter().map(|p| p.0).collect();
    let values = |from: &[(&str, &str)]| -> Vec<String> {
        keys.iter()
            .filter_map(|k| from.iter().find(|p| p.0 == *k).map(|p| p.1.to_string()))
            .collect()
    };
    let mut label = format!(
        "{}: {} vs {}",
        keys.join(","),
        values(&c).join(","),
        values(&b).join(",")
    );
    if !shared.is_empty() {
        label.push_str(&format!(" [{}]", shared.join(",")));
    }
    label
}

/// The rows as a table under the comparison.
pub fn published_table(rows: &[PublishedRow]) -> String {
    let mut t = String::new();
    if rows.is_empty() {
        return t;
    }
    let _ = writeln!(
        t,
        "\npublished results: the change of the compared configuration against its \
         baseline, as the source reports it and as simulated"
    );
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:+.1}%"));
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            [
                r.metric.clone(),
                pair_label(&r.baseline, &r.compared),
                pct(Some(r.published_pct)),
                pct(r.simulated_pct),
                match r.agrees {
                    _ if r.not_modelled.is_some() => "not modelled".into(),
                    Some(true) => "agrees".into(),
                    Some(false) => "DISAGREES".into(),
                    None => "-".into(),
                },
                r.source.clone(),
            ]
        })
        .collect();
    let head = [
        "metric",
        "setting: compared vs baseline",
        "published",
        "simulated",
        "direction",
        "source",
    ];
    let w: Vec<usize> = (0..5)
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |c: [&str; 6]| {
        format!(
            "  {:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {:<w4$}  {}",
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            c[5],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3],
            w4 = w[4]
        )
        .trim_end()
        .to_string()
    };
    let _ = writeln!(t, "{}", line(head));
    for c in &cells {
        let _ = writeln!(
            t,
            "{}",
            line([&c[0], &c[1], &c[2], &c[3], &c[4], &c[5]].map(String::as_str))
        );
    }
    for r in rows {
        if let Some(why) = &r.not_modelled {
            let _ = writeln!(t, "  not modelled: {}: {why}", r.metric);
        }
    }
    t
}
