//! The scheduling-class interface (`struct sched_class`, 6.18
//! kernel/sched/sched.h) and the class chain core.c walks to pick a task.
//!
//! The core reaches a class only through these hooks, under their kernel
//! names. The chain is the class-selection point: core.c's
//! `__pick_next_task` asks stop, deadline, RT, fair and idle in that order
//! (`for_each_class`); here fair is the only class with tasks, and idle is
//! `None`, so the chain is ready for the RT and deadline classes to come.

use crate::ids::{CfsRqId, EntityId};

/// The hooks a scheduling class offers the core scheduler (`struct sched_class`
/// in 4.4 and 6.18 kernel/sched/sched.h), under their kernel names. Resched
/// requests are returned as `true`; the engine turns them into a `schedule()`
/// at the next preemption point.
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
    /// `wakeup_preempt` (6.x; `check_preempt_curr` in 4.4) for a woken task of this class.
    fn wakeup_preempt(&mut self, curr: EntityId, woken: EntityId, wake_flags: u32, need_resched: bool) -> bool;
    /// `yield_task`: `nr_running` is the run queue's task count.
    fn yield_task(&mut self, curr: EntityId, nr_running: u32);
    /// `task_fork`, for a task created on queue `q`.
    fn task_fork(&mut self, q: CfsRqId, se: EntityId);
    /// `task_waking` (4.4; gone in 6.x, where it does nothing here).
    fn task_waking(&mut self, se: EntityId);
    /// `migrate_task_rq`, from `set_task_cpu`, before the task's queue changes.
    fn migrate_task_rq(&mut self, se: EntityId);
    /// `update_curr` (6.x hook, `update_curr_fair`): charge the running task
    /// of this class, e.g. at a kernel entry that reads its CPU time.
    fn update_curr(&mut self, curr: EntityId);
}

/// The scheduling classes, highest first (`for_each_class`: stop, deadline,
/// RT, fair, idle; 6.12+ puts ext between fair and idle, not modelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassKind {
    Stop,
    Deadline,
    Rt,
    Fair,
    Idle,
}

impl ClassKind {
    /// The order `__pick_next_task` asks them in.
    pub const ORDER: [ClassKind; 5] =
        [ClassKind::Stop, ClassKind::Deadline, ClassKind::Rt, ClassKind::Fair, ClassKind::Idle];
}

/// The classes a machine has, chosen once when the simulation is built: the
/// fair class (4.4 CFS or 6.x EEVDF, as the kernel model says); no stop,
/// deadline or RT class yet.
#[derive(Clone, Debug)]
pub struct ClassChain<F> {
    pub fair: F,
}

impl<F: SchedClass> ClassChain<F> {
    pub fn new(fair: F) -> ClassChain<F> {
        ClassChain { fair }
    }

    /// `__pick_next_task` (core.c): the task of the highest class that has
    /// one, with that class; `None` runs the idle task. `prev` is the fair
    /// task that was running, if any (the fair class puts it, as
    /// `pick_next_task_fair` or, with nothing fair left, `pick_next_task_idle` does).
    pub fn pick_next_task(&mut self, root: CfsRqId, prev: Option<EntityId>) -> Option<(ClassKind, EntityId)> {
        for class in ClassKind::ORDER {
            match class {
                // Not modelled: these classes never have a task.
                ClassKind::Stop | ClassKind::Deadline | ClassKind::Rt => {}
                ClassKind::Fair => {
                    if let Some(p) = self.fair.pick_next_task(root, prev) {
                        return Some((ClassKind::Fair, p));
                    }
                }
                ClassKind::Idle => return None,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::entity::SchedEntity;
    use crate::sched::fair::{Cfs, FairConfig};
    use crate::sched::group::GroupLoad;
    use crate::sched::tunables::{CfsTunables, TunableScaling, TunableValue};
    use crate::sched::weights::LoadWeight;
    use crate::sched::policy::Policy;

    /// With fair the only class, the chain picks the fair task, and an
    /// empty fair class leaves the CPU to the idle class (`None`).
    #[test]
    fn chain_picks_fair_then_idle() {
        let d = TunableValue::Default;
        let tunables = CfsTunables::resolve(1, TunableScaling::None, d, d, d);
        let mut cfs = Cfs::new(FairConfig::of(crate::sched::model::KernelModel::Linux44, tunables), GroupLoad::Pelt, 1);
        cfs.entities.push(SchedEntity::new(LoadWeight::for_task(Policy::Normal, 0), CfsRqId(0), Policy::Normal));
        let mut chain = ClassChain::new(cfs);
        assert_eq!(chain.pick_next_task(CfsRqId(0), None), None);
        assert!(chain.fair.enqueue_task(EntityId(0), 0));
        assert_eq!(chain.pick_next_task(CfsRqId(0), None), Some((ClassKind::Fair, EntityId(0))));
        assert!(chain.fair.dequeue_task(EntityId(0), crate::sched::fair::DEQUEUE_SLEEP));
        assert_eq!(chain.pick_next_task(CfsRqId(0), Some(EntityId(0))), None);
    }
}
