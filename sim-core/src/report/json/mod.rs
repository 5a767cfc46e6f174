//! The `--json` contract (schema 1), built from a `RunReport`.
//!
//! It lives in the core, not in each front end, so the CLI and the web page
//! emit byte-identical JSON for the same run. Only integers and strings are
//! written (no floats), which keeps the bytes identical across targets.
//! Fields may be added; existing ones are never renamed.

use super::run::{HistoryRow, RunReport};
use crate::metrics::latency::LatencySummary;
use serde::Serialize;
use std::collections::BTreeMap;

/// Version of the JSON layout.
pub const SCHEMA: u32 = 1;

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Report<'a> {
    schema: u32,
    /// `simulated`, or `measured` (`sim-cli measure`: the workload ran on
    /// the real kernel described in `measurement.host`).
    source: &'static str,
    scenario: &'a str,
    variant: Option<&'a str>,
    seed: u64,
    sim_time_ns: u64,
    events: u64,
    stop_reason: &'static str,
    settings: Settings,
    tasks: Vec<Task<'a>>,
    cpus: Vec<Cpu>,
    groups: Vec<Group<'a>>,
    victim: Victim<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    io: Option<Io<'a>>,
    /// Sources whose requests cross at least one hop (`forward`); absent
    /// when none does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(default))]
    requests: Vec<Request<'a>>,
    /// Elastic CPU limiters (`[limiters.NAME]`); absent without.
    #[serde(skip_serializing_if = "Option::is_none")]
    limiters: Option<Vec<Limiter<'a>>>,
    /// Userspace I/O queues (`[io_queues.NAME]`); absent without.
    #[serde(skip_serializing_if = "Option::is_none")]
    userspace_io: Option<Vec<UserspaceIoQueue<'a>>>,
    /// Only in a measured report: the host and how the delays were seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    measurement: Option<Measurement<'a>>,
}

/// The machine a measured run ran on (`sim-cli measure`).
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Host<'a> {
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
struct Views<'a> {
    name: &'a str,
    threads_wakeup: Latency,
    threads_preempt: Latency,
    perf_wakeup: Option<Latency>,
    perf_preempt: Option<Latency>,
    schedstat_run_delay_ns: u64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Measurement<'a> {
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

fn measurement_dto(m: &super::source::MeasuredInfo) -> Measurement<'_> {
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

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Io<'a> {
    devices: Vec<IoDevice<'a>>,
    processes: Vec<IoProcess<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct IoDevice<'a> {
    name: &'a str,
    kind: &'a str,
    elevator: &'a str,
    cfq_behaviour: Option<&'a str>,
    tunables: BTreeMap<&'a str, u64>,
    queue_depth: u32,
    rotational: bool,
    q2d: Latency,
    d2c: Latency,
    q2c: Latency,
    reads: IoCounts,
    writes: IoCounts,
    pending: u64,
    oldest_pending_ns: Option<u64>,
    worst_q2d: Option<IoWorst<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct IoCounts {
    queued: u64,
    queued_kib: u64,
    merged: u64,
    dispatched: u64,
    completed: u64,
    completed_kib: u64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct IoProcess<'a> {
    name: &'a str,
    pid: u32,
    device: &'a str,
    q2d: Latency,
    q2c: Latency,
    dispatch_wait_max_ns: u64,
    dispatch_wait_read_ns: u64,
    dispatch_wait_write_ns: u64,
    bios: u64,
    kib: u64,
    pending_q2d_ns: Option<u64>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct IoWorst<'a> {
    comm: &'a str,
    pid: u32,
    rwbs: &'a str,
    sector: u64,
    nr_sectors: u32,
    queued_ns: u64,
    dispatched_ns: u64,
    q2d_ns: u64,
    still_queued: bool,
    queue: &'a str,
    dispatched_meanwhile: u64,
    meanwhile: Vec<IoMeanwhile<'a>>,
    meanwhile_truncated: bool,
    log: Vec<IoLogLine<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct IoMeanwhile<'a> {
    comm: &'a str,
    requests: u64,
    kib: u64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct IoLogLine<'a> {
    at_ns: u64,
    seq: u64,
    pid: u32,
    comm: &'a str,
    action: &'a str,
    rwbs: &'a str,
    sector: u64,
    nr_sectors: u32,
}

