//! Same scenario and seed, same bytes; another seed, other bytes.

use sim_core::report_json;
use sim_tests::{load, run};

#[test]
fn same_seed_gives_byte_identical_json() {
    let s = load("jmx").with_variant("tuned").unwrap().with_overrides(&[("duration", "2s")]).unwrap();
    let a = report_json(&run(&s));
    let b = report_json(&run(&s));
    assert_eq!(a, b);
    let other = s.with_overrides(&[("seed", "43")]).unwrap();
    let c = report_json(&run(&other));
    assert_ne!(a, c, "a different seed must change the run");
    assert!(c.contains("\"seed\": 43"));
}

#[test]
fn chunked_advance_equals_one_run() {
    let s = load("jmx").with_overrides(&[("duration", "500ms")]).unwrap();
    let whole = report_json(&run(&s));
    let mut sim = sim_core::Simulation::new(&s);
    let mut calls = 0;
    while !sim.advance(sim_core::EventBudget(997)).is_final() {
        calls += 1;
    }
    assert!(calls > 10, "the run was actually chunked ({calls} calls)");
    assert_eq!(report_json(&sim.report()), whole);
}
