//! Building a simulated run's `RunReport` from its `RunView`, one named
//! step per part: tasks, CPUs, per-declaration delays, groups, settings,
//! occupancy (the victim's part is in `victim.rs`). Also `Simulation::report`:
//! the engine only hands out its view; the report is built up here.

use super::io::IoReport;
use super::limiter::LimiterReport;
use super::run::{
    CpuReport, GroupCpuStat, GroupReport, NamedDelay, ReportSections, RequestReport, RunReport, Settings, TaskReport,
    all_delays, has_jobs, has_response, task_slices,
};
use super::source::ReportSource;
use super::userspace_io::IoQueueReport;
use crate::engine::{Simulation, StopReason};
use crate::scenario::Scenario;
use crate::ids::{CpuId, TaskId};
use crate::metrics::latency::{DELAY_BUCKETS, LatencyStats, LatencySummary};
use crate::metrics::occupancy::{CpuPlace, OccupancySeries};
use crate::metrics::recorder::{Culprit, TaskMetrics, WaitKind};
use crate::sched::migrate::MigrateCause;
use crate::task::Task;
use crate::view::RunView;
use std::collections::BTreeMap;

/// Runs `scenario` to the end and reports: the whole pipeline in one call
/// (`sim_core::run`).
pub fn run_to_report(scenario: &Scenario) -> RunReport {
    run_recording(scenario, ReportSections::ALL)
}

/// Runs `scenario` to the end recording only `sections`, and reports them.
pub fn run_recording(scenario: &Scenario, sections: ReportSections) -> RunReport {
    let mut sim = Simulation::recording(scenario, sections);
    sim.run_to_end();
    sim.report()
}

impl Simulation {
    /// The report of the run so far (final once `advance` returned a final
    /// reason), with the sections the run records (`Simulation::recording`;
    /// all of them for `Simulation::new`).
    pub fn report(&self) -> RunReport {
        let v = self.view();
        RunReport::build(&v, self.finished().unwrap_or(StopReason::BudgetSpent), v.sections)
    }
}

impl RunReport {
    /// The report of `sim` at its current point with only `sections`
    /// built. Refused (naming the section) when one of them was not
    /// recorded: its parts would be empty, not absent.
    pub fn of_sections(sim: &Simulation, sections: ReportSections) -> Result<RunReport, String> {
        let v = sim.view();
        match sections.missing_from(v.sections) {
            Some(s) => Err(format!("the report's {s} section was not recorded by this run")),
            None => Ok(RunReport::build(&v, sim.finished().unwrap_or(StopReason::BudgetSpent), sections)),
        }
    }
}

/// CPU time `task` ran after the warm-up (its current run included).
fn counted_runtime_ns(v: &RunView, task: TaskId) -> u64 {
    let t = &v.tasks[task.index()];
    let rec = v.recorder;
    let running_early =
        if t.state == crate::task::TaskState::Running { rec.before_warmup_ns(t.sched_in_at, v.now) } else { 0 };
    v.task_runtime_ns[task.index()] - rec.tasks[task.index()].warmup_runtime_ns - running_early
}

/// Busy time of `cpu` after the warm-up (its current run included).
fn counted_busy_ns(v: &RunView, cpu: CpuId) -> u64 {
    let rec = v.recorder;
    let running_early = v.curr[cpu.index()].map_or(0, |t| rec.before_warmup_ns(v.tasks[t.index()].sched_in_at, v.now));
    v.cpu_busy_ns[cpu.index()] - rec.cpus[cpu.index()].warmup_busy_ns - running_early
}

/// Histogram buckets (1-2-5 per decade) counted as "long" delays for culprit shares.
const LONG_BUCKETS: usize = 3;

