//! What the engine records while it runs: per-task latency statistics with
//! culprit attribution, per-CPU counters, the history rings, and the window
//! captured around the victim's worst delay. Everything is bounded by the
//! model's size, not by simulated duration.

use super::balance::BalanceGap;
use super::history::{CAPTURE_ROWS_MAX, CpuHistory, SchedRecord};
use super::latency::{DELAY_BUCKETS, LatencyStats, delay_bucket};
use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};
use crate::sched::migrate::MigrateCause;
use crate::time::SimTime;
use std::collections::BTreeMap;

/// Why a task was waiting on a run queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitKind {
    /// It was woken (or created) and waited to run.
    Wakeup,
    /// It was preempted while runnable and waited to run again.
    Preempt,
    /// Its group ran out of CPU quota while it waited (CFS bandwidth
    /// control): it was throttled, or woke or waited in a throttled group.
    Throttled,
}

impl WaitKind {
    pub fn name(self) -> &'static str {
        match self {
            WaitKind::Wakeup => "wakeup",
            WaitKind::Preempt => "preempt",
            WaitKind::Throttled => "throttled",
        }
    }
}

/// Who held a CPU while a task waited: a task, or time older than the
/// history ring (`None`).
pub type Culprit = Option<TaskId>;

#[derive(Clone, Debug, Default)]
pub struct TaskMetrics {
    pub wakeup_delay: LatencyStats,
    pub preempt_delay: LatencyStats,
    /// Waits during which the task's group was throttled (CFS bandwidth).
    pub throttled_delay: LatencyStats,
    /// Response times: for tasks that serve, request arrival to completion;
    /// for periodic tasks (`sleep_until`, no `serve`), job release (the
    /// period boundary slept until) to completion (the next `sleep_until`,
    /// or the exit).
    pub response: LatencyStats,
    /// Periodic jobs that completed at or after their next release (the
    /// program then sleeps to a later boundary: that release is missed).
    pub overruns: u64,
    /// CPU time the task ran before the warm-up ended (not in the report).
    pub warmup_runtime_ns: u64,
    /// Times it was switched out before the warm-up ended (not in the report).
    pub warmup_switches: u64,
    /// Exact count of delays per 1-2-5 bucket (`latency::delay_bucket`).
    pub delay_buckets: Vec<u64>,
    /// Time spent waiting behind each culprit, per delay bucket:
    /// `(bucket, culprit) → ns`. A map, not a list searched linearly: a task
    /// sharing a CPU with a thousand others has thousands of entries.
    pub culprits: BTreeMap<(u8, Culprit), u64>,
    /// Items dropped because the task's queue was full.
    pub dropped_items: u64,
    /// Time blocked on block I/O (`D` state), per I/O wait.
    pub io_wait: LatencyStats,
    /// From blocking on I/O to running again: the I/O wait plus the
    /// scheduling delay after the wakeup.
    pub io_stall: LatencyStats,
    /// With `machine.wakeup_latency`: the machine's share of each wake-up
    /// delay (the latency drawn, or the whole delay if shorter).
    pub wakeup_noise: LatencyStats,
    /// With `[machine.noise]`, per wake-up wait: the latency drawn onto an
    /// idle CPU (`wakeup_idle`), onto a busy one (`wakeup_busy`), and the
    /// time machine-background tasks ran on the task's CPU during the wait.
    pub noise_idle: LatencyStats,
    pub noise_busy: LatencyStats,
    pub noise_background: LatencyStats,
    /// Kernel time charged per activation (`kernel_per_activation`), total ns.
    pub kernel_charged_ns: u64,
    /// Times the task changed CPU, per cause (`MigrateCause::index`).
    pub migrations: [u64; MigrateCause::ALL.len()],
}

impl TaskMetrics {
    /// The summary of all delays, wakeup, preemption and throttled together,
    /// without building their merge (the hot path records each delay once).
    pub fn delay_summary(&self) -> super::latency::LatencySummary {
        LatencyStats::summary_of(&[&self.wakeup_delay, &self.preempt_delay, &self.throttled_delay])
    }

    fn add_culprit(&mut self, bucket: u8, who: Culprit, ns: u64) {
        *self.culprits.entry((bucket, who)).or_insert(0) += ns;
    }
}

