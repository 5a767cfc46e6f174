//! The occupancy heat map: each CPU's busy share over time, grouped by
//! core, isolated CPUs tinted, with its colour scale.

use super::style::DrawResult;
use super::style::*;
use crate::plot::data::OccupancyChart;
use plotters::coord::Shift;
use plotters::prelude::*;

/// The background of an isolated CPU's occupancy row.
pub const ISOLATED_TINT: RGBColor = RGBColor(255, 222, 170);

/// The occupancy shade of a busy share (per mille): white when idle, dark
/// blue when busy the whole bucket; an isolated CPU's row in orange.
pub fn occupancy_colour(permille: u16, isolated: bool) -> RGBColor {
    let t = f64::from(permille.min(1000)) / 1000.0;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t) as u8;
    if isolated {
        RGBColor(mix(255, 190), mix(255, 90), mix(255, 0))
    } else {
        RGBColor(mix(255, 20), mix(255, 60), mix(255, 140))
    }
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
        .build_cartesian_2d(
            0.0..end,
            ValueAxis { lo: 0.0, hi: f64::from(n), ticks: (0..n).map(|i| f64::from(i) + 0.5).collect() },
        )
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
pub(super) const COLOUR_BAR_W: u32 = 96;

/// The occupancy chart's colour scale: the shade of each busy share, from
/// 0 % (idle the whole bucket) to 100 % (`nr_running > 0` all along), with
/// its unit; a second, orange bar when some CPU is isolated.
pub(super) fn colour_bar<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, isolated: bool) -> DrawResult {
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
            area.draw(&Rectangle::new([(x, y0), (x + 16, y1)], occupancy_colour(permille, iso).filled()))
                .map_err(fail)?;
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
