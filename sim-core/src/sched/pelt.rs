//! Per-entity load tracking (PELT) as Linux 4.4 fair.c computes it, load
//! part only: `decay_load`, `__compute_runnable_contrib`, `__update_load_avg`
//! (with its `cfs_rq` argument, which also ages `runnable_load_sum`).
//!
//! Time is counted in periods of 1024 µs (`delta >>= 10` turns ns into the
//! kernel's ~µs units); a contribution decays by y per period with
//! y^32 = 1/2 (`LOAD_AVG_PERIOD`). `load_avg = load_sum / LOAD_AVG_MAX`, so
//! an entity runnable all the time converges to its weight.
//!
//! Only the load signal is kept: `calc_cfs_shares` reads it through
//! `tg->load_avg`, and the load balancer and `wake_affine` through the root
//! queues' `runnable_load_avg` (`weighted_cpuload`), `task_h_load` and
//! `effective_load`. The utilisation signal (`util_avg`) feeds cpufreq and
//! capacity decisions, which are not modelled.

/// `LOAD_AVG_PERIOD` (4.4 fair.c): the half-life, in periods.
pub const LOAD_AVG_PERIOD: u64 = 32;
/// `LOAD_AVG_MAX` (4.4 fair.c): the largest `load_sum` per unit of weight.
pub const LOAD_AVG_MAX: u64 = 47742;
/// `LOAD_AVG_MAX_N` (4.4 fair.c): full periods that produce `LOAD_AVG_MAX`.
pub const LOAD_AVG_MAX_N: u64 = 345;

/// `runnable_avg_yN_inv` (4.4 fair.c): y^n · 2^32 for n < 32.
const RUNNABLE_AVG_YN_INV: [u32; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796, 0xd744fcc9,
    0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46, 0xb504f333, 0xb123f581,
    0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9, 0x9837f050, 0x94f4efa8, 0x91c3d373,
    0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

/// `runnable_avg_yN_sum` (4.4 fair.c): 1024 · Σ y^k for 1 ≤ k ≤ n, floored.
const RUNNABLE_AVG_YN_SUM: [u32; 33] = [
    0, 1002, 1982, 2941, 3880, 4798, 5697, 6576, 7437, 8279, 9103, 9909, 10698, 11470, 12226, 12966, 13690, 14398,
    15091, 15769, 16433, 17082, 17718, 18340, 18949, 19545, 20128, 20698, 21256, 21802, 22336, 22859, 23371,
];

/// `struct sched_avg` (4.4 sched.h), load part; 6.x's fields at the end
/// (`pelt6x.rs` gives `load_sum`, `util_sum` and `load_avg` their 6.x meaning).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedAvg {
    /// `rq_clock_task` (ns) of the last update.
    pub last_update_time: u64,
    pub load_sum: u64,
    pub load_avg: u64,
    /// Part of the current period already accounted, in 1024 ns units.
    pub period_contrib: u32,
    /// Running time (at full capacity scale, `scale_cpu` = 1024 with no
    /// SMT capacity in `arch_scale_cpu_capacity(NULL, cpu)`).
    pub util_sum: u64,
    pub util_avg: u64,
    /// Whether the average is attached to a run queue. The kernel encodes
    /// "detached" as `last_update_time == 0`; simulated time starts at 0, so
    /// the flag is explicit here.
    pub attached: bool,
    /// 6.x only (`pelt6x.rs`): `runnable_sum` and `runnable_avg` (5.7+).
    pub runnable_sum: u64,
    pub runnable_avg: u64,
    /// 6.x only: `util_est` (UTIL_EST).
    pub util_est: UtilEst,
}

/// `struct util_est` (6.6 sched.h: `enqueued` and `ewma`). 6.12+ keeps one
/// `unsigned int util_est`: a task's is held in `ewma` (with the
/// UTIL_AVG_UNCHANGED flag), a root queue's sum in `enqueued`, as 6.6's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UtilEst {
    pub enqueued: u32,
    pub ewma: u32,
}

impl SchedAvg {
    /// `init_entity_runnable_average` (4.4 fair.c): a new entity starts as if
    /// it had always been runnable, so a new task is not under-weighted.
    pub fn new_entity(weight: u64) -> SchedAvg {
        SchedAvg {
            last_update_time: 0,
            period_contrib: 1023,
            load_avg: weight,
            load_sum: weight * LOAD_AVG_MAX,
            // sa->util_avg = scale_load_down(SCHED_LOAD_SCALE): fully busy.
            util_avg: UTIL_SCALE,
            util_sum: UTIL_SCALE * LOAD_AVG_MAX,
            attached: false,
            runnable_sum: 0,
            runnable_avg: 0,
            util_est: UtilEst { enqueued: 0, ewma: 0 },
        }
    }
}

/// `scale_cpu` for utilisation: SCHED_CAPACITY_SCALE.
pub const UTIL_SCALE: u64 = 1024;

