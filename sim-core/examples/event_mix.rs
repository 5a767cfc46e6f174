//! Prints how many events of each kind a scenario's run dispatches, with
//! elision on and off: `cargo run --release -p schedlab-core --features internals --example
//! event_mix -- scenarios/jmx.toml [VARIANT] [KEY=VALUE…] [--no-elision]
//! [--record=all|printed|figures]`: what the run records for its report
//! (`ReportSections`; `all` by default, `printed` is `sim-cli run`'s).

// A measuring tool, not the core: it may read the wall clock.
#![allow(clippy::disallowed_methods)]

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    let off = args.iter().any(|a| a == "--no-elision");
    args.retain(|a| a != "--no-elision");
    let sections = match args.iter().find_map(|a| a.strip_prefix("--record=")) {
        None | Some("all") => sim_core::ReportSections::ALL,
        Some("printed") => sim_core::ReportSections::PRINTED,
        Some("figures") => sim_core::ReportSections::FIGURES,
        Some(other) => {
            eprintln!("--record={other}: expected all, printed or figures");
            std::process::exit(2);
        }
    };
    args.retain(|a| !a.starts_with("--record="));
    let sets: Vec<(String, String)> =
        args.iter().skip(1).filter_map(|a| a.split_once('=').map(|(k, v)| (k.to_string(), v.to_string()))).collect();
    args.retain(|a| !a.contains('='));
    let Some(path) = args.get(1).cloned() else {
        eprintln!("usage: event_mix SCENARIO.toml [VARIANT]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut scenario = sim_core::Scenario::from_toml(&path, &text).unwrap_or_else(|e| panic!("{e}"));
    if let Some(v) = args.get(2) {
        scenario = scenario.with_variant(v).unwrap_or_else(|e| panic!("{e}"));
    }
    let sets: Vec<(&str, &str)> = sets.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    scenario = scenario.with_overrides(&sets).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = sim_core::Simulation::recording(&scenario, sections);
    sim.set_elision(!off);
    let t0 = std::time::Instant::now();
    sim.run_to_end();
    let wall = t0.elapsed();
    println!(
        "{path} {}: {} events in {:.3} s",
        args.get(2).map_or("base", String::as_str),
        sim.events(),
        wall.as_secs_f64()
    );
    for (kind, n) in sim.event_counts().filter(|(_, n)| *n > 0) {
        println!("  {kind:16} {n:>10} {:5.1} %", 100.0 * n as f64 / sim.events().max(1) as f64);
    }
}
