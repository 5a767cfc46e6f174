//! Memory is bounded by the model's size, not by simulated duration.
//!
//! Metrics are streamed into histograms and the per-CPU history is a ring,
//! so nothing the engine keeps grows with the number of events. What may
//! still grow is a latency histogram's bucket array, with the *largest*
//! value it has seen (`metrics/loglinear.rs`: 1 KiB per doubling of it), and
//! a queue's capacity, with the longest backlog seen: a longer run meets
//! rarer, longer delays, so its peak can be somewhat higher, but by about
//! the same amount per decade of simulated time (logarithmically), never
//! past the range of a value. A store that grew with every event would grow
//! ten times more over the second decade than over the first; that is what
//! the test catches.
//!
//! A test binary of its own (`cargo test -p sim-tests --test memory`), with
//! one test: the counting global allocator sees every allocation in the
//! process, so nothing may run beside the measurement.

use peak_alloc::PeakAlloc;
use sim_core::{EventBudget, Simulation, StopReason};

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// Heap bytes a run of `scenarios/NAME.toml` for `duration` needs at its
/// peak, from building the simulation to its report, above what was live
/// before; and the run's event count. `leak` bytes per event are kept
/// alongside, as a per-event log would, to show that the test sees one.
fn peak_heap_bytes(name: &str, duration: &str, leak: usize) -> (usize, u64) {
    let s = sim_tests::load(name).with_overrides(&[("duration", duration)]).unwrap();
    let before = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let mut sim = Simulation::new(&s);
    let mut log: Vec<u8> = Vec::new();
    let stop = loop {
        let stop = sim.advance(EventBudget(10_000));
        log.resize(leak * sim.events() as usize, 0);
        if stop.is_final() {
            break stop;
        }
    };
    assert_eq!(stop, StopReason::TimeLimit, "{name} {duration}");
    let report = sim.report();
    let peak = HEAP.peak_usage().saturating_sub(before);
    (peak, report.events)
}

/// Runs `name` for each of `durations` (ten times longer each) and returns
/// an error if the peak heap grew over the second decade by more than twice
/// what it grew over the first, plus 64 KiB.
fn check_decades(name: &str, durations: [&str; 3], leak: usize) -> Result<(), String> {
    let runs = durations.map(|d| peak_heap_bytes(name, d, leak));
    for (d, (peak, events)) in durations.iter().zip(&runs) {
        let leak = if leak > 0 { format!(" (+{leak} B/event kept on purpose)") } else { String::new() };
        println!("{name:<15} {d:>6} simulated: {events:>9} events, peak heap {peak:>9} bytes{leak}");
    }
    let [(p1, e1), (p2, e2), (p3, e3)] = runs;
    assert!(e2 > 8 * e1 && e3 > 8 * e2, "{name}: each run has about ten times the events of the one before");
    let (d1, d2) = (p2.saturating_sub(p1), p3.saturating_sub(p2));
    if d2 > 2 * d1 + 64 * 1024 {
        return Err(format!("{name}: +{d1} bytes over the first decade, +{d2} over the second"));
    }
    Ok(())
}

/// Each scenario for T, 10·T and 100·T. jmx.toml's histograms grow by +23%
/// of its 0.1 s peak over the first decade and by +29% over the second (2.0,
/// 2.5, 3.1 MB for 42 k, 0.43 M and 4.3 M events); keeping one byte per
/// event fails the check, and so does anything above one byte per 8 events.
#[test]
fn peak_heap_grows_no_faster_than_the_histograms_tails() {
    let jmx = ["100ms", "1s", "10s"];
    let cases = [
        ("jmx", jmx),
        ("desktop-build", ["2s", "20s", "200s"]),
        ("two-hogs", ["2s", "20s", "200s"]),
        ("mixed-rw", ["1s", "10s", "100s"]),
        ("cfq-starvation", ["2s", "20s", "200s"]),
    ];
    let failures: Vec<String> = cases.iter().filter_map(|&(name, d)| check_decades(name, d, 0).err()).collect();
    assert!(failures.is_empty(), "peak heap grows with simulated time: {failures:#?}");
    assert!(check_decades("jmx", jmx, 1).is_err(), "a one-byte-per-event log must be caught");
}
