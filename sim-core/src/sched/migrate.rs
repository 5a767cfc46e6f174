//! Why a task changed CPU: what moved it, in the kernel's terms (4.4's
//! paths, and the rule of 6.x's placement that chose the CPU). Every move
//! goes through `set_task_cpu` (core.c), which emits `sched_migrate_task`;
//! the cause says which path called it.

/// Why a task changed CPU (what moved it). The first eight are 4.4's paths
/// (6.x's balancing shares the last four, and `Fork`/`WakeIdlest`); the
/// rest name the 6.x `select_task_rq_fair` rule that chose the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MigrateCause {
    /// `select_task_rq_fair`: `wake_affine` chose the waker's CPU (then
    /// `select_idle_sibling` kept it).
    WakeAffine,
    /// `select_task_rq_fair`: `select_idle_sibling` picked an idle CPU other
    /// than the affine/prev target.
    IdleSibling,
    /// A wake-up placed by `find_idlest_group`/`find_idlest_cpu`
    /// (`SD_BALANCE_WAKE`, or no affine domain).
    WakeIdlest,
    /// `wake_up_new_task`: `find_idlest_*` (`SD_BALANCE_FORK`); exec is not
    /// modelled separately.
    Fork,
    /// `rebalance_domains` from the tick (CPU busy, or idle with the tick).
    Periodic,
    /// `idle_balance`: a CPU about to go idle pulled work.
    NewIdle,
    /// `nohz_idle_balance` on behalf of an idle tickless CPU.
    Nohz,
    /// `active_load_balance_cpu_stop` moved a running task.
    Active,
    /// 6.x `wake_affine` → `wake_affine_idle` chose the waker's CPU (idle
    /// and cache-affine, or a sync wake-up from its only task), and
    /// `select_idle_sibling` kept it.
    WakeAffineIdle,
    /// 6.x `wake_affine` → `wake_affine_weight` chose the waker's CPU (its
    /// load with the wakee below prev's, WA_BIAS), and `select_idle_sibling`
    /// kept it.
    WakeAffineWeight,
    /// 6.x `select_idle_sibling` → `select_idle_cpu` → `select_idle_core`:
    /// a CPU whose whole SMT core was idle (`has_idle_cores`).
    SelectIdleCore,
    /// 6.x `select_idle_sibling` → `select_idle_smt`: an idle SMT sibling
    /// of the previous CPU.
    SelectIdleSmt,
    /// 6.x `select_idle_sibling` → `select_idle_cpu`: an idle CPU found by
    /// the LLC scan (SIS_UTIL's `nr_idle_scan` budget, or the first idle
    /// thread of a failed idle-core scan).
    SelectIdleCpu,
    /// 6.x `select_idle_sibling`: the task's `recent_used_cpu`, idle and
    /// sharing the target's cache.
    RecentUsedCpu,
    /// `select_task_rq_rt` → `find_lowest_rq`: an RT task woken or forked
    /// where an RT task of equal or higher priority runs goes to a CPU of
    /// the lowest priority (cpupri).
    RtFindLowest,
    /// `push_rt_task`: a queued RT task moved to a CPU running
    /// lower-priority work (also the pull, which RT_PUSH_IPI turns into
    /// pushes by the overloaded CPUs).
    RtPush,
    /// `select_task_rq_dl` → `find_later_rq`: a deadline task woken where
    /// a deadline task it cannot preempt (or a pinned one) runs goes to a
    /// CPU with no deadline task or a later earliest deadline (`cpudl`).
    DlFindLater,
    /// `push_dl_task`: a queued deadline task moved to such a CPU.
    DlPush,
    /// `pull_dl_task`: a CPU whose earliest deadline got later took an
    /// earlier queued deadline task from an overloaded CPU.
    DlPull,
}

impl MigrateCause {
    /// Every cause, in `index` order.
    pub const ALL: [MigrateCause; 19] = [
        MigrateCause::WakeAffine,
        MigrateCause::IdleSibling,
        MigrateCause::WakeIdlest,
        MigrateCause::Fork,
        MigrateCause::Periodic,
        MigrateCause::NewIdle,
        MigrateCause::Nohz,
        MigrateCause::Active,
        MigrateCause::WakeAffineIdle,
        MigrateCause::WakeAffineWeight,
        MigrateCause::SelectIdleCore,
        MigrateCause::SelectIdleSmt,
        MigrateCause::SelectIdleCpu,
        MigrateCause::RecentUsedCpu,
        MigrateCause::RtFindLowest,
        MigrateCause::RtPush,
        MigrateCause::DlFindLater,
        MigrateCause::DlPush,
        MigrateCause::DlPull,
    ];

    /// The name reports and exports use (JSON keys, CLI text).
    pub fn name(self) -> &'static str {
        match self {
            MigrateCause::WakeAffine => "wake_affine",
            MigrateCause::IdleSibling => "idle_sibling",
            MigrateCause::WakeIdlest => "wake_idlest",
            MigrateCause::Fork => "fork",
            MigrateCause::Periodic => "periodic",
            MigrateCause::NewIdle => "newidle",
            MigrateCause::Nohz => "nohz",
            MigrateCause::Active => "active",
            MigrateCause::WakeAffineIdle => "wake_affine_idle",
            MigrateCause::WakeAffineWeight => "wake_affine_weight",
            MigrateCause::SelectIdleCore => "select_idle_core",
            MigrateCause::SelectIdleSmt => "select_idle_smt",
            MigrateCause::SelectIdleCpu => "select_idle_cpu",
            MigrateCause::RecentUsedCpu => "recent_used_cpu",
            MigrateCause::RtFindLowest => "rt_find_lowest",
            MigrateCause::RtPush => "rt_push",
            MigrateCause::DlFindLater => "dl_find_later",
            MigrateCause::DlPush => "dl_push",
            MigrateCause::DlPull => "dl_pull",
        }
    }

    /// Position in `ALL` (an array index for per-cause counters).
    pub fn index(self) -> usize {
        self as usize
    }

    /// A placement decided in `select_task_rq` (core.c: `try_to_wake_up`
    /// or `wake_up_new_task`), as opposed to a load-balancing pull.
    pub fn is_placement(self) -> bool {
        !matches!(
            self,
            MigrateCause::Periodic
                | MigrateCause::NewIdle
                | MigrateCause::Nohz
                | MigrateCause::Active
                | MigrateCause::RtPush
                | MigrateCause::DlPush
                | MigrateCause::DlPull
        )
    }
}

#[cfg(test)]
mod tests {
    use super::MigrateCause;

    #[test]
    fn all_is_in_index_order_with_distinct_names() {
        for (i, c) in MigrateCause::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
        }
        let mut names: Vec<&str> = MigrateCause::ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), MigrateCause::ALL.len());
        assert!(MigrateCause::Fork.is_placement() && !MigrateCause::NewIdle.is_placement());
        assert!(MigrateCause::SelectIdleCore.is_placement() && MigrateCause::RecentUsedCpu.is_placement());
    }
}
