//! The per-CPU scheduler state (`struct rq` of every CPU, with the fair
//! class and the SMP policy) and the run-queue primitives core.c builds its
//! paths from: `resched_curr`, `activate_task`, `add_nr_running`,
//! `check_preempt_curr`, `context_switch`, the HRTICK, the tick's arming,
//! and the records of wake-ups and migrations.
//!
//! The generic paths that also consult the SMP policy (schedule, wake-ups,
//! the tick) sit above, in `sched_core.rs`; the `Machine` the policy sees,
//! in `machine.rs`. Nothing here calls either.

use super::effects::Effect;
use super::world::World;
use crate::event::{Event, EventQueue};
use crate::ids::{CfsRqId, CpuId, EntityId, TaskId};
use crate::metrics::history::{EevdfState, PrevState, RecordKind, SchedRecord};
use crate::metrics::recorder::WaitKind;
use crate::rng::SimRng;
use crate::sched::balance::MigrateCause;
use crate::sched::balance::Smp;
use crate::sched::cfs_tasks::CfsTasks;
use crate::sched::fair::Cfs;
use crate::sched::model::WakeupVerdict;
use crate::sched::{ClassChain, ClassKind, ClassState, SchedClass};
use crate::task::TaskState;
use crate::tick::TickCalendar;
use crate::time::SimTime;
use std::collections::VecDeque;

/// `hrtick_start` (4.4 core.c): "Don't schedule slices shorter than 10000ns".
const HRTICK_MIN_NS: u64 = 10_000;

/// A task's scheduling entity: task entities come first, as `EntityId(task)`.
pub(super) fn se_of(task: TaskId) -> EntityId {
    EntityId(task.0)
}

/// Per-CPU state outside CFS (`struct rq`).
#[derive(Clone, Debug)]
pub(super) struct Rq {
    pub curr: Option<TaskId>,
    /// The root CFS run queue (`rq->cfs`).
    pub root: CfsRqId,
    /// Runnable tasks, the running one included (`rq->nr_running`).
    pub nr_running: u32,
    pub need_resched: bool,
    pub tick_armed: bool,
    /// A wake-up's resched is held back by the machine's wake-up latency
    /// (`machine.wakeup_latency`): a `Resume` event delivers it.
    pub resched_deferred: bool,
    pub hrtick_armed: bool,
    pub hrtick_generation: u32,
    pub idle_since: SimTime,
    /// The balancer's stopper runs here (`stopper_preempt`): `curr` is
    /// `None`, but the CPU runs a task (`cpu_stopper_thread`), not the idle
    /// loop, until the `__schedule` after it. No NO_HZ idle entry or exit
    /// happens for that window.
    pub in_stopper: bool,
}

impl Rq {
    pub fn new(root: CfsRqId) -> Rq {
        Rq {
            curr: None,
            root,
            nr_running: 0,
            need_resched: false,
            tick_armed: false,
            hrtick_armed: false,
            hrtick_generation: 0,
            idle_since: SimTime::ZERO,
            resched_deferred: false,
            in_stopper: false,
        }
    }
}

/// The scheduler core's state: every CPU's run queue, the scheduling
/// classes, the SMP policy, and the preemption points pending in this event.
#[derive(Clone, Debug)]
pub(super) struct Core {
    /// The class chain (fair the only class), reached through `SchedClass`
    /// and `ClassState` (`classes.fair()`) by core.c's paths.
    pub classes: ClassChain<Cfs>,
    pub rqs: Vec<Rq>,
    /// `rq->cfs_tasks` of every CPU.
    pub cfs_tasks: CfsTasks,
    /// Placement and balancing (4.4 fair.c's SMP half) and its state.
    /// (Taken out while it runs: see `machine::with_smp`.)
    /// Boxed so taking it out moves a pointer, not the whole state.
    pub smp: Option<Smp>,
    /// CPUs flagged `need_resched` during this event, for `settle`.
    pub resched: VecDeque<CpuId>,
    /// Exact event elision (`tick.rs`); off only through `set_elision`.
    pub elision: bool,
    /// With elision, every CPU's next tick (not in the event queue).
    pub ticks: TickCalendar,
    /// `machine.wakeup_latency` samples (its own stream: noise never shifts
    /// the tasks' draws).
    pub noise_rng: SimRng,
    /// `[machine.noise]` streams, one per component, so adding one never
    /// shifts another's draws (and a scenario without the section draws
    /// nothing): `machine/noise/wakeup_idle`, `…/wakeup_busy`,
    /// `…/kernel_per_activation`.
    pub noise_idle_rng: SimRng,
    pub noise_busy_rng: SimRng,
    pub kernel_rng: SimRng,
    /// Per CPU, the run time of machine-background tasks so far (added at
    /// their switch-out), for the background share of a wait.
    pub bg_ran: Vec<u64>,
    /// The 6.12+ fair server runs: a 6.12+ model with it enabled, and a
    /// scenario with an RT or deadline task (`build::dl_class`). Without
    /// one the server never acts: in defer mode it is queued only when fair
    /// tasks were runnable and did not run for its zero-laxity time, which
    /// only a higher class can cause; so fair-only runs skip its
    /// bookkeeping. Per CPU, when it was last charged.
    pub fair_server: bool,
    pub server_clock: Vec<u64>,
}

