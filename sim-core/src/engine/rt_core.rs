//! core.c's paths for a task whose class is RT (`p->sched_class ==
//! &rt_sched_class`), and rt.c's SMP half over the engine's run queues:
//! `select_task_rq_rt`, `task_woken_rt`, `push_rt_tasks` and the pull (as
//! RT_PUSH_IPI runs it: the overloaded CPUs push), and the throttle outbox.
//! The class itself (`sched/rt.rs`) keeps the priority lists and the
//! bandwidth; what it hands back changes `rq->nr_running` here.

use super::rq::Core;
use super::world::World;
use crate::event::Event;
use crate::ids::{CpuId, TaskId};
use crate::metrics::history::RecordKind;
use crate::metrics::recorder::WaitKind;
use crate::sched::ClassKind;
use crate::sched::ClassState;
use crate::sched::balance::MigrateCause;
use crate::sched::model::WakeupVerdict;
use crate::task::TaskState;
use crate::time::SimTime;

/// `RT_MAX_TRIES`-like bound on one push pass: each push moves one task, so
/// a pass moves at most the CPU's queued tasks; this caps a pathological one.
const PUSH_MAX: usize = 4096;

impl Core {
    /// `p->sched_class` of `task`.
    #[inline]
    pub(super) fn class_of(task: TaskId, w: &World) -> ClassKind {
        w.tasks[task.index()].policy.class()
    }

    /// Applies what the RT class left in its outboxes: reschedules,
    /// throttles and unthrottles (`rq->nr_running` changes, and the waiting
    /// RT tasks' delays become throttled ones), and its period timer.
    #[inline(never)]
    pub(super) fn apply_rt(&mut self, w: &mut World) {
        if !self.classes.rt.has_outbox() {
            return;
        }
        for e in self.classes.rt.take_throttle_events() {
            self.change_nr_running(e.cpu, e.nr_delta, w);
            if e.throttled {
                for &t in self.classes.rt.queue(e.cpu) {
                    if let Some((_, kind)) = w.tasks[t.index()].waiting.as_mut() {
                        *kind = WaitKind::Throttled;
                    }
                }
            } else if self.rqs[e.cpu.index()].curr.is_none() {
                self.resched_curr(e.cpu);
            }
            self.record_throttle(e.cpu, RecordKind::RtThrottle { throttled: e.throttled }, w);
        }
        while let Some(cpu) = self.classes.rt.pop_resched() {
            if self.rqs[cpu.index()].curr.is_some() || self.rqs[cpu.index()].nr_running > 0 {
                self.resched_curr(cpu);
            }
        }
        if let Some((at, generation)) = self.classes.rt.take_timer_request() {
            w.queue.push(SimTime(at), Event::RtPeriodTimer { generation });
        }
    }

    /// The RT period timer fires.
    pub(super) fn rt_period_timer(&mut self, w: &mut World) {
        let now = w.now().ns();
        self.classes.rt.period_timer(now);
        self.apply_rt(w);
    }

    /// `enqueue_task` for an RT task on `cpu` (tail, or head): counted in
    /// `nr_running` unless its queue is throttled. Returns whether it was.
    pub(super) fn activate_rt(&mut self, cpu: CpuId, task: TaskId, head: bool, w: &mut World) -> bool {
        self.classes.rt.set_task_cpu(task, cpu);
        let counted = self.classes.rt.enqueue_task(task, head, w.now().ns());
        if counted {
            self.add_nr_running(cpu, w);
        }
        self.apply_rt(w);
        counted
    }

    /// `dequeue_task` for an RT task.
    pub(super) fn deactivate_rt(&mut self, cpu: CpuId, task: TaskId, w: &mut World) {
        if self.classes.rt.dequeue_task(task, w.now().ns()) {
            self.sub_nr_running(cpu, w);
        }
        self.apply_rt(w);
    }

