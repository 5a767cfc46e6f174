//! Exports checked for structure (the trace JSON as Perfetto needs it) and
//! pinned as text (the timehist listing) on small scenarios.

use super::{Trace, chrome, timehist};
use crate::engine::Simulation;
use crate::metrics::recorder::TraceWindow;
use crate::scenario::Scenario;
use crate::time::SimTime;
use expect_test::expect;
use serde_json::Value;

/// Two CPUs: two hogs share CPU 0, a sleeper wakes every 3 ms on CPU 1 next
/// to a third hog, so there are slices, preemptions, wakeups and idle time.
const SMALL: &str = r#"
    schema = 1
    name = "small"
    seed = 7
    duration = "40ms"
    [kernel]
    version = "4.4"
    [machine]
    cpus = 2
    hz = 1000
    [report]
    victim = "sleeper"
    [[tasks]]
    name = "hog"
    count = 2
    cpus = "0"
    program = [{ run = "1s" }]
    [[tasks]]
    name = "sleeper"
    cpus = "1"
    program = [{ sleep = "3ms" }, { run = "500us" }]
    [[tasks]]
    name = "batch"
    cpus = "1"
    program = [{ run = "2ms" }, { sleep = "5ms" }]
"#;

fn traced(window: TraceWindow) -> (Simulation, Trace) {
    let s = Scenario::from_toml("small.toml", SMALL).unwrap();
    let mut sim = Simulation::new(&s);
    sim.enable_trace(window).expect("traced from the start");
    sim.run_to_end();
    let t = Trace::from_sim(&mut sim).unwrap();
    (sim, t)
}

fn us_to_ns(v: &Value) -> u64 {
    // `ts`/`dur` are written as exact microseconds with three decimals.
    let s = v.to_string();
    let (a, b) = s.split_once('.').unwrap_or((&s, "0"));
    a.parse::<u64>().unwrap() * 1000 + format!("{b:0<3}")[..3].parse::<u64>().unwrap()
}

/// Checks the trace JSON as Perfetto needs it and returns, per CPU, the run
/// slices `(start, end, name)`.
fn check_json(json: &str, t: &Trace) -> Vec<Vec<(u64, u64, String)>> {
    let v: Value = serde_json::from_str(json).expect("the trace is valid JSON");
    assert_eq!(v["displayTimeUnit"], "ns");
    assert!(v["otherData"]["bound"].as_str().unwrap().contains("scheduling records"));
    // The ftrace text is embedded, escaped, exactly as `systrace` writes it.
    assert_eq!(v["systemTraceEvents"].as_str().unwrap(), chrome::systrace(t));
    let names: Vec<String> = t.tasks.iter().map(|x| format!("{}[{}]", x.comm, x.tid)).collect();
    let mut slices = vec![Vec::new(); usize::from(t.cpus)];
    let mut last_ts = std::collections::BTreeMap::new();
    for e in v["traceEvents"].as_array().unwrap() {
        let ph = e["ph"].as_str().unwrap();
        if ph == "M" {
            continue;
        }
        let ts = us_to_ns(&e["ts"]);
        assert!(ts >= t.from_ns() && ts <= t.end_ns, "{e} outside the window");
        // Timestamps never go back within one track or counter series.
        let track = match ph {
            "C" => format!("C {} {:?}", e["name"], e["args"].as_object().unwrap().keys().next()),
            _ => format!("{ph} {}", e["tid"]),
        };
        let prev = last_ts.insert(track.clone(), ts).unwrap_or(0);
        assert!(ts >= prev, "{track}: {ts} after {prev}");
        match ph {
            "X" => {
                let name = e["name"].as_str().unwrap().to_string();
                assert!(names.contains(&name), "slice {name} is not a task");
                let cpu = (e["tid"].as_u64().unwrap() - u64::from(chrome::PID)) as usize;
                slices[cpu].push((ts, ts + us_to_ns(&e["dur"]), name));
            }
            "i" => {
                let name = e["name"].as_str().unwrap();
                assert!(
                    names.iter().any(|n| name == format!("wakeup {n}") || name == format!("migrate {n}")),
                    "{name}"
                );
                assert_eq!(e["s"], "t");
            }
            "C" => assert!(["nr_running", "min_vruntime"].contains(&e["name"].as_str().unwrap())),
            _ => panic!("unexpected phase {ph}"),
        }
    }
    for (cpu, s) in slices.iter().enumerate() {
        for w in s.windows(2) {
            assert!(w[0].1 <= w[1].0, "CPU {cpu}: {:?} overlaps {:?}", w[0], w[1]);
        }
    }
    slices
}

