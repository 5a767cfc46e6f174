//! The scheduling-class interface (`struct sched_class`, 6.18
//! kernel/sched/sched.h) and the class chain core.c walks to pick a task.
//!
//! The core reaches a class only through these hooks, under their kernel
//! names. The chain is the class-selection point: core.c's
//! `__pick_next_task` asks stop, deadline, RT, fair and idle in that order
//! (`for_each_class`); the stop class (one task per CPU), the deadline
//! class (with the 6.12+ fair server), the RT class and the fair class have
//! tasks, and idle is `None`.
//!
//! What the core needs from a class that is not a hook (its outboxes, the
//! values the history records and core.c's paths read) is `ClassState`: the
//! engine holds the chain and sees the class only as
//! `impl SchedClass + ClassState` (`ClassChain::fair`), so it cannot reach
//! past these two traits. Everything stays monomorphic: no `dyn` anywhere.

use super::bandwidth::{ThrottleEvent, TimerRequest};
use super::model::WakeupVerdict;
use crate::ids::{CfsRqId, CpuId, EntityId, GroupId};

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
    /// `migrate_task_rq`, from `set_task_cpu`, before the task's queue
    /// changes; `on_rq_migrating`: the balancer moves it while queued
    /// (`task_on_rq_migrating`: its dequeue had DEQUEUE_MIGRATING).
    fn migrate_task_rq(&mut self, se: EntityId, on_rq_migrating: bool);
    /// `update_curr` (6.x hook, `update_curr_fair`): charge the running task
    /// of this class, e.g. at a kernel entry that reads its CPU time.
    fn update_curr(&mut self, curr: EntityId);
    /// `task_dead` (`task_dead_fair`, 4.4 and 6.x): a dead task's load
    /// average leaves its queue. Optional, as in the kernel (core.c calls it
    /// only `if (prev->sched_class->task_dead)`): by default nothing.
    fn task_dead(&mut self, _se: EntityId) {}
}

/// What the core reads from a class, and the requests the class left for it
/// from inside its last hook (outboxes the engine drains after each call).
pub trait ClassState {
    // --- Kernel entries that are not `struct sched_class` hooks ---
    /// `set_task_rq` (sched.h, from `set_task_cpu`/`sched_fork`): the
    /// task's queue becomes its group's queue on `cpu`.
    fn set_task_rq(&mut self, se: EntityId, tg: GroupId, cpu: CpuId);
    /// `update_rq_clock`: the class's `rq_clock` is `now_ns`.
    fn update_rq_clock(&mut self, now_ns: u64);
    /// The flags `wake_up_new_task` enqueues with (`ENQUEUE_INITIAL` in 6.x).
    fn new_task_enqueue_flags(&self) -> u32;
    /// `post_init_entity_util_avg` (6.x `wake_up_new_task`, the CPU chosen,
    /// before the enqueue): the new task's initial util; 4.4 has none.
    fn post_init_entity_util_avg(&mut self, se: EntityId);

    // --- Outboxes ---
    /// A CPU whose current task the class asked to reschedule (`resched_curr`
    /// from inside a hook).
    fn pop_resched(&mut self) -> Option<CpuId>;
    /// A task whose delayed dequeue the last pick completed (6.12+).
    fn pop_delayed_done(&mut self) -> Option<EntityId>;
    /// Forgets the delayed dequeues just completed (the caller counts them).
    fn clear_delayed_done(&mut self);
    /// `cfs_bandwidth_used()`: some group has a CPU quota.
    fn bandwidth_used(&self) -> bool;
    /// Bandwidth timers to arm (`start_cfs_bandwidth`, the slack timer).
    fn bandwidth_timers(&mut self) -> &mut Vec<TimerRequest>;
    /// Throttles and unthrottles since the last call, with their
    /// `nr_running` changes.
    fn take_throttle_events(&mut self) -> Vec<ThrottleEvent>;
    /// Whether a bandwidth timer event is still the armed one.
    fn bandwidth_timer_current(&self, g: GroupId, slack: bool, generation: u32) -> bool;
    /// `sched_cfs_period_timer` or `sched_cfs_slack_timer` of group `g` fires.
    fn bandwidth_timer(&mut self, g: GroupId, slack: bool, generation: u32);

