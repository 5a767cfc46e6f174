//! `[machine.noise]`: the measured machine model, kept apart from the
//! scheduler model. Wake-up latency onto an idle and onto a busy CPU, kernel
//! time charged per activation, and host background threads, which are
//! expanded here into ordinary pinned tasks declared after the scenario's
//! own (so a declared task's index never changes).

use super::error::KeyError;
use super::file::ScenarioFile;
use super::spec::{BackgroundSpec, NoiseSpec, TaskSpec, limits};
use super::values::{check_name, dist_value};
use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};
use crate::time::format_duration;
use crate::workload::{Dist, Policy, Program, Step};
use toml::Value;

/// The most `[[machine.noise.background]]` entries.
pub const BACKGROUND_MAX: usize = 64;

/// A latency key of `[machine.noise]`, bounded as `machine.wakeup_latency`.
fn latency(v: &Option<Value>, key: &str) -> Result<Option<Dist>, KeyError> {
    let Some(v) = v else { return Ok(None) };
    let d = dist_value(v, key)?;
    let max = super::machine::WAKEUP_LATENCY_MAX_NS;
    if d.mean_ns() > max as f64 {
        return Err(KeyError::new(
            key,
            format!("its mean must be at most {} (samples are cut there too)", format_duration(max)),
        ));
    }
    Ok((!d.is_always_zero()).then_some(d))
}

/// A positive-mean distribution of a background entry.
fn positive(v: &Value, key: &str) -> Result<Dist, KeyError> {
    let d = dist_value(v, key)?;
    if d.mean_ns() <= 0.0 {
        return Err(KeyError::new(key, format!("`{d}` has mean 0; a background thread needs a mean above 0")));
    }
    Ok(d)
}

/// `[machine.noise]` checked (`None` without the section).
pub(super) fn noise_spec(f: &ScenarioFile, cpus: u16) -> Result<Option<NoiseSpec>, KeyError> {
    let Some(n) = &f.machine.noise else { return Ok(None) };
    if f.machine.wakeup_latency.is_some() {
        for (v, key) in [(&n.wakeup_idle, "machine.noise.wakeup_idle"), (&n.wakeup_busy, "machine.noise.wakeup_busy")] {
            if v.is_some() {
                return Err(KeyError::new(
                    key,
                    "given with machine.wakeup_latency (one latency for every wake-up); keep one: \
                     machine.wakeup_latency, or machine.noise.wakeup_idle and wakeup_busy",
                ));
            }
        }
    }
    let wakeup_idle = latency(&n.wakeup_idle, "machine.noise.wakeup_idle")?;
    let wakeup_busy = latency(&n.wakeup_busy, "machine.noise.wakeup_busy")?;
    let kernel_per_activation = latency(&n.kernel_per_activation, "machine.noise.kernel_per_activation")?;
    if n.background.len() > BACKGROUND_MAX {
        return Err(KeyError::new(
            "machine.noise.background",
            format!("{} entries; at most {BACKGROUND_MAX}", n.background.len()),
        ));
    }
    let mut background = Vec::with_capacity(n.background.len());
    for (i, b) in n.background.iter().enumerate() {
        let key = format!("machine.noise.background[{i}]");
        check_name(&b.name, &format!("{key}.name"))?;
        if f.tasks.iter().any(|t| t.name == b.name) {
            return Err(KeyError::new(
                format!("{key}.name"),
                format!(
                    "`{}` is already a task's name ({}); a background thread's name must be unique",
                    b.name,
                    super::values::task_key(&b.name)
                ),
            ));
        }
        if let Some(j) = n.background[..i].iter().position(|o| o.name == b.name) {
            return Err(KeyError::new(
                format!("{key}.name"),
                format!("duplicate name `{}` (machine.noise.background[{j}] has it too)", b.name),
            ));
        }
        let cpu = match b.cpu {
            None => {
                return Err(KeyError::new(
                    format!("{key}.cpu"),
                    format!("required: the CPU the thread runs on, 0 to {}", cpus - 1),
                ));
            }
            Some(c) if c >= u64::from(cpus) => {
                return Err(KeyError::new(
                    format!("{key}.cpu"),
                    format!("{c} is not allowed: the machine has CPUs 0 to {}", cpus - 1),
                ));
            }
            Some(c) => c as u16,
        };
        let every = positive(&b.every, &format!("{key}.every"))?;
        let run = positive(&b.run, &format!("{key}.run"))?;
        let nice = b.nice.unwrap_or(0);
        if !(-20..=19).contains(&nice) {
            return Err(KeyError::new(format!("{key}.nice"), format!("{nice} is not a nice value: -20 to 19")));
        }
        background.push(BackgroundSpec { name: b.name.clone(), cpu, every, run, nice: nice as i8 });
    }
    Ok(Some(NoiseSpec { wakeup_idle, wakeup_busy, kernel_per_activation, background }))
}

