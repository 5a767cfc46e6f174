//! What the page can change in a scenario: one control per kernel setting the
//! scenario uses, each naming the override key it writes (the same keys as
//! `sim-cli --set`), its current and its unoverridden value, and its range in
//! real units. The page renders these; it never invents a key or a range.

use serde_json::{Value, json};
use sim_core::{
    HZ_CHOICES, KernelModel, Policy, SYSCTL_GRANULARITY_NS, SYSCTL_WAKEUP_GRANULARITY_NS, Scenario, ScenarioSpec,
    THREADS_PER_CORE_MAX, TaskSpec, cpu_list,
};

/// The range the `cfs.base_slice_ns` slider offers: 10 µs up to what the
/// kernel's u32 debugfs file holds (the core accepts 0 too; a log slider cannot).
const BASE_SLICE_NS: (u64, u64) = (10_000, u32::MAX as u64);

/// Shortest and longest duration the duration slider offers.
const DURATION_NS: (u64, u64) = (10_000_000, 60_000_000_000);

/// The range the fair server's sliders offer: 10 µs (the runtime's slider
/// also goes to 0, the server off) up to the longest period debugfs takes
/// (6.12 debug.c `sched_fair_server_write`: 100 µs to 1 << 22 µs; the core
/// checks the period's lower bound and runtime ≤ period).
const FAIR_SERVER_NS: (u64, u64) = (10_000, (1 << 22) * 1_000);

/// The range the deadline sliders offer: 10 µs up to
/// `sched_deadline_period_max_us` (4.194304 s; the core checks
/// `__checkparam_dl`: at least 1024 ns of runtime, runtime ≤ deadline ≤ period).
const DL_NS: (u64, u64) = (10_000, (1 << 22) * 1_000);

/// `sched_rt_period_us` and `sched_rt_runtime_us` are ints (`sched_rt_handler`).
const RT_SYSCTL_MAX: i64 = i32::MAX as i64;

/// The `sched_priority` a task switched to fifo or rr gets (its control
/// then moves it): the middle of 1..99, where `chrt -f 50` puts threads.
const RT_PRIORITY_NEW: u8 = 50;

/// The CBS reservation a task switched to deadline gets (its sliders then
/// move it): 1 ms every 10 ms, as `chrt -d --sched-runtime 1000000
/// --sched-deadline 10000000`; the period follows the deadline.
const DL_NEW_NS: (u64, u64) = (1_000_000, 10_000_000);

/// `text` as the TOML value an override sends (`"4.4"` must stay a string).
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// An override key segment naming a group path (quoted: paths hold dots and slashes).
fn group_key(path: &str) -> String {
    format!("groups.{}.shares", quoted(path))
}

fn log_slider(key: &str, label: &str, section: &str, value: u64, default: u64, range: (u64, u64), help: &str) -> Value {
    json!({
        "key": key, "label": label, "section": section, "kind": "log-ns",
        "value": value, "default": default, "min": range.0.max(1), "max": range.1, "help": help,
    })
}

fn select(
    key: &str,
    label: &str,
    section: &str,
    value: &str,
    default: &str,
    options: &[(String, String)],
    help: &str,
) -> Value {
    let options: Vec<Value> = options.iter().map(|(v, l)| json!({ "value": v, "label": l })).collect();
    json!({
        "key": key, "label": label, "section": section, "kind": "select",
        "value": value, "default": default, "options": options, "help": help,
    })
}

fn toggle(key: &str, label: &str, section: &str, value: bool, default: bool, help: &str) -> Value {
    json!({ "key": key, "label": label, "section": section, "kind": "bool", "value": value, "default": default, "help": help })
}

fn text(key: &str, label: &str, section: &str, value: &str, default: &str, placeholder: &str, help: &str) -> Value {
    json!({
        "key": key, "label": label, "section": section, "kind": "text",
        "value": value, "default": default, "placeholder": placeholder, "help": help,
    })
}

fn number(
    key: &str,
    label: &str,
    section: &str,
    value: impl Into<Value>,
    default: impl Into<Value>,
    range: (i64, i64),
    unit: &str,
) -> Value {
    json!({
        "key": key, "label": label, "section": section, "kind": "int",
        "value": value.into(), "default": default.into(), "min": range.0, "max": range.1, "unit": unit,
    })
}

