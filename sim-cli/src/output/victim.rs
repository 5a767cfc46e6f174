//! The victim's part of a run's text report: its delay summary and
//! log-scale histogram with the tasks that held the CPU, and the history of
//! its CPU around its worst delay (as `perf sched timehist`, with the
//! model's vruntime, deadline and lag columns).

use super::cells::{bar, format_max, shares, summary_line};
use sim_core::{EevdfView, HistoryRow, RunReport, format_duration, format_ms, format_secs as secs};
use std::fmt::Write;

pub(super) fn victim(r: &RunReport, out: &mut String) {
    let v = &r.victim;
    let group = r.tasks.iter().find(|t| t.name == v.name).map_or("/", |t| t.group.as_str());
    let _ = writeln!(out, "\nVictim `{}` (group {group}): scheduling delay (wakeup or preemption to running)", v.name);
    let _ = writeln!(out, "{}", summary_line("all delays", &v.delay));
    let _ = writeln!(out, "{}", summary_line("wakeup delays", &v.wakeup_delay));
    if let Some(t) = &v.throttled_delay {
        let _ = writeln!(out, "{}", summary_line("throttled (quota)", t));
    }
    let measured = r.source.name() == "measured";
    if !measured {
        let _ = writeln!(
            out,
            "  one-hog bound ({}) = {}; max wakeup delay {} is {} it",
            r.settings.kernel.one_hog_bound_formula(),
            format_duration(v.one_hog_bound_ns),
            format_max(&v.wakeup_delay),
            if v.wakeup_delay.worst_ns() <= v.one_hog_bound_ns { "within" } else { "ABOVE" }
        );
    }
    // The first instance's share (a victim is usually one task).
    if let Some(noise) = r.tasks.iter().filter(|t| t.name == v.name).find_map(|t| t.wakeup_noise) {
        let _ = writeln!(out, "{}", summary_line("of them machine noise", &noise));
        let _ = writeln!(
            out,
            "  (the modelled wake-up latency, machine.wakeup_latency: timer/IPI delivery and idle exit, not the \
             scheduler; it is inside the delays above, as perf sched would see it)"
        );
    }
    if let Some(n) = r.tasks.iter().filter(|t| t.name == v.name).find_map(|t| t.noise) {
        let _ = writeln!(out, "{}", summary_line("noise: idle wake-up", &n.wakeup_idle));
        let _ = writeln!(out, "{}", summary_line("noise: busy wake-up", &n.wakeup_busy));
        let _ = writeln!(out, "{}", summary_line("noise: background", &n.background));
        let _ = writeln!(
            out,
            "  noise: kernel time per activation, {} in all (charged as its runtime)\n  (the measured machine \
             model, [machine.noise]: latency drawn per wake-up onto an idle / a busy CPU, and host background \
             threads' run time on its CPU during each wait; not the scheduler; inside the delays above)",
            format_duration(n.kernel_per_activation_ns)
        );
    }
    if group != "/" && !measured {
        let _ = writeln!(
            out,
            "  (the bound assumes the victim and the hog share one run queue; in group {group} {})",
            r.settings.kernel.group_preemption_rule()
        );
    }
    let max = v.histogram.iter().map(|b| b.count).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "\n  {:<22} {:>9}  {:<30}  CPU held by (share of the waiting time)",
        "delay", "count", "(log scale)"
    );
    for b in &v.histogram {
        let range = format!("[{}, {})", format_duration(b.low_ns), format_duration(b.high_ns));
        let total: u64 = b.culprits.iter().map(|c| c.1).sum();
        let _ = writeln!(
            out,
            "  {:<22} {:>9}  {:<30}  {}",
            range,
            b.count,
            bar(b.count, max),
            shares(&b.culprits, total, 3)
        );
    }
    // Indexed once: a report may list thousands of tasks and culprits.
    let name_of: std::collections::HashMap<&str, &str> =
        r.tasks.iter().map(|t| (t.comm.as_str(), t.name.as_str())).collect();
    let mut by_name: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for t in r.tasks.iter().filter(|t| t.name == v.name) {
        for (c, ns) in &t.long_delay_culprits {
            *by_name.entry(name_of.get(c.as_str()).copied().unwrap_or(c.as_str())).or_insert(0) += ns;
        }
    }
    let mut long: Vec<(String, u64)> = by_name.into_iter().map(|(n, ns)| (n.to_string(), ns)).collect();
    long.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let total: u64 = long.iter().map(|c| c.1).sum();
    if total > 0 {
        let _ = writeln!(
            out,
            "\n  Long delays (top 3 buckets of each instance) were spent behind: {}",
            shares(&long, total, 6)
        );
    }
}