impl Core {
    pub fn resched_curr(&mut self, cpu: CpuId) {
        let rq = &mut self.rqs[cpu.index()];
        if !rq.need_resched {
            rq.need_resched = true;
            self.resched.push_back(cpu);
        }
    }

    /// Applies the reschedules the fair class asked for from inside its last
    /// call (EEVDF's `update_curr` at a slice end, `resched_curr_lazy`).
    /// Also drains the bandwidth outboxes: timers to arm, and throttles and
    /// unthrottles, which change the CPU's `nr_running` and the cause of its
    /// waiting tasks' delays.
    #[inline]
    pub fn apply_class_resched(&mut self, w: &mut World) {
        if self.classes.rt.has_outbox() {
            self.apply_rt(w);
        }
        if self.classes.dl.has_outbox() {
            self.apply_dl(w);
        }
        if !self.classes.fair_internals().resched.is_empty() {
            self.apply_fair_resched();
        }
        if self.classes.fair().bandwidth_used() {
            self.apply_bandwidth(w);
        }
    }

    #[inline(never)]
    fn apply_fair_resched(&mut self) {
        while let Some(cpu) = self.classes.fair_mut().pop_resched() {
            if self.rqs[cpu.index()].curr.is_some() {
                self.resched_curr(cpu);
            }
        }
    }

    #[inline(never)]
    fn apply_bandwidth(&mut self, w: &mut World) {
        push_bandwidth_timers(&mut w.queue, self.classes.fair_mut().bandwidth_timers());
        for e in self.classes.fair_mut().take_throttle_events() {
            self.change_nr_running(e.cpu, e.nr_delta, w);
            if e.throttled {
                // The tasks waiting below the throttled queue now wait for runtime.
                // cfs_tasks holds the CPU's queued tasks (bounded by its length).
                let mut i = 0;
                while let Some(task) = self.cfs_tasks.at(e.cpu, i) {
                    i += 1;
                    let t = &mut w.tasks[task.index()];
                    if t.state == TaskState::Runnable
                        && let Some((_, kind)) = t.waiting.as_mut()
                        && self.classes.fair().group_is_under(t.group, e.group)
                    {
                        *kind = WaitKind::Throttled;
                    }
                }
            } else if self.rqs[e.cpu.index()].curr.is_none()
                && self.classes.fair().nr_running(self.rqs[e.cpu.index()].root) > 0
            {
                // unthrottle_cfs_rq (4.4 and 6.x): `rq->curr == rq->idle &&
                // rq->cfs.nr_running`: the root queue's entities, which in
                // 6.12+ include a delayed-dequeue one that no task count shows;
                // the pick then finishes its dequeue.
                self.resched_curr(e.cpu);
            }
            self.record_throttle(e.cpu, RecordKind::Throttle { group: e.group, throttled: e.throttled }, w);
        }
    }

    /// `rq->nr_running` of `cpu` changes by `delta` (a throttle or
    /// unthrottle), one task at a time as `add_nr_running`/`sub_nr_running`.
    pub(super) fn change_nr_running(&mut self, cpu: CpuId, delta: i32, w: &mut World) {
        for _ in 0..delta.unsigned_abs() {
            if delta > 0 {
                self.add_nr_running(cpu, w);
            } else {
                self.sub_nr_running(cpu, w);
            }
        }
    }

    /// The history record of a throttle or unthrottle on `cpu` (CFS
    /// bandwidth or RT), at the root queue's `min_vruntime`.
    pub(super) fn record_throttle(&mut self, cpu: CpuId, kind: RecordKind, w: &mut World) {
        let rq = &self.rqs[cpu.index()];
        let root_min_vruntime = self.classes.fair().min_vruntime(rq.root);
        w.recorder.push_record(SchedRecord {
            at: w.now(),
            cpu,
            min_vruntime: root_min_vruntime,
            root_min_vruntime,
            nr_running: rq.nr_running,
            kind,
        });
    }

