//! What a measurement will run, and where: the scenario's tasks grouped into
//! worker processes (one per session and cgroup), scenario CPUs mapped onto
//! host CPUs, the settings to write, and every reason the host cannot
//! reproduce the scenario (a `Refusal`, exit 2).

use super::host::HostInfo;
use super::settings::Handling;
use serde::{Deserialize, Serialize};
use sim_core::{BandwidthSpec, Scenario, Step};
use std::collections::BTreeMap;

/// Why the host cannot run the scenario as written, with what to do about it.
#[derive(Debug)]
pub struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

/// One worker process: the tasks of one (session, cgroup) pair.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WorkerPlan {
    /// `setsid()` first (a new session, so a new autogroup), when the tasks have one.
    pub session: Option<String>,
    /// Written to `/proc/self/autogroup` after `setsid`.
    pub autogroup_nice: Option<i64>,
    /// Scenario group path (`/` = the root task group).
    pub group: String,
    /// Task instances (`TaskId` index) this process runs.
    pub tasks: Vec<u32>,
    /// Sources `(source index, target instance)` whose waker threads live here.
    pub sources: Vec<(u32, u32)>,
}

/// Everything a worker needs, sent as one JSON line on its stdin.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerInput {
    pub file: String,
    pub text: String,
    pub variant: Option<String>,
    pub sets: Vec<String>,
    pub worker: WorkerPlan,
    /// Host CPU of each scenario CPU.
    pub cpu_map: Vec<u16>,
    /// Host CPUs the sources' waker threads may use (outside the workload's CPUs when the host has any).
    pub waker_cpus: Vec<u16>,
    /// Directory of the FIFOs: `wake-<task>` and `items-<task>`.
    pub fifo_dir: String,
    /// Gaps longer than this inside a CPU burst count as time runnable but not running.
    pub gap_ns: u64,
}

/// A measurement's plan.
#[derive(Debug)]
pub struct Plan {
    pub workers: Vec<WorkerPlan>,
    pub cpu_map: Vec<u16>,
    pub waker_cpus: Vec<u16>,
    /// Kernel settings to write with `--apply-sysctls`.
    pub settings: Vec<SettingWrite>,
    /// `(key, why)`: settings measured without, by a flag's leave.
    pub not_reproduced: Vec<(String, String)>,
    /// Scenario groups other than `/`, with their shares.
    pub groups: Vec<(String, u64)>,
    /// Groups with a CPU quota (or period, burst) to write, parents first.
    pub bandwidth: Vec<(String, BandwidthSpec)>,
    /// Things measured differently from the model, said once on stderr.
    pub warnings: Vec<String>,
}

/// One kernel setting a run writes (and restores).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingWrite {
    /// The scenario key as `--set` spells it (`cfs.base_slice_ns`).
    pub key: String,
    /// The host name `sysctl::locate` takes (`base_slice_ns`, `feature:NAME`).
    pub name: String,
    /// The value as the scenario says it (`false`).
    pub scenario_value: String,
    /// What is written (`NO_RUN_TO_PARITY` for a feature).
    pub value: String,
}

/// Which host CPUs scenario CPUs run on: `--cpus LIST` (scenario CPU i runs
/// on the i-th listed CPU, wrapping when the scenario has more), else the
/// first online CPUs.
pub fn cpu_map(scenario_cpus: u16, online: &[u16], cpus: Option<&str>) -> Result<(Vec<u16>, Vec<String>), Refusal> {
    let mut warnings = Vec::new();
    let list: Vec<u16> = match cpus {
        Some(text) => {
            // Parsed against the largest CPU number Linux allows, so an
            // offline or absent CPU is named as such below.
            let set = sim_core::CpuSet::parse(text, 8192).map_err(|e| {
                Refusal(format!("--cpus {text}: {e}; this host's online CPUs are {}", list_text(online)))
            })?;
            let list: Vec<u16> = set.iter().map(|c| c.0).collect();
            if let Some(c) = list.iter().find(|c| !online.contains(c)) {
                return Err(Refusal(format!(
                    "--cpus {text}: CPU {c} is not online; this host's online CPUs are {}",
                    list_text(online)
                )));
            }
            if list.len() < usize::from(scenario_cpus) {
                warnings.push(format!(
                    "the scenario's {scenario_cpus} CPUs are folded onto {} host CPUs (--cpus {text}): scenario CPU i runs on the (i mod {})-th listed CPU, so each carries more load than the scenario says",
                    list.len(),
                    list.len()
                ));
            }
            list
        }
        None => {
            if online.len() < usize::from(scenario_cpus) {
                return Err(Refusal(format!(
                    "the scenario needs {scenario_cpus} CPUs; this host has {} online ({}). Run on a bigger machine, lower `machine.cpus` with --set (and the tasks' CPU lists), or fold the scenario onto the CPUs you have with --cpus LIST (e.g. --cpus {})",
                    online.len(),
                    list_text(online),
                    list_text(online)
                )));
            }
            online.to_vec()
        }
    };
    if list.is_empty() {
        return Err(Refusal("--cpus: the list is empty".into()));
    }
    if let Some(c) = list.iter().find(|&&c| c >= AFFINITY_CPUS_MAX) {
        return Err(Refusal(format!(
            "host CPU {c}: `measure` sets affinity for CPUs 0-{} only; list lower CPUs with --cpus",
            AFFINITY_CPUS_MAX - 1
        )));
    }
    Ok(((0..usize::from(scenario_cpus)).map(|i| list[i % list.len()]).collect(), warnings))
}

/// CPUs an affinity mask can name here (rustix's fixed `cpu_set_t`).
pub const AFFINITY_CPUS_MAX: u16 = 1024;

/// `0-3,8` from a list of CPUs in any order.
pub fn list_text(cpus: &[u16]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sim_core::cpus_text(sorted)
}

impl Plan {
    /// The first scenario CPU that runs on `host_cpu`.
    pub fn scenario_cpu(&self, host_cpu: u16) -> Option<u16> {
        self.cpu_map.iter().position(|&c| c == host_cpu).map(|p| p as u16)
    }
}

/// Options of `measure` that decide the plan.
pub struct PlanOptions<'a> {
    pub cpus: Option<&'a str>,
    pub apply_sysctls: bool,
    pub io_dir: Option<&'a std::path::Path>,
    /// Flags given that let a setting go unreproduced (`--ignore-limiters`).
    pub ignored_flags: &'a [&'static str],
}

