//! Latency statistics streamed into bounded state: exact count, sum, max (and
//! when it happened), percentiles from a log-linear histogram with
//! HdrHistogram's layout and semantics (under 1% relative error), and exact
//! 1-2-5 decade buckets for the text histogram.

use super::loglinear::LogLinear;
use crate::time::SimTime;

/// Log-scale buckets with 1-2-5 bounds per decade (1ns, 2ns, 5ns, 10ns, …,
/// 1ms, 2ms, 5ms, …): readable edges, three buckets per decade. Bucket 0 holds
/// exactly 0 (a task that ran the moment it became runnable).
pub const DELAY_BUCKETS: usize = 59;

/// The bucket of a delay.
pub fn delay_bucket(ns: u64) -> usize {
    if ns == 0 {
        return 0;
    }
    let d = ns.ilog10();
    let m = ns / 10u64.pow(d);
    1 + 3 * d as usize + usize::from(m >= 2) + usize::from(m >= 5)
}

/// The lower edge of bucket `b` (its upper edge is that of `b + 1`).
pub fn bucket_low_ns(b: usize) -> u64 {
    if b == 0 {
        return 0;
    }
    let k = b - 1;
    [1u64, 2, 5][k % 3].saturating_mul(10u64.saturating_pow((k / 3) as u32))
}

#[derive(Clone, Debug)]
pub struct LatencyStats {
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    max_at: SimTime,
    hist: LogLinear,
}

impl Default for LatencyStats {
    fn default() -> Self {
        LatencyStats { count: 0, sum_ns: 0, min_ns: 0, max_ns: 0, max_at: SimTime::ZERO, hist: LogLinear::default() }
    }
}

/// The figures the report prints for one latency distribution.
/// (serde: the explorer passes chart data between Web Workers.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: u64,
    pub avg_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    /// Simulated time at which the maximum ended.
    pub max_at_ns: u64,
    /// Waits of this kind still open when the run stopped. They are in none
    /// of the figures above (which count waits that ended), but a maximum
    /// must not be read without them: see `worst_ns`.
    pub open_count: u64,
    /// The longest of those open waits so far (0 if none).
    pub open_max_ns: u64,
}

impl LatencySummary {
    /// The same figures with `count` waits still open, the longest `max_ns` so far.
    pub fn with_open(self, count: u64, max_ns: u64) -> LatencySummary {
        LatencySummary { open_count: count, open_max_ns: if count == 0 { 0 } else { max_ns }, ..self }
    }

    /// Adds `other`'s waits still open at the end (for summaries merged
    /// over a task's instances).
    pub fn add_open_of(&mut self, other: &LatencySummary) {
        self.open_count += other.open_count;
        self.open_max_ns = self.open_max_ns.max(other.open_max_ns);
    }

    /// The longest wait, ended or still open: what a "max" row must show.
    pub fn worst_ns(&self) -> u64 {
        self.max_ns.max(self.open_max_ns)
    }

    /// Whether the longest wait is one still open at the end (so `worst_ns`
    /// is a lower bound: that wait had not ended when the run stopped).
    pub fn worst_is_open(&self) -> bool {
        self.open_count > 0 && self.open_max_ns > self.max_ns
    }

    /// The maximum as a summary row shows it, durations written by `fmt`:
    /// `> 19.9s, still waiting at end` when a wait still open at the end is
    /// longer than every wait that ended (it had lasted that long and was
    /// not over), else the longest finished wait.
    pub fn max_text(&self, fmt: impl Fn(u64) -> String) -> String {
        if self.worst_is_open() {
            format!("> {}, still waiting at end", fmt(self.open_max_ns))
        } else {
            fmt(self.max_ns)
        }
    }
}

/// `N still waiting at end, oldest X`: the waits still open at the end, as
/// every table, legend and note beside a distribution counts them.
pub fn still_waiting(count: u64, oldest: &str) -> String {
    format!("{count} still waiting at end, oldest {oldest}")
}

/// One point of a cumulative distribution: `count` values were at most `value_ns`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CdfPoint {
    pub value_ns: u64,
    pub count: u64,
}

