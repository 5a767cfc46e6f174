//! `sim-cli export --rt-app`: a scenario (base or variant, `--set` applied as
//! `run` applies them) written as an rt-app JSON workload, so LISA users can
//! run our scenarios on a real kernel with their own tools.
//!
//! The grammar is rt-app's own (doc/tutorial.txt and src/rt-app_parse_config.c
//! of scheduler-tools/rt-app): `global` (duration in s, calibration,
//! default_policy, lock_pages, log_basename) and `tasks`, one thread object
//! per task declaration (`instance`, `cpus`, `policy`, `priority` = nice for
//! the fair policies, `taskgroup`, `delay` in µs, `loop`) holding events with
//! µs values: `run`, `sleep`, `timer` (`ref`, `period`), `suspend`/`resume`,
//! `yield`.
//!
//! Why the event keys look like `run0`, `timer1`: rt-app runs a phase's
//! events in the order its JSON parser (json-c) meets the keys, matching each
//! key by its prefix; serde_json here is built without `preserve_order`, so
//! an object's keys come out sorted. Each key is the event name plus a
//! zero-padded index, and consecutive events stay in one phase only while
//! their keys sort in program order; otherwise a new phase starts (the
//! `phases` object's keys `p0`, `p1`, … sort too). The same sorting puts
//! `global` before `tasks`.
//!
//! What rt-app cannot say exactly is approximated, each time with one
//! `warning:` line naming the task and step: a distribution becomes its mean,
//! durations are rounded to µs (the duration up to whole seconds), a `wait`
//! becomes `suspend` (rt-app's resume is a condition-variable broadcast: one
//! sent while the thread is not suspended is lost, where the simulator keeps
//! it pending), a source becomes a periodic thread resuming its target every
//! mean interval (the target runs the mean work of one arrival after each
//! resume), I/O steps are left out, autogroup sessions and `cpu.shares` are
//! not in the grammar, and the machine (CPU count, topology, HZ, CFS
//! tunables) is the host's. Not warned: a `sleep_until` that overruns its
//! period skips to the next multiple in the simulator, while rt-app's
//! (relative) timer restarts its period from the late wake-up.
//!
//! Every setting of the scenario is accounted for in one place,
//! `unexpressed_settings`, which destructures the spec's structs without
//! `..`: a new setting does not compile until the export expresses or warns
//! it (group quotas at every level, cpusets, slices, limiters, ionice,
//! devices are warned). A `forward` hop is expressed: after its run, a
//! serving thread resumes an instance of the next hop (each in turn). A
//! thread that suspends and that nothing resumes would hang rt-app, so the
//! export refuses it, naming the thread.
//!
//! Instances of a declaration share one rt-app thread object, unless they
//! must be told apart: different affinities, or a `wake`/source that targets
//! one instance (rt-app's `resume` wakes every thread of an object). Then each
//! instance gets its own object, `NAME_I`.

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};
use sim_core::{Dist, Policy, Scenario, ScenarioSpec, Step, TaskId, TaskSpec};
use std::path::Path;

