//! The validated scenario: `ScenarioSpec` and the specs it holds (machine,
//! tasks, sources, groups), typed, plus the size limits a scenario is checked
//! against. Plain data: `validate.rs` and its helpers build it, the engine
//! runs it.

use crate::block::DeviceSpec;
use crate::cpuset::CpuSet;
use crate::ids::TaskId;
use crate::sched::group::GroupLoad;
use crate::sched::topology::{MachineShape, cpu_list};
use crate::sched::tunables::{CfsTunables, EevdfFeatures, EevdfTunables, SchedFeatures};
use crate::workload::dist::SAMPLE_MAX_NS;
use crate::workload::{Dist, Policy, Program};

/// Size limits: a scenario beyond them is refused with an error, not run.
pub mod limits {
    pub const CPUS_MAX: u64 = 4096;
    pub const TASKS_MAX: u64 = 100_000;
    pub const STEPS_MAX: usize = 1_000;
    pub const SOURCES_MAX: u64 = 100_000;
    /// One simulated day.
    pub const DURATION_MAX_NS: u64 = super::SAMPLE_MAX_NS;
    pub const EVENTS_MAX: u64 = 100_000_000_000;
    pub const EVENTS_DEFAULT: u64 = 2_000_000_000;
    pub const BURST_MAX: u64 = 10_000;
    pub const RATE_MAX_PER_S: f64 = 1e8;
}

/// A validated scenario: everything the engine needs, typed.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioSpec {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub duration_ns: u64,
    pub cpus: u16,
    /// Topology, isolcpus and tick mode (`[machine]`); `machine.shape.cpus() == cpus`.
    pub machine: MachineSpec,
    pub hz: u32,
    /// The kernel whose scheduler is modelled (`[kernel] version`).
    pub kernel: crate::sched::model::KernelModel,
    /// Whose CFS bandwidth-control rules run (`[kernel] cfs_bandwidth`).
    pub bandwidth_rules: crate::sched::bandwidth::BandwidthRules,
    /// `sched_cfs_bandwidth_slice_us`.
    pub bandwidth_slice_us: u64,
    pub context_switch_ns: u64,
    /// The 4.4 tunables (CFS); for an EEVDF model they keep their defaults
    /// and nothing reads them.
    pub tunables: CfsTunables,
    /// The 4.4 feature bits.
    pub features: SchedFeatures,
    /// The EEVDF tunables (6.6+); for 4.4 the defaults, unread.
    pub eevdf: EevdfTunables,
    /// The EEVDF feature bits of the model's version.
    pub eevdf_features: EevdfFeatures,
    pub tasks: Vec<TaskSpec>,
    pub sources: Vec<SourceSpec>,
    /// Task groups (index 0 is the root), autogroup and the shares model.
    pub groups: Groups,
    /// The RT and deadline classes' settings.
    pub rt: RtSpec,
    /// Block devices, in name order (`DeviceId` order).
    pub devices: Vec<DeviceSpec>,
    /// Each device's blk-mq settings (read when its elevator is an mq one).
    pub device_mq: Vec<crate::block::BlkMqSettings>,
    pub events_max: u64,
    /// Index into `tasks` of the declaration the report explains.
    pub victim: usize,
    pub history_window_ns: u64,
    /// `[report] warmup`: statistics leave out the run's first this-many ns.
    pub warmup_ns: u64,
    /// Elastic CPU limiters (`[limiters.NAME]`), in name order (`LimiterId` order).
    pub limiters: Vec<crate::workload::limiter::LimiterSpec>,
    /// Userspace I/O schedulers (`[io_queues.NAME]`), in name order.
    pub io_queues: Vec<crate::userspace_io::IoQueueSpec>,
}

impl ScenarioSpec {
    /// The declaration a task instance belongs to, and which instance of it
    /// it is: `(index into tasks, instance)`.
    pub fn declaration_of(&self, id: TaskId) -> Option<(usize, u32)> {
        self.tasks
            .iter()
            .position(|t| id.0 >= t.first.0 && id.0 < t.first.0 + t.count)
            .map(|d| (d, id.0 - self.tasks[d].first.0))
    }
}

