//! `RunReport`: the plain-data result of a run, shared by every front end
//! (the CLI's text and JSON, the web page). No formatting happens here.

use super::history::PrevState;
use super::latency::{CdfPoint, LatencySummary};
use super::recorder::WaitKind;
use crate::engine::StopReason;
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
    pub io: Option<super::io_report::IoReport>,
    /// Sources whose requests cross at least one hop (`forward`), in
    /// declaration order; empty otherwise.
    pub requests: Vec<RequestReport>,
    /// Elastic CPU limiters (`[limiters.NAME]`), in name order; empty without.
    pub limiters: Vec<super::limiter_report::LimiterReport>,
    /// Userspace I/O queues (`[io_queues.NAME]`), in name order; empty without.
    pub userspace_io: Vec<super::userspace_io_report::IoQueueReport>,
    /// Per-CPU busy share over time, with each CPU's place in the machine
    /// (for the occupancy chart; not in the JSON report).
    pub occupancy: super::occupancy::OccupancySeries,
    /// Simulated, or measured on a real kernel (with the host's facts).
    pub source: super::measured::ReportSource,
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

impl RequestReport {
    fn build(sim: &Simulation) -> Vec<RequestReport> {
        let spec = sim.spec();
        let rec = &sim.recorder;
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
            .filter(|&(s, _)| sim.hops.tracked(s as u32))
            .map(|(s, src)| {
                let m = &sim.hops.metrics[s];
                let (in_flight, oldest_ns) = sim.requests_in_flight(s as u32);
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
/// CPU (`KernelModel::one_hog_bound_rule` says which formula, for reports).
/// CFS 4.4: its sleeper credit (half the latency, `place_entity`) plus two
/// ticks for the preemption to be noticed. EEVDF: the hog's protected slice
/// (one base slice: RUN_TO_PARITY keeps curr until its deadline, 6.6/6.12
/// `pick_eevdf`, 6.18 `__pick_eevdf` with `protect_slice`) plus two ticks,
/// the slice end being noticed by `update_curr` at a tick.
pub fn one_hog_bound_ns(spec: &crate::scenario::ScenarioSpec, tick_ns: u64) -> u64 {
    if spec.kernel.is_eevdf() {
        spec.eevdf.base_slice_ns + 2 * tick_ns
    } else {
        spec.tunables.sched_latency_ns / 2 + 2 * tick_ns
    }
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
        if self.kernel.is_eevdf() {
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
    /// An I/O wait still open when the run stopped: its length so far.
    pub io_wait_open_ns: Option<u64>,
    /// Times the task changed CPU, per cause (`MigrateCause::name`), only
    /// the causes that occurred, in `MigrateCause::ALL` order.
    pub migrations: Vec<(&'static str, u64)>,
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
    fn of_parts(
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
fn all_delays(m: &super::recorder::TaskMetrics, wakeup: &LatencySummary, preempt: &LatencySummary) -> LatencySummary {
    match (m.wakeup_delay.count() > 0, m.preempt_delay.count() > 0, m.throttled_delay.count() > 0) {
        // Wake-up delays alone, or none at all (then every summary is the empty one).
        (_, false, false) => *wakeup,
        (false, true, false) => *preempt,
        _ => m.delay_summary(),
    }
}

/// Which parts of a `RunReport` to build. A front end that prints only
/// some of them asks for those: the others cost time (a CDF walks every
/// histogram bucket) and nothing reads them. A section left out is empty
/// (`Vec::new()`, `OccupancySeries::default()`); every other field is built
/// exactly as with `ALL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportSections {
    /// The CDF points of each declared task's delays (`NamedDelay::cdf`)
    /// and of the victim's (`VictimReport::delay_cdf`): the delay charts and
    /// `--hgrm` read them; the JSON and the text report do not.
    pub cdfs: bool,
    /// `RunReport::occupancy`: only the occupancy chart reads it.
    pub occupancy: bool,
}

impl ReportSections {
    /// Everything (`Simulation::report`): charts, the web page.
    pub const ALL: ReportSections = ReportSections { cdfs: true, occupancy: true };
    /// What `report_json` and the text report (`sim-cli run`, `compare`)
    /// read: no CDFs, no occupancy.
    pub const PRINTED: ReportSections = ReportSections { cdfs: false, occupancy: false };
}

impl Simulation {
    /// The report of the run at its current point with only `sections`
    /// built (`report()` builds them all): see `ReportSections`.
    pub fn report_with(&self, sections: ReportSections) -> RunReport {
        RunReport::build_with(self, sections)
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
    fn of(s: super::history::EevdfState) -> EevdfView {
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

use super::history::RecordKind;
use super::latency::{DELAY_BUCKETS, LatencyStats, bucket_low_ns, delay_bucket};
use super::recorder::Culprit;
use crate::engine::Simulation;
use crate::ids::{CpuId, TaskId};
use crate::sched::migrate::MigrateCause;
use std::collections::BTreeMap;

/// Whether a task's report has a `response`: it serves requests, or it runs
/// periodic jobs (`sleep_until`).
fn has_response(program: &crate::workload::Program) -> bool {
    program.steps.contains(&crate::workload::Step::Serve) || has_jobs(program)
}

/// Whether a task's response is per periodic job: `sleep_until` without
/// `serve` (the engine's `Step::SleepUntil` arm keeps `Task::job`).
fn has_jobs(program: &crate::workload::Program) -> bool {
    !program.steps.contains(&crate::workload::Step::Serve)
        && program.steps.iter().any(|s| matches!(s, crate::workload::Step::SleepUntil { .. }))
}

/// CPU time `task` ran after the warm-up (its current run included).
fn counted_runtime_ns(sim: &Simulation, task: TaskId) -> u64 {
    let t = &sim.tasks[task.index()];
    let rec = &sim.recorder;
    let running_early =
        if t.state == crate::task::TaskState::Running { rec.before_warmup_ns(t.sched_in_at, sim.now()) } else { 0 };
    sim.task_runtime_ns(task) - rec.tasks[task.index()].warmup_runtime_ns - running_early
}

/// Busy time of `cpu` after the warm-up (its current run included).
fn counted_busy_ns(sim: &Simulation, cpu: CpuId) -> u64 {
    let rec = &sim.recorder;
    let running_early = sim.curr(cpu).map_or(0, |t| rec.before_warmup_ns(sim.tasks[t.index()].sched_in_at, sim.now()));
    sim.cpu_busy_ns(cpu) - rec.cpus[cpu.index()].warmup_busy_ns - running_early
}

/// Histogram buckets (1-2-5 per decade) counted as "long" delays for culprit shares.
const LONG_BUCKETS: usize = 3;

impl RunReport {
    /// Builds the report of a run at its current point (partial if it has not finished).
    pub fn build(sim: &Simulation) -> RunReport {
        RunReport::build_with(sim, ReportSections::ALL)
    }

    /// `build` with only `sections` built (the others left empty).
    pub fn build_with(sim: &Simulation, sections: ReportSections) -> RunReport {
        let spec = sim.spec();
        let rec = &sim.recorder;
        let comm = |c: Culprit| c.map_or_else(|| "(history not kept)".to_string(), |t| sim.task_comm(t).to_string());
        let name_of = |c: Culprit| {
            c.map_or_else(|| "(history not kept)".to_string(), |t| spec.tasks[sim.tasks[t.index()].spec].name.clone())
        };

        let tasks: Vec<TaskReport> = sim
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let m = &rec.tasks[i];
                let ts = &spec.tasks[t.spec];
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
                // Waits still open at the end: on a run queue (by why it
                // waits), blocked on I/O, or between the two (woken from I/O,
                // not yet run: its stall is still open).
                let now = sim.now();
                // (A run stopped within the warm-up has no open wait that counts.)
                let counted = rec.counts(now);
                let open_wait = t.waiting.filter(|_| counted).map(|(from, kind)| (now.since(from), kind));
                let open_of = |k: Option<WaitKind>| {
                    open_wait.filter(|&(_, kind)| k.is_none_or(|k| k == kind)).map_or((0, 0), |(ns, _)| (1, ns))
                };
                let blocked_on_io = t.state == crate::task::TaskState::Blocked(crate::task::BlockOn::Io);
                let io_wait_open = (blocked_on_io && counted).then(|| now.since(t.io.blocked_at));
                let io_stall_open =
                    io_wait_open.or_else(|| t.io.stall_from.filter(|_| counted).map(|from| now.since(from)));
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
                    cpus_allowed: crate::sched::topology::cpu_list(&t.affinity),
                    runtime_ns: counted_runtime_ns(sim, TaskId(i as u32)),
                    switches: t.switches - m.warmup_switches,
                    delay: with_open(all_delays(m, &wakeup, &preempt), open_of(None)),
                    wakeup_delay: with_open(wakeup, open_of(Some(WaitKind::Wakeup))),
                    preempt_delay: with_open(preempt, open_of(Some(WaitKind::Preempt))),
                    throttled_delay: {
                        let open = open_of(Some(WaitKind::Throttled));
                        (m.throttled_delay.count() > 0 || open.0 > 0)
                            .then(|| with_open(m.throttled_delay.summary(), open))
                    },
                    response: has_response(&ts.program).then(|| m.response.summary()),
                    overruns: has_jobs(&ts.program).then_some(m.overruns),
                    dropped_items: m.dropped_items,
                    open_wait_ns: open_wait.map(|(ns, _)| ns),
                    long_delay_culprits: long,
                    io_wait: io_summary(&m.io_wait, io_wait_open),
                    io_stall: io_summary(&m.io_stall, io_stall_open),
                    wakeup_noise: spec.machine.wakeup_latency.is_some().then(|| m.wakeup_noise.summary()),
                    io_wait_open_ns: io_wait_open,
                    migrations: MigrateCause::ALL
                        .iter()
                        .map(|c| (c.name(), m.migrations[c.index()]))
                        .filter(|&(_, n)| n > 0)
                        .collect(),
                }
            })
            .collect();

        let cpus = (0..spec.cpus)
            .map(|c| {
                let m = &rec.cpus[usize::from(c)];
                let busy_ns = counted_busy_ns(sim, CpuId(c));
                CpuReport {
                    cpu: c,
                    busy_ns,
                    idle_ns: sim.now().since(rec.warmup()).saturating_sub(busy_ns),
                    switches: m.switches,
                    migrations_in: m.migrations_in,
                    migrations_out: m.migrations_out,
                    balance_gap_ns: rec.balance_gap_ns(CpuId(c), sim.now()),
                }
            })
            .collect();

        // Delays per declared task, all instances merged (the victim's among them).
        let task_delays: Vec<NamedDelay> = spec
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
            .collect();

        // The victim: all instances of one declaration, merged.
        let vs = &spec.tasks[spec.victim];
        let range = vs.first.index()..vs.first.index() + vs.count as usize;
        let delays = &task_delays[spec.victim];
        let victims = &rec.tasks[range.clone()];
        let victim_tasks = &tasks[range];
        let summary_of = |part: fn(&super::recorder::TaskMetrics) -> &LatencyStats| {
            LatencyStats::summary_of(&victims.iter().map(part).collect::<Vec<_>>())
        };
        let mut by_name: Vec<BTreeMap<String, u64>> = vec![BTreeMap::new(); DELAY_BUCKETS];
        for m in victims {
            for (&(b, who), &ns) in &m.culprits {
                *by_name[usize::from(b)].entry(name_of(who)).or_insert(0) += ns;
            }
        }
        let mut bucket_culprits: Vec<Vec<(String, u64)>> =
            by_name.into_iter().map(|m| m.into_iter().collect()).collect();
        let histogram = delays
            .histogram
            .iter()
            .map(|&(low_ns, high_ns, count)| {
                let mut culprits = std::mem::take(&mut bucket_culprits[delay_bucket(low_ns)]);
                culprits.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                BucketRow { low_ns, high_ns, count, culprits }
            })
            .collect();

        let cap = &rec.capture;
        // Each task's `comm[tid]` is written once: the window holds up to
        // `CAPTURE_ROWS_MAX` rows of one or two names, mostly the same few tasks.
        let mut labels: BTreeMap<TaskId, String> = BTreeMap::new();
        let mut label = |t: Option<TaskId>| match t {
            None => "<idle>".to_string(),
            Some(t) => {
                labels.entry(t).or_insert_with(|| format!("{}[{}]", sim.task_comm(t), sim.tasks[t.index()].tid)).clone()
            }
        };
        let is_victim = |t: Option<TaskId>| t.is_some() && t == cap.victim;
        // Deadlines and lags decide the pick under EEVDF only.
        let eevdf = spec.kernel.is_eevdf();
        let history = cap
            .records
            .iter()
            .enumerate()
            .map(|(i, r)| match r.kind {
                RecordKind::Switch {
                    prev,
                    prev_state,
                    prev_sched_in,
                    prev_wait_ns,
                    prev_sch_delay_ns,
                    prev_vruntime,
                    next,
                    next_vruntime,
                    prev_eevdf,
                    next_eevdf,
                } => HistoryRow::Switch {
                    at_ns: r.at.ns(),
                    cpu: r.cpu.0,
                    task: label(prev),
                    wait_ns: prev_wait_ns,
                    sch_delay_ns: prev_sch_delay_ns,
                    run_ns: r.at.since(prev_sched_in),
                    state: prev_state,
                    vruntime: prev_vruntime,
                    next: label(next),
                    next_vruntime,
                    min_vruntime: r.min_vruntime,
                    victim: is_victim(prev) || is_victim(next),
                    prev_eevdf: eevdf.then(|| prev.map(|_| EevdfView::of(prev_eevdf))).flatten(),
                    next_eevdf: eevdf.then(|| next.map(|_| EevdfView::of(next_eevdf))).flatten(),
                },
                RecordKind::Wakeup {
                    task, vruntime, preempt, prev_cpu, verdict, group_level, eevdf: state, ..
                } => HistoryRow::Wakeup {
                    at_ns: r.at.ns(),
                    cpu: r.cpu.0,
                    task: label(Some(task)),
                    vruntime,
                    preempt,
                    verdict,
                    group_level,
                    eevdf: eevdf.then(|| EevdfView::of(state)),
                    min_vruntime: r.min_vruntime,
                    victim: is_victim(Some(task)),
                    prev_cpu: prev_cpu.0,
                    placed_by: if prev_cpu != r.cpu { placed_by(&cap.records[..i], task, r.at) } else { None },
                },
                RecordKind::Migrate { task, orig_cpu, dest_cpu, cause } => HistoryRow::Migrate {
                    at_ns: r.at.ns(),
                    cpu: r.cpu.0,
                    task: label(Some(task)),
                    orig_cpu: orig_cpu.0,
                    dest_cpu: dest_cpu.0,
                    cause: cause.name(),
                    victim: is_victim(Some(task)),
                },
                RecordKind::Throttle { group, throttled } => HistoryRow::Throttle {
                    at_ns: r.at.ns(),
                    cpu: r.cpu.0,
                    group: spec.groups.groups[group.index()].path.clone(),
                    throttled,
                },
            })
            .collect();
        let worst = match (cap.victim, cap.cpu, cap.kind) {
            (Some(v), Some(cpu), Some(kind)) => Some(WorstDelay {
                comm: sim.task_comm(v).to_string(),
                cpu: cpu.0,
                start_ns: cap.wait_start.ns(),
                end_ns: cap.wait_end.ns(),
                kind,
            }),
            _ => None,
        };
        let victim = VictimReport {
            name: vs.name.clone(),
            delay: delays.delay,
            delay_cdf: delays.cdf.clone(),
            // One instance (the usual victim): its own figures are the merge's.
            wakeup_delay: match victim_tasks {
                [t] => t.wakeup_delay,
                _ => {
                    let mut w = summary_of(|m| &m.wakeup_delay);
                    for t in victim_tasks {
                        w.add_open_of(&t.wakeup_delay);
                    }
                    w
                }
            },
            throttled_delay: match victim_tasks {
                [t] => t.throttled_delay,
                _ => {
                    let mut w = summary_of(|m| &m.throttled_delay);
                    let mut any = w.count > 0;
                    for t in victim_tasks {
                        if let Some(d) = &t.throttled_delay {
                            w.add_open_of(d);
                            any = true;
                        }
                    }
                    any.then_some(w)
                }
            },
            response: match victim_tasks {
                [t] => t.response,
                _ => has_response(&vs.program).then(|| summary_of(|m| &m.response)),
            },
            worst,
            histogram,
            history,
            history_truncated: cap.truncated,
            one_hog_bound_ns: one_hog_bound_ns(spec, sim.tick_ns()),
        };

        // Tasks and CPU time per group, in one pass over the tasks.
        let mut members = vec![(0u32, 0u64); spec.groups.groups.len()];
        for (t, report) in sim.tasks.iter().zip(&tasks) {
            let m = &mut members[t.group.index()];
            m.0 += 1;
            m.1 += report.runtime_ns;
        }
        let occupancy = if sections.occupancy {
            let mut occupancy = rec.occupancy.series(sim.now());
            let shape = &spec.machine.shape;
            occupancy.places = (0..spec.cpus)
                .map(CpuId)
                .map(|cpu| super::occupancy::CpuPlace {
                    socket: shape.socket_of(cpu),
                    core: shape.core_of(cpu) as u16,
                    thread: shape.thread_of(cpu),
                    isolated: spec.machine.isolcpus.contains(cpu),
                })
                .collect();
            occupancy
        } else {
            super::occupancy::OccupancySeries::default()
        };
        RunReport {
            source: super::measured::ReportSource::Simulated,
            occupancy,
            io: super::io_report::IoReport::build(sim),
            requests: RequestReport::build(sim),
            limiters: super::limiter_report::LimiterReport::build(sim),
            userspace_io: super::userspace_io_report::IoQueueReport::build(sim),
            task_delays,
            scenario: spec.name.clone(),
            variant: sim.variant().map(str::to_string),
            seed: spec.seed,
            sim_time_ns: sim.now().ns(),
            events: sim.events(),
            stop: sim.finished().unwrap_or(StopReason::BudgetSpent),
            settings: Settings {
                cpus: spec.cpus,
                machine: spec.machine.clone(),
                hz: spec.hz,
                kernel: spec.kernel,
                tick_ns: sim.tick_ns(),
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
            },
            groups: spec.groups.groups[1..]
                .iter()
                .enumerate()
                .map(|(i, g)| {
                    let id = i + 1;
                    let w = rec.groups[id];
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
                        load_avg: sim.cfs().groups[id].load_avg,
                        cpu_stat: sim.cfs().cpu_stat(crate::ids::GroupId(id as u32)).and_then(|(b, st, granted)| {
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
                .collect(),
            tasks,
            cpus,
            victim,
        }
    }
}

/// Why a wake-up at `at` moved `task`: the cause of its placement `Migrate`
/// record (a `select_task_rq` cause: set_task_cpu runs just before the
/// task is queued, 4.4 core.c:try_to_wake_up / wake_up_new_task) among the
/// `earlier` records of the same instant.
fn placed_by(earlier: &[super::history::SchedRecord], task: TaskId, at: crate::time::SimTime) -> Option<&'static str> {
    earlier.iter().rev().take_while(|p| p.at == at).find_map(|p| match p.kind {
        RecordKind::Migrate { task: t, cause, .. } if t == task && cause.is_placement() => Some(cause.name()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::history::SchedRecord;
    use crate::scenario::Scenario;
    use crate::time::SimTime;

    fn rec(at: u64, kind: RecordKind) -> SchedRecord {
        SchedRecord { at: SimTime(at), cpu: CpuId(0), min_vruntime: 0, root_min_vruntime: 0, nr_running: 1, kind }
    }

    fn migrate(task: u32, cause: MigrateCause) -> RecordKind {
        RecordKind::Migrate { task: TaskId(task), orig_cpu: CpuId(1), dest_cpu: CpuId(0), cause }
    }

    /// A wake-up's reason is the placement Migrate of the same task at the
    /// same instant; a balancing pull (not a select_task_rq cause), another
    /// task's move or an earlier instant's move is not it.
    #[test]
    fn a_wakeup_is_explained_by_its_own_placement_at_the_same_instant() {
        let at = SimTime(10);
        let earlier = [rec(5, migrate(1, MigrateCause::WakeAffine)), rec(10, migrate(1, MigrateCause::IdleSibling))];
        assert_eq!(placed_by(&earlier, TaskId(1), at), Some("idle_sibling"));
        assert_eq!(placed_by(&earlier[..1], TaskId(1), at), None);
        let others = [rec(10, migrate(2, MigrateCause::WakeIdlest)), rec(10, migrate(1, MigrateCause::NewIdle))];
        assert_eq!(placed_by(&others, TaskId(1), at), None);
    }

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
        sim.recorder.count_migration(hog, CpuId(0), CpuId(1), MigrateCause::Periodic, SimTime(1));
        sim.recorder.count_migration(hog, CpuId(1), CpuId(0), MigrateCause::Active, SimTime(2));
        sim.recorder.count_migration(hog, CpuId(0), CpuId(1), MigrateCause::Periodic, SimTime(3));
        // CPU 0 waits from 2 ms to the end (10 ms) while CPU 1 idles until 6 ms.
        sim.recorder.cpu_nr_running(CpuId(1), 0, SimTime(0));
        sim.recorder.cpu_nr_running(CpuId(0), 2, SimTime(2_000_000));
        sim.recorder.cpu_nr_running(CpuId(1), 1, SimTime(6_000_000));
        let r = sim.report();
        assert_eq!(r.sim_time_ns, 10_000_000);
        let c: Vec<(u64, u64, u64)> =
            r.cpus.iter().map(|c| (c.migrations_in, c.migrations_out, c.balance_gap_ns)).collect();
        assert_eq!(c, vec![(1, 2, 4_000_000), (2, 1, 0)]);
        assert_eq!(r.cpus[1].idle_ns, r.sim_time_ns - r.cpus[1].busy_ns);
        assert_eq!(r.tasks[0].migrations, vec![("periodic", 2), ("active", 1)]);
        let json: serde_json::Value = serde_json::from_str(&crate::metrics::json::report_json(&r)).unwrap();
        assert_eq!(json["tasks"][0]["migrations"], serde_json::json!({"active": 1, "periodic": 2}));
        assert_eq!(json["cpus"][0]["balance_gap_ns"], 4_000_000);
        assert_eq!(json["cpus"][1]["migrations_in"], 2);
    }
}