#[test]
fn trace_json_has_one_non_overlapping_track_per_cpu_covering_its_busy_time() {
    let (sim, t) = traced(TraceWindow::all(1_000_000));
    assert!(t.capped_at_ns.is_none());
    let slices = check_json(&chrome::to_json(&t, "test"), &t);
    // The whole run is traced: each CPU's slices add up to its busy time.
    for (cpu, s) in slices.iter().enumerate() {
        let sum: u64 = s.iter().map(|x| x.1 - x.0).sum();
        assert_eq!(sum, sim.cpu_busy_ns(crate::ids::CpuId(cpu as u16)), "CPU {cpu}");
    }
    // CPU 0 only ever runs the hogs; CPU 1 the sleeper and the batch task.
    assert!(slices[0].iter().all(|x| x.2.starts_with("hog/")));
    assert!(slices[1].iter().any(|x| x.2.starts_with("sleeper")) && slices[1].iter().any(|x| x.2.starts_with("batch")));
}

#[test]
fn a_window_clips_slices_and_the_cap_is_stated() {
    let (_, t) = traced(TraceWindow { from: SimTime(10_000_000), to: SimTime(20_000_000), cpus: None, records_max: 1_000_000 });
    assert_eq!((t.from_ns(), t.end_ns), (10_000_000, 20_000_000));
    let slices = check_json(&chrome::to_json(&t, "test"), &t);
    // CPU 0 is never idle: its slices tile the window exactly.
    let s = &slices[0];
    assert_eq!((s[0].0, s.last().unwrap().1), (10_000_000, 20_000_000));
    assert!(s.windows(2).all(|w| w[0].1 == w[1].0), "{s:?}");

    // Only CPU 1: CPU 0's track and records are left out, and the bound says so.
    let cpu1 = Some(crate::cpuset::CpuSet::parse("1", 2).unwrap());
    let (_, one) = traced(TraceWindow { from: SimTime(10_000_000), to: SimTime(20_000_000), cpus: cpu1, records_max: 1_000_000 });
    let json = chrome::to_json(&one, "test");
    let slices = check_json(&json, &one);
    assert!(slices[0].is_empty() && !slices[1].is_empty());
    assert!(!json.contains("\"CPU 0\"") && one.bound_text().ends_with("CPUs 1 of 2"), "{}", one.bound_text());
    assert!(!timehist::render(&one).contains("[0000]"));
    // The record cap counts only the CPUs kept.
    assert!(one.records.iter().all(|r| r.cpu.0 == 1));

    let (_, capped) = traced(TraceWindow { from: SimTime::ZERO, to: SimTime(u64::MAX), cpus: None, records_max: 10 });
    assert_eq!(capped.records.len(), 10);
    let at = capped.capped_at_ns.expect("the cap was reached");
    assert_eq!(capped.end_ns, at);
    assert!(capped.bound_text().contains("the cap was reached"), "{}", capped.bound_text());
    check_json(&chrome::to_json(&capped, "test"), &capped);
}

#[test]
fn systrace_lines_have_the_ftrace_shape_perfetto_parses() {
    let (_, t) = traced(TraceWindow::all(1_000_000));
    let text = chrome::systrace(&t);
    let mut switches = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        // `comm-pid [cpu] flags secs.usecs: event: fields`
        let (head, rest) = line.split_once(": ").unwrap();
        let (event, fields) = rest.split_once(": ").unwrap();
        let mut parts = head.split_whitespace().rev();
        let ts = parts.next().unwrap();
        assert!(ts.split_once('.').is_some_and(|(s, us)| s.parse::<u64>().is_ok() && us.len() == 6), "{line}");
        assert_eq!(parts.next().unwrap().len(), 4, "{line}");
        let cpu = parts.next().unwrap();
        assert!(cpu.starts_with("[0") && cpu.ends_with(']'), "{line}");
        let task = parts.next().unwrap();
        assert!(task.rsplit_once('-').is_some_and(|(_, pid)| pid.parse::<u32>().is_ok()), "{line}");
        match event {
            "sched_switch" => {
                switches += 1;
                assert!(fields.starts_with("prev_comm=") && fields.contains(" ==> next_comm="), "{line}");
            }
            "sched_migrate_task" => {
                assert!(fields.starts_with("comm=") && fields.contains(" orig_cpu=") && fields.contains(" dest_cpu="), "{line}");
            }
            "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
                assert!(fields.starts_with("comm=") && fields.contains(" target_cpu=0"), "{line}");
            }
            _ => panic!("{line}"),
        }
    }
    let expected = t.records.iter().filter(|r| matches!(r.kind, crate::metrics::history::RecordKind::Switch { .. })).count();
    assert_eq!(switches, expected);
}

