//! core.c's generic paths, over the run-queue primitives of `rq.rs` and the
//! SMP policy reached through `machine.rs`: `scheduler_tick`, `__schedule`,
//! `wake_up_new_task`, `try_to_wake_up` (with `select_task_rq` and the
//! machine's wake-up latency), and the NO_HZ and active-balance entries.
//!
//! They call the fair class's hooks and know no fair-class rule. What must
//! follow a switch (the incoming task's steps, the limiters' delay windows)
//! is handed back as effects (`rq.rs`, `Core::switch_in`).

use super::machine::with_smp;
use super::rq::{Core, se_of};
use super::world::World;
use crate::event::Event;
use crate::ids::{CfsRqId, CpuId, TaskId};
use crate::metrics::recorder::WaitKind;
use crate::sched::balance::MigrateCause;
use crate::sched::balance::{PlaceKind, Placement};
use crate::sched::eevdf::{DEQUEUE_DELAYED, ENQUEUE_DELAYED};
use crate::sched::fair::{DEQUEUE_SLEEP, ENQUEUE_WAKEUP, ENQUEUE_WAKING, WF_FORK};
use crate::sched::model::WakeupVerdict;
use crate::sched::{ClassKind, ClassState, SchedClass};
use crate::task::TaskState;

impl Core {
    /// `scheduler_tick` (4.4 core.c): `task_tick_fair` for the running
    /// task, then `update_cpu_load_active` and `trigger_load_balance`. With
    /// NO_HZ idle a CPU found idle here stops its tick.
    pub fn scheduler_tick(&mut self, cpu: CpuId, w: &mut World) {
        self.rqs[cpu.index()].tick_armed = false;
        let curr = self.rqs[cpu.index()].curr;
        if curr.is_none() && w.spec.machine.nohz_idle {
            return; // stopped at idle entry (context_switch)
        }
        // task_tick_fair → update_curr → dl_server_update: only a fair curr
        // charges the server at a tick (task_tick_idle charges nothing).
        if self.fair_server && curr.is_some_and(|c| Self::class_of(c, w) == ClassKind::Fair) {
            self.charge_fair_server(cpu, w);
        }
        if let Some(curr) = curr {
            if Self::class_of(curr, w) == ClassKind::Deadline {
                self.update_curr_dl(cpu, w); // task_tick_dl
                // 6.x task_tick_dl: update_dl_rq_load_avg(.., 1).
                self.classes.rt.pressure.running(ClassKind::Deadline, cpu.index(), w.now().ns());
            } else if Self::class_of(curr, w) == ClassKind::Stop {
                // task_tick_stop: nothing (4.4, 6.18 stop_task.c).
            } else if Self::class_of(curr, w) == ClassKind::Rt {
                // task_tick_rt: update_curr_rt (RT throttling) and the RR slice.
                if self.classes.rt.task_tick(curr, w.now().ns()) {
                    self.resched_curr(cpu);
                }
            } else {
                let hrtick_active = self.rqs[cpu.index()].hrtick_armed;
                if self.classes.fair_mut().task_tick(se_of(curr), false, hrtick_active) {
                    self.resched_curr(cpu);
                }
            }
            self.apply_class_resched(w);
        }
        with_smp(self, w, |smp, m| smp.scheduler_tick(m, cpu));
        self.arm_tick(cpu, w);
    }

    /// The NO_HZ idle-balance kick arrives (`scheduler_ipi` →
    /// `run_rebalance_domains` with `idle_balance = 1`).
    pub fn nohz_kick(&mut self, cpu: CpuId, w: &mut World) {
        with_smp(self, w, |smp, m| smp.nohz_kick_received(m, cpu));
    }

    /// The stopper of `cpu` runs `active_load_balance_cpu_stop`.
    pub fn active_balance(&mut self, cpu: CpuId, w: &mut World) {
        with_smp(self, w, |smp, m| smp.active_load_balance_cpu_stop(m, cpu));
    }

