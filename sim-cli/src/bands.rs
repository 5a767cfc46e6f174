//! `--phases N --seeds K` for `run` and `compare`: the plan from the flags,
//! each point's scenario built up front (a bad one fails before any run),
//! the points run on worker threads (`parallel::map_in_order`, so the band
//! is the same for any `--jobs`), and the band folded by the core.

use crate::args::BandArgs;
use crate::{parallel, progress};
use anyhow::{Result, anyhow};
use sim_core::{BandPlan, BandPoint, Bands, ReportSections, RunReport, Scenario, Simulation};

/// The plan the flags ask for; `None` when neither is given (the command's
/// output stays what it was without them). A value out of range is an
/// error naming the flag, the value and the range (exit 2).
pub fn plan(a: &BandArgs) -> Result<Option<BandPlan>> {
    if a.phases.is_none() && a.seeds.is_none() {
        return Ok(None);
    }
    BandPlan::new(a.phases.unwrap_or(1), a.seeds.unwrap_or(1)).map(Some).map_err(|e| anyhow!(e))
}

/// What a band needs of every report: the CDFs besides what `sections` asks.
pub fn sections(sections: ReportSections, plan: Option<&BandPlan>) -> ReportSections {
    match plan {
        Some(_) => ReportSections { cdfs: true, ..sections },
        None => sections,
    }
}

/// One scenario's points and their runs (label, scenario), in order.
pub type PointRuns = (Vec<BandPoint>, Vec<(String, Scenario)>);

/// Every point of `plan` over each of `scenarios` (label, scenario), built
/// before any runs: per scenario its points and their scenarios, in order.
pub fn point_scenarios(scenarios: &[(String, Scenario)], plan: &BandPlan) -> Result<Vec<PointRuns>> {
    scenarios
        .iter()
        .map(|(label, s)| {
            let points = plan.points(s);
            let runs = points
                .iter()
                .map(|p| {
                    let name = format!("{label} phase {} seed {}", p.phase, p.seed);
                    plan.scenario(s, p).map(|s| (name, s)).map_err(anyhow::Error::from)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok((points, runs))
        })
        .collect()
}

/// Runs `planned` to the end on `jobs` threads; reports in `planned` order.
pub fn run_all(planned: &[(String, Scenario)], jobs: usize, show: bool, sections: ReportSections) -> Vec<RunReport> {
    let bars = progress::runs(show);
    parallel::map_in_order(planned, jobs, "bands", |(label, scenario)| {
        let mut sim = Simulation::recording(scenario, sections);
        progress::run_to_end_in(&bars, &mut sim, label);
        sim.report()
    })
}

/// The band of one scenario whose point 0 already ran (`first`): the other
/// points run here.
pub fn rest_of_band(
    s: &Scenario,
    label: &str,
    plan: &BandPlan,
    first: &RunReport,
    jobs: Option<u16>,
    show: bool,
) -> Result<Bands> {
    let mut per = point_scenarios(&[(label.to_string(), s.clone())], plan)?;
    let (points, runs) = per.pop().ok_or_else(|| anyhow!("no points"))?;
    let rest = &runs[1..];
    let jobs = crate::commands::compare::jobs(jobs, rest.len());
    let mut reports = vec![first.clone()];
    // The band folds figures and CDFs only: no history, no occupancy.
    reports.extend(run_all(rest, jobs, show, sections(ReportSections::FIGURES, Some(plan))));
    Ok(sim_core::bands(&points, &reports, plan))
}