/// A group entity's weight, sampled each time one of the group's tasks wakes
/// (the moment its chances against the running entity are decided).
#[derive(Clone, Copy, Debug, Default)]
pub struct GroupWeightStats {
    pub samples: u64,
    pub sum: u64,
    pub min: u64,
    pub max: u64,
}

impl GroupWeightStats {
    pub fn sample(&mut self, weight: u64) {
        self.min = if self.samples == 0 { weight } else { self.min.min(weight) };
        self.max = self.max.max(weight);
        self.samples += 1;
        self.sum += weight;
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct CpuMetrics {
    pub busy_ns: u64,
    pub switches: u64,
    /// Tasks moved to this CPU (`dest_cpu` of `sched_migrate_task`).
    pub migrations_in: u64,
    /// Tasks moved away from this CPU (`orig_cpu`).
    pub migrations_out: u64,
    /// Busy time before the warm-up ended (inside `busy_ns`, which stays
    /// the whole run's for the engine's conservation check; the report
    /// subtracts it).
    pub warmup_busy_ns: u64,
}

/// The history window around the victim's worst delay.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    pub victim: Option<TaskId>,
    pub cpu: Option<CpuId>,
    pub wait_start: SimTime,
    pub wait_end: SimTime,
    pub kind: Option<WaitKind>,
    pub records: Vec<SchedRecord>,
    /// Records after this time are not added.
    pub until: SimTime,
    /// Older records in the window had already left the ring.
    pub truncated: bool,
}

#[derive(Clone, Debug)]
pub struct Recorder {
    pub tasks: Vec<TaskMetrics>,
    pub cpus: Vec<CpuMetrics>,
    /// Per task group (index 0, the root, stays empty).
    pub groups: Vec<GroupWeightStats>,
    pub history: Vec<CpuHistory>,
    /// Which tasks count as the victim.
    victim_range: (u32, u32),
    window_ns: u64,
    pub capture: Capture,
    /// Every scheduling record in a window, when tracing is on.
    pub trace: Option<TraceBuffer>,
    /// Per-CPU balance gap (time waiting while a CPU of the same span idled).
    pub balance: BalanceGap,
    /// Per-CPU busy share over time (`metrics::occupancy`).
    pub occupancy: super::occupancy::Occupancy,
    /// `[report] warmup`: the statistics count from this time on
    /// (`counts`); the run itself does not depend on it.
    warmup: SimTime,
    /// The history rings, the culprits they give each delay and the window
    /// around the victim's worst one (`keep_only`).
    keep_history: bool,
    /// The occupancy series (`keep_only`).
    keep_occupancy: bool,
}

/// Which scheduling records a trace keeps: those from `from` to `to`
/// (inclusive) on the CPUs in `cpus` (all if `None`), at most `records_max`
/// of them. The bound keeps a trace's memory proportional to what the user
/// asked for, not to the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceWindow {
    pub from: SimTime,
    pub to: SimTime,
    pub cpus: Option<CpuSet>,
    pub records_max: usize,
}

impl TraceWindow {
    /// The whole run on every CPU, up to `records_max` records.
    pub fn all(records_max: usize) -> TraceWindow {
        TraceWindow { from: SimTime::ZERO, to: SimTime(u64::MAX), cpus: None, records_max }
    }

    fn shows(&self, cpu: CpuId) -> bool {
        self.cpus.as_ref().is_none_or(|c| c.contains(cpu))
    }
}

/// The records of a trace window.
#[derive(Clone, Debug)]
pub struct TraceBuffer {
    pub window: TraceWindow,
    /// Per CPU, its last switch before the window (who was running when it
    /// opened): from the history ring when tracing was enabled, then kept
    /// up to date until the window opens. `None`: no switch on that CPU yet.
    pub before: Vec<Option<SchedRecord>>,
    /// Records in the window, oldest first.
    pub records: Vec<SchedRecord>,
    /// When `records_max` was reached: the time of the first record dropped.
    pub capped_at: Option<SimTime>,
}

