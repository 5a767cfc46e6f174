//! Global EDF across a root domain, pinned against timelines derived by
//! hand from deadline.c and cpudeadline.c (4.4.155, 6.6.9, 6.12.0, 6.18.2;
//! docs/kernel/deadline-class.md, "SMP"). Each comment gives the rule; the
//! asserts check the switch-ins and migrations it predicts. New tasks are
//! forked on CPU 0, the first CPU they may use.

use super::tests::traced;
use crate::engine::Simulation;
use crate::ids::CpuId;
use crate::metrics::history::RecordKind;
use crate::sched::balance::MigrateCause;

const MS: u64 = 1_000_000;

fn scenario(version: &str, cpus: u16, duration: &str, tasks: &str) -> String {
    format!(
        "schema = 1\nseed = 1\nduration = \"{duration}\"\n[kernel]\nversion = \"{version}\"\n\
         [machine]\ncpus = {cpus}\nhz = 250\n{tasks}"
    )
}

fn deadline(name: &str, runtime: &str, deadline: &str, start: &str, program: &str) -> String {
    format!(
        "[[tasks]]\nname = \"{name}\"\npolicy = \"deadline\"\ndl_runtime = \"{runtime}\"\n\
         dl_deadline = \"{deadline}\"\nstart = \"{start}\"\nprogram = {program}\n"
    )
}

/// When `comm` was first switched in on `cpu` at or after `from`.
fn first_in_on(sim: &Simulation, comm: &str, cpu: u16, from: u64) -> Option<u64> {
    sim.trace().iter().find_map(|r| match r.kind {
        RecordKind::Switch { next: Some(t), .. } if r.cpu == CpuId(cpu) && r.at.ns() >= from && sim.task_comm(t) == comm => {
            Some(r.at.ns())
        }
        _ => None,
    })
}

/// `(time, from, to, cause)` of every migration of `comm`.
fn migrations(sim: &Simulation, comm: &str) -> Vec<(u64, u16, u16, MigrateCause)> {
    sim.trace()
        .iter()
        .filter_map(|r| match r.kind {
            RecordKind::Migrate { task, orig_cpu, dest_cpu, cause } if sim.task_comm(task) == comm => {
                Some((r.at.ns(), orig_cpu.0, dest_cpu.0, cause))
            }
            _ => None,
        })
        .collect()
}

/// Push at the pick, pull at a block, in every version. `a` and `b`
/// (5 ms every 10 ms) fork on CPU 0 at 0 with equal deadlines (10 ms):
/// `a` is picked (FIFO among equals) and the balance callback pushes `b`
/// (`push_dl_task` → `find_later_rq`: `cpudl_find` gives the free CPU 1).
/// `c` (deadline 21 ms) forks on CPU 0 at 1 ms behind `a`: no CPU is free
/// and the latest earliest deadline (10 ms) is not later than 21 ms, so
/// it stays queued. When `b` blocks at 2 ms, CPU 1 pulls `c`
/// (`pull_dl_task`: CPU 0 is overloaded, `c` is earlier than anything on
/// CPU 1 and not earlier than CPU 0's running `a`) instead of `c` waiting
/// for `a` to block at 4 ms.
#[test]
fn push_at_the_pick_and_pull_at_a_block() {
    for v in ["4.4", "6.6", "6.12", "6.18"] {
        let tasks = deadline("a", "5ms", "10ms", "0ms", "[{ run = \"4ms\" }, { sleep_until = \"10ms\" }]")
            + &deadline("b", "5ms", "10ms", "0ms", "[{ run = \"2ms\" }, { sleep_until = \"10ms\" }]")
            + &deadline("c", "5ms", "20ms", "1ms", "[{ run = \"4ms\" }, { sleep_until = \"20ms\" }]");
        let sim = traced(&scenario(v, 2, "9ms", &tasks));
        assert_eq!(first_in_on(&sim, "b", 1, 0), Some(0), "{v}: b pushed to the free CPU at once");
        assert_eq!(migrations(&sim, "b"), vec![(0, 0, 1, MigrateCause::DlPush)], "{v}");
        assert_eq!(first_in_on(&sim, "c", 1, 0), Some(2 * MS), "{v}: c pulled when b blocks");
        assert_eq!(migrations(&sim, "c"), vec![(2 * MS, 0, 1, MigrateCause::DlPull)], "{v}");
        assert_eq!(first_in_on(&sim, "c", 0, 0), None, "{v}: c never waited for a");
    }
}

