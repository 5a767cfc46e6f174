//! Distribution charts: the victim's delay histogram, delay CDFs on a
//! "nines" axis, and the block devices' Q2D/Q2C CDFs.

use super::style::DrawResult;
use super::style::*;
use crate::metrics::CdfPoint;
use crate::plot::data::{DelayChart, IoChart};
use crate::report::bands::CurveBand;
use plotters::coord::Shift;
use plotters::prelude::*;

/// The victim's delay histogram, log delay against log count, one series per
/// run: `runs[0]` (the current run) as filled bars, the others (the pinned
/// baseline) as outlines. Delays of 0 ns are counted in the legend.
pub fn delay_histogram<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    victim: &str,
    runs: &[&DelayChart],
) -> DrawResult {
    area.fill(&WHITE).map_err(fail)?;
    let detail = wide(area);
    let (lo, hi) = log_range(runs.iter().flat_map(|r| r.histogram.iter().flat_map(|b| [b.low_ns, b.high_ns])));
    let top = runs.iter().flat_map(|r| r.histogram.iter().map(|b| b.count)).max().unwrap_or(1).max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(format!("Scheduling delay of {victim}: histogram"), (FONT, 18))
        .margin(12)
        .margin_right(RIGHT_MARGIN)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((lo..hi).log_scale(), (0.5..top * 3.0).log_scale())
        .map_err(fail)?;
    chart
        .configure_mesh()
        .x_desc("delay (wakeup or preemption to running)")
        .y_desc("delays")
        .x_label_formatter(&|v| fmt_ns(*v))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(fail)?;
    for (i, run) in runs.iter().enumerate() {
        let current = i == 0;
        let style = if current { CURRENT.mix(0.55).filled() } else { BASELINE.stroke_width(2) };
        let label = if detail {
            format!("{} ({} delays, {} of 0 ns)", run.label, run.count, run.zero_count())
        } else {
            run.label.clone()
        };
        chart
            .draw_series(
                run.histogram
                    .iter()
                    .filter(|b| b.low_ns > 0)
                    .map(move |b| Rectangle::new([(b.low_ns as f64, 0.5), (b.high_ns as f64, b.count as f64)], style)),
            )
            .map_err(fail)?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], style));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(fail)
}

/// One CDF series: its label, points, and total count.
pub struct CdfSeries<'a> {
    pub label: String,
    pub cdf: &'a [CdfPoint],
    pub count: u64,
    /// Its look: 0 solid (the current run), 1 dashed (the baseline), then
    /// further dash patterns, colours and markers (`series_style`).
    pub style: usize,
    /// Waits still open when the run stopped (in neither `cdf` nor `count`)
    /// and the longest of them so far: marked on the chart and in the legend.
    pub open_count: u64,
    pub open_max_ns: u64,
    /// The series' band over tick phases and seeds (`Bands`' curve, empty
    /// for none): min–max shaded, the median a thin line.
    pub band: &'a [CurveBand],
}

impl<'a> CdfSeries<'a> {
    /// A series of `count` finished waits, none open.
    pub fn new(label: String, cdf: &'a [CdfPoint], count: u64, style: usize) -> CdfSeries<'a> {
        CdfSeries { label, cdf, count, style, open_count: 0, open_max_ns: 0, band: &[] }
    }

    /// The same series with a band over tick phases (and seeds) drawn under it.
    pub fn with_band(self, band: &'a [CurveBand]) -> CdfSeries<'a> {
        CdfSeries { band, ..self }
    }

    /// The same series with `count` waits still open, the longest `max_ns` so far.
    pub fn with_open(self, count: u64, max_ns: u64) -> CdfSeries<'a> {
        CdfSeries { open_count: count, open_max_ns: max_ns, ..self }
    }

    /// What the legend or the note says about the open waits.
    fn open_text(&self) -> String {
        crate::metrics::latency::still_waiting(self.open_count, &fmt_ns(self.open_max_ns as f64))
    }
}

impl DelayChart {
    /// Its CDF as a chart series of style `style`, open waits included.
    pub fn series(&self, style: usize) -> CdfSeries<'_> {
        CdfSeries::new(self.label.clone(), &self.cdf, self.count, style).with_open(self.open_count, self.open_max_ns)
    }
}

