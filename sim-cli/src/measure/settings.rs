//! Every scenario setting that the host run does not reproduce by running
//! the workload itself, for every kernel model, in one place: written to the
//! host's kernel (only with `--apply-sysctls`), refused, or measured without
//! only when a flag says so. `host_settings` destructures the scenario spec
//! and each task without `..`, so a field added to either does not compile
//! until it is sorted here: no setting can be silently ignored by `measure`.

use sim_core::scenario::{ScenarioSpec, TaskSpec};
use sim_core::sched::model::KernelModel;
use sim_core::sched::tunables::{
    BASE_SLICE_NS, BASE_SLICE_NS_618, CfsTunables, EevdfFeatures, EevdfTunables, SchedFeatures, TunableScaling,
    TunableValue,
};

/// The flag that measures a scenario with `[limiters]` without them.
pub const IGNORE_LIMITERS_FLAG: &str = "--ignore-limiters";

/// What `measure` does with one setting the scenario changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Handling {
    /// Written to the host kernel for the run with `--apply-sysctls`:
    /// `name` as `sysctl::locate` knows it, and the value written.
    Write { name: String, value: String },
    /// The host run cannot reproduce it: refused, with why and what to do.
    Refuse(String),
    /// The host run cannot reproduce it; measured without it only when
    /// `flag` is given (the report then lists it as not reproduced).
    IgnoreWith { flag: &'static str, why: String },
}

/// One setting, named by its key as `--set` spells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSetting {
    pub key: String,
    pub value: String,
    pub handling: Handling,
}

/// Whether the host kernel has per-task custom slices: `sched_attr.sched_runtime`
/// for a fair policy sets `se.slice` (clamped to 0.1–100 ms) since 6.12
/// (commit 857b158dc5e8, 6.12 kernel/sched/syscalls.c:__setscheduler_params).
pub fn host_has_custom_slices(host_version: (u32, u32)) -> bool {
    host_version >= (6, 12)
}

/// The EEVDF model's `normalized_sysctl_sched_base_slice` at boot: 0.75 ms,
/// 0.70 ms in 6.18 (fair.c), as the scenario parser resolves it.
fn normalized_base_slice_default(kernel: KernelModel) -> u64 {
    if kernel >= KernelModel::Linux618 { BASE_SLICE_NS_618 } else { BASE_SLICE_NS }
}

