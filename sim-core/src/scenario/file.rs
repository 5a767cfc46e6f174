//! Stage one of parsing: the scenario file's structure, as serde sees it.
//! Unknown keys are rejected here (`deny_unknown_fields`); values that need
//! interpreting (durations, distributions, steps) stay as TOML values and are
//! checked by `validate.rs`, which can then name the key and what is allowed.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Value;

#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Format version; only 1 exists.
    pub schema: u32,
    pub name: Option<String>,
    pub description: Option<String>,
    pub seed: u64,
    /// Simulated time to run, e.g. `"10s"`.
    #[cfg_attr(feature = "schema", schemars(with = "crate::schema::Duration"))]
    pub duration: Value,
    pub machine: MachineFile,
    /// The kernel whose scheduler runs the scenario.
    #[serde(default)]
    pub kernel: KernelFile,
    #[serde(default)]
    pub cfs: CfsFile,
    /// Scheduler feature bits by kernel name, e.g. `GENTLE_FAIR_SLEEPERS = false`.
    #[serde(default)]
    pub features: BTreeMap<String, bool>,
    #[serde(default)]
    pub limits: LimitsFile,
    #[serde(default)]
    pub report: ReportFile,
    /// cgroup v1 `cpu` controller groups by path: `[groups."/scylla"]`.
    #[serde(default)]
    pub groups: BTreeMap<String, GroupFile>,
    #[serde(default)]
    pub autogroup: AutogroupFile,
    /// The RT class's sysctls (`kernel.sched_rt_runtime_us`, …).
    #[serde(default)]
    pub rt: RtFile,
    /// The 6.12+ fair deadline server of every CPU (debugfs
    /// `sched/fair_server/cpuN/{runtime,period}`).
    #[serde(default)]
    pub fair_server: FairServerFile,
    /// Block devices by name: `[devices.nvme0]`.
    #[serde(default)]
    pub devices: BTreeMap<String, DeviceFile>,
    /// Elastic CPU limiters by name: `[limiters.backup]` (in-process pacing
    /// of the tasks that name it in `limiter`).
    #[serde(default)]
    pub limiters: BTreeMap<String, LimiterFile>,
    /// Seastar-style userspace I/O schedulers by name: `[io_queues.disk]`
    /// (I/O steps name a class with `io_class = "disk.query"`).
    #[serde(default)]
    pub io_queues: BTreeMap<String, IoQueueFile>,
    pub tasks: Vec<TaskFile>,
    #[serde(default)]
    pub sources: Vec<SourceFile>,
    /// Named sets of overrides; read by `overrides.rs`, not deserialized here.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Variants>"))]
    pub variants: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct MachineFile {
    /// Logical CPUs. Optional when `cores_per_socket` is given (then
    /// sockets x cores_per_socket x threads_per_core); if both are given
    /// they must agree.
    pub cpus: Option<u64>,
    /// Sockets (packages); default 1. Each socket is one last-level cache (the MC level).
    pub sockets: Option<u64>,
    /// Cores per socket; default `cpus / (sockets * threads_per_core)`.
    pub cores_per_socket: Option<u64>,
    /// Hardware threads per core (SMT); default 1, at most 8.
    pub threads_per_core: Option<u64>,
    /// NUMA nodes; default 1. Must divide `sockets` (a node holds whole sockets).
    pub numa_nodes: Option<u64>,
    /// Clusters per socket (6.x models): the cores of a socket split evenly
    /// into groups sharing an L2, the CLS sched-domain level between SMT and
    /// MC (x86 `cpu_clustergroup_mask`, CONFIG_SCHED_CLUSTER; e.g. Intel
    /// E-core modules of 4 cores). Must divide `cores_per_socket`. Default:
    /// none (each core its own L2; the CLS level degenerates). Refused under
    /// the 4.4 model, which has no cluster level.
    pub clusters_per_socket: Option<u64>,
    /// The `isolcpus=` boot parameter (4.4 semantics: the CPUs leave the sched
    /// domains and the default affinity), a CPU list such as `"2-3"` (one CPU
    /// may be a number); default none.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Isolcpus>"))]
    pub isolcpus: Option<Value>,
    /// `CONFIG_NO_HZ_IDLE` (default true): an idle CPU stops its tick;
    /// false = a periodic tick on every CPU.
    pub nohz: Option<bool>,
    #[serde(default)]
    /// `CONFIG_HZ`: 100, 250 (default), 300 or 1000; read by `validate.rs`
    /// so a wrong type can be answered with the choices.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Hz>"))]
    pub hz: Option<Value>,
    /// Time a context switch costs the incoming task, e.g. `"2us"` (default 0).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub context_switch: Option<Value>,
    /// Offset of the tick grid: ticks fall at `tick_offset + k × TICK_NSEC`
    /// (default 0). The phase between the tick and periodic wake-ups decides
    /// how long a wake-up that must wait for a tick waits.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub tick_offset: Option<Value>,
    /// Machine noise: the latency between a wake-up that reschedules a CPU
    /// and that CPU switching (timer and IPI delivery, idle exit, VM exits).
    /// A duration or a distribution; default 0. Reported apart from the
    /// scheduler's share of each delay.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Dist>"))]
    pub wakeup_latency: Option<Value>,
    /// The measured machine model (`[machine.noise]`): wake-up latency onto
    /// an idle and onto a busy CPU, kernel time per activation, and the
    /// host's background threads. Apart from the scheduler model.
    #[serde(default)]
    pub noise: Option<NoiseFile>,
}