    /// A task just queued on `cpu` (forked or woken) is runnable and starts
    /// waiting: for the CPU, or for runtime when it joined a throttled
    /// queue (`counted` false). A new task's last switch-out is now.
    pub(super) fn start_waiting(task: TaskId, cpu: CpuId, counted: bool, new_task: bool, w: &mut World) {
        let now = w.now();
        let t = &mut w.tasks[task.index()];
        t.cpu = cpu;
        t.state = TaskState::Runnable;
        t.waiting = Some((now, if counted { WaitKind::Wakeup } else { WaitKind::Throttled }));
        if new_task {
            t.sched_out_at = now;
        }
    }

    /// Tasks whose delayed dequeue the pick on `cpu` completed (6.12+
    /// `pick_next_entity` → `dequeue_entities(DEQUEUE_DELAYED)` → `__block_task`)
    /// leave the CPU's run-queue counts.
    #[inline]
    pub fn finish_delayed_dequeues(&mut self, cpu: CpuId, w: &mut World) {
        while let Some(se) = self.classes.fair_mut().pop_delayed_done() {
            let t = TaskId(se.0);
            debug_assert_eq!(w.tasks[t.index()].cpu, cpu);
            self.cfs_tasks.remove(cpu, t);
            self.sub_nr_running(cpu, w);
        }
    }

    pub fn arm_tick(&mut self, cpu: CpuId, w: &mut World) {
        let rq = &mut self.rqs[cpu.index()];
        if !rq.tick_armed {
            rq.tick_armed = true;
            // Ticks fall at tick_offset + k·TICK_NSEC on every CPU
            // (sched_skew_tick=0); an idle CPU's tick is stopped (NO_HZ idle)
            // and restarts at the next one.
            let (now, off, tick) = (w.now().ns(), w.clock.tick_offset_ns, w.clock.tick_ns);
            let next = if now < off { off } else { ((now - off) / tick + 1) * tick + off };
            if self.elision {
                let key = w.queue.reserve_key(SimTime(next));
                self.ticks.arm(cpu, key);
            } else {
                w.queue.push(SimTime(next), Event::Tick { cpu });
            }
        }
    }

    /// The HRTICK timer (`hrtick` in 4.4 core.c): `task_tick(rq, curr, 1)`.
    pub fn hrtick(&mut self, cpu: CpuId, w: &mut World) {
        self.rqs[cpu.index()].hrtick_armed = false;
        let Some(curr) = self.rqs[cpu.index()].curr else { return };
        if Self::class_of(curr, w) != ClassKind::Fair {
            return; // hrtick → task_tick of another class: armed only for fair here
        }
        if self.classes.fair_mut().task_tick(se_of(curr), true, false) {
            self.resched_curr(cpu);
        }
        self.apply_class_resched(w);
    }

    /// `hrtick_start_fair` (4.4 fair.c) with `hrtick_start`'s 10 µs minimum.
    pub fn hrtick_start_fair(&mut self, cpu: CpuId, task: TaskId, w: &mut World) {
        let Some(delta) = self.classes.fair_mut().hrtick_delay(se_of(task)) else { return };
        if delta < 0 {
            if self.rqs[cpu.index()].curr == Some(task) {
                self.resched_curr(cpu);
            }
            return;
        }
        let rq = &mut self.rqs[cpu.index()];
        rq.hrtick_generation = rq.hrtick_generation.wrapping_add(1);
        rq.hrtick_armed = true;
        let generation = rq.hrtick_generation;
        let at = w.now().after((delta as u64).max(HRTICK_MIN_NS));
        w.queue.push(at, Event::HrTick { cpu, generation });
    }

    /// `hrtick_update` (4.4 fair.c), after an enqueue or dequeue on `cpu`.
    #[inline]
    pub fn hrtick_update(&mut self, cpu: CpuId, w: &mut World) {
        if !self.classes.fair().hrtick_enabled() {
            return;
        }
        if let Some(curr) = self.rqs[cpu.index()].curr
            && Self::class_of(curr, w) == ClassKind::Fair
            && self.classes.fair_mut().hrtick_update_wanted(se_of(curr))
        {
            self.hrtick_start_fair(cpu, curr, w);
        }
    }