impl RunReport {
    /// The report of a run from its view at its current point (partial if
    /// it has not finished; `stop` says why it returned), with only
    /// `sections` built (the others left empty).
    pub(crate) fn build(v: &RunView, stop: StopReason, sections: ReportSections) -> RunReport {
        let spec = v.spec;
        let tasks: Vec<TaskReport> = v.tasks.iter().enumerate().map(|(i, t)| task_report(v, i, t)).collect();
        let task_delays = named_delays(v, &tasks, sections);
        RunReport {
            source: ReportSource::Simulated,
            occupancy: occupancy(v, sections),
            io: IoReport::build(v),
            requests: RequestReport::build(v),
            limiters: LimiterReport::build(v),
            userspace_io: IoQueueReport::build(v),
            scenario: spec.name.clone(),
            variant: v.variant.map(str::to_string),
            seed: spec.seed,
            sim_time_ns: v.now.ns(),
            events: v.events,
            stop,
            settings: settings(v),
            groups: group_reports(v, &tasks),
            cpus: cpu_reports(v),
            victim: super::victim::victim_report(v, &tasks, &task_delays),
            task_delays,
            tasks,
        }
    }
}

/// Task `i`'s report: its counted time, its delays with the waits still
/// open at the end, its I/O waits and its migrations.
fn task_report(v: &RunView, i: usize, t: &Task) -> TaskReport {
    let spec = v.spec;
    let rec = v.recorder;
    let m = &rec.tasks[i];
    let ts = &spec.tasks[t.spec];
    // Waits still open at the end: on a run queue (by why it
    // waits), blocked on I/O, or between the two (woken from I/O,
    // not yet run: its stall is still open).
    let now = v.now;
    // (A run stopped within the warm-up has no open wait that counts.)
    let counted = rec.counts(now);
    let open_wait = t.waiting.filter(|_| counted).map(|(from, kind)| (now.since(from), kind));
    let open_of = |k: Option<WaitKind>| {
        open_wait.filter(|&(_, kind)| k.is_none_or(|k| k == kind)).map_or((0, 0), |(ns, _)| (1, ns))
    };
    let blocked_on_io = t.state == crate::task::TaskState::Blocked(crate::task::BlockOn::Io);
    let io_wait_open = (blocked_on_io && counted).then(|| now.since(t.io.blocked_at));
    let io_stall_open = io_wait_open.or_else(|| t.io.stall_from.filter(|_| counted).map(|from| now.since(from)));
    let with_open = |s: LatencySummary, (n, ns): (u64, u64)| s.with_open(n, ns);
    let (wakeup, preempt) = (m.wakeup_delay.summary(), m.preempt_delay.summary());
    let io_summary = |stats: &LatencyStats, open: Option<u64>| {
        (stats.count() > 0 || open.is_some())
            .then(|| stats.summary().with_open(u64::from(open.is_some()), open.unwrap_or(0)))
    };
    TaskReport {
        name: ts.name.clone(),
        comm: t.comm.clone(),
        tid: t.tid,
        group: spec.groups.groups[ts.group].path.clone(),
        nice: t.nice,
        policy: t.policy.name(),
        above_fair: crate::report::run::AboveFair::of(ts),
        cpus_allowed: crate::sched::topology::cpu_list(&t.affinity),
        runtime_ns: counted_runtime_ns(v, TaskId(i as u32)),
        switches: t.switches - m.warmup_switches,
        delay: with_open(all_delays(m, &wakeup, &preempt), open_of(None)),
        wakeup_delay: with_open(wakeup, open_of(Some(WaitKind::Wakeup))),
        preempt_delay: with_open(preempt, open_of(Some(WaitKind::Preempt))),
        throttled_delay: {
            let open = open_of(Some(WaitKind::Throttled));
            (m.throttled_delay.count() > 0 || open.0 > 0).then(|| with_open(m.throttled_delay.summary(), open))
        },
        response: has_response(&ts.program).then(|| m.response.summary()),
        overruns: has_jobs(&ts.program).then_some(m.overruns),
        dropped_items: m.dropped_items,
        open_wait_ns: open_wait.map(|(ns, _)| ns),
        long_delay_culprits: long_delay_culprits(v, m),
        io_wait: io_summary(&m.io_wait, io_wait_open),
        io_stall: io_summary(&m.io_stall, io_stall_open),
        wakeup_noise: spec.machine.wakeup_latency.is_some().then(|| m.wakeup_noise.summary()),
        noise: spec.machine.noise.is_some().then(|| crate::report::run::NoiseSplit {
            wakeup_idle: m.noise_idle.summary(),
            wakeup_busy: m.noise_busy.summary(),
            background: m.noise_background.summary(),
            kernel_per_activation_ns: m.kernel_charged_ns,
        }),
        background: ts.machine_background,
        io_wait_open_ns: io_wait_open,
        migrations: MigrateCause::ALL
            .iter()
            .map(|c| (c.name(), m.migrations[c.index()]))
            .filter(|&(_, n)| n > 0)
            .collect(),
    }
}

