//! The deadline class (`kernel/sched/deadline.c`): SCHED_DEADLINE tasks
//! under CBS (runtime, deadline, period; replenishment and throttling) and
//! EDF on each CPU, and the 6.12+ fair deadline server (`dl_server`, defer
//! mode) that serves fair tasks an RT hog would starve. The reading behind
//! every rule is docs/kernel/deadline-class.md (4.4.155, 6.6.9, 6.12.0,
//! 6.18.2).
//!
//! Entities are tasks (`EntityRef::Task`) and one server per CPU
//! (`EntityRef::Server`). The class returns what changes `rq->nr_running`
//! and lists reschedules and timers in outboxes the engine drains, as the
//! RT class does. Across the CPUs of a root domain, global EDF is what
//! deadline.c approximates with `cpudl` (which CPU runs the latest
//! deadline, which has none), `find_later_rq`, and the push and pull the
//! engine runs (`engine/dl_core.rs`); this file answers their queries and
//! moves a queued task.

use super::model_rt::FairServerStop;
use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};

mod smp;

/// `DL_SCALE` (sched.h): `dl_entity_overflow` works in units of 1024 ns.
const DL_SCALE: u32 = 10;
/// `dl_server_min_res` (6.12 deadline.c:1196): the defer timer is not
/// pushed back for less than 1 ms of background runtime.
const DL_SERVER_MIN_RES: u64 = 1_000_000;

/// A deadline entity: a task, or a CPU's fair server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntityRef {
    Task(TaskId),
    Server(CpuId),
}

/// `struct sched_dl_entity`.
#[derive(Clone, Copy, Debug, Default)]
struct DlEntity {
    dl_runtime: u64,
    dl_deadline: u64,
    dl_period: u64,
    /// `dl_density` (`to_ratio(dl_deadline, dl_runtime)`), for the revised wakeup.
    dl_density: u64,
    runtime: i64,
    deadline: u64,
    throttled: bool,
    yielded: bool,
    /// In the `dl_rq` tree (and, for a task, counted in `rq->nr_running`).
    queued: bool,
    /// A task that wants the CPU (`task_on_rq_queued`), throttled or not.
    on_rq: bool,
    cpu: CpuId,
    timer_armed: bool,
    timer_generation: u32,
    /// Servers: `dl_defer`, `dl_defer_armed`, `dl_defer_running`, and
    /// whether it is started (`dl_server_active` in 6.18).
    server: bool,
    defer_armed: bool,
    defer_running: bool,
    active: bool,
    /// Tie-break among equal deadlines: later insertions go right.
    seq: u64,
    /// No instance yet: the first enqueue runs `setup_new_dl_entity` (4.4
    /// `dl_new`; 6.x a deadline in the past of the kernel's clock, which
    /// the model's clock, starting at 0, cannot show; the 6.12 server's
    /// first `dl_server_start`, 6.18's `sched_init_dl_servers`).
    dl_new: bool,
}

/// What the deadline class hands back to the engine.
#[derive(Clone, Debug, Default)]
struct Outbox {
    resched: Vec<CpuId>,
    /// A task's count in `rq->nr_running` changed (throttle: −1, replenish: +1).
    counted: Vec<(CpuId, TaskId, i32)>,
    /// Timers to arm: (entity index, time, generation).
    timers: Vec<(u32, u64, u32)>,
    /// Deadline tasks' time charged per CPU since the last drain, which
    /// 4.4 and 6.6 (and RT_GROUP_SCHED) also add to `rq->rt.rt_time`.
    charged: Vec<(CpuId, u64)>,
    /// A CPU's `dl_nr_running` went 0 → 1 (true) or 1 → 0 (false): 6.6+
    /// `inc_dl_deadline`/`dec_dl_deadline` file it in cpupri.
    busy: Vec<(CpuId, bool)>,
}

