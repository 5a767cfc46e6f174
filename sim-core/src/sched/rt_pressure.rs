//! The time the RT and deadline classes take from a CPU, as the fair load
//! balancer sees it (`scale_rt_capacity`): 4.4's `rq->rt_avg` with its
//! `age_stamp` decay, 6.x's PELT signals `rq->avg_rt` and `rq->avg_dl`.
//! Reading note: docs/kernel/rt-capacity.md.
//!
//! The classes feed the signals where the kernel does (rt.c and deadline.c
//! `update_curr_*` in 4.4; `put_prev_task_*`, `set_next_task_*` and
//! `task_tick_*` in 6.x, and `update_blocked_averages`); the balancers
//! (`balance/linux44`, `balance/linux6x`) read them through
//! `Machine::rt_pressure` and turn them into `rq->cpu_capacity`. IRQ time,
//! thermal/HW pressure and frequency invariance are not modelled (0, and
//! `arch_scale_freq_capacity` = 1024). With no RT or deadline task every
//! signal stays 0, so the capacities equal the original ones.

use super::ClassKind;
use super::pelt::SchedAvg;
use super::pelt6x::{update_load_avg, update_load_sum};

/// Which signal a version keeps (a rule of the version table, `RtRules`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtCapacitySignal {
    /// No signal (a class built without a version, in unit tests).
    Off,
    /// 4.4: `rq->rt_avg` (ns × capacity) of RT and deadline run time,
    /// halved every `sched_avg_period()` (`sysctl_sched_time_avg` / 2 =
    /// 500 ms; 4.4 sched.h:1376-1379, core.c:752-766), fed by
    /// `sched_rt_avg_update` (sched.h:1430-1434) from `update_curr_rt`
    /// (rt.c:952) and `update_curr_dl` (deadline.c:861).
    RtAvg,
    /// 6.x: `rq->avg_rt` and `rq->avg_dl`, PELT running averages
    /// (pelt.c `update_rt_rq_load_avg` / `update_dl_rq_load_avg`).
    Pelt,
}

/// `sysctl_sched_time_avg` (4.4 core.c: `MSEC_PER_SEC`), in ns.
pub const SCHED_TIME_AVG_NS: u64 = 1_000_000_000;
/// `sched_avg_period()` (4.4 sched.h:1376-1379): half of it.
pub const SCHED_AVG_PERIOD_NS: u64 = SCHED_TIME_AVG_NS / 2;
/// `arch_scale_freq_capacity` (4.4 sched.h: SCHED_CAPACITY_SCALE without
/// frequency invariance).
const FREQ_CAPACITY: u64 = 1024;

/// One CPU's signals (the fields of `struct rq`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RqPressure {
    /// 4.4 `rq->rt_avg`: run time × `arch_scale_freq_capacity`, decayed.
    pub rt_avg: u64,
    /// 4.4 `rq->age_stamp` (ns): the start of the current averaging period.
    pub age_stamp: u64,
    /// 6.x `rq->avg_rt` and `rq->avg_dl`.
    pub avg_rt: SchedAvg,
    pub avg_dl: SchedAvg,
}

/// Every CPU's signals, of one version's kind.
#[derive(Clone, Debug)]
pub struct RtPressure {
    signal: RtCapacitySignal,
    rqs: Vec<RqPressure>,
}

impl Default for RtPressure {
    fn default() -> RtPressure {
        RtPressure { signal: RtCapacitySignal::Off, rqs: Vec::new() }
    }
}

impl RtPressure {
    pub fn new(signal: RtCapacitySignal, ncpus: usize) -> RtPressure {
        RtPressure { signal, rqs: vec![RqPressure::default(); ncpus] }
    }

    /// The signals of `cpu` (all 0 when off).
    #[inline]
    pub fn rq(&self, cpu: usize) -> RqPressure {
        self.rqs.get(cpu).copied().unwrap_or_default()
    }

    /// `sched_rt_avg_update` (4.4 sched.h:1430-1434): `rt_avg += delta ·
    /// arch_scale_freq_capacity`, then `sched_avg_update`. From
    /// `update_curr_rt` and `update_curr_dl` with the time just charged.
    #[inline]
    pub fn sched_rt_avg_update(&mut self, cpu: usize, now: u64, delta: u64) {
        if self.signal != RtCapacitySignal::RtAvg || delta == 0 {
            return;
        }
        self.rqs[cpu].rt_avg += delta * FREQ_CAPACITY;
        self.sched_avg_update(cpu, now);
    }

