//! Drawing the charts of `plot::data` on any plotters backend (SVG for the
//! CLI, an HTML canvas for the web page). Series are told apart without
//! colour: the current run is filled or solid, the baseline hollow or dashed,
//! and each task or device has its own marker shape.

use super::data::{DelayChart, IoChart, OccupancyChart, Timeline, TimelineState};
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

/// Right margin of charts whose x axis ends on a tick: half of its label
/// (`100ms`, centred on the axis end) must fit inside the image.
const RIGHT_MARGIN: u32 = 32;

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
    /// Waits still open when the run stopped (in neither `cdf` nor `count`)
    /// and the longest of them so far: marked on the chart and in the legend.
    pub open_count: u64,
    pub open_max_ns: u64,
}

impl<'a> CdfSeries<'a> {
    /// A series of `count` finished waits, none open.
    pub fn new(label: String, cdf: &'a [CdfPoint], count: u64, style: usize) -> CdfSeries<'a> {
        CdfSeries { label, cdf, count, style, open_count: 0, open_max_ns: 0 }
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
    // Open waits widen the axis: the oldest is a lower bound on the tail.
    let open = series.iter().filter(|s| s.open_count > 0).map(|s| s.open_max_ns);
    let (lo, hi) = log_range(series.iter().flat_map(|s| s.cdf.iter().map(|p| p.value_ns)).chain(open));
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

/// Marker shape `i` (circle, triangle, cross, square, repeating).
pub(crate) fn marker<DB: DrawingBackend>(i: usize, at: (i32, i32), c: RGBColor) -> DynElement<'static, DB, (i32, i32)> {
    match i % 4 {
        0 => Circle::new(at, 4, c.filled()).into_dyn(),
        1 => TriangleMarker::new(at, 5, c.stroke_width(2)).into_dyn(),
        2 => Cross::new(at, 4, c.stroke_width(2)).into_dyn(),
        _ => Rectangle::new([(at.0 - 3, at.1 - 3), (at.0 + 3, at.1 + 3)], c.stroke_width(2)).into_dyn(),
    }
}

/// Points in pixels.
type Pixels = Vec<(i32, i32)>;

/// The wake-up mark at `at` (corners, closed outline): ▲ filled for a wakeup that preempted the
/// running task, △ hollow (white inside, outlined) for one that did not.
/// (plotters' `TriangleMarker` fills whatever the style, so the two looked
/// the same.)
fn wake_triangle(at: (i32, i32)) -> (Pixels, Pixels) {
    let (x, y) = at;
    let corners = vec![(x, y - 6), (x + 6, y + 4), (x - 6, y + 4)];
    let mut outline = corners.clone();
    outline.push(corners[0]);
    (corners, outline)
}

/// The inside of a wake-up mark: the colour for ▲, white for △.
fn wake_fill(preempt: bool, c: RGBColor) -> ShapeStyle {
    if preempt { c.filled() } else { WHITE.filled() }
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

/// How a key entry of the timeline is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyGlyph {
    /// A solid bar in the task's colour: the task ran.
    Bar,
    /// A thin grey bar: waiting runnable.
    ThinBar,
    /// A red outline: the worst wait.
    Outline,
    /// ▲: a wakeup that preempted.
    TriangleFilled,
    /// △: a wakeup that did not preempt.
    TriangleOpen,
}

/// One entry of the timeline's colour key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyEntry {
    pub glyph: KeyGlyph,
    pub colour: RGBColor,
    pub label: String,
}

impl KeyEntry {
    /// The colour as CSS writes it (`#1F64AA`, as plotters writes it), for the page's HTML key.
    pub fn colour_hex(&self) -> String {
        let RGBColor(r, g, b) = self.colour;
        format!("#{r:02X}{g:02X}{b:02X}")
    }
}

const RUNNABLE: RGBColor = RGBColor(166, 166, 166);

/// The timeline's key: one entry per task (the colour of its bars; the
/// victim first) and one per state glyph, in the order drawn.
pub fn timeline_key(t: &Timeline) -> Vec<KeyEntry> {
    let tasks = t.rows.iter().enumerate().map(|(row, name)| KeyEntry {
        glyph: KeyGlyph::Bar,
        colour: row_colour(row),
        label: if row == 0 { format!("{name} ran (victim)") } else { format!("{name} ran") },
    });
    let states = [
        (KeyGlyph::ThinBar, RUNNABLE, TimelineState::Runnable),
        (KeyGlyph::Outline, WORST, TimelineState::WorstWait),
        (KeyGlyph::TriangleFilled, BLACK, TimelineState::WakeupPreempt),
        (KeyGlyph::TriangleOpen, BLACK, TimelineState::Wakeup),
    ]
    .into_iter()
    .map(|(glyph, colour, state)| KeyEntry { glyph, colour, label: state.label().to_string() });
    tasks.chain(states).collect()
}

/// Draws the key along the top of `area`, wrapped to its width, and returns
/// the area below it.
fn draw_key<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, key: &[KeyEntry]) -> Result<DrawingArea<DB, Shift>, String> {
    const LINE: i32 = 18;
    const SWATCH: i32 = 22;
    // About 6.5 px per character of a 12 px sans-serif font (as `with_caption`).
    let text_w = |s: &str| (s.chars().count() as i32 * 13 + 1) / 2;
    let width = area.dim_in_pixel().0 as i32 - 12;
    let mut at = Vec::with_capacity(key.len());
    let (mut x, mut y) = (12, 6);
    for e in key {
        let w = SWATCH + 6 + text_w(&e.label) + 18;
        if x > 12 && x + w > width {
            (x, y) = (12, y + LINE);
        }
        at.push((x, y));
        x += w;
    }
    let (band, rest) = area.split_vertically((y + LINE + 4) as u32);
    let style = TextStyle::from((FONT, 12).into_font()).color(&BLACK);
    for (e, &(x, y)) in key.iter().zip(&at) {
        let mid = y + LINE / 2 - 2;
        match e.glyph {
            KeyGlyph::Bar => band.draw(&Rectangle::new([(x, mid - 5), (x + SWATCH, mid + 5)], e.colour.filled())),
            KeyGlyph::ThinBar => band.draw(&Rectangle::new([(x, mid - 2), (x + SWATCH, mid + 2)], e.colour.filled())),
            KeyGlyph::Outline => band.draw(&Rectangle::new([(x, mid - 6), (x + SWATCH, mid + 6)], e.colour.stroke_width(2))),
            KeyGlyph::TriangleFilled | KeyGlyph::TriangleOpen => {
                let (corners, outline) = wake_triangle((x + SWATCH / 2, mid));
                band.draw(&Polygon::new(corners, wake_fill(e.glyph == KeyGlyph::TriangleFilled, e.colour)))
                    .and_then(|_| band.draw(&PathElement::new(outline, e.colour.stroke_width(1))))
            }
        }
        .map_err(fail)?;
        band.draw_text(&e.label, &style, (x + SWATCH + 6, mid - 7)).map_err(fail)?;
    }
    Ok(rest)
}

