//! What one simulated event costs (issue 38): jmx, threadpool,
//! elastic-backup and a two-task validation scenario, each under CFS 4.4 and
//! under EEVDF 6.18. Criterion times whole runs (building the simulation is
//! not timed) and reports them as events per second (`thrpt`); after the
//! group a table gives, per case, the events, events per second, wall time
//! per simulated second and, with `SCHEDLAB_CALLGRIND=1` and valgrind on the
//! PATH, instructions per event.
//!
//! Instructions come from `valgrind --tool=callgrind` running this same
//! binary on one case (`SCHEDLAB_PER_EVENT_ONE=ID`), less a run of the same
//! case cut to 1 ns (parsing and building), divided by the events: they are
//! deterministic, so they can be compared across machines and under load,
//! where wall time cannot.
//!
//! `cargo bench -p schedlab-core --bench per_event` (add `-- --save-baseline
//! NAME` or `-- --baseline NAME` to keep or compare against a baseline);
//! `SCHEDLAB_CALLGRIND=1 cargo bench -p schedlab-core --bench per_event` adds
//! the instruction counts (about six minutes more). docs/performance.md has
//! the figures.

// A measuring tool, not the core: it reads the wall clock and runs valgrind.
#![allow(clippy::disallowed_methods)]

use criterion::{BatchSize, Criterion, Throughput};
use sim_core::{Scenario, Simulation};
use std::hint::black_box;

/// One case: its id, its file under scenarios/, the kernel model and the
/// simulated duration (long enough for a steady state, short enough for
/// callgrind).
struct Case {
    id: &'static str,
    file: &'static str,
    kernel: &'static str,
    duration: &'static str,
}

const CASES: [Case; 8] = [
    Case { id: "jmx/4.4", file: "jmx", kernel: "4.4", duration: "2s" },
    Case { id: "jmx/6.18", file: "jmx", kernel: "6.18", duration: "2s" },
    Case { id: "threadpool/4.4", file: "threadpool", kernel: "4.4", duration: "5s" },
    Case { id: "threadpool/6.18", file: "threadpool", kernel: "6.18", duration: "5s" },
    Case { id: "elastic-backup/4.4", file: "elastic-backup", kernel: "4.4", duration: "5s" },
    Case { id: "elastic-backup/6.18", file: "elastic-backup", kernel: "6.18", duration: "5s" },
    Case { id: "two-tasks/4.4", file: "validation/02-hog-same-group", kernel: "4.4", duration: "10s" },
    Case { id: "two-tasks/6.18", file: "validation/02-hog-same-group", kernel: "6.18", duration: "10s" },
];

/// Set to a case's id: run that case once and print its event count (the
/// process callgrind measures).
const ONE_ENV: &str = "SCHEDLAB_PER_EVENT_ONE";

fn scenario(case: &Case, duration: &str) -> Scenario {
    let path = format!("{}/../scenarios/{}.toml", env!("CARGO_MANIFEST_DIR"), case.file);
    let text = std::fs::read_to_string(&path).expect("scenario file");
    Scenario::from_toml(&path, &text)
        .expect("valid scenario")
        .with_overrides(&[("kernel.version", case.kernel), ("duration", duration)])
        .expect("overrides")
}

fn simulated_s(case: &Case) -> f64 {
    let d = case.duration.trim_end_matches('s');
    d.parse::<f64>().expect("duration in seconds")
}

/// Times each case; returns their event counts, in `CASES` order.
fn per_event(c: &mut Criterion) -> Vec<u64> {
    let mut g = c.benchmark_group("per_event");
    g.sample_size(10);
    let mut counts = Vec::with_capacity(CASES.len());
    for case in &CASES {
        let s = scenario(case, case.duration);
        let events = sim_core::run(&s).events;
        counts.push(events);
        g.throughput(Throughput::Elements(events));
        g.bench_function(case.id, |b| {
            b.iter_batched(
                || Simulation::new(&s),
                |mut sim| {
                    sim.run_to_end();
                    black_box(sim.events())
                },
                BatchSize::LargeInput,
            );
        });
    }
    g.finish();
    counts
}

/// Criterion's mean time of one case as it just wrote it.
fn mean_ns(id: &str) -> Option<f64> {
    let dir = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "../target".to_string());
    let path = format!("{dir}/criterion/per_event/{}/new/estimates.json", id.replace('/', "_"));
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["mean"]["point_estimate"].as_f64()
}

/// Instructions callgrind counts for this binary running `arg` alone.
fn callgrind_ir(arg: &str) -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(exe)
        .env(ONE_ENV, arg)
        .output()
        .ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err.lines().find(|l| l.contains("Collected :"))?;
    line.rsplit(':').next()?.trim().replace(',', "").parse().ok()
}

/// Instructions per event of `case`: its run less the same run cut to 1 ns.
fn ir_per_event(case: &Case, events: u64) -> Option<f64> {
    let whole = callgrind_ir(case.id)?;
    let setup = callgrind_ir(&format!("{}@setup", case.id))?;
    Some(whole.saturating_sub(setup) as f64 / events.max(1) as f64)
}

fn summary(counts: &[u64]) {
    let callgrind = std::env::var("SCHEDLAB_CALLGRIND").is_ok_and(|v| v == "1");
    println!("\nper_event: case, events, Melem/s, ms per simulated s, instructions per event");
    let mut ir: Vec<Option<f64>> = Vec::new();
    for (case, &events) in CASES.iter().zip(counts) {
        let per = if callgrind { ir_per_event(case, events) } else { None };
        ir.push(per);
        let (rate, per_s) = mean_ns(case.id).map_or(("-".to_string(), "-".to_string()), |ns| {
            (format!("{:.3}", events as f64 / ns * 1e3), format!("{:.2}", ns / 1e6 / simulated_s(case)))
        });
        let per = per.map_or_else(|| "-".to_string(), |v| format!("{v:.0}"));
        println!("per_event: {:22} {events:>9} {rate:>8} {per_s:>8} {per:>7}", case.id);
    }
    // CASES pairs each scenario's 4.4 case with its 6.18 case.
    for (pair, ids) in ir.chunks(2).zip(CASES.chunks(2)) {
        if let [Some(cfs), Some(eevdf)] = pair {
            let scenario = ids[0].id.split('/').next().unwrap_or(ids[0].id);
            println!("per_event: {scenario} EEVDF 6.18 / CFS 4.4 instructions per event: {:.2}x", eevdf / cfs);
        }
    }
    if !callgrind {
        println!("per_event: instructions per event: run with SCHEDLAB_CALLGRIND=1 (valgrind on the PATH)");
    }
}

/// Runs one case for callgrind and prints its event count.
fn run_one(arg: &str) {
    let (id, setup) = arg.strip_suffix("@setup").map_or((arg, false), |id| (id, true));
    let case = CASES.iter().find(|c| c.id == id).expect("a case id");
    let s = scenario(case, if setup { "1ns" } else { case.duration });
    let mut sim = Simulation::new(&s);
    sim.run_to_end();
    println!("{}", sim.events());
}

fn main() {
    if let Ok(one) = std::env::var(ONE_ENV) {
        return run_one(&one);
    }
    let mut c = Criterion::default().configure_from_args();
    let counts = per_event(&mut c);
    c.final_summary();
    summary(&counts);
}