    /// `rq->curr` where rt.c's SMP half asks `rt_task(curr)` (prio below
    /// `MAX_RT_PRIO`): the RT task running (or just picked), else a stop
    /// task running, which is one to rt.c (prio 0, `sched_set_stop_task`'s
    /// FIFO 99) and bound to its CPU, else, with `dl_as_rt`, a deadline task
    /// running (prio −1: `dl_task(curr) ||` in `task_woken_rt`, and 4.4/6.6's
    /// `rt_task()`, which 6.12+ `rt_prio` narrows to RT). Its prio, and
    /// whether it is pinned (`nr_cpus_allowed < 2`).
    fn rt_curr(&self, cpu: CpuId, w: &World, dl_as_rt: bool) -> Option<(i32, bool)> {
        if let Some(c) = self.classes.rt.curr(cpu) {
            return Some((self.classes.rt.prio(c), w.tasks[c.index()].nr_cpus_allowed < 2));
        }
        let c = self.rqs[cpu.index()].curr?;
        match Self::class_of(c, w) {
            ClassKind::Stop if w.tasks[c.index()].state == TaskState::Running => {
                Some((w.tasks[c.index()].policy.kernel_prio(0, 0), true))
            }
            ClassKind::Deadline if dl_as_rt => Some((-1, w.tasks[c.index()].nr_cpus_allowed < 2)),
            _ => None,
        }
    }

    /// `select_task_rq_rt` (4.4 rt.c:1309-1361; 6.6 rt.c:1600-1668): stay
    /// on the task's CPU unless an RT task of equal or higher priority (or
    /// a pinned one) runs there; then `find_lowest_rq`, if that CPU's best
    /// queued priority is below the task's. For wake-ups and forks alike.
    pub(super) fn select_task_rq_rt(&mut self, task: TaskId, prev_cpu: CpuId, this_cpu: CpuId, w: &World) -> CpuId {
        let prio = self.classes.rt.prio(task);
        let dl_as_rt = w.spec.kernel.rules().rt.rt_task_includes_dl;
        let curr_blocks = self.rt_curr(prev_cpu, w, dl_as_rt).is_some_and(|(c_prio, pinned)| pinned || c_prio <= prio);
        if !curr_blocks {
            return prev_cpu;
        }
        let allowed = w.tasks[task.index()].affinity.clone();
        match self.classes.rt.find_lowest_rq(task, &allowed, this_cpu) {
            Some(target) if prio < self.classes.rt.highest_prio(target) => target,
            _ => prev_cpu,
        }
    }

    /// `wakeup_preempt` when both tasks are RT: `wakeup_preempt_rt` (4.4
    /// `check_preempt_curr_rt`, rt.c:1395-1418): a strictly higher priority
    /// preempts; an equal one only through `check_preempt_equal_prio`.
    pub(super) fn rt_wakeup_preempt(&mut self, cpu: CpuId, curr: TaskId, woken: TaskId, w: &World) -> WakeupVerdict {
        let (pc, pw) = (self.classes.rt.prio(curr), self.classes.rt.prio(woken));
        if pw < pc {
            return WakeupVerdict::RtHigherPrio;
        }
        if pw == pc && !self.rqs[cpu.index()].need_resched && self.check_preempt_equal_prio(curr, woken, w) {
            return WakeupVerdict::RtEqualPrioRequeue;
        }
        WakeupVerdict::RtNotHigher
    }

    /// `check_preempt_equal_prio` (4.4 rt.c:1363-1388): if curr could run
    /// elsewhere and the woken task could not, the woken task is requeued
    /// at the head to run first (curr is then pushed away).
    fn check_preempt_equal_prio(&mut self, curr: TaskId, woken: TaskId, w: &World) -> bool {
        if w.tasks[curr.index()].nr_cpus_allowed == 1 {
            return false;
        }
        // cpupri_find(…, NULL) (4.4 rt.c:1370, 1377): no CPU is chosen.
        if !self.classes.rt.cpupri_find(curr, &w.tasks[curr.index()].affinity) {
            return false;
        }
        if w.tasks[woken.index()].nr_cpus_allowed != 1
            && self.classes.rt.cpupri_find(woken, &w.tasks[woken.index()].affinity)
        {
            return false;
        }
        self.classes.rt.requeue_head(woken);
        true
    }