/// The page's description of `cur` (with the page's overrides) against `base`
/// (the same file and variant without them): variants, victim, and controls.
///
/// The fair-class controls follow the model `cur` runs (`kernel.version`):
/// the CFS knobs and feature bits on 4.4, `base_slice_ns` and the model's
/// EEVDF features on 6.x. Their defaults are the scenario's under that model
/// (`base` with only `kernel.version` overridden), so a control left alone
/// sends no override. They carry `"model_specific": true`, and the kernel
/// selector `"switches_model": true`: the page drops the former's overrides
/// when the latter changes (a CFS knob would be refused on 6.x).
pub fn describe(base: &Scenario, cur: &Scenario) -> Value {
    let (b, c) = (&base.spec, &cur.spec);
    let under_model = (b.kernel != c.kernel)
        .then(|| base.with_overrides(&[("kernel.version", quoted(c.kernel.version()).as_str())]).ok())
        .flatten();
    let mb = under_model.as_ref().map_or(b, |s| &s.spec);
    let mut controls = Vec::new();
    run_controls(&mut controls, b, c);
    fair_controls(&mut controls, b, mb, c);
    // After the CFS sliders: on a phone the first slider stays next to the histogram.
    machine_controls(&mut controls, b, c);
    rt_controls(&mut controls, b, mb, c);
    group_controls(&mut controls, b, c);
    device_controls(&mut controls, b, c);
    json!({
        "file": cur.file(),
        "name": c.name,
        "description": c.description,
        "variants": base.variant_names(),
        "variant": cur.variant(),
        "victim": c.tasks[c.victim].name,
        "has_io": !c.devices.is_empty(),
        "duration_ns": c.duration_ns,
        "kernel": c.kernel.version(),
        "model": c.kernel.label(),
        "controls": controls,
    })
}

fn run_controls(out: &mut Vec<Value>, b: &ScenarioSpec, c: &ScenarioSpec) {
    // Up to 2^53 - 1: larger seeds would lose digits in a JS number.
    out.push(number("seed", "seed", "Run", c.seed, b.seed, (0, 9_007_199_254_740_991), ""));
    out.push(log_slider(
        "duration",
        "simulated duration",
        "Run",
        c.duration_ns,
        b.duration_ns,
        DURATION_NS,
        "Longer runs find rarer worst cases and take longer.",
    ));
}

/// The machine: topology (the product of sockets, cores and threads must
/// equal `cpus`; a shape key left out of the scenario is derived from the
/// others, so changing one of sockets or threads keeps `cpus`), the
/// `isolcpus=` list and the tick mode. A bad combination is the core's
/// error, named by its key.
fn machine_controls(out: &mut Vec<Value>, b: &ScenarioSpec, c: &ScenarioSpec) {
    let (bm, cm) = (&b.machine, &c.machine);
    let (bs, cs) = (&bm.shape, &cm.shape);
    let max = sim_core::CPUS_MAX as i64;
    let section = "Machine";
    let mut n = |key: &str, label: &str, v: u16, d: u16, most: i64, help: &str| {
        let mut ctl = number(&format!("machine.{key}"), label, section, v, d, (1, most), "");
        ctl["help"] = help.into();
        out.push(ctl);
    };
    n("cpus", "CPUs", c.cpus, b.cpus, max, "Logical CPUs: must equal sockets × cores per socket × threads per core.");
    n("sockets", "sockets", cs.sockets, bs.sockets, max, "Sockets (an MC domain each: the LLC is the socket).");
    n("cores_per_socket", "cores per socket", cs.cores_per_socket, bs.cores_per_socket, max, "Cores per socket.");
    n(
        "threads_per_core",
        "threads per core",
        cs.threads_per_core,
        bs.threads_per_core,
        i64::from(THREADS_PER_CORE_MAX),
        "SMT siblings per core (an SMT domain when 2 or more).",
    );
    n(
        "numa_nodes",
        "NUMA nodes",
        cs.numa_nodes,
        bs.numa_nodes,
        max,
        "Must divide sockets: a node holds whole sockets.",
    );
    // The CLS level exists in the 6.x models only; its override is dropped when the model changes.
    // Unset, a socket has as many clusters as cores (each core its own L2: no cluster level).
    if c.kernel.has_cluster_level() {
        let mut ctl = number(
            "machine.clusters_per_socket",
            "clusters per socket",
            section,
            cs.clusters_per_socket.unwrap_or(cs.cores_per_socket),
            bs.clusters_per_socket.unwrap_or(cs.cores_per_socket),
            (1, i64::from(cs.cores_per_socket)),
            "",
        );
        ctl["help"] = "Cores sharing an L2 (e.g. E-core modules of 4): the CLS sched domain between SMT and MC \
                       (6.x, CONFIG_SCHED_CLUSTER). Must divide cores per socket; equal to it, each core has \
                       its own L2 and there is no cluster level."
            .into();
        out.push(model_specific(ctl));
    }
    out.push(text(
        "machine.isolcpus",
        "isolcpus",
        section,
        &cpu_list(&cm.isolcpus),
        &cpu_list(&bm.isolcpus),
        "e.g. 2-3,6",
        "The isolcpus= boot parameter: these CPUs leave the sched domains (no load balancing) and the default affinity.",
    ));
    out.push(toggle(
        "machine.nohz",
        "nohz (idle CPUs stop their tick)",
        section,
        cm.nohz_idle,
        bm.nohz_idle,
        "CONFIG_NO_HZ_IDLE; an idle CPU's load is balanced by nohz_idle_balance.",
    ));
}

