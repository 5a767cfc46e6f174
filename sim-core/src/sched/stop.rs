//! The stop class (kernel/sched/stop_task.c, 4.4.155 and 6.18.2): one
//! task per CPU, `rq->stop`, set by `sched_set_stop_task` (core.c) for the
//! CPU's stopper thread (migration/N). It is the highest class: queued, it
//! is picked before any other (`pick_task_stop`; 4.4 `pick_next_task_stop`)
//! and preempts any other class at once on wake-up (core.c `wakeup_preempt`
//! across classes); nothing preempts it (`wakeup_preempt_stop` is empty). It
//! never migrates (`select_task_rq_stop` returns `task_cpu`), is never
//! balanced, throttled or charged to another class's budget
//! (`update_curr_stop` is empty; `put_prev_task_stop` only accounts its own
//! run time), has no tick work (`task_tick_stop` is empty) and never
//! yields (`yield_task_stop` is `BUG()`, so validation refuses a `yield`
//! step). `enqueue_task_stop`/`dequeue_task_stop` only change
//! `rq->nr_running`, which the engine does.

use crate::ids::{CpuId, TaskId};

/// The stop tasks of a machine: `rq->stop` of each CPU and whether it is
/// queued (`task_on_rq_queued(stop)`).
#[derive(Clone, Debug)]
pub struct StopClass {
    /// `rq->stop` and its queued flag, per CPU.
    rqs: Vec<Option<(TaskId, bool)>>,
    /// The CPU each stop task is bound to, per task (`None`: not a stop task).
    cpu_of: Vec<Option<CpuId>>,
}

impl StopClass {
    pub fn new(ntasks: usize, ncpus: usize) -> StopClass {
        StopClass { rqs: vec![None; ncpus], cpu_of: vec![None; ntasks] }
    }

    /// `sched_set_stop_task(cpu, task)`: validation allows one per CPU.
    pub fn set_stop_task(&mut self, cpu: CpuId, task: TaskId) {
        debug_assert!(self.rqs[cpu.index()].is_none(), "two stop tasks on CPU {cpu}");
        self.rqs[cpu.index()] = Some((task, false));
        self.cpu_of[task.index()] = Some(cpu);
    }

    /// Whether the machine has any stop task (a flag the hot paths test first).
    pub fn any(&self) -> bool {
        self.rqs.iter().any(Option::is_some)
    }

    /// The CPU the stop task is bound to (`select_task_rq_stop`: `task_cpu(p)`).
    pub fn task_cpu(&self, task: TaskId) -> CpuId {
        self.cpu_of[task.index()].expect("a stop task is bound to its CPU")
    }

    /// `enqueue_task_stop`: the caller adds it to `rq->nr_running`.
    pub fn enqueue_task(&mut self, task: TaskId) {
        let cpu = self.task_cpu(task);
        let slot = self.rqs[cpu.index()].as_mut().expect("rq->stop is set");
        debug_assert!(slot.0 == task && !slot.1, "enqueueing a queued stop task");
        slot.1 = true;
    }

    /// `dequeue_task_stop`: the caller takes it off `rq->nr_running`.
    pub fn dequeue_task(&mut self, task: TaskId) {
        let cpu = self.task_cpu(task);
        let slot = self.rqs[cpu.index()].as_mut().expect("rq->stop is set");
        debug_assert!(slot.0 == task && slot.1, "dequeueing a stop task not queued");
        slot.1 = false;
    }

    /// `task_on_rq_queued(p)` for a stop task.
    pub fn on_rq(&self, task: TaskId) -> bool {
        self.cpu_of[task.index()].is_some_and(|c| self.rqs[c.index()].is_some_and(|(_, q)| q))
    }

    /// `sched_stop_runnable(rq)` (6.x sched.h: `rq->stop && task_on_rq_queued(rq->stop)`).
    #[inline]
    pub fn has_queued(&self, cpu: CpuId) -> bool {
        self.rqs.get(cpu.index()).is_some_and(|s| s.is_some_and(|(_, q)| q))
    }

    /// `pick_task_stop` (6.18; 4.4 `pick_next_task_stop`): `rq->stop` if queued.
    pub fn pick_task(&self, cpu: CpuId) -> Option<TaskId> {
        self.rqs[cpu.index()].and_then(|(t, q)| q.then_some(t))
    }

    /// The stop tasks queued on `cpu`: 0 or 1.
    pub fn nr_running(&self, cpu: CpuId) -> u32 {
        u32::from(self.has_queued(cpu))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One stop task per CPU; queued, it is what `pick_task_stop` returns.
    #[test]
    fn rq_stop_is_picked_only_while_queued() {
        let mut s = StopClass::new(3, 2);
        assert!(!s.any());
        s.set_stop_task(CpuId(1), TaskId(2));
        assert!(s.any());
        assert_eq!(s.task_cpu(TaskId(2)), CpuId(1));
        assert_eq!(s.pick_task(CpuId(1)), None);
        s.enqueue_task(TaskId(2));
        assert!(s.on_rq(TaskId(2)) && s.has_queued(CpuId(1)) && !s.has_queued(CpuId(0)));
        assert_eq!(s.pick_task(CpuId(1)), Some(TaskId(2)));
        assert_eq!(s.pick_task(CpuId(0)), None);
        assert_eq!(s.nr_running(CpuId(1)), 1);
        s.dequeue_task(TaskId(2));
        assert!(!s.on_rq(TaskId(2)));
        assert_eq!(s.pick_task(CpuId(1)), None);
        assert!(!s.on_rq(TaskId(0)));
    }
}
