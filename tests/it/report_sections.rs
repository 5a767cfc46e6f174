//! `ReportSections`: a report built with only the sections the JSON and
//! text reports print is the full report minus what they do not read, so
//! `--json` and the text output cannot change when the CLI asks for less.

use sim_core::report::run::ReportSections;
use sim_core::{Simulation, report_json};
use sim_tests::{load, scenario_files};

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
            let printed = sim.report_with(ReportSections::PRINTED);
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
