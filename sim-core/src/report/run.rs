//! `RunReport`: the plain-data result of a run, shared by every front end
//! (the CLI's text and JSON, the web page). No formatting happens here.

use crate::engine::StopReason;
use crate::metrics::history::PrevState;
use crate::metrics::latency::{CdfPoint, LatencyStats, LatencySummary, bucket_low_ns};
use crate::metrics::recorder::WaitKind;
use crate::sched::model::WakeupVerdict;
use crate::sched::tunables::changed_features;
use crate::sched::tunables::{CfsTunables, SchedFeatures};

#[derive(Clone, Debug, PartialEq)]
pub struct RunReport {
    pub scenario: String,
    pub variant: Option<String>,
    pub seed: u64,
    pub sim_time_ns: u64,
    pub events: u64,
    pub stop: StopReason,
    pub settings: Settings,
    pub tasks: Vec<TaskReport>,
    pub cpus: Vec<CpuReport>,
    /// Task groups other than the root, in declaration order (autogroups last).
    pub groups: Vec<GroupReport>,
    pub victim: VictimReport,
    /// Scheduling delays per declared task (all its instances merged, as
    /// `perf sched latency` merges by comm), in declaration order.
    pub task_delays: Vec<NamedDelay>,
    /// Block devices, when the scenario has any.
    pub io: Option<super::io::IoReport>,
    /// Sources whose requests cross at least one hop (`forward`), in
    /// declaration order; empty otherwise.
    pub requests: Vec<RequestReport>,
    /// Elastic CPU limiters (`[limiters.NAME]`), in name order; empty without.
    pub limiters: Vec<super::limiter::LimiterReport>,
    /// Userspace I/O queues (`[io_queues.NAME]`), in name order; empty without.
    pub userspace_io: Vec<super::userspace_io::IoQueueReport>,
    /// Per-CPU busy share over time, with each CPU's place in the machine
    /// (for the occupancy chart; not in the JSON report).
    pub occupancy: crate::metrics::occupancy::OccupancySeries,
    /// Simulated, or measured on a real kernel (with the host's facts).
    pub source: super::source::ReportSource,
}

/// One source's requests across their hops: end-to-end latency against the
/// scheduling delays of the tasks on the route.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestReport {
    pub source: String,
    /// The declarations crossed, first task to sink.
    pub route: Vec<String>,
    /// Arrival at the first task → end of the sink's burst, completed
    /// requests; requests in flight at the end are its open waits.
    pub latency: LatencySummary,
    pub arrived: u64,
    pub completed: u64,
    pub dropped: u64,
    /// Queued or in service somewhere on the route when the run stopped.
    pub in_flight: u64,
    /// p99 scheduling delay (wake-up and preemption, all instances merged)
    /// of each declaration on the route, in route order.
    pub hop_delay_p99_ns: Vec<u64>,
    /// p99 scheduling delay over every task on the route.
    pub sched_delay_p99_ns: u64,
    /// p99 latency / p99 scheduling delay, in hundredths (`None` when the
    /// scheduling p99 is 0).
    pub amplification_x100: Option<u64>,
}

/// A task group and how much weight its entities carried.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupReport {
    pub path: String,
    /// Effective `cpu.shares`.
    pub shares: u64,
    /// For an autogroup, its session.
    pub session: Option<String>,
    /// Tasks placed directly in the group.
    pub tasks: u32,
    /// CPU time of those tasks.
    pub runtime_ns: u64,
    /// The group entity's weight each time one of the group's tasks (or a
    /// descendant group's) woke: samples, average, min and max.
    pub weight_samples: u64,
    pub weight_avg: u64,
    pub weight_min: u64,
    pub weight_max: u64,
    /// `tg->load_avg` at the end of the run.
    pub load_avg: i64,
    /// CPU quota and what `cpu.stat` shows, for a limited group.
    pub cpu_stat: Option<GroupCpuStat>,
}

/// A limited group's quota and its `cpu.stat` at the end of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupCpuStat {
    pub quota_ns: u64,
    pub period_ns: u64,
    pub burst_ns: u64,
    pub nr_periods: u64,
    pub nr_throttled: u64,
    /// Summed over CPUs (v1 `throttled_time`; v2 `throttled_usec` in µs).
    pub throttled_time_ns: u64,
    pub nr_bursts: u64,
    pub burst_time_ns: u64,
    /// Runtime handed to its CPUs from the pool (net of slack returned).
    pub runtime_granted_ns: u64,
    /// Runtime CPUs held that expired or was dropped (4.4 to 5.3 rules).
    pub runtime_expired_ns: u64,
}

