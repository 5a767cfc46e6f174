//! The discrete-event engine: `Simulation`, the event loop, and the one
//! `match` that dispatches every event.
//!
//! Control flow for one event: pop `(time, event)`, set the clock, dispatch
//! it to the part that owns what it concerns, apply the effects that part
//! hands back (`effects.rs`, depth-first, in the order of the direct calls
//! they stand for), then `settle()`: every CPU flagged `need_resched` during
//! the event goes through `schedule()` (the preemption point), which may
//! switch tasks and let the incoming task execute its next steps. Tick-found
//! preemption therefore takes effect at the tick, and wakeup preemption at
//! the wakeup (kernel.md §1.9).
//!
//! The parts, each owning its state, below this file: `rq.rs` (per-CPU run
//! queues and core.c's primitives), `sched_core.rs` (schedule, wake-ups, the
//! tick), `machine.rs` (what the SMP policy sees), `program.rs` (the task
//! programs), `io.rs` (block and userspace I/O), `limiter.rs` (elastic CPU
//! limiters), `hops.rs` (arrivals and request hops), `build.rs` (building a
//! run); `invariants.rs` checks a state read-only, beside them.
//!
//! Bounds: `advance` stops at an event budget, the scenario's `events_max`,
//! or its duration. One event executes at most `STEPS_PER_EVENT` program
//! steps and `SETTLE_MAX` calls to `schedule()`; the rest is deferred to an
//! `Event::Resume` at the same instant, so even a program that loops in zero
//! time (a `yield` ping-pong) is bounded by the event budget.

mod build;
mod dl_core;
mod effects;
mod hops;
mod invariants;
mod io;
mod limiter;
mod machine;
mod program;
mod rq;
mod rt_core;
mod sched_core;
mod stop_core;
mod world;

use crate::block::RequestQueue;
use crate::event::{Event, EventQueue};
use crate::ids::{CpuId, TaskId};
use crate::metrics::history::SchedRecord;
use crate::requests::Hops;
use crate::rng::SimRng;
use crate::scenario::{Scenario, ScenarioSpec};
use crate::sched::balance::linux44::Smp44;
use crate::sched::balance::linux6x::Smp6x;
use crate::sched::balance::Smp;
use crate::sched::model::BalancerKind;
use crate::sched::cfs_tasks::CfsTasks;
use crate::sched::fair::Cfs;
use crate::sched::topology::Topology;
use crate::sched::tunables::tick_nsec;
use crate::sched::{ClassChain, ClassState};
use crate::task::{BlockOn, TaskState};
use crate::tick::ElisionStats;
use crate::time::SimTime;
use crate::userspace_io::IoQueue;
use crate::workload::limiter::{Limiter, LimiterId};
use effects::{Effect, Effects};
use hops::Source;
use io::BlockIo;
use limiter::Limiters;
use program::Flow;
use rq::Core;
use std::collections::VecDeque;
use world::{Clock, World};

/// Program steps one event may execute before the rest is deferred.
const STEPS_PER_EVENT: u32 = 256;
/// `schedule()` calls one event may make before the rest are deferred.
const SETTLE_MAX: u32 = 256;
/// Events in a row at one instant (beyond a few per task, source and CPU)
/// after which the run is declared stalled.
const SAME_INSTANT_EVENTS: u64 = 100_000;

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

/// The event loop's own counters and limits.
#[derive(Clone, Debug)]
struct RunState {
    events: u64,
    /// Events dispatched, per kind (`Event::kind`).
    event_counts: [u64; Event::KINDS.len()],
    finished: Option<StopReason>,
    /// Program steps left for the current event.
    steps_left: u32,
    /// Events dispatched in a row without the clock moving, and the limit.
    same_instant_events: u64,
    same_instant_max: u64,
}

impl RunState {
    /// Counts one more event at `at` if the clock (at `now`) has not moved,
    /// and says whether that is one too many (the clock stalled); a new time
    /// resets it.
    fn stalls_at(&mut self, at: SimTime, now: SimTime) -> bool {
        if at != now {
            self.same_instant_events = 0;
            return false;
        }
        self.same_instant_events += 1;
        self.same_instant_events > self.same_instant_max
    }

