//! `struct sched_entity`: what CFS schedules, a task or (with task groups) a
//! group's per-CPU representative in its parent's run queue.

use super::pelt::SchedAvg;
use super::weights::LoadWeight;
use crate::ids::{CfsRqId, EntityId};
use super::policy::Policy;

#[derive(Clone, Debug)]
pub struct SchedEntity {
    pub load: LoadWeight,
    /// Virtual runtime in ns. Signed: the kernel's `u64` compared through
    /// `(s64)(a - b)`, which is what `i64` arithmetic gives directly.
    pub vruntime: i64,
    /// When the entity last started being charged (`update_stats_curr_start`).
    pub exec_start: u64,
    pub sum_exec_runtime: u64,
    /// `sum_exec_runtime` when the entity was last picked (`set_next_entity`).
    pub prev_sum_exec_runtime: u64,
    pub on_rq: bool,
    /// The run queue this entity is (or would be) queued on (`se->cfs_rq`).
    pub cfs_rq: CfsRqId,
    /// The group entity one level up (`se->parent`); `None` at the root.
    pub parent: Option<EntityId>,
    /// The run queue this entity owns if it is a group entity (`se->my_q`).
    pub my_q: Option<CfsRqId>,
    /// Depth in the hierarchy (`se->depth`), 0 for entities in a root run queue.
    pub depth: u16,
    /// The owning task's policy; `Normal` for group entities.
    pub policy: Policy,
    /// Load tracking (`se->avg`), for every entity (tasks and group entities,
    /// in root and group run queues).
    pub avg: SchedAvg,
    /// 6.x: a group entity's runnable weight, its queue's runnable count as
    /// of the last `se_update_runnable` (`se->runnable_weight`).
    pub runnable_weight: u32,
    /// EEVDF (6.6+): the virtual deadline `vd_i = ve_i + r_i / w_i`.
    pub deadline: i64,
    /// EEVDF: the lag saved at dequeue, `V - v_i` clamped (`se->vlag`); 6.6
    /// and 6.12 also use it as the RUN_TO_PARITY marker (`vlag == deadline`).
    pub vlag: i64,
    /// EEVDF: the requested slice `r_i` in ns (`se->slice`).
    pub slice: u64,
    /// EEVDF 6.12+: the slice was set by `sched_setattr` (or pushed down to a group entity).
    pub custom_slice: bool,
    /// EEVDF 6.12+: DELAY_DEQUEUE kept this sleeping entity queued (`se->sched_delayed`).
    pub sched_delayed: bool,
    /// EEVDF 6.12+: `deadline` holds `deadline - vruntime` (`se->rel_deadline`).
    pub rel_deadline: bool,
    /// EEVDF 6.18: the vruntime up to which the running entity is protected (`se->vprot`).
    pub vprot: i64,
    /// Insertion number of the current timeline node, which breaks vruntime ties
    /// so that equal keys go right, as `__enqueue_entity` does.
    pub(crate) tree_seq: u64,
}

impl SchedEntity {
    pub fn new(load: LoadWeight, cfs_rq: CfsRqId, policy: Policy) -> SchedEntity {
        SchedEntity {
            load,
            vruntime: 0, // __sched_fork
            exec_start: 0,
            sum_exec_runtime: 0,
            prev_sum_exec_runtime: 0,
            on_rq: false,
            cfs_rq,
            parent: None,
            my_q: None,
            depth: 0,
            policy,
            avg: SchedAvg::new_entity(load.weight),
            runnable_weight: 0,
            deadline: 0,
            vlag: 0,
            slice: 0,
            custom_slice: false,
            sched_delayed: false,
            rel_deadline: false,
            vprot: 0,
            tree_seq: 0,
        }
    }

    pub fn is_task(&self) -> bool {
        self.my_q.is_none()
    }
}