/// The classes above fair, machine-wide: the RT sysctls of every model,
/// and from 6.12 `CONFIG_RT_GROUP_SCHED` and the fair server (the keys
/// `KernelModel::lacks_setting` names lacking on 4.4 and 6.6: not offered
/// there, and model-specific, so the kernel selector drops them). `mb` is
/// the scenario under `c`'s model (those controls' defaults). Bad values
/// (a runtime above its period, …) are the core's errors.
fn rt_controls(out: &mut Vec<Value>, b: &ScenarioSpec, mb: &ScenarioSpec, c: &ScenarioSpec) {
    let section = "RT and deadline";
    let runtime_us = |s: &ScenarioSpec| s.rt.runtime_ns.map_or(-1, |ns| (ns / 1_000) as i64);
    let mut ctl = number(
        "rt.sched_rt_runtime_us",
        "sched_rt_runtime_us",
        section,
        runtime_us(c),
        runtime_us(b),
        (-1, RT_SYSCTL_MAX),
        "µs",
    );
    ctl["help"] = "RT tasks' CPU time per period, -1 for no limit (kernel.sched_rt_runtime_us): 4.4 and 6.6 \
                   throttle RT tasks past it; 6.12+ only with rt_group_sched (the fair server keeps fair tasks \
                   running instead). Also the cap of deadline admission."
        .into();
    out.push(ctl);
    let period_us = |s: &ScenarioSpec| (s.rt.period_ns / 1_000) as i64;
    let mut ctl = number(
        "rt.sched_rt_period_us",
        "sched_rt_period_us",
        section,
        period_us(c),
        period_us(b),
        (1, RT_SYSCTL_MAX),
        "µs",
    );
    ctl["help"] = "The period of RT throttling and of deadline admission's cap (kernel.sched_rt_period_us).".into();
    out.push(ctl);
    // The core keeps the slice in ticks (msecs_to_jiffies rounds up): shown
    // in whole ms rounded down, which sent back gives the same ticks.
    let rr_ms = |s: &ScenarioSpec| {
        (u64::from(s.rt.rr_timeslice_ticks) * 1_000 / u64::from(s.hz.max(1))).min(RT_SYSCTL_MAX as u64) as i64
    };
    let mut ctl = number(
        "rt.sched_rr_timeslice_ms",
        "sched_rr_timeslice_ms",
        section,
        rr_ms(c),
        rr_ms(b),
        (1, RT_SYSCTL_MAX),
        "ms",
    );
    ctl["help"] = "SCHED_RR's time slice among tasks of equal priority (kernel.sched_rr_timeslice_ms), in \
                   whole ticks (rounded up); 0 restores 100 ms."
        .into();
    out.push(ctl);
    if !c.kernel.lacks_setting("rt.rt_group_sched") {
        out.push(model_specific(toggle(
            "rt.rt_group_sched",
            "rt_group_sched (CONFIG_RT_GROUP_SCHED)",
            section,
            c.rt.group_sched,
            mb.rt.group_sched,
            "From 6.12, RT throttling by sched_rt_runtime_us exists only in kernels built with \
             CONFIG_RT_GROUP_SCHED (distributions build without it).",
        )));
    }
    if let Some((runtime, period)) = c.rt.fair_server.filter(|_| !c.kernel.lacks_setting("fair_server.runtime")) {
        let (b_runtime, b_period) = mb.rt.fair_server.unwrap_or((runtime, period));
        let mut ctl = log_slider(
            "fair_server.runtime",
            "fair server runtime",
            section,
            runtime,
            b_runtime,
            FAIR_SERVER_NS,
            "The fair deadline server's runtime per period on each CPU (6.12+ debugfs \
             sched/fair_server/cpuN/runtime): what fair tasks get while RT tasks would take the CPU. \
             At the left end, 0: the server is off.",
        );
        ctl["zero"] = "0 (off)".into();
        out.push(model_specific(ctl));
        out.push(model_specific(log_slider(
            "fair_server.period",
            "fair server period",
            section,
            period,
            b_period,
            (100_000, FAIR_SERVER_NS.1),
            "The fair server's period (debugfs sched/fair_server/cpuN/period; 100 µs to 4.194304 s).",
        )));
    }
}

