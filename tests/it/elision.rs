//! Exact event elision (sim-core `tick.rs`): with elision on (the default)
//! and off (`Simulation::set_elision(false)`, the debug switch), a run gives
//! the same schedule (every record of the trace: each switch with its time,
//! CPU, tasks and states, each wakeup, migration and throttle), the same
//! delays and the same report, byte for byte; only the event count differs.

use proptest::prelude::*;
use sim_core::metrics::recorder::TraceWindow;
use sim_core::report::json::report_json;
use sim_core::time::SimTime;
use sim_core::{Scenario, Simulation, StopReason};

/// What a run shows, apart from its event count.
#[derive(Debug, PartialEq)]
struct Outcome {
    report: String,
    trace: String,
    stop: StopReason,
}

fn run(s: &Scenario, elision: bool) -> (Outcome, u64, sim_core::tick::ElisionStats) {
    let mut sim = Simulation::new(s);
    sim.set_elision(elision);
    sim.enable_trace(TraceWindow { from: SimTime::ZERO, to: SimTime(u64::MAX), cpus: None, records_max: usize::MAX })
        .expect("traced from the start");
    sim.run_to_end();
    let trace = format!("{:?}", sim.trace());
    let report = report_json(&sim.report());
    // The one field that may differ.
    let report = report.lines().filter(|l| !l.trim_start().starts_with("\"events\":")).collect::<Vec<_>>().join("\n");
    (Outcome { report, trace, stop: sim.finished().expect("ran to the end") }, sim.events(), sim.elision_stats())
}

/// The first line where two texts differ, for the failure message.
fn first_difference(a: &str, b: &str) -> String {
    a.lines()
        .zip(b.lines())
        .enumerate()
        .find(|(_, (x, y))| x != y)
        .map_or_else(|| "lengths differ".to_string(), |(i, (x, y))| format!("line {}: on `{x}` / off `{y}`", i + 1))
}

/// Compares a run with elision on and off; returns (events on, events off),
/// or None when the run without elision stopped at its event budget (then
/// the elided run gets further and the partial reports differ by design).
fn check(s: &Scenario, what: &str) -> Result<Option<(u64, u64)>, String> {
    let (on, events_on, stats) = run(s, true);
    let (off, events_off, _) = run(s, false);
    if off.stop == StopReason::EventLimit {
        return Ok(None);
    }
    if on.report != off.report {
        return Err(format!("{what}: reports differ ({stats:?}): {}", first_difference(&on.report, &off.report)));
    }
    if on.trace != off.trace {
        return Err(format!("{what}: schedules differ ({stats:?})"));
    }
    if on.stop != off.stop {
        return Err(format!("{what}: stop {:?} vs {:?}", on.stop, off.stop));
    }
    if events_on > events_off {
        return Err(format!("{what}: elision added events: {events_on} > {events_off}"));
    }
    Ok(Some((events_on, events_off)))
}

/// Every shipped scenario (and the validation set), base and each variant,
/// with durations capped at 2 s of simulated time to keep the suite quick
/// (`sim-core/examples/elision_check.rs` runs them at full length).
#[test]
fn every_shipped_scenario_is_identical_with_elision_on_and_off() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut files: Vec<_> = ["scenarios", "scenarios/validation", "scenarios/validation/smp"]
        .iter()
        .flat_map(|d| std::fs::read_dir(format!("{root}/{d}")).expect("scenario dir"))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 25, "{} scenario files", files.len());
    let (mut total_on, mut total_off, mut runs, mut quarter_fewer) = (0u64, 0u64, 0, 0);
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read scenario");
        let name = path.display().to_string();
        let base = Scenario::from_toml(&name, &text).expect("shipped scenario parses");
        let mut variants: Vec<Option<String>> = vec![None];
        variants.extend(base.variant_names().into_iter().map(|v| Some(v.to_string())));
        for v in variants {
            let s = match &v {
                Some(v) => base.with_variant(v).expect("variant"),
                None => base.clone(),
            };
            let s =
                if s.spec.duration_ns > 2_000_000_000 { s.with_overrides(&[("duration", "2s")]).unwrap() } else { s };
            let (on, off) =
                check(&s, &format!("{name} {v:?}")).unwrap().expect("no shipped scenario hits its event budget");
            total_on += on;
            total_off += off;
            runs += 1;
            quarter_fewer += usize::from(on * 5 <= off * 4);
        }
    }
    assert!(runs >= 60, "{runs} runs");
    // Elision saves events overall, and at least a fifth of them in many
    // runs (idle NO_HZ ticks, lone tasks' ticks). The request-driven
    // scenarios (jmx, request-hops) save little: their events are arrivals
    // and burst ends, which change the schedule.
    assert!(total_on < total_off, "events with elision {total_on}, without {total_off}");
    assert!(quarter_fewer >= 20, "{quarter_fewer} of {runs} runs have at least 20% fewer events");
}

