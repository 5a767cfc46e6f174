//! The real-time class (`kernel/sched/rt.c`): SCHED_FIFO and SCHED_RR tasks
//! in per-CPU priority lists, preemption by priority, the RR time slice, and
//! RT throttling (`rt_bandwidth`) where the version has it. The reading
//! behind every rule is docs/kernel/rt-class.md (4.4.155, 6.6.9, 6.12.0,
//! 6.18.2); the version differences are `model_rt::RtRules`, read once here.
//!
//! Hooks keep rt.c's names. The class knows tasks and CPUs; the engine
//! (engine/rt_core.rs) keeps `rq->nr_running` from what the hooks return and
//! from the throttle outbox, and runs placement, push and pull over the
//! queries below. No group scheduling: every task is in its CPU's root
//! `rt_rq` (CONFIG_RT_GROUP_SCHED's groups are not modelled; its root-group
//! throttling is, for 6.12+ with `rt.rt_group_sched`).

use super::ClassKind;
use super::model_rt::{RtRules, RtThrottling};
use super::rt_pressure::RtPressure;
use super::spread::{CpuSpread, InDomain};
use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};

/// `MAX_RT_PRIO`: the empty `highest_prio.curr` (4.4 rt.c:81-82 keeps 100;
/// 6.x keeps 99, which no RT task has: the same order).
pub const PRIO_NONE: i32 = 100;

/// A task's RT state (`struct sched_rt_entity` and `p->prio`).
#[derive(Clone, Copy, Debug)]
struct RtTask {
    /// `p->prio`: 0 (rt_priority 99) to 98 (rt_priority 1).
    prio: i32,
    rr: bool,
    /// `rt.time_slice`: ticks left (RR).
    time_slice: u32,
    on_rq: bool,
    cpu: CpuId,
    /// `nr_cpus_allowed > 1`: the task may be pushed or pulled.
    migratable: bool,
}

impl Default for RtTask {
    fn default() -> RtTask {
        RtTask { prio: PRIO_NONE, rr: false, time_slice: 0, on_rq: false, cpu: CpuId(0), migratable: false }
    }
}

/// One CPU's `struct rt_rq` (the root one; no groups).
#[derive(Clone, Debug, Default)]
struct RtRq {
    /// Every queued task, by prio, FIFO within a prio: the `rt_prio_array`
    /// lists concatenated (the running task stays at the head of its list).
    queue: Vec<TaskId>,
    /// The RT task running here and since when it is charged (`exec_start`).
    curr: Option<(TaskId, u64)>,
    /// `rt_time`, `rt_runtime` (ns), `rt_throttled`.
    rt_time: u64,
    rt_runtime: u64,
    throttled: bool,
    /// Time throttled so far, and since when (for the report).
    throttled_ns: u64,
    throttled_since: u64,
    throttles: u64,
}

/// A throttle or unthrottle of one CPU's RT queue: `rq->nr_running`
/// changes by `nr_delta` (`dequeue_top_rt_rq`/`enqueue_top_rt_rq`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtThrottleEvent {
    pub cpu: CpuId,
    pub throttled: bool,
    pub nr_delta: i32,
}

/// The RT bandwidth settings in force (`def_rt_bandwidth`, or the root
/// group's with CONFIG_RT_GROUP_SCHED on 6.12+).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtBandwidth {
    pub period_ns: u64,
    /// `None`: RUNTIME_INF (`sched_rt_runtime_us = -1`).
    pub runtime_ns: Option<u64>,
    /// Throttling runs at all (4.4, 6.6; 6.12+ only with RT_GROUP_SCHED).
    pub enabled: bool,
    /// RT_RUNTIME_SHARE (4.4 default on).
    pub share: bool,
    /// 4.4: the period timer's expiries lie on the k·period grid.
    pub grid: bool,
}

impl RtBandwidth {
    pub fn of(rules: RtRules, period_ns: u64, runtime_ns: Option<u64>, group_sched: bool) -> RtBandwidth {
        let (enabled, share, grid) = match rules.throttling {
            RtThrottling::Root { share, grid } => (true, share, grid),
            // 6.12+ root rt_rq with RT_GROUP_SCHED: RT_RUNTIME_SHARE off (6.12
            // features.h:102), timer as 6.6 (rt.c:135-160).
            RtThrottling::GroupSchedOnly => (group_sched, false, false),
        };
        RtBandwidth { period_ns, runtime_ns, enabled, share, grid }
    }
}

