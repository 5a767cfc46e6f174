//! Progress on a terminal: a bar on stderr for long runs and sweeps, shown
//! only when stderr is a terminal and the output is not JSON (so pipes,
//! CI logs and `--json` stay clean).

use indicatif::{ProgressBar, ProgressStyle};
use sim_core::{EventBudget, Scenario, Simulation};
use std::io::IsTerminal;

/// Events per `advance` call between progress updates (a few ms of work).
const CHUNK_EVENTS: u64 = 250_000;

/// A bar counting `total` units, or nothing when it should stay quiet.
pub fn bar(total: u64, unit: &str, quiet: bool) -> Option<ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let pb = ProgressBar::new(total);
    let template = format!("{{msg}} [{{bar:40}}] {{pos}}/{{len}} {unit} ({{elapsed}}, eta {{eta}})");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        pb.set_style(style.progress_chars("=> "));
    }
    Some(pb)
}

/// Runs `sim` to its end, showing simulated milliseconds done.
pub fn run_to_end(sim: &mut Simulation, scenario: &Scenario, label: &str, quiet: bool) {
    let total_ms = sim.spec().duration_ns / 1_000_000;
    let pb = bar(total_ms, "ms simulated", quiet);
    if let Some(pb) = &pb {
        pb.set_message(format!("{} {label}", scenario_name(scenario)));
    }
    while !sim.advance(EventBudget(CHUNK_EVENTS)).is_final() {
        if let Some(pb) = &pb {
            pb.set_position(sim.now().ns() / 1_000_000);
        }
    }
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
}

fn scenario_name(s: &Scenario) -> String {
    let n = &s.spec.name;
    if n.is_empty() { "run".into() } else { n.clone() }
}
