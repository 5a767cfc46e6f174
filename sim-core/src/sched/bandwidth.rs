//! CFS bandwidth control: a task group's CPU quota (`cpu.cfs_quota_us` /
//! `cpu.cfs_period_us` in cgroup v1, `cpu.max` and `cpu.max.burst` in v2).
//!
//! Each limited group has a `cfs_bandwidth` (a global pool of runtime, the
//! period timer that refills it and the slack timer that hands back what
//! CPUs returned); each of its per-CPU run queues draws runtime from the pool
//! in `sched_cfs_bandwidth_slice` chunks and is throttled (its group entity
//! dequeued, so none of its tasks can be picked) when it has none left.
//! This file holds the state; `cfs_bandwidth.rs` the functions, under
//! their fair.c names. Reading notes with line numbers:
//! docs/kernel/cfs-bandwidth.md.
//!
//! The rules changed across versions; `BandwidthRules` names the one a run
//! follows (by default the scenario's kernel; the 4.4 fair class can run the
//! later CFS-era rules to isolate their effect):
//! - 4.4.155: per-CPU runtime carries an expiry (`expire_cfs_rq_runtime`);
//!   as written it only zeroes a slice when the global deadline has *not*
//!   moved, so after a normal refill a stale slice lives on, but slack
//!   returned with a stale deadline is dropped (`__return_cfs_rq_runtime`).
//!   Throttled queues go to the head of the list (distribution serves the
//!   newest first).
//! - 4.18 (512ac999d275, "Fix bandwidth timer clock drift condition"; kernels
//!   4.18 to 5.3): the expiry compares period sequence numbers, so a slice
//!   left from an earlier period really expires at the first charge after the
//!   refill: the over-throttling of de53fd7aedb1's message. Throttled queues
//!   join the tail of the list as from 4.19 (baa9be4ffb55; 4.18.x itself
//!   still added at the head).
//! - 5.4 (de53fd7aedb1), as in 5.4.69+ stable (e98fa02c4f2e backported; 5.7
//!   upstream): no expiry; throttling first asks the pool for 1 ns
//!   (`__assign_cfs_rq_runtime(cfs_b, cfs_rq, 1)`), a throttled queue does
//!   not ask for more, and an armed slack timer is not pushed back
//!   (`slack_started`).
//! - 5.14 (f4183717b370): `cpu.max.burst`; the refill adds the quota to what
//!   is left, capped at quota + burst, and happens even when the timer goes idle.
//! - 6.6: burst statistics (`nr_bursts`, `burst_time`, 9525616d056e),
//!   distribution straight from the pool, `throttled_clock` only when the
//!   queue holds entities, and a random phase for the period timer.
//!
//! Not modelled: 6.18's task-based throttling (a task of a throttled queue is
//! dequeued when it next returns to user space, `throttle_cfs_rq_work`):
//! every task here runs in user space and is switched out by the reschedule
//! that throttles its queue, so 6.18 is run with 6.12's group dequeue, which
//! gives the same schedule except that a kernel thread would keep running.
//! The frozen PELT clock of a throttled hierarchy is modelled for 6.x
//! (`cfs_rq_clock_pelt`, `blocked6x.rs`), not for 4.4 (`cfs_rq_clock_task`):
//! there a throttled queue's load average decays as if idle.

pub use super::model::BandwidthRules;
use crate::ids::{CfsRqId, CpuId, GroupId};
use std::collections::VecDeque;

/// `default_cfs_period()` (4.4 fair.c): 100 ms.
pub const DEFAULT_CFS_PERIOD_NS: u64 = 100_000_000;
/// `sysctl_sched_cfs_bandwidth_slice` default (µs, all versions).
pub const DEFAULT_BANDWIDTH_SLICE_US: u64 = 5_000;
/// `min_cfs_quota_period` / `max_cfs_quota_period` (4.4 core.c): 1 ms and 1 s.
pub const MIN_CFS_QUOTA_PERIOD_NS: u64 = 1_000_000;
pub const MAX_CFS_QUOTA_PERIOD_NS: u64 = 1_000_000_000;
/// `min_cfs_rq_runtime` (4.4 fair.c): a CPU keeps this much when it returns slack.
pub const MIN_CFS_RQ_RUNTIME_NS: i64 = 1_000_000;
/// `min_bandwidth_expiration`: no slack distribution this close to a refill.
pub const MIN_BANDWIDTH_EXPIRATION_NS: u64 = 2_000_000;
/// `cfs_bandwidth_slack_period`: the slack timer's delay.
pub const CFS_BANDWIDTH_SLACK_PERIOD_NS: u64 = 5_000_000;

