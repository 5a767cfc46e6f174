//! The JSON form of a latency summary, shared by every part of the report.

use crate::metrics::latency::LatencySummary;
use serde::Serialize;

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Latency {
    count: u64,
    min_ns: u64,
    avg_ns: u64,
    p50_ns: u64,
    p90_ns: u64,
    p99_ns: u64,
    p999_ns: u64,
    max_ns: u64,
    max_at_ns: u64,
    /// Waits still open at the end (in none of the figures above), and the
    /// longest of them so far: a true maximum is at least `open_max_ns`.
    open_count: u64,
    open_max_ns: u64,
}

impl From<&LatencySummary> for Latency {
    fn from(s: &LatencySummary) -> Latency {
        Latency {
            count: s.count,
            min_ns: s.min_ns,
            avg_ns: s.avg_ns,
            p50_ns: s.p50_ns,
            p90_ns: s.p90_ns,
            p99_ns: s.p99_ns,
            p999_ns: s.p999_ns,
            max_ns: s.max_ns,
            max_at_ns: s.max_at_ns,
            open_count: s.open_count,
            open_max_ns: s.open_max_ns,
        }
    }
}
