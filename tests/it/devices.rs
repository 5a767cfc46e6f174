//! The response-curve devices (issue 21) under the full engine: shipped
//! `mixed-rw.toml` with its disk replaced by each preset runs with every
//! invariant checked after every event (each request completes once, in-flight
//! within the tags, bytes conserved), and the NCQ disk's runs are deterministic.

use sim_core::Scenario;
use sim_core::block::device::presets;
use sim_core::engine::Simulation;

/// `mixed-rw.toml` with `[devices.sda]` replaced by `device`, run for `duration`.
fn with_device(device: &str, duration: &str) -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/mixed-rw.toml"))
        .expect("scenarios/mixed-rw.toml");
    let start = text.find("[devices.sda]").expect("a [devices.sda] table");
    let end = start + text[start..].find("\n\n").expect("a blank line after it");
    let body = format!("{}[devices.sda]\n{device}\ncapacity = \"2TiB\"{}", &text[..start], &text[end..]);
    let d = body.find("\nduration = ").expect("a duration");
    let e = d + 1 + body[d + 1..].find('\n').expect("end of line");
    format!("{}\nduration = \"{duration}\"{}", &body[..d], &body[e..])
}

#[test]
fn every_preset_runs_with_invariants_checked() {
    for p in presets::all() {
        let toml = with_device(&format!("preset = \"{}\"\nelevator = \"deadline\"", p.name), "300ms");
        let s = Scenario::from_toml("dev.toml", &toml).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let mut sim = Simulation::new(&s);
        sim.run_to_end_checked().unwrap_or_else(|e| panic!("{}: {e}", p.name));
    }
}

#[test]
fn runs_are_deterministic() {
    let toml = with_device("preset = \"hdd-7200\"\nelevator = \"noop\"", "500ms");
    let s = Scenario::from_toml("dev.toml", &toml).expect("valid");
    let a = sim_core::report_json(&sim_core::run(&s));
    let b = sim_core::report_json(&sim_core::run(&s));
    assert!(a.contains("\"kind\": \"hdd\""), "the report names the disk");
    assert_eq!(a, b);
}
