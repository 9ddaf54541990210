//! One line chart as inline SVG, drawn with plotters' SVG backend: simulated time in
//! seconds on the x axis, a labelled y axis with its unit, and a legend of the series
//! (kernel counter names) under it as an HTML list with a sample of each line (outside
//! the plot, so it covers no data), in a `<figure>` whose data attributes say how many
//! series and points it holds (the browser test reads them). Within a run each series
//! has its own colour; runs drawn together (a comparison) keep the colours and differ
//! by line pattern (solid, long dashes, short dashes); limits are dotted lines.
//!
//! Text is SVG `<text>` in the generic `sans-serif` family (plotters' naive font
//! layout: no font file is read or embedded), so the page needs no fonts of its own.

use std::fmt::Write as _;

use plotters::prelude::*;

use super::escape;
use super::series::Series;

/// Width and height of a chart, px (scaled to the page width by the stylesheet).
const SIZE: (u32, u32) = (900, 360);

/// Line colours: a palette that stays distinct in greyscale print (varied lightness)
/// and for common colour blindness (Okabe-Ito).
const COLOURS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(230, 159, 0),
    RGBColor(0, 0, 0),
    RGBColor(120, 120, 120),
];

/// Dash pattern (dash, gap) of run `i`'s lines, px; None: solid.
fn pattern(run: usize) -> Option<(u32, u32)> {
    match run % 3 {
        0 => None,
        1 => Some((10, 5)),
        _ => Some((3, 3)),
    }
}

/// A line's colour, stroke width (px) and dash pattern (dash, gap; None: solid).
type LineStyle = (RGBColor, u32, Option<(u32, u32)>);

/// The style of every series of `chart`.
fn styles(chart: &Chart) -> Vec<LineStyle> {
    let mut per_run: Vec<usize> = Vec::new();
    chart
        .series
        .iter()
        .map(|s| {
            if per_run.len() <= s.run {
                per_run.resize(s.run + 1, 0);
            }
            let k = per_run[s.run];
            per_run[s.run] += 1;
            let colour = COLOURS[k % COLOURS.len()];
            if s.dashed {
                (colour, 2, Some((2, 6)))
            } else {
                (colour, 2, pattern(s.run))
            }
        })
        .collect()
}

/// The legend: one item per series with a sample of its line.
fn legend(chart: &Chart) -> String {
    let mut out = String::from("<ul class=\"legend\">");
    for (s, (c, w, dash)) in chart.series.iter().zip(styles(chart)) {
        let dash = dash.map_or(String::new(), |(d, g)| {
            format!(" stroke-dasharray=\"{d} {g}\"")
        });
        let _ = write!(
            out,
            "<li><svg width=\"30\" height=\"10\" aria-hidden=\"true\"><line x1=\"0\" y1=\"5\" \
             x2=\"30\" y2=\"5\" stroke=\"#{:02x}{:02x}{:02x}\" stroke-width=\"{w}\"{dash}/></svg>\
             <span class=\"label\">{}</span></li>",
            c.0,
            c.1,
            c.2,
            escape(&s.label)
        );
    }
    out.push_str("</ul>");
    out
}

/// A chart to draw.
#[derive(Clone, Debug)]
pub struct Chart {
    /// The family's id (`lru`, `refaults`, …), also the figure's `data-chart`.
    pub id: String,
    /// The caption above it.
    pub title: String,
    /// The y axis's label, with its unit.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
}

impl Chart {
    /// Points over every series.
    pub fn points(&self) -> usize {
        self.series.iter().map(|s| s.points.len()).sum()
    }
}

/// The figure: caption, inline SVG, and a note when there is nothing to draw.
pub fn figure(chart: &Chart) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<figure class=\"chart\" data-chart=\"{}\" data-series=\"{}\" data-points=\"{}\">\
         <figcaption>{}</figcaption>",
        escape(&chart.id),
        chart.series.len(),
        chart.points(),
        escape(&chart.title)
    );
    if chart.points() == 0 {
        out.push_str("<p class=\"empty\">no samples</p>");
    } else {
        match svg(chart) {
            Ok(svg) => {
                out.push_str(&svg);
                out.push_str(&legend(chart));
            }
            Err(e) => {
                let _ = write!(out, "<p class=\"empty\">chart error: {}</p>", escape(&e));
            }
        }
    }
    out.push_str("</figure>\n");
    out
}

/// Compact axis numbers: 1.5k, 2.0M.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The chart as an SVG document (no XML prolog).
fn svg(chart: &Chart) -> Result<String, String> {
    let all = || chart.series.iter().flat_map(|s| s.points.iter());
    let x_max = all().map(|p| p.0).fold(0.0, f64::max).max(1e-9);
    let y_max = all()
        .map(|p| p.1)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.05 } else { 1.0 };
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut c = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(78)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .map_err(|e| e.to_string())?;
        c.configure_mesh()
            .x_desc("simulated time (s)")
            .y_desc(chart.y_label.as_str())
            .x_label_formatter(&|v| short(*v))
            .y_label_formatter(&|v| short(*v))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .light_line_style(RGBColor(235, 235, 235))
            .bold_line_style(RGBColor(205, 205, 205))
            .draw()
            .map_err(|e| e.to_string())?;
        for (s, (colour, width, dash)) in chart.series.iter().zip(styles(chart)) {
            let style = ShapeStyle::from(&colour).stroke_width(width);
            let points: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|p| p.1.is_finite())
                .collect();
            match dash {
                Some((d, g)) => c.draw_series(DashedLineSeries::new(points, d, g, style)),
                None => c.draw_series(LineSeries::new(points, style)),
            }
            .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    // Scaled by the stylesheet (the viewBox keeps the aspect ratio): drop the
    // fixed size.
    let (w, h) = SIZE;
    Ok(text.replacen(
        &format!("width=\"{w}\" height=\"{h}\""),
        &format!("role=\"img\" aria-label=\"{}\"", escape(&chart.title)),
        1,
    ))
}
