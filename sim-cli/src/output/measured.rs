//! Text for measured reports: the host lines that replace the model's
//! settings (the kernel command line's scheduling options among them), the
//! table of the two views (threads' timestamps, perf), and the foreign CPU
//! time on the workload's CPUs.

use sim_core::{LatencySummary, MeasuredInfo, format_duration};
use std::fmt::Write;

/// The header of a measured report: what ran where.
pub fn header(r: &sim_core::RunReport, m: &MeasuredInfo, out: &mut String) {
    let h = &m.host;
    let _ = writeln!(
        out,
        "schedlab {} · scenario {}{} · seed {} · MEASURED {:.3} s on this host",
        env!("CARGO_PKG_VERSION"),
        if r.scenario.is_empty() { "(unnamed)" } else { &r.scenario },
        r.variant.as_ref().map_or(String::new(), |v| format!(" (variant {v})")),
        r.seed,
        r.sim_time_ns as f64 / 1e9,
    );
    let _ = writeln!(
        out,
        "host: Linux {} ({}), HZ={} ({}), preempt {} ({}), cgroup {}, autogroup {}, CPUs online {} ({} socket(s) x {} core(s) x {} thread(s)){}",
        h.kernel_release,
        h.scheduler,
        h.hz,
        h.hz_source,
        h.preempt,
        h.preempt_source,
        h.cgroup,
        h.autogroup.map_or("absent", |a| if a { "on" } else { "off" }),
        h.cpus_online,
        h.sockets,
        h.cores_per_socket,
        h.threads_per_core,
        h.virtualized.as_ref().map_or(String::new(), |v| format!(", virtualized: {v}")),
    );
    if !h.sched_cmdline.is_empty() {
        let _ = writeln!(out, "kernel command line, scheduling options: {}", h.sched_cmdline.join(" "));
    }
    if !h.sched_cmdline_non_upstream.is_empty() {
        let _ = writeln!(
            out,
            "warning: non-upstream scheduler option(s) on the kernel command line: {}; this kernel's scheduler \
             is patched, so check its multi-CPU behaviour against a vanilla kernel before trusting it as a reference",
            h.sched_cmdline_non_upstream.join(" ")
        );
    }
    let map: Vec<String> = h.cpu_map.iter().enumerate().map(|(i, c)| format!("{i}→{c}")).collect();
    let _ = writeln!(out, "scenario CPU → host CPU: {}", map.join(" "));
    match (h.tick_grid_ns, h.tick_offset_ns, &h.tick_grid_missing) {
        (Some(g), Some(o), _) => {
            let _ = writeln!(
                out,
                "tick grid: host ticks at {} into each period (CLOCK_MONOTONIC); the run started so that they fell at start + {} + k × tick",
                format_duration(g),
                format_duration(o)
            );
        }
        (_, _, Some(why)) => {
            let _ = writeln!(out, "warning: {why}");
        }
        _ => {}
    }
    let _ = writeln!(
        out,
        "delays from: {}{}",
        if m.delays_from == "perf" {
            "perf sched (sched_waking/sched_wakeup → sched_switch; switched out runnable → in), as the simulator counts them"
        } else {
            "the threads' own timestamps (intended wake time → running; gaps inside CPU bursts)"
        },
        m.perf_missing.as_ref().map_or(String::new(), |w| format!("; perf not used: {w}")),
    );
    for n in &m.perf_notes {
        let _ = writeln!(out, "note: {n}");
    }
    if !m.applied.is_empty() {
        let list: Vec<String> = m.applied.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(out, "applied for the run (restored): {}", list.join(" "));
    }
    for (key, why) in &m.not_reproduced {
        let _ = writeln!(out, "warning: NOT reproduced on the host: {key} ({why}); the simulation has it");
    }
}

/// A CPU as a report names it: the scenario's CPU, and in a measured
/// report also the host CPU that ran it (`cpu0 (host cpu1)` with `word`
/// "cpu", `CPU 0 (host CPU 1)` with "CPU ").
pub fn cpu_label(r: &sim_core::RunReport, cpu: u16, word: &str) -> String {
    match &r.source {
        sim_core::ReportSource::Measured(m) => match m.host.cpu_map.get(usize::from(cpu)) {
            Some(h) => format!("{word}{cpu} (host {word}{h})"),
            None => format!("{word}{cpu}"),
        },
        _ => format!("{word}{cpu}"),
    }
}

