//! The elastic CPU limiter: in-process pacing of background ("elastic") work,
//! as CockroachDB's admission control does it (issue 20), not kernel scheduling.
//!
//! Two parts, both pure state and rules (the engine only calls them):
//! - a **controller** that, every `adjust_every`, reads a percentile of the
//!   scheduling delays of the tasks it watches over the last `window` and moves
//!   the CPU share allowed to elastic work down by `step_down` when it is above
//!   `target`, else up by `step_up`, clamped to `[floor, ceiling]`
//!   (CockroachDB `pkg/util/admission/scheduler_latency_listener.go`,
//!   `SchedulerLatency`; it raises the limit only while work waits and decays
//!   it slowly when idle, which is left out here: the rule is up/down);
//! - a **token bucket** of CPU time, refilled continuously at `limit × CPUs`
//!   CPU-ns per ns with no burst (capacity one grant), handing out `grant`-sized
//!   pieces of CPU time to waiters in FIFO order.
//!
//! Shares are integers in millionths of a CPU (ppm) and tokens are CPU-ns ×
//! 10⁶, so the refill adds whole numbers every nanosecond and every wait is
//! computed exactly, with no float in the engine's path.

use crate::ids::TaskId;
use crate::metrics::loglinear::LogLinear;
use crate::time::SimTime;
use std::collections::VecDeque;

/// A share of one CPU in millionths: 1,000,000 is a whole CPU.
pub const PPM: u64 = 1_000_000;
/// Most adjust periods one window may span (`window / adjust_every`): bounds
/// the ring of per-period histograms.
pub const WINDOW_SLOTS_MAX: u64 = 1_000;
/// Shortest controller period accepted: bounds the adjust events to 1,000 per
/// simulated second per limiter.
pub const ADJUST_EVERY_MIN_NS: u64 = 1_000_000;
/// Smallest grant: 1 µs of CPU time. Each grant is at least one event (the
/// end of the chunk it pays for, and a `LimiterGrant` when a waiter is woken),
/// so a limited CPU-second is at most about a million of them: the floor
/// `enter_kernel_every` has for the same reason (`grant = "1ns"` made 0.5 s
/// of simulated time 100 M events).
pub const GRANT_MIN_NS: u64 = 1_000;
/// Largest grant: 10 s of CPU time (tokens × 10⁶ stay far inside a u64).
pub const GRANT_MAX_NS: u64 = 10_000_000_000;
/// Samples kept per limiter in its time series; beyond that, neighbours are
/// merged in pairs and each kept sample covers twice as many periods.
pub const SERIES_MAX: usize = 4_096;

/// Index of a `[limiters.NAME]` declaration (name order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LimiterId(pub u16);

