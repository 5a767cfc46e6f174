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
    /// Block I/O (`TASK_UNINTERRUPTIBLE` in `io_schedule`): see `TaskIo::wait`.
    Io,
    /// A grant of CPU time from its elastic CPU limiter (in-process pacing).
    Grant,
}

/// What a task blocked on I/O waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoWait {
    /// Its submission with this sequence number.
    Op(u64),
    /// Fewer than this many of its submissions outstanding (AIO depth).
    Depth(u32),
    /// All its writes (`fdatasync`).
    Writes,
    /// Another task's submissions up to a sequence number (`wait_io`).
    OtherTask,
    /// blk-mq: a tag for submission `seq` (`blk_mq_get_tag` sleeps); then,
    /// with `then_wait`, the submission itself.
    Tag { seq: u64, then_wait: bool },
}

/// One submission not yet complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoOp {
    pub seq: u64,
    /// Bios of it not yet complete (a large submission is split).
    pub bios_left: u32,
    pub write: bool,
}

/// A task's block I/O state.
#[derive(Clone, Debug, Default)]
pub struct TaskIo {
    pub next_seq: u64,
    pub ops: Vec<IoOp>,
    /// Tasks blocked in `wait_io` on this one, each with the last of this
    /// task's submissions it waits for.
    pub waiters: Vec<(crate::ids::TaskId, u64)>,
    pub wait: Option<IoWait>,
    pub blocked_at: SimTime,
    /// Set from an I/O block until the task next runs.
    pub stall_from: Option<SimTime>,
    /// Next sector of each sequential I/O step, by program index.
    pub cursors: Vec<(usize, u64)>,
}

impl TaskIo {
    /// Whether every submission up to `seq` has completed.
    pub fn done_through(&self, seq: u64) -> bool {
        self.ops.iter().all(|o| o.seq > seq)
    }
}

/// A unit of work delivered by an arrival source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    /// When its request arrived at the first task (kept across hops).
    pub arrival: SimTime,
    pub work_ns: u64,
    /// Its request: the source declaration (index into `ScenarioSpec::sources`)
    /// and a run-wide sequence number.
    pub source: u32,
    pub request: u64,
    /// Work of every hop so far, this one included.
    pub work_total_ns: u64,
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
    /// `p->nr_cpus_allowed`: CPUs in `affinity`.
    pub nr_cpus_allowed: u32,
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
    /// Invalidates a scheduled `BurstEnd` (and `KernelEntry`) once the task is switched out.
    pub burst_generation: u32,
    /// The current burst enters the kernel every this many ns of its work.
    pub kernel_every_ns: Option<u64>,
    /// Machine wake-up latency drawn for the current wait (0: none).
    pub noise_ns: u64,
    /// The latency drawn for the current wait came from
    /// `machine.noise.wakeup_busy` (else `wakeup_idle` or `wakeup_latency`).
    pub noise_busy: bool,
    /// At a wake-up with `[machine.noise]`: its CPU and that CPU's
    /// background run time so far (`Core::bg_ran`), read at the switch-in.
    pub bg_snap: Option<(crate::ids::CpuId, u64)>,
    /// A host background thread (`TaskSpec::machine_background`).
    pub machine_background: bool,
    /// When the current burst ends if it keeps the CPU (its `BurstEnd`).
    pub burst_end_at: SimTime,
    /// Invalidates a scheduled `TimerExpired`.
    pub timer_generation: u32,
    /// The periodic job in progress: its release (the boundary the last
    /// `sleep_until` slept until) and the period; `None` before the first
    /// `sleep_until` and in tasks that `serve` (their response is per item).
    pub job: Option<(SimTime, u64)>,
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
    pub io: TaskIo,
    pub rng: SimRng,
    /// Elastic CPU limiter: CPU work of the current `run` step not yet
    /// started as a chunk, the held grant's CPU time not yet handed to a
    /// chunk, whether the current burst is such a chunk, and since when it
    /// waits for a grant.
    pub limited_work_left_ns: u64,
    pub grant_left_ns: u64,
    pub limited_chunk: bool,
    pub grant_wait_from: SimTime,
}

impl Task {
    /// Between steps: no burst under way.
    pub fn at_step_boundary(&self) -> bool {
        !self.in_burst
    }
}
