//! A measured run's raw results (threads' timestamps, `perf sched script`
//! text) → `sim_core`'s plain `Measurement` → `RunReport::measured`, the
//! foreign CPU time on the workload's CPUs (`foreign`) included.

use super::culprits::CpuSpans;
use super::foreign;
use super::host::HostInfo;
use super::plan::{Plan, list_text};
use super::{Raw, thread::ThreadResult};
use anyhow::Result;
use sim_core::{
    DelayViews, GroupCpuStat, HostFacts, MeasuredCpu, MeasuredInfo, MeasuredTask, Measurement, RunReport, Scenario,
    SchedSummary, ThreadSched, summarize_delays,
};
use std::collections::{BTreeMap, BTreeSet};

/// The host as the report records it.
pub fn host_facts(host: &HostInfo, plan: &Plan) -> HostFacts {
    HostFacts {
        kernel_release: host.kernel_release.clone(),
        scheduler: host.scheduler.to_string(),
        hz: host.hz,
        hz_source: host.hz_source.to_string(),
        nohz_idle: host.nohz_idle,
        cpus_online: list_text(&host.cpus_online),
        sockets: host.topology.sockets,
        cores_per_socket: host.topology.cores_per_socket,
        threads_per_core: host.topology.threads_per_core,
        numa_nodes: host.topology.numa_nodes,
        cpu_map: plan.cpu_map.clone(),
        preempt: host.preempt.clone(),
        preempt_source: host.preempt_source.to_string(),
        cgroup: match host.cgroup {
            super::host::CgroupVersion::V1 { .. } => "v1",
            super::host::CgroupVersion::V2 { .. } => "v2",
            super::host::CgroupVersion::None => "none",
        }
        .to_string(),
        autogroup: host.autogroup,
        cpu_model: host.cpu_model.clone(),
        virtualized: host.virtualized.clone(),
        sched_cmdline: host.sched_cmdline.clone(),
        sched_cmdline_non_upstream: host.sched_cmdline_non_upstream.clone(),
        tick_grid_ns: None,
        tick_offset_ns: None,
        tick_grid_missing: None,
        rt: Some(host.rt.facts()),
    }
}

/// Samples `(absolute end, delay)` → `(end from t0, delay)`, inside the window.
fn rel(samples: &[(u64, u64)], t0: u64) -> Vec<(u64, u64)> {
    samples.iter().filter(|s| s.0 >= t0).map(|&(e, d)| (e - t0, d)).collect()
}

/// Builds the report of one measured run.
pub fn report(scenario: &Scenario, host: &HostInfo, plan: &Plan, raw: Raw) -> Result<RunReport> {
    Ok(RunReport::measured(scenario, measurement(scenario, host, plan, raw)))
}