    /// Counts one dispatched event of `kind`.
    fn count(&mut self, kind: usize) {
        self.events += 1;
        self.event_counts[kind] += 1;
    }

    fn finish(&mut self, reason: StopReason, at: SimTime, clock: &mut Clock) -> StopReason {
        clock.now = clock.now.max(at);
        self.finished = Some(reason);
        reason
    }
}

/// A run in progress.
#[derive(Clone, Debug)]
pub struct Simulation {
    /// The spec, clock, tasks, recorder, event queue and effects stack:
    /// what every part shares (`World`).
    pub(crate) world: World,
    variant: Option<String>,
    /// The CPUs' run queues, the fair class and the SMP policy.
    core: Core,
    sources: Vec<Source>,
    /// One request queue per block device, by `DeviceId`.
    pub(crate) queues: Vec<RequestQueue>,
    /// Userspace I/O schedulers (`[io_queues.NAME]`), in name order.
    pub(crate) io_queues: Vec<IoQueue>,
    /// Requests across hops (`forward`): cursors, `hop_work` streams, per-source counts.
    pub(crate) hops: Hops,
    /// Elastic CPU limiters (`[limiters.NAME]`), by `LimiterId`.
    pub(crate) limiters: Vec<Limiter>,
    run: RunState,
    /// What the run records for its report (`recording`).
    sections: crate::report::ReportSections,
}

impl Simulation {
    /// Builds the machine and schedules every task's creation and every source.
    pub fn new(scenario: &Scenario) -> Simulation {
        let spec = scenario.spec.clone();
        let ncpus = usize::from(spec.cpus);
        let mut cfs = build::fair_class(&spec);
        let mut rqs = build::run_queues(&spec);
        let root_rng = SimRng::new(spec.seed);
        let mut queue = EventQueue::new();
        let tasks = build::tasks(&spec, &mut cfs, &mut queue, &root_rng);
        build::groups(&spec, &mut cfs, &mut queue, &root_rng);
        let sources = build::sources(&spec, &mut queue, &root_rng);
        let queues = build::request_queues(&spec, &tasks, &root_rng);
        let topo = match spec.kernel.rules().balancer {
            BalancerKind::Linux44 => Topology::build(spec.machine.shape, &spec.machine.isolcpus),
            BalancerKind::Linux6x(r) => Topology::build_6x(spec.machine.shape, &spec.machine.isolcpus, r.topology()),
        };
        let recorder = build::recorder(&spec, tasks.len(), &topo);
        let rt = build::rt_class(&spec, &tasks, &topo);
        let dl = build::dl_class(&spec, &tasks);
        let stop = build::stop_class(&spec, &tasks);
        let fair_server = dl.has_server();
        let ticks = build::ticks(&spec, &mut rqs, &mut queue);
        let limiters = build::limiters(&spec, &mut queue);
        let (hz, nohz) = (u64::from(spec.hz), spec.machine.nohz_idle);
        // The SMP policy of this kernel version, chosen once.
        let smp = Some(match spec.kernel.rules().balancer {
            BalancerKind::Linux44 => Smp::Linux44(Box::new(Smp44::new(topo, hz, tasks.len(), nohz))),
            BalancerKind::Linux6x(rules) => Smp::Linux6x(Box::new(Smp6x::new(rules, topo, hz, tasks.len(), nohz))),
        });
        let instances: usize = spec.tasks.iter().map(|t| t.count as usize).sum::<usize>() + sources.len();
        let tick_ns = tick_nsec(spec.hz);
        let clock = Clock {
            now: SimTime::ZERO,
            end: SimTime(spec.duration_ns),
            jiffies: 0,
            tick_ns,
            tick_offset_ns: spec.machine.tick_offset_ns,
            next_jiffy_ns: 0,
        };
        Simulation {
            core: Core {
                classes: ClassChain::new(cfs, rt, dl, stop),
                fair_server,
                server_clock: vec![0; ncpus],
                rqs,
                cfs_tasks: CfsTasks::new(ncpus, tasks.len()),
                smp,
                resched: VecDeque::new(),
                elision: true,
                ticks,
                noise_rng: root_rng.stream("machine/wakeup_latency"),
                noise_idle_rng: root_rng.stream("machine/noise/wakeup_idle"),
                noise_busy_rng: root_rng.stream("machine/noise/wakeup_busy"),
                kernel_rng: root_rng.stream("machine/noise/kernel_per_activation"),
                bg_ran: vec![0; ncpus],
            },
            hops: Hops::new(&spec, &root_rng),
            io_queues: spec.io_queues.iter().cloned().map(IoQueue::new).collect(),
            variant: scenario.variant().map(str::to_string),
            sources,
            queues,
            limiters,
            run: RunState {
                events: 0,
                event_counts: [0; Event::KINDS.len()],
                finished: None,
                steps_left: STEPS_PER_EVENT,
                same_instant_events: 0,
                same_instant_max: SAME_INSTANT_EVENTS + 4 * (instances + ncpus) as u64,
            },
            world: World { spec, clock, tasks, recorder, queue, out: Effects::default() },
            sections: crate::report::ReportSections::ALL,
        }
    }

