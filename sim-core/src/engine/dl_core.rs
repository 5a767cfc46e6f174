//! core.c's paths for a deadline task (`p->sched_class == &dl_sched_class`)
//! and the engine's side of the 6.12+ fair server: what starts and stops
//! it (the CPU's fair tasks), what it is charged (fair and idle time), and
//! the class's outboxes (`rq->nr_running` changes, reschedules, timers);
//! and deadline.c's SMP half over the engine's run queues, global EDF as
//! the kernel approximates it: `select_task_rq_dl`, `task_woken_dl`,
//! `push_dl_tasks` (after a pick, a wake-up, a replenishment) and
//! `pull_dl_task` (before a pick, when a deadline task left the CPU).

use super::rq::Core;
use super::world::World;
use crate::event::Event;
use crate::ids::{CpuId, TaskId};
use crate::metrics::recorder::WaitKind;
use crate::sched::ClassKind;
use crate::sched::balance::MigrateCause;
use crate::sched::deadline::{TimerOutcome, dl_time_before};
use crate::sched::ClassState;
use crate::sched::model::WakeupVerdict;
use crate::task::TaskState;
use crate::time::SimTime;

/// Bound on one `push_dl_tasks` pass (the kernel loops while a push
/// succeeds; each moves one queued task away, so a pass moves at most the
/// CPU's queued tasks).
const PUSH_MAX: usize = 4096;