/// What a replenishment timer did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerOutcome {
    Nothing,
    /// A task wanting the CPU was requeued.
    Task(TaskId),
    /// The server of this CPU was enqueued.
    Server(CpuId),
}

/// Per-CPU counters for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Times the server was enqueued to run fair tasks (its defer timer
    /// fired, or a replenishment while starved), and its time running.
    pub served: u64,
    pub served_ns: u64,
}

/// The deadline class of every CPU.
#[derive(Clone, Debug)]
pub struct DlClass {
    /// Tasks first (index = task), then one server per CPU.
    entities: Vec<DlEntity>,
    ntasks: usize,
    /// Per CPU: the queued entities (the `dl_rq` tree, unordered: few).
    queued: Vec<Vec<usize>>,
    /// Per CPU: the running task and since when it is charged.
    curr: Vec<Option<(TaskId, u64)>>,
    /// Per CPU: the server picked the running fair task (`rq->dl_server`), since when.
    server_running: Vec<Option<u64>>,
    stats: Vec<ServerStats>,
    server_stop: Option<FairServerStop>,
    seq: u64,
    out: Outbox,
    /// The root domain (`rq->rd->span`) of each CPU: `cpudl`'s CPUs.
    rd_span: Vec<CpuSet>,
    /// Each deadline task's `cpus_mask` (empty for other tasks).
    allowed: Vec<CpuSet>,
    /// `RtRules::overload_needs_two`.
    overload_needs_two: bool,
}

impl DlClass {
    /// The class for `ntasks` tasks and `ncpus` CPUs; `server`: the fair
    /// server's runtime and period and its version's stop rule (6.12+), or
    /// none (4.4, 6.6, or runtime 0: "fair server disabled").
    pub fn new(ntasks: usize, rd_span: Vec<CpuSet>, server: Option<((u64, u64), FairServerStop)>) -> DlClass {
        let ncpus = rd_span.len();
        let mut entities = vec![DlEntity::default(); ntasks + ncpus];
        let server_stop = server.filter(|((r, _), _)| *r > 0).map(|(_, s)| s);
        for c in 0..ncpus {
            let e = &mut entities[ntasks + c];
            e.cpu = CpuId(c as u16);
            if let Some(((runtime, period), _)) = server.filter(|((r, _), _)| *r > 0) {
                // fair_server_init + dl_server_apply_params (6.12 lazily at
                // the first start, 6.18 at boot): deadline = period, defer on;
                // runtime = deadline = 0 until the first start's new period.
                e.dl_runtime = runtime;
                e.dl_deadline = period;
                e.dl_period = period;
                e.server = true;
                e.dl_new = true;
            }
        }
        DlClass {
            entities,
            ntasks,
            queued: vec![Vec::new(); ncpus],
            curr: vec![None; ncpus],
            server_running: vec![None; ncpus],
            stats: vec![ServerStats::default(); ncpus],
            server_stop,
            seq: 0,
            out: Outbox::default(),
            rd_span,
            allowed: vec![CpuSet::default(); ntasks],
            overload_needs_two: false,
        }
    }

    fn of(&self, i: usize) -> EntityRef {
        if i < self.ntasks { EntityRef::Task(TaskId(i as u32)) } else { EntityRef::Server(CpuId((i - self.ntasks) as u16)) }
    }

    /// `__setparam_dl`: a task's runtime, deadline and period.
    pub fn init_task(&mut self, task: TaskId, runtime: u64, deadline: u64, period: u64, allowed: CpuSet) {
        self.allowed[task.index()] = allowed;
        let e = &mut self.entities[task.index()];
        e.dl_runtime = runtime;
        e.dl_deadline = deadline;
        e.dl_period = period;
        e.dl_density = super::model_rt::to_ratio(deadline, runtime);
        e.dl_new = true;
    }

    /// The version's overload rule (`RtRules::overload_needs_two`).
    pub fn set_overload_rule(&mut self, needs_two: bool) {
        self.overload_needs_two = needs_two;
    }

