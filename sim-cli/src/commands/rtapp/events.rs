//! rt-app events from the scenario's task programs: each step as a `run`,
//! `sleep`, `timer`, `suspend`/`resume` or `yield` event with µs values,
//! the keys ordered so rt-app runs them in program order (see the module
//! above), with one warning line per approximation.

use serde_json::{Map, Value, json};
use sim_core::{Dist, Policy, ScenarioSpec, Step, TaskId, TaskSpec};

/// The declaration and instance of a task id.
pub(super) fn declaration_of(spec: &ScenarioSpec, id: TaskId) -> (usize, u32) {
    // Validation resolves every wake target to a declared task.
    spec.declaration_of(id).unwrap_or((0, 0))
}

pub(super) struct ObjectNames<'a> {
    pub(super) spec: &'a ScenarioSpec,
    pub(super) split: &'a [bool],
}

impl ObjectNames<'_> {
    /// The rt-app thread object of instance `i` of declaration `d`.
    pub(super) fn object(&self, d: usize, i: u32) -> String {
        let name = &self.spec.tasks[d].name;
        if self.split[d] { format!("{name}_{i}") } else { name.clone() }
    }
}

/// Per declaration: the mean CPU work of one item it serves, in µs: a
/// source's arrivals (a burst's work) at its target, then along the route
/// (`forward`) each hop's `hop_work`, or the item's own work when the hop
/// gives none. The arrival rates weight the sources that reach it.
pub(super) fn serve_work_us(spec: &ScenarioSpec) -> Vec<u64> {
    let mut rate = vec![0.0f64; spec.tasks.len()];
    let mut work = vec![0.0f64; spec.tasks.len()];
    for s in &spec.sources {
        let r = 1.0 / s.interval.mean_ns().max(1.0);
        let mut w = f64::from(s.burst) * s.work.mean_ns();
        // Bounded: a route lists each declaration once (hops.rs refuses cycles).
        for (k, &d) in s.route.iter().enumerate() {
            if k > 0 {
                w = spec.tasks[d].hop_work.as_ref().map_or(w, Dist::mean_ns);
            }
            rate[d] += r;
            work[d] += r * w;
        }
    }
    rate.iter().zip(&work).map(|(&r, &w)| if r > 0.0 { ns_to_us((w / r).round() as u64) } else { 0 }).collect()
}

/// Nanoseconds to rt-app's µs, rounded to nearest.
pub(super) fn ns_to_us(ns: u64) -> u64 {
    ns.saturating_add(500) / 1000
}

pub(super) fn dist_text(d: &Dist) -> String {
    let f = sim_core::format_duration;
    match d {
        Dist::Const(v) => f(*v),
        Dist::Uniform { low, high } => format!("uniform({}, {})", f(*low), f(*high)),
        Dist::Exp { mean } => format!("exp({})", f(*mean)),
        Dist::Normal { mean, sd } => format!("normal({}, {})", f(*mean), f(*sd)),
        Dist::LogNormal { median, sigma } => format!("lognormal({}, {sigma})", f(*median)),
        Dist::Pareto { scale, shape } => format!("pareto({}, {shape})", f(*scale)),
        Dist::Empirical(_) => d.to_string(),
    }
}

/// A duration step's value in µs, with a warning when it is not exact.
pub(super) fn duration_us(d: &Dist, what: &str, warn: &mut Vec<String>) -> u64 {
    let mean = d.mean_ns();
    let us = ns_to_us(mean.round() as u64);
    match d {
        Dist::Const(ns) if ns % 1000 == 0 => {}
        Dist::Const(ns) => {
            warn.push(format!("{what}: {} rounded to {us} us (rt-app counts µs)", sim_core::format_duration(*ns)))
        }
        _ => warn.push(format!("{what}: {} becomes its mean, {us} us", dist_text(d))),
    }
    us
}

