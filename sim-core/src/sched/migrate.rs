//! Why a task changed CPU: what moved it, in Linux 4.4 terms. Every move goes
//! through `set_task_cpu` (4.4 core.c), which emits `sched_migrate_task`; the
//! cause says which path called it.

/// Why a task changed CPU (what moved it, in 4.4 terms).
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
}

impl MigrateCause {
    /// Every cause, in `index` order.
    pub const ALL: [MigrateCause; 8] = [
        MigrateCause::WakeAffine,
        MigrateCause::IdleSibling,
        MigrateCause::WakeIdlest,
        MigrateCause::Fork,
        MigrateCause::Periodic,
        MigrateCause::NewIdle,
        MigrateCause::Nohz,
        MigrateCause::Active,
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
        }
    }

    /// Position in `ALL` (an array index for per-cause counters).
    pub fn index(self) -> usize {
        self as usize
    }

    /// A placement decided in `select_task_rq` (4.4 core.c: `try_to_wake_up`
    /// or `wake_up_new_task`), as opposed to a load-balancing pull.
    pub fn is_placement(self) -> bool {
        matches!(
            self,
            MigrateCause::WakeAffine | MigrateCause::IdleSibling | MigrateCause::WakeIdlest | MigrateCause::Fork
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
    }
}
