//! Every scenario setting that the host run does not reproduce by running
//! the workload itself, for every kernel model, in one place: written to the
//! host's kernel (only with `--apply-sysctls`), refused, or measured without
//! only when a flag says so. `host_settings` destructures the scenario spec
//! and each task without `..`, so a field added to either does not compile
//! until it is sorted here: no setting can be silently ignored by `measure`.

use sim_core::{
    CfsTunables, EevdfFeatures, EevdfTunables, KernelModel, ScenarioSpec, SchedFeatures, TaskSpec, TunableScaling,
    TunableValue, changed_features,
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
    kernel.normalized_base_slice_ns()
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
        // A warm-up: refused below (a measurement reports the whole run).
        warmup_ns,
        // Run length and CPU count: the run itself, `plan::cpu_map`.
        duration_ns: _,
        cpus: _,
        // isolcpus (refused unless the host matches), NO_HZ, wake-up noise,
        // topology: `plan` (refused or warned there); the tick offset: `tick`.
        machine: _,
        // The RT and deadline classes' settings: `plan` (refused until measured).
        rt: _,
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
    if kernel.tuned_by_base_slice() {
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
        for (name, on, token) in changed_features(eevdf_features.iter(kernel), defaults) {
            write(format!("features.{name}"), on.to_string(), format!("feature:{name}"), token);
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
        for (name, on, token) in changed_features(features.iter(), SchedFeatures::default().iter()) {
            write(format!("features.{name}"), on.to_string(), format!("feature:{name}"), token);
        }
    }
    // `report.warmup`: the statistics of a simulated run leave out its first
    // D; a measurement reports the whole measured run (as `--warmup` is
    // refused for measure), so a file's warm-up would compare unlike figures.
    if *warmup_ns > 0 {
        out.push(HostSetting {
            key: "report.warmup".into(),
            value: sim_core::format_duration(*warmup_ns),
            handling: Handling::Refuse(
                "a measurement reports the whole measured run, while the simulation would leave out the warm-up, so \
                 their figures would not compare. Measure with --set report.warmup=0"
                    .into(),
            ),
        });
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
            // RT and deadline parameters: set with the policy (`worker`).
            rt_priority: _,
            dl: _,
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

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::Scenario;

    /// A one-task scenario under `[kernel] version`, with `extra` TOML
    /// before the tasks and `task` keys on the task.
    fn spec(version: &str, extra: &str, task: &str) -> ScenarioSpec {
        let toml = format!(
            "schema = 1\nseed = 1\nduration = \"1s\"\n[kernel]\nversion = \"{version}\"\n[machine]\ncpus = 1\n{extra}\n\
             [[tasks]]\nname = \"t\"\n{task}\nprogram = [{{ run = \"1ms\" }}, {{ sleep = \"1ms\" }}]\n"
        );
        Scenario::from_toml("s.toml", &toml).unwrap_or_else(|e| panic!("{toml}: {e}")).spec
    }

    /// `(key, host name, value written)`.
    type Write = (String, String, String);

    fn writes(s: &[HostSetting]) -> Vec<Write> {
        s.iter()
            .filter_map(|s| match &s.handling {
                Handling::Write { name, value } => Some((s.key.clone(), name.clone(), value.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn defaults_need_nothing_under_any_model() {
        for m in KernelModel::ALL {
            let s = host_settings(&spec(m.version(), "", ""), (6, 18));
            assert!(s.is_empty(), "{}: {s:?}", m.version());
        }
    }

    /// Each setting of each model, as `--set` spells it, and what the host
    /// run does with it: none is measured without a word.
    #[test]
    fn every_model_setting_is_written_refused_or_flagged() {
        let w = |k: &str, n: &str, v: &str| vec![(k.to_string(), n.to_string(), v.to_string())];
        let cases: Vec<(&str, &str, &str, Vec<Write>)> = vec![
            ("6.18", "[cfs]\nbase_slice_ns = \"3ms\"", "", w("cfs.base_slice_ns", "base_slice_ns", "3000000")),
            ("6.6", "[cfs]\nbase_slice_ns = 2000000", "", w("cfs.base_slice_ns", "base_slice_ns", "2000000")),
            // Normalized: the host takes the effective value (1 CPU: factor 1).
            (
                "6.12",
                "[cfs.base]\nbase_slice_ns = \"1ms\"",
                "",
                w("cfs.base.base_slice_ns", "base_slice_ns", "1000000"),
            ),
            (
                "6.18",
                "[features]\nRUN_TO_PARITY = false",
                "",
                w("features.RUN_TO_PARITY", "feature:RUN_TO_PARITY", "NO_RUN_TO_PARITY"),
            ),
            ("6.12", "[features]\nNEXT_BUDDY = true", "", w("features.NEXT_BUDDY", "feature:NEXT_BUDDY", "NEXT_BUDDY")),
            ("4.4", "[cfs]\nsched_latency_ns = \"1ms\"", "", w("cfs.sched_latency_ns", "sched_latency_ns", "1000000")),
            (
                "4.4",
                "[features]\nGENTLE_FAIR_SLEEPERS = false",
                "",
                w("features.GENTLE_FAIR_SLEEPERS", "feature:GENTLE_FAIR_SLEEPERS", "NO_GENTLE_FAIR_SLEEPERS"),
            ),
            (
                "4.4",
                "[cfs]\nsched_tunable_scaling = \"none\"",
                "",
                w("cfs.sched_tunable_scaling", "sched_tunable_scaling", "0"),
            ),
        ];
        for (version, extra, task, want) in cases {
            let got = host_settings(&spec(version, extra, task), (6, 18));
            assert_eq!(writes(&got), want, "{version} {extra}");
            assert_eq!(got.len(), want.len(), "{version} {extra}: {got:?}");
        }
    }

    /// Every EEVDF feature of every EEVDF model, flipped, is written.
    #[test]
    fn every_eevdf_feature_flipped_is_written() {
        for m in KernelModel::ALL.into_iter().filter(|m| m.tuned_by_base_slice()) {
            for (name, on) in EevdfFeatures::defaults(m).iter(m) {
                let s = host_settings(&spec(m.version(), &format!("[features]\n{name} = {}", !on), ""), (6, 18));
                let token = if on { format!("NO_{name}") } else { name.to_string() };
                assert_eq!(
                    writes(&s),
                    vec![(format!("features.{name}"), format!("feature:{name}"), token)],
                    "{} {name}",
                    m.version()
                );
            }
        }
    }

    #[test]
    fn a_task_slice_is_refused_with_why() {
        let s = spec("6.18", "", "slice = \"2ms\"");
        for (host, needle) in [((6, 18), "no safe binding"), ((6, 6), "Linux 6.6 has no per-task slices")] {
            let got = host_settings(&s, host);
            assert_eq!(got.len(), 1, "{got:?}");
            assert_eq!((got[0].key.as_str(), got[0].value.as_str()), ("tasks.t.slice", "2000000"));
            let Handling::Refuse(why) = &got[0].handling else { panic!("{got:?}") };
            assert!(why.contains(needle) && why.contains("tasks.t"), "{why}");
        }
    }

    #[test]
    fn limiters_need_their_flag() {
        let limiter = "[limiters.cap]\nwatch = [\"t\"]\npercentile = 99\ntarget = \"1ms\"\nwindow = \"100ms\"\n\
                       adjust_every = \"10ms\"\nstep_up = 0.01\nstep_down = 0.02\nfloor = 0.05\nceiling = 0.75\n\
                       grant = \"10ms\"";
        let got = host_settings(&spec("6.18", limiter, "limiter = \"cap\""), (6, 18));
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].key, "limiters.cap");
        let Handling::IgnoreWith { flag, why } = &got[0].handling else { panic!("{got:?}") };
        assert_eq!(*flag, IGNORE_LIMITERS_FLAG);
        assert!(why.contains("tasks.t"), "{why}");
    }
}
