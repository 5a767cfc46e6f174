//! `sim-cli validate`: `measure` K times, `run` once with the machine the
//! measurement found (HZ, NO_HZ; the scenario's CPUs are measured one to one
//! unless `--cpus` folds them, which `measure` says), and per task the predicted
//! against the measured delay percentiles, with an error and a verdict.
//! `--also-kernel V` adds a second prediction, by another kernel model, as a
//! column beside the first. Each task's measured wake-up delays are also
//! fitted with a log-normal (`machine.wakeup_latency`'s syntax), which
//! docs/validation.sh takes from a task alone on its CPU as the machine's noise.

use super::{Options, collect, host::HostInfo};
use anyhow::{Context, Result, bail};
use serde::Serialize;
use sim_core::{BandPlan, Bands, LatencySummary, MeasuredInfo, ReportSource, RunReport, Scenario, format_duration};
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
    /// What the verdict compares: the prediction at the host's tick phase
    /// when `measure` aligned it (`basis` = `aligned phase`), else the median
    /// of the band (`median over phases`).
    pub predicted_ns: u64,
    pub basis: &'static str,
    /// The band over the tick phases and seeds (`--phases`, `--seeds`): at
    /// the scenario's own phase (the median over the seeds there), the
    /// median, min and max over every run.
    pub predicted_at_phase_ns: u64,
    pub band_median_ns: u64,
    pub band_min_ns: u64,
    pub band_max_ns: u64,
    /// At the scenario's own phase: the median over the seeds there.
    /// The band over phases (or seeds) is wider than ±25 % of its median.
    pub phase_sensitive: bool,
    pub seed_sensitive: bool,
    /// The `--also-kernel` model's prediction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_also_ns: Option<u64>,
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
    /// The `--also-kernel` version (`4.4`) and model (`linux-4.4-cfs`), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub also_kernel: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub also_model: Option<String>,
    /// The user's `--set` overrides (and `--duration`): the measurement and
    /// the predictions all run the scenario with them.
    pub sets: Vec<String>,
    /// The `--set` overrides that gave the simulator the measured machine.
    pub sim_overrides: Vec<String>,
    pub host: serde_json::Value,
    /// Which view the measured figures come from, per repeat (`perf` or `threads`).
    pub delays_from: Vec<String>,
    pub rows: Vec<Row>,
    /// `--noise FILE`: the `[machine.noise]` the predictions ran with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise: Option<String>,
    /// The band: tick phases across one tick (their offsets) × seeds.
    pub phases: u32,
    pub seeds: u32,
    pub tick_offsets_ns: Vec<u64>,
    /// `--rejudge OLD.json`: the kept measurement the prediction was judged against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejudged_from: Option<String>,
    /// Per declared task with measured wake-ups: a log-normal fitted to them.
    pub wakeup_fits: Vec<WakeupFit>,
    /// With CPU quotas: each limited group's cpu.stat and each declared
    /// task's share of the CPU time, predicted against measured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quota: Vec<QuotaRow>,
    /// Scenario settings the measurement did not reproduce (a flag such as
    /// `--ignore-limiters` allowed it) while the prediction has them:
    /// `key as --set spells it → the flag and why`.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub not_reproduced: std::collections::BTreeMap<String, String>,
}

/// One figure of a CPU-limited scenario (a count or a ratio, not a delay).
#[derive(Debug, Serialize, Clone, PartialEq)]
pub struct QuotaRow {
    /// `group /pod` or `task hog`.
    pub what: String,
    /// `nr_periods`, `nr_throttled`, `throttled_ms_per_period` (throttled
    /// time summed over CPUs / nr_periods), `throttled_pct` (nr_throttled
    /// / nr_periods, %), `cpu_pct` (the task's CPU time / the run, %).
    pub stat: &'static str,
    pub predicted: f64,
    /// Median over the repeats, and their range.
    pub measured: f64,
    pub measured_min: f64,
    pub measured_max: f64,
    /// Each repeat's value, in the order measured.
    pub measured_each: Vec<f64>,
    pub error_pct: Option<f64>,
    pub verdict: String,
}