impl LimiterId {
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// Defaults, each from CockroachDB's cluster settings where one exists.
pub mod defaults {
    /// `admission.elastic_cpu.scheduler_latency_target`: 1 ms.
    pub const TARGET_NS: u64 = 1_000_000;
    /// The p99 (`SchedulerLatency(p99, period)`).
    pub const PERCENTILE: f64 = 99.0;
    /// `scheduler_latency.sample_duration`: 2.5 s.
    pub const WINDOW_NS: u64 = 2_500_000_000;
    /// `scheduler_latency.sample_period`: 100 ms (the listener is called
    /// once per sample, and that call is the controller's period).
    pub const ADJUST_EVERY_NS: u64 = 100_000_000;
    /// `admission.elastic_cpu.adjustment_delta_per_second` (0.001) × the
    /// 100 ms period: 0.01 % of a CPU share per period.
    pub const STEP_UP_PPM: u32 = 100;
    /// The same delta × `multiplicative_factor_on_decrease` (2).
    pub const STEP_DOWN_PPM: u32 = 200;
    /// `admission.elastic_cpu.min_utilization`: 5 %.
    pub const FLOOR_PPM: u32 = 50_000;
    /// `admission.elastic_cpu.max_utilization`: 75 %.
    pub const CEILING_PPM: u32 = 750_000;
    /// 100 ms grants (the issue; CockroachDB's elastic work asks for 100 ms
    /// of CPU time per admission).
    pub const GRANT_NS: u64 = 100_000_000;
}

/// A validated `[limiters.NAME]`.
#[derive(Clone, Debug, PartialEq)]
pub struct LimiterSpec {
    pub name: String,
    /// Task declarations (indices into `ScenarioSpec::tasks`) whose
    /// scheduling delays the controller reads.
    pub watch: Vec<usize>,
    /// In (0, 100).
    pub percentile: f64,
    pub target_ns: u64,
    pub window_ns: u64,
    pub adjust_every_ns: u64,
    pub step_up_ppm: u32,
    pub step_down_ppm: u32,
    pub floor_ppm: u32,
    pub ceiling_ppm: u32,
    /// The limit before the first adjustment (default: `floor`, the
    /// conservative start: elastic work earns its share).
    pub initial_ppm: u32,
    pub grant_ns: u64,
}

impl LimiterSpec {
    /// Per-period histograms the window needs: `window / adjust_every`
    /// rounded up (the window covers whole periods).
    pub fn window_slots(&self) -> usize {
        self.window_ns.div_ceil(self.adjust_every_ns).max(1) as usize
    }

    /// The controller's rule: above target, down by `step_down`; else up by
    /// `step_up`; clamped to `[floor, ceiling]`. No sample in the window
    /// (`None`): no change.
    pub fn next_limit(&self, limit_ppm: u32, observed_ns: Option<u64>) -> u32 {
        let Some(p) = observed_ns else { return limit_ppm };
        let next = if p > self.target_ns {
            limit_ppm.saturating_sub(self.step_down_ppm)
        } else {
            limit_ppm.saturating_add(self.step_up_ppm)
        };
        next.clamp(self.floor_ppm, self.ceiling_ppm)
    }
}

/// CPU time as a token bucket: tokens in CPU-ns × 10⁶, refilled at
/// `limit_ppm × cpus` per ns up to one grant (no burst).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    tokens: u64,
    capacity: u64,
    /// Tokens added per ns: `limit_ppm × cpus`.
    rate: u64,
    cpus: u64,
    /// Up to when the refill has been applied.
    at: SimTime,
    /// Tokens ever added (refill and returns, before the cap) and granted, for the bound checks.
    pub refilled_total: u128,
    pub granted_total: u128,
    pub returned_total: u128,
}

impl TokenBucket {
    /// A bucket that starts full (one grant is available at once).
    pub fn new(grant_ns: u64, limit_ppm: u32, cpus: u16) -> TokenBucket {
        let capacity = grant_ns.saturating_mul(PPM);
        TokenBucket {
            tokens: capacity,
            capacity,
            rate: u64::from(limit_ppm) * u64::from(cpus),
            cpus: u64::from(cpus),
            at: SimTime::ZERO,
            refilled_total: 0,
            granted_total: 0,
            returned_total: 0,
        }
    }

    /// Applies the refill up to `now` (never backwards).
    pub fn refill(&mut self, now: SimTime) {
        if now <= self.at {
            return;
        }
        let add = u128::from(now.since(self.at)) * u128::from(self.rate);
        self.refilled_total += add;
        self.tokens = (u128::from(self.tokens) + add).min(u128::from(self.capacity)) as u64;
        self.at = now;
    }

    /// Changes the rate from `now` on (the refill before `now` runs at the old one).
    pub fn set_limit(&mut self, now: SimTime, limit_ppm: u32) {
        self.refill(now);
        self.rate = u64::from(limit_ppm) * self.cpus;
    }

