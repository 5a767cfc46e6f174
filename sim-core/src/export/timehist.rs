//! The `perf sched timehist -w -M` listing of a trace: one line per context
//! switch for the task switched out (wait time, scheduling delay, run time,
//! in perf's `msec.usec`), and an `awakened:` line per wakeup showing the
//! task that was running on the CPU, and (`-M`) a `migrated:` line per
//! `sched_migrate_task`, showing the task running on the CPU that moved it
//! (`timehist_print_migration_event`). Column layout from `timehist_header`,
//! `timehist_print_sample` and `timehist_print_wakeup_event` in
//! `tools/perf/builtin-sched.c` (comm width 30).

use super::{Item, Trace};
use crate::metrics::history::SchedRecord;
use std::fmt::Write;

const COMM_WIDTH: usize = 30;

// perf's `timestamp__scnprintf_usec` and `print_sched_time`: `secs.usecs`
// and `msec.usec`, truncated.
use crate::time::{format_ms as msecs, format_secs as secs};

/// The listing, with a `#` line stating the run and the trace's bound.
pub fn render(t: &Trace) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# schedlab {} · scenario {}{} · seed {} · {}",
        env!("CARGO_PKG_VERSION"),
        t.scenario,
        t.variant.as_ref().map_or(String::new(), |v| format!(" (variant {v})")),
        t.seed,
        t.bound_text()
    );
    let w = COMM_WIDTH;
    let _ = writeln!(out, "{:>15} {:>6}  {:<w$}  {:>9}  {:>9}  {:>9}", "time", "cpu", "task name", "wait time", "sch delay", "run time");
    let _ = writeln!(out, "{:>15} {:>6}  {:<w$}  {:>9}  {:>9}  {:>9}", "", "", "[tid/pid]", "(msec)", "(msec)", "(msec)");
    let _ = writeln!(out, "{} ------  {}  ---------  ---------  ---------", "-".repeat(15), "-".repeat(w));
    // When each CPU's idle task last went off the CPU: its "wait time".
    let mut idle_out: Vec<Option<u64>> = vec![None; usize::from(t.cpus)];
    t.replay(|item| match item {
        Item::Switch { rec, prev, run_ns, wait_ns, sch_delay_ns, .. } => {
            let cpu = rec.cpu.index();
            let wait = match prev {
                Some(_) => wait_ns,
                None => {
                    let since = idle_out[cpu].unwrap_or(rec.at.ns() - run_ns);
                    let w = (rec.at.ns() - run_ns).saturating_sub(since);
                    idle_out[cpu] = Some(rec.at.ns());
                    w
                }
            };
            let _ = writeln!(
                out,
                "{:>15} [{:04}]  {:<w$}  {:>9}  {:>9}  {:>9}",
                secs(rec.at.ns()),
                rec.cpu.0,
                t.label(prev),
                msecs(wait),
                msecs(if prev.is_some() { sch_delay_ns } else { 0 }),
                msecs(run_ns),
            );
        }
        // perf's event lines: time, CPU and the task running there, the three
        // columns left blank, then what happened.
        Item::Wakeup { rec, task, curr, .. } => {
            let what = format!("awakened: {}", t.label(Some(task)));
            event_line(&mut out, rec, &t.label(curr), &what);
        }
        Item::Migrate { rec, task, orig_cpu, dest_cpu, curr, .. } => {
            let what = format!("migrated: {} cpu {} => {}", t.label(Some(task)), orig_cpu, dest_cpu);
            event_line(&mut out, rec, &t.label(curr), &what);
        }
    });
    out
}

/// One of `perf sched timehist`'s event lines (`-w` wakeups, `-M`
/// migrations): time, CPU, the task running there, blank time columns, the
/// event.
fn event_line(out: &mut String, rec: &SchedRecord, curr: &str, what: &str) {
    let w = COMM_WIDTH;
    let _ = writeln!(
        out,
        "{:>15} [{:04}]  {:<w$}   {:>9}  {:>9}  {:>9} {what}",
        secs(rec.at.ns()),
        rec.cpu.0,
        curr,
        "",
        "",
        ""
    );
}