/// What the RT class is built with besides the machine.
#[derive(Clone, Copy, Debug)]
pub struct RtConfig {
    pub bw: RtBandwidth,
    /// `sched_rr_timeslice` in ticks.
    pub rr_timeslice: u32,
    /// `RtRules::lowest_distribute`.
    pub distribute: bool,
    /// `RtRules::overload_needs_two`.
    pub overload_needs_two: bool,
}

/// The RT class of every CPU.
#[derive(Clone, Debug)]
pub struct RtClass {
    tasks: Vec<RtTask>,
    rqs: Vec<RtRq>,
    bw: RtBandwidth,
    /// The root domain (`rq->rd->span`) of each CPU.
    rd_span: Vec<CpuSet>,
    rr_timeslice: u32,
    /// The domain walk `find_lowest_rq` shares with `find_later_rq`, and
    /// 6.x's per-CPU distribution cursor (lent to the deadline class).
    pub spread: CpuSpread,
    /// Per CPU: cpupri reads CPUPRI_HIGHER (a deadline entity arrived, 6.6+).
    dl_higher: Vec<bool>,
    /// `RtRules::overload_needs_two`.
    overload_needs_two: bool,
    /// `rt_period_active`, the next expiry and its generation.
    pub timer_active: bool,
    timer_at: u64,
    /// The expiry the timer kept when it stopped (`sched_rt_period_timer`
    /// forwards before the pass that finds it idle): 6.6's restart fires
    /// there if it is still ahead.
    timer_stale: u64,
    timer_generation: u32,
    /// Outboxes the engine drains after each call.
    resched: Vec<CpuId>,
    throttle_events: Vec<RtThrottleEvent>,
    /// A period timer to arm: (time, generation).
    timer_request: Option<(u64, u32)>,
    /// The RT and deadline time each CPU's fair capacity loses
    /// (`rq->rt_avg`, `rq->avg_rt`/`avg_dl`): fed here and by the engine
    /// for the deadline class, read by the balancer (`rt_pressure.rs`).
    pub pressure: RtPressure,
}

impl RtClass {
    /// The RT class of a machine: per CPU its root domain and its
    /// SD_WAKE_AFFINE domain spans (bottom up).
    pub fn new(ntasks: usize, rd_span: Vec<CpuSet>, affine_spans: Vec<Vec<CpuSet>>, cfg: RtConfig) -> RtClass {
        let runtime = cfg.bw.runtime_ns.unwrap_or(u64::MAX);
        let ncpus = rd_span.len();
        let rqs = (0..ncpus).map(|_| RtRq { rt_runtime: runtime, ..RtRq::default() }).collect();
        RtClass {
            tasks: vec![RtTask::default(); ntasks],
            rqs,
            bw: cfg.bw,
            rd_span,
            rr_timeslice: cfg.rr_timeslice,
            spread: CpuSpread::new(affine_spans, cfg.distribute),
            dl_higher: vec![false; ncpus],
            overload_needs_two: cfg.overload_needs_two,
            timer_active: false,
            timer_at: 0,
            timer_stale: 0,
            timer_generation: 0,
            resched: Vec::new(),
            throttle_events: Vec::new(),
            timer_request: None,
            pressure: RtPressure::default(),
        }
    }

    /// `__setscheduler` for an RT policy: `p->prio` and the RR slice (6.x
    /// `__sched_fork` refills it; 4.4 inherits the parent's, and the
    /// model's tasks have no parent: a full slice).
    pub fn init_task(&mut self, task: TaskId, prio: i32, rr: bool, migratable: bool) {
        self.tasks[task.index()] =
            RtTask { prio, rr, time_slice: self.rr_timeslice, on_rq: false, cpu: CpuId(0), migratable };
    }

    // ------------------------------------------------------------ queries

    pub fn prio(&self, task: TaskId) -> i32 {
        self.tasks[task.index()].prio
    }

    pub fn on_rq(&self, task: TaskId) -> bool {
        self.tasks[task.index()].on_rq
    }