    /// `task_woken_rt` (4.4 rt.c:2046-2055): a woken RT task that did not
    /// preempt, behind an RT (or pinned) curr of equal or higher priority,
    /// is pushed at once.
    pub(super) fn task_woken_rt(&mut self, cpu: CpuId, task: TaskId, w: &mut World) {
        let rq = &self.rqs[cpu.index()];
        if rq.curr == Some(task) || rq.need_resched || rq.resched_deferred || w.tasks[task.index()].nr_cpus_allowed < 2 {
            return;
        }
        let prio = self.classes.rt.prio(task);
        // `dl_task(rq->curr) || rt_task(rq->curr)` (all four versions).
        let Some((c_prio, pinned)) = self.rt_curr(cpu, w, true) else { return };
        if pinned || c_prio <= prio {
            self.push_rt_tasks(cpu, w);
        }
    }

    /// `push_rt_tasks`: `push_rt_task` until it fails.
    pub(super) fn push_rt_tasks(&mut self, cpu: CpuId, w: &mut World) {
        for _ in 0..PUSH_MAX {
            if !self.push_rt_task(cpu, w) {
                break;
            }
        }
    }

    /// `push_rt_task` (4.4 rt.c:1721-1802; 6.6 rt.c:2056-2163): the best
    /// pushable task of `cpu`; if it beats the running task, reschedule
    /// here instead; else move it to `find_lowest_rq`'s CPU if that CPU's
    /// best queued priority is lower (at the tail there, which reschedules).
    fn push_rt_task(&mut self, cpu: CpuId, w: &mut World) -> bool {
        if !self.classes.rt.overloaded(cpu) {
            return false;
        }
        let Some(next) = self.classes.rt.highest_pushable(cpu, |_| true) else { return false };
        // The task running (or just picked: the balance callback runs
        // after the switch, 4.4 `balance_callback`); a deadline curr
        // (prio −1) is never beaten, so the task is pushed instead.
        let curr_prio = self.rt_curr(cpu, w, true).map_or(crate::sched::rt::PRIO_NONE + 1, |(p, _)| p);
        if self.classes.rt.prio(next) < curr_prio {
            self.resched_curr(cpu);
            return false;
        }
        let allowed = w.tasks[next.index()].affinity.clone();
        let Some(target) = self.classes.rt.find_lowest_rq(next, &allowed, cpu) else { return false };
        if target == cpu || self.classes.rt.highest_prio(target) <= self.classes.rt.prio(next) {
            return false;
        }
        self.move_queued_rt(next, cpu, target, cpu, w);
        true
    }

    /// The pull (`pull_rt_task`, 4.4 rt.c:1968-2044) as RT_PUSH_IPI runs it
    /// (default on in all four versions): `cpu` lowered its RT priority, so
    /// every other overloaded CPU of its root domain, in CPU order, pushes
    /// its tasks to wherever `find_lowest_rq` says (`rto_push_irq_work_func`),
    /// not necessarily to `cpu`.
    pub(super) fn pull_rt_task(&mut self, cpu: CpuId, w: &mut World) {
        let span = self.classes.rt.rd_span(cpu).clone();
        for src in span.iter() {
            if src != cpu && self.classes.rt.overloaded(src) {
                self.push_rt_tasks(src, w);
            }
        }
    }

    /// Moves a queued, not running RT task from `from` to `to`
    /// (`deactivate_task`, `set_task_cpu`, `activate_task`, `resched_curr(to)`).
    fn move_queued_rt(&mut self, task: TaskId, from: CpuId, to: CpuId, by: CpuId, w: &mut World) {
        self.deactivate_rt(from, task, w);
        self.note_migration(task, from, to, MigrateCause::RtPush, by, w);
        self.activate_rt(to, task, false, w);
        self.resched_curr(to);
    }

