//! The JSON of a measured run's `measurement` part: the host and both
//! views of each task's delays.

use super::latency::Latency;
use crate::report::source::MeasuredInfo;
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
    /// Every host CPU's tick expiry modulo the tick period (`CLOCK_MONOTONIC`), when readable.
    tick_grid_ns: Option<u64>,
    /// The host's ticks fell at the run's start + this + k × tick (`machine.tick_offset`); null when not aligned.
    tick_offset_ns: Option<u64>,
    /// Why the start was not aligned with the host's ticks.
    tick_grid_missing: Option<&'a str>,
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
    views: Vec<Views<'a>>,
    /// Sysctls and scheduler features written for the run (restored after
    /// it), keyed as `--set` spells them.
    applied: BTreeMap<&'a str, &'a str>,
    /// Scenario settings the host run did not reproduce, keyed as `--set`
    /// spells them, with the flag that allowed it and why (`{}`: none).
    not_reproduced: BTreeMap<&'a str, &'a str>,
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
            tick_grid_ns: h.tick_grid_ns,
            tick_offset_ns: h.tick_offset_ns,
            tick_grid_missing: h.tick_grid_missing.as_deref(),
        },
        delays_from: &m.delays_from,
        perf_missing: m.perf_missing.as_deref(),
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
    }
}