/// A stop task cannot be measured: 6.18 core.c sets `stop_sched_class` only
/// in `sched_set_stop_task` (for the CPU stopper threads, cpu_stop_threads'
/// create hook); `sched_setattr` takes NORMAL, BATCH, IDLE, FIFO, RR and
/// DEADLINE. Refused first, before any other plan check.
fn refuse_stop_tasks(spec: &sim_core::ScenarioSpec) -> Result<(), Refusal> {
    use sim_core::Policy;
    if let Some(t) = spec.tasks.iter().find(|t| t.policy == Policy::Stop) {
        return Err(Refusal(format!(
            "tasks.{}.policy = \"stop\": no system call makes a stop task (the kernel gives the stop class only to \
             its per-CPU stopper threads, migration/N, in sched_set_stop_task), so measure cannot run one. Leave \
             the task out, or measure it as policy = \"fifo\" with rt_priority = 99 (what migration/N shows \
             userspace; unlike a stop task it is throttled and preempted by deadline tasks)",
            t.name
        )));
    }
    Ok(())
}

/// Plans the measurement of `scenario` on `host`, or says why it cannot be done.
pub fn plan(scenario: &Scenario, host: &HostInfo, opts: &PlanOptions<'_>) -> Result<Plan, Refusal> {
    let spec = &scenario.spec;
    refuse_stop_tasks(spec)?;
    let (cpu_map, mut warnings) = cpu_map(spec.cpus, &host.cpus_online, opts.cpus)?;
    let used: Vec<u16> = {
        let mut u = cpu_map.clone();
        u.sort_unstable();
        u.dedup();
        u
    };
    let spare: Vec<u16> =
        host.cpus_online.iter().copied().filter(|&c| !used.contains(&c) && c < AFFINITY_CPUS_MAX).collect();
    let waker_cpus = if spare.is_empty() {
        if !spec.sources.is_empty() {
            warnings.push(
            "no host CPU is left outside the workload's for the request sources' waker threads: they share the workload's CPUs (the simulator's sources take no CPU)"
                .into(),
            );
        }
        used.clone()
    } else {
        spare
    };

    // I/O steps (4.4 block layer model): not reproduced by this runner.
    for ts in &spec.tasks {
        if let Some(step) =
            ts.program.steps.iter().find(|s| matches!(s, Step::Io(_) | Step::Fdatasync | Step::WaitIo(_)))
        {
            let what = match step {
                Step::Io(_) => "an `io` step",
                Step::Fdatasync => "an `fdatasync` step",
                _ => "a `wait_io` step",
            };
            let dir = match opts.io_dir {
                Some(d) => format!(" (--io-dir {} was given)", d.display()),
                None => String::new(),
            };
            return Err(Refusal(format!(
                "tasks.{}: {what}: `measure` does not run block I/O yet{dir}; it runs CPU, sleep, wake-up and request-source workloads. Measure I/O scenarios with fio and blktrace, and compare with `sim-cli run --blkparse`",
                ts.name
            )));
        }
    }
    if !spec.devices.is_empty() {
        return Err(Refusal(
            "[devices]: `measure` does not run block I/O yet; it runs CPU, sleep, wake-up and request-source workloads"
                .into(),
        ));
    }

    // Boot-time and build-time settings: said, or refused when they change the answer.
    if !spec.machine.isolcpus.is_empty() {
        let want: Vec<u16> = spec.machine.isolcpus.iter().map(|c| cpu_map[usize::from(c.0)]).collect();
        let host_iso = super::host::parse_cpu_list(&host.isolcpus)
            .map_err(|e| Refusal(format!("reading the host's isolated CPUs {:?}: {e:#}", host.isolcpus)))?;
        if list_text(&want) != list_text(&host_iso) {
            return Err(Refusal(format!(
                "machine.isolcpus = \"{}\" is a boot parameter: this host was booted with isolcpus \"{}\" (its scenario CPUs map to host CPUs {}). Boot with isolcpus={}, or measure the variant without isolcpus",
                sim_core::cpu_list(&spec.machine.isolcpus),
                host.isolcpus,
                list_text(&want),
                list_text(&want)
            )));
        }
    }
    // Request hops (`forward`) are simulated only: the measured threads
    // serve their own items and forward nothing.
    if let Some(t) = spec.tasks.iter().find(|t| t.forward.is_some()) {
        return Err(Refusal(format!(
            "tasks.{}.forward: request hops are not measured yet (the measured threads do not forward items); \
             measure a scenario without `forward`",
            t.name
        )));
    }
    if spec.hz != host.hz {
        warnings.push(format!(
            "the scenario says HZ={}, this kernel ticks at HZ={} ({}); HZ is fixed when the kernel is built, so the measurement uses {}",
            spec.hz, host.hz, host.hz_source, host.hz
        ));
    }
    if let Some(nohz) = host.nohz_idle
        && nohz != spec.machine.nohz_idle
    {
        warnings.push(format!(
            "the scenario says machine.nohz = {}, this kernel has CONFIG_NO_HZ_IDLE {}",
            spec.machine.nohz_idle,
            if nohz { "on" } else { "off" }
        ));
    }
    if spec.context_switch_ns > 0 {
        warnings.push("machine.context_switch is a model parameter; the real switch costs what it costs".into());
    }
    if spec.machine.wakeup_latency.is_some() {
        // Not refused: validate passes its --set to the prediction and the measurement alike.
        warnings.push(
            "machine.wakeup_latency is a model input (the simulated machine's wake-up noise); the real machine has its own"
                .into(),
        );
    }
    if spec.machine.noise.is_some() {
        // Its background entries would run as real threads beside the workload.
        return Err(Refusal(
            "machine.noise: a model of the machine's own noise (wake-up latency, kernel time, background threads), \
             which the real machine has already; measure the scenario without the section and give it to the \
             prediction with `validate --noise FILE` (`sim-cli calibrate` writes one)"
                .into(),
        ));
    }
    // The topology (sched domains) is the hardware's: said when the
    // scenario declares one other than a flat machine.
    let shape = &spec.machine.shape;
    let host_shape = &host.topology;
    if *shape != sim_core::MachineShape::flat(spec.cpus)
        && (shape.sockets, shape.cores_per_socket, shape.threads_per_core, shape.numa_nodes)
            != (host_shape.sockets, host_shape.cores_per_socket, host_shape.threads_per_core, host_shape.numa_nodes)
    {
        warnings.push(format!(
            "machine: the scenario's topology ({} socket(s) x {} core(s) x {} thread(s), {} NUMA node(s)) is the \
             model's; the host's is {} x {} x {}, {} node(s), and its scheduling domains follow the hardware",
            shape.sockets,
            shape.cores_per_socket,
            shape.threads_per_core,
            shape.numa_nodes,
            host_shape.sockets,
            host_shape.cores_per_socket,
            host_shape.threads_per_core,
            host_shape.numa_nodes
        ));
    }

    // Every setting the workload does not carry (`settings::host_settings`):
    // written with --apply-sysctls, refused, or measured without on a flag.
    let mut settings = Vec::new();
    let mut not_reproduced = Vec::new();
    let all_settings = super::settings::host_settings(spec, host.kernel_version)
        .into_iter()
        .chain(super::settings::rt_settings(spec, &host.rt, host.kernel_version, &used));
    for s in all_settings {
        match s.handling {
            Handling::Write { name, value } => {
                settings.push(SettingWrite { key: s.key, name, scenario_value: s.value, value })
            }
            Handling::Refuse(why) => {
                return Err(Refusal(format!("{} = {}: {why}", s.key, s.value)));
            }
            Handling::IgnoreWith { flag, why } => {
                if !opts.ignored_flags.contains(&flag) {
                    return Err(Refusal(format!(
                        "{}: {why}. Pass {flag} to measure without it (the report says so), or measure a variant \
                         without it",
                        s.key
                    )));
                }
                warnings.push(format!("{}: not reproduced on the host ({flag}): {why}", s.key));
                not_reproduced.push((s.key, format!("{flag}: {why}")));
            }
        }
    }
    let uses_sessions = spec.tasks.iter().any(|t| t.session.is_some());
    if let Some(host_ag) = host.autogroup {
        if host_ag != spec.groups.autogroup {
            let value = if spec.groups.autogroup { "1" } else { "0" };
            settings.push(SettingWrite {
                key: "autogroup.enabled".into(),
                name: "sched_autogroup_enabled".into(),
                scenario_value: spec.groups.autogroup.to_string(),
                value: value.into(),
            });
        }
    } else if spec.groups.autogroup && uses_sessions {
        return Err(Refusal(
            "autogroup.enabled = true: the scenario's sessions run in autogroups, and this kernel has no autogroup (CONFIG_SCHED_AUTOGROUP off): measure with --set autogroup.enabled=false".into(),
        ));
    }
    for w in &settings {
        if let Err(why) = super::sysctl::locate(&w.name, host) {
            return Err(Refusal(format!(
                "{} = {}: this host cannot reproduce it: {why}. Measure a variant without it, or on a kernel that has it",
                w.key, w.scenario_value
            )));
        }
    }
    if !settings.is_empty() && !opts.apply_sysctls {
        let list: Vec<String> = settings.iter().map(|w| format!("{}={}", w.key, w.scenario_value)).collect();
        return Err(Refusal(format!(
            "the scenario changes kernel settings ({}); `measure` writes them only with --apply-sysctls (they are restored afterwards, also on Ctrl-C and on error)",
            list.join(", ")
        )));
    }

    // Raising priority needs CAP_SYS_NICE (root here).
    if !rustix::process::geteuid().is_root() {
        if let Some(t) = spec.tasks.iter().find(|t| t.nice < 0) {
            return Err(Refusal(format!(
                "tasks.{}: nice {} needs root (or CAP_SYS_NICE) to set; run sim-cli measure as root",
                t.name, t.nice
            )));
        }
        if let Some(g) = spec
            .groups
            .groups
            .iter()
            .find(|g| g.session.is_some() && autogroup_nice_of(g.shares).is_some_and(|n| n < 0))
        {
            return Err(Refusal(format!(
                "autogroup.nice for {}: a negative autogroup nice needs root (or CAP_SYS_NICE); run sim-cli measure as root",
                g.path
            )));
        }
    }
    if !spec.sources.is_empty() {
        warnings.push(
            "a serving task's FIFO holds at most 65,536 waiting items (fs.pipe-max-size permitting); the model queues up to 100,000 before it drops".into(),
        );
    }
    if uses_sessions && spec.groups.autogroup {
        let own = own_cpu_cgroup();
        if own.as_deref().is_some_and(|p| p != "/") {
            warnings.push(format!(
                "sim-cli runs in the cpu cgroup {}, outside the root, so without scenario groups its sessions' autogroups do not apply (4.4 auto_group.h:task_wants_autogroup): run it from the root cgroup",
                own.unwrap_or_default()
            ));
        }
    }

    // Groups and workers: one process per (session, group) pair.
    let groups: Vec<(String, u64)> =
        spec.groups.groups.iter().skip(1).filter(|g| g.session.is_none()).map(|g| (g.path.clone(), g.shares)).collect();
    let mut by_key: BTreeMap<(Option<String>, String), WorkerPlan> = BTreeMap::new();
    let mut task_worker = Vec::new();
    for ts in &spec.tasks {
        let cg = &spec.groups.groups[ts.cgroup];
        let session = ts.session.clone().filter(|_| spec.groups.autogroup && ts.cgroup == 0);
        let key = (session.clone(), cg.path.clone());
        let nice =
            session.as_ref().and_then(|s| spec.groups.groups.iter().find(|g| g.session.as_deref() == Some(s.as_str())));
        let w = by_key.entry(key).or_insert_with(|| WorkerPlan {
            session: session.clone(),
            autogroup_nice: nice.and_then(|g| autogroup_nice_of(g.shares)),
            group: cg.path.clone(),
            tasks: Vec::new(),
            sources: Vec::new(),
        });
        for i in 0..ts.count {
            w.tasks.push(ts.first.0 + i);
        }
        task_worker.push(w.group.clone());
        if !matches!(ts.policy, sim_core::Policy::Normal) {
            // SCHED_BATCH / SCHED_IDLE are set per thread with sched_setscheduler.
        }
    }
    let mut workers: Vec<WorkerPlan> = by_key.into_values().collect();
    warnings.extend(check_rt_tasks(spec, host, &cpu_map, &workers, !groups.is_empty())?);
    for (si, src) in spec.sources.iter().enumerate() {
        let ts = &spec.tasks[src.target];
        for i in 0..ts.count {
            let target = ts.first.0 + i;
            if let Some(w) = workers.iter_mut().find(|w| w.tasks.contains(&target)) {
                w.sources.push((si as u32, target));
            }
        }
    }
    if spec.tasks.iter().any(|t| t.session.is_none()) && uses_sessions && spec.groups.autogroup {
        warnings.push(
            "tasks without a session run in sim-cli's own session, so in its autogroup; the model puts them in the root task group".into(),
        );
    }
    let bandwidth: Vec<(String, BandwidthSpec)> =
        spec.groups.groups.iter().skip(1).filter_map(|g| g.bandwidth.map(|b| (g.path.clone(), b))).collect();
    if !bandwidth.is_empty() {
        let (root, v2) = match &host.cgroup {
            super::host::CgroupVersion::V1 { cpu } => (Some(cpu.clone()), false),
            super::host::CgroupVersion::V2 { root } => (Some(root.clone()), true),
            super::host::CgroupVersion::None => (None, false),
        };
        let host_slice = std::fs::read_to_string(SLICE_SYSCTL).ok().and_then(|t| t.trim().parse::<u64>().ok());
        let facts = QuotaHost {
            hierarchy: root.map(|r| (r.display().to_string(), v2)),
            root_has: &|f: &str| root_file_exists(&host.cgroup, f),
            kernel_version: host.kernel_version,
            slice_us: host_slice,
        };
        check_quotas(spec, &facts)?;
    }
    Ok(Plan { workers, cpu_map, waker_cpus, settings, not_reproduced, groups, bandwidth, warnings })
}

