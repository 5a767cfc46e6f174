//! The discrete-event engine: the machine's run queues, the tasks, and the one
//! `match` that dispatches every event.
//!
//! Control flow for one event: pop `(time, event)`, set the clock, dispatch,
//! then `settle()`: every CPU flagged `need_resched` during the event goes
//! through `schedule()` (the preemption point), which may switch tasks and let
//! the incoming task execute its next steps. Tick-found preemption therefore
//! takes effect at the tick, and wakeup preemption at the wakeup (kernel.md §1.9).
//!
//! Bounds: `advance` stops at an event budget, the scenario's `events_max`,
//! or its duration. One event executes at most `STEPS_PER_EVENT` program
//! steps and `SETTLE_MAX` calls to `schedule()`; the rest is deferred to an
//! `Event::Resume` at the same instant, so even a program that loops in zero
//! time (a `yield` ping-pong) is bounded by the event budget.

use crate::block::queue::BioDone;
use crate::block::request::SECTOR_BYTES;
use crate::block::{Device, Elevator, IoClass, IoPrio, Ioprio, IoprioClass, RequestQueue};
use crate::cpuset::CpuSet;
use crate::event::{Event, EventQueue};
use crate::ids::{CfsRqId, CpuId, DeviceId, EntityId, GroupId, RequestId, SourceId, TaskId};
use crate::metrics::history::{EevdfState, PrevState, RecordKind, SchedRecord};
use crate::metrics::recorder::{Recorder, WaitKind};
use crate::rng::SimRng;
use crate::scenario::validate::IO_SIZE_MAX;
use crate::scenario::{Scenario, ScenarioSpec};
use crate::sched::SchedClass;
use crate::sched::balance::linux44::{Placement, Smp44};
use crate::sched::balance::{Machine, MigrateCause, TaskHotInputs};
use crate::sched::cfs_tasks::CfsTasks;
use crate::sched::eevdf::{DEQUEUE_DELAYED, ENQUEUE_DELAYED};
use crate::sched::entity::SchedEntity;
use crate::sched::fair::{Cfs, DEQUEUE_SLEEP, ENQUEUE_WAKEUP, ENQUEUE_WAKING, FairConfig, WF_FORK};
use crate::sched::group::MIN_SHARES;
use crate::sched::model::WakeupVerdict;
use crate::sched::topology::{SD_BALANCE_FORK, SD_BALANCE_WAKE, Topology};
use crate::sched::tunables::tick_nsec;
use crate::sched::weights::LoadWeight;
use crate::task::{BlockOn, ITEMS_QUEUED_MAX, IoOp, IoWait, Item, Task, TaskIo, TaskState};
use crate::tick::{ElisionStats, TickCalendar};
use crate::time::SimTime;
use crate::workload::limiter::{Limiter, LimiterId};
use crate::workload::{Dist, IoStep, Pattern, Step};
use std::collections::VecDeque;

/// Program steps one event may execute before the rest is deferred.
const STEPS_PER_EVENT: u32 = 256;
/// `schedule()` calls one event may make before the rest are deferred.
const SETTLE_MAX: u32 = 256;
/// Events in a row at one instant (beyond a few per task, source and CPU)
/// after which the run is declared stalled.
const SAME_INSTANT_EVENTS: u64 = 100_000;
/// `hrtick_start` (4.4 core.c): "Don't schedule slices shorter than 10000ns".
const HRTICK_MIN_NS: u64 = 10_000;

/// How many events `advance` may dispatch before it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventBudget(pub u64);

impl EventBudget {
    pub const UNLIMITED: EventBudget = EventBudget(u64::MAX);
}

/// Why `advance` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The scenario's duration has been simulated.
    TimeLimit,
    /// The scenario's `events_max` was reached first: the report is partial.
    EventLimit,
    /// Nothing is left to happen (every task exited); time was run to the end.
    Quiescent,
    /// This call's budget is spent; call `advance` again to continue.
    BudgetSpent,
    /// Simulated time stopped advancing: a program loops without taking time
    /// (a zero-length `run` with `yield`, a `wake`/`wait` ping-pong). The
    /// report covers the run up to that instant.
    Stalled,
}

impl StopReason {
    pub fn name(self) -> &'static str {
        match self {
            StopReason::TimeLimit => "time_limit",
            StopReason::EventLimit => "event_limit",
            StopReason::Quiescent => "quiescent",
            StopReason::BudgetSpent => "budget_spent",
            StopReason::Stalled => "stalled",
        }
    }

    /// Whether the run is over (any reason but `BudgetSpent`).
    pub fn is_final(self) -> bool {
        self != StopReason::BudgetSpent
    }
}

/// Per-CPU state outside CFS (`struct rq`).
#[derive(Clone, Debug)]
struct Rq {
    curr: Option<TaskId>,
    /// The root CFS run queue (`rq->cfs`).
    root: CfsRqId,
    /// Runnable tasks, the running one included (`rq->nr_running`).
    nr_running: u32,
    need_resched: bool,
    tick_armed: bool,
    /// A wake-up's resched is held back by the machine's wake-up latency
    /// (`machine.wakeup_latency`): a `Resume` event delivers it.
    resched_deferred: bool,
    hrtick_armed: bool,
    hrtick_generation: u32,
    idle_since: SimTime,
}

/// An arrival source bound to one target task.
#[derive(Clone, Debug)]
struct Source {
    target: TaskId,
    /// Its declaration (index into `ScenarioSpec::sources`).
    decl: u32,
    interval: Dist,
    work: Dist,
    burst: u32,
    rng: SimRng,
}

/// A run in progress.
#[derive(Clone, Debug)]
pub struct Simulation {
    pub(crate) spec: ScenarioSpec,
    variant: Option<String>,
    now: SimTime,
    end: SimTime,
    queue: EventQueue,
    pub(crate) cfs: Cfs,
    rqs: Vec<Rq>,
    /// `rq->cfs_tasks` of every CPU.
    cfs_tasks: CfsTasks,
    /// Placement and balancing (4.4 fair.c's SMP half) and its state.
    /// (Taken out while it runs: see `with_smp`.)
    /// Boxed so taking it out moves a pointer, not the whole state.
    pub(crate) smp: Option<Box<Smp44>>,
    /// `now / tick_ns`, updated when the clock moves.
    jiffies: u64,
    pub(crate) tasks: Vec<Task>,
    sources: Vec<Source>,
    /// One request queue per block device, by `DeviceId`.
    pub(crate) queues: Vec<RequestQueue>,
    pub(crate) recorder: Recorder,
    tick_ns: u64,
    events: u64,
    /// Events dispatched, per kind (`Event::kind`).
    event_counts: [u64; Event::KINDS.len()],
    /// Exact event elision (`tick.rs`); off only through `set_elision`.
    elision: bool,
    /// With elision, every CPU's next tick (not in `queue`).
    ticks: TickCalendar,
    resched: VecDeque<CpuId>,
    finished: Option<StopReason>,
    /// `min_vruntime` of each run queue at the last `check_invariants`.
    seen_min_vruntime: Vec<i64>,
    seen_now: SimTime,
    /// Program steps left for the current event.
    steps_left: u32,
    /// Events dispatched in a row without the clock moving, and the limit.
    same_instant_events: u64,
    same_instant_max: u64,
    /// `machine.wakeup_latency` samples (its own stream: noise never shifts
    /// the tasks' draws).
    noise_rng: SimRng,
    /// Requests across hops (`forward`): cursors, `hop_work` streams, per-source counts.
    pub(crate) hops: crate::requests::Hops,
    /// Elastic CPU limiters (`[limiters.NAME]`), by `LimiterId`.
    pub(crate) limiters: Vec<Limiter>,
    /// Userspace I/O schedulers (`[io_queues.NAME]`), in name order.
    pub(crate) io_queues: Vec<crate::userspace_io::IoQueue>,
}