    /// `context_switch` on `cpu` from `prev` to `next` (either may be idle):
    /// the outgoing task's accounting and the `sched_switch` record, then the
    /// incoming task starts (`switch_in`). Returns the incoming task if it
    /// runs its next steps now (the last thing the switch does).
    pub fn context_switch(
        &mut self,
        cpu: CpuId,
        prev: Option<TaskId>,
        next: Option<TaskId>,
        w: &mut World,
    ) -> Option<TaskId> {
        if self.fair_server {
            self.charge_fair_server(cpu, w);
        }
        let now = w.now();
        w.recorder.count_switch(cpu, now);
        let fair = self.classes.fair();
        // The record's lookups and push only when something keeps it.
        let keep = w.recorder.keeps_records();
        let own_q = next.map_or(self.rqs[cpu.index()].root, |n| fair.cfs_rq_of(se_of(n)));
        let min_vruntime = if keep { fair.min_vruntime(own_q) } else { 0 };
        let mut record = RecordKind::Switch {
            prev: None,
            prev_state: PrevState::Sleeping,
            prev_sched_in: self.rqs[cpu.index()].idle_since,
            prev_wait_ns: 0,
            prev_sch_delay_ns: 0,
            prev_vruntime: 0,
            next,
            next_vruntime: next.filter(|_| keep).map_or(0, |n| fair.vruntime(se_of(n))),
            prev_eevdf: prev.filter(|_| keep).map_or_else(EevdfState::default, |p| self.eevdf_state(p, w)),
            next_eevdf: next.filter(|_| keep).map_or_else(EevdfState::default, |n| self.eevdf_state(n, w)),
        };
        if let Some(p) = prev {
            self.switch_out(cpu, p, &mut record, w);
        }
        if keep {
            let rq = &self.rqs[cpu.index()];
            let (root_min_vruntime, nr_running) = (self.classes.fair().min_vruntime(rq.root), rq.nr_running);
            w.recorder.push_record(SchedRecord { at: now, cpu, min_vruntime, root_min_vruntime, nr_running, kind: record });
        }
        let rq = &mut self.rqs[cpu.index()];
        // Leaving the stopper is not leaving the idle loop.
        let was_idle = rq.curr.is_none() && !rq.in_stopper;
        rq.curr = next;
        let Some(n) = next else {
            rq.idle_since = now;
            if !rq.in_stopper {
                self.idle_entry(cpu, w);
            }
            return None;
        };
        rq.in_stopper = false;
        if was_idle && w.spec.machine.nohz_idle {
            // tick_nohz_idle_exit → update_cpu_load_nohz.
            let jiffies = w.clock.jiffies;
            if self.smp_mut().tick_restarted(jiffies, cpu) {
                // 4.4 __update_cpu_load ends with sched_avg_update (fair.c:4393).
                self.classes.rt.pressure.sched_avg_update(cpu.index(), w.now().ns());
            }
        }
        self.switch_in(cpu, n, w)
    }

    /// The idle loop starts on `cpu` (4.4 idle.c:222 `cpu_idle_loop`, 6.6
    /// idle.c:256-264 `do_idle`): `tick_nohz_idle_enter`, and with nothing
    /// queued the tick stops and the CPU joins `nohz.idle_cpus_mask`
    /// (`nohz_balance_enter_idle`).
    pub(super) fn idle_entry(&mut self, cpu: CpuId, w: &mut World) {
        if w.spec.machine.nohz_idle && self.rqs[cpu.index()].nr_running == 0 {
            self.smp_mut().tick_stopped(cpu);
        }
    }

