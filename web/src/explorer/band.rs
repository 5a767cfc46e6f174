//! The band on the percentile chart: after a run finishes, the worker runs
//! the same scenario at the other tick phases, one point per call so a newer
//! run can supersede it between points, and folds the victim's band into the
//! current view (`View::band`). Point 0 is the run already shown.

use super::{Explorer, build};
use sim_core::{BandPlan, BandPoint, RunReport, Scenario};

/// A band in progress: the plan, its points, the scenario they vary, and
/// the reports so far (point 0's first).
pub struct BandRun {
    plan: BandPlan,
    points: Vec<BandPoint>,
    scenario: Scenario,
    reports: Vec<RunReport>,
}

impl Explorer {
    /// Begins the band of the finished run over `phases` tick phases (one
    /// seed). Returns the number of points, 1 when there is nothing more to
    /// run (`phases` 1), or the error: no finished run, or `phases` out of
    /// range (named as `--phases` is).
    pub fn band_start(&mut self, phases: u32) -> Result<u32, String> {
        self.band = None;
        let plan = BandPlan::new(phases, 1)?;
        let (Some(report), Some(source)) = (self.last_report.clone(), self.current_source.as_ref()) else {
            return Err("no finished run to draw a band for".to_string());
        };
        if plan.is_single() {
            return Ok(1);
        }
        let variant = source.variant.as_deref();
        let overrides: String = source.overrides.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        let scenario = build(&source.file, &source.text, variant, &overrides)
            .map_err(|e| e["text"].as_str().unwrap_or("the scenario was refused").to_string())?
            .cur;
        let points = plan.points(&scenario);
        let n = points.len() as u32;
        self.band = Some(BandRun { plan, points, scenario, reports: vec![report] });
        Ok(n)
    }

    /// Runs the band's next point; progress in (0, 1], 1 once the band is
    /// in the current view, -1 with no band in progress (or an error).
    pub fn band_step(&mut self) -> f64 {
        let Some(b) = &mut self.band else { return -1.0 };
        let next = b.reports.len();
        if let Some(p) = b.points.get(next) {
            match b.plan.scenario(&b.scenario, p) {
                Ok(s) => b.reports.push(sim_core::run(&s)),
                Err(_) => {
                    self.band = None;
                    return -1.0;
                }
            }
        }
        if b.reports.len() < b.points.len() {
            return b.reports.len() as f64 / b.points.len() as f64;
        }
        let bands = sim_core::bands(&b.points, &b.reports, &b.plan);
        let n = b.points.len() as u32;
        if let Some(view) = &mut self.current {
            view.set_band(&bands, n);
        }
        self.band = None;
        1.0
    }
}

/// The caption under the percentile chart for a band of `points` tick
/// phases: what the shading is, and `phase-sensitive` when the victim's p99
/// or max band is wider than ±25 % of its median (`StatBand::phase_sensitive`).
pub fn caption(points: u32, stats: &[sim_core::StatBand]) -> String {
    let mut s = format!("Delay percentiles over {points} tick phases: median line, min–max shaded.");
    let wide: Vec<String> = stats
        .iter()
        .filter(|b| (b.stat == "p99" || b.stat == "max") && b.phase_sensitive)
        .map(|b| match b.spread_pct() {
            Some(p) => format!("{} ±{p} %", b.stat),
            None => b.stat.to_string(),
        })
        .collect();
    if !wide.is_empty() {
        s += &format!(" phase-sensitive: {} (wider than ±{} %).", wide.join(", "), sim_core::BAND_TOLERANCE_PCT);
    }
    s
}