fn io_dto(io: &super::io::IoReport) -> Io<'_> {
    let counts = |d: &super::io::DeviceIoReport, i: usize| IoCounts {
        queued: d.queued[i],
        queued_kib: d.queued_kib[i],
        merged: d.merged[i],
        dispatched: d.dispatched[i],
        completed: d.completed[i],
        completed_kib: d.completed_kib[i],
    };
    Io {
        devices: io
            .devices
            .iter()
            .map(|d| IoDevice {
                name: &d.name,
                kind: d.kind,
                elevator: d.elevator,
                cfq_behaviour: d.cfq_behaviour,
                tunables: d.tunables.iter().copied().collect(),
                queue_depth: d.queue_depth,
                rotational: d.rotational,
                q2d: (&d.q2d).into(),
                d2c: (&d.d2c).into(),
                q2c: (&d.q2c).into(),
                reads: counts(d, 0),
                writes: counts(d, 1),
                pending: d.pending,
                oldest_pending_ns: d.oldest_pending_ns,
                worst_q2d: d.worst.as_ref().map(|w| IoWorst {
                    comm: &w.comm,
                    pid: w.pid,
                    rwbs: &w.rwbs,
                    sector: w.sector,
                    nr_sectors: w.nr_sectors,
                    queued_ns: w.q_ns,
                    dispatched_ns: w.d_ns,
                    q2d_ns: w.q2d_ns,
                    still_queued: w.open,
                    queue: &w.queue,
                    dispatched_meanwhile: w.dispatched_meanwhile,
                    meanwhile: w
                        .meanwhile
                        .iter()
                        .map(|(c, r, k)| IoMeanwhile { comm: c, requests: *r, kib: *k })
                        .collect(),
                    meanwhile_truncated: w.meanwhile_truncated,
                    log: w
                        .log
                        .iter()
                        .map(|l| IoLogLine {
                            at_ns: l.at_ns,
                            seq: l.seq,
                            pid: l.pid,
                            comm: &l.comm,
                            action: l.action,
                            rwbs: &l.rwbs,
                            sector: l.sector,
                            nr_sectors: l.nr_sectors,
                        })
                        .collect(),
                }),
            })
            .collect(),
        processes: io
            .processes
            .iter()
            .map(|p| IoProcess {
                name: &p.comm,
                pid: p.pid,
                device: &p.device,
                q2d: (&p.q2d).into(),
                q2c: (&p.q2c).into(),
                dispatch_wait_max_ns: p.dispatch_wait_max_ns,
                dispatch_wait_read_ns: p.dispatch_wait_ns[0],
                dispatch_wait_write_ns: p.dispatch_wait_ns[1],
                bios: p.bios,
                kib: p.kib,
                pending_q2d_ns: p.pending_q2d_ns,
            })
            .collect(),
    }
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Group<'a> {
    path: &'a str,
    shares: u64,
    session: Option<&'a str>,
    tasks: u32,
    runtime_ns: u64,
    weight_at_wakeup: GroupWeight,
    load_avg: i64,
    /// For a CPU-limited group: its quota and `cpu.stat`.
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_stat: Option<CpuStat>,
}

/// `cpu.stat` as cgroup v1 (`throttled_time`, ns) and v2 (`*_usec`) show it.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct CpuStat {
    quota_us: u64,
    period_us: u64,
    burst_us: u64,
    nr_periods: u64,
    nr_throttled: u64,
    throttled_time: u64,
    throttled_usec: u64,
    nr_bursts: u64,
    burst_usec: u64,
    /// Not in cpu.stat: runtime drawn from the pool by CPUs (net of slack returned).
    runtime_granted_ns: u64,
    /// Not in cpu.stat: runtime CPUs held that expired or was dropped (4.4 to 5.3 rules).
    runtime_expired_ns: u64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct GroupWeight {
    samples: u64,
    avg: u64,
    min: u64,
    max: u64,
}

