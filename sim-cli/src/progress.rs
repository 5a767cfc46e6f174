//! Progress bars on stderr for long runs, compares and sweeps, shown only
//! when stderr is a terminal and the output is not JSON (so pipes, logs, CI
//! and batch systems see nothing extra).

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
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
/// with a bar labelled `label`. The bar shows the larger of the simulated
/// time and the event budget used, as the explorer's does: an explosive
/// scenario, whose clock barely moves, still shows (and estimates) how long
/// until it stops at `events_max`.
pub fn run_to_end(sim: &mut Simulation, label: &str, wanted: bool) {
    let bar = bar(PER_MILLE, "", wanted);
    step_to_end(sim, label, &bar);
}

/// The bars of runs stepped on several threads at once (`compare --jobs`):
/// each run in progress gets its own line, removed when it ends. Hidden
/// unless `wanted` and stderr is a terminal, as [`bar`].
pub fn runs(wanted: bool) -> MultiProgress {
    if wanted && std::io::stderr().is_terminal() {
        MultiProgress::new()
    } else {
        MultiProgress::with_draw_target(ProgressDrawTarget::hidden())
    }
}

/// [`run_to_end`] with its bar as one line of `multi`.
pub fn run_to_end_in(multi: &MultiProgress, sim: &mut Simulation, label: &str) {
    let bar = multi.add(ProgressBar::new(PER_MILLE));
    step_to_end(sim, label, &bar);
    multi.remove(&bar);
}

/// The bar's scale: a run's progress in thousandths.
const PER_MILLE: u64 = 1000;

/// The stepping loop of [`run_to_end`], updating `bar` (cleared at the end).
fn step_to_end(sim: &mut Simulation, label: &str, bar: &ProgressBar) {
    if let Ok(style) = ProgressStyle::with_template("{msg} {elapsed_precise} [{wide_bar}] {percent}% (eta {eta})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(label.to_string());
    let (duration_ns, events_max) = (sim.spec().duration_ns.max(1), sim.spec().events_max.max(1));
    while !sim.advance(EventBudget(EVENTS_PER_STEP)).is_final() {
        let time = u128::from(sim.now().ns()) * u128::from(PER_MILLE) / u128::from(duration_ns);
        let budget = u128::from(sim.events()) * u128::from(PER_MILLE) / u128::from(events_max);
        let (ms, of_ms) = (sim.now().ns() as f64 / 1e6, duration_ns as f64 / 1e6);
        bar.set_message(if budget > time {
            format!("{label}: {ms:.3} of {of_ms:.0} ms simulated, event budget {}% used", budget / 10)
        } else {
            format!("{label}: {ms:.0} of {of_ms:.0} ms simulated")
        });
        bar.set_position(time.max(budget).min(u128::from(PER_MILLE)) as u64);
    }
    bar.finish_and_clear();
}
