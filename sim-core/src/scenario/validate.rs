//! Stage two of parsing: checks a deserialized `ScenarioFile` and turns it into
//! the typed `ScenarioSpec` the engine runs. Every error names a key path and
//! what is allowed there.

use super::error::{KeyError, did_you_mean};
use super::file::{ScenarioFile, TaskFile};
use super::groups::{self, Groups};
use crate::block::request::SECTOR_BYTES;
use crate::block::{DeviceSpec, Op, ReqFlags};
use crate::cpuset::CpuSet;
use crate::ids::DeviceId;
use crate::ids::TaskId;
use crate::sched::model::KernelModel;
use crate::sched::topology::{MachineShape, THREADS_PER_CORE_MAX, cpu_list};
use crate::sched::tunables::{
    CUSTOM_SLICE_NS, CfsTunables, EevdfFeatures, EevdfTunables, HZ_CHOICES, SYSCTL_GRANULARITY_NS,
    SYSCTL_WAKEUP_GRANULARITY_NS, SchedFeatures, TunableScaling, TunableValue,
};
use crate::time::format_duration;
use crate::workload::dist::parse_size;
use crate::workload::dist::{SAMPLE_MAX_NS, parse_duration};
use crate::workload::{Dist, IoStep, Pattern, Policy, Program, Step, WakeTarget};
use toml::Value;

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
}