/// Delay CDFs on a log delay axis against a "nines" percentile axis, so the
/// tail (p99, p99.9, max) gets as much room as the median.
pub fn cdf<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    series: &[CdfSeries],
) -> DrawResult {
    area.fill(&WHITE).map_err(fail)?;
    let detail = wide(area);
    // Open waits widen the axis: the oldest is a lower bound on the tail.
    let open = series.iter().filter(|s| s.open_count > 0).map(|s| s.open_max_ns);
    let band = series.iter().flat_map(|s| s.band.iter().flat_map(|b| [b.min_ns, b.max_ns]));
    let (lo, hi) = log_range(series.iter().flat_map(|s| s.cdf.iter().map(|p| p.value_ns)).chain(open).chain(band));
    let ymax = series.iter().map(|s| nines(s.count, s.count.max(1))).fold(1.0f64, f64::max).ceil();
    let mut chart = ChartBuilder::on(area)
        .caption(title, (FONT, 18))
        .margin(12)
        .margin_right(RIGHT_MARGIN)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((lo..hi).log_scale(), 0.0..ymax)
        .map_err(fail)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("percentile")
        .y_labels(ymax as usize + 1)
        .x_label_formatter(&|v| fmt_ns(*v))
        .y_label_formatter(&|v| nines_label(*v))
        .draw()
        .map_err(fail)?;
    // A series with nothing finished has no distribution to draw (a line
    // through no samples would invent one): it gets a note instead.
    let mut notes: Vec<(String, RGBColor)> = Vec::new();
    for s in series {
        if s.count == 0 {
            let open = if s.open_count == 0 {
                String::new()
            } else {
                format!("; {} open, oldest {}", s.open_count, fmt_ns(s.open_max_ns as f64))
            };
            notes.push((format!("{}: no completions{open}", s.label), series_colour(s.style)));
            continue;
        }
        let colour = series_colour(s.style);
        draw_band(&mut chart, s, lo, colour)?;
        let points: Vec<(f64, f64)> =
            s.cdf.iter().map(|p| ((p.value_ns as f64).max(lo), nines(p.count, s.count))).collect();
        let steps = cdf_steps(&points);
        let style = colour.stroke_width(2);
        // Zero values cannot sit on a log axis: they are drawn at its left edge and counted here.
        let zeros = s.cdf.first().filter(|p| p.value_ns == 0).map_or(0, |p| p.count);
        let open = if s.open_count == 0 { String::new() } else { format!("; {}", s.open_text()) };
        // A narrow chart drops the counts (they are in the tables), never the open waits.
        let label = if detail {
            format!("{} (n={}, {} of 0 ns at the left edge{open})", s.label, s.count, zeros)
        } else if s.open_count == 0 {
            s.label.clone()
        } else {
            format!("{} ({})", s.label, s.open_text())
        };
        let drawn = match s.style {
            0 => chart.draw_series(LineSeries::new(steps, style)).map_err(fail)?,
            k => {
                let (dash, gap) = DASHES[(k - 1) % DASHES.len()];
                chart.draw_series(DashedLineSeries::new(steps, dash, gap, style)).map_err(fail)?
            }
        };
        let m = s.style;
        drawn.label(label).legend(move |(x, y)| {
            EmptyElement::at((x, y)) + PathElement::new(vec![(0, 0), (18, 0)], style) + marker(m, (9, 0), colour)
        });
        // Markers thinned to about 12 per series, so shapes tell series apart.
        let step = (points.len() / 12).max(1);
        chart
            .draw_series(points.iter().step_by(step).map(|&p| EmptyElement::at(p) + marker(m, (0, 0), colour)))
            .map_err(fail)?;
        // Open waits longer than every finished one: a dotted run from the
        // series' top to the oldest open wait, ending in a ▶ (the wait had
        // lasted that long and was not over). Shorter ones are only counted
        // in the legend.
        if s.open_count > 0
            && let Some(&(x, y)) = points.last()
            && s.open_max_ns as f64 > x
        {
            let to = s.open_max_ns as f64;
            chart.draw_series(DashedLineSeries::new([(x, y), (to, y)], 2, 3, colour.stroke_width(1))).map_err(fail)?;
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((to, y))
                        + Polygon::new(vec![(0, -6), (9, 0), (0, 6)], colour.mix(0.25).filled())
                        + PathElement::new(vec![(0, -6), (9, 0), (0, 6), (0, -6)], colour.stroke_width(2)),
                ))
                .map_err(fail)?;
        }
    }
    // No line drawn, no legend (an empty box otherwise).
    if notes.len() < series.len() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(fail)?;
    }
    let plot = chart.plotting_area().strip_coord_spec();
    for (i, (note, colour)) in notes.iter().enumerate() {
        let style = TextStyle::from((FONT, 13).into_font()).color(colour);
        plot.draw_text(note, &style, (10, 8 + 18 * i as i32)).map_err(fail)?;
    }
    Ok(())
}