    /// `rt_rq->highest_prio.curr`: the best queued prio, `PRIO_NONE` if none.
    pub fn highest_prio(&self, cpu: CpuId) -> i32 {
        self.rqs[cpu.index()].queue.first().map_or(PRIO_NONE, |t| self.prio(*t))
    }

    /// `rt_rq->rt_nr_running`.
    pub fn nr_running(&self, cpu: CpuId) -> u32 {
        self.rqs[cpu.index()].queue.len() as u32
    }

    /// `rt_rq_throttled`.
    pub fn throttled(&self, cpu: CpuId) -> bool {
        self.rqs[cpu.index()].throttled
    }

    /// The root domain of `cpu`.
    pub fn rd_span(&self, cpu: CpuId) -> &CpuSet {
        &self.rd_span[cpu.index()]
    }

    /// `pick_highest_pushable_task` / `pick_next_pushable_task`: the best
    /// queued, not running, migratable task on `cpu` (the `pushable_tasks`
    /// plist: by prio, FIFO within a prio), that `allowed` accepts.
    pub fn highest_pushable(&self, cpu: CpuId, mut allowed: impl FnMut(TaskId) -> bool) -> Option<TaskId> {
        let rq = &self.rqs[cpu.index()];
        let running = rq.curr.map(|(t, _)| t);
        rq.queue.iter().copied().find(|&t| Some(t) != running && self.tasks[t.index()].migratable && allowed(t))
    }

    /// `rt_rq->overloaded` (the CPU's bit in `rd->rto_mask`): 6.12+ a
    /// pushable task is queued (`enqueue_pushable_task`); 4.4/6.6
    /// `update_rt_migration`: a migratory task and two queued
    /// (`rt_nr_migratory && rt_nr_total > 1`; `RtRules::overload_needs_two`),
    /// so a lone RT task queued behind a stop or deadline task is not pushed.
    pub fn overloaded(&self, cpu: CpuId) -> bool {
        if self.overload_needs_two {
            let q = &self.rqs[cpu.index()].queue;
            return q.len() > 1 && q.iter().any(|t| self.tasks[t.index()].migratable);
        }
        self.highest_pushable(cpu, |_| true).is_some()
    }

    /// Time each CPU's RT queue spent throttled up to `now`, and throttles.
    pub fn throttle_stats(&self, cpu: CpuId, now: u64) -> (u64, u64) {
        let rq = &self.rqs[cpu.index()];
        let open = if rq.throttled { now.saturating_sub(rq.throttled_since) } else { 0 };
        (rq.throttled_ns + open, rq.throttles)
    }

    /// The CPU's priority as cpupri files it (`cpupri_set` with
    /// `highest_prio.curr`): its best queued RT prio, or `PRIO_NONE` for a
    /// CPU with no RT task (CPUPRI_NORMAL: fair and idle alike); 6.6+
    /// CPUPRI_HIGHER (above every RT level: −1 here) from a deadline
    /// entity's arrival on an empty `dl_rq` until the next `cpupri_set`.
    fn cpupri(&self, cpu: CpuId) -> i32 {
        if self.dl_higher[cpu.index()] { -1 } else { self.highest_prio(cpu) }
    }

    /// 6.6+ `inc_dl_deadline` (the first deadline entity on `cpu`:
    /// `cpupri_set(CPUPRI_HIGHER)`) and `dec_dl_deadline` (the last one
    /// gone: `cpupri_set(rt.highest_prio.curr)`), 6.18 deadline.c:1790-1816.
    pub fn set_dl_queued(&mut self, cpu: CpuId, queued: bool) {
        self.dl_higher[cpu.index()] = queued;
    }

    /// `cpupri_find(…, NULL)`: whether an allowed CPU of the task's root
    /// domain runs at a priority below the task's (no side effect).
    pub fn cpupri_find(&self, task: TaskId, allowed: &CpuSet) -> bool {
        let t = self.tasks[task.index()];
        self.rd_span[t.cpu.index()].iter_and(allowed).any(|c| self.cpupri(c) > t.prio)
    }