/// The longest wake-up delay a victim should see beside one CPU hog on its
/// CPU, with `spec`'s settings: `KernelModel::one_hog_bound_ns` holds the
/// rule and the kernel functions behind it (`one_hog_bound_rule` words it,
/// for reports).
pub fn one_hog_bound_ns(spec: &crate::scenario::ScenarioSpec, tick_ns: u64) -> u64 {
    spec.kernel.one_hog_bound_ns(spec.tunables.sched_latency_ns, spec.eevdf.base_slice_ns, tick_ns)
}

/// The effective settings a run used.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub cpus: u16,
    /// The machine's shape, isolated CPUs and tick mode (`[machine]`).
    pub machine: crate::scenario::MachineSpec,
    pub hz: u32,
    /// The modelled kernel (`[kernel] version`).
    pub kernel: crate::sched::model::KernelModel,
    pub tick_ns: u64,
    pub context_switch_ns: u64,
    pub duration_ns: u64,
    /// `[report] warmup`: the first this-many ns of simulated time are in
    /// no statistic (`Recorder::set_warmup` has the rule); 0 without.
    pub warmup_ns: u64,
    pub events_max: u64,
    pub tunables: CfsTunables,
    pub features: SchedFeatures,
    /// The EEVDF tunables and feature bits (6.x models).
    pub eevdf: crate::sched::tunables::EevdfTunables,
    pub eevdf_features: crate::sched::tunables::EevdfFeatures,
    /// `kernel.sched_autogroup_enabled`.
    pub autogroup: bool,
    /// How group shares read the group's load: `pelt` or `instantaneous`.
    pub group_load: &'static str,
    /// Whose CFS bandwidth rules ran (`[kernel] cfs_bandwidth`), e.g. `5.4`.
    pub cfs_bandwidth: &'static str,
    /// `sched_cfs_bandwidth_slice_us`, when some group has a quota.
    pub bandwidth_slice_us: Option<u64>,
    /// Task declarations with their own EEVDF slice (6.12+ `slice`), in
    /// declaration order: `(name, slice_ns)`.
    pub task_slices: Vec<(String, u64)>,
}

/// The declarations of `spec` with their own slice (`Settings::task_slices`).
pub fn task_slices(spec: &crate::scenario::ScenarioSpec) -> Vec<(String, u64)> {
    spec.tasks.iter().filter_map(|t| t.slice_ns.map(|ns| (t.name.clone(), ns))).collect()
}

impl Settings {
    /// The effective settings of this run's kernel model, as `(name, value)`
    /// pairs: the one place the text header, the charts' footers and
    /// `compare` read them from, so each names what its model has (4.4: the
    /// CFS latency knobs; 6.x: the base slice) and nothing it has not.
    /// Features appear where they differ from the model's defaults (as
    /// `sched_features` writes them, `NO_` when off); per-task slices when set.
    pub fn model_settings(&self) -> Vec<(String, String)> {
        let d = crate::time::format_duration;
        let mut v: Vec<(String, String)> = Vec::new();
        let mut push = |name: &str, value: String| v.push((name.to_string(), value));
        // `sched_features` spelling of the features that differ from `defaults`.
        let changed = |now: Vec<(&'static str, bool)>, defaults: Vec<(&'static str, bool)>| {
            let list: Vec<String> = changed_features(now, defaults).into_iter().map(|(_, _, token)| token).collect();
            if list.is_empty() { "defaults".to_string() } else { list.join(" ") }
        };
        if self.kernel.tuned_by_base_slice() {
            let e = &self.eevdf;
            push("base_slice_ns", d(e.base_slice_ns));
            push("normalized base_slice_ns", d(e.normalized_base_slice_ns));
            push("tunable_scaling", format!("{} (x{})", e.scaling.name(), e.factor));
            let defaults = crate::sched::tunables::EevdfFeatures::defaults(self.kernel);
            push("features", changed(self.eevdf_features.iter(self.kernel), defaults.iter(self.kernel)));
            for (task, ns) in &self.task_slices {
                push(&format!("slice of {task}"), d(*ns));
            }
        } else {
            let t = &self.tunables;
            push("sched_latency_ns", d(t.sched_latency_ns));
            push("sched_min_granularity_ns", d(t.sched_min_granularity_ns));
            push("sched_wakeup_granularity_ns", d(t.sched_wakeup_granularity_ns));
            push("sched_nr_latency", t.sched_nr_latency.to_string());
            push("tunable_scaling", format!("{} (x{})", t.scaling.name(), t.factor));
            push("features", changed(self.features.iter().collect(), SchedFeatures::default().iter().collect()));
        }
        v
    }