    /// The outgoing task `p` of `context_switch`: its burst's progress and
    /// run time are accounted, and a preempted one starts waiting.
    fn switch_out(&mut self, cpu: CpuId, p: TaskId, record: &mut RecordKind, w: &mut World) {
        let now = w.now();
        let vruntime = self.classes.fair().vruntime(se_of(p));
        let class = Self::class_of(p, w);
        let t = &mut w.tasks[p.index()];
        if t.in_burst {
            let done = now.since(t.progress_from);
            t.work_left_ns -= done.min(t.work_left_ns);
        }
        t.burst_generation = t.burst_generation.wrapping_add(1);
        let ran = now.since(t.sched_in_at);
        t.runtime_ns += ran;
        if t.machine_background {
            self.bg_ran[cpu.index()] += ran;
        }
        t.switches += 1;
        t.sched_out_at = now;
        w.recorder.ran(cpu, p, t.sched_in_at, now);
        let prev_state = match t.state {
            TaskState::Running => {
                t.state = TaskState::Runnable;
                t.waiting = Some((now, WaitKind::Preempt));
                let throttled = match class {
                    ClassKind::Rt => self.classes.rt.throttled(cpu),
                    ClassKind::Deadline => self.classes.dl.throttled(p),
                    ClassKind::Stop => false, // never throttled
                    _ => self.classes.fair().throttled(se_of(p)),
                };
                if throttled {
                    // Switched out because its queue (or an ancestor's) ran out of quota.
                    t.waiting = Some((now, WaitKind::Throttled));
                }
                PrevState::Preempted
            }
            TaskState::Exited => PrevState::Dead,
            _ => PrevState::Sleeping,
        };
        if let RecordKind::Switch {
            prev: rp,
            prev_state: rs,
            prev_sched_in,
            prev_wait_ns,
            prev_sch_delay_ns,
            prev_vruntime,
            ..
        } = record
        {
            *rp = Some(p);
            *rs = prev_state;
            *prev_sched_in = t.sched_in_at;
            *prev_wait_ns = t.last_wait_ns;
            *prev_sch_delay_ns = t.last_sch_delay_ns;
            *prev_vruntime = vruntime;
        }
    }

    /// The incoming task `n` of `context_switch`: it runs, its wait ends
    /// (delays recorded; the limiters told through `Effect::NoteDelay`), the
    /// tick is armed, and it resumes its burst, or is returned to run its
    /// next steps (the last thing the switch does, after its effects).
    fn switch_in(&mut self, cpu: CpuId, n: TaskId, w: &mut World) -> Option<TaskId> {
        let now = w.now();
        let context_switch_ns = w.spec.context_switch_ns;
        let t = &mut w.tasks[n.index()];
        t.state = TaskState::Running;
        t.last_wait_ns = now.since(t.sched_out_at);
        t.last_sch_delay_ns = 0;
        t.sched_in_at = now;
        t.progress_from = now.after(context_switch_ns);
        if let Some(from) = t.io.stall_from.take() {
            w.recorder.record_task_latency(n, |m| &mut m.io_stall, now.since(from), now);
        }
        let t = &mut w.tasks[n.index()];
        let waited = t.waiting.take();
        if let Some((from, kind)) = waited {
            t.last_sch_delay_ns = now.since(from);
            let noise = std::mem::take(&mut t.noise_ns).min(now.since(from));
            w.recorder.record_delay(n, cpu, from, now, kind);
            if !w.spec.limiters.is_empty() {
                // Only a limiter's adjustment reads the window: applied after
                // the switch, the delay lands where the direct call put it.
                w.emit(Effect::NoteDelay { task: n, ns: now.since(from) });
            }
            if w.spec.machine.wakeup_latency.is_some() && kind == WaitKind::Wakeup {
                w.recorder.record_task_latency(n, |m| &mut m.wakeup_noise, noise, now);
            }
            if w.spec.machine.noise.is_some() && kind == WaitKind::Wakeup {
                self.noise_split(cpu, n, noise, w);
            }
        }
        let mut kernel_ns = 0;
        if let Some(d) = w.spec.machine.noise.as_ref().and_then(|n| n.kernel_per_activation.as_ref())
            && matches!(waited, Some((_, WaitKind::Wakeup)))
            && !w.tasks[n.index()].machine_background
        {
            // (A background thread's measured run lengths already hold its kernel time.)
            // The activation's kernel time, charged to the task as runtime
            // before its next step, like the context-switch cost. 6.18: the
            // return from `schedule()` and the syscall exit of
            // `clock_nanosleep`, then the next syscall's entry (and the timer
            // interrupt): all run in the task's context, and `update_curr`
            // charges sum_exec_runtime from exec_start whatever the mode.
            kernel_ns = d.sample(&mut self.kernel_rng).min(crate::scenario::validate::WAKEUP_LATENCY_MAX_NS);
            let t = &mut w.tasks[n.index()];
            t.progress_from = t.progress_from.after(kernel_ns);
            w.recorder.kernel_charged(n, kernel_ns, now);
        }
        self.arm_tick(cpu, w);
        let t = &mut w.tasks[n.index()];
        if !t.in_burst && context_switch_ns + kernel_ns > 0 {
            // The switch itself costs time before the task's next step runs.
            t.in_burst = true;
            t.work_left_ns = 0;
        }
        if t.in_burst {
            let at = t.progress_from.after(t.work_left_ns);
            let generation = t.burst_generation;
            t.burst_end_at = at;
            w.queue.push(at, Event::BurstEnd { task: n, generation });
            let from = t.progress_from;
            next_kernel_entry(n, from, w);
            None
        } else {
            Some(n)
        }
    }

