//! The elastic CPU limiters' charts: limit and use above, the watched
//! tasks' delay percentile against the target below.

use super::style::DrawResult;
use super::style::*;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Each limiter in two panels: above, its limit and the elastic CPU used
/// (shares, one axis; floor and ceiling as thin lines); below, the watched
/// tasks' delay percentile over the window against the target.
pub fn limiter<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    charts: &[crate::plot::data::LimiterChart],
) -> DrawResult {
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