    /// Builds the machine as `new` does, recording only what `sections` of
    /// the report need: without `history`, no history rings, culprits or
    /// window around the worst delay; without `occupancy`, no occupancy
    /// series. The run is the same; `report()` builds those sections.
    pub fn recording(scenario: &Scenario, sections: crate::report::ReportSections) -> Simulation {
        let mut sim = Simulation::new(scenario);
        sim.world.recorder.keep_only(sections.history, sections.occupancy);
        sim.sections = sections;
        sim
    }

    /// Runs until the duration is simulated, `events_max` is reached, nothing
    /// is left to do, or `budget` events have been dispatched in this call.
    pub fn advance(&mut self, budget: EventBudget) -> StopReason {
        if let Some(r) = self.run.finished {
            return r;
        }
        let mut dispatched = 0u64;
        loop {
            if self.run.events >= self.world.spec.events_max {
                let now = self.world.clock.now;
                return self.run.finish(StopReason::EventLimit, now, &mut self.world.clock);
            }
            if dispatched >= budget.0 {
                return StopReason::BudgetSpent;
            }
            let next = self.world.queue.peek_key();
            // A tick ordered before the next event runs first (tick.rs).
            if let Some((key, cpu)) = self.core.ticks.peek()
                && next.is_none_or(|n| key < n)
                && EventQueue::key_time(key) < self.world.clock.end
            {
                self.core.ticks.pop();
                match self.calendar_tick(EventQueue::key_time(key), cpu) {
                    Some(counted) => dispatched += u64::from(counted),
                    None => {
                        let now = self.world.clock.now;
                        return self.run.finish(StopReason::Stalled, now, &mut self.world.clock);
                    }
                }
                continue;
            }
            let end = self.world.clock.end;
            let Some(at) = next.map(EventQueue::key_time) else {
                // A tick at or after the end stands for a queued one.
                let reason =
                    if self.core.ticks.peek().is_some() { StopReason::TimeLimit } else { StopReason::Quiescent };
                return self.run.finish(reason, end, &mut self.world.clock);
            };
            if at >= end {
                return self.run.finish(StopReason::TimeLimit, end, &mut self.world.clock);
            }
            let (at, event) = self.world.queue.pop().expect("peeked");
            debug_assert!(at >= self.world.clock.now, "time went backwards: seed {}", self.world.spec.seed);
            if self.is_stale(&event) {
                continue;
            }
            if self.run.stalls_at(at, self.world.clock.now) {
                let now = self.world.clock.now;
                return self.run.finish(StopReason::Stalled, now, &mut self.world.clock);
            }
            self.world.clock.set(at);
            self.core.classes.fair_mut().update_rq_clock(at.ns());
            self.run.count(event.kind());
            dispatched += 1;
            self.run.steps_left = STEPS_PER_EVENT;
            self.dispatch(event);
            if !self.core.resched.is_empty() {
                self.settle();
            }
        }
    }

