//! A `RunReport` from a measurement on a real kernel (`sim-cli measure`):
//! the same shape as a simulated run's, so the same text tables and JSON
//! contract serve both. The CLI measures (threads' own timestamps, `perf
//! sched`); this module only turns the plain data it hands over into a
//! report. No I/O here.

use super::run::{
    BucketRow, CpuReport, GroupCpuStat, GroupReport, NamedDelay, RunReport, Settings, TaskReport, VictimReport,
    WorstDelay, one_hog_bound_ns, task_slices,
};
pub use super::source::{MeasuredInfo, ReportSource};
use crate::engine::StopReason;
use crate::metrics::latency::{DELAY_BUCKETS, LatencyStats, LatencySummary, delay_bucket};
use crate::metrics::recorder::WaitKind;
use crate::scenario::{Scenario, ScenarioSpec};
use crate::time::SimTime;
use std::collections::BTreeMap;

/// One task instance, measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeasuredTask {
    pub tid: u32,
    /// Host CPUs it was allowed on.
    pub cpus_allowed: String,
    pub runtime_ns: u64,
    pub switches: u64,
    /// `(end_ns, delay_ns)`, `end_ns` from the start of the run.
    pub wakeup_delays: Vec<(u64, u64)>,
    pub preempt_delays: Vec<(u64, u64)>,
    /// Serve items: `(completion_ns, arrival → completion ns)`.
    pub responses: Vec<(u64, u64)>,
    pub dropped_items: u64,
    pub migrations: u64,
    /// A wait still open at the end: its length so far.
    pub open_wait_ns: Option<u64>,
    /// Scenario CPU on which the longest delay ended, if known.
    pub worst_cpu: Option<u16>,
    /// Who held the CPU while it waited: `(delay bucket, holder's declared
    /// name (or comm, for a task outside the scenario), holder's comm, ns)`.
    pub culprits: Vec<(usize, String, String, u64)>,
}

/// One scenario CPU, measured (from `perf`; zeros without it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeasuredCpu {
    pub busy_ns: u64,
    pub switches: u64,
    pub migrations_in: u64,
    pub migrations_out: u64,
}

/// Everything measured in one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measurement {
    pub info: MeasuredInfo,
    /// Length of the measured window.
    pub duration_ns: u64,
    /// One per task instance, in the scenario's task order (`TaskId`).
    pub tasks: Vec<MeasuredTask>,
    /// One per scenario CPU.
    pub cpus: Vec<MeasuredCpu>,
    /// Each group with a CPU quota: its path and `cpu.stat` over the run
    /// (the report's `groups` then lists these groups only).
    pub cpu_stats: Vec<(String, GroupCpuStat)>,
}

fn stats(samples: &[(u64, u64)]) -> LatencyStats {
    let mut s = LatencyStats::default();
    for &(end, ns) in samples {
        s.record(ns, SimTime(end));
    }
    s
}

/// `(name, ns)`, largest first (ties by name), as the simulator's report sorts culprits.
fn sorted(m: BTreeMap<&str, u64>) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = m.into_iter().map(|(k, ns)| (k.to_string(), ns)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// Who held the CPU during the task's long delays (its top three 1-2-5
/// buckets, as `RunReport::build` counts them), by comm.
fn long_culprits(mt: &MeasuredTask) -> Vec<(String, u64)> {
    let top = mt.wakeup_delays.iter().chain(&mt.preempt_delays).map(|&(_, ns)| delay_bucket(ns)).max();
    let Some(top) = top else { return Vec::new() };
    let mut by_comm: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, _, comm, ns) in mt.culprits.iter().filter(|c| c.0 + 2 >= top) {
        *by_comm.entry(comm).or_insert(0) += ns;
    }
    sorted(by_comm)
}

/// Summarises `(end, delay)` samples as the report does.
pub fn summarize(samples: &[(u64, u64)]) -> LatencySummary {
    stats(samples).summary()
}

impl RunReport {
    /// The report of a measured run of `scenario` (with its variant and
    /// overrides applied): the shape of `RunReport::build`, filled from the
    /// measurement. What only a simulation knows (vruntime history, group
    /// weights, culprits, events) is left empty.
    pub fn measured(scenario: &Scenario, m: Measurement) -> RunReport {
        let spec = &scenario.spec;
        let tasks = measured_tasks(spec, &m);
        let task_delays = measured_delays(spec, &m, &tasks);
        let victim = measured_victim(spec, &m, &tasks, &task_delays);
        let cpus = measured_cpus(&m);
        let hz = if m.info.host.hz > 0 { m.info.host.hz } else { spec.hz };
        RunReport {
            limiters: Vec::new(),
            userspace_io: Vec::new(),
            scenario: spec.name.clone(),
            variant: scenario.variant().map(str::to_string),
            seed: spec.seed,
            sim_time_ns: m.duration_ns,
            events: 0,
            stop: StopReason::TimeLimit,
            settings: Settings {
                cpus: spec.cpus,
                machine: spec.machine.clone(),
                hz,
                kernel: spec.kernel,
                tick_ns: crate::sched::tunables::tick_nsec(hz),
                context_switch_ns: 0,
                duration_ns: m.duration_ns,
                // A measured run reports all of it (`[report] warmup` is simulated only).
                warmup_ns: 0,
                events_max: 0,
                tunables: spec.tunables.clone(),
                features: spec.features,
                eevdf: spec.eevdf,
                eevdf_features: spec.eevdf_features,
                autogroup: m.info.host.autogroup.unwrap_or(spec.groups.autogroup),
                group_load: spec.groups.group_load.name(),
                cfs_bandwidth: spec.bandwidth_rules.version(),
                bandwidth_slice_us: spec.groups.any_quota().then_some(spec.bandwidth_slice_us),
                task_slices: task_slices(spec),
            },
            groups: measured_groups(spec, &m, &tasks),
            victim,
            task_delays,
            io: None,
            requests: Vec::new(),
            occupancy: Default::default(),
            source: ReportSource::Measured(Box::new(m.info)),
            tasks,
            cpus,
        }
    }
}

