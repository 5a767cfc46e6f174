//! Text for measured reports: the host line that replaces the model's
//! settings, and the table of the two views (threads' timestamps, perf).

use sim_core::metrics::LatencySummary;
use sim_core::report::measured::MeasuredInfo;
use sim_core::time::format_duration;
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
        sim_core::report::measured::ReportSource::Measured(m) => match m.host.cpu_map.get(usize::from(cpu)) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::report::measured::{HostFacts, MeasuredCpu, MeasuredInfo, MeasuredTask, Measurement};

    /// A measured report of a 2-CPU scenario run on host CPUs 1 and 0.
    fn report(delays_from: &str) -> sim_core::RunReport {
        let toml = "schema = 1\nseed = 1\nduration = \"1s\"\n[machine]\ncpus = 2\n[[tasks]]\nname = \"t\"\n\
                    program = [{ run = \"1ms\" }, { sleep = \"1ms\" }]\n";
        let scenario = sim_core::Scenario::from_toml("s.toml", toml).expect("scenario");
        let m = Measurement {
            info: MeasuredInfo {
                host: HostFacts { cpu_map: vec![1, 0], ..HostFacts::default() },
                delays_from: delays_from.into(),
                ..MeasuredInfo::default()
            },
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
}