impl LatencyStats {
    /// Records a latency that ended at `at`.
    pub fn record(&mut self, ns: u64, at: SimTime) {
        self.count += 1;
        self.sum_ns += u128::from(ns);
        if ns < self.min_ns || self.count == 1 {
            self.min_ns = ns;
        }
        if ns > self.max_ns || self.count == 1 {
            self.max_ns = ns;
            self.max_at = at;
        }
        self.hist.record(ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// Merges another distribution (for per-name totals).
    pub fn merge(&mut self, other: &LatencyStats) {
        if other.count == 0 {
            return;
        }
        self.merge_exact(other);
        self.hist.merge(&other.hist);
    }

    /// `merge` of the exact figures (count, sum, minimum, maximum and its
    /// time: the first reaching it keeps it), not of the histogram.
    fn merge_exact(&mut self, other: &LatencyStats) {
        if other.min_ns < self.min_ns || self.count == 0 {
            self.min_ns = other.min_ns;
        }
        if other.max_ns > self.max_ns || self.count == 0 {
            self.max_ns = other.max_ns;
            self.max_at = other.max_at;
        }
        self.count += other.count;
        self.sum_ns += other.sum_ns;
    }

    /// The value at quantile `q`, clamped to the exact maximum (the histogram
    /// reports the top of a bucket).
    pub fn quantile(&self, q: f64) -> u64 {
        self.hist.value_at_quantile(q).min(self.max_ns)
    }

    /// The distribution as CDF points `(value_ns, values ≤ value_ns)`, one per
    /// non-empty histogram bucket (under 1% wide), the last clamped to the
    /// exact maximum.
    pub fn cdf(&self) -> Vec<CdfPoint> {
        let mut points: Vec<CdfPoint> = self
            .hist
            .cumulative()
            .into_iter()
            .map(|(v, n)| CdfPoint { value_ns: v.min(self.max_ns), count: n })
            .collect();
        points.dedup_by(|b, a| {
            let same = a.value_ns == b.value_ns;
            if same {
                a.count = b.count;
            }
            same
        });
        points
    }

    pub fn summary(&self) -> LatencySummary {
        LatencyStats::summary_of(&[self])
    }

    /// The summary of `parts` merged in this order (`merge` of each into a
    /// copy of the first, then `summary`), without building the merge: the
    /// same count, sum, minimum, maximum (the first part reaching it gives
    /// its time) and quantiles, the four quantiles found in one pass.
    pub fn summary_of(parts: &[&LatencyStats]) -> LatencySummary {
        let mut all = LatencyStats::default();
        for p in parts.iter().filter(|p| p.count > 0) {
            all.merge_exact(p);
        }
        let hists = parts.iter().map(|p| &p.hist);
        let [p50, p90, p99, p999] = LogLinear::values_at_quantiles(hists, [0.5, 0.9, 0.99, 0.999]);
        LatencySummary {
            count: all.count,
            min_ns: all.min_ns,
            avg_ns: if all.count == 0 { 0 } else { (all.sum_ns / u128::from(all.count)) as u64 },
            // Clamped to the exact maximum, as `quantile` does.
            p50_ns: p50.min(all.max_ns),
            p90_ns: p90.min(all.max_ns),
            p99_ns: p99.min(all.max_ns),
            p999_ns: p999.min(all.max_ns),
            max_ns: all.max_ns,
            max_at_ns: all.max_at.ns(),
            open_count: 0,
            open_max_ns: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass summary of several parts is the summary of their merge
    /// with each quantile asked for on its own (the way it was computed
    /// before): parts empty, overlapping, and with ties on the maximum.
    #[test]
    fn a_summary_of_parts_is_the_summary_of_their_merge() {
        let mut a = LatencyStats::default();
        let mut b = LatencyStats::default();
        let mut c = LatencyStats::default();
        let empty = LatencyStats::default();
        for v in 0..500u64 {
            // Spread over the linear range and many log buckets.
            a.record(v * v * 37, SimTime(v));
            if v % 3 == 0 {
                b.record(v * 1_000 + 7, SimTime(1_000 + v));
            }
        }
        // b's maximum ties a's: the earlier part's time is kept.
        b.record(499 * 499 * 37, SimTime(99));
        c.record(3, SimTime(5));
        let by_merge = |parts: &[&LatencyStats]| {
            let mut all = parts[0].clone();
            for p in &parts[1..] {
                all.merge(p);
            }
            LatencySummary {
                count: all.count,
                min_ns: all.min_ns,
                avg_ns: if all.count == 0 { 0 } else { (all.sum_ns / u128::from(all.count)) as u64 },
                p50_ns: all.quantile(0.5),
                p90_ns: all.quantile(0.9),
                p99_ns: all.quantile(0.99),
                p999_ns: all.quantile(0.999),
                max_ns: all.max_ns,
                max_at_ns: all.max_at.ns(),
                open_count: 0,
                open_max_ns: 0,
            }
        };
        for parts in [vec![&a], vec![&empty], vec![&empty, &c], vec![&a, &b], vec![&b, &a], vec![&c, &empty, &a, &b]] {
            assert_eq!(LatencyStats::summary_of(&parts), by_merge(&parts));
        }
        let ab = LatencyStats::summary_of(&[&a, &b]);
        // 500 + 167 (v = 0, 3, ..., 498) + 1 values; max 499² × 37 = 9,213,037,
        // the tie keeps a's time, 499.
        assert_eq!((ab.count, ab.min_ns, ab.max_ns, ab.max_at_ns), (668, 0, 9_213_037, 499));
        let ba = LatencyStats::summary_of(&[&b, &a]);
        assert_eq!(ba.max_at_ns, 99);
        // One value: every quantile is it. Nothing: all zero.
        let one = LatencyStats::summary_of(&[&empty, &c]);
        assert_eq!((one.p50_ns, one.p999_ns, one.min_ns, one.max_at_ns), (3, 3, 3, 5));
        assert_eq!(LatencyStats::summary_of(&[]), LatencySummary::default());
    }

    #[test]
    fn summary_is_exact_where_it_claims_to_be() {
        let mut s = LatencyStats::default();
        for v in 1..=1000u64 {
            s.record(v * 1000, SimTime(v));
        }
        let m = s.summary();
        assert_eq!((m.count, m.min_ns, m.avg_ns, m.max_ns, m.max_at_ns), (1000, 1000, 500_500, 1_000_000, 1000));
        assert!(m.p50_ns.abs_diff(500_000) <= 5_000, "{}", m.p50_ns);
        assert!(m.p99_ns.abs_diff(990_000) <= 10_000, "{}", m.p99_ns);
        assert!(m.p999_ns <= m.max_ns);
        let mut z = LatencyStats::default();
        for v in [0, 0, 0, 0, 0, 0, 0, 0, 1000, 2000] {
            z.record(v, SimTime(1));
        }
        assert_eq!((z.quantile(0.5), z.quantile(0.8)), (0, 0));
        assert!((1000..=1010).contains(&z.quantile(0.85)), "{}", z.quantile(0.85));
        assert_eq!((z.quantile(0.95), z.quantile(1.0)), (2000, 2000));
        let cdf = z.cdf();
        assert_eq!(cdf.first(), Some(&CdfPoint { value_ns: 0, count: 8 }));
        assert_eq!(cdf.last(), Some(&CdfPoint { value_ns: 2000, count: 10 }));
        assert_eq!(delay_bucket(0), 0);
        assert_eq!(delay_bucket(1), 1);
        assert_eq!(delay_bucket(1_999_999), delay_bucket(1_000_000));
        assert_eq!(bucket_low_ns(delay_bucket(12_000_000)), 10_000_000);
        assert_eq!(bucket_low_ns(delay_bucket(12_000_000) + 1), 20_000_000);
        assert_eq!(delay_bucket(u64::MAX), DELAY_BUCKETS - 1);
        for v in [1u64, 7, 20, 49, 50, 999, 3_000_000] {
            let b = delay_bucket(v);
            assert!(bucket_low_ns(b) <= v && v < bucket_low_ns(b + 1), "{v}");
        }
    }
}
