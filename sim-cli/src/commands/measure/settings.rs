//! Every scenario setting that the host run does not reproduce by running
//! the workload itself, for every kernel model, in one place: written to the
//! host's kernel (only with `--apply-sysctls`), refused, or measured without
//! only when a flag says so. `host_settings` destructures the scenario spec
//! and each task without `..`, so a field added to either does not compile
//! until it is sorted here: no setting can be silently ignored by `measure`.
//! The `[rt]` and `[fair_server]` settings depend on the host's current
//! values (`rt_settings`).

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
        // The RT and deadline classes' settings (`[rt]`, `[fair_server]`):
        // compared with the host's current values and written or refused
        // in `rt_settings`, which `plan` calls with the host record.
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
            // SCHED_FIFO/RR with `rt_priority` (sched_setscheduler) and
            // SCHED_DEADLINE with `dl` (sched_setattr) are set per thread by
            // `worker::setup_thread`; what the host refuses of them
            // (privilege, RT groups, a deadline task's root domain) is
            // refused in `plan::check_rt_tasks`.
            policy: _,
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
            // Host background (`[machine.noise]`): a model input, the host has its own.
            machine_background: _,
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

/// `sched_rt_runtime_us`'s and `sched_rt_period_us`'s defaults (6.18 rt.c:
/// `sysctl_sched_rt_runtime = 950000`, `sysctl_sched_rt_period = 1000000`).
const RT_DEFAULT_US: (i64, i64) = (950_000, 1_000_000);
/// The fair server's defaults, 50 ms every 1 s (6.18 deadline.c:sched_init_dl_servers): the model's.
const FAIR_SERVER_DEFAULT_NS: (u64, u64) = sim_core::FAIR_SERVER_DEFAULT;

/// Whether a scenario's `[rt]` and `[fair_server]` can matter: only RT and
/// deadline tasks are throttled, admitted or starve fair tasks. Without
/// them the model's and the host's settings act on nothing the scenario
/// runs, so `rt_settings` leaves the host's alone.
pub fn has_rt_or_dl_tasks(spec: &ScenarioSpec) -> bool {
    use sim_core::Policy;
    spec.tasks.iter().any(|t| matches!(t.policy, Policy::Fifo | Policy::Rr | Policy::Deadline))
}

/// Two writes of a (runtime, period) pair, in an order the kernel takes
/// both ways: each write must keep runtime ≤ period (6.18
/// rt.c:sched_rt_global_validate, debug.c:sched_fair_server_write), and the
/// guard restores in reverse. A longer period goes first (the old runtime
/// still fits it on the way back), a shorter one last.
fn pair_in_order(runtime: Option<HostSetting>, period: Option<HostSetting>, period_first: bool) -> Vec<HostSetting> {
    let (a, b) = if period_first { (period, runtime) } else { (runtime, period) };
    a.into_iter().chain(b).collect()
}

fn write_setting(key: &str, value: String, name: String, written: String) -> HostSetting {
    HostSetting { key: key.to_string(), value, handling: Handling::Write { name, value: written } }
}