pub(super) fn history(r: &RunReport, out: &mut String) {
    let v = &r.victim;
    if let Some(none) = no_delay_text(r) {
        let _ = writeln!(out, "\n{none}");
        return;
    }
    let Some(w) = &v.worst else { return };
    let _ = writeln!(
        out,
        "\nWorst delay: {} waited {} ({}) on {}, from {} s to {} s",
        w.comm,
        format_duration(w.end_ns - w.start_ns),
        match w.kind {
            sim_core::WaitKind::Wakeup => "after a wakeup",
            sim_core::WaitKind::Preempt => "after being preempted",
            sim_core::WaitKind::Throttled => "while its group was throttled (out of CPU quota)",
        },
        super::measured::cpu_label(r, w.cpu, "CPU "),
        secs(w.start_ns),
        secs(w.end_ns)
    );
    if v.history.is_empty() && r.source.name() == "measured" {
        let _ = writeln!(
            out,
            "(a measured run has no vruntime history; `perf sched timehist` on a recording shows the CPU around it)"
        );
        return;
    }
    // EEVDF models: each task's deadline, lag and eligibility, which decide the pick.
    let eevdf = r.settings.kernel.picks_by_lag_and_deadline();
    history_heading(r, w.cpu, eevdf, out);
    for row in &v.history {
        history_row(row, eevdf, out);
    }
}

/// The history's title (which rule decided each wake-up) and column heads;
/// EEVDF models add the deadline, lag and eligibility columns.
fn history_heading(r: &RunReport, cpu: u16, eevdf: bool, out: &mut String) {
    if eevdf {
        let _ = writeln!(
            out,
            "History on CPU {} around it (perf sched timehist; * = victim; vruntimes, deadlines and lags in ns; \
             lag = V - vruntime (entity_lag), eligible when >= 0; why = the {} rule that decided a wakeup):",
            cpu,
            r.settings.kernel.describe()
        );
    } else {
        let _ = writeln!(
            out,
            "History on CPU {} around it (perf sched timehist; * = victim; vruntimes in ns; why = the {} rule \
             that decided a wakeup):",
            cpu,
            r.settings.kernel.describe()
        );
    }
    if r.victim.history_truncated {
        let _ = writeln!(out, "  (older records had already left the history ring)");
    }
    let (eh, eu, ed) = if eevdf {
        (
            format!(" {:>16} {:>12} {:>5}", "deadline", "lag", "elig"),
            String::new(),
            format!(" {} {} -----", "-".repeat(16), "-".repeat(12)),
        )
    } else {
        (String::new(), String::new(), String::new())
    };
    let _ = writeln!(
        out,
        "  {:>15} {:>6}  {:<24} {:>9}  {:>9}  {:>9}  {:<5} {:>16} {:>16}{eh}  next",
        "time", "cpu", "task name", "wait time", "sch delay", "run time", "state", "vruntime", "min_vruntime"
    );
    let _ = writeln!(
        out,
        "  {:>15} {:>6}  {:<24} {:>9}  {:>9}  {:>9}{eu}",
        "", "", "[tid/pid]", "(msec)", "(msec)", "(msec)"
    );
    let _ = writeln!(
        out,
        "  {} ------  {} ---------  ---------  ---------  ----- ---------------- ----------------{ed}  ----",
        "-".repeat(15),
        "-".repeat(24)
    );
}
/// The EEVDF columns of a history row (blank where the task is not known;
/// none under CFS).
fn eevdf_cols(eevdf: bool, e: &Option<EevdfView>) -> String {
    match e {
        _ if !eevdf => String::new(),
        None => format!(" {:>16} {:>12} {:>5}", "", "", ""),
        Some(e) => format!(
            " {:>16} {:>12} {:>5}",
            e.deadline.map_or("(asleep)".to_string(), |d| d.to_string()),
            e.lag,
            match e.eligible {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            }
        ),
    }
}

