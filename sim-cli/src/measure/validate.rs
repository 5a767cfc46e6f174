//! `sim-cli validate`: `measure` K times, `run` once with the machine the
//! measurement found (HZ, NO_HZ; the scenario's CPUs are measured one to one
//! unless `--cpus` folds them, which `measure` says), and per task the predicted
//! against the measured delay percentiles, with an error and a verdict.

use super::{Options, collect, host::HostInfo, plan::Plan};
use anyhow::{Context, Result, bail};
use serde::Serialize;
use sim_core::metrics::LatencySummary;
use sim_core::time::format_duration;
use sim_core::{RunReport, Scenario};
use std::fmt::Write;
use std::path::Path;

/// A prediction within this many percent of the measurement passes.
pub const TOLERANCE_PCT: f64 = 25.0;

/// The most repeats accepted.
pub const REPEAT_MAX: u32 = 100;

/// One statistic of a delay distribution.
type Stat = fn(&LatencySummary) -> u64;

/// The statistics compared.
const STATS: [(&str, Stat); 4] =
    [("p50", |s| s.p50_ns), ("p90", |s| s.p90_ns), ("p99", |s| s.p99_ns), ("max", |s| s.max_ns)];

#[derive(Debug, Serialize, Clone)]
pub struct Row {
    pub task: String,
    pub stat: &'static str,
    pub predicted_ns: u64,
    /// Median over the repeats.
    pub measured_ns: u64,
    pub measured_min_ns: u64,
    pub measured_max_ns: u64,
    /// `(predicted − measured) / measured`, in percent; None when measured is 0.
    pub error_pct: Option<f64>,
    pub verdict: String,
}

#[derive(Debug, Serialize)]
pub struct Validation {
    pub scenario: String,
    pub variant: Option<String>,
    pub repeats: u32,
    /// The model that predicted (`[kernel] version`): `linux-4.4-cfs`.
    pub model: String,
    /// The `--set` overrides that gave the simulator the measured machine.
    pub sim_overrides: Vec<String>,
    pub host: serde_json::Value,
    /// Which view the measured figures come from, per repeat (`perf` or `threads`).
    pub delays_from: Vec<String>,
    pub rows: Vec<Row>,
}

/// The verdict for one comparison.
pub fn verdict(predicted: u64, measured: u64) -> (Option<f64>, String) {
    if measured == 0 {
        return (None, if predicted == 0 { "within ±25%".into() } else { "measured 0".into() });
    }
    let err = (predicted as f64 - measured as f64) / measured as f64 * 100.0;
    if err.abs() <= TOLERANCE_PCT {
        (Some(err), "within ±25%".into())
    } else if predicted == 0 {
        (Some(err), "predicted 0".into())
    } else if predicted > measured {
        (Some(err), format!("outside: {:.1}x over", predicted as f64 / measured as f64))
    } else {
        (Some(err), format!("outside: {:.1}x under", measured as f64 / predicted as f64))
    }
}

/// The simulator's overrides for the machine measured.
pub fn sim_overrides(scenario: &Scenario, host: &HostInfo) -> Vec<String> {
    let mut sets = Vec::new();
    if [100, 250, 300, 1000].contains(&host.hz) && host.hz != scenario.spec.hz {
        sets.push(format!("machine.hz={}", host.hz));
    }
    if let Some(n) = host.nohz_idle
        && n != scenario.spec.machine.nohz_idle
    {
        sets.push(format!("machine.nohz={n}"));
    }
    sets
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    if v.is_empty() { 0 } else { v[(v.len() - 1) / 2] }
}

/// Compares a prediction with K measured reports, per declared task.
pub fn rows(predicted: &RunReport, measured: &[RunReport]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (i, p) in predicted.task_delays.iter().enumerate() {
        for (stat, f) in STATS {
            let m: Vec<u64> = measured.iter().filter_map(|r| r.task_delays.get(i)).map(|d| f(&d.delay)).collect();
            let med = median(m.clone());
            let pred = f(&p.delay);
            let (error_pct, verdict) = verdict(pred, med);
            rows.push(Row {
                task: p.name.clone(),
                stat,
                predicted_ns: pred,
                measured_ns: med,
                measured_min_ns: m.iter().copied().min().unwrap_or(0),
                measured_max_ns: m.iter().copied().max().unwrap_or(0),
                error_pct: error_pct.map(|e| (e * 10.0).round() / 10.0),
                verdict,
            });
        }
    }
    rows
}

