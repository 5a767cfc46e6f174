//! Per-entity load tracking as Linux 6.x computes it: kernel/sched/pelt.c
//! and pelt.h of 6.6, 6.12 and 6.18 (the arithmetic is the same in the
//! three; what a queue counts as runnable differs, and the caller passes it).
//! fair.c's half (attach, detach, propagation, removal) is `fair_pelt6x.rs`.
//!
//! Against 4.4's `__update_load_avg` (`pelt.rs`):
//! - three sums: `load_sum` (for an entity unweighted, 0/1 while queued; for
//!   a queue its weight), `runnable_sum` (runnable count << 10) and
//!   `util_sum` (running << 10), each split in three segments
//!   (`accumulate_sum`: d1 closes the last period, d2 the full periods, d3
//!   opens the current one);
//! - averages over `get_pelt_divider` = `PELT_MIN_DIVIDER + period_contrib`
//!   instead of `LOAD_AVG_MAX`, so a saturated signal reads its full value
//!   at any point of a period; an entity's `load_avg = weight · load_sum / divider`;
//! - `last_update_time` moves by whole 1024 ns units (`+= delta << 10`), so
//!   the sub-µs remainder is carried to the next update, not dropped.
//!
//! Time is `cfs_rq_clock_pelt`, which with full CPU capacity, maximum
//! frequency and no IRQ or steal time is `rq_clock_task` (minus the time
//! the queue spent throttled, `fair_pelt6x.rs`): `update_rq_clock_pelt`'s
//! `cap_scale` by `arch_scale_cpu_capacity` and `arch_scale_freq_capacity`
//! scales by 1024/1024 here, and `lost_idle_time` stays 0 (the clock never
//! lags `clock_task`). No frequency or capacity invariance is modelled.

use super::pelt::{LOAD_AVG_MAX, SchedAvg, decay_load};

/// Where 6.6, 6.12 and 6.18 PELT differ, each a named rule; the version
/// table (`model.rs`: `PELT_66`, `PELT_612`, `PELT_618`) holds one value per version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pelt6xRules {
    /// The runnable count of a queue and of a group entity leaves delayed
    /// tasks out: 6.18 pelt.c `__update_load_avg_cfs_rq` and sched.h
    /// `se_update_runnable` read `h_nr_runnable`; 6.6/6.12 `h_nr_running`.
    pub runnable_excludes_delayed: bool,
    /// `cfs_rq_is_decayed` also waits for `tg_load_avg_contrib` to reach 0
    /// (6.18.2 fair.c:4062, a stable fix; not in 6.18.0), so a queue stays
    /// on the leaf list until `update_tg_load_avg` has withdrawn its share.
    pub decayed_needs_no_contrib: bool,
    /// `update_tg_load_avg` publishes at most once per ms (6.12 fair.c; not in 6.6).
    pub tg_load_avg_ratelimit: bool,
    /// `post_init_entity_util_avg` multiplies by `se->load.weight`, which a
    /// 64-bit kernel keeps scaled by 2^10 (6.6 fair.c); 6.12 uses `se_weight(se)`.
    pub post_init_scaled_weight: bool,
    pub util_est: UtilEstRules,
}

/// How a version keeps util_est (UTIL_EST, on in 6.6, 6.12 and 6.18 features.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtilEstRules {
    /// 6.6 `struct util_est { enqueued, ewma }` with `within_margin` on both
    /// and UTIL_EST_FASTUP, updated at the end of `dequeue_task_fair`;
    /// 6.12+ one `unsigned int` (the ewma), updated before `dequeue_entities`.
    pub enqueued_and_ewma: bool,
    /// `util_est_update` skips a task above the CPU's capacity (6.6, 6.12; gone in 6.18).
    pub capacity_skip: bool,
    /// Which delayed tasks `util_est_enqueue`/`_dequeue` skip.
    pub delayed: UtilEstDelayed,
}

/// `enqueue_task_fair`/`dequeue_task_fair`'s util_est test of a delayed task:
/// none (6.6, no delayed tasks); skip one that migrates (6.12); skip every
/// delayed one but an ENQUEUE_DELAYED requeue (6.18).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UtilEstDelayed {
    NoDelay,
    SkipMigrating,
    SkipDelayed,
}

/// `PELT_MIN_DIVIDER` (6.x pelt.h): `LOAD_AVG_MAX - 1024`, `LOAD_AVG_MAX · y`.
pub const PELT_MIN_DIVIDER: u64 = LOAD_AVG_MAX - 1024;
/// `SCHED_CAPACITY_SHIFT`: running and runnable sums are scaled by 1024.
pub const SCHED_CAPACITY_SHIFT: u32 = 10;
/// `UTIL_AVG_UNCHANGED` (6.x sched.h): util_est's "no PELT update since enqueue" flag.
pub const UTIL_AVG_UNCHANGED: u32 = 0x8000_0000;

