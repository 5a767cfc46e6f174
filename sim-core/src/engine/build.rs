//! Building a simulation from a validated scenario: the fair class with its
//! groups and bandwidth, the tasks, the arrival sources, the block devices'
//! queues, the recorder, the tick calendar and the limiters.
//!
//! Every stream comes from the scenario's seed by name. The order of the
//! event-queue pushes here is the order `Simulation::new` calls these in:
//! task starts, bandwidth timers, arrivals, ticks, limiter adjustments
//! (the queue's insertion sequence breaks ties between them).

use super::hops::Source;
use super::rq::{Rq, push_bandwidth_timers};
use crate::block::{Device, Elevator, IoClass, IoPrio, Ioprio, IoprioClass, RequestQueue};
use crate::event::{Event, EventQueue};
use crate::cpuset::CpuSet;
use crate::ids::{CfsRqId, CpuId, DeviceId, EntityId, GroupId, SourceId, TaskId};
use crate::metrics::recorder::Recorder;
use crate::rng::SimRng;
use crate::scenario::ScenarioSpec;
use crate::sched::entity::SchedEntity;
use crate::sched::fair::{Cfs, FairConfig};
use crate::sched::deadline::DlClass;
use crate::sched::rt::{RtBandwidth, RtClass, RtConfig};
use crate::sched::rt_pressure::RtPressure;
use crate::sched::stop::StopClass;
use crate::sched::topology::Topology;
use crate::sched::tunables::tick_nsec;
use crate::sched::weights::LoadWeight;
use crate::task::{Task, TaskIo, TaskState};
use crate::tick::TickCalendar;
use crate::time::SimTime;
use crate::workload::Policy;
use crate::workload::limiter::{Limiter, LimiterId};
use std::collections::VecDeque;

/// The fair class for the scenario's kernel and settings (no entity yet).
pub(super) fn fair_class(spec: &ScenarioSpec) -> Cfs {
    let config = FairConfig {
        model: spec.kernel,
        tunables: spec.tunables.clone(),
        features: spec.features,
        eevdf: spec.eevdf,
        features_eevdf: spec.eevdf_features,
        tick_nsec: tick_nsec(spec.hz),
        bandwidth: (spec.bandwidth_rules, spec.bandwidth_slice_us),
    };
    Cfs::new(config, spec.groups.group_load, spec.cpus)
}

/// Every CPU's `struct rq`, idle, over its root CFS queue.
pub(super) fn run_queues(spec: &ScenarioSpec) -> Vec<Rq> {
    (0..spec.cpus).map(|c| Rq::new(CfsRqId(u32::from(c)))).collect()
}

/// The scenario's tasks, each with its entity (`EntityId(task)`) in the
/// fair class and its `TaskStart` queued.
pub(super) fn tasks(spec: &ScenarioSpec, cfs: &mut Cfs, queue: &mut EventQueue, root_rng: &SimRng) -> Vec<Task> {
    let mut tasks = Vec::new();
    for (si, ts) in spec.tasks.iter().enumerate() {
        for i in 0..ts.count {
            let id = TaskId(ts.first.0 + i);
            debug_assert_eq!(id.index(), tasks.len());
            let load = LoadWeight::for_task(ts.policy, ts.nice);
            cfs.entities.push(SchedEntity::new(load, CfsRqId(0), ts.policy));
            if let Some(slice) = ts.slice_ns {
                cfs.set_custom_slice(EntityId(id.0), slice);
            }
            tasks.push(new_task(spec, si, i, root_rng));
            queue.push(SimTime(ts.start_ns), Event::TaskStart { task: id });
        }
    }
    tasks
}

