//! The JSON of a run's own parts: settings, tasks, CPUs, groups, requests
//! and the victim with its history, one `*_dto` step per part.

use super::latency::Latency;
use crate::report::run::{CpuReport, GroupReport, HistoryRow, RequestReport, RunReport, TaskReport, VictimReport};
use crate::report::source::ReportSource;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Group<'a> {
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
pub(super) struct CpuStat {
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
pub(super) struct GroupWeight {
    samples: u64,
    avg: u64,
    min: u64,
    max: u64,
}

/// `[machine]` as validated: topology, isolated CPUs, NO_HZ idle.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Machine {
    sockets: u16,
    cores_per_socket: u16,
    threads_per_core: u16,
    numa_nodes: u16,
    /// Clusters per socket (`machine.clusters_per_socket`, 6.x), when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    clusters_per_socket: Option<u16>,
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
pub(super) struct Settings {
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

/// One declaration on a request's route.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Hop<'a> {
    task: &'a str,
    /// p99 scheduling delay (wake-up and preemption) of its instances, merged.
    sched_delay_p99_ns: u64,
}

/// One source's requests across their hops.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Request<'a> {
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
pub(super) struct Culprit<'a> {
    comm: &'a str,
    ns: u64,
}

/// `[machine.noise]`'s share of a task's wake-up waits.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct NoiseSplit {
    /// The latency drawn per wake-up onto an idle CPU (`wakeup_idle`).
    wakeup_idle: Latency,
    /// The latency drawn per wake-up that preempted a running task (`wakeup_busy`).
    wakeup_busy: Latency,
    /// Per wake-up wait: background threads' run time on the task's CPU during it.
    background: Latency,
    /// Kernel time charged per activation (`kernel_per_activation`), in all.
    kernel_per_activation_ns: u64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Task<'a> {
    name: &'a str,
    comm: &'a str,
    tid: u32,
    group: &'a str,
    nice: i8,
    policy: &'a str,
    /// Stop, RT and deadline tasks: `p->prio` as `sched_switch` prints it
    /// (0..98 RT, −1 deadline, 0 a stop task).
    #[serde(skip_serializing_if = "Option::is_none")]
    prio: Option<i32>,
    /// RT tasks: `sched_priority` (1..99) as the scenario sets it (none for a stop task).
    #[serde(skip_serializing_if = "Option::is_none")]
    rt_priority: Option<u8>,
    /// Deadline tasks: `sched_runtime`, `sched_deadline`, `sched_period` in ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    dl_runtime_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dl_deadline_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dl_period_ns: Option<u64>,
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
    /// With `[machine.noise]`: the machine's share of the wake-up waits per
    /// component (inside `wakeup_delay`).
    #[serde(skip_serializing_if = "Option::is_none")]
    noise: Option<NoiseSplit>,
    /// A host background thread from `[[machine.noise.background]]` (absent
    /// for the scenario's own tasks).
    #[serde(skip_serializing_if = "Option::is_none")]
    background: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    io_wait_open_ns: Option<u64>,
    /// Times the task changed CPU, keyed by cause (`wake_affine`,
    /// `idle_sibling`, `wake_idlest`, `fork`, `periodic`, `newidle`, `nohz`,
    /// `active`; 6.x placement: `wake_affine_idle`, `wake_affine_weight`,
    /// `select_idle_core`, `select_idle_smt`, `select_idle_cpu`,
    /// `recent_used_cpu`); causes that never occurred are omitted (`{}`:
    /// never moved).
    migrations: BTreeMap<&'static str, u64>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Cpu {
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
    /// With an RT or deadline task: time the CPU's RT queue was throttled
    /// and how often, and the fair server's services and time.
    #[serde(skip_serializing_if = "Option::is_none")]
    rt_throttled_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rt_throttles: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fair_server_served: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fair_server_ns: Option<u64>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Bucket<'a> {
    low_ns: u64,
    high_ns: u64,
    count: u64,
    culprits: Vec<Culprit<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Worst<'a> {
    comm: &'a str,
    cpu: u16,
    start_ns: u64,
    end_ns: u64,
    kind: &'static str,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "event", rename_all = "snake_case")]
pub(super) enum Row<'a> {
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
        /// An RT or deadline next task's `p->prio`.
        #[serde(skip_serializing_if = "Option::is_none")]
        next_prio: Option<i32>,
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
pub(super) struct Victim<'a> {
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

pub(super) fn is_zero(n: &u64) -> bool {
    *n == 0
}

pub(super) fn culprits(list: &[(String, u64)]) -> Vec<Culprit<'_>> {
    list.iter().map(|(c, ns)| Culprit { comm: c, ns: *ns }).collect()
}

