//! DAMON's access heatmap, as `damo report heatmap` draws it: simulated time on
//! the x axis, the monitored address range on the y axis, and each cell's colour
//! the regions' `nr_accesses` there (the `damon:damon_aggregated` snapshots of
//! `RunResult::damon.record`), from dark (no access seen) to bright (accessed at
//! every sample). One heatmap per context and target with snapshots.
//!
//! The address axis is the target's biggest contiguous span of regions (the whole
//! PFN range on paddr; the mapped area between the image and the stack on vaddr,
//! whose regions around the two big gaps would otherwise squash it to a line).
//! A cell's value is the mean of the snapshots' `nr_accesses` over the cell, each
//! region weighted by its overlap with the cell's addresses, over the aggregation
//! intervals overlapping the cell's time span; the colour is that mean over the
//! context's samples per aggregation (`aggr_us / sample_us`). Plain SVG
//! rectangles: no script, no font file.

use std::fmt::Write as _;

use mmsim_core::{DamonCtxReport, DamonReport, RecordSnapshot};

/// Cells along time and along addresses.
const COLS: usize = 120;
const ROWS: usize = 60;
/// Drawing size, px (plot area plus margins for the axis labels).
const W: usize = 900;
const H: usize = 380;
const LEFT: usize = 110;
const TOP: usize = 10;
const PLOT_W: usize = W - LEFT - 20;
const PLOT_H: usize = H - TOP - 50;

/// The heatmaps of a run's DAMON record, with their heading; empty when the
/// run has no DAMON or no snapshot.
pub(crate) fn section(d: Option<&DamonReport>) -> String {
    let Some(d) = d else {
        return String::new();
    };
    if d.record.is_empty() {
        return String::new();
    }
    let mut keys: Vec<(usize, usize)> = d.record.iter().map(|s| (s.ctx, s.target)).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut out = String::from(
        "<h2>DAMON access heatmap</h2>\n<p class=\"meta\">as <code>damo report heatmap</code>: \
         each aggregation's regions (<code>damon:damon_aggregated</code>), time across, \
         addresses up, brightness the regions' nr_accesses over the samples per \
         aggregation</p>\n",
    );
    for (c, t) in keys {
        let snaps: Vec<&RecordSnapshot> = d
            .record
            .iter()
            .filter(|s| s.ctx == c && s.target == t)
            .collect();
        out.push_str(&heatmap(d.contexts.get(c), c, t, &snaps));
    }
    out
}

