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
    /// The kernel command line's options that bear on scheduling
    /// (`isolcpus=`, `nohz_full=`, `mitigations=`, any `sched_*`, …), as written.
    pub sched_cmdline: Vec<String>,
    /// Those of `sched_cmdline` that are `sched_*` options upstream Linux
    /// does not have (a patched kernel's scheduler).
    pub sched_cmdline_non_upstream: Vec<String>,
    /// The host's tick grid: every CPU's tick expiry modulo the tick period
    /// (`CLOCK_MONOTONIC`), when `/proc/timer_list` could be read.
    pub tick_grid_ns: Option<u64>,
    /// The host's ticks fell at `start + tick_offset_ns + k × tick` (the
    /// scenario's `machine.tick_offset`); None when the start was not aligned.
    pub tick_offset_ns: Option<u64>,
    /// Why the start was not aligned with the host's ticks, when it was not.
    pub tick_grid_missing: Option<String>,
    /// The host's RT and deadline settings, read before the run (`None`:
    /// not read, as in a report built by hand).
    pub rt: Option<HostRtFacts>,
}

/// The host's RT and deadline settings as `measure` read them before the
/// run wrote anything: the `kernel.sched_rt_*` and `sched_rr_timeslice_ms`
/// sysctls, RT group scheduling, the 6.12+ fair servers and the root
/// domains. A value that could not be read is `None`, with the reason where
/// there is one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostRtFacts {
    /// `kernel.sched_rt_runtime_us` (−1: no limit).
    pub sched_rt_runtime_us: Option<i64>,
    pub sched_rt_period_us: Option<i64>,
    pub sched_rr_timeslice_ms: Option<i64>,
    /// CONFIG_RT_GROUP_SCHED on (and, from 6.16, not switched off at boot);
    /// `None`: could not tell.
    pub rt_group_sched: Option<bool>,
    /// Where `rt_group_sched` was read, or why it could not be.
    pub rt_group_sched_source: String,
    /// The root cpu cgroup's `cpu.rt_runtime_us`/`cpu.rt_period_us`, read
    /// when RT group scheduling is on (they, not the sysctls, throttle then).
    pub root_rt_runtime_us: Option<i64>,
    pub root_rt_period_us: Option<i64>,
    /// Each online host CPU's fair server, as read from debugfs.
    pub fair_servers: Vec<HostFairServer>,
    /// Why `fair_servers` is empty: `absent` (a kernel before 6.12 has
    /// none) or `unreadable: …`; `None` when they were read.
    pub fair_servers_missing: Option<String>,
    /// The root domains as CPU lists (`0-3`), when they could be told.
    pub root_domains: Option<Vec<String>>,
    /// How the root domains were found, or why not.
    pub root_domains_source: String,
}

/// One host CPU's fair server (6.12+ debugfs `sched/fair_server/cpuN/{runtime,period}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostFairServer {
    pub cpu: u16,
    pub runtime_ns: u64,
    pub period_ns: u64,
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
    /// What the perf view may have wrong, one sentence each (a CPU whose
    /// idle-task switches perf did not record).
    pub perf_notes: Vec<String>,
    /// Per declared task: the delays seen from both views.
    pub views: Vec<DelayViews>,
    /// Sysctls and features written for the run (restored afterwards),
    /// `(key as --set spells it, value written)`.
    pub applied: Vec<(String, String)>,
    /// Scenario settings the run did not reproduce (a flag allowed it):
    /// `(key as --set spells it, the flag and why)`.
    pub not_reproduced: Vec<(String, String)>,
    /// CPU time of tasks the measurement did not start on the workload's
    /// host CPUs, when perf recorded the run.
    pub foreign_cpu: Option<ForeignCpu>,
}

/// CPU time that tasks the measurement did not start (neither the
/// workload's threads nor the measuring tools) ran on the host CPUs the
/// workload ran on, over the measured window, from perf sched's switches.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ForeignCpu {
    /// The measured window's length.
    pub window_ns: u64,
    /// Each host CPU of the workload, in host CPU order.
    pub cpus: Vec<ForeignOnCpu>,
    /// The foreign commands that ran longest there, longest first: `(comm, ns)`.
    pub top: Vec<(String, u64)>,
    /// Set when the foreign share is above the front end's threshold.
    pub warning: Option<String>,
}

/// One host CPU's foreign time and the measuring tools' own (perf, the
/// measuring process and its worker processes' other threads).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ForeignOnCpu {
    pub host_cpu: u16,
    pub foreign_ns: u64,
    pub tools_ns: u64,
}

impl ForeignCpu {
    /// Foreign time summed over the CPUs.
    pub fn foreign_ns(&self) -> u64 {
        self.cpus.iter().map(|c| c.foreign_ns).sum()
    }

    /// The measuring tools' time summed over the CPUs.
    pub fn tools_ns(&self) -> u64 {
        self.cpus.iter().map(|c| c.tools_ns).sum()
    }

    /// `ns` as a percentage of the window on `cpus` CPUs (0 for an empty window).
    pub fn pct(&self, ns: u64, cpus: usize) -> f64 {
        let capacity = self.window_ns as f64 * cpus as f64;
        if capacity > 0.0 { ns as f64 / capacity * 100.0 } else { 0.0 }
    }

    /// The foreign share of the window × the workload's CPUs, in percent.
    pub fn share_pct(&self) -> f64 {
        self.pct(self.foreign_ns(), self.cpus.len())
    }
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