    /// `model_settings` on one line (`name=value`, spaces in a name as `_`),
    /// after the model's name: `Linux 6.18 (EEVDF): base_slice_ns=2.8ms …`.
    pub fn model_line(&self) -> String {
        let parts: Vec<String> = self
            .model_settings()
            .iter()
            .map(|(k, v)| format!("{}={}", k.replace(' ', "_"), v.replace(' ', ",")))
            .collect();
        format!("{}: {}", self.kernel.describe(), parts.join(" "))
    }
}

/// A task of the stop, RT or deadline class, as `chrt -p` would describe it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AboveFair {
    /// `p->prio`: 0..98 for RT (99 − rt_priority), −1 for deadline, 0 for
    /// a stop task (`sched_set_stop_task`'s FIFO 99).
    pub prio: i32,
    /// `sched_priority` as the scenario sets it (RT), else 0 (deadline, and
    /// a stop task, whose FIFO 99 is the kernel's, not a setting).
    pub rt_priority: u8,
    /// `sched_runtime`, `sched_deadline`, `sched_period` (deadline).
    pub dl: Option<crate::scenario::DlParams>,
}

impl AboveFair {
    /// Of a task spec: `None` for a fair task.
    pub fn of(ts: &crate::scenario::TaskSpec) -> Option<AboveFair> {
        (ts.policy.class() != crate::sched::ClassKind::Fair).then(|| AboveFair {
            prio: ts.policy.kernel_prio(ts.nice, ts.rt_priority),
            rt_priority: ts.rt_priority,
            dl: ts.dl,
        })
    }