    /// Whether the fair server runs on this machine.
    #[inline(always)]
    pub fn has_server(&self) -> bool {
        self.server_stop.is_some()
    }

    // ------------------------------------------------------------ queries

    /// The running task's or a queued entity's absolute deadline.
    pub fn deadline(&self, task: TaskId) -> u64 {
        self.entities[task.index()].deadline
    }

    pub fn on_rq(&self, task: TaskId) -> bool {
        self.entities[task.index()].on_rq
    }

    /// `on_dl_rq`: in the `dl_rq` tree (queued and not throttled).
    pub fn queued(&self, task: TaskId) -> bool {
        self.entities[task.index()].queued
    }

    /// Whether the task is throttled (out of runtime until its next period).
    pub fn throttled(&self, task: TaskId) -> bool {
        self.entities[task.index()].throttled
    }

    /// `dl_rq->dl_nr_running` of `cpu`, tasks only (the server is not counted here).
    pub fn nr_queued_tasks(&self, cpu: CpuId) -> usize {
        self.queued[cpu.index()].iter().filter(|&&i| i < self.ntasks).count()
    }

    /// Whether anything (a task or the server) is queued on `cpu`.
    #[inline]
    pub fn has_queued(&self, cpu: CpuId) -> bool {
        !self.queued[cpu.index()].is_empty()
    }

    /// The server of `cpu` picked the fair task running there.
    pub fn server_running(&self, cpu: CpuId) -> bool {
        self.server_running[cpu.index()].is_some()
    }

    pub fn server_stats(&self, cpu: CpuId, now: u64) -> ServerStats {
        let mut s = self.stats[cpu.index()];
        if let Some(since) = self.server_running[cpu.index()] {
            s.served_ns += now.saturating_sub(since);
        }
        s
    }

    /// The server's runtime left, deadline and state (tests).
    pub fn server_state(&self, cpu: CpuId) -> (i64, u64, bool, bool, bool) {
        let e = &self.entities[self.ntasks + cpu.index()];
        (e.runtime, e.deadline, e.throttled, e.defer_armed, e.defer_running)
    }

    /// The leftmost queued entity of `cpu` (earliest deadline; FIFO among equals).
    fn leftmost(&self, cpu: CpuId) -> Option<usize> {
        let mut best: Option<usize> = None;
        for &i in &self.queued[cpu.index()] {
            let e = &self.entities[i];
            let better = match best {
                None => true,
                Some(b) => {
                    let o = &self.entities[b];
                    dl_time_before(e.deadline, o.deadline) || (e.deadline == o.deadline && e.seq < o.seq)
                }
            };
            if better {
                best = Some(i);
            }
        }
        best
    }

    // ------------------------------------------------------------ CBS

    /// `dl_entity_overflow` (4.4 deadline.c:452-480; 6.12 966-993):
    /// `runtime / (deadline − t) > dl_runtime / dl_deadline`, in 1024-ns
    /// units with the kernel's u64 products compared by `dl_time_before`
    /// (signed: a negative runtime gives a negative `left`, no overflow).
    fn overflow(e: &DlEntity, t: u64) -> bool {
        let left = (e.dl_deadline >> DL_SCALE).wrapping_mul((e.runtime >> DL_SCALE) as u64);
        let right = (e.deadline.wrapping_sub(t) >> DL_SCALE).wrapping_mul(e.dl_runtime >> DL_SCALE);
        dl_time_before(right, left)
    }

    /// `replenish_dl_new_period` (6.12 deadline.c:773-788): a new instance
    /// from `now`; a deferred server that is not serving a starvation is
    /// throttled and armed again.
    fn new_period(&mut self, i: usize, now: u64) {
        let e = &mut self.entities[i];
        e.deadline = now + e.dl_deadline;
        e.runtime = e.dl_runtime as i64;
        if e.server && !e.defer_running {
            e.throttled = true;
            e.defer_armed = true;
        }
    }

