//! The report's part for elastic CPU limiters (`[limiters.NAME]`): per
//! limiter its settings, the time series of its adjustments (limit, CPU time
//! granted and used, the watched tasks' delay percentile) and totals.

use crate::view::RunView;
use crate::workload::limiter::{LimiterId, LimiterSample, PPM};

/// One limiter's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct LimiterReport {
    pub name: String,
    /// Declarations whose `run` steps draw grants from it.
    pub tasks: Vec<String>,
    /// Declarations whose delays it reads.
    pub watch: Vec<String>,
    /// The percentile it reads, as written (`"99"`).
    pub percentile: String,
    pub target_ns: u64,
    pub window_ns: u64,
    pub adjust_every_ns: u64,
    pub grant_ns: u64,
    pub floor_ppm: u32,
    pub ceiling_ppm: u32,
    pub initial_ppm: u32,
    pub step_up_ppm: u32,
    pub step_down_ppm: u32,
    /// CPUs of the machine (a share of the machine is CPU time / (time × cpus)).
    pub cpus: u16,
    /// One sample per adjustment, oldest first; each covers `stride`
    /// adjustments when a long run was downsampled (at most
    /// `workload::limiter::SERIES_MAX` samples).
    pub samples: Vec<LimiterSample>,
    pub stride: u64,
    /// The limit at the end.
    pub limit_ppm: u32,
    /// CPU time the limited tasks used in the whole run.
    pub used_ns: u64,
    pub grants: u64,
    pub granted_ns: u64,
    /// Grant time given back unused at the end of `run` steps.
    pub returned_ns: u64,
    /// Time tasks spent blocked for a grant (open waits included).
    pub wait_ns: u64,
    /// Tasks blocked for a grant at the end.
    pub waiting: u64,
}

impl LimiterReport {
    pub fn build(v: &RunView) -> Vec<LimiterReport> {
        let spec = v.spec;
        v.limiters
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let id = LimiterId(i as u16);
                let s = &l.spec;
                let names = |f: &dyn Fn(usize) -> bool| -> Vec<String> {
                    spec.tasks.iter().enumerate().filter(|&(d, _)| f(d)).map(|(_, t)| t.name.clone()).collect()
                };
                LimiterReport {
                    name: s.name.clone(),
                    tasks: names(&|d| spec.tasks[d].limiter == Some(id)),
                    watch: s.watch.iter().map(|&d| spec.tasks[d].name.clone()).collect(),
                    percentile: format!("{}", s.percentile),
                    target_ns: s.target_ns,
                    window_ns: s.window_ns,
                    adjust_every_ns: s.adjust_every_ns,
                    grant_ns: s.grant_ns,
                    floor_ppm: s.floor_ppm,
                    ceiling_ppm: s.ceiling_ppm,
                    initial_ppm: s.initial_ppm,
                    step_up_ppm: s.step_up_ppm,
                    step_down_ppm: s.step_down_ppm,
                    cpus: spec.cpus,
                    samples: l.series.all(),
                    stride: l.series.stride.max(1),
                    limit_ppm: l.limit_ppm,
                    used_ns: v.limited_runtime_ns[id.index()],
                    grants: l.grants,
                    granted_ns: l.granted_ns,
                    returned_ns: l.returned_ns,
                    wait_ns: l.wait_ns + v.limiter_open_wait_ns[id.index()],
                    waiting: l.waiters.len() as u64,
                }
            })
            .collect()
    }

    /// A sample's elastic CPU use as a share of the machine, in ppm.
    pub fn used_share_ppm(&self, s: &LimiterSample) -> u64 {
        let capacity = u128::from(s.interval_ns) * u128::from(self.cpus);
        if capacity == 0 {
            return 0;
        }
        (u128::from(s.used_ns) * u128::from(PPM) / capacity) as u64
    }

    /// The series in at most `rows` rows for tables: consecutive samples
    /// merged into evenly sized runs (sums of CPU granted and used over the
    /// run, the limit and window percentile at its end).
    pub fn downsampled(&self, rows: usize) -> Vec<LimiterSample> {
        let n = self.samples.len();
        if n <= rows {
            return self.samples.clone();
        }
        (0..rows)
            .map(|k| {
                let (from, to) = (k * n / rows, (k + 1) * n / rows);
                let mut acc = self.samples[from];
                for s in &self.samples[from + 1..to] {
                    acc.absorb(s);
                }
                acc
            })
            .collect()
    }
}

/// A share in ppm as a percentage with one decimal: `"12.5%"`.
pub fn percent(ppm: u64) -> String {
    let tenths = (ppm + 500) / 1_000;
    format!("{}.{}%", tenths / 10, tenths % 10)
}

/// A small share (a controller step) in ppm as a percentage with as many
/// decimals as it needs, up to four: `"0.01%"`, `"2%"`, `"0.0001%"`.
pub fn percent_fine(ppm: u64) -> String {
    let whole = ppm / 10_000;
    let frac = ppm % 10_000;
    if frac == 0 {
        return format!("{whole}%");
    }
    let digits = format!("{frac:04}");
    format!("{whole}.{}%", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_and_downsampling() {
        assert_eq!(percent(125_000), "12.5%");
        assert_eq!(percent(50_000), "5.0%");
        assert_eq!(percent(999_999), "100.0%");
        assert_eq!(percent_fine(100), "0.01%");
        assert_eq!(percent_fine(20_000), "2%");
        assert_eq!(percent_fine(1), "0.0001%");
        assert_eq!(percent_fine(125_500), "12.55%");
        let mut r = LimiterReport {
            name: "l".into(),
            tasks: vec![],
            watch: vec![],
            percentile: "99".into(),
            target_ns: 0,
            window_ns: 0,
            adjust_every_ns: 0,
            grant_ns: 0,
            floor_ppm: 0,
            ceiling_ppm: 0,
            initial_ppm: 0,
            step_up_ppm: 0,
            step_down_ppm: 0,
            cpus: 2,
            samples: (1..=100)
                .map(|i| LimiterSample { at_ns: i, interval_ns: 1_000, used_ns: 500, ..Default::default() })
                .collect(),
            stride: 1,
            limit_ppm: 0,
            used_ns: 0,
            grants: 0,
            granted_ns: 0,
            returned_ns: 0,
            wait_ns: 0,
            waiting: 0,
        };
        assert_eq!(r.used_share_ppm(&r.samples[0]), 250_000, "500 ns of 2 × 1000 ns");
        let d = r.downsampled(20);
        assert_eq!(d.len(), 20);
        assert_eq!((d[0].at_ns, d[0].interval_ns, d[0].used_ns), (5, 5_000, 2_500), "five periods merged");
        assert_eq!(d[19].at_ns, 100, "the last sample ends the last row");
        assert_eq!(r.used_share_ppm(&d[3]), 250_000);
        r.samples.truncate(7);
        assert_eq!(r.downsampled(20).len(), 7);
    }
}