/// The settings of `spec` the workload does not carry, on a host running
/// Linux `host_version` (major, minor). Settings measured as they are
/// (tasks, affinity, nice, policy, groups, sessions, quotas, sources) and the
/// model-only inputs that `plan` warns about are listed here with where they
/// are handled, so that the list is complete.
pub fn host_settings(spec: &ScenarioSpec, host_version: (u32, u32)) -> Vec<HostSetting> {
    let ScenarioSpec {
        // Names and report choices: no effect on the workload.
        name: _,
        description: _,
        seed: _,
        events_max: _,
        victim: _,
        history_window_ns: _,
        // Run length and CPU count: the run itself, `plan::cpu_map`.
        duration_ns: _,
        cpus: _,
        // isolcpus (refused unless the host matches), NO_HZ, tick offset,
        // wake-up noise, topology: `plan` (warned or refused there).
        machine: _,
        // HZ and the switch cost: fixed by the host, warned in `plan`.
        hz: _,
        context_switch_ns: _,
        // The models themselves: the host runs its own kernel, which the
        // report prints beside the model's name.
        kernel,
        bandwidth_rules: _,
        // Quotas and the bandwidth slice: `plan::check_quotas`.
        bandwidth_slice_us: _,
        tunables,
        features,
        eevdf,
        eevdf_features,
        tasks,
        // Request sources: waker threads (`thread`).
        sources: _,
        // Groups, shares, autogroup (below), sessions: cgroups and setsid.
        groups,
        // Block devices and their queues: refused in `plan` (no block I/O).
        devices: _,
        device_mq: _,
        limiters,
        io_queues,
    } = spec;
    let kernel = *kernel;
    let mut out = Vec::new();
    let mut write = |key: String, value: String, name: String, written: String| {
        out.push(HostSetting { key, value, handling: Handling::Write { name, value: written } });
    };

    // Scaling: `cfs.sched_tunable_scaling`, in both models (4.4 sysctl,
    // 5.13+ debugfs tunable_scaling).
    if tunables.scaling != TunableScaling::Log {
        let (word, code) = match tunables.scaling {
            TunableScaling::None => ("none", "0"),
            TunableScaling::Log => ("log", "1"),
            TunableScaling::Linear => ("linear", "2"),
        };
        write("cfs.sched_tunable_scaling".into(), word.into(), "sched_tunable_scaling".into(), code.into());
    }
    if kernel.is_eevdf() {
        // `cfs.base_slice_ns` (effective) or `cfs.base.base_slice_ns`
        // (normalized, scaled by the CPU count): the host takes the
        // effective value in debugfs base_slice_ns (6.6+ debug.c, a plain
        // u32 that sets sysctl_sched_base_slice only).
        let normalized = normalized_base_slice_default(kernel);
        let default = EevdfTunables::resolve(spec.cpus, TunableScaling::Log, normalized, TunableValue::Default);
        if eevdf.normalized_base_slice_ns != default.normalized_base_slice_ns {
            let v = eevdf.base_slice_ns.to_string();
            write(
                "cfs.base.base_slice_ns".into(),
                eevdf.normalized_base_slice_ns.to_string(),
                "base_slice_ns".into(),
                v,
            );
        } else if eevdf.base_slice_ns != default.base_slice_ns {
            let v = eevdf.base_slice_ns.to_string();
            write("cfs.base_slice_ns".into(), v.clone(), "base_slice_ns".into(), v);
        }
        let defaults = EevdfFeatures::defaults(kernel).iter(kernel);
        for ((name, on), (_, default_on)) in eevdf_features.iter(kernel).into_iter().zip(defaults) {
            if on != default_on {
                let token = if on { name.to_string() } else { format!("NO_{name}") };
                write(format!("features.{name}"), on.to_string(), format!("feature:{name}"), token);
            }
        }
    } else {
        // The 4.4 tunables and features (4.4 sysctls, 5.13+ debugfs; the
        // latency and wake-up granularity are refused on 6.6+ by `locate`).
        let default = CfsTunables::resolve(
            spec.cpus,
            TunableScaling::Log,
            TunableValue::Default,
            TunableValue::Default,
            TunableValue::Default,
        );
        for (name, value, base) in [
            ("sched_latency_ns", tunables.sched_latency_ns, default.sched_latency_ns),
            ("sched_min_granularity_ns", tunables.sched_min_granularity_ns, default.sched_min_granularity_ns),
            ("sched_wakeup_granularity_ns", tunables.sched_wakeup_granularity_ns, default.sched_wakeup_granularity_ns),
        ] {
            if value != base {
                write(format!("cfs.{name}"), value.to_string(), name.into(), value.to_string());
            }
        }
        for ((name, on), (_, default_on)) in features.iter().zip(SchedFeatures::default().iter()) {
            if on != default_on {
                let token = if on { name.to_string() } else { format!("NO_{name}") };
                write(format!("features.{name}"), on.to_string(), format!("feature:{name}"), token);
            }
        }
    }
    // `autogroup.enabled`: the host's own switch is compared in `plan`
    // (it needs the host's current value).
    let _ = groups.autogroup;

    for t in tasks {
        let TaskSpec {
            name,
            // Instances, affinity, nice, policy, groups, sessions, start,
            // programs: what the worker threads do (`worker`, `thread`).
            count: _,
            first: _,
            affinity: _,
            nice: _,
            policy: _,
            group: _,
            cgroup: _,
            session: _,
            start_ns: _,
            program: _,
            // Request hops: refused in `plan`; hop_work only matters with them.
            forward: _,
            hop_work: _,
            // Elastic limiters: below, per `[limiters.NAME]`.
            limiter: _,
            // I/O priority: no effect without block I/O, which `plan` refuses.
            ionice: _,
            slice_ns,
        } = t;
        if let Some(ns) = slice_ns {
            let why = if host_has_custom_slices(host_version) {
                "a per-task slice is set with sched_setattr(2) (sched_attr.sched_runtime for SCHED_OTHER, 6.12 \
                 syscalls.c:__setscheduler_params), and sim-cli has no safe binding for that call (the workspace \
                 forbids `unsafe`; rustix 1.1 has no sched_setattr, and thread-priority 3.1 sets sched_runtime only \
                 for SCHED_DEADLINE), so the host run cannot give the task its slice"
                    .to_string()
            } else {
                format!(
                    "Linux {}.{} has no per-task slices (sched_attr.sched_runtime sets a fair task's slice since 6.12, \
                     commit 857b158dc5e8), so the host run cannot give the task its slice",
                    host_version.0, host_version.1
                )
            };
            out.push(HostSetting {
                key: format!("tasks.{name}.slice"),
                value: ns.to_string(),
                handling: Handling::Refuse(format!("{why}. Measure a variant without `slice` on tasks.{name}")),
            });
        }
    }
    for (i, l) in limiters.iter().enumerate() {
        let limited: Vec<&str> = tasks
            .iter()
            .filter(|t| t.limiter.is_some_and(|id| usize::from(id.0) == i))
            .map(|t| t.name.as_str())
            .collect();
        out.push(HostSetting {
            key: format!("limiters.{}", l.name),
            value: format!("target {} ns at p{}", l.target_ns, l.percentile),
            handling: Handling::IgnoreWith {
                flag: IGNORE_LIMITERS_FLAG,
                why: format!(
                    "the elastic CPU limiter is schedlab's userspace controller, simulated only: on the host the `run` \
                     steps of {} would run without its grants, so their CPU time is not comparable with the \
                     simulation's",
                    if limited.is_empty() {
                        "its tasks".to_string()
                    } else {
                        limited.iter().map(|n| format!("tasks.{n}")).collect::<Vec<_>>().join(", ")
                    }
                ),
            },
        });
    }
    for q in io_queues {
        out.push(HostSetting {
            key: format!("io_queues.{}", q.name),
            value: String::new(),
            handling: Handling::Refuse(
                "userspace I/O scheduling is simulated only: `measure` runs no block I/O yet".into(),
            ),
        });
    }
    out
}
