//! core.c's paths for a stop task (`p->sched_class == &stop_sched_class`,
//! stop_task.c of 4.4.155 and 6.18.2): it wakes on the one CPU it is bound
//! to (`select_task_rq_stop` returns `task_cpu(p)`), counts in
//! `rq->nr_running` while queued (`enqueue_task_stop`/`dequeue_task_stop`
//! only `add_nr_running`/`sub_nr_running`), and preempts whatever runs
//! there at once (core.c `wakeup_preempt`: a class above curr's
//! reschedules; `Core::check_preempt_curr` applies it). The class itself is
//! `sched/stop.rs`.

use super::rq::Core;
use super::world::World;
use crate::ids::{CpuId, TaskId};
use crate::sched::ClassState;
use crate::sched::model::WakeupVerdict;
use crate::task::TaskState;

impl Core {
    /// `wake_up_new_task` and `try_to_wake_up` for a stop task.
    pub(super) fn wake_stop(&mut self, task: TaskId, waker_cpu: Option<CpuId>, new_task: bool, w: &mut World) {
        // select_task_rq_stop: "stop tasks as never migrate".
        let cpu = self.classes.stop.task_cpu(task);
        let waker_cpu = waker_cpu.unwrap_or(cpu);
        if !new_task && self.classes.stop.on_rq(task) {
            w.tasks[task.index()].state = TaskState::Running; // ttwu_remote
            self.classes.fair_mut().set_wakeup_verdict(WakeupVerdict::NotChecked);
            self.record_wakeup(cpu, task, false, false, [waker_cpu, cpu], w);
            return;
        }
        self.classes.stop.enqueue_task(task);
        self.add_nr_running(cpu, w);
        if !new_task {
            self.smp_mut().ttwu_do_wakeup(w.now().ns(), cpu);
        }
        Self::start_waiting(task, cpu, true, new_task, w);
        let resched_before = self.rqs[cpu.index()].need_resched;
        let flags = if new_task { crate::sched::fair::WF_FORK } else { 0 };
        let preempt = self.check_preempt_curr(cpu, task, flags, w);
        self.wakeup_noise(cpu, task, resched_before, w);
        self.record_wakeup(cpu, task, preempt, new_task, [waker_cpu, cpu], w);
    }

    /// `dequeue_task_stop` at a block or exit.
    pub(super) fn deactivate_stop(&mut self, cpu: CpuId, task: TaskId, w: &mut World) {
        self.classes.stop.dequeue_task(task);
        self.sub_nr_running(cpu, w);
    }
}
