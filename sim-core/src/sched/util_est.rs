//! util_est (UTIL_EST, on in 6.6, 6.12 and 6.18 features.h): a task's
//! utilization as of the end of its last activations, and the sum over the
//! tasks queued on a CPU (`rq->cfs.avg.util_est`), which 6.x's balancer
//! and `cpu_util` read beside `util_avg` (it does not decay while a task sleeps).
//!
//! - 6.6: `struct util_est { enqueued, ewma }`. At a sleep, after the
//!   dequeue, `enqueued` takes the task's util; UTIL_EST_FASTUP lets the ewma
//!   jump up to it; otherwise the ewma moves a quarter of the way, unless both
//!   differences are within 1% (`within_margin`) or the task fills the CPU.
//! - 6.12, 6.18: one value, the ewma, updated before the dequeue: it follows
//!   an increase at once, keeps within 1%, and otherwise moves a quarter of
//!   the way down unless the task did not get all the CPU it wanted
//!   (`task_runnable` above util by more than the margin); 6.18 drops 6.12's
//!   skip of a task above the CPU's capacity.
//!
//! UTIL_AVG_UNCHANGED marks an estimate that no PELT update has touched
//! since: the next update is skipped until one does (`cfs_se_util_change`,
//! `pelt6x.rs`). Every CPU has capacity 1024. UTIL_EST and UTIL_EST_FASTUP
//! are the version's (`UtilEstRules`), not settable features.

use super::fair_core::{DEQUEUE_MIGRATING, DEQUEUE_SLEEP, ENQUEUE_DELAYED, ENQUEUE_MIGRATING, ENQUEUE_RESTORE, FairCore};
use super::model::UtilEstDelayed;
use super::pelt6x::UTIL_AVG_UNCHANGED;
use crate::ids::{CfsRqId, EntityId};

/// `UTIL_EST_MARGIN` (6.x fair.c): `SCHED_CAPACITY_SCALE / 100`.
pub const UTIL_EST_MARGIN: u32 = 1024 / 100;
/// `UTIL_EST_WEIGHT_SHIFT` (6.x sched.h): new samples weigh 1/4.
const UTIL_EST_WEIGHT_SHIFT: u32 = 2;
/// `arch_scale_cpu_capacity` / `capacity_orig_of`: every CPU at 1024.
const CPU_CAPACITY: u64 = 1024;


/// `within_margin` (6.6 fair.c): `|value| < margin`.
fn within_margin(value: i32, margin: i32) -> bool {
    ((value + margin - 1) as u32) < (2 * margin - 1) as u32
}

impl FairCore {
    /// The root queue of the task's CPU (`&rq->cfs`), where util_est is summed.
    fn util_est_root(&self, se: EntityId) -> CfsRqId {
        self.root_cfs_rq(self.rq(self.cfs_rq_of(se)).cpu)
    }

    /// `_task_util_est` (6.x fair.c): 6.6 `max(ewma, enqueued)`, 6.12+ the
    /// one value, without UTIL_AVG_UNCHANGED.
    pub fn task_util_est(&self, se: EntityId) -> u64 {
        let ue = self.se(se).avg.util_est;
        let v = if self.pelt6x().util_est.enqueued_and_ewma { ue.ewma.max(ue.enqueued & !UTIL_AVG_UNCHANGED) } else { ue.ewma & !UTIL_AVG_UNCHANGED };
        u64::from(v)
    }

    /// Whether `enqueue_task_fair` (`flags`) adds a task to the root's util_est:
    /// 6.12 not a delayed one migrating (or restored), 6.18 a delayed one
    /// only when requeued (ENQUEUE_DELAYED).
    pub(crate) fn util_est_enqueue_wanted(&self, se: EntityId, flags: u32) -> bool {
        let delayed = self.se(se).sched_delayed;
        match self.pelt6x().util_est.delayed {
            UtilEstDelayed::NoDelay => true,
            UtilEstDelayed::SkipMigrating => !(delayed && flags & (ENQUEUE_MIGRATING | ENQUEUE_RESTORE) != 0),
            UtilEstDelayed::SkipDelayed => !delayed || flags & ENQUEUE_DELAYED != 0,
        }
    }

    /// The same for `dequeue_task_fair`: 6.12 not a delayed one migrating
    /// (or saved), 6.18 no delayed one (it left at its sleep).
    fn util_est_dequeue_wanted(&self, se: EntityId, flags: u32) -> bool {
        let delayed = self.se(se).sched_delayed;
        match self.pelt6x().util_est.delayed {
            UtilEstDelayed::NoDelay => true,
            UtilEstDelayed::SkipMigrating => !(delayed && flags & (DEQUEUE_MIGRATING | ENQUEUE_RESTORE) != 0),
            UtilEstDelayed::SkipDelayed => !delayed,
        }
    }

