//! A log-linear histogram with HdrHistogram's layout: values below 256 are
//! counted exactly; above, each power of two is split into 128 equal
//! sub-buckets, so a bucket is at most 1/128 (0.8%) of its values wide.
//!
//! Recording is a shift and an increment: cheaper than the `hdrhistogram`
//! crate's general-purpose `record`, which matters because every request and
//! every non-zero delay is recorded on the engine's hot path. Counts grow
//! with the largest value seen, not with the number of values.

/// Sub-buckets in the first (linear) range.
const LINEAR: u64 = 256;
/// Sub-buckets per power of two above it.
const HALF: u64 = 128;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogLinear {
    counts: Vec<u64>,
    total: u64,
}

/// Bucket index of a value.
fn index(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let b = u64::from(v.ilog2()) - 7; // >= 1
    (LINEAR + (b - 1) * HALF + ((v >> b) - HALF)) as usize
}

/// The smallest and largest value counted in bucket `i`.
fn bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < LINEAR {
        return (i, i);
    }
    let b = (i - LINEAR) / HALF + 1;
    let sub = (i - LINEAR) % HALF + HALF;
    let low = sub << b;
    (low, low + ((1u64 << b) - 1))
}

impl LogLinear {
    #[inline]
    pub fn record(&mut self, v: u64) {
        let i = index(v);
        if i >= self.counts.len() {
            self.extend(i);
        }
        self.counts[i] += 1;
        self.total += 1;
    }

    /// Counts up to bucket `i` (a value larger than any seen before).
    #[cold]
    #[inline(never)]
    fn extend(&mut self, i: usize) {
        self.counts.resize(i + 1, 0);
    }

    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn merge(&mut self, other: &LogLinear) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
    }

    /// The distribution as `(highest value of a bucket, values counted up to
    /// and including it)`, one point per non-empty bucket, ascending: the
    /// raw material of a CDF plot (HdrHistogram's `iter_recorded`).
    pub fn cumulative(&self) -> Vec<(u64, u64)> {
        let mut seen = 0;
        let mut out = Vec::new();
        for (i, &c) in self.counts.iter().enumerate().filter(|&(_, &c)| c > 0) {
            seen += c;
            out.push((bounds(i).1, seen));
        }
        out
    }

    /// The values at quantiles `qs` (ascending) of `parts` taken together:
    /// for each, what `value_at_quantile` of their merge returns, found in
    /// one pass over the buckets and without building the merge (a report
    /// asks for four quantiles of each of hundreds of distributions).
    pub fn values_at_quantiles<'a, const N: usize>(
        parts: impl Iterator<Item = &'a LogLinear> + Clone,
        qs: [f64; N],
    ) -> [u64; N] {
        debug_assert!(qs.windows(2).all(|w| w[0] <= w[1]), "quantiles ascending");
        let total: u64 = parts.clone().map(|p| p.total).sum();
        let mut out = [0; N];
        if total == 0 || N == 0 {
            return out;
        }
        // The same rank as `value_at_quantile`; ascending quantiles give
        // non-decreasing ranks, so one cursor walks them.
        let ranks = qs.map(|q| ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1));
        let len = parts.clone().map(|p| p.counts.len()).max().unwrap_or(0);
        let (mut seen, mut k) = (0, 0);
        // Whole blocks of buckets are skipped on their sum (a loop the
        // compiler vectorizes); only the block where the next rank is
        // reached is walked bucket by bucket.
        const BLOCK: usize = 64;
        for start in (0..len).step_by(BLOCK) {
            let end = (start + BLOCK).min(len);
            let block =
                |p: &LogLinear| p.counts.get(start..end.min(p.counts.len())).map_or(0, |c| c.iter().sum::<u64>());
            let block_sum: u64 = parts.clone().map(block).sum();
            if seen + block_sum < ranks[k] {
                seen += block_sum;
                continue;
            }
            for i in start..end {
                seen += parts.clone().map(|p| p.counts.get(i).copied().unwrap_or(0)).sum::<u64>();
                while k < N && seen >= ranks[k] {
                    out[k] = bounds(i).1;
                    k += 1;
                }
                if k == N {
                    return out;
                }
            }
        }
        out[k..].fill(bounds(len - 1).1);
        out
    }

    /// The value at quantile `q` as HdrHistogram reports it: the highest
    /// value equivalent to the bucket holding the `ceil(q·n)`-th value.
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bounds(i).1;
            }
        }
        bounds(self.counts.len() - 1).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_range_and_stay_narrow() {
        let mut prev_high = None;
        for i in 0..7424 {
            let (lo, hi) = bounds(i);
            assert!(lo <= hi);
            if let Some(p) = prev_high {
                assert_eq!(lo, p + 1, "bucket {i} starts right after the previous one");
            }
            assert_eq!(index(lo), i);
            assert_eq!(index(hi), i);
            assert!((hi - lo) as f64 <= lo as f64 / 128.0 + 1.0);
            prev_high = Some(hi);
        }
        assert_eq!(bounds(7423).1, u64::MAX);
    }

    /// Four quantiles in one pass over two histograms are those of their
    /// merge asked one by one. Hand check: 1..=10 and 100 (eleven values,
    /// all below 256 so each counted exactly): the median is the
    /// ceil(0.5 × 11) = 6th value, 6; p90 the ceil(9.9) = 10th, 10; p99 and
    /// p100 the 11th, 100.
    #[test]
    fn quantiles_of_parts_are_those_of_their_merge() {
        let (mut a, mut b) = (LogLinear::default(), LogLinear::default());
        (1..=10).for_each(|v| a.record(v));
        b.record(100);
        assert_eq!(LogLinear::values_at_quantiles([&a, &b].into_iter(), [0.5, 0.9, 0.99, 1.0]), [6, 10, 100, 100]);
        for v in 0..3000u64 {
            a.record(v * 7919 % 1_000_003);
            if v % 5 == 0 {
                b.record(v * v);
            }
        }
        let mut all = a.clone();
        all.merge(&b);
        let qs = [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0];
        assert_eq!(LogLinear::values_at_quantiles([&a, &b].into_iter(), qs), qs.map(|q| all.value_at_quantile(q)));
        assert_eq!(LogLinear::values_at_quantiles([&b].into_iter(), qs), qs.map(|q| b.value_at_quantile(q)));
        assert_eq!(LogLinear::values_at_quantiles(std::iter::empty(), [0.5]), [0]);
    }

    #[test]
    fn quantiles_follow_hdr_semantics() {
        let mut h = LogLinear::default();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let p50 = h.value_at_quantile(0.5);
        assert!((500_000..=504_000).contains(&p50), "{p50}");
        assert_eq!(h.value_at_quantile(0.0), bounds(index(1000)).1);
        let mut other = LogLinear::default();
        other.record(7);
        h.merge(&other);
        assert_eq!((h.len(), h.value_at_quantile(0.0)), (1001, 7));
        let cdf = h.cumulative();
        assert_eq!(cdf[0], (7, 1));
        assert_eq!(cdf.last().map(|p| p.1), Some(1001));
        assert!(cdf.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
    }
}