    /// `wake_up_new_task` for an RT task: forked on the first CPU it may
    /// use, placed by `select_task_rq_rt`, queued at the tail.
    pub(super) fn wake_up_new_rt_task(&mut self, task: TaskId, parent_cpu: CpuId, w: &mut World) {
        self.classes.rt.set_task_cpu(task, parent_cpu);
        let mut cpu = parent_cpu;
        if w.tasks[task.index()].nr_cpus_allowed > 1 {
            cpu = self.select_task_rq_rt(task, parent_cpu, parent_cpu, w);
        }
        if cpu != parent_cpu {
            self.note_migration(task, parent_cpu, cpu, MigrateCause::RtFindLowest, parent_cpu, w);
        }
        let counted = self.activate_rt(cpu, task, false, w);
        Self::start_waiting(task, cpu, counted, true, w);
        let preempt = self.check_preempt_curr(cpu, task, crate::sched::fair::WF_FORK, w);
        self.record_wakeup(cpu, task, preempt, true, [parent_cpu, parent_cpu], w);
        self.task_woken_rt(cpu, task, w);
    }

    /// `try_to_wake_up` for a blocked RT task, on `waker_cpu`.
    pub(super) fn try_to_wake_up_rt(&mut self, task: TaskId, waker_cpu: CpuId, prev_cpu: CpuId, w: &mut World) {
        if self.classes.rt.on_rq(task) {
            // ttwu_remote: blocked in this instant, not yet dequeued.
            w.tasks[task.index()].state = TaskState::Running;
            self.classes.fair_mut().set_wakeup_verdict(WakeupVerdict::NotChecked);
            self.record_wakeup(prev_cpu, task, false, false, [waker_cpu, prev_cpu], w);
            return;
        }
        let mut cpu = prev_cpu;
        if w.tasks[task.index()].nr_cpus_allowed > 1 {
            cpu = self.select_task_rq_rt(task, prev_cpu, waker_cpu, w);
        }
        if !w.tasks[task.index()].affinity.contains(cpu) {
            cpu = w.tasks[task.index()].affinity.iter().next().expect("validated affinity is never empty");
        }
        if cpu != prev_cpu {
            self.note_migration(task, prev_cpu, cpu, MigrateCause::RtFindLowest, waker_cpu, w);
        }
        let counted = self.activate_rt(cpu, task, false, w);
        self.smp_mut().ttwu_do_wakeup(w.now().ns(), cpu);
        Self::start_waiting(task, cpu, counted, false, w);
        let resched_before = self.rqs[cpu.index()].need_resched;
        let preempt = self.check_preempt_curr(cpu, task, 0, w);
        self.wakeup_noise(cpu, task, resched_before, w);
        self.record_wakeup(cpu, task, preempt, false, [waker_cpu, prev_cpu], w);
        self.task_woken_rt(cpu, task, w);
    }

    /// The RT half of `__schedule`'s pick: before it, a CPU whose RT
    /// priority dropped (its RT task blocked) pulls (`need_pull_rt_task`;
    /// 4.4 in `pick_next_task_rt`, 6.x `balance_rt`). With RT_PUSH_IPI (on
    /// in all four versions) that only queues the push chain's irq work
    /// (`tell_cpu_to_push`): this `__schedule` goes on (a newidle balance,
    /// the pick) and the overloaded CPUs push at the next event, at the
    /// same instant.
    pub(super) fn rt_balance(&mut self, cpu: CpuId, prev: Option<TaskId>, w: &mut World) {
        let Some(p) = prev else { return };
        if Self::class_of(p, w) != ClassKind::Rt || self.classes.rt.on_rq(p) {
            return;
        }
        let span = self.classes.rt.rd_span(cpu);
        let overloaded = span.iter().any(|c| c != cpu && self.classes.rt.overloaded(c));
        if overloaded && self.classes.rt.highest_prio(cpu) > self.classes.rt.prio(p) {
            w.queue.push(w.clock.now, Event::RtPushIpi { cpu });
        }
    }

    /// After `__schedule` picked an RT task: `queue_push_tasks` (4.4
    /// `pick_next_task_rt`; 6.x `set_next_task_rt`), run as the balance
    /// callback: push what this CPU cannot run now.
    pub(super) fn rt_post_schedule(&mut self, cpu: CpuId, w: &mut World) {
        if self.classes.rt.overloaded(cpu) {
            self.push_rt_tasks(cpu, w);
        }
    }
}