/// The `[rt]` and `[fair_server]` settings of `spec` against the host's
/// (`host`, Linux `host_version`, the run's host CPUs `cpus`): written when
/// they differ, in an order the kernel accepts (and restores) one by one,
/// or refused where the host keeps the setting somewhere `measure` does not
/// write. Nothing when the scenario has no RT or deadline task.
pub fn rt_settings(
    spec: &ScenarioSpec,
    host: &super::host_rt::HostRt,
    host_version: (u32, u32),
    cpus: &[u16],
) -> Vec<HostSetting> {
    let mut out = Vec::new();
    if !has_rt_or_dl_tasks(spec) {
        return out;
    }
    let rt = &spec.rt;
    let runtime_us: i64 = rt.runtime_ns.map_or(-1, |ns| (ns / 1_000) as i64);
    let period_us = (rt.period_ns / 1_000) as i64;
    let differs = |host: Option<i64>, want: i64, default: i64| host.map_or(want != default, |h| h != want);

    // With RT group scheduling the root RT group throttles with its own
    // runtime and period, copied from the sysctls at boot (6.18 core.c:
    // sched_init → init_rt_bandwidth(&root_task_group.rt_bandwidth, …));
    // a later sysctl write leaves them (rt.c:sched_rt_do_global is empty)
    // and must stay at or above their ratio (rt.c:tg_rt_schedulable, EINVAL).
    // -1 turns all RT throttling off (rt_bandwidth_enabled() is false).
    if host.rt_group_sched == Some(true)
        && runtime_us != -1
        && let (Some(gr), Some(gp)) = (host.root_rt_runtime_us, host.root_rt_period_us)
        && (gr, gp) != (runtime_us, period_us)
    {
        let key = if gr != runtime_us { "rt.sched_rt_runtime_us" } else { "rt.sched_rt_period_us" };
        out.push(HostSetting {
            key: key.into(),
            value: if gr != runtime_us { runtime_us.to_string() } else { period_us.to_string() },
            handling: Handling::Refuse(format!(
                "this host schedules RT tasks in groups (CONFIG_RT_GROUP_SCHED on), so its root RT group \
                 throttles with the root cgroup's cpu.rt_runtime_us = {gr} per cpu.rt_period_us = {gp}, set from \
                 the sysctls at boot (6.18 core.c:sched_init); writing kernel.sched_rt_runtime_us or \
                 sched_rt_period_us later does not change them (rt.c:sched_rt_do_global does nothing), and \
                 `measure` does not write the root cgroup's files. Measure with --set rt.sched_rt_runtime_us={gr} \
                 --set rt.sched_rt_period_us={gp}, or with rt.sched_rt_runtime_us=-1 (no RT throttling at all), or \
                 on a host without RT group scheduling"
            )),
        });
        return out;
    }
    // Lowering the deadline admission limit below what the fair servers
    // hold is refused with EBUSY (6.18 deadline.c:sched_dl_global_validate;
    // each CPU's server holds runtime/period of it).
    let servers_max = match (&host.fair_server, rt.fair_server) {
        (super::host_rt::FairServers::Read(v), want) => v
            .iter()
            .map(|s| {
                if cpus.contains(&s.cpu) {
                    want.unwrap_or((s.runtime_ns, s.period_ns))
                } else {
                    (s.runtime_ns, s.period_ns)
                }
            })
            .max_by(|a, b| (u128::from(a.0) * u128::from(b.1)).cmp(&(u128::from(b.0) * u128::from(a.1)))),
        (_, want) if host_version >= (6, 12) => want.or(Some(FAIR_SERVER_DEFAULT_NS)),
        _ => None,
    };
    if runtime_us >= 0
        && let Some((sr, sp)) = servers_max
        && u128::from(runtime_us as u64 * 1_000) * u128::from(sp)
            < u128::from(sr) * u128::from(period_us as u64 * 1_000)
    {
        out.push(HostSetting {
            key: "rt.sched_rt_runtime_us".into(),
            value: runtime_us.to_string(),
            handling: Handling::Refuse(format!(
                "{runtime_us} per {period_us} µs is less deadline bandwidth than each CPU's fair server holds \
                 ({} per {}): the kernel refuses the write with EBUSY (6.18 deadline.c:sched_dl_global_validate). \
                 Measure with a larger rt.sched_rt_runtime_us, or a smaller fair_server.runtime",
                sim_core::format_duration(sr),
                sim_core::format_duration(sp)
            )),
        });
        return out;
    }
    let runtime_w = differs(host.sched_rt_runtime_us, runtime_us, RT_DEFAULT_US.0).then(|| {
        write_setting(
            "rt.sched_rt_runtime_us",
            runtime_us.to_string(),
            "sched_rt_runtime_us".into(),
            runtime_us.to_string(),
        )
    });
    let period_w = differs(host.sched_rt_period_us, period_us, RT_DEFAULT_US.1).then(|| {
        write_setting(
            "rt.sched_rt_period_us",
            period_us.to_string(),
            "sched_rt_period_us".into(),
            period_us.to_string(),
        )
    });
    // -1 goes first and comes back last: while it holds, no ratio is
    // checked against the root RT group (tg_rt_schedulable: to_ratio of
    // RUNTIME_INF is the whole CPU).
    let period_first = if runtime_us == -1 {
        false
    } else if host.sched_rt_runtime_us == Some(-1) {
        true
    } else {
        period_us >= host.sched_rt_period_us.unwrap_or(RT_DEFAULT_US.1)
    };
    out.extend(pair_in_order(runtime_w, period_w, period_first));

    // sched_rr_timeslice_ms: the kernel keeps jiffies, msecs_to_jiffies of
    // the value written (6.18 rt.c:sched_rr_handler, rounding up), so the
    // model's ticks × (1000 / HZ) ms gives them back at the same HZ.
    let rr_ms = i64::from(rt.rr_timeslice_ticks) * 1_000 / i64::from(spec.hz.max(1));
    if differs(host.sched_rr_timeslice_ms, rr_ms, 100) {
        out.push(write_setting(
            "rt.sched_rr_timeslice_ms",
            rr_ms.to_string(),
            "sched_rr_timeslice_ms".into(),
            rr_ms.to_string(),
        ));
    }

    // The fair server of each CPU the run uses, where the model has one and
    // the host too (6.12+); otherwise `plan` says what differs.
    if let Some((runtime, period)) = rt.fair_server
        && host_version >= (6, 12)
    {
        match &host.fair_server {
            super::host_rt::FairServers::Read(_) => {
                for &cpu in cpus {
                    let Some(h) = host.fair_server.of(cpu) else { continue };
                    let runtime_w = (h.runtime_ns != runtime).then(|| {
                        write_setting(
                            "fair_server.runtime",
                            runtime.to_string(),
                            format!("fair_server:cpu{cpu}:runtime"),
                            runtime.to_string(),
                        )
                    });
                    let period_w = (h.period_ns != period).then(|| {
                        write_setting(
                            "fair_server.period",
                            period.to_string(),
                            format!("fair_server:cpu{cpu}:period"),
                            period.to_string(),
                        )
                    });
                    out.extend(pair_in_order(runtime_w, period_w, period >= h.period_ns));
                }
            }
            super::host_rt::FairServers::Unreadable(why) if (runtime, period) != FAIR_SERVER_DEFAULT_NS => {
                let key =
                    if runtime != FAIR_SERVER_DEFAULT_NS.0 { "fair_server.runtime" } else { "fair_server.period" };
                out.push(HostSetting {
                    key: key.into(),
                    value: if key == "fair_server.runtime" { runtime.to_string() } else { period.to_string() },
                    handling: Handling::Refuse(format!(
                        "the fair server is set per CPU in debugfs (sched/fair_server/cpuN/{{runtime,period}}, \
                         6.18 debug.c:sched_fair_server_write), and this host's could not be read: {why}. Run \
                         as root on a kernel without lockdown, or measure with the default 50ms per 1s"
                    )),
                });
            }
            _ => {}
        }
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

    /// `rt_settings` against this VM's host record, as `(key, host name, value)` writes.
    fn rt_writes(extra: &str, task: &str, host: &super::super::host_rt::HostRt) -> Vec<Write> {
        let got = rt_settings(&spec("6.18", extra, task), host, (6, 18), &[0]);
        assert!(got.iter().all(|s| matches!(s.handling, Handling::Write { .. })), "{got:?}");
        writes(&got)
    }

    fn rt_refusal(extra: &str, task: &str, host: &super::super::host_rt::HostRt) -> (String, String) {
        let got = rt_settings(&spec("6.18", extra, task), host, (6, 18), &[0]);
        match got.as_slice() {
            [HostSetting { key, handling: Handling::Refuse(why), .. }] => (key.clone(), why.clone()),
            _ => panic!("one refusal expected: {got:?}"),
        }
    }

    #[test]
    fn rt_settings_write_what_differs_in_an_order_the_kernel_takes() {
        use super::super::host_rt::{FairServers, tests::vm};
        let fifo = "policy = \"fifo\"\nrt_priority = 10";
        let w = |k: &str, n: &str, v: &str| (k.to_string(), n.to_string(), v.to_string());
        // No RT or deadline task: the [rt] settings act on nothing, and are left alone.
        assert!(rt_settings(&spec("6.18", "[rt]\nsched_rt_runtime_us = -1", ""), &vm(), (6, 18), &[0]).is_empty());
        // The defaults match this VM.
        assert_eq!(rt_writes("[rt]\nrt_group_sched = true", fifo, &vm()), vec![]);
        // -1: admission control and throttling off.
        assert_eq!(
            rt_writes("[rt]\nsched_rt_runtime_us = -1", fifo, &vm()),
            vec![w("rt.sched_rt_runtime_us", "sched_rt_runtime_us", "-1")]
        );
        // Without RT group scheduling the sysctls are what throttles: both
        // written, a longer period first, a shorter one last.
        let flat = super::super::host_rt::HostRt { rt_group_sched: Some(false), ..vm() };
        assert_eq!(
            rt_writes("[rt]\nsched_rt_runtime_us = 1900000\nsched_rt_period_us = 2000000", fifo, &flat),
            vec![
                w("rt.sched_rt_period_us", "sched_rt_period_us", "2000000"),
                w("rt.sched_rt_runtime_us", "sched_rt_runtime_us", "1900000")
            ]
        );
        assert_eq!(
            rt_writes("[rt]\nsched_rt_runtime_us = 400000\nsched_rt_period_us = 500000", fifo, &flat),
            vec![
                w("rt.sched_rt_runtime_us", "sched_rt_runtime_us", "400000"),
                w("rt.sched_rt_period_us", "sched_rt_period_us", "500000")
            ]
        );
        // -1 with another period: -1 first (nothing is checked against it).
        assert_eq!(
            rt_writes("[rt]\nsched_rt_runtime_us = -1\nsched_rt_period_us = 2000000", fifo, &vm())[0].0,
            "rt.sched_rt_runtime_us"
        );
        // The RR slice in ms that gives the model's ticks back (10 ms at HZ 250 is 3 ticks).
        assert_eq!(
            rt_writes("[rt]\nsched_rr_timeslice_ms = 10\nrt_group_sched = true", fifo, &vm()),
            vec![w("rt.sched_rr_timeslice_ms", "sched_rr_timeslice_ms", "12")]
        );
        // The fair server of the run's CPU, in ns; a shorter period after the runtime.
        assert_eq!(
            rt_writes("[fair_server]\nruntime = \"20ms\"\n[rt]\nrt_group_sched = true", fifo, &vm()),
            vec![w("fair_server.runtime", "fair_server:cpu0:runtime", "20000000")]
        );
        assert_eq!(
            rt_writes(
                "[fair_server]\nruntime = \"20ms\"\nperiod = \"500ms\"\n[rt]\nrt_group_sched = true",
                fifo,
                &vm()
            ),
            vec![
                w("fair_server.runtime", "fair_server:cpu0:runtime", "20000000"),
                w("fair_server.period", "fair_server:cpu0:period", "500000000")
            ]
        );
        assert_eq!(
            rt_writes("[fair_server]\nruntime = \"100ms\"\nperiod = \"2s\"\n[rt]\nrt_group_sched = true", fifo, &vm())
                [0]
            .1,
            "fair_server:cpu0:period"
        );
        // Unreadable fair servers: the default is assumed, anything else refused.
        let locked = super::super::host_rt::HostRt { fair_server: FairServers::Unreadable("lockdown".into()), ..vm() };
        assert_eq!(rt_writes("[rt]\nrt_group_sched = true", fifo, &locked), vec![]);
        let (key, why) = rt_refusal("[fair_server]\nruntime = \"20ms\"", fifo, &locked);
        assert_eq!(key, "fair_server.runtime");
        assert!(why.contains("lockdown") && why.contains("sched_fair_server_write"), "{why}");
    }

    #[test]
    fn rt_settings_refuse_what_the_host_keeps_elsewhere() {
        use super::super::host_rt::tests::vm;
        let fifo = "policy = \"fifo\"\nrt_priority = 10";
        // RT group scheduling: the root group's runtime is not the sysctl's.
        let (key, why) = rt_refusal("[rt]\nsched_rt_runtime_us = 500000", fifo, &vm());
        assert_eq!(key, "rt.sched_rt_runtime_us");
        assert!(why.contains("cpu.rt_runtime_us = 950000") && why.contains("sched_rt_do_global"), "{why}");
        let (key, _) = rt_refusal("[rt]\nsched_rt_period_us = 2000000\nsched_rt_runtime_us = 950000", fifo, &vm());
        assert_eq!(key, "rt.sched_rt_period_us");
        // Less deadline bandwidth than the fair servers hold: EBUSY.
        let flat = super::super::host_rt::HostRt { rt_group_sched: Some(false), ..vm() };
        let (key, why) = rt_refusal("[rt]\nsched_rt_runtime_us = 10000", fifo, &flat);
        assert_eq!(key, "rt.sched_rt_runtime_us");
        assert!(why.contains("EBUSY") && why.contains("sched_dl_global_validate"), "{why}");
    }
}