/// Instance `i` of task declaration `si`, not started.
fn new_task(spec: &ScenarioSpec, si: usize, i: u32, root_rng: &SimRng) -> Task {
    let ts = &spec.tasks[si];
    let comm = ts.comm(i);
    Task {
        rng: root_rng.stream(&format!("task/{comm}")),
        comm,
        tid: ts.first.0 + i + 1,
        spec: si,
        instance: i,
        policy: ts.policy,
        nice: ts.nice,
        group: GroupId(ts.group as u32),
        affinity: ts.affinity[i as usize].clone(),
        nr_cpus_allowed: ts.affinity[i as usize].len() as u32,
        state: TaskState::Unstarted,
        cpu: CpuId(0),
        pc: 0,
        iterations_done: 0,
        in_burst: false,
        work_left_ns: 0,
        progress_from: SimTime::ZERO,
        burst_generation: 0,
        kernel_every_ns: None,
        noise_ns: 0,
        noise_busy: false,
        bg_snap: None,
        machine_background: ts.machine_background,
        burst_end_at: SimTime::ZERO,
        timer_generation: 0,
        job: None,
        pending_wakeups: 0,
        items: VecDeque::new(),
        serving: None,
        served_this_pass: false,
        waiting: None,
        sched_in_at: SimTime::ZERO,
        sched_out_at: SimTime::ZERO,
        last_wait_ns: 0,
        last_sch_delay_ns: 0,
        runtime_ns: 0,
        switches: 0,
        io: TaskIo::default(),
        limited_work_left_ns: 0,
        grant_left_ns: 0,
        limited_chunk: false,
        grant_wait_from: SimTime::ZERO,
    }
}

/// The task groups' entities (after the tasks'), and `tg_set_cfs_bandwidth`
/// at t = 0 with the period timers queued.
pub(super) fn groups(spec: &ScenarioSpec, cfs: &mut Cfs, queue: &mut EventQueue, root_rng: &SimRng) {
    // Task entities are EntityId(task); group entities follow.
    for g in &spec.groups.groups[1..] {
        let parent = GroupId(g.parent.expect("only the root has no parent") as u32);
        cfs.create_group(g.path.clone(), parent, g.shares, &g.cpus);
    }
    // tg_set_cfs_bandwidth at t = 0. 6.6+ arms the period timer at a
    // random point of the default 100 ms period (init_cfs_bandwidth,
    // get_random_u32_below), which tg_set's period then forwards from;
    // earlier kernels start on the period grid.
    for (i, g) in spec.groups.groups.iter().enumerate() {
        let Some(b) = g.bandwidth else { continue };
        let phase = if spec.bandwidth_rules.random_period_phase() {
            let mut r = root_rng.stream(&format!("cfs_bandwidth/{}", g.path));
            r.range_inclusive(0, crate::sched::bandwidth::DEFAULT_CFS_PERIOD_NS - 1) % b.period_ns
        } else {
            0
        };
        cfs.set_cfs_bandwidth(GroupId(i as u32), b, phase);
    }
    push_bandwidth_timers(queue, &mut cfs.bw.timers);
}

/// One arrival source per instance of each source's target, with its first
/// arrival queued.
pub(super) fn sources(spec: &ScenarioSpec, queue: &mut EventQueue, root_rng: &SimRng) -> Vec<Source> {
    let mut sources = Vec::new();
    for (decl, s) in spec.sources.iter().enumerate() {
        let ts = &spec.tasks[s.target];
        for i in 0..ts.count {
            let target = TaskId(ts.first.0 + i);
            let id = SourceId(sources.len() as u32);
            let mut rng = root_rng.stream(&format!("source/{}/{}", s.name, ts.comm(i)));
            let first = SimTime(s.start_ns).after(s.interval.sample(&mut rng));
            sources.push(Source {
                target,
                decl: decl as u32,
                interval: s.interval.clone(),
                work: s.work.clone(),
                burst: s.burst,
                rng,
            });
            queue.push(first, Event::Arrival { source: id });
        }
    }
    sources
}