/// `mul_u64_u32_shr(val, mul, 32)`.
fn mul_shr32(val: u64, mul: u32) -> u64 {
    ((u128::from(val) * u128::from(mul)) >> 32) as u64
}

/// `decay_load` (4.4 fair.c): `val · y^n`.
pub fn decay_load(mut val: u64, n: u64) -> u64 {
    if n == 0 {
        return val;
    }
    if n > LOAD_AVG_PERIOD * 63 {
        return 0;
    }
    let mut local_n = n;
    if local_n >= LOAD_AVG_PERIOD {
        val >>= local_n / LOAD_AVG_PERIOD;
        local_n %= LOAD_AVG_PERIOD;
    }
    mul_shr32(val, RUNNABLE_AVG_YN_INV[local_n as usize])
}

/// `__compute_runnable_contrib` (4.4 fair.c): 1024 · Σ y^k for 1 ≤ k ≤ n.
fn compute_runnable_contrib(mut n: u64) -> u64 {
    if n <= LOAD_AVG_PERIOD {
        return u64::from(RUNNABLE_AVG_YN_SUM[n as usize]);
    }
    if n >= LOAD_AVG_MAX_N {
        return LOAD_AVG_MAX;
    }
    // Bounded: n < LOAD_AVG_MAX_N, so at most 11 rounds.
    let mut contrib: u64 = 0;
    loop {
        contrib /= 2;
        contrib += u64::from(RUNNABLE_AVG_YN_SUM[LOAD_AVG_PERIOD as usize]);
        n -= LOAD_AVG_PERIOD;
        if n <= LOAD_AVG_PERIOD {
            break;
        }
    }
    decay_load(contrib, n) + u64::from(RUNNABLE_AVG_YN_SUM[n as usize])
}

/// `__update_load_avg` (4.4 fair.c) with `cfs_rq == NULL`, load part,
/// frequency and CPU capacity at full scale: accrue `weight` for the time
/// since the last update, decaying whole periods. Returns whether a period
/// boundary was crossed (`decayed`), which is when `load_avg` is recomputed.
#[inline]
pub fn update_load_avg(now: u64, sa: &mut SchedAvg, weight: u64, running: bool) -> bool {
    accrue::<false>(now, sa, weight, if running { UTIL_SCALE } else { 0 }, &mut RqSums::default())
}

/// What `__update_load_avg` accrues for a `cfs_rq` beside its `sched_avg`:
/// `runnable_load_sum` (the queued entities' weight).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RqSums {
    pub runnable_load_sum: u64,
}

/// `__update_load_avg` (4.4 fair.c) given the `cfs_rq` whose `avg` `sa` is:
/// `runnable_load_sum` accrues the same `weight` and decays with it. Returns
/// `decayed`; the caller then recomputes `runnable_load_avg` from the sum.
#[inline]
pub fn update_cfs_rq_avg(now: u64, sa: &mut SchedAvg, weight: u64, running: bool, sums: &mut RqSums) -> bool {
    accrue::<true>(now, sa, weight, if running { UTIL_SCALE } else { 0 }, sums)
}

/// The body of `__update_load_avg`; `RQ` says whether a `cfs_rq` was given
/// (a const parameter, so the entity path pays nothing for the queue part).
/// Inlined up to the common case, an update within the current period; the
/// period crossing is out of line.
#[inline(always)]
fn accrue<const RQ: bool>(now: u64, sa: &mut SchedAvg, weight: u64, util_w: u64, sums: &mut RqSums) -> bool {
    let Some(delta) = now.checked_sub(sa.last_update_time) else {
        // "This should only happen when time goes backwards".
        sa.last_update_time = now;
        return false;
    };
    let delta = delta >> 10;
    if delta == 0 {
        return false;
    }
    sa.last_update_time = now;
    if delta + u64::from(sa.period_contrib) < 1024 {
        sa.load_sum += weight * delta;
        sa.util_sum += util_w * delta;
        if RQ {
            sums.runnable_load_sum += weight * delta;
        }
        sa.period_contrib += delta as u32;
        return false;
    }
    accrue_periods::<RQ>(sa, weight, util_w, sums, delta);
    true
}