/// Runs the validation and returns the table (or JSON).
pub fn validate(file: &Path, opts: &Options, repeat: u32, json: bool) -> Result<String> {
    if repeat == 0 || repeat > REPEAT_MAX {
        bail!("--repeat {repeat}: must be 1 to {REPEAT_MAX}");
    }
    let (text, scenario, host, plan) = super::preflight(file, opts)?;
    for w in &plan.warnings {
        eprintln!("note: {w}");
    }
    let mut measured = Vec::new();
    for k in 0..repeat {
        if opts.progress {
            eprintln!("validate: measurement {} of {repeat}", k + 1);
        }
        let raw = super::run_once(file, &text, &scenario, &host, &plan, opts)?;
        measured.push(collect::report(&scenario, &host, &plan, raw)?);
    }
    let overrides = sim_overrides(&scenario, &host);
    let sim_scenario =
        crate::run::with_sets(&scenario, &overrides).context("applying the measured machine to the scenario")?;
    let mut sim = sim_core::Simulation::new(&sim_scenario);
    crate::progress::run_to_end(&mut sim, "prediction", opts.progress);
    let predicted = sim.report();
    let v = Validation {
        scenario: scenario.spec.name.clone(),
        variant: opts.variant.clone(),
        repeats: repeat,
        model: scenario.spec.kernel.label(),
        sim_overrides: overrides,
        host: host_json(&host, &plan),
        delays_from: measured.iter().map(delays_from).collect(),
        rows: rows(&predicted, &measured),
    };
    Ok(if json { serde_json::to_string_pretty(&v)? + "\n" } else { table(&v) })
}

fn delays_from(r: &RunReport) -> String {
    match &r.source {
        sim_core::metrics::measured::ReportSource::Measured(m) => m.delays_from.clone(),
        sim_core::metrics::measured::ReportSource::Simulated => "simulated".into(),
    }
}

fn host_json(host: &HostInfo, plan: &Plan) -> serde_json::Value {
    let f = collect::host_facts(host, plan);
    serde_json::json!({
        "kernel_release": f.kernel_release, "scheduler": f.scheduler, "hz": f.hz, "hz_source": f.hz_source,
        "preempt": f.preempt, "cgroup": f.cgroup, "autogroup": f.autogroup, "cpus_online": f.cpus_online,
        "cpu_map": f.cpu_map, "cpu_model": f.cpu_model, "virtualized": f.virtualized,
    })
}

/// The text table.
pub fn table(v: &Validation) -> String {
    let mut out = String::new();
    let h = &v.host;
    let _ = writeln!(
        out,
        "validate {}{} · model {} · {} measurement(s) on Linux {} ({}, HZ={}, preempt {}) · delays from {}",
        v.scenario,
        v.variant.as_ref().map_or(String::new(), |x| format!(" (variant {x})")),
        v.model,
        v.repeats,
        h["kernel_release"].as_str().unwrap_or("?"),
        h["scheduler"].as_str().unwrap_or("?"),
        h["hz"],
        h["preempt"].as_str().unwrap_or("?"),
        {
            let mut d = v.delays_from.clone();
            d.dedup();
            d.join("/")
        }
    );
    if !v.sim_overrides.is_empty() {
        let _ = writeln!(out, "prediction run with --set {}", v.sim_overrides.join(" --set "));
    }
    let _ = writeln!(
        out,
        "\n{:<14} {:<4} {:>11} {:>11} {:>23} {:>9}  verdict",
        "task", "stat", "predicted", "measured", "measured min–max", "error"
    );
    for r in &v.rows {
        let _ = writeln!(
            out,
            "{:<14} {:<4} {:>11} {:>11} {:>23} {:>9}  {}",
            r.task,
            r.stat,
            format_duration(r.predicted_ns),
            format_duration(r.measured_ns),
            format!("{}–{}", format_duration(r.measured_min_ns), format_duration(r.measured_max_ns)),
            r.error_pct.map_or("-".into(), |e| format!("{e:+.0}%")),
            r.verdict
        );
    }
    let within = v.rows.iter().filter(|r| r.verdict.starts_with("within")).count();
    let _ = writeln!(
        out,
        "\n{within} of {} figures within ±{TOLERANCE_PCT:.0}% (delay = every scheduling delay: wake-up or preemption to running; measured = median over the repeats)",
        v.rows.len()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(verdict(110, 100).1, "within ±25%");
        assert_eq!(verdict(75, 100).1, "within ±25%");
        assert_eq!(verdict(300, 100).1, "outside: 3.0x over");
        assert_eq!(verdict(50, 100).1, "outside: 2.0x under");
        assert_eq!(verdict(0, 100).1, "predicted 0");
        assert_eq!(verdict(0, 0).1, "within ±25%");
        assert_eq!(verdict(5, 0).1, "measured 0");
        assert_eq!(median(vec![5, 1, 3]), 3);
        assert_eq!(median(vec![4, 1, 3, 2]), 2);
    }
}