/// `get_pelt_divider` (6.x pelt.h): the largest sum at this point of the period.
#[inline]
pub fn get_pelt_divider(sa: &SchedAvg) -> u64 {
    PELT_MIN_DIVIDER + u64::from(sa.period_contrib)
}

/// `__accumulate_pelt_segments` (6.x pelt.c): `d1·y^p + 1024·Σ_{n=1}^{p-1} y^n + d3`.
fn accumulate_pelt_segments(periods: u64, d1: u32, d3: u32) -> u32 {
    let c1 = decay_load(u64::from(d1), periods) as u32;
    let c2 = (LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, periods) - 1024) as u32;
    c1 + c2 + d3
}

/// `accumulate_sum` (6.x pelt.c), the case that stays within the current
/// period: each sum gains its signal times `delta`. Crossing a period is
/// out of line. Returns the periods crossed.
#[inline(always)]
fn accumulate_sum(delta: u64, sa: &mut SchedAvg, load: u64, runnable: u64, running: bool) -> u64 {
    if delta + u64::from(sa.period_contrib) >= 1024 {
        return accumulate_periods(delta, sa, load, runnable, running);
    }
    // p == 0: contrib = delta.
    sa.period_contrib += delta as u32;
    add_contrib(sa, delta as u32, load, runnable, running);
    0
}

/// `accumulate_sum` (6.x pelt.c) across period boundaries: decay the sums
/// by the periods crossed (step 1), then add the three segments (step 2).
#[inline(never)]
fn accumulate_periods(delta: u64, sa: &mut SchedAvg, load: u64, runnable: u64, running: bool) -> u64 {
    let mut contrib = delta as u32;
    let delta = delta + u64::from(sa.period_contrib);
    let periods = delta / 1024;
    sa.load_sum = decay_load(sa.load_sum, periods);
    sa.runnable_sum = decay_load(sa.runnable_sum, periods);
    sa.util_sum = decay_load(sa.util_sum, periods);
    let d3 = delta % 1024;
    // With no load, runnable and running are 0 too: contrib is not needed.
    if load != 0 {
        contrib = accumulate_pelt_segments(periods, 1024 - sa.period_contrib, d3 as u32);
    }
    sa.period_contrib = d3 as u32;
    add_contrib(sa, contrib, load, runnable, running);
    periods
}

/// The end of `accumulate_sum`: `load_sum += load·contrib`,
/// `runnable_sum += runnable·contrib << 10`, `util_sum += contrib << 10`.
#[inline(always)]
fn add_contrib(sa: &mut SchedAvg, contrib: u32, load: u64, runnable: u64, running: bool) {
    let contrib = u64::from(contrib);
    if load != 0 {
        sa.load_sum += load * contrib;
    }
    if runnable != 0 {
        sa.runnable_sum += (runnable * contrib) << SCHED_CAPACITY_SHIFT;
    }
    if running {
        sa.util_sum += contrib << SCHED_CAPACITY_SHIFT;
    }
}

/// `___update_load_sum` (6.x pelt.c): accrue the three sums up to `now`.
/// Returns whether a period boundary was crossed (the averages are then
/// recomputed by `update_load_avg`).
#[inline(always)]
pub fn update_load_sum(now: u64, sa: &mut SchedAvg, load: u64, runnable: u64, running: bool) -> bool {
    let Some(delta) = now.checked_sub(sa.last_update_time) else {
        // "This should only happen when time goes backwards".
        sa.last_update_time = now;
        return false;
    };
    // 1024 ns as the unit: a reasonable approximation of 1 µs.
    let delta = delta >> 10;
    if delta == 0 {
        return false;
    }
    sa.last_update_time += delta << 10;
    // running is a subset of runnable (weight): with no load, neither counts.
    let (runnable, running) = if load == 0 { (0, false) } else { (runnable, running) };
    accumulate_sum(delta, sa, load, runnable, running) != 0
}

/// `___update_load_avg` (6.x pelt.c): the averages over the divider at this
/// point of the period; `load` weighs `load_sum` (an entity's weight, 1 for a queue).
#[inline]
pub fn update_load_avg(sa: &mut SchedAvg, load: u64) {
    let divider = get_pelt_divider(sa);
    sa.load_avg = load * sa.load_sum / divider;
    sa.runnable_avg = sa.runnable_sum / divider;
    sa.util_avg = sa.util_sum / divider;
}

/// `__update_load_avg_blocked_se` (6.x pelt.c): decay an entity that is not
/// queued to `now`.
pub fn update_load_avg_blocked_se(now: u64, sa: &mut SchedAvg, weight: u64) -> bool {
    if update_load_sum(now, sa, 0, 0, false) {
        update_load_avg(sa, weight);
        return true;
    }
    false
}