/// The scenario as an rt-app JSON document, and one line per approximation
/// (without the `warning: ` prefix). An error says why nothing could be
/// exported (every task is I/O-only, or two thread names collide).
pub fn export(scenario: &Scenario) -> Result<(Value, Vec<String>)> {
    let spec = &scenario.spec;
    let mut warnings = Vec::new();
    let split = split_declarations(spec);
    let names = ObjectNames { spec, split: &split };
    let serve_work = serve_work_us(spec);

    let mut tasks = Map::new();
    let mut omitted = Vec::new();
    let mut warned_groups = Vec::new();
    for (d, t) in spec.tasks.iter().enumerate() {
        let instances: Vec<Option<u32>> = if split[d] { (0..t.count).map(Some).collect() } else { vec![None] };
        let mut kept = true;
        for (k, inst) in instances.iter().enumerate() {
            // Warnings are the declaration's: say them once, not per instance.
            let mut sink = Vec::new();
            let events = task_events(spec, d, inst.unwrap_or(0), &names, serve_work[d], &mut sink);
            if k == 0 {
                warnings.append(&mut sink);
            }
            if !keeps(t, &events) {
                if k == 0 {
                    warnings.push(format!(
                        "task {}: left out: it is I/O-bound (it blocks only on I/O), and without its I/O steps it \
                         would spin on the CPU in rt-app",
                        t.name
                    ));
                    omitted.push(t.name.clone());
                }
                kept = false;
                break;
            }
            let mut obj = thread_props(spec, t, inst.map_or(0, |i| i as usize));
            let reps = forward_reps(spec, d, &names);
            if let (true, Some(n)) = (reps > 1, t.program.iterations) {
                // The program is written out `reps` times per rt-app loop.
                obj.insert("loop".into(), json!(n.div_ceil(u64::from(reps))));
                if k == 0 && !n.is_multiple_of(u64::from(reps)) {
                    warnings.push(format!(
                        "task {}: iterations = {n} rounded up to {} (its program is written out {reps} times to \
                         reach every instance of its next hop)",
                        t.name,
                        n.div_ceil(u64::from(reps)) * u64::from(reps)
                    ));
                }
            }
            if inst.is_none() && t.count > 1 {
                obj.insert("instance".into(), json!(t.count));
            }
            add_events(&mut obj, events);
            insert_unique(&mut tasks, names.object(d, inst.unwrap_or(0)), Value::Object(obj))?;
        }
        if !kept {
            continue;
        }
        let g = &spec.groups.groups[t.group];
        if t.group != t.cgroup {
            warnings.push(format!(
                "task {}: session {} runs in autogroup {} (cpu.shares {}) in the simulator; rt-app has no sessions: \
                 start it under setsid, or the threads share rt-app's own autogroup",
                t.name,
                t.session.as_deref().unwrap_or("?"),
                g.path,
                g.shares
            ));
        }
        // cpu.shares of the cgroup and its ancestors: rt-app creates the
        // directories but writes no shares.
        let mut gi = Some(t.cgroup);
        while let Some(i) = gi.filter(|&i| i != 0) {
            let grp = &spec.groups.groups[i];
            if grp.shares != 1024 && !warned_groups.contains(&i) {
                warned_groups.push(i);
                warnings.push(format!(
                    "task {}: taskgroup {} has cpu.shares {} in the scenario; rt-app creates the group but cannot set \
                     its shares: write {} to its cpu.shares before the run",
                    t.name, grp.path, grp.shares, grp.shares
                ));
            }
            gi = grp.parent;
        }
    }
    warnings.extend(unexpressed_settings(spec, &omitted));
    if tasks.is_empty() {
        bail!(
            "{}: nothing to export as rt-app: every task is I/O-only ({}); rt-app has no block-device steps",
            scenario.file(),
            omitted.join(", ")
        );
    }

    for s in &spec.sources {
        let t = &spec.tasks[s.target];
        if omitted.contains(&t.name) {
            continue;
        }
        let period = s.interval.mean_ns();
        let exact = matches!(s.interval, Dist::Const(_));
        warnings.push(format!(
            "source {}: {} arrivals{} become a periodic thread resuming {} every {} us; the target runs the mean work \
             of one arrival ({} us) after each resume, and a resume that finds it busy is lost (the simulator queues \
             items)",
            s.name,
            if exact { "periodic" } else { "random" },
            if exact { String::new() } else { format!(" (interval {})", dist_text(&s.interval)) },
            t.name,
            ns_to_us(period as u64),
            serve_work[s.target]
        ));
        let targets: Vec<Option<u32>> = if split[s.target] { (0..t.count).map(Some).collect() } else { vec![None] };
        for inst in targets {
            let target = names.object(s.target, inst.unwrap_or(0));
            let mut obj = Map::new();
            if s.start_ns > 0 {
                obj.insert("delay".into(), json!(ns_to_us(s.start_ns)));
            }
            add_events(
                &mut obj,
                // Resume first: the keys then sort in event order (one phase).
                vec![
                    ("resume", Value::String(target.clone())),
                    ("timer", json!({ "ref": "unique", "period": ns_to_us(period as u64).max(1) })),
                ],
            );
            let name = match inst {
                Some(i) => format!("source-{}_{i}", s.name),
                None => format!("source-{}", s.name),
            };
            insert_unique(&mut tasks, name, Value::Object(obj))?;
        }
    }

    refuse_unresumed(scenario, &tasks)?;

    // rt-app refuses a `cpus` entry the host does not have.
    let pinned_max = spec
        .tasks
        .iter()
        .filter(|t| !omitted.contains(&t.name))
        .flat_map(|t| t.affinity.iter())
        .filter(|set| set.len() != usize::from(spec.cpus))
        .filter_map(|set| set.iter().map(|c| c.0).max())
        .max();
    let need = match pinned_max {
        Some(c) => format!("; the `cpus` lists name CPUs up to {c}, which the host must have"),
        None => String::new(),
    };
    warnings.insert(
        0,
        format!(
            "machine: {} ({} HZ), kernel {} with its tunables, features and bandwidth rules{}: rt-app runs on \
             the host as it is; boot or tune it to match{need}",
            spec.machine.describe(),
            spec.hz,
            spec.kernel.label(),
            if spec.groups.autogroup { ", autogroup on" } else { "" }
        ),
    );
    if spec.machine.tick_offset_ns > 0 {
        warnings.push(format!(
            "machine.tick_offset: {} is not kept: rt-app starts wherever the host's tick grid is (`sim-cli measure` aligns it)",
            sim_core::format_duration(spec.machine.tick_offset_ns)
        ));
    }
    if spec.machine.wakeup_latency.is_some() {
        warnings.push("machine.wakeup_latency is a model input: the host has its own wake-up latency".into());
    }
    let secs = spec.duration_ns.div_ceil(1_000_000_000);
    if !spec.duration_ns.is_multiple_of(1_000_000_000) {
        warnings.push(format!(
            "duration: {} is not whole seconds; rt-app's duration is in seconds: {secs} s",
            sim_core::format_duration(spec.duration_ns)
        ));
    }
    let basename = if spec.name.is_empty() { "rt-app".to_string() } else { format!("rt-app-{}", spec.name) };
    let global = json!({
        "duration": secs,
        "calibration": "CPU0",
        "default_policy": "SCHED_OTHER",
        "lock_pages": false,
        "log_basename": basename,
    });
    Ok((json!({ "global": global, "tasks": tasks }), warnings))
}

