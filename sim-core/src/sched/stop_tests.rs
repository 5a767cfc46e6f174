//! The stop class pinned against timelines derived by hand from
//! stop_task.c and core.c (4.4.155, 6.18.2; docs/kernel/stop-class.md).
//! Each comment gives the rule; the asserts check the switch times it
//! predicts, with the invariants checked after every event.

use super::tests::switch_ins_on;
use crate::engine::Simulation;
use crate::ids::TaskId;
use crate::metrics::history::RecordKind;
use crate::scenario::Scenario;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn scenario(version: &str, cpus: u16, duration: &str, tasks: &str) -> String {
    format!(
        "schema = 1\nseed = 1\nduration = \"{duration}\"\n[kernel]\nversion = \"{version}\"\n\
         [machine]\ncpus = {cpus}\nhz = 250\n{tasks}"
    )
}

/// Runs with the trace on and every invariant checked after each event.
fn checked(toml: &str) -> Simulation {
    let scenario = Scenario::from_toml("test.toml", toml).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&scenario);
    sim.enable_trace(crate::metrics::recorder::TraceWindow::all(100_000)).expect("traced from the start");
    sim.run_to_end_checked().unwrap_or_else(|e| panic!("{e}"));
    sim
}

/// A stop task waking on a CPU that runs a FIFO 99 task preempts it at
/// once (core.c `wakeup_preempt`, 6.18; `check_preempt_curr`, 4.4: the
/// woken task's class is above curr's → `resched_curr`), and the FIFO task
/// resumes when the stop task sleeps (`pick_task_stop` finds `rq->stop` no
/// longer queued; `pick_next_task_rt` takes the FIFO task, still at the
/// head of its list). Every version: migration wakes at 5 ms and runs
/// 1 ms, then every 10 ms after it sleeps.
#[test]
fn a_stop_task_preempts_fifo_99_at_once_and_the_fifo_task_resumes() {
    for v in ["4.4", "6.6", "6.12", "6.18"] {
        let sim = checked(&scenario(
            v,
            1,
            "30ms",
            "[[tasks]]\nname = \"rt\"\npolicy = \"fifo\"\nrt_priority = 99\nprogram = [{ run = \"1s\" }]\n\
             [[tasks]]\nname = \"migration\"\npolicy = \"stop\"\ncpus = \"0\"\nstart = \"5ms\"\n\
             program = [{ run = \"1ms\" }, { sleep = \"10ms\" }]\n",
        ));
        let ins: Vec<(u64, String)> = switch_ins_on(&sim, 0);
        let want: Vec<(u64, String)> =
            [(0, "rt"), (5, "migration"), (6, "rt"), (16, "migration"), (17, "rt"), (27, "migration"), (28, "rt")]
                .iter()
                .map(|&(t, c)| (t * MS, c.to_string()))
                .collect();
        assert_eq!(ins, want, "{v}");
        // 3 ms of 30 went to the stop task, the rest to the FIFO task.
        assert_eq!(sim.task_runtime_ns(TaskId(1)), 3 * MS, "{v}");
        assert_eq!(sim.task_runtime_ns(TaskId(0)), 27 * MS, "{v}");
    }
}

/// Nothing preempts a stop task (`wakeup_preempt_stop` is empty, and no
/// class is above it): a deadline task waking at 2 ms while the stop task
/// runs 1–6 ms waits until it sleeps, then runs at once (6.18,
/// `pick_task_dl` before fair; one CPU, its own root domain). A FIFO task
/// waking at 3 ms waits too, and runs after the deadline task (deadline >
/// RT). The fair hog gets the CPU back when all three sleep.
#[test]
fn a_deadline_wakeup_does_not_preempt_a_stop_task() {
    let sim = checked(&scenario(
        "6.18",
        1,
        "20ms",
        "[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n\
         [[tasks]]\nname = \"migration\"\npolicy = \"stop\"\ncpus = \"0\"\nstart = \"1ms\"\n\
         program = [{ run = \"5ms\" }, { sleep = \"1s\" }]\n\
         [[tasks]]\nname = \"dl\"\npolicy = \"deadline\"\ndl_runtime = \"2ms\"\ndl_deadline = \"10ms\"\n\
         start = \"2ms\"\nprogram = [{ run = \"1ms\" }, { sleep = \"1s\" }]\n\
         [[tasks]]\nname = \"rt\"\npolicy = \"fifo\"\nrt_priority = 99\nstart = \"3ms\"\n\
         program = [{ run = \"1ms\" }, { sleep = \"1s\" }]\n",
    ));
    let ins: Vec<(u64, String)> = switch_ins_on(&sim, 0);
    let want: Vec<(u64, String)> = [(0, "hog"), (1, "migration"), (6, "dl"), (7, "rt"), (8, "hog")]
        .iter()
        .map(|&(t, c)| (t * MS, c.to_string()))
        .collect();
    assert_eq!(ins, want);
}

