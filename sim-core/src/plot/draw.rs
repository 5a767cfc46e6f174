//! Drawing the charts of `plot::data` on any plotters backend (SVG for the
//! CLI, an HTML canvas for the web page). Series are told apart without
//! colour: the current run is filled or solid, the baseline hollow or dashed,
//! and each task or device has its own marker shape.

use super::data::{DelayChart, IoChart, Timeline};
use crate::metrics::CdfPoint;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Drawing errors, as text (the backends' error types differ).
pub type DrawResult = Result<(), String>;

pub(crate) fn fail<E: std::fmt::Display>(e: E) -> String {
    format!("drawing failed: {e}")
}

pub(crate) const CURRENT: RGBColor = RGBColor(31, 100, 170);
pub(crate) const BASELINE: RGBColor = RGBColor(40, 40, 40);
pub(crate) const WORST: RGBColor = RGBColor(200, 30, 30);
pub(crate) const FONT: &str = "sans-serif";

/// `ns` in the unit a reader expects on a latency axis.
pub fn fmt_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{}s", trim(ns / 1e9))
    } else if ns >= 1e6 {
        format!("{}ms", trim(ns / 1e6))
    } else if ns >= 1e3 {
        format!("{}µs", trim(ns / 1e3))
    } else {
        format!("{}ns", trim(ns))
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A percentile on the "nines" axis: `y = -log10(1 - p)` (0 → p0, 1 → p90,
/// 2 → p99, …), as HdrHistogram's percentile plots space them.
fn nines(count: u64, total: u64) -> f64 {
    let tail = 1.0 - count as f64 / total as f64;
    -libm::log10(tail.max(0.5 / total as f64))
}

pub(crate) fn nines_label(y: f64) -> String {
    let p = 100.0 * (1.0 - libm::pow(10.0, -y));
    // As many decimals as the axis has nines past p99: p99.9, p99.99, …
    let decimals = (libm::ceil(y - 1e-9) as i64 - 2).max(0) as usize;
    format!("p{p:.decimals$}")
}

/// The log-axis range covering every non-zero value, widened to whole decades.
pub(crate) fn log_range(values: impl Iterator<Item = u64>) -> (f64, f64) {
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for v in values.filter(|&v| v > 0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi == 0 {
        return (1e3, 1e6);
    }
    let lo = libm::pow(10.0, libm::floor(libm::log10(lo as f64)));
    let hi = libm::pow(10.0, libm::ceil(libm::log10(hi as f64 * 1.01)));
    (lo, hi.max(lo * 10.0))
}

/// Whether `area` is wide enough for legends with counts; on a narrow one
/// (a phone's canvas) a legend names its series only, and the page's tables
/// carry the counts.
fn wide<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> bool {
    area.dim_in_pixel().0 >= 560
}

/// The victim's delay histogram, log delay against log count, one series per
/// run: `runs[0]` (the current run) as filled bars, the others (the pinned
/// baseline) as outlines. Delays of 0 ns are counted in the legend.
pub fn delay_histogram<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, victim: &str, runs: &[&DelayChart]) -> DrawResult {
    area.fill(&WHITE).map_err(fail)?;
    let detail = wide(area);
    let (lo, hi) = log_range(runs.iter().flat_map(|r| r.histogram.iter().flat_map(|b| [b.low_ns, b.high_ns])));
    let top = runs.iter().flat_map(|r| r.histogram.iter().map(|b| b.count)).max().unwrap_or(1).max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(format!("Scheduling delay of {victim}: histogram"), (FONT, 18))
        .margin(12)
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
            .draw_series(run.histogram.iter().filter(|b| b.low_ns > 0).map(move |b| {
                Rectangle::new([(b.low_ns as f64, 0.5), (b.high_ns as f64, b.count as f64)], style)
            }))
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
}

/// Line patterns after solid: `(dash, gap)` in pixels.
const DASHES: [(u32, u32); 4] = [(8, 5), (2, 4), (14, 4), (6, 2)];

/// Colour of series style `i` (0 and 1 are the page's current and baseline).
pub(crate) fn series_colour(i: usize) -> RGBColor {
    const MORE: [RGBColor; 5] = [
        RGBColor(214, 110, 0),
        RGBColor(60, 140, 50),
        RGBColor(150, 70, 170),
        RGBColor(190, 40, 90),
        RGBColor(20, 150, 160),
    ];
    match i {
        0 => CURRENT,
        1 => BASELINE,
        _ => MORE[(i - 2) % MORE.len()],
    }
}

/// Delay CDFs on a log delay axis against a "nines" percentile axis, so the
/// tail (p99, p99.9, max) gets as much room as the median.
pub fn cdf<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, title: &str, x_desc: &str, series: &[CdfSeries]) -> DrawResult {
    area.fill(&WHITE).map_err(fail)?;
    let detail = wide(area);
    let (lo, hi) = log_range(series.iter().flat_map(|s| s.cdf.iter().map(|p| p.value_ns)));
    let ymax = series.iter().map(|s| nines(s.count, s.count.max(1))).fold(1.0f64, f64::max).ceil();
    let mut chart = ChartBuilder::on(area)
        .caption(title, (FONT, 18))
        .margin(12)
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
    for s in series {
        if s.count == 0 {
            continue;
        }
        let colour = series_colour(s.style);
        let points: Vec<(f64, f64)> =
            s.cdf.iter().map(|p| ((p.value_ns as f64).max(lo), nines(p.count, s.count))).collect();
        let style = colour.stroke_width(2);
        // Zero values cannot sit on a log axis: they are drawn at its left edge and counted here.
        let zeros = s.cdf.first().filter(|p| p.value_ns == 0).map_or(0, |p| p.count);
        let label = if detail {
            format!("{} (n={}, {} of 0 ns at the left edge)", s.label, s.count, zeros)
        } else {
            s.label.clone()
        };
        let drawn = match s.style {
            0 => chart.draw_series(LineSeries::new(points.clone(), style)).map_err(fail)?,
            k => {
                let (dash, gap) = DASHES[(k - 1) % DASHES.len()];
                chart.draw_series(DashedLineSeries::new(points.clone(), dash, gap, style)).map_err(fail)?
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
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(fail)
}

/// Marker shape `i` (circle, triangle, cross, square, repeating).
pub(crate) fn marker<DB: DrawingBackend>(i: usize, at: (i32, i32), c: RGBColor) -> DynElement<'static, DB, (i32, i32)> {
    match i % 4 {
        0 => Circle::new(at, 4, c.filled()).into_dyn(),
        1 => TriangleMarker::new(at, 5, c.stroke_width(2)).into_dyn(),
        2 => Cross::new(at, 4, c.stroke_width(2)).into_dyn(),
        _ => Rectangle::new([(at.0 - 3, at.1 - 3), (at.0 + 3, at.1 + 3)], c.stroke_width(2)).into_dyn(),
    }
}

/// Colour of a timeline row: the victim stands out, the rest cycle.
fn row_colour(row: usize) -> RGBColor {
    const OTHERS: [RGBColor; 6] = [
        RGBColor(230, 140, 20),
        RGBColor(90, 160, 60),
        RGBColor(150, 90, 180),
        RGBColor(120, 120, 120),
        RGBColor(200, 80, 120),
        RGBColor(60, 160, 170),
    ];
    if row == 0 { CURRENT } else { OTHERS[(row - 1) % OTHERS.len()] }
}

/// The victim's CPU around its worst delay: per task, solid bars while it
/// ran, thin bars while it waited runnable, ▲ at a wakeup that preempted and
/// △ at one that did not; the worst wait is boxed. Below, each task's
/// vruntime minus its queue's `min_vruntime` at wakeups and picks.
pub fn timeline<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, t: &Timeline) -> DrawResult {
    area.fill(&WHITE).map_err(fail)?;
    let height = area.dim_in_pixel().1;
    let (upper, lower) = area.split_vertically(height * 3 / 5);
    let origin = t.worst.start_ns as f64;
    let ms = |ns: u64| (ns as f64 - origin) / 1e6;
    let (x0, x1) = (ms(t.from_ns), ms(t.to_ns).max(ms(t.from_ns) + 0.001));
    let rows = t.rows.len().max(1);
    let y_of = |row: usize| (rows - 1 - row) as f64;
    let names = t.rows.clone();
    let mut chart = ChartBuilder::on(&upper)
        .caption(
            format!("CPU {} around the worst delay ({} waited {})", t.cpu, t.rows[0], fmt_ns((t.worst.end_ns - t.worst.start_ns) as f64)),
            (FONT, 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(150)
        .build_cartesian_2d(x0..x1, -0.6..(rows as f64 - 0.4))
        .map_err(fail)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(rows + 1)
        .y_label_formatter(&|y| {
            let r = libm::round(*y);
            if (y - r).abs() > 1e-6 || r < 0.0 || r as usize >= rows {
                return String::new();
            }
            names[rows - 1 - r as usize].clone()
        })
        .x_desc("ms from the start of the worst delay")
        .draw()
        .map_err(fail)?;
    chart
        .draw_series(t.runnable.iter().map(|s| {
            let y = y_of(s.row);
            Rectangle::new([(ms(s.start_ns), y - 0.1), (ms(s.end_ns), y + 0.1)], BLACK.mix(0.35).filled())
        }))
        .map_err(fail)?;
    chart
        .draw_series(t.running.iter().map(|s| {
            let y = y_of(s.row);
            Rectangle::new([(ms(s.start_ns), y - 0.32), (ms(s.end_ns), y + 0.32)], row_colour(s.row).filled())
        }))
        .map_err(fail)?;
    let w = &t.worst;
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(ms(w.start_ns), y_of(0) - 0.45), (ms(w.end_ns), y_of(0) + 0.45)],
            WORST.stroke_width(2),
        )))
        .map_err(fail)?;
    chart
        .draw_series(t.wakeups.iter().map(|m| {
            let style = if m.preempt { BLACK.filled() } else { BLACK.stroke_width(1) };
            TriangleMarker::new((ms(m.at_ns), y_of(m.row) + 0.42), 5, style)
        }))
        .map_err(fail)?;

    let lag_ms = |l: i64| l as f64 / 1e6;
    let (mut ylo, mut yhi) = (0.0f64, 0.0f64);
    for l in &t.lag {
        ylo = ylo.min(lag_ms(l.lag_ns));
        yhi = yhi.max(lag_ms(l.lag_ns));
    }
    let pad = ((yhi - ylo) * 0.1).max(0.5);
    let mut lag = ChartBuilder::on(&lower)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(150)
        .build_cartesian_2d(x0..x1, (ylo - pad)..(yhi + pad))
        .map_err(fail)?;
    lag.configure_mesh()
        .y_desc("vruntime − min_vruntime (ms)")
        .x_desc("at wakeup (after place_entity) and at pick")
        .draw()
        .map_err(fail)?;
    lag.draw_series(LineSeries::new([(x0, 0.0), (x1, 0.0)], BLACK.mix(0.4))).map_err(fail)?;
    for row in 0..t.rows.len() {
        let pts: Vec<(f64, f64)> =
            t.lag.iter().filter(|l| l.row == row).map(|l| (ms(l.at_ns), lag_ms(l.lag_ns))).collect();
        if pts.is_empty() {
            continue;
        }
        let c = row_colour(row);
        lag.draw_series(LineSeries::new(pts.clone(), c.stroke_width(1))).map_err(fail)?;
        lag.draw_series(pts.iter().map(|&p| EmptyElement::at(p) + marker(row, (0, 0), c)))
            .map_err(fail)?
            .label(t.rows[row].clone())
            .legend(move |(x, y)| EmptyElement::at((x + 8, y)) + marker(row, (0, 0), c));
    }
    lag.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(fail)
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
            series.push(CdfSeries { label: c.label.clone(), cdf, count, style: i + j * runs.len() });
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

/// Draws `lines` (`data::caption`) as a caption along the bottom of `area`,
/// wrapped to its width, and returns the area above it for the chart.
pub fn with_caption<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    lines: &[String],
) -> Result<DrawingArea<DB, Shift>, String> {
    const LINE: u32 = 15;
    let (w, h) = area.dim_in_pixel();
    // About 6.5 px per character of a 12 px sans-serif font.
    let width = (w as usize * 10 / 65).max(40);
    let mut wrapped: Vec<String> = Vec::new();
    for line in lines {
        let mut cur = String::new();
        for word in line.split(' ') {
            if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
                wrapped.push(std::mem::take(&mut cur));
                cur.push_str("    ");
            } else if !cur.is_empty() && !cur.ends_with("    ") {
                cur.push(' ');
            }
            cur.push_str(word);
        }
        wrapped.push(cur);
    }
    let height = (wrapped.len() as u32 * LINE + 8).min(h / 2);
    let (upper, lower) = area.split_vertically(h - height);
    lower.fill(&WHITE).map_err(fail)?;
    let grey = BLACK.mix(0.75);
    let style = TextStyle::from((FONT, 12).into_font()).color(&grey);
    for (i, l) in wrapped.iter().enumerate() {
        lower.draw_text(l, &style, (10, 2 + (i as u32 * LINE) as i32)).map_err(fail)?;
    }
    Ok(upper)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;
    use crate::plot::data::io_charts;


    fn svg(w: u32, h: u32, f: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> DrawResult) -> String {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
            f(&root).unwrap();
            root.present().unwrap();
        }
        out
    }

    #[test]
    fn a_narrow_chart_names_its_series_without_counts() {
        // A phone's canvas is about 370 CSS px wide: "label (N delays, M of 0 ns)" would run off it.
        let s = Scenario::from_toml("t.toml", crate::plot::CHART_TEST_SCENARIO).unwrap();
        let a = DelayChart::from_report(&crate::run(&s), "current");
        let b = DelayChart::from_report(&crate::run(&s), "baseline: t, variant v");
        let narrow = svg(370, 260, |root| delay_histogram(root, "sleeper", &[&a, &b]));
        assert!(narrow.contains("\nbaseline: t, variant v\n") && !narrow.contains(" delays, "), "{narrow}");
        let series = [CdfSeries { label: "current".into(), cdf: &a.cdf, count: a.count, style: 0 }];
        let narrow = svg(370, 260, |root| cdf(root, "t", "delay", &series));
        assert!(narrow.contains("\ncurrent\n") && !narrow.contains("at the left edge"), "{narrow}");
        let wide = svg(600, 260, |root| delay_histogram(root, "sleeper", &[&a, &b]));
        assert!(wide.contains("\nbaseline: t, variant v (") && wide.contains(" delays, "), "{wide}");
    }

    #[test]
    fn every_chart_draws_its_series_and_labels() {
        let s = Scenario::from_toml("t.toml", crate::plot::CHART_TEST_SCENARIO).unwrap();
        let cur = crate::run(&s);
        let base = crate::run(&s.with_overrides(&[("features.WAKEUP_PREEMPTION", "false")]).unwrap());
        let (a, b) = (DelayChart::from_report(&cur, "current"), DelayChart::from_report(&base, "baseline"));
        let h = svg(800, 400, |root| delay_histogram(root, "sleeper", &[&a, &b]));
        assert!(h.contains("Scheduling delay of sleeper") && h.contains("current (") && h.contains("baseline ("), "{h}");
        // One bar per non-zero bucket of each run.
        let bars = a.histogram.iter().chain(&b.histogram).filter(|b| b.low_ns > 0).count();
        assert!(h.matches("<rect").count() >= bars, "{bars} bars");
        let series = [
            CdfSeries { label: "current".into(), cdf: &a.cdf, count: a.count, style: 0 },
            CdfSeries { label: "baseline".into(), cdf: &b.cdf, count: b.count, style: 1 },
        ];
        let c = svg(800, 400, |root| cdf(root, "CDF", "delay", &series));
        assert!(c.contains("p99") && c.contains("current (n="), "{c}");
        let t = Timeline::from_report(&cur).unwrap();
        let tl = svg(900, 500, |root| timeline(root, &t));
        assert!(tl.contains("CPU 0 around the worst delay") && tl.contains(&t.rows[0]), "{tl}");
        let q = svg(800, 400, |root| q2d(root, &io_charts(&cur, "current"), &io_charts(&base, "baseline")));
        assert!(q.contains("current: sda (deadline)") && q.contains("baseline: sda (deadline)"), "{q}");
        assert_eq!(fmt_ns(26_690_000.0), "26.69ms");
        let labels: Vec<String> = [0.0, 1.0, 2.0, 3.0, 5.0].into_iter().map(nines_label).collect();
        assert_eq!(labels, ["p0", "p90", "p99", "p99.9", "p99.999"]);
    }

    #[test]
    fn comparison_charts_carry_every_run_and_a_caption_with_seed_and_settings() {
        let s = Scenario::from_toml("t.toml", crate::plot::CHART_TEST_SCENARIO).unwrap();
        let runs: Vec<(&str, crate::RunReport)> = vec![
            ("base", crate::run(&s)),
            ("no-wakeup-preemption", crate::run(&s.with_overrides(&[("features.WAKEUP_PREEMPTION", "false")]).unwrap())),
            ("noop", crate::run(&s.with_overrides(&[("devices.sda.elevator", "\"noop\"")]).unwrap())),
        ];
        let labelled: Vec<(&str, &crate::RunReport)> = runs.iter().map(|(l, r)| (*l, r)).collect();
        let cap = crate::plot::data::caption(&labelled);
        assert!(cap[0].contains("seed 1") && cap[0].contains("300ms simulated"), "{cap:?}");
        assert!(cap[1].starts_with("base: HZ=1000 sched_latency=") && !cap[1].contains("NO_"), "{cap:?}");
        assert!(cap[2].contains("NO_WAKEUP_PREEMPTION") && cap[3].contains("sda=noop"), "{cap:?}");

        let charts: Vec<DelayChart> = runs.iter().map(|(l, r)| DelayChart::from_report(r, l)).collect();
        let series: Vec<CdfSeries> = charts
            .iter()
            .enumerate()
            .map(|(i, c)| CdfSeries { label: c.label.clone(), cdf: &c.cdf, count: c.count, style: i })
            .collect();
        let out = svg(900, 600, |root| {
            let area = with_caption(root, &cap)?;
            cdf(&area, "Scheduling delay of sleeper: CDF", "delay", &series)
        });
        for (label, _) in &runs {
            assert!(out.contains(&format!("{label} (n=")), "{label} missing from the legend");
        }
        assert!(out.contains("NO_WAKEUP_PREEMPTION") && out.contains("seed 1"), "caption missing");

        let io: Vec<Vec<IoChart>> = runs.iter().map(|(l, r)| io_charts(r, l)).collect();
        let refs: Vec<&[IoChart]> = io.iter().map(Vec::as_slice).collect();
        let q2c = svg(900, 500, |root| io_cdf(root, IoStage::Q2C, &refs));
        assert!(q2c.contains("Q2C (queued to completed)") && q2c.contains("noop: sda (noop)"), "{q2c}");
        assert!(io[0][0].q2c_count > 0 && io[0][0].q2c_cdf.last().unwrap().count == io[0][0].q2c_count);
    }
}
