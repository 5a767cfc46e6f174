//! The classes above fair in a scenario: a task's `policy` with its
//! `rt_priority` or deadline parameters (`sched_setattr`'s checks), the
//! `[rt]` sysctls, the 6.12+ `[fair_server]`, and deadline admission
//! (`sched_dl_overflow`). A setting the model's kernel lacks is refused,
//! naming the model.

use super::error::KeyError;
use super::file::{ScenarioFile, TaskFile};
use super::spec::{DlParams, MachineSpec, RtSpec, TaskSpec};
use super::values::duration_value;
use crate::cpuset::CpuSet;
use crate::sched::model::KernelModel;
use crate::sched::topology::cpu_list;
use crate::sched::model_rt::{
    DL_PERIOD_NS, DL_RUNTIME_MIN_NS, RtThrottling, rr_timeslice_default, to_ratio,
};
use crate::time::format_duration;
use crate::workload::Policy;

/// `MAX_RT_PRIO - 1`: the highest `sched_priority` (`sched_get_priority_max`).
const RT_PRIORITY_MAX: i64 = 99;
/// The fair server's defaults (6.12+ deadline.c `fair_server_init`/`dl_server_start`):
/// 50 ms every 1 s.
pub const FAIR_SERVER_DEFAULT: (u64, u64) = (50_000_000, 1_000_000_000);
/// Debugfs `fair_server` period bounds (6.12 debug.c:341-342): 100 µs to 1 << 22 µs.
const FAIR_SERVER_PERIOD_NS: (u64, u64) = (100_000, (1 << 22) * 1_000);

/// A task's `policy`, its `sched_priority` and its deadline parameters, as
/// `sched_setattr` checks them (`valid_policy`, `__checkparam_dl`, 6.12
/// syscalls.c `__sched_setscheduler`: RT priority 1..99 for FIFO/RR, 0 for
/// the others).
pub(super) fn task_class(t: &TaskFile, key: &str, kernel: KernelModel) -> Result<(Policy, u8, Option<DlParams>), KeyError> {
    let policy = match t.policy.as_deref() {
        None | Some("normal") | Some("SCHED_NORMAL") | Some("other") | Some("SCHED_OTHER") => Policy::Normal,
        Some("batch") | Some("SCHED_BATCH") => Policy::Batch,
        Some("idle") | Some("SCHED_IDLE") => Policy::Idle,
        Some("fifo") | Some("SCHED_FIFO") => Policy::Fifo,
        Some("rr") | Some("SCHED_RR") => Policy::Rr,
        Some("deadline") | Some("SCHED_DEADLINE") => Policy::Deadline,
        // A per-CPU stopper thread (migration/N): no system call sets it.
        Some("stop") => Policy::Stop,
        Some(p) => {
            return Err(KeyError::new(
                format!("{key}.policy"),
                format!("`{p}`: allowed: normal, batch, idle, fifo, rr, deadline, stop"),
            ));
        }
    };
    let rt_priority = match (t.rt_priority, policy.is_rt()) {
        (Some(p), true) if (1..=RT_PRIORITY_MAX).contains(&p) => p as u8,
        (Some(p), true) => {
            return Err(KeyError::new(
                format!("{key}.rt_priority"),
                format!("{p} is not an RT priority: 1 to {RT_PRIORITY_MAX} (sched_get_priority_min/max)"),
            ));
        }
        (None, true) => {
            return Err(KeyError::new(
                format!("{key}.rt_priority"),
                format!("required with policy \"{}\": 1 to {RT_PRIORITY_MAX}, as `chrt` takes it", policy.name()),
            ));
        }
        (Some(p), false) if policy == Policy::Stop => {
            return Err(KeyError::new(
                format!("{key}.rt_priority"),
                format!(
                    "{p} is given with policy \"stop\", which takes none: sched_set_stop_task gives every stop \
                     task SCHED_FIFO 99 (prio 0), and its class is above RT whatever the number"
                ),
            ));
        }
        (Some(p), false) => {
            return Err(KeyError::new(
                format!("{key}.rt_priority"),
                format!(
                    "{p} is given with policy \"{}\", which has no RT priority (the kernel refuses a non-zero \
                     sched_priority for it): only with \"fifo\" or \"rr\"",
                    policy.name()
                ),
            ));
        }
        (None, false) => 0,
    };
    let dl = dl_params(t, key, policy, kernel)?;
    if t.slice.is_some() && policy.class() != crate::sched::ClassKind::Fair {
        return Err(KeyError::new(
            format!("{key}.slice"),
            format!("a custom slice is for fair tasks; policy \"{}\" has none", policy.name()),
        ));
    }
    Ok((policy, rt_priority, dl))
}

