//! Exports of a traced run to the formats engineers' own tools read: the
//! Chrome/Perfetto JSON trace (`chrome`) and the `perf sched timehist`
//! listing (`timehist`). Both read one plain-data `Trace` and replay its
//! records the same way, so they agree on who ran where and when.
//!
//! A trace is bounded by its `TraceWindow` (a time window and a record cap,
//! set with `Simulation::enable_trace`); the exports state the bound.

pub mod chrome;
pub mod timehist;

use crate::engine::Simulation;
use crate::ids::TaskId;
use crate::metrics::history::{PrevState, RecordKind, SchedRecord};
use crate::metrics::recorder::TraceWindow;
use crate::sched::migrate::MigrateCause;

/// A task as traces name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceTask {
    pub comm: String,
    pub tid: u32,
    /// The kernel's `p->prio`, as `sched_switch` prints it: `120 + nice`
    /// for a fair task (`NICE_TO_PRIO`), `99 − rt_priority` for RT, −1 for
    /// deadline (`normal_prio`).
    pub prio: i32,
}

/// A traced run as plain data.
#[derive(Clone, Debug)]
pub struct Trace {
    pub scenario: String,
    pub variant: Option<String>,
    pub seed: u64,
    pub cpus: u16,
    /// Indexed by `TaskId`.
    pub tasks: Vec<TraceTask>,
    pub window: TraceWindow,
    /// Where the trace stops: the window's end, the run's end, or the time
    /// the record cap was reached, whichever comes first.
    pub end_ns: u64,
    /// Set when the record cap cut the trace short.
    pub capped_at_ns: Option<u64>,
    /// Per CPU, its last switch before the window (who ran when it opened).
    pub before: Vec<Option<SchedRecord>>,
    pub records: Vec<SchedRecord>,
}

/// One record replayed with the state of its CPU.
#[derive(Clone, Copy, Debug)]
pub enum Item<'a> {
    /// `sched_switch`: `prev` ran on the CPU from `start_ns` (clipped to the
    /// window's start) until `rec.at`; `next` runs from then on.
    Switch {
        rec: &'a SchedRecord,
        prev: Option<TaskId>,
        start_ns: u64,
        /// The whole run, unclipped.
        run_ns: u64,
        prev_state: PrevState,
        wait_ns: u64,
        sch_delay_ns: u64,
        next: Option<TaskId>,
    },
    /// `sched_wakeup` (`sched_wakeup_new` if `new_task`): `task` became
    /// runnable on the CPU while `curr` ran. `try_to_wake_up` ran on
    /// `waker_cpu` while `waker` ran there; `waker` is `None` also when that
    /// CPU is not in the trace (`waker_shown` false: who ran is unknown).
    Wakeup {
        rec: &'a SchedRecord,
        task: TaskId,
        preempt: bool,
        vruntime: i64,
        curr: Option<TaskId>,
        new_task: bool,
        waker_cpu: u16,
        waker: Option<TaskId>,
        waker_shown: bool,
        /// `task_cpu(p)` before the wake-up chose `rec.cpu`.
        prev_cpu: u16,
    },
    /// `sched_migrate_task`: `task` moved from `orig_cpu` to `dest_cpu`,
    /// done on `rec.cpu` while `curr` ran there.
    Migrate {
        rec: &'a SchedRecord,
        task: TaskId,
        orig_cpu: u16,
        dest_cpu: u16,
        cause: MigrateCause,
        curr: Option<TaskId>,
    },
}

/// Who occupied a CPU, and since when (clipped to the window's start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occupant {
    pub task: Option<TaskId>,
    pub since_ns: u64,
}

impl Trace {
    /// Takes the trace kept by `sim` (`None` if tracing was never enabled);
    /// the records move out, so tracing stops there.
    pub fn from_sim(sim: &mut Simulation) -> Option<Trace> {
        let buf = sim.take_trace_buffer()?;
        let spec = sim.spec();
        let end = [buf.window.to.ns(), sim.now().ns(), buf.capped_at.map_or(u64::MAX, |t| t.ns())]
            .into_iter()
            .min()
            .unwrap_or(0)
            .max(buf.window.from.ns().min(sim.now().ns()));
        Some(Trace {
            scenario: spec.name.clone(),
            variant: sim.variant().map(str::to_string),
            seed: spec.seed,
            cpus: spec.cpus,
            tasks: sim
                .world.tasks
                .iter()
                .map(|t| TraceTask {
                    comm: t.comm.clone(),
                    tid: t.tid,
                    prio: t.policy.kernel_prio(t.nice, spec.tasks[t.spec].rt_priority),
                })
                .collect(),
            end_ns: end,
            capped_at_ns: buf.capped_at.map(|t| t.ns()),
            window: buf.window,
            before: buf.before,
            records: buf.records,
        })
    }

