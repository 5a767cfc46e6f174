//! CPU scheduling: the fair class of Linux 4.4 (CFS) and of 6.6–6.18 (EEVDF),
//! and the pieces they are built from.
//!
//! - `weights`: nice/weight tables and `calc_delta` fixed-point arithmetic.
//! - `tunables`: `sched_latency_ns` & co., their CPU-count scaling, feature bits.
//! - `entity`, `cfs_rq`: `struct sched_entity` and `struct cfs_rq`.
//! - `fair`: the fair class state and the 4.4 CFS rules (placement, slices, tick and wakeup preemption, pick).
//! - `eevdf`: the 6.x EEVDF rules on the same state (V, lag, deadlines, `pick_eevdf`, delayed dequeue).
//! - `eevdf_tree`: the EEVDF timeline, an augmented treap (`__pick_eevdf` in O(log n)).
//! - `model`: which kernel a run models.
//! - `bandwidth`: CFS bandwidth control (cgroup CPU quota): runtime pools, throttling, the period and slack timers.
//! - `group`: task groups (cgroups, autogroups) and `calc_cfs_shares`.
//! - `pelt`: per-entity load tracking, which feeds the group shares.
//! - `placement`: which CPU a waking or new task goes to.

pub mod balance;
pub mod bandwidth;
pub mod cfs_rq;
pub mod cfs_tasks;
pub mod cpu_load;
pub mod eevdf;
pub mod eevdf_tree;
pub mod entity;
pub mod fair;
pub mod group;
pub mod migrate;
pub mod model;
pub mod pelt;
pub mod policy;
pub mod topology;
pub mod tunables;
pub mod weights;

#[cfg(test)]
mod bandwidth_tests;
#[cfg(test)]
mod eevdf_tests;
#[cfg(test)]
mod group_tests;
#[cfg(test)]
mod load_tests;
#[cfg(test)]
mod tests;

use crate::ids::{CfsRqId, EntityId};

/// The hooks a scheduling class offers the core scheduler (`struct sched_class`
/// in 4.4 kernel/sched/sched.h), under their kernel names. Resched requests are
/// returned as `true`; the engine turns them into a `schedule()` at the next
/// preemption point.
pub trait SchedClass {
    /// Returns whether the task now counts in `rq->nr_running` (false: it
    /// joined a throttled hierarchy, `enqueue_task_fair`'s `if (!se)`).
    fn enqueue_task(&mut self, se: EntityId, flags: u32) -> bool;
    /// Returns false when the class keeps the sleeping task queued instead
    /// (EEVDF DELAY_DEQUEUE, 6.12+): it still counts on its CPU.
    fn dequeue_task(&mut self, se: EntityId, flags: u32) -> bool;
    /// Puts `prev` (the task that was running, if fair) and picks the next task.
    fn pick_next_task(&mut self, root: CfsRqId, prev: Option<EntityId>) -> Option<EntityId>;
    fn put_prev_task(&mut self, prev: EntityId);
    fn task_tick(&mut self, curr: EntityId, queued: bool, hrtick_active: bool) -> bool;
    /// `check_preempt_curr` for a woken task of this class.
    fn wakeup_preempt(&mut self, curr: EntityId, woken: EntityId, wake_flags: u32, need_resched: bool) -> bool;
}
