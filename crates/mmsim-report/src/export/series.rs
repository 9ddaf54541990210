//! Counters over time (`mmsim run --series INTERVAL`): the stats sampler's samples
//! (`RunResult::stats_samples`, one per `machine.stats_interval_ms` of simulated time)
//! and the scenario's events on the same time line (`RunResult::series_markers`) as
//! one tidy table — one row per interval, one column per quantity — written as CSV,
//! JSON or a `vmstat 1`-like text table.
//!
//! Columns, in order: `t_s`; every /proc/vmstat line as `vmstat.NAME` (cumulative,
//! as the file shows it: event counters since the start or the warmup's end, gauges as
//! sampled); /proc/pressure/memory as `psi.some.avg10` … `psi.full.total` (µs); per
//! group `PATH:memory.current`, `PATH:memory.max` (empty: max), each `memory.stat`
//! line as `PATH:memory.stat.NAME`, `memory.events` as `PATH:memory.events.NAME` and
//! `memory.pressure` as `PATH:memory.pressure.some.avg10` …; with MGLRU the pages per
//! generation, youngest first, `lru_gen.AGE.anon|file`; last, `markers`: the scenario
//! events (knob writes, moves, phase starts, OOM kills) since the previous row, `; `
//! separated. The JSON is `{"interval_ms", "columns", "data", "markers"}` (`data` one
//! array per row, as pandas' `orient="split"` reads it).

use std::fmt::Write as _;

use mmsim_core::{RunResult, SeriesMarker, StatsSample};
use serde::Serialize;

/// One cell of the table: a counter, a percentage, or nothing (a limit of `max`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// A count (pages, events, µs).
    Int(u64),
    /// A share or a time in seconds.
    Float(f64),
    /// No value (`max`).
    None,
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Int(v) => write!(f, "{v}"),
            Cell::Float(v) => write!(f, "{v}"),
            Cell::None => Ok(()),
        }
    }
}

impl Cell {
    fn int(self) -> u64 {
        match self {
            Cell::Int(v) => v,
            Cell::Float(v) => v as u64,
            Cell::None => 0,
        }
    }
}

/// A marker as the series file lists it: seconds, kind, group, detail.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MarkerRow {
    /// When, seconds on the workload clock.
    pub t_s: f64,
    /// Index of the row whose interval holds it (the first sample at or after it).
    pub row: usize,
    /// The marker itself.
    #[serde(flatten)]
    pub marker: SeriesMarker,
}

/// The time series of a run as a tidy table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesTable {
    /// The sampler's interval at the end of the run (after `stats_max_samples`
    /// thinning), ms.
    pub interval_ms: f64,
    /// Column names (see the module overview).
    pub columns: Vec<String>,
    /// One row per sample, cells in column order (the `markers` column excluded).
    pub data: Vec<Vec<Cell>>,
    /// The scenario events, in time order.
    pub markers: Vec<MarkerRow>,
}

/// Pushes one group's columns (names when `names` is set) of sample `s`.
fn memcg_cells(s: &StatsSample, g: usize, path: &str, cols: &mut Vec<String>, row: &mut Vec<Cell>) {
    let mut push = |name: String, v: Cell| {
        cols.push(format!("{path}:{name}"));
        row.push(v);
    };
    let usage = s.memcg_usage_pages.get(g).copied().unwrap_or(0);
    push("memory.current".into(), Cell::Int(usage));
    let max = s.memcg_max_pages.get(g).copied().flatten();
    push("memory.max".into(), max.map_or(Cell::None, Cell::Int));
    let Some(r) = s.memcg.get(g) else {
        return;
    };
    for (name, v) in r.memory_stat() {
        push(format!("memory.stat.{name}"), Cell::Int(v));
    }
    for (name, v) in r.memory_events() {
        push(format!("memory.events.{name}"), Cell::Int(v));
    }
    for (line, l) in [("some", &r.psi.some), ("full", &r.psi.full)] {
        push(
            format!("memory.pressure.{line}.avg10"),
            Cell::Float(l.avg10),
        );
        push(
            format!("memory.pressure.{line}.avg60"),
            Cell::Float(l.avg60),
        );
        push(
            format!("memory.pressure.{line}.avg300"),
            Cell::Float(l.avg300),
        );
        push(format!("memory.pressure.{line}.total"), Cell::Int(l.total));
    }
}

