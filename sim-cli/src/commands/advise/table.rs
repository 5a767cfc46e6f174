//! The text answer of `sim-cli advise`.

use sim_core::{Advice, Evaluation, Fix, Spread, WorstWait, format_duration, format_secs};
use std::fmt::Write;

fn band(s: &Spread) -> String {
    format!("{} [{}–{}]", format_duration(s.median), format_duration(s.min), format_duration(s.max))
}

fn pct(ppm: u64) -> String {
    format!("{:.1}%", ppm as f64 / 10_000.0)
}

/// The targets' bands of one evaluation, `reactor p99 1.2ms [1.0ms–1.4ms]`.
fn targets_line(a: &Advice, e: &Evaluation) -> String {
    a.targets
        .iter()
        .zip(&e.targets)
        .map(|(t, s)| {
            let subject = match &t.subject {
                sim_core::TargetSubject::Task(n) => n.clone(),
                sim_core::TargetSubject::Requests(n) => format!("request {n}"),
                sim_core::TargetSubject::TaskIo(n) => format!("io {n}"),
            };
            format!("{subject} {} {}", t.stat.name(), band(s))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn met(e: &Evaluation) -> &'static str {
    if e.met { "met" } else { "not met" }
}

fn worst(w: &WorstWait) -> String {
    let held: Vec<String> = w.held_by.iter().take(3).map(|(n, ns)| format!("{n} {}", format_duration(*ns))).collect();
    format!(
        "waited {} ({}) on CPU {} at {}{}; one-hog bound {}",
        format_duration(w.delay_ns),
        w.kind,
        w.cpu,
        format_secs(w.at_ns),
        if held.is_empty() { String::new() } else { format!(", waits this long were behind {}", held.join(", ")) },
        format_duration(w.one_hog_bound_ns)
    )
}

fn fix_block(out: &mut String, a: &Advice, i: usize, f: &Fix) {
    let names: Vec<String> = f.changes.iter().map(|c| format!("{}: {}", c.knob, c.setting)).collect();
    let _ = writeln!(
        out,
        "{:>2}. {}  [needs {}{}]\n    {} · {}",
        i + 1,
        names.join(" + "),
        f.needs.name(),
        if f.changes.iter().any(|c| c.shifts_share) { ", shifts CPU shares" } else { "" },
        targets_line(a, &f.eval),
        met(&f.eval)
    );
    let mut effects = Vec::new();
    for e in &f.side_effects {
        let mut notes = Vec::new();
        if e.delay_moved {
            notes.push("DELAY MOVED HERE");
        }
        if e.share_lost {
            notes.push("LOST CPU SHARE");
        }
        effects.push(format!(
            "{}: cpu {}→{}{}, p99 {}→{}, max {}→{}{}{}",
            e.task,
            pct(e.before.cpu_ppm),
            pct(e.after.cpu_ppm),
            match (e.before.completed, e.after.completed) {
                (Some(b), Some(x)) => format!(", jobs {b}→{x}"),
                _ => String::new(),
            },
            format_duration(e.before.p99_ns),
            format_duration(e.after.p99_ns),
            format_duration(e.before.max_ns),
            format_duration(e.after.max_ns),
            match (e.before.io_max_ns, e.after.io_max_ns) {
                (Some(b), Some(x)) => format!(", I/O stall max {}→{}", format_duration(b), format_duration(x)),
                _ => String::new(),
            },
            if notes.is_empty() { String::new() } else { format!(" ({})", notes.join(", ")) }
        ));
    }
    let _ = writeln!(
        out,
        "    others: {}; machine busy {}→{}",
        if effects.is_empty() { "none".to_string() } else { effects.join("; ") },
        pct(a.baseline.utilisation_ppm),
        pct(f.eval.utilisation_ppm)
    );
    if f.moves_cost() {
        let _ = writeln!(out, "    note: this fix moves delay or CPU time onto another task (above)");
    }
    let sets: Vec<String> = f.set().iter().map(|s| format!("--set '{s}'")).collect();
    let _ = writeln!(out, "    re-run: sim-cli run FILE {}", sets.join(" "));
    let _ = writeln!(out, "    apply:");
    for c in &f.changes {
        for line in &c.apply {
            let _ = writeln!(out, "      {line}");
        }
    }
}

pub fn render(a: &Advice, file: &str) -> String {
    let mut out = String::new();
    let targets: Vec<&str> = a.targets.iter().map(|t| t.text.as_str()).collect();
    let _ = writeln!(
        out,
        "schedlab {} · advise {} ({}) · model {} · target {}",
        env!("CARGO_PKG_VERSION"),
        a.scenario,
        file,
        a.model,
        targets.join(" and ")
    );
    let families: Vec<&str> = a.families.iter().map(|f| f.name()).collect();
    let _ = writeln!(
        out,
        "judged over {} tick phase(s) × {} seed(s): a target is met when its worst run meets it · knobs: {} ({} knobs, {} settings) · {} of {} runs · stopped: {}",
        a.phases,
        a.seeds,
        families.join(","),
        a.knobs,
        a.settings,
        a.runs,
        a.budget_runs,
        a.stopped.text()
    );
    let _ = writeln!(
        out,
        "victim {}; it waited behind: {}",
        a.victim,
        if a.culprits.is_empty() { "nobody".to_string() } else { a.culprits.join(", ") }
    );
    let _ = writeln!(out, "\nbaseline: {} · {}", targets_line(a, &a.baseline), met(&a.baseline));
    if !a.sensitivity.is_empty() {
        let _ = writeln!(
            out,
            "\nSensitivity (each knob alone at its best setting; score = worst target's band max / its bound)"
        );
        let _ = writeln!(out, "  {:<34} {:<10} {:<40} {:>7}  targets", "knob", "family", "best setting", "score");
        let base_score = a.baseline.score;
        let _ = writeln!(
            out,
            "  {:<34} {:<10} {:<40} {:>7}  {}",
            "(as given)",
            "",
            "",
            format!("{:.2}", base_score as f64 / 1e6),
            targets_line(a, &a.baseline)
        );
        for r in &a.sensitivity {
            let _ = writeln!(
                out,
                "  {:<34} {:<10} {:<40} {:>7}  {}{}",
                r.knob,
                r.family.name(),
                r.best,
                format!("{:.2}", r.score as f64 / 1e6),
                r.targets.iter().map(band).collect::<Vec<_>>().join(", "),
                if r.met { "  met" } else { "" }
            );
        }
    }
    match a.fixes.first() {
        None => {
            let _ = writeln!(out, "\nNo setting searched improves the targets.");
        }
        Some(f) if !f.eval.met => {
            let _ = writeln!(out, "\nNo fix meets every target ({}); the closest:", a.stopped.text());
        }
        Some(_) => {
            let _ = writeln!(
                out,
                "\nFixes (fewest changes, then the least needed, then the fewest costs moved to others):"
            );
        }
    }
    for (i, f) in a.fixes.iter().enumerate() {
        fix_block(&mut out, a, i, f);
    }
    if let Some(w) = &a.why {
        let _ = writeln!(out, "\nWhy ({}, at the scenario's own tick phase and seed):", w.task);
        if let Some(b) = &w.before {
            let _ = writeln!(out, "  before: {}", worst(b));
        }
        match &w.after {
            Some(x) => {
                let _ = writeln!(out, "  after the first fix: {}", worst(x));
            }
            None if a.fixes.first().is_some_and(|f| f.eval.met) => {
                let _ = writeln!(out, "  after the first fix: no delay at all");
            }
            None => {}
        }
        if w.before.is_some() {
            let _ = writeln!(out, "  (one-hog bound: {})", w.bound_rule);
        } else {
            let _ = writeln!(out, "  no scheduling delay in the baseline's first run");
        }
    }
    if !a.skipped.is_empty() {
        let _ = writeln!(out, "\n{} setting(s) the scenario refused, not searched:", a.skipped.len());
        for s in &a.skipped {
            let _ = writeln!(out, "  {s}");
        }
    }
    out
}