/// `[machine]` as validated: topology, isolated CPUs, NO_HZ idle.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Machine {
    sockets: u16,
    cores_per_socket: u16,
    threads_per_core: u16,
    numa_nodes: u16,
    /// Isolated CPUs as a `taskset` list, `""` for none.
    isolcpus: String,
    nohz: bool,
    /// The tick grid's offset (`machine.tick_offset`), when not 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    tick_offset_ns: Option<u64>,
    /// The modelled wake-up latency (`machine.wakeup_latency`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    wakeup_latency: Option<String>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Settings {
    cpus: u16,
    machine: Machine,
    hz: u32,
    /// The modelled kernel version (`[kernel] version`), e.g. `4.4`.
    kernel: &'static str,
    /// Its fair class: `cfs` (4.4) or `eevdf` (6.6+).
    fair_class: &'static str,
    tick_ns: u64,
    context_switch_ns: u64,
    duration_ns: u64,
    /// `[report] warmup`: the first this-many ns of simulated time are in no
    /// statistic (a wait or response counts if it ended at or after it;
    /// counters from it on; busy time for its part after it). Absent: 0.
    #[serde(skip_serializing_if = "is_zero")]
    #[cfg_attr(feature = "schema", schemars(default))]
    warmup_ns: u64,
    events_max: u64,
    /// CFS (4.4) only.
    #[serde(skip_serializing_if = "Option::is_none")]
    sched_latency_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sched_min_granularity_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sched_wakeup_granularity_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sched_nr_latency: Option<u64>,
    /// EEVDF (6.6+) only: `sysctl_sched_base_slice`, scaled.
    #[serde(skip_serializing_if = "Option::is_none")]
    base_slice_ns: Option<u64>,
    sched_tunable_scaling: &'static str,
    tunable_scaling_factor: u64,
    /// The model's scheduler features (`features.h` names).
    features: BTreeMap<&'static str, bool>,
    autogroup: bool,
    group_load: &'static str,
    /// With a CPU-limited group: whose bandwidth rules ran and the slice.
    #[serde(skip_serializing_if = "Option::is_none")]
    cfs_bandwidth: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sched_cfs_bandwidth_slice_us: Option<u64>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Latency {
    count: u64,
    min_ns: u64,
    avg_ns: u64,
    p50_ns: u64,
    p90_ns: u64,
    p99_ns: u64,
    p999_ns: u64,
    max_ns: u64,
    max_at_ns: u64,
    /// Waits still open at the end (in none of the figures above), and the
    /// longest of them so far: a true maximum is at least `open_max_ns`.
    open_count: u64,
    open_max_ns: u64,
}

impl From<&LatencySummary> for Latency {
    fn from(s: &LatencySummary) -> Latency {
        Latency {
            count: s.count,
            min_ns: s.min_ns,
            avg_ns: s.avg_ns,
            p50_ns: s.p50_ns,
            p90_ns: s.p90_ns,
            p99_ns: s.p99_ns,
            p999_ns: s.p999_ns,
            max_ns: s.max_ns,
            max_at_ns: s.max_at_ns,
            open_count: s.open_count,
            open_max_ns: s.open_max_ns,
        }
    }
}

/// One declaration on a request's route.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Hop<'a> {
    task: &'a str,
    /// p99 scheduling delay (wake-up and preemption) of its instances, merged.
    sched_delay_p99_ns: u64,
}

