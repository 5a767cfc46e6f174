//! `[[tasks]]`: each declaration's name, count and ids, affinity, nice,
//! policy, custom slice and program, and the I/O regions its steps use.

use super::error::KeyError;
use super::file::{ScenarioFile, TaskFile};
use super::spec::{MachineSpec, TaskSpec, limits};
use super::steps::step;
use super::values::{check_name, duration_value, opt_duration, task_key};
use crate::block::DeviceSpec;
use crate::block::request::SECTOR_BYTES;
use crate::cpuset::CpuSet;
use crate::ids::TaskId;
use crate::sched::model::KernelModel;
use crate::sched::tunables::CUSTOM_SLICE_NS;
use crate::time::format_duration;
use crate::workload::{Program, Step};
use toml::Value;

/// Every `[[tasks]]` declaration: a first pass gives names, counts and ids,
/// so that `wake` steps can refer to any task; then each is checked whole.
pub(super) fn tasks(f: &ScenarioFile, machine: &MachineSpec, kernel: KernelModel) -> Result<Vec<TaskSpec>, KeyError> {
    if f.tasks.is_empty() {
        return Err(KeyError::new("tasks", "a scenario needs at least one task"));
    }
    // First pass: names, counts and ids, so `wake` steps can refer to any task.
    let mut total: u64 = 0;
    let mut heads = Vec::with_capacity(f.tasks.len());
    for (i, t) in f.tasks.iter().enumerate() {
        check_name(&t.name, &format!("tasks[{i}].name"))?;
        if let Some(j) = f.tasks[..i].iter().position(|o| o.name == t.name) {
            return Err(KeyError::new(
                format!("tasks[{i}].name"),
                format!("duplicate task name `{}` (tasks[{j}] has it too); names must be unique", t.name),
            ));
        }
        // Names are checked and unique from here on: keys name the task as
        // `--set` addresses it.
        let key = task_key(&t.name);
        let count = t.count.unwrap_or(1);
        if count == 0 || count > limits::TASKS_MAX {
            return Err(KeyError::new(
                format!("{key}.count"),
                format!("{count} is not allowed: 1 to {}", limits::TASKS_MAX),
            ));
        }
        heads.push((TaskId(total as u32), count as u32));
        total += count;
        if total > limits::TASKS_MAX {
            return Err(KeyError::new(key, format!("more than {} tasks in all", limits::TASKS_MAX)));
        }
    }
    let default_affinity = machine.default_affinity();
    let cpus = machine.shape.cpus();
    let mut tasks = Vec::with_capacity(f.tasks.len());
    for (i, t) in f.tasks.iter().enumerate() {
        tasks.push(task_spec(f, t, heads[i], cpus, &default_affinity, kernel)?);
    }
    super::rt::stop_tasks_per_cpu(&tasks, cpus)?;
    Ok(tasks)
}

/// Every I/O step's region fits its device, and a submission fits its region.
pub(super) fn check_io_regions(tasks: &[TaskSpec], devices: &[DeviceSpec]) -> Result<(), KeyError> {
    for t in tasks {
        for (j, s) in t.program.steps.iter().enumerate() {
            let Step::Io(io) = s else { continue };
            let key = format!("{}.program[{j}]", task_key(&t.name));
            let cap = devices[io.device.index()].capacity_sectors;
            let end = io.offset_sectors.unwrap_or(0).saturating_add(io.span_sectors);
            if io.span_sectors == 0 || end > cap {
                return Err(KeyError::new(
                    format!("{key}.span"),
                    format!("the region (offset + span) must be non-empty and within the device's {} sectors", cap),
                ));
            }
            if (io.size.mean_ns() as u64).div_ceil(SECTOR_BYTES) > io.span_sectors {
                return Err(KeyError::new(format!("{key}.span"), "smaller than one submission"));
            }
        }
    }
    Ok(())
}