    /// Takes `ns` of CPU time if the bucket holds that much.
    pub fn try_take(&mut self, now: SimTime, ns: u64) -> bool {
        self.refill(now);
        let need = ns.saturating_mul(PPM);
        if self.tokens < need {
            return false;
        }
        self.tokens -= need;
        self.granted_total += u128::from(need);
        true
    }

    /// Returns unused CPU time; what does not fit under the cap is lost.
    pub fn give_back(&mut self, now: SimTime, ns: u64) {
        self.refill(now);
        let add = ns.saturating_mul(PPM);
        self.returned_total += u128::from(add);
        self.tokens = self.tokens.saturating_add(add).min(self.capacity);
    }

    /// Nanoseconds from the last refill until the bucket holds `ns` of CPU
    /// time, rounded up; `None` when it never will (a zero rate).
    pub fn wait_ns(&self, ns: u64) -> Option<u64> {
        let need = ns.saturating_mul(PPM);
        if self.tokens >= need {
            return Some(0);
        }
        if self.rate == 0 {
            return None;
        }
        Some((need - self.tokens).div_ceil(self.rate))
    }

    /// When the bucket will hold `ns` of CPU time, at the current rate.
    pub fn ready_at(&self, ns: u64) -> Option<SimTime> {
        self.wait_ns(ns).map(|w| self.at.after(w))
    }

    /// Tokens now, in CPU-ns (rounded down).
    pub fn tokens_ns(&self) -> u64 {
        self.tokens / PPM
    }
}

/// Scheduling delays of the watched tasks over the last window: one
/// histogram per adjust period in a ring, merged when read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelayWindow {
    slots: Vec<LogLinear>,
    current: usize,
}

impl DelayWindow {
    pub fn new(slots: usize) -> DelayWindow {
        DelayWindow { slots: vec![LogLinear::default(); slots.max(1)], current: 0 }
    }

    pub fn record(&mut self, ns: u64) {
        self.slots[self.current].record(ns);
    }

    /// The `percentile` (0..100) of every delay in the window, `None` with no sample.
    pub fn percentile(&self, percentile: f64) -> Option<u64> {
        let mut all = LogLinear::default();
        for s in &self.slots {
            all.merge(s);
        }
        (!all.is_empty()).then(|| all.value_at_quantile(percentile / 100.0))
    }

    /// Ends the current period: the oldest one leaves the window.
    pub fn rotate(&mut self) {
        self.current = (self.current + 1) % self.slots.len();
        self.slots[self.current] = LogLinear::default();
    }
}

/// One adjustment (or, after merging, several in a row).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LimiterSample {
    /// End of the period(s).
    pub at_ns: u64,
    /// Length of the period(s).
    pub interval_ns: u64,
    /// The limit set at `at_ns`.
    pub limit_ppm: u32,
    /// CPU time granted during the period(s).
    pub granted_ns: u64,
    /// CPU time the limited tasks ran during the period(s).
    pub used_ns: u64,
    /// The watched tasks' delay percentile over the window ending at `at_ns`;
    /// `None` when the window held no delay.
    pub observed_ns: Option<u64>,
}

impl LimiterSample {
    /// Folds the next sample into this one (time series downsampling): the
    /// periods' sums, the later limit and window percentile.
    pub fn absorb(&mut self, next: &LimiterSample) {
        self.at_ns = next.at_ns;
        self.interval_ns += next.interval_ns;
        self.limit_ppm = next.limit_ppm;
        self.granted_ns += next.granted_ns;
        self.used_ns += next.used_ns;
        self.observed_ns = next.observed_ns;
    }
}

/// A limiter's time series, bounded: at `SERIES_MAX` samples neighbours are
/// merged in pairs and each sample then covers twice as many periods.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Series {
    pub samples: Vec<LimiterSample>,
    /// Periods per kept sample.
    pub stride: u64,
    pending: Option<(LimiterSample, u64)>,
}

