//! The JSON form of a band (`bands`): the plan, its points and each task's
//! statistics and curve over them. Integers, strings and booleans only.

use crate::report::bands::{BandPoint, Bands};
use serde::Serialize;

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct BandsDto<'a> {
    /// Tick phases spread evenly across one tick (`--phases`).
    phases: u32,
    /// Consecutive seeds from the scenario's (`--seeds`).
    seeds: u32,
    /// How `points` is ordered: `seed-major` (every phase of the first
    /// seed, then of the next); point 0 is the scenario as given.
    order: &'static str,
    points: Vec<Point>,
    /// Tasks as in `task_delays` (declaration order).
    tasks: Vec<TaskBandDto<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Point {
    phase: u32,
    seed_index: u32,
    tick_offset_ns: u64,
    seed: u64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct TaskBandDto<'a> {
    name: &'a str,
    stats: Vec<StatDto>,
    curve: Vec<CurveDto>,
}

/// One statistic of the task's delay summary over the points.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct StatDto {
    /// `p50`, `p90`, `p99`, `p999` or `max`.
    stat: &'static str,
    /// At point 0 (the scenario as given).
    base_ns: u64,
    /// The median over all points (the lower one of an even count).
    median_ns: u64,
    min_ns: u64,
    max_ns: u64,
    /// For some seed, the band over the phases is wider than ±25 % of its median.
    phase_sensitive: bool,
    /// For some phase, the band over the seeds is wider than ±25 % of its median.
    seed_sensitive: bool,
}

/// One percentile of the task's delay CDF over the points.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct CurveDto {
    /// The percentile in parts per million (990000 is p99).
    ppm: u32,
    min_ns: u64,
    median_ns: u64,
    max_ns: u64,
}

fn point(p: &BandPoint) -> Point {
    Point { phase: p.phase, seed_index: p.seed_index, tick_offset_ns: p.tick_offset_ns, seed: p.seed }
}

pub(super) fn bands_dto(b: &Bands) -> BandsDto<'_> {
    BandsDto {
        phases: b.phases,
        seeds: b.seeds,
        order: "seed-major",
        points: b.points.iter().map(point).collect(),
        tasks: b
            .tasks
            .iter()
            .map(|t| TaskBandDto {
                name: &t.name,
                stats: t
                    .stats
                    .iter()
                    .map(|s| StatDto {
                        stat: s.stat,
                        base_ns: s.base_ns,
                        median_ns: s.median_ns,
                        min_ns: s.min_ns,
                        max_ns: s.max_ns,
                        phase_sensitive: s.phase_sensitive,
                        seed_sensitive: s.seed_sensitive,
                    })
                    .collect(),
                curve: t
                    .curve
                    .iter()
                    .map(|c| CurveDto { ppm: c.ppm, min_ns: c.min_ns, median_ns: c.median_ns, max_ns: c.max_ns })
                    .collect(),
            })
            .collect(),
    }
}