/// `select_task_rq_dl`: `y` (5 ms every 100 ms) ran on CPU 0 at 0–1 ms and
/// wakes there at 45 ms while `x` (deadline 50 ms) runs. By `y`'s old
/// deadline (100 ms, the one the kernel compares) it does not preempt `x`,
/// so `find_later_rq` sends it to CPU 1, whose only task is a fair hog
/// (no deadline entity: a free CPU in `cpudl`). There it preempts the hog at
/// once (a higher class), instead of waiting on CPU 0 until 49 ms.
#[test]
fn a_woken_deadline_task_goes_to_a_cpu_without_deadline_work() {
    for v in ["4.4", "6.6", "6.12", "6.18"] {
        let tasks = "[[tasks]]\nname = \"hog\"\ncpus = \"1\"\nprogram = [{ run = \"1s\" }]\n".to_string()
            + &deadline(
                "y",
                "5ms",
                "100ms",
                "0ms",
                "[{ run = \"1ms\" }, { sleep = \"44ms\" }, { run = \"1ms\" }, { sleep = \"1s\" }]",
            )
            + &deadline("x", "9ms", "10ms", "2ms", "[{ run = \"9ms\" }, { sleep_until = \"10ms\" }]");
        let sim = traced(&scenario(v, 2, "50ms", &tasks));
        assert_eq!(migrations(&sim, "y"), vec![(45 * MS, 0, 1, MigrateCause::DlFindLater)], "{v}");
        assert_eq!(first_in_on(&sim, "y", 1, 0), Some(45 * MS), "{v}: y runs on CPU 1 at its wake-up");
    }
}

/// The overload rule. `x` (9 ms every 10 ms, running 9 ms) is throttled at
/// 29 ms with its replenishment at 30 ms, when it also wakes; CPU 0 is idle.
/// `dl_task_timer` enqueues it and calls `push_dl_task`: 6.12+ counts a CPU
/// overloaded as soon as its pushable tree is non-empty, and CPU 1 (a fair
/// hog only) is free in `cpudl` while CPU 0 is not (`x` is queued there), so
/// `x` is pushed to CPU 1 and preempts the hog. 4.4 and 6.6 need two queued
/// deadline tasks (`update_dl_migration`): `x` runs on its idle CPU 0.
#[test]
fn a_task_replenished_on_an_idle_cpu_is_pushed_from_6_12_only() {
    for (v, pushed) in [("4.4", false), ("6.6", false), ("6.12", true), ("6.18", true)] {
        let tasks = "[[tasks]]\nname = \"hog\"\ncpus = \"1\"\nprogram = [{ run = \"1s\" }]\n".to_string()
            + &deadline("x", "9ms", "10ms", "2ms", "[{ run = \"9ms\" }, { sleep_until = \"10ms\" }]");
        let sim = traced(&scenario(v, 2, "35ms", &tasks));
        let cpu = if pushed { 1 } else { 0 };
        assert_eq!(first_in_on(&sim, "x", cpu, 30 * MS), Some(30 * MS), "{v}: x at 30 ms on CPU {cpu}");
        let pushes = migrations(&sim, "x").into_iter().filter(|m| m.3 == MigrateCause::DlPush).count();
        assert_eq!(pushes, usize::from(pushed), "{v}");
    }
}