    /// Runs to the end with no per-call budget.
    pub fn run_to_end(&mut self) -> StopReason {
        self.advance(EventBudget::UNLIMITED)
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
        if self.world.spec.machine.nohz_idle && self.core.rqs[cpu.index()].curr.is_none() {
            self.core.rqs[cpu.index()].tick_armed = false;
            self.core.ticks.stats.idle_ticks += 1;
            return Some(false);
        }
        if self.run.stalls_at(at, self.world.clock.now) {
            return None;
        }
        self.world.clock.set(at);
        self.core.classes.fair_mut().update_rq_clock(at.ns());
        self.run.steps_left = STEPS_PER_EVENT;
        let jiffies = self.world.clock.jiffies;
        let balance_due = self.core.smp.as_ref().is_some_and(|smp| smp.balance_due(cpu, jiffies));
        let pushed = self.world.queue.pushed();
        let mark = self.world.out.mark();
        self.core.scheduler_tick(cpu, &mut self.world);
        self.apply_emitted(mark);
        let acted = balance_due || !self.core.resched.is_empty() || self.world.queue.pushed() > pushed;
        if acted {
            self.run.count(Event::Tick { cpu }.kind());
            self.core.ticks.stats.busy_ticks_acting += 1;
            self.settle();
        } else {
            self.core.ticks.stats.busy_ticks += 1;
        }
        Some(acted)
    }

    /// Cancelled events are dropped without counting or moving the clock.
    fn is_stale(&self, event: &Event) -> bool {
        match *event {
            Event::BurstEnd { task, generation } | Event::KernelEntry { task, generation } => {
                let t = &self.world.tasks[task.index()];
                generation != t.burst_generation || t.state != TaskState::Running
            }
            Event::TimerExpired { task, generation } => {
                let t = &self.world.tasks[task.index()];
                generation != t.timer_generation || t.state != TaskState::Blocked(BlockOn::Timer)
            }
            Event::HrTick { cpu, generation } => {
                let rq = &self.core.rqs[cpu.index()];
                !rq.hrtick_armed || generation != rq.hrtick_generation
            }
            Event::IoTimer { device, generation } => !self.queues[device.index()].timer_is_current(generation),
            Event::LimiterGrant { limiter, generation } => {
                let l = &self.limiters[limiter.index()];
                !l.grant_armed || generation != l.grant_generation
            }
            Event::BandwidthTimer { group, slack, generation } => {
                !self.core.classes.fair().bandwidth_timer_current(group, slack, generation)
            }
            Event::RtPeriodTimer { generation } => !self.core.classes.rt.timer_current(generation),
            Event::DlTimer { entity, generation } => !self.core.classes.dl.timer_current(entity, generation),
            _ => false,
        }
    }

    /// The one place events are interpreted: each goes to the part that owns
    /// what it concerns; the effects it hands back are applied after.
    fn dispatch(&mut self, event: Event) {
        let mark = self.world.out.mark();
        let w = &mut self.world;
        let core = &mut self.core;
        let mut io = BlockIo { queues: &mut self.queues, io_queues: &mut self.io_queues };
        match event {
            Event::Tick { cpu } => core.scheduler_tick(cpu, w),
            Event::HrTick { cpu, .. } => core.hrtick(cpu, w),
            Event::TaskStart { task } => core.wake_up_new_task(task, w),
            Event::BurstEnd { task, .. } => return self.burst_end(task),
            Event::KernelEntry { task, .. } => core.kernel_entry(task, w),
            Event::TimerExpired { task, .. } => core.try_to_wake_up(task, None, false, w),
            Event::Arrival { source } => {
                if let Some(task) = hops::arrival(&mut self.sources[source.index()], source, &mut self.hops, w) {
                    core.try_to_wake_up(task, None, false, w);
                }
            }
            Event::Resume { cpu } => {
                if let Some(task) = core.resume(cpu, w) {
                    w.emit(Effect::RunSteps { task });
                }
            }
            Event::IoComplete { device, request } => io.io_complete(device, request, w),
            Event::IoTimer { device, generation } => io.io_timer(device, generation, w),
            Event::NohzKick { cpu } => core.nohz_kick(cpu, w),
            Event::ActiveBalance { cpu } => core.active_balance(cpu, w),
            Event::BandwidthTimer { group, slack, generation } => {
                core.classes.fair_mut().bandwidth_timer(group, slack, generation);
                core.apply_class_resched(w);
            }
            Event::RtPeriodTimer { .. } => core.rt_period_timer(w),
            Event::DlTimer { entity, .. } => core.dl_timer(entity, w),
            Event::RtPushIpi { cpu } => core.pull_rt_task(cpu, w),
            Event::LimiterAdjust { limiter } => Limiters(&mut self.limiters).adjust(limiter, w),
            Event::LimiterGrant { limiter, .. } => Limiters(&mut self.limiters).grant(limiter, w),
        }
        self.apply_emitted(mark);
    }

