//! The chart of a parameter sweep (`sim-cli sweep --plot`), generic over the
//! plotters backend like `draw.rs`: one varied key gives a line chart of the
//! ranked delay figure (and the maximum) against the key's value; two give a
//! heat map with each cell coloured and annotated with the figure in ms.

use super::draw::style::{BASELINE, CURRENT, DrawResult, FONT, ValueAxis, fail, fmt_ns, marker};
use crate::sweep::{Axis, Grid, Metric, PointResult};
use plotters::coord::Shift;
use plotters::prelude::*;

/// What a sweep chart shows. `results` may be any subset of the grid (one
/// shard): missing points are left out of the line or blank in the map.
pub struct SweepChart<'a> {
    pub grid: &'a Grid,
    pub results: &'a [PointResult],
    pub metric: Metric,
    /// The task whose delays were measured.
    pub target: &'a str,
    /// A line under the chart: seed and fixed settings, so it reproduces.
    pub caption: &'a str,
}

/// Draws `chart` on `area`. More than two varied keys cannot be drawn.
pub fn sweep_chart<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, chart: &SweepChart) -> DrawResult {
    area.fill(&WHITE).map_err(fail)?;
    let (_, h) = area.dim_in_pixel();
    let (body, foot) = area.split_vertically(h.saturating_sub(26));
    foot.draw(&Text::new(chart.caption.to_string(), (12, 4), (FONT, 13).into_font().color(&BASELINE))).map_err(fail)?;
    match chart.grid.axes.as_slice() {
        [axis] => line(&body, chart, axis),
        [slow, fast] => heat_map(&body, chart, slow, fast),
        axes => Err(format!(
            "a sweep chart needs one or two varied keys (a line chart or a heat map); this sweep varies {}",
            axes.len()
        )),
    }
}

