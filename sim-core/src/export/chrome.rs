//! The Chrome/Perfetto JSON trace format (Trace Event Format): one track
//! per CPU in a "CPUs" process, run slices (`X`) named `comm[tid]`, wakeups
//! and migrations (`migrate comm[tid]`, on the track of the CPU that moved
//! the task) as thread-scoped instants (`i`), `nr_running` and the root queue's
//! `min_vruntime` as counters (`C`, one series per CPU); plus, in
//! `systemTraceEvents`, the same switches, wakeups and migrations as ftrace text, from
//! which Perfetto builds its native CPU tracks and thread states.
//!
//! `ts`/`dur` are microseconds with three decimals (exact nanoseconds). The
//! bound of the trace and the run's seed and settings are in `otherData`.

use super::{Item, Trace};
use crate::ids::TaskId;
use crate::sched::migrate::MigrateCause;
use std::fmt::Write;

/// The process all CPU tracks belong to, and the first CPU track's thread
/// id (CPU n is `PID + n`). Perfetto keeps one thread table for the JSON
/// tracks and the ftrace text, whose threads are the tasks (tids from 1,
/// swapper 0); ids this high cannot collide with them (tasks are far fewer).
pub const PID: u32 = 1_000_000_000;

/// The thread id of CPU `cpu`'s track.
pub fn cpu_track(cpu: u16) -> u32 {
    PID + u32::from(cpu)
}

/// Nanoseconds as the format's microseconds, exactly (written in place,
/// no allocation: the export writes two or three per record).
struct Us(u64);

impl std::fmt::Display for Us {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The whole trace file as a string (`write_json` into memory).
pub fn to_json(t: &Trace, settings: &str) -> String {
    let mut out = String::new();
    // Writing into a `String` cannot fail.
    let _ = write_json(t, settings, &mut out);
    out
}

/// Event lines, comma-separated, written as they come: memory stays that of
/// the trace's records, not of the file.
struct Events<'w, W: Write> {
    out: &'w mut W,
    first: bool,
    result: std::fmt::Result,
}

impl<W: Write> Events<'_, W> {
    fn push(&mut self, e: std::fmt::Arguments<'_>) {
        if self.result.is_ok() {
            let sep = if std::mem::take(&mut self.first) { "\n" } else { ",\n" };
            self.result = self.out.write_str(sep).and_then(|()| self.out.write_fmt(e));
        }
    }
}