/// A stop task (`policy = "stop"`) as `sched_set_stop_task` (4.4 and 6.18
/// core.c) makes one: the stopper of one CPU, `rq->stop`, so each instance
/// is bound to exactly one CPU (`select_task_rq_stop` never moves it), it
/// never yields (`yield_task_stop` is `BUG()`), and each CPU has at most
/// one (checked across tasks by `stop_tasks_per_cpu`).
pub(super) fn stop_task(t: &TaskSpec, key: &str) -> Result<(), KeyError> {
    if t.policy != Policy::Stop {
        return Ok(());
    }
    if let Some((j, set)) = t.affinity.iter().enumerate().find(|(_, set)| set.len() != 1) {
        let which = if t.count > 1 { format!(" (instance {j})") } else { String::new() };
        return Err(KeyError::new(
            format!("{key}.cpus"),
            format!(
                "`{}`{which} has {} CPUs: a stop task is bound to exactly one (sched_set_stop_task makes it \
                 rq->stop of one CPU; select_task_rq_stop never moves it). Give one CPU, or a list with \
                 `pin_each = true` for one per CPU",
                cpu_list(set),
                set.len()
            ),
        ));
    }
    if let Some(j) = t.program.steps.iter().position(|s| matches!(s, crate::workload::Step::Yield)) {
        return Err(KeyError::new(
            format!("{key}.program[{j}]"),
            "a stop task cannot yield: yield_task_stop is BUG() (\"the stop task should never yield\")",
        ));
    }
    Ok(())
}

/// At most one stop task per CPU (`rq->stop` is one pointer): two naming
/// the same CPU are refused, naming both.
pub(super) fn stop_tasks_per_cpu(tasks: &[TaskSpec], cpus: u16) -> Result<(), KeyError> {
    let mut owner: Vec<Option<String>> = vec![None; usize::from(cpus)];
    for t in tasks.iter().filter(|t| t.policy == Policy::Stop) {
        for (j, set) in t.affinity.iter().enumerate() {
            let Some(cpu) = set.iter().next() else { continue };
            let me = if t.count > 1 { format!("{}/{j}", t.name) } else { t.name.clone() };
            if let Some(other) = &owner[cpu.index()] {
                return Err(KeyError::new(
                    format!("{}.cpus", super::values::task_key(&t.name)),
                    format!(
                        "CPU {cpu} has two stop tasks, {other} and {me}: a CPU has one (rq->stop, set by \
                         sched_set_stop_task)"
                    ),
                ));
            }
            owner[cpu.index()] = Some(me);
        }
    }
    Ok(())
}

/// `dl_runtime`/`dl_deadline`/`dl_period` by `__checkparam_dl` (4.4
/// core.c:3752-3780; 6.6+ deadline.c adds the period bounds).
fn dl_params(t: &TaskFile, key: &str, policy: Policy, kernel: KernelModel) -> Result<Option<DlParams>, KeyError> {
    let given = [("dl_runtime", &t.dl_runtime), ("dl_deadline", &t.dl_deadline), ("dl_period", &t.dl_period)];
    if policy != Policy::Deadline {
        if let Some((name, _)) = given.iter().find(|(_, v)| v.is_some()) {
            return Err(KeyError::new(
                format!("{key}.{name}"),
                format!("given with policy \"{}\": deadline parameters only with policy \"deadline\"", policy.name()),
            ));
        }
        return Ok(None);
    }
    let need = |name: &str, v: &Option<toml::Value>| -> Result<u64, KeyError> {
        let k = format!("{key}.{name}");
        match v {
            None => Err(KeyError::new(k, "required with policy \"deadline\": a duration such as \"2ms\"")),
            Some(v) => duration_value(v, &k),
        }
    };
    let runtime_ns = need("dl_runtime", &t.dl_runtime)?;
    let deadline_ns = need("dl_deadline", &t.dl_deadline)?;
    let period_ns = match &t.dl_period {
        None => deadline_ns, // __setparam_dl: dl_period = sched_period ?: sched_deadline
        Some(v) => match duration_value(v, &format!("{key}.dl_period"))? {
            0 => deadline_ns,
            p => p,
        },
    };
    if deadline_ns == 0 {
        return Err(KeyError::new(format!("{key}.dl_deadline"), "0 is not allowed: a positive duration"));
    }
    if runtime_ns < DL_RUNTIME_MIN_NS {
        return Err(KeyError::new(
            format!("{key}.dl_runtime"),
            format!("{runtime_ns} ns is below the kernel's minimum, {DL_RUNTIME_MIN_NS} ns (1 << DL_SCALE)"),
        ));
    }
    if !(runtime_ns <= deadline_ns && deadline_ns <= period_ns) {
        return Err(KeyError::new(
            format!("{key}.dl_runtime"),
            format!(
                "runtime {} ≤ deadline {} ≤ period {} does not hold: __checkparam_dl needs runtime ≤ deadline ≤ period",
                format_duration(runtime_ns),
                format_duration(deadline_ns),
                format_duration(period_ns)
            ),
        ));
    }
    if kernel.rules().rt.dl_period_limits && !(DL_PERIOD_NS.0..=DL_PERIOD_NS.1).contains(&period_ns) {
        return Err(KeyError::new(
            format!("{key}.dl_period"),
            format!(
                "{} is outside sched_deadline_period_min_us..max_us, {} to {} (the {} model)",
                format_duration(period_ns),
                format_duration(DL_PERIOD_NS.0),
                format_duration(DL_PERIOD_NS.1),
                kernel.describe()
            ),
        ));
    }
    Ok(Some(DlParams { runtime_ns, deadline_ns, period_ns }))
}

