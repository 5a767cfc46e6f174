//! Periodic jobs (`sleep_until` then work): each job's response time, from
//! its release (the period boundary slept until) to its completion (the
//! program's next `sleep_until`), and the jobs that overran.

use sim_core::metrics::history::{PrevState, RecordKind};
use sim_core::metrics::recorder::TraceWindow;
use sim_core::{RunReport, Scenario, Simulation};

const MS: u64 = 1_000_000;

/// One CPU at HZ=1000: `rt` runs `run` every `period`, optionally beside a hog.
fn scenario(kernel: &str, period: &str, run: &str, hog: bool) -> Scenario {
    let hog = if hog { "[[tasks]]\nname = \"hog\"\ncpus = \"0\"\nprogram = [{ run = \"10s\" }]\n" } else { "" };
    let text = format!(
        r#"
schema = 1
name = "periodic"
seed = 1
duration = "100ms"
[machine]
cpus = 1
hz = 1000
[kernel]
version = "{kernel}"
[report]
victim = "rt"
{hog}
[[tasks]]
name = "rt"
cpus = "0"
program = [{{ sleep_until = "{period}" }}, {{ run = "{run}" }}]
"#
    );
    Scenario::from_toml("periodic.toml", &text).unwrap_or_else(|e| panic!("{e}"))
}

fn rt(r: &RunReport) -> &sim_core::report::run::TaskReport {
    r.tasks.iter().find(|t| t.name == "rt").unwrap()
}

#[test]
fn a_periodic_task_alone_responds_in_its_run_time() {
    let r = sim_core::run(&scenario("4.4", "10ms", "3ms", false));
    let resp = rt(&r).response.expect("a periodic task has a response");
    // Released at 10, 20, ..., 90ms (the first sleep_until, at 0, releases
    // nothing); each completes 3ms later. The job released at 100ms is past the end.
    assert_eq!((resp.count, resp.min_ns, resp.max_ns, resp.p99_ns), (9, 3 * MS, 3 * MS, 3 * MS));
    assert_eq!(resp.max_at_ns, 13 * MS);
    assert_eq!(rt(&r).overruns, Some(0));
    assert_eq!(r.victim.response, rt(&r).response);
    let v: serde_json::Value = serde_json::from_str(&sim_core::report_json(&r)).unwrap();
    let t = v["tasks"].as_array().unwrap().iter().find(|t| t["name"] == "rt").unwrap();
    assert_eq!((t["response"]["count"].as_u64(), t["overruns"].as_u64()), (Some(9), Some(0)));
}

/// Each job's completion from the trace: `rt` switched out sleeping. Its
/// release: the period boundary at or before the wake-up that began it.
fn responses_from_trace(s: &Scenario, period: u64) -> Vec<u64> {
    let mut sim = Simulation::new(s);
    sim.enable_trace(TraceWindow::all(100_000)).expect("traced from the start");
    sim.run_to_end();
    let rt = sim_core::ids::TaskId(1);
    sim.trace()
        .iter()
        .filter_map(|rec| match rec.kind {
            RecordKind::Switch { prev: Some(p), prev_state: PrevState::Sleeping, .. } if p == rt => Some(rec.at.ns()),
            _ => None,
        })
        .filter(|&done| done >= period) // the first sleep_until, at 0, completes no job
        .map(|done| done - (done / period) * period)
        .collect()
}

/// With a hog on the CPU the job shares it. 4.4: the woken job preempts
/// the hog at once (sleeper credit of sched_latency/2 = 3ms, more than the
/// 1ms wakeup granularity: `check_preempt_wakeup`), then the two alternate
/// in slices of sched_latency/2 = 3ms (`sched_slice`, checked each 1ms tick):
/// rt 3, hog 3, rt 3, hog 3, rt 2 = 14ms for 8ms of work. 6.18: the hog
/// keeps the CPU to the next tick, then the two alternate per 1ms tick
/// (base_slice 0.75ms, rounded up to the tick): hog 1, then rt 8 x 1ms with
/// 7 x 1ms of hog between = 16ms.
#[test]
fn a_periodic_task_beside_a_hog_responds_later_than_its_run_time() {
    for (kernel, expect) in [("4.4", 14 * MS), ("6.18", 16 * MS)] {
        let s = scenario(kernel, "20ms", "8ms", true);
        let r = sim_core::run(&s);
        let resp = rt(&r).response.unwrap();
        // Jobs released at 20, 40, 60, 80ms.
        assert_eq!((resp.count, resp.min_ns, resp.max_ns), (4, expect, expect), "{kernel}");
        assert!(resp.max_ns > 8 * MS);
        assert_eq!(rt(&r).overruns, Some(0));
        // The same from the trace, computed independently of the recorder.
        let traced = responses_from_trace(&s, 20 * MS);
        assert_eq!(traced, vec![expect; 4], "{kernel}");
    }
}

/// 15ms of work every 10ms, alone: released at 10ms, done at 25ms (past its
/// next release at 20ms: an overrun), sleeps to 30ms; then 30-45, 50-65,
/// 70-85 (each an overrun); the job released at 90ms is not done by 100ms.
#[test]
fn jobs_longer_than_their_period_are_counted_as_overruns() {
    let r = sim_core::run(&scenario("4.4", "10ms", "15ms", false));
    let resp = rt(&r).response.unwrap();
    assert_eq!((resp.count, resp.max_ns), (4, 15 * MS));
    assert_eq!(rt(&r).overruns, Some(4));
    // 9ms every 10ms: no overrun.
    let r = sim_core::run(&scenario("4.4", "10ms", "9ms", false));
    assert_eq!(rt(&r).overruns, Some(0));
    // A task that serves, and one that only sleeps, have no overrun count.
    let hogs = sim_core::run(&scenario("4.4", "10ms", "3ms", true));
    assert_eq!(hogs.tasks.iter().find(|t| t.name == "hog").unwrap().overruns, None);
}