impl Simulation {
    /// Builds the machine and schedules every task's creation and every source.
    pub fn new(scenario: &Scenario) -> Simulation {
        let spec = scenario.spec.clone();
        let ncpus = usize::from(spec.cpus);
        let config = FairConfig {
            model: spec.kernel,
            tunables: spec.tunables.clone(),
            features: spec.features,
            eevdf: spec.eevdf,
            features_eevdf: spec.eevdf_features,
            tick_nsec: crate::sched::tunables::tick_nsec(spec.hz),
            bandwidth: (spec.bandwidth_rules, spec.bandwidth_slice_us),
        };
        let mut cfs = Cfs::new(config, spec.groups.group_load, spec.cpus);
        let mut rqs = Vec::with_capacity(ncpus);
        for c in 0..spec.cpus {
            rqs.push(Rq {
                curr: None,
                root: CfsRqId(u32::from(c)),
                nr_running: 0,
                need_resched: false,
                tick_armed: false,
                hrtick_armed: false,
                hrtick_generation: 0,
                idle_since: SimTime::ZERO,
                resched_deferred: false,
            });
        }
        let root_rng = SimRng::new(spec.seed);
        let mut queue = EventQueue::new();
        let task_count: usize = spec.tasks.iter().map(|t| t.count as usize).sum();
        let source_instances: usize = spec.sources.iter().map(|s| spec.tasks[s.target].count as usize).sum();
        let mut tasks = Vec::new();
        for (si, ts) in spec.tasks.iter().enumerate() {
            for i in 0..ts.count {
                let id = TaskId(ts.first.0 + i);
                debug_assert_eq!(id.index(), tasks.len());
                let comm = ts.comm(i);
                let load = LoadWeight::for_task(ts.policy, ts.nice);
                cfs.entities.push(SchedEntity::new(load, CfsRqId(0), ts.policy));
                if let Some(slice) = ts.slice_ns {
                    cfs.set_custom_slice(EntityId(id.0), slice);
                }
                tasks.push(Task {
                    rng: root_rng.stream(&format!("task/{comm}")),
                    comm,
                    tid: id.0 + 1,
                    spec: si,
                    instance: i,
                    policy: ts.policy,
                    nice: ts.nice,
                    group: GroupId(ts.group as u32),
                    affinity: ts.affinity[i as usize].clone(),
                    nr_cpus_allowed: ts.affinity[i as usize].len() as u32,
                    state: TaskState::Unstarted,
                    cpu: CpuId(0),
                    pc: 0,
                    iterations_done: 0,
                    in_burst: false,
                    work_left_ns: 0,
                    progress_from: SimTime::ZERO,
                    burst_generation: 0,
                    kernel_every_ns: None,
                    noise_ns: 0,
                    burst_end_at: SimTime::ZERO,
                    timer_generation: 0,
                    job: None,
                    pending_wakeups: 0,
                    items: VecDeque::new(),
                    serving: None,
                    served_this_pass: false,
                    waiting: None,
                    sched_in_at: SimTime::ZERO,
                    sched_out_at: SimTime::ZERO,
                    last_wait_ns: 0,
                    last_sch_delay_ns: 0,
                    runtime_ns: 0,
                    switches: 0,
                    io: TaskIo::default(),
                    limited_work_left_ns: 0,
                    grant_left_ns: 0,
                    limited_chunk: false,
                    grant_wait_from: SimTime::ZERO,
                });
                queue.push(SimTime(ts.start_ns), Event::TaskStart { task: id });
            }
        }
        // Task entities are EntityId(task); group entities follow.
        for g in &spec.groups.groups[1..] {
            let parent = GroupId(g.parent.expect("only the root has no parent") as u32);
            cfs.create_group(g.path.clone(), parent, g.shares, &g.cpus);
        }
        // tg_set_cfs_bandwidth at t = 0. 6.6+ arms the period timer at a
        // random point of the default 100 ms period (init_cfs_bandwidth,
        // get_random_u32_below), which tg_set's period then forwards from;
        // earlier kernels start on the period grid.
        for (i, g) in spec.groups.groups.iter().enumerate() {
            let Some(b) = g.bandwidth else { continue };
            let phase = if spec.bandwidth_rules.random_period_phase() {
                let mut r = root_rng.stream(&format!("cfs_bandwidth/{}", g.path));
                r.range_inclusive(0, crate::sched::bandwidth::DEFAULT_CFS_PERIOD_NS - 1) % b.period_ns
            } else {
                0
            };
            cfs.set_cfs_bandwidth(GroupId(i as u32), b, phase);
        }
        push_bandwidth_timers(&mut queue, &mut cfs.bw.timers);
        let mut sources = Vec::new();
        for (decl, s) in spec.sources.iter().enumerate() {
            let ts = &spec.tasks[s.target];
            for i in 0..ts.count {
                let target = TaskId(ts.first.0 + i);
                let id = SourceId(sources.len() as u32);
                let mut rng = root_rng.stream(&format!("source/{}/{}", s.name, ts.comm(i)));
                let first = SimTime(s.start_ns).after(s.interval.sample(&mut rng));
                sources.push(Source {
                    target,
                    decl: decl as u32,
                    interval: s.interval.clone(),
                    work: s.work.clone(),
                    burst: s.burst,
                    rng,
                });
                queue.push(first, Event::Arrival { source: id });
            }
        }
        let queues = spec
            .devices
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let device = Device::new(d.clone(), root_rng.stream(&format!("device/{}", d.name)));
                let prio = tasks.iter().map(|t: &Task| IoPrio::of_task(t.policy, t.nice)).collect::<Vec<_>>();
                // `ionice` overrides (CFQ's be/N and idle; rt is refused with cfq).
                let prio = prio
                    .into_iter()
                    .zip(tasks.iter())
                    .map(|(p, t)| match spec.tasks[t.spec].ionice {
                        Some(Ioprio { class: IoprioClass::Idle, .. }) => IoPrio { class: IoClass::Idle, prio: 7 },
                        Some(Ioprio { level, .. }) => IoPrio { class: IoClass::Be, prio: level },
                        None => p,
                    })
                    .collect();
                let elevator = Elevator::new(&d.elevator, prio, spec.hz, tick_nsec(spec.hz));
                // BFQ's blkcg groups and weights (other elevators ignore them).
                let (bfq_groups, task_blkcg) =
                    spec.groups.bfq_groups(&tasks.iter().map(|t: &Task| t.group.0 as usize).collect::<Vec<_>>());
                let mut elevator = elevator.with_bfq_groups(&task_blkcg, bfq_groups);
                if !d.elevator.is_mq() {
                    return RequestQueue::new(DeviceId(i as u16), device, elevator, tasks.len(), tick_nsec(spec.hz));
                }
                // blk-mq (6.18): each task's ioprio (`ionice`, else from nice and policy).
                elevator.set_task_ioprio(
                    tasks.iter().map(|t: &Task| Ioprio::of_task(t.policy, t.nice, spec.tasks[t.spec].ionice)).collect(),
                );
                let mut q = RequestQueue::new(DeviceId(i as u16), device, elevator, tasks.len(), tick_nsec(spec.hz));
                q.enable_mq(spec.device_mq.get(i).copied().unwrap_or_default(), ncpus);
                q
            })
            .collect();
        let victim = &spec.tasks[spec.victim];
        let topo = Topology::build(spec.machine.shape, &spec.machine.isolcpus);
        let mut recorder = Recorder::new(
            tasks.len(),
            ncpus,
            spec.groups.groups.len(),
            (victim.first.0, victim.first.0 + victim.count),
            spec.history_window_ns,
            topo.balance_span_ids(),
        );
        recorder.set_warmup(SimTime(spec.warmup_ns));
        let seen_min_vruntime = cfs.cfs_rqs.iter().map(|q| q.min_vruntime).collect();
        let mut ticks = TickCalendar::new(ncpus);
        if !spec.machine.nohz_idle {
            // A periodic tick on every CPU, idle or not, from the first one
            // (in the calendar: `set_elision(false)` queues them as events).
            let tick = tick_nsec(spec.hz);
            for (c, rq) in rqs.iter_mut().enumerate() {
                rq.tick_armed = true;
                let first = if spec.machine.tick_offset_ns > 0 { spec.machine.tick_offset_ns } else { tick };
                ticks.arm(CpuId(c as u16), queue.reserve_key(SimTime(first)));
            }
        }
        let limiters: Vec<Limiter> = spec.limiters.iter().map(|l| Limiter::new(l.clone(), spec.cpus)).collect();
        for (i, l) in limiters.iter().enumerate() {
            queue.push(SimTime(l.spec.adjust_every_ns), Event::LimiterAdjust { limiter: LimiterId(i as u16) });
        }
        let hz = u64::from(spec.hz);
        let smp = Some(Box::new(Smp44::new(topo, hz, tasks.len(), spec.machine.nohz_idle)));
        let hops = crate::requests::Hops::new(&spec, &root_rng);
        let spec_io_queues = spec.io_queues.iter().cloned().map(crate::userspace_io::IoQueue::new).collect();
        Simulation {
            cfs_tasks: CfsTasks::new(ncpus, tasks.len()),
            jiffies: 0,
            smp,
            tick_ns: tick_nsec(spec.hz),
            end: SimTime(spec.duration_ns),
            spec,
            variant: scenario.variant().map(str::to_string),
            now: SimTime::ZERO,
            queue,
            cfs,
            rqs,
            tasks,
            sources,
            queues,
            recorder,
            events: 0,
            event_counts: [0; Event::KINDS.len()],
            elision: true,
            ticks,
            resched: VecDeque::new(),
            finished: None,
            seen_min_vruntime,
            seen_now: SimTime::ZERO,
            steps_left: STEPS_PER_EVENT,
            same_instant_events: 0,
            noise_rng: root_rng.stream("machine/wakeup_latency"),
            hops,
            same_instant_max: SAME_INSTANT_EVENTS + 4 * (task_count + source_instances + ncpus) as u64,
            limiters,
            io_queues: spec_io_queues,
        }
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events dispatched so far (cancelled timers are not counted).
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Debug switch: with `false`, no event is elided (every tick is
    /// dispatched as an event). For tests and debugging only: the results
    /// are the same either way (the equivalence tests check it), only the
    /// event count differs. Call before the first `advance`.
    pub fn set_elision(&mut self, on: bool) {
        if !on {
            // The ticks armed so far become events, each under its key.
            while let Some((key, cpu)) = self.ticks.pop() {
                self.queue.push_reserved(key, Event::Tick { cpu });
            }
        }
        self.elision = on;
    }

    /// What elision saved so far.
    pub fn elision_stats(&self) -> ElisionStats {
        self.ticks.stats
    }

    /// Events dispatched so far per kind, with `Event::KINDS`' names.
    pub fn event_counts(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        Event::KINDS.iter().copied().zip(self.event_counts.iter().copied())
    }

    pub fn spec(&self) -> &ScenarioSpec {
        &self.spec
    }

    pub fn variant(&self) -> Option<&str> {
        self.variant.as_deref()
    }

    pub fn finished(&self) -> Option<StopReason> {
        self.finished
    }

    /// Runs until the duration is simulated, `events_max` is reached, nothing
    /// is left to do, or `budget` events have been dispatched in this call.
    pub fn advance(&mut self, budget: EventBudget) -> StopReason {
        if let Some(r) = self.finished {
            return r;
        }
        let mut dispatched = 0u64;
        loop {
            if self.events >= self.spec.events_max {
                return self.finish(StopReason::EventLimit, self.now);
            }
            if dispatched >= budget.0 {
                return StopReason::BudgetSpent;
            }
            let next = self.queue.peek_key();
            // A tick ordered before the next event runs first (tick.rs).
            if let Some((key, cpu)) = self.ticks.peek()
                && next.is_none_or(|n| key < n)
                && EventQueue::key_time(key) < self.end
            {
                self.ticks.pop();
                match self.calendar_tick(EventQueue::key_time(key), cpu) {
                    Some(counted) => dispatched += u64::from(counted),
                    None => return self.finish(StopReason::Stalled, self.now),
                }
                continue;
            }
            let Some(at) = next.map(EventQueue::key_time) else {
                // A tick at or after the end stands for a queued one.
                let reason = if self.ticks.peek().is_some() { StopReason::TimeLimit } else { StopReason::Quiescent };
                return self.finish(reason, self.end);
            };
            if at >= self.end {
                return self.finish(StopReason::TimeLimit, self.end);
            }
            let (at, event) = self.queue.pop().expect("peeked");
            debug_assert!(at >= self.now, "time went backwards: seed {}", self.spec.seed);
            if self.is_stale(&event) {
                continue;
            }
            if self.stalls_at(at) {
                return self.finish(StopReason::Stalled, self.now);
            }
            self.set_clock(at);
            self.events += 1;
            self.event_counts[event.kind()] += 1;
            dispatched += 1;
            self.steps_left = STEPS_PER_EVENT;
            self.dispatch(event);
            self.settle();
        }
    }

    /// Runs to the end with no per-call budget.
    pub fn run_to_end(&mut self) -> StopReason {
        self.advance(EventBudget::UNLIMITED)
    }

    /// Runs to the end one event at a time, with `check_invariants` after
    /// each (tests and debugging: far slower than `run_to_end`). Bounded as
    /// `advance` is: by the duration and `limits.events_max`.
    pub fn run_to_end_checked(&mut self) -> Result<StopReason, String> {
        loop {
            let r = self.advance(EventBudget(1));
            self.check_invariants()?;
            if r.is_final() {
                return Ok(r);
            }
        }
    }

    /// Counts one more event at `at` if the clock has not moved, and says
    /// whether that is one too many (the clock stalled); a new time resets it.
    fn stalls_at(&mut self, at: SimTime) -> bool {
        if at != self.now {
            self.same_instant_events = 0;
            return false;
        }
        self.same_instant_events += 1;
        self.same_instant_events > self.same_instant_max
    }

    /// Moves the clock to `at`: `now`, the class's clock, and `jiffies`
    /// (ticks fall at tick_offset + k·TICK_NSEC; jiffies counts them).
    fn set_clock(&mut self, at: SimTime) {
        if at != self.now {
            let off = self.spec.machine.tick_offset_ns;
            self.jiffies = (at.ns() + (self.tick_ns - off) % self.tick_ns) / self.tick_ns;
        }
        self.now = at;
        self.cfs.clock = at.ns();
    }

    /// A tick from the calendar, at its place in the `(time, seq)` order:
    /// what its event would do, counted as an event only if it acted.
    /// An idle CPU's tick (NO_HZ idle) was stopped when the CPU went idle
    /// (`tick_nohz_idle_enter`): it only stops being armed. A busy CPU's tick
    /// runs `scheduler_tick` and `settle` as the event would, and counts when
    /// it rescheduled, ran the periodic balance (`jiffies >= rq->next_balance`)
    /// or kicked the NO_HZ balancer; otherwise it only accounted (update_curr,
    /// PELT, `cpu_load[]`). Returns whether it counted, or None when the
    /// clock stalled (as `advance` stops for events).
    fn calendar_tick(&mut self, at: SimTime, cpu: CpuId) -> Option<bool> {
        if self.spec.machine.nohz_idle && self.rqs[cpu.index()].curr.is_none() {
            self.rqs[cpu.index()].tick_armed = false;
            self.ticks.stats.idle_ticks += 1;
            return Some(false);
        }
        if self.stalls_at(at) {
            return None;
        }
        self.set_clock(at);
        self.steps_left = STEPS_PER_EVENT;
        let balance_due = self.smp.as_ref().is_some_and(|smp| smp.balance_due(cpu, self.jiffies));
        let pushed = self.queue.pushed();
        self.scheduler_tick(cpu);
        let acted = balance_due || !self.resched.is_empty() || self.queue.pushed() > pushed;
        if acted {
            self.events += 1;
            self.event_counts[Event::Tick { cpu }.kind()] += 1;
            self.ticks.stats.busy_ticks_acting += 1;
            self.settle();
        } else {
            self.ticks.stats.busy_ticks += 1;
        }
        Some(acted)
    }

    fn finish(&mut self, reason: StopReason, at: SimTime) -> StopReason {
        self.now = self.now.max(at);
        self.finished = Some(reason);
        reason
    }

    /// Cancelled events are dropped without counting or moving the clock.
    fn is_stale(&self, event: &Event) -> bool {
        match *event {
            Event::BurstEnd { task, generation } | Event::KernelEntry { task, generation } => {
                let t = &self.tasks[task.index()];
                generation != t.burst_generation || t.state != TaskState::Running
            }
            Event::TimerExpired { task, generation } => {
                let t = &self.tasks[task.index()];
                generation != t.timer_generation || t.state != TaskState::Blocked(BlockOn::Timer)
            }
            Event::HrTick { cpu, generation } => {
                let rq = &self.rqs[cpu.index()];
                !rq.hrtick_armed || generation != rq.hrtick_generation
            }
            Event::IoTimer { device, generation } => !self.queues[device.index()].timer_is_current(generation),
            Event::LimiterGrant { limiter, generation } => {
                let l = &self.limiters[limiter.index()];
                !l.grant_armed || generation != l.grant_generation
            }
            Event::BandwidthTimer { group, slack, generation } => {
                !self.cfs.bandwidth_timer_current(group, slack, generation)
            }
            _ => false,
        }
    }

    /// The one place events are interpreted.
    fn dispatch(&mut self, event: Event) {
        match event {
            Event::Tick { cpu } => self.scheduler_tick(cpu),
            Event::HrTick { cpu, .. } => self.hrtick(cpu),
            Event::TaskStart { task } => self.wake_up_new_task(task),
            Event::BurstEnd { task, .. } => self.burst_end(task),
            Event::KernelEntry { task, .. } => self.kernel_entry(task),
            Event::TimerExpired { task, .. } => self.try_to_wake_up(task, None),
            Event::Arrival { source } => self.arrival(source),
            Event::Resume { cpu } => self.resume(cpu),
            Event::IoComplete { device, request } => self.io_complete(device, request),
            Event::IoTimer { device, generation } => self.io_timer(device, generation),
            Event::NohzKick { cpu } => self.nohz_kick(cpu),
            Event::ActiveBalance { cpu } => self.active_balance(cpu),
            Event::BandwidthTimer { group, slack, generation } => {
                if slack {
                    self.cfs.cfs_slack_timer(group, generation);
                } else {
                    self.cfs.cfs_period_timer(group, generation);
                }
                self.apply_class_resched();
            }
            Event::LimiterAdjust { limiter } => self.limiter_adjust(limiter),
            Event::LimiterGrant { limiter, .. } => self.limiter_grant(limiter),
        }
    }

    // ---------------------------------------------------------------- CPUs

    fn se_of(task: TaskId) -> EntityId {
        EntityId(task.0)
    }

    fn resched_curr(&mut self, cpu: CpuId) {
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
    fn apply_class_resched(&mut self) {
        while let Some(cpu) = self.cfs.resched.pop() {
            if self.rqs[cpu.index()].curr.is_some() {
                self.resched_curr(cpu);
            }
        }
        if self.cfs.bw.used {
            self.apply_bandwidth();
        }
    }

    fn apply_bandwidth(&mut self) {
        push_bandwidth_timers(&mut self.queue, &mut self.cfs.bw.timers);
        for e in std::mem::take(&mut self.cfs.bw.events) {
            for _ in 0..e.nr_delta.unsigned_abs() {
                if e.nr_delta > 0 {
                    self.add_nr_running(e.cpu);
                } else {
                    self.sub_nr_running(e.cpu);
                }
            }
            if e.throttled {
                // The tasks waiting below the throttled queue now wait for runtime.
                // cfs_tasks holds the CPU's queued tasks (bounded by its length).
                let mut i = 0;
                while let Some(task) = self.cfs_tasks.at(e.cpu, i) {
                    i += 1;
                    let t = &mut self.tasks[task.index()];
                    if t.state == TaskState::Runnable
                        && let Some((_, kind)) = t.waiting.as_mut()
                        && self.cfs.group_is_under(t.group, e.group)
                    {
                        *kind = WaitKind::Throttled;
                    }
                }
            } else if self.rqs[e.cpu.index()].curr.is_none() && self.cfs.rq(self.rqs[e.cpu.index()].root).nr_running > 0
            {
                // unthrottle_cfs_rq (4.4 and 6.x): `rq->curr == rq->idle &&
                // rq->cfs.nr_running`: the root queue's entities, which in
                // 6.12+ include a delayed-dequeue one that no task count shows;
                // the pick then finishes its dequeue.
                self.resched_curr(e.cpu);
            }
            let rq = &self.rqs[e.cpu.index()];
            let root_min_vruntime = self.cfs.rq(rq.root).min_vruntime;
            self.recorder.push_record(SchedRecord {
                at: self.now,
                cpu: e.cpu,
                min_vruntime: root_min_vruntime,
                root_min_vruntime,
                nr_running: rq.nr_running,
                kind: RecordKind::Throttle { group: e.group, throttled: e.throttled },
            });
        }
    }

    /// Tasks whose delayed dequeue the pick on `cpu` completed (6.12+
    /// `pick_next_entity` → `dequeue_entities(DEQUEUE_DELAYED)` → `__block_task`)
    /// leave the CPU's run-queue counts.
    fn finish_delayed_dequeues(&mut self, cpu: CpuId) {
        while let Some(se) = self.cfs.delayed_done.pop() {
            let t = TaskId(se.0);
            debug_assert_eq!(self.tasks[t.index()].cpu, cpu);
            self.cfs_tasks.remove(cpu, t);
            self.sub_nr_running(cpu);
        }
    }

    /// Runs the preemption points flagged during this event.
    fn settle(&mut self) {
        let mut calls = 0u32;
        while let Some(cpu) = self.resched.pop_front() {
            if !self.rqs[cpu.index()].need_resched {
                continue;
            }
            calls += 1;
            if calls > SETTLE_MAX {
                // Defer the rest: each deferred CPU resumes through its own event.
                self.queue.push(self.now, Event::Resume { cpu });
                for c in self.resched.drain(..) {
                    self.queue.push(self.now, Event::Resume { cpu: c });
                }
                return;
            }
            self.schedule(cpu);
        }
    }

    fn arm_tick(&mut self, cpu: CpuId) {
        let rq = &mut self.rqs[cpu.index()];
        if !rq.tick_armed {
            rq.tick_armed = true;
            // Ticks fall at tick_offset + k·TICK_NSEC on every CPU
            // (sched_skew_tick=0); an idle CPU's tick is stopped (NO_HZ idle)
            // and restarts at the next one.
            let (now, off, tick) = (self.now.ns(), self.spec.machine.tick_offset_ns, self.tick_ns);
            let next = if now < off { off } else { ((now - off) / tick + 1) * tick + off };
            if self.elision {
                let key = self.queue.reserve_key(SimTime(next));
                self.ticks.arm(cpu, key);
            } else {
                self.queue.push(SimTime(next), Event::Tick { cpu });
            }
        }
    }

    /// `scheduler_tick` (4.4 core.c): `task_tick_fair` for the running
    /// task, then `update_cpu_load_active` and `trigger_load_balance`. With
    /// NO_HZ idle a CPU found idle here stops its tick.
    fn scheduler_tick(&mut self, cpu: CpuId) {
        self.rqs[cpu.index()].tick_armed = false;
        let curr = self.rqs[cpu.index()].curr;
        if curr.is_none() && self.spec.machine.nohz_idle {
            return; // stopped at idle entry (context_switch)
        }
        if let Some(curr) = curr {
            let hrtick_active = self.rqs[cpu.index()].hrtick_armed;
            if self.cfs.task_tick(Self::se_of(curr), false, hrtick_active) {
                self.resched_curr(cpu);
            }
            self.apply_class_resched();
        }
        self.with_smp(|smp, sim| smp.scheduler_tick(sim, cpu));
        self.arm_tick(cpu);
    }

    /// Runs the SMP policy with the machine: the policy is taken out of
    /// `self` for the call so it can read and drive the engine.
    fn with_smp<R>(&mut self, f: impl FnOnce(&mut Smp44, &mut Simulation) -> R) -> R {
        let mut smp = self.smp.take().expect("the SMP policy is not re-entered");
        let r = f(&mut smp, self);
        self.smp = Some(smp);
        r
    }

    /// The NO_HZ idle-balance kick arrives (`scheduler_ipi` →
    /// `run_rebalance_domains` with `idle_balance = 1`).
    fn nohz_kick(&mut self, cpu: CpuId) {
        self.with_smp(|smp, sim| smp.nohz_kick_received(sim, cpu));
    }

    /// The stopper of `cpu` runs `active_load_balance_cpu_stop`.
    fn active_balance(&mut self, cpu: CpuId) {
        self.with_smp(|smp, sim| smp.active_load_balance_cpu_stop(sim, cpu));
    }

    /// The HRTICK timer (`hrtick` in 4.4 core.c): `task_tick(rq, curr, 1)`.
    fn hrtick(&mut self, cpu: CpuId) {
        self.rqs[cpu.index()].hrtick_armed = false;
        let Some(curr) = self.rqs[cpu.index()].curr else { return };
        if self.cfs.task_tick(Self::se_of(curr), true, false) {
            self.resched_curr(cpu);
        }
        self.apply_class_resched();
    }

    /// `hrtick_start_fair` (4.4 fair.c) with `hrtick_start`'s 10 µs minimum.
    fn hrtick_start_fair(&mut self, cpu: CpuId, task: TaskId) {
        let Some(delta) = self.cfs.hrtick_delay(Self::se_of(task)) else { return };
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
        let at = self.now.after((delta as u64).max(HRTICK_MIN_NS));
        self.queue.push(at, Event::HrTick { cpu, generation });
    }

    /// `hrtick_update` (4.4 fair.c), after an enqueue or dequeue on `cpu`.
    fn hrtick_update(&mut self, cpu: CpuId) {
        if !self.cfs.hrtick_enabled() {
            return;
        }
        if let Some(curr) = self.rqs[cpu.index()].curr
            && self.cfs.hrtick_update_wanted(Self::se_of(curr))
        {
            self.hrtick_start_fair(cpu, curr);
        }
    }

    /// `__schedule` (4.4 core.c) at a preemption point: a previous task that is
    /// no longer running (it blocked or exited) is dequeued here, then the
    /// next one is picked.
    fn schedule(&mut self, cpu: CpuId) {
        let rq = &mut self.rqs[cpu.index()];
        if self.cfs.hrtick_enabled() {
            rq.hrtick_armed = false; // hrtick_clear
        }
        let prev = rq.curr;
        let root = rq.root;
        rq.resched_deferred = false;
        if let Some(p) = prev
            && !matches!(self.tasks[p.index()].state, TaskState::Running)
        {
            // __schedule: prev is no longer TASK_RUNNING: deactivate_task(DEQUEUE_SLEEP).
            let exiting = self.tasks[p.index()].state == TaskState::Exited;
            let se = Self::se_of(p);
            // A task that just ran is never below a throttled queue (its
            // levels have a curr, which check_enqueue_throttle skips), so the
            // dequeue reaches the root and the CPU's count drops by one.
            debug_assert!(!self.cfs.throttled_hierarchy(self.cfs.se(se).cfs_rq), "a sleeper below a throttled queue");
            if self.cfs.dequeue_task(se, DEQUEUE_SLEEP) {
                self.cfs_tasks.remove(cpu, p);
                self.sub_nr_running(cpu);
            } else if exiting {
                // A dying task does not stay delayed (6.12+ task_dead_fair
                // finishes the dequeue); the others stay queued until picked or woken.
                self.cfs.dequeue_task(se, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
                self.cfs.delayed_done.clear();
                self.cfs_tasks.remove(cpu, p);
                self.sub_nr_running(cpu);
            }
            if exiting {
                self.cfs.remove_entity_load_avg(se); // task_dead_fair
            }
            self.apply_class_resched();
        }
        let mut balanced = false;
        if self.rqs[cpu.index()].nr_running == 0 {
            // pick_next_task_fair finds nothing: idle_balance (4.4 fair.c) may pull.
            self.with_smp(|smp, sim| smp.idle_balance(sim, cpu));
            balanced = true;
        }
        let mut next = self.cfs.pick_next_task(root, prev.map(Self::se_of)).map(|se| TaskId(se.0));
        self.finish_delayed_dequeues(cpu);
        // A throttle in the pick took tasks off this CPU's count.
        self.apply_class_resched();
        if next.is_none() && !balanced {
            // Only delayed tasks were left (EEVDF, 6.12+): the pick dequeued
            // them, then the CPU goes idle through the balancer as above.
            self.with_smp(|smp, sim| smp.idle_balance(sim, cpu));
            if self.rqs[cpu.index()].nr_running > 0 {
                next = self.cfs.pick_next_task(root, None).map(|se| TaskId(se.0));
                self.finish_delayed_dequeues(cpu);
            }
        }
        self.apply_class_resched();
        if self.cfs.hrtick_enabled()
            && let Some(n) = next
        {
            self.hrtick_start_fair(cpu, n);
        }
        // clear_tsk_need_resched comes after the pick (4.4 __schedule): a
        // resched raised while picking (hrtick_start_fair finding the re-picked
        // task past its slice) is dropped, and the next tick decides.
        self.rqs[cpu.index()].need_resched = false;
        if next != prev {
            self.context_switch(cpu, prev, next);
        } else if let Some(t) = next
            && self.tasks[t.index()].at_step_boundary()
        {
            // Re-picked while stopped between steps (after a wake or yield): go on.
            self.run_steps(t);
        }
    }

    fn context_switch(&mut self, cpu: CpuId, prev: Option<TaskId>, next: Option<TaskId>) {
        let now = self.now;
        self.recorder.count_switch(cpu, now);
        let own_q = next.map_or(self.rqs[cpu.index()].root, |n| self.cfs.se(Self::se_of(n)).cfs_rq);
        let min_vruntime = self.cfs.rq(own_q).min_vruntime;
        let mut record = RecordKind::Switch {
            prev: None,
            prev_state: PrevState::Sleeping,
            prev_sched_in: self.rqs[cpu.index()].idle_since,
            prev_wait_ns: 0,
            prev_sch_delay_ns: 0,
            prev_vruntime: 0,
            next,
            next_vruntime: next.map_or(0, |n| self.cfs.se(Self::se_of(n)).vruntime),
            prev_eevdf: prev.map_or_else(EevdfState::default, |p| self.eevdf_state(p)),
            next_eevdf: next.map_or_else(EevdfState::default, |n| self.eevdf_state(n)),
        };
        if let Some(p) = prev {
            let vruntime = self.cfs.se(Self::se_of(p)).vruntime;
            let t = &mut self.tasks[p.index()];
            if t.in_burst {
                let done = now.since(t.progress_from);
                t.work_left_ns -= done.min(t.work_left_ns);
            }
            t.burst_generation = t.burst_generation.wrapping_add(1);
            let ran = now.since(t.sched_in_at);
            t.runtime_ns += ran;
            t.switches += 1;
            t.sched_out_at = now;
            self.recorder.ran(cpu, p, t.sched_in_at, now);
            let prev_state = match t.state {
                TaskState::Running => {
                    t.state = TaskState::Runnable;
                    t.waiting = Some((now, WaitKind::Preempt));
                    if self.cfs.bw.used && self.cfs.throttled_hierarchy(self.cfs.se(Self::se_of(p)).cfs_rq) {
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
            } = &mut record
            {
                *rp = Some(p);
                *rs = prev_state;
                *prev_sched_in = t.sched_in_at;
                *prev_wait_ns = t.last_wait_ns;
                *prev_sch_delay_ns = t.last_sch_delay_ns;
                *prev_vruntime = vruntime;
            }
        }
        let rq = &self.rqs[cpu.index()];
        let (root_min_vruntime, nr_running) = (self.cfs.rq(rq.root).min_vruntime, rq.nr_running);
        self.recorder.push_record(SchedRecord {
            at: now,
            cpu,
            min_vruntime,
            root_min_vruntime,
            nr_running,
            kind: record,
        });
        let rq = &mut self.rqs[cpu.index()];
        let was_idle = rq.curr.is_none();
        rq.curr = next;
        let Some(n) = next else {
            rq.idle_since = now;
            if self.spec.machine.nohz_idle && rq.nr_running == 0 {
                // tick_nohz_idle_enter: the tick stops and the CPU joins
                // nohz.idle_cpus_mask (nohz_balance_enter_idle).
                self.smp_mut().tick_stopped(cpu);
            }
            return;
        };
        if was_idle && self.spec.machine.nohz_idle {
            // tick_nohz_idle_exit → update_cpu_load_nohz.
            let jiffies = self.jiffies();
            self.smp_mut().tick_restarted(jiffies, cpu);
        }
        let t = &mut self.tasks[n.index()];
        t.state = TaskState::Running;
        t.last_wait_ns = now.since(t.sched_out_at);
        t.last_sch_delay_ns = 0;
        t.sched_in_at = now;
        t.progress_from = now.after(self.spec.context_switch_ns);
        if let Some(from) = t.io.stall_from.take() {
            self.recorder.record_task_latency(n, |m| &mut m.io_stall, now.since(from), now);
        }
        let t = &mut self.tasks[n.index()];
        let waited = t.waiting.take();
        if let Some((from, kind)) = waited {
            t.last_sch_delay_ns = now.since(from);
            let noise = std::mem::take(&mut t.noise_ns).min(now.since(from));
            self.recorder.record_delay(n, cpu, from, now, kind);
            if !self.limiters.is_empty() {
                self.limiter_note_delay(n, now.since(from));
            }
            if self.spec.machine.wakeup_latency.is_some() && kind == WaitKind::Wakeup {
                self.recorder.record_task_latency(n, |m| &mut m.wakeup_noise, noise, now);
            }
        }
        self.arm_tick(cpu);
        let t = &mut self.tasks[n.index()];
        if !t.in_burst && self.spec.context_switch_ns > 0 {
            // The switch itself costs time before the task's next step runs.
            t.in_burst = true;
            t.work_left_ns = 0;
        }
        if t.in_burst {
            let at = t.progress_from.after(t.work_left_ns);
            let generation = t.burst_generation;
            t.burst_end_at = at;
            self.queue.push(at, Event::BurstEnd { task: n, generation });
            let from = t.progress_from;
            self.next_kernel_entry(n, from);
        } else {
            self.run_steps(n);
        }
    }

    /// `task`'s EEVDF deadline and lag in its queue (6.x models), for the
    /// history records; zero under 4.4, where they decide nothing.
    fn eevdf_state(&self, task: TaskId) -> EevdfState {
        if !self.cfs.keeps_lag() {
            return EevdfState::default();
        }
        let se = Self::se_of(task);
        let e = self.cfs.se(se);
        if e.on_rq {
            EevdfState { deadline: e.deadline, lag: self.cfs.entity_lag(e.cfs_rq, se) }
        } else {
            EevdfState { deadline: EevdfState::NOT_QUEUED, lag: e.vlag }
        }
    }

    /// `check_preempt_curr` (4.4 core.c): an idle CPU always reschedules; a
    /// fair one asks `check_preempt_wakeup`. Returns whether a running task was
    /// preempted (rescheduling an idle CPU is not a preemption).
    fn check_preempt_curr(&mut self, cpu: CpuId, woken: TaskId, wake_flags: u32) -> bool {
        let rq = &self.rqs[cpu.index()];
        let preempt = match rq.curr {
            None => {
                self.resched_curr(cpu);
                self.cfs.wakeup_verdict = WakeupVerdict::IdleCpu;
                self.cfs.wakeup_group_level = false;
                return false;
            }
            Some(curr) => {
                let need_resched = rq.need_resched;
                let p = self.cfs.wakeup_preempt(Self::se_of(curr), Self::se_of(woken), wake_flags, need_resched);
                self.apply_class_resched();
                p
            }
        };
        if preempt {
            self.resched_curr(cpu);
        }
        preempt
    }

    /// The `sched_wakeup`/`sched_wakeup_new` record of `task` queued on
    /// `cpu`; `waker_cpu` is where `try_to_wake_up` ran (see `RecordKind::Wakeup`).
    fn record_wakeup(
        &mut self,
        cpu: CpuId,
        task: TaskId,
        preempt: bool,
        new_task: bool,
        waker_cpu: CpuId,
        prev_cpu: CpuId,
    ) {
        let mut up = self.cfs.se(Self::se_of(task)).parent;
        while let Some(g) = up {
            let e = self.cfs.se(g);
            let tg = self.cfs.rq(e.my_q.expect("a parent is a group entity")).tg;
            if self.recorder.counts(self.now) {
                self.recorder.groups[tg.index()].sample(e.load.weight);
            }
            up = e.parent;
        }
        let rec = SchedRecord {
            at: self.now,
            cpu,
            min_vruntime: self.cfs.rq(self.cfs.se(Self::se_of(task)).cfs_rq).min_vruntime,
            root_min_vruntime: self.cfs.rq(self.rqs[cpu.index()].root).min_vruntime,
            nr_running: self.rqs[cpu.index()].nr_running,
            kind: RecordKind::Wakeup {
                task,
                vruntime: self.cfs.se(Self::se_of(task)).vruntime,
                preempt,
                new_task,
                waker_cpu,
                prev_cpu,
                verdict: self.cfs.wakeup_verdict,
                group_level: self.cfs.wakeup_group_level,
                eevdf: self.eevdf_state(task),
            },
        };
        self.recorder.push_record(rec);
    }

    /// `activate_task` (4.4 core.c): enqueue in the class, put the task on
    /// the CPU's `cfs_tasks`, and count it in `nr_running` unless it joined a
    /// throttled hierarchy. Returns whether it was counted.
    fn activate_task(&mut self, cpu: CpuId, task: TaskId, flags: u32) -> bool {
        let counted = self.cfs.enqueue_task(Self::se_of(task), flags);
        self.apply_class_resched();
        self.cfs_tasks.push_head(cpu, task);
        if counted {
            self.add_nr_running(cpu);
        }
        counted
    }

    /// `add_nr_running` (4.4 sched.h), with the metrics told.
    fn add_nr_running(&mut self, cpu: CpuId) {
        let rq = &mut self.rqs[cpu.index()];
        rq.nr_running += 1;
        let nr = rq.nr_running;
        // While the policy runs (a pull), it notes the count itself.
        if let Some(smp) = self.smp.as_mut() {
            smp.add_nr_running(cpu, nr - 1, nr);
        }
        self.recorder.cpu_nr_running(cpu, nr, self.now);
    }

    /// `sub_nr_running` (4.4 sched.h).
    fn sub_nr_running(&mut self, cpu: CpuId) {
        let rq = &mut self.rqs[cpu.index()];
        rq.nr_running -= 1;
        let nr = rq.nr_running;
        self.recorder.cpu_nr_running(cpu, nr, self.now);
    }

    fn smp_mut(&mut self) -> &mut Smp44 {
        self.smp.as_mut().expect("the SMP policy is not re-entered")
    }

    /// `jiffies`: ticks since the run began (kept per event in `advance`).
    fn jiffies(&self) -> u64 {
        self.jiffies
    }

    /// `set_task_cpu`'s bookkeeping: the task's CPU, the counters and the
    /// `sched_migrate_task` record (emitted by the CPU `by` doing the move).
    fn note_migration(&mut self, task: TaskId, from: CpuId, to: CpuId, cause: MigrateCause, by: CpuId) {
        self.tasks[task.index()].cpu = to;
        self.recorder.count_migration(task, from, to, cause, self.now);
        let rec = SchedRecord {
            at: self.now,
            cpu: by,
            min_vruntime: self.cfs.rq(self.rqs[to.index()].root).min_vruntime,
            root_min_vruntime: self.cfs.rq(self.rqs[to.index()].root).min_vruntime,
            nr_running: self.rqs[to.index()].nr_running,
            kind: RecordKind::Migrate { task, orig_cpu: from, dest_cpu: to, cause },
        };
        self.recorder.push_record(rec);
    }

    // ---------------------------------------------------------------- tasks

    /// `sched_fork` + `wake_up_new_task` (4.4 core.c) for a scenario task.
    /// No parent is modelled: the task is forked on the first CPU it may
    /// use (`sched_fork` → `__set_task_cpu(p, smp_processor_id())`) by a
    /// parent sitting at that queue's `min_vruntime`, then placed by
    /// `select_task_rq(SD_BALANCE_FORK)`.
    fn wake_up_new_task(&mut self, task: TaskId) {
        let parent_cpu = self.tasks[task.index()].affinity.iter().next().expect("validated affinity is never empty");
        let se = Self::se_of(task);
        let group = self.tasks[task.index()].group;
        // sched_fork: task_fork_fair runs on the parent's queue.
        self.cfs.set_task_rq(se, group, parent_cpu);
        let q = self.cfs.se(se).cfs_rq;
        self.cfs.task_fork(q, se);
        let current = self.rqs[parent_cpu.index()].curr;
        let cpu = self.select_task_rq(task, parent_cpu, SD_BALANCE_FORK, parent_cpu, current).cpu;
        if cpu != parent_cpu {
            // set_task_cpu → migrate_task_rq_fair (4.4 removes the new task's
            // never-attached average from the parent's queue: fixed in 4.6 by
            // 0905f04eb21f), then set_task_rq; the vruntime is relative.
            self.cfs.migrate_task_rq(se);
            self.cfs.set_task_rq(se, group, cpu);
            self.note_migration(task, parent_cpu, cpu, MigrateCause::Fork, parent_cpu);
        }
        let flags = self.cfs.new_task_enqueue_flags();
        let counted = self.activate_task(cpu, task, flags);
        let t = &mut self.tasks[task.index()];
        t.cpu = cpu;
        t.state = TaskState::Runnable;
        t.waiting = Some((self.now, if counted { WaitKind::Wakeup } else { WaitKind::Throttled }));
        t.sched_out_at = self.now;
        // enqueue_task_fair ends with hrtick_update, before check_preempt_curr.
        self.hrtick_update(cpu);
        let preempt = self.check_preempt_curr(cpu, task, WF_FORK);
        // The parent forks on the first CPU the child may use (see above).
        self.record_wakeup(cpu, task, preempt, true, parent_cpu, parent_cpu);
    }

    /// `try_to_wake_up` (4.4 core.c) for a blocked task, run on `waker`'s
    /// CPU (a task's `wake` step), else on the task's own last CPU (its
    /// timer, an arrival, an I/O completion).
    fn try_to_wake_up(&mut self, task: TaskId, waker: Option<CpuId>) {
        let t = &self.tasks[task.index()];
        debug_assert!(matches!(t.state, TaskState::Blocked(_)), "waking a task that is not blocked");
        let prev_cpu = t.cpu;
        let waker_cpu = waker.unwrap_or(prev_cpu);
        if self.cfs.se(Self::se_of(task)).sched_delayed {
            // ttwu_runnable (6.12+ core.c): still queued by DELAY_DEQUEUE on
            // its CPU; requeued in place (ENQUEUE_DELAYED), no CPU selection.
            self.cfs.enqueue_task(Self::se_of(task), ENQUEUE_DELAYED);
            self.apply_class_resched();
            self.ttwu_runnable_on(prev_cpu, task, waker_cpu, prev_cpu);
            return;
        }
        if self.cfs.se(Self::se_of(task)).on_rq {
            // Blocked in this instant but not yet dequeued by its CPU's
            // schedule(): `ttwu_remote` (4.4 core.c) just makes it running again.
            self.tasks[task.index()].state = TaskState::Running;
            self.cfs.wakeup_verdict = WakeupVerdict::NotChecked;
            self.cfs.wakeup_group_level = false;
            self.record_wakeup(prev_cpu, task, false, false, waker_cpu, prev_cpu);
            return;
        }
        let se = Self::se_of(task);
        // task_waking_fair: relative to the old queue; ENQUEUE_WAKING rebases
        // it. record_wakee: `current` is what runs where the wake-up runs.
        self.cfs.task_waking(se);
        let current = self.rqs[waker_cpu.index()].curr;
        let (jiffies, hz) = (self.jiffies(), u64::from(self.spec.hz));
        self.smp_mut().record_wakee(jiffies, hz, current, waker_cpu, task);
        let Placement { cpu, cause } = self.select_task_rq(task, prev_cpu, SD_BALANCE_WAKE, waker_cpu, current);
        if cpu != prev_cpu {
            // set_task_cpu → migrate_task_rq_fair, then set_task_rq.
            self.cfs.migrate_task_rq(se);
            self.cfs.set_task_rq(se, self.tasks[task.index()].group, cpu);
            self.note_migration(task, prev_cpu, cpu, cause, waker_cpu);
        }
        self.activate_task(cpu, task, ENQUEUE_WAKEUP | ENQUEUE_WAKING);
        // ttwu_do_wakeup: the CPU's idle period ends (avg_idle).
        let now = self.now.ns();
        self.smp_mut().ttwu_do_wakeup(now, cpu);
        self.tasks[task.index()].cpu = cpu;
        self.ttwu_runnable_on(cpu, task, waker_cpu, prev_cpu);
    }

    /// The end of every wake-up, once the task is queued on `cpu`: it is
    /// runnable and waiting, the HRTICK is updated (`enqueue_task_fair`
    /// ends with `hrtick_update`), `check_preempt_curr` runs, the machine's
    /// wake-up latency applies, and the `sched_wakeup` record is written.
    fn ttwu_runnable_on(&mut self, cpu: CpuId, task: TaskId, waker_cpu: CpuId, prev_cpu: CpuId) {
        let throttled = self.cfs.bw.used && self.cfs.throttled_hierarchy(self.cfs.se(Self::se_of(task)).cfs_rq);
        let t = &mut self.tasks[task.index()];
        t.state = TaskState::Runnable;
        t.waiting = Some((self.now, if throttled { WaitKind::Throttled } else { WaitKind::Wakeup }));
        self.hrtick_update(cpu);
        let resched_before = self.rqs[cpu.index()].need_resched;
        let preempt = self.check_preempt_curr(cpu, task, 0);
        self.wakeup_noise(cpu, task, resched_before);
        self.record_wakeup(cpu, task, preempt, false, waker_cpu, prev_cpu);
    }

    /// Machine noise (`machine.wakeup_latency`): when this wake-up made its
    /// CPU reschedule (idle exit or preemption), the switch waits for the
    /// sampled latency (timer and IPI delivery, idle exit, VM exits). The
    /// task's delay includes it; the recorder keeps the noise share apart.
    fn wakeup_noise(&mut self, cpu: CpuId, task: TaskId, resched_before: bool) {
        let Some(dist) = self.spec.machine.wakeup_latency.clone() else { return };
        let rq = &self.rqs[cpu.index()];
        if resched_before || !rq.need_resched || rq.resched_deferred {
            return;
        }
        let ns = dist.sample(&mut self.noise_rng).min(crate::scenario::validate::WAKEUP_LATENCY_MAX_NS);
        if ns == 0 {
            return;
        }
        let rq = &mut self.rqs[cpu.index()];
        rq.need_resched = false; // the settle queue skips it
        rq.resched_deferred = true;
        self.tasks[task.index()].noise_ns = ns;
        self.queue.push(self.now.after(ns), Event::Resume { cpu });
    }

    /// `select_task_rq` (4.4 core.c): the class chooses only for a task
    /// allowed on more than one CPU (`nr_cpus_allowed > 1`); a choice
    /// outside the mask falls back (`select_fallback_rq`: the previous CPU
    /// if allowed, else the first allowed CPU).
    fn select_task_rq(
        &mut self,
        task: TaskId,
        prev_cpu: CpuId,
        sd_flag: u32,
        this_cpu: CpuId,
        current: Option<TaskId>,
    ) -> Placement {
        let cause = if sd_flag & SD_BALANCE_FORK != 0 { MigrateCause::Fork } else { MigrateCause::IdleSibling };
        let mut placed = Placement { cpu: prev_cpu, cause };
        if self.tasks[task.index()].nr_cpus_allowed > 1 {
            placed = self.with_smp(|smp, sim| smp.select_task_rq_fair(sim, task, prev_cpu, sd_flag, this_cpu, current));
        }
        let allowed = &self.tasks[task.index()].affinity;
        if !allowed.contains(placed.cpu) {
            placed = Placement { cpu: prev_cpu, cause };
            if !allowed.contains(prev_cpu) {
                placed.cpu = allowed.iter().next().expect("validated affinity is never empty");
            }
        }
        placed
    }

    /// The running task blocks: it stops being `TASK_RUNNING` and asks for a
    /// reschedule; `schedule()` then dequeues it (`deactivate_task` in
    /// `__schedule`, 4.4 core.c). Until then it is still `curr` and queued.
    fn block(&mut self, task: TaskId, state: TaskState) {
        let cpu = self.tasks[task.index()].cpu;
        debug_assert_eq!(self.rqs[cpu.index()].curr, Some(task));
        self.tasks[task.index()].state = state;
        self.resched_curr(cpu);
    }

    /// Advances the program counter, counting a pass when it wraps.
    fn advance_pc(&mut self, task: TaskId) {
        let t = &mut self.tasks[task.index()];
        t.pc += 1;
        if t.pc == self.spec.tasks[t.spec].program.steps.len() {
            t.pc = 0;
            t.iterations_done += 1;
        }
    }

    fn start_burst(&mut self, task: TaskId, work_ns: u64) {
        let now = self.now;
        let t = &mut self.tasks[task.index()];
        t.in_burst = true;
        t.work_left_ns = work_ns;
        t.burst_generation = t.burst_generation.wrapping_add(1);
        let from = t.progress_from.max(now);
        // A burst begun after another in the same run segment counts its
        // work from now: a later switch-out charges `now − progress_from`.
        t.progress_from = from;
        let at = from.after(work_ns);
        let generation = t.burst_generation;
        t.burst_end_at = at;
        self.queue.push(at, Event::BurstEnd { task, generation });
        self.next_kernel_entry(task, from);
    }

    /// Schedules the running task's next kernel entry, `kernel_every_ns` of
    /// work after `from`, if that falls before its burst ends.
    fn next_kernel_entry(&mut self, task: TaskId, from: SimTime) {
        let t = &self.tasks[task.index()];
        let Some(every) = t.kernel_every_ns else { return };
        let at = from.after(every);
        if at < t.burst_end_at {
            let generation = t.burst_generation;
            self.queue.push(at, Event::KernelEntry { task, generation });
        }
    }

    /// The running task enters the kernel and reads its CPU time
    /// (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)` → `task_sched_runtime` →
    /// `update_curr`); on the way back to user space a resched the update
    /// raised (an EEVDF slice end) is honoured (`exit_to_user_mode_loop`).
    fn kernel_entry(&mut self, task: TaskId) {
        self.cfs.kernel_entry(Self::se_of(task));
        self.apply_class_resched();
        let now = self.now;
        self.next_kernel_entry(task, now);
    }

    /// Executes the running task's steps from its program counter until one
    /// takes time or blocks, or a preemption is pending on its CPU. A task whose
    /// passes are all done exits when it would start the next one.
    fn run_steps(&mut self, task: TaskId) {
        while self.steps_left > 0 {
            self.steps_left -= 1;
            let t = &self.tasks[task.index()];
            let cpu = t.cpu;
            if self.rqs[cpu.index()].need_resched {
                return; // preempted at this preemption point; resumes when picked again
            }
            if t.limited_work_left_ns > 0 {
                // A limited `run` step goes on with its next grant-sized chunk.
                self.limited_next_chunk(task);
                return;
            }
            debug_assert_eq!(t.state, TaskState::Running);
            let program = &self.spec.tasks[t.spec].program;
            if t.pc == 0 && program.iterations.is_some_and(|n| t.iterations_done >= n) {
                // The last periodic job completes with the program.
                if let Some((release, period_ns)) = self.tasks[task.index()].job.take() {
                    self.recorder.job_completed(task, release, period_ns, self.now);
                }
                self.block(task, TaskState::Exited);
                return;
            }
            // Steps hold no heap data: the clone is a copy.
            let step = program.steps[t.pc].clone();
            let t = &mut self.tasks[task.index()];
            match step {
                Step::Run { work: d, enter_kernel_every_ns } => {
                    let work = d.sample(&mut t.rng);
                    t.kernel_every_ns = enter_kernel_every_ns;
                    self.advance_pc(task);
                    if work > 0 && self.spec.tasks[self.tasks[task.index()].spec].limiter.is_some() {
                        self.tasks[task.index()].limited_work_left_ns = work;
                        self.limited_next_chunk(task);
                        return;
                    }
                    if work > 0 {
                        self.start_burst(task, work);
                        return;
                    }
                }
                Step::Sleep(d) => {
                    let wake_at = self.now.after(d.sample(&mut t.rng));
                    self.sleep_until(task, wake_at);
                    return;
                }
                Step::SleepUntil { period_ns, offset_ns } => {
                    let now = self.now.ns();
                    let k = if now < offset_ns { 0 } else { (now - offset_ns) / period_ns + 1 };
                    let wake_at = SimTime(k.saturating_mul(period_ns).saturating_add(offset_ns));
                    // A periodic job: released at the boundary slept until
                    // (even if the wake-up or the run comes later), complete
                    // when the program next reaches a `sleep_until`.
                    if !self.spec.tasks[t.spec].program.steps.contains(&Step::Serve)
                        && let Some((release, period_ns)) = t.job.replace((wake_at, period_ns))
                    {
                        self.recorder.job_completed(task, release, period_ns, self.now);
                    }
                    self.sleep_until(task, wake_at);
                    return;
                }
                Step::Wait => {
                    let pending = t.pending_wakeups > 0;
                    if pending {
                        t.pending_wakeups -= 1;
                    }
                    self.advance_pc(task);
                    if !pending {
                        self.block(task, TaskState::Blocked(BlockOn::Wakeup));
                        return;
                    }
                }
                Step::Wake(target) => {
                    let target = target.resolve(t.instance);
                    self.advance_pc(task);
                    let waker_cpu = self.tasks[task.index()].cpu;
                    self.wake(target, waker_cpu);
                }
                Step::Serve => {
                    if let Some(item) = t.items.pop_front() {
                        t.kernel_every_ns = None;
                        t.serving = Some(item);
                        t.served_this_pass = true;
                        self.start_burst(task, item.work_ns);
                        return;
                    }
                    if !t.served_this_pass {
                        self.block(task, TaskState::Blocked(BlockOn::Item));
                        return;
                    }
                    t.served_this_pass = false;
                    self.advance_pc(task);
                }
                Step::Yield => {
                    self.advance_pc(task);
                    self.cfs.yield_task(Self::se_of(task), self.rqs[cpu.index()].nr_running);
                    self.apply_class_resched();
                    self.resched_curr(cpu);
                    return;
                }
                Step::Io(io) => {
                    if io.depth > 0 && t.io.ops.len() >= io.depth as usize {
                        // io_submit with the AIO ring full: wait for a completion,
                        // then execute this step again.
                        self.block_io(task, IoWait::Depth(io.depth));
                        return;
                    }
                    let seq = self.submit_io(task, &io);
                    self.advance_pc(task);
                    // A submission through a userspace I/O queue never puts its
                    // task to sleep for a tag (see `userspace_io_dispatch`).
                    if io.io_class.is_none() && self.queues[io.device.index()].tag_waiting_seqs(task).any(|s| s == seq)
                    {
                        // blk_mq_get_tag → io_schedule: asleep until a tag frees.
                        self.block_io(task, IoWait::Tag { seq, then_wait: io.wait });
                        return;
                    }
                    if io.wait {
                        self.block_io(task, IoWait::Op(seq));
                        return;
                    }
                }
                Step::Fdatasync => {
                    let writes = t.io.ops.iter().any(|o| o.write);
                    self.advance_pc(task);
                    if writes {
                        self.block_io(task, IoWait::Writes);
                        return;
                    }
                }
                Step::WaitIo(target) => {
                    let target = target.resolve(t.instance);
                    self.advance_pc(task);
                    let other = &mut self.tasks[target.index()].io;
                    if target != task && !other.ops.is_empty() {
                        let last = other.next_seq - 1;
                        other.waiters.push((task, last));
                        self.block_io(task, IoWait::OtherTask);
                        return;
                    }
                }
            }
        }
        let cpu = self.tasks[task.index()].cpu;
        self.queue.push(self.now, Event::Resume { cpu });
    }

    // ---------------------------------------------------------------- block I/O

    /// Blocks the running task on I/O (`io_schedule`).
    fn block_io(&mut self, task: TaskId, wait: IoWait) {
        let now = self.now;
        let io = &mut self.tasks[task.index()].io;
        io.wait = Some(wait);
        io.blocked_at = now;
        self.block(task, TaskState::Blocked(BlockOn::Io));
    }

    /// Submits one I/O step's request (`submit_bio`), split into bios of at
    /// most `max_sectors` (`blk_queue_split`), and runs the queue. Returns the
    /// submission's sequence number.
    fn submit_io(&mut self, task: TaskId, io: &IoStep) -> u64 {
        let now = self.now;
        let d = io.device.index();
        let spec = &self.queues[d].device.spec;
        let (cap, max) = (spec.capacity_sectors, spec.max_sectors);
        let t = &mut self.tasks[task.index()];
        let bytes = io.size.sample(&mut t.rng).clamp(1, IO_SIZE_MAX);
        let sectors = bytes.div_ceil(SECTOR_BYTES).min(io.span_sectors);
        let base = io.offset_sectors.unwrap_or_else(|| (u64::from(t.tid - 1) << 21) % cap);
        let base = base.min(cap - io.span_sectors);
        let sector = match io.pattern {
            Pattern::Sequential => {
                let pc = t.pc;
                let slot = match t.io.cursors.iter().position(|(p, _)| *p == pc) {
                    Some(i) => i,
                    None => {
                        t.io.cursors.push((pc, base));
                        t.io.cursors.len() - 1
                    }
                };
                let mut at = t.io.cursors[slot].1;
                if at + sectors > base + io.span_sectors {
                    at = base;
                }
                t.io.cursors[slot].1 = at + sectors;
                at
            }
            Pattern::Random => {
                // 4 KiB aligned within the region.
                let slots = (io.span_sectors - sectors) / 8;
                base + 8 * t.rng.range_inclusive(0, slots)
            }
        };
        let seq = t.io.next_seq;
        t.io.next_seq += 1;
        let nbios = sectors.div_ceil(u64::from(max)) as u32;
        t.io.ops.push(IoOp { seq, bios_left: nbios, write: io.flags.op == crate::block::Op::Write });
        if let Some(c) = io.io_class {
            let pending =
                crate::userspace_io::PendingIo { task, seq, flags: io.flags, sector, sectors, bytes, queued_at: now };
            self.io_queues[usize::from(c.queue)].queue(usize::from(c.class), pending);
            self.userspace_io_dispatch(usize::from(c.queue));
            return seq;
        }
        let cpu = t.cpu.index();
        let q = &mut self.queues[d];
        if q.is_mq() {
            q.submit_mq(now, task, cpu, seq, io.flags, sector, sectors);
            self.run_queue(io.device);
            self.tag_wakes(io.device);
            return seq;
        }
        let mut at = sector;
        let mut left = sectors;
        while left > 0 {
            let n = left.min(u64::from(max));
            q.submit_bio(now, task, seq, io.flags, at, n as u32);
            at += n;
            left -= n;
        }
        self.run_queue(io.device);
        seq
    }

    fn run_queue(&mut self, device: DeviceId) {
        let tasks = &self.tasks;
        let comm = |t: TaskId| tasks[t.index()].comm.clone();
        self.queues[device.index()].run(self.now, &mut self.queue, &comm);
    }

    /// A device completion: finish the request's bios, wake whoever waited
    /// for them, and run the queue again.
    fn io_complete(&mut self, device: DeviceId, request: RequestId) {
        let done = self.queues[device.index()].complete(self.now, request, &mut self.queue);
        for b in done {
            self.bio_done(b);
        }
        self.run_queue(device);
        self.tag_wakes(device);
    }

    /// Submitters whose tag wait ended (their submission is all queued):
    /// awake, or on to waiting for the submission itself.
    fn tag_wakes(&mut self, device: DeviceId) {
        let Some(mq) = self.queues[device.index()].mq.as_mut() else { return };
        if mq.tag_woken.is_empty() {
            return;
        }
        let woken = std::mem::take(&mut mq.tag_woken);
        for &(task, done) in &woken {
            let io = &mut self.tasks[task.index()].io;
            // Only the submission the task sleeps for ends its sleep (a
            // userspace I/O queue's submission of the same task waits apart).
            match io.wait {
                Some(IoWait::Tag { seq, then_wait: true }) if seq == done && io.ops.iter().any(|o| o.seq == seq) => {
                    io.wait = Some(IoWait::Op(seq));
                }
                Some(IoWait::Tag { seq, .. }) if seq == done => self.io_wake(task),
                _ => {}
            }
        }
        if let Some(mq) = self.queues[device.index()].mq.as_mut() {
            mq.tag_woken = woken;
            mq.tag_woken.clear();
        }
    }

    fn io_timer(&mut self, device: DeviceId, generation: u32) {
        if self.queues[device.index()].timer(self.now, generation) {
            self.run_queue(device);
        }
    }

    /// `bio_endio` for one bio: when the last bio of a submission completes,
    /// the submitter and its `wait_io` waiters are woken if that is what they
    /// wait for.
    fn bio_done(&mut self, b: BioDone) {
        let io = &mut self.tasks[b.task.index()].io;
        let Some(i) = io.ops.iter().position(|o| o.seq == b.op_seq) else {
            debug_assert!(false, "completion for an unknown submission");
            return;
        };
        io.ops[i].bios_left -= 1;
        if io.ops[i].bios_left > 0 {
            return;
        }
        io.ops.remove(i);
        let wake_self = match io.wait {
            Some(IoWait::Op(seq)) => seq == b.op_seq,
            Some(IoWait::Depth(n)) => io.ops.len() < n as usize,
            Some(IoWait::Writes) => !io.ops.iter().any(|o| o.write),
            _ => false,
        };
        let mut woken = Vec::new();
        io.waiters.retain(|&(w, last)| {
            let done = io.ops.iter().all(|o| o.seq > last);
            if done {
                woken.push(w);
            }
            !done
        });
        if wake_self {
            woken.insert(0, b.task);
        }
        for w in woken {
            self.io_wake(w);
        }
        if !self.io_queues.is_empty() {
            self.userspace_io_done(b.task, b.op_seq);
        }
    }

    // ---------------------------------------------------------------- userspace I/O queues

    /// `fair_queue::dispatch_requests` of I/O queue `q`: each submission it
    /// admits goes to the block layer as an unqueued one would
    /// (`blk_queue_split` into bios, then the queue runs).
    fn userspace_io_dispatch(&mut self, q: usize) {
        let now = self.now;
        let admitted = self.io_queues[q].dispatch(now);
        if admitted.is_empty() {
            return;
        }
        let device = self.io_queues[q].spec.device;
        if self.queues[device.index()].is_mq() {
            // blk-mq: the submission goes through the plug and the tags as a
            // task's would. If no tag is free it waits in the tag queue
            // without putting its task to sleep: the reactor blocking in
            // io_submit is not modelled (the layer's limit keeps in flight
            // below nr_requests in the shipped scenarios).
            for p in admitted {
                let cpu = self.tasks[p.task.index()].cpu.index();
                self.queues[device.index()].submit_mq(now, p.task, cpu, p.seq, p.flags, p.sector, p.sectors);
            }
            self.run_queue(device);
            self.tag_wakes(device);
            return;
        }
        let rq = &mut self.queues[device.index()];
        let max = u64::from(rq.device.spec.max_sectors);
        for p in admitted {
            let mut at = p.sector;
            let mut left = p.sectors;
            while left > 0 {
                let n = left.min(max);
                rq.submit_bio(now, p.task, p.seq, p.flags, at, n as u32);
                at += n;
                left -= n;
            }
        }
        self.run_queue(device);
    }

    /// A submission's last bio completed: the I/O queue it went through (if
    /// any) releases what it held (`notify_requests_finished`) and admits more.
    fn userspace_io_done(&mut self, task: TaskId, seq: u64) {
        let now = self.now;
        if let Some(q) = self.io_queues.iter_mut().position(|q| q.complete(now, task, seq)) {
            self.userspace_io_dispatch(q);
        }
    }

    /// Block-layer events so far, as blktrace would record them: every
    /// traced action (Q, M/F, G, P, U, I, D, C) on every device. The I/O
    /// bench's unit.
    pub fn blk_actions(&self) -> u64 {
        self.queues.iter().map(|q| q.rec.actions()).sum()
    }

    /// The userspace I/O queues' state (for reports and tests).
    pub fn io_queues(&self) -> &[crate::userspace_io::IoQueue] {
        &self.io_queues
    }

    fn io_wake(&mut self, task: TaskId) {
        let now = self.now;
        let t = &mut self.tasks[task.index()];
        if t.state != TaskState::Blocked(BlockOn::Io) {
            return;
        }
        t.io.wait = None;
        t.io.stall_from = Some(t.io.blocked_at);
        let waited = now.since(t.io.blocked_at);
        self.recorder.record_task_latency(task, |m| &mut m.io_wait, waited, now);
        self.try_to_wake_up(task, None);
    }

    fn sleep_until(&mut self, task: TaskId, at: SimTime) {
        self.advance_pc(task);
        let t = &mut self.tasks[task.index()];
        t.timer_generation = t.timer_generation.wrapping_add(1);
        let generation = t.timer_generation;
        self.queue.push(at, Event::TimerExpired { task, generation });
        self.block(task, TaskState::Blocked(BlockOn::Timer));
    }

    /// A `wake` step run on `waker_cpu`: wakes the target if it waits for
    /// one, or leaves a pending wakeup.
    fn wake(&mut self, target: TaskId, waker_cpu: CpuId) {
        let t = &mut self.tasks[target.index()];
        match t.state {
            TaskState::Blocked(BlockOn::Wakeup) => self.try_to_wake_up(target, Some(waker_cpu)),
            TaskState::Exited => {}
            _ => t.pending_wakeups = t.pending_wakeups.saturating_add(1),
        }
    }

    fn burst_end(&mut self, task: TaskId) {
        let now = self.now;
        let t = &mut self.tasks[task.index()];
        t.in_burst = false;
        t.work_left_ns = 0;
        let served = t.serving.take();
        let limited_step_done = std::mem::take(&mut t.limited_chunk) && t.limited_work_left_ns == 0;
        if let Some(item) = served {
            self.recorder.record_response(task, item.arrival, now);
            self.item_served(task, item);
        }
        if limited_step_done {
            self.limited_step_done(task);
        }
        self.run_steps(task);
    }

    fn arrival(&mut self, source: SourceId) {
        let now = self.now;
        let s = &mut self.sources[source.index()];
        let target = s.target;
        let t = &mut self.tasks[target.index()];
        let (source_decl, tracked) = (s.decl, self.hops.tracked(s.decl));
        for _ in 0..s.burst {
            let work_ns = s.work.sample(&mut s.rng);
            let request = self.hops.next_request;
            self.hops.next_request += 1;
            // Counters count what happened after the warm-up (`Recorder::counts`).
            let counted = self.recorder.counts(now);
            if tracked && counted {
                self.hops.metrics[source_decl as usize].arrived += 1;
            }
            if t.items.len() >= ITEMS_QUEUED_MAX || t.state == TaskState::Exited {
                if counted {
                    self.recorder.tasks[target.index()].dropped_items += 1;
                    if tracked {
                        self.hops.metrics[source_decl as usize].dropped += 1;
                    }
                }
            } else {
                t.items.push_back(Item { arrival: now, work_ns, source: source_decl, request, work_total_ns: work_ns });
            }
        }
        let next = now.after(s.interval.sample(&mut s.rng).max(1));
        if next < self.end {
            self.queue.push(next, Event::Arrival { source });
        }
        if t.state == TaskState::Blocked(BlockOn::Item) && !t.items.is_empty() {
            self.try_to_wake_up(target, None);
        }
    }

    fn resume(&mut self, cpu: CpuId) {
        if self.rqs[cpu.index()].resched_deferred {
            // The wake-up's IPI or interrupt return arrives (machine noise).
            self.rqs[cpu.index()].resched_deferred = false;
            self.resched_curr(cpu);
            return;
        }
        if self.rqs[cpu.index()].need_resched {
            self.resched.push_back(cpu);
        } else if let Some(t) = self.rqs[cpu.index()].curr
            && self.tasks[t.index()].at_step_boundary()
        {
            self.run_steps(t);
        }
    }

    // ---------------------------------------------------------------- request hops

    /// A `serve` burst of `item` ended on `task`: forward it (`forward`), or,
    /// at a sink, complete its request.
    fn item_served(&mut self, task: TaskId, item: Item) {
        let decl = self.tasks[task.index()].spec;
        if let Some(next) = self.spec.tasks[decl].forward {
            self.forward_item(task, next, item);
        } else if self.hops.tracked(item.source) {
            let latency_ns = self.now.since(item.arrival);
            debug_assert!(latency_ns >= item.work_total_ns, "request faster than its work (seed {})", self.spec.seed);
            if self.recorder.counts(self.now) {
                let m = &mut self.hops.metrics[item.source as usize];
                m.completed += 1;
                m.latency.record(latency_ns, self.now);
            }
            if let Some(log) = &mut self.hops.log
                && log.len() < crate::requests::REQUEST_LOG_MAX
            {
                log.push(crate::requests::RequestDone {
                    source: item.source,
                    request: item.request,
                    latency_ns,
                    work_ns: item.work_total_ns,
                });
            }
        }
    }

    /// Queues a served item at an instance of declaration `next` (fewest
    /// items outstanding, ties round-robin: `Hops::choose`) with its hop work,
    /// and wakes that instance if it blocks in `serve`, from `from`'s CPU as
    /// a `wake` step would.
    fn forward_item(&mut self, from: TaskId, next: usize, item: Item) {
        let ts = &self.spec.tasks[next];
        let loads: Vec<Option<usize>> = (0..ts.count)
            .map(|i| {
                let t = &self.tasks[ts.first.index() + i as usize];
                (t.state != TaskState::Exited).then(|| t.items.len() + usize::from(t.serving.is_some()))
            })
            .collect();
        let tracked = self.hops.tracked(item.source);
        let Some(i) = crate::requests::Hops::choose(&mut self.hops.cursor[next], &loads) else {
            // Every instance has exited: the item is lost with it.
            if !self.recorder.counts(self.now) {
                return;
            }
            self.recorder.tasks[ts.first.index()].dropped_items += 1;
            if tracked {
                self.hops.metrics[item.source as usize].dropped += 1;
            }
            return;
        };
        let target = TaskId(ts.first.0 + i);
        let work_ns = match (&ts.hop_work, self.hops.rng.get_mut(&target.0)) {
            (Some(d), Some(rng)) => d.sample(rng),
            _ => item.work_ns,
        };
        let t = &mut self.tasks[target.index()];
        if t.items.len() >= ITEMS_QUEUED_MAX {
            if self.recorder.counts(self.now) {
                self.recorder.tasks[target.index()].dropped_items += 1;
                if tracked {
                    self.hops.metrics[item.source as usize].dropped += 1;
                }
            }
            return;
        }
        t.items.push_back(Item { work_ns, work_total_ns: item.work_total_ns.saturating_add(work_ns), ..item });
        if t.state == TaskState::Blocked(BlockOn::Item) {
            let waker_cpu = self.tasks[from.index()].cpu;
            self.try_to_wake_up(target, Some(waker_cpu));
        }
    }

    /// Keeps every completed request (up to `REQUEST_LOG_MAX`) for
    /// `request_log`; tests use it to check each request completes once.
    pub fn enable_request_log(&mut self) {
        self.hops.log.get_or_insert_with(Vec::new);
    }

    /// Requests completed since `enable_request_log`, in completion order.
    pub fn request_log(&self) -> &[crate::requests::RequestDone] {
        self.hops.log()
    }

    /// Requests of tracked source `source` (a declaration index) still in a
    /// queue or in service: what `arrived − completed − dropped` must equal.
    pub fn requests_in_flight(&self, source: u32) -> (u64, u64) {
        let now = self.now;
        let mut n = 0;
        let mut oldest = 0;
        for t in &self.tasks {
            for item in t.items.iter().chain(t.serving.iter()) {
                if item.source == source {
                    n += 1;
                    oldest = oldest.max(now.since(item.arrival));
                }
            }
        }
        (n, oldest)
    }

    // ---------------------------------------------------------------- elastic CPU limiters

    fn limiter_of(&self, task: TaskId) -> Option<LimiterId> {
        self.spec.tasks[self.tasks[task.index()].spec].limiter
    }

    /// The next chunk of a limited `run` step: at most the held grant's CPU
    /// time (acquiring a grant first, or blocking for one behind earlier
    /// waiters), then the task "preempts itself" at the chunk's end and
    /// comes back here for the rest (`burst_end` → `run_steps`).
    fn limited_next_chunk(&mut self, task: TaskId) {
        let l = self.limiter_of(task).expect("limited work belongs to a task with a limiter");
        let now = self.now;
        if self.tasks[task.index()].grant_left_ns == 0 {
            let lim = &mut self.limiters[l.index()];
            if !lim.try_acquire(now) {
                lim.waiters.push_back(task);
                self.tasks[task.index()].grant_wait_from = now;
                self.block(task, TaskState::Blocked(BlockOn::Grant));
                self.limiter_arm_grant(l);
                return;
            }
            self.tasks[task.index()].grant_left_ns = lim.spec.grant_ns;
        }
        let t = &mut self.tasks[task.index()];
        let chunk = t.grant_left_ns.min(t.limited_work_left_ns);
        t.grant_left_ns -= chunk;
        t.limited_work_left_ns -= chunk;
        t.limited_chunk = true;
        self.start_burst(task, chunk);
    }

    /// A limited `run` step's last chunk ended: the grant's unused CPU time
    /// goes back to the bucket (capped at one grant), which may serve a waiter.
    fn limited_step_done(&mut self, task: TaskId) {
        let l = self.limiter_of(task).expect("a limited step belongs to a task with a limiter");
        let left = std::mem::take(&mut self.tasks[task.index()].grant_left_ns);
        if left > 0 {
            let now = self.now;
            self.limiters[l.index()].give_back(now, left);
            self.limiter_grant(l);
        }
    }

    /// Schedules the `LimiterGrant` for the first waiter at the exact time
    /// the bucket will hold a grant (none at a zero rate: the next
    /// adjustment re-arms it). A previous one is cancelled by generation.
    fn limiter_arm_grant(&mut self, l: LimiterId) {
        let now = self.now;
        let lim = &mut self.limiters[l.index()];
        lim.grant_generation = lim.grant_generation.wrapping_add(1);
        lim.grant_armed = false;
        if lim.waiters.is_empty() {
            return;
        }
        lim.bucket.refill(now);
        if let Some(at) = lim.bucket.ready_at(lim.spec.grant_ns) {
            lim.grant_armed = true;
            let generation = lim.grant_generation;
            self.queue.push(at.max(now), Event::LimiterGrant { limiter: l, generation });
        }
    }

    /// Hands grants to waiters, first come first served, while the bucket
    /// holds them; wakes each; re-arms the timer for the next waiter.
    fn limiter_grant(&mut self, l: LimiterId) {
        let now = self.now;
        // Bounded: each pass removes a waiter.
        while let Some(&w) = self.limiters[l.index()].waiters.front() {
            let lim = &mut self.limiters[l.index()];
            if !lim.take_grant(now) {
                break;
            }
            lim.waiters.pop_front();
            let grant = lim.spec.grant_ns;
            let t = &mut self.tasks[w.index()];
            lim.wait_ns += now.since(t.grant_wait_from);
            t.grant_left_ns = grant;
            debug_assert_eq!(t.state, TaskState::Blocked(BlockOn::Grant));
            self.try_to_wake_up(w, None);
        }
        self.limiter_arm_grant(l);
    }

    /// The controller's period ends: new limit from the window's percentile,
    /// the sample recorded, the grant timer recomputed at the new rate.
    fn limiter_adjust(&mut self, l: LimiterId) {
        let now = self.now;
        let used = self.limited_runtime_ns(l);
        let lim = &mut self.limiters[l.index()];
        lim.adjust(now, used);
        let next = now.after(lim.spec.adjust_every_ns);
        if next < self.end {
            self.queue.push(next, Event::LimiterAdjust { limiter: l });
        }
        // The rate changed: serve whoever the bucket now covers, re-arm.
        self.limiter_grant(l);
    }

    /// CPU time used so far by the tasks under limiter `l`.
    pub fn limited_runtime_ns(&self, l: LimiterId) -> u64 {
        let mut sum = 0;
        for ts in self.spec.tasks.iter().filter(|ts| ts.limiter == Some(l)) {
            for i in 0..ts.count {
                sum += self.task_runtime_ns(TaskId(ts.first.0 + i));
            }
        }
        sum
    }

    /// A watched task's scheduling delay goes into each watching limiter's window.
    fn limiter_note_delay(&mut self, task: TaskId, ns: u64) {
        let decl = self.tasks[task.index()].spec;
        for lim in &mut self.limiters {
            if lim.spec.watch.contains(&decl) {
                lim.window.record(ns);
            }
        }
    }

    /// The limiters' state (for reports and tests).
    pub fn limiters(&self) -> &[Limiter] {
        &self.limiters
    }

    /// Time each task blocked for a grant right now has waited so far, summed per limiter.
    pub fn limiter_open_wait_ns(&self, l: LimiterId) -> u64 {
        self.limiters[l.index()].waiters.iter().map(|w| self.now.since(self.tasks[w.index()].grant_wait_from)).sum()
    }

    // ---------------------------------------------------------------- checks

    /// Checks the model's invariants; returns a description of the first
    /// violation. Costs O(tasks + CPUs): call it from tests, not in hot loops.
    pub fn check_invariants(&mut self) -> Result<(), String> {
        let ctx = format!("seed {} at {} ns", self.spec.seed, self.now.ns());
        if self.now < self.seen_now {
            return Err(format!("time went backwards ({ctx})"));
        }
        self.seen_now = self.now;
        for (i, q) in self.cfs.cfs_rqs.iter().enumerate() {
            if q.min_vruntime < self.seen_min_vruntime[i] {
                return Err(format!("min_vruntime of cfs_rq {i} decreased ({ctx})"));
            }
            self.seen_min_vruntime[i] = q.min_vruntime;
        }
        // Queued tasks per CPU (cfs_tasks), and those counted in nr_running:
        // not those below a throttled queue.
        let mut nr = vec![0u32; self.rqs.len()];
        let mut throttled = vec![0u32; self.rqs.len()];
        for (i, t) in self.tasks.iter().enumerate() {
            let se = self.cfs.se(EntityId(i as u32));
            if se.on_rq && self.cfs.throttled_hierarchy(se.cfs_rq) {
                if t.state == TaskState::Running {
                    return Err(format!("{} runs in a throttled hierarchy ({ctx})", t.comm));
                }
                throttled[t.cpu.index()] += 1;
            }
            let rq = &self.rqs[t.cpu.index()];
            let is_curr = rq.curr == Some(TaskId(i as u32));
            match t.state {
                TaskState::Running => {
                    if !is_curr || !se.on_rq {
                        return Err(format!("{} is Running but not curr/on_rq ({ctx})", t.comm));
                    }
                    nr[t.cpu.index()] += 1;
                }
                TaskState::Runnable => {
                    if is_curr || !se.on_rq {
                        return Err(format!("{} is Runnable but curr or not queued ({ctx})", t.comm));
                    }
                    if t.waiting.is_none() {
                        return Err(format!("{} is Runnable with no wait start ({ctx})", t.comm));
                    }
                    nr[t.cpu.index()] += 1;
                }
                _ if se.sched_delayed => {
                    // EEVDF DELAY_DEQUEUE (6.12+): asleep but still queued and
                    // counted, never running, until picked or woken.
                    if is_curr || !se.on_rq || !self.cfs.rules.delay_dequeue {
                        return Err(format!("{} is delayed but running or not queued ({ctx})", t.comm));
                    }
                    nr[t.cpu.index()] += 1;
                }
                _ => {
                    // Blocking takes effect at the CPU's next schedule(), which a
                    // deferred settle may postpone to a Resume event.
                    let pending = is_curr && se.on_rq && rq.need_resched;
                    if (is_curr || se.on_rq) && !pending {
                        return Err(format!("{} is {:?} but queued or running ({ctx})", t.comm, t.state));
                    }
                    if pending {
                        nr[t.cpu.index()] += 1;
                    }
                }
            }
            if !t.affinity.contains(t.cpu) && t.state != TaskState::Unstarted {
                return Err(format!("{} is on CPU {} outside its affinity ({ctx})", t.comm, t.cpu));
            }
            // Migration moves a task whole: its entity sits in a queue of its
            // CPU and it is on that CPU's cfs_tasks iff queued.
            if se.on_rq && self.cfs.rq(se.cfs_rq).cpu != t.cpu {
                return Err(format!(
                    "{} is on CPU {} but queued on CPU {} ({ctx})",
                    t.comm,
                    t.cpu,
                    self.cfs.rq(se.cfs_rq).cpu
                ));
            }
            if se.on_rq != self.cfs_tasks.contains(TaskId(i as u32)) {
                return Err(format!("{}: queued {} but on cfs_tasks {} ({ctx})", t.comm, se.on_rq, !se.on_rq));
            }
            if let Some((from, _)) = t.waiting
                && from > self.now
            {
                return Err(format!("{} waits since the future ({ctx})", t.comm));
            }
        }
        for (c, rq) in self.rqs.iter().enumerate() {
            if let Some(t) = rq.curr {
                let task = &self.tasks[t.index()];
                let blocking = rq.need_resched && matches!(task.state, TaskState::Blocked(_) | TaskState::Exited);
                if task.cpu.index() != c || (task.state != TaskState::Running && !blocking) {
                    return Err(format!(
                        "cpu {c} runs {} which is {:?} on cpu {} ({ctx})",
                        task.comm, task.state, task.cpu
                    ));
                }
            }
            let q = self.cfs.rq(rq.root);
            let counted = nr[c] - throttled[c];
            if rq.nr_running != counted || q.h_nr_running != counted {
                return Err(format!(
                    "cpu {c}: nr_running {} / h_nr_running {} but {} tasks ({} throttled) ({ctx})",
                    rq.nr_running, q.h_nr_running, counted, throttled[c]
                ));
            }
            if self.cfs_tasks.len(CpuId(c as u16)) != nr[c] {
                return Err(format!(
                    "cpu {c}: {} tasks on cfs_tasks but {} runnable ({ctx})",
                    self.cfs_tasks.len(CpuId(c as u16)),
                    nr[c]
                ));
            }
            if rq.curr.is_none() && q.nr_running > 0 && !rq.resched_deferred {
                return Err(format!("cpu {c} is idle with {} runnable tasks queued ({ctx})", q.nr_running));
            }
        }
        self.check_queues().map_err(|e| format!("{e} ({ctx})"))?;
        self.cfs.class_invariants().map_err(|e| format!("{e} ({ctx})"))?;
        self.cfs.bandwidth_invariants().map_err(|e| format!("{e} ({ctx})"))?;
        for q in &self.io_queues {
            q.check().map_err(|e| format!("{e} ({ctx})"))?;
        }
        // Elastic limiters: a task blocked for a grant is in its limiter's
        // FIFO exactly once, every waiter is so blocked, and a limiter with
        // waiters and a positive rate has its grant timer armed.
        for (l, lim) in self.limiters.iter().enumerate() {
            for &w in &lim.waiters {
                let t = &self.tasks[w.index()];
                if t.state != TaskState::Blocked(BlockOn::Grant) || self.limiter_of(w).map(|x| x.index()) != Some(l) {
                    return Err(format!("{} waits on limiter {l} but is {:?} ({ctx})", t.comm, t.state));
                }
            }
            if !lim.waiters.is_empty() && lim.limit_ppm > 0 && !lim.grant_armed {
                return Err(format!("limiter {l} has waiters and no grant timer ({ctx})"));
            }
        }
        for (i, t) in self.tasks.iter().enumerate() {
            if t.state == TaskState::Blocked(BlockOn::Grant) {
                let n = self
                    .limiter_of(TaskId(i as u32))
                    .map_or(0, |l| self.limiters[l.index()].waiters.iter().filter(|&&w| w.index() == i).count());
                if n != 1 {
                    return Err(format!(
                        "{} waits for a grant but is {n} times in its limiter's queue ({ctx})",
                        t.comm
                    ));
                }
            }
        }
        for q in &self.queues {
            q.check(self.now).map_err(|e| format!("{e} ({ctx})"))?;
        }
        // Every outstanding submission has bios in some queue, and no task
        // counts more bios than the queues hold for it.
        let mut live = vec![0u64; self.tasks.len()];
        for q in &self.queues {
            for (_, b) in q.bios.iter() {
                live[b.task.index()] += 1;
            }
            // blk-mq: the bios a submitter asleep for a tag has not queued yet.
            for (task, bios) in q.tag_waiter_unqueued_bios() {
                live[task.index()] += bios;
            }
        }
        // A task asleep for a tag is a waiter of some queue, and only then.
        for (i, t) in self.tasks.iter().enumerate() {
            let tag_wait = matches!(t.io.wait, Some(IoWait::Tag { .. })) && t.state == TaskState::Blocked(BlockOn::Io);
            let id = TaskId(i as u32);
            // Submissions a userspace I/O queue admitted wait without their task.
            let waiting = self
                .queues
                .iter()
                .any(|q| q.tag_waiting_seqs(id).any(|seq| !self.io_queues.iter().any(|u| u.admitted(id, seq))));
            if tag_wait != waiting {
                return Err(format!("{}: asleep for a tag {tag_wait}, a queue's tag waiter {waiting} ({ctx})", t.comm));
            }
        }
        // Submissions held by a userspace I/O queue have their bios to come.
        for q in &self.io_queues {
            let max = u64::from(self.queues[q.spec.device.index()].device.spec.max_sectors);
            for p in q.waiting_items() {
                live[p.task.index()] += p.sectors.div_ceil(max);
            }
        }
        for (i, t) in self.tasks.iter().enumerate() {
            let left: u64 = t.io.ops.iter().map(|o| u64::from(o.bios_left)).sum();
            if left != live[i] {
                return Err(format!("{}: {left} bios outstanding but {} in the queues ({ctx})", t.comm, live[i]));
            }
        }
        let busy: u64 = (0..self.rqs.len()).map(|c| self.cpu_busy_ns(CpuId(c as u16))).sum();
        let run: u64 = (0..self.tasks.len()).map(|t| self.task_runtime_ns(TaskId(t as u32))).sum();
        if busy != run {
            return Err(format!("CPU time not conserved: busy {busy} != task runtime {run} ({ctx})"));
        }
        self.check_requests(&ctx)?;
        Ok(())
    }

    /// Requests are conserved per tracked source: arrived = completed +
    /// dropped + in flight (queued or in service somewhere on the route).
    fn check_requests(&self, ctx: &str) -> Result<(), String> {
        for (s, m) in self.hops.metrics.iter().enumerate() {
            if !self.hops.tracked(s as u32) {
                continue;
            }
            let (in_flight, _) = self.requests_in_flight(s as u32);
            if m.arrived != m.completed + m.dropped + in_flight {
                return Err(format!(
                    "requests of source {} not conserved: {} arrived, {} completed + {} dropped + {in_flight} in \
                     flight ({ctx})",
                    self.spec.sources[s].name, m.arrived, m.completed, m.dropped
                ));
            }
        }
        Ok(())
    }

    /// Run-queue and group invariants: every queue's load, `nr_running`,
    /// `h_nr_running` and timeline match its queued entities; a group entity
    /// is queued iff its own queue has entities; group entity weights lie in
    /// [MIN_SHARES, shares]; each group's `load_avg` and summed queue weight
    /// match its queues.
    fn check_queues(&self) -> Result<(), String> {
        let cfs = &self.cfs;
        let n = cfs.cfs_rqs.len();
        let (mut load, mut count, mut queued) = (vec![0u64; n], vec![0u32; n], vec![0usize; n]);
        let mut tasks_below = vec![0u32; n];
        for (e, se) in cfs.entities.iter().enumerate() {
            if !se.on_rq {
                continue;
            }
            let q = se.cfs_rq.index();
            load[q] += se.load.weight;
            count[q] += 1;
            if cfs.cfs_rqs[q].curr != Some(EntityId(e as u32)) {
                queued[q] += 1;
            }
            if se.is_task() {
                let mut up = Some(se.cfs_rq);
                while let Some(q) = up {
                    tasks_below[q.index()] += 1;
                    // A throttled queue's tasks are not counted above it.
                    if cfs.cfs_rq_throttled(q) {
                        break;
                    }
                    up = cfs.rq(q).owner.map(|o| cfs.se(o).cfs_rq);
                }
            }
        }
        for (i, q) in cfs.cfs_rqs.iter().enumerate() {
            if q.load.weight != load[i] || q.nr_running != count[i] || cfs.timeline_len(CfsRqId(i as u32)) != queued[i] {
                return Err(format!(
                    "cfs_rq {i}: load {} nr_running {} timeline {} but queued entities give {} {} {}",
                    q.load.weight,
                    q.nr_running,
                    cfs.timeline_len(CfsRqId(i as u32)),
                    load[i],
                    count[i],
                    queued[i]
                ));
            }
            if q.h_nr_running != tasks_below[i] {
                return Err(format!("cfs_rq {i}: h_nr_running {} but {} tasks below", q.h_nr_running, tasks_below[i]));
            }
            if let Some(owner) = q.owner {
                let se = cfs.se(owner);
                // A group entity stays queued with an empty queue only when
                // EEVDF's DELAY_DEQUEUE (6.12+) delayed it.
                // A throttled queue's entity is off its parent (throttle_cfs_rq).
                let expected = q.nr_running > 0 && !cfs.cfs_rq_throttled(CfsRqId(i as u32));
                if se.on_rq != expected && !(se.sched_delayed && q.nr_running == 0) {
                    return Err(format!(
                        "group entity {owner} on_rq={} with {} entities in its queue",
                        se.on_rq, q.nr_running
                    ));
                }
                let shares = cfs.groups[q.tg.index()].shares;
                if !(MIN_SHARES..=shares).contains(&se.load.weight) {
                    return Err(format!(
                        "group entity {owner} weighs {} outside [{MIN_SHARES}, {shares}]",
                        se.load.weight
                    ));
                }
            }
        }
        for (g, tg) in cfs.groups.iter().enumerate().skip(1) {
            let queues = tg.cfs_rq.iter().flatten().map(|&q| cfs.rq(q));
            let contrib: i64 = queues.clone().map(|q| q.tg_load_avg_contrib as i64).sum();
            let weight: u64 = queues.map(|q| q.load.weight).sum();
            if tg.load_avg != contrib || tg.load_weight != weight {
                return Err(format!(
                    "group {g} ({}): load_avg {} vs contributions {contrib}, load_weight {} vs queues {weight}",
                    tg.path, tg.load_avg, tg.load_weight
                ));
            }
        }
        Ok(())
    }

    /// CPU time used by a task up to now (its current run included).
    pub fn task_runtime_ns(&self, task: TaskId) -> u64 {
        let t = &self.tasks[task.index()];
        let running = t.state == TaskState::Running;
        t.runtime_ns + if running { self.now.since(t.sched_in_at) } else { 0 }
    }

    /// Busy time of a CPU up to now (its current run included).
    pub fn cpu_busy_ns(&self, cpu: CpuId) -> u64 {
        let rq = &self.rqs[cpu.index()];
        let m = &self.recorder.cpus[cpu.index()];
        m.busy_ns + rq.curr.map_or(0, |t| self.now.since(self.tasks[t.index()].sched_in_at))
    }

    /// The task running on `cpu`, if any.
    pub fn curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.rqs[cpu.index()].curr
    }

    pub fn task_comm(&self, task: TaskId) -> &str {
        &self.tasks[task.index()].comm
    }

    pub fn task_affinity(&self, task: TaskId) -> &CpuSet {
        &self.tasks[task.index()].affinity
    }

    pub fn cfs(&self) -> &Cfs {
        &self.cfs
    }

    pub fn tick_ns(&self) -> u64 {
        self.tick_ns
    }

    /// Records every switch and wakeup in `window` from now on, for
    /// timelines and trace export (`crate::export`).
    pub fn enable_trace(&mut self, window: crate::metrics::recorder::TraceWindow) {
        self.recorder.enable_trace(window);
    }

    /// The records kept since `enable_trace`, oldest first.
    pub fn trace(&self) -> &[SchedRecord] {
        self.recorder.trace.as_ref().map_or(&[], |t| &t.records)
    }

    /// Takes the trace buffer (its window, records and what was cut) out of
    /// the run, ending tracing; `None` if tracing was not on.
    pub fn take_trace_buffer(&mut self) -> Option<crate::metrics::recorder::TraceBuffer> {
        self.recorder.trace.take()
    }

    /// The report of the run so far (final once `advance` returned a final reason).
    pub fn report(&self) -> crate::metrics::RunReport {
        crate::metrics::RunReport::build(self)
    }
}

/// What the SMP policy sees of the machine and may do to it.
impl Machine for Simulation {
    fn clock_ns(&self) -> u64 {
        self.now.ns()
    }

    fn jiffies(&self) -> u64 {
        Simulation::jiffies(self)
    }

    fn hz(&self) -> u64 {
        u64::from(self.spec.hz)
    }

    fn nr_running(&self, cpu: CpuId) -> u32 {
        self.rqs[cpu.index()].nr_running
    }

    fn curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.rqs[cpu.index()].curr
    }

    fn task_cpu(&self, task: TaskId) -> CpuId {
        self.tasks[task.index()].cpu
    }

    fn cpus_allowed(&self, task: TaskId) -> &CpuSet {
        &self.tasks[task.index()].affinity
    }

    fn weighted_cpuload(&self, cpu: CpuId) -> u64 {
        self.cfs.weighted_cpuload(cpu)
    }

    fn cpu_util_avg(&self, cpu: CpuId) -> u64 {
        self.cfs.cpu_util(cpu)
    }

    fn h_nr_running(&self, cpu: CpuId) -> u32 {
        self.cfs.rq(self.rqs[cpu.index()].root).h_nr_running
    }

    fn task_load_avg(&self, task: TaskId) -> u64 {
        self.cfs.task_load_avg(Self::se_of(task))
    }

    fn task_h_load(&mut self, task: TaskId) -> u64 {
        let jiffies = Simulation::jiffies(self);
        self.cfs.task_h_load(Self::se_of(task), jiffies)
    }

    fn effective_load(&self, of_task: TaskId, cpu: CpuId, wl: i64, wg: i64) -> i64 {
        let tg = self.cfs.task_group_of(Self::se_of(of_task));
        self.cfs.effective_load(tg, cpu, wl, wg)
    }

    fn update_blocked_averages(&mut self, cpu: CpuId) {
        self.cfs.update_blocked_averages(cpu);
    }

    fn task_hot_inputs(&self, task: TaskId) -> TaskHotInputs {
        let se = Self::se_of(task);
        let e = self.cfs.se(se);
        let q = self.cfs.rq(e.cfs_rq);
        TaskHotInputs {
            sched_delayed: e.sched_delayed,
            sched_idle: e.policy == crate::workload::Policy::Idle,
            exec_start_ns: e.exec_start,
            buddy: q.next == Some(se) || q.last == Some(se),
        }
    }

    fn throttled_lb_pair(&self, task: TaskId, src: CpuId, dst: CpuId) -> bool {
        if !self.cfs.bw.used {
            return false;
        }
        let g = &self.cfs.groups[self.tasks[task.index()].group.index()];
        [src, dst].iter().any(|c| g.cfs_rq[c.index()].is_some_and(|q| self.cfs.throttled_hierarchy(q)))
    }

    fn cfs_task_at(&self, cpu: CpuId, index_from_head: usize) -> Option<TaskId> {
        self.cfs_tasks.at(cpu, index_from_head)
    }

    fn cfs_tasks_move_tail(&mut self, cpu: CpuId, task: TaskId) {
        self.cfs_tasks.move_tail(cpu, task);
    }

    /// `detach_task` → `deactivate_task(rq, p, 0)` + `set_task_cpu`, then
    /// `attach_task` → `activate_task(rq, p, 0)` + `check_preempt_curr`
    /// (4.4 fair.c). Without DEQUEUE_SLEEP/ENQUEUE_WAKEUP the vruntime is
    /// made relative to the old queue's `min_vruntime` and rebased on the new.
    fn move_queued_task(&mut self, task: TaskId, to: CpuId, cause: MigrateCause, by: CpuId) {
        let from = self.tasks[task.index()].cpu;
        debug_assert_ne!(self.rqs[from.index()].curr, Some(task), "moving a running task");
        debug_assert!(self.tasks[task.index()].affinity.contains(to), "moving a task outside its affinity");
        let se = Self::se_of(task);
        debug_assert!(!self.cfs.throttled_hierarchy(self.cfs.se(se).cfs_rq), "throttled_lb_pair lets no such task go");
        self.cfs.dequeue_task(se, 0);
        self.cfs_tasks.remove(from, task);
        self.sub_nr_running(from);
        self.hrtick_update(from);
        // set_task_cpu → migrate_task_rq_fair, set_task_rq.
        self.cfs.migrate_task_rq(se);
        self.cfs.set_task_rq(se, self.tasks[task.index()].group, to);
        self.note_migration(task, from, to, cause, by);
        // The vruntime travels relative: dequeue_entity subtracted the old
        // queue's min_vruntime, enqueue_entity adds the new one's (as it
        // stands before its update_curr, which may be a tick stale, as in 4.4).
        let relative = self.cfs.se(se).vruntime;
        let new_min = self.cfs.rq(self.cfs.se(se).cfs_rq).min_vruntime;
        // The destination queue may throttle at this enqueue (an empty group
        // queue without runtime there: check_enqueue_throttle).
        self.activate_task(to, task, 0);
        // 4.4 only: EEVDF keeps vruntime absolute and places by the saved lag.
        assert!(
            !self.cfs.migrates_relative_vruntime() || self.cfs.se(se).vruntime == relative + new_min,
            "vruntime not rebased on migration: seed {} at {}",
            self.spec.seed,
            self.now.ns()
        );
        self.hrtick_update(to);
        self.check_preempt_curr(to, task, 0);
    }

    fn kick_nohz_balancer(&mut self, ilb: CpuId) {
        self.queue.push(self.now, Event::NohzKick { cpu: ilb });
    }

    fn queue_active_balance(&mut self, busiest: CpuId) {
        self.queue.push(self.now, Event::ActiveBalance { cpu: busiest });
    }

    /// The stopper task preempts the running task (`put_prev_task`), which
    /// stays queued; the CPU picks again once the stopper is done.
    fn stopper_preempt(&mut self, cpu: CpuId) {
        let Some(curr) = self.rqs[cpu.index()].curr else { return };
        if self.tasks[curr.index()].state != TaskState::Running {
            return;
        }
        self.cfs.put_prev_task(Self::se_of(curr));
        self.apply_class_resched();
        self.context_switch(cpu, Some(curr), None);
        self.resched_curr(cpu);
    }
}

/// Arms the bandwidth timers the fair class asked for (`Event::BandwidthTimer`).
fn push_bandwidth_timers(queue: &mut EventQueue, timers: &mut Vec<crate::sched::bandwidth::TimerRequest>) {
    for t in timers.drain(..) {
        queue.push(SimTime(t.at), Event::BandwidthTimer { group: t.group, slack: t.slack, generation: t.generation });
    }
}
