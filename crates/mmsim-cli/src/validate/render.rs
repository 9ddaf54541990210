//! The text table of a comparison, as `mmsim validate` prints it.

use std::fmt::Write as _;

use super::replayed;
use super::suite::KernelSite;
use super::Comparison;

fn num(v: f64) -> String {
    if v.fract() != 0.0 && v.abs() < 1000.0 {
        return format!("{v:.2}");
    }
    let s = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// The text table of one comparison.
pub fn render(c: &Comparison) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "case {} — {} kernel {}, {:?} LRU, {} runs, {}",
        c.case,
        match c.site {
            KernelSite::Host => "host",
            KernelSite::Guest => "guest",
        },
        c.release,
        c.policy,
        c.runs,
        c.date
    );
    if let Some(p) = &c.pending {
        let _ = writeln!(o, "  mmsim: pending: {p}");
    }
    o.push_str(&replayed::render(&c.replayed_with));
    // Group-qualified names (`/long:workingset_refault_anon@before`) get a wider column.
    let w = if c.rows.iter().any(|r| r.counter.contains(':')) {
        c.rows
            .iter()
            .map(|r| r.counter.len() + 2)
            .max()
            .unwrap_or(26)
    } else {
        26
    };
    let _ = writeln!(
        o,
        "  {:<w$} {:>14} {:>8} {:>14} {:>9} {:>8}  status",
        "counter", "kernel mean", "spread", "mmsim", "error", "allowed"
    );
    for r in &c.rows {
        let _ = writeln!(
            o,
            "  {:<w$} {:>14} {:>7.2}% {:>14} {:>9} {:>8}  {}",
            format!("{}{}", r.counter, if r.enforced { " *" } else { "" }),
            num(r.kernel_mean),
            r.kernel_spread * 100.0,
            r.mmsim.map_or("—".into(), num),
            r.error
                .map_or("—".into(), |e| format!("{:+.2}%", e * 100.0)),
            r.allowed
                .map_or(String::new(), |a| format!("{:.2}%", a * 100.0)),
            r.status
        );
    }
    o
}