    /// `update_dl_entity` (4.4 deadline.c:562-590; 6.12 1075-1100): at a
    /// wake-up, a past deadline or a runtime that would overflow the
    /// bandwidth starts a new period, except the revised wakeup of a
    /// constrained task (deadline < period) whose deadline is not past.
    fn update_dl_entity(&mut self, i: usize, now: u64) {
        let e = self.entities[i];
        if dl_time_before(e.deadline, now) || Self::overflow(&e, now) {
            if e.dl_deadline != e.dl_period && !dl_time_before(e.deadline, now) {
                // update_dl_revised_wakeup: runtime = density · (deadline − now) >> BW_SHIFT.
                let laxity = u128::from(e.deadline - now);
                self.entities[i].runtime = ((u128::from(e.dl_density) * laxity) >> 20) as i64;
                return;
            }
            self.new_period(i, now);
        } else if e.server && !e.defer_running {
            self.entities[i].defer_armed = true;
            self.entities[i].throttled = true;
        }
    }

    /// `replenish_dl_entity` (4.4 deadline.c:379-426; 6.12 847-940): catch
    /// up period by period (overrun debt carried), a new period if still
    /// late, then unthrottled; a server's deferred activation starts afresh.
    fn replenish(&mut self, i: usize, now: u64) {
        let e = self.entities[i];
        if e.defer_armed && Self::overflow(&e, now) {
            // 6.12+: a zero-laxity activation gets a whole new period.
            self.entities[i].deadline = now + e.dl_deadline;
            self.entities[i].runtime = e.dl_runtime as i64;
        }
        let e = &mut self.entities[i];
        if e.yielded && e.runtime > 0 {
            e.runtime = 0;
        }
        // Bounded: each pass adds dl_runtime (≥ 1024 ns) to a runtime that
        // can be at most a run's length in debt.
        while e.runtime <= 0 {
            e.deadline += e.dl_period;
            e.runtime += e.dl_runtime as i64;
        }
        if dl_time_before(e.deadline, now) {
            e.deadline = now + e.dl_deadline;
            e.runtime = e.dl_runtime as i64;
        }
        e.yielded = false;
        e.throttled = false;
        if e.defer_armed {
            e.defer_armed = false;
            return;
        }
        // A deferred server not serving a starvation defers again while
        // fair tasks can still get their runtime in the background.
        if e.server && !e.defer_running && now < e.deadline.saturating_sub(e.runtime as u64) {
            e.throttled = true;
            e.defer_armed = true;
            self.start_timer(i, now);
        }
    }

    /// `start_dl_timer` (4.4.155 deadline.c:607-650; 6.12 1120-1160): at the
    /// next period (`dl_next_period` = deadline − D + P), or a deferred
    /// server's zero-laxity instant (deadline − runtime). Refused when that
    /// instant is already past by a microsecond or more.
    fn start_timer(&mut self, i: usize, now: u64) -> bool {
        let e = &self.entities[i];
        let at = if e.defer_armed {
            e.deadline.saturating_sub(e.runtime.max(0) as u64)
        } else {
            e.deadline - e.dl_deadline + e.dl_period
        };
        if at + 1_000 <= now {
            return false;
        }
        let e = &mut self.entities[i];
        e.timer_armed = true;
        e.timer_generation = e.timer_generation.wrapping_add(1);
        self.out.timers.push((i as u32, at.max(now), e.timer_generation));
        true
    }

    fn cancel_timer(&mut self, i: usize) {
        let e = &mut self.entities[i];
        e.timer_armed = false;
        e.timer_generation = e.timer_generation.wrapping_add(1);
    }

    /// Whether a timer event is the armed one.
    pub fn timer_current(&self, entity: u32, generation: u32) -> bool {
        let e = &self.entities[entity as usize];
        e.timer_armed && e.timer_generation == generation
    }

