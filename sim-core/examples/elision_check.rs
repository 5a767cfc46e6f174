//! Runs scenarios with event elision on and off and compares the reports
//! (all but the event count) and the whole trace; prints the event counts and
//! the elision statistics (`ELISION_TIME=1`: also best-of-5 wall times):
//! `cargo run --release -p schedlab-core --features internals --example elision_check -- scenarios/*.toml`.

// A measuring tool, not the core: it may read the wall clock.
#![allow(clippy::disallowed_methods)]

use sim_core::metrics::recorder::TraceWindow;
use sim_core::time::SimTime;
fn run(sc: &sim_core::Scenario, on: bool) -> (String, String, u64, sim_core::tick::ElisionStats) {
    let mut sim = sim_core::Simulation::new(sc);
    sim.set_elision(on);
    sim.enable_trace(TraceWindow { from: SimTime(0), to: SimTime(u64::MAX), cpus: None, records_max: 50_000_000 })
        .expect("traced from the start");
    sim.run_to_end();
    let trace = format!("{:?}", sim.trace());
    let json = sim_core::report::json::report_json(&sim.report());
    let json: String =
        json.lines().filter(|l| !l.trim_start().starts_with("\"events\"")).collect::<Vec<_>>().join("\n");
    (json, trace, sim.events(), sim.elision_stats())
}
fn main() {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap();
        let base = sim_core::Scenario::from_toml(&path, &text).unwrap();
        let mut names = vec![None];
        names.extend(base.variant_names().into_iter().map(|s| Some(s.to_string())));
        for v in names {
            let sc = match &v {
                Some(v) => base.with_variant(v).unwrap(),
                None => base.clone(),
            };
            let (j1, t1, e1, st) = run(&sc, true);
            let (j0, t0, e0, _) = run(&sc, false);
            let ok = j1 == j0 && t1 == t0;
            if std::env::var("ELISION_TIME").is_ok() {
                let time = |on: bool| {
                    (0..5)
                        .map(|_| {
                            let mut sim = sim_core::Simulation::new(&sc);
                            sim.set_elision(on);
                            let t = std::time::Instant::now();
                            sim.run_to_end();
                            t.elapsed().as_secs_f64()
                        })
                        .fold(f64::MAX, f64::min)
                };
                let (a, b) = (time(false), time(true));
                println!("  wall off {:.1} ms, on {:.1} ms: {:.2}x", a * 1e3, b * 1e3, a / b);
            }
            println!(
                "{path} {:?}: {} events {e0} -> {e1} ({:.2}x) {st:?}",
                v,
                if ok { "SAME" } else { "DIFF" },
                e0 as f64 / e1 as f64
            );
            if !ok {
                let d = j1.lines().zip(j0.lines()).enumerate().find(|(_, (a, b))| a != b);
                println!("  json diff: {d:?}");
                println!("  trace same: {}", t1 == t0);
            }
        }
    }
}