/// The background threads as tasks, appended after `tasks`: each pinned to
/// its CPU, in the root group, looping `[sleep every, run run]` from 0 (the
/// first sleep spreads their starts).
pub(super) fn background_tasks(noise: Option<&NoiseSpec>, tasks: &mut Vec<TaskSpec>, cpus: u16) -> Result<(), KeyError> {
    let Some(noise) = noise else { return Ok(()) };
    let declared: u64 = tasks.iter().map(|t| u64::from(t.count)).sum();
    for (next, b) in (declared..).zip(&noise.background) {
        if next + 1 > limits::TASKS_MAX {
            return Err(KeyError::new("machine.noise.background", format!("more than {} tasks in all", limits::TASKS_MAX)));
        }
        let mut set = CpuSet::empty(cpus);
        set.insert(CpuId(b.cpu));
        tasks.push(TaskSpec {
            name: b.name.clone(),
            count: 1,
            first: TaskId(next as u32),
            affinity: vec![set],
            nice: b.nice,
            policy: Policy::Normal,
            rt_priority: 0,
            dl: None,
            group: 0,
            cgroup: 0,
            session: None,
            start_ns: 0,
            slice_ns: None,
            program: Program {
                steps: vec![Step::Sleep(b.every.clone()), Step::Run { work: b.run.clone(), enter_kernel_every_ns: None }],
                iterations: None,
            },
            forward: None,
            hop_work: None,
            limiter: None,
            ionice: None,
            machine_background: true,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::Scenario;

    const BASE: &str = "schema = 1\nseed = 1\nduration = \"1s\"\n[machine]\ncpus = 2\n[[tasks]]\nname = \"a\"\ncount = 3\n\
                        program = [{ run = \"1ms\" }, { sleep = \"1ms\" }]\n";

    #[test]
    fn background_threads_become_pinned_looping_tasks_after_the_declared_ones() {
        let noise = "[machine.noise]\n[[machine.noise.background]]\nname = \"kw\"\ncpu = 1\nevery = \"exp(5ms)\"\n\
                     run = \"100us\"\nnice = -5\n";
        let s = Scenario::from_toml("t.toml", BASE).unwrap().with_noise("n.toml", noise).unwrap();
        let bg = &s.spec.tasks[1];
        assert!(bg.machine_background && !s.spec.tasks[0].machine_background);
        assert_eq!((bg.first.0, bg.count, bg.nice), (3, 1, -5), "ids after the declared tasks' instances");
        assert_eq!(bg.affinity[0].iter().map(|c| c.0).collect::<Vec<_>>(), vec![1]);
        assert_eq!(bg.program.iterations, None);
        assert!(matches!(bg.program.steps[..], [crate::workload::Step::Sleep(_), crate::workload::Step::Run { .. }]));
    }

    #[test]
    fn zero_latencies_draw_nothing_and_entries_are_capped() {
        let s = Scenario::from_toml("t.toml", BASE).unwrap();
        let z = s.with_noise("n.toml", "[machine.noise]\nwakeup_idle = \"0us\"\n").unwrap();
        assert!(z.spec.machine.noise.as_ref().unwrap().wakeup_idle.is_none());
        let one = "[[machine.noise.background]]\ncpu = 0\nevery = \"1ms\"\nrun = \"1us\"\n";
        let many: String =
            (0..=super::BACKGROUND_MAX).map(|i| format!("{}name = \"b{i}\"\n", one)).collect::<Vec<_>>().join("");
        let e = s.with_noise("n.toml", &format!("[machine.noise]\n{many}")).unwrap_err().to_string();
        assert!(e.contains("n.toml") && e.contains("machine.noise.background") && e.contains("at most 64"), "{e}");
    }
}