/// `[rt]` and `[fair_server]` for the model: `sched_rt_handler`'s checks
/// (period ≥ 1, runtime -1 or at most the period), the RR slice in ticks,
/// and the fair server only where the kernel has one.
pub(super) fn rt_spec(f: &ScenarioFile, kernel: KernelModel, hz: u32) -> Result<RtSpec, KeyError> {
    let period_us = f.rt.sched_rt_period_us.unwrap_or(1_000_000);
    if !(1..=i64::from(i32::MAX)).contains(&period_us) {
        return Err(KeyError::new(
            "rt.sched_rt_period_us",
            format!("{period_us} is not allowed: 1 to {} (sched_rt_handler)", i32::MAX),
        ));
    }
    let runtime_us = f.rt.sched_rt_runtime_us.unwrap_or(950_000);
    if runtime_us != -1 && !(0..=period_us).contains(&runtime_us) {
        return Err(KeyError::new(
            "rt.sched_rt_runtime_us",
            format!("{runtime_us} is not allowed: -1 (no limit) or 0 to sched_rt_period_us ({period_us})"),
        ));
    }
    let rr_ms = f.rt.sched_rr_timeslice_ms.unwrap_or(0);
    if rr_ms > i64::from(i32::MAX) {
        return Err(KeyError::new(
            "rt.sched_rr_timeslice_ms",
            format!("{rr_ms} is not allowed: at most {} (0 or less restores 100 ms)", i32::MAX),
        ));
    }
    // sched_rr_handler: <= 0 restores RR_TIMESLICE, else msecs_to_jiffies (rounding up).
    let rr_timeslice_ticks = if rr_ms <= 0 {
        rr_timeslice_default(hz)
    } else {
        ((rr_ms as u64 * u64::from(hz)).div_ceil(1000)).min(u64::from(u32::MAX)) as u32
    };
    let rules = kernel.rules().rt;
    let group_sched = f.rt.rt_group_sched.unwrap_or(false);
    if group_sched && rules.throttling != RtThrottling::GroupSchedOnly {
        return Err(KeyError::new(
            "rt.rt_group_sched",
            format!(
                "the {} model throttles RT tasks with or without CONFIG_RT_GROUP_SCHED (root 950/1000 by \
                 sched_rt_runtime_us); the switch matters from 6.12, where only it brings RT throttling",
                kernel.describe()
            ),
        ));
    }
    let fair_server = fair_server(f, kernel)?;
    Ok(RtSpec {
        runtime_ns: (runtime_us >= 0).then(|| runtime_us as u64 * 1_000),
        period_ns: period_us as u64 * 1_000,
        rr_timeslice_ticks: rr_timeslice_ticks.max(1),
        group_sched,
        fair_server,
    })
}