/// Who held the CPU during a task's long delays (its top `LONG_BUCKETS`
/// buckets), by comm, largest first.
fn long_delay_culprits(v: &RunView, m: &TaskMetrics) -> Vec<(String, u64)> {
    let comm = |c: Culprit| c.map_or_else(|| "(history not kept)".to_string(), |t| v.task_comm(t).to_string());
    let top = m.delay_buckets.iter().rposition(|&n| n > 0);
    let mut by_comm: BTreeMap<String, u64> = BTreeMap::new();
    if let Some(top) = top {
        let lo = top.saturating_sub(LONG_BUCKETS - 1) as u8;
        // (lo, None) is the first key of bucket lo: None sorts before Some.
        // Summed per culprit first, so each one's comm is written once.
        let mut by_who: BTreeMap<Culprit, u64> = BTreeMap::new();
        for (&(_, who), &ns) in m.culprits.range((lo, None)..) {
            *by_who.entry(who).or_insert(0) += ns;
        }
        for (who, ns) in by_who {
            *by_comm.entry(comm(who)).or_insert(0) += ns;
        }
    }
    let mut long: Vec<(String, u64)> = by_comm.into_iter().collect();
    long.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    long
}

fn cpu_reports(v: &RunView) -> Vec<CpuReport> {
    let rec = v.recorder;
    (0..v.spec.cpus)
        .map(|c| {
            let m = &rec.cpus[usize::from(c)];
            let busy_ns = counted_busy_ns(v, CpuId(c));
            CpuReport {
                cpu: c,
                busy_ns,
                idle_ns: v.now.since(rec.warmup()).saturating_sub(busy_ns),
                switches: m.switches,
                migrations_in: m.migrations_in,
                migrations_out: m.migrations_out,
                balance_gap_ns: rec.balance_gap_ns(CpuId(c), v.now),
                above_fair: v.above_fair.get(usize::from(c)).copied(),
            }
        })
        .collect()
}

/// Delays per declared task, all instances merged (the victim's among them).
fn named_delays(v: &RunView, tasks: &[TaskReport], sections: ReportSections) -> Vec<NamedDelay> {
    let rec = v.recorder;
    v.spec
        .tasks
        .iter()
        .map(|ts| {
            let range = ts.first.index()..ts.first.index() + ts.count as usize;
            let mut counts = vec![0u64; DELAY_BUCKETS];
            for m in &rec.tasks[range.clone()] {
                for (b, n) in m.delay_buckets.iter().enumerate() {
                    counts[b] += n;
                }
            }
            // Merged in this order: each instance's wake-up, preemption and throttled delays.
            let parts: Vec<&LatencyStats> = rec.tasks[range.clone()]
                .iter()
                .flat_map(|m| [&m.wakeup_delay, &m.preempt_delay, &m.throttled_delay])
                .collect();
            NamedDelay::of_parts(&ts.name, &parts, &counts, &tasks[range], sections.cdfs)
        })
        .collect()
}

