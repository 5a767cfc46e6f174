//! Progress bars on stderr for long runs and sweeps, shown only when stderr
//! is a terminal and the output is not JSON (so pipes, logs, CI and batch
//! systems see nothing extra).

use indicatif::{ProgressBar, ProgressStyle};
use sim_core::{EventBudget, Simulation};
use std::io::IsTerminal;

/// Events simulated between progress updates: a few milliseconds of work.
const EVENTS_PER_STEP: u64 = 200_000;

/// A bar counting `len` `unit`s, hidden unless `wanted` and stderr is a terminal.
pub fn bar(len: u64, unit: &str, wanted: bool) -> ProgressBar {
    if !wanted || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let template = format!("{{msg}} {{elapsed_precise}} [{{wide_bar}}] {{pos}}/{{len}} {unit} (eta {{eta}})");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Runs `sim` to its end in `advance` steps (the same report as one call),
/// with a bar in simulated milliseconds labelled `label`.
pub fn run_to_end(sim: &mut Simulation, label: &str, wanted: bool) {
    let bar = bar(sim.spec().duration_ns / 1_000_000, "simulated ms", wanted);
    bar.set_message(label.to_string());
    while !sim.advance(EventBudget(EVENTS_PER_STEP)).is_final() {
        bar.set_position(sim.now().ns() / 1_000_000);
    }
    bar.finish_and_clear();
}
