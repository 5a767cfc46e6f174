//! The RT class pinned against timelines derived by hand from rt.c (4.4.155,
//! 6.6.9, 6.12.0, 6.18.2; docs/kernel/rt-class.md). Each comment gives the
//! rule and the arithmetic; the asserts check the switch times it predicts.

use super::tests::{switch_ins, switch_ins_on, traced};
use crate::engine::Simulation;
use crate::ids::TaskId;

const MS: u64 = 1_000_000;

fn scenario(version: &str, cpus: u16, duration: &str, extra: &str, tasks: &str) -> String {
    format!(
        "schema = 1\nseed = 1\nduration = \"{duration}\"\n[kernel]\nversion = \"{version}\"\n\
         [machine]\ncpus = {cpus}\nhz = 250\n{extra}\n{tasks}"
    )
}

fn first_in(sim: &Simulation, comm: &str, from: u64) -> u64 {
    switch_ins(sim).into_iter().find(|(at, c)| *at >= from && c == comm).map(|(at, _)| at).expect("switched in")
}

/// A FIFO task waking on a CPU that runs a fair hog preempts it at once
/// (core.c `wakeup_preempt`: `sched_class_above(rt, fair)` → `resched_curr`),
/// in every version; the hog resumes when the FIFO task sleeps.
#[test]
fn fifo_preempts_a_fair_task_at_once() {
    for v in ["4.4", "6.6", "6.12", "6.18"] {
        let sim = traced(&scenario(
            v,
            1,
            "30ms",
            "",
            "[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n\
             [[tasks]]\nname = \"rt\"\npolicy = \"fifo\"\nrt_priority = 50\nstart = \"5ms\"\n\
             program = [{ run = \"2ms\" }, { sleep = \"10ms\" }]\n",
        ));
        assert_eq!(first_in(&sim, "rt", 0), 5 * MS, "{v}: rt in at its wake-up");
        assert_eq!(first_in(&sim, "hog", 5 * MS), 7 * MS, "{v}: hog back when rt sleeps");
        assert_eq!(first_in(&sim, "rt", 7 * MS), 17 * MS, "{v}: every wake-up preempts at once");
    }
}

/// Equal priority never preempts (`wakeup_preempt_rt`: `p->prio <
/// curr->prio` only, and on one CPU `check_preempt_equal_prio` finds no
/// other CPU): `b` waits until `a` blocks at 20 ms. A higher priority `c`
/// preempts `b` at once at 25 ms; `b` stays at the head of its list (a
/// preempted RT task is not requeued) and resumes at 26 ms.
#[test]
fn equal_priority_fifo_does_not_preempt_but_a_higher_one_does() {
    let sim = traced(&scenario(
        "6.18",
        1,
        "40ms",
        "",
        "[[tasks]]\nname = \"a\"\npolicy = \"fifo\"\nrt_priority = 50\n\
         program = [{ run = \"20ms\" }, { sleep = \"1s\" }]\n\
         [[tasks]]\nname = \"b\"\npolicy = \"fifo\"\nrt_priority = 50\nstart = \"5ms\"\n\
         program = [{ run = \"10ms\" }, { sleep = \"1s\" }]\n\
         [[tasks]]\nname = \"c\"\npolicy = \"fifo\"\nrt_priority = 60\nstart = \"25ms\"\n\
         program = [{ run = \"1ms\" }, { sleep = \"1s\" }]\n",
    ));
    assert_eq!(first_in(&sim, "b", 0), 20 * MS, "b waits for a to block");
    assert_eq!(first_in(&sim, "c", 0), 25 * MS, "c preempts b at once");
    assert_eq!(first_in(&sim, "b", 21 * MS), 26 * MS, "b resumes when c sleeps");
}

