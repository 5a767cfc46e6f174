//! What the SMP policy (4.4 fair.c's placement and balancing) sees of the
//! machine and may do to it: the `Machine` trait over the scheduler core's
//! state, for the length of one policy call.
//!
//! `with_smp` takes the policy out of the core for the call, so it can read
//! and drive the run queues through a `Balancer`; the moves it makes
//! (`move_queued_task`, `stopper_preempt`) are the run-queue primitives of
//! `rq.rs`, with no effect left over (an idle CPU's switch runs no steps).

use super::rq::{Core, se_of};
use super::world::World;
use crate::cpuset::CpuSet;
use crate::event::Event;
use crate::ids::{CpuId, TaskId};
use crate::sched::balance::{CpuSignals, Machine, MigrateCause, Smp, TaskHotInputs, TaskSignals};
use crate::sched::fair::{DEQUEUE_MIGRATING, ENQUEUE_MIGRATING};
use crate::sched::rt_pressure::RqPressure;
use crate::sched::{ClassState, SchedClass};
use crate::task::TaskState;

/// The machine as one SMP policy call sees it.
pub(super) struct Balancer<'c, 'w> {
    core: &'c mut Core,
    w: &'w mut World,
}

/// Runs the SMP policy with the machine: the policy is taken out of the
/// core for the call so it can read and drive the run queues.
pub(super) fn with_smp<R>(
    core: &mut Core,
    w: &mut World,
    f: impl FnOnce(&mut Smp, &mut Balancer<'_, '_>) -> R,
) -> R {
    let mut smp = core.smp.take().expect("the SMP policy is not re-entered");
    let r = f(&mut smp, &mut Balancer { core, w });
    core.smp = Some(smp);
    r
}

/// How far a migrated entity's lag may drift from its saved `vlag` through
/// the integer divisions of `avg_vruntime` and `place_entity` (virtual ns).
const LAG_ROUNDING_NS: i64 = 4;

/// EEVDF (6.x): the lag a queued task moved by the balancer must have once
/// enqueued on its new queue. `dequeue_entity` saved `vlag = V - v`
/// (`update_entity_lag`); `place_entity` inflates it by `(W + w)/W` so that
/// after the enqueue `V' - v` is `vlag` again (PLACE_LAG, a queue that is
/// not empty; 6.18 only for a non-zero lag), else 0. None under 4.4 (its
/// relative vruntime is asserted instead) or when the queue is throttled.
fn expected_lag_after_move(core: &Core, se: crate::ids::EntityId) -> Option<i64> {
    let fair = core.classes.fair_internals();
    if fair.migrates_relative_vruntime() || !cfg!(debug_assertions) {
        return None;
    }
    let e = fair.se(se);
    let q = fair.rq(e.cfs_rq);
    if fair.throttled_hierarchy(e.cfs_rq) {
        return None;
    }
    let has_lag = !fair.rules.place_needs_lag || e.vlag != 0;
    Some(if fair.features_eevdf.place_lag && q.nr_running > 0 && has_lag { e.vlag } else { 0 })
}

/// What the SMP policy sees of the machine and may do to it.
impl Machine for Balancer<'_, '_> {
    fn clock_ns(&self) -> u64 {
        self.w.clock.now.ns()
    }

    fn jiffies(&self) -> u64 {
        self.w.clock.jiffies
    }

    fn hz(&self) -> u64 {
        u64::from(self.w.spec.hz)
    }

    fn nr_running(&self, cpu: CpuId) -> u32 {
        self.core.rqs[cpu.index()].nr_running
    }