    /// `find_lowest_rq` (4.4 rt.c:1550-1622; 6.6 rt.c:1880-1969): `cpupri_find`
    /// gives the allowed CPUs of the task's root domain at the lowest
    /// priority level below the task's; of them the task's own CPU, else,
    /// walking its CPU's SD_WAKE_AFFINE domains bottom up, `this_cpu` if in
    /// the span, else one of them in the span (4.4 the first; 6.x
    /// round-robin from `this_cpu`'s last choice), else `this_cpu`, else any.
    pub fn find_lowest_rq(&mut self, task: TaskId, allowed: &CpuSet, this_cpu: CpuId) -> Option<CpuId> {
        let t = self.tasks[task.index()];
        if !t.migratable {
            return None;
        }
        let span = self.rd_span[t.cpu.index()].clone();
        // cpupri_find: the lowest level (highest prio number) with a CPU.
        let level = span.iter_and(allowed).map(|c| self.cpupri(c)).filter(|&p| p > t.prio).max()?;
        let mut lowest_mask = CpuSet::empty(self.rqs.len() as u16);
        for c in span.iter_and(allowed) {
            if self.cpupri(c) == level {
                lowest_mask.insert(c);
            }
        }
        self.spread.choose(t.cpu, this_cpu, &lowest_mask, InDomain::FirstOrDistribute)
    }

    // ------------------------------------------------------------ hooks

    /// `set_task_cpu` for an RT task.
    pub fn set_task_cpu(&mut self, task: TaskId, cpu: CpuId) {
        self.tasks[task.index()].cpu = cpu;
    }

    /// `enqueue_task_rt` → `enqueue_rt_entity`: into its prio list, at the
    /// tail (wake-up, fork, migration) or the head (`ENQUEUE_HEAD`), and
    /// `inc_rt_group` → `start_rt_bandwidth`. Returns whether it counts in
    /// `rq->nr_running` (not while the queue is throttled:
    /// `enqueue_top_rt_rq` returns early, 4.4 rt.c:995).
    pub fn enqueue_task(&mut self, task: TaskId, head: bool, now: u64) -> bool {
        let t = self.tasks[task.index()];
        debug_assert!(!t.on_rq, "RT task enqueued twice");
        let pos = self.insert_pos(t.cpu, t.prio, head);
        if t.prio < self.highest_prio(t.cpu) {
            // 6.6+ inc_rt_prio_smp: cpupri_set(prio) overwrites CPUPRI_HIGHER.
            self.dl_higher[t.cpu.index()] = false;
        }
        self.rqs[t.cpu.index()].queue.insert(pos, task);
        self.tasks[task.index()].on_rq = true;
        self.start_rt_bandwidth(now);
        !self.rqs[t.cpu.index()].throttled
    }

    fn insert_pos(&self, cpu: CpuId, prio: i32, head: bool) -> usize {
        let q = &self.rqs[cpu.index()].queue;
        if head {
            q.iter().position(|t| self.prio(*t) >= prio).unwrap_or(q.len())
        } else {
            q.iter().position(|t| self.prio(*t) > prio).unwrap_or(q.len())
        }
    }

    /// `dequeue_task_rt`: `update_curr_rt` (if it runs), then off its list.
    /// Returns whether it counted in `rq->nr_running` (not while throttled).
    pub fn dequeue_task(&mut self, task: TaskId, now: u64) -> bool {
        let cpu = self.tasks[task.index()].cpu;
        if self.rqs[cpu.index()].curr.is_some_and(|(c, _)| c == task) {
            self.update_curr_rt(cpu, now);
        }
        let before = self.highest_prio(cpu);
        let rq = &mut self.rqs[cpu.index()];
        if let Some(i) = rq.queue.iter().position(|&t| t == task) {
            rq.queue.remove(i);
        }
        if self.highest_prio(cpu) != before {
            // 6.6+ dec_rt_prio_smp: cpupri_set(highest_prio.curr).
            self.dl_higher[cpu.index()] = false;
        }
        self.tasks[task.index()].on_rq = false;
        !self.rqs[cpu.index()].throttled
    }

    /// `pick_next_task_rt` / `pick_task_rt` + `set_next_task_rt`: the head
    /// of the best list, if the queue is not throttled (`rt_queued`); it
    /// starts being charged now.
    pub fn pick_next_task(&mut self, cpu: CpuId, now: u64) -> Option<TaskId> {
        let rq = &mut self.rqs[cpu.index()];
        if rq.throttled {
            return None;
        }
        let next = *rq.queue.first()?;
        rq.curr = Some((next, now));
        Some(next)
    }