impl MachineSpec {
    /// One line for reports: "2 sockets x 8 cores x 2 threads = 32 CPUs, 2 NUMA nodes, isolcpus 2-3, nohz idle".
    pub fn describe(&self) -> String {
        let s = &self.shape;
        let plural = |n: u16, one: &str| if n == 1 { format!("{n} {one}") } else { format!("{n} {one}s") };
        let mut out = format!(
            "{} x {} x {} = {}, {}",
            plural(s.sockets, "socket"),
            plural(s.cores_per_socket, "core"),
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

/// `[machine]`: CPU count, topology, isolcpus and nohz, checked against each other.
fn machine_spec(f: &ScenarioFile) -> Result<MachineSpec, KeyError> {
    let m = &f.machine;
    let max = limits::CPUS_MAX;
    if let Some(cpus) = m.cpus
        && (cpus == 0 || cpus > max)
    {
        return Err(KeyError::new("machine.cpus", format!("{cpus} is not allowed: 1 to {max}")));
    }
    let size = |v: Option<u64>, name: &str, default: u64, most: u64| -> Result<u64, KeyError> {
        let n = v.unwrap_or(default);
        if n == 0 || n > most {
            return Err(KeyError::new(format!("machine.{name}"), format!("{n} is not allowed: 1 to {most}")));
        }
        Ok(n)
    };
    let sockets = size(m.sockets, "sockets", 1, max)?;
    let threads = size(m.threads_per_core, "threads_per_core", 1, u64::from(THREADS_PER_CORE_MAX))?;
    let numa_nodes = size(m.numa_nodes, "numa_nodes", 1, max)?;
    let cores = match (m.cores_per_socket, m.cpus) {
        (Some(c), _) => size(Some(c), "cores_per_socket", 1, max)?,
        (None, Some(cpus)) => {
            let per_core = sockets * threads;
            if cpus % per_core != 0 {
                return Err(KeyError::new(
                    "machine.cpus",
                    format!(
                        "cpus = {cpus} does not split evenly over sockets x threads_per_core = {sockets} x \
                         {threads}; give cores_per_socket, or cpus a multiple of {per_core}"
                    ),
                ));
            }
            cpus / per_core
        }
        (None, None) => {
            return Err(KeyError::new(
                "machine.cpus",
                "required: give cpus (1 to 4096), or the topology with cores_per_socket (and sockets, threads_per_core)",
            ));
        }
    };
    let product = sockets * cores * threads;
    if let Some(cpus) = m.cpus
        && cpus != product
    {
        return Err(KeyError::new(
            "machine.cpus",
            format!(
                "cpus = {cpus} but sockets x cores_per_socket x threads_per_core = {sockets} x {cores} x {threads} \
                 = {product}; they must agree (or leave one out)"
            ),
        ));
    }
    if product > max {
        return Err(KeyError::new(
            "machine.cores_per_socket",
            format!("{sockets} sockets x {cores} cores x {threads} threads = {product} CPUs; the limit is {max}"),
        ));
    }
    if numa_nodes > sockets || sockets % numa_nodes != 0 {
        return Err(KeyError::new(
            "machine.numa_nodes",
            format!(
                "{numa_nodes} does not divide sockets = {sockets}: a NUMA node holds whole sockets, the same number \
                 in each (allowed: a divisor of {sockets})"
            ),
        ));
    }
    let shape = MachineShape {
        sockets: sockets as u16,
        cores_per_socket: cores as u16,
        threads_per_core: threads as u16,
        numa_nodes: numa_nodes as u16,
    };
    debug_assert!(shape.check(max as u16).is_ok());
    let cpus = shape.cpus();
    let key = "machine.isolcpus";
    let isolcpus = match &m.isolcpus {
        None => CpuSet::empty(cpus),
        Some(Value::String(s)) if s.trim().is_empty() => CpuSet::empty(cpus),
        Some(Value::String(s)) => CpuSet::parse(s, cpus).map_err(|e| KeyError::new(key, e))?,
        Some(Value::Integer(n)) => CpuSet::parse(&n.to_string(), cpus).map_err(|e| KeyError::new(key, e))?,
        Some(other) => {
            return Err(KeyError::new(key, format!("expected a CPU list such as \"2-3\", found {}", other.type_str())));
        }
    };
    if isolcpus.len() == usize::from(cpus) {
        return Err(KeyError::new(
            key,
            format!(
                "`{}` isolates every CPU (0-{}); at least one must stay for the scheduler to balance on",
                cpu_list(&isolcpus),
                cpus - 1
            ),
        ));
    }
    let tick_offset_ns = opt_duration(&m.tick_offset, "machine.tick_offset", 0)?;
    let wakeup_latency = match &m.wakeup_latency {
        None => None,
        Some(v) => {
            let d = dist_value(v, "machine.wakeup_latency")?;
            if d.mean_ns() > WAKEUP_LATENCY_MAX_NS as f64 {
                return Err(KeyError::new(
                    "machine.wakeup_latency",
                    format!(
                        "its mean must be at most {} (a wake-up latency, not a delay; samples are cut there too)",
                        format_duration(WAKEUP_LATENCY_MAX_NS)
                    ),
                ));
            }
            (!d.is_always_zero()).then_some(d)
        }
    };
    Ok(MachineSpec { shape, isolcpus, nohz_idle: m.nohz.unwrap_or(true), tick_offset_ns, wakeup_latency })
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
}

impl TaskSpec {
    /// The `comm` of instance `i`: the name, or `name/i` for a group.
    pub fn comm(&self, i: u32) -> String {
        if self.count == 1 { self.name.clone() } else { format!("{}/{i}", self.name) }
    }
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

/// Reads a duration value: an integer (ns) or a string with a unit.
pub(crate) fn duration_value(v: &Value, key: &str) -> Result<u64, KeyError> {
    match v {
        Value::Integer(n) if *n >= 0 && (*n as u64) <= SAMPLE_MAX_NS => Ok(*n as u64),
        Value::Integer(n) if *n < 0 => Err(KeyError::new(
            key,
            format!("{n}: durations cannot be negative; give 0 to {SAMPLE_MAX_NS} ns or a duration such as \"50us\""),
        )),
        Value::Integer(n) => {
            Err(KeyError::new(key, format!("{n} is out of range: a duration is 0 to {} ns", SAMPLE_MAX_NS)))
        }
        Value::String(s) => parse_duration(s).map_err(|m| KeyError::new(key, m)),
        other => Err(KeyError::new(
            key,
            format!("expected a duration such as \"50us\" or an integer of ns, found {}", other.type_str()),
        )),
    }
}

/// A value as the user wrote it, for messages: a string in quotes, a number
/// as written.
pub(crate) fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// A duration within `lo..=hi`: the message names the value written and
/// the range allowed, then `why` (", the kernel's sysctl range").
pub(crate) fn duration_in(v: &Value, key: &str, (lo, hi): (u64, u64), why: &str) -> Result<u64, KeyError> {
    let ns = duration_value(v, key)?;
    if (lo..=hi).contains(&ns) {
        return Ok(ns);
    }
    let written = shown(v);
    let same = match v {
        Value::String(s) => s.trim() == format_duration(ns),
        _ => true,
    };
    let value = if same { written } else { format!("{written} ({})", format_duration(ns)) };
    Err(KeyError::new(key, format!("{value} is not allowed: {} to {}{why}", format_duration(lo), format_duration(hi))))
}

pub(super) fn dist_value(v: &Value, key: &str) -> Result<Dist, KeyError> {
    match v {
        Value::String(s) => Dist::parse(s).map_err(|m| KeyError::new(key, m)),
        Value::Integer(_) => duration_value(v, key).map(Dist::Const),
        other => Err(KeyError::new(
            key,
            format!("expected a duration or distribution such as \"exp(200us)\", found {}", other.type_str()),
        )),
    }
}

/// `machine.hz`: one of the kernel's `CONFIG_HZ` choices (default 250).
fn hz_value(v: Option<&Value>) -> Result<u32, KeyError> {
    let key = "machine.hz";
    let choices = "100, 250, 300 or 1000";
    match v {
        None => Ok(250),
        Some(Value::Integer(n)) => HZ_CHOICES
            .iter()
            .copied()
            .find(|&h| i64::from(h) == *n)
            .ok_or_else(|| KeyError::new(key, format!("{n} is not a kernel HZ choice: {choices}"))),
        Some(other) => {
            // Quoted and escaped, so the message stays on one line.
            let found = match other {
                Value::String(s) => format!("string {s:?}"),
                Value::Float(x) => format!("float {x}"),
                Value::Boolean(b) => format!("boolean {b}"),
                v => v.type_str().to_string(),
            };
            Err(KeyError::new(key, format!("expected a tick rate, an integer: {choices} (found {found})")))
        }
    }
}

/// The largest `machine.wakeup_latency` accepted: 10 ms.
pub const WAKEUP_LATENCY_MAX_NS: u64 = 10_000_000;

/// `[kernel] version`: a version this build models.
fn kernel_model(v: Option<&Value>) -> Result<KernelModel, KeyError> {
    let key = "kernel.version";
    let allowed = KernelModel::allowed();
    match v {
        None => Ok(KernelModel::default()),
        // A float loses how the version was written (6.10 == 6.1): refused,
        // as the schema refuses it. `--set kernel.version=6.12` keeps the
        // text (`Override::from_text`).
        Some(Value::Float(x)) => Err(KeyError::new(
            key,
            format!("{x} is a number; write it as a string: \"{x}\" (this build models {allowed})"),
        )),
        Some(Value::String(s)) => KernelModel::parse(s)
            .ok_or_else(|| KeyError::new(key, format!("unknown kernel version {s:?}; this build models {allowed}"))),
        Some(other) => Err(KeyError::new(
            key,
            format!(
                "expected a version string such as \"4.4\" (found {}); this build models {allowed}",
                other.type_str()
            ),
        )),
    }
}

fn opt_duration(v: &Option<Value>, key: &str, default: u64) -> Result<u64, KeyError> {
    v.as_ref().map_or(Ok(default), |v| duration_value(v, key))
}

fn tunable(
    effective: &Option<Value>,
    base: &Option<Value>,
    name: &str,
    range: (u64, u64),
) -> Result<TunableValue, KeyError> {
    let check = |v: &Value, key: String| -> Result<u64, KeyError> {
        let ns = duration_value(v, &key)?;
        if ns < range.0 || ns > range.1 {
            return Err(KeyError::new(
                key,
                format!(
                    "{} is outside the kernel's sysctl range {}..={}",
                    format_duration(ns),
                    format_duration(range.0),
                    format_duration(range.1)
                ),
            ));
        }
        Ok(ns)
    };
    match (effective, base) {
        (Some(_), Some(_)) => Err(KeyError::new(
            format!("cfs.{name}"),
            format!("given both as an effective value and in [cfs.base]; give one (cfs.{name} or cfs.base.{name})"),
        )),
        (Some(v), None) => Ok(TunableValue::Effective(check(v, format!("cfs.{name}"))?)),
        (None, Some(v)) => Ok(TunableValue::Base(check(v, format!("cfs.base.{name}"))?)),
        (None, None) => Ok(TunableValue::Default),
    }
}

fn scaling(v: &Option<Value>) -> Result<TunableScaling, KeyError> {
    let key = "cfs.sched_tunable_scaling";
    let bad = || {
        let written = v.as_ref().map(shown).unwrap_or_default();
        KeyError::new(key, format!("{written} is not allowed: \"none\", \"log\", \"linear\" (or 0, 1, 2)"))
    };
    match v {
        None => Ok(TunableScaling::Log),
        Some(Value::String(s)) => match s.as_str() {
            "none" => Ok(TunableScaling::None),
            "log" => Ok(TunableScaling::Log),
            "linear" => Ok(TunableScaling::Linear),
            _ => Err(bad()),
        },
        Some(Value::Integer(0)) => Ok(TunableScaling::None),
        Some(Value::Integer(1)) => Ok(TunableScaling::Log),
        Some(Value::Integer(2)) => Ok(TunableScaling::Linear),
        Some(_) => Err(bad()),
    }
}

/// `[cfs]` and `[features]` for the chosen model: the 4.4 tunables and
/// feature bits, or the EEVDF ones. A knob the model's kernel lacks is an
/// error naming the model and what it has.
fn fair_settings(
    f: &ScenarioFile,
    kernel: KernelModel,
    cpus: u16,
) -> Result<(CfsTunables, SchedFeatures, EevdfTunables, EevdfFeatures), KeyError> {
    let c = &f.cfs;
    let scaling = scaling(&c.sched_tunable_scaling)?;
    let d = TunableValue::Default;
    let normalized = kernel.normalized_base_slice_ns();
    if !kernel.is_eevdf() {
        if let Some(key) = [("cfs.base_slice_ns", &c.base_slice_ns), ("cfs.base.base_slice_ns", &c.base.base_slice_ns)]
            .into_iter()
            .find_map(|(k, v)| v.is_some().then_some(k))
        {
            return Err(KeyError::new(
                key,
                "does not exist in the Linux 4.4 model (CFS); base_slice_ns came with EEVDF in 6.6 (kernel.version \
                 = \"6.6\" or later). The 4.4 model has sched_latency_ns, sched_min_granularity_ns, \
                 sched_wakeup_granularity_ns, sched_tunable_scaling",
            ));
        }
        let tunables = CfsTunables::resolve(
            cpus,
            scaling,
            tunable(&c.sched_latency_ns, &c.base.sched_latency_ns, "sched_latency_ns", SYSCTL_GRANULARITY_NS)?,
            tunable(
                &c.sched_min_granularity_ns,
                &c.base.sched_min_granularity_ns,
                "sched_min_granularity_ns",
                SYSCTL_GRANULARITY_NS,
            )?,
            tunable(
                &c.sched_wakeup_granularity_ns,
                &c.base.sched_wakeup_granularity_ns,
                "sched_wakeup_granularity_ns",
                SYSCTL_WAKEUP_GRANULARITY_NS,
            )?,
        );
        let mut features = SchedFeatures::default();
        for (name, &on) in &f.features {
            let slot = features.get_mut(name).ok_or_else(|| {
                let other = EevdfFeatures::names(KernelModel::LATEST).contains(&name.as_str());
                let why = if other {
                    "an EEVDF feature (6.6+), not in the Linux 4.4 model"
                } else {
                    "unknown or unmodelled scheduler feature"
                };
                KeyError::new(
                    format!("features.{name}"),
                    format!("{why}; the 4.4 model has: {}", SchedFeatures::NAMES.join(", ")),
                )
            })?;
            *slot = on;
        }
        let eevdf = EevdfTunables::resolve(cpus, scaling, normalized, d);
        return Ok((tunables, features, eevdf, EevdfFeatures::defaults(kernel)));
    }
    let model = kernel.describe();
    for (name, eff, base) in [
        ("sched_latency_ns", &c.sched_latency_ns, &c.base.sched_latency_ns),
        ("sched_min_granularity_ns", &c.sched_min_granularity_ns, &c.base.sched_min_granularity_ns),
        ("sched_wakeup_granularity_ns", &c.sched_wakeup_granularity_ns, &c.base.sched_wakeup_granularity_ns),
    ] {
        let key = if eff.is_some() {
            Some(format!("cfs.{name}"))
        } else {
            base.is_some().then(|| format!("cfs.base.{name}"))
        };
        if let Some(key) = key {
            return Err(KeyError::new(
                key,
                format!(
                    "does not exist in the {model} model: EEVDF removed it in 6.6. This model has base_slice_ns \
                     (debugfs /sys/kernel/debug/sched/base_slice_ns) and sched_tunable_scaling; or run the \
                     4.4 model: add [kernel] version = \"4.4\" to the file (or --set kernel.version=4.4)"
                ),
            ));
        }
    }
    // debugfs `base_slice_ns` is a plain u32 (debug.c:sched_init_debug).
    let slice = tunable(&c.base_slice_ns, &c.base.base_slice_ns, "base_slice_ns", (0, u64::from(u32::MAX)))?;
    let eevdf = EevdfTunables::resolve(cpus, scaling, normalized, slice);
    let mut eevdf_features = EevdfFeatures::defaults(kernel);
    for (name, &on) in &f.features {
        let slot = eevdf_features.get_mut(kernel, name).ok_or_else(|| {
            let why = if SchedFeatures::NAMES.contains(&name.as_str()) {
                format!("a Linux 4.4 (CFS) feature, gone in the {model} model")
            } else if EevdfFeatures::names(KernelModel::LATEST).contains(&name.as_str()) {
                format!("not in the {model} model (a later kernel's feature)")
            } else {
                "unknown or unmodelled scheduler feature".to_string()
            };
            KeyError::new(
                format!("features.{name}"),
                format!("{why}; the {model} model has: {}", EevdfFeatures::names(kernel).join(", ")),
            )
        })?;
        *slot = on;
    }
    let tunables = CfsTunables::resolve(cpus, scaling, d, d, d);
    Ok((tunables, SchedFeatures::default(), eevdf, eevdf_features))
}

/// Validates a deserialized file into a `ScenarioSpec`.
pub fn validate(f: &ScenarioFile) -> Result<ScenarioSpec, KeyError> {
    if f.schema != 1 {
        return Err(KeyError::new("schema", format!("unsupported schema {}; this version reads schema 1", f.schema)));
    }
    let duration_ns = duration_in(&f.duration, "duration", (1, limits::DURATION_MAX_NS), " (positive, at most a day)")?;
    let machine = machine_spec(f)?;
    let cpus = machine.shape.cpus();
    let hz = hz_value(f.machine.hz.as_ref())?;
    let kernel = kernel_model(f.kernel.version.as_ref())?;
    let tick = crate::sched::tunables::tick_nsec(hz);
    if machine.tick_offset_ns >= tick {
        return Err(KeyError::new(
            "machine.tick_offset",
            format!(
                "{} is not allowed: below one tick ({} at HZ={hz})",
                format_duration(machine.tick_offset_ns),
                format_duration(tick)
            ),
        ));
    }
    let context_switch_ns = match &f.machine.context_switch {
        None => 0,
        Some(v) => duration_in(v, "machine.context_switch", (0, 1_000_000), "")?,
    };

    let (tunables, features, eevdf, eevdf_features) = fair_settings(f, kernel, cpus)?;

    let events_max = f.limits.events_max.unwrap_or(limits::EVENTS_DEFAULT);
    if events_max == 0 || events_max > limits::EVENTS_MAX {
        return Err(KeyError::new(
            "limits.events_max",
            format!("{events_max} is not allowed: 1 to {}", limits::EVENTS_MAX),
        ));
    }

    if f.tasks.is_empty() {
        return Err(KeyError::new("tasks", "a scenario needs at least one task"));
    }
    // First pass: names, counts and ids, so `wake` steps can refer to any task.
    let mut total: u64 = 0;
    let mut heads = Vec::with_capacity(f.tasks.len());
    for (i, t) in f.tasks.iter().enumerate() {
        check_name(&t.name, &format!("tasks[{i}].name"))?;
        if let Some(j) = f.tasks[..i].iter().position(|o| o.name == t.name) {
            return Err(KeyError::new(
                format!("tasks[{i}].name"),
                format!("duplicate task name `{}` (tasks[{j}] has it too); names must be unique", t.name),
            ));
        }
        // Names are checked and unique from here on: keys name the task as
        // `--set` addresses it.
        let key = task_key(&t.name);
        let count = t.count.unwrap_or(1);
        if count == 0 || count > limits::TASKS_MAX {
            return Err(KeyError::new(
                format!("{key}.count"),
                format!("{count} is not allowed: 1 to {}", limits::TASKS_MAX),
            ));
        }
        heads.push((TaskId(total as u32), count as u32));
        total += count;
        if total > limits::TASKS_MAX {
            return Err(KeyError::new(key, format!("more than {} tasks in all", limits::TASKS_MAX)));
        }
    }
    let default_affinity = machine.default_affinity();
    let mut tasks = Vec::with_capacity(f.tasks.len());
    for (i, t) in f.tasks.iter().enumerate() {
        tasks.push(task_spec(f, t, heads[i], cpus, &default_affinity, kernel)?);
    }
    let groups = groups::resolve(f, &mut tasks, cpus)?;
    let bandwidth_rules = super::bandwidth::rules(f, kernel)?;
    let bandwidth_slice_us = super::bandwidth::slice_us(f)?;
    super::bandwidth::check(f, &groups.groups, bandwidth_rules)?;
    super::hops::resolve(f, &mut tasks)?;
    let devices = super::devices::resolve(f, hz, kernel)?;
    let device_mq = super::devices::resolve_mq(f, &devices)?;
    super::devices::check_ionice(&tasks, &devices)?;
    check_io_regions(&tasks, &devices)?;

    let mut sources = Vec::with_capacity(f.sources.len());
    let mut instances: u64 = 0;
    for (i, s) in f.sources.iter().enumerate() {
        check_name(&s.name, &format!("sources[{i}].name"))?;
        if let Some(j) = f.sources[..i].iter().position(|o| o.name == s.name) {
            return Err(KeyError::new(
                format!("sources[{i}].name"),
                format!("duplicate source name `{}` (sources[{j}] has it too); names must be unique", s.name),
            ));
        }
        // Unique from here on: keys name the source as `--set` addresses it.
        let key = format!("sources.{}", s.name);
        let target = f.tasks.iter().position(|t| t.name == s.target).ok_or_else(|| {
            let names: Vec<&str> = f.tasks.iter().map(|t| t.name.as_str()).collect();
            KeyError::new(format!("{key}.target"), format!("no task named `{}`; tasks: {}", s.target, names.join(", ")))
        })?;
        if !tasks[target].program.steps.contains(&Step::Serve) {
            return Err(KeyError::new(
                format!("{key}.target"),
                format!("task `{}` has no `serve` step, so nothing would handle the items", s.target),
            ));
        }
        instances += u64::from(tasks[target].count);
        if instances > limits::SOURCES_MAX {
            return Err(KeyError::new(key, format!("more than {} source instances in all", limits::SOURCES_MAX)));
        }
        let interval = match (s.rate_per_s, &s.interval) {
            (Some(_), Some(_)) => {
                return Err(KeyError::new(format!("{key}.rate_per_s"), "give rate_per_s or interval, not both"));
            }
            (Some(r), None) => {
                if !(r.is_finite() && r > 0.0 && r <= limits::RATE_MAX_PER_S) {
                    return Err(KeyError::new(
                        format!("{key}.rate_per_s"),
                        format!("must be a positive rate of at most {:e} per second", limits::RATE_MAX_PER_S),
                    ));
                }
                Dist::Exp { mean: libm::round(1e9 / r) as u64 }
            }
            (None, Some(v)) => dist_value(v, &format!("{key}.interval"))?,
            (None, None) => {
                return Err(KeyError::new(key, "needs rate_per_s (Poisson) or interval (a duration or distribution)"));
            }
        };
        if interval.mean_ns() < 1.0 {
            return Err(KeyError::new(
                format!("{key}.interval"),
                format!("a mean interval of {} ns is not allowed: at least 1ns", interval.mean_ns()),
            ));
        }
        let burst = s.burst.unwrap_or(1);
        if burst == 0 || burst > limits::BURST_MAX {
            return Err(KeyError::new(
                format!("{key}.burst"),
                format!("{burst} is not allowed: 1 to {}", limits::BURST_MAX),
            ));
        }
        sources.push(SourceSpec {
            name: s.name.clone(),
            target,
            interval,
            burst: burst as u32,
            work: dist_value(&s.work, &format!("{key}.work"))?,
            start_ns: opt_duration(&s.start, &format!("{key}.start"), 0)?,
            route: super::hops::route(&tasks, target),
        });
    }

    let victim = match &f.report.victim {
        None => 0,
        Some(v) => f
            .tasks
            .iter()
            .position(|t| &t.name == v)
            .ok_or_else(|| KeyError::new("report.victim", format!("no task named `{v}`")))?,
    };
    let history_window_ns = opt_duration(&f.report.history_window, "report.history_window", 0)?;
    let warmup_ns = opt_duration(&f.report.warmup, "report.warmup", 0)?;
    if warmup_ns >= duration_ns {
        return Err(KeyError::new(
            "report.warmup",
            format!(
                "{} is not allowed: the warm-up must be shorter than the duration ({}), from 0 to {}",
                crate::time::format_duration(warmup_ns),
                crate::time::format_duration(duration_ns),
                crate::time::format_duration(duration_ns - 1)
            ),
        ));
    }
    let limiters = limiter_specs(f, &mut tasks)?;
    let io_queues = super::io_queues::resolve(f)?;

    Ok(ScenarioSpec {
        name: f.name.clone().unwrap_or_default(),
        description: f.description.clone().unwrap_or_default(),
        seed: f.seed,
        duration_ns,
        cpus,
        machine,
        hz,
        kernel,
        bandwidth_rules,
        bandwidth_slice_us,
        context_switch_ns,
        eevdf,
        eevdf_features,
        tunables,
        features,
        tasks,
        sources,
        groups,
        devices,
        device_mq,
        events_max,
        victim,
        history_window_ns,
        warmup_ns,
        limiters,
        io_queues,
    })
}

// ---------------------------------------------------------------- elastic CPU limiters

/// Most `[limiters.NAME]` in one scenario.
const LIMITERS_MAX: usize = 64;

/// `[limiters.NAME]` and each task's `limiter = "NAME"` (issue 20): the
/// controller's and the bucket's settings, checked against each other.
fn limiter_specs(
    f: &ScenarioFile,
    tasks: &mut [TaskSpec],
) -> Result<Vec<crate::workload::limiter::LimiterSpec>, KeyError> {
    use crate::workload::limiter::{
        ADJUST_EVERY_MIN_NS, GRANT_MAX_NS, GRANT_MIN_NS, LimiterId, LimiterSpec, PPM, WINDOW_SLOTS_MAX, defaults,
    };
    if f.limiters.len() > LIMITERS_MAX {
        return Err(KeyError::new("limiters", format!("at most {LIMITERS_MAX} limiters")));
    }
    let task_names: Vec<&str> = f.tasks.iter().map(|t| t.name.as_str()).collect();
    let share = |v: Option<f64>, key: String, default: u32| -> Result<u32, KeyError> {
        let Some(x) = v else { return Ok(default) };
        // Checked as written: a share that rounds to 0 ppm is below the
        // resolution, not 0.
        let ppm = if x.is_finite() { libm::round(x * PPM as f64) } else { 0.0 };
        if !(x.is_finite() && (0.0..=1.0).contains(&x)) || (x > 0.0 && ppm < 1.0) {
            return Err(KeyError::new(
                key,
                format!("{x} is not allowed: a share of one CPU, 0 to 1, in steps of 0.000001 (one millionth)"),
            ));
        }
        Ok(ppm as u32)
    };
    let step = |v: Option<f64>, key: String, default: u32| -> Result<u32, KeyError> {
        let Some(x) = v else { return Ok(default) };
        let ppm = if x.is_finite() { libm::round(x * PPM as f64) } else { 0.0 };
        if !(x.is_finite() && x > 0.0 && x <= 1.0) || ppm < 1.0 {
            return Err(KeyError::new(
                key,
                format!("{x} is not allowed: a step is a share of one CPU above 0 and at most 1 (at least 0.000001)"),
            ));
        }
        Ok(ppm as u32)
    };
    let mut out = Vec::with_capacity(f.limiters.len());
    for (name, l) in &f.limiters {
        let key = format!("limiters.{name}");
        check_name(name, &key)?;
        if l.watch.is_empty() {
            return Err(KeyError::new(format!("{key}.watch"), "name at least one task whose delays the limiter reads"));
        }
        let mut watch = Vec::with_capacity(l.watch.len());
        for (j, w) in l.watch.iter().enumerate() {
            let i = f.tasks.iter().position(|t| &t.name == w).ok_or_else(|| {
                KeyError::new(
                    format!("{key}.watch[{j}]"),
                    format!(
                        "no task named `{w}`{}; tasks: {}",
                        super::error::did_you_mean(w, &task_names),
                        task_names.join(", ")
                    ),
                )
            })?;
            if !watch.contains(&i) {
                watch.push(i);
            }
        }
        let percentile = l.percentile.unwrap_or(defaults::PERCENTILE);
        if !(percentile.is_finite() && percentile > 0.0 && percentile < 100.0) {
            return Err(KeyError::new(
                format!("{key}.percentile"),
                format!("{percentile} is not allowed: above 0 and below 100 (99 for the p99)"),
            ));
        }
        let target_ns = opt_duration(&l.target, &format!("{key}.target"), defaults::TARGET_NS)?;
        let adjust_every_ns = opt_duration(&l.adjust_every, &format!("{key}.adjust_every"), defaults::ADJUST_EVERY_NS)?;
        if adjust_every_ns < ADJUST_EVERY_MIN_NS {
            return Err(KeyError::new(
                format!("{key}.adjust_every"),
                format!(
                    "{} is too short: at least {}",
                    format_duration(adjust_every_ns),
                    format_duration(ADJUST_EVERY_MIN_NS)
                ),
            ));
        }
        let window_ns = opt_duration(&l.window, &format!("{key}.window"), defaults::WINDOW_NS.max(adjust_every_ns))?;
        if window_ns < adjust_every_ns {
            return Err(KeyError::new(
                format!("{key}.window"),
                format!(
                    "{} is shorter than adjust_every ({}): the window must cover at least one period",
                    format_duration(window_ns),
                    format_duration(adjust_every_ns)
                ),
            ));
        }
        if window_ns.div_ceil(adjust_every_ns) > WINDOW_SLOTS_MAX {
            return Err(KeyError::new(
                format!("{key}.window"),
                format!(
                    "{} spans more than {WINDOW_SLOTS_MAX} periods of adjust_every ({}); lengthen adjust_every or \
                     shorten the window",
                    format_duration(window_ns),
                    format_duration(adjust_every_ns)
                ),
            ));
        }
        let step_up_ppm = step(l.step_up, format!("{key}.step_up"), defaults::STEP_UP_PPM)?;
        let step_down_ppm = step(l.step_down, format!("{key}.step_down"), defaults::STEP_DOWN_PPM)?;
        let floor_ppm = share(l.floor, format!("{key}.floor"), defaults::FLOOR_PPM)?;
        let ceiling_ppm = share(l.ceiling, format!("{key}.ceiling"), defaults::CEILING_PPM)?;
        if floor_ppm == 0 {
            // A zero limit refills nothing: the limited tasks would wait for
            // good once a window without samples keeps the limit there.
            return Err(KeyError::new(
                format!("{key}.floor"),
                format!(
                    "{} is not allowed: a floor of 0 would stop the limited tasks for good; above 0 (at least \
                     0.000001) up to 1",
                    l.floor.unwrap_or(0.0)
                ),
            ));
        }
        if floor_ppm > ceiling_ppm {
            return Err(KeyError::new(
                format!("{key}.floor"),
                format!(
                    "floor {} is above ceiling {}: floor must be at most ceiling (both 0 to 1)",
                    floor_ppm as f64 / PPM as f64,
                    ceiling_ppm as f64 / PPM as f64
                ),
            ));
        }
        let initial_ppm = share(l.initial, format!("{key}.initial"), floor_ppm)?;
        if !(floor_ppm..=ceiling_ppm).contains(&initial_ppm) {
            return Err(KeyError::new(
                format!("{key}.initial"),
                format!(
                    "{} is not allowed: between floor {} and ceiling {}",
                    initial_ppm as f64 / PPM as f64,
                    floor_ppm as f64 / PPM as f64,
                    ceiling_ppm as f64 / PPM as f64
                ),
            ));
        }
        let grant_ns = match &l.grant {
            None => defaults::GRANT_NS,
            Some(v) => duration_in(
                v,
                &format!("{key}.grant"),
                (GRANT_MIN_NS, GRANT_MAX_NS),
                " of CPU time per grant (each grant is an event)",
            )?,
        };
        out.push(LimiterSpec {
            name: name.clone(),
            watch,
            percentile,
            target_ns,
            window_ns,
            adjust_every_ns,
            step_up_ppm,
            step_down_ppm,
            floor_ppm,
            ceiling_ppm,
            initial_ppm,
            grant_ns,
        });
    }
    let limiter_names: Vec<&str> = f.limiters.keys().map(String::as_str).collect();
    for (i, t) in f.tasks.iter().enumerate() {
        let Some(name) = t.limiter.as_deref().filter(|n| !n.is_empty()) else { continue };
        let id = limiter_names.iter().position(|n| *n == name).ok_or_else(|| {
            let known = if limiter_names.is_empty() {
                "the scenario declares none ([limiters.NAME])".to_string()
            } else {
                format!("limiters: {}", limiter_names.join(", "))
            };
            KeyError::new(
                format!("{}.limiter", task_key(&t.name)),
                format!(
                    "no limiter named `{name}`{}; {known} (or \"\" for none)",
                    super::error::did_you_mean(name, &limiter_names)
                ),
            )
        })?;
        if tasks[i].program.steps.contains(&Step::Serve) {
            // Grants pace `run` steps; a `serve` burst would escape them.
            return Err(KeyError::new(
                format!("{}.limiter", task_key(&t.name)),
                "a limited task's CPU work must be `run` steps; `serve` work is not paced by grants",
            ));
        }
        tasks[i].limiter = Some(LimiterId(id as u16));
    }
    Ok(out)
}

/// Every I/O step's region fits its device, and a submission fits its region.
fn check_io_regions(tasks: &[TaskSpec], devices: &[DeviceSpec]) -> Result<(), KeyError> {
    for t in tasks {
        for (j, s) in t.program.steps.iter().enumerate() {
            let Step::Io(io) = s else { continue };
            let key = format!("{}.program[{j}]", task_key(&t.name));
            let cap = devices[io.device.index()].capacity_sectors;
            let end = io.offset_sectors.unwrap_or(0).saturating_add(io.span_sectors);
            if io.span_sectors == 0 || end > cap {
                return Err(KeyError::new(
                    format!("{key}.span"),
                    format!("the region (offset + span) must be non-empty and within the device's {} sectors", cap),
                ));
            }
            if (io.size.mean_ns() as u64).div_ceil(SECTOR_BYTES) > io.span_sectors {
                return Err(KeyError::new(format!("{key}.span"), "smaller than one submission"));
            }
        }
    }
    Ok(())
}

/// The key path of a task declaration, as `--set` addresses it: `tasks.NAME`
/// (names are letters, digits, `-`, `_` and `:`, so the path splits back).
pub(super) fn task_key(name: &str) -> String {
    format!("tasks.{name}")
}

pub(super) fn check_name(name: &str, key: &str) -> Result<(), KeyError> {
    let ok =
        !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_:".contains(c));
    if ok {
        Ok(())
    } else {
        Err(KeyError::new(key, format!("`{name}`: names are 1-64 characters of letters, digits, `-`, `_` or `:`")))
    }
}

fn task_spec(
    f: &ScenarioFile,
    t: &TaskFile,
    head: (TaskId, u32),
    cpus: u16,
    default_affinity: &CpuSet,
    kernel: KernelModel,
) -> Result<TaskSpec, KeyError> {
    let key = task_key(&t.name);
    let slice_ns = match &t.slice {
        None => None,
        Some(v) => {
            let k = format!("{key}.slice");
            if kernel < KernelModel::Linux612 {
                return Err(KeyError::new(
                    k,
                    format!(
                        "the {} model has no per-task slice: custom slices (sched_setattr sched_runtime for fair \
                         tasks) came in 6.12 (kernel.version = \"6.12\" or \"6.18\")",
                        kernel.describe()
                    ),
                ));
            }
            let ns = duration_value(v, &k)?;
            let (lo, hi) = CUSTOM_SLICE_NS;
            if !(lo..=hi).contains(&ns) {
                return Err(KeyError::new(
                    k,
                    format!(
                        "{} is outside the kernel's range for sched_runtime, {} to {}",
                        format_duration(ns),
                        format_duration(lo),
                        format_duration(hi)
                    ),
                ));
            }
            Some(ns)
        }
    };
    let (first, count) = head;
    let affinity = match &t.cpus {
        // 4.4 core.c:sched_init_smp: init runs on non_isolated_cpus; tasks inherit it
        None => vec![default_affinity.clone(); count as usize],
        // One CPU may be written as a number (`--set tasks.NAME.cpus=1`).
        Some(v @ (Value::String(_) | Value::Integer(_))) => {
            let s = match v {
                Value::Integer(n) => &n.to_string(),
                _ => v.as_str().unwrap_or_default(),
            };
            let set = CpuSet::parse(s, cpus).map_err(|m| KeyError::new(format!("{key}.cpus"), m))?;
            if t.pin_each {
                let list: Vec<_> = set.iter().collect();
                (0..count as usize)
                    .map(|j| {
                        let mut one = CpuSet::empty(cpus);
                        one.insert(list[j % list.len()]);
                        one
                    })
                    .collect()
            } else {
                vec![set; count as usize]
            }
        }
        Some(Value::Array(items)) => {
            if t.pin_each {
                return Err(KeyError::new(format!("{key}.pin_each"), "only applies when cpus is one list"));
            }
            if items.len() != count as usize {
                return Err(KeyError::new(
                    format!("{key}.cpus"),
                    format!("has {} entries but count is {count}: give one CPU list per instance", items.len()),
                ));
            }
            items
                .iter()
                .enumerate()
                .map(|(j, v)| {
                    let k = format!("{key}.cpus[{j}]");
                    let s = v.as_str().ok_or_else(|| KeyError::new(&k, "expected a CPU list such as \"0-3\""))?;
                    CpuSet::parse(s, cpus).map_err(|m| KeyError::new(k, m))
                })
                .collect::<Result<_, _>>()?
        }
        Some(other) => {
            return Err(KeyError::new(
                format!("{key}.cpus"),
                format!("expected a CPU list such as \"0-3\" or an array of them, found {}", other.type_str()),
            ));
        }
    };
    if t.pin_each && t.cpus.is_none() {
        return Err(KeyError::new(format!("{key}.pin_each"), "needs `cpus`, the list to pin instances to"));
    }
    let nice = t.nice.unwrap_or(0);
    if !(-20..=19).contains(&nice) {
        return Err(KeyError::new(format!("{key}.nice"), format!("{nice} is not a nice value: -20 to 19")));
    }
    let policy = match t.policy.as_deref() {
        None | Some("normal") | Some("SCHED_NORMAL") | Some("other") => Policy::Normal,
        Some("batch") | Some("SCHED_BATCH") => Policy::Batch,
        Some("idle") | Some("SCHED_IDLE") => Policy::Idle,
        Some(p) => {
            return Err(KeyError::new(format!("{key}.policy"), format!("`{p}`: allowed: normal, batch, idle")));
        }
    };
    if t.program.is_empty() {
        return Err(KeyError::new(format!("{key}.program"), "needs at least one step"));
    }
    if t.program.len() > limits::STEPS_MAX {
        return Err(KeyError::new(format!("{key}.program"), format!("at most {} steps", limits::STEPS_MAX)));
    }
    let steps = t
        .program
        .iter()
        .enumerate()
        .map(|(j, v)| step(f, v, &format!("{key}.program[{j}]")))
        .collect::<Result<Vec<_>, _>>()?;
    if !steps.iter().any(Step::takes_time) {
        return Err(KeyError::new(
            format!("{key}.program"),
            "needs a step that takes time or blocks (run, sleep, sleep_until, wait or serve)",
        ));
    }
    if t.iterations == Some(0) {
        return Err(KeyError::new(
            format!("{key}.iterations"),
            "0 is not allowed: at least 1 (leave it out to loop forever)",
        ));
    }
    Ok(TaskSpec {
        name: t.name.clone(),
        count,
        first,
        affinity,
        nice: nice as i8,
        policy,
        group: 0,
        cgroup: 0,
        session: t.session.clone(),
        start_ns: opt_duration(&t.start, &format!("{key}.start"), 0)?,
        slice_ns,
        program: Program { steps, iterations: t.iterations },
        forward: None,
        hop_work: None,
        limiter: None,
        ionice: super::devices::ionice(t.ionice.as_deref(), &format!("{key}.ionice"))?,
    })
}

/// The shortest interval between kernel entries of a `run` step: 1 µs.
const ENTER_KERNEL_EVERY_MIN_NS: u64 = 1_000;

const STEP_KINDS: &str = "run, sleep, sleep_until, wait, wake, serve, yield, read, write, fdatasync, wait_io";
const STEP_TABLE_KINDS: &[&str] =
    &["run", "sleep", "sleep_until", "wait", "wake", "serve", "yield", "read", "write", "fdatasync", "wait_io"];
/// Every step name, bare or as a table key, for suggestions.
const STEP_WORDS_ALL: &[&str] = STEP_TABLE_KINDS;
const IO_OPTIONS: &[&str] =
    &["device", "sync", "meta", "prio", "wait", "depth", "pattern", "offset", "span", "io_class"];

fn step(f: &ScenarioFile, v: &Value, key: &str) -> Result<Step, KeyError> {
    let word = |w: &str| -> Result<Step, KeyError> {
        match w {
            "wait" => Ok(Step::Wait),
            "serve" => Ok(Step::Serve),
            "yield" => Ok(Step::Yield),
            "fdatasync" => Ok(Step::Fdatasync),
            _ => Err(KeyError::new(
                key,
                format!(
                    "`{w}` is not a step{}; bare words: wait, serve, yield, fdatasync; tables: {{ run = \"1ms\" }}, {{ sleep = \"exp(5ms)\" }}, {{ sleep_until = \"10ms\" }}, {{ wake = \"task\" }}, {{ read = \"4KiB\" }}, {{ write = \"2MiB\" }}, {{ wait_io = \"task\" }}",
                    did_you_mean(w, STEP_WORDS_ALL)
                ),
            )),
        }
    };
    let table = match v {
        Value::String(w) => return word(w),
        Value::Table(t) => t,
        other => {
            return Err(KeyError::new(key, format!("expected a step (a word or a table), found {}", other.type_str())));
        }
    };
    // `read`/`write` take options, one of which (`wait`) is also a step name.
    let io_kinds: Vec<&String> = table.keys().filter(|k| *k == "read" || *k == "write").collect();
    let kinds: Vec<&String> = if io_kinds.is_empty() {
        table.keys().filter(|k| STEP_TABLE_KINDS.contains(&k.as_str())).collect()
    } else {
        io_kinds
    };
    if kinds.is_empty()
        && let Some(unknown) = table.keys().find(|k| !IO_OPTIONS.contains(&k.as_str()) && k.as_str() != "offset")
    {
        return Err(KeyError::new(
            format!("{key}.{unknown}"),
            format!(
                "`{unknown}` is not a step{}; a step table has exactly one of: {STEP_KINDS}",
                did_you_mean(unknown, STEP_WORDS_ALL)
            ),
        ));
    }
    if kinds.len() != 1 {
        let found: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        let found = if found.is_empty() { "none".to_string() } else { found.join(", ") };
        return Err(KeyError::new(key, format!("a step table has exactly one of: {STEP_KINDS} (found: {found})")));
    }
    let kind = kinds[0].as_str();
    let val = &table[kind];
    let sub = format!("{key}.{kind}");
    let options: &[&str] = match kind {
        "sleep_until" => &["offset"],
        "run" => &["enter_kernel_every"],
        "read" | "write" => IO_OPTIONS,
        _ => &[],
    };
    if let Some(extra) = table.keys().find(|k| k.as_str() != kind && !options.contains(&k.as_str())) {
        let allowed = if options.is_empty() { "none".to_string() } else { options.join(", ") };
        return Err(KeyError::new(format!("{key}.{extra}"), format!("not an option of `{kind}`; allowed: {allowed}")));
    }
    Ok(match kind {
        "run" => {
            let enter_kernel_every_ns = match table.get("enter_kernel_every") {
                None => None,
                Some(e) => {
                    let k = format!("{key}.enter_kernel_every");
                    let range = (ENTER_KERNEL_EVERY_MIN_NS, SAMPLE_MAX_NS);
                    Some(duration_in(e, &k, range, " (each entry is an event)")?)
                }
            };
            Step::Run { work: dist_value(val, &sub)?, enter_kernel_every_ns }
        }
        "sleep" => Step::Sleep(dist_value(val, &sub)?),
        "sleep_until" => {
            let period_ns = duration_in(val, &sub, (1, SAMPLE_MAX_NS), " (the period)")?;
            let offset_ns = match table.get("offset") {
                Some(o) => duration_value(o, &format!("{key}.offset"))?,
                None => 0,
            };
            if offset_ns >= period_ns {
                return Err(KeyError::new(
                    format!("{key}.offset"),
                    format!(
                        "{} is not allowed: smaller than the period ({})",
                        format_duration(offset_ns),
                        format_duration(period_ns)
                    ),
                ));
            }
            Step::SleepUntil { period_ns, offset_ns }
        }
        "wake" | "wait_io" => {
            let target = val.as_str().ok_or_else(|| KeyError::new(&sub, "expected a task name or comm"))?;
            let t = wake_target(f, target).ok_or_else(|| {
                KeyError::new(&sub, format!("no task named `{target}` (give a task name, or a comm like `name/2`)"))
            })?;
            if kind == "wake" { Step::Wake(t) } else { Step::WaitIo(t) }
        }
        "read" | "write" => Step::Io(io_step(f, table, kind, key)?),
        "wait" | "serve" | "yield" | "fdatasync" => match val {
            Value::Boolean(true) => word(kind)?,
            _ => return Err(KeyError::new(sub, format!("write `{kind} = true`, or the bare word \"{kind}\""))),
        },
        other => return Err(KeyError::new(format!("{key}.{other}"), format!("unknown step; allowed: {STEP_KINDS}"))),
    })
}

/// `{ read = "4KiB", device = "sda", pattern = "random", span = "10GiB" }` and
/// `{ write = "2MiB", sync = true, wait = false, depth = 4 }`.
fn io_step(f: &ScenarioFile, table: &toml::Table, kind: &str, key: &str) -> Result<IoStep, KeyError> {
    let sub = |k: &str| format!("{key}.{k}");
    let size = match &table[kind] {
        Value::String(s) => Dist::parse_size(s).map_err(|m| KeyError::new(sub(kind), m))?,
        other => {
            return Err(KeyError::new(
                sub(kind),
                format!("expected a size such as \"4KiB\" or \"uniform(4KiB, 64KiB)\", found {}", other.type_str()),
            ));
        }
    };
    if size.is_always_zero() || size.mean_ns() > IO_SIZE_MAX as f64 {
        return Err(KeyError::new(sub(kind), format!("a submission is 1 byte to {} MiB", IO_SIZE_MAX >> 20)));
    }
    let flag = |k: &str| -> Result<Option<bool>, KeyError> {
        match table.get(k) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(_) => Err(KeyError::new(sub(k), "expected true or false")),
        }
    };
    // `io_class = "QUEUE.CLASS"`: through a userspace I/O queue, whose device it implies.
    let io_class = match table.get("io_class") {
        None => None,
        Some(Value::String(c)) => Some(super::io_queues::class_ref(f, c, &sub("io_class"))?),
        Some(_) => {
            return Err(KeyError::new(sub("io_class"), "expected \"QUEUE.CLASS\", a class of [io_queues.QUEUE]"));
        }
    };
    let implied = io_class.map(|(_, d)| d);
    let device = match table.get("device") {
        None if implied.is_some() => implied.unwrap_or_default(),
        None if f.devices.len() == 1 => 0,
        None if f.devices.is_empty() => {
            return Err(KeyError::new(key, "an I/O step needs a device; declare one under [devices.<name>]"));
        }
        None => return Err(KeyError::new(sub("device"), "required: the scenario has several devices")),
        Some(Value::String(d)) => f.devices.keys().position(|n| n == d).ok_or_else(|| {
            let names: Vec<&str> = f.devices.keys().map(String::as_str).collect();
            let declared = if names.is_empty() {
                format!("no devices are declared (add [devices.{d}])")
            } else {
                format!("declared: {}", names.join(", "))
            };
            KeyError::new(sub("device"), format!("no device named `{d}`; {declared}"))
        })?,
        Some(_) => return Err(KeyError::new(sub("device"), "expected a device name")),
    };
    if let Some((_, d)) = io_class
        && d != device
    {
        return Err(KeyError::new(sub("device"), "differs from the device of the step's `io_class` queue"));
    }
    let op = if kind == "read" { Op::Read } else { Op::Write };
    let wait = flag("wait")?.unwrap_or(true);
    let sync = flag("sync")?.unwrap_or(op == Op::Read || wait);
    if op == Op::Read && !sync {
        return Err(KeyError::new(sub("sync"), "reads are always synchronous (`rq_is_sync`)"));
    }
    let depth = match table.get("depth") {
        None => 0,
        Some(Value::Integer(n)) if (1..=4096).contains(n) && !wait => *n as u32,
        Some(Value::Integer(_)) if wait => return Err(KeyError::new(sub("depth"), "only applies with `wait = false`")),
        Some(v) => {
            return Err(KeyError::new(sub("depth"), format!("{} is not allowed: an integer from 1 to 4096", shown(v))));
        }
    };
    let pattern = match table.get("pattern") {
        None => Pattern::Sequential,
        Some(v) => match v.as_str() {
            Some("sequential" | "seq") => Pattern::Sequential,
            Some("random" | "rand") => Pattern::Random,
            _ => {
                return Err(KeyError::new(
                    sub("pattern"),
                    format!("{} is not allowed: \"sequential\", \"random\"", shown(v)),
                ));
            }
        },
    };
    let sectors = |k: &str| -> Result<Option<u64>, KeyError> {
        match table.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => {
                let b = parse_size(s).map_err(|m| KeyError::new(sub(k), m))?;
                Ok(Some(b / SECTOR_BYTES))
            }
            Some(_) => Err(KeyError::new(sub(k), "expected a size such as \"10GiB\"")),
        }
    };
    let span_sectors = sectors("span")?.unwrap_or((1u64 << 30) / SECTOR_BYTES);
    Ok(IoStep {
        device: DeviceId(device as u16),
        flags: ReqFlags { op, sync, meta: flag("meta")?.unwrap_or(false), prio: flag("prio")?.unwrap_or(false) },
        size,
        pattern,
        offset_sectors: sectors("offset")?,
        span_sectors,
        wait,
        depth,
        io_class: io_class.map(|(c, _)| c),
    })
}

/// Largest single submission.
pub const IO_SIZE_MAX: u64 = 64 << 20;

fn wake_target(f: &ScenarioFile, target: &str) -> Option<WakeTarget> {
    let mut first = 0u32;
    for t in &f.tasks {
        let count = t.count.unwrap_or(1) as u32;
        if t.name == target {
            return Some(if count == 1 {
                WakeTarget::Task(TaskId(first))
            } else {
                WakeTarget::Group { first: TaskId(first), count }
            });
        }
        if let Some(idx) = target.strip_prefix(&format!("{}/", t.name)).and_then(|s| s.parse::<u32>().ok())
            && idx < count
        {
            return Some(WakeTarget::Task(TaskId(first + idx)));
        }
        first += count;
    }
    None
}