/// One row (and its column names) of sample `s`; `gens` generations of MGLRU columns.
fn row(r: &RunResult, s: &StatsSample, gens: usize) -> (Vec<String>, Vec<Cell>) {
    let mut cols = vec!["t_s".to_string()];
    let mut row = vec![Cell::Float(s.t_ns as f64 / 1e9)];
    for (name, v) in s.vmstat.pairs() {
        cols.push(format!("vmstat.{name}"));
        row.push(Cell::Int(v));
    }
    for (line, l) in [("some", &s.psi.some), ("full", &s.psi.full)] {
        for (k, v) in [("avg10", l.avg10), ("avg60", l.avg60), ("avg300", l.avg300)] {
            cols.push(format!("psi.{line}.{k}"));
            row.push(Cell::Float(v));
        }
        cols.push(format!("psi.{line}.total"));
        row.push(Cell::Int(l.total));
    }
    for (g, path) in r.stats_memcg_paths.iter().enumerate() {
        memcg_cells(s, g, path, &mut cols, &mut row);
    }
    for age in 0..gens {
        let p = s.lru_gen_pages.get(age).copied().unwrap_or([0, 0]);
        for (ty, v) in ["anon", "file"].iter().zip(p) {
            cols.push(format!("lru_gen.{age}.{ty}"));
            row.push(Cell::Int(v));
        }
    }
    (cols, row)
}

impl SeriesTable {
    /// The table of run `r` (empty when its sampler was off).
    pub fn of(r: &RunResult) -> SeriesTable {
        let gens = r
            .stats_samples
            .iter()
            .map(|s| s.lru_gen_pages.len())
            .max()
            .unwrap_or(0);
        let mut columns = Vec::new();
        let mut data = Vec::with_capacity(r.stats_samples.len());
        for s in &r.stats_samples {
            let (cols, cells) = row(r, s, gens);
            if columns.is_empty() {
                columns = cols;
            }
            data.push(cells);
        }
        let times: Vec<u64> = r.stats_samples.iter().map(|s| s.t_ns).collect();
        let markers = r
            .series_markers
            .iter()
            .map(|m| MarkerRow {
                t_s: m.t_ns as f64 / 1e9,
                row: times.partition_point(|&t| t < m.t_ns),
                marker: m.clone(),
            })
            .collect();
        let interval_ms = match times.as_slice() {
            [a, b, ..] => (b - a) as f64 / 1e6,
            [a] => *a as f64 / 1e6,
            [] => 0.0,
        };
        SeriesTable {
            interval_ms,
            columns,
            data,
            markers,
        }
    }

    /// The markers of row `i`, `; ` separated, as `KIND GROUP DETAIL`.
    fn row_markers(&self, i: usize) -> String {
        self.rows_markers(i, i)
    }

