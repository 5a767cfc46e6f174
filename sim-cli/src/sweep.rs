//! `sim-cli sweep` and `sim-cli merge`: a grid of settings run in parallel
//! over cores (each point a deterministic run of the core's one API), ranked by
//! the target task's scheduling delay, as a table, JSON lines or a chart.
//!
//! Threads only decide *when* a point runs, never what it computes: results
//! are put back in grid order before anything is printed, so the output is
//! the same for any `--jobs` and any shard split. JSON lines carry a
//! fingerprint of everything that defines the sweep, so `merge` refuses to
//! combine shards of different sweeps.

use crate::args::SweepArgs;
use crate::progress;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use sim_core::StopReason;
use sim_core::sweep::{self, Axis, Grid, Metric, PointResult};
use sim_core::time::{column_unit, format_in};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// What a sweep is, apart from its results: the header of the table and the
/// fields every JSON line repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Sweep {
    fingerprint: String,
    scenario: String,
    variant: Option<String>,
    seed: u64,
    sets: Vec<String>,
    target: String,
    metric: Metric,
    grid: Grid,
}

impl Sweep {
    /// `seed N`, or `seed varied` when an axis varies it (each JSON line
    /// then carries its point's seed).
    fn seed_text(&self) -> String {
        if self.grid.axes.iter().any(|a| a.key == "seed") {
            "seed varied".to_string()
        } else {
            format!("seed {}", self.seed)
        }
    }
}

/// Version of the sweep JSON lines (`schema` in each line); `merge` refuses
/// any other.
pub const LINE_SCHEMA: u32 = 1;

/// One JSON line: one grid point. Field names are the contract `merge` reads.
#[derive(Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct PointLine {
    /// Version of the line's layout (1).
    schema: u32,
    /// Fingerprint of the sweep (scenario text, variant, --set, --vary, --target, --metric, version).
    sweep: String,
    index: usize,
    points: usize,
    vary: Vec<String>,
    sets: Vec<String>,
    settings: BTreeMap<String, String>,
    target: String,
    metric: String,
    metric_ns: u64,
    p99_ns: u64,
    max_ns: u64,
    avg_ns: u64,
    count: u64,
    /// Waits of the target still open at the end, and the longest (0, 0 when none).
    #[serde(default)]
    open_count: u64,
    #[serde(default)]
    open_max_ns: u64,
    switches: u64,
    events: u64,
    sim_time_ns: u64,
    stop: String,
    seed: u64,
    scenario: String,
    variant: Option<String>,
}

