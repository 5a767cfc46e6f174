//! A task's behaviour: a small looped program of steps.
//!
//! A task executes steps only while it is on a CPU, as a real thread runs code.
//! `run` consumes CPU time; `sleep`, `sleep_until`, `wait` and `serve` (when
//! idle) block; `wake` and `yield` take no time. After the last step the program
//! starts over, until `iterations` passes are done and the task exits.

use super::Dist;
use crate::ids::TaskId;

#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// A CPU burst of the sampled length.
    Run(Dist),
    /// Sleep for the sampled duration (`nanosleep`).
    Sleep(Dist),
    /// Sleep until the next multiple of `period_ns` after now, plus `offset_ns`
    /// (`clock_nanosleep(TIMER_ABSTIME)` on a periodic deadline).
    SleepUntil { period_ns: u64, offset_ns: u64 },
    /// Block until another task's `wake` step (consumes one pending wakeup).
    Wait,
    /// Wake another task (a hand-off, like a futex or eventfd write).
    Wake(WakeTarget),
    /// Reactor loop: block until at least one work item is pending, then run
    /// one CPU burst per item until none is left.
    Serve,
    /// `sched_yield()`.
    Yield,
}

impl Step {
    /// Whether the step can consume time or block (a program needs one).
    /// A `run` or `sleep` whose every sample is 0 does not count.
    pub fn takes_time(&self) -> bool {
        match self {
            Step::Run(d) | Step::Sleep(d) => !d.is_always_zero(),
            Step::Wake(_) | Step::Yield => false,
            Step::SleepUntil { .. } | Step::Wait | Step::Serve => true,
        }
    }
}

/// Whom a `wake` step wakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeTarget {
    /// One specific task (named by its `comm`, e.g. `"worker/2"`).
    Task(TaskId),
    /// A declaration with `count` instances starting at `first`: instance
    /// `i` of the waker wakes instance `i % count`.
    Group { first: TaskId, count: u32 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub steps: Vec<Step>,
    /// Passes through the program before the task exits; `None` runs forever.
    pub iterations: Option<u64>,
}