/// SCHED_RR with HZ=250: `sched_rr_timeslice` = 100·HZ/1000 = 25 ticks,
/// decremented at each tick the task receives (`task_tick_rt`). `a` runs
/// from 0; its 25th tick is at 100 ms: a fresh slice and the tail of its
/// list, so `b` runs; `b`'s 25th tick is at 200 ms; and so on. A fair task
/// beside them never runs.
#[test]
fn rr_rotates_at_its_timeslice_in_ticks() {
    for v in ["4.4", "6.18"] {
        let sim = traced(&scenario(
            v,
            1,
            "450ms",
            "",
            "[[tasks]]\nname = \"a\"\npolicy = \"rr\"\nrt_priority = 10\nprogram = [{ run = \"10s\" }]\n\
             [[tasks]]\nname = \"b\"\npolicy = \"rr\"\nrt_priority = 10\nprogram = [{ run = \"10s\" }]\n\
             [[tasks]]\nname = \"fair\"\nprogram = [{ run = \"10s\" }]\n",
        ));
        let ins: Vec<(u64, String)> = switch_ins(&sim).into_iter().filter(|(at, _)| *at > 0).collect();
        let want: Vec<(u64, String)> =
            [(100, "b"), (200, "a"), (300, "b"), (400, "a")].iter().map(|&(t, c)| (t * MS, c.to_string())).collect();
        assert_eq!(ins, want, "{v}");
        assert_eq!(sim.task_runtime_ns(TaskId(2)), 0, "{v}: the fair task never runs");
    }
    // sched_rr_timeslice_ms = 10 → msecs_to_jiffies(10) = 3 ticks at HZ=250 (rounded up): 12 ms.
    let sim = traced(&scenario(
        "6.18",
        1,
        "40ms",
        "[rt]\nsched_rr_timeslice_ms = 10\n",
        "[[tasks]]\nname = \"a\"\npolicy = \"rr\"\nrt_priority = 10\nprogram = [{ run = \"10s\" }]\n\
         [[tasks]]\nname = \"b\"\npolicy = \"rr\"\nrt_priority = 10\nprogram = [{ run = \"10s\" }]\n",
    ));
    let times: Vec<u64> = switch_ins(&sim).into_iter().map(|(at, _)| at / MS).filter(|&t| t > 0).collect();
    assert_eq!(times, [12, 24, 36]);
}

/// RT throttling on 4.4 and 6.6, one CPU: `rt_time` grows by 4 ms at each
/// tick (`update_curr_rt`); the tick at 952 ms finds 952 > 950 ms
/// (`sched_rt_runtime_exceeded`) and throttles: the fair hog runs from
/// 952 ms. The period timer (4.4: first expiry at the next multiple of 1 s
/// after the first RT enqueue at 0; 6.6: one period after it) fires at
/// 1 s: `rt_time` = 952 − 950 = 2 ms < 950 → unthrottled, and the RT hog
/// runs again. Next period: 2 + (t − 1000) > 950 first at the tick at 1952 ms.
#[test]
fn an_rt_hog_is_throttled_at_950_ms_of_each_second_on_4_4_and_6_6() {
    for v in ["4.4", "6.6"] {
        let sim = traced(&scenario(
            v,
            1,
            "2100ms",
            "",
            "[[tasks]]\nname = \"fair\"\nprogram = [{ run = \"100s\" }]\n\
             [[tasks]]\nname = \"rt\"\npolicy = \"fifo\"\nrt_priority = 1\nprogram = [{ run = \"100s\" }]\n",
        ));
        let ins: Vec<(u64, String)> = switch_ins(&sim).into_iter().filter(|(at, _)| *at > 0).collect();
        let want: Vec<(u64, String)> = [(952, "fair"), (1000, "rt"), (1952, "fair"), (2000, "rt")]
            .iter()
            .map(|&(t, c)| (t * MS, c.to_string()))
            .collect();
        assert_eq!(ins, want, "{v}");
        let fair = sim.task_runtime_ns(TaskId(0));
        assert_eq!(fair, 96 * MS, "{v}: 48 ms in each of the two periods");
    }
}

/// 4.4's RT_RUNTIME_SHARE (features.h:68): with two CPUs the hog's CPU
/// borrows from the other (`do_balance_runtime`: (950 − 0)/2 capped to the
/// 50 ms missing) until its runtime is the whole period, and is never
/// throttled: the fair task pinned beside it never runs. 6.6 (off) throttles
/// it as on one CPU. 6.12+ (no RT_GROUP_SCHED) does not throttle at all;
/// with `rt.rt_group_sched` the root group throttles as 6.6.
#[test]
fn runtime_sharing_lets_a_lone_4_4_hog_run_on_and_6_12_needs_group_sched_to_throttle() {
    let tasks = "[[tasks]]\nname = \"fair\"\ncpus = \"0\"\nprogram = [{ run = \"100s\" }]\n\
                 [[tasks]]\nname = \"rt\"\ncpus = \"0\"\npolicy = \"fifo\"\nrt_priority = 1\n\
                 program = [{ run = \"100s\" }]\n";
    let fair_time = |v: &str, extra: &str| {
        let sim = traced(&scenario(v, 2, "3s", extra, tasks));
        sim.task_runtime_ns(TaskId(0))
    };
    assert_eq!(fair_time("4.4", ""), 0, "4.4 borrows to a full period");
    assert!((140 * MS..=150 * MS).contains(&fair_time("6.6", "")), "6.6: ~48 ms per second");
    assert!(fair_time("6.12", "[fair_server]\nruntime = 0\n") == 0, "6.12 without the server: starved");
    let grouped = fair_time("6.18", "[rt]\nrt_group_sched = true\n[fair_server]\nruntime = 0\n");
    assert!((140 * MS..=150 * MS).contains(&grouped), "6.18 + RT_GROUP_SCHED: {grouped}");
}

