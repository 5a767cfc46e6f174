//! The small cells every text table shares: a percentage, a log-scale
//! bar, the top shares of a list, one latency summary line, and a maximum
//! that counts the waits still open at the end. A leaf: it imports no other
//! part of the output.

use sim_core::{LatencySummary, format_duration};

pub(super) fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.0%".into();
    }
    let tenths = (u128::from(part) * 1000 + u128::from(whole) / 2) / u128::from(whole);
    format!("{}.{}%", tenths / 10, tenths % 10)
}

/// A bar on a log scale: every doubling of the count adds the same length, so
/// a handful of long delays stay visible next to thousands of short ones.
pub(super) fn bar(count: u64, max: u64) -> String {
    let width = 30u64;
    let steps = |n: u64| if n == 0 { 0 } else { u64::from(n.ilog2()) + 1 };
    let n = if max == 0 { 0 } else { (steps(count) * width).div_ceil(steps(max)) as usize };
    "█".repeat(n)
}

pub(super) fn shares(list: &[(String, u64)], total: u64, n: usize) -> String {
    list.iter().take(n).map(|(c, ns)| format!("{c} {}", pct(*ns, total))).collect::<Vec<_>>().join(", ")
}

pub(super) fn summary_line(label: &str, s: &LatencySummary) -> String {
    format!(
        "  {label:<22} n={:<9} avg {:>9}  p50 {:>9}  p90 {:>9}  p99 {:>9}  p99.9 {:>9}  max {:>9}",
        s.count,
        format_duration(s.avg_ns),
        format_duration(s.p50_ns),
        format_duration(s.p90_ns),
        format_duration(s.p99_ns),
        format_duration(s.p999_ns),
        format_max_short(s)
    )
}

/// A maximum that counts the waits still open at the end (`LatencySummary`'s
/// `open_*`): `> 19.9s, still waiting at end` when an open wait is longer
/// than every wait that ended (it had lasted that long and was not over).
pub fn format_max(s: &LatencySummary) -> String {
    s.max_text(format_duration)
}

/// `format_max` for narrow columns: `>19.9s open`.
pub fn format_max_short(s: &LatencySummary) -> String {
    if s.worst_is_open() { format!(">{} open", format_duration(s.open_max_ns)) } else { format_duration(s.max_ns) }
}