    fn enqueue_tree(&mut self, i: usize) {
        self.seq += 1;
        let e = &mut self.entities[i];
        e.queued = true;
        e.seq = self.seq;
        let cpu = e.cpu;
        if self.queued[cpu.index()].is_empty() {
            self.out.busy.push((cpu, true));
        }
        self.queued[cpu.index()].push(i);
    }

    /// Out of the `dl_rq` tree (if in it). Returns whether it was.
    fn dequeue_tree(&mut self, i: usize) -> bool {
        let e = &mut self.entities[i];
        if !e.queued {
            return false;
        }
        e.queued = false;
        let cpu = e.cpu;
        let q = &mut self.queued[cpu.index()];
        if let Some(k) = q.iter().position(|&x| x == i) {
            q.swap_remove(k);
        }
        if q.is_empty() {
            self.out.busy.push((cpu, false));
        }
        true
    }

    /// `enqueue_dl_entity` (6.12 deadline.c:1990-2065) for a wake-up
    /// (`update_dl_entity`) or a replenishment; a throttled entity whose
    /// timer starts stays out of the tree. Returns whether it was queued.
    fn enqueue_entity(&mut self, i: usize, wakeup: bool, now: u64) -> bool {
        let e = self.entities[i];
        if !e.server && e.throttled && wakeup {
            return false; // the running timer replenishes it
        }
        if wakeup && self.entities[i].dl_new {
            // setup_new_dl_entity → replenish_dl_new_period.
            self.entities[i].dl_new = false;
            self.new_period(i, now);
        } else if wakeup {
            let e = self.entities[i];
            // dl_check_constrained_dl (4.4.155 deadline.c:804-817, before
            // enqueue_dl_entity; 6.12 2005-2006, before update_dl_entity):
            // woken after its deadline but before its next period, it is
            // throttled to that period and not queued.
            if !e.server && !e.throttled && e.dl_deadline != e.dl_period {
                let next_period = e.deadline - e.dl_deadline + e.dl_period;
                if dl_time_before(e.deadline, now) && dl_time_before(now, next_period) {
                    self.entities[i].throttled = true;
                    if self.start_timer(i, now) {
                        self.entities[i].runtime = e.runtime.min(0);
                        return false;
                    }
                    self.entities[i].throttled = false;
                }
            }
            self.update_dl_entity(i, now);
        } else {
            self.replenish(i, now);
        }
        if self.entities[i].throttled && self.start_timer(i, now) {
            return false;
        }
        if self.entities[i].throttled {
            self.cancel_timer(i);
            let e = &mut self.entities[i];
            e.defer_armed = false;
            e.throttled = false;
        }
        self.enqueue_tree(i);
        true
    }

    // ------------------------------------------------------------ task hooks

    /// `set_task_cpu` for a deadline task.
    pub fn set_task_cpu(&mut self, task: TaskId, cpu: CpuId) {
        self.entities[task.index()].cpu = cpu;
    }

    /// `enqueue_task_dl` at a wake-up or fork (4.4's `dl_new` and 6.x's
    /// past deadline both start the first instance here). Returns whether
    /// the task counts in `rq->nr_running` (not while throttled).
    pub fn enqueue_task(&mut self, task: TaskId, now: u64) -> bool {
        let i = task.index();
        self.entities[i].on_rq = true;
        self.enqueue_entity(i, true, now)
    }

    /// `__dequeue_task_dl`: out of the tree. Returns whether it counted in
    /// `rq->nr_running`. The engine runs `update_curr_dl` first and
    /// applies its outbox (`dequeue_task_dl` = `update_curr_dl` +
    /// `__dequeue_task_dl`, 4.4 deadline.c:1128-1132): a throttle there
    /// may requeue the task at once (its next period already due), and
    /// that −1/+1 comes before this dequeue's −1.
    pub fn dequeue_task(&mut self, task: TaskId) -> bool {
        let i = task.index();
        let counted = self.dequeue_tree(i);
        self.entities[i].on_rq = false;
        counted
    }

