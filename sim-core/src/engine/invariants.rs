//! The model's invariants, checked read-only after an event (tests and
//! debugging: O(tasks + CPUs) per call): task states against the run
//! queues, per-CPU counts, the fair class's queues and groups, block and
//! userspace I/O conservation, the limiters' queues, CPU time and requests.
//!
//! Two properties are about the run rather than one state: time never goes
//! backwards and no queue's `min_vruntime` decreases. `Progress` keeps what
//! was seen for those, outside the simulation, so checking never changes
//! the run; `run_to_end_checked` holds one across the whole run.

use super::{EventBudget, Simulation, StopReason};
use crate::ids::{CfsRqId, CpuId, EntityId, TaskId};
use crate::sched::group::MIN_SHARES;
use crate::task::{BlockOn, IoWait, TaskState};
use crate::time::SimTime;

/// What the last check saw of the run's monotonic quantities.
#[derive(Clone, Debug)]
struct Progress {
    now: SimTime,
    /// `min_vruntime` of each run queue.
    min_vruntime: Vec<i64>,
}

impl Progress {
    /// The quantities as they stand in `sim` (at its start, for a whole run).
    fn of(sim: &Simulation) -> Progress {
        Progress {
            now: sim.world.clock.now,
            min_vruntime: sim.core.classes.fair_internals().cfs_rqs.iter().map(|q| q.min_vruntime).collect(),
        }
    }

    /// Time has not gone backwards and no `min_vruntime` decreased since the
    /// last check; remembers the values for the next.
    fn check(&mut self, sim: &Simulation) -> Result<(), String> {
        let ctx = context(sim);
        if sim.world.clock.now < self.now {
            return Err(format!("time went backwards ({ctx})"));
        }
        self.now = sim.world.clock.now;
        for (i, q) in sim.core.classes.fair_internals().cfs_rqs.iter().enumerate() {
            if q.min_vruntime < self.min_vruntime[i] {
                return Err(format!("min_vruntime of cfs_rq {i} decreased ({ctx})"));
            }
            self.min_vruntime[i] = q.min_vruntime;
        }
        Ok(())
    }
}

fn context(sim: &Simulation) -> String {
    format!("seed {} at {} ns", sim.world.spec.seed, sim.world.clock.now.ns())
}

impl Simulation {
    /// Runs to the end one event at a time, with the monotonic checks
    /// (`Progress`) and `check_invariants` after each (tests and debugging:
    /// far slower than `run_to_end`). Bounded as `advance` is: by the
    /// duration and `limits.events_max`.
    pub fn run_to_end_checked(&mut self) -> Result<StopReason, String> {
        let mut progress = Progress::of(self);
        loop {
            let r = self.advance(EventBudget(1));
            progress.check(self)?;
            self.check_invariants()?;
            if r.is_final() {
                return Ok(r);
            }
        }
    }

    /// Checks the model's invariants; returns a description of the first
    /// violation. Costs O(tasks + CPUs): call it from tests, not in hot loops.
    pub fn check_invariants(&self) -> Result<(), String> {
        let c = Checks { sim: self, ctx: context(self) };
        let nr = c.tasks()?;
        c.cpus(&nr)?;
        c.queues().map_err(|e| format!("{e} ({})", c.ctx))?;
        let cfs = self.core.classes.fair_internals();
        cfs.class_invariants().map_err(|e| format!("{e} ({})", c.ctx))?;
        cfs.bandwidth_invariants().map_err(|e| format!("{e} ({})", c.ctx))?;
        for q in &self.io_queues {
            q.check().map_err(|e| format!("{e} ({})", c.ctx))?;
        }
        c.limiters()?;
        c.io()?;
        let busy: u64 = (0..self.core.rqs.len()).map(|c| self.cpu_busy_ns(CpuId(c as u16))).sum();
        let run: u64 = (0..self.world.tasks.len()).map(|t| self.task_runtime_ns(TaskId(t as u32))).sum();
        if busy != run {
            return Err(format!("CPU time not conserved: busy {busy} != task runtime {run} ({})", c.ctx));
        }
        c.requests()
    }
}

/// The read-only checks of one state.
struct Checks<'a> {
    sim: &'a Simulation,
    ctx: String,
}

/// Per CPU: tasks queued (on `cfs_tasks`), and those of them below a
/// throttled queue (not counted in `nr_running`).
struct Queued {
    nr: Vec<u32>,
    throttled: Vec<u32>,
}

