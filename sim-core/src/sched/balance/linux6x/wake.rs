//! Where a waking or new task is queued (6.x fair.c): `select_task_rq_fair`,
//! `wake_affine_idle`/`wake_affine_weight`, `select_idle_sibling` and the
//! idle scans, `find_idlest_group`/`find_idlest_cpu`.

#[allow(unused_imports)]
use super::Smp6x;
