//! The classes above fair in the version table: each version's RT
//! throttling, fair server and deadline-parameter rules (`RtRules`), which
//! `model.rs`'s `KernelRules` tables name. Reading notes:
//! docs/kernel/rt-class.md and docs/kernel/deadline-class.md.

pub use super::rt_pressure::RtCapacitySignal;
use super::spread::InDomain;

/// Who limits RT tasks' share of a CPU when `CONFIG_RT_GROUP_SCHED` is off
/// (the distributions' build).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtThrottling {
    /// `def_rt_bandwidth` throttles every CPU's `rt_rq` (4.4, 6.6 rt.c
    /// `sched_rt_runtime_exceeded`). `share`: RT_RUNTIME_SHARE is on by
    /// default (4.4 features.h:68; off from 4.18's 2586af1ac187, 6.6
    /// features.h:75), so a CPU borrows other CPUs' unused runtime
    /// (`do_balance_runtime`). `grid`: the period timer's first expiry is the
    /// next multiple of the period (4.4 `start_rt_bandwidth`:
    /// `hrtimer_forward_now(timer, rt_period)`), not the start itself (6.6
    /// `do_start_rt_bandwidth`: `hrtimer_forward_now(timer, 0)`).
    Root { share: bool, grid: bool },
    /// 6.12+: all RT bandwidth code sits under `#ifdef
    /// CONFIG_RT_GROUP_SCHED` (6.12.0 rt.c:95-918); without it
    /// `rt_rq_throttled()` is false and the fair server alone keeps fair
    /// tasks from starving. With `rt.rt_group_sched` the root group is
    /// throttled as 6.6 does, beside the server.
    GroupSchedOnly,
}

/// How the fair deadline server (6.12+ deadline.c `dl_server`) starts and stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FairServerStop {
    /// 6.12.0: `dequeue_entities` stops it when the CPU's fair tasks reach 0
    /// (fair.c:7166-7167); started again at the next 0→1 (fair.c:7040-7045).
    OnLastDequeue,
    /// 6.18: it stays active after the last dequeue and stops when picked
    /// with no fair task (`__pick_task_dl` → `dl_server_stop`, 6.18
    /// deadline.c:2371-2376).
    OnEmptyPick,
}

/// The RT and deadline classes' version rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtRules {
    pub throttling: RtThrottling,
    /// The fair server (6.12+), and how it stops.
    pub fair_server: Option<FairServerStop>,
    /// `__checkparam_dl` bounds the period by `sched_deadline_period_{min,max}_us`
    /// (100 µs to 4.194304 s; 6.6+ deadline.c; 4.4 has no such check).
    pub dl_period_limits: bool,
    /// Deadline tasks' runtime counts in `rq->rt.rt_time` (4.4 deadline.c:885-897,
    /// 6.6 1384-1396; 6.12+ only under RT_GROUP_SCHED).
    pub dl_time_in_rt_time: bool,
    /// `find_lowest_rq` spreads its choice within a domain round-robin per
    /// executing CPU (6.x `cpumask_any_and_distribute`); 4.4 takes the first
    /// CPU (`cpumask_first_and`).
    pub lowest_distribute: bool,
    /// What RT and deadline time lowers the fair class's CPU capacity by
    /// (`scale_rt_capacity`): 4.4 `rq->rt_avg` (fair.c:6134-6159), 6.x PELT
    /// `avg_rt` + `avg_dl` (6.6 fair.c:9368-9396, 6.12 9934-9959, 6.18 9988-10013).
    pub capacity_signal: RtCapacitySignal,
    /// A CPU with a deadline entity reads CPUPRI_HIGHER in cpupri, so RT
    /// placement and pushes avoid it (6.6+ `inc_dl_deadline`; 4.4's
    /// deadline class leaves cpupri alone).
    pub dl_cpupri_higher: bool,
    /// The deadline pull before a pick: 4.4 `pick_next_task_dl` pulls
    /// whenever prev was a deadline task (`need_pull_dl_task`), preempted
    /// or not; 6.x `balance_dl` only when prev left the `dl_rq` (blocked
    /// or throttled: `!on_dl_rq`).
    pub dl_pull_if_prev_queued: bool,
    /// How `find_later_rq` chooses within a domain: 4.4 `best_cpu` from
    /// `cpudl_find` if the domain holds it; 6.x `cpumask_any_and_distribute`.
    pub later_in_domain: InDomain,
    /// `rt_task(p)` is `prio < MAX_RT_PRIO`, true of a deadline task too
    /// (4.4, 6.6 include/linux/sched/rt.h), so `select_task_rq_rt` moves a
    /// task woken under a running deadline task; 6.12+ `rt_prio` also asks
    /// `prio >= MAX_DL_PRIO` and does not.
    pub rt_task_includes_dl: bool,
    /// A CPU is RT- or deadline-overloaded (`rd->rto_mask`, `rd->dlo_mask`)
    /// with a migratory task and two queued (4.4, 6.6 `update_rt_migration`,
    /// `update_dl_migration`: `nr_migratory && nr_total/nr_running > 1`);
    /// 6.12+ whenever its pushable list or tree is non-empty
    /// (`enqueue_pushable_task`, `enqueue_pushable_dl_task`), which also
    /// holds for one task queued behind a higher class or replenished on an
    /// idle CPU.
    pub overload_needs_two: bool,
    /// `__pick_next_task`'s fast path (prev not above fair and
    /// `rq->nr_running == rq->cfs.h_nr_queued`: only the fair pick) also
    /// skips a queued fair server: 6.18 leaves the server out of
    /// `nr_running` (deadline.c:1832, 1844); 6.12 counts it (deadline.c:1877),
    /// so a queued server takes the slow path there.
    pub fast_path_skips_server: bool,
}