    /// `pick_task_dl`: the leftmost entity. A task starts being charged; a
    /// server answers `Server`, and the chain asks the fair class.
    pub fn pick(&mut self, cpu: CpuId, now: u64) -> Option<EntityRef> {
        let i = self.leftmost(cpu)?;
        let r = self.of(i);
        if let EntityRef::Task(t) = r {
            self.curr[cpu.index()] = Some((t, now));
        }
        Some(r)
    }

    /// `put_prev_task_dl`: charged; it stays queued.
    pub fn put_prev_task(&mut self, task: TaskId, now: u64) {
        let cpu = self.entities[task.index()].cpu;
        if self.curr[cpu.index()].is_some_and(|(t, _)| t == task) {
            self.update_curr(cpu, now);
            self.curr[cpu.index()] = None;
        }
    }

    /// `update_curr_dl` (4.4 deadline.c:831-898; 6.12 `update_curr_dl_se`):
    /// the running task's runtime drops by its run since the last charge;
    /// at 0 (or yielded) it is throttled: out of the tree and of
    /// `nr_running`, with its replenishment timer at the next period
    /// (replenished at once if that is past). The time charged goes to the
    /// `charged` outbox (the RT class's `rt_time` on 4.4 and 6.6), from
    /// every caller: tick, kernel entry, block, preemption, yield.
    pub fn update_curr(&mut self, cpu: CpuId, now: u64) {
        let Some((task, start)) = self.curr[cpu.index()] else { return };
        let delta = now.saturating_sub(start);
        self.curr[cpu.index()] = Some((task, now));
        let i = task.index();
        if delta == 0 && !self.entities[i].yielded {
            return;
        }
        self.entities[i].runtime -= delta as i64;
        if delta > 0 {
            self.out.charged.push((cpu, delta));
        }
        if self.entities[i].runtime <= 0 || self.entities[i].yielded {
            self.throttle(i, now);
        }
    }

    fn throttle(&mut self, i: usize, now: u64) {
        self.entities[i].throttled = true;
        let was_queued = self.dequeue_tree(i);
        let e = &self.entities[i];
        let cpu = e.cpu;
        if !e.server && was_queued {
            self.out.counted.push((cpu, TaskId(i as u32), -1));
        }
        if !self.start_timer(i, now) {
            // The next period is already here: replenish and requeue at once.
            if self.enqueue_entity(i, false, now) && !self.entities[i].server {
                self.out.counted.push((cpu, TaskId(i as u32), 1));
            }
        }
        self.out.resched.push(cpu);
    }

    /// `yield_task_dl`: the rest of this instance is given up (6.x: the
    /// `dl_yielded` flag throttles at the next `update_curr_dl`, even with
    /// no time run; 4.4 zeroes the runtime: the same next instance).
    pub fn yield_task(&mut self, task: TaskId, now: u64) {
        let cpu = self.entities[task.index()].cpu;
        self.entities[task.index()].yielded = true;
        self.update_curr(cpu, now);
    }

    /// `wakeup_preempt_dl` (`dl_entity_preempt`): a strictly earlier deadline.
    pub fn preempts(&self, woken: TaskId, curr: TaskId) -> bool {
        dl_time_before(self.entities[woken.index()].deadline, self.entities[curr.index()].deadline)
    }