    // --- Queries ---
    /// `task_on_rq_queued`: the task's entity is on its queue.
    fn on_rq(&self, se: EntityId) -> bool;
    /// `se->sched_delayed` (6.12+ DELAY_DEQUEUE): queued while asleep.
    fn sched_delayed(&self, se: EntityId) -> bool;
    /// `cfs_rq_of(se)`: the queue the entity belongs to.
    fn cfs_rq_of(&self, se: EntityId) -> CfsRqId;
    fn vruntime(&self, se: EntityId) -> i64;
    fn min_vruntime(&self, q: CfsRqId) -> i64;
    /// `cfs_rq->nr_running`: the queue's entities (not its hierarchy's tasks).
    fn nr_running(&self, q: CfsRqId) -> u32;
    /// `throttled_hierarchy(cfs_rq_of(se))`: the entity's queue or an
    /// ancestor's ran out of quota (false without bandwidth control).
    fn throttled(&self, se: EntityId) -> bool;
    /// Whether group `g` is `ancestor` or below it.
    fn group_is_under(&self, g: GroupId, ancestor: GroupId) -> bool;
    /// `for_each_sched_entity` above `se`: each parent group entity's group
    /// and weight, bottom up.
    fn for_each_parent(&self, se: EntityId, f: impl FnMut(GroupId, u64));
    /// The queued entity's virtual deadline and `entity_lag` (EEVDF; 4.4:
    /// the deadline field and 0), or `None` and the saved `vlag` when it is
    /// not queued.
    fn deadline_lag(&self, se: EntityId) -> (Option<i64>, i64);
    /// Why the last `wakeup_preempt` did or did not preempt, and whether it
    /// decided at a group level.
    fn wakeup_verdict(&self) -> (WakeupVerdict, bool);
    /// Records a verdict the core reached without asking the class.
    fn set_wakeup_verdict(&mut self, verdict: WakeupVerdict);
    /// The HRTICK feature (`sched_feat(HRTICK)`).
    fn hrtick_enabled(&self) -> bool;
    /// The delay `hrtick_start_fair` arms the HRTICK with: the slice left,
    /// if the queue has company. `Some(d < 0)`: the slice is used up.
    fn hrtick_delay(&mut self, curr: EntityId) -> Option<i64>;
    /// Whether `hrtick_update` re-arms the timer after an enqueue/dequeue.
    fn hrtick_update_wanted(&mut self, curr: EntityId) -> bool;
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
/// stop class (stop_task.c), the deadline class (deadline.c), the RT class
/// (rt.c) and the fair class (4.4 CFS or 6.x EEVDF, as the kernel model
/// says). The fair class is reached through its interface; the others by
/// their own hooks, which the engine calls for a task whose `p->sched_class`
/// is theirs.
#[derive(Clone, Debug)]
pub struct ClassChain<F> {
    fair: F,
    pub rt: super::rt::RtClass,
    /// The deadline class, with the 6.12+ fair server of each CPU.
    pub dl: super::deadline::DlClass,
    /// The stop class: `rq->stop` of each CPU.
    pub stop: super::stop::StopClass,
}

impl<F: SchedClass + ClassState> ClassChain<F> {
    pub fn new(
        fair: F,
        rt: super::rt::RtClass,
        dl: super::deadline::DlClass,
        stop: super::stop::StopClass,
    ) -> ClassChain<F> {
        ClassChain { fair, rt, dl, stop }
    }

    /// The fair class (`rq->cfs`), seen only through its interface.
    #[inline]
    pub fn fair(&self) -> &(impl SchedClass + ClassState) {
        &self.fair
    }

    /// The fair class, to call its hooks.
    #[inline]
    pub fn fair_mut(&mut self) -> &mut (impl SchedClass + ClassState) {
        &mut self.fair
    }

    /// The fair class itself, beyond the interface: for building it, for
    /// the SMP balancer (4.4's is fair.c's own half, reading its loads), for
    /// the invariant checks and for the read-only view of a run. Generic
    /// paths use `fair`/`fair_mut`.
    #[inline]
    pub fn fair_internals(&self) -> &F {
        &self.fair
    }

    /// `fair_internals`, mutable (building the class, the balancer's loads).
    #[inline]
    pub fn fair_internals_mut(&mut self) -> &mut F {
        &mut self.fair
    }

    /// `put_prev_task` of the running task's class (`prev->sched_class`) on `cpu`.
    pub fn put_prev_task(&mut self, cpu: CpuId, prev: (ClassKind, EntityId), now: u64) {
        match prev.0 {
            ClassKind::Rt => self.rt.put_prev_task(crate::ids::TaskId(prev.1.0), now),
            ClassKind::Deadline => self.put_prev_task_dl(cpu, crate::ids::TaskId(prev.1.0), now),
            // put_prev_task_stop: only the task's own run time (4.4; 6.18 update_curr_common).
            ClassKind::Stop => {}
            _ => self.fair.put_prev_task(prev.1),
        }
    }

