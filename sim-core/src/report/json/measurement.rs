//! The JSON of a measured run's `measurement` part: the host (its
//! scheduling options from the kernel command line included), both views of
//! each task's delays, and the foreign CPU time on the workload's CPUs.

use super::latency::Latency;
use crate::report::source::{ForeignCpu, MeasuredInfo};
use serde::Serialize;
use std::collections::BTreeMap;

/// The machine a measured run ran on (`sim-cli measure`).
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Host<'a> {
    kernel_release: &'a str,
    /// `cfs` (before 6.6) or `eevdf`.
    scheduler: &'a str,
    hz: u32,
    /// `config` or `measured`.
    hz_source: &'a str,
    nohz_idle: Option<bool>,
    cpus_online: &'a str,
    sockets: u16,
    cores_per_socket: u16,
    threads_per_core: u16,
    numa_nodes: u16,
    /// Host CPU that scenario CPU `i` ran on.
    cpu_map: &'a [u16],
    preempt: &'a str,
    preempt_source: &'a str,
    /// `v1`, `v2` or `none`.
    cgroup: &'a str,
    autogroup: Option<bool>,
    cpu_model: &'a str,
    virtualized: Option<&'a str>,
    /// The kernel command line's options that bear on scheduling, as written.
    sched_cmdline: &'a [String],
    /// Those that are `sched_*` options upstream Linux does not have.
    sched_cmdline_non_upstream: &'a [String],
    /// Every host CPU's tick expiry modulo the tick period (`CLOCK_MONOTONIC`), when readable.
    tick_grid_ns: Option<u64>,
    /// The host's ticks fell at the run's start + this + k × tick (`machine.tick_offset`); null when not aligned.
    tick_offset_ns: Option<u64>,
    /// Why the start was not aligned with the host's ticks.
    tick_grid_missing: Option<&'a str>,
    /// The host's RT and deadline settings, read before the run (null: not read).
    rt: Option<HostRt<'a>>,
}

/// The host's RT and deadline settings, read before the run wrote any; a
/// value that could not be read is null.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct HostRt<'a> {
    /// `kernel.sched_rt_runtime_us` (−1: no limit).
    sched_rt_runtime_us: Option<i64>,
    sched_rt_period_us: Option<i64>,
    sched_rr_timeslice_ms: Option<i64>,
    /// CONFIG_RT_GROUP_SCHED on (from 6.16 also not off at boot); null: could not tell.
    rt_group_sched: Option<bool>,
    /// Where `rt_group_sched` was read, or why not.
    rt_group_sched_source: &'a str,
    /// The root cpu cgroup's `cpu.rt_runtime_us`/`cpu.rt_period_us` (read under RT group scheduling).
    root_rt_runtime_us: Option<i64>,
    root_rt_period_us: Option<i64>,
    /// Each online host CPU's fair server (6.12+ debugfs), when read.
    fair_servers: Vec<FairServer>,
    /// Why `fair_servers` is empty: `absent` (before 6.12) or `unreadable: …`; null when read.
    fair_servers_missing: Option<&'a str>,
    /// The root domains as CPU lists, when they could be told.
    root_domains: Option<&'a [String]>,
    /// How the root domains were found, or why not.
    root_domains_source: &'a str,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct FairServer {
    cpu: u16,
    runtime_ns: u64,
    period_ns: u64,
}

/// One declared task's delays from the threads' timestamps and from `perf sched`.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Views<'a> {
    name: &'a str,
    threads_wakeup: Latency,
    threads_preempt: Latency,
    perf_wakeup: Option<Latency>,
    perf_preempt: Option<Latency>,
    schedstat_run_delay_ns: u64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Measurement<'a> {
    host: Host<'a>,
    /// `perf` or `threads`: which view fills the report's delay figures.
    delays_from: &'a str,
    /// Why perf was not used, if it was not.
    perf_missing: Option<&'a str>,
    /// What the perf view may have wrong (a CPU whose idle-task switches
    /// perf did not record); `[]`: nothing known.
    perf_notes: Vec<&'a str>,
    views: Vec<Views<'a>>,
    /// Sysctls and scheduler features written for the run (restored after
    /// it), keyed as `--set` spells them.
    applied: BTreeMap<&'a str, &'a str>,
    /// Scenario settings the host run did not reproduce, keyed as `--set`
    /// spells them, with the flag that allowed it and why (`{}`: none).
    not_reproduced: BTreeMap<&'a str, &'a str>,
    /// CPU time of tasks the measurement did not start on the workload's
    /// host CPUs (null without perf).
    foreign_cpu: Option<Foreign<'a>>,
}