    /// A burst ended: its task's served item goes on, a limited step's last
    /// chunk ends, and the task runs its next steps; each part's effects are
    /// applied before the next part runs (depth-first, as effects would be).
    fn burst_end(&mut self, task: TaskId) {
        let ended = program::burst_end(task, &mut self.world);
        if let Some(item) = ended.served {
            let mark = self.world.out.mark();
            hops::item_served(&mut self.hops, task, item, &mut self.world);
            self.apply_emitted(mark);
        }
        if ended.limited_step_done {
            let mark = self.world.out.mark();
            Limiters(&mut self.limiters).step_done(task, &mut self.world);
            self.apply_emitted(mark);
        }
        self.run_steps(task);
    }

    /// Applies what the call since `mark` emitted, if anything (most calls
    /// emit nothing: no call into `drain` then).
    #[inline(always)]
    fn apply_emitted(&mut self, mark: usize) {
        if self.world.out.mark() > mark {
            self.world.out.seal(mark);
            self.drain(mark);
        }
    }

    /// Applies the effects above `floor`, depth-first: what an effect hands
    /// back is applied before the effects after it.
    fn drain(&mut self, floor: usize) {
        while let Some(effect) = self.world.out.pop_above(floor) {
            let mark = self.world.out.mark();
            self.apply(effect);
            self.world.out.seal(mark);
        }
    }

    /// Applies one effect through the part it concerns.
    fn apply(&mut self, effect: Effect) {
        if let Effect::RunSteps { task } = effect {
            return self.run_steps(task);
        }
        let w = &mut self.world;
        let core = &mut self.core;
        let mut io = BlockIo { queues: &mut self.queues, io_queues: &mut self.io_queues };
        let mut limiters = Limiters(&mut self.limiters);
        match effect {
            Effect::RunSteps { .. } => unreachable!("run above"),
            Effect::Wake { task, waker, sync } => core.try_to_wake_up(task, waker, sync, w),
            Effect::Block { task, state } => core.block(task, state, w),
            Effect::StartBurst { task, work_ns } => program::start_burst(task, work_ns, w),
            Effect::Arm { at, event } => w.queue.push(at, event),
            Effect::Submit(s) => io.submit(s, w),
            Effect::Submitted(s) => io.submitted(s, w),
            Effect::BioDone(b) => io::bio_done(b, !io.io_queues.is_empty(), w),
            Effect::IoQueueDone { task, seq } => io.userspace_io_done(task, seq, w),
            Effect::RunQueue(device) => io.run_queue_and_wake(device, w),
            Effect::IoWake(task) => io::io_wake(task, w),
            Effect::LimitedChunk(task) => limiters.next_chunk(task, w),
            Effect::NoteDelay { task, ns } => limiters.note_delay(task, ns, w),
        }
    }

    /// Executes the running task's steps from its program counter until one
    /// takes time or blocks, or a preemption is pending on its CPU; each
    /// step's effects are applied before the next.
    fn run_steps(&mut self, task: TaskId) {
        while self.run.steps_left > 0 {
            self.run.steps_left -= 1;
            let cpu = self.world.tasks[task.index()].cpu;
            if self.core.rqs[cpu.index()].need_resched {
                return; // preempted at this preemption point; resumes when picked again
            }
            let mark = self.world.out.mark();
            let flow = program::step(task, &mut self.world);
            self.apply_emitted(mark);
            // A step's last act (`Core::block` or `Core::yield_task`) is
            // applied as its last effect would be, and the task stops here.
            let mark = self.world.out.mark();
            match flow {
                Flow::Next => {}
                Flow::Stop => return,
                Flow::Block(state) => {
                    self.core.block(task, state, &mut self.world);
                    return self.apply_emitted(mark);
                }
                Flow::Yield => {
                    self.core.yield_task(task, &mut self.world);
                    return self.apply_emitted(mark);
                }
            }
            // Only a step that blocks or exits leaves the task not running.
            if self.world.tasks[task.index()].state != TaskState::Running {
                return;
            }
        }
        let cpu = self.world.tasks[task.index()].cpu;
        self.world.queue.push(self.world.clock.now, Event::Resume { cpu });
    }

