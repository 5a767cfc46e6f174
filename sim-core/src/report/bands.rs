//! Bands: one scenario evaluated over the inputs it leaves open (where the
//! tick grid falls against its wake-ups, and the seed), and each delay
//! statistic reported as the value at the scenario as given, the median over
//! all points and the min–max band, with flags for a statistic whose band
//! over phases (or over seeds) is wider than ±25 % of its median.
//!
//! Pure and deterministic: a plan gives the points, the caller runs each
//! point's scenario (`BandPlan::scenario`, the same override mechanism as
//! `--set`) however it likes (threads, a Web Worker), and `bands` folds the
//! reports, taken in the points' order. Integer arithmetic only, so the band
//! is the same bytes natively and in wasm32.

use super::run::{NamedDelay, RunReport};
use crate::scenario::{Scenario, ScenarioError};
use crate::sched::tunables::tick_nsec;
use serde::{Deserialize, Serialize};

/// Most tick phases `--phases` may ask for.
pub const BAND_PHASES_MAX: u32 = 64;
/// Most seeds `--seeds` may ask for.
pub const BAND_SEEDS_MAX: u32 = 32;
/// A band wider than this (either side of its median, in percent) flags the
/// statistic as phase- or seed-sensitive.
pub const BAND_TOLERANCE_PCT: f64 = 25.0;

/// The percentiles of a task's curve band, in parts per million (50, 75, 90,
/// 95, 99, 99.5, 99.9, 99.99 and 100 %): integers, so the JSON holds no float.
pub const BAND_CURVE_PPM: [u32; 9] = [500_000, 750_000, 900_000, 950_000, 990_000, 995_000, 999_000, 999_900, 1_000_000];

/// What to vary: `phases` offsets of the tick grid spread evenly across one
/// tick, times `seeds` consecutive seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandPlan {
    pub phases: u32,
    pub seeds: u32,
}

/// One run of a plan: phase `phase` of the plan's phases, seed `seed_index`
/// of its seeds, and the tick offset and seed they give the scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BandPoint {
    pub phase: u32,
    pub seed_index: u32,
    pub tick_offset_ns: u64,
    pub seed: u64,
}

/// A plan's band over every task's delay statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bands {
    pub phases: u32,
    pub seeds: u32,
    pub points: Vec<BandPoint>,
    pub tasks: Vec<TaskBand>,
}

/// One task declaration's bands (its instances merged, as in `task_delays`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskBand {
    pub name: String,
    pub stats: Vec<StatBand>,
    /// The delay CDF's band at the percentiles of `BAND_CURVE_PPM`.
    pub curve: Vec<CurveBand>,
}

/// One statistic over the points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatBand {
    /// `p50`, `p90`, `p99`, `p999` or `max` of the task's delay summary.
    pub stat: &'static str,
    /// At point 0: the scenario as given.
    pub base_ns: u64,
    /// At the scenario's own tick phase (phase 0): the median over the seeds.
    pub own_phase_ns: u64,
    /// The median over all points (the lower one of an even count).
    pub median_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// For some seed, the band over the phases is wider than ±25 % of its median.
    pub phase_sensitive: bool,
    /// For some phase, the band over the seeds is wider than ±25 % of its median.
    pub seed_sensitive: bool,
}

/// One percentile of a task's delay CDF over the points.
// Serde: the explorer's worker sends the victim's band to the page as JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurveBand {
    /// The percentile in parts per million (990000 is p99).
    pub ppm: u32,
    pub min_ns: u64,
    pub median_ns: u64,
    pub max_ns: u64,
}

/// How a statistic is read from a task's delays.
type Read = fn(&NamedDelay) -> u64;

/// The statistics a band covers, with how each is read from a summary.
const STATS: [(&str, Read); 5] = [
    ("p50", |d| d.delay.p50_ns),
    ("p90", |d| d.delay.p90_ns),
    ("p99", |d| d.delay.p99_ns),
    ("p999", |d| d.delay.p999_ns),
    ("max", |d| d.delay.max_ns),
];