impl Checks<'_> {
    /// Each task's state against its CPU, its entity and `cfs_tasks`.
    fn tasks(&self) -> Result<Queued, String> {
        let (sim, ctx) = (self.sim, &self.ctx);
        let (cfs, rqs) = (sim.core.classes.fair_internals(), &sim.core.rqs);
        let mut nr = vec![0u32; rqs.len()];
        let mut throttled = vec![0u32; rqs.len()];
        for (i, t) in sim.world.tasks.iter().enumerate() {
            if t.policy.class() != crate::sched::ClassKind::Fair {
                self.above_fair_task(TaskId(i as u32))?;
                continue;
            }
            let se = cfs.se(EntityId(i as u32));
            if se.on_rq && cfs.throttled_hierarchy(se.cfs_rq) {
                if t.state == TaskState::Running {
                    return Err(format!("{} runs in a throttled hierarchy ({ctx})", t.comm));
                }
                throttled[t.cpu.index()] += 1;
            }
            let rq = &rqs[t.cpu.index()];
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
                    if is_curr || !se.on_rq || !cfs.rules.delay_dequeue {
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
            if se.on_rq && cfs.rq(se.cfs_rq).cpu != t.cpu {
                return Err(format!(
                    "{} is on CPU {} but queued on CPU {} ({ctx})",
                    t.comm,
                    t.cpu,
                    cfs.rq(se.cfs_rq).cpu
                ));
            }
            if se.on_rq != sim.core.cfs_tasks.contains(TaskId(i as u32)) {
                return Err(format!("{}: queued {} but on cfs_tasks {} ({ctx})", t.comm, se.on_rq, !se.on_rq));
            }
            if let Some((from, _)) = t.waiting
                && from > sim.world.clock.now
            {
                return Err(format!("{} waits since the future ({ctx})", t.comm));
            }
        }
        Ok(Queued { nr, throttled })
    }

    /// Each CPU's `curr`, `nr_running`, `h_nr_running` and `cfs_tasks`
    /// against the tasks queued there.
    fn cpus(&self, queued: &Queued) -> Result<(), String> {
        let (sim, ctx) = (self.sim, &self.ctx);
        let (nr, throttled) = (&queued.nr, &queued.throttled);
        for (c, rq) in sim.core.rqs.iter().enumerate() {
            if let Some(t) = rq.curr {
                let task = &sim.world.tasks[t.index()];
                let blocking = rq.need_resched && matches!(task.state, TaskState::Blocked(_) | TaskState::Exited);
                if task.cpu.index() != c || (task.state != TaskState::Running && !blocking) {
                    return Err(format!(
                        "cpu {c} runs {} which is {:?} on cpu {} ({ctx})",
                        task.comm, task.state, task.cpu
                    ));
                }
            }
            let q = sim.core.classes.fair_internals().rq(rq.root);
            let counted = nr[c] - throttled[c];
            let cpu = CpuId(c as u16);
            let (rt, dl, stop) = (&sim.core.classes.rt, &sim.core.classes.dl, &sim.core.classes.stop);
            let rt_counted = if rt.throttled(cpu) { 0 } else { rt.nr_running(cpu) };
            let above = rt_counted + dl.nr_queued_tasks(cpu) as u32 + stop.nr_running(cpu);
            if rq.nr_running != counted + above || q.h_nr_running != counted {
                return Err(format!(
                    "cpu {c}: nr_running {} / h_nr_running {} but {} fair tasks ({} throttled) and {above} stop/RT/DL ({ctx})",
                    rq.nr_running, q.h_nr_running, counted, throttled[c]
                ));
            }
            self.class_order(cpu)?;
            let on_list = sim.core.cfs_tasks.len(CpuId(c as u16));
            if on_list != nr[c] {
                return Err(format!("cpu {c}: {on_list} tasks on cfs_tasks but {} runnable ({ctx})", nr[c]));
            }
            let above_runnable = rt_counted > 0 || dl.has_queued(cpu) || stop.has_queued(cpu);
            if rq.curr.is_none() && (q.nr_running > 0 || above_runnable) && !rq.resched_deferred {
                return Err(format!("cpu {c} is idle with {} runnable tasks queued ({ctx})", q.nr_running));
            }
        }
        Ok(())
    }

    /// A stop, RT or deadline task's state against its class's queue:
    /// running or runnable tasks are queued there (a deadline task
    /// throttled counts as wanting the CPU), blocked ones are not; it runs
    /// on one CPU only, inside its affinity; a stop task only on the CPU it
    /// is `rq->stop` of. A deadline task never holds more than
    /// its runtime and overruns it by at most one tick (no HRTICK_DL).
    fn above_fair_task(&self, task: TaskId) -> Result<(), String> {
        let (sim, ctx) = (self.sim, &self.ctx);
        let t = &sim.world.tasks[task.index()];
        let (rt, dl) = (&sim.core.classes.rt, &sim.core.classes.dl);
        let is_dl = t.policy.class() == crate::sched::ClassKind::Deadline;
        let on_rq = match t.policy.class() {
            crate::sched::ClassKind::Deadline => dl.on_rq(task),
            crate::sched::ClassKind::Stop => sim.core.classes.stop.on_rq(task),
            _ => rt.on_rq(task),
        };
        let running_on: Vec<usize> = (0..sim.core.rqs.len()).filter(|&c| sim.core.rqs[c].curr == Some(task)).collect();
        if running_on.len() > 1 {
            return Err(format!("{} runs on CPUs {running_on:?} at once ({ctx})", t.comm));
        }
        let rq = &sim.core.rqs[t.cpu.index()];
        let is_curr = rq.curr == Some(task);
        match t.state {
            TaskState::Running | TaskState::Runnable if !on_rq => {
                return Err(format!("{} is {:?} but not on its class's queue ({ctx})", t.comm, t.state));
            }
            TaskState::Runnable if is_curr => return Err(format!("{} is Runnable but curr ({ctx})", t.comm)),
            TaskState::Running if !is_curr => return Err(format!("{} is Running but not curr ({ctx})", t.comm)),
            TaskState::Blocked(_) | TaskState::Exited | TaskState::Unstarted
                if on_rq && !(is_curr && rq.need_resched) =>
            {
                return Err(format!("{} is {:?} but queued ({ctx})", t.comm, t.state));
            }
            _ => {}
        }
        if !t.affinity.contains(t.cpu) && t.state != TaskState::Unstarted {
            return Err(format!("{} is on CPU {} outside its affinity ({ctx})", t.comm, t.cpu));
        }
        if t.policy.class() == crate::sched::ClassKind::Stop
            && t.state != TaskState::Unstarted
            && t.cpu != sim.core.classes.stop.task_cpu(task)
        {
            return Err(format!("stop task {} is on CPU {}, not its own ({ctx})", t.comm, t.cpu));
        }
        if is_dl {
            let p = sim.world.spec.tasks[t.spec].dl.expect("a deadline task has its parameters");
            let (runtime, _) = dl.task_budget(task);
            let tick = sim.world.clock.tick_ns as i64;
            if runtime > p.runtime_ns as i64 || runtime < -tick {
                return Err(format!(
                    "{}: runtime left {runtime} ns outside [-tick, {}] ({ctx})",
                    t.comm, p.runtime_ns
                ));
            }
        }
        Ok(())
    }

    /// A lower class never runs while a higher one is runnable on that
    /// CPU, except where the kernel lets it: the RT queue throttled
    /// (`sched_rt_runtime_us`) or the fair server serving fair tasks (a
    /// deadline entity), and a reschedule pending in this instant. A queued
    /// stop task has no exception: nothing but itself runs beside it
    /// (stop_task.c: "preempts everything and will be preempted by
    /// nothing"). The running RT task is the best queued one. RT time per period stays
    /// within the runtime, overrun by at most a tick.
    fn class_order(&self, cpu: CpuId) -> Result<(), String> {
        let (sim, ctx) = (self.sim, &self.ctx);
        let rq = &sim.core.rqs[cpu.index()];
        if rq.need_resched || rq.resched_deferred {
            return Ok(());
        }
        let (rt, dl) = (&sim.core.classes.rt, &sim.core.classes.dl);
        let class = rq.curr.map(|t| sim.world.tasks[t.index()].policy.class());
        use crate::sched::ClassKind;
        let dl_task_queued = dl.nr_queued_tasks(cpu) > 0;
        let rt_runnable = rt.nr_running(cpu) > 0 && !rt.throttled(cpu);
        let stop_queued = sim.core.classes.stop.has_queued(cpu);
        let bad = match class {
            Some(ClassKind::Fair) => stop_queued || dl_task_queued || (rt_runnable && !dl.server_running(cpu)),
            Some(ClassKind::Rt) => {
                stop_queued
                    || dl.has_queued(cpu)
                    || rt.throttled(cpu)
                    || rq.curr.is_some_and(|c| rt.prio(c) > rt.highest_prio(cpu))
            }
            Some(ClassKind::Deadline) => stop_queued,
            // Idle with a stop task queued: `cpus` reports it.
            _ => false,
        };
        if bad {
            return Err(format!(
                "cpu {cpu}: a {:?} task runs while a higher class is runnable (stop queued {stop_queued}, RT queued {}, throttled {}, DL queued {}, server {}) ({ctx})",
                class,
                rt.nr_running(cpu),
                rt.throttled(cpu),
                dl.has_queued(cpu),
                dl.server_running(cpu)
            ));
        }
        let (rt_time, rt_runtime) = rt.budget(cpu);
        let bw = rt.bandwidth();
        if bw.enabled && bw.runtime_ns.is_some() && rt_time > rt_runtime.max(bw.period_ns) + sim.world.clock.tick_ns {
            return Err(format!("cpu {cpu}: rt_time {rt_time} past runtime {rt_runtime} by more than a tick ({ctx})"));
        }
        Ok(())
    }

    /// Elastic limiters: a task blocked for a grant is in its limiter's
    /// FIFO exactly once, every waiter is so blocked, and a limiter with
    /// waiters and a positive rate has its grant timer armed.
    fn limiters(&self) -> Result<(), String> {
        let (sim, ctx) = (self.sim, &self.ctx);
        let limiter_of = |t: TaskId| sim.world.spec.tasks[sim.world.tasks[t.index()].spec].limiter;
        for (l, lim) in sim.limiters.iter().enumerate() {
            for &w in &lim.waiters {
                let t = &sim.world.tasks[w.index()];
                if t.state != TaskState::Blocked(BlockOn::Grant) || limiter_of(w).map(|x| x.index()) != Some(l) {
                    return Err(format!("{} waits on limiter {l} but is {:?} ({ctx})", t.comm, t.state));
                }
            }
            if !lim.waiters.is_empty() && lim.limit_ppm > 0 && !lim.grant_armed {
                return Err(format!("limiter {l} has waiters and no grant timer ({ctx})"));
            }
        }
        for (i, t) in sim.world.tasks.iter().enumerate() {
            if t.state == TaskState::Blocked(BlockOn::Grant) {
                let n = limiter_of(TaskId(i as u32))
                    .map_or(0, |l| sim.limiters[l.index()].waiters.iter().filter(|&&w| w.index() == i).count());
                if n != 1 {
                    return Err(format!(
                        "{} waits for a grant but is {n} times in its limiter's queue ({ctx})",
                        t.comm
                    ));
                }
            }
        }
        Ok(())
    }

    /// Block I/O: every queue's own checks; every outstanding submission has
    /// bios in some queue (or held by a userspace I/O queue, or not yet
    /// queued by a submitter asleep for a tag), and no task counts more
    /// bios than the queues hold for it.
    fn io(&self) -> Result<(), String> {
        let (sim, ctx) = (self.sim, &self.ctx);
        for q in &sim.queues {
            q.check(sim.world.clock.now).map_err(|e| format!("{e} ({ctx})"))?;
        }
        let mut live = vec![0u64; sim.world.tasks.len()];
        for q in &sim.queues {
            for (_, b) in q.bios.iter() {
                live[b.task.index()] += 1;
            }
            // blk-mq: the bios a submitter asleep for a tag has not queued yet.
            for (task, bios) in q.tag_waiter_unqueued_bios() {
                live[task.index()] += bios;
            }
        }
        // A task asleep for a tag is a waiter of some queue, and only then.
        for (i, t) in sim.world.tasks.iter().enumerate() {
            let tag_wait = matches!(t.io.wait, Some(IoWait::Tag { .. })) && t.state == TaskState::Blocked(BlockOn::Io);
            let id = TaskId(i as u32);
            // Submissions a userspace I/O queue admitted wait without their task.
            let waiting = sim
                .queues
                .iter()
                .any(|q| q.tag_waiting_seqs(id).any(|seq| !sim.io_queues.iter().any(|u| u.admitted(id, seq))));
            if tag_wait != waiting {
                return Err(format!("{}: asleep for a tag {tag_wait}, a queue's tag waiter {waiting} ({ctx})", t.comm));
            }
        }
        // Submissions held by a userspace I/O queue have their bios to come.
        for q in &sim.io_queues {
            let max = u64::from(sim.queues[q.spec.device.index()].device.spec.max_sectors);
            for p in q.waiting_items() {
                live[p.task.index()] += p.sectors.div_ceil(max);
            }
        }
        for (i, t) in sim.world.tasks.iter().enumerate() {
            let left: u64 = t.io.ops.iter().map(|o| u64::from(o.bios_left)).sum();
            if left != live[i] {
                return Err(format!("{}: {left} bios outstanding but {} in the queues ({ctx})", t.comm, live[i]));
            }
        }
        Ok(())
    }

    /// Requests are conserved per tracked source: arrived = completed +
    /// dropped + in flight (queued or in service somewhere on the route).
    fn requests(&self) -> Result<(), String> {
        let (sim, ctx) = (self.sim, &self.ctx);
        for (s, m) in sim.hops.metrics.iter().enumerate() {
            if !sim.hops.tracked(s as u32) {
                continue;
            }
            let (in_flight, _) = sim.requests_in_flight(s as u32);
            if m.arrived != m.completed + m.dropped + in_flight {
                return Err(format!(
                    "requests of source {} not conserved: {} arrived, {} completed + {} dropped + {in_flight} in \
                     flight ({ctx})",
                    sim.world.spec.sources[s].name, m.arrived, m.completed, m.dropped
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
    fn queues(&self) -> Result<(), String> {
        let cfs = self.sim.core.classes.fair_internals();
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
            if q.load.weight != load[i] || q.nr_running != count[i] || cfs.timeline_len(CfsRqId(i as u32)) != queued[i]
            {
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
}
