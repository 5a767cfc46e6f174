//! A bounded summary of one stream of durations: exact count, sum, sum of
//! squares, minimum and maximum, and a sparse log-linear histogram (values
//! below 64 ns exact, above that 32 bins per power of two, so a bin is at
//! most 1/32 of its values wide and a quantile is read within ±1.6 %). Memory
//! grows with the number of distinct bins (at most a few hundred for any
//! stream of nanosecond durations), never with the number of values: the
//! importer keeps several per thread of a trace of any length.

use std::collections::BTreeMap;

use crate::workload::dist::{Dist, EMPIRICAL_POINTS_MAX};

const LINEAR: u64 = 64;
const PER_OCTAVE: u64 = 32;

#[derive(Clone, Debug, Default)]
pub struct Sketch {
    count: u64,
    sum: u128,
    sum_sq: f64,
    min: u64,
    max: u64,
    bins: BTreeMap<u16, u64>,
}

fn bin(v: u64) -> u16 {
    if v < LINEAR {
        return v as u16;
    }
    let b = u64::from(v.ilog2()) - 5; // v >> b is in [32, 64)
    (LINEAR + (b - 1) * PER_OCTAVE + ((v >> b) - PER_OCTAVE)) as u16
}

/// The smallest and largest value of bin `i`.
fn bounds(i: u16) -> (u64, u64) {
    let i = u64::from(i);
    if i < LINEAR {
        return (i, i);
    }
    let b = (i - LINEAR) / PER_OCTAVE + 1;
    let low = ((i - LINEAR) % PER_OCTAVE + PER_OCTAVE) << b;
    (low, low + (1u64 << b) - 1)
}

impl Sketch {
    pub fn add(&mut self, v: u64) {
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.count += 1;
        self.sum += u128::from(v);
        self.sum_sq += (v as f64) * (v as f64);
        *self.bins.entry(bin(v)).or_default() += 1;
    }

    pub fn merge(&mut self, o: &Sketch) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 || o.min < self.min {
            self.min = o.min;
        }
        self.max = self.max.max(o.max);
        self.count += o.count;
        self.sum += o.sum;
        self.sum_sq += o.sum_sq;
        for (&k, &n) in &o.bins {
            *self.bins.entry(k).or_default() += n;
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn max(&self) -> u64 {
        self.max
    }
    pub fn min(&self) -> u64 {
        self.min
    }
    pub fn sum(&self) -> u128 {
        self.sum
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.sum as f64 / self.count as f64 }
    }

    /// Coefficient of variation (sd / mean); 0 for fewer than two values.
    pub fn cv(&self) -> f64 {
        if self.count < 2 || self.sum == 0 {
            return 0.0;
        }
        let m = self.mean();
        let var = (self.sum_sq / self.count as f64 - m * m).max(0.0);
        libm::sqrt(var) / m
    }