/// Writes the whole trace file to `out` (a `String`, or a file through an
/// adapter in the front end). `settings` is a one-line description of the
/// run's effective settings, stored in `otherData`.
pub fn write_json<W: Write>(t: &Trace, settings: &str, out: &mut W) -> std::fmt::Result {
    write!(
        out,
        r#"{{"displayTimeUnit":"ns","otherData":{{"generator":{},"scenario":{},"variant":{},"seed":{},"settings":{},"clock":"simulated time from the start of the run","bound":{}}},"traceEvents":["#,
        quote(&format!("schedlab {}", env!("CARGO_PKG_VERSION"))),
        quote(&t.scenario),
        t.variant.as_deref().map_or_else(|| "null".to_string(), quote),
        t.seed,
        quote(settings),
        quote(&t.bound_text()),
    )?;
    let mut ev = Events { out: &mut *out, first: true, result: Ok(()) };
    ev.push(format_args!(r#"{{"ph":"M","pid":{PID},"name":"process_name","args":{{"name":"CPUs"}}}}"#));
    for c in (0..t.cpus).filter(|&c| t.shows(c)) {
        let tid = cpu_track(c);
        ev.push(format_args!(r#"{{"ph":"M","pid":{PID},"tid":{tid},"name":"thread_name","args":{{"name":"CPU {c}"}}}}"#));
        ev.push(format_args!(r#"{{"ph":"M","pid":{PID},"tid":{tid},"name":"thread_sort_index","args":{{"sort_index":{c}}}}}"#));
    }
    // Each task's slice and wakeup names, quoted once.
    let names: Vec<String> = (0..t.tasks.len()).map(|i| quote(&t.label(Some(TaskId(i as u32))))).collect();
    let wakeups: Vec<String> =
        (0..t.tasks.len()).map(|i| quote(&format!("wakeup {}", t.label(Some(TaskId(i as u32)))))).collect();
    let migrations: Vec<String> =
        (0..t.tasks.len()).map(|i| quote(&format!("migrate {}", t.label(Some(TaskId(i as u32)))))).collect();
    // `times`: the whole run, the wait before it and its scheduling delay,
    // known for runs that ended in the window.
    let slice = |ev: &mut Events<'_, W>, cpu: u16, task: TaskId, start: u64, end: u64, state: &str, times: Option<(u64, u64, u64)>| {
        let info = &t.tasks[task.index()];
        let (tid, ts, dur, name, prio) = (cpu_track(cpu), Us(start), Us(end - start), &names[task.index()], info.prio);
        match times {
            Some((run, wait, sch)) => ev.push(format_args!(
                r#"{{"ph":"X","pid":{PID},"tid":{tid},"ts":{ts},"dur":{dur},"name":{name},"cat":"sched","args":{{"tid":{},"prio":{prio},"end_state":"{state}","run_ns":{run},"wait_ns":{wait},"sch_delay_ns":{sch}}}}}"#,
                info.tid,
            )),
            None => ev.push(format_args!(
                r#"{{"ph":"X","pid":{PID},"tid":{tid},"ts":{ts},"dur":{dur},"name":{name},"cat":"sched","args":{{"tid":{},"prio":{prio},"end_state":"{state}"}}}}"#,
                info.tid,
            )),
        }
    };
    let mut last_nr = vec![u32::MAX; usize::from(t.cpus)];
    let mut last_min = vec![i64::MIN; usize::from(t.cpus)];
    let mut counters = |ev: &mut Events<'_, W>, cpu: u16, at: u64, nr: u32, min: i64| {
        let c = usize::from(cpu);
        if last_nr[c] != nr {
            last_nr[c] = nr;
            ev.push(format_args!(r#"{{"ph":"C","pid":{PID},"ts":{},"name":"nr_running","args":{{"cpu{cpu}":{nr}}}}}"#, Us(at)));
        }
        if last_min[c] != min {
            last_min[c] = min;
            ev.push(format_args!(r#"{{"ph":"C","pid":{PID},"ts":{},"name":"min_vruntime","args":{{"cpu{cpu}":{min}}}}}"#, Us(at)));
        }
    };
    let end = t.replay(|item| match item {
        Item::Switch { rec, prev, start_ns, run_ns, prev_state, wait_ns, sch_delay_ns, .. } => {
            // A run that ended exactly where the window starts is clipped to nothing: left out.
            if let Some(p) = prev
                && !(start_ns == rec.at.ns() && run_ns > 0)
            {
                let times = Some((run_ns, wait_ns, sch_delay_ns));
                slice(&mut ev, rec.cpu.0, p, start_ns, rec.at.ns(), prev_state.code(), times);
            }
            counters(&mut ev, rec.cpu.0, rec.at.ns(), rec.nr_running, rec.root_min_vruntime);
        }
        Item::Wakeup { rec, task, preempt, vruntime, .. } => {
            ev.push(format_args!(
                r#"{{"ph":"i","pid":{PID},"tid":{},"ts":{},"s":"t","name":{},"cat":"sched","args":{{"preempt":{preempt},"vruntime":{vruntime},"min_vruntime":{}}}}}"#,
                cpu_track(rec.cpu.0),
                Us(rec.at.ns()),
                wakeups[task.index()],
                rec.min_vruntime,
            ));
            counters(&mut ev, rec.cpu.0, rec.at.ns(), rec.nr_running, rec.root_min_vruntime);
        }
        Item::Migrate { rec, task, orig_cpu, dest_cpu, cause, .. } => {
            // On the track of the CPU that moved it (where set_task_cpu ran),
            // like the ftrace line.
            ev.push(format_args!(
                r#"{{"ph":"i","pid":{PID},"tid":{},"ts":{},"s":"t","name":{},"cat":"sched","args":{{"orig_cpu":{orig_cpu},"dest_cpu":{dest_cpu},"cause":"{}"}}}}"#,
                cpu_track(rec.cpu.0),
                Us(rec.at.ns()),
                migrations[task.index()],
                cause.name(),
            ));
            // The record's nr_running and min_vruntime are the destination's.
            if t.shows(dest_cpu) {
                counters(&mut ev, dest_cpu, rec.at.ns(), rec.nr_running, rec.root_min_vruntime);
            }
        }
    });
    for (cpu, o) in end.iter().enumerate() {
        if let Some(task) = o.task
            && t.shows(cpu as u16)
            && t.end_ns > o.since_ns
        {
            slice(&mut ev, cpu as u16, task, o.since_ns, t.end_ns, "running", None);
        }
    }
    ev.result?;
    out.write_str("\n],\"systemTraceEvents\":\"")?;
    write_systrace(t, &mut JsonString(&mut *out))?;
    out.write_str("\"}\n")
}

/// Escapes what is written through it as the inside of a JSON string.
pub(super) struct JsonString<'w, W: Write>(pub(super) &'w mut W);

impl<W: Write> Write for JsonString<'_, W> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let mut from = 0;
        for (i, c) in s.char_indices() {
            let esc = match c {
                '"' => "\\\"",
                '\\' => "\\\\",
                '\n' => "\\n",
                '\t' => "\\t",
                c if (c as u32) < 0x20 => "",
                _ => continue,
            };
            self.0.write_str(&s[from..i])?;
            if esc.is_empty() {
                write!(self.0, "\\u{:04x}", c as u32)?;
            } else {
                self.0.write_str(esc)?;
            }
            from = i + c.len_utf8();
        }
        self.0.write_str(&s[from..])
    }
}

/// ftrace text (`sched_switch`, `sched_waking`, `sched_wakeup`,
/// `sched_wakeup_new` and `sched_migrate_task` lines, µs timestamps as the kernel's default trace
/// clock prints them).
///
/// Wakeups are traced as Linux 4.4 traces them (`kernel/sched/core.c`):
/// `try_to_wake_up` emits `sched_waking` in the waker's context, then
/// `ttwu_do_wakeup` emits `sched_wakeup` once the task is queued (both
/// here at the same simulated instant: the waking on the waker's CPU, the
/// wakeup on the CPU the task was queued on); `wake_up_new_task` emits only
/// `sched_wakeup_new` (no `sched_waking`: a fork is not a wakeup).
/// `sched_waking` came with commit fbd705a0c618 ("sched: Introduce the
/// 'trace_sched_waking' tracepoint"), so 4.4 has it; all three share 4.4's
/// `sched_wakeup_template` and print `comm=%s pid=%d prio=%d
/// target_cpu=%03d` (`success` is still filled with 1, "rudiment, kill when
/// possible", but no longer printed). Checked in a 4.4-based tree's
/// `include/trace/events/sched.h`, which declares `sched_waking`,
/// `sched_wakeup` and `sched_wakeup_new` on that template.
///
/// What Perfetto makes of it (its systrace importer,
/// `src/trace_processor/importers/systrace/systrace_line_parser.cc`): only
/// `sched_waking` opens a thread's Runnable (`R`) state
/// (`ThreadStateTracker::PushWakingEvent`), and a `sched_switch` with
/// `prev_state=R+` opens a preempted one (`R+`); `sched_wakeup` and
/// `sched_wakeup_new` lines are not used for thread states. So a new
/// task's wait for its first run is not shown as runnable, as with a real
/// kernel's trace.
///
/// `sched_migrate_task` prints `comm=%s pid=%d prio=%d orig_cpu=%d
/// dest_cpu=%d` (4.4 include/trace/events/sched.h), on the CPU that ran
/// `set_task_cpu`. In `try_to_wake_up` it comes after `sched_waking` and
/// before `sched_wakeup` (select_task_rq, then set_task_cpu, then
/// ttwu_queue), so a wake-up's waking line is written with its migration.
/// In `wake_up_new_task` it comes before `sched_wakeup_new`. The template's
/// `target_cpu` is `task_cpu(p)` when the event fires: the previous CPU for
/// `sched_waking`, the chosen one for `sched_wakeup`.
pub fn systrace(t: &Trace) -> String {
    let mut out = String::new();
    let _ = write_systrace(t, &mut out);
    out
}

/// [`systrace`] streamed into `out` (`sim-cli run --trace FILE.txt`).
pub fn write_systrace<W: Write>(t: &Trace, out: &mut W) -> std::fmt::Result {
    writeln!(out, "# tracer: nop\n#\n# {}\n#", t.bound_text())?;
    out.write_str("#           TASK-PID    CPU#  ||||    TIMESTAMP  FUNCTION\n#              | |        |   ||||       |         |\n")?;
    let secs = crate::time::Secs;
    // The idle task is `swapper/N` in sched_switch fields, `<idle>-0` in the line prefix.
    let swappers: Vec<String> = (0..t.cpus).map(|c| format!("swapper/{c}")).collect();
    let who = |task: Option<TaskId>, cpu: u16| -> (&str, u32, i32) {
        match task {
            Some(task) => {
                let i = &t.tasks[task.index()];
                (&i.comm, i.tid, i.prio)
            }
            None => (&swappers[usize::from(cpu)], 0, 120),
        }
    };
    let mut result = Ok(());
    // A wake-up whose sched_waking line was already written with its
    // migration: (task, time).
    let mut waking_written: Option<(TaskId, u64)> = None;
    t.replay(|item| {
        if result.is_err() {
            return;
        }
        result = match item {
            Item::Switch { rec, prev, prev_state, next, .. } => {
                let cpu = rec.cpu.0;
                let (pc, pp, pprio) = who(prev, cpu);
                let (nc, np, nprio) = who(next, cpu);
                let prefix = if prev.is_some() { pc } else { "<idle>" };
                let state = if prev.is_some() { prev_state.code() } else { "R" };
                writeln!(
                    out,
                    "{prefix:>16}-{pp:<5} [{cpu:03}] d..3 {}: sched_switch: prev_comm={pc} prev_pid={pp} prev_prio={pprio} prev_state={state} ==> next_comm={nc} next_pid={np} next_prio={nprio}",
                    secs(rec.at.ns()),
                )
            }
            Item::Wakeup { rec, task, curr, new_task, waker_cpu, waker, waker_shown, prev_cpu, .. } => {
                let cpu = rec.cpu.0;
                let at = secs(rec.at.ns());
                let (wc, wp, wprio) = who(Some(task), cpu);
                // target_cpu is task_cpu(p) when the event fires: still the
                // previous CPU for sched_waking (before select_task_rq).
                let line = |out: &mut W, on: u16, running: Option<TaskId>, event: &str, target: u16| {
                    let (rc, rp, _) = who(running, on);
                    let prefix = if running.is_some() { rc } else { "<idle>" };
                    writeln!(
                        out,
                        "{prefix:>16}-{rp:<5} [{on:03}] d..4 {at}: {event}: comm={wc} pid={wp} prio={wprio} target_cpu={target:03}"
                    )
                };
                if new_task {
                    line(out, cpu, curr, "sched_wakeup_new", cpu)
                } else if waking_written.take() == Some((task, rec.at.ns())) {
                    line(out, cpu, curr, "sched_wakeup", cpu)
                } else {
                    // A waker CPU left out of the trace: who ran there is
                    // unknown, so the waking is shown on the task's CPU.
                    let (on, running) = if waker_shown { (waker_cpu, waker) } else { (cpu, curr) };
                    line(out, on, running, "sched_waking", prev_cpu).and_then(|()| line(out, cpu, curr, "sched_wakeup", cpu))
                }
            }
            Item::Migrate { rec, task, orig_cpu, dest_cpu, cause, curr } => {
                let cpu = rec.cpu.0;
                let at = secs(rec.at.ns());
                let (mc, mp, mprio) = who(Some(task), cpu);
                let (rc, rp, _) = who(curr, cpu);
                let prefix = if curr.is_some() { rc } else { "<idle>" };
                // try_to_wake_up: sched_waking, on the waker's CPU (where this
                // record is), precedes set_task_cpu.
                let waking = if cause.is_placement() && cause != MigrateCause::Fork {
                    waking_written = Some((task, rec.at.ns()));
                    writeln!(
                        out,
                        "{prefix:>16}-{rp:<5} [{cpu:03}] d..4 {at}: sched_waking: comm={mc} pid={mp} prio={mprio} target_cpu={orig_cpu:03}"
                    )
                } else {
                    Ok(())
                };
                waking.and_then(|()| {
                    writeln!(
                        out,
                        "{prefix:>16}-{rp:<5} [{cpu:03}] d..3 {at}: sched_migrate_task: comm={mc} pid={mp} prio={mprio} orig_cpu={orig_cpu} dest_cpu={dest_cpu}"
                    )
                })
            }
        };
    });
    result
}
