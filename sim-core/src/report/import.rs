//! The import report: per declaration, the trace's own delay figures
//! beside the replay's. The fitted model is judged by it.

use crate::import::{DelayFigures, Import};
use crate::metrics::LatencySummary;
use super::RunReport;
use crate::time::format_duration as dur;

#[derive(Clone, Debug, serde::Serialize)]
pub struct ImportRow {
    pub name: String,
    pub threads: usize,
    pub background: bool,
    pub trace: DelayFigures,
    pub replay: DelayFigures,
    /// Replay p99 / trace p99 (1 = equal); None when either has no delay.
    pub p99_ratio: Option<f64>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ImportReport {
    pub kernel: &'static str,
    pub rows: Vec<ImportRow>,
}

fn figures(s: &LatencySummary) -> DelayFigures {
    DelayFigures { count: s.count, p50_ns: s.p50_ns, p99_ns: s.p99_ns, max_ns: s.max_ns }
}

/// Lines up the import's declarations with the replay's per-declaration delays (by name).
pub fn import_report(im: &Import, replay: &RunReport) -> ImportReport {
    let rows = im
        .tasks
        .iter()
        .map(|t| {
            let r = replay.task_delays.iter().find(|d| d.name == t.name).map(|d| figures(&d.delay)).unwrap_or_default();
            let p99_ratio = (t.delay.p99_ns > 0 && r.count > 0).then(|| r.p99_ns as f64 / t.delay.p99_ns as f64);
            ImportRow {
                name: t.name.clone(),
                threads: t.threads.len(),
                background: t.background,
                trace: t.delay,
                replay: r,
                p99_ratio,
            }
        })
        .collect::<Vec<ImportRow>>();
    // The victim's row first, as the report explains it.
    let mut rows = rows;
    if let Some(i) = im.victim.as_ref().and_then(|v| rows.iter().position(|r| r.name == *v)) {
        let r = rows.remove(i);
        rows.insert(0, r);
    }
    ImportReport { kernel: im.kernel, rows }
}

impl ImportReport {
    /// The table `sim-cli import --replay` prints.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let mut out = format!(
            "Import report (replay on Linux {}): scheduling delay per declaration, wake-up and preemption together\n",
            self.kernel
        );
        let _ = writeln!(
            out,
            "{:<24} {:>5}  {:>9} {:>9} {:>9} {:>9}  {:>9} {:>9} {:>9} {:>9}",
            "task", "thr", "trace n", "p50", "p99", "max", "replay n", "p50", "p99", "max"
        );
        for r in &self.rows {
            let name: String = r.name.chars().take(24).collect();
            let _ = writeln!(
                out,
                "{name:<24} {:>5}  {:>9} {:>9} {:>9} {:>9}  {:>9} {:>9} {:>9} {:>9}",
                if r.background { "bg".to_string() } else { r.threads.to_string() },
                r.trace.count,
                dur(r.trace.p50_ns),
                dur(r.trace.p99_ns),
                dur(r.trace.max_ns),
                r.replay.count,
                dur(r.replay.p50_ns),
                dur(r.replay.p99_ns),
                dur(r.replay.max_ns),
            );
        }
        out
    }
}
