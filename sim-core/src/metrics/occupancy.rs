//! Per-CPU occupancy over time: for each CPU, how much of each time bucket
//! it was busy, for the occupancy heat map (`plot::data::OccupancyChart`).
//!
//! Busy means `nr_running > 0` (`rq->nr_running`, the running task
//! included, less tasks DELAY_DEQUEUE keeps queued asleep: 6.12+), as the
//! engine reports it through `Recorder::cpu_nr_running`.
//! That is an approximation of "a task was on the CPU": it counts a CPU as
//! busy from the moment a task is enqueued on it until its queue empties,
//! so a context switch's overhead and the instant between an enqueue on an
//! idle CPU and the switch to the task count as busy. `CpuReport::busy_ns`
//! stays the exact figure; the heat map only shades shares.
//!
//! Memory is bounded whatever the run's length: every CPU has the same
//! fixed number of buckets (`buckets_per_cpu`, at most
//! `OCCUPANCY_BUCKETS_MAX`, and at most `OCCUPANCY_CELLS_MAX` over all CPUs).
//! Buckets start `OCCUPANCY_FIRST_BUCKET_NS` wide; when time passes the last
//! one, adjacent buckets are merged in pairs and the width doubles, so the
//! recorder needs no duration up front and a partial report has its own
//! resolution. Each update is O(buckets) at worst (O(1) for short busy spans).

use crate::ids::CpuId;
use crate::time::SimTime;

/// Buckets per CPU at most (fewer on machines with many CPUs).
pub const OCCUPANCY_BUCKETS_MAX: usize = 256;
/// Buckets over all CPUs at most.
pub const OCCUPANCY_CELLS_MAX: usize = 65_536;
/// Width of a bucket before any merge.
pub const OCCUPANCY_FIRST_BUCKET_NS: u64 = 1_000;

/// Buckets per CPU for `ncpus` CPUs: even (they merge in pairs), at least 2.
pub fn buckets_per_cpu(ncpus: usize) -> usize {
    (OCCUPANCY_CELLS_MAX / ncpus.max(1)).clamp(2, OCCUPANCY_BUCKETS_MAX) & !1
}

/// The recorder's running state.
#[derive(Clone, Debug)]
pub struct Occupancy {
    buckets: usize,
    bucket_ns: u64,
    /// `bucket_ns * buckets` (saturating): spans ending by then need no merge.
    covered_ns: u64,
    /// Busy nanoseconds, CPU-major: `busy[cpu * buckets + i]`.
    busy: Vec<u64>,
    /// Per CPU: busy (`nr_running > 0`) since.
    since: Vec<Option<SimTime>>,
}

/// Per CPU, busy nanoseconds in each bucket from time zero to `end_ns`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OccupancySeries {
    pub bucket_ns: u64,
    pub end_ns: u64,
    /// `busy[cpu][i]`: busy time in `[i * bucket_ns, (i + 1) * bucket_ns)`
    /// (the last bucket ends at `end_ns`); `ceil(end_ns / bucket_ns)` each.
    pub busy: Vec<Vec<u64>>,
    /// Where each CPU sits (filled from the machine by `RunReport::build`).
    pub places: Vec<CpuPlace>,
}

/// A CPU's place in the machine, for grouping its row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuPlace {
    pub socket: u16,
    /// Core number over the machine (`socket * cores_per_socket + core`).
    pub core: u16,
    /// SMT thread within its core.
    pub thread: u16,
    /// In `isolcpus=`.
    pub isolated: bool,
}

impl OccupancySeries {
    /// Length of bucket `i` (the last may be cut short by `end_ns`).
    pub fn bucket_len_ns(&self, i: usize) -> u64 {
        let start = i as u64 * self.bucket_ns;
        self.end_ns.min(start + self.bucket_ns).saturating_sub(start)
    }
}

impl Occupancy {
    /// Every CPU starts idle at time zero.
    pub fn new(ncpus: usize) -> Occupancy {
        let buckets = buckets_per_cpu(ncpus);
        Occupancy {
            buckets,
            bucket_ns: OCCUPANCY_FIRST_BUCKET_NS,
            covered_ns: OCCUPANCY_FIRST_BUCKET_NS.saturating_mul(buckets as u64),
            busy: vec![0; buckets * ncpus],
            since: vec![None; ncpus],
        }
    }

    /// `cpu`'s run-queue length changed to `nr_running` at `now`.
    #[inline]
    pub fn set_nr_running(&mut self, cpu: CpuId, nr_running: u32, now: SimTime) {
        let c = cpu.index();
        match (self.since[c], nr_running > 0) {
            (None, true) => self.since[c] = Some(now),
            (Some(from), false) => {
                self.since[c] = None;
                self.add(c, from.ns(), now.ns());
            }
            _ => {}
        }
    }

    /// Doubles the bucket width until `to_ns` fits in the buckets.
    #[inline]
    fn grow(&mut self, to_ns: u64) {
        if to_ns > self.covered_ns {
            self.widen(to_ns);
        }
    }