/// One source's requests across their hops.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Request<'a> {
    source: &'a str,
    /// First task to sink.
    route: Vec<Hop<'a>>,
    /// Arrival at the first task → end of the sink's burst; requests in
    /// flight at the end are the open waits.
    latency: Latency,
    arrived: u64,
    completed: u64,
    dropped: u64,
    in_flight: u64,
    /// p99 scheduling delay over every task on the route.
    sched_delay_p99_ns: u64,
    /// Latency p99 / scheduling delay p99, in hundredths; null when the
    /// scheduling p99 is 0.
    amplification_x100: Option<u64>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Culprit<'a> {
    comm: &'a str,
    ns: u64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Task<'a> {
    name: &'a str,
    comm: &'a str,
    tid: u32,
    group: &'a str,
    nice: i8,
    policy: &'a str,
    cpus_allowed: &'a str,
    runtime_ns: u64,
    switches: u64,
    delay: Latency,
    wakeup_delay: Latency,
    preempt_delay: Latency,
    /// Waits while the task's group was throttled (CPU quota), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    throttled_delay: Option<Latency>,
    /// Serve tasks: request arrival to completion. Periodic tasks
    /// (`sleep_until`, no `serve`): job release (the period boundary) to
    /// completion (the next `sleep_until`). Null for other tasks.
    response: Option<Latency>,
    /// Periodic tasks: jobs that completed at or after their next release
    /// (that release was missed). Absent for other tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    overruns: Option<u64>,
    dropped_items: u64,
    open_wait_ns: Option<u64>,
    long_delay_culprits: Vec<Culprit<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    io_wait: Option<Latency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    io_stall: Option<Latency>,
    /// With `machine.wakeup_latency`: the modelled machine's share of the
    /// wake-up delays (already inside `wakeup_delay`).
    #[serde(skip_serializing_if = "Option::is_none")]
    wakeup_noise: Option<Latency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    io_wait_open_ns: Option<u64>,
    /// Times the task changed CPU, keyed by cause (`wake_affine`,
    /// `idle_sibling`, `wake_idlest`, `fork`, `periodic`, `newidle`, `nohz`,
    /// `active`); causes that never occurred are omitted (`{}`: never moved).
    migrations: BTreeMap<&'static str, u64>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Cpu {
    cpu: u16,
    /// A measured report's host CPU that ran this scenario CPU (absent in
    /// a simulated report).
    #[serde(skip_serializing_if = "Option::is_none")]
    host_cpu: Option<u16>,
    busy_ns: u64,
    /// `sim_time_ns - busy_ns`.
    idle_ns: u64,
    switches: u64,
    /// Tasks moved to this CPU (`dest_cpu` of `sched_migrate_task`).
    migrations_in: u64,
    /// Tasks moved away from this CPU (`orig_cpu`).
    migrations_out: u64,
    /// Time the CPU had tasks waiting (`nr_running >= 2`) while another CPU
    /// of its balancing span was idle.
    balance_gap_ns: u64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Bucket<'a> {
    low_ns: u64,
    high_ns: u64,
    count: u64,
    culprits: Vec<Culprit<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Worst<'a> {
    comm: &'a str,
    cpu: u16,
    start_ns: u64,
    end_ns: u64,
    kind: &'static str,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "event", rename_all = "snake_case")]