/// `ns` as a short millisecond figure for cell labels: `2.00`, `12.0`, `0.512`.
fn ms(ns: u64) -> String {
    let v = ns as f64 / 1e6;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Where each of an axis's values goes on a numeric x axis, and how to label
/// a position: by value (log10 of it on a log axis) or by index for values
/// that are not numbers.
struct XScale {
    positions: Vec<f64>,
    log: bool,
    durations: bool,
    numeric: bool,
}

impl XScale {
    fn of(axis: &Axis) -> XScale {
        match axis.numbers() {
            Some((v, durations)) => {
                let log = axis.log && v.iter().all(|&x| x > 0.0);
                let positions = if log { v.iter().map(|&x| libm::log10(x)).collect() } else { v };
                XScale { positions, log, durations, numeric: true }
            }
            None => XScale {
                positions: (0..axis.len()).map(|i| i as f64).collect(),
                log: false,
                durations: false,
                numeric: false,
            },
        }
    }

    fn label(&self, axis: &Axis, x: f64) -> String {
        if !self.numeric {
            let i = libm::round(x);
            return if i >= 0.0 { axis.values.get(i as usize).cloned().unwrap_or_default() } else { String::new() };
        }
        let v = if self.log { libm::pow(10.0, x) } else { x };
        if self.durations {
            fmt_ns(v)
        } else {
            let s = format!("{v:.2}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    }
}

fn line<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, chart: &SweepChart, axis: &Axis) -> DrawResult {
    let scale = XScale::of(axis);
    let lo = scale.positions.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = scale.positions.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.04).max(if scale.numeric { 1e-9 } else { 0.5 });
    // Along the x axis (a list may be given in any order), then by index.
    let mut points: Vec<&PointResult> = chart.results.iter().collect();
    let pos = |r: &PointResult| scale.positions[chart.grid.coords(r.index)[0]];
    points.sort_by(|a, b| pos(a).total_cmp(&pos(b)).then(a.index.cmp(&b.index)));
    let top = points.iter().map(|r| r.max_ns.max(r.metric_ns)).max().unwrap_or(1).max(1) as f64 / 1e6 * 1.1;
    let metric = chart.metric.name();
    let mut c = ChartBuilder::on(area)
        .caption(format!("{metric} scheduling delay of {} against {}", chart.target, axis.key), (FONT, 18))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(60)
        // Ticks at the sweep's own values, so every label is a value that was run.
        .build_cartesian_2d(ValueAxis { lo: lo - pad, hi: hi + pad, ticks: scale.positions.clone() }, 0.0..top)
        .map_err(fail)?;
    let x_desc = if scale.log { format!("{} (log scale)", axis.key) } else { axis.key.clone() };
    c.configure_mesh()
        .x_desc(x_desc)
        .y_desc("delay (ms)")
        .x_label_formatter(&|x| scale.label(axis, *x))
        .y_label_formatter(&|y| format!("{y:.1}"))
        .draw()
        .map_err(fail)?;
    let at = |r: &PointResult| scale.positions[chart.grid.coords(r.index)[0]];
    // The ranked figure solid; the maximum dashed (unless it is the ranked one).
    let mut series = vec![(format!("{metric} delay"), CURRENT, true)];
    if chart.metric != Metric::Max {
        series.push(("max delay".into(), BASELINE, false));
    }
    for (i, (label, colour, solid)) in series.into_iter().enumerate() {
        let pts: Vec<(f64, f64)> =
            points.iter().map(|r| (at(r), if solid { r.metric_ns } else { r.max_ns } as f64 / 1e6)).collect();
        let style = colour.stroke_width(2);
        let drawn = if solid {
            c.draw_series(LineSeries::new(pts.clone(), style)).map_err(fail)?
        } else {
            c.draw_series(DashedLineSeries::new(pts.clone(), 8, 5, style)).map_err(fail)?
        };
        drawn.label(label).legend(move |(x, y)| {
            EmptyElement::at((x, y)) + PathElement::new(vec![(0, 0), (18, 0)], style) + marker(i, (9, 0), colour)
        });
        c.draw_series(pts.iter().map(|&p| EmptyElement::at(p) + marker(i, (0, 0), colour))).map_err(fail)?;
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(fail)
}

/// A light-to-dark blue ramp: `t` in [0, 1], 0 the smallest delay.
fn ramp(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t) as u8;
    RGBColor(mix(235, 20), mix(244, 60), mix(250, 130))
}

fn heat_map<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &SweepChart,
    slow: &Axis,
    fast: &Axis,
) -> DrawResult {
    let metric = chart.metric.name();
    // Cell i spans [i, i + 1); ticks at the centres carry the values.
    let cells = |n: usize| ValueAxis { lo: 0.0, hi: n as f64, ticks: (0..n).map(|i| i as f64 + 0.5).collect() };
    let mut c = ChartBuilder::on(area)
        .caption(format!("{metric} scheduling delay of {} (ms)", chart.target), (FONT, 18))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(90)
        .build_cartesian_2d(cells(fast.len()), cells(slow.len()))
        .map_err(fail)?;
    let label = |axis: &Axis, v: f64| axis.values.get(libm::floor(v.max(0.0)) as usize).cloned().unwrap_or_default();
    c.configure_mesh()
        .disable_mesh()
        .x_desc(fast.key.as_str())
        .y_desc(slow.key.as_str())
        .x_label_formatter(&|v| label(fast, *v))
        .y_label_formatter(&|v| label(slow, *v))
        .draw()
        .map_err(fail)?;
    // Colour by log delay over at most a 30× range below the largest, so a
    // 1–24 ms sweep uses the whole ramp while 3.00 vs 3.01 ms look alike.
    let hi = chart.results.iter().map(|r| r.metric_ns.max(1) as f64).fold(1.0, f64::max);
    let lo = chart.results.iter().map(|r| r.metric_ns.max(1) as f64).fold(hi, f64::min).min(hi / 30.0);
    let span = libm::log10(hi / lo);
    for r in chart.results {
        let xy = chart.grid.coords(r.index);
        let (x, y) = (xy[1] as f64, xy[0] as f64);
        let t = libm::log10(r.metric_ns.max(1) as f64 / lo) / span;
        c.draw_series(std::iter::once(Rectangle::new([(x, y), (x + 1.0, y + 1.0)], ramp(t).filled()))).map_err(fail)?;
        let ink = if t > 0.55 { WHITE } else { BLACK };
        let style = TextStyle::from((FONT, 14).into_font()).color(&ink).pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Center,
        ));
        c.draw_series(std::iter::once(Text::new(ms(r.metric_ns), (x + 0.5, y + 0.5), style))).map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;
    use crate::sweep::{Axis, run_point};

    fn svg(grid: &Grid, results: &[PointResult]) -> Result<String, String> {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (800, 500)).into_drawing_area();
            let chart =
                SweepChart { grid, results, metric: Metric::P99, target: "sleeper", caption: "seed 1 · fixed: none" };
            sweep_chart(&root, &chart)?;
            root.present().map_err(fail)?;
        }
        Ok(out)
    }

    #[test]
    fn one_axis_draws_a_line_two_a_heat_map_three_an_error() {
        let s = Scenario::from_toml("t.toml", crate::plot::CHART_TEST_SCENARIO).unwrap();
        let lat = Axis::parse("cfs.sched_latency_ns=1ms..24ms:log:3").unwrap();
        let hz = Axis::parse("machine.hz=250,1000").unwrap();
        let one = Grid::new(vec![lat.clone()]).unwrap();
        let r: Vec<PointResult> = (0..one.len()).map(|i| run_point(&s, &one, i, Metric::P99).unwrap()).collect();
        let line = svg(&one, &r).unwrap();
        for needle in
            ["p99 scheduling delay of sleeper against cfs.sched_latency_ns", "max delay", "(log scale)", "seed 1"]
        {
            assert!(line.contains(needle), "{needle}: {line}");
        }
        let two = Grid::new(vec![hz.clone(), lat.clone()]).unwrap();
        let r: Vec<PointResult> = (0..two.len()).map(|i| run_point(&s, &two, i, Metric::P99).unwrap()).collect();
        let map = svg(&two, &r).unwrap();
        assert!(map.contains("machine.hz") && map.contains("24ms") && map.contains("1000"), "{map}");
        // One annotation per cell, in ms.
        assert!(map.contains(&ms(r[0].metric_ns)), "{map}");
        // A list in any order is drawn left to right: no line goes back.
        let shuffled = Grid::new(vec![Axis::parse("cfs.sched_latency_ns=8ms,1ms,4ms,2ms").unwrap()]).unwrap();
        let r: Vec<PointResult> =
            (0..shuffled.len()).map(|i| run_point(&s, &shuffled, i, Metric::P99).unwrap()).collect();
        let drawn = svg(&shuffled, &r).unwrap();
        let lines: Vec<Vec<f64>> = drawn
            .split("<polyline")
            .skip(1)
            .filter_map(|p| p.split("points=\"").nth(1)?.split('"').next())
            .map(|pts| pts.split_whitespace().filter_map(|xy| xy.split(',').next()?.parse().ok()).collect())
            .filter(|xs: &Vec<f64>| xs.len() >= 3)
            .collect();
        assert!(!lines.is_empty(), "{drawn}");
        assert!(lines.iter().all(|xs| xs.windows(2).all(|w| w[0] <= w[1])), "{lines:?}");
        let three = Grid::new(vec![hz, lat, Axis::parse("seed=1,2").unwrap()]).unwrap();
        assert!(svg(&three, &[]).unwrap_err().contains("this sweep varies 3"));
    }
}