    /// `[machine.noise]`'s split of the wake-up wait `n` just ended on `cpu`:
    /// the latency drawn (per component) and the background threads' run
    /// time on this CPU since the wake-up (if it stayed on this CPU).
    fn noise_split(&mut self, cpu: CpuId, n: TaskId, noise: u64, w: &mut World) {
        let now = w.now();
        let t = &mut w.tasks[n.index()];
        let busy = std::mem::take(&mut t.noise_busy);
        let snap = t.bg_snap.take();
        if busy {
            w.recorder.record_task_latency(n, |m| &mut m.noise_busy, noise, now);
        } else {
            w.recorder.record_task_latency(n, |m| &mut m.noise_idle, noise, now);
        }
        let bg = match snap {
            Some((c, at)) if c == cpu => self.bg_ran[cpu.index()].saturating_sub(at),
            _ => 0,
        };
        w.recorder.record_task_latency(n, |m| &mut m.noise_background, bg, now);
    }

    /// `task`'s EEVDF deadline and lag in its queue (6.x models), for the
    /// history records; zero under 4.4, where they decide nothing.
    pub fn eevdf_state(&self, task: TaskId, w: &World) -> EevdfState {
        if !w.spec.kernel.picks_by_lag_and_deadline() {
            return EevdfState::default();
        }
        let (deadline, lag) = self.classes.fair().deadline_lag(se_of(task));
        EevdfState { deadline: deadline.unwrap_or(EevdfState::NOT_QUEUED), lag }
    }

    /// `check_preempt_curr` (4.4 core.c): an idle CPU always reschedules; a
    /// fair one asks `check_preempt_wakeup`. Returns whether a running task was
    /// preempted (rescheduling an idle CPU is not a preemption).
    pub fn check_preempt_curr(&mut self, cpu: CpuId, woken: TaskId, wake_flags: u32, w: &mut World) -> bool {
        let rq = &self.rqs[cpu.index()];
        let preempt = match rq.curr {
            None => {
                self.resched_curr(cpu);
                self.classes.fair_mut().set_wakeup_verdict(WakeupVerdict::IdleCpu);
                return false;
            }
            Some(curr) => match (Self::class_of(curr, w), Self::class_of(woken, w)) {
                (ClassKind::Fair, ClassKind::Fair) => {
                    let need_resched = rq.need_resched;
                    let p = self.classes.fair_mut().wakeup_preempt(se_of(curr), se_of(woken), wake_flags, need_resched);
                    self.apply_class_resched(w);
                    p
                }
                (ClassKind::Deadline, ClassKind::Deadline) => {
                    // wakeup_preempt_dl: a strictly earlier deadline
                    // (dl_entity_preempt), or at an equal one with no
                    // resched pending check_preempt_equal_dl (SMP).
                    let verdict = if self.classes.dl.preempts(woken, curr) {
                        WakeupVerdict::DlEarlier
                    } else if !rq.need_resched && self.classes.dl.equal_deadline_goes_first(woken, curr) {
                        WakeupVerdict::DlEqualGoesFirst
                    } else {
                        WakeupVerdict::DlNotEarlier
                    };
                    let p = verdict.preempts();
                    self.classes.fair_mut().set_wakeup_verdict(verdict);
                    p
                }
                (ClassKind::Rt, ClassKind::Rt) => {
                    let verdict = self.rt_wakeup_preempt(cpu, curr, woken, w);
                    self.classes.fair_mut().set_wakeup_verdict(verdict);
                    verdict.preempts()
                }
                // core.c wakeup_preempt across classes: a class above curr's
                // reschedules at once (sched_class_above); one below waits.
                (cc, wc) => {
                    let above = ClassKind::ORDER.iter().position(|&k| k == wc) < ClassKind::ORDER.iter().position(|&k| k == cc);
                    let verdict = if above { WakeupVerdict::HigherClass } else { WakeupVerdict::LowerClass };
                    self.classes.fair_mut().set_wakeup_verdict(verdict);
                    above
                }
            },
        };
        if preempt {
            self.resched_curr(cpu);
        }
        preempt
    }