    /// `sched_avg_update` (4.4 core.c:752-766): while more than a period
    /// has passed since `age_stamp`, move it on by a period and halve
    /// `rt_avg`. Also from `__update_cpu_load` (4.4 fair.c:4393). The
    /// kernel's loop runs `k` times for the smallest `k` that leaves
    /// `now − age_stamp ≤ period`; here in closed form (no unbounded loop).
    pub fn sched_avg_update(&mut self, cpu: usize, now: u64) {
        if self.signal != RtCapacitySignal::RtAvg {
            return;
        }
        let rq = &mut self.rqs[cpu];
        let gap = now.saturating_sub(rq.age_stamp);
        if gap <= SCHED_AVG_PERIOD_NS {
            return;
        }
        let k = (gap - SCHED_AVG_PERIOD_NS).div_ceil(SCHED_AVG_PERIOD_NS);
        rq.age_stamp += k * SCHED_AVG_PERIOD_NS;
        rq.rt_avg = if k >= 64 { 0 } else { rq.rt_avg >> k };
    }

    /// `update_rt_rq_load_avg(now, rq, running)` (6.x pelt.c:346-357):
    /// `___update_load_sum(now, &rq->avg_rt, running, running, running)`,
    /// then `___update_load_avg(&rq->avg_rt, 1)` when a period was crossed.
    #[inline]
    pub fn update_rt_rq_load_avg(&mut self, cpu: usize, now: u64, running: bool) -> bool {
        if self.signal != RtCapacitySignal::Pelt {
            return false;
        }
        update_rq_avg(&mut self.rqs[cpu].avg_rt, now, running)
    }

    /// `update_dl_rq_load_avg` (6.x pelt.c:372-383), the same on `rq->avg_dl`.
    #[inline]
    pub fn update_dl_rq_load_avg(&mut self, cpu: usize, now: u64, running: bool) -> bool {
        if self.signal != RtCapacitySignal::Pelt {
            return false;
        }
        update_rq_avg(&mut self.rqs[cpu].avg_dl, now, running)
    }

    /// `put_prev_task_rt` / `put_prev_task_dl` (6.6 rt.c:1834,
    /// deadline.c:2043; 6.12 rt.c:1761, deadline.c:2449; 6.18 rt.c:1720,
    /// deadline.c:2400) and `task_tick_rt` / `task_tick_dl` (6.6 rt.c:2648,
    /// deadline.c:2060; 6.12 2575, 2466; 6.18 2511, 2421): the class's
    /// signal accrues as running. 4.4: nothing (its time is fed by `update_curr_*`).
    #[inline]
    pub fn running(&mut self, class: ClassKind, cpu: usize, now: u64) {
        match class {
            ClassKind::Rt => {
                self.update_rt_rq_load_avg(cpu, now, true);
            }
            ClassKind::Deadline => {
                self.update_dl_rq_load_avg(cpu, now, true);
            }
            _ => {}
        }
    }

    /// `set_next_task_rt` / `set_next_task_dl` (6.6 rt.c:1764,
    /// deadline.c:1991; 6.12 1701, 2384; 6.18 1660, 2336): when the outgoing task (`rq->curr`, 6.12+
    /// `rq->donor`) is of another class, the signal accrues the time since
    /// its last update as not running.
    #[inline]
    pub fn set_next(&mut self, class: ClassKind, prev: Option<ClassKind>, cpu: usize, now: u64) {
        if prev == Some(class) {
            return;
        }
        match class {
            ClassKind::Rt => {
                self.update_rt_rq_load_avg(cpu, now, false);
            }
            ClassKind::Deadline => {
                self.update_dl_rq_load_avg(cpu, now, false);
            }
            _ => {}
        }
    }

    /// `__update_blocked_others` (6.6 fair.c:9151-9174; 6.12+
    /// `update_other_load_avgs`, pelt.c:476-489): both signals decay to
    /// `now`, as running for the class of `curr`. Returns whether either
    /// was updated (crossed a period).
    pub fn update_other_load_avgs(&mut self, cpu: usize, now: u64, curr: Option<ClassKind>) -> bool {
        if self.signal != RtCapacitySignal::Pelt {
            return false;
        }
        let rt = self.update_rt_rq_load_avg(cpu, now, curr == Some(ClassKind::Rt));
        let dl = self.update_dl_rq_load_avg(cpu, now, curr == Some(ClassKind::Deadline));
        rt | dl
    }

    /// `others_have_blocked` (6.6 fair.c:9115-9132, 6.12 9694, 6.18 9748):
    /// either signal still has utilisation, so `rq->has_blocked_load`
    /// stays set (IRQ and thermal/HW pressure: not modelled).
    pub fn others_have_blocked(&self, cpu: usize) -> bool {
        let rq = self.rq(cpu);
        rq.avg_rt.util_avg != 0 || rq.avg_dl.util_avg != 0
    }
}