enum Row<'a> {
    Switch {
        at_ns: u64,
        cpu: u16,
        task: &'a str,
        wait_ns: u64,
        sch_delay_ns: u64,
        run_ns: u64,
        state: &'static str,
        vruntime: i64,
        next: &'a str,
        next_vruntime: i64,
        min_vruntime: i64,
        victim: bool,
    },
    Wakeup {
        at_ns: u64,
        cpu: u16,
        task: &'a str,
        vruntime: i64,
        preempt: bool,
        min_vruntime: i64,
        victim: bool,
        /// Where the task last ran before this wake-up chose `cpu`.
        prev_cpu: u16,
        /// Why the wake-up moved it (a migration cause), when `prev_cpu != cpu`
        /// and the move was recorded.
        #[serde(skip_serializing_if = "Option::is_none")]
        placed_by: Option<&'static str>,
    },
    /// `sched_migrate_task`, done on `cpu`.
    Migrate { at_ns: u64, cpu: u16, task: &'a str, orig_cpu: u16, dest_cpu: u16, cause: &'static str, victim: bool },
    /// CFS bandwidth control: the group's queue on `cpu` was throttled or unthrottled.
    Throttle { at_ns: u64, cpu: u16, group: &'a str, throttled: bool },
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Victim<'a> {
    name: &'a str,
    delay: Latency,
    wakeup_delay: Latency,
    /// Waits while its group was throttled (CPU quota), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    throttled_delay: Option<Latency>,
    response: Option<Latency>,
    one_hog_bound_ns: u64,
    worst: Option<Worst<'a>>,
    histogram: Vec<Bucket<'a>>,
    history_truncated: bool,
    history: Vec<Row<'a>>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn culprits(list: &[(String, u64)]) -> Vec<Culprit<'_>> {
    list.iter().map(|(c, ns)| Culprit { comm: c, ns: *ns }).collect()
}

fn dto(r: &RunReport) -> Report<'_> {
    let s = &r.settings;
    let cfs = !s.kernel.tuned_by_base_slice();
    Report {
        schema: SCHEMA,
        source: r.source.name(),
        scenario: &r.scenario,
        variant: r.variant.as_deref(),
        seed: r.seed,
        sim_time_ns: r.sim_time_ns,
        events: r.events,
        stop_reason: r.stop.name(),
        settings: Settings {
            cpus: s.cpus,
            machine: Machine {
                sockets: s.machine.shape.sockets,
                cores_per_socket: s.machine.shape.cores_per_socket,
                threads_per_core: s.machine.shape.threads_per_core,
                numa_nodes: s.machine.shape.numa_nodes,
                isolcpus: crate::sched::topology::cpu_list(&s.machine.isolcpus),
                nohz: s.machine.nohz_idle,
                tick_offset_ns: (s.machine.tick_offset_ns != 0).then_some(s.machine.tick_offset_ns),
                wakeup_latency: s.machine.wakeup_latency.as_ref().map(|d| d.to_string()),
            },
            hz: s.hz,
            kernel: s.kernel.version(),
            fair_class: s.kernel.fair_class(),
            tick_ns: s.tick_ns,
            context_switch_ns: s.context_switch_ns,
            duration_ns: s.duration_ns,
            warmup_ns: s.warmup_ns,
            events_max: s.events_max,
            sched_latency_ns: cfs.then_some(s.tunables.sched_latency_ns),
            sched_min_granularity_ns: cfs.then_some(s.tunables.sched_min_granularity_ns),
            sched_wakeup_granularity_ns: cfs.then_some(s.tunables.sched_wakeup_granularity_ns),
            sched_nr_latency: cfs.then_some(s.tunables.sched_nr_latency),
            base_slice_ns: (!cfs).then_some(s.eevdf.base_slice_ns),
            sched_tunable_scaling: s.tunables.scaling.name(),
            tunable_scaling_factor: s.tunables.factor,
            features: if cfs {
                s.features.iter().collect()
            } else {
                s.eevdf_features.iter(s.kernel).into_iter().collect()
            },
            autogroup: s.autogroup,
            group_load: s.group_load,
            cfs_bandwidth: s.bandwidth_slice_us.map(|_| s.cfs_bandwidth),
            sched_cfs_bandwidth_slice_us: s.bandwidth_slice_us,
        },
        tasks: r
            .tasks
            .iter()
            .map(|t| Task {
                name: &t.name,
                comm: &t.comm,
                tid: t.tid,
                group: &t.group,
                nice: t.nice,
                policy: t.policy,
                cpus_allowed: &t.cpus_allowed,
                runtime_ns: t.runtime_ns,
                switches: t.switches,
                delay: (&t.delay).into(),
                wakeup_delay: (&t.wakeup_delay).into(),
                preempt_delay: (&t.preempt_delay).into(),
                throttled_delay: t.throttled_delay.as_ref().map(Latency::from),
                response: t.response.as_ref().map(Latency::from),
                overruns: t.overruns,
                dropped_items: t.dropped_items,
                open_wait_ns: t.open_wait_ns,
                long_delay_culprits: culprits(&t.long_delay_culprits),
                io_wait: t.io_wait.as_ref().map(Latency::from),
                io_stall: t.io_stall.as_ref().map(Latency::from),
                wakeup_noise: t.wakeup_noise.as_ref().map(Latency::from),
                io_wait_open_ns: t.io_wait_open_ns,
                migrations: t.migrations.iter().copied().collect(),
            })
            .collect(),
        cpus: r
            .cpus
            .iter()
            .map(|c| Cpu {
                cpu: c.cpu,
                host_cpu: match &r.source {
                    super::source::ReportSource::Measured(m) => m.host.cpu_map.get(usize::from(c.cpu)).copied(),
                    _ => None,
                },
                busy_ns: c.busy_ns,
                idle_ns: c.idle_ns,
                switches: c.switches,
                migrations_in: c.migrations_in,
                migrations_out: c.migrations_out,
                balance_gap_ns: c.balance_gap_ns,
            })
            .collect(),
        groups: r
            .groups
            .iter()
            .map(|g| Group {
                path: &g.path,
                shares: g.shares,
                session: g.session.as_deref(),
                tasks: g.tasks,
                runtime_ns: g.runtime_ns,
                weight_at_wakeup: GroupWeight {
                    samples: g.weight_samples,
                    avg: g.weight_avg,
                    min: g.weight_min,
                    max: g.weight_max,
                },
                load_avg: g.load_avg,
                cpu_stat: g.cpu_stat.map(|c| CpuStat {
                    quota_us: c.quota_ns / 1_000,
                    period_us: c.period_ns / 1_000,
                    burst_us: c.burst_ns / 1_000,
                    nr_periods: c.nr_periods,
                    nr_throttled: c.nr_throttled,
                    throttled_time: c.throttled_time_ns,
                    throttled_usec: c.throttled_time_ns / 1_000,
                    nr_bursts: c.nr_bursts,
                    burst_usec: c.burst_time_ns / 1_000,
                    runtime_granted_ns: c.runtime_granted_ns,
                    runtime_expired_ns: c.runtime_expired_ns,
                }),
            })
            .collect(),
        victim: Victim {
            name: &r.victim.name,
            delay: (&r.victim.delay).into(),
            wakeup_delay: (&r.victim.wakeup_delay).into(),
            throttled_delay: r.victim.throttled_delay.as_ref().map(Latency::from),
            response: r.victim.response.as_ref().map(Latency::from),
            one_hog_bound_ns: r.victim.one_hog_bound_ns,
            worst: r.victim.worst.as_ref().map(|w| Worst {
                comm: &w.comm,
                cpu: w.cpu,
                start_ns: w.start_ns,
                end_ns: w.end_ns,
                kind: w.kind.name(),
            }),
            histogram: r
                .victim
                .histogram
                .iter()
                .map(|b| Bucket {
                    low_ns: b.low_ns,
                    high_ns: b.high_ns,
                    count: b.count,
                    culprits: culprits(&b.culprits),
                })
                .collect(),
            history_truncated: r.victim.history_truncated,
            history: r.victim.history.iter().map(row).collect(),
        },
        io: r.io.as_ref().map(io_dto),
        requests: r
            .requests
            .iter()
            .map(|q| Request {
                source: &q.source,
                route: q
                    .route
                    .iter()
                    .zip(&q.hop_delay_p99_ns)
                    .map(|(task, &p99)| Hop { task, sched_delay_p99_ns: p99 })
                    .collect(),
                latency: (&q.latency).into(),
                arrived: q.arrived,
                completed: q.completed,
                dropped: q.dropped,
                in_flight: q.in_flight,
                sched_delay_p99_ns: q.sched_delay_p99_ns,
                amplification_x100: q.amplification_x100,
            })
            .collect(),
        limiters: (!r.limiters.is_empty()).then(|| r.limiters.iter().map(limiter_dto).collect()),
        userspace_io: (!r.userspace_io.is_empty()).then(|| r.userspace_io.iter().map(userspace_io_dto).collect()),
        measurement: match &r.source {
            super::source::ReportSource::Measured(m) => Some(measurement_dto(m)),
            super::source::ReportSource::Simulated => None,
        },
    }
}