pub const RT_44: RtRules = RtRules {
    throttling: RtThrottling::Root { share: true, grid: true },
    fair_server: None,
    dl_period_limits: false,
    dl_time_in_rt_time: true,
    lowest_distribute: false,
    capacity_signal: RtCapacitySignal::RtAvg,
    dl_cpupri_higher: false,
    dl_pull_if_prev_queued: true,
    later_in_domain: InDomain::Best,
    rt_task_includes_dl: true,
    overload_needs_two: true,
    fast_path_skips_server: false,
};
pub const RT_66: RtRules = RtRules {
    throttling: RtThrottling::Root { share: false, grid: false },
    dl_period_limits: true,
    lowest_distribute: true,
    capacity_signal: RtCapacitySignal::Pelt,
    dl_cpupri_higher: true,
    dl_pull_if_prev_queued: false,
    later_in_domain: InDomain::FirstOrDistribute,
    ..RT_44
};
pub const RT_612: RtRules = RtRules {
    throttling: RtThrottling::GroupSchedOnly,
    fair_server: Some(FairServerStop::OnLastDequeue),
    dl_time_in_rt_time: false,
    rt_task_includes_dl: false,
    overload_needs_two: false,
    ..RT_66
};
pub const RT_618: RtRules =
    RtRules { fair_server: Some(FairServerStop::OnEmptyPick), fast_path_skips_server: true, ..RT_612 };

/// `sched_deadline_period_min_us` / `_max_us` defaults (6.6+ deadline.c:26-27), in ns.
pub const DL_PERIOD_NS: (u64, u64) = (100_000, (1 << 22) * 1_000);
/// `__checkparam_dl`: `runtime >= 1 << DL_SCALE` (1024 ns).
pub const DL_RUNTIME_MIN_NS: u64 = 1 << 10;
/// `BW_SHIFT` (sched.h): bandwidths are `(runtime << 20) / period`.
pub const BW_SHIFT: u32 = 20;

/// `to_ratio` (core.c): `(runtime << BW_SHIFT) / period`; 0 for period 0.
pub fn to_ratio(period: u64, runtime: u64) -> u64 {
    if period == 0 { 0 } else { ((u128::from(runtime) << BW_SHIFT) / u128::from(period)) as u64 }
}

/// `RR_TIMESLICE` (include/linux/sched/rt.h): 100 ms in jiffies, `100 * HZ / 1000`.
pub fn rr_timeslice_default(hz: u32) -> u32 {
    100 * hz / 1000
}