/// A task's scheduling class: its policy, its RT priority (enabled for
/// fifo and rr only) and, for a deadline task, its CBS parameters.
///
/// An override can set a key, never remove one, so the policy select
/// offers the policies an override can reach: a task the file makes fifo
/// or rr keeps its `rt_priority` (fifo and rr only), a deadline task its
/// `dl_*` (deadline only). Each option carries `"also"`, the other
/// overrides to set (`[key, value]`) or drop (`[key, null]`) with it, so
/// the priority or reservation a policy needs comes with it and goes with
/// it ([`class_companions`]).
fn class_controls(out: &mut Vec<Value>, bt: &TaskSpec, ct: &TaskSpec, section: &str) {
    let key = |k: &str| format!("tasks.{}.{k}", ct.name);
    let all = [Policy::Normal, Policy::Batch, Policy::Idle, Policy::Fifo, Policy::Rr, Policy::Deadline, Policy::Stop];
    // A stop task is bound to one CPU (sched_set_stop_task): offered only
    // for a task whose every instance has one CPU.
    let one_cpu = ct.affinity.iter().all(|a| a.len() == 1);
    let reachable = |p: &Policy| match bt.policy {
        Policy::Fifo | Policy::Rr => p.is_rt(),
        Policy::Deadline => *p == Policy::Deadline,
        _ => *p != Policy::Stop || one_cpu || bt.policy == Policy::Stop,
    };
    let options: Vec<Value> = all
        .iter()
        .filter(|p| reachable(p))
        .map(|&p| {
            let also: Vec<Value> = class_companions(p, bt, ct).into_iter().map(|(k, v)| json!([key(k), v])).collect();
            json!({ "value": quoted(p.name()), "label": policy_label(p), "also": also })
        })
        .collect();
    let help = match bt.policy {
        Policy::Fifo | Policy::Rr => {
            "The scenario gives this task an rt_priority, which an override cannot remove: to make it \
             fair, edit the scenario's text."
        }
        Policy::Deadline => {
            "The scenario gives this task deadline parameters, which an override cannot remove: to \
             change its class, edit the scenario's text."
        }
        _ => {
            "sched_setattr's policy. fifo and rr run above every fair task (RT class); deadline above \
             those (CBS and EDF), on a root domain of one CPU here (global EDF is not modelled yet: \
             isolate a CPU); stop above everything (a CPU's stopper thread, migration/N, which no \
             system call makes: for a task pinned to one CPU, one per CPU)."
        }
    };
    out.push(json!({
        "key": key("policy"), "label": "policy", "section": section, "kind": "select",
        "value": quoted(ct.policy.name()), "default": quoted(bt.policy.name()), "options": options, "help": help,
    }));
    let mut prio = number(
        &key("rt_priority"),
        "RT priority (sched_priority)",
        section,
        ct.rt_priority,
        bt.rt_priority,
        (1, 99),
        "",
    );
    prio["help"] = "1 to 99, higher runs first (chrt -f/-r N); for fifo and rr only.".into();
    if !ct.policy.is_rt() {
        prio["disabled"] = true.into();
    }
    out.push(prio);
    let Some(dl) = ct.dl else { return };
    // No default where the file gives none: every position sends its value.
    let base = bt.dl;
    let sliders = [
        (
            "dl_runtime",
            "runtime (sched_runtime)",
            dl.runtime_ns,
            base.map(|d| d.runtime_ns),
            "CPU time reserved per period (CBS); at most the deadline.",
        ),
        (
            "dl_deadline",
            "deadline (sched_deadline)",
            dl.deadline_ns,
            base.map(|d| d.deadline_ns),
            "Relative deadline of each period's runtime (EDF orders by it); at most the period.",
        ),
        (
            "dl_period",
            "period (sched_period)",
            dl.period_ns,
            base.map(|d| d.period_ns),
            "The reservation's period; without one it equals the deadline.",
        ),
    ];
    for (k, label, value, default, help) in sliders {
        out.push(log_slider(&key(k), label, section, value, default.unwrap_or(0), DL_NS, help));
    }
}