/// The effective settings: the model's own knobs only (4.4: the latency
/// and granularities; EEVDF: the base slice), and its feature set.
pub(super) fn settings_dto(r: &RunReport) -> Settings {
    let s = &r.settings;
    let cfs = !s.kernel.tuned_by_base_slice();
    Settings {
        cpus: s.cpus,
        machine: Machine {
            sockets: s.machine.shape.sockets,
            cores_per_socket: s.machine.shape.cores_per_socket,
            threads_per_core: s.machine.shape.threads_per_core,
            numa_nodes: s.machine.shape.numa_nodes,
            clusters_per_socket: s.machine.shape.clusters_per_socket,
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
        features: if cfs { s.features.iter().collect() } else { s.eevdf_features.iter(s.kernel).into_iter().collect() },
        autogroup: s.autogroup,
        group_load: s.group_load,
        cfs_bandwidth: s.bandwidth_slice_us.map(|_| s.cfs_bandwidth),
        sched_cfs_bandwidth_slice_us: s.bandwidth_slice_us,
    }
}

pub(super) fn task_dto(t: &TaskReport) -> Task<'_> {
    Task {
        name: &t.name,
        comm: &t.comm,
        tid: t.tid,
        group: &t.group,
        nice: t.nice,
        policy: t.policy,
        prio: t.above_fair.map(|a| a.prio),
        rt_priority: t.above_fair.filter(|a| a.dl.is_none() && a.rt_priority > 0).map(|a| a.rt_priority),
        dl_runtime_ns: t.above_fair.and_then(|a| a.dl).map(|d| d.runtime_ns),
        dl_deadline_ns: t.above_fair.and_then(|a| a.dl).map(|d| d.deadline_ns),
        dl_period_ns: t.above_fair.and_then(|a| a.dl).map(|d| d.period_ns),
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
        noise: t.noise.as_ref().map(|n| NoiseSplit {
            wakeup_idle: Latency::from(&n.wakeup_idle),
            wakeup_busy: Latency::from(&n.wakeup_busy),
            background: Latency::from(&n.background),
            kernel_per_activation_ns: n.kernel_per_activation_ns,
        }),
        background: t.background.then_some(true),
        io_wait_open_ns: t.io_wait_open_ns,
        migrations: t.migrations.iter().copied().collect(),
    }
}

/// A CPU, with the host CPU it ran on in a measured run.
pub(super) fn cpu_dto(r: &RunReport, c: &CpuReport) -> Cpu {
    Cpu {
        cpu: c.cpu,
        host_cpu: match &r.source {
            ReportSource::Measured(m) => m.host.cpu_map.get(usize::from(c.cpu)).copied(),
            _ => None,
        },
        busy_ns: c.busy_ns,
        idle_ns: c.idle_ns,
        switches: c.switches,
        migrations_in: c.migrations_in,
        migrations_out: c.migrations_out,
        balance_gap_ns: c.balance_gap_ns,
        rt_throttled_ns: c.above_fair.map(|a| a.rt_throttled_ns),
        rt_throttles: c.above_fair.map(|a| a.rt_throttles),
        fair_server_served: c.above_fair.map(|a| a.server_served),
        fair_server_ns: c.above_fair.map(|a| a.server_served_ns),
    }
}

pub(super) fn group_dto(g: &GroupReport) -> Group<'_> {
    Group {
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
    }
}

pub(super) fn victim_dto(v: &VictimReport) -> Victim<'_> {
    Victim {
        name: &v.name,
        delay: (&v.delay).into(),
        wakeup_delay: (&v.wakeup_delay).into(),
        throttled_delay: v.throttled_delay.as_ref().map(Latency::from),
        response: v.response.as_ref().map(Latency::from),
        one_hog_bound_ns: v.one_hog_bound_ns,
        worst: v.worst.as_ref().map(|w| Worst {
            comm: &w.comm,
            cpu: w.cpu,
            start_ns: w.start_ns,
            end_ns: w.end_ns,
            kind: w.kind.name(),
        }),
        histogram: v
            .histogram
            .iter()
            .map(|b| Bucket { low_ns: b.low_ns, high_ns: b.high_ns, count: b.count, culprits: culprits(&b.culprits) })
            .collect(),
        history_truncated: v.history_truncated,
        history: v.history.iter().map(row).collect(),
    }
}

pub(super) fn request_dto(q: &RequestReport) -> Request<'_> {
    Request {
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
    }
}

pub(super) fn row(h: &HistoryRow) -> Row<'_> {
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
            next_prio,
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
            next_prio: *next_prio,
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