/// The victim's CPU around its worst delay: per task, solid bars while it
/// ran, thin bars while it waited runnable, ▲ at a wakeup that preempted and
/// △ at one that did not; the worst wait is boxed. A key above names every
/// colour and glyph. Below, at wakeups and picks, each task's lag (EEVDF:
/// V − vruntime, eligible at ≥ 0) or (4.4) vruntime minus its queue's
/// `min_vruntime`, in ms.
pub fn timeline<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, t: &Timeline) -> DrawResult {
    area.fill(&WHITE).map_err(fail)?;
    let title = format!("CPU {} around the worst delay ({} waited {})", t.cpu, t.rows[0], fmt_ns((t.worst.end_ns - t.worst.start_ns) as f64));
    let area = &draw_key(&area.titled(&title, (FONT, 18)).map_err(fail)?, &timeline_key(t))?;
    let height = area.dim_in_pixel().1;
    let (upper, lower) = area.split_vertically(height * 3 / 5);
    let origin = t.worst.start_ns as f64;
    let ms = |ns: u64| (ns as f64 - origin) / 1e6;
    let (x0, x1) = (ms(t.from_ns), ms(t.to_ns).max(ms(t.from_ns) + 0.001));
    let rows = t.rows.len().max(1);
    let y_of = |row: usize| (rows - 1 - row) as f64;
    let names = t.rows.clone();
    let mut chart = ChartBuilder::on(&upper)
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
            Rectangle::new([(ms(s.start_ns), y - 0.1), (ms(s.end_ns), y + 0.1)], RUNNABLE.filled())
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
        .draw_series(
            t.wakeups.iter().map(|m| {
                let (corners, outline) = wake_triangle((0, 0));
                EmptyElement::at((ms(m.at_ns), y_of(m.row) + 0.42))
                    + Polygon::new(corners, wake_fill(m.preempt, BLACK))
                    + PathElement::new(outline, BLACK.stroke_width(1))
            }),
        )
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
        .y_desc(if t.eevdf { "lag = V − vruntime (ms; ≥ 0: eligible)" } else { "vruntime − min_vruntime (ms)" })
        .x_desc("ms from the start of the worst delay (points: at wakeup, after place_entity, and at pick)")
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

/// The background of an isolated CPU's occupancy row.
pub const ISOLATED_TINT: RGBColor = RGBColor(255, 222, 170);

/// The occupancy shade of a busy share (per mille): white when idle, dark
/// blue when busy the whole bucket; an isolated CPU's row in orange.
pub fn occupancy_colour(permille: u16, isolated: bool) -> RGBColor {
    let t = f64::from(permille.min(1000)) / 1000.0;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t) as u8;
    if isolated { RGBColor(mix(255, 190), mix(255, 90), mix(255, 0)) } else { RGBColor(mix(255, 20), mix(255, 60), mix(255, 140)) }
}