/// `select_task_rq_rt`: `b` (FIFO 50, allowed on both CPUs) wakes on CPU 0
/// where `a` runs at the same priority, so `find_lowest_rq` sends it to CPU
/// 1, where only a fair hog runs (cpupri NORMAL), which it preempts at once.
#[test]
fn a_woken_rt_task_goes_to_the_lowest_priority_cpu() {
    let sim = traced(&scenario(
        "6.18",
        2,
        "30ms",
        "",
        "[[tasks]]\nname = \"a\"\ncpus = \"0\"\npolicy = \"fifo\"\nrt_priority = 50\nprogram = [{ run = \"1s\" }]\n\
         [[tasks]]\nname = \"hog\"\ncpus = \"1\"\nprogram = [{ run = \"1s\" }]\n\
         [[tasks]]\nname = \"b\"\npolicy = \"fifo\"\nrt_priority = 50\nstart = \"5ms\"\n\
         program = [{ run = \"2ms\" }, { sleep = \"1s\" }]\n",
    ));
    let on1 = switch_ins_on(&sim, 1);
    assert!(on1.contains(&(5 * MS, "b".to_string())), "{on1:?}");
    assert!(on1.contains(&(7 * MS, "hog".to_string())), "{on1:?}");
}

/// The pull: `b` (FIFO 40) wakes at 5 ms where `a` (FIFO 50, pinned to CPU
/// 0) runs; CPU 1 runs `c` (FIFO 60), so no CPU has a lower priority than
/// `b` and it queues behind `a`. At 20 ms `c` sleeps: CPU 1's RT priority
/// drops, it pulls (RT_PUSH_IPI: CPU 0, overloaded, pushes `b` to
/// `find_lowest_rq`'s CPU 1), and `b` runs there at 20 ms.
#[test]
fn a_cpu_lowering_its_priority_pulls_a_waiting_rt_task() {
    for v in ["4.4", "6.18"] {
        let sim = traced(&scenario(
            v,
            2,
            "40ms",
            "",
            "[[tasks]]\nname = \"a\"\ncpus = \"0\"\npolicy = \"fifo\"\nrt_priority = 50\nprogram = [{ run = \"1s\" }]\n\
             [[tasks]]\nname = \"c\"\ncpus = \"1\"\npolicy = \"fifo\"\nrt_priority = 60\n\
             program = [{ run = \"20ms\" }, { sleep = \"1s\" }]\n\
             [[tasks]]\nname = \"b\"\npolicy = \"fifo\"\nrt_priority = 40\nstart = \"5ms\"\n\
             program = [{ run = \"2ms\" }, { sleep = \"1s\" }]\n",
        ));
        let on1 = switch_ins_on(&sim, 1);
        assert!(on1.contains(&(20 * MS, "b".to_string())), "{v}: {on1:?}");
        assert!(!switch_ins_on(&sim, 0).iter().any(|(_, c)| c == "b"), "{v}: b never ran on CPU 0");
    }
}