/// The measurement of one run, both views filled.
pub fn measurement(scenario: &Scenario, host: &HostInfo, plan: &Plan, raw: Raw) -> Measurement {
    let spec = &scenario.spec;
    let ntasks: usize = spec.tasks.iter().map(|t| t.count as usize).sum();
    let mut threads: Vec<Option<&ThreadResult>> = vec![None; ntasks];
    for r in &raw.results {
        if let Some(slot) = threads.get_mut(r.task as usize) {
            *slot = Some(r);
        }
    }
    let mut tasks: Vec<MeasuredTask> = (0..ntasks)
        .map(|t| {
            let cpus = spec.declaration_of(sim_core::TaskId(t as u32)).map_or_else(String::new, |(d, i)| {
                let host: Vec<u16> =
                    spec.tasks[d].affinity[i as usize].iter().map(|c| plan.cpu_map[usize::from(c.0)]).collect();
                list_text(&host)
            });
            match threads[t] {
                Some(r) => MeasuredTask {
                    tid: r.tid,
                    cpus_allowed: cpus,
                    runtime_ns: r.runtime_ns,
                    switches: r.switches,
                    wakeup_delays: r.wakeups.clone(),
                    preempt_delays: r.preempts.clone(),
                    responses: r.responses.clone(),
                    dropped_items: raw.dropped.iter().filter(|d| d.0 as usize == t).map(|d| d.1).sum(),
                    migrations: 0,
                    open_wait_ns: None,
                    worst_cpu: r.worst_cpu.and_then(|c| plan.scenario_cpu(c)),
                    culprits: Vec::new(),
                },
                None => MeasuredTask { cpus_allowed: cpus, ..MeasuredTask::default() },
            }
        })
        .collect();
    let threads_view = tasks.clone();

    // The kernel's view, when perf recorded it.
    let mut perf_missing = raw.perf_missing.clone();
    let parsed = raw.perf_text.as_deref().and_then(|text| match sim_core::parse_sched_text(text) {
        Ok(records) => {
            let tids: BTreeSet<u32> = tasks.iter().map(|t| t.tid).filter(|&t| t != 0).collect();
            let summary = sim_core::summarize_sched_text(&records, raw.t0, raw.end, Some(&tids));
            let own = foreign::Own { workload: &tids, tools: &raw.own_tids };
            let foreign = foreign::foreign_cpu(&records, raw.t0, raw.end, &workload_cpus(plan), &own);
            Some((summary, CpuSpans::build(&records), foreign))
        }
        Err(e) => {
            perf_missing = Some(format!("the perf recording could not be read: {e}"));
            None
        }
    });
    let (summary, spans, foreign_cpu) = match parsed {
        Some((s, sp, f)) => (Some(s), Some(sp), Some(f)),
        None => (None, None, None),
    };
    let mut cpus = vec![MeasuredCpu::default(); usize::from(spec.cpus)];
    let mut perf_notes = Vec::new();
    if let Some(sum) = &summary {
        for t in tasks.iter_mut() {
            let Some(p) = sum.threads.get(&t.tid) else {
                // perf saw nothing of it in the window: no perf figures, rather than the threads' under perf's name.
                t.wakeup_delays.clear();
                t.preempt_delays.clear();
                continue;
            };
            t.wakeup_delays = rel(&p.wakeup_delays, raw.t0);
            t.preempt_delays = rel(&p.preempt_delays, raw.t0);
            t.runtime_ns = perf_runtime(p);
            t.switches = p.switches;
            t.migrations = p.migrations;
            t.open_wait_ns = p.open_wait_ns;
        }
        if let Some(spans) = &spans {
            attribute(&mut tasks, spans, spec, plan, raw.t0);
        }
        // The CPUs' busy time as charged, when every thread's is.
        let charged = !sum.threads.is_empty() && sum.threads.values().all(|t| t.accounted_ns.is_some());
        perf_notes = idle_notes(sum, &workload_cpus(plan), raw.end - raw.t0);
        for (i, c) in cpus.iter_mut().enumerate() {
            // A host CPU that several scenario CPUs fold onto (--cpus) is counted once, for the first.
            if plan.cpu_map[..i].contains(&plan.cpu_map[i]) {
                continue;
            }
            if let Some(pc) = sum.cpus.iter().find(|pc| pc.cpu == plan.cpu_map[i]) {
                *c = MeasuredCpu {
                    busy_ns: if charged { pc.accounted_busy_ns } else { pc.busy_ns },
                    switches: pc.switches,
                    migrations_in: pc.migrations_in,
                    migrations_out: pc.migrations_out,
                };
            }
        }
    }

    let views = spec
        .tasks
        .iter()
        .map(|ts| {
            let range = ts.first.index()..ts.first.index() + ts.count as usize;
            let merge = |f: &dyn Fn(&MeasuredTask) -> &Vec<(u64, u64)>, from: &[MeasuredTask]| {
                let all: Vec<(u64, u64)> = from[range.clone()].iter().flat_map(|t| f(t).iter().copied()).collect();
                summarize_delays(&all)
            };
            DelayViews {
                name: ts.name.clone(),
                threads_wakeup: merge(&|t| &t.wakeup_delays, &threads_view),
                threads_preempt: merge(&|t| &t.preempt_delays, &threads_view),
                perf_wakeup: summary.as_ref().map(|_| merge(&|t| &t.wakeup_delays, &tasks)),
                perf_preempt: summary.as_ref().map(|_| merge(&|t| &t.preempt_delays, &tasks)),
                schedstat_run_delay_ns: range.clone().filter_map(|t| threads[t]).map(|r| r.run_delay_ns).sum(),
            }
        })
        .collect();
    Measurement {
        info: MeasuredInfo {
            host: HostFacts {
                tick_grid_ns: raw.tick.grid.map(|g| g.phase_ns),
                tick_offset_ns: raw.tick.tick_offset_ns,
                tick_grid_missing: raw.tick.missing.clone(),
                ..host_facts(host, plan)
            },
            delays_from: if summary.is_some() { "perf" } else { "threads" }.to_string(),
            perf_missing,
            perf_notes,
            views,
            applied: raw.applied,
            not_reproduced: plan.not_reproduced.clone(),
            foreign_cpu,
        },
        duration_ns: raw.end - raw.t0,
        tasks,
        cpus,
        cpu_stats: group_cpu_stats(&raw.cpu_stats, plan),
    }
}

/// A thread's time on a CPU in the perf view: what the kernel charged it
/// (sched_stat_runtime) when the recording has that for it, else the time
/// between its switches. The charges need no switch: on this project's VMs
/// perf records no event while CPU 1's idle task runs, so a run that starts
/// from idle there has no switch-in, and the switches alone count it as idle
/// (docs/validation-quota.md). The event fires in 6.18 fair.c update_se()
/// (from update_curr() for fair tasks, update_curr_common() for RT, deadline
/// and stop tasks) and in 4.4 fair.c update_curr(), for fair tasks only: a
/// thread without it (an RT task on 4.4, the tracepoint not recorded) keeps
/// the switch figure.
fn perf_runtime(p: &ThreadSched) -> u64 {
    p.accounted_ns.unwrap_or(p.runtime_ns)
}