/// FNV-1a, 64 bits, over length-prefixed fields (so `["ab", "c"]` and
/// `["a", "bc"]` differ).
fn fnv1a(fields: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in fields {
        for b in (f.len() as u64).to_le_bytes().iter().chain(f.as_bytes()) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// `K/N` with 1 ≤ K ≤ N.
fn parse_shard(text: &str) -> Result<(usize, usize)> {
    let parsed = text.split_once('/').and_then(|(k, n)| Some((k.trim().parse().ok()?, n.trim().parse().ok()?)));
    match parsed {
        Some((k, n)) if 1 <= k && k <= n => Ok((k, n)),
        _ => bail!("--shard {text}: expected K/N with 1 ≤ K ≤ N, e.g. --shard 2/4"),
    }
}

/// The grid indices shard `k` of `n` runs: every n-th point, from k-1.
fn shard_indices(len: usize, shard: Option<(usize, usize)>) -> Vec<usize> {
    match shard {
        None => (0..len).collect(),
        Some((k, n)) => (k - 1..len).step_by(n).collect(),
    }
}

fn parse_budget(text: &str) -> Result<u64> {
    sim_core::workload::dist::parse_duration(text).map_err(|e| anyhow::anyhow!("--budget {text}: {e}"))
}

pub fn sweep(a: SweepArgs) -> Result<String> {
    let axes = a.vary.iter().map(|s| Axis::parse(s)).collect::<Result<Vec<_>, _>>().map_err(anyhow::Error::msg)?;
    let grid = Grid::new(axes).map_err(anyhow::Error::msg)?;
    let metric = Metric::parse(&a.metric).map_err(anyhow::Error::msg)?;
    let budget = a.budget.as_deref().map(parse_budget).transpose()?;
    let shard = a.shard.as_deref().map(parse_shard).transpose()?;
    // clap keeps --jobs within 1..=JOBS_MAX, as for compare.
    let jobs = match a.jobs {
        Some(j) => usize::from(j),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if a.plot.is_some() && grid.axes.len() > 2 {
        bail!(
            "--plot: a sweep chart needs one varied key (a line chart) or two (a heat map); this sweep varies {}",
            grid.axes.len()
        );
    }
    for kv in &a.common.set {
        let key = kv.split_once('=').map_or(kv.as_str(), |(k, _)| k).trim();
        if let Some(axis) = grid.axes.iter().find(|ax| ax.key == key) {
            bail!("--set {kv} and --vary {} both set `{key}`; vary it or fix it, not both", axis.spec);
        }
    }

    let (text, loaded) = crate::run::load_text(&a.common.file, &a.common.set)?;
    let mut base = loaded;
    if let Some(v) = &a.variant {
        base = base.with_variant(v)?;
    }
    if let Some(t) = &a.target {
        base = sweep::with_target(&base, t).with_context(|| format!("--target {t}"))?;
    }
    sweep::validate(&base, &grid).with_context(|| format!("--vary {}", a.vary.join(" --vary ")))?;

    if metric == Metric::RequestP99 && base.spec.sources.iter().all(|s| s.route.len() < 2) {
        anyhow::bail!(
            "--metric request-p99: no source's requests cross a hop in this scenario (give a task `forward = \"NAME\"`)"
        );
    }
    let target = base.spec.tasks[base.spec.victim].name.clone();
    let mut fields: Vec<&str> = vec![env!("CARGO_PKG_VERSION"), &text, a.variant.as_deref().unwrap_or("")];
    fields.push("--set");
    fields.extend(a.common.set.iter().map(String::as_str));
    fields.push("--vary");
    fields.extend(a.vary.iter().map(String::as_str));
    fields.extend([a.target.as_deref().unwrap_or(""), metric.name()]);
    let info = Sweep {
        fingerprint: fnv1a(&fields),
        scenario: base.spec.name.clone(),
        variant: a.variant.clone(),
        seed: base.spec.seed,
        sets: a.common.set.clone(),
        target,
        metric,
        grid,
    };

    let todo = shard_indices(info.grid.len(), shard);
    let bar = progress::bar(todo.len() as u64, "points", !a.common.json);
    let results = run_points(&base, &info.grid, metric, &todo, jobs, &|| bar.inc(1))?;
    bar.finish_and_clear();

    if let Some(dir) = &a.plot {
        write_plot(dir, &info, &results)?;
    }
    // Nothing but the table or the JSON lines goes to stdout: where the
    // chart went is a diagnostic (as `run --plot` says it), on stderr.
    if a.common.json {
        return Ok(json_lines(&info, &results));
    }
    let scope = match shard {
        Some((k, n)) => format!("shard {k}/{n}: {} of {} points", results.len(), info.grid.len()),
        None => format!("{} points", info.grid.len()),
    };
    Ok(table(&info, results, budget, &scope))
}

/// Runs `todo` on `jobs` threads, each taking the next index from a shared
/// counter; returns the results in `todo` order.
fn run_points(
    base: &sim_core::Scenario,
    grid: &Grid,
    metric: Metric,
    todo: &[usize],
    jobs: usize,
    done: &(dyn Fn() + Sync),
) -> Result<Vec<PointResult>> {
    let results = crate::parallel::map_in_order(todo, jobs, "sweep", |&index| {
        let r = sweep::run_point(base, grid, index, metric);
        done();
        r
    });
    Ok(results.into_iter().collect::<Result<Vec<_>, _>>()?)
}

fn json_lines(info: &Sweep, results: &[PointResult]) -> String {
    let mut out = String::new();
    for r in results {
        let line = PointLine {
            schema: LINE_SCHEMA,
            sweep: info.fingerprint.clone(),
            index: r.index,
            points: info.grid.len(),
            vary: info.grid.axes.iter().map(|a| a.spec.clone()).collect(),
            sets: info.sets.clone(),
            settings: r.settings.iter().cloned().collect(),
            target: info.target.clone(),
            metric: info.metric.name().to_string(),
            metric_ns: r.metric_ns,
            p99_ns: r.p99_ns,
            max_ns: r.max_ns,
            avg_ns: r.avg_ns,
            count: r.count,
            open_count: r.open_count,
            open_max_ns: r.open_max_ns,
            switches: r.switches,
            events: r.events,
            sim_time_ns: r.sim_time_ns,
            stop: r.stop.name().to_string(),
            seed: r.seed,
            scenario: info.scenario.clone(),
            variant: info.variant.clone(),
        };
        out.push_str(&serde_json::to_string(&line).expect("plain data serializes"));
        out.push('\n');
    }
    out
}

fn switches_per_s(r: &PointResult) -> String {
    if r.sim_time_ns == 0 {
        return "-".into();
    }
    format!("{:.0}", r.switches as f64 * 1e9 / r.sim_time_ns as f64)
}

fn settings_text(r: &PointResult) -> String {
    r.settings.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// A table column: its name and how to read it from a point.
type Figure = (&'static str, fn(&PointResult) -> u64);

/// The header, the points best first, and the settings within `budget`.
fn table(info: &Sweep, mut results: Vec<PointResult>, budget: Option<u64>, scope: &str) -> String {
    let mut out = String::new();
    let m = info.metric;
    let _ = writeln!(
        out,
        "schedlab {} · sweep {} · scenario {}{} · {} · {scope}",
        env!("CARGO_PKG_VERSION"),
        info.fingerprint,
        if info.scenario.is_empty() { "(unnamed)" } else { &info.scenario },
        info.variant.as_ref().map_or(String::new(), |v| format!(" (variant {v})")),
        info.seed_text(),
    );
    let _ = writeln!(
        out,
        "ranked by the {} of {}; fixed: {}",
        if m == Metric::RequestP99 {
            "p99 end-to-end request latency (request-p99); p99, max, avg: scheduling delay".to_string()
        } else {
            format!("{} scheduling delay", m.name())
        },
        info.target,
        if info.sets.is_empty() { "nothing (file values)".to_string() } else { info.sets.join(" ") }
    );
    let mut figures: Vec<Figure> = vec![("p99", |r| r.p99_ns), ("max", |r| r.max_ns), ("avg", |r| r.avg_ns)];
    let ranked: Figure = (m.name(), |r| r.metric_ns);
    figures.retain(|(n, _)| *n != m.name());
    figures.insert(0, ranked);
    let key_widths: Vec<usize> = info
        .grid
        .axes
        .iter()
        .map(|a| a.values.iter().map(String::len).chain([a.key.len()]).max().unwrap_or(0))
        .collect();
    out.push('\n');
    let mut head = String::from(" ");
    for (a, w) in info.grid.axes.iter().zip(&key_widths) {
        let _ = write!(head, " {:<w$}", a.key);
    }
    // Each column in the unit of its largest value, as the unit in its header.
    let units: Vec<(u64, &str)> = figures.iter().map(|(_, f)| column_unit(results.iter().map(f))).collect();
    for (i, ((n, _), (_, unit))) in figures.iter().zip(&units).enumerate() {
        let label = if i == 0 { format!("{n} {unit} ▲") } else { format!("{n} {unit}") };
        let _ = write!(head, " {label:>10}");
    }
    let _ = write!(head, " {:>9} {:>10}", "switches", "switches/s");
    let _ = writeln!(out, "{}", head.trim_end());
    sweep::sort_by_metric(&mut results);
    for r in &results {
        let mut line = String::from(" ");
        for ((_, v), w) in r.settings.iter().zip(&key_widths) {
            let _ = write!(line, " {v:<w$}");
        }
        for ((_, f), unit) in figures.iter().zip(&units) {
            let _ = write!(line, " {:>10}", format_in(f(r), *unit));
        }
        let _ = write!(line, " {:>9} {:>10}", r.switches, switches_per_s(r));
        if r.stop != StopReason::TimeLimit && r.stop != StopReason::Quiescent {
            let _ = write!(line, "  partial: {}", r.stop.name());
        }
        if r.count == 0 {
            line.push_str("  (no delays measured)");
        }
        if r.open_count > 0 {
            let oldest = sim_core::time::format_duration(r.open_max_ns);
            let _ = write!(line, "  ({})", sim_core::metrics::latency::still_waiting(r.open_count, &oldest));
        }
        let _ = writeln!(out, "{line}");
    }
    if let Some(b) = budget {
        let fmt_b = sim_core::time::format_duration(b);
        let ok = sweep::within_budget(&results, b);
        out.push('\n');
        match results.first() {
            _ if !ok.is_empty() => {
                let _ = writeln!(
                    out,
                    "Settings meeting the budget ({} ≤ {fmt_b}), cheapest in context switches first:",
                    m.name()
                );
                let width = ok.iter().map(|r| settings_text(r).chars().count()).max().unwrap_or(0);
                for r in ok {
                    let _ = writeln!(
                        out,
                        "  {:<width$}  {} {} {}  {} switches ({}/s)",
                        settings_text(r),
                        m.name(),
                        format_in(r.metric_ns, units[0]),
                        units[0].1,
                        r.switches,
                        switches_per_s(r)
                    );
                }
            }
            Some(best) => {
                let _ = writeln!(
                    out,
                    "No setting meets the budget ({} ≤ {fmt_b}); the best is {} {} with {} ({} switches).",
                    m.name(),
                    format_in(best.metric_ns, units[0]),
                    units[0].1,
                    settings_text(best),
                    best.switches
                );
            }
            None => {
                let _ = writeln!(out, "No points were run.");
            }
        }
    }
    out
}

fn write_plot(dir: &Path, info: &Sweep, results: &[PointResult]) -> Result<()> {
    use plotters::prelude::*;
    std::fs::create_dir_all(dir).with_context(|| format!("--plot: cannot create {}", dir.display()))?;
    let fixed = if info.sets.is_empty() { String::new() } else { format!(" · fixed: {}", info.sets.join(" ")) };
    let caption = format!(
        "schedlab {} · {}{} · {}{fixed} · sweep {}",
        env!("CARGO_PKG_VERSION"),
        info.scenario,
        info.variant.as_ref().map_or(String::new(), |v| format!(" (variant {v})")),
        info.seed_text(),
        info.fingerprint
    );
    let chart = sim_core::plot::sweep::SweepChart {
        grid: &info.grid,
        results,
        metric: info.metric,
        target: &info.target,
        caption: &caption,
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 600)).into_drawing_area();
        sim_core::plot::sweep::sweep_chart(&root, &chart).map_err(anyhow::Error::msg)?;
        root.present().map_err(|e| anyhow::anyhow!("drawing failed: {e}"))?;
    }
    let path = dir.join("sweep.svg");
    std::fs::write(&path, svg).with_context(|| format!("--plot: cannot write {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// The JSON Schema of one `sweep --json` line.
pub fn line_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(PointLine);
    schema.insert("title".into(), format!("schedlab sweep --json line (schema {LINE_SCHEMA})").into());
    schema.insert("$id".into(), "https://schedlab.invalid/docs/schema/sweep-line.schema.json".into());
    schema.to_value()
}

/// Reads shards' JSON lines: one sweep (one fingerprint), every index once.
fn merge_texts(inputs: &[(String, String)]) -> Result<(Sweep, Vec<PointResult>)> {
    let mut info: Option<(Sweep, String)> = None;
    let mut by_index: BTreeMap<usize, (PointResult, String)> = BTreeMap::new();
    for (name, text) in inputs {
        for (n, line) in text.lines().enumerate() {
            let at = format!("{name}:{}", n + 1);
            if line.trim().is_empty() {
                continue;
            }
            let value: serde_json::Value =
                serde_json::from_str(line).with_context(|| format!("{at}: not a line of `sim-cli sweep --json`"))?;
            match value.get("schema") {
                Some(v) if v.as_u64() == Some(u64::from(LINE_SCHEMA)) => {}
                Some(v) => bail!(
                    "{at}: sweep line schema {v}; this sim-cli ({}) reads schema {LINE_SCHEMA}: merge with the version that wrote it, or re-run the sweep",
                    env!("CARGO_PKG_VERSION")
                ),
                None if value.get("sweep").is_some() => bail!(
                    "{at}: the line has no `schema` field: written by a sim-cli older than schema {LINE_SCHEMA} lines; re-run that shard with this version"
                ),
                None => bail!("{at}: not a line of `sim-cli sweep --json` (no `schema` or `sweep` field)"),
            }
            let p: PointLine =
                serde_json::from_value(value).with_context(|| format!("{at}: not a line of `sim-cli sweep --json`"))?;
            let (sweep, first_at) = match &info {
                Some(i) => (&i.0, &i.1),
                None => {
                    let axes = p.vary.iter().map(|s| Axis::parse(s)).collect::<Result<Vec<_>, _>>();
                    let grid = axes.and_then(Grid::new).map_err(|e| anyhow::anyhow!("{at}: {e}"))?;
                    let metric = Metric::parse(&p.metric).map_err(|e| anyhow::anyhow!("{at}: {e}"))?;
                    let s = Sweep {
                        fingerprint: p.sweep.clone(),
                        scenario: p.scenario.clone(),
                        variant: p.variant.clone(),
                        seed: p.seed,
                        sets: p.sets.clone(),
                        target: p.target.clone(),
                        metric,
                        grid,
                    };
                    info = Some((s, at.clone()));
                    let i = info.as_ref().expect("just set");
                    (&i.0, &i.1)
                }
            };
            if p.sweep != sweep.fingerprint {
                bail!(
                    "{at}: sweep {} is not sweep {} of {first_at}: shards of different sweeps (scenario, variant, --set, --vary, --target, --metric or version differ) cannot be merged",
                    p.sweep,
                    sweep.fingerprint
                );
            }
            if p.points != sweep.grid.len() || p.index >= sweep.grid.len() {
                bail!("{at}: point {} of {} does not fit the {}-point grid", p.index, p.points, sweep.grid.len());
            }
            let settings: Vec<(String, String)> =
                sweep.grid.point(p.index).into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            if settings.iter().cloned().collect::<BTreeMap<_, _>>() != p.settings {
                bail!("{at}: the settings of point {} are not the grid's ({})", p.index, {
                    settings.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
                });
            }
            let reasons = [
                StopReason::TimeLimit,
                StopReason::EventLimit,
                StopReason::Quiescent,
                StopReason::Stalled,
                StopReason::BudgetSpent,
            ];
            let stop = reasons.into_iter().find(|s| s.name() == p.stop).ok_or_else(|| {
                let allowed: Vec<&str> = reasons.iter().map(|r| r.name()).collect();
                anyhow::anyhow!("{at}: `stop` = `{}` is not a stop reason; allowed: {}", p.stop, allowed.join(", "))
            })?;
            let r = PointResult {
                index: p.index,
                settings,
                metric_ns: p.metric_ns,
                p99_ns: p.p99_ns,
                max_ns: p.max_ns,
                avg_ns: p.avg_ns,
                count: p.count,
                open_count: p.open_count,
                open_max_ns: p.open_max_ns,
                switches: p.switches,
                events: p.events,
                sim_time_ns: p.sim_time_ns,
                stop,
                seed: p.seed,
            };
            // A point run twice (a retried shard) must give the same figures: runs are deterministic.
            match by_index.get(&p.index) {
                Some((seen, seen_at)) if *seen != r => {
                    bail!("{at}: point {} differs from the same point at {seen_at}", p.index)
                }
                Some(_) => {}
                None => {
                    by_index.insert(p.index, (r, at));
                }
            }
        }
    }
    let Some((sweep, _)) = info else {
        bail!("no points in {}", inputs.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", "));
    };
    let missing: Vec<usize> = (0..sweep.grid.len()).filter(|i| !by_index.contains_key(i)).collect();
    if !missing.is_empty() {
        let first: Vec<String> = missing.iter().take(5).map(usize::to_string).collect();
        bail!(
            "{} of {} points are missing (first: {}{}); is a shard missing?",
            missing.len(),
            sweep.grid.len(),
            first.join(", "),
            if missing.len() > 5 { ", …" } else { "" }
        );
    }
    Ok((sweep, by_index.into_values().map(|(r, _)| r).collect()))
}

pub fn merge(files: &[PathBuf], budget: Option<&str>, json: bool, plot: Option<&Path>) -> Result<String> {
    let budget = budget.map(parse_budget).transpose()?;
    let mut inputs = Vec::with_capacity(files.len());
    for f in files {
        let text = crate::run::input::read_text_bounded(
            f,
            crate::run::input::SWEEP_LINES_MAX,
            "file of `sweep --json` lines",
        )?;
        inputs.push((f.display().to_string(), text));
    }
    let (info, results) = merge_texts(&inputs)?;
    if let Some(dir) = plot {
        if info.grid.axes.len() > 2 {
            bail!("--plot: a sweep chart needs one or two varied keys; this sweep varies {}", info.grid.axes.len());
        }
        write_plot(dir, &info, &results)?;
    }
    if json {
        return Ok(json_lines(&info, &results));
    }
    let scope = format!("{} points merged from {} files", results.len(), files.len());
    Ok(table(&info, results, budget, &scope))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(grid: &Grid, index: usize) -> PointResult {
        PointResult {
            index,
            settings: grid.point(index).into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            metric_ns: 1_000_000 * (index as u64 + 1),
            p99_ns: 1_000_000 * (index as u64 + 1),
            max_ns: 2_000_000,
            avg_ns: 500_000,
            count: 10,
            open_count: 0,
            open_max_ns: 0,
            switches: 100 - index as u64,
            events: 1000,
            sim_time_ns: 1_000_000_000,
            stop: StopReason::TimeLimit,
            seed: 1,
        }
    }

    fn info(fingerprint: &str) -> Sweep {
        Sweep {
            fingerprint: fingerprint.into(),
            scenario: "two-hogs".into(),
            variant: None,
            seed: 1,
            sets: vec!["machine.hz=1000".into()],
            target: "hog-a".into(),
            metric: Metric::P99,
            grid: Grid::new(vec![Axis::parse("cfs.sched_latency_ns=1ms,2ms,4ms,8ms").unwrap()]).unwrap(),
        }
    }

    /// The JSON lines of points `indices` of a 4-point sweep.
    fn shard(fingerprint: &str, indices: &[usize]) -> String {
        let i = info(fingerprint);
        let rs: Vec<PointResult> = indices.iter().map(|&k| result(&i.grid, k)).collect();
        json_lines(&i, &rs)
    }

    #[test]
    fn shards_split_the_grid_without_overlap() {
        assert_eq!(shard_indices(10, Some((1, 3))), [0, 3, 6, 9]);
        assert_eq!(shard_indices(10, Some((3, 3))), [2, 5, 8]);
        assert_eq!(shard_indices(2, Some((3, 4))), Vec::<usize>::new());
        let mut all: Vec<usize> = (1..=4).flat_map(|k| shard_indices(10, Some((k, 4)))).collect();
        all.sort_unstable();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
        for bad in ["0/4", "5/4", "x/4", "2", "1/0"] {
            assert!(parse_shard(bad).unwrap_err().to_string().contains("1 ≤ K ≤ N"), "{bad}");
        }
    }

    #[test]
    fn merge_rebuilds_the_sweep_and_deduplicates() {
        let a = shard("f00d", &[0, 2]);
        // Shard 2 retried: its lines appear twice.
        let b = shard("f00d", &[1, 3]).repeat(2);
        let (sweep, results) = merge_texts(&[("a.jsonl".into(), a), ("b.jsonl".into(), b)]).unwrap();
        assert_eq!(sweep, info("f00d"));
        assert_eq!(results.iter().map(|r| r.index).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(results[3], result(&sweep.grid, 3));
        let table = table(&sweep, results, Some(2_000_000), "4 points");
        assert!(table.contains("cfs.sched_latency_ns=2ms  p99 2.000 ms  99 switches"), "{table}");
    }

    #[test]
    fn merge_refuses_mixed_sweeps_gaps_conflicts_and_garbage() {
        let err = |inputs: &[(&str, String)]| {
            let owned: Vec<(String, String)> = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
            format!("{:#}", merge_texts(&owned).unwrap_err())
        };
        let e = err(&[("a", shard("f00d", &[0, 2])), ("b", shard("beef", &[1, 3]))]);
        assert!(e.starts_with("b:1: sweep beef is not sweep f00d of a:1"), "{e}");
        let e = err(&[("a", shard("f00d", &[0])), ("b", shard("f00d", &[2]))]);
        assert!(e.contains("2 of 4 points are missing (first: 1, 3)"), "{e}");
        let changed = shard("f00d", &[1]).replace("\"switches\":99", "\"switches\":7");
        let e = err(&[("a", shard("f00d", &[0, 1, 2, 3])), ("b", changed)]);
        assert!(e.contains("b:1: point 1 differs from the same point at a:2"), "{e}");
        let e = err(&[("a", format!("{}{{\"schema\": 1, \"sweep\": 1}}\n", shard("f00d", &[0])))]);
        assert!(e.starts_with("a:2: not a line of `sim-cli sweep --json`"), "{e}");
        let e = err(&[("a", shard("f00d", &[0]).replace("\"stop\":\"time_limit\"", "\"stop\":\"bored\""))]);
        assert!(e.contains("a:1: `stop` = `bored` is not a stop reason; allowed: time_limit"), "{e}");
        let moved = shard("f00d", &[1]).replace("\"index\":1", "\"index\":2");
        let e = err(&[("a", moved)]);
        assert!(e.contains("a:1: the settings of point 2 are not the grid's"), "{e}");
    }

    #[test]
    fn lines_carry_a_schema_that_merge_checks() {
        let lines = shard("f00d", &[0]);
        let v: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
        assert_eq!(v["schema"], LINE_SCHEMA);
        let err = |text: String| format!("{:#}", merge_texts(&[("a".into(), text)]).unwrap_err());
        let e = err(lines.replace("\"schema\":1,", "\"schema\":2,"));
        assert!(e.starts_with("a:1: sweep line schema 2; this sim-cli") && e.contains("reads schema 1"), "{e}");
        let e = err(lines.replace("\"schema\":1,", ""));
        assert!(e.starts_with("a:1: the line has no `schema` field") && e.contains("re-run that shard"), "{e}");
        // The schema describes the lines actually written.
        let schema = line_schema();
        let props = schema["properties"].as_object().unwrap();
        let mut written: Vec<&String> = v.as_object().unwrap().keys().collect();
        let mut described: Vec<&String> = props.keys().collect();
        written.sort();
        described.sort();
        assert_eq!(written, described);
    }

    /// Each figure column is printed in the unit of its largest value, named
    /// in its header (not milliseconds with three decimals throughout).
    #[test]
    fn table_columns_choose_their_units() {
        let i = info("f00d");
        let mut rs: Vec<PointResult> = (0..4).map(|k| result(&i.grid, k)).collect();
        rs[0].max_ns = 3_500_000_000;
        let t = table(&i, rs, None, "4 points");
        let head = t.lines().find(|l| l.contains("▲")).unwrap();
        assert!(head.contains("p99 ms ▲") && head.contains("max s") && head.contains("avg us"), "{head}");
        let best = t.lines().find(|l| l.contains(" 1ms ")).unwrap();
        assert!(best.contains("1.000") && best.contains("3.500") && best.contains("500.000"), "{best}");
    }

    /// Defect: `sweep --plot` and `merge --plot` announced the chart on
    /// stdout, after the table. Stdout is the table or the JSON lines alone.
    #[test]
    fn plot_writes_the_chart_and_keeps_stdout_for_the_output() {
        let dir = std::env::temp_dir().join(format!("sim-cli-sweep-plot-{}", std::process::id()));
        let file = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/two-hogs.toml"));
        let args = |json: bool| SweepArgs {
            common: crate::args::Common { file: file.clone(), set: vec!["duration=50ms".into()], json, warmup: None },
            vary: vec!["cfs.sched_latency_ns=2ms,4ms".into()],
            variant: None,
            target: None,
            metric: "p99".into(),
            budget: None,
            shard: None,
            jobs: Some(1u16),
            plot: Some(dir.clone()),
        };
        let out = sweep(args(false)).unwrap();
        assert!(dir.join("sweep.svg").is_file());
        assert!(!out.contains("chart") && !out.contains("sweep.svg"), "{out}");
        let lines = sweep(args(true)).unwrap();
        assert!(lines.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()), "{lines}");
        let shard = dir.join("all.jsonl");
        std::fs::write(&shard, &lines).unwrap();
        let merged = merge(&[shard], None, false, Some(&dir)).unwrap();
        assert!(merged.contains("2 points merged") && !merged.contains("sweep.svg"), "{merged}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn fingerprints_separate_fields() {
        assert_ne!(fnv1a(&["ab", "c"]), fnv1a(&["a", "bc"]));
        assert_eq!(fnv1a(&[]), "cbf29ce484222325");
        assert_eq!(fnv1a(&["x"]).len(), 16);
    }
}
