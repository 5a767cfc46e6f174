//! The header of a run's text report: what ran (version, scenario, seed,
//! events, stop), the kernel model, machine and effective settings, and one
//! line of the task declarations as they ran.

use sim_core::{RunReport, TaskReport, format_duration, format_secs as secs};
use std::fmt::Write;

pub(super) fn header(r: &RunReport, out: &mut String) {
    if let sim_core::ReportSource::Measured(m) = &r.source {
        super::measured::header(r, m, out);
        tasks_line(r, out);
        return;
    }
    let s = &r.settings;
    let _ = writeln!(
        out,
        "schedlab {} · scenario {}{} · seed {} · simulated {} s · {} events · stop: {}",
        env!("CARGO_PKG_VERSION"),
        if r.scenario.is_empty() { "(unnamed)" } else { &r.scenario },
        r.variant.as_ref().map_or(String::new(), |v| format!(" (variant {v})")),
        r.seed,
        secs(r.sim_time_ns),
        r.events,
        r.stop.name(),
    );
    if let Some(w) = sim_core::partial_warning(r) {
        let _ = writeln!(out, "warning: {w}");
    }
    if s.warmup_ns > 0 {
        // The figures the warm-up does not filter (README § A tour of the
        // output), named so the header never claims more than it did.
        let whole: Vec<&str> = [
            (r.io.is_some(), "block devices' blktrace figures"),
            (!r.userspace_io.is_empty(), "userspace I/O queues"),
            (!r.limiters.is_empty(), "limiters"),
        ]
        .into_iter()
        .filter_map(|(has, what)| has.then_some(what))
        .collect();
        let unfiltered =
            if whole.is_empty() { String::new() } else { format!("; the {} cover the whole run", whole.join(", ")) };
        let _ = writeln!(
            out,
            "warm-up: first {} excluded from every scheduling statistic ([report] warmup; waits and responses count if they ended after it){unfiltered}",
            format_duration(s.warmup_ns)
        );
    }
    let _ = writeln!(
        out,
        "kernel model: Linux {} ({}; [kernel] version)",
        s.kernel.version(),
        s.kernel.fair_class().to_uppercase()
    );
    let _ = writeln!(
        out,
        "machine: {}, HZ={} (tick {}), context switch {}",
        s.machine.describe(),
        s.hz,
        format_duration(s.tick_ns),
        format_duration(s.context_switch_ns)
    );
    let m = &s.machine;
    if m.tick_offset_ns != 0 || m.wakeup_latency.is_some() {
        let mut parts = Vec::new();
        if m.tick_offset_ns != 0 {
            parts.push(format!("ticks at {} + k x tick", format_duration(m.tick_offset_ns)));
        }
        if let Some(d) = &m.wakeup_latency {
            parts.push(format!("wake-up latency {d} (modelled machine noise, reported apart below)"));
        }
        let _ = writeln!(out, "machine timing: {}", parts.join("; "));
    }
    if let Some(n) = &m.noise {
        let mut parts = Vec::new();
        let shown = |d: &Option<sim_core::Dist>| d.as_ref().map_or("none".to_string(), |d| d.to_string());
        parts.push(format!("wake-up onto an idle CPU {}", shown(&n.wakeup_idle)));
        parts.push(format!("onto a busy CPU {}", shown(&n.wakeup_busy)));
        parts.push(format!("kernel per activation {}", shown(&n.kernel_per_activation)));
        parts.push(format!("{} background thread(s), marked (machine)", n.background.len()));
        let _ = writeln!(out, "machine noise ([machine.noise], reported apart below): {}", parts.join("; "));
    }
    // The model's own settings (Settings::model_settings, shared with the
    // charts' footers and compare); every feature is on the line below.
    let settings: Vec<String> =
        s.model_settings().iter().filter(|(k, _)| k != "features").map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(out, "{} (effective): {}", s.kernel.fair_class(), settings.join(", "));
    let features: Vec<(&str, bool)> =
        if s.kernel.tuned_by_base_slice() { s.eevdf_features.iter(s.kernel) } else { s.features.iter().collect() };
    tasks_line(r, out);
    let on: Vec<&str> = features.iter().filter(|f| f.1).map(|f| f.0).collect();
    let off: Vec<&str> = features.iter().filter(|f| !f.1).map(|f| f.0).collect();
    let _ = writeln!(out, "features: {} (off: {})", on.join(" "), off.join(" "));
}

/// Each task declaration as it ran (instances, nice, policy, CPUs, group),
/// so a `--set tasks.NAME.nice=5` shows in the header as `--set machine.hz`
/// does in the machine line.
pub(super) fn tasks_line(r: &RunReport, out: &mut String) {
    let mut decls: Vec<(&str, Vec<&TaskReport>)> = Vec::new();
    for t in &r.tasks {
        match decls.iter_mut().find(|(n, _)| *n == t.name) {
            Some((_, v)) => v.push(t),
            None => decls.push((&t.name, vec![t])),
        }
    }
    let parts: Vec<String> = decls
        .iter()
        .map(|(name, ts)| {
            let first = ts[0];
            let mut p = if ts.len() > 1 { format!("{name}×{}", ts.len()) } else { name.to_string() };
            let _ = write!(p, " nice {}", first.nice);
            if first.policy != "normal" {
                let _ = write!(p, " {}", first.policy);
            }
            if let Some(a) = first.above_fair {
                let _ = write!(p, " {}", a.describe());
            }
            if ts.iter().all(|t| t.cpus_allowed == first.cpus_allowed) {
                let _ = write!(p, " cpus {}", first.cpus_allowed);
            } else {
                let last = ts[ts.len() - 1];
                let _ = write!(p, " cpus {}…{} (one list each)", first.cpus_allowed, last.cpus_allowed);
            }
            if first.group != "/" {
                let _ = write!(p, " group {}", first.group);
            }
            p
        })
        .collect();
    let _ = writeln!(out, "tasks: {}", parts.join(" · "));
}