/// `__update_load_avg_se` (6.x pelt.c): an entity's load counts while it is
/// queued (`!!se->on_rq`), its runnable weight as `se_runnable` says, its
/// running time while it is its queue's `curr`; a new average clears
/// util_est's UTIL_AVG_UNCHANGED (`cfs_se_util_change`, UTIL_EST on).
#[inline]
pub fn update_load_avg_se(now: u64, sa: &mut SchedAvg, on_rq: bool, runnable: u64, running: bool, weight: u64) -> bool {
    if update_load_sum(now, sa, u64::from(on_rq), runnable, running) {
        update_load_avg(sa, weight);
        cfs_se_util_change(sa);
        return true;
    }
    false
}

/// `__update_load_avg_cfs_rq` (6.x pelt.c): a queue's load is its weight
/// (`scale_load_down(cfs_rq->load.weight)`), its runnable count the tasks
/// below it (`h_nr_running`, 6.18 `h_nr_runnable`: the caller's choice),
/// running while it has a `curr`.
#[inline]
pub fn update_load_avg_cfs_rq(now: u64, sa: &mut SchedAvg, weight: u64, runnable: u64, running: bool) -> bool {
    if update_load_sum(now, sa, weight, runnable, running) {
        update_load_avg(sa, 1);
        return true;
    }
    false
}

/// `cfs_se_util_change` (6.x pelt.h): clear UTIL_AVG_UNCHANGED. 6.6 keeps the
/// flag in `util_est.enqueued`, 6.12+ in its one value (`ewma` here); the
/// other field never holds it, so both are cleared.
#[inline]
fn cfs_se_util_change(sa: &mut SchedAvg) {
    sa.util_est.enqueued &= !UTIL_AVG_UNCHANGED;
    sa.util_est.ewma &= !UTIL_AVG_UNCHANGED;
}