    /// The value at quantile `q` in [0, 1]: the midpoint of its bin, clamped
    /// to the exact minimum and maximum (q = 0 and 1 give them exactly).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        if q <= 0.0 {
            return self.min;
        }
        if q >= 1.0 {
            return self.max;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (&k, &n) in &self.bins {
            seen += n;
            if seen >= rank {
                let (lo, hi) = bounds(k);
                return (lo + (hi - lo) / 2).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// Bins as `(midpoint, count)`, in increasing order.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.bins.iter().map(|(&k, &n)| {
            let (lo, hi) = bounds(k);
            (lo + (hi - lo) / 2, n)
        })
    }

    /// The distribution a scenario writes for these values: a constant when
    /// they barely vary (CV < 2 %), else the observed quantiles as
    /// `empirical(…)` (0 %, 1 %, 5 %, 10 %, …, 90 %, then densely to
    /// 99.99 %, the largest value but one, and 100 %): the extremes are kept exactly, so the worst burst of the
    /// trace is the worst a replay can draw. The empirical mean is then
    /// corrected to the exact mean by scaling the inner points, so a replay
    /// does the trace's total work.
    pub fn dist(&self) -> Dist {
        if self.count == 0 {
            return Dist::Const(0);
        }
        if self.count == 1 || self.cv() < 0.02 || self.min == self.max {
            return Dist::Const(self.mean().round() as u64);
        }
        // The largest value but one closes the body, so the last segment (to
        // the maximum) carries one value's share of the probability, not 0.1 %.
        let below_max = 1.0 - 1.0 / self.count as f64;
        // Dense in the tail, where the inverse CDF bends most (linear
        // interpolation between sparse points would fatten it).
        let mut qs: Vec<f64> = vec![
            0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99, 0.995,
            0.998, 0.999, 0.9995, 0.9998, 0.9999,
        ];
        qs.retain(|&q| q < below_max);
        qs.extend([below_max, 1.0]);
        debug_assert!(qs.len() <= EMPIRICAL_POINTS_MAX);
        let mut pts: Vec<(f64, u64)> = Vec::with_capacity(qs.len());
        for &q in &qs {
            let v = self.quantile(q);
            // Values never decrease; equal neighbours stay (a flat stretch of the inverse CDF).
            let v = pts.last().map_or(v, |&(_, last)| v.max(last));
            pts.push((q, v));
        }
        // Scale the points strictly inside (min, max) so the mean is the exact
        // one (the quantiles are bin midpoints): a few passes, as the ends stay put.
        let want = self.mean();
        for _ in 0..4 {
            let got = Dist::Empirical(pts.clone().into_boxed_slice()).mean_ns();
            if got <= 0.0 || (want - got).abs() / want <= 0.001 {
                break;
            }
            let k = want / got;
            let n = pts.len();
            for (i, p) in pts.iter_mut().enumerate() {
                if i > 0 && i + 1 < n {
                    p.1 = ((p.1 as f64 * k).round() as u64).clamp(self.min, self.max);
                }
            }
            for i in 1..n {
                if pts[i].1 < pts[i - 1].1 {
                    pts[i].1 = pts[i - 1].1;
                }
            }
        }
        Dist::Empirical(pts.into_boxed_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_cover_every_value_once_and_quantiles_are_close() {
        for v in [0, 1, 63, 64, 65, 127, 128, 1000, 1 << 20, u64::from(u32::MAX), 86_400_000_000_000] {
            let (lo, hi) = bounds(bin(v));
            assert!(lo <= v && v <= hi, "{v} in [{lo}, {hi}]");
            assert!((hi - lo) as f64 <= (v as f64) / 32.0 + 1.0, "{v}: bin [{lo}, {hi}] is narrow");
        }
        let mut s = Sketch::default();
        for v in 1..=10_000u64 {
            s.add(v * 1000);
        }
        assert_eq!((s.min(), s.max(), s.count()), (1000, 10_000_000, 10_000));
        let p99 = s.quantile(0.99) as f64;
        assert!((p99 - 9_900_000.0).abs() / 9_900_000.0 < 0.02, "{p99}");
        assert!((s.mean() - 5_000_500.0).abs() < 1.0);
    }

    #[test]
    fn the_written_distribution_keeps_the_extremes_and_the_mean() {
        let mut s = Sketch::default();
        for i in 0..1000u64 {
            s.add(10_000 + (i * 7919) % 5000);
        }
        s.add(3_000_000);
        let d = s.dist();
        let Dist::Empirical(p) = &d else { panic!("{d}") };
        assert_eq!((p[0].1, p[p.len() - 1].1), (10_000, 3_000_000));
        assert!((d.mean_ns() - s.mean()).abs() / s.mean() < 0.005, "{} vs {}", d.mean_ns(), s.mean());
        let mut c = Sketch::default();
        for _ in 0..10 {
            c.add(50_000);
        }
        assert_eq!(c.dist(), Dist::Const(50_000));
    }
}