/// Refuses the RT and deadline tasks the host would refuse or run
/// differently from the model, and returns what to say about the rest:
/// - the privilege: SCHED_DEADLINE needs CAP_SYS_NICE, SCHED_FIFO/RR
///   CAP_SYS_NICE or an RLIMIT_RTPRIO at least the priority (6.18
///   syscalls.c:user_check_sched_setscheduler);
/// - RT tasks in a cpu cgroup without RT runtime under RT group scheduling
///   (syscalls.c:__sched_setscheduler: EPERM while RT bandwidth is on);
/// - RT throttling: the model's (4.4 and 6.6 always; 6.12+ only with
///   `rt.rt_group_sched`, 6.12 rt.c keeps it under CONFIG_RT_GROUP_SCHED)
///   against the host's, when the scenario has FIFO/RR tasks;
/// - a deadline task's affinity must cover its host root domain while
///   admission control is on (syscalls.c:__sched_setscheduler, EPERM;
///   `dl_bandwidth_enabled()` is `sched_rt_runtime_us >= 0`);
/// - the fair server the model has and the host lacks, or the reverse.
///
/// `cgroups`: the run creates cgroups (root tasks then start in its parent group).
pub fn check_rt_tasks(
    spec: &sim_core::ScenarioSpec,
    host: &HostInfo,
    cpu_map: &[u16],
    workers: &[WorkerPlan],
    cgroups: bool,
) -> Result<Vec<String>, Refusal> {
    use sim_core::Policy;
    let mut warnings = Vec::new();
    if !super::settings::has_rt_or_dl_tasks(spec) {
        return Ok(warnings);
    }
    let rt = &spec.rt;
    // The run writes the scenario's sched_rt_runtime_us (`rt_settings`).
    let bandwidth_on = rt.runtime_ns.is_some();
    let p = host.privilege;
    for t in &spec.tasks {
        let refuse = match t.policy {
            Policy::Deadline if !p.cap_sys_nice => {
                Some("SCHED_DEADLINE needs CAP_SYS_NICE (6.18 syscalls.c:user_check_sched_setscheduler)".to_string())
            }
            Policy::Fifo | Policy::Rr if !p.cap_sys_nice && u64::from(t.rt_priority) > p.rlimit_rtprio => {
                Some(format!(
                    "SCHED_{} at priority {} needs CAP_SYS_NICE or an RLIMIT_RTPRIO of at least {} (this process: \
                 {}; 6.18 syscalls.c:user_check_sched_setscheduler)",
                    t.policy.name().to_uppercase(),
                    t.rt_priority,
                    t.rt_priority,
                    if p.rlimit_rtprio == 0 {
                        "no CAP_SYS_NICE, RLIMIT_RTPRIO 0".to_string()
                    } else {
                        format!("no CAP_SYS_NICE, RLIMIT_RTPRIO {}", p.rlimit_rtprio)
                    }
                ))
            }
            _ => None,
        };
        if let Some(why) = refuse {
            return Err(Refusal(format!(
                "tasks.{}.policy = \"{}\": {why}, and this process does not have it. Run sim-cli measure as root",
                t.name,
                t.policy.name()
            )));
        }
    }
    let rt_tasks: Vec<&sim_core::TaskSpec> = spec.tasks.iter().filter(|t| t.policy.is_rt()).collect();

    // RT group scheduling: a new cgroup's cpu.rt_runtime_us is 0 (rt.c:
    // alloc_rt_sched_group), and no RT task may start in such a group
    // while RT bandwidth is on; an autogroup's RT tasks run in the root
    // RT group (autogroup.c:autogroup_create), so sessions are fine.
    if host.rt.rt_group_sched == Some(true) && bandwidth_on {
        let sessions = workers.iter().any(|w| w.session.is_some());
        for t in &rt_tasks {
            let Some(w) = workers.iter().find(|w| w.tasks.contains(&t.first.0)) else { continue };
            let group = if w.group != "/" {
                Some(format!("the scenario's group {} (a cgroup the run creates)", w.group))
            } else if w.session.is_none() && !sessions && cgroups {
                Some("the run's parent cgroup schedlab-measure-PID (the scenario has groups)".to_string())
            } else if w.session.is_none() && !cgroups {
                host.rt
                    .own_rt_runtime_us
                    .as_ref()
                    .filter(|(_, r)| *r == 0)
                    .map(|(path, _)| format!("sim-cli's own cpu cgroup {path}"))
            } else {
                None
            };
            if let Some(group) = group {
                return Err(Refusal(format!(
                    "tasks.{}.policy = \"{}\": the task would start in {group}, and this host schedules RT tasks in \
                     groups (CONFIG_RT_GROUP_SCHED on: {}), where a group without cpu.rt_runtime_us refuses RT tasks \
                     (6.18 syscalls.c:__sched_setscheduler, EPERM) and one with it throttles them on its own, which \
                     the model does not do. Measure RT tasks in the root group: without `group`, in a scenario \
                     without groups, run from the root cpu cgroup",
                    t.name,
                    t.policy.name(),
                    host.rt.rt_group_sched_source
                )));
            }
        }
    }

    // RT throttling: the model's against the host's.
    let model_version = super::host::parse_kernel_version(spec.kernel.version()).unwrap_or((0, 0));
    let model_throttles = bandwidth_on && (model_version < (6, 12) || rt.group_sched);
    let host_throttles = match host.rt.rt_group_sched {
        _ if !bandwidth_on => Some(false),
        _ if host.kernel_version < (6, 12) => Some(true),
        g => g,
    };
    if let Some(t) = rt_tasks.first() {
        match host_throttles {
            None => warnings.push(format!(
                "tasks.{}: whether this host throttles RT tasks could not be told ({}): from 6.12 only RT group \
                 scheduling does (6.12 rt.c keeps RT bandwidth under CONFIG_RT_GROUP_SCHED)",
                t.name, host.rt.rt_group_sched_source
            )),
            Some(h) if h != model_throttles => {
                let host_says = if h {
                    format!(
                        "throttles RT tasks ({}; its root RT group runs them at most cpu.rt_runtime_us per \
                         cpu.rt_period_us, rt.c:sched_rt_runtime_exceeded)",
                        host.rt.rt_group_sched_source
                    )
                } else {
                    format!(
                        "does not throttle RT tasks (Linux {}.{} without RT group scheduling: {}; from 6.12 RT \
                         bandwidth exists only under CONFIG_RT_GROUP_SCHED, and the fair server stands in for it)",
                        host.kernel_version.0, host.kernel_version.1, host.rt.rt_group_sched_source
                    )
                };
                let model_says = if model_throttles { "throttles them" } else { "does not" };
                let (key, fix) = if model_version >= (6, 12) {
                    (
                        format!("rt.rt_group_sched = {}", rt.group_sched),
                        format!("Measure with --set rt.rt_group_sched={h}"),
                    )
                } else {
                    (
                        format!("kernel.version = \"{}\"", spec.kernel.version()),
                        "Measure with --set rt.sched_rt_runtime_us=-1 (neither throttles), or with a 6.12+ \
                         kernel.version"
                            .to_string(),
                    )
                };
                return Err(Refusal(format!(
                    "{key}: the scenario runs RT tasks (tasks.{}), this host {host_says}, and the model ({}) \
                     {model_says}, so RT and fair tasks would share the CPU differently. {fix}",
                    t.name,
                    spec.kernel.describe()
                )));
            }
            Some(_) => {}
        }
    }

    // A deadline task's affinity against its host root domain.
    if bandwidth_on {
        for t in spec.tasks.iter().filter(|t| t.policy == Policy::Deadline) {
            for (i, aff) in t.affinity.iter().enumerate() {
                let cpus: Vec<u16> = aff.iter().map(|c| cpu_map[usize::from(c.0)]).collect();
                for &c in &cpus {
                    match host.rt.root_domain_of(c) {
                        None => warnings.push(format!(
                            "tasks.{}: this host's root domains could not be told ({}); the kernel refuses a \
                             SCHED_DEADLINE task whose affinity does not cover its root domain (EPERM)",
                            t.name, host.rt.root_domains_source
                        )),
                        Some(d) if !d.iter().all(|x| cpus.contains(x)) => {
                            return Err(Refusal(format!(
                                "tasks.{}.cpus: instance {i} would run on host CPUs {}, and its root domain on this \
                                 host is CPUs {} ({}); while deadline admission control is on \
                                 (sched_rt_runtime_us >= 0) the kernel refuses a SCHED_DEADLINE task whose \
                                 affinity does not cover its root domain with EPERM (6.18 \
                                 syscalls.c:__sched_setscheduler; the scenario's own root domain is its \
                                 {}-CPU machine). Measure with --set rt.sched_rt_runtime_us=-1 and --apply-sysctls \
                                 (no admission control, so no such rule; the model follows the setting too), with \
                                 --cpus and a scenario covering the whole root domain, or on a host where these CPUs \
                                 are a root domain of their own (isolcpus, or a cpuset partition)",
                                t.name,
                                list_text(&cpus),
                                list_text(d),
                                host.rt.root_domains_source,
                                spec.cpus
                            )));
                        }
                        Some(_) => {}
                    }
                }
            }
        }
    }

    // The fair server: the model's against the host's.
    let host_has_server = host.kernel_version >= (6, 12);
    match (rt.fair_server, host_has_server) {
        (Some(_), false) => warnings.push(format!(
            "the model ({}) has a fair server that gives starved fair tasks their share beside RT and deadline \
             tasks; this host (Linux {}.{}) has none (6.12+)",
            spec.kernel.describe(),
            host.kernel_version.0,
            host.kernel_version.1
        )),
        (None, true) => warnings.push(format!(
            "this host's fair servers (6.12+) give starved fair tasks their share beside RT and deadline tasks; the \
             model ({}) has none",
            spec.kernel.describe()
        )),
        (Some(_), true) => {
            if let super::host_rt::FairServers::Unreadable(why) = &host.rt.fair_server {
                warnings.push(format!(
                    "the host's fair servers could not be read ({why}); the measurement assumes the default 50ms per \
                     1s, as the scenario says"
                ));
            }
        }
        (None, false) => {}
    }
    warnings.dedup();
    Ok(warnings)
}