/// One request queue per block device, its elevator told every task's I/O
/// priority (and, for BFQ, the blkcg groups).
pub(super) fn request_queues(spec: &ScenarioSpec, tasks: &[Task], root_rng: &SimRng) -> Vec<RequestQueue> {
    let ncpus = usize::from(spec.cpus);
    spec.devices
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let device = Device::new(d.clone(), root_rng.stream(&format!("device/{}", d.name)));
            let prio = tasks.iter().map(|t: &Task| IoPrio::of_task(t.policy, t.nice)).collect::<Vec<_>>();
            // `ionice` overrides (CFQ's be/N and idle; rt is refused with cfq).
            let prio = prio
                .into_iter()
                .zip(tasks.iter())
                .map(|(p, t)| match spec.tasks[t.spec].ionice {
                    Some(Ioprio { class: IoprioClass::Idle, .. }) => IoPrio { class: IoClass::Idle, prio: 7 },
                    Some(Ioprio { level, .. }) => IoPrio { class: IoClass::Be, prio: level },
                    None => p,
                })
                .collect();
            let elevator = Elevator::new(&d.elevator, prio, spec.hz, tick_nsec(spec.hz));
            // BFQ's blkcg groups and weights (other elevators ignore them).
            let (bfq_groups, task_blkcg) =
                spec.groups.bfq_groups(&tasks.iter().map(|t: &Task| t.group.0 as usize).collect::<Vec<_>>());
            let mut elevator = elevator.with_bfq_groups(&task_blkcg, bfq_groups);
            if !d.elevator.is_mq() {
                return RequestQueue::new(DeviceId(i as u16), device, elevator, tasks.len(), tick_nsec(spec.hz));
            }
            // blk-mq (6.18): each task's ioprio (`ionice`, else from nice and policy).
            elevator.set_task_ioprio(
                tasks.iter().map(|t: &Task| Ioprio::of_task(t.policy, t.nice, spec.tasks[t.spec].ionice)).collect(),
            );
            let mut q = RequestQueue::new(DeviceId(i as u16), device, elevator, tasks.len(), tick_nsec(spec.hz));
            q.enable_mq(spec.device_mq.get(i).copied().unwrap_or_default(), ncpus);
            q
        })
        .collect()
}

/// The recorder, sized for the scenario, with its victim tasks and warm-up.
pub(super) fn recorder(spec: &ScenarioSpec, ntasks: usize, topo: &Topology) -> Recorder {
    let victim = &spec.tasks[spec.victim];
    let mut recorder = Recorder::new(
        ntasks,
        usize::from(spec.cpus),
        spec.groups.groups.len(),
        (victim.first.0, victim.first.0 + victim.count),
        spec.history_window_ns,
        topo.balance_span_ids(),
    );
    recorder.set_warmup(SimTime(spec.warmup_ns));
    recorder
}

/// Without NO_HZ idle, a periodic tick on every CPU, idle or not, from the
/// first one (in the calendar: `set_elision(false)` queues them as events).
pub(super) fn ticks(spec: &ScenarioSpec, rqs: &mut [Rq], queue: &mut EventQueue) -> TickCalendar {
    let mut ticks = TickCalendar::new(rqs.len());
    if !spec.machine.nohz_idle {
        let tick = tick_nsec(spec.hz);
        for (c, rq) in rqs.iter_mut().enumerate() {
            rq.tick_armed = true;
            let first = if spec.machine.tick_offset_ns > 0 { spec.machine.tick_offset_ns } else { tick };
            ticks.arm(CpuId(c as u16), queue.reserve_key(SimTime(first)));
        }
    }
    ticks
}

/// The elastic CPU limiters, each with its first adjustment queued.
pub(super) fn limiters(spec: &ScenarioSpec, queue: &mut EventQueue) -> Vec<Limiter> {
    let limiters: Vec<Limiter> = spec.limiters.iter().map(|l| Limiter::new(l.clone(), spec.cpus)).collect();
    for (i, l) in limiters.iter().enumerate() {
        queue.push(SimTime(l.spec.adjust_every_ns), Event::LimiterAdjust { limiter: LimiterId(i as u16) });
    }
    limiters
}

