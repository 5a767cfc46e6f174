//! A simulated thread (`struct task_struct`): identity, affinity, where it is
//! in its program, and the bookkeeping the metrics need.

use crate::cpuset::CpuSet;
use crate::ids::{CpuId, GroupId};
use crate::metrics::recorder::WaitKind;
use crate::rng::SimRng;
use crate::time::SimTime;
use crate::workload::Policy;
use std::collections::VecDeque;

/// Work items a task may have queued before new arrivals are dropped.
pub const ITEMS_QUEUED_MAX: usize = 100_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// Not created yet (its `start` time is in the future).
    Unstarted,
    /// Queued on a run queue, waiting for the CPU.
    Runnable,
    /// The `curr` of its CPU.
    Running,
    Blocked(BlockOn),
    Exited,
}

/// What a blocked task waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockOn {
    /// A `sleep` or `sleep_until` timer.
    Timer,
    /// Another task's `wake` step.
    Wakeup,
    /// A work item from an arrival source.
    Item,
}

/// A unit of work delivered by an arrival source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    pub arrival: SimTime,
    pub work_ns: u64,
}

#[derive(Clone, Debug)]
pub struct Task {
    pub comm: String,
    pub tid: u32,
    /// Index of the declaration in `ScenarioSpec::tasks`.
    pub spec: usize,
    pub instance: u32,
    pub policy: Policy,
    pub nice: i8,
    /// The task group it runs in (its cgroup, or its session's autogroup).
    pub group: GroupId,
    pub affinity: CpuSet,
    pub state: TaskState,
    /// `task_cpu()`: where it runs or last ran.
    pub cpu: CpuId,
    /// Program counter: the next step to execute.
    pub pc: usize,
    pub iterations_done: u64,
    /// In a CPU burst (a `run` step or an item being served).
    pub in_burst: bool,
    /// CPU work left in the burst, as of the last switch-out.
    pub work_left_ns: u64,
    /// When work started counting in the current run segment (after any
    /// context-switch cost).
    pub progress_from: SimTime,
    /// Invalidates a scheduled `BurstEnd` once the task is switched out.
    pub burst_generation: u32,
    /// Invalidates a scheduled `TimerExpired`.
    pub timer_generation: u32,
    /// Wakeups received while not waiting (consumed by `wait` steps).
    pub pending_wakeups: u32,
    pub items: VecDeque<Item>,
    pub serving: Option<Item>,
    /// A `serve` step handled at least one item in this pass.
    pub served_this_pass: bool,
    /// Since when, and why, it has been waiting on a run queue.
    pub waiting: Option<(SimTime, WaitKind)>,
    pub sched_in_at: SimTime,
    pub sched_out_at: SimTime,
    /// For the history: the wait and scheduling delay before the current run.
    pub last_wait_ns: u64,
    pub last_sch_delay_ns: u64,
    pub runtime_ns: u64,
    pub switches: u64,
    pub rng: SimRng,
}

impl Task {
    /// Between steps: no burst under way.
    pub fn at_step_boundary(&self) -> bool {
        !self.in_burst
    }
}
