//! Simulated time: integer nanoseconds since the start of a run.
//!
//! Only popping an event moves the clock (see `engine.rs`); nothing here reads a
//! wall clock. Durations are plain `u64` nanoseconds named with a `_ns` suffix.

use std::fmt;

/// A point in simulated time, in nanoseconds since the run started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);

    pub const fn ns(self) -> u64 {
        self.0
    }

    /// `self + d`, saturating at the end of representable time.
    pub const fn after(self, d_ns: u64) -> SimTime {
        SimTime(self.0.saturating_add(d_ns))
    }

    /// Nanoseconds from `earlier` to `self` (0 if `earlier` is later).
    pub const fn since(self, earlier: SimTime) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl fmt::Display for SimTime {
    /// Seconds with nanosecond precision, the way `perf script --ns` prints time.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}

/// Duration units, largest first: nanoseconds per unit and the name that
/// `parse_duration` reads back.
pub const UNITS: [(u64, &str); 4] = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns")];

/// Milliseconds, the unit `perf sched` prints delays in.
pub const MS: (u64, &str) = UNITS[1];

/// The unit for a column of durations: the largest one its largest value
/// reaches (ns for a column of zeros), so no cell needs more than three
/// digits before the point beyond what the unit's size requires.
pub fn column_unit(values: impl IntoIterator<Item = u64>) -> (u64, &'static str) {
    let max = values.into_iter().max().unwrap_or(0);
    UNITS.into_iter().find(|&(scale, _)| max >= scale).unwrap_or(UNITS[3])
}

/// `ns` in `unit` with three decimals, truncated (`12.345` in ms), none for
/// ns: the cells of a column whose header names the unit.
pub fn format_in(ns: u64, unit: (u64, &str)) -> String {
    let (scale, _) = unit;
    if scale == 1 {
        return ns.to_string();
    }
    format!("{}.{:03}", ns / scale, (ns % scale) / (scale / 1000))
}

/// Formats a duration in the most readable unit (`1.5ms`, `250us`, `3s`).
/// Exact: the value printed parses back to the same nanoseconds.
pub fn format_duration(ns: u64) -> String {
    for (scale, unit) in UNITS {
        if ns >= scale || scale == 1 {
            let whole = ns / scale;
            let frac = ns % scale;
            if frac == 0 {
                return format!("{whole}{unit}");
            }
            let digits = scale.ilog10() as usize;
            let frac = format!("{frac:0digits$}");
            return format!("{whole}.{}{unit}", frac.trim_end_matches('0'));
        }
    }
    unreachable!("the 1 ns unit always matches")
}

/// Seconds with microseconds, truncated (`9.265387`), as `perf` and ftrace
/// print timestamps. A `Display` value, so bulk writers format in place.
#[derive(Clone, Copy, Debug)]
pub struct Secs(pub u64);

impl std::fmt::Display for Secs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:06}", self.0 / 1_000_000_000, (self.0 / 1_000) % 1_000_000)
    }
}

/// `Secs` as a string.
pub fn format_secs(ns: u64) -> String {
    Secs(ns).to_string()
}

/// Milliseconds with three decimals (`12.345`), as `perf sched` prints delays.
pub fn format_ms(ns: u64) -> String {
    format_in(ns, MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_format_exactly() {
        assert_eq!(format_duration(0), "0ns");
        assert_eq!(format_duration(1_500_000), "1.5ms");
        assert_eq!(format_duration(24_000_000), "24ms");
        assert_eq!(format_duration(1_000_001), "1.000001ms");
        assert_eq!(format_duration(999), "999ns");
        assert_eq!(format_ms(12_345_678), "12.345");
        assert_eq!(format_ms(999), "0.000");
    }

    #[test]
    fn columns_take_the_unit_of_their_largest_value() {
        assert_eq!(column_unit([40_000, 812_345]), (1_000, "us"));
        assert_eq!(column_unit([40_000, 2_500_000]), (1_000_000, "ms"));
        assert_eq!(column_unit([3_000_000_000]), (1_000_000_000, "s"));
        assert_eq!(column_unit([0, 0]), (1, "ns"));
        assert_eq!(column_unit([]), (1, "ns"));
        assert_eq!(format_in(812_345, (1_000, "us")), "812.345");
        assert_eq!(format_in(40_000, (1_000_000, "ms")), "0.040");
        assert_eq!(format_in(3_250_000_000, (1_000_000_000, "s")), "3.250");
        assert_eq!(format_in(17, (1, "ns")), "17");
        assert_eq!(SimTime(1_000_000_123).to_string(), "1.000000123");
    }
}