/// The 6.12+ fair server (deadline.c `dl_server`, defer mode, 50 ms every
/// 1 s), against a FIFO hog on one CPU. The fair hog is queued at 0
/// (`dl_server_start`: a new period, deadline 1 s, runtime 50 ms, throttled
/// and armed for zero laxity, 1 s − 50 ms = 950 ms); the FIFO hog preempts
/// it at once. At 950 ms fair has had nothing: `dl_defer_running`, a fresh
/// period (deadline 1950 ms), queued above RT: fair runs. Its 50 ms are
/// charged at the ticks; the tick at 1000 ms finds the runtime at 0:
/// throttled to its deadline, 1950 ms, where it is replenished (catch-up:
/// deadline 2950 ms) and, still serving a starvation, runs at once again.
#[test]
fn the_fair_server_serves_50_ms_per_second_past_an_rt_hog_from_6_12() {
    for v in ["6.12", "6.18"] {
        let sim = traced(&scenario(
            v,
            1,
            "3s",
            "",
            "[[tasks]]\nname = \"fair\"\nprogram = [{ run = \"100s\" }]\n\
             [[tasks]]\nname = \"rt\"\npolicy = \"fifo\"\nrt_priority = 1\nprogram = [{ run = \"100s\" }]\n",
        ));
        let ins: Vec<(u64, String)> = switch_ins(&sim).into_iter().filter(|(at, _)| *at > 0).collect();
        let want: Vec<(u64, String)> = [(950, "fair"), (1000, "rt"), (1950, "fair"), (2000, "rt"), (2950, "fair")]
            .iter()
            .map(|&(t, c)| (t * MS, c.to_string()))
            .collect();
        assert_eq!(ins, want, "{v}");
        assert_eq!(sim.task_runtime_ns(TaskId(0)), 150 * MS, "{v}");
        assert_eq!(sim.task_runtime_ns(TaskId(1)), 2850 * MS, "{v}");
    }
    // A smaller server (10 ms every 100 ms): zero laxity at 90 ms, then 10 ms at the start of each period.
    let sim = traced(&scenario(
        "6.18",
        1,
        "300ms",
        "[fair_server]\nruntime = \"12ms\"\nperiod = \"100ms\"\n",
        "[[tasks]]\nname = \"fair\"\nprogram = [{ run = \"100s\" }]\n\
         [[tasks]]\nname = \"rt\"\npolicy = \"fifo\"\nrt_priority = 1\nprogram = [{ run = \"100s\" }]\n",
    ));
    let times: Vec<u64> = switch_ins(&sim).into_iter().map(|(at, _)| at / MS).filter(|&t| t > 0).collect();
    assert_eq!(times, [88, 100, 188, 200, 288, 300].iter().copied().filter(|&t| t < 300).collect::<Vec<_>>());
}

/// CBS on one CPU (6.18): a deadline task with runtime 2 ms every 10 ms
/// (deadline = period) doing 1.5 ms of work per period beside a fair hog
/// preempts it at each wake-up (the deadline class is above fair) and
/// finishes 1.5 ms later, well before its deadline: never throttled.
#[test]
fn a_deadline_task_within_its_runtime_meets_every_deadline() {
    let sim = traced(&scenario(
        "6.18",
        1,
        "100ms",
        "",
        "[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"100s\" }]\n\
         [[tasks]]\nname = \"dl\"\npolicy = \"deadline\"\ndl_runtime = \"2ms\"\ndl_deadline = \"10ms\"\n\
         program = [{ run = \"1500us\" }, { sleep_until = \"10ms\" }]\n",
    ));
    let dl_in: Vec<u64> = switch_ins(&sim).into_iter().filter(|(_, c)| c == "dl").map(|(t, _)| t).collect();
    assert_eq!(dl_in, (0..10).map(|k| k * 10 * MS).collect::<Vec<_>>());
    let hog_in: Vec<u64> = switch_ins(&sim).into_iter().filter(|(_, c)| c == "hog").map(|(t, _)| t).collect();
    // The hog, forked first, runs at 0 until the deadline task's fork preempts it.
    let want: Vec<u64> = std::iter::once(0).chain((0..10).map(|k| k * 10 * MS + 1_500_000)).collect();
    assert_eq!(hog_in, want);
}

/// A deadline task that overruns (runtime 2 ms every 10 ms, 5 ms of work):
/// the overrun is seen at the tick (no HRTICK_DL by default), 4 ms:
/// runtime −2 ms, throttled (`update_curr_dl`) until its next period, 10 ms,
/// where `replenish_dl_entity` carries the debt (−2 + 2 = 0, so one more
/// period: deadline 30 ms, runtime 2 ms) and it runs its last 1 ms.
#[test]
fn a_deadline_task_that_overruns_is_throttled_to_its_next_period() {
    for v in ["4.4", "6.6", "6.18"] {
        let sim = traced(&scenario(
            v,
            1,
            "20ms",
            "",
            "[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"100s\" }]\n\
             [[tasks]]\nname = \"dl\"\npolicy = \"deadline\"\ndl_runtime = \"2ms\"\ndl_deadline = \"10ms\"\n\
             program = [{ run = \"5ms\" }, { sleep = \"1s\" }]\n",
        ));
        let ins: Vec<(u64, String)> = switch_ins(&sim);
        let want: Vec<(u64, String)> = [(0, "hog"), (0, "dl"), (4, "hog"), (10, "dl"), (11, "hog")]
            .iter()
            .map(|&(t, c)| (t * MS, c.to_string()))
            .collect();
        assert_eq!(ins, want, "{v}");
    }
}