/// The period-crossing part of `__update_load_avg` (`decayed = 1`).
#[inline(never)]
fn accrue_periods<const RQ: bool>(sa: &mut SchedAvg, weight: u64, util_w: u64, sums: &mut RqSums, mut delta: u64) {
    // Finish the period that was under way.
    let delta_w = 1024 - u64::from(sa.period_contrib);
    sa.load_sum += weight * delta_w;
    sa.util_sum += util_w * delta_w;
    if RQ {
        sums.runnable_load_sum += weight * delta_w;
    }
    delta -= delta_w;
    let periods = delta / 1024;
    delta %= 1024;
    let contrib = compute_runnable_contrib(periods);
    sa.load_sum = decay_load(sa.load_sum, periods + 1) + weight * contrib;
    sa.util_sum = decay_load(sa.util_sum, periods + 1) + util_w * contrib;
    if RQ {
        sums.runnable_load_sum = decay_load(sums.runnable_load_sum, periods + 1) + weight * contrib;
    }
    // Remainder of delta accrued against the new period.
    sa.load_sum += weight * delta;
    sa.util_sum += util_w * delta;
    if RQ {
        sums.runnable_load_sum += weight * delta;
    }
    sa.period_contrib = delta as u32;
    sa.load_avg = sa.load_sum / LOAD_AVG_MAX;
    sa.util_avg = sa.util_sum / LOAD_AVG_MAX;
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERIOD_NS: u64 = 1024 * 1024;

    #[test]
    fn decay_halves_every_32_periods() {
        // y^0 is stored as 0xffffffff, so even a whole half-life loses one unit.
        assert_eq!(decay_load(1 << 20, 32), (1 << 19) - 1);
        assert_eq!(decay_load(1 << 20, 64), (1 << 18) - 1);
        // y^1 ≈ 0.97857: 1024 → 1002 (the first entry of runnable_avg_yN_sum).
        assert_eq!(decay_load(1024, 1), 1002);
        assert_eq!(decay_load(u64::MAX, 32 * 63 + 1), 0);
    }

    #[test]
    fn runnable_contrib_matches_the_table_and_saturates() {
        assert_eq!(compute_runnable_contrib(32), 23371);
        // 64 periods: the first 32 halved, plus another 32.
        let c64 = compute_runnable_contrib(64);
        assert!((23371 + 23371 / 2 - 2..=23371 + 23371 / 2 + 2).contains(&c64), "{c64}");
        assert_eq!(compute_runnable_contrib(LOAD_AVG_MAX_N), LOAD_AVG_MAX);
    }

    /// An always-runnable nice-0 entity converges to (almost) its weight; once
    /// it stops, its average halves every 32 periods.
    #[test]
    fn load_avg_converges_to_the_weight_and_decays_with_a_32_period_half_life() {
        let mut sa = SchedAvg { attached: true, ..SchedAvg::default() };
        let mut now = 0;
        for _ in 0..1000 {
            now += 1_000_000; // 1 ms updates, as a 1000 Hz tick does
            update_load_avg(now, &mut sa, 1024, false);
        }
        assert!((1000..=1024).contains(&sa.load_avg), "converged to {}", sa.load_avg);
        let full = sa.load_avg;
        update_load_avg(now + 32 * PERIOD_NS, &mut sa, 0, false);
        let half = sa.load_avg;
        assert!(half.abs_diff(full / 2) <= full / 50, "{full} → {half} after 32 periods");
    }

    /// With a `cfs_rq`, `runnable_load_sum` accrues the queue's weight and
    /// decays exactly like the queue's own `load_sum` (4.4 `__update_load_avg`
    /// applies the same steps to both).
    #[test]
    fn runnable_load_sum_follows_the_queue_sum() {
        let mut sa = SchedAvg { attached: true, ..SchedAvg::default() };
        let mut plain = sa;
        let mut runnable = RqSums::default();
        let mut busy = SchedAvg { attached: true, ..SchedAvg::default() };
        let mut now = 0;
        for step in 0..300u64 {
            now += 700_000 + step * 13_000;
            let weight = if step % 3 == 0 { 0 } else { 1024 + step };
            let d = update_cfs_rq_avg(now, &mut sa, weight, true, &mut runnable);
            assert_eq!(d, update_load_avg(now, &mut plain, weight, true));
            update_load_avg(now, &mut busy, 1024, false);
        }
        assert_eq!(sa, plain, "the cfs_rq variant changes nothing in the queue's own average");
        assert_eq!(runnable.runnable_load_sum, sa.load_sum, "started equal (0), so they stay equal");
        assert_eq!(sa.util_sum, busy.load_sum, "running time accrues at scale 1024 like a weight of 1024");
        // A runnable sum that started higher decays towards the same value.
        let mut high = RqSums { runnable_load_sum: sa.load_sum + 1_000_000 };
        update_cfs_rq_avg(now + 64 * PERIOD_NS, &mut sa, 0, false, &mut high);
        // 64 periods: y^64 = 1/4, so the extra 1e6 is down to about 250000.
        let extra = high.runnable_load_sum - sa.load_sum;
        assert!((249_990..=250_002).contains(&extra), "{extra}");
    }

    #[test]
    fn sub_microsecond_updates_change_nothing() {
        let mut sa = SchedAvg::new_entity(1024);
        sa.last_update_time = 5000;
        assert!(!update_load_avg(5000 + 1023, &mut sa, 1024, false));
        assert_eq!(sa.last_update_time, 5000, "last_update_time only moves once a 1024 ns unit passed");
    }
}