    /// Runs the preemption points flagged during this event.
    fn settle(&mut self) {
        let mut calls = 0u32;
        while let Some(cpu) = self.core.resched.pop_front() {
            if !self.core.rqs[cpu.index()].need_resched {
                continue;
            }
            calls += 1;
            if calls > SETTLE_MAX {
                // Defer the rest: each deferred CPU resumes through its own event.
                let now = self.world.clock.now;
                self.world.queue.push(now, Event::Resume { cpu });
                for c in self.core.resched.drain(..) {
                    self.world.queue.push(now, Event::Resume { cpu: c });
                }
                return;
            }
            let mark = self.world.out.mark();
            let run = self.core.schedule(cpu, &mut self.world);
            self.apply_emitted(mark);
            if let Some(task) = run {
                self.run_steps(task);
            }
        }
    }

    // ---------------------------------------------------------------- the façade

    pub fn now(&self) -> SimTime {
        self.world.clock.now
    }

    /// Events dispatched so far (cancelled timers are not counted).
    pub fn events(&self) -> u64 {
        self.run.events
    }

    /// Debug switch: with `false`, no event is elided (every tick is
    /// dispatched as an event). For tests and debugging only: the results
    /// are the same either way (the equivalence tests check it), only the
    /// event count differs. Call before the first `advance`.
    pub fn set_elision(&mut self, on: bool) {
        if !on {
            // The ticks armed so far become events, each under its key.
            while let Some((key, cpu)) = self.core.ticks.pop() {
                self.world.queue.push_reserved(key, Event::Tick { cpu });
            }
        }
        self.core.elision = on;
    }

    /// What elision saved so far.
    pub fn elision_stats(&self) -> ElisionStats {
        self.core.ticks.stats
    }

    /// Events dispatched so far per kind, with `Event::KINDS`' names.
    pub fn event_counts(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        Event::KINDS.iter().copied().zip(self.run.event_counts.iter().copied())
    }

    pub fn spec(&self) -> &ScenarioSpec {
        &self.world.spec
    }

    pub fn variant(&self) -> Option<&str> {
        self.variant.as_deref()
    }

    pub fn finished(&self) -> Option<StopReason> {
        self.run.finished
    }

    /// Block-layer events so far, as blktrace would record them: every
    /// traced action (Q, M/F, G, P, U, I, D, C) on every device. The I/O
    /// bench's unit.
    pub fn blk_actions(&self) -> u64 {
        self.queues.iter().map(|q| q.rec.actions()).sum()
    }

    /// The userspace I/O queues' state (for reports and tests).
    pub fn io_queues(&self) -> &[IoQueue] {
        &self.io_queues
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
        hops::requests_in_flight(&self.world.tasks, self.world.clock.now, source)
    }

    /// The limiters' state (for reports and tests).
    pub fn limiters(&self) -> &[Limiter] {
        &self.limiters
    }

    /// CPU time used by a task up to now (its current run included).
    pub fn task_runtime_ns(&self, task: TaskId) -> u64 {
        limiter::task_runtime_ns(&self.world.tasks[task.index()], self.world.clock.now)
    }

    /// Busy time of a CPU up to now (its current run included).
    pub fn cpu_busy_ns(&self, cpu: CpuId) -> u64 {
        let rq = &self.core.rqs[cpu.index()];
        let m = &self.world.recorder.cpus[cpu.index()];
        m.busy_ns + rq.curr.map_or(0, |t| self.world.clock.now.since(self.world.tasks[t.index()].sched_in_at))
    }

