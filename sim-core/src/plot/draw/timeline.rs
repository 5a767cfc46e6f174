//! The timeline around the victim's worst delay: who ran and who waited on
//! its CPU, wake-up marks, and the vruntime or lag panel, with its key.

use super::style::DrawResult;
use super::style::*;
use crate::plot::data::{Timeline, TimelineState};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Points in pixels.
pub(super) type Pixels = Vec<(i32, i32)>;

/// The wake-up mark at `at` (corners, closed outline): ▲ filled for a wakeup that preempted the
/// running task, △ hollow (white inside, outlined) for one that did not.
/// (plotters' `TriangleMarker` fills whatever the style, so the two looked
/// the same.)
pub(super) fn wake_triangle(at: (i32, i32)) -> (Pixels, Pixels) {
    let (x, y) = at;
    let corners = vec![(x, y - 6), (x + 6, y + 4), (x - 6, y + 4)];
    let mut outline = corners.clone();
    outline.push(corners[0]);
    (corners, outline)
}

/// The inside of a wake-up mark: the colour for ▲, white for △.
pub(super) fn wake_fill(preempt: bool, c: RGBColor) -> ShapeStyle {
    if preempt { c.filled() } else { WHITE.filled() }
}

/// Colour of a timeline row: the victim stands out, the rest cycle.
pub(super) fn row_colour(row: usize) -> RGBColor {
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

pub(super) const RUNNABLE: RGBColor = RGBColor(166, 166, 166);

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
pub(super) fn draw_key<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    key: &[KeyEntry],
) -> Result<DrawingArea<DB, Shift>, String> {
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
            KeyGlyph::Outline => {
                band.draw(&Rectangle::new([(x, mid - 6), (x + SWATCH, mid + 6)], e.colour.stroke_width(2)))
            }
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
    let title = format!(
        "CPU {} around the worst delay ({} waited {})",
        t.cpu,
        t.rows[0],
        fmt_ns((t.worst.end_ns - t.worst.start_ns) as f64)
    );
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
        .draw_series(t.wakeups.iter().map(|m| {
            let (corners, outline) = wake_triangle((0, 0));
            EmptyElement::at((ms(m.at_ns), y_of(m.row) + 0.42))
                + Polygon::new(corners, wake_fill(m.preempt, BLACK))
                + PathElement::new(outline, BLACK.stroke_width(1))
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