/// One figure of a group's cpu.stat.
type QuotaStat = fn(&sim_core::GroupCpuStat) -> f64;

/// The figures compared per limited group, from its report row.
const QUOTA_STATS: [(&str, QuotaStat); 4] = [
    ("nr_periods", |c| c.nr_periods as f64),
    ("nr_throttled", |c| c.nr_throttled as f64),
    ("throttled_pct", |c| if c.nr_periods == 0 { 0.0 } else { c.nr_throttled as f64 * 100.0 / c.nr_periods as f64 }),
    ("throttled_ms_per_period", |c| {
        if c.nr_periods == 0 { 0.0 } else { c.throttled_time_ns as f64 / 1e6 / c.nr_periods as f64 }
    }),
];

fn median_f(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { 0.0 } else { v[(v.len() - 1) / 2] }
}

/// A `QuotaRow` from a prediction and the repeats' values, with the ±25% verdict.
fn quota_row(what: String, stat: &'static str, predicted: f64, measured: Vec<f64>) -> QuotaRow {
    let med = median_f(measured.clone());
    let (error_pct, verdict) = if med == 0.0 {
        (None, if predicted == 0.0 { "within ±25%".to_string() } else { "measured 0".to_string() })
    } else {
        let err = (predicted - med) / med * 100.0;
        let v = if err.abs() <= TOLERANCE_PCT {
            "within ±25%".to_string()
        } else if predicted == 0.0 {
            "predicted 0".to_string()
        } else if predicted > med {
            format!("outside: {:.1}x over", predicted / med)
        } else {
            format!("outside: {:.1}x under", med / predicted)
        };
        (Some((err * 10.0).round() / 10.0), v)
    };
    QuotaRow {
        what,
        stat,
        predicted,
        measured: med,
        measured_min: measured.iter().copied().fold(f64::INFINITY, f64::min).min(med),
        measured_max: measured.iter().copied().fold(0.0, f64::max),
        measured_each: measured,
        error_pct,
        verdict,
    }
}

/// Per group with a quota in the prediction: its cpu.stat figures against
/// the measured ones; then per declared task its CPU share. Empty when the
/// scenario limits no group.
pub fn quota_rows(predicted: &RunReport, measured: &[RunReport]) -> Vec<QuotaRow> {
    let mut rows = Vec::new();
    for g in &predicted.groups {
        let Some(p) = g.cpu_stat else { continue };
        for (stat, f) in QUOTA_STATS {
            let m: Vec<f64> = measured
                .iter()
                .filter_map(|r| r.groups.iter().find(|x| x.path == g.path).and_then(|x| x.cpu_stat))
                .map(|c| f(&c))
                .collect();
            rows.push(quota_row(format!("group {}", g.path), stat, f(&p), m));
        }
    }
    if rows.is_empty() {
        return rows;
    }
    let share = |r: &RunReport, name: &str| {
        let ns: u64 = r.tasks.iter().filter(|t| t.name == name).map(|t| t.runtime_ns).sum();
        if r.sim_time_ns == 0 { 0.0 } else { ns as f64 * 100.0 / r.sim_time_ns as f64 }
    };
    for d in &predicted.task_delays {
        let m: Vec<f64> = measured.iter().map(|r| share(r, &d.name)).collect();
        rows.push(quota_row(format!("task {}", d.name), "cpu_pct", share(predicted, &d.name), m));
    }
    rows
}

/// A task's measured wake-up delays as a `machine.wakeup_latency` distribution.
#[derive(Debug, Serialize, Clone, PartialEq)]
pub struct WakeupFit {
    pub task: String,
    /// `perf` or `threads`: the view the wake-up delays come from.
    pub from: String,
    /// Medians over the repeats.
    pub p50_ns: u64,
    pub p99_ns: u64,
    /// `lognormal(MEDIANns, SIGMA)` (or a constant when p99 ≤ p50), for `--set machine.wakeup_latency=…`.
    pub dist: String,
}