impl Recorder {
    /// `balance_span[c]`: CPU `c`'s balancing span (CPUs load balancing can
    /// move work between share an id; an isolated CPU has its own).
    pub fn new(
        ntasks: usize,
        ncpus: usize,
        ngroups: usize,
        victim_range: (u32, u32),
        window_ns: u64,
        balance_span: Vec<u16>,
    ) -> Recorder {
        assert_eq!(balance_span.len(), ncpus, "one balancing span per CPU");
        Recorder {
            balance: BalanceGap::new(&balance_span),
            occupancy: super::occupancy::Occupancy::new(ncpus),
            tasks: vec![TaskMetrics { delay_buckets: vec![0; DELAY_BUCKETS], ..TaskMetrics::default() }; ntasks],
            cpus: vec![CpuMetrics::default(); ncpus],
            groups: vec![GroupWeightStats::default(); ngroups],
            history: vec![CpuHistory::default(); ncpus],
            victim_range,
            window_ns,
            capture: Capture::default(),
            trace: None,
            warmup: SimTime::ZERO,
            keep_history: true,
            keep_occupancy: true,
        }
    }

    /// Records only what a report that reads the history (culprits, the
    /// window around the worst delay) or the occupancy series needs: a
    /// run that prints neither skips them (`Simulation::recording`). Every
    /// other statistic, and the run itself, is the same. Called before the
    /// first event: the rings are emptied.
    pub fn keep_only(&mut self, history: bool, occupancy: bool) {
        self.keep_history = history;
        self.keep_occupancy = occupancy;
        if !history {
            self.history = vec![CpuHistory::default(); self.history.len()];
        }
    }

    /// Whether the history rings (and with them culprits and the capture)
    /// are kept.
    pub fn keeps_history(&self) -> bool {
        self.keep_history
    }

    /// Whether a scheduling record would be kept anywhere (ring, capture or
    /// trace): when not, the engine does not build one.
    #[inline]
    pub fn keeps_records(&self) -> bool {
        self.keep_history || self.trace.is_some()
    }

    /// Leaves the time before `end` out of every statistic (`[report] warmup`).
    /// The rule: a wait, response or I/O wait counts if it ended at or after
    /// `end` (all of it, its culprits too); a counter (switch, migration,
    /// overrun, dropped item) if it happened at or after `end`; busy time,
    /// runtime and the balance gap only for their part from `end` on.
    pub fn set_warmup(&mut self, end: SimTime) {
        self.warmup = end;
        self.balance.set_from(end);
    }

    /// The end of the warm-up (`SimTime::ZERO` without one).
    pub fn warmup(&self) -> SimTime {
        self.warmup
    }

    /// Whether something that ended (or happened) at `at` is in the statistics.
    pub fn counts(&self, at: SimTime) -> bool {
        at >= self.warmup
    }

    /// The part of `from..now` before the warm-up ended.
    pub fn before_warmup_ns(&self, from: SimTime, now: SimTime) -> u64 {
        self.warmup.min(now).since(from)
    }

    /// `task` ran on `cpu` from `from` until it was switched out at `now`.
    pub fn ran(&mut self, cpu: CpuId, task: TaskId, from: SimTime, now: SimTime) {
        let early = self.before_warmup_ns(from, now);
        let c = &mut self.cpus[cpu.index()];
        c.busy_ns += now.since(from);
        c.warmup_busy_ns += early;
        let counted = self.counts(now);
        let m = &mut self.tasks[task.index()];
        m.warmup_runtime_ns += early;
        m.warmup_switches += u64::from(!counted);
    }

    /// A context switch on `cpu` at `now`.
    pub fn count_switch(&mut self, cpu: CpuId, now: SimTime) {
        if self.counts(now) {
            self.cpus[cpu.index()].switches += 1;
        }
    }

    /// A response (request or periodic job) of `task` that began at `from`
    /// and completed at `now`.
    pub fn record_response(&mut self, task: TaskId, from: SimTime, now: SimTime) {
        if self.counts(now) {
            self.tasks[task.index()].response.record(now.since(from), now);
        }
    }

    /// A periodic job of `task` released at `release` with period
    /// `period_ns` completed at `now`: its response, and an overrun if it
    /// completed at or after the next release (`sleep_until` then sleeps to
    /// a later boundary, so that release is missed).
    pub fn job_completed(&mut self, task: TaskId, release: SimTime, period_ns: u64, now: SimTime) {
        self.record_response(task, release, now);
        if self.counts(now) && now >= release.after(period_ns) {
            self.tasks[task.index()].overruns += 1;
        }
    }

