//! The multi-CPU half of the version table: each 6.x version's load
//! tracking (`Pelt6xRules`) and placement and balancing (`Balance6xRules`)
//! rules, which `model.rs`'s `KernelRules` tables name.

use super::balance::linux6x::Balance6xRules;
use super::pelt6x::{Pelt6xRules, UtilEstDelayed, UtilEstRules};
use super::topology::DomainLevel;

/// 6.6 (pelt.c and fair.c's PELT half are the same in 6.6.0 and 6.6.9).
pub const PELT_66: Pelt6xRules = Pelt6xRules {
    runnable_excludes_delayed: false,
    decayed_needs_no_contrib: false,
    tg_load_avg_ratelimit: false,
    post_init_scaled_weight: true,
    util_est: UtilEstRules { enqueued_and_ewma: true, capacity_skip: true, delayed: UtilEstDelayed::NoDelay },
};
/// 6.12.0: one util_est value, the 1 ms `tg->load_avg` rate limit.
pub const PELT_612: Pelt6xRules = Pelt6xRules {
    tg_load_avg_ratelimit: true,
    post_init_scaled_weight: false,
    util_est: UtilEstRules { enqueued_and_ewma: false, capacity_skip: true, delayed: UtilEstDelayed::SkipMigrating },
    ..PELT_66
};
/// 6.18.2 (the 6.18 model): `h_nr_runnable`; util_est without the capacity
/// skip; a queue still contributing to `tg->load_avg` is not decayed (6.18.2).
pub const PELT_618: Pelt6xRules = Pelt6xRules {
    runnable_excludes_delayed: true,
    decayed_needs_no_contrib: true,
    util_est: UtilEstRules { enqueued_and_ewma: false, capacity_skip: false, delayed: UtilEstDelayed::SkipDelayed },
    ..PELT_612
};

/// 6.6.9: UTIL_EST_FASTUP, CLS with SHARE_PKG_RESOURCES, no delayed tasks, plain util in migrate_util;
/// the DIE level (6.6 smpboot.c:build_sched_topology).
pub const BALANCE_66: Balance6xRules = Balance6xRules {
    version: "6.6",
    delayed_tasks: false,
    util_est_fastup: true,
    cluster_flag: false,
    package_level: DomainLevel::Die,
    try_one_movable_task: true,
    util_shr_bound: false,
    idle_smt_in_llc: false,
    misfit_tie_replaces: true,
    ..BALANCE_612
};
/// 6.12.0: DELAY_DEQUEUE, `SD_CLUSTER | SD_SHARE_LLC`; the balancer counts
/// and moves delayed tasks as others; the idle SMT scans stay inside `sd_llc`;
/// PKG (6.12 smpboot.c), NUMA with SD_OVERLAP (topology.c:sched_init_numa SDTL_OVERLAP).
pub const BALANCE_612: Balance6xRules = Balance6xRules {
    version: "6.12",
    delayed_tasks: true,
    runnable_excludes_delayed: false,
    util_est_fastup: false,
    cluster_flag: true,
    package_level: DomainLevel::Pkg,
    numa_overlap: true,
    try_one_movable_task: false,
    util_shr_bound: true,
    delayed_only_migrate_load: false,
    ineligible_soft_limit: false,
    newidle_fail_bump: false,
    idle_smt_in_llc: true,
    misfit_tie_replaces: false,
};
/// 6.18.0: `h_nr_runnable`; delayed tasks move for migrate_load only, ineligible ones after a failure;
/// no SD_OVERLAP (6.18 sd_flags.h: build_sched_domains keys overlapping groups on SD_NUMA).
pub const BALANCE_618: Balance6xRules = Balance6xRules {
    version: "6.18",
    runnable_excludes_delayed: true,
    delayed_only_migrate_load: true,
    ineligible_soft_limit: true,
    newidle_fail_bump: true,
    numa_overlap: false,
    ..BALANCE_612
};