/// z of the 99th percentile of the standard normal.
const Z_P99: f64 = 2.326;

/// A log-normal with median `p50_ns` whose 99th percentile is `p99_ns`:
/// σ = ln(p99 / p50) / z₀.₉₉. A constant when p99 ≤ p50 (σ would be 0 or
/// less); None when the median is 0 (no latency to model).
pub fn lognormal_fit(p50_ns: u64, p99_ns: u64) -> Option<String> {
    if p50_ns == 0 {
        return None;
    }
    let sigma = (p99_ns as f64 / p50_ns as f64).ln() / Z_P99;
    // `Dist` accepts σ in (0, 100]; three decimals are what is printed.
    if sigma < 0.0005 {
        return Some(format!("{p50_ns}ns"));
    }
    Some(format!("lognormal({p50_ns}ns, {:.3})", sigma.min(100.0)))
}

/// The fits of every declared task whose wake-ups were measured, from the
/// perf view where there is one (as the report's figures), else the threads'.
pub fn wakeup_fits(infos: &[&MeasuredInfo]) -> Vec<WakeupFit> {
    let Some(first) = infos.first() else { return Vec::new() };
    let mut fits = Vec::new();
    for (i, v) in first.views.iter().enumerate() {
        let mut from = "perf";
        let mut sums = Vec::new();
        for info in infos {
            let Some(w) = info.views.get(i) else { continue };
            match &w.perf_wakeup {
                Some(p) => sums.push(*p),
                None => {
                    from = "threads";
                    sums.push(w.threads_wakeup);
                }
            }
        }
        if sums.iter().all(|s| s.count == 0) {
            continue;
        }
        let p50 = median(sums.iter().map(|s| s.p50_ns).collect());
        let p99 = median(sums.iter().map(|s| s.p99_ns).collect());
        if let Some(dist) = lognormal_fit(p50, p99) {
            fits.push(WakeupFit { task: v.name.clone(), from: from.into(), p50_ns: p50, p99_ns: p99, dist });
        }
    }
    fits
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

/// Under an EEVDF model, the base slice the host runs with: the kernel
/// scales `normalized_sysctl_sched_base_slice` by 1 + ilog2(min(online
/// CPUs, 8)) (`update_sysctl`, 6.x fair.c), and the host has more CPUs
/// online than a one-CPU scenario declares. Left alone when the scenario
/// sets its own slice or the model is CFS.
pub fn host_base_slice(scenario: &Scenario, host: &HostInfo) -> Option<String> {
    let spec = &scenario.spec;
    let e = &spec.eevdf;
    let online = u16::try_from(host.cpus_online.len()).unwrap_or(u16::MAX).max(1);
    let default_here = e.normalized_base_slice_ns * e.scaling.factor(spec.cpus);
    if !spec.kernel.tuned_by_base_slice() || e.base_slice_ns != default_here || online == spec.cpus {
        return None;
    }
    Some(format!("cfs.base_slice_ns={}ns", e.normalized_base_slice_ns * e.scaling.factor(online)))
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    if v.is_empty() { 0 } else { v[(v.len() - 1) / 2] }
}

/// The basis of the verdict when `measure` aligned the host's ticks with the
/// model's: the prediction at that phase; otherwise the band's median.
pub const BASIS_ALIGNED: &str = "aligned phase";
pub const BASIS_MEDIAN: &str = "median over phases";

/// The measured side of the rows: per (task, statistic) the values of the
/// repeats (or, re-judged from a kept `validate --json`, its min, median and
/// max, which give the same median and range). None: the task was not measured.
pub type MeasuredValues<'a> = dyn Fn(&str, &'static str) -> Option<Vec<u64>> + 'a;