/// One line of the history: a switch, a wake-up, a migration or a
/// throttling change, in `perf sched timehist`'s columns.
fn history_row(row: &HistoryRow, eevdf: bool, out: &mut String) {
    match row {
        HistoryRow::Switch {
            at_ns,
            cpu,
            task,
            wait_ns,
            sch_delay_ns,
            run_ns,
            state,
            vruntime,
            next,
            next_vruntime,
            min_vruntime,
            victim,
            prev_eevdf,
            next_eevdf,
            next_prio,
        } => {
            let next_note = match (next_eevdf, next_prio) {
                (_, Some(p)) => format!("prio {p}"),
                (Some(e), None) => format!(
                    "v={next_vruntime}, d={}, lag={}, {}",
                    e.deadline.map_or("-".to_string(), |d| d.to_string()),
                    e.lag,
                    if e.eligible == Some(true) { "eligible" } else { "NOT eligible" }
                ),
                (None, None) => format!("v={next_vruntime}"),
            };
            let _ = writeln!(
                out,
                "{} {:>15} [{:04}]  {:<24} {:>9}  {:>9}  {:>9}  {:<5} {:>16} {:>16}{}  {} ({})",
                if *victim { "*" } else { " " },
                secs(*at_ns),
                cpu,
                task,
                format_ms(*wait_ns),
                format_ms(*sch_delay_ns),
                format_ms(*run_ns),
                state.code(),
                if task == "<idle>" { String::new() } else { vruntime.to_string() },
                min_vruntime,
                eevdf_cols(eevdf, prev_eevdf),
                next,
                next_note
            );
        }
        HistoryRow::Wakeup {
            at_ns,
            cpu,
            task,
            vruntime,
            preempt,
            verdict,
            group_level,
            eevdf: state,
            min_vruntime,
            victim,
            prev_cpu,
            placed_by,
        } => {
            // The CPU choice, when the wake-up moved the task.
            let moved = (prev_cpu != cpu).then(|| match placed_by {
                Some(why) => format!("from cpu {prev_cpu}, {why}"),
                None => format!("from cpu {prev_cpu}"),
            });
            let note = match (moved, *preempt) {
                (Some(m), true) => format!("({m}; preempts curr)"),
                (Some(m), false) => format!("({m})"),
                (None, true) => "(preempts curr)".to_string(),
                (None, false) => String::new(),
            };
            let _ = writeln!(
                out,
                "{} {:>15} [{:04}]  awakened: {:<14} {:>43}  {:>16} {:>16}{}  why: {}{}",
                if *victim { "*" } else { " " },
                secs(*at_ns),
                cpu,
                task,
                note,
                vruntime,
                min_vruntime,
                eevdf_cols(eevdf, state),
                verdict.explain(),
                if *group_level { " (between the group entities where the two meet)" } else { "" }
            );
        }
        HistoryRow::Migrate { at_ns, cpu, task, orig_cpu, dest_cpu, cause, victim } => {
            let _ = writeln!(
                out,
                "{} {:>15} [{:04}]  migrated: {:<14} cpu {} => {} ({})",
                if *victim { "*" } else { " " },
                secs(*at_ns),
                cpu,
                task,
                orig_cpu,
                dest_cpu,
                cause
            );
        }
        HistoryRow::Throttle { at_ns, cpu, group, throttled } => {
            let what = if *throttled { "throttled (out of quota)" } else { "unthrottled (runtime granted)" };
            let _ = writeln!(out, "  {:>15} [{:04}]  {group} {what}", secs(*at_ns), cpu);
        }
    }
}

/// What the report says instead of a worst-delay history when the victim
/// never waited for a CPU (its worst delay is 0 ns, or it has none), so
/// there is nothing to explain; `None` when it did wait.
pub fn no_delay_text(r: &RunReport) -> Option<String> {
    let v = &r.victim;
    let waited = v.worst.as_ref().is_some_and(|w| w.end_ns > w.start_ns) || v.delay.worst_ns() > 0;
    if waited || r.source.name() == "measured" && v.worst.is_none() {
        return None;
    }
    Some(format!(
        "Worst delay: none. `{}` never waited for a CPU ({} wake-ups or preemptions, every one picked at once: 0 ns), \
         so there is no worst-delay history to show.",
        v.name, v.delay.count
    ))
}
