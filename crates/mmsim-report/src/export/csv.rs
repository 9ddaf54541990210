//! A comparison's table data as CSV, full precision: one line per metric and
//! configuration (`metric,config,value,runs,min,max,stddev,change_pct`), the value
//! being the mean over the runs and the change that of the means against the
//! baseline's.

use std::fmt::Write as _;
use std::io;

use crate::compare::CompareReport;
use crate::stats::change_pct;

/// A CSV field, quoted when it needs to be.
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

/// The table's data as CSV, full precision: one line per metric and configuration.
pub fn compare_csv(r: &CompareReport) -> String {
    let mut t = String::from("metric,config,value,runs,min,max,stddev,change_pct\n");
    for m in &r.metrics {
        let base = r.configs.first().and_then(|c| c.stat(&m.name));
        for c in &r.configs {
            let s = c.stat(&m.name);
            let change = match (base, s) {
                (Some(b), Some(s)) => change_pct(b.mean, s.mean),
                _ => None,
            };
            let _ = writeln!(
                t,
                "{},{},{},{},{},{},{},{}",
                m.name,
                field(&c.name),
                opt(s.map(|s| s.mean)),
                s.map_or(0, |s| s.n),
                opt(s.map(|s| s.min)),
                opt(s.map(|s| s.max)),
                opt(s.and_then(|s| s.stddev)),
                opt(change),
            );
        }
    }
    t
}

/// Writes [`compare_csv`] of `r`, what `mmsim compare --csv` prints.
pub fn write_compare(w: &mut dyn io::Write, r: &CompareReport) -> io::Result<()> {
    w.write_all(compare_csv(r).as_bytes())
}