/// Where the host keeps `sched_cfs_bandwidth_slice_us`.
const SLICE_SYSCTL: &str = "/proc/sys/kernel/sched_cfs_bandwidth_slice_us";

/// Whether the root of the cpu hierarchy has `file`.
fn root_file_exists(cgroup: &super::host::CgroupVersion, file: &str) -> bool {
    match cgroup {
        super::host::CgroupVersion::V1 { cpu } => cpu.join(file).exists(),
        super::host::CgroupVersion::V2 { root } => root.join(file).exists(),
        super::host::CgroupVersion::None => false,
    }
}

/// What decides whether the host can apply the scenario's quotas.
pub struct QuotaHost<'a> {
    /// The cpu hierarchy's root and whether it is v2; None without one.
    pub hierarchy: Option<(String, bool)>,
    /// Whether the hierarchy's root has a control file (v1 shows the
    /// quota files at its root; v2 does not).
    pub root_has: &'a dyn Fn(&str) -> bool,
    pub kernel_version: (u32, u32),
    /// `kernel.sched_cfs_bandwidth_slice_us`, if readable.
    pub slice_us: Option<u64>,
}

/// Refuses a quota this host cannot apply as the scenario says: no cpu
/// hierarchy, a kernel without CONFIG_CFS_BANDWIDTH (v1: no
/// `cpu.cfs_quota_us`) or without burst (v1: no `cpu.cfs_burst_us`; v2:
/// before 5.14), a v1 child quota above its limited ancestor's (written
/// from v2 keys; v1 refuses it: tg_cfs_schedulable_down), or a
/// `sched_cfs_bandwidth_slice_us` other than the host's (not written by
/// `measure`).
pub fn check_quotas(spec: &sim_core::ScenarioSpec, host: &QuotaHost<'_>) -> Result<(), Refusal> {
    let groups = &spec.groups.groups;
    let limited: Vec<_> = groups.iter().skip(1).filter_map(|g| g.bandwidth.map(|b| (g, b))).collect();
    let Some((first, _)) = limited.first() else { return Ok(()) };
    let Some((root, v2)) = &host.hierarchy else {
        return Err(Refusal(format!(
            "groups.\"{}\": a CPU quota needs a cgroup hierarchy with the cpu controller, and this host has none",
            first.path
        )));
    };
    if !v2 && !(host.root_has)("cpu.cfs_quota_us") {
        return Err(Refusal(format!(
            "groups.\"{}\": this kernel has no CPU quota ({root}/cpu.cfs_quota_us does not exist: built without \
             CONFIG_CFS_BANDWIDTH); measure the variant without quotas",
            first.path
        )));
    }
    for (g, b) in &limited {
        if b.burst_ns > 0 {
            let missing = if *v2 { host.kernel_version < (5, 14) } else { !(host.root_has)("cpu.cfs_burst_us") };
            if missing {
                return Err(Refusal(format!(
                    "groups.\"{}\": a burst of {} µs needs {} (Linux 5.14+); this kernel ({}.{}) has none: measure \
                     it without the burst",
                    g.path,
                    b.burst_ns / 1_000,
                    if *v2 { "cpu.max.burst" } else { "cpu.cfs_burst_us" },
                    host.kernel_version.0,
                    host.kernel_version.1
                )));
            }
        }
        let Some(q) = b.quota_ns else { continue };
        if *v2 {
            continue;
        }
        let mut up = g.parent;
        while let Some(p) = up {
            if let Some((pq, pp)) = groups[p].bandwidth.and_then(|pb| pb.quota_ns.map(|x| (x, pb.period_ns))) {
                if u128::from(q) * u128::from(pp) > u128::from(pq) * u128::from(b.period_ns) {
                    return Err(Refusal(format!(
                        "groups.\"{}\": {} µs per {} µs is more than its parent {}'s {} µs per {} µs; this host's \
                         cgroup v1 refuses a child quota above its parent's (tg_cfs_schedulable_down; v2 accepts it)",
                        g.path,
                        q / 1_000,
                        b.period_ns / 1_000,
                        groups[p].path,
                        pq / 1_000,
                        pp / 1_000
                    )));
                }
                break;
            }
            up = groups[p].parent;
        }
    }
    if spec.groups.any_quota()
        && let Some(host_slice) = host.slice_us
        && host_slice != spec.bandwidth_slice_us
    {
        return Err(Refusal(format!(
            "cfs.sched_cfs_bandwidth_slice_us = {} differs from this host's {host_slice} ({SLICE_SYSCTL}), which \
             `measure` does not write: set it with `sysctl kernel.sched_cfs_bandwidth_slice_us={}` (and back \
             afterwards), or measure with --set cfs.sched_cfs_bandwidth_slice_us={host_slice}",
            spec.bandwidth_slice_us, spec.bandwidth_slice_us
        )));
    }
    Ok(())
}