/// The overrides a change from `ct`'s policy to `p` brings with it
/// (`None`: drop the key's override). Only keys the file leaves out are the
/// page's to set: fifo and rr need an `rt_priority` (a task that has one
/// keeps it, else [`RT_PRIORITY_NEW`]) and every other policy refuses one;
/// deadline needs a runtime and a deadline ([`DL_NEW_NS`]; the period
/// follows the deadline) and every other policy refuses them.
fn class_companions(p: Policy, bt: &TaskSpec, ct: &TaskSpec) -> Vec<(&'static str, Option<String>)> {
    let mut also = Vec::new();
    if !bt.policy.is_rt() {
        match (p.is_rt(), ct.policy.is_rt()) {
            (true, false) => also.push(("rt_priority", Some(RT_PRIORITY_NEW.to_string()))),
            (false, true) => also.push(("rt_priority", None)),
            _ => {}
        }
    }
    let deadline = Policy::Deadline;
    if bt.policy != deadline {
        match (p == deadline, ct.policy == deadline) {
            (true, false) => {
                let ms = |ns: u64| quoted(&format!("{}ms", ns / 1_000_000));
                also.push(("dl_runtime", Some(ms(DL_NEW_NS.0))));
                also.push(("dl_deadline", Some(ms(DL_NEW_NS.1))));
            }
            (false, true) => also.extend(["dl_runtime", "dl_deadline", "dl_period"].map(|k| (k, None))),
            _ => {}
        }
    }
    also
}

fn policy_label(p: Policy) -> String {
    let kernel = match p {
        Policy::Normal => "SCHED_NORMAL",
        Policy::Batch => "SCHED_BATCH",
        Policy::Idle => "SCHED_IDLE",
        Policy::Fifo => "SCHED_FIFO",
        Policy::Rr => "SCHED_RR",
        Policy::Deadline => "SCHED_DEADLINE",
        Policy::Stop => "stop_sched_class",
    };
    format!("{} ({kernel})", p.name())
}

/// A control whose key exists in one model only (its override is dropped
/// when the kernel changes).
fn model_specific(mut ctl: Value) -> Value {
    ctl["model_specific"] = true.into();
    ctl
}