/// How RT placement sees a deadline task. `d1` (deadline 100 ms) is pushed to
/// CPU 1 at 0 (`d2`, deadline 10 ms, takes CPU 0) and runs there until 8 ms.
/// `r1` (FIFO 50, pinned to CPU 0) and `r2` (FIFO 40) fork on CPU 0 at 1 and
/// 2 ms behind `d2`. 4.4's cpupri leaves a deadline CPU at its RT level
/// (none: CPUPRI_NORMAL), so `find_lowest_rq` sends `r2` to CPU 1 at once,
/// where it waits for `d1` (in at 8 ms). 6.6+ `inc_dl_deadline` files CPU 1
/// as CPUPRI_HIGHER: no CPU is lower than `r2`, which stays on CPU 0 behind
/// `d2` and `r1` until `d2` sleeps at 9 ms; then `r1`'s pick pushes it to the
/// now idle CPU 1 (in at 9 ms).
#[test]
fn a_deadline_cpu_is_above_every_rt_task_in_cpupri_from_6_6() {
    for (v, at, cause) in [("4.4", 8 * MS, MigrateCause::RtFindLowest), ("6.6", 9 * MS, MigrateCause::RtPush)] {
        let tasks = deadline("d1", "9ms", "100ms", "0ms", "[{ run = \"8ms\" }, { sleep = \"1s\" }]")
            + &deadline("d2", "9500us", "10ms", "0ms", "[{ run = \"9ms\" }, { sleep_until = \"10ms\" }]")
            + "[[tasks]]\nname = \"r1\"\npolicy = \"fifo\"\nrt_priority = 50\ncpus = \"0\"\nstart = \"1ms\"\n\
               program = [{ run = \"1s\" }]\n\
               [[tasks]]\nname = \"r2\"\npolicy = \"fifo\"\nrt_priority = 40\nstart = \"2ms\"\n\
               program = [{ run = \"1ms\" }, { sleep = \"1s\" }]\n";
        let sim = traced(&scenario(v, 2, "20ms", &tasks));
        assert_eq!(first_in_on(&sim, "r2", 1, 0), Some(at), "{v}");
        assert_eq!(migrations(&sim, "r2").iter().map(|m| m.3).collect::<Vec<_>>(), vec![cause], "{v}");
    }
}

/// `rt_task(curr)` in `select_task_rq_rt`: with the same tasks but `d1`
/// short (0.5 ms), CPU 1 is idle when `r2` forks at 2 ms under `d2`. 4.4
/// and 6.6 count the deadline curr as an RT task of prio −1 and place `r2`
/// by `find_lowest_rq` at its fork; 6.12+'s `rt_prio` excludes deadline
/// tasks, so `r2` is queued on CPU 0 and `task_woken_rt` (which asks
/// `dl_task(curr)` too) pushes it. Both reach CPU 1 at 2 ms.
#[test]
fn select_task_rq_rt_counts_a_deadline_curr_as_rt_until_6_12() {
    for (v, cause) in [
        ("4.4", MigrateCause::RtFindLowest),
        ("6.6", MigrateCause::RtFindLowest),
        ("6.12", MigrateCause::RtPush),
        ("6.18", MigrateCause::RtPush),
    ] {
        let tasks = deadline("d1", "1ms", "100ms", "0ms", "[{ run = \"500us\" }, { sleep = \"1s\" }]")
            + &deadline("d2", "9500us", "10ms", "0ms", "[{ run = \"9ms\" }, { sleep_until = \"10ms\" }]")
            + "[[tasks]]\nname = \"r1\"\npolicy = \"fifo\"\nrt_priority = 50\ncpus = \"0\"\nstart = \"1ms\"\n\
               program = [{ run = \"1s\" }]\n\
               [[tasks]]\nname = \"r2\"\npolicy = \"fifo\"\nrt_priority = 40\nstart = \"2ms\"\n\
               program = [{ run = \"1ms\" }, { sleep = \"1s\" }]\n";
        let sim = traced(&scenario(v, 2, "10ms", &tasks));
        assert_eq!(first_in_on(&sim, "r2", 1, 0), Some(2 * MS), "{v}");
        assert_eq!(migrations(&sim, "r2"), vec![(2 * MS, 0, 1, cause)], "{v}");
    }
}
