//! core.c's paths for a deadline task (`p->sched_class == &dl_sched_class`)
//! and the engine's side of the 6.12+ fair server: what starts and stops
//! it (the CPU's fair tasks), what it is charged (fair and idle time), and
//! the class's outboxes (`rq->nr_running` changes, reschedules, timers).
//! A deadline task's root domain is one CPU (validation), so it is never
//! placed elsewhere: no `select_task_rq_dl`, push or pull.

use super::rq::Core;
use super::world::World;
use crate::event::Event;
use crate::ids::{CpuId, TaskId};
use crate::metrics::recorder::WaitKind;
use crate::sched::ClassKind;
use crate::sched::ClassState;
use crate::sched::model::WakeupVerdict;
use crate::task::TaskState;
use crate::time::SimTime;

impl Core {
    /// Applies the deadline class's outboxes.
    pub(super) fn apply_dl(&mut self, w: &mut World) {
        if !self.classes.dl.has_outbox() {
            return;
        }
        for (cpu, task, delta) in self.classes.dl.take_counted() {
            if delta > 0 {
                self.add_nr_running(cpu, w);
            } else {
                self.sub_nr_running(cpu, w);
                // Throttled: it now waits for its next period.
                if let Some((_, kind)) = w.tasks[task.index()].waiting.as_mut() {
                    *kind = WaitKind::Throttled;
                }
            }
        }
        let charged = self.classes.dl.take_charged();
        let to_rt_time = w.spec.kernel.rules().rt.dl_time_in_rt_time || w.spec.rt.group_sched;
        for (cpu, delta) in charged {
            // 4.4 update_curr_dl (deadline.c:861): sched_rt_avg_update.
            self.classes.rt.pressure.sched_rt_avg_update(cpu.index(), w.now().ns(), delta);
            if to_rt_time {
                // 4.4/6.6 update_curr_dl (6.12+ under RT_GROUP_SCHED): rt_time += delta.
                self.classes.rt.account_other(cpu, delta);
            }
        }
        for (entity, at, generation) in self.classes.dl.take_timers() {
            w.queue.push(SimTime(at), Event::DlTimer { entity, generation });
        }
        while let Some(cpu) = self.classes.dl.pop_resched() {
            if self.rqs[cpu.index()].curr.is_some() || self.rqs[cpu.index()].nr_running > 0 {
                self.resched_curr(cpu);
            }
        }
    }

    /// A deadline entity's replenishment (or the server's defer) timer fires.
    pub(super) fn dl_timer(&mut self, entity: u32, w: &mut World) {
        self.charge_fair_server_all(w);
        self.classes.dl.timer(entity, w.now().ns());
        self.apply_dl(w);
    }

    /// `enqueue_task_dl` on `cpu`; counted unless throttled.
    fn activate_dl(&mut self, cpu: CpuId, task: TaskId, w: &mut World) -> bool {
        self.classes.dl.set_task_cpu(task, cpu);
        let counted = self.classes.dl.enqueue_task(task, w.now().ns());
        if counted {
            self.add_nr_running(cpu, w);
        }
        self.apply_dl(w);
        counted
    }

    /// `dequeue_task_dl` at a block.
    pub(super) fn deactivate_dl(&mut self, cpu: CpuId, task: TaskId, w: &mut World) {
        let now = w.now().ns();
        if self.classes.dl.dequeue_task(task, now) {
            self.sub_nr_running(cpu, w);
        }
        self.apply_dl(w);
    }

    /// `update_curr_dl` for the running deadline task (a tick, a kernel
    /// entry); 4.4 and 6.6 also charge the time to the RT class's `rt_time`.
    pub(super) fn update_curr_dl(&mut self, cpu: CpuId, w: &mut World) {
        self.classes.dl.update_curr(cpu, w.now().ns());
        self.apply_dl(w);
    }

    /// `wake_up_new_task` and `try_to_wake_up` for a deadline task: on its
    /// own CPU (its root domain is that CPU), a new instance if its
    /// deadline passed (`update_dl_entity`), then `wakeup_preempt`.
    pub(super) fn wake_dl(&mut self, task: TaskId, cpu: CpuId, waker_cpu: CpuId, new_task: bool, w: &mut World) {
        if !new_task && self.classes.dl.on_rq(task) {
            w.tasks[task.index()].state = TaskState::Running; // ttwu_remote
            self.classes.fair_mut().set_wakeup_verdict(WakeupVerdict::NotChecked);
            self.record_wakeup(cpu, task, false, false, [waker_cpu, cpu], w);
            return;
        }
        let counted = self.activate_dl(cpu, task, w);
        if !new_task {
            self.smp_mut().ttwu_do_wakeup(w.now().ns(), cpu);
        }
        Self::start_waiting(task, cpu, counted, new_task, w);
        let resched_before = self.rqs[cpu.index()].need_resched;
        let preempt = self.check_preempt_curr(cpu, task, 0, w);
        self.wakeup_noise(cpu, task, resched_before, w);
        self.record_wakeup(cpu, task, preempt, new_task, [waker_cpu, cpu], w);
    }

    /// 6.12 `enqueue_task_fair`/`dequeue_entities` (6.18: enqueue only):
    /// the server starts when the CPU's fair tasks go from none to some,
    /// and (6.12) stops when they are gone. Called at each change of the
    /// CPU's `nr_running`.
    pub(super) fn fair_server_sync(&mut self, cpu: CpuId, w: &mut World) {
        let fair = self.classes.fair_internals().cpu_signals(cpu).h_nr_queued;
        let now = w.now().ns();
        // update_curr (fair time) or dl_server_update_idle_time (an idle
        // CPU's enqueue) before the start or the stop.
        self.charge_fair_server(cpu, w);
        if fair > 0 {
            self.classes.dl.server_start(cpu, now);
        } else if self.classes.dl.server_stops_on_dequeue() {
            self.classes.dl.server_stop(cpu, now);
        }
        self.apply_dl(w);
    }

    /// The fair server's charge on `cpu` for the time since the last one:
    /// fair time (`update_curr_fair` → `dl_server_update`) or idle time in
    /// defer mode (`dl_server_update_idle_time`).
    pub(super) fn charge_fair_server(&mut self, cpu: CpuId, w: &mut World) {
        if !self.fair_server {
            return;
        }
        let now = w.now().ns();
        let since = std::mem::replace(&mut self.server_clock[cpu.index()], now);
        let delta = now.saturating_sub(since);
        match self.rqs[cpu.index()].curr {
            Some(t) if Self::class_of(t, w) == ClassKind::Fair => self.classes.dl.server_charge(cpu, delta, now),
            None => self.classes.dl.server_idle(cpu, delta),
            Some(_) => {}
        }
        self.apply_dl(w);
    }

    fn charge_fair_server_all(&mut self, w: &mut World) {
        if !self.fair_server {
            return;
        }
        for c in 0..self.rqs.len() {
            self.charge_fair_server(CpuId(c as u16), w);
        }
    }
}
