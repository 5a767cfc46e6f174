//! The JSON lines of `sweep --json`, one per grid point: the contract
//! `merge` reads. Each line carries a layout version (`schema`) and a
//! fingerprint of everything that defines the sweep, so `merge` refuses to
//! combine shards of different sweeps; `merge_texts` reads them back.

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use sim_core::{Axis, Grid, Metric, PointResult, StopReason};
use std::collections::BTreeMap;

/// What a sweep is, apart from its results: the header of the table and the
/// fields every JSON line repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Sweep {
    pub(super) fingerprint: String,
    pub(super) scenario: String,
    pub(super) variant: Option<String>,
    pub(super) seed: u64,
    pub(super) sets: Vec<String>,
    pub(super) target: String,
    pub(super) metric: Metric,
    pub(super) grid: Grid,
}

impl Sweep {
    /// `seed N`, or `seed varied` when an axis varies it (each JSON line
    /// then carries its point's seed).
    pub(super) fn seed_text(&self) -> String {
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
    pub(super) scenario: String,
    variant: Option<String>,
}

/// FNV-1a, 64 bits, over length-prefixed fields (so `["ab", "c"]` and
/// `["a", "bc"]` differ).
pub(super) fn fnv1a(fields: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in fields {
        for b in (f.len() as u64).to_le_bytes().iter().chain(f.as_bytes()) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

pub(super) fn json_lines(info: &Sweep, results: &[PointResult]) -> String {
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

/// The JSON Schema of one `sweep --json` line.
pub fn line_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(PointLine);
    schema.insert("title".into(), format!("schedlab sweep --json line (schema {LINE_SCHEMA})").into());
    schema.insert("$id".into(), "https://schedlab.invalid/docs/schema/sweep-line.schema.json".into());
    schema.to_value()
}

/// Reads shards' JSON lines: one sweep (one fingerprint), every index once.
pub(super) fn merge_texts(inputs: &[(String, String)]) -> Result<(Sweep, Vec<PointResult>)> {
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