impl Core {
    /// Applies the deadline class's outboxes.
    #[inline(never)]
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
        let cpupri_higher = w.spec.kernel.rules().rt.dl_cpupri_higher;
        for (cpu, queued) in self.classes.dl.take_busy() {
            if cpupri_higher {
                self.classes.rt.set_dl_queued(cpu, queued);
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
        // No charge first: neither timer calls update_curr (6.18
        // deadline.c:1155-1201 dl_server_timer; dl_task_timer only
        // update_rq_clock), so the server's runtime is as of its last charge.
        let outcome = self.classes.dl.timer(entity, w.now().ns());
        self.apply_dl(w);
        let cpu = match outcome {
            TimerOutcome::Nothing => return,
            TimerOutcome::Server(cpu) => cpu,
            TimerOutcome::Task(task) => {
                // dl_task_timer (4.4 deadline.c:725-763; 6.18 1216-1297):
                // a deadline curr is preempted by the EDF rule, any other
                // at once.
                let cpu = self.classes.dl.task_cpu(task);
                match self.rqs[cpu.index()].curr {
                    Some(curr) if Self::class_of(curr, w) == ClassKind::Deadline => {
                        if self.classes.dl.preempts(task, curr) {
                            self.resched_curr(cpu);
                        }
                    }
                    _ => self.resched_curr(cpu),
                }
                cpu
            }
        };
        // __push_dl_task: one push_dl_task if the CPU has a pushable task.
        if self.classes.dl.overloaded(cpu) {
            self.push_dl_task(cpu, w);
        }
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

    /// `dequeue_task_dl` at a block (4.4 deadline.c:1128-1132, 6.6
    /// 1752-1755: `update_curr_dl`, then `__dequeue_task_dl`). The charge's
    /// outbox is applied before the dequeue, in the kernel's order: a
    /// throttle whose next period is already due (`start_dl_timer` fails)
    /// dequeues and requeues the task (`dec_dl_tasks`, then `inc_dl_tasks`
    /// via `enqueue_task_dl(ENQUEUE_REPLENISH)`), and only then does the
    /// block take it off `nr_running`; the other order drove a CPU's count
    /// below zero for a moment (a CPU whose one task was that one).
    pub(super) fn deactivate_dl(&mut self, cpu: CpuId, task: TaskId, w: &mut World) {
        if self.classes.dl.curr(self.classes.dl.task_cpu(task)) == Some(task) {
            self.update_curr_dl(self.classes.dl.task_cpu(task), w);
        }
        if self.classes.dl.dequeue_task(task) {
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
    pub(super) fn wake_dl(&mut self, task: TaskId, prev_cpu: CpuId, waker_cpu: CpuId, new_task: bool, w: &mut World) {
        if !new_task && self.classes.dl.on_rq(task) {
            w.tasks[task.index()].state = TaskState::Running; // ttwu_remote
            self.classes.fair_mut().set_wakeup_verdict(WakeupVerdict::NotChecked);
            self.record_wakeup(prev_cpu, task, false, false, [waker_cpu, prev_cpu], w);
            return;
        }
        // select_task_rq_dl runs for wake-ups only (4.4 SD_BALANCE_WAKE,
        // 6.x WF_TTWU): a new task starts where it was forked.
        let cpu = if new_task { prev_cpu } else { self.select_task_rq_dl(task, prev_cpu, waker_cpu, w) };
        if cpu != prev_cpu {
            self.note_migration(task, prev_cpu, cpu, MigrateCause::DlFindLater, waker_cpu, w);
        }
        let counted = self.activate_dl(cpu, task, w);
        if !new_task {
            self.smp_mut().ttwu_do_wakeup(w.now().ns(), cpu);
        }
        Self::start_waiting(task, cpu, counted, new_task, w);
        let resched_before = self.rqs[cpu.index()].need_resched;
        let preempt = self.check_preempt_curr(cpu, task, 0, w);
        self.wakeup_noise(cpu, task, resched_before, w);
        self.record_wakeup(cpu, task, preempt, new_task, [waker_cpu, prev_cpu], w);
        self.task_woken_dl(cpu, task, w);
    }

    /// `select_task_rq_dl` (4.4 deadline.c:1172-1211; 6.6 1817-1864; 6.18
    /// 2169-): if a deadline task runs on the task's CPU that is pinned or
    /// that the task would not preempt, and the task may move,
    /// `find_later_rq`'s CPU, when it has no deadline task or a later
    /// earliest deadline; else the task's CPU.
    fn select_task_rq_dl(&mut self, task: TaskId, prev_cpu: CpuId, this_cpu: CpuId, w: &World) -> CpuId {
        let dl = &self.classes.dl;
        let select = self.rqs[prev_cpu.index()].curr.is_some_and(|c| {
            Self::class_of(c, w) == ClassKind::Deadline && (!dl.migratable(c) || !dl.preempts(task, c))
        }) && dl.migratable(task);
        if !select {
            return prev_cpu;
        }
        let how = w.spec.kernel.rules().rt.later_in_domain;
        let classes = &mut self.classes;
        match classes.dl.find_later_rq(task, this_cpu, &mut classes.rt.spread, how) {
            Some(target) if classes.dl.is_earliest_on(task, target) => target,
            _ => prev_cpu,
        }
    }

    /// `task_woken_dl` (4.4 deadline.c:1791-1801; 6.18 2835-): a woken
    /// task that did not get the CPU, behind a deadline curr that is
    /// pinned or that it does not preempt, is pushed at once.
    fn task_woken_dl(&mut self, cpu: CpuId, task: TaskId, w: &mut World) {
        let rq = &self.rqs[cpu.index()];
        if rq.curr == Some(task) || rq.need_resched || !self.classes.dl.migratable(task) {
            return;
        }
        let Some(curr) = rq.curr.filter(|&c| Self::class_of(c, w) == ClassKind::Deadline) else { return };
        if !self.classes.dl.migratable(curr) || !self.classes.dl.preempts(task, curr) {
            self.push_dl_tasks(cpu, w);
        }
    }

    /// `push_dl_tasks`: `push_dl_task` until it fails.
    pub(super) fn push_dl_tasks(&mut self, cpu: CpuId, w: &mut World) {
        for _ in 0..PUSH_MAX {
            if !self.push_dl_task(cpu, w) {
                break;
            }
        }
    }

    /// `push_dl_task` (4.4 deadline.c:1622-1704; 6.6 2288-2371; 6.18
    /// 2661-): the earliest pushable task of `cpu`; if it beats a deadline
    /// curr that could move, reschedule here instead; else move it to
    /// `find_later_rq`'s CPU (`find_lock_later_rq`: not this CPU, and one
    /// where it would be the earliest), which reschedules.
    fn push_dl_task(&mut self, cpu: CpuId, w: &mut World) -> bool {
        let Some(next) = self.classes.dl.earliest_pushable(cpu, None) else { return false };
        if let Some(curr) = self.rqs[cpu.index()].curr.filter(|&c| Self::class_of(c, w) == ClassKind::Deadline)
            && self.classes.dl.preempts(next, curr)
            && self.classes.dl.migratable(curr)
        {
            self.resched_curr(cpu);
            return false;
        }
        // find_lock_later_rq: DL_MAX_TRIES attempts, which without the
        // kernel's races all give the same answer (4.4), or stop at the
        // first CPU where the task is not the earliest (6.x).
        let how = w.spec.kernel.rules().rt.later_in_domain;
        let classes = &mut self.classes;
        let Some(target) = classes.dl.find_later_rq(next, cpu, &mut classes.rt.spread, how) else { return false };
        if target == cpu || !self.classes.dl.is_earliest_on(next, target) {
            return false;
        }
        self.move_queued_dl(next, cpu, target, MigrateCause::DlPush, cpu, w);
        self.resched_curr(target);
        true
    }

    /// `pull_dl_task` (4.4 deadline.c:1706-1785; 6.18 2741-2829): from each
    /// other overloaded CPU of the root domain (in CPU order), its earliest
    /// pushable task that may run here, if that is earlier than anything
    /// here and than what was already pulled, and not earlier than its
    /// own CPU's running deadline task (which would then run it soon).
    pub(super) fn pull_dl_task(&mut self, this_cpu: CpuId, w: &mut World) {
        let span = self.classes.dl.rd_span(this_cpu).clone();
        let mut dmin: Option<u64> = None;
        let mut resched = false;
        for src in span.iter() {
            if src == this_cpu || !self.classes.dl.overloaded(src) {
                continue;
            }
            let dl = &self.classes.dl;
            let p = dl.earliest_pushable(src, Some(this_cpu));
            // The racy early skip: this CPU's earliest before src's next
            // (the earliest pushable, 6.x `earliest_dl.next`).
            if let (Some(here), Some(next)) = (dl.earliest(this_cpu), dl.earliest_pushable(src, None))
                && dl_time_before(here, dl.deadline(next))
            {
                continue;
            }
            let Some(p) = p else { continue };
            let d = dl.deadline(p);
            if dmin.is_some_and(|m| !dl_time_before(d, m)) || !dl.is_earliest_on(p, this_cpu) {
                continue;
            }
            let src_curr_dl = self.rqs[src.index()]
                .curr
                .filter(|&c| Self::class_of(c, w) == ClassKind::Deadline)
                .map(|c| self.classes.dl.deadline(c));
            if src_curr_dl.is_some_and(|cd| dl_time_before(d, cd)) {
                continue;
            }
            self.move_queued_dl(p, src, this_cpu, MigrateCause::DlPull, this_cpu, w);
            dmin = Some(d);
            resched = true;
        }
        if resched {
            self.resched_curr(this_cpu);
        }
    }

    /// The deadline half of `__schedule` before the pick: 4.4
    /// `pick_next_task_dl` pulls when prev was a deadline task; 6.x
    /// `balance_dl` only when it also left the `dl_rq` (blocked, throttled).
    pub(super) fn dl_balance(&mut self, cpu: CpuId, prev: Option<TaskId>, w: &mut World) {
        let Some(p) = prev else { return };
        if Self::class_of(p, w) != ClassKind::Deadline {
            return;
        }
        if self.classes.dl.queued(p) && !w.spec.kernel.rules().rt.dl_pull_if_prev_queued {
            return;
        }
        self.pull_dl_task(cpu, w);
    }

    /// After `__schedule` picked a deadline task: `queue_push_tasks` (4.4
    /// `pick_next_task_dl`; 6.x `set_next_task_dl`), run as the balance
    /// callback at its end.
    pub(super) fn dl_post_schedule(&mut self, cpu: CpuId, w: &mut World) {
        if self.classes.dl.overloaded(cpu) {
            self.push_dl_tasks(cpu, w);
        }
    }

    /// Moves a queued, not running deadline task from `from` to `to`
    /// (`deactivate_task`, `set_task_cpu`, `activate_task`).
    fn move_queued_dl(&mut self, task: TaskId, from: CpuId, to: CpuId, cause: MigrateCause, by: CpuId, w: &mut World) {
        self.sub_nr_running(from, w);
        self.note_migration(task, from, to, cause, by, w);
        self.classes.dl.migrate_queued(task, to);
        self.add_nr_running(to, w);
        self.apply_dl(w);
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
}
