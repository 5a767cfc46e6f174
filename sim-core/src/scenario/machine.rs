//! `[machine]` and `[kernel] version`: the CPU count and topology (clusters
//! only where the model has a cluster level), isolcpus, the tick (HZ,
//! offset, nohz) and wake-up noise, and the kernel model, each checked
//! against the others.

use super::error::KeyError;
use super::file::ScenarioFile;
use super::spec::{MachineSpec, limits};
use super::values::{dist_value, opt_duration};
use crate::cpuset::CpuSet;
use crate::sched::model::KernelModel;
use crate::sched::topology::{MachineShape, THREADS_PER_CORE_MAX, cpu_list};
use crate::sched::tunables::{HZ_CHOICES, tick_nsec};
use crate::time::format_duration;
use toml::Value;

/// `[machine]`: CPU count, topology, isolcpus and nohz, checked against each other.
pub(super) fn machine_spec(f: &ScenarioFile) -> Result<MachineSpec, KeyError> {
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
    let clusters_per_socket = clusters_value(m.clusters_per_socket, cores)?;
    let shape = MachineShape {
        sockets: sockets as u16,
        cores_per_socket: cores as u16,
        threads_per_core: threads as u16,
        numa_nodes: numa_nodes as u16,
        clusters_per_socket,
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
    let noise = super::noise::noise_spec(f, cpus)?;
    Ok(MachineSpec { shape, isolcpus, nohz_idle: m.nohz.unwrap_or(true), tick_offset_ns, wakeup_latency, noise })
}

/// `machine.clusters_per_socket`: a divisor of the socket's `cores` (x86
/// CLS: a cluster holds whole cores, as many in each).
fn clusters_value(v: Option<u64>, cores: u64) -> Result<Option<u16>, KeyError> {
    match v {
        Some(k) if k == 0 || k > cores || !cores.is_multiple_of(k) => {
            let socket = MachineShape::flat(cores as u16);
            Err(KeyError::new("machine.clusters_per_socket", socket.clusters_refusal(k)))
        }
        k => Ok(k.map(|k| k as u16)),
    }
}

/// `machine.hz`: one of the kernel's `CONFIG_HZ` choices (default 250).
pub(super) fn hz_value(v: Option<&Value>) -> Result<u32, KeyError> {
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
pub(super) fn kernel_model(v: Option<&Value>) -> Result<KernelModel, KeyError> {
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

/// `machine.clusters_per_socket` needs a model whose sched domains have a
/// cluster (CLS) level.
pub(super) fn check_clusters(machine: &MachineSpec, kernel: KernelModel) -> Result<(), KeyError> {
    if machine.shape.clusters_per_socket.is_none() || kernel.has_cluster_level() {
        return Ok(());
    }
    let with: Vec<String> =
        KernelModel::ALL.into_iter().filter(|m| m.has_cluster_level()).map(|m| format!("\"{}\"", m.version())).collect();
    Err(KeyError::new(
        "machine.clusters_per_socket",
        format!(
            "the {} model has no cluster (CLS) sched-domain level: its x86 levels are SMT, MC, DIE and NUMA \
             (CLS came in 5.16, CONFIG_SCHED_CLUSTER). Clusters are modelled under kernel.version {}; \
             or leave clusters_per_socket out",
            kernel.describe(),
            with.join(", ")
        ),
    ))
}

/// `machine.tick_offset` lies below one tick at the scenario's HZ.
pub(super) fn check_tick_offset(machine: &MachineSpec, hz: u32) -> Result<(), KeyError> {
    let tick = tick_nsec(hz);
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
    Ok(())
}
