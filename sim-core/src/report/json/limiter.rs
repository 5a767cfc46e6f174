//! The JSON of the elastic CPU limiters' part.

use crate::report::limiter::LimiterReport;
use serde::Serialize;

/// An elastic CPU limiter: settings, totals and one sample per adjustment.
/// Shares are in millionths of a CPU (`_ppm`), so the JSON holds integers only.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Limiter<'a> {
    name: &'a str,
    /// Task declarations under the limiter.
    tasks: &'a [String],
    /// Task declarations whose scheduling delays it reads.
    watch: &'a [String],
    /// The percentile read, as written (`"99"`).
    percentile: &'a str,
    target_ns: u64,
    window_ns: u64,
    adjust_every_ns: u64,
    grant_ns: u64,
    floor_ppm: u32,
    ceiling_ppm: u32,
    initial_ppm: u32,
    step_up_ppm: u32,
    step_down_ppm: u32,
    /// The limit at the end of the run.
    limit_ppm: u32,
    /// CPU time the limited tasks used.
    used_ns: u64,
    grants: u64,
    granted_ns: u64,
    /// Grant time given back unused at the end of `run` steps.
    returned_ns: u64,
    /// Time tasks spent blocked for a grant (open waits included).
    wait_ns: u64,
    /// Tasks blocked for a grant at the end.
    waiting: u64,
    /// Adjustments per sample (more than 1 when a long run was downsampled).
    stride: u64,
    samples: Vec<LimiterPoint>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct LimiterPoint {
    /// End of the period.
    at_ns: u64,
    interval_ns: u64,
    /// The limit set at `at_ns`.
    limit_ppm: u32,
    granted_ns: u64,
    used_ns: u64,
    /// `used_ns` as a share of the machine over the period.
    used_share_ppm: u64,
    /// The watched tasks' delay percentile over the window; null with no delay in it.
    observed_ns: Option<u64>,
}

pub(super) fn limiter_dto(l: &LimiterReport) -> Limiter<'_> {
    Limiter {
        name: &l.name,
        tasks: &l.tasks,
        watch: &l.watch,
        percentile: &l.percentile,
        target_ns: l.target_ns,
        window_ns: l.window_ns,
        adjust_every_ns: l.adjust_every_ns,
        grant_ns: l.grant_ns,
        floor_ppm: l.floor_ppm,
        ceiling_ppm: l.ceiling_ppm,
        initial_ppm: l.initial_ppm,
        step_up_ppm: l.step_up_ppm,
        step_down_ppm: l.step_down_ppm,
        limit_ppm: l.limit_ppm,
        used_ns: l.used_ns,
        grants: l.grants,
        granted_ns: l.granted_ns,
        returned_ns: l.returned_ns,
        wait_ns: l.wait_ns,
        waiting: l.waiting,
        stride: l.stride,
        samples: l
            .samples
            .iter()
            .map(|s| LimiterPoint {
                at_ns: s.at_ns,
                interval_ns: s.interval_ns,
                limit_ppm: s.limit_ppm,
                granted_ns: s.granted_ns,
                used_ns: s.used_ns,
                used_share_ppm: l.used_share_ppm(s),
                observed_ns: s.observed_ns,
            })
            .collect(),
    }
}
