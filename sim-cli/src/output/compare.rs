//! The text of `compare`: runs side by side, one column per run, each as
//! wide as its widest cell, and the one-hog bound's rule per model.

use super::cells::format_max;
use sim_core::{LatencySummary, RunReport, format_duration, format_secs as secs};
use std::fmt::Write;

/// Runs side by side: one column per run, named `base` or by its variant.
#[cfg(test)]
pub fn compare_text(runs: &[RunReport]) -> String {
    let names: Vec<String> = runs.iter().map(|r| r.variant.clone().unwrap_or_else(|| "base".into())).collect();
    compare_text_named(runs, &names)
}

/// Runs side by side: one column per run, headed by `names` (`base` and the
/// variants, or the kernel models of `compare --kernels`).
pub fn compare_text_named(runs: &[RunReport], names: &[String]) -> String {
    compare_text_with(runs, names, &[])
}

/// `compare_text_named` with each run's band (`--phases`/`--seeds`): rows
/// of the victim's p99 and max as median [min–max] and a flag.
pub fn compare_text_banded(runs: &[RunReport], names: &[String], bands: &[sim_core::Bands]) -> String {
    compare_text_with(runs, names, bands)
}

fn compare_text_with(runs: &[RunReport], names: &[String], bands: &[sim_core::Bands]) -> String {
    let mut out = String::new();
    let first = &runs[0];
    let _ = writeln!(
        out,
        "schedlab {} · compare {} · seed {} · simulated {} s each · victim `{}`\n",
        env!("CARGO_PKG_VERSION"),
        first.scenario,
        first.seed,
        secs(first.sim_time_ns),
        first.victim.name
    );
    for (name, r) in names.iter().zip(runs) {
        if let Some(w) = sim_core::partial_warning(r) {
            let _ = writeln!(out, "warning: {name}: {w}\n");
        }
    }
    // Rows are collected first: each column is as wide as its widest cell
    // (a wait still open at the end makes a long one).
    let mut table: Vec<(String, Vec<String>)> = Vec::new();
    let mut line = |label: &str, cells: Vec<String>| table.push((label.to_string(), cells));
    line("", names.to_vec());
    line("kernel", runs.iter().map(|r| r.settings.kernel.label()).collect());
    if runs.iter().any(|r| r.settings.warmup_ns > 0) {
        line("warm-up excluded", runs.iter().map(|r| format_duration(r.settings.warmup_ns)).collect());
    }
    model_setting_rows(runs, &mut line);
    line("HZ", runs.iter().map(|r| r.settings.hz.to_string()).collect());
    let group_of = |r: &RunReport, name: &str| {
        r.tasks.iter().find(|t| t.name == name).map_or("-".to_string(), |t| t.group.clone())
    };
    let culprit = |r: &RunReport| r.victim.histogram.last().and_then(|b| b.culprits.first()).map(|c| c.0.clone());
    line("autogroup", runs.iter().map(|r| if r.settings.autogroup { "on" } else { "off" }.to_string()).collect());
    line("victim's group", runs.iter().map(|r| group_of(r, &r.victim.name)).collect());
    line("culprit's group", runs.iter().map(|r| culprit(r).map_or("-".into(), |c| group_of(r, &c))).collect());
    let weight = |r: &RunReport, name: Option<String>| {
        let path = name.map(|n| group_of(r, &n));
        r.groups
            .iter()
            .find(|g| Some(&g.path) == path.as_ref())
            .map_or("-".to_string(), |g| if g.weight_samples == 0 { "-".into() } else { g.weight_avg.to_string() })
    };
    line("  victim group entity weight (avg)", runs.iter().map(|r| weight(r, Some(r.victim.name.clone()))).collect());
    line("  culprit group entity weight (avg)", runs.iter().map(|r| weight(r, culprit(r))).collect());
    victim_rows(runs, &mut line);
    if !bands.is_empty() {
        let victim = &first.victim.name;
        for stat in ["p99", "max"] {
            let cells = bands
                .iter()
                .map(|b| {
                    let t = b.tasks.iter().find(|t| t.name == *victim);
                    t.and_then(|t| t.stats.iter().find(|s| s.stat == stat))
                        .map_or_else(|| "-".into(), super::bands::cell)
                })
                .collect();
            line(&format!("  victim {stat} band: median [min–max]"), cells);
        }
    }
    super::io::compare_rows(runs, &mut line);
    super::limiter::compare_rows(runs, &mut line);
    super::userspace_io::compare_rows(runs, &mut line);
    line("worst delay spent behind", runs.iter().map(|r| culprit(r).unwrap_or_else(|| "-".into())).collect());
    line(
        "context switches (all CPUs)",
        runs.iter().map(|r| r.cpus.iter().map(|c| c.switches).sum::<u64>().to_string()).collect(),
    );
    line("events simulated", runs.iter().map(|r| r.events.to_string()).collect());
    render(&table, runs.len(), &mut out);
    // The bound's formula, once per model in the table.
    let mut models: Vec<sim_core::KernelModel> = runs.iter().map(|r| r.settings.kernel).collect();
    models.sort();
    models.dedup();
    for m in models {
        let _ = writeln!(out, "  one-hog bound under {}: {}", m.describe(), m.one_hog_bound_rule());
    }
    if let Some(b) = bands.first() {
        let _ = writeln!(out, "  {}", super::bands::header(b, first.settings.tick_ns));
        let _ = writeln!(
            out,
            "  (phase)/(seed): the band over the phases (at some seed) or the seeds (at some phase) is wider than ±25 % of its median"
        );
    }
    out
}

