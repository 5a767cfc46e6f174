//! What tasks do: scheduling policy, duration distributions, step programs and
//! arrival sources.

pub mod dist;
pub mod limiter;
#[cfg(test)]
mod limiter_tests;
pub mod program;
pub mod ziggurat;

pub use dist::Dist;
pub use program::{IoStep, Pattern, Program, Step, WakeTarget};

/// Scheduling policy (`p->policy`, 4.4 include/uapi/linux/sched.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// SCHED_NORMAL (SCHED_OTHER).
    Normal,
    /// SCHED_BATCH: never preempts on wakeup.
    Batch,
    /// SCHED_IDLE: weight 3, preempted by any non-idle wakeup.
    Idle,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Normal => "normal",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
        }
    }
}
