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

/// Formats a duration in the most readable unit (`1.5ms`, `250us`, `3s`).
/// Exact: the value printed parses back to the same nanoseconds.
pub fn format_duration(ns: u64) -> String {
    const UNITS: [(u64, &str); 4] = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns")];
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
    format!("{}.{:03}", ns / 1_000_000, (ns / 1_000) % 1_000)
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
        assert_eq!(SimTime(1_000_000_123).to_string(), "1.000000123");
    }
}