/// Charged at least this share of the window (percent), a CPU may never
/// have run its idle task (interrupt and steal time are not charged to tasks).
const ALWAYS_BUSY_PCT: u64 = 99;

/// A note per host CPU of the workload where perf recorded no switch away
/// from the idle task although the kernel's charges say the CPU was not
/// always busy: perf lost the idle task's events there.
fn idle_notes(sum: &SchedSummary, host_cpus: &[u16], window_ns: u64) -> Vec<String> {
    let mut notes = Vec::new();
    for &cpu in host_cpus {
        let Some(c) = sum.cpus.iter().find(|c| c.cpu == cpu) else { continue };
        let busy = c.accounted_all_ns;
        if c.idle_exits > 0 || busy == 0 || busy.saturating_mul(100) >= window_ns.saturating_mul(ALWAYS_BUSY_PCT) {
            continue;
        }
        notes.push(format!(
            "perf recorded no idle-task switch on CPU {cpu}; switch-based figures undercount there (its tasks ran \
             {:.1}% of the window by the kernel's sched_stat_runtime charges; run times are taken from those, but \
             delays and switch counts on it may miss runs that started from idle)",
            busy as f64 * 100.0 / window_ns.max(1) as f64
        ));
    }
    notes
}

/// The host CPUs the workload ran on (or was allowed on): those the
/// scenario's CPUs map to, each once, in order.
fn workload_cpus(plan: &Plan) -> Vec<u16> {
    let cpus: BTreeSet<u16> = plan.cpu_map.iter().copied().collect();
    cpus.into_iter().collect()
}

/// Each limited group's `cpu.stat` over the run, with the quota the plan gave it.
fn group_cpu_stats(stats: &[(String, super::cgroup::CpuStatCounts)], plan: &Plan) -> Vec<(String, GroupCpuStat)> {
    stats
        .iter()
        .filter_map(|(path, c)| {
            let b = plan.bandwidth.iter().find(|b| &b.0 == path)?.1;
            Some((
                path.clone(),
                GroupCpuStat {
                    quota_ns: b.quota_ns?,
                    period_ns: b.period_ns,
                    burst_ns: b.burst_ns,
                    nr_periods: c.nr_periods,
                    nr_throttled: c.nr_throttled,
                    throttled_time_ns: c.throttled_time_ns,
                    nr_bursts: c.nr_bursts,
                    burst_time_ns: c.burst_time_ns,
                    // What the host's cfs_bandwidth handed out is not shown in cpu.stat.
                    runtime_granted_ns: 0,
                    runtime_expired_ns: 0,
                },
            ))
        })
        .collect()
}