fn cell(s: &LatencySummary) -> String {
    if s.count == 0 {
        return "-".into();
    }
    format!("{} / {} / {}", format_duration(s.p50_ns), format_duration(s.p99_ns), format_duration(s.max_ns))
}

/// Relative difference of `a` from `b` in percent, `-` when either is empty.
fn diff(a: &LatencySummary, b: Option<&LatencySummary>) -> String {
    match b {
        Some(b) if a.count > 0 && b.count > 0 && b.max_ns > 0 => {
            format!("{:+.0}%", (a.max_ns as f64 - b.max_ns as f64) / b.max_ns as f64 * 100.0)
        }
        _ => "-".into(),
    }
}

/// Both views side by side, per declared task.
pub fn views(m: &MeasuredInfo, out: &mut String) {
    let _ = writeln!(
        out,
        "\nTwo views of the same run (wake-up delays p50 / p99 / max; threads: intended wake time → running, \
         perf: sched_waking → sched_switch)"
    );
    let _ = writeln!(
        out,
        "  {:<16} {:>8} {:>30} {:>30} {:>9} {:>14}",
        "task", "wakeups", "threads' timestamps", "perf sched", "max diff", "run_delay sum"
    );
    for v in &m.views {
        let _ = writeln!(
            out,
            "  {:<16} {:>8} {:>30} {:>30} {:>9} {:>14}",
            v.name,
            v.threads_wakeup.count,
            cell(&v.threads_wakeup),
            v.perf_wakeup.as_ref().map_or("-".into(), cell),
            diff(&v.threads_wakeup, v.perf_wakeup.as_ref()),
            format_duration(v.schedstat_run_delay_ns),
        );
    }
    let _ = writeln!(
        out,
        "  (threads' timestamps include the timer's own expiry latency and the return to user space; \
         run_delay is /proc/<tid>/schedstat's sum of run-queue waits over the run)"
    );
}

/// `ns` in milliseconds with one decimal.
fn ms(ns: u64) -> String {
    format!("{:.1} ms", ns as f64 / 1e6)
}