    /// The task running on `cpu`, if any.
    pub fn curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.core.rqs[cpu.index()].curr
    }

    pub fn task_comm(&self, task: TaskId) -> &str {
        &self.world.tasks[task.index()].comm
    }

    /// The fair class's state, read-only (the run's view, tests).
    pub fn cfs(&self) -> &Cfs {
        self.core.classes.fair_internals()
    }

    pub fn tick_ns(&self) -> u64 {
        self.world.clock.tick_ns
    }

    /// Records every switch and wakeup in `window` from now on, for
    /// timelines and trace export (`crate::export`). A run that does not
    /// keep the history (`recording`) can only be traced from its start:
    /// the trace takes who ran on each CPU before it from the rings.
    pub fn enable_trace(&mut self, window: crate::metrics::recorder::TraceWindow) -> Result<(), String> {
        if !self.world.recorder.keeps_history() && self.run.events > 0 {
            return Err("a run that keeps no history can only be traced from its start".to_string());
        }
        self.world.recorder.enable_trace(window);
        Ok(())
    }

    /// The records kept since `enable_trace`, oldest first.
    pub fn trace(&self) -> &[SchedRecord] {
        self.world.recorder.trace.as_ref().map_or(&[], |t| &t.records)
    }

    /// Takes the trace buffer (its window, records and what was cut) out of
    /// the run, ending tracing; `None` if tracing was not on.
    pub fn take_trace_buffer(&mut self) -> Option<crate::metrics::recorder::TraceBuffer> {
        self.world.recorder.trace.take()
    }

    /// A read-only view of the run so far, what reports are built from
    /// (`crate::report`; `report()` there builds the whole report).
    pub fn view(&self) -> crate::view::RunView<'_> {
        let cpus = (0..self.core.rqs.len() as u16).map(CpuId);
        let limiters = (0..self.limiters.len() as u16).map(LimiterId);
        let now_ns = self.world.clock.now.ns();
        let above = self.world.spec.tasks.iter().any(|t| t.policy.class() != crate::sched::ClassKind::Fair);
        let above_fair = cpus
            .clone()
            .filter(|_| above)
            .map(|c| {
                let (rt_throttled_ns, rt_throttles) = self.core.classes.rt.throttle_stats(c, now_ns);
                let s = self.core.classes.dl.server_stats(c, now_ns);
                crate::report::run::CpuAboveFair {
                    rt_throttled_ns,
                    rt_throttles,
                    server_served: s.served,
                    server_served_ns: s.served_ns,
                }
            })
            .collect();
        crate::view::RunView {
            spec: &self.world.spec,
            variant: self.variant(),
            now: self.world.clock.now,
            events: self.events(),
            tick_ns: self.tick_ns(),
            recorder: &self.world.recorder,
            tasks: &self.world.tasks,
            cfs: self.cfs(),
            queues: &self.queues,
            hops: &self.hops,
            limiters: &self.limiters,
            io_queues: &self.io_queues,
            curr: cpus.clone().map(|c| self.curr(c)).collect(),
            cpu_busy_ns: cpus.map(|c| self.cpu_busy_ns(c)).collect(),
            task_runtime_ns: (0..self.world.tasks.len() as u32).map(|t| self.task_runtime_ns(TaskId(t))).collect(),
            requests_in_flight: (0..self.world.spec.sources.len() as u32).map(|s| self.requests_in_flight(s)).collect(),
            // CPU time used so far by the tasks under each limiter.
            limited_runtime_ns: limiters
                .clone()
                .map(|l| limiter::limited_runtime_ns(&self.world.spec, &self.world.tasks, self.world.clock.now, l))
                .collect(),
            // Time each task blocked for a grant right now has waited so far, summed per limiter.
            limiter_open_wait_ns: limiters
                .map(|l| {
                    let waiters = &self.limiters[l.index()].waiters;
                    waiters.iter().map(|w| self.world.clock.now.since(self.world.tasks[w.index()].grant_wait_from)).sum()
                })
                .collect(),
            above_fair,
            sections: self.sections,
        }
    }
}

/// `rq->cfs_tasks` of `cpu` from its head (tests; not a method, so that
/// `Simulation`'s interface stays what the adapters use).
#[cfg(test)]
pub(crate) fn cfs_tasks_order(sim: &Simulation, cpu: CpuId) -> Vec<TaskId> {
    sim.core.cfs_tasks.iter(cpu).collect()
}