/// The `[machine]` keys beyond `cpus`: the topology the sched domains are
/// built from, the `isolcpus=` boot parameter and the tick mode.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineSpec {
    pub shape: MachineShape,
    /// `isolcpus=` (never every CPU).
    pub isolcpus: CpuSet,
    /// `CONFIG_NO_HZ_IDLE`: an idle CPU stops its tick.
    pub nohz_idle: bool,
    /// Ticks fall at `tick_offset_ns + k × TICK_NSEC` (below one tick).
    pub tick_offset_ns: u64,
    /// Machine noise between a rescheduling wake-up and the switch; `None`: none.
    pub wakeup_latency: Option<Dist>,
    /// `[machine.noise]`: `None` when the scenario has none (nothing drawn).
    pub noise: Option<NoiseSpec>,
}

/// The measured machine model (`[machine.noise]`), checked. Its background
/// entries are also expanded into `ScenarioSpec::tasks` (after the
/// scenario's own, `TaskSpec::machine_background`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NoiseSpec {
    /// A wake-up onto an idle CPU (idle exit); `None`: none.
    pub wakeup_idle: Option<Dist>,
    /// A wake-up that preempts a running task; `None`: none.
    pub wakeup_busy: Option<Dist>,
    /// Kernel time charged per activation; `None`: none.
    pub kernel_per_activation: Option<Dist>,
    /// Background threads: (name, cpu, every, run, nice).
    pub background: Vec<BackgroundSpec>,
}

/// One host background thread (`[[machine.noise.background]]`).
#[derive(Clone, Debug, PartialEq)]
pub struct BackgroundSpec {
    pub name: String,
    pub cpu: u16,
    pub every: Dist,
    pub run: Dist,
    pub nice: i8,
}

impl MachineSpec {
    /// One line for reports: "2 sockets x 8 cores x 2 threads = 32 CPUs, 2 NUMA nodes, isolcpus 2-3, nohz idle".
    pub fn describe(&self) -> String {
        let s = &self.shape;
        let plural = |n: u16, one: &str| if n == 1 { format!("{n} {one}") } else { format!("{n} {one}s") };
        // "8 cores in 2 clusters" when the scenario splits the cores.
        let cores = match s.clusters_per_socket {
            None => plural(s.cores_per_socket, "core"),
            Some(k) => format!("{} in {}", plural(s.cores_per_socket, "core"), plural(k, "cluster")),
        };
        let mut out = format!(
            "{} x {} x {} = {}, {}",
            plural(s.sockets, "socket"),
            cores,
            plural(s.threads_per_core, "thread"),
            plural(s.cpus(), "CPU"),
            plural(s.numa_nodes, "NUMA node"),
        );
        if !self.isolcpus.is_empty() {
            out.push_str(&format!(", isolcpus {}", cpu_list(&self.isolcpus)));
        }
        out.push_str(if self.nohz_idle { ", nohz idle" } else { ", periodic tick" });
        out
    }

    /// A task's affinity when it names no CPUs: every CPU but the isolated
    /// ones (4.4 core.c:sched_init_smp gives init `non_isolated_cpus`, and
    /// every task inherits it).
    pub fn default_affinity(&self) -> CpuSet {
        let n = self.shape.cpus();
        let mut set = CpuSet::empty(n);
        for c in 0..n {
            if !self.isolcpus.contains(crate::ids::CpuId(c)) {
                set.insert(crate::ids::CpuId(c));
            }
        }
        set
    }
}

/// One `[[tasks]]` declaration (`count` instances).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskSpec {
    pub name: String,
    pub count: u32,
    /// Id of instance 0; instances are consecutive.
    pub first: TaskId,
    /// Affinity of each instance.
    pub affinity: Vec<CpuSet>,
    pub nice: i8,
    pub policy: Policy,
    /// `sched_priority` of a FIFO or RR task (1 to 99); 0 for the others.
    pub rt_priority: u8,
    /// A SCHED_DEADLINE task's `sched_attr`.
    pub dl: Option<DlParams>,
    /// Index into `ScenarioSpec::groups.groups` of the group the task runs in.
    pub group: usize,
    /// The cgroup it was placed in (`group = …`, before autogroup applies).
    pub cgroup: usize,
    /// Its session (`setsid`), if declared.
    pub session: Option<String>,
    pub start_ns: u64,
    /// Its own EEVDF slice (6.12+ `sched_attr.sched_runtime`), if set.
    pub slice_ns: Option<u64>,
    pub program: Program,
    /// Request hops (`forward`): the declaration (index into `tasks`) a
    /// served item goes to next; `None` for a sink (`scenario/hops.rs`).
    pub forward: Option<usize>,
    /// Work of items arriving by `forward` (`hop_work`); `None`: they keep theirs.
    pub hop_work: Option<Dist>,
    /// The elastic CPU limiter its `run` steps draw grants from (`limiter = "NAME"`).
    pub limiter: Option<crate::workload::limiter::LimiterId>,
    /// `ionice` (`ioprio_set`); `None`: from nice and policy.
    pub ionice: Option<crate::block::Ioprio>,
    /// A host background thread from `[[machine.noise.background]]`: not the
    /// scenario's own, declared after all of them (indexes of declared tasks
    /// unchanged), never the victim, marked in reports.
    pub machine_background: bool,
}