/// What a scenario sets for one group (the values `tg_set_cfs_bandwidth` gets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandwidthSpec {
    /// `None`: unlimited (`RUNTIME_INF`, v1 -1, v2 "max").
    pub quota_ns: Option<u64>,
    pub period_ns: u64,
    pub burst_ns: u64,
}

/// What `cpu.stat` shows for a group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuStat {
    pub nr_periods: u64,
    pub nr_throttled: u64,
    /// Sum over CPUs of the time each queue spent throttled (ns), added at unthrottle.
    pub throttled_time_ns: u64,
    /// 6.6+: periods in which the group used more than its quota.
    pub nr_bursts: u64,
    pub burst_time_ns: u64,
    /// Not in `cpu.stat`: runtime CPUs held that was lost instead of used or
    /// returned (4.4 to 5.3: expired slices, slack returned too late).
    pub expired_ns: u64,
}

/// `struct cfs_bandwidth`.
#[derive(Clone, Debug)]
pub struct CfsBandwidth {
    pub spec: BandwidthSpec,
    /// The global pool (`cfs_b->runtime`).
    pub runtime: u64,
    /// 4.4/4.18 `runtime_expires`, and 4.18 `expires_seq`.
    pub(crate) runtime_expires: u64,
    pub(crate) expires_seq: u64,
    /// 6.6 `runtime_snap` (burst statistics).
    pub(crate) runtime_snap: u64,
    pub(crate) idle: bool,
    pub(crate) period_active: bool,
    /// The period timer's expiry (`hrtimer_get_expires`) and generation.
    pub(crate) timer_at: u64,
    pub(crate) timer_generation: u32,
    /// The slack timer's expiry while armed.
    pub(crate) slack_at: Option<u64>,
    pub(crate) slack_generation: u32,
    /// `cfs_b->throttled_cfs_rq`, head first.
    pub(crate) throttled: VecDeque<CfsRqId>,
    pub stat: CpuStat,
    /// Runtime handed to CPUs, ever (assign and distribute, net of slack returned).
    pub consumed_ns: u64,
    /// Timer events asked of the engine: period and slack (stale ones included).
    pub timer_events: (u64, u64),
}

/// `cfs_rq`'s bandwidth fields.
#[derive(Clone, Copy, Debug, Default)]
pub struct RqRuntime {
    pub enabled: bool,
    pub remaining: i64,
    pub(crate) expires: u64,
    pub(crate) expires_seq: u64,
    pub throttled: bool,
    /// Throttled levels at and above this queue on its CPU (`throttle_count`).
    pub throttle_count: u32,
    pub(crate) throttled_clock: Option<u64>,
}

/// A timer the engine must arm: `Event::BandwidthTimer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerRequest {
    pub group: GroupId,
    pub slack: bool,
    pub at: u64,
    pub generation: u32,
}

/// A throttle or unthrottle of one queue, for the engine's records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThrottleEvent {
    pub cpu: CpuId,
    pub group: GroupId,
    pub throttled: bool,
    /// Change of the CPU's `rq->nr_running` (`sub_nr_running`/`add_nr_running`).
    pub nr_delta: i32,
}

/// The machine-wide bandwidth state.
#[derive(Clone, Debug)]
pub struct Bandwidth {
    /// `cfs_bandwidth_used()`: some group has a quota.
    pub used: bool,
    pub rules: BandwidthRules,
    /// `sched_cfs_bandwidth_slice()` in ns.
    pub slice_ns: u64,
    /// Per group (root included, never limited).
    pub groups: Vec<Option<CfsBandwidth>>,
    /// Outboxes drained by the engine after each class call.
    pub timers: Vec<TimerRequest>,
    pub events: Vec<ThrottleEvent>,
}

impl Bandwidth {
    pub fn new(rules: BandwidthRules, slice_us: u64) -> Bandwidth {
        Bandwidth {
            used: false,
            rules,
            slice_ns: slice_us * 1_000,
            groups: Vec::new(),
            timers: Vec::new(),
            events: Vec::new(),
        }
    }
}

/// `hrtimer_forward_now` for a timer on the grid `phase + k·period`: the
/// first expiry after `now` (an expiry already after `now` stays).
pub(crate) fn forward_now(expires: u64, period: u64, now: u64) -> u64 {
    if expires > now {
        return expires;
    }
    expires + ((now - expires) / period + 1) * period
}