impl Series {
    pub fn push(&mut self, s: LimiterSample) {
        self.stride = self.stride.max(1);
        let (acc, n) = match self.pending.take() {
            None => (s, 1),
            Some((mut acc, n)) => {
                acc.absorb(&s);
                (acc, n + 1)
            }
        };
        if n < self.stride {
            self.pending = Some((acc, n));
            return;
        }
        self.samples.push(acc);
        if self.samples.len() >= SERIES_MAX {
            let old = std::mem::take(&mut self.samples);
            for pair in old.chunks(2) {
                let mut a = pair[0];
                if let Some(b) = pair.get(1) {
                    a.absorb(b);
                }
                self.samples.push(a);
            }
            self.stride *= 2;
        }
    }

    /// Every sample, the periods not yet folded into a full one included.
    pub fn all(&self) -> Vec<LimiterSample> {
        let mut out = self.samples.clone();
        out.extend(self.pending.map(|(s, _)| s));
        out
    }
}

/// A limiter's running state.
#[derive(Clone, Debug)]
pub struct Limiter {
    pub spec: LimiterSpec,
    pub limit_ppm: u32,
    pub bucket: TokenBucket,
    /// Tasks blocked for a grant, first come first served.
    pub waiters: VecDeque<TaskId>,
    pub window: DelayWindow,
    /// Invalidates a scheduled `LimiterGrant` once the wait is recomputed.
    pub grant_generation: u32,
    /// Whether a `LimiterGrant` is scheduled with the current generation.
    pub grant_armed: bool,
    pub series: Series,
    /// Since the last adjustment: CPU time granted; and the limited tasks'
    /// CPU time at it.
    pub granted_since_ns: u64,
    pub used_mark_ns: u64,
    pub last_adjust: SimTime,
    /// Totals: grants handed out, CPU time granted, time tasks waited for a grant.
    pub grants: u64,
    pub granted_ns: u64,
    pub wait_ns: u64,
    /// Grant time returned unused at the end of a `run` step.
    pub returned_ns: u64,
}

impl Limiter {
    pub fn new(spec: LimiterSpec, cpus: u16) -> Limiter {
        let limit_ppm = spec.initial_ppm;
        Limiter {
            bucket: TokenBucket::new(spec.grant_ns, limit_ppm, cpus),
            window: DelayWindow::new(spec.window_slots()),
            limit_ppm,
            spec,
            waiters: VecDeque::new(),
            grant_generation: 0,
            grant_armed: false,
            series: Series::default(),
            granted_since_ns: 0,
            used_mark_ns: 0,
            last_adjust: SimTime::ZERO,
            grants: 0,
            granted_ns: 0,
            wait_ns: 0,
            returned_ns: 0,
        }
    }

    /// A grant for a task that asks now: only when nobody waits ahead of it
    /// (FIFO) and the bucket holds a whole grant.
    pub fn try_acquire(&mut self, now: SimTime) -> bool {
        if !self.waiters.is_empty() {
            return false;
        }
        self.take_grant(now)
    }

    /// Takes one grant from the bucket if it holds one.
    pub fn take_grant(&mut self, now: SimTime) -> bool {
        if !self.bucket.try_take(now, self.spec.grant_ns) {
            return false;
        }
        self.grants += 1;
        self.granted_ns += self.spec.grant_ns;
        self.granted_since_ns += self.spec.grant_ns;
        true
    }

    /// Unused grant time comes back at the end of a `run` step.
    pub fn give_back(&mut self, now: SimTime, ns: u64) {
        self.returned_ns += ns;
        self.bucket.give_back(now, ns);
    }