/// The kernel selector, the model's tunables, HZ and the model's feature
/// bits. `b` is the scenario as given (the selector's default), `mb` the
/// scenario under `c`'s model (the other controls' defaults).
fn fair_controls(out: &mut Vec<Value>, b: &ScenarioSpec, mb: &ScenarioSpec, c: &ScenarioSpec) {
    let section = c.kernel.describe();
    let section = section.as_str();
    if c.kernel.tuned_by_base_slice() {
        out.push(model_specific(log_slider(
            "cfs.base_slice_ns",
            "base_slice",
            section,
            c.eevdf.base_slice_ns,
            mb.eevdf.base_slice_ns,
            BASE_SLICE_NS,
            "EEVDF's request size: the slice a task runs before its deadline (debugfs base_slice_ns; \
             default 0.75 ms, 0.70 ms on 6.18, times 1 + ilog2(min(CPUs, 8))).",
        )));
    } else {
        let (bt, ct) = (&mb.tunables, &c.tunables);
        out.push(model_specific(log_slider(
            "cfs.sched_latency_ns",
            "sched_latency",
            section,
            ct.sched_latency_ns,
            bt.sched_latency_ns,
            SYSCTL_GRANULARITY_NS,
            "Targeted preemption latency: the period in which every runnable task runs once (sched_slice).",
        )));
        out.push(model_specific(log_slider(
            "cfs.sched_min_granularity_ns",
            "sched_min_granularity",
            section,
            ct.sched_min_granularity_ns,
            bt.sched_min_granularity_ns,
            SYSCTL_GRANULARITY_NS,
            "Shortest slice; with many tasks the period stretches to nr_running × this.",
        )));
        out.push(model_specific(log_slider(
            "cfs.sched_wakeup_granularity_ns",
            "sched_wakeup_granularity",
            section,
            ct.sched_wakeup_granularity_ns,
            bt.sched_wakeup_granularity_ns,
            (10_000, SYSCTL_WAKEUP_GRANULARITY_NS.1),
            "A waking task preempts only if its vruntime leads by more than this (wakeup_preempt_entity).",
        )));
    }
    let kernels: Vec<(String, String)> = KernelModel::ALL.iter().map(|m| (quoted(m.version()), m.describe())).collect();
    let mut kernel = select(
        "kernel.version",
        "kernel",
        section,
        &quoted(c.kernel.version()),
        &quoted(b.kernel.version()),
        &kernels,
        "The kernel whose fair class is modelled: CFS (4.4) or EEVDF (6.6, 6.12, 6.18). Its tunables and \
         features replace the ones above.",
    );
    kernel["switches_model"] = true.into();
    out.push(kernel);
    let hz: Vec<(String, String)> = HZ_CHOICES.iter().map(|h| (h.to_string(), format!("{h} Hz"))).collect();
    let mut hz = select(
        "machine.hz",
        "HZ (tick)",
        section,
        &c.hz.to_string(),
        &b.hz.to_string(),
        &hz,
        "The tick that notices a slice overrun (check_preempt_tick).",
    );
    // A tick phase (`machine.tick_offset`, which an imported trace sets) must
    // stay below one tick: each other rate brings the file's offset modulo
    // its own tick along (the same grid where both rates tick), and the
    // file's rate drops that override again.
    if b.machine.tick_offset_ns > 0
        && let Some(options) = hz["options"].as_array_mut()
    {
        for (o, h) in options.iter_mut().zip(HZ_CHOICES) {
            let tick = 1_000_000_000 / u64::from(h);
            let offset =
                if h == b.hz { Value::Null } else { format!("\"{}ns\"", b.machine.tick_offset_ns % tick).into() };
            o["also"] = json!([["machine.tick_offset", offset]]);
        }
    }
    out.push(hz);
    let (current, defaults) = if c.kernel.tuned_by_base_slice() {
        (c.eevdf_features.iter(c.kernel), mb.eevdf_features.iter(c.kernel))
    } else {
        (c.features.iter().collect(), mb.features.iter().collect::<Vec<_>>())
    };
    for (name, on) in current {
        let default = defaults.iter().find(|(n, _)| *n == name).is_some_and(|(_, v)| *v);
        out.push(model_specific(toggle(
            &format!("features.{name}"),
            name,
            "Features",
            on,
            default,
            feature_help(name),
        )));
    }
}

/// The feature names of a kernel version, in the kernel's order
/// (`SchedFeatures::NAMES` on 4.4, `EevdfFeatures::names` on 6.x); `None`
/// for a version this build does not model.
pub fn feature_names(version: &str) -> Option<Vec<&'static str>> {
    let model = KernelModel::parse(version)?;
    Some(if model.tuned_by_base_slice() {
        sim_core::EevdfFeatures::names(model)
    } else {
        sim_core::SchedFeatures::NAMES.to_vec()
    })
}

fn feature_help(name: &str) -> &'static str {
    match name {
        "GENTLE_FAIR_SLEEPERS" => "Sleeper credit is sched_latency/2 instead of sched_latency (place_entity).",
        "START_DEBIT" => "A new task starts one vslice behind (place_entity).",
        "WAKEUP_PREEMPTION" => "A waking task may preempt the running one (check_preempt_wakeup).",
        "HRTICK" => "An hrtimer ends the slice on time instead of the next tick.",
        "NEXT_BUDDY" => "Prefer the last woken task (pick_next_entity).",
        "LAST_BUDDY" => "Prefer the task a wakeup preempted (pick_next_entity).",
        "DOUBLE_TICK" => "Also check preemption when the tick finds the task sharing its queue.",
        "PLACE_LAG" => "A waking task keeps the lag it had when it slept (place_entity).",
        "PLACE_DEADLINE_INITIAL" => "A new task starts with half a slice to its deadline (place_entity).",
        "PLACE_REL_DEADLINE" => "A migrating task keeps its deadline relative to vruntime.",
        "RUN_TO_PARITY" => "The running task is not preempted before its slice (or lag) is used.",
        "PREEMPT_SHORT" => "A waking task with a shorter slice may preempt the running one.",
        "PICK_BUDDY" => "Prefer the next buddy when picking, if it is eligible.",
        "DELAY_DEQUEUE" => "A sleeping task with negative lag stays queued until its lag is paid.",
        "DELAY_ZERO" => "A delayed task's lag is clipped to 0 when it leaves the queue.",
        _ => "",
    }
}