    /// The `sched_wakeup`/`sched_wakeup_new` record of `task` queued on
    /// `cpu`; `waker_cpu` is where `try_to_wake_up` ran (see `RecordKind::Wakeup`).
    pub fn record_wakeup(
        &mut self,
        cpu: CpuId,
        task: TaskId,
        preempt: bool,
        new_task: bool,
        cpus: [CpuId; 2],
        w: &mut World,
    ) {
        let [waker_cpu, prev_cpu] = cpus;
        let now = w.now();
        let fair = self.classes.fair();
        if Self::class_of(task, w) == ClassKind::Fair {
            fair.for_each_parent(se_of(task), |tg, weight| {
                if w.recorder.counts(now) {
                    w.recorder.groups[tg.index()].sample(weight);
                }
            });
        }
        if !w.recorder.keeps_records() {
            return;
        }
        let (verdict, group_level) = fair.wakeup_verdict();
        let rec = SchedRecord {
            at: now,
            cpu,
            min_vruntime: fair.min_vruntime(fair.cfs_rq_of(se_of(task))),
            root_min_vruntime: fair.min_vruntime(self.rqs[cpu.index()].root),
            nr_running: self.rqs[cpu.index()].nr_running,
            kind: RecordKind::Wakeup {
                task,
                vruntime: fair.vruntime(se_of(task)),
                preempt,
                new_task,
                waker_cpu,
                prev_cpu,
                verdict,
                group_level,
                eevdf: self.eevdf_state(task, w),
            },
        };
        w.recorder.push_record(rec);
    }

    /// `activate_task` (4.4 core.c): enqueue in the class, put the task on
    /// the CPU's `cfs_tasks`, and count it in `nr_running` unless it joined a
    /// throttled hierarchy. Returns whether it was counted.
    pub fn activate_task(&mut self, cpu: CpuId, task: TaskId, flags: u32, w: &mut World) -> bool {
        let counted = self.classes.fair_mut().enqueue_task(se_of(task), flags);
        self.apply_class_resched(w);
        self.cfs_tasks.push_head(cpu, task);
        if counted {
            self.add_nr_running(cpu, w);
        }
        counted
    }

    /// `add_nr_running` (4.4 sched.h), with the metrics told.
    pub fn add_nr_running(&mut self, cpu: CpuId, w: &mut World) {
        let rq = &mut self.rqs[cpu.index()];
        rq.nr_running += 1;
        let nr = rq.nr_running;
        // While the policy runs (a pull), it notes the count itself.
        if let Some(smp) = self.smp.as_mut() {
            smp.add_nr_running(cpu, nr - 1, nr);
        }
        self.note_runnable(cpu, w);
        if self.fair_server {
            self.fair_server_sync(cpu, w);
        }
    }

    /// `sub_nr_running` (4.4 sched.h).
    pub fn sub_nr_running(&mut self, cpu: CpuId, w: &mut World) {
        self.rqs[cpu.index()].nr_running -= 1;
        self.note_runnable(cpu, w);
        if self.fair_server {
            self.fair_server_sync(cpu, w);
        }
    }

    /// Tells the recorders (balance gap, occupancy) how many tasks on `cpu`
    /// want it: `nr_running` less those DELAY_DEQUEUE keeps queued asleep
    /// (6.12+; the kernel's `cfs_h_nr_delayed`, which it subtracts itself
    /// where it asks who is runnable). Called at every change of either.
    pub fn note_runnable(&mut self, cpu: CpuId, w: &mut World) {
        let delayed = self.classes.fair_internals().cpu_signals(cpu).h_nr_delayed;
        let runnable = self.rqs[cpu.index()].nr_running.saturating_sub(delayed);
        w.recorder.cpu_nr_running(cpu, runnable, w.clock.now);
    }

    pub fn smp_mut(&mut self) -> &mut Smp {
        self.smp.as_mut().expect("the SMP policy is not re-entered")
    }

    /// `set_task_cpu`'s bookkeeping: the task's CPU, the counters and the
    /// `sched_migrate_task` record (emitted by the CPU `by` doing the move).
    pub fn note_migration(
        &mut self,
        task: TaskId,
        from: CpuId,
        to: CpuId,
        cause: MigrateCause,
        by: CpuId,
        w: &mut World,
    ) {
        let now = w.now();
        w.tasks[task.index()].cpu = to;
        w.recorder.count_migration(task, from, to, cause, now);
        if !w.recorder.keeps_records() {
            return;
        }
        let rec = SchedRecord {
            at: now,
            cpu: by,
            min_vruntime: self.classes.fair().min_vruntime(self.rqs[to.index()].root),
            root_min_vruntime: self.classes.fair().min_vruntime(self.rqs[to.index()].root),
            nr_running: self.rqs[to.index()].nr_running,
            kind: RecordKind::Migrate { task, orig_cpu: from, dest_cpu: to, cause },
        };
        w.recorder.push_record(rec);
    }