/// One report per task instance, in `TaskId` order, from its measurement.
fn measured_tasks(spec: &ScenarioSpec, m: &Measurement) -> Vec<TaskReport> {
    let mut instances = Vec::with_capacity(m.tasks.len());
    for ts in &spec.tasks {
        for i in 0..ts.count {
            instances.push((ts, i));
        }
    }
    instances
        .iter()
        .zip(&m.tasks)
        .map(|(&(ts, i), mt)| {
            let wake = stats(&mt.wakeup_delays);
            let pre = stats(&mt.preempt_delays);
            let mut all = wake.clone();
            all.merge(&pre);
            let open = mt.open_wait_ns.map_or((0, 0), |ns| (1, ns));
            TaskReport {
                name: ts.name.clone(),
                comm: ts.comm(i),
                tid: mt.tid,
                group: spec.groups.groups[ts.group].path.clone(),
                nice: ts.nice,
                policy: ts.policy.name(),
                above_fair: crate::report::run::AboveFair::of(ts),
                cpus_allowed: mt.cpus_allowed.clone(),
                runtime_ns: mt.runtime_ns,
                switches: mt.switches,
                delay: all.summary().with_open(open.0, open.1),
                wakeup_delay: wake.summary(),
                preempt_delay: pre.summary(),
                throttled_delay: None,
                response: ts.program.steps.contains(&crate::workload::Step::Serve).then(|| summarize(&mt.responses)),
                // Periodic job responses are simulated only.
                overruns: None,
                dropped_items: mt.dropped_items,
                open_wait_ns: mt.open_wait_ns,
                long_delay_culprits: long_culprits(mt),
                io_wait: None,
                io_stall: None,
                wakeup_noise: None,
                noise: None,
                background: false,
                io_wait_open_ns: None,
                migrations: if mt.migrations > 0 { vec![("measured", mt.migrations)] } else { Vec::new() },
            }
        })
        .collect()
}

/// Delays per declared task, its instances merged.
fn measured_delays(spec: &ScenarioSpec, m: &Measurement, tasks: &[TaskReport]) -> Vec<NamedDelay> {
    let mut first = 0usize;
    spec.tasks
        .iter()
        .map(|ts| {
            let range = first..first + ts.count as usize;
            first += ts.count as usize;
            let mut all = LatencyStats::default();
            let mut counts = vec![0u64; DELAY_BUCKETS];
            for mt in &m.tasks[range.clone()] {
                for &(end, ns) in mt.wakeup_delays.iter().chain(&mt.preempt_delays) {
                    all.record(ns, SimTime(end));
                    counts[delay_bucket(ns)] += 1;
                }
            }
            NamedDelay::merged(&ts.name, &all, &counts, &tasks[range])
        })
        .collect()
}