    #[cold]
    #[inline(never)]
    fn widen(&mut self, to_ns: u64) {
        // At most 64 doublings of a u64 width.
        for _ in 0..64 {
            if to_ns <= self.bucket_ns.saturating_mul(self.buckets as u64) {
                return;
            }
            let n = self.buckets;
            for cpu in 0..self.since.len() {
                let row = &mut self.busy[cpu * n..(cpu + 1) * n];
                for i in 0..n / 2 {
                    row[i] = row[2 * i] + row[2 * i + 1];
                }
                row[n / 2..].fill(0);
            }
            self.bucket_ns = self.bucket_ns.saturating_mul(2);
            self.covered_ns = self.bucket_ns.saturating_mul(self.buckets as u64);
        }
    }

    /// Adds the busy span `[from_ns, to_ns)` of CPU `c`.
    fn add(&mut self, c: usize, from_ns: u64, to_ns: u64) {
        if to_ns <= from_ns {
            return;
        }
        self.grow(to_ns);
        let (n, w) = (self.buckets, self.bucket_ns);
        let first = (from_ns / w) as usize;
        let last = ((to_ns - 1) / w) as usize;
        // Bounded by the bucket count: `grow` made `to_ns` fit.
        for i in first..=last.min(n - 1) {
            let (start, end) = (i as u64 * w, (i as u64 + 1) * w);
            self.busy[c * n + i] += to_ns.min(end) - from_ns.max(start);
        }
    }

    /// The series up to `now`, busy spans still open included (the state
    /// itself is not changed: a preview of a run in progress is exact).
    pub fn series(&self, now: SimTime) -> OccupancySeries {
        let mut o = self.clone();
        for c in 0..o.since.len() {
            if let Some(from) = o.since[c] {
                o.add(c, from.ns(), now.ns());
            }
        }
        o.grow(now.ns());
        let used = now.ns().div_ceil(o.bucket_ns) as usize;
        let n = o.buckets;
        OccupancySeries {
            bucket_ns: o.bucket_ns,
            end_ns: now.ns(),
            busy: (0..o.since.len()).map(|c| o.busy[c * n..c * n + used.min(n)].to_vec()).collect(),
            places: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ns: u64) -> SimTime {
        SimTime(ns)
    }

    /// Hand timeline on 2 CPUs inside the first buckets (1 µs each):
    /// CPU 0 busy 500..2500 ns, CPU 1 busy from 3000 ns to the end (3600).
    #[test]
    fn busy_spans_split_over_buckets() {
        let mut o = Occupancy::new(2);
        o.set_nr_running(CpuId(0), 1, at(500));
        o.set_nr_running(CpuId(0), 2, at(1_000)); // still busy: no new span
        o.set_nr_running(CpuId(0), 0, at(2_500));
        o.set_nr_running(CpuId(1), 1, at(3_000));
        let s = o.series(at(3_600));
        assert_eq!(s.bucket_ns, 1_000);
        assert_eq!(s.busy[0], [500, 1_000, 500, 0]);
        // The open span counts up to `now`; the last bucket is 600 ns long.
        assert_eq!(s.busy[1], [0, 0, 0, 600]);
        assert_eq!(s.bucket_len_ns(3), 600);
        // A preview changes nothing: the span closes later as usual.
        o.set_nr_running(CpuId(1), 0, at(3_800));
        assert_eq!(o.series(at(4_000)).busy[1], [0, 0, 0, 800]);
    }

    /// Past the last bucket, pairs merge and the width doubles as often as
    /// needed: 256 buckets of 1 µs cover 256 µs; a span ending at 1 ms needs
    /// 4 µs buckets (256 x 4 µs = 1.024 ms).
    #[test]
    fn buckets_widen_to_cover_the_run() {
        let mut o = Occupancy::new(1);
        assert_eq!(o.buckets, 256);
        o.set_nr_running(CpuId(0), 1, at(0));
        o.set_nr_running(CpuId(0), 0, at(3_000)); // 3 buckets of 1 µs
        o.set_nr_running(CpuId(0), 1, at(998_000));
        o.set_nr_running(CpuId(0), 0, at(1_000_000));
        let s = o.series(at(1_000_000));
        assert_eq!(s.bucket_ns, 4_000);
        assert_eq!(s.busy[0].len(), 250);
        assert_eq!(s.busy[0][0], 3_000, "1 µs buckets merged into one 4 µs bucket");
        assert_eq!(s.busy[0][249], 2_000, "996..1000 µs");
        assert_eq!(s.busy[0].iter().sum::<u64>(), 5_000);
        assert!(s.busy[0][1..249].iter().all(|&b| b == 0));
    }

    #[test]
    fn memory_is_bounded_on_big_machines() {
        assert_eq!(buckets_per_cpu(1), 256);
        assert_eq!(buckets_per_cpu(4096), 16);
        assert_eq!(buckets_per_cpu(300), 218);
        let o = Occupancy::new(4096);
        assert!(o.busy.len() <= OCCUPANCY_CELLS_MAX);
        // Ten simulated minutes still fit in 16 buckets.
        let s = o.series(at(600_000_000_000));
        assert!(s.busy[0].len() <= 16 && s.bucket_ns * 16 >= 600_000_000_000, "{}", s.bucket_ns);
    }
}