    /// `fifo 50 (prio 49)`, `deadline 2ms/10ms/10ms (prio -1)`, `stop (prio
    /// 0)`: the policy's parameters after its name.
    pub fn describe(&self) -> String {
        match self.dl {
            None if self.rt_priority == 0 => format!("(prio {})", self.prio),
            Some(d) => format!(
                "{}/{}/{} (prio {})",
                crate::time::format_duration(d.runtime_ns),
                crate::time::format_duration(d.deadline_ns),
                crate::time::format_duration(d.period_ns),
                self.prio
            ),
            None => format!("{} (prio {})", self.rt_priority, self.prio),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TaskReport {
    /// The declared name (shared by all instances).
    pub name: String,
    /// Unique per instance (`reactor/3`).
    pub comm: String,
    pub tid: u32,
    /// Task group path; `/` is the root group.
    pub group: String,
    pub nice: i8,
    pub policy: &'static str,
    /// The class above fair it runs in, if any: its `sched_priority` (RT)
    /// or `sched_attr` (deadline), and `p->prio` as `sched_switch` prints it.
    pub above_fair: Option<AboveFair>,
    /// CPU list the task may run on.
    pub cpus_allowed: String,
    pub runtime_ns: u64,
    /// Times switched out (voluntary + involuntary).
    pub switches: u64,
    pub delay: LatencySummary,
    pub wakeup_delay: LatencySummary,
    pub preempt_delay: LatencySummary,
    /// Waits during which the task's group was out of CPU quota (throttled),
    /// when it had any: not in `wakeup_delay` or `preempt_delay`.
    pub throttled_delay: Option<LatencySummary>,
    /// Request response times (a task that serves), or periodic job
    /// response times, release to completion (a task with `sleep_until`).
    pub response: Option<LatencySummary>,
    /// Periodic jobs (a task with `sleep_until`, no `serve`) that completed
    /// at or after their next release; `None` for other tasks.
    pub overruns: Option<u64>,
    pub dropped_items: u64,
    /// A wait still open when the run stopped (runnable, never picked since):
    /// its length so far. Not part of the delay statistics, which count only
    /// waits that ended.
    pub open_wait_ns: Option<u64>,
    /// Share of the task's long delays spent behind each culprit (comm,
    /// nanoseconds), largest first. "Long" means the top three buckets of its
    /// delay histogram (1-2-5 per decade: within 5-10x of its worst delay).
    pub long_delay_culprits: Vec<(String, u64)>,
    /// Time blocked on block I/O (`D` state), per wait, if it ever blocked.
    pub io_wait: Option<LatencySummary>,
    /// From blocking on I/O to running again (I/O wait + scheduling delay).
    pub io_stall: Option<LatencySummary>,
    /// With `machine.wakeup_latency`: the machine's share of the wake-up
    /// delays (inside `wakeup_delay`, reported apart so it is not taken for
    /// scheduler delay).
    pub wakeup_noise: Option<LatencySummary>,
    /// With `[machine.noise]`: the machine's share of the wake-up waits, per
    /// component (inside `wakeup_delay`).
    pub noise: Option<NoiseSplit>,
    /// A host background thread (`[[machine.noise.background]]`), not one
    /// of the scenario's tasks: never the victim.
    pub background: bool,
    /// An I/O wait still open when the run stopped: its length so far.
    pub io_wait_open_ns: Option<u64>,
    /// Times the task changed CPU, per cause (`MigrateCause::name`), only
    /// the causes that occurred, in `MigrateCause::ALL` order.
    pub migrations: Vec<(&'static str, u64)>,
}

/// `[machine.noise]`'s share of a task's wake-up waits, per component.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseSplit {
    /// The latency drawn per wake-up onto an idle CPU (0 without `wakeup_idle`).
    pub wakeup_idle: LatencySummary,
    /// The latency drawn per wake-up onto a busy CPU (0 without `wakeup_busy`).
    pub wakeup_busy: LatencySummary,
    /// Per wake-up wait: machine-background tasks' run time on the task's
    /// CPU during it.
    pub background: LatencySummary,
    /// Kernel time charged per activation, in all (ns).
    pub kernel_per_activation_ns: u64,
}

/// Whether a task's report has a `response`: it serves requests, or it runs
/// periodic jobs (`sleep_until`).
pub(super) fn has_response(program: &crate::workload::Program) -> bool {
    program.steps.contains(&crate::workload::Step::Serve) || has_jobs(program)
}

/// Whether a task's response is per periodic job: `sleep_until` without
/// `serve` (the engine's `Step::SleepUntil` arm keeps `Task::job`).
pub(super) fn has_jobs(program: &crate::workload::Program) -> bool {
    !program.steps.contains(&crate::workload::Step::Serve)
        && program.steps.iter().any(|s| matches!(s, crate::workload::Step::SleepUntil { .. }))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuReport {
    pub cpu: u16,
    pub busy_ns: u64,
    /// Simulated time not busy: `sim_time_ns - busy_ns`.
    pub idle_ns: u64,
    pub switches: u64,
    /// Tasks moved to this CPU, and away from it (`sched_migrate_task`).
    pub migrations_in: u64,
    pub migrations_out: u64,
    /// Time this CPU had tasks waiting (`nr_running >= 2`) while another CPU
    /// of its balancing span was idle (`metrics::balance`).
    pub balance_gap_ns: u64,
    /// The classes above fair on this CPU (scenarios with an RT or deadline
    /// task): RT throttling and the fair server's service, whole run.
    pub above_fair: Option<CpuAboveFair>,
}

/// RT throttling and the 6.12+ fair server on one CPU, over the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuAboveFair {
    /// Time its RT queue was throttled (`sched_rt_runtime_us` used up), and how often.
    pub rt_throttled_ns: u64,
    pub rt_throttles: u64,
    /// Times the fair server was queued to serve starving fair tasks, and
    /// the time fair tasks ran through it.
    pub server_served: u64,
    pub server_served_ns: u64,
}

/// The scheduling delays of every instance of one declared task.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedDelay {
    pub name: String,
    pub instances: u32,
    pub delay: LatencySummary,
    pub cdf: Vec<CdfPoint>,
    /// Non-empty 1-2-5 buckets: `(low_ns, high_ns, count)`.
    pub histogram: Vec<(u64, u64, u64)>,
}

impl NamedDelay {
    /// One declaration's delays: its instances' merged distribution, their
    /// 1-2-5 bucket counts, and their task reports (for waits still open).
    pub fn merged(name: &str, all: &LatencyStats, counts: &[u64], instances: &[TaskReport]) -> NamedDelay {
        let mut delay = all.summary();
        for t in instances {
            delay.add_open_of(&t.delay);
        }
        NamedDelay {
            name: name.to_string(),
            instances: instances.len() as u32,
            delay,
            cdf: all.cdf(),
            histogram: bucket_rows(counts),
        }
    }

    /// `merged` of the distribution made of `parts` (every instance's
    /// wake-up, preemption and throttled delays), without building that
    /// distribution unless its CDF is asked for (`cdf`; else it is empty).
    pub(super) fn of_parts(
        name: &str,
        parts: &[&LatencyStats],
        counts: &[u64],
        instances: &[TaskReport],
        cdf: bool,
    ) -> NamedDelay {
        // One instance: its own summary (open wait included) is the merge's.
        let delay = if let [t] = instances {
            t.delay
        } else {
            let mut delay = LatencyStats::summary_of(parts);
            for t in instances {
                delay.add_open_of(&t.delay);
            }
            delay
        };
        let cdf = if cdf {
            let mut all = LatencyStats::default();
            parts.iter().for_each(|p| all.merge(p));
            all.cdf()
        } else {
            Vec::new()
        };
        NamedDelay {
            name: name.to_string(),
            instances: instances.len() as u32,
            delay,
            cdf,
            histogram: bucket_rows(counts),
        }
    }
}

/// Non-empty 1-2-5 buckets of `counts` (one count per bucket): `(low_ns, high_ns, count)`.
fn bucket_rows(counts: &[u64]) -> Vec<(u64, u64, u64)> {
    counts
        .iter()
        .enumerate()
        .filter(|&(_, &n)| n > 0)
        .map(|(b, &n)| (bucket_low_ns(b), bucket_low_ns(b + 1), n))
        .collect()
}

/// A task's summary of all its delays (`TaskMetrics::delay_summary`), given
/// those of its wake-up and preemption delays: when at most one of its three
/// kinds of delay occurred, the merge is that one, already summarized.
pub(super) fn all_delays(
    m: &crate::metrics::recorder::TaskMetrics,
    wakeup: &LatencySummary,
    preempt: &LatencySummary,
) -> LatencySummary {
    match (m.wakeup_delay.count() > 0, m.preempt_delay.count() > 0, m.throttled_delay.count() > 0) {
        // Wake-up delays alone, or none at all (then every summary is the empty one).
        (_, false, false) => *wakeup,
        (false, true, false) => *preempt,
        _ => m.delay_summary(),
    }
}

/// Which parts of a `RunReport` to record and build. A front end that
/// prints only some of them asks for those (`Simulation::recording`): the
/// others cost time, during the run (the history rings, culprits, the
/// occupancy series) or after it (a CDF walks every histogram bucket), and
/// nothing reads them. A section left out is empty (`Vec::new()`,
/// `OccupancySeries::default()`); every other field is built exactly as
/// with `ALL`, and the run itself is the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportSections {
    /// The CDF points of each declared task's delays (`NamedDelay::cdf`)
    /// and of the victim's (`VictimReport::delay_cdf`): the delay charts and
    /// `--hgrm` read them; the JSON and the text report do not.
    pub cdfs: bool,
    /// `RunReport::occupancy`: only the occupancy chart reads it.
    pub occupancy: bool,
    /// What the history rings give: each delay's culprits (the victim's
    /// histogram rows, `TaskReport` culprits) and the window of switches
    /// around the victim's worst delay (`VictimReport::history`; the worst
    /// delay itself is always there). The text and JSON reports print them;
    /// a sweep point, an advice candidate or a band's other runs do not.
    pub history: bool,
}

impl ReportSections {
    /// Everything (`Simulation::new`): charts, the web page.
    pub const ALL: ReportSections = ReportSections { cdfs: true, occupancy: true, history: true };
    /// What `report_json` and the text report (`sim-cli run`, `compare`)
    /// read: no CDFs, no occupancy.
    pub const PRINTED: ReportSections = ReportSections { cdfs: false, occupancy: false, history: true };
    /// The figures alone (delays, counts, times): sweeps, the advisor's
    /// candidates, a band's other runs.
    pub const FIGURES: ReportSections = ReportSections { cdfs: false, occupancy: false, history: false };