/// Thread properties of one object: policy, nice, affinity, group, delay.
pub(super) fn thread_props(spec: &ScenarioSpec, t: &TaskSpec, instance: usize) -> Map<String, Value> {
    let mut obj = Map::new();
    let policy = match t.policy {
        Policy::Normal => "SCHED_OTHER",
        Policy::Batch => "SCHED_BATCH",
        Policy::Idle => "SCHED_IDLE",
        Policy::Fifo => "SCHED_FIFO",
        Policy::Rr => "SCHED_RR",
        Policy::Deadline => "SCHED_DEADLINE",
        // No system call makes a stop task: the nearest userspace can ask
        // for is what sched_set_stop_task makes it look like, FIFO 99
        // (warned by the caller).
        Policy::Stop => "SCHED_FIFO",
    };
    obj.insert("policy".into(), json!(policy));
    if t.policy == Policy::Stop {
        obj.insert("priority".into(), json!(sim_core::STOP_RT_PRIORITY));
    } else if t.policy.is_rt() {
        // For SCHED_FIFO/RR rt-app's priority is sched_priority.
        obj.insert("priority".into(), json!(t.rt_priority));
    } else if let Some(dl) = t.dl {
        // rt-app's deadline parameters, in µs (doc/tutorial.txt: dl-runtime, dl-period, dl-deadline).
        obj.insert("dl-runtime".into(), json!(dl.runtime_ns / 1_000));
        obj.insert("dl-period".into(), json!(dl.period_ns / 1_000));
        obj.insert("dl-deadline".into(), json!(dl.deadline_ns / 1_000));
    } else {
        // For the fair policies rt-app's priority is the nice value (sched_nice).
        obj.insert("priority".into(), json!(t.nice));
    }
    let set = &t.affinity[instance.min(t.affinity.len().saturating_sub(1))];
    if set.len() != usize::from(spec.cpus) {
        let cpus: Vec<u16> = set.iter().map(|c| c.0).collect();
        obj.insert("cpus".into(), json!(cpus));
    }
    if t.cgroup != 0 {
        obj.insert("taskgroup".into(), json!(spec.groups.groups[t.cgroup].path));
    }
    if t.start_ns > 0 {
        obj.insert("delay".into(), json!(ns_to_us(t.start_ns)));
    }
    if let Some(n) = t.program.iterations {
        obj.insert("loop".into(), json!(n));
    }
    obj
}

/// Most events one thread object gets by writing a forwarder's program out
/// several times (`forward_reps`).
pub(super) const UNROLLED_EVENTS_MAX: usize = 4096;

/// How many times the program of declaration `d` is written out so that its
/// instances, together, reach every instance of its next hop: in repetition
/// `r` instance `i` resumes instance `(i + r·count) mod n`. One when it does
/// not forward, or its next hop is one object.
pub(super) fn forward_reps(spec: &ScenarioSpec, d: usize, names: &ObjectNames) -> u32 {
    let t = &spec.tasks[d];
    let Some(next) = t.forward.filter(|&n| names.split[n]) else { return 1 };
    let n = spec.tasks[next].count.max(1);
    let c = if names.split[d] { t.count.max(1) } else { 1 };
    let gcd = |mut a: u32, mut b: u32| {
        // Bounded: Euclid's algorithm ends in O(log) steps.
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let reps = n / gcd(c, n);
    let steps = t.program.steps.len().max(1);
    if reps as usize * steps > UNROLLED_EVENTS_MAX { 1 } else { reps }
}

/// The rt-app events of instance `inst` of declaration `d`, in program
/// order, the program written out `forward_reps` times.
pub(super) fn task_events(
    spec: &ScenarioSpec,
    d: usize,
    inst: u32,
    names: &ObjectNames,
    serve_work: u64,
    warn: &mut Vec<String>,
) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    for rep in 0..forward_reps(spec, d, names) {
        // The warnings are the program's: said once.
        let mut sink = Vec::new();
        let w = if rep == 0 { &mut *warn } else { &mut sink };
        out.extend(program_events(spec, d, inst, rep, names, serve_work, w));
    }
    out
}