/// `RunReport::occupancy`, with each CPU's place in the machine; empty
/// unless `sections` asks for it.
fn occupancy(v: &RunView, sections: ReportSections) -> OccupancySeries {
    if !sections.occupancy {
        return OccupancySeries::default();
    }
    let spec = v.spec;
    let mut occupancy = v.recorder.occupancy.series(v.now);
    let shape = &spec.machine.shape;
    occupancy.places = (0..spec.cpus)
        .map(CpuId)
        .map(|cpu| CpuPlace {
            socket: shape.socket_of(cpu),
            core: shape.core_of(cpu) as u16,
            thread: shape.thread_of(cpu),
            isolated: spec.machine.isolcpus.contains(cpu),
        })
        .collect();
    occupancy
}

fn settings(v: &RunView) -> Settings {
    let spec = v.spec;
    Settings {
        cpus: spec.cpus,
        machine: spec.machine.clone(),
        hz: spec.hz,
        kernel: spec.kernel,
        tick_ns: v.tick_ns,
        context_switch_ns: spec.context_switch_ns,
        duration_ns: spec.duration_ns,
        warmup_ns: spec.warmup_ns,
        events_max: spec.events_max,
        tunables: spec.tunables.clone(),
        features: spec.features,
        eevdf: spec.eevdf,
        eevdf_features: spec.eevdf_features,
        autogroup: spec.groups.autogroup,
        group_load: spec.groups.group_load.name(),
        cfs_bandwidth: spec.bandwidth_rules.version(),
        bandwidth_slice_us: spec.groups.any_quota().then_some(spec.bandwidth_slice_us),
        task_slices: task_slices(spec),
    }
}

/// Task groups other than the root: their tasks and CPU time (in one pass
/// over the tasks), the weights recorded, `tg->load_avg` and `cpu.stat`.
fn group_reports(v: &RunView, tasks: &[TaskReport]) -> Vec<GroupReport> {
    let spec = v.spec;
    let mut members = vec![(0u32, 0u64); spec.groups.groups.len()];
    for (t, report) in v.tasks.iter().zip(tasks) {
        let m = &mut members[t.group.index()];
        m.0 += 1;
        m.1 += report.runtime_ns;
    }
    spec.groups.groups[1..]
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let id = i + 1;
            let w = v.recorder.groups[id];
            GroupReport {
                path: g.path.clone(),
                shares: g.shares,
                session: g.session.clone(),
                tasks: members[id].0,
                runtime_ns: members[id].1,
                weight_samples: w.samples,
                weight_avg: w.sum.checked_div(w.samples).unwrap_or(0),
                weight_min: w.min,
                weight_max: w.max,
                load_avg: v.cfs.groups[id].load_avg,
                cpu_stat: v.cfs.cpu_stat(crate::ids::GroupId(id as u32)).and_then(|(b, st, granted)| {
                    Some(GroupCpuStat {
                        quota_ns: b.quota_ns?,
                        period_ns: b.period_ns,
                        burst_ns: b.burst_ns,
                        nr_periods: st.nr_periods,
                        nr_throttled: st.nr_throttled,
                        throttled_time_ns: st.throttled_time_ns,
                        nr_bursts: st.nr_bursts,
                        burst_time_ns: st.burst_time_ns,
                        runtime_granted_ns: granted,
                        runtime_expired_ns: st.expired_ns,
                    })
                }),
            }
        })
        .collect()
}