    /// Whether every section `self` asks for is in `recorded`; else the
    /// name of one that is not.
    pub fn missing_from(self, recorded: ReportSections) -> Option<&'static str> {
        // CDFs come from the histograms every run keeps.
        if self.occupancy && !recorded.occupancy {
            Some("occupancy")
        } else if self.history && !recorded.history {
            Some("history")
        } else {
            None
        }
    }
}

/// One row of the victim's delay histogram, with who held the CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct BucketRow {
    pub low_ns: u64,
    pub high_ns: u64,
    pub count: u64,
    /// `(culprit name, ns)` aggregated by declared name, largest first.
    pub culprits: Vec<(String, u64)>,
}

/// A row of the history around the worst delay.
#[derive(Clone, Debug, PartialEq)]
pub enum HistoryRow {
    /// A task (or `<idle>`) was switched out: `perf sched timehist` columns.
    Switch {
        at_ns: u64,
        cpu: u16,
        /// `comm[tid]`, or `<idle>`.
        task: String,
        wait_ns: u64,
        sch_delay_ns: u64,
        run_ns: u64,
        state: PrevState,
        vruntime: i64,
        next: String,
        next_vruntime: i64,
        min_vruntime: i64,
        victim: bool,
        /// EEVDF models: the switched-out task's and the picked task's
        /// deadline, lag and eligibility (`None` under 4.4 and for `<idle>`).
        prev_eevdf: Option<EevdfView>,
        next_eevdf: Option<EevdfView>,
        /// The picked task's `p->prio` when it is an RT or deadline task
        /// (its EEVDF view is then `None`).
        next_prio: Option<i32>,
    },
    Wakeup {
        at_ns: u64,
        cpu: u16,
        task: String,
        vruntime: i64,
        preempt: bool,
        /// The model's rule that decided `preempt`.
        verdict: WakeupVerdict,
        /// The rule compared the group entities where the woken task's and
        /// curr's hierarchies meet (so `eevdf`, the task's own, may differ).
        group_level: bool,
        /// EEVDF models: its deadline, lag and eligibility once placed.
        eevdf: Option<EevdfView>,
        min_vruntime: i64,
        victim: bool,
        /// Where the task last ran (`task_cpu(p)` before `select_task_rq`).
        prev_cpu: u16,
        /// Why the wake-up moved it from `prev_cpu` to `cpu` (the cause of a
        /// placement `Migrate` record of the task at the same instant), if it did.
        placed_by: Option<&'static str>,
    },
    /// `sched_migrate_task`: `task` moved from `orig_cpu` to `dest_cpu`,
    /// done on `cpu`.
    Migrate { at_ns: u64, cpu: u16, task: String, orig_cpu: u16, dest_cpu: u16, cause: &'static str, victim: bool },
    /// CFS bandwidth control: `group` ran out of quota on `cpu` and its
    /// tasks there stopped (`throttled`), or got runtime again.
    Throttle { at_ns: u64, cpu: u16, group: String, throttled: bool },
}

/// A task's EEVDF state at a history row: what decides the pick from 6.6 on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EevdfView {
    /// Its virtual deadline; `None` when it is off its run queue (asleep).
    pub deadline: Option<i64>,
    /// `entity_lag`: V − vruntime in its queue, clamped by its weighted limit
    /// (asleep: the lag it saved at dequeue, which placement will use).
    pub lag: i64,
    /// `entity_eligible` (lag ≥ 0); `None` when it is off its run queue.
    pub eligible: Option<bool>,
}