    /// The controller's period ends at `now`: reads the window, sets the
    /// limit, records the sample (`used_now_ns`: the limited tasks' CPU time
    /// so far) and starts the next period. Returns the new limit.
    pub fn adjust(&mut self, now: SimTime, used_now_ns: u64) -> u32 {
        let observed = self.window.percentile(self.spec.percentile);
        let limit = self.spec.next_limit(self.limit_ppm, observed);
        self.limit_ppm = limit;
        self.bucket.set_limit(now, limit);
        self.series.push(LimiterSample {
            at_ns: now.ns(),
            interval_ns: now.since(self.last_adjust),
            limit_ppm: limit,
            granted_ns: std::mem::take(&mut self.granted_since_ns),
            used_ns: used_now_ns.saturating_sub(self.used_mark_ns),
            observed_ns: observed,
        });
        self.used_mark_ns = used_now_ns;
        self.last_adjust = now;
        self.window.rotate();
        limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LimiterSpec {
        LimiterSpec {
            name: "l".into(),
            watch: vec![0],
            percentile: 99.0,
            target_ns: 1_000_000,
            window_ns: 2_500_000_000,
            adjust_every_ns: 1_000_000_000,
            step_up_ppm: 10_000,
            step_down_ppm: 50_000,
            floor_ppm: 50_000,
            ceiling_ppm: 750_000,
            initial_ppm: 50_000,
            grant_ns: 100_000_000,
        }
    }

    #[test]
    fn the_wait_for_a_grant_is_exact() {
        // 0.3 of a CPU on 2 CPUs: 600,000 tokens (0.6 CPU-ns) per ns.
        let mut b = TokenBucket::new(100_000_000, 300_000, 2);
        assert!(b.try_take(SimTime(0), 100_000_000), "starts full");
        assert!(!b.try_take(SimTime(0), 100_000_000));
        // 100 ms of CPU at 0.6 per ns: 166,666,666.67 ns, so 166,666,667.
        assert_eq!(b.wait_ns(100_000_000), Some(166_666_667));
        assert!(!b.try_take(SimTime(166_666_666), 100_000_000), "one ns early");
        assert_eq!(b.wait_ns(100_000_000), Some(1));
        assert!(b.try_take(SimTime(166_666_667), 100_000_000), "on time");
        // A rate change mid-wait: 0.1 ms at 0.6, then 1.0 of a CPU × 2.
        b.set_limit(SimTime(166_666_667 + 100_000), 1_000_000);
        // 60,000 CPU-ns held; 99,940,000 left at 2 per ns: 49,970,000 ns.
        assert_eq!(b.wait_ns(100_000_000), Some(49_970_000));
        assert_eq!(b.ready_at(100_000_000), Some(SimTime(166_666_667 + 100_000 + 49_970_000)));
        b.set_limit(SimTime(300_000_000), 0);
        assert_eq!(b.wait_ns(100_000_000), Some(0), "full before the rate went to 0");
        assert!(b.try_take(SimTime(300_000_000), 100_000_000));
        assert_eq!(b.wait_ns(100_000_000), None, "a zero rate never refills");
    }

    #[test]
    fn the_bucket_never_grants_more_than_it_was_given() {
        let mut b = TokenBucket::new(100_000_000, 750_000, 4);
        let initial = u128::from(b.capacity);
        let mut x: u64 = 7;
        let mut now = 0u64;
        for _ in 0..10_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            now += (x >> 40) % 50_000_000;
            match (x >> 20) % 4 {
                0 => b.set_limit(SimTime(now), ((x >> 8) % 1_000_001) as u32),
                1 => b.give_back(SimTime(now), (x >> 30) % 100_000_000),
                _ => {
                    b.try_take(SimTime(now), 100_000_000);
                }
            }
            assert!(b.granted_total <= initial + b.refilled_total + b.returned_total);
            assert!(b.tokens <= b.capacity, "no burst beyond one grant");
        }
        assert!(b.granted_total > 0);
    }