    /// `put_prev_task_rt`: `update_curr_rt`; the task stays on its list.
    pub fn put_prev_task(&mut self, task: TaskId, now: u64) {
        let cpu = self.tasks[task.index()].cpu;
        if self.rqs[cpu.index()].curr.is_some_and(|(c, _)| c == task) {
            self.update_curr_rt(cpu, now);
            self.rqs[cpu.index()].curr = None;
            // 6.x put_prev_task_rt: update_rt_rq_load_avg(.., 1).
            self.pressure.running(ClassKind::Rt, cpu.index(), now);
        }
    }

    /// `update_curr` (a kernel entry reading the task's CPU time).
    pub fn update_curr(&mut self, task: TaskId, now: u64) {
        let cpu = self.tasks[task.index()].cpu;
        if self.rqs[cpu.index()].curr.is_some_and(|(c, _)| c == task) {
            self.update_curr_rt(cpu, now);
        }
    }

    /// `task_tick_rt`: `update_curr_rt`, then the RR slice: one tick less;
    /// at 0 a fresh slice, and to the tail of its list (with a resched) if
    /// it is not alone there (4.4 rt.c:2217-2248; 6.18 rt.c:2506).
    pub fn task_tick(&mut self, task: TaskId, now: u64) -> bool {
        let cpu = self.tasks[task.index()].cpu;
        self.update_curr_rt(cpu, now);
        // 6.x task_tick_rt: update_rt_rq_load_avg(.., 1).
        self.pressure.running(ClassKind::Rt, cpu.index(), now);
        let t = &mut self.tasks[task.index()];
        if !t.rr {
            return false;
        }
        t.time_slice = t.time_slice.saturating_sub(1);
        if t.time_slice > 0 {
            return false;
        }
        t.time_slice = self.rr_timeslice;
        let prio = t.prio;
        let peers = self.rqs[cpu.index()].queue.iter().filter(|&&o| self.prio(o) == prio).count();
        if peers > 1 {
            self.requeue_tail(task);
            return true;
        }
        false
    }

    /// `yield_task_rt`: to the tail of its list.
    pub fn yield_task(&mut self, task: TaskId) {
        self.requeue_tail(task);
    }

    /// `requeue_task_rt(rq, p, head)`.
    fn requeue(&mut self, task: TaskId, head: bool) {
        let cpu = self.tasks[task.index()].cpu;
        let rq = &mut self.rqs[cpu.index()];
        if let Some(i) = rq.queue.iter().position(|&t| t == task) {
            rq.queue.remove(i);
            let pos = self.insert_pos(cpu, self.prio(task), head);
            self.rqs[cpu.index()].queue.insert(pos, task);
        }
    }

    fn requeue_tail(&mut self, task: TaskId) {
        self.requeue(task, false);
    }

    /// `check_preempt_equal_prio`'s requeue: the woken task goes to the
    /// head of its list, to run before the current one.
    pub fn requeue_head(&mut self, task: TaskId) {
        self.requeue(task, true);
    }

    // ------------------------------------------------------------ bandwidth

    /// `update_curr_rt` (4.4 rt.c:930-968, 6.6 rt.c:1045-1085): the running
    /// task's time since `exec_start` goes into `rt_time` (when throttling
    /// runs), and `sched_rt_runtime_exceeded` may throttle the queue.
    fn update_curr_rt(&mut self, cpu: CpuId, now: u64) {
        let rq = &mut self.rqs[cpu.index()];
        let Some((task, start)) = rq.curr else { return };
        let delta = now.saturating_sub(start);
        rq.curr = Some((task, now));
        // 4.4 rt.c:952: sched_rt_avg_update, before the bandwidth test.
        self.pressure.sched_rt_avg_update(cpu.index(), now, delta);
        let rq = &mut self.rqs[cpu.index()];
        if !self.bw.enabled || self.bw.runtime_ns.is_none() || delta == 0 {
            return;
        }
        rq.rt_time += delta;
        if self.sched_rt_runtime_exceeded(cpu, now) {
            self.resched.push(cpu);
            // 6.6 `update_curr_rt` (rt.c:1081-1082): an exceeded budget
            // restarts a stopped period timer (4.4 leaves it to the enqueue).
            if !self.bw.grid {
                self.start_rt_bandwidth(now);
            }
        }
    }