    /// `__schedule` (4.4 core.c) at a preemption point: a previous task that is
    /// no longer running (it blocked or exited) is dequeued here, then the
    /// next one is picked. A re-picked task stopped between steps goes on
    /// (the last thing it does): the task that runs its next steps now is
    /// returned, for the event loop to run after this call's effects.
    pub fn schedule(&mut self, cpu: CpuId, w: &mut World) -> Option<TaskId> {
        let rq = &mut self.rqs[cpu.index()];
        if self.classes.fair().hrtick_enabled() {
            rq.hrtick_armed = false; // hrtick_clear
        }
        let prev = rq.curr;
        let root = rq.root;
        rq.resched_deferred = false;
        if let Some(p) = prev
            && !matches!(w.tasks[p.index()].state, TaskState::Running)
        {
            self.deactivate_prev(cpu, p, w);
        }
        // balance_dl, balance_rt (6.x put_prev_task_balance, from prev's
        // class down) / pick_next_task_dl's and _rt's pulls (4.4): before any pick.
        self.dl_balance(cpu, prev, w);
        self.rt_balance(cpu, prev, w);
        let mut balanced = false;
        if self.rqs[cpu.index()].nr_running == 0 {
            // pick_next_task_fair finds nothing: idle_balance (4.4 fair.c) may pull.
            with_smp(self, w, |smp, m| smp.idle_balance(m, cpu));
            balanced = true;
        }
        let mut next = self.pick_next_task(root, cpu, prev, w);
        self.finish_delayed_dequeues(cpu, w);
        // A throttle in the pick took tasks off this CPU's count.
        self.apply_class_resched(w);
        if next.is_none() && !balanced {
            // Only delayed tasks were left (EEVDF, 6.12+): the pick dequeued
            // them, then the CPU goes idle through the balancer as above.
            with_smp(self, w, |smp, m| smp.idle_balance(m, cpu));
            if self.rqs[cpu.index()].nr_running > 0 {
                next = self.pick_next_task(root, cpu, None, w);
                self.finish_delayed_dequeues(cpu, w);
            }
        }
        self.apply_class_resched(w);
        let next_class = next.map(|n| Self::class_of(n, w));
        match next {
            // pick_next_task_idle → set_next_task_idle → update_idle_core (6.x).
            None => with_smp(self, w, |smp, m| smp.update_idle_core(m, cpu)),
            // The picked task heads cfs_tasks (6.x: most recently run first).
            Some(n) if next_class == Some(ClassKind::Fair) => {
                with_smp(self, w, |smp, m| smp.set_next_task_fair(m, cpu, n))
            }
            Some(_) => {}
        }
        if self.classes.fair().hrtick_enabled()
            && next_class == Some(ClassKind::Fair)
            && let Some(n) = next
        {
            self.hrtick_start_fair(cpu, n, w);
        }
        // clear_tsk_need_resched comes after the pick (4.4 __schedule): a
        // resched raised while picking (hrtick_start_fair finding the re-picked
        // task past its slice) is dropped, and the next tick decides.
        self.rqs[cpu.index()].need_resched = false;
        // The balance callback queued by an RT or deadline pick
        // (queue_push_tasks) runs at the end of __schedule: push what
        // cannot run here.
        match next_class {
            Some(ClassKind::Rt) => self.rt_post_schedule(cpu, w),
            Some(ClassKind::Deadline) => self.dl_post_schedule(cpu, w),
            _ => {}
        }
        if next != prev {
            self.context_switch(cpu, prev, next, w)
        } else if next.is_none() && std::mem::take(&mut self.rqs[cpu.index()].in_stopper) {
            // The stopper is done and nothing is left: the idle loop starts
            // (the switch from the stopper to idle, which the model does
            // not record: it already shows the CPU idle since the stopper).
            self.idle_entry(cpu, w);
            None
        } else if let Some(t) = next
            && w.tasks[t.index()].at_step_boundary()
        {
            // Re-picked while stopped between steps (after a wake or yield): go on.
            Some(t)
        } else {
            None
        }
    }

    /// `__pick_next_task` (core.c) along the class chain: the next task of
    /// the highest class that has one; `None` runs the idle task.
    fn pick_next_task(&mut self, root: CfsRqId, cpu: CpuId, prev: Option<TaskId>, w: &World) -> Option<TaskId> {
        let prev = prev.map(|p| (Self::class_of(p, w), se_of(p)));
        // The fast path of 4.4 core.c pick_next_task (`prev->sched_class ==
        // &fair_sched_class && rq->nr_running == rq->cfs.h_nr_running`) and
        // 6.18 __pick_next_task (5959-5978, prev not above fair): every
        // counted task fair, so pick_next_task_fair directly. An idle prev
        // takes it here too: 4.4's slow path would ask the empty stop, DL and
        // RT classes first, which pick nothing and change nothing. 6.18 does
        // not count a queued fair server in nr_running, so skips past it; 6.12
        // counts it (a queued server takes the slow path), which the class
        // chain's walk keeps.
        let fair_only = (!self.fair_server || w.spec.kernel.rules().rt.fast_path_skips_server)
            && prev.is_none_or(|p| p.0 == ClassKind::Fair)
            && self.rqs[cpu.index()].nr_running == self.classes.fair_internals().cpu_signals(cpu).h_nr_queued;
        self.classes.pick_next_task(root, cpu, prev, w.now().ns(), fair_only).map(|(_, se)| TaskId(se.0))
    }