/// Fills each task's culprits (who held its CPU while it waited) and the
/// CPU of its longest delay, from the perf view's delays and the CPUs' run spans.
fn attribute(tasks: &mut [MeasuredTask], spans: &CpuSpans, spec: &sim_core::ScenarioSpec, plan: &Plan, t0: u64) {
    // Our threads by tid: (declared name, comm).
    let mut ours: BTreeMap<u32, (String, String)> = BTreeMap::new();
    for ts in &spec.tasks {
        for i in 0..ts.count {
            if let Some(t) = tasks.get((ts.first.0 + i) as usize) {
                ours.insert(t.tid, (ts.name.clone(), ts.comm(i)));
            }
        }
    }
    for t in tasks.iter_mut() {
        let mut agg: BTreeMap<(usize, String, String), u64> = BTreeMap::new();
        let mut worst: Option<(u64, u16)> = None;
        for &(end, delay) in t.wakeup_delays.iter().chain(&t.preempt_delays) {
            let at = end + t0;
            let Some(cpu) = spans.cpu_of_switch_in(t.tid, at) else { continue };
            if worst.is_none_or(|w| delay > w.0) {
                worst = Some((delay, cpu));
            }
            let bucket = sim_core::delay_bucket(delay);
            for (tid, comm, ns) in spans.holders(cpu, at.saturating_sub(delay), at, t.tid) {
                let (name, c) = ours.get(&tid).cloned().unwrap_or_else(|| (comm.clone(), comm));
                *agg.entry((bucket, name, c)).or_insert(0) += ns;
            }
        }
        t.culprits = agg.into_iter().map(|((b, n, c), ns)| (b, n, c, ns)).collect();
        if let Some((_, cpu)) = worst {
            t.worst_cpu = plan.scenario_cpu(cpu);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::measure::{host, plan, thread::ThreadResult, tick};

    const MS: u64 = 1_000_000;
    const T0: u64 = 1_000 * MS;

    /// Two workers, one per CPU, measured over 100 ms from 1 s. CPU 1 lost
    /// its idle task's events (as this project's VMs do): w1's run from idle
    /// at 1.010 s has no switch-in, only the kernel's charge at 1.030 s.
    const TEXT: &str = "\
  w1 102 [001] 0.990000000: sched:sched_switch: prev_comm=w1 prev_pid=102 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
  swapper 0 [000] 1.000000000: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w0 next_pid=101 next_prio=120
  w1 102 [001] 1.030000000: sched:sched_stat_runtime: comm=w1 pid=102 runtime=20000000 [ns]
  w1 102 [001] 1.030000000: sched:sched_switch: prev_comm=w1 prev_pid=102 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
  w0 101 [000] 1.050000000: sched:sched_stat_runtime: comm=w0 pid=101 runtime=50000000 [ns]
  w0 101 [000] 1.050000000: sched:sched_switch: prev_comm=w0 prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
";

    fn measured(text: &str) -> Measurement {
        let toml = "schema = 1\nseed = 1\nduration = \"100ms\"\n[kernel]\nversion = \"6.18\"\n[machine]\ncpus = 2\n\
                    [[tasks]]\nname = \"w\"\ncount = 2\nprogram = [{ run = \"10ms\" }, { sleep = \"10ms\" }]\n";
        let scenario = Scenario::from_toml("w.toml", toml).expect("scenario");
        let host = host::tests::vm_host();
        let opts = plan::PlanOptions { cpus: Some("0,1"), apply_sysctls: false, io_dir: None, ignored_flags: &[] };
        let plan = plan::plan(&scenario, &host, &opts).expect("plan");
        assert_eq!(plan.cpu_map, vec![0, 1]);
        let thread = |task: u32, tid: u32| ThreadResult { task, tid, runtime_ns: 1, ..ThreadResult::default() };
        let raw = Raw {
            t0: T0,
            end: T0 + 100 * MS,
            results: vec![thread(0, 101), thread(1, 102)],
            dropped: Vec::new(),
            perf_text: Some(text.to_string()),
            perf_missing: None,
            applied: Vec::new(),
            tick: tick::Alignment { t0: T0, grid: None, tick_offset_ns: None, missing: Some("test".into()) },
            cpu_stats: Vec::new(),
            own_tids: BTreeSet::new(),
        };
        measurement(&scenario, &host, &plan, raw)
    }

    #[test]
    fn run_times_are_the_kernels_charges_and_a_cpu_without_idle_switches_is_noted() {
        let m = measured(TEXT);
        let runtimes: Vec<u64> = m.tasks.iter().map(|t| t.runtime_ns).collect();
        // w1's 20 ms are charged although no switch put it on CPU 1.
        assert_eq!(runtimes, vec![50 * MS, 20 * MS]);
        let busy: Vec<u64> = m.cpus.iter().map(|c| c.busy_ns).collect();
        assert_eq!(busy, vec![50 * MS, 20 * MS]);
        assert_eq!(m.info.perf_notes.len(), 1, "{:?}", m.info.perf_notes);
        let note = &m.info.perf_notes[0];
        assert!(
            note.starts_with("perf recorded no idle-task switch on CPU 1; switch-based figures undercount there")
                && note.contains("20.0% of the window"),
            "{note}"
        );
    }

    #[test]
    fn without_charges_the_switches_stand_and_nothing_is_noted() {
        let text: String =
            TEXT.lines().filter(|l| !l.contains("sched_stat_runtime")).map(|l| format!("{l}\n")).collect();
        let m = measured(&text);
        // The switch view alone: w1's run is lost, as before.
        assert_eq!(m.tasks.iter().map(|t| t.runtime_ns).collect::<Vec<_>>(), vec![50 * MS, 0]);
        assert_eq!(m.cpus.iter().map(|c| c.busy_ns).collect::<Vec<_>>(), vec![50 * MS, 0]);
        assert_eq!(m.info.perf_notes, Vec::<String>::new());
    }

    /// A CPU busy all along never runs its idle task: no note.
    #[test]
    fn an_always_busy_cpu_is_not_noted() {
        let mut sum = SchedSummary::default();
        let cpu = |cpu: u16, all: u64, exits: u64| sim_core::CpuSched {
            cpu,
            accounted_all_ns: all,
            idle_exits: exits,
            ..sim_core::CpuSched::default()
        };
        sum.cpus = vec![cpu(0, 99 * MS, 0), cpu(1, 98 * MS, 0), cpu(2, 0, 0), cpu(3, 10 * MS, 3)];
        let notes = idle_notes(&sum, &[0, 1, 2, 3], 100 * MS);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("on CPU 1;"), "{notes:?}");
    }
}