#[test]
fn timehist_listing_matches_perf_layout() {
    let (_, t) = traced(TraceWindow { from: SimTime(3_000_000), to: SimTime(8_000_000), cpus: None, records_max: 1_000_000 });
    expect![[r#"
        # schedlab 0.1.0 · scenario small · seed 7 · window 0.003000 s to 0.008000 s, 8 scheduling records (cap 1000000)
                   time    cpu  task name                       wait time  sch delay   run time
                                [tid/pid]                          (msec)     (msec)     (msec)
        --------------- ------  ------------------------------  ---------  ---------  ---------
               0.003000 [0001]  <idle>                                                           awakened: sleeper[3]
               0.003000 [0001]  <idle>                              0.000      0.000      1.000
               0.003500 [0001]  sleeper[3]                          3.000      0.000      0.500
               0.006000 [0000]  hog/1[2]                            0.000      0.000      6.000
               0.006500 [0001]  <idle>                                                           awakened: sleeper[3]
               0.006500 [0001]  <idle>                              0.500      0.000      3.000
               0.007000 [0001]  sleeper[3]                                                       awakened: batch[4]
               0.007000 [0001]  sleeper[3]                          3.000      0.000      0.500
    "#]]
    .assert_eq(&timehist::render(&t));
}

#[test]
fn json_string_escaping_round_trips() {
    use std::fmt::Write;
    let raw = "a\"b\\c\nd\te\u{1}f·";
    let mut out = String::from("\"");
    write!(super::chrome::JsonString(&mut out), "{raw}").unwrap();
    out.push('"');
    assert_eq!(serde_json::from_str::<String>(&out).unwrap(), raw);
}

/// A window in which nothing is switched or woken still shows who ran: the
/// occupants come from the last switch before it, however long ago.
#[test]
fn a_quiet_window_shows_the_task_that_ran_through_it() {
    // CPU 0's hogs switch every 6 ms (at 30 ms too): 30.0–31.0 ms is inside
    // one slice, and the run that ended at 30.0 ms is not drawn as 0 long.
    for from in [30_000_000, 30_500_000] {
        let (_, t) = traced(TraceWindow { from: SimTime(from), to: SimTime(31_000_000), cpus: None, records_max: 1_000_000 });
        let slices = check_json(&chrome::to_json(&t, "test"), &t);
        assert_eq!(slices[0].len(), 1, "{:?}", slices[0]);
        assert_eq!((slices[0][0].0, slices[0][0].1), (from, 31_000_000));
    }
    let (_, t) = traced(TraceWindow { from: SimTime(30_500_000), to: SimTime(31_000_000), cpus: None, records_max: 1_000_000 });
    assert!(t.records.iter().all(|r| r.cpu.0 != 0), "no switch on CPU 0 inside the window");
    let slices = check_json(&chrome::to_json(&t, "test"), &t);
    assert!(slices[0][0].2.starts_with("hog/"));
}

/// The wakeup lines of `text`: `(event, ts, line cpu, line task, wakee pid, target cpu)`.
fn wakeup_lines(text: &str) -> Vec<(String, String, String, String, u32, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let (head, rest) = line.split_once(": ")?;
            let (event, fields) = rest.split_once(": ")?;
            if !event.starts_with("sched_wak") {
                return None;
            }
            let mut parts = head.split_whitespace().rev();
            let ts = parts.next()?.to_string();
            parts.next();
            let cpu = parts.next()?.trim_matches(|c| c == '[' || c == ']').to_string();
            let task = parts.next()?.to_string();
            let field = |k: &str| fields.split(' ').find_map(|f| f.strip_prefix(k)).map(str::to_string);
            Some((event.to_string(), ts, cpu, task, field("pid=")?.parse().ok()?, field("target_cpu=")?))
        })
        .collect()
}