/// One pass over the program of instance `inst` of declaration `d`
/// (repetition `rep`, see `forward_reps`).
pub(super) fn program_events(
    spec: &ScenarioSpec,
    d: usize,
    inst: u32,
    rep: u32,
    names: &ObjectNames,
    serve_work: u64,
    warn: &mut Vec<String>,
) -> Vec<(&'static str, Value)> {
    let t = &spec.tasks[d];
    let own = names.object(d, inst);
    let periods: Vec<u64> = t
        .program
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::SleepUntil { period_ns, .. } => Some(*period_ns),
            _ => None,
        })
        .collect();
    let one_period = periods.windows(2).all(|w| w[0] == w[1]);
    let mut out = Vec::new();
    for (j, step) in t.program.steps.iter().enumerate() {
        let what = format!("task {} step {j}", t.name);
        match step {
            Step::Run { work: dist, enter_kernel_every_ns } => {
                if enter_kernel_every_ns.is_some() {
                    warn.push(format!(
                        "{what} (run): enter_kernel_every is not kept: rt-app's run spins in user space"
                    ));
                }
                out.push(("run", json!(duration_us(dist, &format!("{what} (run)"), warn))))
            }
            Step::Sleep(dist) => out.push(("sleep", json!(duration_us(dist, &format!("{what} (sleep)"), warn)))),
            Step::SleepUntil { period_ns, offset_ns } => {
                let period = duration_us(&Dist::Const(*period_ns), &format!("{what} (sleep_until)"), warn).max(1);
                if *offset_ns != 0 || !t.start_ns.is_multiple_of(*period_ns) {
                    warn.push(format!(
                        "{what} (sleep_until): the phase (offset {}, start {}) is not kept: rt-app's timer counts \
                         periods from the thread's start",
                        sim_core::format_duration(*offset_ns),
                        sim_core::format_duration(t.start_ns)
                    ));
                }
                // One timer per thread and period ("unique…": not shared
                // between instances), as every sleep_until of one period
                // shares the simulator's grid.
                let timer = if one_period { "unique".to_string() } else { format!("unique_{period}us") };
                out.push(("timer", json!({ "ref": timer, "period": period })));
            }
            Step::Wait => {
                warn.push(format!(
                    "{what} (wait): becomes suspend; a resume sent before it suspends is lost in rt-app (the \
                     simulator keeps it pending)"
                ));
                out.push(("suspend", Value::String(own.clone())));
            }
            Step::Wake { target, sync } => {
                if *sync {
                    warn.push(format!(
                        "{what} (wake): sync is not kept: rt-app's resume signals a condition variable (no WF_SYNC)"
                    ));
                }
                let (td, ti) = declaration_of(spec, target.resolve(inst));
                out.push(("resume", Value::String(names.object(td, ti))));
            }
            Step::Serve => {
                warn.push(format!(
                    "{what} (serve): becomes suspend, then run {serve_work} us (the mean work of one item it serves) per \
                     resume"
                ));
                out.push(("suspend", Value::String(own.clone())));
                if serve_work > 0 {
                    out.push(("run", json!(serve_work)));
                }
                // The served item goes on to the next hop: resume it, or
                // its thread would suspend forever.
                if let Some(next) = t.forward {
                    let n = spec.tasks[next].count.max(1);
                    let step = if names.split[d] { t.count } else { 1 };
                    let target = (inst + rep * step) % n;
                    out.push(("resume", Value::String(names.object(next, target))));
                    warn.push(format!(
                        "{what} (forward = {}): each served item resumes an instance of {} in turn (the simulator \
                         gives it to the least-loaded one), which then runs {} us, the mean work of an item there{}",
                        spec.tasks[next].name,
                        spec.tasks[next].name,
                        serve_work_of(spec, next),
                        if spec.tasks[next].hop_work.is_some() { " (hop_work's mean)" } else { "" }
                    ));
                }
            }
            Step::Yield => out.push(("yield", Value::String(String::new()))),
            Step::Io(io) => warn.push(format!(
                "{what} ({} {} bytes{}): left out: rt-app has no block-device I/O",
                if io.flags.op == sim_core::Op::Read { "read" } else { "write" },
                io.size.mean_ns() as u64,
                if io.wait { ", waited for" } else { "" }
            )),
            Step::Fdatasync => warn.push(format!("{what} (fdatasync): left out: rt-app has no block-device I/O")),
            Step::WaitIo(_) => warn.push(format!("{what} (wait_io): left out: rt-app has no block-device I/O")),
        }
    }
    out
}

/// Whether a task's events are worth a thread: they block somewhere, or the
/// task never blocked on I/O and so is a CPU hog in the simulator too. A task
/// that blocked only on I/O would become a hog without its I/O steps.
pub(super) fn keeps(t: &TaskSpec, events: &[(&'static str, Value)]) -> bool {
    let blocks = |e: &(&'static str, Value)| match e.0 {
        "sleep" => e.1.as_u64().is_some_and(|v| v > 0),
        "timer" | "suspend" => true,
        _ => false,
    };
    let runs = |e: &(&'static str, Value)| e.0 == "run" && e.1.as_u64().is_some_and(|v| v > 0);
    let io_blocked = t.program.steps.iter().any(|s| match s {
        Step::Io(io) => io.wait || io.depth > 0,
        Step::Fdatasync | Step::WaitIo(_) => true,
        _ => false,
    });
    events.iter().any(blocks) || (!io_blocked && events.iter().any(runs))
}

/// Puts the events into the thread object: inline when their keys sort in
/// program order, else in phases (see the module comment).
pub(super) fn add_events(obj: &mut Map<String, Value>, events: Vec<(&'static str, Value)>) {
    let width = events.len().saturating_sub(1).to_string().len();
    let mut phases: Vec<Map<String, Value>> = Vec::new();
    let mut last = String::new();
    for (i, (kind, value)) in events.into_iter().enumerate() {
        let key = format!("{kind}{i:0width$}");
        if phases.is_empty() || key <= last {
            phases.push(Map::new());
        }
        last = key.clone();
        if let Some(p) = phases.last_mut() {
            p.insert(key, value);
        }
    }
    if phases.len() == 1 {
        obj.extend(phases.remove(0));
    } else {
        let width = (phases.len() - 1).to_string().len();
        let all: Map<String, Value> =
            phases.into_iter().enumerate().map(|(i, p)| (format!("p{i:0width$}"), Value::Object(p))).collect();
        obj.insert("phases".into(), Value::Object(all));
    }
}

pub(super) fn serve_work_of(spec: &ScenarioSpec, d: usize) -> u64 {
    serve_work_us(spec).get(d).copied().unwrap_or(0)
}