impl RequestReport {
    /// One report per source whose requests cross hops.
    fn build(v: &RunView) -> Vec<RequestReport> {
        let spec = v.spec;
        let rec = v.recorder;
        // Wake-up and preemption delays of every instance of a declaration.
        let delays = |decl: usize| {
            let ts = &spec.tasks[decl];
            rec.tasks[ts.first.index()..ts.first.index() + ts.count as usize]
                .iter()
                .flat_map(|m| [&m.wakeup_delay, &m.preempt_delay])
        };
        spec.sources
            .iter()
            .enumerate()
            .filter(|&(s, _)| v.hops.tracked(s as u32))
            .map(|(s, src)| {
                let m = &v.hops.metrics[s];
                let (in_flight, oldest_ns) = v.requests_in_flight[s];
                let hop_delay_p99_ns = src
                    .route
                    .iter()
                    .map(|&d| LatencyStats::summary_of(&delays(d).collect::<Vec<_>>()).p99_ns)
                    .collect();
                let latency = m.latency.summary().with_open(in_flight, oldest_ns);
                let all: Vec<&LatencyStats> = src.route.iter().flat_map(|&d| delays(d)).collect();
                let sched_delay_p99_ns = LatencyStats::summary_of(&all).p99_ns;
                RequestReport {
                    source: src.name.clone(),
                    route: src.route.iter().map(|&d| spec.tasks[d].name.clone()).collect(),
                    arrived: m.arrived,
                    completed: m.completed,
                    dropped: m.dropped,
                    in_flight,
                    hop_delay_p99_ns,
                    sched_delay_p99_ns,
                    amplification_x100: (sched_delay_p99_ns > 0)
                        .then(|| (u128::from(latency.p99_ns) * 100 / u128::from(sched_delay_p99_ns)) as u64),
                    latency,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use crate::time::SimTime;

    /// What the engine reports through `count_migration` and
    /// `cpu_nr_running` reaches the report and its JSON.
    #[test]
    fn migrations_and_balance_gap_reach_the_report_and_json() {
        let toml = r#"
            schema = 1
            name = "two"
            seed = 1
            duration = "10ms"
            [kernel]
            version = "4.4"
            [machine]
            cpus = 2
            [[tasks]]
            name = "hog"
            cpus = "0"
            program = [{ run = "1s" }]
        "#;
        let s = Scenario::from_toml("two.toml", toml).unwrap();
        let mut sim = crate::engine::Simulation::new(&s);
        sim.run_to_end();
        let hog = TaskId(0);
        sim.world.recorder.count_migration(hog, CpuId(0), CpuId(1), MigrateCause::Periodic, SimTime(1));
        sim.world.recorder.count_migration(hog, CpuId(1), CpuId(0), MigrateCause::Active, SimTime(2));
        sim.world.recorder.count_migration(hog, CpuId(0), CpuId(1), MigrateCause::Periodic, SimTime(3));
        // CPU 0 waits from 2 ms to the end (10 ms) while CPU 1 idles until 6 ms.
        sim.world.recorder.cpu_nr_running(CpuId(1), 0, SimTime(0));
        sim.world.recorder.cpu_nr_running(CpuId(0), 2, SimTime(2_000_000));
        sim.world.recorder.cpu_nr_running(CpuId(1), 1, SimTime(6_000_000));
        let r = sim.report();
        assert_eq!(r.sim_time_ns, 10_000_000);
        let c: Vec<(u64, u64, u64)> =
            r.cpus.iter().map(|c| (c.migrations_in, c.migrations_out, c.balance_gap_ns)).collect();
        assert_eq!(c, vec![(1, 2, 4_000_000), (2, 1, 0)]);
        assert_eq!(r.cpus[1].idle_ns, r.sim_time_ns - r.cpus[1].busy_ns);
        assert_eq!(r.tasks[0].migrations, vec![("periodic", 2), ("active", 1)]);
        let json: serde_json::Value = serde_json::from_str(&crate::report::json::report_json(&r)).unwrap();
        assert_eq!(json["tasks"][0]["migrations"], serde_json::json!({"active": 1, "periodic": 2}));
        assert_eq!(json["cpus"][0]["balance_gap_ns"], 4_000_000);
        assert_eq!(json["cpus"][1]["migrations_in"], 2);
    }
}
