//! `ReportSections`: a run that records only the sections the JSON and
//! text reports print gives the full report minus what they do not read, so
//! `--json` and the text output cannot change when the CLI asks for less;
//! one that records only the figures (sweeps, the advisor, bands) gives the
//! same figures, and a section it did not record is refused.

use sim_core::report::run::ReportSections;
use sim_core::{RunReport, Scenario, Simulation, report_json};
use sim_tests::{load, scenario_files};

/// Every shipped scenario and its variants, `duration` long.
fn every_scenario(duration: &str) -> Vec<(String, Scenario)> {
    let mut all = Vec::new();
    for path in scenario_files() {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let base = load(&name).with_overrides(&[("duration", duration)]).unwrap();
        for v in base.variant_names() {
            all.push((name.clone(), base.with_variant(v).unwrap()));
        }
        all.push((name, base));
    }
    all
}

fn recorded(s: &Scenario, sections: ReportSections) -> (RunReport, Simulation) {
    let mut sim = Simulation::recording(s, sections);
    sim.run_to_end();
    (sim.report(), sim)
}

/// Every shipped scenario and variant (300 ms each): the `PRINTED` report
/// equals the full one with its CDFs and occupancy emptied, and both give
/// the same JSON bytes. The sections left out were not empty in the full
/// report (so the test compares something).
#[test]
fn a_printed_report_is_the_full_one_without_cdfs_and_occupancy() {
    let mut runs = 0;
    let mut cdf_points = 0;
    for path in scenario_files() {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let base = load(&name).with_overrides(&[("duration", "300ms")]).unwrap();
        let mut scenarios = vec![base.clone()];
        for v in base.variant_names() {
            scenarios.push(base.with_variant(v).unwrap());
        }
        for s in scenarios {
            let mut sim = Simulation::new(&s);
            sim.run_to_end();
            let all = sim.report();
            let printed = RunReport::of_sections(&sim, ReportSections::PRINTED).unwrap();
            // Recorded that way from the start: the same report.
            assert_eq!(recorded(&s, ReportSections::PRINTED).0, printed, "{name} {:?}", s.variant());
            assert_eq!(report_json(&all), report_json(&printed), "{name} {:?}", s.variant());
            assert!(!all.occupancy.busy.is_empty(), "{name}: a full report has the occupancy");
            assert!(printed.occupancy.busy.is_empty() && printed.victim.delay_cdf.is_empty());
            cdf_points += all.task_delays.iter().map(|d| d.cdf.len()).sum::<usize>();
            let mut stripped = all.clone();
            stripped.occupancy = Default::default();
            stripped.victim.delay_cdf.clear();
            stripped.task_delays.iter_mut().for_each(|d| d.cdf.clear());
            assert_eq!(stripped, printed, "{name} {:?}", s.variant());
            runs += 1;
        }
    }
    assert!(runs > 20 && cdf_points > 100, "{runs} runs, {cdf_points} CDF points");
}

/// A run recording the figures alone (no history, occupancy or CDFs) is the
/// same run: its report is the full one without culprits, the window around
/// the worst delay, CDFs and occupancy (the worst delay itself is kept). The
/// full reports had culprits and windows to leave out.
#[test]
fn a_figures_report_is_the_full_one_without_what_the_history_gives() {
    let (mut runs, mut culprits, mut rows) = (0, 0, 0);
    for (name, s) in every_scenario("300ms") {
        let (all, _) = recorded(&s, ReportSections::ALL);
        let (figures, sim) = recorded(&s, ReportSections::FIGURES);
        culprits += all.victim.histogram.iter().map(|b| b.culprits.len()).sum::<usize>();
        culprits += all.tasks.iter().map(|t| t.long_delay_culprits.len()).sum::<usize>();
        rows += all.victim.history.len();
        let mut stripped = all.clone();
        stripped.occupancy = Default::default();
        stripped.victim.delay_cdf.clear();
        stripped.task_delays.iter_mut().for_each(|d| d.cdf.clear());
        stripped.victim.histogram.iter_mut().for_each(|b| b.culprits.clear());
        stripped.tasks.iter_mut().for_each(|t| t.long_delay_culprits.clear());
        stripped.victim.history.clear();
        stripped.victim.history_truncated = false;
        assert_eq!(stripped, figures, "{name} {:?}", s.variant());
        // What it did not record is refused, naming the section.
        let e = RunReport::of_sections(&sim, ReportSections::PRINTED).unwrap_err();
        assert!(e.contains("history"), "{e}");
        let e = RunReport::of_sections(&sim, ReportSections { history: false, ..ReportSections::ALL }).unwrap_err();
        assert!(e.contains("occupancy"), "{e}");
        assert!(RunReport::of_sections(&sim, ReportSections { cdfs: true, ..ReportSections::FIGURES }).is_ok());
        runs += 1;
    }
    assert!(runs > 20 && culprits > 50 && rows > 50, "{runs} runs, {culprits} culprits, {rows} history rows");
}

/// A trace needs the history before it, so a run that keeps none can be
/// traced from its start only; from its start the trace is the same.
#[test]
fn a_run_without_history_is_traced_from_its_start_only() {
    let s = load("jmx").with_overrides(&[("duration", "50ms")]).unwrap();
    let window = sim_core::metrics::recorder::TraceWindow::all(100_000);
    let trace_of = |sections| {
        let mut sim = Simulation::recording(&s, sections);
        sim.enable_trace(window.clone()).unwrap();
        sim.run_to_end();
        sim.trace().to_vec()
    };
    let (full, figures) = (trace_of(ReportSections::ALL), trace_of(ReportSections::FIGURES));
    assert!(full.len() > 1000, "{} records", full.len());
    assert_eq!(full, figures);
    let mut sim = Simulation::recording(&s, ReportSections::FIGURES);
    sim.advance(sim_core::EventBudget(10));
    assert!(sim.enable_trace(window.clone()).unwrap_err().contains("from its start"));
    let mut sim = Simulation::new(&s);
    sim.advance(sim_core::EventBudget(10));
    assert!(sim.enable_trace(window).is_ok());
}