/// The autogroup nice that gives an autogroup these shares (`autogroup.nice`
/// in the scenario), or None for the default 0.
fn autogroup_nice_of(shares: u64) -> Option<i64> {
    // 4.4 sched/auto_group.c:proc_sched_autogroup_set_nice: shares = prio_to_weight[nice + 20].
    let weights = sim_core::PRIO_TO_WEIGHT;
    weights.iter().position(|&w| w == shares).map(|i| i as i64 - 20).filter(|&n| n != 0)
}

/// This process's cpu cgroup path: the v1 `cpu` controller's line of
/// `/proc/self/cgroup`, else the v2 `0::` line.
fn own_cpu_cgroup() -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let field = |l: &str| l.splitn(3, ':').nth(2).map(str::to_string);
    text.lines()
        .find(|l| l.split(':').nth(1).is_some_and(|c| c.split(',').any(|c| c == "cpu")))
        .and_then(field)
        .or_else(|| text.lines().find(|l| l.starts_with("0::")).and_then(field))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_and_maps() {
        assert_eq!(list_text(&[3, 0, 1, 2, 8]), "0-3,8");
        let (m, w) = cpu_map(2, &[0, 1], None).unwrap();
        assert_eq!((m, w.len()), (vec![0, 1], 0));
        let e = cpu_map(4, &[0, 1], None).unwrap_err().0;
        assert!(e.contains("needs 4 CPUs") && e.contains("--cpus"), "{e}");
        let (m, w) = cpu_map(4, &[0, 1], Some("1")).unwrap();
        assert_eq!(m, vec![1, 1, 1, 1]);
        assert!(w[0].contains("folded"), "{w:?}");
        assert!(cpu_map(1, &[0, 1], Some("5")).unwrap_err().0.contains("not online"));
    }

    fn quota_spec(groups: &str) -> sim_core::ScenarioSpec {
        let toml = format!(
            "schema = 1\nseed = 1\nduration = \"1s\"\n[machine]\ncpus = 1\n{groups}\n[[tasks]]\nname = \"hog\"\n\
             group = \"/a\"\nprogram = [{{ run = \"1s\" }}]\n"
        );
        Scenario::from_toml("q.toml", &toml).expect("scenario").spec
    }

    #[test]
    fn quotas_refused_when_the_host_cannot_apply_them() {
        let all = |_: &str| true;
        let none = |_: &str| false;
        let no_burst = |f: &str| f != "cpu.cfs_burst_us";
        fn host(root_has: &dyn Fn(&str) -> bool, v2: bool) -> QuotaHost<'_> {
            QuotaHost {
                hierarchy: Some(("/sys/fs/cgroup/cpu".into(), v2)),
                root_has,
                kernel_version: (6, 18),
                slice_us: Some(5000),
            }
        }
        let plain = quota_spec("[groups.\"/a\"]\n\"cpu.max\" = \"50000 100000\"\n");
        assert!(check_quotas(&plain, &host(&all, false)).is_ok());
        assert!(check_quotas(&plain, &host(&none, true)).is_ok(), "v2 shows no quota files at its root");
        let e = check_quotas(&plain, &host(&none, false)).unwrap_err().0;
        assert!(e.contains("CONFIG_CFS_BANDWIDTH") && e.contains("/a"), "{e}");
        let e = check_quotas(&plain, &QuotaHost { hierarchy: None, ..host(&all, false) }).unwrap_err().0;
        assert!(e.contains("no") && e.contains("cpu controller"), "{e}");
        let e = check_quotas(&plain, &QuotaHost { slice_us: Some(1000), ..host(&all, false) }).unwrap_err().0;
        assert!(e.contains("sched_cfs_bandwidth_slice_us") && e.contains("1000"), "{e}");
        let burst = quota_spec("[groups.\"/a\"]\n\"cpu.max\" = \"50000 100000\"\n\"cpu.max.burst\" = 10000\n");
        assert!(check_quotas(&burst, &host(&all, false)).is_ok());
        let e = check_quotas(&burst, &host(&no_burst, false)).unwrap_err().0;
        assert!(e.contains("cpu.cfs_burst_us") && e.contains("5.14"), "{e}");
        let e = check_quotas(&burst, &QuotaHost { kernel_version: (5, 10), ..host(&none, true) }).unwrap_err().0;
        assert!(e.contains("cpu.max.burst"), "{e}");
        // v2 keys may give a child more than its parent; a v1 host refuses that.
        let nested = quota_spec(
            "[groups.\"/p\"]\n\"cpu.max\" = \"20000 100000\"\n[groups.\"/p/a\"]\n\"cpu.max\" = \"50000 100000\"\n[groups.\"/a\"]\n",
        );
        let e = check_quotas(&nested, &host(&all, false)).unwrap_err().0;
        assert!(e.contains("/p/a") && e.contains("tg_cfs_schedulable_down"), "{e}");
        assert!(check_quotas(&nested, &host(&none, true)).is_ok());
    }

    /// A one-CPU 6.18 scenario with `extra` TOML before the tasks and the tasks given.
    fn rt_scenario(extra: &str, tasks: &str) -> Scenario {
        let toml = format!(
            "schema = 1\nseed = 1\nduration = \"1s\"\n[kernel]\nversion = \"6.18\"\n[machine]\ncpus = 1\n{extra}\n{tasks}"
        );
        Scenario::from_toml("rt.toml", &toml).unwrap_or_else(|e| panic!("{toml}: {e}"))
    }

    const FIFO: &str = "[[tasks]]\nname = \"rtloop\"\ncpus = \"0\"\npolicy = \"fifo\"\nrt_priority = 50\n\
                        program = [{ sleep_until = \"1ms\" }, { run = \"50us\" }]\n";
    const DL: &str = "[[tasks]]\nname = \"dl\"\ncpus = \"0\"\npolicy = \"deadline\"\ndl_runtime = \"2ms\"\n\
                      dl_deadline = \"10ms\"\nprogram = [{ sleep_until = \"10ms\" }, { run = \"1500us\" }]\n";
    const HOG: &str = "[[tasks]]\nname = \"hog\"\ncpus = \"0\"\nprogram = [{ run = \"1s\" }]\n";

    /// `check_rt_tasks` for a scenario planned on `host` (one worker per group, as `plan` makes them).
    fn rt_check(s: &Scenario, host: &HostInfo) -> Result<Vec<String>, Refusal> {
        let spec = &s.spec;
        let mut workers: Vec<WorkerPlan> = Vec::new();
        for ts in &spec.tasks {
            let group = spec.groups.groups[ts.cgroup].path.clone();
            let tasks: Vec<u32> = (0..ts.count).map(|i| ts.first.0 + i).collect();
            match workers.iter_mut().find(|w| w.group == group) {
                Some(w) => w.tasks.extend(tasks),
                None => workers.push(WorkerPlan { session: None, autogroup_nice: None, group, tasks, sources: vec![] }),
            }
        }
        let cgroups = spec.groups.groups.len() > 1;
        check_rt_tasks(spec, host, &[0], &workers, cgroups)
    }

    #[test]
    fn rt_and_deadline_tasks_need_the_privilege() {
        let mut host = super::super::host::tests::vm_host();
        host.privilege = super::super::host_rt::Privilege { cap_sys_nice: false, rlimit_rtprio: 10 };
        let group = "[rt]\nrt_group_sched = true";
        let e = rt_check(&rt_scenario(group, FIFO), &host).unwrap_err().0;
        assert!(e.starts_with("tasks.rtloop.policy = \"fifo\": SCHED_FIFO at priority 50"), "{e}");
        assert!(e.contains("RLIMIT_RTPRIO 10") && e.contains("CAP_SYS_NICE"), "{e}");
        // RLIMIT_RTPRIO at the priority is enough for FIFO/RR; deadline needs the capability.
        host.privilege.rlimit_rtprio = 50;
        assert!(rt_check(&rt_scenario(group, FIFO), &host).is_ok());
        let e = rt_check(&rt_scenario("[rt]\nsched_rt_runtime_us = -1", DL), &host).unwrap_err().0;
        assert!(e.starts_with("tasks.dl.policy = \"deadline\": SCHED_DEADLINE needs CAP_SYS_NICE"), "{e}");
        // Fair tasks need nothing.
        assert!(rt_check(&rt_scenario("", HOG), &host).unwrap().is_empty());
    }

    #[test]
    fn rt_throttling_must_match_the_host() {
        let host = super::super::host::tests::vm_host();
        // This VM throttles its root RT group (CONFIG_RT_GROUP_SCHED=y); the 6.18 model only with the switch.
        let e = rt_check(&rt_scenario("", FIFO), &host).unwrap_err().0;
        assert!(e.starts_with("rt.rt_group_sched = false: the scenario runs RT tasks (tasks.rtloop)"), "{e}");
        assert!(e.contains("--set rt.rt_group_sched=true"), "{e}");
        assert!(rt_check(&rt_scenario("[rt]\nrt_group_sched = true", FIFO), &host).is_ok());
        // -1: neither throttles.
        assert!(rt_check(&rt_scenario("[rt]\nsched_rt_runtime_us = -1", FIFO), &host).is_ok());
        // A deadline task alone is not throttled.
        assert!(rt_check(&rt_scenario("[rt]\nsched_rt_runtime_us = -1", DL), &host).is_ok());
        // A 6.18 host without RT group scheduling and the 6.6 model, which always throttles.
        let mut flat = super::super::host::tests::vm_host();
        flat.rt.rt_group_sched = Some(false);
        let six_six = |extra: &str| {
            let toml = format!(
                "schema = 1\nseed = 1\nduration = \"1s\"\n[kernel]\nversion = \"6.6\"\n[machine]\ncpus = 1\n{extra}\n{FIFO}"
            );
            Scenario::from_toml("rt.toml", &toml).expect("6.6 scenario")
        };
        let e = rt_check(&six_six(""), &flat).unwrap_err().0;
        assert!(e.starts_with("kernel.version = \"6.6\"") && e.contains("does not throttle RT tasks"), "{e}");
        assert!(e.contains("rt.sched_rt_runtime_us=-1"), "{e}");
        let warnings = rt_check(&six_six("[rt]\nsched_rt_runtime_us = -1"), &flat).expect("neither throttles");
        assert!(warnings.iter().any(|w| w.contains("fair servers") && w.contains("has none")), "{warnings:?}");
        // Unknown: said, not refused.
        let mut unknown = super::super::host::tests::vm_host();
        unknown.rt.rt_group_sched = None;
        let warnings = rt_check(&rt_scenario("", FIFO), &unknown).expect("warned");
        assert!(warnings.iter().any(|w| w.contains("could not be told")), "{warnings:?}");
    }

    #[test]
    fn rt_tasks_in_cgroups_are_refused_under_rt_group_scheduling() {
        let host = super::super::host::tests::vm_host();
        let group = "[rt]\nrt_group_sched = true\n[groups.\"/a\"]\n";
        // A root RT task of a scenario with groups starts in the run's parent cgroup.
        let e = rt_check(&rt_scenario(group, &format!("{FIFO}{HOG}group = \"/a\"\n")), &host).unwrap_err().0;
        assert!(e.starts_with("tasks.rtloop.policy = \"fifo\": the task would start in the run's parent"), "{e}");
        assert!(e.contains("EPERM"), "{e}");
        let in_group = FIFO.replace("name = \"rtloop\"", "name = \"rtloop\"\ngroup = \"/a\"");
        let e = rt_check(&rt_scenario(group, &in_group), &host).unwrap_err().0;
        assert!(e.contains("the scenario's group /a"), "{e}");
        // Without RT bandwidth the kernel lets it in; without RT group scheduling too.
        let no_limit = "[rt]\nrt_group_sched = true\nsched_rt_runtime_us = -1\n[groups.\"/a\"]\n";
        assert!(rt_check(&rt_scenario(no_limit, &in_group), &host).is_ok());
        let mut flat = super::super::host::tests::vm_host();
        flat.rt.rt_group_sched = Some(false);
        assert!(rt_check(&rt_scenario("[groups.\"/a\"]\n", &in_group), &flat).is_ok());
        // sim-cli itself in a cpu cgroup with no RT runtime, and no cgroups of the run's.
        let mut inside = super::super::host::tests::vm_host();
        inside.rt.own_rt_runtime_us = Some(("/app".into(), 0));
        let e = rt_check(&rt_scenario("[rt]\nrt_group_sched = true", FIFO), &inside).unwrap_err().0;
        assert!(e.contains("sim-cli's own cpu cgroup /app"), "{e}");
    }

    #[test]
    fn a_pinned_deadline_task_needs_its_root_domain() {
        let host = super::super::host::tests::vm_host();
        // This VM's two CPUs are one root domain: a deadline task on one of them is refused while admission is on.
        let e = rt_check(&rt_scenario("", &format!("{DL}{HOG}")), &host).unwrap_err().0;
        assert!(e.starts_with("tasks.dl.cpus: instance 0 would run on host CPUs 0, and its root domain"), "{e}");
        assert!(e.contains("CPUs 0-1") && e.contains("EPERM") && e.contains("rt.sched_rt_runtime_us=-1"), "{e}");
        assert!(rt_check(&rt_scenario("[rt]\nsched_rt_runtime_us = -1", &format!("{DL}{HOG}")), &host).is_ok());
        // CPUs that are root domains of their own (isolcpus, a cpuset partition).
        let mut split = super::super::host::tests::vm_host();
        split.rt.root_domains = Some(vec![vec![0], vec![1]]);
        assert!(rt_check(&rt_scenario("", DL), &split).is_ok());
        let mut unknown = super::super::host::tests::vm_host();
        unknown.rt.root_domains = None;
        unknown.rt.root_domains_source = "cpusets".into();
        let warnings = rt_check(&rt_scenario("", DL), &unknown).expect("warned");
        assert!(warnings.iter().any(|w| w.contains("root domains could not be told (cpusets)")), "{warnings:?}");
    }

    /// No system call makes a stop task: refused before anything else.
    #[test]
    fn a_stop_task_is_refused() {
        let host = super::super::host::tests::vm_host();
        let opts = PlanOptions { cpus: Some("0"), apply_sysctls: true, io_dir: None, ignored_flags: &[] };
        let stop = "[[tasks]]\nname = \"migration\"\ncpus = \"0\"\npolicy = \"stop\"\n\
                    program = [{ sleep = \"10ms\" }, { run = \"5us\" }]\n";
        let e = plan(&rt_scenario("", &format!("{HOG}{stop}")), &host, &opts).unwrap_err().0;
        assert!(e.starts_with("tasks.migration.policy = \"stop\": no system call makes a stop task"), "{e}");
        assert!(e.contains("sched_set_stop_task") && e.contains("rt_priority = 99"), "{e}");
    }

    /// `[machine.noise]` models the machine's own noise: its background
    /// entries must not run as real threads beside the workload.
    #[test]
    fn a_machine_noise_section_is_refused() {
        let host = super::super::host::tests::vm_host();
        let opts = PlanOptions { cpus: Some("0"), apply_sysctls: false, io_dir: None, ignored_flags: &[] };
        let noise = "[machine.noise]\nwakeup_idle = \"14us\"\n[[machine.noise.background]]\nname = \"bg\"\ncpu = 0\n\
                     every = \"exp(40ms)\"\nrun = \"100us\"\n";
        let e = plan(&rt_scenario(noise, HOG), &host, &opts).unwrap_err().0;
        assert!(e.starts_with("machine.noise: a model of the machine's own noise"), "{e}");
        assert!(e.contains("validate --noise FILE"), "{e}");
    }

    #[test]
    fn plan_names_rt_settings_as_set_spells_them() {
        let host = super::super::host::tests::vm_host();
        let opts = |apply| PlanOptions { cpus: Some("0"), apply_sysctls: apply, io_dir: None, ignored_flags: &[] };
        let s = rt_scenario("[rt]\nsched_rt_runtime_us = -1", &format!("{DL}{HOG}"));
        if std::path::Path::new("/proc/sys/kernel/sched_rt_runtime_us").exists() {
            let e = plan(&s, &host, &opts(false)).unwrap_err().0;
            assert!(e.contains("rt.sched_rt_runtime_us=-1") && e.contains("--apply-sysctls"), "{e}");
            let p = plan(&s, &host, &opts(true)).expect("plan");
            let written: Vec<(&str, &str)> = p.settings.iter().map(|w| (w.key.as_str(), w.value.as_str())).collect();
            assert_eq!(written, vec![("rt.sched_rt_runtime_us", "-1")]);
        }
        let e =
            plan(&rt_scenario("[rt]\nsched_rt_runtime_us = 500000\nrt_group_sched = true", FIFO), &host, &opts(true))
                .unwrap_err()
                .0;
        assert!(e.starts_with("rt.sched_rt_runtime_us = 500000: this host schedules RT tasks in groups"), "{e}");
    }
}