/// Per (task, statistic), the values of the repeats of measured reports.
pub fn measured_values(measured: &[RunReport]) -> impl Fn(&str, &'static str) -> Option<Vec<u64>> + '_ {
    move |task, stat| {
        let f = STATS.iter().find(|(s, _)| *s == stat)?.1;
        let v: Vec<u64> = measured
            .iter()
            .filter_map(|r| r.task_delays.iter().find(|d| d.name == task))
            .map(|d| f(&d.delay))
            .collect();
        (!v.is_empty()).then_some(v)
    }
}

/// Compares the predicted band (and the `--also-kernel` prediction) with the
/// measured values, per declared task (matched by name: the machine's
/// background tasks of `[machine.noise]` are predicted only, and left out).
/// `aligned`: the host's ticks were aligned with the model's, so the verdict
/// takes the prediction at the scenario's own phase: the median over the
/// seeds at that phase, as the measured figure is the median over the repeats.
pub fn rows(bands: &Bands, aligned: bool, also: Option<&RunReport>, measured: &MeasuredValues) -> Vec<Row> {
    let mut rows = Vec::new();
    for tb in &bands.tasks {
        for (stat, f) in STATS {
            let Some(b) = tb.stats.iter().find(|b| b.stat == stat) else { continue };
            let Some(m) = measured(&tb.name, stat) else { continue };
            let med = median(m.clone());
            let (pred, basis) = if aligned { (b.own_phase_ns, BASIS_ALIGNED) } else { (b.median_ns, BASIS_MEDIAN) };
            let (error_pct, verdict) = verdict(pred, med);
            rows.push(Row {
                task: tb.name.clone(),
                stat,
                predicted_ns: pred,
                basis,
                predicted_at_phase_ns: b.own_phase_ns,
                band_median_ns: b.median_ns,
                band_min_ns: b.min_ns,
                band_max_ns: b.max_ns,
                phase_sensitive: b.phase_sensitive,
                seed_sensitive: b.seed_sensitive,
                predicted_also_ns: also
                    .and_then(|a| a.task_delays.iter().find(|d| d.name == tb.name))
                    .map(|d| f(&d.delay)),
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

/// Where `validate --perf-data DIR` keeps measurement `k` (from 1): `DIR/repeat-k`.
pub fn repeat_dir(dir: &Path, k: u32) -> std::path::PathBuf {
    dir.join(format!("repeat-{k}"))
}

/// Runs the validation and returns the table (or JSON).
/// What `validate` predicts with, besides the measured machine.
pub struct Prediction<'a> {
    pub also_kernel: Option<&'a str>,
    /// `--noise FILE`: a `[machine.noise]` file (`sim-cli calibrate`), for the predictions only.
    pub noise: Option<&'a Path>,
    /// `--phases N --seeds K`: the band.
    pub phases: u32,
    pub seeds: u32,
    /// `--rejudge OLD.json`: predict again against the measured figures of a
    /// kept `validate --json` instead of measuring.
    pub rejudge: Option<&'a Path>,
}

/// The scenarios `validate` predicts with, built (and so refused, when they
/// cannot run) before anything is measured: the scenario with the measured
/// machine and `--noise`, over the band; and the `--also-kernel` model's.
struct Predictor {
    sim: Scenario,
    also: Option<Scenario>,
    plan: BandPlan,
}

/// What the predictor gives: the band's reports (point 0's first), the band,
/// and the `--also-kernel` run.
struct Predicted {
    reports: Vec<RunReport>,
    bands: Bands,
    also: Option<RunReport>,
}

impl Predictor {
    /// `overrides`: the measured machine as `--set`s; `machine_only`: the
    /// same without the host's base slice, which the `--also-kernel` model
    /// derives for itself.
    fn new(scenario: &Scenario, overrides: &[String], machine_only: &[String], pred: &Prediction) -> Result<Predictor> {
        let plan = BandPlan::new(pred.phases, pred.seeds).map_err(|e| anyhow::anyhow!("{e}"))?;
        let noise = pred.noise.map(crate::input::NoiseFile::read).transpose()?;
        let with_noise = |s: Scenario| match &noise {
            Some(n) => n.apply(s),
            None => Ok(s),
        };
        let sim = with_noise(
            crate::input::with_sets(scenario, overrides).context("applying the measured machine to the scenario")?,
        )?;
        plan.points(&sim)
            .iter()
            .try_for_each(|p| plan.scenario(&sim, p).map(drop).map_err(|e| anyhow::anyhow!("{e}")))?;
        let also = match pred.also_kernel {
            Some(v) => {
                let mut sets = machine_only.to_vec();
                sets.push(format!("kernel.version={v}"));
                let s = crate::input::with_sets(scenario, &sets).with_context(|| {
                    format!("--also-kernel {v}: the scenario (with its --set) does not run on that model")
                })?;
                Some(with_noise(s)?)
            }
            None => None,
        };
        Ok(Predictor { sim, also, plan })
    }

    /// Runs the band's points in parallel, and the `--also-kernel` model.
    fn run(&self) -> Result<Predicted> {
        let points = self.plan.points(&self.sim);
        let scenarios = points
            .iter()
            .map(|p| self.plan.scenario(&self.sim, p).map_err(|e| anyhow::anyhow!("{e}")))
            .collect::<Result<Vec<_>>>()?;
        let jobs = std::thread::available_parallelism().map_or(1, |n| n.get()).min(crate::parallel::JOBS_MAX);
        let reports = crate::parallel::map_in_order(&scenarios, jobs, "prediction", sim_core::run);
        let bands = sim_core::bands(&points, &reports, &self.plan);
        Ok(Predicted { reports, bands, also: self.also.as_ref().map(sim_core::run) })
    }

    fn also_kernel(&self) -> Option<String> {
        self.also.as_ref().map(|s| s.spec.kernel.version().to_string())
    }

    fn also_model(&self) -> Option<String> {
        self.also.as_ref().map(|s| s.spec.kernel.label())
    }
}

/// The band's tick offsets, one per phase.
fn tick_offsets(bands: &Bands) -> Vec<u64> {
    bands.points.iter().filter(|p| p.seed_index == 0).map(|p| p.tick_offset_ns).collect()
}

/// The largest kept `validate --json` read by `--rejudge`.
pub const REJUDGE_FILE_MAX: u64 = 16 << 20;

/// `validate FILE --rejudge OLD.json`: the same scenario predicted again
/// (with this build, `--noise`, `--phases`, `--seeds`) against the measured
/// delay figures OLD.json kept (median and range per task and statistic, the
/// host facts, the overrides that gave the simulator the measured machine).
/// Nothing runs on the host. The quota rows and the wake-up fits need the
/// measured reports themselves, so they are left out.
fn rejudge(file: &Path, opts: &Options, pred: &Prediction, old_path: &Path, json: bool) -> Result<String> {
    let text = crate::input::read_text_bounded(old_path, REJUDGE_FILE_MAX, "kept validation")?;
    let old: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("--rejudge {}: not JSON (a `validate --json` output)", old_path.display()))?;
    let (_, scenario) = super::scenario(file, opts)?;
    let strings = |k: &str| -> Result<Vec<String>> {
        old[k]
            .as_array()
            .with_context(|| {
                format!("--rejudge {}: no `{k}` list (not a `validate --json` output)", old_path.display())
            })?
            .iter()
            .map(|v| v.as_str().map(str::to_string).context("not a string"))
            .collect()
    };
    if old["scenario"].as_str() != Some(scenario.spec.name.as_str()) {
        bail!(
            "--rejudge {}: it validated scenario {}, not {} ({})",
            old_path.display(),
            old["scenario"],
            scenario.spec.name,
            file.display()
        );
    }
    let overrides = strings("sim_overrides")?;
    let machine_only: Vec<String> =
        overrides.iter().filter(|o| !o.starts_with("cfs.base_slice_ns=")).cloned().collect();
    let predictor = Predictor::new(&scenario, &overrides, &machine_only, pred)?;
    let predicted = predictor.run()?;
    let mut kept: std::collections::BTreeMap<(String, String), Vec<u64>> = std::collections::BTreeMap::new();
    for r in old["rows"].as_array().into_iter().flatten() {
        let (Some(t), Some(st)) = (r["task"].as_str(), r["stat"].as_str()) else { continue };
        let get = |k: &str| r[k].as_u64().unwrap_or(0);
        kept.insert(
            (t.to_string(), st.to_string()),
            vec![get("measured_min_ns"), get("measured_ns"), get("measured_max_ns")],
        );
    }
    let measured = |task: &str, stat: &'static str| kept.get(&(task.to_string(), stat.to_string())).cloned();
    let host = old["host"].clone();
    let aligned = host["tick_offset_ns"].is_u64();
    let v = Validation {
        scenario: scenario.spec.name.clone(),
        variant: opts.variant.clone(),
        repeats: old["repeats"].as_u64().unwrap_or(0) as u32,
        model: scenario.spec.kernel.label(),
        also_kernel: predictor.also_kernel(),
        also_model: predictor.also_model(),
        sets: strings("sets")?,
        sim_overrides: overrides,
        host,
        delays_from: strings("delays_from")?,
        rows: rows(&predicted.bands, aligned, predicted.also.as_ref(), &measured),
        noise: pred.noise.map(|p| p.display().to_string()),
        phases: pred.phases,
        seeds: pred.seeds,
        tick_offsets_ns: tick_offsets(&predicted.bands),
        rejudged_from: Some(old_path.display().to_string()),
        wakeup_fits: Vec::new(),
        quota: Vec::new(),
        not_reproduced: Default::default(),
    };
    Ok(if json { serde_json::to_string_pretty(&v)? + "\n" } else { table(&v) })
}

/// Runs the validation and returns the table (or JSON).
pub fn validate(file: &Path, opts: &Options, repeat: u32, pred: &Prediction, json: bool) -> Result<String> {
    if repeat == 0 || repeat > REPEAT_MAX {
        bail!("--repeat {repeat}: must be 1 to {REPEAT_MAX}");
    }
    if let Some(old) = pred.rejudge {
        return rejudge(file, opts, pred, old, json);
    }
    let (text, scenario, host, plan) = super::preflight(file, opts)?;
    let mut overrides = sim_overrides(&scenario, &host);
    let machine_only = overrides.clone();
    overrides.extend(host_base_slice(&scenario, &host));
    // Refused before measuring: a band or a model the scenario cannot run.
    let predictor = Predictor::new(&scenario, &overrides, &machine_only, pred)?;
    for w in &plan.warnings {
        eprintln!("note: {w}");
    }
    let mut measured = Vec::new();
    for k in 0..repeat {
        if opts.progress {
            eprintln!("validate: measurement {} of {repeat}", k + 1);
        }
        // `--perf-data DIR`: one recording per measurement, `DIR/repeat-K`.
        let opts_k = Options { perf_data: opts.perf_data.as_ref().map(|d| repeat_dir(d, k + 1)), ..opts.clone() };
        let raw = super::run_once(file, &text, &scenario, &host, &plan, &opts_k)?;
        let report = collect::report(&scenario, &host, &plan, raw)?;
        super::warn_foreign(&report);
        measured.push(report);
    }
    let predicted = predictor.run()?;
    let first = predicted.reports.first().context("the band has no point")?;
    let infos: Vec<&MeasuredInfo> = measured
        .iter()
        .filter_map(|r| match &r.source {
            ReportSource::Measured(m) => Some(&**m),
            ReportSource::Simulated => None,
        })
        .collect();
    let facts = infos.first().map_or_else(|| collect::host_facts(&host, &plan), |m| m.host.clone());
    // Every repeat aligned the host's ticks with the model's phase.
    let aligned = !infos.is_empty() && infos.iter().all(|m| m.host.tick_offset_ns.is_some());
    let v = Validation {
        scenario: scenario.spec.name.clone(),
        variant: opts.variant.clone(),
        repeats: repeat,
        model: scenario.spec.kernel.label(),
        also_kernel: predictor.also_kernel(),
        also_model: predictor.also_model(),
        sets: super::all_sets(opts),
        sim_overrides: overrides,
        host: {
            let mut h = host_json(&facts);
            // The host's RT and deadline settings as read (validate's own
            // JSON; a measured report carries them as `HostFacts::rt`).
            h["rt"] = serde_json::to_value(&host.rt).unwrap_or_default();
            h["rt_line"] = serde_json::Value::String(host.rt.line());
            h
        },
        delays_from: measured.iter().map(delays_from).collect(),
        rows: rows(&predicted.bands, aligned, predicted.also.as_ref(), &measured_values(&measured)),
        noise: pred.noise.map(|p| p.display().to_string()),
        phases: pred.phases,
        seeds: pred.seeds,
        tick_offsets_ns: tick_offsets(&predicted.bands),
        rejudged_from: None,
        wakeup_fits: wakeup_fits(&infos),
        quota: quota_rows(first, &measured),
        not_reproduced: plan.not_reproduced.iter().cloned().collect(),
    };
    Ok(if json { serde_json::to_string_pretty(&v)? + "\n" } else { table(&v) })
}

fn delays_from(r: &RunReport) -> String {
    match &r.source {
        sim_core::ReportSource::Measured(m) => m.delays_from.clone(),
        sim_core::ReportSource::Simulated => "simulated".into(),
    }
}

fn host_json(f: &sim_core::HostFacts) -> serde_json::Value {
    serde_json::json!({
        "kernel_release": f.kernel_release, "scheduler": f.scheduler, "hz": f.hz, "hz_source": f.hz_source,
        "preempt": f.preempt, "cgroup": f.cgroup, "autogroup": f.autogroup, "cpus_online": f.cpus_online,
        "cpu_map": f.cpu_map, "cpu_model": f.cpu_model, "virtualized": f.virtualized,
        "sched_cmdline": f.sched_cmdline, "sched_cmdline_non_upstream": f.sched_cmdline_non_upstream,
        "tick_grid_ns": f.tick_grid_ns, "tick_offset_ns": f.tick_offset_ns, "tick_grid_missing": f.tick_grid_missing,
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
    if let Some(line) = h["rt_line"].as_str() {
        let _ = writeln!(out, "{line}");
    }
    for (key, why) in &v.not_reproduced {
        let _ = writeln!(out, "warning: {key} is predicted but NOT reproduced by the measurement ({why})");
    }
    if !v.sets.is_empty() {
        let _ = writeln!(out, "measured and predicted with --set {}", v.sets.join(" --set "));
    }
    if !v.sim_overrides.is_empty() {
        let _ = writeln!(out, "prediction run with --set {}", v.sim_overrides.join(" --set "));
    }
    if let (Some(k), Some(m)) = (&v.also_kernel, &v.also_model) {
        let _ = writeln!(out, "column \"predicted {k}\": the same machine predicted by model {m} (no verdict)");
    }
    match (v.host["tick_offset_ns"].as_u64(), v.host["tick_grid_missing"].as_str()) {
        (Some(o), _) => {
            let _ = writeln!(out, "host ticks aligned: start + {} + k × tick, as the model's", format_duration(o));
        }
        (None, Some(why)) => {
            let _ = writeln!(out, "warning: {why}");
        }
        _ => {}
    }
    for f in &v.wakeup_fits {
        let _ = writeln!(
            out,
            "measured wake-ups of {} ({}): p50 {}, p99 {} → machine.wakeup_latency=\"{}\"",
            f.task,
            f.from,
            format_duration(f.p50_ns),
            format_duration(f.p99_ns),
            f.dist
        );
    }
    let also_head = v.also_kernel.as_ref().map(|k| format!("predicted {k}"));
    let also_cell = |r: &Row| match (&also_head, r.predicted_also_ns) {
        (Some(h), Some(ns)) => format!(" {:>w$}", format_duration(ns), w = h.chars().count().max(11)),
        (Some(h), None) => format!(" {:>w$}", "-", w = h.chars().count().max(11)),
        (None, _) => String::new(),
    };
    let offsets: Vec<String> = v.tick_offsets_ns.iter().map(|&o| format_duration(o)).collect();
    let basis = v.rows.first().map_or(BASIS_ALIGNED, |r| r.basis);
    let _ = writeln!(
        out,
        "band: {} tick phase(s) (offsets {}) × {} seed(s); the verdict compares the {}{}",
        v.phases,
        offsets.join(", "),
        v.seeds,
        if basis == BASIS_ALIGNED {
            "prediction at the host's aligned phase"
        } else {
            "predicted median over the phases (the host's phase was not aligned)"
        },
        v.noise.as_ref().map_or(String::new(), |n| format!("; machine noise from {n}"))
    );
    let _ = writeln!(
        out,
        "\n{:<14} {:<4} {:>11}{} {:>25} {:>11} {:>23} {:>9}  verdict",
        "task",
        "stat",
        "predicted",
        also_head.as_ref().map_or(String::new(), |h| format!(" {h:>11}")),
        "band median [min–max]",
        "measured",
        "measured min–max",
        "error"
    );
    for r in &v.rows {
        let flag = match (r.phase_sensitive, r.seed_sensitive) {
            (true, true) => "  (phase- and seed-sensitive)",
            (true, false) => "  (phase-sensitive)",
            (false, true) => "  (seed-sensitive)",
            _ => "",
        };
        let _ = writeln!(
            out,
            "{:<14} {:<4} {:>11}{} {:>25} {:>11} {:>23} {:>9}  {}{}",
            r.task,
            r.stat,
            format_duration(r.predicted_ns),
            also_cell(r),
            format!(
                "{} [{}–{}]",
                format_duration(r.band_median_ns),
                format_duration(r.band_min_ns),
                format_duration(r.band_max_ns)
            ),
            format_duration(r.measured_ns),
            format!("{}–{}", format_duration(r.measured_min_ns), format_duration(r.measured_max_ns)),
            r.error_pct.map_or("-".into(), |e| format!("{e:+.0}%")),
            r.verdict,
            flag
        );
    }
    let within = v.rows.iter().filter(|r| r.verdict.starts_with("within")).count();
    let _ = writeln!(
        out,
        "\n{within} of {} figures within ±{TOLERANCE_PCT:.0}% (delay = every scheduling delay: wake-up or preemption to running; measured = median over the repeats)",
        v.rows.len()
    );
    if !v.quota.is_empty() {
        let _ = writeln!(
            out,
            "\nCPU quota (cpu.stat over the run; cpu_pct = CPU time / run, %)\n{:<20} {:<24} {:>11} {:>11} {:>21} {:>9}  verdict",
            "group/task", "stat", "predicted", "measured", "measured min–max", "error"
        );
        let num = |x: f64| if x.fract() == 0.0 && x.abs() < 1e12 { format!("{x:.0}") } else { format!("{x:.2}") };
        for r in &v.quota {
            let _ = writeln!(
                out,
                "{:<20} {:<24} {:>11} {:>11} {:>21} {:>9}  {}",
                r.what,
                r.stat,
                num(r.predicted),
                num(r.measured),
                format!("{}–{}", num(r.measured_min), num(r.measured_max)),
                r.error_pct.map_or("-".into(), |e| format!("{e:+.0}%")),
                r.verdict
            );
        }
        let within = v.quota.iter().filter(|r| r.verdict.starts_with("within")).count();
        let _ = writeln!(out, "{within} of {} quota figures within ±{TOLERANCE_PCT:.0}%", v.quota.len());
    }
    out
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