/// Per-CPU occupancy heat map: one row per CPU (SMT siblings together,
/// sockets separated by a line, isolated CPUs in orange and named so), time
/// on x, shade = busy share of each bucket (busy: `nr_running > 0`).
pub fn occupancy<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, c: &OccupancyChart) -> DrawResult {
    area.fill(&WHITE).map_err(fail)?;
    let (w, _) = area.dim_in_pixel();
    let (area, scale) = area.split_horizontally(w.saturating_sub(COLOUR_BAR_W));
    let isolated = c.rows.iter().any(|r| r.isolated);
    colour_bar(&scale, isolated)?;
    let area = &area;
    let n = c.rows.len().max(1) as u32;
    let end = c.end_ns.max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(format!("CPU occupancy (busy share per {} bucket)", fmt_ns(c.bucket_ns as f64)), (FONT, 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(if wide(area) { 170 } else { 110 })
        // Row i (from the bottom) spans [i, i + 1); its label sits at the centre.
        .build_cartesian_2d(0.0..end, super::sweep::ValueAxis {
            lo: 0.0,
            hi: f64::from(n),
            ticks: (0..n).map(|i| f64::from(i) + 0.5).collect(),
        })
        .map_err(fail)?;
    // Row 0 at the top.
    let top = |row: usize| n - 1 - row as u32;
    let label = |v: &f64| match libm::floor(*v) {
        y if y >= 0.0 && y < f64::from(n) && !c.rows.is_empty() => {
            let r = &c.rows[(n - 1 - y as u32) as usize];
            if wide(area) { r.label.clone() } else { format!("cpu {}{}", r.cpu, if r.isolated { " iso" } else { "" }) }
        }
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("simulated time")
        .x_label_formatter(&|v| fmt_ns(*v))
        .y_labels(c.rows.len().min(64))
        .y_label_formatter(&label)
        .y_label_style((FONT, 11))
        .draw()
        .map_err(fail)?;
    let w = c.bucket_ns as f64;
    for (row, r) in c.rows.iter().enumerate() {
        let y = top(row);
        let lo = || f64::from(y);
        let hi = || f64::from(y + 1);
        if r.isolated {
            // An isolated CPU's row is tinted even where it idles.
            let style = ISOLATED_TINT.filled();
            chart.draw_series(std::iter::once(Rectangle::new([(0.0, lo()), (end, hi())], style))).map_err(fail)?;
        }
        // Runs of equal shade as one rectangle (a hog's row is one).
        let mut i = 0;
        while i < r.permille.len() {
            let p = r.permille[i];
            let mut j = i + 1;
            while j < r.permille.len() && r.permille[j] == p {
                j += 1;
            }
            if p > 0 {
                let (x0, x1) = (i as f64 * w, (j as f64 * w).min(end));
                let style = occupancy_colour(p, r.isolated).filled();
                chart.draw_series(std::iter::once(Rectangle::new([(x0, lo()), (x1, hi())], style))).map_err(fail)?;
            }
            i = j;
        }
        // A line between sockets.
        if row > 0 && c.rows[row - 1].socket != r.socket {
            let line = vec![(0.0, f64::from(y + 1)), (end, f64::from(y + 1))];
            chart.draw_series(std::iter::once(PathElement::new(line, BLACK.stroke_width(2)))).map_err(fail)?;
        }
    }
    Ok(())
}

/// Width of the occupancy chart's colour scale, on its right.
const COLOUR_BAR_W: u32 = 96;

/// The occupancy chart's colour scale: the shade of each busy share, from
/// 0 % (idle the whole bucket) to 100 % (`nr_running > 0` all along), with
/// its unit; a second, orange bar when some CPU is isolated.
fn colour_bar<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, isolated: bool) -> DrawResult {
    const STEPS: i32 = 20;
    let (_, h) = area.dim_in_pixel();
    let (top, bottom) = (64, (h as i32 - 60).max(140));
    let style = TextStyle::from((FONT, 11).into_font()).color(&BLACK);
    area.draw_text("busy share", &style, (4, top - 40)).map_err(fail)?;
    area.draw_text("(% of bucket)", &style, (4, top - 26)).map_err(fail)?;
    let bars: &[bool] = if isolated { &[false, true] } else { &[false] };
    for (k, &iso) in bars.iter().enumerate() {
        let x = 8 + 26 * k as i32;
        let step_h = (bottom - top) as f64 / f64::from(STEPS);
        for i in 0..STEPS {
            // 100 % at the top.
            let permille = (1000 * (STEPS - i) / STEPS) as u16;
            let y0 = top + (f64::from(i) * step_h) as i32;
            let y1 = top + (f64::from(i + 1) * step_h) as i32;
            area.draw(&Rectangle::new([(x, y0), (x + 16, y1)], occupancy_colour(permille, iso).filled())).map_err(fail)?;
        }
        area.draw(&Rectangle::new([(x, top), (x + 16, bottom)], BLACK.stroke_width(1))).map_err(fail)?;
        if iso {
            area.draw_text("isolated", &style, (x - 4, bottom + 18)).map_err(fail)?;
        }
    }
    let lx = 8 + 26 * bars.len() as i32;
    for (pct, y) in [(100, top), (50, (top + bottom) / 2), (0, bottom)] {
        area.draw(&PathElement::new(vec![(lx - 4, y), (lx, y)], BLACK.stroke_width(1))).map_err(fail)?;
        area.draw_text(&format!("{pct}%"), &style, (lx + 2, y - 6)).map_err(fail)?;
    }
    Ok(())
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

// ---------------------------------------------------------------- elastic CPU limiters

/// Each limiter in two panels: above, its limit and the elastic CPU used
/// (shares, one axis; floor and ceiling as thin lines); below, the watched
/// tasks' delay percentile over the window against the target.
pub fn limiter<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, charts: &[super::data::LimiterChart]) -> DrawResult {
    area.fill(&WHITE).map_err(fail)?;
    if charts.is_empty() {
        let style = TextStyle::from((FONT, 14).into_font()).color(&BLACK);
        return area.draw_text("no elastic CPU limiter in this scenario", &style, (12, 12)).map_err(fail);
    }
    let panels = area.split_evenly((charts.len(), 1));
    for (c, panel) in charts.iter().zip(&panels) {
        let (_, h) = panel.dim_in_pixel();
        let (upper, lower) = panel.split_vertically(h * 11 / 20);
        let end = c.end_ns.max(1) as f64;
        let mut top = ChartBuilder::on(&upper)
            .caption(format!("Elastic CPU limiter `{}`", c.name), (FONT, 18))
            .margin(12)
            .x_label_area_size(24)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..end, 0.0..1.0f64)
            .map_err(fail)?;
        top.configure_mesh()
            .y_desc("share")
            .y_labels(6)
            .x_label_formatter(&|v| fmt_ns(*v))
            .y_label_formatter(&|v| format!("{:.0}%", v * 100.0))
            .draw()
            .map_err(fail)?;
        let grey = BLACK.mix(0.35);
        for bound in [c.floor, c.ceiling] {
            top.draw_series(DashedLineSeries::new([(0.0, bound), (end, bound)], 3, 4, grey.stroke_width(1)))
                .map_err(fail)?;
        }
        // The limit holds from one adjustment to the next: a step line.
        let mut steps: Vec<(f64, f64)> = Vec::with_capacity(2 * c.points.len());
        for p in &c.points {
            if let Some(&(_, prev)) = steps.last() {
                steps.push((p.at_ns as f64, prev));
            }
            steps.push((p.at_ns as f64, p.limit));
        }
        if let Some(&(_, last)) = steps.last() {
            steps.push((end, last));
        }
        let limit_style = CURRENT.stroke_width(2);
        top.draw_series(LineSeries::new(steps, limit_style))
            .map_err(fail)?
            .label("limit (share of each CPU)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], limit_style));
        let used: Vec<(f64, f64)> = c.points.iter().map(|p| (p.at_ns as f64, p.used)).collect();
        let used_style = BASELINE.stroke_width(2);
        top.draw_series(DashedLineSeries::new(used, 6, 3, used_style))
            .map_err(fail)?
            .label("elastic CPU used (share of the machine, over the window)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], used_style));
        top.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(fail)?;

        let observed: Vec<(f64, f64)> =
            c.points.iter().filter_map(|p| p.observed_ns.map(|ns| (p.at_ns as f64, ns as f64))).collect();
        let ymax = observed.iter().map(|p| p.1).fold(c.target_ns as f64, f64::max) * 1.15;
        let mut bottom = ChartBuilder::on(&lower)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..end, 0.0..ymax.max(1.0))
            .map_err(fail)?;
        bottom
            .configure_mesh()
            .x_desc("simulated time")
            .y_desc(format!("p{} delay", c.percentile))
            .y_labels(5)
            .x_label_formatter(&|v| fmt_ns(*v))
            .y_label_formatter(&|v| fmt_ns(*v))
            .draw()
            .map_err(fail)?;
        let target = c.target_ns as f64;
        let target_style = WORST.stroke_width(1);
        bottom
            .draw_series(DashedLineSeries::new([(0.0, target), (end, target)], 4, 4, target_style))
            .map_err(fail)?
            .label(format!("target {}", fmt_ns(target)))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], target_style));
        let p_style = CURRENT.stroke_width(2);
        bottom
            .draw_series(LineSeries::new(observed, p_style))
            .map_err(fail)?
            .label(format!("watched tasks' p{} over the window", c.percentile))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], p_style));
        bottom
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(fail)?;
    }
    Ok(())
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
        let series = [CdfSeries::new("current".into(), &a.cdf, a.count, 0)];
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
            CdfSeries::new("current".into(), &a.cdf, a.count, 0),
            CdfSeries::new("baseline".into(), &b.cdf, b.count, 1),
        ];
        let c = svg(800, 400, |root| cdf(root, "CDF", "delay", &series));
        assert!(c.contains("p99") && c.contains("current (n="), "{c}");
        let t = Timeline::from_report(&cur).unwrap();
        let tl = svg(900, 500, |root| timeline(root, &t));
        assert!(tl.contains("CPU 0 around the worst delay") && tl.contains(&t.rows[0]), "{tl}");
        // The key names every task's colour and every state's glyph, and
        // each colour it names is one the chart uses.
        let key = timeline_key(&t);
        assert_eq!(key.len(), t.rows.len() + 4, "{key:?}");
        for (row, name) in t.rows.iter().enumerate() {
            let e = &key[row];
            assert!(e.glyph == KeyGlyph::Bar && e.label.starts_with(name.as_str()), "{e:?}");
            assert!(tl.contains(&e.label), "key entry {:?} not drawn", e.label);
            assert!(tl.contains(&format!("fill=\"{}\"", e.colour_hex())), "colour of {name} not drawn");
        }
        for state in ["runnable (waiting)", "runnable: the worst wait", "▲ wakeup, preempted the running task", "△ wakeup, no preemption (hollow)"] {
            assert!(tl.contains(state), "key entry {state:?} not drawn");
        }
        let colours: std::collections::BTreeSet<String> = key.iter().map(KeyEntry::colour_hex).collect();
        assert!(colours.len() >= t.rows.len().min(7), "task colours repeat: {colours:?}");
        let q = svg(800, 400, |root| q2d(root, &io_charts(&cur, "current"), &io_charts(&base, "baseline")));
        assert!(q.contains("current: sda (deadline)") && q.contains("baseline: sda (deadline)"), "{q}");
        assert_eq!(fmt_ns(26_690_000.0), "26.69ms");
        let labels: Vec<String> = [0.0, 1.0, 2.0, 3.0, 5.0].into_iter().map(nines_label).collect();
        assert_eq!(labels, ["p0", "p90", "p99", "p99.9", "p99.999"]);
    }

    /// Strokes of the width CDF lines are drawn with, in `colour` (legend samples included).
    fn lines_in(svg: &str, colour: RGBColor) -> usize {
        let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\" stroke-width=\"2\"", colour.0, colour.1, colour.2);
        svg.lines().filter(|l| l.starts_with("<polyline") && l.contains(&stroke)).count()
    }

    fn io_chart(label: &str, cdf: Vec<CdfPoint>, open: (u64, u64)) -> IoChart {
        let count = cdf.last().map_or(0, |p| p.count);
        IoChart {
            label: label.into(),
            device: "sda".into(),
            elevator: "cfq 4.4".into(),
            max_ns: cdf.last().map_or(0, |p| p.value_ns),
            q2c_cdf: cdf.clone(),
            q2c_count: count,
            cdf,
            count,
            open_count: open.0,
            open_max_ns: open.1,
            q2c_open_count: open.0,
            q2c_open_max_ns: open.1,
        }
    }

    /// A device with no finished Q2D has no distribution: no line is drawn
    /// for it (not even through zero samples), but a note says what is
    /// there: how many bios are still queued and how long the oldest waited.
    /// A device with finished ones and an older open wait gets a line, the
    /// open waits in its legend and a ▶ at the oldest.
    #[test]
    fn io_charts_mark_open_waits_and_draw_no_line_without_completions() {
        let none = io_chart("cfq-4.4: sda (cfq 4.4)", Vec::new(), (3, 19_900_000_000));
        let some = io_chart(
            "fixed: sda (cfq fixed)",
            vec![CdfPoint { value_ns: 1_000_000, count: 90 }, CdfPoint { value_ns: 250_000_000, count: 100 }],
            (2, 2_000_000_000),
        );
        let runs: [&[IoChart]; 2] = [std::slice::from_ref(&none), std::slice::from_ref(&some)];
        let out = svg(900, 500, |root| io_cdf(root, IoStage::Q2D, &runs));
        assert!(out.contains("cfq-4.4: sda (cfq 4.4): no completions; 3 open, oldest 19.9s"), "{out}");
        assert_eq!(lines_in(&out, series_colour(0)), 0, "no line for a device without completions:\n{out}");
        assert!(!out.contains("cfq-4.4: sda (cfq 4.4) (n="), "no legend entry for a line not drawn");
        assert!(out.contains("fixed: sda (cfq fixed) (n=100, 0 of 0 ns at the left edge; 2 still waiting at end, oldest 2s)"), "{out}");
        // The line itself plus its legend sample, and the ▶ at 2 s.
        assert!(lines_in(&out, series_colour(1)) >= 2, "{out}");
        assert!(out.contains("<polygon"), "the open-wait marker:\n{out}");
        // The x axis reaches the oldest open wait.
        assert!(out.contains("\n10s\n") || out.contains(">10s<"), "{out}");
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
        assert!(
            cap[1].starts_with("base: HZ=1000 autogroup=on Linux 4.4 (CFS): sched_latency_ns=6ms")
                && cap[1].contains("features=defaults")
                && !cap[1].contains("NO_"),
            "{cap:?}"
        );
        assert!(cap[2].contains("NO_WAKEUP_PREEMPTION") && cap[3].contains("sda=noop"), "{cap:?}");

        let charts: Vec<DelayChart> = runs.iter().map(|(l, r)| DelayChart::from_report(r, l)).collect();
        let series: Vec<CdfSeries> = charts
            .iter()
            .enumerate()
            .map(|(i, c)| c.series(i))
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

    /// The heat map draws one shaded rectangle per run of equal shade, in
    /// each row's colour, and names isolated CPUs.
    #[test]
    fn occupancy_shades_busy_buckets_and_marks_isolated_cpus() {
        use crate::plot::data::{OccupancyChart, OccupancyRow};
        let row = |cpu: u16, isolated: bool, permille: Vec<u16>| OccupancyRow {
            cpu,
            socket: cpu / 2,
            core: cpu,
            thread: 0,
            isolated,
            label: format!("cpu {cpu}{}", if isolated { " (isolated)" } else { "" }),
            total_permille: 0,
            permille,
        };
        let c = OccupancyChart {
            bucket_ns: 1_000_000,
            end_ns: 4_000_000,
            rows: vec![row(0, false, vec![1000, 1000, 1000, 1000]), row(1, false, vec![0, 500, 0, 0]), row(2, true, vec![0; 4])],
        };
        let out = svg(800, 300, |root| occupancy(root, &c));
        let full = occupancy_colour(1000, false);
        let half = occupancy_colour(500, false);
        let hex = |c: RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        // One rectangle for the busy row, one step of the colour scale.
        assert_eq!(out.matches(&format!("fill=\"{}\"", hex(full))).count(), 2, "one rectangle for the busy row");
        assert_eq!(out.matches(&format!("fill=\"{}\"", hex(half))).count(), 2, "{out}");
        assert!(out.contains("cpu 2 (isolated)"), "{out}");
        assert_eq!(out.matches(&format!("fill=\"{}\"", hex(ISOLATED_TINT))).count(), 1, "the isolated row tinted");
    }

    /// Defect: the heat map had no colour scale. It now has one, with its
    /// unit, from 0 % to 100 %, every step in a shade the map uses, and an
    /// orange one when a CPU is isolated.
    #[test]
    fn occupancy_has_a_colour_scale_with_its_unit() {
        use crate::plot::data::{OccupancyChart, OccupancyRow};
        let row = |cpu: u16, isolated: bool| OccupancyRow {
            cpu,
            socket: 0,
            core: cpu,
            thread: 0,
            isolated,
            label: format!("cpu {cpu}"),
            total_permille: 0,
            permille: vec![0, 0],
        };
        let hex = |c: RGBColor| format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
        let c = OccupancyChart { bucket_ns: 1_000_000, end_ns: 2_000_000, rows: vec![row(0, false)] };
        let out = svg(800, 300, |root| occupancy(root, &c));
        for want in ["busy share", "(% of bucket)", "\n100%\n", "\n50%\n", "\n0%\n"] {
            assert!(out.contains(want), "{want:?} missing:\n{out}");
        }
        assert!(out.contains(&hex(occupancy_colour(1000, false))) && out.contains(&hex(occupancy_colour(50, false))));
        assert!(!out.contains("isolated") && !out.contains(&hex(occupancy_colour(1000, true))));
        let c = OccupancyChart { rows: vec![row(0, false), row(1, true)], ..c };
        let out = svg(800, 300, |root| occupancy(root, &c));
        assert!(out.contains(&hex(occupancy_colour(1000, true))) && out.contains("\nisolated\n"), "{out}");
    }

    /// The polyline points of every CDF line (`stroke-width="2"` in `colour`).
    fn cdf_polylines(svg: &str, colour: RGBColor) -> Vec<Vec<(f64, f64)>> {
        let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\" stroke-width=\"2\"", colour.0, colour.1, colour.2);
        svg.lines()
            .filter(|l| l.starts_with("<polyline") && l.contains(&stroke))
            .map(|l| {
                let pts = l.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
                pts.split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect()
            })
            .collect()
    }

    /// Defect: the CDF joined its points with slanted lines, so between a
    /// 1 ms and a 4 ms value it read (say) p70 at 3.1 ms, where no delay was
    /// recorded. Now every segment is horizontal or vertical, and the line
    /// stays at p50 until 4 ms.
    #[test]
    fn a_cdf_is_drawn_as_steps() {
        let pts = [CdfPoint { value_ns: 1_000_000, count: 50 }, CdfPoint { value_ns: 4_000_000, count: 100 }];
        let series = [CdfSeries::new("steps".into(), &pts, 100, 0)];
        let out = svg(800, 400, |root| cdf(root, "t", "delay", &series));
        let lines = cdf_polylines(&out, series_colour(0));
        let line = lines.iter().max_by_key(|l| l.len()).expect("the CDF line");
        assert!(line.len() >= 4, "{line:?}");
        for w in line.windows(2) {
            assert!(w[0].0 == w[1].0 || w[0].1 == w[1].1, "a slanted segment {w:?} in {line:?}");
        }
        // The run at the p50 level reaches the 4 ms value before rising.
        let right = line.iter().map(|p| p.0).fold(f64::MIN, f64::max);
        let p50 = line[1].1;
        assert!(line.contains(&(right, p50)), "{line:?}");
    }

    /// The x tick labels (centred on their tick) that lie in `svg`, with
    /// their position and font size.
    fn tick_labels(svg: &str) -> Vec<(f64, f64, String)> {
        let lines: Vec<&str> = svg.lines().collect();
        let mut out = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            if l.starts_with("<text") && l.contains("text-anchor=\"middle\"") && i + 1 < lines.len() {
                let attr = |name: &str| -> f64 {
                    l.split(&format!(" {name}=\"")).nth(1).unwrap().split('"').next().unwrap().parse().unwrap()
                };
                out.push((attr("x"), attr("font-size"), lines[i + 1].to_string()));
            }
        }
        out
    }

    /// Defect: the histogram's last tick label (`100ms`) sat centred on the
    /// right edge of the image, half of it cut off. Every centred label now
    /// fits inside the width, on the histogram and on the CDF.
    #[test]
    fn the_last_tick_label_fits_inside_the_image() {
        use crate::plot::data::Bar;
        let d = DelayChart {
            label: "t".into(),
            histogram: vec![Bar { low_ns: 20_000_000, high_ns: 50_000_000, count: 3 }],
            cdf: vec![CdfPoint { value_ns: 20_000_000, count: 1 }, CdfPoint { value_ns: 50_000_000, count: 3 }],
            count: 3,
            p99_ns: 50_000_000,
            max_ns: 50_000_000,
            open_count: 0,
            open_max_ns: 0,
        };
        let width = 960.0;
        for out in [
            svg(960, 560, |root| delay_histogram(root, "v", &[&d])),
            svg(960, 560, |root| cdf(root, "t", "delay", &[d.series(0)])),
        ] {
            let labels = tick_labels(&out);
            assert!(labels.iter().any(|l| l.2 == "100ms"), "{labels:?}");
            for (x, size, text) in labels {
                // Sans-serif digits and letters: at most about 0.62 em each.
                let half = text.chars().count() as f64 * size * 0.62 / 2.0;
                assert!(x + half <= width, "{text:?} at {x} runs past the right edge ({half} px each side)");
            }
        }
    }

    /// Defect: ▲ (a wakeup that preempted) and △ (one that did not) were
    /// both drawn as filled triangles. The hollow one is now white inside,
    /// and the key says what each means.
    #[test]
    fn preempting_and_other_wakeups_are_drawn_apart() {
        let s = Scenario::from_toml("t.toml", crate::plot::CHART_TEST_SCENARIO).unwrap();
        let t = Timeline::from_report(&crate::run(&s)).unwrap();
        let mut t = t.clone();
        // One of each, whatever the run did.
        t.wakeups = vec![
            crate::plot::data::WakeMark { row: 0, at_ns: t.from_ns, preempt: true },
            crate::plot::data::WakeMark { row: 0, at_ns: t.to_ns, preempt: false },
            crate::plot::data::WakeMark { row: 1, at_ns: t.to_ns, preempt: false },
        ];
        let out = svg(900, 500, |root| timeline(root, &t));
        let filled = out.lines().filter(|l| l.starts_with("<polygon") && l.contains("fill=\"#000000\"")).count();
        let hollow = out.lines().filter(|l| l.starts_with("<polygon") && l.contains("fill=\"#FFFFFF\"")).count();
        // The marks plus one of each in the key.
        assert_eq!((filled, hollow), (2, 3), "{out}");
        assert!(out.contains("▲ wakeup, preempted the running task (filled)") && out.contains("△ wakeup, no preemption (hollow)"));
        // Both panels say their time unit.
        assert_eq!(out.matches("ms from the start of the worst delay").count(), 2, "{out}");
    }

    /// Defect: the footer of a 6.18 run printed the 4.4 knobs
    /// (`sched_latency=… wakeup_granularity=…`) and never named the kernel.
    /// It now names the model and its own settings, the features changed
    /// from that model's defaults and per-task slices.
    #[test]
    fn an_eevdf_footer_names_its_model_and_settings() {
        let s = Scenario::from_toml("t.toml", crate::plot::CHART_TEST_SCENARIO).unwrap();
        let s = s
            .with_overrides(&[
                ("kernel.version", "\"6.18\""),
                ("devices.sda.elevator", "\"mq-deadline\""),
                ("features.RUN_TO_PARITY", "false"),
                ("tasks.sleeper.slice", "\"300us\""),
            ])
            .unwrap();
        let r = crate::run(&s);
        let cap = crate::plot::data::caption(&[("short", &r)]);
        let line = &cap[1];
        assert!(line.starts_with("short: HZ=1000 autogroup=on Linux 6.18 (EEVDF): base_slice_ns=700us"), "{line}");
        assert!(line.contains("features=NO_RUN_TO_PARITY") && line.contains("slice_of_sleeper=300us"), "{line}");
        for old in ["sched_latency", "granularity", "nr_latency"] {
            assert!(!line.contains(old), "{old} in {line}");
        }
        // The text header's settings come from the same place.
        assert_eq!(r.settings.model_settings()[0], ("base_slice_ns".to_string(), "700us".to_string()));
    }
}