fn group_controls(out: &mut Vec<Value>, b: &ScenarioSpec, c: &ScenarioSpec) {
    out.push(toggle(
        "autogroup.enabled",
        "autogroup (kernel.sched_autogroup_enabled)",
        "Groups",
        c.groups.autogroup,
        b.groups.autogroup,
        "Each session gets its own task group (autogroup_task_group), like its own cgroup.",
    ));
    // Declared cgroups (autogroups come and go with sessions).
    let declared: Vec<&str> = c.groups.groups.iter().filter(|g| g.session.is_none()).map(|g| g.path.as_str()).collect();
    for g in c.groups.groups.iter().filter(|g| g.session.is_none() && g.path != "/") {
        let default = b.groups.groups.iter().find(|x| x.path == g.path).map_or(1024, |x| x.shares);
        out.push(number(
            &group_key(&g.path),
            &format!("{} cpu.shares", g.path),
            "Groups",
            g.shares,
            default,
            (2, 262_144),
            "",
        ));
    }
    let mut sessions: Vec<&str> = b.tasks.iter().chain(&c.tasks).filter_map(|t| t.session.as_deref()).collect();
    sessions.sort_unstable();
    sessions.dedup();
    for (bt, ct) in b.tasks.iter().zip(&c.tasks) {
        let section = format!("Task {}", ct.name);
        let key = |k: &str| format!("tasks.{}.{k}", ct.name);
        if declared.len() > 1 {
            let options: Vec<(String, String)> = declared.iter().map(|p| (quoted(p), (*p).to_string())).collect();
            let path = |s: &ScenarioSpec, i: usize| quoted(&s.groups.groups[i].path);
            out.push(select(&key("group"), "cgroup", &section, &path(c, ct.cgroup), &path(b, bt.cgroup), &options, ""));
        }
        if !sessions.is_empty() {
            let mut options: Vec<(String, String)> =
                sessions.iter().map(|s| (quoted(s), format!("{s} (/autogroup-{s})"))).collect();
            if bt.session.is_none() {
                options.insert(0, (String::new(), "(none: no autogroup)".into()));
            }
            let text = |t: &sim_core::TaskSpec| t.session.as_deref().map(quoted).unwrap_or_default();
            out.push(select(
                &key("session"),
                "session",
                &section,
                &text(ct),
                &text(bt),
                &options,
                "With autogroup on, a task in the root cgroup runs in its session's group.",
            ));
        }
        out.push(number(&key("nice"), "nice", &section, ct.nice, bt.nice, (-20, 19), ""));
        class_controls(out, bt, ct, &section);
    }
}

