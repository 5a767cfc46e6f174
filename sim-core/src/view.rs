//! `RunView`: a read-only view of a run at its current point, what every
//! report is built from (`crate::report`). The engine fills it in one method
//! (`Simulation::view`); reports read it and never the engine's fields, so
//! the engine can change its inside without touching a report, and the
//! reporting side sits above the engine while the recorders sit below it.
//!
//! It borrows the engine's state (the scenario, the recorder, the tasks and
//! the subsystems' own state) and carries the few figures only the engine
//! can compute at this instant (each task's and CPU's time including its
//! current run, requests and grant waits still open), computed by the
//! engine's own accessors so a report shows exactly what they say.

use crate::block::RequestQueue;
use crate::ids::TaskId;
use crate::metrics::recorder::Recorder;
use crate::requests::Hops;
use crate::scenario::ScenarioSpec;
use crate::sched::fair::Cfs;
use crate::task::Task;
use crate::time::SimTime;
use crate::userspace_io::IoQueue;
use crate::workload::limiter::Limiter;

/// What a report reads of a run (see the module doc). Built by
/// `Simulation::view`; plain borrowed data plus per-CPU, per-task,
/// per-source and per-limiter figures at `now`.
#[derive(Clone, Debug)]
pub struct RunView<'a> {
    pub spec: &'a ScenarioSpec,
    /// The variant the run was built from, if any.
    pub variant: Option<&'a str>,
    /// Simulated time reached.
    pub now: SimTime,
    /// Events dispatched so far.
    pub events: u64,
    pub tick_ns: u64,
    pub recorder: &'a Recorder,
    /// Every task instance, by `TaskId`.
    pub tasks: &'a [Task],
    /// The fair class: task groups' load and bandwidth state.
    pub cfs: &'a Cfs,
    /// One request queue per block device, by `DeviceId`.
    pub queues: &'a [RequestQueue],
    /// Requests across hops (`forward`).
    pub hops: &'a Hops,
    /// Elastic CPU limiters, by `LimiterId`.
    pub limiters: &'a [Limiter],
    /// Userspace I/O queues, in name order.
    pub io_queues: &'a [IoQueue],
    /// Per CPU: the task running on it.
    pub curr: Vec<Option<TaskId>>,
    /// Per CPU: busy time up to now, its current run included.
    pub cpu_busy_ns: Vec<u64>,
    /// Per task: CPU time up to now, its current run included.
    pub task_runtime_ns: Vec<u64>,
    /// Per source declaration: requests still queued or in service, and the
    /// oldest one's age (`Simulation::requests_in_flight`).
    pub requests_in_flight: Vec<(u64, u64)>,
    /// Per limiter: CPU time its tasks used, and the time tasks blocked for
    /// a grant right now have waited so far.
    pub limited_runtime_ns: Vec<u64>,
    pub limiter_open_wait_ns: Vec<u64>,
    /// Per CPU, with an RT or deadline task in the scenario: RT throttling
    /// and fair-server service (empty otherwise).
    pub above_fair: Vec<crate::report::run::CpuAboveFair>,
    /// The report sections the run records (`Simulation::recording`).
    pub sections: crate::report::ReportSections,
}

impl RunView<'_> {
    /// A task's comm (`name` or `name/i`).
    pub fn task_comm(&self, task: TaskId) -> &str {
        &self.tasks[task.index()].comm
    }
}