/// The body of `update_rt_rq_load_avg` / `update_dl_rq_load_avg`: a 0/1
/// signal for load, runnable and running alike.
#[inline]
fn update_rq_avg(sa: &mut SchedAvg, now: u64, running: bool) -> bool {
    let r = u64::from(running);
    if update_load_sum(now, sa, r, r, running) {
        update_load_avg(sa, 1);
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// 4.4: an RT task runs 100 ms from t = 0 (update_curr_rt at each 4 ms
    /// tick adds delta·1024 to rt_avg); then nothing runs. sched_avg_update
    /// halves rt_avg once per 500 ms period past age_stamp = 0, only when
    /// `now − age_stamp > 500 ms` (core.c:756).
    #[test]
    fn rt_avg_accrues_and_halves_per_period() {
        let mut p = RtPressure::new(RtCapacitySignal::RtAvg, 1);
        for k in 1..=25 {
            p.sched_rt_avg_update(0, k * 4 * MS, 4 * MS);
        }
        assert_eq!(p.rq(0).rt_avg, 100 * MS * 1024);
        // At exactly 500 ms nothing decays (the test is strict).
        p.sched_avg_update(0, 500 * MS);
        assert_eq!((p.rq(0).rt_avg, p.rq(0).age_stamp), (100 * MS * 1024, 0));
        // At 1200 ms: 1200 − 0 > 500 → age 500, halve; 1200 − 500 > 500 →
        // age 1000, halve; 200 ≤ 500 stops. Two halvings.
        p.sched_avg_update(0, 1200 * MS);
        assert_eq!((p.rq(0).rt_avg, p.rq(0).age_stamp), (25 * MS * 1024, 1000 * MS));
        // A gap of 40 s: 79 periods (age ends at 40 s − 500 ms … ≤ 500 ms behind), rt_avg 0.
        p.sched_avg_update(0, 41_000 * MS);
        assert_eq!((p.rq(0).rt_avg, p.rq(0).age_stamp), (0, 40_500 * MS));
    }

    /// 4.4 rt.c:952: the time is added before the decay, so a charge that
    /// lands after a period boundary is halved with the rest.
    #[test]
    fn rt_avg_charge_after_a_boundary_is_halved_too() {
        let mut p = RtPressure::new(RtCapacitySignal::RtAvg, 1);
        p.sched_rt_avg_update(0, 504 * MS, 8 * MS);
        assert_eq!((p.rq(0).rt_avg, p.rq(0).age_stamp), (4 * MS * 1024, 500 * MS));
    }

    /// 6.x: avg_rt of a CPU an RT task keeps busy climbs towards 1024
    /// (PELT: y^32 = 1/2, so after 32 periods of 1024 µs the average is
    /// within half of the distance; after ~345 periods the sum saturates
    /// at LOAD_AVG_MAX and util_avg reads its full 1024·sum/divider).
    #[test]
    fn avg_rt_of_a_busy_cpu_approaches_1024_and_decays_when_blocked() {
        let mut p = RtPressure::new(RtCapacitySignal::Pelt, 1);
        // set_next_task_rt at 0 from idle, then a tick every 4 ms for 2 s.
        p.set_next(ClassKind::Rt, None, 0, 0);
        let mut t = 0;
        let mut at_32ms = 0;
        for _ in 0..500 {
            t += 4 * MS;
            p.running(ClassKind::Rt, 0, t);
            if t == 32 * MS {
                at_32ms = p.rq(0).avg_rt.util_avg;
            }
        }
        // ~32 ms ≈ 31 periods: 1024·(1 − y^31) ≈ 502.
        assert!((480..=520).contains(&at_32ms), "{at_32ms}");
        let full = p.rq(0).avg_rt.util_avg;
        assert!((1000..=1024).contains(&full), "{full}");
        assert_eq!(p.rq(0).avg_dl.util_avg, 0);
        // update_blocked_averages 32 periods (33.5 ms) later, nothing running: about half.
        let later = t + 32 * 1024 * 1024;
        assert!(p.update_other_load_avgs(0, later, None));
        assert!(p.others_have_blocked(0));
        let half = p.rq(0).avg_rt.util_avg;
        assert!(half.abs_diff(full / 2) <= 8, "{half} vs {full}");
    }

    /// Off, or the other version's signal: every hook leaves 0.
    #[test]
    fn signals_stay_zero_when_not_this_versions() {
        let mut p = RtPressure::new(RtCapacitySignal::Pelt, 1);
        p.sched_rt_avg_update(0, 10 * MS, 10 * MS);
        assert_eq!(p.rq(0), RqPressure::default());
        let mut q = RtPressure::new(RtCapacitySignal::RtAvg, 1);
        q.running(ClassKind::Rt, 0, 10 * MS);
        assert!(!q.update_other_load_avgs(0, 20 * MS, Some(ClassKind::Rt)));
        assert_eq!(q.rq(0), RqPressure::default());
        let mut off = RtPressure::default();
        assert_eq!(off.rq(3), RqPressure::default());
        off.sched_avg_update(0, 1);
    }
}