    /// Whether the trace covers `cpu` (`TraceWindow::cpus`; all by default).
    pub fn shows(&self, cpu: u16) -> bool {
        self.window.cpus.as_ref().is_none_or(|c| c.contains(crate::ids::CpuId(cpu)))
    }

    /// The window's start, as the trace sees it.
    pub fn from_ns(&self) -> u64 {
        self.window.from.ns()
    }

    /// `comm[tid]`, or `<idle>`: perf's names.
    pub fn label(&self, t: Option<TaskId>) -> String {
        t.map_or_else(
            || "<idle>".to_string(),
            |t| {
                let t = &self.tasks[t.index()];
                format!("{}[{}]", t.comm, t.tid)
            },
        )
    }

    /// Who ran on each CPU when the window opened: the last switch before
    /// it, else the first switch in it (its `prev`), else idle.
    fn initial(&self) -> Vec<Occupant> {
        let from = self.from_ns();
        (0..self.cpus)
            .map(|c| {
                let before = self.before.get(usize::from(c)).copied().flatten();
                let first = || {
                    self.records.iter().find_map(|r| match r.kind {
                        RecordKind::Switch { prev, prev_sched_in, .. } if r.cpu.0 == c => {
                            Some(Occupant { task: prev, since_ns: prev_sched_in.ns().max(from) })
                        }
                        _ => None,
                    })
                };
                match before.map(|r| r.kind) {
                    Some(RecordKind::Switch { next, .. }) => {
                        Occupant { task: next, since_ns: before.map_or(0, |r| r.at.ns()).max(from) }
                    }
                    _ => first().unwrap_or(Occupant { task: None, since_ns: from }),
                }
            })
            .collect()
    }

    /// Replays the records in order, handing each to `f` with its CPU's
    /// state, and returns who occupies each CPU at the end of the trace.
    pub fn replay(&self, mut f: impl FnMut(Item<'_>)) -> Vec<Occupant> {
        let mut cpus = self.initial();
        let from = self.from_ns();
        for rec in &self.records {
            let c = &mut cpus[rec.cpu.index()];
            match rec.kind {
                RecordKind::Switch {
                    prev, prev_state, prev_sched_in, prev_wait_ns, prev_sch_delay_ns, next, ..
                } => {
                    f(Item::Switch {
                        rec,
                        prev,
                        start_ns: prev_sched_in.ns().max(from),
                        run_ns: rec.at.since(prev_sched_in),
                        prev_state,
                        wait_ns: prev_wait_ns,
                        sch_delay_ns: prev_sch_delay_ns,
                        next,
                    });
                    *c = Occupant { task: next, since_ns: rec.at.ns() };
                }
                RecordKind::Wakeup { task, vruntime, preempt, new_task, waker_cpu, prev_cpu, .. } => {
                    let curr = c.task;
                    let waker_shown = self.shows(waker_cpu.0);
                    let waker = if waker_shown { cpus[waker_cpu.index()].task } else { None };
                    f(Item::Wakeup {
                        rec,
                        task,
                        preempt,
                        vruntime,
                        curr,
                        new_task,
                        waker_cpu: waker_cpu.0,
                        waker,
                        waker_shown,
                        prev_cpu: prev_cpu.0,
                    });
                }
                RecordKind::Migrate { task, orig_cpu, dest_cpu, cause } => {
                    let curr = c.task;
                    f(Item::Migrate { rec, task, orig_cpu: orig_cpu.0, dest_cpu: dest_cpu.0, cause, curr });
                }
                // No ftrace event: perf and Perfetto see a throttle only as the switch it causes.
                RecordKind::Throttle { .. } | RecordKind::RtThrottle { .. } => {}
            }
        }
        cpus
    }

    /// One line stating what the trace covers and what cut it.
    pub fn bound_text(&self) -> String {
        let s = crate::time::format_secs;
        let mut t = format!(
            "window {} s to {} s, {} scheduling records (cap {})",
            s(self.from_ns()),
            s(self.end_ns),
            self.records.len(),
            self.window.records_max
        );
        if let Some(cpus) = &self.window.cpus
            && cpus.len() < usize::from(self.cpus)
        {
            let list: Vec<String> = cpus.iter().map(|c| c.0.to_string()).collect();
            t.push_str(&format!(", CPUs {} of {}", list.join(","), self.cpus));
        }
        if let Some(at) = self.capped_at_ns {
            t.push_str(&format!("; the cap was reached at {} s, so the trace ends there", s(at)));
        }
        t
    }
}

#[cfg(test)]
mod tests;