/// As Linux 4.4 traces them: a wakeup is `sched_waking` (in the waker's
/// context) then `sched_wakeup` (`try_to_wake_up`, `ttwu_do_wakeup`); a
/// new task's first is `sched_wakeup_new` alone (`wake_up_new_task`).
/// Perfetto needs the `sched_waking` to show the task as runnable.
#[test]
fn each_wakeup_is_a_waking_then_a_wakeup_and_each_fork_a_wakeup_new() {
    let (sim, t) = traced(TraceWindow::all(1_000_000));
    let lines = wakeup_lines(&chrome::systrace(&t));
    let new: Vec<u32> = lines.iter().filter(|l| l.0 == "sched_wakeup_new").map(|l| l.4).collect();
    // Each of the 5 tasks is forked once, when it starts, before any wakeup of it.
    assert_eq!(new.len(), sim.world.tasks.len());
    for task in &sim.world.tasks {
        let first = lines.iter().position(|l| l.4 == task.tid).unwrap();
        assert_eq!(lines[first].0, "sched_wakeup_new", "{:?}", lines[first]);
        assert_eq!(new.iter().filter(|&&p| p == task.tid).count(), 1);
    }
    let wakeups: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].0 == "sched_wakeup").collect();
    assert!(wakeups.len() >= 10, "{}", wakeups.len());
    for i in wakeups {
        // Right before it, the same task's waking at the same time; here every
        // waker is the task's own timer, so both are on the task's CPU.
        let (w, u) = (&lines[i - 1], &lines[i]);
        assert_eq!((w.0.as_str(), &w.1, w.4, &w.5), ("sched_waking", &u.1, u.4, &u.5), "{w:?} {u:?}");
        assert_eq!(w.2, u.5);
    }
    // Wakeup records and waking lines are one for one.
    let records = t.records.iter().filter(|r| matches!(r.kind, crate::metrics::history::RecordKind::Wakeup { new_task: false, .. })).count();
    assert_eq!(lines.iter().filter(|l| l.0 == "sched_waking").count(), records);
}

/// A `wake` step's `sched_waking` is written on the waker's CPU, with the
/// waker as the line's task; its `sched_wakeup` on the woken task's CPU.
#[test]
fn a_waking_is_on_the_wakers_cpu() {
    let toml = r#"
        schema = 1
        name = "wakes"
        seed = 1
        duration = "5ms"
        [kernel]
        version = "4.4"
        [machine]
        cpus = 2
        hz = 1000
        [[tasks]]
        name = "waker"
        cpus = "0"
        program = [{ run = "1ms" }, { wake = "wakee" }, { sleep = "1ms" }]
        [[tasks]]
        name = "wakee"
        cpus = "1"
        program = ["wait", { run = "100us" }]
    "#;
    let s = Scenario::from_toml("wakes.toml", toml).unwrap();
    let run = |cpus: Option<&str>| {
        let mut sim = Simulation::new(&s);
        let cpus = cpus.map(|c| crate::cpuset::CpuSet::parse(c, 2).unwrap());
        sim.enable_trace(TraceWindow { from: SimTime::ZERO, to: SimTime(u64::MAX), cpus, records_max: 1_000_000 }).expect("traced from the start");
        sim.run_to_end();
        wakeup_lines(&chrome::systrace(&Trace::from_sim(&mut sim).unwrap()))
    };
    // The wakee is tid 2; tid 1, the waker, is woken by its own timer.
    let lines = run(None);
    let wakings: Vec<_> = lines.iter().filter(|l| l.0 == "sched_waking" && l.4 == 2).collect();
    assert_eq!(wakings.len(), 2, "{lines:?}"); // at 1 and 3 ms
    for w in &wakings {
        assert_eq!((w.2.as_str(), w.3.as_str(), w.5.as_str()), ("000", "waker-1", "001"), "{w:?}");
    }
    for u in lines.iter().filter(|l| l.0 == "sched_wakeup" && l.4 == 2) {
        assert_eq!((u.2.as_str(), u.5.as_str()), ("001", "001"), "{u:?}");
    }
    // Only CPU 1 traced: who ran on CPU 0 is unknown, so the waking is shown
    // on the woken task's CPU, still before its wakeup.
    let lines = run(Some("1"));
    let wakings: Vec<_> = lines.iter().filter(|l| l.0 == "sched_waking" && l.4 == 2).collect();
    assert_eq!(wakings.len(), 2, "{lines:?}");
    assert!(wakings.iter().all(|w| w.2 == "001"), "{wakings:?}");
}