impl BandPlan {
    /// A plan of `phases` tick phases times `seeds` seeds. The error names
    /// the flag as the CLI spells it, the value and the allowed range.
    pub fn new(phases: u32, seeds: u32) -> Result<BandPlan, String> {
        if phases == 0 || phases > BAND_PHASES_MAX {
            return Err(format!(
                "--phases {phases}: allowed 1 to {BAND_PHASES_MAX} (tick phases spread evenly across one tick)"
            ));
        }
        if seeds == 0 || seeds > BAND_SEEDS_MAX {
            return Err(format!("--seeds {seeds}: allowed 1 to {BAND_SEEDS_MAX} (consecutive seeds from the scenario's)"));
        }
        Ok(BandPlan { phases, seeds })
    }

    /// Whether the plan is the single run of the scenario as given.
    pub fn is_single(&self) -> bool {
        self.phases == 1 && self.seeds == 1
    }

    /// The runs, seed-major: every phase of seed 0, then every phase of
    /// seed 1, …; so point `j × phases + k` is phase `k` of seed `j`, and
    /// point 0 is the scenario as given. Phase `k` puts the tick grid at
    /// `(own offset + k × TICK_NSEC / phases) mod TICK_NSEC` (integer ns, the
    /// tick of the scenario's HZ); seed `j` is the scenario's seed + `j`.
    pub fn points(&self, s: &Scenario) -> Vec<BandPoint> {
        let tick = tick_nsec(s.spec.hz);
        let own = s.spec.machine.tick_offset_ns;
        let mut out = Vec::with_capacity((self.phases * self.seeds) as usize);
        for j in 0..self.seeds {
            for k in 0..self.phases {
                let step = u64::from(k) * tick / u64::from(self.phases);
                out.push(BandPoint {
                    phase: k,
                    seed_index: j,
                    tick_offset_ns: (own % tick + step) % tick,
                    seed: s.spec.seed.wrapping_add(u64::from(j)),
                });
            }
        }
        out
    }

    /// The scenario of point `p`: `s` with `machine.tick_offset` and `seed`
    /// overridden as `--set` would. Point 0 is `s` itself, untouched.
    pub fn scenario(&self, s: &Scenario, p: &BandPoint) -> Result<Scenario, ScenarioError> {
        if p.phase == 0 && p.seed_index == 0 {
            return Ok(s.clone());
        }
        let offset = p.tick_offset_ns.to_string();
        let seed = p.seed.to_string();
        s.with_overrides(&[("machine.tick_offset", offset.as_str()), ("seed", seed.as_str())])
    }
}

/// The lower median of `v` (sorted in place): `v[(n - 1) / 2]`, 0 if empty.
fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    if v.is_empty() { 0 } else { v[(v.len() - 1) / 2] }
}

/// Whether `v`'s band is wider than ±25 % of its median: min < 0.75·m or
/// max > 1.25·m (a zero median with a positive maximum counts), in integers.
fn wide(v: &[u64]) -> bool {
    let mut s = v.to_vec();
    let m = u128::from(median(&mut s));
    let (lo, hi) = (u128::from(s.first().copied().unwrap_or(0)), u128::from(s.last().copied().unwrap_or(0)));
    4 * lo < 3 * m || 4 * hi > 5 * m
}

/// The value at `ppm` parts per million of a CDF, as a summary's quantile
/// reads it: the first point holding the `ceil(ppm·n / 10⁶)`-th value.
pub fn cdf_value_at(cdf: &[crate::metrics::latency::CdfPoint], ppm: u32) -> u64 {
    let Some(total) = cdf.last().map(|p| p.count) else { return 0 };
    if total == 0 {
        return 0;
    }
    let rank = (u128::from(total) * u128::from(ppm)).div_ceil(1_000_000).max(1) as u64;
    cdf.iter().find(|p| p.count >= rank).or(cdf.last()).map_or(0, |p| p.value_ns)
}