fn row(h: &HistoryRow) -> Row<'_> {
    match h {
        HistoryRow::Switch {
            at_ns,
            cpu,
            task,
            wait_ns,
            sch_delay_ns,
            run_ns,
            state,
            vruntime,
            next,
            next_vruntime,
            min_vruntime,
            victim,
            ..
        } => Row::Switch {
            at_ns: *at_ns,
            cpu: *cpu,
            task,
            wait_ns: *wait_ns,
            sch_delay_ns: *sch_delay_ns,
            run_ns: *run_ns,
            state: state.code(),
            vruntime: *vruntime,
            next,
            next_vruntime: *next_vruntime,
            min_vruntime: *min_vruntime,
            victim: *victim,
        },
        HistoryRow::Wakeup {
            at_ns, cpu, task, vruntime, preempt, min_vruntime, victim, prev_cpu, placed_by, ..
        } => Row::Wakeup {
            at_ns: *at_ns,
            cpu: *cpu,
            task,
            vruntime: *vruntime,
            preempt: *preempt,
            min_vruntime: *min_vruntime,
            victim: *victim,
            prev_cpu: *prev_cpu,
            placed_by: *placed_by,
        },
        HistoryRow::Migrate { at_ns, cpu, task, orig_cpu, dest_cpu, cause, victim } => Row::Migrate {
            at_ns: *at_ns,
            cpu: *cpu,
            task,
            orig_cpu: *orig_cpu,
            dest_cpu: *dest_cpu,
            cause,
            victim: *victim,
        },
        HistoryRow::Throttle { at_ns, cpu, group, throttled } => {
            Row::Throttle { at_ns: *at_ns, cpu: *cpu, group, throttled: *throttled }
        }
    }
}