    /// Deadline time counted against the RT budget (4.4 deadline.c:885-897,
    /// 6.6 1384-1396: `update_curr_dl` adds it to `rq->rt.rt_time`).
    /// Only gated by `sched_rt_bandwidth_account` (4.4 rt.c:615-621: the
    /// period timer runs, or `rt_time` is under the runtime); it neither
    /// starts the timer nor throttles: the RT task's next `update_curr_rt` does.
    pub fn account_other(&mut self, cpu: CpuId, delta: u64) {
        if !self.bw.enabled || self.bw.runtime_ns.is_none() || delta == 0 {
            return;
        }
        let rq = &mut self.rqs[cpu.index()];
        if self.timer_active || rq.rt_time < rq.rt_runtime {
            rq.rt_time += delta;
        }
    }

    /// `sched_rt_runtime_exceeded` (4.4 rt.c:883-924; 6.6 rt.c:998-1039).
    fn sched_rt_runtime_exceeded(&mut self, cpu: CpuId, now: u64) -> bool {
        let period = self.bw.period_ns;
        if self.rqs[cpu.index()].throttled {
            return true;
        }
        if self.rqs[cpu.index()].rt_runtime >= period {
            return false;
        }
        self.balance_runtime(cpu);
        let rq = &mut self.rqs[cpu.index()];
        if rq.rt_time > rq.rt_runtime {
            if self.bw.runtime_ns.unwrap_or(0) > 0 {
                rq.throttled = true;
            } else {
                // `rt_b->rt_runtime == 0`: the kernel resets rt_time and
                // does not throttle (4.4 rt.c:908-913).
                rq.rt_time = 0;
            }
            if rq.throttled {
                rq.throttled_since = now;
                rq.throttles += 1;
                let nr = rq.queue.len() as i32;
                self.throttle_events.push(RtThrottleEvent { cpu, throttled: true, nr_delta: -nr });
                return true;
            }
        }
        false
    }

    /// `balance_runtime` → `do_balance_runtime` (4.4 rt.c:627-674), with
    /// RT_RUNTIME_SHARE only: borrow `(their runtime − their rt_time) /
    /// weight` from each other CPU of the root domain, in CPU order, up to
    /// a full period. Never given back at a period edge (only on a root
    /// domain rebuild, which the model has none of).
    fn balance_runtime(&mut self, cpu: CpuId) {
        if !self.bw.share || self.rqs[cpu.index()].rt_time <= self.rqs[cpu.index()].rt_runtime {
            return;
        }
        let period = self.bw.period_ns;
        let span = self.rd_span[cpu.index()].clone();
        let weight = span.len() as u64;
        for i in span.iter() {
            if i == cpu {
                continue;
            }
            let iter = &self.rqs[i.index()];
            let diff = iter.rt_runtime as i64 - iter.rt_time as i64;
            if diff > 0 {
                let mut diff = diff as u64 / weight;
                let mine = self.rqs[cpu.index()].rt_runtime;
                if mine + diff > period {
                    diff = period - mine;
                }
                self.rqs[i.index()].rt_runtime -= diff;
                self.rqs[cpu.index()].rt_runtime += diff;
                if self.rqs[cpu.index()].rt_runtime == period {
                    break;
                }
            }
        }
    }

    /// `start_rt_bandwidth` (from every RT enqueue, `inc_rt_group`): if the
    /// period timer is not running, start it. 4.4: first expiry at the next
    /// multiple of the period (`hrtimer_forward_now(timer, rt_period)` from
    /// an expiry on that grid). 6.6+ (`do_start_rt_bandwidth`,
    /// `hrtimer_forward_now(timer, 0)`, rt.c:115): at the expiry it kept
    /// when it stopped if that is still ahead, else at once, with a pass.
    fn start_rt_bandwidth(&mut self, now: u64) {
        if !self.bw.enabled || self.bw.runtime_ns.is_none() || self.timer_active {
            return;
        }
        self.timer_active = true;
        let p = self.bw.period_ns;
        let at = if self.bw.grid {
            (now / p + 1) * p
        } else if now < self.timer_stale {
            self.timer_stale
        } else {
            now
        };
        self.arm_timer(at);
    }

    fn arm_timer(&mut self, at: u64) {
        self.timer_at = at;
        self.timer_generation = self.timer_generation.wrapping_add(1);
        self.timer_request = Some((at, self.timer_generation));
    }