    #[test]
    fn no_burst_a_full_bucket_loses_its_refill() {
        let mut b = TokenBucket::new(100_000_000, 500_000, 1);
        b.refill(SimTime(10_000_000_000));
        assert_eq!(b.tokens_ns(), 100_000_000);
        assert!(b.try_take(SimTime(10_000_000_000), 100_000_000));
        assert!(!b.try_take(SimTime(10_000_000_000), 1));
        b.give_back(SimTime(10_000_000_000), 500_000_000);
        assert_eq!(b.tokens_ns(), 100_000_000, "returns are capped too");
    }

    #[test]
    fn the_controller_steps_and_clamps() {
        let s = spec();
        assert_eq!(s.next_limit(100_000, Some(2_000_000)), 50_000);
        assert_eq!(s.next_limit(60_000, Some(2_000_000)), 50_000, "clamped at the floor");
        assert_eq!(s.next_limit(100_000, Some(1_000_000)), 110_000, "at target counts as under");
        assert_eq!(s.next_limit(745_000, Some(0)), 750_000, "clamped at the ceiling");
        assert_eq!(s.next_limit(123_456, None), 123_456, "no sample: no change");
        let mut limit = s.initial_ppm;
        for i in 0..1000 {
            limit = s.next_limit(limit, Some(if i % 3 == 0 { 5_000_000 } else { 0 }));
            assert!((s.floor_ppm..=s.ceiling_ppm).contains(&limit));
        }
    }

    #[test]
    fn the_window_forgets_old_periods() {
        let mut l = Limiter::new(spec(), 2);
        assert_eq!(l.spec.window_slots(), 3, "2.5 s over 1 s periods: 3 whole periods");
        l.window.record(5_000_000);
        for _ in 0..99 {
            l.window.record(100);
        }
        assert_eq!(l.window.percentile(99.0), Some(100));
        assert_eq!(l.window.percentile(99.5), Some(l.window.percentile(100.0).unwrap()));
        let up = l.adjust(SimTime(1_000_000_000), 0);
        assert_eq!(up, 60_000, "p99 100 ns is under 1 ms");
        // Two more periods with no delay: the first one is still in the window.
        l.adjust(SimTime(2_000_000_000), 0);
        l.adjust(SimTime(3_000_000_000), 0);
        assert_eq!(l.limit_ppm, 80_000);
        assert_eq!(l.window.percentile(99.0), None, "three periods later it has left");
        l.adjust(SimTime(4_000_000_000), 0);
        assert_eq!(l.limit_ppm, 80_000, "no sample: no change");
        let s = l.series.all();
        assert_eq!(s.len(), 4);
        assert_eq!(s[3].observed_ns, None);
    }

    #[test]
    fn the_adjustment_reports_its_interval() {
        let mut l = Limiter::new(spec(), 1);
        assert!(l.try_acquire(SimTime(0)));
        l.window.record(3_000_000);
        l.adjust(SimTime(1_000_000_000), 70_000_000);
        let s = l.series.all()[0];
        let mut h = LogLinear::default();
        h.record(3_000_000);
        assert_eq!(
            s,
            LimiterSample {
                at_ns: 1_000_000_000,
                interval_ns: 1_000_000_000,
                limit_ppm: 50_000,
                granted_ns: 100_000_000,
                used_ns: 70_000_000,
                observed_ns: Some(h.value_at_quantile(0.99)),
            }
        );
    }

    #[test]
    fn the_series_stays_bounded() {
        let mut s = Series::default();
        for i in 1..=(3 * SERIES_MAX as u64) {
            s.push(LimiterSample { at_ns: i, interval_ns: 1, used_ns: 2, ..Default::default() });
        }
        let all = s.all();
        assert!(all.len() <= SERIES_MAX);
        assert_eq!(all.iter().map(|x| x.interval_ns).sum::<u64>(), 3 * SERIES_MAX as u64);
        assert_eq!(all.iter().map(|x| x.used_ns).sum::<u64>(), 6 * SERIES_MAX as u64);
        assert_eq!(all.last().map(|x| x.at_ns), Some(3 * SERIES_MAX as u64));
    }
}
