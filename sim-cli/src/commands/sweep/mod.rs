//! `sim-cli sweep` (and, in `merge.rs`, `sim-cli merge`): a grid of settings run in parallel
//! over cores (each point a deterministic run of the core's one API), ranked by
//! the target task's scheduling delay, as a table, JSON lines or a chart.
//!
//! Threads only decide *when* a point runs, never what it computes: results
//! are put back in grid order before anything is printed, so the output is
//! the same for any `--jobs` and any shard split. JSON lines carry a
//! fingerprint of everything that defines the sweep, so `merge` refuses to
//! combine shards of different sweeps.

pub mod lines;
pub mod merge;
pub mod table;
#[cfg(test)]
mod tests;

use crate::args::SweepArgs;
use crate::progress;
use anyhow::{Context, Result, bail};
use lines::{Sweep, fnv1a, json_lines};
use sim_core::{Axis, Grid, Metric, PointResult, run_point, sweep_target, validate_sweep};
use table::{parse_budget, table, write_plot};

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

    let (text, loaded) = crate::input::load_text(&a.common.file, &a.common.set)?;
    let mut base = loaded;
    if let Some(v) = &a.variant {
        base = base.with_variant(v)?;
    }
    if let Some(t) = &a.target {
        base = sweep_target(&base, t).with_context(|| format!("--target {t}"))?;
    }
    validate_sweep(&base, &grid).with_context(|| format!("--vary {}", a.vary.join(" --vary ")))?;

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
        let r = run_point(base, grid, index, metric);
        done();
        r
    });
    Ok(results.into_iter().collect::<Result<Vec<_>, _>>()?)
}
