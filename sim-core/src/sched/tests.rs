//! CFS rules pinned against timelines derived by hand from Linux 4.4 fair.c.
//!
//! Each test is a scenario small enough to follow on paper. Comments give the
//! derivation; asserts check the switch times and delays it predicts.

use crate::engine::Simulation;
use crate::ids::{CfsRqId, EntityId, TaskId};
use crate::metrics::history::RecordKind;
use crate::report::timeline;
use crate::scenario::Scenario;
use crate::sched::SchedClass;
use crate::sched::cfs_rq::INITIAL_MIN_VRUNTIME;
use crate::sched::entity::SchedEntity;
use crate::sched::fair::Cfs;
use crate::sched::group::GroupLoad;
use crate::sched::tunables::{CfsTunables, TunableScaling, TunableValue};
use crate::sched::weights::LoadWeight;
use crate::sched::policy::Policy;
use expect_test::expect;

const MS: u64 = 1_000_000;

pub(super) fn traced(toml: &str) -> Simulation {
    let scenario = Scenario::from_toml("test.toml", toml).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&scenario);
    sim.enable_trace(crate::metrics::recorder::TraceWindow::all(100_000)).expect("traced from the start");
    sim.run_to_end();
    sim
}

/// `(time, comm switched in)` for every switch on CPU 0.
pub(super) fn switch_ins(sim: &Simulation) -> Vec<(u64, String)> {
    switch_ins_where(sim, |_| true)
}

/// `(time, comm)` of every switch-in on `cpu`.
pub(super) fn switch_ins_on(sim: &Simulation, cpu: u16) -> Vec<(u64, String)> {
    switch_ins_where(sim, |r| r.cpu == crate::ids::CpuId(cpu))
}

fn switch_ins_where(sim: &Simulation, keep: impl Fn(&crate::metrics::history::SchedRecord) -> bool) -> Vec<(u64, String)> {
    sim.trace()
        .iter()
        .filter(|r| keep(r))
        .filter_map(|r| match r.kind {
            RecordKind::Switch { next, .. } => {
                Some((r.at.ns(), next.map_or("<idle>".to_string(), |t| sim.task_comm(t).to_string())))
            }
            _ => None,
        })
        .collect()
}

/// When `comm` was next switched in at or after `t`.
fn switch_in_after(sim: &Simulation, comm: &str, t: u64) -> u64 {
    switch_ins(sim).into_iter().find(|(at, c)| *at >= t && c == comm).map(|(at, _)| at).expect("switched in")
}

fn two_hogs(hz: u32, extra: &str) -> String {
    format!(
        r#"
        schema = 1
        seed = 1
        duration = "20ms"
        [kernel]
        version = "4.4"
        [machine]
        cpus = 1
        hz = {hz}
        {extra}
        [[tasks]]
        name = "a"
        program = [{{ run = "1s" }}]
        [[tasks]]
        name = "b"
        program = [{{ run = "1s" }}]
        "#
    )
}

/// Two equal hogs on one CPU (factor 1: sched_latency 6 ms). `b` is forked
/// second with START_DEBIT: its vslice counts two tasks (3 ms) against `a`'s
/// one (6 ms), so it starts 3 ms of vruntime *behind* `a` and preempts it at
/// once (3 ms > wakeup_granularity 1 ms). From then on each runs until the
/// tick that finds it past its ideal slice: sched_slice = 6 ms · 1024/2048,
/// which `__calc_delta` truncates to 2999998 ns.
#[test]
fn two_equal_hogs_alternate_in_half_latency_slices_rounded_to_the_tick() {
    // HZ=1000: the 3 ms tick is the first past 2.999998 ms.
    let sim = traced(&two_hogs(1000, ""));
    let got = switch_ins(&sim);
    let want: Vec<(u64, String)> = [(0, "a"), (0, "b"), (3, "a"), (6, "b"), (9, "a"), (12, "b"), (15, "a"), (18, "b")]
        .iter()
        .map(|&(t, c)| (t * MS, c.to_string()))
        .collect();
    assert_eq!(got, want);

    // HZ=250: the overrun is noticed at the 4 ms tick, so slices are 4 ms.
    let sim = traced(&two_hogs(250, ""));
    let times: Vec<u64> = switch_ins(&sim).iter().map(|s| s.0 / MS).collect();
    assert_eq!(times, vec![0, 0, 4, 8, 12, 16]);

    // sched_latency 5 ms: slice 2.5 ms, noticed at the 3 ms tick (HZ=1000).
    let sim = traced(&two_hogs(1000, "[cfs]\nsched_latency_ns = \"5ms\""));
    let times: Vec<u64> = switch_ins(&sim).iter().map(|s| s.0 / MS).collect();
    assert_eq!(times, vec![0, 0, 3, 6, 9, 12, 15, 18]);
}