/// The RT class: each CPU's root domain and SD_WAKE_AFFINE domain spans
/// (`find_lowest_rq` walks them), the RT bandwidth of the model and the
/// scenario's `[rt]`, and every RT task's priority (`__setscheduler`).
pub(super) fn rt_class(spec: &ScenarioSpec, tasks: &[Task], topo: &Topology) -> RtClass {
    use crate::sched::topology::SD_WAKE_AFFINE;
    let ncpus = usize::from(spec.cpus);
    let rd_span = rd_spans(spec);
    let affine_spans = (0..ncpus)
        .map(|c| {
            topo.cpu_domains[c]
                .iter()
                .map(|&d| topo.domain(d))
                .filter(|d| d.flags & SD_WAKE_AFFINE != 0)
                .map(|d| d.span.clone())
                .collect()
        })
        .collect();
    let rules = spec.kernel.rules().rt;
    let r = &spec.rt;
    let cfg = RtConfig {
        bw: RtBandwidth::of(rules, r.period_ns, r.runtime_ns, r.group_sched),
        rr_timeslice: r.rr_timeslice_ticks,
        distribute: rules.lowest_distribute,
        overload_needs_two: rules.overload_needs_two,
    };
    let mut rt = RtClass::new(tasks.len(), rd_span, affine_spans, cfg);
    // RT and deadline time against fair capacity (`scale_rt_capacity`):
    // without such tasks every signal is 0, so none is kept.
    if spec.tasks.iter().any(|t| t.policy.class() != crate::sched::ClassKind::Fair) {
        rt.pressure = RtPressure::new(rules.capacity_signal, ncpus);
    }
    for (i, t) in tasks.iter().enumerate() {
        if t.policy.is_rt() {
            let rt_priority = spec.tasks[t.spec].rt_priority;
            let prio = t.policy.kernel_prio(t.nice, rt_priority);
            rt.init_task(TaskId(i as u32), prio, t.policy == Policy::Rr, t.nr_cpus_allowed > 1);
        }
    }
    rt
}

/// The stop class: each stop task is `rq->stop` of the one CPU it is bound
/// to (`sched_set_stop_task`, 4.4 and 6.18 core.c; validation allows one a CPU).
pub(super) fn stop_class(spec: &ScenarioSpec, tasks: &[Task]) -> StopClass {
    let mut stop = StopClass::new(tasks.len(), usize::from(spec.cpus));
    for (i, t) in tasks.iter().enumerate() {
        if t.policy == Policy::Stop {
            let cpu = t.affinity.iter().next().expect("validated: a stop task has one CPU");
            stop.set_stop_task(cpu, TaskId(i as u32));
        }
    }
    stop
}

/// Each CPU's root domain (`rq->rd->span`): the CPUs outside isolcpus
/// share one, each isolated CPU is its own.
fn rd_spans(spec: &ScenarioSpec) -> Vec<CpuSet> {
    let domains = crate::scenario::rt::root_domains(&spec.machine);
    (0..usize::from(spec.cpus))
        .map(|c| domains.iter().find(|d| d.contains(CpuId(c as u16))).cloned().expect("every CPU has a root domain"))
        .collect()
}

/// The deadline class: every deadline task's parameters and affinity, the
/// root domains (`cpudl`), and the fair
/// server of each CPU where the model has one, the scenario keeps it
/// (`fair_server.runtime` 0 disables it) and an RT or deadline task could
/// make it act (`Core::fair_server_on`).
pub(super) fn dl_class(spec: &ScenarioSpec, tasks: &[Task]) -> DlClass {
    let above_fair = spec.tasks.iter().any(|t| t.policy.class() != crate::sched::ClassKind::Fair);
    let server = match (spec.rt.fair_server, spec.kernel.rules().rt.fair_server) {
        (Some(params), Some(stop)) if above_fair => Some((params, stop)),
        _ => None,
    };
    let mut dl = DlClass::new(tasks.len(), rd_spans(spec), server);
    dl.set_overload_rule(spec.kernel.rules().rt.overload_needs_two);
    for (i, t) in tasks.iter().enumerate() {
        if let Some(p) = spec.tasks[t.spec].dl {
            dl.init_task(TaskId(i as u32), p.runtime_ns, p.deadline_ns, p.period_ns, t.affinity.clone());
        }
    }
    dl
}
