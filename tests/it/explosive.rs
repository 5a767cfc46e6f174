//! Valid but explosive scenarios (`tests/explosive/*.toml`): millions of
//! events per simulated millisecond. Each must stop at its event budget with
//! a partial report that says so, in the same bytes however it is stepped
//! (the CLI runs in 200,000-event steps, the page in chunks of any size).

use sim_core::{EventBudget, Scenario, Simulation, StopReason, partial_warning, report_json};
use std::path::PathBuf;

fn explosive_files() -> Vec<(String, String)> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/explosive"));
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("tests/explosive exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable file");
            (format!("tests/explosive/{}", p.file_name().unwrap().to_string_lossy()), text)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn explosive_scenarios_stop_at_the_event_budget_with_a_partial_report() {
    let files = explosive_files();
    assert!(!files.is_empty());
    for (file, text) in files {
        let s = Scenario::from_toml(&file, &text).unwrap_or_else(|e| panic!("{e}"));
        let r = sim_core::run(&s);
        assert_eq!(r.stop, StopReason::EventLimit, "{file}");
        assert_eq!(r.events, r.settings.events_max, "{file}");
        assert!(r.events <= 2_000_000, "{file}: keep the budget small so the tests stay quick");
        // Explosive indeed: over a million events per simulated millisecond.
        assert!(
            r.sim_time_ns > 0 && r.events * 1_000_000 / r.sim_time_ns > 1_000_000,
            "{file}: {} events in {} ns",
            r.events,
            r.sim_time_ns
        );
        assert!(r.sim_time_ns < r.settings.duration_ns, "{file}");
        let w = partial_warning(&r).unwrap_or_default();
        assert!(
            w.starts_with("the event budget (limits.events_max = ") && w.contains("this report is partial"),
            "{file}: {w}"
        );
        // The partial report is a report: tasks ran, delays were recorded.
        assert!(r.tasks.iter().any(|t| t.runtime_ns > 0) && r.victim.delay.count > 0, "{file}");
        let json = report_json(&r);
        assert!(json.contains("\"stop_reason\": \"event_limit\""), "{file}");
        // Stepped in uneven chunks, as the page does: the same bytes.
        let mut sim = Simulation::new(&s);
        let mut chunk = 1;
        while !sim.advance(EventBudget(chunk)).is_final() {
            chunk = chunk * 3 + 7;
        }
        assert_eq!(report_json(&sim.report()), json, "{file}: chunked run differs");
    }
}