    /// A latency of `task` (`which` of its metrics) that ended at `now`.
    /// `ns` of kernel time charged to `task` at an activation.
    pub fn kernel_charged(&mut self, task: TaskId, ns: u64, now: SimTime) {
        if self.counts(now) {
            self.tasks[task.index()].kernel_charged_ns += ns;
        }
    }

    pub fn record_task_latency(
        &mut self,
        task: TaskId,
        which: fn(&mut TaskMetrics) -> &mut LatencyStats,
        ns: u64,
        now: SimTime,
    ) {
        if self.counts(now) {
            which(&mut self.tasks[task.index()]).record(ns, now);
        }
    }

    /// Keeps the scheduling records of `window` from now on.
    pub fn enable_trace(&mut self, window: TraceWindow) {
        let before = self
            .history
            .iter()
            .map(|h| h.iter_rev().find(|x| matches!(x.kind, super::history::RecordKind::Switch { .. })).copied())
            .collect();
        self.trace = Some(TraceBuffer { window, before, records: Vec::new(), capped_at: None });
    }

    /// Counts one migration (per task and cause; per CPU in/out). The engine
    /// pushes the `Migrate` record separately through `push_record`.
    pub fn count_migration(&mut self, task: TaskId, from: CpuId, to: CpuId, cause: MigrateCause, now: SimTime) {
        debug_assert_ne!(from, to, "a migration changes CPU");
        if !self.counts(now) {
            return;
        }
        self.tasks[task.index()].migrations[cause.index()] += 1;
        self.cpus[from.index()].migrations_out += 1;
        self.cpus[to.index()].migrations_in += 1;
    }

    /// Called by the engine after every change of a CPU's `nr_running`
    /// (`rq->nr_running`, running task included) at `now`. O(1).
    pub fn cpu_nr_running(&mut self, cpu: CpuId, nr_running: u32, now: SimTime) {
        self.balance.set_nr_running(cpu, nr_running, now);
        if self.keep_occupancy {
            self.occupancy.set_nr_running(cpu, nr_running, now);
        }
    }

    /// `cpu`'s balance gap up to `now` (its open wait included).
    pub fn balance_gap_ns(&self, cpu: CpuId, now: SimTime) -> u64 {
        self.balance.gap_ns(cpu, now)
    }

    /// Keeps `r` in the history ring of its CPU (a `Migrate` record also in
    /// those of its source and destination CPUs, so the history around a
    /// delay on either shows the move), in the capture window and in the
    /// trace (once).
    #[inline]
    pub fn push_record(&mut self, r: SchedRecord) {
        // Nearly always false: the capture window has passed and no trace
        // is on. The full test is in `keep_in_capture_and_trace`.
        if r.at <= self.capture.until || self.trace.is_some() {
            self.keep_in_capture_and_trace(&r);
        }
        if self.keep_history {
            self.history[r.cpu.index()].push(r);
            if let Some((orig, dest)) = r.kind.migrate_cpus() {
                self.push_moved(&r, orig, dest);
            }
        }
    }

    /// A `Migrate` record in the rings of its source and destination CPUs.
    #[cold]
    #[inline(never)]
    fn push_moved(&mut self, r: &SchedRecord, orig: CpuId, dest: CpuId) {
        if orig != r.cpu {
            self.history[orig.index()].push(*r);
        }
        if dest != r.cpu && dest != orig {
            self.history[dest.index()].push(*r);
        }
    }

    /// `r` in the capture window and in the trace, where they take it.
    #[inline(never)]
    fn keep_in_capture_and_trace(&mut self, r: &SchedRecord) {
        let r = *r;
        let moved = r.kind.migrate_cpus();
        let concerns = |cpu: CpuId| r.cpu == cpu || moved.is_some_and(|(o, d)| o == cpu || d == cpu);
        let c = &mut self.capture;
        if self.keep_history && c.cpu.is_some_and(concerns) && r.at <= c.until && c.records.len() < CAPTURE_ROWS_MAX {
            c.records.push(r);
        }
        if let Some(t) = &mut self.trace {
            if r.at < t.window.from {
                if matches!(r.kind, super::history::RecordKind::Switch { .. }) {
                    t.before[r.cpu.index()] = Some(r);
                }
            } else if r.at <= t.window.to && t.window.shows(r.cpu) {
                if t.records.len() < t.window.records_max {
                    t.records.push(r);
                } else if t.capped_at.is_none() {
                    t.capped_at = Some(r.at);
                }
            }
        }
    }