fn device_controls(out: &mut Vec<Value>, b: &ScenarioSpec, c: &ScenarioSpec) {
    // The elevators of the kernel the scenario runs under (`KernelModel::elevators`).
    let elevators: Vec<(String, String)> =
        c.kernel.elevators().iter().map(|e| (quoted(e), format!("{e} (Linux {})", c.kernel.version()))).collect();
    let presets = sim_core::device_presets();
    for (bd, cd) in b.devices.iter().zip(&c.devices) {
        let section = format!("Device {}", cd.name);
        let key = |k: &str| format!("devices.{}.{k}", cd.name);
        out.push(select(
            &key("elevator"),
            "elevator",
            &section,
            &quoted(cd.elevator.name()),
            &quoted(bd.elevator.name()),
            &elevators,
            "/sys/block/<dev>/queue/scheduler",
        ));
        // The device model: a named preset (shown as current when the
        // device's figures are exactly a preset's), or the scenario's own.
        let preset_of = |d: &sim_core::DeviceSpec| {
            presets.iter().find(|p| p.kind == d.kind && p.queue_depth == d.queue_depth).map_or("", |p| p.name)
        };
        // The select's value: the quoted TOML string, or empty (no override).
        let value_of = |name: &str| if name.is_empty() { String::new() } else { quoted(name) };
        // "As in the scenario" only when the scenario names no preset (an
        // empty preset is not a value the scenario accepts).
        let mut options = Vec::new();
        if preset_of(bd).is_empty() {
            options.push((String::new(), "as in the scenario".to_string()));
        }
        options.extend(presets.iter().map(|p| (quoted(p.name), format!("{} ({})", p.name, p.kind.name()))));
        out.push(select(
            &key("preset"),
            "device",
            &section,
            &value_of(preset_of(cd)),
            &value_of(preset_of(bd)),
            &options,
            "a preset's figures and sources: docs/devices.md",
        ));
        let elv = cd.elevator.name();
        if let sim_core::ElevatorSpec::Cfq(t) = &cd.elevator {
            let default = match &bd.elevator {
                sim_core::ElevatorSpec::Cfq(bt) => bt.behaviour.name(),
                _ => "fixed",
            };
            let options = [
                (quoted("4.4"), "4.4.0 (starves async)".to_string()),
                (quoted("fixed"), "fixed (3932a86b4b9d)".to_string()),
            ];
            out.push(select(
                &key("cfq_behaviour"),
                "CFQ version",
                &section,
                &quoted(t.behaviour.name()),
                &quoted(default),
                &options,
                "",
            ));
        }
        let main: &[&str] = match elv {
            "deadline" | "mq-deadline" => &["read_expire", "write_expire", "fifo_batch", "writes_starved"],
            "kyber" => &["read_lat_nsec", "write_lat_nsec"],
            "bfq" => &["slice_idle", "timeout_sync", "fifo_expire_sync", "fifo_expire_async", "low_latency"],
            "cfq" => &[
                "slice_sync",
                "slice_async",
                "slice_idle",
                "quantum",
                "fifo_expire_sync",
                "fifo_expire_async",
                "low_latency",
            ],
            _ => &[],
        };
        let bs = if bd.elevator.name() == elv { bd.elevator.sysfs(b.hz) } else { Vec::new() };
        for (name, value) in cd.elevator.sysfs(c.hz).into_iter().filter(|(n, _)| main.contains(n)) {
            let default = bs.iter().find(|(n, _)| *n == name).map_or(value, |(_, v)| *v);
            let ms =
                name.contains("expire") || name == "slice_idle" || name.starts_with("slice_") || name == "timeout_sync";
            let ns = name.ends_with("_nsec");
            // The lower bound is the core's own: 0 where `set` accepts it.
            let min = i64::from(cd.elevator.clone().set(name, 0, c.hz).is_err());
            let range = match name {
                "low_latency" => (0, 1),
                _ if ns => (min, 10_000_000_000),
                _ => (min, 100_000),
            };
            out.push(number(
                &key(&format!("{elv}.{name}")),
                name,
                &section,
                value,
                default,
                range,
                if ms {
                    "ms"
                } else if ns {
                    "ns"
                } else {
                    ""
                },
            ));
        }
    }
    io_queue_controls(out, b, c);
}

/// The userspace I/O scheduler (`[io_queues.NAME]`): its in-flight policy,
/// the fixed limit, and each class's shares.
fn io_queue_controls(out: &mut Vec<Value>, b: &ScenarioSpec, c: &ScenarioSpec) {
    use sim_core::InflightPolicy;
    let policy = |p: &InflightPolicy| match p {
        InflightPolicy::MaxIoRequests(_) => "max-io-requests",
        InflightPolicy::Capacity { .. } => "capacity",
        InflightPolicy::Unlimited => "none",
    };
    let max_io = |p: &InflightPolicy| match p {
        InflightPolicy::MaxIoRequests(n) => Some(*n),
        InflightPolicy::Capacity { max_io_requests, .. } => *max_io_requests,
        InflightPolicy::Unlimited => None,
    };
    let options: Vec<(String, String)> = [
        ("capacity", "capacity (Little's law)"),
        ("max-io-requests", "max-io-requests (fixed)"),
        ("none", "none (kernel only)"),
    ]
    .iter()
    .map(|(v, l)| (quoted(v), (*l).to_string()))
    .collect();
    for (bq, cq) in b.io_queues.iter().zip(&c.io_queues) {
        let section = format!("I/O queue {}", cq.name);
        let key = |k: &str| format!("io_queues.{}.{k}", cq.name);
        out.push(select(
            &key("policy"),
            "in-flight limit",
            &section,
            &quoted(policy(&cq.policy)),
            &quoted(policy(&bq.policy)),
            &options,
            "Seastar's I/O scheduler: what it lets reach the device",
        ));
        if let Some(n) = max_io(&cq.policy) {
            let default = max_io(&bq.policy).unwrap_or(n);
            out.push(number(&key("max_io_requests"), "max_io_requests", &section, n, default, (1, 65_536), ""));
        }
        for (bc, cc) in bq.classes.iter().zip(&cq.classes) {
            out.push(number(
                &key(&format!("classes.{}.shares", cc.name)),
                &format!("{} shares", cc.name),
                &section,
                cc.shares,
                bc.shares,
                (1, 1_000_000),
                "",
            ));
        }
    }
}