/// A hand-built trace with every kind of move: a fork placed on CPU 1, a
/// wake-up pulled to the waker's CPU (wake_affine), and a periodic-balance
/// pull by idle CPU 1. Records as the engine pushes them: the Migrate
/// record (on the CPU doing the move) before the wakeup it leads to.
fn migrations_trace() -> Trace {
    use crate::ids::{CpuId, TaskId};
    use crate::metrics::history::{PrevState, RecordKind, SchedRecord};
    use crate::sched::migrate::MigrateCause;
    let rec = |at: u64, cpu: u16, kind: RecordKind| SchedRecord {
        at: SimTime(at),
        cpu: CpuId(cpu),
        min_vruntime: 0,
        root_min_vruntime: 0,
        nr_running: 1,
        kind,
    };
    let switch = |prev: Option<u32>, prev_sched_in: u64, next: Option<u32>| RecordKind::Switch {
        prev: prev.map(TaskId),
        prev_state: PrevState::Sleeping,
        prev_sched_in: SimTime(prev_sched_in),
        prev_wait_ns: 0,
        prev_sch_delay_ns: 0,
        prev_vruntime: 0,
        next: next.map(TaskId),
        next_vruntime: 0,
        prev_eevdf: Default::default(),
        next_eevdf: Default::default(),
    };
    let wakeup = |task: u32, new_task: bool, waker_cpu: u16, prev_cpu: u16| RecordKind::Wakeup {
        task: TaskId(task),
        vruntime: 0,
        preempt: false,
        new_task,
        waker_cpu: CpuId(waker_cpu),
        prev_cpu: CpuId(prev_cpu),
        verdict: Default::default(),
        group_level: false,
        eevdf: Default::default(),
    };
    let migrate = |task: u32, orig: u16, dest: u16, cause| RecordKind::Migrate {
        task: TaskId(task),
        orig_cpu: CpuId(orig),
        dest_cpu: CpuId(dest),
        cause,
    };
    let records = vec![
        // 1 ms: `a` runs on CPU 0.
        rec(1_000_000, 0, switch(None, 0, Some(0))),
        // 2 ms: `b` forked from CPU 0 onto CPU 1 (find_idlest_cpu).
        rec(2_000_000, 0, migrate(1, 0, 1, MigrateCause::Fork)),
        rec(2_000_000, 1, wakeup(1, true, 1, 0)),
        rec(2_000_000, 1, switch(None, 0, Some(1))),
        // 3 ms: `b` sleeps; `a` wakes it and wake_affine pulls it to CPU 0.
        rec(3_000_000, 1, switch(Some(1), 2_000_000, None)),
        rec(3_000_000, 0, migrate(1, 1, 0, MigrateCause::WakeAffine)),
        rec(3_000_000, 0, wakeup(1, false, 0, 1)),
        // 4 ms: idle CPU 1's periodic balance pulls `b` back.
        rec(4_000_000, 1, migrate(1, 0, 1, MigrateCause::Periodic)),
        rec(4_000_000, 1, switch(None, 3_000_000, Some(1))),
    ];
    Trace {
        scenario: "moves".into(),
        variant: None,
        seed: 1,
        cpus: 2,
        tasks: vec![
            super::TraceTask { comm: "a".into(), tid: 1, prio: 120 },
            super::TraceTask { comm: "b".into(), tid: 2, prio: 120 },
        ],
        window: TraceWindow::all(100),
        end_ns: 5_000_000,
        capped_at_ns: None,
        before: vec![None, None],
        records,
    }
}

