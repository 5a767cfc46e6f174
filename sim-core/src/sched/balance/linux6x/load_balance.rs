//! `load_balance` (6.6) / `sched_balance_rq` (6.12+) and its statistics:
//! `update_sd_lb_stats`, `update_sg_lb_stats` with the 5.5+ group types,
//! `calculate_imbalance` with the migration types, `find_busiest_queue`,
//! `detach_tasks`/`can_migrate_task`.

#[allow(unused_imports)]
use super::Smp6x;
