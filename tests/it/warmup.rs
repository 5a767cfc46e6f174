//! `[report] warmup` (`--warmup`): the first D of simulated time is in no
//! statistic, while the run itself (events, trace) stays the same.

use sim_core::metrics::recorder::TraceWindow;
use sim_core::{Scenario, Simulation, report_json};

/// One CPU, two hogs and a periodic task created together: the periodic
/// task's first wait (placed behind the hogs at creation, `START_DEBIT`)
/// ends at 4 ms and is its worst delay by far; every later wake-up, as a
/// sleeper with `GENTLE_FAIR_SLEEPERS` credit, preempts at once.
const TRANSIENT: &str = r#"
schema = 1
name = "startup-transient"
seed = 7
duration = "200ms"

[machine]
cpus = 1
hz = 250

[kernel]
version = "4.4"

[report]
victim = "rt"

[[tasks]]
name = "hog"
count = 2
cpus = "0"
program = [{ run = "10s" }]

[[tasks]]
name = "rt"
cpus = "0"
program = [{ sleep_until = "5ms" }, { run = "200us" }]
"#;

fn scenario(sets: &[(&str, &str)]) -> Scenario {
    Scenario::from_toml("startup-transient.toml", TRANSIENT).unwrap().with_overrides(sets).unwrap()
}

#[test]
fn a_start_up_transient_leaves_the_statistics_with_a_warm_up() {
    let plain = sim_core::run(&scenario(&[]));
    let worst = plain.victim.worst.as_ref().expect("the victim waited");
    assert_eq!((worst.start_ns, worst.end_ns), (0, 4_000_000), "the start-up wait is the worst");
    assert_eq!(plain.victim.delay.max_ns, 4_000_000);
    assert_eq!(plain.settings.warmup_ns, 0);

    let warm = sim_core::run(&scenario(&[("report.warmup", "10ms")]));
    assert_eq!(warm.settings.warmup_ns, 10_000_000);
    // Gone from the maximum, the worst-delay pointer and the culprits.
    assert_eq!(warm.victim.delay.max_ns, 0, "every wake-up after 10ms preempts at once");
    let w = warm.victim.worst.as_ref().expect("later waits remain");
    assert!(w.end_ns >= 10_000_000, "{w:?}");
    assert!(warm.victim.histogram.iter().all(|b| b.culprits.is_empty()), "no waiting time left to attribute");
    // Counted from 10ms: 38 jobs (released at 10, 15, ..., 195ms) instead of 39 (from 5ms).
    let rt = |r: &sim_core::RunReport| r.tasks.iter().find(|t| t.name == "rt").unwrap().clone();
    assert_eq!(rt(&plain).response.unwrap().count, 39);
    assert_eq!(rt(&warm).response.unwrap().count, 38);
    assert_eq!(rt(&warm).delay.count, 38);
    // Busy time and runtime count from 10ms: the CPU is always busy, so
    // 190ms, and the tasks' runtimes add up to it.
    assert_eq!(warm.cpus[0].busy_ns, 190_000_000);
    assert_eq!(warm.cpus[0].idle_ns, 0);
    assert_eq!(warm.tasks.iter().map(|t| t.runtime_ns).sum::<u64>(), 190_000_000);
    assert!(warm.cpus[0].switches < plain.cpus[0].switches);
    assert!(warm.tasks.iter().map(|t| t.switches).sum::<u64>() < plain.tasks.iter().map(|t| t.switches).sum::<u64>());

    // The JSON names it; without a warm-up the key is absent (golden digests unchanged).
    let v: serde_json::Value = serde_json::from_str(&report_json(&warm)).unwrap();
    assert_eq!(v["settings"]["warmup_ns"], 10_000_000u64);
    assert_eq!(v["victim"]["delay"]["max_ns"], 0u64);
    let v0: serde_json::Value = serde_json::from_str(&report_json(&plain)).unwrap();
    assert!(v0["settings"].get("warmup_ns").is_none());
}

/// The warm-up changes statistics only: the same events, the same trace.
#[test]
fn a_warm_up_leaves_the_run_itself_unchanged() {
    let trace_of = |s: &Scenario| {
        let mut sim = Simulation::new(s);
        sim.enable_trace(TraceWindow::all(100_000)).expect("traced from the start");
        sim.run_to_end();
        (sim.events(), sim.now(), sim.trace().to_vec())
    };
    let (events, end, trace) = trace_of(&scenario(&[]));
    let (events_w, end_w, trace_w) = trace_of(&scenario(&[("report.warmup", "10ms")]));
    assert!(trace.len() > 50, "the trace holds the run");
    assert_eq!((events, end), (events_w, end_w));
    assert_eq!(trace, trace_w);
    // A shipped scenario with devices, sources and groups: same events too.
    let jmx = sim_tests::load("jmx").with_overrides(&[("duration", "300ms")]).unwrap();
    let a = sim_core::run(&jmx);
    let b = sim_core::run(&jmx.with_overrides(&[("report.warmup", "100ms")]).unwrap());
    assert_eq!(a.events, b.events);
    assert!(b.victim.delay.count < a.victim.delay.count);
}

/// A warm-up of the whole run or longer is refused, naming the key, the
/// value and the range.
#[test]
fn a_warm_up_must_be_shorter_than_the_run() {
    let base = Scenario::from_toml("startup-transient.toml", TRANSIENT).unwrap();
    let e = base.with_overrides(&[("report.warmup", "200ms")]).unwrap_err().to_string();
    assert!(e.contains("report.warmup") && e.contains("200ms") && e.contains("0 to 199.999999ms"), "{e}");
    let e = base.with_overrides(&[("report.warmup", "\"soon\"")]).unwrap_err().to_string();
    assert!(e.contains("report.warmup"), "{e}");
    assert!(base.with_overrides(&[("report.warmup", "199ms")]).is_ok());
}