impl TaskSpec {
    /// The `comm` of instance `i`: the name, or `name/i` for a group.
    pub fn comm(&self, i: u32) -> String {
        if self.count == 1 { self.name.clone() } else { format!("{}/{i}", self.name) }
    }
}

/// A SCHED_DEADLINE task's parameters (`sched_attr`: `sched_runtime`,
/// `sched_deadline`, `sched_period`), in ns, as `__checkparam_dl` accepted them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlParams {
    pub runtime_ns: u64,
    pub deadline_ns: u64,
    pub period_ns: u64,
}

/// The RT and deadline classes' settings (`[rt]`, `[fair_server]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtSpec {
    /// `sched_rt_runtime_us` in ns; `None`: -1 (`RUNTIME_INF`), no limit.
    pub runtime_ns: Option<u64>,
    /// `sched_rt_period_us` in ns.
    pub period_ns: u64,
    /// `sched_rr_timeslice` in ticks (`msecs_to_jiffies(sched_rr_timeslice_ms)`).
    pub rr_timeslice_ticks: u32,
    /// `CONFIG_RT_GROUP_SCHED` on a 6.12+ model: the root RT group throttles.
    pub group_sched: bool,
    /// The fair server's runtime and period (6.12+; `None` on 4.4 and 6.6).
    pub fair_server: Option<(u64, u64)>,
}

/// One `[[sources]]` declaration, replicated per target instance.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceSpec {
    pub name: String,
    /// Index into `tasks`.
    pub target: usize,
    pub interval: Dist,
    pub burst: u32,
    pub work: Dist,
    pub start_ns: u64,
    /// The declarations its requests cross: `target`, then each `forward`,
    /// ending at the sink (`scenario/hops.rs`); one entry when no hop.
    pub route: Vec<usize>,
}

/// A task group; index 0 in `ScenarioSpec::groups` is the root.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupSpec {
    pub path: String,
    /// Index of the parent group; `None` for the root.
    pub parent: Option<usize>,
    /// Effective `cpu.shares`, clamped as `sched_group_set_shares` does.
    pub shares: u64,
    /// The session, for an autogroup.
    pub session: Option<String>,
    /// CPUs the group's tasks and its descendants' tasks may run on.
    pub cpus: CpuSet,
    /// CPU quota (`cpu.cfs_quota_us` / `cpu.max`), when set.
    pub bandwidth: Option<crate::sched::bandwidth::BandwidthSpec>,
    /// BFQ's group weight (`io.bfq.weight` / `blkio.bfq.weight`), 1–1000.
    pub bfq_weight: u16,
}

/// The resolved group settings of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Groups {
    pub groups: Vec<GroupSpec>,
    pub autogroup: bool,
    pub group_load: GroupLoad,
}

impl Groups {
    /// Some group has a CPU quota (`cfs_bandwidth_used()`).
    pub fn any_quota(&self) -> bool {
        self.groups.iter().any(|g| g.bandwidth.is_some_and(|b| b.quota_ns.is_some()))
    }
}

impl Groups {
    /// BFQ's view of the groups: declared cgroups with their weights
    /// (autogroups are not blkcgs: BFQ sees their tasks in the root), and
    /// each of `task_groups` mapped to its blkcg.
    pub fn bfq_groups(&self, task_groups: &[usize]) -> (Vec<crate::block::BfqGroupIo>, Vec<usize>) {
        let blkcg = |g: usize| if self.groups.get(g).is_some_and(|s| s.session.is_none()) { g } else { 0 };
        let groups =
            self.groups.iter().map(|g| crate::block::BfqGroupIo { parent: g.parent, weight: g.bfq_weight }).collect();
        (groups, task_groups.iter().map(|&g| blkcg(g)).collect())
    }
}