/// `sched_migrate_task` as 4.4 prints it (include/trace/events/sched.h:
/// `comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d`), on the CPU that ran
/// `set_task_cpu`. try_to_wake_up: sched_waking (target_cpu = task_cpu(p),
/// still the old CPU) comes before the move, sched_wakeup after it;
/// wake_up_new_task: the move, then sched_wakeup_new.
#[test]
fn systrace_prints_migrations_between_waking_and_wakeup() {
    let text = chrome::systrace(&migrations_trace());
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    expect![[r#"
        |               a-1     [000] d..3 0.002000: sched_migrate_task: comm=b pid=2 prio=120 orig_cpu=0 dest_cpu=1
        |          <idle>-0     [001] d..4 0.002000: sched_wakeup_new: comm=b pid=2 prio=120 target_cpu=001
        |               a-1     [000] d..4 0.003000: sched_waking: comm=b pid=2 prio=120 target_cpu=001
        |               a-1     [000] d..3 0.003000: sched_migrate_task: comm=b pid=2 prio=120 orig_cpu=1 dest_cpu=0
        |               a-1     [000] d..4 0.003000: sched_wakeup: comm=b pid=2 prio=120 target_cpu=000
        |          <idle>-0     [001] d..3 0.004000: sched_migrate_task: comm=b pid=2 prio=120 orig_cpu=0 dest_cpu=1
    "#]]
    .assert_eq(&body.iter().filter(|l| !l.contains("sched_switch")).map(|l| format!("|{l}\n")).collect::<String>());
    // Exactly one waking for the one try_to_wake_up.
    assert_eq!(body.iter().filter(|l| l.contains("sched_waking")).count(), 1);
}

/// `perf sched timehist -M`: a `migrated:` line with the task running on
/// the CPU that moved it (timehist_print_migration_event).
#[test]
fn timehist_prints_migrated_lines() {
    let text = timehist::render(&migrations_trace());
    let moved: Vec<&str> = text.lines().filter(|l| l.contains("migrated:")).collect();
    expect![[r#"
        |       0.002000 [0000]  a[1]                                                             migrated: b[2] cpu 0 => 1
        |       0.003000 [0000]  a[1]                                                             migrated: b[2] cpu 1 => 0
        |       0.004000 [0001]  <idle>                                                           migrated: b[2] cpu 0 => 1
    "#]]
    .assert_eq(&moved.iter().map(|l| format!("|{l}\n")).collect::<String>());
    // Same columns as the awakened: lines (timehist_print_wakeup_event).
    let awakened = text.lines().find(|l| l.contains("awakened:")).unwrap();
    assert_eq!(awakened.find("awakened:"), moved[0].find("migrated:"));
}

/// Migrations are thread-scoped instants on the moving CPU's track, with
/// their CPUs and cause; the file stays valid for Perfetto.
#[test]
fn trace_json_has_migration_instants() {
    let t = migrations_trace();
    let json = chrome::to_json(&t, "test");
    check_json(&json, &t);
    let v: Value = serde_json::from_str(&json).unwrap();
    let moves: Vec<(u64, String, u64, u64, String)> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"].as_str().is_some_and(|n| n.starts_with("migrate ")))
        .map(|e| {
            (
                e["tid"].as_u64().unwrap() - u64::from(chrome::PID),
                e["name"].as_str().unwrap().to_string(),
                e["args"]["orig_cpu"].as_u64().unwrap(),
                e["args"]["dest_cpu"].as_u64().unwrap(),
                e["args"]["cause"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let s = |x: &str| x.to_string();
    assert_eq!(
        moves,
        vec![
            (0, s("migrate b[2]"), 0, 1, s("fork")),
            (0, s("migrate b[2]"), 1, 0, s("wake_affine")),
            (1, s("migrate b[2]"), 0, 1, s("periodic")),
        ]
    );
}

/// The ftrace text gives an RT task `p->prio` as the kernel prints it:
/// `chrt -f 50` is prio 49; a fair task nice 0 is 120.
#[test]
fn rt_tasks_carry_the_kernel_prio_in_the_trace() {
    let toml = "schema = 1\nseed = 1\nduration = \"20ms\"\n[kernel]\nversion = \"6.18\"\n[machine]\ncpus = 1\n\
                [[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n\
                [[tasks]]\nname = \"rt\"\npolicy = \"fifo\"\nrt_priority = 50\nstart = \"5ms\"\n\
                program = [{ run = \"1ms\" }, { sleep = \"5ms\" }]\n";
    let scenario = crate::scenario::Scenario::from_toml("t.toml", toml).expect("valid");
    let mut sim = crate::engine::Simulation::new(&scenario);
    sim.enable_trace(crate::metrics::recorder::TraceWindow::all(10_000)).expect("traced from the start");
    sim.run_to_end();
    let trace = super::Trace::from_sim(&mut sim).expect("traced");
    let text = super::chrome::systrace(&trace);
    assert!(text.contains("prev_comm=hog prev_pid=1 prev_prio=120"), "{text}");
    assert!(text.contains("next_comm=rt next_pid=2 next_prio=49"), "{text}");
}