/// The band of `values` (one per point, in the points' order).
fn stat_band(stat: &'static str, values: &[u64], plan: &BandPlan) -> StatBand {
    let (n, k) = (plan.phases as usize, plan.seeds as usize);
    let mut all = values.to_vec();
    let median_ns = median(&mut all);
    // Seed-major: seed j's phases are values[j*n .. j*n + n].
    let phase_sensitive = values.chunks(n.max(1)).any(wide);
    let seed_sensitive = (0..n).any(|p| {
        let col: Vec<u64> = (0..k).filter_map(|j| values.get(j * n + p).copied()).collect();
        wide(&col)
    });
    let mut own: Vec<u64> = values.iter().step_by(n.max(1)).copied().collect();
    StatBand {
        stat,
        base_ns: values.first().copied().unwrap_or(0),
        own_phase_ns: median(&mut own),
        median_ns,
        min_ns: all.first().copied().unwrap_or(0),
        max_ns: all.last().copied().unwrap_or(0),
        phase_sensitive,
        seed_sensitive,
    }
}

/// The bands of `reports`, one per point of `points` in the same order
/// (`plan.points`). Tasks as in the first report's `task_delays` (their
/// declaration order); a task missing from a report counts as no delay there.
pub fn bands(points: &[BandPoint], reports: &[RunReport], plan: &BandPlan) -> Bands {
    let names: Vec<&str> = reports.first().map_or(Vec::new(), |r| r.task_delays.iter().map(|d| d.name.as_str()).collect());
    let tasks = names
        .iter()
        .map(|name| {
            let delays: Vec<Option<&NamedDelay>> =
                reports.iter().map(|r| r.task_delays.iter().find(|d| d.name == *name)).collect();
            let stats = STATS
                .iter()
                .map(|(stat, read)| {
                    let values: Vec<u64> = delays.iter().map(|d| d.map_or(0, read)).collect();
                    stat_band(stat, &values, plan)
                })
                .collect();
            let curve = BAND_CURVE_PPM
                .iter()
                .map(|&ppm| {
                    let mut values: Vec<u64> = delays.iter().map(|d| d.map_or(0, |d| cdf_value_at(&d.cdf, ppm))).collect();
                    let median_ns = median(&mut values);
                    CurveBand {
                        ppm,
                        min_ns: values.first().copied().unwrap_or(0),
                        median_ns,
                        max_ns: values.last().copied().unwrap_or(0),
                    }
                })
                .collect();
            TaskBand { name: name.to_string(), stats, curve }
        })
        .collect();
    Bands { phases: plan.phases, seeds: plan.seeds, points: points.to_vec(), tasks }
}

/// Runs every point of `plan` over `s` in turn and folds the band: the
/// reports (point 0's first) and the band. Front ends that want threads
/// run `BandPlan::scenario` themselves; this is the one-thread path (the
/// web worker, tests).
pub fn run_bands(s: &Scenario, plan: &BandPlan) -> Result<(Vec<RunReport>, Bands), ScenarioError> {
    let points = plan.points(s);
    let mut reports = Vec::with_capacity(points.len());
    for p in &points {
        reports.push(super::run_to_report(&plan.scenario(s, p)?));
    }
    let b = bands(&points, &reports, plan);
    Ok((reports, b))
}

impl StatBand {
    /// The band's half-width as a percentage of its median, rounded up
    /// (the wider side); `None` for a zero median.
    pub fn spread_pct(&self) -> Option<u64> {
        if self.median_ns == 0 {
            return None;
        }
        let side = (self.median_ns - self.min_ns).max(self.max_ns - self.median_ns);
        Some((u128::from(side) * 100).div_ceil(u128::from(self.median_ns)) as u64)
    }
}

#[cfg(test)]
#[path = "bands_tests.rs"]
mod tests;