/// The biggest contiguous span `[start, end)` of the regions of `snaps`' last
/// snapshot.
fn span(snaps: &[&RecordSnapshot]) -> Option<(u64, u64)> {
    let last = snaps.last()?;
    let mut best: Option<(u64, u64)> = None;
    let mut cur: Option<(u64, u64)> = None;
    for &(s, e, _, _) in &last.regions {
        cur = match cur {
            Some((cs, ce)) if ce == s => Some((cs, e)),
            Some(c) => {
                if best.is_none_or(|b| b.1 - b.0 < c.1 - c.0) {
                    best = Some(c);
                }
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some(c) = cur {
        if best.is_none_or(|b| b.1 - b.0 < c.1 - c.0) {
            best = Some(c);
        }
    }
    best.filter(|b| b.1 > b.0)
}

/// The cells' mean `nr_accesses` (`None`: nothing monitored there), by row
/// (lowest address first) and column.
fn grid(
    snaps: &[&RecordSnapshot],
    (a0, a1): (u64, u64),
    (t0, t1): (u64, u64),
) -> Vec<Vec<Option<f64>>> {
    let mut sum = vec![vec![0f64; COLS]; ROWS];
    let mut weight = vec![vec![0f64; COLS]; ROWS];
    let row_sz = (a1 - a0) as f64 / ROWS as f64;
    let dt = (t1 - t0).max(1) as f64;
    for s in snaps {
        // Every column the aggregation interval overlaps.
        let at = |t: u64| t.saturating_sub(t0) as f64 / dt * COLS as f64;
        let c0 = (at(s.start_ns) as usize).min(COLS - 1);
        let c1 = (at(s.end_ns).ceil() as usize).clamp(c0 + 1, COLS);
        for &(rs, re, nr, _) in &s.regions {
            let (rs, re) = (rs.max(a0), re.min(a1));
            if rs >= re {
                continue;
            }
            let first = ((rs - a0) as f64 / row_sz) as usize;
            let last = (((re - a0) as f64 / row_sz).ceil() as usize).min(ROWS);
            for (row, (srow, wrow)) in sum
                .iter_mut()
                .zip(weight.iter_mut())
                .enumerate()
                .take(last)
                .skip(first)
            {
                let lo = a0 as f64 + row as f64 * row_sz;
                let hi = lo + row_sz;
                let overlap = (re as f64).min(hi) - (rs as f64).max(lo);
                if overlap > 0.0 {
                    for col in c0..c1 {
                        srow[col] += nr as f64 * overlap;
                        wrow[col] += overlap;
                    }
                }
            }
        }
    }
    sum.iter()
        .zip(&weight)
        .map(|(s, w)| {
            s.iter()
                .zip(w)
                .map(|(&s, &w)| (w > 0.0).then(|| s / w))
                .collect()
        })
        .collect()
}

/// A brightness `x` in 0..=1 as a colour: black through red and orange to
/// pale yellow (a heat scale readable in greyscale).
fn heat(x: f64) -> (u8, u8, u8) {
    let x = x.clamp(0.0, 1.0);
    let r = (x * 3.0).min(1.0);
    let g = (x * 3.0 - 1.0).clamp(0.0, 1.0);
    let b = (x * 3.0 - 2.0).clamp(0.0, 1.0) * 0.8;
    ((r * 255.0) as u8, (g * 255.0) as u8, (b * 255.0) as u8)
}

/// Bytes as damo prints addresses' sizes: KiB, MiB, GiB.
fn size(b: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// One context's target's heatmap as an inline SVG in a `<div class="heatmap">`.
fn heatmap(ctx: Option<&DamonCtxReport>, c: usize, t: usize, snaps: &[&RecordSnapshot]) -> String {
    let Some((a0, a1)) = span(snaps) else {
        return String::new();
    };
    let t0 = snaps.iter().map(|s| s.start_ns).min().unwrap_or(0);
    let t1 = snaps
        .iter()
        .map(|s| s.end_ns)
        .max()
        .unwrap_or(t0 + 1)
        .max(t0 + 1);
    let max_nr = ctx
        .map(|c| (c.aggr_us / c.sample_us.max(1)).max(1))
        .unwrap_or(20) as f64;
    let cells = grid(snaps, (a0, a1), (t0, t1));
    let name = ctx.map_or_else(
        || format!("context {c}"),
        |x| format!("{} ({})", x.name, x.ops),
    );
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" \
         height=\"{H}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let (cw, ch) = (PLOT_W as f64 / COLS as f64, PLOT_H as f64 / ROWS as f64);
    let _ = write!(
        svg,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{PLOT_W}\" height=\"{PLOT_H}\" fill=\"#ddd\"/>"
    );
    let mut drawn = 0;
    for (row, cols) in cells.iter().enumerate() {
        // Lowest address at the bottom.
        let y = TOP as f64 + (ROWS - 1 - row) as f64 * ch;
        for (col, v) in cols.iter().enumerate() {
            let Some(v) = v else { continue };
            let (r, g, b) = heat(v / max_nr);
            let x = LEFT as f64 + col as f64 * cw;
            let _ = write!(
                svg,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" \
                 fill=\"#{r:02x}{g:02x}{b:02x}\"/>",
                cw + 0.3,
                ch + 0.3
            );
            drawn += 1;
        }
    }
    // Axes: time in seconds under, the address range's ends and size beside.
    let bottom = TOP + PLOT_H;
    for k in 0..=4 {
        let x = LEFT + PLOT_W * k / 4;
        let secs = (t0 + (t1 - t0) * k as u64 / 4) as f64 / 1e9;
        let _ = write!(
            svg,
            "<line x1=\"{x}\" y1=\"{bottom}\" x2=\"{x}\" y2=\"{}\" stroke=\"#000\"/>\
             <text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{secs:.1}</text>",
            bottom + 5,
            bottom + 18
        );
    }
    let _ = write!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">simulated time (s)</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{a1:#x}</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{a0:#x}</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text></svg>",
        LEFT + PLOT_W / 2,
        bottom + 36,
        LEFT - 6,
        TOP + 12,
        LEFT - 6,
        bottom,
        LEFT - 6,
        TOP + PLOT_H / 2,
        size(a1 - a0)
    );
    format!(
        "<div class=\"heatmap\" data-ctx=\"{c}\" data-target=\"{t}\" data-snapshots=\"{}\" \
         data-cells=\"{drawn}\">\n<p class=\"meta\">{} · target {t} · {} snapshots · \
         addresses {a0:#x}–{a1:#x} · black: no access seen, pale yellow: {max_nr} of {max_nr} \
         samples</p>\n{svg}\n</div>\n",
        snaps.len(),
        super::escape(&name),
        snaps.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(end_ns: u64, regions: Vec<(u64, u64, u32, u32)>) -> RecordSnapshot {
        RecordSnapshot {
            ctx: 0,
            target: 0,
            start_ns: end_ns - 100_000_000,
            end_ns,
            regions,
        }
    }

    #[test]
    fn cells_weigh_regions_by_overlap_and_the_biggest_span_is_drawn() {
        // Two spans: [0, 4096) alone, and [1M, 1M + 8 KiB) of two regions.
        let m = 1 << 20;
        let s = snap(
            100_000_000,
            vec![
                (0, 4096, 20, 0),
                (m, m + 4096, 20, 3),
                (m + 4096, m + 8192, 0, 3),
            ],
        );
        let snaps = vec![&s];
        assert_eq!(span(&snaps), Some((m, m + 8192)));
        // Over twice its time (0..100 ms of 0..200 ms): the snapshot fills
        // the first half of the columns; the lower half of the rows is the
        // hot region, the upper the cold one.
        let g = grid(&snaps, (m, m + 8192), (0, 200_000_000));
        assert_eq!(g[0][0], Some(20.0));
        assert_eq!(g[0][COLS / 2 - 1], Some(20.0));
        assert_eq!(g[ROWS - 1][0], Some(0.0));
        assert_eq!(g[0][COLS / 2], None);
        assert_eq!(heat(0.0), (0, 0, 0));
        assert_eq!(heat(1.0), (255, 255, 204));
        let html = section(Some(&DamonReport {
            record: vec![s.clone()],
            ..Default::default()
        }));
        assert!(
            html.contains(&format!("data-cells=\"{}\"", ROWS * COLS)),
            "{html}"
        );
        assert!(section(None).is_empty());
        assert!(section(Some(&DamonReport::default())).is_empty());
    }
}