/// `sim-cli export FILE --rt-app`: loads the scenario as `run` does, writes
/// the JSON to stdout (returned) or to `output`, the warnings to stderr.
pub fn command(file: &Path, variant: Option<&str>, sets: &[String], output: Option<&Path>) -> Result<String> {
    let (_, base) = crate::input::load_text(file, sets)?;
    let scenario = match variant {
        Some(v) => base.with_variant(v)?,
        None => base,
    };
    let (doc, warnings) = export(&scenario)?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let text = serde_json::to_string_pretty(&doc).context("export --rt-app: formatting the JSON")? + "\n";
    match output {
        None => Ok(text),
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("-o {}: cannot write the file", path.display()))?;
            eprintln!("wrote {} (rt-app JSON)", path.display());
            Ok(String::new())
        }
    }
}

/// Which declarations get one thread object per instance.
fn split_declarations(spec: &ScenarioSpec) -> Vec<bool> {
    let mut split: Vec<bool> =
        spec.tasks.iter().map(|t| t.count > 1 && t.affinity.windows(2).any(|w| w[0] != w[1])).collect();
    for s in &spec.sources {
        // Each instance of a served declaration has its own source.
        split[s.target] |= spec.tasks[s.target].count > 1;
    }
    for t in &spec.tasks {
        for step in &t.program.steps {
            if let Step::Wake(target) = step {
                let (d, _) = declaration_of(spec, target.resolve(0));
                // A wake names one instance; rt-app's resume wakes a whole object.
                split[d] |= spec.tasks[d].count > 1;
            }
        }
    }
    // A forwarded item goes to one instance of the next hop (the least
    // loaded, in the engine); rt-app's resume would wake them all.
    for t in &spec.tasks {
        if let Some(next) = t.forward {
            split[next] |= spec.tasks[next].count > 1;
        }
    }
    // A waker (or forwarder) whose instances wake different objects needs
    // one object each.
    for (d, t) in spec.tasks.iter().enumerate() {
        let wakes_split = t.program.steps.iter().any(|s| match s {
            Step::Wake(target) => split[declaration_of(spec, target.resolve(0)).0],
            _ => false,
        }) || t.forward.is_some_and(|n| split[n]);
        split[d] |= t.count > 1 && wakes_split;
    }
    split
}

/// The declaration and instance of a task id.
fn declaration_of(spec: &ScenarioSpec, id: TaskId) -> (usize, u32) {
    // Validation resolves every wake target to a declared task.
    spec.declaration_of(id).unwrap_or((0, 0))
}

struct ObjectNames<'a> {
    spec: &'a ScenarioSpec,
    split: &'a [bool],
}

impl ObjectNames<'_> {
    /// The rt-app thread object of instance `i` of declaration `d`.
    fn object(&self, d: usize, i: u32) -> String {
        let name = &self.spec.tasks[d].name;
        if self.split[d] { format!("{name}_{i}") } else { name.clone() }
    }
}