    /// The markers of rows `first..=last`, `; ` separated, as `KIND GROUP DETAIL`.
    fn rows_markers(&self, first: usize, last: usize) -> String {
        self.markers
            .iter()
            .filter(|m| (first..=last).contains(&m.row))
            .map(|m| {
                let kind = serde_json::to_value(m.marker.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                let group = if m.marker.group.is_empty() {
                    String::new()
                } else {
                    format!(" {}", m.marker.group)
                };
                format!("{kind}{group} {}", m.marker.detail)
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The table as CSV: a header, one line per row, the `markers` column last.
    pub fn to_csv(&self) -> String {
        let mut t = String::new();
        for c in &self.columns {
            t.push_str(&csv_field(c));
            t.push(',');
        }
        t.push_str("markers\n");
        for (i, row) in self.data.iter().enumerate() {
            for c in row {
                let _ = write!(t, "{c},");
            }
            t.push_str(&csv_field(&self.row_markers(i)));
            t.push('\n');
        }
        t
    }

    /// The table as JSON (see the module overview).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plain data serializes")
    }

    fn col(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// A `vmstat 1`-like text table: the LRU lists and free pages (MiB) as sampled,
    /// the rates of scanning, stealing, refaults and swap over each interval
    /// (pages/s), PSI some/full avg10 (%), each group's `memory.current` (MiB) and
    /// the interval's scenario events. At most `max_rows` rows: with more samples,
    /// every k-th is shown (and the last), its rates over the k intervals since the
    /// row before and its events those of the k intervals.
    pub fn to_text(&self, max_rows: usize) -> String {
        let mib = |p: u64| p as f64 * 4096.0 / (1 << 20) as f64;
        let sum = |row: &[Cell], names: &[&str]| -> u64 {
            names
                .iter()
                .filter_map(|n| self.col(n))
                .map(|i| row[i].int())
                .sum()
        };
        let groups: Vec<(String, usize)> = self
            .columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                c.strip_suffix(":memory.current")
                    .map(|p| (p.to_string(), i))
            })
            .collect();
        let mut t = String::new();
        let _ = write!(
            t,
            "{:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9} {:>8} {:>8} {:>6} {:>6}",
            "time_s",
            "free",
            "inact_a",
            "act_a",
            "inact_f",
            "act_f",
            "scan/s",
            "steal/s",
            "refault/s",
            "swpin/s",
            "swpout/s",
            "some%",
            "full%"
        );
        for (p, _) in &groups {
            let _ = write!(t, " {:>10}", truncate(p, 10));
        }
        t.push_str("  events\n");
        let scan = ["vmstat.pgscan_kswapd", "vmstat.pgscan_direct"];
        let steal = ["vmstat.pgsteal_kswapd", "vmstat.pgsteal_direct"];
        let refault = [
            "vmstat.workingset_refault_anon",
            "vmstat.workingset_refault_file",
        ];
        let n = self.data.len();
        let step = n.div_ceil(max_rows.max(1)).max(1);
        let shown = (0..n).filter(|i| (i + 1) % step == 0 || i + 1 == n);
        let mut prev: Option<&Vec<Cell>> = None;
        let mut first = 0;
        for i in shown {
            let row = &self.data[i];
            let secs = |r: &[Cell]| match r[0] {
                Cell::Float(v) => v,
                _ => 0.0,
            };
            let dt = secs(row) - prev.map_or(0.0, |p| secs(p));
            let rate = |names: &[&str]| {
                let now = sum(row, names);
                let before = prev.map_or(0, |p| sum(p, names));
                // Counters zeroed in the interval (the warmup's end): counted from zero.
                let delta = if now >= before { now - before } else { now };
                if dt > 0.0 {
                    delta as f64 / dt
                } else {
                    0.0
                }
            };
            let get = |n: &str| self.col(n).map_or(0, |i| row[i].int());
            let float = |n: &str| match self.col(n).map(|i| row[i]) {
                Some(Cell::Float(v)) => v,
                _ => 0.0,
            };
            let _ = write!(
                t,
                "{:>10.3} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>9.0} {:>9.0} {:>9.0} {:>8.0} {:>8.0} {:>6.2} {:>6.2}",
                secs(row),
                mib(get("vmstat.nr_free_pages")),
                mib(get("vmstat.nr_inactive_anon")),
                mib(get("vmstat.nr_active_anon")),
                mib(get("vmstat.nr_inactive_file")),
                mib(get("vmstat.nr_active_file")),
                rate(&scan),
                rate(&steal),
                rate(&refault),
                rate(&["vmstat.pswpin"]),
                rate(&["vmstat.pswpout"]),
                float("psi.some.avg10"),
                float("psi.full.avg10"),
            );
            for (_, c) in &groups {
                let _ = write!(t, " {:>10.1}", mib(row[*c].int()));
            }
            let m = self.rows_markers(first, i);
            if !m.is_empty() {
                let _ = write!(t, "  {m}");
            }
            t.push('\n');
            prev = Some(row);
            first = i + 1;
        }
        if step > 1 {
            let _ = writeln!(
                t,
                "(every {step}{} of {n} samples shown; rates and events over the {step} \
                 intervals up to each row; --series-out FILE.csv has them all)",
                ordinal(step)
            );
        }
        t.push_str(
            "(free and LRU lists, groups' memory.current: MiB as sampled; rates: pages/s over \
             the interval; some%/full%: /proc/pressure/memory avg10)\n",
        );
        t
    }
}

/// The English ordinal suffix of `n` (2 → "nd").
fn ordinal(n: usize) -> &'static str {
    match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

/// The last `n` characters of `s` (a group path's tail is its name).
fn truncate(s: &str, n: usize) -> &str {
    let len = s.chars().count();
    if len <= n {
        return s;
    }
    let skip = s.char_indices().nth(len - n).map_or(0, |(i, _)| i);
    &s[skip..]
}

/// A CSV field, quoted when it needs to be.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mmsim_core::SeriesMarkerKind;

    fn sample(t_ms: u64, scan: u64) -> StatsSample {
        let mut s = StatsSample {
            t_ns: t_ms * 1_000_000,
            memcg_usage_pages: vec![256],
            memcg_max_pages: vec![None],
            ..Default::default()
        };
        s.vmstat.pgscan_kswapd = scan;
        s.vmstat.nr_free_pages = 512;
        s
    }

    fn run() -> RunResult {
        let cfg = mmsim_core::MachineConfig {
            memory: mmsim_core::Size::from_pages(4096),
            ..Default::default()
        };
        let mut r = mmsim_core::Sim::new(cfg).expect("machine").finish();
        r.stats_memcg_paths = vec!["/".into()];
        r.stats_samples = vec![sample(100, 10), sample(200, 60)];
        r.series_markers = vec![SeriesMarker {
            t_ns: 150_000_000,
            kind: SeriesMarkerKind::KnobWrite,
            group: "/a".into(),
            detail: "memory.max=100p".into(),
        }];
        r
    }

    #[test]
    fn one_row_per_sample_and_markers_in_their_interval() {
        let t = SeriesTable::of(&run());
        assert_eq!(t.interval_ms, 100.0);
        assert_eq!(t.data.len(), 2);
        assert_eq!(t.columns[0], "t_s");
        let scan = t.col("vmstat.pgscan_kswapd").expect("column");
        assert_eq!(t.data[1][scan], Cell::Int(60));
        assert_eq!(
            t.col("/:memory.current").map(|i| t.data[0][i]),
            Some(Cell::Int(256))
        );
        assert_eq!(
            t.col("/:memory.max").map(|i| t.data[0][i]),
            Some(Cell::None)
        );
        assert_eq!(t.markers[0].row, 1);
        let csv = t.to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].ends_with(",markers"));
        assert!(lines[1].ends_with(','), "{}", lines[1]);
        assert!(lines[2].ends_with(",knob_write /a memory.max=100p"));
        // Every line has as many fields as the header.
        let n = lines[0].split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == n));
    }

    #[test]
    fn a_counter_zeroed_at_the_warmups_end_counts_from_zero() {
        let mut r = run();
        r.stats_samples.push(sample(300, 5));
        let text = SeriesTable::of(&r).to_text(50);
        // 60 before, 5 after the reset: 5 pages in 0.1 s, not a negative or zero rate.
        assert_eq!(
            text.lines().nth(3).unwrap().split_whitespace().nth(6),
            Some("50")
        );
    }

    #[test]
    fn the_text_table_shows_rates_over_each_interval() {
        let text = SeriesTable::of(&run()).to_text(50);
        let rows: Vec<&str> = text.lines().collect();
        // Row 2: (60 - 10) pages scanned in 0.1 s = 500/s; 512 free pages = 2 MiB.
        let cells: Vec<&str> = rows[2].split_whitespace().collect();
        assert_eq!(cells[0], "0.200");
        assert_eq!(cells[1], "2.0");
        assert_eq!(cells[6], "500");
        assert!(rows[2].ends_with("knob_write /a memory.max=100p"));
        // Row 1: 10 pages over its first 0.1 s.
        assert_eq!(rows[1].split_whitespace().nth(6), Some("100"));
        // One row shown of two: the last, its rate over both intervals (60 / 0.2 s).
        let text = SeriesTable::of(&run()).to_text(1);
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 4, "{text}");
        assert_eq!(rows[1].split_whitespace().nth(6), Some("300"));
        assert!(rows[1].ends_with("knob_write /a memory.max=100p"));
        assert!(rows[2].starts_with("(every 2nd of 2 samples"), "{text}");
    }
}