/// The CPU time of tasks the measurement did not start on the workload's
/// host CPUs: per CPU, in total, the commands, and the warning if any.
pub fn foreign(m: &MeasuredInfo, out: &mut String) {
    let Some(f) = &m.foreign_cpu else { return };
    let _ = writeln!(
        out,
        "\nForeign CPU time on the workload's host CPUs (tasks this measurement did not start), over {:.3} s",
        f.window_ns as f64 / 1e9
    );
    let cpus: Vec<String> = f
        .cpus
        .iter()
        .map(|c| format!("host cpu{} {} ({:.1}%)", c.host_cpu, ms(c.foreign_ns), f.pct(c.foreign_ns, 1)))
        .collect();
    let _ = writeln!(out, "  {}", cpus.join(", "));
    let _ = writeln!(
        out,
        "  total {} = {:.1}% of {} CPU(s) × the window; perf and the measuring processes' own: {}",
        ms(f.foreign_ns()),
        f.share_pct(),
        f.cpus.len(),
        ms(f.tools_ns())
    );
    if !f.top.is_empty() {
        let top: Vec<String> = f.top.iter().map(|(comm, ns)| format!("{comm} {}", ms(*ns))).collect();
        let _ = writeln!(out, "  top foreign commands: {}", top.join(", "));
    }
    if let Some(w) = &f.warning {
        let _ = writeln!(out, "WARNING: {w}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::{ForeignCpu, ForeignOnCpu, HostFacts, MeasuredCpu, MeasuredInfo, MeasuredTask, Measurement};

    /// A measured report of a 2-CPU scenario run on host CPUs 1 and 0.
    fn report(delays_from: &str) -> sim_core::RunReport {
        report_with(delays_from, HostFacts { cpu_map: vec![1, 0], ..HostFacts::default() }, None)
    }

    fn report_with(delays_from: &str, host: HostFacts, foreign_cpu: Option<ForeignCpu>) -> sim_core::RunReport {
        let toml = "schema = 1\nseed = 1\nduration = \"1s\"\n[machine]\ncpus = 2\n[[tasks]]\nname = \"t\"\n\
                    program = [{ run = \"1ms\" }, { sleep = \"1ms\" }]\n";
        let scenario = sim_core::Scenario::from_toml("s.toml", toml).expect("scenario");
        let m = Measurement {
            info: MeasuredInfo { host, delays_from: delays_from.into(), foreign_cpu, ..MeasuredInfo::default() },
            duration_ns: 1_000_000_000,
            tasks: vec![MeasuredTask::default()],
            cpus: vec![MeasuredCpu { busy_ns: 500_000_000, switches: 10, ..MeasuredCpu::default() }; 2],
            cpu_stats: Vec::new(),
        };
        sim_core::RunReport::measured(&scenario, m)
    }

    #[test]
    fn cpu_rows_name_the_host_cpu_too() {
        let r = report("perf");
        assert_eq!(cpu_label(&r, 0, "cpu"), "cpu0 (host cpu1)");
        assert_eq!(cpu_label(&r, 1, "CPU "), "CPU 1 (host CPU 0)");
        let text = crate::output::run_text(&r, false, None);
        assert!(text.contains("cpu0 (host cpu1)") && text.contains("cpu1 (host cpu0)"), "{text}");
        let json = sim_core::report_json(&r);
        assert!(json.contains("\"host_cpu\": 1") || json.contains("\"host_cpu\":1"), "{json}");
        // A simulated report has no host CPU.
        let toml = "schema = 1\nseed = 1\nduration = \"10ms\"\n[machine]\ncpus = 1\n[[tasks]]\nname = \"t\"\nprogram = [{ run = \"1ms\" }]\n";
        let mut sim = sim_core::Simulation::new(&sim_core::Scenario::from_toml("s.toml", toml).expect("scenario"));
        sim.run_to_end();
        let simulated = sim.report();
        assert_eq!(cpu_label(&simulated, 0, "cpu"), "cpu0");
        assert!(!sim_core::report_json(&simulated).contains("host_cpu"));
    }

    /// The host's scheduling options and the foreign CPU time reach the
    /// text and the JSON; a non-upstream option and a foreign share above the
    /// threshold are warned about.
    #[test]
    fn scheduling_options_and_foreign_time_are_printed() {
        let host = HostFacts {
            cpu_map: vec![0, 1],
            sched_cmdline: vec!["mitigations=off".into(), "sched_vcpu_pack=15".into()],
            sched_cmdline_non_upstream: vec!["sched_vcpu_pack=15".into()],
            ..HostFacts::default()
        };
        let ms = 1_000_000;
        let foreign = ForeignCpu {
            window_ns: 1000 * ms,
            cpus: vec![
                ForeignOnCpu { host_cpu: 0, foreign_ns: 80 * ms, tools_ns: 2 * ms },
                ForeignOnCpu { host_cpu: 1, foreign_ns: 20 * ms, tools_ns: 0 },
            ],
            top: vec![("rustc".into(), 90 * ms), ("apt".into(), 10 * ms)],
            warning: Some("tasks this measurement did not start ran 5.0% … rustc 90.0 ms".into()),
        };
        let r = report_with("perf", host, Some(foreign));
        let text = crate::output::run_text(&r, false, None);
        for line in [
            "kernel command line, scheduling options: mitigations=off sched_vcpu_pack=15",
            "warning: non-upstream scheduler option(s) on the kernel command line: sched_vcpu_pack=15;",
            "  host cpu0 80.0 ms (8.0%), host cpu1 20.0 ms (2.0%)",
            "  total 100.0 ms = 5.0% of 2 CPU(s) × the window; perf and the measuring processes' own: 2.0 ms",
            "  top foreign commands: rustc 90.0 ms, apt 10.0 ms",
            "WARNING: tasks this measurement did not start ran 5.0%",
        ] {
            assert!(text.contains(line), "no `{line}` in:\n{text}");
        }
        let json: serde_json::Value = serde_json::from_str(&sim_core::report_json(&r)).expect("json");
        let m = &json["measurement"];
        assert_eq!(m["host"]["sched_cmdline_non_upstream"], serde_json::json!(["sched_vcpu_pack=15"]));
        assert_eq!(m["foreign_cpu"]["foreign_ns"], 100 * ms);
        assert_eq!(m["foreign_cpu"]["share_pct"], 5.0);
        assert_eq!(m["foreign_cpu"]["cpus"][0]["share_pct"], 8.0);
        assert_eq!(m["foreign_cpu"]["top"][0]["comm"], "rustc");
        assert!(m["foreign_cpu"]["warning"].as_str().is_some_and(|w| w.contains("rustc")), "{m}");
        // Without perf there is no foreign figure, and no section.
        let plain = report("threads");
        assert!(!crate::output::run_text(&plain, false, None).contains("Foreign CPU time"));
        assert!(sim_core::report_json(&plain).contains("\"foreign_cpu\": null"));
    }
}