/// A FIFO task waking on a CPU whose stop task runs (6.18 rt.c).
/// `select_task_rq_rt`: curr there counts as RT (`rt_task`: prio 0 <
/// `MAX_RT_PRIO`) and pinned, so `find_lowest_rq` is asked; but cpupri
/// knows nothing of the stop class (only the RT queue's `highest_prio`
/// sets it), both CPUs sit at CPUPRI_NORMAL and the task's own CPU is in
/// the lowest mask ("We prioritize the last CPU"): it is queued on CPU 0.
/// Then `task_woken_rt`: not running, curr (the stop task) is RT by
/// `rt_task` and pinned, so `push_rt_tasks`; the queued task is pushable,
/// which from 6.12 sets the overload (`enqueue_pushable_task` →
/// `rt_set_overload`), and cpupri now files CPU 0 at the task's own prio
/// 49, so `find_lowest_rq` gives CPU 1 (fair only): pushed there, it
/// preempts hog1 at once. rt first runs at 1 ms on CPU 0 (beside hog0),
/// sleeps 5 ms, wakes at 6.1 ms behind migration (5–8 ms), runs on CPU 1
/// at 6.1 ms and wakes there again at 11.2 ms. 4.4 and 6.6 set the
/// overload only with two RT tasks queued (`update_rt_migration`:
/// `rt_nr_total > 1`): rt is not pushed and waits for migration to sleep,
/// running on CPU 0 at 8 ms.
#[test]
fn a_fifo_task_waking_behind_a_stop_task_is_pushed_away_from_6_12() {
    for v in ["4.4", "6.6", "6.12", "6.18"] {
    let pushed = matches!(v, "6.12" | "6.18");
    let sim = checked(&scenario(
        v,
        2,
        "12ms",
        "[[tasks]]\nname = \"hog0\"\ncpus = \"0\"\nprogram = [{ run = \"1s\" }]\n\
         [[tasks]]\nname = \"hog1\"\ncpus = \"1\"\nprogram = [{ run = \"1s\" }]\n\
         [[tasks]]\nname = \"migration\"\npolicy = \"stop\"\ncpus = \"0\"\nstart = \"5ms\"\n\
         program = [{ run = \"3ms\" }, { sleep = \"1s\" }]\n\
         [[tasks]]\nname = \"rt\"\npolicy = \"fifo\"\nrt_priority = 50\nstart = \"1ms\"\n\
         program = [{ run = \"100us\" }, { sleep = \"5ms\" }]\n",
    ));
    let rt_ins: Vec<(u64, u16)> = sim
        .trace()
        .iter()
        .filter_map(|r| match r.kind {
            RecordKind::Switch { next: Some(t), .. } if sim.task_comm(t) == "rt" => Some((r.at.ns(), r.cpu.0)),
            _ => None,
        })
        .collect();
    let want = if pushed { vec![(MS, 0), (6 * MS + 100 * US, 1), (11 * MS + 200 * US, 1)] } else { vec![(MS, 0), (8 * MS, 0)] };
    assert_eq!(rt_ins, want, "{v}");
    assert!(switch_ins_on(&sim, 0).contains(&(5 * MS, "migration".to_string())));
    }
}