impl EevdfView {
    pub(super) fn of(s: crate::metrics::history::EevdfState) -> EevdfView {
        let queued = s.queued();
        EevdfView { deadline: queued.then_some(s.deadline), lag: s.lag, eligible: queued.then_some(s.lag >= 0) }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct WorstDelay {
    pub comm: String,
    pub cpu: u16,
    pub start_ns: u64,
    pub end_ns: u64,
    pub kind: WaitKind,
}

#[derive(Clone, Debug, PartialEq)]
pub struct VictimReport {
    /// Declared name of the task the report explains.
    pub name: String,
    pub delay: LatencySummary,
    /// The whole delay distribution, for CDF and histogram charts.
    pub delay_cdf: Vec<CdfPoint>,
    pub wakeup_delay: LatencySummary,
    /// Waits while its group was throttled (CPU quota), if it had any.
    pub throttled_delay: Option<LatencySummary>,
    pub response: Option<LatencySummary>,
    pub worst: Option<WorstDelay>,
    pub histogram: Vec<BucketRow>,
    pub history: Vec<HistoryRow>,
    /// The history window began before the oldest record still kept.
    pub history_truncated: bool,
    /// The worst wakeup delay one hog can cause a sleeper on its CPU
    /// (`one_hog_bound_ns`; 4.4: `sched_latency/2 + 2 × tick`, EEVDF:
    /// `base_slice + 2 × tick`, as `KernelModel::one_hog_bound_rule` says).
    pub one_hog_bound_ns: u64,
}