    /// `__schedule`: prev is no longer TASK_RUNNING: `deactivate_task(DEQUEUE_SLEEP)`.
    fn deactivate_prev(&mut self, cpu: CpuId, p: TaskId, w: &mut World) {
        match Self::class_of(p, w) {
            ClassKind::Rt => return self.deactivate_rt(cpu, p, w),
            ClassKind::Deadline => return self.deactivate_dl(cpu, p, w),
            ClassKind::Stop => return self.deactivate_stop(cpu, p, w),
            _ => {}
        }
        let exiting = w.tasks[p.index()].state == TaskState::Exited;
        let se = se_of(p);
        // A task that just ran is never below a throttled queue (its
        // levels have a curr, which check_enqueue_throttle skips), so the
        // dequeue reaches the root and the CPU's count drops by one.
        debug_assert!(!self.classes.fair().throttled(se), "a sleeper below a throttled queue");
        let dequeued = self.classes.fair_mut().dequeue_task(se, DEQUEUE_SLEEP);
        if dequeued {
            self.cfs_tasks.remove(cpu, p);
            self.sub_nr_running(cpu, w);
        } else if !exiting {
            // Delayed (6.12+): still counted, no longer runnable.
            self.note_runnable(cpu, w);
        } else {
            // A dying task does not stay delayed (6.12+ task_dead_fair
            // finishes the dequeue); the others stay queued until picked or woken.
            self.classes.fair_mut().dequeue_task(se, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
            self.classes.fair_mut().clear_delayed_done();
            self.cfs_tasks.remove(cpu, p);
            self.sub_nr_running(cpu, w);
        }
        if exiting {
            self.classes.fair_mut().task_dead(se); // task_dead_fair
        }
        self.apply_class_resched(w);
    }

    /// `sched_fork` + `wake_up_new_task` (4.4 core.c) for a scenario task.
    /// No parent is modelled: the task is forked on the first CPU it may
    /// use (`sched_fork` → `__set_task_cpu(p, smp_processor_id())`) by a
    /// parent sitting at that queue's `min_vruntime`, then placed by
    /// `select_task_rq(SD_BALANCE_FORK)`.
    pub fn wake_up_new_task(&mut self, task: TaskId, w: &mut World) {
        let parent_cpu = w.tasks[task.index()].affinity.iter().next().expect("validated affinity is never empty");
        match Self::class_of(task, w) {
            ClassKind::Rt => return self.wake_up_new_rt_task(task, parent_cpu, w),
            ClassKind::Deadline => return self.wake_dl(task, parent_cpu, parent_cpu, true, w),
            ClassKind::Stop => return self.wake_stop(task, None, true, w),
            _ => {}
        }
        let se = se_of(task);
        let group = w.tasks[task.index()].group;
        // sched_fork: task_fork_fair runs on the parent's queue.
        let fair = self.classes.fair_mut();
        fair.set_task_rq(se, group, parent_cpu);
        let q = fair.cfs_rq_of(se);
        fair.task_fork(q, se);
        let current = self.rqs[parent_cpu.index()].curr;
        let cpu = self.select_task_rq(task, parent_cpu, PlaceKind::Fork, parent_cpu, current, w).cpu;
        if cpu != parent_cpu {
            // set_task_cpu → migrate_task_rq_fair (4.4 removes the new task's
            // never-attached average from the parent's queue: fixed in 4.6 by
            // 0905f04eb21f; 6.x's __set_task_cpu does not call it, and its
            // migrate_task_rq leaves a never-attached task alone), then
            // set_task_rq; the vruntime is relative.
            self.classes.fair_mut().migrate_task_rq(se, false);
            self.classes.fair_mut().set_task_rq(se, group, cpu);
            self.note_migration(task, parent_cpu, cpu, MigrateCause::Fork, parent_cpu, w);
        }
        // 6.x: the new task's util from its queue's, once its CPU is chosen.
        self.classes.fair_mut().post_init_entity_util_avg(se);
        let flags = self.classes.fair().new_task_enqueue_flags();
        let counted = self.activate_task(cpu, task, flags, w);
        Self::start_waiting(task, cpu, counted, true, w);
        // enqueue_task_fair ends with hrtick_update, before check_preempt_curr.
        self.hrtick_update(cpu, w);
        let preempt = self.check_preempt_curr(cpu, task, WF_FORK, w);
        // The parent forks on the first CPU the child may use (see above).
        self.record_wakeup(cpu, task, preempt, true, [parent_cpu, parent_cpu], w);
    }

    /// `try_to_wake_up` (4.4 core.c) for a blocked task, run on `waker`'s
    /// CPU (a task's `wake` step), else on the task's own last CPU (its
    /// timer, an arrival, an I/O completion). `sync`: `WF_SYNC`, the waker
    /// is about to sleep (`wake = ..., sync = true`).
    pub fn try_to_wake_up(&mut self, task: TaskId, waker: Option<CpuId>, sync: bool, w: &mut World) {
        let t = &w.tasks[task.index()];
        debug_assert!(matches!(t.state, TaskState::Blocked(_)), "waking a task that is not blocked");
        let prev_cpu = t.cpu;
        let waker_cpu = waker.unwrap_or(prev_cpu);
        match t.policy.class() {
            ClassKind::Rt => return self.try_to_wake_up_rt(task, waker_cpu, prev_cpu, w),
            ClassKind::Deadline => return self.wake_dl(task, prev_cpu, waker_cpu, false, w),
            ClassKind::Stop => return self.wake_stop(task, Some(waker_cpu), false, w),
            _ => {}
        }
        if self.classes.fair().sched_delayed(se_of(task)) {
            // ttwu_runnable (6.12+ core.c): still queued by DELAY_DEQUEUE on
            // its CPU; requeued in place (ENQUEUE_DELAYED), no CPU selection.
            self.classes.fair_mut().enqueue_task(se_of(task), ENQUEUE_DELAYED);
            self.note_runnable(prev_cpu, w);
            self.apply_class_resched(w);
            self.ttwu_runnable_on(prev_cpu, task, [waker_cpu, prev_cpu], w);
            return;
        }
        if self.classes.fair().on_rq(se_of(task)) {
            // Blocked in this instant but not yet dequeued by its CPU's
            // schedule(): `ttwu_remote` (4.4 core.c) just makes it running again.
            w.tasks[task.index()].state = TaskState::Running;
            self.classes.fair_mut().set_wakeup_verdict(WakeupVerdict::NotChecked);
            self.record_wakeup(prev_cpu, task, false, false, [waker_cpu, prev_cpu], w);
            return;
        }
        let se = se_of(task);
        // task_waking_fair: relative to the old queue; ENQUEUE_WAKING rebases
        // it. record_wakee (4.4 here; 6.x in select_task_rq_fair): `current`
        // is what runs where the wake-up runs.
        self.classes.fair_mut().task_waking(se);
        let current = self.rqs[waker_cpu.index()].curr;
        let (jiffies, hz) = (w.clock.jiffies, u64::from(w.spec.hz));
        self.smp_mut().task_waking(jiffies, hz, current, waker_cpu, task);
        let Placement { cpu, cause } = self.select_task_rq(task, prev_cpu, PlaceKind::Wake { sync }, waker_cpu, current, w);
        if cpu != prev_cpu {
            // set_task_cpu → migrate_task_rq_fair, then set_task_rq.
            self.classes.fair_mut().migrate_task_rq(se, false);
            self.classes.fair_mut().set_task_rq(se, w.tasks[task.index()].group, cpu);
            self.note_migration(task, prev_cpu, cpu, cause, waker_cpu, w);
        }
        self.activate_task(cpu, task, ENQUEUE_WAKEUP | ENQUEUE_WAKING, w);
        // ttwu_do_wakeup: the CPU's idle period ends (avg_idle).
        let now = w.now().ns();
        self.smp_mut().ttwu_do_wakeup(now, cpu);
        w.tasks[task.index()].cpu = cpu;
        self.ttwu_runnable_on(cpu, task, [waker_cpu, prev_cpu], w);
    }

    /// The end of every wake-up, once the task is queued on `cpu`: it is
    /// runnable and waiting, the HRTICK is updated (`enqueue_task_fair`
    /// ends with `hrtick_update`), `check_preempt_curr` runs, the machine's
    /// wake-up latency applies, and the `sched_wakeup` record is written.
    /// `cpus`: the waker's CPU and the task's previous one.
    fn ttwu_runnable_on(&mut self, cpu: CpuId, task: TaskId, cpus: [CpuId; 2], w: &mut World) {
        let throttled = self.classes.fair().throttled(se_of(task));
        let now = w.now();
        let t = &mut w.tasks[task.index()];
        t.state = TaskState::Runnable;
        t.waiting = Some((now, if throttled { WaitKind::Throttled } else { WaitKind::Wakeup }));
        self.hrtick_update(cpu, w);
        let resched_before = self.rqs[cpu.index()].need_resched;
        let preempt = self.check_preempt_curr(cpu, task, 0, w);
        self.wakeup_noise(cpu, task, resched_before, w);
        self.record_wakeup(cpu, task, preempt, false, cpus, w);
    }

    /// Machine noise (`machine.wakeup_latency`): when this wake-up made its
    /// CPU reschedule (idle exit or preemption), the switch waits for the
    /// sampled latency (timer and IPI delivery, idle exit, VM exits). The
    /// task's delay includes it; the recorder keeps the noise share apart.
    ///
    /// With `[machine.noise]` the component is chosen by the CPU's state when
    /// the wake-up arrived: idle (`rq->curr` the idle task) → `wakeup_idle`
    /// (6.18 `do_idle` leaves the idle loop: cpuidle exit, then
    /// `schedule_idle`); a running task → `wakeup_busy` (the resched IPI or
    /// timer interrupt returns through `irqentry_exit` → `schedule`), each
    /// from its own stream.
    pub(super) fn wakeup_noise(&mut self, cpu: CpuId, task: TaskId, resched_before: bool, w: &mut World) {
        if let Some(n) = w.spec.machine.noise.as_ref() {
            let curr = self.rqs[cpu.index()].curr;
            // The background share of this wait starts now (a background
            // task running here has run `now - sched_in_at` of its slot).
            let running_bg =
                curr.filter(|c| w.tasks[c.index()].machine_background).map_or(0, |c| w.now().since(w.tasks[c.index()].sched_in_at));
            w.tasks[task.index()].bg_snap = Some((cpu, self.bg_ran[cpu.index()] + running_bg));
            w.tasks[task.index()].noise_busy = curr.is_some();
            let (dist, rng) = if curr.is_none() {
                (n.wakeup_idle.as_ref(), &mut self.noise_idle_rng)
            } else {
                (n.wakeup_busy.as_ref(), &mut self.noise_busy_rng)
            };
            if let Some(dist) = dist {
                let rq = &self.rqs[cpu.index()];
                if resched_before || !rq.need_resched || rq.resched_deferred {
                    return;
                }
                let ns = dist.sample(rng).min(crate::scenario::validate::WAKEUP_LATENCY_MAX_NS);
                self.defer_resched(cpu, task, ns, w);
            }
            return;
        }
        let Some(dist) = w.spec.machine.wakeup_latency.as_ref() else { return };
        let rq = &self.rqs[cpu.index()];
        if resched_before || !rq.need_resched || rq.resched_deferred {
            return;
        }
        let ns = dist.sample(&mut self.noise_rng).min(crate::scenario::validate::WAKEUP_LATENCY_MAX_NS);
        self.defer_resched(cpu, task, ns, w);
    }

    /// The wake-up's resched on `cpu` arrives `ns` later (`Event::Resume`).
    fn defer_resched(&mut self, cpu: CpuId, task: TaskId, ns: u64, w: &mut World) {
        if ns == 0 {
            return;
        }
        let rq = &mut self.rqs[cpu.index()];
        rq.need_resched = false; // the settle queue skips it
        rq.resched_deferred = true;
        w.tasks[task.index()].noise_ns = ns;
        w.queue.push(w.clock.now.after(ns), Event::Resume { cpu });
    }

    /// `select_task_rq` (4.4 core.c): the class chooses only for a task
    /// allowed on more than one CPU (`nr_cpus_allowed > 1`); a choice
    /// outside the mask falls back (`select_fallback_rq`: the previous CPU
    /// if allowed, else the first allowed CPU).
    fn select_task_rq(
        &mut self,
        task: TaskId,
        prev_cpu: CpuId,
        kind: PlaceKind,
        this_cpu: CpuId,
        current: Option<TaskId>,
        w: &mut World,
    ) -> Placement {
        let cause = if kind == PlaceKind::Fork { MigrateCause::Fork } else { MigrateCause::IdleSibling };
        let mut placed = Placement { cpu: prev_cpu, cause };
        if w.tasks[task.index()].nr_cpus_allowed > 1 {
            placed = with_smp(self, w, |smp, m| smp.select_task_rq_fair(m, task, prev_cpu, kind, this_cpu, current));
        }
        let allowed = &w.tasks[task.index()].affinity;
        if !allowed.contains(placed.cpu) {
            placed = Placement { cpu: prev_cpu, cause };
            if !allowed.contains(prev_cpu) {
                placed.cpu = allowed.iter().next().expect("validated affinity is never empty");
            }
        }
        placed
    }
}