/// An elastic CPU limiter: settings, totals and one sample per adjustment.
/// Shares are in millionths of a CPU (`_ppm`), so the JSON holds integers only.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Limiter<'a> {
    name: &'a str,
    /// Task declarations under the limiter.
    tasks: &'a [String],
    /// Task declarations whose scheduling delays it reads.
    watch: &'a [String],
    /// The percentile read, as written (`"99"`).
    percentile: &'a str,
    target_ns: u64,
    window_ns: u64,
    adjust_every_ns: u64,
    grant_ns: u64,
    floor_ppm: u32,
    ceiling_ppm: u32,
    initial_ppm: u32,
    step_up_ppm: u32,
    step_down_ppm: u32,
    /// The limit at the end of the run.
    limit_ppm: u32,
    /// CPU time the limited tasks used.
    used_ns: u64,
    grants: u64,
    granted_ns: u64,
    /// Grant time given back unused at the end of `run` steps.
    returned_ns: u64,
    /// Time tasks spent blocked for a grant (open waits included).
    wait_ns: u64,
    /// Tasks blocked for a grant at the end.
    waiting: u64,
    /// Adjustments per sample (more than 1 when a long run was downsampled).
    stride: u64,
    samples: Vec<LimiterPoint>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct LimiterPoint {
    /// End of the period.
    at_ns: u64,
    interval_ns: u64,
    /// The limit set at `at_ns`.
    limit_ppm: u32,
    granted_ns: u64,
    used_ns: u64,
    /// `used_ns` as a share of the machine over the period.
    used_share_ppm: u64,
    /// The watched tasks' delay percentile over the window; null with no delay in it.
    observed_ns: Option<u64>,
}

