//! Progress bars on stderr for long runs and sweeps, shown only when stderr
//! is a terminal and the output is not JSON (so pipes, logs and batch
//! systems see nothing extra).

use indicatif::{ProgressBar, ProgressStyle};
use sim_core::{EventBudget, RunReport, Scenario, Simulation};
use std::io::IsTerminal;

/// Events simulated between progress updates: a few milliseconds of work.
const EVENTS_PER_STEP: u64 = 200_000;

/// A bar counting `len` `unit`s, hidden unless `wanted` and stderr is a terminal.
pub fn bar(len: u64, unit: &str, wanted: bool) -> ProgressBar {
    if !wanted || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let template = format!("{{elapsed_precise}} [{{wide_bar}}] {{pos}}/{{len}} {unit} (eta {{eta}})");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// `sim_core::run` in steps of simulated time, with a bar in simulated
/// milliseconds. Stepping with `advance` gives the same report as one call.
pub fn run(scenario: &Scenario, wanted: bool) -> RunReport {
    let bar = bar(scenario.spec.duration_ns / 1_000_000, "simulated ms", wanted);
    let mut sim = Simulation::new(scenario);
    while !sim.advance(EventBudget(EVENTS_PER_STEP)).is_final() {
        bar.set_position(sim.now().ns() / 1_000_000);
    }
    bar.finish_and_clear();
    sim.report()
}