/// `[machine.noise]`: each key optional; none given adds no noise.
#[derive(Clone, Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NoiseFile {
    /// Latency of a wake-up onto an idle CPU (idle exit, IPI), a duration
    /// or a distribution (e.g. `empirical(0%: 8us, 50%: 14us, 100%: 90us)`).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Dist>"))]
    pub wakeup_idle: Option<Value>,
    /// Latency of a wake-up that preempts a running task (timer interrupt
    /// and switch, no idle exit).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Dist>"))]
    pub wakeup_busy: Option<Value>,
    /// Kernel CPU time charged to a task per activation (the switch-in
    /// that ends a wake-up wait): syscall exit and entry, timer, switch.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Dist>"))]
    pub kernel_per_activation: Option<Value>,
    /// Host background threads, one per entry, each pinned to one CPU;
    /// added after the scenario's own tasks.
    #[serde(default)]
    pub background: Vec<BackgroundFile>,
}

/// One `[[machine.noise.background]]` entry: a foreign thread that sleeps
/// `every`, then runs `run`, forever, on `cpu`.
#[derive(Clone, Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BackgroundFile {
    /// Its name, unique against every task name.
    pub name: String,
    /// The CPU it runs on (required).
    pub cpu: Option<u64>,
    /// The gap between activations (it sleeps this long).
    #[cfg_attr(feature = "schema", schemars(with = "crate::schema::Dist"))]
    pub every: Value,
    /// Each activation's CPU time.
    #[cfg_attr(feature = "schema", schemars(with = "crate::schema::Dist"))]
    pub run: Value,
    /// Its nice value (default 0).
    pub nice: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct KernelFile {
    /// The modelled kernel version, a string: `"4.4"`, `"6.6"`, `"6.12"` or
    /// `"6.18"` (the default); a number is refused (6.10 would read as 6.1).
    /// Read by `validate.rs` so a wrong value can be answered with the
    /// versions this build models.
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub version: Option<Value>,
    /// Whose CFS bandwidth-control rules to run, a string: the model's own
    /// by default (a 6.x model: `"6.6"` or its own version); with the 4.4
    /// fair class also `"4.18"`, `"5.4"` or `"5.14"`.
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub cfs_bandwidth: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CfsFile {
    /// Effective values, as written to `/proc/sys/kernel/…`.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub sched_latency_ns: Option<Value>,
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub sched_min_granularity_ns: Option<Value>,
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub sched_wakeup_granularity_ns: Option<Value>,
    /// `none`, `log` (default) or `linear` (or 0, 1, 2 as the sysctl takes).
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Scaling>"))]
    pub sched_tunable_scaling: Option<Value>,
    /// EEVDF (6.6+): debugfs `base_slice_ns`, the effective slice.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub base_slice_ns: Option<Value>,
    /// Unscaled (`normalized_sysctl_*`) values, multiplied by the scaling factor.
    #[serde(default)]
    pub base: CfsBaseFile,
    /// How `calc_cfs_shares` sees a group's load: `pelt` (4.4, default) or `instantaneous`.
    pub group_load: Option<String>,
    /// `kernel.sched_cfs_bandwidth_slice_us` (default 5000): the runtime a
    /// CPU draws from a limited group's pool at a time.
    pub sched_cfs_bandwidth_slice_us: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GroupFile {
    /// `cpu.shares` (default 1024); the kernel clamps it to [2, 262144].
    pub shares: Option<i64>,
    /// cgroup v1 `cpu.cfs_quota_us` (-1: unlimited, the default).
    pub cfs_quota_us: Option<i64>,
    /// cgroup v1 `cpu.cfs_period_us` (default 100000).
    pub cfs_period_us: Option<i64>,
    /// cgroup v1 `cpu.cfs_burst_us` (5.14 and later rules).
    pub cfs_burst_us: Option<i64>,
    /// cgroup v2 `cpu.max`: `"QUOTA PERIOD"`, `"max PERIOD"`, `"QUOTA"` or `"max"` (µs).
    #[serde(rename = "cpu.max")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::CpuMax>"))]
    pub cpu_max: Option<Value>,
    /// cgroup v2 `cpu.max.burst` (µs; 5.14 and later rules).
    #[serde(rename = "cpu.max.burst")]
    pub cpu_max_burst: Option<i64>,
    /// cgroup v2 `io.bfq.weight` (BFQ's group weight, 1–1000, default 100;
    /// 6.18 bfq-cgroup.c `bfq_blkg_files`).
    #[serde(rename = "io.bfq.weight")]
    pub io_bfq_weight: Option<i64>,
    /// cgroup v1 `blkio.bfq.weight` (the same weight; set one of the two).
    #[serde(rename = "blkio.bfq.weight")]
    pub blkio_bfq_weight: Option<i64>,
}

/// A block device: the disk model and its elevator.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DeviceFile {
    /// `ssd` or `hdd` (the legacy models), `flash` (response curve) or `cloud`.
    pub kind: Option<String>,
    /// The elevators of `[kernel] version`: under 4.4 `noop`, `deadline` or
    /// `cfq` (default `cfq`, 4.4's Kconfig default); under 6.x (blk-mq)
    /// `none`, `mq-deadline`, `kyber` or `bfq` (default `mq-deadline` with
    /// one hardware queue, `none` with more: `elevator_set_default`).
    pub elevator: Option<String>,
    /// NCQ tags: requests the device holds at once.
    pub queue_depth: Option<u64>,
    pub capacity: Option<String>,
    /// `queue/max_sectors_kb` (default 1280, 4.4's BLK_DEF_MAX_SECTORS).
    pub max_sectors_kb: Option<u64>,
    /// `queue/rotational` (default: true for `hdd`, false for `ssd`).
    pub rotational: Option<bool>,
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub read_latency: Option<Value>,
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub write_latency: Option<Value>,
    pub read_bandwidth: Option<String>,
    pub write_bandwidth: Option<String>,
    pub rpm: Option<u64>,
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub seek_min: Option<Value>,
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub seek_max: Option<Value>,
    pub bandwidth: Option<String>,
    /// A named device (`sata-ssd`, `nvme-pm9a3`, `hdd-7200`, `ebs-gp2-100g`,
    /// `ebs-gp3`, `ebs-io2`): sets `kind` and its figures; other keys override.
    pub preset: Option<String>,
    /// `flash`, `cloud`: 4 KiB random read IOPS the curve approaches.
    pub read_iops: Option<i64>,
    /// `flash`, `cloud`: 4 KiB random write IOPS.
    pub write_iops: Option<i64>,
    /// `flash`, `cloud`: internal channels/dies serving commands at once.
    pub parallelism: Option<i64>,
    /// `hdd`: native command queueing with shortest-positioning-time-first
    /// reordering (geometry-based rotation); default false (the legacy model).
    pub ncq: Option<bool>,
    /// `cloud`: baseline (gp2) or provisioned (gp3, io2) IOPS; the credit refill rate.
    pub iops_limit: Option<i64>,
    /// `cloud`: IOPS while burst credits last (default `iops_limit`: no burst).
    pub burst_iops: Option<i64>,
    /// `cloud`: burst credits (I/Os) at the start and at most (gp2: 5400000).
    pub burst_credits: Option<i64>,
    /// `cloud`: throughput cap such as "125MiB/s".
    pub throughput_limit: Option<String>,
    /// `cloud`: network latency added to every request.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub network_latency: Option<Value>,
    /// `4.4`, or `fixed` (with commit 3932a86b4b9d, the default).
    pub cfq_behaviour: Option<String>,
    /// CFQ's sysfs tunables, applied when the elevator is `cfq`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, crate::schema::Tunable>"))]
    pub cfq: BTreeMap<String, Value>,
    /// deadline's sysfs tunables, applied when the elevator is `deadline`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, crate::schema::Tunable>"))]
    pub deadline: BTreeMap<String, Value>,
    /// kyber's sysfs tunables (`read_lat_nsec`, `write_lat_nsec`, ns),
    /// applied when the elevator is `kyber`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, crate::schema::Tunable>"))]
    pub kyber: BTreeMap<String, Value>,
    /// BFQ's sysfs tunables (6.18 names), applied when the elevator is `bfq`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, crate::schema::Tunable>"))]
    pub bfq: BTreeMap<String, Value>,
    /// blk-mq hardware queues (default 1), for `none` and `mq-deadline`.
    pub nr_hw_queues: Option<u64>,
    /// blk-mq `queue/nr_requests` (default: 2 × min(queue_depth, 128) with a
    /// scheduler, queue_depth with `none`).
    pub nr_requests: Option<u64>,
    /// mq-deadline's sysfs tunables, applied when the elevator is `mq-deadline`.
    #[serde(default, rename = "mq-deadline")]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, crate::schema::Tunable>"))]
    pub mq_deadline: BTreeMap<String, Value>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RtFile {
    /// `kernel.sched_rt_runtime_us` (default 950000; -1: no limit).
    pub sched_rt_runtime_us: Option<i64>,
    /// `kernel.sched_rt_period_us` (default 1000000).
    pub sched_rt_period_us: Option<i64>,
    /// `kernel.sched_rr_timeslice_ms` (default 100; 0 or less restores it).
    pub sched_rr_timeslice_ms: Option<i64>,
    /// `CONFIG_RT_GROUP_SCHED` (6.12+ only; default false, as distributions
    /// build): the root RT group is throttled beside the fair server.
    pub rt_group_sched: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FairServerFile {
    /// The server's runtime per period (default 50ms; 0 disables it).
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub runtime: Option<Value>,
    /// Its period and deadline (default 1s; 100us to 4.194304s).
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub period: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AutogroupFile {
    /// `kernel.sched_autogroup_enabled` (default true).
    pub enabled: Option<bool>,
    /// `/proc/<pid>/autogroup` nice value per session (default 0).
    #[serde(default)]
    pub nice: BTreeMap<String, i64>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CfsBaseFile {
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub sched_latency_ns: Option<Value>,
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub sched_min_granularity_ns: Option<Value>,
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub sched_wakeup_granularity_ns: Option<Value>,
    /// EEVDF (6.6+): `normalized_sysctl_sched_base_slice`, scaled at boot.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub base_slice_ns: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    /// Stop after this many events even if simulated time remains.
    pub events_max: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportFile {
    /// The task whose delays the report explains (default: the first task).
    pub victim: Option<String>,
    /// Scheduling history shown before and after the victim's worst delay.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub history_window: Option<Value>,
    /// Simulated time at the start left out of every statistic (the run
    /// itself is unchanged): a delay, response or I/O wait counts if it
    /// ended at or after it; counters and busy time count from it. Default 0.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub warmup: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    pub name: String,
    pub count: Option<u64>,
    /// CPU list (`"0-31"`) or one list per instance (`["0", "1"]`).
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::CpuList>"))]
    pub cpus: Option<Value>,
    /// Pin instance *i* to the *i*-th CPU of `cpus` (wrapping).
    #[serde(default)]
    pub pin_each: bool,
    pub nice: Option<i64>,
    /// `"normal"`, `"batch"`, `"idle"`, `"fifo"`, `"rr"`, `"deadline"` or
    /// `"stop"` (a CPU's stopper thread such as migration/N: one CPU in
    /// `cpus`, one per CPU, above every other class).
    pub policy: Option<String>,
    /// `sched_priority` of a `"fifo"` or `"rr"` task, 1 to 99 (`chrt -f 50`).
    pub rt_priority: Option<i64>,
    /// A `"deadline"` task's `sched_runtime`.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub dl_runtime: Option<Value>,
    /// A `"deadline"` task's relative `sched_deadline`.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub dl_deadline: Option<Value>,
    /// A `"deadline"` task's `sched_period` (default: its deadline).
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub dl_period: Option<Value>,
    /// I/O priority (`ionice`, `ioprio_set`): `"rt/N"`, `"be/N"` (N 0 to 7) or
    /// `"idle"`; default from nice and policy (`task_nice_ioclass`).
    pub ionice: Option<String>,
    /// The cgroup the task is placed in, by path (default `/`, the root).
    pub group: Option<String>,
    /// The session (`setsid`) the task belongs to; with autogroup, a task in
    /// the root cgroup runs in its session's autogroup.
    pub session: Option<String>,
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub start: Option<Value>,
    /// EEVDF 6.12+: the task's own slice (`sched_setattr` `sched_runtime`), 0.1 to 100 ms.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub slice: Option<Value>,
    pub iterations: Option<u64>,
    /// The elastic CPU limiter (`[limiters.NAME]`) whose grants every `run`
    /// step of this task must hold; `""` (or absent) = none, so a variant
    /// can lift the limit: `"tasks.backup.limiter" = ""`.
    pub limiter: Option<String>,
    #[cfg_attr(feature = "schema", schemars(with = "Vec<crate::schema::Step>"))]
    pub program: Vec<Value>,
    /// Request hops: when a `serve` burst of an item ends, the item (same
    /// request, same arrival) is queued at this task declaration, which must
    /// serve too. With `count` > 1 it goes to the instance with the fewest
    /// items queued or in service, ties broken round-robin. A task without
    /// `forward` is the sink: the request completes at the end of its burst.
    pub forward: Option<String>,
    /// CPU work of each item arriving here by `forward` (a duration or
    /// distribution), sampled when the item is queued; without it a
    /// forwarded item keeps its work. Items from a source keep the source's
    /// `work` (the first hop's work).
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Dist>"))]
    pub hop_work: Option<Value>,
}

/// An elastic CPU limiter (CockroachDB's elastic CPU controller and token
/// bucket; see `workload/limiter.rs`). Shares are fractions of one CPU
/// (0 to 1) multiplied by the machine's CPUs for the bucket's rate.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LimiterFile {
    /// Task declarations whose scheduling delays (wake-up and preemption)
    /// the controller reads; at least one.
    pub watch: Vec<String>,
    /// The percentile compared with `target`, in (0, 100); default 99.
    pub percentile: Option<f64>,
    /// Scheduling-delay target; default `"1ms"`.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub target: Option<Value>,
    /// The delays read are those of the last `window` (rounded up to whole
    /// `adjust_every` periods); default `"2.5s"`, at least `adjust_every`.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub window: Option<Value>,
    /// The controller's period; default `"100ms"` (CockroachDB's
    /// `scheduler_latency.sample_period`); at least 1 ms.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub adjust_every: Option<Value>,
    /// Share added per period when under target; default 0.0001.
    pub step_up: Option<f64>,
    /// Share removed per period when over target; default 0.0002.
    pub step_down: Option<f64>,
    /// Lowest and highest share, 0 to 1; defaults 0.05 and 0.75.
    pub floor: Option<f64>,
    pub ceiling: Option<f64>,
    /// The share before the first adjustment; default `floor`.
    pub initial: Option<f64>,
    /// CPU time per grant; default `"100ms"`, at most 10 s.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub grant: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SourceFile {
    pub name: String,
    /// The task (declaration name) the items go to; one source per instance.
    pub target: String,
    /// Poisson arrivals at this mean rate per second (per target instance).
    pub rate_per_s: Option<f64>,
    /// Or: the time between arrivals, a duration or distribution.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Dist>"))]
    pub interval: Option<Value>,
    /// Items per arrival (default 1).
    pub burst: Option<u64>,
    /// CPU work per item, a duration or distribution.
    #[cfg_attr(feature = "schema", schemars(with = "crate::schema::Dist"))]
    pub work: Value,
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub start: Option<Value>,
}

/// A Seastar-style userspace I/O scheduler in front of one device (seed 004;
/// Seastar 97cc0de6e): classes with shares served by a fair queue, and a
/// limit on what is in flight at the device.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IoQueueFile {
    /// The device (`[devices.NAME]`) the queue submits to.
    pub device: String,
    /// `"capacity"` (default: Little's law from the four io_properties),
    /// `"max-io-requests"` (a fixed count, `max_io_requests`; the
    /// io_properties keys are then unread) or `"none"` (no limit: each
    /// submission passes at once, as without the layer, which only measures).
    pub policy: Option<String>,
    /// Seastar's `--max-io-requests`: requests in flight, 1 to 65536.
    /// Required with `"max-io-requests"`; with `"capacity"` an extra cap.
    pub max_io_requests: Option<i64>,
    /// iotune's `read_reqs_per_sec` (with `"capacity"`), 1 to 10^9.
    pub read_iops: Option<i64>,
    /// iotune's `write_reqs_per_sec`, 1 to 10^9.
    pub write_iops: Option<i64>,
    /// iotune's `read_bytes_per_sec`, e.g. `"512MiB/s"`.
    pub read_bandwidth: Option<String>,
    /// iotune's `write_bytes_per_sec`.
    pub write_bandwidth: Option<String>,
    /// Seastar's `--task-quota-ms` (default `"0.5ms"`), 10 µs to 100 ms.
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::schema::Duration>"))]
    pub task_quota: Option<Value>,
    /// The latency goal over the task quota (default 1.5), 0.1 to 100.
    pub latency_factor: Option<f64>,
    /// Priority classes by name: `[io_queues.disk.classes.query] shares = 100`.
    pub classes: BTreeMap<String, IoClassFile>,
}

/// A priority class of a userspace I/O queue.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IoClassFile {
    /// Its shares of the device, 1 to 1000000.
    pub shares: i64,
}