fn limiter_dto(l: &super::limiter::LimiterReport) -> Limiter<'_> {
    Limiter {
        name: &l.name,
        tasks: &l.tasks,
        watch: &l.watch,
        percentile: &l.percentile,
        target_ns: l.target_ns,
        window_ns: l.window_ns,
        adjust_every_ns: l.adjust_every_ns,
        grant_ns: l.grant_ns,
        floor_ppm: l.floor_ppm,
        ceiling_ppm: l.ceiling_ppm,
        initial_ppm: l.initial_ppm,
        step_up_ppm: l.step_up_ppm,
        step_down_ppm: l.step_down_ppm,
        limit_ppm: l.limit_ppm,
        used_ns: l.used_ns,
        grants: l.grants,
        granted_ns: l.granted_ns,
        returned_ns: l.returned_ns,
        wait_ns: l.wait_ns,
        waiting: l.waiting,
        stride: l.stride,
        samples: l
            .samples
            .iter()
            .map(|s| LimiterPoint {
                at_ns: s.at_ns,
                interval_ns: s.interval_ns,
                limit_ppm: s.limit_ppm,
                granted_ns: s.granted_ns,
                used_ns: s.used_ns,
                used_share_ppm: l.used_share_ppm(s),
                observed_ns: s.observed_ns,
            })
            .collect(),
    }
}

/// One run as pretty-printed JSON.
pub fn report_json(r: &RunReport) -> String {
    serde_json::to_string_pretty(&dto(r)).expect("the report serializes")
}

/// Several runs (`compare`): `{"runs": [report, …]}`.
pub fn runs_json(runs: &[RunReport]) -> String {
    #[derive(Serialize)]
    struct Runs<'a> {
        runs: Vec<Report<'a>>,
    }
    serde_json::to_string_pretty(&Runs { runs: runs.iter().map(dto).collect() }).expect("the reports serialize")
}

/// The JSON Schema of the document `report_json` writes (feature `schema`).
#[cfg(feature = "schema")]
pub fn schema() -> schemars::Schema {
    schemars::schema_for!(Report<'static>)
}

/// A userspace I/O queue (Seastar's I/O scheduler): limits, high-water
/// marks and per-class figures.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct UserspaceIoQueue<'a> {
    name: &'a str,
    device: &'a str,
    /// `capacity`, `max-io-requests` or `none`.
    policy: &'static str,
    /// Requests in flight allowed; absent: no limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_requests: Option<u64>,
    /// Weight and size limits in read-request units (×128); absent: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_req_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_bytes_count: Option<u64>,
    high_water_requests: u64,
    high_water_req_count: u64,
    high_water_bytes_count: u64,
    classes: Vec<UserspaceIoClass<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct UserspaceIoClass<'a> {
    name: &'a str,
    shares: u32,
    submitted: u64,
    completed: u64,
    bytes: u64,
    bytes_per_s: u64,
    /// Submission to admission by the layer.
    queue_wait: Latency,
    /// Submission to completion.
    latency: Latency,
}

fn userspace_io_dto(q: &super::userspace_io::IoQueueReport) -> UserspaceIoQueue<'_> {
    UserspaceIoQueue {
        name: &q.name,
        device: &q.device,
        policy: q.policy,
        max_requests: q.max_requests,
        max_req_count: q.max_req_count,
        max_bytes_count: q.max_bytes_count,
        high_water_requests: q.high_water_requests,
        high_water_req_count: q.high_water_req_count,
        high_water_bytes_count: q.high_water_bytes_count,
        classes: q
            .classes
            .iter()
            .map(|c| UserspaceIoClass {
                name: &c.name,
                shares: c.shares,
                submitted: c.submitted,
                completed: c.completed,
                bytes: c.bytes,
                bytes_per_s: c.bytes_per_s,
                queue_wait: (&c.queue_wait).into(),
                latency: (&c.latency).into(),
            })
            .collect(),
    }
}
