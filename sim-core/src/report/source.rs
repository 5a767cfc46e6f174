//! Where a report's figures come from (`ReportSource`): the simulator, or
//! a measurement on a real kernel with the host's facts and both views of
//! its delays. Plain data a `RunReport` carries; `measured.rs` builds a
//! report from a measurement.

use crate::metrics::latency::LatencySummary;

/// Where a report's figures come from.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ReportSource {
    /// The simulator ran the scenario.
    #[default]
    Simulated,
    /// The scenario's workload ran on a real kernel.
    Measured(Box<MeasuredInfo>),
}

impl ReportSource {
    pub fn name(&self) -> &'static str {
        match self {
            ReportSource::Simulated => "simulated",
            ReportSource::Measured(_) => "measured",
        }
    }
}

/// The machine a measurement ran on, as the CLI found it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostFacts {
    /// `uname -r`.
    pub kernel_release: String,
    /// `cfs` (before 6.6) or `eevdf`.
    pub scheduler: String,
    pub hz: u32,
    /// `config` (read from the kernel config) or `measured`.
    pub hz_source: String,
    /// CONFIG_NO_HZ_IDLE, when the config was readable.
    pub nohz_idle: Option<bool>,
    /// Online CPUs of the host, as a list (`0-3`).
    pub cpus_online: String,
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
    pub numa_nodes: u16,
    /// Host CPU of each scenario CPU (`scenario CPU i` ran on `cpu_map[i]`).
    pub cpu_map: Vec<u16>,
    /// `none`, `voluntary`, `full`, `lazy` or `rt`, and where that was read.
    pub preempt: String,
    pub preempt_source: String,
    /// `v1`, `v2` or `none`.
    pub cgroup: String,
    /// `kernel.sched_autogroup_enabled`, if the kernel has it.
    pub autogroup: Option<bool>,
    pub cpu_model: String,
    pub virtualized: Option<String>,
    /// The host's tick grid: every CPU's tick expiry modulo the tick period
    /// (`CLOCK_MONOTONIC`), when `/proc/timer_list` could be read.
    pub tick_grid_ns: Option<u64>,
    /// The host's ticks fell at `start + tick_offset_ns + k × tick` (the
    /// scenario's `machine.tick_offset`); None when the start was not aligned.
    pub tick_offset_ns: Option<u64>,
    /// Why the start was not aligned with the host's ticks, when it was not.
    pub tick_grid_missing: Option<String>,
}

/// What the measurement adds to a report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeasuredInfo {
    pub host: HostFacts,
    /// Which view fills the report's delay figures: `perf` (`perf sched`
    /// tracepoints, the kernel's view, as the simulator counts delays) or
    /// `threads` (the threads' own timestamps).
    pub delays_from: String,
    /// Why `perf` was not used, when it was not.
    pub perf_missing: Option<String>,
    /// Per declared task: the delays seen from both views.
    pub views: Vec<DelayViews>,
    /// Sysctls and features written for the run (restored afterwards),
    /// `(key as --set spells it, value written)`.
    pub applied: Vec<(String, String)>,
    /// Scenario settings the run did not reproduce (a flag allowed it):
    /// `(key as --set spells it, the flag and why)`.
    pub not_reproduced: Vec<(String, String)>,
}

/// One declared task's delays as its threads saw them and as `perf` saw them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DelayViews {
    pub name: String,
    /// Wake-ups: intended wake time (timer deadline, or the moment a waker
    /// wrote to the pipe) → the thread's first instruction after it.
    pub threads_wakeup: LatencySummary,
    /// Gaps in the threads' CPU bursts longer than the detection threshold:
    /// time runnable but not running.
    pub threads_preempt: LatencySummary,
    pub perf_wakeup: Option<LatencySummary>,
    pub perf_preempt: Option<LatencySummary>,
    /// `/proc/<tid>/schedstat` run_delay (the kernel's sum of the time the
    /// threads waited on a run queue) over the run.
    pub schedstat_run_delay_ns: u64,
}