/// The victim's part: its instances' delays merged, the worst one, and its
/// histogram with who held the CPU (no history: only a simulation has it).
fn measured_victim(
    spec: &ScenarioSpec,
    m: &Measurement,
    tasks: &[TaskReport],
    task_delays: &[NamedDelay],
) -> VictimReport {
    let vs = &spec.tasks[spec.victim];
    let vrange = vs.first.index()..vs.first.index() + vs.count as usize;
    let delays = &task_delays[spec.victim];
    let mut wakeup = LatencyStats::default();
    let mut response = LatencyStats::default();
    let mut worst: Option<WorstDelay> = None;
    for (k, mt) in m.tasks[vrange.clone()].iter().enumerate() {
        wakeup.merge(&stats(&mt.wakeup_delays));
        response.merge(&stats(&mt.responses));
        let kinds = mt
            .wakeup_delays
            .iter()
            .map(|&s| (s, WaitKind::Wakeup))
            .chain(mt.preempt_delays.iter().map(|&s| (s, WaitKind::Preempt)));
        for ((end, ns), kind) in kinds {
            if worst.as_ref().is_none_or(|w| ns > w.end_ns - w.start_ns) {
                worst = Some(WorstDelay {
                    comm: tasks[vrange.start + k].comm.clone(),
                    cpu: mt.worst_cpu.unwrap_or(0),
                    start_ns: end.saturating_sub(ns),
                    end_ns: end,
                    kind,
                });
            }
        }
    }
    VictimReport {
        name: vs.name.clone(),
        delay: delays.delay,
        delay_cdf: delays.cdf.clone(),
        wakeup_delay: wakeup.summary(),
        throttled_delay: None,
        response: vs.program.steps.contains(&crate::workload::Step::Serve).then(|| response.summary()),
        worst,
        histogram: delays
            .histogram
            .iter()
            .map(|&(low_ns, high_ns, count)| {
                let b = delay_bucket(low_ns);
                let mut by_name: BTreeMap<&str, u64> = BTreeMap::new();
                for (_, name, _, ns) in m.tasks[vrange.clone()].iter().flat_map(|t| &t.culprits).filter(|c| c.0 == b) {
                    *by_name.entry(name).or_insert(0) += ns;
                }
                BucketRow { low_ns, high_ns, count, culprits: sorted(by_name) }
            })
            .collect(),
        history: Vec::new(),
        history_truncated: false,
        one_hog_bound_ns: one_hog_bound_ns(spec, crate::sched::tunables::tick_nsec(m.info.host.hz.max(1))),
    }
}

/// One report per scenario CPU (from `perf`; zeros without it).
fn measured_cpus(m: &Measurement) -> Vec<CpuReport> {
    m.cpus
        .iter()
        .enumerate()
        .map(|(c, mc)| CpuReport {
            cpu: c as u16,
            busy_ns: mc.busy_ns,
            idle_ns: m.duration_ns.saturating_sub(mc.busy_ns),
            switches: mc.switches,
            migrations_in: mc.migrations_in,
            migrations_out: mc.migrations_out,
            balance_gap_ns: 0,
            // Not measured: the host's RT throttling shows in the tasks' delays.
            above_fair: None,
        })
        .collect()
}

/// The groups whose `cpu.stat` was measured, as a simulated report shows
/// them (tasks placed directly in the group and their CPU time; the group
/// weights only a simulation knows are 0).
fn measured_groups(spec: &crate::scenario::ScenarioSpec, m: &Measurement, tasks: &[TaskReport]) -> Vec<GroupReport> {
    m.cpu_stats
        .iter()
        .filter_map(|(path, stat)| {
            let g = spec.groups.groups.iter().find(|g| &g.path == path)?;
            let members = tasks.iter().filter(|t| &t.group == path);
            Some(GroupReport {
                path: path.clone(),
                shares: g.shares,
                session: g.session.clone(),
                tasks: members.clone().count() as u32,
                runtime_ns: members.map(|t| t.runtime_ns).sum(),
                weight_samples: 0,
                weight_avg: 0,
                weight_min: 0,
                weight_max: 0,
                load_avg: 0,
                cpu_stat: Some(*stat),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_report_merges_instances_and_finds_the_worst_delay() {
        let toml = r#"
            schema = 1
            seed = 1
            duration = "1s"
            [kernel]
            version = "4.4"
            [machine]
            cpus = 1
            [[tasks]]
            name = "reactor"
            count = 2
            program = [{ sleep = "1ms" }, { run = "50us" }]
            [[tasks]]
            name = "hog"
            program = [{ run = "1s" }]
        "#;
        let s = Scenario::from_toml("t.toml", toml).unwrap();
        let task = |w: Vec<(u64, u64)>, p: Vec<(u64, u64)>| MeasuredTask {
            tid: 7,
            wakeup_delays: w,
            preempt_delays: p,
            worst_cpu: Some(0),
            ..MeasuredTask::default()
        };
        let m = Measurement {
            info: MeasuredInfo { delays_from: "threads".into(), ..MeasuredInfo::default() },
            duration_ns: 1_000_000_000,
            tasks: vec![
                task(vec![(1_000, 10), (2_000, 30)], vec![(5_000, 4_000)]),
                task(vec![(9_000, 20)], vec![]),
                task(vec![], vec![(3_000, 900)]),
            ],
            cpus: vec![MeasuredCpu { busy_ns: 600_000_000, ..MeasuredCpu::default() }],
            cpu_stats: Vec::new(),
        };
        let r = RunReport::measured(&s, m);
        assert_eq!(r.source.name(), "measured");
        assert_eq!(r.tasks.len(), 3);
        assert_eq!(r.tasks[1].comm, "reactor/1");
        assert_eq!(r.task_delays[0].delay.count, 4);
        assert_eq!(r.task_delays[0].delay.max_ns, 4_000);
        assert_eq!(r.victim.wakeup_delay.count, 3);
        let w = r.victim.worst.as_ref().unwrap();
        assert_eq!((w.start_ns, w.end_ns, w.kind), (1_000, 5_000, WaitKind::Preempt));
        assert_eq!(r.cpus[0].idle_ns, 400_000_000);
        assert_eq!(r.task_delays[1].delay.max_ns, 900);
    }
}