/// A lone hog on one CPU: no tick is an event, and the report is the same
/// as with every tick dispatched.
#[test]
fn a_lone_hog_elides_its_ticks() {
    let text = "schema = 1\nseed = 1\nduration = \"1s\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\nhz = 1000\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"10s\" }]\n";
    let s = Scenario::from_toml("hog.toml", text).unwrap();
    let (on, events_on, stats) = run(&s, true);
    let (off, events_off, _) = run(&s, false);
    assert_eq!(on, off);
    // 999 ticks (1 ms … 999 ms) and the task's start: all ticks dispatched
    // without elision; with it, only the start is an event (a lone task
    // on one CPU: no check_preempt_tick, no sched domain to balance).
    assert_eq!(events_off, 1000);
    assert_eq!(events_on, 1);
    assert_eq!((stats.busy_ticks, stats.busy_ticks_acting, stats.idle_ticks), (999, 0, 0));
    assert_eq!(on.stop, StopReason::TimeLimit);
}

fn generated(text: &str) -> Result<Option<(u64, u64)>, TestCaseError> {
    let s = Scenario::from_toml("generated.toml", text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let s = s.with_overrides(&[("limits.events_max", "400000")]).map_err(|e| TestCaseError::fail(e.to_string()))?;
    check(&s, "generated").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// The swarm of `invariants.rs` (every kernel model, groups, affinities,
    /// machine shapes, noise, kernel entries, serve sources).
    #[test]
    fn elision_changes_only_the_event_count(text in crate::invariants::scenario()) {
        generated(&text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Block I/O scenarios and CPU-quota scenarios.
    #[test]
    fn elision_changes_only_the_event_count_with_io(text in crate::invariants::io_scenario()) {
        generated(&text)?;
    }

    #[test]
    fn elision_changes_only_the_event_count_with_quotas(text in crate::invariants::quota_scenario()) {
        generated(&text)?;
    }
}

/// Found by `elision_changes_only_the_event_count` (4.4, two CPUs): a
/// constrained deadline task (D < P) woken with a revised runtime runs
/// past it and blocks after its next period began. `dequeue_task_dl`
/// (4.4 deadline.c:1128-1132) runs `update_curr_dl` first: the throttle
/// finds `start_dl_timer` refused (the period is already due) and requeues
/// it (`enqueue_task_dl(ENQUEUE_REPLENISH)`: −1 then +1 in `nr_running`),
/// and only then does the block dequeue it (−1). Applied the other way
/// round, CPU 0's count (that task alone) went below zero at 15.089 ms and
/// the run panicked, with elision on and off alike.
#[test]
fn a_deadline_task_replenished_inside_its_blocking_dequeue_is_counted_once() {
    let text = r#"schema = 1
seed = 0
duration = "20ms"
[limits]
events_max = 40000
[kernel]
version = "4.4"
cfs_bandwidth = "4.4"
[machine]
cpus = 2
hz = 100
context_switch = "7us"
sockets = 1
cores_per_socket = 2
threads_per_core = 1
numa_nodes = 1
nohz = true
[cfs]
group_load = "pelt"
sched_cfs_bandwidth_slice_us = 5000
[autogroup]
enabled = false
[features]
GENTLE_FAIR_SLEEPERS = false
START_DEBIT = false
NEXT_BUDDY = false
LAST_BUDDY = false
WAKEUP_PREEMPTION = false
HRTICK = false
DOUBLE_TICK = false
[[tasks]]
name = "t0"
count = 3
nice = 0
policy = "deadline"
start = "5088us"
dl_runtime = "200us"
dl_deadline = "5ms"
dl_period = "10ms"
program = [{ sleep = "4902us" }, { run = "647us" }, { run = "1892us" }]
[[tasks]]
name = "t1"
count = 1
nice = 0
policy = "normal"
start = "0us"
program = [{ run = "0us" }, { run = "100us" }]
"#;
    let s = Scenario::from_toml("dl_dequeue.toml", text).expect("valid");
    let (events_on, events_off) = check(&s, "dl_dequeue").unwrap_or_else(|e| panic!("{e}")).expect("ran to the end");
    assert!(events_on <= events_off);
    // The invariant checker compares each CPU's `nr_running` with the
    // tasks its classes count (deadline tasks not throttled) after every event.
    let mut sim = Simulation::new(&s);
    sim.run_to_end_checked().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sim.finished(), Some(StopReason::TimeLimit));
}