#[test]
fn timeline_of_two_hogs_is_pinned() {
    let sim = traced(&two_hogs(250, ""));
    let text = timeline::render(&sim.view(), &sim.trace()[..6]);
    // a: min_v + vslice(1 task) = -1048576 + 5999998; b: -1048576 + 2999998.
    expect![[r#"
        0.000000000 cpu0   wakeup a                               v=4951422                          min_v=-1048576
        0.000000000 cpu0   switch <idle>          -> a            v=-            next_v=4951422      min_v=-1048576
        0.000000000 cpu0   wakeup b                  preempts     v=1951422                          min_v=-1048576
        0.000000000 cpu0   switch a            R+ -> b            v=4951422      next_v=1951422      min_v=-1048576
        0.004000000 cpu0   switch b            R+ -> a            v=5951422      next_v=4951422      min_v=4951422
        0.008000000 cpu0   switch a            R+ -> b            v=8951422      next_v=5951422      min_v=5951422
    "#]]
    .assert_eq(&text);
}

/// HRTICK ends slices on a timer instead of at a tick: `hrtick_start_fair`
/// arms it for slice − ran after each pick. At 2999998 ns `b` has run its
/// slice, but its vruntime (1951422 + 2999998) is still 2 ns left of `a`'s
/// (4951422, from the truncating `__calc_delta`), so the pick returns `b`
/// again without a switch; slice − ran is now 0 and `hrtick_start` rounds the
/// timer up to its 10 µs minimum. After that each slice is exactly 2999998 ns.
#[test]
fn hrtick_preempts_at_the_slice_end_not_at_the_tick() {
    let sim = traced(&two_hogs(250, "[features]\nHRTICK = true"));
    let times: Vec<u64> = switch_ins(&sim).iter().map(|s| s.0).collect();
    assert_eq!(&times[..5], &[0, 0, 3_009_998, 6_009_996, 9_009_994]);
}

/// nice 0 vs nice 5: weights 1024 and 335, so shares 75.35% / 24.65%.
#[test]
fn nice_zero_and_nice_five_split_the_cpu_by_weight() {
    let toml = two_hogs(1000, "").replace("duration = \"20ms\"", "duration = \"10s\"").replacen(
        "name = \"b\"",
        "name = \"b\"\n        nice = 5",
        1,
    );
    let sim = traced(&toml);
    let a = sim.task_runtime_ns(TaskId(0)) as f64;
    let b = sim.task_runtime_ns(TaskId(1)) as f64;
    let share = a / (a + b);
    let want = 1024.0 / (1024.0 + 335.0);
    assert!((share - want).abs() < 0.01, "share {share:.4} vs {want:.4}");
}

/// A hog and a sleeper on one CPU, HZ=1000, sched_latency 6 ms. The sleeper
/// sleeps until 13.5 ms while the hog runs. At 13.5 ms `place_entity` puts it
/// at min_vruntime − 3 ms (GENTLE_FAIR_SLEEPERS: half a latency; its own
/// vruntime is far lower after the long sleep), and min_vruntime is the hog's
/// vruntime, so the gap is exactly 3 ms. `wakeup_preempt_entity` preempts iff
/// 3 ms > gran · 1024 / weight(sleeper); otherwise the sleeper waits for the
/// 14 ms tick, where the hog is long past its slice. Returns that wakeup's delay.
fn sleeper(gran: &str, sleeper_nice: i32, gentle: bool) -> u64 {
    let toml = format!(
        r#"
        schema = 1
        seed = 1
        duration = "20ms"
        [kernel]
        version = "4.4"
        [machine]
        cpus = 1
        hz = 1000
        [cfs]
        sched_wakeup_granularity_ns = "{gran}"
        [features]
        GENTLE_FAIR_SLEEPERS = {gentle}
        [[tasks]]
        name = "hog"
        program = [{{ run = "1s" }}]
        [[tasks]]
        name = "sleeper"
        nice = {sleeper_nice}
        iterations = 1
        program = [{{ sleep_until = "13500us" }}, {{ run = "100us" }}]
        "#
    );
    let sim = traced(&toml);
    switch_in_after(&sim, "sleeper", 13_500_000) - 13_500_000
}

#[test]
fn a_sleeper_preempts_only_past_the_scaled_wakeup_granularity() {
    // Gap 3 ms > 2.999 ms: preempts at the wakeup.
    assert_eq!(sleeper("2.999ms", 0, true), 0);
    // Gap 3 ms is not > 3 ms: waits for the 14 ms tick, where the hog (which
    // ran far past its 3 ms slice) is preempted.
    assert_eq!(sleeper("3ms", 0, true), 500_000);
    // The granularity is scaled by the *woken* entity's weight: for nice 5
    // (335), 1 ms becomes 1 ms · 1024/335 = 3.057 ms > 3 ms: no preemption...
    assert_eq!(sleeper("1ms", 5, true), 500_000);
    // ...while the same granularity lets a nice-0 sleeper preempt.
    assert_eq!(sleeper("1ms", 0, true), 0);
    // Without GENTLE_FAIR_SLEEPERS the credit is a full latency (6 ms): a 4 ms
    // granularity blocks the preemption only with the gentle half credit.
    assert_eq!(sleeper("4ms", 0, false), 0);
    assert_eq!(sleeper("4ms", 0, true), 500_000);
}

/// The second condition of `check_preempt_tick`: curr ran at least
/// min_granularity (0.75 ms) and is more than its ideal slice (3 ms) of
/// vruntime ahead of the leftmost entity, although it has not used its slice.
/// With a 10 ms wakeup granularity nothing preempts on wakeup. The hog (forked
/// at m0 + 6 ms) runs first; the sleeper is forked at m0 + 3 ms. The rule fires
/// a first time at the 1 ms tick: the hog ran 1 ms ≥ 0.75 ms and is 4 ms > 3 ms
/// ahead, so the sleeper runs at 1 ms and goes to sleep until 10.5 ms. The hog blocks for 1 ns at
/// 10.3 ms, so it is picked afresh at 10.300001 ms with vruntime m0 + 16.3 ms.
/// At 10.5 ms the sleeper is placed 3 ms behind it. At the 11 ms tick the hog
/// ran 0.7 ms (< min_granularity); at 12 ms it ran 1.7 ms < 3 ms (the first
/// condition is false) but the gap is 3 + 1.5 = 4.5 ms > 3 ms: preempted at
/// 12 ms. Under the first condition alone the sleeper would wait until 14 ms.
#[test]
fn tick_preempts_a_task_far_ahead_in_vruntime_before_its_slice_ends() {
    let toml = r#"
        schema = 1
        seed = 1
        duration = "20ms"
        [kernel]
        version = "4.4"
        [machine]
        cpus = 1
        hz = 1000
        [cfs]
        sched_wakeup_granularity_ns = "10ms"
        [[tasks]]
        name = "hog"
        program = [{ run = "10300us" }, { sleep = "1ns" }, { run = "1s" }]
        [[tasks]]
        name = "sleeper"
        iterations = 1
        program = [{ sleep_until = "10500us" }, { run = "100us" }]
    "#;
    let sim = traced(toml);
    assert_eq!(switch_in_after(&sim, "sleeper", 1), 1_000_000);
    assert_eq!(switch_in_after(&sim, "sleeper", 10_500_000), 12_000_000);
}

/// A SCHED_IDLE task (weight 3) is preempted by any waking normal task, and
/// against a normal hog it gets about 3/1027 of the CPU.
#[test]
fn sched_idle_yields_to_normal_tasks() {
    let toml = two_hogs(1000, "").replace("duration = \"20ms\"", "duration = \"10s\"").replacen(
        "name = \"b\"",
        "name = \"b\"\n        policy = \"idle\"",
        1,
    );
    let sim = traced(&toml);
    let b = sim.task_runtime_ns(TaskId(1)) as f64 / 10e9;
    assert!(b > 0.0 && b < 0.01, "idle share {b}");
}

/// A context switch costs the incoming task `context_switch` of CPU time
/// before its step makes progress: a 1 ms burst on an idle CPU with a 50 µs
/// switch ends at 1.05 ms, and the CPU is busy that long.
#[test]
fn context_switch_cost_delays_progress_and_is_charged() {
    let toml = r#"
        schema = 1
        seed = 1
        duration = "5ms"
        [kernel]
        version = "4.4"
        [machine]
        cpus = 1
        hz = 1000
        context_switch = "50us"
        [[tasks]]
        name = "t"
        iterations = 1
        program = [{ run = "1ms" }]
    "#;
    let sim = traced(toml);
    let exit = sim.trace().iter().find_map(|r| match r.kind {
        RecordKind::Switch { next: None, .. } => Some(r.at.ns()),
        _ => None,
    });
    assert_eq!(exit, Some(1_050_000));
    assert_eq!(sim.task_runtime_ns(TaskId(0)), 1_050_000);
}

/// `sleep_until` wakes on multiples of the period (plus the offset), and
/// requests are timed from arrival to the end of their burst.
#[test]
fn periodic_wakeups_and_request_response_times() {
    let toml = r#"
        schema = 1
        seed = 1
        duration = "50ms"
        [kernel]
        version = "4.4"
        [machine]
        cpus = 1
        hz = 1000
        [[tasks]]
        name = "tick"
        program = [{ sleep_until = "10ms", offset = "1ms" }, { run = "200us" }]
        [[tasks]]
        name = "srv"
        program = ["serve"]
        [[sources]]
        name = "req"
        target = "srv"
        interval = "7ms"
        start = "500us"
        work = "300us"
    "#;
    let sim = traced(toml);
    let wakes: Vec<u64> = sim
        .trace()
        .iter()
        .filter_map(|r| match r.kind {
            RecordKind::Wakeup { task: TaskId(0), .. } => Some(r.at.ns()),
            _ => None,
        })
        .collect();
    assert_eq!(wakes, [0, 1, 11, 21, 31, 41].iter().map(|m| m * MS).collect::<Vec<_>>());
    let r = sim.report();
    let resp = r.tasks[1].response.expect("srv serves");
    // Arrivals at 7.5, 14.5, ..., 49.5 ms: 7 of them; none collides with the
    // 200 us runs at 1, 11, 21, 31, 41 ms, so each takes exactly its 300 us.
    assert_eq!((resp.count, resp.max_ns, resp.avg_ns), (7, 300_000, 300_000));
}

fn cfs_with(vruntimes: &[i64], tunables: CfsTunables) -> (Cfs, CfsRqId) {
    let mut cfs = Cfs::new(crate::sched::fair::FairConfig::of(crate::sched::model::KernelModel::Linux44, tunables), GroupLoad::Pelt, 1);
    let q = CfsRqId(0);
    for &v in vruntimes {
        let id = EntityId(cfs.entities.len() as u32);
        cfs.entities.push(SchedEntity::new(LoadWeight::for_task(Policy::Normal, 0), q, Policy::Normal));
        // Enqueue as a fork (relative vruntime 0), then move it to `v`: place the
        // entity by hand by dequeuing, setting, and re-enqueuing.
        cfs.cfs44().enqueue_entity(q, id, 0);
        cfs.cfs44().dequeue_entity(q, id, 0);
        cfs.entities[id.index()].vruntime = v - cfs.cfs_rqs[0].min_vruntime;
        cfs.cfs44().enqueue_entity(q, id, 0);
    }
    (cfs, q)
}

fn defaults(ncpus: u16) -> CfsTunables {
    let d = TunableValue::Default;
    CfsTunables::resolve(ncpus, TunableScaling::Log, d, d, d)
}

/// `pick_next_entity`: the leftmost runs unless a buddy may run without
/// being more than a wakeup granularity (1 ms) of vruntime unfair; `next`
/// beats `last`, which beats avoiding the `skip` buddy.
#[test]
fn buddies_are_honoured_within_the_wakeup_granularity() {
    let (mut cfs, q) = cfs_with(&[10 * MS as i64, 10_500_000, 12 * MS as i64], defaults(1));
    let (e0, e1, e2) = (EntityId(0), EntityId(1), EntityId(2));
    assert_eq!(cfs.cfs44().pick_next_entity(q, None), e0);
    cfs.cfs_rqs[0].last = Some(e1); // 0.5 ms right of the leftmost: fair enough
    assert_eq!(cfs.cfs44().pick_next_entity(q, None), e1);
    assert_eq!(cfs.cfs_rqs[0].last, None, "the picked buddy is cleared");
    cfs.cfs_rqs[0].last = Some(e2); // 2 ms right: too unfair
    assert_eq!(cfs.cfs44().pick_next_entity(q, None), e0);
    cfs.cfs_rqs[0].last = Some(e1);
    cfs.cfs_rqs[0].next = Some(e1);
    cfs.cfs_rqs[0].skip = Some(e0);
    assert_eq!(cfs.cfs44().pick_next_entity(q, None), e1);
    cfs.cfs_rqs[0].skip = Some(e0);
    assert_eq!(cfs.cfs44().pick_next_entity(q, None), e1, "skip the leftmost: the second is within 1 ms");
}

/// `sched_slice` past `sched_nr_latency`: the period stretches to
/// nr × min_granularity, so 10 nice-0 tasks on 1 CPU get 0.75 ms each.
#[test]
fn slices_stretch_past_nr_latency() {
    let (mut cfs, q) = cfs_with(&[0; 10], defaults(1));
    assert_eq!(cfs.cfs44().sched_period(10), 7_500_000);
    let s = cfs.cfs44().sched_slice(q, EntityId(0));
    assert!((749_990..=750_000).contains(&s), "{s}");
    let (mut cfs, q) = cfs_with(&[0; 4], defaults(32));
    let s = cfs.cfs44().sched_slice(q, EntityId(0));
    assert!((5_999_990..=6_000_000).contains(&s), "24 ms / 4 = 6 ms, got {s}");
}

/// `update_min_vruntime` never moves backwards when an entity far behind is
/// enqueued, and moves forwards to the leftmost entity when it can.
#[test]
fn min_vruntime_is_monotonic() {
    let (mut cfs, q) = cfs_with(&[5 * MS as i64], defaults(1));
    let before = cfs.rq(q).min_vruntime;
    assert!(before >= INITIAL_MIN_VRUNTIME);
    let id = EntityId(1);
    cfs.entities.push(SchedEntity::new(LoadWeight::for_task(Policy::Normal, 0), q, Policy::Normal));
    cfs.entities[1].vruntime = -(50 * MS as i64) - before; // relative: far behind
    cfs.cfs44().enqueue_entity(q, id, 0);
    cfs.cfs44().update_min_vruntime(q);
    assert_eq!(cfs.rq(q).min_vruntime, before, "not pulled back by an entity behind it");
    cfs.cfs44().dequeue_entity(q, id, crate::sched::fair::DEQUEUE_SLEEP);
    assert_eq!(cfs.rq(q).min_vruntime, 5 * MS as i64, "advances to the leftmost");
    cfs.cfs44().dequeue_entity(q, EntityId(0), crate::sched::fair::DEQUEUE_SLEEP);
    assert_eq!(cfs.rq(q).min_vruntime, 5 * MS as i64, "an empty queue keeps its min_vruntime");
}

/// `place_entity` for a fork with START_DEBIT starts one vslice after
/// min_vruntime; without it, at min_vruntime.
#[test]
fn start_debit_places_forked_tasks_one_vslice_late() {
    for (debit, want) in [(true, 2_999_998), (false, 0)] {
        let (mut cfs, q) = cfs_with(&[0], defaults(1));
        cfs.features.start_debit = debit;
        let id = EntityId(1);
        cfs.entities.push(SchedEntity::new(LoadWeight::for_task(Policy::Normal, 0), q, Policy::Normal));
        cfs.task_fork(q, id);
        assert_eq!(cfs.se(id).vruntime, want, "relative vruntime with START_DEBIT={debit}");
    }
}

/// A task that blocks and is woken again before its CPU reschedules (another
/// CPU runs the waker in the same instant) must stay the running task, as
/// `ttwu_remote` keeps a task that has not been switched out yet.
#[test]
fn a_wakeup_that_races_with_blocking_keeps_the_task_running() {
    let toml = r#"
        schema = 1
        seed = 1
        duration = "10ms"
        [kernel]
        version = "4.4"
        [machine]
        cpus = 2
        hz = 1000
        [[tasks]]
        name = "a"
        cpus = "0"
        program = [{ run = "1ms" }, { wake = "b" }, "wait"]
        [[tasks]]
        name = "b"
        cpus = "1"
        program = ["wait", { wake = "a" }, { run = "100us" }]
    "#;
    let scenario = Scenario::from_toml("race.toml", toml).unwrap();
    let mut sim = Simulation::new(&scenario);
    sim.run_to_end_checked().unwrap();
    // a never really sleeps: each wait is answered at once by b's wake.
    let r = sim.report();
    assert_eq!(r.tasks[0].runtime_ns, 10 * MS, "a keeps its CPU for the whole run");
}

/// With HRTICK, a task re-picked after using its slice (here `a`, still
/// leftmost when `b` forks one vslice behind it) must not be rescheduled over
/// and over at one instant: `__schedule` clears need_resched after the pick,
/// dropping the resched `hrtick_start_fair` raises, and the next tick decides.
#[test]
fn hrtick_repick_of_an_expired_slice_does_not_stall_time() {
    let toml = two_hogs(1000, "[features]\nHRTICK = true\n[limits]\nevents_max = 100000")
        .replace("duration = \"20ms\"", "duration = \"40ms\"")
        .replacen("name = \"b\"", "name = \"b\"\n        start = \"20ms\"", 1);
    let sim = traced(&toml);
    assert_eq!(sim.finished(), Some(crate::StopReason::TimeLimit));
    assert!(sim.events() < 1_000, "{} events for 40 ms", sim.events());
    assert!(sim.task_runtime_ns(TaskId(1)) > 5 * MS, "b gets the CPU");
}

/// Programs that loop without taking time (here two tasks waking each other
/// and waiting, after the first millisecond) stop the run as stalled instead
/// of spinning through the event budget; a program whose only timed steps
/// are always zero is refused up front.
#[test]
fn zero_time_loops_stop_as_stalled() {
    let toml = r#"
        schema = 1
        seed = 1
        duration = "10ms"
        [kernel]
        version = "4.4"
        [machine]
        cpus = 1
        [[tasks]]
        name = "spin"
        start = "1ms"
        program = [{ wake = "peer" }, "wait"]
        [[tasks]]
        name = "peer"
        program = [{ wake = "spin" }, "wait"]
    "#;
    let scenario = Scenario::from_toml("loop.toml", toml).unwrap();
    let mut sim = Simulation::new(&scenario);
    assert_eq!(sim.run_to_end(), crate::StopReason::Stalled);
    assert!(sim.now().ns() < 10 * MS);
    let bad = toml.to_string();
    let bad = bad.replace(r#"[{ wake = "spin" }, "wait"]"#, r#"[{ wake = "spin" }, { sleep = "0us" }]"#);
    let err = Scenario::from_toml("loop.toml", &bad).unwrap_err().to_string();
    assert!(err.contains("tasks.peer.program") && err.contains("takes time"), "{err}");
}