/// One row per setting of the runs' models (Settings::model_settings): the
/// union of their names, in first-seen order; `-` where a run's model lacks
/// one (4.4 has no base slice, 6.x no sched_latency).
fn model_setting_rows(runs: &[RunReport], line: &mut dyn FnMut(&str, Vec<String>)) {
    let settings: Vec<Vec<(String, String)>> = runs.iter().map(|r| r.settings.model_settings()).collect();
    let mut names: Vec<&str> = Vec::new();
    for (name, _) in settings.iter().flatten() {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    for name in names {
        let cells = settings
            .iter()
            .map(|set| set.iter().find(|(n, _)| n == name).map_or_else(|| "-".to_string(), |(_, v)| v.clone()))
            .collect();
        line(name, cells);
    }
}

/// The victim's rows: its delays against the one-hog bound, its request
/// responses, and each source's end-to-end p99 where every run has it.
fn victim_rows(runs: &[RunReport], line: &mut dyn FnMut(&str, Vec<String>)) {
    let first = &runs[0];
    let d = |f: &dyn Fn(&RunReport) -> u64| runs.iter().map(|r| format_duration(f(r))).collect::<Vec<_>>();
    line("victim max wakeup delay", runs.iter().map(|r| format_max(&r.victim.wakeup_delay)).collect());
    line("one-hog bound (formula below)", d(&|r| r.victim.one_hog_bound_ns));
    line(
        "  max wakeup delay within the bound",
        runs.iter()
            .map(
                |r| {
                    if r.victim.wakeup_delay.worst_ns() <= r.victim.one_hog_bound_ns {
                        "yes".into()
                    } else {
                        "NO".into()
                    }
                },
            )
            .collect(),
    );
    line("victim max delay (wakeup or preempt)", runs.iter().map(|r| format_max(&r.victim.delay)).collect());
    line("victim p99 delay", d(&|r| r.victim.delay.p99_ns));
    line("victim p99.9 delay", d(&|r| r.victim.delay.p999_ns));
    line("victim avg delay", d(&|r| r.victim.delay.avg_ns));
    if runs.iter().all(|r| r.victim.response.is_some()) {
        let resp = |f: &dyn Fn(&LatencySummary) -> u64| {
            runs.iter().map(|r| format_duration(f(r.victim.response.as_ref().expect("checked")))).collect::<Vec<_>>()
        };
        line("victim request p99 response", resp(&|s| s.p99_ns));
        line("victim request max response", resp(&|s| s.max_ns));
    }
    // Requests across hops: one row per source every run has.
    for q in &first.requests {
        let of = |r: &RunReport| r.requests.iter().find(|o| o.source == q.source).map(|o| o.latency.p99_ns);
        if runs.iter().all(|r| of(r).is_some()) {
            line(
                &format!("request p99 end to end ({})", q.source),
                runs.iter().map(|r| format_duration(of(r).unwrap_or(0))).collect(),
            );
        }
    }
}

/// The table, each column as wide as its widest cell (at least 11) and the
/// label column as its longest label (at least 38).
fn render(table: &[(String, Vec<String>)], columns: usize, out: &mut String) {
    let mut widths = vec![11usize; columns];
    for (_, cells) in table {
        for (w, c) in widths.iter_mut().zip(cells) {
            *w = (*w).max(c.chars().count());
        }
    }
    // The label column is as wide as its longest label (a task's slice row
    // carries the task's name).
    let label_w = table.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0).max(38);
    for (label, cells) in table {
        // Two spaces between columns: a cell may contain one.
        let mut l = format!("  {label:<label_w$}");
        for (c, w) in cells.iter().zip(&widths) {
            let _ = write!(l, "  {c:>w$}");
        }
        let _ = writeln!(out, "{}", l.trim_end());
    }
}
