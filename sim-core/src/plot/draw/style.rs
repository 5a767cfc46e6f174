//! What every chart shares: the result type, colours and font, the
//! duration and percentile labels, log ranges, series colours and marker
//! shapes, the value axis of sweep charts, and the caption strip.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
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
pub(super) const RIGHT_MARGIN: u32 = 32;

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

pub(super) fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A percentile on the "nines" axis: `y = -log10(1 - p)` (0 → p0, 1 → p90,
/// 2 → p99, …), as HdrHistogram's percentile plots space them.
pub(super) fn nines(count: u64, total: u64) -> f64 {
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
pub(super) fn wide<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> bool {
    area.dim_in_pixel().0 >= 560
}

/// Line patterns after solid: `(dash, gap)` in pixels.
pub(super) const DASHES: [(u32, u32); 4] = [(8, 5), (2, 4), (14, 4), (6, 2)];

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

/// Marker shape `i` (circle, triangle, cross, square, repeating).
pub(crate) fn marker<DB: DrawingBackend>(i: usize, at: (i32, i32), c: RGBColor) -> DynElement<'static, DB, (i32, i32)> {
    match i % 4 {
        0 => Circle::new(at, 4, c.filled()).into_dyn(),
        1 => TriangleMarker::new(at, 5, c.stroke_width(2)).into_dyn(),
        2 => Cross::new(at, 4, c.stroke_width(2)).into_dyn(),
        _ => Rectangle::new([(at.0 - 3, at.1 - 3), (at.0 + 3, at.1 + 3)], c.stroke_width(2)).into_dyn(),
    }
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

/// A linear f64 axis whose ticks are exactly the given values (thinned if
/// there are more than fit), so every x label is a value that was run.
/// plotters' own `with_key_points` cannot take a label formatter on f64.
pub(crate) struct ValueAxis {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    pub(crate) ticks: Vec<f64>,
}

impl Ranged for ValueAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.lo) / (self.hi - self.lo);
        limit.0 + libm::round(f * f64::from(limit.1 - limit.0)) as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        let step = self.ticks.len().div_ceil(hint.max_num_points().max(1)).max(1);
        self.ticks.iter().step_by(step).copied().collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}