    fn curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.core.rqs[cpu.index()].curr
    }

    fn task_cpu(&self, task: TaskId) -> CpuId {
        self.w.tasks[task.index()].cpu
    }

    fn cpus_allowed(&self, task: TaskId) -> &CpuSet {
        &self.w.tasks[task.index()].affinity
    }

    fn weighted_cpuload(&self, cpu: CpuId) -> u64 {
        self.core.classes.fair_internals().weighted_cpuload(cpu)
    }

    fn cpu_util_avg(&self, cpu: CpuId) -> u64 {
        self.core.classes.fair_internals().cpu_util(cpu)
    }

    fn h_nr_running(&self, cpu: CpuId) -> u32 {
        self.core.classes.fair_internals().rq(self.core.rqs[cpu.index()].root).h_nr_running
    }

    fn task_load_avg(&self, task: TaskId) -> u64 {
        self.core.classes.fair_internals().task_load_avg(se_of(task))
    }

    fn task_h_load(&mut self, task: TaskId) -> u64 {
        let jiffies = self.w.clock.jiffies;
        self.core.classes.fair_internals_mut().task_h_load(se_of(task), jiffies)
    }

    fn effective_load(&self, of_task: TaskId, cpu: CpuId, wl: i64, wg: i64) -> i64 {
        let tg = self.core.classes.fair_internals().task_group_of(se_of(of_task));
        self.core.classes.fair_internals().effective_load(tg, cpu, wl, wg)
    }

    fn update_blocked_averages(&mut self, cpu: CpuId) {
        // 6.x: __update_blocked_others (6.12+ update_other_load_avgs) first:
        // avg_rt and avg_dl decay, as running for the class of rq->curr.
        let curr = self.core.rqs[cpu.index()].curr.map(|t| Core::class_of(t, self.w));
        let now = self.w.clock.now.ns();
        self.core.classes.rt.pressure.update_other_load_avgs(cpu.index(), now, curr);
        // Whether blocked load remains (6.x `rq->has_blocked_load`) is not
        // asked through `Machine` yet.
        self.core.classes.fair_internals_mut().update_blocked_averages(cpu);
    }

    fn rt_pressure(&self, cpu: CpuId) -> RqPressure {
        self.core.classes.rt.pressure.rq(cpu.index())
    }

    fn others_have_blocked(&self, cpu: CpuId) -> bool {
        self.core.classes.rt.pressure.others_have_blocked(cpu.index())
    }

    fn sched_avg_update(&mut self, cpu: CpuId) {
        self.core.classes.rt.pressure.sched_avg_update(cpu.index(), self.w.clock.now.ns());
    }

    fn task_hot_inputs(&self, task: TaskId) -> TaskHotInputs {
        let se = se_of(task);
        let e = self.core.classes.fair_internals().se(se);
        let q = self.core.classes.fair_internals().rq(e.cfs_rq);
        TaskHotInputs {
            sched_delayed: e.sched_delayed,
            sched_idle: e.policy == crate::workload::Policy::Idle,
            exec_start_ns: e.exec_start,
            buddy: q.next == Some(se) || q.last == Some(se),
        }
    }

    fn throttled_lb_pair(&self, task: TaskId, src: CpuId, dst: CpuId) -> bool {
        let cfs = self.core.classes.fair_internals();
        if !cfs.bw.used {
            return false;
        }
        let g = &cfs.groups[self.w.tasks[task.index()].group.index()];
        [src, dst].iter().any(|c| g.cfs_rq[c.index()].is_some_and(|q| cfs.throttled_hierarchy(q)))
    }

    /// Tasks start from no task: `wake_up_new_task`'s parent is implicit.
    fn fork_parent_implicit(&self) -> bool {
        true
    }

    /// The root queue's PELT signals (6.x's; under 4.4 runnable reads as
    /// util and util_est as 0, `FairCore::cpu_signals`).
    fn cpu_signals(&self, cpu: CpuId) -> CpuSignals {
        self.core.classes.fair_internals().cpu_signals(cpu)
    }

    fn h_nr_idle(&self, cpu: CpuId) -> u32 {
        self.core.classes.fair_internals().cpu_h_nr_idle(cpu)
    }

    fn task_signals(&self, task: TaskId) -> TaskSignals {
        self.core.classes.fair_internals().task_signals(se_of(task))
    }

    fn cfs_task_at(&self, cpu: CpuId, index_from_head: usize) -> Option<TaskId> {
        self.core.cfs_tasks.at(cpu, index_from_head)
    }

    fn cfs_tasks_move_tail(&mut self, cpu: CpuId, task: TaskId) {
        self.core.cfs_tasks.move_tail(cpu, task);
    }

    fn cfs_task_at_tail(&self, cpu: CpuId, index_from_tail: usize) -> Option<TaskId> {
        self.core.cfs_tasks.at_tail(cpu, index_from_tail)
    }

    fn cfs_tasks_move_head(&mut self, cpu: CpuId, task: TaskId) {
        self.core.cfs_tasks.move_head(cpu, task);
    }

    /// `task_is_ineligible_on_dst_cpu` (6.18 fair.c): PLACE_LAG, the task's
    /// group queue on `dst` not empty (`nr_queued`), and a negative lag in
    /// its own queue (`!entity_eligible`; 4.4's lag is 0).
    fn task_is_ineligible_on_dst_cpu(&self, task: TaskId, dst: CpuId) -> bool {
        let cfs = self.core.classes.fair_internals();
        if !cfs.features_eevdf.place_lag {
            return false;
        }
        let se = se_of(task);
        let g = &cfs.groups[self.w.tasks[task.index()].group.index()];
        let Some(dq) = g.cfs_rq[dst.index()] else { return false };
        cfs.rq(dq).nr_running > 0 && cfs.entity_lag(cfs.se(se).cfs_rq, se) < 0
    }

    /// `detach_task` → `deactivate_task(rq, p, 0)` + `set_task_cpu`, then
    /// `attach_task` → `activate_task(rq, p, 0)` + `check_preempt_curr`
    /// (4.4 fair.c). Without DEQUEUE_SLEEP/ENQUEUE_WAKEUP the vruntime is
    /// made relative to the old queue's `min_vruntime` and rebased on the new.
    fn move_queued_task(&mut self, task: TaskId, to: CpuId, cause: MigrateCause, by: CpuId) {
        let (core, w) = (&mut *self.core, &mut *self.w);
        let from = w.tasks[task.index()].cpu;
        debug_assert_ne!(core.rqs[from.index()].curr, Some(task), "moving a running task");
        debug_assert!(w.tasks[task.index()].affinity.contains(to), "moving a task outside its affinity");
        let se = se_of(task);
        debug_assert!(!core.classes.fair().throttled(se), "throttled_lb_pair lets no such task go");
        // deactivate_task: the task is on_rq_migrating (6.x DO_DETACH).
        core.classes.fair_mut().dequeue_task(se, DEQUEUE_MIGRATING);
        core.cfs_tasks.remove(from, task);
        core.sub_nr_running(from, w);
        core.hrtick_update(from, w);
        // set_task_cpu → migrate_task_rq_fair, set_task_rq.
        core.classes.fair_mut().migrate_task_rq(se, true);
        core.classes.fair_mut().set_task_rq(se, w.tasks[task.index()].group, to);
        core.note_migration(task, from, to, cause, by, w);
        // The vruntime travels relative: dequeue_entity subtracted the old
        // queue's min_vruntime, enqueue_entity adds the new one's (as it
        // stands before its update_curr, which may be a tick stale, as in 4.4).
        let fair = core.classes.fair();
        let (relative, new_min) = (fair.vruntime(se), fair.min_vruntime(fair.cfs_rq_of(se)));
        let lag_expected = expected_lag_after_move(core, se);
        // The destination queue may throttle at this enqueue (an empty group
        // queue without runtime there: check_enqueue_throttle).
        // activate_task of a task on_rq_migrating (6.12's util_est skips a
        // delayed one both ways).
        core.activate_task(to, task, ENQUEUE_MIGRATING, w);
        if let Some(expected) = lag_expected {
            let fair = core.classes.fair_internals();
            let lag = fair.entity_lag(fair.se(se).cfs_rq, se);
            debug_assert!(
                (lag - expected).abs() <= LAG_ROUNDING_NS,
                "EEVDF lag not kept across migration: {expected} before, {lag} after (seed {} at {})",
                w.spec.seed,
                w.clock.now.ns()
            );
        }
        // 4.4 only: EEVDF keeps vruntime absolute and places by the saved lag.
        assert!(
            !core.classes.fair_internals().migrates_relative_vruntime()
                || core.classes.fair().vruntime(se) == relative + new_min,
            "vruntime not rebased on migration: seed {} at {}",
            w.spec.seed,
            w.clock.now.ns()
        );
        core.hrtick_update(to, w);
        core.check_preempt_curr(to, task, 0, w);
    }

    fn kick_nohz_balancer(&mut self, ilb: CpuId) {
        self.w.queue.push(self.w.clock.now, Event::NohzKick { cpu: ilb });
    }

    fn queue_active_balance(&mut self, busiest: CpuId) {
        self.w.queue.push(self.w.clock.now, Event::ActiveBalance { cpu: busiest });
    }

    /// The stopper task preempts the running task (`put_prev_task`), which
    /// stays queued; the CPU picks again once the stopper is done. The
    /// switch is to the stopper, a task, not to the idle loop (6.6 fair.c
    /// `active_load_balance_cpu_stop` runs in `cpu_stopper_thread`): the
    /// CPU does not enter NO_HZ idle here, even when the put throttled the
    /// task's group and left nothing queued (`put_prev_entity` →
    /// `check_cfs_rq_runtime`), and the policy, busy with this call, is not
    /// told; the `__schedule` after the stopper does that if it idles.
    fn stopper_preempt(&mut self, cpu: CpuId) {
        let (core, w) = (&mut *self.core, &mut *self.w);
        let Some(curr) = core.rqs[cpu.index()].curr else { return };
        if w.tasks[curr.index()].state != TaskState::Running {
            return;
        }
        core.classes.put_prev_task(cpu, (Core::class_of(curr, w), se_of(curr)), w.now().ns());
        core.apply_class_resched(w);
        core.rqs[cpu.index()].in_stopper = true;
        let none = core.context_switch(cpu, Some(curr), None, w);
        debug_assert!(none.is_none(), "an idle switch runs no steps");
        core.resched_curr(cpu);
    }
}