/// Per declaration: the mean CPU work of one item it serves, in µs: a
/// source's arrivals (a burst's work) at its target, then along the route
/// (`forward`) each hop's `hop_work`, or the item's own work when the hop
/// gives none. The arrival rates weight the sources that reach it.
fn serve_work_us(spec: &ScenarioSpec) -> Vec<u64> {
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
fn ns_to_us(ns: u64) -> u64 {
    ns.saturating_add(500) / 1000
}

fn dist_text(d: &Dist) -> String {
    let f = sim_core::format_duration;
    match d {
        Dist::Const(v) => f(*v),
        Dist::Uniform { low, high } => format!("uniform({}, {})", f(*low), f(*high)),
        Dist::Exp { mean } => format!("exp({})", f(*mean)),
        Dist::Normal { mean, sd } => format!("normal({}, {})", f(*mean), f(*sd)),
        Dist::LogNormal { median, sigma } => format!("lognormal({}, {sigma})", f(*median)),
        Dist::Pareto { scale, shape } => format!("pareto({}, {shape})", f(*scale)),
    }
}

/// A duration step's value in µs, with a warning when it is not exact.
fn duration_us(d: &Dist, what: &str, warn: &mut Vec<String>) -> u64 {
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
fn thread_props(spec: &ScenarioSpec, t: &TaskSpec, instance: usize) -> Map<String, Value> {
    let mut obj = Map::new();
    let policy = match t.policy {
        Policy::Normal => "SCHED_OTHER",
        Policy::Batch => "SCHED_BATCH",
        Policy::Idle => "SCHED_IDLE",
    };
    obj.insert("policy".into(), json!(policy));
    // For the fair policies rt-app's priority is the nice value (sched_nice).
    obj.insert("priority".into(), json!(t.nice));
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
const UNROLLED_EVENTS_MAX: usize = 4096;

/// How many times the program of declaration `d` is written out so that its
/// instances, together, reach every instance of its next hop: in repetition
/// `r` instance `i` resumes instance `(i + r·count) mod n`. One when it does
/// not forward, or its next hop is one object.
fn forward_reps(spec: &ScenarioSpec, d: usize, names: &ObjectNames) -> u32 {
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
fn task_events(
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
fn program_events(
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
            Step::Wake(target) => {
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
fn keeps(t: &TaskSpec, events: &[(&'static str, Value)]) -> bool {
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
fn add_events(obj: &mut Map<String, Value>, events: Vec<(&'static str, Value)>) {
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

fn serve_work_of(spec: &ScenarioSpec, d: usize) -> u64 {
    serve_work_us(spec).get(d).copied().unwrap_or(0)
}

/// The one place that goes through every setting of the scenario spec and
/// says what the export does with it: expressed in the JSON, warned here,
/// or warned where its events are built. Each struct is destructured
/// without `..`, so a setting added to the spec does not compile until it
/// is given its line here: nothing is dropped silently. Returns the
/// warnings of the settings not warned elsewhere. `omitted`: tasks left out.
fn unexpressed_settings(spec: &ScenarioSpec, omitted: &[String]) -> Vec<String> {
    let fmt = sim_core::format_duration;
    let mut w = Vec::new();
    let ScenarioSpec {
        name: _,        // expressed: global.log_basename
        description: _, // prose, not a setting
        seed: _,        // what it draws is warned per step (distributions become means)
        duration_ns: _, // expressed: global.duration (warned when not whole seconds)
        cpus: _,        // machine warning
        machine,
        hz: _,              // machine warning
        kernel: _,          // machine warning
        bandwidth_rules: _, // machine warning ("bandwidth rules")
        bandwidth_slice_us,
        context_switch_ns: _, // machine warning (the host's own cost)
        tunables: _,          // machine warning
        features: _,          // machine warning
        eevdf: _,             // machine warning
        eevdf_features: _,    // machine warning
        tasks,
        sources: _, // each warned as a periodic thread (`export`)
        groups,
        devices,
        device_mq: _,         // with `devices`
        events_max: _,        // a simulator budget, not a workload setting
        victim: _,            // which task the report explains, not a workload setting
        history_window_ns: _, // report setting
        warmup_ns: _,         // report setting: which part of the run the statistics cover
        limiters,
        io_queues,
    } = spec;
    // shape, isolcpus, nohz: the machine warning (machine.describe());
    // tick_offset, wakeup_latency: warned in `export`.
    let sim_core::MachineSpec { shape: _, isolcpus: _, nohz_idle: _, tick_offset_ns: _, wakeup_latency: _ } = machine;
    if *bandwidth_slice_us != 5000 {
        w.push(format!(
            "cfs.sched_cfs_bandwidth_slice_us = {bandwidth_slice_us}: a sysctl of the host \
             (/proc/sys/kernel/sched_cfs_bandwidth_slice_us); rt-app does not set it"
        ));
    }
    let sim_core::Groups { groups: list, autogroup: _, group_load } = groups; // autogroup: machine warning
    if *group_load != Default::default() {
        w.push(format!("groups: the group load model ({group_load:?}) is a model input: the host has its own"));
    }
    let kept = |t: &TaskSpec| !omitted.contains(&t.name);
    for (i, g) in list.iter().enumerate().skip(1) {
        let sim_core::GroupSpec { path, parent: _, shares: _, session: _, cpus, bandwidth, bfq_weight } = g;
        // shares: warned per task in `export`; session: the autogroup warning.
        let used = tasks.iter().filter(|t| kept(t)).any(|t| {
            let mut gi = Some(t.cgroup);
            // Bounded: the group tree has no cycles and at most `list.len()` levels.
            for _ in 0..list.len() {
                match gi {
                    Some(x) if x == i => return true,
                    Some(x) => gi = list[x].parent,
                    None => break,
                }
            }
            false
        });
        if !used {
            continue;
        }
        if let Some(b) = bandwidth {
            let quota = b.quota_ns.map_or("max".to_string(), |q| (q / 1000).to_string());
            w.push(format!(
                "taskgroup {path}: cpu.max = \"{quota} {}\"{} in the scenario; rt-app creates the group but cannot \
                 set its quota: write it to {path}/cpu.max (cgroup v2) before the run, or the threads run unthrottled",
                b.period_ns / 1000,
                if b.burst_ns > 0 { format!(" (cpu.max.burst {})", b.burst_ns / 1000) } else { String::new() }
            ));
        }
        if cpus.len() != usize::from(spec.cpus) {
            w.push(format!(
                "taskgroup {path}: cpuset.cpus {} in the scenario; rt-app does not write cpusets: set it before the run",
                cpus.iter().map(|c| c.0.to_string()).collect::<Vec<_>>().join(",")
            ));
        }
        if *bfq_weight != sim_core::BFQ_GROUP_WEIGHT_DEFAULT {
            w.push(format!("taskgroup {path}: io.bfq.weight {bfq_weight} is not kept: rt-app has no block I/O"));
        }
    }
    for t in tasks.iter().filter(|t| kept(t)) {
        let TaskSpec {
            name,
            count: _,    // expressed: instance (or one object per instance)
            first: _,    // ids, not a setting
            affinity: _, // expressed: cpus
            nice: _,     // expressed: priority
            policy: _,   // expressed: policy
            group: _,    // autogroup warning in `export`
            cgroup: _,   // expressed: taskgroup
            session: _,  // warned in `export`
            start_ns: _, // expressed: delay
            slice_ns,
            program: _,  // each step in `task_events`
            forward: _,  // expressed: resume of the next hop (`task_events`)
            hop_work: _, // expressed: the next hop's run (its mean)
            limiter,
            ionice,
        } = t;
        if let Some(ns) = slice_ns {
            w.push(format!(
                "task {name}: slice {} (sched_attr.sched_runtime, 6.12+) is not kept: rt-app sets no slice for \
                 SCHED_OTHER threads; the host's default slice applies",
                fmt(*ns)
            ));
        }
        if let Some(l) = limiter {
            let lname = limiters.get(l.0 as usize).map_or("?", |x| x.name.as_str());
            w.push(format!(
                "task {name}: limiter = {lname} is not kept: rt-app has no elastic CPU limiter, so its run steps \
                 are not throttled by grants"
            ));
        }
        if ionice.is_some() {
            w.push(format!("task {name}: ionice is not kept: rt-app has no block I/O"));
        }
    }
    if !devices.is_empty() {
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        w.push(format!("devices: {} (block devices and their elevators) are not in rt-app", names.join(", ")));
    }
    for q in io_queues {
        w.push(format!("io_queues.{}: a userspace I/O scheduler; rt-app has no block I/O", q.name));
    }
    w
}

/// An rt-app thread that suspends itself and that no thread resumes would
/// wait forever (and rt-app's end of run would wait for it): refused,
/// naming the thread.
fn refuse_unresumed(scenario: &Scenario, tasks: &Map<String, Value>) -> Result<()> {
    let events = |t: &Value| -> Vec<(String, Value)> {
        let Some(obj) = t.as_object() else { return Vec::new() };
        let mut out: Vec<(String, Value)> = obj.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        if let Some(Value::Object(phases)) = obj.get("phases") {
            for p in phases.values().filter_map(Value::as_object) {
                out.extend(p.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        out
    };
    let mut resumed: Vec<String> = Vec::new();
    for t in tasks.values() {
        for (k, v) in events(t) {
            if let (true, Some(target)) = (k.starts_with("resume"), v.as_str()) {
                resumed.push(target.to_string());
            }
        }
    }
    for (name, t) in tasks {
        let suspends = events(t).iter().any(|(k, v)| k.starts_with("suspend") && v.as_str() == Some(name.as_str()));
        if suspends && !resumed.iter().any(|r| r == name) {
            bail!(
                "{}: export --rt-app: thread {name} suspends (a `wait` or `serve` step) and no thread resumes it \
                 (no `wake`, source or `forward` reaches it): rt-app would block it forever",
                scenario.file()
            );
        }
    }
    Ok(())
}

fn insert_unique(tasks: &mut Map<String, Value>, name: String, obj: Value) -> Result<()> {
    if tasks.contains_key(&name) {
        bail!("export --rt-app: two rt-app threads would be named `{name}`; rename a task or source");
    }
    tasks.insert(name, obj);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(toml: &str) -> Scenario {
        Scenario::from_toml("test.toml", toml).expect("the test scenario is valid")
    }

    /// A thread's events in the order rt-app runs them (phases in key order,
    /// events in key order within each).
    fn events(t: &Value) -> Vec<(String, Value)> {
        let obj = t.as_object().expect("a thread object");
        let phases: Vec<&Map<String, Value>> = match obj.get("phases") {
            Some(p) => p.as_object().expect("phases").values().map(|v| v.as_object().expect("a phase")).collect(),
            None => vec![obj],
        };
        const PROPS: &[&str] = &["instance", "cpus", "policy", "priority", "taskgroup", "delay", "loop", "phases"];
        phases
            .into_iter()
            .flat_map(|p| p.iter().filter(|(k, _)| !PROPS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())))
            .collect()
    }

    fn ev(list: &[(&str, Value)]) -> Vec<(String, Value)> {
        list.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    const PERIODIC: &str = r#"
schema = 1
seed = 1
duration = "1s"
[kernel]
version = "4.4"
[machine]
cpus = 2
[groups."/a"]
shares = 256
[[tasks]]
name = "tick"
cpus = "0"
nice = -5
group = "/a"
program = [{ run = "50us" }, { sleep_until = "1ms" }]
"#;

    #[test]
    fn model_only_machine_keys_are_said() {
        let text = PERIODIC
            .replace("cpus = 2\n", "cpus = 2\ntick_offset = \"1ms\"\nwakeup_latency = \"lognormal(20us, 0.5)\"\n");
        let (_, warnings) = export(&scenario(&text)).expect("exports");
        assert!(warnings.iter().any(|w| w.starts_with("machine.tick_offset: 1ms is not kept")), "{warnings:?}");
        assert!(warnings.iter().any(|w| w.starts_with("machine.wakeup_latency is a model input")), "{warnings:?}");
        let (_, plain) = export(&scenario(PERIODIC)).expect("exports");
        assert!(!plain.iter().any(|w| w.contains("tick_offset") || w.contains("wakeup_latency")), "{plain:?}");
    }

    #[test]
    fn periodic_task_exports_exactly() {
        let (doc, warnings) = export(&scenario(PERIODIC)).expect("exports");
        assert_eq!(
            doc["tasks"]["tick"],
            json!({
                "cpus": [0],
                "policy": "SCHED_OTHER",
                "priority": -5,
                "taskgroup": "/a",
                "run0": 50,
                "timer1": { "ref": "unique", "period": 1000 },
            })
        );
        assert_eq!(doc["global"]["duration"], json!(1));
        assert_eq!(doc["global"]["calibration"], json!("CPU0"));
        assert!(warnings[0].ends_with("name CPUs up to 0, which the host must have"), "{warnings:#?}");
        // The shares cannot be said in rt-app: warned, naming task and group.
        assert!(
            warnings.iter().any(|w| w.contains("task tick") && w.contains("/a") && w.contains("cpu.shares 256")),
            "{warnings:#?}"
        );
        // Nothing else about the task is approximate.
        assert_eq!(warnings.iter().filter(|w| w.contains("tick")).count(), 1, "{warnings:#?}");
        // rt-app runs events in file order: run before timer, global first.
        let text = serde_json::to_string_pretty(&doc).expect("serializes");
        let at = |k: &str| text.find(k).unwrap_or(usize::MAX);
        assert!(at("\"global\"") < at("\"tasks\""));
        assert!(at("\"run0\"") < at("\"timer1\""), "{text}");
    }

    #[test]
    fn events_whose_keys_do_not_sort_go_into_ordered_phases() {
        let toml = PERIODIC
            .replace(r#"[{ run = "50us" }, { sleep_until = "1ms" }]"#, r#"[{ sleep_until = "1ms" }, { run = "50us" }]"#)
            .replace("program", "iterations = 3\nprogram");
        let (doc, _) = export(&scenario(&toml)).expect("exports");
        let t = &doc["tasks"]["tick"];
        assert_eq!(t["phases"]["p0"], json!({ "timer0": { "ref": "unique", "period": 1000 } }));
        assert_eq!(t["phases"]["p1"], json!({ "run1": 50 }));
        assert_eq!(t["loop"], json!(3));
        assert_eq!(t.get("run1"), None);
    }

    #[test]
    fn wake_and_wait_become_resume_and_suspend() {
        let (doc, warnings) = export(&scenario(
            r#"
schema = 1
seed = 1
duration = "2500ms"
[kernel]
version = "4.4"
[machine]
cpus = 2
[[tasks]]
name = "waker"
program = [{ sleep = "exp(1ms)" }, { wake = "sleeper" }]
[[tasks]]
name = "sleeper"
policy = "batch"
program = ["wait", { run = "100us" }, "yield"]
"#,
        ))
        .expect("exports");
        let tasks = &doc["tasks"];
        assert_eq!(events(&tasks["waker"]), ev(&[("sleep0", json!(1000)), ("resume1", json!("sleeper"))]));
        assert_eq!(
            events(&tasks["sleeper"]),
            ev(&[("suspend0", json!("sleeper")), ("run1", json!(100)), ("yield2", json!(""))])
        );
        assert_eq!(tasks["sleeper"]["policy"], json!("SCHED_BATCH"));
        assert_eq!(doc["global"]["duration"], json!(3));
        for want in ["task waker step 0 (sleep): exp(1ms) becomes its mean", "task sleeper step 0 (wait)", "duration"] {
            assert!(warnings.iter().any(|w| w.starts_with(want)), "{want}: {warnings:#?}");
        }
    }

    #[test]
    fn instances_woken_one_by_one_get_their_own_objects() {
        let (doc, _) = export(&scenario(
            r#"
schema = 1
seed = 1
duration = "1s"
[kernel]
version = "4.4"
[machine]
cpus = 2
[[tasks]]
name = "waker"
count = 2
program = [{ sleep = "1ms" }, { wake = "sleeper" }]
[[tasks]]
name = "sleeper"
count = 2
program = ["wait", { run = "100us" }]
[[tasks]]
name = "pinned"
count = 2
cpus = "0-1"
pin_each = true
program = [{ run = "1ms" }, { sleep = "1ms" }]
"#,
        ))
        .expect("exports");
        let tasks = doc["tasks"].as_object().expect("an object");
        let names: Vec<&str> = tasks.keys().map(String::as_str).collect();
        assert_eq!(names, ["pinned_0", "pinned_1", "sleeper_0", "sleeper_1", "waker_0", "waker_1"]);
        assert_eq!(events(&tasks["waker_1"]), ev(&[("sleep0", json!(1000)), ("resume1", json!("sleeper_1"))]));
        assert_eq!(events(&tasks["sleeper_1"]), ev(&[("suspend0", json!("sleeper_1")), ("run1", json!(100))]));
        assert_eq!(tasks["pinned_1"]["cpus"], json!([1]));
        assert_eq!(tasks["pinned_1"].get("instance"), None);
    }

    #[test]
    fn a_source_becomes_a_periodic_thread_with_a_warning() {
        let (doc, warnings) = export(&scenario(
            r#"
schema = 1
seed = 1
duration = "1s"
[kernel]
version = "4.4"
[machine]
cpus = 2
[[tasks]]
name = "server"
count = 3
program = ["serve"]
[[sources]]
name = "req"
target = "server"
rate_per_s = 1000
burst = 2
work = "exp(20us)"
start = "5ms"
"#,
        ))
        .expect("exports");
        let tasks = &doc["tasks"];
        for i in 0..3 {
            assert_eq!(
                tasks[format!("source-req_{i}")],
                json!({
                    "delay": 5000,
                    "resume0": format!("server_{i}"),
                    "timer1": { "ref": "unique", "period": 1000 },
                })
            );
            // One arrival: a burst of 2 items of 20 us mean work.
            assert_eq!(
                events(&tasks[format!("server_{i}")]),
                ev(&[("suspend0", json!(format!("server_{i}"))), ("run1", json!(40))])
            );
        }
        assert!(
            warnings.iter().any(|w| w.starts_with("source req: random arrivals") && w.contains("every 1000 us")),
            "{warnings:#?}"
        );
        assert!(warnings.iter().any(|w| w.starts_with("task server step 0 (serve)")), "{warnings:#?}");
    }

    #[test]
    fn io_only_scenario_is_refused_and_io_steps_are_left_out() {
        let io = |tasks: &str| {
            format!(
                r#"
schema = 1
seed = 1
duration = "1s"
[kernel]
version = "4.4"
[machine]
cpus = 2
[devices.sda]
kind = "ssd"
{tasks}
"#
            )
        };
        let only_io = io(r#"
[[tasks]]
name = "writer"
program = [{ write = "128KiB", wait = false, depth = 4 }, { run = "10us" }]
[[tasks]]
name = "syncer"
program = [{ write = "4KiB" }, "fdatasync"]
"#);
        let err = export(&scenario(&only_io)).expect_err("refused").to_string();
        assert!(err.contains("every task is I/O-only (writer, syncer)"), "{err}");

        let (doc, warnings) = export(&scenario(&io(r#"
[[tasks]]
name = "reader"
program = [{ read = "4KiB" }, { run = "50us" }, { sleep_until = "10ms" }]
"#)))
        .expect("exports");
        assert_eq!(
            events(&doc["tasks"]["reader"]),
            ev(&[("run0", json!(50)), ("timer1", json!({ "ref": "unique", "period": 10_000 }))])
        );
        assert!(
            warnings.iter().any(|w| w.starts_with("task reader step 0 (read 4096 bytes, waited for): left out")),
            "{warnings:#?}"
        );
    }

    /// Every shipped scenario and variant exports; which tasks rt-app gets.
    #[test]
    fn every_shipped_scenario_exports() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("scenarios/ is readable")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        assert!(files.len() >= 8, "{files:?}");
        for f in &files {
            let text = std::fs::read_to_string(f).expect("readable");
            let base = Scenario::from_toml(&f.display().to_string(), &text).expect("valid");
            let variants: Vec<Scenario> =
                base.variant_names().iter().map(|v| base.with_variant(v).expect("valid variant")).collect();
            let runs = std::iter::once(base.clone()).chain(variants);
            for s in runs {
                let what = format!("{} {:?}", f.display(), s.variant());
                let (doc, warnings) = export(&s).unwrap_or_else(|e| panic!("{what}: {e:#}"));
                assert!(warnings[0].starts_with("machine:"), "{what}");
                let tasks = doc["tasks"].as_object().expect("tasks");
                assert!(!tasks.is_empty(), "{what}");
                for (name, t) in tasks {
                    check_thread(&format!("{what} {name}"), t, tasks);
                }
                check_settings_said(&what, &s, &doc, &warnings);
                // The I/O-bound tasks are left out, and said so.
                let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                let left_out: &[&str] = match stem {
                    "cfq-starvation" => &["commitlog"],
                    "mixed-rw" => &["writer"],
                    _ => &[],
                };
                for t in left_out {
                    assert!(!tasks.contains_key(*t), "{what}: {t}");
                    assert!(warnings.iter().any(|w| w.starts_with(&format!("task {t}: left out"))), "{what}");
                }
            }
        }
    }

    /// Defect: settings the export cannot express were dropped without a
    /// warning (a pod's `cpu.max`, a limiter, a task's slice), and `forward`
    /// hops became threads that suspend forever. Checked here from the spec,
    /// independently of `unexpressed_settings`: each non-default setting
    /// appears in the JSON or in a warning, and every thread that suspends
    /// is resumed by another.
    fn check_settings_said(what: &str, s: &Scenario, doc: &Value, warnings: &[String]) {
        let spec = &s.spec;
        let tasks = doc["tasks"].as_object().expect("tasks");
        let said = |needles: &[&str]| warnings.iter().any(|w| needles.iter().all(|n| w.contains(n)));
        let exported =
            |name: &str| tasks.keys().any(|k| k == name || k.strip_prefix(name).is_some_and(|r| r.starts_with('_')));
        for t in spec.tasks.iter().filter(|t| exported(&t.name)) {
            let mut gi = Some(t.cgroup);
            while let Some(i) = gi.filter(|&i| i != 0) {
                let g = &spec.groups.groups[i];
                if g.bandwidth.is_some() {
                    assert!(said(&[&format!("taskgroup {}:", g.path), "cpu.max"]), "{what}: {} {warnings:#?}", g.path);
                }
                gi = g.parent;
            }
            if t.limiter.is_some() {
                assert!(said(&[&format!("task {}: limiter", t.name)]), "{what}: {}", t.name);
            }
            if t.slice_ns.is_some() {
                assert!(said(&[&format!("task {}: slice", t.name)]), "{what}: {}", t.name);
            }
            if let Some(next) = t.forward {
                let next = &spec.tasks[next].name;
                let resumes_next =
                    tasks.iter().filter(|(k, _)| k.split('_').next() == Some(t.name.as_str())).any(|(_, o)| {
                        events(o).iter().any(|(k, v)| {
                            k.starts_with("resume") && v.as_str().is_some_and(|x| x.starts_with(next.as_str()))
                        })
                    });
                assert!(resumes_next, "{what}: {} forwards to {next}", t.name);
            }
        }
        let resumed: Vec<String> = tasks
            .values()
            .flat_map(events)
            .filter(|(k, _)| k.starts_with("resume"))
            .filter_map(|(_, v)| v.as_str().map(str::to_string))
            .collect();
        for (name, t) in tasks {
            if events(t).iter().any(|(k, _)| k.starts_with("suspend")) {
                assert!(resumed.contains(name), "{what}: {name} suspends and nothing resumes it");
            }
        }
    }

    #[test]
    fn quotas_limiters_slices_and_hops_are_said_or_expressed() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let load = |f: &str| {
            let text = std::fs::read_to_string(repo.join(f)).expect("readable");
            Scenario::from_toml(f, &text).expect("valid")
        };
        let (_, w) = export(&load("k8s-cpu-limit.toml")).expect("exports");
        assert!(w.iter().any(|w| w.starts_with("taskgroup /kubepods/pod-api: cpu.max = \"200000 100000\"")), "{w:#?}");
        let (doc, w) = export(&load("elastic-backup.toml")).expect("exports");
        assert!(w.iter().any(|w| w.starts_with("task backup: limiter = backup is not kept")), "{w:#?}");
        // wal (2 instances) forwards to respond (4): each wal thread resumes
        // two respond threads in turn, so all four are reached.
        let wal0: Vec<String> = events(&doc["tasks"]["wal_0"])
            .into_iter()
            .filter(|(k, _)| k.starts_with("resume"))
            .map(|(_, v)| v.as_str().unwrap_or("").to_string())
            .collect();
        assert_eq!(wal0, ["respond_0", "respond_2"]);
        // A slice (6.12+) is not in rt-app's grammar for SCHED_OTHER.
        let sliced = PERIODIC
            .replace("version = \"4.4\"", "version = \"6.18\"")
            .replace("nice = -5", "nice = -5\nslice = \"1ms\"");
        let (_, w) = export(&scenario(&sliced)).expect("exports");
        assert!(w.iter().any(|w| w.starts_with("task tick: slice 1ms")), "{w:#?}");
        // A thread nothing resumes is refused, not exported to hang.
        let lonely = PERIODIC.replace(
            r#"program = [{ run = "50us" }, { sleep_until = "1ms" }]"#,
            r#"program = ["wait", { run = "50us" }]"#,
        );
        let e = export(&scenario(&lonely)).expect_err("refused").to_string();
        assert!(e.contains("thread tick suspends") && e.contains("rt-app would block it forever"), "{e}");
    }

    /// Each thread object: event keys rt-app knows, a step that lets time
    /// pass, resume targets that exist.
    fn check_thread(what: &str, t: &Value, tasks: &Map<String, Value>) {
        let mut timed = false;
        let list = events(t);
        assert!(!list.is_empty(), "{what}: no events");
        for (n, (k, v)) in list.iter().enumerate() {
            let kind = ["run", "sleep", "timer", "suspend", "resume", "yield"]
                .into_iter()
                .find(|e| k.starts_with(e) && k[e.len()..].chars().all(|c| c.is_ascii_digit()))
                .unwrap_or_else(|| panic!("{what}: unknown key {k}"));
            // The order rt-app meets the keys in is the program's order.
            assert_eq!(k[kind.len()..].parse::<usize>().ok(), Some(n), "{what}: {k} out of order");
            timed |= matches!(kind, "run" | "sleep" | "timer" | "suspend");
            if kind == "resume" {
                let target = v.as_str().expect("a thread name");
                assert!(tasks.contains_key(target), "{what}: resume {target}");
            }
        }
        assert!(timed, "{what}: no event takes time");
    }
}
