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
mod events;
mod settings;
#[cfg(test)]
mod tests;

use anyhow::{Context, Result, bail};
use events::{
    ObjectNames, add_events, declaration_of, dist_text, forward_reps, keeps, ns_to_us, serve_work_us, task_events,
    thread_props,
};
use serde_json::{Map, Value, json};
use settings::unexpressed_settings;
use sim_core::{Dist, Scenario, ScenarioSpec, Step, TaskSpec};
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
    let omitted = task_threads(spec, &names, &serve_work, &mut tasks, &mut warnings)?;
    warnings.extend(unexpressed_settings(spec, &omitted));
    if tasks.is_empty() {
        bail!(
            "{}: nothing to export as rt-app: every task is I/O-only ({}); rt-app has no block-device steps",
            scenario.file(),
            omitted.join(", ")
        );
    }

    source_threads(spec, &names, &serve_work, &omitted, &mut tasks, &mut warnings)?;

    refuse_unresumed(scenario, &tasks)?;

    machine_warnings(spec, &omitted, &mut warnings);
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

/// One rt-app thread object per task declaration (or per instance, where
/// they must be told apart) into `tasks`; returns the names of the tasks
/// left out (I/O-bound: without their I/O steps they would spin).
fn task_threads(
    spec: &ScenarioSpec,
    names: &ObjectNames,
    serve_work: &[u64],
    tasks: &mut Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<Vec<String>> {
    let split = names.split;
    let mut omitted = Vec::new();
    let mut warned_groups = Vec::new();
    for (d, t) in spec.tasks.iter().enumerate() {
        let instances: Vec<Option<u32>> = if split[d] { (0..t.count).map(Some).collect() } else { vec![None] };
        let mut kept = true;
        for (k, inst) in instances.iter().enumerate() {
            // Warnings are the declaration's: say them once, not per instance.
            let mut sink = Vec::new();
            let events = task_events(spec, d, inst.unwrap_or(0), names, serve_work[d], &mut sink);
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
            if k == 0 && t.policy == sim_core::Policy::Stop {
                warnings.push(format!(
                    "task {}: policy \"stop\" written as SCHED_FIFO 99: no system call makes a stop task (the \
                     kernel gives the class only to its per-CPU stopper threads, sched_set_stop_task), and FIFO 99 \
                     is what they look like to userspace; unlike a stop task it is preempted by deadline tasks (and \
                     the 6.12+ fair server) and throttled by sched_rt_runtime_us",
                    t.name
                ));
            }
            let mut obj = thread_props(spec, t, inst.map_or(0, |i| i as usize));
            let reps = forward_reps(spec, d, names);
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
            insert_unique(tasks, names.object(d, inst.unwrap_or(0)), Value::Object(obj))?;
        }
        if !kept {
            continue;
        }
        group_warnings(spec, t, &mut warned_groups, warnings);
    }
    Ok(omitted)
}

/// The warnings for `t`'s groups: its autogroup session, and the cpu.shares
/// of its cgroup and ancestors (once per group).
fn group_warnings(spec: &ScenarioSpec, t: &TaskSpec, warned_groups: &mut Vec<usize>, warnings: &mut Vec<String>) {
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

/// Each request source as a periodic thread resuming its target (each
/// instance of it, where they are told apart).
fn source_threads(
    spec: &ScenarioSpec,
    names: &ObjectNames,
    serve_work: &[u64],
    omitted: &[String],
    tasks: &mut Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<()> {
    let split = names.split;
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
            insert_unique(tasks, name, Value::Object(obj))?;
        }
    }

    Ok(())
}

/// What rt-app leaves to the host: the machine line (first of all
/// warnings), the tick offset and the modelled wake-up latency.
fn machine_warnings(spec: &ScenarioSpec, omitted: &[String], warnings: &mut Vec<String>) {
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
    if spec.machine.noise.is_some() {
        warnings.push(
            "machine.noise is a model input: the host has its own wake-up latency, kernel time and background \
             (its background threads are exported as tasks)"
                .into(),
        );
    }
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
            if let Step::Wake { target, .. } = step {
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
            Step::Wake { target, .. } => split[declaration_of(spec, target.resolve(0)).0],
            _ => false,
        }) || t.forward.is_some_and(|n| split[n]);
        split[d] |= t.count > 1 && wakes_split;
    }
    split
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