    /// A task that waited since `from` on `cpu` is switched in at `now`.
    pub fn record_delay(&mut self, task: TaskId, cpu: CpuId, from: SimTime, now: SimTime, kind: WaitKind) {
        // Ended in the warm-up: in no statistic, culprits and worst delay included.
        if !self.counts(now) {
            return;
        }
        let ns = now.since(from);
        let bucket = delay_bucket(ns) as u8;
        let m = &mut self.tasks[task.index()];
        match kind {
            WaitKind::Wakeup => m.wakeup_delay.record(ns, now),
            WaitKind::Preempt => m.preempt_delay.record(ns, now),
            WaitKind::Throttled => m.throttled_delay.record(ns, now),
        }
        m.delay_buckets[usize::from(bucket)] += 1;
        if ns > 0 && self.keep_history {
            let (tasks, history) = (&mut self.tasks, &self.history);
            history[cpu.index()].occupancy(from, now, |who, t| {
                if who != Some(task) {
                    tasks[task.index()].add_culprit(bucket, who, t);
                }
            });
        }
        let (lo, hi) = self.victim_range;
        let is_victim = (lo..hi).contains(&task.0);
        if is_victim && (self.capture.victim.is_none() || ns > self.capture.wait_end.since(self.capture.wait_start)) {
            let window_from = SimTime(from.ns().saturating_sub(self.window_ns));
            // Without the history the ring is empty: the worst delay is
            // kept, with no window around it.
            let (mut records, truncated) = self.history[cpu.index()].since(window_from);
            records.truncate(CAPTURE_ROWS_MAX);
            self.capture = Capture {
                victim: Some(task),
                cpu: Some(cpu),
                wait_start: from,
                wait_end: now,
                kind: Some(kind),
                records,
                until: now.after(self.window_ns),
                truncated,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::history::RecordKind;

    fn migrate(at: u64, on: u16, orig: u16, dest: u16) -> SchedRecord {
        SchedRecord {
            at: SimTime(at),
            cpu: CpuId(on),
            min_vruntime: 0,
            root_min_vruntime: 0,
            nr_running: 1,
            kind: RecordKind::Migrate {
                task: TaskId(1),
                orig_cpu: CpuId(orig),
                dest_cpu: CpuId(dest),
                cause: MigrateCause::Nohz,
            },
        }
    }

    #[test]
    fn a_migration_counts_per_task_cause_and_per_cpu_direction() {
        let mut r = Recorder::new(2, 3, 1, (0, 1), 0, vec![0, 0, 0]);
        r.count_migration(TaskId(1), CpuId(0), CpuId(2), MigrateCause::Periodic, SimTime(1));
        r.count_migration(TaskId(1), CpuId(2), CpuId(1), MigrateCause::WakeAffine, SimTime(2));
        assert_eq!(r.tasks[1].migrations[MigrateCause::Periodic.index()], 1);
        assert_eq!(r.tasks[1].migrations[MigrateCause::WakeAffine.index()], 1);
        assert_eq!(r.tasks[0].migrations, [0; MigrateCause::ALL.len()]);
        let io: Vec<(u64, u64)> = r.cpus.iter().map(|c| (c.migrations_in, c.migrations_out)).collect();
        assert_eq!(io, vec![(0, 1), (1, 0), (1, 1)]);
    }

    /// nohz_idle_balance: CPU 1 (the idle balancer) moves a task from CPU 0
    /// to CPU 2. The history of each of the three shows it (so the history
    /// around a delay on the source or destination explains the move); a
    /// trace keeps it once.
    #[test]
    fn a_migrate_record_is_in_the_rings_of_the_mover_source_and_destination() {
        let mut r = Recorder::new(2, 4, 1, (0, 1), 0, vec![0; 4]);
        r.enable_trace(TraceWindow::all(100));
        r.push_record(migrate(5, 1, 0, 2));
        // A pull by the destination itself: two rings.
        r.push_record(migrate(6, 2, 0, 2));
        let kept: Vec<usize> = r.history.iter().map(|h| h.since(SimTime::ZERO).0.len()).collect();
        assert_eq!(kept, vec![2, 1, 2, 0]);
        assert_eq!(r.trace.as_ref().unwrap().records.len(), 2);
    }
}