    /// The replenishment timer of `entity` fires (`dl_task_timer` for a
    /// task, `dl_server_timer` for a server). A task asleep is only
    /// replenished; one still wanting the CPU is requeued (counted again)
    /// and returned: the engine runs `wakeup_preempt_dl` (or reschedules a
    /// CPU running a lower class) and `push_dl_task` (4.4 deadline.c:725-763),
    /// as it pushes after a server's enqueue (6.18 `dl_server_timer`).
    pub fn timer(&mut self, entity: u32, now: u64) -> TimerOutcome {
        let i = entity as usize;
        self.entities[i].timer_armed = false;
        let e = self.entities[i];
        if e.server {
            return if self.server_timer(i, now) { TimerOutcome::Server(e.cpu) } else { TimerOutcome::Nothing };
        }
        if !e.throttled {
            return TimerOutcome::Nothing;
        }
        if !e.on_rq {
            self.replenish(i, now);
            return TimerOutcome::Nothing;
        }
        if self.enqueue_entity(i, false, now) {
            self.out.counted.push((e.cpu, TaskId(i as u32), 1));
            return TimerOutcome::Task(TaskId(i as u32));
        }
        TimerOutcome::Nothing
    }

    // ------------------------------------------------------------ fair server

    /// `dl_server_start` (6.12 deadline.c:1627-1653; 6.18 1578-1592): the
    /// CPU's fair tasks went from none to some. Enqueued as a wake-up, so
    /// in defer mode it starts throttled with its timer at zero laxity.
    pub fn server_start(&mut self, cpu: CpuId, now: u64) {
        if self.server_stop.is_none() {
            return;
        }
        let i = self.ntasks + cpu.index();
        if self.entities[i].active {
            return; // 6.18: already active; 6.12 never gets here twice
        }
        self.entities[i].active = true;
        if self.enqueue_entity(i, true, now) {
            self.served(cpu, now);
            self.out.resched.push(cpu);
        }
    }

    /// `dl_server_stop` (6.12 deadline.c:1655-1664): out of the tree, the
    /// timer cancelled, disarmed; `dl_defer_running` is kept.
    pub fn server_stop(&mut self, cpu: CpuId, now: u64) {
        if self.server_stop.is_none() {
            return;
        }
        let i = self.ntasks + cpu.index();
        if !self.entities[i].active {
            return;
        }
        self.server_done(cpu, now);
        self.cancel_timer(i);
        self.dequeue_tree(i);
        let e = &mut self.entities[i];
        e.active = false;
        e.defer_armed = false;
        e.throttled = false;
    }

    /// Whether the server stops when the CPU's last fair task leaves
    /// (6.12), rather than when it is picked with none (6.18).
    pub fn server_stops_on_dequeue(&self) -> bool {
        self.server_stop == Some(FairServerStop::OnLastDequeue)
    }

    /// `dl_server_update` (6.12 `update_curr_dl_se` for the server): fair
    /// time run on `cpu` (through the server or not) is charged to it. A
    /// deferred server whose runtime the fair tasks used up in the
    /// background is not needed this period: a new period, re-armed. A
    /// running server out of runtime is throttled to its next period.
    pub fn server_charge(&mut self, cpu: CpuId, delta: u64, now: u64) {
        if self.server_stop.is_none() || delta == 0 {
            return;
        }
        let i = self.ntasks + cpu.index();
        if !self.entities[i].active {
            return;
        }
        self.entities[i].runtime -= delta as i64;
        let e = self.entities[i];
        if e.throttled && e.runtime <= 0 {
            self.entities[i].defer_running = false;
            self.cancel_timer(i);
            self.new_period(i, now);
            self.start_timer(i, now);
            return;
        }
        if e.runtime <= 0 && e.queued {
            self.server_done(cpu, now);
            self.throttle(i, now);
        }
    }

    /// `dl_server_update_idle_time` (6.12 deadline.c:1593-1618): in defer
    /// mode idle time counts as time the fair tasks could have had.
    pub fn server_idle(&mut self, cpu: CpuId, delta: u64) {
        let i = self.ntasks + cpu.index();
        let e = &mut self.entities[i];
        if !e.server || e.runtime < 0 || delta == 0 {
            return;
        }
        e.runtime -= delta as i64;
        if e.runtime < 0 {
            e.defer_running = false;
            e.runtime = 0;
        }
    }

