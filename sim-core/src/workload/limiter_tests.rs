//! The elastic CPU limiter inside the engine: grants paced by the bucket,
//! chunked `run` steps, and the controller closing the loop on the
//! simulated scheduling delays.

use crate::engine::Simulation;
use crate::ids::TaskId;
use crate::scenario::Scenario;

fn sim(toml: &str, overrides: &[(&str, &str)]) -> Simulation {
    let s = Scenario::from_toml("limiter.toml", toml).expect("valid scenario");
    let s = s.with_overrides(overrides).expect("valid overrides");
    let mut sim = Simulation::new(&s);
    sim.run_to_end_checked().expect("invariants hold");
    sim
}

const EXHAUST: &str = r#"
schema = 1
seed = 1
duration = "10s"
[machine]
cpus = 1
[limiters.l]
watch = ["hog"]
floor = 0.5
ceiling = 0.5
grant = "100ms"
[[tasks]]
name = "hog"
limiter = "l"
program = [{ run = "2s" }]
"#;

/// One CPU, limit fixed at 0.5, 100 ms grants, a bucket that starts full:
/// the hog runs 100 ms at 0 (the initial grant), then the bucket, empty,
/// refills at 0.5 CPU-ns per ns and holds the next grant 200 ms after the
/// last one was taken: chunks at 0, 200, 400, ... 9800 ms, 50 of them,
/// exactly 5 s of CPU in 10 s (the grant due at 10 s falls at the end).
#[test]
fn a_fixed_limit_paces_a_hog_in_grant_sized_chunks() {
    let s = sim(EXHAUST, &[]);
    assert_eq!(s.task_runtime_ns(TaskId(0)), 5_000_000_000);
    let l = &s.limiters()[0];
    assert_eq!(l.grants, 50);
    assert_eq!(l.granted_ns, 5_000_000_000);
    // Each of the 49 later grants was waited for 100 ms.
    assert_eq!(l.wait_ns, 49 * 100_000_000);
    let r = s.report();
    let lr = &r.limiters[0];
    assert_eq!(lr.used_ns, 5_000_000_000);
    assert_eq!(lr.samples.len(), 99, "one sample per 100 ms adjustment before the end");
    assert!(lr.samples.iter().all(|x| x.limit_ppm == 500_000));
    // Every 200 ms window holds one 100 ms chunk: half the machine.
    let used: u64 = lr.samples[..98].iter().map(|x| x.used_ns).sum();
    assert_eq!(used, 4_900_000_000);

    // The override moves the limit; an empty `limiter` lifts it.
    let s = sim(EXHAUST, &[("limiters.l.floor", "0.25"), ("limiters.l.ceiling", "0.25")]);
    assert_eq!(s.task_runtime_ns(TaskId(0)), 2_500_000_000, "a grant every 400 ms: 25 of them");
    let s = sim(EXHAUST, &[("tasks.hog.limiter", "\"\"")]);
    assert_eq!(s.task_runtime_ns(TaskId(0)), 10_000_000_000);
    assert!(s.limiters()[0].grants == 0);
}

/// A step shorter than its grant gives the rest back (capped at one
/// grant). One CPU at 0.5, 100 ms grants, 30 ms steps and 1 ms sleeps: at
/// 30 ms the bucket holds 15 ms of refill + 70 ms returned = 85 ms; after
/// the 1 ms sleep 85.5 ms, so the next grant comes 29 ms later, at 60 ms.
/// Steps start every 60 ms: 17 of them in 1 s (the one due at 1,020 ms is
/// past the end), 510 ms of CPU, 17 × 70 ms returned.
#[test]
fn unused_grant_time_goes_back() {
    let toml = r#"
schema = 1
seed = 1
duration = "1s"
[machine]
cpus = 1
[limiters.l]
watch = ["t"]
floor = 0.5
ceiling = 0.5
[[tasks]]
name = "t"
limiter = "l"
program = [{ run = "30ms" }, { sleep = "1ms" }]
"#;
    let s = sim(toml, &[]);
    let l = &s.limiters()[0];
    assert_eq!(s.task_runtime_ns(TaskId(0)), 510_000_000);
    assert_eq!(l.grants, 17);
    assert_eq!(l.returned_ns, 17 * 70_000_000);
    assert_eq!(l.wait_ns, 16 * 29_000_000);
}

/// Two hogs share one limiter on 2 CPUs at 0.5 (1 CPU-ns per ns, a 100 ms
/// grant every 100 ms once the initial one is taken): hog/0 takes the
/// initial grant at 0, hog/1 waits for the one due at 100 ms; at 100 ms
/// hog/0 asks again and queues behind it (FIFO), and so on: the grants
/// alternate, 100 in 10 s, 5 s of CPU each.
#[test]
fn waiters_are_served_first_come_first_served() {
    let toml = r#"
schema = 1
seed = 1
duration = "10s"
[machine]
cpus = 2
[limiters.l]
watch = ["hog"]
floor = 0.5
ceiling = 0.5
[[tasks]]
name = "hog"
count = 2
limiter = "l"
program = [{ run = "1s" }]
"#;
    let s = sim(toml, &[]);
    assert_eq!(s.task_runtime_ns(TaskId(0)), 5_000_000_000);
    assert_eq!(s.task_runtime_ns(TaskId(1)), 5_000_000_000);
    let l = &s.limiters()[0];
    assert_eq!(l.grants, 100);
    assert_eq!(l.waiters.len(), 1, "one hog waits for the grant due at the end");
}
