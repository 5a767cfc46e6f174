//! What `sweep` and `merge` print: the ranked table (each figure column in
//! the unit of its largest value), the settings within a `--budget`, and
//! the SVG chart (`--plot`).

use super::lines::Sweep;
use anyhow::{Context, Result};
use sim_core::{Metric, PointResult, StopReason, column_unit, format_in, sort_by_metric, within_budget};
use std::fmt::Write;
use std::path::Path;

pub(super) fn parse_budget(text: &str) -> Result<u64> {
    sim_core::parse_duration(text).map_err(|e| anyhow::anyhow!("--budget {text}: {e}"))
}

pub(super) fn switches_per_s(r: &PointResult) -> String {
    if r.sim_time_ns == 0 {
        return "-".into();
    }
    format!("{:.0}", r.switches as f64 * 1e9 / r.sim_time_ns as f64)
}

pub(super) fn settings_text(r: &PointResult) -> String {
    r.settings.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// A table column: its name and how to read it from a point.
type Figure = (&'static str, fn(&PointResult) -> u64);

/// The header, the points best first, and the settings within `budget`.
pub(super) fn table(info: &Sweep, mut results: Vec<PointResult>, budget: Option<u64>, scope: &str) -> String {
    let mut out = String::new();
    let m = info.metric;
    let _ = writeln!(
        out,
        "schedlab {} · sweep {} · scenario {}{} · {} · {scope}",
        env!("CARGO_PKG_VERSION"),
        info.fingerprint,
        if info.scenario.is_empty() { "(unnamed)" } else { &info.scenario },
        info.variant.as_ref().map_or(String::new(), |v| format!(" (variant {v})")),
        info.seed_text(),
    );
    let _ = writeln!(
        out,
        "ranked by the {} of {}; fixed: {}",
        if m == Metric::RequestP99 {
            "p99 end-to-end request latency (request-p99); p99, max, avg: scheduling delay".to_string()
        } else {
            format!("{} scheduling delay", m.name())
        },
        info.target,
        if info.sets.is_empty() { "nothing (file values)".to_string() } else { info.sets.join(" ") }
    );
    let mut figures: Vec<Figure> = vec![("p99", |r| r.p99_ns), ("max", |r| r.max_ns), ("avg", |r| r.avg_ns)];
    let ranked: Figure = (m.name(), |r| r.metric_ns);
    figures.retain(|(n, _)| *n != m.name());
    figures.insert(0, ranked);
    let key_widths: Vec<usize> = info
        .grid
        .axes
        .iter()
        .map(|a| a.values.iter().map(String::len).chain([a.key.len()]).max().unwrap_or(0))
        .collect();
    out.push('\n');
    let mut head = String::from(" ");
    for (a, w) in info.grid.axes.iter().zip(&key_widths) {
        let _ = write!(head, " {:<w$}", a.key);
    }
    // Each column in the unit of its largest value, as the unit in its header.
    let units: Vec<(u64, &str)> = figures.iter().map(|(_, f)| column_unit(results.iter().map(f))).collect();
    for (i, ((n, _), (_, unit))) in figures.iter().zip(&units).enumerate() {
        let label = if i == 0 { format!("{n} {unit} ▲") } else { format!("{n} {unit}") };
        let _ = write!(head, " {label:>10}");
    }
    let _ = write!(head, " {:>9} {:>10}", "switches", "switches/s");
    let _ = writeln!(out, "{}", head.trim_end());
    sort_by_metric(&mut results);
    for r in &results {
        let mut line = String::from(" ");
        for ((_, v), w) in r.settings.iter().zip(&key_widths) {
            let _ = write!(line, " {v:<w$}");
        }
        for ((_, f), unit) in figures.iter().zip(&units) {
            let _ = write!(line, " {:>10}", format_in(f(r), *unit));
        }
        let _ = write!(line, " {:>9} {:>10}", r.switches, switches_per_s(r));
        if r.stop != StopReason::TimeLimit && r.stop != StopReason::Quiescent {
            let _ = write!(line, "  partial: {}", r.stop.name());
        }
        if r.count == 0 {
            line.push_str("  (no delays measured)");
        }
        if r.open_count > 0 {
            let oldest = sim_core::format_duration(r.open_max_ns);
            let _ = write!(line, "  ({})", sim_core::still_waiting(r.open_count, &oldest));
        }
        let _ = writeln!(out, "{line}");
    }
    if let Some(b) = budget {
        let fmt_b = sim_core::format_duration(b);
        let ok = within_budget(&results, b);
        out.push('\n');
        match results.first() {
            _ if !ok.is_empty() => {
                let _ = writeln!(
                    out,
                    "Settings meeting the budget ({} ≤ {fmt_b}), cheapest in context switches first:",
                    m.name()
                );
                let width = ok.iter().map(|r| settings_text(r).chars().count()).max().unwrap_or(0);
                for r in ok {
                    let _ = writeln!(
                        out,
                        "  {:<width$}  {} {} {}  {} switches ({}/s)",
                        settings_text(r),
                        m.name(),
                        format_in(r.metric_ns, units[0]),
                        units[0].1,
                        r.switches,
                        switches_per_s(r)
                    );
                }
            }
            Some(best) => {
                let _ = writeln!(
                    out,
                    "No setting meets the budget ({} ≤ {fmt_b}); the best is {} {} with {} ({} switches).",
                    m.name(),
                    format_in(best.metric_ns, units[0]),
                    units[0].1,
                    settings_text(best),
                    best.switches
                );
            }
            None => {
                let _ = writeln!(out, "No points were run.");
            }
        }
    }
    out
}

pub(super) fn write_plot(dir: &Path, info: &Sweep, results: &[PointResult]) -> Result<()> {
    use plotters::prelude::*;
    std::fs::create_dir_all(dir).with_context(|| format!("--plot: cannot create {}", dir.display()))?;
    let fixed = if info.sets.is_empty() { String::new() } else { format!(" · fixed: {}", info.sets.join(" ")) };
    let caption = format!(
        "schedlab {} · {}{} · {}{fixed} · sweep {}",
        env!("CARGO_PKG_VERSION"),
        info.scenario,
        info.variant.as_ref().map_or(String::new(), |v| format!(" (variant {v})")),
        info.seed_text(),
        info.fingerprint
    );
    let chart = sim_core::SweepChart {
        grid: &info.grid,
        results,
        metric: info.metric,
        target: &info.target,
        caption: &caption,
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 600)).into_drawing_area();
        sim_core::sweep_chart(&root, &chart).map_err(anyhow::Error::msg)?;
        root.present().map_err(|e| anyhow::anyhow!("drawing failed: {e}"))?;
    }
    let path = dir.join("sweep.svg");
    std::fs::write(&path, svg).with_context(|| format!("--plot: cannot write {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}
