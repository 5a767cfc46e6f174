//! `struct task_group`: a cgroup v1 `cpu` controller group (or an autogroup),
//! with `cpu.shares` and, on every CPU it may run on, its own run queue and
//! the group scheduling entity that represents it in its parent's run queue
//! (4.4 kernel/sched/sched.h, fair.c:alloc_fair_sched_group).
//!
//! The root group (index 0) owns the CPUs' root run queues and has no entity.
//! A group's per-CPU queue and entity are only created on the CPUs its tasks
//! (and its descendants' tasks) may run on: elsewhere they would stay empty
//! with a zero load average for the whole run, so leaving them out changes no
//! weight, no `tg->load_avg`, and no decision.

use crate::ids::{CfsRqId, EntityId, GroupId};

/// `MIN_SHARES` (4.4 sched.h): the smallest group entity weight.
pub const MIN_SHARES: u64 = 2;
/// `MAX_SHARES` (4.4 sched.h): `1 << 18`.
pub const MAX_SHARES: u64 = 1 << 18;
/// The root group.
pub const ROOT_GROUP: GroupId = GroupId(0);

/// How `calc_cfs_shares` measures a group's load on the other CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupLoad {
    /// Linux 4.4 (`calc_tg_weight`): `tg->load_avg`, the sum of the per-CPU
    /// PELT load averages as last published (`update_tg_load_avg`), with this
    /// CPU's published contribution replaced by its current queue weight.
    #[default]
    Pelt,
    /// The idealised instantaneous form: the sum of the group's current queue
    /// weights on all CPUs, as if every CPU republished on every change.
    Instantaneous,
}

impl GroupLoad {
    pub fn name(self) -> &'static str {
        match self {
            GroupLoad::Pelt => "pelt",
            GroupLoad::Instantaneous => "instantaneous",
        }
    }
}

#[derive(Clone, Debug)]
pub struct TaskGroup {
    /// Path as declared (`/system/jmx`) or `/autogroup-<session>`.
    pub path: String,
    pub parent: Option<GroupId>,
    /// `tg->shares`, already clamped to [MIN_SHARES, MAX_SHARES].
    pub shares: u64,
    /// `tg->load_avg`: the sum of the per-CPU contributions
    /// (`cfs_rq->tg_load_avg_contrib`).
    pub load_avg: i64,
    /// Sum of the group's run queue weights over all CPUs (for
    /// `GroupLoad::Instantaneous`).
    pub load_weight: u64,
    /// `tg->cfs_rq[cpu]`, `None` on CPUs the group can never use.
    pub cfs_rq: Vec<Option<CfsRqId>>,
    /// `tg->se[cpu]`; always `None` for the root group.
    pub se: Vec<Option<EntityId>>,
}

/// `calc_cfs_shares` (4.4 fair.c): the weight of a group's entity on one CPU,
/// `shares · load / tg_weight`, clamped to [MIN_SHARES, shares]. `load` is the
/// group's queue weight on that CPU; `tg_weight` the group's load over all
/// CPUs (see `GroupLoad`). Signed `long` arithmetic, truncating, as the kernel's.
pub fn calc_cfs_shares(shares: u64, load: u64, tg_weight: i64) -> u64 {
    let mut s = shares as i64 * load as i64;
    if tg_weight != 0 {
        s /= tg_weight;
    }
    (s.max(MIN_SHARES as i64) as u64).min(shares)
}

/// The weight an autogroup nice value gives (4.4 auto_group.c:proc_sched_autogroup_set_nice:
/// `shares = scale_load(prio_to_weight[nice + 20])`).
pub fn autogroup_shares(nice: i8) -> u64 {
    super::weights::PRIO_TO_WEIGHT[(i32::from(nice) + 20) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_follow_the_local_fraction_of_the_group_load() {
        // Alone on one CPU: the whole of the group's shares.
        assert_eq!(calc_cfs_shares(1024, 1024, 1024), 1024);
        // A quarter of the group's load is here: a quarter of its shares.
        assert_eq!(calc_cfs_shares(1024, 1024, 4096), 256);
        // Never above the shares, never below MIN_SHARES.
        assert_eq!(calc_cfs_shares(1024, 3072, 2048), 1024);
        assert_eq!(calc_cfs_shares(1024, 0, 4096), MIN_SHARES);
        assert_eq!(calc_cfs_shares(2, 1024, 1 << 30), MIN_SHARES);
        // Truncating division: 1024 · 1000 / 3000 = 341.33.
        assert_eq!(calc_cfs_shares(1024, 1000, 3000), 341);
    }

    #[test]
    fn autogroup_nice_maps_to_the_weight_table() {
        assert_eq!(autogroup_shares(0), 1024);
        assert_eq!(autogroup_shares(19), 15);
        assert_eq!(autogroup_shares(-20), 88761);
    }
}