/// `dl_check_constrained_dl` (4.4.155 deadline.c:804-817, 6.12 2005-2006):
/// a constrained task (10 ms every 100 ms, deadline 20 ms) that wakes at
/// 35 ms, after its deadline (20 ms) but before its next period (100 ms),
/// is throttled to 100 ms, not given a new instance at once.
#[test]
fn a_constrained_deadline_task_waking_late_waits_for_its_next_period() {
    for v in ["4.4", "6.6", "6.18"] {
        let sim = traced(&scenario(
            v,
            1,
            "150ms",
            "",
            "[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"100s\" }]\n\
             [[tasks]]\nname = \"dl\"\npolicy = \"deadline\"\ndl_runtime = \"10ms\"\ndl_deadline = \"20ms\"\n\
             dl_period = \"100ms\"\nprogram = [{ run = \"5ms\" }, { sleep = \"30ms\" }]\n",
        ));
        let dl_in: Vec<u64> = switch_ins(&sim).into_iter().filter(|(_, c)| c == "dl").map(|(t, _)| t / MS).collect();
        assert_eq!(dl_in, [0, 100], "{v}");
    }
}

/// On 4.4 and 6.6 a deadline task's time counts in `rt_time` (4.4
/// deadline.c:885-897) at every charge, a block included: a deadline task
/// running 1 ms of each 10 ms beside an RT hog makes RT and deadline use
/// up 950 ms of each second, so the fair hog gets the rest, ~50 ms a second.
#[test]
fn deadline_time_counts_against_rt_throttling_on_4_4_and_6_6() {
    for v in ["4.4", "6.6"] {
        let sim = traced(&scenario(
            v,
            1,
            "3s",
            "",
            "[[tasks]]\nname = \"fair\"\nprogram = [{ run = \"100s\" }]\n\
             [[tasks]]\nname = \"rt\"\npolicy = \"fifo\"\nrt_priority = 1\nprogram = [{ run = \"100s\" }]\n\
             [[tasks]]\nname = \"dl\"\npolicy = \"deadline\"\ndl_runtime = \"3ms\"\ndl_deadline = \"10ms\"\n\
             program = [{ run = \"1ms\" }, { sleep_until = \"10ms\" }]\n",
        ));
        let fair = sim.task_runtime_ns(TaskId(0));
        assert!((100 * MS..=160 * MS).contains(&fair), "{v}: fair ran {fair} ns in 3 s");
    }
}

/// 6.6's period timer restarts at the expiry it kept when it went idle if
/// that is still ahead (`do_start_rt_bandwidth`: `hrtimer_forward_now(timer,
/// 0)`). RT runs 100..200 ms: the timer started at 100 ms (an immediate
/// pass) fires at 1.1 s, takes the 100 ms of RT time and, with no RT task
/// left, stops with 2.1 s kept. The hog from 1.4 s restarts it at 2.1 s
/// (not 2.4 s), whose pass clears its 696 ms (the timer runs before the
/// tick at the same instant), so 4 ms + 948 ms pass 950 ms at the tick at
/// 3.048 s.
#[test]
fn the_6_6_rt_period_timer_keeps_its_phase_across_a_short_idle_stretch() {
    let sim = traced(&scenario(
        "6.6",
        1,
        "3200ms",
        "",
        "[[tasks]]\nname = \"fair\"\nprogram = [{ run = \"100s\" }]\n\
         [[tasks]]\nname = \"rt\"\npolicy = \"fifo\"\nrt_priority = 1\nstart = \"100ms\"\n\
         program = [{ run = \"100ms\" }, { sleep = \"1200ms\" }, { run = \"100s\" }]\n",
    ));
    let fair_after: Vec<u64> =
        switch_ins(&sim).into_iter().filter(|(t, c)| c == "fair" && *t > 1_500 * MS).map(|(t, _)| t / MS).collect();
    assert_eq!(fair_after, [3048], "{fair_after:?}");
}