fn task_spec(
    f: &ScenarioFile,
    t: &TaskFile,
    head: (TaskId, u32),
    cpus: u16,
    default_affinity: &CpuSet,
    kernel: KernelModel,
) -> Result<TaskSpec, KeyError> {
    let key = task_key(&t.name);
    let slice_ns = custom_slice(t, &key, kernel)?;
    let (first, count) = head;
    let affinity = affinity(t, &key, cpus, count, default_affinity)?;
    if t.pin_each && t.cpus.is_none() {
        return Err(KeyError::new(format!("{key}.pin_each"), "needs `cpus`, the list to pin instances to"));
    }
    let nice = t.nice.unwrap_or(0);
    if !(-20..=19).contains(&nice) {
        return Err(KeyError::new(format!("{key}.nice"), format!("{nice} is not a nice value: -20 to 19")));
    }
    let (policy, rt_priority, dl) = super::rt::task_class(t, &key, kernel)?;
    if t.program.is_empty() {
        return Err(KeyError::new(format!("{key}.program"), "needs at least one step"));
    }
    if t.program.len() > limits::STEPS_MAX {
        return Err(KeyError::new(format!("{key}.program"), format!("at most {} steps", limits::STEPS_MAX)));
    }
    let steps = t
        .program
        .iter()
        .enumerate()
        .map(|(j, v)| step(f, v, &format!("{key}.program[{j}]")))
        .collect::<Result<Vec<_>, _>>()?;
    if !steps.iter().any(Step::takes_time) {
        return Err(KeyError::new(
            format!("{key}.program"),
            "needs a step that takes time or blocks (run, sleep, sleep_until, wait or serve)",
        ));
    }
    if t.iterations == Some(0) {
        return Err(KeyError::new(
            format!("{key}.iterations"),
            "0 is not allowed: at least 1 (leave it out to loop forever)",
        ));
    }
    let spec = TaskSpec {
        name: t.name.clone(),
        count,
        first,
        affinity,
        nice: nice as i8,
        policy,
        rt_priority,
        dl,
        group: 0,
        cgroup: 0,
        session: t.session.clone(),
        start_ns: opt_duration(&t.start, &format!("{key}.start"), 0)?,
        slice_ns,
        program: Program { steps, iterations: t.iterations },
        forward: None,
        hop_work: None,
        limiter: None,
        ionice: super::devices::ionice(t.ionice.as_deref(), &format!("{key}.ionice"))?,
        machine_background: false,
    };
    super::rt::stop_task(&spec, &key)?;
    Ok(spec)
}

/// `slice`: the task's own EEVDF slice (6.12+ `sched_attr.sched_runtime`).
fn custom_slice(t: &TaskFile, key: &str, kernel: KernelModel) -> Result<Option<u64>, KeyError> {
    match &t.slice {
        None => Ok(None),
        Some(v) => {
            let k = format!("{key}.slice");
            if !kernel.has_custom_slices() {
                return Err(KeyError::new(
                    k,
                    format!(
                        "the {} model has no per-task slice: custom slices (sched_setattr sched_runtime for fair \
                         tasks) came in 6.12 (kernel.version = \"6.12\" or \"6.18\")",
                        kernel.describe()
                    ),
                ));
            }
            let ns = duration_value(v, &k)?;
            let (lo, hi) = CUSTOM_SLICE_NS;
            if !(lo..=hi).contains(&ns) {
                return Err(KeyError::new(
                    k,
                    format!(
                        "{} is outside the kernel's range for sched_runtime, {} to {}",
                        format_duration(ns),
                        format_duration(lo),
                        format_duration(hi)
                    ),
                ));
            }
            Ok(Some(ns))
        }
    }
}

/// `cpus` and `pin_each`: each instance's affinity.
fn affinity(
    t: &TaskFile,
    key: &str,
    cpus: u16,
    count: u32,
    default_affinity: &CpuSet,
) -> Result<Vec<CpuSet>, KeyError> {
    let affinity = match &t.cpus {
        // 4.4 core.c:sched_init_smp: init runs on non_isolated_cpus; tasks inherit it
        None => vec![default_affinity.clone(); count as usize],
        // One CPU may be written as a number (`--set tasks.NAME.cpus=1`).
        Some(v @ (Value::String(_) | Value::Integer(_))) => {
            let s = match v {
                Value::Integer(n) => &n.to_string(),
                _ => v.as_str().unwrap_or_default(),
            };
            let set = CpuSet::parse(s, cpus).map_err(|m| KeyError::new(format!("{key}.cpus"), m))?;
            if t.pin_each {
                let list: Vec<_> = set.iter().collect();
                (0..count as usize)
                    .map(|j| {
                        let mut one = CpuSet::empty(cpus);
                        one.insert(list[j % list.len()]);
                        one
                    })
                    .collect()
            } else {
                vec![set; count as usize]
            }
        }
        Some(Value::Array(items)) => {
            if t.pin_each {
                return Err(KeyError::new(format!("{key}.pin_each"), "only applies when cpus is one list"));
            }
            if items.len() != count as usize {
                return Err(KeyError::new(
                    format!("{key}.cpus"),
                    format!("has {} entries but count is {count}: give one CPU list per instance", items.len()),
                ));
            }
            items
                .iter()
                .enumerate()
                .map(|(j, v)| {
                    let k = format!("{key}.cpus[{j}]");
                    let s = v.as_str().ok_or_else(|| KeyError::new(&k, "expected a CPU list such as \"0-3\""))?;
                    CpuSet::parse(s, cpus).map_err(|m| KeyError::new(k, m))
                })
                .collect::<Result<_, _>>()?
        }
        Some(other) => {
            return Err(KeyError::new(
                format!("{key}.cpus"),
                format!("expected a CPU list such as \"0-3\" or an array of them, found {}", other.type_str()),
            ));
        }
    };
    Ok(affinity)
}