/// `load_avg_is_decayed` (6.x fair.c): every sum is 0.
pub fn load_avg_is_decayed(sa: &SchedAvg) -> bool {
    sa.load_sum == 0 && sa.util_sum == 0 && sa.runnable_sum == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1024 units of 1024 ns: one PELT period.
    const PERIOD_NS: u64 = 1024 * 1024;

    fn attached() -> SchedAvg {
        SchedAvg { attached: true, ..SchedAvg::default() }
    }

    /// The segments: one full period from a period start is d1 = 1024
    /// decayed once (1002, `runnable_avg_yN_sum[1]`); two add 1024·y; a
    /// delta within the period is itself.
    #[test]
    fn segments_are_d1_decayed_plus_full_periods_plus_d3() {
        assert_eq!(accumulate_pelt_segments(1, 1024, 0), 1002);
        // c1 = ⌊1024·y²⌋ = 980 (y² = 0xf5257d14 / 2^32 = 0.95760); c2 =
        // LOAD_AVG_MAX − ⌊LOAD_AVG_MAX·y²⌋ − 1024 = 47742 − 45717 − 1024 = 1001.
        assert_eq!(accumulate_pelt_segments(2, 1024, 0), 980 + 1001);
        assert_eq!(accumulate_pelt_segments(1, 24, 100), 23 + 100);
        // Saturated: c2 = LOAD_AVG_MAX - 1024 = PELT_MIN_DIVIDER.
        assert_eq!(accumulate_pelt_segments(5000, 1024, 0), PELT_MIN_DIVIDER as u32);
    }

    /// A 1 ms (one period) run from nothing: the sums gain 1002 units
    /// (1002 << 10 for util); the divider is PELT_MIN_DIVIDER (46718) at a
    /// period start, so util_avg = 1026048 / 46718 = 21, and a weight-1024
    /// load_avg = 1024 · 1002 / 46718 = 21. 32 idle periods halve the sum
    /// (y^32 = 1/2, less one unit of rounding): 513023 / 46718 = 10.
    #[test]
    fn a_one_period_run_then_a_half_life() {
        let mut sa = attached();
        assert!(update_load_avg_se(PERIOD_NS, &mut sa, true, 1, true, 1024));
        assert_eq!((sa.load_sum, sa.runnable_sum, sa.util_sum), (1002, 1002 << 10, 1002 << 10));
        assert_eq!(sa.period_contrib, 0);
        assert_eq!((sa.load_avg, sa.runnable_avg, sa.util_avg), (21, 21, 21));
        assert!(update_load_avg_blocked_se(33 * PERIOD_NS, &mut sa, 1024));
        assert_eq!(sa.util_sum, 513_023);
        assert_eq!((sa.util_avg, sa.runnable_avg), (10, 10));
        // 1002 >> 1 = 501, times y^0 (0xffffffff / 2^32) = 500.
        assert_eq!((sa.load_sum, sa.load_avg), (500, 10));
    }

    /// Always queued and running, a nice-0 entity converges to its weight
    /// and a full util: the sums approach `PELT_MIN_DIVIDER + period_contrib`
    /// (`LOAD_AVG_MAX·y` plus the current period), which is the divider, so
    /// the averages sit at the signal whatever the point of the period.
    #[test]
    fn a_saturated_entity_reads_its_weight_at_any_point_of_a_period() {
        let mut sa = attached();
        let mut now = 0;
        for step in 0..2000u64 {
            now += 700_000 + (step % 7) * 100_000; // updates at varied points of a period
            update_load_avg_se(now, &mut sa, true, 1, true, 1024);
            if step > 1000 {
                assert!((1022..=1024).contains(&sa.load_avg), "load_avg {} at {now}", sa.load_avg);
                assert!((1022..=1024).contains(&sa.util_avg), "util_avg {} at {now}", sa.util_avg);
                assert_eq!(sa.runnable_avg, sa.util_avg, "running is runnable");
            }
        }
        assert!(sa.load_sum <= get_pelt_divider(&sa), "{} {}", sa.load_sum, get_pelt_divider(&sa));
    }

    /// Queued but running only half the time (waiting the other half), an
    /// entity's runnable_avg stays at 1024 while util_avg settles near 512:
    /// runnable ≥ util, the gap being the time spent waiting.
    #[test]
    fn runnable_counts_the_waiting_time_util_does_not() {
        let mut sa = attached();
        let mut now = 0;
        // 1 s: 31 half-lives, converged.
        for step in 0..2000u64 {
            now += 500_000;
            update_load_avg_se(now, &mut sa, true, 1, step % 2 == 0, 1024);
        }
        assert!(sa.runnable_avg >= 1020, "{}", sa.runnable_avg);
        assert!((490..=530).contains(&sa.util_avg), "{}", sa.util_avg);
        assert!(sa.runnable_avg >= sa.util_avg);
    }

    /// A queue with two runnable tasks, one of them running: load = their
    /// weights, runnable_avg → 2 · 1024, util_avg → 1024.
    #[test]
    fn a_queue_counts_its_runnable_tasks() {
        let mut sa = attached();
        for ms in 1..=1000u64 {
            update_load_avg_cfs_rq(ms * 1_000_000, &mut sa, 2048, 2, true);
        }
        // LOAD_AVG_MAX and the c2 segment are rounded: a saturated sum may
        // pass the divider by a little, so an average can read one above.
        assert!((2045..=2050).contains(&sa.load_avg), "{}", sa.load_avg);
        assert!((2045..=2050).contains(&sa.runnable_avg), "{}", sa.runnable_avg);
        assert!((1022..=1024).contains(&sa.util_avg), "{}", sa.util_avg);
    }

    /// `last_update_time` moves by whole units: the sub-µs remainder stays
    /// for the next update (4.4 set it to `now` and lost it).
    #[test]
    fn the_sub_microsecond_remainder_is_carried() {
        let mut sa = attached();
        assert!(!update_load_sum(1500, &mut sa, 1, 1, true));
        assert_eq!((sa.last_update_time, sa.period_contrib, sa.load_sum), (1024, 1, 1));
        assert!(!update_load_sum(3000, &mut sa, 1, 1, true));
        assert_eq!((sa.last_update_time, sa.period_contrib, sa.load_sum), (2048, 2, 2));
        // Within one unit of the last update: nothing.
        assert!(!update_load_sum(3071, &mut sa, 1, 1, true));
        assert_eq!(sa.last_update_time, 2048);
        // Going back in time resets the stamp only.
        assert!(!update_load_sum(10, &mut sa, 1, 1, true));
        assert_eq!((sa.last_update_time, sa.load_sum), (10, 2));
    }

    /// A new average clears UTIL_AVG_UNCHANGED; an update within the period does not.
    #[test]
    fn a_new_average_clears_the_unchanged_flag() {
        let mut sa = attached();
        sa.util_est.ewma = 300 | UTIL_AVG_UNCHANGED;
        update_load_avg_se(500_000, &mut sa, true, 1, true, 1024);
        assert_eq!(sa.util_est.ewma, 300 | UTIL_AVG_UNCHANGED);
        update_load_avg_se(PERIOD_NS + 1, &mut sa, true, 1, true, 1024);
        assert_eq!(sa.util_est.ewma, 300);
    }

    /// With no load (a blocked entity), runnable and running count for nothing.
    #[test]
    fn no_load_means_no_runnable_and_no_running() {
        let mut sa = attached();
        update_load_sum(3 * PERIOD_NS, &mut sa, 0, 5, true);
        assert_eq!((sa.load_sum, sa.runnable_sum, sa.util_sum), (0, 0, 0));
        assert!(load_avg_is_decayed(&sa));
    }
}