/// A series' band: the min–max area between its percentiles shaded, the
/// median a thin line. Each band percentile sits at the height the series'
/// own line gives it (its rank among the series' `count` waits), so the
/// band's p100 meets the line's top.
fn draw_band<DB: DrawingBackend>(
    chart: &mut ChartContext<DB, Cartesian2d<LogCoord<f64>, plotters::coord::types::RangedCoordf64>>,
    s: &CdfSeries,
    lo: f64,
    colour: RGBColor,
) -> DrawResult {
    if s.band.is_empty() || s.count == 0 {
        return Ok(());
    }
    let y = |ppm: u32| {
        let rank = (u128::from(s.count) * u128::from(ppm)).div_ceil(1_000_000) as u64;
        nines(rank.max(1), s.count)
    };
    let x = |ns: u64| (ns as f64).max(lo);
    let mut area: Vec<(f64, f64)> = s.band.iter().map(|b| (x(b.min_ns), y(b.ppm))).collect();
    area.extend(s.band.iter().rev().map(|b| (x(b.max_ns), y(b.ppm))));
    chart.draw_series(std::iter::once(Polygon::new(area, colour.mix(0.18).filled()))).map_err(fail)?;
    let median: Vec<(f64, f64)> = s.band.iter().map(|b| (x(b.median_ns), y(b.ppm))).collect();
    chart.draw_series(LineSeries::new(median, colour.mix(0.7).stroke_width(1))).map_err(fail)?;
    Ok(())
}

/// A CDF is a step function: the share at or below `x` stays the same until
/// the next value recorded, then jumps. From p0 at the first value, each
/// point is reached by a horizontal run at the previous share and then a
/// vertical jump, so the line never reads a share between two values.
pub(crate) fn cdf_steps(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(2 * points.len() + 1);
    let Some(&(x0, _)) = points.first() else { return out };
    out.push((x0, 0.0));
    for &(x, y) in points {
        if let Some(&(_, prev)) = out.last() {
            out.push((x, prev));
        }
        out.push((x, y));
    }
    out.dedup();
    out
}

/// Which block-layer latency an I/O chart shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoStage {
    /// Queued to dispatched: time in the elevator.
    Q2D,
    /// Queued to completed: what the submitter waits.
    Q2C,
}

/// Q2D or Q2C CDFs of every device of each run (`runs[0]` the current or
/// first run): one line per run and device, each run its own line style.
pub fn io_cdf<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, stage: IoStage, runs: &[&[IoChart]]) -> DrawResult {
    let mut series = Vec::new();
    for (i, charts) in runs.iter().enumerate() {
        for (j, c) in charts.iter().enumerate() {
            let (cdf, count) = match stage {
                IoStage::Q2D => (&c.cdf, c.count),
                IoStage::Q2C => (&c.q2c_cdf, c.q2c_count),
            };
            // Devices of one run share its colour family but not its marker.
            let (open_count, open_max_ns) = match stage {
                IoStage::Q2D => (c.open_count, c.open_max_ns),
                IoStage::Q2C => (c.q2c_open_count, c.q2c_open_max_ns),
            };
            series.push(
                CdfSeries::new(c.label.clone(), cdf, count, i + j * runs.len()).with_open(open_count, open_max_ns),
            );
        }
    }
    let (title, x) = match stage {
        IoStage::Q2D => ("Block I/O: Q2D (queued to dispatched) per elevator", "Q2D"),
        IoStage::Q2C => ("Block I/O: Q2C (queued to completed) per elevator", "Q2C"),
    };
    cdf(area, title, x, &series)
}

/// Q2D CDFs of every device: `current` solid, `baseline` dashed.
pub fn q2d<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, current: &[IoChart], baseline: &[IoChart]) -> DrawResult {
    io_cdf(area, IoStage::Q2D, &[current, baseline])
}