    /// Whether a period-timer event is the armed one.
    pub fn timer_current(&self, generation: u32) -> bool {
        self.timer_active && generation == self.timer_generation
    }

    /// `sched_rt_period_timer` → `do_sched_rt_period_timer` (4.4
    /// rt.c:800-869; 6.6 rt.c:901-984), once per period that passed
    /// (`overrun` is 1: the timer fires at each expiry). Each CPU's
    /// `rt_time` drops by its runtime; a throttled queue whose `rt_time` is
    /// back under its runtime is unthrottled (`sched_rt_rq_enqueue`:
    /// counted again and rescheduled). The timer stops after a pass that
    /// found no RT time and no RT task.
    pub fn period_timer(&mut self, now: u64) {
        let mut idle = true;
        let mut any_throttled = false;
        let global = self.bw.runtime_ns.unwrap_or(u64::MAX);
        for c in 0..self.rqs.len() {
            let cpu = CpuId(c as u16);
            // 6.6: without RT_RUNTIME_SHARE each CPU's runtime is restored
            // every period (rt.c:931-933); an idle CPU is skipped.
            if !self.bw.share {
                self.rqs[c].rt_runtime = global;
            }
            let mut enqueue = false;
            let rq = &self.rqs[c];
            if rq.rt_time > 0 {
                if rq.throttled {
                    self.balance_runtime(cpu);
                }
                let rq = &mut self.rqs[c];
                let runtime = rq.rt_runtime;
                rq.rt_time -= rq.rt_time.min(runtime);
                if rq.throttled && rq.rt_time < runtime {
                    rq.throttled = false;
                    rq.throttled_ns += now.saturating_sub(rq.throttled_since);
                    enqueue = true;
                }
                if rq.rt_time > 0 || !rq.queue.is_empty() {
                    idle = false;
                }
            } else if !rq.queue.is_empty() {
                idle = false;
                // Not throttled (rt_time 0 cannot be over the runtime).
            }
            if self.rqs[c].throttled {
                any_throttled = true;
            }
            if enqueue && !self.rqs[c].queue.is_empty() {
                // sched_rt_rq_enqueue: enqueue_top_rt_rq + resched_curr.
                let nr = self.rqs[c].queue.len() as i32;
                self.throttle_events.push(RtThrottleEvent { cpu, throttled: false, nr_delta: nr });
                self.resched.push(cpu);
            }
        }
        if idle && !any_throttled {
            self.timer_active = false;
            self.timer_stale = now + self.bw.period_ns;
        } else {
            let at = now + self.bw.period_ns;
            self.arm_timer(at);
        }
    }

    // ------------------------------------------------------------ outboxes

    pub fn pop_resched(&mut self) -> Option<CpuId> {
        self.resched.pop()
    }

    pub fn take_throttle_events(&mut self) -> Vec<RtThrottleEvent> {
        std::mem::take(&mut self.throttle_events)
    }

    pub fn take_timer_request(&mut self) -> Option<(u64, u32)> {
        self.timer_request.take()
    }

    /// Whether any outbox holds something.
    #[inline(always)]
    pub fn has_outbox(&self) -> bool {
        !self.resched.is_empty() || !self.throttle_events.is_empty() || self.timer_request.is_some()
    }

    /// The running RT task of `cpu`, if any.
    pub fn curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.rqs[cpu.index()].curr.map(|(t, _)| t)
    }

    /// The queue of `cpu`, best first (checks and tests).
    pub fn queue(&self, cpu: CpuId) -> &[TaskId] {
        &self.rqs[cpu.index()].queue
    }

    /// `rt_time` and `rt_runtime` of `cpu` (checks and tests).
    pub fn budget(&self, cpu: CpuId) -> (u64, u64) {
        (self.rqs[cpu.index()].rt_time, self.rqs[cpu.index()].rt_runtime)
    }

    /// The bandwidth settings in force.
    pub fn bandwidth(&self) -> RtBandwidth {
        self.bw
    }

    /// `p->nr_cpus_allowed > 1`.
    pub fn migratable(&self, task: TaskId) -> bool {
        self.tasks[task.index()].migratable
    }

    pub fn task_cpu(&self, task: TaskId) -> CpuId {
        self.tasks[task.index()].cpu
    }
}