    /// The running task blocks: it stops being `TASK_RUNNING` and asks for a
    /// reschedule; `schedule()` then dequeues it (`deactivate_task` in
    /// `__schedule`, 4.4 core.c). Until then it is still `curr` and queued.
    pub fn block(&mut self, task: TaskId, state: TaskState, w: &mut World) {
        let cpu = w.tasks[task.index()].cpu;
        debug_assert_eq!(self.rqs[cpu.index()].curr, Some(task));
        w.tasks[task.index()].state = state;
        self.resched_curr(cpu);
    }

    /// A `yield` step (`sched_yield` → `yield_task_fair`): the running task
    /// gives up the rest of its turn and its CPU reschedules.
    pub fn yield_task(&mut self, task: TaskId, w: &mut World) {
        let cpu = w.tasks[task.index()].cpu;
        let nr_running = self.rqs[cpu.index()].nr_running;
        if Self::class_of(task, w) == ClassKind::Rt {
            self.classes.rt.yield_task(task); // yield_task_rt: to the tail of its list
        } else if Self::class_of(task, w) == ClassKind::Deadline {
            self.classes.dl.yield_task(task, w.now().ns()); // yield_task_dl: the rest of this instance
            self.apply_dl(w);
        } else if Self::class_of(task, w) == ClassKind::Stop {
            unreachable!("yield_task_stop is BUG(): validation refuses a stop task's yield step");
        } else {
            self.classes.fair_mut().yield_task(se_of(task), nr_running);
        }
        self.apply_class_resched(w);
        self.resched_curr(cpu);
    }

    /// The running task enters the kernel and reads its CPU time
    /// (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)` → `task_sched_runtime` →
    /// `update_curr`); on the way back to user space a resched the update
    /// raised (an EEVDF slice end) is honoured (`exit_to_user_mode_loop`).
    pub fn kernel_entry(&mut self, task: TaskId, w: &mut World) {
        match Self::class_of(task, w) {
            ClassKind::Rt => self.classes.rt.update_curr(task, w.now().ns()),
            ClassKind::Deadline => self.update_curr_dl(w.tasks[task.index()].cpu, w),
            ClassKind::Stop => {} // update_curr_stop: nothing
            _ => self.classes.fair_mut().update_curr(se_of(task)),
        }
        self.apply_class_resched(w);
        let now = w.now();
        next_kernel_entry(task, now, w);
    }

    /// A `Resume` event on `cpu`: a deferred wake-up resched arrives, a
    /// deferred preemption point is queued again, or the running task goes
    /// on with its steps (returned: the caller runs them).
    pub fn resume(&mut self, cpu: CpuId, w: &World) -> Option<TaskId> {
        let rq = &mut self.rqs[cpu.index()];
        if rq.resched_deferred {
            // The wake-up's IPI or interrupt return arrives (machine noise).
            rq.resched_deferred = false;
            self.resched_curr(cpu);
            return None;
        }
        if rq.need_resched {
            self.resched.push_back(cpu);
            return None;
        }
        rq.curr.filter(|t| w.tasks[t.index()].at_step_boundary())
    }
}

/// Schedules the running task's next kernel entry, `kernel_every_ns` of
/// work after `from`, if that falls before its burst ends.
pub(super) fn next_kernel_entry(task: TaskId, from: SimTime, w: &mut World) {
    let t = &w.tasks[task.index()];
    let Some(every) = t.kernel_every_ns else { return };
    let at = from.after(every);
    if at < t.burst_end_at {
        let generation = t.burst_generation;
        w.queue.push(at, Event::KernelEntry { task, generation });
    }
}

/// Arms the bandwidth timers the fair class asked for (`Event::BandwidthTimer`).
pub(super) fn push_bandwidth_timers(queue: &mut EventQueue, timers: &mut Vec<crate::sched::bandwidth::TimerRequest>) {
    for t in timers.drain(..) {
        queue.push(SimTime(t.at), Event::BandwidthTimer { group: t.group, slack: t.slack, generation: t.generation });
    }
}