/// CPU time that tasks the measurement did not start ran on the workload's
/// host CPUs over the measured window (perf sched's switches).
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Foreign<'a> {
    window_ns: u64,
    /// Summed over the CPUs.
    foreign_ns: u64,
    /// `foreign_ns` as a percentage of `window_ns` × the number of CPUs.
    share_pct: f64,
    /// perf and the measuring processes' own threads, summed over the CPUs.
    tools_ns: u64,
    cpus: Vec<ForeignOn>,
    /// The foreign commands that ran longest, longest first.
    top: Vec<ForeignComm<'a>>,
    /// Why multi-CPU figures of this run are not to be trusted, when the
    /// foreign share is above the threshold.
    warning: Option<&'a str>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct ForeignOn {
    host_cpu: u16,
    foreign_ns: u64,
    /// `foreign_ns` as a percentage of the window.
    share_pct: f64,
    tools_ns: u64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct ForeignComm<'a> {
    comm: &'a str,
    ns: u64,
}

fn foreign_dto(f: &ForeignCpu) -> Foreign<'_> {
    Foreign {
        window_ns: f.window_ns,
        foreign_ns: f.foreign_ns(),
        share_pct: f.share_pct(),
        tools_ns: f.tools_ns(),
        cpus: f
            .cpus
            .iter()
            .map(|c| ForeignOn {
                host_cpu: c.host_cpu,
                foreign_ns: c.foreign_ns,
                share_pct: f.pct(c.foreign_ns, 1),
                tools_ns: c.tools_ns,
            })
            .collect(),
        top: f.top.iter().map(|(comm, ns)| ForeignComm { comm, ns: *ns }).collect(),
        warning: f.warning.as_deref(),
    }
}

pub(super) fn measurement_dto(m: &MeasuredInfo) -> Measurement<'_> {
    let h = &m.host;
    Measurement {
        host: Host {
            kernel_release: &h.kernel_release,
            scheduler: &h.scheduler,
            hz: h.hz,
            hz_source: &h.hz_source,
            nohz_idle: h.nohz_idle,
            cpus_online: &h.cpus_online,
            sockets: h.sockets,
            cores_per_socket: h.cores_per_socket,
            threads_per_core: h.threads_per_core,
            numa_nodes: h.numa_nodes,
            cpu_map: &h.cpu_map,
            preempt: &h.preempt,
            preempt_source: &h.preempt_source,
            cgroup: &h.cgroup,
            autogroup: h.autogroup,
            cpu_model: &h.cpu_model,
            virtualized: h.virtualized.as_deref(),
            sched_cmdline: &h.sched_cmdline,
            sched_cmdline_non_upstream: &h.sched_cmdline_non_upstream,
            tick_grid_ns: h.tick_grid_ns,
            tick_offset_ns: h.tick_offset_ns,
            tick_grid_missing: h.tick_grid_missing.as_deref(),
            rt: h.rt.as_ref().map(|r| HostRt {
                sched_rt_runtime_us: r.sched_rt_runtime_us,
                sched_rt_period_us: r.sched_rt_period_us,
                sched_rr_timeslice_ms: r.sched_rr_timeslice_ms,
                rt_group_sched: r.rt_group_sched,
                rt_group_sched_source: &r.rt_group_sched_source,
                root_rt_runtime_us: r.root_rt_runtime_us,
                root_rt_period_us: r.root_rt_period_us,
                fair_servers: r
                    .fair_servers
                    .iter()
                    .map(|s| FairServer { cpu: s.cpu, runtime_ns: s.runtime_ns, period_ns: s.period_ns })
                    .collect(),
                fair_servers_missing: r.fair_servers_missing.as_deref(),
                root_domains: r.root_domains.as_deref(),
                root_domains_source: &r.root_domains_source,
            }),
        },
        delays_from: &m.delays_from,
        perf_missing: m.perf_missing.as_deref(),
        perf_notes: m.perf_notes.iter().map(String::as_str).collect(),
        views: m
            .views
            .iter()
            .map(|v| Views {
                name: &v.name,
                threads_wakeup: (&v.threads_wakeup).into(),
                threads_preempt: (&v.threads_preempt).into(),
                perf_wakeup: v.perf_wakeup.as_ref().map(Latency::from),
                perf_preempt: v.perf_preempt.as_ref().map(Latency::from),
                schedstat_run_delay_ns: v.schedstat_run_delay_ns,
            })
            .collect(),
        applied: m.applied.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect(),
        not_reproduced: m.not_reproduced.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect(),
        foreign_cpu: m.foreign_cpu.as_ref().map(foreign_dto),
    }
}