    /// `util_est_enqueue` (6.x fair.c): the task's estimate joins its root queue's.
    pub(crate) fn util_est_enqueue(&mut self, se: EntityId) {
        let root = self.util_est_root(se);
        let est = self.task_util_est(se) as u32;
        let ue = &mut self.rq_mut(root).avg.util_est;
        ue.enqueued = ue.enqueued.wrapping_add(est);
    }

    /// `util_est_dequeue` (6.x fair.c): and leaves it (floored at 0).
    pub(crate) fn util_est_dequeue(&mut self, se: EntityId) {
        let root = self.util_est_root(se);
        let est = self.task_util_est(se) as u32;
        let ue = &mut self.rq_mut(root).avg.util_est;
        ue.enqueued -= ue.enqueued.min(est);
    }

    /// `dequeue_task_fair`'s util_est before `dequeue_entities` (6.x): the
    /// task leaves the root's sum; 6.12+ update its estimate now.
    pub(crate) fn util_est_dequeue_task(&mut self, se: EntityId, flags: u32) {
        if self.util_est_dequeue_wanted(se, flags) {
            self.util_est_dequeue(se);
        }
        if !self.pelt6x().util_est.enqueued_and_ewma {
            self.util_est_update(se, flags & DEQUEUE_SLEEP != 0);
        }
    }

    /// `dequeue_task_fair`'s util_est after `dequeue_entities`: 6.6 updates
    /// the estimate at its end (`dequeue_throttle:`), from the util the
    /// dequeue just brought up to date.
    pub(crate) fn util_est_dequeued_task(&mut self, se: EntityId, flags: u32) {
        if self.pelt6x().util_est.enqueued_and_ewma {
            self.util_est_update66(se, flags & DEQUEUE_SLEEP != 0);
        }
    }

    /// `util_est_update` (6.6 fair.c), run at the end of `dequeue_task_fair`.
    fn util_est_update66(&mut self, se: EntityId, task_sleep: bool) {
        // Only when the task completed an activation (not a migration).
        if !task_sleep {
            return;
        }
        let mut ue = self.se(se).avg.util_est;
        // No PELT update since the last enqueue: nothing new to learn.
        if ue.enqueued & UTIL_AVG_UNCHANGED != 0 {
            return;
        }
        let mut last_enqueued_diff = ue.enqueued as i32;
        ue.enqueued = self.se(se).avg.util_avg as u32;
        // UTIL_EST_FASTUP: reset the ewma on increases.
        if ue.ewma < ue.enqueued {
            ue.ewma = ue.enqueued;
        } else {
            let last_ewma_diff = ue.enqueued.wrapping_sub(ue.ewma) as i32;
            last_enqueued_diff -= ue.enqueued as i32;
            if within_margin(last_ewma_diff, UTIL_EST_MARGIN as i32) {
                if within_margin(last_enqueued_diff, UTIL_EST_MARGIN as i32) {
                    return;
                }
            } else {
                // No idle time to be sure of on this CPU: skip.
                if self.se(se).avg.util_avg > CPU_CAPACITY {
                    return;
                }
                ue.ewma = (ue.ewma << UTIL_EST_WEIGHT_SHIFT).wrapping_add_signed(last_ewma_diff) >> UTIL_EST_WEIGHT_SHIFT;
            }
        }
        ue.enqueued |= UTIL_AVG_UNCHANGED;
        self.se_mut(se).avg.util_est = ue;
    }

    /// `util_est_update` (6.12/6.18 fair.c), run before `dequeue_entities`.
    fn util_est_update(&mut self, se: EntityId, task_sleep: bool) {
        if !task_sleep {
            return;
        }
        let mut ewma = self.se(se).avg.util_est.ewma;
        if ewma & UTIL_AVG_UNCHANGED != 0 {
            return;
        }
        let avg = self.se(se).avg;
        let dequeued = avg.util_avg as u32;
        'done: {
            // Reset the ewma on increases: it smooths decreases only.
            if ewma <= dequeued {
                ewma = dequeued;
                break 'done;
            }
            let last_ewma_diff = ewma - dequeued;
            if last_ewma_diff < UTIL_EST_MARGIN {
                break 'done;
            }
            // 6.12: no idle time to be sure of on this CPU.
            if self.pelt6x().util_est.capacity_skip && u64::from(dequeued) > CPU_CAPACITY {
                return;
            }
            // The task did not get all the CPU time it wanted: keep the ewma.
            if u64::from(dequeued + UTIL_EST_MARGIN) < avg.runnable_avg {
                break 'done;
            }
            ewma = ((ewma << UTIL_EST_WEIGHT_SHIFT) - last_ewma_diff) >> UTIL_EST_WEIGHT_SHIFT;
        }
        self.se_mut(se).avg.util_est.ewma = ewma | UTIL_AVG_UNCHANGED;
    }
}