    /// `put_prev_task_dl`: charged, and (6.x deadline.c:2043, 6.12 2449,
    /// 6.18 2400) `update_dl_rq_load_avg(.., 1)`.
    fn put_prev_task_dl(&mut self, cpu: CpuId, task: crate::ids::TaskId, now: u64) {
        self.dl.put_prev_task(task, now);
        self.rt.pressure.running(ClassKind::Deadline, cpu.index(), now);
    }

    /// `__pick_next_task` (core.c): the task of the highest class that has
    /// one, with that class; `None` runs the idle task. `prev` is the task
    /// that was running with its class: the class that picks puts it first
    /// when it is of another class (4.4 `pick_next_task_rt` calls
    /// `put_prev_task`; 6.x `put_prev_task_balance`/`put_prev_set_next_task`),
    /// and the fair class puts its own as `pick_next_task_fair` does.
    /// `fair_only`: the engine found core.c's fast path open with a fair
    /// server queued (`RtRules::fast_path_skips_server`): only the fair
    /// class picks, and the server is neither picked nor stopped.
    pub fn pick_next_task(
        &mut self,
        root: CfsRqId,
        cpu: CpuId,
        prev: Option<(ClassKind, EntityId)>,
        now: u64,
        fair_only: bool,
    ) -> Option<(ClassKind, EntityId)> {
        let mut fair_prev = prev.filter(|p| p.0 == ClassKind::Fair).map(|p| p.1);
        if fair_only {
            self.dl.server_done(cpu, now); // rq->dl_server = NULL
            return self.fair.pick_next_task(root, fair_prev).map(|p| (ClassKind::Fair, p));
        }
        match prev {
            // The RT or deadline task that ran is charged and stays queued;
            // the pick below starts anew.
            Some((ClassKind::Rt, se)) => self.rt.put_prev_task(crate::ids::TaskId(se.0), now),
            Some((ClassKind::Deadline, se)) => self.put_prev_task_dl(cpu, crate::ids::TaskId(se.0), now),
            _ => {}
        }
        let prev_class = prev.map(|p| p.0);
        if self.dl.has_server() {
            self.dl.server_done(cpu, now);
        }
        for class in ClassKind::ORDER {
            match class {
                // pick_task_stop (6.18 stop_task.c; 4.4 pick_next_task_stop,
                // which puts prev first): rq->stop, if queued.
                ClassKind::Stop => {
                    if let Some(t) = self.stop.pick_task(cpu) {
                        if let Some(fp) = fair_prev.take() {
                            self.fair.put_prev_task(fp);
                        }
                        return Some((ClassKind::Stop, EntityId(t.0)));
                    }
                }
                ClassKind::Deadline if !self.dl.has_queued(cpu) => {}
                ClassKind::Deadline => {
                    // Each empty server pick stops or throttles the server: bounded by one per CPU.
                    for _ in 0..2 {
                        match self.dl.pick(cpu, now) {
                            None => break,
                            Some(super::deadline::EntityRef::Task(t)) => {
                                if let Some(fp) = fair_prev.take() {
                                    self.fair.put_prev_task(fp);
                                }
                                // set_next_task_dl: prev of another class → update_dl_rq_load_avg(.., 0).
                                self.rt.pressure.set_next(ClassKind::Deadline, prev_class, cpu.index(), now);
                                return Some((ClassKind::Deadline, EntityId(t.0)));
                            }
                            Some(super::deadline::EntityRef::Server(_)) => {
                                // __pick_task_dl → server_pick_task = pick_task_fair.
                                if let Some(p) = self.fair.pick_next_task(root, fair_prev.take()) {
                                    self.dl.server_picked(cpu, now);
                                    return Some((ClassKind::Fair, p));
                                }
                                self.dl.server_empty_pick(cpu, now);
                            }
                        }
                    }
                }
                ClassKind::Rt => {
                    // A throttled queue is not `rt_queued`: pick_next_task_rt
                    // returns NULL before putting prev (4.4 rt.c:1488).
                    if self.rt.nr_running(cpu) > 0 && !self.rt.throttled(cpu) {
                        if let Some(fp) = fair_prev.take() {
                            self.fair.put_prev_task(fp);
                        }
                        let p = self.rt.pick_next_task(cpu, now).expect("a queued, unthrottled RT task");
                        // set_next_task_rt: prev of another class → update_rt_rq_load_avg(.., 0).
                        self.rt.pressure.set_next(ClassKind::Rt, prev_class, cpu.index(), now);
                        return Some((ClassKind::Rt, EntityId(p.0)));
                    }
                }
                ClassKind::Fair => {
                    if let Some(p) = self.fair.pick_next_task(root, fair_prev) {
                        return Some((ClassKind::Fair, p));
                    }
                    return None;
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
    use crate::cpuset::CpuSet;
    use crate::sched::policy::Policy;
    use crate::sched::rt::{RtBandwidth, RtClass, RtConfig};

    /// The chain picks the fair task, an RT task before it, a stop task
    /// before both, and an empty chain leaves the CPU to the idle class (`None`).
    #[test]
    fn chain_picks_fair_then_idle() {
        let d = TunableValue::Default;
        let tunables = CfsTunables::resolve(1, TunableScaling::None, d, d, d);
        let mut cfs = Cfs::new(FairConfig::of(crate::sched::model::KernelModel::Linux44, tunables), GroupLoad::Pelt, 1);
        cfs.entities.push(SchedEntity::new(LoadWeight::for_task(Policy::Normal, 0), CfsRqId(0), Policy::Normal));
        let bw = RtBandwidth::of(crate::sched::model_rt::RT_44, 1_000_000_000, Some(950_000_000), false);
        let cfg = RtConfig { bw, rr_timeslice: 25, distribute: false, overload_needs_two: false };
        let rt = RtClass::new(2, vec![CpuSet::all(1)], vec![vec![]], cfg);
        let stop = crate::sched::stop::StopClass::new(3, 1);
        let mut chain = ClassChain::new(cfs, rt, crate::sched::deadline::DlClass::new(3, vec![CpuSet::all(1)], None), stop);
        let cpu = CpuId(0);
        assert_eq!(chain.pick_next_task(CfsRqId(0), cpu, None, 0, false), None);
        assert!(chain.fair_mut().enqueue_task(EntityId(0), 0));
        assert_eq!(chain.pick_next_task(CfsRqId(0), cpu, None, 0, false), Some((ClassKind::Fair, EntityId(0))));
        // An RT task queued on the CPU comes first (stop > dl > rt > fair).
        chain.rt.init_task(crate::ids::TaskId(1), 49, false, false);
        assert!(chain.rt.enqueue_task(crate::ids::TaskId(1), false, 0));
        let fair_prev = Some((ClassKind::Fair, EntityId(0)));
        assert_eq!(chain.pick_next_task(CfsRqId(0), cpu, fair_prev, 0, false), Some((ClassKind::Rt, EntityId(1))));
        assert!(chain.rt.dequeue_task(crate::ids::TaskId(1), 10));
        let rt_prev = Some((ClassKind::Rt, EntityId(1)));
        assert_eq!(chain.pick_next_task(CfsRqId(0), cpu, rt_prev, 10, false), Some((ClassKind::Fair, EntityId(0))));
        // A queued stop task comes before RT and fair, and its prev is put.
        chain.stop.set_stop_task(cpu, crate::ids::TaskId(2));
        chain.stop.enqueue_task(crate::ids::TaskId(2));
        assert!(chain.rt.enqueue_task(crate::ids::TaskId(1), false, 10));
        assert_eq!(chain.pick_next_task(CfsRqId(0), cpu, fair_prev, 10, false), Some((ClassKind::Stop, EntityId(2))));
        chain.stop.dequeue_task(crate::ids::TaskId(2));
        let stop_prev = Some((ClassKind::Stop, EntityId(2)));
        assert_eq!(chain.pick_next_task(CfsRqId(0), cpu, stop_prev, 12, false), Some((ClassKind::Rt, EntityId(1))));
        assert!(chain.rt.dequeue_task(crate::ids::TaskId(1), 14));
        assert_eq!(chain.pick_next_task(CfsRqId(0), cpu, rt_prev, 14, false), Some((ClassKind::Fair, EntityId(0))));
        assert!(chain.fair_mut().dequeue_task(EntityId(0), crate::sched::fair::DEQUEUE_SLEEP));
        assert_eq!(chain.pick_next_task(CfsRqId(0), cpu, fair_prev, 20, false), None);
    }
}