/// `[fair_server]` (6.12+ debugfs `sched/fair_server/cpuN/{runtime,period}`,
/// `sched_fair_server_write`: runtime ≤ period, period 100 µs to 4.194304 s).
fn fair_server(f: &ScenarioFile, kernel: KernelModel) -> Result<Option<(u64, u64)>, KeyError> {
    let fs = &f.fair_server;
    if kernel.rules().rt.fair_server.is_none() {
        if let Some(k) = [("runtime", &fs.runtime), ("period", &fs.period)].iter().find(|(_, v)| v.is_some()) {
            return Err(KeyError::new(
                format!("fair_server.{}", k.0),
                format!(
                    "the {} model has no fair server: the fair deadline server came in 6.12 (kernel.version = \
                     \"6.12\" or \"6.18\"); this kernel limits RT tasks with sched_rt_runtime_us instead",
                    kernel.describe()
                ),
            ));
        }
        return Ok(None);
    }
    let runtime = match &fs.runtime {
        None => FAIR_SERVER_DEFAULT.0,
        Some(v) => duration_value(v, "fair_server.runtime")?,
    };
    let period = match &fs.period {
        None => FAIR_SERVER_DEFAULT.1,
        Some(v) => duration_value(v, "fair_server.period")?,
    };
    let (lo, hi) = FAIR_SERVER_PERIOD_NS;
    if !(lo..=hi).contains(&period) {
        return Err(KeyError::new(
            "fair_server.period",
            format!("{} is not allowed: {} to {}", format_duration(period), format_duration(lo), format_duration(hi)),
        ));
    }
    if runtime > period {
        return Err(KeyError::new(
            "fair_server.runtime",
            format!(
                "{} is above the period ({}): 0 (server off) to the period",
                format_duration(runtime),
                format_duration(period)
            ),
        ));
    }
    Ok(Some((runtime, period)))
}

/// The root domains a scenario's machine has: the CPUs outside isolcpus
/// (the sched domains' span), and the isolated CPUs, which sit in
/// `def_root_domain` (4.4/6.x topology.c `rq_attach_root` for CPUs
/// without a domain).
pub fn root_domains(machine: &MachineSpec) -> Vec<CpuSet> {
    let ncpus = machine.shape.cpus();
    let mut housekeeping = CpuSet::all(ncpus);
    for c in machine.isolcpus.iter() {
        housekeeping.remove(c);
    }
    [housekeeping, machine.isolcpus.clone()].into_iter().filter(|s| !s.is_empty()).collect()
}

/// Deadline admission as `sched_setattr` runs it for each task in turn
/// (4.4 `dl_overflow`, 6.x `sched_dl_overflow`): the task's affinity must
/// cover its root domain (`-EPERM`), and the root domain's total bandwidth
/// must stay within `bw · cpus` with `bw = to_ratio(rt_period, rt_runtime)`
/// (`__dl_overflow`; none with sched_rt_runtime_us = -1). From 6.12 each
/// CPU's fair server holds its share first (`dl_server_apply_params`).
pub(super) fn admission(tasks: &[TaskSpec], machine: &MachineSpec, rt: &RtSpec) -> Result<(), KeyError> {
    let domains = root_domains(machine);
    let mut total = vec![0u64; domains.len()];
    let server_bw = rt.fair_server.map_or(0, |(r, p)| to_ratio(p, r));
    for (d, span) in domains.iter().enumerate() {
        total[d] = server_bw * span.len() as u64;
    }
    for t in tasks {
        let Some(dl) = t.dl else { continue };
        let key = super::values::task_key(&t.name);
        let new_bw = to_ratio(dl.period_ns, dl.runtime_ns);
        for (i, aff) in t.affinity.iter().enumerate() {
            let first = aff.iter().next().expect("validated affinity is never empty");
            let d = domains.iter().position(|s| s.contains(first)).expect("every CPU is in a root domain");
            let span = &domains[d];
            if !span.iter().all(|c| aff.contains(c)) {
                return Err(KeyError::new(
                    format!("{key}.cpus"),
                    format!(
                        "instance {i}: a deadline task's affinity must cover its root domain (CPUs {}): \
                         sched_setattr refuses it with EPERM (pin deadline tasks with an exclusive cpuset instead)",
                        cpu_list(span)
                    ),
                ));
            }
            let Some(runtime) = rt.runtime_ns else { continue };
            let cap = to_ratio(rt.period_ns, runtime) * span.len() as u64;
            total[d] += new_bw;
            if total[d] > cap {
                return Err(KeyError::new(
                    format!("{key}.dl_runtime"),
                    format!(
                        "admission refused (EBUSY) at instance {i}: the deadline bandwidth of CPUs {} would be \
                         {:.4} CPUs (this task {:.4} = runtime/period), above the limit {:.4} = \
                         sched_rt_runtime_us/sched_rt_period_us × {} CPUs{}",
                        cpu_list(span),
                        total[d] as f64 / f64::from(1u32 << 20),
                        new_bw as f64 / f64::from(1u32 << 20),
                        cap as f64 / f64::from(1u32 << 20),
                        span.len(),
                        if server_bw > 0 { ", the fair server's share of each CPU included (6.12+)" } else { "" }
                    ),
                ));
            }
        }
    }
    Ok(())
}