    /// `dl_server_timer` (6.12 deadline.c:1198-1245): a deferred server
    /// whose fair tasks got some runtime in the background moves its
    /// timer to the new zero-laxity instant; otherwise fair is starving:
    /// `dl_defer_running`, a fresh period, queued as a deadline entity
    /// (above RT) and the CPU rescheduled.
    fn server_timer(&mut self, i: usize, now: u64) -> bool {
        let e = self.entities[i];
        let cpu = e.cpu;
        if !e.throttled || !e.active {
            return false;
        }
        if e.defer_armed {
            let zero_laxity = e.deadline.saturating_sub(e.runtime.max(0) as u64);
            if dl_time_before(now, zero_laxity.saturating_sub(DL_SERVER_MIN_RES)) {
                self.entities[i].timer_armed = true;
                let g = self.entities[i].timer_generation;
                self.out.timers.push((i as u32, zero_laxity, g));
                return false;
            }
            self.entities[i].defer_running = true;
        }
        let queued = self.enqueue_entity(i, false, now);
        if queued {
            self.served(cpu, now);
        }
        self.out.resched.push(cpu);
        queued
    }

    fn served(&mut self, cpu: CpuId, _now: u64) {
        self.stats[cpu.index()].served += 1;
    }

    /// The server picked a fair task on `cpu` (`rq->dl_server`).
    pub fn server_picked(&mut self, cpu: CpuId, now: u64) {
        if self.server_running[cpu.index()].is_none() {
            self.server_running[cpu.index()] = Some(now);
        }
    }

    /// The fair task the server picked leaves the CPU (or the server stops).
    pub fn server_done(&mut self, cpu: CpuId, now: u64) {
        if let Some(since) = self.server_running[cpu.index()].take() {
            self.stats[cpu.index()].served_ns += now.saturating_sub(since);
        }
    }

    /// 6.12 `__pick_task_dl` when the server has no fair task to give:
    /// yielded, so throttled until its next period; 6.18: stopped.
    pub fn server_empty_pick(&mut self, cpu: CpuId, now: u64) {
        let i = self.ntasks + cpu.index();
        match self.server_stop {
            Some(FairServerStop::OnEmptyPick) => self.server_stop(cpu, now),
            _ => {
                self.entities[i].yielded = true;
                self.entities[i].runtime = 0;
                self.throttle(i, now);
            }
        }
    }


    // ------------------------------------------------------------ outboxes

    #[inline(always)]
    pub fn has_outbox(&self) -> bool {
        !self.out.resched.is_empty()
            || !self.out.counted.is_empty()
            || !self.out.timers.is_empty()
            || !self.out.charged.is_empty()
            || !self.out.busy.is_empty()
    }

    pub fn take_busy(&mut self) -> Vec<(CpuId, bool)> {
        std::mem::take(&mut self.out.busy)
    }

    pub fn take_charged(&mut self) -> Vec<(CpuId, u64)> {
        std::mem::take(&mut self.out.charged)
    }

    pub fn take_counted(&mut self) -> Vec<(CpuId, TaskId, i32)> {
        std::mem::take(&mut self.out.counted)
    }

    pub fn take_timers(&mut self) -> Vec<(u32, u64, u32)> {
        std::mem::take(&mut self.out.timers)
    }

    pub fn pop_resched(&mut self) -> Option<CpuId> {
        self.out.resched.pop()
    }

    /// The running deadline task of `cpu`.
    pub fn curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.curr[cpu.index()].map(|(t, _)| t)
    }

    /// A task's runtime left and absolute deadline (tests, checks).
    pub fn task_budget(&self, task: TaskId) -> (i64, u64) {
        let e = &self.entities[task.index()];
        (e.runtime, e.deadline)
    }
}

/// `dl_time_before`: `(s64)(a − b) < 0`.
pub fn dl_time_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}
